"""Convolutions as implicit GEMMs (baco.kernels.conv): conv2d, conv1d and depthwise conv2d
bit-exact against numpy references of Gemmini's arithmetic on many shapes (ragged channels
and widths, strides, padding, dilation, 1x1 / 3x3 / 7x7) on sim, a few on iss, and the
interpreter agreeing; plus the language features they use (ptr + n, scalar min/max,
floor %, compile-time `a if c else b`)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.conv import conv1d, conv2d, reference_conv1d, reference_conv2d
from baco.kernels.depthwise import depthwise_conv2d, depthwise_weight_blocks, reference_depthwise_conv2d


def rand(shape, seed):
    return np.random.default_rng(seed).integers(-128, 128, shape, dtype=np.int8)


def opts(stride, pad, dil, out="int8", relu=False, **kw):
    return dict(stride=stride, padding=pad, dilation=dil, out=out, relu=relu,
                scale=1 / 256 if out == "int8" else 1.0, **kw)


# (N, H, W, C, K, R, S, stride, padding, dilation, out, relu)
CONV2D = [
    (1, 5, 5, 3, 4, 3, 3, 1, 1, 1, "int8", False),
    (1, 1, 1, 1, 1, 1, 1, 1, 0, 1, "int32", False),
    (1, 6, 17, 17, 17, 3, 3, 1, 1, 1, "int8", True),
    (2, 7, 33, 33, 65, 1, 1, 1, 0, 1, "int8", False),
    (1, 9, 65, 1, 17, 3, 3, 2, 1, 1, "int32", False),
    (1, 8, 9, 65, 33, 3, 3, 2, 3, 1, "int8", False),
    (1, 7, 11, 33, 17, 3, 3, 2, 3, 2, "int32", False),
    (1, 12, 12, 16, 16, 7, 7, 2, 3, 1, "int8", True),
    (1, 11, 17, 3, 16, 7, 7, 1, 3, 1, "int8", False),
    (1, 9, 20, 20, 33, 3, 3, 1, 2, 2, "int8", False),
    (1, 5, 33, 17, 1, 3, 3, 1, 0, 1, "int32", False),
    (1, 4, 40, 17, 17, 1, 1, 2, 0, 1, "int8", False),
    (1, 6, 18, 8, 24, 3, 3, 2, 0, 1, "int8", True),
    (1, 3, 65, 5, 7, 3, 3, 1, 3, 1, "int32", False),
    (2, 4, 7, 9, 11, 2, 2, 1, 1, 2, "int8", False),
    (1, 10, 10, 33, 33, 5, 5, 1, 2, 1, "int8", False),
    (1, 13, 13, 4, 4, 7, 7, 2, 3, 2, "int8", False),
    (1, 2, 50, 17, 9, 1, 3, 2, 1, 1, "int8", False),
    (1, 17, 3, 6, 5, 3, 1, 1, 1, 1, "int32", False),
    (1, 6, 6, 64, 20, 3, 3, 1, 1, 1, "int8", True),
    (1, 5, 21, 7, 7, 3, 3, 3, 2, 1, "int8", False),
]


def bias_for(case, channels, seed):
    """An int32 bias for every other case of a sweep (None for the rest)."""
    odd = sum(v for v in case if isinstance(v, int)) % 2
    return np.random.default_rng(seed).integers(-(1 << 15), 1 << 15, channels).astype(np.int32) if odd else None


def run_conv2d(case, target="sim", blocks=(16, 16, 16)):
    N, H, W, C, K, R, S, stride, pad, dil, out, relu = case
    x, w, b = rand((N, H, W, C), 1), rand((R, S, C, K), 2), bias_for(case, K, 3)
    o = opts(stride, pad, dil, out, relu, blocks=blocks)
    y, _ = conv2d(x, w, b, target=target, **o)
    return y, reference_conv2d(x, w, b, **o)


@pytest.mark.parametrize("case", CONV2D, ids=lambda c: "x".join(map(str, c)))
def test_conv2d_bit_exact_on_sim(case):
    y, ref = run_conv2d(case)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("blocks", [None, GemmSchedule(16, 32, 16, "OS", False), GemmSchedule(32, 32, 16, "WS", True),
                                    GemmSchedule(16, 16, 64, "OS", True)], ids=str)
def test_conv2d_schedules(blocks):
    """The default schedule, wider blocks, OS (each step's sum saturated to the array width,
    as the reference does) and double buffering."""
    y, ref = run_conv2d((1, 7, 37, 40, 35, 3, 3, 1, 1, 1, "int8", True), blocks=blocks)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("case", [CONV2D[8]], ids=lambda c: "x".join(map(str, c)))
def test_conv2d_on_iss(case):
    y, ref = run_conv2d(case, target="iss")
    np.testing.assert_array_equal(y, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", CONV2D, ids=lambda c: "x".join(map(str, c)))
def test_conv2d_on_iss_sweep(case):
    y, ref = run_conv2d(case, target="iss")
    np.testing.assert_array_equal(y, ref)


def test_conv2d_interpreter_agrees(monkeypatch):
    monkeypatch.setenv("BACO_INTERPRET", "1")
    for case in (CONV2D[0], CONV2D[6], CONV2D[12]):
        y, ref = run_conv2d(case)
        np.testing.assert_array_equal(y, ref)


def test_conv2d_on_a_dim4_gemmini():
    cfg = GemminiConfig.from_capacity(4, 16, 8)
    x, w = rand((1, 6, 9, 5, ), 3).reshape(1, 6, 9, 5)[:, :, :, :5], rand((3, 3, 5, 6), 4)
    o = opts(2, 1, 1, blocks=(8, 4, 4))
    y, _ = conv2d(x, w, config=cfg, **o)
    np.testing.assert_array_equal(y, reference_conv2d(x, w, config=cfg, **o))


def test_conv2d_and_depthwise_match_torch():
    """The references (and kernels) are torch's convolutions, with (h, w) pairs."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    nchw = lambda a: torch.from_numpy(a).double().permute(0, 3, 1, 2)  # noqa: E731
    x, w = rand((2, 9, 11, 6), 7), rand((3, 2, 6, 5), 8)
    o = dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1))
    y, _ = conv2d(x, w, out="int32", blocks=(16, 16, 16), **o)
    t = F.conv2d(nchw(x), torch.from_numpy(w).double().permute(3, 2, 0, 1), **o)
    np.testing.assert_array_equal(y, t.permute(0, 2, 3, 1).numpy().astype(np.int32))
    wd = rand((3, 3, 6), 9)
    y, _ = depthwise_conv2d(x, wd, out="int32", stride=2, padding=1)
    t = F.conv2d(nchw(x), torch.from_numpy(wd).double().permute(2, 0, 1)[:, None], stride=2, padding=1, groups=6)
    np.testing.assert_array_equal(y, t.permute(0, 2, 3, 1).numpy().astype(np.int32))


