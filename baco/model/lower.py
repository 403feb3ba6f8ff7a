"""Lowering a quantised graph to a list of steps over named buffers.

Each Gemmini op becomes one or more prepared launches of a shipped block kernel
(baco.kernels.launch.KernelLaunch: kernel, grid, runtime arguments, compile options), kept as
data so that the program linker can turn the whole list into one ELF:

  conv            baco.kernels.conv.conv2d_launch (a 1x1 stride-1 conv runs the GEMM kernel)
  conv + pool     baco.kernels.pool.ConvPoolLaunch (max-pool on the accumulator's way out)
  depthwise       baco.kernels.depthwise.depthwise_launch (diagonal weight tiles, DIM channels a program)
  linear          baco.kernels.matmul.matmul_launch with its int32 bias; the weight stored with zero
                  rows up to padded_rows(K, DIM), so a ragged K step is one LOOP_WS (baco.passes.loop_ws)
  matmul (bmm)    one matmul_launch per batch (both operands activations, read in place: row-major
                  with any row stride or column-major, i.e. transposed by the array)
  add             baco.kernels.resadd.resadd_launches (the two operands summed in the accumulator, read
                  as DIM rows whatever the image's shape: resadd.default_views, a launch of fewer
                  than DIM elements after them where the elements are not whole DIM rows)
  fused pair      baco.kernels.fused.gemm_chain_launch: linear -> linear or 1x1 -> 1x1 conv, the
                  hidden layer kept in the accumulator (one step; the intermediate has no buffer);
                  gemm_resadd_launch: a linear or 1x1 conv and the residual add reading it;
                  baco.kernels.fused_dwpw.dw_pw_launch: a depthwise conv and the 1x1 conv reading it

CPU ops become calls of baco.model.cpu_ops kernels (an embedding's int8 table a weight buffer); reshape/flatten are views of their input's
buffer (no step); a constant (a parameter read as an activation) is read-only data (no step). Buffers: every activation tensor by name, weights and biases as
"<tensor>.weight" / "<tensor>.bias"; arrays the launches take are these buffers or views of
them (`Lowered.locate`).

Schedules: the default schedule of each kernel on the default GemminiConfig, or, with a design (a
`baco tune --out DIR` result), the design's GemminiConfig for every layer and the tuned schedule of
the design layer of the same shape (baco.problem.layer.Layer key: convolutions, depthwise
convolutions and linear layers); other layers keep the kernel's default schedule on that config.

Fusion: a design's fused edges (result.json's "fusion", `baco tune --fusion on`) name their layers
by module path, which is where each op comes from (Op.source). Each fused chain or residual-add
edge becomes one fused step with the blocks the edge records ("blocks": the tuner's choice for a
producer the design runs at its kernel's default program), else the producer's tuned blocks, else
the kernels' default blocks; an edge the compiler cannot run as
one program is a ValueError naming it, never a silently unfused pair. A max pool after a ReLU'd
conv is fused by the capture (the conv's pooled store) unless the design's "pool" edge of that conv
is unfused (`unfused_pools`, which compile_model hands the capture): then the conv stores its whole
output and the max pool runs on the CPU (cpu_ops.max_pool2d); lower checks that it does.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from numpy.lib.array_utils import byte_bounds

from baco.gemmini.arith import pooled_size
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, padded_rows
from baco.kernels.conv import conv2d_launch, output_size
from baco.kernels.depthwise import depthwise_launch
from baco.kernels.fused import gemm_chain_launch, gemm_resadd_launch
from baco.kernels.fused_dwpw import dw_pw_launch
from baco.kernels.launch import KernelLaunch
from baco.kernels.matmul import matmul_launch
from baco.kernels.pool import ConvPoolLaunch, pool_schedule_from_conv
from baco.kernels.resadd import resadd_launches
from baco.model import cpu_ops
from baco.model.graph import Graph, Op, inverse, module_path
from baco.problem.layer import Layer, symmetric_padding
from baco.tuner.fusion import EDGE_BLOCKS
from baco.tuner.workloads import gemm

GEMMINI_OPS = ("conv", "depthwise", "linear", "matmul", "add")
FUSED_CHAIN_KINDS = ("gemm-gemm", "pw-pw", "dw-pw")     # the fusion edges (baco.tuner.fusion) lowered
FUSED_KINDS = FUSED_CHAIN_KINDS + ("resadd",)           # here, each as its fused kernel
VIEW_OPS = ("reshape", "mul_scalar")      # the output is the input's buffer (viewed)


@dataclass
class GemminiStep:
    """A Gemmini op: its launches, run in order."""
    op: Op
    launches: list
    layer: Layer | None = None           # the tuner's layer of this op (conv/depthwise/linear), for design matching
    schedule_source: str = "default"     # "tuned" (from the design) | "default"
    fused: list = field(default_factory=list)    # a fused step's ops, in order (op is the last)

    def run(self, target="sim") -> list:
        return [launch.run(target) for launch in self.launches]


@dataclass
class CpuStep:
    """A CPU op: a cpu_ops kernel called on its arrays (inputs first, outputs last)."""
    op: Op
    kernel: object
    arrays: list

    def run(self, target="sim"):
        if target != "sim":
            raise ValueError(f"a CPU step runs on the host JIT here (target 'sim'), not {target!r}")
        self.kernel(*self.arrays)


@dataclass
class Lowered:
    """Steps over named buffers: `buffers` name -> array, `regions` name -> "weight" | "input" |
    "activation", `steps` in program order, `config` the Gemmini they run on."""
    buffers: dict
    regions: dict
    steps: list
    config: GemminiConfig
    tuned: dict = field(default_factory=dict)     # layer key -> schedule (the design's)
    on_chip: set = field(default_factory=set)     # tensors a fused step keeps on chip (no buffer)

    def locate(self, array) -> tuple[str, int]:
        """(buffer name, byte offset) of an array that is a buffer or a view inside one."""
        lo, hi = byte_bounds(array)
        for name, buf in self.buffers.items():
            if self.regions[name] == "view":
                continue
            blo, bhi = byte_bounds(buf)
            if blo <= lo and hi <= bhi:
                return name, lo - blo
        raise KeyError("the array is inside no buffer of the program")

    def launches(self) -> list:
        """(step index, KernelLaunch) of every Gemmini launch, in order."""
        return [(i, launch) for i, s in enumerate(self.steps) if isinstance(s, GemminiStep) for launch in s.launches]


def conv_layer(op: Op, x_shape) -> Layer:
    """The tuner's layer of a conv or depthwise op (baco.tuner.workloads.layers_from_torch writes the
    same: a depthwise layer has C = 1 and K = its channels; every one has its int32 bias, op.q's, and
    its padding: a ValueError where it differs between rows and columns, which a Layer cannot express)."""
    q = op.q
    N, H, W, C = x_shape
    R, S = q["weight"].shape[:2]
    (sh, sw), (ph, pw), (dh, dw) = q["stride"], q["padding"], q["dilation"]
    P, Q = output_size(H, R, sh, ph, dh), output_size(W, S, sw, pw, dw)
    depthwise = op.kind == "depthwise"
    return Layer(R=R, S=S, P=P, Q=Q, C=1 if depthwise else C, K=C if depthwise else q["weight"].shape[3], N=N,
                 Hstride=sh, Wstride=sw, Hdilation=dh, Wdilation=dw, depthwise=depthwise, bias=True,
                 padding=symmetric_padding((ph, pw)))


def design_schedules(design) -> tuple[GemminiConfig, dict]:
    """(GemminiConfig, {layer key: GemmSchedule}) of a `baco tune` result (a result.json dict):
    each layer's schedule as `baco run --design` compiles it (baco.design.check_design's rule); none
    for a layer marked to run its kernel's default program (schedule_source "default": what its
    cost priced, e.g. a 1x1 layer's LoopConv programs where conv2d picks them)."""
    from baco.tuner.mapping import conv_schedule, gemm_schedule, is_kernel_layer, parse_mapping
    cfg = GemminiConfig.from_dict(design["gemmini_config"])
    schedules, implied = {}, {}
    for entry in design["layers"]:
        layer = Layer(**entry["layer"], name=entry["name"], count=entry["count"])
        if entry.get("schedule_source") == "default":
            continue
        if "schedule" in entry:
            schedules[layer.key] = GemmSchedule.from_dict(entry["schedule"])
        elif is_kernel_layer(layer):
            schedules[layer.key] = gemm_schedule(parse_mapping(entry["mapping"]), layer)
        else:
            schedules[layer.key] = conv_schedule(parse_mapping(entry["mapping"]), layer, cfg)[0]
        for variant in _model_variants(layer):
            implied[variant.key] = schedules[layer.key]
    return cfg, {**implied, **schedules}


