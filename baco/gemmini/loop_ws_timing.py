"""LoopMatmul's timing as the cycle model runs it, walked loop by loop: one pure function over a
sequence of LOOP_WS loops (the programs baco's GEMM kernel compiles to, schedule.gemm_loop_ws_loops,
or the C library's tiled_matmul tiles, library_matmul_loops) and the CPU that issues them, so that
the compiler's default GEMM schedule (baco.gemmini.schedule) and the tuner's model of the program
(baco.tuner.kernel_model) rank by what the cycle model would measure, not by separate analytical
guesses. Pure Python: imports only baco.gemmini.

The walk follows baco.sim.timing's LoopMatmul (its constants are the cycle model's,
TimingConstants): two loops in flight, taking the loop slots in turn, each slot's A and B in its
own scratchpad half; LdD, then LdA and LdB on the one DMA loader in the order LoopMatmul's
arbiter interleaves them (B's first block, then whichever is behind in k; A moves MAX_BLOCK_LEN
k blocks a command, B a k row of up to MAX_BLOCK_LEN blocks); the execute FSM k -> j -> i behind
the loads of its k step, each (k, j) weight block preloaded under the previous compute (DIM rows
at least; a transposed B's through the transposer, a compute of its own), a k step no faster than
the accumulator rows it rewrites come back through the array;
StC behind the last k step's computes, then the next loop that stores C uses the other
accumulator half and waits for the stores that read it before. A loop takes a slot once the
loop two before it has issued its last command, and the CPU waits for that."""
from __future__ import annotations

import math
from dataclasses import dataclass

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
    return [(d if lp.b_transposed else max(d - (lp.pad_i if i == lp.I - 1 else 0), MIN_FEED_ROWS))
            + k.compute_overhead for i in range(lp.I)]


def _group_cycles(occ: list, cfg: GemminiConfig, b_transposed: bool = False) -> float:
    """Cycles of one (k, j) group's computes: new weights wait on a short last compute (DIM rows);
    a transposed B's weights are a compute of their own (the TransposePreloadUnroller: DIM rows)."""
    return cfg.dim + sum(occ) if b_transposed else sum(occ[:-1]) + max(occ[-1], cfg.dim)


