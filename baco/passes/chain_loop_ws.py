"""chain-loop-ws: the fused GEMM chain's program as LOOP_WSs on Gemmini master's ext-spad
commands (GemminiConfig.mvout_spad), its hidden layer never leaving the scratchpad.

Input and output: placed linalg/memref IR (gemmini-placement's output; loop-ws runs after it).
A function matches when its Gemmini work is the chain of baco.kernels.fused.gemm_chain_kernel,
Y = f2(f1(X·W1 + b1)·W2 + b2), one program per BLOCK_M rows of X:

    acc1 = b1 rows;  for k: X block = X window; W1 block = W1 window; acc1 += X block @ W1 block
    h = f1(acc1) (an acc_read block: the accumulator read as int8)
    acc2 = b2 rows;  W2 block = W2 window; acc2 += h @ W2 block;  Y window = f2(acc2)

with every DRAM operand a whole kernel argument viewed row-major and dense (its sizes and row
stride the kernel's M, K, H, N arguments, the biases at row stride 0), the row windows of X, the
biases and Y all starting at the program's first row clamp(program_id(0)·BLOCK_M), the K loop's
offsets starting at 0 (the other offsets of the windows evaluate to 0 in the first K step at
sample widths), and blocks whose loop form fits (baco.gemmini.fused.gemm_chain_loop_ws_fits
with K, H, N at most BLOCK_K, BLOCK_H, BLOCK_N: one row block a program, a group of one). Each
program then runs, as baco.kernels.fused_loops' command stream does for one row block:

    config_ex, config_ld (X's and b1's row strides), config_st (f1), config_ld (W1's)
    per tile of H (baco.gemmini.fused.chain_loop_tiles): funct 24 (the tile's X rows in X's home, its W1 columns' end);
        LOOP_WS(X rows (the first column group's; A address 0 after), W1 columns, D = b1 columns,
                spad_only, inc_acc_addr, H's blocks to the scratchpad at c_spad_addr)
    config_st (f2), config_ld (W2's)
    per tile of Y: funct 24 (the tile's H rows, its W2 columns' end);
        LOOP_WS(A address 0: H as it lies, W2 columns, D = b2 columns, C = Y's tile)
    after the launch's last program: each loop slot's scratchpad half back (_restore_halves)

A layer's tiles are up to LOOP_TILE_BLOCKS DIM x DIM output blocks, column groups outer (scf.for
loops over the run-time widths): the loop unit holds two loops, so one loop's bias (LdD, which
its execute FSM waits for whole) and the next column group's weights move in while the other
computes. W1's and W2's column groups lie one after the other, each in the order its loop's LdB
places it (its b_addr_end); H's row blocks lie one after the other, hb blocks each.

W1 and W2 are moved in by program 0's first row of tiles only (B address 0 after: the launch's
programs run in order on one Gemmini, and nothing else writes their rows). The loop form runs
when, at run time, K fits one step (1 <= K <= BLOCK_K), the widths fit their blocks (1 <= H <=
BLOCK_H, 1 <= N <= BLOCK_N), the program has rows, and W1's and W2's arguments hold whole DIM-row
blocks (LoopMatmul moves every B block with DIM rows, reading past a ragged K or H); otherwise the
program runs the original ops (the explicit stream of linalg-to-instgem), under the scf.if's else.

Nothing else changes. Only with WS, the loop stages on (`loop_ws`) and config.mvout_spad."""
from __future__ import annotations

from mlir.dialects import scf
from mlir.ir import Block, BlockArgument, DenseI64ArrayAttr, InsertionPoint, MemRefType, ShapedType, StringAttr

from baco.dialects import instgem
from baco.gemmini.abi import PROGRAM_ID
from baco.gemmini.config import GemminiConfig, loop_unit_half
from baco.gemmini.fused import LOOP_TILE_BLOCKS, gemm_chain_loop_ws_fits
from baco.gemmini.isa import ACTIVATION_RELU
from baco.options import CompileOptions
from baco.passes import irutil as ir
from baco.passes.irutil import alloc_of
from baco.passes.linalg_to_instgem import cst, dram_addr_and_stride, f32_bits, fold, i64, loop, scale_bits, select
from baco.passes.loop_facts import const_value


