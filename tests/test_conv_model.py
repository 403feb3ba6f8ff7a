"""The search's model of compiled convolutions (kernel_model.conv_program: the LOOP_CONV_WS programs
where the compiler emits them, else costmodel.conv_program_terms and conv_program_energy): it costs the
schedule the compiler runs (mapping.conv_schedule, one function for the search and `baco run
--design`), agrees with the cycle model's timing and energy of the program the conv kernel compiles
to, and is differentiable."""
import math

import numpy as np
import pytest
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, schedule_problems
from baco.kernels.conv import conv2d_launch
from baco.problem.layer import Layer
from baco.sim.timing import TimingModel
from baco.tuner import costmodel, kernel_model
from baco.tuner.arch import Hardware
from baco.tuner.explore import NetworkProblem, random_tilings
from baco.tuner.points import stack_tilings
from baco.tuner.mapping import KERNEL_OUT_INT8, conv_schedule


def simulated(layer: Layer, cfg: GemminiConfig, schedule: GemmSchedule) -> dict:
    x = np.zeros((layer.N, layer.input_rows, layer.input_cols, layer.C), np.int8)
    w = np.zeros((layer.R, layer.S, layer.C, layer.K), np.int8)
    launch = conv2d_launch(x, w, stride=(layer.Hstride, layer.Wstride), config=cfg, blocks=schedule, scale=1 / 256)
    return launch.cycles()      # what the compiler emits: LOOP_WS or LOOP_CONV_WS where the blocks fit


# (layer, DIM, schedule): 3x3/7x7/1x1, strides 1-2, ragged sizes, one or several tiles and channel
# sub-blocks per step, single- and double-buffered, pointwise (one GEMM over all pixels)
CASES = [
    (Layer(R=3, S=3, P=2, Q=17, C=33, K=20), 16, GemmSchedule(17, 20, 33, double_buffer=True)),
    (Layer(R=3, S=3, P=2, Q=30, C=40, K=40), 16, GemmSchedule(16, 32, 32)),
    (Layer(R=3, S=3, P=3, Q=14, C=64, K=64, Hstride=2, Wstride=2), 8, GemmSchedule(14, 32, 16, double_buffer=True)),
    (Layer(R=7, S=7, P=1, Q=28, C=3, K=64, Hstride=2, Wstride=2), 32, GemmSchedule(28, 64, 3, double_buffer=True)),
    (Layer(R=1, S=1, P=2, Q=14, C=128, K=64, Hstride=2, Wstride=2), 16, GemmSchedule(14, 64, 64, double_buffer=True)),
    (Layer(R=1, S=1, P=7, Q=7, C=64, K=65), 16, GemmSchedule(49, 32, 64, double_buffer=True)),
    (Layer(R=5, S=5, P=2, Q=33, C=17, K=33), 4, GemmSchedule(12, 8, 8)),
    # several whole output rows per program (GemmSchedule.rows), the last program short of rows
    (Layer(R=3, S=3, P=6, Q=14, C=64, K=64, Hstride=2, Wstride=2), 16, GemmSchedule(14, 64, 16, double_buffer=True,
                                                                                     rows=2)),
    (Layer(R=3, S=3, P=7, Q=7, C=256, K=256), 32, GemmSchedule(7, 128, 32, double_buffer=True, rows=4)),
]


def check_against_the_cycle_model(cases):
    """Predicted vs simulated cycles of the conv kernel: each within 30%, median within 15%
    (benchmarks/loop_check.py measures the same on network layers and random shapes)."""
    errors = []
    for layer, dim, schedule in cases:
        cfg = GemminiConfig.from_capacity(dim, 64 if dim <= 8 else 256, 16 if dim <= 8 else 64 if dim <= 16 else 128)
        assert not schedule_problems(schedule, cfg, KERNEL_OUT_INT8)
        pred = kernel_model.conv_schedule_cycles(layer, schedule, (dim, cfg.sp_kb, cfg.acc_kb), end_to_end=False)
        report = simulated(layer, cfg, schedule)
        sim = report["cycles"]
        errors.append(abs(pred - sim) / sim)
        assert 0.7 < pred / sim < 1.3, (layer, schedule, pred, sim)
        # the program's counts are the simulator's (a last program short of rows, P % rows, computes
        # its missing rows too: within 1%), but for a ragged last column block (Q % BLOCK_M), whose A
        # loads read up to the input image's edge, past the outputs it needs (<= 6% here)
        energy_uj = kernel_model.conv_schedule_energy(layer, schedule, (dim, cfg.sp_kb, cfg.acc_kb))
        tolerance = 0.06 if layer.Q % schedule.block_m else 0.01 if layer.P % schedule.rows else 1e-9
        assert math.isclose(energy_uj, report["energy_uj"], rel_tol=tolerance)
    assert float(np.median(errors)) <= 0.15, errors


