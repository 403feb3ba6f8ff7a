"""Gemmini's max-pooling mvout: the numpy reference (baco.gemmini.arith.max_pool) against
torch's max_pool2d and a written-out window loop, and the functional model's pooled mvout
against the reference and the RTL's rules (StoreController: pixel (pr, pc) at
dram + (pr*pool_out_dim + pc)*stride, rows field ignored, no full-width or 1-D modes)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from baco.gemmini.arith import acc_to_int8, max_pool
from baco.gemmini.isa import ACC_BIT, READ_FULL_BIT, GemminiFault
from tests.test_functional_isa import ONE, Rig, f32


def window_loop(img, size, stride, upad, lpad, porows, pocols):
    """Pooled pixels by the RTL's counters (porow, pocol, wrow, wcol), positions outside = 0."""
    orows, ocols, ch = img.shape
    out = np.zeros((porows * pocols, ch), np.int64)
    for pr in range(porows):
        for pc in range(pocols):
            vals = []
            for wr in range(size):
                for wc in range(size):
                    r, c = pr * stride + wr - upad, pc * stride + wc - lpad
                    vals.append(img[r, c] if 0 <= r < orows and 0 <= c < ocols else np.zeros(ch, np.int64))
            out[pr * pocols + pc] = np.max(vals, axis=0)
    return out


@pytest.mark.parametrize("orows,ocols,size,stride,pad", [
    (1, 1, 1, 1, 0), (4, 4, 2, 2, 0), (5, 7, 3, 2, 1), (6, 5, 3, 1, 1), (9, 9, 3, 3, 0), (8, 11, 2, 1, 1),
    (3, 17, 3, 2, 1), (7, 3, 2, 2, 1)])
def test_reference_matches_torch_and_window_loop(orows, ocols, size, stride, pad):
    rng = np.random.default_rng(orows * 100 + ocols)
    signed = rng.integers(-128, 128, (orows * ocols, 5)).astype(np.int8)
    relued = np.maximum(signed, 0).astype(np.int8)
    pooled = max_pool(relued, orows, ocols, size, stride, pad, pad)
    # after ReLU, zero padding is torch's -inf padding
    t = torch.nn.functional.max_pool2d(torch.from_numpy(relued.reshape(1, orows, ocols, 5)).permute(0, 3, 1, 2).float(),
                                       size, stride, pad)
    assert pooled.dtype == np.int8
    assert (pooled == t.permute(0, 2, 3, 1).reshape(-1, 5).numpy().astype(np.int8)).all()
    # signed values: padding positions count as 0
    porows, pocols = (orows + 2 * pad - size) // stride + 1, (ocols + 2 * pad - size) // stride + 1
    ref = window_loop(signed.astype(np.int64).reshape(orows, ocols, 5), size, stride, pad, pad, porows, pocols)
    assert (max_pool(signed, orows, ocols, size, stride, pad, pad) == ref).all()
    # explicit porows/pocols larger than the image: the extra windows are padding
    ref = window_loop(signed.astype(np.int64).reshape(orows, ocols, 5), size, stride, 0, pad, porows + 1, pocols)
    assert (max_pool(signed, orows, ocols, size, stride, 0, pad, porows + 1, pocols) == ref).all()


@pytest.mark.parametrize("dim", [4, 16])
def test_model_pooled_mvout_scale_relu_then_max(dim):
    g, rng = Rig(dim), np.random.default_rng(dim)
    orows, ocols, ch = 5, 4, min(dim, 6)
    acc = rng.integers(-3000, 3000, (orows * ocols, ch))
    g.m.acc[8:8 + orows * ocols, :ch] = acc
    # out_dim 7 > pocols: pooled rows land 7 pixels apart; the stride is 2 pixels of 8 channels
    g("config_st", stride=16, activation=1, acc_scale=f32(0.05), pool_stride=2, pool_size=3, upad=1, lpad=1,
      orows=orows, ocols=ocols, porows=3, pocols=2, pool_out_dim=7)
    g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT | 8, rows=0, cols=ch)   # rows is ignored
    ref = max_pool(acc_to_int8(acc, 0.05, True), orows, ocols, 3, 2, 1, 1, 3, 2)
    for pr in range(3):
        got = g.get((pr * 7) * 16, 2, ch, np.int8, stride=16)
        assert (got == ref[pr * 2:pr * 2 + 2]).all()


