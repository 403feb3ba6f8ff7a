"""The convolution model's two sides and their sum against the ISS, on narrow and wide arrays.

For each probe (a convolution on a DIM 16, 32 or 64 Gemmini: 1x1, 3x3, 5x5, strided, depthwise,
ragged channels 17/33, images of 1x1 to 14x14 outputs) under the schedule the conv kernel runs
when given none (kernel_model.default_program_schedule) and under the whole-tile schedule a search
returns (every output row and column in one program, all input channels a step, where it fits):
- Gemmini: kernel_model.conv_schedule_cycles(end_to_end=False) against the cycle model's cycles
  of the launch's commands (launch.cycles(): the commands arriving for free);
- CPU: the model's cycles of the CPU issuing the program (kernel_model.conv_cpu_cycles; for a
  pointwise layer, which runs the GEMM kernel, not printed) against the RISC-V instructions the
  launch runs on the ISS without the cycle model (rdcycle around its grid loop);
- end to end: conv_schedule_cycles (what the search costs) against the launch's ELF on the ISS with
  the cycle model attached (baco.design.conv_end_to_end: the CPU issuing every command).
Printed per probe the three ratios model / measured, the program form (explicit, LOOP_CONV_WS,
LOOP_WS) and, per DIM and side, the range and median error.

With --padded, the probes are PADDED_LAYERS instead, each padded as PyTorch's 'same' ((R - 1) // 2
rows and columns each side, Layer.padding): one-output-row layers on 1x1 and 2x2 images (whose
programs run only the tap rows inside the image, with the loop-conv-ws pass's channel block for
them, schedule.loop_conv_walked_channels), strided, 5x5, ragged and depthwise ones.

With --walk, instead: LoopConv's walk (loop_conv_timing.loop_conv_stream_cycles over
program_conv_tiles with the layer's 'same' padding, what default_conv_schedule ranks with) against
the cycle model's Gemmini cycles (launch.cycles()) of WALK_LAYERS' LoopConv programs, up to four
of each layer's candidates (one-row 3-channel layers, strided, ragged, 1x1/2, DIM 16 and 32).

    python benchmarks/conv_end_to_end.py [--smoke] [--dims 16,32,64] [--hardware DIM,SP,ACC] [--padded] [--walk]
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

from baco import design
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, schedule_problems
from baco.problem.layer import Layer
from baco.tuner import costmodel
from baco.tuner.kernel_model import (_schedule_blocks, conv_cpu_cycles, conv_schedule_cycles, default_program_schedule,
                                     is_pointwise, loop_conv_loops, pointwise_loop_conv_default,
                                     runs_pointwise_loop_ws)
from baco.tuner.mapping import KERNEL_OUT_INT8

# (DIM, scratchpad KB, accumulator KB): narrow arrays with the default's memories, 32x32 arrays and
# the 64x64 design tests/test_emitted_header.py's unconstrained search returns (and one with more memory)
# (small scratchpads, where LoopConv's halves do not hold the whole-tile programs: the explicit stream)
HARDWARE = {16: [(16, 256, 64), (16, 16, 16)], 32: [(32, 256, 64), (32, 32, 32)], 64: [(64, 32, 64), (64, 256, 256)]}
# (R, stride, P = Q output, C, K, depthwise)
LAYERS = [(3, 1, 14, 32, 64, False), (1, 1, 8, 33, 17, False), (5, 1, 7, 17, 33, False), (3, 2, 7, 32, 64, False),
          (3, 1, 14, 48, 48, True), (3, 1, 1, 64, 64, False), (3, 1, 3, 33, 17, False), (3, 1, 7, 17, 33, False),
          (3, 2, 4, 64, 64, True), (3, 1, 5, 64, 128, False)]
SMOKE = [(3, 1, 3, 33, 17, False)]
# LAYERS' form, padded 'same' (--padded): one output row on a 1x1 or 2x2 image (3x3/1 and /2, 5x5/2),
# strided, ragged and depthwise ones
PADDED_LAYERS = [(3, 1, 1, 3, 64, False), (3, 2, 1, 3, 256, False), (3, 1, 1, 64, 64, False),
                 (3, 2, 1, 64, 64, False), (5, 2, 1, 64, 256, False), (3, 2, 4, 64, 64, False),
                 (3, 1, 7, 64, 64, False), (3, 1, 14, 32, 64, False), (3, 1, 4, 33, 17, False),
                 (3, 1, 7, 48, 48, True), (3, 1, 14, 3, 16, False), (3, 1, 8, 8, 16, False)]
# --padded: one-row programs besides, many programs of little work each (the CPU-bound side of
# LoopConv's two-stage pipeline: every program's issue, then the last program's work)
PADDED_SCHEDULES = {(3, 1, 14, 3, 16, False): [GemmSchedule(14, 16, 16, rows=1)],
                    (3, 1, 8, 8, 16, False): [GemmSchedule(8, 16, 16, rows=1)],
                    (3, 1, 7, 64, 64, False): [GemmSchedule(7, 16, 16, rows=1)],
                    (3, 1, 7, 48, 48, True): [GemmSchedule(7, 16, 16, rows=1)]}


# (H = W, C, K, R, stride, DIM) of the --walk check, 'same' padding
WALK_LAYERS = [(1, 3, 64, 3, 1, 16), (2, 3, 256, 3, 2, 16), (1, 3, 256, 3, 2, 16), (1, 64, 64, 3, 1, 16),
               (2, 64, 64, 3, 2, 16), (4, 64, 64, 3, 2, 16), (7, 64, 64, 3, 1, 16), (14, 32, 64, 3, 1, 16),
               (8, 33, 17, 1, 2, 16), (7, 17, 33, 5, 1, 16), (14, 64, 64, 3, 2, 16), (3, 33, 17, 3, 1, 16),
               (28, 64, 64, 3, 1, 16), (13, 256, 256, 3, 1, 16), (1, 3, 64, 3, 1, 32), (2, 3, 256, 3, 2, 32),
               (7, 64, 128, 3, 1, 32), (14, 32, 64, 3, 1, 32), (5, 64, 128, 3, 1, 32), (1, 64, 64, 3, 1, 32),
               (16, 3, 32, 3, 2, 16), (28, 128, 64, 3, 1, 32)]


def walk_check() -> int:
    """The --walk check: per program walk / cycle model, then the range and median error."""
    from dataclasses import replace

    from baco.gemmini import schedule as sch
    from baco.gemmini.loop_conv_timing import loop_conv_stream_cycles, program_conv_tiles
    from baco.kernels.conv import conv2d_launch
    ratios = []
    for H, C, K, R, stride, dim in WALK_LAYERS:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        pad = R // 2
        P = Q = (H + 2 * pad - R) // stride + 1
        base = sch._default_conv_schedule(Q, K, C, cfg, True, P, R * R)
        sizes = lambda n: sorted({min(n, dim << i) for i in range((-(-n // dim)).bit_length() + 1)})  # noqa: E731
        shapes = [(r, Q) for r in sorted({-(-P // g) for g in range(1, P + 1)}) if 1 < r <= sch.MAX_CONV_ROWS]
        fit = [f for f in (replace(base, rows=r, block_m=m, block_n=n)
                           for r, m in shapes + [(1, m) for m in sizes(Q)] for n in sizes(K))
               if sch.loop_conv_channels(f, P, Q, K, C, R, R, stride, 1, cfg) and not sch.schedule_problems(f, cfg, True)]
        if len(fit) > 4:
            fit = [fit[i] for i in np.linspace(0, len(fit) - 1, 4).astype(int)]
        x, w = np.zeros((1, H, H, C), np.int8), np.zeros((R, R, C, K), np.int8)
        for f in fit:
            sim = conv2d_launch(x, w, stride=stride, padding=pad, scale=0.05, config=cfg, blocks=f).cycles()["cycles"]
            ds = sch.loop_conv_downsamples(R, R, stride)
            tiles = program_conv_tiles(1, P, Q, K, C, R, R, stride, 1, f.rows, f.block_m, f.block_n,
                                       channels=sch.loop_conv_channels(f, P, Q, K, C, R, R, stride, 1, cfg),
                                       downsample=ds, padding=pad, image=(H, H))
            walk = loop_conv_stream_cycles(tiles, cfg, downsample=int(ds))
            ratios.append(walk / sim)
            print(f"DIM {dim} {R}x{R}/{stride} {H}x{H} {C}>{K} {f.rows}x{f.block_m},{f.block_n}: walk {walk:9.0f}  "
                  f"cycle model {sim:9.0f}  {walk / sim:.3f}", flush=True)
    print(summary(f"walk / cycle model, {len(ratios)} LoopConv programs:", ratios))
    return 0


def layer_of(R, stride, P, C, K, depthwise, padding=0) -> Layer:
    return Layer(R=R, S=R, P=P, Q=P, C=1 if depthwise else C, K=K, N=1, Hstride=stride, Wstride=stride,
                 depthwise=depthwise, padding=padding)


def whole_tile(layer: Layer, cfg: GemminiConfig) -> GemmSchedule | None:
    """Every output row and column in one program, all output channels, all input channels a K step
    (the tile the emitted-header search returns), single-buffered; None where it does not fit."""
    channels = layer.K if layer.depthwise else layer.C
    s = GemmSchedule(layer.Q, layer.K, channels, rows=layer.P) if layer.R > 1 else \
        GemmSchedule(layer.P * layer.Q, layer.K, channels)
    return None if schedule_problems(s, cfg, KERNEL_OUT_INT8) else s


def form(layer: Layer, s: GemmSchedule, cfg: GemminiConfig) -> str:
    if is_pointwise(layer):
        return "LOOP_WS" if runs_pointwise_loop_ws(layer, s, cfg) else "explicit"
    return "LOOP_CONV_WS" if loop_conv_loops(layer, s, cfg) else "explicit"


def model_cpu(layer: Layer, s: GemmSchedule, cfg: GemminiConfig) -> float:
    """The model's CPU cycles issuing a (not pointwise) convolution's programs (nan for a pointwise one)."""
    if is_pointwise(layer):
        return float("nan")
    terms = costmodel.conv_program_terms(layer, _schedule_blocks(layer, s), float(cfg.dim), rows=s.rows,
                                         out_int8=KERNEL_OUT_INT8, double_buffer=s.double_buffer)
    return float(conv_cpu_cycles(layer, terms, s.rows, torch.tensor([float(loop_conv_loops(layer, s, cfg))]),
                                 s.double_buffer)[0])


def measured(layer: Layer, s: GemmSchedule, cfg: GemminiConfig) -> tuple[float, float, float]:
    """(Gemmini's cycles, the CPU's cycles alone, end-to-end cycles) of the launch."""
    launch, _ = design._conv_launch(layer, design.conv_shape(layer), cfg, s, 0, reference=False)
    gemmini = launch.cycles()["cycles"]
    alone = launch.kernel.compile(*launch.args, target="iss", **launch.options).run(launch.grid, launch.runtime_args())
    return gemmini, alone["kernel_cycles"], design.conv_end_to_end(layer, cfg, s).cycles


def summary(label: str, ratios: list) -> str:
    r = np.array([x for x in ratios if np.isfinite(x)])
    if not r.size:
        return f"{label}: -"
    err = np.abs(r - 1)
    return f"{label} {r.min():.2f}-{r.max():.2f}x, median error {np.median(err):.1%} (worst {err.max():.1%})"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="one probe at each DIM's first design")
    p.add_argument("--dims", default="16,32,64", help="array sizes (of 16, 32, 64)")
    p.add_argument("--hardware", help="one design DIM,SP_KB,ACC_KB (of HARDWARE's) instead of all")
    p.add_argument("--walk", action="store_true", help="LoopConv's walk against the cycle model (WALK_LAYERS)")
    p.add_argument("--padded", action="store_true", help="PADDED_LAYERS, 'same'-padded, instead of LAYERS")
    a = p.parse_args(argv)
    if a.walk:
        return walk_check()
    dims = [int(d) for d in a.dims.split(",")]
    designs = HARDWARE
    if a.hardware:
        hw = tuple(int(v) for v in a.hardware.split(","))
        if hw not in HARDWARE.get(hw[0], []):
            raise SystemExit(f"--hardware {a.hardware} is none of {HARDWARE}")
        dims, designs = [hw[0]], {hw[0]: [hw]}
    print(f"{'hardware':<10} {'layer':<22} {'schedule':<22} {'form':<12} {'gemmini':>20} {'cpu':>20} "
          f"{'end to end':>20}  (model/measured ratio)")
    for dim in dims:
        ratios = {"gemmini": [], "cpu": [], "end to end": []}
        for hw in designs[dim][:1] if a.smoke else designs[dim]:
            cfg = GemminiConfig.from_capacity(*hw)
            for shape in SMOKE if a.smoke else PADDED_LAYERS if a.padded else LAYERS:
                layer = layer_of(*shape, padding=(shape[0] - 1) // 2 if a.padded else 0)
                schedules = {default_program_schedule(layer, cfg), whole_tile(layer, cfg),
                             *(PADDED_SCHEDULES.get(shape, []) if a.padded else [])} - {None}
                for s in sorted(schedules, key=str):
                    if pointwise_loop_conv_default(layer, cfg) == s:
                        continue        # a pointwise LoopConv program: conv_schedule_cycles prices the GEMM
                    model = (conv_schedule_cycles(layer, s, hw, end_to_end=False), model_cpu(layer, s, cfg),
                             conv_schedule_cycles(layer, s, hw))
                    sim = measured(layer, s, cfg)
                    for key, m, x in zip(ratios, model, sim):
                        ratios[key].append(m / x)
                    R, stride, P, C, K, dw = shape
                    name = f"{R}x{R}/{stride} {P}x{P} {'dw ' + str(K) if dw else f'{C}>{K}'}{' p' if a.padded else ''}"
                    sched = f"{s.rows}x{s.block_m},{s.block_n},{s.block_k}{' db' if s.double_buffer else ''}"
                    cells = " ".join(f"{f'{m:.0f}/{x:.0f} {m / x:.2f}' if np.isfinite(m) else '-':>20}"
                                     for m, x in zip(model, sim))
                    print(f"{'/'.join(map(str, hw)):<10} {name:<22} {sched:<22} {form(layer, s, cfg):<12} {cells}",
                          flush=True)
        print(f"DIM {dim}: " + "; ".join(summary(k, v) for k, v in ratios.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
