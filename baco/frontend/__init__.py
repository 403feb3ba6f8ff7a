"""The DSL surface: `baco.language`, `@baco.jit`, AST → BACO dialect."""
