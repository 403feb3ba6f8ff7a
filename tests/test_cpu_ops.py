"""CPU operators (baco/model/cpu_ops.py): each bit-exact against a numpy reference written here
from the op's documented arithmetic, on the host JIT and on the RISC-V ISS, on ragged shapes;
each also close to torch's float operator (within one int8 step), so the arithmetic is the op."""
import math
import subprocess
import sys
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from baco.codegen import toolchain
from baco.model import cpu_ops

F32 = np.float32
RNG = np.random.default_rng(20)


def rand_i8(*shape):
    return RNG.integers(-128, 128, size=shape, dtype=np.int8)


def requant(v):
    v = np.asarray(v)
    assert v.dtype == np.float32
    return np.clip(np.rint(v), -128, 127).astype(np.int8)


def run_host(kernel, *inputs):
    out = np.zeros(kernel.arg_shapes[-1], kernel.arg_dtypes[-1])
    kernel(*inputs, out)
    return out


def run_iss(kernel, *inputs, cache_dir):
    out = np.full(kernel.arg_shapes[-1], 7, kernel.arg_dtypes[-1])
    kernel.run_iss(*inputs, out, cache_dir=cache_dir)
    return out


@pytest.fixture(scope="module")
def elf_cache(tmp_path_factory):
    """Runner ELFs: the project's disk cache (BACO_CACHE_DIR) when enabled, else a temp dir."""
    from baco.compiler import cache_dir
    return cache_dir() or tmp_path_factory.mktemp("cpu-elf")


def torch_q(y, s_out):
    """torch float result quantised to s_out, for closeness checks."""
    return np.clip(np.rint(y.double().numpy() / s_out), -128, 127)


def nchw(x, s):
    return torch.from_numpy(x.astype(np.float64) * s).permute(0, 3, 1, 2)


# ---------------------------------------------------------------- references

def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def torch_out_size(size, k, s, p, d, ceil):
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= size + p else o


def ref_avg_pool2d(x, k, st, p, ceil, include_pad, s_in, s_out):
    n, h, w, c = x.shape
    oh, ow = (torch_out_size(*a, 1, ceil) for a in zip((h, w), k, st, p))
    y = np.zeros((n, oh, ow, c), np.int8)
    for i in range(oh):
        hs = i * st[0] - p[0]
        he = min(hs + k[0], h + p[0])
        for j in range(ow):
            ws = j * st[1] - p[1]
            we = min(ws + k[1], w + p[1])
            inside = x[:, max(hs, 0):min(he, h), max(ws, 0):min(we, w)].astype(np.int32)
            count = (he - hs) * (we - ws) if include_pad else inside.shape[1] * inside.shape[2]
            y[:, i, j] = requant(inside.sum(axis=(1, 2)).astype(F32) * F32(s_in / (s_out * count)))
    return y


def ref_adaptive(x, out, s_in, s_out):
    n, h, w, c = x.shape
    y = np.zeros((n, *out, c), np.int8)
    for i in range(out[0]):
        hs, he = math.floor(i * h / out[0]), math.ceil((i + 1) * h / out[0])
        for j in range(out[1]):
            ws, we = math.floor(j * w / out[1]), math.ceil((j + 1) * w / out[1])
            s = x[:, hs:he, ws:we].astype(np.int32).sum(axis=(1, 2))
            y[:, i, j] = requant(s.astype(F32) * F32(s_in / (s_out * ((he - hs) * (we - ws)))))
    return y


def ref_max_pool(x, k, st, p, d, ceil):
    n, h, w, c = x.shape
    oh, ow = (torch_out_size(*a, ceil) for a in zip((h, w), k, st, p, d))
    y = np.zeros((n, oh, ow, c), np.int8)
    for i in range(oh):
        rows = [r for r in range(i * st[0] - p[0], i * st[0] - p[0] + k[0] * d[0], d[0]) if 0 <= r < h]
        for j in range(ow):
            cols = [q for q in range(j * st[1] - p[1], j * st[1] - p[1] + k[1] * d[1], d[1]) if 0 <= q < w]
            y[:, i, j] = x[:, rows][:, :, cols].max(axis=(1, 2))
    return y


