"""The tuner on a Gemmini with master's ext-spad commands (Hardware.ext_spad, `baco tune --ext-spad`):
the flag's round trip (GemminiConfig.mvout_spad, result.json, the Chipyard note), the loop-form
chain's program model (baco.gemmini.fused.gemm_chain_loop_ws_program_cycles) against the compiled
program on the ISS, and a search that fuses a chain edge into the loop form, whose design compiles
and runs bit-exact."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

import baco
from baco.gemmini.config import GemminiConfig
from baco.gemmini.fused import (gemm_chain_loop_ws_blocks, gemm_chain_loop_ws_footprint,
                                gemm_chain_loop_ws_program_cycles, gemm_chain_program_cycles)
from baco.gemmini.loop_ws_timing import LoopWs, loop_ws_stream_cycles
from baco.kernels.fused import gemm_chain_kernel, gemm_chain_launch
from baco.model.zoo import mlp, seeded_inputs
from baco.sim.timing import TimingModel
from baco.tuner import baselines, costmodel, explore, fusion, workloads
from baco.tuner.arch import Hardware
from baco.tuner.cli import main as tune_main
from baco.tuner.emit import chipyard_scala, result_dict
from baco.tuner.kernel_model import gemm_chain_loop_ws_energy
from baco.tuner.points import Tiling
from baco.tuner.relax import ORDER_CHOICES, level_orders
from tests.test_chain_loop_ws import loop_form_ir
from tests.test_fused_programs import chain_operands, chain_reference

EXT = replace(GemminiConfig(), mvout_spad=True)


def test_hardware_carries_the_ext_spad_commands_without_area():
    plain, ext = Hardware(16, 256, 64), Hardware(16, 256, 64, ext_spad=True)
    assert not plain.ext_spad and not plain.to_gemmini_config().mvout_spad
    assert ext.to_gemmini_config() == EXT and Hardware.from_gemmini_config(EXT) == ext
    assert Hardware.from_gemmini_config(GemminiConfig()) == plain
    assert ext.area_mm2 == plain.area_mm2
    assert "Gemmini master" in chipyard_scala(ext) and "Gemmini master" not in chipyard_scala(plain)


def test_cli_ext_spad_applies_to_the_searches_that_carry_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        tune_main(["--op", "gemm", "--M", "16", "--N", "16", "--K", "16", "--method", "random", "--ext-spad",
                   "--out", str(tmp_path)])
    assert e.value.code == 2 and "--ext-spad applies to --method baco, ga, dosa" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no ext-spad commands"):
        explore.NetworkProblem([workloads.gemm(16, 16, 16)], fixed_hw=Hardware(16, 64, 32), ext_spad=True)
    with pytest.raises(TypeError, match="ext_spad must be a bool"):
        explore.NetworkProblem([workloads.gemm(16, 16, 16)], ext_spad=1)


def test_cli_ext_spad_design_round_trips_through_result_json(tmp_path):
    tune_main(["--op", "gemm", "--M", "32", "--N", "32", "--K", "32", "--hardware", "16,64,32", "--ext-spad",
               "--steps", "2", "--quiet", "--out", str(tmp_path)])
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["hardware"]["ext_spad"] is True
    assert GemminiConfig.from_dict(result["gemmini_config"]) == Hardware(16, 64, 32, ext_spad=True).to_gemmini_config()


def test_walk_without_the_new_flags_is_unchanged_and_spad_stores_cost_local_moves():
    """A spad_only loop's stores are local moves (cheaper than int8 stores to DRAM); a loop after a
    raw command waits for the loop before it to have issued everything (never faster)."""
    lp = LoopWs(4, 4, 4, bias=True, full_c=False)
    base = loop_ws_stream_cycles([lp, lp], EXT)["cycles"]
    assert loop_ws_stream_cycles([replace(lp, spad_store=True)] * 2, EXT)["cycles"] < base
    assert loop_ws_stream_cycles([lp, replace(lp, after_raw=True)], EXT)["cycles"] > base


@pytest.mark.parametrize("M, K, H, N", [(17, 33, 65, 17), (96, 128, 96, 128), (1, 17, 33, 65), (65, 17, 33, 65)])
def test_loop_form_model_within_10_percent_of_the_iss(M, K, H, N):
    """The model's end-to-end cycles against the compiled program's (kernel_cycles: the ISS with the
    cycle model attached), and its RoCC commands the program's (every tile's LOOP_WS counted);
    measured 0.95-1.11 on 17 chains (benchmarks/fused_loop_chain.py --compiled-only [--ragged]);
    0.908-1.036 since the table's refit on the constant-grid runner."""
    x, w1, b1, w2, b2, s1, s2 = chain_operands(M, K, H, N, seed=M + K)
    launch = gemm_chain_launch(x, w1, b1, w2, b2, scale1=s1, scale2=s2, relu1=True, config=EXT)
    ck = launch.kernel.compile(*launch.args, target="iss", **launch.options)
    run = ck.run(launch.grid, launch.runtime_args(), timing=TimingModel(EXT))
    assert (launch.y == chain_reference(x, w1, b1, w2, b2, s1, s2, True, False)).all()
    predicted = gemm_chain_loop_ws_program_cycles(M, K, H, N, EXT)
    # the one-row chain 0.8998 since CHAIN_LOOP_WS_INSTRUCTIONS' refit on the constant-grid runner
    # (its instructions 1.16x -> 1.01x of the ISS, median): one-row programs' end to end runs short
    assert (0.89 if M == 1 else 0.9) <= predicted["cycles"] / run["kernel_cycles"] <= 1.1
    # compiled for its shapes, config elimination drops config_lds a program repeats (up to two a
    # program; benchmarks/cpu_constants.py's chain_loop_row): the model's count is their bound
    programs = launch.grid[0]
    assert predicted["commands"] - 2 * programs <= run["commands"] <= predicted["commands"]
    # the walk is a list schedule: a command issued later can start a queue's work in a better order
    # (17x33->65->17 and 65x17->33->65: 0.4% and 0.3% below the walk with commands free)
    assert predicted["cycles"] >= 0.99 * max(predicted["gemmini"], predicted["cpu"])


