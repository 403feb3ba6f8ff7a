"""The loop-conv-ws pass (baco.passes.loop_conv_ws): convolution programs as one LOOP_CONV_WS
each, bit-exact against the Gemmini arithmetic reference on sim and iss; the programs it must
leave explicit; the CLI pass on a text IR; its switch."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.gemmini.config import GemminiConfig
from baco.kernels.conv import conv2d_launch, reference_conv2d
from baco.kernels.depthwise import depthwise_launch, reference_depthwise_conv2d

DIM16 = GemminiConfig()
DIM4 = GemminiConfig.from_capacity(4, 16, 8)

# (N, H, W, C, K, R, S, stride, padding, dilation, (BM, BN, BK, rows), bias, config)
CASES = [
    (1, 8, 11, 17, 33, 3, 3, 2, 1, 1, (8, 32, 16, 1), True, DIM16),
    (1, 8, 11, 17, 33, 3, 3, 1, 1, 1, (8, 32, 16, 1), False, DIM16),
    (2, 9, 9, 3, 17, 3, 3, 1, 1, 1, (9, 16, 16, 3), True, DIM16),           # rows > 1, ragged last program
    (1, 12, 12, 1, 1, 3, 3, 1, 0, 1, (10, 16, 16, 1), False, DIM16),         # C = K = 1
    (1, 10, 10, 65, 33, 3, 3, 1, 1, 1, (10, 32, 32, 2), True, DIM16),
    (1, 14, 14, 33, 65, 3, 3, 2, 1, 1, (7, 64, 32, 1), False, DIM16),        # stride 2
    (1, 14, 14, 33, 65, 3, 3, 2, 1, 1, (7, 64, 32, 3), True, DIM16),         # stride 2, rows > 1
    (1, 9, 9, 17, 17, 3, 3, 1, 2, 2, (9, 32, 16, 1), True, DIM16),           # dilation 2
    (1, 11, 11, 17, 17, 3, 3, 1, 2, 2, (11, 16, 16, 2), False, DIM16),       # dilation 2, rows > 1
    (1, 16, 16, 3, 16, 7, 7, 2, 3, 1, (8, 16, 16, 1), True, DIM16),          # 7x7 stride 2 (a ResNet stem)
    (1, 16, 16, 3, 16, 7, 7, 2, 3, 1, (8, 16, 16, 4), False, DIM16),
    (1, 13, 13, 17, 33, 1, 1, 2, 0, 1, (7, 48, 32, 1), True, DIM16),         # 1x1 stride 2
    (1, 13, 13, 17, 33, 1, 1, 2, 0, 1, (7, 48, 32, 3), False, DIM16),
    (1, 6, 6, 16, 16, 1, 1, 1, 1, 1, (8, 16, 16, 1), True, DIM16),           # 1x1 padded
    (1, 7, 7, 64, 64, 3, 3, 1, 1, 1, (7, 64, 64, 7), True, DIM16),           # one program per image
    (1, 5, 17, 17, 5, 3, 5, 1, 2, 1, (16, 16, 16, 1), False, DIM16),         # R != S, ragged columns
    (2, 6, 6, 5, 3, 2, 2, 2, 1, 1, (4, 16, 16, 2), True, DIM16),           # 2x2 filter
    (1, 20, 20, 8, 8, 3, 3, 3, 1, 1, (7, 16, 16, 1), False, DIM16),          # stride 3
    (1, 8, 8, 48, 40, 3, 3, 1, 1, 1, (8, 48, 16, 1), True, DIM16),           # three channel blocks
    (1, 8, 8, 17, 9, 3, 3, 1, 1, 1, (8, 8, 8, 1), True, DIM4),
    (1, 9, 9, 6, 7, 3, 3, 2, 1, 1, (5, 8, 4, 2), False, DIM4),
    (1, 10, 10, 5, 5, 5, 5, 1, 2, 1, (10, 4, 4, 1), True, DIM4),
    # few channels: several filter columns' pixels packed into one array row (max_pixels_per_row)
    (1, 15, 13, 2, 20, 5, 5, 3, 2, 1, (5, 32, 16, 1), True, DIM16),          # C = 2, stride 3, odd sizes
    (1, 11, 9, 5, 17, 3, 3, 2, 1, 1, (5, 32, 16, 2), False, DIM16),          # C = 5, stride 2, rows > 1
    (1, 7, 9, 1, 3, 7, 7, 1, 3, 1, (9, 16, 16, 3), True, DIM16),             # C = 1, 7x7: 7 pixels a row
    (1, 9, 7, 2, 5, 3, 3, 2, 1, 1, (4, 4, 4, 1), True, DIM4),                # C = 2 at DIM 4: 2 pixels
]


def case_id(c):
    N, H, W, C, K, R, S, st, pad, dil, (bm, bn, bk, rows), bias, cfg = c
    return (f"n{N}h{H}w{W}c{C}k{K}-{R}x{S}-s{st}p{pad}d{dil}-b{bm}x{bn}x{bk}r{rows}{'-bias' if bias else ''}"
            f"-dim{cfg.dim}")


def launch(case, relu=True, seed=0):
    N, H, W, C, K, R, S, st, pad, dil, (bm, bn, bk, rows), bias, cfg = case
    rng = np.random.default_rng(seed + H * 7 + C * 13 + K)
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, S, C, K), dtype=np.int8)
    b = rng.integers(-5000, 5000, K).astype(np.int32) if bias else None
    kw = dict(stride=st, padding=pad, dilation=dil, scale=1 / 64, relu=relu)
    launch = conv2d_launch(x, w, b, config=cfg, blocks=(bm, bn, bk, "WS", False, rows), **kw)
    return launch, reference_conv2d(x, w, b, **kw)


def programs_with_taps(case, grid) -> int:
    """Programs whose tap loop runs (an output row block entirely in the padding has none: it
    stores the bias, explicitly)."""
    N, H, W, C, K, R, S, st, pad, dil, (bm, bn, bk, rows), bias, cfg = case
    groups = grid[0] // N
    count = 0
    for g in range(groups):
        h0 = g * rows * st - pad
        r_lo, r_hi = max(0, -((h0 + (rows - 1) * st) // dil)), min(R, -(-(H - h0) // dil))
        count += r_lo < r_hi
    return count * N * grid[1] * grid[2]


def loops_run(info, target) -> int:
    """LOOP_CONV_WS commands the program issued."""
    stats = info["model"].stats if target == "sim" else info["result"].stats
    return stats.get("loop_conv_ws", 0)


FAST = (0, 2, 6, 8, 11, 20, 22, 23)     # stride, rows > 1, dilation, 1x1 stride 2, DIM 4, packed pixels:
                                        # the rest under -m slow


@pytest.mark.parametrize("case", [c if i in FAST else pytest.param(c, marks=pytest.mark.slow)
                                  for i, c in enumerate(CASES)], ids=case_id)
def test_loop_conv_ws_bit_exact_on_sim_and_iss(case):
    lc, ref = launch(case)
    programs = programs_with_taps(case, lc.grid)
    info = lc.run("sim")
    assert loops_run(info, "sim") == programs       # every program is one LOOP_CONV_WS
    np.testing.assert_array_equal(lc.y, ref)
    lc.y[...] = 0
    info = lc.run("iss")
    assert loops_run(info, "iss") == programs
    np.testing.assert_array_equal(lc.y, ref)
    lc.y[...] = 0
    lc.options["loop_ws"] = False                    # the explicit stream: same output, more commands
    off = lc.run("sim")
    assert loops_run(off, "sim") == 0
    np.testing.assert_array_equal(lc.y, ref)
    assert info["commands"] < off["commands"]


def packed_pixels(case) -> int:
    """Filter columns per array row the C library's rule gives (tiled_conv's max_pixels_per_row)."""
    N, H, W, C, K, R, S, st, pad, dil, blocks, bias, cfg = case
    return min(cfg.dim // C, S) if 2 * C <= cfg.dim and dil == 1 else 1


@pytest.mark.parametrize("case", [c for c in CASES if packed_pixels(c) > 1], ids=case_id)
def test_small_channel_convs_pack_pixels(case):
    """A LOOP_CONV_WS of at most DIM/2 channels (and no dilation) packs min(DIM // C, S) filter
    columns' pixels into each array row: its input loads repeat pixels (config_ld pixel_repeats)
    and each compute multiplies that many taps at once; bit-exact on sim (and on the ISS: the test
    above)."""
    lc, ref = launch(case)
    repeats = []

    def observe(name, f, pc=None):
        if name == "config_ld" and f["state_id"] == 0:
            repeats.append(f["pixel_repeats"])
    ck = lc.kernel.compile(*lc.args, target="sim", **lc.options)
    info = ck.run(lc.grid, lc.runtime_args(), observers=[observe])
    assert loops_run(info, "sim") == programs_with_taps(case, lc.grid)
    np.testing.assert_array_equal(lc.y, ref)
    assert max(repeats) == packed_pixels(case)


def test_loop_conv_ws_without_relu_and_env_switch(monkeypatch):
    lc, ref = launch(CASES[0], relu=False)
    assert loops_run(lc.run("sim"), "sim") > 0
    np.testing.assert_array_equal(lc.y, ref)
    monkeypatch.setenv("BACO_LOOP_WS", "0")
    lc2, ref2 = launch(CASES[0], relu=False, seed=1)
    assert loops_run(lc2.run("sim"), "sim") == 0
    np.testing.assert_array_equal(lc2.y, ref2)


def test_fallback_when_the_tile_does_not_fit():
    """A tile whose weights for even DIM input channels overflow LoopConv's half scratchpad (7x7
    taps x 64 output channels at DIM 4: 3,136 rows of 2,048): the run-time guard keeps the explicit
    program, bit-exact."""
    case = (1, 14, 14, 8, 64, 7, 7, 1, 0, 1, (8, 64, 4, 1), True, DIM4)
    lc, ref = launch(case)
    info = lc.run("sim")
    assert loops_run(info, "sim") == 0
    np.testing.assert_array_equal(lc.y, ref)
    assert "@baco.rocc.loop_conv_ws(" in info["kernel"].llvm_ir     # rewritten, guarded at run time


def channel_split_loops(case) -> int:
    """LOOP_CONV_WS a run issues: per program whose tap loop runs, one per input channel block of
    its tile (schedule.loop_conv_channel_block on the program's tap rows, output rows, columns and
    channels, as the pass computes it at run time)."""
    from baco.gemmini.schedule import loop_conv_channel_block
    N, H, W, C, K, R, S, st, pad, dil, (bm, bn, bk, rows), bias, cfg = case
    P, Q = ((n + 2 * pad - dil * (k - 1) - 1) // st + 1 for n, k in ((H, R), (W, S)))
    loops = 0
    for p0 in range(0, P, rows):
        h0 = p0 * st - pad
        krows = min(R, -(-(H - h0) // dil)) - max(0, -((h0 + (rows - 1) * st) // dil))
        if krows < 1:
            continue
        orows = min(rows, P - p0)
        for q0 in range(0, Q, bm):
            ocols = bm if rows > 1 else min(bm, Q - q0)
            for k0 in range(0, K, bn):
                banks = -(-min(bn, K - k0) // cfg.dim)
                kc = loop_conv_channel_block(C, orows * st + dil * (krows - 1), ocols * st + dil * (S - 1), krows,
                                             S, banks, cfg)
                loops += -(-C // kc)
    return N * loops


SMALL16 = GemminiConfig.from_capacity(16, 32, 16)       # 1,024 scratchpad rows a loop
SMALL32 = GemminiConfig.from_capacity(32, 64, 32)
DIM32 = GemminiConfig.from_capacity(32, 256, 64)
# input channels in several LOOP_CONV_WS a program (the tile's weights overflow LoopConv's half)
SPLIT = [
    (1, 6, 16, 17, 32, 5, 5, 1, 2, 1, (16, 32, 16, 1), True, SMALL16),         # C = 17: 16 + 1
    (1, 7, 16, 33, 32, 5, 5, 1, 2, 1, (16, 32, 32, 1), False, SMALL32),        # C = 33 at DIM 32: 32 + 1
    (1, 7, 7, 520, 32, 3, 3, 1, 1, 1, (7, 32, 16, 7), True, DIM16),             # 272 + 248, one program
    (1, 9, 9, 520, 40, 3, 3, 2, 1, 1, (5, 48, 16, 1), False, DIM16),            # stride 2, ragged K
    (1, 11, 11, 400, 17, 3, 3, 1, 2, 2, (11, 32, 16, 2), True, DIM16),          # dilation 2, rows > 1
    (1, 7, 7, 520, 64, 3, 3, 1, 1, 1, (7, 64, 32, 7), True, DIM32),             # 192 + 192 + 136
    (2, 10, 9, 100, 40, 3, 3, 2, 1, 1, (5, 48, 16, 3), True, SMALL16),          # 2 images, stride 2, rows > 1
]


@pytest.mark.parametrize("case", [c if i in (0, 1, 5) else pytest.param(c, marks=pytest.mark.slow)
                                  for i, c in enumerate(SPLIT)], ids=case_id)
def test_input_channels_split_across_loop_conv_ws(case):
    """A program whose input channels do not fit LoopConv's half scratchpad at once runs as one
    LOOP_CONV_WS per channel block (the first loading the bias, the rest accumulating, the last
    storing), the blocks schedule.loop_conv_channel_block gives; bit-exact on sim and the ISS."""
    lc, ref = launch(case)
    loops = channel_split_loops(case)
    assert loops > programs_with_taps(case, lc.grid)        # some program is split
    for target in ("sim", "iss"):
        lc.y[...] = 0
        assert loops_run(lc.run(target), target) == loops
        np.testing.assert_array_equal(lc.y, ref)


# 1x1 stride-2 convolutions, which LoopConv runs downsampled (schedule.loop_conv_downsamples): ragged
# channels, odd and even images, one and several rows a program
DOWNSAMPLED = [
    (1, 7, 7, 17, 33, 1, 1, 2, 0, 1, (4, 48, 32, 4), True, DIM16),       # odd image: right padding 1 left out
    (1, 13, 13, 33, 17, 1, 1, 2, 0, 1, (7, 32, 32, 2), False, DIM16),    # a last program past P
    (1, 15, 15, 100, 33, 1, 1, 2, 0, 1, (4, 48, 32, 1), True, DIM16),    # one row, two column blocks
    (1, 28, 28, 100, 100, 1, 1, 2, 0, 1, (14, 64, 32, 5), True, DIM16),
    (2, 13, 15, 33, 17, 1, 1, 2, 0, 1, (8, 32, 32, 3), True, DIM32),     # two images, H != W
]


def input_load_strides(lc) -> set:
    """DRAM strides (bytes) of the input loads (config_ld state 0) of a sim run of `lc`."""
    strides = set()

    def observe(name, f, pc=None):
        if name == "config_ld" and f["state_id"] == 0:
            strides.add(f["stride"])
    ck = lc.kernel.compile(*lc.args, target="sim", **lc.options)
    ck.run(lc.grid, lc.runtime_args(), observers=[observe])
    return strides


@pytest.mark.parametrize("case", [c if i in (0, 2) else pytest.param(c, marks=pytest.mark.slow)
                                  for i, c in enumerate(DOWNSAMPLED)], ids=case_id)
def test_strided_pointwise_convs_downsample(case):
    """A 1x1 stride-2 program is one LOOP_CONV_WS with the downsample flag: its input loads move
    every other pixel (a DRAM stride of two pixels), bit-exact on sim and the ISS."""
    lc, ref = launch(case)
    C = case[3]
    assert input_load_strides(lc) == {2 * C}
    np.testing.assert_array_equal(lc.y, ref)
    for target in ("sim", "iss"):
        lc.y[...] = 0
        assert loops_run(lc.run(target), target) == programs_with_taps(case, lc.grid)
        np.testing.assert_array_equal(lc.y, ref)


def test_padded_strided_pointwise_conv_edges_run_explicit():
    """A padded 1x1 stride-2 conv: the programs whose tile is padded on the left or above (which
    LoopConv's downsampling loader cannot fill) run the explicit stream, the others downsampled
    LOOP_CONV_WS; bit-exact."""
    case = (1, 9, 9, 17, 20, 1, 1, 2, 1, 1, (2, 32, 16, 1), True, DIM16)
    lc, ref = launch(case)
    info = lc.run("sim")
    np.testing.assert_array_equal(lc.y, ref)
    assert 0 < loops_run(info, "sim") < programs_with_taps(case, lc.grid)


# 9x9 260 -> 600 with -m slow: 7x7 520 -> 600 (sim and ISS) runs LoopConv's pointwise default
@pytest.mark.parametrize("shape,loop_conv", [((1, 7, 7, 520, 600), True),
                                              pytest.param((1, 9, 9, 260, 600), True, marks=pytest.mark.slow),
                                              ((1, 14, 14, 256, 256), False),
                                              ((2, 9, 9, 260, 600), False), ((1, 13, 13, 33, 100), False)])
def test_pointwise_default_runs_loop_conv_where_estimated_faster(shape, loop_conv):
    """A 1x1 stride-1 conv under the default schedule runs LOOP_CONV_WS programs where
    schedule.pointwise_loop_conv_schedule estimates them faster than the GEMM of all pixels, else
    the GEMM kernel; bit-exact on sim (and the ISS for the first). The layers have a bias, which
    both estimates price (14x14 256->256 at DIM 16: with the GEMM's blocks chosen without it, 32/256/32,
    64,021 cycles end to end on the ISS, LoopConv's 57,740 won; chosen with it, 16/64/256, 57,415)."""
    from baco.gemmini.schedule import pointwise_loop_conv_schedule
    from baco.kernels.matmul import matmul_kernel
    N, H, W, C, K = shape
    rng = np.random.default_rng(H + C + K)
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (1, 1, C, K), dtype=np.int8)
    b = rng.integers(-5000, 5000, K).astype(np.int32)
    kw = dict(scale=1 / 512, relu=True)
    lc = conv2d_launch(x, w, b, **kw)
    ref = reference_conv2d(x, w, b, **kw)
    assert (pointwise_loop_conv_schedule(N, H, W, K, C, lc.config, bias=True) is not None) == loop_conv
    assert (lc.kernel is not matmul_kernel) == loop_conv
    for target in ("sim", "iss") if shape == (1, 7, 7, 520, 600) else ("sim",):
        lc.y[...] = 0
        info = lc.run(target)
        assert (loops_run(info, target) > 0) == loop_conv
        np.testing.assert_array_equal(lc.y, ref)


def test_a_pointwise_default_gemm_is_chosen_with_the_bias():
    """A 1x1 conv the GEMM kernel runs (LoopConv not estimated faster) takes default_gemm_schedule's
    blocks with the bias its launch loads, as the tuner asks: MobileNetV2 224x224's 7x7 960->320
    layer at DIM 16 ran 32/320/16 (an explicit stream, 170,417 cycles end to end on the ISS against
    the C library's 89,699) and runs 32/32/160, one LOOP_WS a K step (81,207)."""
    from baco.gemmini.schedule import default_gemm_schedule, loop_ws_fits
    from baco.problem.layer import Layer
    from baco.tuner.mapping import default_layer_schedule
    x, w, b = np.zeros((1, 7, 7, 960), np.int8), np.zeros((1, 1, 960, 320), np.int8), np.zeros(320, np.int32)
    launch = conv2d_launch(x, w, b, scale=0.1, config=DIM16)
    s = launch.schedule
    assert s == default_gemm_schedule(49, 320, 960, DIM16, True, bias=True) != \
        default_gemm_schedule(49, 320, 960, DIM16, True)
    assert loop_ws_fits(s.block_m, s.block_n, s.block_k, DIM16)
    layer = Layer(R=1, S=1, P=7, Q=7, C=960, K=320, bias=True)
    assert default_layer_schedule(layer, DIM16, True) == s


def test_default_conv_schedule_ranks_its_programs_with_the_bias():
    """A conv with a bias ranks its LoopConv programs with their bias mvins (one int32 row a DIM
    pixels of an output row), which cost the candidates unalike: at DIM 32, 28x28 64->64 3x3 picks
    7 rows a program with a bias, 4 without; on the cycle model the bias-priced pick runs the
    layer with its bias faster than the other (34,825 vs 41,258 cycles when measured)."""
    from baco.gemmini.schedule import default_conv_schedule
    x, w, b = np.zeros((1, 28, 28, 64), np.int8), np.zeros((3, 3, 64, 64), np.int8), np.zeros(64, np.int32)
    with_bias = conv2d_launch(x, w, b, padding=1, scale=0.05, config=DIM32)
    loop_conv = dict(P=28, taps=9, filter_size=(3, 3), stride=1, dilation=1, padding=1, image=(28, 28))
    assert with_bias.schedule == default_conv_schedule(28, 64, 64, DIM32, True, bias=True, **loop_conv)
    blind = default_conv_schedule(28, 64, 64, DIM32, True, **loop_conv)
    assert conv2d_launch(x, w, padding=1, scale=0.05, config=DIM32).schedule == blind != with_bias.schedule
    other = conv2d_launch(x, w, b, padding=1, scale=0.05, config=DIM32, blocks=blind)
    assert with_bias.cycles()["cycles"] < other.cycles()["cycles"]


@pytest.mark.parametrize("size,C,K,stride,fastest,cycles", [(1, 3, 64, 1, 64, 336), (2, 3, 256, 2, 64, 1152)])
def test_default_conv_schedule_walks_the_padded_image(size, C, K, stride, fastest, cycles):
    """A 'same'-padded layer of one output row: the ranking walks the programs as the kernel runs
    them, only the tap rows inside the image (3x3 on a 1x1 image: one), and so picks the channel
    block measured fastest end to end on the ISS with the cycle model, programs compiled for their
    shapes (1x1 3->64 at DIM 16: 64 channels a program, 482 cycles against 32's 567; 2x2/2 3->256:
    64, 1,309 against 128's 1,411 and 256's 1,909; unspecialized 128 was fastest); the walk of the
    picked programs is within 5% of the cycle model's Gemmini cycles (336 and 1,152 cycles)."""
    from baco.gemmini.loop_conv_timing import loop_conv_stream_cycles, program_conv_tiles
    x, w = np.zeros((1, size, size, C), np.int8), np.zeros((3, 3, C, K), np.int8)
    launch = conv2d_launch(x, w, stride=stride, padding=1, scale=0.05, config=DIM16)
    s = launch.schedule
    assert (s.rows, s.block_m, s.block_n) == (1, 1, fastest)
    tiles = program_conv_tiles(1, 1, 1, K, C, 3, 3, stride, 1, 1, 1, fastest, padding=1, image=(size, size))
    assert launch.cycles()["cycles"] == cycles
    assert abs(loop_conv_stream_cycles(tiles, DIM16) / cycles - 1) < 0.05


def test_int32_output_stays_explicit():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 8, 8, 17), dtype=np.int8)
    w = rng.integers(-128, 128, (3, 3, 17, 9), dtype=np.int8)
    l32 = conv2d_launch(x, w, None, padding=1, out="int32", blocks=(8, 16, 16, "WS", False, 1))
    info = l32.run("sim")
    assert loops_run(info, "sim") == 0
    np.testing.assert_array_equal(l32.y, reference_conv2d(x, w, None, padding=1, out="int32"))


