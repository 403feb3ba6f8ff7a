"""Inter-layer fusion in the co-exploration, after FADiff (Jia, Ling, Bai, Zhao, Zhai, "FADiff:
Fusion-Aware Differentiable Optimization for DNN Scheduling on Tensor Accelerators", arXiv
2511.22348, §3 eqs. 11-20).

A network is a graph (FusionGraph, from a torch module's fx trace through the tuner's torch
importer, workloads.layers_from_torch): its MAC layer instances and the producer -> consumer
edges whose shapes allow a fused program:
- chains, the intermediate being the consumer's input (A operand): linear -> linear ("gemm-gemm"),
  1x1 -> 1x1 stride-1 convolution ("pw-pw") and depthwise -> 1x1 stride-1 convolution ("dw-pw",
  MobileNet's pair), the pairs the whole-model compiler runs as one program (baco.kernels.fused,
  baco.kernels.fused_dwpw: the hidden block stays in the accumulator and the second product reads
  it back through the execute unit's scaled ReLU read); between them only what that read applies
  passes (ReLU, ReLU6 whose clamp is the int8 saturation at its scale, batch norm folded into the
  scale, dropout, identities), not a view or a permute;
- tails, an element-wise op reading the producer's output: conv/GEMM -> residual add ("resadd",
  the residual loaded into the accumulator and accumulated onto) and conv -> pool ("pool", the
  pooling on the store path, baco/kernels' conv -> pool form). Between them ReLU, folded batch
  norm, dropout and views pass.
A torch.nn.TransformerEncoder(Layer), which fx keeps whole, is expanded into its layers' GEMM
instances, named by module path as baco.model.graph's capture names their ops, with the edges the
compiler runs inside it (_encoder_layer: the out-projection's and the second feed-forward linear's
residual adds, linear1 -> linear2 under ReLU).
Any other op (GELU, softmax, a second reader of the intermediate) ends the edge. A layer instance
is in at most one fused edge (fused groups are pairs: the programs the compiler emits).

Each edge e has a fusion variable sigma_e in [0, 1] (a sigmoid of a descended logit). Fused, the
intermediate's DRAM write-back (its W words) and the consumer's DRAM re-fills (F words, the
input fills of the Timeloop-matched access counting) become an on-chip copy of W words into the
scratchpad (FADiff eqs. 11-14 with baco's on-chip path):
  energy  += sigma (-(W + F) DRAM_PJ + (W - F) scratchpad_pj)
  cycles of each layer instance = max(floor, cycles - sigma * saved DRAM words / rate)
where floor is what does not wait on DRAM (the Timeloop-matched model: compute, scratchpad and
accumulator bandwidth, so the max is its own latency with the DRAM term lowered; the compiled
program: the array's compute) and rate the model's DRAM words per cycle (8 for Timeloop's
Gemmini, the DMA bus's bytes per beat for the compiled program). A tail's op costs its DRAM
traffic (intermediate read, residual read, output write) unfused; fused, the intermediate's
write-back and read vanish (eq. 15's traffic removal for a consumer that is not a MAC layer).
Under the compiled-program model a pool unfused is what the compiler runs then: the conv storing
its whole output and the max pool on the core (Edge.op_cycles, baco.gemmini.cpu_cost's
max_pool_cycles: the whole-model cost of that CPU step; no Gemmini energy), fused the conv's
pooled store (its output writes).
Capacity (eqs. 16-18): a fused chain or residual add holds what one program of its fused kernel
holds (baco.gemmini.fused at the producer's L2 tile: its rows, input and output channels; a
chain's hidden layer and the consumer's output whole; a depthwise -> pointwise pair its smallest
program, one pixel block and DIM output channels, since its kernel picks the blocks that fit; on a
Gemmini with master's ext-spad commands, Hardware.ext_spad, a chain whose program runs on the
loop unit holds that program at the blocks the compiler picks for it, gemm_chain_loop_ws_blocks:
on inferred hardware, where it fits the Gemmini the layers alone need);
during descent its over-use is a penalty weighted by sigma, and at rounding an edge becomes fused only where the exact check passes (on
the fixed hardware, or within the largest buildable buffers when the hardware is inferred, which
then grows to hold the fused pair). Rounding takes the edges sigma prefers (>= 0.5) first, then
on a fixed Gemmini every other edge that fits and whose layers are still free: at fixed mappings
a fused edge there only removes DRAM traffic, so the fused EDP of a design is never above its
EDP unfused and the fusion search space holds the unfused one (sigma chooses between rivals
sharing a layer; on inferred hardware a held edge grows the buffers and is fused only where
sigma prefers it). A chain on the loop unit (the ext-spad Gemmini's) is the exception: under the
compiled-program model its fused cycles and energy are its program's in place of its two layers'
(FusionTerms.loop_programs, on each point's rounded Gemmini when inferred: the model fuse_result
reports on the design's; its energy from the program's counts, less the bias rows where the
layers have none, Layer.bias), which may be more than theirs, so it too is fused only where sigma
prefers it; the search also weighs its two layers' unfused cost at LOOP_LAYERS_TIE_WEIGHT, a tie-breaker that
keeps their mappings ones that run well with the fusion off (the design's unfused reference).
Under that model any other fused chain (the explicit chain's program) takes its program's cycles
and energy in place of its two layers' too (FusionTerms.chain_programs, at the producer's L2 tile,
as fuse_result prices it; the energy from its command stream's counts, baco.gemmini.fused_counts,
as the cycle model counts them); on a fixed Gemmini rounding still fills it in where it fits, and
fuse_result unfuses it where its EDP fused alone is not lower. fuse_result prices a fused residual
add's energy so too (its identity products and loads; X re-read from DRAM per column block),
the search its traffic terms; the Timeloop-matched model keeps FADiff's traffic model throughout.
Every forward pass of the descent is thus a valid design whose fused EDP is exact under the model
but for that tie-breaker (straight-through: the rounded value, the gradient of sigma).
"""
from __future__ import annotations

import copy
import math
import operator
from dataclasses import dataclass, replace

import torch

from baco.gemmini.arith import pool_field_problems
from baco.gemmini.config import Footprint, GemminiConfig, rows_to_kb
from baco.gemmini.cpu_cost import max_pool_cycles
from baco.gemmini.energy import DRAM_PJ, scratchpad_pj
from baco.gemmini.fused_counts import counts_energy_uj, gemm_chain_counts, gemm_resadd_counts
from baco.gemmini.fused import (CHAIN_DEFAULT_BLOCKS, dw_pw_blocks, dw_pw_footprint, dw_pw_program_cycles,
                                gemm_chain_blocks, gemm_chain_footprint, gemm_chain_loop_ws_blocks, gemm_chain_loop_ws_footprint,
                                gemm_chain_loop_ws_program_cycles, gemm_chain_program_cycles,
                                gemm_resadd_default_blocks, gemm_resadd_footprint, gemm_resadd_program_cycles)
from baco.gemmini.schedule import capacity_problems
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.problem.dims import DIMS
from baco.problem.layer import Layer
from baco.tuner import costmodel
from baco.tuner.arch import MAX_BUFFER_KB, Hardware
from baco.tuner.kernel_model import gemm_chain_loop_ws_energy
from baco.tuner.mapping import tile_dims
from baco.tuner.relax import capacity_penalty
from baco.tuner.workloads import encoder_layer_layers, layers_from_torch, merge_identical, model_factory

CHAIN_KINDS = ("gemm-gemm", "pw-pw", "dw-pw")
LOOP_CHAIN_KINDS = ("gemm-gemm", "pw-pw")     # the chains gemm_chain_launch runs (on the loop unit where it can)
TAIL_KINDS = ("resadd", "pool")
RESADD_PRODUCERS = ("linear", "pw")      # the GEMM kernel's layers: the fused program adds the residual
SIGMA_INIT_LOGIT = 0.5      # sigma = 0.62 at the start: every edge fused where it fits, free to leave
# the compiled program's DRAM rate, bytes (int8 words) a cycle: one DMA beat of the bus per beat_cycles
COMPILED_WORDS_PER_CYCLE = GemminiConfig().dma_bus_bits / 8 / DEFAULT_CONSTANTS.beat_cycles
N_, P_, Q_, C_, K_ = (DIMS.index(d) for d in "NPQCK")
# the search's weight on a fused loop-form chain's two layers' unfused cycles and energy: its program
# is priced whatever their mappings, so without it they drift (the demo MLP's fused pair took 658k
# predicted cycles unfused, 41k with it). Tiny, it only breaks ties between designs of equal fused
# cost; a design's reported cost (fuse_result) carries none of it
LOOP_LAYERS_TIE_WEIGHT = 1e-6
# the blocks of an edge's explicit fused program (baco.kernels.fused's launches) a design records on
# it (fuse_result's "blocks", fused_program_blocks'; baco.model.lower runs them), per edge kind
EDGE_BLOCKS = {"gemm-gemm": ("block_m", "block_k"), "pw-pw": ("block_m", "block_k"),
               "resadd": ("block_m", "block_n", "block_k")}


