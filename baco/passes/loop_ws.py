"""loop-ws: a GEMM program's block loop nest as Gemmini's LOOP_WS hardware loop.

Input and output: placed linalg/memref IR (gemmini-placement's output, linalg-to-instgem's
input). A function matches when its only Gemmini work is the GEMM nest

    acc = 0 [; acc[window] = D window (int32, any DRAM row stride: a bias row at stride 0)]
    for k: A block[window] = A window; B block[window] = B window; acc += A block @ B block
    [epilogue: int8(relu(acc * scale))]; C window = acc[window]

(the shape of baco.kernels.matmul and of any kernel written the same way), or the same
without the K loop (one dot: K ≤ BLOCK_K written without a loop, or K = 1, which the
specialization folds), with every local window at row/column 0 of its block (proved from
the index arithmetic), the A window's rows and the B window's columns those of the C (and
D) window and the A window's columns the B window's rows (proved equal as expressions), WS
dataflow and blocks that fit LOOP_WS's halves of the memories. Each K step then becomes one
LOOP_WS (the five config commands and funct 8), as the C library's tiled_matmul_outer
issues it:

    I, J, K = ⌈rows/DIM⌉, ⌈cols/DIM⌉, ⌈window K/DIM⌉ blocks, pads = blocks·DIM − extent;
    D = the D window in the first step (ex_accumulate then adds onto it), else none;
    ex_accumulate = D given or not the first step; C = the C window in the last step,
    else none (the accumulator half keeps the partial sums); full_C for an int32 C;
    config_st carries the epilogue's scale and ReLU, config_ld the DRAM row strides.

A column-major A or B (strides (1, ld): placement's gemmini.transposed block) is one
LOOP_WS with a_transpose / b_transpose: LoopMatmul then moves the operand as stored (DRAM
rows are its columns: Aᵀ is K×I blocks, Bᵀ J×K, at (k·I + i)·DIM and (j·K + k)·DIM of its
half) and steps its row iterator over K (J), and the array transposes the blocks back
(config_ex's a_transpose / b_transpose, set before the loop, as the C library's
tiled_matmul_outer does); Spike's loop_ws uses the same layout. WS has one transposer, so
A and B both column-major stays with linalg-to-instgem (its located error).

Consecutive LOOP_WSs alternate the FSM's scratchpad halves (a_spad_id / b_spad_id 0: each loop's
slot's half, the slots taken in turn).
LoopMatmul moves each step's A and B in itself (the LOOP_WS's A and B addresses), so a
program is LOOP_WSs only and the loop unit overlaps one step's loads with the previous
step's computes (two loops in flight, LoopMatmul.scala). It moves every B block with DIM
rows (its row-pad test never fires), reading past the matrix when the step's K is ragged. The
rows past K are harmless to the result (A's padded K columns are fed as zeros) but must lie in
memory the program owns: when B's allocation (the kernel argument the B view reinterprets, its
size read at run time) holds the ⌈K/DIM⌉·DIM rows from the window's first row, a ragged step is
one LOOP_WS with pad_k, as the C library issues it (a B padded to whole DIM blocks: users' arrays,
baco.model's weights). Otherwise a ragged step of K >= DIM is two LOOP_WSs: its first K % DIM
columns as one padded K block (the DIM B rows it reads lie inside the window) and the whole blocks
after them, accumulating into the same accumulator half (the int32 sum is exact in any order):
the head last in a program's first step without a bias (the whole blocks' first compute then
waits only for their own first loads, the head's loads overlap their computes; a one-step GEMV
20x1x179 at DIM 16 816 -> 799 cycles on Gemmini alone), first in a later one. A step that
cannot be split (K < DIM, an empty K, or a ragged N of Bᵀ, whose DRAM rows are N) has its B moved
in explicitly just before it (mvins of the rows and columns that exist, into LoopMatmul's layout
in both halves, located at the kernel's load) and B address 0, while the FSM still loads A (its
ragged K is a column count, or Aᵀ's a row count, that LoopMatmul pads; an empty step's A is moved
in too). Those raw commands wait for the loop unit to drain, and the LOOP_WS after them reads B in
its loop slot's half, which the program cannot know, so the next LOOP_WS, in the other slot, loads
into the other half (_load_b). A program whose loop runs no step keeps the
original ops (acc = 0 or D, stored), under an scf.if.

A program whose K is one step keeps its B in the scratchpad for the next program of the launch,
as the C library keeps a resident B across its tiles (_Resident): down a column of programs
along M (b_spad_id), the programs after the first compute on it (address 0: the FSM does not
move it again, and an explicitly moved B is not moved again either). When that B is one column
block (a GEMV's), its ragged step is one padded LOOP_WS, as the C library's tiles over a resident
B are: the column's first program moves B's K rows in explicitly (unless B holds whole blocks)
instead of every program splitting the step in two LOOP_WSs. In a grid of one row of such programs
(num_programs(0) = 1, tested at run time), they keep A too, as the C library's a_reuse does: the
first program's LOOP_WS moves it into the bottom of the first half (a_spad_id 1), the programs
after it along axis 1 compute on it (address 0). Without a bias a ragged step of at least DIM is
split there in every program (a column is one program: nothing would reuse an explicitly moved
B, and the FSM's B loads need no drain of the loop unit, so the core issues a program's loops
while the previous program computes), whatever B's allocation holds (A lies alike in every
program): its whole blocks first, their A in the first half, then the head, its A block at the
bottom of the second half (a_spad_id 2), which stores C. With a bias A is kept where the step is
one LOOP_WS (_Resident.with_a).

Stays with linalg-to-instgem (explicit streams), because LOOP_WS cannot express it: OS;
blocks over half the scratchpad or accumulator (the FSM's halves; a block split over two
LOOP_WSs would need both in one accumulator half); a window not at row/column 0 of its
block (a negative offset under boundary_check: LoopMatmul fills blocks from row 0); an A
read from the accumulator (chained dots), several dots or accumulators, 3-D (sliced)
loads (LOOP_CONV_WS's); operand views whose row stride changes inside the loop. Not
matched although LOOP_WS could do it: an int8 D window (its low_D flag).

A residual add (baco.kernels.resadd: two int8 DRAM windows added into a zeroed accumulator
block through mvin-scaled acc_add loads, read out through the int8 epilogue, no dot) is one
LOOP_WS with is_resadd, as the C library's tiled_resadd issues it (match_resadd): load slots 0
and 1 carry the operands' DRAM strides and mvin scales (shrunk), config_st the epilogue's. An
operand read in place (a whole block at constant offsets, as a kernel compiled for its shapes
on a grid of one program folds it: no staging block or copy, the acc_add generic reads the DRAM
view) is matched the same way, and so is a store of the whole epilogue block. A program whose
rows are not whole DIM blocks keeps its explicit stream (LoopMatmul moves B's row blocks whole,
reading past B).

Everything else is left unchanged for linalg-to-instgem. On by default for WS; off with
the pipeline's `loop_ws=False` (launch option `loop_ws`) or BACO_LOOP_WS=0."""
from __future__ import annotations

import copy

from mlir.dialects import scf
from mlir.ir import Block, BlockArgument, DenseI64ArrayAttr, InsertionPoint, MemRefType

from baco.dialects import instgem
from baco.gemmini.abi import NUM_PROGRAMS, PROGRAM_ID
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import CONCURRENT_LOOPS
from baco.gemmini.schedule import HEAD_LAST_BLOCKS, loop_unit_half, loop_ws_fits
from baco.options import CompileOptions
from baco.passes import irutil as ir
from baco.passes import prefetch
from baco.passes.irutil import alloc_of
from baco.passes.linalg_to_instgem import cst, dram_addr_and_stride, f32_bits, i64, loop, scale_bits, select
from baco.passes.loop_facts import (Facts, block_space, const_value, hoist_above, local_window, not_a_conv,
                                    subview_ops)

# ---- matching ---------------------------------------------------------------------------------

class Nest:
    """The matched GEMM nest of one function (`loop` None: a single step, no K loop)."""
    loop = acc = a_copy = b_copy = matmul = store = epilogue = bias_copy = None
    acc_init = ()
    relu, scale = 0, None
    a_t = b_t = False       # A / B column-major (moved in transposed, transposed back by the array)


