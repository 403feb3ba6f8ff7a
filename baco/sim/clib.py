"""The Gemmini C library's command streams (ucb-bar/gemmini-rocc-tests include/gemmini.h),
without data: the RoCC commands `tiled_matmul_auto` issues for a matmul, as (command name,
fields) pairs; `expanded` turns them into the commands Gemmini's units execute, and
`time_matmul` times them on the cycle model (baco.sim.timing.TimingModel, which runs each
LOOP_WS as LoopMatmul does, two loops at once).

tiled_matmul_auto picks its tiles with the heuristic of gemmini-isa.md §5.1
(baco.gemmini.heuristics.tiled_matmul_auto) and tiled_matmul_outer runs them as
one LOOP_WS per tile (§5.2): i0 → j0 → k0 over the tiles, the output written only
by the last k0 tile (int32 at full width, or int8 through the accumulator's
scale/activation path), each LOOP_WS its five config commands and funct 8 (gemmini_loop_ws).
This is "Gemmini-default running the C library" for benchmarks and for the
tuner/compiler/simulator loop. `conv_stream` is the same for tiled_conv_auto (one
LOOP_CONV_WS per tile: its six config commands and funct 15).
"""
from __future__ import annotations

from baco.gemmini.arith import f32_bits
from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_matmul_auto
from baco.gemmini.isa import COMMANDS, decode, encode
from baco.sim.loops import MVIN_SCALE_IDENTITY, cmd
from baco.sim.timing import CommandStream, TimingModel

# default DRAM base addresses of A, B and C (any distinct non-zero values when no data is moved)
A_ADDR, B_ADDR, C_ADDR, D_ADDR = 0x80000000, 0x90000000, 0xA0000000, 0xB0000000
RELU = 1    # config_ex / LOOP_WS activation field


BIAS = (None, "full", "repeating")


