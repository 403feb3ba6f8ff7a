"""The loop, measured: tune, compile, run, time — does the simulator confirm the tuner?

For the GEMM layers of BERT (tuned as one network) and for GEMM/GEMV operators drawn from
benchmarks/single_op.py's bands (each tuned alone), the tuned schedules are compiled for the
tuned Gemmini, run bit-exact on the functional model and timed by the cycle model
(baco.design.check_design); Gemmini-default runs the C library's tiling (baco.sim.clib).
Printed: per layer the predicted (the cost model the search uses: the compiled program for
kernel layers, baco.tuner.kernel_model) and simulated cycles, and the same for Gemmini-default
(predicted: kernel_model.library_matmul_cycles, the C library's program the default runs, so both
halves of the gain describe the programs that run); over all layers the Pearson r of
log cycles and the median relative error |pred − sim| / sim (goals r ≥ 0.95, median ≤ 15%),
and the same for the Timeloop-matched model and for the analytical program model without its
learned residual, of the same mappings; per network/operator the EDP gain over
Gemmini-default, predicted and simulated (goal: simulated within 25% of predicted).

Operators from the bands are shrunk (largest dimension halved, never below its band) until
they have at most --max-macs MACs, so that every one runs on the functional model.

    python benchmarks/loop_check.py [--smoke] [--budget S] [--ops N] [--seed N] [--no-bert]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from baco.design import check_design, summary  # noqa: E402
from baco.tuner.emit import result_dict  # noqa: E402
from baco.tuner.explore import coexplore  # noqa: E402
from baco.tuner.workloads import gemm, load_network  # noqa: E402
from single_op import GEMM_BANDS, log_uniform  # noqa: E402


def band_operators(count: int, gemv: bool, rng, max_macs: float):
    """count GEMM (or GEMV: N = 1) operators spread over single_op's bands, shrunk to max_macs."""
    out = []
    for i in range(count):
        band = GEMM_BANDS[int((i + 0.5) * len(GEMM_BANDS) / count) % len(GEMM_BANDS)]
        dims = [log_uniform(rng, lo, hi) for lo, hi in band]
        if gemv:
            dims[1] = 1
        while dims[0] * dims[1] * dims[2] > max_macs:
            j = max(range(3), key=lambda x: dims[x] / band[x][0])
            if dims[j] // 2 < band[j][0] and all(dims[x] // 2 < band[x][0] for x in range(3)):
                break
            dims[j] = max(band[j][0], dims[j] // 2)
        M, N, K = dims
        out.append(gemm(M, K, N, name=f"{'gemv' if gemv else 'gemm'}_{M}x{N}x{K}"))
    return out


def tune_and_check(layers, *, budget, seed, smoke=False):
    t0 = time.perf_counter()
    quick = dict(steps=10, starts=2, random_pool=8, polish=False) if smoke else {}
    result = coexplore(layers, seed=seed, time_budget_s=budget, progress=False, **quick)
    tune_s = time.perf_counter() - t0
    design = result_dict(layers, result)
    checks = check_design(design, progress=None)
    return design, checks, tune_s, time.perf_counter() - t0 - tune_s


def analytical_cycles(design: dict, check) -> float:
    """The analytical model of the compiled program alone (costmodel.compiled_program_cycles, no
    learned residual) for the layer's tuned mapping and schedule on the tuned hardware."""
    import torch
    from baco.tuner import costmodel
    from baco.tuner.mapping import parse_mapping
    entry = next(e for e in design["layers"] if e["name"] == check.name)
    temporal, sC, sK = costmodel.mapping_tensors(parse_mapping(entry["mapping"]))
    hw = tuple(torch.tensor([float(design["hardware"][k])], dtype=torch.float64) for k in ("pe_dim", "sp_kb", "acc_kb"))
    with torch.no_grad():
        return float(costmodel.compiled_program_cycles(check.layer, temporal, (sC, sK), hw,
                                                        double_buffer=check.schedule.double_buffer,
                                                        dataflow=check.schedule.dataflow)[0])


def pearson(x, y) -> float:
    return float(np.corrcoef(x, y)[0, 1]) if len(x) > 1 else float("nan")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two small operators, a few steps (for the tests)")
    p.add_argument("--budget", type=float, default=20.0, help="tuning seconds per network/operator")
    p.add_argument("--ops", type=int, default=6, help="operators per category (GEMM, GEMV)")
    p.add_argument("--max-macs", type=float, default=1.5e8)
    p.add_argument("--no-bert", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    budget = None if a.smoke else a.budget
    groups = []          # (name, [layers])
    if not (a.smoke or a.no_bert):
        groups.append(("bert", load_network("bert")))
    n_ops = 1 if a.smoke else a.ops
    max_macs = 2e5 if a.smoke else a.max_macs
    for gemv in (False, True):
        groups += [(layer.name, [layer]) for layer in band_operators(n_ops, gemv, rng, max_macs)]

    rows, default_rows, gains, all_exact = [], [], [], True
    print(f"{'network/op':22s} {'layer':10s} {'pred cycles':>12s} {'sim cycles':>12s} {'sim/pred':>8s} "
          f"{'design':>18s} bits {'default pred':>12s} {'default sim':>12s} {'sim/pred':>8s}")
    for name, layers in groups:
        design, checks, tune_s, check_s = tune_and_check(layers, budget=budget, seed=a.seed, smoke=a.smoke)
        hw = design["hardware"]
        hw_text = f"{hw['pe_dim']}x{hw['pe_dim']} {hw['sp_kb']:g}/{hw['acc_kb']:g}"
        for c in checks:
            if c.simulated is None:
                continue
            rows.append((c.predicted.cycles, c.simulated.cycles, c.timeloop_cycles, analytical_cycles(design, c)))
            default_rows.append((c.default_predicted.cycles, c.default_simulated.cycles))
            print(f"{name[:22]:22s} {c.name[:10]:10s} {c.predicted.cycles:12.4g} {c.simulated.cycles:12.4g} "
                  f"{c.simulated.cycles / c.predicted.cycles:8.2f} "
                  f"{hw_text:>18s} "
                  f"{'ok  ' if c.bit_exact else 'MISMATCH'} {c.default_predicted.cycles:12.4g} "
                  f"{c.default_simulated.cycles:12.4g} {c.default_simulated.cycles / c.default_predicted.cycles:8.2f}")
        s = summary(checks)
        all_exact &= s["bit_exact"]
        gains.append((name, s["gain_predicted"], s["gain_simulated"], tune_s, check_s))

    sim = np.array([r[1] for r in rows])
    for label, col in (("the search's model (compiled program)", 0), ("Timeloop-matched model", 2),
                       ("analytical program model alone (no residual)", 3)):
        pred = np.array([r[col] for r in rows])
        rel = np.abs(pred - sim) / sim
        print(f"\n{len(rows)} layers, {label}: Pearson r of log cycles {pearson(np.log(pred), np.log(sim)):.3f}"
              f"{' (goal >= 0.95)' if col == 0 else ''}, median relative error {100 * statistics.median(rel):.1f}%"
              f"{' (goal <= 15%)' if col == 0 else ''}, max {100 * rel.max():.1f}%", end="")
    pred, dsim = (np.array(col) for col in zip(*default_rows))
    rel = np.abs(pred - dsim) / dsim
    print(f"\n{len(rows)} layers on Gemmini-default, the C library's program (kernel_model.library_matmul_cycles): "
          f"Pearson r of log cycles {pearson(np.log(pred), np.log(dsim)):.3f}, median relative error "
          f"{100 * statistics.median(rel):.1f}%, max {100 * rel.max():.1f}%")
    print(f"\n{'network/op':22s} {'gain pred':>9s} {'gain sim':>9s} {'sim/pred':>8s} {'tune s':>7s} {'check s':>8s}")
    for name, gp, gs, ts, cs in gains:
        print(f"{name[:22]:22s} {gp:9.2f} {gs:9.2f} {gs / gp:8.2f} {ts:7.1f} {cs:8.1f}")
    within = sum(abs(gs / gp - 1) <= 0.25 for _, gp, gs, _, _ in gains)
    print(f"simulated gain within 25% of predicted: {within}/{len(gains)}; every layer bit-exact: {all_exact}")
    return 0 if all_exact else 1


if __name__ == "__main__":
    sys.exit(main())
