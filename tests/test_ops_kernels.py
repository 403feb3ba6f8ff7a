"""Operator kernels beyond plain GEMM (issue F items 1-2), bit-exact against numpy
references of Gemmini's arithmetic on the host JIT (`sim`) and the RISC-V ISS (`iss`):
bias add (an int32 row broadcast through a stride-0 block pointer, moved into the
accumulator before the K loop, or added after it); GEMV in both forms (examples/gemv.py);
residual add of two int8 tensors (examples/resadd.py: accumulating, scaled mvins)."""
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.matmul import matmul, reference

_spec = importlib.util.spec_from_file_location("gemv_example", Path(__file__).parents[1] / "examples" / "gemv.py")
gemv_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gemv_example)

_spec = importlib.util.spec_from_file_location("resadd_example", Path(__file__).parents[1] / "examples" / "resadd.py")
resadd_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(resadd_example)

DIM4 = GemminiConfig.from_capacity(4, 16, 8)
DIM16 = GemminiConfig()

# (M, N, K, out, relu, block, dataflow, double_buffer, config)
BIAS_CASES = [
    (1, 1, 1, "int32", False, (16, 16, 16), "WS", False, DIM16),
    (17, 33, 65, "int32", False, (32, 32, 32), "WS", True, DIM16),
    (65, 17, 100, "int8", True, (32, 16, 32), "WS", True, DIM16),
    (100, 70, 300, "int8", False, (64, 48, 64), "WS", False, DIM16),
    (33, 1, 17, "int32", False, (16, 16, 16), "WS", False, DIM16),
    (1, 65, 33, "int8", True, (16, 32, 16), "WS", True, DIM16),
    (17, 33, 65, "int32", False, (32, 32, 32), "OS", False, DIM16),
    (65, 17, 100, "int8", True, (32, 16, 48), "OS", True, DIM16),
    (7, 17, 33, "int32", False, (8, 8, 8), "WS", False, DIM4),
    (33, 5, 17, "int8", True, (12, 8, 4), "OS", True, DIM4),
]


def bias_case_id(c):
    M, N, K, out, relu, block, df, db, cfg = c
    return f"{M}x{N}x{K}-{out}{'-relu' if relu else ''}-b{'x'.join(map(str, block))}-{df}{'-db' if db else ''}-dim{cfg.dim}"