# (N, L, C, K, S, stride, padding, dilation, out)
CONV1D = [
    (1, 1, 1, 1, 1, 1, 0, 1, "int32"), (1, 17, 17, 17, 3, 1, 1, 1, "int8"), (2, 30, 17, 33, 3, 1, 1, 1, "int8"),
    (1, 65, 33, 17, 7, 2, 3, 2, "int32"), (1, 33, 65, 1, 1, 1, 0, 1, "int8"), (1, 64, 16, 16, 5, 2, 2, 1, "int8"),
    (1, 40, 3, 8, 7, 1, 3, 1, "int8"), (1, 20, 8, 40, 3, 2, 0, 2, "int32"), (3, 9, 5, 5, 3, 1, 2, 1, "int8"),
    (1, 100, 20, 24, 9, 3, 4, 1, "int8"), (1, 33, 33, 33, 2, 1, 1, 1, "int8"), (1, 50, 7, 65, 3, 2, 1, 3, "int8"),
    (1, 16, 64, 8, 1, 2, 0, 1, "int32"), (1, 23, 1, 17, 7, 1, 3, 1, "int8"), (1, 70, 17, 3, 5, 1, 0, 2, "int8"),
    (1, 12, 12, 12, 3, 3, 3, 1, "int8"), (2, 65, 9, 17, 3, 2, 1, 1, "int32"), (1, 8, 40, 40, 3, 1, 1, 2, "int8"),
    (1, 31, 16, 16, 7, 2, 3, 1, "int8"), (1, 5, 2, 2, 5, 1, 2, 1, "int8"),
]


