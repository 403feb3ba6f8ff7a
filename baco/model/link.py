"""A lowered model as one baco.codegen.program.Program (one bare-metal ELF): its weights and
biases read-only data, the input and output buffers, every other activation in the planned
arena; each Gemmini launch and CPU call a step over those buffers, in program order."""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import byte_bounds

from baco.codegen.program import Program
from baco.model.lower import CpuStep, GemminiStep, Lowered

REGION = {"weight": "weights", "input": "input", "activation": "activation"}


def program_of(lowered: Lowered, output: str) -> Program:
    """The Program of `lowered` whose output buffer holds tensor `output` (the buffer it lives in)."""
    prog = Program(lowered.config)
    out_root = lowered.locate(lowered.buffers[output])[0]
    roots = {name: buf for name, buf in lowered.buffers.items() if lowered.regions[name] != "view"}
    made = {}
    for name, array in roots.items():
        region = "output" if name == out_root else REGION[lowered.regions[name]]
        made[name] = prog.weights(name, array) if region == "weights" else \
            prog.buffer(name, array.dtype, array.shape, region)

    def buffer_arg(array):
        """A launch's array argument: its buffer, or the slice of one it views."""
        name, offset = lowered.locate(array)
        buf = made[name]
        lo, hi = byte_bounds(array)
        span = (hi - lo) // array.itemsize         # a strided view spans more than its size
        if span == buf.size:
            return buf
        return buf.slice(offset // array.itemsize, span)

    def arg(v):
        return buffer_arg(v) if isinstance(v, np.ndarray) else v

    for i, step in enumerate(lowered.steps):
        name = f"s{i:03d}_{step.op.kind}"
        if isinstance(step, GemminiStep):
            for j, launch in enumerate(step.launches):
                out = buffer_arg(launch.y)
                prog.launch(name if len(step.launches) == 1 else f"{name}.{j}", launch.kernel, launch.grid,
                            [arg(a) for a in launch.args], [out],
                            **{k: arg(v) for k, v in launch.options.items()})
        elif isinstance(step, CpuStep):
            bufs = [made[lowered.locate(a)[0]] for a in step.arrays]
            prog.cpu(name, step.kernel, bufs[:-1], bufs[-1:])
        else:
            raise TypeError(f"step {i} is a {type(step).__name__}")
    return prog


__all__ = ["program_of"]
