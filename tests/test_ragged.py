"""Layers as they are: ceil-divided (ragged) tiles. The cost model counts a ragged mapping as the
sum of its tiles, exact factorisations keep their numbers bit for bit, and the search, the
baselines and the outputs work on the real layer (ResNet-50's 56x56, not 64x64)."""
import csv
import io
import tarfile
from dataclasses import replace
from pathlib import Path

import torch

from baco.problem.layer import Layer
from baco.tuner import baselines, costmodel
from baco.tuner.arch import DEFAULT_HARDWARE
from baco.tuner.explore import coexplore
from baco.tuner.mapping import parse_mapping, validate
from baco.tuner.workloads import gemm, load_network

DATASET = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "timeloop" / "dataset.csv.tar.gz"


def _accesses(layer, text):
    return costmodel.evaluate(layer, parse_mapping(text), DEFAULT_HARDWARE).accesses


def _sum(*parts):
    return {k: sum(p[k] for p in parts) for k in parts[0]}


def test_ragged_gemm_costs_the_sum_of_its_tiles():
    # M = 33 in DRAM tiles of 16: tiles of 16, 16 and 1 rows, each run with the same inner mapping
    ragged = _accesses(gemm(33, 32, 32), "L3[WIO] P3 K2 - L2[WI] N1 K16X - L1[O] C2 C16X - L0[W] P16")
    piece = "L3[WIO] K2 - L2[WI] N1 K16X - L1[O] C2 C16X - L0[W] P{}"
    whole = _sum(*(_accesses(gemm(m, 32, 32), piece.format(m)) for m in (16, 16, 1)))
    for k in ragged:
        assert abs(ragged[k] - whole[k]) <= 1e-9 * whole[k], k
    assert ragged["mac"] == 33 * 32 * 32
    padded = _accesses(gemm(48, 32, 32), "L3[WIO] P3 K2 - L2[WI] N1 K16X - L1[O] C2 C16X - L0[W] P16")
    assert ragged["accumulator"] / padded["accumulator"] == 33 / 48


def test_ragged_conv_counts_input_halos_per_tile():
    # P = 56 in scratchpad tiles of 16 rows (3x3 filter: each tile reads its own 2-row halo)
    layer = Layer(R=3, S=3, P=56, Q=56, C=64, K=64)
    text = "L3[WIO] P4 C2 K2 - L2[WI] N1 K16X - L1[O] R3 S3 C2 C16X - L0[W] Q56 P{}"
    ragged = _accesses(layer, text.format(16))
    piece = text.replace("P4 ", "")
    whole = _sum(*(_accesses(replace(layer, P=p), piece.format(p)) for p in (16, 16, 16, 8)))
    for k in ragged:
        assert abs(ragged[k] - whole[k]) <= 1e-9 * whole[k], k


def test_array_passes_are_whole():
    # C = 20 on 16 array rows: 2 passes per output, compute cycles as if C were 32; the MACs are real
    layer = gemm(64, 20, 16)
    cost = costmodel.evaluate(layer, parse_mapping("L3[WIO] C2 - L2[WI] N1 K16X - L1[O] C16X - L0[W] P64"),
                              DEFAULT_HARDWARE)
    assert cost.accesses["mac"] == 64 * 20 * 16
    temporal, sc, sk = costmodel.mapping_tensors(parse_mapping("L3[WIO] C2 - L2[WI] N1 K16X - L1[O] C16X - L0[W] P64"))
    _, eff_c, eff_k = costmodel.effective_factors(layer, temporal, sc, sk)
    assert float(layer.macs / (eff_c * eff_k)) == 64 * 2


def test_exact_factorisations_keep_their_factors_bit_for_bit():
    with tarfile.open(DATASET) as tar:
        f = tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith(".csv")))
        rows = [r for _, r in zip(range(400), csv.DictReader(io.TextIOWrapper(f)))]
    for r in rows:
        layer = Layer(**{d: int(r[f"prob.{d}"]) for d in "RSPQCKN"}, Hstride=int(r["prob.Hstride"]),
                      Wstride=int(r["prob.Wstride"]))
        temporal, sc, sk = costmodel.mapping_tensors(parse_mapping(r["mapping.mapping"]))
        eff, eff_c, eff_k = costmodel.effective_factors(layer, temporal, sc, sk)
        assert torch.equal(eff, temporal) and torch.equal(eff_c, sc) and torch.equal(eff_k, sk)


