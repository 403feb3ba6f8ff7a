"""What a fused GEMM chain holds on chip: Y = f2(f1(X·W1 + b1)·W2 + b2) as one program
(baco.kernels.fused), the hidden layer kept in the accumulator (the execute unit reads it back
as scaled, ReLU'd int8: the A operand of the second product, no mvout, no mvin).

Per program (BLOCK_M rows of X): in the scratchpad an X block (BLOCK_M x BLOCK_K), a W1 block
(BLOCK_K x H) and the whole W2 (H x N); in the accumulator the hidden block (BLOCK_M x H, which
starts as the bias rows) and the output block (BLOCK_M x N). H and N are whole (one block each,
padded to DIM). One definition for the compiler (the kernel's blocks) and the tuner (the fused
chain's capacity during the search): the arithmetic works on ints and on torch tensors alike.
Pure Python: imports only baco.gemmini.
"""
from __future__ import annotations

import math

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import Footprint


def _tiles(v, dim):
    """⌈v / dim⌉ of numbers, or of tensors (their ceil: no floor division, which has no gradient)."""
    q = v / dim
    return q.ceil() if hasattr(q, "ceil") else math.ceil(q)


def gemm_chain_footprint(block_m, block_k, H, N, dim) -> Footprint:
    """Local rows of one program of the fused chain (block_m rows, block_k columns of X a step):
    block_m and block_k may be tensors (the tuner's tiles), H and N are the layers' widths."""
    m, k, h, n = _tiles(block_m, dim), _tiles(block_k, dim), _tiles(H, dim), _tiles(N, dim)
    return Footprint(sp_rows=(m * k + k * h + h * n) * dim, acc_rows=(m * h + m * n) * dim)


def gemm_chain_blocks(M: int, K: int, H: int, N: int, block_m: int, block_k: int,
                      cfg: GemminiConfig) -> tuple[int, int] | None:
    """(BLOCK_M, BLOCK_K) of the fused chain on `cfg`: the requested blocks (the producer's
    schedule), clipped to the matrices (padded to DIM) and halved to multiples of DIM, BLOCK_K
    first, while one program does not fit; None if DIM x DIM blocks do not fit (the chain cannot
    be fused)."""
    d = cfg.dim
    bm = min(max(block_m, 1), _tiles(M, d) * d)
    bk = min(max(block_k, 1), _tiles(K, d) * d)
    while True:
        f = gemm_chain_footprint(bm, bk, H, N, d)
        if f.sp_rows <= cfg.sp_rows and f.acc_rows <= cfg.acc_rows:
            return bm, bk
        if bk > d and f.sp_rows > cfg.sp_rows:
            bk = max(d, _tiles(bk // 2, d) * d)
        elif bm > d:
            bm = max(d, _tiles(bm // 2, d) * d)
        else:
            return None


__all__ = ["gemm_chain_footprint", "gemm_chain_blocks"]
