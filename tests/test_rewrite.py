"""The shared rewrite-pattern driver (baco/passes/rewrite.py): Python patterns on IRDL op names,
drivers that neither fold nor erase what the patterns leave, exceptions raised after the driver."""
import re

import pytest
from mlir.ir import Location

from baco.dialects import make_context, parse_module
from baco.dialects.baco_dialect import IRDL as BACO_IRDL
from baco.errors import CompilationError
from baco.passes import irutil as ir
from baco.passes.baco_to_linalg import EPILOGUE_OPS, BacoToLinalg
from baco.passes.rewrite import DRIVERS, IN_ORDER, WALK, apply_patterns

KERNEL = '''
module {
  func.func @f(%a: index) -> index {
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %x = "baco.program_id"() {axis = 0 : i32} : () -> index loc("k.py":4:8)
    %y = "baco.program_id"() {axis = 1 : i32} : () -> index loc("k.py":5:8)
    %s = arith.addi %c2, %c3 : index
    %z = arith.addi %x, %y : index
    %w = arith.addi %z, %s : index
    return %w : index
  }
}'''


def rewrite(driver, pattern):
    ctx = make_context()
    with ctx, Location.unknown():
        module = parse_module(KERNEL, ctx)
        apply_patterns(module.operation, {"baco.program_id": pattern}, driver)
        return str(module)


def replace_by_axis(op, rewriter):
    rewriter.replace_op(op, [ir.const_index(10 + ir.IntegerAttr(op.attributes["axis"]).value)])
    return True


@pytest.mark.parametrize("driver", DRIVERS)
def test_patterns_on_irdl_ops_and_nothing_folded(driver):
    out = rewrite(driver, replace_by_axis)
    assert "baco.program_id" not in out
    assert "arith.constant 10 : index" in out and "arith.constant 11 : index" in out
    # the kernel's own arithmetic is left as written: 2 + 3 is not folded to 5
    assert "arith.constant 5" not in out and out.count("arith.addi") == 3


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_pattern_that_declines_leaves_the_op(driver):
    out = rewrite(driver, lambda op, rewriter: False)
    assert out.count("baco.program_id") == 2


def test_both_drivers_visit_the_ops_in_program_order():
    seen = {}
    for driver in DRIVERS:
        lines = seen[driver] = []

        def record(op, rewriter):
            lines.append(str(op.location))
            return False
        rewrite(driver, record)
    assert seen[WALK] == ['loc("k.py":4:8)', 'loc("k.py":5:8)']
    assert seen[IN_ORDER] == ['loc("k.py":4:8)', 'loc("k.py":5:8)']


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_first_exception_is_raised_after_the_driver(driver):
    calls = []

    def fail_first(op, rewriter):
        calls.append(op)
        raise CompilationError.at_location("bad program_id", op.location)
    with pytest.raises(CompilationError, match="bad program_id") as e:
        rewrite(driver, fail_first)
    assert "k.py:4" in str(e.value)
    assert len(calls) == 1          # later matches fail without running


def test_unknown_driver_is_a_value_error():
    with pytest.raises(ValueError, match="driver"):
        rewrite("greedy", replace_by_axis)


def test_every_baco_op_has_a_pattern_or_is_folded_by_its_users():
    ops = {f"baco.{name}" for name in re.findall(r"irdl\.operation @(\w+)", BACO_IRDL)}
    lowered = set(BacoToLinalg().patterns()) | set(EPILOGUE_OPS)
    assert ops <= lowered, sorted(ops - lowered)
