"""Tuner core: mapping text form, validator, cost model (hand-computed cases,
gradients, Timeloop rows when the data is present), workloads, and the C
library's tiling heuristics (gemmini-isa.md §5.5 worked examples)."""
import math
from pathlib import Path

import pytest
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_conv_auto, tiled_matmul_auto
from baco.problem.layer import Layer
from baco.tuner import costmodel
from baco.tuner.arch import DEFAULT_HARDWARE, Hardware
from baco.tuner.default_mapping import default_mapping
from baco.gemmini.schedule import GemmSchedule
from baco.tuner.mapping import (format_mapping, gemm_mapping_to_blocks, gemm_schedule, parse_mapping,
                                schedule_mapping, validate)
from baco.tuner.workloads import WORKLOADS_DIR, conv1d, conv2d, gemm, gemv, layers_from_torch, load_network

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
TEXT = "L3[WIO] C8 Q7 K16 - L2[WI] Q2 C2 - L1[O] P7 K2 C4 K2X - L0[W] Q4 P8"


def test_mapping_text_round_trip():
    m = parse_mapping(TEXT)
    assert format_mapping(m) == TEXT
    assert (m.spatial_C, m.spatial_K) == (1, 2)
    assert m.factor(3, "C") == 8 and m.factor(1, "C") == 4 and m.factor(0, "P") == 8
    assert m.order[3][:3] == ("C", "Q", "K")
    again = parse_mapping(format_mapping(type(m)(m.temporal, m.spatial_C, m.spatial_K, m.order)))
    assert again.temporal == m.temporal


def test_mapping_round_trips_dataset_rows():
    path = DATA / "timeloop" / "dataset.csv.tar.gz"
    if not path.exists():
        texts = [TEXT, "L3[WIO] P28 R7 Q56 K8 - L2[WI] N1 K4X - L1[O] K2 S7 Q2 P2 C3X - L0[W] P2"]
    else:
        import csv, io, tarfile   # noqa: E401
        with tarfile.open(path) as tar:
            f = tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith(".csv")))
            texts = [r["mapping.mapping"] for _, r in zip(range(3000), csv.DictReader(io.TextIOWrapper(f)))]
    assert all(format_mapping(parse_mapping(t)) == t for t in texts)


def test_validator_catches_each_violation():
    layer = gemm(64, 64, 64)
    good = schedule_mapping(layer, GemmSchedule(32, 32, 32), 16)
    assert validate(good, layer, DEFAULT_HARDWARE) == []
    bad = parse_mapping("L3[WIO] P1 K4 C4 - L2[WI] N1 K16X - L1[O] C1 C16X - L0[W] P64")
    assert validate(bad, layer, DEFAULT_HARDWARE) == []
    wrong = parse_mapping("L3[WIO] P3 K4 C4 - L2[WI] N1 K16X - L1[O] C1 C16X - L0[W] P16")
    assert any("P factors cover 48, not 64" in p for p in validate(wrong, layer, DEFAULT_HARDWARE))
    # ceil-divided tiles are legal (the last P tile is short), a loop past the dimension's end is not
    ragged = parse_mapping("L3[WIO] P3 K4 C4 - L2[WI] N1 K16X - L1[O] C1 C16X - L0[W] P24")
    assert validate(ragged, layer, DEFAULT_HARDWARE) == []
    over = parse_mapping("L3[WIO] P5 K4 C4 - L2[WI] N1 K16X - L1[O] C1 C16X - L0[W] P16")
    assert any("P loop at L3 runs 5 tiles of 16 where 64 needs 4" in p
               for p in validate(over, layer, DEFAULT_HARDWARE))
    assert any("spatial K 16 exceeds" in p for p in validate(bad, layer, Hardware(8, 256, 64)))
    # a GEMM layer is checked with the compiler's rule for its kernel schedule (64x16 A + 16x16 B blocks)
    assert any("scratchpad" in p and "need 80 rows" in p for p in validate(bad, layer, Hardware(16, 1, 64)))
    assert any("accumulator" in p and "need 64 rows" in p for p in validate(bad, layer, Hardware(16, 256, 2)))
    # a convolution too, by the compiler's rule for its conv kernel schedule: the tile of 8 whole
    # output rows of 8 columns runs as rows=8, block_m=8 (64 A and C rows; 80 scratchpad rows with B),
    # however many taps and whatever the input halo
    conv = Layer(R=3, S=3, P=8, Q=8, C=16, K=16)
    m = parse_mapping("L3[WIO] R3 S3 - L2[WI] N1 - L1[O] C16X Q8 - L0[W] P8 K4 K4X")
    assert validate(m, conv, Hardware(16, 256, 4)) == []
    assert any("accumulator" in p and "C 8*8x16" in p and "need 64 rows" in p
               for p in validate(m, conv, Hardware(16, 256, 2)))
    assert any("scratchpad" in p and "need 80 rows" in p for p in validate(m, conv, Hardware(16, 1, 4)))


