"""`make demo`: one GEMM through the whole compiler on both targets.

Compiles the @baco.jit GEMM kernel of examples/matmul.py, runs it on the
host-JIT Gemmini model (`sim`) and as a RISC-V ELF on the built-in ISS
(`iss`), checks both bit for bit against the Gemmini-arithmetic reference,
and writes every compiler stage's IR to ./ir_dump (BACO_DUMP_IR)."""
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "ir_dump"
os.environ.setdefault("BACO_DUMP_IR", str(DUMP))
sys.path.insert(0, str(ROOT / "examples"))

import matmul as mm  # noqa: E402


def main() -> int:
    M, N, K = 100, 70, 300
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    opts = dict(out="int8", scale=1 / 64, relu=True, block=(32, 32, 64), dataflow="WS")
    ref = mm.reference(a, b, **opts)
    ok = True
    print(f"GEMM {M}x{N}x{K}, int8 in, int32 accumulate, int8 out (scale 1/64, ReLU), "
          f"blocks {opts['block']}, weight-stationary, DIM 16")
    for target in ("sim", "iss"):
        c, info = mm.matmul(a, b, target=target, **opts)
        bad = int(np.count_nonzero(c != ref))
        ok &= bad == 0
        line = f"  {target:4s}: {'bit-exact' if bad == 0 else f'{bad} mismatches'}; " \
               f"{info['commands']} Gemmini commands"
        if target == "iss":
            line += f", {info['instructions']} RISC-V instructions"
        print(line)
        kernel = info["kernel"]
    print("  compile stages (s): " + ", ".join(f"{k} {v:.3f}" for k, v in kernel.stage_seconds.items()))
    print(f"  IR of every stage: {DUMP}/ ({len(list(DUMP.glob('*')))} files)")
    elf = ROOT / "out" / "matmul_100x70x300.elf"
    elf.parent.mkdir(exist_ok=True)
    mm.write_elf(elf, a, b, ref, **opts)
    print(f"  self-checking ELF: {elf}  (run: .venv/bin/baco sim {elf.relative_to(ROOT)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
