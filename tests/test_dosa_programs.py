"""The programs DOSA's RTL rows ran (baco.sim.programs.dosa_program and friends): the tile
sizes and loop order extract_data_csv.py derives from a mapping string, tiled_conv_dosa's
tile loop (bounds, pads, first/last reduction tiles), tiled_matmul's DIM-block tiles,
LoopConv's 16-bit wrap when a tile's padding exceeds its input, and the timing."""
import math

import pytest

from baco.gemmini.config import GemminiConfig
from baco.sim.loops import LARGE_ITERATOR_BITS, LoopConvState, conv_params
from baco.sim.programs import (_ConvShape, dosa_conv_tiles, dosa_matmul_tiles, dosa_program,
                               dosa_program_features, rtl_row_cycles, time_dosa_program)
from baco.sim.timing import TimingModel

CFG = GemminiConfig()
CONV = dict(R=3, S=3, P=14, Q=14, C=32, K=48, N=1, Wstride=1)
CONV_MAPPING = "L3[WIO] K3 Q7 C2 - L2[WI] N1 K16X - L1[O] S3 R3 P7 C16X - L0[W] P2 Q2"


def test_tile_sizes_and_loop_order_follow_extract_data_csv():
    prog = dosa_program(CONV, CONV_MAPPING)
    assert not prog.matmul
    # L0..L2 products with the spatial factors, each factor once: a P factor at L0 or at L1 gives
    # the same tile (the RTL rows measure mappings that differ so as different programs)
    assert prog.tile == dict(N=1, P=7 * 2, Q=2, K=16, R=3, S=3, C=16)
    assert dosa_program(CONV, CONV_MAPPING.replace("P7 C16X - L0[W] P2", "P14 C16X - L0[W]")).tile == prog.tile
    assert prog.perm == "CQKRSPN"          # L3 reversed (inner first), then the rest in CRSKPQN order
    mm = dosa_program(dict(R=1, S=1, P=100, Q=1, C=64, K=48, N=1, Wstride=1), "L3[WIO] C2 P5 - L2[WI] K16X - "
                      "L1[O] P20 C2 K3 - L0[W] C16X")
    assert mm.matmul and mm.perm == "PCRSKQN" and (mm.tile["P"], mm.tile["K"], mm.tile["C"]) == (20, 48, 32)


def test_conv_tiles_cover_the_square_image_with_bias_first_and_output_last():
    prog = dosa_program(CONV, CONV_MAPPING.replace("L0[W] P2 Q2", "L0[W] P4 Q4"))
    tiles = list(dosa_conv_tiles(prog, CFG.dim))
    # out_dim from P (square), tiles of Q=4, P=28 (clamped to 14), K=16, C=16, full kernel
    assert len(tiles) == math.ceil(14 / 4) * 1 * 3 * 2
    fields = [f for f, _ in tiles]
    assert {f["out_row_dim"] for f in fields} == {14} and {f["padding"] for f in fields} == {1}
    assert sum(f["output_addr"] != 0 for f in fields) == len(tiles) // 2     # after the second C tile
    assert sum(f["bias_addr"] != 0 for f in fields) == len(tiles) // 2       # the first C tile (zeros)
    first = fields[0]
    assert (first["porows"], first["pocols"], first["kchs"], first["upad"], first["lpad"]) == (4, 14, 16, 1, 1)
    assert fields[-1]["porows"] == 2 and fields[-1]["dpad"] == 1           # ragged last row tile


def test_padding_larger_than_the_tile_wraps_loopconv_rows():
    """A kernel-row tile of 1 at the top edge: 2 input rows, 3 of them padding. The RTL's
    UInt arithmetic wraps the unpadded row count; the functional model refuses the tile."""
    layer = dict(R=7, S=7, P=112, Q=112, C=3, K=64, N=1, Wstride=2)
    prog = dosa_program(layer, "L3[WIO] P4 Q112 K8 S7 - L2[WI] N1 K4X - L1[O] K2 R7 P7 C3X - L0[W] P4")
    fields, flags = next(iter(dosa_conv_tiles(prog, CFG.dim)))
    assert (fields["krows"], fields["upad"]) == (1, 3)
    st = LoopConvState()
    st.latch(fields)
    c = conv_params(CFG, st, flags, rtl_wrap=True)
    assert c["irows_unpadded"] == (1 << LARGE_ITERATOR_BITS) - 1
    with pytest.raises(Exception):
        conv_params(CFG, st, flags)