def run_bias(case, target):
    M, N, K, out, relu, block, df, db, cfg = case
    rng = np.random.default_rng(M * 10000 + N * 100 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    bias = rng.integers(-(1 << 15), 1 << 15, N, dtype=np.int32)
    s = GemmSchedule(*block, dataflow=df, double_buffer=db)
    scale = 1 / 64 if out == "int8" else 1.0
    c, _ = matmul(a, b, bias=bias, out=out, scale=scale, relu=relu, schedule=s, target=target, config=cfg)
    ref = reference(a, b, bias=bias, out=out, scale=scale, relu=relu, schedule=s, config=cfg)
    return c, ref


@pytest.mark.parametrize("case", BIAS_CASES, ids=bias_case_id)
def test_bias_bit_exact_sim(case):
    c, ref = run_bias(case, "sim")
    np.testing.assert_array_equal(c, ref)


@pytest.mark.parametrize("case", [BIAS_CASES[2], BIAS_CASES[7], BIAS_CASES[9]], ids=bias_case_id)
def test_bias_bit_exact_iss(case):
    c, ref = run_bias(case, "iss")
    np.testing.assert_array_equal(c, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", BIAS_CASES, ids=bias_case_id)
def test_bias_bit_exact_iss_all(case):
    c, ref = run_bias(case, "iss")
    np.testing.assert_array_equal(c, ref)


def commands_of(kernel, grid, args):
    """[(command name, fields)] a compiled kernel issues for this launch (sim target)."""
    seen = []
    kernel.run(grid, args, observers=[lambda name, fields, pc=None: seen.append((name, dict(fields)))])
    return seen


def test_bias_moves_in_at_dram_stride_0():
    """The bias reaches the accumulator by DMA at DRAM row stride 0 (the load unit repeats
    the row), one mvin per tile row, not through a BLOCK_M x N copy in DRAM."""
    rng = np.random.default_rng(1)
    M, N, K = 32, 32, 16
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    bias = np.arange(N, dtype=np.int32) * 1000 - 7000
    c, info = matmul(a, b, bias=bias, schedule=GemmSchedule(32, 32, 16))
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b + bias)
    args = [a, b, np.zeros_like(c), M, N, K, K, 1, N, 1, N, 1, 1.0, bias]
    cmds = commands_of(info["kernel"], (1, 1), args)
    bias_addr = bias.__array_interface__["data"][0]
    stride = {}     # config_ld state id -> DRAM stride
    bias_mvins = []
    for name, f in cmds:
        if name == "config_ld":
            stride[f["state_id"]] = f["stride"]
        elif name.startswith("mvin") and bias_addr <= f["dram_addr"] < bias_addr + bias.nbytes:
            slot = {"mvin": 0, "mvin2": 1, "mvin3": 2}[name]
            bias_mvins.append((stride[slot], f["rows"], f["cols"]))
    # 32x32 int32 block: 2 tile rows x 2 tile columns of DIM 16 (an int32 mvin is one tile wide)
    assert bias_mvins == [(0, 16, 16)] * 4


# (form, output length M or N, K, out, relu, bias, block or None (default), dataflow, double_buffer, config)
GEMV_CASES = [
    ("Ax", 1, 1, "int32", False, False, None, "WS", True, DIM16),
    ("Ax", 17, 33, "int32", False, False, None, "WS", True, DIM16),
    ("Ax", 65, 17, "int8", True, False, None, "WS", True, DIM16),
    ("Ax", 300, 200, "int32", False, True, None, "WS", True, DIM16),
    ("Ax", 100, 513, "int8", False, True, (32, 64), "WS", True, DIM16),
    ("Ax", 33, 65, "int32", False, False, (16, 16), "WS", False, DIM16),
    ("Ax", 129, 7, "int8", True, True, (64, 16), "WS", False, DIM16),
    ("Ax", 1, 1000, "int32", False, False, None, "WS", True, DIM16),
    ("Ax", 65, 100, "int32", False, True, (32, 32), "OS", False, DIM16),
    ("Ax", 33, 17, "int8", True, False, (48, 32), "OS", True, DIM16),
    ("Ax", 17, 33, "int32", False, True, (8, 8), "WS", True, DIM4),
    ("Ax", 33, 5, "int8", True, False, (12, 4), "OS", False, DIM4),
    ("xB", 1, 1, "int32", False, False, None, "WS", True, DIM16),
    ("xB", 17, 33, "int32", False, False, None, "WS", True, DIM16),
    ("xB", 70, 200, "int8", True, True, None, "WS", True, DIM16),
    ("xB", 65, 17, "int32", False, True, (32, 16), "WS", False, DIM16),
    ("xB", 1, 129, "int8", False, False, (16, 64), "WS", True, DIM16),
    ("xB", 200, 65, "int32", False, False, (64, 32), "WS", True, DIM16),
    ("xB", 65, 100, "int32", False, True, (80, 16), "OS", False, DIM16),
    ("xB", 33, 47, "int8", True, False, (32, 48), "OS", True, DIM16),
    ("xB", 17, 33, "int32", False, True, (8, 12), "WS", False, DIM4),
    ("xB", 5, 33, "int8", True, False, (4, 8), "OS", True, DIM4),
]


def gemv_case_id(c):
    form, n, K, out, relu, bias, block, df, db, cfg = c
    b = "default" if block is None else "x".join(map(str, block))
    return f"{form}-{n}x{K}-{out}{'-relu' if relu else ''}{'-bias' if bias else ''}-b{b}-{df}{'-db' if db else ''}-dim{cfg.dim}"


def run_gemv(case, target):
    form, n, K, out, relu, bias, block, df, db, cfg = case
    rng = np.random.default_rng(n * 1000 + K)
    mat = rng.integers(-128, 128, (n, K) if form == "Ax" else (K, n), dtype=np.int8)
    x = rng.integers(-128, 128, K, dtype=np.int8)
    bias = rng.integers(-(1 << 15), 1 << 15, n, dtype=np.int32) if bias else None
    scale = 1 / 64 if out == "int8" else 1.0
    block, _ = gemv_example.resolve_schedule(form, n, K, cfg, out == "int8", block, df, db)
    opts = dict(bias=bias, out=out, scale=scale, relu=relu, dataflow=df)
    y, _ = gemv_example.gemv(form, mat, x, block=block, double_buffer=db, target=target, config=cfg, **opts)
    return y, gemv_example.reference(form, mat, x, block_k=block[1], **opts)


@pytest.mark.parametrize("case", GEMV_CASES, ids=gemv_case_id)
def test_gemv_bit_exact_sim(case):
    y, ref = run_gemv(case, "sim")
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("case", [GEMV_CASES[4], GEMV_CASES[9], GEMV_CASES[14], GEMV_CASES[21]], ids=gemv_case_id)
def test_gemv_bit_exact_iss(case):
    y, ref = run_gemv(case, "iss")
    np.testing.assert_array_equal(y, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", GEMV_CASES, ids=gemv_case_id)
def test_gemv_bit_exact_iss_all(case):
    y, ref = run_gemv(case, "iss")
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("argv", [["--M", "33", "--K", "40", "--bias", "--out", "int8", "--relu"],
                                  ["--form", "xB", "--N", "17", "--K", "65", "--dataflow", "OS"]])
def test_gemv_cli_self_checking_elf(argv, tmp_path):
    """examples/gemv.py checks itself and writes an ELF that exits 0 on the ISS."""
    from baco.sim.iss import run_elf
    elf = tmp_path / "gemv.elf"
    assert gemv_example.main(argv + ["--elf", str(elf)]) == 0
    assert run_elf(elf, stdout=None).exit_code == 0


# (M, N, sa, sb, out_scale, relu, block or None (default), config)
RESADD_CASES = [
    (1, 1, 0.5, 0.75, 1.0, True, None, DIM16),
    (16, 16, 1.0, 1.0, 1.0, False, None, DIM16),
    (17, 33, 0.5, 0.75, 1.0, True, None, DIM16),
    (100, 70, 0.5, 0.75, 1.0, True, None, DIM16),
    (33, 17, 3.0, -2.5, 1.0, False, (16, 16), DIM16),       # mvin scales saturate to int8
    (65, 129, 0.25, 0.125, 0.3, True, (32, 64), DIM16),
    (129, 65, 1.0, -1.0, 0.5, False, (64, 32), DIM16),
    (7, 300, 0.9, 0.1, 2.0, True, None, DIM16),
    (300, 7, 1.5, 0.5, 0.25, True, None, DIM16),
    (64, 64, 0.5, 0.5, 1.0, True, (64, 64), DIM16),
    (255, 255, 0.3, 0.7, 1.0, True, None, DIM16),
    (33, 47, 2.0, 2.0, 0.01, False, (48, 48), DIM16),
    (1, 100, 0.5, 0.75, 1.0, True, (16, 32), DIM16),
    (100, 1, 0.5, 0.75, 1.0, True, (32, 16), DIM16),
    (7, 17, 0.5, 0.75, 1.0, True, (8, 8), DIM4),
    (33, 5, 1.25, -0.5, 1.0, False, (12, 4), DIM4),
    (65, 129, 0.5, 0.75, 1.0, True, (32, 32), DIM4),
    (17, 17, 1.0, 1.0, 0.5, True, None, DIM4),
    (5, 33, -1.0, 1.0, 1.0, False, (4, 16), DIM4),
    (40, 40, 0.5, 0.5, 1.0, True, (16, 8), DIM4),
    # half the accumulator holds two DIM-row tiles: the default block is two column tiles wide
    (20, 100, 0.5, 0.75, 1.0, True, None, GemminiConfig.from_capacity(8, 16, 1)),
]


def resadd_case_id(c):
    M, N, sa, sb, so, relu, block, cfg = c
    b = "default" if block is None else "x".join(map(str, block))
    return f"{M}x{N}-{sa}-{sb}-{so}{'-relu' if relu else ''}-b{b}-dim{cfg.dim}"


def run_resadd(case, target):
    M, N, sa, sb, so, relu, block, cfg = case
    rng = np.random.default_rng(M * 1000 + N)
    a = rng.integers(-128, 128, (M, N), dtype=np.int8)
    b = rng.integers(-128, 128, (M, N), dtype=np.int8)
    c, _ = resadd_example.resadd(a, b, sa, sb, out_scale=so, relu=relu, block=block, target=target, config=cfg)
    return c, resadd_example.reference(a, b, sa, sb, so, relu)


@pytest.mark.parametrize("case", RESADD_CASES, ids=resadd_case_id)
def test_resadd_bit_exact_sim(case):
    c, ref = run_resadd(case, "sim")
    np.testing.assert_array_equal(c, ref)


@pytest.mark.parametrize("case", [RESADD_CASES[4], RESADD_CASES[5], RESADD_CASES[16]], ids=resadd_case_id)
def test_resadd_bit_exact_iss(case):
    c, ref = run_resadd(case, "iss")
    np.testing.assert_array_equal(c, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", RESADD_CASES, ids=resadd_case_id)
def test_resadd_bit_exact_iss_all(case):
    c, ref = run_resadd(case, "iss")
    np.testing.assert_array_equal(c, ref)


# residual adds of NHWC images as the model lowers them, (N·H·W, C): 7x7x512, 7x7x2048, 14x14x1024,
# 2x2x96, and element counts that are not a multiple of DIM (1x1x17, 3x5x33, 7x300, 33x47, 1x1)
TENSOR_ADDS = [(49, 512, DIM16), (49, 2048, DIM16), (196, 1024, DIM16), (4, 96, DIM16), (1, 17, DIM16),
               (15, 33, DIM16), (7, 300, DIM16), (33, 47, DIM16), (255, 255, DIM16), (1, 1, DIM16), (9, 12, DIM4),
               (7, 5, DIM4), (17, 17, DIM4)]


def numpy_resadd(a, b, sa, sb, so, relu):
    """Gemmini's residual add in numpy alone: each operand's float32 product rounded half to even
    and saturated to int8, the int32 sum (ReLU'd), times so rounded half to even, saturated."""
    def rne_sat(x, s):
        return np.clip(np.rint(x.astype(np.float32) * np.float32(s)), -128, 127).astype(np.int64)
    total = rne_sat(a, sa) + rne_sat(b, sb)
    return rne_sat(np.maximum(total, 0) if relu else total, so).astype(np.int8)


@pytest.mark.parametrize("case", TENSOR_ADDS, ids=lambda c: f"{c[0]}x{c[1]}-dim{c[2].dim}")
def test_resadd_reads_images_as_whole_dim_row_blocks(case):
    """Without a block the kernel reads the operands as DIM rows when the element count allows it
    (the add is elementwise, one scale per operand): every program is then one LOOP_WS with
    is_resadd and no explicit mvin, whatever the image's rows (49 for a 7x7 image); other counts
    keep their M x N layout, with every program but those of the last M % DIM rows a LOOP_WS. Bit-exact on sim and the ISS with saturating scales, with and without
    ReLU, and the output has the operands' shape."""
    from baco.kernels.resadd import resadd_launch
    M, N, cfg = case
    rng = np.random.default_rng(M * 7 + N)
    a, b = (rng.integers(-128, 128, (M, N), dtype=np.int8) for _ in range(2))
    whole = M * N % cfg.dim == 0
    for target, (sa, sb, so, relu) in (("sim", (3.0, -2.5, 0.7, True)), ("iss", (0.45, 1.3, 1.9, False))):
        launch = resadd_launch(a, b, sa, sb, so, relu=relu, config=cfg)
        assert launch.args[3:5] == ([cfg.dim, M * N // cfg.dim] if whole else [M, N])
        info = launch.run(target)
        stats = info["model"].stats if target == "sim" else info["result"].stats
        if whole:
            # one LOOP_WS a program, and every load is LoopMatmul's (its B moves by mvin2)
            assert stats["loop_ws"] == launch.grid[0] * launch.grid[1] and stats["mvin"] == stats["mvin2"], stats
        else:       # only the programs of the last M % DIM rows are explicit
            assert stats.get("loop_ws", 0) == (launch.grid[0] - 1) * launch.grid[1], stats
        assert launch.y.shape == (M, N)
        np.testing.assert_array_equal(launch.y, numpy_resadd(a, b, sa, sb, so, relu))


def test_resadd_interpreted_matches():
    """The interpreter's int8 * scale is Gemmini's mvin scale, so it agrees with the kernel."""
    from baco.gemmini.config import GemminiConfig as Cfg
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (33, 17), dtype=np.int8)
    b = rng.integers(-128, 128, (33, 17), dtype=np.int8)
    ck, grid, args, c = resadd_example.launch(a, b, 3.0, -0.75, 0.5, True, (16, 16), "sim", Cfg())
    resadd_example.resadd_kernel.interpret = True
    try:
        resadd_example.resadd_kernel[grid](*args, BLOCK_M=16, BLOCK_N=16, RELU=True)
    finally:
        resadd_example.resadd_kernel.interpret = None
    np.testing.assert_array_equal(c, resadd_example.reference(a, b, 3.0, -0.75, 0.5, True))


def test_resadd_moves_int8_into_the_accumulator(monkeypatch):
    """No scratchpad rows; the two inputs arrive by shrinking, scaled mvins, the second with
    the accumulate bit (interior blocks need no zeroing: the first mvin overwrites). The
    explicit stream (BACO_LOOP_WS=0; by default each program is one LOOP_WS with is_resadd,
    tests/test_loop_ws.py)."""
    from baco.gemmini.isa import ACCUMULATE_BIT, ACC_BIT
    monkeypatch.setenv("BACO_LOOP_WS", "0")
    rng = np.random.default_rng(4)
    a = rng.integers(-128, 128, (64, 64), dtype=np.int8)
    b = rng.integers(-128, 128, (64, 64), dtype=np.int8)
    ck, grid, args, c = resadd_example.launch(a, b, 0.5, 0.25, block=(32, 64))
    cmds = commands_of(ck, grid, args)
    np.testing.assert_array_equal(c, resadd_example.reference(a, b, 0.5, 0.25))
    shrink = {}
    loads = []
    for name, f in cmds:
        if name == "config_ld":
            shrink[f["state_id"]] = (f["shrink"], f["scale"])
        elif name.startswith("mvin"):
            slot = {"mvin": 0, "mvin2": 1, "mvin3": 2}[name]
            loads.append((f["dram_addr"] != 0, bool(f["local_addr"] & ACC_BIT),
                          bool(f["local_addr"] & ACCUMULATE_BIT), shrink[slot][0]))
    # 2 programs x 2 row tiles x (one mvin of A overwriting, one of B accumulating), 64 int8 columns each
    assert loads == [(True, True, False, 1), (True, True, False, 1), (True, True, True, 1), (True, True, True, 1)] * 2
    assert sum(name == "mvout" for name, _ in cmds) == 2 * 2 * 4


@baco.jit
def mm_bias_after(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                  BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BM, 0),
                              block_shape=(BM, BK), order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BN),
                              block_shape=(BK, BN), order=(1, 0))
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BK)):
        acc += bl.dot(bl.load(a_blk, boundary_check=(0, 1)), bl.load(b_blk, boundary_check=(0, 1)))
        a_blk = bl.advance(a_blk, (0, BK))
        b_blk = bl.advance(b_blk, (BK, 0))
    bias_blk = bl.make_block_ptr(bias_ptr, shape=(M, N), strides=(0, 1), offsets=(pid_m * BM, pid_n * BN),
                                 block_shape=(BM, BN), order=(1, 0))
    acc = acc + bl.load(bias_blk, boundary_check=(0, 1))
    c_blk = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, pid_n * BN),
                              block_shape=(BM, BN), order=(1, 0))
    bl.store(c_blk, bl.relu(acc * 0.01).to(bl.int8), boundary_check=(0, 1))