@dataclass(frozen=True)
class Edge:
    """A producer -> consumer edge between layer instances (FusionGraph.instances indices)."""
    producer: int
    kind: str
    words: int                  # the intermediate: the producer's output elements (int8 words)
    consumer: int | None = None  # a chain's MAC consumer; None for a tail
    op: str = ""                # a tail's element-wise op (its fx node)
    op_reads: int = 0           # what the op reads besides the intermediate (a residual)
    op_writes: int = 0          # what it writes
    op_cycles: float = 0.0      # a pool's max pool on the core (cpu_cost.max_pool_cycles): its cost unfused

    @property
    def chain(self) -> bool:
        return self.kind in CHAIN_KINDS


@dataclass
class FusionGraph:
    """The layers of a network as the search sees them (unique, with counts: layers_from_torch's
    list) and its instances and fusable edges."""
    layers: list[Layer]
    instances: list[int]        # per MAC layer instance (fx order), its index in `layers`
    names: list[str]            # per instance, its fx node
    edges: list[Edge]

    def edge_name(self, e: Edge) -> str:
        return f"{self.names[e.producer]} -> {self.names[e.consumer] if e.chain else e.op}"

    def groups(self, fused) -> list[list[str]]:
        """The fused groups: instances and tail ops joined by fused edges (fused: a bool per edge)."""
        parent = {}

        def find(x):
            while parent.setdefault(x, x) != x:
                x = parent[x]
            return x
        for e, on in zip(self.edges, fused):
            if on:
                a, b = self.names[e.producer], self.names[e.consumer] if e.chain else e.op
                parent[find(b)] = find(a)
        members = {}
        for x in list(parent):
            members.setdefault(find(x), []).append(x)
        order = {n: i for i, n in enumerate(self.names)}
        return sorted((sorted(m, key=lambda n: order.get(n, len(order))) for m in members.values() if len(m) > 1),
                      key=lambda m: order.get(m[0], len(order)))


# ---- the graph of a torch module --------------------------------------------------------------
class _MatMul(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def _shape(arg):
    meta = getattr(arg, "meta", {}).get("tensor_meta") if hasattr(arg, "meta") else None
    return None if meta is None or not hasattr(meta, "shape") else tuple(meta.shape)


def _numel(arg) -> int:
    return math.prod(_shape(arg) or (0,))


def graph_from_torch(module, *example_inputs) -> FusionGraph:
    """The fusion graph of a torch module: each MAC node's layers from the tuner's torch importer
    (workloads.layers_from_torch on the node alone, so they are the layers `baco tune --torch`
    searches), and the edges of the kinds above. The module may live on the meta device."""
    from torch.fx import symbolic_trace
    from torch.fx.passes.shape_prop import ShapeProp
    nn, F = torch.nn, torch.nn.functional
    wrapped = type(module).__module__.startswith("torch.nn.") and not isinstance(module, nn.Sequential)
    if wrapped:
        module = nn.Sequential(module)      # a leaf module alone: traced as the one call it is
    gm = symbolic_trace(module)
    # shapes only: a module built on the meta device (`with torch.device("meta")`) computes nothing
    device = next(module.parameters(), torch.zeros(0)).device
    ShapeProp(gm).propagate(*(x.to(device) for x in example_inputs))
    matmuls = (torch.matmul, torch.bmm, torch.mm, operator.matmul)
    instance_layers, names, node_instance, node_kind, encoder_edges = [], [], {}, {}, []
    for node in gm.graph.nodes:
        found, kind = [], None
        if node.op == "call_module":
            mod = gm.get_submodule(node.target)
            if isinstance(mod, (nn.TransformerEncoderLayer, nn.TransformerEncoder)) and _shape(node.args[0]) is not None:
                # fx keeps them whole: their layer instances and edges as the capture names their ops
                prefix = "" if wrapped else f"{node.target}."
                encoder = [(mod, prefix.rstrip("."))] if isinstance(mod, nn.TransformerEncoderLayer) else \
                    [(layer, f"{prefix}layers.{i}") for i, layer in enumerate(mod.layers)]
                for layer, path in encoder:
                    found, edges = _encoder_layer(layer, _shape(node.args[0]), path)
                    encoder_edges += [replace(e, producer=e.producer + len(names),
                                              consumer=None if e.consumer is None else e.consumer + len(names))
                                      for e in edges]
                    instance_layers += found
                    names += [l.name for l in found]
                continue
            if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Linear, nn.MultiheadAttention)) and _shape(node.args[0]) is not None:
                shapes = [_shape(a) for a in node.args if _shape(a) is not None]
                # on the meta device: only shapes are propagated, nothing is computed
                found = layers_from_torch(copy.deepcopy(mod).to("meta"),
                                          *(torch.zeros(s, device="meta") for s in shapes))
                found = [replace(l, name=str(node.target) if len(found) == 1 else f"{node.target}.{l.name}")
                         for l in found]
                if isinstance(mod, nn.Linear):
                    kind = "linear"
                elif isinstance(mod, nn.Conv2d):
                    depthwise = mod.groups == mod.in_channels > 1 and mod.out_channels == mod.in_channels
                    pointwise = mod.kernel_size == (1, 1) and mod.stride == (1, 1) and mod.groups == 1 \
                        and mod.padding in ((0, 0), 0)
                    kind = "dw" if depthwise else "pw" if pointwise else "conv"
                else:
                    kind = "conv" if isinstance(mod, nn.Conv1d) else None
        elif node.op == "call_function" and node.target in matmuls:
            found = [replace(l, name=node.name) for l in
                     layers_from_torch(_MatMul(), *(torch.zeros(_shape(a), device="meta") for a in node.args[:2]))]
            kind = "matmul"
        elif node.op == "call_function" and node.target is F.scaled_dot_product_attention:
            raise ValueError(f"{node.name}: scaled_dot_product_attention hides its two matmuls from the fusion "
                             "graph; write it with torch.matmul and softmax")
        for layer in found:
            # identical layers count as one (the count of a found layer is 1 per instance)
            node_instance.setdefault(node, len(names))
            instance_layers.append(layer)
            names.append(layer.name)
        if len(found) == 1:
            node_kind[node] = kind
    layers = merge_identical([l.with_count(1) for l in instance_layers])
    index = {l.key: i for i, l in enumerate(layers)}
    instances = [index[l.key] for l in instance_layers]
    edges = sorted(_edges(gm, node_instance, node_kind) + encoder_edges,
                   key=lambda e: (e.producer, e.consumer if e.chain else -1))
    return FusionGraph(layers, instances, names, edges)


def _encoder_layer(layer, shape, path: str) -> tuple[list[Layer], list[Edge]]:
    """A torch.nn.TransformerEncoderLayer (an fx leaf) at module `path` on input `shape`: its layer
    instances (workloads.encoder_layer_layers, one per GEMM, not merged) named by module path as
    baco.model.graph's capture names their ops (the out-projection by its parameters' module,
    graph._Walker.param_module), and its edges the compiler runs (indices into the instances):
    the out-projection's and the second feed-forward linear's residual adds ("resadd", tails named
    `path`.add and `path`.add_1 as the capture of one layer names them), the out-projection's only
    where its rows reach the add in order (batch-first with a batch of one, or sequence-first: else
    the add reads them transposed); and linear1 -> linear2 ("gemm-gemm") only where its activation
    is ReLU (the capture's ReLU on linear1's accumulator read; GELU is a CPU lookup table). The
    attention's products read views of the projections and softmax, none an edge; the QKV
    projection is one packed linear in the capture."""
    prefix = f"{path}." if path else ""
    found = [replace(l, name=l.name.removeprefix(".")) for l in encoder_layer_layers(layer, shape, path)]
    index = {l.name.removeprefix(prefix): i for i, l in enumerate(found)}
    batch_first = layer.self_attn.batch_first
    batch = shape[0] if batch_first else shape[1]
    words = math.prod(shape)
    relu = layer.activation is torch.nn.functional.relu or isinstance(layer.activation, torch.nn.ReLU)
    edges = [Edge(index["linear2"], "resadd", words, op=f"{prefix}add_1", op_reads=words, op_writes=words)]
    if batch == 1 or not batch_first:
        edges.append(Edge(index["self_attn.out_proj"], "resadd", words, op=f"{prefix}add", op_reads=words,
                          op_writes=words))
    if relu:
        edges.append(Edge(index["linear1"], "gemm-gemm", words // shape[-1] * layer.linear1.out_features,
                          consumer=index["linear2"]))
    return found, edges


