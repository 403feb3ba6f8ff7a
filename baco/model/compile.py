"""`baco.compile_model`: a PyTorch model as a quantised sequence of Gemmini kernel launches and CPU
ops (capture: baco.model.graph; quantisation: baco.model.quantize; lowering: baco.model.lower),
checked against the independent reference (baco.model.reference)."""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from baco.codegen.program import build_program_elf, run_program
from baco.compiler import cache_dir

from baco.model import reference
from baco.model.graph import capture, inverse
from baco.model.link import program_of
from baco.model.lower import GemminiStep, design_schedules, lower, unfused_pools
from baco.model.quantize import node_values, quantize, quantize_input
from baco.options import TARGETS


@dataclass
class LayerInfo:
    """One step of the program: the op, where it comes from, its output, what runs it."""
    kind: str
    source: str
    output_shape: tuple
    scale: float
    runs_on: str            # "gemmini" | "cpu"
    kernels: list           # kernel names of its launches (Gemmini) or the CPU kernel's name
    schedule: str           # the schedule(s), as text
    schedule_source: str    # "tuned" | "default" | ""


class CompiledModel:
    """A model compiled for Gemmini. Call it on a float tensor (quantised with the input scale) or
    an int8 array, both in the model's own layout (NCHW for images): it returns the int8 output in
    the model's layout (`dequantize` gives floats). `graph` is the quantised graph, `lowered` its
    steps and buffers, `layers` per-step information, `reference(x)` the independent reference's
    output and `check(x)` runs both and compares them."""

    def __init__(self, graph, ep, lowered, target):
        self.graph, self.exported, self.lowered, self.target = graph, ep, lowered, target
        self.input_tensor, self.output_tensor = graph.tensors[graph.input], graph.tensors[graph.output]

    @property
    def input_scale(self) -> float:
        return self.input_tensor.scale

    @property
    def output_scale(self) -> float:
        return self.output_tensor.scale

    @property
    def config(self):
        return self.lowered.config

    def _to_storage(self, x, t):
        return np.ascontiguousarray(x.transpose(t.order))

    def _from_storage(self, y, t):
        return np.ascontiguousarray(y.transpose(inverse(t.order)))

    def quantize_input(self, x) -> np.ndarray:
        """The int8 input (model layout) of a float tensor or array, or an int8 array checked; token
        ids (a model starting with embeddings) as int32, each checked inside the tables."""
        import torch
        t = self.input_tensor
        if t.dtype == "int32":
            return self.token_ids(x)
        if isinstance(x, torch.Tensor):
            if x.dtype == torch.int8:
                x = x.numpy()
            elif not x.is_floating_point():
                raise TypeError(f"x must be a float tensor or an int8 array, not a {x.dtype} tensor")
            else:
                x = quantize_input(x.detach().float(), t.scale)
        elif isinstance(x, np.ndarray):
            if x.dtype != np.int8:
                raise TypeError(f"x as an array must be int8 (quantised with scale {t.scale}), not {x.dtype}; "
                                "pass a float torch tensor to quantise it")
        else:
            raise TypeError(f"x must be a torch.Tensor or an int8 numpy array, not {type(x).__name__}")
        if tuple(x.shape) != tuple(t.torch_shape):
            raise ValueError(f"x has shape {tuple(x.shape)}, the model was compiled for {tuple(t.torch_shape)}")
        return x

    def token_ids(self, x) -> np.ndarray:
        """Integer token ids (a torch tensor or numpy array) as the int32 array the program reads."""
        import torch
        t = self.input_tensor
        if isinstance(x, torch.Tensor):
            x = x.detach().numpy()
        if not isinstance(x, np.ndarray) or not np.issubdtype(x.dtype, np.integer):
            raise TypeError(f"x must be integer token ids (a torch tensor or numpy array), not "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
        if tuple(x.shape) != tuple(t.torch_shape):
            raise ValueError(f"x has shape {tuple(x.shape)}, the model was compiled for {tuple(t.torch_shape)}")
        if x.size and (x.min() < 0 or x.max() >= t.bound):
            raise ValueError(f"x: token ids must be in [0, {t.bound}) (the embedding tables' rows), got "
                             f"[{x.min()}, {x.max()}]")
        return x.astype(np.int32)

    def __call__(self, x, target=None) -> np.ndarray:
        """The int8 output on `target`: "sim" runs the steps one by one on the host JIT and the
        functional model; "iss" links the whole program (this input included) into one ELF and runs
        it on the RISC-V ISS."""
        target = target or self.target
        if target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
        q = self.quantize_input(x)
        if target == "iss":
            with tempfile.TemporaryDirectory(prefix="baco-model-") as d:
                run = run_program(self.build_elf(Path(d) / "model.elf", q, expected=None))
            return self._from_storage(run.output.reshape(self.output_tensor.shape), self.output_tensor)
        self.lowered.buffers[self.graph.input][...] = self._to_storage(q, self.input_tensor)
        for step in self.lowered.steps:
            step.run(target)
        return self._from_storage(self.lowered.buffers[self.graph.output].copy(), self.output_tensor)

    def program(self):
        """The whole model as one baco.codegen.program.Program (baco.model.link)."""
        return program_of(self.lowered, self.graph.output)

    def build_elf(self, path, x, expected="reference"):
        """One self-checking bare-metal ELF of the model on input x (float tensor or int8 array,
        model layout), linked in: exit 0 iff its output equals `expected` (the reference's output
        by default; an int8 array in the model's layout; None: no check). Returns the
        baco.codegen.program.ProgramBuild (elf, memory plan, sizes)."""
        q = self.quantize_input(x)
        prog = self.program()
        out = next(b for b in prog.buffers.values() if b.region == "output")
        inp = next(b for b in prog.buffers.values() if b.region == "input")
        if isinstance(expected, str) and expected == "reference":
            expected = self.reference(q)
        checks = None if expected is None else \
            {out.name: self._to_storage(np.asarray(expected, dtype=np.int8), self.output_tensor).reshape(out.shape)}
        return build_program_elf(prog, path, input={inp.name: self._to_storage(q, self.input_tensor)},
                                 expected=checks, cache_dir=cache_dir())

    def reference(self, x, all_tensors=False):
        """The independent reference's int8 output (model layout), or every tensor's value (stored
        layout) with all_tensors."""
        q = self.quantize_input(x)
        values = reference.run(self.graph, self._to_storage(q, self.input_tensor))
        return values if all_tensors else self._from_storage(values[self.graph.output], self.output_tensor)

    def check(self, x, target=None) -> dict:
        """Run the program and the reference on x: {"bit_exact", "mismatches", "first_mismatch"
        (the first tensor, in program order, whose value differs; None if none; a fused step's
        intermediate, kept on chip, is checked through its consumer)}."""
        out = self(x, target)
        values = self.reference(x, all_tensors=True)
        first = next((op.output for op in self.graph.ops if op.output not in self.lowered.on_chip
                      and not np.array_equal(self.lowered.buffers[op.output], values[op.output])), None)
        ref = self._from_storage(values[self.graph.output], self.output_tensor)
        return dict(bit_exact=bool(np.array_equal(out, ref)), mismatches=int(np.count_nonzero(out != ref)),
                    first_mismatch=first, output=out, reference=ref)

    def dequantize(self, y) -> np.ndarray:
        return np.asarray(y, dtype=np.float32) * np.float32(self.output_scale)

    @property
    def layers(self) -> list:
        info = []
        for step in self.lowered.steps:
            t = self.graph.tensors[step.op.output]
            if isinstance(step, GemminiStep):
                scheds = sorted({str(launch.options.get("schedule", "")) for launch in step.launches})
                info.append(LayerInfo(step.op.kind, step.op.source, t.shape, t.scale, "gemmini",
                                      sorted({launch.kernel.fn.__name__ for launch in step.launches}),
                                      "; ".join(scheds), step.schedule_source))
            else:
                info.append(LayerInfo(step.op.kind, step.op.source, t.shape, t.scale, "cpu",
                                      [step.kernel.name], "", ""))
        return info


def cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def tensor_errors(compiled: CompiledModel, x) -> list:
    """Where quantisation loses accuracy: per op in program order, (kind, source, cosine similarity
    of its dequantised int8 output (the reference's) with the float model's value there)."""
    graph = compiled.graph
    values = compiled.reference(x, all_tensors=True)
    floats = node_values(compiled.exported, [x], {graph.tensors[op.output].node for op in graph.ops})
    rows = []
    for op in graph.ops:
        t = graph.tensors[op.output]
        f = floats[t.node][0].float().numpy()
        f = f.transpose(t.order) if f.ndim == len(t.order) else f
        rows.append((op.kind, op.source, cosine(f.reshape(t.shape), values[op.output].astype(np.float64) * t.scale)))
    return rows


def model_output(out):
    """The one tensor a model returned (transformers wraps it in a ModelOutput, the exported graph's
    one output)."""
    import torch
    leaves = [v for v in torch.utils._pytree.tree_leaves(out) if isinstance(v, torch.Tensor)]
    if len(leaves) != 1:
        raise ValueError(f"the model returned {len(leaves)} tensors; compiled models return one")
    return leaves[0]


def quantization_error(model, compiled: CompiledModel, inputs) -> dict:
    """The quantised program's logits (the reference's: the program is bit-exact to it) against the
    float model's over `inputs`: mean cosine similarity and top-1 agreement (last dimension)."""
    import torch
    cos, agree = [], []
    for x in inputs:
        with torch.no_grad():
            f = model_output(model(x)).float().reshape(x.shape[0], -1).numpy()
        q = compiled.dequantize(compiled.reference(x)).reshape(x.shape[0], -1)
        cos += [cosine(fi, qi) for fi, qi in zip(f, q)]
        agree += list(f.argmax(1) == q.argmax(1))
    return dict(cosine=float(np.mean(cos)), top1_agreement=float(np.mean(agree)), samples=len(cos))


def compile_model(model, example_input, design=None, calibrate=8, target="sim", observer="minmax") -> CompiledModel:
    """Compile a torch.nn.Module for Gemmini: capture with torch.export on `example_input`, quantise
    (activation scales from `calibrate` inputs: a count of seeded inputs or tensors; `observer`
    "minmax" or "histogram"), lower each op to a shipped kernel launch (default schedules on the
    default Gemmini, or the tuned design `design`: a `baco tune --out` folder, its result.json or the
    loaded dict) or a CPU op. Returns a CompiledModel running on `target`."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
    design = checked_design(design)      # before the capture and the calibration
    graph, ep = capture(model, example_input, unfused_pools(design))
    quantize(graph, ep, example_input, calibrate, observer)
    return CompiledModel(graph, ep, lower(graph, design), target)


def checked_design(design):
    """None, or the tuned design as the result.json dict lower() takes (a folder or file path is
    read); a TypeError/ValueError naming `design` when it is neither or not a `baco tune` result."""
    if design is None:
        return None
    if isinstance(design, (str, Path)):
        from baco.design import load_design
        design = load_design(design)
    if not isinstance(design, dict):
        raise TypeError(f"design must be a `baco tune --out` folder, its result.json or the loaded dict, "
                        f"not {type(design).__name__}")
    try:
        design_schedules(design)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"design is not a `baco tune` result: {type(e).__name__}: {e}") from e
    return design


__all__ = ["compile_model", "CompiledModel", "LayerInfo", "quantization_error", "tensor_errors"]