@pytest.mark.parametrize("layer, mapping", [
    (CONV, CONV_MAPPING),
    (dict(R=7, S=7, P=112, Q=112, C=3, K=64, N=1, Wstride=2),
     "L3[WIO] P4 Q112 K8 S7 - L2[WI] N1 K4X - L1[O] K2 R7 P7 C3X - L0[W] P4"),
    (dict(R=6, S=6, P=112, Q=112, C=3, K=64, N=1, Wstride=2),
     "L3[WIO] P16 C3 K16 R6 - L2[WI] N1 K4X - L1[O] S6 Q112 - L0[W] P7"),
])
def test_program_features_sum_the_conv_tiles(layer, mapping):
    """dosa_program_features counts distinct tile sizes x their numbers; the same sums tile by
    tile over tiled_conv_dosa's loop, with the wrapping tiles and the memories' overflow."""
    prog = dosa_program(layer, mapping)
    shape, d = _ConvShape(prog), CFG.dim
    tiles = input_rows = array_rows = output_rows = wrapped = acc_need = 0
    for v in shape.loops():
        f, flags = shape.tile(v, d)
        pixels = (f["porows"] * f["stride"] + f["krows"] - 1) * (f["pocols"] * f["stride"] + f["kcols"] - 1)
        o_blocks, out = -(-f["pochs"] // d), f["porows"] * f["pocols"]
        tiles += 1
        input_rows += pixels * -(-f["kchs"] // d)
        array_rows += (o_blocks * f["krows"] * -(-f["kcols"] // flags["max_pixels_per_row"])
                       * -(-f["kchs"] // d) * out)
        output_rows += out * o_blocks if f["output_addr"] else 0
        wrapped += shape.wraps(v)
        acc_need = max(acc_need, out * o_blocks)
    n = dosa_program_features(prog, CFG)
    assert (n["tiles"], n["input_rows"], n["array_rows"], n["output_rows"], n["wrapped_tiles"]) == (
        tiles, input_rows, array_rows, output_rows, wrapped)
    assert n["matmul"] == 0 and n["acc_overflow"] == max(1.0, acc_need / CFG.acc_rows)


def test_program_features_of_a_matmul_count_its_loop_ws_tiles():
    prog = dosa_program(dict(R=1, S=1, P=100, Q=1, C=64, K=48, N=1, Wstride=1),
                        "L3[WIO] C2 P5 - L2[WI] K16X - L1[O] P20 C2 K3 - L0[W] C16X")
    n = dosa_program_features(prog, CFG)
    tiles = list(dosa_matmul_tiles(prog, CFG.dim))
    assert n["matmul"] == 1 and n["tiles"] == len(tiles)
    assert n["array_rows"] == sum(f["max_i"] * f["max_j"] * f["max_k"] * CFG.dim for f, _ in tiles)
    assert n["sp_overflow"] >= 1 and n["input_row_bytes"] == CFG.dim


def test_matmul_tiles_are_dim_blocks_clamped_to_the_matrix():
    layer = dict(R=1, S=1, P=100, Q=1, C=64, K=48, N=1, Wstride=1)
    prog = dosa_program(layer, "L3[WIO] C2 P5 - L2[WI] K3X - L1[O] P4 C2 - L0[W] C16X")
    tiles = [f for f, _ in dosa_matmul_tiles(prog, 16)]
    # tile I = 4 blocks of 16, J = 3 blocks, K = 32 blocks (> the 4 the matrix has): 2 x 1 x 1 tiles
    assert [(t["max_i"], t["max_j"], t["max_k"]) for t in tiles] == [(4, 3, 4), (3, 3, 4)]
    assert tiles[-1]["pad_i"] == 7 * 16 - 100 and all(t["c_addr"] for t in tiles)


def test_timing_extrapolates_close_to_the_full_simulation():
    prog = dosa_program(CONV, CONV_MAPPING)
    exact, flag = time_dosa_program(prog, CFG, lambda: TimingModel(CFG), command_budget=10 ** 9)
    approx, extrapolated = time_dosa_program(prog, CFG, lambda: TimingModel(CFG), command_budget=300)
    assert not flag and extrapolated
    assert approx == pytest.approx(exact, rel=0.25)
    macs = 14 * 14 * 32 * 48 * 9
    assert exact > macs / CFG.dim ** 2
    assert rtl_row_cycles(CONV, CONV_MAPPING, command_budget=10 ** 9) == exact


def test_more_cpu_work_per_tile_is_slower():
    from dataclasses import replace
    from baco.sim.timing import DEFAULT_CONSTANTS
    slow = replace(DEFAULT_CONSTANTS, library_tile_instructions=5000)
    assert rtl_row_cycles(CONV, CONV_MAPPING, constants=slow) > rtl_row_cycles(CONV, CONV_MAPPING)


def test_rtl_calibration_benchmark_smoke(capsys):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).parents[1] / "benchmarks" / "rtl_calibration.py"
    spec = importlib.util.spec_from_file_location("rtl_calibration", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert "cycle model (DOSA's program)" in out and "MAPE" in out

