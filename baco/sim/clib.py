"""The Gemmini C library's command streams (ucb-bar/gemmini-rocc-tests include/gemmini.h and
gemmini_nn.h), without data: the RoCC commands the library issues, as (command name, fields)
pairs; `expanded` turns them into the commands Gemmini's units execute, `time_stream` times them
on the cycle model (baco.sim.timing.TimingModel, which runs each hardware loop as LoopMatmul /
LoopConv do, two loops at once) and `library_stream_cycles` times one library call, the CPU's
per-tile work and the call's closing fence included, on a cycle model shared by a whole network.

- `matmul_stream`: tiled_matmul_auto / tiled_matmul_nn_auto. The tiles come from the heuristic of
  gemmini-isa.md §5.1 (baco.gemmini.heuristics.tiled_matmul_auto) and tiled_matmul_outer runs them
  as one LOOP_WS per tile (§5.2: its five config commands and funct 8): i0 → j0 → k0 over the
  tiles, a full or repeating bias moved in by the first k0 tile, the output written only by the
  last (int32 at full width, or int8 through the accumulator's scale/activation path), operands
  reused from the scratchpad when they fit.
- `conv_stream`: tiled_conv_auto, one LOOP_CONV_WS per tile (its six config commands and funct
  15), with the pooling epilogue and the 1x1 stride-2 downsampling path.
- `depthwise_stream`: tiled_conv_dw_auto, one single-channel LOOP_CONV_WS (dw flag) per tile and
  channel.
- `resadd_stream`: tiled_resadd_auto, one LOOP_WS with is_resadd per tile.

This is "Gemmini-default running the C library" for benchmarks and for the
tuner/compiler/simulator loop.
"""
from __future__ import annotations

from baco.gemmini.arith import f32_bits
from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import library_conv_tiles, tiled_matmul_auto, tiled_matmul_tiles
from baco.gemmini.isa import ACTIVATION_RELU, COMMANDS, encode
from baco.gemmini.loop_conv_stream import packed_pixels
from baco.sim.loops import MVIN_SCALE_IDENTITY, cmd
from baco.sim.timing import CommandStream, TimingModel

# default DRAM base addresses of A, B and C (any distinct non-zero values when no data is moved)
A_ADDR, B_ADDR, C_ADDR, D_ADDR = 0x80000000, 0x90000000, 0xA0000000, 0xB0000000


BIAS = (None, "full", "repeating")


def _command(name, **fields):
    """(name, every field of the command as the decoder sees it)."""
    return cmd(name, **fields)


