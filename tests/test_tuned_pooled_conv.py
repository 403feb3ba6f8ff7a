"""A tuned design's schedule for a convolution the whole-model compiler fuses with its max-pool (the
ResNet stem): the pooled kernel runs the nearest schedule of its form (baco.kernels.pool.
pool_schedule_from_conv), bit-exact; one whose tile does not fit keeps the pooled kernel's default."""
import torch
from torch import nn

import baco
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.pool import pool_schedule_from_conv
from baco.model.lower import GemminiStep
from baco.model.zoo import seeded_inputs, with_bn_statistics


def stem_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                          nn.Flatten(), nn.Linear(16 * 4 * 4, 10))
    return with_bn_statistics(model.eval(), (1, 3, 16, 16))


def pooled_step(compiled):
    return next(s for s in compiled.lowered.steps if isinstance(s, GemminiStep) and s.op.kind == "conv")


def test_pool_schedule_from_conv_takes_the_rows_that_fit_the_tuned_rows():
    cfg = GemminiConfig.from_capacity(8, 64, 32)
    # 5 conv rows hold two pooled rows of a 3/2 pool ((2 - 1) * 2 + 3), spread over 4 pooled rows
    assert pool_schedule_from_conv(GemmSchedule(8, 16, 8, "WS", True, rows=5), PH=4, Q=8, pool=3, stride=2,
                                   config=cfg) == GemmSchedule(2, 16, 8, "WS", True)
    # fewer conv rows than a window: one pooled row
    assert pool_schedule_from_conv(GemmSchedule(8, 16, 8, rows=1), PH=4, Q=8, pool=3, stride=2,
                                   config=cfg).block_m == 1
    # a tile the scratchpad cannot hold: none
    assert pool_schedule_from_conv(GemmSchedule(8, 16, 4096, rows=8), PH=4, Q=8, pool=3, stride=2, config=cfg) is None


def test_whole_model_runs_the_designs_schedule_for_a_pooled_conv():
    model = stem_model()
    x = torch.randn(1, 3, 16, 16)
    default = baco.compile_model(model, x, calibrate=2)
    layer = pooled_step(default).layer
    assert pooled_step(default).schedule_source == "default"
    config = GemminiConfig.from_capacity(8, 64, 32)
    design = dict(gemmini_config=config.to_dict(),
                  layers=[dict(name="stem", count=1, layer=layer.shape,
                               schedule=GemmSchedule(8, 16, 8, "WS", True, rows=5).to_dict())])
    compiled = baco.compile_model(model, x, design=design, calibrate=2)
    step = pooled_step(compiled)
    assert step.schedule_source == "tuned" and step.launches[0].schedule == GemmSchedule(2, 16, 8, "WS", True)
    for xi in seeded_inputs((1, 3, 16, 16)):
        assert compiled.check(xi)["bit_exact"]