def test_loop_form_model_needs_the_option_and_a_fitting_block():
    with pytest.raises(ValueError, match="does not run on the loop unit"):
        gemm_chain_loop_ws_program_cycles(64, 64, 64, 64, GemminiConfig())
    with pytest.raises(ValueError, match="does not run on the loop unit"):
        gemm_chain_loop_ws_program_cycles(64, 4096, 4096, 64, EXT)


def assert_runs_on_the_loop_unit_bit_exact(model, x, design: dict):
    """The design (result.json's dict) compiles (baco.compile_model) its one chain to the loop form
    and runs bit-exact on sim and the ISS."""
    compiled = baco.compile_model(model, x, design=design)
    launches = [launch for step in compiled.lowered.steps for launch in getattr(step, "launches", [])
                if launch.kernel is gemm_chain_kernel]
    assert len(launches) == 1 and launches[0].config.mvout_spad
    assert "instgem.loop_ws_config_spad_ab" in loop_form_ir(launches[0])
    for target in ("sim", "iss"):
        r = compiled.check(x, target=target)
        assert r["bit_exact"] and r["first_mismatch"] is None, target


def search(model, x, hw):
    g = fusion.graph_from_torch(model, x)
    return g, explore.coexplore(g.layers, fusion_graph=g, steps=6, starts=2, random_pool=4, polish=False,
                                progress=False, cycle_model="compiled", fixed_hw=hw)


