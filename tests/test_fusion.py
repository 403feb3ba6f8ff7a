"""Fusion in the co-exploration (baco/tuner/fusion.py): the graph's edges, the fused edge's
terms against hand computations, gradients to the fusion variables, rounding under capacity,
the joint search and `baco tune --fusion/--hardware`."""
import copy
import json
import math

import pytest
import torch

from baco.gemmini.cpu_cost import max_pool_cycles
from baco.gemmini.energy import DRAM_PJ
from baco.gemmini.fused_counts import counts_energy_uj, gemm_chain_counts
from baco.model import cpu_ops
from baco.model.cpu_cost import cpu_cycles
from baco.problem.dims import DIMS
from baco.tuner import costmodel, explore, fusion
from baco.tuner.arch import Hardware
from baco.tuner.cli import main as tune_main
from baco.tuner.cli import parse_hardware
from baco.tuner.mapping import Mapping
from baco.tuner.points import stack_tilings
from baco.tuner.workloads import layers_from_torch

nn = torch.nn


def mlp(d_in=8, hidden=16, d_out=4, act=None):
    return nn.Sequential(nn.Linear(d_in, hidden), act or nn.ReLU(), nn.Linear(hidden, d_out)).eval()


class ResBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))) + x
        return self.pool(y)


def mlp3():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4)).eval()


def separable():
    return nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 16, 1), nn.ReLU(), nn.Conv2d(16, 16, 1), nn.ReLU(), nn.MaxPool2d(2)).eval()


def kinds(graph):
    return [(graph.names[e.producer], graph.names[e.consumer] if e.chain else e.op, e.kind) for e in graph.edges]


# ---- the graph -------------------------------------------------------------------------------------
def test_graph_edges_and_layers_match_the_torch_importer():
    x = torch.zeros(5, 8)
    g = fusion.graph_from_torch(mlp(), x)
    assert kinds(g) == [("0", "2", "gemm-gemm")]     # the module paths the model compiler sees
    assert g.edges[0].words == 5 * 16
    assert [(l.key, l.count) for l in g.layers] == [(l.key, l.count) for l in layers_from_torch(mlp(), x)]
    # GELU is not on Gemmini's store path (default configuration): no edge
    assert fusion.graph_from_torch(mlp(act=nn.GELU()), x).edges == []


def test_graph_second_reader_blocks_the_edge():
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)

        def forward(self, x):
            h = self.a(x)
            return self.b(h) + h
    g = fusion.graph_from_torch(Twice().eval(), torch.zeros(3, 8))
    assert [k for k in kinds(g) if k[2] == "gemm-gemm"] == []


class PointwiseResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.expand, self.project, self.bn = nn.Conv2d(8, 16, 1), nn.Conv2d(16, 8, 1), nn.BatchNorm2d(8)

    def forward(self, x):
        return x + self.bn(self.project(torch.relu(self.expand(x))))


def test_graph_resadd_pool_and_pointwise_chains():
    """Only the fusions the whole-model compiler runs: a 3x3 convolution's residual add is no edge
    (its program is LOOP_CONV_WS), a 1x1's is; depthwise -> pointwise is (baco.kernels.fused_dwpw);
    a max pool after a ReLU'd convolution is."""
    assert kinds(fusion.graph_from_torch(ResBlock().eval(), torch.zeros(1, 8, 6, 6))) == []
    g = fusion.graph_from_torch(PointwiseResidual().eval(), torch.zeros(1, 8, 6, 6))
    assert kinds(g) == [("expand", "project", "pw-pw"), ("project", "add", "resadd")]
    resadd = g.edges[1]
    assert (resadd.words, resadd.op_reads, resadd.op_writes) == (8 * 36, 8 * 36, 8 * 36)
    g = fusion.graph_from_torch(separable(), torch.zeros(1, 8, 6, 6))
    assert kinds(g) == [("0", "3", "dw-pw"), ("3", "5", "pw-pw"), ("5", "_7", "pool")]
    assert g.edges[0].words == 8 * 36 and g.edges[2].op_writes == 16 * 9
    assert [(l.key, l.count) for l in g.layers] == \
        [(l.key, l.count) for l in layers_from_torch(separable(), torch.zeros(1, 8, 6, 6))]
    assert g.groups([False, True, False]) == [["3", "5"]]
    assert g.groups([True, False, True]) == [["0", "3"], ["5", "_7"]]
    assert g.groups([False, False, True]) == [["5", "_7"]]
    no_relu = nn.Sequential(nn.Conv2d(4, 4, 1), nn.MaxPool2d(2)).eval()      # zero padding needs the ReLU
    assert kinds(fusion.graph_from_torch(no_relu, torch.zeros(1, 4, 4, 4))) == []


