"""Post-training static int8 quantisation of a captured graph, as Gemmini runs it.

  * Activations: one symmetric int8 scale per tensor (zero point 0: Gemmini has none),
    calibrated by torch's own observers (MinMaxObserver or HistogramObserver, qint8,
    per_tensor_symmetric) on the exported model's float values at each tensor's node over the
    calibration inputs. Tensors an operator cannot rescale keep their input's scale (reshape,
    permute, max-pool; a multiple by a positive constant reads them at that multiple of the
    scale); a relu6 output takes 6/127 when its calibrated range reaches 6 (then
    saturation is the clamp at 6; baco.model.graph).
  * Weights (BatchNorm already folded): symmetric per-tensor int8, quantised by
    torch.quantize_per_tensor with a MinMaxObserver's scale s_w.
  * Biases: int32 round_half_even(b / (s_in * s_w)).
  * Requantisation: float32(s_in * s_w / s_out), applied by Gemmini on the accumulator read
    (ReLU, multiply in float32, round half to even, saturate to int8): the kernels' `scale=`.
  * Residual add (Gemmini's resadd, each operand scaled on its way into the accumulator and
    saturated to int8 there): with m = max(s_a, s_b), operand scales float32(s_a / m) and
    float32(s_b / m) (both <= 1, so no operand saturates) and output scale float32(m / s_out).
  * Activation functions: a 256-entry int8 table, table[q + 128] = quantize(f(q * s_in), s_out)
    with f torch's own float32 function.
  * A parameter read as an activation (a class token, a position embedding): int8 at the scale
    its observer gives its values.
  * Embedding (a gather of rows by the model's int64 token ids): the table quantised per tensor
    like a weight; the output has the table's scale (its rows are copied).
  * Matmul of two activations (bmm, attention): requantisation float32(s_a * s_b / s_out), no bias.
  * CPU operators (baco.model.cpu_ops) take their input and output scales; concatenation copies,
    so a part of another scale than the output's goes through a requantising table first.

The quantised parameters are in each op's `q` dict; baco.model.reference computes from them.
"""
from __future__ import annotations

import warnings

import numpy as np

from baco.model.graph import Graph

SAME_SCALE = ("reshape", "permute", "strided_copy", "max_pool")    # the output's int8 values are (some of) the input's
OBSERVERS = ("minmax", "histogram")


def observer(kind: str = "minmax"):
    import torch
    from torch.ao.quantization.observer import HistogramObserver, MinMaxObserver
    if kind not in OBSERVERS:
        raise ValueError(f"observer must be one of {OBSERVERS}, not {kind!r}")
    cls = MinMaxObserver if kind == "minmax" else HistogramObserver
    return cls(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)


def observed_scale(obs) -> float:
    scale, zero_point = obs.calculate_qparams()
    assert int(zero_point) == 0, "a symmetric observer has zero point 0"
    return float(scale)