def ref_add(a, b, sa, sb, so, relu):
    v = a.astype(F32) * F32(sa / so) + b.astype(F32) * F32(sb / so)
    return requant(np.maximum(v, F32(0)) if relu else v)


def ref_mul_channel(x, s, sx, ss, so):
    p = x.astype(np.int32) * s[:, None, None, :].astype(np.int32)
    return requant(p.astype(F32) * F32(sx * ss / so))


def ref_softmax(x, s_in, s_out):
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    table = np.array([math.exp(-d * s_in) for d in range(256)], F32)
    e = table[rows.max(axis=1, keepdims=True) - rows]
    total = np.cumsum(e, axis=1, dtype=F32)[:, -1:]           # left to right, float32
    r = F32(1 / s_out) / total
    return requant(e * r).reshape(x.shape)


def ref_layernorm(x, gamma, beta, eps, s_in, s_out):
    rows = x.reshape(-1, x.shape[-1])
    c = rows.shape[1]
    s1 = rows.astype(np.int64).sum(axis=1, keepdims=True)
    s2 = (rows.astype(np.int64) ** 2).sum(axis=1, keepdims=True)
    mean = s1.astype(F32) / F32(c)
    var = (c * s2 - s1 * s1).astype(F32) / F32(c * c)
    rstd = F32(1) / np.sqrt(var + F32(eps / (s_in * s_in)))
    g, b = (gamma.astype(np.float64) / s_out).astype(F32), (beta.astype(np.float64) / s_out).astype(F32)
    return requant(((rows.astype(F32) - mean) * rstd) * g + b).reshape(x.shape)


# ---------------------------------------------------------------- cases: (kernel, inputs, reference)

def case_avg_pool2d(shape, k, st, p, ceil=False, include_pad=True):
    x = rand_i8(*shape)
    kernel = cpu_ops.avg_pool2d(shape, k, st, p, ceil, include_pad, in_scale=0.05, out_scale=0.03)
    k, p = pair(k), pair(p)
    st = k if st is None else pair(st)
    ref = ref_avg_pool2d(x, k, st, p, ceil, include_pad, 0.05, 0.03)
    near = torch_q(F.avg_pool2d(nchw(x, 0.05), k, st, p, ceil, include_pad).permute(0, 2, 3, 1), 0.03)
    return kernel, (x,), ref, near


def case_adaptive(shape, out):
    x = rand_i8(*shape)
    kernel = cpu_ops.adaptive_avg_pool2d(shape, out, in_scale=0.02, out_scale=0.01)
    near = torch_q(F.adaptive_avg_pool2d(nchw(x, 0.02), out).permute(0, 2, 3, 1), 0.01)
    return kernel, (x,), ref_adaptive(x, pair(out), 0.02, 0.01), near


def case_max_pool(shape, k, st, p, d, ceil=False):
    x = rand_i8(*shape)
    kernel = cpu_ops.max_pool2d(shape, k, st, p, d, ceil)
    ref = ref_max_pool(x, pair(k), pair(k if st is None else st), pair(p), pair(d), ceil)
    exact = F.max_pool2d(nchw(x, 1.0), k, st, p, d, ceil).permute(0, 2, 3, 1).numpy()
    assert np.array_equal(ref, exact)          # the reference is torch's max pool
    return kernel, (x,), ref, exact


def case_lut(shape, fn):
    x = rand_i8(*shape)
    table = cpu_ops.lut_table(fn, 0.05, 0.02)
    return cpu_ops.lut(shape, table), (x,), table[x.astype(np.int64) + 128], None


def case_add(shape, relu):
    a, b = rand_i8(*shape), rand_i8(*shape)
    kernel = cpu_ops.add(shape, a_scale=0.03, b_scale=0.07, out_scale=0.05, relu=relu)
    y = torch.from_numpy(a * 0.03 + b * 0.07)
    near = torch_q(F.relu(y) if relu else y, 0.05)
    return kernel, (a, b), ref_add(a, b, 0.03, 0.07, 0.05, relu), near


