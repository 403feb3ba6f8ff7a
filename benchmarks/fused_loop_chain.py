"""The fused GEMM chain on the loop unit (Gemmini master's ext-spad commands; baco.kernels.fused_loops)
against the two layers run unfused, on the cycle model.

    python benchmarks/fused_loop_chain.py [--smoke]

Per chain Y = f2(f1(X·W1 + b1)·W2 + b2) (M x K -> H -> N): the fused program (per row block
spad_only LOOP_WSs over tiles of H leaving it in the scratchpad, then LOOP_WSs over tiles of Y
reading it there; up to 4 DIM x DIM blocks a loop) run on the
functional model and checked bit-exact against a numpy reference of Gemmini's arithmetic; its
stream and the unfused one (the C library's tiled_matmul, one LOOP_WS a tile, per layer: H stored to
DRAM as int8 and moved back in; baco.sim.clib.matmul_stream) timed end to end by the cycle model,
the CPU issuing each (baco.sim.clib.library_stream_cycles: its commands, the library's tile-loop
work per LOOP_WS, a fence per call), and Gemmini alone (no tile-loop work). Printed: both cycle
counts, their ratio (fused / unfused) and H's DRAM bytes saved (stored and moved back in). Chains: the demo MLP's (batch 64, 256-512-256-64) on a Gemmini whose scratchpad holds both
layers' weights (16x16, 512 KB scratchpad, 256 KB accumulator), the second also on Gemmini's
default sizes (the first's W1 and W2 fill its scratchpad), MobileNetV2's project -> 1x1
pairs without a residual add between (1x3x64x64: block 1's project 32->16 into block 2's expand
16->96 over 32x32 pixels, on Gemmini's default sizes; the other, the last project 960->320 into the
final 1x1 320->1280, does not fit: its W1 and W2 exceed the scratchpad). --smoke: the tests' 20-row 40-96-48-24 MLP. Exits 0 iff every fused
program is bit-exact.

Compiled (--compiled, or --compiled-only: these rows alone): the same chains as RISC-V programs on the ISS
with the cycle model attached (`kernel_cycles`: rdcycle around each launch's grid loop and fence, the
core issuing the commands), random data, each output checked against the numpy reference: the fused
chain as the compiler emits it on the ext-spad Gemmini (gemm_chain_launch: chain-loop-ws's
LOOP_WSs over each layer's tiles), the explicit fused chain (the same launch compiled for the Gemmini
without the ext-spad commands: linalg-to-instgem's stream, H read from the accumulator), and the
unfused pair (two matmul_launch at their default schedules: LOOP_WS; H to DRAM and back). Printed:
the three cycle counts and the loop form's ratios to the other two (--ragged: 13 chains of ragged
widths instead, M, K, H, N among 1-128, DIM 16 and 8). Measured: the loop form is
0.43-0.62 of the explicit chain's cycles on every chain; against the unfused pair 0.576 on
MobileNetV2's project -> expand (35565 vs 61720), 0.994 and 0.996 on the MLP layers on the 512 KB
Gemmini (71669 vs 72071, 41429 vs 41607) and 1.014 on the default one (42202 vs 41607).
Both MLP forms are execute-bound (the array's work is the same, ~69.7k cycles for 256-512-256), so
what differs is how long the execute unit idles. With one LOOP_WS a layer a row block (before) it
idled while the layer's bias rows moved in: LoopMatmul's execute FSM waits for all of its loop's
LdD (LoopMatmulExecute's ldd_ahead) and LdD goes before LdA/LdB, so the 64 x 512 layer's 128 bias
blocks (~8.6k cycles) and then layer 2's 64 (~5.4k) were not overlapped with any compute: 84447
vs 72079. Tiles of up to 4 blocks, two loops held, load one tile's bias while the other computes
(2 and 3 blocks a tile were slower: 99909 and 76034 on 256-512-256; 6 and 8: 72924, 72753). What
is left: each layer transition (config_st, which LoopMatmul passes on only once no loop is
configured, then the first tiles' bias and weights before any compute) costs ~400-700 cycles, as
the unfused pair's second launch does; the default Gemmini runs the chain as two 32-row programs
(the explicit fallback's 64 x 256 int32 hidden block does not fit its 64 KB accumulator), so four
transitions instead of two (the stream with both row blocks in one group: 41050 vs 41533 apart).
The stream rows' "CPU" column charges the C library's tile-loop work to every LOOP_WS (fitted to
tiled_matmul's), which the fused program's many small loops (MobileNetV2's: 12 a row block of 80
rows) do not run; its Gemmini-alone column is the comparison there.
predicted/loop: the tuner's model of the loop form (baco.gemmini.fused.gemm_chain_loop_ws_program_cycles:
the LoopMatmul walk over each layer's tiles as the compiler emits them) over the compiled program's
cycles on the ISS; measured 0.998, 0.997, 0.996 and 0.952 on the four chains (0.991 and 0.938 on
the last two before the walk's bias-row wait, below; the model of one LOOP_WS a layer, before the
tiles: 1.178, 1.109, 1.068, 1.007), 0.969-1.111 on the 13 ragged
chains (the highest, 1x65->96->33, a one-row program whose instructions the fit overstates by 9%;
0.904-1.111 before the walk's loops that move in neither A nor B, a chain's layer-2 tiles after
the first of a column group, waited for their bias rows: the walk was 14-18% low on Gemmini-alone
time where K or H is 17, now 0.90-1.065 of the cycle model on all 13).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from baco.gemmini.arith import acc_to_int8  # noqa: E402
from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.fused import gemm_chain_loop_ws_blocks, gemm_chain_loop_ws_program_cycles  # noqa: E402
from baco.kernels.fused import gemm_chain_launch  # noqa: E402
from baco.kernels.fused_loops import gemm_chain_loop_ws_stream, run_gemm_chain_loop_ws  # noqa: E402
from baco.kernels.matmul import matmul_launch  # noqa: E402
from baco.sim.clib import A_ADDR, B_ADDR, D_ADDR, library_stream_cycles, matmul_stream  # noqa: E402
from baco.sim.timing import TimingModel  # noqa: E402

DEFAULT = replace(GemminiConfig(), mvout_spad=True)
LARGE = replace(GemminiConfig.from_capacity(16, 512, 256), mvout_spad=True)
SCALE1, SCALE2 = 1 / 512, 1 / 256
# (name, M, K, H, N, Gemmini)
CHAINS = [("mlp 256-512-256", 64, 256, 512, 256, LARGE), ("mlp 512-256-64", 64, 512, 256, 64, LARGE),
          ("mlp 512-256-64", 64, 512, 256, 64, DEFAULT),
          ("mbv2 proj1 -> expand2", 1024, 32, 16, 96, DEFAULT)]
DIM8 = replace(GemminiConfig.from_capacity(8, 64, 64), mvout_spad=True)
# --ragged: widths among 1, 17, 33, 65, 96 and 128, DIM 16 and 8 (the model's check on ragged programs)
RAGGED = [(f"ragged DIM {cfg.dim}", M, K, H, N, cfg) for M, K, H, N, cfg in (
    (17, 33, 65, 17, DEFAULT), (65, 17, 33, 65, DEFAULT), (1, 65, 96, 33, DEFAULT), (33, 128, 17, 65, DEFAULT),
    (96, 96, 128, 1, DEFAULT), (128, 65, 33, 96, DEFAULT), (65, 128, 96, 17, DEFAULT), (17, 1, 128, 128, DEFAULT),
    (33, 96, 65, 128, DEFAULT), (128, 17, 17, 33, DEFAULT), (65, 33, 96, 17, DIM8), (33, 65, 17, 33, DIM8),
    (96, 17, 65, 65, DIM8))]
SMOKE = [("smoke 40-96-48", 20, 40, 96, 48, DEFAULT), ("smoke 96-48-24", 20, 96, 48, 24, DEFAULT)]
H_ADDR, W2_ADDR, D2_ADDR, Y_ADDR = 0xC0000000, 0xD0000000, 0xE0000000, 0xF0000000


def chain_data(M, K, H, N, seed=0):
    """Random operands (x, w1, b1, w2, b2) of a chain and the numpy reference of its output (f1 with
    ReLU, f2 without)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (M, K), dtype=np.int8)
    w1, w2 = rng.integers(-128, 128, (K, H), dtype=np.int8), rng.integers(-128, 128, (H, N), dtype=np.int8)
    b1, b2 = rng.integers(-20000, 20000, H, dtype=np.int32), rng.integers(-20000, 20000, N, dtype=np.int32)
    h = acc_to_int8(x.astype(np.int64) @ w1 + b1, SCALE1, True)
    return (x, w1, b1, w2, b2), acc_to_int8(h.astype(np.int64) @ w2 + b2, SCALE2, False)