class Chain:
    """The matched chain of one function: its kernel arguments (Values of the function's block),
    static blocks and epilogues."""
    x = w1 = b1 = w2 = b2 = y = None            # the memref arguments
    M = K = H = N = None                        # the index arguments (an int: specialized)
    block_m = block_k = block_h = block_n = 0
    scale1 = scale2 = None                      # f32 Values (function arguments)
    relu1 = relu2 = 0


def _is_arg(v, func) -> bool:
    return isinstance(v.owner, Block) and v.owner.owner is not None and v.owner.owner.operation == func


def _space(alloc) -> str | None:
    a = alloc.attributes
    return StringAttr(a["gemmini.space"]).value if "gemmini.space" in a else None


def _writers(alloc, ops, name):
    """The ops named `name` whose output (last operand) is `alloc` or a view of it."""
    return [op for op in ops if op.name == name and alloc_of(op.operands[-1]) is not None
            and alloc_of(op.operands[-1]).operation == alloc.operation]


def _dram_copy(alloc, ops):
    """(memref.copy, its DRAM subview's reinterpret_cast) of the one load into `alloc`, else None."""
    copies = _writers(alloc, ops, "memref.copy")
    if len(copies) != 1 or alloc_of(copies[0].operands[0]) is not None:
        return None
    cast = _dram_view(copies[0].operands[0])
    return (copies[0], cast) if cast is not None else None


def _dram_view(value):
    """The reinterpret_cast of a DRAM operand: a window (subview) of it, or the whole view where a
    launch compiled for its shapes and grid reads or writes a whole argument; else None."""
    view = value.owner
    cast = view.operands[0].owner if getattr(view, "name", None) == "memref.subview" else view
    return cast if getattr(cast, "name", None) == "memref.reinterpret_cast" else None


def _mixed(static, dynamic):
    """A view's sizes or strides: its static values (ints) with the dynamic ones (Values) in place."""
    dynamic = iter(dynamic)
    return [next(dynamic) if v == ShapedType.get_dynamic_size() else v for v in static]


def _whole_argument(cast, func, row_stride_zero=False):
    """(argument, rows, cols) of a reinterpret_cast viewing a whole kernel argument as a row-major
    matrix (row stride its cols, or 0 for a bias), each size an int (a specialized 1) or a
    function argument; else None."""
    if list(DenseI64ArrayAttr(cast.attributes["static_offsets"])) != [0]:
        return None
    ops = list(cast.operands)
    sizes = _mixed(DenseI64ArrayAttr(cast.attributes["static_sizes"]), ops[1:])
    strides = _mixed(DenseI64ArrayAttr(cast.attributes["static_strides"]), ops[1 + sum(
        not isinstance(v, int) for v in sizes):])
    if len(sizes) != 2 or strides[1] != 1 or not _same(strides[0], 0 if row_stride_zero else sizes[1]):
        return None
    if not _is_arg(ops[0], func) or not all(isinstance(v, int) or _is_arg(v, func) for v in sizes):
        return None
    return ops[0], sizes[0], sizes[1]


def _same(a, b) -> bool:
    """Two sizes (ints or Values) provably equal."""
    return a == b if isinstance(a, int) == isinstance(b, int) else False


def _epilogue(gen):
    """(relu, scale Value or None: 1.0) of a gemmini.epilogue generic, else None."""
    if gen.name != "linalg.generic" or "gemmini.epilogue" not in gen.attributes:
        return None
    relu = "relu = true" in str(gen.attributes["gemmini.epilogue"])
    return int(relu), ir.scale_operand(gen)


_ARITH = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
          "arith.minsi": min, "arith.maxsi": max}