# depthwise (N, H, W, C, R, stride, padding, bias): ragged channel blocks (1, 17, 33, 65), odd sizes
DEPTHWISE = [(1, 8, 8, 17, 3, 1, 1, True), (1, 9, 7, 33, 3, 2, 1, False), (2, 5, 6, 1, 3, 1, 1, True),
             (1, 7, 9, 65, 5, 2, 2, True)]


@pytest.mark.parametrize("case", DEPTHWISE, ids=lambda c: "x".join(map(str, c)))
def test_depthwise_programs_are_loops(case):
    """Each channel block's program of the depthwise kernel is one LOOP_CONV_WS (B-channel
    diagonal weight tiles), bit-exact on sim and iss."""
    N, H, W, C, R, stride, padding, bias = case
    rng = np.random.default_rng(C)
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C), dtype=np.int8)
    b = rng.integers(-(1 << 12), 1 << 12, C).astype(np.int32) if bias else None
    o = dict(stride=stride, padding=padding, scale=1 / 16, relu=True)
    ref = reference_depthwise_conv2d(x, w, b, **o)
    for target in ("sim", "iss"):
        ld = depthwise_launch(x, w, b, **o)
        info = ld.run(target)
        assert loops_run(info, target) == np.prod(ld.grid)
        np.testing.assert_array_equal(ld.y, ref)


