"""Whole models through baco.compile_model: per model, the quantised program's shape (Gemmini
launches, CPU calls), compile and run times on sim, bit-exactness against the independent
reference (baco.model.reference), and the quantisation error against the float model (cosine
similarity and top-1 agreement of the logits over seeded random inputs; random weights with
BatchNorm statistics measured on random inputs, baco.model.zoo). With --iss, also one
self-checking ELF per model on the RISC-V ISS: its cycles, size and activation arena.

    python benchmarks/models.py [--models mlp,small_cnn,resnet18,...] [--calibrate 8] [--samples 8] [--iss]
    python benchmarks/models.py --smoke
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

import baco
from baco.model.compile import quantization_error
from baco.model.zoo import MLP1, mlp, seeded_inputs, small_cnn, torchvision_model

MODELS = {
    "mlp_small": (lambda: mlp((784, 256, 128, 10)), (8, 784)),
    "mlp1": (lambda: mlp(MLP1), (64, 784)),
    "small_cnn": (small_cnn, (2, 3, 17, 15)),
    "resnet18": (lambda: torchvision_model("resnet18"), (1, 3, 32, 32)),
    "mobilenet_v2": (lambda: torchvision_model("mobilenet_v2"), (1, 3, 32, 32)),
    "mobilenet_v3_small": (lambda: torchvision_model("mobilenet_v3_small"), (1, 3, 32, 32)),
}


def measure(name, calibrate, samples, iss):
    factory, shape = MODELS[name]
    model = factory()
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    t0 = time.perf_counter()
    compiled = baco.compile_model(model, x, calibrate=calibrate)
    t1 = time.perf_counter()
    check = compiled.check(x)
    t2 = time.perf_counter()
    err = quantization_error(model, compiled, seeded_inputs(shape, samples, seed=5))
    steps = [layer.runs_on for layer in compiled.layers]
    row = dict(model=name, input="x".join(map(str, shape)), gemmini=steps.count("gemmini"), cpu=steps.count("cpu"),
               compile_s=t1 - t0, sim_s=t2 - t1, bit_exact=check["bit_exact"], cosine=err["cosine"],
               top1=err["top1_agreement"])
    if iss:
        from baco.codegen.program import run_program
        with tempfile.TemporaryDirectory() as d:
            t3 = time.perf_counter()
            build = compiled.build_elf(Path(d) / f"{name}.elf", x)
            t4 = time.perf_counter()
            run = run_program(build)
            row.update(elf_s=t4 - t3, iss_s=time.perf_counter() - t4, iss_passed=run.passed,
                       cycles=run.total_cycles, elf_bytes=build.elf_bytes, arena=build.plan.peak_bytes,
                       activations=build.plan.activation_bytes)
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="mlp_small,small_cnn,resnet18,mobilenet_v2,mobilenet_v3_small")
    p.add_argument("--calibrate", type=int, default=8)
    p.add_argument("--samples", type=int, default=8)
    p.add_argument("--iss", action="store_true", help="also link each model into one ELF and run it on the ISS")
    p.add_argument("--smoke", action="store_true", help="mlp_small only, 2 calibration inputs, 2 samples")
    args = p.parse_args(argv)
    names = ["mlp_small"] if args.smoke else args.models.split(",")
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        p.error(f"unknown models {unknown}; known: {', '.join(MODELS)}")
    calibrate, samples = (2, 2) if args.smoke else (args.calibrate, args.samples)
    print(f"calibration inputs {calibrate}, quantisation error over {samples} seeded inputs")
    ok = True
    for name in names:
        r = measure(name, calibrate, samples, args.iss)
        ok &= r["bit_exact"] and r.get("iss_passed", True)
        line = (f"{r['model']:<19} {r['input']:<11} gemmini {r['gemmini']:>3} cpu {r['cpu']:>3}  compile "
                f"{r['compile_s']:6.1f} s  sim {r['sim_s']:6.1f} s  {'bit-exact' if r['bit_exact'] else 'MISMATCH'}  "
                f"cosine {r['cosine']:.4f}  top-1 {r['top1']:.2f}")
        if args.iss:
            line += (f"  | ISS {'pass' if r['iss_passed'] else 'FAIL'} {r['cycles']:,} cycles, ELF {r['elf_bytes']:,} B "
                     f"(built in {r['elf_s']:.1f} s), arena {r['arena']:,} of {r['activations']:,} B")
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
