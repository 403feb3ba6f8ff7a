"""The fast LoopConv walk (baco.gemmini.loop_conv_timing.loop_conv_stream_cycles: per-tile costs
cached, repeated tiles and groups of channel blocks extrapolated once periodic) against the walk
taken one tile at a time (tests/loop_conv_walk_reference.py) on random tile sequences and on the
programs the compiler, the pooled kernel and the C library run; and against the cycle model on
compiled programs split into input channel blocks."""
import random

import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.loop_conv_timing import loop_conv_stream_cycles, program_conv_tiles
from baco.gemmini.schedule import (GemmSchedule, loop_conv_channels, loop_conv_fits, pooled_program_tiles)
from baco.problem.layer import Layer
from baco.tuner.kernel_model import _library_conv_tiles, loop_conv_channels_of
from baco.tuner.mapping import default_layer_schedule, is_kernel_layer, is_pointwise
from baco.tuner.workloads import load_network
from tests import loop_conv_walk_reference as reference

# the walks add the same cycles; the fast one adds a period's shift many times at once, which
# rounds differently in the last bits
TOLERANCE = 1e-9
# the memories of the tuner's small and default points (pe, sp_kb, acc_kb), where programs are many
CONFIGS = [GemminiConfig.from_capacity(*hw) for hw in ((2, 1, 1), (4, 2, 1), (4, 8, 4), (8, 16, 8), (16, 256, 64),
                                                      (32, 512, 128))]


def assert_walks_agree(tiles, cfg, **kw) -> float:
    """The fast walk equals the step-by-step walk; their relative difference."""
    fast, slow = loop_conv_stream_cycles(tiles, cfg, **kw), reference.stream_cycles(tiles, cfg, **kw)
    assert fast == pytest.approx(slow, rel=TOLERANCE), (fast, slow, kw, tiles[:8])
    return abs(fast - slow) / slow


