"""A quantized 3-layer MLP on Gemmini: every layer is the GEMM kernel of
examples/matmul.py with an int8 output (scale, ReLU on the hidden layers),
so activations stay int8 between layers as on the accelerator.

    python examples/mlp.py [--batch 33] [--sizes 200 256 128 10] [--target sim|iss]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import matmul as mm  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=33)
    p.add_argument("--sizes", type=int, nargs="+", default=[200, 256, 128, 10])
    p.add_argument("--target", choices=["sim", "iss"], default="sim")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    x = rng.integers(-128, 128, (args.batch, args.sizes[0]), dtype=np.int8)
    expected = x
    layers = list(zip(args.sizes, args.sizes[1:]))
    ok = True
    for i, (fan_in, fan_out) in enumerate(layers):
        w = rng.integers(-128, 128, (fan_in, fan_out), dtype=np.int8)
        last = i == len(layers) - 1
        opts = dict(out="int8", scale=1 / (64 * np.sqrt(fan_in)), relu=not last, block=(32, 64, 64))
        x, info = mm.matmul(x, w, target=args.target, **opts)
        expected = mm.reference(expected, w, **opts)
        same = np.array_equal(x, expected)
        ok &= same
        print(f"layer {i}: {args.batch}x{fan_in} @ {fan_in}x{fan_out}{' + relu' if not last else ''} "
              f"-> int8, {info['commands']} Gemmini commands, {'bit-exact' if same else 'MISMATCH'}")
    print(f"logits of sample 0: {x[0].tolist()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
