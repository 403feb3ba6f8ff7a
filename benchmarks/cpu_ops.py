"""What the CPU operators (baco/model/cpu_ops.py) cost on the RISC-V core.

    python benchmarks/cpu_ops.py [--smoke] [--pools] [--refit]

Each operator, at a size it has in the networks of issue H (MobileNetV3's squeeze-excite and
hardswish, ResNet's global average pool, a BERT-base layer's softmax and layernorm), runs as its
runner ELF on the ISS (baco.sim.iss: one instruction per cycle) on random int8 data; the output
must equal the host JIT's bit for bit (exit 1 otherwise). Prints the instructions retired and
instructions per output element, measured in this run (the ELF's start-up, ~100 instructions,
included), beside what the CPU cost table the tuner uses predicts (baco.model.cpu_cost, fitted on
such runs at smaller shapes) and the ratio of the two.

--refit: the rows of the elementwise and row operators (lut, add, add_relu, mul_channel, softmax,
masked_softmax, layernorm, copy) measured the same way at ROW_FIT's shapes and at held-out ones
(ROW_HELD), each beside the table in use and a refit over its row's terms on the fitted shapes.

--pools: the average pools' rows (avg_pool2d, adaptive_avg_pool2d) measured the same way at the
shapes they are fitted on (POOL_FIT: ResNet's, MobileNet's, DenseNet's, Inception's and VGG's pools
at 64 and 224, odd ones) and at held-out ones (POOL_HELD), each beside the table in use and a
refit (benchmarks/cpu_constants.nnls_relative over the row's work terms, on the fitted shapes).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from baco.model import cpu_ops  # noqa: E402
from baco.model.cpu_cost import CPU_INSTRUCTIONS, cpu_instructions  # noqa: E402
from cpu_constants import nnls_relative  # noqa: E402

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

# the pools' work terms the refit may use; not `calls`: the ELF's start-up (~100 instructions) is
# nothing beside a pool's work, and left free it takes ~2,400 a call for how LLVM's unrolling of a
# global pool's window varies the cost of a tap
POOL_TERMS = ("rows", "outputs", "taps", "window_rows", "clipped_taps", "clipped_window_rows")


def avg_pool(shape, kernel, stride, padding, ceil_mode=False, count_include_pad=True):
    return cpu_ops.avg_pool2d(shape, kernel, stride, padding, ceil_mode, count_include_pad, in_scale=0.02,
                              out_scale=0.01)


def adaptive_pool(shape, out):
    return cpu_ops.adaptive_avg_pool2d(shape, out, in_scale=0.02, out_scale=0.01)


# (operator, its arguments): DenseNet's 2x2/2 transitions (at 224, channels cut; at 64), Inception's
# 3x3/1 pad 1 (at 299 and 64), 3x3/2 pad 1, odd sizes, a ceil-mode pool without the padding counted;
# the global pools of ResNet-18/50, MobileNetV2 and MobileNetV3's squeeze-excite at 64 and 224, VGG's
# adaptive 7x7 (at 64 it upsamples 2x2, at 224 it is 7x7 -> 7x7), odd ones
POOL_FIT = [
    ("avg_pool2d", ((1, 56, 56, 32), 2, 2, 0)), ("avg_pool2d", ((1, 16, 16, 128), 2, 2, 0)),
    ("avg_pool2d", ((1, 8, 8, 256), 2, 2, 0)), ("avg_pool2d", ((1, 28, 28, 64), 3, 2, 1)),
    ("avg_pool2d", ((1, 35, 35, 16), 3, 1, 1)), ("avg_pool2d", ((1, 17, 17, 48), 3, 1, 1)),
    ("avg_pool2d", ((1, 8, 8, 64), 3, 1, 1)), ("avg_pool2d", ((1, 7, 7, 33), 3, 2, 0)),
    ("avg_pool2d", ((1, 17, 17, 16), 3, 2, 1)), ("avg_pool2d", ((1, 13, 13, 17), 2, 2, 0)),
    ("avg_pool2d", ((1, 9, 9, 5), 5, 2, 2)), ("avg_pool2d", ((1, 12, 12, 8), 3, 2, 1, True, False)),
    ("avg_pool2d", ((2, 6, 6, 3), 2, 2, 0)),
    ("adaptive_avg_pool2d", ((1, 7, 7, 512), 1)), ("adaptive_avg_pool2d", ((1, 2, 2, 2048), 1)),
    ("adaptive_avg_pool2d", ((1, 2, 2, 1280), 1)), ("adaptive_avg_pool2d", ((1, 7, 7, 1280), 1)),
    ("adaptive_avg_pool2d", ((1, 28, 28, 96), 1)), ("adaptive_avg_pool2d", ((1, 56, 56, 16), 1)),
    ("adaptive_avg_pool2d", ((1, 2, 2, 512), 7)), ("adaptive_avg_pool2d", ((1, 7, 7, 512), 7)),
    ("adaptive_avg_pool2d", ((1, 14, 14, 64), 7)), ("adaptive_avg_pool2d", ((1, 17, 17, 33), 3)),
]
POOL_HELD = [
    ("avg_pool2d", ((1, 14, 14, 96), 2, 2, 0)), ("avg_pool2d", ((1, 33, 33, 17), 3, 2, 1)),
    ("avg_pool2d", ((1, 8, 8, 65), 3, 1, 1, False, False)), ("avg_pool2d", ((1, 65, 65, 1), 3, 2, 1)),
    ("avg_pool2d", ((1, 10, 10, 24), 4, 4, 0)),
    ("adaptive_avg_pool2d", ((1, 7, 7, 2048), 1)), ("adaptive_avg_pool2d", ((1, 4, 4, 960), 1)),
    ("adaptive_avg_pool2d", ((1, 5, 5, 65), 2)), ("adaptive_avg_pool2d", ((1, 33, 33, 17), 1)),
    ("adaptive_avg_pool2d", ((1, 3, 3, 512), 7)),
]
POOL_BUILDERS = {"avg_pool2d": avg_pool, "adaptive_avg_pool2d": adaptive_pool}


def _keep(rows, cols):
    """An attention mask of rows x cols keeping its first column and about 3 in 4 of the rest."""
    keep = np.random.default_rng(rows * cols).random((rows, cols)) < 0.75
    keep[:, 0] = True
    return keep


# --refit: the elementwise and row operators' rows, fitted on ROW_FIT's shapes (MobileNetV3's,
# ResNet's and a BERT layer's sizes, smaller; elements in groups of cpu_ops.UNROLL and not; rows of
# 32 values or more, as the networks' softmaxes and layernorms have: LLVM unrolls shorter ones) and
# checked on ROW_HELD's, each over the terms of its row in use
ROW_BUILDERS = {
    "lut": lambda shape: cpu_ops.lut(shape, cpu_ops.lut_table("hardswish", 0.05, 0.05)),
    "add": lambda shape: cpu_ops.add(shape, a_scale=0.03, b_scale=0.04, out_scale=0.05),
    "add_relu": lambda shape: cpu_ops.add(shape, a_scale=0.03, b_scale=0.04, out_scale=0.05, relu=True),
    "mul_channel": lambda shape: cpu_ops.mul_channel(shape, x_scale=0.03, s_scale=1 / 127, out_scale=0.03),
    "softmax": lambda shape: cpu_ops.softmax(shape, in_scale=0.05, out_scale=1 / 127),
    "masked_softmax": lambda shape: cpu_ops.softmax(shape, in_scale=0.05, out_scale=1 / 127, keep=_keep(*shape)),
    "layernorm": lambda shape: cpu_ops.layernorm(shape, ONES[:shape[-1]], ZEROS[:shape[-1]], in_scale=0.05,
                                                 out_scale=0.03),
    "copy": lambda shape: cpu_ops.copy(shape),
}
IMAGES = [(1, 8, 8, 16), (1, 28, 28, 24), (1, 14, 14, 40), (1, 4, 4, 96), (1, 2, 2, 576), (1, 7, 7, 3), (1, 9, 9, 5),
          (1, 6, 6, 20)]
MATRICES = [(32, 32), (64, 128), (16, 768), (16, 33), (8, 64)]
ROW_FIT = {op: IMAGES for op in ("lut", "add", "add_relu", "mul_channel", "copy")} | \
    {op: MATRICES for op in ("softmax", "masked_softmax", "layernorm")}
ROW_HELD = {op: [(1, 56, 56, 16), (1, 28, 28, 96), (1, 5, 5, 17), (1, 1, 1, 1024)]
            for op in ("lut", "add", "add_relu", "mul_channel", "copy")} | \
    {op: [(128, 128), (128, 768), (12, 97), (8, 16), (4, 8)] for op in ("softmax", "masked_softmax", "layernorm")}


def iss_instructions(kernel, rng) -> tuple[int, bool]:
    """(instructions the ISS retires running the kernel's runner ELF on random int8 inputs, whether
    its output equals the host JIT's)."""
    inputs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in kernel.arg_shapes[:kernel.n_inputs]]
    host, iss = (np.zeros(kernel.arg_shapes[-1], np.int8) for _ in range(2))
    kernel(*inputs, host)
    stats = kernel.run_iss(*inputs, iss)
    return stats["instructions"], bool(np.array_equal(host, iss))


