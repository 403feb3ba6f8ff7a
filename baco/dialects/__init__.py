"""MLIR context with the BACO and InstGem dialects loaded (IRDL)."""
from __future__ import annotations

import sys
import types

from mlir.dialects import irdl
from mlir.ir import Context, Location, Module

from baco.dialects import instgem
from baco.dialects.baco_dialect import IRDL as BACO_IRDL

# The bindings import `mlir.dialects.<namespace>` for the Python classes of an op's dialect each time
# they wrap an op, and remember only an import that succeeded: for the IRDL dialects, which have none,
# that was a failed import (a search of sys.path) for every BACO or InstGem op a pass touched (~8% of
# instgem-to-llvm). An empty module stands for them; their ops stay generic OpViews.
for _namespace in ("baco", "instgem"):
    sys.modules.setdefault(f"mlir.dialects.{_namespace}", types.ModuleType(f"mlir.dialects.{_namespace}"))


def load_dialects(ctx: Context) -> Context:
    with ctx, Location.unknown():
        irdl.load_dialects(Module.parse(BACO_IRDL))
        irdl.load_dialects(Module.parse(instgem.irdl_text()))
    return ctx


def make_context() -> Context:
    return load_dialects(Context())


def parse_module(text: str, ctx: Context | None = None) -> Module:
    ctx = ctx or make_context()
    with ctx:
        return Module.parse(text)
