"""A layer's int32 bias (Layer.bias) in the tuner: the key and result.json keep it, the search
prices it (the bias blocks every program of a whole model's convolutions and linear layers moves
into the accumulator), and a design's check runs the layer with its bias, so that it measures
what the model priced."""
import dataclasses

import pytest
import torch
from torch import nn

from baco.design import check_design, layer_of
from baco.gemmini.schedule import GemmSchedule
from baco.model.compile import compile_model
from baco.model.workload import workload_of
from baco.problem.layer import Layer, layer_from_key
from baco.tuner.arch import Hardware
from baco.tuner.default_mapping import default_mapping
from baco.tuner.emit import result_dict
from baco.tuner.explore import coexplore
from baco.tuner.kernel_model import evaluate
from baco.tuner.mapping import schedule_mapping
from baco.tuner.workloads import gemm, layers_from_torch

HW = Hardware(16, 256, 64)


def test_key_and_shape_keep_the_bias():
    conv = Layer(R=3, S=3, P=9, Q=9, C=1, K=16, depthwise=True, bias=True)
    assert conv.key.endswith("_dw_b") and layer_from_key(conv.key) == dataclasses.replace(conv, name=conv.key)
    assert Layer(**conv.shape) == conv
    old = "1_1_32_32_16_96_1_1_1_1_1"           # a key written before layers had a bias
    assert layer_from_key(old) == Layer(P=32, Q=32, C=16, K=96, name=old) and not layer_from_key(old).bias
    assert "bias" not in Layer(P=32, Q=32, C=16, K=96).shape      # DOSA's workloads: result.json unchanged
    with pytest.raises(ValueError, match="numbers"):
        layer_from_key("1_1_32_32_b")


@pytest.mark.parametrize("layer, schedule", [
    (gemm(64, 256, 512, bias=True), GemmSchedule(64, 64, 64)),                    # a linear layer: LOOP_WS
    (gemm(64, 256, 512, bias=True), GemmSchedule(64, 64, 64, dataflow="OS")),     # the explicit stream
    (Layer(P=32, Q=32, C=16, K=96, bias=True), None),                             # 1x1: the default mapping
    (Layer(R=3, S=3, P=16, Q=16, C=32, K=32, bias=True), None),
    (Layer(R=3, S=3, P=16, Q=16, C=1, K=32, depthwise=True, bias=True), None),
])
def test_bias_priced_above_the_layer_without(layer, schedule):
    """The search's cost of a mapping (kernel_model.evaluate) is higher with the bias, in cycles and
    energy, and so is Gemmini-default's (the C library's program, with its bias)."""
    without = dataclasses.replace(layer, bias=False)
    mapping = default_mapping(without, HW) if schedule is None else schedule_mapping(without, schedule, HW.pe_dim)
    for program in ("baco", "library"):
        biased, plain = evaluate(layer, mapping, HW, program=program), evaluate(without, mapping, HW, program=program)
        assert biased.cycles > plain.cycles and biased.energy_uj > plain.energy_uj, program
    timeloop = evaluate(layer, mapping, HW, cycle_model="timeloop")     # Timeloop's problems have no bias
    assert timeloop.cycles == evaluate(without, mapping, HW, cycle_model="timeloop").cycles


def test_searched_design_keeps_and_runs_the_bias():
    """MobileNetV2's (64x64) features.2.conv.0.0, 1x1 16->96 over 32x32 pixels, whose bias loads
    outweigh its A and B: result.json keeps the flag, `baco run --design` runs the layer with a
    bias, bit-exact, and the search's end-to-end cycles are within 10% of the ISS's."""
    layer = Layer(P=32, Q=32, C=16, K=96, bias=True, name="features.2.conv.0.0")
    # not the default Gemmini, where the C library's program is the search's answer (no kernel to check)
    design = result_dict([layer], coexplore([layer], steps=10, starts=2, random_pool=8, polish=False, progress=False,
                                            fixed_hw=Hardware(16, 128, 32)))
    entry = design["layers"][0]
    assert entry["layer"]["bias"] is True and layer_of(entry) == dataclasses.replace(layer, name=entry["name"])
    (check,) = check_design(design, progress=None)
    assert check.bit_exact
    assert check.end_to_end.cycles == pytest.approx(check.predicted.cycles, rel=0.10)
    assert check.simulated.energy_uj == pytest.approx(check.predicted.energy_uj, rel=0.02)


class LinearsAndMatmuls(nn.Module):
    """x @ W of a parameter (a linear layer to the compiler), two activation matmuls, a Linear, a conv."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.w = nn.Parameter(torch.randn(16, 24))
        self.fc = nn.Linear(24, 8)

    def forward(self, x):
        h = torch.matmul(self.conv(x).flatten(2).transpose(1, 2), self.w)
        return self.fc(torch.matmul(torch.matmul(h, h.transpose(-2, -1)), h))


def test_the_torch_importer_gives_a_bias_where_the_compiled_model_has_one():
    """`baco tune --torch`'s layers (workloads.layers_from_torch) and the compiled model's
    (baco.model.workload.workload_of, the keys a design's schedules are matched by) agree: the conv,
    the linear and the matmul by a parameter have a bias, attention-like activation matmuls none."""
    model, x = LinearsAndMatmuls().eval(), torch.randn(1, 3, 5, 5)
    imported = {layer.key: layer.bias for layer in layers_from_torch(model, x)}
    workload = workload_of(compile_model(model, x, calibrate=1).lowered)
    compiled = {layer.key: layer.bias for layer in workload.layers + workload.untuned.gemms}
    assert imported == compiled and sorted(imported.values()) == [False, False, True, True, True]
