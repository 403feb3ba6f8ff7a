"""Workloads: constructors of layers (baco.problem.layer.Layer) for GEMM/GEMV/conv, loaders for
Timeloop problem YAML and DOSA's network folders, and extraction from torch modules.

A depthwise convolution is a Layer with depthwise=True, C = 1 and K = its channels (see
baco.problem.layer). The compiler runs it with the depthwise kernel (baco/kernels/conv.py: DIM
channels of input times a diagonal weight block per step), which the tuner costs
(costmodel.conv_program_terms)."""
from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

import yaml

from baco.problem.layer import FIELDS, Layer, layer_from_key, symmetric_padding

WORKLOADS_DIR = Path(__file__).resolve().parents[1] / "data" / "workloads"   # package data (DOSA networks)


def gemm(M: int, K: int, N: int, name: str = "", *, bias: bool = False) -> Layer:
    """C[M×N] = A[M×K]·B[K×N] (+ a bias row: a linear layer), written as DOSA does: P=M, C=K, K=N."""
    return Layer(P=M, C=K, K=N, name=name or f"gemm_{M}x{K}x{N}", bias=bias)


def gemv(M: int, K: int, name: str = "") -> Layer:
    return gemm(M, K, 1, name or f"gemv_{M}x{K}")


def conv2d(out_h: int, out_w: int, C: int, K: int, R: int, S: int | None = None, *, stride: int = 1,
           dilation: int = 1, batch: int = 1, name: str = "") -> Layer:
    S = R if S is None else S
    return Layer(R=R, S=S, P=out_h, Q=out_w, C=C, K=K, N=batch, Wstride=stride, Hstride=stride,
                 Wdilation=dilation, Hdilation=dilation, name=name or f"conv{R}x{S}_{out_h}x{out_w}_{C}to{K}")


def conv2d_from_input(in_h: int, in_w: int, C: int, K: int, R: int, *, stride=1, padding=0, dilation=1,
                      batch=1, name="") -> Layer:
    out_h = (in_h + 2 * padding - dilation * (R - 1) - 1) // stride + 1
    out_w = (in_w + 2 * padding - dilation * (R - 1) - 1) // stride + 1
    return conv2d(out_h, out_w, C, K, R, stride=stride, dilation=dilation, batch=batch, name=name)


def conv1d(out_len: int, C: int, K: int, R: int, *, stride: int = 1, dilation: int = 1, batch: int = 1,
           name: str = "") -> Layer:
    return Layer(R=R, S=1, P=out_len, Q=1, C=C, K=K, N=batch, Hstride=stride, Hdilation=dilation,
                 name=name or f"conv1d{R}_{out_len}_{C}to{K}")


def depthwise_conv2d(out_h: int, out_w: int, channels: int, R: int, S: int | None = None, *, stride: int = 1,
                     dilation: int = 1, batch: int = 1, name: str = "") -> Layer:
    S = R if S is None else S
    return Layer(R=R, S=S, P=out_h, Q=out_w, C=1, K=channels, N=batch, Wstride=stride, Hstride=stride,
                 Wdilation=dilation, Hdilation=dilation, depthwise=True,
                 name=name or f"dw{R}x{S}_{out_h}x{out_w}_{channels}")


def from_problem(problem: dict, name: str = "", count: int = 1) -> Layer:
    """A Timeloop problem (`problem: {instance: {...}}` or the flat `problem: {...}` form).
    A depthwise layer (dw-cnn-layer: one filter per channel) becomes a depthwise Layer (C=1,
    K=channels), as the torch extraction writes depthwise convolutions."""
    p = problem.get("problem", problem)
    shape = p.get("shape", p.get("name", "cnn-layer"))
    shape = (shape.get("name") if isinstance(shape, dict) else shape) or "cnn-layer"
    inst = p.get("instance", p)
    depthwise = shape.lower() == "dw-cnn-layer"
    if depthwise:
        inst = {**inst, "C": 1, "K": inst.get("C", 1)}
    elif shape.lower() != "cnn-layer":
        raise ValueError(f"{name or 'problem'}: Timeloop shape {shape!r} is not modelled "
                         "(only cnn-layer and dw-cnn-layer)")
    fields = {k: int(inst.get(k, 1)) for k in FIELDS}
    # DOSA's 1-D convolutions write Wstride 0 for their one-column images; a stride along a
    # dimension whose output and kernel extents are both 1 never moves, so it is read as 1.
    for stride, out, kernel in (("Wstride", "Q", "S"), ("Hstride", "P", "R")):
        if fields[stride] == 0 and fields[out] == fields[kernel] == 1:
            fields[stride] = 1
    return Layer(**fields, name=name, count=count, depthwise=depthwise)