class _Walk:
    """The walk's state: when the loader, the array and the store unit are next free and the CPU's
    clock; per loop slot when its last loop issued its last command and when the computes reading
    its scratchpad half ended; per accumulator half the first and last store that read it."""

    def __init__(self, cfg: GemminiConfig, k: TimingConstants, cpu: bool):
        self.cfg, self.k, self.cpu = cfg, k, cpu
        self.n = self.acc_half = 0
        self.cache = {}
        # ld, ex, st, clock, freed x2, computed x2, (first, last) read x2
        self.t = [0.0] * (4 + 3 * CONCURRENT_LOOPS + 2)

    def run(self, items) -> float:
        self._items(items)
        ld, ex, st, clock = self.t[:4]
        k = self.k
        end = max(st + k.dram_latency, ex + k.array_depth_factor * self.cfg.dim, ld + k.dram_latency)
        return max(end, clock) if self.cpu else end

    def _items(self, items):
        for item in items:
            if isinstance(item, LoopWs):
                self._loop(item)
            else:
                self._repeat(*item)

    def _repeat(self, items, count):
        """`items` `count` times; once two successive periods of two repetitions (the loop slots'
        and accumulator halves' parity is back) moved every time by the same delta, the rest of the
        whole periods each move them by that delta again."""
        previous, previous_n = None, 0
        done = 0
        while done < count:
            if done % 2 == 0 and count - done >= 2:
                now = (list(self.t), self.n % CONCURRENT_LOOPS, self.acc_half)
                if previous is not None and previous[1:] == now[1:]:
                    deltas = [a - b for a, b in zip(now[0], previous[0])]
                    moving = [x for x, v in zip(deltas, now[0]) if v]
                    if moving and all(abs(x - moving[0]) < 1e-6 for x, v in zip(deltas, now[0]) if v):
                        periods = (count - done) // 2
                        self.t = [v + moving[0] * periods if v else v for v in self.t]
                        self.n += periods * (self.n - previous_n)
                        done += 2 * periods
                        continue
                previous, previous_n = now, self.n
            self._items(items)
            done += 1

    def _dma(self, rows, row_bytes):
        return dma_cycles(rows, row_bytes, self.cfg, self.k)

    def _static(self, lp: LoopWs):
        """What a loop's walk needs that does not depend on when it runs (cached per loop): the
        explicit B mvins' and LdD's loader cycles; from the start of LdA / LdB, when each k step's
        A rows (per i) and B chunks (per MAX_BLOCK_LEN blocks of j, per block when transposed) have
        landed, and the loads' end (_operand_loads); each compute's and a (k, j) group's cycles; the
        C stores (last k group they follow, i, cycles)."""
        if lp in self.cache:
            return self.cache[lp]
        cfg, k, dma = self.cfg, self.k, self._dma
        d, mbl = cfg.dim, cfg.max_block_len
        I, J = lp.I, lp.J
        raw_b = sum(dma(lp.raw_b, min(mbl, J - j0) * d * cfg.input_bytes) for j0 in range(0, J, mbl)) \
            if lp.raw_b else 0.0
        ldd = sum(dma(d - (lp.pad_i if i == I - 1 else 0), min(cfg.max_block_len_acc, J - j0) * d * cfg.acc_bytes)
                  for i in range(I) for j0 in range(0, J, cfg.max_block_len_acc)) if lp.bias else 0.0
        a_ready, b_ready, t = self._operand_loads(lp)
        occ = _compute_cycles(lp, cfg, k)
        c_bytes = cfg.acc_bytes if lp.full_c else cfg.input_bytes
        chunk = 1 if lp.full_c else mbl
        stores = [(j0 + min(chunk, J - j0) - 1, i,
                   dma(d - (lp.pad_i if i == I - 1 else 0),
                       (min(chunk, J - j0) * d - (lp.pad_j if j0 + chunk >= J else 0)) * c_bytes) + k.acc_scale_latency)
                  for j0 in range(0, J, chunk) for i in range(I)] if lp.store else []
        self.cache[lp] = out = (raw_b, ldd, a_ready, b_ready, t, occ, _group_cycles(occ, cfg, lp.b_transposed), stores)
        return out

    def _operand_loads(self, lp: LoopWs):
        """(A's rows landed [k][i], B's blocks landed [k][chunk of j], the loads' end), from the start
        of LdA / LdB, in the arbiter's order (B's first block, then whichever is behind in k; a
        transposed B moves k chunks of each j row, the rows innermost)."""
        cfg, dma, lat = self.cfg, self._dma, self.k.dram_latency
        d, mbl = cfg.dim, cfg.max_block_len
        I, J, K = lp.I, lp.J, lp.K
        a_ready = [[0.0] * I for _ in range(K)]
        b_width = 1 if lp.b_transposed else mbl     # j blocks a B load brings in
        b_ready = [[0.0] * -(-J // b_width) for _ in range(K)]
        t = 0.0

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

    def _loop(self, lp: LoopWs):
        cfg, k = self.cfg, self.k
        d, mbl = cfg.dim, cfg.max_block_len
        lat, depth = k.dram_latency, k.array_depth_factor * d
        raw_b, ldd, a_off, b_off, loads, occ, group, stores = self._static(lp)
        T = self.t
        ld, ex, st, clock = T[:4]
        FREED, COMPUTED, READ = 4, 4 + CONCURRENT_LOOPS, 4 + 2 * CONCURRENT_LOOPS
        slot = self.n % CONCURRENT_LOOPS
        self.n += 1
        I, J, K = lp.I, lp.J, lp.K
        raw_b_ready = -math.inf
        if lp.raw_b:        # explicit mvins of B: once every loop has issued its last command; the CPU
            t = max(T[FREED:COMPUTED])      # waits for that, then runs this step's code (Gemmini idles)
            if self.cpu:
                clock = max(clock, t) + lp.cpu * k.cpu_cycles_per_instruction
                t = clock
            ld = max(ld, t) + raw_b
            raw_b_ready = ld + lat
        elif self.cpu:
            clock += lp.cpu * k.cpu_cycles_per_instruction
        arrival = max(T[FREED + slot], clock if self.cpu else 0.0)
        if self.cpu:
            clock = arrival
        first_read, last_read = T[READ + 2 * self.acc_half:READ + 2 * self.acc_half + 2]
        t0 = max(ld, arrival, T[COMPUTED + slot])
        if lp.bias:     # LdD: the bias into the accumulator rows, each after the store that read them
            n_d = lp.I * -(-lp.J // cfg.max_block_len_acc)
            t0 = max(max(t0, first_read) + ldd, last_read + ldd / n_d)
        ld = t0 + loads
        # the execute FSM: k -> j -> i, behind the loads of its k step; the first (j = 0) group
        # compute by compute (A's rows land one after the other), the others chunk by chunk of B
        e = max(ex, 0.0 if lp.bias else first_read)
        width = 1 if lp.b_transposed else mbl
        chunks = -(-J // width)
        for kk in range(K):
            a_k, b_k = a_off[kk], b_off[kk]
            b0 = max(t0 + b_k[0], raw_b_ready) if lp.load_b else raw_b_ready
            ready = max(b0, t0 + a_k[0] if lp.load_a else -math.inf)
            start = ready + d if ready > e else e       # late operands: the weights move in alone
            t = start
            if lp.load_a:
                done = []
                for i in range(I):
                    t = max(t, t0 + a_k[i]) + occ[i]
                    done.append(t)
            else:
                done = [start + sum(occ[:i + 1]) for i in range(I)]
                t = done[-1]
            t = max(t, start + group)
            for c in range(chunks):
                n = min(width, J - c * width) - (c == 0)
                if n:
                    t = max(t, t0 + b_k[c] if lp.load_b else raw_b_ready) + n * group
            e = max(t, start + occ[0] + depth)          # the next k step rewrites these rows
        ex = max(t, last_read)
        T[COMPUTED + slot] = ex
        ex_issued = ex - J * group * min(1.0, cfg.rs_ex / 2 / (I * J))
        T[FREED + slot] = ex_issued
        if stores:
            s, ends = st, []
            for j, i, cost in stores:       # each store reads its rows once their last compute is out
                s = max(s, done[i] + j * group + depth) + cost
                ends.append(s)
            st = s
            T[READ + 2 * self.acc_half:READ + 2 * self.acc_half + 2] = [ends[0], st]
            self.acc_half ^= 1
            # the store FSM issues its last command once all but rs_st of them are out
            if len(ends) > cfg.rs_st:
                T[FREED + slot] = max(ex_issued, ends[len(ends) - cfg.rs_st - 1])
        T[:4] = [ld, ex, st, clock]


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