def _dram_window(view, transposed=False) -> bool:
    """A 2-D DRAM view (a unit-step subview, or a whole reinterpreted argument) with contiguous
    rows, or contiguous columns when `transposed` (a column-major operand): the DMA's row
    stride is the other dimension's stride (_stride_source's)."""
    name = getattr(view.owner, "name", None)
    if name not in ("memref.subview", "memref.reinterpret_cast") or len(MemRefType(view.type).shape) != 2:
        return False
    layout = str(MemRefType(view.type).layout).replace(" ", "")
    if not layout.startswith("strided<["):
        return False
    if layout[len("strided<["):].split("]")[0].split(",")[int(not transposed)] != "1":
        return False
    return name == "memref.reinterpret_cast" or \
        list(DenseI64ArrayAttr(view.owner.attributes["static_strides"])) == [1, 1]


def _stride_source(view):
    """The view whose strides a DRAM window's are: a subview's source, or the view itself."""
    return view.owner.operands[0] if view.owner.name == "memref.subview" else view


def match(func, cfg: GemminiConfig):
    """The function's GEMM nest if LOOP_WS expresses it exactly (module doc), else None."""
    top = [o.operation for o in func.regions[0].blocks[0].operations]
    found = _dot(func, top)
    if found is None:
        return None
    n, a, b = found
    body = prefetch.body_ops(n.loop) if n.loop is not None else top
    if not _loads(n, a, b, body):
        return None
    at = {op: i for i, op in enumerate(top)}
    i_loop = at[n.loop or n.matmul]
    if n.loop is None and (at[n.a_copy] > i_loop or at[n.b_copy] > i_loop):
        return None
    if not _accumulator(n, top, at, i_loop, not_a_conv(func)):
        return None
    if not _windows_match(n, Facts()):
        return None
    return n if _expressible(n, a, b, body, cfg) else None


def _dot(func, top):
    """(Nest with its accumulator, dot and K loop, A's alloc, B's alloc): the function's one dot
    of two scratchpad blocks into an accumulator block, in a K loop at the top or alone (no K
    loop), else None."""
    ops = ir.walk_ops(func)
    allocs = [o for o in ops if o.name == "memref.alloc" and block_space(o) is not None]
    spaces = sorted(block_space(o) for o in allocs)
    if spaces not in (["acc", "spad", "spad"], ["acc", "epilogue", "spad", "spad"]):
        return None
    if any("gemmini.slice_rows" in o.attributes for o in allocs):
        return None
    n = Nest()
    n.acc = next(o for o in allocs if block_space(o) == "acc")
    matmuls = [o for o in ops if o.name == "linalg.matmul"]
    if len(matmuls) != 1 or n.acc not in top:
        return None
    n.matmul = matmuls[0]
    parent = n.matmul.parent.operation if n.matmul.parent is not None else None
    if parent is not None and parent.name == "scf.for":
        n.loop = parent
        if n.loop not in top or any(list(r.uses) for r in n.loop.results):
            return None
    elif n.matmul not in top:   # else no K loop (K ≤ BLOCK_K folded it away): one step
        return None
    a, b, c = (alloc_of(v) for v in n.matmul.operands)
    if c is None or c.operation != n.acc or n.matmul.operands[2] != n.acc.result or \
            any(x is None or block_space(x.operation) != "spad" for x in (a, b)) or \
            n.matmul.operands[0] != a.result or n.matmul.operands[1] != b.result:
        return None
    # column-major operands are moved in as stored (DRAM rows are their columns) and transposed
    # by the array (config_ex); WS has one transposer, for A or B (the explicit stream says so)
    n.a_t, n.b_t = ("gemmini.transposed" in x.attributes for x in (a, b))
    if (n.a_t and n.b_t) or any("gemmini.transposed" in o.attributes for o in allocs
                                if o not in (a.operation, b.operation)):
        return None
    return n, a, b


def _loads(n: Nest, a, b, body) -> bool:
    """Finds the A and B loads (n.a_copy, n.b_copy): the loop does the two loads and the dot,
    nothing else with memory."""
    for op in body:
        if op.name == "memref.copy":
            dst = alloc_of(op.operands[1])
            if dst is not None and dst.operation in (a.operation, b.operation):
                if alloc_of(op.operands[0]) is not None:
                    return False
                if dst.operation == a.operation and n.a_copy is None:
                    n.a_copy = op
                elif dst.operation == b.operation and n.b_copy is None:
                    n.b_copy = op
                else:
                    return False
            elif n.loop is not None:
                return False
        elif n.loop is None:    # the function's other ops are checked below, through the blocks' uses
            continue
        elif op.name == "memref.alloc":
            if op not in (a.operation, b.operation):
                return False
        elif not (prefetch.is_pure(op) or prefetch.is_boundary_check(op) or op == n.matmul
                  or op.name == "scf.yield"):
            return False
    if n.a_copy is None or n.b_copy is None:
        return False
    return len(list(a.result.uses)) == 2 and len(list(b.result.uses)) == 2    # its window's view and the dot


def _accumulator(n: Nest, top, at, i_loop, gemm_kernel: bool) -> bool:
    """Finds what the accumulator block does outside the dot (n.acc_init, n.bias_copy,
    n.epilogue, n.store): zeroed, maybe loaded from a D window, before the loop; stored after it,
    directly or through the epilogue's block. In a GEMM kernel (`gemm_kernel`: baco.loop_conv =
    false) a D window as whole as the block may stand alone (a launch compiled for its shapes folds
    the zeros under it away); a convolution's such nest is a one-pixel program, left to
    loop-conv-ws, as the tuner prices it."""
    inits, stores, epilogue_alloc = [], [], None
    for use in n.acc.result.uses:
        user = use.owner
        if user == n.matmul:
            continue
        if user.name in ("linalg.fill", "linalg.map") and ir.is_zero_fill(user) and at.get(user, i_loop) < i_loop:
            inits.append(user)
        elif user.name in ("memref.subview", "memref.copy") and user in at:
            view = user.result if user.name == "memref.subview" else n.acc.result
            for cp in [u.owner for u in user.result.uses] if user.name == "memref.subview" else [user]:
                if cp.name != "memref.copy" or cp not in at:
                    return False
                if cp.operands[1] == view and at[cp] < i_loop and n.bias_copy is None and \
                        alloc_of(cp.operands[0]) is None:
                    n.bias_copy = cp
                elif cp.operands[0] == view and at[cp] > i_loop and alloc_of(cp.operands[1]) is None:
                    stores.append(cp)
                else:
                    return False
        elif user.name == "linalg.generic" and "gemmini.epilogue" in user.attributes and user in at \
                and at[user] > i_loop and n.epilogue is None and user.operands[0] == n.acc.result:
            n.epilogue = user
            epilogue_alloc = alloc_of(user.operands[1])
        else:
            return False
    whole_bias = gemm_kernel and n.bias_copy is not None and n.bias_copy.operands[1] == n.acc.result
    if len(inits) != (0 if whole_bias else 1) or (n.bias_copy is not None and inits and at[n.bias_copy] < at[inits[0]]):
        return False
    if n.epilogue is not None and (stores or not _epilogue(n, epilogue_alloc, top, at, i_loop, stores)):
        return False
    if len(stores) != 1:
        return False
    n.store = stores[0]
    n.acc_init = tuple(inits)
    return True


def _epilogue(n: Nest, epilogue_alloc, top, at, i_loop, stores) -> bool:
    """Appends the epilogue block's one store to `stores` and reads the epilogue's ReLU and scale
    (n.relu, n.scale: a kernel argument or constant, not computed after the loop)."""
    if epilogue_alloc is None or user_count(epilogue_alloc) != 2:
        return False
    for use in epilogue_alloc.result.uses:
        user = use.owner
        if user == n.epilogue:
            continue
        if user.name not in ("memref.subview", "memref.copy") or user not in at:
            return False
        view = user.result if user.name == "memref.subview" else epilogue_alloc.result
        copies = [u.owner for u in view.uses] if user.name == "memref.subview" else [user]
        if len(copies) != 1 or copies[0].name != "memref.copy" or copies[0].operands[0] != view \
                or copies[0] not in at or alloc_of(copies[0].operands[1]) is not None:
            return False
        stores.append(copies[0])
    attrs = n.epilogue.attributes["gemmini.epilogue"]
    n.relu = int(str(ir.Attribute(attrs["relu"])) == "true")
    n.scale = ir.scale_operand(n.epilogue)
    return not (n.scale is not None and n.loop is not None and not isinstance(n.scale.owner, Block)
                and n.scale.owner.operation in top[i_loop:])


