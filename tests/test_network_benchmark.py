"""benchmarks/network.py at its smoke size: every method runs, tables, plots and Timeloop files are written."""
import importlib.util
import json
from pathlib import Path

import pytest


@pytest.mark.slow      # seven methods x 2 s plus set-up, and BERT's exhaustive optimum: ~2-3 min
def test_network_benchmark_smoke(tmp_path, capsys):
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "network.py"
    spec = importlib.util.spec_from_file_location("network_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--smoke", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "geomean over 1 networks" in out and "importance on vs off" in out
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results["bert"]) >= set(bench.METHODS) | {"lower_bound"}
    assert all(results["bert"][m]["timeloop_edp"] >= results["bert"]["lower_bound"] for m in bench.METHODS)
    # BERT is all GEMMs: its exact optimum is printed, and no method beats it
    assert "optimum (exhaustive)" in out and results["bert"]["optimum"]["exact"]
    assert all(results["bert"][m]["edp"] >= results["bert"]["optimum"]["edp"] * (1 - 1e-9) for m in bench.METHODS)
    assert (tmp_path / "normalised_edp.png").stat().st_size > 1000 and (tmp_path / "convergence.png").exists()
    assert (tmp_path / "bert" / "timeloop" / "arch.yaml").exists()
