"""Small builders shared by the Python-defined passes (generic op creation
with the current location and insertion point)."""
from __future__ import annotations

from mlir.ir import (Attribute, DenseI64ArrayAttr, F32Type, IndexType,
                     IntegerAttr, IntegerType, Operation, RankedTensorType,
                     ShapedType, Type, UnitAttr, WalkOrder, WalkResult)

from baco.errors import CompilationError
from baco.gemmini.abi import (BOUNDARY_ERROR, BOUNDARY_ERROR_SIGNATURE, GRID_SIGNATURE, RUNTIME_ERROR,
                              RUNTIME_ERROR_SIGNATURE)

DYN = ShapedType.get_dynamic_size()


def index() -> Type:
    return IndexType.get()


def i64() -> Type:
    return IntegerType.get_signless(64)


def create(name, operands=(), results=(), attributes=None, regions=0, loc=None):
    return Operation.create(name, results=list(results), operands=list(operands),
                            attributes=attributes or {}, regions=regions, loc=loc)


def const_index(value: int, loc=None):
    return create("arith.constant", results=[index()],
                  attributes={"value": IntegerAttr.get(index(), value)}, loc=loc).result


def const_int(value: int, ty: Type, loc=None):
    return create("arith.constant", results=[ty],
                  attributes={"value": IntegerAttr.get(ty, value)}, loc=loc).result


def const_f32(value: float, loc=None):
    return create("arith.constant", results=[F32Type.get()],
                  attributes={"value": Attribute.parse(f"{float(value)!r} : f32")}, loc=loc).result


def binop(name: str, a, b, loc=None):
    return create(f"arith.{name}", operands=[a, b], results=[a.type], loc=loc).result


def cmpi(predicate: str, a, b, loc=None):
    """i1 `a <predicate> b` (eq, ne, slt, sle, sgt, sge, ...) through the typed builder."""
    from mlir.dialects import arith
    return arith.CmpIOp(getattr(arith.CmpIPredicate, predicate), a, b, loc=loc).result


def select(cond, a, b, loc=None):
    from mlir.dialects import arith
    return arith.SelectOp(cond, a, b, loc=loc).result


def index_cast(v, ty, loc=None):
    return create("arith.index_cast", operands=[v], results=[ty], loc=loc).result


def clamp(value, lo, hi, loc=None):
    return binop("minsi", binop("maxsi", value, lo, loc), hi, loc)


def checked_window(limit, offset, block: int, loc=None):
    """The part of a `block`-long window at `offset` that lies inside [0, limit), as index
    values (start, extent, lead): it starts at `start` in the array, is `extent` long and
    sits `lead` elements into the block (lead > 0 only for a negative offset)."""
    zero, blk = const_index(0, loc), const_index(block, loc)
    start = clamp(offset, zero, limit, loc)
    end = clamp(binop("addi", offset, blk, loc), zero, limit, loc)
    lead = clamp(binop("subi", start, offset, loc), zero, blk, loc)
    return start, binop("subi", end, start, loc), lead


def view_start(start, limit, loc=None):
    """A checked window's start as a subview offset: an empty window of an array dimension of
    constant size L starts at L - 1, not L (canonicalization folds the offset to a constant, and
    memref.subview's verifier rejects an offset equal to the dimension's size, even for 0
    elements). A dimension of run-time size keeps `start` (the loop rewrites match it)."""
    owner = getattr(limit, "owner", None)
    if getattr(owner, "name", None) != "arith.constant":
        return start
    last = max(IntegerAttr(owner.attributes["value"]).value - 1, 0)
    return binop("minsi", start, const_index(last, loc), loc)


def dense_i64(values) -> Attribute:
    return DenseI64ArrayAttr.get(list(values))


def strided_type(elem: Type, rank: int = 2) -> Type:
    dims = "x".join("?" * rank)
    strides = ", ".join("?" * rank)
    return Type.parse(f"memref<{dims}x{elem}, strided<[{strides}], offset: ?>>")


def subview(source, offsets, sizes, strides, loc=None):
    """Fully dynamic 2-D subview (canonicalization folds constants later)."""
    elem = ShapedType(source.type).element_type
    n = len(offsets)
    return create("memref.subview", operands=[source, *offsets, *sizes, *strides],
                  results=[strided_type(elem, n)], loc=loc,
                  attributes={
                      "operandSegmentSizes": Attribute.parse(f"array<i32: 1, {n}, {n}, {n}>"),
                      "static_offsets": dense_i64([DYN] * n),
                      "static_sizes": dense_i64([DYN] * n),
                      "static_strides": dense_i64([DYN] * n)}).result


