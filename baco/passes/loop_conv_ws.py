"""loop-conv-ws: a convolution program's tap loop as LOOP_CONV_WS (Gemmini's LoopConv FSM): one, or
one per input channel block when the channels do not fit LoopConv's half of the scratchpad at once.

Input and output: placed linalg/memref IR (after loop-ws, before linalg-to-instgem). A
function matches when its only Gemmini work is the implicit-GEMM nest of
baco.kernels.conv (or any kernel written the same way):

    acc = 0 | acc[window] = bias window (int32, row stride 0)
    for t in [lb, ub):                       (step 1)
        A block = ROWS slices of an NHWC input view (boundary-checked windows)
        B block = a weight window;  acc += A block @ B block
    C window = int8(relu(acc * scale))

(a channel dimension the kernel leaves unchecked, its whole channel blocks, is a window inside
its array, possibly folded to the whole view)

and the index arithmetic proves that, with t = (r·S + s)·steps + cb (r, s, cb recovered
from the floordiv/remainder terms of t), input element (slice i, row j, column c) of step t
is input pixel (h + i·stride + r·dil, w + j·stride + s·dil), channel cb·BK + c, zero where
the view's bounds mask it, and weight element (c, k) is tap (r, s)'s row cb·BK + c, column
k, in a weight tensor whose taps are S per filter row. The proof is the affine normal form
of index expressions (loop_facts.Facts.poly, the prover loop-ws also uses): sums of products
of opaque atoms, with floordiv(floordiv(x, a), b) = floordiv(x, a·b) and exact division;
x mod m is x − m·floordiv(x, m) in the IR, so (w mod m) + m·floordiv(w, m) = w falls out of
the normal form, and a strided view of the column phase (offset floordiv(w, m), extent
ceildiv(W − w mod m, m)) masks exactly the pixels w + m·j outside [0, W). Coefficients the
normal form cannot prove equal (e.g. stride_h against stride_w, two kernel arguments) are
compared at run time, and so are the merged floordivs' divisors (positive).

The program then becomes one LOOP_CONV_WS (six config commands and funct 15) that computes
its orows × ocols output pixels and ochs channels over krows = (ub − lb)/(S·steps) filter
rows from r_lo = lb/(S·steps), S filter columns and all kchs input channels; or, when its
input tile and weights for all kchs channels overflow LoopConv's half of the scratchpad, an
scf.for of LOOP_CONV_WS over blocks of kc channels (baco.gemmini.schedule.
loop_conv_channel_block's rule, computed at run time for the program's tile), as the C
library's tiled_conv splits kchs: each block's input and weight addresses start at its first
channel (in_channels stays the weights' tap stride), all accumulate into the same accumulator
rows (LoopConv moves to its other accumulator half only after a loop with an output address),
the first loads the bias (or zeros), the others skip it (bias address 0), and only the last
stores (output address 0 elsewhere); the blocks alternate scratchpad halves:
  * W padding → lpad/rpad (the pixels the view masks); ROWS > 1: H padding → upad/dpad
    (the slices the kernel masks); ROWS = 1 reads every tap row unmasked, so upad = 0 and
    dpad = stride − 1 (the FSM's tile ends stride − 1 rows past the last tap row, never read).
  * bias → bias address (stride 0 per pixel, as the FSM loads it); no bias → no_bias (zeros).
  * the epilogue's scale and ReLU → config_st and the activation flag.
  * at most DIM/2 channels and no dilation → max_pixels_per_row = min(DIM // kchs, kcols), the C
    library's first-layer packing (tiled_conv): the input mvins also write each pixel into the
    rows above (config_ld pixel_repeats), so one array row holds that many filter columns' pixels
    and one compute multiplies them all (a 3-channel 7x7 stem: 14 computes per output block
    instead of 49).
  * a 1x1 stride-2 tile → downsample (tiled_conv's downsampling, schedule.loop_conv_downsamples):
    LoopConv moves in only the even rows and columns the computes read (a quarter of the pixels,
    read with A stride 1); a program whose tile is padded on the left or above stays explicit.
Accumulation order: the FSM sums each output over (krow, kcol, kch in DIM chunks), the
kernel over (r, s, channel block): the same order. Gemmini's accumulator adds wrap in
int32 (baco.sim.functional), so the order would not matter anyway.

Guarded at run time (scf.if; the else branch is the original explicit program): the
divisors S, steps > 0, lb and ub multiples of S·steps, at least one tap row, steps·BK ≥
the channels, the coefficient equalities above, every config field inside its bit width,
the tile inside the FSM's halves of the scratchpad (inputs + weights of DIM channels at least)
and accumulator (baco.sim.loops.conv_params's rule), and a non-empty unpadded input tile.

A max-pooled program (baco.kernels.pool's conv2d_pool_kernel: whole output rows, a
`gemmini.max_pool` generic over the epilogue, the pooled block stored) becomes LOOP_CONV_WS that
pool on their way out (no_pool = 0): its tile is the program's slices inside the image (the
pool generic's valid rows [lo, hi): orows = hi − lo, the input tile starts lo slices down), the
rows above the first valid one are the pooling's upper padding (pupad = lo), and config 2 holds
the pool size, stride and pooled rows/columns (config_st's 2- and 8-bit fields, guarded). When
those rows do not fit LoopConv's half of the accumulator at once, the program is one LOOP_CONV_WS
per tile of pooled columns (baco.gemmini.schedule.pooled_column_tiles' rule, at run time), as the
C library's tiled_conv tiles pocols: a tile's conv columns are those its pooled windows read inside
the image (the windows' halo recomputed by both neighbours), the columns left and right of the
image its pooling padding (plpad, prpad), its pooled pixels stored at their column of the pooled
rows (pool_out_col_dim, the pooled row pitch, is the whole pooled width).

The depthwise kernel (baco.kernels.depthwise) is such a nest per channel block (pointers at
the block's first channel, channel windows at offset 0, diagonal weight tiles): in_channels =
out_channels = the block's width, in/out stride = all channels.
A launch compiled for its shapes (specialize_shapes: its integers constants) folds the same nest
into forms read as it: a tap loop of one trip (a 1x1 filter whose channels are one block) folded
away is rebuilt as a loop of one tap (_one_tap_loop: r = s = cb = 0); a row phase's floordiv
merged into t's (floordiv(t, S·steps·m) = floordiv(r, m), kept out of every linear term); a
phase view divided exactly or folded to a constant extent read as the same pixels shifted by the
phase (Proof._phase: masks and padding are shift-invariant, the address is the view's own); a
slice's row a constant inside the view (its select folded). Compiled for its grid as well (a
launch's compile: the program id of an axis of size 1 is 0), a program at column 0 folds its
column phase to 0: a one-row program's view is then the whole phase with no stride left in it,
read as stride m (Proof._folded_column_stride: the least m for which the view's pixel stride / m
holds the channels and divides the tap row's step), a slice's local column offset
select(row in range, 0, 0) folds to 0 (read as that select), and a filter column's phase
floordiv(s, m) puts a third divisor beside t's steps and S·steps (a merged row phase's): t is
read from any two of its divisors.
Not rewritten (stay explicit streams): int32 outputs (LoopConv's store writes elem_t
rows: no full-width output), OS dataflow, a function whose kernel says it is not a convolution
(baco.loop_conv = false: the GEMM kernel's one-K-step program is this nest with its tap folded).
Scratchpad ids: block b of a program of n blocks uses LoopConv's A/B slot
((pid0 + pid1 + pid2)·n + b) mod 2 + 1 (given explicitly, so Spike's fixed buffers and the RTL's
alternating slots agree).
On with loop-ws's switch (pipeline/launch option `loop_ws`, BACO_LOOP_WS)."""
from __future__ import annotations

from typing import NamedTuple

from mlir.dialects import scf
from mlir.ir import Block, DenseI64ArrayAttr, InsertionPoint, MemRefType, UnitAttr

from baco.dialects import instgem
from baco.gemmini.arith import pooled_size
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS
from baco.gemmini.schedule import loop_unit_half
from baco.options import CompileOptions
from baco.passes import irutil as ir
from baco.passes import prefetch
from baco.passes.irutil import alloc_of
from baco.passes.linalg_to_instgem import SETS_CONFIG_EX, cst, dram_addr_and_stride, f32_bits, i64, loop, select
from baco.passes.loop_facts import (Facts, block_space, const_value, hoist_above, local_window, not_a_conv, p_add,
                                   p_const, p_div, p_mul, p_sub, p_value, subview_ops, subview_parts)


# ---- matching ---------------------------------------------------------------------------------

class Conv:
    """The matched convolution program of one function."""
    loop = acc = a_alloc = b_copy = matmul = store = epilogue = bias_copy = acc_init = pool = None
    a_copies = ()
    relu, scale = 0, None
    one_tap = False             # the tap loop rebuilt (_one_tap_loop): r, s, cb are 0


