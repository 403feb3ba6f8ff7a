"""Differentiable relaxation of a tiling (mapping) over a layer's tile sizes.

Every tiling factor is a continuous parameter in log space.  The forward pass
turns it into an integer by a Gumbel-softmax over the candidate factors that
are still legal for that dimension (the candidates' logits are the negative
squared log-distance to the continuous factor), with a straight-through
estimator: the forward value is the hard (arg-max) candidate, so every sampled
mapping is a legal integer mapping, while the gradient is that of the soft
expectation.

Tiles are ceil-divided (imperfect factorisation, as Gemmini runs ragged edge
tiles): a dimension of n split into tiles of t runs ⌈n/t⌉ of them, the last one
short.  Per dimension the factors are drawn in a fixed sequence (the loops from the
innermost outward: L0, spatial C, L1, spatial K, L2) from the candidates
(tile_candidates: the divisors of n and of n rounded up to 16) not above the
number of tiles left, and the outermost level (DRAM) takes ⌈n / inner tile⌉, so
the factors always cover the dimension and no loop runs a tile past its end
(covering_problems states the rule).  Everything is batched over a leading
"start" axis so many starts run as one tensor program.

The module knows nothing of the cost model: it produces factor tensors, and
the penalties that keep the continuous parameters in the legal region.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from baco.problem.dims import DIM_INDEX, DIMS, DRAM_LEVEL, NUM_LEVELS, RELEVANT

C_INDEX, K_INDEX = DIM_INDEX["C"], DIM_INDEX["K"]

# The registers hold one weight per PE: only loops over dims that do not index
# the weight (P, Q, N) may sit at L0, as in Gemmini's weight-stationary array.
WEIGHT_DIMS = RELEVANT["W"]


@lru_cache(maxsize=None)
def divisors(n: int) -> tuple[int, ...]:
    """All positive divisors of n in increasing order."""
    if n < 1:
        raise ValueError(f"divisors() needs a positive integer, got {n}")
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i != n // i:
                large.append(n // i)
        i += 1
    return tuple(small + large[::-1])


# Dimensions Gemmini runs in ceil-divided tiles (loops over output pixels, images and channels,
# the last tile short); the filter's R and S loops are split exactly.
RAGGED_DIMS = frozenset("PQNCK")
RAGGED_MULTIPLE = 16


@lru_cache(maxsize=None)
def tile_candidates(n: int, ragged: bool = True) -> tuple[int, ...]:
    """The factors a dimension of n is split by: its divisors (exact tiles) and, if it may be
    ragged, those of n rounded up to a multiple of RAGGED_MULTIPLE (tiles of whole array blocks
    with one short edge tile), in increasing order. A factor above the tiles left of the dimension
    is never drawn."""
    if not ragged:
        return divisors(n)
    return tuple(sorted(set(divisors(n)) | set(divisors(-(-n // RAGGED_MULTIPLE) * RAGGED_MULTIPLE))))


def slot_factors(temporal, spatial_c: int, spatial_k: int, j: int) -> list[tuple[str, int]]:
    """The loops over dimension j from the innermost outward, as (slot name, factor): the registers
    (L0), spatial C on the array rows (below the accumulator level), L1, spatial K on the columns
    (below the scratchpad level), L2, DRAM (L3). temporal[level][j] are integers."""
    out = [("L0", temporal[0][j])]
    if j == C_INDEX:
        out.append(("spatial C", spatial_c))
    out.append(("L1", temporal[1][j]))
    if j == K_INDEX:
        out.append(("spatial K", spatial_k))
    return out + [("L2", temporal[2][j]), ("L3", temporal[3][j])]


def covering_problems(temporal, spatial_c: int, spatial_k: int, dims: dict[str, int]) -> list[str]:
    """Why integer factors are not a tiling of the layer (empty: they are): per dimension the loops,
    innermost first, must each run at most the ⌈n/tile⌉ tiles left of it (no loop past the end of
    the dimension), and together cover it (the DRAM loop runs exactly ⌈n / its tile⌉); the factors
    of R and S (not RAGGED_DIMS) multiply to exactly the dimension."""
    problems = []
    for j, d in enumerate(DIMS):
        n, tile = int(dims[d]), 1
        for slot, f in slot_factors(temporal, spatial_c, spatial_k, j):
            left = -(-n // tile)
            if f < 1:
                problems.append(f"{d} has a factor < 1 at {slot}")
            elif f > left:
                problems.append(f"{d} loop at {slot} runs {f} tiles of {tile} where {n} needs {left}")
            tile *= max(f, 1)
        if tile < n:
            problems.append(f"{d} factors cover {tile}, not {n}")
        elif tile != n and d not in RAGGED_DIMS:
            problems.append(f"{d} factors multiply to {tile}, not {n} (filter loops are not ragged)")
    return problems


def covering_dram_factor(temporal, spatial_c: int, spatial_k: int, j: int, n: int) -> int | None:
    """The DRAM factor that makes dimension j (of n) covered after a change of its inner factors,
    ⌈n / inner tile⌉, or None if the inner loops break covering_problems' rule for it."""
    tile = 1
    for slot, f in slot_factors(temporal, spatial_c, spatial_k, j)[:-1]:
        if f < 1 or f > -(-n // tile):
            return None
        tile *= f
    dram = -(-n // tile)
    return None if DIMS[j] not in RAGGED_DIMS and tile * dram != n else dram


def nearest_divisor(n: int, x: float, limit: int | None = None) -> int:
    """The divisor of n closest to x in log distance (ties go to the smaller), capped at limit."""
    cands = [d for d in divisors(n) if limit is None or d <= limit]
    lx = math.log(max(x, 1e-9))
    return min(cands, key=lambda d: (abs(math.log(d) - lx), d))


# Canonical loop orders of one level (outermost first).  What matters for reuse is which tensor the
# innermost loops leave untouched: inner P,Q,N keep the weight, inner R,S,C keep the output (partial
# sums), inner K keeps the input.
LEVEL_ORDERS = {
    "weight": ("C", "K", "R", "S", "N", "P", "Q"),
    "output": ("N", "K", "P", "Q", "C", "R", "S"),
    "input": ("N", "P", "Q", "C", "R", "S", "K"),
}
# One choice per level above the registers (L1, L2, L3); the registers only loop over P, Q, N.
ORDER_CHOICES: tuple[tuple[str, str, str], ...] = tuple(itertools.product(LEVEL_ORDERS, repeat=3))


def level_orders(choice: int) -> list[tuple[str, ...]]:
    """The per-level loop orders [L0, L1, L2, L3] of one ORDER_CHOICES entry."""
    return [LEVEL_ORDERS["weight"]] + [LEVEL_ORDERS[name] for name in ORDER_CHOICES[choice]]


def default_allowed(dims: dict[str, int]) -> torch.Tensor:
    """Which (level, dim) temporal factors may exceed 1: bool[NUM_LEVELS, 7]."""
    allowed = torch.ones(NUM_LEVELS, len(DIMS), dtype=torch.bool)
    for d in WEIGHT_DIMS:
        allowed[0, DIM_INDEX[d]] = False
    for j, d in enumerate(DIMS):
        if dims[d] == 1:
            allowed[:, j] = False
    return allowed


class TemperatureSchedule:
    """Exponential annealing of the Gumbel-softmax temperature from start to end over steps."""

    def __init__(self, start: float = 1.0, end: float = 0.05, steps: int = 1000):
        if not (start > 0 and end > 0 and steps >= 1):
            raise ValueError("temperatures must be positive and steps >= 1")
        self.start, self.end, self.steps = start, end, steps

    def __call__(self, step: int) -> float:
        t = min(max(step, 0), self.steps) / self.steps
        return self.start * (self.end / self.start) ** t


def gumbel_noise(shape, generator: torch.Generator | None, dtype=torch.float64) -> torch.Tensor:
    u = torch.rand(shape, generator=generator, dtype=dtype).clamp_(1e-12, 1.0 - 1e-12)
    return -torch.log(-torch.log(u))


def straight_through_choice(x_log: torch.Tensor, cand_log: torch.Tensor, mask: torch.Tensor,
                            tau: float, noise: torch.Tensor | None,
                            soft_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Pick one candidate per row with a Gumbel-softmax; return (value, index).

    x_log [...] continuous log-factor; cand_log [..., D] candidate log values; mask [..., D] the legal
    candidates for the hard choice.  The value equals cand_log[index] in the forward pass and carries the
    gradient of the soft expectation over soft_mask (default: mask).  Taking the soft expectation over all
    divisors of the dimension keeps a gradient when what is left of the dimension allows one choice only.
    """
    logits = -(cand_log - x_log.unsqueeze(-1)) ** 2 / tau
    if noise is not None:  # Gumbel-max: the hard choice is a sample of softmax(logits / tau)
        logits = logits + noise
    index = logits.masked_fill(~mask, float("-inf")).argmax(dim=-1)
    hard = cand_log.gather(-1, index.unsqueeze(-1)).squeeze(-1)
    soft_mask = mask if soft_mask is None else soft_mask
    weights = torch.softmax(logits.masked_fill(~soft_mask, float("-inf")), dim=-1)
    soft = (weights * cand_log.masked_fill(~soft_mask, 0.0)).sum(-1)
    return hard + (soft - soft.detach()), index


@dataclass
class FactorSample:
    """One forward pass: legal integer factors with straight-through gradients.

    temporal_log [B, NUM_LEVELS, 7] and spatial_log [B, 2] (C, K) are logs of integers in the forward
    pass; penalty [B] is the soft-constraint term of the continuous parameters.
    """
    temporal_log: torch.Tensor
    spatial_log: torch.Tensor
    penalty: torch.Tensor

    @property
    def temporal(self) -> torch.Tensor:
        return torch.exp(self.temporal_log)

    @property
    def spatial(self) -> torch.Tensor:
        return torch.exp(self.spatial_log)

    def integers(self, b: int) -> tuple[list[list[int]], int, int]:
        """Factors of batch element b as Python ints: (temporal[level][dim], spatial_C, spatial_K)."""
        t = torch.round(self.temporal[b].detach()).to(torch.int64).tolist()
        sc, sk = torch.round(self.spatial[b].detach()).to(torch.int64).tolist()
        return t, sc, sk


class MappingSpace:
    """The candidate-factor tables of one layer, and the sampler from continuous parameters to legal factors.

    Parameters (log space): theta_temporal [B, DRAM_LEVEL, 7] for L0..L2 (L3 takes the remainder),
    theta_spatial [B, 2] for the C and K spatial factors.
    """

    def __init__(self, dims: dict[str, int], max_spatial: int = 128, allowed: torch.Tensor | None = None):
        self.dims = dict(dims)
        self.sizes = torch.tensor([float(self.dims[d]) for d in DIMS], dtype=torch.float64)
        self.max_spatial = int(max_spatial)
        self.allowed = default_allowed(self.dims) if allowed is None else allowed.clone()
        tables = [tile_candidates(self.dims[d], d in RAGGED_DIMS) for d in DIMS]
        width = max(len(t) for t in tables)
        cand = torch.ones(len(DIMS), width, dtype=torch.int64)
        valid = torch.zeros(len(DIMS), width, dtype=torch.bool)
        for j, t in enumerate(tables):
            cand[j, : len(t)] = torch.tensor(t)
            valid[j, : len(t)] = True
        self.cand = cand                                   # [7, D]
        self.cand_log = torch.log(cand.to(torch.float64))  # [7, D]
        self.valid = valid
        self.exact = torch.tensor([d not in RAGGED_DIMS for d in DIMS]).view(1, len(DIMS), 1)
        # the largest extent a tiling may cover (the penalty's bound on the inner tiles)
        self.cover_log = torch.log(torch.tensor([float(t[-1]) for t in tables], dtype=torch.float64))

    # ---- parameters -------------------------------------------------------------------------
    def params_from_factors(self, temporal: list[list[int]], spatial_c: int, spatial_k: int,
                            jitter: float = 0.0, generator: torch.Generator | None = None):
        """Log-space parameters that sample back to the given integer factors at low temperature."""
        th = torch.log(torch.tensor([[float(temporal[l][j]) for j in range(len(DIMS))]
                                     for l in range(DRAM_LEVEL)], dtype=torch.float64))
        sp = torch.log(torch.tensor([float(spatial_c), float(spatial_k)], dtype=torch.float64))
        if jitter:
            th = th + jitter * torch.randn(th.shape, generator=generator, dtype=torch.float64)
            sp = sp + jitter * torch.randn(sp.shape, generator=generator, dtype=torch.float64)
        return th, sp

    def random_params(self, batch: int, generator: torch.Generator | None = None):
        """Random continuous parameters: each dimension split in random log-proportions over its slots."""
        logn = torch.log(self.sizes)
        # slots: spatial (C/K only), L0, L1, L2, L3 -> Dirichlet-like split of log n
        w = -torch.log(torch.rand(batch, 5, len(DIMS), generator=generator, dtype=torch.float64).clamp_min(1e-12))
        w = w / w.sum(1, keepdim=True)
        th = w[:, 1:4, :] * logn
        sp = torch.stack([w[:, 0, C_INDEX] * logn[C_INDEX], w[:, 0, K_INDEX] * logn[K_INDEX]], dim=1)
        return th, sp

    # ---- sampling ---------------------------------------------------------------------------
    def sample(self, theta_temporal: torch.Tensor, theta_spatial: torch.Tensor, tau: float,
               generator: torch.Generator | None = None, noisy: bool = True,
               spatial_limit: torch.Tensor | float | None = None) -> FactorSample:
        """Legal integer factors from continuous parameters (hard forward, soft backward).

        spatial_limit bounds each spatial factor (defaults to max_spatial); a tensor [B] gives one per start.
        noisy=False gives the deterministic nearest-legal-divisor rounding of the parameters.
        """
        B = theta_temporal.shape[0]
        ndim = len(DIMS)
        limit = self.max_spatial if spatial_limit is None else spatial_limit
        limit_t = torch.as_tensor(limit, dtype=torch.float64).expand(B) if not torch.is_tensor(limit) \
            else limit.to(torch.float64).expand(B)
        remaining = self.sizes.to(torch.int64).expand(B, ndim).clone()
        cand = self.cand.expand(B, ndim, -1)
        cand_log = self.cand_log.expand(B, ndim, -1)
        base_mask = self.valid.expand(B, ndim, -1)

        def choose(x_log, extra_mask):
            soft_mask = base_mask & extra_mask
            left = remaining.unsqueeze(-1)
            mask = soft_mask & (cand <= left) & (~self.exact | (left % cand == 0))
            noise = gumbel_noise(mask.shape, generator) if noisy else None
            value, idx = straight_through_choice(x_log, cand_log, mask, tau, noise, soft_mask)
            chosen = cand.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
            return value, chosen

        # spatial factors (only C and K can be spread over the array)
        sp_x = torch.zeros(B, ndim, dtype=torch.float64)
        sp_x = sp_x.index_put((torch.arange(B), torch.full((B,), C_INDEX)), theta_spatial[:, 0])
        sp_x = sp_x.index_put((torch.arange(B), torch.full((B,), K_INDEX)), theta_spatial[:, 1])
        within_array = cand.to(torch.float64) <= limit_t.view(B, 1, 1)

        def spatial(j):
            """The spatial factor of dim j (C on the array rows, K on its columns); 1 for the others."""
            nonlocal remaining
            only = torch.zeros(ndim, dtype=torch.bool)
            only[j] = True
            val, chosen = choose(sp_x, within_array & (only.view(1, ndim, 1) | (cand == 1)))
            remaining = -(-remaining // chosen)            # tiles left to cover: ⌈left / factor⌉
            return val

        # innermost first, as the loops nest (relax.slot_factors): L0, spatial C, L1, spatial K, L2
        levels, sp_val = [], 0
        for l in range(DRAM_LEVEL):
            if l == 1:
                sp_val = sp_val + spatial(C_INDEX)
            if l == 2:
                sp_val = sp_val + spatial(K_INDEX)
            lvl_mask = self.allowed[..., l, :].unsqueeze(-1) | (cand == 1)
            val, chosen = choose(theta_temporal[:, l, :], lvl_mask)
            levels.append(val)
            remaining = -(-remaining // chosen)
        logn = torch.log(self.sizes).expand(B, ndim)
        # DRAM covers the rest: ⌈n / inner tile⌉ in the forward pass, the gradient of n / inner tile
        outer = logn - sp_val - sum(levels)
        outer = outer + (torch.log(remaining.to(torch.float64)) - outer).detach()
        temporal_log = torch.stack(levels + [outer], dim=1)
        spatial_log = torch.stack([sp_val[:, C_INDEX], sp_val[:, K_INDEX]], dim=1)

        penalty = self.penalty(theta_temporal, theta_spatial, limit_t)
        return FactorSample(temporal_log, spatial_log, penalty)

    def penalty(self, theta_temporal, theta_spatial, spatial_limit) -> torch.Tensor:
        """Soft constraints on the continuous parameters: factors < 1, inner tiles beyond the largest
        extent a tiling covers, array over-use."""
        logn = self.cover_log
        below_one = torch.relu(-theta_temporal).pow(2).sum((1, 2)) + torch.relu(-theta_spatial).pow(2).sum(1)
        inner = theta_temporal.sum(1)
        inner = inner.index_add(1, torch.tensor([C_INDEX, K_INDEX]), theta_spatial)
        over_dim = torch.relu(inner - logn).pow(2).sum(1)
        over_array = torch.relu(theta_spatial - torch.log(spatial_limit).unsqueeze(1)).pow(2).sum(1)
        masked = (~self.allowed[..., :DRAM_LEVEL, :]).to(torch.float64)
        disallowed = (theta_temporal.abs() * masked).pow(2).sum((1, 2))
        return below_one + over_dim + over_array + disallowed


class StackedSpace(MappingSpace):
    """Several layers' mapping spaces as one, `rows` design points per layer (layer-major): the
    candidate tables, sizes and allowed slots are per row ([L*rows, ...]), so one sample() draws
    every layer's factors in one batched pass."""

    def __init__(self, spaces: list[MappingSpace], rows: int):
        width = max(sp.cand.shape[1] for sp in spaces)

        def stacked(t, fill):
            padded = [torch.cat([x, torch.full((x.shape[0], width - x.shape[1]), fill, dtype=x.dtype)], 1) for x in t]
            return torch.stack(padded).repeat_interleave(rows, 0)
        self.cand = stacked([sp.cand for sp in spaces], 1)
        self.cand_log = torch.log(self.cand.to(torch.float64))
        self.valid = stacked([sp.valid for sp in spaces], False)
        self.sizes = torch.stack([sp.sizes for sp in spaces]).repeat_interleave(rows, 0)
        self.allowed = torch.stack([sp.allowed for sp in spaces]).repeat_interleave(rows, 0)
        self.cover_log = torch.stack([sp.cover_log for sp in spaces]).repeat_interleave(rows, 0)
        self.exact = spaces[0].exact
        self.max_spatial = max(sp.max_spatial for sp in spaces)
        self.layers, self.rows = len(spaces), rows


def capacity_penalty(used: torch.Tensor, capacity: torch.Tensor | float) -> torch.Tensor:
    """Squared log over-use of a buffer (0 when it fits)."""
    cap = torch.as_tensor(capacity, dtype=used.dtype)
    return torch.relu(torch.log(used.clamp_min(1e-12)) - torch.log(cap)).pow(2)
