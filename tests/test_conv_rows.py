"""Several output rows per conv2d program (GemmSchedule.rows) and the 3-D block pointers they
load through: bit-exact against reference_conv2d on sim (ragged row groups, strides, padding,
dilation, bias, batches, DIM 4, OS), on iss, under the interpreter; the default schedule's
choice; the capacity rule counting rows; located errors of the language feature; the next step's
slice loads spread through the compute columns."""
import numpy as np
import pytest

import baco
import baco.language as bl
from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, gemm_footprint, schedule_problems
from baco.kernels.conv import conv2d, conv2d_launch, conv_schedule, output_size, reference_conv2d


def rand(shape, seed):
    return np.random.default_rng(seed).integers(-128, 128, shape, dtype=np.int8)


# (N, H, W, C, K, R, S, stride, padding, dilation, out, relu, bias, rows, block_n, block_k)
CASES = [
    (1, 5, 5, 3, 4, 3, 3, 1, 1, 1, "int8", False, False, 2, 16, 16),
    (1, 7, 7, 32, 32, 3, 3, 1, 1, 1, "int8", True, True, 7, 32, 16),
    (2, 9, 9, 17, 33, 3, 3, 1, 1, 1, "int32", False, False, 4, 32, 16),     # 9 rows in groups of 4
    (1, 9, 11, 17, 17, 3, 3, 2, 1, 1, "int8", False, True, 2, 16, 16),      # stride 2
    (1, 12, 12, 16, 16, 7, 7, 2, 3, 1, "int8", True, False, 3, 16, 16),
    (1, 9, 20, 20, 33, 3, 3, 1, 2, 2, "int8", False, True, 3, 48, 32),      # dilation 2
    (1, 13, 13, 4, 4, 7, 7, 2, 3, 2, "int8", False, False, 5, 16, 16),      # more rows than P=4 need
    (2, 4, 7, 9, 11, 2, 2, 1, 1, 2, "int8", False, True, 3, 16, 16),
    (1, 17, 3, 6, 5, 3, 1, 1, 1, 1, "int32", False, False, 6, 16, 16),      # 3x1 filter
    (1, 2, 50, 17, 9, 1, 3, 2, 1, 1, "int8", False, False, 2, 16, 16),
    (1, 5, 21, 7, 7, 3, 3, 3, 2, 1, "int8", False, True, 2, 16, 16),        # stride 3
    (1, 8, 8, 65, 20, 1, 1, 2, 0, 1, "int8", False, False, 4, 32, 32),      # strided 1x1
    (1, 6, 6, 64, 20, 3, 3, 1, 1, 1, "int8", True, True, 6, 32, 64),
    (1, 10, 10, 33, 33, 5, 5, 1, 2, 1, "int8", False, False, 3, 48, 16),
]


