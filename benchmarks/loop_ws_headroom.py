"""How far a LOOP_WS program can beat the C library's on kernels.py's GEMM/GEMV shapes (issue K's
1.3x geomean goal), shape by shape: kernels.py's tile floor beside a floor of the LOOP_WS programs
baco and the library both run, and where baco's cycles go.

    python benchmarks/loop_ws_headroom.py [--dims 16] [--shapes MxNxK ...] [--no-e2e] [--smoke]

kernels.py's tile floor (--bound-only, the "bound" column) lets every DMA request carry up to
MAX_BLOCK_LEN·DIM contiguous elements of an operand and, for a GEMV (N = 1), of C: it treats A
(and B, and a GEMV's C) as one run. A LOOP_WS program of C = A·B cannot: LoopMatmul's LdA moves A's
DRAM rows (a request never crosses a row of A, K elements), LdB B's rows (N elements), StC C's rows
from accumulator rows of at most DIM int32 columns (a GEMV's C is M requests of 4 bytes, DIM rows a
mvout); and an output block's K blocks accumulate into the same accumulator rows, one after the
other, each compute waiting for the previous one's results to leave the array's pipeline
(TimingConstants.accumulating_spacing: its feed + array_depth_factor·DIM cycles). The LOOP_WS
floor is kernels.py's tile floor with those terms (floor_terms' load, execute, store, with A in M
runs, B in K runs, C in M runs; the execute term at least first data + the accumulation chain of
the largest output block + the array's depth + the last mvout, the store term at least first data +
the smallest compute + the array's depth + C's moves); each LOOP_WS floor is checked to lie below
baco's and the library's programs on Gemmini alone. First data: a compute needs A rows and a B
block in the scratchpad, two DMA commands (from two DRAM windows) on the one load unit, each
occupying it at least dma_cmd_overhead + dram_latency (TimingModel._dma's in-flight term), then the
second's latency. The largest block's chain: every output block's K blocks accumulate into its rows
one after the other, a LOOP_WS's blocks are DIM rows but the last, and LOOP_WSs over fewer rows run
their chains one loop after the other (the execute FSM works on the oldest loop), so no LOOP_WS
program of the shape has a shorter chain than ⌈K/DIM⌉ computes of min(M, DIM) rows (20x1x179 at
DIM 16: 12 of 16 rows, 49 cycles apart, not the 4-row block's 37).

Printed per shape: baco's default blocks, baco's cycles on Gemmini alone and end to end (the ISS
with the cycle model, rdcycle around the kernel, as kernels.py), the CPU cycles end to end adds
("exposed"), the library's (kernels.py's columns), speed-ups; the tile floor's and the LOOP_WS
floor's largest speed-up over the library end to end; the LOOP_WS floor's binding term; per DIM
the geomeans. Then per DIM the same runs against the ideal (ideal(): MACs at DIM² a cycle, or the
bytes A, B and C must move at the modelled DMA bandwidth, whichever is more), each program's
fraction of it (library and baco, Gemmini alone and end to end), baco's cycles above it ("gap"),
and what geomean over the library every program at its ideal with no CPU would reach.
"""
import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from kernels import (LIBRARY_TILE, SMOKE_SHAPES, baco_end_to_end, checked_floor, dma_floor,  # noqa: E402
                     gemm_floor, sampled_shapes, time_baco)
from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.isa import MIN_FEED_ROWS  # noqa: E402
from baco.gemmini.schedule import default_gemm_schedule  # noqa: E402
from baco.sim.clib import time_matmul  # noqa: E402
from baco.sim.timing import DEFAULT_CONSTANTS  # noqa: E402


