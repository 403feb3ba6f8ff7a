"""The LoopConv walk of baco.gemmini.loop_conv_timing taken one step at a time: every LOOP_CONV_WS
tile of the sequence walked, none extrapolated (the walk as it was before runs of repeated tiles
and channel blocks were skipped once periodic). tests/test_loop_conv_timing_reference.py checks
the fast walk against it.

It shares the cost model's facts with the module (_tile_costs: one tile's loads, computes and
stores), not its algorithm: the step below is the module's docstring as it was written out tile
by tile. A change to how a tile advances the walk is made here too."""
from __future__ import annotations

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import CONCURRENT_LOOPS
from baco.gemmini.loop_conv_timing import _tile_costs
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS

# the walk's state: loader, execute and store ends; computes done per scratchpad half (2); a slot's
# last loop has issued everything (2); (first, last) store per accumulator half (2 x 2)
LD, EX, ST, COMPUTED, FREED, READ = 0, 1, 2, 3, 5, 7


def stream_cycles(tiles, cfg: GemminiConfig, *, dilation: int = 1, downsample: int = 0, out_int8: bool = True,
                  halves=None, bias: bool = False) -> float:
    """loop_conv_stream_cycles, each tile walked."""
    k = DEFAULT_CONSTANTS
    st = [0.0] * 11
    out_tiles = 0
    for n, t in enumerate(tiles):
        costs = _tile_costs(cfg, dilation, downsample, out_int8, bias, *t)
        out_tiles += _walk_tile(st, costs, cfg, slot=n % CONCURRENT_LOOPS,
                                half=n % CONCURRENT_LOOPS if halves is None else halves[n],
                                out_half=out_tiles % 2, zero_fills=t[9])
    return max(st[ST] + k.dram_latency, st[EX] + k.array_depth_factor * cfg.dim)


def _walk_tile(st: list, costs: tuple, cfg: GemminiConfig, *, slot: int, half: int, out_half: int,
               zero_fills: bool) -> int:
    """One tile of `costs` in loop `slot`, reading scratchpad `half`, writing accumulator half
    `out_half`: its loads once its slot is free and the loader is done (a zero fill or bias also
    after the stores that read those rows), its input loads also after the computes of the last
    tile on the same half; its computes after the previous tile's, its last load entering the
    reservation station, each compute's input row landing, and the stores reading its rows; its
    stores after its computes are issued, each after the rows it reads left the array. 1 if it stores."""
    lat, depth = DEFAULT_CONSTANTS.dram_latency, DEFAULT_CONSTANTS.array_depth_factor * cfg.dim
    before, inputs, computes, stores, n_c, n_s, first_store, stores_done, issued, ready = costs
    first_read, last_read = st[READ + 2 * out_half], st[READ + 2 * out_half + 1]
    ld_start = max(st[FREED + slot], st[LD], last_read if zero_fills else 0.0)
    in_start = max(ld_start + before, st[COMPUTED + half])
    st[LD] = in_start + inputs
    ex_start = max(st[EX], in_start + issued, first_read)
    st[EX] = ex_end = max(ex_start + computes, in_start + ready + computes, last_read)
    st[COMPUTED + half] = ex_end
    ex_issued = ex_end + depth - computes * min(1.0, cfg.rs_ex / 2 / max(n_c, 1))
    st[FREED + slot] = ex_issued
    if not n_s:
        return 0
    # the stores once the computes are issued, each after the rows it reads (from the computes' start)
    ex_begin = ex_end - computes
    st_start = max(st[ST], ex_issued)
    st[ST] = max(st_start + stores, ex_begin + stores_done)
    st[READ + 2 * out_half] = max(st_start, ex_begin + first_store) + stores / n_s
    st[READ + 2 * out_half + 1] = st[ST]
    if n_s > cfg.rs_st:     # the store FSM issues its last command once all but rs_st are out
        st[FREED + slot] = max(ex_issued, st[ST] - cfg.rs_st * stores / n_s + lat)
    return 1