def test_rounding_fuses_pairs():
    """A layer instance is in at most one fused edge: of two chained edges the first keeps it."""
    g = fusion.graph_from_torch(mlp3(), torch.zeros(4, 8))
    assert kinds(g) == [("0", "2", "gemm-gemm"), ("2", "4", "gemm-gemm")]
    terms = fusion.FusionTerms(g, "timeloop")
    fits = torch.ones(1, 2, dtype=torch.bool)
    on = terms.round(torch.full((1, 2), 0.9, dtype=torch.float64), fits)
    assert on.tolist() == [[1.0, 0.0]]
    on = terms.round(torch.tensor([[0.4, 0.9]], dtype=torch.float64), fits)
    assert on.tolist() == [[0.0, 1.0]]
    # an edge sigma does not prefer still fuses where its layers are free (fill), unless fill is off
    assert terms.round(torch.tensor([[0.1, 0.1]], dtype=torch.float64), fits).tolist() == [[1.0, 0.0]]
    assert terms.round(torch.tensor([[0.1, 0.1]], dtype=torch.float64), fits, fill=False).tolist() == [[0.0, 0.0]]
    assert terms.round(torch.tensor([[0.1, 0.1]], dtype=torch.float64), fits,
                       fill=torch.tensor([False, True])).tolist() == [[0.0, 1.0]]


