"""Training data and weights for the learned residuals of baco/tuner/residual.py.

Two residuals, one weights file (baco/data/cost_residual.json):
- "compiled": the GEMM kernel (baco/kernels/matmul.py) compiled with random
  schedules (block sizes, WS/OS, double buffering; int8 or int32 output) for
  random GemminiConfigs, run bit-exact on the functional model with the cycle
  model observing (baco/sim/timing.py); the residual corrects
  costmodel.compiled_program_cycles (the analytical model of that program)
  towards the measured cycles.
- "rtl": rows of the RTL file (FireSim cycle counts of DOSA's programs, the
  70% training split that benchmarks/rtl_calibration.py also uses); the
  residual corrects the Timeloop-matched model towards the measured cycles.
Both are scored on held-out rows (compiled: a separate set of kernels; RTL:
the 30% split) and the scores are printed.

    python benchmarks/train_cost_residual.py collect [--samples 600] [--seed 0]
    python benchmarks/train_cost_residual.py train [--write] [--only compiled|rtl]
    python benchmarks/train_cost_residual.py --smoke       (6 small kernels, a short fit, no --write)
    python benchmarks/train_cost_residual.py unseen [--samples 100] [--seed 2027] [--write]
        (the shipped "compiled" residual on kernels of GEMM shapes it was never fitted on)

Every residual is also scored on layers it never saw (`train` and `combined`: group 5-fold by layer
over the RTL file, refitted per fold; `unseen`: fresh GEMM shapes for "compiled"), and --write ships
it only where it beats the analytical model there (residual.beats_analytical), with that record
(residual.validation).
    python benchmarks/train_cost_residual.py combined [--cache out/rtl_cycle_model.*.csv] [--write] [--smoke]

`combined` trains the "combined" residual: RTL cycles / the cycle model's cycles of the program DOSA
ran for the row, residual.fit_supported on residual.RATIO_FEATURES: two MLPs (mixed loss) where every
feature is inside its training range, outside it a bounded linear model (residual.fit_bounded_linear:
ridge on the log scale, each layer weighted alike, the penalty and a MAPE intercept chosen on inner
layer-held-out folds, features and output clamped to the training range); the features are: the program's utilisation, traffic
and commands per unit of compute, tiles, overflow of the memories (from
baco.sim.programs.dosa_program_features), no layer sizes. The cycle model's cycles come from
`rtl_calibration.py --cache FILE` (about a second per row, so they are timed once and cached); only
training-split rows are fitted, held-out rows in the cache are scored. --write replaces only the
"combined" entry of the weights file.

Variants scored on layers held out whole (group 5-fold by layer, 1,567 rows, 66 layers; raw r / log r /
MAPE; the cycle-model cache of 2026-11-28, then in brackets one re-timed by the cycle model of
2026-11-29, 8f20271): the cycle model alone 0.921 / 0.929 / 49.5% (0.920 / 0.925 / 47.3%); the former
MLP ensemble on the "rtl" features (the layer's sizes and tiles), log program cycles and counts 0.758 /
0.986 / 27.1% (it learned the training layers: raw r falls on the largest unseen ones); ridge on
RATIO_FEATURES, log-scale fit, no intercept shift 0.934-0.942 / 0.946-0.956 / 61-67% (0.942 / 0.954 /
68.8%; the geometric-mean correction over-predicts, which MAPE punishes); with the MAPE intercept 0.939
/ 0.947 / 40.4% (0.940 / 0.945 / 41.1%); MLPs on RATIO_FEATURES alone 0.867-0.872 / 0.977 / 28.2-28.3%
(0.833 / 0.977 / 28.5%; raw r: the largest unseen layers lie outside the training range); the shipped
recipe (MLPs inside the support, the linear model outside) 0.928 / 0.972 / 28.1% (0.940 / 0.973 /
27.6%); with the linear model's intercept not shifted 0.937 / 0.976 / 29.2% (0.949 / 0.976 / 29.2%);
with MLPs whose loss adds the squared log error weighted by each row's share of the measured cycles
0.929 / 0.975 / 29.2% (0.932 / 0.976 / 28.8%), and with both 0.946 / 0.980 / 30.3% (0.941 / 0.980 /
30.4%). The unshifted intercept and the raw-scale loss buy raw r with MAPE; the shipped recipe is kept
(benchmarks/rtl_calibration.py lists the folds, kinds and the rows that set raw r).
"""
import argparse
import csv
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from baco.design import run_gemm
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, schedule_problems
from baco.tuner import residual
from baco.tuner.workloads import gemm

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "cost_residual"
RTL_FILE = ROOT / "benchmarks" / "data" / "rtl" / "firesim_train.csv"
COMPILED_FIELDS = ("M", "N", "K", "block_m", "block_n", "block_k", "dataflow", "double_buffer", "out_int8", "dim",
                   "sp_kb", "acc_kb", "cycles", "commands")


