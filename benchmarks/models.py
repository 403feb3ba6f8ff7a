"""Whole models through baco.compile_model, measured (issue H's acceptance table). Per model:

- quantisation error against the float model: cosine similarity and top-1 agreement of the logits
  over --samples seeded random inputs (random weights with BatchNorm statistics measured on random
  inputs, baco.model.zoo; nothing is downloaded);
- compile time to one ELF (baco.compile_model, then CompiledModel.build_elf: kernels compiled and
  linked with the weights, input and expected output), wall and CPU seconds (the clang children
  included: on a shared machine CPU seconds are the comparable figure), the ELF's size, the activation arena's peak
  beside the sum of all activations;
- bit-exactness against the independent reference (baco.model.reference): on sim (the steps on
  the host JIT and the functional model) and on the ISS (the ELF checks its own output);
- speed on the cycle model, default Gemmini (DIM 16): baco's whole program end to end (the ELF on
  the ISS with the cycle model attached, baco.codegen.program.run_program(timing=True): the core
  issuing every command, the CPU operators between layers and every fence on one clock) against
  the same network issued through the C library's calls as Gemmini's own programs do
  (gemmini-rocc-tests imagenet/*.c, mlps/*.c): tiled_matmul_nn_auto for linear layers (and per
  batch for bmm), tiled_conv_auto with the pooling epilogue for convolutions, tiled_conv_dw_auto for
  depthwise ones, tiled_resadd_auto for residual adds (baco.sim.clib's streams, each call timed with
  the library's CPU work per tile and its closing fence, library_stream_cycles); for attention, per
  batch and head, as gemmini-rocc-tests' transformers/transformer.c does (the scores Q·Kᵀ with
  transpose_B: the keys are stored untransposed on both sides). The CPU work
  between layers (pools, hardswish, squeeze-excite, concat...) is the same work on both sides: the
  library's side counts the cycles baco's program measured for those CPU steps. Ratio = library
  cycles / baco cycles (> 1: baco is faster); geomean over the models. --per-step prints both
  sides' cycles of every step. A model compile_model cannot run is printed as not supported with
  the compiler's error.

Simulation times are given the same way; --timeout bounds the ISS run's wall time.
The ISS prices every RISC-V instruction at one cycle; --rocket-muldiv prices baco's programs' and
--mlp1-elf's multiplies and divides as Rocket's iterative unit at most
(timing_constants.ROCKET_MULDIV); the library's layers keep their tile loop's instruction count
(its divides unpriced, in its favour), its CPU steps are baco's measured cycles as always.

With --mlp1-elf PATH (gemmini-rocc-tests' own mlp1-baremetal) that program also runs on the ISS
with the cycle model and its end-to-end CPU cycles are printed beside baco's mlp1 (benchmarks read
no reference data by themselves: give the path).

    python benchmarks/models.py [--models mlp1,resnet18,...] [--resolution 224] [--sequence 128] [--calibrate 8]
                                [--samples 8] [--mlp1-elf PATH] [--per-step] [--timeout 3600] [--rocket-muldiv]
    python benchmarks/models.py --smoke      # a tiny MLP, a tiny CNN and a tiny encoder layer
"""
from __future__ import annotations

import argparse
import math
import resource
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import baco  # noqa: E402
from baco.codegen.program import run_program  # noqa: E402
from baco.errors import CompilationError  # noqa: E402
from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, ROCKET_MULDIV, TimingConstants  # noqa: E402
from baco.model.compile import quantization_error  # noqa: E402
from baco.model.lower import CpuStep, GemminiStep  # noqa: E402
from baco.model.zoo import MLP1, mlp, seeded_inputs, small_cnn, torchvision_model  # noqa: E402
from baco.sim import clib  # noqa: E402
from baco.sim.timing import TimingModel  # noqa: E402

CNNS = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small")


def model_and_input_shape(name: str, resolution: int, sequence: int = 128):
    """(model, input shape) of a benchmark model name."""
    if name == "mlp_tiny":
        return mlp((64, 48, 32, 10)), (8, 64)
    if name == "mlp1":
        return mlp(MLP1), (64, 784)
    if name == "cnn_tiny":
        return small_cnn(), (1, 3, 17, 15)
    if name in CNNS:
        shape = (1, 3, resolution, resolution)
        return torchvision_model(name, input_shape=(2, *shape[1:])), shape
    if name == "bert_layer":
        from baco.tuner.torch_models import bert_base_encoder
        torch.manual_seed(0)
        return bert_base_encoder(1).eval(), (1, sequence, 768)
    if name == "bert_tiny":       # the BERT layer's operators at a smoke size
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=48, activation="gelu",
                                                 batch_first=True)
        return torch.nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False).eval(), (1, 19, 32)
    raise KeyError(name)


