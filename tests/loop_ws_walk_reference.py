"""The LoopMatmul walk of baco.gemmini.loop_ws_timing taken one step at a time: every loop of a
run-length encoded sequence, every compute of every k step, every store, as the module's docstring
states it (the walk as it was before its recurrences were summed in closed form and the K steps'
runs extrapolated). tests/test_loop_ws_timing_reference.py checks the fast walk against it.

It shares the cost model's facts with the module (dma_cycles, the compute and group cycles), not
its algorithm. A LoopWs field that changes the walk is added here too."""
from __future__ import annotations

import math
from dataclasses import astuple

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import CONCURRENT_LOOPS
from baco.gemmini.loop_ws_timing import LoopWs, _compute_cycles, _group_cycles, _half_wait, _raw_b_wait, dma_cycles
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
    half ended; per accumulator half the first and last store that read it, their data out; when
    the last rs_ld loads and rs_ex / 2 computes free their reservation station entries; whether the
    next loop's LdD was walked within the loop before it."""

    def __init__(self, cfg: GemminiConfig, k: TimingConstants, cpu: bool):
        self.cfg, self.k, self.cpu = cfg, k, cpu
        self.n = self.acc_half = 0
        self.ldd_walked = False
        self.slot_loops = [None] * CONCURRENT_LOOPS     # the last loop in each slot
        self.bias_in = -math.inf    # when the next loop's LdD, walked within a loop, lets its computes start
        # ld, ex, st, clock, freed x2, computed x2, (first, last) read x2
        self.t = [0.0] * (4 + 3 * CONCURRENT_LOOPS + 2)
        self.t[4 + CONCURRENT_LOOPS:4 + 2 * CONCURRENT_LOOPS] = [-math.inf] * CONCURRENT_LOOPS    # nothing computed yet
        self.ld_ring = [0.0] * cfg.rs_ld
        self.ex_ring = [0.0] * max(1, cfg.rs_ex // 2)
        self.st_ring = [0.0] * cfg.rs_st

    def run(self, loops) -> float:
        for n, lp in enumerate(loops):
            self._loop(lp, loops[n + 1] if n + 1 < len(loops) else None)
        ld, _, st, clock = self.t[:4]
        k = self.k
        computed = max(self.t[4 + CONCURRENT_LOOPS:4 + 2 * CONCURRENT_LOOPS])     # the last compute's end
        end = max(st + k.dram_latency, computed + k.array_depth_factor * self.cfg.dim, ld + k.dram_latency)
        return max(end, clock) if self.cpu else end

    def _dma(self, rows, row_bytes):
        return dma_cycles(rows, row_bytes, self.cfg, self.k)

    @staticmethod
    def _push(ring, end):
        """An entry released at `end`; when the command it lets in was dispatched (the oldest's)."""
        dispatched = ring.pop(0)
        ring.append(end)
        return dispatched

    def _static(self, lp: LoopWs):
        cfg, k, dma = self.cfg, self.k, self._dma
        d, mbl = cfg.dim, cfg.max_block_len
        I, J = lp.I, lp.J
        raw_b = [dma(min(d, lp.raw_b - r0), (min(mbl, J - j0) * d - (lp.pad_j if j0 + mbl >= J else 0))
                     * cfg.input_bytes)
                 for r0 in range(0, lp.raw_b, d) for j0 in range(0, J, mbl)] * lp.raw_b_halves   # a mvin a DIM rows
        a_ready, b_ready, load_ends = self._operand_loads(lp)
        occ = _compute_cycles(lp, cfg, k)
        c_bytes = cfg.acc_bytes if lp.full_c else cfg.input_bytes
        chunk = 1 if lp.full_c else mbl
        stores = [(j0 + min(chunk, J - j0) - 1, i,
                   dma(d - (lp.pad_i if i == I - 1 else 0),
                       (min(chunk, J - j0) * d - (lp.pad_j if j0 + chunk >= J else 0)) * c_bytes) + k.acc_scale_latency)
                  for j0 in range(0, J, chunk) for i in range(I)] if lp.store else []
        return raw_b, a_ready, b_ready, load_ends, occ, _group_cycles(occ, cfg, lp.b_transposed), stores

    def _ldd_commands(self, lp: LoopWs):
        cfg = self.cfg
        d, acc_mbl = cfg.dim, cfg.max_block_len_acc
        return [self._dma(d - (lp.pad_i if i == lp.I - 1 else 0),
                          (min(acc_mbl, lp.J - j0) * d - (lp.pad_j if j0 + acc_mbl >= lp.J else 0)) * cfg.acc_bytes)
                for i in range(lp.I) for j0 in range(0, lp.J, acc_mbl)]

    def _ldd(self, lp: LoopWs, start, half):
        """LdD from `start`, its rows after the store that read them (the half's first, last)."""
        T, lat = self.t, self.k.dram_latency
        cmds = self._ldd_commands(lp)
        total, row = sum(cmds), sum(cmds) / len(cmds)
        end = max(max(start, T[half]) + total, T[half + 1] + row)
        for r in reversed(range(len(cmds))):
            self._push(self.ld_ring, end - r * row + lat)
        return end

    def _bias_in(self, lp: LoopWs, occ, group, end):
        """The earliest start of the first compute at which each compute of the first k step finds its
        bias rows in: LdD's command c (block columns outermost, the last ending at `end`) lands c
        rows after the first; the compute of its (j0, i), j0 groups and the computes before i after
        the first."""
        cmds = self._ldd_commands(lp)
        row = sum(cmds) / len(cmds)
        first = end - (len(cmds) - 1) * row + self.k.dram_latency
        order = [(j0, i) for j0 in range(0, lp.J, self.cfg.max_block_len_acc) for i in range(lp.I)]
        return max(first + c * row - (j0 * group + sum(occ[:i])) for c, (j0, i) in enumerate(order))

    def _operand_loads(self, lp: LoopWs):
        """(A's rows [k][i] and B's chunks [k][c] as (landing, command), each command's end)."""
        cfg, dma, lat = self.cfg, self._dma, self.k.dram_latency
        d, mbl = cfg.dim, cfg.max_block_len
        I, J, K = lp.I, lp.J, lp.K
        a_ready = [[None] * I for _ in range(K)]
        b_width = 1 if lp.b_transposed else mbl
        b_ready = [[None] * -(-J // b_width) for _ in range(K)]
        ends = []

        def move(rows, row_bytes):
            ends.append((ends[-1] if ends else 0.0) + dma(rows, row_bytes))
            return ends[-1] + lat, len(ends) - 1

        def load_b_chunk(c0, part=None):
            n_k = min(mbl, K - c0)
            cols = n_k * d - (lp.pad_k if c0 + n_k == K else 0)
            for j in range(J):
                if part == "first" and j or part == "rest" and not j:
                    continue
                landed = move(d, cols * cfg.input_bytes)
                for kk in range(c0, c0 + n_k):
                    b_ready[kk][j] = landed

        def load_b_row(kk, part=None):
            for j0 in range(0, J, mbl):
                if part == "first" and j0 or part == "rest" and not j0:
                    continue
                b_ready[kk][j0 // mbl] = move(d, (min(mbl, J - j0) * d - (lp.pad_j if j0 + mbl >= J else 0))
                                              * cfg.input_bytes)

        def load_a_chunk(c0):
            n_k = min(mbl, K - c0)
            cols = n_k * d - (lp.pad_k if c0 + n_k == K else 0)
            for i in range(I):
                landed = move(d - (lp.pad_i if i == I - 1 else 0), cols * cfg.input_bytes)
                for kk in range(c0, c0 + n_k):
                    a_ready[kk][i] = landed

        a_chunks = range(0, K, mbl) if lp.load_a else ()
        if lp.load_b and lp.b_transposed:
            for c0 in range(0, K, mbl):
                if lp.load_a:
                    load_b_chunk(c0, "first")
                    load_a_chunk(c0)
                    load_b_chunk(c0, "rest")
                else:
                    load_b_chunk(c0)
        elif lp.load_a and lp.load_b:
            load_b_row(0, "first")
            for c0 in a_chunks:
                load_a_chunk(c0)
                for kk in range(c0, min(K, c0 + mbl)):
                    load_b_row(kk, "rest" if kk == 0 else None)
        else:
            for c0 in a_chunks:
                load_a_chunk(c0)
            for kk in range(K) if lp.load_b else ():
                load_b_row(kk)
        return a_ready, b_ready, ends

    def _loop(self, lp: LoopWs, nxt):
        cfg, k = self.cfg, self.k
        d, mbl = cfg.dim, cfg.max_block_len
        lat, depth = k.dram_latency, k.array_depth_factor * d
        raw_b, a_off, b_off, load_ends, occ, group, stores = self._static(lp)
        T = self.t
        ld, ex, st, clock = T[:4]
        FREED, COMPUTED, READ = 4, 4 + CONCURRENT_LOOPS, 4 + 2 * CONCURRENT_LOOPS
        slot = self.n % CONCURRENT_LOOPS
        self.n += 1
        I, J, K = lp.I, lp.J, lp.K
        raw_b_ready = lambda kk, c: -math.inf     # noqa: E731
        if lp.raw_b:
            t = max(T[FREED:COMPUTED])
            if self.cpu:   # the instructions before the raw commands run under the loops; those from them on wait
                after = lp.cpu if lp.raw_cpu is None else lp.raw_cpu
                start = max(clock + (lp.cpu - after) * k.cpu_cycles_per_instruction, t)
                clock = start + after * k.cpu_cycles_per_instruction
                t = start if lp.raw_cpu is not None else clock
            ld = max(ld, t)
            # each mvin once the reads of the rows it overwrites are done (the module's _raw_b_wait, shared
            # as a fact)
            for h, w in enumerate(_raw_b_wait(tuple(self.slot_loops), lp, cfg, astuple(k))):
                ld = max(ld, T[COMPUTED + h] + w)
            raw_landed = []
            for cycles in raw_b:
                ld += cycles
                raw_landed.append(ld + lat)
            row = sum(raw_b) / len(raw_b)
            for r in reversed(range(len(raw_b))):
                self._push(self.ld_ring, ld - r * row + lat)
            # the copy in this loop's slot's half: a mvin per k row (DIM rows) and MAX_BLOCK_LEN-block chunk,
            # each k step's chunk once its own mvin landed (a transposed B's: the whole copy)
            per_half = len(raw_b) // lp.raw_b_halves
            copy = raw_landed[(slot % lp.raw_b_halves) * per_half:][:per_half]
            raw_chunks = -(-J // mbl)
            if lp.b_transposed or per_half != K * raw_chunks:
                raw_b_ready = lambda kk, c: copy[-1]    # noqa: E731
            else:
                raw_b_ready = lambda kk, c: copy[kk * raw_chunks + c]    # noqa: E731
        elif self.cpu:
            clock += lp.cpu * k.cpu_cycles_per_instruction
        arrival = max(T[FREED + slot], clock if self.cpu else 0.0)
        if self.cpu:
            clock = arrival
        half = READ + 2 * self.acc_half
        first_read, last_read = T[half:half + 2]
        t0 = max(ld, arrival)
        bias_in = self.bias_in if lp.bias else -math.inf
        if lp.bias and not self.ldd_walked:
            t0 = self._ldd(lp, t0, half)
            bias_in = self._bias_in(lp, occ, group, t0)
        ld_free = t0
        # each load once the reads of the rows it overwrites are done (the rule from the slot's last loop
        # and this one: the module's _half_wait, shared as a fact)
        t0 = max(t0, T[COMPUTED + slot] + _half_wait(self.slot_loops[slot], lp, cfg, astuple(k)))
        self.slot_loops[slot] = lp
        n_loads = len(load_ends)
        dispatched = [0.0] * n_loads
        self.ldd_walked = nxt is not None and nxt.bias and not nxt.raw_b
        cut, t1 = n_loads, t0
        if self.ldd_walked:     # the next loop's LdD takes the first load entry that frees after it arrives
            arrival_next = max(T[FREED + (slot + 1) % CONCURRENT_LOOPS],
                               clock + nxt.cpu * k.cpu_cycles_per_instruction if self.cpu else 0.0)
            entries = self.ld_ring + [t0 + e + lat for e in load_ends]
            cut = 0
            if arrival < arrival_next:
                while cut < n_loads and entries[cut] < arrival_next:
                    cut += 1
            for c in range(cut):
                dispatched[c] = self._push(self.ld_ring, t0 + load_ends[c] + lat)
            before_cut = load_ends[cut - 1] if cut else 0.0
            ldd_end = self._ldd(nxt, max(t0 + before_cut if cut else ld_free, arrival_next),
                                READ + 2 * (self.acc_half ^ lp.store))
            next_static = self._static(nxt)
            self.bias_in = self._bias_in(nxt, next_static[4], next_static[5], ldd_end)
            t1 = max(ldd_end, t0 + before_cut) - before_cut
            ld = ldd_end
        for c in range(cut if self.ldd_walked else 0, n_loads):
            dispatched[c] = self._push(self.ld_ring, t1 + load_ends[c] + lat)
        if cut < n_loads or not self.ldd_walked:
            ld = t1 + (load_ends[-1] if n_loads else 0.0)
        last_load = max([arrival] + dispatched[-1:])

        def landed(ready):
            t, c = ready
            return (t0 if c < cut else t1) + t

        e = max(ex, 0.0 if lp.bias else first_read)
        width = 1 if lp.b_transposed else mbl
        chunks = -(-J // width)
        for kk in range(K):
            a_k, b_k = a_off[kk], b_off[kk]
            b0 = max(landed(b_k[0]), raw_b_ready(kk, 0)) if lp.load_b else raw_b_ready(kk, 0)
            start = b0 + d if b0 > e else e
            if lp.load_a:
                start = max(start, landed(a_k[0]))
            if kk == 0:     # the first k step's computes wait for their bias rows
                start = max(start, bias_in)
            t = start
            if lp.load_a:
                done = []
                for i in range(I):
                    t = max(t, landed(a_k[i])) + occ[i]
                    done.append(t)
            else:
                done = [start + sum(occ[:i + 1]) for i in range(I)]
                t = done[-1]
            t = max(t, start + group)
            for c in range(chunks):
                n = min(width, J - c * width) - (c == 0)
                if n:
                    t = max(t, landed(b_k[c]) if lp.load_b else raw_b_ready(kk, c)) + n * group
            e = max(t, start + occ[0] + depth)
        ex = max(t, last_read)
        # the last compute ended before the array takes new weights (DIM rows after a short compute)
        T[COMPUTED + slot] = max(done[-1], t - (0.0 if lp.b_transposed else group - sum(occ)), last_read)
        # the computes' entries, the last I of each (k, j) group ending back to back at the loop's end
        n_ex = I * J * K
        for c in range(max(0, n_ex - len(self.ex_ring) - 1), n_ex):
            dispatched_at = self._push(self.ex_ring, ex - sum(occ[-r % I] for r in range(1, n_ex - c)) + depth)
        issued = max(last_load, dispatched_at)
        if stores:
            s, out = st, []
            for j, i, cost in stores:
                s = max(s, done[i] + j * group + depth) + cost
                out.append(s)
            st = s
            T[half:half + 2] = [out[0] + lat, st + lat]
            self.acc_half ^= 1
            # the last store's entry: the loop's own store rs_st before it, or one a loop before holds
            issued = max(issued, out[-1 - cfg.rs_st] + lat if len(out) > cfg.rs_st else self.st_ring[len(out) - 1])
            # the last rs_st stores' entries, freed as if they ran back to back up to the last
            after = 0.0
            tail = []
            for _, _, cost in reversed(stores[-cfg.rs_st:]):
                tail.append(st + lat - after)
                after += cost
            for end in reversed(tail):
                self._push(self.st_ring, end)
        T[FREED + slot] = issued
        if not stores:      # the next loop accumulates into these rows, as the next k step
            ex = max(ex, start + occ[0] + depth)
        T[:4] = [ld, ex, st, clock]
