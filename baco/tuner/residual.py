"""Learned residuals on top of the analytical cost models (torch, differentiable).

A residual is a small MLP on log-scale features of the layer, the mapping and
the hardware that predicts log(measured cycles / analytical cycles):
- "compiled": measured = the cycle model (baco/sim/timing.py) timing the
  GEMM kernel compiled with the mapping's block sizes; analytical =
  costmodel.compiled_program_cycles;
- "rtl": measured = Gemmini RTL (FireSim) cycles of DOSA's programs;
  analytical = the Timeloop-matched costmodel.cost_from_factors;
- "combined": measured = the same RTL cycles; base = the cycle model timing
  the program DOSA ran for the row (baco.sim.programs.rtl_row_cycles, passed
  in with that program's counts, baco.sim.programs.dosa_program_features: the
  tuner does not import the simulator). A SupportedResidual on RATIO_FEATURES
  (what the program does per unit of work, no layer sizes): MLPs inside the
  training support, a BoundedLinear outside it, as an MLP on the layer's sizes
  learned the training layers (on layers held out whole it lowered raw r from
  0.921 to 0.758).
Weights live in baco/data/cost_residual.json, written by
benchmarks/train_cost_residual.py (see baco/data/README.md).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import torch

from baco.problem.dims import DIMS, NUM_LEVELS
from baco.problem.layer import Layer
from baco.tuner import costmodel
from baco.tuner.arch import DEFAULT_HARDWARE
from baco.tuner.mapping import KERNEL_OUT_INT8, parse_mapping

WEIGHTS = Path(__file__).resolve().parents[1] / "data" / "cost_residual.json"
# Where the "compiled" residual is used: inside its training domain (benchmarks/train_cost_residual.py
# random_case: arrays of DIM 4..64, M, N, K up to 512) and on arrays up to DIM 32. Outside the sizes it
# extrapolates badly (10 random kernels each, timed by the cycle model, median relative error of the
# analytical model alone vs with the residual of 5e85fef: DIM 128 up to 1024x1024x2048, 19.5% vs 37.8%;
# DIM 64 up to 2048, 9.1% vs 18.1%; DIM 16 up to 2048, 18.6% vs 18.1%). On DIM 64 the residual of
# 2026-11-24 (held-out random kernels of at most 6000 commands: median 9.5% vs 14.4% alone) under-predicts
# the few large programs of make demo's layers (64x{512,256,64}x{256,512}, blocks 64x512x64, 64x256x32+db,
# 64x64x256: sim/pred 1.10, 1.24, 1.22, analytical alone 0.88, 0.99, 1.08), so DIM 64 uses the analytical
# model alone.
COMPILED_MAX_DIM = 32
COMPILED_MAX_SIZE = 512
# A GEMM with K = 1 runs a different program (no K loop: costmodel.compiled_program_terms) and the
# training kernels hold 3 of them in 701: the residual under-predicts them (34x4x1 on DIM 4: 0.6x).
COMPILED_MIN_K = 2
HIDDEN = 32


def _log(x):
    return torch.log(torch.clamp(torch.as_tensor(x, dtype=torch.float64), min=1e-9))


class Residual(torch.nn.Module):
    """Standardised inputs -> two tanh layers -> one output (log-ratio)."""

    def __init__(self, n_in: int, mean=None, std=None, hidden: int = HIDDEN):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, 1)).double()
        self.register_buffer("mean", torch.zeros(n_in, dtype=torch.float64) if mean is None else mean)
        self.register_buffer("std", torch.ones(n_in, dtype=torch.float64) if std is None else std)

    def forward(self, x):
        return self.net((x - self.mean) / self.std).squeeze(-1)

    def state(self) -> dict:
        """The weights as lists of floats rounded to 7 significant digits (a small JSON file)."""
        return {k: [float(f"{x:.7g}") for x in v.flatten().tolist()] if v.dim() <= 1 else
                [[float(f"{x:.7g}") for x in row] for row in v.tolist()] for k, v in self.state_dict().items()}

    @classmethod
    def from_state(cls, state: dict) -> "Residual":
        mean = torch.tensor(state["mean"], dtype=torch.float64)
        m = cls(len(mean), hidden=len(state["net.0.bias"]))
        m.load_state_dict({k: torch.tensor(v, dtype=torch.float64) for k, v in state.items()})
        m.requires_grad_(False)
        return m


def fit(x, y, *, epochs: int, weight_decay: float, hidden: int = HIDDEN, seed: int = 0, lr: float = 3e-3,
        loss: str = "huber", log_weight: float = 0.1, validation=None, check_every: int = 10) -> Residual:
    """Full-batch Adam on the log-ratio error d. loss "huber": pseudo-Huber (about |d| beyond 10%, so a
    few rows the features cannot explain do not dominate the fit); "relative": |exp(d) - 1|, the
    relative error of the cycles (what MAPE scores; it penalises over-prediction more); "mixed":
    |exp(d) - 1| + log_weight * d^2, the relative error plus the log error that Pearson r on log
    cycles scores. validation = (x, y): early stopping, the weights with the lowest validation loss
    (checked every `check_every` epochs) are returned."""
    torch.manual_seed(seed)
    std = x.std(0)
    model = Residual(x.shape[1], x.mean(0), torch.where(std > 1e-9, std, torch.ones_like(std)), hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

    def objective(x, y):
        d = model(x) - y
        if loss == "relative":
            return torch.mean(torch.abs(torch.expm1(d)))
        if loss == "mixed":
            return torch.mean(torch.abs(torch.expm1(d)) + log_weight * d ** 2)
        return torch.mean(torch.sqrt(d ** 2 + 0.01))

    best = (float("inf"), None)
    for epoch in range(epochs):
        opt.zero_grad()
        objective(x, y).backward()
        opt.step()
        if validation is not None and epoch % check_every == check_every - 1:
            with torch.no_grad():
                score = float(objective(*validation))
            if score < best[0]:
                best = (score, {k: v.clone() for k, v in model.state_dict().items()})
    if best[1] is not None:
        model.load_state_dict(best[1])
    model.requires_grad_(False)
    return model


class Ensemble(torch.nn.Module):
    """Residuals fitted with different seeds; predicts their mean log-ratio."""

    def __init__(self, members):
        super().__init__()
        self.members = torch.nn.ModuleList(members)

    def forward(self, x):
        return torch.stack([m(x) for m in self.members]).mean(0)

    def state(self) -> list:
        return [m.state() for m in self.members]


class BoundedLinear(torch.nn.Module):
    """A linear log-ratio with bounds: features clamped to the range they were fitted on (no
    extrapolation outside the training support) and the output to the training targets' 2-98%
    quantiles (no correction larger than the training rows needed)."""

    def __init__(self, mean, std, lo, hi, coef, bias, out_lo, out_hi):
        super().__init__()
        for name, v in dict(mean=mean, std=std, lo=lo, hi=hi, coef=coef, bias=bias, out_lo=out_lo,
                            out_hi=out_hi).items():
            self.register_buffer(name, torch.as_tensor(v, dtype=torch.float64))

    def forward(self, x):
        z = (torch.minimum(torch.maximum(x, self.lo), self.hi) - self.mean) / self.std
        return torch.clamp(z @ self.coef + self.bias, float(self.out_lo), float(self.out_hi))

    def state(self) -> dict:
        """Full precision (rounding `lo`/`hi` would move training rows at the edge out of the support)."""
        return {"kind": "bounded_linear", **{k: v.flatten().tolist() if v.dim() else float(v)
                                             for k, v in self.state_dict().items()}}

    @classmethod
    def from_state(cls, state: dict) -> "BoundedLinear":
        return cls(**{k: v for k, v in state.items() if k != "kind"})


def _ridge(x, y, w, lam: float, out_lo: float, out_hi: float, bias_shift: float = 0.0) -> BoundedLinear:
    """Weighted ridge regression of y on standardised x (the intercept not shrunk)."""
    mean, std = x.mean(0), x.std(0)
    std = torch.where(std > 1e-9, std, torch.ones_like(std))
    z = torch.cat([torch.ones(len(x), 1, dtype=torch.float64), (x - mean) / std], 1)
    penalty = torch.diag(torch.tensor([0.0] + [lam] * x.shape[1], dtype=torch.float64))
    b = torch.linalg.solve(z.T @ (w[:, None] * z) + penalty, z.T @ (w * y))
    return BoundedLinear(mean, std, x.min(0).values, x.max(0).values, b[1:], b[0] + bias_shift, out_lo, out_hi)


def _weighted_median(v, w):
    order = torch.argsort(v)
    cum = torch.cumsum(w[order], 0)
    return v[order][int(torch.searchsorted(cum, cum[-1] / 2))]


RIDGE_PENALTIES = (1.0, 10.0, 100.0)


def fit_bounded_linear(x, y, groups, *, penalties=RIDGE_PENALTIES, inner_folds: int = 4) -> BoundedLinear:
    """A BoundedLinear log-ratio fitted to log-ratio targets y [N] on features x [N, F] of rows of
    the layers `groups` [N keys], each layer weighted alike (ridge, least squares on the log scale:
    log r). The ridge penalty and the intercept are chosen on layers held out whole (group
    `inner_folds`-fold over the groups): the penalty with the lowest mixed error (relative + 0.1 x
    squared log error, as fit's "mixed" loss) of those held-out predictions, and the intercept shifted
    so that their relative error (what MAPE scores) is least: the weighted median of the ratios."""
    keys = list(groups)
    folds = torch.tensor(layer_folds(keys, inner_folds))
    counts = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    w = torch.tensor([1.0 / counts[key] for key in keys], dtype=torch.float64)
    lo, hi = (float(q) for q in torch.quantile(y, torch.tensor([0.02, 0.98], dtype=torch.float64)))
    best = None
    for lam in penalties:
        held = torch.zeros_like(y)
        for f in range(inner_folds):
            out = folds == f
            with torch.no_grad():
                held[out] = _ridge(x[~out], y[~out], w[~out], lam, lo, hi)(x[out])
        shift = _weighted_median(y - held, torch.exp(held - y))
        d = held + shift - y
        loss = float(torch.mean(torch.abs(torch.expm1(d)) + 0.1 * d ** 2))
        if best is None or loss < best[0]:
            best = (loss, lam, float(shift))
    model = _ridge(x, y, w, best[1], lo, hi, bias_shift=best[2])
    model.requires_grad_(False)
    return model


class SupportedResidual(torch.nn.Module):
    """An MLP ensemble inside the training support, a BoundedLinear outside it: a row with any feature
    beyond the range the models were fitted on gets the linear model's clamped correction (the MLPs
    extrapolate badly there: the largest unseen layers), others the MLPs' mean, clamped to the same
    output bounds."""

    def __init__(self, members: "Ensemble", fallback: BoundedLinear):
        super().__init__()
        self.members, self.fallback = members, fallback

    def forward(self, x):
        inside = ((x >= self.fallback.lo) & (x <= self.fallback.hi)).all(-1)
        learned = torch.clamp(self.members(x), float(self.fallback.out_lo), float(self.fallback.out_hi))
        return torch.where(inside, learned, self.fallback(x))

    def state(self) -> dict:
        return {"kind": "supported", "members": self.members.state(), "fallback": self.fallback.state()}

    @classmethod
    def from_state(cls, state: dict) -> "SupportedResidual":
        return cls(Ensemble([Residual.from_state(m) for m in state["members"]]),
                   BoundedLinear.from_state(state["fallback"]))


def fit_supported(x, y, groups, *, seeds: int = 2, epochs: int = 1500, hidden: int = 16,
                  weight_decay: float = 1e-2) -> SupportedResidual:
    """SupportedResidual: `seeds` MLPs fitted to the mixed loss (fit's "mixed": relative + 0.1 x
    squared log error) on all rows, the fallback fit_bounded_linear on the same rows of layers `groups`."""
    members = Ensemble([fit(x, y, epochs=epochs, weight_decay=weight_decay, hidden=hidden, seed=seed, loss="mixed")
                        for seed in range(seeds)])
    return SupportedResidual(members, fit_bounded_linear(x, y, groups))


def layer_folds(keys, k: int = 5, seed: int = 0) -> list[int]:
    """Group k-fold by layer: the fold (0..k-1) of each row, every row of a layer (equal keys) in the
    same fold, so a model fitted on the other folds is scored on layers it never saw. The distinct
    layers are shuffled with `seed` and dealt to the fold holding the fewest rows so far (folds of
    similar size although layers have different numbers of rows)."""
    keys = list(keys)
    counts = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    layers = sorted(counts, key=repr)
    order = torch.randperm(len(layers), generator=torch.Generator().manual_seed(seed))
    layers = [layers[i] for i in order.tolist()]
    if len(layers) < k:
        raise ValueError(f"{len(layers)} layers cannot fill {k} folds")
    size, fold_of = [0] * k, {}
    for key in layers:
        fold_of[key] = min(range(k), key=lambda f: (size[f], f))
        size[fold_of[key]] += counts[key]
    return [fold_of[key] for key in keys]


def beats_analytical(learned: dict, analytical: dict) -> bool:
    """Whether a learned model's scores on layers it never saw beat the analytical model's on the same
    rows on every figure the goals name: a lower mean absolute percentage error and higher Pearson r
    of raw and of log cycles."""
    return (learned["mape"] < analytical["mape"] and learned["log_r"] > analytical["log_r"]
            and learned["raw_r"] > analytical["raw_r"])


@lru_cache(maxsize=None)
def _shipped() -> dict:
    return json.loads(WEIGHTS.read_text()) if WEIGHTS.exists() else {}


def validation(name: str) -> dict | None:
    """The layer-held-out record of residual `name` in the weights file: where it was scored, the
    analytical model's and the learned model's scores there ("analytical", "learned": log_r, raw_r,
    median_rel, mape) and whether it is used (only if it beats the analytical model there)."""
    return _shipped().get("layer_held_out", {}).get(name)


@lru_cache(maxsize=None)
def load(name: str) -> Residual | Ensemble | None:
    """The shipped residual `name` ("compiled", "rtl" or "combined": a list of states is an
    Ensemble, a state of kind "bounded_linear" a BoundedLinear, of kind "supported" a
    SupportedResidual), or None when none is shipped: the training script ships a residual only where it beats
    the analytical model on layers it never saw (validation)."""
    state = _shipped().get(name)
    if isinstance(state, dict) and state.get("kind") == "bounded_linear":
        return BoundedLinear.from_state(state)
    if isinstance(state, dict) and state.get("kind") == "supported":
        return SupportedResidual.from_state(state)
    if isinstance(state, list):
        return Ensemble([Residual.from_state(s) for s in state])
    return Residual.from_state(state) if state else None


# ---- the analytical models times their residuals ----------------------------------------------

def compiled_cycles(layer: Layer, temporal, spatial, hw, *, out_int8: bool = KERNEL_OUT_INT8,
                    double_buffer: bool = False, dataflow: str = "WS"):
    """Cycles [B] the cycle model measures for the GEMM kernel compiled with the block sizes of
    the mapping's scratchpad tile (BLOCK_M = P·Q·N, BLOCK_N = K, BLOCK_K = C of the L2 tile)
    and this schedule: the analytical program model times the learned residual shipped in
    baco/data/cost_json inside the residual's training domain (array DIM and layer sizes,
    COMPILED_MAX_DIM/SIZE/MIN_K), the analytical model alone outside it or when none is shipped.
    Differentiable in the factors and in the hardware (pe_dim, sp_kb, acc_kb)."""
    return compiled_cycles_by_dataflow(layer, temporal, spatial, hw, out_int8=out_int8,
                                       double_buffer=double_buffer, dataflows=(dataflow,))[dataflow]


def compiled_cycles_by_dataflow(layer: Layer, temporal, spatial, hw, *, out_int8: bool = KERNEL_OUT_INT8,
                                double_buffer: bool = False, dataflows=("WS", "OS")) -> dict:
    """{dataflow: compiled_cycles [B]}: the analytical terms of each dataflow's program times the
    residual inside its domain (outside it, or when none is shipped, the analytical model alone).
    `layer` may be an explore.LayerStack: the domain is then decided per row."""
    model = load("compiled")
    largest = torch.maximum(torch.maximum(torch.as_tensor(layer.P * layer.Q * layer.N), torch.as_tensor(layer.K)),
                            torch.as_tensor(layer.C))
    domain = (largest <= COMPILED_MAX_SIZE) & (torch.as_tensor(layer.C) >= COMPILED_MIN_K)
    out = {}
    for df in dataflows:
        feats, log_base = compiled_inputs(layer, temporal, spatial, hw, out_int8=out_int8,
                                                   double_buffer=double_buffer, dataflow=df)
        rows = domain.expand(log_base.shape).nonzero().squeeze(1)
        if model is None or rows.numel() == 0:
            out[df] = torch.exp(log_base)
            continue
        inside = torch.as_tensor(hw[0], dtype=torch.float64).detach().expand(log_base.shape)[rows] \
            <= COMPILED_MAX_DIM
        correction = torch.where(inside, model(feats[rows]), 0.0)
        out[df] = torch.exp(log_base.index_add(0, rows, correction))
    return out


def rtl_cycles(layer: Layer, temporal, sC, sK, order, hw):
    """Cycles [B] on Gemmini RTL as DOSA measured them (FireSim): the Timeloop-matched cycles
    times the learned residual "rtl" (the Timeloop-matched cycles alone when none is shipped)."""
    feats, log_base = rtl_inputs(layer, temporal, sC, sK, order, hw)
    model = load("rtl")
    return torch.exp(log_base + (model(feats) if model is not None else 0.0))


# ---- features -------------------------------------------------------------------------------

def compiled_inputs(layer: Layer, temporal, spatial, hw, *, out_int8: bool, double_buffer: bool, dataflow: str):
    """(features [B, F], log analytical cycles [B]) of the compiled GEMM kernel run with the
    block sizes of the mapping's scratchpad tile and this schedule."""
    flags = dict(out_int8=out_int8, double_buffer=double_buffer, dataflow=dataflow)
    terms = costmodel.compiled_program_terms(layer, temporal, spatial, hw, **flags)
    blocks = terms["blocks"]
    ones = torch.ones_like(blocks[0])
    pe, sp_kb, acc_kb = (torch.as_tensor(v, dtype=torch.float64) * ones for v in hw)
    dims = [ones * torch.as_tensor(v, dtype=torch.float64) for v in (layer.P * layer.Q * layer.N, layer.K, layer.C)]
    parts = [terms[k] for k in ("programs", "k_steps", "load", "compute", "store", "step")]
    switches = [ones * float(v) for v in (out_int8, double_buffer, dataflow == "OS")]   # dataflow last
    feats = torch.stack([_log(v) for v in (*dims, *blocks, pe, sp_kb, acc_kb, *parts)]
                        + [_log(b / pe) for b in blocks] + switches, dim=1)
    return feats, _log(terms["cycles"])


