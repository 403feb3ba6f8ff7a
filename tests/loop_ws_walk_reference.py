"""The LoopMatmul walk of baco.gemmini.loop_ws_timing taken one step at a time: every loop of a
run-length encoded sequence, every compute of every k step, every store, as the module's docstring
states it (the walk as it was before its recurrences were summed in closed form and the K steps'
runs extrapolated). tests/test_loop_ws_timing_reference.py checks the fast walk against it.

It shares the cost model's facts with the module (dma_cycles, the compute and group cycles), not
its algorithm. A LoopWs field that changes the walk is added here too."""
from __future__ import annotations

import math

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import CONCURRENT_LOOPS
from baco.gemmini.loop_ws_timing import LoopWs, _compute_cycles, _group_cycles, dma_cycles
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, TimingConstants


def unrolled(items) -> list:
    """The loops of run-length encoded `items`, one by one."""
    out = []
    for item in items:
        out += [item] if isinstance(item, LoopWs) else unrolled(item[0]) * item[1]
    return out


def stream_cycles(items, cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS) -> dict:
    """loop_ws_stream_cycles, each loop walked."""
    loops = unrolled(items)
    return {"gemmini": _Walk(cfg, k, cpu=False).run(loops), "cycles": _Walk(cfg, k, cpu=True).run(loops)}


class _Walk:
    """When the loader, the array and the store unit are next free and the CPU's clock; per loop
    slot when its last loop issued its last command and when the computes reading its scratchpad
    half ended; per accumulator half the first and last store that read it."""

    def __init__(self, cfg: GemminiConfig, k: TimingConstants, cpu: bool):
        self.cfg, self.k, self.cpu = cfg, k, cpu
        self.n = self.acc_half = 0
        # ld, ex, st, clock, freed x2, computed x2, (first, last) read x2
        self.t = [0.0] * (4 + 3 * CONCURRENT_LOOPS + 2)

    def run(self, loops) -> float:
        for lp in loops:
            self._loop(lp)
        ld, ex, st, clock = self.t[:4]
        k = self.k
        end = max(st + k.dram_latency, ex + k.array_depth_factor * self.cfg.dim, ld + k.dram_latency)
        return max(end, clock) if self.cpu else end

    def _dma(self, rows, row_bytes):
        return dma_cycles(rows, row_bytes, self.cfg, self.k)

    def _static(self, lp: LoopWs):
        cfg, k, dma = self.cfg, self.k, self._dma
        d, mbl = cfg.dim, cfg.max_block_len
        I, J = lp.I, lp.J
        raw_b = sum(dma(min(d, lp.raw_b - r0), min(mbl, J - j0) * d * cfg.input_bytes)
                    for r0 in range(0, lp.raw_b, d) for j0 in range(0, J, mbl))     # a mvin a DIM rows
        acc_mbl = cfg.max_block_len_acc
        ldd = sum(dma(d - (lp.pad_i if i == I - 1 else 0),
                      (min(acc_mbl, J - j0) * d - (lp.pad_j if j0 + acc_mbl >= J else 0)) * cfg.acc_bytes)
                  for i in range(I) for j0 in range(0, J, acc_mbl)) if lp.bias else 0.0
        a_ready, b_ready, t = self._operand_loads(lp)
        occ = _compute_cycles(lp, cfg, k)
        c_bytes = cfg.acc_bytes if lp.full_c else cfg.input_bytes
        chunk = 1 if lp.full_c else mbl
        stores = [(j0 + min(chunk, J - j0) - 1, i,
                   dma(d - (lp.pad_i if i == I - 1 else 0),
                       (min(chunk, J - j0) * d - (lp.pad_j if j0 + chunk >= J else 0)) * c_bytes) + k.acc_scale_latency)
                  for j0 in range(0, J, chunk) for i in range(I)] if lp.store else []
        return raw_b, ldd, a_ready, b_ready, t, occ, _group_cycles(occ, cfg, lp.b_transposed), stores

    def _operand_loads(self, lp: LoopWs):
        cfg, dma, lat = self.cfg, self._dma, self.k.dram_latency
        d, mbl = cfg.dim, cfg.max_block_len
        I, J, K = lp.I, lp.J, lp.K
        a_ready = [[0.0] * I for _ in range(K)]
        b_width = 1 if lp.b_transposed else mbl
        b_ready = [[0.0] * -(-J // b_width) for _ in range(K)]
        t = 0.0

        def load_b_chunk(c0, t, part=None):
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
        if lp.raw_b:
            t = max(T[FREED:COMPUTED])
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
        t0 = max(ld, arrival)
        if lp.bias:
            n_d = lp.I * -(-lp.J // cfg.max_block_len_acc)
            t0 = max(max(t0, first_read) + ldd, last_read + ldd / n_d)
        t0 = max(t0, T[COMPUTED + slot])
        ld = t0 + loads
        e = max(ex, 0.0 if lp.bias else first_read)
        width = 1 if lp.b_transposed else mbl
        chunks = -(-J // width)
        for kk in range(K):
            a_k, b_k = a_off[kk], b_off[kk]
            b0 = max(t0 + b_k[0], raw_b_ready) if lp.load_b else raw_b_ready
            ready = max(b0, t0 + a_k[0] if lp.load_a else -math.inf)
            start = ready + d if ready > e else e
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
            e = max(t, start + occ[0] + depth)
        ex = max(t, last_read)
        T[COMPUTED + slot] = ex
        ex_issued = ex - J * group * min(1.0, cfg.rs_ex / 2 / (I * J))
        T[FREED + slot] = ex_issued
        if stores:
            s, ends = st, []
            for j, i, cost in stores:
                s = max(s, done[i] + j * group + depth) + cost
                ends.append(s)
            st = s
            T[READ + 2 * self.acc_half:READ + 2 * self.acc_half + 2] = [ends[0], st]
            self.acc_half ^= 1
            if len(ends) > cfg.rs_st:
                T[FREED + slot] = max(ex_issued, ends[len(ends) - cfg.rs_st - 1])
        T[:4] = [ld, ex, st, clock]
