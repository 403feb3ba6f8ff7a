"""LoopMatmul's timing as the cycle model runs it, walked loop by loop: one pure function over a
sequence of LOOP_WS loops (the programs baco's GEMM kernel compiles to, schedule.gemm_loop_ws_loops,
or the C library's tiled_matmul tiles, library_matmul_loops) and the CPU that issues them, so that
the compiler's default GEMM schedule (baco.gemmini.schedule) and the tuner's model of the program
(baco.tuner.kernel_model) rank by what the cycle model would measure, not by separate analytical
guesses. Pure Python: imports only baco.gemmini.

The walk follows baco.sim.timing's LoopMatmul (its constants are the cycle model's,
TimingConstants): two loops in flight, taking the loop slots in turn, each slot's A and B in its
own scratchpad half; LdD (the bias, padded columns not moved; it writes the accumulator only, so it
runs under the computes still reading the slot's scratchpad half), then LdA and LdB on the one DMA
loader in the order LoopMatmul's arbiter interleaves them (B's first block, then whichever is behind in k; A moves MAX_BLOCK_LEN
k blocks a command, B a k row of up to MAX_BLOCK_LEN blocks); the execute FSM k -> j -> i behind
the loads of its k step, each (k, j) weight block preloaded under the previous compute (DIM rows
at least; a transposed B's through the transposer, a compute of its own), a k step no faster than
the accumulator rows it rewrites come back through the array;
StC behind the last k step's computes, then the next loop that stores C uses the other
accumulator half and waits for the stores that read it before. A loop takes a slot once the
loop two before it has issued its last command, and the CPU waits for that.

The walk is quick so that the tuner can walk every candidate's programs: a loop's recurrences
(over its computes, B chunks and stores) are summed in closed form once (_LoopTerms, cached across
walks), and a run of equal loops or repeated programs is walked only until it is periodic, the
rest extrapolated exactly (_Walk._repeat). tests/loop_ws_walk_reference.py walks the same model
one step at a time; the tests check the two agree."""
from __future__ import annotations

import functools
import math
from dataclasses import astuple, dataclass

from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_matmul_auto
from baco.gemmini.isa import CONCURRENT_LOOPS, MIN_FEED_ROWS
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, TimingConstants