def _clamp(v):
    """x for v = min(max(x, 0), hi) (irutil.clamp with lo 0), with hi; else None. A constant
    x >= 0 (a window at a constant offset, e.g. a kernel's channel block starting at 0) has its
    max folded away by the canonicaliser: v = min(hi, x) gives (x as an int, hi)."""
    if isinstance(v, int) or getattr(v.owner, "name", None) != "arith.minsi":
        return None
    a, hi = list(v.owner.operands)
    if getattr(a.owner, "name", None) != "arith.maxsi":
        a, hi = hi, a
        if getattr(a.owner, "name", None) != "arith.maxsi":
            for x, hi in (list(v.owner.operands), list(v.owner.operands)[::-1]):
                if const_value(x) is not None and const_value(x) >= 0:
                    return const_value(x), hi
            return None
    x, zero = list(a.owner.operands)
    if const_value(zero) != 0:
        x, zero = zero, x
    if const_value(zero) != 0:
        return None
    return x, hi


def _checked(facts, src_off, src_size, local_off, block, limit=None):
    """The unclamped offset x when (src_off, src_size, local_off) is irutil.checked_window's
    window of a `block`-long window at x inside [0, limit): local element j is element x + j,
    masked outside [0, limit). Returns (x, limit) or None. A window whose lead is the constant
    0 (a negative offset is a boundary error there, not masked) needs x >= 0: the caller proves it
    (`nonneg` is then True). An unchecked dimension (a kernel's whole channel block: offset x,
    extent `block`, lead 0) is such a window that the kernel keeps inside [0, limit)."""
    if all(isinstance(v, int) for v in (src_off, src_size, local_off)):
        return _checked_static(src_off, src_size, local_off, block, limit)
    if src_size == block and local_off == 0 and _clamp(src_off) is None:
        return src_off, limit, True
    if isinstance(src_size, int) or getattr(src_size.owner, "name", None) != "arith.subi":
        return None
    end_v, start_v = list(src_size.owner.operands)
    if not _view_start(src_off, start_v):
        return None
    src_off = start_v
    start = _clamp(src_off)
    lead = 0 if local_off == 0 else _clamp(local_off)
    if start is None or lead is None:
        return None
    x, limit = start
    end = _clamp(end_v)
    if end is None or not facts.same(end[1], limit) or (lead != 0 and const_value(lead[1]) != block):
        return None
    if facts.poly(end[0]) != p_add(facts.poly(x), p_const(block)):
        return None
    if lead == 0:
        return x, limit, True
    if isinstance(x, int) and x == 0:          # start - 0 folded to start
        return (x, limit, False) if lead[0] == src_off else None
    if getattr(lead[0].owner, "name", None) != "arith.subi" or list(lead[0].owner.operands) != [src_off, x]:
        return None
    return x, limit, False


def _view_start(offset, start) -> bool:
    """`offset` is irutil.view_start's subview offset of a checked window starting at `start`:
    `start` itself, or (an array dimension of constant size L) min(start, L - 1), which the
    canonicaliser may fold with start = min(max(x, 0), L) into min(max(x, 0), L - 1)."""
    if offset == start:
        return True
    if getattr(getattr(offset, "owner", None), "name", None) != "arith.minsi":
        return False
    a, b = list(offset.owner.operands)
    y = a if const_value(b) is not None else b if const_value(a) is not None else None
    if y is None:
        return False
    return y == start or (getattr(getattr(start, "owner", None), "name", None) == "arith.minsi"
                          and y in list(start.owner.operands))


def _checked_static(src_off, src_size, local_off, block, limit):
    """_checked for a window folded to constants inside a constant extent `limit`."""
    if not isinstance(limit, int):
        return None
    x = src_off - local_off
    start, end = min(max(x, 0), limit), min(max(x + block, 0), limit)
    if (start, end - start, min(max(start - x, 0), block)) != (src_off, src_size, local_off):
        return None
    return x, limit, False


def _constant(v):
    """v as an int when it is a constant (an index value or a Python int), else v."""
    if isinstance(v, int):
        return v
    c = const_value(v)
    return v if c is None else c


def _unselect(v):
    """(cond, value) for select(cond, value, 0), else None."""
    if isinstance(v, int) or getattr(v.owner, "name", None) != "arith.select":
        return None
    cond, a, b = list(v.owner.operands)
    return (cond, a) if const_value(b) == 0 else None


def match(func, cfg: GemminiConfig):
    entry = func.regions[0].blocks[0]
    top = [o.operation for o in entry.operations]
    ops = ir.walk_ops(func)
    allocs = [o for o in ops if o.name == "memref.alloc" and block_space(o) is not None]
    if sorted(block_space(o) for o in allocs) not in (["acc", "epilogue", "spad", "spad"],
                                                 ["acc", "epilogue", "pooled", "spad", "spad"]):
        return None          # an int8 output, maybe max-pooled (int32 outputs stay explicit: module doc)
    if any("gemmini.transposed" in o.attributes for o in allocs):
        return None
    n = Conv()
    n.acc = next(o for o in allocs if block_space(o) == "acc")
    matmuls = [o for o in ops if o.name == "linalg.matmul"]
    if len(matmuls) != 1 or n.acc not in top:
        return None
    n.matmul = matmuls[0]
    if n.matmul.parent is not None and n.matmul.parent.operation == func:
        n.loop = _one_tap_loop(n.matmul, top)
        if n.loop is None:
            return None
        n.one_tap = True
        top = [o.operation for o in entry.operations]
    else:
        n.loop = n.matmul.parent.operation if n.matmul.parent is not None else None
    if n.loop is None or n.loop.name != "scf.for" or n.loop not in top or list(n.loop.results) or \
            const_value(list(n.loop.operands)[2]) != 1:
        return None
    a_val, b_val, c_val = n.matmul.operands
    if c_val != n.acc.result:
        return None
    if getattr(a_val.owner, "name", None) == "memref.collapse_shape":
        a_val = a_val.owner.operands[0]
    a, b = alloc_of(a_val), alloc_of(b_val)
    if a is None or b is None or a_val != a.result or b_val != b.result or block_space(a.operation) != "spad" \
            or block_space(b.operation) != "spad":
        return None
    n.a_alloc = a.operation
    body = prefetch.body_ops(n.loop)
    a_copies = []
    for op in body:
        if op.name == "memref.copy":
            dst = alloc_of(op.operands[1])
            if alloc_of(op.operands[0]) is not None or dst is None:
                return None
            if dst.operation == a.operation:
                a_copies.append(op)
            elif dst.operation == b.operation and n.b_copy is None:
                n.b_copy = op
            else:
                return None
        elif op.name == "memref.alloc":
            if op not in (a.operation, b.operation):
                return None
        elif not (prefetch.is_pure(op) or prefetch.is_boundary_check(op) or op == n.matmul
                  or op.name == "scf.yield"):
            return None
    if not a_copies or n.b_copy is None:
        return None
    n.a_copies = tuple(a_copies)
    # reuse loop-ws's recognition of the accumulator's init, bias, epilogue and store
    if not _outside(n, top):
        return None
    return n


def _one_tap_loop(matmul, top):
    """The loop of one tap a program of a single tap folds away (constant shapes: a 1x1 filter
    whose channels fit one block), rebuilt: the matmul and the copies into its A and B blocks,
    which write nothing else, move into `scf.for t in [0, 1)` at the matmul (the copies' windows
    and checks stay before it, as loop-invariant code). None when a copy into A or B is not a top
    op before the matmul, or the blocks are read before it."""
    a_val, b_val = list(matmul.operands)[:2]
    if getattr(a_val.owner, "name", None) == "memref.collapse_shape":
        a_val = a_val.owner.operands[0]
    a, b = alloc_of(a_val), alloc_of(b_val)
    if a is None or b is None:
        return None
    at = {op: i for i, op in enumerate(top)}
    moved = []
    for op in top[:at[matmul]]:
        if op.name == "memref.copy" and alloc_of(op.operands[1]) is not None \
                and alloc_of(op.operands[1]).operation in (a.operation, b.operation):
            moved.append(op)
        elif op.name not in ("memref.copy", "linalg.matmul") and any(
                alloc_of(v) is not None and alloc_of(v).operation in (a.operation, b.operation)
                for v in op.operands if str(v.type).startswith("memref")) and op.name not in (
                    "memref.subview", "memref.collapse_shape"):
            return None     # A or B read (or written) otherwise before the matmul
    if not moved:
        return None
    with InsertionPoint(matmul), matmul.location:
        zero, one = ir.const_index(0), ir.const_index(1)
        for_op = scf.ForOp(zero, one, one)
    with InsertionPoint(for_op.body), matmul.location:
        scf.YieldOp([])
    yield_op = list(for_op.body.operations)[-1]
    for op in moved + [matmul]:
        op.move_before(yield_op)
    return for_op.operation


