"""Fused programs that run (issue I, items 3-4): the tuner's fusion groups compiled by the
whole-model compiler, with and without the chosen fusion, on the cycle model.

    python benchmarks/fused_programs.py [--smoke] [--models mlp,resnet18,mobilenet_v2,bert_layer]
        [--resolution 64] [--sequence 128] [--hardware 16,256,64] [--ext-spad] [--budget S] [--seed N]
    python benchmarks/fused_programs.py --programs [chain,resadd]

Per model: `baco tune --fusion on` on a fixed Gemmini (--hardware, default Gemmini's default
16x16, 256 KB scratchpad, 64 KB accumulator) with the compiled-program cycle model. Its design
compiled by baco.compile_model with the fusion it chose ("chosen"), with every edge that fits
fused (--forced: fusion.fuse_result(require_gain=False), what fusing costs where the search
declines it; a residual add whose producer's tile does not fit its program at the kernels' default
blocks) and with every edge unfused (same Gemmini, same schedules), each linked into one
self-checking bare-metal ELF and run on the ISS with the cycle model (baco.sim.timing).
--ext-spad: the fixed Gemmini has Gemmini master's ext-spad commands (Hardware.ext_spad), so a
linear -> linear or 1x1 -> 1x1 chain whose row block fits (fusion.loop_chain_blocks) runs on the
loop unit (baco.passes.chain_loop_ws) and the tuner prices it as that program.
Measured EDP = end-to-end cycles (the core's rdcycle over every step) x Gemmini energy
(baco.gemmini.energy.energy_pj of the counts the cycle model recorded, as
benchmarks/tuned_models.py measures it). Printed: both programs' cycles, energy and
bit-exactness, the simulated EDP saving beside the predicted one (the tuner's fused against
unfused EDP of the same design; and with the program's CPU steps no edge prices added to both
predicted totals, other_cpu_cycles; and, like for like with the prediction over the layers, the
simulated saving over the steps it covers: every step but those CPU steps, layer_cycles), and
per fused group its program's predicted cycles (the tuner's group_cycles; beside it its layers'
unfused, the price the search weighs it against) beside its step's simulated cycles (and the
two unfused steps it replaces), the blocks its launch ran and, for a producer the design runs at
its kernel's default program, the blocks its edge records (the faster of the kernels' default
blocks and the producer's tile: fusion.fuse_result); then
over every fused group of the run the fused-program model's accuracy as benchmarks/loop_check.py
reports single layers: Pearson r of log cycles and the median relative error (goals r >= 0.95,
median <= 15%).

Models: "mlp", the demo's MLP (batch 64, 256-512-256-64, ReLU between; examples/demo.py);
torchvision's resnet18 and mobilenet_v2 at 1x3xRxR (default 64), seeded random weights with
measured BatchNorm statistics. The fusions the compiler runs (baco.tuner.fusion): linear ->
linear and 1x1 -> 1x1 chains, a linear's or 1x1 convolution's residual add, and a ReLU'd
convolution's max pool (the conv's pooled store; unfused, the conv stores its whole output and
the max pool runs on the core, cpu_ops.max_pool2d). ResNet-18 offers only its stem's max pool (its
residual adds follow 3x3 convolutions): at 64x64 on the default Gemmini the search fuses it
(predicted 69k cycles against 1,397k unfused; simulated 78k against 1,415k) and the program with
it runs 2.03M cycles against 3.36M without (EDP saving simulated 39.6%, predicted 39.4%; the CPU
cost table prices that 32x32x64 max pool at 1,329k cycles, the ISS retires 1,336k instructions
on random data). MobileNetV2 at 64x64 (--budget 20: the design is the build without a design,
every conv marked to run its kernel's default program) offers 12 edges; forced, its 10 residual
adds and one 1x1 -> 1x1 chain run at the faster of the kernels' default blocks and the producer's
tile (the edge's "blocks"; features.3's add at its tile 32/24/48: 11,845 predicted, 12,707
simulated; 24,635 predicted at the default 32/32/48), EDP -14.7% simulated, -11.9% predicted; the
search fuses none, every fused program being slower than its pair unfused (features.3 + add:
8,289 predicted, 8,230 simulated). Its one chain (features.1.conv.1 -> features.2.conv.0.0, 1024 x
32 -> 16 -> 96) was priced 43,916 at 80/32 against 52,716 simulated (the store station's hold on
the next program's mvins and the output tiles' instructions not modelled); with both (session 23)
its edge records the default 32/32, priced 51,854 against 55,968 simulated (80/32 alone, --programs:
53,783 against 52,792); forced EDP -15.0% simulated, -12.4% predicted, the 11 groups' median error
2.6%. With each fused group's energy its program's (session 24: fusion.fused_program_energy, the
counts of baco.gemmini.fused_counts; the design of session 23 again): forced Gemmini energy 975.38
uJ predicted against 973.26 simulated (the traffic model 948.38), EDP -15.9% simulated, -16.7%
predicted (-13.5% with the groups' energy by the traffic model), the groups' median error 1.0%.
"bert_layer": the BERT layer of benchmarks/models.py (baco.tuner.torch_models'
bert_base_layer, input 1 x --sequence x 768). Its torch.nn.TransformerEncoder, one fx leaf, is
expanded in the fusion graph (fusion._encoder_layer): its 8 GEMMs per layer by module path, and
two edges, the residual adds of the attention's output projection (layers.0.self_attn.out_proj ->
layers.0.add; the capture names that linear by its weight's module and the add reads its rows
through a reshape, a view: baco.model.graph, baco.model.lower) and of the feed-forward's second
linear (layers.0.linear2 -> layers.0.add_1); linear1 -> linear2 has GELU between, a CPU lookup
table (under ReLU it is an edge), the attention's products softmax. Predicted totals are over the
layers; the program's other CPU steps (softmax, layer norms, GELU: other_cpu_cycles, by the CPU
cost table; 2,648,998 cycles at sequence 32) are printed beside them and the saving's ratio given
with them added to both. At --sequence 32 (seed 0, --budget 30: 126 s, the design varies with the
time budget) the search fuses neither (each fused program slower than its pair unfused); forced,
both, out_proj's at the default 32/32/64 (its tile needs 72 KB of the 64 KB accumulator):
unfused 3,605,425 cycles, 1368.78 uJ simulated (974,913 cycles over the layers, 1384.30 uJ
predicted); forced 3,953,108 cycles, 1444.59 uJ (1,254,737, 1374.47 uJ); bit-exact both; EDP
saving -15.7% simulated, -27.8% predicted over the layers, -7.0% with the CPU steps (neither
within 25%). The groups' cycles match (out_proj + add 127,870 predicted, 123,855 simulated, unfused
85,828 / 84,672; linear2 + add 557,278 / 626,853, unfused 319,496 / 318,337; median error 7.2%),
the energy does not: fused, the tuner's traffic model lowers it 0.7%, the program spends 5.5% more
(the residual add's identity product on the array and its operands' loads, which the traffic
model does not price). --seed 1 forces both at 32/32/64: -29.1% simulated, -12.4% / -3.0%
predicted, Gemmini energy +28% simulated against -0.8% predicted (at 32-column blocks the fused
program reads the layer's input once per block: the traffic model prices the producer's mapping,
not the blocks its program runs), the groups' cycles 4.5% median error. Without the fallback to default blocks (fusion._block_choices) forced
fused at most out_proj, where its tile fit (one run of six at seed 0-4: -5.5% simulated, -10.0% predicted over the layers).
With each fused group's energy its program's counts (session 24: fusion.fused_program_energy;
both adds forced at 32/32/64, out_proj's 177.40 uJ against 119-122 unfused, linear2's 641.74
against 371-429): seed 0 forced 1632.08 uJ predicted, 1607.99 simulated (unfused 1363.62 /
1339.87), EDP -25.2% simulated, -25.8% predicted with the CPU steps, -42.4% over the layers (the
groups' energy by the traffic model: 1353.79 uJ, -18.1% over the layers); seed 1 1613.42 against
1597.48 uJ, -27.2% simulated, -31.0% predicted with the CPU steps, -45.1% over the layers (traffic
model 1274.66 uJ, -14.6%): within 25% with the CPU steps (2.65M of the program's 3.76M cycles),
not over the layers alone.
With both fused kernels compiled for their shapes and grid (specialize_shapes="iss") and the
residual add's default BLOCK_N at most 2·DIM (seed 0; BERT --budget 30, MobileNetV2 --budget 20):
the BERT layer's fused programs are not core-bound but DMA-bound (out_proj + add at 32/32/32: 61k
instructions, 4.7 a command, under 113k cycles; the load unit busy 91k of Gemmini's 110k, 1.35 MB
in: X re-read by each of the 24 column blocks), so neither changes (113,005 and 399,900 simulated;
the search still fuses neither; forced EDP -25.1% simulated, -38.8% predicted over the layers,
-28.8% with the CPU steps). MobileNetV2's forced program runs 723,981 cycles against 752,061
(EDP -7.1% simulated, -10.0% predicted; before -11.8%, -16.6%), its 11 groups' median error 0.5%;
features.12's add 10,383 simulated against 10,096 unfused, features.8's 5,056 against 4,879, but
the tuner prices those pairs at 5,176 and 2,726, so the search fuses none.
FUSED_INSTRUCTIONS with terms that see what the grid folds (a grid of one program, a larger
grid's axes, a short last K step; --programs): the core's instructions chain median error 25.3%
-> 7.1% (0.56-1.66x -> 0.53-1.43x), residual add 16.2% -> 14.4% (0.49-2.29x -> 0.60-1.97x; its
DIM 32 and 64 programs, not in the fit, 1.07-1.97x), end to end chain 2.8% -> 3.2%, residual add
3.5% -> 2.9% (0.57-1.16x -> 0.73-1.18x). MobileNetV2 (--budget 20) with dw_pw_kernel also
specialized: unchanged, the search fuses nothing; forced 723,981 cycles, EDP -7.1% simulated,
-10.0% predicted, its 11 groups' median error 1.3% (dw-pw edges are not offered to the compiled
model: fusion.PROGRAM_LOSING_KINDS; the fused program is still 1.78-2.81x its pair unfused,
benchmarks/dw_pw_programs.py --pairs).

--smoke: a 20-row 40-96-48-24 MLP, a short search (the tests' size; with --ext-spad its first
chain runs on the loop unit). Exits 0 iff every program is bit-exact.
--programs [chain,resadd]: no whole model; the GEMM chain programs of CHAIN_PROGRAMS and the GEMM +
residual add programs of RESADD_PROGRAMS (or the kinds named), each against baco.gemmini.fused's
model: Gemmini's side against the cycle model, the core's instructions and the end-to-end cycles
against the ISS (log r, median error and range of each).
"""
from __future__ import annotations