KNOWN = ("mlp_tiny", "cnn_tiny", "bert_tiny", "mlp1", *CNNS, "bert_layer")
DEFAULT = ("mlp1", *CNNS, "bert_layer")


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process's threads and of its finished children (clang)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def square(pair, what: str) -> int:
    a, b = (pair, pair) if isinstance(pair, int) else pair
    if a != b:
        raise ValueError(f"the C library's convolutions are square: {what} {pair}")
    return int(a)


def library_calls(step: GemminiStep, lowered, cfg: GemminiConfig):
    """The C library's calls (one stream each) that run `step`'s op as Gemmini's own programs do."""
    op, q = step.op, step.op.q
    x = lowered.buffers[op.inputs[0]]
    if op.kind in ("conv", "depthwise"):
        N, H, W, C = x.shape
        R, S = q["weight"].shape[:2]
        k = square((R, S), "kernel")
        stride, padding = square(q["stride"], "stride"), square(q["padding"], "padding")
        dilation = square(q["dilation"], "dilation")
        pool = q.get("pool") or {}
        pooling = dict(pool_size=pool.get("kernel", 0), pool_stride=pool.get("stride", 0),
                       pool_padding=pool.get("padding", 0))
        if op.kind == "depthwise":
            if dilation != 1:
                raise ValueError("the C library's depthwise convolution has no dilation")
            return [clib.depthwise_stream(N, H, W, C, k, cfg, stride=stride, padding=padding, scale=q["scale"],
                                          relu=q["relu"], bias=True, **pooling)]
        return [clib.conv_stream(N, H, W, C, q["weight"].shape[3], k, cfg, stride=stride, padding=padding,
                                 dilation=dilation, scale=q["scale"], relu=q["relu"], bias=True, **pooling)]
    if op.kind == "linear":
        K, Nn = q["weight"].shape
        M = x.size // K
        return [clib.matmul_stream(M, Nn, K, cfg, out_int8=True, scale=q["scale"], relu=q["relu"],
                                   bias="repeating")]
    if op.kind == "matmul":     # B read column-major (Kᵀ of attention scores): transpose_B, as transformer.c
        return [clib.matmul_stream(*matmul_dims(launch), cfg, out_int8=True, scale=q["scale"],
                                   transpose_b=b_transposed(launch)) for launch in step.launches]
    if op.kind == "add":
        cols = x.shape[-1]
        return [clib.resadd_stream(x.size // cols, cols, cfg, a_scale=q["a_scale"], b_scale=q["b_scale"],
                                   c_scale=q["out_scale"], relu=q["relu"])]
    raise ValueError(f"no C library call for {op.kind}")


def matmul_dims(launch) -> tuple[int, int, int]:
    """(M, N, K) of a matmul launch (matmul_kernel's arguments M, N, K)."""
    M, N, K = launch.args[3:6]
    return M, N, K


def b_transposed(launch) -> bool:
    """The launch reads B column-major (matmul_kernel's stride_bn is not 1)."""
    N, stride_bn = launch.args[4], launch.args[9]
    return N > 1 and stride_bn != 1


def library_cycles(compiled, step_cycles: dict) -> dict:
    """The network as the C library runs it on the cycle model: every Gemmini step as its library
    calls (one after another on one cycle model), every CPU step the cycles baco's program
    measured for it (`step_cycles`: the program's step name -> cycles)."""
    lowered, cfg = compiled.lowered, compiled.config
    tm = TimingModel(cfg)
    gemmini = cpu = tiles = commands = 0
    per_step = []          # (step, baco's cycles, the library's)
    for i, step in enumerate(lowered.steps):
        name = f"s{i:03d}_{step.op.kind}"
        mine = sum(c for n, c in step_cycles.items() if n == name or n.startswith(name + "."))
        if isinstance(step, CpuStep):
            cpu += mine
            per_step.append((name, mine, mine))
            continue
        theirs = 0
        for call in library_calls(step, lowered, cfg):
            stream = list(call)
            tiles += sum(command in clib.TILE_START for command, _ in stream)
            commands += len(stream)
            theirs += clib.library_stream_cycles(stream, tm)
        theirs = round(theirs)
        gemmini += theirs
        per_step.append((name, mine, theirs))
    # the core's own work issuing the calls: the tile loop per tile, one instruction a command
    issue = (tiles * tm.k.library_tile_instructions + commands) * tm.k.cpu_cycles_per_instruction
    return dict(total=gemmini + cpu, gemmini_layers=gemmini, cpu_steps=cpu, tiles=tiles, issue_cycles=issue,
                per_step=per_step)


