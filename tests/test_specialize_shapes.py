"""Shape specialization (`specialize_shapes`): a launch's integer arguments compiled as constants.
Every program stays bit-exact with it on and off (ragged shapes 1, 17, 33, 65), a specialized
kernel serves only its own values, the kernel cache keys on the values, and the GEMM kernel's
default turns it on for the ISS (its ELFs and whole programs) and off for the host simulator."""
import re

import numpy as np
import pytest

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.config import GemminiConfig
from baco.kernels.matmul import matmul_kernel, matmul_launch, reference
from baco.options import full_grid

RAGGED = [(1, 17, 33), (17, 33, 65), (65, 1, 17), (33, 65, 1), (17, 1, 65)]


def _operands(M, N, K, seed=0):
    rng = np.random.default_rng(seed + 97 * M + 7 * N + K)
    return rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, N), dtype=np.int8)


@pytest.mark.parametrize("shape", RAGGED, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("specialize", [False, True])
def test_gemm_bit_exact_either_way(shape, specialize):
    a, b = _operands(*shape)
    for out in ("int32", "int8"):
        launch = matmul_launch(a, b, out=out, scale=1 / 32, relu=out == "int8")
        launch.kernel[launch.grid](*launch.args, target="sim", specialize_shapes=specialize, **launch.options)
        np.testing.assert_array_equal(launch.y, reference(a, b, out=out, scale=1 / 32, relu=out == "int8"))


def _launch_args(M, N, K):
    a, b = _operands(M, N, K)
    launch = matmul_launch(a, b)
    return launch, launch.args, launch.options


def test_specialized_kernel_serves_only_its_values():
    launch, args, options = _launch_args(17, 33, 65)
    ck, runtime = matmul_kernel.compile_launch(*args, target="sim", specialize_shapes=True, **options)
    assert ck.fixed == {"M": 17, "N": 33, "K": 65, "stride_am": 65, "stride_ak": 1, "stride_bk": 33,
                        "stride_bn": 1, "stride_cm": 33, "stride_cn": 1}
    ck.run(launch.grid, runtime)               # its own values run
    np.testing.assert_array_equal(launch.y, reference(*_operands(17, 33, 65)))
    wrong = list(runtime)
    wrong[3] = 16                              # M
    with pytest.raises(ValueError, match="compiled for M = 17"):
        ck.run(launch.grid, wrong)
    plain, _ = matmul_kernel.compile_launch(*args, target="sim", specialize_shapes=False, **options)
    assert plain.fixed == {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}


def test_cache_keys_on_the_values():
    _, args, options = _launch_args(17, 33, 65)
    _, args2, _ = _launch_args(18, 33, 65)
    first = matmul_kernel.compile(*args, target="sim", specialize_shapes=True, **options)
    assert matmul_kernel.compile(*args, target="sim", specialize_shapes=True, **options) is first
    assert matmul_kernel.compile(*args2, target="sim", specialize_shapes=True, **options) is not first
    # unspecialized, one compile serves both shapes
    assert (matmul_kernel.compile(*args, target="sim", specialize_shapes=False, **options)
            is matmul_kernel.compile(*args2, target="sim", specialize_shapes=False, **options))


def test_constants_in_the_ir():
    _, args, options = _launch_args(17, 33, 65)
    on = matmul_kernel.compile(*args, target="sim", specialize_shapes=True, **options)
    off = matmul_kernel.compile(*args, target="sim", specialize_shapes=False, **options)
    assert "arith.constant 65 : index" in on.baco_ir
    # the argument is still passed (the launch's arguments do not change) but no longer read
    def reads_k(kernel):
        return re.search(r"%K\b", "\n".join(kernel.baco_ir.splitlines()[2:])) is not None
    assert "%K: index" in on.baco_ir and not reads_k(on)
    assert reads_k(off)


def test_gemm_default_is_on_for_the_iss_only():
    _, args, options = _launch_args(17, 33, 65)
    assert matmul_kernel.specialize_shapes == "iss"
    assert set(matmul_kernel.compile(*args, target="iss", **options).fixed) >= {"M", "N", "K"}
    assert "M" not in matmul_kernel.compile(*args, target="sim", **options).fixed


@jit
def _doubled(x_ptr, y_ptr, n, stride, BLOCK: bl.constexpr):
    blk = bl.make_block_ptr(x_ptr, shape=(n, BLOCK), strides=(stride, 1), offsets=(bl.program_id(0) * BLOCK, 0),
                            block_shape=(BLOCK, BLOCK), order=(1, 0))
    out = bl.make_block_ptr(y_ptr, shape=(n, BLOCK), strides=(stride, 1), offsets=(bl.program_id(0) * BLOCK, 0),
                            block_shape=(BLOCK, BLOCK), order=(1, 0))
    x = bl.load(blk, boundary_check=(0, 1))
    bl.store(out, x + x, boundary_check=(0, 1))


def test_knob_checked_and_default_off():
    assert _doubled.specialize_shapes is False
    with pytest.raises(ValueError, match="specialize_shapes must be"):
        jit(specialize_shapes="yes")(_doubled.fn)
    with pytest.raises(ValueError, match="specialize_shapes must be"):
        _doubled.compile(np.zeros(16, np.int32), np.zeros(16, np.int32), 1, 16,
                             BLOCK=16, specialize_shapes=1)


def test_user_kernel_specialized_runs_ragged():
    cfg = GemminiConfig()
    for n in (1, 17, 33):
        x = np.arange(n * 16, dtype=np.int32).reshape(-1) - 100
        for specialize in (False, True):
            y = np.zeros_like(x)
            _doubled[(bl.cdiv(n, 16),)](x, y, n, 16, BLOCK=16, config=cfg, specialize_shapes=specialize)
            np.testing.assert_array_equal(y, x * 2)


@pytest.mark.parametrize("specialize", [False, True])
def test_gemm_iss_bit_exact_either_way(specialize):
    a, b = _operands(17, 33, 65)
    launch = matmul_launch(a, b, out="int8", scale=1 / 32)
    launch.kernel[launch.grid](*launch.args, target="iss", specialize_shapes=specialize, **launch.options)
    np.testing.assert_array_equal(launch.y, reference(a, b, out="int8", scale=1 / 32))


def test_a_program_links_one_function_per_shape(tmp_path):
    """Whole programs (baco.codegen.program, as baco.model.lower's launches) compile their GEMM steps
    for the ISS, so specialized on their shapes: two steps of one shape share a function, a third of
    another shape has its own; the ELF is bit-exact."""
    from baco.codegen.program import Program, build_program_elf, run_program
    from baco.gemmini.schedule import GemmSchedule
    schedule, scale = GemmSchedule(32, 32, 64), 1 / 32
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (17, 33), dtype=np.int8)
    w1, w2, w3 = (rng.integers(-128, 128, s, dtype=np.int8) for s in ((33, 33), (33, 33), (33, 1)))
    p = Program()
    h1, h2 = p.activation("h1", np.int8, (17, 33)), p.activation("h2", np.int8, (17, 33))
    y = p.output("y", np.int8, (17, 1))
    expected = x
    for name, a, w, c in (("fc1", p.input("x", np.int8, x.shape), w1, h1), ("fc2", h1, w2, h2), ("fc3", h2, w3, y)):
        m, k, n = 17, 33, w.shape[1]
        p.launch(name, matmul_kernel, (bl.cdiv(m, 32), bl.cdiv(n, 32)),
                 [a, p.weights(name + ".w", w), c, m, n, k, k, 1, n, 1, n, 1, scale], outputs=[c],
                 RELU=False, OUT_INT8=True, schedule=schedule)
        expected = reference(expected, w, out="int8", scale=scale, schedule=schedule)
    build = build_program_elf(p, tmp_path / "p.elf", input=x, expected=expected)
    assert sorted(build.kernels.values()) == [["fc1", "fc2"], ["fc3"]]
    assert all(set(step.kernel.fixed) >= {"M", "N", "K"} for step in p.steps)
    assert all(step.kernel.grid == step.grid == (1, 2 if step.name != "fc3" else 1, 1) for step in p.steps)
    run = run_program(build)
    assert run.passed
    np.testing.assert_array_equal(run.output, expected)