def case_mul_channel(shape):
    x, s = rand_i8(*shape), rand_i8(shape[0], shape[3])
    kernel = cpu_ops.mul_channel(shape, x_scale=0.05, s_scale=1 / 127, out_scale=0.04)
    near = torch_q(torch.from_numpy(x * 0.05 * (s[:, None, None, :] / 127)), 0.04)
    return kernel, (x, s), ref_mul_channel(x, s, 0.05, 1 / 127, 0.04), near


def case_softmax(shape):
    x = rand_i8(*shape)
    kernel = cpu_ops.softmax(shape, in_scale=0.04, out_scale=1 / 127)
    near = torch_q(torch.softmax(torch.from_numpy(x * 0.04), dim=-1), 1 / 127)
    return kernel, (x,), ref_softmax(x, 0.04, 1 / 127), near


def case_layernorm(shape):
    x = rand_i8(*shape)
    gamma = RNG.uniform(0.5, 1.5, shape[-1]).astype(F32)
    beta = RNG.uniform(-0.5, 0.5, shape[-1]).astype(F32)
    kernel = cpu_ops.layernorm(shape, gamma, beta, eps=1e-5, in_scale=0.05, out_scale=0.03)
    y = F.layer_norm(torch.from_numpy(x * 0.05), (shape[-1],), torch.from_numpy(gamma).double(),
                     torch.from_numpy(beta).double(), eps=1e-5)
    return kernel, (x,), ref_layernorm(x, gamma, beta, 1e-5, 0.05, 0.03), torch_q(y, 0.03)


def case_copy(shape, dtype, out_shape):
    x = (RNG.standard_normal(shape) * 1000).astype(dtype)
    return cpu_ops.copy(shape, dtype, out_shape), (x,), x.reshape(out_shape or shape), None


def case_permute(shape, perm, dtype):
    x = (RNG.standard_normal(shape) * 1000).astype(dtype)
    return cpu_ops.permute(shape, perm, dtype), (x,), np.ascontiguousarray(x.transpose(perm)), None


def case_strided_copy(base_shape, shape, strides, offset, dtype):
    """The reference is numpy's own strided view of x (as_strided), copied."""
    x = (RNG.standard_normal(base_shape) * 1000).astype(dtype)
    view = np.lib.stride_tricks.as_strided(x.reshape(-1)[offset:], shape, [v * x.itemsize for v in strides])
    return cpu_ops.strided_copy(base_shape, shape, strides, offset, dtype), (x,), np.ascontiguousarray(view), None


def case_concat(shapes, axis, dtype):
    xs = tuple((RNG.standard_normal(s) * 1000).astype(dtype) for s in shapes)
    return cpu_ops.concat(shapes, axis, dtype), xs, np.concatenate(xs, axis), None


