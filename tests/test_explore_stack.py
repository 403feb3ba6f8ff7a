"""NetworkCost stacks the convolutions of a network (explore.LayerStack through
kernel_model.conv_program): the same values, schedule choices and gradients as costing each layer alone."""
import pytest
import torch

from baco.problem.layer import Layer
from baco.tuner import kernel_model
from baco.tuner.explore import LayerStack, NetworkCost, NetworkProblem, random_tilings
from baco.tuner.points import stack_tilings
from baco.tuner.mapping import is_kernel_layer, is_pointwise
from baco.tuner.workloads import load_network

# ragged and corner-case convolutions: 1-pixel and odd images, a folded K loop (pointwise, C = 1),
# strided 1x1, a dilated 3x3, a 7x7/2 stem on 3 channels, a batch of 2, a 1-D conv
RAGGED = [Layer(R=1, S=1, P=17, Q=33, C=1, K=65), Layer(R=1, S=1, P=1, Q=1, C=65, K=17, N=3),
          Layer(R=1, S=1, P=7, Q=7, C=64, K=33, Hstride=2, Wstride=2), Layer(R=3, S=3, P=17, Q=17, C=33, K=65,
                                                                                Hdilation=2, Wdilation=2),
          Layer(R=7, S=7, P=65, Q=65, C=3, K=64, Hstride=2, Wstride=2), Layer(R=3, S=3, P=1, Q=1, C=17, K=1, N=2),
          Layer(R=1, S=5, P=1, Q=33, C=16, K=17), Layer(R=1, S=1, P=33, Q=17, C=17, K=16, N=2)]
# pe, sp_kb, acc_kb per point: roomy, the default Gemmini, and tiny ones where no tile fits
# (the conv kernel's default schedule)
HARDWARE = [(128.0, 2048.0, 512.0), (16.0, 256.0, 64.0), (4.0, 2.0, 1.0), (32.0, 32.0, 16.0), (2.0, 1.0, 1.0),
            (64.0, 512.0, 128.0)]


def _points(layers, n, seed):
    problem = NetworkProblem(layers)
    pool = random_tilings(problem, n, torch.Generator().manual_seed(seed))
    return problem, [stack_tilings(ts) for ts in pool]


# the three whole networks take minutes each (ResNet-50: 127 CPU s in session 11, most of it the
# default conv schedule ranking its LoopConv candidates on the small hardware points). Session 12
# made that walk extrapolate channel-split programs (baco.gemmini.loop_conv_timing): the LoopConv
# search over ResNet-50's 3x3/7x7 layers at (4, 2, 1) fell from 12.8 to 2.3 CPU s, yet at (2, 1, 1)
# it still takes 15.6 (35 M tiles, 14% walked: each block of programs walks until periodic), and
# the default GEMM schedule's LoopMatmul walks (pointwise layers, each conv's starting schedule)
# weigh as much, so the cases stay slow (ResNet-50 measured after: 250 CPU s at a load average of ~15,
# torch's threads counted); the ragged stack runs the same code in seconds
@pytest.mark.parametrize("network", [pytest.param(n, marks=pytest.mark.slow) for n in ("resnet50", "unet", "retinanet")]
                         + ["ragged"])
def test_network_cost_stacks_convolutions_as_per_layer_calls_bit_for_bit(network):
    layers = RAGGED if network == "ragged" else load_network(network)
    convs = [i for i, l in enumerate(layers) if not is_kernel_layer(l)]
    assert {is_pointwise(layers[i]) for i in convs} == {True, False}     # both conv groups are stacked
    n = 2 * len(HARDWARE)
    problem, stacked = _points(layers, n, seed=len(layers))
    hw = tuple(torch.tensor([h[k] for h in HARDWARE] * 2, dtype=torch.float64) for k in range(3))
    for t, _, _ in stacked:
        t.requires_grad_()
    temporal, spatial, order = ([s[k] for s in stacked] for k in range(3))
    cycles, energy = problem.network_cost.per_layer(temporal, spatial, order, hw)
    alone = NetworkCost(problem.layers, problem.counts, problem.cycle_model, stacked=False)
    with torch.no_grad():
        reference = alone.per_layer(temporal, spatial, order, hw)
    assert torch.equal(cycles, reference[0]) and torch.equal(energy, reference[1])    # every layer, GEMMs too
    edp = (cycles.sum(0) * energy.sum(0)).sum()
    assert torch.isfinite(edp)
    grads = torch.autograd.grad(edp, temporal)
    for i in convs:
        c, e, _ = kernel_model.conv_program(layers[i], temporal[i], spatial[i], hw)
        w = float(layers[i].count)
        assert torch.equal(cycles[i], w * c) and torch.equal(energy[i], w * e)
        others = [(x.sum(0) - x[i]).detach() for x in (cycles, energy)]
        (g,) = torch.autograd.grad(((others[0] + w * c) * (others[1] + w * e)).sum(), temporal[i])
        # (the per-layer reconstruction adds back onto sums less this layer: rounding of the order
        # of 1e-12 of the largest gradient element where an element's cycle and energy terms nearly
        # cancel, so the tolerance is relative to that scale)
        scale = float(grads[i].abs().max())
        assert torch.allclose(g, grads[i], rtol=1e-11, atol=1e-12 * scale)
        assert torch.isfinite(grads[i]).all()


def test_conv_program_of_a_stack_is_each_layers_own():
    """Cycles, energy and the schedule variant of a LayerStack's rows (one layer per `rows` rows,
    the conv kernel's default schedule looked up for the right layer) equal each layer's own call."""
    for kind in (True, False):
        layers = [l for l in RAGGED if is_pointwise(l) == kind]
        B = len(HARDWARE)
        problem, stacked = _points(layers, B, seed=3)
        hw = tuple(torch.tensor([h[k] for h in HARDWARE], dtype=torch.float64) for k in range(3))
        stack = LayerStack(layers, B)
        out = kernel_model.conv_program(stack, torch.cat([s[0] for s in stacked]), torch.cat([s[1] for s in stacked]),
                                        tuple(h.repeat(len(layers)) for h in hw))
        for k, (layer, s) in enumerate(zip(layers, stacked)):
            alone = kernel_model.conv_program(layer, s[0], s[1], hw)
            for got, want in zip(out, alone):
                assert torch.equal(got[k * B:(k + 1) * B], want)
        assert (out[2] == kernel_model.CONV_VARIANTS.index("default")).any()     # the default schedule is among them


def test_a_stack_of_pointwise_and_other_convolutions_has_no_one_program():
    stack = LayerStack(RAGGED[:3], 2)
    t, s = torch.ones(6, 4, 7, dtype=torch.float64), torch.ones(6, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="pointwise and other"):
        kernel_model.conv_program(stack, t, s, (16.0, 256.0, 64.0))
