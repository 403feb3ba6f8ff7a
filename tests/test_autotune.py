"""@baco.autotune: the choice is the fastest timed config, cached in memory and on disk,
pruned as asked, with bit-exact results and the caller's arrays run once."""
import json

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.frontend.autotune import gemm_perf_model, schedule_space
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import default_gemm_schedule, schedule_problems
from baco.kernels.matmul import matmul_kernel, reference

CFG = GemminiConfig()       # DIM 16
GRID = lambda m: (bl.cdiv(m["M"], m["BLOCK_M"]), bl.cdiv(m["N"], m["BLOCK_N"]))  # noqa: E731
CONFIGS = [baco.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}),
           baco.Config({"BLOCK_M": 48, "BLOCK_N": 32, "BLOCK_K": 48}, double_buffer=True),
           baco.Config(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, double_buffer=False),
           baco.Config({"BLOCK_M": 4096, "BLOCK_N": 4096, "BLOCK_K": 16})]   # exceeds the accumulator


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("BACO_CACHE_DIR", str(tmp_path))
    return tmp_path


def operands(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    return a, b


def launch(tuner, M, N, K, seed=0):
    a, b = operands(M, N, K, seed)
    c = np.zeros((M, N), np.int32)
    tuner[GRID](a, b, c, M, N, K, K, 1, N, 1, N, 1, 1.0, RELU=False, OUT_INT8=False, config=CFG)
    return a, b, c


def count_benches(tuner, monkeypatch):
    calls = []
    real = tuner.bench
    monkeypatch.setattr(tuner, "bench", lambda *a: calls.append(a[3]) or real(*a))
    return calls


def test_chooses_the_fastest_timed_config_and_runs_bit_exact():
    tuner = baco.autotune(configs=CONFIGS, key=["M", "N", "K"])(matmul_kernel)
    a, b, c = launch(tuner, 33, 17, 65)
    timed = {k: v for k, v in tuner.timings.items() if not isinstance(v, str)}
    assert set(timed) == set(CONFIGS[:3])
    assert tuner.best_config == min(timed, key=timed.get)
    assert "accumulator" in tuner.timings[CONFIGS[3]]          # skipped before compiling, with the reason
    np.testing.assert_array_equal(c, reference(a, b))


def test_cache_hit_skips_timing_in_memory_and_on_disk(cache_dir, monkeypatch):
    tuner = baco.autotune(configs=CONFIGS[:3], key=["M", "N", "K"])(matmul_kernel)
    calls = count_benches(tuner, monkeypatch)
    launch(tuner, 33, 17, 65)
    assert len(calls) == 3
    chosen = tuner.best_config
    a, b, c = launch(tuner, 33, 17, 65, seed=1)                 # same key: no timing
    assert len(calls) == 3 and tuner.best_config == chosen
    np.testing.assert_array_equal(c, reference(a, b))
    launch(tuner, 17, 17, 65)                                   # new key: timed again
    assert len(calls) == 6
    (entry,) = [json.loads(p.read_text()) for p in (cache_dir / "autotune").glob("*.json")
                if json.loads(p.read_text())["key"] == {"M": 33, "N": 17, "K": 65}]
    assert baco.Config.from_dict(entry["config"]) == chosen and len(entry["timings"]) == 3

    fresh = baco.autotune(configs=CONFIGS[:3], key=["M", "N", "K"])(matmul_kernel)   # a new process, say
    fresh_calls = count_benches(fresh, monkeypatch)
    a, b, c = launch(fresh, 33, 17, 65, seed=2)
    assert fresh_calls == [] and fresh.best_config == chosen
    np.testing.assert_array_equal(c, reference(a, b))


def test_timing_leaves_the_callers_arrays_alone():
    tuner = baco.autotune(configs=CONFIGS[:2], key=["M", "N", "K"])(matmul_kernel)
    M, N, K = 20, 17, 33
    a, b = operands(M, N, K)
    c = np.full((M, N), 7, np.int32)
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, 1.0]
    tuner.choose(GRID, args, dict(RELU=False, OUT_INT8=False, config=CFG))
    assert len(tuner.timings) == 2 and (c == 7).all()