def kernel_cycles(M, N, K, schedule, cfg, out_int8):
    """(cycles, commands) of the compiled GEMM kernel's explicit stream (what the compiled residual
    model describes; LOOP_WS is the walk's), checked bit-exact, timed by the cycle model."""
    ok, report, _ = run_gemm(M, N, K, cfg, schedule, out_int8=out_int8, loop_ws=False)
    if not ok:
        raise AssertionError(f"GEMM {M}x{N}x{K} {schedule} on DIM {cfg.dim} is not bit-exact")
    return report["cycles"], report["commands"]


def estimated_commands(M, N, K, blocks, d):
    bm, bn, bk = blocks
    mb, nb, kb = -(-bm // d), -(-bn // d), -(-bk // d)
    programs = -(-M // bm) * -(-N // bn)
    return programs * (2 * mb * nb + -(-K // bk) * (mb + kb + 2 * mb * nb * kb))


def random_case(rnd, max_commands):
    """A random (M, N, K, schedule, config, out_int8) whose program is at most max_commands long."""
    while True:
        d = rnd.choice((4, 8, 16, 16, 32, 64))
        sp_kb = rnd.choice((16, 32, 64, 128, 256, 512))
        acc_kb = rnd.choice((8, 16, 32, 64, 128, 256))
        dims = []
        for _ in range(3):
            n = rnd.choice((rnd.randint(1, 64), rnd.randint(16, 512), 16 * rnd.randint(1, 32)))
            dims.append(n)
        M, N, K = dims
        blocks = tuple(min(rnd.choice((d, 2 * d, 4 * d, 8 * d, 16 * d, 32, 64, 128, 256)), max(d, -(-n // d) * d))
                       for n in (M, N, K))
        if estimated_commands(M, N, K, blocks, d) > max_commands:
            continue
        schedule = GemmSchedule(*blocks, dataflow=rnd.choice(("WS", "WS", "OS")), double_buffer=rnd.random() < 0.4)
        out_int8 = rnd.random() < 0.7
        try:
            cfg = GemminiConfig.from_capacity(d, sp_kb, acc_kb)
        except ValueError:
            continue
        if schedule_problems(schedule, cfg, out_int8):
            continue
        return M, N, K, schedule, cfg, out_int8


# The collections the shipped "compiled" weights were fitted on (baco/data/README.md): (seed, samples),
# drawn with max_commands 6000. random_case is deterministic in its seed, so their shapes are known
# without timing them again.
SHIPPED_COMPILED_COLLECTIONS = ((7, 700), (8, 350))


def shipped_compiled_shapes(max_commands=6000) -> set:
    """The (M, N, K) of every kernel the shipped "compiled" residual was fitted on."""
    shapes = set()
    for seed, samples in SHIPPED_COMPILED_COLLECTIONS:
        rnd = random.Random(seed)
        for _ in range(samples):
            shapes.add(random_case(rnd, max_commands)[:3])
    return shapes


def in_compiled_domain(rows):
    """[B] bool: rows where residual.compiled_cycles applies the residual (residual.COMPILED_*)."""
    return torch.tensor([int(r["dim"]) <= residual.COMPILED_MAX_DIM and int(r["K"]) >= residual.COMPILED_MIN_K
                         and max(int(r["M"]), int(r["N"]), int(r["K"])) <= residual.COMPILED_MAX_SIZE
                         for r in rows])


def unseen_compiled(samples, seed, path, max_commands=3000, write=False) -> int:
    """Score the shipped "compiled" residual on layers it never saw: fresh kernels (drawn with `seed`)
    whose GEMM shape (M, N, K) is none of its training kernels', timed by the cycle model; the
    analytical program model alone and with the residual, on all of them and on the domain where the
    product applies the residual. write: record the scores in the weights file and drop the residual if
    it does not beat the analytical model there."""
    model = residual.load("compiled")
    if model is None:
        print("no compiled residual is shipped (baco/data/README.md): fit one with `collect` and `train --only "
              "compiled --write` before scoring it here")
        return 1
    seen = shipped_compiled_shapes()
    rnd = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    timed = read_rows(path) if path.exists() else []      # the same seed's kernels timed before: reused
    rows, t0 = [], time.perf_counter()
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, COMPILED_FIELDS)
        w.writeheader()
        while len(rows) < samples:
            M, N, K, s, cfg, out_int8 = random_case(rnd, max_commands)
            if (M, N, K) in seen:
                continue
            if len(rows) < len(timed):
                rows.append(timed[len(rows)])
                w.writerow(rows[-1])
                continue
            rows.append(timed_row(M, N, K, s, cfg, out_int8))
            w.writerow(rows[-1])
            f.flush()
    x, base, y = compiled_tensors(rows)
    inside = in_compiled_domain(rows)
    with torch.no_grad():
        learned = base + model(x)
    print(f"{len(rows)} kernels of shapes the shipped compiled residual never saw ({len(seen)} training shapes; "
          f"{min(len(timed), samples)} timed before), {time.perf_counter() - t0:.0f} s -> {path}")
    for name, sel in (("all", torch.ones(len(rows), dtype=torch.bool)), ("where the product applies it", inside)):
        if int(sel.sum()) < 3:
            continue
        print(f"  {name} ({int(sel.sum())} kernels)")
        print("    analytical program model  ", fmt(scores(base[sel], y[sel])))
        print("    + learned residual        ", fmt(scores(learned[sel], y[sel])))
    record = held_out_record("compiled", f"{int(inside.sum())} kernels (seed {seed}) of GEMM shapes absent from its "
                             "training kernels, inside the domain where it is applied",
                             scores(base[inside], y[inside]), scores(learned[inside], y[inside]))
    if write:
        write_weights({} if record["compiled"]["used"] else {"compiled": None}, record)
    return 0


def timed_row(M, N, K, s, cfg, out_int8) -> dict:
    """One compiled kernel timed by the cycle model, as a row of COMPILED_FIELDS."""
    cycles, commands = kernel_cycles(M, N, K, s, cfg, out_int8)
    return dict(M=M, N=N, K=K, block_m=s.block_m, block_n=s.block_n, block_k=s.block_k, dataflow=s.dataflow,
                double_buffer=int(s.double_buffer), out_int8=int(out_int8), dim=cfg.dim, sp_kb=cfg.sp_kb,
                acc_kb=cfg.acc_kb, cycles=cycles, commands=commands)


def collect(samples, seed, path, max_commands=6000):
    """Time `samples` random compiled kernels; rows are appended to `path` as they come."""
    rnd = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows, t0 = [], time.perf_counter()
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, COMPILED_FIELDS)
        w.writeheader()
        while len(rows) < samples:
            M, N, K, s, cfg, out_int8 = random_case(rnd, max_commands)
            rows.append(timed_row(M, N, K, s, cfg, out_int8))
            w.writerow(rows[-1])
            f.flush()
    print(f"{len(rows)} compiled kernels timed in {time.perf_counter() - t0:.0f} s -> {path}")
    return rows


def read_rows(path):
    return list(csv.DictReader(open(path)))


def compiled_tensors(rows):
    """Features, analytical log cycles and measured log cycles of compiled-kernel rows."""
    feats, base, target = [], [], []
    for r in rows:
        M, N, K = int(r["M"]), int(r["N"]), int(r["K"])
        layer = gemm(M, K, N)
        blocks = {"BLOCK_M": int(r["block_m"]), "BLOCK_N": int(r["block_n"]), "BLOCK_K": int(r["block_k"])}
        hw = tuple(torch.tensor([float(r[k])], dtype=torch.float64) for k in ("dim", "sp_kb", "acc_kb"))
        temporal, sC, sK = residual.block_factors(layer, blocks, int(r["dim"]))
        f, b = residual.compiled_inputs(layer, temporal, (sC, sK), hw, out_int8=bool(int(r["out_int8"])),
                                        double_buffer=bool(int(r["double_buffer"])), dataflow=r["dataflow"])
        feats.append(f)
        base.append(b)
        target.append(math.log(float(r["cycles"])))
    return torch.cat(feats), torch.cat(base), torch.tensor(target, dtype=torch.float64)


def rtl_split(path):
    """The same fixed 70/30 split as benchmarks/rtl_calibration.py."""
    rows = read_rows(path)
    idx = list(range(len(rows)))
    random.Random(0).shuffle(idx)
    cut = int(0.7 * len(rows))
    return [rows[i] for i in idx[:cut]], [rows[i] for i in idx[cut:]]


def rtl_tensors(rows):
    feats, base, target = [], [], []
    for r in rows:
        f, b = residual.rtl_row_inputs(r)
        feats.append(f)
        base.append(b)
        target.append(math.log(float(r["target.gemmini_cycle"])))
    return torch.cat(feats), torch.cat(base), torch.tensor(target, dtype=torch.float64)


def program_features(row, cfg):
    """baco.sim.programs.dosa_program_features of the program DOSA ran for an RTL row, in order."""
    from baco.sim.programs import PROGRAM_FEATURES, dosa_program, dosa_program_features
    layer = {d: int(row[f"prob.{d}"]) for d in ("R", "S", "P", "Q", "C", "K", "N", "Wstride")}
    counts = dosa_program_features(dosa_program(layer, row["mapping.mapping"]), cfg)
    return [counts[k] for k in PROGRAM_FEATURES]


def combined_tensors(rows, program_cycles):
    """Features, log program cycles, log RTL cycles of RTL rows whose programs the cycle model timed."""
    cfg = GemminiConfig()
    feats, base, target = [], [], []
    for r, c in zip(rows, program_cycles):
        f, b = residual.combined_row_inputs(r, c, program_features(r, cfg))
        feats.append(f)
        base.append(b)
        target.append(math.log(float(r["target.gemmini_cycle"])))
    return torch.cat(feats), torch.cat(base), torch.tensor(target, dtype=torch.float64)


def cached_program_cycles(paths):
    """{(split, index): cycle-model cycles} from rtl_calibration.py --cache files."""
    return {(r["split"], int(r["index"])): float(r["cycle_model"]) for p in paths for r in read_rows(p)}


def write_weights(new: dict, held_out: dict | None = None):
    """Replace these entries of the weights file (and of its layer-held-out records), keeping the others."""
    weights = json.loads(residual.WEIGHTS.read_text()) if residual.WEIGHTS.exists() else {}
    weights.update(new)
    weights.setdefault("layer_held_out", {}).update(held_out or {})
    residual.WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    residual.WEIGHTS.write_text(json.dumps(weights))
    print(f"{', '.join([*new, *(f'{k} layer-held-out record' for k in held_out or {})])} -> {residual.WEIGHTS}")


def held_out_record(name: str, where: str, analytical: dict, learned: dict) -> dict:
    """The layer-held-out record of residual `name` (residual.validation): its scores and the analytical
    model's on layers it never saw, and whether it is used there (residual.beats_analytical)."""
    used = residual.beats_analytical(learned, analytical)
    print(f"  {name} residual on unseen layers: {'beats' if used else 'does not beat'} the analytical model: "
          f"{'shipped' if used else 'not shipped (the analytical model alone is used)'}")
    return {name: {"where": where, "analytical": {k: round(v, 4) for k, v in analytical.items()},
                   "learned": {k: round(v, 4) for k, v in learned.items()}, "used": used}}


def rtl_layer_held_out_record(rows, program_cycles=None) -> dict:
    """held_out_record of the "rtl" residual (program_cycles None) or of the "combined" one, from
    layer_held_out over these rows."""
    predictions, y = layer_held_out(rows, program_cycles)
    names = (("cycle model (DOSA's program)", "combined (program x residual)") if program_cycles is not None
             else ("Timeloop-matched", "Timeloop-matched x rtl residual"))
    where = (f"group {LAYER_FOLDS}-fold by layer over {len(rows)} rows of {RTL_FILE.name} "
             f"({len({rtl_layer_key(r) for r in rows})} layers), refitted per fold")
    print(f"layer-held-out ({where}):")
    for n in names:
        print(f"  {n:<32}", fmt(scores(predictions[n], y)))
    return held_out_record("combined" if program_cycles is not None else "rtl", where,
                           scores(predictions[names[0]], y), scores(predictions[names[1]], y))


def fit_combined(x, target, layer_keys, **fit_options):
    """The "combined" residual fitted to log(RTL / program cycles) of rows of these layers
    (fit_options: residual.fit_supported's, e.g. fewer epochs for a smoke run)."""
    return residual.fit_supported(x, target, layer_keys, **fit_options)


RTL_LAYER_FIELDS = ("R", "S", "P", "Q", "C", "K", "N", "Hstride", "Wstride")
LAYER_FOLDS = 5


def rtl_layer_key(row) -> tuple:
    """The layer of an RTL row (rows of one layer differ in mapping only)."""
    return tuple(int(row[f"prob.{f}"]) for f in RTL_LAYER_FIELDS)


def out_of_fold(x, target, folds, fit_fn):
    """Each row's prediction by the model fit_fn(training rows' mask) fitted on the other folds only."""
    pred = torch.zeros_like(target)
    for f in sorted(set(folds.tolist())):
        held = folds == f
        model = fit_fn(~held)
        with torch.no_grad():
            pred[held] = model(x[held])
    return pred


def layer_held_out(rows, program_cycles=None, *, k=LAYER_FOLDS, rtl_epochs=400,
                   combined_epochs=None) -> tuple[dict, torch.Tensor]:
    """({model: log cycles [rows]}, log measured cycles [rows]) of the RTL models on layers held out
    whole: group k-fold by layer (residual.layer_folds), each learned residual refitted by its own
    recipe on the other folds' layers and predicting the held-out fold's. program_cycles (the cycle
    model's cycles of each row's program) adds the cycle model alone and the combined model (fitted
    for combined_epochs, None: its recipe's own)."""
    keys = [rtl_layer_key(r) for r in rows]
    folds = torch.tensor(residual.layer_folds(keys, k))
    x, base, y = rtl_tensors(rows)
    out = {"Timeloop-matched": base,
           "Timeloop-matched x rtl residual": base + out_of_fold(
               x, y - base, folds, lambda fit: residual.fit(x[fit], (y - base)[fit], epochs=rtl_epochs,
                                                           weight_decay=1e-2))}
    if program_cycles is not None:
        xc, bc, _ = combined_tensors(rows, program_cycles)
        out["cycle model (DOSA's program)"] = bc
        options = {} if combined_epochs is None else dict(epochs=combined_epochs)
        out["combined (program x residual)"] = bc + out_of_fold(xc, y - bc, folds, lambda fit: fit_combined(
            xc[fit], (y - bc)[fit], [key for key, f in zip(keys, fit.tolist()) if f], **options))
    return out, y


def train_compiled(rows, epochs) -> dict:
    """The "compiled" residual's weights, fitted on four kernels in five (every fifth one is held out
    and scored)."""
    x, base, y = compiled_tensors(rows)
    held = torch.arange(len(rows)) % 5 == 4
    model = residual.fit(x[~held], (y - base)[~held], epochs=epochs, weight_decay=1e-2)
    with torch.no_grad():
        print(f"compiled kernels: {int((~held).sum())} training, {int(held.sum())} held-out (cycle model = truth)")
        print("  analytical program model  ", fmt(scores(base[held], y[held])))
        print("  + learned residual        ", fmt(scores(base[held] + model(x[held]), y[held])))
    return model.state()


def train_combined(args) -> int:
    train, held_rows = rtl_split(args.rtl)
    if args.smoke:      # time a few rows here with a small simulation budget
        from baco.sim.programs import rtl_row_cycles
        cfg = GemminiConfig()
        cycles = {}
        for split, rows in (("train", train[:8]), ("held_out", held_rows[:4])):
            for i, r in enumerate(rows):
                layer = {d: int(r[f"prob.{d}"]) for d in ("R", "S", "P", "Q", "C", "K", "N", "Wstride")}
                cycles[split, i] = rtl_row_cycles(layer, r["mapping.mapping"], cfg, command_budget=600)
    else:
        paths = args.cache or sorted((ROOT / "out").glob("rtl_cycle_model*.csv"))
        if not paths:
            print("no cycle-model cache: run benchmarks/rtl_calibration.py --cache out/rtl_cycle_model.csv")
            return 1
        cycles = cached_program_cycles(paths)
    sets = {}
    for split, rows in (("train", train), ("held_out", held_rows)):
        keep = [i for i in range(len(rows)) if (split, i) in cycles]
        sets[split] = combined_tensors([rows[i] for i in keep], [cycles[split, i] for i in keep])
    x, base, y = sets["train"]
    keep = [i for i in range(len(train)) if ("train", i) in cycles]
    model = fit_combined(x, y - base, [rtl_layer_key(train[i]) for i in keep])
    print(f"RTL rows timed by the cycle model: {len(y)} of {len(train)} training, "
          f"{len(sets['held_out'][2])} of {len(held_rows)} held-out")
    xh, bh, yh = sets["held_out"]
    with torch.no_grad():
        print("  cycle model (DOSA's program)", fmt(scores(bh, yh)))
        print("  + combined residual         ", fmt(scores(bh + model(xh), yh)))
    if args.smoke:
        return 0
    keys = [(split, i) for split, rows in (("held_out", held_rows), ("train", train)) for i in range(len(rows))]
    every = [(held_rows if split == "held_out" else train)[i] for split, i in keys if (split, i) in cycles]
    record = rtl_layer_held_out_record(every, [cycles[k] for k in keys if k in cycles])
    if args.write:
        write_weights({"combined": model.state() if record["combined"]["used"] else None}, record)
    return 0


def scores(pred_log, target_log):
    p, t = np.exp(pred_log.numpy()), np.exp(target_log.numpy())
    rel = np.abs(p - t) / t
    return dict(log_r=float(np.corrcoef(np.log(p), np.log(t))[0, 1]), raw_r=float(np.corrcoef(p, t)[0, 1]),
                median_rel=float(np.median(rel)), mape=float(np.mean(rel)))


def fmt(s):
    return (f"log r {s['log_r']:.3f}  raw r {s['raw_r']:.3f}  median rel. err {100 * s['median_rel']:.1f}%  "
            f"MAPE {100 * s['mape']:.1f}%")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", nargs="?", choices=["collect", "train", "combined", "unseen"], default="train")
    p.add_argument("--samples", type=int, default=700, help="compiled kernels to time (collect)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-commands", type=int, default=6000, help="longest program to draw (collect)")
    p.add_argument("--data", type=Path, nargs="+", default=[OUT / "compiled.csv"],
                   help="compiled-kernel rows: the file collect writes, or the files train reads")
    p.add_argument("--rtl", type=Path, default=RTL_FILE, help="RTL file (its 70%% training split is used)")
    p.add_argument("--epochs", type=int, nargs=2, default=(1500, 400), metavar=("COMPILED", "RTL"),
                   help="training epochs of the two residuals")
    p.add_argument("--cache", type=Path, nargs="+", help="combined: rtl_calibration.py --cache files "
                   "(default out/rtl_cycle_model*.csv)")
    p.add_argument("--write", action="store_true", help=f"write the weights to {residual.WEIGHTS}")
    p.add_argument("--only", choices=["compiled", "rtl"],
                   help="train: fit (and --write) only this residual; the file's other entries are kept")
    p.add_argument("--smoke", action="store_true", help="collect 6 small kernels and train briefly (no --write)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)        # tiny tensors: threads only add contention
    if args.command == "combined":
        return train_combined(args)
    if args.smoke:
        rows = collect(6, args.seed, OUT / "smoke.csv", max_commands=300)
        x, base, y = compiled_tensors(rows)
        model = residual.fit(x, y - base, epochs=50, weight_decay=1e-4)
        with torch.no_grad():
            print("smoke fit on 6 kernels:", fmt(scores(base + model(x), y)))
        return 0
    if args.command == "collect":
        collect(args.samples, args.seed, args.data[0], args.max_commands)
        return 0
    if args.command == "unseen":
        return unseen_compiled(args.samples, args.seed, OUT / f"unseen.{args.seed}.csv", min(args.max_commands, 3000),
                               write=args.write)
    weights = {}
    if args.only != "rtl":
        weights["compiled"] = train_compiled([r for path in args.data for r in read_rows(path)], args.epochs[0])
    rtl = args.rtl
    if args.only != "compiled" and not rtl.exists():
        print(f"{rtl} not found: rtl residual not trained")
    elif args.only != "compiled":
        train, held_rows = rtl_split(rtl)
        x, base, y = rtl_tensors(train)
        # few distinct layers (60): strong weight decay, few epochs, or it learns the training rows
        model = residual.fit(x, y - base, epochs=args.epochs[1], weight_decay=1e-2)
        xh, bh, yh = rtl_tensors(held_rows)
        with torch.no_grad():
            print(f"RTL rows: {len(train)} training, {len(held_rows)} held-out ({rtl.name} 70/30 split)")
            print("  Timeloop-matched model    ", fmt(scores(bh, yh)))
            print("  + learned residual        ", fmt(scores(bh + model(xh), yh)))
        record = rtl_layer_held_out_record(read_rows(rtl))
        weights["rtl"] = model.state() if record["rtl"]["used"] else None
    if args.write:
        write_weights(weights, record if args.only != "compiled" and rtl.exists() else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