def test_gemm_schedule_round_trip():
    layer = gemm(128, 256, 64)
    for s in (GemmSchedule(32, 64, 128), GemmSchedule(128, 16, 256), GemmSchedule(8, 64, 4)):
        m = schedule_mapping(layer, s, 16)
        assert validate(m, layer, DEFAULT_HARDWARE) == []
        assert gemm_schedule(m, layer) == s
        assert gemm_mapping_to_blocks(m, layer) == {"BLOCK_M": s.block_m, "BLOCK_N": s.block_n,
                                                    "BLOCK_K": s.block_k}
        assert schedule_mapping(layer, gemm_schedule(m, layer), 16).temporal == m.temporal


def test_cost_model_hand_computed_gemm():
    # 16x16x16 GEMM, everything on chip, one pass: every operand moves once
    layer = gemm(16, 16, 16)
    m = parse_mapping("L3[WIO] N1 - L2[WI] N1 K16X - L1[O] C16X - L0[W] P16")
    cost = costmodel.evaluate(layer, m, DEFAULT_HARDWARE)
    macs = 16 ** 3
    assert cost.accesses["dram"] == 256 + 256 + 256       # W, I in; O out (no partial-sum read back)
    assert cost.accesses["scratchpad"] == 256 + macs / 16 + 512
    assert cost.accesses["accumulator"] == 2 * macs / 16 - 256 + 256
    assert cost.cycles == max(macs / 256, 768 / 8, cost.accesses["scratchpad"] / 32, cost.accesses["accumulator"] / 32)
    e = (macs * 0.5608 + (macs + 256) * 0.48746 + cost.accesses["accumulator"] * (1.94 + 0.1005 * 64 / 16)
         + cost.accesses["scratchpad"] * (0.49 + 0.02513 * 256) + 768 * 100) * 1e-6
    assert math.isclose(cost.energy_uj, e, rel_tol=1e-12)


def test_edp_lower_bound_hand_computed_and_below_every_design():
    # 16³ GEMM: 768 compulsory DRAM words at 8/cycle bind before 4096 MACs on a 128x128 array
    bound = costmodel.edp_lower_bound(gemm(16, 16, 16))
    assert math.isclose(bound, 96 * (4096 * (0.5608 + 0.48746) + 768 * 100) * 1e-6, rel_tol=1e-12)
    from baco.tuner import baselines
    for layer in (gemm(16, 16, 16), gemm(96, 160, 64), gemv(512, 2048), conv1d(40, 64, 128, 3),
                  conv2d(14, 14, 32, 64, 3, stride=2)):
        bound = costmodel.edp_lower_bound(layer)      # a bound of the Timeloop-matched model
        assert 0 < bound <= baselines.gemmini_default([layer]).timeloop_edp
        assert bound <= baselines.random_search([layer], samples=128, seed=0).timeloop_edp


def test_cost_model_gradients_flow():
    layer = conv2d(28, 28, 64, 64, 3)
    m = default_mapping(layer, DEFAULT_HARDWARE)
    temporal, sc, sk = costmodel.mapping_tensors(m)
    temporal.requires_grad_(True)
    hw = tuple(torch.tensor([v], dtype=torch.float64, requires_grad=True) for v in (16.0, 256.0, 64.0))
    out = costmodel.cost_from_factors(layer, temporal, sc, sk, m.order, hw)
    out["edp"].sum().backward()
    assert torch.isfinite(temporal.grad).all() and temporal.grad.abs().sum() > 0
    assert all(torch.isfinite(h.grad).all() for h in hw)


def test_cost_model_matches_timeloop_rows():
    # rows of the DOSA Timeloop dataset (cycles, energy µJ): the first bound by DRAM, the second by compute
    rows = [
        (Layer(P=14, Q=14, C=1024, K=1024), Hardware(8, 32, 512),
         "L3[WIO] K1024 P14 Q7 C32 - L2[WI] N1 - L1[O] C32 Q2 - L0[W] N1", 205520896, 35355.31577),
        (Layer(R=3, S=3, P=240, Q=24, C=16, K=32), Hardware(16, 8, 2),
         "L3[WIO] P80 K4 Q4 C4 - L2[WI] N1 K8X - L1[O] S3 R3 C2 Q6 C2X - L0[W] P3", 1658880, 333.312025),
    ]
    for layer, hw, text, cycles, energy in rows:
        cost = costmodel.evaluate(layer, parse_mapping(text), hw)
        assert abs(cost.cycles - cycles) / cycles < 0.002
        assert abs(cost.energy_uj - energy) / energy < 0.002


@pytest.mark.parametrize("dims,tiles", [((512, 512, 512), (5, 6, 32)), ((1024, 1024, 1024), (5, 5, 51)),
                                        ((64, 64, 64), (4, 4, 4)), ((3136, 64, 576), (8, 4, 36)),
                                        ((1, 1000, 2048), (1, 8, 56)), ((100, 100, 100), (5, 6, 7))])
def test_tiled_matmul_auto_worked_examples(dims, tiles):
    assert tiled_matmul_auto(*dims) == tiles


