"""linalg/memref → InstGem: tile every placed block operation to DIM×DIM
Gemmini commands.

- copy DRAM window → local block: config_ld + mvin per (DIM rows × up to
  MAX_BLOCK_LEN·DIM columns), clipped to the window's runtime extent;
- zero fill of a local block: mvin with DRAM address 0 (under a DRAM copy that
  overwrites the block next, only when its window does not cover the block; under
  an added load, only its tiles outside the window, and none when the block is only
  ever stored within that window);
- linalg.matmul on placed blocks: preload/compute pairs, weight-stationary
  (B held in the array, reused across the rows of A) or output-stationary
  (C held in the array, K reduced in place), with rows/cols masked to each
  operand's runtime extent so ragged edges need no padding;
- copy local block → DRAM window: config_st + mvout; an accumulator block
  tagged with a `gemmini.epilogue` (relu / scale / int8) is stored through
  the accumulator read path, a plain int32 block with a full-width read; the
  block of a `gemmini.max_pool` generic over such an epilogue is stored with
  config_st's pooling fields and one pooled mvout per DIM columns.
"""
from __future__ import annotations

import struct

from mlir.dialects import scf
from mlir.ir import Block, InsertionPoint, IntegerAttr, MemRefType, StringAttr

from baco.dialects import instgem
from baco.gemmini.config import MLIR_ELEMENTS, GemminiConfig
from baco.gemmini.isa import GARBAGE_ADDR, MVIN_OF_SLOT, local_addr
from baco.options import CompileOptions
from baco.passes import irutil as ir
from baco.passes import interior, prefetch
from baco.passes.gemmini_placement import array_written
from baco.passes.rewrite import WALK, apply_patterns
from baco.passes.irutil import alloc_of
from baco.passes.loop_facts import hoist_above

# a function whose code sets config_ex on every path before its first compute (loop-conv-ws's
# branches): no config_ex at its entry
SETS_CONFIG_EX = "gemmini.sets_config_ex"


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def scale_bits(scale):
    """The i64 of an f32 scale operand's bits (1.0 when there is none)."""
    if scale is None:
        return cst(f32_bits(1.0))
    bits = ir.create("arith.bitcast", operands=[scale], results=[ir.IntegerType.get_signless(32)]).result
    return ir.create("arith.extui", operands=[bits], results=[ir.i64()]).result


class Placed:
    """A placed local block: address arithmetic on its DIM×DIM tiles. A
    double-buffered block (`gemmini.copy_rows`) starts at a row computed where
    it is allocated: the copy of this loop iteration."""

    def __init__(self, alloc, dim):
        self.alloc = alloc
        self.space = StringAttr(alloc.attributes["gemmini.space"]).value
        self.base = IntegerAttr(alloc.attributes["gemmini.base_row"]).value
        self.row_tile_stride = IntegerAttr(alloc.attributes["gemmini.row_tile_stride"]).value
        self.col_tile_stride = IntegerAttr(alloc.attributes["gemmini.col_tile_stride"]).value \
            if "gemmini.col_tile_stride" in alloc.attributes else dim
        t = MemRefType(alloc.result.type)
        # a transposed block (loaded from a column-major view) is stored as its transpose
        self.transposed = "gemmini.transposed" in alloc.attributes
        self.shape = list(t.shape)[::-1] if self.transposed else list(t.shape)
        # a 3-D load's block (slices, rows, cols) is laid out and read as (slices*rows, cols)
        self.slice_rows = IntegerAttr(alloc.attributes["gemmini.slice_rows"]).value \
            if "gemmini.slice_rows" in alloc.attributes else None
        if self.slice_rows:
            self.shape = [self.shape[0] * self.shape[1], self.shape[2]]
        # the shape the kernel's windows and a dot's extents are in (before the transpose)
        self.logical_shape = self.shape[::-1] if self.transposed else self.shape
        self.elem = str(t.element_type)
        self.dim = dim
        if "gemmini.copy_rows" in alloc.attributes:
            copy_rows = IntegerAttr(alloc.attributes["gemmini.copy_rows"]).value
            with InsertionPoint(alloc), alloc.location:
                self.base = ir.binop("addi", cst(self.base), ir.binop("muli", copy_parity(alloc), cst(copy_rows)))

    def tile_addr(self, row_tile, col_tile, flags=0):
        """Local address of tile (row_tile, col_tile); tiles are i64 Values."""
        row = ir.binop("addi", ir.binop("muli", row_tile, cst(self.row_tile_stride)),
                       ir.binop("muli", col_tile, cst(self.col_tile_stride)))
        row = ir.binop("addi", row, cst(self.base) if isinstance(self.base, int) else self.base)
        return ir.binop("ori", row, ir.const_int(flags, ir.i64())) if flags else row


def copy_parity(alloc):
    """i64 0/1: the copy of a double-buffered block (allocated in a loop's body)
    live in this iteration: the iteration number's parity."""
    loop_op = alloc.parent
    lb, _, step = (i64(v) for v in list(loop_op.operands)[:3])
    iv = i64(loop_op.regions[0].blocks[0].arguments[0])
    return ir.binop("remsi", ir.binop("divsi", ir.binop("subi", iv, lb), step), cst(2))


def i64(v):
    return ir.index_cast(v, ir.i64()) if str(v.type) == "index" else v


def cst(n):
    return ir.const_int(n, ir.i64())


def extent(total, tile, size):
    """min(size, total - tile·size) for i64 values (the part of a tile inside `total`)."""
    rem = ir.binop("subi", total, ir.binop("muli", tile, cst(size)))
    return ir.binop("minsi", rem, cst(size))


def ceil_div(a, b: int):
    return ir.binop("ceildivsi", a, cst(b))


def loop(lb, ub, body, step=None):
    """scf.for over i64 bounds and step (default 1); body(iv) builds the body."""
    f = scf.ForOp(ir.index_cast(lb, ir.index()), ir.index_cast(ub, ir.index()),
                  ir.const_index(1) if step is None else ir.index_cast(step, ir.index()))
    with InsertionPoint(f.body):
        body(i64(f.induction_variable))
        scf.YieldOp([])
    return f


def rows_in_tile(first, rows, tile, dim: int):
    """(first block row, row count) of the window [first, first + rows) inside block row
    tile `tile` (a window below the block's first row may straddle tiles)."""
    start = ir.binop("muli", tile, cst(dim))
    lo = ir.binop("maxsi", start, first)
    hi = ir.binop("minsi", ir.binop("addi", start, cst(dim)), ir.binop("addi", first, rows))
    return lo, ir.binop("subi", hi, lo)


def select(cond, a, b):
    return ir.create("arith.select", operands=[cond, a, b], results=[a.type]).result


def fold(name, values):
    """values[0] name values[1] name ... (an arith binop over i64 or i1 Values)."""
    out = values[0]
    for v in values[1:]:
        out = ir.binop(name, out, v)
    return out


def any_of(*conds):
    return fold("ori", conds)


def window_tiles(first, rows, dim: int):
    """(first block row tile, number of row tiles) the window [first, first + rows) touches inside
    the block (a window may start above the block's first row: a negative row offset). Its ends
    are clamped to row 0, so both tiles are unsigned divisions by DIM (shifts), where signed ones
    corrected for a negative dividend (three to ten instructions each, per window: per slice of a
    3-D load). The same tiles as those divisions' except for a window starting DIM or more rows
    above the block, where the truncating division gave a row tile above the block."""
    zero = cst(0)
    first_tile = ir.binop("divui", ir.binop("maxsi", first, zero), cst(dim))
    end = ir.binop("maxsi", ir.binop("addi", first, rows), zero)
    n = ir.binop("subi", ir.binop("divui", ir.binop("addi", end, cst(dim - 1)), cst(dim)), first_tile)
    return first_tile, ir.binop("muli", n, nonempty(rows))


def nonempty(rows):
    """i64 1 if rows > 0, else 0."""
    return flag(ir.cmpi("sgt", rows, cst(0)))


def flag(cond):
    """i64 1 if the i1 `cond` holds, else 0."""
    return ir.create("arith.extui", operands=[cond], results=[ir.i64()]).result


