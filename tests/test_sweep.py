"""baco sweep: the Ray run of networks × area budgets matches the serial one; a dead worker's task is retried."""
import os

import pytest
import yaml

from baco.tuner.sweep import main, run_sweep, run_task, tasks_from_spec, write_table

SPEC = {"networks": ["bert", "conv_dw"], "max_area": [None, 1.0], "seeds": [0], "steps": 3, "importance": False,
        "options": {"starts": 1, "random_pool": 2, "polish": False}}


def test_spec_expands_to_one_task_per_combination():
    tasks = tasks_from_spec(SPEC)
    assert [(t["network"], t["max_area"]) for t in tasks] == [("bert", None), ("bert", 1.0), ("conv_dw", None),
                                                             ("conv_dw", 1.0)]
    with pytest.raises(ValueError, match="unknown keys"):
        tasks_from_spec({**SPEC, "netwroks": []})


@pytest.mark.slow      # a local Ray runtime takes ~1 min to start two workers on a loaded 2-core machine
def test_two_ray_workers_match_serial_and_a_killed_worker_is_retried(tmp_path):
    tasks = tasks_from_spec(SPEC)
    serial = run_sweep(tasks, workers=0, progress=False)
    marker = tmp_path / "died"

    def dies_once(task):                  # the first task's worker process dies once, mid-run
        if task["network"] == "bert" and task["max_area"] is None and not marker.exists():
            marker.write_text("x")
            os._exit(1)
        return run_task(task)

    on_ray = run_sweep(tasks, workers=2, progress=False, run=dies_once)
    assert marker.exists()
    key = ("workload", "max_area_mm2", "status", "edp", "pe_dim", "sp_kb", "acc_kb")
    assert [tuple(r.get(k) for k in key) for r in on_ray] == [tuple(r.get(k) for k in key) for r in serial]
    assert all(r["status"] == "ok" and (r["max_area_mm2"] is None or r["area_mm2"] <= 1.0) for r in serial)
    paths = write_table(on_ray, tmp_path)
    assert len(paths["csv"].read_text().splitlines()) == 5


def test_cli_writes_the_table_serially(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "networks": ["conv_dw"], "max_area": [None]}))
    assert main([str(spec), "--workers", "0", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert (tmp_path / "o" / "sweep.json").exists()
