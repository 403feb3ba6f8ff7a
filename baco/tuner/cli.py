"""`baco tune`: co-explore Gemmini hardware and mappings for one operator (or a
network) and write the Chipyard config, gemmini_params.h, JSON and Timeloop files.

    baco tune --op gemm --M 512 --N 512 --K 512 --out out/gemm
    baco tune --op conv2d --H 56 --W 56 --C 64 --K 64 --R 3 --stride 1 --padding 1 --out out/conv
    baco tune --problem layer.yaml --out out/x        (a Timeloop problem YAML)
    baco tune --network resnet50 --budget 120 --out out/resnet
    baco tune --torch torchvision.models:resnet50 --input-shape 1,3,224,224 --out out/rn50
    baco tune --torch baco.tuner.torch_models:bert_base_encoder --input-shape 1,128,768 --out out/bert
    baco tune --network bert --max-area 2.5 --out out/bert-2mm2      (an area budget in mm²)
    baco tune --network bert --pareto 5 --budget 30 --out out/front  (EDP-vs-area front: CSV + PNG)
    baco tune --torch torchvision.models:resnet18 --input-shape 1,3,224,224 --fusion on \
        --hardware 16,8,8 --budget 60 --out out/rn18-fused   (fusion on FADiff's Small Gemmini)
    baco tune --torch baco.model.zoo:mlp --input-shape 64,784 --fusion on \
        --hardware 16,512,256 --ext-spad --out out/mlp1   (a Gemmini master: chains on the loop unit)
    baco tune --torch baco.model.zoo:mlp --input-shape 64,784 --fusion on --ext-spad \
        --budget 60 --out out/mlp2   (the hardware searched among Gemmini masters)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from baco.tuner import baselines, explore, fusion, workloads
from baco.tuner.arch import Hardware
from baco.tuner.hwinfer import is_legal
from baco.tuner.emit import write_outputs

METHODS = {
    "baco": lambda layers, a: explore.coexplore(layers, seed=a.seed, steps=a.steps, time_budget_s=a.budget,
                                                progress=not a.quiet, init_hw=a.init_hw,
                                                importance=a.importance == "on", max_area_mm2=a.max_area,
                                                checkpoint=a.checkpoint, cycle_model=a.cycle_model,
                                                fixed_hw=a.fixed_hw, fusion_graph=a.graph, untuned=a.untuned,
                                                ext_spad=a.ext_spad),
    "default": lambda layers, a: baselines.gemmini_default(layers, cycle_model=a.cycle_model, untuned=a.untuned),
    "random": lambda layers, a: baselines.random_search(layers, time_budget_s=a.budget or 30, seed=a.seed,
                                                        cycle_model=a.cycle_model),
    "ga": lambda layers, a: baselines.genetic(layers, time_budget_s=a.budget or 30, seed=a.seed,
                                              cycle_model=a.cycle_model, fixed_hw=a.fixed_hw, fusion_graph=a.graph,
                                              ext_spad=a.ext_spad),
    "bo": lambda layers, a: baselines.bayesian(layers, time_budget_s=a.budget or 30, seed=a.seed,
                                               cycle_model=a.cycle_model),
    "dosa": lambda layers, a: baselines.dosa_style(layers, time_budget_s=a.budget, seed=a.seed,
                                                   cycle_model=a.cycle_model, fixed_hw=a.fixed_hw,
                                                   fusion_graph=a.graph, ext_spad=a.ext_spad),
}
FIXED_HARDWARE_METHODS = FUSION_METHODS = EXT_SPAD_METHODS = ("baco", "ga", "dosa")


def parse_hardware(text: str, ext_spad: bool = False) -> Hardware:
    """--hardware DIM,SP_KB,ACC_KB: a Gemmini a generator accepts (hwinfer.is_legal); ext_spad:
    --ext-spad (Gemmini master's ext-spad commands)."""
    try:
        dim, sp_kb, acc_kb = (int(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"--hardware wants DIM,SP_KB,ACC_KB (three integers, e.g. 32,512,64), got {text!r}") from None
    if not is_legal(dim, sp_kb, acc_kb):
        raise ValueError(f"--hardware {text}: no Gemmini has a {dim}x{dim} array with {sp_kb} KB of scratchpad "
                         f"and {acc_kb} KB of accumulator (whole rows, power-of-two bank depth)")
    return Hardware(dim, sp_kb, acc_kb, ext_spad)


def print_fusion(result) -> None:
    """The report's fusion lines: the fused groups, and the design's EDP unfused."""
    info = result.fusion
    fused = sum(e["fused"] for e in info["edges"])
    print(f"  fusion: {fused} of {len(info['edges'])} edges fused; the same design unfused: EDP "
          f"{info['unfused_edp']:.4g} ({1 - result.edp / info['unfused_edp']:.1%} lower fused)")
    for group in info["groups"]:
        print(f"    fused group: {' + '.join(group)}")


def layers_from_args(a, torch_workload=None) -> list:
    """The layers the arguments name; with --torch and a `torch_workload` (see main), the whole
    program's table: its tuned layers, the rest of the program put in a.untuned."""
    if a.problem:
        import yaml
        try:
            problem = yaml.safe_load(open(a.problem, encoding="utf-8").read())
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise ValueError(f"{a.problem}: not a YAML file ({str(e).splitlines()[0]})") from None
        if not isinstance(problem, dict):
            raise ValueError(f"{a.problem}: not a Timeloop problem (expected a `problem:` mapping)")
        return [workloads.from_problem(problem, name=Path(a.problem).stem)]
    if a.network:
        return workloads.load_network(a.network)
    if a.torch:
        if not a.input_shape:
            raise SystemExit("baco tune: --torch needs --input-shape (e.g. 1,3,224,224)")
        try:
            whole = torch_workload(a.torch, a.input_shape) if torch_workload else None
            if whole is None:
                layers = workloads.layers_from_model_spec(a.torch, a.input_shape.split(","))
            else:
                layers, a.untuned = whole.layers, whole.untuned
        except ImportError as e:
            raise ValueError(f"--torch {a.torch}: {e}") from None
        if a.untuned is None:
            print(f"{a.torch}: {len(layers)} unique layers, {sum(l.count for l in layers)} in all (torch.fx)")
        else:
            u = a.untuned
            print(f"{a.torch}: {len(layers)} unique layers, {sum(l.count for l in layers)} in all, and untuned "
                  f"{sum(g.count for g in u.gemms)} batched-matmul GEMMs, {sum(x.count for x in u.adds)} residual "
                  f"adds, {sum(w.count for w in u.cpu)} CPU steps ({u.cpu_cycles:,.0f} cycles) (the compiled program)")
        return layers
    if a.op in ("gemm", "gemv"):
        if a.M is None or a.K is None or (a.op == "gemm" and a.N is None):
            raise SystemExit("baco tune: --op gemm needs --M --N --K (gemv: --M --K)")
        return [workloads.gemm(a.M, a.K, a.N) if a.op == "gemm" else workloads.gemv(a.M, a.K)]
    if a.op == "conv2d":
        need = [a.H, a.W, a.C, a.K, a.R]
        if None in need:
            raise SystemExit("baco tune: --op conv2d needs --H --W --C --K --R")
        return [workloads.conv2d_from_input(a.H, a.W, a.C, a.K, a.R, stride=a.stride, padding=a.padding,
                                            batch=a.batch)]
    if a.op == "conv1d":
        if None in (a.W, a.C, a.K, a.R):
            raise SystemExit("baco tune: --op conv1d needs --W (length) --C --K --R")
        out = (a.W + 2 * a.padding - a.R) // a.stride + 1
        return [workloads.conv1d(out, a.C, a.K, a.R, stride=a.stride, batch=a.batch)]
    raise SystemExit("baco tune: give --op, --problem, --network or --torch")


def main(argv=None, torch_workload=None) -> int:
    """`baco tune`. torch_workload: a callable (MODULE:CALLABLE, input shape text) ->
    whole_model.ModelWorkload giving --torch the whole compiled program's table (`baco tune` passes
    baco.model.cli.torch_workload; the tuner imports no compiler); without it, --torch tunes the MAC
    layers torch.fx finds (workloads.layers_from_model_spec) and nothing else is costed."""
    p = _parser()
    a = p.parse_args(argv)
    _check_arguments(p, a)
    layers = _prepare(a, torch_workload)
    if a.pareto:
        from baco.tuner.area import pareto_sweep, write_pareto

        def search(max_area):
            a.max_area = max_area
            return METHODS["baco"](layers, a)
        written = write_pareto(pareto_sweep(search, a.pareto), a.out, title=a.network or a.torch or "")
        print(f"wrote {', '.join(str(v) for v in written.values())}")
        return 0
    result = METHODS[a.method](layers, a)
    _report(a, layers, result)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="baco tune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", choices=["gemm", "gemv", "conv1d", "conv2d"])
    p.add_argument("--M", type=int)
    p.add_argument("--N", type=int)
    p.add_argument("--K", type=int, help="GEMM: reduction size; conv: output channels")
    p.add_argument("--H", type=int)
    p.add_argument("--W", type=int)
    p.add_argument("--C", type=int)
    p.add_argument("--R", type=int, help="kernel size")
    p.add_argument("--stride", type=int, default=1)
    p.add_argument("--padding", type=int, default=0)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--problem", help="Timeloop problem YAML")
    p.add_argument("--network", help="a shipped network (resnet50, bert, unet, retinanet, ... see baco/data/workloads) or a folder like them")
    p.add_argument("--torch", metavar="MODULE:CALLABLE",
                   help="a torch model factory, e.g. torchvision.models:resnet50 (layers via torch.fx)")
    p.add_argument("--input-shape", help="the model's input shape for --torch, e.g. 1,3,224,224")
    p.add_argument("--method", choices=list(METHODS), default="baco")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int)
    p.add_argument("--budget", type=float, help="time budget in seconds")
    p.add_argument("--init-params", help="an existing gemmini_params.h as the starting hardware")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--importance", choices=["on", "off"], default="off",
                   help="baco: schedule gradient steps over layers by estimated gain (thesis §6.5), or move all "
                        "layers at every step (the default: better EDP at equal budget, benchmarks/network.py)")
    p.add_argument("--max-area", type=float, metavar="MM2",
                   help="baco: area budget in mm² (arch.area_mm2); no returned design exceeds it")
    p.add_argument("--pareto", type=int, metavar="N",
                   help="baco: search N area budgets (the first unconstrained) and write pareto.csv/.png")
    p.add_argument("--checkpoint-every", type=float, default=30.0, metavar="S",
                   help="baco: save the search state to OUT/checkpoint.pt at least every S seconds")
    p.add_argument("--resume", action="store_true",
                   help="baco: continue from OUT/checkpoint.pt (same arguments as the killed run)")
    p.add_argument("--cycle-model", choices=["compiled", "timeloop"], default="compiled",
                   help="cycles of kernel (GEMM) layers from the compiled program, whose schedule "
                        "(dataflow, double buffering) the search also picks, or from the Timeloop-matched "
                        "model (as DOSA and the thesis compare); result.json always carries timeloop_cycles")
    p.add_argument("--fusion", choices=["on", "off"], default="off",
                   help="on: also search which producer->consumer edges to fuse (baco.tuner.fusion, FADiff's "
                        "model; needs --torch, whose graph gives the edges); off: layer by layer")
    p.add_argument("--hardware", metavar="DIM,SP_KB,ACC_KB",
                   help="a fixed Gemmini (e.g. FADiff's Large 32,512,64 or Small 16,8,8): only the mappings "
                        "(and fusion) are searched")
    p.add_argument("--ext-spad", action="store_true",
                   help="the Gemmini (--hardware's, or every one the search tries) has Gemmini master's ext-spad "
                        "commands (MVOUT_SPAD, LOOP_WS spad_only; v0.7.2 has not), so a fused linear -> linear or "
                        "1x1 -> 1x1 chain runs on the loop unit, its hidden layer kept in the scratchpad, and --fusion "
                        "costs it so; the same area")
    p.add_argument("--quiet", action="store_true")
    return p


