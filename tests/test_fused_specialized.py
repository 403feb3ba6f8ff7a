"""The fused kernels' ISS programs compiled for their shapes and grid (specialize_shapes="iss"):
bit-exact against the unfused numpy references on ragged shapes, the widths constants in the
code, and the chain still run on the loop unit (chain-loop-ws) where its grid folds."""
from dataclasses import replace

import numpy as np
import pytest

from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.fused import gemm_chain_kernel, gemm_chain_launch, gemm_resadd_kernel, gemm_resadd_launch
from baco.kernels.resadd import reference as resadd_reference


def _i8(rng, *shape):
    return rng.integers(-128, 128, shape, dtype=np.int8)


def test_both_kernels_specialize_for_the_iss_only():
    assert gemm_chain_kernel.specialize_shapes == "iss" and gemm_resadd_kernel.specialize_shapes == "iss"


# (M, K, N, blocks): one program, a ragged grid on both axes, a ragged K step, single rows
RESADD = [(1, 17, 33, (16, 32, 32)), (17, 65, 33, (16, 32, 32)), (65, 33, 17, (32, 16, 16)), (33, 1, 65, (32, 64, 16))]


@pytest.mark.parametrize("M,K,N,blocks", RESADD, ids=lambda v: str(v))
def test_resadd_iss_specialized_bit_exact(M, K, N, blocks):
    rng = np.random.default_rng(M + 3 * K + 7 * N)
    x, w, r = _i8(rng, M, K), _i8(rng, K, N), _i8(rng, M, N)
    b = rng.integers(-3000, 3000, N).astype(np.int32)
    kw = dict(scale=0.004, relu=M % 2 == 1, a_scale=0.8, r_scale=1.3, out_scale=0.7, relu_out=N % 2 == 0)
    launch = gemm_resadd_launch(x, w, b, r, schedule=GemmSchedule(*blocks), config=GemminiConfig(), **kw)
    ck = launch.compiled("iss")
    assert {"M", "K", "N"} <= set(ck.fixed) and ck.grid == tuple(launch.grid) + (1,)
    launch.run("iss")
    hidden = reference_matmul(x, w, b[None, :], out="int8", scale=kw["scale"], relu=kw["relu"])
    np.testing.assert_array_equal(launch.y, resadd_reference(hidden, r, kw["a_scale"], kw["r_scale"],
                                                             out_scale=kw["out_scale"], relu=kw["relu_out"]))


@pytest.mark.parametrize("M,K,H,N,ext_spad", [(17, 65, 33, 17, False), (65, 33, 1, 33, False),
                                              (40, 70, 30, 20, True), (300, 70, 30, 20, True)])
def test_chain_iss_specialized_bit_exact(M, K, H, N, ext_spad):
    """On a Gemmini with the ext-spad commands the chain runs as LOOP_WSs also where its grid of one
    program folds (program_id a constant, the DRAM views whole arguments)."""
    rng = np.random.default_rng(M + K + H + N)
    x, w1, w2 = _i8(rng, M, K), _i8(rng, K, H), _i8(rng, H, N)
    b1, b2 = (rng.integers(-5000, 5000, v).astype(np.int32) for v in (H, N))
    s1, s2 = 1 / (64 * np.sqrt(K)), 1 / (48 * np.sqrt(H))
    cfg = replace(GemminiConfig(dim=8), mvout_spad=True) if ext_spad else GemminiConfig()
    launch = gemm_chain_launch(x, w1, b1, w2, b2, scale1=s1, scale2=s2, relu1=True, block_m=16, block_k=32,
                               config=cfg)
    assert {"M", "K", "H", "N"} <= set(launch.compiled("iss").fixed)
    stats = launch.run("iss")["result"].stats
    h = reference_matmul(x, w1, b1[None, :], out="int8", scale=s1, relu=True)
    np.testing.assert_array_equal(launch.y, reference_matmul(h, w2, b2[None, :], out="int8", scale=s2))
    assert (stats.get("loop_ws", 0) > 0) == ext_spad


# (N, H, C, K, stride, dim): one program, ragged channels on both sides, a grid of several programs
DW_PW = [(1, 7, 17, 33, 2, 16), (1, 13, 1, 65, 2, 16), (2, 15, 65, 33, 1, 32), (1, 28, 32, 64, 1, 16)]


@pytest.mark.parametrize("N,H,C,K,stride,dim", DW_PW, ids=lambda v: str(v))
def test_dw_pw_iss_specialized_bit_exact_with_the_same_commands(N, H, C, K, stride, dim):
    """dw_pw_kernel compiled for its shapes and grid: bit-exact against the independent reference,
    the same RoCC commands as the general code's (what folds is the core's arithmetic), fewer
    instructions."""
    from baco.kernels.fused_dwpw import dw_pw_kernel, dw_pw_launch, reference_dw_pw
    assert dw_pw_kernel.specialize_shapes == "iss"
    rng = np.random.default_rng(N + H + C + K)
    x, wd, wp = _i8(rng, N, H, H, C), _i8(rng, 3, 3, C), _i8(rng, C, K)
    bd, bp = rng.integers(-4000, 4000, C).astype(np.int32), rng.integers(-4000, 4000, K).astype(np.int32)
    kw = dict(stride=stride, padding=1, scale1=1 / 300, scale2=1 / (40 * np.sqrt(C)), relu1=True, relu2=K % 2 == 0)
    launch = dw_pw_launch(x, wd, bd, wp, bp, config=GemminiConfig(dim=dim), **kw)
    folded = launch.compiled("iss")
    general = launch.compiled("iss", specialize_shapes=False)
    assert {"H", "C", "K"} <= set(folded.fixed) and folded.grid == tuple(launch.grid) and "H" not in general.fixed
    runs = []
    for ck in (folded, general):
        launch.y[...] = 0
        runs.append(ck.run(launch.grid, launch.args))
        np.testing.assert_array_equal(launch.y, reference_dw_pw(x, wd, bd, wp, bp, **kw))
    assert runs[0]["result"].stats == runs[1]["result"].stats
    assert runs[0]["kernel_cycles"] < runs[1]["kernel_cycles"]
