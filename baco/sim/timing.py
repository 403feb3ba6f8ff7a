"""Cycle-approximate timing model of a Gemmini command stream.

Commands arrive in program order (attach `TimingModel.observe` to a
GemminiModel's observers, or feed decoded commands directly). Each goes to
its unit — load (DMA in), execute (the array), store (DMA out) — and:
- is dispatched in order, one per cycle, into a reservation station of
  config.rs_ld / rs_ex / rs_st entries (dispatch stalls while it is full; an
  entry is freed when its command completes);
- issues in order within its unit, when the unit is free and every local
  row it reads or writes is free of hazards with earlier commands of other
  units (RAW, WAR, WAW by row ranges of the scratchpad and accumulator);
- DMA: one request per row of ⌈bytes/16⌉ bus beats; the bus moves one beat
  per cycle, at most config.max_in_flight requests are outstanding, and each
  request waits the DRAM latency; a move without DRAM (a zero-fill mvin,
  Gemmini master's MVOUT_SPAD from the accumulator into the scratchpad) one
  local row a cycle;
- the array streams one A row per cycle with a floor of 4 rows per
  operation (MIN_FEED_ROWS); results land after the array's pipeline depth.
  A preload is fed to the array as the ExecuteController does it: together
  with the compute ahead of it (perform_mul_pre) when it and its own compute
  were queued as that compute began, its new weights then streaming in during
  that compute's rows (DIM of them: the next compute starts no earlier than
  DIM cycles after the previous one began); otherwise on its own once the unit
  is free and its operand rows are ready (perform_single_preload): DIM rows,
  or MIN_FEED_ROWS for a WS preload of no new weights;
- a fence waits for everything.

Hardware loops. A LOOP_WS or LOOP_CONV_WS arrives whole (baco.sim.loops.LoopProgram,
each FSM's commands). Its loop unit (LoopMatmul, LoopConv) holds CONCURRENT_LOOPS
loops at once, each in its own slot: a loop's commands are accepted (its configs
included) once a slot is free, i.e. the oldest loop has issued all its commands,
and the other unit holds no loop (each passes the other's commands on only when
idle); any other command waits until the units hold no loop. The unit's FSMs
(loads of D/A/B or bias/weights/input, execute, store) each work on the oldest
loop they have not finished, so one loop's loads run while the previous loop
executes; every cycle the unit's arbiter issues one command, by priority store,
execute, then the loads (LoopMatmul: LdD, then LdA/LdB through its weighted
arbiter, which keeps A and B in step by k), from an FSM whose reservation
station has room and whose gate on the others holds: LoopMatmul's execute runs
behind LdA/LdB's iterators and after LdD, its store behind the execute FSM's
last k step; LoopConv's execute waits for all of its loop's loads, its store
for all of the execute FSM's commands, and its loaders for a newer loop wait
while the execute FSM waits for an older loop's loads (wait_for_prev_loop).

Races: each command carries its program-order index (explicit commands in arrival order, a loop's
in LoopProgram order from its arrival, the order the functional model runs them). A command
dispatched after a command later in program order that wrote a row it reads, or read or wrote a
row it writes, raises DataRace naming both: the reservation station orders hazards by dispatch
order, so the RTL would not compute what the functional model does. (check_races=False only where
the data is not checked: DOSA's RTL-row programs, whose tiles may overflow the memories.)

Every run reports cycles, busy cycles per unit, DRAM bytes, scratchpad and
accumulator accesses, MACs, utilization and energy. The counter command's
event values come from here (`counter_value`, Gemmini's event numbering).

The CPU side (`baco sim --timing`, the ISS): the CPU and Gemmini share one clock
(baco.sim.iss.CpuClock).
- Cost per instruction: every retired RISC-V instruction costs
  `cpu_cycles_per_instruction` (1.0). Rocket is an in-order single-issue core
  whose CPI is 1 only without stalls: load-use interlocks, taken-branch and
  mispredict bubbles, multiplies and the iterative divider, cache misses and
  the RoCC replay below all cost more, so CPU time here is a lower bound.
  Multiplies and divides can be priced apart (`cpu_mul_cycles`, `cpu_div_cycles`;
  `baco sim --timing --rocket-muldiv` takes ROCKET_MULDIV, Rocket's iterative
  unit without its early out: an upper bound on those instructions); the ISS
  counts them per basic block as it counts instructions (IssResult.muldiv).
- RoCC issue: a custom instruction is an ordinary instruction to the core (one
  cycle); the command is dispatched into Gemmini no earlier than the CPU
  issued it (`issue_time`). If Gemmini cannot take it (`accept_time`: a loop
  command until its loop unit has a free slot, any other until every earlier
  command has been dispatched), the CPU waits. On the RTL, Rocket sends the
  command at write-back and replays the instruction while the RoCC queue is
  not ready (a few cycles per replay, not modelled), and the queues between
  the core and the reservation station (Gemmini's raw command queue, the loop
  units' input queues, 2 entries each) let the CPU run ahead by a few commands
  that this model makes it wait for: at a stall the CPU resumes up to one
  such queue's worth of commands late.
- Fences: a `fence` on Rocket stalls until the accelerator is not busy (every
  command completed); the CPU waits until everything issued has finished.
- Counter reads (rdcycle, the counter command) read this clock, so rdcycle
  around a kernel measures it, CPU issue included.

The constants (baco.gemmini.timing_constants, shared with the compiler's and the tuner's
estimates) say which were fitted and how.
"""
from __future__ import annotations

import bisect
import math

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import (ACC_BIT, COMMANDS, CONCURRENT_LOOPS, CONTROLLER_QUEUES, MIN_FEED_ROWS, QUEUE_OF,
                              READ_FULL_BIT, decode, is_garbage)
from baco.gemmini import energy
from baco.gemmini.loop_ws_timing import local_move_cycles
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, TimingConstants  # noqa: F401  (re-exported: callers read them here)
from baco.sim.loops import LoopConvState, LoopWsState, loop_conv_program, loop_ws_program