def _expressible(n: Nest, a, b, body, cfg: GemminiConfig) -> bool:
    """The matched nest within LOOP_WS's reach: blocks in the FSM's halves, an int8 (epilogue) or
    readable int32 output, DRAM windows with contiguous rows, row strides set before the loop."""
    bm, bk = MemRefType(a.result.type).shape
    if not loop_ws_fits(bm, MemRefType(b.result.type).shape[1], bk, cfg):
        return False
    out_elem = str(MemRefType(n.store.operands[1].type).element_type)
    if out_elem not in ("i8", "i32") or (out_elem == "i32") != (n.epilogue is None):
        return False
    if out_elem == "i32" and not cfg.acc_read_full_width:
        return False
    views = [(n.a_copy.operands[0], n.a_t), (n.b_copy.operands[0], n.b_t), (n.store.operands[1], False)] + \
        ([(n.bias_copy.operands[0], False)] if n.bias_copy else [])
    if not all(_dram_window(v, t) for v, t in views):
        return False
    for cp in (n.a_copy, n.b_copy):     # their row strides are set once, before the loop
        if n.loop is not None and _stride_source(cp.operands[0]).owner.operation in body:
            return False
    return True


def user_count(alloc) -> int:
    return len(list(alloc.result.uses))


def _windows_match(n: Nest, facts: Facts) -> bool:
    a = local_window(n.a_copy.operands[1])
    b = local_window(n.b_copy.operands[1])
    c = local_window(n.store.operands[0])
    if a is None or b is None or c is None:
        return False
    wins = [a, b, c]
    dw = None
    if n.bias_copy is not None:
        dw = local_window(n.bias_copy.operands[1])
        if dw is None:
            return False
        wins.append(dw)
    if not all(facts.zero(off) for w in wins for off in w[0]):
        return False
    (a_rows, a_cols), (b_rows, b_cols), (c_rows, c_cols) = a[1], b[1], c[1]
    same = facts.same
    if not (same(a_rows, c_rows) and same(b_cols, c_cols) and same(a_cols, b_rows)):
        return False
    return dw is None or (same(dw[1][0], c_rows) and same(dw[1][1], c_cols))


# ---- rewriting -------------------------------------------------------------------------------

def rewrite(n: Nest, cfg: GemminiConfig) -> bool:
    """Replace the nest (match's result) by LOOP_WS steps; False (nothing changed) if the
    ops after the loop cannot move."""
    if n.loop is None:
        _rewrite_single_step(n, cfg)
        return True
    epi_alloc = alloc_of(n.epilogue.operands[1]).operation if n.epilogue is not None else None
    tail = ([epi_alloc, n.epilogue] if n.epilogue is not None else []) + \
        subview_ops([n.store.operands[0]]) + [n.store]
    if not hoist_above(n.loop, tail):
        return False
    at = {op: i for i, op in enumerate(o.operation for o in n.loop.block.operations)}
    lb, ub = list(n.loop.operands)[:2]
    with InsertionPoint(n.loop), n.loop.location:
        if_op = scf.IfOp(ir.cmpi("slt", lb, ub), has_else=True)
        with InsertionPoint(if_op.then_block):
            then_yield = scf.YieldOp([])
        with InsertionPoint(if_op.else_block):
            else_yield = scf.YieldOp([])
    # a program whose loop runs no step: the original accumulator init and store
    head = [n.acc] + list(n.acc_init)
    if n.bias_copy is not None:
        head += subview_ops([n.bias_copy.operands[1]]) + [n.bias_copy]
    for op in sorted(set(head) | set(tail), key=at.get):     # (one view may serve D and C)
        op.move_before(else_yield.operation)
    n.loop.move_before(then_yield.operation)
    with InsertionPoint(n.loop), n.loop.location:
        strides = _configs(n, cfg)
        resident = _Resident.of(n)
    # the loopless program ends in the configuration the LOOP_WS program ends in, so the next
    # program provably starts in it (config-elimination then runs the configs only in the first
    # program: a config_ld between LOOP_WSs would wait for the loop unit to drain)
    with InsertionPoint(else_yield), n.loop.location:
        _configs(n, cfg)
    with InsertionPoint(n.matmul), n.matmul.location:
        lb, ub, step = (i64(v) for v in list(n.loop.operands)[:3])
        iv = i64(n.loop.regions[0].blocks[0].arguments[0])
        _step(n, cfg, strides, first=ir.cmpi("eq", iv, lb), last=ir.cmpi("sge", ir.binop("addi", iv, step), ub),
              resident=resident)
    for op in _operand_ops(n):
        op.erase()
    return True


def _operand_ops(n: Nest):
    """The dot, the A and B loads, their local views and blocks (users first)."""
    a_alloc, b_alloc = alloc_of(n.a_copy.operands[1]).operation, alloc_of(n.b_copy.operands[1]).operation
    return [n.matmul, n.a_copy, n.b_copy] + subview_ops([n.a_copy.operands[1], n.b_copy.operands[1]]) + \
        [a_alloc, b_alloc]


def _rewrite_single_step(n: Nest, cfg: GemminiConfig):
    """A nest without a K loop as one LOOP_WS, at the store (every address is known there)."""
    with InsertionPoint(n.store), n.store.location:
        strides = _configs(n, cfg)
        _step(n, cfg, strides, first=True, last=True, resident=_Resident.of(n))
    ops = [n.store, n.matmul, n.a_copy, n.b_copy] + list(n.acc_init) + \
        ([n.epilogue] if n.epilogue is not None else []) + ([n.bias_copy] if n.bias_copy is not None else [])
    views = []
    for v in subview_ops([n.store.operands[0], n.a_copy.operands[1], n.b_copy.operands[1]] +
                    ([n.bias_copy.operands[1]] if n.bias_copy is not None else [])):
        if v not in views:      # (one view may serve D and C)
            views.append(v)
    allocs = [alloc_of(v).operation for v in [n.a_copy.operands[1], n.b_copy.operands[1]] +
              ([n.epilogue.operands[1]] if n.epilogue is not None else [])] + [n.acc]
    for op in ops + views + allocs:
        op.erase()


def _addr_stride(view, esize, transposed=False):
    """(byte address of element [0, 0], row stride in elements, in bytes) of a DRAM view, as i64
    (a column-major view's rows are its columns)."""
    addr, row_bytes = dram_addr_and_stride(view, esize, int(transposed))
    return addr, ir.binop("divsi", row_bytes, cst(esize)) if esize != 1 else row_bytes, row_bytes


def _config_ld(slot, stride_bytes, dim):
    instgem.emit("config_ld", state_id=slot, stride=stride_bytes, scale=f32_bits(1.0), block_stride=dim,
                 pixel_repeats=1)


def _configs(n: Nest, cfg: GemminiConfig):
    """config_ld of each LOOP_WS load slot (the DRAM row stride; block stride DIM, the FSM's
    layout of a multi-block mvin) and config_st (C's row stride, the epilogue's scale and
    ReLU), once before the loop. Returns the row strides in elements (A, B, D, C)."""
    d = cfg.dim
    _, a_stride, _ = _addr_stride(_stride_source(n.a_copy.operands[0]), 1, n.a_t)
    _, b_stride, _ = _addr_stride(_stride_source(n.b_copy.operands[0]), 1, n.b_t)
    if n.a_t or n.b_t:      # the array transposes the operand back (as transpose_config sets it)
        instgem.emit("config_ex", dataflow=1, acc_scale=f32_bits(1.0), a_stride=1, c_stride=1,
                     a_transpose=int(n.a_t), b_transpose=int(n.b_t))
    _config_ld(0, a_stride, d)
    _config_ld(1, b_stride, d)
    d_stride = cst(0)
    if n.bias_copy is not None:
        _, d_stride, d_bytes = _addr_stride(n.bias_copy.operands[0], 4)
        _config_ld(2, d_bytes, d)
    # config_st as linalg-to-instgem's store sets it, so the branches agree (config elimination)
    _, c_stride, c_bytes = _addr_stride(n.store.operands[1], 1 if n.epilogue is not None else 4)
    instgem.emit("config_st", stride=c_bytes, activation=n.relu, acc_scale=scale_bits(n.scale))
    return a_stride, b_stride, d_stride, c_stride