def test_conv_model_matches_the_cycle_model_on_a_strided_3x3_convolution_of_two_rows_per_program():
    check_against_the_cycle_model(CASES[7:8])


# one program (nothing to pipeline with: its loads, computes and stores follow each other, a prologue
# and a tail; its loads are not ahead of anything, so a program of few computes waits for them all:
# ResNet-50's 1x1 28x28 512>128 in one program)
PROGRAM_CASES = [
    (Layer(R=1, S=1, P=14, Q=14, C=256, K=256), 128, GemmSchedule(196, 256, 256, double_buffer=True)),
    (Layer(R=1, S=1, P=14, Q=14, C=256, K=256), 128, GemmSchedule(196, 256, 256)),
    (Layer(R=1, S=1, P=28, Q=28, C=512, K=128), 128, GemmSchedule(784, 128, 512, double_buffer=True)),
]
# LOOP_CONV_WS programs of 6 rows, the last short of 5 of them, on an 8x8 array, consecutive tiles
# on one scratchpad half: the cycle model (since it lands a wide mvin's blocks block_stride rows
# apart) starts each compute once its own rows have landed and each load once the rows it writes
# have been read; the LoopConv walk, which waited for a tile's loads and for the previous tile's
# computes before any load, was 1.18x high here (16,680 vs 14,090 cycles), now 1.04x
SMALL_ARRAY_LOOP_CONV_PROGRAMS = (Layer(R=3, S=3, P=7, Q=7, C=32, K=40), 8,
                                  GemmSchedule(7, 16, 32, double_buffer=True, rows=6))
# many tiny pointwise programs on a wide array: one LOOP_WS each (the walk times them), whose
# energy counts LoopMatmul's commands (kernel_model.loop_ws_energy: the computes write only the rows
# that exist, B moved in once and reused; the explicit stream's counts were 2.98x the simulator's).
# A loop's next loop but one overwrites its A once its one short compute is out of the array, not
# once the array could take new weights (DIM rows later): the walk that waited for those was 1.32x
# high here (5,496 vs 4,179 cycles), now 0.999x
TINY_POINTWISE_PROGRAMS = (Layer(R=1, S=1, P=3, Q=56, C=8, K=64), 128, GemmSchedule(7, 64, 8))


def check_programs(cases):
    for layer, dim, schedule in cases:
        cfg = GemminiConfig.from_capacity(dim, 1024 if dim == 128 else 64, 1024 if dim == 128 else 64)
        pred = kernel_model.conv_schedule_cycles(layer, schedule, (dim, cfg.sp_kb, cfg.acc_kb), end_to_end=False)
        report = simulated(layer, cfg, schedule)
        assert 0.9 < pred / report["cycles"] < 1.1, (layer, schedule, pred, report["cycles"])
        energy_uj = kernel_model.conv_schedule_energy(layer, schedule, (dim, cfg.sp_kb, cfg.acc_kb))
        assert math.isclose(energy_uj, report["energy_uj"], rel_tol=0.01)


def test_conv_model_times_single_and_tiny_programs_and_counts_rows_past_the_last():
    check_programs(PROGRAM_CASES)


def test_loop_conv_programs_on_a_small_array():
    check_programs([SMALL_ARRAY_LOOP_CONV_PROGRAMS])


def test_conv_model_times_tiny_pointwise_programs_on_a_wide_array():
    check_programs([TINY_POINTWISE_PROGRAMS])