def tensor_type(shape, elem) -> Type:
    return RankedTensorType.get(list(shape), elem)


def unit() -> Attribute:
    return UnitAttr.get()


def alloc_of(value):
    """The placed alloc behind a value (itself or a subview of it)."""
    owner = value.owner
    while getattr(owner, "name", None) in ("memref.subview", "memref.collapse_shape"):
        owner = owner.operands[0].owner
    return owner if getattr(owner, "name", None) == "memref.alloc" else None


def walk_ops(op) -> list:
    """Every operation nested in `op` (not `op` itself), in pre-order, collected
    first so callers may insert and move ops while iterating. Erasing is another
    matter: an erased op frees the ops nested in it, and the bindings leave every
    other handle to them (these included) dangling, so a caller that erases picks
    the ops it needs from the list before it erases any."""
    ops = []

    def visit(inner):
        ops.append(inner)
        return WalkResult.ADVANCE

    op.walk(visit, WalkOrder.PRE_ORDER)
    return ops[1:]


def is_zero_fill(op) -> bool:
    """linalg.fill(0) or linalg.map yielding constant 0 (bufferized tensor.pad)."""
    if op.name == "linalg.fill":
        value = op.operands[0].owner
    elif op.name == "linalg.map":
        body = op.regions[0].blocks[0]
        ops = list(body.operations)
        if len(ops) != 1 or ops[0].operation.name != "linalg.yield":
            return False
        value = ops[0].operation.operands[0].owner
    else:
        return False
    if not hasattr(value, "name") or value.name != "arith.constant":
        return False
    return str(value.attributes["value"]).split(":")[0].strip() in ("0", "0.000000e+00")


def scale_operand(gen):
    """The f32 scale a scaled gemmini.epilogue / gemmini.acc_add generic multiplies by (its
    body's arith.mulf), or None when it multiplies by nothing: unscaled, or a constant scale of
    exactly 1.0 that canonicalization folded away (the same arithmetic as no scale)."""
    mul = next((o.operation for o in gen.regions[0].blocks[0].operations if o.operation.name == "arith.mulf"), None)
    return None if mul is None else mul.operands[1]


def fail(message: str, op) -> CompilationError:
    return CompilationError.at_location(message, op.location)


def declare_func(op, name: str, signature: str):
    """Declare an external function `name` once at the top of `op`'s module."""
    from mlir.ir import InsertionPoint, StringAttr
    module = op
    while module.name != "builtin.module":
        module = module.parent
    body = module.regions[0].blocks[0]
    for f in body.operations:
        if f.operation.name == "func.func" and StringAttr(f.operation.attributes["sym_name"]).value == name:
            return
    with InsertionPoint.at_block_begin(body), op.location:
        create("func.func", regions=1, attributes={
            "sym_name": StringAttr.get(name),
            "function_type": Attribute.parse(signature),
            "sym_visibility": StringAttr.get("private")})


def call_boundary_error(op):
    """Call `baco_boundary_error(line, col)` of `op`'s source location at the insertion point."""
    import re
    declare_func(op, BOUNDARY_ERROR, BOUNDARY_ERROR_SIGNATURE)
    m = re.search(r'":(\d+):(\d+)', str(op.location))
    line, col = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    create("func.call", operands=[const_int(line, i64()), const_int(col, i64())],
           attributes={"callee": Attribute.parse(f"@{BOUNDARY_ERROR}")})


def call_runtime_error(op, code: int):
    """Call `baco_runtime_error(code, line, col)` (baco.errors.RUNTIME_ERRORS[code]) of `op`'s
    source location at the insertion point."""
    import re
    declare_func(op, RUNTIME_ERROR, RUNTIME_ERROR_SIGNATURE)
    m = re.search(r'":(\d+):(\d+)', str(op.location))
    line, col = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    create("func.call", operands=[const_int(code, i64()), const_int(line, i64()), const_int(col, i64())],
           attributes={"callee": Attribute.parse(f"@{RUNTIME_ERROR}")})


def call_grid(op, callee: str, axis: int):
    """i64 result of `baco_program_id(axis)` / `baco_num_programs(axis)` at the insertion point."""
    declare_func(op, callee, GRID_SIGNATURE)
    return create("func.call", operands=[const_int(axis, i64())], results=[i64()],
                  attributes={"callee": Attribute.parse(f"@{callee}")}).result
