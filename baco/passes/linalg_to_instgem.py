"""linalg/memref → InstGem: tile every placed block operation to DIM×DIM
Gemmini commands.

- copy DRAM window → local block: config_ld + mvin per (DIM rows × up to
  MAX_BLOCK_LEN·DIM columns), clipped to the window's runtime extent;
- zero fill of a local block: mvin with DRAM address 0;
- linalg.matmul on placed blocks: preload/compute pairs, weight-stationary
  (B held in the array, reused across the rows of A) or output-stationary
  (C held in the array, K reduced in place), with rows/cols masked to each
  operand's runtime extent so ragged edges need no padding;
- copy local block → DRAM window: config_st + mvout; an accumulator block
  tagged with a `gemmini.epilogue` (relu / scale / int8) is stored through
  the accumulator read path, a plain int32 block with a full-width read.
"""
from __future__ import annotations

import struct

from mlir.dialects import scf
from mlir.ir import F32Type, InsertionPoint, IntegerAttr, MemRefType, StringAttr

from baco.dialects import instgem
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import GARBAGE_ADDR, local_addr
from baco.passes import irutil as ir

ESIZE = {"i8": 1, "i32": 4}


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


class Placed:
    """A placed local block: address arithmetic on its DIM×DIM tiles. A
    double-buffered block (`gemmini.copy_rows`) starts at a row computed where
    it is allocated: the copy of this loop iteration / program."""

    def __init__(self, alloc, dim):
        self.alloc = alloc
        self.space = StringAttr(alloc.attributes["gemmini.space"]).value
        self.base = IntegerAttr(alloc.attributes["gemmini.base_row"]).value
        self.pitch = IntegerAttr(alloc.attributes["gemmini.row_pitch"]).value
        t = MemRefType(alloc.result.type)
        self.shape = list(t.shape)
        self.elem = str(t.element_type)
        self.dim = dim
        if "gemmini.copy_rows" in alloc.attributes:
            copy_rows = IntegerAttr(alloc.attributes["gemmini.copy_rows"]).value
            with InsertionPoint(alloc), alloc.location:
                self.base = ir.binop("addi", cst(self.base), ir.binop("muli", copy_parity(alloc), cst(copy_rows)))

    def tile_addr(self, row_tile, col_tile, flags=0):
        """Local address of tile (row_tile, col_tile); tiles are i64 Values."""
        d = ir.const_int(self.dim, ir.i64())
        pitch = ir.const_int(self.pitch, ir.i64())
        row = ir.binop("addi", ir.binop("muli", col_tile, pitch), ir.binop("muli", row_tile, d))
        row = ir.binop("addi", row, cst(self.base) if isinstance(self.base, int) else self.base)
        return ir.binop("ori", row, ir.const_int(flags, ir.i64())) if flags else row


def copy_parity(alloc):
    """i64 0/1: which copy of a double-buffered block is live where it is allocated.
    In a loop: the iteration number's parity; at the kernel's top level: the
    parity of the program's linear id (programs run p0 fastest)."""
    scope = alloc.parent
    while scope.name not in ("scf.for", "func.func"):
        scope = scope.parent
    if scope.name == "scf.for":
        lb, _, step = (i64(v) for v in list(scope.operands)[:3])
        iv = i64(scope.regions[0].blocks[0].arguments[0])
        n = ir.binop("divsi", ir.binop("subi", iv, lb), step)
    else:
        p = [ir.call_grid(alloc, "baco_program_id", a) for a in range(3)]
        g = [ir.call_grid(alloc, "baco_num_programs", a) for a in range(2)]
        n = ir.binop("addi", p[0], ir.binop("muli", g[0], ir.binop("addi", p[1], ir.binop("muli", g[1], p[2]))))
    return ir.binop("remsi", n, cst(2))


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


def loop(lb, ub, body):
    """scf.for over i64 bounds (step 1); body(iv) builds the body."""
    f = scf.ForOp(ir.index_cast(lb, ir.index()), ir.index_cast(ub, ir.index()), ir.const_index(1))
    with InsertionPoint(f.body):
        body(i64(f.induction_variable))
        scf.YieldOp([])
    return f


def alloc_of(value):
    """The placed alloc behind a value (itself or a subview of it)."""
    owner = value.owner
    while getattr(owner, "name", None) == "memref.subview":
        owner = owner.operands[0].owner
    return owner if getattr(owner, "name", None) == "memref.alloc" else None


