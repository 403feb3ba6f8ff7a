"""The compiled-program cost model (analytical + learned residual) against the cycle model
timing compiled GEMM kernels, its gradients, and the RTL residual (the training script's
smoke run is in test_benchmarks_smoke.py)."""
import importlib.util
from pathlib import Path

import pytest
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.problem.layer import Layer
from baco.tuner import costmodel, residual
from baco.tuner.mapping import parse_mapping
from baco.tuner.arch import Hardware
from baco.tuner.workloads import gemm

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("train_cost_residual", ROOT / "benchmarks" / "train_cost_residual.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CASES = [  # M, N, K, schedule, dim, sp_kb, acc_kb, int8 output
    (64, 64, 64, GemmSchedule(32, 32, 32), 16, 256, 64, True),
    (100, 70, 300, GemmSchedule(32, 32, 64, double_buffer=True), 16, 256, 64, True),
    (33, 17, 65, GemmSchedule(16, 16, 32, dataflow="OS"), 8, 64, 32, False),
    (128, 96, 256, GemmSchedule(64, 32, 128), 32, 256, 128, False),
]


def _predict(M, N, K, s, dim, sp_kb, acc_kb, out_int8, fn):
    layer = gemm(M, K, N)
    temporal, sC, sK = residual.block_factors(layer, {"BLOCK_M": s.block_m, "BLOCK_N": s.block_n,
                                                      "BLOCK_K": s.block_k}, dim)
    return float(fn(layer, temporal, (sC, sK), (float(dim), float(sp_kb), float(acc_kb)), out_int8=out_int8,
                    double_buffer=s.double_buffer, dataflow=s.dataflow)[0])


def test_compiled_models_track_the_cycle_model():
    script = _script()
    for M, N, K, s, dim, sp_kb, acc_kb, out_int8 in CASES:
        cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
        measured, _ = script.kernel_cycles(M, N, K, s, cfg, out_int8)
        analytical = _predict(M, N, K, s, dim, sp_kb, acc_kb, out_int8, costmodel.compiled_program_cycles)
        learned = _predict(M, N, K, s, dim, sp_kb, acc_kb, out_int8, residual.compiled_cycles)
        assert abs(analytical / measured - 1) < 0.6, (M, N, K, s, analytical, measured)
        assert abs(learned / measured - 1) < 0.3, (M, N, K, s, learned, measured)


@pytest.mark.parametrize("M,N,K,blocks,dim", [(34, 4, 1, (8, 4, 4), 4), (34, 4, 1, (36, 4, 4), 4),
                                             (5, 1, 1, (2, 2, 2), 2), (5, 1, 1, (6, 2, 2), 2)])
def test_tiny_programs_expose_their_last_stores(M, N, K, blocks, dim):
    """A few programs of a few commands: the last program's stores (no next program under them)
    and, with K = 1, the accumulator rows each next program must wait for are most of the time
    (the model was 0.5-0.6x of the cycle model here before it counted them; now within 6%)."""
    s = GemmSchedule(*blocks)
    cfg = GemminiConfig.from_capacity(dim, 16, 8)
    measured, _ = _script().kernel_cycles(M, N, K, s, cfg, True)
    predicted = _predict(M, N, K, s, dim, 16, 8, True, residual.compiled_cycles)
    assert abs(predicted / measured - 1) < 0.1, (predicted, measured)


def test_compiled_cycles_are_differentiable_in_factors_and_hardware():
    layer = gemm(256, 512, 128)
    temporal, sC, sK = residual.block_factors(layer, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128}, 16)
    temporal.requires_grad_(True)
    pe = torch.tensor([16.0], dtype=torch.float64, requires_grad=True)
    cycles = residual.compiled_cycles(layer, temporal, (sC, sK), (pe, 256.0, 64.0))
    cycles.sum().backward()
    assert torch.isfinite(temporal.grad).all() and temporal.grad.abs().sum() > 0
    assert torch.isfinite(pe.grad).all() and pe.grad.abs().sum() > 0
    # more MACs per program and fewer programs: larger blocks cost fewer cycles on this shape
    small = _predict(256, 128, 512, GemmSchedule(16, 16, 16), 16, 256, 64, True, residual.compiled_cycles)
    large = _predict(256, 128, 512, GemmSchedule(64, 64, 128), 16, 256, 64, True, residual.compiled_cycles)
    assert large < small