# Edge kinds the compiled-program model does not offer: the fused depthwise -> pointwise program
# (an explicit stream, baco/kernels/fused_dwpw.py) was 1.3-29x its tuned pair's cycles by the
# program model on MobileNetV1 (before the model's refit on the current stream) and is 1.7-3.5x the
# unfused pair's on the ISS at default schedules (seven MobileNetV1-like pairs at DIM 16,
# benchmarks/dw_pw_programs.py --pairs: its Gemmini work alone is 1.6-2.9x the pair's end to end,
# the core issuing it more), and offering it left the compiled search 42-119% worse than without
# fusion (its descent moves the pairs' mappings while they are relaxed toward fused). The
# Timeloop-matched model, FADiff's traffic model, offers it.
PROGRAM_LOSING_KINDS = ("dw-pw",)


def search_graph(graph: FusionGraph, cycle_model: str) -> FusionGraph:
    """The graph the search fuses over under `cycle_model`: without PROGRAM_LOSING_KINDS' edges for
    the compiled-program model."""
    if cycle_model == "timeloop":
        return graph
    return replace(graph, edges=[e for e in graph.edges if e.kind not in PROGRAM_LOSING_KINDS])


def graph_from_model_spec(spec: str, input_shape) -> FusionGraph:
    """The fusion graph of `module:callable` (as workloads.layers_from_model_spec), built on the
    meta device (shapes only: nothing is allocated or computed)."""
    factory = model_factory(spec)
    with torch.device("meta"):
        model = factory().eval()
    return graph_from_torch(model, torch.zeros(*[int(d) for d in input_shape], device="meta"))


def _transparent(node, views: bool = True) -> bool:
    """Ops on the way from a producer to its consumer that a fused program applies on the
    accumulator read (ReLU, batch norm folded into the scale, dropout, identities) or, with
    `views`, that only rename the data (views)."""
    nn, F = torch.nn, torch.nn.functional
    if node.op == "call_module":
        mod = node.graph.owning_module.get_submodule(node.target)
        return isinstance(mod, (nn.ReLU, nn.ReLU6, nn.BatchNorm1d, nn.BatchNorm2d, nn.Dropout, nn.Identity)) or \
            (views and isinstance(mod, nn.Flatten))
    if node.op == "call_function":
        return node.target in (F.relu, F.relu6, torch.relu, F.dropout) or \
            (views and node.target in (torch.flatten, torch.reshape))
    if node.op == "call_method":
        return node.target in ("relu", "contiguous") or \
            (views and node.target in ("view", "reshape", "flatten", "transpose", "permute"))
    return False


def _store_path_pool(gm, node, cur, user) -> tuple | None:
    """(kernel, stride, padding) of `user` (reading cur, the end of node's transparent run) if it is
    a max pool the convolution's store path runs (baco.model.graph fuses it): a ReLU on the way
    (Gemmini pads with zeros), square windows without dilation or ceil mode that config_st's
    fields hold; else None."""
    F = torch.nn.functional
    if user.op == "call_module" and isinstance(gm.get_submodule(user.target), torch.nn.MaxPool2d):
        m = gm.get_submodule(user.target)
        kernel, stride, padding, dilation, ceil = m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode
    elif user.op == "call_function" and user.target is F.max_pool2d:
        a = {**dict(zip(("kernel_size", "stride", "padding", "dilation", "ceil_mode"), user.args[1:])), **user.kwargs}
        kernel, stride, padding = a["kernel_size"], a.get("stride") or a["kernel_size"], a.get("padding", 0)
        dilation, ceil = a.get("dilation", 1), a.get("ceil_mode", False)
    else:
        return None
    k, st, pad, dil = (pair_of(v) for v in (kernel, stride, padding, dilation))
    relu, n = False, node
    while n is not cur:
        n = next(iter(n.users))
        relu |= _is_relu(n)
    shape = _shape(cur)
    held = relu and not ceil and dil == (1, 1) and k[0] == k[1] and st[0] == st[1] and pad[0] == pad[1] \
        and shape is not None and len(shape) == 4 and not pool_field_problems(k[0], shape[3], k[0], st[0], 0, pad[0])
    return (k[0], st[0], pad[0]) if held else None