def bit_exact(M, K, H, N, cfg, seed=0) -> bool:
    operands, ref = chain_data(M, K, H, N, seed)
    y = run_gemm_chain_loop_ws(*operands, scale1=SCALE1, scale2=SCALE2, relu1=True, config=cfg)
    return bool((y == ref).all())


def cycles(calls, cfg, tile_instructions=None) -> float:
    """End-to-end cycles of calls (stream factories) run one after another, the CPU issuing them
    with `tile_instructions` of tile-loop work before each LOOP_WS (the library's fitted count by
    default)."""
    tm = TimingModel(cfg)
    return sum(library_stream_cycles(call(), tm, tile_instructions) for call in calls)


def measure(name, M, K, H, N, cfg) -> dict:
    fused = [lambda: gemm_chain_loop_ws_stream(M, K, H, N, cfg, scale1=SCALE1, relu1=True, scale2=SCALE2,
                                               relu2=False, addrs=(A_ADDR, B_ADDR, D_ADDR, W2_ADDR, D2_ADDR, Y_ADDR))]
    unfused = [lambda: matmul_stream(M, H, K, cfg, out_int8=True, scale=SCALE1, relu=True, bias="repeating",
                                     addrs=(A_ADDR, B_ADDR, H_ADDR), d_addr=D_ADDR),
               lambda: matmul_stream(M, N, H, cfg, out_int8=True, scale=SCALE2, bias="repeating",
                                     addrs=(H_ADDR, W2_ADDR, Y_ADDR), d_addr=D2_ADDR)]
    out = dict(name=name, shape=f"{M}x{K}->{H}->{N}", gemmini=f"{cfg.dim}x{cfg.dim} {cfg.sp_kb:g}/{cfg.acc_kb:g} KB",
               blocks=gemm_chain_loop_ws_blocks(M, K, H, N, cfg), exact=bit_exact(M, K, H, N, cfg), h_bytes=2 * M * H)
    for key, instructions in (("cpu", None), ("alone", 0.0)):
        f, u = cycles(fused, cfg, instructions), cycles(unfused, cfg, instructions)
        out.update({f"fused_{key}": f, f"unfused_{key}": u, f"ratio_{key}": f / u})
    return out


