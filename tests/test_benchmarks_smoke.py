"""Every script in benchmarks/ runs in its smallest size and exits as expected, so
none can rot. A new script without an entry here fails the test: give it a smoke
size and add it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

# script -> (arguments of its smallest run, expected exit code); runs over ~8 s here are
# marked slow (SLOW) so the default suite stays fast; `-m slow` runs them
SLOW = {"conv_end_to_end.py", "costmodel_vs_timeloop.py", "cpu_issue.py", "cpu_ops.py", "dw_pw_programs.py", "fused_programs.py", "fusion.py", "fuzz_report.py", "loop_check.py", "models.py", "network.py", "rtl_calibration.py",
        "single_op.py", "train_cost_residual.py", "tuned_models.py"}
# the built gemmini-rocc-tests programs, when the reference folder is beside the checkout
ROCC_BIN = next((d / "shared" / "reference" / "gemmini-rocc-tests" / "bin" for d in ROOT.parents
                 if (d / "shared" / "reference" / "gemmini-rocc-tests" / "bin").is_dir()), None)
SMOKE = {
    "clib_check.py": (["--smoke"] + (["--bin", str(ROCC_BIN)] if ROCC_BIN else []), 0),
    "compile_time.py": (["--repeat", "1"], 0),
    "conv_end_to_end.py": (["--smoke", "--dims", "64"], 0),
    "conv_explicit_bias.py": (["--smoke"], 0),
    "conv_pool.py": (["--smoke", "--end-to-end"], 0),
    "cpu_constants.py": (["--smoke"], 0),
    "cpu_issue.py": (["--smoke"], 0),
    "cpu_ops.py": (["--smoke"], 0),
    "costmodel_vs_timeloop.py": (["--rows", "50"], 0),
    "dw_pw_programs.py": (["--smoke"], 0),
    "explicit_gemm_iss.py": (["--smoke", "--dims", "16"], 0),
    "explicit_gemm_model.py": (["--smoke", "--dims", "16,128"], 0),
    "fused_loop_chain.py": (["--smoke"], 0),
    "fused_programs.py": (["--smoke"], 0),
    "fusion.py": (["--smoke"], 0),
    "fuzz_report.py": (["--smoke"], 0),
    "gemm_cycles.py": (["--size", "64"], 0),
    "instruction_mix.py": (["--smoke"], 0),
    "kernels.py": (["--smoke", "--top-k", "1"], 0),      # autotune timing one candidate and the default
    "loop_check.py": (["--smoke"], 0),
    "loop_ws_headroom.py": (["--smoke"], 0),
    "loop_ws_walk.py": (["--smoke", "--dims", "16,128"], 0),
    "models.py": (["--smoke"], 0),
    # BERT's exhaustive optimum does not finish: past optimum.block_bound and the costed explicit variants
    # ~2.3 M blocks of 128x128 (~1 M each of its small mm_1 and mm_2) are left to walk, ~3 ms each;
    # tests/test_network_benchmark.py checks the optimum on a network small enough
    "network.py": (["--smoke", "--no-optimum"], 0),
    "rtl_calibration.py": (["--rows", "10"], 0),
    "resadd_specialized.py": (["--smoke"], 0),
    "search_speed.py": (["--smoke"], 0),
    "sim_speed.py": (["--smoke"], 0),
    "single_op.py": (["--size", "small", "--budget", "1", "--categories", "GEMM", "--methods", "baco"], 0),
    # without a Gemmini extension library for Spike it must say so and exit 2
    "spike_check.py": ([], 2),
    "train_cost_residual.py": (["--smoke"], 0),
    "tuned_models.py": (["--smoke"], 0),
}
# further smoke runs of a script (arguments, expected exit code), all slow
MORE_SMOKE = {"fused_programs.py": [(["--smoke", "--ext-spad", "--no-forced"], 0)],
              # each row at two seeds, its saving their median; no seed at all is an argument error
              "fusion.py": [(["--smoke", "--seeds", "2"], 0), (["--smoke", "--seeds", "0"], 2)]}


def scripts():
    return sorted(p.name for p in BENCH.glob("*.py"))


def test_every_benchmark_has_a_smoke_run():
    missing = [s for s in scripts() if s not in SMOKE]
    assert not missing, f"benchmarks without a smoke entry in {Path(__file__).name}: {missing}"
    stale = [s for s in SMOKE if s not in scripts()]
    assert not stale, f"smoke entries for scripts that no longer exist: {stale}"


@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s
                                    for s in scripts()])
def test_benchmark_smoke(script, tmp_path):
    if script not in SMOKE:
        pytest.fail(f"{script} has no smoke entry")
    run_smoke(script, *SMOKE[script], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("script,args,expected", [(s, a, e) for s, runs in MORE_SMOKE.items() for a, e in runs])
def test_benchmark_more_smoke(script, args, expected, tmp_path):
    run_smoke(script, args, expected, tmp_path)


def run_smoke(script, args, expected, tmp_path):
    # the project's disk cache (BACO_CACHE_DIR), as every in-process test uses: keyed by the compiler's sources,
    # it is cold after a compiler change and spares the rebuild otherwise (kernels.py --smoke: 50 CPU s cold, 11 warm)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    if script == "spike_check.py":
        env.pop("BACO_SPIKE_EXTLIB", None)
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == expected, f"{script} {' '.join(args)} exited {proc.returncode}:\n" \
        f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