class _Step:
    """A K step's extents as i64 Values (from its A and B windows' sizes: rows, K, columns;
    an empty K counts as one zero column), block counts and DRAM views."""

    def __init__(self, n: Nest, cfg: GemminiConfig, a_view, b_view, rows, kk, cols):
        d = cfg.dim
        self.a_view, self.b_view = a_view, b_view
        self.rows, kk, self.cols = (cst(v) if isinstance(v, int) else i64(v) for v in (rows, kk, cols))
        self.empty = ir.cmpi("eq", kk, cst(0))
        self.kk = ir.binop("maxsi", kk, cst(1))
        self.bi, self.bj, self.bk = (_blocks(v, d) for v in (self.rows, self.cols, self.kk))
        # the operands' DRAM rows as (block count, extent): Aᵀ's are K, Bᵀ's are J
        self.a_dims = ((self.bk, self.kk), (self.bi, self.rows)) if n.a_t else ((self.bi, self.rows), (self.bk, self.kk))
        self.b_dims = ((self.bj, self.cols), (self.bk, self.kk)) if n.b_t else ((self.bk, self.kk), (self.bj, self.cols))

    @classmethod
    def of_body(cls, n: Nest, cfg: GemminiConfig, mapping=None):
        """The step of the nest's windows; with `mapping`, of the cloned values it maps them to."""
        def get(v):
            return v if mapping is None else mapping.get(v, v)
        (_, (rows, kk)), (_, (_, cols)) = local_window(n.a_copy.operands[1]), local_window(n.b_copy.operands[1])
        return cls(n, cfg, get(n.a_copy.operands[0]), get(n.b_copy.operands[0]), get(rows), get(kk), get(cols))

    def a_addr(self, n):
        return _addr_stride(self.a_view, 1, n.a_t)[0]

    def b_addr(self, n):
        return _addr_stride(self.b_view, 1, n.b_t)[0]

    def b_base(self, cfg, spad_id):
        """B's first local row in LOOP_WS's layout: it ends at spad_id halves of the scratchpad."""
        return ir.binop("subi", ir.binop("muli", spad_id, cst(loop_unit_half(cfg).sp_rows)),
                        ir.binop("muli", ir.binop("muli", self.bk, self.bj), cst(cfg.dim)))


def _blocks(extent, d: int):
    """ceil(extent / d) of a count that is never negative nor near 2^63 (a window's rows, columns
    or K, its DIM blocks), unsigned: (extent + d - 1) / d, a shift for a power of two, where the
    backends would otherwise correct a signed division for a negative dividend the IR cannot
    rule out (value_range does not bound a window's extent)."""
    return ir.binop("divui", ir.binop("addi", extent, cst(d - 1)), cst(d))


def _move(cfg: GemminiConfig, name, addr, stride, rows_dim, cols_dim, base, empty):
    """mvins (`name`: mvin A, mvin2 B) of an operand's DRAM rows into LoopMatmul's layout:
    row block r, column chunk c of MAX_BLOCK_LEN blocks at base + (r·col_blocks + c·MBL)·DIM,
    the rows and columns that exist (an empty step moves zeros from address 0)."""
    d, mbl = cfg.dim, cfg.max_block_len
    (row_blocks, row_extent), (col_blocks, col_extent) = rows_dim, cols_dim
    chunks = _blocks(col_blocks, mbl)

    def move(t):
        r, c = ir.binop("divui", t, chunks), ir.binop("remui", t, chunks)
        c0 = ir.binop("muli", c, cst(mbl * d))
        dram = ir.binop("addi", addr, ir.binop("addi", ir.binop("muli", ir.binop("muli", r, cst(d)), stride), c0))
        local = ir.binop("addi", base, ir.binop("muli", ir.binop("addi", ir.binop("muli", r, col_blocks),
                                                                 ir.binop("muli", c, cst(mbl))), cst(d)))
        instgem.emit(name, dram_addr=select(empty, cst(0), dram), local_addr=local,
                     cols=ir.binop("minsi", ir.binop("subi", col_extent, c0), cst(mbl * d)),
                     rows=ir.binop("minsi", ir.binop("subi", row_extent, ir.binop("muli", r, cst(d))), cst(d)))
    loop(cst(0), ir.binop("muli", row_blocks, chunks), move)


def _load_b(n: Nest, cfg: GemminiConfig, strides, s: _Step, halves):
    """A step's B moved in explicitly into each of `halves` (i64 Values: spad ids), where its LOOP_WS
    (B address 0) reads it. The mvins are raw commands, so the CPU issues them only once the loop unit
    holds no loop: no earlier LOOP_WS still reads or writes the scratchpad. The LOOP_WS then takes
    the next loop slot, which the program cannot know (slots alternate over every LOOP_WS Gemmini
    runs), so a B that is not kept goes into both halves and the LOOP_WS reads it in its slot's half
    (b_spad_id 0): the next LOOP_WS, of this program or the next, takes the other slot and loads into
    the other half, and the one after it takes this slot only once this LOOP_WS has issued all of its
    commands (LoopMatmul frees its head slot then). A kept B (_Resident) goes into the half its
    column names: the programs after it load no B, the next column's goes into the other half."""
    with n.b_copy.location:     # (a fault of a move names the kernel's load)
        for half in halves:
            _move(cfg, "mvin2", s.b_addr(n), strides[1], *s.b_dims, s.b_base(cfg, half), s.empty)


def _load_a(n: Nest, cfg: GemminiConfig, strides, s: _Step):
    """An empty step's A (zeros) moved in explicitly into both halves, where its LOOP_WS (A address 0,
    a_spad_id 0: its slot's half) reads it, as _load_b moves a B that is not kept."""
    with n.a_copy.location:
        for half in range(CONCURRENT_LOOPS):
            _move(cfg, "mvin", s.a_addr(n), strides[0], *s.a_dims, cst(half * loop_unit_half(cfg).sp_rows), s.empty)


def _step(n: Nest, cfg: GemminiConfig, strides, first, last, resident: _Resident | None):
    """One K step as LOOP_WS (module doc) at the insertion point: `first` / `last` (i1 Values, or
    True) say whether it is the first / last step. LoopMatmul moves A and B in itself, but it
    moves every B block with DIM rows (Bᵀ: every block of Bᵀ with DIM rows of N), reading past the
    window when the step's K (Bᵀ: N) is not a whole number of blocks. Where B's allocation holds
    those rows (_b_holds_blocks) a ragged step is one LOOP_WS with pad_k; else a ragged K of at least
    DIM is split: a LOOP_WS of the whole blocks after its first K % DIM columns and one of those
    columns as one padded block (_ragged_head: its DIM B rows lie inside the window; after the whole
    blocks in the first step, before them in a later one). A step that cannot be
    split (K < DIM, an empty K, a ragged Bᵀ) has its B moved in explicitly (_load_b) just before its
    LOOP_WS, whose B address is then 0 (A, whose ragged K is a padded column or row count LoopMatmul
    honours, is still the FSM's, unless the step is empty).
    A step that is the program's whole K keeps its B when `resident` (_Resident) says the programs
    along axis 0 share it, and its A when they are a one-row grid along axis 1: under an scf.if, the
    step's code with B and A in fixed halves (a ragged B of one column block moved in explicitly, not
    split); else as above."""
    s = _Step.of_body(n, cfg)
    if resident is None:
        _step_loops(n, cfg, strides, s, first, last, _Resident())
        return
    if_op = scf.IfOp(_and(_and(first, last), _not(s.empty)), has_else=True)
    with InsertionPoint(if_op.then_block):
        _kept_step(n, cfg, strides, s, first, last, resident)
        scf.YieldOp([])
    with InsertionPoint(if_op.else_block):
        _step_loops(n, cfg, strides, s, first, last, _Resident())
        scf.YieldOp([])