def test_a_specialized_key_never_equals_an_unspecialized_one():
    """("i", v == 1) of a plain compile and a specialized value 0 or 1 would be equal tuples."""
    x = np.zeros(16, np.int32)
    plain = _doubled.compile(x, x, 0, 1, BLOCK=16, specialize_shapes=False)
    assert plain.fixed == {"stride": 1}
    special = _doubled.compile(x, x, 0, 1, BLOCK=16, specialize_shapes=True)
    assert special is not plain and special.fixed == {"n": 0, "stride": 1}
    assert _doubled.compile(x, x, 0, 1, BLOCK=16, specialize_shapes=False) is plain


# ---- the conv kernels specialized per launch (their default stays off) -----------------------------

CONV_CASES = [      # (H, C, K, filter, stride, padding): ragged, padded, strided, 1x1 stride 2
    (13, 17, 33, 3, 2, 1), (13, 17, 33, 1, 2, 0), (9, 3, 64, 5, 1, 2), (8, 64, 64, 3, 2, 1)]


def _conv_operands(H, C, K, R, seed=0):
    rng = np.random.default_rng(seed + 31 * H + 7 * C + K + R)
    return (rng.integers(-128, 128, (1, H, H + 2, C), dtype=np.int8),
            rng.integers(-128, 128, (R, R, C, K), dtype=np.int8), rng.integers(-5000, 5000, K).astype(np.int32))


