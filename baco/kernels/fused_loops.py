"""The fused GEMM chain on the loop unit (Gemmini master's ext-spad commands, GemminiConfig.mvout_spad):
Y = f2(f1(X·W1 + b1)·W2 + b2), f(v) = int8(relu?(v · scale)) (baco.kernels.fused's chain), as
LOOP_WSs over row blocks of X, its intermediate H never in DRAM. Row blocks go a group at a time
(baco.gemmini.fused.gemm_chain_loop_ws_blocks: the group's H fits the scratchpad):

- each layer is a row block's LOOP_WSs over tiles of its output (baco.gemmini.fused's
  chain_loop_tiles: up to LOOP_TILE_BLOCKS DIM x DIM blocks a loop, column groups outer): the loop
  unit holds two loops, and LoopMatmul's execute FSM waits until its loop's LdD has moved in all
  of its bias rows, so one big loop a layer would compute nothing while they load; small loops
  load one tile's bias while the other computes;
- layer 1: funct 24 (loop_ws_config_spad_ab) places the tile's A (its rows of X's block, in one of
  two X homes, row blocks in turn; moved in by the first column group, A address 0 after) and its
  W1 columns (W1's column groups one after the other); spad_only: its store FSM
  (LoopMatmulStCSpad) writes H = f1(...) block (i, j) with MVOUT_SPAD at c_spad_addr +
  (i·max_j + j)·DIM, so a tile spans all of H's columns or one DIM row, and H lies row block after
  row block, hb blocks each; inc_acc_addr moves the execute/store FSMs on to the other accumulator
  half, and C's DRAM address (unused by a spad_only store) is not 0 so that LdD's half moves with
  them (LoopMatmul rotates ld_d_addr_start on it);
- layer 2: A address 0 (no load) and funct 24's A start at the tile's H rows, so its execute FSM
  reads A(i, k) at a_addr_start + (i·max_k + k)·DIM: exactly H's blocks; W2's column group beside;
  Y's tile to DRAM through config_st's scale and activation.
H is rounded as the unfused layer 1's int8 mvout rounds it (the same store path), so Y is bit-exact
with the two layers run one after the other. W1 and W2 stay where they are: only the first row
block's loops move them in (B address 0 after). config_st changes between the layers (their
scales) and a command other than a loop's waits until the loop unit has issued every loop's
commands (LoopMatmul passes it on only when no loop is configured): the groups' layer-1 loops run
overlapped, then their layer-2 loops.

The program is a command stream (name, fields), as baco.sim.clib's library streams: it runs on
the functional model (`run_gemm_chain_loop_ws`), the ISS (its RoCC words in a C program,
tests/test_fused_loops.py) and times on the cycle model. The compiler emits the same commands for
baco.kernels.fused.gemm_chain_kernel's programs, one row block each (a group of one), on a Gemmini
with the ext-spad commands (baco.passes.chain_loop_ws)."""
from __future__ import annotations

import numpy as np

from baco.gemmini.arith import f32_bits
from baco.gemmini.config import GemminiConfig, as_config, loop_unit_half
from baco.gemmini.fused import (ChainLoops, chain_loop_tiles, gemm_chain_loop_ws_blocks, gemm_chain_loop_ws_fits,
                                gemm_chain_loop_ws_footprint)
from baco.gemmini.isa import ACTIVATION_RELU, COMMANDS, command_fields, encode
from baco.kernels.arguments import bias_vector, exact_array, real_scalar
from baco.sim.functional import ArrayMemory, GemminiModel

IDENTITY_SCALE = f32_bits(1.0)