CASES = {
    "avg_pool 1x7x7x33 k7": lambda: case_avg_pool2d((1, 7, 7, 33), 7, None, 0),
    "avg_pool 2x17x13x5 k3 s2 p1": lambda: case_avg_pool2d((2, 17, 13, 5), 3, 2, 1),
    "avg_pool 1x9x10x1 k(2,3) s(1,2) p(1,1)": lambda: case_avg_pool2d((1, 9, 10, 1), (2, 3), (1, 2), (1, 1)),
    "avg_pool 1x8x10x3 k3 s2 p1 ceil_mode": lambda: case_avg_pool2d((1, 8, 10, 3), 3, 2, 1, True),
    "avg_pool 1x8x9x17 k3 s2 p1 ceil_mode, pad not counted":
        lambda: case_avg_pool2d((1, 8, 9, 17), 3, 2, 1, True, False),
    "adaptive 1x7x7x33 ->1": lambda: case_adaptive((1, 7, 7, 33), 1),
    "adaptive 2x17x13x3 ->(5,4)": lambda: case_adaptive((2, 17, 13, 3), (5, 4)),
    "adaptive 1x3x5x17 ->(7,7) (upsampling)": lambda: case_adaptive((1, 3, 5, 17), (7, 7)),
    "max_pool 1x17x17x33 k3 s2 p1": lambda: case_max_pool((1, 17, 17, 33), 3, 2, 1, 1),
    "max_pool 2x9x11x1 k(3,2) s1 p(1,1) d(2,3)": lambda: case_max_pool((2, 9, 11, 1), (3, 2), 1, (1, 1), (2, 3)),
    "max_pool 1x8x8x3 k3 s2 ceil_mode": lambda: case_max_pool((1, 8, 8, 3), 3, 2, 0, 1, True),
    "lut hardswish 1x17x17x33": lambda: case_lut((1, 17, 17, 33), "hardswish"),
    "lut gelu 33x17": lambda: case_lut((33, 17), "gelu"),
    "lut sigmoid 1": lambda: case_lut((1,), "sigmoid"),
    "add 1x17x17x33": lambda: case_add((1, 17, 17, 33), False),
    "add relu 33x17": lambda: case_add((33, 17), True),
    "mul_channel 2x5x7x33": lambda: case_mul_channel((2, 5, 7, 33)),
    "mul_channel 1x1x1x1": lambda: case_mul_channel((1, 1, 1, 1)),
    "softmax 33x17": lambda: case_softmax((33, 17)),
    "softmax 2x3x128": lambda: case_softmax((2, 3, 128)),
    "softmax 1x1": lambda: case_softmax((1, 1)),
    "layernorm 17x33": lambda: case_layernorm((17, 33)),
    "layernorm 2x5x96": lambda: case_layernorm((2, 5, 96)),
    "layernorm 3x1": lambda: case_layernorm((3, 1)),
    "copy flatten int8 1x3x5x17": lambda: case_copy((1, 3, 5, 17), np.int8, (1, 255)),
    "copy int32 33": lambda: case_copy((33,), np.int32, None),
    "permute NHWC->NCHW 2x3x5x17": lambda: case_permute((2, 3, 5, 17), (0, 3, 1, 2), np.int8),
    "permute float32 17x33": lambda: case_permute((17, 33), (1, 0), np.float32),
    "strided_copy head of QKV 19x2x96 -> 2x19x8": lambda: case_strided_copy((19, 2, 96), (2, 19, 8), (96, 192, 1), 40,
                                                                          np.int8),
    "strided_copy transposed slice float32 7x33": lambda: case_strided_copy((7, 33), (5, 3), (1, 33), 66, np.float32),
    "concat channels 1x3x5x{17,1,33}": lambda: case_concat([(1, 3, 5, 17), (1, 3, 5, 1), (1, 3, 5, 33)], -1, np.int8),
    "concat rows int32 {2,17}x5": lambda: case_concat([(2, 5), (17, 5)], 0, np.int32),
}


@pytest.fixture(scope="module")
def built():
    """Each case's kernel, inputs, reference and torch result, built once for the module."""
    return {}


def get_case(built, name):
    """The case's data comes from a generator seeded by its name: the same kernels (and cached
    ELFs) whichever cases run."""
    global RNG
    if name not in built:
        RNG = np.random.default_rng(zlib.crc32(name.encode()))
        built[name] = CASES[name]()
    return built[name]


@pytest.mark.parametrize("name", list(CASES))
def test_host_bit_exact(built, name):
    kernel, inputs, ref, near = get_case(built, name)
    out = run_host(kernel, *inputs)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)
    if near is not None:                       # the documented arithmetic is the torch op
        assert np.abs(out.astype(np.float64) - near).max() <= 1


ISS_CASES = ["avg_pool 2x17x13x5 k3 s2 p1", "adaptive 2x17x13x3 ->(5,4)", "max_pool 2x9x11x1 k(3,2) s1 p(1,1) d(2,3)",
             "lut gelu 33x17", "add relu 33x17", "mul_channel 2x5x7x33", "softmax 33x17", "layernorm 2x5x96",
             "permute NHWC->NCHW 2x3x5x17", "strided_copy head of QKV 19x2x96 -> 2x19x8", "concat channels 1x3x5x{17,1,33}", "copy flatten int8 1x3x5x17"]


@pytest.mark.parametrize("name", ISS_CASES)
def test_iss_matches_host(built, elf_cache, name):
    kernel, inputs, ref, _ = get_case(built, name)
    out = run_iss(kernel, *inputs, cache_dir=elf_cache)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out, run_host(kernel, *inputs))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(CASES) - set(ISS_CASES)))