@pytest.mark.parametrize("case", [c if i < 2 else pytest.param(c, marks=pytest.mark.slow)
                                  for i, c in enumerate(CONV_CASES)], ids=lambda c: "h{}c{}k{}r{}s{}p{}".format(*c))
def test_conv_iss_specialized_bit_exact(case):
    """A conv launch specialized on its shapes for the ISS: bit-exact against the numpy reference, with
    the bias, on a non-square image."""
    from baco.kernels.conv import conv2d_kernel, conv2d_launch, reference_conv2d
    H, C, K, R, st, pad = case
    x, w, b = _conv_operands(H, C, K, R)
    kw = dict(stride=st, padding=pad, scale=1 / 64, relu=True)
    launch = conv2d_launch(x, w, b, config=GemminiConfig(), **kw)
    launch.options["specialize_shapes"] = True
    ck = conv2d_kernel.compile(*launch.args, target="iss", **launch.options)
    assert set(ck.fixed) >= {"H", "W", "C", "K", "stride_h", "pad_w"}
    launch.run("iss")
    np.testing.assert_array_equal(launch.y, reference_conv2d(x, w, b, **kw))


def test_conv_specialized_kernel_serves_only_its_values():
    from baco.kernels.conv import conv2d_kernel, conv2d_launch, reference_conv2d
    x, w, _ = _conv_operands(13, 17, 33, 3)
    launch = conv2d_launch(x, w, stride=2, padding=1, scale=1 / 64, config=GemminiConfig())
    ck, runtime = conv2d_kernel.compile_launch(*launch.args, target="iss", specialize_shapes=True, **launch.options)
    ck.run(launch.grid, runtime)
    np.testing.assert_array_equal(launch.y, reference_conv2d(x, w, stride=2, padding=1, scale=1 / 64))
    wrong = list(runtime)
    wrong[3] = 12                              # H
    with pytest.raises(ValueError, match="compiled for H = 13"):
        ck.run(launch.grid, wrong)
    assert "H" in conv2d_kernel.compile(*launch.args, target="iss", **launch.options).fixed       # on for the ISS
    assert "H" not in conv2d_kernel.compile(*launch.args, target="sim", **launch.options).fixed   # off on the host


@pytest.mark.slow
def test_depthwise_and_pooled_conv_iss_specialized_bit_exact():
    from baco.kernels.depthwise import depthwise_launch, reference_depthwise_conv2d
    from baco.kernels.pool import ConvPoolLaunch, conv2d_pool_kernel, reference_conv_pool
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 11, 13, 40), dtype=np.int8)
    w = rng.integers(-128, 128, (3, 3, 40), dtype=np.int8)
    kw = dict(stride=2, padding=1, scale=1 / 16, relu=True)
    launch = depthwise_launch(x, w, config=GemminiConfig(), **kw)
    launch.options["specialize_shapes"] = True
    launch.run("iss")
    np.testing.assert_array_equal(launch.y, reference_depthwise_conv2d(x, w, **kw))
    w = rng.integers(-128, 128, (3, 3, 40, 24), dtype=np.int8)
    kw = dict(pool=2, stride=2, padding=0, conv_stride=1, conv_padding=1, scale=1 / 64, relu=True)
    launch = ConvPoolLaunch(x, w, None, dilation=1, config=GemminiConfig(), blocks=None, **kw)
    assert launch.kernel is conv2d_pool_kernel
    launch.options["specialize_shapes"] = True
    assert "H" in launch.kernel.compile(*launch.args, target="iss", **launch.options).fixed
    launch.run("iss")
    np.testing.assert_array_equal(launch.y, reference_conv_pool(x, w, **kw))


