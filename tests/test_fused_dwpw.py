"""The fused depthwise -> pointwise program (baco.kernels.fused_dwpw): bit-exact against the
independent reference and the two layers run unfused, on sim and the ISS, for ragged shapes; its
footprint is placement's; bad arguments name themselves."""
import numpy as np
import pytest
import torch

import baco
from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.fused import DwPwBlocks, dw_pw_blocks, dw_pw_footprint, dw_pw_program_cycles, dw_pw_program_terms
from baco.kernels.conv import conv2d
from baco.kernels.depthwise import depthwise_conv2d
from baco.kernels.fused_dwpw import dw_pw_kernel, dw_pw_launch, reference_dw_pw
from baco.model.zoo import seeded_inputs, with_bn_statistics
from baco.sim.timing import CommandStream, TimingModel
from baco.tuner import explore, fusion
from baco.tuner.arch import Hardware
from baco.tuner.emit import result_dict

DIM32 = GemminiConfig.from_capacity(32, 256, 64)


def operands(N, H, C, K, seed, R=3):
    rng = np.random.default_rng(seed)
    i8 = lambda *s: rng.integers(-128, 128, s, dtype=np.int8)  # noqa: E731
    return (i8(N, H, H, C), i8(R, R, C), rng.integers(-4000, 4000, C).astype(np.int32), i8(C, K),
            rng.integers(-4000, 4000, K).astype(np.int32))


def scales(C, relu1=True, relu2=False):
    return dict(scale1=1 / 300, scale2=1 / (40 * np.sqrt(C)), relu1=relu1, relu2=relu2)


@pytest.mark.parametrize("N,H,C,K,stride,cfg,relu2", [
    (1, 7, 1, 1, 1, None, False), (1, 7, 17, 33, 2, None, True), (1, 13, 33, 17, 1, None, False),
    (2, 15, 65, 65, 2, None, False), (1, 13, 1, 65, 2, None, True), (1, 15, 65, 1, 1, None, False),
    (1, 7, 33, 65, 1, DIM32, False), (1, 13, 17, 1, 2, DIM32, True), (2, 15, 65, 33, 1, DIM32, False),
    (1, 15, 1, 17, 2, DIM32, False)])
def test_dw_pw_bit_exact_on_sim_for_ragged_shapes(N, H, C, K, stride, cfg, relu2):
    x, wd, bd, wp, bp = operands(N, H, C, K, seed=N + H + C + K)
    kw = dict(stride=stride, padding=1, **scales(C, relu2=relu2))
    launch = dw_pw_launch(x, wd, bd, wp, bp, config=cfg, **kw)
    launch.run("sim")
    np.testing.assert_array_equal(launch.y, reference_dw_pw(x, wd, bd, wp, bp, **kw))


@pytest.mark.parametrize("blocks", [DwPwBlocks(16, 1, 16), DwPwBlocks(13, 1, 48), DwPwBlocks(13, 4, 32),
                                    DwPwBlocks(13, 13, 48)])
def test_dw_pw_equals_the_unfused_pair_at_any_blocks(blocks):
    """The fused program equals the depthwise kernel then the pointwise convolution, each run
    alone on Gemmini (column blocks, row groups, output-channel blocks, a ragged last of each)."""
    x, wd, bd, wp, bp = operands(1, 13, 33, 40, seed=4)
    kw = scales(33, relu2=True)
    h, _ = depthwise_conv2d(x, wd, bd, stride=1, padding=1, scale=kw["scale1"], relu=True)
    unfused, _ = conv2d(h, wp.reshape(1, 1, 33, 40), bp, scale=kw["scale2"], relu=True)
    launch = dw_pw_launch(x, wd, bd, wp, bp, stride=1, padding=1, blocks=blocks, **kw)
    launch.run("sim")
    np.testing.assert_array_equal(launch.y, unfused)
    np.testing.assert_array_equal(launch.y, reference_dw_pw(x, wd, bd, wp, bp, stride=1, padding=1, **kw))