def _model_variants(layer: Layer) -> list[Layer]:
    """The model's layers a design's layer written without a bias or padding stands for (a design
    from before layers had them, or tuned on a shape alone): the same tiling for the model's layer
    of that shape, which has its bias and may be padded (any padding the filter allows)."""
    paddings = range(layer.filter_extent) if layer.padding == 0 else (layer.padding,)
    return [replace(layer, bias=bias, padding=p) for bias in {layer.bias, True} for p in paddings]


def viewed(array, view):
    """The (shape, strides, offset) view (in elements) of a C-contiguous buffer array, in place."""
    shape, strides, offset = view
    flat = array.reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * flat.itemsize for s in strides])


def unfused_pools(design: dict | None) -> frozenset:
    """The module paths of the convs whose "pool" edge the design leaves unfused (result.json's
    "fusion"): their max pool stays a CPU op (baco.model.graph.capture)."""
    edges = ((design or {}).get("fusion") or {}).get("edges", [])
    return frozenset(e["producer"] for e in edges if e["kind"] == "pool" and not e["fused"])


def unfused_pool_problems(graph: Graph, design: dict | None) -> list[str]:
    """Why a design's unfused pool edge is not what the graph runs: its conv is not one conv op
    of the model whose output a CPU max pool reads."""
    problems = []
    for module in sorted(unfused_pools(design)):
        convs = [op for op in graph.ops if op.kind == "conv" and module_path(op) == module]
        pools = [r for c in convs for r in graph.ops if r.kind == "max_pool" and c.output in r.inputs]
        if len(convs) != 1 or convs[0].attrs.get("pool") or len(pools) != 1:
            problems.append(f"the design's unfused pool edge of {module}: the model has {len(convs)} convs of that "
                            f"module and {len(pools)} CPU max pools reading them (a design of another model, or a "
                            "graph captured without the design's unfused_pools?)")
    return problems


