"""The load pipelining (baco.passes.prefetch) computes the next K step's iteration-dependent
address arithmetic, checks and configs under one `if (k + step < ub)`, so a loop's last step
(a program's only one when K fits one block) runs none of it."""
from pathlib import Path

from baco.options import CompileOptions
from baco.passes.pipeline import run_pipeline
from baco.passes.prefetch import COMPUTE, STREAM, body_ops, nested

IR = Path(__file__).parent / "ir" / "matmul.baco.mlir"


def k_loops(module):
    """The K loops (those holding a compute nest) of the module's kernel: its interior, ragged-K and
    edge versions' (baco.passes.interior)."""
    loops = [op for op in nested(module.operation) if op.name == "scf.for"
             and any(COMPUTE in o.attributes for o in body_ops(op) for o in nested(o))]
    assert len(loops) == 3
    return loops


def test_next_step_arithmetic_checks_and_configs_run_under_one_guard():
    res = run_pipeline(IR.read_text(), CompileOptions.of(loop_ws=False, double_buffer=True), until="linalg-to-instgem")
    with res.context:
        for loop in k_loops(res.module):
            check_guard(loop)


def check_guard(loop):
    body = body_ops(loop)
    guards = [op for op in body if op.name == "scf.if" and len(op.results)]
    assert len(guards) == 1
    guard = guards[0]
    # the condition: k + step < ub
    cond = guard.operands[0].owner
    assert cond.name == "arith.cmpi" and cond.operands[1] == loop.operands[1]
    assert cond.operands[0].owner.name == "arith.addi" and list(cond.operands[0].owner.operands) == [
        loop.regions[0].blocks[0].arguments[0], loop.operands[2]]
    then_ops = [o for o in body_ops(guard) for o in nested(o)]
    # the next step's configs and DRAM views are inside it, none at the loop's top level
    assert sum(o.name == "instgem.config_ld" for o in then_ops) == 2
    assert any(o.name == "memref.subview" for o in then_ops)
    assert not any(o.name in ("instgem.config_ld", "memref.subview") for o in body)
    # its results are what the spread load streams read: zeros when no next step runs
    streams = [o for op in body for o in nested(op) if STREAM in o.attributes]
    read = {v for s in streams for o in nested(s) for v in o.operands}
    assert all(r in read for r in guard.results)
    *_, else_yield = [o.operation for o in guard.regions[1].blocks[0].operations]
    assert all(str(v.owner.attributes["value"]).startswith("0 ") for v in else_yield.operands)
