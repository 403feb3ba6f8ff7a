"""Designs of the Timeloop cycle model fit Timeloop's buffers (issue L, item 4).

The reference here is written from Timeloop's semantics on DOSA's Gemmini architecture (ucb-bar/dosa
dataset/hw/gemmini/arch/arch.yaml), not from baco's code: it reads the files `baco tune` exports for
Timeloop (arch, problem and mapping YAML) and checks what Timeloop checks before it evaluates a
mapping. A buffer instance holds, for each data space it keeps, the tile of every loop at and below
it, its own spatial fan-out included and the fan-out of the levels above it excluded; inputs are the
window their output and filter extents span; the kept tiles together must fit its entries. The
factors of each dimension must multiply to the problem's, and a spatial fan-out must fit the
instances below it.
"""
import math
import random
import re
from pathlib import Path

import pytest
import torch
import yaml

from baco.problem.layer import Layer
from baco.tuner.arch import Hardware
from baco.tuner.emit import timeloop_arch, timeloop_mapping, timeloop_problem, write_outputs
from baco.tuner.explore import NetworkProblem, coexplore, random_tilings
from baco.tuner.hwinfer import mapping_requirement, minimal_hardware, round_hardware
from baco.tuner.mapping import parse_mapping, validate
from baco.tuner.workloads import gemm, load_network

DATA_SPACES = {"Weights": "RSCK", "Outputs": "NKPQ"}


def _levels(tree: dict, depth: int = 0, out=None) -> list:
    """(name, attributes, fan-out below it, depth) of every storage level of an arch tree."""
    out = [] if out is None else out
    for node in tree.get("subtree", []):
        children = node.get("subtree", [])
        fanout = 1
        for child in children:
            m = re.fullmatch(r".*\[0\.\.(\d+)\]", child["name"])
            fanout = int(m.group(1)) + 1 if m else 1
        for local in node.get("local", []):
            if local["class"] != "intmac":
                out.append((local["name"], local["attributes"], fanout, depth))
        _levels(node, depth + 1, out)
    return out


def _words(space: str, tile: dict, problem: dict) -> int:
    if space == "Inputs":
        h = problem["Hstride"] * (tile["P"] - 1) + problem["Hdilation"] * (tile["R"] - 1) + 1
        w = problem["Wstride"] * (tile["Q"] - 1) + problem["Wdilation"] * (tile["S"] - 1) + 1
        return tile["N"] * tile["C"] * h * w
    return math.prod(tile[d] for d in DATA_SPACES[space])


def timeloop_check(arch: dict, problem: dict, mapping: dict) -> tuple[list[str], dict[str, int]]:
    """(what Timeloop rejects, words one instance of each on-chip level holds) of a mapping of a
    problem on an architecture (their YAML as dicts)."""
    inst = problem["problem"]["instance"]
    levels = _levels(arch["architecture"])
    levels.sort(key=lambda level: -level[3])                         # innermost first
    names = [name for name, *_ in levels]
    temporal = {n: dict.fromkeys("RSPQCKN", 1) for n in names}
    spatial = {n: dict.fromkeys("RSPQCKN", 1) for n in names}
    keep = {n: [] for n in names}
    for directive in mapping["mapping"]:
        target = directive["target"]
        if directive["type"] == "bypass":
            keep[target] = directive["keep"]
            continue
        factors = dict((f.split("=")[0], int(f.split("=")[1])) for f in directive["factors"].split())
        (temporal if directive["type"] == "temporal" else spatial)[target].update(factors)
    problems, sizes = [], {}
    for d in "RSPQCKN":
        total = math.prod(temporal[n][d] * spatial[n][d] for n in names)
        if total != inst[d]:
            problems.append(f"{d} factors multiply to {total}, not {inst[d]}")
    tile = dict.fromkeys("RSPQCKN", 1)
    for name, attrs, fanout, _ in levels:
        tile = {d: tile[d] * temporal[name][d] * spatial[name][d] for d in tile}
        if math.prod(spatial[name].values()) > fanout:
            problems.append(f"{name}: spatial fan-out {math.prod(spatial[name].values())} > {fanout}")
        if name == "DRAM":
            continue
        sizes[name] = sum(_words(space, tile, inst) for space in keep[name])
        if sizes[name] > attrs["entries"]:
            problems.append(f"{name}: mapped tile size {sizes[name]} exceeds buffer capacity {attrs['entries']}")
    return problems, sizes