def test_pruning_by_perf_model_and_early_prune(monkeypatch):
    seen = []
    early = lambda configs, named: seen.append(named["M"]) or [c for c in configs  # noqa: E731
                                                                if c.kwargs["BLOCK_M"] != 16]
    tuner = baco.autotune(configs=CONFIGS[:3], key=["M"],
                          prune_configs_by={"early_config_prune": early, **baco.autotune.cost_model_pruner(1)}
                          )(matmul_kernel)
    calls = count_benches(tuner, monkeypatch)
    a, b, c = launch(tuner, 40, 24, 64)
    predicted = {cf: gemm_perf_model(M=40, N=24, K=64, config=CFG, **cf.all_kwargs()) for cf in CONFIGS[1:3]}
    assert seen == [40] and calls == [min(predicted, key=predicted.get)]
    np.testing.assert_array_equal(c, reference(a, b))


def test_no_configs_draws_from_the_schedule_space(monkeypatch):
    space = schedule_space(65, 17, 40, CFG)
    scheds = [c.schedule() for c in space]
    assert {s.double_buffer for s in scheds} == {False, True}
    assert all(not schedule_problems(s, CFG, False) for s in scheds)
    assert all(v % CFG.dim == 0 for s in scheds for v in (s.block_m, s.block_n, s.block_k))
    assert {s.block_m for s in scheds} == {16, 32, 64, 80} and {s.block_k for s in scheds} == {16, 32, 48}
    small = GemminiConfig.from_capacity(16, 16, 16)             # capacity cuts the space
    assert all(not schedule_problems(c.schedule(), small, False) for c in schedule_space(512, 512, 512, small))
    assert len(schedule_space(512, 512, 512, small)) < len(schedule_space(512, 512, 512, CFG))

    tuner = baco.autotune(key=["M", "N", "K"], prune_configs_by=baco.autotune.cost_model_pruner(2))(matmul_kernel)
    calls = count_benches(tuner, monkeypatch)
    a, b, c = launch(tuner, 65, 17, 40)
    default = baco.Config.from_schedule(default_gemm_schedule(65, 17, 40, CFG))
    # the default schedule is always timed beside the kept candidates (its blocks may be an even split
    # of a dimension, which the space's powers of two do not hold)
    assert default in calls and 2 <= len(calls) <= 3 and all(cf in space or cf == default for cf in calls)
    assert tuner.timings[tuner.best_config] <= tuner.timings[default]
    np.testing.assert_array_equal(c, reference(a, b))


def test_errors():
    with pytest.raises(ValueError, match="names no parameter"):
        baco.autotune(configs=CONFIGS, key=["Q"])(matmul_kernel)
    with pytest.raises(ValueError, match="prune_configs_by"):
        baco.autotune(configs=CONFIGS, key=["M"], prune_configs_by={"topk": 2})(matmul_kernel)
    with pytest.raises(TypeError, match="above @baco.jit"):
        baco.autotune(configs=CONFIGS, key=["M"])(lambda x: x)
    tuner = baco.autotune(configs=CONFIGS[3:], key=["M"])(matmul_kernel)
    with pytest.raises(ValueError, match="no autotune candidate runs.*accumulator"):
        launch(tuner, 17, 17, 17)
    tuner = baco.autotune(configs=CONFIGS[:1], key=["M"])(matmul_kernel)
    with pytest.raises(ValueError, match="chosen by autotune"):
        tuner[GRID](*[None] * 13, BLOCK_M=16)


@pytest.mark.parametrize("kw,error,match", [
    (dict(configs=CONFIGS[0]), TypeError, "configs must be a list of baco.Config, got Config"),
    (dict(configs=[5]), TypeError, r"configs\[0\] must be a baco.Config or a dict, got int 5"),
    (dict(configs=[baco.Config(M=16, BLOCK_M=16)]), ValueError, r"configs\[0\] sets \['M'\], which are not constexpr"),
    (dict(configs=CONFIGS[:1] + [baco.Config(BLOK_M=16)]), ValueError, r"configs\[1\] sets \['BLOK_M'\]"),
    (dict(configs=[baco.Config(BLOCK_M=0, BLOCK_N=16, BLOCK_K=16)]), ValueError, r"configs\[0\].*block_m=0 must be"),
    (dict(configs=[baco.Config(BLOCK_M=16.5, BLOCK_N=16, BLOCK_K=16)]), ValueError, "block_m=16.5 must be"),
    (dict(key="MN"), TypeError, "key must be a list of parameter names, got 'MN'"),
    (dict(prune_configs_by=[("top_k", 2)]), TypeError, "prune_configs_by must be a dict"),
    (dict(prune_configs_by={"perf_model": 3}), TypeError, "perf_model must be a function"),
    (dict(prune_configs_by={"early_config_prune": "all"}), TypeError, "early_config_prune must be a function"),
    (dict(prune_configs_by={"top_k": 0}), ValueError, "top_k must be a count >= 1 or a fraction in"),
    (dict(prune_configs_by={"top_k": -1}), ValueError, "top_k must be a count"),
    (dict(prune_configs_by={"top_k": 1.5}), ValueError, "top_k must be a count"),
    (dict(prune_configs_by={"top_k": "2"}), TypeError, "top_k must be an int or a float, got str"),
    (dict(cache_results="no"), TypeError, "cache_results must be a bool"),
    (dict(end_to_end=1), TypeError, "end_to_end must be a bool"),
])
def test_argument_errors_name_the_argument(kw, error, match):
    with pytest.raises(error, match=match):
        baco.autotune(**{"configs": CONFIGS[:2], "key": ["M"], **kw})(matmul_kernel)


