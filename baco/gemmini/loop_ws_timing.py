"""LoopMatmul's timing as the cycle model runs it, walked loop by loop: one pure function over a
sequence of LOOP_WS loops (the programs baco's GEMM kernel compiles to, schedule.gemm_loop_ws_loops,
or the C library's tiled_matmul tiles, library_matmul_loops) and the CPU that issues them, so that
the compiler's default GEMM schedule (baco.gemmini.schedule) and the tuner's model of the program
(baco.tuner.kernel_model) rank by what the cycle model would measure, not by separate analytical
guesses. Pure Python: imports only baco.gemmini.

The walk follows baco.sim.timing's LoopMatmul (its constants are the cycle model's,
TimingConstants): two loops in flight, taking the loop slots in turn, each slot's A and B in its
own scratchpad half; LdD (the bias, padded columns not moved; it writes the accumulator only, so it
runs under the computes still reading the slot's scratchpad half), then LdA and LdB (each once the
reads of the rows it overwrites, by the slot's loop before, are done) on the one DMA loader in the order LoopMatmul's arbiter interleaves them (B's first block, then whichever is behind in k; A moves MAX_BLOCK_LEN
k blocks a command, B a k row of up to MAX_BLOCK_LEN blocks); the execute FSM k -> j -> i behind
the loads of its k step (the first k step's computes behind their bias rows too), each (k, j) weight block preloaded under the previous compute (DIM rows
at least; a transposed B's through the transposer, a compute of its own) unless it lands after
that compute (then it moves in alone), a k step no faster than
the accumulator rows it rewrites come back through the array (the next loop's first, when this one
stores no C: it accumulates into the same rows);
StC behind the last k step's computes, then the next loop that stores C uses the other
accumulator half and waits for the stores that read it before (their data out). A loop takes a
slot once the loop two before it has issued its last command, and the CPU waits for that.

Commands are issued into the reservation stations long before they run: a unit's command waits
for an entry, which the command rs_ld (loads), rs_ex / 2 (computes, each with its preload) or
rs_st (stores) before it frees when its data has landed, its results left the array, its data is
out. The walk keeps the last loads', computes' and stores' entries (the last stores' as if they ran back
to back up to the last), so it knows
when a loop issued its last command, and so when the next loop arrives. The arbiter ranks
LdD before LdA/LdB, so an arriving loop's LdD takes the first load entry that frees: it runs on the
loader before the loads of the loop ahead of it that were not issued yet (all of them when the
queues are full, as on a stream of one-step programs each moving a bias) and holds them while it
waits for the stores that read its accumulator rows. The walk places each LdD there, within the
walk of the loop before it.

Which commands each FSM issues (LdD, LdA, LdB, StC: their blocks, rows and columns, in order) the
walk reads from baco.gemmini.loop_ws_commands, the description the simulator's LOOP_WS expansion
(baco.sim.loops) and the tuner's counts share, and prices each at dma_cycles(rows, cols x bytes);
how the arbiter interleaves LdA and LdB is the walk's own model (_arbiter_order).

The walk is quick so that the tuner can walk every candidate's programs: a loop's recurrences
(over its computes, B chunks and stores) are summed in closed form once (_LoopTerms, cached across
walks), and a run of equal loops or repeated programs is walked only until it is periodic, the
rest extrapolated exactly (_Walk._repeat). tests/loop_ws_walk_reference.py walks the same model
one step at a time; the tests check the two agree."""
from __future__ import annotations

import bisect
import functools
import itertools
import math
from dataclasses import astuple, dataclass

from baco.gemmini.config import GemminiConfig, loop_unit_half
from baco.gemmini.heuristics import tiled_matmul_tiles
from baco.gemmini.isa import CONCURRENT_LOOPS, MIN_FEED_ROWS
from baco.gemmini.loop_ws_commands import lda_commands, ldb_commands, ldd_commands, store_commands
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, TimingConstants


