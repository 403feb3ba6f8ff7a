"""What the explicit fused programs of baco.kernels.fused move and compute, counted from their blocks
as the cycle model counts their commands (baco.sim.timing's stats, the COUNT_KEYS of
baco.gemmini.loop_conv_timing): the counts baco.gemmini.energy.energy_pj prices, so a fused
edge's energy is its program's (baco.tuner.fusion) as the loop-unit chain's already is
(kernel_model.gemm_chain_loop_ws_energy).

The programs' commands, as baco.gemmini.fused's timelines lay them out (_chain_program,
_resadd_program), counted:
- a mvin of rows x cols writes rows x cols words (the scratchpad's, or the accumulator's) and,
  unless it is a zero fill, reads rows x cols x its element's bytes from DRAM (int32 bias rows,
  int8 operands; the residual's int8 rows widened into the accumulator by the mvin scale);
- a zero fill lays DIM-row mvins over a whole accumulator block's row tiles (its ragged last too);
- a product preloads each of its B tiles (k x n: k x n registers written and scratchpad words
  read) once, for its first row tile (the row tiles after reuse the weights); every compute reads its A tile (a_rows x a_cols scratchpad words: the product's
  rows of A, DIM wide when A is an accumulator block read back, else its K tile's width), does
  a_rows x k x n MACs and reads and writes a_rows x n accumulator words;
- a mvout of rows x cols reads rows x cols accumulator words and writes rows x cols int8 bytes.
A product over an accumulator block (the chain's second, the residual add's identity products)
runs over its block's rows (BLOCK_M, whatever rows the program has); the K loop's over the program's.
Pure Python: imports only baco.gemmini.
"""
from __future__ import annotations

from baco.gemmini.config import GemminiConfig
from baco.gemmini.energy import energy_pj
from baco.gemmini.fused import _block_sizes, _tiles, gemm_chain_blocks
from baco.gemmini.loop_conv_timing import COUNT_KEYS
from baco.gemmini.schedule import bias_zero_moves, pieces


def _counts() -> dict:
    return dict.fromkeys(COUNT_KEYS, 0)


def _add(total: dict, part: dict, times: int = 1) -> dict:
    for key, value in part.items():
        total[key] += times * value
    return total


def _load(c: dict, rows: int, cols: int, elem_bytes: int, acc: bool) -> None:
    """A boundary-checked window of the rows x cols elements that exist, from DRAM."""
    c["accumulator_writes" if acc else "scratchpad_writes"] += rows * cols
    c["dram_bytes_in"] += rows * cols * elem_bytes


def _zeros(c: dict, block_rows: int, block_cols: int, cfg: GemminiConfig) -> None:
    """Zero mvins over a whole block_rows x block_cols accumulator block, laid as bias_zero_moves
    lays them: DIM rows (the ragged last row tile's too) per row tile, one per chunk of
    max_block_len_acc tiles of its columns."""
    c["accumulator_writes"] += _tiles(block_rows, cfg.dim) * cfg.dim * block_cols


def _product(c: dict, rows: int, cols: int, inner: int, cfg: GemminiConfig, a_width: int | None = None) -> None:
    """The computes of a rows x inner times inner x cols product (see the module's docstring): A's
    tiles `a_width` wide in all (an accumulator block read back: its block's width; else inner)."""
    d = cfg.dim
    col_tiles, inner_tiles = (len(pieces(v, d)) for v in (cols, inner))
    c["registers"] += inner * cols
    c["scratchpad_reads"] += inner * cols
    c["scratchpad_reads"] += rows * (inner if a_width is None else a_width) * col_tiles
    c["macs"] += rows * inner * cols
    c["accumulator_reads"] += rows * cols * inner_tiles
    c["accumulator_writes"] += rows * cols * inner_tiles


def _store(c: dict, rows: int, cols: int) -> None:
    c["accumulator_reads"] += rows * cols
    c["dram_bytes_out"] += rows * cols