def _outside(n: Conv, top) -> bool:
    """The accumulator zeroed or loaded from a bias window (or both: zeros under the window)
    before the loop, read by the int8 epilogue after it, whose block is stored once (as
    loop_ws.match checks it)."""
    at = {op: i for i, op in enumerate(top)}
    i_loop = at[n.loop]
    inits, stores, epi_alloc = [], [], None
    for use in n.acc.result.uses:
        user = use.owner
        if user == n.matmul:
            continue
        if user.name in ("linalg.fill", "linalg.map") and ir.is_zero_fill(user) and at.get(user, i_loop) < i_loop:
            inits.append(user)
        elif user.name == "memref.subview" and user in at and at[user] < i_loop:
            copies = [u.owner for u in user.result.uses]
            if len(copies) != 1 or copies[0].name != "memref.copy" or copies[0].operands[1] != user.result \
                    or alloc_of(copies[0].operands[0]) is not None or n.bias_copy is not None:
                return False
            n.bias_copy = copies[0]
        elif user.name == "memref.copy" and user.operands[1] == n.acc.result and at.get(user, i_loop) < i_loop \
                and alloc_of(user.operands[0]) is None and n.bias_copy is None:
            n.bias_copy = user      # a bias window as whole as the block (its checks folded away)
        elif user.name == "linalg.generic" and "gemmini.epilogue" in user.attributes and user in at \
                and at[user] > i_loop and n.epilogue is None and user.operands[0] == n.acc.result:
            n.epilogue = user
            epi_alloc = alloc_of(user.operands[1])
        else:
            return False
    whole_bias = n.bias_copy is not None and n.bias_copy.operands[1] == n.acc.result     # nothing under it to zero
    if len(inits) != (0 if whole_bias else 1) or n.epilogue is None or epi_alloc is None or \
            (n.bias_copy is not None and inits and at[n.bias_copy] < at[inits[0]]):
        return False
    n.acc_init = inits[0] if inits else None
    for use in epi_alloc.result.uses:
        user = use.owner
        if user.name == "linalg.generic" and "gemmini.max_pool" in user.attributes and n.pool is None \
                and user in at and user.operands[0] == epi_alloc.result:
            n.pool = user
    stored = epi_alloc
    if n.pool is not None:      # the epilogue is only pooled; the pooled block is what is stored
        if any(use.owner not in (n.epilogue, n.pool) for use in epi_alloc.result.uses):
            return False
        stored = alloc_of(n.pool.operands[-1])
        if stored is None or block_space(stored.operation) != "pooled":
            return False
    for use in stored.result.uses:
        user = use.owner
        if user == n.epilogue or (n.pool is not None and (user == n.pool or user.name == "linalg.fill")):
            continue            # (the pooled block's fill is the max's start, not Gemmini work)
        if user.name == "memref.copy" and user.operands[0] == stored.result and user in at \
                and alloc_of(user.operands[1]) is None:
            stores.append(user)     # the block stored whole (its checks folded away: a specialized shape)
            continue
        if user.name != "memref.subview" or user not in at:
            return False
        copies = [u.owner for u in user.result.uses]
        if len(copies) != 1 or copies[0].name != "memref.copy" or copies[0].operands[0] != user.result \
                or copies[0] not in at or alloc_of(copies[0].operands[1]) is not None:
            return False
        stores.append(copies[0])
    if len(stores) != 1:
        return False
    n.store = stores[0]
    attrs = n.epilogue.attributes["gemmini.epilogue"]
    n.relu = int(str(ir.Attribute(attrs["relu"])) == "true")
    n.scale = ir.scale_operand(n.epilogue)
    if n.scale is not None:
        if not isinstance(n.scale.owner, Block) and n.scale.owner.operation in top[i_loop:]:
            return False
    return str(MemRefType(n.store.operands[1].type).element_type) == "i8"


# ---- the proof -------------------------------------------------------------------------------

class InputSlice(NamedTuple):
    """One copy of input pixels into the A block: the view's base memref, offset polynomial,
    strides and sizes, the selected row index (a 3-D view, else None), and the checked windows
    (_checked) of its columns and channels."""
    base: object
    offset: tuple
    strides: list
    sizes: list
    row: object
    columns: tuple | None
    channels: tuple | None


def _copy_window(view, local):
    """(the reinterpret_cast under `view`, view's (offsets, sizes), local's) of a copy from a
    subview of a reinterpret_cast (or a whole statically shaped one: an unchecked window the
    canonicaliser folded) into a local subview or a whole block, or None."""
    local_parts = local_window(local)
    if local_parts is None:
        return None
    if getattr(view.owner, "name", None) == "memref.reinterpret_cast":
        shape = MemRefType(view.type).shape
        return None if ir.DYN in shape else (view, ([0] * len(shape), list(shape)), local_parts)
    if getattr(view.owner, "name", None) != "memref.subview":
        return None
    rc = view.owner.operands[0]
    if getattr(rc.owner, "name", None) != "memref.reinterpret_cast":
        return None
    return rc, subview_parts(view), local_parts