# The loop units' FSMs (baco.sim.loops.LoopProgram) and their arbiter's priority, highest
# first: LoopMatmul's Arbiter takes StC, Execute, LdD, then LdA/LdB through a WeightedArbiter;
# LoopConv's St, Execute, LdBias, LdWeight, LdInput
LOOP_KIND = {"loop_ws": "ws", "loop_conv_ws": "conv"}
LOOP_FSMS = {"ws": ("ldd", "lda", "ldb", "ex", "st"), "conv": ("bias", "weights", "input", "ex", "st")}
LOOP_LOADS = {"ws": ("ldd", "lda", "ldb"), "conv": ("bias", "weights", "input")}
LOOP_PRIORITY = {"ws": ("st", "ex", "ldd", "ldab"), "conv": ("st", "ex", "bias", "weights", "input")}
# funct -> loop unit of every loop command (configs included): they wait for a free loop slot
LOOP_UNIT_OF_FUNCT = {c.funct: ("conv" if c.name.startswith("loop_conv") else "ws")
                      for c in COMMANDS.values() if c.queue == "loop"}

# Counter events, numbered as Gemmini's CounterFile / gemmini_counter.h: codes 1..44 are
# incremental events, 45..51 the external values (the counter op's external bit with
# event_id = code - 44). Each event is (name, kind, source):
#   "union": cycles covered by the named interval list up to the read time;
#   "main":  cycles in which exactly the named controllers (ld/st/ex) are busy;
#   "sum":   a running total accumulated as commands are observed;
#   "level": an instantaneous value (reservation-station occupancy);
#   "zero":  a mechanism this model does not have (no virtual memory, so no TLB misses or
#            TLB waits; no im2col unit; no flushes or spad bank conflicts):
#            it reads 0, as it does on a Gemmini without the feature.
EXTERNAL_BASE = 44
EVENTS = {
    1: ("MAIN_LD_CYCLES", "main", "ld"), 2: ("MAIN_ST_CYCLES", "main", "st"),
    3: ("MAIN_EX_CYCLES", "main", "ex"), 4: ("MAIN_LD_ST_CYCLES", "main", "ld st"),
    5: ("MAIN_LD_EX_CYCLES", "main", "ld ex"), 6: ("MAIN_ST_EX_CYCLES", "main", "st ex"),
    7: ("MAIN_LD_ST_EX_CYCLES", "main", "ld st ex"),
    8: ("LOAD_DMA_WAIT_CYCLE", "sum", "ld_dma_wait"), 9: ("LOAD_ACTIVE_CYCLE", "union", "ld_active"),
    10: ("LOAD_SCRATCHPAD_WAIT_CYCLE", "sum", "ld_hazard_wait"),
    11: ("STORE_DMA_WAIT_CYCLE", "sum", "st_dma_wait"), 12: ("STORE_ACTIVE_CYCLE", "union", "st_active"),
    13: ("STORE_POOLING_CYCLE", "sum", "pool_cycles"), 14: ("STORE_SCRATCHPAD_WAIT_CYCLE", "sum", "st_hazard_wait"),
    15: ("DMA_TLB_MISS_CYCLE", "zero", None), 16: ("DMA_TLB_HIT_REQ", "sum", "dma_requests"),
    17: ("DMA_TLB_TOTAL_REQ", "sum", "dma_requests"),
    18: ("RDMA_ACTIVE_CYCLE", "union", "rdma"), 19: ("RDMA_TLB_WAIT_CYCLES", "zero", None),
    20: ("RDMA_TL_WAIT_CYCLES", "sum", "ld_dma_wait"),
    21: ("WDMA_ACTIVE_CYCLE", "union", "wdma"), 22: ("WDMA_TLB_WAIT_CYCLES", "zero", None),
    23: ("WDMA_TL_WAIT_CYCLES", "sum", "st_dma_wait"),
    24: ("EXE_ACTIVE_CYCLE", "union", "ex_active"), 25: ("EXE_FLUSH_CYCLE", "zero", None),
    26: ("EXE_CONTROL_Q_BLOCK_CYCLE", "zero", None), 27: ("EXE_PRELOAD_HAZ_CYCLE", "sum", "ex_weight_wait"),
    28: ("EXE_OVERLAP_HAZ_CYCLE", "sum", "ex_hazard_wait"),
    29: ("SCRATCHPAD_A_WAIT_CYCLE", "sum", "sp_a_wait"), 30: ("SCRATCHPAD_B_WAIT_CYCLE", "sum", "sp_b_wait"),
    31: ("SCRATCHPAD_D_WAIT_CYCLE", "sum", "sp_d_wait"),
    32: ("ACC_A_WAIT_CYCLE", "sum", "acc_a_wait"), 33: ("ACC_B_WAIT_CYCLE", "sum", "acc_b_wait"),
    34: ("ACC_D_WAIT_CYCLE", "sum", "acc_d_wait"),
    35: ("A_GARBAGE_CYCLES", "sum", "a_garbage"), 36: ("B_GARBAGE_CYCLES", "sum", "b_garbage"),
    37: ("D_GARBAGE_CYCLES", "sum", "d_garbage"),
    38: ("IM2COL_MEM_CYCLES", "zero", None), 39: ("IM2COL_ACTIVE_CYCLES", "zero", None),
    40: ("IM2COL_TRANSPOSER_WAIT_CYCLE", "zero", None),
    41: ("RESERVATION_STATION_FULL_CYCLES", "sum", "rs_full"),
    42: ("RESERVATION_STATION_ACTIVE_CYCLES", "union", "rs"),
    43: ("LOOP_MATMUL_ACTIVE_CYCLES", "union", "loop_matmul"),
    44: ("TRANSPOSE_PRELOAD_UNROLLER_ACTIVE_CYCLES", "sum", "transpose_unroller"),
    45: ("RESERVATION_STATION_LD_COUNT", "level", "ld"), 46: ("RESERVATION_STATION_ST_COUNT", "level", "st"),
    47: ("RESERVATION_STATION_EX_COUNT", "level", "ex"),
    48: ("RDMA_BYTES_REC", "sum", "dram_bytes_in"), 49: ("WDMA_BYTES_SENT", "sum", "dram_bytes_out"),
    50: ("RDMA_TOTAL_LATENCY", "sum", "rdma_latency"), 51: ("WDMA_TOTAL_LATENCY", "sum", "wdma_latency"),
}
EXTERNAL_TOTALS = tuple(c for c, (_, kind, _) in EVENTS.items() if c > EXTERNAL_BASE and kind == "sum")
EVENT_CODES = {name: code for code, (name, _, _) in EVENTS.items()}
WAIT_EVENTS = ("ld_dma_wait", "ld_hazard_wait", "st_dma_wait", "st_hazard_wait", "pool_cycles", "dma_requests",
               "ex_weight_wait", "ex_hazard_wait", "sp_a_wait", "sp_b_wait", "sp_d_wait", "acc_a_wait",
               "acc_b_wait", "acc_d_wait", "a_garbage", "b_garbage", "d_garbage", "rs_full", "rdma_latency",
               "wdma_latency", "transpose_unroller")


