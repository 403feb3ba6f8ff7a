"""The fusion graph of torch.nn.TransformerEncoder(Layer)s (fx leaves; baco.tuner.fusion's
_encoder_layer): their layer instances by module path and the edges the compiler runs, named as
baco.model.graph's capture names the ops, so baco.model.lower runs each fused edge as one program."""
import pytest
import torch

import baco
from baco.gemmini.config import GemminiConfig
from baco.model.graph import module_path
from baco.tuner import fusion
from baco.tuner.workloads import layers_from_torch

nn = torch.nn
D_MODEL, HEADS, FFN, TOKENS = 32, 2, 64, 8
LAYER = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.qk", "self_attn.av",
         "self_attn.out_proj", "linear1", "linear2"]


def encoder_layer(activation="gelu", batch_first=True):
    return nn.TransformerEncoderLayer(d_model=D_MODEL, nhead=HEADS, dim_feedforward=FFN, activation=activation,
                                      batch_first=batch_first).eval()


def edges(graph):
    return [(graph.names[e.producer], graph.names[e.consumer] if e.chain else e.op, e.kind, e.words)
            for e in graph.edges]


def test_encoder_layer_instances_and_edges():
    """A GELU layer (BERT's): every GEMM one instance (the four projections counted apart, as the
    torch importer counts them), the two residual adds; GELU, a CPU lookup table, ends linear1's
    edge. With ReLU (the capture's ReLU on linear1's accumulator read) linear1 -> linear2 too."""
    words = TOKENS * D_MODEL
    with torch.device("meta"):
        g = fusion.graph_from_torch(encoder_layer(), torch.zeros(1, TOKENS, D_MODEL))
        relu = fusion.graph_from_torch(encoder_layer("relu"), torch.zeros(1, TOKENS, D_MODEL))
        x = torch.zeros(1, TOKENS, D_MODEL)
        imported = layers_from_torch(encoder_layer(), x)
    assert g.names == LAYER
    assert {l.key: l.count for l in g.layers} == {l.key: l.count for l in imported}
    assert edges(g) == [("self_attn.out_proj", "add", "resadd", words), ("linear2", "add_1", "resadd", words)]
    assert edges(relu) == [("self_attn.out_proj", "add", "resadd", words),
                           ("linear1", "linear2", "gemm-gemm", TOKENS * FFN), ("linear2", "add_1", "resadd", words)]


def test_encoder_in_a_module_and_transposed_rows():
    """Inside a module, each layer of a TransformerEncoder by its module path (enc.layers.i); no
    edge crosses its boundary (its input has two readers, its output is a LayerNorm's). Batch-first
    with a batch of two the attention's output rows reach the add transposed: no out_proj edge."""
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(16, D_MODEL)
            self.enc = nn.TransformerEncoder(encoder_layer(), num_layers=2, enable_nested_tensor=False)

        def forward(self, x):
            return self.enc(self.inp(x))
    with torch.device("meta"):
        g = fusion.graph_from_torch(Model().eval(), torch.zeros(1, TOKENS, 16))
        two = fusion.graph_from_torch(encoder_layer(), torch.zeros(2, TOKENS, D_MODEL))
    assert g.names == ["inp"] + [f"enc.layers.{i}.{n}" for i in range(2) for n in LAYER]
    assert [(p, c) for p, c, _, _ in edges(g)] == [
        (f"enc.layers.{i}.{p}", f"enc.layers.{i}.{c}") for i in range(2)
        for p, c in (("self_attn.out_proj", "add"), ("linear2", "add_1"))]
    assert [(p, c) for p, c, _, _ in edges(two)] == [("linear2", "add_1")]


@pytest.mark.parametrize("activation, batch_first, shape", [("gelu", True, (1, TOKENS, D_MODEL)),
                                                             ("relu", False, (TOKENS, 2, D_MODEL))])