@baco.jit
def two_acc_sum(a_ptr, c_ptr, BM: bl.constexpr):
    a_blk = bl.make_block_ptr(a_ptr, shape=(BM, BM), strides=(BM, 1), offsets=(0, 0),
                              block_shape=(BM, BM), order=(1, 0))
    a = bl.load(a_blk)
    s1 = bl.dot(a, a)
    s2 = bl.dot(a, a)
    s = s1 + s2
    bl.store(bl.make_block_ptr(c_ptr, shape=(BM, BM), strides=(BM, 1), offsets=(0, 0),
                               block_shape=(BM, BM), order=(1, 0)), s)


@baco.jit
def dot_plus_dot(a_ptr, c_ptr, BM: bl.constexpr):
    a = bl.load(bl.make_block_ptr(a_ptr, shape=(BM, BM), strides=(BM, 1), offsets=(0, 0), block_shape=(BM, BM)))
    bl.store(bl.make_block_ptr(c_ptr, shape=(BM, BM), strides=(BM, 1), offsets=(0, 0), block_shape=(BM, BM)),
             bl.dot(a, a) + bl.dot(a, a))


def test_bias_added_after_the_k_loop():
    """Triton's epilogue form `acc = acc + bl.load(bias_blk)` is an accumulating mvin of the
    stride-0 bias rows into the accumulator after the K loop."""
    from baco.gemmini.arith import reference_matmul

    for (M, N, K), df, target in [((65, 33, 100), "WS", "sim"), ((17, 65, 40), "OS", "sim"),
                                  ((65, 33, 100), "WS", "iss")]:
        rng = np.random.default_rng(M + N + K)
        a = rng.integers(-128, 128, (M, K), dtype=np.int8)
        b = rng.integers(-128, 128, (K, N), dtype=np.int8)
        bias = rng.integers(-10000, 10000, N, dtype=np.int32)
        c = np.zeros((M, N), np.int8)
        mm_bias_after[(bl.cdiv(M, 32), bl.cdiv(N, 32))](a, b, bias, c, M, N, K, BM=32, BN=32, BK=32,
                                                        target=target, dataflow=df, double_buffer=True)
        ref = reference_matmul(a, b, bias[None, :], out="int8", scale=np.float32(0.01), relu=True,
                               os_k_block=32 if df == "OS" else None)
        np.testing.assert_array_equal(c, ref)


