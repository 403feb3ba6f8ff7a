"""`baco sweep SPEC.yaml --workers N`: many co-explorations (networks × area budgets × seeds) on Ray.

SPEC.yaml:

    networks: [bert, resnet50]            # shipped networks or folders laid out like them
    torch:                                # optional: torch model factories
      - {model: torchvision.models:resnet50, input_shape: [1, 3, 224, 224]}
    max_area: [null, 2.0]                 # mm² budgets (null: none)
    seeds: [0, 1]
    steps: 200                            # and/or budget: 60 (seconds per run)
    importance: true
    options: {starts: 4}                  # any other coexplore keyword

A local Ray runtime with N worker processes starts by default; --address joins a running cluster.
Each run is one Ray task; a task whose worker dies is retried (Ray's max_retries), the others go
on. --workers 0 runs the same tasks serially in this process (no Ray). Results land in one table:
OUT/sweep.csv and OUT/sweep.json, one row per run.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import json
import sys
import time
from pathlib import Path

import yaml

RETRIES = 3


def tasks_from_spec(spec: dict) -> list[dict]:
    """One task per (workload, area budget, seed), in a fixed order."""
    unknown = set(spec) - {"networks", "torch", "max_area", "seeds", "steps", "budget", "importance", "options"}
    if unknown:
        raise ValueError(f"sweep spec: unknown keys {sorted(unknown)}")
    workloads = [{"network": str(n)} for n in spec.get("networks", [])]
    workloads += [{"torch": t["model"], "input_shape": list(t["input_shape"])} for t in spec.get("torch", [])]
    if not workloads:
        raise ValueError("sweep spec: give `networks` and/or `torch`")
    if spec.get("steps") is None and spec.get("budget") is None:
        raise ValueError("sweep spec: give `steps` (reproducible) and/or `budget` (seconds per run)")
    common = {"steps": spec.get("steps"), "budget": spec.get("budget"), "importance": bool(spec.get("importance", False)),
              "options": dict(spec.get("options", {}))}
    return [{**w, "max_area": area, "seed": int(seed), **common}
            for w, area, seed in itertools.product(workloads, spec.get("max_area", [None]), spec.get("seeds", [0]))]


def run_task(task: dict) -> dict:
    """One co-exploration; the row of the result table (status "ok" or the error)."""
    from baco.tuner import workloads
    from baco.tuner.explore import coexplore
    name = task.get("network") or task["torch"]
    row = {"workload": name, "max_area_mm2": task["max_area"], "seed": task["seed"], "steps": task["steps"],
           "budget_s": task["budget"], "importance": task["importance"]}
    t0 = time.perf_counter()
    try:
        if "network" in task:
            layers = workloads.load_network(task["network"])
        else:
            layers = workloads.layers_from_model_spec(task["torch"], task["input_shape"])
        r = coexplore(layers, seed=task["seed"], steps=task["steps"], time_budget_s=task["budget"], progress=False,
                      importance=task["importance"], max_area_mm2=task["max_area"], **task["options"])
    except ValueError as err:          # e.g. no design within the area budget
        return {**row, "status": f"error: {err}", "wall_s": time.perf_counter() - t0}
    return {**row, "status": "ok", "edp": r.edp, "cycles": r.cycles, "energy_uj": r.energy_uj,
            "pe_dim": r.hw.pe_dim, "sp_kb": r.hw.sp_kb, "acc_kb": r.hw.acc_kb, "area_mm2": r.hw.area_mm2,
            "wall_s": time.perf_counter() - t0}


def run_sweep(tasks: list[dict], workers: int, address: str | None = None, progress: bool = True,
              run=run_task) -> list[dict]:
    """Rows in task order; on Ray unless workers == 0 and no address."""
    from tqdm.auto import tqdm
    if workers == 0 and address is None:
        return [run(t) for t in tqdm(tasks, desc="sweep", disable=not progress)]
    import ray
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1, max_retries=RETRIES)(run)
        refs = [remote.remote(t) for t in tasks]
        index = {ref: i for i, ref in enumerate(refs)}
        rows, pending = [None] * len(tasks), list(refs)
        with tqdm(total=len(tasks), desc="sweep", disable=not progress) as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    try:
                        rows[index[ref]] = ray.get(ref)
                    except ray.exceptions.RayError as err:     # still failing after its retries
                        t = tasks[index[ref]]
                        rows[index[ref]] = {"workload": t.get("network") or t["torch"], "max_area_mm2": t["max_area"],
                                            "seed": t["seed"], "status": f"failed: {type(err).__name__}"}
                    bar.update(1)
        return rows
    finally:
        ray.shutdown()


def write_table(rows: list[dict], out_dir) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "sweep.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    (out / "sweep.json").write_text(json.dumps(rows, indent=1))
    return {"csv": out / "sweep.csv", "json": out / "sweep.json"}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="baco sweep", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", help="the sweep's YAML")
    p.add_argument("--workers", type=int, default=2, help="local Ray worker processes (0: serial, no Ray)")
    p.add_argument("--address", help="join this Ray cluster (e.g. ray://host:10001 or auto) instead")
    p.add_argument("--out", default="out/sweep")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    with open(a.spec) as f:
        tasks = tasks_from_spec(yaml.safe_load(f) or {})
    rows = run_sweep(tasks, a.workers, a.address, progress=not a.quiet)
    paths = write_table(rows, a.out)
    for r in rows:
        edp = f"EDP {r['edp']:.4g}, {r['pe_dim']}x{r['pe_dim']}, {r['area_mm2']:.3f} mm2" if r["status"] == "ok" \
            else r["status"]
        print(f"{r['workload']} area<={r['max_area_mm2']} seed {r['seed']}: {edp}")
    print(f"wrote {paths['csv']} and {paths['json']}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