def window_in_tiles(first, rows, dim: int, tiles: tuple[int, int] | None = None):
    """(first row tile, row tiles, in_tile) of the window [first, first + rows) of a block, where
    in_tile(bt) is (first row, rows) of the window in row tile bt. `tiles`: the row tiles
    [t0, t1] the window is known to lie in (a window of a slice of a 3-D load's block at a
    constant slice index lies in its slice's): its first and end tiles are then t0 plus one
    compare with each tile boundary inside the slice, a compile-time row, instead of
    window_tiles' clamps and divisions, per slice and per step (a slice straddling two tiles:
    14-row slices at DIM 16); a window in one tile (t0 = t1) needs neither, nor its rows
    clipped. The same tiles as window_tiles' for a nonempty window."""
    if tiles is None:
        return (*window_tiles(first, rows, dim), lambda bt: rows_in_tile(first, rows, bt, dim))
    t0, t1 = tiles
    if t0 == t1:
        return cst(t0), nonempty(rows), lambda bt: (first, rows)
    end = ir.binop("addi", first, rows)
    bounds = [cst(b * dim) for b in range(t0 + 1, t1 + 1)]
    first_tile = fold("addi", [cst(t0), *(flag(ir.cmpi("sge", first, b)) for b in bounds)])
    end_tile = fold("addi", [cst(t0 + 1), *(flag(ir.cmpi("sgt", end, b)) for b in bounds)])
    n_tiles = ir.binop("muli", ir.binop("subi", end_tile, first_tile), nonempty(rows))
    return first_tile, n_tiles, lambda bt: rows_in_tile(first, rows, bt, dim)


def load_stream(count, body):
    """The mvins of one block copy as a flat loop over t in [0, count), tagged so
    the prefetch pass can issue it in slices (baco.passes.prefetch)."""
    f = loop(cst(0), count, body)
    f.operation.attributes[prefetch.STREAM] = ir.unit()
    return f


def dram_addr_and_stride(view, esize, dim=0):
    """(byte address of element [0,0], stride of dimension `dim` in bytes: the row stride,
    or for a column-major view the column stride) of a strided DRAM view."""
    t = MemRefType(view.type)
    rank = len(t.shape)
    meta = ir.create("memref.extract_strided_metadata", operands=[view],
                     results=[ir.Type.parse(f"memref<{t.element_type}>"), ir.index(),
                              *[ir.index()] * (2 * rank)]).results
    offset, strides = meta[1], list(meta[2 + rank:])
    ptr = ir.create("memref.extract_aligned_pointer_as_index", operands=[view],
                    results=[ir.index()]).result
    addr = ir.binop("addi", i64(ptr), ir.binop("muli", i64(offset), cst(esize)))
    return addr, ir.binop("muli", i64(strides[dim]), cst(esize))


def in_dram(view) -> bool:
    """Whether `view` is a view of a kernel argument (DRAM) through views and casts."""
    owner = view.owner
    while getattr(owner, "name", None) in ("memref.subview", "memref.reinterpret_cast", "memref.cast"):
        owner = owner.operands[0].owner
    return isinstance(owner, Block)


def window_key(view) -> tuple:
    """A local window's offsets, sizes and strides (static ints, else their SSA values), comparable
    with another's; a whole block's is its shape."""
    owner = view.owner
    if owner.name == "memref.alloc":
        return tuple(MemRefType(view.type).shape)
    dyn = iter(list(owner.operands)[1:])
    return tuple(next(dyn) if v == ir.DYN else v for attr in ("static_offsets", "static_sizes", "static_strides")
                 for v in ir.DenseI64ArrayAttr(owner.attributes[attr]))


def unit_inner_stride(view, op):
    layout = str(MemRefType(view.type).layout)
    if "strided" in layout and not layout.replace(" ", "").split("[")[1].split("]")[0].endswith(",1"):
        raise ir.fail("Gemmini's DMA moves contiguous rows: the last dimension must have stride 1 "
                      "(pass a row-major array; integer strides equal to 1 are specialized)", op)