# ---- the fused edge's terms ----------------------------------------------------------------------
def whole_tile_mapping(layer, sK):
    """Everything in the scratchpad tile (L2), K spread over sK columns: each word crosses DRAM once."""
    d = layer.dims
    temporal = [{k: 1 for k in DIMS} for _ in range(4)]
    temporal[2] = {**{k: d[k] for k in DIMS}, "K": d["K"] // sK}
    return Mapping(temporal=temporal, spatial_C=1, spatial_K=sK, order=[tuple(DIMS)] * 4)


@pytest.mark.parametrize("cycle_model", ["timeloop", "compiled"])
def test_fused_chain_terms_against_hand_computation(cycle_model):
    g = fusion.graph_from_torch(mlp(), torch.zeros(4, 8))
    hw = Hardware(4, 64, 16)
    problem = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model=cycle_model, fusion_graph=g)
    mappings = [whole_tile_mapping(l, 4) for l in g.layers]
    plain = explore.evaluate_design(g.layers, mappings, hw, cycle_model=cycle_model)
    fused = copy.deepcopy(plain)
    # every fitting edge fused (require_gain=False): the terms are checked, whether or not it pays
    fusion.fuse_result(problem, fused, torch.ones(1, dtype=torch.bool), require_gain=False)
    assert fused.fusion["edges"][0]["fused"] and fused.fusion["groups"] == [["0", "2"]]
    # the intermediate: 4 x 16 words, written back once; the consumer fills its whole input once
    words = 4 * 16
    producer, consumer = (costmodel.evaluate(l, m, hw) for l, m in zip(g.layers, mappings))
    assert consumer.accesses["dram"] == 16 * 4 + words + 4 * 4    # weights, input, output: each word once
    rate = costmodel.DRAM_WORDS_PER_CYCLE if cycle_model == "timeloop" else fusion.COMPILED_WORDS_PER_CYCLE
    expected_energy = plain.energy_uj - 2 * words * DRAM_PJ * 1e-6    # W + F off DRAM; W - F = 0 on chip

    def floor(cost, layer, m):
        macs = layer.macs
        compute = math.ceil(macs / (m.spatial_C * m.spatial_K))
        if cycle_model != "timeloop":
            return compute
        a = cost.accesses
        return max(compute, math.ceil(a["scratchpad"] / (2 * hw.pe_dim)), math.ceil(a["accumulator"] / (2 * m.spatial_K)))
    expected_cycles = sum(max(min(floor(c, l, m), p.cycles), p.cycles - words / rate)
                          for c, l, m, p in zip((producer, consumer), g.layers, mappings, plain.per_layer))
    if cycle_model == "compiled":
        # the compiled program's cycles and energy: the fused kernel's program (baco.gemmini.fused, its
        # counts by baco.gemmini.fused_counts) in place of the pair's
        expected_cycles = fusion.fused_program_cycles(g, g.edges[0], mappings[0], hw)
        expected_energy = fusion.fused_program_energy(g, g.edges[0], mappings[0], hw)
        cfg, (M, K), (H, N) = hw.to_gemmini_config(), (4, 8), (16, 4)
        blocks = fusion.fused_program_blocks(g, g.edges[0], mappings[0], hw)
        assert expected_energy == counts_energy_uj(gemm_chain_counts(M, K, H, N, blocks["block_m"],
                                                                     blocks["block_k"], cfg), cfg)
        assert fused.fusion["edges"][0]["group_energy_uj"] == pytest.approx(expected_energy, rel=1e-12)
        # the exact check at rounding keeps the edge fused only where that program's EDP is lower
        kept = copy.deepcopy(plain)
        fusion.fuse_result(problem, kept, torch.ones(1, dtype=torch.bool))
        assert kept.fusion["edges"][0]["fused"] == (expected_cycles * expected_energy < plain.cycles * plain.energy_uj)
    assert fused.energy_uj == pytest.approx(expected_energy, rel=1e-12)
    assert fused.cycles == pytest.approx(expected_cycles, rel=1e-12)
    assert fused.fusion["edges"][0]["group_cycles"] == pytest.approx(expected_cycles, rel=1e-12)
    assert fused.fusion["unfused_cycles"] == pytest.approx(plain.cycles, rel=1e-12)
    assert fused.fusion["unfused_energy_uj"] == pytest.approx(plain.energy_uj, rel=1e-12)
    if cycle_model == "timeloop":       # the traffic model always saves; a compiled program may not
        assert fused.edp < fused.fusion["unfused_edp"]


def test_tail_terms_against_hand_computation():
    pooled = nn.Sequential(nn.Conv2d(4, 4, 1), nn.ReLU(), nn.MaxPool2d(2)).eval()
    g = fusion.graph_from_torch(pooled, torch.zeros(1, 4, 4, 4))
    assert kinds(g) == [("0", "_2", "pool")]
    terms = fusion.FusionTerms(g, "timeloop")
    cycles, energy = torch.tensor([[1000.0]], dtype=torch.float64), torch.tensor([[2.0]], dtype=torch.float64)
    fills, floor = torch.tensor([[64.0]], dtype=torch.float64), torch.tensor([[100.0]], dtype=torch.float64)
    sp_kb = torch.tensor([8.0], dtype=torch.float64)
    words, writes = 64, 16
    for sigma in (0.0, 1.0, 0.25):
        c, e = terms.network(cycles, energy, fills, floor, torch.tensor([[sigma]], dtype=torch.float64), sp_kb)
        op_words = writes + (1 - sigma) * words            # the pool reads the output back unless fused
        assert float(c[0]) == pytest.approx(max(100.0, 1000.0 - sigma * words / 8) + op_words / 8)
        assert float(e[0]) == pytest.approx(2.0 + (op_words - sigma * words) * DRAM_PJ * 1e-6)
    # the compiled program: unfused, the core's max pool (cpu_ops.max_pool2d's cycles by the CPU cost
    # table, no Gemmini energy); fused, the pooled store's writes
    core = cpu_cycles(cpu_ops.max_pool2d((1, 4, 4, 4), 2))
    assert g.edges[0].op_cycles == core == max_pool_cycles((1, 4, 4, 4), 2, 2, 0)
    terms = fusion.FusionTerms(g, "compiled")
    rate = fusion.COMPILED_WORDS_PER_CYCLE
    for sigma in (0.0, 1.0, 0.25):
        c, e = terms.network(cycles, energy, fills, floor, torch.tensor([[sigma]], dtype=torch.float64), sp_kb)
        assert float(c[0]) == pytest.approx(max(100.0, 1000.0 - sigma * words / rate) + sigma * writes / rate
                                            + (1 - sigma) * core)
        assert float(e[0]) == pytest.approx(2.0 + sigma * (writes - words) * DRAM_PJ * 1e-6)


