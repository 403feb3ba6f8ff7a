"""The dependency rules of DESIGN.md §2, checked on the sources (ast, not runtime imports,
so an import inside a function counts as much as one at the top)."""
import ast
from pathlib import Path

import pytest

BACO = Path(__file__).resolve().parent.parent / "baco"


def imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, dotted name) for every import in a file: `from baco.x import y` gives baco.x.y
    (y may be a module), relative imports are resolved against the file's package."""
    package = path.relative_to(root.parent).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(list(package[:len(package) - node.level + 1]) + ([base] if base else []))
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def violations(layer: str, allowed=None, forbidden=(), root: Path = BACO) -> list[str]:
    """Imports in baco/<layer> of a `forbidden` package, or (when `allowed` is given) of a part
    of baco outside `allowed`."""
    def under(mod, prefixes):
        return any(mod == p or mod.startswith(p + ".") for p in prefixes)
    bad = []
    for path in sorted((root / layer).rglob("*.py")):
        for line, mod in imported_modules(path, root):
            outside = allowed is not None and under(mod, ("baco",)) and not under(mod, allowed)
            if under(mod, forbidden) or outside:
                bad.append(f"{path.relative_to(root.parent)}:{line} imports {mod}")
    return bad


def test_gemmini_is_pure():
    """baco/gemmini imports nothing else of baco and no MLIR."""
    assert violations("gemmini", allowed=("baco.gemmini",), forbidden=("mlir",)) == []


def test_sim_imports_only_the_isa():
    """baco/sim is the spec: it imports baco/gemmini (and itself) only, no MLIR, no passes."""
    assert violations("sim", allowed=("baco.gemmini", "baco.sim"), forbidden=("mlir", "llvmlite")) == []


def test_tuner_imports_neither_passes_nor_codegen():
    assert violations("tuner", forbidden=("baco.passes", "baco.codegen")) == []


def test_dialects_import_no_passes():
    assert violations("dialects", forbidden=("baco.passes",)) == []


@pytest.mark.parametrize("source,expected", [
    ("from baco.passes import irutil\n", ["baco/dialects/x.py:1 imports baco.passes.irutil"]),
    ("def f():\n    import baco.passes.pipeline\n", ["baco/dialects/x.py:2 imports baco.passes.pipeline"]),
    ("from baco import passes\n", ["baco/dialects/x.py:1 imports baco.passes"]),
    ("from ..passes import irutil\n", ["baco/dialects/x.py:1 imports baco.passes.irutil"]),
    ("from . import instgem\nimport mlir.ir\n", []),
])
def test_the_checker_sees_every_import_form(tmp_path, source, expected):
    """Top-level, nested, `from baco import` and relative imports are all seen."""
    (tmp_path / "baco" / "dialects").mkdir(parents=True)
    (tmp_path / "baco" / "dialects" / "x.py").write_text(source)
    assert violations("dialects", forbidden=("baco.passes",), root=tmp_path / "baco") == expected


def test_model_reference_is_independent():
    """The whole-model reference shares no code with what it checks: no kernels, no Gemmini
    arithmetic module, no lowering, no CPU operators, no MLIR."""
    bad = [f"{m}" for _, m in imported_modules(BACO / "model" / "reference.py", BACO)
           if m.startswith("baco") or m.startswith("mlir") or m.startswith("torch")]
    assert bad == []
