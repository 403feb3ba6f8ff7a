"""Tuned whole models, measured: does the whole program confirm the tuner's EDP gain?

Per model: the tuner's table of the whole program (baco.model.workload.workload_of the default
build's steps: the convolutions, depthwise convolutions and linear layers it tunes, and the steps
it does not: attention's batched matmuls at the kernel's default schedule, residual adds, CPU
operators by the CPU cost table, baco.model.cpu_cost) is searched by baco.tuner.explore.coexplore
(--budget seconds, the untuned steps in its objective) for a design (a Gemmini and one schedule
per layer); the same model (random
weights, BatchNorm statistics measured on random inputs) is then compiled twice
(baco.compile_model): without a design (the default Gemmini, every kernel's default schedule) and
with it (`baco build --design`: the design's Gemmini, the tuned schedule of every layer the design
lists, depthwise ones included), each linked into one self-checking ELF and run on the ISS with the
cycle model attached (baco.codegen.program.run_program).

Measured EDP of a program = its end-to-end cycles (the core's rdcycle over all steps: every
Gemmini layer, residual add and CPU operator, as `baco build --run` prints them) x its Gemmini
energy: the tuner's energy model (baco.gemmini.energy.energy_pj, the function the tuner's compiled-
program energy prices its counts with) applied to the counts the cycle model recorded over the run
(MACs, scratchpad/accumulator/register accesses, DRAM bytes). Measured gain = default EDP / tuned
EDP. Also printed: the gain over the layer steps alone (the steps the tuner costs: conv, depthwise,
linear; cycles summed from the program's per-step report, energy of the whole run).

Predicted: the tuner's EDP of the design, (sum count x cycles) x (sum count x energy) over the whole
table (cycles end to end: the program models count the CPU issuing the commands; the CPU steps'
cycles are counted, their energy is not, as in the measured Gemmini energy), against (a) the same
table with each kernel's default schedule on the default Gemmini (whole_model.default_schedule_cost:
what the build without a design runs) and (b) Gemmini-default as the tuner reports it (the C
library's program for the layers: baselines.gemmini_default, the untuned steps as baco runs them).
Goal (issue H): measured gain within 25% of predicted. Also printed: the gain predicted over the
layers alone (the tuner's table before it held the whole program), per kind of step the predicted
and measured cycles of both builds, and per layer (--per-step) both predictions beside the measured
cycles (every layer priced with the int32 bias the compiled model gives it, Layer.bias).

    python benchmarks/tuned_models.py [--models mobilenet_v2,resnet50,bert_layer] [--resolution 64] [--sequence 128]
                                      [--budget 60] [--per-step]
    python benchmarks/tuned_models.py --smoke     # a tiny depthwise-separable CNN, a short search
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import baco  # noqa: E402
from baco.codegen.program import run_program  # noqa: E402
from baco.gemmini.energy import energy_pj  # noqa: E402
from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.model.cli import build_model  # noqa: E402
from baco.model.lower import CpuStep, GemminiStep  # noqa: E402
from baco.model.workload import workload_of  # noqa: E402
from baco.model.zoo import seeded_inputs, with_bn_statistics  # noqa: E402
from baco.sim.timing import TimingModel  # noqa: E402
from baco.tuner.arch import DEFAULT_HARDWARE  # noqa: E402
from baco.tuner.baselines import gemmini_default  # noqa: E402
from baco.tuner.emit import result_dict  # noqa: E402
from baco.tuner.explore import coexplore  # noqa: E402
from baco.tuner.kernel_model import conv_schedule_cycles, gemm_schedule_cycles  # noqa: E402
from baco.tuner.mapping import KERNEL_B_PADDED, is_kernel_layer  # noqa: E402
from baco.tuner.whole_model import default_schedule_cost  # noqa: E402

SPECS = {"mobilenet_v2": "torchvision.models:mobilenet_v2", "resnet50": "torchvision.models:resnet50",
         "resnet18": "torchvision.models:resnet18", "mobilenet_v3_small": "torchvision.models:mobilenet_v3_small",
         "bert_layer": "baco.tuner.torch_models:bert_base_layer"}
SEQUENCE_MODELS = {"bert_layer": 768}       # input (1, --sequence, width); the others (1, 3, --resolution, --resolution)


class TinySeparable(nn.Module):
    """The smoke model: a stem conv, a depthwise-separable block with a residual add, a linear head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.dw = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.BatchNorm2d(16), nn.ReLU())
        self.pw = nn.Sequential(nn.Conv2d(16, 16, 1), nn.BatchNorm2d(16))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.pw(self.dw(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def gemmini_alone(layer, schedule, hw) -> float:
    """Cycles of one instance of a layer's program under `schedule` on hw = (pe_dim, sp_kb, acc_kb) as
    the program models predict them for Gemmini alone, the commands arriving for free (the tuner's
    model before it counted the CPU issuing them)."""
    if not is_kernel_layer(layer):
        return conv_schedule_cycles(layer, schedule, hw, end_to_end=False)
    return gemm_schedule_cycles(layer.P, layer.K, layer.C, schedule, GemminiConfig.from_capacity(int(hw[0]), *hw[1:]),
                                end_to_end=False, b_padded=KERNEL_B_PADDED, bias=layer.bias)


STEP_KINDS = ("layer", "matmul", "add", "cpu")   # how the per-kind lines group a program's steps


def step_kind(step) -> str:
    if isinstance(step, CpuStep):
        return "cpu"
    return "layer" if step.layer is not None else step.op.kind


def run_build(compiled, x, elf: Path, timeout_s: float) -> dict:
    """The ELF on the ISS with the cycle model: end-to-end cycles, the layer steps' cycles, Gemmini
    energy (µJ) of the run's counts, bit-exactness, tuned layers."""
    build = compiled.build_elf(str(elf), x)
    tm = TimingModel(compiled.config)
    run = run_program(build, timing=tm, timeout_s=timeout_s)
    cfg = compiled.config
    energy_uj = energy_pj(tm.report(), sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6
    layer_steps = {i: s for i, s in enumerate(compiled.lowered.steps) if isinstance(s, GemminiStep) and s.layer}
    # the program's steps are named s<lowered step index>_<op kind>[.<launch>] (baco.model.link)
    step_cycles, by_kind = {}, dict.fromkeys(STEP_KINDS, 0)
    for n, c in run.step_cycles.items():
        i = int(n.split("_")[0][1:])
        by_kind[step_kind(compiled.lowered.steps[i])] += c
        if i in layer_steps:
            step_cycles[i] = step_cycles.get(i, 0) + c
    layer_cycles = sum(step_cycles.values())
    by_key = {}           # layer key -> measured cycles of its steps (one list entry per step)
    for i, c in step_cycles.items():
        by_key.setdefault(layer_steps[i].layer.key, []).append(c)
    return {"cycles": run.total_cycles, "layer_cycles": layer_cycles, "energy_uj": energy_uj,
            "exact": run.passed, "tuned": sum(s.schedule_source == "tuned" for s in layer_steps.values()),
            "layers": len(layer_steps), "sources": [(s.layer.key, s.schedule_source) for s in layer_steps.values()],
            "by_key": by_key, "by_kind": by_kind}


def measure(name: str, model, shape, budget: float, calibrate: int, seed: int, smoke: bool, out: Path,
            timeout_s: float) -> dict:
    t0 = time.perf_counter()
    x = seeded_inputs(shape, 1, seed=seed + 1)[0]
    default_build = baco.compile_model(model, x, calibrate=calibrate)
    workload = workload_of(default_build.lowered)
    layers, untuned = workload.layers, workload.untuned
    quick = dict(steps=10, starts=2, random_pool=8, polish=False) if smoke else {}
    result = coexplore(layers, seed=seed, time_budget_s=None if smoke else budget, progress=False,
                       untuned=untuned, **quick)
    design = result_dict(layers, result)
    tune_s = time.perf_counter() - t0
    lib = gemmini_default(layers, untuned=untuned)
    default = [default_schedule_cost(layer, DEFAULT_HARDWARE) for layer in layers]
    dc, de, dg = (sum(layer.count * p[i] for layer, p in zip(layers, default)) for i in (0, 1, 2))
    uc, ue = untuned.cost(DEFAULT_HARDWARE)
    hw3 = (result.hw.pe_dim, result.hw.sp_kb, result.hw.acc_kb)
    tuned_alone = [gemmini_alone(layer, cost.schedule, hw3) for layer, cost in zip(layers, result.per_layer)]
    tg = sum(layer.count * c for layer, c in zip(layers, tuned_alone))
    tc, te = result.cycles - result.untuned_cycles, result.energy_uj - result.untuned_energy_uj
    # what the design has each layer run: a convolution may be marked to run its kernel's default program
    # (Cost.schedule_source "default": the search priced it cheapest, or no tile fits), the rest its schedule
    marked = {layer.key: "default" if cost.schedule_source == "default" else "tuned"
              for layer, cost in zip(layers, result.per_layer)}
    r = {"name": name, "layers": len(layers), "depthwise": sum(l.depthwise for l in layers), "marked": marked,
         "hw": result.hw, "tune_s": tune_s, "pred_tuned": result.cycles * result.energy_uj,
         "pred_default": (dc + uc) * (de + ue), "pred_library": lib.cycles * lib.energy_uj,
         "pred": {"tuned": (result.cycles, result.energy_uj), "default": (dc + uc, de + ue)},
         "pred_layers": {"tuned": tc * te, "default": dc * de},
         "pred_kinds": {"tuned": predicted_kinds(tc, untuned, result.hw),
                        "default": predicted_kinds(dc, untuned, DEFAULT_HARDWARE)},
         "pred_alone": {"tuned": tg * te, "default": dg * de},
         "per_layer": [(layer, cost.cycles, d[0], alone, d[2])
                       for layer, cost, d, alone in zip(layers, result.per_layer, default, tuned_alone)]}
    for kind, d in (("default", None), ("tuned", design)):
        compiled = default_build if d is None else baco.compile_model(model, x, design=d, calibrate=calibrate)
        r[kind] = run_build(compiled, x, out / f"{name}_{kind}.elf", timeout_s)
    r["seconds"] = time.perf_counter() - t0
    return r


def runs_as_marked(r: dict) -> bool:
    """Whether the tuned build ran every layer step as the design marks its layer (tuned or default)."""
    wrong = [(key, source) for key, source in r["tuned"]["sources"] if r["marked"].get(key) != source]
    for key, source in wrong:
        print(f"  layer {key}: the design marks it {r['marked'].get(key)!r}, the build ran it {source!r}")
    return not wrong


def predicted_kinds(layer_cycles: float, untuned, hw) -> dict:
    """Predicted cycles per kind of step (STEP_KINDS) of a build on hw."""
    costs = dict(zip(("matmul", "add", "cpu"), ([], [], [])))
    steps = untuned.per_step(hw)
    kinds = ["matmul"] * len(untuned.gemms) + ["add"] * len(untuned.adds) + ["cpu"] * len(untuned.cpu)
    for kind, (_, count, cycles) in zip(kinds, steps):
        costs[kind].append(count * cycles)
    return {"layer": layer_cycles, **{k: sum(v) for k, v in costs.items()}}


def print_row(r: dict, per_step: bool = False) -> None:
    d, t = r["default"], r["tuned"]
    gain = d["cycles"] * d["energy_uj"] / (t["cycles"] * t["energy_uj"])
    layer_gain = d["layer_cycles"] * d["energy_uj"] / (t["layer_cycles"] * t["energy_uj"])
    pred = r["pred_default"] / r["pred_tuned"]
    hw = r["hw"]
    print(f"{r['name']}: {r['layers']} unique layers ({r['depthwise']} depthwise), tuned {hw.pe_dim}x{hw.pe_dim} "
          f"{hw.sp_kb:g}/{hw.acc_kb:g} KB in {r['tune_s']:.0f} s; {t['tuned']}/{t['layers']} layer steps tuned "
          f"({sum(v == 'default' for v in r['marked'].values())} layers the design marks default); "
          f"bit-exact default {d['exact']}, tuned {t['exact']}")
    for kind, m in (("default", d), ("tuned", t)):
        pc, pe = r["pred"][kind]
        print(f"  {kind:8s} {m['cycles']:>12,} cycles end to end ({m['layer_cycles']:,} in layer steps; predicted "
              f"{pc:,.0f}), Gemmini energy {m['energy_uj']:.1f} uJ (predicted {pe:.1f})")
        print("           per kind, measured / predicted: " + ", ".join(
            f"{k} {m['by_kind'][k]:,} / {r['pred_kinds'][kind][k]:,.0f}" for k in STEP_KINDS))
    if per_step:
        print(f"  {'layer':34s} {'count':>5s} {'default pred':>12s} {'(alone)':>10s} {'sim':>10s} {'tuned pred':>11s} "
              f"{'(alone)':>10s} {'sim':>10s}")
        for layer, tuned_pred, default_pred, tuned_alone, default_alone in r["per_layer"]:
            ds, ts = (sum(m["by_key"].get(layer.key, [])) / layer.count for m in (d, t))
            print(f"  {layer.name[:34]:34s} {layer.count:5d} {default_pred:12,.0f} {default_alone:10,.0f} {ds:10,.0f} "
                  f"{tuned_pred:11,.0f} {tuned_alone:10,.0f} {ts:10,.0f}")
    alone = r["pred_alone"]["default"] / r["pred_alone"]["tuned"]
    layers_only = r["pred_layers"]["default"] / r["pred_layers"]["tuned"]
    print(f"  EDP gain measured {gain:.2f}x end to end, {layer_gain:.2f}x over the layer steps; predicted "
          f"{pred:.2f}x over the default schedules ({gain / pred:.2f} of it end to end, {layer_gain / pred:.2f} "
          f"over the layer steps), {r['pred_library'] / r['pred_tuned']:.2f}x over the C library's program "
          f"(the tuner's report); over the layers alone {layers_only:.2f}x ({gain / layers_only:.2f} of it end to "
          f"end, {layer_gain / layers_only:.2f} over the layer steps); with Gemmini-alone cycles (the CPU's issue "
          f"left out) {alone:.2f}x ({layer_gain / alone:.2f} over the layer steps); {r['seconds']:.0f} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="mobilenet_v2,resnet50", help=f"comma-separated, of {', '.join(SPECS)}")
    p.add_argument("--resolution", type=int, default=64, help="input height and width (default 64)")
    p.add_argument("--sequence", type=int, default=128, help="the BERT layer's sequence length (default 128)")
    p.add_argument("--budget", type=float, default=60.0, help="tuning seconds per model")
    p.add_argument("--calibrate", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--smoke", action="store_true", help="a tiny depthwise-separable CNN, a short search")
    p.add_argument("--timeout", type=float, default=3600.0,
                   help="wall seconds each ISS run may take (default 3600: ResNet-50 at 64x64 took over 600 on a loaded machine)")
    p.add_argument("--per-step", action="store_true", help="per layer: predicted and simulated cycles, both builds")
    a = p.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        if a.smoke:
            shape = (1, 3, 8, 8)
            torch.manual_seed(a.seed)
            runs = [("tiny_separable", with_bn_statistics(TinySeparable().eval(), shape, seed=a.seed), shape)]
            a.calibrate = 2
        else:
            unknown = [m for m in a.models.split(",") if m not in SPECS]
            if unknown:
                p.error(f"unknown models {unknown}: choose from {', '.join(SPECS)}")
            shapes = {m: (1, a.sequence, SEQUENCE_MODELS[m]) if m in SEQUENCE_MODELS else
                      (1, 3, a.resolution, a.resolution) for m in a.models.split(",")}
            runs = [(m, build_model(SPECS[m], shapes[m], a.seed), shapes[m]) for m in a.models.split(",")]
        for name, model, shape in runs:
            r = measure(name, model, shape, a.budget, a.calibrate, a.seed, a.smoke, Path(tmp), a.timeout)
            print_row(r, a.per_step)
            ok &= r["default"]["exact"] and r["tuned"]["exact"] and runs_as_marked(r)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
