"""The loop-ws pass (baco.passes.loop_ws): GEMM programs as LOOP_WS hardware loops,
bit-exact against the Gemmini arithmetic reference and the explicit command stream, on
sim and iss; what it leaves unchanged; its switches."""
import numpy as np
import pytest

import baco.language as bl
from baco.gemmini.config import GemminiConfig
from baco.kernels.matmul import bias_vector, matmul_kernel, reference

DIM16 = GemminiConfig()
DIM4 = GemminiConfig.from_capacity(4, 16, 8)
DIM32 = GemminiConfig.from_capacity(32, 256, 64)

# (M, N, K, out, relu, bias, (BM, BN, BK), double_buffer, config)
CASES = [
    (2, 3, 5, "int32", False, False, (16, 16, 16), False, DIM16),
    (17, 33, 65, "int32", False, False, (32, 32, 32), False, DIM16),
    (33, 17, 65, "int8", True, True, (32, 32, 64), True, DIM16),
    (65, 65, 17, "int8", False, False, (64, 32, 16), False, DIM16),
    (100, 70, 300, "int32", False, True, (32, 32, 64), True, DIM16),
    (64, 64, 64, "int8", True, False, (64, 64, 64), False, DIM16),
    (255, 1, 100, "int32", False, False, (64, 16, 64), False, DIM16),     # GEMV-like N
    (1, 255, 100, "int8", False, True, (16, 64, 64), True, DIM16),
    (33, 33, 512, "int32", False, False, (48, 48, 128), True, DIM16),    # blocks not DIM multiples
    (40, 70, 200, "int8", True, True, (32, 96, 80), False, DIM16),       # > MAX_BLOCK_LEN blocks of B
    (7, 17, 33, "int32", False, True, (8, 8, 8), False, DIM4),
    (33, 16, 17, "int8", True, False, (16, 16, 16), True, DIM4),
    (100, 33, 17, "int8", True, True, (64, 64, 32), False, DIM32),
    (65, 100, 129, "int32", False, False, (64, 64, 64), True, DIM32),
]


def case_id(c):
    M, N, K, out, relu, bias, block, db, cfg = c
    return (f"{M}x{N}x{K}-{out}{'-relu' if relu else ''}{'-bias' if bias else ''}-b{'x'.join(map(str, block))}"
            f"{'-db' if db else ''}-dim{cfg.dim}")


def launch(case, target, loop_ws, seed=0):
    M, N, K, out, relu, bias, (bm, bn, bk), db, cfg = case
    rng = np.random.default_rng(seed + M * 7 + N * 13 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    d = rng.integers(-(1 << 15), 1 << 15, N, dtype=np.int32) if bias else None
    scale = 1 / 64 if out == "int8" else 1.0
    c = np.zeros((M, N), np.int8 if out == "int8" else np.int32)
    info = matmul_kernel[(bl.cdiv(M, bm), bl.cdiv(N, bn))](
        a, b, c, M, N, K, K, 1, N, 1, N, 1, scale, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, RELU=relu,
        OUT_INT8=out == "int8", bias_ptr=bias_vector(d, N), target=target, config=cfg, double_buffer=db,
        loop_ws=loop_ws)
    ref = reference(a, b, bias=d, out=out, scale=scale, relu=relu, block=(bm, bn, bk))
    return c, ref, info


def uses_loop_ws(info) -> bool:
    """The compiled kernel issues LOOP_WS (its LLVM IR: stage IR is not kept by the disk cache)."""
    return "@baco.rocc.loop_ws(" in info["kernel"].llvm_ir


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_loop_ws_bit_exact_on_sim(case):
    c, ref, info = launch(case, "sim", True)
    assert uses_loop_ws(info)
    np.testing.assert_array_equal(c, ref)
    explicit, _, off = launch(case, "sim", False)
    assert not uses_loop_ws(off)
    np.testing.assert_array_equal(explicit, ref)
    if case[2] > 2 * case[6][2]:       # several K steps: six commands each instead of a stream
        assert info["commands"] < off["commands"]


@pytest.mark.parametrize("case", [CASES[2], CASES[4], CASES[10]], ids=case_id)
def test_loop_ws_sim_and_iss_agree(case):
    c_iss, ref, info = launch(case, "iss", True)
    assert uses_loop_ws(info)
    np.testing.assert_array_equal(c_iss, ref)
    np.testing.assert_array_equal(launch(case, "sim", True)[0], c_iss)


def test_blocks_beyond_half_the_memories_stay_explicit():
    # a 128x128 int32 accumulator block needs the whole 1024-row accumulator; LOOP_WS has half
    case = (130, 140, 40, "int32", False, False, (128, 128, 32), False, DIM16)
    c, ref, info = launch(case, "sim", True)
    assert not uses_loop_ws(info)
    np.testing.assert_array_equal(c, ref)


def test_output_stationary_stays_explicit():
    a = np.ones((20, 20), np.int8)
    c = np.zeros((20, 20), np.int32)
    info = matmul_kernel[(1, 1)](a, a, c, 20, 20, 20, 20, 1, 20, 1, 20, 1, 1.0, BLOCK_M=32, BLOCK_N=32,
                                 BLOCK_K=32, RELU=False, OUT_INT8=False, dataflow="OS")
    assert not uses_loop_ws(info)
    np.testing.assert_array_equal(c, np.full((20, 20), 20, np.int32))


def test_env_knob_switches_the_default(monkeypatch):
    from baco.passes import loop_ws
    monkeypatch.setenv(loop_ws.ENV, "0")
    assert not loop_ws.enabled(None) and loop_ws.enabled(True)
    _, _, info = launch(CASES[1], "sim", None)
    assert not uses_loop_ws(info)
    monkeypatch.setenv(loop_ws.ENV, "1")
    assert loop_ws.enabled(None) and not loop_ws.enabled(False)
    _, _, info = launch(CASES[1], "sim", None)
    assert uses_loop_ws(info)


def test_command_stream_times_loop_ws_as_the_model_runs_it():
    """The cycle model sees the commands LOOP_WS expands to, through CommandStream as through
    the functional model."""
    from baco.sim.timing import CommandStream, TimingModel
    case = CASES[4]
    _, _, info = launch(case, "sim", True)
    M, N, K, out, relu, bias, (bm, bn, bk), db, cfg = case
    ck = info["kernel"]
    a, b = np.zeros((M, K), np.int8), np.zeros((K, N), np.int8)
    args = [a, b, np.zeros((M, N), np.int32), M, N, K, K, 1, N, 1, N, 1, 1.0, np.zeros(N, np.int32)]
    names = []
    ck.run((bl.cdiv(M, bm), bl.cdiv(N, bn)), args, model=CommandStream(),
           observers=[lambda name, f, pc=None: names.append(name)])
    assert "preload" in names and "mvout" in names and "loop_ws" not in names
    tm = TimingModel(cfg)
    ck.run((bl.cdiv(M, bm), bl.cdiv(N, bn)), args, model=CommandStream(), observers=[tm.observe])
    tm.fence()
    assert tm.report()["macs"] > 0