def matmul_stream(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = False, scale: float = 1.0,
                  relu: bool = False, tiles: tuple[int, int, int] | None = None, bias: str | None = None,
                  addrs: tuple[int, int, int] = (A_ADDR, B_ADDR, C_ADDR), d_addr: int = D_ADDR):
    """Yield (name, fields) of tiled_matmul_outer for C[M×N] = A[M×K]·B[K×N] (+ D), weight-stationary,
    with tiled_matmul_auto's tiles (or `tiles` = (tile_I, tile_J, tile_K) in DIM blocks).
    int8 inputs; C is int32 (full width) or, with out_int8, scaled (round-half-even), optionally
    ReLU'd and saturated to int8 on its way out of the accumulator. `bias`: None, "full" (an int32
    M×N matrix D) or "repeating" (one int32 row of N, the library's repeating_bias), moved into the
    accumulator by each output tile's first LOOP_WS. When the A (B) tiles fit the scratchpad's
    halves (I0·K0 <= 2, J0·K0 <= 2) the library keeps them there across tiles (a_spad_id,
    b_spad_id) and moves them in once. `addrs` are the DRAM byte addresses of A, B and C
    (row-major, dense) and `d_addr` D's when the stream is run on data."""
    if relu and not out_int8:
        raise ValueError("relu needs an int8 output: a full-width int32 mvout bypasses the activation")
    if bias not in BIAS:
        raise ValueError(f"bias must be one of {BIAS}, got {bias!r}")
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
    for slot, stride in ((0, K), (1, N), (2, 0 if bias == "repeating" else N * cfg.acc_bytes)):
        yield command("config_ld", stride=stride, scale=MVIN_SCALE_IDENTITY, block_stride=d, state_id=slot,
                      pixel_repeats=1)
    a_addr, b_addr, c_addr = addrs

    def pad(n, start_block, blocks):
        """Elements of the last block row/col beyond n (LOOP_WS pads them)."""
        return max(0, (start_block + blocks) * d - n)

    a_reuse, b_reuse = I0 * K0 <= 2, J0 * K0 <= 2
    for i0 in range(I0):
        for j0 in range(J0):
            for k0 in range(K0):
                a_spad_id = (1 if i0 + k0 == 0 else 2) if a_reuse else 0
                b_spad_id = (1 if j0 + k0 == 0 else 2) if b_reuse else 0
                bias_row = 0 if bias == "repeating" else i0 * ti * d
                I = min(ti, -(-M // d) - i0 * ti)
                J = min(tj, -(-N // d) - j0 * tj)
                Kb = min(tk, -(-K // d) - k0 * tk)
                last_k = k0 == K0 - 1
                yield command("loop_ws_config_bounds", max_i=I, max_j=J, max_k=Kb, pad_i=pad(M, i0 * ti, I),
                              pad_j=pad(N, j0 * tj, J), pad_k=pad(K, k0 * tk, Kb))
                yield command("loop_ws_config_addrs_ab",
                              a_addr=0 if a_reuse and j0 else a_addr + (i0 * ti * d * K + k0 * tk * d),
                              b_addr=0 if b_reuse and i0 else b_addr + (k0 * tk * d * N + j0 * tj * d))
                yield command("loop_ws_config_addrs_dc",
                              d_addr=d_addr + (bias_row * N + j0 * tj * d) * cfg.acc_bytes if bias and k0 == 0 else 0,
                              c_addr=(c_addr + (i0 * ti * d * N + j0 * tj * d) * c_bytes) if last_k else 0)
                yield command("loop_ws_config_strides_ab", a_stride=K, b_stride=N)
                yield command("loop_ws_config_strides_dc", d_stride=0 if bias == "repeating" else N, c_stride=N)
                yield command("loop_ws", ex_accumulate=int(bool(bias) or k0 > 0), full_c=int(not out_int8), low_d=0,
                              activation=act, a_spad_id=a_spad_id, b_spad_id=b_spad_id, a_transpose=0,
                              b_transpose=0, is_resadd=0)


def conv_stream(N: int, H: int, W: int, C: int, K: int, kernel_dim: int, cfg: GemminiConfig, *, stride: int = 1,
                padding: int = 0, dilation: int = 1, scale: float = 1.0, relu: bool = False, bias: bool = False,
                pool_size: int = 0, pool_stride: int = 0, pool_padding: int = 0,
                addrs: tuple[int, int, int, int] = (A_ADDR, B_ADDR, C_ADDR, D_ADDR)):
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
    output is then the pooled NHWC image."""
    from baco.gemmini.heuristics import tiled_conv_auto
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
                                for n in range(1, 7):
                                    name = f"loop_conv_ws_config_{n}"
                                    yield command(name, **{f.name: fields[f.name] for f in COMMANDS[name].fields})
                                yield command("loop_conv_ws", **flags)


# the first command of each tile's hardware loop: the library's tile loop has run before it
TILE_START = ("loop_ws_config_bounds", "loop_conv_ws_config_1")


def run_stream(stream, cfg: GemminiConfig, observer, timing: TimingModel | None = None, cpu_tile_cycles: float = 0.0):
    """Hand a library stream to `observer` through Gemmini's units (its loops expanded, or whole
    to a TimingModel's observe). With `timing` the CPU issues it: one instruction a command, the tile loop's
    `cpu_tile_cycles` before each tile's loop, waiting while Gemmini's queue cannot take the
    next command (baco.sim.timing's CPU side); returns the CPU's clock after the last command."""
    units = CommandStream(cfg)
    units.observers.append(observer)
    clock = 0.0
    for name, fields in stream:
        funct = COMMANDS[name].funct
        if timing is not None:
            clock += timing.k.cpu_cycles_per_instruction + (cpu_tile_cycles if name in TILE_START else 0.0)
            clock = timing.issue_time = max(clock, timing.accept_time(funct))
        units.execute(funct, *encode(name, **fields))
    return clock


def expanded(stream, cfg: GemminiConfig):
    """The (name, fields) Gemmini's units execute for a library stream: its hardware loops
    expanded into their FSMs' commands in program order (baco.sim.loops)."""
    out = []
    run_stream(stream, cfg, lambda name, fields, pc=None: out.append((name, fields)))
    return out


def time_stream(stream, cfg: GemminiConfig, *, cpu_tile_instructions: float | None = None) -> dict:
    """The cycle model's report of a library stream, ended by a fence. By default its commands
    arrive for free (Gemmini alone); with cpu_tile_instructions the CPU issues them (_run), that
    many instructions of tile-loop work before each tile (the fitted per-tile figure is
    TimingConstants.library_tile_instructions), and "cycles" is the CPU's time to the fence."""
    tm = TimingModel(cfg)
    if cpu_tile_instructions is None:
        run_stream(stream, cfg, tm.observe)
        tm.fence()
        return tm.report()
    clock = run_stream(stream, cfg, tm.observe, tm, cpu_tile_instructions * tm.k.cpu_cycles_per_instruction)
    tm.fence()
    return dict(tm.report(), cycles=max(clock, tm.finish))


def time_conv(N: int, H: int, W: int, C: int, K: int, kernel_dim: int, cfg: GemminiConfig, *,
              cpu_tile_instructions: float | None = None, **kw) -> dict:
    """The cycle model's report of the C library's tiled_conv_auto (conv_stream; time_stream)."""
    return time_stream(conv_stream(N, H, W, C, K, kernel_dim, cfg, **kw), cfg,
                       cpu_tile_instructions=cpu_tile_instructions)


def time_matmul(M: int, N: int, K: int, cfg: GemminiConfig, *, cpu_tile_instructions: float | None = None,
                **kw) -> dict:
    """The cycle model's report (cycles, energy_uj, busy times, traffic…) of the C library's matmul
    (matmul_stream; time_stream)."""
    return time_stream(matmul_stream(M, N, K, cfg, **kw), cfg, cpu_tile_instructions=cpu_tile_instructions)


__all__ = ["matmul_stream", "time_matmul", "conv_stream", "time_conv", "expanded", "run_stream", "time_stream"]
