"""Property tests (hypothesis): over shapes, row strides, row offsets (negative too),
block sizes, dataflows and scales (NaN/inf included), the compiled kernel on sim,
the compiled kernel on the ISS, the interpreter and the numpy reference of Gemmini's
arithmetic agree bit for bit, and nothing outside the stored window is written:
50 examples by default, 500 with -m slow. An ISS launch costs one run of the
kernel's runner ELF (built once per kernel and kept in the disk cache with its
LLVM IR, baco.codegen.riscv), so the ISS adds little to the sim's cost."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import baco
import baco.language as bl
from baco.gemmini.arith import reference_matmul


@baco.jit
def strided_gemm(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c, OFF, scale,
                 BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr, EPILOGUE: bl.constexpr):
    pm = bl.program_id(0)
    pn = bl.program_id(1)
    a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(stride_a, 1), offsets=(pm * BM + OFF, 0),
                          block_shape=(BM, BK))
    b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(stride_b, 1), offsets=(0, pn * BN), block_shape=(BK, BN))
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for _ in range(bl.cdiv(K, BK)):
        acc += bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)))
        a = bl.advance(a, (0, BK))
        b = bl.advance(b, (BK, 0))
    c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(stride_c, 1), offsets=(pm * BM + OFF, pn * BN),
                          block_shape=(BM, BN))
    if EPILOGUE == "int32":
        bl.store(c, acc, boundary_check=(0, 1))
    elif EPILOGUE == "int8":
        bl.store(c, (acc * scale).to(bl.int8), boundary_check=(0, 1))
    else:
        bl.store(c, bl.relu(acc * scale).to(bl.int8), boundary_check=(0, 1))


problems = st.fixed_dictionaries({
    "M": st.integers(1, 70), "N": st.integers(1, 70), "K": st.integers(1, 90),
    "pad_a": st.integers(0, 9), "pad_b": st.integers(0, 9), "pad_c": st.integers(0, 9),
    "off": st.integers(-40, 12),
    "block": st.tuples(st.sampled_from([16, 32]), st.sampled_from([16, 32]), st.sampled_from([16, 64])),
    "dataflow": st.sampled_from(["WS", "OS"]),
    "epilogue": st.sampled_from(["int32", "int8", "relu8"]),
    "scale": st.one_of(st.floats(-0.25, 0.25, width=32), st.sampled_from([float("nan"), float("inf"), -float("inf")])),
    "seed": st.integers(0, 2 ** 16),
})


def launch(p, target=None):
    """(C buffer after the launch, expected buffer): C lives in a wider buffer (row stride
    N + pad_c) whose padding, and every row no program covers, must stay untouched."""
    M, N, K = p["M"], p["N"], p["K"]
    bm, bn, bk = p["block"]
    rng = np.random.default_rng(p["seed"])
    a_buf = rng.integers(-128, 128, (M, K + p["pad_a"]), dtype=np.int8)
    b_buf = rng.integers(-128, 128, (K, N + p["pad_b"]), dtype=np.int8)
    out = np.int32 if p["epilogue"] == "int32" else np.int8
    c_buf = np.full((M, N + p["pad_c"]), 7, dtype=out)
    grid = (-(-M // bm) + 1, -(-N // bn))
    expected = c_buf.copy()
    if target is not None:
        kw = {} if target == "interpreter" else {"target": target}
        strided_gemm[grid](a_buf, b_buf, c_buf, M, N, K, K + p["pad_a"], N + p["pad_b"], N + p["pad_c"],
                           p["off"], p["scale"], BM=bm, BN=bn, BK=bk, EPILOGUE=p["epilogue"],
                           dataflow=p["dataflow"], **kw)
    with np.errstate(invalid="ignore"):
        full = reference_matmul(a_buf[:, :K], b_buf[:, :N], out="int32" if out == np.int32 else "int8",
                                scale=p["scale"], relu=p["epilogue"] == "relu8",
                                os_k_block=bk if p["dataflow"] == "OS" else None)
    rows = np.arange(M)
    covered = (rows >= p["off"]) & (rows < grid[0] * bm + p["off"])
    expected[covered, :N] = full[covered]
    return c_buf, expected


def check(p, targets, monkeypatch):
    for target in targets:
        if target == "interpreter":
            monkeypatch.setenv("BACO_INTERPRET", "1")
        got, expected = launch(p, target)
        monkeypatch.delenv("BACO_INTERPRET", raising=False)
        np.testing.assert_array_equal(got, expected, err_msg=f"{target}: {p}")


SETTINGS = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(max_examples=50, **SETTINGS)
@given(p=problems)
def test_sim_iss_interpreter_reference_agree(p, monkeypatch):
    check(p, ("sim", "iss", "interpreter"), monkeypatch)


@pytest.mark.slow
@settings(max_examples=500, **SETTINGS)
@given(p=problems)
def test_sim_iss_interpreter_reference_agree_500(p, monkeypatch):
    check(p, ("sim", "iss", "interpreter"), monkeypatch)
