"""The tuner/compiler/simulator loop: every design the tuner returns for a GEMM-shaped layer
compiles on its own hardware and runs bit-exact (property test over random designs: a fast
subset here, 200 with -m slow); the tuner's capacity need equals what the compiler places;
`baco tune --verify` and `baco run --design` compile, run and time a tuned design."""
import json

import numpy as np
import pytest
import torch

from baco.cli import main as baco_main
from baco.design import check_design, load_design, output_scale, run_gemm, summary
from baco.gemmini.schedule import gemm_footprint, schedule_problems
from baco.sim.clib import time_matmul
from baco.tuner.arch import DEFAULT_HARDWARE
from baco.tuner.explore import NetworkProblem, coexplore, random_tilings
from baco.tuner.hwinfer import mapping_requirement, minimal_hardware
from baco.tuner.mapping import KERNEL_OUT_INT8, gemm_schedule, validate
from baco.tuner.workloads import gemm


SIZES = (1, 4, 16, 17, 33, 48, 64, 65, 96, 128, 200)


def random_tuned_designs(n, seed, random_layer):
    """(layer, mapping, hardware, schedule) of n random design points of layers drawn by
    random_layer(rng), the hardware inferred from the mapping as the tuner infers it, the schedule
    (dataflow, double buffering, conv rows) as the search picks it."""
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    out = []
    while len(out) < n:
        layer = random_layer(rng)
        problem = NetworkProblem([layer], max_pe=int(rng.choice([4, 8, 16, 32])))
        design = [tilings[0] for tilings in random_tilings(problem, 1, gen)]
        try:
            result = problem.result(design, "random", 0.0)
        except ValueError:          # beyond the largest buildable buffers
            continue
        out.append((layer, result.mappings[0], result.hw, result.per_layer[0].schedule))
    return out


def random_designs(n, seed, sizes=SIZES):
    """random_tuned_designs of random (ragged) GEMM layers with dimensions from `sizes`."""
    def random_gemm(rng):
        M, N, K = (int(x) for x in rng.choice(sizes, 3))
        return gemm(M, K, N)
    return random_tuned_designs(n, seed, random_gemm)


def check_compiles_and_runs(layer, mapping, hw, schedule):
    assert validate(mapping, layer, hw) == []
    cfg = hw.to_gemmini_config()
    plain = gemm_schedule(mapping, layer)
    assert (schedule.block_m, schedule.block_n, schedule.block_k) == (plain.block_m, plain.block_n, plain.block_k)
    assert schedule_problems(schedule, cfg, KERNEL_OUT_INT8) == []
    # the kernel compiled for the design runs bit-exact; above 2e5 MACs cut to two blocks per
    # dimension (the same compiled code, schedule and Gemmini), so 200 designs fit in minutes
    ok, report, shape = run_gemm(layer.P, layer.K, layer.C, cfg, schedule, functional_macs=2e5, timed=False)
    assert ok, (layer, schedule, cfg.dim, cfg.sp_kb, cfg.acc_kb)
    # the whole problem ran: every MAC, and at most each block's ragged edge columns and K rows
    # padded to whole DIM-wide array passes
    m, n, k = shape
    assert m * n * k <= report["macs"] <= m * _dim_padded(n, schedule.block_n, cfg.dim) * \
        _dim_padded(k, schedule.block_k, cfg.dim)


