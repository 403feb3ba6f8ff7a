"""baco's GEMM kernel (examples/matmul.py's, default schedule) and Conv2D kernel against the
Gemmini C library's code on the cycle model, shape by shape.

    python benchmarks/kernels.py [--dims 16 32] [--count 20] [--shapes MxNxK ...] [--conv-count 20] [--no-gemm]
        [--resnet-512] [--seed 0]
        [--out int32|int8] [--top-k 4] [--smoke] [--loop-ws] [--loop-conv] [--library-bin DIR] [--padded-b]

For each Gemmini (DIM 16 and 32, 256 KB scratchpad, 64 KB accumulator) and each
shape: baco's kernel compiled with baco.gemmini.schedule.default_gemm_schedule and
the C library's tiled_matmul_auto + LOOP_WS stream (baco.sim.clib) are timed by
baco.sim.timing.TimingModel twice: on Gemmini alone (the commands arrive for free) and end
to end, with the CPU that issues them counted. baco end to end is the kernel's RISC-V program
on the ISS with the cycle model attached (the CPU at one instruction per cycle, waiting on
Gemmini's queues), timed by rdcycle around the grid loop and its fence as the library's perf
tests time a kernel (no self-check; benchmarks' `end_to_end`); the library end to end is its
stream issued by its tile loop at `library_tile_instructions` per tile (baco.sim.clib
time_matmul / time_conv with cpu_tile_instructions). Printed: the program form (LOOP_WS when the default blocks fit
the loop unit's halves, else the explicit stream), both cycle counts, RISC-V instructions per
RoCC command, end-to-end utilization (MACs / DIM² / cycles), and baco's speed-ups over the
library, with the geometric means per DIM. First, tiled_matmul_ws_perf's shape (128x256x256,
bias, int8 output) end to end against the library's stream and, with --library-bin (the
gemmini-rocc-tests bin/ folder), against that real ELF's rdcycle count. The autotuned
column is the schedule @baco.autotune picks with no configs (baco.frontend.autotune: the
schedule space ranked by the compiled-program cost model, the --top-k best and the default
schedule timed end to end, each as its ELF on the ISS with the cycle model; choices cached under
BACO_CACHE_DIR/autotune) and its end-to-end speed-up over the default schedule (goal: >= 1 on
every shape). With --padded-b, baco's B is stored in padded_rows(K, DIM) rows (the rows past K
padding), so each ragged K step is one padded LOOP_WS (baco.passes.loop_ws), as the library's stream
issues it: the library's LoopMatmul reads the same rows past a B of K rows (its programs pad their
arrays); without it, B has K rows and baco reads only those (a ragged step split in two).

Conv2D (--conv-count shapes, default 20, from the thesis's Conv2D bands, Table 6.5, with
images capped at 28x28 and channels at 256 so they run here; stride 1, 'same' padding, int8
output): baco.kernels.conv.conv2d with its default schedule against the C library's
tiled_conv_auto (baco.sim.clib.conv_stream: one LOOP_CONV_WS per tile), same columns
(baco blocks "R x Q/N/K": R output rows of Q columns per program), Gemmini alone and end to
end as for the GEMMs, with the program each compiles to (a pointwise conv: the GEMM kernel's
LOOP_WS or explicit stream; else LOOP_CONV_WS per program, "x n" when its input channels are split into n blocks, or the
explicit stream); per DIM the geomeans, the number of shapes where baco is slower end to end and
the worst ratio. --resnet-512 runs this section on ResNet-50's 512-channel 3x3 layers instead
(7x7 stride 1 and 14x14 stride 2, 512 -> 512 channels), which LoopConv runs only with the input
channels split.

LOOP_CONV_WS (--loop-conv: only this section; also in --smoke): baco's conv2d (int8, bias,
ReLU) compiled with and without the loop-conv-ws pass (baco.passes.loop_conv_ws: each program
one LOOP_CONV_WS) on six layers (ResNet-50's, a 7x7/2 stem, a dilated and a ragged one) at
DIM 16, under the default conv schedule (the fastest program that fits LoopConv's halves of the
memories, its input channels at once or in blocks, by LoopConv's timing: default_conv_schedule): RoCC
commands, cycles on the cycle model (Gemmini alone) and the self-checking ELF's CPU cycles
on the ISS with the cycle model (end to end).

LOOP_WS (--loop-ws: only this section; also in --smoke): baco's GEMM kernel compiled with and
without the loop-ws pass (baco.passes.loop_ws: each K step of a program one LOOP_WS) under
the default schedule, its M/N blocks halved until a program fits LOOP_WS's halves of the
memories: RoCC commands the CPU issues, cycles on the cycle model fed the command stream
(Gemmini alone, as the table above), and for the first --loop-ws-iss shapes the
self-checking ELF on the ISS with the cycle model attached (the CPU issuing at one
instruction per cycle): RISC-V instructions, end-to-end CPU cycles and ISS wall time.

Shapes: 512x512x512, then `--count` shapes drawn with a fixed seed from the GEMM
bands of the thesis's single-operator benchmark (Table 6.4 as benchmarks/single_op.py
defines them), half GEMM and half GEMV (N = 1), every dimension capped at 2048 so
the cycle model runs them here. A GEMV shape also times examples/gemv.py's kernel
(y = A·x with x a one-column block, loaded before A) on the next line. baco's kernel is timed from its command stream (the
stream does not depend on the data; bit-exactness is tested in tests/ and by
benchmarks/gemm_cycles.py). Goals (issue K): end to end, baco ≥ the library on every shape,
geomean ≥ 1.3x, and ≥ 0.90 of peak on 512³ at DIM 16.
"""
import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from baco.frontend.autotune import Autotuner, cost_model_pruner  # noqa: E402
from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.schedule import default_gemm_schedule, loop_ws_fits, padded_rows  # noqa: E402
from baco.kernels.matmul import matmul_kernel  # noqa: E402
from baco.sim.clib import time_matmul  # noqa: E402
from baco.sim.timing import DEFAULT_CONSTANTS, CommandStream, TimingModel  # noqa: E402