import argparse
import copy
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import baco  # noqa: E402
from baco.codegen.program import run_program  # noqa: E402
from baco.gemmini.energy import energy_pj  # noqa: E402
from baco.model.cli import build_model  # noqa: E402
from baco.model.cpu_cost import cpu_cycles  # noqa: E402
from baco.model.lower import CpuStep, GemminiStep, module_path  # noqa: E402
from baco.model.zoo import mlp, seeded_inputs  # noqa: E402
from baco.sim.timing import TimingModel  # noqa: E402
from baco.tuner import explore, fusion  # noqa: E402
from baco.tuner.cli import parse_hardware  # noqa: E402
from baco.tuner.emit import result_dict  # noqa: E402

DEMO_MLP = (64, (256, 512, 256, 64))
SMOKE_MLP = (20, (40, 96, 48, 24))
SPECS = {"resnet18": "torchvision.models:resnet18", "mobilenet_v2": "torchvision.models:mobilenet_v2",
         "bert_layer": "baco.tuner.torch_models:bert_base_layer"}
BERT_WIDTH = 768            # bert_base_layer's d_model: its input is (1, sequence, BERT_WIDTH)


def model_and_input(name: str, resolution: int, seed: int, smoke: bool, sequence: int = 128):
    if name == "mlp":
        rows, sizes = SMOKE_MLP if smoke else DEMO_MLP
        return mlp(sizes, seed=seed), seeded_inputs((rows, sizes[0]), 1, seed=seed + 1)[0]
    shape = (1, sequence, BERT_WIDTH) if name == "bert_layer" else (1, 3, resolution, resolution)
    return build_model(SPECS[name], shape, seed), seeded_inputs(shape, 1, seed=seed + 1)[0]