def _evaluate(v, pid: int, args=None):
    """The integer of index arithmetic on constants, program_id(0) = `pid` and the function's
    arguments (`args`: argument number -> int) in the first iteration of a loop (its induction
    variable the lower bound, an iter_arg its initial value), else None."""
    op = v.owner
    if isinstance(op, Block):
        parent, number = op.owner, BlockArgument(v).arg_number
        parent = parent.operation if parent is not None else None
        if parent is not None and parent.name == "func.func":
            return (args or {}).get(number)
        if parent is not None and parent.name == "scf.for":
            return _evaluate(list(parent.operands)[0 if number == 0 else 3 + number - 1], pid, args)
        return None
    name = getattr(op, "name", None)
    if name == "arith.constant":
        return const_value(v)
    if name == "arith.index_cast":
        return _evaluate(op.operands[0], pid, args)
    if name == "func.call" and str(op.attributes["callee"]) == f"@{PROGRAM_ID}" and const_value(op.operands[0]) == 0:
        return pid
    if name in _ARITH:
        a, b = (_evaluate(x, pid, args) for x in op.operands)
        return None if a is None or b is None else _ARITH[name](a, b)
    return None


def _is_program_row(v, block_m, M) -> bool:
    """Whether `v` is the program's first row, program_id(0)·block_m, in every program that has
    rows: clamp(program_id(0)·block_m, 0, M) as the block pointer's offset folds for an argument
    M; for a specialized M, as evaluated in each of its ⌈M / block_m⌉ programs."""
    if isinstance(M, int):
        return all((v if isinstance(v, int) else _evaluate(v, p)) == p * block_m for p in range(-(-M // block_m)))
    if isinstance(v, int):
        return False
    lo = v.owner
    if getattr(lo, "name", None) != "arith.minsi" or lo.operands[1] != M:
        return False
    hi = lo.operands[0].owner
    if getattr(hi, "name", None) != "arith.maxsi" or const_value(hi.operands[1]) != 0:
        return False
    return all(_evaluate(hi.operands[0], p) == p * block_m for p in range(3))


def _offsets(copy_or_store, dram_operand):
    """The offsets of a copy's DRAM window (ints or Values; 0s for a whole view)."""
    view = copy_or_store.operands[dram_operand].owner
    if getattr(view, "name", None) != "memref.subview":
        return [0, 0]
    return _mixed(DenseI64ArrayAttr(view.attributes["static_offsets"]), list(view.operands)[1:])


# widths (M, K, H, N) at which the windows' other offsets are evaluated: each must be 0 there
SAMPLE_WIDTHS = ((1, 1, 1, 1), (17, 33, 65, 5), (1000, 7, 3, 2))


def _windows_at_origin(c: Chain, offsets) -> bool:
    """Whether every offset (ints or Values) is 0 in programs 0 and 1 and the first K step, at
    every sample of the widths the function's arguments take."""
    for widths in SAMPLE_WIDTHS:
        args = {BlockArgument(v).arg_number: w for v, w in zip((c.M, c.K, c.H, c.N), widths) if not isinstance(v, int)}
        if any((o if isinstance(o, int) else _evaluate(o, pid, args)) != 0 for o in offsets for pid in (0, 1)):
            return False
    return True


def match(func, cfg: GemminiConfig) -> Chain | None:
    """The chain of `func` (module doc), else None."""
    ops = ir.walk_ops(func)
    matmuls = [op for op in ops if op.name == "linalg.matmul"]
    if len(matmuls) != 2 or matmuls[1].parent.operation != func:
        return None
    m1, m2 = matmuls
    loop = m1.parent.operation          # the K loop (none when a specialized K folds it)
    if loop != func and (loop.name != "scf.for" or loop.parent.operation != func or const_value(loop.operands[0]) != 0
                         or any(const_value(v) != 0 for v in list(loop.operands)[3:])):
        return None
    acc1, acc2, h = alloc_of(m1.operands[2]), alloc_of(m2.operands[2]), alloc_of(m2.operands[0])
    xa, w1a, w2a = alloc_of(m1.operands[0]), alloc_of(m1.operands[1]), alloc_of(m2.operands[1])
    if any(a is None for a in (acc1, acc2, h, xa, w1a, w2a)) or _space(h) != "acc_read" or \
            {_space(a) for a in (xa, w1a, w2a)} != {"spad"}:
        return None
    e1 = _writers(h, ops, "linalg.generic")
    stores = [op for op in ops if op.name == "memref.copy" and alloc_of(op.operands[1]) is None]
    e2 = [op for op in ops if op.name == "linalg.generic" and op.operands[0] == acc2.result]
    if len(e1) != 1 or e1[0].operands[0] != acc1.result or len(e2) != 1 or len(stores) != 1 or \
            alloc_of(stores[0].operands[0]) is None or \
            alloc_of(stores[0].operands[0]).operation != alloc_of(e2[0].operands[1]).operation:
        return None
    epilogues = [_epilogue(e1[0]), _epilogue(e2[0])]
    loads = [_dram_copy(a, ops) for a in (xa, w1a, acc1, w2a, acc2)]
    if any(v is None for v in epilogues + loads):
        return None
    y_cast = _dram_view(stores[0].operands[1])
    if y_cast is None:
        return None
    views = [_whole_argument(c, func, zero) for (_, c), zero in zip(loads, (False, False, True, False, True))]
    views.append(_whole_argument(y_cast, func))
    if any(v is None for v in views):
        return None
    (x, M, K), (w1, k1, H), (b1, m1_, h1), (w2, h2, N), (b2, m2_, n2), (y, m3, n3) = views
    if not all(_same(a, b) for a, b in ((k1, K), (h2, H), (h1, H), (n2, N), (n3, N), (m1_, M), (m2_, M), (m3, M))):
        return None
    c = Chain()
    c.x, c.w1, c.b1, c.w2, c.b2, c.y, c.M, c.K, c.H, c.N = x, w1, b1, w2, b2, y, M, K, H, N
    (c.block_m, c.block_h), c.block_k = MemRefType(acc1.result.type).shape, MemRefType(xa.result.type).shape[1]
    c.block_n = MemRefType(acc2.result.type).shape[1]
    (c.relu1, c.scale1), (c.relu2, c.scale2) = epilogues
    windows = [_offsets(copy, 0) for copy, _ in loads] + [_offsets(stores[0], 1)]   # X, W1, b1, W2, b2, Y
    if not all(_is_program_row(windows[i][0], c.block_m, M) for i in (0, 2, 4, 5)) or \
            not _windows_at_origin(c, [windows[0][1], *windows[1], windows[2][1], *windows[3], windows[4][1],
                                       windows[5][1]]) or \
            any(s is not None and not _is_arg(s, func) for s in (c.scale1, c.scale2)):
        return None
    if not gemm_chain_loop_ws_fits(c.block_m, 1, c.block_k, c.block_h, c.block_n, cfg):
        return None
    return c


# ---- rewriting -------------------------------------------------------------------------------

def _ceil_blocks(v, d):
    """(⌈v / d⌉, its pad ⌈v / d⌉·d − v) of an i64 Value."""
    blocks = ir.binop("divsi", ir.binop("addi", v, cst(d - 1)), cst(d))
    return blocks, ir.binop("subi", ir.binop("muli", blocks, cst(d)), v)


def _base(arg, esize):
    """The i64 byte address of a memref argument's first element."""
    return dram_addr_and_stride(arg, esize)[0]


def _all(*conds):
    return fold("andi", conds)


def _mul(*values):
    return fold("muli", values)


def _add(*values):
    return fold("addi", values)


def _within(v, lo, hi):
    return _all(ir.cmpi("sge", v, cst(lo)), ir.cmpi("sle", v, cst(hi)))


def _holds(arg, elements):
    """Whether memref argument `arg` has at least `elements` elements (read at run time)."""
    size = ir.create("memref.dim", operands=[arg, ir.const_index(0)], results=[ir.index()]).result
    return ir.cmpi("sge", i64(size), elements)


def _config_ld(slot, stride_bytes, d):
    instgem.emit("config_ld", state_id=slot, stride=stride_bytes, scale=f32_bits(1.0), block_stride=d, pixel_repeats=1)


def _loop_ws(bounds, pads, *, a, b, d_addr, c, strides, **flags):
    """LOOP_WS's six commands (bounds in DIM blocks), D added onto (ex_accumulate)."""
    (i, j, k), (pi, pj, pk), (sa, sb, sd, sc) = bounds, pads, strides
    instgem.emit("loop_ws_config_bounds", max_i=i, max_j=j, max_k=k, pad_i=pi, pad_j=pj, pad_k=pk)
    instgem.emit("loop_ws_config_addrs_ab", a_addr=a, b_addr=b)
    instgem.emit("loop_ws_config_addrs_dc", d_addr=d_addr, c_addr=c)
    instgem.emit("loop_ws_config_strides_ab", a_stride=sa, b_stride=sb)
    instgem.emit("loop_ws_config_strides_dc", d_stride=sd, c_stride=sc)
    instgem.emit("loop_ws", ex_accumulate=1, **flags)


def rewrite(c: Chain, func, cfg: GemminiConfig):
    """The function's ops under `scf.if (the loop form applies) {the LOOP_WSs} else {them}`."""
    body = func.regions[0].blocks[0]
    ret = list(body.operations)[-1].operation
    original = [op.operation for op in body.operations][:-1]
    d = cfg.dim
    with InsertionPoint(ret), ret.location:
        pid = ir.call_grid(ret, PROGRAM_ID, 0)
        M, K, H, N = (cst(v) if isinstance(v, int) else i64(v) for v in (c.M, c.K, c.H, c.N))
        r0 = ir.binop("muli", pid, cst(c.block_m))
        rows = ir.binop("minsi", ir.binop("subi", M, r0), cst(c.block_m))
        (kb, pk), (hb, ph), (nb, pn), (ib, pi) = (_ceil_blocks(v, d) for v in (K, H, N, rows))
        fits = _all(_within(K, 1, c.block_k), _within(H, 1, c.block_h), _within(N, 1, c.block_n),
                    ir.cmpi("sge", rows, cst(1)), _holds(c.w1, ir.binop("muli", ir.binop("muli", kb, cst(d)), H)),
                    _holds(c.w2, ir.binop("muli", ir.binop("muli", hb, cst(d)), N)))
        if_op = scf.IfOp(fits, has_else=True)
        with InsertionPoint(if_op.then_block):
            then_yield = scf.YieldOp([])
        with InsertionPoint(if_op.else_block):
            else_yield = scf.YieldOp([])
    for op in original:
        op.move_before(else_yield.operation)
    with InsertionPoint(then_yield), ret.location:
        _emit(c, cfg, pid, (M, K, H, N), r0, ((kb, pk), (hb, ph), (nb, pn), (ib, pi)))


def _tiles(row_blocks, row_pad, col_blocks, col_pad, body):
    """chain_loop_tiles as scf.for loops over i64 Values: body((i0, rows, pad_i), (j0, cols, pad_j))."""
    cols = ir.binop("minsi", col_blocks, cst(LOOP_TILE_BLOCKS))
    rows = ir.binop("maxsi", ir.binop("divsi", cst(LOOP_TILE_BLOCKS), cols), cst(1))

    def part(v0, step, blocks, pad):
        n = ir.binop("minsi", step, ir.binop("subi", blocks, v0))
        return v0, n, select(ir.cmpi("eq", ir.binop("addi", v0, n), blocks), pad, cst(0))

    loop(cst(0), col_blocks, lambda j0: loop(cst(0), row_blocks, lambda i0: body(
        part(i0, rows, row_blocks, row_pad), part(j0, cols, col_blocks, col_pad)), step=rows), step=cols)


def _emit(c: Chain, cfg: GemminiConfig, pid, widths, r0, blocks):
    """One row block's program (module doc); the scratchpad laid out for the largest K, H, N the
    blocks allow: two X homes (the program's parity picks one), W1 up to w1_end, the row block's H
    from there, W2 after it."""
    d = cfg.dim
    M, K, H, N = widths
    (kb, pk), (hb, ph), (nb, pn), (ib, pi) = blocks
    kb_max, hb_max = (-(-v // d) for v in (c.block_k, c.block_h))
    a_rows = c.block_m * kb_max
    w1_end = 2 * a_rows + kb_max * hb_max * d
    w2_start = w1_end + c.block_m * hb_max
    x, w1, b1, w2, b2, y = (_base(v, e) for v, e in ((c.x, 1), (c.w1, 1), (c.b1, 4), (c.w2, 1), (c.b2, 4), (c.y, 1)))
    first = ir.cmpi("eq", pid, cst(0))      # program 0 moves W1 and W2 in; the others compute on them
    instgem.emit("config_ex", dataflow=1, acc_scale=f32_bits(1.0), a_stride=1, c_stride=1)
    _config_ld(0, K, d)
    _config_ld(2, cst(0), d)        # one bias row for every row (stride 0)
    instgem.emit("config_st", stride=N, acc_scale=scale_bits(c.scale1), activation=ACTIVATION_RELU * c.relu1)
    _config_ld(1, H, d)
    home = _mul(ir.binop("remsi", pid, cst(2)), cst(a_rows))

    def layer1(i, j):
        (i0, mi, qi), (j0, mj, qj) = i, j
        first_row = _add(r0, _mul(i0, cst(d)))            # the tile's, in X
        moves_w1 = _all(first, ir.cmpi("eq", i0, cst(0)))
        instgem.emit("loop_ws_config_spad_ab", a_addr_start=_add(home, _mul(i0, kb, cst(d))),
                     b_addr_end=_add(cst(2 * a_rows), _mul(_add(j0, mj), kb, cst(d))))
        _loop_ws((mi, mj, kb), (qi, qj, pk), a=select(ir.cmpi("eq", j0, cst(0)), _add(x, _mul(first_row, K)), cst(0)),
                 b=select(moves_w1, _add(w1, _mul(j0, cst(d))), cst(0)), d_addr=_add(b1, _mul(j0, cst(4 * d))), c=y,
                 strides=(K, H, cst(0), N), spad_only=1, inc_acc_addr=1,
                 c_spad_addr=_add(cst(w1_end), _mul(_add(_mul(i0, hb), j0), cst(d))))

    def layer2(i, j):
        (i0, mi, qi), (j0, mj, qj) = i, j
        first_row = _add(r0, _mul(i0, cst(d)))            # the tile's, in Y
        moves_w2 = _all(first, ir.cmpi("eq", i0, cst(0)))
        instgem.emit("loop_ws_config_spad_ab", a_addr_start=_add(cst(w1_end), _mul(i0, hb, cst(d))),
                     b_addr_end=_add(cst(w2_start), _mul(_add(j0, mj), hb, cst(d))))
        _loop_ws((mi, mj, hb), (qi, qj, ph), a=cst(0), b=select(moves_w2, _add(w2, _mul(j0, cst(d))), cst(0)),
                 d_addr=_add(b2, _mul(j0, cst(4 * d))), c=_add(y, _mul(first_row, N), _mul(j0, cst(d))),
                 strides=(cst(0), N, cst(0), N))

    _tiles(ib, pi, hb, ph, layer1)
    instgem.emit("config_st", stride=N, acc_scale=scale_bits(c.scale2), activation=ACTIVATION_RELU * c.relu2)
    _config_ld(1, N, d)
    _tiles(ib, pi, nb, pn, layer2)
    last = ir.cmpi("sge", ir.binop("addi", r0, cst(c.block_m)), M)
    if_op = scf.IfOp(last)
    with InsertionPoint(if_op.then_block):
        _restore_halves(cfg)
        scf.YieldOp([])


def _restore_halves(cfg: GemminiConfig):
    """After the launch's last program, each loop slot's scratchpad half back: a slot keeps what
    funct 24 placed (LoopMatmul sets a slot's half only at reset), and the LOOP_WSs of the kernels
    after the launch take each slot's half as theirs. funct 24 places the slot the next LOOP_WS
    takes, so the first slot gets the lower half and a LOOP_WS of one block that loads and stores
    nothing takes it; then the other slot gets the upper half. Which slot holds which half does
    not matter: loop-ws is written for either (a program cannot know its slot)."""
    half = loop_unit_half(cfg).sp_rows
    zero = cst(0)
    instgem.emit("loop_ws_config_spad_ab", a_addr_start=zero, b_addr_end=cst(half))
    _loop_ws((cst(1),) * 3, (zero,) * 3, a=zero, b=zero, d_addr=zero, c=zero, strides=(zero,) * 4)
    instgem.emit("loop_ws_config_spad_ab", a_addr_start=cst(half), b_addr_end=cst(2 * half))


def run(module_op, options: CompileOptions):
    cfg = options.config
    if options.dataflow != "WS" or not options.loop_ws or not cfg.mvout_spad:
        return
    for func in module_op.regions[0].blocks[0].operations:
        func = func.operation
        if func.name == "func.func" and len(func.regions[0].blocks):
            chain = match(func, cfg)
            if chain is not None:
                rewrite(chain, func, cfg)
    instgem.verify_fields(module_op)