def gemm_kernel_problems(op: Op) -> list[str]:
    """Why a linear or conv op is not a layer the GEMM kernel runs (a 1x1 stride-1 unpadded
    convolution without pooling, or a linear layer)."""
    if op.kind == "linear":
        return []
    q = op.q
    if op.kind == "conv" and q["weight"].shape[:2] == (1, 1) and tuple(q["stride"]) == (1, 1) \
            and tuple(q["padding"]) == (0, 0) and not q.get("pool"):
        return []
    return [f"{module_path(op)} is not a linear layer or a 1x1 stride-1 unpadded convolution without pooling"]


def fused_edges(graph: Graph, design: dict | None) -> tuple[dict, dict, dict]:
    """The design's fused edges as ({producer op output: consumer op} of the chains, {producer op
    output: add op} of the residual adds, {producer op output: (blocks, schedule source)} of the
    edges that record the blocks their program runs with), each checked to be a pair the compiler
    runs as one program (baco.kernels.fused), else a ValueError naming it. An edge's "blocks"
    (baco.tuner.fusion.fuse_result's, for a producer the design runs at its kernel's default
    program: the faster of the default blocks and its tile; fusion.EDGE_BLOCKS' keys, positive ints) are
    its launch's, "blocks_source" "tile" making the step's schedule "tuned"; without them (an older
    result.json) the program runs the producer's schedule or the kernels' default blocks."""
    edges = [e for e in ((design or {}).get("fusion") or {}).get("edges", []) if e["fused"]]
    by_module = {}
    for op in graph.ops:
        if op.kind in ("linear", "conv", "depthwise"):
            by_module.setdefault(module_path(op), []).append(op)
    readers = {}
    for op in graph.ops:
        for t in op.inputs:
            readers.setdefault(t, []).append(op)
    chains, resadds, blocks, taken = {}, {}, {}, set()
    for e in edges:
        if e["kind"] not in FUSED_KINDS:
            continue        # a pool: the conv's pooled store (baco.model.graph's capture)
        where = f"the design's fused edge {e['producer']} -> {e['consumer']} ({e['kind']})"
        chain = e["kind"] in FUSED_CHAIN_KINDS
        ps = by_module.get(e["producer"], [])
        read = None if len(ps) != 1 else ps[0].output if chain else view_run(readers, ps[0].output)[1]
        cs = by_module.get(e["consumer"], []) if chain else \
            [r for r in readers.get(read, []) if r.kind == "add"] if len(ps) == 1 else []
        if len(ps) != 1 or len(cs) != 1:
            raise ValueError(f"{where}: the model has {len(ps)} Gemmini layers of the producer's module and "
                             f"{len(cs)} {'of the consumer' if chain else 'adds reading it'} (a design of another "
                             "model?)")
        p, c = ps[0], cs[0]
        if e["kind"] == "dw-pw":
            why = [] if p.kind == "depthwise" and c.kind == "conv" else \
                [f"the layers are a {p.kind} and a {c.kind}, not a depthwise and a conv"]
        else:
            why = gemm_kernel_problems(p)
        if chain:
            kind = "linear" if e["kind"] == "gemm-gemm" else "conv"
            if e["kind"] != "dw-pw" and not p.kind == c.kind == kind:
                why.append(f"the layers are a {p.kind} and a {c.kind}, not two {kind}s")
            why += gemm_kernel_problems(c)
            if c.inputs != [p.output]:
                why.append("the consumer reads more than the producer's output")
        elif c.inputs.count(read) != 1:
            why.append("the add reads the layer's output twice")
        if [r.output for r in readers.get(read, [])] != [c.output]:
            why.append("the producer's output has another reader")
        if taken & {p.output, c.output}:
            why.append("a layer of it is in another fused edge (fused groups are pairs)")
        if "blocks" in e:
            b, names = e["blocks"], EDGE_BLOCKS.get(e["kind"], ())
            if not (isinstance(b, dict) and sorted(b) == sorted(names) and
                    all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in b.values())):
                why.append(f"its blocks {b!r} are not positive ints {', '.join(names) or '(none for its kind)'}")
            else:
                blocks[p.output] = (b, "tuned" if e.get("blocks_source") == "tile" else "default")
        if why:
            raise ValueError(f"{where} cannot run as one program: " + "; ".join(why))
        (chains if chain else resadds)[p.output] = c
        taken |= {p.output, c.output}
    return chains, resadds, blocks