def loop_ws_floor(M: int, N: int, K: int, cfg: GemminiConfig, out_int8: bool, k=DEFAULT_CONSTANTS) -> dict:
    """kernels.gemm_floor's tile floor terms raised to what a LOOP_WS program of C = A·B must pay
    (module docstring): A moved in M runs of K, B in K runs of N, C out in M runs; the largest output
    block's ceil(K/DIM) computes spaced by accumulating_spacing before the last mvout."""
    d = cfg.dim
    terms = dict(gemm_floor(M, N, K, cfg, out_int8, tiles=True))
    sp_cols = cfg.max_block_len * d
    first_data = 1 + 2 * (k.dma_cmd_overhead + k.dram_latency) + k.dram_latency     # an A and a B command
    last_mvout = k.dma_cmd_overhead + 2 * k.dram_latency + (0.0 if out_int8 else k.acc_scale_latency)
    depth = k.array_depth_factor * d
    load = 1 + dma_floor(M * K, cfg.input_bytes, sp_cols, cfg, runs=M, k=k) + \
        dma_floor(K * N, cfg.input_bytes, sp_cols, cfg, runs=K, k=k) + k.dram_latency + last_mvout
    kb = -(-K // d)
    feed = max(min(M, d), MIN_FEED_ROWS) + k.compute_overhead       # the largest output block's compute
    chain = (kb - 1) * k.accumulating_spacing(0.0, feed, d) + feed
    execute = first_data + chain + depth + last_mvout
    elements, elem_bytes, cols = (M * N, cfg.input_bytes, sp_cols) if out_int8 else (M * N, cfg.acc_bytes, d)
    store = first_data + MIN_FEED_ROWS + k.compute_overhead + depth + \
        dma_floor(elements, elem_bytes, cols, cfg, not out_int8, runs=M, k=k) + k.dram_latency
    return {"load": max(terms["load"], load), "execute": max(terms["execute"], execute),
            "store": max(terms["store"], store)}


def ideal(M: int, N: int, K: int, cfg: GemminiConfig, out_int8: bool, k=DEFAULT_CONSTANTS) -> dict:
    """The ideal of C[M×N] = A[M×K]·B[K×N] on `cfg`, any program and no CPU: `compute`, its MACs at
    DIM² a cycle (the array's peak), and `dram`, the fewest bytes it must move (A and B in once, C
    out once, int32 or int8) at the modelled bandwidth (a bus beat of dma_bus_bits every beat_cycles;
    the cycle model's loader and storer are separate units, so the larger of the two); `cycles`
    the larger of those."""
    per_cycle = cfg.dma_bus_bits / 8 / k.beat_cycles
    load = (M * K + K * N) * cfg.input_bytes
    store = M * N * (cfg.input_bytes if out_int8 else cfg.acc_bytes)
    compute = M * N * K / cfg.dim ** 2
    dram = max(load, store) / per_cycle
    return {"compute": compute, "dram": dram, "cycles": max(compute, dram)}


def ideal_table(dim: int, rows: list) -> None:
    """Per shape the library's and baco's cycles (Gemmini alone, end to end) beside the ideal
    (ideal()), each as its fraction of the ideal; per DIM the geomeans of baco end to end over the
    library's and of the library's end to end over the ideal (what baco could reach with no CPU and
    every program at its ideal)."""
    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    print(f"DIM {dim}: against the ideal (MACs / DIM^2, and the bytes A, B in and C out once at "
          f"{DEFAULT_CONSTANTS.beat_cycles:g} cycle a {GemminiConfig().dma_bus_bits // 8}-byte beat); "
          f"fraction = ideal / cycles")
    print(f"{'M':>5} {'N':>5} {'K':>5}  {'compute':>10} {'DRAM':>10} {'bound':>7}  {'library':>10} {'e2e':>10} "
          f"{'baco':>10} {'e2e':>10}  {'lib':>5} {'e2e':>5} {'baco':>5} {'e2e':>5}  {'gap e2e':>8}")
    for r in rows:
        i = r["ideal"]
        frac = [i["cycles"] / r[key] for key in ("lib", "lib_e2e", "baco", "baco_e2e") if r[key]]
        e2e = f"{r['baco_e2e']:>10,}" if r["baco_e2e"] else f"{'':>10}"
        gap = r["baco_e2e"] or r["baco"]
        print(f"{r['M']:>5} {r['N']:>5} {r['K']:>5}  {i['compute']:>10,.0f} {i['dram']:>10,.0f} "
              f"{'compute' if i['compute'] >= i['dram'] else 'DRAM':>7}  {r['lib']:>10,.0f} {r['lib_e2e']:>10,.0f} "
              f"{r['baco']:>10,.0f} {e2e}  " + " ".join(f"{f:>5.3f}" for f in frac) +
              f"  {gap - i['cycles']:>8,.0f}")
    ours = [r["lib_e2e"] / (r["baco_e2e"] or r["baco"]) for r in rows]
    bound = [r["lib_e2e"] / r["ideal"]["cycles"] for r in rows]
    print(f"DIM {dim}, {len(rows)} shapes: baco / library end to end geomean {geo(ours):.3f}x; every program at "
          f"its ideal with no CPU {geo(bound):.3f}x; baco's fraction of the ideal (geomean) "
          f"{geo([(r['ideal']['cycles'] / (r['baco_e2e'] or r['baco'])) for r in rows]):.3f}, the library's "
          f"end to end {geo([r['ideal']['cycles'] / r['lib_e2e'] for r in rows]):.3f}\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dims", type=int, nargs="+", default=[16])
    p.add_argument("--shapes", nargs="+", metavar="MxNxK", help="these shapes instead of kernels.py's 21")
    p.add_argument("--no-e2e", action="store_true", help="without baco's end-to-end run on the ISS")
    p.add_argument("--smoke", action="store_true", help="kernels.py's two smoke shapes at DIM 16")
    args = p.parse_args(argv)
    shapes = [(512, 512, 512)] + sampled_shapes(20, 0)
    if args.smoke:
        shapes, args.dims = SMOKE_SHAPES, [16]
    elif args.shapes:
        shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes]
    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    for dim in args.dims:
        cfg = GemminiConfig.from_capacity(dim, 256, 64)
        print(f"DIM {dim}, int32 output: cycles on Gemmini alone and end to end; bounds = library end to end / "
              f"floor (no CPU)")
        print(f"{'M':>5} {'N':>5} {'K':>5}  {'baco blocks':>12} {'alone':>10} {'e2e':>10} {'exposed':>7}  "
              f"{'library':>10} {'e2e':>10}  {'e2e x':>6}  {'tile bound':>10} {'LOOP_WS floor':>13} {'binding':>8} "
              f"{'bound':>6}")
        rows, table = [], []
        for M, N, K in shapes:
            s = default_gemm_schedule(M, N, K, cfg, False)
            ours = time_baco(M, N, K, cfg, False, s)["cycles"]
            e2e = None if args.no_e2e else baco_end_to_end(M, N, K, cfg, False, s)["kernel_cycles"]
            lib = time_matmul(M, N, K, cfg)["cycles"]
            lib_e2e = time_matmul(M, N, K, cfg, cpu_tile_instructions=LIBRARY_TILE)["cycles"]
            tile = checked_floor(gemm_floor(M, N, K, cfg, False, tiles=True), f"{M}x{N}x{K}", baco=ours, library=lib)
            terms = loop_ws_floor(M, N, K, cfg, False)
            floor = checked_floor(terms, f"{M}x{N}x{K} (LOOP_WS)", baco=ours, library=lib)
            rows.append((lib_e2e / e2e if e2e else lib / ours, lib_e2e / tile, lib_e2e / floor))
            table.append(dict(M=M, N=N, K=K, lib=lib, lib_e2e=lib_e2e, baco=ours, baco_e2e=e2e,
                              ideal=ideal(M, N, K, cfg, False)))
            e2e_text = f"{e2e:>10,} {e2e - ours:>7,.0f}" if e2e else f"{'':>10} {'':>7}"
            print(f"{M:>5} {N:>5} {K:>5}  {f'{s.block_m}/{s.block_n}/{s.block_k}':>12} {ours:>10,.0f} {e2e_text}  "
                  f"{lib:>10,.0f} {lib_e2e:>10,.0f}  {rows[-1][0]:>5.2f}x  {rows[-1][1]:>9.2f}x {floor:>13,.0f} "
                  f"{max(terms, key=terms.get):>8} {rows[-1][2]:>5.2f}x", flush=True)
        got, tile_b, ws_b = zip(*rows)
        print(f"DIM {dim}, {len(rows)} shapes: baco {'end to end' if not args.no_e2e else 'alone'} geomean "
              f"{geo(got):.3f}x; the largest speed-up a program can have end to end (no CPU): tile floor "
              f"{geo(tile_b):.3f}x, LOOP_WS floor {geo(ws_b):.3f}x\n")
        ideal_table(dim, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
