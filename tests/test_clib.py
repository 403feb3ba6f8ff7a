"""The C library's matmul and convolution streams (baco.sim.clib): run on the functional model
they compute Gemmini's matmul and convolution bit for bit (int32 and scaled int8 outputs, ragged
shapes, first-layer pixel packing, the 1x1 stride-2 downsampling path), and the cycle model
times them above the array's MAC floor."""
import numpy as np
import pytest

from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_conv_auto, tiled_matmul_auto
from baco.gemmini.isa import encode, COMMANDS
from baco.kernels.conv import reference_conv2d
from baco.sim.clib import conv_stream, expanded, matmul_stream, time_conv, time_matmul
from baco.sim.functional import ArrayMemory, GemminiModel


def run_library(a, b, cfg, bias=None, **kw):
    M, K = a.shape
    N = b.shape[1]
    out_int8 = kw.get("out_int8", False)
    base = 0x80000000
    mem = ArrayMemory(base, 1 << 20)
    a_addr, b_addr, c_addr, d_addr = base, base + 0x40000, base + 0x80000, base + 0xC0000
    mem.write(a_addr, a.tobytes())
    mem.write(b_addr, b.tobytes())
    if bias is not None:
        mem.write(d_addr, bias.tobytes())
        kw["bias"] = "repeating" if bias.shape[0] == 1 else "full"
    model = GemminiModel(cfg, mem)
    for name, fields in matmul_stream(M, N, K, cfg, addrs=(a_addr, b_addr, c_addr), d_addr=d_addr, **kw):
        model.execute(COMMANDS[name].funct, *encode(name, **fields))
    dtype = np.int8 if out_int8 else np.int32
    return np.frombuffer(mem.read(c_addr, M * N * np.dtype(dtype).itemsize), dtype=dtype).reshape(M, N)


@pytest.mark.parametrize("dim,shape", [(4, (17, 33, 65)), (16, (33, 17, 70)), (16, (1, 100, 65)),
                                       (8, (64, 64, 64))])