def exported_rejections(out: Path) -> dict[int, list[str]]:
    """What Timeloop rejects (timeloop_check) in every layer of a `baco tune` output folder."""
    arch = yaml.safe_load((out / "timeloop" / "arch.yaml").read_text())
    rejections = {}
    for problem_file in sorted((out / "timeloop").glob("layer*.problem.yaml")):
        i = int(problem_file.name[len("layer"):].split(".")[0])
        mapping = yaml.safe_load((out / "timeloop" / f"layer{i}.map.yaml").read_text())
        rejections[i] = timeloop_check(arch, yaml.safe_load(problem_file.read_text()), mapping)[0]
    return rejections


def _check(layer, mapping, hw) -> tuple[list[str], dict[str, int]]:
    return timeloop_check(timeloop_arch(hw), timeloop_problem(layer, mapping), timeloop_mapping(mapping))


def test_the_issue_mapping_is_rejected_as_timeloop_rejects_it():
    layer = Layer(R=3, S=3, P=14, Q=14, C=256, K=256, N=1)
    mapping = parse_mapping("L3[WIO] N1 - L2[WI] S3 K128X - L1[O] C2 K2 R3 P14 C128X - L0[W] Q14")
    hw = Hardware(128, 256, 512)
    assert validate(mapping, layer, hw) == []              # the compiler streams the taps' weights: it fits
    problems = validate(mapping, layer, hw, "timeloop")
    assert problems == ["Scratchpad: mapped tile size 655360 exceeds buffer capacity 262144"]
    assert _check(layer, mapping, hw)[0] == problems
    with pytest.raises(ValueError, match="capacity rule"):
        validate(mapping, layer, hw, "dosa")


def _random_layer(rng: random.Random) -> Layer:
    if rng.random() < 0.35:
        return gemm(rng.randint(1, 300), rng.randint(1, 600), rng.randint(1, 300))
    R = rng.choice([1, 1, 3, 3, 5, 7])
    S = R if rng.random() < 0.8 else rng.choice([1, 3])
    stride = rng.choice([1, 1, 2])
    return Layer(R=R, S=S, P=rng.randint(1, 40), Q=rng.randint(1, 40), C=rng.randint(1, 200),
                 K=rng.randint(1, 200), N=rng.choice([1, 1, 2]), Hstride=stride, Wstride=stride,
                 Hdilation=rng.choice([1, 1, 2]), Wdilation=1)


@pytest.mark.parametrize("seed", range(6))
def test_random_designs_agree_with_timeloop_semantics(seed):
    """Random mappings of random conv and GEMM layers on random hardware: the validator's timeloop
    rule accepts exactly what Timeloop accepts, and the hardware inferred for a mapping is the
    smallest legal Gemmini Timeloop accepts it on."""
    rng = random.Random(seed)
    generator = torch.Generator().manual_seed(seed)
    accepted = rejected = 0
    for _ in range(6):
        layer = _random_layer(rng)
        problem = NetworkProblem([layer], cycle_model="timeloop")
        for tiling in random_tilings(problem, 8, generator)[0]:
            m = tiling.to_mapping()
            hw = round_hardware(max(m.spatial_C, m.spatial_K, rng.choice([4, 8, 16, 32])),
                                2 ** rng.randint(0, 10), 2 ** rng.randint(0, 9))
            ok = validate(m, layer, hw, "timeloop") == []
            assert ok == (_check(layer, m, hw)[0] == []), (layer, m, hw)
            accepted, rejected = accepted + ok, rejected + (not ok)
            inferred = minimal_hardware([layer], [m], "timeloop")
            problems, words = _check(layer, m, inferred)
            assert problems == [] and validate(m, layer, inferred, "timeloop") == []
            # the requirement is Timeloop's tiles: the scratchpad's words, and each column's accumulator words
            need = mapping_requirement(layer, m, inferred.pe_dim, "timeloop")
            assert need.sp_kb * 1024 == pytest.approx(words["Scratchpad"])
            assert need.acc_kb * 1024 / (4 * inferred.pe_dim) == pytest.approx(words["Accumulator"])
            assert words["Registers"] == 1
    assert accepted and rejected


@pytest.mark.parametrize("network", ["resnet50", "unet", "retinanet"])
def test_timeloop_mode_network_designs_pass_timeloop_on_every_layer(network, tmp_path):
    layers = load_network(network)
    result = coexplore(layers, seed=0, steps=20, starts=2, random_pool=8, kicks=1, progress=False,
                       time_budget_s=8, cycle_model="timeloop")
    write_outputs(tmp_path, layers, result)
    rejections = exported_rejections(tmp_path)
    assert len(rejections) == len(layers)
    assert {i: r for i, r in rejections.items() if r} == {}
    assert all(validate(m, l, result.hw, "timeloop") == [] for m, l in zip(result.mappings, layers))