def test_iss_matches_host_all(built, elf_cache, name):
    kernel, inputs, ref, _ = get_case(built, name)
    np.testing.assert_array_equal(run_iss(kernel, *inputs, cache_dir=elf_cache), ref)


def random_cases(seed):
    """One case of every operator with shapes and parameters drawn from `seed` (ragged sizes)."""
    global RNG
    RNG = rng = np.random.default_rng(seed)
    size = lambda: int(rng.choice([1, 2, 3, 5, 7, 16, 17, 33]))
    k, d = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    p, st, ceil = int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, 4)), bool(rng.integers(0, 2))
    img = lambda extent: (int(rng.integers(1, 3)), extent + int(rng.integers(0, 9)),
                          extent + int(rng.integers(0, 9)), size())
    rows = (size(), size()) if rng.integers(0, 2) else (size(), size(), size())
    perm = tuple(int(i) for i in rng.permutation(len(rows)))
    cat_axis = int(rng.integers(0, len(rows)))
    cat = [tuple(size() if a == cat_axis else n for a, n in enumerate(rows)) for _ in range(int(rng.integers(1, 4)))]
    return {
        "avg_pool2d": lambda: case_avg_pool2d(img(k), k, st, p, ceil, bool(rng.integers(0, 2))),
        "adaptive_avg_pool2d": lambda: case_adaptive(img(1), (size(), size())),
        "max_pool2d": lambda: case_max_pool(img(d * (k - 1) + 1), k, st, p, d, ceil),
        "lut": lambda: case_lut(rows, str(rng.choice(sorted(cpu_ops.ACTIVATIONS)))),
        "add": lambda: case_add(rows, bool(rng.integers(0, 2))),
        "mul_channel": lambda: case_mul_channel(img(1)),
        "softmax": lambda: case_softmax(rows),
        "layernorm": lambda: case_layernorm(rows),
        "copy": lambda: case_copy(rows, np.int32, (int(np.prod(rows)),)),
        "permute": lambda: case_permute(rows, perm, np.int8),
        "concat": lambda: case_concat(cat, cat_axis, np.float32),
    }


def check_random(seed):
    for op, make in random_cases(seed).items():
        kernel, inputs, ref, near = make()
        out = run_host(kernel, *inputs)
        np.testing.assert_array_equal(out, ref, err_msg=f"{op}: {kernel!r}")
        if near is not None:
            assert np.abs(out.astype(np.float64) - near).max() <= 1, f"{op}: {kernel!r}"


@pytest.mark.parametrize("seed", [0, 1])
def test_random_shapes_host(seed):
    check_random(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 30))
def test_random_shapes_host_sweep(seed):
    check_random(seed)


SPIKE_CASES = ["softmax 33x17", "layernorm 17x33", "avg_pool 1x8x9x17 k3 s2 p1 ceil_mode, pad not counted"]


@pytest.mark.parametrize("name", SPIKE_CASES)
def test_self_checking_elf_on_spike(built, tmp_path, name):
    """The same kernel in a self-checking ELF passes on Spike (no Gemmini needed), and fails
    with a corrupted expected output."""
    from baco.sim.external import run_spike
    kernel, inputs, ref, _ = get_case(built, name)
    arrays = [*inputs, np.zeros_like(ref)]
    assert run_spike(kernel.build_elf(arrays, tmp_path / "ok.elf", expected=ref), gemmini=False,
                     timeout_s=120, stdout=None) == 0
    wrong = ref.copy()
    wrong.flat[-1] ^= 1
    assert run_spike(kernel.build_elf(arrays, tmp_path / "bad.elf", expected=wrong), gemmini=False,
                     timeout_s=120, stdout=None) == 1


# ---------------------------------------------------------------- the tables

@pytest.mark.parametrize("fn,torch_fn", [("hardswish", F.hardswish), ("hardsigmoid", F.hardsigmoid),
                                         ("sigmoid", torch.sigmoid), ("silu", F.silu), ("gelu", F.gelu),
                                         ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
                                         ("tanh", torch.tanh)])