def run(case, target="sim", dataflow="WS", double_buffer=True, config=None):
    N, H, W, C, K, R, S, stride, pad, dil, out, relu, bias, rows, bn, bk = case
    x, w = rand((N, H, W, C), 1), rand((R, S, C, K), 2)
    b = np.random.default_rng(3).integers(-(1 << 15), 1 << 15, K).astype(np.int32) if bias else None
    Q = output_size(W, S, stride, pad, dil)
    o = dict(stride=stride, padding=pad, dilation=dil, out=out, relu=relu, scale=1 / 256 if out == "int8" else 1.0,
             config=config, blocks=GemmSchedule(Q, bn, bk, dataflow, double_buffer, rows))
    y, info = conv2d(x, w, b, target=target, **o)
    return y, reference_conv2d(x, w, b, **o), info


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_rows_bit_exact_on_sim(case):
    y, ref, info = run(case)
    np.testing.assert_array_equal(y, ref)
    N, _, _, _, K, *_, rows, bn, _ = case
    assert info["programs"] == N * -(-ref.shape[1] // rows) * -(-K // bn)


@pytest.mark.parametrize("dataflow,double_buffer", [("OS", False), ("WS", False), ("OS", True)])
def test_rows_other_dataflows(dataflow, double_buffer):
    y, ref, _ = run(CASES[1], dataflow=dataflow, double_buffer=double_buffer)
    np.testing.assert_array_equal(y, ref)


def test_rows_on_a_dim4_gemmini():
    y, ref, _ = run((1, 6, 9, 5, 6, 3, 3, 2, 1, 1, "int8", False, True, 2, 4, 4),
                    config=GemminiConfig.from_capacity(4, 16, 8))
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("case", [CASES[2], CASES[4]], ids=lambda c: "x".join(map(str, c)))
def test_rows_on_iss(case):
    y, ref, _ = run(case, target="iss")
    np.testing.assert_array_equal(y, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_rows_on_iss_sweep(case):
    y, ref, _ = run(case, target="iss")
    np.testing.assert_array_equal(y, ref)


def test_rows_interpreter_agrees(monkeypatch):
    monkeypatch.setenv("BACO_INTERPRET", "1")
    for case in (CASES[0], CASES[3], CASES[7]):
        y, ref, _ = run(case)
        np.testing.assert_array_equal(y, ref)


def test_default_schedule_takes_whole_rows_on_small_images():
    """A 7x7 image: the default computes all 7 rows in one program (block_m = Q), bit-exact,
    and fewer cycles than one row per program; a wide image keeps one row per program."""
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    s = conv_schedule(None, Q=7, K=64, C=64, P=7, taps=9, config=cfg, out_int8=True)
    assert (s.block_m, s.rows, s.block_k) == (7, 7, 16)
    assert not schedule_problems(s, cfg, True)
    wide = conv_schedule(None, Q=500, K=64, C=64, P=3, taps=9, config=cfg, out_int8=True)
    assert wide.rows == 1
    x, w = rand((1, 7, 7, 64), 4), rand((3, 3, 64, 64), 5)
    launch = conv2d_launch(x, w, padding=1, scale=1 / 256, config=cfg)
    # the launch's default is LoopConv's fastest program (narrower output channels): still all 7 rows
    assert launch.schedule == conv_schedule(None, Q=7, K=64, C=64, P=7, taps=9, config=cfg, out_int8=True,
                                            filter_size=(3, 3), stride=1, dilation=1)
    assert (launch.schedule.block_m, launch.schedule.rows) == (7, 7)
    launch.run()
    np.testing.assert_array_equal(launch.y, reference_conv2d(x, w, padding=1, scale=1 / 256, config=cfg))
    one_row = conv2d_launch(x, w, padding=1, scale=1 / 256, config=cfg, blocks=GemmSchedule(16, 64, 16, "WS", True))
    assert launch.cycles()["cycles"] < one_row.cycles()["cycles"]


def test_rows_capacity_and_launch_options():
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    s = GemmSchedule(7, 64, 16, "WS", True, rows=5)
    fp = gemm_footprint(s, cfg, True)
    assert fp.acc_rows == 3 * 16 * 4 and fp.sp_rows == 2 * (3 * 16 + 16 * 4)     # 35 rows -> 3 tiles of 16
    assert s.launch_options()["ROWS"] == 5 and "ROWS" not in GemmSchedule(16, 16, 16).launch_options()
    assert GemmSchedule.from_dict(s.to_dict()) == s
    assert schedule_problems(GemmSchedule(16, 16, 16, rows=0), cfg, True) == ["rows=0 must be a positive integer"]
    problem, = schedule_problems(GemmSchedule(56, 64, 16, rows=8), cfg, True)
    assert "C 8*56x64 (1792 rows)" in problem and "accumulator" in problem
    with pytest.raises(ValueError, match="block_m = Q = 5"):
        conv2d(rand((1, 5, 5, 3), 1), rand((3, 3, 3, 4), 2), padding=1, blocks=GemmSchedule(16, 16, 16, rows=2))


# ---- 3-D block pointers ------------------------------------------------------------------
@baco.jit
def gather_slices(x_ptr, eye_ptr, y_ptr, S, R, C, s0, r0, c0, RS: bl.constexpr, RB: bl.constexpr,
                  CB: bl.constexpr, CHECK: bl.constexpr):
    """y = the (RS*RB, CB) flattened 3-D block of x (S, R, C) at (s0, r0, c0), through a dot with I."""
    a = bl.load(bl.make_block_ptr(x_ptr, shape=(S, R, C), strides=(R * C, C, 1), offsets=(s0, r0, c0),
                                  block_shape=(RS, RB, CB)), boundary_check=CHECK)
    eye = bl.load(bl.make_block_ptr(eye_ptr, shape=(CB, CB), strides=(CB, 1), offsets=(0, 0),
                                    block_shape=(CB, CB)))
    y = bl.make_block_ptr(y_ptr, shape=(RS * RB, CB), strides=(CB, 1), offsets=(0, 0), block_shape=(RS * RB, CB))
    bl.store(y, bl.dot(a, eye, bl.zeros((RS * RB, CB), dtype=bl.int32)))


def expected_slices(x, s0, r0, c0, RS, RB, CB, check):
    out = np.zeros((RS, RB, CB), np.int32)
    for i in range(RS):
        for j in range(RB):
            for k in range(CB):
                s, r, c = s0 + i, r0 + j, c0 + k
                inside = all(0 <= v < n for d, (v, n) in enumerate(zip((s, r, c), x.shape)) if d in check)
                if inside:
                    out[i, j, k] = x[s, r, c]
    return out.reshape(RS * RB, CB)


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("s0,r0,c0,RS,RB,CB,check", [
    (0, 0, 0, 2, 3, 16, (0, 1, 2)),
    (-1, -2, 0, 4, 5, 16, (0, 1, 2)),     # a slice above the tensor, rows left of it
    (3, 4, 16, 3, 6, 16, (0, 1, 2)),      # slices below, rows right of it, ragged channels
    (1, 1, 0, 2, 17, 16, (0, 1)),         # 17 rows per slice: slices straddle DIM tiles
    (0, 2, 0, 3, 4, 16, ()),              # unchecked, inside
])
def test_3d_block_pointer_loads_slices(monkeypatch, interpret, s0, r0, c0, RS, RB, CB, check):
    if interpret:
        monkeypatch.setenv("BACO_INTERPRET", "1")
    x = rand((5, 9, 20), 7)
    y = np.zeros((RS * RB, CB), np.int32)
    gather_slices[(1,)](x, np.eye(CB, dtype=np.int8), y, 5, 9, 20, s0, r0, c0, RS=RS, RB=RB, CB=CB, CHECK=check)
    np.testing.assert_array_equal(y, expected_slices(x, s0, r0, c0, RS, RB, CB, check))


@baco.jit
def store_3d(p, n):
    b = bl.make_block_ptr(p, shape=(n, n, n), strides=(n * n, n, 1), offsets=(0, 0, 0), block_shape=(2, 4, 4))
    bl.store(b, bl.load(b))


@baco.jit
def advance_3d(p, n):
    b = bl.make_block_ptr(p, shape=(n, n, n), strides=(n * n, n, 1), offsets=(0, 0, 0), block_shape=(2, 4, 4))
    b = bl.advance(b, (1, 0))  # noqa: F841


@baco.jit
def mixed_ranks(p, n):
    b = bl.make_block_ptr(p, shape=(n, n, n), strides=(n, 1), offsets=(0, 0), block_shape=(4, 4))  # noqa: F841


@baco.jit
def bad_check_3d(p, n):
    b = bl.make_block_ptr(p, shape=(n, n, n), strides=(n * n, n, 1), offsets=(0, 0, 0), block_shape=(2, 4, 4))
    a = bl.load(b, boundary_check=(3,))  # noqa: F841


@baco.jit
def four_d(p, n):
    b = bl.make_block_ptr(p, shape=(n, n, n, n), strides=(n, n, n, 1), offsets=(0, 0, 0, 0),  # noqa: F841
                          block_shape=(2, 2, 4, 4))


@pytest.mark.parametrize("kernel,fragment,snippet", [
    (store_3d, "3-D block pointers are loaded only", "bl.store(b,"),
    (advance_3d, "advance() moves 2-D block pointers", "bl.advance(b, (1, 0))"),
    (mixed_ranks, "make_block_ptr shape must be a 2-tuple", "bl.make_block_ptr(p, shape=(n, n, n)"),
    (bad_check_3d, "boundary_check dimensions must be 0, 1 and/or 2", "bl.load(b, boundary_check=(3,))"),
    (four_d, "or a 3-tuple", "bl.make_block_ptr("),
])
def test_3d_block_pointer_errors_are_located(kernel, fragment, snippet):
    with pytest.raises(CompilationError) as e:
        kernel[(1,)](np.zeros(4096, np.int8), 4)
    assert fragment in str(e.value)
    assert snippet in str(e.value)


def test_prefetched_slices_spread_over_the_columns():
    """The next tap step's slice loads (a mvin or two per output row of a 3-D load) are spread
    through this step's compute columns (baco.passes.prefetch), not issued all before its first
    column, where they would hold its computes back behind a full load reservation station."""
    from baco.sim.timing import CommandStream
    x, w = rand((1, 8, 8, 16), 1), rand((3, 3, 16, 64), 2)
    launch = conv2d_launch(x, w, padding=1, config=GemminiConfig(),
                           blocks=GemmSchedule(8, 64, 16, "WS", True, 8))      # 8 slices, 4 columns of C
    launch.options["loop_ws"] = False       # the explicit stream (not one LOOP_CONV_WS: baco.passes.loop_conv_ws)
    names = []
    ck = launch.kernel.compile(*launch.args, target="sim", **launch.options)
    ck.run(launch.grid, launch.runtime_args(), model=CommandStream(), observers=[lambda n, f, pc=None: names.append(n)])
    # mvins between one compute_preloaded (a new column's weights) and the next, in the tap loop
    per_column, count = [], None
    for n in names:
        if n == "compute_preloaded":
            if count is not None:
                per_column.append(count)
            count = 0
        elif n.startswith("mvin") and count is not None:
            count += 1
    steady = per_column[4:-8]       # after the first tap step, before the last two
    assert steady and all(c > 0 for c in steady), per_column
    assert max(steady) <= 2 * min(steady) + 2, per_column
