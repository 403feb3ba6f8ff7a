"""The compiled fused GEMM chain on the loop unit (baco.passes.chain_loop_ws: gemm_chain_launch's
program as two LOOP_WSs on Gemmini master's ext-spad commands): bit-exact against the unfused numpy
reference on ragged shapes at DIM 8 and 16 on the host JIT and the ISS, race-free on the cycle
model, H never in DRAM; the explicit stream where the option is off or the chain does not fit;
whole models (baco.compile_model) run it."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import baco
from baco.codegen.program import run_program
from baco.gemmini.config import GemminiConfig
from baco.gemmini.fused import chain_loop_tiles, gemm_chain_loop_ws_blocks
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.fused import gemm_chain_kernel, gemm_chain_launch
from baco.model.zoo import mlp, seeded_inputs
from baco.options import CompileOptions
from baco.passes.pipeline import run_pipeline
from baco.sim.timing import TimingModel
from baco.tuner.workloads import gemm
from tests.test_fused_programs import chain_operands, chain_reference

CONFIGS = {8: replace(GemminiConfig.from_capacity(8, 64, 64), mvout_spad=True),
           16: replace(GemminiConfig(), mvout_spad=True)}
SHAPES = [(1, 1, 1, 1), (17, 33, 65, 1), (65, 17, 33, 65), (33, 65, 17, 33), (65, 65, 65, 17), (1, 17, 1, 65),
          (17, 1, 17, 17), (33, 33, 33, 33)]


def loop_form_loops(M, H, N, block_m, dim) -> int:
    """LOOP_WSs of the loop form's programs (chain_loop_tiles' loops of each layer) and the launch's
    last, of one block, that gives a loop slot its scratchpad half back (_restore_halves)."""
    return 1 + sum(len(list(chain_loop_tiles(-(-min(block_m, M - r0) // dim), 0, -(-cols // dim), 0)))
               for r0 in range(0, M, block_m) for cols in (H, N))


def loop_form_commands(M, H, N, block_m, dim) -> int:
    """RoCC commands of the loop form's programs: each config_ex, 3 config_ld, 2 config_st and a
    config_ld between the layers (config elimination drops some after the first program), and
    funct 24 with LOOP_WS's six per loop, and the other slot's half back (a funct 24)."""
    return -(-M // block_m) * (1 + 3 + 2 + 1) + 7 * loop_form_loops(M, H, N, block_m, dim) + 1


def launch_of(M, K, H, N, cfg, relu1, relu2, seed=0):
    x, w1, b1, w2, b2, s1, s2 = chain_operands(M, K, H, N, seed=seed + M + 3 * K + 5 * H + 7 * N)
    launch = gemm_chain_launch(x, w1, b1, w2, b2, scale1=s1, scale2=s2, relu1=relu1, relu2=relu2, config=cfg)
    return launch, chain_reference(x, w1, b1, w2, b2, s1, s2, relu1, relu2)


def loop_form_ir(launch) -> str:
    """The launch's program after chain-loop-ws."""
    names = ["x_ptr", "w1_ptr", "y_ptr", "w2_ptr", "b1_ptr", "b2_ptr", "M", "K", "H", "N", "scale1", "scale2"]
    values = dict(zip(names, launch.args), **{k: v for k, v in launch.options.items() if k.isupper()})
    params, _, _ = gemm_chain_kernel.specialize(values)
    options = CompileOptions.of(config=launch.config, double_buffer=launch.options["double_buffer"])
    return run_pipeline(gemm_chain_kernel.baco_ir(params), options, until="chain-loop-ws").stage_ir["chain-loop-ws"]