def test_adding_two_accumulators_is_a_located_error():
    from baco.errors import CompilationError

    a = np.zeros((16, 16), np.int8)
    with pytest.raises(CompilationError) as e:
        two_acc_sum[(1,)](a, np.zeros((16, 16), np.int32), BM=16)
    assert "s = s1 + s2" in str(e.value) and "at most one" in str(e.value)


def test_dot_plus_dot_accumulates():
    """`dot(a, b) + dot(c, d)` is the second dot accumulating onto the first (as `acc + dot(...)`)."""
    a = np.random.default_rng(3).integers(-128, 128, (16, 16)).astype(np.int8)
    for target in ("sim", "iss"):
        c = np.zeros((16, 16), np.int32)
        dot_plus_dot[(1,)](a, c, BM=16, target=target)
        np.testing.assert_array_equal(c, 2 * (a.astype(np.int64) @ a.astype(np.int64)))


def test_resadd_cli_self_checking_elf(tmp_path):
    from baco.sim.iss import run_elf
    elf = tmp_path / "resadd.elf"
    assert resadd_example.main(["--M", "33", "--N", "40", "--sa", "1.5", "--elf", str(elf)]) == 0
    assert run_elf(elf, stdout=None).exit_code == 0


@baco.jit
def matmul_strided(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr, A_ORDER: bl.constexpr, B_ORDER: bl.constexpr):
    """C = A·B where A and/or B may be column-major (strides (1, ld), order=(0, 1)): transposed operands."""
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(stride_am, stride_ak), offsets=(pid_m * BM, 0),
                              block_shape=(BM, BK), order=A_ORDER)
    b_blk = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, pid_n * BN),
                              block_shape=(BK, BN), order=B_ORDER)
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BK)):
        acc += bl.dot(bl.load(a_blk, boundary_check=(0, 1)), bl.load(b_blk, boundary_check=(0, 1)))
        a_blk = bl.advance(a_blk, (0, BK))
        b_blk = bl.advance(b_blk, (BK, 0))
    c_blk = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, pid_n * BN),
                              block_shape=(BM, BN), order=(1, 0))
    bl.store(c_blk, acc, boundary_check=(0, 1))


