"""Area budgets: the EDP-versus-area front of a network, one search per budget (`baco tune --pareto`)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from baco.tuner.arch import area_mm2

# the smallest Gemmini the search can build (2×2 array, the smallest legal buffers) bounds any budget below
MIN_AREA_MM2 = area_mm2(2, 1, 1)


def area_budgets(unconstrained_mm2: float, points: int) -> list[float]:
    """`points` budgets spaced geometrically below an unconstrained design's area (down to 1/16 of it)."""
    low = max(unconstrained_mm2 / 16, MIN_AREA_MM2 * 4)
    if points < 2 or low >= unconstrained_mm2:
        return [unconstrained_mm2]
    ratio = (low / unconstrained_mm2) ** (1 / (points - 1))
    return [unconstrained_mm2 * ratio ** k for k in range(1, points)]


def pareto_sweep(search, points: int, log=print) -> list[dict]:
    """search(max_area_mm2 or None) -> Result; one unconstrained run, then one per smaller budget.
    Rows: budget, area, EDP, cycles, energy and the hardware; designs no budget admits are skipped."""
    rows = []

    def add(budget, result):
        hw = result.hw
        rows.append({"max_area_mm2": budget, "area_mm2": hw.area_mm2, "edp": result.edp, "cycles": result.cycles,
                     "energy_uj": result.energy_uj, "pe_dim": hw.pe_dim, "sp_kb": hw.sp_kb, "acc_kb": hw.acc_kb})
        log(f"  budget {budget if budget is not None else 'none'}: {hw.pe_dim}x{hw.pe_dim}, {hw.sp_kb:g} KB, "
            f"{hw.acc_kb:g} KB, {hw.area_mm2:.3f} mm2, EDP {result.edp:.4g}")

    free = search(None)
    add(None, free)
    for budget in area_budgets(free.hw.area_mm2, points):
        try:
            add(round(budget, 4), search(round(budget, 4)))
        except ValueError as err:      # no valid design within this budget
            log(f"  budget {budget:.4g}: {err}")
    return rows


def front(rows: list[dict]) -> list[dict]:
    """The non-dominated rows (smaller area and smaller EDP), by area."""
    out, best = [], float("inf")
    for row in sorted(rows, key=lambda r: (r["area_mm2"], r["edp"])):
        if row["edp"] < best:
            out.append(row)
            best = row["edp"]
    return out


def write_pareto(rows: list[dict], out_dir, title: str = "") -> dict:
    """pareto.csv / pareto.json (every run, with `on_front`) and pareto.png (EDP vs area)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    on_front = {id(r) for r in front(rows)}
    table = [{**r, "on_front": id(r) in on_front} for r in rows]
    with open(out / "pareto.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    (out / "pareto.json").write_text(json.dumps(table, indent=1))
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter([r["area_mm2"] for r in table], [r["edp"] for r in table], label="searched designs")
    f = front(rows)
    ax.step([r["area_mm2"] for r in f], [r["edp"] for r in f], where="post", color="C1", label="Pareto front")
    for r in f:
        ax.annotate(f"{r['pe_dim']}x{r['pe_dim']}", (r["area_mm2"], r["edp"]), fontsize=7)
    ax.set_xlabel("area (mm², arch.area_mm2 estimate)")
    ax.set_ylabel("network EDP (µJ·cycles)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_title(title or "EDP vs area")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "pareto.png", dpi=120)
    plt.close(fig)
    return {"csv": out / "pareto.csv", "json": out / "pareto.json", "png": out / "pareto.png"}