class Proof:
    """What LOOP_CONV_WS needs of a matched program, as polynomials (Facts.poly) over atoms
    available before the loop, plus the equalities left to check at run time."""

    def __init__(self, n: Conv, cfg: GemminiConfig):
        self.n, self.cfg, self.facts = n, cfg, Facts()
        self.runtime_eq = []        # (polynomial, polynomial) pairs to compare at run time
        self.runtime_ge = []        # (a, b): a >= b at run time

    def eq(self, a, b) -> bool:
        if a == b:
            return True
        self.runtime_eq.append((a, b))
        return True

    def run(self):
        facts, n = self.facts, self.n
        iv = n.loop.regions[0].blocks[0].arguments[0]
        t = facts.poly(iv)
        (t_id,), = [m for m, _ in t]
        # every polynomial of the body, so the floordivs of t are atoms
        for op in prefetch.body_ops(n.loop):
            for r in op.results:
                if str(r.type) in ("index", "i64"):
                    facts.poly(r)
        divs = []
        for key, i in facts.ids.items():
            if key[0] == "fdiv" and key[1] == t and key[2] not in divs:
                divs.append(key[2])
        lb, ub = (facts.poly(v) for v in list(n.loop.operands)[:2])
        # (steps, S) from two divisors steps and S·steps, or one (S or steps 1); a further divisor a
        # multiple of S·steps is a floordiv of the tap row merged into t's (a row phase floordiv(r, m)
        # under constant shapes: _tap_variables; with S·steps and steps beside it when a grid's
        # column program 0 leaves the column phase floordiv(s, m) in the tap too)
        cands = [(d1, p_div(d2, d1)) for d1 in divs for d2 in divs if d2 != d1]
        cands += [c for d in divs for c in ((d, p_const(1)), (p_const(1), d))]
        if not divs:
            cands = [(p_const(1), p_const(1))]
        elif len(divs) > 3:
            return False
        for steps, S in cands:
            if S is None:
                continue
            divisors = list(facts.divisors)
            if self._try(t, t_id, steps, S, lb, ub):
                return True
            facts.divisors = divisors
            self.runtime_eq, self.runtime_ge = [], []
        return False

    def _try(self, t, t_id, steps, S, lb, ub) -> bool:
        """The proof for one reading of the tap index t as (r·S + s)·steps + cb."""
        self.steps, self.S = steps, S
        if not self._tap_variables(t, t_id):
            return False
        self.lb, self.ub = lb, ub
        return self._weights() and self._output_windows() and self._inputs()

    def _tap_variables(self, t, t_id) -> bool:
        """The variables r, s, cb and the substitution of t and its floordivs by them: t = (r·S + s)
        ·steps + cb with s in [0, S), cb in [0, steps) (s = 0 if S = 1, cb = 0 if steps = 1). False
        when a floordiv of t is by another divisor."""
        facts, steps, S = self.facts, self.steps, self.S
        vr, vs, vcb = (facts.atom(("var", name)) for name in ("r", "s", "cb"))
        s_term = () if S == p_const(1) else vs
        cb_term = () if steps == p_const(1) else vcb
        self.table = {t_id: p_add(p_mul(p_mul(steps, S), vr), p_mul(steps, s_term), cb_term)}
        for key, i in list(facts.ids.items()):
            if key[0] == "fdiv" and key[1] == t:
                if key[2] == steps:
                    self.table[i] = p_add(p_mul(S, vr), s_term)
                elif key[2] == p_mul(steps, S):
                    self.table[i] = vr
                elif p_div(key[2], p_mul(steps, S)) not in (None, p_const(1)):
                    # floordiv(floordiv(t, S·steps), m) merged: floordiv(r, m), an atom that linear() rejects
                    self.table[i] = facts.atom(("fdiv", vr, p_div(key[2], p_mul(steps, S))))
                else:
                    return False
        self.t_id = t_id
        self.vr_id, self.vs_id, self.vcb_id = (x[0][0][0] for x in (vr, vs, vcb))
        return True

    def linear(self, p):
        """{None (the constant term), r, s, cb: coefficient polynomial} of p with t substituted, or
        None when p is not linear in r, s, cb or a coefficient still depends on t."""
        facts, var_ids = self.facts, (self.vr_id, self.vs_id, self.vcb_id)
        c = facts.coefficients(facts.substitute(p, self.table), set(var_ids))
        if c is None:
            return None
        if any(facts.atoms_in(q) & {self.t_id, *var_ids} for q in c.values()):
            return None     # (a coefficient of t, or of r, s, cb inside a floordiv: not linear)
        return {k: c.get(k, ()) for k in (None,) + var_ids}

    def _weights(self) -> bool:
        """Weight element (c, k) is at w + ((r·S + s)·in_channels + cb·BK + c)·Kst + k0 + k: the
        weights' base, offset, row stride Kst, in_channels, and the channels kchs."""
        facts, n, S = self.facts, self.n, self.S
        b_view, b_local = n.b_copy.operands
        bk = MemRefType(b_local.owner.operands[0].type).shape[0] \
            if b_local.owner.name == "memref.subview" else MemRefType(b_local.type).shape[0]
        b_src = self._dram_2d(b_view, b_local, MemRefType(alloc_of(b_local).result.type).shape)
        if b_src is None:
            return False
        (b_base_val, b_off, (b_rs, b_cs)), (zb, b_rows_lim, _), (kb, b_cols_lim, kb_lead0) = b_src
        if kb_lead0 and not (isinstance(kb, int) or facts.nonneg(kb)):
            return False          # (zb = cb·BK >= 0 is checked below)
        if p_value(facts.poly(b_cs)) != 1:
            return False
        kst = facts.poly(b_rs)
        lin_b = self.linear(p_add(b_off, p_mul(facts.poly(zb), kst), facts.poly(kb)))
        lin_zb = self.linear(facts.poly(zb))
        if lin_b is None or lin_zb is None or lin_zb[self.vr_id] or lin_zb[self.vs_id] or lin_zb[None] \
                or not self.block_step(lin_zb[self.vcb_id], bk):
            return False          # the channel block starts at cb·BK
        # tap (r, s) starts at (r·kernel_dim + s)·in_channels·Kst: kernel_dim = S (one filter column:
        # a filter row's stride is in_channels·Kst)
        in_ch = p_div(lin_b[self.vr_id] if S == p_const(1) else lin_b[self.vs_id], kst)
        if n.one_tap:           # no tap stride to read: one tap's rows are its channels
            in_ch = facts.poly(b_rows_lim)
        if in_ch is None:
            return False
        if S != p_const(1):
            self.eq(lin_b[self.vr_id], p_mul(S, lin_b[self.vs_id]))
        self.kst, self.in_ch, self.bk = kst, in_ch, bk
        self.w_base, self.w_off, self.w_coef_r = b_base_val, lin_b[None], lin_b[self.vr_id]
        self.kchs = facts.poly(b_rows_lim)
        return True

    def _output_windows(self) -> bool:
        """The output window (c_rows pixels x ochs channels), the B columns k0 .. k0 + ochs and the
        bias window (stride 0 per pixel) all start at their blocks' row and column 0."""
        facts, n = self.facts, self.n
        c_win = local_window(n.store.operands[0])
        b_win = local_window(n.b_copy.operands[1])
        if c_win is None or b_win is None:
            return False
        self.c_rows, self.ochs = c_win[1]
        if not facts.same(b_win[1][1], self.ochs):
            return False
        leads = list(c_win[0]) + [b_win[0][1]]
        if n.bias_copy is not None:
            d_win = local_window(n.bias_copy.operands[1])
            if d_win is None or not facts.same(d_win[1][1], self.ochs):
                return False
            leads += list(d_win[0])
            if not facts.same(d_win[1][0], self.c_rows):   # the bias rows cover the stored ones
                self.runtime_ge.append((facts.poly(d_win[1][0]), facts.poly(self.c_rows)))
        for lead in leads:       # the windows start at the blocks' row and column 0
            if not facts.zero(lead):
                self.eq(facts.poly(lead), p_const(0))
        if n.bias_copy is not None:
            d_view = n.bias_copy.operands[0]
            if "strided<[0, 1]" not in str(d_view.type).replace(" ", "").replace(",", ", "):
                return False
        return True

    def block_step(self, coef, bk) -> bool:
        """The channel block cb moves by BK elements (or there is one block: cb = 0)."""
        return coef == p_const(bk) or self.steps == p_const(1)

    def _dram_2d(self, view, local, block_shape):
        """((base memref, offset poly, (row stride, col stride)), (x_row, limit), (x_col, limit))
        of a checked 2-D window copy from a reinterpret_cast view, or None."""
        parts = _copy_window(view, local)
        if parts is None:
            return None
        rc, (s_off, s_size), (l_off, _) = parts
        if len(s_off) != 2:
            return None
        rc_off, rc_sizes, rc_strides = self._rc(rc)
        dims = []
        for d in range(2):
            w = _checked(self.facts, s_off[d], s_size[d], l_off[d], block_shape[d], rc_sizes[d])
            if w is None or not self.facts.same(w[1], rc_sizes[d]):
                return None
            dims.append(w)
        return (rc.owner.operands[0], rc_off, rc_strides), dims[0], dims[1]

    def _rc(self, rc):
        op = rc.owner
        dyn = list(op.operands)[1:]
        out = []
        for name in ("static_offsets", "static_sizes", "static_strides"):
            vals = []
            for s in DenseI64ArrayAttr(op.attributes[name]):
                vals.append(dyn.pop(0) if s == ir.DYN else s)
            out.append(vals)
        (off,), sizes, strides = out
        return self.facts.poly(off), sizes, strides

    def _phase(self, px, limit, hint=None):
        """(w, m, E) when offset polynomial px and extent `limit` are the phase view of pixels
        w + m·j in [0, E) (px = floordiv(w, m), limit = ceildiv(E − (w − m·px), m): j < limit iff
        m·j + (w − m·px) < E), or (px, 1, limit) for an unstrided view. Constant shapes fold the
        view three more ways, each read as the same pixels shifted by the phase (the masks and
        the padding are shift-invariant; the address is the view's own):
          * floordiv(w, m) merged into floordiv(x, q·m) (w = floordiv(x, q) a floordiv itself):
            w is that floordiv;
          * floordiv(w, m) divided exactly (phase 0), limit = ceildiv(N, m): pixels m·px + m·j in
            [0, N);
          * limit a constant L (the whole phase folded): with `hint` m (the stride of the other
            dimension, which the FSM shares), pixels m·px + m·j in [0, m·(L − 1) + 1) (the
            pixels between the last one read and m·L, never read, count as padding)."""
        facts = self.facts
        pl = facts.poly(limit)
        lkey = facts.key_of[pl[0][0][0]] if len(pl) == 1 and pl[0][1] == 1 and len(pl[0][0]) == 1 else None
        if lkey is not None and lkey[0] == "cdiv":
            m = lkey[2]
            if len(px) == 1 and px[0][1] == 1 and len(px[0][0]) == 1:
                key = facts.key_of[px[0][0][0]]
                if key[0] == "fdiv":
                    if key[2] == m:
                        w = key[1]
                    else:       # floordiv(floordiv(x, q), m) merged: w = floordiv(x, q)
                        q = p_div(key[2], m)
                        w = None if q is None or q == p_const(1) else facts.atom(("fdiv", key[1], q))
                    if w is not None:
                        return w, m, p_add(lkey[1], p_sub(w, p_mul(m, px)))
            if p_value(m) is not None and p_value(m) > 1:      # exact: phase 0
                return p_mul(m, px), m, lkey[1]
        if hint is not None and p_value(pl) is not None and p_value(hint) is not None and p_value(hint) > 1:
            return p_mul(hint, px), hint, p_add(p_mul(hint, p_sub(pl, p_const(1))), p_const(1))
        return px, p_const(1), pl

    def _inputs(self) -> bool:
        """The A block's slices (ROWS of them, or one 2-D block) read one input tile: slice i, row j,
        column c is input pixel (h + i·stride + r·dil, w + j·stride + s·dil), channel cb·BK + c."""
        shape = MemRefType(self.n.a_alloc.result.type).shape
        rows = shape[0] if len(shape) == 3 else 1
        bm, bk = shape[-2], shape[-1]
        if bk != self.bk:
            return False
        slices = {}
        for cp in self.n.a_copies:
            found = self._input_slice(cp, rows, bm, bk)
            if found is None or found[0] in slices:
                return False
            slices[found[0]] = found[1]
        if sorted(slices) != list(range(rows)):
            return False
        self.rows, self.bm = rows, bm
        first = None
        for i in range(rows):
            cur = self._slice_geometry(i, slices[i], rows)
            if cur is None:
                return False
            if first is None:
                first = cur
            elif any(cur[k] != first[k] for k in cur if k != "addr") or \
                    any(cur["addr"][k] != first["addr"][k] for k in (self.vr_id, self.vs_id, self.vcb_id)) or \
                    p_sub(cur["addr"][None], first["addr"][None]) != \
                    p_mul(p_const(i), p_mul(p_mul(first["stride_h"], first["pitch"]), first["cs"])):
                return False        # slice i is the first's, stride_h rows down
        self.inp = first
        self._dilation_and_pitch(first, rows)
        return True

    def _input_slice(self, cp, rows, bm, bk):
        """(slice number, InputSlice) of one copy into the A block: a checked window of an input view
        (a 3-D view's row selected by its index, masked outside the image, for ROWS > 1), or None."""
        facts = self.facts
        view, local = cp.operands
        parts = _copy_window(view, local)
        if parts is None:
            return None
        rc, (s_off, s_size), (l_off, _) = parts
        rc_off, rc_sizes, rc_strides = self._rc(rc)
        if len(rc_sizes) != (3 if rows > 1 else 2) or rc_strides[-1] != 1:
            return None
        base = rc.owner.operands[0]
        if rows == 1:
            win = _checked(facts, s_off[0], s_size[0], l_off[0], bm, rc_sizes[0])
            chan = _checked(facts, s_off[1], s_size[1], l_off[1], bk, rc_sizes[1])
            return 0, InputSlice(base, rc_off, rc_strides, rc_sizes, None, win, chan)
        sel = [_unselect(v) for v in (s_off[0], s_size[1], l_off[1])]
        if s_size[0] != 1 or not isinstance(l_off[0], int):
            return None
        if sel[2] is None and sel[0] is not None and _constant(l_off[1]) == 0:
            # the slice's local column offset 0 (its column window at the view's column 0: constant
            # shapes and a grid whose column program is 0): select(cond, 0, 0) folded to 0
            sel[2] = (sel[0][0], 0)
        idx = const_value(s_off[0]) if not isinstance(s_off[0], int) else s_off[0]
        rows_in = rc_sizes[0] if isinstance(rc_sizes[0], int) else const_value(rc_sizes[0])
        if all(x is None for x in sel) and idx is not None and rows_in is not None and 0 <= idx < rows_in:
            # a constant row inside the view (constant shapes): its select folded to the window
            sel = [(None, v) for v in (s_off[0], s_size[1], l_off[1])]
        elif any(x is None for x in sel) or len({x[0] for x in sel}) != 1:
            return None
        cond, idx = sel[0]
        if cond is not None and not self._in_range(cond, idx, rc_sizes[0]):
            return None
        win = _checked(facts, *(_constant(v) for v in (s_off[1], sel[1][1], sel[2][1])), bm, rc_sizes[1])
        chan = _checked(facts, s_off[2], s_size[2], l_off[2], bk, rc_sizes[2])
        return l_off[0], InputSlice(base, rc_off, rc_strides, rc_sizes, idx, win, chan)

    def _slice_geometry(self, i, sl, rows):
        """What slice i reads, as polynomials: column stride, pixel stride cs, width, base; for ROWS
        > 1 its row h0 + r·dil_h, stride_h, height and row pitch; its first column w0 + s·dil and
        its address linear in r, s, cb. None when it is not such a read."""
        facts = self.facts
        vr_id, vs_id, vcb_id = self.vr_id, self.vs_id, self.vcb_id
        win, chan = sl.columns, sl.channels
        if win is None or chan is None or not facts.same(win[1], sl.sizes[-2]) or \
                not facts.same(chan[1], sl.sizes[-1]) or (win[2] and not facts.nonneg(win[0])):
            return None
        if facts.poly(chan[1]) != self.kchs:        # the same channels as the weights' rows
            return None
        lin_z = self.linear(facts.poly(chan[0]))
        if lin_z is None or lin_z[None] or lin_z[vr_id] or lin_z[vs_id] or \
                not self.block_step(lin_z[vcb_id], self.bk):
            return None
        hint = None
        if rows > 1:        # slice i reads input row h + i·stride_h: its index is floordiv(h, m) + i
            hw, hm, height = self._phase(p_sub(facts.poly(sl.row), p_const(i)), sl.sizes[0])
            hint = hm
        w, m, width = self._phase(facts.poly(win[0]), win[1], hint)
        if rows > 1 and hm == p_const(1) and m != p_const(1):     # the rows' phase folded, the columns' not
            hw, hm, height = self._phase(p_sub(facts.poly(sl.row), p_const(i)), sl.sizes[0], m)
        # address of pixel column w, channel cb·BK: the phase terms cancel in the normal form
        addr = p_add(sl.offset, p_mul(facts.poly(win[0]), facts.poly(sl.strides[-2])), facts.poly(chan[0]))
        if rows == 1 and m == p_const(1):
            folded = self._folded_column_stride(sl, win, addr)
            if folded is not None:
                w, m, width = folded
        cs = p_div(facts.poly(sl.strides[-2]), m)           # pixel stride (elements): in_stride
        if cs is None:
            return None
        cur = dict(stride=m, cs=cs, width=width, base=sl.base)
        if rows > 1:
            addr = p_add(addr, p_mul(facts.poly(sl.row), facts.poly(sl.strides[0])))
            pitch = p_div(facts.poly(sl.strides[0]), p_mul(hm, cs))
            lin_h = self.linear(hw)
            if pitch is None or lin_h is None or lin_h[vs_id] or lin_h[vcb_id]:
                return None
            cur.update(h0=lin_h[None], dil_h=lin_h[vr_id], stride_h=hm, height=height, pitch=pitch)
        lin, lin_w = self.linear(addr), self.linear(w)
        if lin is None or lin_w is None or lin_w[vr_id] or lin_w[vcb_id] or \
                not self.block_step(lin[vcb_id], self.bk):
            return None
        cur.update(w0=lin_w[None], dil=lin_w[vs_id], addr=lin)
        return cur

    def _folded_column_stride(self, sl, win, addr):
        """(w, m, E) of a one-row program's column view folded whole (constant shapes and grid: the
        column phase w mod m of a program at column 0 is the constant 0, the view's offset
        floordiv(w, m) = 0 and its extent ceildiv(W, m) = L constants, so the view reads pixels
        m·j in [0, W) with pixel stride P = m·cs elements but names no m): the least m dividing P
        for which cs = P / m holds the channels read (cs >= kchs) and the tap row's step (the
        address coefficient of r, pitch·cs) is a multiple of cs; None when m = 1 is such a stride
        (an unstrided view) or no m is. Read as the hint form of _phase: pixels m·px + m·j in
        [0, m·(L − 1) + 1). Only a filter of one column (S = 1) reads a column phase that constant
        shapes fold (a wider filter's phase moves with s), and one tap has no row step to read."""
        facts = self.facts
        if self.S != p_const(1) or self.n.one_tap:
            return None
        lin = self.linear(addr)
        if lin is None:
            return None
        pitch_p, limit, row_step, kchs = (p_value(q) for q in (
            facts.poly(sl.strides[-2]), facts.poly(win[1]), lin[self.vr_id], self.kchs))
        if None in (pitch_p, limit, row_step, kchs) or pitch_p < 1 or row_step % pitch_p == 0:
            return None
        for m in range(2, pitch_p + 1):
            if pitch_p % m == 0 and pitch_p // m >= kchs and row_step % (pitch_p // m) == 0:
                return (p_mul(p_const(m), facts.poly(win[0])), p_const(m),
                        p_add(p_mul(p_const(m), p_sub(p_const(limit), p_const(1))), p_const(1)))
        return None

    def _dilation_and_pitch(self, first, rows):
        """The FSM's one dilation and the input's row pitch, with the equalities they need.
        Input element address = base + ((row)·pitch + w0 + s·dil + j·stride)·cs + cb·BK + c; the
        address of the tile's pixel (row of tap r_lo, column w0) = lin[None] + r_lo·lin[r]."""
        lin = first["addr"]
        cs, dil = first["cs"], first["dil"]
        # one filter column: the FSM's dilation is the rows' (the columns have none)
        if self.n.one_tap:      # one tap: no dilation to read, the rows' pitch is the view's (or any)
            self.dil = p_const(1)
            if rows > 1:
                self.eq(first["stride_h"], first["stride"])
                self.pitch = first["pitch"]
            else:               # one input row read: the pitch only has to hold the tile's columns
                self.pitch = first["width"]
            self.pitch_of = None
            return
        if self.S == p_const(1):
            dil = first["dil_h"] if rows > 1 else p_const(1)
        else:
            self.eq(lin[self.vs_id], p_mul(dil, cs))
            if rows > 1:
                self.eq(first["dil_h"], dil)
        self.dil = dil
        if rows > 1:
            self.eq(first["stride_h"], first["stride"])
            self.pitch, self.pitch_of = first["pitch"], None
            self.eq(lin[self.vr_id], p_mul(p_mul(dil, self.pitch), cs))
        else:
            # the row pitch: r moves dil_h rows, and the FSM has one dilation (dil_w): divided at run
            # time when the normal form cannot (dil_h and dil_w two arguments)
            self.pitch = p_div(lin[self.vr_id], p_mul(dil, cs))
            self.pitch_of = None if self.pitch is not None else (lin[self.vr_id], p_mul(dil, cs))

    def _in_range(self, cond, idx, size) -> bool:
        """cond = (idx >= 0) and (idx < size)."""
        if getattr(cond.owner, "name", None) != "arith.andi":
            return False
        got = set()
        for c in cond.owner.operands:
            if getattr(c.owner, "name", None) != "arith.cmpi":
                return False
            pred = int(str(c.owner.attributes["predicate"]).split(":")[0].strip())
            a, b = c.owner.operands
            if a != idx:
                return False
            if pred == 5 and const_value(b) == 0:        # sge
                got.add("lo")
            elif pred == 2 and self.facts.same(b, size):      # slt
                got.add("hi")
        return got == {"lo", "hi"}