def unfused(design: dict) -> dict:
    d = copy.deepcopy(design)
    for e in d["fusion"]["edges"]:
        e["fused"] = False
    return d


def run(compiled, x, elf: Path) -> dict:
    """The model's ELF on the ISS with the cycle model: cycles end to end, per step, Gemmini energy."""
    build = compiled.build_elf(str(elf), x)
    tm = TimingModel(compiled.config)
    r = run_program(build, timing=tm)
    cfg = compiled.config
    steps = {}
    for name, c in r.step_cycles.items():       # s<lowered step index>_<op kind>[.<launch>] (baco.model.link)
        i = int(name.split("_")[0][1:])
        steps[i] = steps.get(i, 0) + c
    return {"cycles": r.total_cycles, "energy_uj": energy_pj(tm.report(), sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb,
                                                             dim=cfg.dim) * 1e-6,
            "exact": r.passed, "steps": steps}


def step_of(compiled, output: str) -> int | None:
    """The lowered step index whose op (or fused ops) writes tensor `output`."""
    for i, s in enumerate(compiled.lowered.steps):
        if s.op.output == output or any(op.output == output for op in getattr(s, "fused", [])):
            return i
    return None


def replaced_steps(plain_build, step) -> list[int]:
    """The unfused program's steps a fused step replaces: its ops' (a pooled conv's, the conv's
    and the CPU max pool's reading its output)."""
    if step.fused:
        return [step_of(plain_build, op.output) for op in step.fused]
    conv = step_of(plain_build, step.op.output)
    return [conv] + [i for i, s in enumerate(plain_build.lowered.steps)
                     if s.op.kind == "max_pool" and s.op.inputs == [step.op.output]]