def test_lut_tables_are_torchs_activations(fn, torch_fn):
    q = torch.arange(-128, 128, dtype=torch.float64)
    for s_in, s_out in ((0.06, 0.02), (0.1, 1 / 127), (0.01, 0.003)):
        expected = np.clip(np.rint(torch_fn(q * s_in).numpy() / s_out), -128, 127)
        np.testing.assert_array_equal(cpu_ops.lut_table(fn, s_in, s_out), expected)


# ---------------------------------------------------------------- the machine code

def riscv_assembly(kernel, tmp_path):
    ll = tmp_path / "k.ll"
    ll.write_text(kernel.llvm_ir)
    asm = tmp_path / "k.s"
    subprocess.run([sys.executable, "-m", "ziglang", "cc", *toolchain.TARGET_FLAGS, "-O2", "-S", str(ll),
                    "-o", str(asm)], check=True, capture_output=True)
    return asm.read_text()


def test_no_fused_multiply_add_and_sqrt_is_an_instruction(tmp_path):
    """Layernorm multiplies and adds in float32 and takes a square root: the IR carries no
    contraction flags, RISC-V code has fsqrt.s and no fmadd, and calls nothing (no libm)."""
    kernel = cpu_ops.layernorm((4, 33), np.ones(33, F32), np.zeros(33, F32), in_scale=0.1, out_scale=0.1)
    assert "llvm.sqrt.f32" in kernel.llvm_ir
    assert not any(flag in kernel.llvm_ir for flag in ("contract", "fast", "fmuladd", "llvm.fma"))
    asm = riscv_assembly(kernel, tmp_path)
    assert "fsqrt.s" in asm
    assert not any(f"{op}." in asm for op in ("fmadd", "fmsub", "fnmadd", "fnmsub"))
    assert "call" not in asm and "tail" not in asm


def test_rounding_is_an_instruction_not_a_libcall(tmp_path):
    asm = riscv_assembly(cpu_ops.add((17,), a_scale=0.1, b_scale=0.1, out_scale=0.3), tmp_path)
    assert "fcvt.l.s" in asm and "call" not in asm and "tail" not in asm


def test_ties_round_to_even_and_saturate(elf_cache):
    """x * 0.5 + 0 * 1: halves round to the even neighbour, beyond int8 saturates (host and ISS)."""
    kernel = cpu_ops.add((12,), a_scale=0.5, b_scale=1.0, out_scale=1.0)
    a = np.array([1, 3, 5, 7, -1, -3, -5, -7, 127, -128, 0, 2], np.int8)
    b = np.array([0] * 8 + [127, -128, 0, 0], np.int8)
    expected = np.array([0, 2, 2, 4, 0, -2, -2, -4, 127, -128, 0, 1], np.int8)
    np.testing.assert_array_equal(run_host(kernel, a, b), expected)
    np.testing.assert_array_equal(run_iss(kernel, a, b, cache_dir=elf_cache), expected)


def test_interface():
    k = cpu_ops.add((2, 3), a_scale=0.1, b_scale=0.2, out_scale=0.3)
    assert k.name.startswith("cpu_add_") and f"@{k.name}(" in k.mlir
    assert f"define void @{k.name}(ptr %0, ptr %1, ptr %2)" in k.llvm_ir
    assert k.arg_shapes == ((2, 3),) * 3 and k.arg_dtypes == (np.dtype(np.int8),) * 3 and k.n_inputs == 2
    other = cpu_ops.add((2, 3), a_scale=0.1, b_scale=0.2, out_scale=0.4)
    assert other.name != k.name
    assert cpu_ops.add((2, 3), a_scale=0.1, b_scale=0.2, out_scale=0.3).name == k.name



def test_kernels_link_side_by_side():
    """Tables are private globals and names are unique: kernels link into one module."""
    import llvmlite.binding as llvm
    kernels = [cpu_ops.lut((3,), cpu_ops.lut_table("tanh", 0.1, 0.01)),
               cpu_ops.lut((3,), cpu_ops.lut_table("sigmoid", 0.1, 0.01)),
               cpu_ops.softmax((2, 3), in_scale=0.1, out_scale=0.01)]
    module = llvm.parse_assembly(kernels[0].llvm_ir)
    for k in kernels[1:]:
        module.link_in(llvm.parse_assembly(k.llvm_ir))
    module.verify()
    assert {f.name for f in module.functions if not f.is_declaration} == {k.name for k in kernels}


