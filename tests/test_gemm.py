"""GEMM kernels through the whole compiler, bit-exact against the Gemmini
arithmetic reference on the host-JIT (`sim`) and RISC-V ISS (`iss`) targets."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig

_spec = importlib.util.spec_from_file_location("matmul_example", Path(__file__).parents[1] / "examples" / "matmul.py")
mm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mm)

DIM4 = GemminiConfig.from_capacity(4, 16, 8)
DIM16 = GemminiConfig()
DIM32 = GemminiConfig.from_capacity(32, 256, 64)

# (M, N, K, out, relu, block, dataflow, config)
CASES = [
    (1, 1, 1, "int32", False, (16, 16, 16), "WS", DIM16),
    (7, 7, 7, "int32", False, (16, 16, 16), "WS", DIM16),
    (16, 16, 16, "int32", False, (16, 16, 16), "WS", DIM16),
    (17, 17, 17, "int32", False, (32, 32, 32), "WS", DIM16),
    (33, 7, 64, "int32", False, (32, 32, 64), "WS", DIM16),
    (64, 64, 64, "int8", False, (32, 32, 64), "WS", DIM16),
    (100, 70, 300, "int32", False, (32, 32, 64), "WS", DIM16),
    (100, 70, 300, "int8", True, (32, 32, 64), "WS", DIM16),
    (255, 1, 100, "int32", False, (64, 16, 64), "WS", DIM16),      # skinny N
    (1, 255, 100, "int8", False, (16, 64, 64), "WS", DIM16),       # skinny M
    (512, 16, 33, "int32", False, (128, 16, 32), "WS", DIM16),     # tall
    (16, 512, 7, "int8", True, (16, 128, 16), "WS", DIM16),        # wide
    (33, 33, 512, "int32", False, (48, 48, 128), "WS", DIM16),     # deep K, non-DIM-multiple blocks
    (100, 100, 100, "int8", False, (64, 64, 64), "OS", DIM16),
    (17, 33, 65, "int32", False, (32, 32, 32), "OS", DIM16),
    (64, 7, 255, "int8", True, (64, 16, 64), "OS", DIM16),
    (7, 64, 17, "int32", False, (16, 64, 16), "OS", DIM16),
    (1, 7, 512, "int32", False, (16, 16, 256), "OS", DIM16),
    (255, 255, 16, "int8", False, (64, 64, 16), "WS", DIM16),
    (512, 512, 64, "int32", False, (128, 128, 64), "WS", DIM16),
    (7, 17, 33, "int32", False, (8, 8, 8), "WS", DIM4),
    (33, 16, 17, "int8", True, (16, 16, 16), "WS", DIM4),
    (16, 33, 64, "int32", False, (12, 20, 16), "OS", DIM4),
    (100, 7, 1, "int8", False, (32, 8, 4), "OS", DIM4),
    (1, 1, 255, "int32", False, (4, 4, 64), "WS", DIM4),
    (64, 64, 64, "int32", False, (64, 64, 64), "WS", DIM32),
    (100, 33, 17, "int8", True, (64, 64, 32), "WS", DIM32),
    (33, 100, 255, "int32", False, (32, 64, 64), "OS", DIM32),
    (17, 1, 64, "int8", False, (32, 32, 32), "OS", DIM32),
    (255, 64, 100, "int32", False, (96, 64, 64), "WS", DIM32),
    (64, 255, 7, "int8", False, (64, 128, 32), "WS", DIM16),
    (512, 100, 17, "int32", False, (256, 32, 32), "OS", DIM16),
]


def case_id(c):
    M, N, K, out, relu, block, df, cfg = c
    return f"{M}x{N}x{K}-{out}{'-relu' if relu else ''}-b{'x'.join(map(str, block))}-{df}-dim{cfg.dim}"


def run_case(case, target, seed=0):
    M, N, K, out, relu, block, df, cfg = case
    rng = np.random.default_rng(seed + M * 7 + N * 13 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    scale = 1 / 64 if out == "int8" else 1.0
    opts = dict(out=out, scale=scale, relu=relu, block=block, dataflow=df)
    c, _ = mm.matmul(a, b, target=target, config=cfg, **opts)
    ref = mm.reference(a, b, **opts)
    assert c.dtype == ref.dtype
    np.testing.assert_array_equal(c, ref)
    return c


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gemm_sim(case):
    run_case(case, "sim")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gemm_iss(case):
    run_case(case, "iss")


def test_sim_and_iss_agree_bit_for_bit():
    case = (100, 70, 300, "int8", True, (32, 32, 64), "WS", DIM16)
    np.testing.assert_array_equal(run_case(case, "sim"), run_case(case, "iss"))


def test_all_shape_values_covered():
    values = {1, 7, 16, 17, 33, 64, 100, 255, 512}
    for axis in range(3):
        assert values <= {c[axis] for c in CASES}, f"axis {axis} misses {values - {c[axis] for c in CASES}}"
    assert len(CASES) >= 30