def ran_blocks(step) -> str:
    """The blocks a fused step's launches ran (their BLOCK_* options), as "M32/N96/K768" per launch."""
    return ", ".join("/".join(f"{name[6:]}{v}" for name, v in launch.options.items() if name.startswith("BLOCK_"))
                     for launch in step.launches if any(name.startswith("BLOCK_") for name in launch.options))


def fused_groups(build, plain_build, runs, kind, info) -> list:
    """Per fused step of `build` (a fused pair, or a conv with its pooled store): its group,
    predicted cycles (the design's group_cycles; its layers' and op's unfused,
    unfused_group_cycles), the step's simulated cycles and those of the unfused program's steps it
    replaces."""
    groups = []
    for s_index, step in enumerate(build.lowered.steps):
        if not (isinstance(step, GemminiStep) and (step.fused or step.op.q.get("pool"))):
            continue
        producer = module_path(step.fused[0] if step.fused else step.op)
        edge = next(e for e in info["edges"] if e["fused"] and e["producer"] == producer)
        replaced = replaced_steps(plain_build, step)
        groups.append({"group": f"{producer} -> {edge['consumer']} ({edge['kind']})",
                       "predicted": edge["group_cycles"], "predicted_unfused": edge["unfused_group_cycles"],
                       "blocks": edge.get("blocks"), "blocks_source": edge.get("blocks_source"),
                       "energy": edge.get("group_energy_uj"), "energy_unfused": edge.get("unfused_group_energy_uj"),
                       "ran": ran_blocks(step), "simulated": runs[kind]["steps"][s_index],
                       "unfused_simulated": sum(runs["unfused"]["steps"][i] for i in replaced)})
    return groups


def other_cpu_steps(build, edges: list) -> list[int]:
    """The indices of the build's CPU steps no fusion edge prices (all but a pool edge's max pool):
    the rest of the program, the same in every build of the model, which the tuner's totals over
    the layers leave out (the BERT layer's softmax, layer norms and GELU)."""
    pooled = {e["producer"] for e in edges if e["kind"] == "pool"}
    convs = {s.op.output: module_path(s.op) for s in build.lowered.steps if isinstance(s, GemminiStep)}
    return [i for i, s in enumerate(build.lowered.steps) if isinstance(s, CpuStep)
            and not (s.op.kind == "max_pool" and convs.get(s.op.inputs[0]) in pooled)]


def other_cpu_cycles(build, edges: list) -> float:
    """The CPU cost table's cycles (baco.model.cpu_cost) of the build's other_cpu_steps."""
    return float(sum(cpu_cycles(build.lowered.steps[i].kernel) for i in other_cpu_steps(build, edges)))


def layer_cycles(build, run: dict, edges: list) -> int:
    """A run's simulated cycles over the steps the tuner's totals cover: every step but the
    other_cpu_steps (what the prediction over the layers is to be compared with)."""
    other = set(other_cpu_steps(build, edges))
    return sum(c for i, c in run["steps"].items() if i not in other)


def fused_set(design: dict) -> frozenset:
    """The design's fused edges (designs fusing the same ones compile to the same program)."""
    return frozenset((e["producer"], e["consumer"]) for e in design["fusion"]["edges"] if e["fused"])


