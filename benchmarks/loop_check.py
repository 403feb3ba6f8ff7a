"""The loop, measured: tune, compile, run, time — does the simulator confirm the tuner?

For the GEMM layers of BERT (tuned as one network) and for GEMM/GEMV operators drawn from
benchmarks/single_op.py's bands (each tuned alone), the tuned schedules are compiled for the
tuned Gemmini, run bit-exact on the functional model and timed by the cycle model
(baco.design.check_design); Gemmini-default runs the C library's tiling (baco.sim.clib).
Printed: per layer the predicted (the cost model the search uses: the compiled program a user's
compile emits, LOOP_WS / LOOP_CONV_WS where the blocks fit, with the CPU issuing its commands,
baco.tuner.kernel_model) and measured cycles end to end (the layer's ELF on the ISS with the cycle
model attached: rdcycle around its grid loop), Gemmini's simulated cycles alone (against which the
Gemmini-alone models below are checked), and the same for Gemmini-default end to end
(predicted: kernel_model.library_matmul_cycles, the C library's program the default runs with the
CPU running its tile loop; simulated: that stream issued by the CPU at the library's cost per
tile, baco.sim.clib.library_stream_cycles), so both halves of the gain describe the programs that
run, as the search costs them; over all layers the Pearson r of
log cycles and the median relative error |pred − sim| / sim (goals r ≥ 0.95, median ≤ 15%),
and the same for the Timeloop-matched model and for the analytical program model without its
learned residual, of the same mappings; per network/operator the EDP gain over
Gemmini-default, predicted and simulated end to end (goal: simulated within 25% of predicted),
beside the gain of Gemmini's cycles alone. Where the search returns Gemmini-default running the C
library (nothing it found is better, explore._not_worse_than_the_library), both sides are the
library's streams ("lib" in the bits column) and the gain is 1.

Operators from the bands are shrunk (largest dimension halved, never below its band) until
they have at most --max-macs MACs, so that every one runs on the functional model.

Convolutions (the second section): the convolution layers of --conv-networks (ResNet-50, UNet,
RetinaNet), cut to one image and at most --conv-rows output rows, --conv-cols columns and
--conv-channels channels (so the cycle model times them in seconds), each network tuned as one,
compiled with the schedule the search chose (baco/kernels/conv.py), run bit-exact and timed, the
default running the C library's tiled_conv_auto (predicted: kernel_model.library_conv_cycles); the same table, r and median for the search's
conv model (kernel_model.conv_program) and the Timeloop-matched model, and the gains. Then
--random-convs random small convolutions (filters 1-7, strides 1-2, ragged sizes) with random
schedules on random Gemminis, and --large-convs random ResNet-like ones on 64x64 and 128x128
arrays (blocks up to 3136 pixels, 256 KB-1 MB scratchpads): kernel_model.conv_schedule_cycles
against the simulated cycles.

--bias: every layer with an int32 bias (Layer.bias), as a whole model's convolutions and linear
layers run: the search prices it and the layers run with one (DOSA's workloads have none).
--padding: every layer padded as PyTorch's "same" convolutions are ((R - 1) // 2 rows and columns
each side, Layer.padding: the image that many rows and columns smaller), as a whole model's padded
convolutions run: the search prices the padding and the layers run with it.

    python benchmarks/loop_check.py [--smoke] [--budget S] [--ops N] [--seed N] [--no-bert]
                                    [--no-gemm] [--conv-networks resnet50,unet,retinanet] [--random-convs N]
                                    [--large-convs N] [--bias] [--padding]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from baco.design import check_design, summary  # noqa: E402
from baco.problem.layer import Layer  # noqa: E402
from baco.tuner.emit import result_dict  # noqa: E402
from baco.tuner.explore import coexplore  # noqa: E402
from baco.tuner.mapping import is_kernel_layer  # noqa: E402
from baco.tuner.workloads import gemm, load_network  # noqa: E402
from single_op import GEMM_BANDS, log_uniform  # noqa: E402


def band_operators(count: int, gemv: bool, rng, max_macs: float):
    """count GEMM (or GEMV: N = 1) operators spread over single_op's bands, shrunk to max_macs."""
    out = []
    for i in range(count):
        band = GEMM_BANDS[int((i + 0.5) * len(GEMM_BANDS) / count) % len(GEMM_BANDS)]
        dims = [log_uniform(rng, lo, hi) for lo, hi in band]
        if gemv:
            dims[1] = 1
        while dims[0] * dims[1] * dims[2] > max_macs:
            j = max(range(3), key=lambda x: dims[x] / band[x][0])
            if dims[j] // 2 < band[j][0] and all(dims[x] // 2 < band[x][0] for x in range(3)):
                break
            dims[j] = max(band[j][0], dims[j] // 2)
        M, N, K = dims
        out.append(gemm(M, K, N, name=f"{'gemv' if gemv else 'gemm'}_{M}x{N}x{K}"))
    return out


def tune_and_check(layers, *, budget, seed, smoke=False):
    t0 = time.perf_counter()
    quick = dict(steps=10, starts=2, random_pool=8, polish=False) if smoke else {}
    result = coexplore(layers, seed=seed, time_budget_s=budget, progress=False, **quick)
    tune_s = time.perf_counter() - t0
    design = result_dict(layers, result)
    checks = check_design(design, progress=None)
    return design, checks, tune_s, time.perf_counter() - t0 - tune_s


def analytical_cycles(design: dict, check) -> float:
    """The analytical model of the compiled program alone (costmodel.compiled_program_cycles, no
    learned residual) for the layer's tuned mapping and schedule on the tuned hardware."""
    import torch
    from baco.tuner import costmodel
    from baco.tuner.mapping import parse_mapping
    if not is_kernel_layer(check.layer) or check.schedule is None:
        return check.predicted.cycles   # the conv model and the C library's have no residual: the search's model
    entry = next(e for e in design["layers"] if e["name"] == check.name)
    temporal, sC, sK = costmodel.mapping_tensors(parse_mapping(entry["mapping"]))
    hw = tuple(torch.tensor([float(design["hardware"][k])], dtype=torch.float64) for k in ("pe_dim", "sp_kb", "acc_kb"))
    with torch.no_grad():
        return float(costmodel.compiled_program_cycles(check.layer, temporal, (sC, sK), hw,
                                                        double_buffer=check.schedule.double_buffer,
                                                        dataflow=check.schedule.dataflow)[0])


def pearson(x, y) -> float:
    return float(np.corrcoef(x, y)[0, 1]) if len(x) > 1 else float("nan")


def cut_conv(layer: Layer, rows: int, cols: int, channels: int) -> Layer:
    """A convolution layer cut to one image, at most `rows` output rows, `cols` output columns and
    `channels` input and output channels (the per-row program the kernel runs is unchanged in
    kind; the cycle model then times it in seconds)."""
    return replace(layer, N=1, P=min(layer.P, rows), Q=min(layer.Q, cols), C=min(layer.C, channels),
                   K=min(layer.K, channels))


def conv_network_layers(network: str, rows: int, cols: int, channels: int, limit: int | None = None):
    """The convolution layers of a network, cut (cut_conv) and deduplicated (counts added)."""
    out: dict = {}
    for layer in load_network(network):
        if is_kernel_layer(layer):
            continue
        cut = cut_conv(layer, rows, cols, channels)
        key = (cut.R, cut.S, cut.P, cut.Q, cut.C, cut.K, cut.Hstride, cut.Wstride, cut.Hdilation, cut.Wdilation)
        if key in out:
            out[key] = replace(out[key], count=out[key].count + layer.count)
        else:
            out[key] = replace(cut, name=f"{network[:3]}{len(out)}")
    return list(out.values())[:limit]


def _random_conv(rng, large: bool):
    """(layer, GemminiConfig, schedule) of a random convolution: small (filters 1-7, strides 1-2,
    ragged sizes, DIM 4-128) or, `large`, ResNet-like on a wide array (DIM 64/128, 7-56 output
    columns, 3-512 channels, blocks up to 3136 pixels, 256 KB-1 MB scratchpads); None when the
    schedule does not fit."""
    from baco.gemmini.config import GemminiConfig
    from baco.gemmini.schedule import GemmSchedule, schedule_problems
    from baco.tuner.mapping import KERNEL_OUT_INT8
    if large:
        dim = int(rng.choice([64, 128]))
        R = int(rng.choice([1, 1, 3, 3, 3, 7]))
        stride = int(rng.choice([1, 1, 1, 2]))
        Q = int(rng.choice([7, 14, 28, 56]))
        layer = Layer(R=R, S=R, P=Q if R == 1 and stride == 1 else int(rng.choice([1, 2, 4, Q])), Q=Q,
                      C=int(rng.choice([3, 64, 128, 256, 512])), K=int(rng.choice([64, 128, 256, 512])),
                      Hstride=stride, Wstride=stride)
        try:
            cfg = GemminiConfig.from_capacity(dim, int(rng.choice([256, 512, 1024])),
                                              int(rng.choice([256, 512, 1024, 1664])))
        except ValueError:
            return None
        m_blocks = [dim, 2 * dim, 4 * dim, 512, 784, 1024, 3136]
        n_blocks = k_blocks = [dim, 2 * dim, 4 * dim, 512]
    else:
        dim = int(rng.choice([4, 8, 16, 32, 64, 128]))
        R = int(rng.choice([1, 2, 3, 3, 5, 7]))
        stride = int(rng.choice([1, 1, 2]))
        layer = Layer(R=R, S=R, P=int(rng.integers(1, 5)), Q=int(rng.choice([1, 7, 14, 17, 28, 33, 56])),
                      C=int(rng.choice([3, 8, 17, 33, 64, 65, 128, 256])), K=int(rng.choice([1, 16, 17, 33, 64, 100, 256])),
                      Hstride=stride, Wstride=stride)
        cfg = GemminiConfig.from_capacity(dim, 64 * max(1, dim // 8), 16 * max(1, dim // 4))
        m_blocks, n_blocks, k_blocks = [7, dim, 2 * dim, 4 * dim, 512], [17, dim, 2 * dim, 4 * dim], [3, dim, 2 * dim, 4 * dim]
    pick = lambda n, opts: int(min(n, rng.choice(opts)))  # noqa: E731
    pixels = layer.P * layer.Q if layer.R == 1 and stride == 1 else layer.Q
    whole_rows = pixels == layer.Q and layer.P > 1 and rng.random() < 0.4      # several rows per program
    s = GemmSchedule(layer.Q if whole_rows else pick(pixels, m_blocks), pick(layer.K, n_blocks),
                     pick(layer.C, k_blocks), double_buffer=bool(rng.random() < 0.5),
                     rows=int(rng.integers(2, layer.P + 1)) if whole_rows else 1)
    return None if schedule_problems(s, cfg, KERNEL_OUT_INT8) else (layer, cfg, s)


def same_padded(layer: Layer, padding: bool) -> Layer:
    """`layer` padded as a "same" convolution ((R - 1) // 2, within its filter's extent) where
    `padding`, else itself."""
    return replace(layer, padding=min((layer.R - 1) // 2, layer.filter_extent - 1)) if padding else layer


def random_conv_rows(count: int, rng, max_cycles: float = 2e6, large: bool = False, bias: bool = False,
                     padding: bool = False):
    """(predicted, simulated, text) of `count` random convolutions (_random_conv; `bias`: each with a
    bias; `padding`: each padded, same_padded) compiled with a random schedule (one or several
    output rows per program) that fits a
    random Gemmini: the search's conv model (kernel_model.conv_schedule_cycles) against the cycle
    model's timing of the kernel's command stream."""
    from baco.kernels.conv import conv2d_launch
    from baco.tuner.kernel_model import conv_schedule_cycles
    out = []
    while len(out) < count:
        drawn = _random_conv(rng, large)
        if drawn is None:
            continue
        layer, cfg, s = drawn
        layer = same_padded(replace(layer, bias=bias), padding)
        dim, R, stride = cfg.dim, layer.R, layer.Hstride
        pred = conv_schedule_cycles(layer, s, (dim, cfg.sp_kb, cfg.acc_kb), end_to_end=False)
        if pred > max_cycles:
            continue
        x = np.zeros((1, layer.image_rows, layer.image_cols, layer.C), np.int8)
        w = np.zeros((R, R, layer.C, layer.K), np.int8)
        b = np.zeros(layer.K, np.int32) if bias else None
        sim = conv2d_launch(x, w, b, stride=stride, padding=layer.padding, config=cfg, blocks=s,
                            scale=1 / 256).cycles()["cycles"]
        text = (f"DIM {dim:3d} {R}x{R}/{stride}{f' pad {layer.padding}' if layer.padding else ''} "
                f"{layer.P}x{layer.Q} {layer.C}>{layer.K} "
                f"blocks {s.block_m},{s.block_n},{s.block_k}{'+db' if s.double_buffer else ''}"
                f"{f' rows {s.rows}' if s.rows > 1 else ''}")
        out.append((pred, sim, text))
    return out


def accuracy(pred, sim) -> str:
    pred, sim = np.asarray(pred, dtype=float), np.asarray(sim, dtype=float)
    rel = np.abs(pred - sim) / sim
    return (f"Pearson r of log cycles {pearson(np.log(pred), np.log(sim)):.3f}, median relative error "
            f"{100 * statistics.median(rel):.1f}%, max {100 * rel.max():.1f}%")


def check_groups(groups, a) -> tuple[list, list, list, bool]:
    """Tune, compile, run and time each (name, layers) group; print a row per layer.
    Returns (rows (pred, sim, timeloop, analytical, end to end), default rows (pred, sim), gains, all bit-exact)."""
    budget = None if a.smoke else a.budget
    rows, default_rows, gains, all_exact = [], [], [], True
    print(f"{'network/op':22s} {'layer':10s} {'pred cycles':>12s} {'end to end':>12s} {'e2e/pred':>8s} "
          f"{'Gemmini sim':>12s} {'design':>18s} bits {'default pred':>12s} {'default e2e':>12s} {'e2e/pred':>8s}")
    for name, layers in groups:
        layers = [same_padded(replace(layer, bias=a.bias), a.padding) for layer in layers]
        design, checks, tune_s, check_s = tune_and_check(layers, budget=budget, seed=a.seed, smoke=a.smoke)
        hw = design["hardware"]
        hw_text = f"{hw['pe_dim']}x{hw['pe_dim']} {hw['sp_kb']:g}/{hw['acc_kb']:g}"
        for c in checks:
            if c.simulated is None:
                continue
            e2e = c.end_to_end.cycles
            rows.append((c.predicted.cycles, c.simulated.cycles, c.timeloop_cycles, analytical_cycles(design, c), e2e))
            default_rows.append((c.default_predicted.cycles, c.default_end_to_end.cycles))
            print(f"{name[:22]:22s} {c.name[:10]:10s} {c.predicted.cycles:12.4g} {e2e:12.4g} {e2e / c.predicted.cycles:8.2f} "
                  f"{c.simulated.cycles:12.4g} "
                  f"{hw_text:>18s} "
                  f"{'ok  ' if c.bit_exact else 'lib ' if c.bit_exact is None else 'MISMATCH'} "
                  f"{c.default_predicted.cycles:12.4g} {c.default_end_to_end.cycles:12.4g} "
                  f"{c.default_end_to_end.cycles / c.default_predicted.cycles:8.2f}")
        s = summary(checks)
        all_exact &= s["bit_exact"]
        gains.append((name, s["gain_predicted"], s["gain_simulated"], s["gain_end_to_end"], tune_s, check_s))
    return rows, default_rows, gains, all_exact


def print_gains(gains) -> None:
    """Per network/operator the EDP gain over Gemmini-default predicted (end to end, as the search
    costs both sides) and simulated end to end, and the gain of Gemmini's cycles alone."""
    print(f"\n{'network/op':22s} {'gain pred':>9s} {'gain sim':>9s} {'sim/pred':>8s} {'Gemmini alone':>13s} "
          f"{'tune s':>7s} {'check s':>8s}")
    for name, gp, gs, ge, ts, cs in gains:
        print(f"{name[:22]:22s} {gp:9.2f} {ge:9.2f} {ge / gp:8.2f} {gs:13.2f} {ts:7.1f} {cs:8.1f}")
    within = sum(abs(ge / gp - 1) <= 0.25 for _, gp, _, ge, _, _ in gains)
    print(f"simulated gain (end to end) within 25% of predicted: {within}/{len(gains)}")


def gemm_section(a, rng) -> bool:
    groups = []          # (name, [layers])
    if not (a.smoke or a.no_bert):
        groups.append(("bert", load_network("bert")))
    n_ops = 1 if a.smoke else a.ops
    max_macs = 2e5 if a.smoke else a.max_macs
    for gemv in (False, True):
        groups += [(layer.name, [layer]) for layer in band_operators(n_ops, gemv, rng, max_macs)]
    print("== GEMM/GEMV layers")
    rows, default_rows, gains, all_exact = check_groups(groups, a)
    print_report(rows, default_rows, gains,
                 (("the search's model (compiled program)", 0), ("Timeloop-matched model", 2),
                  ("analytical program model alone (no residual)", 3)),
                 "the C library's program end to end (kernel_model.library_matmul_cycles)")
    return all_exact


def print_report(rows, default_rows, gains, models, default_program):
    """Each model's accuracy on the simulated cycles (rows: predictions by column, simulated in
    column 1; the first model is the search's), the default's, and the gains."""
    for label, col in models:
        # the search's model counts the CPU issuing the commands: against the program on the ISS
        # (rdcycle around the grid loop); the others model Gemmini alone: against the cycle model's
        sim = [r[4 if col == 0 else 1] for r in rows]
        goal = " (goals r >= 0.95, median <= 15%)" if col == 0 else ""
        print(f"\n{len(rows)} layers, {label}: {accuracy([r[col] for r in rows], sim)}{goal}", end="")
    pred, dsim = zip(*default_rows)
    print(f"\n{len(rows)} layers on Gemmini-default, {default_program}: {accuracy(pred, dsim)}")
    print_gains(gains)


def conv_section(a, rng) -> bool:
    """The convolution layers of --conv-networks (cut_conv), each network tuned as one, and random
    small convolutions with random schedules."""
    rows_cut, cols_cut, ch_cut = (2, 14, 32) if a.smoke else (a.conv_rows, a.conv_cols, a.conv_channels)
    groups = [(f"{n} convs", conv_network_layers(n, rows_cut, cols_cut, ch_cut, 3 if a.smoke else None))
              for n in (a.conv_networks.split(",") if a.conv_networks else [])]
    print(f"\n== convolution layers (cut to 1 image, <= {rows_cut} output rows, <= {cols_cut} columns, "
          f"<= {ch_cut} channels)")
    rows, default_rows, gains, all_exact = check_groups(groups, a)
    if rows:
        print_report(rows, default_rows, gains,
                     (("the search's model (compiled conv program)", 0), ("Timeloop-matched model", 2)),
                     "the C library's tiled_conv_auto end to end (kernel_model.library_conv_cycles)")
    for count, large, what in ((a.random_convs, False, "random convolutions"),
                               (a.large_convs, True, "random large convolutions (DIM 64/128, large blocks)")):
        if not count:
            continue
        print(f"\n{count} {what}, random schedule and Gemmini: predicted "
              "(kernel_model.conv_schedule_cycles) vs simulated")
        samples = random_conv_rows(count, rng, max_cycles=1e5 if a.smoke else 2e6, large=large, bias=a.bias,
                                   padding=a.padding)
        for pred, sim, text in samples:
            print(f"  {text:50s} {pred:10.4g} {sim:10.4g} {sim / pred:6.2f}")
        print(f"{len(samples)} {what}: {accuracy(*zip(*[(p, s) for p, s, _ in samples]))}")
    return all_exact


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two small operators, a few steps (for the tests)")
    p.add_argument("--budget", type=float, default=20.0, help="tuning seconds per network/operator")
    p.add_argument("--ops", type=int, default=6, help="operators per category (GEMM, GEMV)")
    p.add_argument("--max-macs", type=float, default=1.5e8)
    p.add_argument("--no-bert", action="store_true")
    p.add_argument("--no-gemm", action="store_true", help="only the convolution section")
    p.add_argument("--conv-networks", default="resnet50,unet,retinanet",
                   help="networks whose convolutions are checked (comma-separated; empty: none)")
    p.add_argument("--conv-rows", type=int, default=4, help="output rows a convolution layer is cut to")
    p.add_argument("--conv-cols", type=int, default=64, help="output columns a convolution layer is cut to")
    p.add_argument("--conv-channels", type=int, default=256, help="input/output channels a layer is cut to")
    p.add_argument("--random-convs", type=int, default=None, help="random convolutions (default 40; smoke 2)")
    p.add_argument("--large-convs", type=int, default=None,
                   help="random large convolutions on DIM 64/128 (default 30; smoke 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bias", action="store_true", help="every layer with an int32 bias, as a whole model runs it")
    p.add_argument("--padding", action="store_true",
                   help="every layer padded as a \"same\" convolution, as a whole model's padded convs run")
    a = p.parse_args(argv)
    if a.random_convs is None:
        a.random_convs = 2 if a.smoke else 40
    if a.large_convs is None:
        a.large_convs = 1 if a.smoke else 30
    if a.smoke:
        a.conv_networks = "resnet50"
    rng = np.random.default_rng(a.seed)
    exact = True if a.no_gemm else gemm_section(a, rng)
    exact &= conv_section(a, rng)
    print(f"every layer bit-exact: {exact}")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