def _check_arguments(p: argparse.ArgumentParser, a) -> None:
    """The combinations of arguments that do not apply (argparse's error, exit 2)."""
    if (a.max_area is not None or a.pareto) and a.method != "baco":
        p.error("--max-area and --pareto apply to --method baco")
    if a.op == "gemm" and a.K is None:
        p.error("--op gemm needs --K")
    if a.budget is not None and not a.budget > 0:
        p.error(f"--budget must be a positive number of seconds, got {a.budget:g}")
    if a.steps is not None and a.steps < 1:
        p.error(f"--steps must be at least 1, got {a.steps}")
    if a.fusion == "on" and a.method not in FUSION_METHODS:
        p.error(f"--fusion on applies to --method {', '.join(FUSION_METHODS)}")
    if a.fusion == "on" and not a.torch:
        p.error("--fusion on needs --torch: the fusion edges come from the model's graph")
    if a.hardware and a.method not in FIXED_HARDWARE_METHODS:
        p.error(f"--hardware applies to --method {', '.join(FIXED_HARDWARE_METHODS)}")
    if a.hardware and (a.init_params or a.max_area is not None or a.pareto):
        p.error("--hardware fixes the Gemmini: it excludes --init-params, --max-area and --pareto")
    if a.ext_spad and a.method not in EXT_SPAD_METHODS:
        p.error(f"--ext-spad applies to --method {', '.join(EXT_SPAD_METHODS)}")


