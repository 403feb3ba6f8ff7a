"""The Gemmini C library's command streams (ucb-bar/gemmini-rocc-tests include/gemmini.h),
without data: what `tiled_matmul_auto` issues for a matmul, as (command name, fields)
pairs the cycle model times (baco.sim.timing.TimingModel.observe).

tiled_matmul_auto picks its tiles with the heuristic of gemmini-isa.md §5.1
(baco.gemmini.heuristics.tiled_matmul_auto) and tiled_matmul_outer runs them as
one LOOP_WS per tile (§5.2): i0 → j0 → k0 over the tiles, the output written only
by the last k0 tile (int32 at full width, or int8 through the accumulator's
scale/activation path), each LOOP_WS expanded into LoopMatmul's stream
(baco.sim.loops.loop_ws_commands). This is "Gemmini-default running the C library"
for benchmarks and for the tuner/compiler/simulator loop. `conv_stream` is the same for
tiled_conv_auto (one LOOP_CONV_WS per tile).
"""
from __future__ import annotations

from baco.gemmini.arith import f32_bits
from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_matmul_auto
from baco.gemmini.isa import decode
from baco.sim.loops import MVIN_SCALE_IDENTITY, LoopWsState, cmd, loop_ws_commands
from baco.sim.timing import TimingModel

# default DRAM base addresses of A, B and C (any distinct non-zero values when no data is moved)
A_ADDR, B_ADDR, C_ADDR, D_ADDR = 0x80000000, 0x90000000, 0xA0000000, 0xB0000000
RELU = 1    # config_ex / LOOP_WS activation field
TILE = "tile"   # with tile_marks, (TILE, {}) precedes each tile's commands: where the CPU's tile loop issues it