@baco.jit
def wrong_tap_conv(x_ptr, w_ptr, y_ptr, H, W, C, P, Q, K, S, scale,
                   BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr):
    """A near miss: a 1-row, unit-stride, unpadded conv whose input window moves s*s pixels
    per filter column (not an affine tap stride): not a LoopConv, stays explicit."""
    p = bl.program_id(0)
    q0 = bl.program_id(1) * BLOCK_M
    k0 = bl.program_id(2) * BLOCK_N
    acc = bl.zeros((BLOCK_M, BLOCK_N), dtype=bl.int32)
    for t in range(0, S):
        x_blk = bl.make_block_ptr(x_ptr + (p * W + t * t) * C, shape=(Q, C), strides=(C, 1),
                                  offsets=(q0, 0), block_shape=(BLOCK_M, BLOCK_K))
        w_blk = bl.make_block_ptr(w_ptr + t * C * K, shape=(C, K), strides=(K, 1), offsets=(0, k0),
                                  block_shape=(BLOCK_K, BLOCK_N))
        acc += bl.dot(bl.load(x_blk, boundary_check=(0, 1)), bl.load(w_blk, boundary_check=(0, 1)))
    y_blk = bl.make_block_ptr(y_ptr + p * Q * K, shape=(Q, K), strides=(K, 1), offsets=(q0, k0),
                              block_shape=(BLOCK_M, BLOCK_N))
    bl.store(y_blk, (acc * scale).to(bl.int8), boundary_check=(0, 1))