def matmul_stream(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = False, scale: float = 1.0,
                  relu: bool = False, tiles: tuple[int, int, int] | None = None, bias: str | None = None,
                  addrs: tuple[int, int, int] = (A_ADDR, B_ADDR, C_ADDR), d_addr: int = D_ADDR,
                  transpose_b: bool = False):
    """Yield (name, fields) of tiled_matmul_outer for C[M×N] = A[M×K]·B[K×N] (+ D), weight-stationary,
    with tiled_matmul_auto's tiles (or `tiles` = (tile_I, tile_J, tile_K) in DIM blocks).
    int8 inputs; C is int32 (full width) or, with out_int8, scaled (round-half-even), optionally
    ReLU'd and saturated to int8 on its way out of the accumulator. `bias`: None, "full" (an int32
    M×N matrix D) or "repeating" (one int32 row of N, the library's repeating_bias), moved into the
    accumulator by each output tile's first LOOP_WS. The tiles are baco.gemmini.heuristics'
    tiled_matmul_tiles (which the walk's library_matmul_loops times too): when the A (B) tiles fit
    the scratchpad's halves (tiled_matmul_reuse) the library keeps them there across tiles
    (a_spad_id, b_spad_id) and moves them in once. `addrs` are the DRAM byte addresses of A, B and C
    (row-major, dense) and `d_addr` D's when the stream is run on data. With `transpose_b` B is
    stored transposed (Bᵀ, N×K row-major, e.g. the keys of attention scores Q·Kᵀ as
    transformers/transformer.c passes them) and the array reads it through its transposer."""
    if relu and not out_int8:
        raise ValueError("relu needs an int8 output: a full-width int32 mvout bypasses the activation")
    if bias not in BIAS:
        raise ValueError(f"bias must be one of {BIAS}, got {bias!r}")
    d = cfg.dim
    ti, tj, tk = tiles or tiled_matmul_auto(M, N, K, cfg, "WS")
    c_bytes = 1 if out_int8 else cfg.acc_bytes
    act = ACTIVATION_RELU if relu else 0
    yield _command("config_ex", dataflow=1, activation=act, a_stride=1, c_stride=1, acc_scale=MVIN_SCALE_IDENTITY,
                   b_transpose=int(transpose_b))
    b_row = K if transpose_b else N        # B's stored row stride
    yield _command("config_st", stride=N * c_bytes, activation=act,
                   acc_scale=f32_bits(scale) if out_int8 else MVIN_SCALE_IDENTITY)
    for slot, stride in ((0, K), (1, b_row), (2, 0 if bias == "repeating" else N * cfg.acc_bytes)):
        yield _command("config_ld", stride=stride, scale=MVIN_SCALE_IDENTITY, block_stride=d, state_id=slot,
                       pixel_repeats=1)
    a_addr, b_addr, c_addr = addrs
    for t in tiled_matmul_tiles(M, N, K, cfg, (ti, tj, tk)):
        i_row, j_col, k_col = t.i0 * ti * d, t.j0 * tj * d, t.k0 * tk * d     # the tile's first element
        bias_row = 0 if bias == "repeating" else i_row
        yield _command("loop_ws_config_bounds", max_i=t.I, max_j=t.J, max_k=t.K, pad_i=t.pad_i, pad_j=t.pad_j,
                       pad_k=t.pad_k)
        yield _command("loop_ws_config_addrs_ab",
                       a_addr=a_addr + (i_row * K + k_col) if t.load_a else 0,
                       b_addr=b_addr + ((j_col * K + k_col) if transpose_b else (k_col * N + j_col)) if t.load_b else 0)
        yield _command("loop_ws_config_addrs_dc",
                       d_addr=d_addr + (bias_row * N + j_col) * cfg.acc_bytes if bias and t.first_k else 0,
                       c_addr=(c_addr + (i_row * N + j_col) * c_bytes) if t.last_k else 0)
        yield _command("loop_ws_config_strides_ab", a_stride=K, b_stride=b_row)
        yield _command("loop_ws_config_strides_dc", d_stride=0 if bias == "repeating" else N, c_stride=N)
        yield _command("loop_ws", ex_accumulate=int(bool(bias) or not t.first_k), full_c=int(not out_int8), low_d=0,
                       activation=act, a_spad_id=t.a_spad_id, b_spad_id=t.b_spad_id, a_transpose=0,
                       b_transpose=int(transpose_b), is_resadd=0)


def _conv_tile(cfg, g, t, *, in_stride, weight_stride, out_stride, in_addr, weights_addr, bias_addr, out_addr, bias,
               act, no_pool, downsample, dw):
    """One sp_tiled_conv call's LOOP_CONV_WS as (fields, flags): the tile `t`
    (baco.gemmini.heuristics.library_conv_tiles) of the layer geometry `g` with its addresses as
    sp_tiled_conv and its callers compute them. `in_addr` is the input's address at the tile's
    first channel of pixel (0, 0), weights_addr the tile's weights, bias_addr/out_addr the bias's
    and output's at its first output channel."""
    in_pixel = (t.b * g["H"] + t.irow) * g["W"] + t.icol
    fields = dict(
        batch_size=g["N"], in_row_dim=g["H"], in_col_dim=g["W"], in_channels=g["C"], out_channels=g["K"],
        out_row_dim=g["P"], out_col_dim=g["Q"], pool_out_row_dim=g["PP"], pool_out_col_dim=g["PQ"],
        stride=g["stride"], padding=g["padding"], kernel_dim=g["kernel_dim"], kernel_dilation=g["dilation"],
        pool_size=g["psize"], pool_stride=g["pstride"], pool_padding=g["ppad"], batches=t.batches,
        porows=t.porows, pocols=t.pocols, pochs=t.ochs, krows=t.krows, kcols=t.kcols, kchs=t.kchs, lpad=t.lpad,
        rpad=t.rpad, upad=t.upad, dpad=t.dpad, plpad=t.plpad, prpad=t.prpad, pupad=t.pupad, pdpad=t.pdpad,
        orows=t.orows, ocols=t.ocols, in_stride=in_stride, weight_stride=weight_stride, out_stride=out_stride,
        input_addr=in_addr + in_pixel * in_stride, weights_addr=weights_addr,
        bias_addr=(bias_addr if bias else 1) if t.first else 0,
        output_addr=out_addr + ((t.b * g["PP"] + t.porow) * g["PQ"] + t.pocol) * out_stride if t.last else 0)
    flags = dict(no_bias=int(not bias), wrot180=0, trans_output_1203=0, trans_weight_1203=0, trans_weight_0132=0,
                 trans_input_3120=0, dw=int(dw),
                 max_pixels_per_row=packed_pixels(t.kchs, t.kcols, g["dilation"], downsample, cfg.dim),
                 a_spad_id=0, b_spad_id=0, no_pool=int(no_pool), downsample=downsample, input_dilated=0,
                 activation=act)
    return fields, flags