def test_model_pool_out_dim_is_the_row_pitch_even_when_zero():
    g = Rig(4)
    g.m.acc[0:4, 0] = [1, 2, 3, 4]     # 2x2 image, 1x1 windows: every pixel its own pooled pixel
    g("config_st", stride=1, acc_scale=ONE, pool_stride=1, pool_size=1, orows=2, ocols=2, porows=2, pocols=2,
      pool_out_dim=0)
    g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=4, cols=1)
    assert g.get(0, 1, 2, np.int8).tolist() == [[3, 4]]      # row pr at pr*0: row 1 overwrote row 0


def test_model_pooling_faults():
    g = Rig(4)
    g("config_st", stride=4, acc_scale=ONE, pool_stride=1, pool_size=2, orows=2, ocols=2, porows=1, pocols=1,
      pool_out_dim=1)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT | READ_FULL_BIT, rows=1, cols=4)
    assert e.value.field == "local_addr" and "full width" in str(e.value)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=1, cols=8)    # pooled mvouts are one block
    assert e.value.field == "cols"
    g("config_st", stride=4, acc_scale=ONE, pool_stride=1, pool_size=0, orows=2, ocols=2, porows=1, pocols=1)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=1, cols=4)
    assert e.value.field == "pool_size"
    g("config_st", stride=4, acc_scale=ONE, pool_stride=0, pool_size=2, orows=2, ocols=2)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=1, cols=4)
    assert e.value.field == "pool_size" and "1-D mvout" in str(e.value)


def test_timing_pooled_mvout_reads_every_window_position():
    from baco.gemmini.config import GemminiConfig
    from baco.sim.timing import TimingModel
    tm = TimingModel(GemminiConfig())
    tm.observe("config_st", dict(stride=16, activation=0, acc_scale=ONE, pool_stride=2, pool_size=3, upad=1,
                                 lpad=1, pool_out_dim=4, porows=4, pocols=4, orows=8, ocols=8))
    tm.observe("mvout", dict(dram_addr=0x80000000, local_addr=ACC_BIT, rows=0, cols=16))
    tm.fence()
    r = tm.report()
    assert tm.waits["pool_cycles"] == 4 * 4 * 9 and r["accumulator_reads"] == 4 * 4 * 9 * 16
    assert r["dram_bytes_out"] == 4 * 4 * 16


# ---- the language form: bl.max_pool2d -> config_st pooling + pooled mvouts ----------------------
import baco  # noqa: E402
import baco.language as bl  # noqa: E402
from baco.errors import CompilationError  # noqa: E402
from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.kernels.pool import ConvPoolLaunch, reference_conv_pool  # noqa: E402

DIM4 = GemminiConfig.from_capacity(4, 16, 8)

