"""Network co-exploration: importance scheduling, area budgets, the Pareto sweep."""
from pathlib import Path

import pytest

from baco.problem.layer import Layer
from baco.tuner import explore
from baco.tuner.arch import area_mm2
from baco.tuner.explore import NetworkProblem, coexplore
from baco.tuner.importance import estimated_gain, importance_search, layer_costs, LayerTask
from baco.tuner.mapping import validate
from baco.tuner.workloads import gemm

ROOT = Path(__file__).resolve().parents[1]
SMALL = dict(seed=0, steps=10, starts=2, random_pool=4, polish=False, progress=False)
NET = [gemm(128, 64, 256, name="fc"), Layer(R=3, S=3, P=14, Q=14, C=32, K=64, N=1, name="conv", count=3),
       gemm(33, 17, 65, name="ragged")]


def _valid(result, layers):
    assert all(validate(m, l, result.hw) == [] for m, l in zip(result.mappings, layers))


def test_importance_search_is_valid_deterministic_and_logs_its_trace():
    a = coexplore(NET, importance=True, **SMALL)
    b = coexplore(NET, importance=True, **SMALL)
    _valid(a, NET)
    assert (a.edp, a.hw) == (b.edp, b.hw)
    assert a.trace and a.trace[-1][1] == pytest.approx(a.edp)
    assert all(x[1] > y[1] for x, y in zip(a.trace, a.trace[1:]))
    _valid(coexplore(NET[:1], importance=True, **SMALL), NET[:1])   # one layer: nothing else to cache


def test_scheduler_warms_up_every_layer_then_follows_the_gain():
    import torch
    from baco.tuner.explore import Budget, random_tilings
    problem = NetworkProblem(NET)
    init = [ts[0] for ts in random_tilings(problem, 1, torch.Generator().manual_seed(1))]
    edp0 = float(problem.score([[t] for t in init]).edp[0])
    visits = []
    edp, design, trace, complete = importance_search(
        problem, init, edp0, budget=Budget(4 * 5, None, 0), lr=0.08, generator=torch.Generator().manual_seed(0),
        slice_steps=4, progress=False, on_slice=lambda s: visits.append([t.slices for t in s["tasks"]]))
    assert visits[2] == [1, 1, 1]                     # warm-up: equal allocation
    assert edp <= edp0 and trace[-1] == (20, edp) and complete
    energy, cycles = layer_costs(problem, design)
    gains = [estimated_gain(problem, [LayerTask(i, None, None, history=[]) for i in range(3)], i, energy, cycles)
             for i in range(3)]
    assert all(g >= 0 for g in gains)


def test_scheduler_whose_warm_up_overruns_the_time_stops_and_the_joint_descent_takes_over(monkeypatch):
    import time
    import torch
    from baco.tuner import importance
    from baco.tuner.explore import Budget, random_tilings
    problem = NetworkProblem(NET)
    init = [ts[0] for ts in random_tilings(problem, 1, torch.Generator().manual_seed(1))]
    edp0 = float(problem.score([[t] for t in init]).edp[0])

    class SlowClock:                     # the scheduler sees every slice take 100 s
        now = time.perf_counter()

        @classmethod
        def perf_counter(cls):
            cls.now += 100.0
            return cls.now
    monkeypatch.setattr(importance, "time", SlowClock)
    edp, _, trace, complete = importance_search(problem, init, edp0, budget=Budget(None, time.perf_counter() + 60, 0),
                                                lr=0.08, generator=torch.Generator().manual_seed(0), slice_steps=2,
                                                progress=False)
    assert not complete and len(trace) == 1 and edp <= edp0
    monkeypatch.undo()
    _valid(coexplore(NET, importance=True, time_budget_s=0.5, seed=0, progress=False), NET)


def test_area_budget_is_respected_and_an_impossible_one_is_an_error():
    free = coexplore(NET, **SMALL)
    budget = free.hw.area_mm2 / 3
    tight = coexplore(NET, max_area_mm2=budget, **SMALL)
    _valid(tight, NET)
    assert tight.hw.area_mm2 <= budget
    with pytest.raises(ValueError, match="area budget|within"):
        coexplore(NET, max_area_mm2=area_mm2(2, 1, 1) / 2, **SMALL)