def test_search_fuses_a_chain_on_the_loop_unit_and_the_design_runs_bit_exact():
    """A 20-row 16-16-16 MLP: on Gemmini v0.7.2 its chain edge, where fused, is priced as the
    explicit chain's program (which, since a one-step K loop runs a copy of its body and a bias that
    covers its block needs no zero fill, runs this MLP in 745 cycles on the ISS against the two
    layers' 1,313); on the same Gemmini with the ext-spad commands it is fused, costed as the loop
    form's program, cheaper still; its capacity is the loop form's; the design compiles
    (baco.compile_model) to the loop form and runs bit-exact on sim and the ISS."""
    rows, sizes = 20, (16, 16, 16)
    model, x = mlp(sizes), seeded_inputs((rows, sizes[0]), 1)[0]
    plain_hw = Hardware(16, 64, 32)
    plain_graph, plain = search(model, x, plain_hw)
    (plain_edge,) = plain.fusion["edges"]
    assert not plain_edge["fused"] or plain_edge["group_cycles"] == fusion.fused_program_cycles(
        plain_graph, plain_graph.edges[0], plain.mappings[0], plain_hw)
    hw = Hardware(16, 64, 32, ext_spad=True)
    g, result = search(model, x, hw)
    (edge,) = result.fusion["edges"]
    cfg = hw.to_gemmini_config()
    loop = gemm_chain_loop_ws_program_cycles(rows, *sizes, cfg)["cycles"]
    assert edge["fused"] and edge["group_cycles"] == loop
    assert fusion.fused_program_cycles(g, g.edges[0], result.mappings[0], hw) == loop
    assert loop < gemm_chain_program_cycles(rows, *sizes, 16, 16, cfg)["cycles"]
    terms = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="compiled", fusion_graph=g).fusion_terms
    tensors = [costmodel.mapping_tensors(m) for m in result.mappings]
    sp, acc = terms.held_needs([t for t, _, _ in tensors], [torch.stack([c, k], 1) for _, c, k in tensors], 16.0, hw)
    need = gemm_chain_loop_ws_footprint(gemm_chain_loop_ws_blocks(rows, *sizes, cfg).block_m, 1, *sizes, 16)
    assert float(sp[0, 0]) * 1024 == need.sp_rows * 16 and float(acc[0, 0]) * 1024 == need.acc_rows * 16 * 4
    assert_runs_on_the_loop_unit_bit_exact(model, x, result_dict(g.layers, result))


def test_the_search_costs_a_fused_loop_chain_as_its_program():
    """The descent's and rounding's fused network (FusionTerms.network with loop_programs) takes a
    fused loop-form chain's program cycles in place of its layers' (what fuse_result reports), not
    their DRAM traffic's saving; no such edge without the ext-spad commands or under the
    Timeloop-matched model."""
    rows, sizes = 20, (16, 16, 16)
    g = fusion.graph_from_torch(mlp(sizes), seeded_inputs((rows, sizes[0]), 1)[0])
    hw = Hardware(16, 64, 32, ext_spad=True)
    terms = fusion.FusionTerms(g, "compiled")
    programs = terms.loop_programs(hw)
    # the MLP's linears carry their bias (Layer.bias), so the chain's energy keeps its bias rows
    assert programs == {0: (gemm_chain_loop_ws_program_cycles(rows, *sizes, hw.to_gemmini_config())["cycles"],
                            gemm_chain_loop_ws_energy(rows, *sizes, hw.to_gemmini_config(), bias=True))}
    assert terms.loop_programs(Hardware(16, 64, 32)) == {} and terms.loop_programs(None) == {}
    assert fusion.FusionTerms(g, "timeloop").loop_programs(hw) == {}
    layer = torch.tensor([[700.0, 300.0]], dtype=torch.float64)      # one layer (two instances), B = 2
    zeros, sp = torch.zeros_like(layer), torch.tensor([64.0, 64.0], dtype=torch.float64)
    for on, expected in ((1.0, programs[0][0]), (0.0, 2 * layer[0])):
        sigma = torch.full((2, 1), on, dtype=torch.float64)
        cycles, _ = terms.network(layer, layer, zeros, zeros, sigma, sp, programs)
        assert torch.allclose(cycles, torch.as_tensor(expected, dtype=torch.float64).expand(2))


def mlp_16():
    """A 16-16-16 MLP (one chain edge): `baco tune --torch tests.test_tuner_ext_spad:mlp_16`."""
    return mlp((16, 16, 16))


