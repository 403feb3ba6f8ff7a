"""The commands LoopMatmul's FSMs issue for one LOOP_WS, without addresses: one description that the
simulator (baco.sim.loops adds DRAM and local addresses and packs them), the walk of LoopMatmul's
timing (baco.gemmini.loop_ws_timing prices each command's DMA from its rows and columns) and the
tuner's counts (baco.tuner.kernel_model.loop_ws_stream_counts, through the element counts below)
share, so that a change to a stream changes all three.

Each generator yields WsCommand in the order its FSM issues them (gemmini-isa.md §5.3):
- LdD (ldd_commands): the bias into the accumulator, MAX_BLOCK_LEN_ACC blocks a mvin3 (MAX_BLOCK_LEN
  with low_d), the block columns outermost;
- LdA / LdB (lda_commands / ldb_commands): the operand's DRAM matrix (as stored: K x I blocks for a
  transposed A, J x K for a transposed B) in chunks of MAX_BLOCK_LEN blocks along a DRAM row, the
  row blocks innermost for A (untransposed) and B (transposed), the chunks innermost otherwise; LdB
  never applies its row pad (its last-row test compares the bound with itself minus one), so B
  blocks always move DIM rows;
- StC (store_commands): C out of the accumulator, MAX_BLOCK_LEN blocks an int8 mvout, one block an
  int32 (full_c) mvout, the block columns outermost; a spad_only loop's (Gemmini master) one block a
  MVOUT_SPAD into the scratchpad;
- resadd_commands: LOOP_WS with is_resadd, the same FSMs on I x J blocks (A's K is J, B's K is I).
The execute FSM (k -> j -> i, a preload and a compute a block) is not here: the walk sums it in
closed form and the simulator issues it with its addresses. Pure Python: imports only baco.gemmini."""
from __future__ import annotations

from typing import NamedTuple

from baco.gemmini.config import GemminiConfig


class WsCommand(NamedTuple):
    """One command of a LoopMatmul FSM: `fsm` ("ldd", "lda", "ldb", "st"); `iters`, the FSM's
    registers while the command waits to be issued ((k, i) for lda, (k, j) for ldb, (j, i, blocks)
    for st, None for ldd: they gate one FSM on another's progress); `row`, `col`, the block
    coordinates of its first block in the matrix as DRAM holds it; `blocks`, the blocks it moves
    along that row; `rows`, `cols`, the elements it moves (padded ones left out)."""
    fsm: str
    iters: tuple | None
    row: int
    col: int
    blocks: int
    rows: int
    cols: int


def _edge(dim: int, index: int, count: int, pad: int) -> int:
    """Elements of block `index` of `count` along a dimension whose last block is padded by `pad`."""
    return dim - (pad if index == count - 1 else 0)


def _block_loads(cfg: GemminiConfig, fsm: str, rows_dim, cols_dim, *, rows_inner: bool, row_pad: bool = True,
                 k_first: bool = False):
    """Row blocks x column chunks of MAX_BLOCK_LEN blocks of a (rows_dim x cols_dim)-block DRAM matrix,
    each dim (block count, pad); the FSM's registers are (row block, column block), or the other way
    round with k_first (its k iterator counts the columns)."""
    d, mbl = cfg.dim, cfg.max_block_len
    (n_rows, pad_rows), (n_cols, pad_cols) = rows_dim, cols_dim
    chunks = [(c0, n, n * d - (pad_cols if c0 + n == n_cols else 0))
              for c0 in range(0, n_cols, mbl) for n in (min(mbl, n_cols - c0),)]
    rows = [_edge(d, o, n_rows, pad_rows) if row_pad else d for o in range(n_rows)]
    order = ([(o, c) for c in chunks for o in range(n_rows)] if rows_inner
             else [(o, c) for o in range(n_rows) for c in chunks])
    new = tuple.__new__     # WsCommand's fields in order, without its keyword-taking constructor (the walk's hot path)
    for o, (c0, n, cols) in order:
        yield new(WsCommand, (fsm, (c0, o) if k_first else (o, c0), o, c0, n, rows[o], cols))


