"""One capacity rule for convolutions: every design the tuner returns for a convolution layer
compiles with its mapping's own tile (not the conv default) on its own hardware and runs
bit-exact (property test over random designs: a fast subset here, 100 with -m slow); the tuner's
capacity need of a conv mapping is what the compiler places for its tile's schedule."""
import numpy as np
import pytest
import torch

from baco.design import run_conv
from baco.gemmini.schedule import gemm_footprint, schedule_problems
from baco.problem.layer import Layer
from baco.tuner.explore import NetworkProblem, random_tilings
from baco.tuner.points import stack_tilings
from baco.tuner.hwinfer import mapping_requirement, minimal_hardware
from baco.tuner.mapping import KERNEL_OUT_INT8, conv_schedule, conv_tile_schedule, is_kernel_layer, validate
from tests.test_loop import random_tuned_designs


def random_conv_layer(rng) -> Layer:
    """A small random (ragged) convolution: filters 1-5, strides 1-2, dilation 1-2, batch 1-2. Not
    a GEMM layer (mapping.is_kernel_layer: a 1x1 stride-1 layer of one image column), which the
    search and the compiler run with the GEMM kernel's schedule (test_loop's random designs)."""
    while True:
        R = int(rng.choice([1, 1, 2, 3, 3, 5]))
        S = R if rng.random() < 0.8 else int(rng.choice([1, 3]))
        stride, dilation = int(rng.choice([1, 1, 2])), int(rng.choice([1, 1, 1, 2]))
        layer = Layer(R=R, S=S, P=int(rng.choice([1, 2, 3, 5, 7])), Q=int(rng.choice([1, 4, 7, 9, 17])),
                      C=int(rng.choice([1, 3, 8, 17, 33, 64])), K=int(rng.choice([1, 5, 16, 17, 40])),
                      N=int(rng.choice([1, 1, 2])), Hstride=stride, Wstride=stride, Hdilation=dilation,
                      Wdilation=dilation)
        if not is_kernel_layer(layer):
            return layer


def random_conv_designs(n, seed):
    return random_tuned_designs(n, seed, random_conv_layer)


def check_conv_design(layer, mapping, hw, schedule):
    assert validate(mapping, layer, hw) == []
    cfg = hw.to_gemmini_config()
    compiled, source = conv_schedule(mapping, layer, cfg)
    assert source == "tuned" and compiled == schedule            # the tile the search costed, not the default
    tile = conv_tile_schedule(mapping, layer)
    assert (schedule.block_m, schedule.block_n, schedule.block_k, schedule.rows) == \
        (tile.block_m, tile.block_n, tile.block_k, tile.rows)
    assert schedule_problems(schedule, cfg, KERNEL_OUT_INT8) == []
    ok, report, _ = run_conv(layer, cfg, schedule, functional_macs=1e5)   # compiles: no capacity error
    assert ok, (layer, schedule, cfg.dim, cfg.sp_kb, cfg.acc_kb)
    assert report["macs"] >= layer.macs


@pytest.mark.parametrize("seed", range(1, 4))
def test_random_tuned_conv_designs_compile_and_run_bit_exact(seed):
    for design in random_conv_designs(2, seed):
        check_conv_design(*design)


@pytest.mark.slow
def test_100_random_tuned_conv_designs_compile_and_run_bit_exact():
    designs = random_conv_designs(100, 1000)
    for design in designs:
        check_conv_design(*design)
    assert any(d[3].rows > 1 for d in designs) and any(d[3].double_buffer for d in designs)


def test_tuner_conv_capacity_is_the_compilers():
    # the tuner's (differentiable) need of a conv mapping is exactly gemm_footprint of its tile's
    # schedule on the array it runs on
    for layer, mapping, hw, _ in random_conv_designs(40, 7):
        cfg = hw.to_gemmini_config()
        fp = gemm_footprint(conv_tile_schedule(mapping, layer), cfg, KERNEL_OUT_INT8)
        need = mapping_requirement(layer, mapping, cfg.dim)
        assert need.sp_kb == fp.sp_rows * cfg.dim * cfg.input_bytes / 1024
        assert need.acc_kb == fp.acc_rows * cfg.dim * cfg.acc_bytes / 1024
        assert minimal_hardware([layer], [mapping]).pe_dim == hw.pe_dim


def test_network_buffer_needs_stack_gemm_and_conv_layers():
    # one stacked call over GEMM and convolution layers gives each layer's own need
    rng = np.random.default_rng(3)
    layers = [random_conv_layer(rng) for _ in range(4)] + [Layer(P=33, C=17, K=40)]
    problem = NetworkProblem(layers, max_pe=16)
    tilings = random_tilings(problem, 3, torch.Generator().manual_seed(3))
    stacked = [stack_tilings(ts) for ts in tilings]
    sp, acc = problem.buffer_needs([s[0] for s in stacked], [s[1] for s in stacked], 16.0)
    for i, layer in enumerate(layers):
        for b in range(3):
            need = mapping_requirement(layer, tilings[i][b].to_mapping(), 16)
            assert float(sp[i, b]) == pytest.approx(need.sp_kb) and float(acc[i, b]) == pytest.approx(need.acc_kb)