def tune_mlp_16(out, *extra):
    tune_main(["--torch", "tests.test_tuner_ext_spad:mlp_16", "--input-shape", "20,16", "--fusion", "on",
               "--steps", "6", "--quiet", "--out", str(out), *extra])
    return json.loads((out / "result.json").read_text())


def test_free_hardware_search_with_ext_spad_fuses_the_faster_chain_and_runs_bit_exact(tmp_path):
    """`baco tune --fusion on --ext-spad` without --hardware: the searched Gemmini has the ext-spad
    commands (result.json's hardware and gemmini_config) and the 20-row MLP's chain is fused as the
    program the compiler runs there (its group_cycles): the loop form's where the loop unit holds it,
    else the explicit chain's. The search lands on a 16x16, 1 KB / 4 KB Gemmini, whose loop unit does
    not hold it, with the explicit chain, which is faster (ISS with the cycle model: 644 cycles end to
    end, EDP 246 against the loop form's 752 and 291 on the smallest Gemmini that holds it, 2 KB; the
    unfused pair 1,002). The design compiles to that program and runs bit-exact on sim and the ISS.
    Without --ext-spad the same search fuses the chain as the explicit chain's program too."""
    plain = tune_mlp_16(tmp_path / "plain")
    assert plain["hardware"]["ext_spad"] is False and not plain["gemmini_config"].get("mvout_spad")
    (edge,) = plain["fusion"]["edges"]
    assert edge["fused"] and edge["group_cycles"] < edge["unfused_group_cycles"]
    design = tune_mlp_16(tmp_path / "ext", "--ext-spad")
    hw = Hardware(*(design["hardware"][k] for k in ("pe_dim", "sp_kb", "acc_kb", "ext_spad")))
    assert hw.ext_spad and GemminiConfig.from_dict(design["gemmini_config"]) == hw.to_gemmini_config()
    (edge,) = design["fusion"]["edges"]
    model, x = mlp_16(), seeded_inputs((20, 16), 1)[0]
    g = fusion.graph_from_torch(model, x)
    assert edge["fused"] and design["edp"] < design["fusion"]["unfused_edp"]
    assert fusion.loop_chain_blocks(g.layers[0], g.layers[0], hw) is None
    assert edge["group_cycles"] < edge["unfused_group_cycles"]
    compiled = baco.compile_model(model, x, design=design)
    (launch,) = [launch for step in compiled.lowered.steps for launch in getattr(step, "launches", [])]
    assert launch.kernel is gemm_chain_kernel and "instgem.loop_ws_config_spad_ab" not in loop_form_ir(launch)
    for target in ("sim", "iss"):
        r = compiled.check(x, target=target)
        assert r["bit_exact"] and r["first_mismatch"] is None, target