def test_shipped_weights_load_and_rtl_cycles_are_differentiable():
    assert residual.WEIGHTS.exists()
    assert residual.load("rtl") is not None     # "compiled" is shipped only where it beats the analytical model
    m = parse_mapping("L3[WIO] C8 Q7 K16 - L2[WI] Q2 C2 - L1[O] P7 K2 C4 K2X - L0[W] Q4 P8")
    layer = Layer(P=56, Q=56, C=64, K=64)
    temporal, sC, sK = costmodel.mapping_tensors(m)
    temporal.requires_grad_(True)
    hw = tuple(torch.tensor([v], dtype=torch.float64) for v in (16.0, 256.0, 64.0))
    rtl = residual.rtl_cycles(layer, temporal, sC, sK, m.order, hw)
    rtl.sum().backward()
    assert torch.isfinite(rtl).all() and float(rtl.detach()[0]) > 0
    assert torch.isfinite(temporal.grad).all() and temporal.grad.abs().sum() > 0
    # the residual is a correction, not a replacement: same order of magnitude as Timeloop's cycles
    timeloop = costmodel.evaluate(layer, m, Hardware(16, 256, 64)).cycles
    assert 0.1 < float(rtl.detach()[0]) / timeloop < 100


@pytest.mark.slow
def test_residual_scores_on_fresh_kernels():
    """Score the compiled-program model the search uses (the analytical model, times the compiled
    residual where one is shipped) on kernels drawn with another seed."""
    script = _script()
    rows = script.collect(40, 12345, ROOT / "out" / "cost_residual" / "fresh.csv", max_commands=3000)
    x, base, y = script.compiled_tensors(rows)
    model = residual.load("compiled")
    with torch.no_grad():
        s = script.scores(base if model is None else base + model(x), y)
    assert s["log_r"] > 0.95 and s["median_rel"] < 0.15


def test_shipped_residuals_are_used_only_where_they_beat_the_analytical_model_on_unseen_layers():
    for name in ("compiled", "rtl", "combined"):
        record = residual.validation(name)
        assert record is not None and record["where"], name
        assert record["used"] == residual.beats_analytical(record["learned"], record["analytical"]), name
        assert (residual.load(name) is not None) == record["used"], name


def test_combined_residual_corrects_program_cycles_of_an_rtl_row():
    """The "combined" residual, where shipped, scales the cycle model's cycles of DOSA's program by a
    bounded, feature-dependent factor (not a constant); unshipped, the program's cycles are the model's."""
    train, _ = _script().rtl_split(ROOT / "benchmarks" / "data" / "rtl" / "firesim_train.csv")
    counts = [_script().program_features(r, GemminiConfig()) for r in train[:20]]
    if residual.load("combined") is None:
        assert [residual.combined_row_cycles(r, 1e6, c) for r, c in zip(train, counts)] == \
            pytest.approx([1e6] * len(counts), rel=1e-12)
        return
    ratios = {residual.combined_row_cycles(r, 1e6, c) / 1e6 for r, c in zip(train, counts)}
    # bounded by the training rows' 2-98% log-ratio quantiles (some RTL rows ran ~40x their program)
    bounds = residual.load("combined").fallback
    lo, hi = float(torch.exp(bounds.out_lo)), float(torch.exp(bounds.out_hi))
    assert 0.05 < lo < 1 < hi < 100
    assert all(lo * (1 - 1e-9) <= q <= hi * (1 + 1e-9) for q in ratios) and len(ratios) > 1
    assert residual.combined_row_cycles(train[0], 2e6, counts[0]) > residual.combined_row_cycles(train[0], 1e6, counts[0])


@pytest.mark.slow
def test_combined_training_smoke(capsys):
    """train_cost_residual.py combined --smoke times a few rows itself and fits (no --write)."""
    assert _script().main(["combined", "--smoke"]) == 0
    assert "combined residual" in capsys.readouterr().out


