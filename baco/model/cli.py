"""`baco build`: a PyTorch model as one self-checking bare-metal ELF.

    baco build --torch MODULE:CALLABLE --input-shape 1,3,224,224 [--design DIR] [--calibrate N]
               [--seed S] [--run] --elf OUT.elf

MODULE is an importable module (torchvision.models, baco.model.zoo, ...) or the path of a .py
file; CALLABLE, called with no arguments, returns the torch.nn.Module. Its weights are whatever
the callable gives (seeded with --seed); BatchNorm statistics of a random-weight network are
measured on seeded random inputs (baco.model.zoo.with_bn_statistics), as training would have set
them, so its activations neither vanish nor explode. The model is captured with torch.export,
quantised (activation scales from --calibrate seeded inputs), lowered to Gemmini kernel launches
and CPU operators (default schedules on the default Gemmini, or the `baco tune --torch ... --out DIR`
design's), and linked into one ELF with its weights, a seeded random input and the independent
reference's output: the ELF exits 0 iff its output is bit-exact and prints per-step and total
cycles. `baco sim OUT.elf [--timing]` and `spike --extension=gemmini OUT.elf` run it unchanged;
--run runs it on the built-in ISS with the cycle model right away.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path


def load_callable(spec: str):
    """The callable named by MODULE:CALLABLE (MODULE: a module name or a .py file's path)."""
    from baco.tuner.workloads import import_model_module
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--torch wants MODULE:CALLABLE (e.g. torchvision.models:resnet18), got {spec!r}")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise FileNotFoundError(2, "No such file or directory", module_name)
        mod_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
    else:
        module = import_model_module(module_name)
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ValueError(f"{module_name} has no callable {attr!r}")
    return factory


def input_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise ValueError(f"--input-shape wants comma-separated sizes (e.g. 1,3,224,224), got {text!r}") from None
    if not shape or min(shape) < 1:
        raise ValueError(f"--input-shape sizes must be positive, got {text!r}")
    return shape


def build_model(spec: str, shape, seed: int):
    """The eval-mode model of `spec`, seeded, with BatchNorm statistics measured on `shape`."""
    import torch
    from baco.model.zoo import with_bn_statistics
    torch.manual_seed(seed)
    model = load_callable(spec)()
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"{spec} returned a {type(model).__name__}, not a torch.nn.Module")
    return with_bn_statistics(model, shape, seed=seed)


def torch_workload(spec: str, shape_text: str):
    """The whole program's table (baco.model.workload) for `baco tune --torch MODULE:CALLABLE
    --input-shape ...`: the steps of the program `baco build` makes of the model without a design
    (same seed and calibration), or None, saying why, when the model does not compile (the tuner
    then tunes the MAC layers torch.fx finds, and costs nothing else)."""
    from baco.errors import CompilationError
    from baco.model.workload import model_workload
    from baco.model.zoo import seeded_inputs
    shape = input_shape(shape_text)
    model = build_model(spec, shape, 0)
    try:
        return model_workload(model, seeded_inputs(shape, 1, seed=1)[0])
    except CompilationError as e:
        print(f"baco tune: {spec} does not compile as one program, so only its MAC layers are tuned and costed:\n{e}",
              file=sys.stderr)
        return None


def tune_main(argv=None) -> int:
    """`baco tune`: baco.design.tune_main, --torch costing the whole compiled program (torch_workload)."""
    from baco.design import tune_main as tune_and_verify
    return tune_and_verify(argv, torch_workload=torch_workload)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="baco build", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--torch", required=True, metavar="MODULE:CALLABLE", help="the model's factory")
    p.add_argument("--input-shape", required=True, type=input_shape, help="e.g. 1,3,224,224")
    p.add_argument("--design", help="a `baco tune --torch ... --out DIR` result for the same model")
    p.add_argument("--calibrate", type=int, default=8, help="seeded calibration inputs (default 8)")
    p.add_argument("--seed", type=int, default=0, help="seed of the weights and of the input")
    p.add_argument("--elf", required=True, help="the ELF to write")
    p.add_argument("--run", action="store_true", help="run the ELF on the ISS with the cycle model")
    args = p.parse_args(argv)
    if args.calibrate < 1:
        p.error(f"--calibrate must be at least 1, got {args.calibrate}")
    import baco
    from baco.errors import CompilationError
    from baco.model.zoo import seeded_inputs
    t0 = time.perf_counter()
    model = build_model(args.torch, args.input_shape, args.seed)
    x = seeded_inputs(args.input_shape, 1, seed=args.seed + 1)[0]
    try:
        compiled = baco.compile_model(model, x, design=args.design, calibrate=args.calibrate)
    except CompilationError as e:        # located at the model's source line, with its caret
        print(f"baco build: {e}", file=sys.stderr)
        return 1
    gemmini = sum(layer.runs_on == "gemmini" for layer in compiled.layers)
    print(f"{args.torch}: {len(compiled.layers)} steps ({gemmini} on Gemmini, {len(compiled.layers) - gemmini} "
          f"on the CPU), {'design ' + args.design if args.design else 'default Gemmini and schedules'}")
    build = compiled.build_elf(args.elf, x)
    print(f"{build.elf}: {build.report()} ({time.perf_counter() - t0:.1f} s)")
    if not args.run:
        return 0
    from baco.codegen.program import run_program
    t1 = time.perf_counter()
    run = run_program(build, timing=True)
    print(f"ISS with the cycle model: {'bit-exact' if run.passed else 'MISMATCH'}, {run.total_cycles:,} cycles, "
          f"{run.gemmini_commands:,} RoCC commands ({time.perf_counter() - t1:.1f} s)")
    return 0 if run.passed else 1


if __name__ == "__main__":
    sys.exit(main())