def measure(name, hw, budget, seed, smoke, resolution, calibrate, forced: bool, tmp: Path, sequence: int = 128) -> dict:
    t0 = time.perf_counter()
    model, x = model_and_input(name, resolution, seed, smoke, sequence)
    graph = fusion.graph_from_torch(model, x)
    quick = dict(steps=8, starts=2, random_pool=4, polish=False) if smoke else {}
    result = explore.coexplore(graph.layers, fusion_graph=graph, fixed_hw=hw, cycle_model="compiled", seed=seed,
                               time_budget_s=None if smoke else budget, progress=False, **quick)
    tune_s = time.perf_counter() - t0
    results = {"chosen": result}
    if forced:
        problem = explore.NetworkProblem(graph.layers, fixed_hw=result.hw, cycle_model="compiled",
                                         fusion_graph=graph)
        results["forced"] = copy.deepcopy(result)
        fusion.fuse_result(problem, results["forced"], torch.ones(len(problem.fusion.edges), dtype=torch.bool),
                           require_gain=False)
    designs = {k: result_dict(graph.layers, r) for k, r in results.items()}
    designs["unfused"] = unfused(designs["chosen"])
    # each distinct program built and run once (a design that fuses what another does is that program)
    first = {}
    for k, d in designs.items():
        first.setdefault(fused_set(d), k)
    same = {k: first[fused_set(d)] for k, d in designs.items()}
    built = {k: baco.compile_model(model, x, design=designs[k], calibrate=calibrate) for k in set(same.values())}
    ran = {k: run(c, x, tmp / f"{name}_{k}.elf") for k, c in built.items()}
    builds, runs = {k: built[v] for k, v in same.items()}, {k: ran[v] for k, v in same.items()}
    edp = {k: r["cycles"] * r["energy_uj"] for k, r in runs.items()}
    info = designs["chosen"]["fusion"]
    layer_edp = {k: layer_cycles(builds[k], r, info["edges"]) * r["energy_uj"] for k, r in runs.items()}
    cpu = other_cpu_cycles(builds["unfused"], info["edges"])
    pred_unfused_edp = (info["unfused_cycles"] + cpu) * info["unfused_energy_uj"]
    return {"name": name, "hw": result.hw, "tune_s": tune_s, "edges": len(info["edges"]), "runs": runs,
            "pred_unfused": (info["unfused_cycles"], info["unfused_energy_uj"]), "cpu": cpu,
            "fusions": {k: {"groups": fused_groups(builds[k], builds["unfused"], runs, k, designs[k]["fusion"]),
                            "sim_saving": 1 - edp[k] / edp["unfused"],
                            "sim_saving_layers": 1 - layer_edp[k] / layer_edp["unfused"],
                            "pred_saving": 1 - r.edp / r.fusion["unfused_edp"], "pred": (r.cycles, r.energy_uj),
                            # the same design's fused energy as the traffic model prices it (before
                            # the groups' own programs' energy, fusion.fused_program_energy)
                            "pred_saving_traffic": 1 - r.cycles * r.fusion["traffic_energy_uj"] / r.fusion["unfused_edp"],
                            "pred_energy_traffic": r.fusion["traffic_energy_uj"],
                            "pred_saving_cpu": 1 - (r.cycles + cpu) * r.energy_uj / pred_unfused_edp}
                        for k, r in results.items()},
            "programs": len(built), "seconds": time.perf_counter() - t0}


def print_row(r: dict) -> None:
    hw = r["hw"]
    print(f"{r['name']}: {r['edges']} fusable edges on {hw.pe_dim}x{hw.pe_dim} {hw.sp_kb:g}/{hw.acc_kb:g} KB"
          f"{' ext-spad' if hw.ext_spad else ''} (tuned {r['tune_s']:.0f} s; {r['programs']} distinct programs "
          f"built and run); {r['seconds']:.0f} s")
    u = r["runs"]["unfused"]
    print(f"  {'unfused':8s} {u['cycles']:>12,} cycles end to end, Gemmini energy {u['energy_uj']:9.2f} uJ "
          f"(predicted over the layers: {r['pred_unfused'][0]:,.0f} cycles, {r['pred_unfused'][1]:.2f} uJ; the "
          f"other CPU steps {r['cpu']:,.0f} cycles); bit-exact {u['exact']}")
    for kind, f in r["fusions"].items():
        m = r["runs"][kind]
        pc, pe = f["pred"]
        print(f"  {kind:8s} {m['cycles']:>12,} cycles end to end, Gemmini energy {m['energy_uj']:9.2f} uJ "
              f"(predicted over the layers: {pc:,.0f} cycles, {pe:.2f} uJ); bit-exact {m['exact']}; "
              f"{len(f['groups'])} fused groups")
        print(f"    EDP saving: simulated {f['sim_saving']:.1%}, predicted {f['pred_saving']:.1%} "
              f"({within(f['sim_saving'], f['pred_saving'])} 25% of it); with the other CPU steps' "
              f"{r['cpu']:,.0f} cycles in both: predicted {f['pred_saving_cpu']:.1%} "
              f"({within(f['sim_saving'], f['pred_saving_cpu'])} 25% of it); the groups' energy by the traffic "
              f"model instead: {f['pred_energy_traffic']:.2f} uJ, predicted {f['pred_saving_traffic']:.1%} "
              f"({within(f['sim_saving'], f['pred_saving_traffic'])} 25% of it)")
        print(f"    over the layers (the steps the prediction covers, the other CPU steps left out of both): "
              f"simulated {f['sim_saving_layers']:.1%}, predicted {f['pred_saving']:.1%} "
              f"({within(f['sim_saving_layers'], f['pred_saving'])} 25% of it)")
        for g in f["groups"]:
            print(f"    {g['group'][:58]:58s} predicted {g['predicted']:>10,.0f} "
                  f"(unfused {g['predicted_unfused']:,.0f})  simulated {g['simulated']:>10,} "
                  f"(unfused steps {g['unfused_simulated']:,})" + (
                      f"; energy predicted {g['energy']:.2f} uJ (unfused {g['energy_unfused']:.2f})"
                      if g.get("energy") is not None else "") + (
                      f" at {'/'.join(str(v) for v in g['blocks'].values())} ({g['blocks_source']})"
                      if g.get("blocks") else f" ran at {g['ran']}" if g.get("ran") else ""))