def rtl_inputs(layer: Layer, temporal, sC, sK, order, hw):
    """(features [B, F], log Timeloop-model cycles [B]) of B mappings of one layer."""
    out = costmodel.cost_from_factors(layer, temporal, sC, sK, order, hw)
    acc = out["accesses"]
    pe = torch.as_tensor(hw[0], dtype=torch.float64)
    B = temporal.shape[0]
    ones = torch.ones(B, dtype=torch.float64)
    tiles = costmodel._tiles(temporal, sC, sK)
    cols = [ones * float(getattr(layer, d)) for d in DIMS] + [ones * float(layer.Hstride)]
    for level in range(NUM_LEVELS - 1):
        cols += [tiles[level][:, i] for i in range(len(DIMS))]
    cols += [sC.to(torch.float64) * ones, sK.to(torch.float64) * ones]
    for level in range(1, NUM_LEVELS):
        cols.append(torch.prod(temporal[:, level, :], dim=1))     # iterations of each level's loops
    cols += [ones * float(layer.macs) / (sC * sK), acc["dram"] / 8, acc["scratchpad"] / (2 * pe),
             acc["accumulator"] / (2 * sK), out["cycles"]]
    feats = torch.stack([_log(c) for c in cols], dim=1)
    return feats, _log(out["cycles"])