def _block_columns(cfg: GemminiConfig, fsm: str, I: int, J: int, pad_i: int, pad_j: int, step: int, iters):
    """An I x J-block matrix a row block and `step` block columns a command, the columns outermost
    (LdD, StC); iters(j, i, blocks) are the FSM's registers."""
    d = cfg.dim
    for j0 in range(0, J, step):
        n = min(step, J - j0)
        cols = n * d - (pad_j if j0 + n == J else 0)
        for i in range(I):
            yield WsCommand(fsm, iters(j0, i, n), i, j0, n, _edge(d, i, I, pad_i), cols)


def ldd_commands(cfg: GemminiConfig, I: int, J: int, pad_i: int, pad_j: int, low_d: bool = False):
    """LdD: the I x J-block bias D into the accumulator (int8 with low_d, else int32)."""
    step = cfg.max_block_len if low_d else cfg.max_block_len_acc
    return _block_columns(cfg, "ldd", I, J, pad_i, pad_j, step, lambda j, i, n: None)


def lda_commands(cfg: GemminiConfig, I: int, K: int, pad_i: int, pad_k: int, transposed: bool = False):
    """LdA: A, I x K blocks in DRAM (K x I when transposed)."""
    if transposed:
        return _block_loads(cfg, "lda", (K, pad_k), (I, pad_i), rows_inner=False)
    return _block_loads(cfg, "lda", (I, pad_i), (K, pad_k), rows_inner=True, k_first=True)


def ldb_commands(cfg: GemminiConfig, K: int, J: int, pad_k: int, pad_j: int, transposed: bool = False):
    """LdB: B, K x J blocks in DRAM (J x K when transposed), always DIM rows a block."""
    if transposed:
        return _block_loads(cfg, "ldb", (J, pad_j), (K, pad_k), rows_inner=True, row_pad=False, k_first=True)
    return _block_loads(cfg, "ldb", (K, pad_k), (J, pad_j), rows_inner=False, row_pad=False)


def store_commands(cfg: GemminiConfig, I: int, J: int, pad_i: int, pad_j: int, full_c: bool, spad: bool = False):
    """StC: the I x J-block C out of the accumulator (int32 with full_c, else int8). With `spad` (a
    spad_only LOOP_WS, Gemmini master) the store FSM is LoopMatmulStCSpad: one block a MVOUT_SPAD
    (its max_block_len is asserted 1), in the same order."""
    return _block_columns(cfg, "st", I, J, pad_i, pad_j, 1 if full_c or spad else cfg.max_block_len,
                          lambda j, i, n: (j, i, n))


def resadd_commands(cfg: GemminiConfig, I: int, J: int, pad_i: int, pad_j: int, *, load_a: bool, load_b: bool,
                    store: bool, full_c: bool):
    """LOOP_WS with is_resadd: LdA moves A (I x J blocks, as a matmul's A with J in place of K), LdB
    B (I x J blocks, as B with I in place of K, so without its row pad), StC stores the sum."""
    if load_a:      # the FSMs' k is j for A and i for B
        yield from _block_loads(cfg, "lda", (I, pad_i), (J, pad_j), rows_inner=True, k_first=True)
    if load_b:
        yield from _block_loads(cfg, "ldb", (I, pad_i), (J, pad_j), rows_inner=False, row_pad=False)
    if store:
        yield from store_commands(cfg, I, J, pad_i, pad_j, full_c)


def lda_elements(cfg: GemminiConfig, I: int, K: int, pad_i: int, pad_k: int) -> int:
    """Elements LdA moves (lda_commands' rows x cols summed): A's rows and columns that exist."""
    return (I * cfg.dim - pad_i) * (K * cfg.dim - pad_k)


def ldb_elements(cfg: GemminiConfig, K: int, J: int, pad_k: int, pad_j: int, transposed: bool = False) -> int:
    """Elements LdB moves (ldb_commands' rows x cols summed): whole DIM-row blocks (of K, of J when
    transposed), the columns that exist."""
    if transposed:
        return J * cfg.dim * (K * cfg.dim - pad_k)
    return K * cfg.dim * (J * cfg.dim - pad_j)


def store_elements(cfg: GemminiConfig, I: int, J: int, pad_i: int, pad_j: int) -> int:
    """Elements StC (or LdD) moves: C's rows and columns that exist."""
    return (I * cfg.dim - pad_i) * (J * cfg.dim - pad_j)