def _merged(intervals, t):
    """Disjoint sorted (starts, ends) of the union of intervals clipped to [0, t)."""
    if not intervals:
        return np.zeros(0), np.zeros(0)
    a = np.minimum(np.asarray(intervals, dtype=float), t)
    a = a[a[:, 1] > a[:, 0]]
    if not len(a):
        return np.zeros(0), np.zeros(0)
    a = a[np.argsort(a[:, 0], kind="stable")]
    reach = np.maximum.accumulate(a[:, 1])
    new = np.ones(len(a), bool)
    new[1:] = a[1:, 0] > reach[:-1]
    group = np.cumsum(new) - 1
    starts = a[new, 0]
    ends = np.zeros(len(starts))
    np.maximum.at(ends, group, a[:, 1])
    return starts, ends


def _covers(starts, ends, points):
    if not len(starts):
        return np.zeros(len(points), bool)
    i = np.searchsorted(starts, points, side="right") - 1
    return (i >= 0) & (points < ends[np.maximum(i, 0)])


class DataRace(RuntimeError):
    """Two commands that conflict on a scratchpad or accumulator row were issued in the
    opposite order of the program's (TimingModel._check_order)."""


class _HeldLoop:
    """A hardware loop held by its loop unit: each FSM's commands, decoded, with their
    program-order indices, and how many of them it has issued. The loop was configured (took its
    slot) at `arrival`."""

    def __init__(self, program, arrival, first_order):
        self.kind, self.resadd, self.max_k, self.arrival = program.kind, program.resadd, program.max_k, arrival
        self.cmds = {fsm: [] for fsm in LOOP_FSMS[program.kind]}
        # each command with its program-order index: the loop's commands in LoopProgram order
        # (the functional model's) from first_order
        for order, (fsm, iters, name, fields) in enumerate(program.commands, first_order):
            self.cmds[fsm].append((iters, name, fields, order))
        self.issued = dict.fromkeys(self.cmds, 0)
        self.sizes = {fsm: len(cmds) for fsm, cmds in self.cmds.items()}
        self.left = len(program.commands)     # commands not issued yet
        self.started = set()        # the FSMs that have taken this loop (they keep it until done)

    def finished(self, fsm):
        return self.issued[fsm] == self.sizes[fsm]

    def issue(self, fsm):
        self.issued[fsm] += 1
        self.left -= 1

    def complete(self):
        return not self.left

    def iters(self, fsm):
        """The FSM's iterator registers: its next command's, or None when it is done."""
        return None if self.finished(fsm) else self.cmds[fsm][self.issued[fsm]][0]


