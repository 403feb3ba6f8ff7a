"""The config-elimination pass (baco.passes.config_elimination) on whole kernels: fewer config
commands in the launch's stream, the same results on sim and iss. Its IR-level behaviour
(loops, branches, unknown commands) is the lit test tests/ir/config-elimination/state_tracking.mlir."""
from collections import Counter

import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.matmul import matmul, matmul_kernel, reference
from baco.options import CompileOptions
from baco.passes.pipeline import run_pipeline
from baco.sim.timing import CommandStream

DIM16 = GemminiConfig()


@pytest.mark.parametrize("shape, out, double_buffer", [
    ((65, 33, 17), "int32", False), ((33, 65, 100), "int8", True), ((17, 1, 33), "int8", False)])
def test_configs_the_kernel_ends_with_run_once_per_launch(shape, out, double_buffer):
    """config_ex and config_st are set from constants and arguments only and never changed:
    only program (0, 0, 0) issues them; every program's result is still bit-exact, on sim and iss."""
    M, N, K = shape
    s = GemmSchedule(16, 16, 32, "WS", double_buffer)
    rng = np.random.default_rng(M + N + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    scale = 1 / 64 if out == "int8" else 1.0
    c = np.zeros((M, N), np.int8 if out == "int8" else np.int32)
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, scale]
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=out == "int8", schedule=s, config=DIM16)
    names = Counter()
    ck.run(grid, args, model=CommandStream(), observers=[lambda name, f, pc=None: names.update([name])])
    assert grid[0] * grid[1] > 1
    assert names["config_ex"] == 1 and names["config_st"] == 1, names
    assert names["mvout"] >= grid[0] * grid[1]
    results = [matmul(a, b, out=out, scale=scale, schedule=s, target=t, config=DIM16)[0] for t in ("sim", "iss")]
    for r in results:
        np.testing.assert_array_equal(r, reference(a, b, out=out, scale=scale))


def test_pass_removes_redundant_configs_in_the_pipeline():
    """The InstGem before and after the pass: fewer config ops, the same data commands."""
    import re
    s = GemmSchedule(32, 16, 32, "WS", False)
    params, _, _ = matmul_kernel.specialize(dict(
        a_ptr=np.zeros((40, 70), np.int8), b_ptr=np.zeros((70, 50), np.int8), c_ptr=np.zeros((40, 50), np.int32),
        M=40, N=50, K=70, stride_am=70, stride_ak=1, stride_bk=50, stride_bn=1, stride_cm=50, stride_cn=1,
        scale=1.0, BLOCK_M=s.block_m, BLOCK_N=s.block_n, BLOCK_K=s.block_k, RELU=False, OUT_INT8=False,
        bias_ptr=None))
    ir = run_pipeline(matmul_kernel.baco_ir(params), CompileOptions.of(loop_ws=False),
                      until="config-elimination").stage_ir
    before, after = ir["linalg-to-instgem"], ir["config-elimination"]
    count = lambda text, pattern: len(re.findall(pattern, text))  # noqa: E731
    assert count(after, r'"instgem\.config_') < count(before, r'"instgem\.config_')
    for data in ("mvin", "mvout", "preload", "compute_preloaded", "compute_accumulated"):
        assert count(after, rf'"instgem\.{data}"') == count(before, rf'"instgem\.{data}"'), data