def _dim_padded(total, block, dim):
    """The extent of `total` run in blocks of `block`, each block rounded up to whole `dim`s."""
    return sum(-(-min(block, total - start) // dim) * dim for start in range(0, total, block))


@pytest.mark.parametrize("seed", range(3))
def test_random_tuned_gemm_designs_compile_and_run_bit_exact(seed):
    for design in random_designs(2, seed, sizes=(1, 16, 17, 33, 48, 64)):
        check_compiles_and_runs(*design)


@pytest.mark.slow
def test_200_random_tuned_gemm_designs_compile_and_run_bit_exact():
    designs = random_designs(200, 1000)
    for design in designs:
        check_compiles_and_runs(*design)
    assert any(d[3].double_buffer for d in designs) and any(d[3].dataflow == "OS" for d in designs)


def test_tuner_capacity_is_the_compilers():
    # the tuner's (differentiable) need of a GEMM mapping is exactly gemm_footprint on the array it runs on
    for layer, mapping, hw, _ in random_designs(40, 7):
        cfg = hw.to_gemmini_config()
        fp = gemm_footprint(gemm_schedule(mapping, layer), cfg, KERNEL_OUT_INT8)
        need = mapping_requirement(layer, mapping, cfg.dim)
        assert need.sp_kb == fp.sp_rows * cfg.dim * cfg.input_bytes / 1024
        assert need.acc_kb == fp.acc_rows * cfg.dim * cfg.acc_bytes / 1024
        assert minimal_hardware([layer], [mapping]).pe_dim == hw.pe_dim


def test_searched_designs_compile_on_their_hardware():
    from baco.tuner import baselines
    layers = [gemm(64, 200, 48, "a"), gemm(33, 65, 17, "b")]
    results = [coexplore(layers, seed=0, steps=20, starts=2, progress=False, kicks=1, random_pool=8),
               baselines.gemmini_default(layers), baselines.random_search(layers, samples=64),
               baselines.genetic(layers, generations=3, population=16)]
    for result in results:
        for layer, mapping, cost in zip(layers, result.mappings, result.per_layer):
            # (Gemmini-default runs the C library, no schedule: its mapping as baco would compile it)
            check_compiles_and_runs(layer, mapping, result.hw, cost.schedule or gemm_schedule(mapping, layer))


def test_tune_verify_and_run_design(tmp_path, capsys):
    out = tmp_path / "gemm"
    assert baco_main(["tune", "--op", "gemm", "--M", "64", "--N", "48", "--K", "96", "--steps", "10",
                      "--out", str(out), "--quiet", "--verify"]) == 0
    text = capsys.readouterr().out
    assert "every kernel layer bit-exact: True" in text and "better than Gemmini-default predicted" in text
    design = load_design(out)
    assert design["layers"][0]["schedule"]["block_m"] >= 1
    checks = check_design(design, progress=None)
    s = summary(checks)
    assert s["bit_exact"] and s["kernel_layers"] == 1
    c = checks[0]
    assert c.simulated.cycles >= 64 * 48 * 96 / design["hardware"]["pe_dim"] ** 2
    assert c.default_simulated.cycles > 0 and s["gain_simulated"] > 0
    # end to end (the default): the kernel's ELF on the ISS, its CPU issuing the commands, and the C
    # library's calls at its CPU cost, against the same programs with commands free
    assert "better than Gemmini-default with the CPU counted" in text
    assert c.end_to_end.cycles > c.simulated.cycles * 0.5 and c.end_to_end.energy_uj > 0
    lib = time_matmul(64, 48, 96, DEFAULT_HARDWARE.to_gemmini_config(), out_int8=KERNEL_OUT_INT8, scale=output_scale(96))
    assert c.default_end_to_end.cycles > lib["cycles"]
    assert s["gain_end_to_end"] == pytest.approx(s["default_end_to_end"] / s["end_to_end"])
    assert baco_main(["run", "--design", str(out), "--gemmini-alone"]) == 0
    assert "CPU counted" not in capsys.readouterr().out
    assert json.loads((out / "result.json").read_text())["layers"][0]["blocks"]["BLOCK_M"] == c.schedule.block_m


def test_loop_check_benchmark_smoke(capsys):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "loop_check.py"
    spec = importlib.util.spec_from_file_location("loop_check", path)
    loop_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loop_check)
    assert loop_check.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert "Pearson r of log cycles" in out and "every layer bit-exact: True" in out


def test_large_layers_are_timed_on_their_command_stream_and_checked_cut_down():
    from baco.gemmini.config import GemminiConfig
    from baco.gemmini.schedule import GemmSchedule
    cfg = GemminiConfig.from_capacity(8, 16, 8)
    s = GemmSchedule(16, 24, 32)
    ok, full, shape = run_gemm(40, 50, 70, cfg, s)
    assert ok and shape == (40, 50, 70)
    ok, traced, shape = run_gemm(40, 50, 70, cfg, s, functional_macs=0)
    assert ok and shape == (32, 48, 64)
    assert traced == full             # the same commands: the cycle model cannot tell the difference