def is_mac_layer(problem: dict) -> bool:
    """False for the element-wise/reduction problems some networks list beside their MAC layers."""
    p = problem.get("problem", problem)
    shape = p.get("shape", {})
    return not (isinstance(shape, dict) and shape.get("name") in ("elementwise", "reduction"))


# Shipped folders that are not networks of modelled layers: Timeloop shape definitions, and
# DOSA's transposed convolution (its stride dilates the input, which Layer does not express).
NOT_NETWORKS = ("problem-shapes", "conv_transpose")


def network_names() -> list[str]:
    """The networks shipped in baco/data/workloads."""
    return sorted(p.name for p in WORKLOADS_DIR.iterdir()
                  if p.is_dir() and p.name not in NOT_NETWORKS and any(p.glob("*.yaml")))


def load_network(name_or_dir) -> list[Layer]:
    """A shipped network (baco/data/workloads/NAME) or a folder laid out like one:
    unique layers with multiplicities from layer_count.yaml, else one layer per problem YAML."""
    d = Path(name_or_dir)
    if not (d.is_dir() and any(d.glob("*.yaml"))):
        # a folder without YAML (e.g. the output of an earlier `baco tune --out bert`) is no workload
        d = WORKLOADS_DIR / str(name_or_dir)
    if not d.is_dir():
        raise FileNotFoundError(f"no workload folder {name_or_dir!r}: not a directory and not a shipped "
                                f"network ({', '.join(network_names())})")
    counts_file = d / "layer_count.yaml"
    if counts_file.exists():
        counts = yaml.safe_load(counts_file.read_text()) or {}
        layers = []
        for key, val in counts.items():
            count = val.get("count", 1) if isinstance(val, dict) else int(val)
            nm = val.get("name", "") if isinstance(val, dict) else ""
            layers.append(layer_from_key(str(key), count, name=nm or f"{d.name}_{len(layers)}"))
        return layers
    # No counts: every layer in layers.yaml (else unique_layers.yaml, else every problem file) once.
    for listing in ("layers.yaml", "unique_layers.yaml"):
        if (d / listing).exists():
            files = [d / f"{n}.yaml" for n in yaml.safe_load((d / listing).read_text())]
            break
    else:
        files = sorted(p for p in d.glob("*.yaml") if p.name not in ("layers.yaml", "unique_layers.yaml"))
    return merge_identical([from_problem(prob, name=f.stem) for f in files
                            if is_mac_layer(prob := yaml.safe_load(f.read_text()))])


def merge_identical(layers: list[Layer]) -> list[Layer]:
    """One layer per distinct shape, in first-seen order, with the multiplicities summed."""
    found = OrderedDict()
    for layer in layers:
        key = layer.key
        found[key] = found[key].with_count(found[key].count + layer.count) if key in found else layer
    return list(found.values())


def attention_layers(tokens: int, keys: int, embed: int, heads: int, batch: int, name: str) -> list[Layer]:
    """The two batched matmuls of multi-head attention: QKᵀ and A·V, one per (batch, head)."""
    head_dim = embed // heads
    return [Layer(P=tokens, C=head_dim, K=keys, N=batch * heads, name=f"{name}.qk"),
            Layer(P=tokens, C=keys, K=head_dim, N=batch * heads, name=f"{name}.av")]


