"""The CPU's share of a kernel: RISC-V instructions per RoCC command and end-to-end time on the
ISS (the CPU at one instruction per cycle driving Gemmini, the cycle model attached), for the
explicit command stream and the hardware-loop program (LOOP_WS, LOOP_CONV_WS) of the same kernel,
in one run.

    python benchmarks/cpu_issue.py [--dim 16] [--smoke]

Per kernel and variant (explicit: BACO_LOOP_WS=0; LOOP_WS / LOOP_CONV_WS: the loop-ws and
loop-conv-ws passes on, where they apply): RoCC commands the CPU issues, RISC-V instructions of the launch (the harness's grid
loop and the kernel; the runner ELF, no self-check), instructions per command, Gemmini's
cycles alone (the cycle model fed the command stream, no CPU) and the ISS's CPU cycles end to
end (issue at 1 IPC, waits on Gemmini's queues, the final fence). The output is checked bit
for bit against numpy. `CPU/Gemmini` over 1 means the CPU, not the array, sets the pace.

Kernels: GEMM 512x512x512 under the default schedule with blocks halved until LOOP_WS fits
(benchmarks/kernels.py's loop_ws_schedule), a ragged GEMM 17x33x65 (default schedule), and a
3x3 convolution of ResNet-50's conv4 stage (14x14, 256 -> 256 channels, 'same' padding, int8
output; default schedule). --smoke: GEMM 40x40x40 and a 4x4 8->8 3x3 convolution.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.schedule import default_gemm_schedule  # noqa: E402
from baco.kernels.conv import conv2d_launch, reference_conv2d  # noqa: E402
from baco.kernels.matmul import matmul_kernel, reference  # noqa: E402
from baco.sim.timing import CommandStream, TimingModel  # noqa: E402
from kernels import loop_ws_schedule  # noqa: E402

GEMMS = [(512, 512, 512), (17, 33, 65)]
CONVS = [(14, 256, 256, 3)]          # (H = W, C, K, R)
SMOKE_GEMMS = [(40, 40, 40)]
SMOKE_CONVS = [(4, 8, 8, 3)]


def measure(kernel, grid, args, options, cfg, out_index, expected) -> dict:
    """Commands, instructions and cycles of one launch on the ISS with the cycle model
    attached (its output checked against `expected`), and Gemmini's cycles alone from the
    host's command stream. `args` are the runtime arguments, the output at `out_index`."""
    runtime = list(args)
    runtime[out_index] = np.zeros_like(args[out_index])
    ck = kernel.compile(*runtime, target="iss", config=cfg, grid=grid, **options)
    info = ck.run(grid, runtime, timing=TimingModel(cfg))
    if not np.array_equal(runtime[out_index], expected):
        raise SystemExit(f"{kernel.__name__} {options}: the ISS result differs from numpy's")
    host = kernel.compile(*runtime, target="sim", config=cfg, grid=grid, **options)
    tm = TimingModel(cfg)
    host.run(grid, runtime, model=CommandStream(), observers=[tm.observe])
    tm.fence()
    return {"commands": info["commands"], "instructions": info["instructions"],
            "cpu_cycles": info["cpu_cycles"], "gemmini_cycles": tm.report()["cycles"]}


def gemm_case(M, N, K, cfg, explicit_schedule):
    rng = np.random.default_rng(M * 7 + N * 5 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    s = loop_ws_schedule(M, N, K, cfg, False) if explicit_schedule else default_gemm_schedule(M, N, K, cfg, False)
    c = np.zeros((M, N), np.int32)
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, 1.0]
    expected = reference(a, b, schedule=s)
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    return ("LOOP_WS", f"GEMM {M}x{N}x{K}", f"{s.block_m}/{s.block_n}/{s.block_k}", matmul_kernel, grid, args,
            dict(RELU=False, OUT_INT8=False, schedule=s), 2, expected)


def conv_case(size, C, K, R, cfg):
    rng = np.random.default_rng(size + C + K)
    x = rng.integers(-128, 128, (1, size, size, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    launch = conv2d_launch(x, w, padding=R // 2, scale=1 / 256, config=cfg)
    expected = reference_conv2d(x, w, padding=R // 2, scale=1 / 256)
    s = launch.schedule
    blocks = f"{s.rows}x{s.block_m}" if s.rows > 1 else f"{s.block_m}"
    args = launch.args + ([] if launch.bias is None else [launch.bias])
    options = {k: v for k, v in launch.options.items() if k != "config"}
    return ("LOOP_CONV_WS", f"conv {R}x{R} {size}x{size} {C}>{K}", f"{blocks}/{s.block_n}/{s.block_k}", launch.kernel,
            launch.grid, args, options, 2, expected)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--smoke", action="store_true", help="small shapes (seconds)")
    args = p.parse_args(argv)
    cfg = GemminiConfig.from_capacity(args.dim, 256, 64)
    cases = [gemm_case(M, N, K, cfg, i == 0) for i, (M, N, K) in enumerate(SMOKE_GEMMS if args.smoke else GEMMS)]
    cases += [conv_case(*shape, cfg) for shape in (SMOKE_CONVS if args.smoke else CONVS)]
    print(f"DIM {args.dim} (256 KB scratchpad, 64 KB accumulator); ISS: 1 instruction per CPU cycle")
    print(f"{'kernel':>24} {'blocks':>13} {'variant':>12}  {'RoCC cmds':>9} {'instructions':>12} {'instr/cmd':>9}  "
          f"{'Gemmini cycles':>14} {'ISS CPU cycles':>14} {'CPU/Gemmini':>11}")
    for hw_loop, name, blocks, kernel, grid, kargs, options, out_index, expected in cases:
        rows = {}
        for variant, on in (("explicit", False), (hw_loop, True)):
            r = measure(kernel, grid, kargs, dict(options, loop_ws=on), cfg, out_index, expected)
            if on and r["commands"] == rows["explicit"]["commands"] and \
                    r["instructions"] == rows["explicit"]["instructions"]:
                print(f"{'':>24} {'':>13} {variant:>12}  (the pass does not apply)")
                continue
            rows[variant] = r
            print(f"{name if not on else '':>24} {blocks if not on else '':>13} {variant:>12}  {r['commands']:>9,} "
                  f"{r['instructions']:>12,} {r['instructions'] / r['commands']:>9.2f}  {r['gemmini_cycles']:>14,.0f} "
                  f"{r['cpu_cycles']:>14,} {r['cpu_cycles'] / r['gemmini_cycles']:>11.2f}", flush=True)
        if len(rows) == 2:
            e, lw = rows["explicit"], rows[hw_loop]
            print(f"{'':>24} {'':>13} {'':>12}  end to end, explicit / {hw_loop}: "
                  f"{e['cpu_cycles'] / lw['cpu_cycles']:.2f} ({'explicit' if e['cpu_cycles'] < lw['cpu_cycles'] else hw_loop}"
                  f" faster); Gemmini alone: {e['gemmini_cycles'] / lw['gemmini_cycles']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