# large programs on wide arrays (512 KB / 1 MB): stores that outlast the computes hold the next
# program's loads back; a last program of 25 rows with 22 past the output (zero slices, fewer
# stores); computes that trail B's column chunks (the model before: pred/sim 0.76, 1.44, 1.36);
# double-buffered programs paced by their stores, the next program's first tile out under them
LARGE_CASES = [
    (Layer(R=1, S=1, P=56, Q=56, C=128, K=256), 64, GemmSchedule(1024, 256, 128)),
    (Layer(R=1, S=1, P=28, Q=28, C=128, K=512), 128, GemmSchedule(448, 512, 128, double_buffer=True)),
    (Layer(R=3, S=3, P=28, Q=28, C=64, K=256), 128, GemmSchedule(28, 128, 64, rows=25)),
    (Layer(R=3, S=3, P=4, Q=28, C=128, K=512), 64, GemmSchedule(28, 512, 128, rows=2)),
]


def test_conv_model_times_large_programs_on_wide_arrays():
    for layer, dim, schedule in LARGE_CASES:
        cfg = GemminiConfig.from_capacity(dim, 512, 1024)
        assert not schedule_problems(schedule, cfg, KERNEL_OUT_INT8)
        pred = kernel_model.conv_schedule_cycles(layer, schedule, (dim, cfg.sp_kb, cfg.acc_kb), end_to_end=False)
        sim = simulated(layer, cfg, schedule)["cycles"]
        assert 0.88 < pred / sim < 1.12, (layer, schedule, pred, sim)


@pytest.mark.slow
def test_conv_model_matches_the_cycle_model_on_compiled_convolutions():
    check_against_the_cycle_model(CASES)


def test_search_costs_the_schedule_the_compiler_runs_for_convolutions():
    """evaluate() returns the schedule mapping.conv_schedule makes of the mapping (tuned tile,
    double-buffered when it fits, or the conv default) with the cycles of that schedule; the
    batched search cost (layer_tensors) is the same number."""
    layers = [Layer(R=3, S=3, P=14, Q=14, C=64, K=64, name="c3"), Layer(R=1, S=1, P=7, Q=7, C=256, K=64, name="pw"),
              Layer(R=7, S=7, P=28, Q=28, C=3, K=32, Hstride=2, Wstride=2, name="c7")]
    sources = set()
    for seed in range(6):
        problem = NetworkProblem(layers, max_pe=int((4, 8, 16, 32)[seed % 4]))
        design = [t[0] for t in random_tilings(problem, 1, torch.Generator().manual_seed(seed))]
        try:
            result = problem.result(design, "random", 0.0)
        except ValueError:
            continue
        cfg = result.hw.to_gemmini_config()
        for layer, mapping, cost in zip(layers, result.mappings, result.per_layer):
            schedule, source = conv_schedule(mapping, layer, cfg)
            sources.add((source, schedule.double_buffer))
            assert cost.schedule == schedule and not schedule_problems(schedule, cfg, KERNEL_OUT_INT8)
            assert math.isclose(cost.cycles, kernel_model.conv_schedule_cycles(layer, schedule, (cfg.dim, cfg.sp_kb, cfg.acc_kb)), rel_tol=1e-9)
        score = NetworkProblem(layers, fixed_hw=result.hw).score([[t] for t in design])
        assert math.isclose(float(score.cycles[0]), result.cycles, rel_tol=1e-9)
    assert len(sources) >= 2, sources       # more than one kind of schedule is exercised


def test_default_schedule_when_the_tile_does_not_fit():
    layer = Layer(R=3, S=3, P=8, Q=56, C=256, K=256)
    hw = Hardware(16, 32, 16)
    from baco.tuner.mapping import parse_mapping
    m = parse_mapping("L3[WIO] P8 - L2[WI] Q56 C16 K16 - L1[O] C16X - L0[W] K16X")
    schedule, source = conv_schedule(m, layer, hw.to_gemmini_config())
    assert source == "default"
    temporal, sC, sK = costmodel.mapping_tensors(m)
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
    cycles, energy_uj, choice = kernel_model.conv_program(layer, temporal, torch.stack([sC, sK], 1), hw_t)
    assert kernel_model.CONV_VARIANTS[int(choice[0])] == "default"
    assert math.isclose(float(cycles[0]), kernel_model.conv_schedule_cycles(layer, schedule, (16, 32, 16)), rel_tol=1e-12)
    assert math.isclose(float(energy_uj[0]), kernel_model.conv_schedule_energy(layer, schedule, (16, 32, 16)),
                        rel_tol=1e-12)