sys.path.insert(0, str(ROOT.parent / "examples"))
import gemv  # noqa: E402

CAP = 2048
LIBRARY_TILE = DEFAULT_CONSTANTS.library_tile_instructions   # the library's CPU work per tile it issues
SMOKE_SHAPES = [(48, 40, 72), (70, 1, 100)]
CONV_CAP_HW, CONV_CAP_CH = 28, 256
SMOKE_CONVS = [(6, 20, 17, 3)]
RESNET50_512 = [(7, 512, 512, 3, 1), (14, 512, 512, 3, 2)]    # ResNet-50's 512-channel 3x3 layers (H = W, C, K, R, stride)


def sampled_shapes(count: int, seed: int) -> list:
    from single_op import GEMM_BANDS, log_uniform
    rng = np.random.default_rng(seed)
    shapes = []
    for i in range(count):
        m_band, n_band, k_band = GEMM_BANDS[int((i // 2 + 0.5) * len(GEMM_BANDS) / max(1, count // 2))
                                            % len(GEMM_BANDS)]
        clip = lambda band: (min(band[0], CAP), min(band[1], CAP))  # noqa: E731
        m, k = log_uniform(rng, *clip(m_band)), log_uniform(rng, *clip(k_band))
        n = log_uniform(rng, *clip(n_band)) if i % 2 == 0 else 1
        shapes.append((m, n, k))
    return shapes


def conv_shapes(count: int, seed: int) -> list:
    """(H = W, C, K, R) drawn with a fixed seed from the thesis's Conv2D bands (Table 6.5 as
    benchmarks/single_op.py defines them), images capped at CONV_CAP_HW and channels at
    CONV_CAP_CH so the cycle model runs them here; stride 1, 'same' padding."""
    from single_op import CONV_BANDS, log_uniform
    rng = np.random.default_rng(seed)
    shapes = []
    for i in range(count):
        (lo, hi), filt, channels = CONV_BANDS[int((i + 0.5) * len(CONV_BANDS) / count) % len(CONV_BANDS)]
        size = log_uniform(rng, min(lo, CONV_CAP_HW), min(hi, CONV_CAP_HW))
        c, k = (min(int(rng.choice(channels)), CONV_CAP_CH) for _ in range(2))
        shapes.append((size, c, k, filt))
    return shapes


def conv_section(dims, shapes) -> int:
    """baco's conv2d (default schedule; int8 output) against tiled_conv_auto on the cycle model;
    returns the number of shapes where baco is slower. A shape is (H = W, C, K, R[, stride]),
    'same' padding."""
    from baco.kernels.conv import conv2d_launch
    from baco.sim.clib import time_conv
    slower = 0
    for dim in dims:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        print(f"Conv2D, DIM {dim} (256 KB scratchpad, 64 KB accumulator), int8 output, 'same' padding")
        print(f"{'H=W':>4} {'C':>5} {'K':>5} {'RxS/st':>6}  {'baco blocks':>15} {'program':>15} {'baco cycles':>12} {'end to end':>11} "
              f"{'instr/cmd':>9}  {'library':>10} {'end to end':>11}  {'speed-up':>8} {'e2e':>6}")
        ratios, e2e_ratios = [], []
        for size, C, K, R, *rest in shapes:
            stride = rest[0] if rest else 1
            x, w = np.zeros((1, size, size, C), np.int8), np.zeros((R, R, C, K), np.int8)
            launch = conv2d_launch(x, w, stride=stride, padding=R // 2, scale=0.05, config=cfg)
            ours = launch.cycles()["cycles"]
            ours_e2e = end_to_end(launch.kernel, launch.grid, launch.args, launch.options, cfg,
                                  launch._runtime_args())
            lib_kw = dict(stride=stride, padding=R // 2, scale=0.05)
            lib = time_conv(1, size, size, C, K, R, cfg, **lib_kw)["cycles"]
            lib_e2e = time_conv(1, size, size, C, K, R, cfg, cpu_tile_instructions=LIBRARY_TILE, **lib_kw)["cycles"]
            ratios.append(lib / ours)
            e2e_ratios.append(lib_e2e / ours_e2e["kernel_cycles"])
            slower += e2e_ratios[-1] < 1
            s = launch.schedule
            m = f"{s.rows}x{s.block_m}" if s.rows > 1 else f"{s.block_m}"      # output rows x columns per program
            print(f"{size:>4} {C:>5} {K:>5} {f'{R}x{R}/{stride}':>6}  {f'{m}/{s.block_n}/{s.block_k}':>15} "
                  f"{conv_form(launch, size, C, K, R, cfg, stride):>15} "
                  f"{ours:>12,.0f} {ours_e2e['kernel_cycles']:>11,} "
                  f"{ours_e2e['instructions'] / ours_e2e['commands']:>9.1f}  {lib:>10,.0f} {lib_e2e:>11,.0f}  "
                  f"{lib / ours:>7.2f}x {e2e_ratios[-1]:>5.2f}x", flush=True)
        geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
        print(f"geomean Conv2D speed-up over the library at DIM {dim}: Gemmini alone {geo(ratios):.2f}x, end to end "
              f"{geo(e2e_ratios):.2f}x over {len(ratios)} shapes; end to end slower on "
              f"{sum(r < 1 for r in e2e_ratios)}, worst {min(e2e_ratios):.2f}x\n")
    return slower


def conv_form(launch, size, C, K, R, cfg, stride=1) -> str:
    """The program conv_section's 'same'-padded conv `launch` compiles to: a pointwise conv run by
    the GEMM kernel is that kernel's (form), any other LOOP_CONV_WS programs when its tile fits
    LoopConv's halves (one per input channel block: "LOOP_CONV_WS x n" for n blocks), else the
    explicit stream."""
    from baco.gemmini.schedule import loop_conv_channels
    from baco.kernels.conv import output_size
    s = launch.schedule
    if launch.kernel is matmul_kernel:
        return f"GEMM {form(s, cfg)}"
    P = output_size(size, R, stride, R // 2, 1)
    channels = loop_conv_channels(s, P, P, K, C, R, R, stride, 1, cfg)
    if channels is None:
        return "explicit"
    return "LOOP_CONV_WS" if channels == C else f"LOOP_CONV_WS x{-(-C // channels)}"


def launch_args(M, N, K, out_int8, b_rows=None):
    """The GEMM kernel's arguments for M x N x K (zero data), B stored in `b_rows` rows (K if None)."""
    a, b = np.zeros((M, K), np.int8), np.zeros((b_rows or K, N), np.int8)
    c = np.zeros((M, N), np.int8 if out_int8 else np.int32)
    return [a, b, c, M, N, K, K, 1, N, 1, N, 1, 0.05 if out_int8 else 1.0]


def time_baco(M, N, K, cfg, out_int8, s, b_rows=None):
    """Cycles of baco's kernel under schedule `s`, timed from its command stream."""
    args = launch_args(M, N, K, out_int8, b_rows)
    ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=out_int8, schedule=s, config=cfg)
    tm = TimingModel(cfg)
    ck.run((-(-M // s.block_m), -(-N // s.block_n)), args, model=CommandStream(), observers=[tm.observe])
    tm.fence()
    return tm.report()


def end_to_end(kernel, grid, args, options, cfg, runtime=None) -> dict:
    """The launch as a RISC-V program on the ISS with the cycle model attached (the runner ELF, no
    self-check; the CPU at one instruction per cycle issues the commands and waits on Gemmini's
    queues): `kernel_cycles` (rdcycle around the grid loop and its fence, as the C library's perf
    tests time a kernel), RISC-V `instructions` of the run and RoCC `commands`. `runtime`: the
    run's arguments when they are not `args` (an optional bias after them)."""
    ck = kernel.compile(*args, target="iss", **options)
    return ck.run(grid, runtime or args, timing=TimingModel(cfg))


def baco_end_to_end(M, N, K, cfg, out_int8, s, bias=False, b_rows=None):
    """end_to_end of baco's GEMM kernel under schedule `s` (zero data: the stream does not depend on it)."""
    args = launch_args(M, N, K, out_int8, b_rows)
    options = dict(RELU=False, OUT_INT8=out_int8, schedule=s, config=cfg)
    if bias:
        options["bias_ptr"] = np.zeros(N, np.int32)
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    return end_to_end(matmul_kernel, grid, args, options, cfg, args + ([options["bias_ptr"]] if bias else []))


def form(s, cfg) -> str:
    """The program a WS GEMM schedule compiles to: LOOP_WS when its blocks fit the loop unit's halves."""
    return "LOOP_WS" if s.dataflow == "WS" and loop_ws_fits(s.block_m, s.block_n, s.block_k, cfg) else "explicit"


def time_gemv(M, K, cfg, out_int8):
    """Cycles of examples/gemv.py's y = A·x kernel (its default blocks), from its command stream."""
    ck, grid, args, _ = gemv.launch("Ax", np.zeros((M, K), np.int8), np.zeros(K, np.int8),
                                    out="int8" if out_int8 else "int32", scale=0.05 if out_int8 else 1.0, config=cfg)
    tm = TimingModel(cfg)
    ck.run(grid, args, model=CommandStream(), observers=[tm.observe])
    tm.fence()
    return tm.report()["cycles"]


def autotuned(M, N, K, cfg, out_int8, top_k, b_rows=None):
    """The schedule @baco.autotune chooses with no configs (the schedule space ranked by the cost
    model, `top_k` best plus the default schedule timed end to end) and its end-to-end cycles."""
    tuner = Autotuner(matmul_kernel, None, ["M", "N", "K"], cost_model_pruner(top_k))
    grid = lambda m: (-(-m["M"] // m["BLOCK_M"]), -(-m["N"] // m["BLOCK_N"]))  # noqa: E731
    best = tuner.choose(grid, launch_args(M, N, K, out_int8, b_rows), dict(RELU=False, OUT_INT8=out_int8, config=cfg))
    s = best.schedule()
    return s, tuner.timings[best] if best in tuner.timings else \
        baco_end_to_end(M, N, K, cfg, out_int8, s, b_rows=b_rows)["kernel_cycles"]


def loop_ws_schedule(M, N, K, cfg, out_int8):
    """The default schedule with its larger M/N block halved (then block_k) until a program
    fits LOOP_WS's halves of the memories."""
    s = default_gemm_schedule(M, N, K, cfg, out_int8)
    while not loop_ws_fits(s.block_m, s.block_n, s.block_k, cfg):
        if max(s.block_m, s.block_n) > cfg.dim:
            s = replace(s, **({"block_m": s.block_m // 2} if s.block_m >= s.block_n else {"block_n": s.block_n // 2}))
        else:
            s = replace(s, block_k=max(cfg.dim, s.block_k // 2))
    return s


def time_launch(ck, grid, args, cfg):
    """(RoCC commands issued, cycle-model cycles) of one launch, from its command stream."""
    tm = TimingModel(cfg)
    info = ck.run(grid, args, model=CommandStream(), observers=[tm.observe])
    tm.fence()
    return info["commands"], tm.report()["cycles"]


def iss_launch(ck, grid, args, cfg, expected, path):
    """(instructions, CPU cycles, wall seconds) of the launch's self-checking ELF on the ISS
    with the cycle model attached; the ELF must pass."""
    from baco.sim.iss import run_elf
    ck.build_elf(grid, args, path, expected={2: expected})
    res = run_elf(path, config=cfg, timing=TimingModel(cfg), stdout=None)
    if res.exit_code != 0:
        raise SystemExit(f"{path}: the self-checking ELF failed ({res.error or res.exit_code})")
    return res.instructions, res.cpu_cycles, res.elapsed_s


def loop_ws_section(dims, shapes, out_int8, iss_count) -> None:
    import tempfile
    from baco.kernels.matmul import reference
    for dim in dims:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        print(f"LOOP_WS at DIM {dim}, {'int8' if out_int8 else 'int32'} output: explicit stream -> LOOP_WS per K step")
        print(f"{'M':>5} {'N':>5} {'K':>5}  {'blocks':>13}  {'RoCC commands':>17}  {'cycles (Gemmini alone)':>29}  "
              f"{'ISS instructions':>19}  {'ISS CPU cycles':>23}  {'ISS seconds':>11}")
        ratios, iss_ratios = [], []
        for n, (M, N, K) in enumerate(shapes):
            s = loop_ws_schedule(M, N, K, cfg, out_int8)
            rng = np.random.default_rng(M + N + K)
            a = rng.integers(-128, 128, (M, K), dtype=np.int8)
            b = rng.integers(-128, 128, (K, N), dtype=np.int8)
            args = launch_args(M, N, K, out_int8)
            args[0], args[1] = a, b
            grid = (-(-M // s.block_m), -(-N // s.block_n))
            expected = reference(a, b, out="int8" if out_int8 else "int32", scale=args[-1], schedule=s)
            runs = []
            for on in (False, True):
                ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=out_int8, schedule=s, config=cfg, loop_ws=on)
                commands, cycles = time_launch(ck, grid, args, cfg)
                iss = None
                if n < iss_count:
                    with tempfile.TemporaryDirectory() as tmp:
                        iss = iss_launch(ck, grid, args, cfg, expected, f"{tmp}/k.elf")
                runs.append((commands, cycles, iss))
            (c0, y0, i0), (c1, y1, i1) = runs
            ratios.append(y0 / y1)
            line = (f"{M:>5} {N:>5} {K:>5}  {f'{s.block_m}/{s.block_n}/{s.block_k}':>13}  {c0:>8,} {c1:>8,}  "
                    f"{y0:>10,.0f} {y1:>10,.0f} {y0 / y1:>6.2f}x")
            if i0 is not None:
                iss_ratios.append(i0[1] / i1[1])
                line += (f"  {i0[0]:>9,} {i1[0]:>9,}  {i0[1]:>10,} {i1[1]:>10,} {i0[1] / i1[1]:>5.2f}x"
                         f"  {i0[2]:>5.1f} {i1[2]:>5.1f}")
            print(line)
        geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
        print(f"LOOP_WS speed-up at DIM {dim}: Gemmini alone geomean {geo(ratios):.2f}x (min {min(ratios):.2f}x)"
              + (f"; ISS end to end geomean {geo(iss_ratios):.2f}x (min {min(iss_ratios):.2f}x)" if iss_ratios else ""))
        print()


# (name, H = W, C, K, R = S, stride, padding, dilation) of the LOOP_CONV_WS section: ResNet-50 layers
# (images capped at 28x28), a stem, a dilated and a ragged convolution
LOOP_CONVS = [
    ("ResNet-50 conv3 3x3", 28, 128, 128, 3, 1, 1, 1),
    ("ResNet-50 conv3_1 3x3/2", 28, 64, 128, 3, 2, 1, 1),
    ("ResNet-50 conv4 1x1/2", 28, 256, 512, 1, 2, 0, 1),
    ("7x7/2 stem", 32, 3, 64, 7, 2, 3, 1),
    ("3x3 dilation 2", 14, 64, 64, 3, 1, 2, 2),
    ("ragged 3x3", 14, 33, 65, 3, 1, 1, 1),
]
SMOKE_LOOP_CONVS = [("ragged 3x3", 6, 17, 20, 3, 1, 1, 1)]


def loop_conv_section(convs, iss_count) -> None:
    """baco's conv2d (int8, bias, ReLU) with and without loop-conv-ws (baco.passes.loop_conv_ws: each
    program one LOOP_CONV_WS) under the default conv schedule, at DIM 16."""
    import tempfile
    from baco.gemmini.schedule import loop_conv_channels
    from baco.kernels.conv import conv2d_launch, output_size, reference_conv2d
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    print("LOOP_CONV_WS at DIM 16, int8 output with bias and ReLU: explicit stream -> one LOOP_CONV_WS a program")
    print(f"{'layer':>24} {'H':>3} {'C':>4} {'K':>4} {'RxS/st/dil':>10}  {'blocks':>12}  {'RoCC commands':>17}  "
          f"{'cycles (Gemmini alone)':>29}  {'ISS CPU cycles (end to end)':>30}")
    ratios, iss_ratios = [], []
    for n, (name, size, C, K, R, stride, pad, dil) in enumerate(convs):
        rng = np.random.default_rng(n)
        x = rng.integers(-128, 128, (1, size, size, C), dtype=np.int8)
        w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
        bias = rng.integers(-5000, 5000, K).astype(np.int32)
        kw = dict(stride=stride, padding=pad, dilation=dil, scale=1 / 256, relu=True)
        s = conv2d_launch(x, w, bias, config=cfg, **kw).schedule
        Q = output_size(size, R, stride, pad, dil)
        if loop_conv_channels(s, Q, Q, K, C, R, R, stride, dil, cfg) is None:
            print(f"{name:>24}: the default schedule does not fit LoopConv's halves")
            continue
        runs = []
        for on in (False, True):
            launch = conv2d_launch(x, w, bias, config=cfg, blocks=s, **kw)
            launch.options["loop_ws"] = on
            ck = launch.kernel.compile(*launch.args, target="sim", **launch.options)
            commands, cycles = time_launch(ck, launch.grid, launch._runtime_args(), cfg)
            iss = None
            if n < iss_count:
                from baco.sim.iss import run_elf
                with tempfile.TemporaryDirectory() as tmp:
                    launch.write_elf(f"{tmp}/k.elf", reference_conv2d(x, w, bias, **kw))
                    res = run_elf(f"{tmp}/k.elf", config=cfg, timing=TimingModel(cfg), stdout=None)
                if res.exit_code != 0:
                    raise SystemExit(f"{name}: the self-checking ELF failed ({res.error or res.exit_code})")
                iss = res.cpu_cycles
            runs.append((commands, cycles, iss))
        (c0, y0, i0), (c1, y1, i1) = runs
        ratios.append(y0 / y1)
        m = f"{s.rows}x{s.block_m}" if s.rows > 1 else f"{s.block_m}"
        line = (f"{name:>24} {size:>3} {C:>4} {K:>4} {f'{R}x{R}/{stride}/{dil}':>10}  "
                f"{f'{m}/{s.block_n}/{s.block_k}':>12}  {c0:>8,} {c1:>8,}  {y0:>10,.0f} {y1:>10,.0f} {y0 / y1:>6.2f}x")
        if i0 is not None:
            iss_ratios.append(i0 / i1)
            line += f"  {i0:>11,} {i1:>11,} {i0 / i1:>5.2f}x"
        print(line, flush=True)
    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    if ratios:
        print(f"LOOP_CONV_WS speed-up at DIM 16: Gemmini alone geomean {geo(ratios):.2f}x (min {min(ratios):.2f}x)"
              + (f"; ISS end to end geomean {geo(iss_ratios):.2f}x (min {min(iss_ratios):.2f}x)" if iss_ratios else ""))
    print()


PERF_SHAPE = (128, 256, 256)     # gemmini-rocc-tests' tiled_matmul_ws_perf: int8 C = A·B + a repeating bias


def perf_shape_section(library_bin) -> None:
    """tiled_matmul_ws_perf's GEMM (128x256x256 at DIM 16, int32 bias row, int8 output) under
    baco's default schedule, Gemmini alone and end to end, against the library: its stream
    (baco.sim.clib, with the repeating bias) and, with `library_bin` (gemmini-rocc-tests'
    bin/ folder), the real ELF's own rdcycle count ("Cycles taken") under the same ISS and
    cycle model."""
    import re
    M, N, K = PERF_SHAPE
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    s = default_gemm_schedule(M, N, K, cfg, True, bias=True)
    args = launch_args(M, N, K, True)
    bias = np.zeros(N, np.int32)
    options = dict(RELU=False, OUT_INT8=True, schedule=s, config=cfg, bias_ptr=bias)
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    ck = matmul_kernel.compile(*args, **options)
    tm = TimingModel(cfg)
    ck.run(grid, args + [bias], model=CommandStream(), observers=[tm.observe])
    tm.fence()
    e2e = end_to_end(matmul_kernel, grid, args, options, cfg, args + [bias])
    lib = time_matmul(M, N, K, cfg, out_int8=True, bias="repeating", cpu_tile_instructions=LIBRARY_TILE)["cycles"]
    print(f"tiled_matmul_ws_perf's shape {M}x{N}x{K} + bias, int8 output, DIM 16: baco {s.block_m}/{s.block_n}/"
          f"{s.block_k} ({form(s, cfg)}) {e2e['commands']:,} commands, {tm.report()['cycles']:,.0f} cycles on "
          f"Gemmini alone, {e2e['kernel_cycles']:,} end to end ({e2e['instructions'] / e2e['commands']:.1f} "
          f"instructions per command); library stream {lib:,.0f} end to end: {lib / e2e['kernel_cycles']:.2f}x")
    if library_bin:
        from baco.sim.iss import run_elf
        elf = Path(library_bin) / "tiled_matmul_ws_perf-baremetal"
        res = run_elf(elf, config=cfg, timing=TimingModel(cfg), stdout=None)
        taken = re.search(r"Cycles taken: (\d+)", res.console or "")
        if res.exit_code != 0 or taken is None:
            raise SystemExit(f"{elf}: did not run to its cycle count ({res.error or res.exit_code})")
        real = int(taken.group(1))
        print(f"  the library's own ELF ({elf.name}): {res.gemmini_commands} commands, {real:,} cycles end to end "
              f"(rdcycle): baco {real / e2e['kernel_cycles']:.2f}x")
    print()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dims", type=int, nargs="+", default=[16, 32])
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--shapes", nargs="+", metavar="MxNxK", help="these GEMM shapes instead of 512^3 and the drawn ones")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", choices=["int32", "int8"], default="int32")
    p.add_argument("--top-k", type=int, default=4, help="autotune: schedules kept by the cost model")
    p.add_argument("--no-autotune", action="store_true", help="without the autotuned column")
    p.add_argument("--padded-b", action="store_true",
                   help="GEMM table: baco's B stored in ceil(K/DIM)*DIM rows (a ragged K step one padded LOOP_WS)")
    p.add_argument("--conv-count", type=int, default=20, help="Conv2D shapes (0: none)")
    p.add_argument("--no-gemm", action="store_true", help="only the Conv2D shapes")
    p.add_argument("--resnet-512", action="store_true",
                   help="the Conv2D section on ResNet-50's 512-channel 3x3 layers (7x7, and 14x14 stride 2)")
    p.add_argument("--smoke", action="store_true", help="two tiny GEMM shapes and one Conv2D at DIM 16")
    p.add_argument("--loop-ws", action="store_true", help="only the LOOP_WS section")
    p.add_argument("--loop-ws-iss", type=int, default=4, help="LOOP_WS section: shapes also run on the ISS")
    p.add_argument("--loop-conv", action="store_true", help="only the LOOP_CONV_WS section")
    p.add_argument("--library-bin", help="gemmini-rocc-tests' built ELFs (bin/): also time the real "
                                         "tiled_matmul_ws_perf ELF")
    p.add_argument("--loop-conv-iss", type=int, default=len(LOOP_CONVS),
                   help="LOOP_CONV_WS section: shapes also run on the ISS")
    args = p.parse_args(argv)
    if args.loop_conv or args.smoke:
        loop_conv_section(SMOKE_LOOP_CONVS if args.smoke else LOOP_CONVS, 1 if args.smoke else args.loop_conv_iss)
        if args.loop_conv:
            return 0
    if args.loop_ws or args.smoke:
        shapes = SMOKE_SHAPES if args.smoke else [(512, 512, 512)] + sampled_shapes(args.count, args.seed)
        loop_ws_section([16] if args.smoke else args.dims, shapes, args.out == "int8",
                        1 if args.smoke else args.loop_ws_iss)
        if args.loop_ws:
            return 0
    perf_shape_section(args.library_bin)
    out_int8 = args.out == "int8"
    shapes = SMOKE_SHAPES if args.smoke else [(512, 512, 512)] + sampled_shapes(args.count, args.seed)
    if args.shapes:
        try:
            shapes = [tuple(int(v) for v in shape.lower().split("x", 2)) for shape in args.shapes]
        except ValueError:
            p.error(f"--shapes: each shape is MxNxK, got {args.shapes}")
        if any(len(shape) != 3 or min(shape) < 1 for shape in shapes):
            p.error(f"--shapes: each shape is MxNxK of positive sizes, got {args.shapes}")
    dims = [16] if args.smoke else args.dims
    if args.no_gemm:
        shapes = []
    slower = slower_e2e = tuned_worse = 0
    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    for dim in dims if shapes else []:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        print(f"DIM {dim} (256 KB scratchpad, 64 KB accumulator), {args.out} output; cycles on Gemmini alone "
              f"(commands free) and end to end (ISS, the CPU issuing them; library: its tile loop's cost)"
              + ("; baco's B padded to whole DIM rows" if args.padded_b else ""))
        print(f"{'M':>5} {'N':>5} {'K':>5}  {'baco blocks':>15} {'program':>8} {'baco cycles':>12} {'end to end':>11} "
              f"{'instr/cmd':>9} {'util e2e':>8}  {'library':>10} {'end to end':>11}  {'speed-up':>8} {'e2e':>6}  "
              f"{'tuned blocks':>17} {'tuned e2e':>12} {'vs default':>10}")
        ratios, e2e_ratios, tuned_ratios, gemv_ratios = [], [], [], []
        for M, N, K in shapes:
            b_rows = padded_rows(K, dim) if args.padded_b else K
            s = default_gemm_schedule(M, N, K, cfg, out_int8, b_padded=b_rows == padded_rows(K, dim))
            ours = time_baco(M, N, K, cfg, out_int8, s, b_rows)["cycles"]
            ours_e2e = baco_end_to_end(M, N, K, cfg, out_int8, s, b_rows=b_rows)
            default_e2e = ours_e2e["kernel_cycles"]
            ts, tuned = (s, default_e2e) if args.no_autotune else autotuned(M, N, K, cfg, out_int8, args.top_k, b_rows)
            tuned_ratios.append(default_e2e / tuned)
            tuned_worse += tuned > default_e2e
            lib_kw = dict(out_int8=out_int8, scale=0.05 if out_int8 else 1.0)
            lib = time_matmul(M, N, K, cfg, **lib_kw)["cycles"]
            lib_e2e = time_matmul(M, N, K, cfg, cpu_tile_instructions=LIBRARY_TILE, **lib_kw)["cycles"]
            ratios.append(lib / ours)
            e2e_ratios.append(lib_e2e / ours_e2e["kernel_cycles"])
            slower += ratios[-1] < 1
            slower_e2e += e2e_ratios[-1] < 1
            util = M * N * K / (dim * dim * ours_e2e["kernel_cycles"])
            print(f"{M:>5} {N:>5} {K:>5}  {f'{s.block_m}/{s.block_n}/{s.block_k}':>15} {form(s, cfg):>8} "
                  f"{ours:>12,.0f} {ours_e2e['kernel_cycles']:>11,} "
                  f"{ours_e2e['instructions'] / ours_e2e['commands']:>9.1f} {util:>8.3f}  {lib:>10,.0f} {lib_e2e:>11,.0f}  "
                  f"{ratios[-1]:>7.2f}x {e2e_ratios[-1]:>5.2f}x  "
                  f"{f'{ts.block_m}/{ts.block_n}/{ts.block_k}' + ('/db' if ts.double_buffer else ''):>17} "
                  f"{tuned:>12,.0f} {default_e2e / tuned:>9.2f}x", flush=True)
            if N == 1:
                g = time_gemv(M, K, cfg, out_int8)
                gemv_ratios.append(lib / g)
                print(f"{'':>19}examples/gemv.py {g:>12,.0f} (Gemmini alone) {lib / g:>7.2f}x")
        print(f"geomean speed-up over the library at DIM {dim}: Gemmini alone {geo(ratios):.2f}x, end to end "
              f"{geo(e2e_ratios):.2f}x (min {min(e2e_ratios):.2f}x, slower on {sum(r < 1 for r in e2e_ratios)}) "
              f"over {len(ratios)} shapes; autotuned over the default schedule: {geo(tuned_ratios):.3f}x")
        if gemv_ratios:
            print(f"examples/gemv.py over the library on the {len(gemv_ratios)} GEMV shapes: geomean "
                  f"{geo(gemv_ratios):.2f}x, min {min(gemv_ratios):.2f}x")
        print()
    convs = SMOKE_CONVS if args.smoke else RESNET50_512 if args.resnet_512 else conv_shapes(args.conv_count, args.seed)
    conv_slower = conv_section(dims, convs) if convs else 0
    print(f"shapes where baco is slower than the library: {slower} GEMM ({slower_e2e} end to end), {conv_slower} "
          f"Conv2D; where the autotuned schedule is slower than the default: {tuned_worse}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