def launch_transposed(M, N, K, a_t, b_t, block, dataflow, double_buffer, config, target):
    """(C, reference, launch info, grid, kernel arguments) of one transposed-operand case."""
    rng = np.random.default_rng(M * 100 + N * 10 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    a_arr = np.ascontiguousarray(a.T) if a_t else a      # A^T stored row-major = A column-major
    b_arr = np.ascontiguousarray(b.T) if b_t else b
    c = np.zeros((M, N), np.int32)
    BM, BN, BK = block
    grid = (bl.cdiv(M, BM), bl.cdiv(N, BN))
    args = [a_arr, b_arr, c, M, N, K, *((1, M) if a_t else (K, 1)), *((1, K) if b_t else (N, 1))]
    info = matmul_strided[grid](
        *args, BM=BM, BN=BN, BK=BK, A_ORDER=(0, 1) if a_t else (1, 0), B_ORDER=(0, 1) if b_t else (1, 0),
        target=target, dataflow=dataflow, double_buffer=double_buffer, config=config)
    from baco.gemmini.arith import reference_matmul
    return c, reference_matmul(a, b, os_k_block=BK if dataflow == "OS" else None), info, grid, args


def run_transposed(*case):
    return launch_transposed(*case)[:2]


# (M, N, K, A transposed, B transposed, block, dataflow, double_buffer, config)
TRANSPOSE_CASES = [
    (32, 32, 32, False, True, (32, 32, 32), "WS", False, DIM16),
    (65, 33, 100, False, True, (32, 32, 32), "WS", True, DIM16),
    (65, 33, 100, True, False, (32, 32, 32), "WS", True, DIM16),
    (17, 65, 40, True, False, (16, 32, 16), "WS", False, DIM16),
    (1, 17, 33, False, True, (16, 16, 16), "WS", True, DIM16),
    (33, 1, 17, True, False, (48, 16, 32), "WS", False, DIM16),
    (65, 33, 100, True, False, (32, 32, 32), "OS", True, DIM16),
    (65, 33, 100, True, True, (32, 32, 32), "OS", True, DIM16),
    (17, 40, 65, True, True, (16, 48, 32), "OS", False, DIM16),
    (7, 17, 33, False, True, (8, 8, 8), "WS", False, DIM4),
    (33, 5, 17, True, False, (12, 8, 4), "WS", True, DIM4),
    (17, 9, 13, True, True, (8, 4, 8), "OS", False, DIM4),
]


def transpose_case_id(c):
    M, N, K, a_t, b_t, block, df, db, cfg = c
    return (f"{M}x{N}x{K}-{'At' if a_t else 'A'}{'Bt' if b_t else 'B'}-b{'x'.join(map(str, block))}-{df}"
            f"{'-db' if db else ''}-dim{cfg.dim}")


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=transpose_case_id)
def test_transposed_operands_bit_exact_sim(case):
    c, ref = run_transposed(*case, "sim")
    np.testing.assert_array_equal(c, ref)