# N, H, W, C, K, pool, stride, padding, bias, relu, DIM, blocks (PR, BLOCK_N, BLOCK_K) or None (default)
SHAPES = [
    (1, 6, 5, 8, 4, 2, 2, 0, False, True, 16, None),
    (2, 7, 9, 17, 20, 3, 2, 1, True, True, 16, None),
    (1, 8, 8, 33, 17, 2, 2, 0, True, True, 16, (2, 16, 32)),
    (1, 9, 7, 5, 3, 3, 2, 1, False, True, 4, (2, 4, 4)),
    (1, 5, 5, 16, 33, 3, 1, 1, True, True, 16, (1, 16, 16)),
    (1, 4, 4, 3, 40, 2, 2, 0, False, True, 16, (1, 32, 16)),     # 4 pixels: one row tile, two column tiles
    (1, 11, 13, 7, 9, 3, 3, 0, True, False, 16, None),
    (1, 1, 1, 1, 1, 1, 1, 0, False, True, 16, None),
    (1, 17, 3, 65, 18, 2, 1, 1, True, True, 16, (3, 16, 64)),
    (3, 6, 10, 9, 5, 2, 2, 1, False, True, 4, None),
    (1, 33, 1, 2, 2, 3, 2, 1, True, True, 4, None),
    (1, 1, 33, 4, 7, 3, 3, 2, False, True, 16, None),
    (2, 12, 12, 3, 16, 3, 2, 1, True, True, 16, None),
    (1, 14, 14, 33, 17, 2, 2, 0, False, True, 16, None),
    (1, 65, 2, 1, 3, 2, 2, 0, True, True, 4, (5, 4, 4)),
    (1, 10, 10, 20, 12, 3, 1, 0, False, True, 4, (4, 4, 8)),
    (1, 7, 7, 64, 16, 3, 3, 3, True, True, 16, None),
    (1, 3, 17, 17, 1, 2, 1, 0, False, False, 16, None),
    (2, 5, 6, 12, 24, 1, 1, 0, True, True, 4, None),
    (1, 20, 9, 9, 9, 3, 2, 0, False, True, 16, (3, 16, 16)),
    (1, 16, 16, 16, 32, 2, 2, 0, True, True, 16, (4, 16, 16)),
    (1, 9, 11, 3, 5, 2, 1, 1, True, False, 4, (3, 4, 4)),
    (1, 9, 7, 20, 70, 3, 2, 1, True, True, 16, (2, 48, 16)),      # 3 column tiles of 3 row tiles each
    (2, 5, 6, 33, 40, 2, 1, 1, True, True, 4, (3, 12, 8)),
]
FAST = [0, 1, 3, 5, 9, 22]


def run_shape(case, target):
    N, H, W, C, K, pool, stride, pad, bias, relu, dim, blocks = case
    rng = np.random.default_rng(H * 100 + W * 10 + C)
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (C, K), dtype=np.int8)
    b = rng.integers(-3000, 3000, K).astype(np.int32) if bias else None
    launch = ConvPoolLaunch(x, w, b, pool=pool, stride=stride, padding=pad, scale=1 / 32, relu=relu,
                            config=GemminiConfig() if dim == 16 else DIM4, blocks=blocks)
    launch.run(target)
    ref = reference_conv_pool(x, w, b, pool=pool, stride=stride, padding=pad, scale=1 / 32, relu=relu)
    assert launch.y.shape == ref.shape and (launch.y == ref).all()
    return launch


@pytest.mark.parametrize("i", FAST)
def test_conv_pool_kernel_bit_exact_on_sim(i):
    run_shape(SHAPES[i], "sim")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["sim", "iss"])
@pytest.mark.parametrize("i", range(len(SHAPES)))
def test_conv_pool_kernel_bit_exact_sweep(i, target):
    run_shape(SHAPES[i], target)


# N, H, W, C, K, R, conv stride, conv padding, dilation, pool, pool stride, pool padding, bias, DIM, blocks
CONV_SHAPES = [
    (1, 9, 8, 5, 7, 3, 1, 1, 1, 3, 2, 1, True, 16, None),
    (2, 12, 11, 17, 20, 3, 2, 1, 1, 2, 2, 0, True, 16, None),
    (1, 10, 10, 4, 6, 3, 1, 2, 2, 3, 1, 1, False, 16, (3, 16, 16)),
    (1, 20, 20, 3, 16, 7, 2, 3, 1, 3, 2, 1, True, 16, None),
    (1, 9, 13, 33, 9, 3, 1, 1, 1, 2, 2, 0, True, 4, None),
    (1, 16, 15, 8, 40, 5, 1, 2, 1, 3, 2, 1, False, 16, (2, 32, 16)),
    (1, 7, 7, 16, 16, 3, 1, 0, 1, 2, 1, 0, True, 16, None),
    (2, 11, 9, 6, 5, 3, 2, 0, 1, 3, 3, 0, True, 4, (1, 4, 4)),
]


