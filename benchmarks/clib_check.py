"""baco.sim.clib's re-creation of the C library's command streams against the library's own
programs (gemmini-rocc-tests, built: tiled_matmul_ws_perf, conv_perf, mlp1..mlp4).

Each real program runs on the ISS with the cycle model attached (what `baco sim --timing` runs)
and prints the rdcycle count of its timed regions (tiled_matmul_auto, tiled_conv_auto, each
MLP layer); the re-created stream for the same layer is timed on the same cycle model twice:
Gemmini alone (commands free) and issued by the CPU with the library's fitted per-tile work
(TimingConstants.library_tile_instructions, baco.sim.clib.time_stream). A program's timed
region includes its CPU: the tile loop's instructions, and waits for LoopMatmul's slots.

    python benchmarks/clib_check.py --bin DIR      (DIR: the built gemmini-rocc-tests programs)
    python benchmarks/clib_check.py --bin DIR --programs mlp2 conv_perf
    python benchmarks/clib_check.py --smoke [--bin DIR]

--smoke runs tiled_matmul_ws_perf when --bin is given, and without it only the re-created
streams of small layers (nothing in benchmarks/ reads the reference folder by itself).

Measured (the 54 + 8 programs of gemmini-rocc-tests 180c46848eca as built in the reference
folder, DIM 16, the cycle model with two loops per loop unit): every timed region within 0.7% of
its re-created stream issued by the CPU (tiled_matmul_ws_perf 39,596 vs 39,775; conv_perf
1,388,180 vs 1,396,720; mlp1's six layers 0.1-0.7%, mlp2-mlp4 0.0-0.6%); Gemmini alone is
0.1-0.6% below the real programs on the large layers and 2-3.5% below on the small last layers
(64x64x512: 9,306 vs 9,640), whose few tiles leave the tile loop's CPU work exposed.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baco.gemmini.config import DEFAULT_CONFIG  # noqa: E402
from baco.sim.clib import time_conv, time_matmul  # noqa: E402
from baco.sim.elfinfo import read_config_note  # noqa: E402
from baco.sim.iss import run_elf  # noqa: E402
from baco.sim.timing import DEFAULT_CONSTANTS, TimingModel  # noqa: E402

# tiled_matmul_nn_auto(64, J, K, ..., RELU, scale 0): int8 out, no bias (mlps/mlpN.c)
MLP = dict(out_int8=True, relu=True, scale=0.0)
MLPS = {"mlp1": ((2560, 832), (2048, 2560), (1536, 2048), (1024, 1536), (512, 1024), (64, 512)),
        "mlp2": ((832, 832), (64, 832)), "mlp3": ((512, 448), (448, 512)), "mlp4": ((4608, 3072), (3072, 4608))}
# program -> its timed regions in order: (kind, shape, options of baco.sim.clib.time_matmul / time_conv)
PROGRAMS = {
    "tiled_matmul_ws_perf": [("matmul", (128, 256, 256), dict(out_int8=True, bias="repeating"))],
    "conv_perf": [("conv", (4, 224, 224, 3, 32, 3), dict(stride=2, padding=1, bias=True))],
    **{name: [("matmul", (64, n, k), MLP) for n, k in layers] for name, layers in MLPS.items()},
}
SMOKE_LAYERS = [("matmul", (40, 72, 100), dict(out_int8=True, bias="repeating")),
                ("conv", (1, 12, 12, 3, 16, 3), dict(stride=2, padding=1, bias=True))]
REGION = re.compile(r"Cycles taken(?: in layer \d+)?: (\d+)|took (\d+) cycles")


def library(kind, shape, opts, cfg):
    """(Gemmini-alone, CPU-issued) cycles of the re-created stream."""
    time = time_matmul if kind == "matmul" else time_conv
    return (time(*shape, cfg, **opts)["cycles"],
            time(*shape, cfg, cpu_tile_instructions=DEFAULT_CONSTANTS.library_tile_instructions, **opts)["cycles"])


def run_program(path: Path):
    """The rdcycle counts the program prints for its timed regions, on the ISS + cycle model."""
    cfg = read_config_note(path) or DEFAULT_CONFIG
    res = run_elf(path, config=cfg, timing=TimingModel(cfg), stdout=None)
    if res.exit_code != 0:
        raise SystemExit(f"{path.name} did not exit 0: {res.error or res.exit_code}\n{res.console}")
    return cfg, [int(a or b) for a, b in REGION.findall(res.console)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", type=Path, help="folder of the built gemmini-rocc-tests programs (*-baremetal)")
    p.add_argument("--programs", nargs="+", choices=sorted(PROGRAMS), default=sorted(PROGRAMS))
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args(argv)
    if args.bin is None and not args.smoke:
        p.error("--bin is needed (the programs to check the streams against), or --smoke")
    print(f"{'program':22s} {'region':>6s} {'shape':>22s} {'real':>10s} {'clib alone':>11s} {'ratio':>6s} "
          f"{'clib + CPU':>11s} {'ratio':>6s}")
    if args.bin is None:        # the re-created streams alone
        for kind, shape, opts in SMOKE_LAYERS:
            alone, issued = library(kind, shape, opts, DEFAULT_CONFIG)
            print(f"{'(no programs)':22s} {kind:>6s} {str(shape):>22s} {'-':>10s} {alone:11.0f} {'-':>6s} "
                  f"{issued:11.0f} {'-':>6s}")
        return 0
    worst = 0.0
    for name in (["tiled_matmul_ws_perf"] if args.smoke else args.programs):
        path = args.bin / f"{name}-baremetal"
        if not path.exists():
            raise SystemExit(f"{path}: not found")
        cfg, measured = run_program(path)
        regions = PROGRAMS[name]
        if len(measured) != len(regions):
            raise SystemExit(f"{name} printed {len(measured)} timed regions, expected {len(regions)}")
        for n, ((kind, shape, opts), real) in enumerate(zip(regions, measured)):
            alone, issued = library(kind, shape, opts, cfg)
            worst = max(worst, abs(issued / real - 1))
            print(f"{name:22s} {n:6d} {str(shape):>22s} {real:10d} {alone:11.0f} {alone / real:6.3f} "
                  f"{issued:11.0f} {issued / real:6.3f}")
    print(f"largest difference of the CPU-issued stream from the real program: {worst:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
