"""`baco opt`: run the pipeline, or a range of its stages, on a text IR file."""
from __future__ import annotations

import argparse
import sys

from baco.inputs import input_name, read_text
from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.options import CompileOptions
from baco.passes.pipeline import STAGES, run_pipeline


def options_from_args(args) -> CompileOptions:
    return CompileOptions.of(config=config_from_args(args), dataflow=args.dataflow, double_buffer=args.double_buffer)


def config_from_args(args) -> GemminiConfig:
    if getattr(args, "config", None):
        return GemminiConfig.load(args.config)
    if getattr(args, "dim", None):
        return GemminiConfig.from_capacity(args.dim, args.sp_kb, args.acc_kb)
    return GemminiConfig()


def add_config_args(p: argparse.ArgumentParser):
    p.add_argument("--config", help="GemminiConfig JSON file")
    p.add_argument("--dim", type=int, help="array dimension (with --sp-kb/--acc-kb)")
    p.add_argument("--sp-kb", type=float, default=256)
    p.add_argument("--acc-kb", type=float, default=64)
    p.add_argument("--dataflow", choices=["WS", "OS"], default="WS")
    p.add_argument("--double-buffer", action="store_true", help="two homes per loop block (the prefetch schedule)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="baco opt", description=__doc__)
    p.add_argument("input", nargs="?", help="MLIR text file ('-' for stdin)")
    p.add_argument("-o", "--output", default="-")
    p.add_argument("--pass", dest="one", choices=list(STAGES), help="run only this stage")
    p.add_argument("--from", dest="start", choices=list(STAGES), help="first stage (default: the first)")
    p.add_argument("--to", dest="until", choices=list(STAGES), help="last stage (default: the last)")
    p.add_argument("--list", action="store_true", help="list the stages")
    add_config_args(p)
    args = p.parse_args(argv)
    if args.list:
        print("\n".join(STAGES))
        return 0
    if args.input is None:
        p.error("an input file is required (or --list)")
    if args.one and (args.start or args.until):
        p.error("--pass runs one stage; it cannot be combined with --from/--to")
    text = read_text(args.input)
    start, until = (args.one, args.one) if args.one else (args.start, args.until)
    try:
        res = run_pipeline(text, options_from_args(args), start=start, until=until)
    except CompilationError as e:
        print(f"baco opt: {e.in_file(input_name(args.input))}", file=sys.stderr)
        return 1
    out = str(res.module)
    if args.output == "-":
        print(out)
    else:
        with open(args.output, "w") as f:
            f.write(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