def test_conv_program_is_differentiable_in_factors_and_hardware():
    layer = Layer(R=3, S=3, P=14, Q=28, C=64, K=128)
    problem = NetworkProblem([layer])
    design = random_tilings(problem, 4, torch.Generator().manual_seed(2))[0]
    temporal, spatial, _ = stack_tilings(design)
    temporal.requires_grad_(True)
    hw_t = tuple(torch.full((len(design),), v, dtype=torch.float64, requires_grad=True) for v in (16.0, 512.0, 256.0))
    cycles, energy_uj, choice = kernel_model.conv_program(layer, temporal, spatial, hw_t)
    assert torch.isfinite(cycles).all() and torch.isfinite(energy_uj).all() and (choice < 2).all()
    (cycles * energy_uj).sum().backward()
    assert temporal.grad is not None and torch.isfinite(temporal.grad).all() and temporal.grad.abs().sum() > 0
    assert hw_t[0].grad is not None and torch.isfinite(hw_t[0].grad).all()


def test_pointwise_and_implicit_gemm_blocks():
    """kernel_blocks: a pointwise layer's BLOCK_M counts pixels N·P·Q; any other conv's output columns,
    times its P rows when the tile holds whole rows (conv_rows, GemmSchedule.rows)."""
    tile = torch.tensor([[1.0, 1.0, 2.0, 7.0, 16.0, 32.0, 1.0]], dtype=torch.float64)   # R S P Q C K N
    def blocks(layer):
        return [float(b[0]) for b in costmodel.kernel_blocks(layer, tile)], float(costmodel.conv_rows(layer, tile)[0])
    assert blocks(Layer(P=4, Q=7, C=16, K=32)) == ([14.0, 32.0, 16.0], 1.0)
    assert blocks(Layer(R=3, S=3, P=4, Q=8, C=16, K=32)) == ([7.0, 32.0, 16.0], 1.0)
    assert blocks(Layer(R=3, S=3, P=4, Q=7, C=16, K=32)) == ([14.0, 32.0, 16.0], 2.0)


def test_end_to_end_conv_model_counts_the_cpu_issuing_the_program():
    """conv_schedule_cycles end to end (the search's cost) against the program on the ISS with the
    cycle model attached (rdcycle around the grid): an explicit stream, CPU-bound (1.21 times its
    modelled Gemmini cycles compiled for its shapes; 1.47 times unspecialized, 3.2 times while whole
    channel blocks were checked), and a LOOP_CONV_WS one, Gemmini-bound; each within 25%."""
    cfg = GemminiConfig()
    hw = (cfg.dim, cfg.sp_kb, cfg.acc_kb)
    layer = Layer(R=3, S=3, P=8, Q=8, C=32, K=32)
    for schedule, loop_conv in ((GemmSchedule(8, 32, 16), False), (GemmSchedule(8, 32, 16, rows=4), True)):
        x = np.zeros((1, layer.input_rows, layer.input_cols, layer.C), np.int8)
        w = np.zeros((3, 3, layer.C, layer.K), np.int8)
        launch = conv2d_launch(x, w, config=cfg, blocks=schedule, scale=1 / 256)
        launch.options["loop_ws"] = loop_conv
        assert kernel_model.runs_loop_conv(layer, schedule, cfg) or not loop_conv
        run = launch.kernel.compile(*launch.args, target="iss", **launch.options).run(launch.grid, launch.args,
                                                                                      timing=TimingModel(cfg))
        measured = run["kernel_cycles"]
        gemmini = kernel_model.conv_schedule_cycles(layer, schedule, hw, end_to_end=False)
        if not loop_conv:       # the model's form must be the program's: force the explicit one's cost
            terms = costmodel.conv_program_terms(layer, kernel_model._schedule_blocks(layer, schedule), 16.0,
                                                 rows=schedule.rows)
            pred = float(kernel_model.conv_end_to_end(layer, terms["cycles"], terms, schedule.rows,
                                                      tuple(torch.tensor([float(v)]) for v in hw),
                                                      torch.tensor([False]))[0])
            assert float(terms["cycles"][0]) < 0.9 * measured, (measured, terms["cycles"])
        else:
            pred = kernel_model.conv_schedule_cycles(layer, schedule, hw)
            assert pred > gemmini
        assert 0.75 < pred / measured < 1.25, (schedule, pred, measured)


