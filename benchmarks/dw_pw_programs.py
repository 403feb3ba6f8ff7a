"""The fused depthwise -> pointwise program's model against the program (issue I, item 4).

    python benchmarks/dw_pw_programs.py [--smoke] [--pairs]

Each launch of baco.kernels.fused_dwpw (its default blocks, dw_pw_blocks) runs as a RISC-V
program on the ISS with the cycle model attached (baco.sim.timing; its output checked bit for bit
against reference_dw_pw) and is predicted by baco.gemmini.fused.dw_pw_program_cycles. Printed per
program: the ISS's end-to-end cycles (rdcycle around the grid loop and its fence), the model's,
their ratio, the RISC-V instructions (the launch's own: rdcycle around the grid loop on the ISS
without the cycle model, as benchmarks/cpu_constants.py counts the fused chain's) beside
DW_PW_INSTRUCTIONS' count, and the model's Gemmini alone (alone=True: the commands arriving for
free) beside the cycle model's time of the launch's command stream; then the fit of those
constants (non-negative least squares of the relative error, benchmarks/cpu_constants.py's),
Pearson r of log cycles and the median relative error end to end (goals r >= 0.95, median <= 15%)
and the range of Gemmini alone against the cycle model.
--smoke: two small programs.

--pairs: the fused program against the unfused pair on MobileNetV1-like shapes (PAIRS): the depthwise
kernel (baco.kernels.depthwise, its default schedule) then the 1x1 convolution of its int8 output
(baco.kernels.conv), each a program on the ISS with the cycle model; printed per shape the three
end-to-end cycle counts, fused/unfused, the RISC-V instructions and RoCC commands of each, and the
fused launch's Gemmini-alone cycles (the cycle model on its command stream, the core issuing for free).
Exits 0 iff every program is bit-exact.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu_constants import nnls_relative  # noqa: E402

from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.fused import DW_PW_INSTRUCTIONS, DwPwBlocks, dw_pw_program_cycles, dw_pw_program_terms  # noqa: E402
from baco.kernels.conv import conv2d_launch  # noqa: E402
from baco.kernels.depthwise import depthwise_launch  # noqa: E402
from baco.kernels.fused_dwpw import dw_pw_launch, reference_dw_pw  # noqa: E402
from baco.sim.timing import TimingModel  # noqa: E402

# (DIM, N, H, C, K, stride): ragged channels and images, both strides, one and several programs; the
# last six with input channels not a multiple of DIM and output channels a multiple of BLOCK_N, or
# the other way round (DW_PW_INSTRUCTIONS' ragged_c_step and ragged_k_block apart: in the first
# twelve both or neither)
PROGRAMS = [(16, 1, 7, 17, 33, 1), (16, 1, 13, 33, 17, 2), (16, 1, 15, 65, 65, 1), (16, 2, 13, 65, 33, 2),
            (16, 1, 15, 128, 128, 1), (16, 1, 28, 32, 64, 1), (32, 1, 7, 65, 17, 1), (32, 1, 15, 33, 65, 2),
            (32, 1, 13, 96, 96, 1), (32, 1, 28, 64, 64, 2), (16, 1, 14, 256, 64, 1), (32, 1, 14, 128, 256, 1),
            (16, 1, 15, 40, 64, 1), (16, 1, 15, 64, 40, 1), (32, 1, 13, 72, 64, 1), (32, 1, 14, 64, 72, 2),
            (16, 1, 9, 24, 128, 1), (16, 1, 11, 96, 24, 2)]
SMOKE = [(16, 1, 7, 17, 33, 1), (32, 1, 7, 33, 17, 2)]
# MobileNetV1-like pairs (DIM, N, H, C, K, stride): a stride-2 block of the 28x28 stage, one of the 14x14x512
# blocks, and stride-1 pairs of a width-0.25 network at 64x64
PAIRS = [(16, 1, 28, 64, 128, 2), (16, 1, 14, 512, 512, 1), (16, 1, 32, 8, 16, 1), (16, 1, 16, 32, 32, 1),
         (16, 1, 8, 64, 64, 1), (16, 1, 4, 128, 128, 1), (16, 1, 2, 256, 256, 1)]


def operands(N, H, C, K, stride):
    """The pair's int8 input and weights, int32 biases and dw_pw_launch's keywords (seeded by the shape)."""
    rng = np.random.default_rng(N + H + C + K)
    i8 = lambda *s: rng.integers(-128, 128, s, dtype=np.int8)  # noqa: E731
    x, wd, wp = i8(N, H, H, C), i8(3, 3, C), i8(C, K)
    bd, bp = rng.integers(-3000, 3000, C).astype(np.int32), rng.integers(-3000, 3000, K).astype(np.int32)
    kw = dict(stride=stride, padding=1, scale1=1 / 300, scale2=1 / (40 * math.sqrt(C)), relu1=True, relu2=False)
    return (x, wd, bd, wp, bp), kw


def run_on_iss(launch, timed: bool = True) -> dict:
    """The launch as a RISC-V program on the ISS with the cycle model attached (its run's info);
    timed=False: without it (kernel_cycles then counts the launch's own instructions: rdcycle around
    the grid loop at one cycle an instruction). Compiled for its grid, as launch.run builds it (a
    shape-specialized kernel folds its program ids)."""
    ck = launch.compiled("iss")
    return ck.run(launch.grid, launch.runtime_args(), timing=TimingModel(launch.config) if timed else None)


def measure(dim, N, H, C, K, stride) -> dict:
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    (x, wd, bd, wp, bp), kw = operands(N, H, C, K, stride)
    launch = dw_pw_launch(x, wd, bd, wp, bp, config=cfg, **kw)
    info = run_on_iss(launch)
    o = launch.options
    blocks = DwPwBlocks(o["BLOCK_M"], o["ROWS"], o["BLOCK_N"])
    P = launch.y.shape[1]
    shape = (N, H, P, P, C, K, 3, 3, stride, 1, 1, blocks, cfg)
    return {"name": f"DIM {dim} {N}x{H}x{H}x{C} -> {K} /{stride} blocks {tuple(blocks)}",
            "exact": bool(np.array_equal(launch.y, reference_dw_pw(x, wd, bd, wp, bp, **kw))),
            "iss": info["kernel_cycles"], "instructions": run_on_iss(launch, timed=False)["kernel_cycles"],
            "model": dw_pw_program_cycles(*shape, alone=True), "terms": dw_pw_program_terms(*shape),
            "gemmini": launch.cycles()["cycles"]}


def versus_unfused(dim, N, H, C, K, stride) -> bool:
    """Print the fused program's and the unfused pair's ISS cycles on one shape; whether all three
    programs were bit-exact."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    (x, wd, bd, wp, bp), kw = operands(N, H, C, K, stride)
    expected = reference_dw_pw(x, wd, bd, wp, bp, **kw)
    fused = dw_pw_launch(x, wd, bd, wp, bp, config=cfg, **kw)
    depthwise = depthwise_launch(x, wd, bd, stride=stride, padding=1, scale=kw["scale1"], relu=kw["relu1"], config=cfg)
    runs = [run_on_iss(fused), run_on_iss(depthwise)]
    pointwise = conv2d_launch(depthwise.y, wp.reshape(1, 1, C, K), bp, scale=kw["scale2"], relu=kw["relu2"], config=cfg)
    runs.append(run_on_iss(pointwise))
    exact = all(np.array_equal(v, expected) for v in (fused.y, pointwise.y))
    f, d, pw = (r["kernel_cycles"] for r in runs)
    o = fused.options
    print(f"DIM {dim} {N}x{H}x{H}x{C} -> {K} /{stride} (fused blocks {o['BLOCK_M']}/{o['ROWS']}/{o['BLOCK_N']}): "
          f"fused {f:,} cycles, unfused {d + pw:,} (depthwise {d:,} + pointwise {pw:,}), fused/unfused "
          f"{f / (d + pw):.2f}; bit-exact {exact}")
    for name, r in zip(("fused", "depthwise", "pointwise"), runs):
        print(f"    {name:>9}: {r['instructions']:>9,} instructions, {r['commands']:>6,} RoCC commands")
    print(f"    the fused launch's Gemmini alone: {fused.cycles()['cycles']:,.0f} cycles", flush=True)
    return exact


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two small programs")
    p.add_argument("--pairs", action="store_true", help="the fused program against the unfused pair (PAIRS)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    if args.pairs:
        return 0 if all([versus_unfused(*spec) for spec in PAIRS]) else 1
    rows = []
    print(f"{'program':>52} {'exact':>5} {'ISS cycles':>10} {'model':>10} {'model/ISS':>9} "
          f"{'instructions':>12} {'model/ISS':>9} {'Gemmini alone/cycle model':>25}")
    for spec in SMOKE if args.smoke else PROGRAMS:
        r = measure(*spec)
        t, c = r["terms"], DW_PW_INSTRUCTIONS
        modelled = sum(c[term] * t[term + "s"] for term in c)
        rows.append(r)
        print(f"{r['name']:>52} {str(r['exact']):>5} {r['iss']:>10,} {r['model']['cycles']:>10,.0f} "
              f"{r['model']['cycles'] / r['iss']:>9.2f} {r['instructions']:>12,} {modelled / r['instructions']:>9.2f} "
              f"{r['model']['gemmini'] / r['gemmini']:>25.3f}", flush=True)
    keys = list(DW_PW_INSTRUCTIONS)
    fit_rows = [(r["name"], {k: r["terms"][k + "s"] for k in keys}, r["instructions"]) for r in rows]
    if len(rows) >= len(keys):
        print(f"DW_PW_INSTRUCTIONS in use {DW_PW_INSTRUCTIONS}; fitted {nnls_relative(fit_rows, keys)}")
    logs = np.log([[r["model"]["cycles"], r["iss"]] for r in rows])
    r_log = float(np.corrcoef(logs.T)[0, 1]) if len(rows) > 2 else float("nan")
    errors = [abs(r["model"]["cycles"] / r["iss"] - 1) for r in rows]
    print(f"{len(rows)} programs: log r {r_log:.3f}, median error {100 * statistics.median(errors):.1f}%, "
          f"model/ISS {min(r['model']['cycles'] / r['iss'] for r in rows):.2f}-"
          f"{max(r['model']['cycles'] / r['iss'] for r in rows):.2f}x; Gemmini alone "
          f"{min(r['model']['gemmini'] / r['gemmini'] for r in rows):.2f}-"
          f"{max(r['model']['gemmini'] / r['gemmini'] for r in rows):.2f}x of the cycle model")
    return 0 if all(r["exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