def _loop_conv_ws(fields, flags):
    """One tile's LOOP_CONV_WS as the library issues it: its six config commands, then funct 15."""
    for n in range(1, 7):
        name = f"loop_conv_ws_config_{n}"
        yield _command(name, **{f.name: fields[f.name] for f in COMMANDS[name].fields})
    yield _command("loop_conv_ws", **flags)


def conv_stream(N: int, H: int, W: int, C: int, K: int, kernel_dim: int, cfg: GemminiConfig, *, stride: int = 1,
                padding: int = 0, dilation: int = 1, scale: float = 1.0, relu: bool = False, bias: bool = False,
                pool_size: int = 0, pool_stride: int = 0, pool_padding: int = 0,
                addrs: tuple[int, int, int, int] = (A_ADDR, B_ADDR, C_ADDR, D_ADDR)):
    """Yield (name, fields) of the C library's tiled_conv_auto for an NHWC int8 input, HWIO
    (kernel_dim x kernel_dim x C x K) weights and an NHWC int8 output (scaled with round-half-even,
    optionally ReLU'd; bias: an int32 vector of K): tiled_conv_auto's tiles (gemmini-isa.md §5.4)
    in tiled_conv's loop nest (batch, output row, output column, output channel, kernel row,
    kernel column, input channel; baco.gemmini.heuristics.library_conv_tiles), one LOOP_CONV_WS
    per tile (its six config commands and funct 15; LoopConv expands it); the bias (or zeros) is
    loaded by the first tile of an output tile and the output stored by its last. `addrs`: DRAM
    byte addresses of the input, weights, output and bias. A 1x1 stride-2 layer without padding
    over an even-sized input takes tiled_conv's downsampling path, as the library does.
    pool_stride != 0 max-pools the output (pool_size x pool_size windows, zero pool_padding) as
    tiled_conv does: tiles of pooled output rows/columns whose conv rows LoopConv computes (with
    the pooled windows' overlap and the library's pool_stride - 1 extra rows) and stores through
    pooled mvouts; the output is then the pooled NHWC image."""
    g, downsample, tiles = library_conv_tiles(N, H, W, C, K, kernel_dim, cfg, stride=stride, padding=padding,
                                              dilation=dilation, pool_size=pool_size, pool_stride=pool_stride,
                                              pool_padding=pool_padding)
    act = ACTIVATION_RELU if relu else 0
    in_addr, w_addr, out_addr, bias_addr = addrs
    yield _command("config_st", stride=K, activation=act, acc_scale=f32_bits(scale))
    # downsampling: the input tile is moved in every other row and column, so the array reads it
    # with A-stride 1
    yield _command("config_ex", dataflow=1, activation=act, a_stride=stride >> downsample, c_stride=1,
                   acc_scale=MVIN_SCALE_IDENTITY)
    for t in tiles:
        yield from _loop_conv_ws(*_conv_tile(
            cfg, g, t, in_stride=C, weight_stride=K, out_stride=K, in_addr=in_addr + t.kch,
            weights_addr=w_addr + ((t.krow * kernel_dim + t.kcol) * C + t.kch) * K + t.poch,
            bias_addr=bias_addr + t.poch * 4, out_addr=out_addr + t.poch, bias=bias, act=act,
            no_pool=pool_stride == 0, downsample=downsample, dw=False))