def test_config_options_are_checked_and_pruners_must_return_configs():
    with pytest.raises(ValueError, match="Config dataflow must be one of"):
        baco.Config(BLOCK_M=16, dataflow="XS")
    with pytest.raises(TypeError, match="Config double_buffer must be a bool"):
        baco.Config(BLOCK_M=16, double_buffer="yes")
    for prune, error, match in [(lambda cs, named: None, TypeError, "must return a list of the configs"),
                                (lambda cs, named: [1], TypeError, "must return a list of the configs"),
                                (lambda cs, named: [], ValueError, "early_config_prune kept no config")]:
        tuner = baco.autotune(configs=CONFIGS[:2], key=["M"], cache_results=False,
                              prune_configs_by={"early_config_prune": prune})(matmul_kernel)
        with pytest.raises(error, match=match):
            launch(tuner, 17, 17, 17)
    tuner = baco.autotune(configs=CONFIGS[:2], key=["M"], cache_results=False,
                          prune_configs_by={"perf_model": lambda **kw: "fast", "top_k": 1})(matmul_kernel)
    with pytest.raises(TypeError, match="perf_model must return a number, got 'fast'"):
        launch(tuner, 17, 17, 17)
    # a wrong argument is named even when every candidate would be skipped for its blocks (seed 201209)
    tuner = baco.autotune(configs=CONFIGS[3:], key=["M"], cache_results=False)(matmul_kernel)
    a, b = operands(17, 17, 17)
    with pytest.raises(TypeError, match="argument `a_ptr` has dtype float64"):
        tuner[GRID](a.astype(np.float64), b, np.zeros((17, 17), np.int32), 17, 17, 17, 17, 1, 17, 1, 17, 1, 1.0,
                    RELU=False, OUT_INT8=False, config=CFG)


def test_end_to_end_timing_counts_the_cpu():
    # the default: each candidate as its RISC-V program on the ISS with the cycle model (rdcycle
    # around the grid loop and fence); end_to_end=False: the command stream alone, commands free
    e2e = baco.autotune(configs=CONFIGS[:3], key=["M", "N", "K"])(matmul_kernel)
    alone = baco.autotune(configs=CONFIGS[:3], key=["M", "N", "K"], end_to_end=False)(matmul_kernel)
    for tuner in (e2e, alone):
        a, b, c = launch(tuner, 33, 17, 65)
        np.testing.assert_array_equal(c, reference(a, b))
    assert set(e2e.timings) == set(alone.timings) == set(CONFIGS[:3])
    for config in CONFIGS[:3]:
        assert e2e.timings[config] > alone.timings[config]     # the CPU's issue is on the clock
    s = CONFIGS[0].schedule()
    args = [*operands(33, 17, 65), np.zeros((33, 17), np.int32), 33, 17, 65, 65, 1, 17, 1, 17, 1, 1.0]
    # the tuner times the program the launch runs: compiled for its grid
    ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=False, config=CFG, schedule=s, target="iss", grid=(3, 2))
    assert ck.grid == (3, 2, 1)
    from baco.sim.timing import TimingModel
    run = ck.run((3, 2), args, timing=TimingModel(CFG))
    assert e2e.timings[CONFIGS[0]] == run["kernel_cycles"]
    anygrid = matmul_kernel.compile(*args, RELU=False, OUT_INT8=False, config=CFG, schedule=s, target="iss")
    assert anygrid.run((3, 2), args, timing=TimingModel(CFG))["kernel_cycles"] != run["kernel_cycles"]