def within(simulated: float, predicted: float) -> str:
    ok = abs(simulated - predicted) <= 0.25 * abs(predicted) if predicted else abs(simulated) < 1e-9
    return "within" if ok else "NOT within"


def accuracy(groups: list) -> tuple[float, float]:
    """(Pearson r of log cycles, median relative error) of predicted against simulated."""
    p = [math.log(g["predicted"]) for g in groups]
    s = [math.log(g["simulated"]) for g in groups]
    errors = [abs(g["predicted"] - g["simulated"]) / g["simulated"] for g in groups]
    r = statistics.correlation(p, s) if len(groups) > 2 and len(set(p)) > 1 and len(set(s)) > 1 else float("nan")
    return r, statistics.median(errors)


# GEMM chain programs (DIM, M, K, H, N, BLOCK_M, BLOCK_K) for --programs: the tests'
# (tests/test_fused_programs.py: against the cycle model, end to end and ragged on the ISS, tiny
# chains), the CPU table's fit (benchmarks/cpu_constants.py's FUSED and TINY_CHAINS) and MobileNetV2
# 64x64's project -> expand chain (features.1.conv.1 -> features.2.conv.0.0: 1024 pixels, 32 -> 16
# -> 96 channels) at the blocks its forced edge runs, 80/32
CHAIN_PROGRAMS = [
    (16, 20, 40, 96, 48, 32, 48), (16, 256, 64, 128, 64, 64, 64), (16, 1024, 32, 64, 32, 64, 32),
    (32, 256, 64, 128, 64, 64, 64), (16, 17, 33, 65, 17, 16, 32), (16, 100, 128, 48, 80, 32, 64),
    (32, 65, 96, 64, 33, 32, 32), (16, 97, 65, 33, 17, 32, 32), (16, 1, 97, 17, 33, 16, 64),
    (32, 97, 33, 65, 17, 64, 32), (32, 65, 65, 97, 1, 32, 32),
    (16, 64, 65, 32, 16, 32, 32), (16, 128, 40, 64, 32, 32, 32), (32, 128, 80, 64, 64, 64, 64),
    (16, 96, 100, 48, 32, 32, 64), (16, 256, 24, 64, 64, 64, 32),
    (16, 20, 16, 16, 16, 16, 16), (16, 20, 16, 16, 16, 32, 16), (32, 8, 32, 32, 32, 32, 32),
    (16, 64, 32, 32, 32, 32, 32), (16, 40, 16, 32, 16, 16, 16),
    (32, 128, 128, 64, 96, 32, 64), (32, 17, 65, 97, 33, 64, 32), (64, 64, 64, 128, 64, 64, 64),
    (64, 97, 65, 97, 33, 64, 32), (16, 64, 96, 48, 24, 32, 64),
    (16, 1024, 32, 16, 96, 80, 32)]

