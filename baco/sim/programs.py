"""Gemmini programs described by mappings: a weight-stationary tiled loop
nest of mvin / preload / compute / mvout, as the commands stream into the
cycle model (name, fields), without data.

A mapping is given as plain factors: temporal[level][dim] for levels 0..3
(registers, accumulator, scratchpad, DRAM), the spatial C (array rows) and K
(array columns) factors, and each level's loop order (outer first). The DRAM
loops move scratchpad tiles (inputs and weights when they change) and write
finished accumulator tiles back; the on-chip loops preload a C×K weight block
whenever it changes and stream the rows of the register-level (P, Q, N)
loops through the array. Convolution mappings (R·S > 1) are instead timed as
the C library runs them: one fenced LOOP_CONV_WS per DRAM-level tile, expanded
into LoopConv's command stream (conv_program_iterations)."""
from __future__ import annotations

import itertools
import math

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import ACC_BIT, ACCUMULATE_BIT, GARBAGE_ADDR

DIMS = ("R", "S", "P", "Q", "C", "K", "N")
RELEVANT = {"W": set("RSCK"), "I": set("NCPQRS"), "O": set("NKPQ")}


def _nest(temporal_level: dict, order) -> list[tuple[str, int]]:
    return [(d, temporal_level.get(d, 1)) for d in order if temporal_level.get(d, 1) > 1]


def _iterate(loops):
    """Index dicts of a loop nest (outer first)."""
    names = [d for d, _ in loops]
    for idx in itertools.product(*[range(n) for _, n in loops]):
        yield dict(zip(names, idx))


