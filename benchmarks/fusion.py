"""Fusion-aware co-exploration against the same search without fusion (issue I's acceptance; FADiff,
Jia et al., arXiv 2511.22348, Table 1's setting).

    python benchmarks/fusion.py [--smoke] [--budget S] [--networks a,b] [--configs large,small,free]
        [--cycle-model timeloop|compiled] [--seq N] [--seed N] [--seeds K] [--steps N] [--spread] [--ext-spad]
        [--out DIR]

FADiff's five networks, their layer tables and fusion graphs built from torch.nn / torchvision
definitions through the tuner's torch importer (baco.tuner.fusion.graph_from_torch): GPT-3 6.7B as
one decoder block (d_model 4096, 32 heads, FFN 16384) at --seq tokens (default 2048), VGG16,
VGG19, MobileNetV1 and ResNet-18 at 1x3x224x224; on FADiff's fixed Gemminis, Large (32x32, 512
KB scratchpad, 64 KB accumulator) and Small (16x16, 8 KB, 8 KB), and with the hardware free.
Per network and configuration, with the same time budget each:
- baco with fusion (explore.coexplore(fusion_graph=...): the fusion variables descended with the
  mappings) and baco without (the layer-by-layer search); both designs are costed by the fusion
  model, the one without fusion with every edge unfused (the element-wise ops the fusion model adds,
  residual adds and pools, are in both);
- the genetic algorithm and the DOSA-style search given the fusion variables (each design fuses
  every edge that fits; baselines.genetic / dosa_style with fusion_graph).
Prints one row per (network, configuration): the EDPs, fusion's saving over no fusion, its bound
(fusion.removable_saving: what removing every intermediate's DRAM traffic, capacity ignored, saves
at the design without fusion / at the design with fusion), the fused groups; then the mean
saving on the fixed configurations (FADiff's goal: >= 15%, never higher) and whether baco's fused
search is at least as good as GA's and DOSA's on every row. Each row's timed searches follow a
short untimed one of each kind (warm_up). Writes
OUT/fusion.json. The figures are of the chosen cycle model (default timeloop, as FADiff and DOSA
compare).

Time budgets on a shared machine make two runs of one search differ (--spread measures it), which
a saving smaller than that difference cannot show; --steps gives baco's two searches equal work
instead (descent steps and a fixed number of kicks), so their comparison is the fusion's alone.

--ext-spad: each configuration also as a Gemmini master with the ext-spad commands (rows
"<config>+ext": a fixed one's the same sizes and area; "free+ext", the hardware searched among
Gemmini masters, every search's every point one): a fused chain (linear -> linear, 1x1 -> 1x1) runs on the
loop unit where it fits (baco.gemmini.fused's loop form), which the compiled-program model costs
(the Timeloop-matched model has no program: its rows differ only in the capacity a chain holds).
Besides FADiff's configurations (the default), --configs takes "default", Gemmini's default sizes
(16x16, 256 KB, 64 KB), and besides FADiff's five networks --networks takes "mlp", the demo MLP of
benchmarks/fused_loop_chain.py (64 rows, 256-512-256-64: two chain edges), and "mlp-small" (4 rows,
64-64-64-64). Measured (--networks mlp-small,mlp --configs default,large --ext-spad --cycle-model
compiled --steps 20 --budget 10; the loop form costed as its tiled program): nothing fused without
the ext-spad commands; with them mlp-small's first chain fused on the loop unit, EDP 14.9% (default)
and 23.3% (Large) below the search without fusion (GA and DOSA find the same); on the ISS with the
cycle model the default design's kernels take 2,248 cycles fused against the unfused design's 2,783
(0.81x; the model: 2,190 vs 2,494, 0.88x); mlp's 512-256-64 chain fused, saving 12.1% (default) and
-3.4% (Large, where DOSA with fusion finds the search without fusion's EDP), within the searches'
spread (its default row without the commands: -12.3%, nothing fused; time-sized random pools keep
--steps runs apart on a loaded machine). FADiff's five networks have no linear -> linear or 1x1 ->
1x1 chain that fits the loop form on Large, Small or default: their rows are unchanged.
With the hardware searched (--networks mlp-small,mlp --configs free --ext-spad --cycle-model
compiled --steps 20 --budget 10): mlp-small's first chain fused on the loop unit of a 32x32
Gemmini master (16 KB + 16 KB), EDP 2,897, 28.2% below the search without fusion (4,036), GA and
DOSA with fusion the same; without the commands nothing fused (the fused search's design 3,651,
no edge fused); mlp: nothing fused with or without them (-12.9%, the fused search's design worse at
equal steps: on the 128x128 Gemmini the layers need, its loop form does not fit, since it holds
both weights whole, and the explicit chain that grows the buffers was not preferred). FADiff's
five networks: no chain that fits the loop form (GPT-3's block and ResNet-18 have none, MobileNet
depthwise -> pointwise pairs only, VGG's classifier chain needs 25088x4096 weights held), so
free+ext costs as free; at --budget 5 on a loaded machine (time-budget noise: the searches
without fusion, which the commands cannot change, differ as much between the two rows), free /
free+ext with fusion: ResNet-18 5.44e9 / 1.49e10 (conv1+maxpool fused; without fusion 5.87e9 /
1.59e10), GPT-3 2.51e14 / 2.51e14 (nothing fused; without 1.86e14 / 1.89e14), VGG19 1.35e12 /
1.35e12 (5 conv -> pool edges fused; without 7.05e11 / 1.43e12); GA and DOSA with fusion
1.49e10, 2.51e14 and 1.35e12 on both rows.

--seeds K: every row at seeds --seed .. --seed+K-1 (each seed's searches alike); a row's saving is
then the median of its seeds' (printed with each seed's, one line a seed before it), the mean and
"never higher" are over those medians, and the rows and seeds where fusion is higher are counted
too. Where fusion saves less than a time-budgeted search's run-to-run spread (GPT-3's block: its
bound is under 1%), one seed's sign is the noise's; the median of several is the comparison.

--smoke: ResNet-18 at 1x3x32x32 (its conv1 -> max pool edge) on Small, 1.5 s per search (the tests' size).
"""
from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