def test_continuous_factors_are_their_own_effective_factors():
    # DOSA's relaxation: non-integer factors multiplying to the dimension are costed as they are
    layer = gemm(56, 64, 64)
    temporal = torch.ones(1, 4, 7, dtype=torch.float64)
    temporal[0, 0, 2], temporal[0, 3, 2] = 7.5, 56 / 7.5
    temporal[0, 1, 4], temporal[0, 2, 5] = 4.0, 4.0
    sc = sk = torch.tensor([16.0], dtype=torch.float64)
    eff, eff_c, eff_k = costmodel.effective_factors(layer, temporal.requires_grad_(), sc, sk)
    assert torch.equal(eff.detach(), temporal.detach())
    eff.sum().backward()
    assert torch.isfinite(temporal.grad).all()


def test_ragged_gradients_flow():
    layer = Layer(R=3, S=3, P=56, Q=56, C=3, K=64)
    temporal, sc, sk = costmodel.mapping_tensors(
        parse_mapping("L3[WIO] P4 Q2 K4 - L2[WI] N1 K16X - L1[O] R3 S3 C3X - L0[W] Q32 P16"))
    temporal.requires_grad_()
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (16, 256, 64))
    out = costmodel.cost_from_factors(layer, temporal, sc, sk, parse_mapping("L3[WIO] P4").order, hw)
    out["edp"].sum().backward()
    assert torch.isfinite(temporal.grad).all() and temporal.grad.abs().sum() > 0


def test_resnet50_56x56_layer_is_searched_as_given():
    layer = next(l for l in load_network("resnet50") if l.P == 56 and l.R == 3)
    assert (layer.C, layer.K) == (64, 64)
    for result in (coexplore([layer], seed=0, steps=10, starts=2, progress=False, kicks=1, random_pool=8),
                   baselines.gemmini_default([layer])):
        assert validate(result.mappings[0], layer, result.hw) == []
        assert result.per_layer[0].accesses["mac"] == layer.macs == 56 * 56 * 9 * 64 * 64
    # a mapping in 16x16 pixel tiles: on the real layer the edge tiles are 8 wide; padded to 64x64
    # (what the tuner did before) the same mapping does 31% more work and costs more
    text = "L3[WIO] P4 Q4 K4 C4 - L2[WI] N1 K16X - L1[O] R3 S3 C16X - L0[W] Q16 P16"
    padded = replace(layer, P=64, Q=64)
    assert validate(parse_mapping(text), layer, DEFAULT_HARDWARE) == []
    real, pad = (costmodel.evaluate(x, parse_mapping(text), DEFAULT_HARDWARE) for x in (layer, padded))
    assert pad.accesses["mac"] / real.accesses["mac"] == (64 / 56) ** 2
    assert pad.cycles > real.cycles and pad.energy_uj > real.energy_uj


def test_timeloop_export_of_a_ragged_mapping_is_its_padded_equivalent():
    import yaml
    from baco.tuner.emit import timeloop_mapping, timeloop_problem_text
    layer = Layer(R=3, S=3, P=56, Q=56, C=64, K=64, name="conv56")
    ragged = parse_mapping("L3[WIO] P4 Q4 K4 C4 - L2[WI] N1 K16X - L1[O] R3 S3 C16X - L0[W] Q16 P16")
    text = timeloop_problem_text(layer, ragged)
    assert text.startswith("# Padded equivalent of conv56: P 56->64, Q 56->64.")
    inst = yaml.safe_load(text)["problem"]["instance"]
    assert (inst["P"], inst["Q"], inst["C"], inst["K"], inst["R"]) == (64, 64, 64, 64, 3)
    # the exported mapping's factors multiply exactly to the exported problem, as Timeloop's mapper needs
    exported = {d: 1 for d in "RSPQCKN"}
    for entry in timeloop_mapping(ragged)["mapping"]:
        for factor in entry.get("factors", "").split():
            d, f = factor.split("=")
            exported[d] *= int(f)
    assert exported == {d: inst[d] for d in "RSPQCKN"}
    exact = parse_mapping("L3[WIO] P4 Q4 K4 C4 - L2[WI] N1 K16X - L1[O] R3 S3 C16X - L0[W] Q14 P14")
    text = timeloop_problem_text(layer, exact)
    assert not text.startswith("#") and yaml.safe_load(text)["problem"]["instance"]["P"] == 56