class LinalgToInstGem:
    def __init__(self, config: GemminiConfig, dataflow: str):
        if dataflow not in ("WS", "OS"):
            raise ValueError(f"dataflow must be WS or OS, not {dataflow!r}")
        self.cfg = config
        self.dataflow = dataflow
        self.begin_function()

    def begin_function(self):
        """Fresh per-function state: every table is keyed by ops of one function, which its
        lowering erases; a handle kept for the next function would name freed memory (and an op
        allocated at the same address would find a stale entry)."""
        self.extents = {}      # alloc op -> (rows, cols) i64 Values of the last copy into it
        self.blocks = {}       # alloc op -> Placed
        self.load_slot = {}    # copy/fill op -> config_ld slot (loads of a prefetched loop use one each)
        self.stored_in_loop = {}     # store copy op -> loop whose last iteration does the mvouts
        self.zeroed_in_loop = {}     # zero fill op -> loop whose first iteration overwrites the block
        self.first_write_of_matmul = {}   # matmul op -> that loop
        self.store_of_matmul = {}    # matmul op -> (store copy op, its loop)
        self.read_only_by_store = set()  # matmuls whose accumulator nothing but the fused store reads
        self.added_loads = {}        # acc_add staging alloc -> (its DRAM copy, source view, window view)
        self.overwriting_adds = set()    # acc_add generics that overwrite their freshly zeroed target
        self.zero_under_copy = {}    # DRAM copy -> the block a dropped zero fill was to clear before it
        self.pipelined = set()       # loops whose loads the prefetch pass reorders
        self.array_written = {}      # OS: source acc alloc op -> (scratchpad alloc its dot writes, in_shift, relu)
        self.dead = []

    def placed(self, alloc) -> Placed:
        blk = self.blocks.get(alloc)
        if blk is None:
            blk = self.blocks[alloc] = Placed(alloc, self.cfg.dim)
        return blk

    def run(self, module_op):
        for func in module_op.regions[0].blocks[0].operations:
            func = func.operation
            if func.name == "func.func" and len(func.regions[0].blocks):
                interior.version_interior(func)
                self.lower_func(func)

    def lower_func(self, func):
        self.begin_function()
        entry = func.regions[0].blocks[0]
        if SETS_CONFIG_EX not in func.attributes:
            with InsertionPoint.at_block_begin(entry), func.location:
                instgem.emit("config_ex", dataflow=1 if self.dataflow == "WS" else 0,
                             acc_scale=f32_bits(1.0), a_stride=1, c_stride=1)
        pipelined = [op for op in ir.walk_ops(func) if op.name == "scf.for" and prefetch.pipelinable(op)]
        self.pipelined = {loop_op.operation for loop_op in pipelined}
        interleave = {loop_op: prefetch.distinct_targets(loop_op) for loop_op in pipelined}
        for loop_op in pipelined:
            self.load_slot.update(prefetch.load_slots(loop_op))
        self.find_fused_stores(func)
        self.find_fused_fills(func)
        self.find_array_written(func)
        # one pattern per placed block operation, in one walk (a lowering marks its op dead and
        # builds only before it, so the walk never meets what it built)
        apply_patterns(func, {name: _pattern(lower) for name, lower in (
            ("memref.copy", self.lower_copy), ("linalg.matmul", self.lower_matmul),
            ("linalg.fill", self.lower_fill), ("linalg.map", self.lower_fill),
            ("linalg.generic", self.lower_acc_add))}, WALK)
        for op in reversed(self.dead):
            op.erase()
        erase_unread_epilogues(func)
        # placed buffers and their views are now unused: users last, so one pass erases a view's
        # source too (a use follows its definition in pre-order; these ops hold no regions)
        for op in reversed(ir.walk_ops(func)):
            if op.name in ("memref.subview", "memref.alloc") and all(not list(r.uses) for r in op.results):
                op.erase()
        for loop_op in pipelined:
            prefetch.pipeline_loads(loop_op, interleave[loop_op])

    # ---- data movement -------------------------------------------------------
    def lower_fill(self, op):
        alloc = alloc_of(op.operands[-1] if op.name == "linalg.fill" else op.operands[0])
        if alloc is not None and self.placed(alloc).space == "pooled":
            self.dead.append(op)        # the max's identity: the pooled mvout computes the max
            return
        if not ir.is_zero_fill(op):
            raise ir.fail("only zero-initialised blocks are supported on Gemmini", op)
        if alloc is None:
            raise ir.fail("fill of a non-local buffer", op)
        blk = self.placed(alloc)
        if blk.space == "acc_add" or alloc in self.array_written:
            self.dead.append(op)        # zero padding of a block added by DMA; a sum kept in the array
            return
        loop_op = self.zeroed_in_loop.get(op)
        first_add = self.first_added_load(op, alloc)
        if first_add is not None:       # the added load overwrites its window; zero only the rest
            self.overwriting_adds.add(first_add)
            _, _, window, _ = self.added_load(first_add)
            if self.stored_only_within(alloc, op, window):
                self.dead.append(op)    # nothing reads the rest: no zeros
                return
            first, rows, cols = self.local_window(window)
            d = cst(self.cfg.dim)

            def uncovered(r, c):        # tile (r, c) is not wholly inside the window
                top, left = ir.binop("muli", r, d), ir.binop("muli", c, d)
                return any_of(ir.cmpi("slt", top, first),
                              ir.cmpi("sgt", ir.binop("addi", top, d), ir.binop("addi", first, rows)),
                              ir.cmpi("sgt", ir.binop("addi", left, d), cols))
            self.zero_block(blk, 0, only=uncovered)
        elif (copy := self.first_overwriting_copy(op, alloc)) is not None:
            # the copy overwrites its window (and zeroes the rows above it): its lowering zeroes
            # the block first unless the window covers it, where the window's extent is computed
            self.zero_under_copy[copy] = blk
        elif loop_op is None:
            self.zero_block(blk, self.load_slot.get(op, 0))
        else:       # the loop's first iteration overwrites it; zeroed only if the loop runs no iteration
            lb, ub = list(loop_op.operands)[:2]
            with InsertionPoint(loop_op):     # (nothing touches the block in between)
                prefetch.when(ir.cmpi("sge", lb, ub), lambda: self.zero_block(blk, 0))
        self.dead.append(op)

    def zero_block(self, blk: Placed, slot: int, only=None):
        """mvins from DRAM address 0 (zeros) over the block, or over the DIM×DIM tiles
        (row tile, column tile) for which only(row tile, column tile) is true."""
        d = self.cfg.dim
        wide = (self.cfg.max_block_len_acc if blk.space == "acc" else self.cfg.max_block_len) * d
        chunk = d if only else wide
        rows_t = -(-blk.shape[0] // d)
        chunks = -(-blk.shape[1] // chunk)
        if only is None:    # the slot needs its block stride (one-tile zero moves read no slot state)
            instgem.emit("config_ld", stride=chunk * MLIR_ELEMENTS[blk.elem].bytes, scale=f32_bits(1.0),
                         block_stride=blk.col_tile_stride, pixel_repeats=1, state_id=slot)

        def body(t):    # t runs over row tiles (one chunk: no division), then chunks
            if chunks == 1:
                r, c = t, cst(0)
            else:
                r, c = ir.binop("remsi", t, cst(rows_t)), ir.binop("divsi", t, cst(rows_t))
            cols = extent(cst(blk.shape[1]), c, chunk)
            local = blk.tile_addr(r, ir.binop("muli", c, cst(chunk // d)), local_addr(0, acc=blk.space == "acc"))

            def emit():
                instgem.emit(MVIN_OF_SLOT[slot], dram_addr=0, local_addr=local, cols=cols, rows=d)
            if only is None:
                emit()
            else:
                prefetch.when(only(r, c), emit)
        if only is None:
            load_stream(cst(rows_t * chunks), body)
        else:
            loop(cst(0), cst(rows_t * chunks), body)

    def lower_copy(self, op):
        src, dst = op.operands
        src_alloc, dst_alloc = alloc_of(src), alloc_of(dst)
        if dst_alloc is not None and src_alloc is None and self.placed(dst_alloc).space == "acc_add":
            self.added_loads[dst_alloc] = (op, src, dst)     # moved in by the gemmini.acc_add generic
        elif dst_alloc is not None and src_alloc is None:
            self.lower_mvin(op, src, dst, self.placed(dst_alloc))
        elif src_alloc is not None and dst_alloc is None:
            self.lower_mvout(op, src, dst, self.placed(src_alloc))
        else:
            raise ir.fail("copies between two local blocks are not supported on Gemmini", op)
        self.dead.append(op)

    def window_extent(self, view):
        """Runtime (rows, cols) of a subview as i64 values."""
        sizes = list(view.owner.operands)[3:5] if view.owner.name == "memref.subview" and \
            len(view.owner.operands) >= 5 else None
        if sizes is None:
            t = MemRefType(view.type)
            return cst(t.shape[0]), cst(t.shape[1])
        return i64(sizes[0]), i64(sizes[1])

    def local_window(self, view):
        """(first row, rows, cols) of a local subview as i64 values (or the whole block). A
        window may start below the block's first row (a negative row offset under
        boundary_check); a column offset is not addressable in a scratchpad row. A window
        of one slice of a 3-D load's block, [slice, row, 0], counts rows of the flattened block."""
        owner = view.owner
        if owner.name == "memref.alloc":
            t = MemRefType(view.type)
            return cst(0), cst(t.shape[0]), cst(t.shape[1])
        static_sizes = list(ir.DenseI64ArrayAttr(owner.attributes["static_sizes"]))
        static_offsets = list(ir.DenseI64ArrayAttr(owner.attributes["static_offsets"]))
        dyn = iter(list(owner.operands)[1:])
        offsets = [next(dyn) if o == ir.DYN else o for o in static_offsets]
        sizes = [next(dyn) if s == ir.DYN else s for s in static_sizes]
        if not (isinstance(offsets[-1], int) and offsets[-1] == 0):
            raise ir.fail("local block windows must start at the block's first column", owner)
        values = [cst(v) if isinstance(v, int) else i64(v) for v in (*offsets[:-1], *sizes)]
        if len(offsets) == 3:       # [slice, row] of a (slices, rows, cols) block, size [1, rows, cols]
            first = ir.binop("addi", self.slice_start(view), values[1])
            return first, values[3], values[4]
        return tuple(values)

    @staticmethod
    def slice_start(view):
        """First row (i64) of the slice a window [slice, row, 0] of a 3-D load's block is in."""
        owner = view.owner
        rows_per_slice = MemRefType(owner.operands[0].type).shape[1]
        index = list(ir.DenseI64ArrayAttr(owner.attributes["static_offsets"]))[0]
        index = cst(index) if index != ir.DYN else i64(owner.operands[1])
        return ir.binop("muli", index, cst(rows_per_slice))

    def slice_tiles(self, view, blk: Placed) -> tuple[int, int] | None:
        """The row tiles [t0, t1] of `blk` a window [slice, row, 0] of a 3-D load's block lies in
        when its slice index is a constant: its slice's (the window is inside its slice: a subview
        is in bounds), else None."""
        if not blk.slice_rows or blk.transposed or view.owner.name != "memref.subview":
            return None
        index = list(ir.DenseI64ArrayAttr(view.owner.attributes["static_offsets"]))[0]
        if index == ir.DYN:
            return None
        top, bottom = index * blk.slice_rows, (index + 1) * blk.slice_rows - 1
        return top // self.cfg.dim, bottom // self.cfg.dim

    def lower_mvin(self, op, src, dst, blk: Placed, elem=None, scale=None, accumulate=False):
        """mvins of the DRAM view `src` into block `blk` over the window `dst` (a view of `blk`,
        or of a same-shaped staging block). An int8 `elem` into the accumulator is widened
        (shrink) and multiplied by `scale` (i64 float bits; the mvin scale, RNE, saturated to
        int8); `accumulate` adds to the accumulator instead of overwriting it."""
        if not blk.transposed:
            unit_inner_stride(src, op)
        cfg = self.cfg
        acc = blk.space == "acc"
        elem = elem or blk.elem
        esize = MLIR_ELEMENTS[elem].bytes
        shrink = int(acc and elem == "i8")
        first, rows, cols = self.local_window(dst)
        # the matmul masks to the filled extent; rows above `first` (a negative row offset) are zeroed.
        # A slice of a 3-D load is a window in the middle of its block: its other rows are zeroed.
        self.extents[blk.alloc] = (cst(blk.shape[0]) if blk.slice_rows else ir.binop("addi", first, rows), cols)
        addr, row_bytes = dram_addr_and_stride(src, esize, 1 if blk.transposed else 0)
        if blk.transposed:      # DRAM rows are the block's columns: move in the transpose
            # its rows are scratchpad columns: a window starting below the block's first row (a
            # negative row offset under boundary_check) is not addressable, a located run-time error
            prefetch.when(ir.cmpi("sgt", first, cst(0)), lambda: ir.call_boundary_error(op))
            first, rows, cols = cst(0), cols, rows
        max_cols = (cfg.max_block_len_acc if acc and not shrink else cfg.max_block_len) * cfg.dim
        slot = self.load_slot.get(op, 0)
        if op in self.zero_under_copy:      # the copy writes rows [0, first + rows) x [0, cols)
            # the block zeroed unless that is all of it (the fill's own stream, cheap for the core)
            prefetch.when(any_of(ir.cmpi("slt", ir.binop("addi", first, rows), cst(blk.shape[0])),
                                 ir.cmpi("slt", cols, cst(blk.shape[1]))), lambda: self.zero_block(blk, slot))
        instgem.emit("config_ld", stride=row_bytes, scale=f32_bits(1.0) if scale is None else scale, shrink=shrink,
                     block_stride=blk.col_tile_stride, pixel_repeats=1, state_id=slot)
        flags = local_addr(0, acc=acc, accumulate=accumulate)
        # t runs over the block's chunks (a compile-time count) in each row tile: its row tile and
        # chunk are a division by a constant (a shift for a power of two), where the window's own
        # chunk count would cost a run-time division (and its zero guard) per mvin; the chunks past
        # a narrower window's issue nothing
        n_chunks = ceil_div(cols, max_cols)
        block_chunks = -(-blk.shape[1] // max_cols)

        def tile_and_chunk(first_tile, t, emit):
            if block_chunks == 1:
                return emit(ir.binop("addi", first_tile, t), cst(0))
            cc = ir.binop("remui", t, cst(block_chunks))    # t >= 0: a slice of the stream's [0, count)
            bt = ir.binop("addi", first_tile, ir.binop("divui", t, cst(block_chunks)))
            prefetch.when(ir.cmpi("slt", cc, n_chunks), lambda: emit(bt, cc))

        def move(bt, cc):    # the window's rows in block row tile `bt`, column chunk `cc`
            lo, n_rows = in_tile(bt)
            dram = ir.binop("addi", addr, ir.binop("muli", ir.binop("subi", lo, first), row_bytes))
            dram = ir.binop("addi", dram, ir.binop("muli", cc, cst(max_cols * esize)))
            local = blk.tile_addr(bt, ir.binop("muli", cc, cst(max_cols // cfg.dim)), flags)
            local = ir.binop("addi", local, ir.binop("subi", lo, ir.binop("muli", bt, cst(cfg.dim))))
            instgem.emit(MVIN_OF_SLOT[slot], dram_addr=dram, local_addr=local, cols=extent(cols, cc, max_cols),
                         rows=n_rows)
        tiles = self.slice_tiles(dst, blk)
        first_tile, n_tiles, in_tile = window_in_tiles(first, rows, cfg.dim, tiles)
        load_stream(ir.binop("muli", n_tiles, cst(block_chunks)), lambda t: tile_and_chunk(first_tile, t, move))
        if accumulate:      # adding the zero rows above `first` changes nothing
            return

        def zero_rows(lo, hi):      # DRAM address 0 makes mvin write zeros
            lo_tile, n_zero_tiles, zero_in_tile = window_in_tiles(lo, ir.binop("subi", hi, lo), cfg.dim, tiles)

            def zero(bt, cc):
                row, n_rows = zero_in_tile(bt)
                local = blk.tile_addr(bt, ir.binop("muli", cc, cst(max_cols // cfg.dim)), flags)
                local = ir.binop("addi", local, ir.binop("subi", row, ir.binop("muli", bt, cst(cfg.dim))))
                instgem.emit(MVIN_OF_SLOT[slot], dram_addr=0, local_addr=local, cols=extent(cols, cc, max_cols),
                             rows=n_rows)
            load_stream(ir.binop("muli", n_zero_tiles, cst(block_chunks)), lambda t: tile_and_chunk(lo_tile, t, zero))
        if blk.slice_rows:          # the slice's rows before and after the window
            lo = self.slice_start(dst)
            zero_rows(lo, first)
            zero_rows(ir.binop("addi", first, rows), ir.binop("addi", lo, cst(blk.slice_rows)))
        else:                       # rows above `first`
            zero_rows(cst(0), first)

    def first_added_load(self, fill, alloc):
        """The gemmini.acc_add generic adding a load into `alloc` if it is the first op after
        `fill` (in its block) to touch `alloc`, and its load's DRAM copy is already lowered."""
        ops = [o.operation for o in fill.block.operations]
        for op in ops[ops.index(fill) + 1:]:
            if any(alloc_of(v) is not None and alloc_of(v).operation == alloc.operation
                   for o in [op, *ir.walk_ops(op)] for v in o.operands):
                if "gemmini.acc_add" in op.attributes and alloc_of(op.operands[1]).operation == alloc.operation \
                        and self.added_load(op) is not None:
                    return op
                return None
        return None

    def stored_only_within(self, alloc, fill, window) -> bool:
        """Whether every read of `alloc` (an accumulator block zero-filled by `fill`) is a store of
        `window` (the same offsets and sizes, static or the same SSA values): every other use
        writes it element by element (its added loads, products accumulated into it) or is an
        epilogue whose block is itself only stored within `window`. The fill's zeros outside the
        window are then never read."""
        key = window_key(window)

        def stored(value, writer) -> bool:
            for use in value.uses:
                op = use.owner
                if op.operation == writer.operation:
                    continue
                if op.name == "memref.subview":
                    if window_key(op.result) != key or not all(
                            u.owner.name == "memref.copy" and u.operand_number == 0
                            and alloc_of(u.owner.operands[1]) is None for u in op.result.uses):
                        return False
                elif "gemmini.acc_add" in op.attributes and use.operand_number == 1:
                    continue        # an added load: writes only
                elif op.name == "linalg.matmul" and use.operand_number == 2:
                    continue        # C += A·B: C[i, j] reads only C[i, j], so nothing outside moves in
                elif "gemmini.epilogue" in op.attributes and use.operand_number == 0 \
                        and op.operands[1].owner.name == "memref.alloc":
                    if not stored(op.operands[1], op):
                        return False
                else:
                    return False
            return True
        return stored(alloc.result, fill)

    def first_overwriting_copy(self, fill, alloc):
        """The DRAM copy into a window of `alloc` (a 2-D block, not transposed, filled outside a
        pipelined loop, whose prefetch would move the copy's mvins away from the fill) if it is the
        first op after `fill` (in its block) to touch `alloc`: it overwrites its window and zeroes
        the block's rows above it (lower_mvin)."""
        blk = self.placed(alloc)
        if blk.slice_rows or blk.transposed or fill.parent.operation in self.pipelined:
            return None
        ops = [o.operation for o in fill.block.operations]
        for op in ops[ops.index(fill) + 1:]:
            if prefetch.is_pure(op):        # views and arithmetic write nothing
                continue
            if any(alloc_of(v) is not None and alloc_of(v).operation == alloc.operation
                   for o in [op, *ir.walk_ops(op)] for v in o.operands):
                if op.name == "memref.copy" and alloc_of(op.operands[0]) is None and \
                        alloc_of(op.operands[1]).operation == alloc.operation:
                    return op
                return None
        return None

    def added_load(self, op):
        """(DRAM copy, DRAM view, window, element type) of the block a gemmini.acc_add generic adds:
        a staging block filled by an already-seen DRAM copy (a window the DMA zero-pads), or, the
        form a load takes when its window is the whole block at constant offsets (nothing to pad,
        so bufferization reads the DRAM view in place), the DRAM view itself over the whole target
        (the generic stands for its copy). None if the added block is neither."""
        added = op.operands[0]
        staging = alloc_of(added)
        if staging is not None:
            if staging not in self.added_loads:
                return None
            copy, src, window = self.added_loads[staging]
            return copy, src, window, self.placed(staging).elem
        if not (str(added.type).startswith("memref<") and MemRefType(added.type).rank == 2 and in_dram(added)):
            return None
        return op, added, op.operands[1], str(MemRefType(added.type).element_type)

    def lower_acc_add(self, op):
        """A gemmini.acc_add generic (target + loaded block): the load's mvins go straight into
        the target accumulator block with the accumulate bit (int8 widened and mvin-scaled)."""
        if "gemmini.acc_add" not in op.attributes:
            return
        target, added = alloc_of(op.operands[1]), self.added_load(op)
        if added is None or target is None or self.placed(target).space != "acc":
            raise ir.fail("a block added to an accumulator block must be loaded from DRAM", op)
        copy, src, window, elem = added
        scale = None
        if str(ir.Attribute(op.attributes["gemmini.acc_add"]["scaled"])) == "true":
            if not self.cfg.mvin_scale:
                raise ir.fail("this Gemmini has no mvin scale (mvin_scale = False): an int8 block "
                              "cannot be scaled on its way into the accumulator", op)
        if ir.scale_operand(op) is not None:
            bits = ir.create("arith.bitcast", operands=[ir.scale_operand(op)],
                             results=[ir.IntegerType.get_signless(32)]).result
            scale = ir.create("arith.extui", operands=[bits], results=[ir.i64()]).result
        self.lower_mvin(copy, src, window, self.placed(target), elem=elem, scale=scale,
                        accumulate=op not in self.overwriting_adds)
        self.dead.append(op)

    def lower_mvout(self, op, src, dst, blk: Placed):
        if blk.space == "pooled":
            self.store_pooled(op, src, dst, blk)
            return
        loop_op = self.stored_in_loop.get(op)
        if loop_op is None:
            self.store_all(op, src, dst, blk)
        else:       # the loop's last iteration stored it; here only if the loop ran no iteration
            lb, ub = list(loop_op.operands)[:2]
            prefetch.when(ir.cmpi("sge", lb, ub), lambda: self.store_all(op, src, dst, blk))

    def store_all(self, op, src, dst, blk):
        emit_tile, n_rt, n_ct, _ = self.store_plan(op, src, dst, blk)

        def tile(t):
            emit_tile(ir.binop("remsi", t, n_rt), ir.binop("divsi", t, n_rt))
        loop(cst(0), ir.binop("muli", n_rt, n_ct), tile)

    def store_plan(self, op, src, dst, blk: Placed):
        """config_st for storing local block `blk` (through `src`, a corner view) to the
        DRAM view `dst`; returns (emit_tile(rt, ct) emitting one mvout of the window's row tile rt,
        the window's row tiles, column tiles, and the block row tile the window's first row is in)."""
        unit_inner_stride(dst, op)
        cfg = self.cfg
        first, rows, cols = self.local_window(src)
        out_elem = str(MemRefType(dst.type).element_type)
        addr, row_bytes = dram_addr_and_stride(dst, MLIR_ELEMENTS[out_elem].bytes)
        relu, scale = 0, cst(f32_bits(1.0))
        if blk.space == "acc":
            flags = local_addr(0, acc=True, read_full=(out_elem == "i32"))
        else:
            epi = self.epilogue_writing(blk.alloc)
            if epi is not None:
                relu, scale, source = epi
                blk = self.placed(source)
                flags = local_addr(0, acc=True)
            else:
                flags = 0
        instgem.emit("config_st", stride=row_bytes, activation=relu, acc_scale=scale)
        esize = MLIR_ELEMENTS[out_elem].bytes

        first_tile, n_tiles = window_tiles(first, rows, cfg.dim)

        def emit_tile(rt, ct):      # the window's rows in block row tile first_tile + rt, column tile ct
            bt = ir.binop("addi", first_tile, rt)
            lo, n_rows = rows_in_tile(first, rows, bt, cfg.dim)
            dram = ir.binop("addi", addr, ir.binop("muli", ir.binop("subi", lo, first), row_bytes))
            dram = ir.binop("addi", dram, ir.binop("muli", ct, cst(cfg.dim * esize)))
            local = ir.binop("addi", blk.tile_addr(bt, ct, flags), ir.binop("subi", lo, ir.binop("muli", bt, cst(cfg.dim))))
            instgem.emit("mvout", dram_addr=dram, local_addr=local, cols=extent(cols, ct, cfg.dim), rows=n_rows)
        return emit_tile, n_tiles, ceil_div(cols, cfg.dim), first_tile

    def store_pooled(self, op, src, dst, blk: Placed):
        """The pooled block `blk` (a gemmini.max_pool generic over an accumulator block's int8
        epilogue) stored to the DRAM view `dst`: config_st with the pooling fields, then one
        pooled mvout per DIM columns, each reading the whole orows x ocols image from
        consecutive accumulator rows (its column of tiles) and writing the whole pooled rows
        inside the window (pooled pixel (pr, pc) to DRAM row pr*pocols + pc)."""
        unit_inner_stride(dst, op)
        cfg = self.cfg
        pool = next(u.owner for u in blk.alloc.result.uses if u.owner.name == "linalg.generic"
                    and "gemmini.max_pool" in u.owner.attributes)
        attrs = pool.attributes["gemmini.max_pool"]
        _, cols = list(ir.DenseI64ArrayAttr(attrs["image"]))
        upad, lpad = list(ir.DenseI64ArrayAttr(attrs["padding"]))
        k, s = (IntegerAttr(attrs[n]).value for n in ("kernel", "stride"))
        pocols = (cols + 2 * lpad - k) // s + 1
        relu, scale, source = self.epilogue_writing(alloc_of(pool.operands[0]))
        acc = self.placed(source)       # column of tiles after column of tiles (placement)
        if pool not in self.dead:
            self.dead.append(pool)
        lo, hi = i64(pool.operands[1]), i64(pool.operands[2])     # the valid rows: the image Gemmini reads
        _, n_rows, n_cols = self.local_window(src)
        addr, row_bytes = dram_addr_and_stride(dst, MLIR_ELEMENTS["i8"].bytes)
        porows = ir.binop("divsi", n_rows, cst(pocols))      # the whole pooled rows inside the window
        instgem.emit("config_st", stride=row_bytes, activation=relu, acc_scale=scale, pool_stride=s,
                     pool_size=k, upad=ir.binop("addi", lo, cst(upad)), lpad=lpad, pool_out_dim=pocols,
                     porows=porows, pocols=pocols, orows=ir.binop("maxsi", ir.binop("subi", hi, lo), cst(0)),
                     ocols=cols)
        first_pixel = ir.binop("muli", lo, cst(cols))

        def column_tile(ct):
            instgem.emit("mvout", dram_addr=ir.binop("addi", addr, ir.binop("muli", ct, cst(cfg.dim))),
                         local_addr=ir.binop("addi", acc.tile_addr(cst(0), ct, local_addr(0, acc=True)), first_pixel),
                         cols=extent(n_cols, ct, cfg.dim), rows=0)
        prefetch.when(ir.cmpi("sgt", porows, cst(0)), lambda: loop(cst(0), ceil_div(n_cols, cfg.dim), column_tile))

    def find_fused_fills(self, func):
        """WS: an accumulator zeroed right before the loop whose one matmul accumulates
        into it is not zeroed by DMA: the loop's first iteration writes its k = 0
        products over whole tiles (masked rows/columns read as zeros) and zeroes only
        the tiles that iteration does not reach."""
        for loop_op, matmul, acc in self.ws_accumulating_loops(func):
            fill = zeroed_before(loop_op, acc.operation)
            if fill is not None:
                self.zeroed_in_loop[fill] = loop_op
                self.first_write_of_matmul[matmul] = loop_op

    def find_fused_stores(self, func):
        """WS: a block accumulated by the one matmul of a loop and stored right after
        it is stored column by column in the loop's last iteration, each column as
        soon as its last computes are issued, so the stores overlap the remaining
        columns' work. The store's address arithmetic moves above the loop."""
        for loop_op, matmul, acc in self.ws_accumulating_loops(func):
            store = stored_after(loop_op, acc.operation)
            if store is not None and hoist_above(loop_op, [store], fused=True):
                self.stored_in_loop[store] = loop_op
                self.store_of_matmul[matmul] = (store, loop_op)
                if read_only_by(func, acc.operation, matmul, store):
                    self.read_only_by_store.add(matmul)

    def find_array_written(self, func):
        """Scratchpad blocks an OS dot writes through the array's shift/saturate/ReLU
        (placement's gemmini.array_written): their source accumulator block is never
        zeroed, written or read, and the epilogue generic is the dot's C write."""
        for op in ir.walk_ops(func):
            if op.name == "memref.alloc" and "gemmini.array_written" in op.attributes:
                shift, relu, gen, source = array_written(op)
                self.array_written[source] = (op, shift, int(relu))
                self.dead.append(gen)

    def ws_accumulating_loops(self, func):
        """(loop, its one matmul, the accumulator allocated outside it) of every WS loop
        whose single matmul accumulates into a block that lives across the loop."""
        if self.dataflow != "WS":
            return
        for loop_op in [op for op in ir.walk_ops(func) if op.name == "scf.for"]:
            matmuls = [op for op in prefetch.body_ops(loop_op) if op.name == "linalg.matmul"]
            if len(matmuls) != 1:
                continue
            acc = alloc_of(matmuls[0].operands[2])
            if acc is not None and acc.operation.parent.operation != loop_op:
                yield loop_op, matmuls[0], acc

    def epilogue_writing(self, alloc):
        """(relu, scale bits i64, source acc alloc) if a gemmini.epilogue generic fills `alloc`."""
        for use in alloc.result.uses:
            gen = use.owner
            if gen.name == "linalg.generic" and "gemmini.epilogue" in gen.attributes:
                attrs = gen.attributes["gemmini.epilogue"]
                relu = int(str(ir.Attribute(attrs["relu"])) == "true")
                scale = cst(f32_bits(1.0))
                if ir.scale_operand(gen) is not None:
                    bits = ir.create("arith.bitcast", operands=[ir.scale_operand(gen)],
                                     results=[ir.IntegerType.get_signless(32)]).result
                    scale = ir.create("arith.extui", operands=[bits], results=[ir.i64()]).result
                source = alloc_of(gen.operands[0])
                if source is None or self.placed(source).space != "acc":
                    raise ir.fail("scale/relu/convert apply to accumulator blocks", gen)
                if gen not in self.dead:
                    self.dead.append(gen)
                return relu, scale, source
        return None

    # ---- compute ---------------------------------------------------------------
    def operand(self, value, op):
        alloc = alloc_of(value)
        if alloc is None:
            raise ir.fail("dot operands must be loaded blocks", op)
        blk = self.placed(alloc)
        extents = self.extents.get(alloc)
        if extents is None:
            return blk, cst(blk.shape[0]), cst(blk.shape[1])
        # a window never extends past its block (an empty one issues nothing): the clamp bounds the
        # tile counts and addresses, so the packing (instgem_to_llvm.value_range) needs no masks
        rows, cols = (ir.binop("minsi", ir.binop("maxsi", v, cst(0)), cst(n))
                      for v, n in zip(extents, blk.logical_shape))
        return blk, rows, cols

    def accumulator_read(self, A, op, b_transpose=0):
        """(A's tiles, address flags) for the dot: an "acc_read" A is its source
        accumulator block read as int8 through config_ex's acc_scale and activation
        (the scaled read path; Gemmini cannot move accumulator rows to the scratchpad)."""
        if A.space != "acc_read":
            return A, 0
        if not self.cfg.acc_read_operands:
            raise ir.fail("this dot reads an earlier dot's accumulator as its A operand, and this Gemmini's "
                          "execute unit cannot read the accumulator (GemminiConfig.acc_read_operands is off)", op)
        relu, scale, source = self.epilogue_writing(A.alloc)
        instgem.emit("config_ex", dataflow=1 if self.dataflow == "WS" else 0, activation=relu,
                     acc_scale=scale, a_stride=1, c_stride=1, b_transpose=b_transpose)
        return self.placed(source), local_addr(0, acc=True)

    def lower_matmul(self, op):
        A, B, C, extents, written = self.dot_operands(op)
        transposes = self.transpose_config(A, B, op)
        A, a_flags = self.accumulator_read(A, op, int(B.transposed))
        if self.dataflow == "WS":
            WsDotNest(self, op, A, B, C, extents, a_flags).emit()
        else:
            outer = OsDotNest(self, op, A, B, C, extents, a_flags).emit(written)
            outer.operation.attributes[prefetch.COMPUTE] = ir.unit()
        if transposes or written:     # back to untransposed operands, no shift or ReLU for the other dots
            instgem.emit("config_ex", dataflow=1 if self.dataflow == "WS" else 0,
                         acc_scale=f32_bits(1.0), a_stride=1, c_stride=1)
        self.dead.append(op)

    def dot_operands(self, op):
        """(A, B, C placed, (a_rows, a_cols, b_rows, b_cols) runtime extents, whether C is an
        OS dot's array-written scratchpad block): the dot's operands, checked, with the
        config_ex of an array-written C."""
        a, b, c = op.operands
        A, a_rows, a_cols = self.operand(a, op)
        B, b_rows, b_cols = self.operand(b, op)
        C = self.placed(alloc_of(c))
        written = self.array_written.get(C.alloc)
        if written is not None:     # OS: the last K step writes the shifted, saturated, ReLU'd sum as int8
            target, shift, relu = written
            C = self.placed(target)
            instgem.emit("config_ex", dataflow=0, activation=relu, in_shift=shift, acc_scale=f32_bits(1.0),
                         a_stride=1, c_stride=1)
        if B.space == "acc_read":
            raise ir.fail("only a dot's first operand may be read from the accumulator "
                          "(scaled int8 A; Gemmini preloads B from the scratchpad)", op)
        if A.space not in ("spad", "acc_read") or B.space != "spad" or C.space != ("spad" if written else "acc"):
            raise ir.fail("dot needs int8 scratchpad operands and an int32 accumulator", op)
        return A, B, C, (a_rows, a_cols, b_rows, b_cols), written is not None

    def transpose_config(self, A, B, op):
        """Sets config_ex's transpose bits for a dot with a transposed (column-major) operand,
        where the dataflow allows it (one transposer per array: WS transposes A or B, not both;
        OS transposes A, or both, not B alone). Returns whether it did."""
        a_t, b_t = int(A.transposed), int(B.transposed)
        if not (a_t or b_t):
            return False
        if self.dataflow == "WS" and a_t and b_t:
            raise ir.fail("weight-stationary Gemmini transposes A or B, not both (one transposer per array): "
                          "load one of them row-major, or use dataflow='OS'", op)
        if self.dataflow == "OS" and b_t and not a_t:
            raise ir.fail("output-stationary Gemmini cannot transpose B alone (its transposer feeds A): "
                          "load B row-major, or use dataflow='WS'", op)
        if A.space != "acc_read":
            instgem.emit("config_ex", dataflow=1 if self.dataflow == "WS" else 0, acc_scale=f32_bits(1.0),
                         a_stride=1, c_stride=1, a_transpose=a_t, b_transpose=b_t)
        return True


class DotNest:
    """The preload/compute nest of one linalg.matmul on placed blocks, in DIM×DIM tiles masked
    to the operands' runtime extents (a_rows × a_cols times b_rows × b_cols)."""

    def __init__(self, lowering: LinalgToInstGem, op, A: Placed, B: Placed, C: Placed, extents, a_flags):
        self.lowering, self.op, self.A, self.B, self.C, self.a_flags = lowering, op, A, B, C, a_flags
        self.a_rows, self.a_cols, self.b_rows, self.b_cols = extents
        self.d = d = lowering.cfg.dim
        self.n_i = ceil_div(self.a_rows, d)
        self.n_j = ceil_div(self.b_cols, d)
        self.n_k = ceil_div(ir.binop("minsi", self.a_cols, self.b_rows), d)
        self.acc_flags = local_addr(0, acc=True, accumulate=True)
        self.garbage = cst(GARBAGE_ADDR)
        self.zero = cst(0)

    # A transposed block is stored as its transpose; the rows/cols fields describe each
    # operand tile as fed to the array (after the transpose), as the RTL and libgemmini read them
    def a_tile(self, i, k):
        return self.A.tile_addr(k, i, self.a_flags) if self.A.transposed else self.A.tile_addr(i, k, self.a_flags)

    def b_tile(self, k, j):
        return self.B.tile_addr(j, k) if self.B.transposed else self.B.tile_addr(k, j)

    def nonempty(self, n, guard):
        """n, or 0 to skip the whole nest when another extent (guard) is 0."""
        return ir.select(ir.cmpi("sgt", guard, self.zero), n, self.zero)


class ColumnStores:
    """A fused store's work in WS column j (WsDotNest): the previous column's row tiles, a
    slice of them per k step, in the last iteration (prev, store_prev, nest.per_k); and with no
    next column to hide behind, the last column's own rows after its last k step (store_own),
    issued in k step k_own (-1 in every other column: one compare per k step)."""

    def __init__(self, nest: WsDotNest, j):
        zero, n_ct = nest.zero, nest.n_ct
        self.prev = ir.binop("subi", j, cst(1))
        self.store_prev = ir.binop("andi", nest.last_iteration, ir.binop(
            "andi", ir.cmpi("sge", self.prev, zero), ir.cmpi("slt", self.prev, n_ct)))
        self.store_own = ir.binop("andi", nest.last_iteration, ir.binop(
            "andi", ir.cmpi("eq", j, ir.binop("subi", nest.n_cols_run, cst(1))), ir.cmpi("slt", j, n_ct)))
        self.k_own = select(self.store_own, ir.binop("subi", nest.n_k, cst(1)), cst(-1))


class WsDotNest(DotNest):
    """Weight-stationary: j outer, so a column of C is final after its k loop, and each B
    tile is preloaded once per (k, j) and reused over the row tiles i. With a fused store
    (find_fused_stores) the loop's last iteration stores column j-1 while column j computes,
    a slice of its row tiles per k step. In the first iteration of a loop that first writes
    C (find_fused_fills) the k = 0 products overwrite instead of accumulating. The iterations
    in between run a second copy of the nest without either (scf.if on first or last), so
    the CPU issues their commands without those compares and with fewer values to keep; with
    both, a first iteration that is not also the last runs a third copy, without the stores
    (12.62 RISC-V instructions a command instead of 13.81 for 128x256x256 at 64/128/64)."""

    def emit(self):
        low, op = self.lowering, self.op
        self.fused = low.store_of_matmul.get(op)
        if self.fused is not None:
            store, loop_op = self.fused
            with InsertionPoint(loop_op):
                self.emit_tile, self.n_rt, self.n_ct, self.first_rt = low.store_plan(
                    store, *store.operands, low.placed(alloc_of(store.operands[0])))
            _, ub, step = list(loop_op.operands)[:3]
            iv = loop_op.regions[0].blocks[0].arguments[0]
            self.last_iteration = ir.cmpi("sge", ir.binop("addi", iv, step), ub)
        self.first_loop = low.first_write_of_matmul.get(op)
        if self.first_loop is not None:
            iv = self.first_loop.regions[0].blocks[0].arguments[0]
            self.first_iteration = ir.cmpi("eq", iv, self.first_loop.operands[0])
        self.n_cols_run = self.nonempty(self.n_j, self.n_i)
        self.column_bounds = (ir.const_index(0), ir.index_cast(self.n_cols_run, ir.index()), ir.const_index(1))
        self.nest_invariants()
        if self.fused is None and self.first_loop is None:
            return self.columns()
        # the loop's iterations between its first and its last neither overwrite C nor store
        # it: their nest is a copy without those steps' compares and their live values
        ends = [c for c, used in ((getattr(self, "first_iteration", None), self.first_loop),
                                  (getattr(self, "last_iteration", None), self.fused)) if used is not None]
        if_op = scf.IfOp(any_of(*ends), has_else=True)
        with InsertionPoint(if_op.then_block):
            if len(ends) == 2:
                # the first iteration, unless it is also the last, runs a copy without the stores
                last = scf.IfOp(self.last_iteration, has_else=True)
                with InsertionPoint(last.then_block):
                    self.end_iteration_copy()
                    scf.YieldOp([])
                with InsertionPoint(last.else_block):
                    self.fused = None
                    self.end_iteration_copy()
                    scf.YieldOp([])
            else:
                self.end_iteration_copy()
            scf.YieldOp([])
        with InsertionPoint(if_op.else_block):
            self.fused = self.first_loop = None
            self.columns()
            scf.YieldOp([])
        return if_op

    def end_iteration_copy(self):
        """The nest's copy for the first or last iteration: its invariants, its columns, then
        the first iteration's zeros and the last's columns the nest did not reach."""
        self.end_iteration_invariants()
        self.columns()
        if self.first_loop is not None:
            self.zero_unreached()
        if self.fused is not None:      # columns the nest did not reach
            prefetch.when(self.last_iteration, self.store_unreached_columns)

    def columns(self):
        """The column loop, tagged as a compute nest (the prefetch pass spreads the next
        iteration's loads through its iterations; the copies share their bounds)."""
        outer = scf.ForOp(*self.column_bounds)
        with InsertionPoint(outer.body):
            self.column(i64(outer.induction_variable))
            scf.YieldOp([])
        outer.operation.attributes[prefetch.COMPUTE] = ir.unit()
        return outer

    def nest_invariants(self):
        """What the column, k and row-tile loops read but do not change, computed once before
        the nest (the CPU issues a command in fewer instructions when the loops only add)."""
        d, n_k = self.d, self.n_k
        # the full K tiles (DIM), then the ragged one; None: one K tile, one copy of the k loop
        self.n_k_full = ir.binop("maxsi", ir.binop("minsi", n_k, ir.binop(
            "divsi", ir.binop("minsi", self.a_cols, self.b_rows), cst(d))), self.zero) \
            if min(self.A.logical_shape[1], self.B.logical_shape[0]) > d else None
        # the full row tiles (rows = DIM, a constant the words are packed with), then the ragged one
        self.n_full_rows = ir.binop("maxsi", ir.binop("minsi", self.n_i, ir.binop("divsi", self.a_rows, cst(d))),
                                    cst(1))
        self.c_rows0 = extent(self.a_rows, self.zero, d)

    def end_iteration_invariants(self):
        """The nest invariants of the first and last iterations' copy."""
        if self.fused is not None:      # the previous column's row tiles stored per k step
            self.per_k = ir.binop("ceildivsi", self.n_rt, ir.binop("maxsi", self.n_k, cst(1)))
        if self.first_loop is not None:     # the k step whose products overwrite C (-1: none)
            self.k_over = select(self.first_iteration, self.zero, cst(-1))

    def store_unreached_columns(self):
        loop(ir.binop("minsi", self.n_cols_run, self.n_ct), self.n_ct,
             lambda ct: self.store_rows(ct, self.zero, self.n_rt))

    def store_rows(self, ct, lo, hi):
        loop(lo, hi, lambda rt: self.emit_tile(rt, ct))

    def c_target(self, i, j, over, rows, cols):
        """(C address, rows, cols) a preload writes: where `over` (the first iteration's k = 0
        step, None: never) the products overwrite whole tiles (rows past the A extent and
        columns past the B extent come out as zeros: the array masks them), everything else
        accumulates."""
        if over is None:
            return self.C.tile_addr(i, j, self.acc_flags), rows, cols
        flags = select(over, cst(local_addr(0, acc=True)), cst(self.acc_flags))
        return ir.binop("ori", self.C.tile_addr(i, j), flags), select(over, cst(self.d), rows), \
            select(over, cst(self.d), cols)

    def column(self, j):
        col = ColumnStores(self, j) if self.fused is not None else None
        zero, n_k = self.zero, self.n_k
        c_cols = extent(self.b_cols, j, self.d)
        if self.n_k_full is not None:
            peeled = self.first_loop is not None
            if peeled:      # only k = 0 may overwrite C: peeled, so the other full steps issue without its selects
                prefetch.when(ir.cmpi("sgt", self.n_k_full, zero), lambda: self.k_step(j, zero, col, c_cols, True))
            loop(cst(1) if peeled else zero, self.n_k_full, lambda k: self.k_step(j, k, col, c_cols, True, not peeled))
            loop(self.n_k_full, n_k, lambda k: self.k_step(j, k, col, c_cols, False))
        else:
            loop(zero, n_k, lambda k: self.k_step(j, k, col, c_cols, False))
        if col is not None:      # rows an empty k loop left; the last column's last rows
            prefetch.when(col.store_prev, lambda: self.store_rows(
                col.prev, ir.binop("minsi", ir.binop("muli", n_k, self.per_k), self.n_rt), self.n_rt))
            own_done = select(ir.cmpi("sgt", n_k, zero), ir.binop("minsi", ir.binop(
                "maxsi", ir.binop("subi", ir.binop("subi", self.n_i, cst(1)), self.first_rt), zero), self.n_rt), zero)
            prefetch.when(col.store_own, lambda: self.store_rows(j, own_done, self.n_rt))

    def k_step(self, j, k, col, c_cols, full, may_overwrite=True):
        """Column j's k step: B tile (k, j) preloaded with row tile 0's compute, then the other
        row tiles. full: a K tile of DIM rows of B and columns of A; may_overwrite: k may be the
        first iteration's overwriting step (k_over)."""
        d, zero = self.d, self.zero
        a_k, b_k = (cst(d), cst(d)) if full else (extent(self.a_cols, k, d), extent(self.b_rows, k, d))
        if col is not None:
            def store_slice():
                lo = ir.binop("minsi", ir.binop("muli", k, self.per_k), self.n_rt)
                self.store_rows(col.prev, lo, ir.binop("minsi", ir.binop("addi", lo, self.per_k), self.n_rt))
            prefetch.when(col.store_prev, store_slice)
        over = ir.cmpi("eq", k, self.k_over) if self.first_loop is not None and may_overwrite else None
        c_addr, c_rows, c_width = self.c_target(zero, j, over, self.c_rows0, c_cols)
        instgem.emit("preload", bd_addr=self.b_tile(k, j), bd_rows=b_k, bd_cols=c_cols,
                     c_addr=c_addr, c_rows=c_rows, c_cols=c_width)
        instgem.emit("compute_preloaded", a_addr=self.a_tile(zero, k),
                     a_rows=self.c_rows0, a_cols=a_k, bd_addr=self.garbage, bd_rows=d, bd_cols=d)
        if col is None:
            self.row_tiles(j, k, over, a_k, c_cols, False)
            return
        # the loops that store row tiles (the last column's last k step) and the others
        if_op = scf.IfOp(ir.cmpi("eq", k, col.k_own), has_else=True)
        for block, stores in ((if_op.then_block, True), (if_op.else_block, False)):
            with InsertionPoint(block):
                self.row_tiles(j, k, over, a_k, c_cols, stores)
                scf.YieldOp([])

    def row_tiles(self, j, k, over, a_k, c_cols, stores):
        """Row tiles 1.. of column j's k step: the full ones, then the ragged last one: the CPU
        issues the commands of a full tile with fewer instructions. With `stores`, each stores
        the row tile before it."""
        d, n_i, n_full = self.d, self.n_i, self.n_full_rows
        loop(cst(1), n_full, lambda i: self.row_tile(i, j, k, over, cst(d), a_k, c_cols, stores))
        loop(n_full, n_i, lambda i: self.row_tile(i, j, k, over, extent(self.a_rows, i, d), a_k, c_cols, stores))

    def row_tile(self, i, j, k, over, rows_i, a_k, c_cols, stores):
        c_addr, c_rows, c_width = self.c_target(i, j, over, rows_i, c_cols)
        instgem.emit("preload", bd_addr=self.garbage, bd_rows=self.d, bd_cols=self.d,
                     c_addr=c_addr, c_rows=c_rows, c_cols=c_width)
        instgem.emit("compute_accumulated", a_addr=self.a_tile(i, k),
                     a_rows=rows_i, a_cols=a_k, bd_addr=self.garbage, bd_rows=self.d, bd_cols=self.d)
        if stores:
            # block row tile i-1 is final: the window's row tile i-1-first_rt (the window
            # starts first_rt tiles into the block when its first rows are masked off)
            row = ir.binop("subi", ir.binop("subi", i, cst(1)), self.first_rt)
            prefetch.when(ir.binop("andi", ir.cmpi("sge", row, self.zero), ir.cmpi("slt", row, self.n_rt)),
                          lambda: self.emit_tile(row, j))

    def zero_unreached(self):
        """Zero, in the first iteration, the tiles its products did not reach (and, if only the
        store reads C, only those it stores: zero mvins of the others would hold the next
        loads back in the load queue)."""
        n_k, n_i, n_cols_run = self.n_k, self.n_i, self.n_cols_run

        def unreached(r, c):
            return any_of(ir.cmpi("eq", n_k, self.zero), ir.cmpi("sge", r, n_i), ir.cmpi("sge", c, n_cols_run))
        if self.op in self.lowering.read_only_by_store:
            only = lambda r, c: ir.binop("andi", unreached(r, c), ir.cmpi("slt", c, self.n_ct))  # noqa: E731
        else:
            only = unreached
        # the tile loop only when some tile is unreached (usually none: the nest covered C)
        d = self.d
        some = any_of(ir.cmpi("eq", n_k, self.zero), ir.cmpi("slt", n_i, cst(-(-self.C.shape[0] // d))),
                      ir.cmpi("slt", n_cols_run, cst(-(-self.C.shape[1] // d))))
        prefetch.when(ir.binop("andi", self.first_iteration, some),
                      lambda: self.lowering.zero_block(self.C, 0, only=only))


class OsDotNest(DotNest):
    """Output-stationary: C tile (i, j) held in the array over the k loop, B preloaded
    with each compute; only the last K step writes C out of the array."""

    def emit(self, written):
        last_k = ir.binop("subi", self.n_k, cst(1))
        return loop(self.zero, self.nonempty(self.n_i, self.n_k),
                    lambda i: loop(self.zero, self.n_j, lambda j: self.tile(i, j, last_k, written)))

    def tile(self, i, j, last_k, written):
        d = self.d
        rows_i = extent(self.a_rows, i, d)
        cols_j = extent(self.b_cols, j, d)
        c_real = self.C.tile_addr(i, j) if written else self.C.tile_addr(i, j, self.acc_flags)

        def step(k, funct):
            c_addr = ir.select(ir.cmpi("eq", k, last_k), c_real, self.garbage)
            instgem.emit("preload", bd_addr=self.garbage, bd_rows=rows_i, bd_cols=cols_j,
                         c_addr=c_addr, c_rows=rows_i, c_cols=cols_j)
            instgem.emit(funct, a_addr=self.a_tile(i, k), a_rows=rows_i, a_cols=extent(self.a_cols, k, d),
                         bd_addr=self.b_tile(k, j), bd_rows=extent(self.b_rows, k, d), bd_cols=cols_j)
        step(self.zero, "compute_preloaded")
        loop(cst(1), self.n_k, lambda k: step(k, "compute_accumulated"))


def stored_after(loop_op, acc):
    """The copy storing `acc` (or its int8 epilogue block) to DRAM after `loop_op`
    in the same block, if the loop's body only writes `acc` through its matmul
    and nothing but the epilogue touches it in between."""
    if any(u.name != "linalg.matmul" for u in ir.walk_ops(loop_op) if acc.result in list(u.operands)):
        return None
    block_ops = [o.operation for o in loop_op.block.operations]
    sources = {acc}
    for op in block_ops[block_ops.index(loop_op) + 1:]:
        local = [alloc_of(v) for v in op.operands]
        if prefetch.is_boundary_check(op):
            continue
        if op.regions and op.name != "linalg.generic":
            return None                  # a nested region could touch the block
        if not any(a is not None and a.operation in sources for a in local):
            continue
        if op.name == "linalg.generic" and "gemmini.epilogue" in op.attributes and local[0] is not None \
                and local[0].operation in sources:
            sources.add(alloc_of(op.operands[-1]).operation)
        elif op.name == "memref.subview":
            continue
        elif op.name == "memref.copy" and local[1] is None:
            return op
        else:
            return None
    return None


def erase_unread_epilogues(func):
    """Erase the epilogue and pooling generics whose block nothing reads: what a store whose
    window folded to nothing (e.g. a constant row offset past a constant shape) would have
    moved out. Left in place they would reach the LLVM translation unconverted."""
    changed = True
    while changed:
        changed = False
        for op in list(ir.walk_ops(func)):
            if op.name != "linalg.generic" or not ("gemmini.epilogue" in op.attributes
                                                   or "gemmini.max_pool" in op.attributes):
                continue
            out = alloc_of(op.operands[-1])
            if out is None:
                continue
            read = any(other != op and other.name not in ("memref.subview", "memref.dealloc")
                       and any(alloc_of(v) is not None and alloc_of(v).operation == out.operation
                               for v in other.operands)
                       for other in ir.walk_ops(func))
            if not read:
                op.erase()
                changed = True
                break


def read_only_by(func, acc, matmul, store) -> bool:
    """True if, in `func`, only `matmul` and `store` (with the int8 epilogue between them) read the
    block `acc`: the other ops touching it are views, zero fills or its deallocation."""
    blocks = {acc}
    for op in ir.walk_ops(func):
        if op.name == "linalg.generic" and "gemmini.epilogue" in op.attributes and \
                alloc_of(op.operands[0]) is not None and alloc_of(op.operands[0]).operation == acc:
            blocks.add(alloc_of(op.operands[-1]).operation)
    for op in ir.walk_ops(func):
        if op == matmul or op == store or op.name in ("memref.dealloc", "linalg.fill") or prefetch.is_pure(op) or \
                (op.name == "linalg.generic" and "gemmini.epilogue" in op.attributes):
            continue
        if any(a is not None and a.operation in blocks for a in map(alloc_of, op.operands)):
            return False
    return True


def zeroed_before(loop_op, acc):
    """The zero fill of `acc` right before `loop_op` (nothing else touching it in
    between) if the loop's body only writes `acc` through its matmul."""
    if any(u.name != "linalg.matmul" for u in ir.walk_ops(loop_op) if acc.result in list(u.operands)):
        return None
    block_ops = [o.operation for o in loop_op.block.operations]
    for op in reversed(block_ops[:block_ops.index(loop_op)]):
        if prefetch.is_pure(op) or prefetch.is_boundary_check(op):     # views and arithmetic write nothing
            continue
        touches = any(a is not None and a.operation == acc for a in (alloc_of(v) for v in op.operands)) or \
            any(alloc_of(v) is not None and alloc_of(v).operation == acc for o in ir.walk_ops(op) for v in o.operands)
        if not touches:
            continue
        if op.name == "linalg.fill" and ir.is_zero_fill(op) and alloc_of(op.operands[-1]).operation == acc:
            return op
        return None
    return None


def _pattern(lower):
    """A lowering method as a pattern (the walk visits each op once, whatever it returns)."""
    def pattern(op, _rewriter):
        lower(op)
        return True
    return pattern


def run(module_op, options: CompileOptions):
    LinalgToInstGem(options.config, options.dataflow).run(module_op)
    instgem.verify_fields(module_op)