def refit(op, build, cases, terms, rng) -> int:
    """Operator `op`'s row against the ISS at `cases` ((split "fit" or "held", arguments of
    `build`)) beside the table in use and its refit over `terms` on the "fit" ones; the number of
    runs whose ISS output differs from the host JIT's."""
    runs = []
    for split, args in cases:
        kernel = build(*args)
        count, ok = iss_instructions(kernel, rng)
        runs.append((split, args, kernel.work, count, ok))
    fitted = nnls_relative([(None, work, count) for split, _, work, count, _ in runs if split == "fit"], terms)
    print(f"\n{op}: in use {CPU_INSTRUCTIONS[op]}\n  refit {fitted}")
    print(f"  {'':5s} {'arguments':44s} {'instructions':>12s} {'per output':>10s} {'in use / ISS':>12s} "
          f"{'refit / ISS':>11s}")
    for split, args, work, count, ok in runs:
        use, fit = (sum(c * work[t] for t, c in table.items()) / count for table in (CPU_INSTRUCTIONS[op], fitted))
        print(f"  {split:5s} {str(args):44s} {count:>12,d} {count / work['outputs']:>10.2f} {use:>12.2f} {fit:>11.2f}"
              + ("" if ok else "  MISMATCH host vs ISS"))
    return sum(not ok for *_, ok in runs)


