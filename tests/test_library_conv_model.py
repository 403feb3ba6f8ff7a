"""The model of the C library's tiled_conv_auto that predicts Gemmini-default's convolutions
(kernel_model.library_conv_cycles / library_conv_counts): against the cycle model's timing of the
library's command stream (baco.design.time_default_conv), on 3x3/5x5/7x7, strided, downsampling,
first-layer-packed, batched, ragged and depthwise layers on two Gemminis."""
import math

import pytest

from baco.design import default_conv_stream, time_default_conv
from baco.gemmini.config import GemminiConfig
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.problem.layer import Layer
from baco.sim.clib import time_stream
from baco.tuner import kernel_model
from baco.tuner.arch import Hardware
from baco.tuner.default_mapping import default_mapping

STEM = Layer(R=7, S=7, P=28, Q=28, C=3, K=64, Hstride=2, Wstride=2)
LAYERS = [Layer(R=3, S=3, P=7, Q=7, C=64, K=64), Layer(R=1, S=1, P=14, Q=14, C=256, K=64, Hstride=2, Wstride=2),
          STEM, Layer(R=3, S=3, P=4, Q=30, C=33, K=40),
          Layer(R=5, S=5, P=6, Q=9, C=17, K=20, N=2), Layer(R=1, S=1, P=14, Q=14, C=64, K=256),
          # depthwise (tiled_conv_dw_auto), a strided 1x1 one too: the library never downsamples these
          Layer(R=3, S=3, P=9, Q=9, C=1, K=20, depthwise=True),
          Layer(R=1, S=1, P=4, Q=2, C=1, K=17, Hstride=2, Wstride=2, depthwise=True)]


# the stem at DIM 8 (11 of the DIM 8 layers' 21 CPU s) with -m slow: its packed first layer is checked at DIM 16, and
# DIM 8 on the other seven layers
@pytest.mark.parametrize("dim,layer", [pytest.param(dim, layer, marks=pytest.mark.slow) if (dim, layer) == (8, STEM)
                                       else (dim, layer) for dim in (16, 8) for layer in LAYERS],
                         ids=lambda v: v.key if isinstance(v, Layer) else f"dim{v}")
def test_library_conv_model_matches_the_cycle_model(dim, layer):
    cfg = GemminiConfig() if dim == 16 else GemminiConfig.from_capacity(8, 32, 16)
    report = time_default_conv(layer, cfg)
    pred = kernel_model.library_conv_cycles(layer, cfg, end_to_end=False)
    assert 0.85 < report["cycles"] / pred < 1.15, (layer, dim, pred, report["cycles"])
    # end to end: the CPU running the library's tile loop before each LOOP_CONV_WS
    issued = time_stream(default_conv_stream(layer, cfg), cfg,
                         cpu_tile_instructions=DEFAULT_CONSTANTS.library_tile_instructions)["cycles"]
    end_to_end = kernel_model.library_conv_cycles(layer, cfg)
    assert end_to_end > pred and 0.85 < issued / end_to_end < 1.15, (layer, dim, end_to_end, issued)
    # the counts are the simulator's: the same commands (baco.gemmini.loop_conv_stream) counted
    counts = kernel_model.library_conv_counts(layer, cfg)
    assert counts == {key: report[key] for key in counts}, layer
    assert math.isclose(kernel_model.library_conv_energy(layer, cfg), report["energy_uj"], rel_tol=1e-3)


def test_default_predicts_its_convolutions_with_the_library_model():
    layer, hw = LAYERS[0], Hardware(16, 256, 64)
    cost = kernel_model.evaluate(layer, default_mapping(layer, hw), hw, program="library")
    cfg = hw.to_gemmini_config()
    assert cost.cycles == kernel_model.library_conv_cycles(layer, cfg)
    assert cost.energy_uj == kernel_model.library_conv_energy(layer, cfg)
    assert cost.timeloop_cycles != cost.cycles
