"""The loop-ws pass (baco.passes.loop_ws): GEMM programs as LOOP_WS hardware loops,
bit-exact against the Gemmini arithmetic reference and the explicit command stream, on
sim and iss; what it leaves unchanged; its switches."""
import numpy as np
import pytest

import baco
import baco.language as bl
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, gemm_loop_ws_loops, head_last_split, loop_unit_half, one_row, resident_a
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
    (50, 40, 40, "int8", True, True, (64, 48, 64), False, DIM16),        # one ragged step split: D in its whole blocks
    (70, 90, 100, "int32", False, True, (32, 64, 128), True, DIM32),     # the same at DIM 32
]


def case_id(c):
    M, N, K, out, relu, bias, block, db, cfg = c
    return (f"{M}x{N}x{K}-{out}{'-relu' if relu else ''}{'-bias' if bias else ''}-b{'x'.join(map(str, block))}"
            f"{'-db' if db else ''}-dim{cfg.dim}")


def launch(case, target, loop_ws, seed=0, transposed=(False, False)):
    """(C, reference, launch info); `transposed` (A, B): that operand column-major (its
    transpose stored row-major, read through strides (1, ld))."""
    M, N, K, out, relu, bias, (bm, bn, bk), db, cfg = case
    rng = np.random.default_rng(seed + M * 7 + N * 13 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    d = rng.integers(-(1 << 15), 1 << 15, N, dtype=np.int32) if bias else None
    scale = 1 / 64 if out == "int8" else 1.0
    c = np.zeros((M, N), np.int8 if out == "int8" else np.int32)
    a_t, b_t = transposed
    a_arg, a_strides = (np.ascontiguousarray(a.T), (1, M)) if a_t else (a, (K, 1))
    b_arg, b_strides = (np.ascontiguousarray(b.T), (1, K)) if b_t else (b, (N, 1))
    info = matmul_kernel[(bl.cdiv(M, bm), bl.cdiv(N, bn))](
        a_arg, b_arg, c, M, N, K, *a_strides, *b_strides, N, 1, scale, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
        RELU=relu, OUT_INT8=out == "int8", bias_ptr=bias_vector(d, N), target=target, config=cfg,
        double_buffer=db, loop_ws=loop_ws)
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


# blocks as whole as the layer's or dividing it: an ELF launch is specialized for its shapes and grid,
# which folds away the zeros under a bias window that covers the whole accumulator block
WHOLE_BIAS_CASES = [
    (16, 64, 384, "int8", False, True, (16, 64, 64), True, DIM16),
    (32, 128, 96, "int8", True, True, (16, 64, 32), True, DIM16),
    (32, 32, 96, "int32", False, True, (32, 32, 32), False, DIM16),
    (8, 8, 24, "int8", True, True, (8, 8, 8), False, DIM4),
]


@pytest.mark.parametrize("case", WHOLE_BIAS_CASES, ids=case_id)
def test_a_whole_block_bias_runs_loop_ws_on_the_iss(case):
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
    from baco.options import LOOP_WS_ENV, loop_ws_enabled
    monkeypatch.setenv(LOOP_WS_ENV, "0")
    assert not loop_ws_enabled(None) and loop_ws_enabled(True)
    _, _, info = launch(CASES[1], "sim", None)
    assert not uses_loop_ws(info)
    monkeypatch.setenv(LOOP_WS_ENV, "1")
    assert loop_ws_enabled(None) and not loop_ws_enabled(False)
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


# ---- transposed operands: LOOP_WS's a_transpose / b_transpose with config_ex's transposer ----
# (case, (A transposed, B transposed)); WS transposes one operand (both: test_ops_kernels' error)
TRANSPOSED = [
    ((65, 33, 100, "int32", False, False, (32, 32, 32), True, DIM16), (True, False)),
    ((65, 33, 100, "int32", False, False, (32, 32, 32), True, DIM16), (False, True)),
    ((17, 65, 33, "int8", True, True, (32, 48, 16), False, DIM16), (True, False)),
    ((17, 65, 33, "int8", True, True, (32, 48, 16), False, DIM16), (False, True)),
    ((1, 17, 65, "int32", False, True, (16, 32, 32), True, DIM16), (True, False)),
    ((33, 1, 65, "int8", False, False, (48, 16, 64), False, DIM16), (False, True)),
    ((1, 1, 17, "int32", False, False, (16, 16, 16), False, DIM16), (False, True)),
    ((40, 70, 200, "int8", True, True, (32, 96, 80), True, DIM16), (False, True)),   # > MAX_BLOCK_LEN of Bᵀ
    ((64, 64, 64, "int32", False, False, (64, 64, 32), False, DIM16), (False, True)),  # no ragged block
    ((7, 17, 33, "int32", False, True, (8, 8, 8), False, DIM4), (True, False)),
    ((33, 5, 17, "int8", True, False, (12, 8, 4), True, DIM4), (False, True)),
    ((100, 33, 17, "int8", True, True, (64, 64, 32), False, DIM32), (True, False)),
    ((65, 100, 129, "int32", False, False, (64, 64, 64), True, DIM32), (False, True)),
]


def transposed_id(t):
    case, (a_t, b_t) = t
    return f"{'At' if a_t else 'A'}{'Bt' if b_t else 'B'}-{case_id(case)}"


@pytest.mark.parametrize("t", TRANSPOSED, ids=transposed_id)
def test_transposed_operands_as_loop_ws_on_sim(t):
    case, transposed = t
    c, ref, info = launch(case, "sim", True, transposed=transposed)
    assert uses_loop_ws(info)
    np.testing.assert_array_equal(c, ref)
    explicit, _, off = launch(case, "sim", False, transposed=transposed)
    assert not uses_loop_ws(off)
    np.testing.assert_array_equal(explicit, ref)
    if case[2] > 2 * case[6][2]:
        assert info["commands"] < off["commands"]


@pytest.mark.parametrize("t", [TRANSPOSED[0], TRANSPOSED[3], TRANSPOSED[9]], ids=transposed_id)
def test_transposed_operands_as_loop_ws_sim_and_iss_agree(t):
    case, transposed = t
    c_iss, ref, info = launch(case, "iss", True, transposed=transposed)
    assert uses_loop_ws(info)
    np.testing.assert_array_equal(c_iss, ref)
    np.testing.assert_array_equal(launch(case, "sim", True, transposed=transposed)[0], c_iss)


def test_transposed_operands_in_os_stay_explicit():
    case = (33, 17, 40, "int32", False, False, (32, 32, 32), False, DIM16)
    M, N, K = case[:3]
    a = np.random.default_rng(1).integers(-128, 128, (M, K), dtype=np.int8)
    b = np.random.default_rng(2).integers(-128, 128, (K, N), dtype=np.int8)
    c = np.zeros((M, N), np.int32)
    info = matmul_kernel[(2, 1)](np.ascontiguousarray(a.T), b, c, M, N, K, 1, M, N, 1, N, 1, 1.0, BLOCK_M=32,
                                 BLOCK_N=32, BLOCK_K=32, RELU=False, OUT_INT8=False, dataflow="OS")
    assert not uses_loop_ws(info)
    np.testing.assert_array_equal(c, reference(a, b, block=(32, 32, 32), dataflow="OS"))


# ---- one K step and no K loop: K = 1 (the loop folds away), a kernel without a loop ---------
@baco.jit
def single_dot(a_ptr, b_ptr, c_ptr, M, N, K, scale, BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr,
               OUT_INT8: bl.constexpr, A_ROW: bl.constexpr, STORE_TWICE: bl.constexpr, bias_ptr=None):
    """C = A·B (+ bias) for K ≤ BK with one dot and no loop. Near misses LOOP_WS cannot do:
    A_ROW ≠ 0 starts A's window inside its block (rows above it are zero), STORE_TWICE stores
    the accumulator to C twice."""
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a = bl.load(bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BM - A_ROW, 0),
                                  block_shape=(BM, BK), order=(1, 0)), boundary_check=(0, 1))
    b = bl.load(bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BN),
                                  block_shape=(BK, BN), order=(1, 0)), boundary_check=(0, 1))
    if bias_ptr is not None:
        acc = bl.load(bl.make_block_ptr(bias_ptr, shape=(M, N), strides=(0, 1), offsets=(pid_m * BM, pid_n * BN),
                                        block_shape=(BM, BN), order=(1, 0)), boundary_check=(0, 1))
        acc += bl.dot(a, b)
    else:
        acc = bl.dot(a, b)
    c_blk = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, pid_n * BN),
                              block_shape=(BM, BN), order=(1, 0))
    if OUT_INT8:
        bl.store(c_blk, bl.relu(acc * scale).to(bl.int8), boundary_check=(0, 1))
    else:
        bl.store(c_blk, acc, boundary_check=(0, 1))
        if STORE_TWICE:
            bl.store(c_blk, acc, boundary_check=(0, 1))