def matmul_stream(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = False, scale: float = 1.0,
                  relu: bool = False, tiles: tuple[int, int, int] | None = None,
                  addrs: tuple[int, int, int] = (A_ADDR, B_ADDR, C_ADDR), tile_marks: bool = False):
    """Yield (name, fields) of tiled_matmul_outer for C[M×N] = A[M×K]·B[K×N], weight-stationary,
    with tiled_matmul_auto's tiles (or `tiles` = (tile_I, tile_J, tile_K) in DIM blocks).
    int8 inputs; C is int32 (full width) or, with out_int8, scaled (round-half-even), optionally
    ReLU'd and saturated to int8 on its way out of the accumulator. `addrs` are the DRAM byte
    addresses of A, B and C (row-major, dense) when the stream is run on data. With `tile_marks`,
    (TILE, {}) precedes each tile's LOOP_WS."""
    if relu and not out_int8:
        raise ValueError("relu needs an int8 output: a full-width int32 mvout bypasses the activation")
    d = cfg.dim
    ti, tj, tk = tiles or tiled_matmul_auto(M, N, K, cfg, "WS")
    c_bytes = 1 if out_int8 else cfg.acc_bytes
    act = RELU if relu else 0
    I0, J0, K0 = -(-M // (ti * d)), -(-N // (tj * d)), -(-K // (tk * d))
    def command(name, **fields):      # every field of the command, as the decoder sees it
        command_, f = decode(*cmd(name, **fields))
        return command_.name, f

    yield command("config_ex", dataflow=1, activation=act, a_stride=1, c_stride=1, acc_scale=MVIN_SCALE_IDENTITY)
    yield command("config_st", stride=N * c_bytes, activation=act,
                  acc_scale=f32_bits(scale) if out_int8 else MVIN_SCALE_IDENTITY)
    for slot, stride in ((0, K), (1, N), (2, N * cfg.acc_bytes)):
        yield command("config_ld", stride=stride, scale=MVIN_SCALE_IDENTITY, block_stride=d, state_id=slot,
                      pixel_repeats=1)
    st = LoopWsState()
    a_addr, b_addr, c_addr = addrs

    def pad(n, start_block, blocks):
        """Elements of the last block row/col beyond n (LOOP_WS pads them)."""
        return max(0, (start_block + blocks) * d - n)

    for i0 in range(I0):
        for j0 in range(J0):
            for k0 in range(K0):
                I = min(ti, -(-M // d) - i0 * ti)
                J = min(tj, -(-N // d) - j0 * tj)
                Kb = min(tk, -(-K // d) - k0 * tk)
                st.bounds.update(max_i=I, max_j=J, max_k=Kb, pad_i=pad(M, i0 * ti, I), pad_j=pad(N, j0 * tj, J),
                                 pad_k=pad(K, k0 * tk, Kb))
                last_k = k0 == K0 - 1
                st.addrs.update(a_addr=a_addr + (i0 * ti * d * K + k0 * tk * d),
                                b_addr=b_addr + (k0 * tk * d * N + j0 * tj * d),
                                d_addr=0, c_addr=(c_addr + (i0 * ti * d * N + j0 * tj * d) * c_bytes) if last_k else 0)
                st.strides.update(a_stride=K, b_stride=N, d_stride=N, c_stride=N)
                flags = dict(ex_accumulate=int(k0 > 0), full_c=int(not out_int8), low_d=0, activation=act,
                             a_spad_id=0, b_spad_id=0, a_transpose=0, b_transpose=0, is_resadd=0)
                if tile_marks:
                    yield TILE, {}
                for funct, rs1, rs2 in loop_ws_commands(cfg, st, flags):
                    command_, fields = decode(funct, rs1, rs2)
                    yield command_.name, fields


def conv_stream(N: int, H: int, W: int, C: int, K: int, kernel_dim: int, cfg: GemminiConfig, *, stride: int = 1,
                padding: int = 0, dilation: int = 1, scale: float = 1.0, relu: bool = False, bias: bool = False,
                pool_size: int = 0, pool_stride: int = 0, pool_padding: int = 0,
                addrs: tuple[int, int, int, int] = (A_ADDR, B_ADDR, C_ADDR, D_ADDR), tile_marks: bool = False):
    """Yield (name, fields) of the C library's tiled_conv_auto for an NHWC int8 input, HWIO
    (kernel_dim x kernel_dim x C x K) weights and an NHWC int8 output (scaled with round-half-even,
    optionally ReLU'd; bias: an int32 vector of K): tiled_conv_auto's tiles (gemmini-isa.md §5.4,
    baco.gemmini.heuristics) run by tiled_conv's loop nest (batch, output row, output column,
    output channel, kernel row, kernel column, input channel), one LOOP_CONV_WS per tile expanded
    into LoopConv's stream (baco.sim.loops); the bias (or zeros) is loaded by the first tile of an
    output tile and the output stored by its last. `addrs`: DRAM byte addresses of the input,
    weights, output and bias. A 1x1 stride-2 layer without padding over an even-sized input takes
    tiled_conv's downsampling path, as the library does. pool_stride != 0 max-pools the output
    (pool_size x pool_size windows, zero pool_padding) as tiled_conv does: tiles of pooled
    output rows/columns whose conv rows LoopConv computes (with the pooled windows' overlap
    and the library's pool_stride - 1 extra rows) and stores through pooled mvouts; the
    output is then the pooled NHWC image. With `tile_marks`, (TILE, {}) precedes each tile's
    LOOP_CONV_WS."""
    from baco.gemmini.heuristics import tiled_conv_auto
    from baco.sim.loops import LoopConvState, loop_conv_ws_commands
    d = cfg.dim
    dil_k = dilation * (kernel_dim - 1) + 1
    P, Q = (H + 2 * padding - dil_k) // stride + 1, (W + 2 * padding - dil_k) // stride + 1
    if P < 1 or Q < 1:
        raise ValueError(f"a {kernel_dim}x{kernel_dim} kernel (dilation {dilation}) does not fit {H}x{W} "
                         f"with padding {padding}")
    # tiled_conv's downsampling path: the input tile is moved in every other row and column
    # (LoopConv's downsample flag), so the array reads it with A-stride 1
    no_pool = pool_stride == 0
    psize, pstride, ppad = (1, 1, 0) if no_pool else (pool_size, pool_stride, pool_padding)
    PP, PQ = (P + 2 * ppad - psize) // pstride + 1, (Q + 2 * ppad - psize) // pstride + 1
    downsample = int(no_pool and stride == 2 and kernel_dim == 1 and padding == 0 and H % 2 == 0 and W % 2 == 0)
    batches, porows, pocols, pochs, krows, kcols, kchs = tiled_conv_auto(
        N, H, W, C, K, kernel_dim, stride=stride, padding=padding, kernel_dilation=dilation, pool_size=pool_size,
        pool_stride=pool_stride, pool_padding=pool_padding, config=cfg)
    act = RELU if relu else 0
    in_addr, w_addr, out_addr, bias_addr = addrs

    def command(name, **fields):
        command_, f = decode(*cmd(name, **fields))
        return command_.name, f

    yield command("config_st", stride=K, activation=act, acc_scale=f32_bits(scale))
    yield command("config_ex", dataflow=1, activation=act, a_stride=stride >> downsample, c_stride=1,
                  acc_scale=MVIN_SCALE_IDENTITY)
    st = LoopConvState()
    for b in range(0, N, batches):
        for porow in range(0, PP, porows):
            orow = porow * pstride - ppad          # the tile's first conv output row (its windows')
            for pocol in range(0, PQ, pocols):
                ocol = pocol * pstride - ppad
                for poch in range(0, K, pochs):
                    for krow in range(0, kernel_dim, krows):
                        for kcol in range(0, kernel_dim, kcols):
                            for kch in range(0, C, kchs):
                                B_, porows_, pocols_ = min(batches, N - b), min(porows, PP - porow), \
                                    min(pocols, PQ - pocol)
                                och, kr, kc, ich = min(pochs, K - poch), min(krows, kernel_dim - krow), \
                                    min(kcols, kernel_dim - kcol), min(kchs, C - kch)
                                orows_, ocols_ = porows_ * pstride + psize - 1, pocols_ * pstride + psize - 1
                                pupad, pdpad = max(0, -orow), max(0, orow + orows_ - P)
                                plpad, prpad = max(0, -ocol), max(0, ocol + ocols_ - Q)
                                orows, ocols = orows_ - pupad - pdpad, ocols_ - plpad - prpad
                                irow, icol = max(orow, 0) * stride + krow * dilation - padding, \
                                    max(ocol, 0) * stride + kcol * dilation - padding
                                irows = orows * stride + dilation * (kr - 1)     # LoopConv's input tile
                                icols = ocols * stride + dilation * (kc - 1)
                                upad, lpad = max(0, -irow), max(0, -icol)
                                first = krow == 0 and kcol == 0 and kch == 0
                                last = krow + kr >= kernel_dim and kcol + kc >= kernel_dim and kch + ich >= C
                                in_pixel = (b * H + irow + upad) * W + icol + lpad
                                fields = dict(
                                    batch_size=N, in_row_dim=H, in_col_dim=W, in_channels=C, out_channels=K,
                                    out_row_dim=P, out_col_dim=Q, pool_out_row_dim=PP, pool_out_col_dim=PQ,
                                    stride=stride, padding=padding, kernel_dim=kernel_dim, kernel_dilation=dilation,
                                    pool_size=psize, pool_stride=pstride, pool_padding=ppad, batches=B_,
                                    porows=porows_, pocols=pocols_, pochs=och, krows=kr, kcols=kc, kchs=ich,
                                    lpad=lpad, rpad=max(0, icol + icols - W), upad=upad,
                                    dpad=max(0, irow + irows - H), plpad=plpad, prpad=prpad, pupad=pupad,
                                    pdpad=pdpad, orows=orows, ocols=ocols, in_stride=C, weight_stride=K, out_stride=K,
                                    input_addr=in_addr + in_pixel * C + kch,
                                    weights_addr=w_addr + ((krow * kernel_dim + kcol) * C + kch) * K + poch,
                                    bias_addr=(bias_addr + poch * 4 if bias else 1) if first else 0,
                                    output_addr=out_addr + ((b * PP + porow) * PQ + pocol) * K + poch if last else 0)
                                # sp_tiled_conv's first-layer packing: DIM/kchs kernel columns per
                                # array row, capped at the tile's kernel columns
                                pixels = 1 if ich > d or dilation > 1 or downsample else min(d // ich, kc)
                                flags = dict(no_bias=int(not bias), wrot180=0, trans_output_1203=0,
                                             trans_weight_1203=0, trans_weight_0132=0, trans_input_3120=0, dw=0,
                                             max_pixels_per_row=pixels, a_spad_id=0, b_spad_id=0,
                                             no_pool=int(no_pool),
                                             downsample=downsample, input_dilated=0, activation=act)
                                st.latch(fields)
                                if tile_marks:
                                    yield TILE, {}
                                for funct, rs1, rs2 in loop_conv_ws_commands(cfg, st, flags):
                                    command_, f = decode(funct, rs1, rs2)
                                    yield command_.name, f


def time_stream(stream, cfg: GemminiConfig, end_to_end: bool = False) -> dict:
    """The cycle model's report of a library stream. With `end_to_end`, the stream has tile marks
    and a CPU issues it at the library's cost: each tile's commands after
    `library_tile_instructions` of the tile loop's work, and not before Gemmini's queue takes
    them (as baco.sim.programs times the RTL rows' programs); else the commands arrive for free."""
    tm = TimingModel(cfg)
    cpu_per_tile = tm.k.library_tile_instructions * tm.k.cpu_cycles_per_instruction
    for name, fields in stream:
        if name == TILE:
            if end_to_end:
                tm.issue_time = max(tm.issue_time + cpu_per_tile, tm.accept_time())
            continue
        tm.observe(name, fields)
    tm.fence()
    return tm.report()


def time_conv(N: int, H: int, W: int, C: int, K: int, kernel_dim: int, cfg: GemminiConfig, *,
              end_to_end: bool = False, **kw) -> dict:
    """The cycle model's report of the C library's tiled_conv_auto (conv_stream); with `end_to_end`
    issued by the CPU at the library's cost (time_stream)."""
    return time_stream(conv_stream(N, H, W, C, K, kernel_dim, cfg, tile_marks=end_to_end, **kw), cfg, end_to_end)


def time_matmul(M: int, N: int, K: int, cfg: GemminiConfig, *, end_to_end: bool = False, **kw) -> dict:
    """The cycle model's report (cycles, energy_uj, busy times, traffic…) of the C library's matmul;
    with `end_to_end` issued by the CPU at the library's cost (time_stream)."""
    return time_stream(matmul_stream(M, N, K, cfg, tile_marks=end_to_end, **kw), cfg, end_to_end)


__all__ = ["matmul_stream", "time_matmul", "conv_stream", "time_conv", "time_stream", "TILE"]