def test_near_miss_is_not_rewritten():
    H, W, C, K, S = 4, 12, 16, 16, 3
    Q = W - (S - 1) ** 2
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (S, C, K), dtype=np.int8)
    y = np.zeros((H, Q, K), np.int8)
    info = wrong_tap_conv[(H, 1, 1)](x, w, y, H, W, C, H, Q, K, S, 1 / 64, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    assert "loop_conv_ws" not in info["kernel"].llvm_ir
    acc = sum(x[:, t * t:t * t + Q].astype(np.int64) @ w[t].astype(np.int64) for t in range(S))
    from baco.gemmini.arith import acc_to_int8
    np.testing.assert_array_equal(y, acc_to_int8(acc, 1 / 64, False))


@pytest.mark.parametrize("case", ["ws_conv2d_3x3_bias", "ws_conv2d_strided_rows"])
def test_cli_pass_on_text_ir(case):
    """`baco opt --pass loop-conv-ws` on a conv program's placed IR (the golden tests' input:
    tests/ir/update_golden.py), then the next stage on its output."""
    from baco.passes.pipeline import run_pipeline
    src = Path(__file__).parent / "ir" / "loop-conv-ws" / f"{case}.mlir"
    out = subprocess.run([sys.executable, "-m", "baco.cli", "opt", "--pass", "loop-conv-ws", str(src)],
                         capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert out.returncode == 0, out.stderr
    for n in range(1, 7):
        assert out.stdout.count(f"instgem.loop_conv_ws_config_{n}") == 1
    assert out.stdout.count('"instgem.loop_conv_ws"(') == 1
    assert "scf.for" in out.stdout       # the explicit program, kept for the run-time fallback
    lowered = run_pipeline(out.stdout, start="linalg-to-instgem", until="config-elimination").stage_ir
    assert lowered["config-elimination"].count('"instgem.loop_conv_ws"(') == 1
    off = subprocess.run([sys.executable, "-m", "baco.cli", "opt", "--pass", "loop-conv-ws", str(src)],
                         capture_output=True, text=True, cwd=Path(__file__).parent.parent,
                         env=dict(os.environ, BACO_LOOP_WS="0"))
    assert off.returncode == 0 and "loop_conv_ws" not in off.stdout


# with -m slow (15 CPU s): SPLIT's cases run channel-split LOOP_CONV_WS programs bit-exact on sim and the ISS,
# test_loop_conv_timing_reference's split programs the default schedule's channel split of a 14x14 520 -> 64 conv at
# DIM 16, test_int32_output_stays_explicit an int32 output
@pytest.mark.slow
def test_default_schedule_runs_loop_conv_ws():
    """The default conv schedule of an int8 3x3 layer (14x14, 256 -> 250 channels at DIM 16) is a
    LoopConv program: every program is LOOP_CONV_WS, its input channels split into
    loop_conv_channels' blocks where they do not all fit; bit-exact. An int32 output (LoopConv
    stores int8 only) keeps the explicit default."""
    from baco.gemmini.schedule import default_conv_schedule, loop_conv_channels
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (1, 14, 14, 256), dtype=np.int8)
    w = rng.integers(-128, 128, (3, 3, 256, 250), dtype=np.int8)
    b = rng.integers(-5000, 5000, 250).astype(np.int32)
    kw = dict(stride=1, padding=1, dilation=1, scale=1 / 64, relu=True)
    lc = conv2d_launch(x, w, b, config=DIM16, **kw)
    channels = loop_conv_channels(lc.schedule, 14, 14, 250, 256, 3, 3, 1, 1, DIM16)
    assert channels is not None
    info = lc.run("sim")
    assert loops_run(info, "sim") == lc.grid[0] * lc.grid[1] * lc.grid[2] * -(-256 // channels)
    np.testing.assert_array_equal(lc.y, reference_conv2d(x, w, b, **kw))
    wide = conv2d_launch(x, w, b, config=DIM16, out="int32", stride=1, padding=1)
    assert wide.schedule == default_conv_schedule(14, 250, 256, DIM16, False, P=14, taps=9, bias=True)


# (N, H, W, C, K, R, conv stride, conv padding, pool, pool stride, pool padding, (PR, BN), bias)
POOLED = [
    (1, 16, 16, 3, 16, 7, 2, 3, 3, 2, 1, (2, 16), True),          # a ResNet stem + its pool, packed pixels
    (2, 13, 11, 5, 20, 3, 1, 1, 2, 2, 0, (2, 32), True),          # ragged channels, odd sizes, 2 images
    (1, 15, 17, 2, 24, 5, 3, 2, 3, 1, 1, (3, 16), False),         # conv stride 3, pool stride 1
    (1, 12, 12, 17, 16, 3, 1, 1, 3, 2, 1, (2, 16), True),         # two channel blocks (no packing)
]


@pytest.mark.parametrize("case", POOLED, ids=lambda c: "n{}h{}w{}c{}k{}-r{}s{}p{}-pool{}s{}p{}".format(*c[:11]))
def test_pooled_conv_is_one_loop_conv_ws_a_program(case):
    """conv2d_pool_kernel: each program (pooled rows x BLOCK_N channels) is one LOOP_CONV_WS whose
    FSM max-pools its output tile on the way out (config_st's pooling), computing only the tile's
    conv rows inside the image; bit-exact on sim and the ISS against the numpy reference."""
    from baco.kernels.pool import ConvPoolLaunch, reference_conv_pool
    N, H, W, C, K, R, cs, cp, pool, ps, pp, (pr, bn), bias = case
    rng = np.random.default_rng(H * 3 + C)
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    b = rng.integers(-5000, 5000, K).astype(np.int32) if bias else None
    kw = dict(pool=pool, stride=ps, padding=pp, conv_stride=cs, conv_padding=cp, scale=1 / 64, relu=True)
    lc = ConvPoolLaunch(x, w, b, config=DIM16, blocks=(pr, bn, 16, "WS", False), **kw)
    ref = reference_conv_pool(x, w, b, **kw)
    programs = lc.grid[0] * lc.grid[1] * lc.grid[2]
    for target in ("sim", "iss"):
        lc.y[...] = 0
        assert loops_run(lc.run(target), target) == programs
        np.testing.assert_array_equal(lc.y, ref)


def test_pooled_conv_split_into_channel_blocks():
    """A pooled program whose 80 input channels overflow LoopConv's half scratchpad (1,024 rows):
    three LOOP_CONV_WS of 32, 32 and 16 channels, the last one pooling and storing; bit-exact on
    sim and the ISS."""
    from baco.kernels.pool import ConvPoolLaunch, reference_conv_pool
    rng = np.random.default_rng(11)
    x = rng.integers(-128, 128, (1, 12, 12, 80), dtype=np.int8)
    w = rng.integers(-128, 128, (3, 3, 80, 32), dtype=np.int8)
    b = rng.integers(-5000, 5000, 32).astype(np.int32)
    kw = dict(pool=3, stride=2, padding=1, conv_stride=1, conv_padding=1, scale=1 / 64, relu=True)
    lc = ConvPoolLaunch(x, w, b, config=SMALL16, blocks=(2, 32, 16, "WS", False), **kw)
    ref = reference_conv_pool(x, w, b, **kw)
    programs = lc.grid[0] * lc.grid[1] * lc.grid[2]
    for target in ("sim", "iss"):
        lc.y[...] = 0
        assert loops_run(lc.run(target), target) == 3 * programs
        np.testing.assert_array_equal(lc.y, ref)


def pooled_loops(lc, P, Q, pool, ps, pp):
    """LOOP_CONV_WS a pooled launch runs when each program is one per tile of pooled columns
    (pooled_column_tiles of its conv rows inside the image) and its input channels fit at once."""
    from baco.gemmini.schedule import pooled_column_tiles
    N, PH, PW, K = lc.y.shape
    pr, bn = lc.schedule.block_m, lc.schedule.block_n
    rows = (pr - 1) * ps + pool
    total = 0
    for k0 in range(0, K, bn):
        for pr0 in range(0, PH, pr):
            lo = pr0 * ps - pp
            orows = min(P, lo + rows) - max(0, lo)
            total += N * pooled_column_tiles(PW, Q, orows, -(-min(bn, K - k0) // lc.config.dim), pool, ps,
                                             lc.config)[0]
    return total


# (N, H, W, C, K, R, conv stride, conv padding, pool, pool stride, pool padding, (PR, BN), bias) on a
# Gemmini with 128 accumulator rows (64 a loop): each program's conv rows are several tiles of pooled columns
COLUMN_TILED = [
    (1, 33, 33, 3, 16, 7, 2, 3, 3, 2, 1, (3, 16), True),         # a stem: 3 tiles, pool padding left and right
    (1, 17, 19, 3, 20, 7, 2, 3, 3, 2, 1, (2, 32), False),        # ragged channels, two banks, odd sizes
    (2, 13, 30, 5, 16, 3, 1, 1, 2, 2, 0, (2, 16), True),         # 2x2/2 pool, 2 images
    (1, 15, 40, 2, 16, 5, 3, 2, 3, 1, 1, (4, 16), False),        # conv stride 3, pool stride 1
]
SMALL_ACC16 = GemminiConfig.from_capacity(16, 64, 8)


@pytest.mark.parametrize("case", COLUMN_TILED, ids=lambda c: "n{}h{}w{}c{}k{}-r{}s{}p{}-pool{}s{}p{}".format(*c[:11]))
def test_pooled_conv_tiles_of_pooled_columns(case):
    """A pooled program whose conv rows do not fit half the accumulator at once is one LOOP_CONV_WS
    per tile of pooled columns (baco.gemmini.schedule.pooled_column_tiles: each tile's conv columns
    inside the image with the windows' halo, the pooling's left and right padding at the image's
    edges, its pooled columns stored at their place in the pooled rows); bit-exact on sim and the ISS."""
    from baco.kernels.pool import ConvPoolLaunch, reference_conv_pool
    N, H, W, C, K, R, cs, cp, pool, ps, pp, (pr, bn), bias = case
    rng = np.random.default_rng(H + W)
    x = rng.integers(-128, 128, (N, H, W, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    b = rng.integers(-5000, 5000, K).astype(np.int32) if bias else None
    kw = dict(pool=pool, stride=ps, padding=pp, conv_stride=cs, conv_padding=cp, scale=1 / 64, relu=True)
    lc = ConvPoolLaunch(x, w, b, config=SMALL_ACC16, blocks=(pr, bn, 16, "WS", False), **kw)
    ref = reference_conv_pool(x, w, b, **kw)
    expected = pooled_loops(lc, (H + 2 * cp - R) // cs + 1, (W + 2 * cp - R) // cs + 1, pool, ps, pp)
    assert expected > lc.grid[0] * lc.grid[1] * lc.grid[2]
    for target in ("sim", "iss"):
        lc.y[...] = 0
        assert loops_run(lc.run(target), target) == expected
        np.testing.assert_array_equal(lc.y, ref)


# 17x17 at DIM 16 (one pooled column tile a program) with -m slow: 33x33 runs the default stem at DIM 16 in several
# tiles a program, POOLED[0] a stem of one LOOP_CONV_WS a program, COLUMN_TILED a 17x19 stem
@pytest.mark.parametrize("size, dim", [pytest.param(17, 16, marks=pytest.mark.slow), (33, 16), (65, 32),
                                       pytest.param(64, 16, marks=pytest.mark.slow),
                                       pytest.param(65, 16, marks=pytest.mark.slow),
                                       pytest.param(112, 16, marks=pytest.mark.slow),
                                       pytest.param(224, 16, marks=pytest.mark.slow),
                                       pytest.param(224, 32, marks=pytest.mark.slow)])
def test_default_pooled_stem_runs_loop_conv_ws(size, dim):
    """ResNet's stem (7x7/2, 3 -> 64 channels, bias, ReLU, 3x3/2 pool with padding 1) at its default
    schedule: every program is LOOP_CONV_WS, one per tile of pooled columns (at 224x224, DIM 16: 4
    pooled rows x 16 channels a program, 3 tiles of 19 pooled columns where the plain whole-row
    program fits one pooled row); bit-exact on sim and the ISS."""
    from baco.kernels.pool import ConvPoolLaunch, reference_conv_pool
    rng = np.random.default_rng(size)
    x = rng.integers(-128, 128, (1, size, size, 3), dtype=np.int8)
    w = rng.integers(-128, 128, (7, 7, 3, 64), dtype=np.int8)
    b = rng.integers(-5000, 5000, 64).astype(np.int32)
    kw = dict(pool=3, stride=2, padding=1, conv_stride=2, conv_padding=3, scale=1 / 256, relu=True)
    config = DIM16 if dim == 16 else GemminiConfig.from_capacity(32, 512, 128)
    lc = ConvPoolLaunch(x, w, b, config=config, blocks=None, **kw)
    ref = reference_conv_pool(x, w, b, **kw)
    expected = pooled_loops(lc, (size - 1) // 2 + 1, (size - 1) // 2 + 1, 3, 2, 1)
    for target in ("sim", "iss"):
        lc.y[...] = 0
        assert loops_run(lc.run(target), target) == expected
        np.testing.assert_array_equal(lc.y, ref)


def test_the_pooled_stems_default_schedule_prices_its_bias():
    """A model's stem loads a bias (its folded BatchNorm), which costs each tile's first LOOP_CONV_WS
    its bias rows: pool_schedule ranks the candidates with it. ResNet's stem at 64x64, DIM 16: ranked
    without the bias, 4 pooled rows x 16 channels (80,417 cycles with the bias on the cycle model,
    0.988x the C library's 79,932 end to end); with it, 3 x 32 (77,006; 6 x 16, walked 0.09% lower,
    78,504)."""
    from baco.gemmini.schedule import pooled_loop_conv_cycles
    from baco.kernels.pool import ConvPoolLaunch
    x, w = np.zeros((1, 64, 64, 3), np.int8), np.zeros((7, 7, 3, 64), np.int8)
    kw = dict(pool=3, stride=2, padding=1, conv_stride=2, conv_padding=3, scale=1 / 256, relu=True, config=DIM16)
    walk = [pooled_loop_conv_cycles(1, 64, 64, 64, 3, 7, 7, 2, (3, 3), 1, 4, 16, 3, 2, 1, DIM16, bias=bias)
            for bias in (False, True)]
    assert walk[1] > walk[0]
    unbiased = ConvPoolLaunch(x, w, None, blocks=None, **kw).schedule
    biased = ConvPoolLaunch(x, w, np.zeros(64, np.int32), blocks=None, **kw)
    assert biased.schedule != unbiased
    as_unbiased = ConvPoolLaunch(x, w, np.zeros(64, np.int32), blocks=unbiased, **kw)
    assert biased.cycles()["cycles"] < as_unbiased.cycles()["cycles"]


# constant shapes (specialize_shapes) fold a program's IR into forms the pass reads as the same nest:
# (H, C, K, R, stride, (BM, BN, BK, rows), depthwise)
FOLDED = {
    # one tap (1x1, the channels one block): the tap loop of one trip folded away, the rows' selects folded
    "one-tap-1x1s2": (13, 17, 33, 1, 2, (7, 32, 32, 7), False),
    # 1x1 stride 2, two channel blocks: floordiv(t // 2, 2) merged into t // 4, the column phase exact
    "merged-row-phase-1x1s2": (14, 64, 64, 1, 2, (7, 32, 32, 7), False),
    "one-row-1x1s2": (2, 17, 64, 1, 2, (1, 64, 32, 1), False),
    "depthwise-576-3x3s2": (5, 576, 576, 3, 2, (3, 16, 16, 3), True),
    # unpadded (one program along the rows): floordiv(t // 3, 2) (the row phase of tap row t // 3)
    # merged into t // 6 beside t // 3 (S = 3 filter columns, one channel step)
    "depthwise-576-3x3s2-unpadded": (5, 576, 576, 3, 2, (2, 16, 16, 2), True, 0),
}
# compiled for their grid as well (a launch's compile: a size-1 axis's program id is 0), which folds
# further: (case, a line of the placed IR showing the form)
GRID_FOLDED = {
    # one output row a program, one column block (program id 1 is 0): the column phase w mod 2 = 0, so
    # the input view is the whole phase, 7 pixels of pixel stride 2·C = 34 (no m left to read)
    "one-row-1x1s2-column-0": ((13, 17, 33, 1, 2, (7, 48, 32, 1), False), "sizes: [7, 17], strides: [34, 1]"),
    # ROWS > 1 slices of that whole column phase: each slice's local column offset select(row in range, 0, 0)
    # folded to 0 (the rows' phase stays, and gives the columns' stride)
    "rows-1x1s2-column-0": ((13, 17, 33, 1, 2, (7, 48, 32, 3), False), "7, 17], strides: [442, 34, 1]"),
    "merged-row-phase-1x1s2-column-0": ((14, 64, 64, 1, 2, (7, 32, 32, 7), False),
                                        "7, 64], strides: [1792, 128, 1]"),
}
ALL_FOLDED = dict(FOLDED, **{k: v[0] for k, v in GRID_FOLDED.items()})


def folded_launch(case, seed=0):
    H, C, K, R, st, (bm, bn, bk, rows), dw, *pad = case
    rng = np.random.default_rng(seed + H + C)
    x = rng.integers(-128, 128, (1, H, H, C), dtype=np.int8)
    b = rng.integers(-5000, 5000, K).astype(np.int32)
    kw = dict(stride=st, padding=pad[0] if pad else R // 2, scale=1 / 64, relu=True)
    if dw:
        w = rng.integers(-128, 128, (R, R, C), dtype=np.int8)
        return (depthwise_launch(x, w, b, config=DIM16, blocks=(bm, bn, bk, "WS", False, rows), **kw),
                reference_depthwise_conv2d(x, w, b, **kw))
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    return (conv2d_launch(x, w, b, config=DIM16, blocks=(bm, bn, bk, "WS", False, rows), **kw),
            reference_conv2d(x, w, b, **kw))


@pytest.mark.parametrize("name", list(ALL_FOLDED))
def test_pass_on_constant_shape_text_ir(name, tmp_path):
    """`baco opt --pass loop-conv-ws` alone on the placed IR of a launch compiled for its shapes
    (GRID_FOLDED's: and its grid): the folded nest is still one LOOP_CONV_WS (with the explicit
    program kept for the fallback)."""
    from baco.options import full_grid
    from baco.passes.pipeline import run_pipeline
    lc, _ = folded_launch(ALL_FOLDED[name])
    values, options = lc.kernel.bind(list(lc.args), dict(lc.options, target="iss"))
    params, _, _ = lc.kernel.specialize(values, True)
    grid = full_grid(lc.grid) if name in GRID_FOLDED else None
    placed = run_pipeline(lc.kernel.baco_ir(params, grid), options,
                          until="gemmini-placement").stage_ir["gemmini-placement"]
    if name.startswith("one-tap"):
        body = placed[placed.index(f"func.func @{lc.kernel.__name__}"):]
        assert "scf.for" not in body            # the form under test: no tap loop left
    if name in GRID_FOLDED:
        assert GRID_FOLDED[name][1] in placed   # the form under test
    src = tmp_path / "in.mlir"
    src.write_text(placed)
    out = subprocess.run([sys.executable, "-m", "baco.cli", "opt", "--pass", "loop-conv-ws", str(src)],
                         capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count('"instgem.loop_conv_ws"(') == 1
    assert "scf.if" in out.stdout and "linalg.matmul" in out.stdout     # the explicit program, in the else branch
    lowered = run_pipeline(out.stdout, start="linalg-to-instgem", until="linalg-to-instgem").stage_ir
    assert lowered["linalg-to-instgem"].count('"instgem.loop_conv_ws"(') == 1     # its guard not constant false


@pytest.mark.parametrize("name", list(ALL_FOLDED))
def test_constant_shape_programs_run_loop_conv_bit_exact(name):
    """Those launches compiled for their shapes (and grid: a launch's compile) run one LOOP_CONV_WS a
    program on the ISS, bit-exact."""
    lc, ref = folded_launch(ALL_FOLDED[name])
    info = lc.kernel[lc.grid](*lc.args, target="iss", specialize_shapes=True, **lc.options)
    np.testing.assert_array_equal(lc.y, ref)
    assert loops_run(info, "iss") == lc.grid[0] * lc.grid[1] * lc.grid[2]


def test_pooled_program_compiled_for_its_grid_keeps_loop_conv(tmp_path):
    """A pooled 3x3/2 conv at DIM 4 of two channel blocks, whole rows a program (one program along
    the columns): compiled for its shapes and grid, the column program 0 folds the column phase to
    floordiv(s, 2) of the filter column, a third floordiv of the tap t (t // 2, t // 6 and the row
    phase's t // 12). `baco opt --pass loop-conv-ws` alone on its placed IR is one LOOP_CONV_WS whose
    guard the next stage keeps; the launch runs one a program on the ISS, bit-exact."""
    from baco.options import full_grid
    from baco.kernels.pool import ConvPoolLaunch, reference_conv_pool
    from baco.passes.pipeline import run_pipeline
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (2, 11, 9, 6), dtype=np.int8)
    w = rng.integers(-128, 128, (3, 3, 6, 5), dtype=np.int8)
    b = rng.integers(-3000, 3000, 5).astype(np.int32)
    kw = dict(pool=3, stride=3, padding=0, conv_stride=2, conv_padding=0, scale=1 / 64, relu=True)
    lc = ConvPoolLaunch(x, w, b, config=DIM4, blocks=(1, 4, 4), **kw)
    assert lc.grid[1] == 1
    values, options = lc.kernel.bind(list(lc.args), dict(lc.options, target="iss"))
    params, _, _ = lc.kernel.specialize(values, True)
    placed = run_pipeline(lc.kernel.baco_ir(params, full_grid(lc.grid)), options,
                          until="gemmini-placement").stage_ir["gemmini-placement"]
    assert "baco_program_id(%c1_i64)" not in placed       # the form under test: column program 0 folded
    src = tmp_path / "in.mlir"
    src.write_text(placed)
    out = subprocess.run([sys.executable, "-m", "baco.cli", "opt", "--pass", "loop-conv-ws", str(src)],
                         capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert out.returncode == 0, out.stderr
    loops = out.stdout.count('"instgem.loop_conv_ws"(')         # (the pooled-column tiles' loop and the whole rows')
    assert loops >= 1
    lowered = run_pipeline(out.stdout, start="linalg-to-instgem", until="linalg-to-instgem").stage_ir
    assert lowered["linalg-to-instgem"].count('"instgem.loop_conv_ws"(') == loops
    info = lc.run("iss")
    np.testing.assert_array_equal(lc.y, reference_conv_pool(x, w, b, **kw))
    assert loops_run(info, "iss") == lc.grid[0] * lc.grid[1] * lc.grid[2]


def test_gemm_kernel_programs_stay_gemms(tmp_path):
    """Compiled for its shapes, the GEMM kernel's program of one K step (int8 out, explicit: its
    blocks overflow LOOP_WS's half) is the IR of a 1x1 convolution whose one tap folded away; the
    kernel says it is not a convolution (jit's loop_conv=False: `baco.loop_conv = false` on its
    function), so the loop-conv-ws pass leaves it to the GEMM's explicit stream, which the GEMM's
    schedule was priced as. Without the attribute the same text becomes one LOOP_CONV_WS."""
    from baco.gemmini.arith import reference_matmul
    from baco.kernels.matmul import matmul_launch
    from baco.options import full_grid
    from baco.passes.pipeline import run_pipeline
    cfg = GemminiConfig.from_capacity(16, 16, 16)
    rng = np.random.default_rng(0)
    a, b = rng.integers(-128, 128, (40, 112), dtype=np.int8), rng.integers(-128, 128, (112, 64), dtype=np.int8)
    lc = matmul_launch(a, b, out="int8", scale=1 / 64, schedule=(32, 64, 112), config=cfg)
    info = lc.run("iss")
    np.testing.assert_array_equal(lc.y, reference_matmul(a, b, scale=1 / 64, out="int8"))
    assert loops_run(info, "iss") == 0 and "loop_ws" not in info["result"].stats
    values, options = lc.kernel.bind(list(lc.args), dict(lc.options, target="iss"))
    params, _, _ = lc.kernel.specialize(values, True)
    placed = run_pipeline(lc.kernel.baco_ir(params, full_grid(lc.grid)), options,
                          until="gemmini-placement").stage_ir["gemmini-placement"]
    assert "baco.loop_conv = false" in placed
    for text, loops in ((placed, 0), (placed.replace("baco.loop_conv = false, ", ""), 1)):
        src = tmp_path / "in.mlir"
        src.write_text(text)
        out = subprocess.run([sys.executable, "-m", "baco.cli", "opt", "--pass", "loop-conv-ws",
                              "--dim", "16", "--sp-kb", "16", "--acc-kb", "16", str(src)],
                             capture_output=True, text=True, cwd=Path(__file__).parent.parent)
        assert out.returncode == 0, out.stderr
        assert out.stdout.count('"instgem.loop_conv_ws"(') == loops


def _kernel(x_ptr):
    pass


def test_loop_conv_option_is_a_bool():
    with pytest.raises(TypeError, match="_kernel: loop_conv must be a bool, got str 'no'"):
        baco.jit(loop_conv="no")(_kernel)