def _prepare(a, torch_workload=None) -> list:
    """Reads what the arguments name into `a` (fixed or initial hardware, the fusion graph, the
    untuned steps of a whole model, the checkpointer) and returns the layers to tune."""
    a.untuned = None
    a.fixed_hw = parse_hardware(a.hardware, a.ext_spad) if a.hardware else None
    a.init_hw = None
    if a.init_params:
        from baco.tuner.params_import import hardware_from_header
        a.init_hw = hardware_from_header(a.init_params)
    a.graph = None
    if a.fusion == "on":
        if not a.input_shape:
            raise SystemExit("baco tune: --torch needs --input-shape (e.g. 1,3,224,224)")
        a.graph = fusion.graph_from_model_spec(a.torch, a.input_shape.split(","))
        layers = a.graph.layers
        print(f"{a.torch}: {len(layers)} unique layers, {len(a.graph.names)} in all, "
              f"{len(a.graph.edges)} fusable edges (torch.fx)")
    else:
        layers = layers_from_args(a, torch_workload)
    a.checkpoint = None
    if a.method == "baco" and not a.pareto:
        from baco.tuner.checkpoint import Checkpointer
        key = json.dumps([[l.key for l in layers], [l.count for l in layers], a.seed, a.steps, a.budget,
                          a.importance, a.max_area, a.init_params, a.cycle_model, a.fusion, a.hardware,
                          a.ext_spad, repr(a.untuned)])
        a.checkpoint = Checkpointer(Path(a.out) / "checkpoint.pt", a.checkpoint_every, a.resume, key)
    return layers