def test_pareto_sweep_writes_front(tmp_path):
    from baco.tuner.area import front, pareto_sweep, write_pareto
    rows = pareto_sweep(lambda max_area: coexplore(NET[:1], max_area_mm2=max_area, **SMALL), 3, log=lambda *_: None)
    assert rows[0]["max_area_mm2"] is None and len(rows) >= 2
    assert all(r["area_mm2"] <= r["max_area_mm2"] for r in rows[1:])
    f = front(rows)
    assert all(a["area_mm2"] <= b["area_mm2"] and a["edp"] > b["edp"] for a, b in zip(f, f[1:]))
    paths = write_pareto(rows, tmp_path)
    assert paths["png"].stat().st_size > 1000 and len(paths["csv"].read_text().splitlines()) == len(rows) + 1


class Killed(Exception):
    pass


@pytest.mark.parametrize("importance,polish,kill_at", [
    (False, False, 2), (True, False, 1),                        # killed in the descent
    pytest.param(True, True, 3, marks=pytest.mark.slow)])       # killed in the polish (local search is slow)
def test_killed_and_resumed_run_ends_with_the_uninterrupted_design(tmp_path, importance, polish, kill_at):
    from baco.tuner.checkpoint import Checkpointer
    kw = dict(seed=3, steps=4, starts=2, random_pool=2, kicks=1, progress=False, importance=importance,
              polish=polish)
    whole = coexplore(NET[:2], **kw)

    class Dying(Checkpointer):       # killed right after its second checkpoint
        def save(self, state):
            super().save(state)
            if self.saves == kill_at:
                raise Killed
    path = tmp_path / "ckpt.pt"
    with pytest.raises(Killed):
        coexplore(NET[:2], checkpoint=Dying(path, every_s=0.0), **kw)
    resumed = coexplore(NET[:2], checkpoint=Checkpointer(path, every_s=0.0, resume=True), **kw)
    assert (resumed.edp, resumed.hw) == (whole.edp, whole.hw)
    assert [m.temporal for m in resumed.mappings] == [m.temporal for m in whole.mappings]


