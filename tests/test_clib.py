"""The C library's streams (baco.sim.clib): run on the functional model they compute Gemmini's
matmul (with a full or repeating bias), convolution (with the pooling epilogue), depthwise
convolution and residual add bit for bit (int32 and scaled int8 outputs, ragged shapes,
first-layer pixel packing, the 1x1 stride-2 downsampling path, operands reused across tiles),
and the cycle model times them above the array's MAC floor, the CPU's per-tile work included."""
import numpy as np
import pytest

from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_conv_auto, tiled_matmul_auto
from baco.gemmini.isa import encode, COMMANDS
from baco.kernels.conv import reference_conv2d
from baco.kernels.depthwise import reference_depthwise_conv2d
from baco.kernels.pool import reference_conv_pool
from baco.kernels.resadd import reference as resadd_reference
from baco.sim.clib import (conv_stream, depthwise_stream, expanded, library_stream_cycles, matmul_stream,
                           resadd_stream, resadd_tiles, time_conv, time_matmul)
from baco.sim.timing import TimingModel
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


def execute(cfg, stream, arrays, out_addr, out_shape, out_dtype=np.int8):
    """Run a library stream on the functional model over `arrays` ({DRAM address: array}): the
    output read back from out_addr, and the (name, fields) Gemmini's units execute (its loops
    expanded)."""
    base = 0x80000000
    mem = ArrayMemory(base, 1 << 22)
    for addr, a in arrays.items():
        mem.write(addr, np.ascontiguousarray(a).tobytes())
    model = GemminiModel(cfg, mem)
    issued = list(stream)
    for name, fields in issued:
        model.execute(COMMANDS[name].funct, *encode(name, **fields))
    n = int(np.prod(out_shape)) * np.dtype(out_dtype).itemsize
    return np.frombuffer(mem.read(out_addr, n), dtype=out_dtype).reshape(out_shape), expanded(issued, cfg)


BASE = 0x80000000
ADDRS = (BASE, BASE + 0x100000, BASE + 0x200000, BASE + 0x300000)


# (dim, (M, N, K), scratchpad KB, accumulator KB): the last two move A (I0·K0 <= 2) or B in once
@pytest.mark.parametrize("dim,shape,sp_kb,acc_kb", [(16, (33, 70, 65), 4, 2), (8, (20, 200, 24), 8, 2),
                                                    (8, (200, 20, 24), 8, 2), (16, (64, 784, 100), 256, 64)])
