"""baco's GEMM kernel (examples/matmul.py's, default schedule) and Conv2D kernel against the
Gemmini C library's code on the cycle model, shape by shape.

    python benchmarks/kernels.py [--dims 16 32] [--count 20] [--shapes MxNxK ...] [--conv-count 20] [--no-gemm]
        [--resnet-512] [--seed 0]
        [--out int32|int8] [--top-k 4] [--smoke] [--loop-ws] [--loop-conv] [--library-bin DIR] [--padded-b]
        [--bound-only] [--rocket-muldiv]

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
The ISS prices every RISC-V instruction at one cycle; with --rocket-muldiv the runs on it price
the CPU's multiplies and divides as Rocket's iterative unit takes them at most
(timing_constants.ROCKET_MULDIV), the library's own ELF too; the library's re-created streams
keep their tile loop's instruction count (its divides unpriced, which favours the library).

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
geomean ≥ 1.3x over its set (tiled_matmul_ws_perf's shape, the 21 GEMM/GEMV and 20 Conv2D shapes at
DIM 16 and 32: the default run, whose last line is that geomean over every row it ran), and ≥ 0.90
of peak on 512³ at DIM 16. Measured (session 33, the default run with --no-autotune, 9.4 min): 83
rows, geomean 1.3365x, none slower; by section GEMM/GEMV 1.23x / 1.21x, Conv2D 1.32x / 1.65x.

The floor (--bound-only: only this section, no baco runs; also in --smoke; the "bound" and
"any" columns of the GEMM and Conv2D tables): per shape, a lower bound on the cycles a program
can take on that Gemmini under the cycle model's own rules (baco.sim.timing.TimingModel) and
constants (baco.gemmini.timing_constants, MIN_FEED_ROWS), so library cycles / floor is the
largest speed-up over the library such a program can have; printed Gemmini alone and end to
end (the library's tile loop counted), with geomeans per DIM and section, for
tiled_matmul_ws_perf's shape, the GEMM/GEMV shapes and the Conv2D shapes. Two floors: of tile
programs ("bound"; the library's and baco's programs are of this kind), whose array rows each
carry one output row's (pixel's) contraction in segments of at most DIM values through weight
blocks of at most DIM consecutive output columns, so K and N round up to DIM; and of any
program ("any"), which may also pack several output rows into one array row (block-diagonal
weights: two A rows of 8 in one row of 16 when K = 8, which Gemmini runs correctly). A program
moves every input element in (A and B, or the input pixels its valid taps read and those taps'
weights, and the bias) and every output element out at least once, and feeds every product
through the array; the CPU only delays Gemmini (a command is dispatched no earlier than it is
issued), so Gemmini alone bounds end to end. A floor is the largest of three terms, each a
lower bound on the model's finish:
- load: all data comes in by mvins (LOOP_WS and LoopConv issue mvins too) on one load unit, one
  command after another from cycle 1 (one dispatch a cycle). A mvin of r <= DIM rows (the ISA's
  limit) of at most max_block_len·DIM elements a row (max_block_len_acc·DIM int32 into the
  accumulator) occupies the unit dma_cmd_overhead + max(its rows' bus beats, ceil(r /
  max_in_flight)·dram_latency) (TimingModel._dma); summed over any split of a matrix that is at
  least the fewest commands' overheads + max(the matrix's bytes / bus bytes, dram_latency ·
  max(commands, rows / max_in_flight)) (dma_floor). The last mvin's data lands dram_latency
  after it and reaches DRAM only through a later mvout (at least overhead + dram_latency
  occupied, + acc_scale_latency from the accumulator, then dram_latency).
- execute: a compute occupies the unit max(rows, MIN_FEED_ROWS) + compute_overhead (DIM rows
  through the transposer or in OS: more) and feeds at most DIM rows; in WS a compute into new
  weights starts at least DIM cycles after the previous compute began (the weights stream in
  during its rows, perform_mul_pre, or alone after it, perform_single_preload), so every weight
  block but the last costs DIM (array_floor). A tile program streams each output row's
  ceil(K/DIM) segments once per block of DIM output columns: M·ceil(K/DIM)·ceil(N/DIM) rows
  through ceil(K/DIM)·ceil(N/DIM) weight blocks, ceil(M/DIM) computes each (a block holds one of
  the points k = 0, DIM, 2·DIM... x n = 0, DIM...) (a convolution: each output pixel's ceil(valid
  taps·C/DIM) segments, taps in the padding needing no product, times ceil(K/DIM)); or, for a
  GEMM, B's columns through A's weights, which puts A's columns in local rows and so needs the
  transposer (DIM rows a compute). Any program: an output element's partial sum in one row and
  column of a compute sums at most DIM products, so the rows are at least outputs ·
  ceil(contraction/DIM) / DIM, and the weight blocks hold the held operand's elements (the
  smaller of A and B, of the weights and the input read), DIM² a block. Before the first compute
  its operands' first mvin has landed (1 + overhead + 2·dram_latency); after the last, the
  array's depth (array_depth_factor·DIM) and a mvout.
- store: every output element leaves by mvouts (at most DIM rows; DIM columns at int32 full
  width, which only the accumulator holds: + acc_scale_latency each, and a tile program's
  accumulator row holds one output row's columns, so a request stays within a row of C unless
  N = 1; max_block_len·DIM int8), by dma_floor, after the first compute's result (the first data
  + MIN_FEED_ROWS + compute_overhead + the depth), the last dram_latency after its start.
Not counted, so the floors stay below the programs: capacity-forced reloads (A or B moved again
when they do not fit), config commands, the first weights' preload, hazards and queue stalls,
summing partial sums held in different accumulator columns (any program), the CPU (a LOOP_WS
program issues a handful of commands a loop). A program the cycle model times below a floor
(baco's or the library's, on Gemmini alone) stops the run.
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
from baco.gemmini.isa import MIN_FEED_ROWS  # noqa: E402
from baco.gemmini.schedule import default_gemm_schedule, loop_ws_fits, padded_rows  # noqa: E402
from baco.gemmini.timing_constants import ROCKET_MULDIV  # noqa: E402
from baco.kernels.matmul import matmul_kernel  # noqa: E402
from baco.sim.clib import time_matmul  # noqa: E402
from baco.sim.timing import DEFAULT_CONSTANTS, CommandStream, TimingModel  # noqa: E402

sys.path.insert(0, str(ROOT.parent / "examples"))
import gemv  # noqa: E402

CAP = 2048
LIBRARY_TILE = DEFAULT_CONSTANTS.library_tile_instructions   # the library's CPU work per tile it issues
# the cycle model's constants for the runs on the ISS (the CPU counted): --rocket-muldiv prices the
# CPU's multiplies and divides as Rocket's iterative unit at most (timing_constants.ROCKET_MULDIV)
ISS_CONSTANTS = DEFAULT_CONSTANTS
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


def conv_section(dims, shapes) -> list:
    """baco's conv2d (default schedule; int8 output) against tiled_conv_auto on the cycle model;
    returns the end-to-end speed-ups of every (shape, DIM). A shape is (H = W, C, K, R[, stride]),
    'same' padding."""
    from baco.kernels.conv import conv2d_launch
    from baco.sim.clib import time_conv
    speed_ups = []
    for dim in dims:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        print(f"Conv2D, DIM {dim} (256 KB scratchpad, 64 KB accumulator), int8 output, 'same' padding")
        print(f"{'H=W':>4} {'C':>5} {'K':>5} {'RxS/st':>6}  {'baco blocks':>15} {'program':>15} {'baco cycles':>12} {'end to end':>11} "
              f"{'instr/cmd':>9}  {'library':>10} {'end to end':>11}  {'speed-up':>8} {'e2e':>6} {'bound':>6} {'any':>6}")
        ratios, e2e_ratios = [], []
        for size, C, K, R, *rest in shapes:
            stride = rest[0] if rest else 1
            x, w = np.zeros((1, size, size, C), np.int8), np.zeros((R, R, C, K), np.int8)
            launch = conv2d_launch(x, w, stride=stride, padding=R // 2, scale=0.05, config=cfg)
            ours = launch.cycles()["cycles"]
            ours_e2e = end_to_end(launch.kernel, launch.grid, launch.args, launch.options, cfg,
                                  launch.runtime_args())
            lib_kw = dict(stride=stride, padding=R // 2, scale=0.05)
            lib = time_conv(1, size, size, C, K, R, cfg, **lib_kw)["cycles"]
            lib_e2e = time_conv(1, size, size, C, K, R, cfg, cpu_tile_instructions=LIBRARY_TILE, **lib_kw)["cycles"]
            where = f"conv {size}x{size}x{C}->{K} {R}x{R}/{stride}"
            floor = checked_floor(conv_floor(size, C, K, R, cfg, stride, R // 2, tiles=True), where, baco=ours,
                                  library=lib)
            any_floor = checked_floor(conv_floor(size, C, K, R, cfg, stride, R // 2), where + " (any program)",
                                      baco=ours, library=lib)
            ratios.append(lib / ours)
            e2e_ratios.append(lib_e2e / ours_e2e["kernel_cycles"])
            s = launch.schedule
            m = f"{s.rows}x{s.block_m}" if s.rows > 1 else f"{s.block_m}"      # output rows x columns per program
            print(f"{size:>4} {C:>5} {K:>5} {f'{R}x{R}/{stride}':>6}  {f'{m}/{s.block_n}/{s.block_k}':>15} "
                  f"{conv_form(launch, size, C, K, R, cfg, stride):>15} "
                  f"{ours:>12,.0f} {ours_e2e['kernel_cycles']:>11,} "
                  f"{ours_e2e['instructions'] / ours_e2e['commands']:>9.1f}  {lib:>10,.0f} {lib_e2e:>11,.0f}  "
                  f"{lib / ours:>7.2f}x {e2e_ratios[-1]:>5.2f}x {lib_e2e / floor:>5.2f}x "
                  f"{lib_e2e / any_floor:>5.2f}x", flush=True)
        geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
        print(f"geomean Conv2D speed-up over the library at DIM {dim}: Gemmini alone {geo(ratios):.2f}x, end to end "
              f"{geo(e2e_ratios):.2f}x over {len(ratios)} shapes; end to end slower on "
              f"{sum(r < 1 for r in e2e_ratios)}, worst {min(e2e_ratios):.2f}x\n")
        speed_ups += e2e_ratios
    return speed_ups


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
    run's arguments when they are not `args` (an optional bias after them). Compiled for its grid,
    as a launch is (a shape-specialized kernel folds it)."""
    ck = kernel.compile(*args, target="iss", grid=grid, **options)
    return ck.run(grid, runtime or args, timing=TimingModel(cfg, ISS_CONSTANTS))


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
    res = run_elf(path, config=cfg, timing=TimingModel(cfg, ISS_CONSTANTS), stdout=None)
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
            commands, cycles = time_launch(ck, launch.grid, launch.runtime_args(), cfg)
            iss = None
            if n < iss_count:
                from baco.sim.iss import run_elf
                with tempfile.TemporaryDirectory() as tmp:
                    launch.write_elf(f"{tmp}/k.elf", reference_conv2d(x, w, bias, **kw))
                    res = run_elf(f"{tmp}/k.elf", config=cfg, timing=TimingModel(cfg, ISS_CONSTANTS), stdout=None)
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