@pytest.mark.slow
def test_baco_tune_killed_with_sigkill_resumes_to_the_same_design(tmp_path):
    import json
    import os
    import signal
    import subprocess
    import sys
    import time
    args = [sys.executable, "-m", "baco.cli", "tune", "--network", "bert", "--steps", "120", "--seed", "1",
            "--quiet", "--checkpoint-every", "0.5"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(args + ["--out", str(tmp_path / "whole")], check=True, env=env, capture_output=True)
    run = subprocess.Popen(args + ["--out", str(tmp_path / "killed")], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    ckpt = tmp_path / "killed" / "checkpoint.pt"
    while not ckpt.exists() and run.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)
    assert run.poll() is None, "the run ended before it could be killed"
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert not (tmp_path / "killed" / "result.json").exists()
    subprocess.run(args + ["--out", str(tmp_path / "killed"), "--resume"], check=True, env=env, capture_output=True)
    whole, resumed = (json.loads((tmp_path / d / "result.json").read_text()) for d in ("whole", "killed"))
    assert whole["hardware"] == resumed["hardware"] and whole["layers"] == resumed["layers"]


def test_joint_descent_after_the_scheduler_stalls_resumes_to_the_uninterrupted_design(tmp_path, monkeypatch):
    """When every layer's slices stop improving the scheduler ends early; the joint descent takes the
    rest of the steps, and a run killed in it resumes to the uninterrupted design."""
    import functools
    from baco.tuner import importance
    from baco.tuner.checkpoint import Checkpointer
    flags = []

    def short_slices(*args, **kwargs):
        out = search(*args, slice_steps=2, **kwargs)
        flags.append(out[3])
        return out

    def fruitless_slice(problem, design, edp, *args):
        # the slice still runs (same random draws), but its result is dropped: every layer stalls
        run_slice(problem, design, edp, *args)
        return edp, design
    search, run_slice = importance.importance_search, importance.run_slice
    monkeypatch.setattr(explore, "importance_search", functools.wraps(search)(short_slices))
    monkeypatch.setattr(importance, "run_slice", fruitless_slice)
    kw = dict(seed=3, steps=16, starts=2, random_pool=2, progress=False, importance=True, polish=False)
    whole = coexplore(NET[:2], **kw)
    assert flags == [False]

    class Dying(Checkpointer):
        def save(self, state):
            super().save(state)
            if "joint" in state["descent"]:
                raise Killed
    path = tmp_path / "ckpt.pt"
    with pytest.raises(Killed):
        coexplore(NET[:2], checkpoint=Dying(path, every_s=0.0), **kw)
    resumed = coexplore(NET[:2], checkpoint=Checkpointer(path, every_s=0.0, resume=True), **kw)
    assert (resumed.edp, resumed.hw) == (whole.edp, whole.hw)


class Payload:
    """Runs code when unpickled (what a checkpoint from someone else could hold)."""
    ran = []

    def __reduce__(self):
        return (Payload.ran.append, ("code ran",))


def test_checkpoint_is_tensors_and_json_and_refuses_pickled_objects(tmp_path):
    """--resume reads checkpoint.pt with torch.load(weights_only=True): the state round-trips (shared
    tensors, Adam, Tiling, LayerTask, inf, tuples, int keys), and a file holding a pickled object
    is refused without running it."""
    import torch

    from baco.tuner.checkpoint import CheckpointError, Checkpointer
    from baco.tuner.descent import Adam
    from baco.tuner.importance import LayerTask
    from baco.tuner.points import Tiling
    theta = torch.randn(1, 4, 7, requires_grad=True)
    spatial = torch.randn(1, 2, requires_grad=True)
    opt = Adam([theta, spatial], lr=0.05)
    (theta.sum() + spatial.sum()).backward()
    opt.step()
    task = LayerTask(3, theta, spatial, opt, steps=4, history=[(1, 2.5, 300)])
    state = {"rng": torch.Generator().manual_seed(5).get_state(), "best_edp": [float("inf"), 1.5],
             "design": [Tiling(((1, 2), (3, 4)), 2, 4, 1)], "tasks": [task], "queue": (2, 0), "ints": {7: "x"}}
    ck = Checkpointer(tmp_path / "c.pt", key="k")
    ck.save(state)
    back = Checkpointer(tmp_path / "c.pt", resume=True, key="k").load()
    assert back["best_edp"] == [float("inf"), 1.5] and back["queue"] == (2, 0) and back["ints"] == {7: "x"}
    assert back["design"] == state["design"] and torch.equal(back["rng"], state["rng"])
    t = back["tasks"][0]
    assert (t.index, t.steps, t.history) == (3, 4, [(1, 2.5, 300)])
    assert torch.equal(t.theta, theta) and t.theta.requires_grad
    assert t.optimizer.params[0] is t.theta          # the optimizer steps the task's own tensors
    assert (t.optimizer.lr, t.optimizer.t, t.optimizer.betas) == (0.05, 1, (0.9, 0.999))
    assert torch.equal(t.optimizer.m[0], opt.m[0]) and torch.equal(t.optimizer.v[1], opt.v[1])

    bad = tmp_path / "evil.pt"
    torch.save({"format": "baco-checkpoint-1", "state": "{}", "tensors": {}, "x": Payload()}, bad)
    with pytest.raises(CheckpointError, match="refused by the tensors-only loader"):
        Checkpointer(bad, resume=True, key="k").load()
    assert Payload.ran == []
    torch.save({"key": "k", "phase": "descent"}, bad)          # the old pickled format: not a checkpoint now
    with pytest.raises(CheckpointError, match="not a baco checkpoint"):
        Checkpointer(bad, resume=True, key="k").load()
