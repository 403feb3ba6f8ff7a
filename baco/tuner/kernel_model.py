"""What the search predicts for a layer: the compiled program for kernel layers, and the
schedule the compiler is asked to emit.

A layer the compiler runs with the GEMM kernel (mapping.is_kernel_layer) costs what the
program compiled for the mapping's scratchpad tile costs on the cycle model
(costmodel.compiled_cycles); among SCHEDULE_VARIANTS (dataflow x double buffering) the
fastest one that fits the hardware is chosen (double buffering doubles the scratchpad blocks,
baco.gemmini.schedule.gemm_footprint), and that choice is what result.json's schedule carries.
Every other layer, and every layer's energy, keeps the Timeloop-matched model
(costmodel.cost_from_factors). cycle_model="timeloop" gives the pure Timeloop-matched
prediction (how results are compared with DOSA and the thesis).
"""
from __future__ import annotations

import torch

from baco.gemmini.schedule import schedule_problems
from baco.tuner import costmodel
from baco.tuner.hwinfer import gemm_rows_from_factors
from baco.tuner.mapping import KERNEL_OUT_INT8, Mapping, gemm_schedule, is_kernel_layer
from baco.tuner.workloads import Layer

CYCLE_MODELS = ("compiled", "timeloop")
SCHEDULE_VARIANTS = (("WS", False), ("WS", True), ("OS", False), ("OS", True))   # (dataflow, double_buffer)


def check_cycle_model(cycle_model: str) -> str:
    if cycle_model not in CYCLE_MODELS:
        raise ValueError(f"cycle model must be one of {CYCLE_MODELS}, not {cycle_model!r}")
    return cycle_model


def kernel_cycles(layer: Layer, temporal, spatial, hw_t) -> tuple[torch.Tensor, torch.Tensor]:
    """(cycles [B], index into SCHEDULE_VARIANTS [B]) of B mappings of a kernel layer on hardware
    hw_t = (pe_dim, sp_kb, acc_kb) [B]: the fastest variant whose scratchpad blocks fit.
    Differentiable in the factors and the hardware (the choice itself is discrete)."""
    pe, sp_kb, _ = (torch.as_tensor(v, dtype=torch.float64) for v in hw_t)
    sp_rows, _ = gemm_rows_from_factors(layer, temporal, spatial, pe)
    double_fits = (2 * sp_rows.detach()) <= (sp_kb * 1024 / pe).detach() + 1e-9
    candidates = []
    for dataflow, double_buffer in SCHEDULE_VARIANTS:
        c = costmodel.compiled_cycles(layer, temporal, (spatial[:, 0], spatial[:, 1]), hw_t,
                                      out_int8=KERNEL_OUT_INT8, double_buffer=double_buffer, dataflow=dataflow)
        candidates.append(torch.where(double_fits, c, torch.inf) if double_buffer else c)
    stacked = torch.stack(candidates)
    choice = stacked.detach().argmin(0)
    return stacked.gather(0, choice.unsqueeze(0)).squeeze(0), choice


def timeloop_costed(layer: Layer, cycle_model: str) -> bool:
    """Whether the layer's cycles are the Timeloop-matched model's (not a compiled program's)."""
    return cycle_model == "timeloop" or not is_kernel_layer(layer)


def layer_tensors(layer: Layer, temporal, spatial, order, hw_t, cycle_model: str = "compiled"):
    """(cycles [B], energy µJ [B], Timeloop-matched cycles [B], schedule variant [B] or None) of B
    mappings of one layer with the loop orders `order` (level -> dims, or costmodel.order_index's
    tensor)."""
    out = costmodel.cost_from_factors(layer, temporal, spatial[:, 0], spatial[:, 1], order, hw_t)
    if timeloop_costed(layer, cycle_model):
        return out["cycles"], out["energy_uj"], out["cycles"], None
    cycles, choice = kernel_cycles(layer, temporal, spatial, hw_t)
    return cycles, out["energy_uj"], out["cycles"], choice


def evaluate(layer: Layer, mapping: Mapping, hw, cycle_model: str = "compiled") -> costmodel.Cost:
    """The exact Cost of one mapping on hw: cycles of the model the search uses, energy and accesses
    Timeloop-matched, timeloop_cycles always; for a kernel layer (with cycle_model "compiled")
    the schedule the compiler runs, checked with the compiler's capacity rule."""
    cost = costmodel.evaluate(layer, mapping, hw)
    cost.timeloop_cycles = cost.cycles
    if timeloop_costed(layer, cycle_model):
        return cost
    temporal, sC, sK = costmodel.mapping_tensors(mapping)
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
    with torch.no_grad():
        cycles, choice = kernel_cycles(layer, temporal, torch.stack([sC, sK], 1), hw_t)
    dataflow, double_buffer = SCHEDULE_VARIANTS[int(choice[0])]
    schedule = gemm_schedule(mapping, layer, dataflow=dataflow, double_buffer=double_buffer)
    problems = schedule_problems(schedule, hw.to_gemmini_config(), KERNEL_OUT_INT8)
    if problems:   # the tensor rule and the compiler's disagree: a bug, not a design to return
        raise AssertionError(f"chosen schedule {schedule} does not fit {hw}: {'; '.join(problems)}")
    cost.cycles = float(cycles[0])
    cost.edp = cost.cycles * cost.energy_uj
    cost.schedule = schedule
    return cost


__all__ = ["CYCLE_MODELS", "SCHEDULE_VARIANTS", "check_cycle_model", "timeloop_costed", "kernel_cycles", "layer_tensors", "evaluate"]