def run_conv_shape(case, target):
    N, H, W, C, K, R, cs, cp, dil, pool, stride, pad, bias, dim, blocks = case
    rng = np.random.default_rng(H * 100 + W * 10 + C + R)
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    b = rng.integers(-3000, 3000, K).astype(np.int32) if bias else None
    kw = dict(pool=pool, stride=stride, padding=pad, conv_stride=cs, conv_padding=cp, dilation=dil, scale=1 / 64,
              relu=True)
    launch = ConvPoolLaunch(x, w, b, config=GemminiConfig() if dim == 16 else DIM4, blocks=blocks, **kw)
    launch.run(target)
    ref = reference_conv_pool(x, w, b, **kw)
    assert launch.kernel.__name__ == "conv2d_pool_kernel"
    assert launch.y.shape == ref.shape and (launch.y == ref).all()


@pytest.mark.parametrize("i", [0, 1, 4])
def test_conv2d_pool_kernel_bit_exact_on_sim(i):
    run_conv_shape(CONV_SHAPES[i], "sim")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["sim", "iss"])
@pytest.mark.parametrize("i", range(len(CONV_SHAPES)))
def test_conv2d_pool_kernel_bit_exact_sweep(i, target):
    run_conv_shape(CONV_SHAPES[i], target)


def test_pooled_store_is_one_config_st_and_pooled_mvouts():
    """2 column tiles of 16 channels over a 6x5 image pooled 2x2/2: config_st carries the pool
    fields, one mvout per column tile writes the 3x2 pooled pixels; no unpooled mvout."""
    from baco.sim.timing import CommandStream
    launch = ConvPoolLaunch(np.ones((1, 6, 5, 8), np.int8), np.ones((8, 32), np.int8), None, pool=2, stride=2,
                            padding=0, scale=1.0, relu=True, config=GemminiConfig(), blocks=(3, 16, 16))
    from baco.kernels.pool import conv_pool_kernel
    ck = conv_pool_kernel.compile(*launch.args, target="sim", **launch.options)
    seen = []
    ck.run(launch.grid, launch.runtime_args(), model=CommandStream(), observers=[lambda n, f, pc=None: seen.append((n, f))])
    pooled = [f for n, f in seen if n == "config_st" and f["pool_stride"]]
    assert len(pooled) == 2 and all(f["pool_size"] == 2 and f["porows"] == 3 and f["pocols"] == 2 and
                                    f["orows"] == 6 and f["ocols"] == 5 and f["pool_out_dim"] == 2 for f in pooled)
    assert sum(n == "mvout" for n, _ in seen) == 2


def test_wide_pooled_block_is_stored_column_of_tiles_after_column():
    """BLOCK_N = 3*DIM over 3 row tiles (35 pixels): each column tile's rows are consecutive, so
    each pooled mvout reads its whole image from one column."""
    from baco.passes.pipeline import run_pipeline
    from baco.kernels.pool import conv_pool_kernel
    launch = run_shape(SHAPES[22], "sim")
    params, _, _ = conv_pool_kernel.specialize(dict(zip(
        ["x_ptr", "w_ptr", "y_ptr", "H", "W", "C", "K", "PH", "scale"], launch.args), **launch.options))
    placed = run_pipeline(conv_pool_kernel.baco_ir(params), until="gemmini-placement").stage_ir["gemmini-placement"]
    acc = next(line for line in placed.splitlines() if 'gemmini.space = "acc"' in line)
    assert "gemmini.col_tile_stride = 48" in acc and "gemmini.row_tile_stride = 16" in acc


def test_interpreter_agrees(monkeypatch):
    for i in (1, 3):
        compiled = run_shape(SHAPES[i], "sim").y.copy()
        monkeypatch.setenv("BACO_INTERPRET", "1")
        interpreted = run_shape(SHAPES[i], "sim").y
        monkeypatch.delenv("BACO_INTERPRET")
        assert (compiled == interpreted).all()


