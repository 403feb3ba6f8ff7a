"""Network co-exploration: baco (importance off, `baco tune`'s default, and on) against the baselines.

Every searching method gets the same wall-clock budget per network and the same seed; all
are scored by the same cost model on the same layers, as they are (ragged edges run as short
tiles). Printed per network: each method's EDP, its ratio to baco's (> 1: baco
is better), the ratio of its Timeloop-matched EDP to that model's network EDP lower bound
(costmodel.network_edp_lower_bound: compulsory DRAM traffic and MACs on the largest array; 1.0 =
no design can do better; the search itself costs GEMM layers as their compiled program), wall time,
the time it took to reach within 5% of its own final EDP, and the array utilisation (the layers'
MACs over DIM²·cycles). Then geomeans over the networks. Budgets include set-up; a method
overruns its budget only by its last unit of work (a generation, a trial, a step: measured at most
+3.4 s on 20 s, a GA generation on a heavily loaded machine), and each network's longest search is
printed with its overrun.

Writes to --out (default out/network): results.json, normalised_edp.png (EDP per network and
method over baco's, the thesis's Fig. 6.10), convergence.png (best EDP vs wall time per method),
and <network>/ with baco's design (Chipyard config, gemmini_params.h, Timeloop arch/problem/
mapping files of every layer, so Timeloop can re-evaluate the network outside the project).

For a network of GEMM layers only (BERT) it also prints the exact optimum of the space every
method searches (baco.tuner.optimum: branch and bound below the best method's EDP; "optimum
(exhaustive)") and each method's EDP over it (1.000: no design is better), or that it did not
finish within --optimum-limit seconds (default by size: 300 smoke, 30 quick, 600 default; BERT's
takes hours, README Known limitations). --no-optimum skips it.

    python benchmarks/network.py [--smoke | --quick] [--budget S] [--seed N] [--out DIR]
                                 [--no-optimum | --optimum-limit S]

Sizes: --smoke (BERT, 2 s per method; for the tests), --quick (BERT and ResNet-50, 8 s: under
3 minutes), default (the four DOSA networks, torchvision ResNet-18 and ViT-B/16, 20 s: under
20 minutes here).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from baco.tuner import baselines, workloads  # noqa: E402
from baco.tuner.costmodel import network_edp_lower_bound  # noqa: E402
from baco.tuner.emit import utilization, write_outputs  # noqa: E402
from baco.tuner.explore import coexplore  # noqa: E402
from baco.tuner.mapping import is_kernel_layer  # noqa: E402
from baco.tuner.optimum import OptimumTimeout, exact_optimum  # noqa: E402

SIZES = {  # networks, seconds per method per network, seconds for the exhaustive optimum
    "smoke": (["bert"], 2.0, 300.0),
    "quick": (["bert", "resnet50"], 8.0, 30.0),
    "default": (["bert", "resnet50", "unet", "retinanet", "torchvision.models:resnet18",
                 "torchvision.models:vit_b_16"], 20.0, 600.0),
}
INPUT_SHAPES = {"torchvision.models:resnet18": (1, 3, 224, 224), "torchvision.models:vit_b_16": (1, 3, 224, 224)}
METHODS = {
    "baco": lambda layers, budget, seed: coexplore(layers, seed=seed, time_budget_s=budget, progress=False,
                                                   importance=False),
    "baco-importance": lambda layers, budget, seed: coexplore(layers, seed=seed, time_budget_s=budget,
                                                              progress=False, importance=True),
    "gemmini-default": lambda layers, budget, seed: baselines.gemmini_default(layers),
    "dosa-style": lambda layers, budget, seed: baselines.dosa_style(layers, time_budget_s=budget, seed=seed),
    "genetic": lambda layers, budget, seed: baselines.genetic(layers, time_budget_s=budget, seed=seed),
    "bayesian": lambda layers, budget, seed: baselines.bayesian(layers, time_budget_s=budget, seed=seed),
    "random": lambda layers, budget, seed: baselines.random_search(layers, time_budget_s=budget, seed=seed),
}


def network_layers(name: str) -> list:
    return (workloads.layers_from_model_spec(name, INPUT_SHAPES[name]) if ":" in name
            else workloads.load_network(name))


def time_to_within(trace, final: float, tol: float = 0.05) -> float | None:
    """Seconds until the search first held a design within tol of its final EDP."""
    return next((t for t, edp in trace if edp <= final * (1 + tol)), None)


def geomean(xs) -> float:
    xs = [x for x in xs if x and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def plot(results: dict, out: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    nets, methods = list(results), list(METHODS)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(nets)), 4))
    width = 0.8 / len(methods)
    for k, m in enumerate(methods):
        vals = [results[n][m]["edp"] / results[n]["baco"]["edp"] for n in nets]
        ax.bar(np.arange(len(nets)) + k * width, vals, width, label=m)
    ax.set_xticks(np.arange(len(nets)) + 0.4 - width / 2, [n.split(":")[-1] for n in nets])
    ax.set_yscale("log")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_ylabel("EDP / baco's EDP (lower is better)")
    ax.set_title("Network co-exploration, equal wall-time budget")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    bars = out / "normalised_edp.png"
    fig.savefig(bars, dpi=120)
    plt.close(fig)

    cols = min(3, len(nets))
    rows = -(-len(nets) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.4 * rows), squeeze=False)
    for ax, n in zip(axes.flat, nets):
        for m in methods:
            trace = results[n][m]["trace"]
            if trace:
                t, e = zip(*trace)
                ax.step(list(t) + [results[n][m]["wall_s"]], list(e) + [e[-1]], where="post", label=m)
            else:
                ax.axhline(results[n][m]["edp"], ls="--", lw=0.8, label=m, color="gray")
        ax.set_yscale("log")
        ax.set_title(n.split(":")[-1])
        ax.set_xlabel("wall time (s)")
        ax.set_ylabel("best EDP so far")
    for ax in list(axes.flat)[len(nets):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    conv = out / "convergence.png"
    fig.savefig(conv, dpi=120)
    plt.close(fig)
    return [bars, conv]


def print_optimum(layers: list, res: dict, bound: float, macs: int, time_limit: float) -> dict:
    """The exact optimum (below the best method's EDP) as a table row, and every method's EDP over it;
    or that it did not finish within time_limit seconds."""
    try:
        o = exact_optimum(layers, min(v["edp"] for v in res.values()), time_limit=time_limit)
    except OptimumTimeout as e:
        print(f"  {'optimum (exhaustive)':<20}  not finished: {e}")
        return {"finished": False, "time_limit_s": time_limit}
    r = o.result
    pe = r.hw.pe_dim
    print(f"  {'optimum (exhaustive)':<20}{r.edp:>12.4g}{r.edp / res['baco']['edp']:>9.3f}{r.timeloop_edp / bound:>9.2f}"
          f"{o.wall_s:>8.1f}{'-':>9}{utilization(macs, r.cycles, pe):>7.1%}  {pe}x{pe} {r.hw.sp_kb:g}/{r.hw.acc_kb:g} KB")
    proof = "= its lower bound: exact" if o.exact else f"lower bound {o.lower_bound:.6g}: NOT proven optimal"
    print(f"  optimum {r.edp:.6g} {proof} ({o.blocks_bounded} blocks bounded, {o.blocks_costed} costed, "
          f"{o.blocks_walked} walked, {o.hardware_points} hardware points; "
          f"arrays ruled out by the bounds: {', '.join(f'{p}x{p}' for p in o.arrays_pruned) or 'none'})")
    print("  EDP / optimum: " + ", ".join(f"{m} {v['edp'] / r.edp:.3f}" for m, v in res.items()))
    return {"finished": True, "edp": r.edp, "lower_bound": o.lower_bound, "exact": o.exact, "wall_s": o.wall_s,
            "hardware": [pe, r.hw.sp_kb, r.hw.acc_kb], "cycles": r.cycles, "energy_uj": r.energy_uj}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--smoke", action="store_true")
    size.add_argument("--quick", action="store_true")
    p.add_argument("--budget", type=float, help="seconds per method per network (overrides the size's)")
    p.add_argument("--networks", help="comma-separated networks (shipped names or torchvision.models:NAME)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-optimum", action="store_true", help="skip the exhaustive optimum of GEMM-only networks")
    p.add_argument("--optimum-limit", type=float, help="seconds the exhaustive optimum may take per network "
                   "(default by size: 300 smoke, 30 quick, 600 default)")
    p.add_argument("--out", default="out/network")
    a = p.parse_args(argv)
    if a.optimum_limit is not None and not a.optimum_limit > 0:
        p.error(f"--optimum-limit must be a positive number of seconds, got {a.optimum_limit:g}")
    nets, budget, optimum_limit = SIZES["smoke" if a.smoke else "quick" if a.quick else "default"]
    optimum_limit = optimum_limit if a.optimum_limit is None else a.optimum_limit
    nets = a.networks.split(",") if a.networks else nets
    budget = a.budget or budget
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    results = {}
    for net in nets:
        layers = network_layers(net)
        bound = network_edp_lower_bound(layers)
        macs = sum(l.macs * l.count for l in layers)
        print(f"\n{net}: {len(layers)} unique layers, {sum(l.count for l in layers)} in all, "
              f"{macs / 1e9:.2f} GMACs; budget {budget:g} s per method")
        print(f"  {'method':<20}{'EDP':>12}{'/ baco':>9}{'/ bound':>9}{'wall s':>8}{'t(5%) s':>9}{'util':>7}  hardware")
        res = {}
        for name, run in METHODS.items():
            r = run(layers, budget, a.seed)
            res[name] = {"edp": r.edp, "timeloop_edp": r.timeloop_edp, "cycles": r.cycles, "energy_uj": r.energy_uj, "wall_s": r.wall_s,
                         "t_within_5pct": time_to_within(r.trace, r.edp), "trace": r.trace,
                         "hardware": [r.hw.pe_dim, r.hw.sp_kb, r.hw.acc_kb], "area_mm2": r.hw.area_mm2,
                         "utilization": utilization(macs, r.cycles, r.hw.pe_dim)}
            if name == "baco":
                write_outputs(out / net.replace(":", "_"), layers, r)
        for name, v in res.items():
            t5 = v["t_within_5pct"]
            pe, sp, acc = v["hardware"]
            print(f"  {name:<20}{v['edp']:>12.4g}{v['edp'] / res['baco']['edp']:>9.3f}{v['timeloop_edp'] / bound:>9.2f}"
                  f"{v['wall_s']:>8.1f}{(f'{t5:.1f}' if t5 is not None else '-'):>9}{v['utilization']:>7.1%}"
                  f"  {pe}x{pe} {sp:g}/{acc:g} KB")
        worst = max((m for m in res if m != "gemmini-default"), key=lambda m: res[m]["wall_s"])
        print(f"  budget: the longest search, {worst}, took {res[worst]['wall_s'] - budget:+.1f} s over its {budget:g} s")
        results[net] = {**res, "lower_bound": bound}
        if not a.no_optimum and all(is_kernel_layer(layer) for layer in layers):
            results[net]["optimum"] = print_optimum(layers, res, bound, macs, optimum_limit)
    print(f"\ngeomean over {len(nets)} networks of EDP(method) / EDP(baco)  (> 1: baco better)")
    for name in METHODS:
        if name != "baco":
            print(f"  {name:<20}{geomean(results[n][name]['edp'] / results[n]['baco']['edp'] for n in nets):8.3f}")
    print("geomean Timeloop-matched EDP / its lower bound: " + ", ".join(
        f"{m} {geomean(results[n][m]['timeloop_edp'] / results[n]['lower_bound'] for n in nets):.2f}" for m in METHODS))
    print("importance on vs off (EDP on / EDP off; time to within 5% of its own final EDP, on vs off): " + "; ".join(
        f"{n.split(':')[-1]} EDP {results[n]['baco-importance']['edp'] / results[n]['baco']['edp']:.3f}x, "
        f"t(5%) {results[n]['baco-importance']['t_within_5pct'] or float('nan'):.1f}s vs "
        f"{results[n]['baco']['t_within_5pct'] or float('nan'):.1f}s" for n in nets))
    (out / "results.json").write_text(json.dumps(results, indent=1))
    pngs = plot({n: {m: results[n][m] for m in METHODS} for n in nets}, out)
    print(f"\nwrote {out / 'results.json'}, {', '.join(str(p) for p in pngs)} and baco's designs "
          f"(Timeloop files) in {out}/<network>/; total {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