def mha_layers(mha, query_shape, key_shape, name: str) -> list[Layer]:
    """torch.nn.MultiheadAttention (an fx leaf): Q/K/V in-projections, attention, out-projection."""
    if mha.batch_first:
        (batch, tokens, embed), keys = query_shape, key_shape[1]
    else:
        (tokens, batch, embed), keys = query_shape, key_shape[0]
    kdim, vdim = mha.kdim, mha.vdim
    return [gemm(batch * tokens, embed, embed, name=f"{name}.q_proj", bias=True),
            gemm(batch * keys, kdim, embed, name=f"{name}.k_proj", bias=True),
            gemm(batch * keys, vdim, embed, name=f"{name}.v_proj", bias=True),
            *attention_layers(tokens, keys, embed, mha.num_heads, batch, name),
            gemm(batch * tokens, embed, embed, name=f"{name}.out_proj", bias=True)]


def encoder_layer_layers(layer, shape, name: str) -> list[Layer]:
    """torch.nn.TransformerEncoderLayer (an fx leaf): self-attention and the two feed-forward Linears."""
    batch, tokens = (shape[0], shape[1]) if layer.self_attn.batch_first else (shape[1], shape[0])
    rows = batch * tokens
    return [*mha_layers(layer.self_attn, shape, shape, f"{name}.self_attn"),
            gemm(rows, layer.linear1.in_features, layer.linear1.out_features, name=f"{name}.linear1", bias=True),
            gemm(rows, layer.linear2.in_features, layer.linear2.out_features, name=f"{name}.linear2", bias=True)]


def layers_from_torch(module, *example_inputs) -> list[Layer]:
    """The MAC layers of a torch module (torch.fx trace + shape propagation): Conv1d/Conv2d
    (depthwise ones, groups = in = out channels, as depthwise Layers; other grouped ones as one
    group's convolution, C = in_channels / groups),
    Linear, matmul/bmm, scaled_dot_product_attention, and the torch.nn attention modules fx
    keeps whole (MultiheadAttention, TransformerEncoderLayer, TransformerEncoder); identical
    layers are merged with a count. The convolutions, linear layers and attention's projections
    have a bias (Layer.bias) as the compiled model gives them one (baco.model.lower: every conv,
    depthwise and linear op its int32 bias, zeros where the module has none; a matmul by a
    parameter is a linear layer too); attention's batched matmuls have none. A Conv2d's padding is
    its Layer.padding (a ValueError where rows and columns differ, or for a padded Conv1d: a Layer
    pads both alike)."""
    import operator

    import torch
    from torch.fx import symbolic_trace
    from torch.fx.passes.shape_prop import ShapeProp
    nn = torch.nn
    if type(module).__module__.startswith("torch.nn."):
        module = nn.Sequential(module)   # fx keeps torch.nn modules whole only below the root
    gm = symbolic_trace(module)
    ShapeProp(gm).propagate(*example_inputs)
    found = []
    add = found.append

    def shape_of(arg):
        return arg.meta["tensor_meta"].shape

    for node in gm.graph.nodes:
        meta = node.meta.get("tensor_meta")
        out = getattr(meta, "shape", None)
        name = str(node.target) if node.op == "call_module" else node.name
        if node.op == "call_module":
            mod = gm.get_submodule(node.target)
            if isinstance(mod, nn.Conv2d) and mod.groups == mod.in_channels == mod.out_channels > 1:
                add(Layer(R=mod.kernel_size[0], S=mod.kernel_size[1], P=out[2], Q=out[3], C=1, K=mod.out_channels,
                          N=out[0], Hstride=mod.stride[0], Wstride=mod.stride[1], Hdilation=mod.dilation[0],
                          Wdilation=mod.dilation[1], depthwise=True, name=name, bias=True,
                          padding=symmetric_padding(mod.padding)))
            elif isinstance(mod, nn.Conv2d):
                add(Layer(R=mod.kernel_size[0], S=mod.kernel_size[1], P=out[2], Q=out[3],
                          C=mod.in_channels // mod.groups, K=mod.out_channels, N=out[0],
                          Hstride=mod.stride[0], Wstride=mod.stride[1], Hdilation=mod.dilation[0],
                          Wdilation=mod.dilation[1], name=name, bias=True, padding=symmetric_padding(mod.padding)))
            elif isinstance(mod, nn.Conv1d):
                if mod.padding != (0,):       # a 1 x k layer's padding is the columns' alone
                    raise ValueError(f"{name}: a padded Conv1d (padding {mod.padding}) cannot be expressed as a Layer")
                add(replace(conv1d(out[2], mod.in_channels // mod.groups, mod.out_channels, mod.kernel_size[0],
                                   stride=mod.stride[0], dilation=mod.dilation[0], batch=out[0], name=name), bias=True))
            elif isinstance(mod, nn.Linear):
                add(gemm(math.prod(out[:-1]) if len(out) > 1 else 1, mod.in_features, mod.out_features, name=name,
                         bias=True))
            elif isinstance(mod, nn.MultiheadAttention):
                query, key = node.args[0], node.args[1] if len(node.args) > 1 else node.kwargs["key"]
                found.extend(mha_layers(mod, shape_of(query), shape_of(key), name))
            elif isinstance(mod, nn.TransformerEncoderLayer):
                found.extend(encoder_layer_layers(mod, shape_of(node.args[0]), name))
            elif isinstance(mod, nn.TransformerEncoder):
                for i, layer in enumerate(mod.layers):
                    found.extend(encoder_layer_layers(layer, shape_of(node.args[0]), f"{name}.layers.{i}"))
        elif node.op == "call_function" and node.target in (torch.matmul, torch.bmm, torch.mm, operator.matmul):
            a, b = (shape_of(arg) for arg in node.args[:2])
            batch = math.prod(a[:-2]) if len(a) > 2 else 1
            # x @ W of a parameter W: the compiled model's linear layer, with a (zero) bias
            add(Layer(P=a[-2] if len(a) > 1 else 1, C=a[-1], K=b[-1], N=batch, name=name,
                      bias=node.args[1].op == "get_attr"))
        elif node.op == "call_function" and node.target is torch.nn.functional.scaled_dot_product_attention:
            q, k = (shape_of(arg) for arg in node.args[:2])
            batch = math.prod(q[:-2])
            add(Layer(P=q[-2], C=q[-1], K=k[-2], N=batch, name=f"{name}.qk"))
            add(Layer(P=q[-2], C=k[-2], K=q[-1], N=batch, name=f"{name}.av"))
    return merge_identical(found)