def pools(rng) -> int:
    """The average pools' rows against the ISS at POOL_FIT and POOL_HELD, and their refit."""
    return sum(refit(op, build, [(split, args) for split, cases in (("fit", POOL_FIT), ("held", POOL_HELD))
                                 for o, args in cases if o == op], POOL_TERMS, rng)
               for op, build in POOL_BUILDERS.items())


def refit_rows(rng) -> int:
    """The elementwise and row operators' rows against the ISS at ROW_FIT and ROW_HELD, and their refit
    over each row's terms."""
    return sum(refit(op, build, [(split, (shape,)) for split, cases in (("fit", ROW_FIT[op]), ("held", ROW_HELD[op]))
                                 for shape in cases], tuple(CPU_INSTRUCTIONS[op]), rng)
               for op, build in ROW_BUILDERS.items())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="shapes shrunk 7x (a quick check that it runs)")
    p.add_argument("--pools", action="store_true", help="the average pools' rows against the ISS, and their refit")
    p.add_argument("--refit", action="store_true",
                   help="the elementwise and row operators' rows (LUT, adds, SE multiply, softmaxes, layernorm, "
                        "copy) against the ISS, and their refit")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    if args.pools:
        return 1 if pools(rng) else 0
    if args.refit:
        return 1 if refit_rows(rng) else 0
    print(f"{'operator':40s} {'instructions':>13s} {'per output':>11s} {'table':>13s} {'table/ISS':>9s}")
    bad = 0
    for name, build in CASES:
        kernel = build(7 if args.smoke else 1)
        count, ok = iss_instructions(kernel, rng)
        bad += not ok
        table = cpu_instructions(kernel)
        outputs = np.prod(kernel.arg_shapes[-1])
        print(f"{name:40s} {count:>13,d} {count / outputs:>11.1f} {table:>13,.0f} {table / count:>9.2f}"
              + ("" if ok else "  MISMATCH host vs ISS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