def view_run(readers: dict, tensor: str) -> tuple[list[str], str]:
    """(the outputs of the run of view ops from `tensor` on, each the one reader of the last; the
    tensor at its end, which a residual add fused with `tensor`'s producer reads: a view moves no
    data, so the add reads the producer's int8 values, at the view's scale, as unfused: e.g. the
    out-projection's rows reshaped to the (batch, tokens, embed) of the residual)."""
    run = []
    while len(readers.get(tensor, [])) == 1 and readers[tensor][0].kind in VIEW_OPS:
        tensor = readers[tensor][0].output
        run.append(tensor)
    return run, tensor


class _Lowering:
    def __init__(self, graph: Graph, config: GemminiConfig, tuned: dict, fused: tuple[dict, dict, dict] = ({}, {}, {})):
        self.graph, self.config, self.tuned = graph, config, tuned
        self.buffers, self.regions, self.steps = {}, {}, []
        # producer output -> consumer op (a chain's layer, an add); -> (blocks, source) its edge records
        self.chains, self.resadds, self.fused_blocks = fused
        self.consumers = {c.output for c in self.chains.values()}
        self.add_producer = {a.output: self.graph.producer(p) for p, a in self.resadds.items()}
        readers = {}
        for op in graph.ops:
            for t in op.inputs:
                readers.setdefault(t, []).append(op)
        # a fused residual add's producer output -> (the views between it and the add: no buffer, the
        # tensor the add reads)
        self.add_reads = {p: view_run(readers, p) for p in self.resadds}
        self.fused_views = {v for run, _ in self.add_reads.values() for v in run}
        self.on_chip = set()

    def buffer(self, name, array, region):
        self.buffers[name], self.regions[name] = array, region
        return array

    def value(self, name):
        return self.buffers[name]

    def output(self, op, array):
        """`array` (a launch's output, or a view of it) is op's output tensor."""
        shape = tuple(self.graph.tensors[op.output].shape)
        self.buffer(op.output, array.reshape(shape), "activation")

    def schedule_for(self, op: Op, layer: Layer):
        """(the design's schedule of this layer or None, its source); an output-stationary
        schedule's array arithmetic is written into op.q for the reference (os_k_block: the
        products the array sums before its output saturates to array_bits)."""
        s = self.tuned.get(layer.key)
        if s is not None and s.dataflow == "OS":
            op.q.update(os_k_block=s.block_k, array_bits=self.config.spatial_output_bits)
        return s, "tuned" if s is not None else "default"

    def run(self) -> Lowered:
        g = self.graph
        x = g.tensors[g.input]
        self.buffer(g.input, np.zeros(x.shape, dtype=x.dtype), "input")
        for op in g.ops:
            if op.kind == "constant":
                self.buffer(op.output, np.ascontiguousarray(op.q["value"]), "weight")
            elif op.output in self.fused_views:
                self.on_chip.add(op.output)     # a view of a fused residual add's on-chip operand
            elif op.kind in VIEW_OPS:
                self.buffers[op.output] = self.value(op.inputs[0]).reshape(g.tensors[op.output].shape)
                self.regions[op.output] = "view"
            elif op.output in self.chains:
                lower = self.lower_dw_pw if op.kind == "depthwise" else self.lower_chain
                self.steps.append(lower(op, self.chains[op.output]))
            elif op.output in self.consumers or op.output in self.resadds:
                continue            # run by the fused step (a chain's at its producer, a residual add's at the add)
            elif op.output in self.add_producer:
                self.steps.append(self.lower_resadd(self.add_producer[op.output], op))
            elif op.kind in GEMMINI_OPS:
                self.steps.append(getattr(self, f"lower_{op.kind}")(op))
            else:
                step = self.lower_cpu(op)
                self.steps.extend(step if isinstance(step, list) else [step])
        return Lowered(self.buffers, self.regions, self.steps, self.config, self.tuned, self.on_chip)

    def weights(self, op, padded_k=False):
        """The op's weight and bias buffers; `padded_k`: the (K, N) weight stored with zero rows up to
        padded_rows(K, DIM) (the rows LoopMatmul reads of a ragged K; matmul_launch takes them)."""
        w = np.ascontiguousarray(op.q["weight"])
        if padded_k:
            w = np.concatenate([w, np.zeros((padded_rows(len(w), self.config.dim) - len(w), *w.shape[1:]), w.dtype)])
        w = self.buffer(f"{op.output}.weight", w, "weight")
        b = self.buffer(f"{op.output}.bias", np.ascontiguousarray(op.q["bias"], dtype=np.int32), "weight")
        return w, b

    def reads(self, launch: KernelLaunch, x):
        """The launch must read the input buffer itself (no copy)."""
        if not np.shares_memory(launch.args[0], x):
            raise AssertionError("a launch copied its input instead of reading the buffer")
        return launch

    def lower_conv(self, op):
        x = self.value(op.inputs[0])
        w, b = self.weights(op)
        q = op.q
        layer = conv_layer(op, x.shape)
        if q["pool"]:
            p = q["pool"]
            # the tuner costs the conv alone: the pooled kernel takes the nearest schedule of its form
            tuned, _ = self.schedule_for(op, layer)
            blocks = None if tuned is None else pool_schedule_from_conv(
                tuned, PH=pooled_size(layer.P, p["kernel"], p["stride"], p["padding"]), Q=layer.Q,
                pool=p["kernel"], stride=p["stride"], config=self.config)
            source = "default" if blocks is None else "tuned"
            launch = ConvPoolLaunch(x, w, b, pool=p["kernel"], stride=p["stride"], padding=p["padding"],
                                    conv_stride=q["stride"], conv_padding=q["padding"], dilation=q["dilation"],
                                    scale=q["scale"], relu=q["relu"], config=self.config, blocks=blocks)
        else:
            schedule, source = self.schedule_for(op, layer)
            launch = conv2d_launch(x, w, b, stride=q["stride"], padding=q["padding"], dilation=q["dilation"],
                                   scale=q["scale"], relu=q["relu"], out="int8", config=self.config, blocks=schedule)
        self.output(op, launch.y)
        return GemminiStep(op, [self.reads(launch, x)], layer, source)

    def lower_depthwise(self, op):
        x = self.value(op.inputs[0])
        q = op.q
        bias = self.buffer(f"{op.output}.bias", np.ascontiguousarray(q["bias"], dtype=np.int32), "weight")
        layer = conv_layer(op, x.shape)
        schedule, source = self.schedule_for(op, layer)
        launch = depthwise_launch(x, q["weight"], bias, stride=q["stride"], padding=q["padding"],
                                  dilation=q["dilation"], scale=q["scale"], relu=q["relu"], out="int8",
                                  config=self.config, blocks=schedule)
        self.buffer(f"{op.output}.weight", launch.args[1], "weight")      # the diagonal weight tiles it reads
        self.output(op, launch.y)
        return GemminiStep(op, [self.reads(launch, x)], layer, source)

    def lower_chain(self, producer, consumer):
        """A fused pair (fused_chains) as one gemm_chain_launch over the rows of the producer's input
        (a linear's rows, or an NHWC image's pixels), with the producer's tuned blocks if any (on a
        Gemmini with the ext-spad commands, the chain on the loop unit's where it fits)."""
        x = self.value(producer.inputs[0])
        rows = x.reshape(-1, x.shape[-1])
        (w1, b1), (w2, b2) = self.weights(producer), self.weights(consumer)
        w1, w2 = w1.reshape(-1, w1.shape[-1]), w2.reshape(-1, w2.shape[-1])
        if producer.kind == "linear":
            layer = gemm(rows.shape[0], w1.shape[0], w1.shape[1], bias=True)
        else:
            layer = conv_layer(producer, x.shape)
        schedule = self.tuned.get(layer.key)
        blocks = dict(block_m=schedule.m_rows, block_k=schedule.block_k) if schedule is not None else {}
        source = "tuned" if schedule is not None else "default"
        if producer.output in self.fused_blocks:     # the blocks the design's edge runs its program with
            blocks, source = self.fused_blocks[producer.output]
        out_shape = self.graph.tensors[consumer.output].shape
        p, c = producer.q, consumer.q
        launch = gemm_chain_launch(rows, w1, b1, w2, b2, scale1=p["scale"], scale2=c["scale"], relu1=p["relu"],
                                   relu2=c["relu"], config=self.config, **blocks)
        # the weights it reads (on the loop unit, padded to whole DIM-row blocks: LoopMatmul reads them)
        self.buffer(f"{producer.output}.weight", launch.args[1], "weight")
        self.buffer(f"{consumer.output}.weight", launch.args[3], "weight")
        self.output(consumer, launch.y.reshape(out_shape))
        self.on_chip.add(producer.output)
        return GemminiStep(consumer, [self.reads(launch, x)], layer, source, fused=[producer, consumer])

    def lower_dw_pw(self, depthwise, pointwise):
        """A depthwise conv and the 1x1 conv reading it as one dw_pw_launch at the blocks its kernel
        picks on the design's Gemmini (the depthwise output is kept on chip)."""
        x = self.value(depthwise.inputs[0])
        q, c = depthwise.q, pointwise.q
        b_dw = self.buffer(f"{depthwise.output}.bias", np.ascontiguousarray(q["bias"], dtype=np.int32), "weight")
        w_pw, b_pw = self.weights(pointwise)
        launch = dw_pw_launch(x, q["weight"], b_dw, w_pw.reshape(w_pw.shape[-2:]), b_pw, stride=q["stride"],
                              padding=q["padding"], dilation=q["dilation"], scale1=q["scale"], scale2=c["scale"],
                              relu1=q["relu"], relu2=c["relu"], config=self.config)
        self.buffer(f"{depthwise.output}.weight", launch.args[1], "weight")     # the diagonal weight tiles it reads
        self.output(pointwise, launch.y)
        self.on_chip.add(depthwise.output)
        return GemminiStep(pointwise, [self.reads(launch, x)], conv_layer(depthwise, x.shape), "default",
                           fused=[depthwise, pointwise])

    def lower_resadd(self, producer, add):
        """A GEMM layer and the residual add reading its output as one gemm_resadd_launch, under the
        layer's tuned schedule (its dataflow and double buffering aside: the fused program is WS)."""
        x = self.value(producer.inputs[0])
        rows = x.reshape(-1, x.shape[-1])
        w, b = self.weights(producer)
        w = w.reshape(-1, w.shape[-1])
        slot = add.inputs.index(self.add_reads[producer.output][1])
        residual = self.value(add.inputs[1 - slot])
        layer = gemm(rows.shape[0], w.shape[0], w.shape[1], bias=True) if producer.kind == "linear" else \
            conv_layer(producer, x.shape)
        schedule = self.tuned.get(layer.key)
        schedule = schedule and GemmSchedule(schedule.m_rows, schedule.block_n, schedule.block_k)
        source = "tuned" if schedule is not None else "default"
        if producer.output in self.fused_blocks:     # the blocks the design's edge runs its program with
            blocks, source = self.fused_blocks[producer.output]
            schedule = GemmSchedule(blocks["block_m"], blocks["block_n"], blocks["block_k"])
        q, aq = producer.q, add.q
        scales = (aq["a_scale"], aq["b_scale"])
        launch = gemm_resadd_launch(rows, w, b, residual.reshape(-1, w.shape[1]), scale=q["scale"], relu=q["relu"],
                                    a_scale=scales[slot], r_scale=scales[1 - slot], out_scale=aq["out_scale"],
                                    relu_out=aq["relu"], schedule=schedule, config=self.config)
        self.buffer(f"{add.output}.identity", launch.args[5], "weight")     # the identity it multiplies by
        self.output(add, launch.y.reshape(self.graph.tensors[add.output].shape))
        self.on_chip.add(producer.output)
        if not np.shares_memory(launch.args[3], residual):
            raise AssertionError("a launch copied its residual instead of reading the buffer")
        return GemminiStep(add, [self.reads(launch, x)], layer, source, fused=[producer, add])

    def lower_linear(self, op):
        x = self.value(op.inputs[0])
        w, b = self.weights(op, padded_k=True)
        a = x.reshape(-1, x.shape[-1])
        layer = gemm(a.shape[0], a.shape[1], w.shape[1], bias=True)
        schedule, source = self.schedule_for(op, layer)
        launch = matmul_launch(a, w, bias=b, out="int8", scale=op.q["scale"], relu=op.q["relu"], schedule=schedule,
                               config=self.config)
        self.output(op, launch.y)
        return GemminiStep(op, [self.reads(launch, x)], layer, source)

    def lower_matmul(self, op):
        """One GEMM per batch, reading each operand's matrices in place (op.q's views of the input
        buffers) and writing rows of the output where its stored order puts them."""
        q = op.q
        a, b = (viewed(self.value(t), q[view]) for t, view in zip(op.inputs, ("a_view", "b_view")))
        out = np.zeros(self.graph.tensors[op.output].shape, dtype=np.int8)
        c = out.transpose(inverse(q["out_order"]))
        launches = [matmul_launch(a[i], b[i], out="int8", scale=q["scale"], config=self.config, c=c[i])
                    for i in np.ndindex(a.shape[:-2])]
        self.output(op, out)
        return GemminiStep(op, launches)

    def lower_add(self, op):
        a, b = (self.value(t) for t in op.inputs)
        cols = a.shape[-1]
        q = op.q
        launches, out = resadd_launches(a.reshape(-1, cols), b.reshape(-1, cols), q["a_scale"], q["b_scale"],
                                        q["out_scale"], relu=q["relu"], config=self.config)
        self.output(op, out)
        return GemminiStep(op, [self.reads(launch, a) for launch in launches])

    def lower_cpu(self, op):
        xs = [self.value(t) for t in op.inputs]
        x, q = xs[0], op.q
        out_shape = tuple(self.graph.tensors[op.output].shape)
        if op.kind == "max_pool":
            kernel = cpu_ops.max_pool2d(x.shape, q["kernel"], q["stride"], q["padding"], q["dilation"], q["ceil_mode"])
        elif op.kind == "avg_pool":
            kernel = cpu_ops.avg_pool2d(x.shape, q["kernel"], q["stride"], q["padding"], q["ceil_mode"],
                                        count_include_pad=q["count_include_pad"], in_scale=q["in_scale"],
                                        out_scale=q["out_scale"])
        elif op.kind == "adaptive_avg_pool":
            kernel = cpu_ops.adaptive_avg_pool2d(x.shape, q["output_size"], in_scale=q["in_scale"],
                                                 out_scale=q["out_scale"])
        elif op.kind == "lut":
            kernel = cpu_ops.lut(x.shape, q["table"])
        elif op.kind == "mul_channel":
            kernel = cpu_ops.mul_channel(x.shape, x_scale=q["x_scale"], s_scale=q["s_scale"], out_scale=q["out_scale"])
            xs = [x, xs[1].reshape(x.shape[0], x.shape[3])]
        elif op.kind == "permute":
            kernel = cpu_ops.permute(x.shape, q["perm"])
        elif op.kind == "strided_copy":
            kernel = cpu_ops.strided_copy(x.shape, q["shape"], q["strides"], q["offset"])
        elif op.kind == "softmax":
            kernel = cpu_ops.softmax(x.shape, in_scale=q["in_scale"], out_scale=q["out_scale"], keep=q["keep"])
        elif op.kind == "layernorm":
            kernel = cpu_ops.layernorm(x.shape, q["gamma"], q["beta"], eps=q["eps"], in_scale=q["in_scale"],
                                       out_scale=q["out_scale"])
        elif op.kind == "cat":
            return self.lower_cat(op, xs)
        elif op.kind == "embedding":
            table = self.buffer(f"{op.output}.weight", np.ascontiguousarray(q["table"]), "weight")
            kernel = cpu_ops.embedding(x.shape, *table.shape)
            xs = [x, table]
        else:
            raise AssertionError(f"no lowering for {op.kind} ({op.source})")
        out = self.buffer(op.output, np.zeros(out_shape, dtype=np.int8), "activation")
        return CpuStep(op, kernel, [*xs, out])

    def lower_cat(self, op, parts):
        """Parts of another scale requantised through their table into a scratch buffer, then one copy."""
        steps = []
        for i, table in enumerate(op.q["tables"]):
            if table is not None:
                scratch = self.buffer(f"{op.output}.part{i}", np.zeros_like(parts[i]), "activation")
                steps.append(CpuStep(op, cpu_ops.lut(parts[i].shape, table), [parts[i], scratch]))
                parts[i] = scratch
        out = self.buffer(op.output, np.zeros(self.graph.tensors[op.output].shape, dtype=np.int8), "activation")
        steps.append(CpuStep(op, cpu_ops.concat([p.shape for p in parts], op.q["axis"]), [*parts, out]))
        return steps


def lower(graph: Graph, design=None) -> Lowered:
    """The steps of a quantised graph on the default Gemmini with default schedules, or on a tuned
    design (a result.json dict, or a `baco tune --out` folder / file path)."""
    if design is None:
        return _Lowering(graph, GemminiConfig(), {}).run()
    if not isinstance(design, dict):
        from baco.design import load_design
        design = load_design(design)
    config, tuned = design_schedules(design)
    problems = unfused_pool_problems(graph, design)
    if problems:
        raise ValueError("; ".join(problems))
    return _Lowering(graph, config, tuned, fused_edges(graph, design)).run()


__all__ = ["lower", "Lowered", "GemminiStep", "CpuStep", "design_schedules", "conv_layer", "fused_edges",
           "unfused_pools", "module_path", "GEMMINI_OPS", "FUSED_CHAIN_KINDS", "FUSED_KINDS"]