def local_move_cycles(rows: int, k: TimingConstants = DEFAULT_CONSTANTS) -> float:
    """Cycles of one command moving `rows` rows without DRAM (a MVOUT_SPAD), as the cycle model
    charges it: its setup, then a local row a cycle."""
    return k.dma_cmd_overhead + rows


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
    mvins just before it (they wait for the loop unit to drain) into `raw_b_halves` halves (2 but
    for a kept B: the LOOP_WS reads it in its loop slot's half, baco.passes.loop_ws._load_b),
    `b_transposed`: B column-major in DRAM (b_transpose: LdB moves J rows of K blocks, a chunk of
    MAX_BLOCK_LEN k blocks per row and the rows innermost, so a k step's weights land block column by block column), `cpu`: the CPU's instructions
    before it is issued (its loop registers and whatever comes before them), and `commands`: the
    RoCC commands the CPU issues for it (counted, not timed: `cpu` holds their cost), `after_raw`: a
    raw command (a config) comes just before it, so it waits, as explicit mvins do, for every loop
    to have issued its last command (the fused chain's config_st between its loops), and
    `spad_store`: a spad_only loop (Gemmini master), whose StC moves C into the scratchpad (MVOUT_SPAD,
    one block a command: local moves, no DRAM), `raw_cpu`: of `cpu`, the instructions from the first raw
    command on (an explicit B's mvins and what follows them: they wait with it for the loop unit; the
    rest runs under the loops before), None: all of them."""
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
    raw_b_halves: int = 2
    b_transposed: bool = False
    cpu: float = 0.0
    commands: int = 0
    after_raw: bool = False
    spad_store: bool = False
    raw_cpu: float | None = None


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
                array += (item.K - 1) * k.accumulating_spacing(item.J * group, occ[0], cfg.dim) + item.J * group
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
# free (the array: for the next loop's weights) and the CPU's clock; per loop slot when its last
# loop issued its last command (FREED) and when the last compute reading its scratchpad half ended
# (COMPUTED, -inf before any; a short last compute ends before the array is free for new weights,
# DIM rows after it began); per accumulator half the first and last store that read it, their data
# out (READ: first, last); when the next loop's LdD, walked within this one (ldd_walked), has its
# first rows in (BIAS_IN); then the reservation stations' entries, oldest first, as _Walk lays them
# out: when each of the last rs_ld loads, rs_ex / 2 computes and rs_st stores releases its entry (its
# data landed, its results out of the array, its data out), which is when a later command of the unit is dispatched into it
LD, EX, ST, CLOCK = range(4)
FREED = 4
COMPUTED = FREED + CONCURRENT_LOOPS
READ = COMPUTED + CONCURRENT_LOOPS
BIAS_IN = READ + 2 * 2
RINGS = BIAS_IN + 1


class _Walk:
    """The walk: its state (the times above, the loops issued so far, the accumulator half the next
    stored C uses, whether the next loop's LdD has been walked) and what it knows of the loops it
    walks (their _LoopTerms, each list's runs and first loop)."""

    def __init__(self, cfg: GemminiConfig, k: TimingConstants, cpu: bool):
        self.cfg, self.k, self.cpu = cfg, k, cpu
        self.n = self.acc_half = 0
        self.ldd_walked = False
        self.slot_loops = [None] * CONCURRENT_LOOPS     # the last loop in each slot (whose reads its half holds)
        self.constants = astuple(k)
        self.terms = {}     # the loops' _LoopTerms by (loop, cut) (the walk's own: the loop hashed, not the config too)
        self.runs = {}
        self.firsts = {}
        self.ld_ring, self.ex_ring, self.st_ring = cfg.rs_ld, max(1, cfg.rs_ex // 2), cfg.rs_st
        self.LDR = RINGS
        self.EXR = self.LDR + self.ld_ring
        self.STR = self.EXR + self.ex_ring
        self.size = self.STR + self.st_ring
        self.t = [0.0] * self.size
        self.t[COMPUTED:READ] = [-math.inf] * CONCURRENT_LOOPS     # no computes read a slot's half yet

    def run(self, items) -> float:
        self._items(items, None)
        ld, _, st, clock = self.t[:4]
        k = self.k
        computed = max(self.t[COMPUTED:READ])   # the last compute's end (ex: the array free for new weights)
        end = max(st + k.dram_latency, computed + k.array_depth_factor * self.cfg.dim, ld + k.dram_latency)
        # to a millionth of a cycle: the extrapolation's rounding differs from a step-by-step walk's
        # in the last bits, and callers rank candidates whose walks tie exactly
        return round(max(end, clock) if self.cpu else end, 6)

    def _items(self, items, after):
        """Walk `items`; `after`: the loop walked after them (None at the end)."""
        runs = self._runs(items)
        for r, (unit, count) in enumerate(runs):
            if count == 1:
                self._unit(unit, self._first(runs, r + 1, after))
            elif count:
                self._repeat(unit, count, self._first(runs, r + 1, after))

    def _unit(self, unit, after):
        if isinstance(unit, LoopWs):
            self._loop(unit, after)
        else:
            self._items(unit, after)

    def _first(self, runs, r, after):
        """The first loop of runs[r:], else `after`."""
        for unit, count in runs[r:]:
            if count:
                first = unit if isinstance(unit, LoopWs) else self._first(self._runs(unit), 0, None)
                if first is not None:
                    return first
        return after

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

    def _repeat(self, unit, count, after):
        """`unit` `count` times, then `after`. Once a period of repetitions (one, or two when a
        repetition flips the loop slot or the accumulator half) moved the state by the same delta
        (_period_shift), every further period does the same: a loop's step adds cycles to, takes
        maxima of and compares times of the state (constants never win: 0 and -inf), so it commutes
        with moving every time it reads by one delta. The whole periods left but the last repetition
        (its next loop is `after`, not the unit's first) are added at once, the rest walked."""
        seen = {}
        done = 0
        again = unit if isinstance(unit, LoopWs) else self._first(self._runs(unit), 0, after)
        while done < count:
            key = self.n % CONCURRENT_LOOPS, self.acc_half, self.ldd_walked, tuple(self.slot_loops)
            if key in seen:
                done_before, before, n_before = seen[key]
                shift = self._period_shift(before)
                if shift is not None:
                    period = done - done_before
                    periods = (count - done - 1) // period
                    T = self.t
                    for i in range(self.size):
                        if T[i] != before[i]:
                            T[i] += periods * shift
                    self.n += periods * (self.n - n_before)
                    for r in range(done + periods * period, count):
                        self._unit(unit, again if r < count - 1 else after)
                    return
            seen[key] = done, list(self.t), self.n
            self._unit(unit, again if done < count - 1 else after)
            done += 1

    def _period_shift(self, before: list):
        """The delta by which the state moved since `before` if it is a whole periodic step, else None:
        every time moved by the same delta but those no later loop reads: the store unit's without
        a store (only a store reads it), the CPU's clock when the CPU is not walked, the accumulator
        halves' reads when no store wrote them and the reservation stations' entries when no command
        of theirs was walked, when they are earlier than every time they are compared with (the
        loader's, the array's, both slots' issues and computes at `before`: those never go back)."""
        T = self.t
        shift = None
        for i in range(self.size):
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
        floor = min(before[LD], before[EX], *before[FREED:READ])
        if any(T[i] == before[i] and T[i] >= floor for i in range(READ, self.size)):
            return None
        return shift

    def _terms(self, lp: LoopWs, cut=None) -> "_LoopTerms":
        key = lp, cut
        terms = self.terms.get(key)
        if terms is None:
            terms = self.terms[key] = _loop_terms(lp, self.cfg, self.constants, cut)
        return terms

    def _push(self, ring: int, size: int, ends):
        """Entries released at `ends` (oldest first) into a reservation station's ring."""
        ends = list(ends)[-size:]
        if ends:
            T = self.t
            T[ring:ring + size] = T[ring + len(ends):ring + size] + ends

    def _ldd(self, terms: "_LoopTerms", start: float, half: int) -> float:
        """LdD from `start` (its rows each after the store that read them: the half's first, last);
        its entries into the load ring; when it ends."""
        T, lat = self.t, self.k.dram_latency
        end = max(max(start, T[half]) + terms.ldd, T[half + 1] + terms.ldd_row)
        self._push(self.LDR, self.ld_ring, (end - r * terms.ldd_row + lat for r in reversed(range(terms.ldd_cmds))))
        return end

    def _bias_in(self, terms: "_LoopTerms", ldd_end: float) -> float:
        """The earliest start of a loop's first compute that finds the bias rows of each of its first
        k step's computes in (LdD's commands ending with the last at ldd_end; _LoopTerms.bias_wait)."""
        return ldd_end - (terms.ldd_cmds - 1) * terms.ldd_row + self.k.dram_latency + terms.bias_wait

    def _push_loads(self, origin: float, offsets) -> float:
        """Loads ending at origin + offsets into the load ring; when the last of them was dispatched
        (the entry rs_ld loads before it freed), -inf without loads."""
        if not offsets:
            return -math.inf
        lat = self.k.dram_latency
        self._push(self.LDR, self.ld_ring, (origin + e + lat for e in offsets[:-1]))
        dispatched = self.t[self.LDR]
        self._push(self.LDR, self.ld_ring, [origin + offsets[-1] + lat])
        return dispatched

    def _cut(self, terms: "_LoopTerms", t0: float, arrival: float, arrival_next: float) -> int:
        """How many of this loop's LdA/LdB the loop unit issues before the next loop's LdD: the
        arbiter ranks LdD first, so it takes the first load entry that frees once the next loop has
        arrived; each of this loop's loads is dispatched when the entry rs_ld loads before it frees."""
        n = len(terms.load_ends)
        if arrival >= arrival_next or not n:
            return 0
        ring = self.t[self.LDR:self.LDR + self.ld_ring]
        c = bisect.bisect_left(ring, arrival_next)
        if c == self.ld_ring:
            c += bisect.bisect_left(terms.load_ends, arrival_next - t0 - self.k.dram_latency)
        return min(c, n)

    def _loads(self, lp: LoopWs, nxt, terms: "_LoopTerms", slot: int, t0: float, ld_free: float, arrival: float,
               clock: float):
        """LdA / LdB from t0 (the loader free from ld_free), and the next loop's LdD among them when
        it has one (it needs the slot this loop's predecessor holds; the explicit mvins of a raw_b
        loop wait for every loop to be issued): the loop's terms with the loads cut there, where the
        loads after the cut start from (t1, as terms.load_ends count), when the loader is free and
        when the last of them was issued."""
        T, k, cpu = self.t, self.k, self.cpu
        loads = terms.load_ends
        n_loads, R = len(loads), self.ld_ring
        self.ldd_walked = nxt is not None and nxt.bias and not (nxt.raw_b or nxt.after_raw)
        if self.ldd_walked:
            arrival_next = max(T[FREED + (slot + 1) % CONCURRENT_LOOPS],
                               clock + nxt.cpu * k.cpu_cycles_per_instruction if cpu else 0.0)
            cut = self._cut(terms, t0, arrival, arrival_next)
            if cut < n_loads:
                terms = self._terms(lp, cut)
            before_cut = loads[cut - 1] if cut else 0.0
            last_load = self._push_loads(t0, loads[max(0, cut - R - 1):cut])
            nxt_terms = self._terms(nxt)
            ldd_end = self._ldd(nxt_terms, max(t0 + before_cut if cut else ld_free, arrival_next),
                                READ + 2 * (self.acc_half ^ lp.store))
            T[BIAS_IN] = self._bias_in(nxt_terms, ldd_end)
            t1 = max(ldd_end, t0 + before_cut) - before_cut
            if cut < n_loads:
                last_load = self._push_loads(t1, loads[max(cut, n_loads - R - 1):])
                ld = t1 + terms.loads
            else:
                ld = ldd_end
        else:
            t1 = t0
            last_load = self._push_loads(t0, loads[-R - 1:])
            ld = t0 + terms.loads
        return terms, t1, ld, max(arrival, last_load)

    def _raw_commands(self, lp: LoopWs, terms, slot: int, ld: float, clock: float):
        """(ld, clock, each k step's (first, last) raw-B mvin landing or None) after the core's code
        before the loop: explicit mvins of B (or another raw command) once every loop has issued
        its last command, the core waiting for that and then running this step's code."""
        k, cpu, T, cfg = self.k, self.cpu, self.t, self.cfg
        if not (lp.raw_b or lp.after_raw):
            return ld, clock + (lp.cpu * k.cpu_cycles_per_instruction if cpu else 0.0), None
        t = max(T[FREED:COMPUTED])
        if cpu:
            after = lp.cpu if lp.raw_cpu is None else lp.raw_cpu
            t = max(clock + (lp.cpu - after) * k.cpu_cycles_per_instruction, t)
            clock = t + after * k.cpu_cycles_per_instruction
            if lp.raw_cpu is None:
                t = clock
        raw_start = max(ld, t)
        raw_steps = None
        if lp.raw_b:    # each mvin once the reads of the rows it overwrites are done
            raw_start = max(raw_start, *(T[COMPUTED + h] + w for h, w in enumerate(
                _raw_b_wait(tuple(self.slot_loops), lp, cfg, self.constants))))
        ld = raw_start + terms.raw_b
        if lp.raw_b:    # each k step's weights once the mvins of its rows in the slot's half landed
            raw_steps = [(raw_start + first, raw_start + wait)
                         for first, wait in terms.raw_steps[slot % lp.raw_b_halves]]
        self._push(self.LDR, self.ld_ring,
                   (ld - r * terms.raw_b_row + k.dram_latency for r in reversed(range(terms.raw_b_cmds))))
        return ld, clock, raw_steps

    def _loop(self, lp: LoopWs, nxt):
        terms = self._terms(lp)
        k, cpu, T, cfg = self.k, self.cpu, self.t, self.cfg
        lat = k.dram_latency
        ld, ex, st, clock = T[LD], T[EX], T[ST], T[CLOCK]
        slot = self.n % CONCURRENT_LOOPS
        self.n += 1
        ld, clock, raw_steps = self._raw_commands(lp, terms, slot, ld, clock)
        arrival = max(T[FREED + slot], clock if cpu else 0.0)
        if cpu:
            clock = arrival
        half = READ + 2 * self.acc_half
        first_read, last_read = T[half], T[half + 1]
        t0 = max(ld, arrival)
        bias_in = T[BIAS_IN] if lp.bias else -math.inf
        if lp.bias and not self.ldd_walked:     # LdD (else walked within the loop before, below)
            t0 = self._ldd(terms, t0, half)
            bias_in = self._bias_in(terms, t0)
        ld_free = t0
        # LdA and LdB overwrite the slot's scratchpad half, each load once the reads of its own rows by
        # the slot's last loop are done (B's rows once their preloads are, A's once their computes'
        # results are out of the array: _half_wait); LdD writes the accumulator only, so it runs under
        # those computes
        t0 = max(t0, T[COMPUTED + slot] + _half_wait(self.slot_loops[slot], lp, cfg, self.constants))
        self.slot_loops[slot] = lp
        terms, t1, ld, last_load = self._loads(lp, nxt, terms, slot, t0, ld_free, arrival, clock)
        # the execute FSM: k -> j -> i, behind the loads of its k step (each k step's terms in closed
        # form: _LoopTerms; loads after the cut from t1)
        e = max(ex, 0.0 if lp.bias else first_read)
        d, computes, group, rest, first_depth = cfg.dim, terms.computes, terms.group, terms.rest, terms.first_depth
        t = start = last = e
        for kk, (first, first_after, a_first, a_first_after, a_wait, a_wait_after, b_wait, b_wait_after) in \
                enumerate(terms.steps):
            raw_b_ready, rest_raw = raw_steps[kk] if raw_steps else (-math.inf, -math.inf)
            ready = max(t0 + first, t1 + first_after, raw_b_ready)
            start = ready + d if ready > e else e       # late weights move in alone
            # and A's first rows, and the first k step's computes their bias rows (a loop that moves
            # in neither A nor B waits for them: A's land after LdD's)
            start = max(start, t0 + a_first, t1 + a_first_after, bias_in)
            bias_in = -math.inf
            last = computes + max(start, t0 + a_wait, t1 + a_wait_after)     # the (k, 0) group's last compute
            t = max(last, start + group)
            t = max(t + rest, t0 + b_wait, t1 + b_wait_after, rest_raw)
            e = max(t, start + first_depth)             # the next k step rewrites these rows
        ex = max(t, last_read)
        # the loop's last compute ended before the array is free for new weights (a short compute
        # leaves the DIM rows a preload streams in during it): the slot's A rows are read then
        T[COMPUTED + slot] = max(last, t - (0.0 if lp.b_transposed else group - computes), last_read)
        depth = k.array_depth_factor * d
        # the last compute's dispatch: behind the last load's, once the entry rs_ex / 2 computes before
        # it frees (its results out of the array)
        n_ex = lp.I * lp.J * lp.K
        ring_entry = ex + depth - terms.ex_back if n_ex > self.ex_ring else T[self.EXR + n_ex - 1]
        issued = max(last_load, ring_entry)
        self._push(self.EXR, self.ex_ring, (ex + depth - back for back in terms.ex_tail))
        if terms.stores:    # each store reads its rows once their last compute is out
            ends = [cost + max(st, start + after_start, t0 + after_loads, t1 + after_cut)
                    for cost, after_start, after_loads, after_cut in terms.stores]
            st = ends[1]
            out = 0.0 if lp.spad_store else lat     # a local move's data is in when it ends
            T[half], T[half + 1] = ends[0] + out, st + out
            self.acc_half ^= 1
            # the store FSM issues its last store behind the last compute, once the entry rs_st stores
            # before it frees (its data out): the loop's own, or one a loop before holds
            n_st = terms.n_stores
            issued = max(issued, ends[2] + out if len(ends) == 3 else T[self.STR + n_st - 1])
            self._push(self.STR, self.st_ring, (st + out - back for back in terms.st_tail))
        T[FREED + slot] = issued
        if not lp.store:    # the next loop accumulates into these rows: as the next k step, above
            ex = max(ex, start + first_depth)
        T[LD], T[EX], T[ST], T[CLOCK] = ld, ex, st, clock


def _rows_known(lp: LoopWs) -> bool:
    """Whether the walk knows which rows of its slot's scratchpad half `lp` reads and writes: A from
    the half's start (block i*K + k), B at its end (block k*J + j of the last K*J), as LoopMatmul lays
    a loop out that moves both itself (baco.sim.loops). Not so for an explicitly moved or transposed
    B, an operand kept elsewhere, a spad_only loop or one behind a raw command."""
    return lp.load_a and lp.load_b and not (lp.raw_b or lp.b_transposed or lp.spad_store or lp.after_raw)


def _in_half(lp: LoopWs, cfg: GemminiConfig) -> bool:
    """Whether `lp`'s A and B blocks fit its slot's scratchpad half (LoopMatmul's layout; a
    candidate that does not is priced by the whole half's rule, not its rows)."""
    return lp.I * lp.K + lp.K * lp.J <= loop_unit_half(cfg).sp_rows // cfg.dim


@functools.lru_cache(maxsize=16384)
def _block_reads(prev: LoopWs, cfg: GemminiConfig, constants: tuple) -> tuple:
    """When `prev`'s last read of each DIM-row block of its slot's scratchpad half ended, less its
    last compute's end (its slot's COMPUTED): a B block (k, j), at the half's end (block k*J + j of
    the last K*J), once its preload read it, as the array was free for it (DIM rows before its group
began, the weights moving in); an A block (i, k), at the half's
    start (block i*K + k), once its (k, last j) compute's results left the array (when `prev` moves A
    in itself; else where A lies is not known: as the last compute's); a block it did not read, at
    its first group's start. Timed back from its last compute as if its k steps ran back to back (a
    k step no shorter than its J groups or its first compute and the array's depth: they ran no later
    than that)."""
    k = TimingConstants(*constants)
    d = cfg.dim
    depth = k.array_depth_factor * d
    occ = _compute_cycles(prev, cfg, k)
    before = list(itertools.accumulate(occ, initial=0.0))
    computes, group = before[-1], _group_cycles(occ, cfg)
    step = max(prev.J * group, occ[0] + depth)
    I, J, K = prev.I, prev.J, prev.K
    half = loop_unit_half(cfg).sp_rows // d
    b_base = half - K * J
    out = []
    for block in range(half):
        if block >= b_base or block >= I * K or not prev.load_a:
            kk, j = divmod(block - b_base if block >= b_base else 0, J)
            t = -computes - (K - 1 - kk) * step - (J - 1 - j) * group - d
            if block < I * K and not prev.load_a:
                t = max(t, depth)
        else:
            i, kk = divmod(block, K)
            t = before[i + 1] - computes + depth - (K - 1 - kk) * step
        out.append(t)
    return tuple(out)


def _reads_known(lp: LoopWs) -> bool:
    """Whether _block_reads knows where `lp` read its B (not transposed: LoopMatmul's layout, moved
    by LdB or by explicit mvins alike; not a spad_only loop's or one behind a raw command)."""
    return not (lp.b_transposed or lp.spad_store or lp.after_raw)


@functools.lru_cache(maxsize=16384)
def _half_wait(prev, lp: LoopWs, cfg: GemminiConfig, constants: tuple) -> float:
    """How long after the last compute of `prev` (the loop before in the slot: its COMPUTED) `lp`'s
    LdA / LdB may start. The cycle model starts each load once the reads of the rows it writes are
    done (per row: _block_reads), so each load command c waits for the rows it overwrites: its start,
    load_ends[c - 1] after the loads' start, no earlier than the latest read of them. Loads in order
    on the one loader: the loads' start is the latest of those, the loader's end exact. Without the
    rows known (_rows_known), the whole half's: B's first block after `prev`'s last compute, A's once
    its results are out of the array."""
    k = TimingConstants(*constants)
    terms = _loop_terms(lp, cfg, constants)
    if prev is None or not (_rows_known(prev) and (lp.load_a or lp.load_b) and _in_half(prev, cfg) and
                            _in_half(lp, cfg) and not (lp.raw_b or lp.b_transposed or lp.spad_store or lp.after_raw)):
        return max(0.0, k.array_depth_factor * cfg.dim - terms.a_lead)
    read = _block_reads(prev, cfg, constants)
    half = len(read)
    I, J, K = lp.I, lp.J, lp.K
    wait, start = -math.inf, 0.0
    for (fsm, _, row, col, blocks, _, _), end in zip(_arbiter_order(cfg, I, J, K, lp.pad_i, lp.pad_j, lp.pad_k,
                                                                     lp.load_a, lp.load_b, False),
                                                      terms.load_ends):
        first = row * K + col if fsm == "lda" else half - K * J + row * J + col
        wait = max(wait, max(read[first:first + blocks]) - start)
        start = end
    return wait


@functools.lru_cache(maxsize=16384)
def _raw_b_wait(prevs: tuple, lp: LoopWs, cfg: GemminiConfig, constants: tuple) -> tuple:
    """Per loop slot, how long after the last compute of its loop (prevs: each slot's last loop) the
    explicit mvins of `lp`'s B may start: a copy a half (raw_b_halves 2; a kept B's half is not
    known: none), each mvin (a k row's chunk, at LoopMatmul's B blocks of `lp`) once the reads of the
    blocks it overwrites are done (_block_reads), the mvins in order on the loader; -inf where none
    waits (a slot's loop not known: _reads_known)."""
    out = [-math.inf] * CONCURRENT_LOOPS
    if lp.raw_b_halves != CONCURRENT_LOOPS or lp.b_transposed:
        return tuple(out)
    d, mbl = cfg.dim, cfg.max_block_len
    terms = _loop_terms(lp, cfg, constants)
    per_half = terms.raw_b_cmds // lp.raw_b_halves
    cost = terms.raw_b_row
    J = lp.J
    c = 0
    for h in range(lp.raw_b_halves):
        prev = prevs[h]
        read = _block_reads(prev, cfg, constants) if prev is not None and _reads_known(prev) and \
            _in_half(prev, cfg) and _in_half(lp, cfg) else None
        base = (len(read) if read else 0) - lp.K * J
        for r0 in range(0, lp.raw_b, d):
            for j0 in range(0, J, mbl):
                if read is not None:
                    first = base + (r0 // d) * J + j0
                    out[h] = max(out[h], max(read[first:first + min(mbl, J - j0)]) - c * cost)
                c += 1
        assert c == (h + 1) * per_half
    return tuple(out)


@functools.lru_cache(maxsize=16384)
def _loop_terms(lp: LoopWs, cfg: GemminiConfig, constants: tuple, cut=None) -> "_LoopTerms":
    """A loop's _LoopTerms (cached across walks: the tuner walks the same loops in many programs)."""
    return _LoopTerms(lp, cfg, TimingConstants(*constants), cut)


class _LoopTerms:
    """What a loop's walk needs that does not depend on when it runs, the execute FSM's and the
    stores' recurrences (t = max(t, ready) + cycles, over a k step's computes, its B chunks, the
    stores) summed in closed form: t after the steps = sum of cycles + max(t before, the latest
    ready - the cycles before it).

    - raw_b, ldd: the explicit B mvins' and LdD's loader cycles (raw_b_row, ldd_row: per command,
      raw_b_cmds, ldd_cmds: their commands); loads: LdA and LdB's cycles, load_ends: when each of
      their commands ends (_operand_loads), a_lead: when the first of A's starts (inf without);
    - the loads `cut` before another loop's LdD (None: all of them): the load terms below are
      twofold, for the loads before the cut from the start of LdA / LdB and for those after it from
      where they would have started without the cut (the walk's t1; -inf where none);
    - steps, per k step, from the start of LdA / LdB: `first`, when the first compute's weights
      (B's first chunk) landed, `a_first`, A's first rows; `a_wait`, the latest A row's landing less the
      computes before it; `b_wait`, the latest B chunk's landing plus the groups after it;
    - computes: a (k, j = 0) group's computes; group: a (k, j) group's cycles; rest: the other
      j groups'; first_depth: the first compute and the array's depth (the next k step rewrites its
      rows after that); ex_tail: how long before the last compute ends each of the last rs_ex / 2
      ends (oldest first), ex_back: the one rs_ex / 2 before the last;
    - stores (when the loop stores C): for the first store, the last and the one rs_st before the
      last (when there are more): (cost of the stores up to it, and the latest of the stores up to it
      can start less the cost before it: after the last k step's start, after the loads' start,
      after the cut)."""
    __slots__ = ("raw_b", "raw_b_row", "raw_b_cmds", "ldd", "ldd_row", "ldd_cmds", "bias_wait", "loads", "load_ends",
                 "a_lead",
                 "steps", "computes", "group", "rest", "raw_steps", "first_depth", "ex_tail", "ex_back",
                 "stores", "n_stores", "st_tail")

    def __init__(self, lp: LoopWs, cfg: GemminiConfig, k: TimingConstants, cut=None):
        d, mbl = cfg.dim, cfg.max_block_len
        I, J = lp.I, lp.J

        def dma(rows, row_bytes):
            return dma_cycles(rows, row_bytes, cfg, k)

        raw = [dma(min(d, lp.raw_b - r0), (min(mbl, J - j0) * d - (lp.pad_j if j0 + mbl >= J else 0)) * cfg.input_bytes)
               for r0 in range(0, lp.raw_b, d) for j0 in range(0, J, mbl)] * lp.raw_b_halves  # a mvin a DIM rows
        self.raw_b, self.raw_b_cmds = sum(raw), len(raw)
        self.raw_b_row = self.raw_b / max(1, len(raw))
        ldd = [dma(c.rows, c.cols * cfg.acc_bytes) for c in _commands(ldd_commands, cfg, I, J, lp.pad_i, lp.pad_j)] \
            if lp.bias else []
        self.ldd, self.ldd_cmds = sum(ldd), len(ldd)
        self.ldd_row = self.ldd / max(1, len(ldd))
        a_ready, b_ready, self.load_ends = _operand_loads(lp, cfg, k)
        self.loads = self.load_ends[-1] if self.load_ends else 0.0
        first_a = a_ready[0][0][1] if lp.load_a else None
        self.a_lead = self.load_ends[first_a - 1] if first_a else 0.0 if lp.load_a else math.inf
        cut = len(self.load_ends) if cut is None else cut

        def split(ready):
            """(ready, command) landings as (before the cut, after it), -inf where none."""
            t, c = ready
            return (t, -math.inf) if c < cut else (-math.inf, t)

        occ = _compute_cycles(lp, cfg, k)
        before = [0.0]      # computes before each i, then all of them
        for c in occ:
            before.append(before[-1] + c)
        self.computes = before[-1]
        self.group = group = _group_cycles(occ, cfg, lp.b_transposed)
        # LdD's c-th command (block columns outermost) lands c rows after the first; the first k step's
        # compute of its (j0, i) starts j0 groups and the computes before i after the first's
        self.bias_wait = max((c * self.ldd_row - (cmd.col * group + before[cmd.row])
                              for c, cmd in enumerate(_commands(ldd_commands, cfg, I, J, lp.pad_i, lp.pad_j))),
                             default=0.0) if lp.bias else 0.0
        width = 1 if lp.b_transposed else mbl
        groups = [min(width, J - c0) - (c0 == 0) for c0 in range(0, J, width)]      # j groups per B chunk
        after = [0.0] * len(groups)                 # the groups from chunk c on
        for c in reversed(range(len(groups))):
            after[c] = (after[c + 1] if c + 1 < len(groups) else 0.0) + groups[c] * group
        self.rest = after[0]
        self.raw_steps = self._raw_steps(lp, raw, groups, after, cfg, k)
        self.first_depth = occ[0] + k.array_depth_factor * d
        n_ex = I * J * lp.K
        backs = []              # the last computes' ends before the last's, newest first (k -> j -> i)
        ex_ring = max(1, cfg.rs_ex // 2)
        for c in range(min(n_ex, ex_ring + 1)):
            backs.append(backs[-1] + occ[-c % I] if c else 0.0)
        self.ex_tail = backs[:ex_ring][::-1]
        self.ex_back = backs[-1]
        none = (-math.inf, -math.inf)
        steps = []
        a_wait_last = None
        for kk in range(lp.K):
            first = split(b_ready[kk][0]) if lp.load_b else none
            a_first = split(a_ready[kk][0]) if lp.load_a else none
            if lp.load_a:
                a_wait = [tuple(x - b for x in split(a)) for a, b in zip(a_ready[kk], before)]
                a_max = tuple(max(w[h] for w in a_wait) for h in (0, 1))
                a_wait_last = a_wait
            else:
                a_max = none
            b_waits = [tuple(x + a for x in split(b)) for b, a, n in zip(b_ready[kk], after, groups) if n] \
                if lp.load_b else []
            b_max = tuple(max((w[h] for w in b_waits), default=-math.inf) for h in (0, 1))
            steps.append((*first, *a_first, *a_max, *b_max))
        self.steps = steps
        self.stores = self._stores(lp, cfg, k, before, a_wait_last if lp.load_a else None)

    @staticmethod
    def _raw_steps(lp, raw, groups, after, cfg, k) -> list:
        """Per scratchpad half an explicitly moved B goes into (in the order of its copies), per k step:
        (when the mvin of the step's first weight chunk landed, the latest chunk's landing plus the
        groups from it on, -inf when LdB moves the weights), from the first mvin's start. The mvins move a copy a k row (DIM rows) of
        MAX_BLOCK_LEN-block chunks at a time, and each compute waits for its own rows only (the cycle
        model's row hazards), so a step's weights need not wait for the rows of the steps after it.
        A transposed B's rows are not k rows: all of its copy first."""
        if not lp.raw_b:
            return []
        lat, per_half = k.dram_latency, len(raw) // lp.raw_b_halves
        ends = list(itertools.accumulate(raw))
        chunks = -(-lp.J // cfg.max_block_len)
        out = []
        for h in range(lp.raw_b_halves):
            steps = []
            for kk in range(lp.K):
                if lp.b_transposed or per_half != lp.K * chunks:
                    whole = ends[(h + 1) * per_half - 1] + lat
                    land = [whole] * len(groups)
                else:
                    land = [ends[h * per_half + kk * chunks + c] + lat for c in range(chunks)]
                rest = max((x + a for x, a, n in zip(land, after, groups) if n), default=-math.inf)
                steps.append((land[0], -math.inf if lp.load_b else rest))
            out.append(steps)
        return out

    def _stores(self, lp, cfg, k, before, a_wait_last) -> list:
        self.n_stores, self.st_tail = 0, []
        if not lp.store:
            return []
        I, J = lp.I, lp.J
        depth = k.array_depth_factor * cfg.dim
        c_bytes = cfg.acc_bytes if lp.full_c else cfg.input_bytes
        out, cost = [], 0.0
        after_start = after_loads = after_cut = -math.inf
        latest = []         # A's latest row landing (less the computes before it) up to each i: before, after the cut
        for w in a_wait_last or ():
            latest.append(tuple(max(latest[-1][h], w[h]) for h in (0, 1)) if latest else w)
        for _, _, i, j0, blocks, rows, cols in _commands(store_commands, cfg, I, J, lp.pad_i, lp.pad_j, lp.full_c,
                                                         lp.spad_store):
            # the store waits for its rows' last compute: i's in the (last k, last j) group
            ready = before[i + 1] + (j0 + blocks - 1) * self.group + depth - cost
            after_start = max(after_start, ready)
            if a_wait_last is not None:
                after_loads = max(after_loads, ready + latest[i][0])
                after_cut = max(after_cut, ready + latest[i][1])
            moved = local_move_cycles(rows, k) if lp.spad_store else dma_cycles(rows, cols * c_bytes, cfg, k)
            cost += moved + k.acc_scale_latency
            out.append((cost, after_start, after_loads, after_cut))
        # the last rs_st stores' ends before the last's (oldest first: as if back to back, no later than
        # they were), which the store FSM's next commands wait for
        self.n_stores = len(out)
        self.st_tail = [cost - c for c, _, _, _ in out[-cfg.rs_st:]]
        # the first store, the last, and the one the store FSM's last command waits for
        return [out[0], out[-1]] + ([out[-1 - cfg.rs_st]] if len(out) > cfg.rs_st else [])


def _operand_loads(lp: LoopWs, cfg: GemminiConfig, k: TimingConstants):
    """(A's rows landed [k][i], B's blocks landed [k][chunk of j, or j when transposed], each as (time,
    the command that moved it), and when each command ends), from the start of LdA / LdB: LdA's and
    LdB's commands (loop_ws_commands) in the order _arbiter_order gives them."""
    lat, mbl = k.dram_latency, cfg.max_block_len
    I, J, K = lp.I, lp.J, lp.K
    a_ready = [[None] * I for _ in range(K)]
    b_ready = [[None] * (J if lp.b_transposed else -(-J // mbl)) for _ in range(K)]
    ends = []
    end = 0.0
    for fsm, _, row, col, blocks, rows, cols in _arbiter_order(cfg, I, J, K, lp.pad_i, lp.pad_j, lp.pad_k,
                                                               lp.load_a, lp.load_b, lp.b_transposed):
        end += dma_cycles(rows, cols * cfg.input_bytes, cfg, k)
        ends.append(end)
        landed = end + lat, len(ends) - 1
        if fsm == "ldb" and not lp.b_transposed:        # k row `row`, a chunk of j blocks
            b_ready[row][col // mbl] = landed
        else:           # A's row block i (B's j when transposed), a chunk of k blocks
            ready = a_ready if fsm == "lda" else b_ready
            for kk in range(col, col + blocks):
                ready[kk][row] = landed
    return a_ready, b_ready, ends


@functools.lru_cache(maxsize=16384)
def _commands(generator, cfg: GemminiConfig, *args) -> tuple:
    """A loop_ws_commands generator's commands (cached: many loops share their LdD's or StC's)."""
    return tuple(generator(cfg, *args))


@functools.lru_cache(maxsize=16384)
def _arbiter_order(cfg: GemminiConfig, I: int, J: int, K: int, pad_i: int, pad_j: int, pad_k: int, load_a: bool,
                   load_b: bool, b_transposed: bool) -> tuple:
    """LdA's and LdB's commands (loop_ws_commands) in the order the walk has LoopMatmul's arbiter
    interleave them (its own model: baco.sim.timing's arbiter is dynamic): B's first block (of each
    chunk of k blocks when B is transposed), then A's chunk of k blocks, then B's commands behind it
    in k. Cached: a loop's terms are made again for each cut and for loops alike but for their
    bias, stores or CPU."""
    a_cmds = list(lda_commands(cfg, I, K, pad_i, pad_k)) if load_a else []
    b_cmds = list(ldb_commands(cfg, K, J, pad_k, pad_j, b_transposed)) if load_b else []
    if not (a_cmds and b_cmds):
        return tuple(a_cmds + b_cmds)
    order, b = [], 0
    for c0, chunk in itertools.groupby(a_cmds, key=lambda c: c.iters[0]):
        chunk = list(chunk)
        if b_transposed or not b:
            order.append(b_cmds[b])
            b += 1
        order += chunk
        while b < len(b_cmds) and b_cmds[b].iters[0] < c0 + chunk[0].blocks:
            order.append(b_cmds[b])
            b += 1
    return tuple(order + b_cmds[b:])


def library_matmul_loops(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = True,
                         bias: bool = False) -> list:
    """The LOOP_WSs of the C library's tiled_matmul_auto (baco.sim.clib.matmul_stream; `bias`: its
    repeating bias, moved in by each output tile's first k tile): one a tile of
    heuristics.tiled_matmul_tiles, in tiled_matmul_outer's order (i, j, k), C stored by the last k
    tile, A (B) moved in unless the library keeps it in the scratchpad across tiles."""
    return [LoopWs(t.I, t.J, t.K, t.pad_i, t.pad_j, t.pad_k, load_a=t.load_a, load_b=t.load_b, store=t.last_k,
                   full_c=not out_int8, bias=bias and t.first_k) for t in tiled_matmul_tiles(M, N, K, cfg)]