def node_values(ep, inputs, names):
    """{node name: [value per input]} of the exported program's nodes `names`, run in float on each input."""
    import torch
    from torch.fx import Interpreter
    sig = ep.graph_signature
    lifted = {**sig.inputs_to_parameters, **sig.inputs_to_buffers,
              **getattr(sig, "inputs_to_lifted_tensor_constants", {})}
    values = {n: [] for n in names}

    class Recorder(Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            if n.name in values:
                values[n.name].append(result.detach())
            return result

    placeholders = [n for n in ep.graph_module.graph.nodes if n.op == "placeholder"]
    for x in inputs:
        args = []
        for p in placeholders:
            if p.name in lifted:
                key = lifted[p.name]
                args.append(ep.state_dict[key] if key in ep.state_dict else ep.constants[key])
            else:
                args.append(x)
        with torch.no_grad():
            Recorder(ep.graph_module).run(*args)
    return values


def calibration_inputs(example_input, calibrate, id_bound=None):
    """The calibration batches: `calibrate` (an int N: the example input and N - 1 seeded standard
    normal tensors of its shape, or for token ids (id_bound: ids are in [0, id_bound)) seeded
    uniform ids; or a tensor / list of tensors)."""
    import torch
    if isinstance(calibrate, bool) or not isinstance(calibrate, (int, torch.Tensor, list, tuple)):
        raise TypeError(f"calibrate must be a number of inputs or tensors, not {type(calibrate).__name__}")
    if isinstance(calibrate, int):
        if calibrate < 1:
            raise ValueError(f"calibrate must be >= 1, got {calibrate}")
        gen = torch.Generator().manual_seed(0)
        if id_bound is not None:
            return [example_input] + [torch.randint(0, id_bound, example_input.shape, generator=gen,
                                                    dtype=example_input.dtype) for _ in range(calibrate - 1)]
        return [example_input] + [torch.randn(example_input.shape, generator=gen) for _ in range(calibrate - 1)]
    batches = [calibrate] if isinstance(calibrate, torch.Tensor) else list(calibrate)
    for b in batches:
        if not isinstance(b, torch.Tensor) or tuple(b.shape) != tuple(example_input.shape):
            raise ValueError(f"calibrate tensors must have the example input's shape {tuple(example_input.shape)}")
    return batches


def quantize_weight(w):
    """(int8 numpy array, scale) of a float weight tensor: symmetric per tensor."""
    obs = observer("minmax")
    obs(w)
    s = observed_scale(obs)
    return quantize_values(w, s), s


def quantize_values(v, scale: float):
    """torch's int8 quantisation of float values at `scale` (round half to even, saturated)."""
    import torch
    with warnings.catch_warnings():     # torch 2.13 deprecates quantized tensors, not the arithmetic
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*deprecated")
        q = torch.quantize_per_tensor(torch.as_tensor(v, dtype=torch.float32), scale, 0, torch.qint8)
    return q.int_repr().numpy()


def f32(x) -> float:
    return float(np.float32(x))


def int32_bias(b, s_in: float, s_w: float):
    acc_scale = s_in * s_w
    q = np.rint(b.double().numpy() / acc_scale)
    return np.clip(q, -2**31, 2**31 - 1).astype(np.int32)


def lut_table(fn: str, s_in: float, s_out: float, params: dict):
    """The 256 int8 outputs of activation `fn` for the int8 inputs -128..127."""
    import torch
    import torch.nn.functional as F
    x = torch.arange(-128, 128, dtype=torch.float32) * torch.tensor(s_in, dtype=torch.float32)
    y = {"relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "silu": F.silu,
         "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid,
         "gelu": lambda v: F.gelu(v, approximate=params.get("approximate", "none")),
         "hardtanh": lambda v: F.hardtanh(v, params.get("min_val", -1.0), params.get("max_val", 1.0))}[fn](x)
    return quantize_values(y, s_out)


def requant_table(s_in: float, s_out: float):
    """int8 -> int8 table of q * s_in requantised to s_out (round half to even, saturated)."""
    return quantize_values(np.arange(-128, 128, dtype=np.float32) * np.float32(s_in), s_out)


def calibrate_scales(graph: Graph, ep, inputs, kind: str = "minmax"):
    """Each tensor's activation scale from the observers, in place."""
    names = {t.node for t in graph.tensors.values()}
    values = node_values(ep, inputs, names)
    for t in graph.tensors.values():
        if t.dtype == "int32":             # token ids: integers, not quantised
            continue
        obs = observer(kind)
        for v in values[t.node]:
            obs(v.float())
        t.scale = observed_scale(obs)
        if t.clamp_scale is not None and float(obs.max_val) * (1 + 1e-6) >= 127 * t.clamp_scale:
            t.scale = t.clamp_scale
    for op in graph.ops:                   # in order, so chains of them share one scale
        if op.kind in SAME_SCALE or (op.kind == "lut" and op.attrs["fn"] == "relu"):
            graph.tensors[op.output].scale = graph.tensors[op.inputs[0]].scale
        elif op.kind == "mul_scalar":      # the same int8 values, read at a multiple of the scale
            graph.tensors[op.output].scale = graph.tensors[op.inputs[0]].scale * op.attrs["factor"]
        elif op.kind == "embedding":       # rows of the table: its weight scale (every row representable)
            graph.tensors[op.output].scale = quantize_weight(op.attrs["weight"])[1]


def quantize_op(graph: Graph, op):
    """op.q: the op's int8 parameters (see the module docstring)."""
    s_in = [graph.tensors[t].scale for t in op.inputs]
    s_out = graph.tensors[op.output].scale
    a = op.attrs
    if op.kind in ("conv", "depthwise", "linear"):
        w, s_w = quantize_weight(a["weight"])
        if op.kind == "conv":
            w = w.transpose(2, 3, 1, 0)              # (K, C, R, S) -> (R, S, C, K)
        elif op.kind == "depthwise":
            w = w[:, 0].transpose(1, 2, 0)           # (C, 1, R, S) -> (R, S, C)
        else:
            w = w.T                                  # (N, K) -> (K, N)
        op.q = dict(weight=np.ascontiguousarray(w), weight_scale=s_w, bias=int32_bias(a["bias"], s_in[0], s_w),
                    scale=f32(s_in[0] * s_w / s_out), relu=a["relu"])
        if op.kind != "linear":
            op.q.update(stride=a["stride"], padding=a["padding"], dilation=a["dilation"], pool=a["pool"])
    elif op.kind == "matmul":
        # operands: (shape, strides, offset) views of the input buffers; the output stored in out_order
        op.q = dict(scale=f32(s_in[0] * s_in[1] / s_out), a_view=a["a_view"], b_view=a["b_view"],
                    out_order=graph.tensors[op.output].order)
    elif op.kind == "add":
        m = max(s_in)
        op.q = dict(a_scale=f32(s_in[0] / m), b_scale=f32(s_in[1] / m), out_scale=f32(m / s_out), relu=a["relu"])
    elif op.kind == "lut":
        op.q = dict(table=lut_table(a["fn"], s_in[0], s_out, a))
    elif op.kind == "embedding":       # the table at the output's scale (its own weight scale)
        op.q = dict(table=quantize_values(a["weight"], s_out))
    elif op.kind == "constant":        # a parameter read as an activation, at its calibrated scale
        op.q = dict(value=quantize_values(a["value"], s_out))
    elif op.kind in ("avg_pool", "adaptive_avg_pool"):
        op.q = dict(a, in_scale=s_in[0], out_scale=s_out)
    elif op.kind == "softmax":
        op.q = dict(in_scale=s_in[0], out_scale=s_out, keep=a.get("keep"))
    elif op.kind == "layernorm":
        op.q = dict(gamma=a["gamma"].double().numpy(), beta=a["beta"].double().numpy(), eps=a["eps"],
                    in_scale=s_in[0], out_scale=s_out)
    elif op.kind == "mul_channel":
        op.q = dict(x_scale=s_in[0], s_scale=s_in[1], out_scale=s_out)
    elif op.kind == "cat":
        # the parts are copied: a part of another scale is first requantised through a table
        op.q = dict(a, tables=[None if s == s_out else requant_table(s, s_out) for s in s_in])
    else:
        op.q = dict(a)


def quantize(graph: Graph, ep, example_input, calibrate=8, observer_kind: str = "minmax") -> Graph:
    """Calibrate the graph's activation scales and quantise every op, in place."""
    calibrate_scales(graph, ep, calibration_inputs(example_input, calibrate, graph.tensors[graph.input].bound),
                     observer_kind)
    for op in graph.ops:
        quantize_op(graph, op)
    return graph


def quantize_input(x, scale: float):
    """A float input as the int8 tensor the program reads (torch.quantize_per_tensor)."""
    return quantize_values(x, scale)


__all__ = ["quantize", "quantize_input", "quantize_values", "calibrate_scales", "calibration_inputs", "lut_table",
           "OBSERVERS"]