# ---- rewriting -------------------------------------------------------------------------------

class Unavailable(Exception):
    """A polynomial needs a value that is not computed before the loop."""


class Emitter:
    """Rebuilds polynomials (Facts.poly) as i64 values at the insertion point."""

    def __init__(self, facts: Facts, available):
        self.facts, self.available, self.memo = facts, available, {}

    def atom(self, i):
        if i in self.memo:
            return self.memo[i]
        key, rep = self.facts.key_of[i], self.facts.rep.get(i)
        if rep is not None and self.available(rep):
            v = i64(rep)
        elif key[0] in ("fdiv", "cdiv"):
            v = ir.binop("floordivsi" if key[0] == "fdiv" else "ceildivsi", self.poly(key[1]), self.poly(key[2]))
        else:
            raise Unavailable(key)
        self.memo[i] = v
        return v

    def poly(self, p):
        total = None
        for m, c in p:
            term = None
            for x in m:
                term = self.atom(x) if term is None else ir.binop("muli", term, self.atom(x))
            term = cst(c) if term is None else (term if c == 1 else ir.binop("muli", term, cst(c)))
            total = term if total is None else ir.binop("addi", total, term)
        return cst(0) if total is None else total


def _available(n: Conv):
    top = [o.operation for o in n.loop.block.operations]
    before = set(top[:top.index(n.loop)])

    def ok(v):
        if isinstance(v.owner, Block):
            return v.owner == n.loop.block
        return v.owner.operation in before
    return ok