def test_specialized_small_strided_conv_still_loop_conv():
    """A specialized 3x3/2 launch of a 4x4 image (a 2x2-pixel output block, stored whole: its
    subview and checks fold away) is still one LOOP_CONV_WS (loop-conv-ws accepts the whole-block
    store), bit-exact."""
    from baco.kernels.conv import conv2d_launch, reference_conv2d
    from baco.sim.timing import TimingModel
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    rng = np.random.default_rng(11)
    x, w = rng.integers(-128, 128, (1, 4, 4, 3), dtype=np.int8), rng.integers(-128, 128, (3, 3, 3, 64), dtype=np.int8)
    launch = conv2d_launch(x, w, stride=2, padding=1, scale=0.05, config=cfg)
    ck = launch.kernel.compile(*launch.args, target="iss", specialize_shapes=True, **launch.options)
    run = ck.run(launch.grid, launch.args, timing=TimingModel(cfg))
    assert run["result"].stats.get("loop_conv_ws", 0) == 1
    np.testing.assert_array_equal(launch.y, reference_conv2d(x, w, stride=2, padding=1, scale=0.05))


# ---- the grid: part of a shape-specialized launch ------------------------------------------
# (M, N, K) under 16x16 blocks: grids (1, 1), (1, n), (m, 1) (GEMVs) and (m, n), ragged 1/17/33/65
GRIDS = [(1, 1, 17), (1, 33, 65), (17, 65, 1), (65, 1, 33), (33, 1, 17), (33, 65, 17), (17, 17, 65)]


def _grid_calls(ck) -> list:
    """The axes of the baco.program_id / num_programs ops left in the kernel's IR."""
    return sorted(int(a) for a in re.findall(r'"baco\.(?:program_id|num_programs)"\(\) \{axis = (\d)', ck.baco_ir))


@pytest.mark.parametrize("shape", GRIDS, ids=lambda s: "x".join(map(str, s)))
def test_grid_specialized_bit_exact(shape):
    """A launch specialized on its grid (the host simulator with specialize_shapes=True): program
    ids of axes of size 1 are constants (no op left for them), bit-exact int32 and int8 with bias."""
    a, b = _operands(*shape)
    bias = np.random.default_rng(3).integers(-1000, 1000, shape[1], dtype=np.int32)
    for out, d in (("int32", None), ("int8", bias)):
        launch = matmul_launch(a, b, bias=d, out=out, scale=1 / 32, relu=out == "int8", block=(16, 16, 16))
        launch.kernel[launch.grid](*launch.args, target="sim", specialize_shapes=True, **launch.options)
        np.testing.assert_array_equal(launch.y, reference(a, b, bias=d, out=out, scale=1 / 32, relu=out == "int8"))
        ck = launch.kernel.compile(*launch.args, target="sim", specialize_shapes=True, grid=launch.grid,
                                   **launch.options)
        grid = full_grid(launch.grid)
        assert ck.grid == grid
        assert set(_grid_calls(ck)) == {axis for axis in (0, 1) if grid[axis] > 1}
        # the passes' own queries (first-program configs, one-row grid tests) fold too
        calls = re.findall(r"call i64 @baco_(program_id|num_programs)\(i64 (\d)\)", ck.llvm_ir)
        assert {int(axis) for name, axis in calls} <= {axis for axis in (0, 1) if grid[axis] > 1}
        assert all(name == "program_id" for name, _ in calls)


@pytest.mark.parametrize("shape", [(1, 1, 65), (65, 1, 33), (33, 65, 17)], ids=lambda s: "x".join(map(str, s)))
def test_grid_specialized_iss_bit_exact(shape):
    """The GEMM kernel's ISS launches (specialized by default) fold their grid, bit-exact."""
    a, b = _operands(*shape)
    launch = matmul_launch(a, b, out="int8", scale=1 / 32, block=(16, 16, 16))
    launch.kernel[launch.grid](*launch.args, target="iss", **launch.options)
    np.testing.assert_array_equal(launch.y, reference(a, b, out="int8", scale=1 / 32))
    assert launch.compiled("iss").grid == tuple(launch.grid) + (1,)