# ---------------------------------------------------------------- errors

def test_bad_arguments_name_the_argument():
    k = cpu_ops.add((2, 3), a_scale=0.1, b_scale=0.2, out_scale=0.3)
    a, b, out = rand_i8(2, 3), rand_i8(2, 3), np.zeros((2, 3), np.int8)
    with pytest.raises(TypeError, match="takes 3 arrays"):
        k(a, b)
    with pytest.raises(TypeError, match="argument b must be int8, not int32"):
        k(a, b.astype(np.int32), out)
    with pytest.raises(ValueError, match=r"argument out must have shape \(2, 3\), not \(3, 2\)"):
        k(a, b, np.zeros((3, 2), np.int8))
    with pytest.raises(ValueError, match="argument a must be C-contiguous"):
        k(rand_i8(3, 2).T, b, out)
    with pytest.raises(TypeError, match="argument a must be a numpy array, not list"):
        k([[0] * 3] * 2, b, out)
    with pytest.raises(ValueError, match="argument a overlaps the output out"):
        k(out, b, out)
    with pytest.raises(ValueError, match=r"expected must be int8 of shape \(2, 3\), not int8 of shape \(6,\)"):
        k.build_elf([a, b, out], "never.elf", expected=np.zeros(6, np.int8))
    out.flags.writeable = False
    with pytest.raises(ValueError, match="the output"):
        k(a, b, out)


