"""The conv kernel's explicit command stream, Gemmini alone, against its model
(kernel_model.conv_schedule_cycles with end_to_end=False: costmodel.conv_program_terms): 1x1
convolutions (one GEMM over the pixels) whose schedules keep the explicit stream (neither
LOOP_WS nor LOOP_CONV_WS), with and without an int32 bias (Layer.bias: every program's block
starts as the bias row, int32 mvins into the accumulator), single- and double-buffered, ragged
sizes, at DIM 16 (256 KB scratchpad, 64 KB accumulator). Printed per
probe: model / cycle model, and per variant (bias or not) the range and median of the ratio.

    python benchmarks/conv_explicit_bias.py [--smoke]
"""
import argparse

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.conv import conv2d_launch
from baco.problem.layer import Layer
from baco.tuner.kernel_model import conv_schedule_cycles, loop_conv_loops, runs_pointwise_loop_ws

HW = (16, 256, 64)
# (R, P, C, K, schedule): MobileNetV2's expansions and projections at 64x64 in blocks of up to 1024
# pixels (too large for LOOP_WS's halves), ragged ones, several K steps, double-buffered
PROBES = [
    (1, 32, 16, 96, GemmSchedule(1024, 16, 16)),
    (1, 32, 32, 16, GemmSchedule(1024, 16, 32)),
    (1, 32, 16, 96, GemmSchedule(512, 32, 16)),
    (1, 32, 24, 144, GemmSchedule(512, 32, 32)),
    (1, 17, 33, 17, GemmSchedule(512, 32, 48)),
    (1, 33, 17, 65, GemmSchedule(1024, 16, 32)),
    (1, 32, 64, 32, GemmSchedule(1024, 16, 32)),
    (1, 32, 64, 32, GemmSchedule(1024, 16, 16, double_buffer=True)),
    (1, 32, 16, 96, GemmSchedule(1024, 16, 16, double_buffer=True)),
    (1, 24, 96, 24, GemmSchedule(576, 16, 96)),
    (1, 8, 160, 960, GemmSchedule(64, 256, 32)),
]
SMOKE = PROBES[:2]


def simulated(layer: Layer, schedule: GemmSchedule, cfg: GemminiConfig) -> float:
    """The cycle model's cycles (Gemmini alone) of the conv kernel's program (zero data: the
    stream does not depend on it)."""
    x = np.zeros((layer.N, layer.P, layer.Q, layer.C), np.int8)
    w = np.zeros((layer.R, layer.S, layer.C, layer.K), np.int8)
    bias = np.zeros(layer.K, np.int32) if layer.bias else None
    return conv2d_launch(x, w, bias, scale=1 / 256, relu=True, config=cfg, blocks=schedule).cycles()["cycles"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two probes")
    args = p.parse_args()
    cfg = GemminiConfig.from_capacity(*HW)
    ratios = {False: [], True: []}
    print(f"{'R':>2} {'P':>3} {'C':>4} {'K':>4} {'schedule':<34} {'bias':>4} {'model':>8} {'cycles':>8} {'ratio':>6}")
    for R, P, C, K, schedule in SMOKE if args.smoke else PROBES:
        for bias in (False, True):
            layer = Layer(R=R, S=R, P=P, Q=P, C=C, K=K, N=1, bias=bias)
            if runs_pointwise_loop_ws(layer, schedule, cfg) or loop_conv_loops(layer, schedule, cfg):
                raise ValueError(f"probe {layer} under {schedule} does not run the explicit stream")
            model = conv_schedule_cycles(layer, schedule, HW, end_to_end=False)
            sim = simulated(layer, schedule, cfg)
            ratios[bias].append(model / sim)
            blocks = f"{schedule.block_m},{schedule.block_n},{schedule.block_k}" \
                     f"{' db' if schedule.double_buffer else ''}{f' rows={schedule.rows}' if schedule.rows > 1 else ''}"
            print(f"{R:>2} {P:>3} {C:>4} {K:>4} {blocks:<34} {bias!s:>4} {model:>8.0f} {sim:>8.0f} {model / sim:>6.3f}")
    for bias, r in ratios.items():
        err = np.abs(np.array(r) - 1)
        print(f"bias={bias}: model/cycle model {min(r):.3f}-{max(r):.3f}, median error {np.median(err):.1%}")


if __name__ == "__main__":
    main()
