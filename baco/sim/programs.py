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

import collections
import itertools
import math
from dataclasses import dataclass

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import ACC_BIT, ACCUMULATE_BIT, GARBAGE_ADDR, LOOP_WS_CONFIGS, command_fields
from baco.problem.dims import DIMS, DRAM_LEVEL, RELEVANT
from baco.problem.mapping_text import parse_loops


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
            w_key = tuple(inner.get(x, 0) for x in DIMS if x in RELEVANT["W"])
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


# ---------------------------------------------------------------------------------------------
# The programs DOSA's authors ran on FireSim for each (layer, mapping) row of their RTL data
# (ucb-bar/gemmini-rocc-tests gemmini-data-collection: layers/extract_data_csv.py turns the
# mapping string into tile sizes and a loop permutation; templates/conv_tilings.c and
# matmul_tilings.c call tiled_conv_dosa / tiled_matmul of that branch's include/gemmini.h,
# between two rdcycle reads and a fence). Modelled here from those sources; the code is our own:
# - tile sizes are the products of the L0..L2 factors (spatial ones included), each factor
#   counted once. The published extract_data_csv.py multiplies the L0 P and Q factors in a
#   second time, but the RTL rows were not run that way: mappings that differ only in whether
#   a P factor sits at L0 or at L1 measure 1.5-2.6x apart (3x3 C128 27x27: "L1 R3 Q27 P9 C64X
#   - L0 N1" 3.8e5 cycles, "L1 R3 Q27 C64X - L0 P3" 1.0e6) where the double count makes them
#   one program, and it left the 6x6/2 first-layer rows with 1- or 2-wide kernel tiles 13-44x
#   slower than their programs. Counted once, those rows' last column tile is one output wide,
#   its padding exceeds its input and wraps LoopConv's column count (as in the rows of that
#   layer that already matched), and they match;
# - a layer with Q = 1 and a 1x1 kernel runs as tiled_matmul(I=P, J=K, K=C) whose tile
#   arguments are those sizes taken as DIM-blocks (the template's >>4 is commented out),
#   clamped to the matrix; every tile is one LOOP_WS;
# - any other layer runs as a square conv: in_dim = P*stride, padding = R/2, out_dim from
#   those (Q is ignored), no bias; every tile is one LOOP_CONV_WS, the output stored when the
#   tile completes its reduction, nothing checked (tiles may exceed the memories, and padding
#   larger than a tile's input wraps LoopConv's 16-bit row count);
# - the DRAM-level loop order is the mapping's L3 order (inner first, missing dims in
#   CRSKPQN order); the tiles are issued back to back without fences.
DOSA_DEFAULT_PERM = "CRSKPQN"


@dataclass(frozen=True)
class DosaProgram:
    """One RTL row's program: the layer as the program sizes it, tile sizes, loop order."""
    matmul: bool
    layer: dict            # R S P Q C K N and stride as in the row
    tile: dict             # per-dim tile sizes (N Q P K S R C), spatial factors included
    perm: str              # loop order, innermost dim first


def dosa_program(layer: dict, mapping: str) -> DosaProgram:
    """The tiles and loop order DOSA's data collection derived from a mapping string
    ("L3[WIO] ... - L2[WI] ... - L1[O] ... - L0[W] ...", outer loops first)."""
    loops = parse_loops(mapping)
    factors, spatial = {}, {}
    for level in range(DRAM_LEVEL):
        for d, f, x in loops[level]:
            if x:
                spatial[d] = f
            else:
                factors[d] = factors.get(d, 1) * f
    tile = {d: factors.get(d, 1) * spatial.get(d, 1) for d in "NPQKRSC"}
    perm = "".join(reversed([d for d, _, _ in loops[DRAM_LEVEL]]))
    perm += "".join(d for d in DOSA_DEFAULT_PERM if d not in perm)
    matmul = layer.get("Q", 1) == 1 and layer.get("R", 1) == 1 and layer.get("S", 1) == 1
    return DosaProgram(matmul, dict(layer), tile, perm)


