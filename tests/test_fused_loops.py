"""The fused GEMM chain on the loop unit (baco.kernels.fused_loops, Gemmini master's spad_only
LOOP_WS): bit-exact against a numpy reference of the two layers run one after the other (int32
sums, the accumulator read: ReLU, float32 scale rounded half to even, int8 saturation), on ragged
shapes at DIM 8 and 16, timed without data races; H never goes to DRAM; its capacity rule."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.config import loop_unit_half
from baco.gemmini.fused import ChainLoops, gemm_chain_loop_ws_blocks, gemm_chain_loop_ws_footprint
from baco.kernels.fused_loops import gemm_chain_loop_ws_stream, run_gemm_chain_loop_ws
from baco.sim.timing import TimingModel

CONFIGS = {8: replace(GemminiConfig.from_capacity(8, 64, 64), mvout_spad=True),
           16: replace(GemminiConfig(), mvout_spad=True)}
SIZES = (1, 17, 33, 65)


def acc_read(x, scale, relu):
    x = np.asarray(x, dtype=np.int64)
    if relu:
        x = np.maximum(x, 0)
    return np.clip(np.rint((x.astype(np.float32) * np.float32(scale)).astype(np.float64)), -128, 127).astype(np.int8)


def chain(M, K, H, N, cfg, relu1=True, relu2=False, blocks=None, seed=0):
    rng = np.random.default_rng(seed + M + 3 * K + 5 * H + 7 * N + cfg.dim)
    x = rng.integers(-128, 128, (M, K), dtype=np.int8)
    w1 = rng.integers(-128, 128, (K, H), dtype=np.int8)
    w2 = rng.integers(-128, 128, (H, N), dtype=np.int8)
    b1 = rng.integers(-20000, 20000, H, dtype=np.int32)
    b2 = rng.integers(-20000, 20000, N, dtype=np.int32)
    tm = TimingModel(cfg)
    y = run_gemm_chain_loop_ws(x, w1, b1, w2, b2, scale1=1 / 300, scale2=1 / 200, relu1=relu1, relu2=relu2,
                               config=cfg, blocks=blocks, observers=[tm.observe])
    tm.fence()          # raises DataRace if the loops' commands would reorder
    h = acc_read(x.astype(np.int64) @ w1 + b1, 1 / 300, relu1)
    return y, acc_read(h.astype(np.int64) @ w2 + b2, 1 / 200, relu2), tm.report()


@pytest.mark.parametrize("dim", [8, 16])
@pytest.mark.parametrize("M,H,N", [(m, h, n) for m in SIZES for h in SIZES for n in SIZES
                                   if (m, h, n) in {(1, 1, 1), (17, 33, 65), (65, 17, 33), (33, 65, 1), (65, 65, 65),
                                                    (1, 65, 17), (17, 1, 33)}])
def test_chain_is_bit_exact_on_ragged_shapes(dim, M, H, N):
    y, ref, rep = chain(M, 33, H, N, CONFIGS[dim], relu1=True, relu2=N % 2 == 1)
    np.testing.assert_array_equal(y, ref)
    assert rep["dram_bytes_out"] == M * N          # only Y: H stays on chip
    assert rep["scratchpad_writes"] >= M * H       # H's MVOUT_SPADs


@pytest.mark.parametrize("group", [1, 2, 5])
def test_row_blocks_in_groups_reuse_the_resident_weights(group):
    cfg = CONFIGS[8]
    blocks = ChainLoops(16, group)
    y, ref, rep = chain(65, 17, 33, 17, cfg, blocks=blocks)
    np.testing.assert_array_equal(y, ref)
    stream = list(gemm_chain_loop_ws_stream(65, 17, 33, 17, cfg, scale1=1.0, relu1=False, scale2=1.0, relu2=False,
                                            addrs=(1, 2, 3, 4, 5, 6), blocks=blocks))
    # per row block of 16 rows (2 DIM blocks; the last one): layer 1's 5 column blocks in loops of
    # 4 and 1 column over each DIM row, layer 2's 3 in one loop over each DIM row
    assert [n for n, _ in stream].count("loop_ws") == 4 * (4 + 2) + 2 + 1
    assert [n for n, _ in stream].count("config_st") == 2 * -(-5 // group)      # the layers' scales, per group
    moved = [f["b_addr"] for n, f in stream if n == "loop_ws_config_addrs_ab" and f["b_addr"]]
    assert moved == [2, 2 + 4 * cfg.dim, 4]     # W1 and W2 moved in once each, by column group


def test_capacity_rule_and_errors():
    cfg = CONFIGS[16]
    d, half = cfg.dim, loop_unit_half(cfg)
    for M, K, H, N in ((64, 256, 256, 64), (1024, 32, 16, 96), (20, 40, 96, 48), (64, 512, 256, 64)):
        bm, group = gemm_chain_loop_ws_blocks(M, K, H, N, cfg)

        def fits(rows, g):
            f = gemm_chain_loop_ws_footprint(rows, g, K, H, N, d)
            return f.sp_rows <= cfg.sp_rows and f.acc_rows <= half.acc_rows
        rows_of_m = -(-M // d) * d
        assert fits(bm, group) and (bm == rows_of_m or not fits(bm + d, 1))
        assert group * bm >= rows_of_m or not fits(bm, group + 1)
    assert gemm_chain_loop_ws_blocks(64, 256, 512, 256, cfg) is None      # W1 and W2 fill the scratchpad
    with pytest.raises(ValueError, match="does not fit Gemmini"):
        list(gemm_chain_loop_ws_stream(64, 256, 512, 256, cfg, scale1=1.0, relu1=False, scale2=1.0, relu2=False,
                                       addrs=(1, 2, 3, 4, 5, 6)))
    with pytest.raises(ValueError, match="mvout_spad"):
        list(gemm_chain_loop_ws_stream(16, 16, 16, 16, GemminiConfig(), scale1=1.0, relu1=False, scale2=1.0,
                                       relu2=False, addrs=(1, 2, 3, 4, 5, 6)))
    with pytest.raises(ValueError, match="do not fit"):
        list(gemm_chain_loop_ws_stream(64, 16, 16, 16, cfg, scale1=1.0, relu1=False, scale2=1.0, relu2=False,
                                       addrs=(1, 2, 3, 4, 5, 6), blocks=ChainLoops(24, 1)))


def _c_program(M, K, H, N, cfg, arrays, expected) -> str:
    """A bare-metal C program issuing the chain's stream (its RoCC words; the DRAM address fields as
    the arrays' addresses) and checking Y against `expected`: exit 0 iff equal."""
    from baco.gemmini.isa import COMMANDS, encode
    names = ("x", "w1", "b1", "w2", "b2", "y")
    tag = 40          # the stream is built on addresses (k + 1) << tag: array k, byte offset below

    def word(v, address):
        return f"(uint64_t){names[(v >> tag) - 1]} + {v & ((1 << tag) - 1)}" if address and v else f"{v:#x}ULL"
    lines = ["#include <stdint.h>", '#include "gemmini.h"']
    for n, a in zip(names, arrays):
        rows = -(-a.shape[0] // cfg.dim) * cfg.dim        # LdB moves whole DIM-row blocks
        ctype = "int8_t" if a.dtype == np.int8 else "int32_t"
        flat = ", ".join(str(int(v)) for v in a.ravel())
        lines.append(f"static {ctype} {n}[{rows * (a.size // a.shape[0])}] __attribute__((aligned(64))) = {{{flat}}};")
    lines.append(f"static const int8_t expected[{expected.size}] = {{{', '.join(map(str, expected.ravel()))}}};")
    lines.append("int main(void) {")
    for name, fields in gemm_chain_loop_ws_stream(M, K, H, N, cfg, scale1=1 / 300, relu1=True, scale2=1 / 200,
                                                  relu2=False, addrs=tuple((k + 1) << tag for k in range(6))):
        rs1, rs2 = encode(name, **fields)
        address = name in ("loop_ws_config_addrs_ab", "loop_ws_config_addrs_dc")     # rs1 and rs2 are DRAM addresses
        lines.append(f"  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, {word(rs1, address)}, {word(rs2, address)}, "
                     f"{COMMANDS[name].funct});")
    lines += ["  gemmini_fence();", f"  for (int i = 0; i < {expected.size}; i++) if (y[i] != expected[i]) return 1;",
              "  return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("M,K,H,N", [(17, 33, 65, 17)])
def test_the_iss_runs_the_chain_as_the_functional_model_does(tmp_path, M, K, H, N):
    from baco.codegen.toolchain import compile_and_link
    from baco.sim.iss import run_elf
    cfg = CONFIGS[16]
    rng = np.random.default_rng(1)
    arrays = (rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, H), dtype=np.int8),
              rng.integers(-20000, 20000, H, dtype=np.int32), rng.integers(-128, 128, (H, N), dtype=np.int8),
              rng.integers(-20000, 20000, N, dtype=np.int32), np.zeros((M, N), np.int8))
    y = run_gemm_chain_loop_ws(*arrays[:5], scale1=1 / 300, scale2=1 / 200, relu1=True, config=cfg)
    src = tmp_path / "chain.c"
    src.write_text(_c_program(M, K, H, N, cfg, arrays, y))
    elf = compile_and_link([src], tmp_path / "chain.elf", config=cfg)
    seen = []
    res = run_elf(elf, config=cfg, stdout=None, observers=(lambda name, fields, pc: seen.append(name),))
    assert res.error is None and res.exit_code == 0, res.error or res.console
    assert seen.count("mvout_spad") == -(-M // 16) * -(-H // 16)      # funct 23, decoded by the ISS