@pytest.mark.parametrize("shape", [(1, 1, 1, 3), (1, 17, 33, 5), (2, 65, 17, 16), (1, 33, 65, 1)])
@pytest.mark.parametrize("kernel,stride,padding", [(3, 2, 1), (2, 2, 0), (3, 1, 1), (1, 1, 0)])
def test_max_pool_cycles_are_the_cpu_steps(shape, kernel, stride, padding):
    """The tuner's price of a core max pool is the whole-model cost of the CPU step the compiler runs;
    where no window fits the image both refuse it, naming the window."""
    if min(shape[1:3]) < kernel - 2 * padding:
        for price in (lambda: max_pool_cycles(shape, kernel, stride, padding),
                      lambda: cpu_ops.max_pool2d(shape, kernel, stride, padding)):
            with pytest.raises(ValueError, match="window .* does not fit a 1x1 image"):
                price()
        return
    assert max_pool_cycles(shape, kernel, stride, padding) == \
        cpu_cycles(cpu_ops.max_pool2d(shape, kernel, stride, padding))


def test_compiled_search_prices_a_pool_both_ways():
    """fuse_result decides a pool edge as the other edges: fused its conv's pooled program (the
    network's), unfused the conv's program and the core's max pool; fused where that is faster."""
    pooled = nn.Sequential(nn.Conv2d(3, 20, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2, 1)).eval()
    g = fusion.graph_from_torch(pooled, torch.zeros(1, 3, 17, 11))
    hw = Hardware(16, 64, 32)
    result = explore.coexplore(g.layers, fusion_graph=g, steps=4, starts=1, random_pool=2, polish=False,
                               progress=False, cycle_model="compiled", fixed_hw=hw, seed=0)
    problem = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="compiled", fusion_graph=g)
    edge = result.fusion["edges"][0]
    conv = result.per_layer[0].cycles
    assert edge["fused"] and edge["unfused_group_cycles"] == pytest.approx(conv + g.edges[0].op_cycles)
    assert edge["group_cycles"] < edge["unfused_group_cycles"]
    assert result.cycles == pytest.approx(result.fusion["unfused_cycles"] - edge["unfused_group_cycles"]
                                          + edge["group_cycles"])
    unfused = copy.deepcopy(result)
    fusion.fuse_result(problem, unfused, torch.zeros(1, dtype=torch.bool), fill=False)
    assert not unfused.fusion["edges"][0]["fused"]
    assert unfused.cycles == pytest.approx(conv + g.edges[0].op_cycles) == result.fusion["unfused_cycles"]


# ---- gradients and rounding ------------------------------------------------------------------
def problem_and_points(hw, hidden=512, rows=64):
    g = fusion.graph_from_torch(mlp(64, hidden, 64), torch.zeros(rows, 64))
    problem = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="timeloop", fusion_graph=g)
    design = explore.heuristic_tilings(g.layers, hw)
    stacked = [stack_tilings([t]) for t in design]
    return problem, [s[0] for s in stacked], [s[1] for s in stacked], [s[2] for s in stacked]


def test_gradient_flows_to_sigma():
    problem, temporal, spatial, order = problem_and_points(Hardware(16, 256, 64), hidden=64)
    logit = torch.zeros(1, 1, dtype=torch.float64, requires_grad=True)
    cost = problem.cost(temporal, spatial, order, sigma=torch.sigmoid(logit))
    (torch.log(cost.cycles) + torch.log(cost.energy_uj) + cost.relaxation).sum().backward()
    assert logit.grad is not None and float(logit.grad[0, 0]) < 0     # fusing lowers the EDP: sigma goes up