def dma_cycles(rows: int, row_bytes: int, cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS) -> float:
    """Cycles of one DMA command moving `rows` rows of `row_bytes` bytes, as the cycle model charges
    it: beats on the bus or in-flight requests of the DRAM latency, whichever is longer."""
    beat = cfg.dma_bus_bits // 8
    return k.dma_cmd_overhead + max(rows * -(-row_bytes // beat) * k.beat_cycles,
                                    -(-rows // cfg.max_in_flight) * k.dram_latency)


@dataclass(frozen=True)
class LoopWs:
    """One LOOP_WS: I x J x K DIM blocks (the last of each padded by pad_*), whether LoopMatmul
    moves A and B itself (else they are in the scratchpad already), D (a bias) moved in first,
    C stored at the end (int32 `full_c`, else int8), `raw_b`: rows of B moved in by explicit
    mvins just before it (they wait for the loop unit to drain), `b_transposed`: B column-major in
    DRAM (b_transpose: LdB moves J rows of K blocks, a chunk of MAX_BLOCK_LEN k blocks per row and
    the rows innermost, so a k step's weights land block column by block column), `cpu`: the CPU's instructions
    before it is issued (its loop registers and whatever comes before them), and `commands`: the
    RoCC commands the CPU issues for it (counted, not timed: `cpu` holds their cost)."""
    I: int
    J: int
    K: int
    pad_i: int = 0
    pad_j: int = 0
    pad_k: int = 0
    load_a: bool = True
    load_b: bool = True
    bias: bool = False
    store: bool = True
    full_c: bool = True
    raw_b: int = 0
    b_transposed: bool = False
    cpu: float = 0.0
    commands: int = 0


def loop_ws_stream_cycles(loops, cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS) -> dict:
    """Cycles of a sequence of LOOP_WS loops on the cycle model: `gemmini` (the commands arriving
    for free) and `cycles` (the CPU issuing them at cpu_cycles_per_instruction, waiting while no
    loop slot is free; to the closing fence). `loops` is run-length encoded: each item a LoopWs or
    (items, count), items repeated `count` times (the programs of a grid: a run of equal programs
    reaches a periodic regime, which the walk extrapolates)."""
    loops = list(loops)
    return {"gemmini": loop_ws_gemmini_cycles(loops, cfg, k), "cycles": loop_ws_end_to_end(loops, cfg, k)}


def loop_ws_gemmini_cycles(loops, cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS) -> float:
    """loop_ws_stream_cycles(loops)["gemmini"] alone (one walk, not two)."""
    return _Walk(cfg, k, cpu=False).run(loops)


def loop_ws_end_to_end(loops, cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS) -> float:
    """loop_ws_stream_cycles(loops)["cycles"] alone."""
    return _Walk(cfg, k, cpu=True).run(loops)


def loop_ws_lower_bound(loops, cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS) -> float:
    """A lower bound of loop_ws_stream_cycles(loops)["cycles"], without the walk: the CPU's
    instructions, or the array's computes back to back, whichever is longer."""
    def sums(items):
        cpu = array = 0.0
        for item in items:
            if isinstance(item, LoopWs):
                occ = _compute_cycles(item, cfg, k)
                group = _group_cycles(occ, cfg, item.b_transposed)
                cpu += item.cpu
                array += (item.K - 1) * max(item.J * group, occ[0] + k.array_depth_factor * cfg.dim) + item.J * group
            else:
                c, a = sums(item[0])
                cpu, array = cpu + item[1] * c, array + item[1] * a
        return cpu, array
    cpu, array = sums(loops)
    return max(cpu * k.cpu_cycles_per_instruction, array)


def _compute_cycles(lp: LoopWs, cfg: GemminiConfig, k: TimingConstants) -> list:
    """The array's cycles for each compute of a (k, j) group: DIM rows (fewer in a padded last i,
    at least MIN_FEED_ROWS; always DIM when B goes through the transposer) plus the per-command
    overhead."""
    d = cfg.dim
    if lp.b_transposed:
        return [d + k.compute_overhead] * lp.I
    return [max(d, MIN_FEED_ROWS) + k.compute_overhead] * (lp.I - 1) + [max(d - lp.pad_i, MIN_FEED_ROWS)
                                                                          + k.compute_overhead]


def _group_cycles(occ: list, cfg: GemminiConfig, b_transposed: bool = False) -> float:
    """Cycles of one (k, j) group's computes: new weights wait on a short last compute (DIM rows);
    a transposed B's weights are a compute of their own (the TransposePreloadUnroller: DIM rows)."""
    return cfg.dim + sum(occ) if b_transposed else sum(occ[:-1]) + max(occ[-1], cfg.dim)


# the walk's state, one vector of times: when the loader, the array and the store unit are next
# free and the CPU's clock; per loop slot when its last loop issued its last command (FREED) and
# when the computes reading its scratchpad half ended (COMPUTED); per accumulator half the first
# and last store that read it (READ: first, last)
LD, EX, ST, CLOCK = range(4)
FREED = 4
COMPUTED = FREED + CONCURRENT_LOOPS
READ = COMPUTED + CONCURRENT_LOOPS
STATE_SIZE = READ + 2 * 2


class _Walk:
    """The walk: its state (the times above, the loops issued so far, the accumulator half the next
    stored C uses) and what it knows of the loops it walks (their _LoopTerms, each list's runs)."""

    def __init__(self, cfg: GemminiConfig, k: TimingConstants, cpu: bool):
        self.cfg, self.k, self.cpu = cfg, k, cpu
        self.n = self.acc_half = 0
        self.constants = astuple(k)
        self.terms = {}     # the loops' _LoopTerms (the walk's own: one hash of the loop, not of the config too)
        self.runs = {}
        self.t = [0.0] * STATE_SIZE

    def run(self, items) -> float:
        self._items(items)
        ld, ex, st, clock = self.t[:4]
        k = self.k
        end = max(st + k.dram_latency, ex + k.array_depth_factor * self.cfg.dim, ld + k.dram_latency)
        # to a millionth of a cycle: the extrapolation's rounding differs from a step-by-step walk's
        # in the last bits, and callers rank candidates whose walks tie exactly
        return round(max(end, clock) if self.cpu else end, 6)

    def _items(self, items):
        for unit, count in self._runs(items):
            if count == 1:
                self._unit(unit)
            elif count:
                self._repeat(unit, count)

    def _unit(self, unit):
        if isinstance(unit, LoopWs):
            self._loop(unit)
        else:
            self._items(unit)

    def _runs(self, items) -> list:
        """`items` as (unit, count) runs: a (items, count) item as it is, and equal LoopWs one after
        the other (a program's K steps) as one run, so that _repeat extrapolates them too. Cached per
        list (the cache keeps the list, so its id stays its own)."""
        cached = self.runs.get(id(items))
        if cached is not None:
            return cached[1]
        runs = []
        for item in items:
            if not isinstance(item, LoopWs):
                runs.append(tuple(item))
            elif runs and runs[-1][0] == item:
                runs[-1] = (item, runs[-1][1] + 1)
            else:
                runs.append((item, 1))
        self.runs[id(items)] = items, runs
        return runs

    def _repeat(self, unit, count):
        """`unit` `count` times. Once a period of repetitions (one, or two when a repetition flips the
        loop slot or the accumulator half) moved the state by the same delta (_period_shift), every
        further period does the same: a loop's step adds cycles to, takes maxima of and compares
        times of the state (constants never win: 0 and -inf), so it commutes with moving every time
        it reads by one delta. The whole periods left are added at once, the rest walked."""
        seen = {}
        done = 0
        while done < count:
            key = self.n % CONCURRENT_LOOPS, self.acc_half
            if key in seen:
                done_before, before, n_before = seen[key]
                shift = self._period_shift(before)
                if shift is not None:
                    period = done - done_before
                    periods = (count - done) // period
                    T = self.t
                    for i in range(STATE_SIZE):
                        if T[i] != before[i]:
                            T[i] += periods * shift
                    self.n += periods * (self.n - n_before)
                    for _ in range(count - done - periods * period):
                        self._unit(unit)
                    return
            seen[key] = done, list(self.t), self.n
            self._unit(unit)
            done += 1

    def _period_shift(self, before: list):
        """The delta by which the state moved since `before` if it is a whole periodic step, else None:
        every time moved by the same delta but those no later loop reads: the store unit's without
        a store (only a store reads it), the CPU's clock when the CPU is not walked, and the
        accumulator halves' reads when no store wrote them and they are no later than the array's
        and both slots' computes were at `before` (what they are compared with never goes back)."""
        T = self.t
        shift = None
        for i in range(STATE_SIZE):
            d = T[i] - before[i]
            if d:
                if shift is None:
                    shift = d
                elif abs(d - shift) > 1e-6:
                    return None
            elif i < READ and i != ST and (i != CLOCK or self.cpu):
                return None
        if shift is None:
            return None
        floor = min(before[EX], *before[COMPUTED:READ])
        if any(T[i] == before[i] and T[i] > floor for i in range(READ, STATE_SIZE)):
            return None
        return shift

    def _loop(self, lp: LoopWs):
        terms = self.terms.get(lp)
        if terms is None:
            terms = self.terms[lp] = _loop_terms(lp, self.cfg, self.constants)
        k, cpu, T = self.k, self.cpu, self.t
        ld, ex, st, clock = T[LD], T[EX], T[ST], T[CLOCK]
        slot = self.n % CONCURRENT_LOOPS
        self.n += 1
        raw_b_ready = -math.inf
        if lp.raw_b:        # explicit mvins of B: once every loop has issued its last command; the CPU
            t = max(T[FREED:COMPUTED])      # waits for that, then runs this step's code (Gemmini idles)
            if cpu:
                clock = max(clock, t) + lp.cpu * k.cpu_cycles_per_instruction
                t = clock
            ld = max(ld, t) + terms.raw_b
            raw_b_ready = ld + k.dram_latency
        elif cpu:
            clock += lp.cpu * k.cpu_cycles_per_instruction
        arrival = max(T[FREED + slot], clock if cpu else 0.0)
        if cpu:
            clock = arrival
        half = READ + 2 * self.acc_half
        first_read, last_read = T[half], T[half + 1]
        t0 = max(ld, arrival)
        if lp.bias:     # LdD: the bias into the accumulator rows, each after the store that read them
            t0 = max(max(t0, first_read) + terms.ldd, last_read + terms.ldd_row)
        # LdA and LdB overwrite the slot's scratchpad half once the computes reading it are done; LdD
        # writes the accumulator only, so it runs under those computes
        t0 = max(t0, T[COMPUTED + slot])
        ld = t0 + terms.loads
        # the execute FSM: k -> j -> i, behind the loads of its k step (each k step's terms in closed
        # form: _LoopTerms)
        e = max(ex, 0.0 if lp.bias else first_read)
        d, computes, group, rest, first_depth = self.cfg.dim, terms.computes, terms.group, terms.rest, terms.first_depth
        rest_raw = raw_b_ready + rest if terms.rest_waits_raw_b else -math.inf
        t = start = e
        for first, a_wait, b_wait in terms.steps:
            ready = max(t0 + first, raw_b_ready)
            start = ready + d if ready > e else e       # late operands: the weights move in alone
            t = max(computes + max(start, t0 + a_wait), start + group)
            t = max(t + rest, t0 + b_wait, rest_raw)
            e = max(t, start + first_depth)             # the next k step rewrites these rows
        ex = max(t, last_read)
        T[COMPUTED + slot] = ex
        ex_issued = ex - terms.issue_ahead
        T[FREED + slot] = ex_issued
        if terms.stores:    # each store reads its rows once their last compute is out
            ends = [cost + max(st, start + after_start, t0 + after_loads)
                    for cost, after_start, after_loads in terms.stores]
            st = ends[1]
            T[half], T[half + 1] = ends[0], st
            self.acc_half ^= 1
            # the store FSM issues its last command once all but rs_st of them are out
            if len(ends) == 3:
                T[FREED + slot] = max(ex_issued, ends[2])
        T[LD], T[EX], T[ST], T[CLOCK] = ld, ex, st, clock


@functools.lru_cache(maxsize=16384)
def _loop_terms(lp: LoopWs, cfg: GemminiConfig, constants: tuple) -> "_LoopTerms":
    """A loop's _LoopTerms (cached across walks: the tuner walks the same loops in many programs)."""
    return _LoopTerms(lp, cfg, TimingConstants(*constants))


class _LoopTerms:
    """What a loop's walk needs that does not depend on when it runs, the execute FSM's and the
    stores' recurrences (t = max(t, ready) + cycles, over a k step's computes, its B chunks, the
    stores) summed in closed form: t after the steps = sum of cycles + max(t before, the latest
    ready - the cycles before it).

    - raw_b, ldd: the explicit B mvins' and LdD's loader cycles (ldd_row: LdD's per command);
      loads: LdA and LdB's cycles (_operand_loads);
    - steps, per k step, from the start of LdA / LdB: `first`, when the first compute's operands
      (A's first rows, B's first chunk) landed; `a_wait`, the latest A row's landing less the
      computes before it; `b_wait`, the latest B chunk's landing plus the groups after it;
    - computes: a (k, j = 0) group's computes; group: a (k, j) group's cycles; rest: the other
      j groups'; first_depth: the first compute and the array's depth (the next k step rewrites its
      rows after that); issue_ahead: how long before the last compute ends the execute FSM has
      issued its last command;
    - stores (when the loop stores C): for the first store, the last and the one rs_st before the
      last (when there are more): (cost of the stores up to it, and the latest of the stores up to it
      can start less the cost before it: after the last k step's start, after the loads' start)."""
    __slots__ = ("raw_b", "ldd", "ldd_row", "loads", "steps", "computes", "group", "rest", "rest_waits_raw_b",
                 "first_depth", "issue_ahead", "stores")

    def __init__(self, lp: LoopWs, cfg: GemminiConfig, k: TimingConstants):
        d, mbl, acc_mbl = cfg.dim, cfg.max_block_len, cfg.max_block_len_acc
        I, J = lp.I, lp.J

        def dma(rows, row_bytes):
            return dma_cycles(rows, row_bytes, cfg, k)

        def rows(i):
            return d - (lp.pad_i if i == I - 1 else 0)

        self.raw_b = sum(dma(min(d, lp.raw_b - r0), min(mbl, J - j0) * d * cfg.input_bytes)
                         for r0 in range(0, lp.raw_b, d) for j0 in range(0, J, mbl))     # a mvin a DIM rows
        self.ldd = sum(dma(rows(i), (min(acc_mbl, J - j0) * d - (lp.pad_j if j0 + acc_mbl >= J else 0)) * cfg.acc_bytes)
                       for i in range(I) for j0 in range(0, J, acc_mbl)) if lp.bias else 0.0
        self.ldd_row = self.ldd / (I * -(-J // acc_mbl))
        a_ready, b_ready, self.loads = _operand_loads(lp, cfg, k)
        occ = _compute_cycles(lp, cfg, k)
        before = [0.0]      # computes before each i, then all of them
        for c in occ:
            before.append(before[-1] + c)
        self.computes = before[-1]
        self.group = group = _group_cycles(occ, cfg, lp.b_transposed)
        width = 1 if lp.b_transposed else mbl
        groups = [min(width, J - c0) - (c0 == 0) for c0 in range(0, J, width)]      # j groups per B chunk
        after = [0.0] * len(groups)                 # the groups from chunk c on
        for c in reversed(range(len(groups))):
            after[c] = (after[c + 1] if c + 1 < len(groups) else 0.0) + groups[c] * group
        self.rest = after[0]
        self.rest_waits_raw_b = bool(self.rest) and not lp.load_b
        self.first_depth = occ[0] + k.array_depth_factor * d
        self.issue_ahead = J * group * min(1.0, cfg.rs_ex / 2 / (I * J))
        a_wait = [[a - b for a, b in zip(a_k, before)] for a_k in a_ready] if lp.load_a else None
        self.steps = [(max(a_ready[kk][0] if lp.load_a else -math.inf, b_ready[kk][0] if lp.load_b else -math.inf),
                       max(a_wait[kk]) if lp.load_a else -math.inf,
                       max((b + a for b, a, n in zip(b_ready[kk], after, groups) if n), default=-math.inf)
                       if lp.load_b else -math.inf)
                      for kk in range(lp.K)]
        self.stores = self._stores(lp, cfg, k, before, a_wait[-1] if lp.load_a else None)

    def _stores(self, lp, cfg, k, before, a_wait_last) -> list:
        if not lp.store:
            return []
        d, I, J = cfg.dim, lp.I, lp.J
        depth = k.array_depth_factor * d
        c_bytes = cfg.acc_bytes if lp.full_c else cfg.input_bytes
        chunk = 1 if lp.full_c else cfg.max_block_len
        out, cost = [], 0.0
        after_start = after_loads = -math.inf
        latest_a = []       # A's latest row landing (less the computes before it) up to each i
        for w in a_wait_last or ():
            latest_a.append(max(latest_a[-1], w) if latest_a else w)
        for j0 in range(0, J, chunk):
            cols = min(chunk, J - j0)
            for i in range(I):
                # the store waits for its rows' last compute: i's in the (last k, last j) group
                ready = before[i + 1] + (j0 + cols - 1) * self.group + depth - cost
                after_start = max(after_start, ready)
                if a_wait_last is not None:
                    after_loads = max(after_loads, ready + latest_a[i])
                cost += dma_cycles(d - (lp.pad_i if i == I - 1 else 0),
                                   (cols * d - (lp.pad_j if j0 + chunk >= J else 0)) * c_bytes, cfg, k) \
                    + k.acc_scale_latency
                out.append((cost, after_start, after_loads))
        # the first store, the last, and the one the store FSM's last command waits for
        return [out[0], out[-1]] + ([out[-1 - cfg.rs_st]] if len(out) > cfg.rs_st else [])


def _operand_loads(lp: LoopWs, cfg: GemminiConfig, k: TimingConstants):
    """(A's rows landed [k][i], B's blocks landed [k][chunk of j], the loads' end), from the start
    of LdA / LdB, in the arbiter's order (B's first block, then whichever is behind in k; a
    transposed B moves k chunks of each j row, the rows innermost)."""
    lat = k.dram_latency
    d, mbl = cfg.dim, cfg.max_block_len
    I, J, K = lp.I, lp.J, lp.K
    a_ready = [[0.0] * I for _ in range(K)]
    b_width = 1 if lp.b_transposed else mbl     # j blocks a B load brings in
    b_ready = [[0.0] * -(-J // b_width) for _ in range(K)]
    t = 0.0

    def dma(rows, row_bytes):
        return dma_cycles(rows, row_bytes, cfg, k)

    def load_b_chunk(c0, t, part=None):
        """B transposed: the rows j (DIM rows each, never padded) of k blocks c0.. c0 + MBL."""
        n_k = min(mbl, K - c0)
        cols = n_k * d - (lp.pad_k if c0 + n_k == K else 0)
        for j in range(J):
            if part == "first" and j or part == "rest" and not j:
                continue
            t += dma(d, cols * cfg.input_bytes)
            for kk in range(c0, c0 + n_k):
                b_ready[kk][j] = t + lat
        return t

    def load_b_row(kk, t, part=None):
        for j0 in range(0, J, mbl):
            if part == "first" and j0 or part == "rest" and not j0:
                continue
            t += dma(d, (min(mbl, J - j0) * d - (lp.pad_j if j0 + mbl >= J else 0)) * cfg.input_bytes)
            b_ready[kk][j0 // mbl] = t + lat
        return t

    def load_a_chunk(c0, t):
        n_k = min(mbl, K - c0)
        cols = n_k * d - (lp.pad_k if c0 + n_k == K else 0)
        for i in range(I):
            t += dma(d - (lp.pad_i if i == I - 1 else 0), cols * cfg.input_bytes)
            for kk in range(c0, c0 + n_k):
                a_ready[kk][i] = t + lat
        return t

    a_chunks = range(0, K, mbl) if lp.load_a else ()
    if lp.load_b and lp.b_transposed:
        for c0 in range(0, K, mbl):
            if lp.load_a:
                t = load_b_chunk(c0, t, "first")
                t = load_a_chunk(c0, t)
                t = load_b_chunk(c0, t, "rest")
            else:
                t = load_b_chunk(c0, t)
    elif lp.load_a and lp.load_b:
        t = load_b_row(0, t, "first")
        for c0 in a_chunks:
            t = load_a_chunk(c0, t)
            for kk in range(c0, min(K, c0 + mbl)):
                t = load_b_row(kk, t, "rest" if kk == 0 else None)
    else:
        for c0 in a_chunks:
            t = load_a_chunk(c0, t)
        for kk in range(K) if lp.load_b else ():
            t = load_b_row(kk, t)
    return a_ready, b_ready, t


def library_matmul_loops(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = True) -> list:
    """The LOOP_WSs of the C library's tiled_matmul_auto without a bias (baco.sim.clib.matmul_stream):
    one a tile in tiled_matmul_outer's order (i, j, k), C stored by the last k tile, A (B) moved in
    unless the library keeps it in the scratchpad across tiles (tiled_matmul_outer's reuse, when its
    tiles along the other dimension times those along K are at most two)."""
    d = cfg.dim
    ti, tj, tk = tiled_matmul_auto(M, N, K, cfg, "WS")
    mb, nb, kb = -(-M // d), -(-N // d), -(-K // d)
    I0, J0, K0 = -(-mb // ti), -(-nb // tj), -(-kb // tk)
    a_reuse, b_reuse = I0 * K0 <= 2, J0 * K0 <= 2
    loops = []
    for i0 in range(I0):
        I = min(ti, mb - i0 * ti)
        for j0 in range(J0):
            J = min(tj, nb - j0 * tj)
            for k0 in range(K0):
                Kb = min(tk, kb - k0 * tk)
                loops.append(LoopWs(I, J, Kb, pad_i=(i0 * ti + I) * d - M if i0 == I0 - 1 else 0,
                                    pad_j=(j0 * tj + J) * d - N if j0 == J0 - 1 else 0,
                                    pad_k=(k0 * tk + Kb) * d - K if k0 == K0 - 1 else 0,
                                    load_a=not (a_reuse and j0), load_b=not (b_reuse and i0),
                                    store=k0 == K0 - 1, full_c=not out_int8))
    return loops