def _blocks(n: int, dim: int) -> tuple[int, int]:
    """(DIM blocks, pad of the last) of n elements."""
    blocks = -(-n // dim)
    return blocks, blocks * dim - n


def _loop_ws(I, J, K, pads, *, a, b, d, c, strides, **flags):
    """LOOP_WS's six commands (bounds in DIM blocks)."""
    (pi, pj, pk), (sa, sb, sd, sc) = pads, strides
    yield "loop_ws_config_bounds", command_fields("loop_ws_config_bounds", max_i=I, max_j=J, max_k=K,
                                                  pad_i=pi, pad_j=pj, pad_k=pk)
    yield "loop_ws_config_addrs_ab", command_fields("loop_ws_config_addrs_ab", a_addr=a, b_addr=b)
    yield "loop_ws_config_addrs_dc", command_fields("loop_ws_config_addrs_dc", d_addr=d, c_addr=c)
    yield "loop_ws_config_strides_ab", command_fields("loop_ws_config_strides_ab", a_stride=sa, b_stride=sb)
    yield "loop_ws_config_strides_dc", command_fields("loop_ws_config_strides_dc", d_stride=sd, c_stride=sc)
    yield "loop_ws", command_fields("loop_ws", ex_accumulate=1, **flags)


def _config_ld(slot, stride, dim):
    return "config_ld", command_fields("config_ld", state_id=slot, stride=stride, scale=IDENTITY_SCALE,
                                       block_stride=dim, pixel_repeats=1)


def _spad_ab(a_start, b_end):
    return "loop_ws_config_spad_ab", command_fields("loop_ws_config_spad_ab", a_addr_start=a_start,
                                                    b_addr_end=b_end)


def _config_st(stride, scale, relu):
    return "config_st", command_fields("config_st", stride=stride, acc_scale=f32_bits(scale),
                                       activation=ACTIVATION_RELU if relu else 0)


def gemm_chain_loop_ws_stream(M: int, K: int, H: int, N: int, cfg: GemminiConfig, *, scale1: float, relu1: bool,
                              scale2: float, relu2: bool, addrs: tuple[int, int, int, int, int, int],
                              blocks: ChainLoops | None = None):
    """(name, fields) of the chain's program: `addrs` the DRAM byte addresses of X (M x K int8),
    W1 (K x H), b1 (H int32), W2 (H x N), b2 (N) and Y (M x N int8), all row-major and dense;
    `blocks` the row blocks (default gemm_chain_loop_ws_blocks'). A chain whose DIM-row block does
    not fit, blocks that do not, or a Gemmini without the ext-spad commands is a ValueError."""
    if not cfg.mvout_spad:
        raise ValueError("the chain on the loop unit needs Gemmini master's ext-spad commands "
                         "(GemminiConfig.mvout_spad)")
    d = cfg.dim
    blocks = blocks or gemm_chain_loop_ws_blocks(M, K, H, N, cfg)
    if blocks is None:
        raise ValueError(f"a chain of widths K={K}, H={H}, N={N} does not fit Gemmini ({cfg.sp_rows} scratchpad rows, "
                         f"{loop_unit_half(cfg).acc_rows} accumulator rows a loop) with a row block of DIM={d} rows")
    bm, group = blocks
    if not gemm_chain_loop_ws_fits(bm, group, K, H, N, cfg):
        need = gemm_chain_loop_ws_footprint(bm, group, K, H, N, d)
        raise ValueError(f"blocks {blocks} do not fit: block_m a multiple of DIM={d}, {need} of "
                         f"{cfg.sp_rows} scratchpad and {loop_unit_half(cfg).acc_rows} accumulator rows")
    x, w1, b1, w2, b2, y = addrs
    (kb, pk), (hb, ph), (nb, pn) = _blocks(K, d), _blocks(H, d), _blocks(N, d)
    a_rows, h_rows = bm * kb, bm * hb                     # an X home's, a row block's H
    w1_end = 2 * a_rows + kb * hb * d
    yield "config_ex", command_fields("config_ex", dataflow=1, acc_scale=IDENTITY_SCALE, a_stride=1, c_stride=1)
    yield _config_ld(0, K, d)
    yield _config_ld(2, 0, d)       # one bias row for every row (stride 0)
    starts = range(0, M, bm)
    for g0 in range(0, len(starts), group):
        rows = [(n, r0, _blocks(min(bm, M - r0), d)) for n, r0 in enumerate(starts[g0:g0 + group])]
        yield _config_st(N, scale1, relu1)
        if g0 == 0:
            yield _config_ld(1, H, d)
        for n, r0, (ib, pi) in rows:
            for (i0, mi, qi), (j0, mj, qj) in chain_loop_tiles(ib, pi, hb, ph):
                yield _spad_ab(n % 2 * a_rows + i0 * kb * d, 2 * a_rows + (j0 + mj) * kb * d)
                yield from _loop_ws(mi, mj, kb, (qi, qj, pk), a=x + (r0 + i0 * d) * K if j0 == 0 else 0,
                                    b=w1 + j0 * d if r0 == 0 and i0 == 0 else 0, d=b1 + 4 * j0 * d, c=y,
                                    strides=(K, H, 0, N), spad_only=1, inc_acc_addr=1,
                                    c_spad_addr=w1_end + n * h_rows + (i0 * hb + j0) * d)
        yield _config_st(N, scale2, relu2)
        if g0 == 0:
            yield _config_ld(1, N, d)
        for n, r0, (ib, pi) in rows:
            for (i0, mi, qi), (j0, mj, qj) in chain_loop_tiles(ib, pi, nb, pn):
                yield _spad_ab(w1_end + n * h_rows + i0 * hb * d, w1_end + group * h_rows + (j0 + mj) * hb * d)
                yield from _loop_ws(mi, mj, hb, (qi, qj, ph), a=0, b=w2 + j0 * d if r0 == 0 and i0 == 0 else 0,
                                    d=b2 + 4 * j0 * d, c=y + (r0 + i0 * d) * N + j0 * d, strides=(0, N, 0, N))


def run_gemm_chain_loop_ws(x, w1, b1, w2, b2, *, scale1, scale2, relu1=False, relu2=False, config=None,
                           blocks=None, observers=()):
    """Y (int8, M x N) of the chain's program run on the functional model (baco.sim.functional),
    its commands handed to `observers` too (e.g. a TimingModel's observe)."""
    config = as_config(config)
    x, w1, w2 = (exact_array(v, n, np.int8, 2) for v, n in ((x, "x"), (w1, "w1"), (w2, "w2")))
    (M, K), H, N = x.shape, w1.shape[1], w2.shape[1]
    if w1.shape[0] != K or w2.shape[0] != H:
        raise ValueError(f"shapes do not chain: x {x.shape}, w1 {w1.shape}, w2 {w2.shape}")
    b1 = bias_vector(np.zeros(H, np.int32) if b1 is None else b1, H, "b1")
    b2 = bias_vector(np.zeros(N, np.int32) if b2 is None else b2, N, "b2")
    arrays = (x, w1, b1, w2, b2, np.zeros((M, N), np.int8))
    base, addrs, offset = 0x80000000, [], 0
    for a in arrays:       # room for whole DIM-row blocks: LdB moves DIM rows a block (no row pad)
        addrs.append(base + offset)
        size = a.nbytes // a.shape[0] * -(-a.shape[0] // config.dim) * config.dim
        offset += -(-size // 64) * 64
    memory = ArrayMemory(base, offset)
    for a, addr in zip(arrays, addrs):
        memory.write(addr, np.ascontiguousarray(a).tobytes())
    model = GemminiModel(config, memory)
    model.observers.extend(observers)
    for name, fields in gemm_chain_loop_ws_stream(M, K, H, N, config, scale1=real_scalar(scale1, "scale1"),
                                                  relu1=bool(relu1), scale2=real_scalar(scale2, "scale2"),
                                                  relu2=bool(relu2), addrs=tuple(addrs), blocks=blocks):
        model.execute(COMMANDS[name].funct, *encode(name, **fields))
    return np.frombuffer(memory.read(addrs[-1], M * N), np.int8).reshape(M, N).copy()


__all__ = ["gemm_chain_loop_ws_stream", "run_gemm_chain_loop_ws"]