class TimingModel:
    def __init__(self, config: GemminiConfig | None = None, constants: TimingConstants = DEFAULT_CONSTANTS, *,
                 check_races: bool = True):
        self.cfg = cfg = config or GemminiConfig()
        self.k = constants
        self.rs = {"ld": cfg.rs_ld, "ex": cfg.rs_ex, "st": cfg.rs_st}
        self.outstanding = {q: [] for q in self.rs}    # end times of the commands in each station
        self.unit_free = {q: 0.0 for q in self.rs}
        self.busy = {q: 0.0 for q in self.rs}
        self.dispatch_time = 0.0
        self.finish = 0.0
        # per-row hazard times: last write completion, last read completion (lists: a command
        # touches a few rows, where list slices are several times faster than numpy's)
        self.sp_w = [0.0] * cfg.sp_rows
        self.sp_r = [0.0] * cfg.sp_rows
        self.acc_w = [0.0] * cfg.acc_rows
        self.acc_r = [0.0] * cfg.acc_rows
        # per-row program-order indices (the race check, _check_order): the highest of the
        # writes and of the reads dispatched so far, -1 for none
        self.sp_wo = [-1] * cfg.sp_rows
        self.sp_ro = [-1] * cfg.sp_rows
        self.acc_wo = [-1] * cfg.acc_rows
        self.acc_ro = [-1] * cfg.acc_rows
        self.check_races = check_races     # off only to time programs whose data is not checked
        self.order = 0              # the next command's program-order index
        self.sources = []           # (first index, what: "ws loop 3" and its commands, or "explicit", None)
        self.loops_seen = dict.fromkeys(LOOP_FSMS, 0)
        self.pending_weights = False
        self.weights = (0, 0)       # WS: (rows, cols) of the B block the array holds
        self.ex_mode = (1, 0, 0)    # config_ex (dataflow, a_transpose, b_transpose)
        self.ex_strides = (1, 1)    # config_ex (a_stride, c_stride)
        self.pool = None            # config_st pooling fields while pooling is on
        self.shrink = [0, 0, 0]     # config_ld shrink per load slot
        self.block_stride = [cfg.dim] * 3   # config_ld block_stride per load slot (rows between a mvin's blocks)
        self.stats = dict(dram_bytes_in=0, dram_bytes_out=0, macs=0, scratchpad_reads=0, scratchpad_writes=0,
                          accumulator_reads=0, accumulator_writes=0, commands=0, registers=0)
        # the counter events: running totals, and the time intervals the union events measure
        self.waits = dict.fromkeys(WAIT_EVENTS, 0.0)
        self.intervals = {name: [] for name in ("ld_active", "st_active", "ex_active", "ld", "st", "ex",
                                                "rdma", "wdma", "rs", "loop_matmul")}
        self.issue_time = 0.0       # when the CPU issued the current command (set by the ISS)
        self.first_dispatch = None
        self.last_compute_start = -math.inf     # when the last compute began feeding the array
        self.preload_waiting = False            # a preload issued since that compute
        self.preload_ready = 0.0                # ... and when its operand rows were ready
        # the loop units (LOOP_WS, LOOP_CONV_WS): the loops held (oldest first, at most
        # CONCURRENT_LOOPS, of one unit: each unit passes the other's commands on only when it
        # holds no loop), the next cycle their arbiter may issue a command in, and the earliest
        # time a loop command is accepted (after the raw commands before it, or once a slot frees)
        self.held: list[_HeldLoop] = []
        self.loop_clock = 0.0
        self.loop_floor = 0.0

    # ---- attach ------------------------------------------------------------------
    def attach(self, model):
        model.observers.append(self.observe)
        model.counter_source = self.counter_value

    def accept_time(self, funct: int | None = None) -> float:
        """When Gemmini's command queue can take the CPU's next command (funct): a loop command
        (LOOP_WS / LOOP_CONV_WS or their configs) once its loop unit has a free slot (the oldest
        loop has issued all its commands) and the other unit holds no loop; any other command
        after every earlier command (a loop: every command it unrolls to) has been dispatched."""
        unit = LOOP_UNIT_OF_FUNCT.get(funct)
        if unit is None:
            self._run_loops()
            return self.dispatch_time
        self._free_slot(unit)
        return self.loop_floor

    # ---- the loop units ------------------------------------------------------------
    def _free_slot(self, unit):
        if self.held and self.held[0].kind != unit:
            self._run_loops()
        elif len(self.held) == CONCURRENT_LOOPS:
            self._run_loops(stop=lambda: len(self.held) < CONCURRENT_LOOPS)

    def _loop_arrives(self, program):
        self._free_slot(program.kind)
        arrival = max(self.issue_time, self.loop_floor)
        self._run_loops(until=arrival)
        self.sources.append((self.order, f"{program.kind} loop {self.loops_seen[program.kind]}", program.commands))
        self.loops_seen[program.kind] += 1
        self.held.append(_HeldLoop(program, arrival, self.order))
        self.order += len(program.commands)

    def _started(self, loop, fsm):
        """Whether `fsm` has taken `loop`'s request: it is done with every older loop, the loop
        is configured, and (execute) every load FSM or (store) the execute FSM has taken it."""
        if fsm in loop.started:
            return True
        for older in self.held:
            if older is loop:
                break
            if not older.finished(fsm):
                return False
        if loop.arrival > self.loop_clock:
            return False
        if (fsm == "ex" and not all(self._started(loop, ld) for ld in LOOP_LOADS[loop.kind])) or \
                (fsm == "st" and not self._started(loop, "ex")):
            return False
        loop.started.add(fsm)
        return True

    def _current(self, fsm):
        """The loop `fsm` works on (the oldest it has not finished), if it has taken it."""
        for loop in self.held:
            if not loop.finished(fsm):
                return loop if self._started(loop, fsm) else None
        return None

    def _ahead(self, loop, fsm):
        """The FSM's gate on the others' progress in the same loop (they issue commands, the
        reservation station orders them): LoopMatmul's Execute runs behind LdA/LdB's iterators
        and after LdD, StC behind Execute's (its last k step), a resadd's StC behind LdB;
        LoopConv's Execute waits for all of its loop's loads, St for all of Execute, and a
        load FSM on a newer loop waits while Execute waits for an older loop's loads."""
        if loop.kind == "conv":
            if fsm == "ex":
                return all(loop.finished(ld) for ld in LOOP_LOADS["conv"])
            if fsm == "st":
                return loop.finished("ex")
            ex = self._current("ex")
            return ex is None or ex is loop or all(ex.finished(ld) for ld in LOOP_LOADS["conv"])
        if fsm == "ex":
            k, j, i = loop.iters("ex")
            a, b = loop.iters("lda"), loop.iters("ldb")
            ka = a[0] if a is not None else 0
            lda_ahead = a is None or a > (k, i)
            ldb_ahead = b is None or b[0] > k or (ka == k and b[1] > j)   # (sic: LdA's k, LdB's j)
            return lda_ahead and ldb_ahead and loop.finished("ldd")
        if fsm == "st":
            j, i, blocks = loop.iters("st")
            if loop.resadd:
                b = loop.iters("ldb")
                return (loop.finished("lda") and b is None) or \
                    (b is not None and (b[0] > i or (b[0] == i and b[1] >= j + blocks)))
            ex = loop.iters("ex")
            if ex is None:
                return True
            ek, ej, ei = ex
            return ek == loop.max_k - 1 and (ej >= j + blocks or (ej == j + blocks - 1 and ei > i))
        return True

    def _valid(self, fsm, t):
        """(loop, fsm, name, fields, program-order index) of the command `fsm` can issue at t,
        else None; and the unit whose full reservation station alone stops it, if that is what
        stops it."""
        loop = self._current(fsm)
        if loop is None or loop.finished(fsm) or not self._ahead(loop, fsm):
            return None, None
        _, name, fields, order = loop.cmds[fsm][loop.issued[fsm]]
        unit = QUEUE_OF[name]
        if sum(1 for e in self.outstanding[unit] if e > t) >= self.rs[unit]:
            return None, unit
        return (loop, fsm, name, fields, order), None

    def _ldab_choice(self):
        """LoopMatmul's WeightedArbiter between LdA and LdB (static weights): on different loops
        the older loop's loader goes; on one loop B's first block, then the loader behind in k
        (A on ties); a resadd moves all of A, then B."""
        a, b = self._current("lda"), self._current("ldb")
        a_busy = a is not None and not a.finished("lda")
        b_busy = b is not None and not b.finished("ldb")
        if not a_busy or not b_busy:
            return "lda" if a_busy else "ldb" if b_busy else None
        if a is not b:
            return "lda" if self.held.index(a) < self.held.index(b) else "ldb"
        if a.resadd:
            return "lda"
        (ka, _), (kb, jb) = a.iters("lda"), b.iters("ldb")
        return "ldb" if ka > kb or (kb == 0 and jb == 0) else "lda"

    def _run_loops(self, until=math.inf, stop=None):
        """Issue the held loops' commands, one a cycle, in the loop unit's arbiter order, for
        the cycles before `until` (the next command from the CPU may compete from then on), or
        until `stop()` holds or no loop is left."""
        while self.held and not (stop and stop()):
            t = self.loop_clock = max(self.loop_clock, self.dispatch_time + 1)
            if t >= until:
                return
            kind = self.held[0].kind
            pick, blocked = None, []
            for fsm in LOOP_PRIORITY[kind]:
                if fsm == "ldab":
                    fsm = self._ldab_choice()
                    if fsm is None:
                        continue
                pick, full = self._valid(fsm, t)
                if pick:
                    break
                if full:
                    blocked.append(full)
            if pick is None:
                events = [e for u in blocked for e in self.outstanding[u] if e > t]
                events += [loop.arrival for loop in self.held if loop.arrival > t] + [until]
                if min(events) == math.inf:
                    raise RuntimeError("the loop unit is stuck: no command can issue and nothing will change")
                self.loop_clock = min(events)
                continue
            loop, fsm, name, fields, order = pick
            self.stats["commands"] += 1
            self._dispatch(name, fields, QUEUE_OF[name], t, order)
            loop.issue(fsm)
            while self.held and self.held[0].complete():    # slots free oldest first (head_loop)
                done = self.held.pop(0)
                self.loop_floor = max(self.loop_floor, t)
                if done.kind == "ws":
                    self.intervals["loop_matmul"].append((done.arrival, t))

    # ---- row ranges -------------------------------------------------------------
    def _range(self, addr, rows, blocks=1, block_stride=None):
        if is_garbage(addr) or rows <= 0 or blocks <= 0:
            return None
        acc = bool(addr & ACC_BIT)
        row = addr & 0x3FFFFFF
        span = (blocks - 1) * (block_stride if block_stride is not None else self.cfg.dim) + rows
        limit = self.cfg.acc_rows if acc else self.cfg.sp_rows
        return acc, row % limit, min(limit, row % limit + span)

    def _ready_one(self, r, write=False):
        if not r:
            return 0.0
        acc, a, b = r
        t = max((self.acc_w if acc else self.sp_w)[a:b], default=0.0)
        if write:
            t = max(t, max((self.acc_r if acc else self.sp_r)[a:b], default=0.0))
        return t

    def _ready(self, reads, writes):
        return max([0.0] + [self._ready_one(r) for r in reads] + [self._ready_one(w, True) for w in writes])

    def _mark(self, reads, writes, end):
        for r in reads:
            if r:
                acc, a, b = r
                arr = self.acc_r if acc else self.sp_r
                arr[a:b] = [v if v > end else end for v in arr[a:b]]
        for r in writes:
            if r:
                acc, a, b = r
                (self.acc_w if acc else self.sp_w)[a:b] = [end] * (b - a)

    def _check_order(self, order, reads, writes):
        """Raise DataRace if the command of program-order index `order` is dispatched after a
        command later in program order that it conflicts with: it writes a row a later command
        already read or wrote, or reads a row a later command already wrote. The reservation
        station orders hazards by dispatch order, so the RTL would then compute other data than
        the functional model, which runs the commands in program order. An accumulating write
        (a read-modify-write) is checked as a write, which already conflicts with any later
        read or write of its rows. Marks the rows' highest indices."""
        for r in reads:
            if r:
                acc, a, b = r
                written, read = (self.acc_wo, self.acc_ro) if acc else (self.sp_wo, self.sp_ro)
                later = max(written[a:b])
                if later > order:
                    self._race(order, later, r, "reads", "written")
                read[a:b] = [v if v > order else order for v in read[a:b]]
        for r in writes:
            if r:
                acc, a, b = r
                written, read = (self.acc_wo, self.acc_ro) if acc else (self.sp_wo, self.sp_ro)
                later = max(max(written[a:b]), max(read[a:b]))
                if later > order:
                    self._race(order, later, r, "writes", "read or written")
                written[a:b] = [v if v > order else order for v in written[a:b]]

    def _race(self, order, later, rows, verb, done):
        acc, a, b = rows
        raise DataRace(f"data race: {self._source(order)} {verb} {'accumulator' if acc else 'scratchpad'} rows "
                       f"{a}-{b - 1}, already {done} by {self._source(later)}, later in program order but "
                       "issued before it: the RTL would not compute what the functional model does")

    def _source(self, order):
        """The command of program-order index `order`, named: its loop (kind and number), FSM, name
        and fields, or "explicit" (an explicit command is dispatched once every command before it
        was, and before any after it, so it never races: its fields are not kept)."""
        first, what, commands = self.sources[bisect.bisect_right(self.sources, order, key=lambda s: s[0]) - 1]
        if commands is None:
            return f"command {order} (explicit)"
        fsm, _, name, fields = commands[order - first]
        return f"command {order} ({what}{' ' + fsm if fsm else ''}: {name} {fields})"

    # ---- the stream ----------------------------------------------------------------
    def observe(self, name, f, pc=None):
        """One command in program order; a LOOP_WS / LOOP_CONV_WS arrives whole (f is its
        baco.sim.loops.LoopProgram) and its loop unit issues the commands. Any other command
        waits until the loop units hold no loop, and for room in its reservation station."""
        if name in LOOP_KIND:
            self._loop_arrives(f)
            return
        self.stats["commands"] += 1
        unit = QUEUE_OF.get(name)
        if unit is None:        # flush, clock gating, counters: handled by the controller at once
            return
        self._run_loops()
        if not self.sources or self.sources[-1][2] is not None:    # a run of explicit commands: one entry
            self.sources.append((self.order, "explicit", None))
        self.order += 1
        dispatch = max(self.dispatch_time + 1, self.issue_time)
        pending = sorted(e for e in self.outstanding[unit] if e > dispatch)
        if len(pending) >= self.rs[unit]:
            full_until = pending[len(pending) - self.rs[unit]]
            self.waits["rs_full"] += full_until - dispatch
            dispatch = full_until
        self._dispatch(name, f, unit, dispatch, self.order - 1)
        self.loop_floor = dispatch

    observe.sees_loops = True   # the functional model hands it hardware loops whole

    def _dispatch(self, name, f, unit, dispatch, order):
        """Time a command (program-order index `order`) that enters its reservation station at
        `dispatch`."""
        self.outstanding[unit] = [e for e in self.outstanding[unit] if e > dispatch]
        self.dispatch_time = dispatch
        if self.first_dispatch is None:
            self.first_dispatch = dispatch
        start, occupancy, latency, reads, writes = self._cost(name, f, unit, dispatch)
        if self.check_races:
            self._check_order(order, reads, writes)
        free = max(start, self.unit_free[unit])
        ready = self._ready(reads, writes)
        if ready > free:
            self._hazard_wait(name, unit, f, reads, writes, ready - free)
        start = max(free, ready)
        end = start + latency
        self.unit_free[unit] = start + occupancy
        self.busy[unit] += occupancy
        self._mark(reads, writes, end)
        if name.startswith("compute"):
            self.last_compute_start = start
        elif name == "preload":     # when its operand rows are ready, as it waits for the array
            self.preload_ready = max(dispatch, ready)
        self.outstanding[unit].append(end)
        self.finish = max(self.finish, end)
        iv = self.intervals
        iv[unit + "_active"].append((start, start + occupancy))
        iv[unit].append((start, end))
        iv["rs"].append((dispatch, end))
        if name.startswith("mvin") and f["dram_addr"]:
            iv["rdma"].append((start, end))
        elif name == "mvout":
            iv["wdma"].append((start, end))

    def _hazard_wait(self, name, unit, f, reads, writes, wait):
        """Attribute cycles a command waited on local rows to its unit's wait counters; the
        execute unit's to the operand (A, B, D) that was ready last and its memory."""
        if unit != "ex":
            self.waits[unit + "_hazard_wait"] += wait
            return
        self.waits["ex_hazard_wait"] += wait
        operands = {"preload": ("b",), "compute_preloaded": ("a", "d"), "compute_accumulated": ("a", "d")}
        ranges = [r for r in reads if r is not None] if name in operands else []
        if not ranges:
            return
        which = operands[name][:len(ranges)]
        times = [self._ready_one(r) for r in ranges[:len(which)]]
        i = int(np.argmax(times))
        mem = "acc" if ranges[i][0] else "sp"
        self.waits[f"{mem}_{which[i]}_wait"] += wait

    def fence(self):
        """Everything issued so far finishes before anything after it is dispatched."""
        self._run_loops()
        self.dispatch_time = self.loop_floor = max(self.dispatch_time, self.finish)

    def _dma(self, rows, bytes_per_row, unit):
        """Occupancy of a DMA command: requests limited by bus beats and in-flight slots."""
        beats = max(1, math.ceil(bytes_per_row / (self.cfg.dma_bus_bits // 8)))
        per_row = beats * self.k.beat_cycles
        inflight_bound = math.ceil(rows / self.cfg.max_in_flight) * self.k.dram_latency
        self.waits[unit + "_dma_wait"] += max(0.0, inflight_bound - rows * per_row)
        self.waits["dma_requests"] += rows
        self.waits["rdma_latency" if unit == "ld" else "wdma_latency"] += rows * self.k.dram_latency
        return self.k.dma_cmd_overhead + max(rows * per_row, inflight_bound)

    def _cost(self, name, f, unit, dispatch):
        """(earliest start, occupancy, total latency, read ranges, write ranges)."""
        if name.startswith("config"):
            return self._config_cost(name, f, dispatch)
        if name.startswith("mvin"):
            return self._mvin_cost(name, f, dispatch)
        if name == "mvout":
            return self._mvout_cost(f, dispatch)
        if name == "mvout_spad":
            return self._mvout_spad_cost(f, dispatch)
        if name == "preload":
            return self._preload_cost(f, dispatch)
        if name in ("compute_preloaded", "compute_accumulated"):
            return self._compute_cost(name, f, dispatch)
        return dispatch, 0.0, 0.0, [], []

    def _config_cost(self, name, f, dispatch):
        """A config command latches the state later commands' costs read."""
        if name == "config_st":
            self.pool = f if f["pool_stride"] else None
        elif name == "config_ld" and f["state_id"] < 3:
            self.shrink[f["state_id"]] = f["shrink"]
            self.block_stride[f["state_id"]] = f["block_stride"]
        elif name == "config_ex":
            self.ex_strides = (f["a_stride"], f["c_stride"])
            if not f["set_only_strides"]:
                self.ex_mode = (f["dataflow"], f["a_transpose"], f["b_transpose"])
        return dispatch, 1.0, 1.0, [], []

    def _mvin_cost(self, name, f, dispatch):
        cfg = self.cfg
        addr, rows, cols = f["local_addr"], f["rows"], f["cols"]
        acc = bool(addr & ACC_BIT)
        slot = COMMANDS[name].load_slot
        shrunk = self.shrink[slot]      # int8 in DRAM, widened into the accumulator
        esize = cfg.acc_bytes if acc and not shrunk else cfg.input_bytes
        blocks = max(1, -(-cols // cfg.dim))
        if not f["dram_addr"]:     # zero fill: no DRAM requests
            occ = self._local_move(rows)
        else:
            occ = self._dma(rows, cols * esize, "ld")
            self.stats["dram_bytes_in"] += rows * cols * esize
        self.stats["accumulator_writes" if acc else "scratchpad_writes"] += rows * cols
        stride = self.block_stride[slot]
        # the blocks land block_stride rows apart: one range when they abut (the default DIM),
        # else one each (LoopConv's weights and inputs), not the rows between them
        writes = [self._range(addr, rows, blocks, stride)] if stride <= cfg.dim else \
            [self._range(addr + b * stride, rows) for b in range(blocks)]
        return dispatch, occ, occ + self.k.dram_latency, [], writes

    def _mvout_cost(self, f, dispatch):
        cfg, k = self.cfg, self.k
        addr, rows, cols = f["local_addr"], f["rows"], f["cols"]
        acc = bool(addr & ACC_BIT)
        out_bytes = cfg.acc_bytes if (acc and addr & READ_FULL_BIT) else cfg.input_bytes
        blocks = max(1, -(-cols // cfg.dim))
        rows_read, image_rows, pool_cycles = rows, rows, 0
        if self.pool:   # pooled: the StoreController reads each window position of each pooled
            # pixel (one local row a cycle, G:StoreController pool_total_rows), writes porows×pocols rows
            p = self.pool
            rows = p["porows"] * p["pocols"]
            rows_read = pool_cycles = rows * p["pool_size"] ** 2
            image_rows = p["orows"] * p["ocols"]
        occ = self._dma(rows, cols * out_bytes, "st") + pool_cycles + (k.acc_scale_latency if acc else 0)
        self.waits["pool_cycles"] += pool_cycles
        self.stats["dram_bytes_out"] += rows * cols * out_bytes
        self.stats["accumulator_reads" if acc else "scratchpad_reads"] += rows_read * cols
        r = self._range(addr, image_rows, blocks, cfg.dim)
        return dispatch, occ, occ + k.dram_latency, [r], []

    def _local_move(self, rows):
        """Occupancy of a DMA command that moves rows without DRAM (a zero-fill mvin, a MVOUT_SPAD):
        its setup, then one local row a cycle (loop_ws_timing.local_move_cycles, the walk's too)."""
        return local_move_cycles(rows, self.k)

    def _mvout_spad_cost(self, f, dispatch):
        """MVOUT_SPAD (Gemmini master): the store unit reads accumulator rows through the scale
        path, as a mvout does, and writes them into scratchpad rows; no DRAM request or latency."""
        rows, cols = f["rows"], f["cols"]
        occ = self._local_move(rows) + self.k.acc_scale_latency
        self.stats["accumulator_reads"] += rows * cols
        self.stats["scratchpad_writes"] += rows * cols
        reads = [self._range(f["local_addr"], rows)]
        writes = [self._range(f["dst_addr"], (rows - 1) * f["dst_stride"] + 1)]
        return dispatch, occ, occ, reads, writes

    def _preload_cost(self, f, dispatch):
        """A preload takes no unit time of its own here: it waits for the compute it is fed
        with (_weights_in); its B rows are read then."""
        if is_garbage(f["bd_addr"]):
            self.waits["b_garbage"] += self.cfg.dim
        self.preload = f
        self.preload_waiting = True
        self.pending_weights = not is_garbage(f["bd_addr"])
        ws, _, b_t = self.ex_mode
        return dispatch, 0.0, 0.0, [self._range(f["bd_addr"], f["bd_cols"] if ws and b_t else f["bd_rows"])], []

    def _compute_cost(self, name, f, dispatch):
        d = self.cfg.dim
        pre = getattr(self, "preload", None) or {"c_addr": 0xFFFFFFFF, "c_rows": 0, "c_cols": 0}
        # the ExecuteController feeds DIM rows, or only A's (at least 4) in WS when no operand
        # goes through the transposer (OS feeds A through it unless A is transposed)
        ws, a_t, b_t = self.ex_mode
        transposer = (a_t or b_t) if ws else (not a_t or b_t)
        rows = d if transposer or not ws else max(f["a_rows"], MIN_FEED_ROWS)
        occ = rows + self.k.compute_overhead
        if ws and b_t and name == "compute_preloaded" and self.pending_weights:
            # the TransposePreloadUnroller splits the weight preload off into a compute of its own
            occ += d
            self.waits["transpose_unroller"] += d
        start = dispatch
        if is_garbage(f["a_addr"]):
            self.waits["a_garbage"] += occ
        if is_garbage(f["bd_addr"]):
            self.waits["d_garbage"] += occ
        if self.preload_waiting and not (ws and b_t):
            start = max(start, self._weights_in(dispatch, transposer))
        self.preload_waiting = False
        self._count_compute(name, f, pre, ws)
        # local rows touched: a transposed operand reads its cols as stored rows; A row r is
        # at a_addr + r·a_stride and C row r at c_addr + r·c_stride
        a_stride, c_stride = self.ex_strides
        c = self._range(pre["c_addr"], 1, pre["c_rows"], c_stride)
        if c and c[0]:
            self.stats["accumulator_writes"] += pre["c_rows"] * pre["c_cols"]
            self.stats["accumulator_reads"] += pre["c_rows"] * pre["c_cols"]
        reads = [self._range(f["a_addr"], 1, f["a_cols"] if a_t else f["a_rows"], a_stride),
                 self._range(f["bd_addr"], f["bd_cols"] if b_t and not ws else f["bd_rows"])]
        return start, occ, occ + self.k.array_depth_factor * d, reads, [c]

    def _weights_in(self, dispatch, transposer):
        """When the weights of the preload waiting for this compute are in the array. The
        ExecuteController runs a compute together with the preload behind it (perform_mul_pre)
        when that preload and its compute were queued as the compute began: new weights then
        stream in during its rows, DIM of them. Otherwise the preload is an operation of its
        own (perform_single_preload) once the unit is free: DIM rows, or MIN_FEED_ROWS for a
        WS preload of no new weights."""
        d, ws = self.cfg.dim, self.ex_mode[0]
        queued = max(dispatch, self.preload_ready)
        if queued <= self.last_compute_start:
            weights_in = self.last_compute_start + (d if self.pending_weights else 0)
        else:
            alone = d if self.pending_weights or transposer or not ws else MIN_FEED_ROWS
            weights_in = max(queued, self.unit_free["ex"]) + alone
            self.busy["ex"] += alone
            self.intervals["ex_active"].append((weights_in - alone, weights_in))
            self.intervals["ex"].append((weights_in - alone, weights_in))
        self.waits["ex_weight_wait"] += max(0.0, weights_in - max(dispatch, self.unit_free["ex"]))
        return weights_in

    def _count_compute(self, name, f, pre, ws):
        """A compute's register writes, scratchpad reads and useful MACs: in WS only the rows
        and columns of the B block held in the array (the first compute into a strip writes
        whole DIM-wide accumulator rows, zeros past B's columns)."""
        d = self.cfg.dim
        if name == "compute_preloaded" and self.pending_weights:
            self.stats["registers"] += pre.get("bd_rows", d) * pre.get("bd_cols", d)
            self.stats["scratchpad_reads"] += pre.get("bd_rows", d) * pre.get("bd_cols", d)
        c_cols = pre.get("c_cols", d) or d
        if ws:
            if name == "compute_preloaded" and self.pending_weights:
                self.weights = (pre["bd_rows"], pre["bd_cols"])
            self.stats["macs"] += f["a_rows"] * min(f["a_cols"], self.weights[0]) * min(c_cols, self.weights[1])
        else:
            self.stats["macs"] += f["a_rows"] * f["a_cols"] * c_cols
        self.pending_weights = False
        self.stats["scratchpad_reads"] += f["a_rows"] * f["a_cols"]

    # ---- results ------------------------------------------------------------------
    @property
    def cycles(self) -> float:
        self._run_loops()
        return self.finish

    def report(self) -> dict:
        self._run_loops()
        cfg = self.cfg
        cycles = max(self.finish, 1.0)
        s = self.stats
        e_pj = energy.energy_pj(s, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim)
        return {"cycles": self.finish, "load_busy": self.busy["ld"], "execute_busy": self.busy["ex"],
                "store_busy": self.busy["st"], **s,
                "utilization": s["macs"] / (cycles * cfg.dim * cfg.dim), "energy_uj": e_pj * 1e-6}

    def counter_value(self, code: int) -> int:
        """The running value of counter event `code` (gemmini_counter.h numbering) at the
        time the counter command reaches Gemmini: when the CPU issues it, and not before the
        commands ahead of it were dispatched. The counter command subtracts the value it
        had when the counter was configured or reset."""
        if code not in EVENTS:
            return 0
        name, kind, source = EVENTS[code]
        self._run_loops()
        t = max(self.issue_time, self.dispatch_time)
        if kind == "zero":
            return 0
        if kind == "sum":
            value = self.stats[source] if source in self.stats else self.waits[source]
            return int(value)
        if kind == "level":
            return sum(1 for s, e in self.intervals[source] if s <= t < e)
        if kind == "union":
            starts, ends = _merged(self.intervals[source], t)
            return int(round(float((ends - starts).sum())))
        busy = {u: _merged(self.intervals[u], t) for u in CONTROLLER_QUEUES}
        points = np.unique(np.concatenate([np.concatenate(b) for b in busy.values()] + [[0.0, t]]))
        mids, lengths = (points[:-1] + points[1:]) / 2, np.diff(points)
        want = set(source.split())
        mask = np.ones(len(mids), bool)
        for u, (bs, be) in busy.items():
            covered = _covers(bs, be, mids)
            mask &= covered if u in want else ~covered
        return int(round(float(lengths[mask].sum())))



class CommandStream:
    """Stands in for the Gemmini model in a launch: decodes each command and hands it to the
    observers (a TimingModel); moves no data. A kernel's command stream does not depend on
    its data, so this times a launch without running it (benchmarks/kernels.py, autotuning).
    A LOOP_WS or LOOP_CONV_WS goes to the observers as the functional model hands it on
    (whole to a TimingModel, else as the commands it expands to, baco.sim.loops); that needs
    the Gemmini configuration (a launch sets it)."""

    def __init__(self, config: GemminiConfig | None = None):
        self.observers = []
        self.config = config
        self.loop_ws = LoopWsState()
        self.loop_conv = LoopConvState()

    def execute(self, funct, rs1, rs2, pc=None):
        cmd, fields = decode(funct, rs1, rs2)
        if cmd.name.startswith("loop_ws_config"):
            self.loop_ws.latch(cmd.name, fields)
        elif cmd.name.startswith("loop_conv_ws_config"):
            self.loop_conv.latch(fields)
        elif cmd.name in LOOP_KIND:
            if self.config is None:
                raise ValueError(f"CommandStream needs the GemminiConfig to expand {cmd.name}")
            program = loop_ws_program(self.config, self.loop_ws, fields) if cmd.name == "loop_ws" else \
                loop_conv_program(self.config, self.loop_conv, fields)
            for obs in self.observers:
                if getattr(obs, "sees_loops", False):
                    obs(cmd.name, program, pc)
                else:
                    for _, _, sub_name, sub_fields in program.commands:
                        obs(sub_name, sub_fields, pc)
        elif cmd.queue == "loop":
            raise ValueError(f"CommandStream does not expand {cmd.name}")
        else:
            for obs in self.observers:
                obs(cmd.name, fields, pc)
        return 0

    def fence(self):
        pass