def test_rounding_respects_capacity():
    # Small Gemmini: the 64 x 128 hidden block (int32, 32 KB) does not fit its 8 KB accumulator
    problem, temporal, spatial, order = problem_and_points(Hardware(16, 8, 8), hidden=128)
    sigma = torch.ones(1, 1, dtype=torch.float64, requires_grad=True)
    cost = problem.cost(temporal, spatial, order, sigma=sigma)
    assert not bool(cost.fused[0, 0]) and float(cost.relaxation.detach()[0]) > 0
    cost.relaxation.sum().backward()
    assert float(sigma.grad[0, 0]) > 0          # the penalty pushes sigma down
    # Large: it fits (with the 64 x 64 output block, 48 KB of 64); on a fixed Gemmini an edge without a
    # rival is fused wherever it fits, whatever sigma (fusing only removes traffic there)
    problem, temporal, spatial, order = problem_and_points(Hardware(32, 512, 64), hidden=128)
    for s in (0.9, 0.5, 0.1):
        cost = problem.cost(temporal, spatial, order, sigma=torch.full((1, 1), s, dtype=torch.float64))
        assert bool(cost.fused[0, 0]) and float(cost.relaxation[0]) == 0
    # free hardware: the inferred Gemmini grows to hold the fused pair, so sigma decides (from 0.5)
    g = problem.fusion
    free = explore.NetworkProblem(g.layers, cycle_model="timeloop", fusion_graph=g)
    for s, on in ((0.9, True), (0.5, True), (0.4, False)):
        cost = free.cost(temporal, spatial, order, sigma=torch.full((1, 1), s, dtype=torch.float64))
        assert bool(cost.fused[0, 0]) == on
    unfused = free.cost(temporal, spatial, order, sigma=torch.zeros(1, 1, dtype=torch.float64))
    fused = free.cost(temporal, spatial, order, sigma=torch.ones(1, 1, dtype=torch.float64))
    assert bool(fused.fused[0, 0]) and fused.hardware[0].sp_kb > unfused.hardware[0].sp_kb
    # a design costed alone (no sigma) on inferred hardware is costed both ways, whatever the mask: the better kept
    for mask in (False, True):
        free.fusion_mask = torch.tensor([mask])
        with torch.no_grad():
            discrete = free.cost(temporal, spatial, order)
        best = min((fused, unfused), key=lambda c: float(c.edp[0]))
        assert float(discrete.edp[0]) == pytest.approx(float(best.edp[0]), rel=1e-12)
        assert discrete.hardware == best.hardware and bool(discrete.fused[0, 0]) == bool(best.fused[0, 0])


# ---- the joint search and the CLI ------------------------------------------------------------------
def test_joint_search_fuses_and_reports():
    g = fusion.graph_from_torch(separable(), torch.zeros(1, 8, 12, 12))
    result = explore.coexplore(g.layers, fusion_graph=g, fixed_hw=Hardware(16, 8, 8), steps=12, kicks=2,
                               progress=False, cycle_model="timeloop")
    assert result.hw == Hardware(16, 8, 8)
    info = result.fusion
    assert len(info["edges"]) == 3 and info["groups"]
    assert result.edp < info["unfused_edp"]
    # the totals are fuse_result's of the exact per-layer costs
    again = explore.evaluate_design(g.layers, result.mappings, result.hw, cycle_model="timeloop")
    problem = explore.NetworkProblem(g.layers, fixed_hw=result.hw, cycle_model="timeloop", fusion_graph=g)
    fusion.fuse_result(problem, again, torch.tensor([e["fused"] for e in info["edges"]]))
    assert again.edp == pytest.approx(result.edp, rel=1e-12)


