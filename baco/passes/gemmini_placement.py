"""Gemmini placement: give every local block buffer (`memref.alloc` left by
bufferization) a home in Gemmini's private memories.

int8 blocks go to the scratchpad, int32 blocks to the accumulator. A block of
R×C elements is stored as ⌈R/DIM⌉·⌈C/DIM⌉ DIM×DIM tiles, row of tiles after
row of tiles (tile (i, j) at `gemmini.base_row` + i·`gemmini.row_tile_stride`
+ j·DIM), so a row of tiles is one contiguous range that a multi-column mvin
(block stride DIM) fills in one command (baco.gemmini.schedule.block_rows). An
accumulator block that is max-pooled is stored column of tiles after column of
tiles instead (tile (i, j) at base + i·DIM + j·`gemmini.col_tile_stride`, the
rows of all its row tiles): a pooled mvout reads an image's pixels from
consecutive rows, one DIM-wide column at a time. Buffers are allocated once for the whole
kernel (no reuse), so addresses are static. Capacity overflow is a compile
error naming the block sizes and the limit (schedule.capacity_problems, the
rule the tuner checks too).

An int8 block written only by a scale/ReLU epilogue of an accumulator block
and only stored to DRAM gets no rows (`gemmini.space = "epilogue"`): the
lowering moves it out of the accumulator through the scaling path. One only read
by dots gets none either (`"acc_read"`): the dots read the accumulator block
through the execute unit's scaled, activated int8 read path (a chained dot); in OS, when
array_written() allows it, it is an ordinary scratchpad block (`gemmini.array_written`: the
in_shift) that the source's one dot writes through the array's shift/saturate/ReLU. A loaded
block only added to an accumulator block gets none either (`"acc_add"`): the lowering
moves it from DRAM into that accumulator block with the accumulate bit. The
pooled block of a `gemmini.max_pool` generic (only stored) gets none either
(`"pooled"`), nor does the epilogue block it pools: the lowering stores it with a
pooled mvout from the accumulator.

Ragged edges: the zero padding bufferization materialises around a clipped
load (`linalg.map`/`linalg.fill` of 0, then a copy into a corner subview) is
dropped for scratchpad operands read only by `linalg.matmul`: Gemmini masks
rows/cols outside each operand's extent, so the lowering passes the clipped
extents instead of moving zeros in.
"""
from __future__ import annotations

import math

from mlir.ir import FloatAttr, IntegerAttr, MemRefType, StringAttr

from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import block_rows, capacity_problems
from baco.options import CompileOptions
from baco.passes import irutil as ir


def fill_target(op):
    return op.operands[-1] if op.name == "linalg.fill" else op.operands[0]


def users(value):
    return [use.owner for use in value.uses]