def measure(name: str, resolution: int, calibrate: int, samples: int, sequence: int = 128,
            timeout_s: float = 3600, constants: TimingConstants = DEFAULT_CONSTANTS) -> dict:
    model, shape = model_and_input_shape(name, resolution, sequence)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    row = dict(model=name, input="x".join(map(str, shape)))
    t0, c0 = time.perf_counter(), cpu_seconds()
    try:
        compiled = baco.compile_model(model, x, calibrate=calibrate)
    except CompilationError as e:      # an operator compile_model does not run: the model's row says which
        row["unsupported"] = str(e).splitlines()[0]
        return row
    t_compile, c_compile = time.perf_counter() - t0, cpu_seconds() - c0
    steps = [layer.runs_on for layer in compiled.layers]
    row.update(gemmini_steps=steps.count("gemmini"), cpu_steps=steps.count("cpu"))
    err = quantization_error(model, compiled, seeded_inputs(shape, samples, seed=5))
    row.update(cosine=err["cosine"], top1=err["top1_agreement"])
    t1, c1 = time.perf_counter(), cpu_seconds()
    row["sim_bit_exact"] = compiled.check(x)["bit_exact"]
    row["sim_s"], row["sim_cpu_s"] = time.perf_counter() - t1, cpu_seconds() - c1
    with tempfile.TemporaryDirectory(prefix="baco-models-") as d:
        t2, c2 = time.perf_counter(), cpu_seconds()
        build = compiled.build_elf(Path(d) / f"{name}.elf", x)
        row["compile_s"] = t_compile + time.perf_counter() - t2
        row["compile_cpu_s"] = c_compile + cpu_seconds() - c2
        row.update(elf_bytes=build.elf_bytes, arena=build.plan.peak_bytes, activations=build.plan.activation_bytes)
        t3, c3 = time.perf_counter(), cpu_seconds()
        run = run_program(build, timing=TimingModel(compiled.config, constants), timeout_s=timeout_s)
        row["iss_s"], row["iss_cpu_s"] = time.perf_counter() - t3, cpu_seconds() - c3
    row.update(iss_bit_exact=run.passed, baco_cycles=run.total_cycles, commands=run.gemmini_commands)
    cpu_steps = {f"s{i:03d}_{s.op.kind}" for i, s in enumerate(compiled.lowered.steps) if isinstance(s, CpuStep)}
    row["baco_cpu_steps"] = sum(c for n, c in run.step_cycles.items() if n in cpu_steps)
    t4, c4 = time.perf_counter(), cpu_seconds()
    lib = library_cycles(compiled, run.step_cycles)
    row["library_s"], row["library_cpu_s"] = time.perf_counter() - t4, cpu_seconds() - c4
    row.update(library_cycles=lib["total"], library_gemmini=lib["gemmini_layers"], library_tiles=lib["tiles"],
               library_issue=lib["issue_cycles"], ratio=lib["total"] / run.total_cycles, per_step=lib["per_step"])
    return row


def run_gemmini_mlp1(path: str, constants: TimingConstants = DEFAULT_CONSTANTS) -> dict:
    """gemmini-rocc-tests' own mlp1 program on the ISS with the cycle model: its CPU cycles end to end."""
    from baco.sim.iss import run_elf
    cfg = GemminiConfig()
    t0 = time.perf_counter()
    res = run_elf(path, config=cfg, timing=TimingModel(cfg, constants), stdout=None, timeout_s=3600)
    return dict(exit_code=res.exit_code, cycles=res.cpu_cycles, commands=res.gemmini_commands,
                seconds=time.perf_counter() - t0, console=res.console)


