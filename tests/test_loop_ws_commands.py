"""One description of LoopMatmul's command streams (baco.gemmini.loop_ws_commands): the simulator's
LOOP_WS expansion (baco.sim.loops), the walk of its timing (baco.gemmini.loop_ws_timing) and the
tuner's counts (baco.tuner.kernel_model.loop_ws_stream_counts) read the same commands, and the C
library's GEMM tiles (heuristics.tiled_matmul_tiles) are the same for its stream and its walk."""
import random
from dataclasses import replace

import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS, decode, encode
from baco.gemmini.loop_ws_commands import (lda_commands, lda_elements, ldb_commands, ldb_elements, ldd_commands,
                                           store_commands, store_elements)
from baco.gemmini.loop_ws_timing import (_arbiter_order, _LoopTerms, _operand_loads, dma_cycles,
                                         library_matmul_loops)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.sim.loops import LoopWsState, loop_ws_program
from baco.tuner.kernel_model import loop_ws_stream_counts
from tests.test_loop_ws_timing import library_loops
from tests.test_loop_ws_timing_reference import ODD_CONSTANTS, random_loop

CONFIGS = [GemminiConfig.from_capacity(d, 256, 64) for d in (8, 16, 32)] + \
    [GemminiConfig.from_capacity(128, 1024, 512)]
ADDR = 0x80000000


def sim_program(lp, cfg):
    """The simulator's LoopProgram of LoopWs `lp` (its registers latched as the compiler sets them)."""
    st = LoopWsState()
    st.latch("loop_ws_config_bounds", dict(max_i=lp.I, max_j=lp.J, max_k=lp.K, pad_i=lp.pad_i, pad_j=lp.pad_j,
                                           pad_k=lp.pad_k))
    st.latch("loop_ws_config_addrs_ab", dict(a_addr=ADDR if lp.load_a else 0, b_addr=ADDR if lp.load_b else 0))
    st.latch("loop_ws_config_addrs_dc", dict(d_addr=ADDR if lp.bias else 0, c_addr=ADDR if lp.store else 0))
    st.latch("loop_ws_config_strides_ab", dict(a_stride=lp.K * cfg.dim, b_stride=lp.J * cfg.dim))
    st.latch("loop_ws_config_strides_dc", dict(d_stride=lp.J * cfg.dim, c_stride=lp.J * cfg.dim))
    flags = decode(COMMANDS["loop_ws"].funct, *encode("loop_ws", full_c=int(lp.full_c),
                                                      b_transpose=int(lp.b_transposed)))[1]
    return loop_ws_program(cfg, st, flags, rtl_wrap=True)


def sim_fsm(program, fsm, elem_bytes):
    """(rows, bytes a row) of one FSM's commands, in the order it issues them."""
    return [(f["rows"], f["cols"] * elem_bytes) for unit, _, _, f in program.commands if unit == fsm]


def random_loops(seed, count):
    rng = random.Random(seed)
    for n in range(count):
        cfg = CONFIGS[n % len(CONFIGS)]
        yield replace(random_loop(rng, cfg.dim), raw_b=0), cfg


@pytest.mark.parametrize("k", [DEFAULT_CONSTANTS, ODD_CONSTANTS])
def test_the_walk_prices_the_commands_the_simulator_issues(k):
    """On 160 random loops (ragged pads, transposed B, a bias, int8 or int32 C or none), each FSM's
    commands in the walk's order of LdA/LdB are the simulator's, in its order, and the walk's
    costs are dma_cycles of exactly those commands: the loads' ends, LdD's sum, the stores' sum."""
    for lp, cfg in random_loops(1, 160):
        program = sim_program(lp, cfg)
        ib = cfg.input_bytes
        a_ready, b_ready, ends = _operand_loads(lp, cfg, k)
        lda, ldb = sim_fsm(program, "lda", ib), sim_fsm(program, "ldb", ib)
        # the walk's order of the loads interleaves the two FSMs' sequences, each kept whole
        costs = [e - (ends[n - 1] if n else 0.0) for n, e in enumerate(ends)]
        assert sorted(costs) == sorted(dma_cycles(r, b, cfg, k) for r, b in lda + ldb), lp
        landed = {n for row in a_ready + b_ready for _, n in filter(None, row)}
        assert landed == set(range(len(ends))), lp
        assert all(all(row) for row in (a_ready if lp.load_a else []) + (b_ready if lp.load_b else [])), lp
        terms = _LoopTerms(lp, cfg, k)
        ldd = sim_fsm(program, "ldd", cfg.acc_bytes)
        assert terms.ldd == sum(dma_cycles(r, b, cfg, k) for r, b in ldd) and terms.ldd_cmds == len(ldd), lp
        stores = sim_fsm(program, "st", cfg.acc_bytes if lp.full_c else cfg.input_bytes)
        if stores:
            assert terms.stores[1][0] == pytest.approx(sum(dma_cycles(r, b, cfg, k) + k.acc_scale_latency
                                                           for r, b in stores), abs=1e-9), lp