@pytest.mark.parametrize("case", [TRANSPOSE_CASES[1], TRANSPOSE_CASES[2], TRANSPOSE_CASES[7]], ids=transpose_case_id)
def test_transposed_operands_bit_exact_iss(case):
    c, ref = run_transposed(*case, "iss")
    np.testing.assert_array_equal(c, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=transpose_case_id)
def test_transposed_operands_bit_exact_iss_all(case):
    c, ref = run_transposed(*case, "iss")
    np.testing.assert_array_equal(c, ref)


def test_transposed_operand_padding_is_not_zero_filled(monkeypatch):
    """The rows/cols fields mask a transposed tile as they mask any other (they describe it as
    fed to the array), so its padding is not zeroed at each load: as many loads as untransposed
    (both as explicit command streams: the untransposed kernel would otherwise be a LOOP_WS)."""
    monkeypatch.setenv("BACO_LOOP_WS", "0")
    case = (65, 33, 100, False, False, (32, 32, 32), "WS", False, DIM16, "iss")
    plain = launch_transposed(*case)[2]["result"].stats
    c, ref, info, _, _ = launch_transposed(*case[:3], True, *case[4:])
    np.testing.assert_array_equal(c, ref)
    assert info["result"].stats["config_ld"] == plain["config_ld"]