def rtl_row_inputs(row: dict):
    """rtl_inputs of one row of the RTL file (DOSA's default Gemmini: 16x16, 256 KB, 64 KB)."""
    layer = Layer(**{d: int(row[f"prob.{d}"]) for d in DIMS}, Hstride=int(row["prob.Hstride"]),
                  Wstride=int(row["prob.Wstride"]))
    m = parse_mapping(row["mapping.mapping"])
    temporal, sC, sK = costmodel.mapping_tensors(m)
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64)
               for v in (DEFAULT_HARDWARE.pe_dim, DEFAULT_HARDWARE.sp_kb, DEFAULT_HARDWARE.acc_kb))
    return rtl_inputs(layer, temporal, sC, sK, m.order, hw)


def rtl_row_cycles(row: dict) -> float:
    """The combined model's cycles for one row of the RTL file: Timeloop-matched cycles times
    the shipped "rtl" residual (rtl_cycles)."""
    feats, log_base = rtl_row_inputs(row)
    model = load("rtl")
    with torch.no_grad():
        return float(torch.exp(log_base + (model(feats) if model is not None else 0.0))[0])


RATIO_FEATURES = ("log program cycles", "log ideal compute cycles", "program / ideal compute", "log tiles",
                  "commands per tile", "DRAM rows per ideal cycle", "bytes per input DMA row",
                  "array rows per ideal cycle", "log scratchpad overflow", "log accumulator overflow",
                  "log(1 + wrapped tiles)", "matmul", "log spatial C", "log spatial K")