from dataclasses import replace

import torch

from baco.model.zoo import mlp
from baco.tuner import baselines, explore, fusion, torch_models
from baco.tuner.arch import Hardware
from baco.tuner.workloads import import_model_module

STEPS_KICKS = 20     # with --steps: the polish's kicks (a fixed amount of work, as the steps)
CONFIGS = {"large": Hardware(32, 512, 64), "small": Hardware(16, 8, 8), "free": None, "default": Hardware()}
FADIFF_CONFIGS = ("large", "small", "free")
IMAGE = (1, 3, 224, 224)
FADIFF_NETWORKS = ("gpt3-6.7b", "vgg16", "vgg19", "mobilenetv1", "resnet18")
EXT = "+ext"     # a configuration's twin with Gemmini master's ext-spad commands (--ext-spad)


def networks(seq: int) -> dict:
    """name -> (factory, input shape)."""
    tv = import_model_module("torchvision.models")
    return {"gpt3-6.7b": (torch_models.gpt3_6p7b_block, (1, seq, 4096)), "vgg16": (tv.vgg16, IMAGE),
            "vgg19": (tv.vgg19, IMAGE), "mobilenetv1": (torch_models.mobilenet_v1, IMAGE),
            "resnet18": (tv.resnet18, IMAGE), "mlp": (lambda: mlp((256, 512, 256, 64)), (64, 256)),
            "mlp-small": (lambda: mlp((64, 64, 64, 64)), (4, 64))}


def hardware(config: str) -> tuple[Hardware | None, bool]:
    """The Gemmini of a configuration name (CONFIGS', or one of them + EXT; None: searched) and
    whether it has the ext-spad commands."""
    if config.endswith(EXT):
        fixed = CONFIGS[config[:-len(EXT)]]
        return (fixed and replace(fixed, ext_spad=True)), True
    return CONFIGS[config], False


def graph_of(factory, shape) -> fusion.FusionGraph:
    with torch.device("meta"):
        model = factory().eval()
    return fusion.graph_from_torch(model, torch.zeros(*shape, device="meta"))


def fused_cost(result, graph: fusion.FusionGraph, cycle_model: str, fuse: bool) -> tuple[explore.Result, float]:
    """The result costed by the fusion model: its own fusion (every edge that fits, fuse=True) or
    none (fuse=False); and the most fusion could save at its mappings (fusion.removable_saving)."""
    problem = explore.NetworkProblem(graph.layers, fixed_hw=result.hw, cycle_model=cycle_model, fusion_graph=graph)
    out = copy.deepcopy(result)
    fusion.fuse_result(problem, out, torch.full((len(problem.fusion.edges),), fuse, dtype=torch.bool), fill=fuse)
    return out, fusion.removable_saving(problem, result)