def print_row(r: dict, per_step: bool = False) -> None:
    if "unsupported" in r:
        print(f"{r['model']:<19} {r['input']:<13} not supported by compile_model: {r['unsupported']}", flush=True)
        return
    exact = lambda ok: "bit-exact" if ok else "MISMATCH"   # noqa: E731
    print(f"{r['model']:<19} {r['input']:<13} steps {r['gemmini_steps']} Gemmini + {r['cpu_steps']} CPU; "
          f"quantisation: cosine {r['cosine']:.4f}, top-1 {r['top1']:.2f}\n"
          f"{'':<33} compile to one ELF {r['compile_s']:.1f} s ({r['compile_cpu_s']:.1f} CPU s), ELF {r['elf_bytes']:,} B, arena "
          f"{r['arena']:,} of {r['activations']:,} B of activations; sim {exact(r['sim_bit_exact'])} "
          f"({r['sim_s']:.1f} s, {r['sim_cpu_s']:.1f} CPU s), ISS {exact(r['iss_bit_exact'])} with the cycle model "
          f"({r['iss_s']:.1f} s, {r['iss_cpu_s']:.1f} CPU s, {r['commands']:,} commands)\n"
          f"{'':<33} cycles: baco {r['baco_cycles']:,} (CPU steps {r['baco_cpu_steps']:,}); C library "
          f"{r['library_cycles']:,} (Gemmini layers {r['library_gemmini']:,} incl. CPU issue of "
          f"{r['library_tiles']:,} tiles = {r['library_issue']:,.0f}, + the same CPU steps); "
          f"ratio {r['ratio']:.3f}x ({r['library_s']:.1f} s, {r['library_cpu_s']:.1f} CPU s)", flush=True)
    if per_step:
        for name, mine, theirs in r["per_step"]:
            print(f"{'':<35}{name:<28} baco {mine:>12,}  library {theirs:>12,}  {theirs / max(mine, 1):7.3f}x")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(DEFAULT), help=f"comma-separated, of {', '.join(KNOWN)}")
    p.add_argument("--resolution", type=int, default=224, help="the CNNs' input height and width")
    p.add_argument("--sequence", type=int, default=128, help="the BERT layer's sequence length")
    p.add_argument("--calibrate", type=int, default=8, help="calibration inputs")
    p.add_argument("--samples", type=int, default=8, help="seeded inputs of the quantisation error")
    p.add_argument("--mlp1-elf", help="gemmini-rocc-tests' mlp1-baremetal, run beside baco's mlp1")
    p.add_argument("--per-step", action="store_true", help="each step's cycles, baco's and the library's")
    p.add_argument("--timeout", type=float, default=3600.0, help="wall seconds the ISS may run one model")
    p.add_argument("--rocket-muldiv", action="store_true",
                   help="baco's programs and --mlp1-elf on the ISS with the CPU's multiplies and divides priced "
                        "as Rocket's iterative unit at most (ROCKET_MULDIV); the library's layers keep their tile "
                        "loop's instruction count, which favours them (CPU steps: baco's cycles on both sides)")
    p.add_argument("--smoke", action="store_true",
                   help="a tiny MLP, CNN and encoder layer, 2 calibration inputs, 2 samples")
    args = p.parse_args(argv)
    names = ["mlp_tiny", "cnn_tiny", "bert_tiny"] if args.smoke else args.models.split(",")
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        p.error(f"unknown models {unknown}; known: {', '.join(KNOWN)}")
    calibrate, samples = (2, 2) if args.smoke else (args.calibrate, args.samples)
    constants = ROCKET_MULDIV if args.rocket_muldiv else DEFAULT_CONSTANTS
    print(f"default Gemmini (DIM {GemminiConfig().dim}); calibration inputs {calibrate}; quantisation error over "
          f"{samples} seeded inputs; CNNs at {args.resolution}x{args.resolution}, BERT at sequence {args.sequence}",
          flush=True)
    rows, ok = [], True
    for name in names:
        r = measure(name, args.resolution, calibrate, samples, args.sequence, args.timeout, constants)
        print_row(r, args.per_step)
        rows.append(r)
        ok &= "unsupported" in r or (r["sim_bit_exact"] and r["iss_bit_exact"])
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if ratios:
        geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        each = ", ".join(f"{r['model']} {r['ratio']:.3f}x" for r in rows if "ratio" in r)
        print(f"C library / baco cycles: {each}; geomean {geomean:.3f}x over {len(ratios)} models")
    if args.mlp1_elf:
        g = run_gemmini_mlp1(args.mlp1_elf, constants)
        mine = next((r for r in rows if r["model"] == "mlp1" and "baco_cycles" in r), None)
        line = (f"gemmini-rocc-tests mlp1 ({args.mlp1_elf}): exit {g['exit_code']}, {g['cycles']:,} CPU cycles end to "
                f"end, {g['commands']:,} commands ({g['seconds']:.1f} s)")
        if mine:
            line += f"; baco's mlp1 {mine['baco_cycles']:,} cycles: {g['cycles'] / mine['baco_cycles']:.3f}x"
        print(line)
        ok &= g["exit_code"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