def ws_program_iterations(layer: dict, temporal, spatial_c: int, spatial_k: int, order, cfg: GemminiConfig,
                          strides=(1, 1)):
    """Yield, per DRAM-level iteration, the list of (name, fields) commands it issues."""
    d = cfg.dim
    l0, l1, l2, l3 = (temporal[i] for i in range(4))
    tile = {x: l0.get(x, 1) * l1.get(x, 1) * l2.get(x, 1) * (spatial_c if x == "C" else 1)
            * (spatial_k if x == "K" else 1) for x in DIMS}
    in_h = (tile["P"] - 1) * strides[0] + tile["R"]
    in_w = (tile["Q"] - 1) * strides[1] + tile["S"]
    in_pixels = tile["N"] * in_h * in_w
    w_rows = tile["R"] * tile["S"] * tile["C"]
    max_cols = cfg.max_block_len * d
    rows_per_op = l0.get("P", 1) * l0.get("Q", 1) * l0.get("N", 1)
    out_pixels = tile["N"] * tile["P"] * tile["Q"]
    half = cfg.sp_rows // 2
    in_base, w_base = 0, half
    reduction_outer = [x for x, _ in _nest(l3, order[3]) if x in "CRS"]
    onchip = _nest(l2, order[2]) + _nest(l1, order[1])
    outer = _nest(l3, order[3])
    prev = None
    for it in _iterate(outer):
        cmds = []
        first_red = all(it.get(x, 0) == 0 for x in reduction_outer)
        last_red = all(it.get(x, 0) == dict(outer)[x] - 1 for x in reduction_outer)
        changed = {x for x in it if prev is None or it[x] != prev[x]}
        if prev is None or changed & RELEVANT["I"]:
            for r0 in range(0, in_pixels, d):
                for c0 in range(0, tile["C"], max_cols):
                    cmds.append(("mvin", dict(dram_addr=1, local_addr=(in_base + r0 + c0 // d * in_pixels) % half,
                                              rows=min(d, in_pixels - r0), cols=min(max_cols, tile["C"] - c0))))
        if prev is None or changed & RELEVANT["W"]:
            for r0 in range(0, w_rows, d):
                for c0 in range(0, tile["K"], max_cols):
                    cmds.append(("mvin2", dict(dram_addr=1, local_addr=w_base + (r0 + c0 // d * w_rows) % half,
                                               rows=min(d, w_rows - r0), cols=min(max_cols, tile["K"] - c0))))
        prev_w = None
        acc_rows = out_pixels * math.ceil(tile["K"] / d)
        for inner in _iterate(onchip):
            w_key = tuple(inner.get(x, 0) for x in "RSCK")
            a_row = in_base + (sum(inner.values()) * rows_per_op) % max(1, in_pixels)
            out_row = (inner.get("P", 0) * 7 + inner.get("Q", 0) * 3 + inner.get("K", 0) * out_pixels) % max(1, acc_rows)
            for sub in range(0, rows_per_op, d):
                rows = min(d, rows_per_op - sub)
                new_w = w_key != prev_w
                accumulate = not (first_red and all(inner.get(x, 0) == 0 for x in "CRS"))
                c_addr = ACC_BIT | (ACCUMULATE_BIT if accumulate else 0) | ((out_row + sub) % cfg.acc_rows)
                cmds.append(("preload", dict(bd_addr=(w_base + hash(w_key) % half) if new_w else GARBAGE_ADDR,
                                             bd_rows=spatial_c, bd_cols=spatial_k,
                                             c_addr=c_addr, c_rows=rows, c_cols=spatial_k)))
                cmds.append(("compute_preloaded" if new_w else "compute_accumulated",
                             dict(a_addr=a_row % half, a_rows=rows, a_cols=spatial_c,
                                  bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)))
                prev_w = w_key
        if last_red:
            for r0 in range(0, out_pixels, d):
                for c0 in range(0, tile["K"], d):
                    cmds.append(("mvout", dict(dram_addr=1, local_addr=ACC_BIT | ((r0 + c0 // d * out_pixels)
                                                                                  % cfg.acc_rows),
                                               rows=min(d, out_pixels - r0), cols=min(d, tile["K"] - c0))))
        prev = it
        yield cmds


def iterations(temporal, order) -> int:
    return math.prod(f for _, f in _nest(temporal[3], order[3]))


def simulate_mapping(layer: dict, temporal, spatial_c, spatial_k, order, cfg: GemminiConfig, timing_factory,
                     strides=(1, 1), command_budget: int = 20000) -> tuple[float, bool]:
    """Cycles of the mapping's program on a fresh cycle model. Programs longer
    than `command_budget` are simulated for their first DRAM-level iterations
    and extrapolated at the steady-state rate of the last ones simulated.
    Returns (cycles, extrapolated)."""
    tm = timing_factory()
    total = iterations(temporal, order)
    ends, done = [], 0
    conv = layer.get("R", 1) * layer.get("S", 1) > 1
    overhead = 0.0 if conv else tm.k.gemm_tile_overhead
    program = conv_program_iterations if conv else ws_program_iterations
    for cmds in program(layer, temporal, spatial_c, spatial_k, order, cfg, strides):
        for name, f in cmds:
            tm.observe(name, f)
        if conv:        # each tile is one fenced library call
            tm.fence()
        tm.dispatch_time += overhead
        tm.finish = max(tm.finish, tm.dispatch_time)
        done += len(cmds)
        ends.append(tm.finish)
        if done >= command_budget and len(ends) >= 3:
            break
    if len(ends) == total:
        return tm.finish, False
    k = len(ends)
    rate = (ends[-1] - ends[k // 2]) / (k - 1 - k // 2) if k >= 3 else ends[-1] / k
    return ends[-1] + rate * (total - k), True


def conv_program_iterations(layer: dict, temporal, spatial_c: int, spatial_k: int, order, cfg: GemminiConfig,
                            strides=(1, 1)):
    """Per DRAM-level iteration of a convolution mapping, the (name, fields) commands of the
    LOOP_CONV_WS tile the C library would issue for it, as LoopConv expands it
    (baco.sim.loops.loop_conv_ws_commands): the bias only with the first reduction tile, the
    output only with the last, inputs/weights loaded only when their tile changes (spad ids
    keep them in place). Tiles that LoopConv cannot hold fall back to ws_program_iterations."""
    from baco.gemmini.isa import GemminiFault, decode
    from baco.sim.loops import LoopConvState, loop_conv_ws_commands
    l0, l1, l2 = (temporal[i] for i in range(3))
    l3 = temporal[3]
    tile = {x: l0.get(x, 1) * l1.get(x, 1) * l2.get(x, 1) * (spatial_c if x == "C" else 1)
            * (spatial_k if x == "K" else 1) for x in DIMS}
    stride = strides[0]
    reduction_outer = [x for x, _ in _nest(l3, order[3]) if x in "CRS"]
    outer = _nest(l3, order[3])
    fallback = ws_program_iterations(layer, temporal, spatial_c, spatial_k, order, cfg, strides)
    st = LoopConvState()
    st.latch(dict(batch_size=layer.get("N", 1), in_row_dim=1, in_col_dim=1, in_channels=layer.get("C", 1),
                  out_channels=layer.get("K", 1), out_row_dim=1, out_col_dim=1, stride=stride,
                  kernel_dim=max(layer.get("R", 1), layer.get("S", 1)), kernel_dilation=1,
                  batches=tile["N"], porows=tile["P"], pocols=tile["Q"], pochs=tile["K"], krows=tile["R"],
                  kcols=tile["S"], kchs=tile["C"], orows=tile["P"], ocols=tile["Q"], in_stride=layer.get("C", 1),
                  weight_stride=layer.get("K", 1), out_stride=layer.get("K", 1)))
    prev = None
    for it in _iterate(outer):
        fb = next(fallback)
        first_red = all(it.get(x, 0) == 0 for x in reduction_outer)
        last_red = all(it.get(x, 0) == dict(outer)[x] - 1 for x in reduction_outer)
        changed = {x for x in it if prev is None or it[x] != prev[x]}
        prev = it
        st.latch(dict(input_addr=1 if (changed & RELEVANT["I"] or len(changed) == len(it)) else 0,
                      weights_addr=1 if (changed & RELEVANT["W"] or len(changed) == len(it)) else 0,
                      bias_addr=1 if first_red else 0, output_addr=1 if last_red else 0))
        flags = dict(no_bias=1, wrot180=0, trans_output_1203=0, trans_weight_1203=0, trans_weight_0132=0,
                     trans_input_3120=0, dw=0, max_pixels_per_row=1, a_spad_id=1, b_spad_id=1, no_pool=1,
                     downsample=0, input_dilated=0, activation=0)
        try:
            cmds = [decode(funct, rs1, rs2) for funct, rs1, rs2 in loop_conv_ws_commands(cfg, st, flags)]
        except GemminiFault:
            yield fb
            continue
        yield [(c.name, f) for c, f in cmds]