def _perm_loops(perm: str, limits: dict, steps: dict):
    """Index dicts of the library's 7-deep loop nest: outermost = last letter of perm."""
    order = list(reversed(perm))
    ranges = [range(0, limits[d], max(1, steps[d])) for d in order]
    for vals in itertools.product(*ranges):
        yield dict(zip(order, vals))


class _ConvShape:
    """The square convolution tiled_conv_dosa runs for a program, and its tile loop nest."""

    def __init__(self, prog: DosaProgram):
        L, t = prog.layer, prog.tile
        self.kdim, self.stride = L["R"], L.get("Wstride", 1)
        self.pad = self.kdim // 2
        self.in_dim = L["P"] * self.stride
        self.out_dim = (self.in_dim + 2 * self.pad - self.kdim) // self.stride + 1
        self.N, self.C, self.K = L.get("N", 1), L["C"], L["K"]
        self.limits = dict(N=self.N, Q=self.out_dim, P=self.out_dim, K=self.K, S=self.kdim, R=self.kdim, C=self.C)
        self.steps = dict(N=t["N"], Q=t["Q"], P=t["P"], K=t["K"], S=t["S"], R=t["R"], C=t["C"])
        self.perm = prog.perm
        self._wrapping = {o: self._wrapping_pairs(o, k) for o, k in (("Q", "S"), ("P", "R"))}

    def loops(self):
        return _perm_loops(self.perm, self.limits, self.steps)

    def _wrapping_pairs(self, o, k):
        """(output, kernel) tile offsets along one axis whose padding exceeds the tile's input."""
        s, st, pairs = self.steps, self.stride, set()
        for out in range(0, self.out_dim, max(1, s[o])):
            for ker in range(0, self.kdim, max(1, s[k])):
                outs, ks = min(s[o], self.out_dim - out), min(s[k], self.kdim - ker)
                first, span = out * st + ker - self.pad, outs * st + ks - 1
                if span - max(0, -first) - max(0, first + span - self.in_dim) < 0:
                    pairs.add((out, ker))
        return pairs

    def wraps(self, v) -> bool:
        """Does this tile's padding exceed its input rows or columns (LoopConv wraps)?"""
        return (v["Q"], v["S"]) in self._wrapping["Q"] or (v["P"], v["R"]) in self._wrapping["P"]

    def tile(self, v, dim: int):
        """(LOOP_CONV_WS config fields, flags) of the tile at loop indices v."""
        s, st, kdim, in_dim, out_dim = self.steps, self.stride, self.kdim, self.in_dim, self.out_dim
        b, porow, pocol, poch, krow, kcol, kch = (v[d] for d in "NQPKSRC")
        porows, pocols = min(s["Q"], out_dim - porow), min(s["P"], out_dim - pocol)
        krows, kcols, kchs = min(s["S"], kdim - krow), min(s["R"], kdim - kcol), min(s["C"], self.C - kch)
        irow, icol = porow * st + krow - self.pad, pocol * st + kcol - self.pad
        irows, icols = porows * st + krows - 1, pocols * st + kcols - 1
        done = krow + krows >= kdim and kcol + kcols >= kdim and kch + kchs >= self.C
        first = krow == 0 and kcol == 0 and kch == 0
        fields = dict(batch_size=self.N, in_row_dim=in_dim, in_col_dim=in_dim, in_channels=self.C,
                      out_channels=self.K, out_row_dim=out_dim, out_col_dim=out_dim, pool_out_row_dim=out_dim,
                      pool_out_col_dim=out_dim, stride=st, padding=self.pad, kernel_dim=kdim, kernel_dilation=1,
                      pool_size=1, pool_stride=1, pool_padding=0, batches=min(s["N"], self.N - b),
                      porows=porows, pocols=pocols, pochs=min(s["K"], self.K - poch), krows=krows, kcols=kcols,
                      kchs=kchs, lpad=max(0, -icol), rpad=max(0, icol + icols - in_dim), upad=max(0, -irow),
                      dpad=max(0, irow + irows - in_dim), plpad=0, prpad=0, pupad=0, pdpad=0,
                      orows=porows, ocols=pocols, in_stride=self.C, weight_stride=self.K, out_stride=self.K,
                      weights_addr=1, input_addr=1, bias_addr=1 if first else 0, output_addr=1 if done else 0)
        # has_first_layer_optimizations: DIM/kchs kernel columns per array row
        pixels = 1 if kchs > dim else min(dim // kchs, kcols)
        flags = dict(no_bias=1, wrot180=0, trans_output_1203=0, trans_weight_1203=0, trans_weight_0132=0,
                     trans_input_3120=0, dw=0, max_pixels_per_row=pixels, a_spad_id=0, b_spad_id=0, no_pool=1,
                     downsample=0, input_dilated=0, activation=0)
        return fields, flags


def dosa_conv_tiles(prog: DosaProgram, dim: int):
    """(LOOP_CONV_WS config fields, flags) per tile, as tiled_conv_dosa computes them."""
    shape = _ConvShape(prog)
    for v in shape.loops():
        yield shape.tile(v, dim)


def dosa_matmul_tiles(prog: DosaProgram, dim: int):
    """(LOOP_WS bounds/addresses/strides fields, flags) per tile of tiled_matmul_outer."""
    L, t = prog.layer, prog.tile
    dims = dict(I=L["P"], J=L["K"], K=L["C"])
    blocks = {x: -(-n // dim) for x, n in dims.items()}
    tiles = dict(I=t["P"], J=t["K"], K=t["C"])             # element counts, taken as DIM-blocks
    count = {x: -(-blocks[x] // tiles[x]) for x in tiles}
    last = {x: blocks[x] % tiles[x] or tiles[x] for x in tiles}
    pads = {x: blocks[x] * dim - dims[x] for x in dims}
    limits = dict(N=1, Q=1, P=count["I"], K=count["J"], S=1, R=1, C=count["K"])
    for v in _perm_loops(prog.perm, limits, {d: 1 for d in limits}):
        i0, j0, k0 = v["P"], v["K"], v["C"]
        size = {x: tiles[x] if idx < count[x] - 1 else last[x] for x, idx in (("I", i0), ("J", j0), ("K", k0))}
        pad = {x: pads[x] if idx == count[x] - 1 else 0 for x, idx in (("I", i0), ("J", j0), ("K", k0))}
        fields = dict(max_i=size["I"], max_j=size["J"], max_k=size["K"], pad_i=pad["I"], pad_j=pad["J"],
                      pad_k=pad["K"], a_addr=1, b_addr=1, d_addr=0, c_addr=1 if k0 == count["K"] - 1 else 0,
                      a_stride=dims["K"], b_stride=dims["J"], d_stride=0, c_stride=dims["J"])
        flags = command_fields("loop_ws", ex_accumulate=int(k0 != 0))     # funct 8 as decoded, the rest 0
        yield fields, flags


PROGRAM_FEATURES = ("matmul", "tiles", "commands", "input_rows", "input_row_bytes", "weight_rows", "array_rows",
                    "output_rows", "sp_overflow", "acc_overflow", "wrapped_tiles")


def dosa_program_features(prog: DosaProgram, cfg: GemminiConfig) -> dict:
    """What an RTL row's program does, counted from its tiles without timing it (the learned
    residual's program features): matmul (1) or conv (0), LOOP_CONV_WS / LOOP_WS calls, commands they unroll to
    (mvin/preload/compute/mvout, approximately), DRAM rows moved in (input and weight rows)
    and out, rows streamed through the array, the mean bytes per input DMA row (small rows
    are one request each), how far the largest tile overflows the scratchpad and accumulator
    (addresses wrap: 1 = fits), and tiles whose padding wraps LoopConv's row count."""
    d = cfg.dim
    n = dict.fromkeys(PROGRAM_FEATURES, 0.0)
    n["matmul"] = float(prog.matmul)
    sp_need = acc_need = 0
    if prog.matmul:
        for f, _ in dosa_matmul_tiles(prog, d):
            i, j, k = f["max_i"], f["max_j"], f["max_k"]
            n["tiles"] += 1
            n["input_rows"] += i * k * d
            n["input_row_bytes"] += i * k * d * d
            n["weight_rows"] += k * j * d
            n["array_rows"] += i * j * k * d
            n["output_rows"] += i * j * d if f["c_addr"] else 0
            n["commands"] += i * k + k * j + 2 * i * j * k + (i * j if f["c_addr"] else 0)
            sp_need, acc_need = max(sp_need, (i * k + k * j) * d), max(acc_need, i * j * d)
    else:       # tiles with the same sizes cost the same: sum over distinct sizes x their counts
        shape = _ConvShape(prog)
        L, s = shape.limits, shape.steps
        sizes = {x: collections.Counter((min(s[x], L[x] - o), o + s[x] >= L[x]) for o in range(0, L[x], max(1, s[x])))
                 for x in DIMS}
        for combo in itertools.product(*(sizes[x].items() for x in DIMS)):
            (R, _), (S, _), (P, _), (Q, _), (C, _), (K, _), (N, _) = (size for size, _ in combo)
            count = math.prod(c for _, c in combo)
            last = all(is_last for (_, is_last), _ in (combo[0], combo[1], combo[4]))
            pixels = N * (Q * shape.stride + S - 1) * (P * shape.stride + R - 1)   # porows = Q, krows = S
            k_blocks, o_blocks, out = -(-C // d), -(-K // d), N * P * Q
            mppr = 1 if C > d else min(d // C, R)
            passes = o_blocks * S * -(-R // mppr) * k_blocks
            n["tiles"] += count
            n["input_rows"] += count * pixels * k_blocks
            n["input_row_bytes"] += count * pixels * C
            n["weight_rows"] += count * R * S * C * o_blocks
            n["array_rows"] += count * passes * out
            n["output_rows"] += count * out * o_blocks * last
            n["commands"] += count * (pixels * k_blocks / d + R * S * k_blocks * o_blocks + 2 * passes * -(-out // d)
                                      + out * o_blocks / d * last)
            sp_need = max(sp_need, pixels * k_blocks + R * S * C * o_blocks)
            acc_need = max(acc_need, out * o_blocks)
        axis = {x: sum(sizes[x].values()) for x in DIMS}
        wrap_q, wrap_p = len(shape._wrapping["Q"]), len(shape._wrapping["P"])
        n["wrapped_tiles"] = axis["N"] * axis["K"] * axis["C"] * (wrap_q * axis["P"] * axis["R"]
                                                                  + wrap_p * axis["Q"] * axis["S"] - wrap_q * wrap_p)
    n["input_row_bytes"] /= max(1.0, n["input_rows"])
    n["sp_overflow"] = max(1.0, sp_need / cfg.sp_rows)
    n["acc_overflow"] = max(1.0, acc_need / cfg.acc_rows)
    return n


def _wrapped_conv_tile_cycles(cfg, st, flags, c, timing_factory, probe_rows=16):
    """Cycles of a LOOP_CONV_WS whose unpadded input row count wrapped (~65k rows): the
    loader's work grows linearly with the row count, so the tile is timed in isolation at
    two small row counts and extended to the wrapped one."""
    import copy
    from baco.sim.loops import loop_conv_program

    def cycles(rows):
        tm = timing_factory()
        tm.observe("loop_conv_ws", loop_conv_program(cfg, copy.deepcopy(st), flags, dict(c, irows_unpadded=rows)))
        tm.fence()
        return tm.finish

    one, two = cycles(probe_rows), cycles(2 * probe_rows)
    return one + (two - one) / probe_rows * (c["irows_unpadded"] - probe_rows)


def time_dosa_program(prog: DosaProgram, cfg: GemminiConfig, timing_factory,
                      command_budget: int = 20000) -> tuple[float, bool]:
    """Cycles of an RTL row's program (dosa_program) on a fresh cycle model: the library's
    loop issues each tile's LOOP_CONV_WS / LOOP_WS after `library_tile_instructions` of CPU
    work (and not before its loop unit has a free slot); a fence ends the program. Programs
    longer than `command_budget` commands are simulated for their first tiles and
    extrapolated at the rate of the last ones. Returns (cycles, extrapolated)."""
    from baco.gemmini.isa import COMMANDS
    from baco.sim.loops import LoopConvState, LoopWsState, conv_params, loop_conv_program, loop_ws_program
    tm = timing_factory()
    # DOSA's tiles may exceed the memories (their rows wrap, as the RTL's address registers do): the
    # data is garbage and A, B and C may share rows; only the timing is measured
    tm.check_races = False
    loop = "loop_ws" if prog.matmul else "loop_conv_ws"
    cpu_per_tile = tm.k.library_tile_instructions * tm.k.cpu_cycles_per_instruction
    if prog.matmul:
        tiles = list(dosa_matmul_tiles(prog, cfg.dim))
        n_tiles, st = len(tiles), LoopWsState()
        loops = iter(tiles)
    else:
        shape = _ConvShape(prog)
        n_tiles = math.prod(-(-shape.limits[d] // max(1, shape.steps[d])) for d in shape.limits)
        loops, st = shape.loops(), LoopConvState()
    wrapped_cache = {}

    def wrapped_cycles(v):
        """Cycles of a tile whose input rows wrap, or None for an ordinary tile."""
        if prog.matmul or not shape.wraps(v):
            return None
        fields, flags = shape.tile(v, cfg.dim)
        key = tuple(sorted(fields.items()))
        if key not in wrapped_cache:
            probe = LoopConvState()
            probe.latch(fields)
            c = conv_params(cfg, probe, flags, rtl_wrap=True)
            wrapped_cache[key] = _wrapped_conv_tile_cycles(cfg, probe, flags, c, timing_factory)
        return wrapped_cache[key]

    steps, done, last_end = [], 0, 0.0      # cycles each ordinary tile added
    for n, v in enumerate(loops):
        tm.issue_time = max(tm.issue_time + cpu_per_tile, tm.accept_time(COMMANDS[loop].funct))
        extra = wrapped_cycles(v)
        if extra is not None:           # serialised: the loader streams for the whole tile
            tm.fence()
            tm.finish = tm.dispatch_time = max(tm.finish, tm.issue_time) + extra
            last_end = tm.finish
            continue
        if prog.matmul:
            fields, flags = v
            for name in LOOP_WS_CONFIGS:
                st.latch(name, fields)
            program = loop_ws_program(cfg, st, flags, rtl_wrap=True)
        else:
            fields, flags = shape.tile(v, cfg.dim)
            st.latch(fields)
            program = loop_conv_program(cfg, st, flags, conv_params(cfg, st, flags, rtl_wrap=True))
        tm.observe(loop, program)
        done += len(program.commands)
        end = max(tm.finish, tm.dispatch_time)
        steps.append(end - last_end)
        last_end = end
        if done >= command_budget and len(steps) >= 3 and n + 1 < n_tiles:
            recent = steps[len(steps) // 2:]
            rate = sum(recent) / len(recent)
            extra, ordinary = 0.0, 0
            for v_ in loops:
                w = wrapped_cycles(v_)
                extra, ordinary = (extra + w, ordinary) if w is not None else (extra, ordinary + 1)
            tm.fence()      # the loops the unit still holds, then the rest at the recent rate
            return tm.finish + rate * ordinary + extra, True
    tm.fence()
    return tm.finish, False


def rtl_row_cycles(layer: dict, mapping: str, cfg: GemminiConfig | None = None, constants=None,
                   command_budget: int = 3000) -> float:
    """The cycle model's time for one RTL row (layer dims R S P Q C K N, Wstride; DOSA's
    mapping string): its program (dosa_program) on a fresh TimingModel with `constants`
    (default: the fitted DEFAULT_CONSTANTS) on `cfg` (default: Gemmini's default config)."""
    from baco.sim.timing import DEFAULT_CONSTANTS, TimingModel
    cfg = cfg or GemminiConfig()
    constants = constants or DEFAULT_CONSTANTS
    cycles, _ = time_dosa_program(dosa_program(layer, mapping), cfg, lambda: TimingModel(cfg, constants),
                                  command_budget=command_budget)
    return cycles