def _pooling(n: Conv, pr: Proof) -> dict | None:
    """The max-pool of a pooled program as LoopConv pools (config_st's 2-bit pool size, stride
    and padding): over the tile's rows x whole output rows (the A block's slices x columns),
    its rows unpadded (the slices outside the image are the pooling padding: the valid rows),
    with kernel, stride, padding, pooled columns (pocols) and right padding (prpad); None
    when LoopConv cannot pool it."""
    attrs = n.pool.attributes["gemmini.max_pool"]
    rows, cols = list(DenseI64ArrayAttr(attrs["image"]))
    upad, lpad = list(DenseI64ArrayAttr(attrs["padding"]))
    k, s = (ir.IntegerAttr(attrs[name]).value for name in ("kernel", "stride"))
    if pr.rows < 2 or (rows, cols) != (pr.rows, pr.bm) or upad != 0 or not (1 <= k <= 3 and 1 <= s <= 3
                                                                            and 0 <= lpad <= 3):
        return None
    pocols = pooled_size(cols, k, s, lpad)
    return dict(kernel=k, stride=s, padding=lpad, pocols=pocols, prpad=max(0, (pocols - 1) * s + k - lpad - cols))


def _base_addr(memref):
    return i64(ir.create("memref.extract_aligned_pointer_as_index", operands=[memref], results=[ir.index()]).result)


def add(a, b):
    return ir.binop("addi", a, b)


def sub(a, b):
    return ir.binop("subi", a, b)


def mul(a, b):
    return ir.binop("muli", a, b)


def smax0(v):
    return ir.binop("maxsi", v, cst(0))


def _positive(v):
    """max(v, 1): a divisor that is 1 where a guard fails (no division by zero)."""
    return ir.binop("maxsi", v, cst(1))


def _blocks(v, width):
    """ceildiv(v, width) for a width that may be 0 where a guard fails."""
    return ir.binop("ceildivsi", v, _positive(width))


def _tail(n: Conv) -> list:
    """The ops after the tap loop that the LOOP_CONV_WS branch replaces: the epilogue and its block,
    a pooled program's block, its fill and the pool, and the store with its window."""
    epi_alloc = alloc_of(n.epilogue.operands[1]).operation
    tail = [epi_alloc, n.epilogue] + subview_ops([n.store.operands[0]]) + [n.store]
    if n.pool is not None:
        pooled = alloc_of(n.pool.operands[-1]).operation
        tail[2:2] = [pooled] + [u.owner for u in pooled.result.uses if u.owner.name == "linalg.fill"] + [n.pool]
    return tail