def random_tile(rng: random.Random, d: int, pooled: bool) -> tuple:
    """One LOOP_CONV_WS tuple with any of the walk's cases: ragged pixels and channels, several
    images, padding rows and columns, a zero fill or not, stores or not, pooled stores."""
    small = lambda: rng.choice([1, 2, 3, d - 1 or 1, d, d + 1, 2 * d, 3 * d + 2, rng.randrange(1, 5 * d)])  # noqa: E731
    kr, kc = rng.choice([1, 1, 2, 3, 3, 5, 7]), rng.choice([1, 1, 2, 3, 3, 5, 7])
    orows, ocols = small(), small()
    t = (rng.choice([1, 1, 1, 2, 3]), orows, ocols, small(), kr, kc, small(), orows + kr - 1, ocols + kc - 1,
         rng.random() < 0.6, rng.random() < 0.6, rng.choice([0, 0, 1, 2]), rng.choice([0, 0, 1, 2, 3]))
    if pooled and t[10]:
        t += (((orows + 1) // 2, (ocols + 1) // 2, rng.choice([2, 3])),)
    return t


def random_sequence(rng: random.Random, d: int) -> tuple[list, list | None]:
    """(tiles, halves or None) built as programs are: runs of one tile, repeated groups of a few
    (channel blocks, column tiles), the groups' halves alternating or not, singular tiles between."""
    pooled = rng.random() < 0.3
    kinds = [random_tile(rng, d, pooled) for _ in range(rng.randrange(1, 5))]
    tiles, halves = [], []
    for _ in range(rng.randrange(1, 6)):
        group = [rng.choice(kinds) for _ in range(rng.randrange(1, 5))]
        flip = rng.random() < 0.5
        base = [rng.randrange(2) for _ in group]
        for r in range(rng.choice([1, 2, 3, 7, 20, 61, 150])):
            tiles += group
            halves += [(h + r) % 2 if flip else h for h in base]
        if rng.random() < 0.3:
            tiles.append(random_tile(rng, d, pooled))
            halves.append(rng.randrange(2))
    return tiles, (halves if rng.random() < 0.7 else None)


def test_fast_walk_is_the_step_by_step_walk_on_random_sequences():
    """400 random tile sequences (DIM 2 to 32, up to ~3,000 tiles; any halves; int8 or int32
    stores; downsampling; dilation; a bias or zero fills)."""
    rng = random.Random(31)
    worst = 0.0
    for _ in range(400):
        d = rng.choice([2, 4, 8, 16, 32])
        tiles, halves = random_sequence(rng, d)
        worst = max(worst, assert_walks_agree(tiles, GemminiConfig(dim=d), halves=halves,
                                              dilation=rng.choice([1, 1, 2]), downsample=rng.choice([0, 0, 1]),
                                              out_int8=rng.random() < 0.7, bias=rng.random() < 0.3))
    assert worst <= TOLERANCE


def test_fast_walk_is_the_step_by_step_walk_on_compiled_programs():
    """The conv kernel's programs (program_conv_tiles) for random layers and schedules that fit
    LoopConv: strides, dilation, several images, one or many rows, ragged blocks, depthwise
    programs, the input channels in one LOOP_CONV_WS or split over several."""
    rng = random.Random(32)
    cases = 0
    while cases < 200:
        cfg = rng.choice(CONFIGS)
        d = cfg.dim
        R = rng.choice([1, 3, 3, 5, 7])
        S = R if rng.random() < 0.8 else rng.choice([1, 3])
        stride, dilation = rng.choice([1, 1, 2]), rng.choice([1, 1, 1, 2])
        P, Q = rng.choice([1, 2, 7, rng.randrange(1, 60)]), rng.choice([1, 3, 7, rng.randrange(1, 60)])
        K, C = rng.choice([1, d, 3 * d + 1, rng.randrange(1, 300)]), rng.choice([1, 3, d, rng.randrange(1, 300)])
        N = rng.choice([1, 1, 2, 3])
        rows = rng.choice([1, 1, 2, 3, min(P, 8)])
        s = GemmSchedule(rng.choice([d, 2 * d, Q, rng.randrange(1, 3 * d)]), rng.choice([d, 2 * d, K]), d,
                         rows=rows)
        depthwise = rng.random() < 0.2
        if depthwise:
            channels = None
        elif rng.random() < 0.5 and loop_conv_fits(s, P, Q, K, C, R, S, stride, dilation, cfg):
            channels = None
        else:
            channels = loop_conv_channels(s, P, Q, K, C, R, S, stride, dilation, cfg) or rng.randrange(1, C + 1)
        tiles = program_conv_tiles(N, P, Q, K, C, R, S, stride, dilation, s.rows, s.block_m, s.block_n,
                                   depthwise, channels=channels)
        if len(tiles) > 4000:
            continue
        assert_walks_agree(tiles, cfg, dilation=dilation)
        cases += 1


def test_fast_walk_is_the_step_by_step_walk_on_pooled_and_library_programs():
    """The pooled conv kernel's programs (pooled_program_tiles: pooled stores, padding, column
    tiles) and the C library's tiles (tiled_conv_auto, depthwise and downsampling included)."""
    rng = random.Random(33)
    cases = 0
    while cases < 120:
        cfg = rng.choice(CONFIGS)
        d = cfg.dim
        R = rng.choice([1, 3, 7])
        stride = rng.choice([1, 2])
        if rng.random() < 0.5:
            H = W = rng.choice([4, 9, 16, rng.randrange(3, 60)])
            pool = rng.choice([2, 3])
            built = pooled_program_tiles(rng.choice([1, 2]), H, W, rng.randrange(1, 4 * d + 2), rng.randrange(1, 200),
                                         R, R, stride, (R // 2, R // 2), 1, rng.randrange(1, 4), rng.choice([d, 2 * d]),
                                         pool, rng.choice([1, 2]), rng.choice([0, pool // 2]), cfg)
            if built is None:
                continue
            tiles, _ = built
            kw = {}
        else:
            depthwise = rng.random() < 0.2
            layer = Layer(R=R, S=R, P=rng.randrange(1, 40), Q=rng.randrange(1, 40),
                          C=1 if depthwise else rng.randrange(1, 300), K=rng.randrange(1, 300), N=rng.choice([1, 2]),
                          Hstride=stride, Wstride=stride, depthwise=depthwise)
            try:
                tiles, downsample = _library_conv_tiles(layer, cfg)
            except ValueError:       # the library finds no tiling on this memory
                continue
            kw = {"downsample": downsample, "out_int8": rng.random() < 0.5}
        if not 0 < len(tiles) <= 4000:
            continue
        assert_walks_agree(tiles, cfg, **kw)
        cases += 1


def test_fast_walk_is_the_step_by_step_walk_on_resnet50s_default_programs():
    """ResNet-50's convolutions that run LoopConv, under the default conv schedule's pick on the
    default Gemmini (the small ones' channel-split programs, tens of thousands of tiles a layer, are
    the compiled programs above in smaller layers: the step-by-step walk of a whole network's takes
    minutes)."""
    cfg = GemminiConfig()
    walked = 0
    for layer in load_network("resnet50"):
        if is_kernel_layer(layer) or is_pointwise(layer):
            continue
        s = default_layer_schedule(layer, cfg)
        channels = loop_conv_channels_of(layer, s, cfg)
        if channels is None:
            continue
        tiles = program_conv_tiles(layer.N, layer.P, layer.Q, layer.K, layer.C, layer.R, layer.S,
                                   layer.Hstride, layer.Hdilation, s.rows, s.block_m, s.block_n,
                                   channels=channels)
        assert_walks_agree(tiles, cfg, dilation=layer.Hdilation)
        walked += 1
    assert walked >= 5


@pytest.mark.parametrize("dim,size,C,K", [(32, 7, 256, 256), (16, 14, 520, 64)])
def test_walk_matches_the_cycle_model_on_split_programs(dim, size, C, K):
    """The walk of a compiled conv whose programs are one LOOP_CONV_WS per input channel block
    (their weight mvins two DIM-wide blocks block_stride rows apart at DIM 32) against the cycle
    model timing the program: within 1% (the cycle model once put those blocks DIM rows apart, so
    consecutive weight mvins waited on each other, and ran such programs 8% slower than the walk)."""
    import numpy as np

    from baco.kernels.conv import conv2d_launch
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    x, w = np.zeros((1, size, size, C), np.int8), np.zeros((3, 3, C, K), np.int8)
    launch = conv2d_launch(x, w, padding=1, scale=0.05, config=cfg)
    s = launch.schedule
    channels = loop_conv_channels(s, size, size, K, C, 3, 3, 1, 1, cfg)
    assert channels is not None and channels < C, s
    tiles = program_conv_tiles(1, size, size, K, C, 3, 3, 1, 1, s.rows, s.block_m, s.block_n,
                               channels=channels)
    assert_walks_agree(tiles, cfg)
    assert loop_conv_stream_cycles(tiles, cfg) == pytest.approx(launch.cycles()["cycles"], rel=0.01)


@pytest.mark.parametrize("dim,size,C,K", [(32, 28, 64, 64), (32, 7, 256, 256), (8, 15, 32, 48)])
def test_walk_prices_a_bias_as_the_cycle_model_runs_it(dim, size, C, K):
    """A compiled 3x3 conv with a bias (each program's first LOOP_CONV_WS loads it: one int32 mvin a
    DIM pixels of an output row) walked with `bias` against the cycle model: within 1.5% (the walk
    priced a zero fill there, 0.911x on the first, whose bias rows are a tenth of its loads). The
    padded image walked as the kernel runs it (the unpadded one: 1.032x on the DIM 8 layer's default,
    2 rows of 15 by 32 channels)."""
    import numpy as np

    from baco.kernels.conv import conv2d_launch
    cfg = GemminiConfig.from_capacity(dim, 256 if dim > 8 else 64, 64)
    x, w = np.zeros((1, size, size, C), np.int8), np.zeros((3, 3, C, K), np.int8)
    launch = conv2d_launch(x, w, np.zeros(K, np.int32), padding=1, scale=0.05, config=cfg)
    s = launch.schedule
    channels = loop_conv_channels(s, size, size, K, C, 3, 3, 1, 1, cfg)
    assert channels is not None, s
    tiles = program_conv_tiles(1, size, size, K, C, 3, 3, 1, 1, s.rows, s.block_m, s.block_n,
                               channels=channels, padding=1, image=(size, size))
    assert_walks_agree(tiles, cfg, bias=True)
    walk = loop_conv_stream_cycles(tiles, cfg, bias=True)
    assert walk == pytest.approx(launch.cycles()["cycles"], rel=0.015)
