"""The hardware loop FSMs as command generators.

LOOP_WS (funct 8, after its config commands 9–13) is expanded into the
mvin/mvin2/mvin3, preload/compute and mvout stream that LoopMatmul emits
(gemmini-isa.md §5.3): D loads into the accumulator, A and B loads in
MAX_BLOCK_LEN-wide chunks, the execute nest k → j → i with each weight block
preloaded once per (k, j) and reused over i, and the C stores. Local layout:
A(i,k) at a_base + (i·K + k)·DIM, B(k,j) at b_base + (k·J + j)·DIM (the block
stride of a multi-block mvin is DIM, as the C library configures it), C(i,j)
at acc_base + (i·J + j)·DIM. Two accumulator halves alternate between loops
that store C, as in the RTL (a loop with C = 0 keeps accumulating into the
same half).

The functional model runs these streams; the cycle model times them.
"""
from __future__ import annotations

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import (ACC_BIT, ACCUMULATE_BIT, COMMANDS, GARBAGE_ADDR,
                              READ_FULL_BIT, encode)


def cmd(name, **fields):
    rs1, rs2 = encode(name, **fields)
    return COMMANDS[name].funct, rs1, rs2


class LoopWsState:
    """The LoopMatmul registers latched by funct 9–13, and the accumulator half in use."""

    def __init__(self):
        self.bounds = dict(pad_i=0, pad_j=0, pad_k=0, max_i=0, max_j=0, max_k=0)
        self.addrs = dict(a_addr=0, b_addr=0, d_addr=0, c_addr=0)
        self.strides = dict(a_stride=0, b_stride=0, d_stride=0, c_stride=0)
        self.acc_half = 0

    def latch(self, name, fields):
        if name == "loop_ws_config_bounds":
            self.bounds.update(fields)
        elif name in ("loop_ws_config_addrs_ab", "loop_ws_config_addrs_dc"):
            self.addrs.update(fields)
        elif name in ("loop_ws_config_strides_ab", "loop_ws_config_strides_dc"):
            self.strides.update(fields)


def loop_ws_commands(cfg: GemminiConfig, st: LoopWsState, f: dict):
    """Yield (funct, rs1, rs2) for one LOOP_WS with flags `f` (decoded funct 8)."""
    d = cfg.dim
    b, a, s = st.bounds, st.addrs, st.strides
    I, J, K = b["max_i"], b["max_j"], b["max_k"]
    pad_i, pad_j, pad_k = b["pad_i"], b["pad_j"], b["pad_k"]
    if I == 0 or J == 0 or K == 0:
        return
    ib, ab = cfg.input_bytes, cfg.acc_bytes
    half_sp = cfg.sp_rows // 2
    a_base = (f["a_spad_id"] - 1) * half_sp if f["a_spad_id"] else 0
    b_end = f["b_spad_id"] * half_sp if f["b_spad_id"] else half_sp
    b_base = b_end - K * J * d
    acc_base = st.acc_half * (cfg.acc_rows // 2)
    a_t, b_t = f["a_transpose"], f["b_transpose"]

    def rows_of(idx, n, pad):
        return d - (pad if idx == n - 1 else 0)

    def a_local(i, k):
        return a_base + ((k * I + i) if a_t else (i * K + k)) * d

    def b_local(k, j):
        return b_base + ((j * K + k) if b_t else (k * J + j)) * d

    def c_local(i, j):
        return acc_base + (i * J + j) * d

    # D (bias) into the accumulator, overwriting
    if a["d_addr"]:
        d_bytes = ib if f["low_d"] else ab
        step = cfg.max_block_len if f["low_d"] else cfg.max_block_len_acc
        for j0 in range(0, J, step):
            n = min(step, J - j0)
            cols = n * d - (pad_j if j0 + n == J else 0)
            for i in range(I):
                dram = a["d_addr"] + (i * d * s["d_stride"] + j0 * d) * d_bytes
                yield cmd("mvin3", dram_addr=dram, local_addr=ACC_BIT | c_local(i, j0),
                          cols=cols, rows=rows_of(i, I, pad_i))
    # A and B, in chunks of MAX_BLOCK_LEN DIM-wide blocks along a DRAM row
    mbl = cfg.max_block_len

    def operand_loads(name, base, stride, rows_dim, cols_dim, local):
        """Row-blocks × column chunks of a (rows_dim × cols_dim)-block DRAM matrix;
        each dim is (block count, pad); local(row_block, col_block) is its address."""
        (n_outer, pad_rows), (n_inner, pad_cols) = rows_dim, cols_dim
        for o in range(n_outer):
            for c0 in range(0, n_inner, mbl):
                n = min(mbl, n_inner - c0)
                cols = n * d - (pad_cols if c0 + n == n_inner else 0)
                yield cmd(name, dram_addr=base + (o * d * stride + c0 * d) * ib, local_addr=local(o, c0),
                          cols=cols, rows=rows_of(o, n_outer, pad_rows))

    if a["a_addr"]:   # A is I×K blocks in DRAM, K×I when transposed
        dims = ((I, pad_i), (K, pad_k)) if not a_t else ((K, pad_k), (I, pad_i))
        local = (lambda o, c: a_local(o, c)) if not a_t else (lambda o, c: a_local(c, o))
        yield from operand_loads("mvin", a["a_addr"], s["a_stride"], *dims, local)
    if a["b_addr"]:   # B is K×J blocks, J×K when transposed
        dims = ((K, pad_k), (J, pad_j)) if not b_t else ((J, pad_j), (K, pad_k))
        local = (lambda o, c: b_local(o, c)) if not b_t else (lambda o, c: b_local(c, o))
        yield from operand_loads("mvin2", a["b_addr"], s["b_stride"], *dims, local)
    # execute: k → j → i, the weight block preloaded at i = 0 and reused
    for k in range(K):
        for j in range(J):
            b_rows, b_cols = rows_of(k, K, pad_k), rows_of(j, J, pad_j)
            if b_t:
                b_rows, b_cols = b_cols, b_rows
            accumulate = ACCUMULATE_BIT if (f["ex_accumulate"] or k) else 0
            for i in range(I):
                a_rows, a_cols = rows_of(i, I, pad_i), rows_of(k, K, pad_k)
                c_rows, c_cols = rows_of(i, I, pad_i), rows_of(j, J, pad_j)
                if a_t:
                    a_rows, a_cols = a_cols, a_rows
                yield cmd("preload", bd_addr=b_local(k, j) if i == 0 else GARBAGE_ADDR,
                          bd_rows=b_rows, bd_cols=b_cols,
                          c_addr=ACC_BIT | accumulate | c_local(i, j), c_rows=c_rows, c_cols=c_cols)
                yield cmd("compute_preloaded" if i == 0 else "compute_accumulated",
                          a_addr=a_local(i, k), a_rows=a_rows, a_cols=a_cols,
                          bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
    # C stores
    if a["c_addr"]:
        c_bytes = ab if f["full_c"] else ib
        step = 1 if f["full_c"] else mbl
        for j0 in range(0, J, step):
            n = min(step, J - j0)
            cols = n * d - (pad_j if j0 + n == J else 0)
            for i in range(I):
                dram = a["c_addr"] + (i * d * s["c_stride"] + j0 * d) * c_bytes
                local = ACC_BIT | (READ_FULL_BIT if f["full_c"] else 0) | c_local(i, j0)
                yield cmd("mvout", dram_addr=dram, local_addr=local, cols=cols, rows=rows_of(i, I, pad_i))
        st.acc_half ^= 1
