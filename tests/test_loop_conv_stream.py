"""The LoopConv walk (baco.gemmini.loop_conv_timing) and the simulator (baco.sim.loops) take one
LOOP_CONV_WS's commands from one description (baco.gemmini.loop_conv_stream): over many tiles
(strides, dilation, downsampling, padding rows and columns, first-layer packing, ragged channels
and pixels, several images, a bias or a zero fill, pooled stores), the walk's per-tile loads are
the simulator's mvins one for one (the cycle model's occupancy of each), its stores and
computes the simulator's in number and occupancy, and its counts (tile_counts, kernel_model's
LoopConv energy) the cycle model's stats of the simulator's program."""
import random

import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS
from baco.gemmini.loop_conv_stream import packed_pixels
from baco.gemmini.loop_conv_timing import _tile_costs, _tile_loads, _tile_stores, conv_tile, tile_counts
from baco.sim.loops import LoopConvState, cmd, conv_params, loop_conv_program
from baco.sim.timing import QUEUE_OF, TimingModel

CONFIGS = [GemminiConfig.from_capacity(*hw) for hw in ((4, 8, 4), (8, 32, 16), (16, 256, 64), (32, 512, 128))]
IN_ADDR, W_ADDR, BIAS_ADDR, OUT_ADDR = 0x80000000, 0x90000000, 0xA0000000, 0xB0000000


def random_case(rng: random.Random, d: int):
    """(tile, dilation, downsample, bias): a walk tile whose rows and columns one stride explains."""
    small = lambda: rng.choice([1, 2, 3, d - 1 or 1, d, d + 1, rng.randrange(1, 2 * d + 2)])  # noqa: E731
    downsample = int(rng.random() < 0.15)
    if downsample:
        stride, dilation, kr, kc = 2, 1, 1, 1
    else:
        stride, dilation = rng.choice([1, 1, 2, 3]), rng.choice([1, 1, 2])
        kr, kc = rng.choice([1, 2, 3, 5]), rng.choice([1, 2, 3, 7])
    orows, ocols = rng.choice([1, 2, 3, 5, rng.randrange(1, 9)]), small()
    ragged = lambda: rng.choice([1, 3, d + 1, 2 * d + 1, 4 * d + 1, small()])  # noqa: E731
    ich = ragged()
    rows, cols = orows * stride + dilation * (kr - 1), ocols * stride + dilation * (kc - 1)
    pad_rows, pad_cols = rng.choice([0, 0, min(1, rows - 1), min(stride - 1, rows - 1)]), \
        rng.choice([0, 0, min(2, cols - 1), min(stride - 1, cols - 1)])
    first, last = rng.random() < 0.6, rng.random() < 0.7
    tile = (rng.choice([1, 1, 2]), orows, ocols, ragged(), kr, kc, ich,
            rows - pad_rows, cols - pad_cols, first, last, pad_rows, pad_cols)
    if last and rng.random() < 0.3 and not downsample and orows < 200 and ocols < 200:
        tile += (((orows + 1) // 2, (ocols + 1) // 2, rng.choice([1, 2, 3])),)
    return tile, dilation, downsample, rng.random() < 0.5


def simulator_program(cfg: GemminiConfig, tile: tuple, dilation: int, downsample: int, bias: bool):
    """The simulator's LoopProgram of the LOOP_CONV_WS the walk's `tile` stands for."""
    B, orows, ocols, och, kr, kc, ich, irows, icols, first, last, pad_rows, pad_cols = tile[:13]
    pool = tile[13] if len(tile) > 13 else None
    porows, pocols, size = pool or (orows, ocols, 0)
    fields = dict(batch_size=B, in_row_dim=irows, in_col_dim=icols, in_channels=ich, out_channels=och,
                  out_row_dim=orows, out_col_dim=ocols, pool_out_row_dim=porows, pool_out_col_dim=pocols,
                  stride=(irows + pad_rows - dilation * (kr - 1)) // orows, padding=0, kernel_dim=max(kr, kc),
                  kernel_dilation=dilation, pool_size=size, pool_stride=2 if pool else 0, pool_padding=0, batches=B,
                  porows=porows, pocols=pocols, pochs=och, krows=kr, kcols=kc, kchs=ich, lpad=0, rpad=pad_cols,
                  upad=0, dpad=pad_rows, plpad=0, prpad=0, pupad=0, pdpad=0, orows=orows, ocols=ocols,
                  in_stride=ich, weight_stride=och, out_stride=och, weights_addr=W_ADDR,
                  output_addr=OUT_ADDR if last else 0, bias_addr=BIAS_ADDR if first else 0, input_addr=IN_ADDR)
    st = LoopConvState()
    for n in range(1, 7):
        name = f"loop_conv_ws_config_{n}"
        st.latch(cmd(name, **{f.name: fields[f.name] for f in COMMANDS[name].fields if f.name in fields})[1])
    flags = cmd("loop_conv_ws", no_bias=int(not bias), wrot180=0, trans_output_1203=0, trans_weight_1203=0,
                trans_weight_0132=0, trans_input_3120=0, dw=0,
                max_pixels_per_row=packed_pixels(ich, kc, dilation, downsample, cfg.dim), a_spad_id=0, b_spad_id=0,
                no_pool=int(pool is None), downsample=downsample, input_dilated=0, activation=0)[1]
    return loop_conv_program(cfg, st, flags, conv_params(cfg, st, flags, rtl_wrap=True))


def command_costs(cfg: GemminiConfig, program) -> list:
    """(name, fields, occupancy) of the program's commands as the cycle model prices each one."""
    tm = TimingModel(cfg)
    return [(name, f, tm._cost(name, f, QUEUE_OF[name], 0.0)[1]) for _, _, name, f in program.commands]


def simulator_counts(cfg: GemminiConfig, program) -> dict:
    tm = TimingModel(cfg)
    tm.observe("loop_conv_ws", program)
    tm.fence()
    return tm.report()


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"dim{c.dim}")
def test_walk_tiles_are_the_simulators_commands(cfg):
    rng = random.Random(cfg.dim)
    for _ in range(50):
        tile, dilation, downsample, bias = random_case(rng, cfg.dim)
        program = simulator_program(cfg, tile, dilation, downsample, bias)
        costs = command_costs(cfg, program)
        first, last = tile[9], tile[10]
        pool = tile[13] if len(tile) > 13 else None
        # the loads, one for one in the simulator's order
        occ, n_before, _ = _tile_loads(cfg, conv_tile(cfg.dim, dilation, downsample, *tile), bias, first)
        assert occ == [c for name, _, c in costs if name.startswith("mvin")], tile
        assert n_before == sum(name in ("mvin2", "mvin3") for name, _, _ in costs), tile
        # the stores and computes
        stores = [c for name, _, c in costs if name == "mvout"]
        assert _tile_stores(cfg, conv_tile(cfg.dim, dilation, downsample, *tile), True, pool) == \
            (sum(stores), len(stores)) or not last, tile
        assert not stores or last
        n_computes = _tile_costs(cfg, dilation, downsample, True, bias, *tile)[4]
        assert n_computes == sum(name.startswith("compute") for name, _, _ in costs), tile
        # what they move and compute, as the cycle model counts it
        report = simulator_counts(cfg, program)
        counts = tile_counts(cfg, dilation, downsample, True, bias, tile)
        assert counts == {key: report[key] for key in counts}, tile