def test_library_matmul_with_repeating_bias_and_operand_reuse(dim, shape, sp_kb, acc_kb):
    """tiled_matmul_nn_auto's linear layer: int32 bias row for every output row, ReLU, int8 out;
    an operand whose tiles fit its scratchpad half is moved in once."""
    M, N, K = shape
    cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
    rng = np.random.default_rng(M * N + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    bias = rng.integers(-(1 << 14), 1 << 14, N).astype(np.int32)
    stream = matmul_stream(M, N, K, cfg, out_int8=True, scale=1 / 128, relu=True, bias="repeating",
                           addrs=ADDRS[:3], d_addr=ADDRS[3])
    got, seen = execute(cfg, stream, {ADDRS[0]: a, ADDRS[1]: b, ADDRS[3]: bias}, ADDRS[2], (M, N))
    np.testing.assert_array_equal(got, reference_matmul(a, b, np.broadcast_to(bias, (M, N)), scale=1 / 128,
                                                        relu=True, out="int8"))
    ti, tj, tk = tiled_matmul_auto(M, N, K, cfg)
    I0, J0, K0 = -(-M // (ti * dim)), -(-N // (tj * dim)), -(-K // (tk * dim))
    a_bytes = sum(f["cols"] * f["rows"] for n, f in seen if n == "mvin")
    b_bytes = sum(f["cols"] * f["rows"] for n, f in seen if n == "mvin2")
    assert a_bytes == M * K * (1 if I0 * K0 <= 2 else J0)       # A moved in once when it is reused
    k_rows = -(-K // dim) * dim            # LdB moves whole DIM-row blocks (no row pad)
    assert b_bytes == k_rows * N * (1 if J0 * K0 <= 2 else I0)


@pytest.mark.parametrize("dim,shape,sp_kb,acc_kb", [(16, (128, 128, 64), 256, 64), (16, (33, 70, 65), 4, 2),
                                                    (8, (20, 45, 24), 8, 2)])
def test_library_matmul_with_transposed_b(dim, shape, sp_kb, acc_kb):
    """transformer.c's attention scores Q·Kᵀ: B given as Bᵀ (N×K, row-major), read through the
    array's transposer (transpose_B); bit-exact, and slower than an untransposed B."""
    M, N, K = shape
    cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
    rng = np.random.default_rng(M + N * K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    bt = rng.integers(-128, 128, (N, K), dtype=np.int8)
    stream = list(matmul_stream(M, N, K, cfg, out_int8=True, scale=1 / 64, transpose_b=True, addrs=ADDRS[:3]))
    got, _ = execute(cfg, stream, {ADDRS[0]: a, ADDRS[1]: bt}, ADDRS[2], (M, N))
    np.testing.assert_array_equal(got, reference_matmul(a, bt.T, None, scale=1 / 64, out="int8"))
    plain = matmul_stream(M, N, K, cfg, out_int8=True, scale=1 / 64)
    assert library_stream_cycles(stream, TimingModel(cfg)) > library_stream_cycles(list(plain), TimingModel(cfg))


@pytest.mark.parametrize("dim,shape,acc_kb", [(16, (37, 50), 64), (16, (200, 64), 4), (4, (33, 70), 2),
                                              (8, (9, 7), 16)])
@pytest.mark.parametrize("relu", [False, True])
def test_library_resadd_stream_is_bit_exact(dim, shape, acc_kb, relu):
    """tiled_resadd_auto: act(A·sa + B·sb)·sc, int8, over resadd_tiles' tiles."""
    I, J = shape
    cfg = GemminiConfig.from_capacity(dim, 16, acc_kb)
    rng = np.random.default_rng(I * J)
    a = rng.integers(-128, 128, (I, J), dtype=np.int8)
    b = rng.integers(-128, 128, (I, J), dtype=np.int8)
    sa, sb, sc = 0.75, 1.5, 0.37
    got, seen = execute(cfg, resadd_stream(I, J, cfg, a_scale=sa, b_scale=sb, c_scale=sc, relu=relu, addrs=ADDRS[:3]),
                        {ADDRS[0]: a, ADDRS[1]: b}, ADDRS[2], (I, J))
    np.testing.assert_array_equal(got, resadd_reference(a, b, sa, sb, sc, relu=relu))
    ti, tj = resadd_tiles(I, J, cfg)
    assert -(-ti // dim) * dim * -(-tj // dim) <= cfg.acc_rows // 2
    assert sum(1 for n, _ in seen if n in ("preload", "compute_preloaded", "compute_accumulated")) == 0


# (dim, (N, H, W, C, R, stride, padding), scratchpad KB, accumulator KB)
DW_CASES = [(16, (1, 14, 14, 24, 3, 1, 1), 256, 64), (16, (2, 15, 11, 19, 3, 2, 1), 16, 8),
            (8, (1, 9, 13, 10, 5, 1, 2), 4, 2), (4, (1, 7, 7, 6, 3, 2, 0), 2, 1)]


@pytest.mark.parametrize("dim,shape,sp_kb,acc_kb", DW_CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_library_depthwise_stream_is_bit_exact(dim, shape, sp_kb, acc_kb, bias):
    """tiled_conv_dw_auto: one single-channel LOOP_CONV_WS (dw) per tile and channel."""
    N, H, W, C, R, stride, padding = shape
    cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C), dtype=np.int8)
    b = rng.integers(-(1 << 12), 1 << 12, C).astype(np.int32) if bias else None
    P, Q = (H + 2 * padding - R) // stride + 1, (W + 2 * padding - R) // stride + 1
    arrays = {ADDRS[0]: x, ADDRS[1]: np.ascontiguousarray(w.transpose(2, 0, 1))}      # the library's [C][R][S]
    if bias:
        arrays[ADDRS[3]] = b
    stream = depthwise_stream(N, H, W, C, R, cfg, stride=stride, padding=padding, scale=1 / 64, relu=True,
                              bias=bias, addrs=ADDRS)
    got, seen = execute(cfg, stream, arrays, ADDRS[2], (N, P, Q, C))
    np.testing.assert_array_equal(got, reference_depthwise_conv2d(x, w, b, stride=stride, padding=padding,
                                                                  scale=1 / 64, relu=True))
    # one LOOP_CONV_WS per channel of each tile
    issued = [n for n, _ in depthwise_stream(N, H, W, C, R, cfg, stride=stride, padding=padding)]
    batches, porows, pocols, _, krows, kcols, _ = tiled_conv_auto(N, H, W, 1, 1, R, stride=stride, padding=padding,
                                                                  config=cfg, depthwise=True)
    tiles = -(-N // batches) * -(-P // porows) * -(-Q // pocols) * -(-R // krows) * -(-R // kcols)
    assert issued.count("loop_conv_ws") == tiles * C


@pytest.mark.parametrize("dim,shape,pool", [(16, (1, 16, 16, 3, 16, 3, 1, 1), (3, 2, 1)),
                                            (8, (2, 12, 10, 9, 20, 3, 1, 1), (2, 2, 0)),
                                            (16, (1, 20, 20, 16, 32, 3, 2, 1), (3, 2, 1))])
def test_library_conv_with_pooling_epilogue_is_bit_exact(dim, shape, pool):
    """tiled_conv_auto with pool_size/stride/padding: conv, ReLU, max-pool on the mvout."""
    N, H, W, C, K, R, stride, padding = shape
    size, pstride, ppad = pool
    cfg = GemminiConfig.from_capacity(dim, 16, 8)
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    b = rng.integers(-(1 << 12), 1 << 12, K).astype(np.int32)
    ref = reference_conv_pool(x, w, b, pool=size, stride=pstride, padding=ppad, conv_stride=stride,
                              conv_padding=padding, scale=1 / 256, relu=True)
    stream = conv_stream(N, H, W, C, K, R, cfg, stride=stride, padding=padding, scale=1 / 256, relu=True, bias=True,
                         pool_size=size, pool_stride=pstride, pool_padding=ppad, addrs=ADDRS)
    got, _ = execute(cfg, stream, {ADDRS[0]: x, ADDRS[1]: w, ADDRS[3]: b}, ADDRS[2], ref.shape)
    np.testing.assert_array_equal(got, ref)


def test_library_call_cycles_count_the_cpu_per_tile():
    """library_stream_cycles: the CPU's per-tile work is on the clock (a call takes at least as
    long as Gemmini alone, and a slow tile loop sets the pace) and a call starts where the
    previous call's fence ended."""
    from dataclasses import replace
    cfg = GemminiConfig.from_capacity(16, 16, 8)
    stream = list(conv_stream(1, 28, 28, 64, 64, 3, cfg, padding=1))
    tiles = [n for n, _ in stream].count("loop_conv_ws")
    assert tiles > 3
    alone = time_conv(1, 28, 28, 64, 64, 3, cfg, padding=1)["cycles"]
    tm = TimingModel(cfg)
    first = library_stream_cycles(stream, tm)
    assert first >= alone
    assert first == time_conv(1, 28, 28, 64, 64, 3, cfg, padding=1,
                              cpu_tile_instructions=tm.k.library_tile_instructions)["cycles"]
    slow = TimingModel(cfg, constants=replace(tm.k, library_tile_instructions=20000))
    assert library_stream_cycles(stream, slow) >= tiles * 20000     # the CPU sets the pace
    second = library_stream_cycles(resadd_stream(56, 64, cfg), tm)
    assert second > 0 and tm.finish >= first + second - 1
