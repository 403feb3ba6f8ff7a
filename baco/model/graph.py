"""Graph capture: a PyTorch model, exported with `torch.export` (an ATen graph with shapes and
the model's source stack traces), walked into a small graph of the operators baco runs.

The graph is still float here (baco.model.quantize makes it int8). Its tensors are activations
laid out as they will live in memory: a 4-D activation is NHWC ("NHWC" layout) from the input
on, so no transpose runs between Gemmini layers; other tensors keep torch's order ("torch"
layout). Fusions that change what runs are made while walking, each only when the fused
tensor has no other reader:

  * batch_norm after a convolution is folded into its weights and bias
    (torch.nn.utils.fusion.fuse_conv_bn_weights);
  * relu after a conv, linear or residual add becomes the kernel's ReLU on the accumulator
    read; relu6 (hardtanh 0..6) too: its output scale is 6/127 when the calibrated range reaches
    6, so that ReLU plus int8 saturation at 127 is exactly min(max(x, 0), 6) on the quantised
    grid, else the calibrated scale (whose largest value, 127 * scale, is below 6: there ReLU6
    and ReLU agree on every representable value and saturation is the usual int8 clipping);
  * max_pool2d after conv + ReLU becomes the conv's pooled mvout (baco.kernels.pool) when
    config_st can express it (kernel/stride/padding <= 3, square, no dilation, floor mode):
    Gemmini pads with zeros, equal to torch's -inf padding only after a ReLU. Not for the convs
    `capture` is told to leave unfused (a design's unfused "pool" edges, by module path): their
    max pool is a CPU op.

Anything else that has no operator here is one CompilationError naming the ATen operator and
the model's source line (the innermost frame of the node's stack trace outside torch).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from baco.errors import CompilationError
from baco.gemmini.arith import pool_field_problems

RELU6_SCALE = 6 / 127      # 127 * scale = 6: saturation at 127 is the upper clamp of relu6



@dataclass
class Tensor:
    """An activation: `shape` as stored (NHWC for layout "NHWC", torch's dims in the order `perm`
    for layout "permuted"), `torch_shape` as torch sees it, `node` the exported node whose value
    it is (calibration observes that node)."""
    name: str
    shape: tuple
    layout: str                       # "NHWC" | "torch" | "permuted"
    torch_shape: tuple
    node: str
    clamp_scale: float | None = None  # relu6: the scale whose saturation is the clamp at 6
    scale: float | None = None        # set by quantisation
    perm: tuple | None = None         # layout "permuted": stored = the torch value permuted by perm
    dtype: str = "int8"               # "int32": token ids (an input only embeddings read, stored as int32; no scale)
    bound: int | None = None          # token ids: every id must be in [0, bound) (the smallest table's rows)

    @property
    def order(self) -> tuple:
        """The stored tensor is the torch value transposed by this permutation."""
        if self.layout == "NHWC":
            return (0, 2, 3, 1)
        return self.perm if self.layout == "permuted" else tuple(range(len(self.torch_shape)))


@dataclass
class View:
    """A value that is a strided view of a stored tensor (`base`): `meta` is a meta-device tensor
    whose shape is the value's torch shape and whose strides and storage offset (in elements)
    address the base's buffer. Transposes, permutes, selects, slices and reshapes move views,
    not data; a consumer that needs a stored tensor materialises one (_Walker.materialise)."""
    base: str
    meta: object
    node: str

    @property
    def shape(self) -> tuple:
        return tuple(self.meta.shape)

    @property
    def strides(self) -> tuple:
        return tuple(self.meta.stride())

    @property
    def offset(self) -> int:
        return int(self.meta.storage_offset())


def inverse(perm) -> tuple:
    return tuple(sorted(range(len(perm)), key=lambda i: perm[i]))


def is_dense(shape, strides) -> bool:
    """Row-major contiguous (the strides of size-1 dims do not matter)."""
    expected = 1
    for d, st in reversed(list(zip(shape, strides))):
        if d != 1 and st != expected:
            return False
        expected *= d
    return True


@dataclass
class Op:
    """One operator: `kind`, input and output tensor names, float attributes (`attrs`: weights as
    torch tensors, strides...), where it comes from (`source`: file:line of the model), and
    after quantisation its int8 parameters (`q`)."""
    kind: str
    inputs: list
    output: str
    attrs: dict
    source: str
    q: dict = field(default_factory=dict)


@dataclass
class Graph:
    tensors: dict
    ops: list
    input: str
    output: str

    def producer(self, tensor: str) -> Op | None:
        return next((op for op in self.ops if op.output == tensor), None)

    def summary(self) -> str:
        """One line per op: kind, output shape, scale, where it came from."""
        lines = []
        for op in self.ops:
            t = self.tensors[op.output]
            extra = [k for k in ("relu", "pool") if op.attrs.get(k)]
            lines.append(f"{op.kind:<18} {str(t.shape):<20} {t.layout:<5} scale={t.scale!s:<24} "
                         f"{' '.join(extra):<10} {op.source}")
        return "\n".join(lines)


def source_of(node) -> tuple[str | None, int | None]:
    """(file, line) of the model code behind an exported node: the innermost frame of its
    stack trace outside torch itself (else the innermost frame)."""
    frames = re.findall(r'File "([^"]+)", line (\d+)', node.meta.get("stack_trace") or "")
    torch_dir = str(Path(__import__("torch").__file__).parent)
    for path, line in reversed(frames):
        if not path.startswith(torch_dir):
            return path, int(line)
    return (frames[-1][0], int(frames[-1][1])) if frames else (None, None)


def located_text(node) -> str:
    """`module.path (Class) at file:line` of an exported node (the module it was called in, from
    its nn_module_stack, and source_of's line)."""
    path, line = source_of(node)
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    where = f"{path}:{line}" if path else node.name
    if not stack:
        return where
    module, cls = stack[-1]
    cls = cls.__name__ if isinstance(cls, type) else str(cls).rsplit(".", 1)[-1].strip("'>")
    return f"{module.removeprefix('L__self__').strip('.') or 'model'} ({cls}) at {where}"


def module_path(op: Op) -> str:
    """The module an op comes from (located_text's first word): the name the fusion graph
    (baco.tuner.fusion) gives its layer."""
    return op.source.split(" (")[0].split(" at ")[0]


# aten operators a model's code may write as a Python operator (`x * y` is aten.mul)
OPERATOR_NODES = {"add": "Add", "sub": "Sub", "rsub": "Sub", "mul": "Mult", "div": "Div", "floor_divide": "FloorDiv",
                  "remainder": "Mod", "pow": "Pow", "matmul": "MatMult", "mm": "MatMult", "bmm": "MatMult"}


def source_column(node, path: str | None, line: int | None) -> int | None:
    """1-based column of the call behind an exported node in its source line: where the
    operator's name (`cumsum` of aten.cumsum.default) is called, else the Python operator that
    stands for it (the `*` of `x * y` for aten.mul; of several on the line, the one evaluated
    as this node: the graph keeps Python's order), else where the code starts."""
    import linecache
    text = linecache.getline(path, line) if path and line else ""
    if not text.strip():
        return None
    name = operator_name(node)
    m = re.search(rf"[\w.]*\b{re.escape(name)}\b", text) if name else None
    if m:
        return m.start() + 1
    earlier = 0
    for other in node.graph.nodes:       # the same operator from the same line, before this node
        if other is node:
            break
        earlier += other.op == "call_function" and operator_name(other) == name and source_of(other) == (path, line)
    cols = operator_columns(linecache.getlines(path), line, OPERATOR_NODES.get(name.rstrip("_")))
    col = cols[earlier % len(cols)] if cols else len(text) - len(text.lstrip())
    return col + 1


def operator_name(node) -> str:
    """`mul` of aten.mul.Tensor."""
    return str(getattr(node.target, "__name__", node.target)).split(".")[0]


def operator_columns(lines: list[str], line: int, op: str | None) -> list[int]:
    """0-based columns of the `op` operators (an ast operator class name: "Mult") of the binary
    and augmented operations written on `line` of the source `lines`, in evaluation order."""
    if op is None:
        return []
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return []
    text, found = lines[line - 1], []

    def visit(n):            # post-order: operands before their operation, as Python evaluates
        for child in ast.iter_child_nodes(n):
            visit(child)
        if isinstance(n, ast.BinOp) and type(n.op).__name__ == op and n.left.end_lineno == line:
            start, stop = n.left.end_col_offset, n.right.col_offset if n.right.lineno == line else len(text)
        elif isinstance(n, ast.AugAssign) and type(n.op).__name__ == op and n.target.end_lineno == line:
            start, stop = n.target.end_col_offset, len(text)
        else:
            return
        symbol = re.compile(r"\*\*|//|[-+*/%@]").search(text, start, stop)
        if symbol:
            found.append(symbol.start())
    visit(tree)
    return found


def unsupported(node, why: str) -> CompilationError:
    path, line = source_of(node)
    return CompilationError(f"{node.target} ({node.name}): {why}", path, line,
                            source_column(node, path, line))


def pair(v) -> tuple[int, int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return (int(v[0]), int(v[-1]))


def nhwc(shape) -> tuple:
    n, c, h, w = shape
    return (n, h, w, c)


class _Walker:
    """The walk of one exported program (`capture`)."""

    def __init__(self, ep, unfused_pools=frozenset()):
        import torch
        self.torch = torch
        self.ep = ep
        self.unfused_pools = unfused_pools     # module paths of the convs whose max pool runs on the CPU
        sig = ep.graph_signature
        self.consts = {}
        for name, key in {**sig.inputs_to_parameters, **sig.inputs_to_buffers}.items():
            self.consts[name] = ep.state_dict[key] if key in ep.state_dict else ep.constants[key]
        for name, key in getattr(sig, "inputs_to_lifted_tensor_constants", {}).items():
            self.consts[name] = ep.constants[key]
        self.tensors, self.ops, self.env = {}, [], {}
        self.views = {}            # node name -> View (a value no op has stored yet)
        self.unbound = {}          # an unbind node's name -> the View of each part
        self.materialised = {}     # (view, stored order) -> the tensor materialise made of it
        self.masked = {}           # node name -> (its unmasked input, bool keep mask): a masked softmax's input
        self.user_inputs = list(sig.user_inputs)

    # -- values ---------------------------------------------------------------------------------
    def const(self, node, arg):
        if not hasattr(arg, "name") or arg.name not in self.consts:
            raise unsupported(node, f"argument {arg} must be a parameter or buffer of the model here")
        return self.consts[arg.name].detach()

    def act(self, node, arg, layout: str | None = None) -> Tensor:
        """The stored tensor of an activation; a view is materialised (in `layout`, "torch" or
        "NHWC"; by default NHWC for an image viewed from an NHWC tensor, else torch's order)."""
        if hasattr(arg, "name") and arg.name in self.views:
            return self.materialise(node, self.views[arg.name], layout)
        if self.is_const(arg) and arg.name not in self.env:
            return self.constant(node, arg)
        if not hasattr(arg, "name") or arg.name not in self.env:
            raise unsupported(node, f"argument {arg} must be an activation (a value computed from the input)")
        return self.tensors[self.env[arg.name]]

    def is_act(self, arg) -> bool:
        return hasattr(arg, "name") and (arg.name in self.env or arg.name in self.views)

    def is_const(self, arg) -> bool:
        return hasattr(arg, "name") and arg.name in self.consts

    def constant(self, node, arg, shape=None) -> Tensor:
        """A parameter or buffer read as an activation (a class token, a position embedding): an
        int8 tensor of its own calibrated scale, linked in as data; with `shape`, broadcast to it
        (its values, so its scale, are the same)."""
        value = self.consts[arg.name].detach().float()
        name = arg.name
        if shape is not None and tuple(value.shape) != tuple(shape):
            value, name = value.expand(shape).contiguous(), f"{arg.name}_{'x'.join(map(str, shape))}"
            if name in self.tensors:
                return self.tensors[name]
        t = Tensor(name, tuple(value.shape), "torch", tuple(value.shape), arg.name)
        self.tensors[t.name] = t
        if name == arg.name:
            self.env[arg.name] = t.name
        self.ops.append(Op("constant", [], t.name, dict(value=value), located_text(node)))
        return t

    # -- views ----------------------------------------------------------------------------------
    def identity(self, t: Tensor) -> View:
        """t's torch value as a view of its own buffer."""
        stored = self.torch.empty(t.shape, dtype=self.torch.int8, device="meta")
        return View(t.name, stored.permute(inverse(t.order)), t.node)

    def view_of(self, node, arg) -> View:
        if hasattr(arg, "name") and arg.name in self.views:
            return self.views[arg.name]
        return self.identity(self.act(node, arg))

    def materialise(self, node, v: View, layout: str | None = None) -> Tensor:
        """A stored tensor holding view v: its base itself, a reshape of it (free) when v's
        elements are the base's buffer in order, a permute of (a reshape of) the base when they
        are all of it in another order, else a strided copy (CPU operators)."""
        base, rank = self.tensors[v.base], len(v.shape)
        if layout is None:
            layout = "NHWC" if rank == 4 and base.layout == "NHWC" else "torch"
        layout = layout if rank == 4 else "torch"
        order = (0, 2, 3, 1) if layout == "NHWC" else tuple(range(rank))
        key = (v.base, v.shape, v.strides, v.offset, layout)
        if key in self.materialised:
            return self.tensors[self.materialised[key]]
        stored = v.meta.permute(order)
        shape, strides = tuple(stored.shape), tuple(stored.stride())
        whole = v.offset == 0 and stored.numel() == base_size(base)
        here = located_text(node)

        def new(kind, src, out_shape, attrs):
            name = f"{v.node}_{kind}"
            while name in self.tensors:
                name += "_"
            out = Tensor(name, out_shape, layout, v.shape, v.node)
            self.tensors[name] = out
            self.ops.append(Op(kind, [src.name], name, attrs, here))
            return out

        if whole and is_dense(shape, strides):
            t = base if shape == tuple(base.shape) and base.layout == layout else \
                new("reshape", base, shape, dict(shape=shape))
        else:
            by_stride = sorted(range(rank), key=lambda i: -strides[i])
            dense = tuple(shape[i] for i in by_stride)
            if whole and is_dense(dense, [strides[i] for i in by_stride]):
                src = base if dense == tuple(base.shape) else new("reshape", base, dense, dict(shape=dense))
                t = new("permute", src, shape, dict(perm=inverse(by_stride)))
            else:
                t = new("strided_copy", base, shape, dict(shape=shape, strides=strides, offset=v.offset))
        self.materialised[key] = t.name
        return t

    def view_op(self, node, fn):
        """The node's value is fn of its input's view (no data moves)."""
        v = self.view_of(node, node.args[0])
        meta = fn(v.meta)
        if tuple(meta.shape) != tuple(node.meta["val"].shape):
            raise unsupported(node, f"the view's shape {tuple(meta.shape)} is not torch's {tuple(node.meta['val'].shape)}")
        self.views[node.name] = View(v.base, meta, node.name)

    def new_tensor(self, node, layout=None, torch_shape=None) -> Tensor:
        torch_shape = tuple(torch_shape or node.meta["val"].shape)
        layout = layout or ("NHWC" if len(torch_shape) == 4 else "torch")
        shape = nhwc(torch_shape) if layout == "NHWC" else torch_shape
        t = Tensor(node.name, shape, layout, torch_shape, node.name)
        self.tensors[t.name] = t
        self.env[node.name] = t.name
        return t

    def emit(self, node, kind, inputs, attrs, layout=None, torch_shape=None) -> Op:
        out = self.new_tensor(node, layout, torch_shape)
        op = Op(kind, [t.name for t in inputs], out.name, attrs, located_text(node))
        self.ops.append(op)
        return op

    def alias(self, node, t: Tensor):
        """The node's value is t (an identity: dropout in eval, contiguous, clone)."""
        self.env[node.name] = t.name

    def fusable(self, t: Tensor, kinds) -> Op | None:
        """The op producing t if it is of `kinds` and t's node has one reader (its value is not
        needed unfused)."""
        op = next((o for o in reversed(self.ops) if o.output == t.name), None)
        if op is None or op.kind not in kinds:
            return None
        node = next(n for n in self.ep.graph.nodes if n.name == t.node)
        return op if len(node.users) == 1 else None

    def retarget(self, node, t: Tensor):
        """t is now the value of `node` (a fused epilogue's output)."""
        t.node = node.name
        self.env[node.name] = t.name

    def as_layout(self, node, t: Tensor, layout: str) -> Tensor:
        """t in `layout`, through a copy (CPU permute) if it is stored otherwise."""
        if t.layout == layout or len(t.torch_shape) != 4:
            return t
        perm = (0, 2, 3, 1) if layout == "NHWC" else (0, 3, 1, 2)
        name = f"{t.name}_{layout.lower()}"
        out = Tensor(name, nhwc(t.torch_shape) if layout == "NHWC" else t.torch_shape, layout, t.torch_shape, t.node)
        self.tensors[name] = out
        self.ops.append(Op("permute", [t.name], name, {"perm": perm, "same_scale": True}, located_text(node)))
        return out

    # -- the walk -------------------------------------------------------------------------------
    def run(self) -> Graph:
        g = self.ep.graph
        if len(self.user_inputs) != 1:
            raise ValueError(f"compile_model takes models of one input tensor, this one has {len(self.user_inputs)}")
        for node in g.nodes:
            if node.op == "placeholder":
                if node.name == self.user_inputs[0]:
                    t = self.new_tensor(node)
                    if not node.meta["val"].is_floating_point():
                        if node.meta["val"].dtype not in (self.torch.int64, self.torch.int32):
                            raise unsupported(node, f"an input of {node.meta['val'].dtype}: the input is a float "
                                              "tensor or token ids (int64 / int32)")
                        t.dtype = "int32"
                    self.input = t.name
            elif node.op == "call_function":
                self.visit(node)
            elif node.op == "output":
                outs = node.args[0]
                if len(outs) != 1 or not self.is_act(outs[0]):
                    raise unsupported(node, "the model must return one tensor computed from its input")
                out = self.act(node, outs[0])
                if out.layout == "permuted":
                    out = self.materialise(node, self.identity(out), "torch")
                self.output = out.name
        return Graph(self.tensors, self.ops, self.input, self.output)

    def visit(self, node):
        name = node.target.__name__ if hasattr(node.target, "__name__") else str(node.target)
        base = name.split(".")[0].rstrip("_")
        if base in CHECKS:                  # torch.export's own assertions on metadata: no value
            return
        if self.foldable(node):
            self.fold(node)
            return
        handler = getattr(self, f"op_{base}", None)
        if handler is None:
            raise unsupported(node, "this operator is not supported by baco.compile_model (no Gemmini kernel "
                              "or CPU operator runs it)")
        handler(node)

    def foldable(self, node) -> bool:
        """Every tensor the node reads is a parameter, a buffer or a folded value (no activation):
        position ids, token types, an all-true attention mask built from them..."""
        from torch.fx.node import map_arg
        reads = []
        map_arg((node.args, node.kwargs), reads.append)
        return all(self.is_const(a) and a.name not in self.env for a in reads)

    def fold(self, node):
        """The node's value, computed once now by torch from its constant arguments (a constant)."""
        from torch.fx.node import map_arg
        if self.torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()):
            raise unsupported(node, "a random value has no operator (folding it would fix one draw)")
        args, kwargs = map_arg((node.args, node.kwargs), lambda a: self.consts[a.name])
        with self.torch.no_grad():
            value = node.target(*args, **kwargs)
        parts = value if isinstance(value, (tuple, list)) else [value]      # a split's parts: getitem folds
        if not parts or not all(isinstance(v, self.torch.Tensor) for v in parts):
            raise unsupported(node, f"a constant of {type(value).__name__}: only tensors are folded")
        self.consts[node.name] = value

    def op_embedding(self, node):
        """Rows of a table picked by the model's token ids (an int64 input): a CPU gather."""
        table = self.const(node, node.args[0])
        ids = node.args[1]
        if not (hasattr(ids, "name") and ids.name in self.env and self.tensors[self.env[ids.name]].dtype == "int32"):
            raise unsupported(node, "embedding is supported of the model's token-id input or of constant ids")
        t = self.tensors[self.env[ids.name]]
        rows = int(table.shape[0])
        t.bound = rows if t.bound is None else min(t.bound, rows)
        self.emit(node, "embedding", [t], dict(weight=table.float()), layout="torch")

    def op_masked_fill(self, node):
        """masked_fill(x, mask, -inf) right before softmax with a constant mask (a causal mask, the
        all-true mask of a model called without one): the softmax's mask (a mask that masks nothing
        makes this an identity)."""
        x, mask, value = node.args[:3]
        if not (self.is_act(x) and self.is_const(mask) and mask.name not in self.env):
            raise unsupported(node, "masked_fill is supported with a constant mask (an attention mask given as a "
                              "model input has no operator: compile_model takes one input)")
        masked = self.consts[mask.name].bool()
        if not bool(masked.any()):
            self.op_contiguous(node)
            return
        if float(value) != float("-inf"):
            raise unsupported(node, f"masked_fill with {value}: only -inf (an attention mask before softmax) has "
                              "an operator")
        self.attention_mask(node, x, ~masked)

    def attention_mask(self, node, x, keep):
        """The node is x with -inf where `keep` (a constant bool, broadcast to x) is false; its one
        reader must be a softmax, which then runs masked."""
        users = list(node.users)
        if len(users) != 1 or getattr(users[0].target, "__name__", "").split(".")[0] not in ("softmax", "_softmax"):
            raise unsupported(node, "an attention mask (-inf where masked) is supported right before a softmax only")
        self.masked[node.name] = (x, keep.expand(tuple(node.meta["val"].shape)))

    def op_conv2d(self, node):
        torch = self.torch
        x, w = self.act(node, node.args[0], "NHWC"), self.const(node, node.args[1])
        a = list(node.args) + [None] * (7 - len(node.args))
        bias = self.const(node, a[2]) if a[2] is not None else torch.zeros(w.shape[0])
        stride, padding, dilation = pair(a[3] or 1), a[4] if a[4] is not None else 0, pair(a[5] or 1)
        if isinstance(padding, str):
            raise unsupported(node, f"padding={padding!r}: give the padding as numbers")
        groups = int(a[6] or 1)
        if len(x.torch_shape) != 4:
            raise unsupported(node, "conv2d needs a 4-D (N, C, H, W) input")
        x = self.as_layout(node, x, "NHWC")
        C, K = x.torch_shape[1], w.shape[0]
        attrs = dict(weight=w.float(), bias=bias.float(), stride=stride, padding=pair(padding), dilation=dilation,
                     relu=False, pool=None)
        if groups == 1:
            self.emit(node, "conv", [x], attrs)
        elif groups == C == K:
            self.emit(node, "depthwise", [x], attrs)
        else:
            # a grouped conv runs as the dense conv whose weights are zero between groups (exact,
            # with groups times the MACs)
            dense = torch.zeros(K, C, *w.shape[2:])
            ci, ko = C // groups, K // groups
            for g in range(groups):
                dense[g * ko:(g + 1) * ko, g * ci:(g + 1) * ci] = w[g * ko:(g + 1) * ko]
            self.emit(node, "conv", [x], dict(attrs, weight=dense, groups=groups))

    def op_batch_norm(self, node):
        from torch.nn.utils.fusion import fuse_conv_bn_weights
        x = self.act(node, node.args[0])
        weight, bias, mean, var = (self.const(node, a) if a is not None else None for a in node.args[1:5])
        training, eps = node.args[5], node.args[7]
        if training:
            raise unsupported(node, "batch_norm in training mode: call model.eval() first")
        conv = self.fusable(x, ("conv", "depthwise"))
        if conv is None or conv.attrs["relu"]:
            raise unsupported(node, "batch_norm is supported folded into the convolution before it (whose "
                              "output nothing else reads)")
        K = conv.attrs["weight"].shape[0]
        ones, zeros = self.torch.ones(K), self.torch.zeros(K)
        w, b = fuse_conv_bn_weights(conv.attrs["weight"], conv.attrs["bias"], mean, var, eps,
                                    ones if weight is None else weight, zeros if bias is None else bias)
        conv.attrs.update(weight=w.detach(), bias=b.detach())
        self.retarget(node, x)

    def activation(self, node, fn, **params):
        x = self.act(node, node.args[0])
        producer = self.fusable(x, ("conv", "depthwise", "linear", "add")) if fn in ("relu", "relu6") else None
        if producer is not None and not producer.attrs["relu"] and not producer.attrs.get("pool"):
            producer.attrs["relu"] = True
            if fn == "relu6":
                x.clamp_scale = RELU6_SCALE
            self.retarget(node, x)
            return
        self.emit(node, "lut", [x], dict(fn="hardtanh" if fn == "relu6" else fn, **params), layout=x.layout)

    def op_relu(self, node):
        self.activation(node, "relu")

    def op_hardtanh(self, node):
        lo, hi = (float(v) for v in (list(node.args[1:3]) + [-1.0, 1.0][len(node.args) - 1:])[:2])
        if (lo, hi) == (0.0, 6.0):
            self.activation(node, "relu6", min_val=lo, max_val=hi)
        else:
            self.activation(node, "hardtanh", min_val=lo, max_val=hi)

    def op_relu6(self, node):
        self.activation(node, "relu6", min_val=0.0, max_val=6.0)

    def op_hardswish(self, node):
        self.activation(node, "hardswish")

    def op_hardsigmoid(self, node):
        self.activation(node, "hardsigmoid")

    def op_sigmoid(self, node):
        self.activation(node, "sigmoid")

    def op_silu(self, node):
        self.activation(node, "silu")

    def op_tanh(self, node):
        self.activation(node, "tanh")

    def op_gelu(self, node):
        approximate = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
        self.activation(node, "gelu", approximate=approximate)

    def op_max_pool2d(self, node):
        x = self.act(node, node.args[0], "NHWC")
        a = list(node.args) + [None] * (6 - len(node.args))
        kernel = pair(a[1])
        stride = pair(a[2]) if a[2] else kernel
        padding, dilation, ceil_mode = pair(a[3] or 0), pair(a[4] or 1), bool(a[5])
        conv = self.fusable(x, ("conv",))
        if (conv is not None and conv.attrs["relu"] and not conv.attrs["pool"]
                and module_path(conv) not in self.unfused_pools
                and kernel[0] == kernel[1] and stride[0] == stride[1] and padding[0] == padding[1]
                and dilation == (1, 1) and not ceil_mode
                and not pool_field_problems(kernel[0], x.shape[2], kernel[0], stride[0], 0, padding[0])):
            conv.attrs["pool"] = dict(kernel=kernel[0], stride=stride[0], padding=padding[0])
            out = node.meta["val"].shape
            x.torch_shape, x.shape = tuple(out), nhwc(out)
            self.retarget(node, x)
            return
        x = self.as_layout(node, x, "NHWC")
        self.emit(node, "max_pool", [x], dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation,
                                              ceil_mode=ceil_mode))

    def op_avg_pool2d(self, node):
        x = self.as_layout(node, self.act(node, node.args[0], "NHWC"), "NHWC")
        a = list(node.args) + [None] * (7 - len(node.args))
        kernel = pair(a[1])
        if a[6] is not None:
            raise unsupported(node, "avg_pool2d with divisor_override has no operator")
        self.emit(node, "avg_pool", [x], dict(kernel=kernel, stride=pair(a[2]) if a[2] else kernel,
                                              padding=pair(a[3] or 0), ceil_mode=bool(a[4]),
                                              count_include_pad=True if a[5] is None else bool(a[5])))

    def op_adaptive_avg_pool2d(self, node):
        x = self.as_layout(node, self.act(node, node.args[0], "NHWC"), "NHWC")
        self.emit(node, "adaptive_avg_pool", [x], dict(output_size=tuple(node.meta["val"].shape[2:])))

    def op_softmax(self, node):
        arg, keep = node.args[0], None
        if hasattr(arg, "name") and arg.name in self.masked:
            arg, keep = self.masked[arg.name]
        x = self.act(node, arg, "torch")
        dim = int(node.args[1]) % len(x.torch_shape)
        if dim != len(x.torch_shape) - 1:
            raise unsupported(node, "softmax is supported over the last dim")
        x = self.as_layout(node, x, "torch")
        attrs = {}
        if keep is not None:
            rows = keep.reshape(-1, keep.shape[-1]).numpy()
            if not rows.any(axis=1).all():
                raise unsupported(node, "the attention mask masks every value of a row (torch's softmax gives NaN)")
            attrs["keep"] = periodic_rows(rows)
        self.emit(node, "softmax", [x], attrs, layout="torch")

    def op_layer_norm(self, node):
        x = self.as_layout(node, self.act(node, node.args[0], "torch"), "torch")
        a = list(node.args) + [None] * (5 - len(node.args))
        cols = x.torch_shape[-1]
        if tuple(a[1]) != (cols,):
            raise unsupported(node, f"layer_norm over {tuple(a[1])}: only the last dim ({cols}) is supported")
        torch = self.torch
        gamma = self.const(node, a[2]).float() if a[2] is not None else torch.ones(cols)
        beta = self.const(node, a[3]).float() if a[3] is not None else torch.zeros(cols)
        self.emit(node, "layernorm", [x], dict(gamma=gamma, beta=beta, eps=float(a[4] if a[4] is not None else 1e-5)),
                  layout="torch")

    def op_mean(self, node):
        """The mean over H and W of an image: a global average pool (then a view without keepdim)."""
        x = self.act(node, node.args[0])
        dims = sorted(int(d) % 4 for d in node.args[1]) if len(node.args) > 1 else None
        if len(x.torch_shape) != 4 or dims != [2, 3]:
            raise unsupported(node, "mean is supported over the two spatial dims of an (N, C, H, W) image")
        x = self.as_layout(node, x, "NHWC")
        n, c = x.torch_shape[:2]
        keepdim = bool(node.args[2]) if len(node.args) > 2 else bool(node.kwargs.get("keepdim", False))
        if keepdim:
            self.emit(node, "adaptive_avg_pool", [x], dict(output_size=(1, 1)))
            return
        pooled = Tensor(f"{node.name}_pooled", (n, 1, 1, c), "NHWC", (n, c, 1, 1), node.name)
        self.tensors[pooled.name] = pooled
        self.ops.append(Op("adaptive_avg_pool", [x.name], pooled.name, dict(output_size=(1, 1)), located_text(node)))
        self.emit(node, "reshape", [pooled], dict(shape=(n, c)), layout="torch", torch_shape=(n, c))

    def op_linear(self, node):
        x, w = self.act(node, node.args[0], "torch"), self.const(node, node.args[1])
        bias = self.const(node, node.args[2]) if len(node.args) > 2 and node.args[2] is not None \
            else self.torch.zeros(w.shape[0])
        x = self.as_layout(node, x, "torch")
        op = self.emit(node, "linear", [x], dict(weight=w.float(), bias=bias.float(), relu=False))
        owner = self.param_module(node, node.args[1])
        if owner is not None:
            op.source = f"{owner} (Linear) at {op.source.split(' at ', 1)[-1]}"

    def param_module(self, node, arg) -> str | None:
        """The module path of the Linear whose `.weight` parameter `arg` is, where that Linear lies
        below the module the node was called in (MultiheadAttention calls its out_proj's weight
        functionally: the op is then named by its out_proj, as the fusion graph names that layer,
        not by the attention whose QKV projection shares its stack); else None."""
        stack = list((node.meta.get("nn_module_stack") or {}).values())
        fqn = self.ep.graph_signature.inputs_to_parameters.get(getattr(arg, "name", None), "")
        if not stack or not fqn.endswith(".weight"):
            return None
        caller, owner = stack[-1][0].removeprefix("L__self__").strip("."), fqn.removesuffix(".weight")
        return owner if caller and owner.startswith(caller + ".") else None

    def op_mm(self, node):
        if not self.is_act(node.args[1]):   # x @ W with a constant W: a linear layer without bias
            a, w = self.act(node, node.args[0], "torch"), self.const(node, node.args[1])
            self.emit(node, "linear", [a], dict(weight=w.float().T.contiguous(), bias=self.torch.zeros(w.shape[-1]),
                                                relu=False))
            return
        # two activations: one GEMM per batch, each operand read in place where it is a
        # row-major or a column-major (transposed: Kᵀ of attention scores) matrix of its buffer
        a, b = (self.matrix_view(node, v) for v in node.args[:2])
        if column_major(a) and column_major(b):     # the array transposes one operand
            a = self.identity(self.materialise(node, a, "torch"))
        if a.shape[:-2] != b.shape[:-2]:
            raise unsupported(node, f"matmul of shapes {a.shape} and {b.shape}: broadcasting batches has no operator")
        attrs = dict(a_view=(a.shape, a.strides, a.offset), b_view=(b.shape, b.strides, b.offset))
        torch_shape = tuple(node.meta["val"].shape)
        order = self.user_order(node, len(torch_shape))
        if order is None:
            self.emit(node, "matmul", [self.tensors[a.base], self.tensors[b.base]], attrs, layout="torch")
            return
        # stored in the order its permuting reader wants (the heads' outputs straight into the
        # output projection's rows): that permute is then a view
        out = Tensor(node.name, tuple(torch_shape[i] for i in order), "permuted", torch_shape, node.name, perm=order)
        self.tensors[out.name] = out
        self.ops.append(Op("matmul", [a.base, b.base], out.name, attrs, located_text(node)))
        self.views[node.name] = self.identity(out)

    op_bmm = op_mm
    op_matmul = op_mm

    def matrix_view(self, node, arg) -> View:
        """arg as a batch of matrices a GEMM reads in place (unit stride along one of the last two
        dims), materialised in torch's order if it is not."""
        v = self.view_of(node, arg)
        if len(v.shape) < 2:
            raise unsupported(node, f"matmul of a {len(v.shape)}-D activation: only matrices (and batches of them)")
        (rows, cols), (sr, sc) = v.shape[-2:], v.strides[-2:]
        if not (cols == 1 or sc == 1 or rows == 1 or sr == 1):
            v = self.identity(self.materialise(node, v, "torch"))
        return v

    def user_order(self, node, rank) -> tuple | None:
        """The permutation of the node's one reader if that is a permute/transpose keeping the last
        dim last (a GEMM writes rows), else None."""
        shape = tuple(node.meta["val"].shape)
        while True:           # through identities (a view to the same shape, a clone) to the reader
            users = list(node.users)
            if len(users) != 1 or users[0].op != "call_function":
                return None
            user = users[0]
            name = getattr(user.target, "__name__", str(user.target)).split(".")[0]
            if name not in IDENTITIES or tuple(user.meta["val"].shape) != shape:
                break
            node = user
        if name == "permute":
            perm = tuple(int(d) % rank for d in user.args[1])
        elif name == "transpose":
            d0, d1 = (int(d) % rank for d in user.args[1:3])
            perm = list(range(rank))
            perm[d0], perm[d1] = perm[d1], perm[d0]
            perm = tuple(perm)
        else:
            return None
        return perm if perm[-1] == rank - 1 and perm != tuple(range(rank)) else None

    def op_add(self, node):
        operands = node.args[:2]
        if len(operands) < 2 or not any(self.is_act(v) for v in operands) \
                or not all(self.is_act(v) or self.is_const(v) for v in operands):
            raise unsupported(node, "add is supported between two activations (a residual add) or an activation "
                              "and a constant of its shape or broadcast to it (a position embedding)")
        if node.kwargs.get("alpha", 1) != 1:
            raise unsupported(node, "add with alpha != 1 has no operator")
        const = [v for v in operands if not self.is_act(v)]
        if const:                  # an additive attention mask: 0 where kept, -inf where masked
            mask = self.consts[const[0].name]
            if mask.is_floating_point() and bool(((mask == 0) | (mask == float("-inf"))).all()):
                x = next(v for v in operands if self.is_act(v))
                if not bool((mask == float("-inf")).any()):
                    if x.name in self.views:
                        self.views[node.name] = View(self.views[x.name].base, self.views[x.name].meta, node.name)
                    else:
                        self.alias(node, self.act(node, x))
                    return
                self.attention_mask(node, x, mask == 0)
                return
            shape = tuple(node.meta["val"].shape)
            if tuple(mask.shape) != shape and tuple(self.torch.broadcast_shapes(tuple(mask.shape), shape)) == shape:
                # a constant broadcast over the activation (a bias per position...): stored broadcast
                x = self.act(node, next(v for v in operands if self.is_act(v)))
                if x.torch_shape == shape:
                    c = self.as_layout(node, self.constant(node, const[0], shape), x.layout)
                    self.emit(node, "add", [x, c], dict(relu=False), layout=x.layout)
                    return
        a, b = (self.act(node, v) for v in node.args[:2])
        if a.torch_shape != b.torch_shape:
            raise unsupported(node, f"add of shapes {a.torch_shape} and {b.torch_shape} (broadcasting) has no "
                              "Gemmini operator")
        b = self.as_layout(node, b, a.layout)
        self.emit(node, "add", [a, b], dict(relu=False), layout=a.layout)

    def scalar_multiple(self, node, factor):
        """x * factor for a positive number: the same int8 values read at factor times the scale."""
        if factor <= 0:
            raise unsupported(node, f"multiplying by {factor}: only positive constant factors are supported")
        x = self.act(node, node.args[0])
        self.emit(node, "mul_scalar", [x], dict(factor=float(factor)), layout=x.layout)

    def op_div(self, node):
        if not (self.is_act(node.args[0]) and isinstance(node.args[1], (int, float))) or node.kwargs:
            raise unsupported(node, "div is supported of an activation by a positive number")
        self.scalar_multiple(node, 1.0 / node.args[1])

    def op_mul(self, node):
        if self.is_act(node.args[0]) and isinstance(node.args[1], (int, float)):
            self.scalar_multiple(node, node.args[1])
            return
        if not (self.is_act(node.args[0]) and len(node.args) > 1 and self.is_act(node.args[1])):
            raise unsupported(node, "mul is supported as a squeeze-excite scaling of two activations")
        x, s = (self.act(node, v) for v in node.args[:2])
        if len(x.torch_shape) != 4 or len(s.torch_shape) != 4 or (1, 1) not in (x.torch_shape[2:], s.torch_shape[2:]):
            raise unsupported(node, f"mul of shapes {x.torch_shape} and {s.torch_shape}: only (N,C,H,W) * (N,C,1,1) "
                              "(squeeze-excite) has an operator")
        if s.torch_shape[2:] != (1, 1):
            x, s = s, x
        if s.torch_shape[:2] != x.torch_shape[:2]:
            raise unsupported(node, f"mul of shapes {x.torch_shape} and {s.torch_shape}: channels differ")
        self.emit(node, "mul_channel", [self.as_layout(node, x, "NHWC"), s], {})

    def op_view(self, node):
        """A view (or reshape) moves no data when torch could view the value; else the input is
        first stored in torch's order (a copy) and viewed then."""
        v = self.view_of(node, node.args[0])
        shape = tuple(node.meta["val"].shape)
        try:
            meta = v.meta.view(shape)
        except RuntimeError:
            v = self.identity(self.materialise(node, v, "torch"))
            meta = v.meta.view(shape)
        self.views[node.name] = View(v.base, meta, node.name)

    op_reshape = op_view
    op_flatten = op_view
    op__unsafe_view = op_view

    def op_unsqueeze(self, node):
        self.view_op(node, lambda m: m.unsqueeze(int(node.args[1])))

    def op_squeeze(self, node):
        self.view_op(node, lambda m: node.target(m, *node.args[1:]))

    def op_permute(self, node):
        self.view_op(node, lambda m: m.permute(*[int(d) for d in node.args[1]]))

    def op_transpose(self, node):
        self.view_op(node, lambda m: m.transpose(int(node.args[1]), int(node.args[2])))

    def op_t(self, node):
        self.view_op(node, lambda m: m.t())

    def op_select(self, node):
        self.view_op(node, lambda m: m.select(int(node.args[1]), int(node.args[2])))

    def op_unflatten(self, node):
        self.view_op(node, lambda m: m.unflatten(int(node.args[1]), [int(d) for d in node.args[2]]))

    def op_slice(self, node):
        self.view_op(node, lambda m: node.target(m, *node.args[1:]))

    def op_expand(self, node):
        self.view_op(node, lambda m: m.expand(*[int(d) for d in node.args[1]]))

    def op_unbind(self, node):
        v = self.view_of(node, node.args[0])
        dim = int(node.args[1]) if len(node.args) > 1 else 0
        self.unbound[node.name] = [View(v.base, m, node.name) for m in v.meta.unbind(dim)]

    def op_getitem(self, node):
        parts = self.unbound.get(getattr(node.args[0], "name", None))
        if parts is None:
            raise unsupported(node, "indexing is supported into the parts of an unbind")
        part = parts[int(node.args[1])]
        self.views[node.name] = View(part.base, part.meta, node.name)

    def op_cat(self, node):
        parts = [self.act(node, t) for t in node.args[0]]
        dim = int(node.args[1]) if len(node.args) > 1 else 0
        rank = len(parts[0].torch_shape)
        dim %= rank
        layout = parts[0].layout
        parts = [self.as_layout(node, p, layout) for p in parts]
        axis = (0, 3, 1, 2)[dim] if layout == "NHWC" else dim
        self.emit(node, "cat", parts, dict(axis=axis), layout=layout)

    def op_dropout(self, node):
        if len(node.args) > 2 and node.args[2]:
            raise unsupported(node, "dropout in training mode: call model.eval() first")
        self.op_contiguous(node)

    def op_contiguous(self, node):
        """An identity (contiguous, clone, dropout in eval): a view stays a view."""
        if node.args[0].name in self.views:
            self.view_op(node, lambda m: m)
        else:
            self.alias(node, self.act(node, node.args[0]))

    op_clone = op_contiguous
    op_alias = op_contiguous
    op_detach = op_contiguous