def test_grid_specialized_kernel_refuses_another_grid():
    a, b = _operands(33, 65, 17)
    launch = matmul_launch(a, b, block=(16, 16, 16))
    ck = launch.compiled("sim", specialize_shapes=True)
    assert ck.grid == (3, 5, 1)
    for other in ((3, 4), (3, 5, 2), (1, 5)):
        with pytest.raises(ValueError, match=r"compiled for the grid \(3, 5, 1\)"):
            ck.run(other, launch.runtime_args())
    ck.run((3, 5, 1), launch.runtime_args())     # the same grid written with its third axis
    np.testing.assert_array_equal(launch.y, reference(a, b))
    # without a grid the kernel runs any grid; an unspecialized compile ignores the grid
    assert launch.kernel.compile(*launch.args, target="sim", specialize_shapes=True, **launch.options).grid is None
    assert launch.compiled("sim", specialize_shapes=False).grid is None


def test_grid_in_the_cache_key():
    a, b = _operands(33, 65, 17)
    launch = matmul_launch(a, b, block=(16, 16, 16))
    first = launch.compiled("sim", specialize_shapes=True)
    assert launch.compiled("sim", specialize_shapes=True) is first
    grid_fn = launch.kernel.compile(*launch.args, target="sim", specialize_shapes=True, **launch.options,
                                    grid=lambda v: (bl.cdiv(v["M"], 16), bl.cdiv(v["N"], 16)))
    assert grid_fn is first                       # a grid function of the arguments, as a launch takes
    other = launch.kernel.compile(*launch.args, target="sim", specialize_shapes=True, grid=(3, 1),
                                  **launch.options)
    anyg = launch.kernel.compile(*launch.args, target="sim", specialize_shapes=True, **launch.options)
    assert len({id(first), id(other), id(anyg)}) == 3
    assert first.baco_ir != other.baco_ir != anyg.baco_ir    # the disk cache keys on the IR
    # and on the grid, which the passes' grid queries fold to (two grids may share the kernel's IR)
    from baco.compiler import _cache_key
    keys = {_cache_key(first.baco_ir, "k", first.options, g) for g in (None, (3, 5, 1), (4, 5, 1))}
    assert len(keys) == 3
    # unspecialized: one compile whatever the grid
    plain = launch.compiled("sim", specialize_shapes=False)
    assert launch.kernel.compile(*launch.args, target="sim", specialize_shapes=False, grid=(3, 1),
                                 **launch.options) is plain


@jit(specialize_shapes=True)
def _mirrored(x_ptr, y_ptr, BLOCK: bl.constexpr):
    """y = 2x with its grid of blocks mirrored along both axes (num_programs folded to constants)."""
    p0, p1 = bl.program_id(0), bl.program_id(1)
    rows, cols = bl.num_programs(0) * BLOCK, bl.num_programs(1) * BLOCK
    src = bl.make_block_ptr(x_ptr, shape=(rows, cols), strides=(cols, 1), offsets=(p0 * BLOCK, p1 * BLOCK),
                            block_shape=(BLOCK, BLOCK), order=(1, 0))
    dst = bl.make_block_ptr(y_ptr, shape=(rows, cols), strides=(cols, 1),
                            offsets=((bl.num_programs(0) - 1 - p0) * BLOCK, (bl.num_programs(1) - 1 - p1) * BLOCK),
                            block_shape=(BLOCK, BLOCK), order=(1, 0))
    v = bl.load(src, boundary_check=(0, 1))
    bl.store(dst, v + v, boundary_check=(0, 1))


@pytest.mark.parametrize("grid", [(1, 3), (2, 1), (2, 3)])   # (1, 1): a block added to itself in a
# wholly constant window does not compile (as unspecialized with offsets (0, 0): not the grid's)
def test_num_programs_folded(grid):
    x = np.arange(grid[0] * 16 * grid[1] * 16, dtype=np.int32).reshape(grid[0] * 16, grid[1] * 16) - 500
    y = np.zeros_like(x)
    _mirrored[grid](x, y, BLOCK=16)
    ck = _mirrored.compile(x, y, BLOCK=16, grid=grid)
    assert set(_grid_calls(ck)) == {axis for axis in (0, 1) if grid[axis] > 1}
    assert "baco.num_programs" not in ck.baco_ir
    blocks = x.reshape(grid[0], 16, grid[1], 16)[::-1, :, ::-1, :]
    np.testing.assert_array_equal(y, 2 * blocks.reshape(x.shape))