SPIKE_EXTLIB = os.environ.get("BACO_SPIKE_EXTLIB", "")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(SPIKE_EXTLIB), reason="Spike's Gemmini library is not installed "
                    "(set BACO_SPIKE_EXTLIB)")
@pytest.mark.parametrize("case", [c for c in TRANSPOSE_CASES if c[-1] is DIM16], ids=transpose_case_id)
def test_transposed_operands_elf_on_spike(case, tmp_path):
    """The self-checking ELF passes on Spike with libgemmini (built for DIM 16)."""
    from baco.sim.external import run_spike
    c, ref, info, grid, args = launch_transposed(*case, "sim")
    np.testing.assert_array_equal(c, ref)
    args[2] = np.zeros_like(c)
    elf = info["kernel"].build_elf(grid, args, tmp_path / "t.elf", expected={2: ref})
    assert run_spike(elf, timeout_s=300, stdout=None) == 0


@pytest.mark.parametrize("dataflow,a_t,b_t,match", [
    ("WS", True, True, "weight-stationary Gemmini transposes A or B, not both"),
    ("OS", False, True, "output-stationary Gemmini cannot transpose B alone")])
def test_transposes_the_dataflow_forbids_are_located_errors(dataflow, a_t, b_t, match):
    from baco.errors import CompilationError
    with pytest.raises(CompilationError) as e:
        run_transposed(33, 17, 40, a_t, b_t, (32, 32, 32), dataflow, False, DIM16, "sim")
    assert match in str(e.value) and "bl.dot(bl.load(a_blk" in str(e.value)