def _report(a, layers, result) -> None:
    """Writes the outputs and prints their summary."""
    paths = write_outputs(a.out, layers, result)
    hw = result.hw
    print(f"{a.method}: Gemmini {hw.pe_dim}x{hw.pe_dim}, scratchpad {hw.sp_kb:g} KB, accumulator {hw.acc_kb:g} KB"
          f"{' (ext-spad)' if hw.ext_spad else ''}, area {hw.area_mm2:.3f} mm2; cycles {result.cycles:.4g}, "
          f"energy {result.energy_uj:.4g} uJ, EDP {result.edp:.4g}")
    if result.untuned_cycles:
        print(f"  of which the untuned steps (batched matmuls, residual adds, CPU): {result.untuned_cycles:.4g} cycles, "
              f"{result.untuned_energy_uj:.4g} uJ (CPU steps: cycles only)")
    summary = json.loads(paths["json"].read_text())
    print(f"  {summary['macs']:.4g} MACs (the layers as given), array utilization {summary['utilization']:.1%}")
    if result.fusion is not None:
        print_fusion(result)
    for entry in summary["layers"][:8]:
        blocks = f" blocks {entry['blocks']}" if "blocks" in entry else ""
        print(f"  {entry['name']}: {entry['mapping']}{blocks}")
    print(f"wrote {', '.join(str(v) for v in paths.values())} and timeloop/ problem+mapping files")


if __name__ == "__main__":
    sys.exit(main())
