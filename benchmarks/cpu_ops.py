"""What the CPU operators (baco/model/cpu_ops.py) cost on the RISC-V core.

    python benchmarks/cpu_ops.py [--smoke]

Each operator, at a size it has in the networks of issue H (MobileNetV3's squeeze-excite and
hardswish, ResNet's global average pool, a BERT-base layer's softmax and layernorm), runs as its
runner ELF on the ISS (baco.sim.iss: one instruction per cycle) on random int8 data; the output
must equal the host JIT's bit for bit (exit 1 otherwise). Prints the instructions retired and
instructions per output element, measured in this run (the ELF's start-up, ~100 instructions,
included), beside what the CPU cost table the tuner uses predicts (baco.model.cpu_cost, fitted on
such runs at smaller shapes) and the ratio of the two.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from baco.model import cpu_ops  # noqa: E402
from baco.model.cpu_cost import cpu_instructions  # noqa: E402

ONES, ZEROS = np.ones(768, np.float32), np.zeros(768, np.float32)
# (name, build(scale) -> kernel); `scale` shrinks the shapes for --smoke
CASES = [
    ("global avg pool 7x7x512 (ResNet)", lambda s: cpu_ops.adaptive_avg_pool2d(
        (1, 7, 7, 512 // s), 1, in_scale=0.02, out_scale=0.01)),
    ("avg_pool2d 3/2/1 28x28x64", lambda s: cpu_ops.avg_pool2d(
        (1, 28 // s, 28 // s, 64), 3, 2, 1, in_scale=0.02, out_scale=0.01)),
    ("max_pool2d 3/2/1 56x56x64", lambda s: cpu_ops.max_pool2d((1, 56 // s, 56 // s, 64), 3, 2, 1)),
    ("hardswish LUT 56x56x16 (MobileNetV3)", lambda s: cpu_ops.lut(
        (1, 56 // s, 56 // s, 16), cpu_ops.lut_table("hardswish", 0.05, 0.05))),
    ("SE avg pool 28x28x96 (MobileNetV3)", lambda s: cpu_ops.adaptive_avg_pool2d(
        (1, 28 // s, 28 // s, 96), 1, in_scale=0.02, out_scale=0.01)),
    ("SE multiply 28x28x96 (MobileNetV3)", lambda s: cpu_ops.mul_channel(
        (1, 28 // s, 28 // s, 96), x_scale=0.03, s_scale=1 / 127, out_scale=0.03)),
    ("add + ReLU 28x28x64", lambda s: cpu_ops.add(
        (1, 28 // s, 28 // s, 64), a_scale=0.03, b_scale=0.04, out_scale=0.05, relu=True)),
    ("softmax 128x128 (BERT head)", lambda s: cpu_ops.softmax((128 // s, 128), in_scale=0.05, out_scale=1 / 127)),
    ("layernorm 128x768 (BERT)", lambda s: cpu_ops.layernorm(
        (128 // s, 768), ONES, ZEROS, in_scale=0.05, out_scale=0.03)),
    ("GELU LUT 128x3072 (BERT)", lambda s: cpu_ops.lut(
        (128 // s, 3072 // s), cpu_ops.lut_table("gelu", 0.05, 0.05))),
    ("permute 1x14x14x96 NHWC->NCHW", lambda s: cpu_ops.permute((1, 14 // s, 14 // s, 96), (0, 3, 1, 2))),
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="shapes shrunk 7x (a quick check that it runs)")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'operator':40s} {'instructions':>13s} {'per output':>11s} {'table':>13s} {'table/ISS':>9s}")
    bad = 0
    for name, build in CASES:
        kernel = build(7 if args.smoke else 1)
        inputs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in kernel.arg_shapes[:kernel.n_inputs]]
        host, iss = (np.zeros(kernel.arg_shapes[-1], np.int8) for _ in range(2))
        kernel(*inputs, host)
        stats = kernel.run_iss(*inputs, iss)
        ok = np.array_equal(host, iss)
        bad += not ok
        table = cpu_instructions(kernel)
        print(f"{name:40s} {stats['instructions']:>13,d} {stats['instructions'] / iss.size:>11.1f} {table:>13,.0f} "
              f"{table / stats['instructions']:>9.2f}" + ("" if ok else "  MISMATCH host vs ISS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