CHECKS = ("_assert_tensor_metadata", "_assert_scalar", "sym_constrain_range_for_size")
IDENTITIES = ("view", "reshape", "_unsafe_view", "clone", "contiguous", "alias", "detach")


def periodic_rows(rows):
    """The shortest leading block of rows (P rows, P dividing their count) whose repetition is `rows`
    (a mask broadcast over batches and heads stores one period)."""
    n = rows.shape[0]
    for p in range(1, n + 1):
        if n % p == 0 and (rows.reshape(n // p, p, -1) == rows[None, :p]).all():
            return rows[:p].copy()


def base_size(t: Tensor) -> int:
    size = 1
    for d in t.shape:
        size *= int(d)
    return size


def column_major(v: View) -> bool:
    """Each matrix of the batch is read transposed (unit stride down its columns)."""
    cols, sc = v.shape[-1], v.strides[-1]
    return cols > 1 and sc != 1


def _attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """scaled_dot_product_attention as the operators baco runs (matmul, a scalar multiple,
    softmax, matmul), so that each intermediate is a node the observers calibrate; a mask, a
    causal mask or dropout stay in the graph as the operators they are."""
    import math

    import torch
    if enable_gqa and k.shape[-3] != q.shape[-3]:      # grouped-query: each K/V head serves a group of Q heads
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-2, -1)) * s
    if is_causal:
        causal = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    probs = torch.softmax(scores, dim=-1)
    if dropout_p:
        probs = torch.dropout(probs, dropout_p, True)
    return torch.matmul(probs, v)


