"""baco: a Python compiler and co-exploration framework for the Gemmini accelerator."""
from baco.errors import CompilationError

__all__ = ["jit", "JITFunction", "autotune", "Autotuner", "Config", "CompilationError", "compile_model", "CompiledModel"]
__version__ = "0.1.0"


def __getattr__(name):
    """The public names, imported on first use: `import baco` comes before every subcommand and
    submodule (`python -m baco.cli opt` paid 0.9 s for the model compiler it does not use)."""
    if name in ("jit", "JITFunction"):
        from baco.frontend import jit as module
    elif name in ("autotune", "Autotuner", "Config"):
        from baco.frontend import autotune as module
    elif name in ("compile_model", "CompiledModel"):
        from baco.model import compile as module
    else:
        raise AttributeError(f"module 'baco' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