def depthwise_stream(N: int, H: int, W: int, C: int, kernel_dim: int, cfg: GemminiConfig, *, stride: int = 1,
                     padding: int = 0, scale: float = 1.0, relu: bool = False, bias: bool = False,
                     pool_size: int = 0, pool_stride: int = 0, pool_padding: int = 0,
                     addrs: tuple[int, int, int, int] = (A_ADDR, B_ADDR, C_ADDR, D_ADDR)):
    """Yield (name, fields) of the C library's tiled_conv_dw_auto (gemmini-rocc-tests
    include/gemmini.h, as imagenet/mobilenet.c calls it) for an NHWC int8 input of C channels,
    weights laid out C x kernel_dim x kernel_dim (the library's [channel][krow][kcol]) and an NHWC
    int8 output of C channels: tiles of one channel (tiled_conv_dw_auto's heuristic) in
    tiled_conv_dw's loop nest (batch, output row, output column, channel, kernel row, kernel
    column; baco.gemmini.heuristics.library_conv_tiles(depthwise=True)), one LOOP_CONV_WS with the
    dw flag per tile and channel: the channel's input pixels (in_stride C), its weights (a
    DIM-wide weight tile holding one column) and its output column (out_stride C)."""
    g, _, tiles = library_conv_tiles(N, H, W, C, C, kernel_dim, cfg, stride=stride, padding=padding,
                                     pool_size=pool_size, pool_stride=pool_stride, pool_padding=pool_padding,
                                     depthwise=True)
    act = ACTIVATION_RELU if relu else 0
    in_addr, w_addr, out_addr, bias_addr = addrs
    yield _command("config_st", stride=C, activation=act, acc_scale=f32_bits(scale))
    yield _command("config_ex", dataflow=1, activation=0, a_stride=stride, c_stride=1, acc_scale=MVIN_SCALE_IDENTITY)
    for t in tiles:
        ch = t.poch
        yield from _loop_conv_ws(*_conv_tile(
            cfg, g, t, in_stride=C, weight_stride=1, out_stride=C, in_addr=in_addr + ch,
            weights_addr=w_addr + (ch * kernel_dim + t.krow) * kernel_dim + t.kcol, bias_addr=bias_addr + ch * 4,
            out_addr=out_addr + ch, bias=bias, act=act, no_pool=pool_stride == 0, downsample=0, dw=True))


