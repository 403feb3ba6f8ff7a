"""instgem-to-llvm packs a command's fields into rs1/rs2 without the field mask where the value's
range (instgem_to_llvm.value_range) already lies inside the field, and keeps it elsewhere."""
from mlir.ir import Context, InsertionPoint, IntegerAttr, Location, Module

from baco.gemmini.isa import COMMANDS
from baco.passes import instgem_to_llvm
from baco.passes import irutil as ir
from baco.passes.irutil import walk_ops

FUNC = """
func.func @f(%n: i64, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : i64
  %c128 = arith.constant 128 : i64
  %flag = arith.constant 2147483648 : i64
  %ub = arith.minsi %m, %c4 : index
  scf.for %i = %c1 to %ub step %c1 {
    %ii = arith.index_cast %i : index to i64
    %row = arith.muli %ii, %c128 : i64
    %addr = arith.ori %row, %flag : i64
    %rows = arith.minsi %n, %c16 : i64
    %clamped = arith.maxsi %rows, %c16 : i64
    %q = arith.ceildivsi %row, %c16 : i64
    %r = arith.remsi %n, %c16 : i64
    %wrap = arith.muli %n, %n : i64
    "test.use"(%addr, %rows, %clamped, %q, %r, %wrap) : (i64, i64, i64, i64, i64, i64) -> ()
  }
  return
}
"""


def parsed():
    """(context, module, the test.use op) of FUNC."""
    ctx = Context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        module = Module.parse(f"module {{ {FUNC} }}")
    return ctx, module, next(op for op in walk_ops(module.operation) if op.name == "test.use")


def test_value_range_follows_loop_bounds_and_arithmetic():
    ctx, _, use = parsed()
    with ctx:
        ranges = {}
        got = [instgem_to_llvm.value_range(v, ranges) for v in use.operands]
    assert got == [
        (1 << 31, 3 * 128 + (1 << 31)),        # i in [1, 3]: (i * 128) | flag
        (None, 16),                            # min(n, 16): no lower bound
        (16, 16),                              # max(min(n, 16), 16) is 16
        (8, 24),                               # ceil(i * 128 / 16)
        (-15, 15),                             # n rem 16, n of any sign
        (None, None),                          # n * n: unknown
    ]


def test_pack_masks_only_fields_a_value_may_overflow():
    ctx, module, use = parsed()
    addr, rows = use.operands[0], use.operands[1]
    with ctx, Location.unknown(), InsertionPoint(use):
        # compute_preloaded: a_addr bits 0..31 (in range: no mask), a_cols bits 32..47 (min(n, 16)
        # may be negative: masked), a_rows bits 48..63 (the top field: the shift drops the high
        # bits, no mask); the same for bd
        instgem_to_llvm.pack(COMMANDS["compute_preloaded"], [addr, rows, rows, addr, rows, rows])
        masks = [IntegerAttr(op.operands[1].owner.attributes["value"]).value
                 for op in walk_ops(module.operation) if op.name == "arith.andi"]
    assert masks == [0xFFFF, 0xFFFF]


def test_divisions_of_non_negative_values_become_unsigned():
    """The ceiling division of i·128 (i >= 1) by 16 becomes (x + 15) / 16 unsigned; n rem 16,
    n of any sign, stays signed; a division by a value that may be 0 stays signed too."""
    ctx, module, _ = parsed()
    with ctx, Location.unknown():
        loop = next(op for op in walk_ops(module.operation) if op.name == "scf.for")
        with InsertionPoint(loop.regions[0].blocks[0].operations[0]):
            i = loop.regions[0].blocks[0].arguments[0]
            floor = ir.binop("floordivsi", i, ir.const_index(4))
            by_any = ir.binop("divsi", i, list(loop.operands)[1])
            ir.create("test.use", operands=[floor, by_any])
        instgem_to_llvm.unsigned_divisions(module.operation)
    names = [op.name for op in walk_ops(module.operation) if "div" in op.name or "rem" in op.name]
    assert sorted(names) == ["arith.divsi", "arith.divui", "arith.divui", "arith.remsi"], names
    text = str(module)
    assert "arith.ceildivsi" not in text and "arith.floordivsi" not in text
    use = next(op for op in walk_ops(module.operation) if op.name == "test.use" and len(op.operands) == 6)
    q = use.operands[3].owner       # (row + (16 - 1)) / 16
    assert q.name == "arith.divui" and q.operands[0].owner.name == "arith.addi"


def test_i32_divisions_stay_signed():
    """value_range's bounds assume 64-bit arithmetic: an i32 division keeps its signed form."""
    ctx = Context()
    ctx.allow_unregistered_dialects = True
    with ctx, Location.unknown():
        module = Module.parse("""module { func.func @f(%x: i32) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %p = arith.maxsi %x, %c0 : i32
  %q = arith.divsi %p, %c16 : i32
  "test.use"(%q) : (i32) -> ()
  return
} }""")
        instgem_to_llvm.unsigned_divisions(module.operation)
    assert "arith.divsi" in str(module) and "arith.divui" not in str(module)