def test_every_edge_names_the_captured_ops_and_runs_fused_bit_exact(activation, batch_first, shape):
    """The graph's edges, fused (both residual adds; with ReLU linear1 -> linear2 in place of
    linear2's add: a layer is in one group), compiled by baco.compile_model: each one fused step
    (the out-projection's add reading its rows through the capture's reshape), bit-exact on the
    host simulator."""
    torch.manual_seed(0)
    model, x = encoder_layer(activation, batch_first), torch.randn(*shape)
    g = fusion.graph_from_torch(model, x)
    chosen = [not (e.kind == "resadd" and g.names[e.producer] == "linear2" and activation == "relu")
              for e in g.edges]
    design = {"gemmini_config": GemminiConfig().to_dict(), "layers": [],
              "fusion": fusion.describe(g, chosen)}
    compiled = baco.compile_model(model, x, design=design, calibrate=2)
    fused = {(module_path(s.fused[0]), s.fused[1].kind) for s in compiled.lowered.steps if getattr(s, "fused", None)}
    expected = {("self_attn.out_proj", "add"), ("linear2", "add")} if activation == "gelu" else \
        {("self_attn.out_proj", "add"), ("linear1", "linear")}
    assert fused == expected
    r = compiled.check(x, target="sim")
    assert r["bit_exact"] and r["first_mismatch"] is None



def forced_on_a_small_gemmini():
    """(model, input, graph, result) of a GELU layer whose producers are tuned (the heuristic
    tilings) and whose tiles' fused residual-add programs do not fit a 64 KB / 16 KB Gemmini, every
    edge forced (fuse_result(require_gain=False))."""
    from baco.tuner import explore
    from baco.tuner.arch import Hardware
    torch.manual_seed(0)
    hw, x = Hardware(16, 64, 16), torch.randn(1, 32, 64)
    model = nn.TransformerEncoderLayer(d_model=64, nhead=2, dim_feedforward=128, activation="gelu",
                                       batch_first=True).eval()
    g = fusion.graph_from_torch(model, x)
    problem = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="compiled", fusion_graph=g)
    result = problem.result(explore.heuristic_tilings(g.layers, hw), "heuristic", 0.0)
    tiles = [fusion.fused_program_blocks(g, e, result.mappings[g.instances[e.producer]], hw) for e in g.edges]
    assert [e.kind for e in g.edges] == ["resadd", "resadd"]
    assert not any(fusion.fused_blocks_fit(e, b, hw) for e, b in zip(g.edges, tiles))
    fusion.fuse_result(problem, result, torch.ones(len(g.edges), dtype=torch.bool), require_gain=False)
    return model, x, g, result


def test_forced_residual_adds_fall_back_to_default_blocks():
    """Forced, each residual add whose tuned producer's tile does not fit runs at the kernels'
    default blocks (recorded on the edge, "default"), priced at them."""
    _, _, g, result = forced_on_a_small_gemmini()
    edges = result.fusion["edges"]
    assert [(e["fused"], e["blocks_source"]) for e in edges] == [(True, "default")] * 2
    for e, info in zip(g.edges, edges):
        mapping = result.mappings[g.instances[e.producer]]
        assert info["blocks"] == fusion.fused_program_blocks(g, e, mapping, result.hw, default=True)
        assert info["group_cycles"] == fusion.fused_program_cycles(g, e, mapping, result.hw, blocks=info["blocks"])


@pytest.mark.slow
def test_forced_residual_adds_at_default_blocks_run_bit_exact():
    """The forced design's fused steps run the recorded default blocks, bit-exact on the host
    simulator."""
    from baco.tuner.emit import result_dict
    model, x, g, result = forced_on_a_small_gemmini()
    compiled = baco.compile_model(model, x, design=result_dict(g.layers, result), calibrate=2)
    steps = [s for s in compiled.lowered.steps if getattr(s, "fused", None)]
    assert [module_path(s.fused[0]) for s in steps] == ["self_attn.out_proj", "linear2"]
    assert all(s.schedule_source == "default" for s in steps)
    assert compiled.check(x, target="sim")["bit_exact"]
