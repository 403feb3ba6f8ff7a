"""A whole model as the tuner costs it: the layers the search tunes, and every other step of the
program the compiler builds (baco.model.workload.model_workload derives both from the steps
compile_model lowers), so that the predicted EDP gain is the whole program's, not its layers'.

Steps the search does not tune (`UntunedSteps`):
  * Gemmini GEMMs that run the GEMM kernel's default schedule on whatever Gemmini the design
    has (attention's batched matmuls, Q.K^T and P.V, one launch per batch and head): costed as
    the build without a design costs its layers (default_schedule_cost), on the design's Gemmini;
  * residual adds (the resadd kernel: both operands moved into the accumulator, the sum stored):
    costed by their data moves (residual_add_cost);
  * CPU operators (softmax, layernorm, LUTs, pools, copies...): fixed cycles from the CPU cost
    table (baco.model.cpu_cost), the same on every Gemmini. Their energy is not counted (the
    tuner's energy is Gemmini's, as the measured programs' is).
The untuned steps' cycles and energy add to the tuned layers' in the search's objective
(explore.NetworkProblem) and in its Result: they dilute the gain a design can make."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from baco.gemmini.energy import energy_pj
from baco.gemmini.schedule import (RESADD_INSTRUCTIONS, RESADD_ISSUE_LEAD, dma_cycles, instructions, pieces,
                                   resadd_programs, resadd_terms)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.problem.layer import Layer
from baco.tuner.arch import Hardware
from baco.tuner.kernel_model import (conv_schedule_cycles, conv_schedule_energy, evaluate, gemm_schedule_cycles,
                                    pointwise_loop_conv_cost, pointwise_loop_conv_default)
from baco.tuner.mapping import (KERNEL_B_PADDED, default_kernel_schedule, default_layer_schedule, is_kernel_layer,
                                schedule_mapping)


@dataclass(frozen=True)
class ResidualAdd:
    """An int8 residual add of two rows x cols tensors on Gemmini, `count` of them."""
    rows: int
    cols: int
    count: int = 1
    name: str = ""


@dataclass(frozen=True)
class CpuWork:
    """A CPU operator of the program: `cycles` per instance (the CPU cost table's), `count` instances."""
    kind: str
    cycles: float
    count: int = 1
    name: str = ""


@dataclass
class UntunedSteps:
    """The steps of a program the search does not tune (see the module docstring)."""
    gemms: list[Layer] = field(default_factory=list)
    adds: list[ResidualAdd] = field(default_factory=list)
    cpu: list[CpuWork] = field(default_factory=list)

    @property
    def cpu_cycles(self) -> float:
        return sum(w.count * w.cycles for w in self.cpu)

    def __bool__(self) -> bool:
        return bool(self.gemms or self.adds or self.cpu)

    def cost(self, hw: Hardware) -> tuple[float, float]:
        """(cycles, Gemmini energy µJ) of all of them, count-weighted, on hw."""
        return _untuned_cost(tuple(self.gemms), tuple(self.adds), self.cpu_cycles, Hardware(*_hw_key(hw)))

    def per_step(self, hw: Hardware) -> list[tuple[str, int, float]]:
        """(name, count, cycles of one instance) of each step on hw."""
        cfg_hw = Hardware(*_hw_key(hw))
        return ([(g.name, g.count, default_schedule_cost(g, cfg_hw, b_padded=False)[0]) for g in self.gemms]
                + [(a.name, a.count, residual_add_cost(a, cfg_hw)[0]) for a in self.adds]
                + [(w.name, w.count, w.cycles) for w in self.cpu])


@dataclass
class ModelWorkload:
    """A whole model: `layers` (tuned: convolutions, depthwise convolutions, linear layers; unique,
    with counts) and `untuned`, the rest of its program."""
    layers: list[Layer]
    untuned: UntunedSteps


def _hw_key(hw) -> tuple:
    return int(hw.pe_dim), float(hw.sp_kb), float(hw.acc_kb)


@functools.lru_cache(maxsize=256)
def _untuned_cost(gemms: tuple, adds: tuple, cpu_cycles: float, hw: Hardware) -> tuple[float, float]:
    cycles, energy = cpu_cycles, 0.0
    for g in gemms:
        c, e, _ = default_schedule_cost(g, hw, b_padded=False)
        cycles, energy = cycles + g.count * c, energy + g.count * e
    for a in adds:
        c, e = residual_add_cost(a, hw)
        cycles, energy = cycles + a.count * c, energy + a.count * e
    return cycles, energy


@functools.lru_cache(maxsize=4096)
def default_schedule_cost(layer: Layer, hw: Hardware, b_padded: bool = KERNEL_B_PADDED) -> tuple[float, float, float]:
    """(cycles end to end, energy µJ, cycles of Gemmini alone) of one instance of a layer run by its
    kernel's default schedule on hw (the program models that cost the tuned layers: what the compiler
    runs without a tuned schedule). b_padded: B stored in whole DIM rows (baco.model's linear weights;
    a batched matmul's B is an activation, not padded)."""
    cfg = hw.to_gemmini_config()
    hw3 = (cfg.dim, cfg.sp_kb, cfg.acc_kb)
    if is_kernel_layer(layer):
        s = default_kernel_schedule(layer, cfg, b_padded)
        alone = gemm_schedule_cycles(layer.P, layer.K, layer.C, s, cfg, end_to_end=False, b_padded=b_padded,
                                     bias=layer.bias)
        return (gemm_schedule_cycles(layer.P, layer.K, layer.C, s, cfg, b_padded=b_padded, bias=layer.bias),
                evaluate(layer, schedule_mapping(layer, s, cfg.dim), hw).energy_uj, alone)
    loop_conv = pointwise_loop_conv_default(layer, cfg)
    if loop_conv is not None:       # what baco.kernels.conv.conv2d runs it as
        return pointwise_loop_conv_cost(layer, loop_conv, cfg)
    s = default_layer_schedule(layer, cfg)
    return (conv_schedule_cycles(layer, s, hw3), conv_schedule_energy(layer, s, hw3),
            conv_schedule_cycles(layer, s, hw3, end_to_end=False))


def residual_add_cost(add: ResidualAdd, hw: Hardware) -> tuple[float, float]:
    """(cycles, energy µJ) of one residual add on hw, by its data moves as the compiled resadd
    kernel issues them at its blocks (resadd_blocks): per program each operand into the accumulator
    (int8, widened on the way: an mvin per DIM rows and up to max_block_len column tiles) and the
    sum out (int8, an mvout per DIM rows and as many columns, through the accumulator's scaling), a
    program's stores under the next program's loads; end to end Gemmini's time after the core's
    lead (RESADD_ISSUE_LEAD), or the core's instructions (RESADD_INSTRUCTIONS) if longer. Against
    the ISS with the cycle model (the kernel compiled for its shapes and grid, DIM 16 and 32, its
    default views and blocks): 0.99-1.05x on 10 adds of whole DIM-row programs (a one-program 16x16
    add 0.89x); on 12 adds whose elements are not whole DIM rows, as a whole model runs them
    (resadd_launches' whole rows and one short row, each launch an add) 0.96-1.14x, each launch
    0.94-1.17x; on 13 launches of their M x N views, with programs of ragged rows (explicit streams,
    which move their operands and the sum and zero nothing), 0.79-1.09x."""
    cfg, k = hw.to_gemmini_config(), DEFAULT_CONSTANTS
    d, chunk = cfg.dim, cfg.max_block_len * cfg.dim
    programs = resadd_programs(add.rows, add.cols, cfg)
    loads, stores = [], []
    for rows, cols in programs:
        moves = [(r, c) for r in pieces(rows, d) for c in pieces(cols, chunk)]
        loads.append(2 * sum(dma_cycles(r, c, cfg, k) for r, c in moves))
        stores.append(sum(dma_cycles(r, c, cfg, k) + k.acc_scale_latency for r, c in moves))
    gemmini = sum(max(load, store) for load, store in zip(loads, [0.0] + stores[:-1])) + stores[-1]
    cpu = instructions(resadd_terms(programs, d), RESADD_INSTRUCTIONS) * k.cpu_cycles_per_instruction
    elements = add.rows * add.cols
    counts = {"macs": 0, "registers": 0, "scratchpad_reads": 0, "scratchpad_writes": 0,
              "accumulator_reads": 2 * elements, "accumulator_writes": 2 * elements,
              "dram_bytes_in": 2 * elements, "dram_bytes_out": elements}
    return (float(max(gemmini + RESADD_ISSUE_LEAD, cpu)),
            float(energy_pj(counts, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=d)) * 1e-6)


__all__ = ["ResidualAdd", "CpuWork", "UntunedSteps", "ModelWorkload", "default_schedule_cost", "residual_add_cost"]