def test_tiled_matmul_auto_os():
    assert tiled_matmul_auto(512, 512, 512, dataflow="OS") == (8, 8, 32)
    assert tiled_matmul_auto(1024, 1024, 1024, dataflow="OS") == (8, 8, 64)


@pytest.mark.parametrize("args,kw,tiles", [
    ((1, 56, 56, 64, 64, 3), dict(stride=1, padding=1), [1, 22, 23, 16, 3, 3, 64]),
    ((1, 14, 14, 256, 256, 3), dict(stride=1, padding=1), [1, 14, 14, 32, 3, 3, 240]),
    ((1, 56, 56, 64, 256, 1), {}, [1, 22, 23, 16, 1, 1, 64]),
    ((1, 224, 224, 3, 64, 7), dict(stride=2, padding=3, pool_size=3, pool_stride=2, pool_padding=1),
     [1, 6, 17, 16, 7, 7, 3])])
def test_tiled_conv_auto_worked_examples(args, kw, tiles):
    assert tiled_conv_auto(*args, **kw) == tiles


def test_heuristics_scale_with_config():
    small = GemminiConfig.from_capacity(4, 16, 8)
    ti, tj, tk = tiled_matmul_auto(64, 64, 64, small)
    assert (ti * tk + tk * tj) * 4 <= small.sp_rows // 2 and ti * tj * 4 <= small.acc_rows // 2


@pytest.mark.parametrize("layer", [gemm(100, 300, 70), gemv(512, 1024), conv2d(56, 56, 64, 64, 3),
                                   conv1d(100, 32, 64, 5), conv2d(7, 7, 512, 2048, 1)])
def test_default_mappings_are_valid(layer):
    assert validate(default_mapping(layer, DEFAULT_HARDWARE), layer, DEFAULT_HARDWARE) == []


def test_layers_from_torch_module():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, stride=2)
            self.c3 = torch.nn.Conv2d(16, 16, 3, padding=1, stride=2)
            self.fc = torch.nn.Linear(16 * 8 * 8, 10)

        def forward(self, x):
            y = self.c3(self.c2(self.c1(x)))
            return self.fc(y.flatten(1)) @ torch.ones(10, 4)

    layers = layers_from_torch(Net(), torch.zeros(2, 3, 32, 32))
    keys = {(l.name, l.P, l.Q, l.C, l.K, l.N, l.Hstride, l.count) for l in layers}
    assert ("c1", 32, 32, 3, 16, 2, 1, 1) in keys
    assert ("c2", 16, 16, 16, 16, 2, 2, 1) in keys
    assert ("c3", 8, 8, 16, 16, 2, 2, 1) in keys
    assert ("fc", 2, 1, 1024, 10, 1, 1, 1) in keys
    assert any(l.C == 10 and l.K == 4 for l in layers)


def test_load_network(tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "layer_count.yaml").write_text("'3_3_56_56_64_64_1_1_1_1_1':\n  count: 3\n  name: a\n"
                                             "'1_1_1_1_2048_1000_1_1_1_1_1':\n  count: 1\n")
    layers = load_network(folder)
    assert [(l.R, l.P, l.C, l.K, l.count) for l in layers] == [(3, 56, 64, 64, 3), (1, 1, 2048, 1000, 1)]
    resnet = load_network("resnet50")   # shipped as package data
    assert sum(l.count for l in resnet) == 54 and len(resnet) == 24


def test_a_tune_output_folder_does_not_shadow_a_shipped_network(tmp_path, monkeypatch):
    """`baco tune --network bert --out bert`, run twice: the second run still finds the shipped BERT."""
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "result.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    assert [l.key for l in load_network("bert")] == [l.key for l in load_network(WORKLOADS_DIR / "bert")]


def test_single_buffered_gemm_prices_the_last_programs_tail():
    """A single-buffered explicit GEMM's last program has no next one whose loads run under its
    last column's stores: the tuner's model (compiled_program_cycles, no residual) prices them, as
    benchmarks/explicit_gemm_model.py --gemms checks on 84 GEMMs (128x64x33 in one program on DIM
    64: 0.59x of the cycle model's 1,356 cycles without, 0.95x with)."""
    import numpy as np
    from baco.kernels.matmul import matmul_launch
    from baco.tuner import residual
    M, N, K, blocks, dim, cycles = 128, 64, 33, (128, 64, 33), 64, 1356
    cfg = GemminiConfig.from_capacity(dim, 256, 256)
    launch = matmul_launch(np.zeros((M, K), np.int8), np.zeros((K, N), np.int8), out="int8", scale=1 / 256,
                           schedule=GemmSchedule(*blocks, double_buffer=False), config=cfg)
    launch.options["loop_ws"] = False
    assert launch.cycles()["cycles"] == cycles
    layer = Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1)
    temporal, sC, sK = residual.block_factors(layer, dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K"), blocks)), dim)
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (dim, 256, 256))
    with torch.no_grad():
        pred = float(costmodel.compiled_program_cycles(layer, temporal, (sC, sK), hw, double_buffer=False)[0])
    assert 0.9 < pred / cycles < 1.1, pred
