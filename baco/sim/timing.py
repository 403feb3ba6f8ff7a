"""Cycle-approximate timing model of a Gemmini command stream.

Commands arrive in program order (attach `TimingModel.observe` to a
GemminiModel's observers, or feed decoded commands directly). Each goes to
its unit — load (DMA in), execute (the array), store (DMA out) — and:
- is dispatched in order, one per cycle, into a reservation station of
  config.rs_ld / rs_ex / rs_st entries (dispatch stalls while it is full);
- issues in order within its unit, when the unit is free and every local
  row it reads or writes is free of hazards with earlier commands of other
  units (RAW, WAR, WAW by row ranges of the scratchpad and accumulator);
- DMA: one request per row of ⌈bytes/16⌉ bus beats; the bus moves one beat
  per cycle, at most config.max_in_flight requests are outstanding, and each
  request waits the DRAM latency;
- the array streams one A row per cycle with a floor of 4 rows per
  operation; loading new weights (a preload before compute_preloaded) takes
  DIM cycles that overlap the previous compute; results land after the
  array's pipeline depth;
- a fence waits for everything.
Every run reports cycles, busy cycles per unit, DRAM bytes, scratchpad and
accumulator accesses, MACs, utilization and energy. The counter command's
event values come from here (`counter_value`).

The constants below were fitted on the training part of
benchmarks/data/rtl/firesim_train.csv by benchmarks/rtl_calibration.py --fit.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import ACC_BIT, READ_FULL_BIT, is_garbage
from baco.gemmini import energy


@dataclass
class TimingConstants:
    dram_latency: float = 40.0      # cycles from a DMA request to its data
    beat_cycles: float = 1.0        # cycles per 16-byte beat on the bus
    dma_cmd_overhead: float = 2.0   # per mvin/mvout command (address translation, request setup)
    array_depth_factor: float = 2.0  # pipeline depth of the array = factor × DIM
    compute_overhead: float = 1.0   # per compute command
    acc_scale_latency: float = 8.0  # accumulator read path on mvout
    # software around each DRAM-level matmul tile (tiles stream without a fence); convolution
    # tiles are timed as LoopConv's expanded LOOP_CONV_WS stream, one fenced call per tile
    gemm_tile_overhead: float = 0.0


DEFAULT_CONSTANTS = TimingConstants()

QUEUES = {"ld": ("mvin", "mvin2", "mvin3", "config_ld"),
          "ex": ("preload", "compute_preloaded", "compute_accumulated", "config_ex"),
          "st": ("mvout", "config_st", "config_norm")}
UNIT_OF = {name: q for q, names in QUEUES.items() for name in names}

# counter event ids (baco's numbering, readable through the counter command)
EVENTS = {1: "cycles", 2: "load_busy", 3: "execute_busy", 4: "store_busy", 5: "dram_bytes_in",
          6: "dram_bytes_out", 7: "macs", 8: "scratchpad_reads", 9: "scratchpad_writes",
          10: "accumulator_reads", 11: "accumulator_writes", 12: "commands"}


class TimingModel:
    def __init__(self, config: GemminiConfig | None = None, constants: TimingConstants = DEFAULT_CONSTANTS):
        self.cfg = cfg = config or GemminiConfig()
        self.k = constants
        self.rs = {"ld": cfg.rs_ld, "ex": cfg.rs_ex, "st": cfg.rs_st}
        self.outstanding = {q: deque() for q in self.rs}
        self.unit_free = {q: 0.0 for q in self.rs}
        self.busy = {q: 0.0 for q in self.rs}
        self.dispatch_time = 0.0
        self.finish = 0.0
        # per-row hazard times: last write completion, last read completion
        self.sp_w = np.zeros(cfg.sp_rows)
        self.sp_r = np.zeros(cfg.sp_rows)
        self.acc_w = np.zeros(cfg.acc_rows)
        self.acc_r = np.zeros(cfg.acc_rows)
        self.pending_weights = False
        self.last_compute_start = 0.0
        self.pool = None            # config_st pooling fields while pooling is on
        self.stats = dict(dram_bytes_in=0, dram_bytes_out=0, macs=0, scratchpad_reads=0, scratchpad_writes=0,
                          accumulator_reads=0, accumulator_writes=0, commands=0, registers=0)

    # ---- attach ------------------------------------------------------------------
    def attach(self, model):
        model.observers.append(self.observe)
        model.counter_source = self.counter_value

    # ---- row ranges -------------------------------------------------------------
    def _range(self, addr, rows, blocks=1, block_stride=None):
        if is_garbage(addr) or rows <= 0:
            return None
        acc = bool(addr & ACC_BIT)
        row = addr & 0x3FFFFFF
        span = (blocks - 1) * (block_stride if block_stride is not None else self.cfg.dim) + rows
        limit = self.cfg.acc_rows if acc else self.cfg.sp_rows
        return acc, row % limit, min(limit, row % limit + span)

    def _ready(self, reads, writes):
        t = 0.0
        for r in reads:
            if r:
                acc, a, b = r
                t = max(t, float((self.acc_w if acc else self.sp_w)[a:b].max(initial=0.0)))
        for r in writes:
            if r:
                acc, a, b = r
                t = max(t, float((self.acc_w if acc else self.sp_w)[a:b].max(initial=0.0)),
                        float((self.acc_r if acc else self.sp_r)[a:b].max(initial=0.0)))
        return t

    def _mark(self, reads, writes, end):
        for r in reads:
            if r:
                acc, a, b = r
                arr = self.acc_r if acc else self.sp_r
                np.maximum(arr[a:b], end, out=arr[a:b])
        for r in writes:
            if r:
                acc, a, b = r
                (self.acc_w if acc else self.sp_w)[a:b] = end

    # ---- the stream ----------------------------------------------------------------
    def observe(self, name, f, pc=None):
        self.stats["commands"] += 1
        unit = UNIT_OF.get(name)
        if unit is None:        # flush, clock gating, counters: handled by the controller at once
            return
        q = self.outstanding[unit]
        dispatch = self.dispatch_time + 1
        while q and q[0] <= dispatch:
            q.popleft()
        if len(q) >= self.rs[unit]:
            dispatch = max(dispatch, q.popleft())
        self.dispatch_time = dispatch
        start, occupancy, latency, reads, writes = self._cost(name, f, unit, dispatch)
        start = max(start, self.unit_free[unit], self._ready(reads, writes))
        end = start + latency
        self.unit_free[unit] = start + occupancy
        self.busy[unit] += occupancy
        self._mark(reads, writes, end)
        q.append(end)
        self.finish = max(self.finish, end)

    def fence(self):
        self.dispatch_time = max(self.dispatch_time, self.finish)

    def _dma(self, rows, bytes_per_row):
        """Occupancy of a DMA command: requests limited by bus beats and in-flight slots."""
        beats = max(1, math.ceil(bytes_per_row / (self.cfg.dma_bus_bits // 8)))
        per_row = beats * self.k.beat_cycles
        inflight_bound = math.ceil(rows / self.cfg.max_in_flight) * self.k.dram_latency
        return self.k.dma_cmd_overhead + max(rows * per_row, inflight_bound)

    def _cost(self, name, f, unit, dispatch):
        """(earliest start, occupancy, total latency, read ranges, write ranges)."""
        cfg, k = self.cfg, self.k
        d = cfg.dim
        if name.startswith("config"):
            if name == "config_st":
                self.pool = f if f["pool_stride"] else None
            return dispatch, 1.0, 1.0, [], []
        if name.startswith("mvin"):
            addr, rows, cols = f["local_addr"], f["rows"], f["cols"]
            acc = bool(addr & ACC_BIT)
            esize = cfg.acc_bytes if acc else cfg.input_bytes
            blocks = max(1, -(-cols // d))
            occ = self._dma(rows, cols * esize)
            if f["dram_addr"]:
                self.stats["dram_bytes_in"] += rows * cols * esize
            self.stats["accumulator_writes" if acc else "scratchpad_writes"] += rows * cols
            w = self._range(addr, rows, blocks, d)
            return dispatch, occ, occ + k.dram_latency, [], [w]
        if name == "mvout":
            addr, rows, cols = f["local_addr"], f["rows"], f["cols"]
            acc = bool(addr & ACC_BIT)
            out_bytes = cfg.acc_bytes if (acc and addr & READ_FULL_BIT) else cfg.input_bytes
            blocks = max(1, -(-cols // d))
            rows_read, pool_cycles = rows, 0
            if self.pool:   # pooled: the orows×ocols image is read (one row a cycle), porows×pocols rows written
                rows_read = self.pool["orows"] * self.pool["ocols"]
                rows = self.pool["porows"] * self.pool["pocols"]
                pool_cycles = rows_read
            occ = self._dma(rows, cols * out_bytes) + pool_cycles + (k.acc_scale_latency if acc else 0)
            self.stats["dram_bytes_out"] += rows * cols * out_bytes
            self.stats["accumulator_reads" if acc else "scratchpad_reads"] += rows_read * cols
            r = self._range(addr, rows_read, blocks, d)
            return dispatch, occ, occ + k.dram_latency, [r], []
        if name == "preload":
            self.preload = f
            self.pending_weights = not is_garbage(f["bd_addr"])
            return dispatch, 0.0, 0.0, [self._range(f["bd_addr"], f["bd_rows"])], []
        if name in ("compute_preloaded", "compute_accumulated"):
            pre = getattr(self, "preload", None) or {"c_addr": 0xFFFFFFFF, "c_rows": 0, "c_cols": 0}
            rows = max(f["a_rows"], 4)
            occ = rows + k.compute_overhead
            start = dispatch
            if name == "compute_preloaded" and self.pending_weights:
                # weights stream in for DIM cycles, overlapping the previous compute
                start = max(start, self.last_compute_start + d)
                self.stats["registers"] += pre.get("bd_rows", d) * pre.get("bd_cols", d)
                self.stats["scratchpad_reads"] += pre.get("bd_rows", d) * pre.get("bd_cols", d)
            self.pending_weights = False
            self.stats["macs"] += f["a_rows"] * f["a_cols"] * (pre.get("c_cols", d) or d)
            self.stats["scratchpad_reads"] += f["a_rows"] * f["a_cols"]
            c = self._range(pre["c_addr"], pre["c_rows"])
            if c and c[0]:
                self.stats["accumulator_writes"] += pre["c_rows"] * pre["c_cols"]
                self.stats["accumulator_reads"] += pre["c_rows"] * pre["c_cols"]
            reads = [self._range(f["a_addr"], f["a_rows"]), self._range(f["bd_addr"], f["bd_rows"])]
            total = occ + k.array_depth_factor * d
            self.last_compute_start = start
            return start, occ, total, reads, [c]
        return dispatch, 0.0, 0.0, [], []

    # ---- results ------------------------------------------------------------------
    @property
    def cycles(self) -> float:
        return self.finish

    def report(self) -> dict:
        cfg = self.cfg
        cycles = max(self.finish, 1.0)
        s = self.stats
        e_pj = (s["macs"] * energy.MAC_PJ + s["registers"] * energy.REGISTER_PJ
                + (s["scratchpad_reads"] + s["scratchpad_writes"]) * energy.scratchpad_pj(cfg.sp_kb)
                + (s["accumulator_reads"] + s["accumulator_writes"]) * energy.accumulator_pj(cfg.acc_kb, cfg.dim)
                + (s["dram_bytes_in"] + s["dram_bytes_out"]) * energy.DRAM_PJ)
        return {"cycles": self.finish, "load_busy": self.busy["ld"], "execute_busy": self.busy["ex"],
                "store_busy": self.busy["st"], **s,
                "utilization": s["macs"] / (cycles * cfg.dim * cfg.dim), "energy_uj": e_pj * 1e-6}

    def counter_value(self, event_id: int) -> int:
        name = EVENTS.get(event_id)
        if name is None:
            return 0
        return int(self.report()[name])