# GEMM + residual add programs (DIM, M, K, N, BLOCK_M, BLOCK_N, BLOCK_K) for --programs: the tests'
# (tests/test_fused_programs.py: against the cycle model, ragged command counts, on the ISS), the
# CPU table's fit (benchmarks/cpu_constants.py's FUSED), MobileNetV2 64x64's project convs at their
# default blocks (fused.gemm_resadd_default_blocks, before and since its BLOCK_N cap), the BERT
# layer's out_proj + add (32 x 768 -> 768 at the default 32/32/32; two of its column blocks at 32/64/32),
# one column block of its linear2 + add at a tile the search gives it (32 x 3072 -> 96 at 32/96/768:
# 20 mvins of the next K step before each output column's computes) and DIM 64 ones
RESADD_PROGRAMS = [
    (16, 64, 96, 16, 64, 16, 96), (16, 1024, 96, 24, 64, 32, 96), (16, 256, 192, 32, 128, 32, 64),
    (16, 16, 384, 64, 16, 64, 128), (16, 64, 576, 96, 16, 96, 192),
    (16, 97, 65, 33, 32, 32, 32), (16, 1, 17, 33, 16, 32, 32), (16, 65, 33, 97, 32, 64, 16),
    (32, 97, 96, 65, 64, 64, 64), (32, 17, 33, 1, 32, 32, 32),
    (32, 256, 192, 64, 64, 64, 64), (16, 33, 65, 17, 16, 32, 32), (32, 33, 97, 65, 32, 64, 64),
    (16, 64, 40, 32, 32, 32, 32), (16, 128, 100, 64, 64, 64, 64), (32, 128, 72, 64, 64, 64, 64),
    (16, 256, 20, 64, 64, 64, 32),
    (16, 256, 144, 24, 32, 32, 48), (16, 64, 192, 32, 32, 32, 48), (16, 4, 960, 160, 16, 160, 64),
    (16, 16, 576, 96, 16, 48, 576), (16, 16, 384, 64, 16, 32, 64), (16, 16, 576, 96, 16, 32, 64),
    (16, 4, 960, 160, 16, 32, 64), (16, 32, 768, 768, 32, 32, 32), (16, 32, 768, 128, 32, 64, 32),
    (16, 32, 3072, 96, 32, 96, 768),
    (64, 64, 96, 64, 64, 64, 96), (64, 97, 65, 33, 64, 64, 64), (64, 256, 192, 64, 64, 64, 64),
    (64, 17, 33, 65, 64, 64, 64), (64, 1024, 64, 64, 64, 64, 64)]


def launch_and_model(kind: str, shape, dim: int = 16):
    """A fused program's launch on random int8 operands (the GEMM chain's M, K, H, N, BLOCK_M,
    BLOCK_K or the residual add's M, K, N, BLOCK_M, BLOCK_N, BLOCK_K) on a DIM x DIM Gemmini of
    Gemmini's default capacities, and baco.gemmini.fused's model of it."""
    import numpy as np
    from baco.gemmini.config import GemminiConfig
    from baco.gemmini.fused import gemm_chain_program_cycles, gemm_resadd_program_cycles
    from baco.gemmini.schedule import GemmSchedule
    from baco.kernels.fused import gemm_chain_launch, gemm_resadd_launch
    cfg, rng = GemminiConfig.from_capacity(dim, 256, 64), np.random.default_rng(0)
    i8 = lambda *s: rng.integers(-128, 128, s, dtype=np.int8)  # noqa: E731
    if kind == "chain":
        M, K, H, N, bm, bk = shape
        launch = gemm_chain_launch(i8(M, K), i8(K, H), None, i8(H, N), None, scale1=0.01, scale2=0.01,
                                   block_m=bm, block_k=bk, config=cfg)
        return launch, gemm_chain_program_cycles(M, K, H, N, bm, bk, cfg, alone=True)
    M, K, N, bm, bn, bk = shape
    launch = gemm_resadd_launch(i8(M, K), i8(K, N), None, i8(M, N), scale=0.01, relu=False, a_scale=0.5,
                                r_scale=0.7, out_scale=0.9, relu_out=False, schedule=GemmSchedule(bm, bn, bk),
                                config=cfg)
    return launch, gemm_resadd_program_cycles(M, N, K, bm, bn, bk, cfg, alone=True)


