"""Command-line plumbing the kernel examples share (examples/matmul.py, gemv.py, resadd.py and
the convolutions): the Gemmini a kernel runs on, the int8 output epilogue, the verdict."""
import numpy as np

from baco.gemmini.config import GemminiConfig


def add_gemmini_arguments(parser):
    """Where the kernel runs and what is written: --target, --dim, --sp-kb, --acc-kb, --elf, --seed."""
    parser.add_argument("--target", choices=["sim", "iss"], default="sim")
    parser.add_argument("--dim", type=int, default=16, help="Gemmini array size (DIM)")
    parser.add_argument("--sp-kb", type=float, default=256)
    parser.add_argument("--acc-kb", type=float, default=64)
    parser.add_argument("--elf", help="also write a self-checking bare-metal ELF here")
    parser.add_argument("--seed", type=int, default=0)


def gemmini_config(args) -> GemminiConfig:
    return GemminiConfig.from_capacity(args.dim, args.sp_kb, args.acc_kb)


def add_output_arguments(parser, *, out: str, int8_scale: str, bias_help: str):
    """The output epilogue: --out, --scale (default `int8_scale` for int8), --relu, --bias."""
    parser.add_argument("--out", choices=["int8", "int32"], default=out)
    parser.add_argument("--scale", type=float, default=None, help=f"int8 output scale (default {int8_scale})")
    parser.add_argument("--relu", action="store_true")
    parser.add_argument("--bias", action="store_true", help=bias_help)


def output_scale(parser, args, int8_scale: float) -> float:
    """The scale of the output epilogue, rejecting what Gemmini cannot do."""
    if args.relu and args.out == "int32":
        parser.error("--relu needs --out int8 (Gemmini's full-width int32 mvout bypasses the activation)")
    return args.scale if args.scale is not None else (int8_scale if args.out == "int8" else 1.0)


def report(title: str, target: str, result, expected, info, write_elf=None) -> int:
    """Print the verdict of a run (`title` on `target`: bit-exact or the mismatch count), its
    command/instruction counts and, when `write_elf` is given, the self-checking ELF it writes;
    the exit code: 0 iff bit-exact."""
    bad = int(np.count_nonzero(result != expected))
    print(f"{title} on {target}: {'bit-exact' if bad == 0 else f'{bad} MISMATCHES'}")
    if isinstance(info, dict):
        print("  " + ", ".join(f"{k}={v}" for k, v in info.items() if k in ("commands", "instructions", "programs")))
    if write_elf:
        print(f"  self-checking ELF: {write_elf()}")
    return 0 if bad == 0 else 1