@baco.jit
def pool_kernel(a_ptr, y_ptr, IMAGE: bl.constexpr, POOL: bl.constexpr, STRIDE: bl.constexpr,
                PAD: bl.constexpr, M: bl.constexpr, N: bl.constexpr, PM: bl.constexpr, HOW: bl.constexpr):
    a = bl.load(bl.make_block_ptr(a_ptr, shape=(M, 16), strides=(16, 1), offsets=(0, 0), block_shape=(M, 16)))
    b = bl.load(bl.make_block_ptr(a_ptr, shape=(16, N), strides=(N, 1), offsets=(0, 0), block_shape=(16, N)))
    acc = bl.dot(a, b)
    y = bl.make_block_ptr(y_ptr, shape=(PM, N), strides=(N, 1), offsets=(0, 0), block_shape=(PM, N))
    if HOW == "int32":
        bl.store(y, bl.max_pool2d(acc, IMAGE, POOL, STRIDE, PAD))
    elif HOW == "loaded":
        bl.store(y, bl.max_pool2d(a, IMAGE, POOL, STRIDE, PAD))
    elif HOW == "dot":
        bl.store(y, bl.dot(bl.max_pool2d(acc.to(bl.int8), IMAGE, POOL, STRIDE, PAD), b).to(bl.int8))
    else:
        bl.store(y, bl.max_pool2d(acc.to(bl.int8), IMAGE, POOL, STRIDE, PAD))


@pytest.mark.parametrize("how,image,pool,stride,pad,m,n,pm,fragment", [
    ("int32", (4, 4), 2, 2, 0, 16, 16, 4, "pools int8 pixels"),
    ("int8", (4, 5), 2, 2, 0, 16, 16, 4, "image 4x5 is 20 pixels but the block has 16 rows"),
    ("int8", (4, 4), 4, 2, 0, 16, 16, 4, "kernel 4 is outside 1..3 (config_st's 2-bit pool_size field)"),
    ("int8", (4, 4), 2, 2, 4, 16, 16, 16, "padding (rows) 4 is outside 0..3"),
    ("int8", (1, 300), 1, 1, 0, 300, 16, 300, "image columns 300 is outside 1..255"),
    ("loaded", (4, 4), 2, 2, 0, 16, 16, 4, "not read out of the accumulator"),
    ("dot", (4, 4), 2, 2, 0, 16, 16, 4, "a pooled block can only be stored"),
])
def test_located_errors(how, image, pool, stride, pad, m, n, pm, fragment):
    with pytest.raises(CompilationError) as e:
        pool_kernel.compile(np.zeros(4096, np.int8), np.zeros(4096, np.int8), IMAGE=image, POOL=pool, STRIDE=stride,
                            PAD=pad, M=m, N=n, PM=pm, HOW=how)
    assert fragment in str(e.value)
    assert e.value.line is not None and "bl.max_pool2d(" in str(e.value)     # the call, with a caret


def test_example_cli(capsys):
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("conv_pool_example",
                                                  Path(__file__).parents[1] / "examples" / "conv_pool.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    assert ex.main(["--H", "7", "--W", "6", "--C", "9", "--K", "5", "--pool", "3", "--pool-stride", "2",
                    "--pool-padding", "1", "--bias"]) == 0
    assert ex.main(["--H", "9", "--W", "8", "--C", "5", "--K", "7", "--R", "3", "--S", "3", "--padding", "1",
                    "--pool", "3", "--pool-stride", "2", "--pool-padding", "1"]) == 0
    assert "bit-exact" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        ex.main(["--pool", "4"])
    assert "pool_size" in capsys.readouterr().err


@baco.jit
def store_both_kernel(a_ptr, b_ptr, y_ptr, p_ptr, scale, M: bl.constexpr, K: bl.constexpr, N: bl.constexpr,
                      ROWS: bl.constexpr, COLS: bl.constexpr, PM: bl.constexpr, FIRST: bl.constexpr):
    a = bl.load(bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(M, K)))
    b = bl.load(bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, 0), block_shape=(K, N)))
    out = bl.relu(bl.dot(a, b) * scale).to(bl.int8)
    y = bl.make_block_ptr(y_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(M, N))
    p = bl.make_block_ptr(p_ptr, shape=(PM, N), strides=(N, 1), offsets=(0, 0), block_shape=(PM, N))
    if FIRST == "pooled":
        bl.store(p, bl.max_pool2d(out, (ROWS, COLS), 3, 2, 1))
        bl.store(y, out)
    else:
        bl.store(y, out)
        bl.store(p, bl.max_pool2d(out, (ROWS, COLS), 3, 2, 1))


