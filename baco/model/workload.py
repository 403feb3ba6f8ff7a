"""The tuner's table of a whole model (baco.tuner.whole_model.ModelWorkload), read off the steps
compile_model lowers (baco.model.lower), so the tuner costs the program that runs and nothing
walks the torch module a second time:

  * a Gemmini step with a layer (conv, depthwise, linear; a fused step's producer layer) is a
    layer the search tunes: the lowering matches the design's schedules to these layers by key;
  * a batched matmul (one GEMM launch per batch and head, at the kernel's default schedule) is
    an untuned GEMM layer counted once per launch;
  * a residual add is a ResidualAdd of each launch's rows x cols;
  * a CPU step is its kernel's cycles by the CPU cost table (baco.model.cpu_cost).
Identical entries are merged with a count."""
from __future__ import annotations

import dataclasses
import math

from baco.model.compile import compile_model
from baco.model.cpu_cost import cpu_cycles
from baco.model.lower import GemminiStep, Lowered, module_path
from baco.tuner.whole_model import CpuWork, ModelWorkload, ResidualAdd, UntunedSteps
from baco.tuner.workloads import gemm, merge_identical


def workload_of(lowered: Lowered) -> ModelWorkload:
    """The ModelWorkload of a lowered model's steps (CompiledModel.lowered)."""
    layers, gemms, adds, cpu = [], [], [], []
    for step in lowered.steps:
        name = module_path(step.op)
        if not isinstance(step, GemminiStep):
            cpu.append(CpuWork(step.kernel.op, cpu_cycles(step.kernel), 1, name))
        elif step.layer is not None:
            layers.append(dataclasses.replace(step.layer, name=name, count=1))
        elif step.op.kind == "matmul":
            (*batch, M, K), N = step.op.q["a_view"][0], step.op.q["b_view"][0][-1]
            if math.prod(batch) != len(step.launches):
                raise AssertionError(f"{name}: {len(step.launches)} GEMM launches for a batch of {math.prod(batch)}")
            gemms.append(gemm(M, K, N, name=name).with_count(len(step.launches)))
        elif step.op.kind == "add":
            adds += [ResidualAdd(*launch.args[0].shape, 1, name) for launch in step.launches]
        else:
            raise AssertionError(f"{name}: a Gemmini step of kind {step.op.kind!r} without a layer")
    return ModelWorkload(merge_identical(layers), UntunedSteps(merge_identical(gemms), _merged(adds, ("rows", "cols")),
                                                               _merged(cpu, ("kind", "cycles"))))


def _merged(entries: list, key_fields: tuple) -> list:
    """One entry per distinct key, in first-seen order, counts summed."""
    found = {}
    for e in entries:
        key = tuple(getattr(e, f) for f in key_fields)
        found[key] = dataclasses.replace(found[key], count=found[key].count + e.count) if key in found else e
    return list(found.values())


def model_workload(model, example_input, calibrate: int = 8) -> ModelWorkload:
    """The ModelWorkload of a torch model: compile_model's steps on the default Gemmini (the steps a
    design changes are the Gemmini layers' schedules, not which steps run)."""
    return workload_of(compile_model(model, example_input, calibrate=calibrate).lowered)


__all__ = ["workload_of", "model_workload"]