def import_model_module(module_name: str):
    """Import a model-definition module. PyPI's torchvision wheel links against the CUDA build of
    torch; beside the CPU torch its C++ ops (nms, roi_align...) do not load and the package's
    __init__ fails registering them (`operator torchvision::nms does not exist`). Its model
    definitions are plain torch.nn, so then the package is entered without running that __init__
    (the ops are only needed by detection post-processing, not to build or trace a model), before
    the module is imported: packages that import torchvision themselves (timm, transformers, the
    latter lazily when a model class is first used) then import too."""
    import importlib
    importable_torchvision()
    return importlib.import_module(module_name)


def importable_torchvision() -> None:
    """Import torchvision, or, if its __init__ fails on its C++ ops, enter the package without it
    (see import_model_module). Nothing if torchvision is not installed."""
    import importlib
    import importlib.util
    import sys
    import types
    if "torchvision" in sys.modules:
        return
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.submodule_search_locations is None:
        return
    try:
        importlib.import_module("torchvision")
    except (RuntimeError, OSError) as err:
        for loaded in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[loaded]
        package = types.ModuleType("torchvision", doc=f"torchvision without its __init__ ({err})")
        package.__path__, package.__spec__ = list(spec.submodule_search_locations), spec
        sys.modules["torchvision"] = package


def model_factory(spec: str):
    """The callable `module:callable` names (e.g. torchvision.models:resnet50)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--torch wants MODULE:CALLABLE (e.g. torchvision.models:resnet50), got {spec!r}")
    factory = getattr(import_model_module(module_name), attr, None)
    if not callable(factory):
        raise ValueError(f"{module_name} has no callable {attr!r}")
    return factory


def layers_from_model_spec(spec: str, input_shape) -> list[Layer]:
    """Layers of `module:callable` (e.g. torchvision.models:resnet50), built with no arguments
    (random weights: only shapes matter) and traced on zeros of `input_shape`."""
    import torch
    model = model_factory(spec)().eval()
    with torch.no_grad():
        return layers_from_torch(model, torch.zeros(*[int(d) for d in input_shape]))