def dram_addr_and_stride(view, esize):
    """(byte address of element [0,0], row stride in bytes) of a strided DRAM view."""
    t = MemRefType(view.type)
    rank = len(t.shape)
    meta = ir.create("memref.extract_strided_metadata", operands=[view],
                     results=[ir.Type.parse(f"memref<{t.element_type}>"), ir.index(),
                              *[ir.index()] * (2 * rank)]).results
    offset, strides = meta[1], list(meta[2 + rank:])
    ptr = ir.create("memref.extract_aligned_pointer_as_index", operands=[view],
                    results=[ir.index()]).result
    addr = ir.binop("addi", i64(ptr), ir.binop("muli", i64(offset), cst(esize)))
    return addr, ir.binop("muli", i64(strides[0]), cst(esize))


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
        self.extents = {}      # alloc op -> (rows, cols) i64 Values of the last copy into it
        self.blocks = {}       # alloc op -> Placed
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
                self.lower_func(func)

    def lower_func(self, func):
        entry = func.regions[0].blocks[0]
        with InsertionPoint.at_block_begin(entry), func.location:
            instgem.emit("config_ex", dataflow=1 if self.dataflow == "WS" else 0,
                         acc_scale=f32_bits(1.0), a_stride=1, c_stride=1)
        for op in list(ir.walk_ops(func)):
            handler = {"memref.copy": self.lower_copy, "linalg.matmul": self.lower_matmul,
                       "linalg.fill": self.lower_fill, "linalg.map": self.lower_fill,
                       "func.return": self.lower_return}.get(op.name)
            if handler is not None:
                with InsertionPoint(op), op.location:
                    handler(op)
        for op in reversed(self.dead):
            op.erase()
        # placed buffers and their views are now unused
        changed = True
        while changed:
            changed = False
            for op in list(ir.walk_ops(func)):
                if op.name in ("memref.subview", "memref.alloc") and all(not list(r.uses) for r in op.results):
                    op.erase()
                    changed = True

    def lower_return(self, op):
        instgem.emit_fence()

    # ---- data movement -------------------------------------------------------
    def lower_fill(self, op):
        if not ir.is_zero_fill(op):
            raise ir.fail("only zero-initialised blocks are supported on Gemmini", op)
        alloc = alloc_of(op.operands[-1] if op.name == "linalg.fill" else op.operands[0])
        if alloc is None:
            raise ir.fail("fill of a non-local buffer", op)
        blk = self.placed(alloc)
        acc = blk.space == "acc"
        d = self.cfg.dim
        chunk = (self.cfg.max_block_len_acc if acc else self.cfg.max_block_len) * d
        rows_t = -(-blk.shape[0] // d)
        chunks = -(-blk.shape[1] // chunk)
        # DRAM address 0 makes mvin write zeros; the slot still needs its block stride
        instgem.emit("config_ld", stride=chunk * ESIZE[blk.elem], scale=f32_bits(1.0),
                     block_stride=blk.pitch, pixel_repeats=1, state_id=0)

        def body(t):
            r = ir.binop("remsi", t, cst(rows_t))
            c = ir.binop("divsi", t, cst(rows_t))
            cols = extent(cst(blk.shape[1]), c, chunk)
            local = blk.tile_addr(r, ir.binop("muli", c, cst(chunk // d)), local_addr(0, acc=acc))
            instgem.emit("mvin", dram_addr=0, local_addr=local, cols=cols, rows=d)
        loop(cst(0), cst(rows_t * chunks), body)
        self.dead.append(op)

    def lower_copy(self, op):
        src, dst = op.operands
        src_alloc, dst_alloc = alloc_of(src), alloc_of(dst)
        if dst_alloc is not None and src_alloc is None:
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
        boundary_check); a column offset is not addressable in a scratchpad row."""
        owner = view.owner
        if owner.name == "memref.alloc":
            t = MemRefType(view.type)
            return cst(0), cst(t.shape[0]), cst(t.shape[1])
        static_sizes = list(ir.DenseI64ArrayAttr(owner.attributes["static_sizes"]))
        static_offsets = list(ir.DenseI64ArrayAttr(owner.attributes["static_offsets"]))
        dyn = iter(list(owner.operands)[1:])
        offsets = [next(dyn) if o == ir.DYN else o for o in static_offsets]
        sizes = [next(dyn) if s == ir.DYN else s for s in static_sizes]
        if not (isinstance(offsets[1], int) and offsets[1] == 0):
            raise ir.fail("local block windows must start at the block's first column", owner)
        return tuple(cst(v) if isinstance(v, int) else i64(v) for v in (offsets[0], *sizes))

    def lower_mvin(self, op, src, dst, blk: Placed):
        unit_inner_stride(src, op)
        cfg = self.cfg
        acc = blk.space == "acc"
        esize = ESIZE[blk.elem]
        first, rows, cols = self.local_window(dst)
        # the matmul masks to the filled extent; rows above `first` (a negative row offset) are zeroed
        self.extents[blk.alloc] = (ir.binop("addi", first, rows), cols)
        addr, row_bytes = dram_addr_and_stride(src, esize)
        max_cols = (cfg.max_block_len_acc if acc else cfg.max_block_len) * cfg.dim
        instgem.emit("config_ld", stride=row_bytes, scale=f32_bits(1.0), shrink=0,
                     block_stride=blk.pitch, pixel_repeats=1, state_id=0)
        flags = local_addr(0, acc=acc)

        def row_tile(rt):
            n_rows = extent(rows, rt, cfg.dim)
            row_addr = ir.binop("addi", addr, ir.binop("muli", ir.binop("muli", rt, cst(cfg.dim)), row_bytes))

            def col_chunk(cc):
                n_cols = extent(cols, cc, max_cols)
                dram = ir.binop("addi", row_addr, ir.binop("muli", cc, cst(max_cols * esize)))
                local = blk.tile_addr(rt, ir.binop("muli", cc, cst(max_cols // cfg.dim)), flags)
                instgem.emit("mvin", dram_addr=dram, local_addr=ir.binop("addi", local, first),
                             cols=n_cols, rows=n_rows)
            loop(cst(0), ceil_div(cols, max_cols), col_chunk)
        loop(cst(0), ceil_div(rows, cfg.dim), row_tile)

        def zero_tile(rt):      # DRAM address 0 makes mvin write zeros
            def col_chunk(cc):
                local = blk.tile_addr(rt, ir.binop("muli", cc, cst(max_cols // cfg.dim)), flags)
                instgem.emit("mvin", dram_addr=0, local_addr=local, cols=extent(cols, cc, max_cols),
                             rows=extent(first, rt, cfg.dim))
            loop(cst(0), ceil_div(cols, max_cols), col_chunk)
        loop(cst(0), ceil_div(first, cfg.dim), zero_tile)

    def lower_mvout(self, op, src, dst, blk: Placed):
        unit_inner_stride(dst, op)
        cfg = self.cfg
        first, rows, cols = self.local_window(src)
        out_elem = str(MemRefType(dst.type).element_type)
        addr, row_bytes = dram_addr_and_stride(dst, ESIZE[out_elem])
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
        esize = ESIZE[out_elem]

        def tile(t):
            n_row_tiles = ceil_div(rows, cfg.dim)
            rt = ir.binop("remsi", t, n_row_tiles)
            ct = ir.binop("divsi", t, n_row_tiles)
            dram = ir.binop("addi", addr, ir.binop("muli", ir.binop("muli", rt, cst(cfg.dim)), row_bytes))
            dram = ir.binop("addi", dram, ir.binop("muli", ct, cst(cfg.dim * esize)))
            instgem.emit("mvout", dram_addr=dram, local_addr=ir.binop("addi", blk.tile_addr(rt, ct, flags), first),
                         cols=extent(cols, ct, cfg.dim), rows=extent(rows, rt, cfg.dim))
        loop(cst(0), ir.binop("muli", ceil_div(rows, cfg.dim), ceil_div(cols, cfg.dim)), tile)

    def epilogue_writing(self, alloc):
        """(relu, scale bits i64, source acc alloc) if a gemmini.epilogue generic fills `alloc`."""
        for use in alloc.result.uses:
            gen = use.owner
            if gen.name == "linalg.generic" and "gemmini.epilogue" in gen.attributes:
                attrs = gen.attributes["gemmini.epilogue"]
                relu = int(str(ir.Attribute(attrs["relu"])) == "true")
                scale = cst(f32_bits(1.0))
                if str(ir.Attribute(attrs["scaled"])) == "true":
                    body = gen.regions[0].blocks[0]
                    mul = next(o.operation for o in body.operations if o.operation.name == "arith.mulf")
                    bits = ir.create("arith.bitcast", operands=[mul.operands[1]],
                                     results=[ir.IntegerType.get_signless(32)]).result
                    scale = ir.create("arith.extui", operands=[bits], results=[ir.i64()]).result
                source = alloc_of(gen.operands[0])
                if source is None or self.placed(source).space != "acc":
                    raise ir.fail("scale/relu/convert apply to accumulator blocks", gen)
                self.dead.append(gen)
                return relu, scale, source
        return None

    # ---- compute ---------------------------------------------------------------
    def operand(self, value, op):
        alloc = alloc_of(value)
        if alloc is None:
            raise ir.fail("dot operands must be loaded blocks", op)
        blk = self.placed(alloc)
        rows, cols = self.extents.get(alloc) or (cst(blk.shape[0]), cst(blk.shape[1]))
        return blk, rows, cols

    def lower_matmul(self, op):
        a, b, c = op.operands
        A, a_rows, a_cols = self.operand(a, op)
        B, b_rows, b_cols = self.operand(b, op)
        C = self.placed(alloc_of(c))
        if A.space != "spad" or B.space != "spad" or C.space != "acc":
            raise ir.fail("dot needs int8 scratchpad operands and an int32 accumulator", op)
        d = self.cfg.dim
        n_i = ceil_div(a_rows, d)
        n_j = ceil_div(b_cols, d)
        n_k = ceil_div(ir.binop("minsi", a_cols, b_rows), d)
        acc_flags = local_addr(0, acc=True, accumulate=True)
        garbage = cst(GARBAGE_ADDR)
        zero = cst(0)

        def nonempty(n, guard):   # skip the whole nest when another extent is 0
            return ir.create("arith.select", operands=[ir.create(
                "arith.cmpi", operands=[guard, zero], results=[ir.IntegerType.get_signless(1)],
                attributes={"predicate": IntegerAttr.get(ir.i64(), 4)}).result, n, zero],
                results=[ir.i64()]).result

        if self.dataflow == "WS":
            def k_loop(k):
                def j_loop(j):
                    c_rows0 = extent(a_rows, zero, d)
                    c_cols = extent(b_cols, j, d)
                    instgem.emit("preload", bd_addr=B.tile_addr(k, j), bd_rows=extent(b_rows, k, d),
                                 bd_cols=c_cols, c_addr=C.tile_addr(zero, j, acc_flags),
                                 c_rows=c_rows0, c_cols=c_cols)
                    instgem.emit("compute_preloaded", a_addr=A.tile_addr(zero, k), a_rows=c_rows0,
                                 a_cols=extent(a_cols, k, d), bd_addr=garbage, bd_rows=d, bd_cols=d)

                    def i_loop(i):
                        rows_i = extent(a_rows, i, d)
                        instgem.emit("preload", bd_addr=garbage, bd_rows=d, bd_cols=d,
                                     c_addr=C.tile_addr(i, j, acc_flags), c_rows=rows_i, c_cols=c_cols)
                        instgem.emit("compute_accumulated", a_addr=A.tile_addr(i, k), a_rows=rows_i,
                                     a_cols=extent(a_cols, k, d), bd_addr=garbage, bd_rows=d, bd_cols=d)
                    loop(cst(1), n_i, i_loop)
                loop(zero, nonempty(n_j, n_i), j_loop)
            loop(zero, n_k, k_loop)
        else:
            last_k = ir.binop("subi", n_k, cst(1))

            def i_loop(i):
                def j_loop(j):
                    rows_i = extent(a_rows, i, d)
                    cols_j = extent(b_cols, j, d)
                    c_real = C.tile_addr(i, j, acc_flags)

                    def c_for(k):  # only the last K step writes C out of the array
                        is_last = ir.create("arith.cmpi", operands=[k, last_k],
                                            results=[ir.IntegerType.get_signless(1)],
                                            attributes={"predicate": IntegerAttr.get(ir.i64(), 0)}).result
                        return ir.create("arith.select", operands=[is_last, c_real, garbage],
                                         results=[ir.i64()]).result

                    def step(k, funct):
                        instgem.emit("preload", bd_addr=garbage, bd_rows=rows_i, bd_cols=cols_j,
                                     c_addr=c_for(k), c_rows=rows_i, c_cols=cols_j)
                        instgem.emit(funct, a_addr=A.tile_addr(i, k), a_rows=rows_i,
                                     a_cols=extent(a_cols, k, d), bd_addr=B.tile_addr(k, j),
                                     bd_rows=extent(b_rows, k, d), bd_cols=cols_j)
                    step(zero, "compute_preloaded")
                    loop(cst(1), n_k, lambda k: step(k, "compute_accumulated"))
                loop(zero, n_j, j_loop)
            loop(zero, nonempty(n_i, n_k), i_loop)
        self.dead.append(op)


def run(module_op, config: GemminiConfig | None = None, dataflow: str = "WS", **_):
    LinalgToInstGem(config or GemminiConfig(), dataflow).run(module_op)
    instgem.verify_fields(module_op)