def test_fused_polish_first_polishes_without_fusion():
    """A fusion-aware search's polish starts with the search without fusion's (explore._twin_polished):
    the best design it polishes on the unfused cost joins the starts at its fused EDP, no worse
    without fusion than any start, and takes its share of the kicks (half where fusion saves little)."""
    g = fusion.graph_from_torch(separable(), torch.zeros(1, 8, 12, 12))
    hw = Hardware(16, 8, 8)
    problem = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="timeloop", fusion_graph=g)
    unfused = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="timeloop")
    tilings = explore.random_tilings(problem, 64, torch.Generator().manual_seed(0))
    designs = [[t[b] for t in tilings] for b in range(64)]
    cost = lambda p, ds: p.score([[d[i] for d in ds] for i in range(len(g.layers))])  # noqa: E731
    fused = cost(problem, designs)
    valid = [(float(e), d) for e, p, d in zip(fused.edp, fused.penalty, designs) if float(p) == 0]
    found = sorted(valid, key=lambda x: x[0])[:explore.POLISHED]
    assert len(found) == explore.POLISHED
    out, kicks = explore._twin_polished(problem, found, None, torch.Generator().manual_seed(1), 8)
    gain = 1 - found[0][0] / float(cost(unfused, [found[0][1]]).edp[0])
    assert kicks == int(8 * explore.TWIN_POLISH_SHARE * min(1.0, explore.TWIN_FULL_GAIN / gain))
    assert [e for e, _ in out] == sorted(e for e, _ in out) and len(out) == len(found) + 1
    (edp, twin_design), = [x for x in out if x[1] not in [d for _, d in found]]
    assert edp == pytest.approx(float(cost(problem, [twin_design]).edp[0]), rel=1e-12)
    starts = cost(unfused, [d for _, d in found]).edp
    assert float(cost(unfused, [twin_design]).edp[0]) <= float(starts.min())


def test_parse_hardware():
    assert parse_hardware("32,512,64") == Hardware(32, 512, 64)
    with pytest.raises(ValueError, match="--hardware"):
        parse_hardware("32,512")
    with pytest.raises(ValueError, match="--hardware 16,7,8"):
        parse_hardware("16,7,8")


def test_cli_fusion_and_hardware(tmp_path, capsys):
    args = ["--torch", "tests.test_fusion:separable", "--input-shape", "1,8,12,12", "--steps", "4",
            "--hardware", "16,8,8", "--cycle-model", "timeloop", "--quiet"]
    assert tune_main(args + ["--fusion", "on", "--out", str(tmp_path / "on")]) == 0
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "on" / "result.json").read_text())
    assert summary["hardware"]["sp_kb"] == 8 and summary["fusion"]["edges"]
    for group in summary["fusion"]["groups"]:
        assert f"fused group: {' + '.join(group)}" in out
    # off is the search without fusion, as without the flag
    assert tune_main(args + ["--fusion", "off", "--out", str(tmp_path / "off")]) == 0
    assert tune_main(args + ["--out", str(tmp_path / "none")]) == 0
    off, none = (json.loads((tmp_path / d / "result.json").read_text()) for d in ("off", "none"))
    assert "fusion" not in off
    for d in (off, none):
        d.pop("wall_s")
    assert off == none