def pair_of(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _is_relu(node) -> bool:
    if node.op == "call_module":
        return isinstance(node.graph.owning_module.get_submodule(node.target), torch.nn.ReLU)
    return (node.op == "call_function" and node.target in (torch.relu, torch.nn.functional.relu)) or \
        (node.op == "call_method" and node.target == "relu")


def _edges(gm, node_instance: dict, node_kind: dict) -> list[Edge]:
    adds = (operator.add, operator.iadd, torch.add)
    chains = {("linear", "linear"): "gemm-gemm", ("pw", "pw"): "pw-pw", ("dw", "pw"): "dw-pw"}

    def through(node, views):
        """The last node of node's one-reader run of transparent ops."""
        while len(node.users) == 1 and _transparent(next(iter(node.users)), views):
            node = next(iter(node.users))
        return node
    edges, tails = [], {}
    for node, kind in node_kind.items():
        producer, words = node_instance[node], _numel(node)
        chained = through(node, views=False)
        user = next(iter(chained.users)) if len(chained.users) == 1 else None
        if user in node_kind and user.args and user.args[0] is chained and (kind, node_kind[user]) in chains:
            if _numel(user.args[0]) == words:
                edges.append(Edge(producer, chains[kind, node_kind[user]], words, consumer=node_instance[user]))
            continue
        cur = through(node, views=True)
        if len(cur.users) != 1:
            continue            # a second reader needs the intermediate in DRAM
        user = next(iter(cur.users))
        is_add = (user.op == "call_function" and user.target in adds) or \
            (user.op == "call_method" and user.target in ("add", "add_"))
        if kind in RESADD_PRODUCERS and is_add:
            if len(user.args) == 2 and all(_numel(a) == words for a in user.args):
                # the accumulator holds one operand's producer: the first argument's, else the second's
                slot = 0 if user.args[0] is cur else 1
                if user not in tails or slot < tails[user][0]:
                    tails[user] = (slot, Edge(producer, "resadd", words, op=user.name, op_reads=words,
                                              op_writes=_numel(user)))
        elif kind in ("conv", "pw") and (pool := _store_path_pool(gm, node, cur, user)) is not None:
            n, c, h, w = _shape(cur)
            tails[user] = (0, Edge(producer, "pool", words, op=user.name, op_writes=_numel(user),
                                   op_cycles=max_pool_cycles((n, h, w, c), *pool)))
    edges += [edge for _, edge in tails.values()]
    return sorted(edges, key=lambda e: (e.producer, e.consumer if e.chain else -1))


# ---- the cost of fused edges ----------------------------------------------------------------
class FusionTerms:
    """The fused network's (cycles, energy) from per-layer costs, and the capacity of fused chains,
    for B design points; one instance per FusionGraph and cycle model."""

    def __init__(self, graph: FusionGraph, cycle_model: str):
        self.graph, self.cycle_model = graph, cycle_model
        self.rate = costmodel.DRAM_WORDS_PER_CYCLE if cycle_model == "timeloop" else COMPILED_WORDS_PER_CYCLE
        E = len(graph.edges)
        self.instances = torch.tensor(graph.instances, dtype=torch.int64)
        self.producer_inst = torch.tensor([e.producer for e in graph.edges], dtype=torch.int64)
        self.producer = self.instances[self.producer_inst] if E else self.producer_inst
        chains = [k for k, e in enumerate(graph.edges) if e.chain]
        self.chains = torch.tensor(chains, dtype=torch.int64)
        self.chain_producer = self.producer[self.chains] if chains else self.chains
        self.chain_consumer_inst = torch.tensor([graph.edges[k].consumer for k in chains], dtype=torch.int64)
        self.chain_consumer = self.instances[self.chain_consumer_inst] if chains else self.chain_consumer_inst
        # the edges whose fused program's footprint is checked: the chains and the residual adds
        held = [k for k, e in enumerate(graph.edges) if e.chain or e.kind == "resadd"]
        self.held = torch.tensor(held, dtype=torch.int64)
        self.held_edge = torch.tensor([k in held for k in range(E)], dtype=torch.bool)
        # the layers whose traffic an edge changes: its producer's, a chain's consumer's
        self.touched = sorted({graph.instances[i] for e in graph.edges
                               for i in [e.producer] + ([e.consumer] if e.chain else [])})
        self.tails = torch.tensor([k for k, e in enumerate(graph.edges) if not e.chain], dtype=torch.int64)
        self.words = torch.tensor([float(e.words) for e in graph.edges], dtype=torch.float64)
        self.op_words = torch.tensor([float(e.op_reads + e.op_writes) for e in graph.edges], dtype=torch.float64)
        # under the compiled-program model a pool's op unfused is the core's max pool (its cycles, no
        # Gemmini energy: cpu_ops.max_pool2d, as the compiler runs it), fused the conv's pooled store
        self.on_core = torch.tensor([e.kind == "pool" and cycle_model != "timeloop" for e in graph.edges],
                                    dtype=torch.bool)
        self.op_cycles = torch.tensor([float(e.op_cycles) for e in graph.edges], dtype=torch.float64)
        self._loop_programs, self._loop_footprints, self._chain_programs = {}, {}, {}

    def loop_programs(self, hw: Hardware | None) -> dict:
        """{edge index: (end-to-end cycles, energy µJ)} of the chain edges whose fused program runs
        on the loop unit of the Gemmini hw (loop_chain_blocks), under the compiled-program model:
        constants per edge (the program's blocks are its own, not the producer's tile), which the
        fused network takes in place of its two layers' (network's `programs`). Empty for
        the Timeloop-matched model, no hardware (None) or a Gemmini without the ext-spad
        commands. Cached per hardware."""
        if hw is None or not hw.ext_spad or self.cycle_model == "timeloop":
            return {}
        if hw not in self._loop_programs:
            layer = lambda i: self.graph.layers[self.graph.instances[i]]  # noqa: E731
            self._loop_programs[hw] = {
                k: (fused_program_cycles(self.graph, e, None, hw), loop_chain_energy(self.graph, e, hw))
                for k, e in enumerate(self.graph.edges)
                if e.kind in LOOP_CHAIN_KINDS and loop_chain_blocks(layer(e.producer), layer(e.consumer), hw)}
        return self._loop_programs[hw]

    def chain_programs(self, temporal, spatial, hardware: list) -> list:
        """Each point's {edge index: (end-to-end cycles, energy µJ)} of the chain edges whose fused
        program is the explicit chain's (not on the point's loop unit: loop_programs) under the
        compiled-program model: gemm_chain_program_cycles and the program's counts priced
        (fused_counts.gemm_chain_counts) at the producer's L2 tile, as fuse_result prices the
        design (fused_program_cycles, fused_program_energy). Empty for the Timeloop-matched model.
        Cached per edge, blocks and hardware (the descent revisits the same rounded tiles every step)."""
        if self.cycle_model == "timeloop" or not len(self.chains):
            return [{} for _ in hardware]
        points = []
        for b, hw in enumerate(hardware):
            looped, point = self.loop_programs(hw), {}
            for k in self.chains.tolist():
                e = self.graph.edges[k]
                if k in looped or e.kind not in LOOP_CHAIN_KINDS:
                    continue
                i = self.graph.instances[e.producer]
                layer, consumer = self.graph.layers[i], self.graph.layers[self.graph.instances[e.consumer]]
                t = temporal[i][b, :3, :].detach().prod(0)
                block_m = math.prod(min(round(float(t[d])), extent)
                                    for d, extent in ((N_, layer.N), (P_, layer.P), (Q_, layer.Q)))
                block_k = min(round(float(t[C_] * spatial[i][b, 0].detach())), layer.C)
                key = (k, block_m, block_k, hw)
                if key not in self._chain_programs:
                    shape, cfg = (layer.N * layer.P * layer.Q, layer.C, layer.K, consumer.K), hw.to_gemmini_config()
                    self._chain_programs[key] = (gemm_chain_program_cycles(*shape, block_m, block_k, cfg)["cycles"],
                                                 counts_energy_uj(gemm_chain_counts(*shape, block_m, block_k, cfg), cfg))
                point[k] = self._chain_programs[key]
            points.append(point)
        return points

    def loop_footprint(self, k: int, hw: Hardware) -> tuple[int, int] | None:
        """(scratchpad rows, accumulator rows) one program of chain edge k's loop form holds on hw
        (gemm_chain_loop_ws_footprint at its own blocks, loop_chain_blocks), None where it does not
        run on hw's loop unit. Cached per edge and hardware."""
        if (k, hw) not in self._loop_footprints:
            e = self.graph.edges[k]
            producer, consumer = (self.graph.layers[self.graph.instances[i]] for i in (e.producer, e.consumer))
            loop = loop_chain_blocks(producer, consumer, hw)
            need = None if loop is None else \
                gemm_chain_loop_ws_footprint(loop.block_m, 1, producer.C, producer.K, consumer.K, hw.pe_dim)
            self._loop_footprints[k, hw] = None if need is None else (need.sp_rows, need.acc_rows)
        return self._loop_footprints[k, hw]

    def traffic(self, layer_stack, temporal, spatial, order, hw_t) -> dict:
        """Per layer [L, B], from the Timeloop-matched access counting (costmodel.cost_from_factors,
        one stacked call over per-layer lists): "fills", the DRAM input fills; "floor", the cycles
        that wait on no DRAM traffic; and that model's "cycles" and "energy_uj"."""
        L, B = len(temporal), temporal[0].shape[0]
        hw = tuple(torch.as_tensor(h, dtype=torch.float64).expand(B).repeat(L) for h in hw_t)
        out = costmodel.cost_from_factors(layer_stack, torch.cat(temporal), torch.cat(spatial)[:, 0],
                                          torch.cat(spatial)[:, 1], order, hw)
        times = out["level_cycles"]
        floor = times[0] if self.cycle_model != "timeloop" else torch.stack([times[0], times[2], times[3]]).amax(0)
        return {"fills": out["dram_input"].reshape(L, B), "floor": floor.reshape(L, B),
                "cycles": out["cycles"].reshape(L, B), "energy_uj": out["energy_uj"].reshape(L, B)}

    def held_needs(self, temporal, spatial, dim, hw: Hardware | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(scratchpad KB, accumulator KB) [H, B] one program of each held edge's fused kernel
        holds (baco.gemmini.fused): at the producer's L2 tile (the blocks the compiler runs it with:
        its schedule's block_m, block_n, block_k), a chain's hidden and output widths whole; dim:
        the array's rows (a number or [B]). On a Gemmini `hw` (every point's, or a list of each
        point's) with the ext-spad commands, a chain that runs on the loop unit (loop_footprint)
        holds its loop form's program, whose blocks the compiler picks whatever the producer's tile."""
        B = temporal[0].shape[0]
        hws = [hw] * B if isinstance(hw, Hardware) else list(hw or [])
        if not len(self.held):
            return torch.zeros(0, B, dtype=torch.float64), torch.zeros(0, B, dtype=torch.float64)
        sp, acc = [], []
        for k in self.held.tolist():
            e = self.graph.edges[k]
            layer_index = self.graph.instances[e.producer]
            t = temporal[layer_index][:, :3, :].prod(1)
            dims = self.graph.layers[layer_index]
            clamp = lambda f, d: torch.minimum(f, torch.tensor(float(d), dtype=torch.float64))  # noqa: E731
            block_m = clamp(t[:, N_], dims.N) * clamp(t[:, P_], dims.P) * clamp(t[:, Q_], dims.Q)
            block_k = clamp(t[:, C_] * spatial[layer_index][:, 0], dims.C)
            if e.kind == "dw-pw":      # the kernel's blocks shrink to fit: its smallest program
                d = torch.as_tensor(dim, dtype=torch.float64).expand(B)
                f = dw_pw_footprint(d, d, d)
            elif e.chain:
                consumer = self.graph.layers[self.graph.instances[e.consumer]]
                f = gemm_chain_footprint(block_m, block_k, dims.K, consumer.K, dim)
                loops = [self.loop_footprint(k, h) for h in hws]
                if any(loops):      # the loop form's blocks are its own, whatever the producer's tile
                    on = torch.tensor([x is not None for x in loops])
                    rows = torch.tensor([x or (0, 0) for x in loops], dtype=torch.float64)
                    f = Footprint(torch.where(on, rows[:, 0], f.sp_rows), torch.where(on, rows[:, 1], f.acc_rows))
            else:
                f = gemm_resadd_footprint(block_m, clamp(t[:, K_] * spatial[layer_index][:, 1], dims.K), block_k, dim)
            sp.append(rows_to_kb(f.sp_rows, dim, "int8"))
            acc.append(rows_to_kb(f.acc_rows, dim, "int32"))
        return torch.stack(sp), torch.stack(acc)

    def round(self, sigma, fits, mask=None, fill=True):
        """sigma_eff [B, E]: the rounded fusion as the value, sigma's gradient. The preferred edges
        (sigma >= 0.5, or `mask`) are fused where the held edge fits (fits [B, H]) and their layers
        are free (a layer instance in at most one fused edge, the first in order keeping it); then
        each other edge of `fill` (True: every edge; False: none; or a bool [E]) that fits and
        whose layers are still free: at fixed mappings on a fixed Gemmini a fused edge only
        removes DRAM traffic, so leaving one unfused could only lose (sigma decides between
        rivals sharing a layer)."""
        B, E = sigma.shape
        preferred = (sigma.detach() >= 0.5) if mask is None else mask.expand(B, E).clone()
        allowed = torch.ones(B, E, dtype=torch.bool)
        if len(self.held):
            allowed[:, self.held] = fits
        fill = torch.full((E,), bool(fill)) if isinstance(fill, bool) else torch.as_tensor(fill, dtype=torch.bool)
        on = torch.zeros(B, E, dtype=torch.bool)
        taken = torch.zeros(B, len(self.graph.instances), dtype=torch.bool)
        for wanted in (preferred, fill.expand(B, E)):
            for k, e in enumerate(self.graph.edges):
                members = [e.producer] + ([e.consumer] if e.chain else [])
                add = wanted[:, k] & allowed[:, k] & ~on[:, k] & ~taken[:, members].any(1)
                on[:, k] |= add
                taken[:, members] |= add.unsqueeze(1)
        return on.to(sigma.dtype) + (sigma - sigma.detach())

    def network(self, cycles, energy, fills, floor, sigma, sp_kb, programs=None,
                tie_weight: float = 0.0, chain_programs=None) -> tuple[torch.Tensor, torch.Tensor]:
        """The fused network's (cycles [B], energy µJ [B]) from one instance's per-layer (cycles,
        energy, fills, floor) [L, B] and sigma [B, E] (sp_kb [B]: the scratchpad the on-chip copy
        writes). programs: loop_programs' {edge: (cycles, energy)} (every point's, or a list of each
        point's); such an edge, fused, takes its program's cycles and energy in place of its two
        layers' (none of the traffic model's terms: its program's counts are what it moves), plus
        tie_weight times theirs (the search's LOOP_LAYERS_TIE_WEIGHT; 0: the exact cost).
        chain_programs: chain_programs' list of each point's {edge: (cycles, energy)}; such an edge,
        fused, takes its explicit program's cycles and energy in place of its two layers' (none of
        the traffic model's terms either, as fuse_result's)."""
        inst_cycles = cycles[self.instances]
        inst_floor = floor[self.instances]
        B = cycles.shape[1]
        saved = torch.zeros(len(self.graph.instances), B, dtype=torch.float64)
        energy_pj = torch.zeros(B, dtype=torch.float64)
        extra_cycles = torch.zeros(B, dtype=torch.float64)
        looped, program, program_uj = self._program_table(programs, B)
        explicit, explicit_cycles, explicit_uj = self._program_table(chain_programs if chain_programs and
                                                                     any(chain_programs) else None, B)
        if len(self.graph.edges):
            s = sigma.t()                                                   # [E, B]
            w = self.words.unsqueeze(1)
            s_saved = torch.where(looped, 0.0, s)       # the loop programs' edges save nothing here
            # nor the explicit chains' energy (their program's counts are what they move)
            s_energy = torch.where(explicit, 0.0, s_saved)
            saved = saved.index_add(0, self.producer_inst, s_saved * w / self.rate)   # the write-back
            energy_pj = energy_pj - (s_energy * w).sum(0) * DRAM_PJ
            if len(self.chains):
                sc, se = s_saved[self.chains], s_energy[self.chains]
                f = fills[self.chain_consumer]
                saved = saved.index_add(0, self.chain_consumer_inst, sc * f / self.rate)  # re-fills
                energy_pj = energy_pj + (se * (-f * DRAM_PJ + (w[self.chains] - f) * scratchpad_pj(sp_kb))).sum(0)
            if len(self.tails):
                # the op: its residual read and output write either way, the intermediate's read
                # unfused; a pool on the core (on_core) its pooled store fused, the core's cycles unfused
                st, wt, ow = s[self.tails], w[self.tails], self.op_words[self.tails].unsqueeze(1)
                on_core = self.on_core[self.tails].unsqueeze(1)
                op_words = torch.where(on_core, st * ow, ow + (1 - st) * wt)
                core = torch.where(on_core, (1 - st) * self.op_cycles[self.tails].unsqueeze(1), 0.0)
                extra_cycles = (op_words / self.rate + core).sum(0)
                energy_pj = energy_pj + (op_words * DRAM_PJ).sum(0)
        fused = torch.maximum(torch.minimum(inst_floor, inst_cycles), inst_cycles - saved)
        inst_energy = energy[self.instances]
        extra_uj = torch.zeros(B, dtype=torch.float64)
        if bool(looped.any()):
            c = self.chains
            pair = lambda x: x[self.producer_inst[c]] + x[self.chain_consumer_inst]  # noqa: E731
            kept = 1.0 - tie_weight
            extra_cycles = extra_cycles + torch.where(looped[c], s[c] * (program[c] - kept * pair(fused)), 0.0).sum(0)
            extra_uj = torch.where(looped[c], s[c] * (program_uj[c] - kept * pair(inst_energy)), 0.0).sum(0)
        if bool(explicit.any()):
            c = self.chains
            pair = lambda x: x[self.producer_inst[c]] + x[self.chain_consumer_inst]  # noqa: E731  [chains, B]
            extra_cycles = extra_cycles + torch.where(explicit[c], s[c] * (explicit_cycles[c] - pair(fused)), 0.0).sum(0)
            extra_uj = extra_uj + torch.where(explicit[c], s[c] * (explicit_uj[c] - pair(inst_energy)), 0.0).sum(0)
        return fused.sum(0) + extra_cycles, inst_energy.sum(0) + energy_pj * 1e-6 + extra_uj

    def _program_table(self, programs, B: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(looped [E, B] bool, cycles [E, B], energy µJ [E, B]) of network's `programs`: the edges
        each point runs as a loop program, their cycles and energy (0 elsewhere)."""
        E = len(self.graph.edges)
        looped = torch.zeros(E, B, dtype=torch.bool)
        cycles, energy_uj = torch.zeros(E, B, dtype=torch.float64), torch.zeros(E, B, dtype=torch.float64)
        for b, point in ([(slice(None), programs or {})] if not isinstance(programs, list) else enumerate(programs)):
            for k, (c, e) in point.items():
                looped[k, b], cycles[k, b], energy_uj[k, b] = True, c, e
        return looped, cycles, energy_uj

    def capacity_penalty(self, sigma, sp_need, acc_need, sp_cap, acc_cap) -> torch.Tensor:
        """The relaxation's penalty [B]: each held edge's over-use of the buffers, weighted by its sigma."""
        if not len(self.held):
            return torch.zeros(sigma.shape[0], dtype=torch.float64)
        over = capacity_penalty(sp_need, sp_cap) + capacity_penalty(acc_need, acc_cap)     # [C, B]
        return (sigma[:, self.held].t() * over).sum(0)


def fused_cost(problem, temporal, spatial, order, order_table, smooth: bool, sigma=None):
    """explore.NetworkProblem.cost with fusion (problem.fusion a FusionGraph): the hardware (fixed,
    or inferred from every layer's needs and the fused chains'), the network's fused cycles and
    energy, the rounded fusion [B, E], and the relaxation's penalty. sigma [B, E] (the descent's
    continuous variables) or None: problem.fusion_mask, where it fits (the discrete phases).
    order_table: costmodel.order_index of each canonical order choice (explore's)."""
    terms = problem.fusion_terms
    B, L, E = temporal[0].shape[0], len(problem.layers), len(problem.fusion.edges)
    pe = torch.stack([s.max(1).values for s in spatial]).max(0).values
    rows_of = problem.array_rows(pe)
    sp, acc = problem.buffer_needs(temporal, spatial, rows_of)
    fixed = problem.fixed_hw
    # searched Gemminis with the ext-spad commands: a chain runs on the loop unit where its program
    # fits the Gemmini the layers alone need (each point's; its blocks its own), and is priced on
    # the Gemmini the point rounds to, the one the design's final costing (fuse_result) sees
    looping = fixed is None and problem.ext_spad and any(e.kind in LOOP_CHAIN_KINDS for e in problem.fusion.edges)
    layers_hw = problem.infer_hardware(pe, sp, acc, False)[0] if looping else fixed
    sp_chain, acc_chain = terms.held_needs(temporal, spatial, rows_of, layers_hw)
    sp_cap, acc_cap = (fixed.sp_kb, fixed.acc_kb) if fixed else (MAX_BUFFER_KB, MAX_BUFFER_KB)
    fits = ((sp_chain <= sp_cap + 1e-9) & (acc_chain <= acc_cap + 1e-9)).t()          # [B, C]
    relaxed = sigma is not None
    if not relaxed:
        sigma = problem.fusion_mask.to(torch.float64).expand(B, E)
    # on inferred hardware a fused held edge grows the buffers: only sigma fuses it; nor is a loop
    # program's edge filled in (its program may be slower than its layers: not only traffic removed)
    programs = terms.loop_programs(fixed)
    fill = (torch.tensor([k not in programs for k in range(E)]) if programs else True) if fixed else ~terms.held_edge
    on = terms.round(sigma, fits, None if relaxed else problem.fusion_mask, fill=fill)

    def priced(on):
        """(hardware, penalty, cycles, energy) of the points with the fusion `on` [B, E]."""
        if fixed is None and len(terms.held):
            # the inferred hardware holds the fused programs too (their need where fused, else nothing)
            sp_all = torch.cat([sp, on[:, terms.held].t() * sp_chain])
            acc_all = torch.cat([acc, on[:, terms.held].t() * acc_chain])
        else:
            sp_all, acc_all = sp, acc
        hardware, hw_t, penalty = problem.infer_hardware(pe, sp_all, acc_all, smooth)
        point_programs = [terms.loop_programs(h) for h in hardware] if looping else programs
        if problem.cycle_model == "timeloop":   # the same stacked call NetworkCost makes: not twice
            traffic = terms.traffic(problem.network_cost.stack(list(range(L)), B) if L > 1 else problem.layers[0],
                                    temporal, spatial, order_table[torch.cat(order)], hw_t)
            cycles, energy, fills, floor = (traffic[k] for k in ("cycles", "energy_uj", "fills", "floor"))
        else:
            cycles, energy = problem.network_cost.per_layer(temporal, spatial, order, hw_t, weighted=False)
            # the traffic terms of the layers an edge touches only (the others save nothing: a floor of 0
            # leaves their cycles and gradients as they are)
            touched = terms.touched
            part = terms.traffic(problem.network_cost.stack(touched, B) if len(touched) > 1
                                 else problem.layers[touched[0]], [temporal[i] for i in touched],
                                 [spatial[i] for i in touched], order_table[torch.cat([order[i] for i in touched])],
                                 hw_t)
            fills, floor = torch.zeros_like(cycles), torch.zeros_like(cycles)
            fills[touched], floor[touched] = part["fills"], part["floor"]
        return (hardware, penalty, *terms.network(cycles, energy, fills, floor, on, hw_t[1], point_programs,
                                                  LOOP_LAYERS_TIE_WEIGHT,
                                                  terms.chain_programs(temporal, spatial, hardware)))

    hardware, penalty, net_cycles, net_energy = priced(on)
    if not relaxed and fixed is None and len(terms.held) and B == 1:
        # a design costed alone on inferred hardware (the result): also with every held edge that
        # fits fused (the buffers grown to hold them), the better of the two kept. Not for batches
        # (the polish's moves): costing each twice halves what a time budget searches
        grown = terms.round(sigma, fits, problem.fusion_mask, fill=True)
        g_hardware, g_penalty, g_cycles, g_energy = priced(grown)
        edp = torch.where(penalty > 0, torch.inf, net_cycles * net_energy)
        better = torch.where(g_penalty > 0, torch.inf, g_cycles * g_energy) < edp
        hardware = [g if b else h for g, h, b in zip(g_hardware, hardware, better.tolist())]
        penalty, net_cycles, net_energy = (torch.where(better, x, y) for x, y in
                                           ((g_penalty, penalty), (g_cycles, net_cycles), (g_energy, net_energy)))
        on = torch.where(better.unsqueeze(1), grown, on)
    relaxation = terms.capacity_penalty(sigma, sp_chain, acc_chain, sp_cap, acc_cap) if relaxed else None
    edp = net_cycles * net_energy
    if relaxed:
        valid = torch.where(penalty > 0, torch.inf, edp.detach())
        low, arg = valid.min(0)
        if float(low) < problem.best_edp:
            problem.fusion_mask = on[int(arg)].detach() > 0.5     # the fusion of the best point so far
    problem.note(edp, penalty)
    return hardware, net_cycles, net_energy, penalty, on.detach() > 0.5, relaxation


def loop_chain_blocks(producer: Layer, consumer: Layer, hw: Hardware):
    """The row blocks of a chain edge's program on the loop unit on hw (gemm_chain_loop_ws_blocks,
    as the compiler's gemm_chain_launch picks them): None without the ext-spad commands or where
    its DIM-row block does not fit (the explicit chain then)."""
    if not hw.ext_spad:
        return None
    return gemm_chain_loop_ws_blocks(producer.N * producer.P * producer.Q, producer.C, producer.K, consumer.K,
                                     hw.to_gemmini_config())


def fused_program_blocks(graph: FusionGraph, edge: Edge, mapping, hw, default: bool = False) -> dict | None:
    """The blocks a held edge's explicit fused program (baco.kernels.fused: the GEMM chain's
    BLOCK_M, BLOCK_K as gemm_chain_blocks makes them fit, the GEMM + residual add's BLOCK_M,
    BLOCK_N, BLOCK_K) runs with: the producer's L2 tile (its mapping's), or with `default` the
    kernels' default blocks (fused.CHAIN_DEFAULT_BLOCKS, gemm_resadd_default_blocks). None for a
    program whose blocks are its own (a depthwise -> pointwise pair's, a chain on hw's loop unit)
    and for a chain whose program does not fit hw at any blocks; a residual add's blocks may not
    fit (fused_blocks_fit)."""
    layer = graph.layers[graph.instances[edge.producer]]
    if edge.kind == "dw-pw":
        return None
    consumer = graph.layers[graph.instances[edge.consumer]] if edge.chain else None
    if edge.chain and loop_chain_blocks(layer, consumer, hw) is not None:
        return None
    cfg, M = hw.to_gemmini_config(), layer.N * layer.P * layer.Q
    if default:
        (block_m, block_k), block_n = CHAIN_DEFAULT_BLOCKS, None
        if not edge.chain:
            block_m, block_n, block_k = gemm_resadd_default_blocks(M, layer.K, layer.C, cfg)
    else:
        t = tile_dims(mapping, 2, layer)
        block_m, block_n, block_k = t["N"] * t["P"] * t["Q"], t["K"], t["C"]
    if edge.chain:
        blocks = gemm_chain_blocks(M, layer.C, layer.K, consumer.K, block_m, block_k, cfg)
        return None if blocks is None else dict(zip(EDGE_BLOCKS[edge.kind], blocks))
    return dict(zip(EDGE_BLOCKS[edge.kind], (block_m, block_n, block_k)))


def fused_blocks_fit(edge: Edge, blocks: dict, hw) -> bool:
    """Whether one program of a held edge's fused kernel at `blocks` (fused_program_blocks') fits
    hw, by the capacity rule its launch checks (a chain's blocks fit by construction)."""
    if edge.chain:
        return True
    cfg = hw.to_gemmini_config()
    f = gemm_resadd_footprint(blocks["block_m"], blocks["block_n"], blocks["block_k"], cfg.dim)
    return not capacity_problems(cfg, f.sp_rows, f.acc_rows)


def fused_program_cycles(graph: FusionGraph, edge: Edge, mapping, hw, default: bool = False,
                         blocks: dict | None = None) -> float:
    """End-to-end cycles (Gemmini's and the core's issuing) of a held edge's fused program
    (baco.gemmini.fused's models of baco.kernels.fused) at the producer's L2 tile (its mapping's: the
    blocks the compiler runs it with; a depthwise -> pointwise pair at the blocks its kernel picks;
    a chain on the loop unit, on hw with the ext-spad commands where it fits, at its own blocks)
    on hardware hw. `default`: the producer is marked to run its kernel's default program
    (Cost.schedule_source "default"), so the compiler has no schedule for it and the fused program
    runs the kernels' default blocks (fused.CHAIN_DEFAULT_BLOCKS, gemm_resadd_default_blocks), not
    the mapping's tile (MobileNetV2 64x64's features.3 project conv + add priced 11,776 cycles at
    its tile, running 23,298 at the default 32/32/48 on the ISS), unless the design records the
    blocks it runs on the edge (fuse_result: the faster of the two). `blocks`: those blocks
    (fused_program_blocks'), in place of the tile's or the default's."""
    layer = graph.layers[graph.instances[edge.producer]]
    cfg = hw.to_gemmini_config()
    if edge.kind == "dw-pw":
        return dw_pw_cycles(layer, graph.layers[graph.instances[edge.consumer]].K, cfg)
    M = layer.N * layer.P * layer.Q
    consumer = graph.layers[graph.instances[edge.consumer]] if edge.chain else None
    if edge.chain and loop_chain_blocks(layer, consumer, hw) is not None:     # (no mapping needed)
        return gemm_chain_loop_ws_program_cycles(M, layer.C, layer.K, consumer.K, cfg)["cycles"]
    if blocks is None:
        blocks = fused_program_blocks(graph, edge, mapping, hw, default)
    if blocks is None:      # a chain that fits at no blocks
        return math.inf
    if edge.chain:
        return gemm_chain_program_cycles(M, layer.C, layer.K, consumer.K, blocks["block_m"], blocks["block_k"],
                                         cfg)["cycles"]
    return gemm_resadd_program_cycles(M, layer.K, layer.C, blocks["block_m"], blocks["block_n"], blocks["block_k"],
                                      cfg)["cycles"]


def fused_program_energy(graph: FusionGraph, edge: Edge, mapping, hw, default: bool = False,
                         blocks: dict | None = None) -> float:
    """Energy (µJ) of a residual add's or chain's fused program under the compiled-program model,
    at the blocks fused_program_cycles prices it at: the program's counts (baco.gemmini.fused_counts,
    the cycle model's counts of its commands: the identity products and the operands' loads of a
    residual add, X re-read from DRAM per column block) priced by energy_pj; a chain on hw's loop
    unit, loop_chain_energy. inf for a chain that fits at no blocks."""
    layer = graph.layers[graph.instances[edge.producer]]
    cfg, M = hw.to_gemmini_config(), layer.N * layer.P * layer.Q
    consumer = graph.layers[graph.instances[edge.consumer]] if edge.chain else None
    if edge.chain and loop_chain_blocks(layer, consumer, hw) is not None:
        return loop_chain_energy(graph, edge, hw)
    if blocks is None:
        blocks = fused_program_blocks(graph, edge, mapping, hw, default)
    if blocks is None:
        return math.inf
    if edge.chain:
        counts = gemm_chain_counts(M, layer.C, layer.K, consumer.K, blocks["block_m"], blocks["block_k"], cfg)
    else:
        counts = gemm_resadd_counts(M, layer.K, layer.C, blocks["block_m"], blocks["block_n"], blocks["block_k"], cfg)
    return counts_energy_uj(counts, cfg)


def loop_chain_energy(graph: FusionGraph, edge: Edge, hw) -> float:
    """Energy (µJ) of a chain edge's fused program on the loop unit of hw (its own blocks,
    loop_chain_blocks; kernel_model.gemm_chain_loop_ws_energy: the cycle model's counts of it, H
    stored into the scratchpad), less its bias rows' moves where the layers have no bias
    (Layer.bias: the energies it replaces then omit theirs; both forms move one int32 an output)."""
    producer, consumer = (graph.layers[graph.instances[i]] for i in (edge.producer, edge.consumer))
    return gemm_chain_loop_ws_energy(producer.N * producer.P * producer.Q, producer.C, producer.K, consumer.K,
                                     hw.to_gemmini_config(), bias=producer.bias and consumer.bias)


def dw_pw_cycles(depthwise: Layer, out_channels: int, cfg: GemminiConfig) -> float:
    """End-to-end cycles of the fused depthwise -> pointwise program of a depthwise layer (K its
    channels) and a 1x1 convolution of out_channels, at the blocks its kernel picks on cfg
    (dw_pw_blocks); inf if no program fits. A padded layer (Layer.padding) runs on its image with
    its padding; an unpadded one (a table without padding) is taken as 'same'-padded (input rows
    P x stride, padding (R - 1) x dilation / 2), MobileNet's."""
    d = depthwise
    rows, padding = (d.image_rows, d.padding) if d.padding else (d.P * d.Hstride, (d.R - 1) * d.Hdilation // 2)
    shape = (d.N, rows, d.P, d.Q, d.K, out_channels, d.R, d.S, d.Hstride, padding, d.Hdilation)
    blocks = dw_pw_blocks(*shape, cfg)
    return math.inf if blocks is None else dw_pw_program_cycles(*shape, blocks, cfg)["cycles"]


def _design_network(problem, result):
    """(network, temporal, spatial, cycles) of one design (explore.Result): network(sigma [1, E],
    programs=None) its fused (cycles, energy µJ) by FusionTerms.network on its exact per-layer
    costs (programs: its loop_programs, or none: the traffic model alone); the mapping
    tensors [1, ...] per layer and the per-layer cycles [L, 1]."""
    terms, hw = problem.fusion_terms, result.hw
    tensors = [costmodel.mapping_tensors(m) for m in result.mappings]
    temporal = [t for t, _, _ in tensors]
    spatial = [torch.stack([c, k], dim=1) for _, c, k in tensors]
    order = torch.cat([costmodel.order_index(m.order, 1) for m in result.mappings])
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
    L = len(problem.layers)
    traffic = terms.traffic(problem.network_cost.stack(list(range(L)), 1) if L > 1 else problem.layers[0],
                            temporal, spatial, order, hw_t)
    cycles = torch.tensor([[c.cycles] for c in result.per_layer], dtype=torch.float64)
    energy = torch.tensor([[c.energy_uj] for c in result.per_layer], dtype=torch.float64)

    def network(sigma, programs=None):
        return [float(x[0]) for x in terms.network(cycles, energy, traffic["fills"], traffic["floor"], sigma, hw_t[1],
                                                   programs)]
    return network, temporal, spatial, cycles


def removable_saving(problem, result) -> float:
    """The most fusion can save of the EDP of `result`'s mappings and hardware under the traffic
    model: 1 - EDP with every edge fused (capacity and the one-edge-per-layer rule ignored: all the
    intermediates' DRAM traffic gone) / EDP unfused. An upper bound on the saving at these
    mappings (mappings that differ have their own)."""
    with torch.no_grad():
        network = _design_network(problem, result)[0]
        E = len(problem.fusion.edges)
        (c0, e0), (c1, e1) = (network(torch.full((1, E), s, dtype=torch.float64)) for s in (0.0, 1.0))
    return 1 - c1 * e1 / (c0 * e0)


def fuse_result(problem, result, mask, require_gain: bool = True, fill: bool = True) -> None:
    """Make `result` (a design of problem.layers, explore.Result) the fused network's, fusing the
    edges of `mask` [E] that fit its hardware (with `fill`, then every other edge that fits and
    whose layers are free: FusionTerms.round), and result.fusion: the edges (a fused one with
    "group_cycles", the predicted cycles of its group's program, and "unfused_group_cycles", its
    layers' and op's unfused; a group priced by its program's energy, "group_energy_uj" and
    "unfused_group_energy_uj"), the fused groups and the design's totals unfused. Energy:
    FusionTerms.network on its exact per-layer costs; under the compiled-program model a fused
    chain's or residual add's is its program's (fused_program_energy: its command stream's counts;
    a loop-form chain's, loop_programs) in place of its layers' and op's. Cycles: the
    Timeloop-matched model's network; the compiled program's, each fused group's program as
    baco.gemmini.fused models it (fused_program_cycles; a pool's, the network's conv with its
    pooled store) in place of its layers' and op's cycles unfused (a pool's: the conv and the
    core's max pool), and an edge whose fused program is not faster than that (a chain or residual
    add: whose EDP fused alone is not lower, its energy being its program's) stays unfused (the
    exact check at rounding: a fusion the compiled program would lose is not chosen) unless
    require_gain=False (what fusing costs: every edge of `mask` that fits, _block_choices' fallback).
    A group whose producer runs its kernel's default program (no schedule in the design) runs its
    explicit fused program at the kernels' default blocks or the producer's tile, whichever program
    has the lower EDP (_group_program); its edge records them ("blocks", "blocks_source" "default" | "tile"), which
    baco.model.lower runs (MobileNetV2 64x64's features.3 + add: 24,207 cycles at 32/32/48, 11,776 at its tile)."""
    terms, hw, graph = problem.fusion_terms, result.hw, problem.fusion
    with torch.no_grad():
        network, temporal, spatial, cycles = _design_network(problem, result)
        sp_chain, acc_chain = terms.held_needs(temporal, spatial, float(hw.pe_dim), hw)
        fits = ((sp_chain <= hw.sp_kb + 1e-9) & (acc_chain <= hw.acc_kb + 1e-9)).t()
        choices = _block_choices(problem, result, fits, fallback=not require_gain)
        on = terms.round(torch.as_tensor(mask, dtype=torch.float64).reshape(1, -1),
                         fits, torch.as_tensor(mask, dtype=torch.bool).reshape(1, -1), fill)
        unfused = network(torch.zeros_like(on))
        group_unfused = lambda k: _unfused_group(problem, result, k)[0]  # noqa: E731
        group_unfused_energy = lambda k: _unfused_group(problem, result, k)[1]  # noqa: E731
        programs = terms.loop_programs(hw)

        def gains(k: int, program: float, energy: float | None) -> bool:
            """Fusing edge k alone lowers the design's cycles (a pool's: energy the traffic model's) or,
            a group whose energy is its program's (which may be more where its cycles are less, or
            less where they are more), its EDP: as the search weighs it."""
            fused_cycles = unfused[0] - group_unfused(k) + program
            if k in programs:
                alone = torch.zeros_like(on)
                alone[0, k] = 1.0
                return fused_cycles * network(alone, programs)[1] < unfused[0] * unfused[1]
            if energy is None:
                return program < group_unfused(k)
            return fused_cycles * (unfused[1] - group_unfused_energy(k) + energy) < unfused[0] * unfused[1]
        group_cycles, group_energy, chosen_blocks = {}, {}, {}
        for k, e in enumerate(graph.edges):
            if not bool(on[0, k]):
                continue
            energy = None
            if problem.cycle_model == "timeloop" or e.kind == "pool":
                # its layers and op less what fusing this edge alone saves (a pool under the compiled
                # model: its conv's pooled program, weighed against the conv and the core's max pool)
                alone = torch.zeros_like(on)
                alone[0, k] = 1.0
                program = group_unfused(k) + network(alone)[0] - unfused[0]
            else:   # (no dw-pw edge under the compiled model: search_graph)
                program, energy, chosen_blocks[k] = _group_program(graph, e, result, choices.get(k))
            if problem.cycle_model == "timeloop" or not require_gain or gains(k, program, energy):
                group_cycles[k] = program
                if energy is not None and k not in programs:
                    group_energy[k] = energy
            else:
                on[0, k] = 0.0
        # a fused loop-form chain's energy is its program's (its cycles too, replaced below as every
        # group's); an explicit chain's or residual add's too, in place of its layers' and op's unfused
        totals = {"fused": network(on - _edges_on(on, group_energy), programs), "unfused": unfused}
        totals["fused"][1] += sum(energy - group_unfused_energy(k) for k, energy in group_energy.items())
        traffic_energy = network(on, programs)[1]      # (those groups' energy the traffic model's)
        if problem.cycle_model != "timeloop":
            # each fused group's program replaces its layers and op (groups are disjoint pairs)
            totals["fused"][0] = unfused[0] - sum(group_unfused(k) - c for k, c in group_cycles.items())
    result.cycles, result.energy_uj = totals["fused"]
    result.edp = result.cycles * result.energy_uj
    unfused_cycles, unfused_energy = totals["unfused"]
    info = _fused_info(problem, result, on, group_cycles, group_energy, chosen_blocks)
    result.fusion = {**info, "unfused_cycles": unfused_cycles, "unfused_energy_uj": unfused_energy,
                     "traffic_energy_uj": traffic_energy,
                     "unfused_edp": unfused_cycles * unfused_energy}


def _fused_info(problem, result, on, group_cycles: dict, group_energy: dict, chosen_blocks: dict) -> dict:
    """fuse_result's describe() of its fusion `on` [1, E], each fused group's edge with its program's
    predicted cycles (and energy, where its own) beside its layers' and op's unfused, and its blocks."""
    info = describe(problem.fusion, (on[0] > 0.5).tolist())
    for k, c in group_cycles.items():
        unfused_cycles, unfused_energy = _unfused_group(problem, result, k)
        info["edges"][k].update(group_cycles=c, unfused_group_cycles=unfused_cycles)
        if k in group_energy:
            info["edges"][k].update(group_energy_uj=group_energy[k], unfused_group_energy_uj=unfused_energy)
        if chosen_blocks.get(k):
            blocks, source = chosen_blocks[k]
            info["edges"][k].update(blocks=blocks, blocks_source=source)
    return info


def _unfused_group(problem, result, k: int) -> tuple[float, float]:
    """(cycles, energy µJ) of edge k's layers and its op unfused on result's design: the op's DRAM
    traffic (a pool on the core: its cycles, no Gemmini energy), as FusionTerms.network prices it."""
    graph, terms = problem.fusion, problem.fusion_terms
    e = graph.edges[k]
    layers = [result.per_layer[graph.instances[i]] for i in [e.producer] + ([e.consumer] if e.chain else [])]
    cycles, energy = sum(c.cycles for c in layers), sum(c.energy_uj for c in layers)
    if not e.chain:
        words = float(e.op_reads + e.op_writes + e.words)
        on_core = bool(terms.on_core[k])
        cycles += e.op_cycles if on_core else words / terms.rate
        energy += 0.0 if on_core else words * DRAM_PJ * 1e-6
    return cycles, energy


def _edges_on(on: torch.Tensor, edges) -> torch.Tensor:
    """A [1, E] fusion of `edges` where `on` has them."""
    out = torch.zeros_like(on)
    for k in edges:
        out[0, k] = on[0, k]
    return out


def _group_program(graph: FusionGraph, edge: Edge, result, choices) -> tuple[float, float, tuple | None]:
    """(cycles, energy µJ, (blocks, source) or None) of a held edge's fused program under the
    compiled-program model on result's design: with `choices` (_block_choices', a default-marked
    producer) the one of lowest EDP (its program's cycles x energy, as fuse_result's gate weighs a
    group; the default's on a tie), else at the producer's tile or, default-marked, the kernels'
    default blocks."""
    i = graph.instances[edge.producer]
    if choices:
        priced = [(fused_program_cycles(graph, edge, result.mappings[i], result.hw, blocks=b),
                   fused_program_energy(graph, edge, result.mappings[i], result.hw, blocks=b), (b, source))
                  for b, source in choices]
        return min(priced, key=lambda c: c[0] * c[1])
    default = result.per_layer[i].schedule_source == "default"
    return (fused_program_cycles(graph, edge, result.mappings[i], result.hw, default=default),
            fused_program_energy(graph, edge, result.mappings[i], result.hw, default=default), None)


def _block_choices(problem, result, fits, fallback: bool = False) -> dict:
    """{held edge index: [(blocks, "default" | "tile")]} under the compiled-program model for the
    held edges whose producer runs its kernel's default program (Cost.schedule_source "default")
    and whose fused program is the explicit one (fused_program_blocks): the blocks it may run with,
    the kernels' default and the producer's tile where their program fits (fused_blocks_fit: a
    residual add's footprint at them; a chain's blocks halved to fit by gemm_chain_blocks, as its
    launch does). Such an edge's entry of `fits` [1, H] (held_needs' at the tile unhalved) becomes
    whether either does. With `fallback` (fuse_result's require_gain=False: what fusing costs) a
    residual add whose producer is tuned and whose program at its tile does not fit may run at the
    default blocks where they fit (the BERT layer's out_proj and linear2 adds at sequence 32: 72
    and 144 KB of accumulator at their tiles on a 64 KB one)."""
    terms, hw, graph = problem.fusion_terms, result.hw, problem.fusion
    choices = {}
    if problem.cycle_model == "timeloop":
        return choices
    for h, k in enumerate(terms.held.tolist()):
        e = graph.edges[k]
        i = graph.instances[e.producer]
        tuned = result.per_layer[i].schedule_source != "default"
        if (tuned and not (fallback and e.kind == "resadd" and not fits[0, h])) or e.kind == "dw-pw" or \
                (e.chain and loop_chain_blocks(graph.layers[i], graph.layers[graph.instances[e.consumer]], hw)):
            continue
        options = []
        for source, default in (("default", True),) + ((("tile", False),) if not tuned else ()):
            b = fused_program_blocks(graph, e, result.mappings[i], hw, default)
            if b is not None and fused_blocks_fit(e, b, hw):
                options.append((b, source))
        choices[k] = options
        fits[0, h] = bool(options)
    return {k: v for k, v in choices.items() if v}


def describe(graph: FusionGraph, fused) -> dict:
    """result.json's fusion entry: the edges the graph allows (with whether each is fused) and the
    fused groups."""
    fused = [bool(x) for x in fused]
    return {"edges": [{"producer": graph.names[e.producer],
                       "consumer": graph.names[e.consumer] if e.chain else e.op,
                       "kind": e.kind, "intermediate_words": e.words, "fused": on}
                      for e, on in zip(graph.edges, fused)],
            "groups": graph.groups(fused)}
