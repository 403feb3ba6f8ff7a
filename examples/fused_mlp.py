"""A fused two-layer MLP Y = relu(X·W1·s1)·W2·s2 as ONE @baco.jit kernel: the hidden
activations stay on chip as int8 between the layers.

    python examples/fused_mlp.py [--M 33] [--K 200] [--H 64] [--N 10] [--target sim|iss]
        [--block-m 32] [--block-k 64] [--double-buffer] [--dataflow WS|OS] [--elf out.elf]

Gemmini has no accumulator-to-scratchpad move, so the second dot reads the first
layer's int32 accumulator block directly as its A operand through the execute unit's
accumulator read path: config_ex's acc_scale and activation scale, ReLU and saturate
it to int8 on the way into the array (gemmini-isa.md: local address bit 31 set, bit 29
clear). No mvout or mvin touches the hidden layer: the command counts printed below
show the only mvouts are the output's. The hidden layer (H columns) must fit one block.

`--dataflow OS` (the form Spike models too): the first layer is one dot over the whole K,
summed in the array's PEs, and its int8 conversion `bl.relu(hidden * SHIFT_SCALE).to(bl.int8)`
has a constexpr power-of-two scale 2^-s. The OS computes of its last K step write the sum
rounding-shifted by s (config_ex's in_shift, round half to even), saturated to int8 and
ReLU'd straight into a scratchpad block (gemmini-isa.md §3.1-3.3), which the second dot
reads as an ordinary A operand: no mvout, no mvin, no accumulator rows for the hidden
layer. Limits: the whole K and the hidden width are one block each, the scale between the
layers is a power of two.

Checks the result bit for bit against a numpy reference of Gemmini's arithmetic and
exits 0 only when they agree; `--elf PATH` writes a self-checking bare-metal ELF
(runs on `baco sim`; in WS, Spike's Gemmini model reads operands from the scratchpad only,
gemmini-isa.md §8 note 4, so the chained accumulator read is an RTL/baco-model feature;
the OS form runs on Spike).
"""
import argparse
import sys

import numpy as np

import baco
import baco.language as bl
from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import as_config
from baco.gemmini.schedule import DATAFLOWS
from baco.kernels.arguments import exact_array, real_scalar