def warm_up(graph, hw, ext_spad: bool, seed: int, cycle_model: str) -> None:
    """A short search of each kind first, untimed: the cost models' caches (mapping spaces, program
    tables) are filled once per process, and the first timed search would pay for them (the fused
    one, run first in a row, lost 8% on GPT-3 Large and 44% on ResNet-18 with the compiled model)."""
    kw = dict(steps=2, starts=2, random_pool=2, kicks=1, seed=seed, cycle_model=cycle_model, fixed_hw=hw,
              ext_spad=ext_spad, progress=False)
    explore.coexplore(graph.layers, fusion_graph=graph, **kw)
    explore.coexplore(graph.layers, **kw)


def run_row(graph, hw, ext_spad: bool, budget: float, seed: int, cycle_model: str, steps: int | None = None,
            spread: bool = False) -> dict:
    """One row (hw: the fixed Gemmini, None: searched; ext_spad: with the ext-spad commands); steps:
    baco's searches run that many descent steps and STEPS_KICKS kicks instead of the time budget
    (equal work: no dependence on the machine's load; GA and DOSA keep the time budget); spread:
    the search without fusion runs twice, its second EDP over its first the search's own
    run-to-run spread."""
    common = dict(seed=seed, cycle_model=cycle_model, fixed_hw=hw, ext_spad=ext_spad)
    timed = dict(time_budget_s=budget, **common)
    searched = dict(steps=steps, kicks=STEPS_KICKS, **common) if steps else timed
    warm_up(graph, hw, ext_spad, seed, cycle_model)
    t0 = time.perf_counter()
    fused = explore.coexplore(graph.layers, fusion_graph=graph, progress=False, **searched)
    plain, bound = fused_cost(explore.coexplore(graph.layers, progress=False, **searched), graph, cycle_model,
                              fuse=False)
    fused_bound = fused_cost(fused, graph, cycle_model, fuse=True)[1]
    again = {}
    if spread:
        second = fused_cost(explore.coexplore(graph.layers, progress=False, **searched), graph, cycle_model, fuse=False)
        again = {"baco_unfused_again": second[0].edp, "spread": 1 - second[0].edp / plain.edp}
    ga = baselines.genetic(graph.layers, fusion_graph=graph, **timed)
    dosa = baselines.dosa_style(graph.layers, fusion_graph=graph, **timed)
    return {"baco_fused": fused.edp, "baco_unfused": plain.edp, "ga_fused": ga.edp, "dosa_fused": dosa.edp,
            "saving": 1 - fused.edp / plain.edp, "groups": fused.fusion["groups"], **again,
            "bound_unfused_design": bound, "bound_fused_design": fused_bound,
            "edges": len(graph.edges), "fused_edges": sum(e["fused"] for e in fused.fusion["edges"]),
            "hardware": [fused.hw.pe_dim, fused.hw.sp_kb, fused.hw.acc_kb, fused.hw.ext_spad],
            "unfused_hardware": [plain.hw.pe_dim, plain.hw.sp_kb, plain.hw.acc_kb, plain.hw.ext_spad],
            "wall_s": time.perf_counter() - t0}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--budget", type=float, help="seconds per search (default 20; smoke 1.5)")
    p.add_argument("--networks", help=f"comma-separated, of {', '.join(networks(2048))}")
    p.add_argument("--configs", help=f"comma-separated, of {', '.join(CONFIGS)}")
    p.add_argument("--cycle-model", choices=["timeloop", "compiled"], default="timeloop")
    p.add_argument("--seq", type=int, default=2048, help="GPT-3 block's sequence length")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", type=int, default=1, help="run every row at this many seeds from --seed; a row's "
                   "saving is their median")
    p.add_argument("--steps", type=int, help="baco's searches: this many descent steps (and a fixed number of "
                   "kicks) instead of the time budget: equal work, whatever the machine's load")
    p.add_argument("--spread", action="store_true",
                   help="run the search without fusion twice: its run-to-run spread at this budget")
    p.add_argument("--ext-spad", action="store_true",
                   help="each fixed configuration also with Gemmini master's ext-spad commands (rows <config>+ext)")
    p.add_argument("--out", default="out/fusion")
    a = p.parse_args(argv)
    table = networks(a.seq)
    if a.smoke:
        table["resnet18"] = (table["resnet18"][0], (1, 3, 32, 32))
    names = a.networks.split(",") if a.networks else (["resnet18"] if a.smoke else list(FADIFF_NETWORKS))
    configs = a.configs.split(",") if a.configs else (["small"] if a.smoke else list(FADIFF_CONFIGS))
    for n in names:
        if n not in table:
            p.error(f"--networks: unknown network {n!r} (of {', '.join(table)})")
    for c in configs:
        if c not in CONFIGS:
            p.error(f"--configs: unknown configuration {c!r} (of {', '.join(CONFIGS)})")
    if a.seeds < 1:
        p.error(f"--seeds must be >= 1, got {a.seeds}")
    if a.ext_spad:
        configs = [c for config in configs for c in (config, config + EXT)]
    budget = a.budget or (1.5 if a.smoke else 20.0)
    rows = []
    print(f"{'network':12} {'config':10} {'baco+fusion':>12} {'baco':>12} {'saving':>7} {'bound':>13} "
          + (f"{'spread':>7} " if a.spread else "") + f"{'GA+fusion':>12} {'DOSA+fusion':>12}  fused groups",
          flush=True)
    seeds = list(range(a.seed, a.seed + a.seeds))
    for name in names:
        graph = graph_of(*table[name])
        for config in configs:
            runs = []
            for seed in seeds:
                run = {"seed": seed, **run_row(graph, *hardware(config), budget, seed, a.cycle_model, a.steps,
                                               a.spread)}
                runs.append(run)
                groups = "; ".join("+".join(g) for g in run["groups"]) or "none"
                label = config if len(seeds) == 1 else f"{config} s{seed}"
                print(f"{name:12} {label:10} {run['baco_fused']:12.4g} {run['baco_unfused']:12.4g} "
                      f"{run['saving']:7.1%} {run['bound_unfused_design']:6.1%}/{run['bound_fused_design']:6.1%} "
                      + (f"{run['spread']:7.1%} " if a.spread else "")
                      + f"{run['ga_fused']:12.4g} {run['dosa_fused']:12.4g}  {run['fused_edges']}/{run['edges']}: "
                      + groups, flush=True)
            # one seed: the row is its run; several: the first seed's run, its saving their median
            row = {"network": name, "config": config, **runs[0]}
            if len(runs) > 1:
                row.update(saving=statistics.median(r["saving"] for r in runs),
                           bound_unfused_design=statistics.median(r["bound_unfused_design"] for r in runs),
                           runs=runs)
                each = ", ".join(f"{r['saving']:.1%}" for r in runs)
                print(f"{name:12} {config:10} median saving {row['saving']:.1%} over seeds {seeds[0]}-{seeds[-1]} "
                      f"({each})", flush=True)
            rows.append(row)
    for family, ext in (("", False), (" with the ext-spad commands", True)):
        part = [r for r in rows if r["config"].endswith(EXT) == ext]
        fixed = [r for r in part if hardware(r["config"])[0] is not None]
        if fixed:
            saving, bound = (sum(r[k] for r in fixed) / len(fixed) for k in ("saving", "bound_unfused_design"))
            seed_runs = [x for r in part for x in r.get("runs", [r])]
            print(f"mean saving on the fixed configurations{family}: {saving:.1%} (goal >= 15%; the "
                  f"intermediates' whole traffic at the designs without fusion: {bound:.1%}); "
                  f"rows where fusion is higher: {sum(r['saving'] < 0 for r in part)} of {len(part)}"
                  + (f" (single seeds: {sum(x['saving'] < 0 for x in seed_runs)} of {len(seed_runs)})"
                     if a.seeds > 1 else ""))
    all_runs = [(r["network"], r["config"], x) for r in rows for x in r.get("runs", [r])]
    beaten = [(n, c, x["seed"]) for n, c, x in all_runs
              if x["baco_fused"] > min(x["ga_fused"], x["dosa_fused"]) * (1 + 1e-9)]
    print(f"baco+fusion at least as good as GA and DOSA with fusion: {len(all_runs) - len(beaten)} of {len(all_runs)} "
          + ("rows" if a.seeds == 1 else "runs") + (f" (not on {beaten})" if beaten else ""))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fusion.json").write_text(json.dumps({"budget_s": budget, "cycle_model": a.cycle_model, "seq": a.seq,
                                                 "seed": a.seed, "seeds": seeds, "steps": a.steps, "rows": rows},
                                                indent=2) + "\n")
    print(f"wrote {out / 'fusion.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