def export(model, example_input):
    """torch.export of model in eval mode on (example_input,)."""
    import torch
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    if isinstance(example_input, (tuple, list)):
        raise TypeError(f"example_input must be one torch.Tensor: compile_model takes models of one input, not "
                        f"{len(example_input)} (an attention mask as a second input has no operator)")
    if not isinstance(example_input, torch.Tensor):
        raise TypeError(f"example_input must be a torch.Tensor, not {type(example_input).__name__}")
    # the compiled model quantises a float input, or reads token ids (int64 / int32) into embeddings
    if not (example_input.is_floating_point() or example_input.dtype in (torch.int64, torch.int32)):
        raise TypeError(f"example_input must be a float tensor or token ids (int64 / int32), not a "
                        f"{example_input.dtype} tensor")
    model = model.eval()
    with torch.no_grad():
        try:       # the model's own error on this input names the input, not an export internal
            model(example_input)
        except Exception as e:     # noqa: BLE001 — any failure of the user's forward is reported as one
            raise ValueError(f"example_input ({example_input.dtype} of shape {tuple(example_input.shape)}): the model "
                             f"fails on it: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
        ep = torch.export.export(model, (example_input,))
    sdpa = torch.ops.aten.scaled_dot_product_attention.default
    if any(n.target is sdpa for n in ep.graph.nodes):
        ep = ep.run_decompositions({sdpa: _attention})
    return ep


def capture(model, example_input, unfused_pools=frozenset()):
    """(Graph, ExportedProgram) of `model` on `example_input`; the max pool after a ReLU'd conv of
    a module path in `unfused_pools` stays a CPU op (not the conv's pooled store)."""
    if isinstance(unfused_pools, str) or not all(isinstance(m, str) for m in unfused_pools):
        raise TypeError(f"unfused_pools must be a collection of module paths (str), not {unfused_pools!r}")
    ep = export(model, example_input)
    return _Walker(ep, frozenset(unfused_pools)).run(), ep


__all__ = ["Tensor", "View", "Op", "Graph", "capture", "export", "source_of", "RELU6_SCALE", "nhwc", "module_path"]