def launch_single(M, N, K, block, out, bias, target, loop_ws, cfg=DIM16, a_row=0, store_twice=False):
    rng = np.random.default_rng(M * 7 + N * 13 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    d = rng.integers(-(1 << 15), 1 << 15, N, dtype=np.int32) if bias else None
    c = np.zeros((M, N), np.int8 if out == "int8" else np.int32)
    bm, bn, bk = block
    info = single_dot[(bl.cdiv(M, bm), bl.cdiv(N, bn))](
        a, b, c, M, N, K, 1 / 64, BM=bm, BN=bn, BK=bk, OUT_INT8=out == "int8", A_ROW=a_row, STORE_TWICE=store_twice,
        bias_ptr=bias_vector(d, N), target=target, config=cfg, loop_ws=loop_ws)
    a_used = a       # row r of C is row r − A_ROW of A (zero above A's first row)
    if a_row:
        a_used = np.zeros_like(a)
        a_used[a_row:] = a[:M - a_row]
    ref = reference(a_used, b, bias=d, out=out, scale=1 / 64, relu=out == "int8", block=block)
    return c, ref, info


# (M, N, K, block, out, bias, config)
SINGLE_STEP = [
    (17, 33, 65, (32, 48, 80), "int32", False, DIM16),
    (65, 17, 33, (80, 32, 48), "int8", True, DIM16),
    (1, 65, 17, (16, 80, 32), "int32", True, DIM16),
    (33, 1, 1, (48, 16, 16), "int8", False, DIM16),
    (1, 1, 1, (16, 16, 16), "int32", False, DIM16),
    (64, 64, 64, (64, 64, 64), "int32", False, DIM16),
    (17, 9, 7, (8, 8, 8), "int8", True, DIM4),
    (33, 65, 17, (64, 96, 32), "int32", True, DIM32),
]


def single_id(c):
    M, N, K, block, out, bias, cfg = c
    return f"{M}x{N}x{K}-{out}{'-bias' if bias else ''}-b{'x'.join(map(str, block))}-dim{cfg.dim}"


@pytest.mark.parametrize("case", SINGLE_STEP, ids=single_id)
def test_kernel_without_k_loop_is_one_loop_ws(case):
    M, N, K, block, out, bias, cfg = case
    c, ref, info = launch_single(M, N, K, block, out, bias, "sim", True, cfg)
    assert uses_loop_ws(info)
    np.testing.assert_array_equal(c, ref)
    explicit, _, off = launch_single(M, N, K, block, out, bias, "sim", False, cfg)
    assert not uses_loop_ws(off)
    np.testing.assert_array_equal(explicit, ref)
    d = cfg.dim
    if bl.cdiv(min(M, block[0]), d) * bl.cdiv(min(N, block[1]), d) > 1:     # several tiles a program
        assert info["commands"] < off["commands"]


@pytest.mark.parametrize("case", [SINGLE_STEP[1], SINGLE_STEP[6]], ids=single_id)
def test_kernel_without_k_loop_sim_and_iss_agree(case):
    M, N, K, block, out, bias, cfg = case
    c_iss, ref, info = launch_single(M, N, K, block, out, bias, "iss", True, cfg)
    assert uses_loop_ws(info)
    np.testing.assert_array_equal(c_iss, ref)
    np.testing.assert_array_equal(launch_single(M, N, K, block, out, bias, "sim", True, cfg)[0], c_iss)


@pytest.mark.parametrize("M,N", [(1, 1), (17, 33), (65, 17), (33, 65)])
def test_k_of_one_folds_the_loop_and_is_one_loop_ws(M, N):
    """K = 1 is specialized, so cdiv(K, BLOCK_K) = 1 and the K loop folds away."""
    for out, bias in (("int32", False), ("int8", True)):
        case = (M, N, 1, out, out == "int8", bias, (32, 32, 16), False, DIM16)
        c, ref, info = launch(case, "sim", True)
        assert uses_loop_ws(info)
        np.testing.assert_array_equal(c, ref)
        explicit, _, off = launch(case, "sim", False)
        np.testing.assert_array_equal(explicit, ref)
        assert info["commands"] < off["commands"]


@pytest.mark.parametrize("form,n_out", [("Ax", 65), ("Ax", 1), ("xB", 33), ("xB", 17)])
def test_gemv_of_one_column_is_one_loop_ws(form, n_out):
    """examples/gemv.py with K = 1: y = A·x / x·B with one element of x."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import gemv
    rng = np.random.default_rng(n_out)
    mat = rng.integers(-128, 128, (n_out, 1) if form == "Ax" else (1, n_out), dtype=np.int8)
    x = rng.integers(-128, 128, 1, dtype=np.int8)
    bias = rng.integers(-1000, 1000, n_out, dtype=np.int32)
    for target in ("sim", "iss"):
        y, info = gemv.gemv(form, mat, x, bias=bias, out="int8", scale=1 / 4, relu=True, target=target)
        assert uses_loop_ws(info)
        np.testing.assert_array_equal(y, gemv.reference(form, mat, x, bias=bias, out="int8", scale=1 / 4,
                                                        relu=True))


def test_near_misses_without_k_loop_stay_explicit():
    """A's window starting inside its block (LOOP_WS fills blocks from row 0) and a second
    store of the accumulator are not LOOP_WS's: both compile to the explicit stream."""
    c, ref, info = launch_single(40, 20, 17, (32, 32, 32), "int32", False, "sim", True, a_row=3)
    assert not uses_loop_ws(info)
    np.testing.assert_array_equal(c, ref)
    c, ref, info = launch_single(40, 20, 17, (32, 32, 32), "int32", False, "sim", True, store_twice=True)
    assert not uses_loop_ws(info)
    np.testing.assert_array_equal(c, ref)


def issued_commands(case):
    """(C, reference, the (name, fields) the CPU issues: not what LOOP_WS expands to) of a launch
    of `case` on sim with the loop-ws pass, every program of its grid."""
    from baco.gemmini.isa import decode
    from baco.sim.timing import CommandStream
    c, ref, info = launch(case, "sim", True)
    issued = []

    class Issued(CommandStream):
        depth = 0

        def execute(self, funct, rs1, rs2, pc=None):
            cmd, fields = decode(funct, rs1, rs2)
            if self.depth == 0:
                issued.append((cmd.name, fields))
            self.depth += 1
            try:
                return super().execute(funct, rs1, rs2, pc)
            finally:
                self.depth -= 1
    M, N, K, (bm, bn, _) = *case[:3], case[6]
    int8 = case[3] == "int8"
    info["kernel"].run((bl.cdiv(M, bm), bl.cdiv(N, bn)),
                       [np.zeros((M, K), np.int8), np.zeros((K, N), np.int8), np.zeros((M, N), np.int8 if int8 else np.int32),
                        M, N, K, K, 1, N, 1, N, 1, 1 / 64 if int8 else 1.0] + ([np.zeros(N, np.int32)] if case[5] else []),
                       model=Issued())
    return c, ref, issued


def loads_before_each_loop(issued):
    names = [name for name, _ in issued]
    loops = [i for i, name in enumerate(names) if name == "loop_ws"]
    return [sum(name.startswith("mvin") for name in names[lo:hi]) for lo, hi in zip([0] + loops, loops)]


def test_k_loop_steps_load_their_operands_and_a_ragged_k_is_split():
    """In a K loop, a step whose K is whole blocks is a LOOP_WS that loads its A and B itself
    (their DRAM addresses, its loop slot's halves: spad id 0), so the program is LOOP_WSs only.
    LoopMatmul reads B's DIM rows of a padded K block, so a ragged step of K >= DIM is two
    LOOP_WSs: its first K % DIM columns as one padded block (whose DIM B rows lie inside the
    window), then the whole blocks after them, still loaded by the FSM."""
    case = (64, 64, 90, "int32", False, False, (64, 64, 32), False, DIM16)   # one program, K steps 32, 32, 26
    c, ref, issued = issued_commands(case)
    np.testing.assert_array_equal(c, ref)
    assert loads_before_each_loop(issued) == [0, 0, 0, 0]
    bounds = [(f["max_k"], f["pad_k"]) for name, f in issued if name == "loop_ws_config_bounds"]
    assert bounds == [(2, 0), (2, 0), (1, 6), (1, 0)]           # the ragged 26: 10 columns, then 16
    addrs = [(f["a_addr"], f["b_addr"]) for name, f in issued if name == "loop_ws_config_addrs_ab"]
    (a_head, b_head), (a_rest, b_rest) = addrs[2:]
    assert a_rest - a_head == 10 and b_rest - b_head == 10 * 64
    assert [(f["c_addr"] != 0) for name, f in issued if name == "loop_ws_config_addrs_dc"] == [False] * 3 + [True]
    spad_ids = [(f["a_spad_id"], f["b_spad_id"]) for name, f in issued if name == "loop_ws"]
    assert spad_ids == [(0, 0)] * 4
    assert [f["ex_accumulate"] for name, f in issued if name == "loop_ws"] == [0, 1, 1, 1]


@pytest.mark.parametrize("M, N, K, bias, cfg, head_last", [
    (20, 17, 51, False, DIM16, True),      # one program, one ragged step of 4 blocks: 3 whole, then the head
    (33, 1, 179, False, DIM16, True),      # a GEMV's one-program launch (12 blocks)
    (65, 33, 33, False, DIM16, True),      # 3 blocks, the least that puts the head last
    (65, 33, 33, True, DIM16, False),      # with a bias: the head first, with D
    (17, 20, 29, True, DIM16, False),      # 2 blocks: the head first, with D
    (1, 65, 91, False, DIM32, True),
])
def test_a_first_ragged_step_issues_its_head_after_its_whole_blocks(M, N, K, bias, cfg, head_last):
    """A program's first K step, ragged, split in two LOOP_WSs with at least HEAD_LAST_BLOCKS
    blocks: its whole blocks first (the D window, no C), then the head's K % DIM columns (one padded
    block, accumulating, C stored), as schedule.head_last_split says; with fewer or a bias, the head first.
    Bit-exact either way."""
    d = cfg.dim
    case = (M, N, K, "int32", False, bias, (-(-M // d) * d, -(-N // d) * d, -(-K // d) * d), False, cfg)
    c, ref, issued = issued_commands(case)
    np.testing.assert_array_equal(c, ref)
    assert head_last_split(0, K, d, bias) == head_last
    bounds = [(f["max_k"], f["pad_k"]) for name, f in issued if name == "loop_ws_config_bounds"]
    whole, head = (K // d, 0), (1, d - K % d)
    assert bounds == ([whole, head] if head_last else [head, whole])
    addrs = [f for name, f in issued if name == "loop_ws_config_addrs_ab"]
    assert addrs[1 if head_last else 0]["a_addr"] + K % d == addrs[0 if head_last else 1]["a_addr"]
    dc = [f for name, f in issued if name == "loop_ws_config_addrs_dc"]
    assert [bool(f["d_addr"]) for f in dc] == [bias, False] and [bool(f["c_addr"]) for f in dc] == [False, True]
    assert [f["ex_accumulate"] for name, f in issued if name == "loop_ws"] == [int(bias), 1]
    # the walk default_gemm_schedule ranks with prices the same two LOOP_WSs
    (program, _), = gemm_loop_ws_loops(M, N, K, GemmSchedule(*case[6]), cfg, bias=bias)[0][0]
    assert [(lp.K, lp.pad_k, lp.bias, lp.store) for lp in program] == \
        [(k, pad, b, s) for (k, pad), b, s in zip(bounds, [bias, False], [False, True])]


def test_a_ragged_k_under_dim_has_its_b_moved_in_explicitly():
    """A step of K < DIM cannot be split (LoopMatmul would read B's DIM rows past K): its B is
    moved in (one mvin2 into LoopMatmul's layout in each half) just before its LOOP_WS, whose B
    address is 0 and b_spad_id 0 (its loop slot's half, which the program cannot know: the next
    LOOP_WS loads into the other one); the FSM still loads A (K's padded columns). Nothing is
    issued after it."""
    case = (64, 64, 42, "int32", False, False, (64, 64, 32), False, DIM16)   # K steps 32, 10
    c, ref, issued = issued_commands(case)
    np.testing.assert_array_equal(c, ref)
    assert loads_before_each_loop(issued) == [0, 2]
    assert issued[-1][0] == "loop_ws"
    moves = [f for name, f in issued if name.startswith("mvin")]
    assert [name for name, _ in issued if name.startswith("mvin")] == ["mvin2", "mvin2"]
    half = loop_unit_half(DIM16).sp_rows
    assert [(f["dram_addr"], f["cols"], f["rows"]) for f in moves] == [(moves[0]["dram_addr"], 64, 10)] * 2
    assert [f["local_addr"] for f in moves] == [half - 4 * DIM16.dim, 2 * half - 4 * DIM16.dim]
    addrs = [(f["a_addr"], f["b_addr"]) for name, f in issued if name == "loop_ws_config_addrs_ab"]
    assert all(addrs[0]) and addrs[1][0] and addrs[1][1] == 0
    assert [(f["a_spad_id"], f["b_spad_id"]) for name, f in issued if name == "loop_ws"] == [(0, 0), (0, 0)]


# residual adds (baco.kernels.resadd): (M, N, block, config); ragged columns, and ragged rows
RESADD = [(32, 33, (32, 48), DIM16), (256, 24, None, DIM16), (65, 129, None, DIM16), (17, 33, (32, 48), DIM16),
          (33, 5, (12, 4), DIM4), (4, 960, None, DIM16)]


@pytest.mark.parametrize("case", RESADD, ids=lambda c: f"{c[0]}x{c[1]}-b{c[2]}-dim{c[3].dim}")
def test_resadd_programs_are_one_loop_ws_each(case):
    """Each residual-add program whose rows are whole DIM blocks is one LOOP_WS with is_resadd
    (tiled_resadd's; LoopMatmul moves B in whole row blocks, so a program of ragged rows stays
    explicit), bit-exact on sim and iss; without a block the kernel reads 256x24 and 4x960 as DIM
    rows (resadd.default_view), 65x129 (an odd element count) as it is."""
    from baco.kernels.resadd import reference as resadd_reference
    from baco.kernels.resadd import resadd_launch
    M, N, block, cfg = case
    rng = np.random.default_rng(M + N)
    a, b = (rng.integers(-128, 128, (M, N), dtype=np.int8) for _ in range(2))
    ref = resadd_reference(a, b, 0.75, -1.5, 0.5, relu=True)
    for target in ("sim", "iss"):
        launch = resadd_launch(a, b, 0.75, -1.5, 0.5, relu=True, block=block, config=cfg)
        info = launch.run(target)
        stats = info["model"].stats if target == "sim" else info["result"].stats
        bm, rows = launch.options["BLOCK_M"], launch.args[3]     # the rows the kernel reads A and B as
        whole = sum(min(bm, rows - i * bm) % cfg.dim == 0 for i in range(launch.grid[0]))
        assert stats.get("loop_ws", 0) == whole * launch.grid[1]
        np.testing.assert_array_equal(launch.y, ref)


def test_resadd_beyond_the_accumulator_half_stays_explicit():
    from baco.kernels.resadd import reference as resadd_reference
    from baco.kernels.resadd import resadd_launch
    rng = np.random.default_rng(1)
    a, b = (rng.integers(-128, 128, (70, 100), dtype=np.int8) for _ in range(2))
    launch = resadd_launch(a, b, 1.0, 1.0, 1.0, relu=False, block=(128, 128))    # 8 x 8 blocks of 16 rows
    info = launch.run("sim")
    assert not uses_loop_ws(info)
    np.testing.assert_array_equal(launch.y, resadd_reference(a, b, 1.0, 1.0, 1.0, relu=False))


# programs of one K step that keep an operand in the scratchpad for the next program (_Resident):
# (M, N, K, out, relu, bias, (BM, BN, BK), double_buffer, config)
RESIDENT = [
    (1086, 1, 576, "int32", False, False, (208, 16, 576), False, DIM16),  # GEMV: B kept down the column
    (697, 1, 55, "int8", True, True, (128, 16, 64), False, DIM16),        # ragged K, one column block: B moved in
    (65, 33, 17, "int8", False, False, (16, 16, 32), False, DIM16),       # 5 x 3 programs, each column its own B
    (17, 1, 33, "int32", False, True, (16, 16, 48), False, DIM16),
    (1957, 1, 15, "int32", False, False, (512, 16, 16), False, DIM16),    # K < DIM: B moved in by the first only
    (1, 65, 17, "int8", False, False, (16, 16, 32), False, DIM16),        # one program along M: A kept, not B
    (33, 65, 1, "int32", False, True, (48, 16, 16), False, DIM16),        # K = 1: no K loop (one row: A kept)
    (70, 90, 100, "int32", False, True, (32, 64, 128), True, DIM32),
    (33, 16, 17, "int8", True, False, (8, 8, 32), False, DIM4),
]


def per_program(issued, name):
    """The fields of each `name` command the CPU issued, in order."""
    return [f for n, f in issued if n == name]


@pytest.mark.parametrize("case", RESIDENT, ids=case_id)
def test_one_step_programs_compute_on_the_previous_programs_b(case):
    """A program whose K is one step keeps B in fixed halves (b_spad_id: one LOOP_WS's in half
    1 + pid_n % 2, a split step's in halves 1 and 2; an explicitly moved B, K < DIM or a ragged K
    over one column block, in the first's) and every program after the first of its column computes
    on it (B address 0, no mvin2); A is moved in by every program, in its loop slot's half, but in a
    one-row grid (schedule.resident_a: the first program's, in the first half; test_loop_ws_resident_a),
    where a ragged step of at least DIM is split with its whole blocks first (B in half 1) and its head
    after them (B in half 2, A in the second half): a split step's first LOOP_WS takes half 1. Bit-exact with different data in every column."""
    M, N, K, _, _, _, (bm, bn, bk), _, cfg = case
    c, ref, issued = issued_commands(case)
    np.testing.assert_array_equal(c, ref)
    rows, cols = bl.cdiv(M, bm), bl.cdiv(N, bn)
    loops = per_program(issued, "loop_ws")
    addrs = per_program(issued, "loop_ws_config_addrs_ab")
    per = len(loops) // (rows * cols)
    assert per * rows * cols == len(loops) and per in (1, 2)
    bias = case[5]
    keep_a = resident_a(M, K, GemmSchedule(bm, bn, bk), cfg, bias=bias)
    after = one_row(M, N, K, GemmSchedule(bm, bn, bk), bias)     # the head after the whole blocks
    if per == 1:
        assert [f["b_spad_id"] for f in loops] == [1 + p // rows % 2 for p in range(rows * cols)]
    else:
        assert [f["b_spad_id"] for f in loops] == [1, 2] * (rows * cols)
    assert [f["a_spad_id"] for f in loops] == ([1, 2] * (rows * cols) if after and per == 2 else
                                               [int(keep_a)] * len(loops))
    assert [bool(a["a_addr"]) for a in addrs] == [not keep_a or p < per for p in range(len(addrs))]
    explicit_b = K < cfg.dim or (K % cfg.dim and bn <= cfg.dim and not after)
    first = [p % rows == 0 for p in range(rows * cols) for _ in range(per)]
    assert [bool(f["b_addr"]) for f in addrs] == ([False] * len(addrs) if explicit_b else first)
    mvin2 = len([n for n, _ in issued if n == "mvin2"])
    # a column's first program moves B in, into its column's half only (nothing after the LOOP_WS)
    assert mvin2 == (cols * -(-K // cfg.dim) * -(-bn // cfg.dim // cfg.max_block_len) if explicit_b else 0)


def test_programs_of_several_k_steps_keep_nothing():
    """Programs of several K steps reload both operands every step, in their loop slots' halves."""
    case = (64, 64, 90, "int32", False, False, (32, 32, 32), False, DIM16)    # 2 x 2 programs of 4 LOOP_WSs
    c, ref, issued = issued_commands(case)
    np.testing.assert_array_equal(c, ref)
    assert all((f["a_spad_id"], f["b_spad_id"]) == (0, 0) for f in per_program(issued, "loop_ws"))
    assert all(f["a_addr"] and f["b_addr"] for f in per_program(issued, "loop_ws_config_addrs_ab"))


@pytest.mark.parametrize("case", [RESIDENT[1], RESIDENT[4], RESIDENT[6], RESIDENT[7]], ids=case_id)
def test_resident_b_sim_and_iss_agree(case):
    c_sim, ref, _ = launch(case, "sim", True)
    c_iss, _, _ = launch(case, "iss", True)
    np.testing.assert_array_equal(c_sim, ref)
    np.testing.assert_array_equal(c_iss, ref)