@pytest.mark.parametrize("N,H,C,K,stride,cfg", [(1, 7, 17, 33, 2, None), (1, 13, 65, 17, 1, DIM32)])
def test_dw_pw_runs_on_the_iss_keeping_the_depthwise_output_on_chip(N, H, C, K, stride, cfg):
    x, wd, bd, wp, bp = operands(N, H, C, K, seed=C)
    kw = dict(stride=stride, padding=1, **scales(C))
    launch = dw_pw_launch(x, wd, bd, wp, bp, config=cfg, **kw)
    info = launch.run("iss")
    np.testing.assert_array_equal(launch.y, reference_dw_pw(x, wd, bd, wp, bp, **kw))
    # the only mvouts are the output's tiles: DIM pixel rows x DIM channels each
    dim = launch.config.dim
    P = launch.y.shape[1]
    b = launch.options
    rows = -(-P // b["ROWS"]) * N * -(-P // b["BLOCK_M"])
    tiles = rows * -(-b["ROWS"] * min(b["BLOCK_M"], P) // dim) * -(-K // dim)
    assert info["result"].stats["mvout"] == tiles


def test_dw_pw_footprint_is_what_placement_holds():
    """Blocks (16 pixels, 48 output channels) at DIM 16: the scratchpad holds the input block, the
    diagonal tile and Wp's 16 x 48 (5 tiles), the accumulator the depthwise block and the output
    (4 tiles); exactly that runs, a tile less of either is the compiler's capacity error."""
    f = dw_pw_footprint(16, 48, 16)
    assert (f.sp_rows, f.acc_rows) == (5 * 16, 4 * 16)
    x, wd, bd, wp, bp = operands(1, 7, 17, 40, seed=2)
    kw = dict(stride=1, padding=1, **scales(17))
    exact = GemminiConfig(sp_banks=5, sp_bank_rows=16, acc_rows=64)
    launch = dw_pw_launch(x, wd, bd, wp, bp, blocks=DwPwBlocks(16, 1, 48), config=exact, **kw)
    launch.run("sim")
    np.testing.assert_array_equal(launch.y, reference_dw_pw(x, wd, bd, wp, bp, **kw))
    for small in (GemminiConfig(sp_banks=4, sp_bank_rows=16, acc_rows=64),
                  GemminiConfig(sp_banks=5, sp_bank_rows=16, acc_rows=32)):
        with pytest.raises(ValueError, match="blocks \\(16, 1, 48\\).*do not fit"):
            dw_pw_launch(x, wd, bd, wp, bp, blocks=DwPwBlocks(16, 1, 48), config=small, **kw)
        with pytest.raises(CompilationError):
            dw_pw_kernel[launch.grid](*launch.args, **dict(launch.options, config=small))


def test_dw_pw_blocks_fit_and_rank_by_the_program_model():
    cfg = GemminiConfig()
    b = dw_pw_blocks(1, 56, 56, 56, 128, 128, 3, 3, 1, 1, 1, cfg)
    f = dw_pw_footprint(b.rows * b.block_m, b.block_n, cfg.dim)
    assert f.sp_rows <= cfg.sp_rows and f.acc_rows <= cfg.acc_rows
    assert b.rows == 1 or b.block_m == 56
    # no fitting candidate is ranked faster than the chosen one
    chosen = dw_pw_program_cycles(1, 56, 56, 56, 128, 128, 3, 3, 1, 1, 1, b, cfg)["cycles"]
    for other in (DwPwBlocks(56, 1, 128), DwPwBlocks(16, 1, 64), DwPwBlocks(56, 2, 64)):
        assert chosen <= dw_pw_program_cycles(1, 56, 56, 56, 128, 128, 3, 3, 1, 1, 1, other, cfg)["cycles"]
    # 1024 output channels do not fit a DIM 16 accumulator of 1024 rows with one pixel block: BLOCK_N shrinks
    wide = dw_pw_blocks(1, 7, 7, 7, 1024, 1024, 3, 3, 1, 1, 1, cfg)
    assert wide.block_n < 1024
    tiny = GemminiConfig(sp_banks=1, sp_bank_rows=32, acc_rows=32)
    assert dw_pw_blocks(1, 7, 7, 7, 16, 16, 3, 3, 1, 1, 1, tiny) is None


@pytest.mark.parametrize("H,C,K,stride,blocks", [
    (9, 16, 16, 1, DwPwBlocks(7, 7, 16)), (16, 20, 24, 1, DwPwBlocks(14, 2, 32)), (15, 17, 33, 2, DwPwBlocks(7, 7, 48)),
    (9, 33, 40, 1, DwPwBlocks(7, 3, 48))])
def test_dw_pw_model_counts_the_programs_commands(H, C, K, stride, blocks):
    """dw_pw_program_terms' RoCC commands (configs aside) are the compiled stream's: the output row
    slices' mvins on either side of a tile boundary, the accumulator's zero padding under the bias
    loads, one int32 tile an mvin. Unpadded images; a last row group shorter than ROWS (7 rows, 3 a
    program) moves fewer slices than the model's whole groups."""
    x, wd, _, wp, _ = operands(1, H, C, K, seed=H)
    launch = dw_pw_launch(x, wd, None, wp, None, stride=stride, padding=0, blocks=blocks, **scales(C))
    ck = launch.kernel.compile(*launch.args, target="sim", **launch.options)
    commands = []
    ck.run(launch.grid, launch.args, model=CommandStream(),
           observers=[lambda name, f, pc=None: commands.append(name)])
    stream = sum(not name.startswith(("config", "fence")) for name in commands)
    P = launch.y.shape[1]
    model = dw_pw_program_terms(1, H, P, P, C, K, 3, 3, stride, 0, 1, blocks, GemminiConfig())["commands"]
    assert model == stream if P % blocks.rows == 0 else model == pytest.approx(stream, rel=0.01)


def test_dw_pw_errors_name_the_argument():
    x, wd, bd, wp, bp = operands(1, 7, 17, 20, seed=1)
    kw = scales(17)
    with pytest.raises(TypeError, match="x must be a int8"):
        dw_pw_launch(x.astype(np.int16), wd, bd, wp, bp, **kw)
    with pytest.raises(ValueError, match="w_pw must have C = 17 rows"):
        dw_pw_launch(x, wd, bd, wp[:5], bp, **kw)
    with pytest.raises(ValueError, match="w_pw must be a 1x1 filter"):
        dw_pw_launch(x, wd, bd, wp.reshape(1, 17, 1, 20), bp, **kw)
    with pytest.raises(ValueError, match="b_pw must hold one int32 per output channel \\(20\\)"):
        dw_pw_launch(x, wd, bd, wp, bp[:3], **kw)
    with pytest.raises(TypeError, match="relu2 must be a bool"):
        dw_pw_launch(x, wd, bd, wp, bp, **dict(kw, relu2=1))
    with pytest.raises(TypeError, match="scale1 must be a real number"):
        dw_pw_launch(x, wd, bd, wp, bp, **dict(kw, scale1="0.1"))
    with pytest.raises(ValueError, match="input channels differ"):
        dw_pw_launch(x, wd[:, :, :3], bd, wp, bp, **kw)
    with pytest.raises(ValueError, match="rows=2 output rows per program need whole rows"):
        dw_pw_launch(x, wd, bd, wp, bp, blocks=DwPwBlocks(4, 2, 16), **kw)
    with pytest.raises(ValueError, match="block_n=0 must be a positive integer"):
        dw_pw_launch(x, wd, bd, wp, bp, blocks=DwPwBlocks(16, 1, 0), **kw)
    with pytest.raises(TypeError, match="blocks must be a DwPwBlocks"):
        dw_pw_launch(x, wd, bd, wp, bp, blocks=(16, 1, 16), **kw)
    with pytest.raises(ValueError, match="one output pixel and DIM output channels does not fit"):
        dw_pw_launch(x, wd, bd, wp, bp, config=GemminiConfig(sp_banks=1, sp_bank_rows=32, acc_rows=32), **kw)


@pytest.mark.parametrize("dim,H,C,K,stride", [(16, 7, 17, 33, 1), (32, 15, 33, 65, 2)])
def test_dw_pw_model_against_the_iss_and_the_cycle_model(dim, H, C, K, stride):
    """dw_pw_program_cycles (the programs on the issuing timeline, fused._dw_pw_launch): end to end
    against the ISS with the cycle model (rdcycle around the launch), Gemmini alone (alone=True)
    against the cycle model's time of the command stream; a core-bound program (DIM 16: the core's
    instructions ~the ISS's cycles) and a Gemmini-bound one (DIM 32, stride 2). Measured (benchmarks/
    dw_pw_programs.py): end to end 0.97x and 1.01x, Gemmini 1.03x and 1.03x. Compiled for its
    shapes and grid (specialize_shapes="iss", as launch.run builds it) the DIM 16 program's core
    runs 0.59x of the instructions and is no longer the slower side (the model's core 5,255 cycles
    against Gemmini's 7,739): both Gemmini-bound, end to end 1.02x and 1.03x, Gemmini 1.03x and 1.03x."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    x, wd, bd, wp, bp = operands(1, H, C, K, seed=H)
    kw = dict(stride=stride, padding=1, **scales(C))
    launch = dw_pw_launch(x, wd, bd, wp, bp, config=cfg, **kw)
    info = launch.compiled("iss").run(launch.grid, launch.runtime_args(), timing=TimingModel(cfg))
    np.testing.assert_array_equal(launch.y, reference_dw_pw(x, wd, bd, wp, bp, **kw))
    o, P = launch.options, launch.y.shape[1]
    model = dw_pw_program_cycles(1, H, P, P, C, K, 3, 3, stride, 1, 1, DwPwBlocks(o["BLOCK_M"], o["ROWS"], o["BLOCK_N"]),
                                 cfg, alone=True)
    assert model["cycles"] == pytest.approx(info["kernel_cycles"], rel=0.08), (model, info["kernel_cycles"])
    assert model["gemmini"] == pytest.approx(launch.cycles()["cycles"], rel=0.06)
    assert model["gemmini"] > model["cpu"]
    assert model["cycles"] >= max(model["gemmini"], model["cpu"])


# ---- the search and whole models -------------------------------------------------------------
def separable(cin, cout, stride, act):
    nn = torch.nn
    return [nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), act(),
            nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


def small_mobilenet():
    """A stem and two depthwise-separable blocks (ReLU and ReLU6 after the depthwise layers;
    ragged channels, a stride-2 depthwise), pooled into a classifier."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 17, 3, 2, 1), nn.ReLU(), *separable(17, 33, 1, nn.ReLU),
                          *separable(33, 20, 2, nn.ReLU6), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(20, 10))
    return with_bn_statistics(model, (1, 3, 26, 26)), seeded_inputs((1, 3, 26, 26), 1)[0]


def test_search_offers_mobilenets_depthwise_pointwise_pairs():
    g = fusion.graph_from_model_spec("baco.tuner.torch_models:mobilenet_v1", (1, 3, 224, 224))
    kinds = [e.kind for e in g.edges]
    assert kinds.count("dw-pw") == 13 and len(kinds) == 13      # every block's pair, nothing else
    dw = g.layers[g.instances[g.edges[0].producer]]
    assert dw.depthwise and g.edges[0].words == dw.N * dw.P * dw.Q * dw.K
    # MobileNetV2: each inverted residual's depthwise (ReLU6) -> project 1x1
    v2 = fusion.graph_from_model_spec("torchvision.models:mobilenet_v2", (1, 3, 64, 64))
    assert sum(e.kind == "dw-pw" for e in v2.edges) == 17


def test_dw_pw_edges_are_offered_by_the_traffic_model_and_costed_as_their_program():
    """The Timeloop-matched search offers the dw-pw edges, the compiled-program search does not
    (fusion.PROGRAM_LOSING_KINDS); a dw-pw edge's program cycles are fusion.dw_pw_cycles at the
    blocks the kernel picks."""
    model, x = small_mobilenet()
    g = fusion.graph_from_torch(model, x)
    hw = Hardware(16, 64, 32)
    assert [e.kind for e in g.edges] == ["dw-pw", "dw-pw"]
    kinds = {m: [e.kind for e in explore.NetworkProblem(g.layers, fixed_hw=hw, cycle_model=m, fusion_graph=g).fusion.edges]
             for m in ("timeloop", "compiled")}
    assert kinds == {"timeloop": ["dw-pw", "dw-pw"], "compiled": []}
    cfg = hw.to_gemmini_config()
    for e in g.edges:
        expected = fusion.dw_pw_cycles(g.layers[g.instances[e.producer]], g.layers[g.instances[e.consumer]].K, cfg)
        assert fusion.fused_program_cycles(g, e, None, hw) == pytest.approx(expected)


@pytest.mark.parametrize("target", ["sim", pytest.param("iss", marks=pytest.mark.slow)])
def test_whole_model_runs_its_dw_pw_groups_fused_bit_exact(target):
    model, x = small_mobilenet()
    g = fusion.graph_from_torch(model, x)
    result = explore.coexplore(g.layers, fusion_graph=g, steps=4, starts=1, random_pool=2, polish=False,
                               progress=False, cycle_model="timeloop", fixed_hw=Hardware(16, 64, 32))
    design = result_dict(g.layers, result)
    assert [e["kind"] for e in design["fusion"]["edges"]] == ["dw-pw", "dw-pw"]
    for e in design["fusion"]["edges"]:
        e["fused"] = True
    compiled = baco.compile_model(model, x, design=design)
    kernels = [k for info in compiled.layers for k in info.kernels]
    assert kernels.count("dw_pw_kernel") == 2 and "depthwise_kernel" not in kernels
    kept = {s.fused[0].output for s in compiled.lowered.steps if getattr(s, "fused", None)}
    assert compiled.lowered.on_chip == kept and len(kept) == 2 and not kept & set(compiled.lowered.buffers)
    r = compiled.check(x, target=target)
    # the ISS returns the output only: every other tensor is compared on sim's run
    assert r["bit_exact"] and (target == "iss" or r["first_mismatch"] is None)


def test_the_build_without_a_design_is_valid_under_the_timeloop_rule():
    """A fused network's search under the Timeloop-matched model compares its design with baco's
    build without a design (explore.default_build) on the default Gemmini: each layer's default
    schedule as its mapping must pass that model's capacity rule, its 3x3 stem's and depthwise
    layers' filter taps above the one-weight registers, and keep the schedule's on-chip tile.
    (Their taps at the registers raised "Registers: mapped tile size 9 exceeds buffer capacity 1".)"""
    from baco.tuner.arch import DEFAULT_HARDWARE
    from baco.tuner.mapping import default_schedule_mapping, tile_dims, validate
    model, x = small_mobilenet()
    g = fusion.graph_from_torch(model, x)
    result = explore.default_build(explore.NetworkProblem(g.layers, cycle_model="timeloop", fusion_graph=g))
    assert result is not None and result.method == "baco-default" and result.cycles > 0
    cfg = DEFAULT_HARDWARE.to_gemmini_config()
    filtered = [layer for layer in g.layers if layer.R * layer.S > 1]
    assert len(filtered) == 3 and sum(layer.depthwise for layer in filtered) == 2
    for layer in g.layers:
        m = default_schedule_mapping(layer, cfg)
        assert validate(m, layer, DEFAULT_HARDWARE, "timeloop") == [] == validate(m, layer, DEFAULT_HARDWARE)
        on_chip = tile_dims(m, 2, layer)
        assert (on_chip["R"], on_chip["S"]) == (layer.R, layer.S)      # the filter whole on chip


@pytest.mark.slow
def test_whole_mobilenet_v1_with_every_pair_fused_is_bit_exact():
    """MobileNetV1 (width 0.25, 64x64): its 13 depthwise -> pointwise pairs as 13 fused steps, no
    depthwise kernel left, bit-exact on sim against the independent reference."""
    from baco.tuner.torch_models import mobilenet_v1
    shape = (1, 3, 64, 64)
    model, x = with_bn_statistics(mobilenet_v1(width=0.25, classes=10), shape), seeded_inputs(shape, 1)[0]
    g = fusion.graph_from_torch(model, x)
    result = explore.coexplore(g.layers, fusion_graph=g, steps=3, starts=1, random_pool=2, polish=False,
                               progress=False, cycle_model="timeloop", fixed_hw=Hardware(16, 256, 64))
    design = result_dict(g.layers, result)
    for e in design["fusion"]["edges"]:
        e["fused"] = True
    compiled = baco.compile_model(model, x, design=design)
    kernels = [k for info in compiled.layers for k in info.kernels]
    assert kernels.count("dw_pw_kernel") == 13 and "depthwise_kernel" not in kernels
    r = compiled.check(x, target="sim")
    assert r["bit_exact"] and r["first_mismatch"] is None