def fused_programs(kind: str, shapes) -> list:
    """Each program of `kind` ("chain": DIM, M, K, H, N, BLOCK_M, BLOCK_K; "resadd": DIM, M, K, N,
    BLOCK_M, BLOCK_N, BLOCK_K; launch_and_model's operands) against baco.gemmini.fused's model:
    Gemmini's side against the cycle model's time of the command stream (commands arriving for
    free), the core's instructions against the ISS's count, and end to end against the ISS with the
    cycle model (rdcycle around the launch)."""
    from baco.gemmini.config import GemminiConfig
    rows = []
    print(f"{kind} programs:")
    for dim, *shape in shapes:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        launch, model = launch_and_model(kind, shape, dim)
        if kind == "chain":
            M, K, H, N, bm, bk = shape
            name = f"DIM {dim} {M}x{K}->{H}->{N} at {bm}/{bk}"
        else:
            M, K, N, bm, bn, bk = shape
            name = f"DIM {dim} {M}x{K}x{N} at {bm}/{bn}/{bk}"
        compiled = launch.compiled("iss")
        # the launch's instructions: rdcycle around it without the cycle model (the whole run's
        # count adds the harness's start-up)
        rows.append({"program": name, "model": model, "gemmini": launch.cycles()["cycles"],
                     "instructions": compiled.run(launch.grid, launch.args)["kernel_cycles"],
                     "cycles": compiled.run(launch.grid, launch.args, timing=TimingModel(cfg))["kernel_cycles"]})
        r = rows[-1]
        print(f"  {r['program']:34s} Gemmini {model['gemmini']:>9,.0f} / {r['gemmini']:>9,.0f} cycle model "
              f"({model['gemmini'] / r['gemmini']:.3f})  core {model['cpu']:>9,.0f} / {r['instructions']:>9,} "
              f"instructions ({model['cpu'] / r['instructions']:.3f})  end to end {model['cycles']:>9,.0f} / "
              f"{r['cycles']:>9,} ISS ({model['cycles'] / r['cycles']:.3f})", flush=True)
    for side, measured in (("gemmini", "gemmini"), ("cpu", "instructions"), ("cycles", "cycles")):
        groups = [{"predicted": r["model"][side], "simulated": r[measured]} for r in rows]
        lr, median = accuracy(groups)
        ratios = [g["predicted"] / g["simulated"] for g in groups]
        print(f"{kind} {side:8s} over {len(rows)} programs: log r {lr:.4f}, median error {median:.1%}, "
              f"{min(ratios):.2f}-{max(ratios):.2f}x")
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="mlp,resnet18,mobilenet_v2",
                   help=f"comma-separated, of mlp, {', '.join(SPECS)}")
    p.add_argument("--resolution", type=int, default=64)
    p.add_argument("--sequence", type=int, default=128, help="the BERT layer's sequence length")
    p.add_argument("--hardware", default="16,256,64", help="DIM,SP_KB,ACC_KB of the fixed Gemmini")
    p.add_argument("--ext-spad", action="store_true",
                   help="the fixed Gemmini has Gemmini master's ext-spad commands (a chain on the loop unit)")
    p.add_argument("--budget", type=float, default=30.0, help="tuning seconds per model")
    p.add_argument("--calibrate", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--forced", action=argparse.BooleanOptionalAction, default=True,
                   help="also every fitting edge fused (default on)")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--programs", nargs="?", const="chain,resadd", default=None, metavar="KINDS",
                   help="instead of whole models: the fused programs of CHAIN_PROGRAMS and RESADD_PROGRAMS (or of "
                        "the comma-separated kinds given: chain, resadd), model against the cycle model (Gemmini's "
                        "side) and the ISS (the core's instructions, end to end)")
    a = p.parse_args(argv)
    if a.programs:
        sets = {"chain": CHAIN_PROGRAMS, "resadd": RESADD_PROGRAMS}
        kinds = a.programs.split(",")
        if any(k not in sets for k in kinds):
            p.error(f"--programs: kinds of {', '.join(sets)}, got {a.programs!r}")
        for kind in kinds:
            fused_programs(kind, sets[kind])
        return 0
    names = ["mlp"] if a.smoke else a.models.split(",")
    unknown = [n for n in names if n != "mlp" and n not in SPECS]
    if unknown:
        p.error(f"--models: unknown {unknown} (of mlp, {', '.join(SPECS)})")
    hw = parse_hardware(a.hardware, a.ext_spad)
    torch.manual_seed(a.seed)
    rows, ok = [], True
    with tempfile.TemporaryDirectory(prefix="baco-fused-") as tmp:
        for name in names:
            r = measure(name, hw, a.budget, a.seed, a.smoke, a.resolution, 2 if a.smoke else a.calibrate,
                        a.forced, Path(tmp), a.sequence)
            print_row(r)
            rows.append(r)
            ok &= all(run["exact"] for run in r["runs"].values())
    for kind in ("chosen", "forced"):
        groups = [g for r in rows for g in r["fusions"].get(kind, {}).get("groups", [])]
        if groups:
            lr, median = accuracy(groups)
            print(f"fused-program model over the {len(groups)} {kind} fused groups: log r = {lr:.3f} (goal >= 0.95), "
                  f"median error {median:.1%} (goal <= 15%)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