def resadd_tiles(I: int, J: int, cfg: GemminiConfig) -> tuple[int, int]:
    """(tile_I, tile_J) in elements as tiled_resadd_stride_auto picks them: the whole matrix,
    halved in rows (or narrowed by DIM columns) until its tile holds at most half the accumulator."""
    d = cfg.dim
    ti, tj = I, J

    def acc_rows(i, j):
        return -(-i // d) * d * -(-j // d)
    while acc_rows(ti, tj) > cfg.acc_rows // 2:
        if ti >= tj or tj <= d:
            ti //= 2
        else:
            tj -= d
    return ti, tj


def resadd_stream(I: int, J: int, cfg: GemminiConfig, *, a_scale: float = 1.0, b_scale: float = 1.0,
                  c_scale: float = 1.0, relu: bool = False,
                  addrs: tuple[int, int, int] = (A_ADDR, B_ADDR, C_ADDR)):
    """Yield (name, fields) of the C library's tiled_resadd_auto (gemmini-rocc-tests
    include/gemmini.h): C = act(A * a_scale + B * b_scale) * c_scale for I x J int8 matrices (row
    stride J), int8 out. The operands' scales are the mvin scales of load slots 0 and 1 (round-half-
    even, saturated to int8), the sum is in the accumulator and leaves through config_st's scale and
    activation; resadd_tiles' tiles, each one LOOP_WS with is_resadd (sp_tiled_resadd; baco.sim.loops
    resadd_commands)."""
    d = cfg.dim
    ti, tj = resadd_tiles(I, J, cfg)
    act = ACTIVATION_RELU if relu else 0
    a_addr, b_addr, c_addr = addrs
    yield _command("config_st", stride=J, activation=act, acc_scale=f32_bits(c_scale))
    yield _command("config_ex", dataflow=1, activation=0, a_stride=1, c_stride=1, acc_scale=MVIN_SCALE_IDENTITY)
    for slot, operand_scale in ((0, a_scale), (1, b_scale)):
        yield _command("config_ld", stride=J, scale=f32_bits(operand_scale), shrink=1, block_stride=d,
                       state_id=slot, pixel_repeats=1)
    for i in range(0, I, ti):
        for j in range(0, J, tj):
            rows, cols = min(ti, I - i), min(tj, J - j)
            offset = i * J + j
            yield _command("loop_ws_config_bounds", max_i=-(-rows // d), max_j=-(-cols // d), max_k=0,
                           pad_i=-rows % d, pad_j=-cols % d, pad_k=0)
            yield _command("loop_ws_config_addrs_ab", a_addr=a_addr + offset, b_addr=b_addr + offset)
            yield _command("loop_ws_config_addrs_dc", d_addr=0, c_addr=c_addr + offset)
            yield _command("loop_ws_config_strides_ab", a_stride=J, b_stride=J)
            yield _command("loop_ws_config_strides_dc", d_stride=0, c_stride=J)
            yield _command("loop_ws", ex_accumulate=0, full_c=0, low_d=0, activation=act, a_spad_id=0,
                           b_spad_id=0, a_transpose=0, b_transpose=0, is_resadd=1)


# the first command of each tile's hardware loop: the library's tile loop has run before it
TILE_START = ("loop_ws_config_bounds", "loop_conv_ws_config_1")


def run_stream(stream, cfg: GemminiConfig, observer, timing: TimingModel | None = None, cpu_tile_cycles: float = 0.0):
    """Hand a library stream to `observer` through Gemmini's units (its loops expanded, or whole
    to a TimingModel's observe). With `timing` the CPU issues it from `timing.issue_time` on: one
    instruction a command, the tile loop's `cpu_tile_cycles` before each tile's loop, waiting while
    Gemmini's queue cannot take the next command (baco.sim.timing's CPU side); returns the CPU's
    clock after the last command."""
    units = CommandStream(cfg)
    units.observers.append(observer)
    clock = timing.issue_time if timing is not None else 0.0
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


def library_stream_cycles(stream, timing: TimingModel, cpu_tile_instructions: float | None = None) -> float:
    """Cycles of one library call (a stream) on `timing`, a cycle model that may already hold
    earlier calls: the CPU starts it when the previous call has ended, issues it (run_stream) with
    `cpu_tile_instructions` of tile-loop work before each tile (default: the fitted
    TimingConstants.library_tile_instructions) and ends it with the library's gemmini_fence.
    Returns the cycles from the call's start to the fence; the next call starts there."""
    k = timing.k
    tile_instructions = k.library_tile_instructions if cpu_tile_instructions is None else cpu_tile_instructions
    start = timing.issue_time = max(timing.finish, timing.issue_time)
    clock = run_stream(stream, timing.cfg, timing.observe, timing, tile_instructions * k.cpu_cycles_per_instruction)
    timing.fence()
    end = timing.issue_time = max(clock, timing.finish)
    return end - start


def time_stream(stream, cfg: GemminiConfig, *, cpu_tile_instructions: float | None = None) -> dict:
    """The cycle model's report of a library stream, ended by a fence. By default its commands
    arrive for free (Gemmini alone); with cpu_tile_instructions the CPU issues them
    (library_stream_cycles), that many instructions of tile-loop work before each tile, and
    "cycles" is the CPU's time to the fence."""
    tm = TimingModel(cfg)
    if cpu_tile_instructions is None:
        run_stream(stream, cfg, tm.observe)
        tm.fence()
        return tm.report()
    cycles = library_stream_cycles(stream, tm, cpu_tile_instructions)
    return dict(tm.report(), cycles=cycles)


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


__all__ = ["matmul_stream", "time_matmul", "conv_stream", "time_conv", "depthwise_stream", "resadd_stream",
           "resadd_tiles", "expanded", "run_stream", "time_stream", "library_stream_cycles"]