@pytest.mark.parametrize("make,error,match", [
    (lambda: cpu_ops.avg_pool2d((1, 4, 4), 2, in_scale=1.0, out_scale=1.0), ValueError, "4 dimensions"),
    (lambda: cpu_ops.avg_pool2d((1, 4, 4, 2), 2, padding=2, in_scale=1.0, out_scale=1.0), ValueError, "padding 2"),
    (lambda: cpu_ops.avg_pool2d((1, 2, 2, 2), 3, in_scale=1.0, out_scale=1.0), ValueError, "does not fit"),
    (lambda: cpu_ops.avg_pool2d((1, 4, 4, 2), 0, in_scale=1.0, out_scale=1.0), ValueError, "kernel_size"),
    (lambda: cpu_ops.avg_pool2d((1, 4, 4, 2), 2.0, in_scale=1.0, out_scale=1.0), TypeError, "kernel_size"),
    (lambda: cpu_ops.max_pool2d((1, 4, 4, 2), 2, ceil_mode=1), TypeError, "ceil_mode"),
    (lambda: cpu_ops.avg_pool2d((1, 4, 4, 2), 2, count_include_pad=None, in_scale=1.0, out_scale=1.0),
     TypeError, "count_include_pad"),
    (lambda: cpu_ops.adaptive_avg_pool2d((1, 4, 4, 2), 1, in_scale=0.0, out_scale=1.0), ValueError, "in_scale"),
    (lambda: cpu_ops.adaptive_avg_pool2d((1, 4, 4, 2), 1, in_scale="1", out_scale=1.0), TypeError, "in_scale"),
    (lambda: cpu_ops.add((0, 3), a_scale=1.0, b_scale=1.0, out_scale=1.0), ValueError, "dimension >= 1"),
    (lambda: cpu_ops.add((2, 3), a_scale=1.0, b_scale=math.inf, out_scale=1.0), ValueError, "b_scale"),
    (lambda: cpu_ops.add((2, 3), a_scale=1.0, b_scale=1.0, out_scale=1.0, relu=1), TypeError, "relu"),
    (lambda: cpu_ops.lut((3,), np.zeros(255, np.int8)), ValueError, "table must be 256 int8"),
    (lambda: cpu_ops.lut((3,), np.zeros(256, np.int32)), ValueError, "table must be 256 int8"),
    (lambda: cpu_ops.lut_table("relu7", 1.0, 1.0), ValueError, "function must be one of"),
    (lambda: cpu_ops.layernorm((2, 3), np.ones(4), np.zeros(3), in_scale=1.0, out_scale=1.0), ValueError, "gamma"),
    (lambda: cpu_ops.layernorm((2, 3), np.ones(3), np.zeros(3), eps=0.0, in_scale=1.0, out_scale=1.0),
     ValueError, "eps"),
    (lambda: cpu_ops.copy((2, 3), np.int8, (7,)), ValueError, "out_shape"),
    (lambda: cpu_ops.copy((2, 3), np.float64), TypeError, "dtype"),
    (lambda: cpu_ops.permute((2, 3), (0, 0)), ValueError, "perm"),
    (lambda: cpu_ops.strided_copy((2, 3), (2, 3), (3, 1), 1), ValueError, "reads element 6"),
    (lambda: cpu_ops.strided_copy((2, 3), (2, 3), (3,), 0), ValueError, "strides"),
    (lambda: cpu_ops.concat([(2, 3), (2, 4)], 0), ValueError, r"shapes\[1\]"),
    (lambda: cpu_ops.concat([(2, 3)], 2), ValueError, "axis"),
])
def test_bad_operator_parameters(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_embedding_gathers_rows_on_host_and_iss(elf_cache):
    """Rows of an int8 table (an argument, any size) picked by int32 ids of a ragged shape; an id
    outside the table is a ValueError naming ids, never a read past it."""
    table = rand_i8(37, 13)
    ids = RNG.integers(0, 37, size=(3, 7)).astype(np.int32)
    ids[0, :2] = (0, 36)
    kernel = cpu_ops.embedding(ids.shape, 37, 13)
    assert kernel.arg_shapes == ((3, 7), (37, 13), (3, 7, 13))
    np.testing.assert_array_equal(run_host(kernel, ids, table), table[ids])
    np.testing.assert_array_equal(run_iss(kernel, ids, table, cache_dir=elf_cache), table[ids])
    for bad in (-1, 37):
        wrong = ids.copy()
        wrong[2, 6] = bad
        with pytest.raises(ValueError, match=r"argument ids must be in \[0, 37\)"):
            run_host(kernel, wrong, table)
    with pytest.raises(TypeError, match="argument ids must be int32"):
        run_host(kernel, ids.astype(np.int64), table)
    with pytest.raises(ValueError, match="rows must be a positive int"):
        cpu_ops.embedding((3,), 0, 4)


def test_masked_softmax_on_host_and_iss(elf_cache):
    """An attention mask (keep rows repeating every P rows): the max over kept values, a masked
    value's exponential 0, its output 0; an all-kept mask is the plain softmax."""
    x = rand_i8(2, 3, 7, 7)
    keep = np.tril(np.ones((7, 7), dtype=bool))
    kernel = cpu_ops.softmax(x.shape, in_scale=0.05, out_scale=1 / 127, keep=keep)
    rows, kept = x.reshape(-1, 7).astype(np.int64), np.tile(keep, (6, 1))
    table = cpu_ops.softmax_exp_table(0.05)
    m = np.where(kept, rows, -128).max(axis=1, keepdims=True)
    e = np.where(kept, table[np.where(kept, m - rows, 0)], F32(0))
    total = np.add.accumulate(e, axis=1, dtype=np.float32)[:, -1:]
    expected = requant(e * (F32(1 / (1 / 127)) / total)).reshape(x.shape)
    np.testing.assert_array_equal(run_host(kernel, x), expected)
    np.testing.assert_array_equal(run_iss(kernel, x, cache_dir=elf_cache), expected)
    assert (expected.reshape(-1, 7)[~kept] == 0).all()
    plain = cpu_ops.softmax(x.shape, in_scale=0.05, out_scale=1 / 127)
    all_kept = cpu_ops.softmax(x.shape, in_scale=0.05, out_scale=1 / 127, keep=np.ones((1, 7), dtype=bool))
    np.testing.assert_array_equal(run_host(all_kept, x), run_host(plain, x))
    with pytest.raises(ValueError, match="keep must be a bool"):
        cpu_ops.softmax(x.shape, in_scale=0.05, out_scale=1 / 127, keep=np.ones((4, 7), dtype=bool))
    with pytest.raises(ValueError, match="masks every value of a row"):
        cpu_ops.softmax(x.shape, in_scale=0.05, out_scale=1 / 127, keep=np.zeros((1, 7), dtype=bool))