def run_conv1d(case, target="sim"):
    N, L, C, K, S, stride, pad, dil, out = case
    x, w, b = rand((N, L, C), 5), rand((S, C, K), 6), bias_for(case, K, 7)
    o = opts(stride, pad, dil, out, out == "int8", blocks=(16, 16, 16))
    y, _ = conv1d(x, w, b, target=target, **o)
    return y, reference_conv1d(x, w, b, **o)


@pytest.mark.parametrize("case", CONV1D, ids=lambda c: "x".join(map(str, c)))
def test_conv1d_bit_exact_on_sim(case):
    y, ref = run_conv1d(case)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", CONV1D, ids=lambda c: "x".join(map(str, c)))
def test_conv1d_on_iss_sweep(case):
    y, ref = run_conv1d(case, target="iss")
    np.testing.assert_array_equal(y, ref)


def test_conv1d_matches_torch():
    torch = pytest.importorskip("torch")
    x, w = rand((2, 30, 5), 7), rand((3, 5, 4), 8)
    y, _ = conv1d(x, w, stride=2, padding=1, dilation=2, out="int32")
    t = torch.nn.functional.conv1d(torch.from_numpy(x).double().permute(0, 2, 1),
                                   torch.from_numpy(w).double().permute(2, 1, 0), stride=2, padding=1, dilation=2)
    np.testing.assert_array_equal(y, t.permute(0, 2, 1).numpy().astype(np.int32))


# (N, H, W, C, R, stride, padding, dilation, out)
DEPTHWISE = [
    (1, 1, 1, 1, 1, 1, 0, 1, "int32"), (1, 7, 9, 17, 3, 1, 1, 1, "int8"), (1, 7, 19, 33, 3, 2, 2, 2, "int32"),
    (1, 8, 8, 65, 3, 1, 1, 1, "int8"), (1, 9, 17, 16, 3, 2, 1, 1, "int8"), (2, 5, 6, 5, 3, 1, 1, 1, "int8"),
    (1, 12, 12, 8, 7, 1, 3, 1, "int8"), (1, 13, 13, 17, 7, 2, 3, 1, "int32"), (1, 6, 33, 1, 3, 1, 0, 1, "int8"),
    (1, 5, 40, 32, 1, 1, 0, 1, "int8"), (1, 5, 40, 20, 5, 2, 2, 1, "int8"), (1, 10, 10, 24, 3, 1, 2, 2, "int8"),
    (1, 4, 65, 3, 3, 3, 1, 1, "int8"), (1, 6, 6, 40, 3, 1, 0, 1, "int32"), (1, 3, 30, 33, 3, 2, 3, 2, "int8"),
    (1, 9, 9, 9, 5, 2, 2, 1, "int8"), (1, 16, 16, 16, 3, 2, 1, 1, "int8"), (1, 7, 7, 48, 7, 1, 3, 1, "int8"),
    (1, 11, 5, 17, 3, 1, 1, 2, "int8"), (1, 6, 17, 2, 3, 1, 1, 1, "int8"),
]


def run_depthwise(case, target="sim", formulation="block-diagonal"):
    N, H, W, C, R, stride, pad, dil, out = case
    x, w, b = rand((N, H, W, C), 9), rand((R, R, C), 10), bias_for(case, C, 11)
    o = opts(stride, pad, dil, out, out == "int8")
    y, _ = depthwise_conv2d(x, w, b, target=target, formulation=formulation, **o)
    return y, reference_depthwise_conv2d(x, w, b, **o)