def layout(shape, dim):
    """(rows between vertically adjacent tiles, rows occupied) of a rows × cols block."""
    rows, cols = shape
    return -(-cols // dim) * dim, block_rows(rows, cols, dim)


def stored_only(alloc, u) -> bool | None:
    """For a user `u` of `alloc`: whether it only stores the block to DRAM (a copy from it, or
    a corner subview only copied from); None if `u` is neither."""
    if u.name == "memref.subview":
        return all(w.name == "memref.copy" and w.operands[0] == u.result for w in users(u.result))
    if u.name == "memref.copy":
        return u.operands[0] == alloc.result
    return None


def is_epilogue_staging(alloc) -> bool:
    """An int8 block only written by a gemmini.epilogue generic and only stored
    to DRAM (directly or through corner subviews) or pooled by gemmini.max_pool generics."""
    writers, stores = 0, True
    for u in users(alloc.result):
        if u.name == "linalg.generic" and "gemmini.epilogue" in u.attributes and u.operands[-1] == alloc.result:
            writers += 1
        elif u.name == "linalg.generic" and "gemmini.max_pool" in u.attributes and u.operands[0] == alloc.result:
            continue
        elif stored_only(alloc, u) is None:
            return False
        else:
            stores &= stored_only(alloc, u)
    return writers == 1 and stores


def is_pooled(alloc) -> bool:
    """An int8 block written by a gemmini.max_pool generic (after its -128 fill, the max's
    identity) and only stored to DRAM."""
    writers = 0
    for u in users(alloc.result):
        if u.name == "linalg.generic" and "gemmini.max_pool" in u.attributes and u.operands[-1] == alloc.result:
            writers += 1
        elif u.name == "linalg.fill" and u.operands[-1] == alloc.result:
            continue
        elif not stored_only(alloc, u):
            return False
    return writers == 1


def is_pooled_accumulator(alloc) -> bool:
    """An accumulator block whose int8 epilogue a gemmini.max_pool generic pools."""
    for u in users(alloc.result):
        if u.name == "linalg.generic" and "gemmini.epilogue" in u.attributes and u.operands[0] == alloc.result:
            if any(p.name == "linalg.generic" and "gemmini.max_pool" in p.attributes and p.operands[0] == u.operands[-1]
                   for p in users(u.operands[-1])):
                return True
    return False


def is_accumulator_read(alloc) -> bool:
    """An int8 block only written by a gemmini.epilogue generic and only read by dots:
    it stays in its accumulator, which the dots read through the scaled int8 read path."""
    writers, reads = 0, 0
    for u in users(alloc.result):
        if u.name == "linalg.generic" and "gemmini.epilogue" in u.attributes and u.operands[-1] == alloc.result:
            writers += 1
        elif u.name == "linalg.matmul" and alloc.result in list(u.operands)[:2]:
            reads += 1
        else:
            return False
    return writers == 1 and reads > 0


def array_written(alloc) -> tuple | None:
    """OS only: (in_shift, relu, the epilogue generic, the source accumulator block) when an
    accumulator-read block `alloc` can instead be written by the array: its source block is
    zero-filled, written by one dot outside any loop (the whole K summed in the PEs) and read
    only by this epilogue, whose scale is a constant power of two 2^-s (or none). The OS
    compute then writes the sum rounding-shifted by config_ex's in_shift, saturated and
    ReLU'd straight into a scratchpad block (gemmini-isa.md §3.1-3.3). A constant scale
    that is no power of two is a located error; a runtime scale keeps the accumulator read."""
    gen = next(u for u in users(alloc.result) if u.name == "linalg.generic" and u.operands[-1] == alloc.result)
    source = gen.operands[0].owner
    if getattr(source, "name", None) != "memref.alloc":
        return None
    matmuls = []
    for u in users(source.result):
        if u.name == "linalg.matmul" and u.operands[2] == source.result:
            matmuls.append(u)
        elif not ((u.name == "linalg.fill" and ir.is_zero_fill(u) and u.operands[-1] == source.result) or u == gen):
            return None
    if len(matmuls) != 1 or matmuls[0].parent.name != "func.func":
        return None
    attrs = gen.attributes["gemmini.epilogue"]
    relu = str(ir.Attribute(attrs["relu"])) == "true"
    shift = 0
    scale_value = ir.scale_operand(gen)
    if scale_value is not None:
        const = scale_value.owner
        if getattr(const, "name", None) != "arith.constant":
            return None
        scale = FloatAttr(const.attributes["value"]).value
        mantissa, exponent = math.frexp(scale)
        if mantissa != 0.5 or not -31 <= exponent - 1 <= 0:
            raise ir.fail(f"an output-stationary dot writes its int8 result to the scratchpad scaled by a "
                          f"power of two 2^-s (0 <= s <= 31, config_ex's in_shift), not {scale!r}", gen)
        shift = 1 - exponent
    return shift, relu, gen, source


def is_accumulated_load(alloc) -> bool:
    """A block only filled from DRAM (a zero-padded load) and only read by gemmini.acc_add
    generics: it is moved straight into the accumulator block it is added to."""
    reads = 0
    for u in users(alloc.result):
        if u.name in ("linalg.map", "linalg.fill") and ir.is_zero_fill(u):
            continue
        if u.name == "memref.subview":
            if not all(w.name == "memref.copy" and w.operands[1] == u.result for w in users(u.result)):
                return False
        elif u.name == "memref.copy" and u.operands[1] == alloc.result:
            continue
        elif u.name == "linalg.generic" and "gemmini.acc_add" in u.attributes and u.operands[0] == alloc.result:
            reads += 1
        else:
            return False
    return reads > 0


def is_sliced_load(alloc) -> bool:
    """A 3-D block (a 3-D block pointer's load): filled slice by slice from DRAM through
    subviews and read only as its (slices*rows, cols) collapse."""
    for u in users(alloc.result):
        if u.name == "memref.subview":
            if not all(w.name == "memref.copy" and w.operands[1] == u.result for w in users(u.result)):
                return False
        elif u.name != "memref.collapse_shape":
            return False
    return True


def column_major(view) -> bool:
    """A DRAM view whose first dimension has stride 1 and second does not (strides (1, ld))."""
    layout = str(MemRefType(view.type).layout).replace(" ", "")
    if not layout.startswith("strided<["):
        return False
    strides = layout[len("strided<["):].split("]")[0].split(",")
    return strides[0] == "1" and strides[1] != "1"


def loaded_transposed(alloc) -> bool:
    """A scratchpad block filled from a column-major DRAM view: Gemmini moves it in as its
    transpose (DRAM rows are the block's columns) and the array transposes it back."""
    copies = [u for u in users(alloc.result) if u.name == "memref.copy" and u.operands[1] == alloc.result]
    for v in users(alloc.result):
        if v.name == "memref.subview":
            copies += [w for w in users(v.result) if w.name == "memref.copy" and w.operands[1] == v.result]
    return bool(copies) and all(column_major(c.operands[0]) for c in copies)


class Placement:
    """With `double_buffer` every block allocated in a loop gets two homes
    (`gemmini.copy_rows` apart) used by alternate iterations, so the lowering
    can load the next iteration's blocks while the array works on these."""

    def __init__(self, config: GemminiConfig, double_buffer: bool = False, dataflow: str = "WS"):
        self.config = config
        self.double_buffer = double_buffer
        self.dataflow = dataflow

    def run(self, module_op):
        for func in module_op.regions[0].blocks[0].operations:
            func = func.operation
            if func.name == "func.func" and len(func.regions[0].blocks):
                self.place(func)

    def place(self, func):
        self.stage_operands(func)
        dim = self.config.dim
        used = {"spad": 0, "acc": 0, "epilogue": 0, "acc_read": 0, "acc_add": 0, "pooled": 0}
        placed = {"spad": [], "acc": [], "epilogue": [], "acc_read": [], "acc_add": [], "pooled": []}
        for op in ir.walk_ops(func):
            if op.name != "memref.alloc":
                continue
            t = MemRefType(op.result.type)
            shape = list(t.shape)
            elem = str(t.element_type)
            if len(shape) == 3 and is_sliced_load(op):     # (slices, rows, cols) read as (slices*rows, cols)
                op.attributes["gemmini.slice_rows"] = IntegerAttr.get(ir.i64(), shape[1])
                shape = [shape[0] * shape[1], shape[2]]
            if len(shape) != 2:
                raise ir.fail("Gemmini blocks are 2-D", op)
            space = {"i8": "spad", "i32": "acc"}.get(elem)
            if space is None:
                raise ir.fail(f"a {elem} block has no place in Gemmini's memories "
                              "(int8 scratchpad, int32 accumulator)", op)
            transposed = space == "spad" and loaded_transposed(op)
            row_tile_stride, rows = layout(shape[::-1] if transposed else shape, dim)
            if transposed:
                op.attributes["gemmini.transposed"] = ir.unit()
            if space == "acc" and is_pooled_accumulator(op):
                op.attributes["gemmini.col_tile_stride"] = IntegerAttr.get(ir.i64(), -(-shape[0] // dim) * dim)
                row_tile_stride = dim
            if is_accumulated_load(op):
                space, rows = "acc_add", 0
            elif space == "spad" and is_epilogue_staging(op):
                space, rows = "epilogue", 0
            elif space == "spad" and is_pooled(op):
                space, rows = "pooled", 0
            elif space == "spad" and is_accumulator_read(op):
                written = array_written(op) if self.dataflow == "OS" else None
                if written is None:
                    space, rows = "acc_read", 0
                else:       # a scratchpad block the source's one dot writes through the array (OS)
                    op.attributes["gemmini.array_written"] = IntegerAttr.get(ir.i64(), written[0])
            op.attributes["gemmini.space"] = StringAttr.get(space)
            op.attributes["gemmini.base_row"] = IntegerAttr.get(ir.i64(), used[space])
            op.attributes["gemmini.row_tile_stride"] = IntegerAttr.get(ir.i64(), row_tile_stride)
            if self.double_buffer and rows and op.parent.name == "scf.for":
                # a second home right after the first; the lowering alternates them
                op.attributes["gemmini.copy_rows"] = IntegerAttr.get(ir.i64(), rows)
                rows *= 2
            used[space] += rows
            placed[space].append((shape, elem, rows, op))
        self.check_capacity(used, placed)
        # what the kernel occupies, for tools and the capacity-rule tests
        func.attributes["gemmini.sp_rows_used"] = IntegerAttr.get(ir.i64(), used["spad"])
        func.attributes["gemmini.acc_rows_used"] = IntegerAttr.get(ir.i64(), used["acc"])
        self.elide_operand_padding(func)

    def stage_operands(self, func):
        """A dot operand bufferization left in DRAM (a load that needed no padding)
        is copied into a local block first: Gemmini computes on local memory only."""
        from mlir.ir import InsertionPoint
        for op in list(ir.walk_ops(func)):
            if op.name != "linalg.matmul":
                continue
            for i in (0, 1):
                v = op.operands[i]
                owner = getattr(v.owner, "name", None)
                if owner == "memref.alloc" or (owner == "memref.collapse_shape" and
                                               getattr(v.owner.operands[0].owner, "name", None) == "memref.alloc"):
                    continue
                t = MemRefType(v.type)
                if any(s == ir.DYN for s in t.shape):
                    raise ir.fail("dot operands must have a static block shape", op)
                load = getattr(v.owner, "location", op.location)    # the copy is the user's load
                with InsertionPoint(op), load:
                    buf = ir.create("memref.alloc", results=[MemRefType.get(list(t.shape), t.element_type)],
                                    attributes={"operandSegmentSizes": ir.Attribute.parse("array<i32: 0, 0>")}).result
                    ir.create("memref.copy", operands=[v, buf])
                op.operands[i] = buf

    def check_capacity(self, used, placed):
        blocks = {space: "the kernel's blocks " + ", ".join(f"{s[0]}x{s[1]} {e} ({r} rows)" for s, e, r, _ in placed[space])
                  for space in ("spad", "acc")}
        problems = capacity_problems(self.config, used["spad"], used["acc"], blocks["spad"], blocks["acc"])
        if problems:
            over = "spad" if used["spad"] > self.config.sp_rows else "acc"
            raise ir.fail(f"{'; '.join(problems)}; choose smaller BLOCK sizes", placed[over][-1][3])

    def elide_operand_padding(self, func):
        # the fills are picked before any is erased: the walk also lists the ops nested in a
        # linalg.map (its linalg.yield), which its erasure frees (a use after free)
        fills = [op for op in ir.walk_ops(func) if op.name in ("linalg.map", "linalg.fill")]
        for op in fills:
            if not ir.is_zero_fill(op):
                continue
            buf = fill_target(op)
            owner = buf.owner
            if not hasattr(owner, "name") or owner.name != "memref.alloc":
                continue
            if str(owner.attributes["gemmini.space"]).strip('"') != "spad":
                continue
            readers = [u for u in users(buf) if u.name not in ("memref.subview",) and u != op]
            views = [u for u in users(buf) if u.name == "memref.subview"]
            only_matmul = all(u.name == "linalg.matmul" for u in readers) and all(
                all(w.name == "memref.copy" and w.operands[1] == v.result for w in users(v.result))
                for v in views)
            if only_matmul:
                op.erase()


def run(module_op, options: CompileOptions):
    Placement(options.config, options.double_buffer, options.dataflow).run(module_op)


__all__ = ["run", "Placement", "CompilationError", "layout"]