def test_a_program_step_refuses_a_kernel_compiled_for_another_grid():
    from baco.codegen.program import Program
    a, b = _operands(17, 33, 65)
    launch = matmul_launch(a, b, block=(16, 16, 16))
    ck = launch.compiled("iss")
    assert ck.grid == (2, 3, 1)
    p = Program()
    x, w = p.input("x", np.int8, a.shape), p.weights("w", b)
    y = p.output("y", np.int32, (17, 33))
    args = [x, w, y, *launch.args[3:]]
    with pytest.raises(ValueError, match=r"step 'mm'.*compiled for the grid \(2, 3, 1\)"):
        p.launch("mm", ck, (2, 2), args, outputs=[y])
    p.launch("mm", ck, (2, 3), args, outputs=[y])


# conv and depthwise launches: (H, W, C, K, R, stride, padding, (BM, BN, BK, rows)) ragged, padded, strided
CONVS = [
    (9, 7, 17, 33, 3, 1, 1, (7, 32, 16, 1)),        # ragged channels and columns, padded
    (11, 11, 5, 17, 3, 2, 1, (6, 32, 16, 2)),       # stride 2, rows > 1, a ragged last program
    (13, 13, 17, 33, 1, 2, 0, (7, 32, 32, 7)),      # 1x1 stride 2, one tap (its loop folds away)
    (6, 6, 16, 16, 1, 1, 1, (8, 16, 16, 1)),        # 1x1 padded
]


def _conv_launch(case, depthwise=False, seed=0):
    from baco.kernels.conv import conv2d_launch, reference_conv2d
    from baco.kernels.depthwise import depthwise_launch, reference_depthwise_conv2d
    H, W, C, K, R, st, pad, (bm, bn, bk, rows) = case
    rng = np.random.default_rng(seed + H * 7 + C)
    x = rng.integers(-128, 128, (1, H, W, C), dtype=np.int8)
    b = rng.integers(-5000, 5000, C if depthwise else K).astype(np.int32)
    kw = dict(stride=st, padding=pad, scale=1 / 64, relu=True)
    if depthwise:
        w = rng.integers(-128, 128, (R, R, C), dtype=np.int8)
        return (depthwise_launch(x, w, b, blocks=(bm, 16, 16, "WS", False, rows), **kw),
                reference_depthwise_conv2d(x, w, b, **kw))
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    return conv2d_launch(x, w, b, blocks=(bm, bn, bk, "WS", False, rows), **kw), reference_conv2d(x, w, b, **kw)


@pytest.mark.parametrize("case", CONVS, ids=lambda c: "h{}w{}c{}k{}-{}x{}s{}p{}".format(*c[:5], c[4], *c[5:7]))
@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_conv_bit_exact_either_way(case, depthwise):
    """Each conv and depthwise program bit-exact compiled for its shapes and not, on the host simulator
    and the ISS (the kernels' default target for specialization)."""
    launch, ref = _conv_launch(case, depthwise)
    for target, specialize in (("sim", False), ("sim", True), ("iss", True)):
        launch.y[...] = 0
        launch.kernel[launch.grid](*launch.args, target=target, specialize_shapes=specialize, **launch.options)
        np.testing.assert_array_equal(launch.y, ref)


def test_conv_kernels_default_is_on_for_the_iss_only():
    from baco.kernels.conv import conv2d_kernel
    from baco.kernels.depthwise import depthwise_kernel
    from baco.kernels.pool import conv2d_pool_kernel, conv_pool_kernel
    assert {k.specialize_shapes for k in (conv2d_kernel, depthwise_kernel, conv_pool_kernel,
                                          conv2d_pool_kernel)} == {"iss"}
    launch, _ = _conv_launch(CONVS[1])
    assert set(launch.kernel.compile(*launch.args, target="iss", **launch.options).fixed) >= {"H", "W", "C", "K"}
    assert "H" not in launch.kernel.compile(*launch.args, target="sim", **launch.options).fixed