def iss_cycles(launch) -> int:
    """kernel_cycles of a launch run as a RISC-V program on the ISS with the cycle model attached."""
    ck = launch.kernel.compile(*launch.args, target="iss", **launch.options)
    return ck.run(launch.grid, launch.runtime_args(), timing=TimingModel(launch.config))["kernel_cycles"]


def measure_compiled(name, M, K, H, N, cfg, seed=0) -> dict:
    """The compiled loop form, explicit fused chain and unfused pair on the ISS (module doc)."""
    (x, w1, b1, w2, b2), ref = chain_data(M, K, H, N, seed)
    out, exact = dict(name=name, shape=f"{M}x{K}->{H}->{N}", gemmini=f"{cfg.dim}x{cfg.dim} {cfg.sp_kb:g}/{cfg.acc_kb:g} KB"), True
    for key, config in (("loop", cfg), ("explicit", replace(cfg, mvout_spad=False))):
        launch = gemm_chain_launch(x, w1, b1, w2, b2, scale1=SCALE1, scale2=SCALE2, relu1=True, config=config)
        out[key] = iss_cycles(launch)
        exact &= bool((launch.y == ref).all())
    layer1 = matmul_launch(x, w1, bias=b1, out="int8", scale=SCALE1, relu=True, config=cfg)
    layer2 = matmul_launch(layer1.y, w2, bias=b2, out="int8", scale=SCALE2, config=cfg)
    out["unfused"] = iss_cycles(layer1) + iss_cycles(layer2)
    exact &= bool((layer2.y == ref).all())
    out["exact"] = exact
    out["predicted"] = gemm_chain_loop_ws_program_cycles(M, K, H, N, cfg)["cycles"]
    return out


def print_compiled(rows) -> None:
    print("compiled, on the ISS with the cycle model (kernel_cycles, the core issuing the commands)")
    print(f"{'chain':<24} {'shape':<18} {'gemmini':<18} {'exact':>5} {'loop form':>9} {'explicit':>9} {'unfused':>9} "
          f"{'loop/explicit':>13} {'loop/unfused':>12} {'predicted/loop':>14}")
    for r in rows:
        print(f"{r['name']:<24} {r['shape']:<18} {r['gemmini']:<18} {str(r['exact']):>5} {r['loop']:>9} "
              f"{r['explicit']:>9} {r['unfused']:>9} {r['loop'] / r['explicit']:>13.3f} {r['loop'] / r['unfused']:>12.3f}"
              f" {r['predicted'] / r['loop']:>14.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="the tests' small MLP only")
    ap.add_argument("--compiled", action="store_true", help="also the compiled programs on the ISS")
    ap.add_argument("--compiled-only", action="store_true", help="only the compiled programs on the ISS")
    ap.add_argument("--ragged", action="store_true", help="the ragged chains (RAGGED) instead of the four")
    args = ap.parse_args(argv)
    chains = SMOKE if args.smoke else RAGGED if args.ragged else CHAINS
    compiled = [measure_compiled(*c) for c in chains] if args.compiled or args.compiled_only else []
    if compiled:
        print_compiled(compiled)
    if args.compiled_only:
        return 0 if all(r["exact"] for r in compiled) else 1
    rows = [measure(*c) for c in chains]
    print("cycles end to end (the CPU issuing, the library's tile-loop work per LOOP_WS) | Gemmini alone "
          "(commands free, a fence per call)")
    print(f"{'chain':<24} {'shape':<18} {'gemmini':<18} {'rows x group':>12} {'exact':>5} {'fused':>8} {'unfused':>8} "
          f"{'ratio':>6} | {'fused':>8} {'unfused':>8} {'ratio':>6} {'H bytes saved':>13}")
    for r in rows:
        print(f"{r['name']:<24} {r['shape']:<18} {r['gemmini']:<18} {'%d x %d' % r['blocks']:>12} {str(r['exact']):>5} "
              f"{r['fused_cpu']:>8.0f} {r['unfused_cpu']:>8.0f} {r['ratio_cpu']:>6.3f} | {r['fused_alone']:>8.0f} "
              f"{r['unfused_alone']:>8.0f} {r['ratio_alone']:>6.3f} {r['h_bytes']:>13}")
    return 0 if all(r["exact"] for r in rows + compiled) else 1


if __name__ == "__main__":
    sys.exit(main())