@pytest.mark.parametrize("out", ["int32", "int8"])
def test_library_stream_is_bit_exact(dim, shape, out):
    M, N, K = shape
    cfg = GemminiConfig.from_capacity(dim, 4, 2)     # small memories: several tiles per dimension
    rng = np.random.default_rng(M + N + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    kw = dict(out_int8=True, scale=1 / 64, relu=True) if out == "int8" else {}
    got = run_library(a, b, cfg, **kw)
    ref = reference_matmul(a, b, out=out, scale=kw.get("scale", 1.0), relu=kw.get("relu", False))
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("shape,rows", [((33, 17, 70), 1), ((33, 17, 70), 33), ((100, 64, 9), 1), ((5, 40, 3), 5)])
def test_library_stream_with_bias_is_bit_exact(shape, rows):
    """tiled_matmul_auto with a full (M×N) or repeating (one row) int32 bias D, several tiles
    (the operand reuse across tiles included), int8 output."""
    M, N, K = shape
    cfg = GemminiConfig.from_capacity(16, 4, 2)
    rng = np.random.default_rng(M * N + rows)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    d = rng.integers(-3000, 3000, (rows, N), dtype=np.int32)
    got = run_library(a, b, cfg, bias=d, out_int8=True, scale=1 / 32)
    ref = reference_matmul(a, b, np.broadcast_to(d, (M, N)), out="int8", scale=1 / 32)
    assert np.array_equal(got, ref)
    with pytest.raises(ValueError, match="bias"):
        list(matmul_stream(M, N, K, cfg, bias="row"))


def test_library_tiles_and_timing():
    cfg = GemminiConfig()
    ti, tj, tk = tiled_matmul_auto(256, 256, 256, cfg)
    issued = [n for n, _ in matmul_stream(256, 256, 256, cfg)]
    assert issued.count("loop_ws") == -(-16 // ti) * -(-16 // tj) * -(-16 // tk)     # one per tile
    names = [n for n, _ in expanded(matmul_stream(256, 256, 256, cfg), cfg)]
    assert names.count("preload") == (256 // 16) ** 3     # one per DIM×DIM×DIM block product
    r = time_matmul(256, 256, 256, cfg)
    # A is re-read for every column tile, B for every row tile (no reuse across LOOP_WS calls)
    col_tiles, row_tiles = -(-16 // tj), -(-16 // ti)
    assert r["dram_bytes_in"] == 256 * 256 * col_tiles + 256 * 256 * row_tiles
    assert r["macs"] == 256 ** 3
    assert r["cycles"] >= 256 ** 3 / 16 ** 2
    assert r["dram_bytes_out"] == 256 * 256 * 4
    r8 = time_matmul(256, 256, 256, cfg, out_int8=True, scale=0.5)
    assert r8["dram_bytes_out"] == 256 * 256
    with pytest.raises(ValueError, match="relu"):
        list(matmul_stream(16, 16, 16, cfg, relu=True))


def run_conv_library(x, w, bias, cfg, *, stride, padding, scale):
    """tiled_conv_auto's stream for NHWC x, HWIO w (ReLU, int8 out) run on the functional model;
    (output, the (name, fields) Gemmini's units execute, LoopConv's expanded)."""
    N, H, W, C = x.shape
    R, _, _, K = w.shape
    base = 0x80000000
    mem = ArrayMemory(base, 1 << 22)
    addrs = (base, base + 0x100000, base + 0x200000, base + 0x300000)
    mem.write(addrs[0], x.tobytes())
    mem.write(addrs[1], w.tobytes())
    if bias is not None:
        mem.write(addrs[3], bias.tobytes())
    model = GemminiModel(cfg, mem)
    issued = list(conv_stream(N, H, W, C, K, R, cfg, stride=stride, padding=padding, scale=scale, relu=True,
                              bias=bias is not None, addrs=addrs))
    for name, fields in issued:
        model.execute(COMMANDS[name].funct, *encode(name, **fields))
    P, Q = (H + 2 * padding - R) // stride + 1, (W + 2 * padding - R) // stride + 1
    out = np.frombuffer(mem.read(addrs[2], N * P * Q * K), dtype=np.int8).reshape(N, P, Q, K)
    return out, expanded(issued, cfg)


# (dim, (N, H, W, C, K, R, stride, padding), scratchpad KB, accumulator KB)
CONV_CASES = [
    # first layer, 3 channels packed 5 pixels to an array row, over kernel-column tiles 5 + 2
    # (mvins at scratchpad row 0 must still pack their rows above: this case used to mismatch)
    (16, (1, 12, 12, 3, 16, 7, 2, 3), 8, 4),
    (16, (1, 24, 24, 3, 16, 7, 2, 3), 8, 4),
    (16, (2, 20, 20, 3, 8, 7, 1, 0), 8, 4),
    (8, (1, 13, 9, 2, 11, 5, 1, 2), 8, 4),
    # the 1x1 stride-2 downsampling path (even input, no padding)
    (16, (1, 16, 16, 32, 48, 1, 2, 0), 8, 4),
    (16, (2, 14, 10, 17, 20, 1, 2, 0), 16, 8),
    (4, (1, 8, 12, 5, 9, 1, 2, 0), 4, 2),
    (8, (1, 28, 28, 40, 33, 1, 2, 0), 16, 8),
    # odd input: the plain strided path
    (16, (1, 15, 9, 17, 20, 1, 2, 0), 8, 4),
]


@pytest.mark.parametrize("dim,shape,sp_kb,acc_kb", CONV_CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_library_conv_stream_is_bit_exact(dim, shape, sp_kb, acc_kb, bias):
    N, H, W, C, K, R, stride, padding = shape
    cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    b = rng.integers(-(1 << 15), 1 << 15, K).astype(np.int32) if bias else None
    got, stream = run_conv_library(x, w, b, cfg, stride=stride, padding=padding, scale=1 / 256)
    ref = reference_conv2d(x, w, b, stride=stride, padding=padding, scale=1 / 256, relu=True, config=cfg,
                           blocks=(dim, dim, dim))
    np.testing.assert_array_equal(got, ref)
    downsample = R == 1 and stride == 2 and H % 2 == 0 and W % 2 == 0
    input_loads = [f for n, f in stream if n == "config_ld" and f["state_id"] == 0]
    assert input_loads and all(f["stride"] == C << downsample for f in input_loads)     # every other input pixel
    ex = [f for n, f in stream if n == "config_ex" and not f["set_only_strides"]]
    assert ex[0]["a_stride"] == stride >> downsample


def test_library_downsampling_moves_in_a_quarter_of_the_input():
    cfg = GemminiConfig()
    plain = time_conv(1, 31, 31, 64, 128, 1, cfg, stride=2)        # odd input: every pixel moved in
    down = time_conv(1, 32, 32, 64, 128, 1, cfg, stride=2)         # the downsampling path
    assert down["macs"] == plain["macs"] == 16 * 16 * 64 * 128
    weights = 64 * 128
    och_tiles = -(-128 // tiled_conv_auto(1, 32, 32, 64, 128, 1, stride=2, config=cfg)[3])   # input re-read per tile
    assert down["dram_bytes_in"] - weights == och_tiles * 16 * 16 * 64
    assert plain["dram_bytes_in"] - weights == och_tiles * 31 * 31 * 64
