"""Operator kernels beyond plain GEMM (issue F items 1-2), bit-exact against numpy
references of Gemmini's arithmetic on the host JIT (`sim`) and the RISC-V ISS (`iss`):
bias add (an int32 row broadcast through a stride-0 block pointer, moved into the
accumulator before the K loop)."""
import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.matmul import matmul, reference

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
