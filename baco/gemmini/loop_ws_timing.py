"""LoopMatmul's timing as the cycle model runs it, in closed form: one pure walk over a stream of
LOOP_WS tiles (the C library's tiled_matmul_auto tiles, or the K steps of the programs baco's GEMM
kernel compiles to, one LOOP_WS a step: baco.passes.loop_ws), so that the tuner's models
(baco.tuner.kernel_model) price both programs the same way. Pure Python: imports only baco.gemmini.

A stream is a list of (item, how many times in a row); an item is a tile or a stream. A tile is
(I, pad_i, J, pad_j, Kb, pad_k, stores_c, moves_a, moves_b, explicit_b): one LOOP_WS of I x J
output blocks over Kb K blocks (pads: the elements past the matrix in the last block of each),
storing C or not, moving A and B in itself or not, and explicit_b > 0 when B's explicit_b rows are
moved in by raw mvins just before it (they wait for the loop unit to drain)."""
from __future__ import annotations

import functools

from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_matmul_auto
from baco.gemmini.isa import CONCURRENT_LOOPS, MIN_FEED_ROWS
from baco.gemmini.schedule import dma_cycles
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS


def library_matmul_tiles(M: int, N: int, K: int, cfg: GemminiConfig) -> list:
    """The stream of the C library's tiled_matmul_auto (baco.sim.clib.matmul_stream): one LOOP_WS a
    tile in tiled_matmul_outer's order (i, j, k), C stored by the last k tile, A (B) moved in unless
    the library keeps it in the scratchpad across tiles (tiled_matmul_outer's reuse, when its tiles
    along the other dimension times those along K are at most two)."""
    d = cfg.dim
    ti, tj, tk = tiled_matmul_auto(M, N, K, cfg, "WS")
    mb, nb, kb = -(-M // d), -(-N // d), -(-K // d)
    I0, J0, K0 = -(-mb // ti), -(-nb // tj), -(-kb // tk)
    a_reuse, b_reuse = I0 * K0 <= 2, J0 * K0 <= 2
    out = []
    for i0 in range(I0):
        I = min(ti, mb - i0 * ti)
        pad_i = (i0 * ti + I) * d - M if i0 == I0 - 1 else 0
        for j0 in range(J0):
            J = min(tj, nb - j0 * tj)
            pad_j = (j0 * tj + J) * d - N if j0 == J0 - 1 else 0
            for k0 in range(K0):
                Kb = min(tk, kb - k0 * tk)
                pad_k = (k0 * tk + Kb) * d - K if k0 == K0 - 1 else 0
                out.append(((I, pad_i, J, pad_j, Kb, pad_k, k0 == K0 - 1, not (a_reuse and j0),
                             not (b_reuse and i0), 0), 1))
    return out


def _extents(n: int, block: int) -> list[tuple[int, int]]:
    """[(extent, how many)] of the blocks of n elements cut into `block`s, in order (the last short)."""
    full, last = divmod(n, block)
    return ([(block, full)] if full else []) + ([(last, 1)] if last else [])


def program_matmul_tiles(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, dim: int) -> list:
    """The stream of baco's GEMM kernel compiled to LOOP_WS (baco.passes.loop_ws) with (block_m,
    block_n, block_k) blocks on a dim-wide Gemmini, programs in the order the host runs the grid
    (program_id 0, the row blocks, innermost). A program is one LOOP_WS a K step (its I x J blocks
    and the step's K blocks; A and B moved in by the loop unit; C stored by the last step); a step
    whose K is ragged (not whole DIM blocks) and at least DIM is two LOOP_WSs, its first K % DIM
    columns as one padded block, then its whole blocks; one shorter than DIM has its B moved in
    explicitly before its LOOP_WS. M, N, K >= 1 (a program whose loop runs no step is not modelled)."""
    bm, bn, bk = min(block_m, M), min(block_n, N), min(block_k, K)
    steps = []
    for extent, count in _extents(K, bk):
        ragged = extent % dim
        loops = [(extent // dim, 0, 0)] if not ragged else \
            [(1, dim - ragged, 0), (extent // dim, 0, 0)] if extent >= dim else [(1, dim - ragged, extent)]
        steps.append((loops, count))
    columns = []
    for cols, n_count in _extents(N, bn):
        J = -(-cols // dim)
        programs = []
        for rows, m_count in _extents(M, bm):
            I = -(-rows // dim)
            tile = lambda Kb, pad_k, b, last: ((I, I * dim - rows, J, J * dim - cols, Kb, pad_k, last, True,  # noqa: E731
                                                not b, b), 1)
            body = [([tile(*loop, False) for loop in loops], count) for loops, count in steps]
            (loops, count) = steps[-1]      # the last step stores C
            last = [tile(*loop, i == len(loops) - 1) for i, loop in enumerate(loops)]
            body = body[:-1] + ([(body[-1][0], count - 1)] if count > 1 else []) + [(last, 1)]
            programs.append((body, m_count))
        columns.append((programs, n_count))
    return columns


def loop_ws_stream_cycles(stream: list, cfg: GemminiConfig, *, out_int8: bool = True) -> float:
    """Cycles of a stream of LOOP_WS tiles as the cycle model times LoopMatmul's commands.

    LoopMatmul holds two loops (slots alternating, each with its own scratchpad half; the
    accumulator halves alternate with each output tile stored). Per tile its loads (B's first chunk
    and A's blocks in step; one DMA engine; B always DIM rows a block) start once its slot is free
    (the loop before last has issued everything: its computes but the last rs_ex / 2 pairs, its
    stores but the last rs_st), the loader is done with the previous tile, and the computes of the
    tile before last (same half) are done. Its computes (k, j, i order, the weight block preloaded
    at i = 0, a row a cycle with a MIN_FEED_ROWS floor plus the compute overhead, a k step no faster
    than the accumulator rows come back through the array) start once its first B block and A rows
    are in, the previous tile's computes are done and the stores of the output tile before last
    (same accumulator half) have read it; its stores once the rows have left the array. A run of
    identical items reaches a periodic regime (two slots, two halves): once every time has moved by
    the same delta over two items, or not at all (the stores' times under a program's K steps, which
    then never bind again), the run's remaining pairs are skipped (each moves them by it)."""
    k = DEFAULT_CONSTANTS
    lat, depth = k.dram_latency, k.array_depth_factor * cfg.dim
    setup = 6       # config_ex, config_st and three config_ld, one dispatch a cycle, before the first mvin

    # the walk's state: ld_end, ex_end, st_end, computes done per scratchpad half (loop slot), the
    # slot's last loop has issued everything, (first, last) store of each accumulator half
    LD, EX, ST, COMPUTED, FREED, READ = 0, 1, 2, 3, 3 + CONCURRENT_LOOPS, 3 + 2 * CONCURRENT_LOOPS
    ISSUED = READ + 4       # the loops' FSMs have issued their last command
    st = [0.0] * (ISSUED + 1)
    count = [0, 0]          # loops issued, output tiles stored

    def step(t):
        Kb, J, I = t[4], t[2], t[0]
        explicit, loads, first_in, compute, stores, first_rows, first_ready, first_group = _tile_times(cfg, out_int8, t)
        slot, acc = count[0] % CONCURRENT_LOOPS, READ + 2 * (count[1] % 2)
        ld_start = max(setup, st[FREED + slot], st[LD], st[COMPUTED + slot])
        if explicit:            # raw mvins wait for the loop unit to drain
            ld_start = max(ld_start, st[ISSUED]) + explicit
        st[LD] = ld_start + loads
        ex_start = max(st[EX], ld_start + first_in, st[acc])
        st[EX] = ex_end = max(ex_start + compute, ld_start + first_group, st[LD] + lat + first_rows, st[acc + 1])
        st[COMPUTED + slot] = ex_end
        st[FREED + slot] = max(ex_start + 2, ex_end + depth - compute / (Kb * J * I) * (cfg.rs_ex // 2))
        st[ISSUED] = max(st[ISSUED], st[FREED + slot])
        if stores:
            st_start = max(st[ST], ex_end - compute + first_ready)
            st[ST] = max(st_start + sum(stores), ex_end + depth + stores[-1])
            st[acc], st[acc + 1] = st_start + stores[0], st[ST]
            held = len(stores) - cfg.rs_st
            st[FREED + slot] = max(st[FREED + slot], st_start + (sum(stores[:held]) + lat if held > 0 else len(stores)))
            count[1] += 1
        count[0] += 1

    def walk(item):
        if isinstance(item, tuple):
            step(item)
            return
        for child, times in item:
            previous, done = None, 0
            while done < times:
                walk(child)
                done += 1
                if done % 2 or done < 4:
                    continue
                if previous is not None and times - done >= 2:
                    delta = st[LD] - previous[0][LD]
                    if all(abs(a - b - delta) < 1e-6 or a == b for a, b in zip(st, previous[0])):
                        periods = (times - done) // 2
                        st[:] = [v + delta * periods for v in st]
                        count[:] = [c + (c - p) * periods for c, p in zip(count, previous[1])]
                        done += 2 * periods
                previous = (list(st), list(count))

    walk(stream)
    return max(st[ST] + lat, st[EX] + depth)


@functools.lru_cache(maxsize=4096)
def _tile_times(cfg: GemminiConfig, out_int8: bool, t: tuple) -> tuple:
    """One LOOP_WS tile `t` (loop_ws_stream_cycles says what it holds), times relative to its loads'
    start: (explicit B loads, the loop's loads' occupancy, first compute, the computes' span, the
    store occupancies, one compute's rows, first store's block done, first group's end)."""
    I, pad_i, J, pad_j, Kb, pad_k, stores_c, moves_a, moves_b, explicit_b = t
    k = DEFAULT_CONSTANTS
    d, mbl = cfg.dim, cfg.max_block_len
    lat, depth = k.dram_latency, k.array_depth_factor * d
    c_bytes, store_blocks = (cfg.input_bytes, mbl) if out_int8 else (cfg.acc_bytes, 1)

    def dma(rows, row_bytes):
        return dma_cycles(rows, row_bytes, cfg)

    def chunks(blocks, pad, width):
        """Elements per row of each `width`-block chunk of a row of `blocks` blocks (last one padded)."""
        return [min(width, blocks - c) * d - (pad if c + width >= blocks else 0) for c in range(0, blocks, width)]

    def rows(i, blocks, pad):
        return d - (pad if i == blocks - 1 else 0)

    a_loads = [dma(rows(i, I, pad_i), cols) for cols in chunks(Kb, pad_k, mbl) for i in range(I)] * moves_a
    b_loads = [dma(d, cols) for _ in range(Kb) for cols in chunks(J, pad_j, mbl)] * moves_b
    explicit = sum(dma(explicit_b, cols) for cols in chunks(J, pad_j, mbl)) if explicit_b else 0.0
    arrive = lat if a_loads or b_loads else 0.0
    first_in = max(sum(b_loads[:1]) + arrive + d, sum(b_loads[:1] + a_loads[:1]) + arrive)
    per_i = [max(rows(i, I, pad_i), MIN_FEED_ROWS) + k.compute_overhead for i in range(I)]
    group = sum(per_i[:-1]) + max(per_i[-1], d)
    k_step = max(J * group, per_i[0] + depth)
    compute = (Kb - 1) * k_step + J * group - max(0, d - per_i[-1])
    stores = tuple(dma(rows(i, I, pad_i), cols * c_bytes) + k.acc_scale_latency
                   for cols in chunks(J, pad_j, store_blocks) for i in range(I)) if stores_c else ()
    first_ready = compute - (J - min(store_blocks, J)) * group - group + per_i[0] + depth
    first_group = sum(b_loads[:1] + a_loads[:I]) + arrive + per_i[-1] + compute - group
    return explicit, sum(a_loads) + sum(b_loads), first_in, compute, stores, per_i[0], first_ready, first_group
