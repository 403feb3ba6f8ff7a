"""The search's integer design points: one layer's mapping as a Tiling, batches of them as the
tensors the cost models take, and a batch's cost."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from baco.problem.dims import DIMS, NUM_LEVELS
from baco.problem.layer import Layer
from baco.tuner import costmodel, kernel_model
from baco.tuner.mapping import Mapping
from baco.tuner.relax import ORDER_CHOICES, level_orders


@dataclass(frozen=True)
class Tiling:
    """One layer's integer mapping: temporal[level][dim] (L0..L3, DIMS order), spatial factors, order choice."""
    temporal: tuple[tuple[int, ...], ...]
    spatial_c: int
    spatial_k: int
    order: int = 0

    def to_mapping(self) -> Mapping:
        orders = level_orders(self.order)
        return Mapping(
            temporal=[{d: self.temporal[l][j] for j, d in enumerate(DIMS)} for l in range(NUM_LEVELS)],
            spatial_C=self.spatial_c, spatial_K=self.spatial_k,
            order=[tuple(orders[l]) for l in range(NUM_LEVELS)])

    @classmethod
    def from_mapping(cls, mapping: Mapping, order: int = 0) -> "Tiling":
        temporal = tuple(tuple(int(mapping.temporal[l].get(d, 1)) for d in DIMS) for l in range(NUM_LEVELS))
        return cls(temporal, int(mapping.spatial_C), int(mapping.spatial_K), order)

    @property
    def pe_needed(self) -> int:
        return max(self.spatial_c, self.spatial_k)


def stack_tilings(tilings: list[Tiling]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Batch tensors (temporal [B,4,7], spatial [B,2], order [B]) of a list of tilings."""
    temporal = torch.tensor([t.temporal for t in tilings], dtype=torch.float64)
    spatial = torch.tensor([[t.spatial_c, t.spatial_k] for t in tilings], dtype=torch.float64)
    order = torch.tensor([t.order for t in tilings], dtype=torch.int64)
    return temporal, spatial, order


def unstack_tilings(temporal: torch.Tensor, spatial: torch.Tensor, order: torch.Tensor) -> list[Tiling]:
    t = torch.round(temporal.detach()).to(torch.int64).tolist()
    s = torch.round(spatial.detach()).to(torch.int64).tolist()
    o = order.tolist()
    return [Tiling(tuple(map(tuple, t[b])), s[b][0], s[b][1], o[b]) for b in range(len(t))]


@functools.lru_cache(maxsize=None)
def order_indices() -> torch.Tensor:
    """costmodel.order_index of every ORDER_CHOICES entry: [len(ORDER_CHOICES), NUM_LEVELS, 7]."""
    return torch.cat([costmodel.order_index(level_orders(c), 1) for c in range(len(ORDER_CHOICES))])


def costmodel_tensors(layer: Layer, temporal, spatial, order, hw_t,
                      cycle_model: str = "compiled") -> tuple[torch.Tensor, torch.Tensor]:
    """(cycles [B], energy µJ [B]) of B mappings of one layer (kernel_model.layer_tensors), each
    with its own canonical loop order choice order [B], in one batched evaluation."""
    c, e, _, _ = kernel_model.layer_tensors(layer, temporal, spatial, order_indices()[order], hw_t, cycle_model)
    return c, e