def test_pointwise_loop_ws_energy_counts_loop_matmul_commands():
    """A pointwise layer whose blocks fit LOOP_WS runs one LOOP_WS a K step: its predicted energy
    (kernel_model.loop_ws_energy over schedule.gemm_loop_ws_loops) is the simulator's, ragged rows and
    columns, several K steps (a ragged last one), B moved in explicitly or reused included; the
    per-row helper the search's batched cost (conv_program) takes it from gives the same number."""
    cases = [(Layer(R=1, S=1, P=10, Q=10, C=40, K=48), 16, GemmSchedule(32, 32, 16), 256, 64),
             (Layer(R=1, S=1, P=7, Q=7, C=100, K=40), 16, GemmSchedule(32, 32, 48), 256, 64),
             (Layer(R=1, S=1, P=5, Q=9, C=13, K=70), 32, GemmSchedule(45, 64, 13), 256, 128),
             (Layer(R=1, S=1, P=14, Q=14, C=256, K=64), 64, GemmSchedule(128, 64, 96), 256, 256)]
    for layer, dim, schedule, sp_kb, acc_kb in cases:
        cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
        hw = (dim, cfg.sp_kb, cfg.acc_kb)
        energy_uj = kernel_model.conv_schedule_energy(layer, schedule, hw)
        assert math.isclose(energy_uj, simulated(layer, cfg, schedule)["energy_uj"], rel_tol=1e-9), (layer, schedule)
        dims = (layer.N * layer.P * layer.Q, layer.K, layer.C)
        blocks = [torch.tensor([float(b)]) for b in (schedule.block_m, schedule.block_n, schedule.block_k)]
        hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in hw)
        assert math.isclose(float(kernel_model._loop_ws_energy_rows(dims, blocks, hw_t)[0]), energy_uj, rel_tol=1e-9)


def test_double_buffered_conv_stream_cpu_is_priced():
    """A double-buffered explicit conv program issues more instructions than the single-buffered one
    (the next step's loads in the K loop): conv_cpu_cycles prices both from the schedule's double_buffer
    (CONV_EXPLICIT_INSTRUCTIONS' "double_buffer" and "double_buffer_row" terms) within 0.75-1.3x of
    the ISS's count, for the tuned_0.15mm2 test's 3x3 14x14 32>64 2x14/32/32 program at DIM 16 (4/4 KB;
    without the terms it was priced 0.57x double-buffered) and a one-row 8x8 32>32 1x8/32/16 one."""
    cpi = kernel_model.DEFAULT_CONSTANTS.cpu_cycles_per_instruction
    for layer, (bm, bn, bk, rows) in ((Layer(R=3, S=3, P=14, Q=14, C=32, K=64), (14, 32, 32, 2)),
                                      (Layer(R=3, S=3, P=8, Q=8, C=32, K=32), (8, 32, 16, 1))):
        cfg = GemminiConfig.from_capacity(16, 4, 4)
        rng = np.random.default_rng(0)
        x = rng.integers(-128, 128, (1, layer.input_rows, layer.input_cols, layer.C), dtype=np.int8)
        w = rng.integers(-128, 128, (3, 3, layer.C, layer.K), dtype=np.int8)
        counts, priced = {}, {}
        for db in (False, True):
            s = GemmSchedule(bm, bn, bk, rows=rows, double_buffer=db)
            launch = conv2d_launch(x, w, config=cfg, blocks=s, scale=1 / 256)
            counts[db] = launch.kernel.compile(*launch.args, target="iss", **dict(launch.options, loop_ws=False)
                                               ).run(launch.grid, launch.args)["instructions"]
            terms = costmodel.conv_program_terms(layer, kernel_model._schedule_blocks(layer, s), 16.0, rows=rows)
            priced[db] = float(kernel_model.conv_cpu_cycles(layer, terms, rows, 0, db)[0]) / cpi
            assert 0.75 < priced[db] / counts[db] < 1.3, (layer, s, priced[db], counts[db])
        assert counts[True] > 1.4 * counts[False] and priced[True] > 1.4 * priced[False], (counts, priced)