class LoopConvProgram:
    """A proven program's LOOP_CONV_WS form, built just before its tap loop in named steps (the
    module doc's rules, in the order their values are emitted): the tap rows, the strides, the output
    tile, its padding, the DRAM addresses, the channel blocks that fit, the six configurations'
    fields, the first-layer packing; each step adds its run-time guards. `branches` then emits the
    scf.if between the loops (one per column tile and channel block) and the explicit program."""

    def __init__(self, n: Conv, pr: Proof, cfg: GemminiConfig, pool: dict | None):
        self.n, self.pr, self.pool = n, pr, pool
        half = loop_unit_half(cfg)
        self.d, self.half_sp, self.half_acc = cfg.dim, half.sp_rows, half.acc_rows
        self.guards = []
        self.P = Emitter(pr.facts, _available(n)).poly

    def guard(self, pred, a, b):
        self.guards.append(ir.cmpi(pred, a, b))

    def build(self):
        """Every value the loops need, before the tap loop (raises Unavailable when a polynomial
        needs a value computed after it)."""
        self.tap_rows()
        self.strides()
        self.output_tile()
        self.padding()
        self.downsampling()
        self.addresses()
        self.channel_blocks_that_fit()
        self.config_fields()
        self.packing()

    def tap_rows(self):
        """The divisors S and steps, the tap rows [r_lo, r_lo + krows), the input channels, and the
        equalities the proof left to run time."""
        pr, P, guard = self.pr, self.P, self.guard
        self.S, self.steps = S, steps = P(pr.S), P(pr.steps)
        for q in pr.facts.divisors + [pr.S, pr.steps]:
            guard("sge", P(q), cst(1))
        taps = mul(S, steps)
        safe = select(ir.cmpi("sge", taps, cst(1)), taps, cst(1))
        lb, ub = P(pr.lb), P(pr.ub)
        self.r_lo, r_hi = ir.binop("divsi", lb, safe), ir.binop("divsi", ub, safe)
        guard("eq", mul(self.r_lo, safe), lb)
        guard("eq", mul(r_hi, safe), ub)
        self.krows = sub(r_hi, self.r_lo)
        guard("sge", self.krows, cst(1))
        self.kchs = P(pr.kchs)
        guard("sge", self.kchs, cst(1))
        guard("sge", mul(steps, cst(pr.bk)), self.kchs)
        for a, b in pr.runtime_eq:
            guard("eq", P(a), P(b))
        for a, b in pr.runtime_ge:
            guard("sge", P(a), P(b))

    def strides(self):
        """The input's stride, dilation, pixel stride (cs) and row pitch (divided at run time when
        the proof could not)."""
        pr, P, guard = self.pr, self.P, self.guard
        self.stride, self.dil, self.cs = P(pr.inp["stride"]), P(pr.dil), P(pr.inp["cs"])
        if pr.pitch_of is None:
            self.pitch = P(pr.pitch)
        else:
            num, den = (P(q) for q in pr.pitch_of)
            guard("sge", den, cst(1))
            self.pitch = ir.binop("divsi", num, select(ir.cmpi("sge", den, cst(1)), den, cst(1)))
            guard("eq", mul(self.pitch, den), num)

    def output_tile(self):
        """The output tile (orows x ocols pixels, ochs channels), the input tile it reads (irows x
        icols), and the output's address and row stride."""
        n, pr, guard = self.n, self.pr, self.guard
        self.c_rows, self.ochs = i64(pr.c_rows) if not isinstance(pr.c_rows, int) else cst(pr.c_rows), \
            i64(pr.ochs) if not isinstance(pr.ochs, int) else cst(pr.ochs)
        guard("sge", self.ochs, cst(1))
        if self.pool is not None:
            self.pooled_tile()
        elif pr.rows == 1:
            self.ocols, self.orows = self.c_rows, cst(1)
        else:
            self.ocols = cst(pr.bm)
            self.orows = ir.binop("divsi", self.c_rows, self.ocols)
            guard("eq", mul(self.orows, self.ocols), self.c_rows)
        guard("sge", self.orows, cst(1))
        self.irows = add(mul(self.orows, self.stride), mul(self.dil, sub(self.krows, cst(1))))
        self.icols = add(mul(self.ocols, self.stride), mul(self.dil, sub(self.S, cst(1))))
        self.w_t = self.P(pr.inp["w0"])
        self.out_addr, self.out_bytes = dram_addr_and_stride(n.store.operands[1], 1)

    def pooled_tile(self):
        """A pooled program's tile: the conv rows inside the image ([lo, hi) of its slices), the
        whole pooled rows stored, and its tiles of pooled columns."""
        pool, pr, guard, d = self.pool, self.pr, self.guard, self.d
        self.valid_lo, self.valid_hi = (i64(v) for v in list(self.n.pool.operands)[1:3])
        self.orows = sub(self.valid_hi, self.valid_lo)
        self.porows = ir.binop("divsi", self.c_rows, cst(pool["pocols"]))      # the whole pooled rows stored
        guard("eq", mul(self.porows, cst(pool["pocols"])), self.c_rows)
        guard("sge", self.porows, cst(1))
        # LoopConv's tiles of pooled columns (schedule.pooled_column_tiles' rule): whole rows
        # when they fit half the accumulator, else the fewest tiles whose conv columns fit,
        # the pooled columns spread evenly (the accumulator guard below rejects the rest)
        k_, s_ = pool["kernel"], pool["stride"]
        fit = ir.binop("minsi", ir.binop("divsi", cst(self.half_acc), ir.binop("maxsi", mul(
            ir.binop("ceildivsi", self.ochs, cst(d)), self.orows), cst(1))), cst(255))
        widest_pocols = add(ir.binop("divsi", smax0(sub(fit, cst(k_))), cst(s_)), cst(1))
        self.col_tiles = select(ir.cmpi("sle", cst(pr.bm), fit), cst(1),
                                ir.binop("ceildivsi", cst(pool["pocols"]), widest_pocols))
        self.tile_pocols = ir.binop("ceildivsi", cst(pool["pocols"]), self.col_tiles)
        self.ocols = ir.binop("minsi", add(mul(sub(self.tile_pocols, cst(1)), cst(s_)), cst(k_)), cst(pr.bm))

    def columns(self, ocol, cols, check=True):
        """The input tile of conv columns [ocol, ocol + cols): its padding and its first
        pixel's offset from the program's column 0 (bytes); `check`: guard that it reads
        some pixel of the image."""
        stride = self.stride
        w = add(self.w_t, mul(ocol, stride))
        tile_icols = add(mul(cols, stride), mul(self.dil, sub(self.S, cst(1))))
        lpad = smax0(sub(cst(0), w))
        rpad = smax0(sub(add(w, tile_icols), self.P(self.pr.inp["width"])))
        if check:
            self.guard("sge", sub(tile_icols, add(lpad, rpad)), cst(1))
        return dict(ocols=cols, lpad=lpad, rpad=rpad, input=mul(add(mul(ocol, stride), lpad), self.cs))

    def pooled_columns(self, t, check=True):
        """Column tile t of a pooled program (as the C library's tiled_conv tiles pocols): its
        pooled columns, their conv columns inside the image (the windows' halo included) with
        the pooling's left and right padding, its input tile, its output offset."""
        pool = self.pool
        k_, s_ = pool["kernel"], pool["stride"]
        pc0 = mul(t, self.tile_pocols)
        pcols = ir.binop("minsi", self.tile_pocols, sub(cst(pool["pocols"]), pc0))
        ocol = sub(mul(pc0, cst(s_)), cst(pool["padding"]))
        end = add(ocol, add(mul(sub(pcols, cst(1)), cst(s_)), cst(k_)))
        lo_c, hi_c = smax0(ocol), ir.binop("minsi", end, cst(self.pr.bm))
        return dict(self.columns(lo_c, sub(hi_c, lo_c), check), pocols=pcols, plpad=sub(lo_c, ocol),
                    prpad=sub(end, hi_c), output=mul(pc0, self.out_bytes))

    def padding(self):
        """The input tile's padding: left and right (of the edge column tiles of a pooled program:
        they bound every tile's), up and down."""
        pr, P = self.pr, self.P
        if self.pool is not None:     # the edge tiles bound every tile's padding
            self.edges = self.pooled_columns(cst(0)), self.pooled_columns(sub(self.col_tiles, cst(1)))
            self.lpad, self.rpad = self.edges[0]["lpad"], self.edges[1]["rpad"]
        else:
            self.row_tile = self.columns(cst(0), self.ocols)
            self.lpad, self.rpad = self.row_tile["lpad"], self.row_tile["rpad"]
        if pr.rows == 1:      # every tap row is read (unmasked); the tile's last stride − 1 rows are not
            self.upad, self.dpad = cst(0), sub(self.stride, cst(1))
        else:
            h_t = add(P(pr.inp["h0"]), mul(self.r_lo, P(pr.inp["dil_h"])))
            if self.pool is not None:        # the tile starts at its first slice inside the image
                h_t = add(h_t, mul(self.valid_lo, self.stride))
            self.upad = smax0(sub(cst(0), h_t))
            self.dpad = smax0(sub(add(h_t, self.irows), P(pr.inp["height"])))
        self.guard("sge", sub(self.irows, add(self.upad, self.dpad)), cst(1))

    def downsampling(self):
        """tiled_conv's downsampling: a 1x1 stride-2 tile moves in only the even rows and columns
        its computes read (LoopConv's downsample flag), a quarter of the pixels, read with A stride 1
        (`a_step`). The flag depends on launch-invariant values only, so config elimination keeps the
        A stride set across programs; a program whose tile is padded on the left or above (which the
        loader cannot downsample) runs the explicit stream. The loader moves a column run's pixels in
        pairs, so an odd right padding (the image's last column even) is left out: the tile's last
        pixel read is then inside the image."""
        self.ds = cst(0)
        if self.pool is None:
            one_by_one_s2 = ir.create("arith.andi", operands=[ir.cmpi("eq", self.S, cst(1)),
                                                              ir.cmpi("eq", self.stride, cst(2))],
                                      results=[ir.IntegerType.get_signless(1)]).result
            self.ds = select(one_by_one_s2, cst(1), cst(0))
            self.guard("eq", mul(self.ds, add(add(self.lpad, self.upad), sub(self.krows, cst(1)))), cst(0))
            self.rpad = self.row_tile["rpad"] = sub(self.rpad, mul(self.ds, ir.binop("remsi", self.rpad, cst(2))))
        self.a_step = ir.binop("shrsi", self.stride, self.ds)        # config_ex's A stride for the computes

    def addresses(self):
        """The DRAM addresses (bytes; int8 inputs, weights and outputs) of the tile's first input
        pixel, its first tap row's weights, and the bias."""
        n, pr, P, inp = self.n, self.pr, self.P, self.pr.inp
        lin = inp["addr"]
        first_pixel = add(add(P(lin[None]), mul(self.r_lo, P(lin[pr.vr_id]))), mul(mul(self.upad, self.pitch), self.cs))
        if self.pool is not None:
            first_pixel = add(first_pixel, mul(mul(mul(self.valid_lo, self.stride), self.pitch), self.cs))
        self.input_addr = add(_base_addr(inp["base"]), first_pixel)
        self.weight_stride = P(pr.kst)
        self.weights_addr = add(_base_addr(pr.w_base), add(P(pr.w_off), mul(self.r_lo, P(pr.w_coef_r))))
        self.bias_addr = dram_addr_and_stride(n.bias_copy.operands[0], 4)[0] if n.bias_copy is not None \
            else self.input_addr

    def channel_blocks_that_fit(self):
        """Capacity: LoopConv's halves of the scratchpad and accumulator (sim.loops.conv_params).
        The input channels go kc at a time, one LOOP_CONV_WS each: all of them when the tile
        fits, else the fewest DIM-multiple blocks that fit (schedule.loop_conv_channel_block's
        rule, for this program's tile)."""
        guard, kchs, d = self.guard, self.kchs, self.d
        dim = cst(d)
        pixels = mul(ir.binop("shrsi", self.irows, self.ds), ir.binop("shrsi", self.icols, self.ds))
        weight_rows = mul(_blocks(self.ochs, dim), mul(self.krows, self.S))
        whole = ir.cmpi("sle", add(mul(_blocks(kchs, dim), pixels), mul(weight_rows, kchs)), cst(self.half_sp))
        widest = mul(ir.binop("divsi", cst(self.half_sp), _positive(add(pixels, mul(weight_rows, cst(d))))), cst(d))
        guard("sge", select(whole, cst(d), widest), cst(d))
        self.kc = select(whole, kchs, mul(_blocks(_blocks(kchs, _blocks(kchs, widest)), dim), cst(d)))
        self.channel_blocks = _blocks(kchs, self.kc)
        guard("sle", mul(_blocks(self.ochs, dim), mul(self.orows, self.ocols)), cst(self.half_acc))

    def config_fields(self):
        """The six LOOP_CONV_WS configurations' fields (of the whole program: the column tiles and
        channel blocks then replace some), each guarded inside its bit width."""
        pool, guard = self.pool, self.guard
        orows, ocols, ochs = self.orows, self.ocols, self.ochs
        self.fields = fields = {
            "loop_conv_ws_config_1": dict(batch_size=cst(1), in_row_dim=self.irows, in_channels=self.P(self.pr.in_ch),
                                          out_channels=ochs, out_row_dim=orows, pool_out_row_dim=orows,
                                          out_col_dim=ocols, stride=self.stride, padding=cst(0)),
            "loop_conv_ws_config_2": dict(pool_padding=cst(0), pool_stride=cst(0), pool_size=cst(0),
                                          pool_out_col_dim=ocols, kernel_dim=self.S, pochs=ochs, pocols=ocols,
                                          porows=orows, batches=cst(1)),
            "loop_conv_ws_config_3": dict(lpad=self.lpad, kchs=self.kc, kcols=self.S, krows=self.krows,
                                          in_col_dim=self.pitch, plpad=cst(0), dpad=self.dpad, upad=self.upad,
                                          rpad=self.rpad),
            "loop_conv_ws_config_4": dict(kernel_dilation=self.dil, pdpad=cst(0), pupad=cst(0), prpad=cst(0),
                                          orows=orows, ocols=ocols, out_stride=self.out_bytes,
                                          weight_stride=self.weight_stride, in_stride=self.cs),
            "loop_conv_ws_config_5": dict(weights_addr=self.weights_addr, output_addr=self.out_addr),
            "loop_conv_ws_config_6": dict(bias_addr=self.bias_addr, input_addr=self.input_addr),
        }
        if pool is not None:    # the FSM's pooled mvouts (the explicit store's config_st fields)
            fields["loop_conv_ws_config_1"].update(pool_out_row_dim=self.porows)
            fields["loop_conv_ws_config_2"].update(
                pool_padding=cst(pool["padding"]), pool_stride=cst(pool["stride"]), pool_size=cst(pool["kernel"]),
                pool_out_col_dim=cst(pool["pocols"]), pocols=self.tile_pocols, porows=self.porows)
            fields["loop_conv_ws_config_3"].update(plpad=self.edges[0]["plpad"])
            fields["loop_conv_ws_config_4"].update(pupad=self.valid_lo, pdpad=sub(cst(self.pr.rows), self.valid_hi),
                                                   prpad=self.edges[1]["prpad"])
            for v in (self.porows, orows, ocols):      # config_st's 8-bit pooled row/column counts
                guard("ult", v, cst(256))
            guard("ult", self.valid_lo, cst(4))        # and its 2-bit padding
        for name, values in fields.items():      # every field inside its bit width
            widths = {f.name: f.width for f in COMMANDS[name].fields}
            for field, v in values.items():
                if widths[field] < 64:
                    guard("ult", v, cst(1 << widths[field]))

    def packing(self):
        """First-layer packing (the C library's tiled_conv rule): with at most DIM/2 channels and
        no dilation, min(DIM // kchs, kcols) filter columns share one array row, their pixels
        packed side by side in one scratchpad row by the input mvins (config_ld pixel_repeats).
        Then the epilogue's scale."""
        n, d, kchs = self.n, self.d, self.kchs
        packs = ir.create("arith.andi", operands=[ir.cmpi("sle", mul(kchs, cst(2)), cst(d)),
                                                  ir.cmpi("eq", self.dil, cst(1))],
                          results=[ir.IntegerType.get_signless(1)]).result
        per_row = ir.binop("minsi", ir.binop("divsi", cst(d), select(packs, kchs, cst(1))), self.S)
        self.pixels = select(packs, per_row, cst(1))
        self.scale = cst(f32_bits(1.0))
        if n.scale is not None:
            bits = ir.create("arith.bitcast", operands=[n.scale], results=[ir.IntegerType.get_signless(32)]).result
            self.scale = ir.create("arith.extui", operands=[bits], results=[ir.i64()]).result

    def branches(self):
        """scf.if (all guards) with the loops in its then-branch and the explicit program's place in
        its else-branch; returns the op the explicit program moves before."""
        n = self.n
        cond = self.guards[0]
        for g in self.guards[1:]:
            cond = ir.create("arith.andi", operands=[cond, g], results=[cond.type]).result
        # config_st as linalg-to-instgem's store sets it, before the branches so they agree (config
        # elimination then drops the explicit program's)
        instgem.emit("config_st", stride=self.out_bytes, activation=n.relu, acc_scale=self.scale)
        if_op = scf.IfOp(cond, has_else=True)
        with InsertionPoint(if_op.then_block):
            self.loops()
        with InsertionPoint(if_op.else_block):
            explicit_end = self.fallback()
        n.loop.parent.attributes[SETS_CONFIG_EX] = UnitAttr.get()
        return explicit_end

    def a_stride(self, value):
        """The FSM's computes read every stride-th input row: config_ex's A stride (as tiled_conv sets
        it). Both branches end with it set, so the next program of the launch starts in it and
        config elimination leaves the LOOP_CONV_WS branch without config_ex after the first
        program: any command that is not a loop's waits until LoopConv holds no loop (the RTL's
        LoopConv passes it on only then), so a config_ex beside each loop would keep the next
        loop's loads from overlapping this one's computes. The explicit program sets its own
        A stride first (linalg-to-instgem leaves the function's entry config_ex out)."""
        return instgem.emit("config_ex", dataflow=1, acc_scale=f32_bits(1.0), a_stride=value, c_stride=1)

    def loops(self):
        """The then-branch: the loops of the program's only tile, or of each tile of pooled columns."""
        self.a_stride(self.a_step)
        if self.pool is None:
            self.column_tile(None)
        else:       # one tile (whole rows, the first edge tile's fields) needs no loop
            single = scf.IfOp(ir.cmpi("eq", self.col_tiles, cst(1)), has_else=True)
            with InsertionPoint(single.then_block):
                self.column_tile(cst(0), self.edges[0])
                scf.YieldOp([])
            with InsertionPoint(single.else_block):
                loop(cst(0), self.col_tiles, self.column_tile)
                scf.YieldOp([])
        scf.YieldOp([])

    def column_tile(self, t, tile=None):
        """One LOOP_CONV_WS per channel block, accumulating into the same accumulator rows (LoopConv
        moves to the other accumulator half only after a loop that stores): the first loads the
        bias (or zeros: no_bias), the others skip it (bias address 0), only the last stores
        (output address 0 stores nothing); each in its loop slot's half, so a block loads while the
        previous one computes. A pooled program is that per tile of pooled columns t (each storing its pooled
        pixels); t None: the program's only tile."""
        n, fields = self.n, self.fields
        if t is None or tile is not None:       # the program's only tile
            tile = tile or self.row_tile
        else:
            tile = self.pooled_columns(t, check=False)
        tile_fields = {
            "loop_conv_ws_config_1": dict(fields["loop_conv_ws_config_1"], out_col_dim=tile["ocols"]),
            "loop_conv_ws_config_2": dict(fields["loop_conv_ws_config_2"],
                                          **({} if t is None else dict(pocols=tile["pocols"]))),
            "loop_conv_ws_config_3": dict(fields["loop_conv_ws_config_3"], lpad=tile["lpad"], rpad=tile["rpad"],
                                          **({} if t is None else dict(plpad=tile["plpad"]))),
            "loop_conv_ws_config_4": dict(fields["loop_conv_ws_config_4"], ocols=tile["ocols"],
                                          **({} if t is None else dict(prpad=tile["prpad"])))}
        tile_out = self.out_addr if t is None else add(self.out_addr, tile["output"])

        def channel_block(block):
            c0 = mul(block, self.kc)
            first = ir.cmpi("eq", block, cst(0))
            last = ir.cmpi("eq", block, sub(self.channel_blocks, cst(1)))
            block_fields = dict(tile_fields)
            block_fields["loop_conv_ws_config_3"] = dict(tile_fields["loop_conv_ws_config_3"],
                                                         kchs=ir.binop("minsi", self.kc, sub(self.kchs, c0)))
            block_fields["loop_conv_ws_config_5"] = dict(weights_addr=add(self.weights_addr,
                                                                          mul(c0, self.weight_stride)),
                                                         output_addr=select(last, tile_out, cst(0)))
            block_fields["loop_conv_ws_config_6"] = dict(bias_addr=select(first, self.bias_addr, cst(0)),
                                                         input_addr=add(add(self.input_addr, tile["input"]), c0))
            for name in fields:
                instgem.emit(name, **block_fields[name])
            # spad ids 0: each loop in its LoopConv slot's half. Slots alternate over every
            # LOOP_CONV_WS the core issues, so two loops in flight never share a half; halves named
            # by the program would, wherever a program's loops are odd in number (the next
            # program's loads would overwrite rows a loop still reads: the cycle model's DataRace)
            instgem.emit("loop_conv_ws", no_bias=int(n.bias_copy is None), a_spad_id=0,
                         b_spad_id=0, no_pool=int(self.pool is None), activation=n.relu,
                         max_pixels_per_row=self.pixels, downsample=self.ds)
        loop(cst(0), self.channel_blocks, channel_block)

    def fallback(self):
        """The else-branch, where the explicit program runs; returns the op it moves before."""
        self.a_stride(cst(1))
        if self.pool is None:
            explicit_end = self.a_stride(self.a_step)
        else:   # a pooled program's store leaves config_st pooling, which LOOP_CONV_WS's closing
            # config_st does not: set back what both branches then agree on
            explicit_end = instgem.emit("config_st", stride=self.out_bytes, activation=self.n.relu,
                                        acc_scale=self.scale)
            self.a_stride(self.a_step)
        scf.YieldOp([])
        return explicit_end