@baco.jit
def fused_mlp_kernel(x_ptr, w1_ptr, w2_ptr, y_ptr, M, K, H, N, scale1, scale2,
                     BLOCK_M: bl.constexpr, BLOCK_K: bl.constexpr, BLOCK_H: bl.constexpr,
                     BLOCK_N: bl.constexpr):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    x_blk = bl.make_block_ptr(x_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    w1_blk = bl.make_block_ptr(w1_ptr, shape=(K, H), strides=(H, 1), offsets=(0, 0),
                               block_shape=(BLOCK_K, BLOCK_H), order=(1, 0))
    hidden = bl.zeros((BLOCK_M, BLOCK_H), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BLOCK_K)):
        hidden += bl.dot(bl.load(x_blk, boundary_check=(0, 1)), bl.load(w1_blk, boundary_check=(0, 1)))
        x_blk = bl.advance(x_blk, (0, BLOCK_K))
        w1_blk = bl.advance(w1_blk, (BLOCK_K, 0))
    h = bl.relu(hidden * scale1).to(bl.int8)       # read from the accumulator by the next dot
    w2_blk = bl.make_block_ptr(w2_ptr, shape=(H, N), strides=(N, 1), offsets=(0, pid_n * BLOCK_N),
                               block_shape=(BLOCK_H, BLOCK_N), order=(1, 0))
    out = bl.zeros((BLOCK_M, BLOCK_N), dtype=bl.int32)
    out += bl.dot(h, bl.load(w2_blk, boundary_check=(0, 1)))
    y_blk = bl.make_block_ptr(y_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    bl.store(y_blk, (out * scale2).to(bl.int8), boundary_check=(0, 1))


@baco.jit(dataflow="OS")
def fused_mlp_os_kernel(x_ptr, w1_ptr, w2_ptr, y_ptr, M, K, H, N, scale2,
                        BLOCK_M: bl.constexpr, BLOCK_K: bl.constexpr, BLOCK_H: bl.constexpr,
                        BLOCK_N: bl.constexpr, SHIFT_SCALE: bl.constexpr):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    x_blk = bl.make_block_ptr(x_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    w1_blk = bl.make_block_ptr(w1_ptr, shape=(K, H), strides=(H, 1), offsets=(0, 0),
                               block_shape=(BLOCK_K, BLOCK_H), order=(1, 0))
    hidden = bl.zeros((BLOCK_M, BLOCK_H), dtype=bl.int32)
    hidden += bl.dot(bl.load(x_blk, boundary_check=(0, 1)), bl.load(w1_blk, boundary_check=(0, 1)))
    h = bl.relu(hidden * SHIFT_SCALE).to(bl.int8)   # written into the scratchpad by the array
    w2_blk = bl.make_block_ptr(w2_ptr, shape=(H, N), strides=(N, 1), offsets=(0, pid_n * BLOCK_N),
                               block_shape=(BLOCK_H, BLOCK_N), order=(1, 0))
    out = bl.zeros((BLOCK_M, BLOCK_N), dtype=bl.int32)
    out += bl.dot(h, bl.load(w2_blk, boundary_check=(0, 1)))
    y_blk = bl.make_block_ptr(y_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    bl.store(y_blk, (out * scale2).to(bl.int8), boundary_check=(0, 1))


def shift_scale(K):
    """The power of two 2^-s nearest 1/(64·sqrt(K)) (the WS form's first-layer scale)."""
    return 2.0 ** -round(np.log2(64 * np.sqrt(K)))


def blocks(M, K, H, N, block_m, block_k, dim):
    """Block sizes: the hidden and output widths rounded up to DIM (one block each)."""
    up = lambda v: -(-v // dim) * dim  # noqa: E731
    return dict(BLOCK_M=block_m, BLOCK_K=block_k, BLOCK_H=up(H), BLOCK_N=up(N))


def launch_args(x, w1, w2, y, scale1, scale2, block_m, block_k, dataflow, dim):
    """(kernel, grid, positional arguments, constexprs) of one launch."""
    M, K = x.shape
    H, N = w2.shape
    if dataflow == "OS":     # the whole K in one block: the first layer's sum stays in the array
        b = blocks(M, K, H, N, block_m, -(-K // dim) * dim, dim)
        return (fused_mlp_os_kernel, (bl.cdiv(M, block_m), 1), [x, w1, w2, y, M, K, H, N, float(scale2)],
                dict(b, SHIFT_SCALE=float(scale1)))
    return (fused_mlp_kernel, (bl.cdiv(M, block_m), 1),
            [x, w1, w2, y, M, K, H, N, float(scale1), float(scale2)], blocks(M, K, H, N, block_m, block_k, dim))


def fused_mlp(x, w1, w2, scale1, scale2, *, block_m=32, block_k=64, double_buffer=False, dataflow="WS",
              target="sim", config=None):
    """Y = (relu(X·W1 * scale1) as int8)·W2 * scale2 as int8, one kernel launch; (Y, launch info).
    dataflow="OS": scale1 must be a power of two and block_k is the whole K."""
    x, w1, w2 = (exact_array(v, name, np.int8, 2) for v, name in ((x, "x"), (w1, "w1"), (w2, "w2")))
    if w1.shape[0] != x.shape[1] or w2.shape[0] != w1.shape[1]:
        raise ValueError(f"w1 must be K x H and w2 H x N for x M x K: got x {x.shape}, w1 {w1.shape}, w2 {w2.shape}")
    scale1, scale2 = real_scalar(scale1, "scale1"), real_scalar(scale2, "scale2")
    for name, v in (("block_m", block_m), ("block_k", block_k)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if dataflow not in DATAFLOWS:
        raise ValueError(f"dataflow must be one of {DATAFLOWS}, not {dataflow!r}")
    shift = -np.log2(scale1) if 0 < scale1 < np.inf else np.nan
    if dataflow == "OS" and not (shift.is_integer() and 0 <= shift <= 31):      # config_ex's in_shift
        raise ValueError(f"scale1 must be a power of two 2^-s (0 <= s <= 31) in the OS form, got {scale1!r}")
    if not isinstance(double_buffer, bool):
        raise TypeError(f"double_buffer must be a bool, got {double_buffer!r}")
    config = as_config(config)
    y = np.zeros((x.shape[0], w2.shape[1]), np.int8)
    kernel, grid, args, b = launch_args(x, w1, w2, y, scale1, scale2, block_m, block_k, dataflow, config.dim)
    info = kernel[grid](*args, **b, target=target, config=config, double_buffer=double_buffer)
    return y, info


def reference(x, w1, w2, scale1, scale2):
    h = reference_matmul(x, w1, out="int8", scale=scale1, relu=True)
    return reference_matmul(h, w2, out="int8", scale=scale2, relu=False)


def command_counts(x, w1, w2, scale1, scale2, **kw):
    """Gemmini command counts of the fused kernel, from the ISS."""
    _, info = fused_mlp(x, w1, w2, scale1, scale2, target="iss", **kw)
    return {k: v for k, v in info["result"].stats.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--M", type=int, default=33)
    p.add_argument("--K", type=int, default=200)
    p.add_argument("--H", type=int, default=64)
    p.add_argument("--N", type=int, default=10)
    p.add_argument("--block-m", type=int, default=32)
    p.add_argument("--block-k", type=int, default=64)
    p.add_argument("--double-buffer", action="store_true", help="two homes per loaded block so loads overlap compute")
    p.add_argument("--dataflow", choices=["WS", "OS"], default="WS",
                   help="OS: the array writes the hidden layer into the scratchpad (power-of-two scale; runs on Spike)")
    p.add_argument("--target", choices=["sim", "iss"], default="sim")
    p.add_argument("--elf", help="also write a self-checking bare-metal ELF here")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    x = rng.integers(-128, 128, (args.M, args.K), dtype=np.int8)
    w1 = rng.integers(-128, 128, (args.K, args.H), dtype=np.int8)
    w2 = rng.integers(-128, 128, (args.H, args.N), dtype=np.int8)
    s1 = shift_scale(args.K) if args.dataflow == "OS" else 1 / (64 * np.sqrt(args.K))
    s2 = 1 / (64 * np.sqrt(args.H))
    kw = dict(block_m=args.block_m, block_k=args.block_k, double_buffer=args.double_buffer, dataflow=args.dataflow)
    y, info = fused_mlp(x, w1, w2, s1, s2, target=args.target, **kw)
    ref = reference(x, w1, w2, s1, s2)
    bad = int(np.count_nonzero(y != ref))
    print(f"fused MLP {args.M}x{args.K} -> {args.H} (relu, int8) -> {args.N} (int8) as one {args.dataflow} kernel on "
          f"{args.target}: {'bit-exact' if bad == 0 else f'{bad} MISMATCHES'}")
    counts = command_counts(x, w1, w2, s1, s2, **kw)
    print("  Gemmini commands: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    M, N = args.M, args.N
    where = "the scratchpad, written by the array" if args.dataflow == "OS" else "the accumulator"
    print(f"  mvout={counts.get('mvout', 0)}: the output's {-(-M // 16)}x{-(-N // 16)} tiles of DIM 16 only "
          f"(the {M}x{args.H} hidden layer never leaves {where})")
    if args.elf:
        _, grid, elf_args, _ = launch_args(x, w1, w2, np.zeros_like(ref), s1, s2, args.block_m, args.block_k,
                                           args.dataflow, 16)
        path = info["kernel"].build_elf(grid, elf_args, args.elf, expected={3: ref})
        print(f"  self-checking ELF: {path}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
