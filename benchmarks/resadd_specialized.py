"""The residual add (baco.kernels.resadd) compiled for its shapes and grid against the program
compiled for any shape, and against the C library's tiled_resadd_auto, end to end on the ISS with
the cycle model (rdcycle around the grid loop and its fence: `kernel_cycles`).

    python benchmarks/resadd_specialized.py [--smoke] [--dim 16] [--shapes RxC ...]

Per add (rows x channels, int8, ReLU, the kernel's default view and blocks): the view and blocks,
the grid, kernel cycles, LOOP_WSs and RISC-V instructions compiled for any shape
(specialize_shapes=False) and for its shapes (specialize_shapes="iss", the kernel's default on the
ISS), their ratio, both bit-exact against numpy; the library's stream on the same cycle model
(baco.sim.clib.resadd_stream, library_stream_cycles: its per-tile CPU work and closing fence) and
the specialized program's ratio to it; then the cycles of the launches a whole model runs
(resadd_launches: for an add whose elements are not whole DIM rows, whole DIM rows and one short
row, resadd.default_views), their sum's ratio to the library's, and the views. Default shapes: ResNet-18's adds at batch 1 (56x56x64,
28x28x128, 14x14x256, 7x7x512), ResNet-50's 56x56x256 and 7x7x2048, small and ragged adds.
"""
import argparse
import sys

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.kernels.resadd import reference, resadd_launch, resadd_launches
from baco.sim import clib
from baco.sim.timing import TimingModel

SHAPES = [(3136, 64), (784, 128), (196, 256), (49, 512), (3136, 256), (49, 2048), (64, 64), (16, 16), (1, 17),
          (33, 17), (17, 33), (100, 72), (65, 129), (17, 513), (255, 255)]
SA, SB, OUT = 0.5, 0.75, 0.5


def run(M, N, cfg, specialize) -> dict:
    """kernel_cycles, LOOP_WS count, instructions of the launch on the ISS with the cycle model."""
    rng = np.random.default_rng(7 * M + N)
    a, b = (rng.integers(-128, 128, (M, N), dtype=np.int8) for _ in range(2))
    launch = resadd_launch(a, b, SA, SB, OUT, config=cfg)
    ck = launch.compiled("iss", specialize_shapes=specialize)
    r = ck.run(launch.grid, launch.runtime_args(), timing=TimingModel(cfg))
    if not (launch.y == reference(a, b, SA, SB, OUT)).all():
        raise SystemExit(f"{M}x{N} specialize_shapes={specialize!r}: not bit-exact")
    return dict(cycles=r["kernel_cycles"], loops=r["result"].stats.get("loop_ws", 0), instructions=r["instructions"],
                view="x".join(map(str, launch.args[3:5])), blocks=f"{launch.options['BLOCK_M']}x{launch.options['BLOCK_N']}",
                grid=tuple(launch.grid))


def run_launches(M, N, cfg) -> tuple[int, str]:
    """(summed kernel_cycles, the views) of resadd_launches' launches on the ISS with the cycle model."""
    rng = np.random.default_rng(7 * M + N)
    a, b = (rng.integers(-128, 128, (M, N), dtype=np.int8) for _ in range(2))
    launches, c = resadd_launches(a, b, SA, SB, OUT, config=cfg)
    cycles = sum(launch.compiled("iss").run(launch.grid, launch.runtime_args(), timing=TimingModel(cfg))["kernel_cycles"]
                 for launch in launches)
    if not (c == reference(a, b, SA, SB, OUT)).all():
        raise SystemExit(f"{M}x{N} resadd_launches: not bit-exact")
    return cycles, "+".join("x".join(map(str, launch.args[3:5])) for launch in launches)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--shapes", nargs="+", help="RxC adds (default: the module doc's)")
    p.add_argument("--smoke", action="store_true", help="two small adds")
    args = p.parse_args(argv)
    cfg = GemminiConfig.from_capacity(args.dim, 256, 64 if args.dim == 16 else 128)
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes] if args.shapes else \
        [(16, 16), (33, 17)] if args.smoke else SHAPES
    print(f"{'add':>10} {'view':>9} {'blocks':>7} {'grid':>8} | {'any shape':>9} {'loops':>5} {'instr':>6} | "
          f"{'its shape':>9} {'loops':>5} {'instr':>6} | {'ratio':>5} | {'library':>8} {'ratio':>5} | "
          f"{'launches':>8} {'ratio':>5} views")
    ratios = []
    for M, N in shapes:
        u, s = run(M, N, cfg, False), run(M, N, cfg, "iss")
        lib = clib.library_stream_cycles(clib.resadd_stream(M, N, cfg, a_scale=SA, b_scale=SB, c_scale=OUT, relu=True),
                                         TimingModel(cfg))
        ratios.append(s["cycles"] / u["cycles"])
        launched, views = run_launches(M, N, cfg)
        print(f"{M}x{N:<5} {u['view']:>9} {u['blocks']:>7} {str(u['grid']):>8} | {u['cycles']:9,} {u['loops']:5} "
              f"{u['instructions']:6,} | {s['cycles']:9,} {s['loops']:5} {s['instructions']:6,} | {ratios[-1]:5.3f} | "
              f"{lib:8,.0f} {s['cycles'] / lib:5.3f} | {launched:8,} {launched / lib:5.3f} {views}", flush=True)
    print(f"its shape / any shape: {min(ratios):.3f}-{max(ratios):.3f}x, geomean {np.exp(np.mean(np.log(ratios))):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
