"""benchmarks/network.py at its smoke size: every method runs, tables, plots and Timeloop files are written."""
import importlib.util
import json
from pathlib import Path

import pytest

# A GEMM network small enough for the exhaustive optimum: it walks LoopMatmul's program of every block
# (every BLOCK_M since ef49616) that survives optimum.block_bound, ~3 ms a block: ~10,000 here, where BERT's
# 128x128 array leaves ~2.3 M (the smoke on BERT with the optimum ran past 1,500 s). (key: R_S_P_Q_C_K_N and strides, dilations)
TINY_GEMMS = {"1_1_8_1_12_8_1_1_1_1_1": ("up", 1), "1_1_8_1_8_12_1_1_1_1_1": ("down", 1),
              "1_1_8_1_8_8_1_1_1_1_1": ("square", 2)}


def _benchmark():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "network.py"
    spec = importlib.util.spec_from_file_location("network_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.mark.slow      # seven methods x 2 s plus set-up on BERT: ~1 min
def test_network_benchmark_smoke(tmp_path, capsys):
    bench = _benchmark()
    assert bench.main(["--smoke", "--no-optimum", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "geomean over 1 networks" in out and "importance on vs off" in out
    assert "optimum (exhaustive)" not in out
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results["bert"]) >= set(bench.METHODS) | {"lower_bound"}
    assert all(results["bert"][m]["timeloop_edp"] >= results["bert"]["lower_bound"] for m in bench.METHODS)
    assert (tmp_path / "normalised_edp.png").stat().st_size > 1000 and (tmp_path / "convergence.png").exists()
    assert (tmp_path / "bert" / "timeloop" / "arch.yaml").exists()


@pytest.mark.slow      # seven methods x 2 s and the optimum's ~45 s
def test_network_benchmark_optimum_of_a_gemm_network(tmp_path, capsys, monkeypatch):
    """A network of GEMMs only: its exact optimum is printed, and no method beats it."""
    bench = _benchmark()
    net = tmp_path / "tiny"
    net.mkdir()
    (net / "layer_count.yaml").write_text("".join(f"'{key}':\n  count: {count}\n  name: {name}\n"
                                                  for key, (name, count) in TINY_GEMMS.items()))
    monkeypatch.chdir(tmp_path)      # the network's name is its folder, relative: results.json's key
    assert bench.main(["--smoke", "--networks", "tiny", "--out", "out"]) == 0
    out = capsys.readouterr().out
    results = json.loads((tmp_path / "out" / "results.json").read_text())["tiny"]
    assert "optimum (exhaustive)" in out and results["optimum"]["exact"]
    assert all(results[m]["edp"] >= results["optimum"]["edp"] * (1 - 1e-9) for m in bench.METHODS)
    assert (tmp_path / "out" / "tiny" / "timeloop" / "arch.yaml").exists()


def test_an_unfinished_optimum_is_reported_as_such(capsys):
    """network.py prints that the exhaustive optimum did not finish within its limit and records it."""
    from baco.tuner.workloads import gemm
    bench = _benchmark()
    layers = [gemm(8, 12, 8), gemm(8, 8, 12)]
    row = bench.print_optimum(layers, {"baco": {"edp": 1e30}}, 1.0, 1, 1e-9)
    assert row == {"finished": False, "time_limit_s": 1e-9}
    assert "not finished: the exhaustive optimum did not finish within 1e-09 s" in capsys.readouterr().out