def test_cli_fusion_needs_a_graph(tmp_path):
    with pytest.raises(SystemExit):
        tune_main(["--op", "gemm", "--M", "8", "--N", "8", "--K", "8", "--fusion", "on", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="--hardware"):
        tune_main(["--op", "gemm", "--M", "8", "--N", "8", "--K", "8", "--hardware", "16,7,8", "--out", str(tmp_path)])


def test_killed_and_resumed_fused_search_ends_with_the_uninterrupted_design(tmp_path):
    from baco.tuner.checkpoint import Checkpointer

    class Killed(Exception):
        pass

    class Dying(Checkpointer):       # killed right after its first checkpoint of the polish
        def save(self, state):
            super().save(state)
            if state["phase"] == "polish":
                raise Killed
    g = fusion.graph_from_torch(separable(), torch.zeros(1, 8, 12, 12))
    kw = dict(seed=1, steps=4, starts=2, random_pool=2, kicks=2, progress=False, cycle_model="timeloop",
              fixed_hw=Hardware(16, 8, 8), fusion_graph=g)
    whole = explore.coexplore(g.layers, **kw)
    path = tmp_path / "ckpt.pt"
    with pytest.raises(Killed):
        explore.coexplore(g.layers, checkpoint=Dying(path, every_s=0.0), **kw)
    assert Checkpointer(path, resume=True).load()["phase"] == "polish"
    resumed = explore.coexplore(g.layers, checkpoint=Checkpointer(path, every_s=0.0, resume=True), **kw)
    assert (resumed.edp, resumed.fusion) == (whole.edp, whole.fusion)
    assert [m.temporal for m in resumed.mappings] == [m.temporal for m in whole.mappings]


def test_edgeless_graph_searches_as_without_fusion():
    """A network without fusable edges costs exactly as the layer-by-layer search (same design)."""
    g = fusion.graph_from_torch(mlp(act=nn.GELU()), torch.zeros(8, 8))
    assert g.edges == []
    kw = dict(seed=0, steps=6, starts=2, random_pool=2, kicks=2, progress=False, cycle_model="timeloop",
              fixed_hw=Hardware(16, 8, 8))
    fused, plain = explore.coexplore(g.layers, fusion_graph=g, **kw), explore.coexplore(g.layers, **kw)
    assert [m.temporal for m in fused.mappings] == [m.temporal for m in plain.mappings]
    assert fused.edp == pytest.approx(plain.edp, rel=1e-12) and fused.fusion["groups"] == []


def test_compiled_search_cost_takes_traffic_of_the_touched_layers_only():
    """The compiled model's search cost computes the traffic terms of the layers an edge touches
    only; the fused network is what the terms of every layer give."""
    dense = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), *list(separable())[1:]).eval()  # a 3x3 conv, no edge
    g = fusion.graph_from_torch(dense, torch.zeros(1, 8, 12, 12))
    hw = Hardware(16, 64, 32)
    problem = explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model="compiled", fusion_graph=g)
    assert problem.fusion_terms.touched == [1, 2] and len(g.layers) == 3     # not the 3x3 conv
    design = explore.heuristic_tilings(g.layers, hw)
    cost = problem.score([[t] for t in design])
    stacked = [stack_tilings([t]) for t in design]
    temporal, spatial, order = ([s[k] for s in stacked] for k in range(3))
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
    terms = problem.fusion_terms
    traffic = terms.traffic(problem.network_cost.stack([0, 1, 2], 1), temporal, spatial,
                            explore.order_indices()[torch.cat(order)], hw_t)
    cycles, energy = problem.network_cost.per_layer(temporal, spatial, order, hw_t, weighted=False)
    # a fused pw -> pw chain's cycles are its explicit program's (chain_programs), as fuse_result's
    expected = terms.network(cycles, energy, traffic["fills"], traffic["floor"], cost.fused.to(torch.float64), hw_t[1],
                             chain_programs=terms.chain_programs(temporal, spatial, [hw]))
    assert bool(cost.fused.any())
    assert float(cost.cycles[0]) == pytest.approx(float(expected[0][0]), rel=1e-12)
    assert float(cost.energy_uj[0]) == pytest.approx(float(expected[1][0]), rel=1e-12)