def combined_row_inputs(row: dict, program_cycles: float, program_features):
    """(features [1, RATIO_FEATURES], log program cycles [1]) of one RTL row whose program the cycle
    model timed at program_cycles (program_features: values of baco.sim.programs.dosa_program_features,
    in PROGRAM_FEATURES order). The features describe how the program runs (utilisation, traffic and
    commands per unit of compute, tile counts, memory overflow, the array's spatial use), never which
    layer it is: the only sizes are the program's own cycles and its ideal compute cycles
    (MACs / spatial C·K)."""
    layer = Layer(**{d: int(row[f"prob.{d}"]) for d in DIMS}, Hstride=int(row["prob.Hstride"]),
                  Wstride=int(row["prob.Wstride"]))
    m = parse_mapping(row["mapping.mapping"])
    (matmul, tiles, commands, input_rows, input_row_bytes, weight_rows, array_rows, output_rows, sp_overflow,
     acc_overflow, wrapped) = (float(v) for v in program_features)
    base = _log([program_cycles])
    ideal = _log([layer.macs / (m.spatial_C * m.spatial_K)])
    cols = [base, ideal, base - ideal, _log([1 + tiles]), _log([1 + commands]) - _log([1 + tiles]),
            _log([1 + input_rows + weight_rows + output_rows]) - ideal, _log([input_row_bytes]),
            _log([1 + array_rows]) - ideal, _log([sp_overflow]), _log([acc_overflow]), _log([1 + wrapped]),
            torch.tensor([matmul], dtype=torch.float64), _log([m.spatial_C]), _log([m.spatial_K])]
    return torch.stack(cols, dim=1), base


