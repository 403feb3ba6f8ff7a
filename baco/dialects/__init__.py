"""MLIR context with the BACO and InstGem dialects loaded (IRDL)."""
from __future__ import annotations

from mlir.dialects import irdl
from mlir.ir import Context, Location, Module

from baco.dialects import instgem
from baco.dialects.baco_dialect import IRDL as BACO_IRDL


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
