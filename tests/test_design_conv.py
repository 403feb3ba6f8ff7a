"""`baco tune --verify` on a network with convolutions: conv layers are compiled (baco's conv2d,
with the tuned mapping's tile or the default schedule), run bit-exact against reference_conv2d,
timed on the cycle model beside the C library's tiled_conv_auto on Gemmini-default, and counted
in both network EDPs."""
from __future__ import annotations

import pytest

from baco.cli import main as baco_main
from baco.design import check_design, load_design, run_conv, summary
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.problem.layer import Layer

LAYERS = {  # name: (R, S, P, Q, C, K, N, stride)
    "conv3x3": (3, 3, 6, 5, 8, 16, 2, 1),
    "down1x1": (1, 1, 3, 3, 16, 24, 1, 2),
    "fc": (1, 1, 1, 1, 24, 10, 1, 1),
}


def write_network(folder):
    folder.mkdir()
    for name, (R, S, P, Q, C, K, N, stride) in LAYERS.items():
        (folder / f"{name}.yaml").write_text(
            "problem:\n" + "".join(f"  {k}: {v}\n" for k, v in dict(
                R=R, S=S, P=P, Q=Q, C=C, K=K, N=N, Hstride=stride, Wstride=stride, Hdilation=1, Wdilation=1).items())
            + "  shape: cnn-layer\n")


def test_tune_verify_simulates_conv_layers(tmp_path, capsys):
    net, out = tmp_path / "net", tmp_path / "out"
    write_network(net)
    # a Gemmini other than the default: on it the C library's programs have the lower EDP on layers
    # this small, and the search would return them (nothing of baco's to verify)
    assert baco_main(["tune", "--network", str(net), "--steps", "4", "--hardware", "16,128,32", "--out", str(out),
                      "--quiet", "--verify"]) == 0
    text = capsys.readouterr().out
    assert "every kernel layer bit-exact: True" in text and "no kernel" not in text
    checks = check_design(load_design(out), progress=None)
    s = summary(checks)
    assert s["bit_exact"] and s["kernel_layers"] == s["layers"] == 3
    convs = [c for c in checks if c.layer.R > 1 or c.layer.Hstride > 1]
    assert len(convs) == 2
    for c in convs:
        assert c.simulated.cycles >= c.layer.macs / 16 ** 2 and c.default_simulated.cycles > 0
        assert c.schedule_source in ("tuned", "default")
        assert c.checked_shape == (c.layer.N, c.layer.P, c.layer.Q, c.layer.C, c.layer.K)   # small: all checked
    total = sum(c.count * c.simulated.cycles for c in checks) * sum(c.count * c.simulated.energy_uj for c in checks)
    assert s["simulated"] == pytest.approx(total)      # the convs are in the network EDP


@pytest.mark.parametrize("layer", [Layer(R=3, S=3, P=9, Q=17, C=20, K=33, N=1),
                                   Layer(R=3, S=1, P=5, Q=7, C=17, K=9, N=2, Hstride=2),
                                   Layer(R=1, S=1, P=4, Q=5, C=33, K=17, N=2)])
def test_large_conv_layers_are_timed_on_their_command_stream_and_checked_cut_down(layer):
    cfg = GemminiConfig.from_capacity(8, 16, 8)
    s = GemmSchedule(8, 16, 16)
    ok, full, shape = run_conv(layer, cfg, s)
    assert ok and shape == (layer.N, layer.P, layer.Q, layer.C, layer.K)
    ok, traced, shape = run_conv(layer, cfg, s, functional_macs=0)
    assert ok and shape == (1, 2, min(layer.Q, 16), min(layer.C, 32), min(layer.K, 32))
    assert traced == full             # the same commands: the cycle model cannot tell the difference


def test_strided_1x1_default_takes_the_library_downsampling_path():
    """A 1x1 stride-2 layer reads a 2P x 2Q input in its network (ResNet's shortcut), so the
    C library's default runs it through tiled_conv's downsampling path: a quarter of the input."""
    from baco.design import output_scale, time_default_conv
    from baco.sim.clib import time_conv
    layer = Layer(R=1, S=1, P=14, Q=14, C=64, K=128, N=1, Hstride=2, Wstride=2)
    cfg = GemminiConfig()
    got = time_default_conv(layer, cfg)
    assert got["macs"] == layer.macs
    assert got == time_conv(1, 28, 28, 64, 128, 1, cfg, stride=2, scale=output_scale(64))
    every_pixel = time_conv(1, 27, 27, 64, 128, 1, cfg, stride=2)
    assert got["dram_bytes_in"] < every_pixel["dram_bytes_in"] / 2


def test_tuned_tile_of_whole_rows_runs_its_rows_per_program():
    """A mapping whose on-chip tile holds whole output rows (its Q is the layer's) compiles with
    rows = the tile's P and block_m = Q; a tile of part of a row keeps one row per program."""
    from baco.tuner.mapping import conv_schedule, parse_mapping
    def conv_schedule_for(layer, mapping, cfg):
        return conv_schedule(parse_mapping(mapping), layer, cfg)
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    layer = Layer(R=3, S=3, P=7, Q=7, C=64, K=64, N=1)
    whole = "L3[WIO] P7 - L2[WI] K4 - L1[O] R3 S3 P1 Q7 C4 K1 - L0[W] C16X K16X"
    s, source = conv_schedule_for(layer, whole, cfg)
    assert source == "tuned" and (s.block_m, s.rows) == (7, 1)
    whole_rows = "L3[WIO] K4 - L2[WI] P7 Q7 C4 - L1[O] R3 S3 - L0[W] C16X K16X"
    s, source = conv_schedule_for(layer, whole_rows, cfg)
    assert source == "tuned" and (s.block_m, s.rows) == (7, 7)
    ok, _, _ = run_conv(layer, cfg, s)
    assert ok