def test_layer_folds_hold_each_layer_out_whole():
    keys = [("a",)] * 7 + [("b",)] * 3 + [("c",)] * 5 + [("d",)] * 2 + [("e",)] * 6 + [("f",)] * 4
    folds = residual.layer_folds(keys, k=3, seed=1)
    assert len(folds) == len(keys) and set(folds) == {0, 1, 2}
    for key in set(keys):       # every row of a layer in one fold: a fold's model never saw its layers
        assert len({f for f, k in zip(folds, keys) if k == key}) == 1
    sizes = sorted(folds.count(f) for f in range(3))
    assert sizes[-1] - sizes[0] <= 7            # dealt to the smallest fold: no fold empty or holding all
    assert folds == residual.layer_folds(keys, k=3, seed=1)
    with pytest.raises(ValueError, match="cannot fill"):
        residual.layer_folds([("a",)] * 4, k=2)


def test_layer_held_out_refits_without_the_folds_layers():
    """train_cost_residual.out_of_fold: a row's prediction comes from a model that never saw its fold."""
    script = _script()
    x = torch.arange(12, dtype=torch.float64).reshape(12, 1)
    folds = torch.tensor([0, 0, 1, 1, 2, 2] * 2)
    seen = []

    def fit_fn(fit):
        seen.append(set(x[fit, 0].tolist()))
        return lambda z: torch.full((z.shape[0],), float(len(seen)), dtype=torch.float64)
    pred = script.out_of_fold(x, x[:, 0], folds, fit_fn)
    for f in range(3):
        held = set(x[folds == f, 0].tolist())
        assert not (held & seen[f]) and (pred[folds == f] == f + 1).all()


def test_bounded_linear_residual_fits_by_layer_and_stays_in_its_training_range():
    """residual.fit_bounded_linear: a log-ratio linear in a feature is recovered from rows grouped by
    layer; beyond the training range the features and the output are clamped (no extrapolation), and
    the weights file's state gives the same model back."""
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(200, 3, generator=gen, dtype=torch.float64)
    y = 0.5 * x[:, 0] - 0.2 * x[:, 1] + 0.01 * torch.randn(200, generator=gen, dtype=torch.float64)
    layers = [i // 5 for i in range(200)]
    model = residual.fit_bounded_linear(x, y, layers)
    probe = torch.tensor([[0.2, 0.5, 0.5], [0.8, 0.5, 0.5]], dtype=torch.float64)
    assert float(model(probe)[1] - model(probe)[0]) == pytest.approx(0.3, abs=0.03)
    far = torch.tensor([[50.0, 0.5, 0.5]], dtype=torch.float64)
    assert float(model(far)[0]) == pytest.approx(float(model(torch.tensor([[float(x[:, 0].max()), 0.5, 0.5]],
                                                                        dtype=torch.float64))[0]))
    assert float(model(far)[0]) <= float(torch.quantile(y, 0.98)) + 1e-12
    again = residual.BoundedLinear.from_state(model.state())
    assert torch.allclose(again(x), model(x), rtol=1e-5, atol=1e-6)


def test_supported_residual_uses_its_mlps_inside_the_training_support_and_the_linear_model_outside():
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(120, 2, generator=gen, dtype=torch.float64)
    y = torch.sin(3 * x[:, 0]) + 0.3 * x[:, 1]
    model = residual.fit_supported(x, y, [i // 4 for i in range(120)], epochs=300)
    inside = torch.tensor([[0.5, 0.5]], dtype=torch.float64)
    outside = torch.tensor([[0.5, 7.0]], dtype=torch.float64)
    lo, hi = float(model.fallback.out_lo), float(model.fallback.out_hi)
    assert float(model(inside)[0]) == pytest.approx(min(max(float(model.members(inside)[0]), lo), hi))
    assert float(model(outside)[0]) == pytest.approx(float(model.fallback(outside)[0]))
    again = residual.SupportedResidual.from_state(model.state())
    assert torch.allclose(again(x), model(x), rtol=1e-5, atol=1e-6)