def _kept_step(n: Nest, cfg: GemminiConfig, strides, s: _Step, first, last, keep: _Resident):
    """_step_loops of a whole-K step keeping `keep`'s B, and its A in a one-row grid: under a branch
    of its own (num_programs(0) = 1), so that the programs of other grids pay only its test."""
    if not keep.a:
        _step_loops(n, cfg, strides, s, first, last, keep)
        return
    if_op = scf.IfOp(ir.cmpi("eq", ir.call_grid(n.store, NUM_PROGRAMS, 0), cst(1)), has_else=True)
    with InsertionPoint(if_op.then_block):
        _step_loops(n, cfg, strides, s, first, last, keep.with_a(n, cfg, s))
        scf.YieldOp([])
    with InsertionPoint(if_op.else_block):
        _step_loops(n, cfg, strides, s, first, last, keep)
        scf.YieldOp([])


def _step_loops(n: Nest, cfg: GemminiConfig, strides, s: _Step, first, last, keep: _Resident):
    """_step's LOOP_WSs and explicit moves of step `s`, keeping `keep`'s operands."""
    d = cfg.dim
    whole = ir.cmpi("eq", ir.binop("remui", s.cols if n.b_t else s.kk, cst(d)), cst(0))
    split = ir.const_int(0, whole.type)
    head_last = False
    if not n.b_t:
        whole = _or_else(whole, lambda: _and(keep.padded_b, _b_holds_blocks(n, cfg, strides, s)))
    kept_column = keep.b and _one_column_block(n, cfg)
    if not n.b_t and (not kept_column or keep.split_kept_column is not False):
        split = ir.binop("andi", _not(whole), ir.cmpi("sge", s.kk, cst(d)))
        if kept_column:
            split = _and(split, keep.split_kept_column)
        # a split step's head after its whole blocks, under a branch of its own (its loop registers
        # constants): in a one-row grid of several programs keeping A (keep.head_last: A's blocks lie
        # alike in every program), and, without a bias (schedule.head_last_split), where the step is
        # the program's first (its only: a ragged step is the last) and they are more than one (no
        # compute chain runs before it: their first compute then waits only for their own first
        # loads, up to MAX_BLOCK_LEN blocks of A a mvin, not for the head's too); else before them.
        # The second is not tested in a K loop of constant bounds and several steps (a
        # shape-specialized program's ragged K loop: its CPU would pay the test every step)
        if _k_steps(n) in (1, None) and n.bias_copy is None:
            head_last = _and(_and(split, first), ir.cmpi("sgt", s.kk, cst((HEAD_LAST_BLOCKS - 1) * d)))
        head_last = _or(head_last, _and(split, keep.head_last))
        _when(_and(split, _not(head_last)), lambda: _ragged_head(n, cfg, strides, s, first, False, keep, 1))
    if head_last is False:
        _step_rest(n, cfg, strides, s, first, last, keep, whole, split)
        return
    if_op = scf.IfOp(head_last, has_else=True)
    with InsertionPoint(if_op.then_block):
        _whole_blocks(n, cfg, strides, s, first, False, keep, True, True, 1)
        _ragged_head(n, cfg, strides, s, False, last, keep, 2)
        scf.YieldOp([])
    with InsertionPoint(if_op.else_block):
        _step_rest(n, cfg, strides, s, first, last, keep, whole, split)
        scf.YieldOp([])


def _step_rest(n: Nest, cfg: GemminiConfig, strides, s: _Step, first, last, keep: _Resident, whole, split):
    """_step_loops' explicit moves of B (a ragged step not `split`) or of an empty step's A, then the
    LOOP_WS of the step's blocks (the whole ones when `split`: its head went before, with D)."""
    by_fsm = ir.binop("andi", whole, _not(s.empty))
    b_fsm = ir.binop("ori", by_fsm, split)
    moved = _and(_not(b_fsm), _not(keep.reuse_b))
    prefetch.when(moved, lambda: _load_b(n, cfg, strides, s, keep.b_halves()))
    prefetch.when(s.empty, lambda: _load_a(n, cfg, strides, s))
    _whole_blocks(n, cfg, strides, s, first, last, keep, split, b_fsm, 2, head_before=True)


def _whole_blocks(n: Nest, cfg: GemminiConfig, strides, s: _Step, first, last, keep: _Resident, split, b_fsm,
                  half: int, head_before=False):
    """The LOOP_WS of step `s`'s blocks, or when `split` (i1 or bool) of its whole blocks after the
    head's K % DIM columns (a kept B's then in `half`; `head_before`: the head went before them, with
    D, so they are not the first); B moved by the FSM when `b_fsm` (i1 or bool), else already in
    place."""
    d, zero = cfg.dim, cst(0)

    def sel(cond, a, b):
        return (a if cond else b) if isinstance(cond, bool) else select(cond, a, b)
    head = ir.binop("remui", s.kk, cst(d))            # the columns the head took (0 unless split)
    a_stride, b_stride = strides[:2]
    a_addr = ir.binop("addi", s.a_addr(n), ir.binop("muli", head, a_stride) if n.a_t else head)
    b_addr = ir.binop("addi", s.b_addr(n), ir.binop("muli", head, b_stride))
    if head_before:
        first = _not(split) if first is True else select(split, ir.const_int(0, split.type), first)
    _emit_loop(n, cfg, strides, s, first=first, last=last,
               bk=sel(split, ir.binop("subi", s.bk, cst(1)), s.bk),
               pad_k=sel(split, zero, ir.binop("subi", ir.binop("muli", s.bk, cst(d)), s.kk)),
               a_addr=keep.addr("a", sel(s.empty, zero, sel(split, a_addr, s.a_addr(n)))),
               b_addr=keep.addr("b", sel(b_fsm, sel(split, b_addr, s.b_addr(n)), zero)),
               b_spad=sel(split, cst(half), keep.first_half) if keep.b else zero, a_spad=keep.a_spad)


def _one_column_block(n: Nest, cfg: GemminiConfig) -> bool:
    """Whether B's block is one DIM-wide column (a GEMV's): kept, a ragged B of it is moved in
    explicitly by its column's first program (a mvin a DIM rows) rather than split every program.
    A wider B's mvins, one a DIM rows and MAX_BLOCK_LEN blocks, each issued after the loop unit
    drains, cost more than the split's second LOOP_WS over a column of a few programs."""
    return MemRefType(alloc_of(n.b_copy.operands[1]).result.type).shape[1] <= cfg.dim