def test_each_fsm_sequence_in_the_walks_order():
    """The walk's arbiter order keeps each FSM's commands in the order the simulator issues them."""
    for lp, cfg in random_loops(2, 200):
        order = _arbiter_order(cfg, lp.I, lp.J, lp.K, lp.pad_i, lp.pad_j, lp.pad_k, lp.load_a, lp.load_b,
                               lp.b_transposed)
        program = sim_program(lp, cfg)
        for fsm in ("lda", "ldb"):
            walk = [(c.iters, c.rows, c.cols) for c in order if c.fsm == fsm]
            sim = [(iters, f["rows"], f["cols"]) for unit, iters, _, f in program.commands if unit == fsm]
            assert walk == sim, (lp, fsm)


def test_counts_are_what_the_commands_move():
    """loop_ws_stream_counts' DRAM bytes are the simulator's commands' rows x columns (B transposed
    too: LdB moves J whole DIM-row blocks of K's columns then), and the element counts next to the
    generators are their sums."""
    for lp, cfg in random_loops(3, 200):
        lp = replace(lp, bias=False)
        program = sim_program(lp, cfg)
        ib, c_bytes = cfg.input_bytes, cfg.acc_bytes if lp.full_c else cfg.input_bytes
        counts = loop_ws_stream_counts([lp], cfg)
        loads = sim_fsm(program, "lda", ib) + sim_fsm(program, "ldb", ib)
        assert counts["dram_bytes_in"] == sum(r * b for r, b in loads)
        assert counts["dram_bytes_out"] == sum(r * b for r, b in sim_fsm(program, "st", c_bytes))
        I, J, K, pad_i, pad_j, pad_k = lp.I, lp.J, lp.K, lp.pad_i, lp.pad_j, lp.pad_k
        assert lda_elements(cfg, I, K, pad_i, pad_k) == sum(c.rows * c.cols
                                                            for c in lda_commands(cfg, I, K, pad_i, pad_k))
        for t in (False, True):
            assert ldb_elements(cfg, K, J, pad_k, pad_j, t) == sum(c.rows * c.cols
                                                                  for c in ldb_commands(cfg, K, J, pad_k, pad_j, t))
        for commands in (store_commands(cfg, I, J, pad_i, pad_j, lp.full_c), ldd_commands(cfg, I, J, pad_i, pad_j)):
            assert store_elements(cfg, I, J, pad_i, pad_j) == sum(c.rows * c.cols for c in commands)


def test_library_tiles_are_the_streams():
    """library_matmul_loops (the walk's) are the LOOP_WSs clib.matmul_stream issues, on 80 shapes
    (ragged 1, 17, 33, 65 and random, DIM 8 to 128)."""
    rng = random.Random(4)
    for n in range(80):
        cfg = CONFIGS[n % len(CONFIGS)]
        M, N, K = (rng.choice([1, 17, 33, 65, rng.randrange(1, 1500)]) for _ in range(3))
        out_int8 = rng.random() < 0.5
        assert library_matmul_loops(M, N, K, cfg, out_int8=out_int8) == library_loops(M, N, K, cfg,
                                                                                         out_int8=out_int8)
