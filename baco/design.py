"""The loop closed: a tuned design (a `baco tune` output folder) compiled, run and timed.

For every layer the compiler runs with a kernel (GEMM-shaped layers: baco/kernels/matmul.py;
convolutions: baco/kernels/conv.py, as the unpadded Timeloop problem R,S,P,Q,C,K,N with its
strides and dilations), the kernel is compiled for the tuned GemminiConfig with the layer's tuned schedule, run on the
functional model on random int8 data and compared bit for bit with Gemmini's arithmetic
(baco.gemmini.arith.reference_matmul), and timed by the cycle model on the commands it issued.
The same layers are timed on Gemmini-default (16×16, 256 KB scratchpad, 64 KB accumulator)
running the C library's tiling (baco.sim.clib: tiled_matmul_auto, tiled_conv_auto). Per layer: predicted (the model the search
used: for kernel layers the compiled program with the schedule the search chose,
baco.tuner.kernel_model) beside simulated cycles and energy; per network: the count-weighted
EDP of both designs, and the gain over the default as predicted and as simulated.

    baco run --design DIR [--target sim|iss]
    baco tune ... --out DIR --verify       (tune, then the same check)

A convolution runs with the schedule the search costed (result.json's schedule: the tuned
mapping's on-chip tile as output columns, output channels, input channels per step when that fits
the compiler's capacity rule, else the conv kernel's default schedule, the report says which;
baco.tuner.mapping.conv_schedule, one function for both). Layers without a kernel (non-square
filters or strides the C library cannot run) are listed with their prediction only; the network
EDPs compared are then those of the simulated layers, predicted and simulated alike.

End to end (the default; `--gemmini-alone` skips it): every simulated layer also runs as a user's
program does, with the CPU that issues the commands counted. baco's side is the layer's kernel with
its tuned schedule compiled as users compile it (LOOP_WS / LOOP_CONV_WS on where the program fits)
into a RISC-V ELF and run on the ISS with the cycle model attached (rdcycle around the grid loop and
its fence); the default's side is the C library's stream issued by the CPU at the library's cost
per tile and ended by its fence (baco.sim.clib.library_stream_cycles). Energy on both sides is the
cycle model's Gemmini energy of that run. The report then gives the network's gain end to end
beside the Gemmini-alone one.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, padded_rows
from baco.problem.layer import Layer
from baco.sim.clib import (conv_stream, depthwise_stream, library_stream_cycles, matmul_stream, time_matmul,
                            time_stream)
from baco.sim.timing import CommandStream, TimingModel
from baco.tuner.arch import DEFAULT_HARDWARE
from baco.tuner.baselines import gemmini_default
from baco.tuner.mapping import (KERNEL_B_PADDED, KERNEL_OUT_INT8, conv_schedule, gemm_schedule, is_kernel_layer,
                                parse_mapping)
from baco.tuner.kernel_model import default_program_schedule


@dataclass
class Measured:
    cycles: float
    energy_uj: float


@dataclass
class LayerCheck:
    name: str
    count: int
    layer: Layer
    schedule: GemmSchedule | None
    predicted: Measured                 # the tuner's cost model on the tuned design
    simulated: Measured | None          # the compiled kernel on the cycle model (None: no kernel)
    bit_exact: bool | None
    default_predicted: Measured         # Gemmini-default with the C library's tiling, cost model
    default_simulated: Measured | None  # ... and the C library's command stream on the cycle model
    checked_shape: tuple | None = None  # run bit-exact: the layer's shape, or cut down (FUNCTIONAL_MACS):
                                        # (M, N, K) of a GEMM, (N, P, Q, C, K) of a convolution
    schedule_source: str = ""           # convolutions: "tuned" (the mapping's tile) or "default"
    note: str = ""                      # why a layer is not simulated
    timeloop_cycles: float | None = None  # the Timeloop-matched model's cycles of the tuned mapping
    seconds: float = 0.0
    end_to_end: Measured | None = None          # the kernel's ELF on the ISS, CPU issue counted
    default_end_to_end: Measured | None = None  # the C library's stream issued by the CPU


def output_scale(K: int) -> float:
    """A power-of-two int8 output scale that keeps random int8 products mostly unsaturated."""
    return 2.0 ** -round(math.log2(128 * math.sqrt(K)))


# Layers above this many MACs are timed on the compiled kernel's command stream without data
# (CommandStream: the functional model's numpy work is ~20x the cycle model's), and checked bit
# for bit on a scaled-down run of the same kernel, schedule and Gemmini (two blocks per dimension).
FUNCTIONAL_MACS = 3.2e7


def gemm_b_rows(K: int, cfg: GemminiConfig) -> int:
    """Rows a kernel layer's B is stored in: padded to whole DIM blocks where the tuner's model
    says so (KERNEL_B_PADDED, as baco.model stores linear weights), so the program run is the one
    predicted."""
    return padded_rows(K, cfg.dim) if KERNEL_B_PADDED else K


def random_bias(rng, channels: int, bias: bool):
    """A random int32 bias of `channels` values where a layer has one (Layer.bias), else None."""
    return rng.integers(-1000, 1000, channels).astype(np.int32) if bias else None


def _gemm_launch(M, N, K, cfg, schedule, out_int8, seed, target="sim", loop_ws=True, bias=False):
    """(compiled kernel, grid, args, reference output) of the GEMM kernel on random data (`loop_ws`:
    LOOP_WS where the blocks fit, as a user's compile; False: the explicit stream; `bias`: with a
    random int32 bias row, the last argument), B stored as the tuner's kernel layers store it
    (gemm_b_rows)."""
    from baco.kernels.matmul import matmul_kernel, reference
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (gemm_b_rows(K, cfg), N), dtype=np.int8)
    d = random_bias(rng, N, bias)
    c = np.zeros((M, N), dtype=np.int8 if out_int8 else np.int32)
    scale = output_scale(K) if out_int8 else 1.0
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, scale]
    grid = (-(-M // schedule.block_m), -(-N // schedule.block_n))
    ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=out_int8, config=cfg, schedule=schedule, target=target,
                               loop_ws=loop_ws, grid=grid, **({"bias_ptr": d} if bias else {}))
    args += [d] if bias else []         # the bias, the last runtime argument (KernelLaunch's order)
    ref = reference(a, b, bias=d, out="int8" if out_int8 else "int32", scale=scale, schedule=schedule)
    return ck, grid, args, ref


def run_gemm(M: int, N: int, K: int, cfg: GemminiConfig, schedule: GemmSchedule, *, target: str = "sim",
             seed: int = 0, out_int8: bool = KERNEL_OUT_INT8,
             functional_macs: float = FUNCTIONAL_MACS, timed: bool = True,
             loop_ws: bool = True, bias: bool = False) -> tuple[bool, dict, tuple[int, int, int]]:
    """Compile the GEMM kernel for cfg with schedule, run it on random data against Gemmini's
    arithmetic and time it on the cycle model: (bit_exact, cycle-model report, checked shape).
    Up to functional_macs the timed run is the checked run; above, the full-size kernel is timed
    on its command stream and the check runs on (M, N, K) cut to two blocks each. On `iss` the
    check runs the RISC-V ELF on the ISS. timed=False skips the full-size timing run (the report
    then covers the checked run only). loop_ws=False compiles the explicit stream instead of LOOP_WS
    (what the explicit-stream models are fitted and checked on); `bias`: C starts from a bias row
    (a layer's Layer.bias)."""
    tm = TimingModel(cfg)
    full = M * N * K <= functional_macs
    shape = (M, N, K) if full else \
        (min(M, 2 * schedule.block_m), min(N, 2 * schedule.block_n), min(K, 2 * schedule.block_k))
    if timed and not full:              # the full-size kernel, timed on its command stream
        ck, grid, args, _ = _gemm_launch(M, N, K, cfg, schedule, out_int8, seed, loop_ws=loop_ws, bias=bias)
        ck.run(grid, args, observers=[tm.observe], model=CommandStream())
    ck, grid, args, ref = _gemm_launch(*shape, cfg, schedule, out_int8, seed, target, loop_ws, bias)
    ck.run(grid, args, observers=[tm.observe] if target == "sim" and (full or not timed) else [])
    if timed and full and target != "sim":   # checked on the ISS: time the same launch on sim
        sim, grid, sim_args, _ = _gemm_launch(*shape, cfg, schedule, out_int8, seed, loop_ws=loop_ws, bias=bias)
        sim.run(grid, sim_args, observers=[tm.observe])
    tm.fence()
    return bool(np.array_equal(args[2], ref)), tm.report(), shape


def conv_shape(layer: Layer) -> tuple[int, int, int, int, int]:
    """(N, P, Q, C, K) of a convolution layer (the shape run_conv checks)."""
    return layer.N, layer.P, layer.Q, layer.C, layer.K


def _conv_launch(layer: Layer, shape, cfg, schedule, seed, *, reference: bool = True):
    """(launch, reference output or None) of conv2d (depthwise_conv2d for a depthwise layer: x of its K
    channels, w (R,S,K)) for `layer` cut to shape (N, P, Q, C, K) on random data (with a random int32
    bias where the layer has one): the image the layer reads (image_rows x image_cols per image: the
    input the Timeloop problem reads where the layer is unpadded) with its padding, compiled with the
    options a user's launch compiles with (LOOP_WS or LOOP_CONV_WS where the blocks fit, which
    kernel_model.conv_program costs)."""
    from baco.kernels.conv import conv2d_launch, reference_conv2d
    from baco.kernels.depthwise import depthwise_launch, reference_depthwise_conv2d
    N, P, Q, C, K = shape
    cut = replace(layer, N=N, P=P, Q=Q, C=C, K=K)
    rng = np.random.default_rng(seed)
    channels_in = K if layer.depthwise else C
    x = rng.integers(-128, 128, (N, cut.image_rows, cut.image_cols, channels_in), dtype=np.int8)
    w = rng.integers(-128, 128, (layer.R, layer.S, K) if layer.depthwise else (layer.R, layer.S, C, K), dtype=np.int8)
    bias = random_bias(rng, K, layer.bias)
    kw = dict(stride=(layer.Hstride, layer.Wstride), dilation=(layer.Hdilation, layer.Wdilation),
              padding=layer.padding, scale=output_scale(layer.R * layer.S * layer.C),
              out="int8" if KERNEL_OUT_INT8 else "int32")
    if layer.depthwise:
        return depthwise_launch(x, w, bias, config=cfg, blocks=schedule, **kw), \
            reference_depthwise_conv2d(x, w, bias, **kw) if reference else None
    return conv2d_launch(x, w, bias, config=cfg, blocks=schedule, **kw), \
        reference_conv2d(x, w, bias, **kw) if reference else None


def run_conv(layer: Layer, cfg: GemminiConfig, schedule: GemmSchedule | None, *, target: str = "sim",
             seed: int = 0, functional_macs: float = FUNCTIONAL_MACS) -> tuple[bool, dict, tuple]:
    """run_gemm for a convolution layer (baco.kernels.conv.conv2d; schedule None: the kernel's
    default program): (bit_exact, cycle-model report of the full layer, checked shape (N, P, Q, C, K)).
    Up to functional_macs the timed run is the checked run; above, the full layer is timed on its
    command stream and the check runs on one image, two output rows and two blocks of output
    columns, output and input channels (of the default program's blocks where none is given; the
    cut then runs its own default program)."""
    tm = TimingModel(cfg)
    full = layer.macs <= functional_macs
    N, P, Q, C, K = conv_shape(layer)
    blocks = schedule or (None if full else default_program_schedule(layer, cfg))
    shape = (N, P, Q, C, K) if full else \
        (1, min(P, 2), min(Q, 2 * blocks.block_m), min(C, 2 * blocks.block_k), min(K, 2 * blocks.block_n))
    launch, ref = _conv_launch(layer, shape, cfg, schedule, seed)
    ck = launch.compiled(target)
    ck.run(launch.grid, launch.runtime_args(), observers=[tm.observe] if target == "sim" and full else [])
    if full and target == "sim":
        tm.fence()
        report = tm.report()
    else:       # the full layer's commands, without data (they do not depend on it)
        report = (launch if full else _conv_launch(layer, conv_shape(layer), cfg, schedule, seed)[0]).cycles()
    return bool(np.array_equal(launch.y, ref)), report, shape


def _iss_end_to_end(kernel, grid, args, options, cfg, bias=None) -> Measured:
    """A launch as a RISC-V program on the ISS with the cycle model attached: the cycles rdcycle
    reads around its grid loop and fence (the CPU issuing every command), and Gemmini's energy
    (`bias`: the launch's bias array, options' bias_ptr, its last runtime argument)."""
    tm = TimingModel(cfg)
    run = kernel.compile(*args, target="iss", grid=grid, **options).run(grid, args + ([] if bias is None else [bias]), timing=tm)
    return Measured(run["kernel_cycles"], tm.report()["energy_uj"])


def gemm_end_to_end(M: int, N: int, K: int, cfg: GemminiConfig, schedule: GemmSchedule, *,
                    out_int8: bool = KERNEL_OUT_INT8, bias: bool = False) -> Measured:
    """The GEMM kernel under `schedule` (`bias`: with a bias row), compiled with the default options
    (as a user's launch), end to end on the ISS (zero data: the command stream does not depend on it)."""
    from baco.kernels.matmul import matmul_kernel
    a, b = np.zeros((M, K), np.int8), np.zeros((gemm_b_rows(K, cfg), N), np.int8)
    c, d = np.zeros((M, N), np.int8 if out_int8 else np.int32), np.zeros(N, np.int32)
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, output_scale(K) if out_int8 else 1.0]
    grid = (-(-M // schedule.block_m), -(-N // schedule.block_n))
    options = dict(RELU=False, OUT_INT8=out_int8, config=cfg, schedule=schedule, **({"bias_ptr": d} if bias else {}))
    return _iss_end_to_end(matmul_kernel, grid, args, options, cfg, d if bias else None)


def conv_end_to_end(layer: Layer, cfg: GemminiConfig, schedule: GemmSchedule | None) -> Measured:
    """The whole layer's launch with a user's options (LOOP_CONV_WS where it fits; schedule None:
    the kernel's default program), end to end on the ISS."""
    launch, _ = _conv_launch(layer, conv_shape(layer), cfg, schedule, 0, reference=False)
    return _iss_end_to_end(launch.kernel, launch.grid, launch.args, launch.options, cfg, launch.bias)


def library_end_to_end(stream, cfg: GemminiConfig) -> Measured:
    """A C library call's stream issued by the CPU at the library's cost and ended by its fence."""
    tm = TimingModel(cfg)
    cycles = library_stream_cycles(stream, tm)
    return Measured(cycles, tm.report()["energy_uj"])


def default_conv_stream(layer: Layer, cfg: GemminiConfig):
    """The C library's tiled_conv_auto (tiled_conv_dw_auto for a depthwise layer) for `layer` on cfg
    (square filters, strides and dilations only: tiled_conv takes one of each; undilated depthwise
    ones; with its bias where the layer has one; its image with its padding), as baco.sim.clib's
    stream; ValueError when it cannot run the layer."""
    if layer.R != layer.S or layer.depthwise and layer.Hdilation > 1 or layer.Hstride != layer.Wstride or layer.Hdilation != layer.Wdilation:
        raise ValueError(f"the C library's tiled_conv takes square filters, strides and dilations "
                         f"(R,S={layer.R},{layer.S}, strides {layer.Hstride},{layer.Wstride}, "
                         f"dilations {layer.Hdilation},{layer.Wdilation})")
    rows, cols = layer.image_rows, layer.image_cols
    if layer.depthwise:
        return depthwise_stream(layer.N, rows, cols, layer.K, layer.R, cfg, stride=layer.Hstride,
                                padding=layer.padding, scale=output_scale(layer.R * layer.S), bias=layer.bias)
    if layer.R == 1 and layer.Hstride == 2:
        # a strided 1x1 layer (ResNet's downsampling shortcut) reads a 2P x 2Q input in its network,
        # which tiled_conv_auto moves in every other row and column (its downsample path)
        rows, cols = 2 * layer.P, 2 * layer.Q
    return conv_stream(layer.N, rows, cols, layer.C, layer.K, layer.R, cfg, stride=layer.Hstride,
                       padding=layer.padding, dilation=layer.Hdilation, scale=output_scale(layer.R * layer.S * layer.C),
                       bias=layer.bias)


def time_default_conv(layer: Layer, cfg: GemminiConfig) -> dict:
    """The cycle model's report of default_conv_stream (Gemmini alone)."""
    return time_stream(default_conv_stream(layer, cfg), cfg)


def load_design(path) -> dict:
    """result.json of a `baco tune` folder (or the file itself)."""
    p = Path(path)
    p = p / "result.json" if p.is_dir() else p
    if not p.exists():
        raise FileNotFoundError(f"no tuned design at {p} (run `baco tune ... --out DIR` first)")
    return json.loads(p.read_text())


def layer_of(entry: dict) -> Layer:
    return Layer(**entry["layer"], name=entry["name"], count=entry["count"])


def check_design(design: dict, *, target: str = "sim", end_to_end: bool = True,
                 progress=print) -> list[LayerCheck]:
    """Compile, run and time every kernel layer of a tuned design, and the default beside it
    (end_to_end: also both as programs on a CPU, the module docstring says how)."""
    cfg = GemminiConfig.from_dict(design["gemmini_config"])
    default_cfg = DEFAULT_HARDWARE.to_gemmini_config()
    # the search returned Gemmini-default running the C library's programs (it found nothing better):
    # both sides are the library's streams, nothing of baco's is compiled (bit_exact None)
    library = design.get("program") == "library"
    checks = []
    for entry in design["layers"]:
        t0 = time.perf_counter()
        layer = layer_of(entry)
        # predictions of the model the search used: the tuner's own per-layer figures, and the same
        # model on the C library's tiling of the default Gemmini (baselines.gemmini_default)
        dflt = gemmini_default([layer]).per_layer[0]
        check = LayerCheck(entry["name"], layer.count, layer, None, Measured(entry["cycles"], entry["energy_uj"]),
                           None, None, Measured(dflt.cycles, dflt.energy_uj), None,
                           timeloop_cycles=entry.get("timeloop_cycles"))
        if is_kernel_layer(layer):
            M, N, K = layer.P, layer.K, layer.C
            library_bias = "repeating" if layer.bias else None        # tiled_matmul's bias row
            lib = time_matmul(M, N, K, default_cfg, out_int8=KERNEL_OUT_INT8, scale=output_scale(K), bias=library_bias)
            check.default_simulated = Measured(lib["cycles"], lib["energy_uj"])
            if end_to_end:
                check.default_end_to_end = library_end_to_end(
                    matmul_stream(M, N, K, default_cfg, out_int8=KERNEL_OUT_INT8, scale=output_scale(K),
                                  bias=library_bias), default_cfg)
            if library:
                check.simulated, check.end_to_end = check.default_simulated, check.default_end_to_end
            else:       # (result.json files older than schedules: from the mapping)
                check.schedule = GemmSchedule.from_dict(entry["schedule"]) if "schedule" in entry \
                    else gemm_schedule(parse_mapping(entry["mapping"]), layer)
                ok, rep, check.checked_shape = run_gemm(M, N, K, cfg, check.schedule, target=target, bias=layer.bias)
                check.bit_exact = ok
                check.simulated = Measured(rep["cycles"], rep["energy_uj"])
                if end_to_end:
                    check.end_to_end = gemm_end_to_end(M, N, K, cfg, check.schedule, bias=layer.bias)
        else:
            try:        # the default first: a layer the C library cannot run is not compared at all
                lib = time_default_conv(layer, default_cfg)
            except ValueError as e:
                check.note = f"not timed: {e}"
            else:
                check.default_simulated = Measured(lib["cycles"], lib["energy_uj"])
                if end_to_end:
                    check.default_end_to_end = library_end_to_end(default_conv_stream(layer, default_cfg), default_cfg)
            if library and check.default_simulated is not None:
                check.simulated, check.end_to_end = check.default_simulated, check.default_end_to_end
            elif check.default_simulated is not None:
                # the search's schedule (result.json), or what the same rule makes of the mapping; a
                # layer marked "default" runs its kernel's default program, as compile_model runs it
                run_schedule = None
                if entry.get("schedule_source") == "default":
                    check.schedule, check.schedule_source = default_program_schedule(layer, cfg), "default"
                else:
                    check.schedule, check.schedule_source = conv_schedule(parse_mapping(entry["mapping"]), layer, cfg)
                    if "schedule" in entry:
                        check.schedule = GemmSchedule.from_dict(entry["schedule"])
                    run_schedule = check.schedule
                ok, rep, check.checked_shape = run_conv(layer, cfg, run_schedule, target=target)
                check.bit_exact = ok
                check.simulated = Measured(rep["cycles"], rep["energy_uj"])
                if end_to_end:
                    check.end_to_end = conv_end_to_end(layer, cfg, run_schedule)
        check.seconds = time.perf_counter() - t0
        if progress:
            state = "the C library's program" if library and check.simulated else 'bit-exact' if check.bit_exact \
                else 'MISMATCH' if check.simulated else check.note or 'no kernel'
            progress(f"  {check.name}: {state}"
                     f" ({check.seconds:.1f} s)")
        checks.append(check)
    return checks


def network_edp(checks: list[LayerCheck], which: str) -> float:
    """Count-weighted network EDP, (Σ n·cycles)·(Σ n·energy), over the simulated layers."""
    sims = [c for c in checks if c.simulated is not None]
    values = [(c.count, getattr(c, which)) for c in sims]
    return sum(n * m.cycles for n, m in values) * sum(n * m.energy_uj for n, m in values)


def summary(checks: list[LayerCheck]) -> dict:
    sims = [c for c in checks if c.simulated is not None]
    out = {k: network_edp(checks, k) for k in ("predicted", "simulated", "default_predicted", "default_simulated")}
    out["gain_predicted"] = out["default_predicted"] / out["predicted"] if out["predicted"] else float("nan")
    out["gain_simulated"] = out["default_simulated"] / out["simulated"] if out["simulated"] else float("nan")
    if sims and all(c.end_to_end is not None for c in sims):
        out["end_to_end"] = network_edp(checks, "end_to_end")
        out["default_end_to_end"] = network_edp(checks, "default_end_to_end")
        out["gain_end_to_end"] = out["default_end_to_end"] / out["end_to_end"]
    out["bit_exact"] = all(c.bit_exact is not False for c in sims)
    out["kernel_layers"], out["layers"] = len(sims), len(checks)
    return out


def scaled(c: LayerCheck) -> str:
    if c.checked_shape is None:     # the C library's program: nothing of baco's run
        return ""
    if is_kernel_layer(c.layer):
        if c.checked_shape == (c.layer.P, c.layer.K, c.layer.C):
            return ""
        return " (timed on its command stream; checked on {}x{}x{})".format(*c.checked_shape)
    if c.checked_shape == conv_shape(c.layer):
        return ""
    return " (timed on its command stream; checked on N,P,Q,C,K={},{},{},{},{})".format(*c.checked_shape)


def shape_text(layer: Layer) -> str:
    if is_kernel_layer(layer):
        return f"{layer.P}x{layer.K}x{layer.C}"
    stride = f"/{layer.Hstride}" if layer.Hstride == layer.Wstride else f"/{layer.Hstride},{layer.Wstride}"
    return f"{layer.R}x{layer.S}{stride if stride != '/1' else ''} {layer.P}x{layer.Q} {layer.C}>{layer.K}"


def schedule_text(s: GemmSchedule) -> str:
    """block_m,block_n,block_k dataflow[+db][ xN rows: N output rows per program]."""
    return f"{s.block_m},{s.block_n},{s.block_k} {s.dataflow}{'+db' if s.double_buffer else ''}" + \
        (f" x{s.rows} rows" if s.rows > 1 else "")


def format_report(design: dict, checks: list[LayerCheck]) -> str:
    hw = design["hardware"]
    lines = [f"design: Gemmini {hw['pe_dim']}x{hw['pe_dim']}, scratchpad {hw['sp_kb']:g} KB, "
             f"accumulator {hw['acc_kb']:g} KB; default: 16x16, 256 KB, 64 KB running the C library's tiling",
             f"{'layer':14s} {'n':>2s} {'shape':>16s} {'schedule (bm,bn,bk)':>24s} {'pred cyc':>10s} "
             f"{'sim cyc':>10s} {'sim/pred':>8s} {'pred uJ':>9s} {'sim uJ':>9s} {'default sim cyc':>15s} bits",
             "(shape: M x N x K of a GEMM; R x S[/stride] P x Q C>K of a convolution, unpadded, run by "
             "baco's conv2d and by the C library's tiled_conv_auto on the default)"]
    for c in checks:
        shape = shape_text(c.layer)
        if c.simulated is None:
            lines.append(f"{c.name[:14]:14s} {c.count:2d} {shape:>16s} {'no kernel':>24s} {c.predicted.cycles:10.4g} "
                         f"{'-':>10s} {'-':>8s} {c.predicted.energy_uj:9.4g} {'-':>9s} {'-':>15s} - {c.note}")
            continue
        s = c.schedule
        source = " default" if c.schedule_source == "default" else ""
        program = schedule_text(s) + source if s else "the C library's"
        lines.append(f"{c.name[:14]:14s} {c.count:2d} {shape:>16s} {program:>24s} "
                     f"{c.predicted.cycles:10.4g} {c.simulated.cycles:10.4g} "
                     f"{c.simulated.cycles / c.predicted.cycles:8.2f} {c.predicted.energy_uj:9.4g} "
                     f"{c.simulated.energy_uj:9.4g} {c.default_simulated.cycles:15.4g} "
                     f"{'ok' if c.bit_exact else 'lib' if c.bit_exact is None else 'MISMATCH'}{scaled(c)}")
    s = summary(checks)
    if not s["kernel_layers"]:
        lines.append("no layer has a kernel: nothing simulated")
        return "\n".join(lines)
    subset = "" if s["kernel_layers"] == s["layers"] else f" (the {s['kernel_layers']} simulated layers)"
    lines += [f"network EDP{subset} (uJ*cycles):  baco predicted {s['predicted']:.4g}, simulated {s['simulated']:.4g};"
              f"  default predicted {s['default_predicted']:.4g}, simulated {s['default_simulated']:.4g}",
              f"baco is {s['gain_predicted']:.2f}x better than Gemmini-default predicted, "
              f"{s['gain_simulated']:.2f}x simulated; every kernel layer bit-exact: {s['bit_exact']}"]
    if "gain_end_to_end" in s:
        lines += ["end to end, the CPU issuing the commands (baco: the kernel's ELF on the ISS with the cycle "
                  "model; default: the C library's calls at its CPU cost per tile), cycles:"]
        lines += [f"  {c.name[:14]:14s} {c.count:2d} baco {c.end_to_end.cycles:12,.0f}  default "
                  f"{c.default_end_to_end.cycles:12,.0f}  ({c.default_end_to_end.cycles / c.end_to_end.cycles:.2f}x)"
                  for c in checks if c.end_to_end is not None]
        lines.append(f"network EDP end to end: baco {s['end_to_end']:.4g}, default {s['default_end_to_end']:.4g}: "
                     f"{s['gain_end_to_end']:.2f}x better than Gemmini-default with the CPU counted")
    return "\n".join(lines)


def verify(path, *, target: str = "sim", end_to_end: bool = True) -> int:
    design = load_design(path)
    print(f"verifying {path}: compiling each kernel layer for the tuned Gemmini, running it on {target} "
          "against the reference and timing it on the cycle model"
          + (", and end to end as a RISC-V program on the ISS" if end_to_end else ""))
    checks = check_design(design, target=target, end_to_end=end_to_end)
    print(format_report(design, checks))
    return 0 if summary(checks)["bit_exact"] else 1


def main(argv=None) -> int:
    """`baco run --design DIR`."""
    p = argparse.ArgumentParser(prog="baco run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--design", required=True, help="a `baco tune` output folder (or its result.json)")
    p.add_argument("--target", choices=["sim", "iss"], default="sim",
                   help="iss also runs each kernel as a RISC-V ELF on the ISS (checked, not timed)")
    p.add_argument("--gemmini-alone", action="store_true",
                   help="time Gemmini alone only (commands free), not also end to end with the CPU counted")
    a = p.parse_args(argv)
    return verify(a.design, target=a.target, end_to_end=not a.gemmini_alone)


def tune_main(argv=None, torch_workload=None) -> int:
    """`baco tune ... [--verify]`: the tuner's CLI (torch_workload: see baco.tuner.cli.main), then
    (with --verify) the loop on its output. Lives outside baco/tuner, which imports no compiler."""
    from baco.tuner import cli
    argv = list(sys.argv[1:] if argv is None else argv)
    check = "--verify" in argv
    end_to_end = "--gemmini-alone" not in argv
    argv = [x for x in argv if x not in ("--verify", "--gemmini-alone")]
    if "-h" in argv or "--help" in argv:
        print("baco tune also takes --verify: compile, run and time every kernel layer of the result, "
              "on Gemmini alone and end to end with the CPU counted (--gemmini-alone: the first only; "
              "see `baco run --help`)\n")
    rc = cli.main(argv, torch_workload)
    if rc or not check:
        return rc
    out = argv[argv.index("--out") + 1] if "--out" in argv else next(x.split("=", 1)[1] for x in argv
                                                                      if x.startswith("--out="))
    return verify(out, end_to_end=end_to_end)


if __name__ == "__main__":
    sys.exit(main())