def combined_row_cycles(row: dict, program_cycles: float, program_features) -> float:
    """The combined model's cycles for one row of the RTL file: the cycle model's cycles of DOSA's
    program times the shipped "combined" residual (the program's cycles alone when none is shipped)."""
    feats, log_base = combined_row_inputs(row, program_cycles, program_features)
    model = load("combined")
    with torch.no_grad():
        return float(torch.exp(log_base + (model(feats) if model is not None else 0.0))[0])


def block_factors(layer: Layer, blocks: dict, dim: int):
    """Factors [1, 4, 7] and spatial C/K of a GEMM layer run with these block sizes (ragged
    blocks allowed: the DRAM-level factor is then fractional): the scratchpad tile is the
    block, DIM x DIM sub-tiles on the array."""
    bm, bn, bk = blocks["BLOCK_M"], blocks["BLOCK_N"], blocks["BLOCK_K"]
    sc, sk = min(bk, dim), min(bn, dim)
    temporal = torch.ones(1, NUM_LEVELS, len(DIMS), dtype=torch.float64)
    ix = {d: i for i, d in enumerate(DIMS)}
    temporal[0, 0, ix["P"]] = bm
    temporal[0, 1, ix["C"]] = bk / sc
    temporal[0, 2, ix["K"]] = bn / sk
    temporal[0, 3, ix["P"]] = layer.P / bm
    temporal[0, 3, ix["K"]] = layer.K / bn
    temporal[0, 3, ix["C"]] = layer.C / bk
    return temporal, torch.tensor([float(sc)], dtype=torch.float64), torch.tensor([float(sk)], dtype=torch.float64)


__all__ = ["Residual", "Ensemble", "fit", "BoundedLinear", "fit_bounded_linear", "SupportedResidual", "fit_supported", "RATIO_FEATURES", "layer_folds", "beats_analytical", "validation", "load", "compiled_inputs", "rtl_inputs",
           "rtl_row_inputs", "rtl_row_cycles",
           "combined_row_inputs", "combined_row_cycles", "block_factors", "WEIGHTS"]