def test_example_wrappers_check_their_arrays():
    """resadd and gemv take exact int8 arrays of matching shapes (a wider b was read as if it
    were A's shape) and an int32 bias; nothing is converted."""
    a = np.ones((20, 12), np.int8)
    with pytest.raises(TypeError, match="b must be a int8 array, got dtype float64"):
        resadd_example.launch(a, np.full((20, 12), 0.5), 1.0, 1.0)
    with pytest.raises(ValueError, match="a and b must have the same shape"):
        resadd_example.launch(a, np.ones((20, 13), np.int8), 1.0, 1.0)
    with pytest.raises(ValueError, match=r"a and b must hold elements, got shape \(0, 12\)"):
        resadd_example.launch(a[:0], a[:0], 1.0, 1.0)      # (was a ZeroDivisionError)
    with pytest.raises(TypeError, match="x must be a int8 array, got dtype int64"):
        gemv_example.launch("Ax", a, np.ones(12, np.int64))
    with pytest.raises(ValueError, match="does not match x"):
        gemv_example.launch("Ax", a, np.ones(20, np.int8))
    with pytest.raises(TypeError, match="bias must be a int32 array, got dtype int64"):
        gemv_example.launch("Ax", a, np.ones(12, np.int8), bias=np.full(20, 2 ** 33 + 5))