def _k_steps(n: Nest):
    """The K loop's trip count when its bounds are constants (1 without a loop), else None."""
    if n.loop is None:
        return 1
    lb, ub, step = (const_value(v) for v in list(n.loop.operands)[:3])
    return None if None in (lb, ub, step) or step <= 0 else max(0, -(-(ub - lb) // step))


def _when(cond, build):
    """prefetch.when for an i1 Value or a bool (True: build here; False: nothing)."""
    if isinstance(cond, bool):
        if cond:
            build()
        return
    prefetch.when(cond, build)


def _and(a, b):
    """a and b, each an i1 Value or a bool."""
    if isinstance(a, bool) or isinstance(b, bool):
        return (b if a else a) if isinstance(a, bool) else (a if b else b)
    return ir.binop("andi", a, b)


def _or(a, b):
    """a or b, each an i1 Value or a bool."""
    if isinstance(a, bool):
        return True if a else b
    if isinstance(b, bool):
        return True if b else a
    return ir.binop("ori", a, b)


def _not(cond):
    if isinstance(cond, bool):
        return not cond
    return ir.binop("xori", cond, ir.const_int(1, cond.type))


def _or_else(cond, build):
    """i1 `cond or build()`, build()'s ops run only where `cond` is false (a whole K step, the
    common case, skips the ragged step's check)."""
    if_op = scf.IfOp(cond, [cond.type], has_else=True)
    with InsertionPoint(if_op.then_block):
        scf.YieldOp([ir.const_int(1, cond.type)])
    with InsertionPoint(if_op.else_block):
        scf.YieldOp([build()])
    return if_op.results[0]


def _b_holds_blocks(n: Nest, cfg: GemminiConfig, strides, s: _Step):
    """i1: the allocation B's window lies in holds the ⌈K/DIM⌉·DIM rows LoopMatmul reads from the
    window's first row (the step's K blocks, each DIM rows) over the window's columns, so a ragged
    step is one LOOP_WS with pad_k (the rows past K meet A's padded columns, fed as zeros). Read at
    run time from the kernel argument's size (a 1-D memref with the identity layout, which the B
    view reinterprets); false when B is not such a view."""
    cast = _stride_source(s.b_view).owner
    if cast.name != "memref.reinterpret_cast":
        return ir.const_int(0, ir.IntegerType.get_signless(1))
    base = cast.operands[0]
    t = MemRefType(base.type)
    if len(t.shape) != 1 or str(t.layout) != "affine_map<(d0) -> (d0)>" or str(t.element_type) != "i8":
        return ir.const_int(0, ir.IntegerType.get_signless(1))
    size = ir.create("memref.dim", operands=[base, ir.const_index(0)], results=[ir.index()]).result
    start = ir.create("memref.extract_aligned_pointer_as_index", operands=[base], results=[ir.index()]).result
    end = ir.binop("addi", i64(start), i64(size))
    last = ir.binop("addi", ir.binop("muli", ir.binop("subi", ir.binop("muli", s.bk, cst(cfg.dim)), cst(1)),
                                     strides[1]), s.cols)
    return ir.cmpi("sle", ir.binop("addi", s.b_addr(n), last), end)


class _Resident:
    """The operands a program of one K step keeps in the scratchpad for the next program of the
    launch, as the C library keeps a resident A or B across its tiles (its a_reuse / b_reuse). The
    harnesses run a launch's programs in order, axis 0 innermost, with the same arguments on one
    Gemmini (config_elimination relies on the same), so program (p0, p1, p2) follows (p0 - 1, p1, p2)
    when p0 > 0, and (0, p1 - 1, p2) when p1 > 0 in a grid of one program along axis 0.

    B, down a column along axis 0: when the B window (its DRAM view, its K and column extents) and
    the K loop's bounds cannot differ between programs along axis 0 (_varies), a whole-K step's
    LOOP_WSs put their B in fixed halves (b_spad_id: a split step's in halves 1 and 2; one
    LOOP_WS's, or an explicitly moved B, in half 1 + p1 % 2, so a column's first program moves its
    B in while the previous column still computes on the other half) and every program after the
    first of its column computes on it (B address 0, no explicit mvins). A ragged step over a B of
    one column block is then not split in two LOOP_WSs: the column's first program moves its B in
    explicitly (unless B holds whole blocks) and every program's step is one padded LOOP_WS, as the
    C library's tiles over a resident B are (_one_column_block).

    A, along a one-row grid (num_programs(0) = 1: the programs walk the columns): when the A window
    (its DRAM view, its row and K extents) and the K loop's bounds cannot differ between programs
    along axis 1, A goes to the bottom of the first half (a_spad_id 1) and every program after the
    first computes on it (A address 0: LdA does not run, baco.sim.loops), where its step has the
    same form in every program (with_a: without a bias a ragged step of at least DIM split, the
    head's A block at the bottom of the second half; with one, a step that is one LOOP_WS). Outside
    a one-row grid A stays in its loop slot's half (a_spad_id 0).

    Nothing else writes those rows between two programs: the function's only Gemmini work is this
    nest (match); every program of the launch takes the same branch (its conditions are the same
    in all of them); a LOOP_WS's A sits at the bottom of a half and its B (an explicitly moved one
    too) at the top, and loop_ws_fits keeps any A and any B of the nest within one half together.
    `a`, `b`: A (in a one-row grid, with_a), B kept; `reuse_a`, `reuse_b`: i1, the previous program
    left it; `first_half`: the half of the step's first LOOP_WS's B; `a_spad`: A's spad id (i64; 0:
    its loop slot's half), `head_a_spad` a split head's; `padded_b`: a B holding whole blocks makes a
    ragged step one padded LOOP_WS (bool or i1); `head_last`: a split step's head after its whole
    blocks (bool or i1)."""

    def __init__(self):
        self.a = self.b = self.reuse_a = self.reuse_b = False
        self.first_half, self.a_spad = None, cst(0)
        self.split_kept_column = False      # i1 (with_a): a kept B of one column block split all the same
        self.padded_b, self.head_a_spad, self.head_last = True, cst(0), False    # (with_a)

    @classmethod
    def of(cls, n: Nest):
        """The kept operands with their conditions computed at the insertion point (before the K loop
        or the one step), or None when the programs may differ in both."""
        bounds = list(n.loop.operands)[:3] if n.loop is not None else []
        (_, (rows, kk)), (_, (_, cols)) = local_window(n.a_copy.operands[1]), local_window(n.b_copy.operands[1])
        keep_b = not any(_varies(v, 0, n.loop) for v in [n.b_copy.operands[0], kk, cols] + bounds)
        keep_a = not any(_varies(v, 1, n.loop) for v in [n.a_copy.operands[0], rows, kk] + bounds)
        if not (keep_a or keep_b):
            return None
        keep = cls()
        keep.a = keep_a     # (its test is the one-row branch's: _kept_step)
        if keep_b:
            keep.b, keep.reuse_b = True, ir.cmpi("sgt", _program_id(n.store, 0), cst(0))
            keep.first_half = ir.binop("addi", ir.binop("remui", _program_id(n.store, 1), cst(2)), cst(1))
        return keep

    def with_a(self, n: Nest, cfg: GemminiConfig, s: _Step):
        """A copy keeping A too (reuse_a, a_spad, head_a_spad), at the insertion point (in a one-row
        grid's whole-K branch). Without a bias a ragged K of at least DIM is split (_step_loops; a kept
        B of one column block too, rather than moved in explicitly: its column is one program), and
        in a grid of several columns in every program, whatever B's allocation holds (padded_b
        false), so that A's blocks lie alike in all: the whole blocks first, their A at the bottom
        of the first half, then the head (head_last), its A block at the bottom of the second half
        (a_spad_id 2), which stores C. A launch of one program reuses nothing: its A stays in its
        loop slot's half when split, and a B holding whole blocks makes the step one padded LOOP_WS.
        With a bias (D) A is kept only where the step is one LOOP_WS in every program (a kept B of
        one column block moved in explicitly, not split, but in a launch of one program): two
        LOOP_WSs a program would hold both loop slots, and the next program's LdD, which waits for
        the C of the program before to leave its accumulator half, would hold the loader ahead of
        this program's B (1x65x17 in 16/16/32 at DIM 16, int8 C: 570 -> 805 cycles)."""
        keep, d = copy.copy(self), cfg.dim
        keep.reuse_a, keep.a_spad = ir.cmpi("sgt", _program_id(n.store, 1), cst(0)), cst(1)
        if n.b_t:
            return keep
        unsplit = ir.binop("ori", ir.cmpi("eq", ir.binop("remui", s.kk, cst(d)), cst(0)),
                           ir.cmpi("slt", s.kk, cst(d)))
        if n.bias_copy is not None:
            # a ragged K of at least DIM may be split (_step_loops), and whether it is depends on B's window;
            # a kept B of one column block only in a launch of one program, where nothing is reused
            # and the split's two LOOP_WSs overlap B's loads with the computes (its explicit mvins do not)
            if self.b and _one_column_block(n, cfg):
                keep.split_kept_column = ir.cmpi("eq", ir.call_grid(n.store, NUM_PROGRAMS, 1), cst(1))
                unsplit = ir.binop("ori", unsplit, _not(keep.split_kept_column))
            keep.a_spad = ir.create("arith.extui", operands=[unsplit], results=[ir.i64()]).result
            keep.reuse_a = ir.binop("andi", unsplit, keep.reuse_a)
            return keep
        several = ir.cmpi("sgt", ir.call_grid(n.store, NUM_PROGRAMS, 1), cst(1))
        keep.split_kept_column, keep.padded_b, keep.head_last = True, _not(several), several
        keep.head_a_spad = select(several, cst(2), cst(0))
        keep.a_spad = ir.create("arith.extui", operands=[ir.binop("ori", unsplit, several)],
                                results=[ir.i64()]).result
        return keep

    def b_halves(self):
        """The halves an explicitly moved B goes into (i64 spad ids): the kept one's, else both (_load_b)."""
        return (self.first_half,) if self.b else tuple(cst(h + 1) for h in range(CONCURRENT_LOOPS))

    def addr(self, operand: str, value):
        """The A / B address of a LOOP_WS (`value`; 0 when reused: the FSM does not move it)."""
        reuse = self.reuse_a if operand == "a" else self.reuse_b
        return value if reuse is False else select(reuse, cst(0), value)


def _program_id(op, axis: int):
    """program_id(axis): the call at the top of `op`'s function if there is one, else a new one at
    the insertion point."""
    func = op.operation
    while func.name != "func.func":
        func = func.parent.operation
    for top in func.regions[0].blocks[0].operations:
        top = top.operation
        if top.name == "func.call" and str(top.attributes["callee"]) == f"@{PROGRAM_ID}" and \
                const_value(top.operands[0]) == axis:
            return top.results[0]
    return ir.call_grid(op, PROGRAM_ID, axis)


def _varies(value, axis: int, loop, memo=None) -> bool:
    """Whether `value` may differ between two programs of a launch whose ids differ along `axis`
    only, in the first iteration of `loop` (the K loop, or None): unless it is built by pure
    arithmetic and views from constants, the function's arguments, the grid's size and the other
    axes' program ids (in the first iteration, the loop's induction variable is its lower bound and
    an iter_arg its initial value)."""
    memo = {} if memo is None else memo
    if isinstance(value, int):
        return False
    if value in memo:
        return memo[value]
    memo[value] = True          # (a cycle, which pure SSA cannot have, counts as varying)
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.owner.operation if owner.owner is not None else None
        if parent is None or parent.name == "func.func":
            varies = parent is None
        elif loop is not None and parent == loop:
            number = BlockArgument(value).arg_number
            varies = _varies(list(loop.operands)[0 if number == 0 else 3 + number - 1], axis, loop, memo)
        else:
            varies = True
    else:
        op = owner.operation
        if op.name == "func.call" and str(op.attributes["callee"]) == f"@{PROGRAM_ID}":
            varies = const_value(op.operands[0]) in (None, axis)
        elif prefetch.is_pure(op):
            varies = any(_varies(v, axis, loop, memo) for v in op.operands)
        else:
            varies = True
    memo[value] = varies
    return varies


def _ragged_head(n: Nest, cfg: GemminiConfig, strides, s: _Step, first, last, keep: _Resident, half: int):
    """The first K % DIM columns of a ragged step of K >= DIM as one LOOP_WS of one padded K block,
    accumulating in the same accumulator half as the LOOP_WS of the step's whole blocks: issued
    before it (the D window if `first`, no C), or after it (`first` False; C if `last`); a kept B
    in `half` (the whole blocks' in the other), its A at keep.head_a_spad. LoopMatmul reads DIM
    rows of B from the step's first row: inside the window, since its K is at least DIM."""
    d, zero = cfg.dim, cst(0)
    r = ir.binop("remui", s.kk, cst(d))
    _emit_loop(n, cfg, strides, s, first=first, last=last, bk=cst(1), pad_k=ir.binop("subi", cst(d), r),
               a_addr=keep.addr("a", s.a_addr(n)), b_addr=keep.addr("b", s.b_addr(n)),
               b_spad=cst(half) if keep.b else zero, a_spad=keep.head_a_spad)


def _emit_loop(n: Nest, cfg: GemminiConfig, strides, s: _Step, *, first, last, bk, pad_k, a_addr, b_addr, b_spad,
               a_spad):
    """The five loop registers and LOOP_WS of (part of) a step: `bk` K blocks, the last padded by
    `pad_k`, from A and B at `a_addr` / `b_addr` (0: already in the scratchpad) in the halves
    `a_spad` / `b_spad` name (0 the loop slot's); D at the first step (`first`), C at the last
    (`last`: i1 Values or bools)."""
    d = cfg.dim
    a_stride, b_stride, d_stride, c_stride = strides

    def pad(blocks, extent):
        return ir.binop("subi", ir.binop("muli", blocks, cst(d)), extent)

    def when(cond, value, otherwise):
        return (value if cond else otherwise) if isinstance(cond, bool) else select(cond, value, otherwise)
    zero = cst(0)
    instgem.emit("loop_ws_config_bounds", pad_i=pad(s.bi, s.rows), pad_j=pad(s.bj, s.cols), pad_k=pad_k,
                 max_i=s.bi, max_j=s.bj, max_k=bk)
    # each loop register at the kernel op whose DRAM operand it names: a fault of the FSM's moves
    # is located there (baco.codegen.host: A's at addrs_ab, B's at strides_ab, D's at strides_dc,
    # C's at addrs_dc)
    with n.a_copy.location:
        instgem.emit("loop_ws_config_addrs_ab", a_addr=a_addr, b_addr=b_addr)
    d_addr = zero
    if n.bias_copy is not None:
        d_addr = when(first, _addr_stride(n.bias_copy.operands[0], 4)[0], zero)
    c_addr = when(last, _addr_stride(n.store.operands[1], 1 if n.epilogue is not None else 4)[0], zero)
    with n.store.location:
        instgem.emit("loop_ws_config_addrs_dc", d_addr=d_addr, c_addr=c_addr)
    with n.b_copy.location:
        instgem.emit("loop_ws_config_strides_ab", a_stride=a_stride, b_stride=b_stride)
    with (n.bias_copy if n.bias_copy is not None else n.store).location:
        instgem.emit("loop_ws_config_strides_dc", d_stride=d_stride, c_stride=c_stride)
    ex_accumulate = 1 if n.bias_copy is not None else 0 if first is True else 1 if first is False else ir.create(
        "arith.extui", operands=[_not(first)], results=[ir.i64()]).result
    # A and B take their loop slot's half (spad id 0: slots alternate, so consecutive LOOP_WSs, of
    # this program or the next, load one half while the other computes; an empty step's explicitly
    # moved A is in both halves) unless kept where a_spad / b_spad name (_Resident)
    instgem.emit("loop_ws", ex_accumulate=ex_accumulate, full_c=int(n.epilogue is None), activation=n.relu,
                 a_spad_id=a_spad, b_spad_id=b_spad, a_transpose=int(n.a_t), b_transpose=int(n.b_t))


# ---- residual adds: one LOOP_WS with is_resadd ---------------------------------------------------

class Resadd:
    """The matched residual add of one function: two DRAM windows (`adds`: (acc_add generic, its
    DRAM copy or None, the DRAM view, the local view it fills) of A, then B) summed into a zeroed
    accumulator block, read out through the int8 epilogue and stored once. An add reading its DRAM
    view in place (a whole block at constant offsets: no staging block, no copy) has copy None and
    the accumulator block as its local view."""
    acc = acc_init = epilogue = store = None
    adds = ()
    relu, scale = 0, None


def _only_copy_into(view):
    """The memref.copy writing local view `view` from DRAM when that is its only use, else None."""
    copies = [u.owner for u in view.uses]
    if len(copies) != 1 or copies[0].name != "memref.copy" or copies[0].operands[1] != view or \
            alloc_of(copies[0].operands[0]) is not None:
        return None
    return copies[0]


def _resadd_operand(add, acc, at: dict):
    """(add, its copy or None, the DRAM window, the local block) of one operand of a residual add:
    copied into its staging block (one copy from a DRAM window before the add) or read in place (a
    whole block of an int8 DRAM window); None for any other form."""
    if _dram_window(add.operands[0]) and str(MemRefType(add.operands[0].type).element_type) == "i8":
        return add, None, add.operands[0], acc
    staging = alloc_of(add.operands[0])
    if staging is None or add.operands[0] != staging.result or block_space(staging.operation) != "acc_add":
        return None
    copies = []
    for use in staging.result.uses:
        user = use.owner
        if user == add or (user.name in ("linalg.fill", "linalg.map") and ir.is_zero_fill(user)):
            continue
        if user.name != "memref.subview" or _only_copy_into(user.result) is None:
            return None
        copies.append(_only_copy_into(user.result))
    if len(copies) != 1 or at.get(copies[0], at[add]) > at[add] or not _dram_window(copies[0].operands[0]):
        return None
    return add, copies[0], copies[0].operands[0], copies[0].operands[1]


def _resadd_store(epilogue_alloc):
    """The residual add's store: the one copy of its epilogue block, or of a window of it (a
    subview), to an int8 DRAM window; None for any other form."""
    if epilogue_alloc is None or user_count(epilogue_alloc) != 2:
        return None
    stores = [use.owner for use in epilogue_alloc.result.uses if use.owner.name == "memref.copy"] + \
        [u.owner for use in epilogue_alloc.result.uses if use.owner.name == "memref.subview"
         for u in use.owner.result.uses]
    if len(stores) != 1 or stores[0].name != "memref.copy" or alloc_of(stores[0].operands[1]) is not None or \
            alloc_of(stores[0].operands[0]).operation != epilogue_alloc.operation or \
            not _dram_window(stores[0].operands[1]) or \
            str(MemRefType(stores[0].operands[1].type).element_type) != "i8":
        return None
    return stores[0]


def match_resadd(func, cfg: GemminiConfig):
    """The function's residual add (baco.kernels.resadd's block sum, or any kernel written the
    same way) if one LOOP_WS with is_resadd expresses it exactly, else None: no loop, both
    operands int8 DRAM windows added (mvin-scaled) into one zeroed accumulator block (each copied
    into a staging block, or read in place), an int8 epilogue, every local window at row/column 0
    and of the same extent, rows not known ragged, the block inside LOOP_WS's accumulator half."""
    top = [o.operation for o in func.regions[0].blocks[0].operations]
    ops = ir.walk_ops(func)
    allocs = [o for o in ops if o.name == "memref.alloc" and block_space(o) is not None]
    spaces = sorted(block_space(o) for o in allocs)     # an add reading DRAM in place has no staging block
    if spaces not in (["acc", "acc_add", "acc_add", "epilogue"], ["acc", "acc_add", "epilogue"],
                      ["acc", "epilogue"]) or not cfg.mvin_scale or \
            any(o not in top for o in allocs) or any(o.name in ("scf.for", "linalg.matmul") for o in ops):
        return None
    n = Resadd()
    n.acc = next(o for o in allocs if block_space(o) == "acc")
    at = {op: i for i, op in enumerate(top)}
    inits, adds, epilogues = [], [], []
    for use in n.acc.result.uses:
        user = use.owner
        if user not in at:
            return None
        if user.name in ("linalg.fill", "linalg.map") and ir.is_zero_fill(user):
            inits.append(user)
        elif user.name == "linalg.generic" and "gemmini.acc_add" in user.attributes and \
                user.operands[1] == n.acc.result:
            adds.append(user)
        elif user.name == "linalg.generic" and "gemmini.epilogue" in user.attributes and \
                user.operands[0] == n.acc.result:
            epilogues.append(user)
        else:
            return None
    if len(inits) != 1 or len(adds) != 2 or len(epilogues) != 1 or \
            not at[inits[0]] < min(map(at.get, adds)) <= max(map(at.get, adds)) < at[epilogues[0]]:
        return None
    for add in sorted(adds, key=at.get):
        read = _resadd_operand(add, n.acc.result, at)
        if read is None:
            return None
        n.adds += (read,)
    if sum(copy is not None for _, copy, *_ in n.adds) != spaces.count("acc_add"):
        return None
    n.acc_init, n.epilogue = inits[0], epilogues[0]
    n.store = _resadd_store(alloc_of(n.epilogue.operands[1]))
    if n.store is None:
        return None
    attrs = n.epilogue.attributes["gemmini.epilogue"]
    n.relu = int(str(ir.Attribute(attrs["relu"])) == "true")
    n.scale = ir.scale_operand(n.epilogue)
    facts = Facts()
    wins = [local_window(local) for *_, local in n.adds] + [local_window(n.store.operands[0])]
    if any(w is None for w in wins) or not all(facts.zero(off) for w in wins for off in w[0]) or \
            not all(facts.same(w[1][i], wins[0][1][i]) for w in wins[1:] for i in range(2)):
        return None
    rows = wins[0][1][0] if isinstance(wins[0][1][0], int) else const_value(wins[0][1][0])
    if rows is not None and rows % cfg.dim:
        return None     # rows known ragged at compile time: rewrite_resadd's branch would always keep the stream
    rows, cols = MemRefType(n.acc.result.type).shape
    half = loop_unit_half(cfg)
    if -(-rows // cfg.dim) * -(-cols // cfg.dim) * cfg.dim > half.acc_rows:
        return None
    return n


def rewrite_resadd(n: Resadd, cfg: GemminiConfig):
    """The residual add as tiled_resadd's LOOP_WS (is_resadd), at the store: load slots 0 and 1
    move A and B (int8, shrunk, each with its mvin scale) into the loop's accumulator half, the
    second accumulating; the store applies config_st's activation and scale. LoopMatmul moves
    every row block of B with DIM rows (it has no row pad for B, baco.sim.loops._resadd), so a
    window of ragged rows would read past B: such a program keeps the original ops, under an
    scf.if on the row count."""
    d = cfg.dim
    (a_add, a_copy, a_src, a_local), (b_add, b_copy, b_src, _) = n.adds
    at = {op: i for i, op in enumerate(o.operation for o in n.store.operation.block.operations)}
    with InsertionPoint(n.store), n.store.location:
        a_addr, a_stride, a_bytes = _addr_stride(a_src, 1)
        b_addr, b_stride, b_bytes = _addr_stride(b_src, 1)
        c_addr, c_stride, c_bytes = _addr_stride(n.store.operands[1], 1)
        _, (rows, cols) = local_window(a_local)
        rows, cols = (cst(v) if isinstance(v, int) else i64(v) for v in (rows, cols))
        bi, bj = (ir.binop("ceildivsi", v, cst(d)) for v in (rows, cols))
        # config_st as linalg-to-instgem's store sets it, before the branches so they agree
        instgem.emit("config_st", stride=c_bytes, activation=n.relu, acc_scale=scale_bits(n.scale))
        if_op = scf.IfOp(ir.cmpi("eq", ir.binop("remsi", rows, cst(d)), cst(0)), has_else=True)
        with InsertionPoint(if_op.then_block):
            for slot, add, row_bytes in ((0, a_add, a_bytes), (1, b_add, b_bytes)):
                instgem.emit("config_ld", state_id=slot, stride=row_bytes, scale=scale_bits(ir.scale_operand(add)),
                             shrink=cst(1), block_stride=cst(d), pixel_repeats=cst(1))
            instgem.emit("loop_ws_config_bounds", max_i=bi, max_j=bj, max_k=cst(0), pad_i=cst(0),
                         pad_j=ir.binop("subi", ir.binop("muli", bj, cst(d)), cols), pad_k=cst(0))
            with (a_copy or a_add).location:       # (a fault of the FSM's moves names the kernel's loads / store)
                instgem.emit("loop_ws_config_addrs_ab", a_addr=a_addr, b_addr=b_addr)
            instgem.emit("loop_ws_config_addrs_dc", d_addr=cst(0), c_addr=c_addr)
            with (b_copy or b_add).location:
                instgem.emit("loop_ws_config_strides_ab", a_stride=a_stride, b_stride=b_stride)
            instgem.emit("loop_ws_config_strides_dc", d_stride=cst(0), c_stride=c_stride)
            instgem.emit("loop_ws", activation=n.relu, is_resadd=cst(1))
            scf.YieldOp([])
        with InsertionPoint(if_op.else_block):
            else_yield = scf.YieldOp([])
    stagings = [alloc_of(add.operands[0]).operation for add, copy, *_ in n.adds if copy is not None]
    fills = [u.owner for st in stagings for u in st.result.uses if u.owner.name in ("linalg.fill", "linalg.map")]
    epilogue_alloc = alloc_of(n.epilogue.operands[1]).operation
    local_views = subview_ops([n.store.operands[0]] + [local for *_, local in n.adds])
    copies = [copy for _, copy, *_ in n.adds if copy is not None]
    kept = [n.acc, n.acc_init, *stagings, *fills, *local_views, *copies, a_add, b_add, epilogue_alloc,
            n.epilogue, n.store]
    for op in sorted(set(kept), key=at.get):
        op.move_before(else_yield.operation)


def run(module_op, options: CompileOptions):
    if options.dataflow != "WS" or not options.loop_ws:
        return
    cfg = options.config
    for func in module_op.regions[0].blocks[0].operations:
        func = func.operation
        if func.name == "func.func" and len(func.regions[0].blocks):
            nest = match(func, cfg)
            if nest is not None:
                rewrite(nest, cfg)
                continue
            resadd = match_resadd(func, cfg)
            if resadd is not None:
                rewrite_resadd(resadd, cfg)
    instgem.verify_fields(module_op)