def test_free_hardware_costs_each_point_on_its_own_ext_spad_gemmini():
    """On inferred hardware every point's Gemmini has the ext-spad commands, and a fused chain costs
    its program on that point's Gemmini, as the design's final costing (fuse_result) does: the
    descent's fused EDP of the design returned is the result's. GA and DOSA-style searches carry
    the commands too. The search lands on a 16x16, 1 KB / 4 KB Gemmini whose loop unit does not
    hold the chain: it is fused as the explicit chain's program (ISS with the cycle model: 644
    cycles end to end against the unfused pair's 1,002; priced 448.9 against 950.6), which the
    descent prices too (it priced the two layers less their DRAM traffic, EDP 350.5 against the
    result's 172.8). Where the loop unit holds it, its program and energy are the loop form's."""
    rows, sizes = 20, (16, 16, 16)
    model, x = mlp(sizes), seeded_inputs((rows, sizes[0]), 1)[0]
    g = fusion.graph_from_torch(model, x)
    result = explore.coexplore(g.layers, fusion_graph=g, steps=6, starts=2, random_pool=4, polish=False,
                               progress=False, cycle_model="compiled", ext_spad=True)
    (edge,) = result.fusion["edges"]
    assert result.hw.ext_spad and edge["fused"] and edge["group_cycles"] < edge["unfused_group_cycles"]
    problem = explore.NetworkProblem(g.layers, cycle_model="compiled", fusion_graph=g, ext_spad=True)
    problem.fusion_mask = torch.ones(1, dtype=torch.bool)
    choice = lambda m: next(c for c in range(len(ORDER_CHOICES)) if level_orders(c) == m.order)  # noqa: E731
    tilings = [[Tiling.from_mapping(m, choice(m))] for m in result.mappings]
    cost = problem.score(tilings)
    assert cost.hardware == [result.hw] and bool(cost.fused[0, 0])
    loop = problem.fusion_terms.loop_programs(result.hw)
    if loop:
        # the search's EDP carries the fused chain's layers at LOOP_LAYERS_TIE_WEIGHT (a tie-breaker);
        # the result's is exact: they differ by about that weight times the layers' share of its cost
        assert float(cost.edp[0]) == pytest.approx(result.edp, rel=1e-4) and float(cost.edp[0]) > result.edp
        program_cycles, program_uj = loop[0]
        assert result.energy_uj == pytest.approx(program_uj, rel=1e-12)   # the one chain fused: its program's
    else:
        assert float(cost.edp[0]) == pytest.approx(result.edp, rel=1e-12)
        program_cycles = fusion.fused_program_cycles(g, g.edges[0], result.mappings[0], result.hw)
    assert program_cycles == edge["group_cycles"] == pytest.approx(result.cycles, rel=1e-12)
    for search in (baselines.genetic, baselines.dosa_style):
        found = search(g.layers, time_budget_s=1.0, cycle_model="compiled", fusion_graph=g, ext_spad=True)
        assert found.hw.ext_spad


def test_a_fused_loop_form_chains_layers_break_ties_by_their_cost_unfused():
    """A fused loop-form chain costs its program whatever its layers' mappings, so the search also
    weighs its layers' unfused cost at LOOP_LAYERS_TIE_WEIGHT: on a fixed Gemmini, designs that
    differ only in the producer's mapping have (nearly) equal fused EDP in the search and exactly
    equal in the result, and of two such designs the one whose layers run faster with less energy
    unfused costs less (the search keeps layers that run well with the fusion off)."""
    rows, sizes = 64, (64, 128, 64)
    model, x = mlp(sizes), seeded_inputs((rows, sizes[0]), 1)[0]
    g = fusion.graph_from_torch(model, x)
    hw = Hardware(16, 256, 64, True)
    problem = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="compiled", fusion_graph=g)
    problem.fusion_mask = torch.ones(1, dtype=torch.bool)
    assert 0 in problem.fusion_terms.loop_programs(hw)
    library = explore.heuristic_tilings(g.layers, hw)
    pool = explore.random_tilings(problem, 48, torch.Generator().manual_seed(0))
    designs = [library] + [[pool[0][b]] + library[1:] for b in range(48)]
    tilings = [[d[i] for d in designs] for i in range(len(g.layers))]
    fused = problem.score(tilings)
    alone = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="compiled").score(tilings)
    valid = [b for b in range(len(designs)) if float(fused.penalty[b]) == 0 and bool(fused.fused[b, 0])]
    assert len(valid) > 10
    edp = fused.edp[valid]
    assert float(edp.max() / edp.min()) < 1 + 1e-3       # the tie-breaker moves the fused EDP little
    unfused_cycles, unfused_uj = alone.cycles[valid], alone.energy_uj[valid]
    assert float(unfused_cycles.max() / unfused_cycles.min()) > 2          # but the layers differ a lot
    dominated = 0
    for i in range(len(valid)):
        for j in range(len(valid)):
            if unfused_cycles[i] < unfused_cycles[j] and unfused_uj[i] < unfused_uj[j]:
                dominated += 1
                assert edp[i] < edp[j]
    assert dominated
    exact = [problem.result(designs[b], "tie", 0.0).edp for b in (valid[0], valid[int(edp.argmax())])]
    assert exact[0] == pytest.approx(exact[1], rel=1e-12)      # the result's fused EDP carries no tie-breaker