def _k_loop(c: dict, rows: int, K: int, bk: int, cols: int, cfg: GemminiConfig) -> None:
    for width in pieces(K, bk):
        _load(c, rows, width, cfg.input_bytes, acc=False)
        _load(c, width, cols, cfg.input_bytes, acc=False)
        _product(c, rows, cols, width, cfg)


def _biased_block(c: dict, rows: int, cols: int, block_rows: int, block_cols: int, cfg: GemminiConfig) -> None:
    """An accumulator block starting as the bias rows: its zero fill where they do not cover it,
    then the rows x cols int32 bias words."""
    if bias_zero_moves(rows, cols, block_rows, block_cols, cfg):
        _zeros(c, block_rows, block_cols, cfg)
    _load(c, rows, cols, cfg.acc_bytes, acc=True)


def chain_program_counts(rows: int, K: int, H: int, N: int, bm: int, bk: int, cfg: GemminiConfig) -> dict:
    """One program of the fused GEMM chain (its `rows` of a bm-row block, K steps of bk)."""
    d, c = cfg.dim, _counts()
    bh, bn = (_tiles(v, d) * d for v in (H, N))
    _biased_block(c, rows, H, bm, bh, cfg)
    _k_loop(c, rows, K, bk, H, cfg)
    _biased_block(c, rows, N, bm, bn, cfg)
    _load(c, H, N, cfg.input_bytes, acc=False)                       # W2
    _product(c, bm, N, H, cfg, a_width=bh)                          # the hidden block read back
    _store(c, rows, N)
    return c


def gemm_chain_counts(M: int, K: int, H: int, N: int, block_m: int, block_k: int, cfg: GemminiConfig) -> dict:
    """The fused GEMM chain's launch (baco.kernels.fused.gemm_chain_launch's explicit stream) at the
    blocks it runs (gemm_chain_blocks: block_m, block_k halved to fit): its programs' counts summed.
    A chain that fits at no blocks (its launch's ValueError) is counted at the blocks given, as
    fused.gemm_chain_program_cycles prices it (the search's capacity penalty rules it out)."""
    bm, bk = gemm_chain_blocks(M, K, H, N, block_m, block_k, cfg) or (block_m, block_k)
    total = _counts()
    for rows, n in _block_sizes(M, bm).items():
        _add(total, chain_program_counts(rows, K, H, N, bm, bk, cfg), n)
    return total


def resadd_program_counts(rows: int, cols: int, K: int, bm: int, bn: int, bk: int, cfg: GemminiConfig) -> dict:
    """One program of the fused GEMM + residual add (its rows x cols of a bm x bn block)."""
    c = _counts()
    _biased_block(c, rows, cols, bm, bn, cfg)
    _k_loop(c, rows, K, bk, cols, cfg)
    _zeros(c, bm, bn, cfg)                                          # the exact block
    _load(c, bn, bn, cfg.input_bytes, acc=False)                    # the identity
    _product(c, bm, bn, bn, cfg, a_width=bn)
    _load(c, rows, cols, cfg.input_bytes, acc=True)                 # the residual, widened by its mvin scale (no zeros)
    _load(c, bn, bn, cfg.input_bytes, acc=False)                    # the identity again
    _product(c, bm, bn, bn, cfg, a_width=bn)
    _store(c, rows, cols)
    return c


def gemm_resadd_counts(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, cfg: GemminiConfig) -> dict:
    """The fused GEMM + residual add's launch (baco.kernels.fused.gemm_resadd_launch) at its blocks:
    its programs' counts summed over the grid."""
    total = _counts()
    for rows, m in _block_sizes(M, block_m).items():
        for cols, n in _block_sizes(N, block_n).items():
            _add(total, resadd_program_counts(rows, cols, K, block_m, block_n, block_k, cfg), m * n)
    return total




def counts_energy_uj(counts: dict, cfg: GemminiConfig) -> float:
    """A program's counts priced by baco.gemmini.energy.energy_pj (the cycle model's sum), in µJ."""
    return energy_pj(counts, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6


__all__ = ["chain_program_counts", "counts_energy_uj", "gemm_chain_counts", "gemm_resadd_counts",
           "resadd_program_counts"]