# cases whose filter, stride, padding, dilation and output another case has, on more channel blocks or a
# rounder image (8x8x65 and 7x7x48 beside 7x9x17 and 12x12x8, 13x13x17 beside 12x12x8 and 7x19x33, 9x9x9
# beside 5x40x20, 16x16x16 beside 9x17x16, 11x5x17 beside 10x10x24): on sim with -m slow
DEPTHWISE_SAME_PATH = {3, 7, 15, 16, 17, 18}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if i in DEPTHWISE_SAME_PATH else c
                                  for i, c in enumerate(DEPTHWISE)], ids=lambda c: "x".join(map(str, c)))
def test_depthwise_bit_exact_on_sim(case):
    y, ref = run_depthwise(case)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("case", DEPTHWISE[1:3], ids=lambda c: "x".join(map(str, c)))
def test_depthwise_per_channel_formulation(case):
    y, ref = run_depthwise(case, formulation="per-channel")
    np.testing.assert_array_equal(y, ref)


def test_depthwise_on_iss():
    y, ref = run_depthwise(DEPTHWISE[2], target="iss")
    np.testing.assert_array_equal(y, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", DEPTHWISE, ids=lambda c: "x".join(map(str, c)))
def test_depthwise_on_iss_sweep(case):
    y, ref = run_depthwise(case, target="iss")
    np.testing.assert_array_equal(y, ref)


def test_depthwise_interpreter_agrees(monkeypatch):
    monkeypatch.setenv("BACO_INTERPRET", "1")
    y, ref = run_depthwise(DEPTHWISE[2])
    np.testing.assert_array_equal(y, ref)


def test_depthwise_weight_blocks():
    w = rand((2, 3, 5), 11)
    wb = depthwise_weight_blocks(w, 4).reshape(2, 2, 3, 4, 4)      # (blocks, R, S, B, B)
    for c in range(5):
        np.testing.assert_array_equal(wb[c // 4, :, :, c % 4, c % 4], w[:, :, c])
    diagonal = np.zeros((4, 4), bool)
    diagonal[np.arange(4), np.arange(4)] = True
    assert np.count_nonzero(wb[..., ~diagonal]) == 0
    assert np.count_nonzero(wb[1, :, :, 1:, 1:]) == 0          # the last block's missing channels


def test_conv_argument_errors():
    x, w = rand((1, 4, 4, 3), 1), rand((3, 3, 3, 2), 2)
    with pytest.raises(ValueError, match="input channels"):
        conv2d(x, rand((3, 3, 4, 2), 2))
    with pytest.raises(ValueError, match="does not fit"):
        conv2d(x, rand((7, 7, 3, 2), 2))
    with pytest.raises(ValueError, match="relu needs"):
        conv2d(x, w, out="int32", relu=True)
    with pytest.raises(ValueError, match="schedule"):
        conv2d(x, w, blocks=(4096, 4096, 4096))
    with pytest.raises(ValueError, match="one int32 per output channel"):
        conv2d(x, w, np.zeros(3, np.int32))


# ---- the language features the kernels use -------------------------------------------
@baco.jit
def scalar_ops(src, dst, a, b, N, PTR_SHIFT: bl.constexpr, USE_MIN: bl.constexpr):
    """dst[0, :] = src[lo:lo+N] with lo computed from min/max/% of runtime scalars."""
    lo = min(a, b) if USE_MIN else max(a, b, 0)
    lo = lo + (a - b) % 5 + (b - a) // 3 + PTR_SHIFT
    p = bl.make_block_ptr(src + lo, shape=(1, N), strides=(N, 1), offsets=(0, 0), block_shape=(1, 16))
    q = bl.make_block_ptr(dst, shape=(1, N), strides=(N, 1), offsets=(0, 0), block_shape=(1, 16))
    bl.store(q, bl.load(p, boundary_check=(1,)), boundary_check=(1,))


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("a,b,use_min", [(3, 9, True), (9, 3, True), (-4, 7, False), (7, -4, False), (-9, -2, False)])
def test_scalar_min_max_mod_and_pointer_offsets(monkeypatch, interpret, a, b, use_min):
    if interpret:
        monkeypatch.setenv("BACO_INTERPRET", "1")
    src = np.arange(100, dtype=np.int8)
    dst = np.zeros(10, dtype=np.int8)
    scalar_ops[(1,)](src, dst, a, b, 10, PTR_SHIFT=20, USE_MIN=use_min)
    lo = (min(a, b) if use_min else max(a, b, 0)) + (a - b) % 5 + (b - a) // 3 + 20
    np.testing.assert_array_equal(dst, src[lo:lo + 10])


@baco.jit
def bad_min(src, n):
    p = bl.make_block_ptr(src, shape=(1, n), strides=(n, 1), offsets=(0, 0), block_shape=(1, 16))
    m = min(bl.load(p), n)  # noqa: F841


@baco.jit
def bad_ptr(src, n):
    p = bl.make_block_ptr(src - n, shape=(1, n), strides=(n, 1), offsets=(0, 0), block_shape=(1, 16))  # noqa: F841


@baco.jit
def bad_ifexp(src, n):
    m = 1 if n else 2  # noqa: F841


@pytest.mark.parametrize("kernel,fragment,snippet", [
    (bad_min, "an argument of min() must be an integer scalar", "min(bl.load(p), n)"),
    (bad_ptr, "moved by adding an integer", "src - n"),
    (bad_ifexp, "compile-time condition", "n"),
])
def test_scalar_feature_errors_are_located(kernel, fragment, snippet):
    with pytest.raises(CompilationError) as e:
        kernel[(1,)](np.zeros(16, np.int8), 3)
    assert fragment in str(e.value)
    assert snippet in str(e.value)


# ---- the example CLIs and their self-checking ELFs -------------------------------------------
def load_example(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name,argv", [
    ("conv2d", ["--H", "5", "--W", "9", "--C", "17", "--K", "5", "--stride", "2", "--padding", "1", "--bias"]),
    ("conv1d", ["--L", "20", "--C", "5", "--K", "17", "--S", "7", "--padding", "3", "--relu"]),
    ("depthwise_conv2d", ["--H", "5", "--W", "6", "--C", "17", "--dilation", "2", "--padding", "2", "--out", "int32"]),
])
def test_examples_check_themselves(name, argv, capsys):
    assert load_example(name).main(argv) == 0
    assert "bit-exact" in capsys.readouterr().out


def test_example_rejects_what_gemmini_cannot_do():
    with pytest.raises(SystemExit):
        load_example("conv2d").main(["--out", "int32", "--relu"])
    with pytest.raises(SystemExit):
        load_example("conv2d").main(["--H", "2", "--R", "3", "--S", "3"])


def test_conv_elf_checks_itself_on_the_iss(tmp_path):
    """The ELF exits 0 on its own result and non-zero when told to expect something else."""
    from baco.kernels.conv import conv2d_launch
    from baco.sim.iss import run_elf
    x, w = rand((1, 5, 9, 17), 12), rand((3, 3, 17, 5), 13)
    o = opts(2, 1, 1)
    launch = conv2d_launch(x, w, np.arange(5, dtype=np.int32), blocks=(16, 16, 16), **o)
    ref = reference_conv2d(x, w, np.arange(5, dtype=np.int32), **o)
    assert run_elf(launch.write_elf(tmp_path / "good.elf", ref), stdout=None).exit_code == 0
    wrong = ref.copy()
    wrong[0, 1, 2, 3] ^= 1
    assert run_elf(launch.write_elf(tmp_path / "bad.elf", wrong), stdout=None).exit_code != 0


# ---- the C library's tiled_conv_auto stream (baco.sim.clib.conv_stream), baco's baseline -------
@pytest.mark.parametrize("dim,shape", [(16, (1, 9, 11, 17, 20, 3, 1, 1, 1)), (4, (2, 7, 6, 5, 9, 3, 2, 1, 1)),
                                       (16, (1, 12, 12, 3, 16, 7, 2, 3, 1)), (8, (1, 10, 9, 20, 12, 3, 1, 2, 2)),
                                       (16, (1, 6, 7, 40, 33, 1, 1, 0, 1))])
@pytest.mark.parametrize("bias", [False, True])
def test_library_conv_stream_is_bit_exact(dim, shape, bias):
    from baco.gemmini.isa import COMMANDS, encode
    from baco.sim.clib import conv_stream
    from baco.sim.functional import ArrayMemory, GemminiModel
    N, H, W, C, K, R, stride, pad, dil = shape
    cfg = GemminiConfig.from_capacity(dim, 16, 8)    # small memories: several tiles per dimension
    x, w = rand((N, H, W, C), 14), rand((R, R, C, K), 15)
    b = np.random.default_rng(16).integers(-(1 << 15), 1 << 15, K).astype(np.int32) if bias else None
    o = opts(stride, pad, dil, relu=True)
    ref = reference_conv2d(x, w, b, config=cfg, blocks=(dim, dim, dim), **o)
    base = 0x80000000
    mem = ArrayMemory(base, 1 << 20)
    addrs = (base, base + 0x40000, base + 0x80000, base + 0xC0000)
    mem.write(addrs[0], x.tobytes())
    mem.write(addrs[1], w.tobytes())
    if bias:
        mem.write(addrs[3], b.tobytes())
    model = GemminiModel(cfg, mem)
    for name, fields in conv_stream(N, H, W, C, K, R, cfg, stride=stride, padding=pad, dilation=dil,
                                    scale=o["scale"], relu=True, bias=bias, addrs=addrs):
        model.execute(COMMANDS[name].funct, *encode(name, **fields))
    got = np.frombuffer(mem.read(addrs[2], ref.size), dtype=np.int8).reshape(ref.shape)
    np.testing.assert_array_equal(got, ref)


# ---- the wrappers check their arguments and never convert them (issue L) ----------------------------
def _wrappers():
    from baco.kernels.matmul import matmul
    from baco.kernels.pool import conv_pool
    x, w, w1 = rand((1, 5, 6, 3), 4), rand((3, 3, 3, 4), 5), rand((1, 3, 3, 4), 6)
    return {"conv2d": (lambda x=x, w=w, bias=None: conv2d(x, w, bias, padding=1), x, w, 4),
            "depthwise_conv2d": (lambda x=x, w=w[..., 0], bias=None: depthwise_conv2d(x, w, bias, padding=1),
                                 x, w[..., 0], 3),
            "conv1d": (lambda x=x[0], w=w1[0], bias=None: conv1d(x, w, bias), x[0], w1[0], 4),
            "conv_pool": (lambda x=x, w=w, bias=None: conv_pool(x, w, bias, conv_padding=1), x, w, 4),
            "matmul": (lambda x=x[0, 0], w=w[0, 0], bias=None: matmul(x, w, bias=bias), x[0, 0], w[0, 0], 4)}


WRAPPERS = ["conv2d", "depthwise_conv2d", "conv1d", "conv_pool", "matmul"]


@pytest.mark.parametrize("name", WRAPPERS)
def test_wrappers_reject_wrong_dtypes(name):
    """A float image in [0, 1) became zeros and an int64 bias 2**33 + 5 became 5."""
    call, x, w, channels = _wrappers()[name]
    image_arg, weight_arg = ("a", "b") if name == "matmul" else ("x", "w")
    for bad in (np.random.default_rng(0).random(x.shape), x.astype(np.int16), x.astype(np.uint8)):
        with pytest.raises(TypeError, match=f"{image_arg} must be a int8 array, got dtype {bad.dtype}"):
            call(x=bad)
    with pytest.raises(TypeError, match=f"{weight_arg} must be a int8 array, got dtype int32"):
        call(w=w.astype(np.int32))
    with pytest.raises(TypeError, match="bias must be a int32 array, got dtype int64"):
        call(bias=np.full(channels, 2 ** 33 + 5, np.int64))
    with pytest.raises(TypeError, match="bias must be a int32 array, got dtype float32"):
        call(bias=np.zeros(channels, np.float32))
    with pytest.raises(ValueError, match="bias holds values outside int32's range"):
        call(bias=[2 ** 33 + 5] * channels)
    with pytest.raises(TypeError, match="bias must hold integers"):
        call(bias=[0.5] * channels)
    with pytest.raises(TypeError, match=f"{image_arg} must be a int8 numpy array or CPU torch tensor, got str"):
        call(x="image")


@pytest.mark.parametrize("name", WRAPPERS)
def test_wrappers_copy_non_contiguous_arrays_unchanged(name):
    """A non-contiguous int8 array (or bias) is copied into a contiguous one: the result is the
    contiguous array's."""
    call, x, w, channels = _wrappers()[name]
    bias = np.arange(channels, dtype=np.int32) * 1000 - 1500
    y, _ = call(bias=bias)
    wide_x = np.repeat(x, 2, axis=-1)[..., ::2]
    wide_bias = np.repeat(bias, 2)[::2]
    assert not wide_x.flags.c_contiguous and not wide_bias.flags.c_contiguous
    y2, _ = call(x=wide_x, bias=wide_bias)
    np.testing.assert_array_equal(y2, y)
    y3, _ = call(bias=[int(v) for v in bias])      # Python ints that fit int32 are taken as they are
    np.testing.assert_array_equal(y3, y)


@pytest.mark.parametrize("name", WRAPPERS)
@pytest.mark.parametrize("blocks,fragment", [((0, 16, 16), "block_m=0"), ((16, 0, 16), "block_n=0"),
                                             ((16, 16, 0), "block_k=0"), ((16, 16, 16, "WS", False, 0), "rows=0"),
                                             ((16, 16, 16, "XS"), "dataflow must be one of")])
def test_wrappers_validate_schedules_first(name, blocks, fragment):
    """A zero block reached a ZeroDivisionError / IndexError in the wrappers before the schedule
    was checked: now a ValueError naming the field."""
    from baco.kernels.matmul import matmul
    from baco.kernels.pool import conv_pool
    x, w = rand((1, 5, 6, 16), 7), rand((3, 3, 16, 16), 8)
    call = {"conv2d": lambda: conv2d(x, w, blocks=blocks),
            "depthwise_conv2d": lambda: depthwise_conv2d(x, w[..., 0], blocks=blocks),
            "conv1d": lambda: conv1d(x[0], w[0], blocks=blocks),
            "conv_pool": lambda: conv_pool(x, w, blocks=blocks),
            "matmul": lambda: matmul(x[0, 0], w[0, 0], schedule=blocks)}[name]
    with pytest.raises(ValueError, match=fragment):
        call()


@pytest.mark.parametrize("name", WRAPPERS)
@pytest.mark.parametrize("scale", ["0.5", np.array([0.5]), None, True])
def test_wrappers_reject_a_scale_that_is_not_a_number(name, scale):
    """float(scale) took "0.5" and a one-element array."""
    from baco.kernels.matmul import matmul
    from baco.kernels.pool import conv_pool
    x, w = rand((1, 5, 6, 3), 9), rand((3, 3, 3, 4), 10)
    call = {"conv2d": lambda: conv2d(x, w, scale=scale), "depthwise_conv2d": lambda: depthwise_conv2d(
                x, w[..., 0], scale=scale), "conv1d": lambda: conv1d(x[0], w[0], scale=scale),
            "conv_pool": lambda: conv_pool(x, w, scale=scale), "matmul": lambda: matmul(x[0, 0], w[0, 0], scale=scale)}
    with pytest.raises(TypeError, match="scale must be a real number"):
        call[name]()