class ProjectResidual(nn.Module):
    """A 1x1 expand (ReLU6), a 1x1 project and the residual add of the input: a pw-pw edge and a
    resadd edge sharing the project conv."""

    def __init__(self, c=24, hidden=96):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(c, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6())
        self.project = nn.Sequential(nn.Conv2d(hidden, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return x + self.project(self.expand(x))


def default_marked_fused(kind):
    """(model, input, graph, result, edge index) of ProjectResidual's build without a design (its
    convs marked to run their kernel's default program) with its `kind` edge fused."""
    from baco.model.zoo import seeded_inputs, with_bn_statistics
    torch.manual_seed(1)
    shape = (1, 24, 16, 16)
    model, x = with_bn_statistics(ProjectResidual(), shape), seeded_inputs(shape, 1)[0]
    g = fusion.graph_from_torch(model, x)
    problem = explore.NetworkProblem(g.layers, cycle_model="compiled", fusion_graph=g)
    result = explore.default_build(problem)
    k = [e.kind for e in g.edges].index(kind)
    mask = torch.zeros(len(g.edges), dtype=torch.bool)
    mask[k] = True
    fusion.fuse_result(problem, result, mask, require_gain=False)
    return model, x, g, result, k


def fused_step(lowered):
    from baco.model.lower import GemminiStep
    (step,) = [s for s in lowered.steps if isinstance(s, GemminiStep) and s.fused]
    return step


def test_default_producers_fused_program_runs_the_faster_recorded_blocks():
    """A fused group whose producer runs its kernel's default program is priced at the default blocks
    and at its tile; the one of lower EDP (its program's cycles x energy) is recorded on the edge
    ("blocks") and is what the compiled fused launch runs; a design without the field (an older
    result.json) runs the default blocks."""
    import baco
    from baco.gemmini.fused import gemm_resadd_default_blocks, gemm_resadd_program_cycles
    from baco.model.lower import lower
    from baco.tuner.emit import result_dict
    from baco.tuner.mapping import tile_dims
    model, x, g, result, k = default_marked_fused("resadd")
    edge, e = result.fusion["edges"][k], g.edges[k]
    i = g.instances[e.producer]
    assert edge["fused"] and result.per_layer[i].schedule_source == "default"
    layer, cfg = g.layers[i], result.hw.to_gemmini_config()
    M = layer.N * layer.P * layer.Q
    t = tile_dims(result.mappings[i], 2, layer)
    blocks = {"default": gemm_resadd_default_blocks(M, layer.K, layer.C, cfg),
              "tile": (t["N"] * t["P"] * t["Q"], t["K"], t["C"])}
    prices = {source: gemm_resadd_program_cycles(M, layer.K, layer.C, *b, cfg)["cycles"] for source, b in blocks.items()}
    energy = {source: fusion.fused_program_energy(g, e, result.mappings[i], result.hw,
                                                  blocks=dict(zip(("block_m", "block_n", "block_k"), b)))
              for source, b in blocks.items()}
    # 9,961 cycles at the default blocks, 10,810 at the tile's 32 rows, whose energy is lower
    assert prices["tile"] * energy["tile"] < prices["default"] * energy["default"]
    assert edge["blocks_source"] == "tile" and edge["group_cycles"] == prices["tile"]
    assert edge["blocks"] == {"block_m": t["N"] * t["P"] * t["Q"], "block_n": t["K"], "block_k": t["C"]}
    design = result_dict(g.layers, result)
    assert json.loads(json.dumps(design))["fusion"]["edges"][k]["blocks"] == edge["blocks"]
    compiled = baco.compile_model(model, x, design=design, calibrate=1)
    step = fused_step(compiled.lowered)
    o = step.launches[0].options
    assert step.schedule_source == "tuned" and \
        {"block_m": o["BLOCK_M"], "block_n": o["BLOCK_N"], "block_k": o["BLOCK_K"]} == edge["blocks"]
    # an older result.json, without the edge's blocks: the fused program at the default blocks
    old = copy.deepcopy(design)
    for entry in old["fusion"]["edges"]:
        entry.pop("blocks", None), entry.pop("blocks_source", None)
    step = fused_step(lower(compiled.graph, old))
    o = step.launches[0].options
    assert step.schedule_source == "default" and \
        (o["BLOCK_M"], o["BLOCK_N"], o["BLOCK_K"]) == gemm_resadd_default_blocks(M, layer.K, layer.C, cfg)
    bad = copy.deepcopy(design)
    bad["fusion"]["edges"][k]["blocks"] = {"block_m": 32, "block_k": 96}
    with pytest.raises(ValueError, match="project.0 -> add .*its blocks .* are not positive ints block_m, block_n"):
        lower(compiled.graph, bad)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pw-pw", "resadd"])
def test_default_producers_fused_program_at_its_recorded_blocks_is_bit_exact(kind):
    import baco
    from baco.tuner.emit import result_dict
    model, x, g, result, k = default_marked_fused(kind)
    edge = result.fusion["edges"][k]
    compiled = baco.compile_model(model, x, design=result_dict(g.layers, result))
    o = fused_step(compiled.lowered).launches[0].options
    assert {name: o[name.upper()] for name in edge["blocks"]} == edge["blocks"]
    assert compiled.check(x, target="sim")["bit_exact"]