@pytest.mark.parametrize("dim", [8, 16])
@pytest.mark.parametrize("M,K,H,N", SHAPES)
def test_loop_form_bit_exact_and_race_free(dim, M, K, H, N):
    relu1, relu2 = (M + H) % 2 == 1, N % 2 == 1
    launch, ref = launch_of(M, K, H, N, CONFIGS[dim], relu1, relu2)
    blocks = gemm_chain_loop_ws_blocks(M, K, H, N, CONFIGS[dim])
    assert launch.options["BLOCK_M"] == blocks.block_m and launch.grid == (-(-M // blocks.block_m), 1)
    assert "instgem.loop_ws_config_spad_ab" in loop_form_ir(launch)
    info = launch.run("sim")
    np.testing.assert_array_equal(launch.y, ref)
    assert info["commands"] <= loop_form_commands(M, H, N, blocks.block_m, dim)
    report = launch.cycles()              # the cycle model raises DataRace on a reordering hazard
    assert report["dram_bytes_out"] == M * N        # only Y leaves the chip: H stays in the scratchpad


@pytest.mark.parametrize("dim,M,K,H,N", [(8, 65, 17, 33, 17), (16, 33, 65, 17, 65)])
def test_loop_form_on_the_iss(dim, M, K, H, N):
    launch, ref = launch_of(M, K, H, N, CONFIGS[dim], True, False, seed=1)
    stats = launch.run("iss")["result"].stats
    np.testing.assert_array_equal(launch.y, ref)
    loops = loop_form_loops(M, H, N, launch.options["BLOCK_M"], CONFIGS[dim].dim)
    assert stats["loop_ws"] == loops and stats["loop_ws_config_spad_ab"] == loops + 1
    # H's DIM x DIM blocks leave the accumulator for the scratchpad (MVOUT_SPAD), Y's for DRAM
    d = CONFIGS[dim].dim
    assert stats["mvout_spad"] == -(-M // d) * -(-H // d) and stats["mvout"] > 0


def test_explicit_stream_without_the_option_or_when_the_chain_does_not_fit():
    cfg = CONFIGS[16]
    off, _ = launch_of(33, 65, 17, 33, GemminiConfig(), True, False)
    assert "instgem" not in loop_form_ir(off)
    # W1 (K x H) fills most of the scratchpad: the loop form's whole-K X homes do not fit beside it,
    # the explicit stream's K blocks do (a K loop of several steps: the loop form is not taken at
    # run time, test_a_k_wider_than_the_block_runs_the_explicit_stream)
    K, H = 960, 256
    assert gemm_chain_loop_ws_blocks(16, K, H, 16, cfg) is None
    big, _ = launch_of(16, K, H, 16, cfg, False, False)
    assert big.options["BLOCK_K"] < K


def test_a_k_wider_than_the_block_runs_the_explicit_stream():
    """The loop form is taken at run time only where K fits one step: a program launched with a
    BLOCK_K below K (the kernel called directly) keeps the original ops."""
    launch, ref = launch_of(33, 65, 17, 33, CONFIGS[16], True, True)
    launch.options["BLOCK_K"] = 32
    assert "instgem.loop_ws_config_spad_ab" in loop_form_ir(launch)
    info = launch.run("sim")
    np.testing.assert_array_equal(launch.y, ref)
    assert info["commands"] > loop_form_commands(33, 17, 33, launch.options["BLOCK_M"], 16)  # the explicit stream


def test_mlp_with_a_fused_pair_runs_the_loop_form_on_sim_and_iss(tmp_path):
    """baco.compile_model on a design (a result.json, as `baco run --design` reads it) whose Gemmini
    has the ext-spad commands and a fused linear -> linear edge: one gemm_chain_kernel launch at the
    loop form's blocks, bit-exact on the host JIT and as one ELF on the ISS."""
    sizes, rows = (40, 96, 48, 24), 20
    model, x = mlp(sizes), seeded_inputs((rows, sizes[0]), 1)[0]
    cfg = CONFIGS[16]
    design = {"gemmini_config": cfg.to_dict(), "layers": [], "fusion": {"edges": [
        {"producer": "0", "consumer": "2", "kind": "gemm-gemm", "fused": True}]}}
    (tmp_path / "result.json").write_text(json.dumps(design))
    compiled = baco.compile_model(model, x, design=str(tmp_path / "result.json"))
    launches = [launch for step in compiled.lowered.steps for launch in getattr(step, "launches", [])
                if launch.kernel is gemm_chain_kernel]
    assert len(launches) == 1 and launches[0].config.mvout_spad
    assert launches[0].options["BLOCK_M"] == gemm_chain_loop_ws_blocks(rows, sizes[0], sizes[1], sizes[2], cfg).block_m
    assert "instgem.loop_ws_config_spad_ab" in loop_form_ir(launches[0])
    for target in ("sim", "iss"):
        r = compiled.check(x, target=target)
        assert r["bit_exact"] and r["first_mismatch"] is None, target


def test_other_chained_dots_are_left_to_the_explicit_stream():
    """The example MLP's chained dots (no bias rows, a grid over the output's columns too: W2's
    window moves with program_id(1)) are not the chain's nest: unchanged on the ext-spad Gemmini."""
    placed = (Path(__file__).parent / "ir" / "chain-loop-ws" / "ws_chained_dot.mlir").read_text()
    out = run_pipeline(placed, CompileOptions.of(config=CONFIGS[16]), start="chain-loop-ws", until="chain-loop-ws")
    assert "instgem" not in out.stage_ir["chain-loop-ws"]


def test_loop_ws_after_the_chain_gets_its_scratchpad_halves_back(tmp_path):
    """A loop slot keeps what funct 24 placed, so a LOOP_WS kernel after the chain (the MLP's last
    linear, at a schedule of many K steps) read its B where the chain had put its slot's and the
    other slot's loads landed on it: a DataRace on the cycle model before the chain's launch gave
    the slots their halves back. Bit-exact and race-free as one ELF on the ISS."""
    sizes, rows = (40, 96, 48, 64), 64
    model, x = mlp(sizes), seeded_inputs((rows, sizes[0]), 1)[0]
    cfg = replace(GemminiConfig.from_capacity(16, 512, 256), mvout_spad=True)
    last = gemm(rows, sizes[2], sizes[3])
    layer = {k: v for k, v in last.__dict__.items() if k not in ("name", "count")}
    design = {"gemmini_config": cfg.to_dict(), "fusion": {"edges": [
        {"producer": "0", "consumer": "2", "kind": "gemm-gemm", "fused": True}]},
        "layers": [{"layer": layer, "name": last.name, "count": 1, "schedule": GemmSchedule(16, 64, 16).to_dict()}]}
    compiled = baco.compile_model(model, x, design=design, calibrate=2)
    assert [s.schedule_source for s in compiled.lowered.steps if s.launches[0].kernel is not gemm_chain_kernel] == \
        ["tuned"]
    run = run_program(compiled.build_elf(tmp_path / "mlp.elf", x), timing=TimingModel(cfg))
    assert run.passed