def perf_shape_section(library_bin) -> float:
    """tiled_matmul_ws_perf's GEMM (128x256x256 at DIM 16, int32 bias row, int8 output) under
    baco's default schedule, Gemmini alone and end to end, against the library: its stream
    (baco.sim.clib, with the repeating bias) and, with `library_bin` (gemmini-rocc-tests'
    bin/ folder), the real ELF's own rdcycle count ("Cycles taken") under the same ISS and
    cycle model. Returns the end-to-end speed-up over the library's stream."""
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
        res = run_elf(elf, config=cfg, timing=TimingModel(cfg, ISS_CONSTANTS), stdout=None)
        taken = re.search(r"Cycles taken: (\d+)", res.console or "")
        if res.exit_code != 0 or taken is None:
            raise SystemExit(f"{elf}: did not run to its cycle count ({res.error or res.exit_code})")
        real = int(taken.group(1))
        print(f"  the library's own ELF ({elf.name}): {res.gemmini_commands} commands, {real:,} cycles end to end "
              f"(rdcycle): baco {real / e2e['kernel_cycles']:.2f}x")
    print()
    return lib / e2e["kernel_cycles"]


# ---- the floor: the fewest cycles any program can take (module docstring, "The floor") --------

def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def dma_floor(elements: int, elem_bytes: int, max_cols: int, cfg: GemminiConfig, acc_read: bool = False,
              runs: int = 1, k=DEFAULT_CONSTANTS) -> float:
    """The fewest cycles a DMA unit (load or store) is occupied moving `elements` elements of
    `elem_bytes` bytes in `runs` equal runs no request crosses, by commands of at most DIM rows
    (requests) of at most `max_cols` elements: a command of r rows costs dma_cmd_overhead
    (+ acc_scale_latency reading the accumulator) + max(its requests' bus beats, ceil(r /
    max_in_flight)·dram_latency) (TimingModel._dma); summed, at least the fewest commands'
    overheads + max(the runs' beats, dram_latency · max(commands, requests / max_in_flight))."""
    if elements == 0:
        return 0.0
    run = elements // runs
    requests = runs * cdiv(run, max_cols)
    commands = cdiv(requests, cfg.dim)
    beats = runs * cdiv(run * elem_bytes, cfg.dma_bus_bits // 8)
    overhead = k.dma_cmd_overhead + (k.acc_scale_latency if acc_read else 0.0)
    return commands * overhead + max(beats * k.beat_cycles,
                                     k.dram_latency * max(commands, cdiv(requests, cfg.max_in_flight)))


def array_floor(rows: int, weight_blocks: int, computes: int, min_feed: int, cfg: GemminiConfig,
                k=DEFAULT_CONSTANTS) -> float:
    """The fewest execute-unit cycles from the first compute's start to the last one's end of
    feeding, streaming `rows` rows in all through `weight_blocks` weight blocks by at least
    `computes` computes of at most DIM rows, each max(rows, min_feed) + compute_overhead, and DIM
    cycles at least between the starts of two computes with different weights (all blocks but
    the last)."""
    computes = max(computes, cdiv(rows, cfg.dim))
    feed = max(rows, min_feed * computes) + k.compute_overhead * computes
    return max((weight_blocks - 1) * cfg.dim, feed)


def floor_terms(arrays, loads, output, cfg: GemminiConfig, k=DEFAULT_CONSTANTS) -> dict:
    """The floor's terms (cycles) of a program: `arrays` are its ways to use the array, each
    array_floor's (rows, weight blocks, computes, fewest rows a compute feeds), the cheapest counting;
    `loads` the dma_floor arguments (elements, bytes, columns) of each input it moves in and
    `output` of its output (+ whether it leaves the accumulator, and its runs)."""
    d = cfg.dim
    first_data = 1 + k.dma_cmd_overhead + 2 * k.dram_latency     # the first mvin's rows land
    out_elements, out_bytes, out_cols, out_acc, out_runs = output
    last_mvout = k.dma_cmd_overhead + 2 * k.dram_latency + (k.acc_scale_latency if out_acc else 0.0)
    depth = k.array_depth_factor * d
    load = 1 + sum(dma_floor(*x, cfg, k=k) for x in loads) + k.dram_latency + last_mvout
    execute = first_data + min(array_floor(*a, cfg, k) for a in arrays) + depth + last_mvout
    store = (first_data + MIN_FEED_ROWS + k.compute_overhead + depth
             + dma_floor(out_elements, out_bytes, out_cols, cfg, out_acc, out_runs, k=k) + k.dram_latency)
    return {"load": load, "execute": execute, "store": store}


def gemm_floor(M: int, N: int, K: int, cfg: GemminiConfig, out_int8: bool, bias: str | None = None,
               tiles: bool = False) -> dict:
    """floor_terms of C[M×N] = A[M×K]·B[K×N] (+ a repeating int32 bias row or a full bias), int8
    inputs, C int8 or int32. Any program: M·N outputs of K products each; with `tiles`, the
    programs of DIM-wide tiles (K and N rounded up to DIM): A's rows through B's weights, or B's
    columns through A's, which needs the transposer (DIM rows a compute)."""
    d = cfg.dim
    kb, mb, nb = cdiv(K, d), cdiv(M, d), cdiv(N, d)
    if tiles:   # each block of a K segment x DIM columns streams its M rows (N, transposed) in DIM-row computes
        arrays = [(M * kb * nb, kb * nb, kb * nb * mb, MIN_FEED_ROWS), (N * kb * mb, kb * mb, kb * mb * nb, d)]
    else:
        arrays = [(cdiv(M * N * kb, d), cdiv(min(M, N) * K, d * d), 0, MIN_FEED_ROWS)]
    sp_cols, acc_cols = cfg.max_block_len * d, cfg.max_block_len_acc * d
    loads = [(M * K, cfg.input_bytes, sp_cols), (K * N, cfg.input_bytes, sp_cols)]
    if bias:
        loads.append((N if bias == "repeating" else M * N, cfg.acc_bytes, acc_cols))
    # int8 C leaves as wide as a mvout goes; int32 C at full width, one accumulator row a
    # request: in a tile program one output row's columns, so a request stays in a row of C
    output = (M * N, cfg.input_bytes, sp_cols, False, 1) if out_int8 else \
        (M * N, cfg.acc_bytes, d, True, M if tiles and N > 1 else 1)
    return floor_terms(arrays, loads, output, cfg)


def conv_floor(size: int, C: int, K: int, R: int, cfg: GemminiConfig, stride: int = 1, padding: int = 0,
               dilation: int = 1, tiles: bool = False) -> dict:
    """floor_terms of a batch-1 NHWC conv (size x size x C input, R x R x C x K weights, int8
    output): each output pixel's K outputs sum its valid taps x C products (a border pixel's
    taps in the padding need none); with `tiles`, the programs that stream each pixel's
    contraction in segments of at most DIM through DIM output channels at a time. The input
    pixels some valid tap reads and the weights of the taps used are moved in."""
    from baco.kernels.conv import output_size
    d = cfg.dim
    P = output_size(size, R, stride, padding, dilation)
    taps = [[r for r in range(R) if 0 <= p * stride + r * dilation - padding < size] for p in range(P)]
    segments = sum(cdiv(len(tr) * len(tc) * C, d) for tr in taps for tc in taps)   # DIM-long, over the pixels
    used_taps = len({r for tr in taps for r in tr}) ** 2
    read = len({p * stride + r * dilation - padding for p, tr in enumerate(taps) for r in tr}) ** 2
    if tiles:
        arrays = [(cdiv(K, d) * segments, cdiv(K, d) * cdiv(used_taps * C, d), cdiv(K, d) * cdiv(segments, d),
                   MIN_FEED_ROWS)]
    else:
        arrays = [(cdiv(K * segments, d), cdiv(min(used_taps * C * K, read * C), d * d), 0, MIN_FEED_ROWS)]
    sp_cols = cfg.max_block_len * d
    loads = [(read * C, cfg.input_bytes, sp_cols), (used_taps * C * K, cfg.input_bytes, sp_cols)]
    return floor_terms(arrays, loads, (P * P * K, cfg.input_bytes, sp_cols, False, 1), cfg)


def checked_floor(terms: dict, where: str, **programs) -> float:
    """The floor of `terms`; a program the cycle model times below it (Gemmini alone) means a
    term is not a lower bound: that stops the run."""
    floor = max(terms.values())
    for name, cycles in programs.items():
        if cycles < floor:
            raise SystemExit(f"{where}: {name} takes {cycles:,.0f} cycles on Gemmini alone, below the floor "
                             f"{floor:,.0f} ({terms}): the floor is not a lower bound")
    return floor


def bound_line(label: str, lib: float, lib_e2e: float, terms: dict, any_terms: dict) -> tuple:
    """A bound table's line: the library's cycles (Gemmini alone, end to end), the tile floor's
    terms, the largest speed-up over the library a tile program can have (Gemmini alone, end to
    end), the floor of any program and its end-to-end bound; and the three bounds."""
    floor = checked_floor(terms, label, library=lib)
    any_floor = checked_floor(any_terms, label + " (any program)", library=lib)
    bounds = (lib / floor, lib_e2e / floor, lib_e2e / any_floor)
    return (f"{label}  {lib:>11,.0f} {lib_e2e:>11,.0f}  {terms['load']:>10,.0f} {terms['execute']:>10,.0f} "
            f"{terms['store']:>10,.0f} {floor:>10,.0f} {max(terms, key=terms.get):>7}  {bounds[0]:>6.2f}x "
            f"{bounds[1]:>6.2f}x  {any_floor:>10,.0f} {bounds[2]:>6.2f}x", bounds)


def bound_section(dims, shapes, convs, out_int8: bool) -> None:
    """Per shape, the tile floor and the floor of any program (floor_terms) against the C
    library's program (baco.sim.clib) on Gemmini alone and end to end (its tile loop's CPU work
    counted): library / floor is the largest speed-up over the library such a program can have;
    geomeans per DIM and section."""
    from baco.sim.clib import time_conv
    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    head = (f"{'library':>11} {'end to end':>11}  {'load':>10} {'execute':>10} {'store':>10} {'floor':>10} "
            f"{'binding':>7}  {'bound alone, e2e':>15}  {'any floor':>10} {'e2e':>7}")

    def summary(what, bounds):
        alone, e2e, any_e2e = zip(*bounds)
        return (f"{what}: the largest speed-up over the library of a tile program, geomean {geo(alone):.3f}x "
                f"Gemmini alone, {geo(e2e):.3f}x end to end (min {min(e2e):.3f}x, max {max(e2e):.3f}x); of any "
                f"program {geo(any_e2e):.3f}x end to end (min {min(any_e2e):.3f}x, max {max(any_e2e):.3f}x)\n")
    for dim in dims:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        print(f"The floor at DIM {dim} (256 KB scratchpad, 64 KB accumulator): library cycles (Gemmini alone, end "
              f"to end), the tile floor's terms, library / tile floor (Gemmini alone, end to end), the floor of "
              f"any program and library end to end / that floor")
        M, N, K = PERF_SHAPE
        lib_kw = dict(out_int8=True, bias="repeating")
        line, _ = bound_line(f"{M:>5} {N:>5} {K:>5}", time_matmul(M, N, K, cfg, **lib_kw)["cycles"],
                             time_matmul(M, N, K, cfg, cpu_tile_instructions=LIBRARY_TILE, **lib_kw)["cycles"],
                             gemm_floor(M, N, K, cfg, True, "repeating", tiles=True),
                             gemm_floor(M, N, K, cfg, True, "repeating"))
        print(f"{'M':>5} {'N':>5} {'K':>5}  {head}\n{line}  (tiled_matmul_ws_perf: + bias, int8 output)")
        bounds = []
        lib_kw = dict(out_int8=out_int8, scale=0.05 if out_int8 else 1.0)
        for M, N, K in shapes:
            line, b = bound_line(f"{M:>5} {N:>5} {K:>5}", time_matmul(M, N, K, cfg, **lib_kw)["cycles"],
                                 time_matmul(M, N, K, cfg, cpu_tile_instructions=LIBRARY_TILE, **lib_kw)["cycles"],
                                 gemm_floor(M, N, K, cfg, out_int8, tiles=True), gemm_floor(M, N, K, cfg, out_int8))
            bounds.append(b)
            print(line, flush=True)
        if shapes:
            print(summary(f"GEMM/GEMV ({'int8' if out_int8 else 'int32'} output) at DIM {dim}, {len(shapes)} shapes",
                          bounds))
        bounds, lines = [], {}      # the drawn shapes repeat: each timed once
        if convs:
            print(f"{'H=W':>4} {'C':>5} {'K':>5} {'RxS/st':>6}  {head}  (Conv2D, 'same' padding, int8 output)")
        for size, C, K, R, *rest in convs:
            stride = rest[0] if rest else 1
            lib_kw = dict(stride=stride, padding=R // 2, scale=0.05)
            if (size, C, K, R, stride) not in lines:
                lines[size, C, K, R, stride] = bound_line(
                    f"{size:>4} {C:>5} {K:>5} {f'{R}x{R}/{stride}':>6}",
                    time_conv(1, size, size, C, K, R, cfg, **lib_kw)["cycles"],
                    time_conv(1, size, size, C, K, R, cfg, cpu_tile_instructions=LIBRARY_TILE, **lib_kw)["cycles"],
                    conv_floor(size, C, K, R, cfg, stride, R // 2, tiles=True),
                    conv_floor(size, C, K, R, cfg, stride, R // 2))
            line, b = lines[size, C, K, R, stride]
            bounds.append(b)
            print(line, flush=True)
        if convs:
            print(summary(f"Conv2D at DIM {dim}, {len(convs)} shapes", bounds))

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
    p.add_argument("--rocket-muldiv", action="store_true",
                   help="baco's programs and the library's own ELF on the ISS with the CPU's multiplies and "
                        "divides priced as Rocket's iterative unit at most (ROCKET_MULDIV); the library's "
                        "re-created streams keep their tile loop's instruction count, which favours them")
    p.add_argument("--bound-only", action="store_true",
                   help="only the floor against the library (no baco runs): the largest speed-up any program "
                        "can have")
    args = p.parse_args(argv)
    if args.rocket_muldiv:
        global ISS_CONSTANTS
        ISS_CONSTANTS = ROCKET_MULDIV
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
    convs = SMOKE_CONVS if args.smoke else RESNET50_512 if args.resnet_512 else conv_shapes(args.conv_count, args.seed)
    if args.bound_only or args.smoke:
        bound_section(dims, shapes, convs, out_int8)
        if args.bound_only:
            return 0
    speed_ups = [perf_shape_section(args.library_bin)]     # issue K's set: every end-to-end speed-up of the run
    slower = slower_e2e = tuned_worse = 0
    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    for dim in dims if shapes else []:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        print(f"DIM {dim} (256 KB scratchpad, 64 KB accumulator), {args.out} output; cycles on Gemmini alone "
              f"(commands free) and end to end (ISS, the CPU issuing them; library: its tile loop's cost)"
              + ("; baco's B padded to whole DIM rows" if args.padded_b else ""))
        print(f"{'M':>5} {'N':>5} {'K':>5}  {'baco blocks':>15} {'program':>8} {'baco cycles':>12} {'end to end':>11} "
              f"{'instr/cmd':>9} {'util e2e':>8}  {'library':>10} {'end to end':>11}  {'speed-up':>8} {'e2e':>6}  "
              f"{'tuned blocks':>17} {'tuned e2e':>12} {'vs default':>10} {'bound':>6} {'any':>6}")
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
            floor = checked_floor(gemm_floor(M, N, K, cfg, out_int8, tiles=True), f"{M}x{N}x{K}", baco=ours,
                                  library=lib)
            any_floor = checked_floor(gemm_floor(M, N, K, cfg, out_int8), f"{M}x{N}x{K} (any program)", baco=ours,
                                      library=lib)
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
                  f"{tuned:>12,.0f} {default_e2e / tuned:>9.2f}x {lib_e2e / floor:>5.2f}x {lib_e2e / any_floor:>5.2f}x", flush=True)
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
        speed_ups += e2e_ratios
    conv_speed_ups = conv_section(dims, convs) if convs else []
    speed_ups += conv_speed_ups
    print(f"shapes where baco is slower than the library: {slower} GEMM ({slower_e2e} end to end), "
          f"{sum(r < 1 for r in conv_speed_ups)} Conv2D; where the autotuned schedule is slower than the default: "
          f"{tuned_worse}")
    print(f"end to end over the run's {len(speed_ups)} (shape, DIM) rows (tiled_matmul_ws_perf's shape, the GEMM/GEMV "
          f"and the Conv2D shapes: issue K's set when run with the defaults): geomean {geo(speed_ups):.4f}x, "
          f"min {min(speed_ups):.2f}x, slower on {sum(r < 1 for r in speed_ups)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