@pytest.mark.parametrize("first", ["pooled", "plain"])
@pytest.mark.parametrize("target", ["sim", pytest.param("iss", marks=pytest.mark.slow)])
def test_one_accumulator_stored_plain_and_pooled(first, target):
    """The conv output and its pool from one accumulator: two config_st (pooling on, then off
    or the reverse) that config elimination must both keep."""
    rng = np.random.default_rng(7)
    rows, cols, K, N = 5, 7, 24, 40
    a, b = rng.integers(-128, 128, (rows * cols, K), dtype=np.int8), rng.integers(-128, 128, (K, N), dtype=np.int8)
    y, p = np.zeros((rows * cols, N), np.int8), np.zeros((12, N), np.int8)    # 3x4 pooled pixels
    store_both_kernel[(1,)](a, b, y, p, 0.01, M=rows * cols, K=K, N=N, ROWS=rows, COLS=cols, PM=12, FIRST=first,
                            target=target)
    pix = acc_to_int8(a.astype(np.int64) @ b, 0.01, True)
    assert (y == pix).all()
    assert (p == max_pool(pix, rows, cols, 3, 2, 1, 1)).all()


# ---- the C library's pooled tiled_conv (baco.sim.clib.conv_stream with pooling) -----------------
@pytest.mark.parametrize("dim,shape,pool,sp_kb,acc_kb", [
    (16, (1, 9, 9, 17, 20, 3, 1, 1), (3, 2, 1), 256, 64),
    (16, (1, 14, 14, 33, 17, 1, 1, 0), (2, 2, 0), 8, 4),        # several pooled tiles per image
    (4, (2, 11, 7, 5, 9, 3, 2, 1), (3, 2, 1), 4, 2),
    (8, (1, 13, 10, 9, 12, 3, 1, 1), (2, 1, 0), 4, 2),
])
def test_library_pooled_conv_stream_is_bit_exact(dim, shape, pool, sp_kb, acc_kb):
    from baco.kernels.conv import reference_conv2d
    from baco.sim.clib import conv_stream
    from baco.sim.functional import ArrayMemory, GemminiModel
    N, H, W, C, K, R, stride, padding = shape
    size, pstride, ppad = pool
    cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    b = rng.integers(-3000, 3000, K).astype(np.int32)
    conv = reference_conv2d(x, w, b, stride=stride, padding=padding, scale=1 / 256, relu=True, config=cfg,
                            blocks=(dim, dim, dim))
    P, Q = conv.shape[1:3]
    ref = np.stack([max_pool(conv[n].reshape(P * Q, K), P, Q, size, pstride, ppad, ppad)
                    .reshape((P + 2 * ppad - size) // pstride + 1, -1, K) for n in range(N)])
    base = 0x80000000
    mem = ArrayMemory(base, 1 << 22)
    addrs = (base, base + 0x100000, base + 0x200000, base + 0x300000)
    mem.write(addrs[0], x.tobytes())
    mem.write(addrs[1], w.tobytes())
    mem.write(addrs[3], b.tobytes())
    model = GemminiModel(cfg, mem)
    from baco.gemmini.isa import COMMANDS as CMDS, encode as enc
    from baco.sim.clib import expanded
    issued = list(conv_stream(N, H, W, C, K, R, cfg, stride=stride, padding=padding, scale=1 / 256, relu=True,
                              bias=True, pool_size=size, pool_stride=pstride, pool_padding=ppad, addrs=addrs))
    for name, fields in issued:
        model.execute(CMDS[name].funct, *enc(name, **fields))
    got = np.frombuffer(mem.read(addrs[2], ref.size), dtype=np.int8).reshape(ref.shape)
    np.testing.assert_array_equal(got, ref)
    # LoopConv's store FSM pools: its config_st with the pooling fields
    assert any(name == "config_st" and fields["pool_stride"] for name, fields in expanded(issued, cfg))


@baco.jit
def valid_rows_kernel(a_ptr, b_ptr, p_ptr, lo, hi, M: bl.constexpr, K: bl.constexpr, N: bl.constexpr,
                      ROWS: bl.constexpr, COLS: bl.constexpr, PM: bl.constexpr, POOL: bl.constexpr,
                      STRIDE: bl.constexpr, PAD: bl.constexpr):
    a = bl.load(bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(M, K)))
    b = bl.load(bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, 0), block_shape=(K, N)))
    out = bl.dot(a, b).to(bl.int8)          # no ReLU: negative pixels, so the padding's 0 shows
    p = bl.make_block_ptr(p_ptr, shape=(PM, N), strides=(N, 1), offsets=(0, 0), block_shape=(PM, N))
    bl.store(p, bl.max_pool2d(out, (ROWS, COLS), POOL, STRIDE, PAD, valid_rows=(lo, hi)))