def rewrite(n: Conv, pr: Proof, cfg: GemminiConfig) -> bool:
    """The matched, proven program as scf.if (its guards) of LOOP_CONV_WS loops, else the explicit
    program (moved into the else-branch); False, with nothing changed, when LoopConv cannot pool it
    or its epilogue and store cannot move above the tap loop, and False after the hoist when a
    value is not available before the loop."""
    pool = None
    if n.pool is not None:
        pool = _pooling(n, pr)
        if pool is None:
            return False
    tail = _tail(n)
    if not hoist_above(n.loop, tail):
        return False
    at = {op: i for i, op in enumerate(o.operation for o in n.loop.block.operations)}
    with InsertionPoint(n.loop), n.loop.location:
        program = LoopConvProgram(n, pr, cfg, pool)
        try:
            program.build()
        except Unavailable:
            return False
        explicit_end = program.branches()
    head = [op for op in (n.acc, n.acc_init) if op is not None]
    if n.bias_copy is not None:
        head += subview_ops([n.bias_copy.operands[1]]) + [n.bias_copy]
    for op in sorted(set(head) | set(tail) | {n.loop}, key=at.get):
        op.move_before(explicit_end)
    return True


def run(module_op, options: CompileOptions):
    if options.dataflow != "WS" or not options.loop_ws:
        return
    cfg = options.config
    for func in module_op.regions[0].blocks[0].operations:
        func = func.operation
        if func.name == "func.func" and len(func.regions[0].blocks) and not not_a_conv(func):
            conv = match(func, cfg)
            if conv is None:
                continue
            proof = Proof(conv, cfg)
            if proof.run():
                rewrite(conv, proof, cfg)
    instgem.verify_fields(module_op)