# cases with pad + lo <= 3: config_st's 2-bit upad holds the padding plus the skipped rows
@pytest.mark.parametrize("lo,hi,pool,stride,pad", [(0, 6, 3, 2, 1), (1, 6, 3, 2, 1), (2, 4, 2, 1, 1), (3, 6, 3, 1, 0),
                                                   (0, 0, 2, 2, 0), (1, 5, 2, 2, 0)])
@pytest.mark.parametrize("target", ["sim", pytest.param("iss", marks=pytest.mark.slow)])
def test_valid_rows_are_pooling_padding(monkeypatch, lo, hi, pool, stride, pad, target):
    """Rows outside valid_rows=(lo, hi) (runtime) count as 0 whatever the accumulator holds."""
    rng = np.random.default_rng(lo * 10 + hi)
    rows, cols, K, N = 6, 5, 16, 20
    pr, pc = (rows + 2 * pad - pool) // stride + 1, (cols + 2 * pad - pool) // stride + 1
    a, b = rng.integers(-128, 128, (rows * cols, K), dtype=np.int8), rng.integers(-128, 128, (K, N), dtype=np.int8)
    pix = acc_to_int8(a.astype(np.int64) @ b, 1.0, False).astype(np.int64)
    pix[:lo * cols] = 0
    pix[hi * cols:] = 0
    ref = max_pool(pix.astype(np.int8), rows, cols, pool, stride, pad, pad)
    for interpret in (False, True):
        if interpret:
            monkeypatch.setenv("BACO_INTERPRET", "1")
        p = np.zeros((pr * pc, N), np.int8)
        valid_rows_kernel[(1,)](a, b, p, lo, hi, M=rows * cols, K=K, N=N, ROWS=rows, COLS=cols, PM=pr * pc,
                                POOL=pool, STRIDE=stride, PAD=pad, target=target)
        assert (p == ref).all(), interpret
        monkeypatch.delenv("BACO_INTERPRET", raising=False)


@pytest.mark.parametrize("valid,fragment", [((3, 4), "must be 0..3"), ((0, 5), "outside the image's 0..4"),
                                            ((1.5, 2), "must be an integer scalar")])
def test_valid_rows_errors(valid, fragment):
    @baco.jit
    def k(a_ptr, y_ptr, LO: bl.constexpr, HI: bl.constexpr):
        a = bl.load(bl.make_block_ptr(a_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), block_shape=(16, 16)))
        acc = bl.dot(a, a)
        y = bl.make_block_ptr(y_ptr, shape=(4, 16), strides=(16, 1), offsets=(0, 0), block_shape=(4, 16))
        bl.store(y, bl.max_pool2d(acc.to(bl.int8), (4, 4), 2, 2, 1, valid_rows=(LO, HI)))
    with pytest.raises(CompilationError) as e:
        k.compile(np.zeros(256, np.int8), np.zeros(64, np.int8), LO=valid[0], HI=valid[1])
    assert fragment in str(e.value) and "valid_rows" in str(e.value)
