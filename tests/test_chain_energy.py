"""The fused GEMM chain on the loop unit priced by its program's counts: kernel_model's
loop_ws_stream_counts of gemm_chain_loop_ws_loops (each tile's bias rows moved in by LdD, layer 1's
C moved into the scratchpad by MVOUT_SPAD) equal the cycle model's stats of the compiled chain, and
the tuner's fused network takes that program's energy (less the bias rows, which the layers'
models omit) in place of its two layers'."""
from __future__ import annotations

import pytest
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.fused import gemm_chain_loop_ws_loops
from baco.gemmini.loop_ws_timing import LoopWs
from baco.model.zoo import mlp, seeded_inputs
from baco.sim.timing import TimingModel
from baco.tuner import fusion
from baco.tuner.arch import Hardware
from baco.tuner.kernel_model import gemm_chain_loop_ws_energy, loop_ws_stream_counts
from tests.test_chain_loop_ws import CONFIGS, launch_of

COUNT_KEYS = ("macs", "registers", "scratchpad_reads", "scratchpad_writes", "accumulator_reads",
              "accumulator_writes", "dram_bytes_in", "dram_bytes_out")


@pytest.mark.parametrize("dim,M,K,H,N", [(16, 1, 1, 1, 1), (16, 17, 33, 65, 17), (16, 65, 17, 33, 65),
                                         (8, 65, 33, 96, 17), (16, 64, 512, 256, 64)])
def test_chain_program_counts_are_the_cycle_models(dim, M, K, H, N):
    cfg = CONFIGS[dim]
    launch, _ = launch_of(M, K, H, N, cfg, True, False)
    report = launch.cycles()
    counts = loop_ws_stream_counts(gemm_chain_loop_ws_loops(M, K, H, N, cfg), cfg)
    assert {k: counts[k] for k in COUNT_KEYS} == {k: report[k] for k in COUNT_KEYS}
    assert gemm_chain_loop_ws_energy(M, K, H, N, cfg) == pytest.approx(report["energy_uj"], rel=1e-12)


def test_bias_and_spad_store_counts():
    """A 2 x 1-block loop with a bias (the last row block 3 rows short, the column 5 short): LdD
    writes the 29 x 11 outputs that exist into the accumulator, int32 from DRAM; a spad_store loop's
    C goes to the scratchpad, none to DRAM."""
    cfg = GemminiConfig()
    plain = loop_ws_stream_counts([LoopWs(I=2, J=1, K=1, pad_i=3, pad_j=5, full_c=False)], cfg)
    bias = loop_ws_stream_counts([LoopWs(I=2, J=1, K=1, pad_i=3, pad_j=5, full_c=False, bias=True)], cfg)
    spad = loop_ws_stream_counts([LoopWs(I=2, J=1, K=1, pad_i=3, pad_j=5, full_c=False, spad_store=True)], cfg)
    outputs = 29 * 11
    assert bias == {**plain, "dram_bytes_in": plain["dram_bytes_in"] + outputs * cfg.acc_bytes,
                    "accumulator_writes": plain["accumulator_writes"] + outputs}
    assert spad == {**plain, "dram_bytes_out": 0, "scratchpad_writes": plain["scratchpad_writes"] + outputs}


def test_the_fused_network_takes_the_loop_programs_energy():
    """FusionTerms.network on an ext-spad Gemmini: the fused MLP's energy is the unfused one less the
    two layers' plus the program's (loop_programs': its counts, bias rows included, as the MLP's
    linears carry a bias, Layer.bias; no traffic-model terms for that edge), exactly; its cycles the
    program's in place of the layers'."""
    rows, sizes = 40, (48, 96, 32)
    g = fusion.graph_from_torch(mlp(sizes), seeded_inputs((rows, sizes[0]), 1)[0])
    hw = Hardware(16, 64, 32, ext_spad=True)
    terms = fusion.FusionTerms(g, "compiled")
    programs = terms.loop_programs(hw)
    cfg = hw.to_gemmini_config()
    assert all(g.layers[g.instances[i]].bias for i in (0, 1)) and list(programs) == [0]
    assert programs[0][1] == pytest.approx(gemm_chain_loop_ws_energy(rows, *sizes, cfg), rel=1e-12)
    cycles = torch.tensor([[700.0, 900.0], [300.0, 500.0]], dtype=torch.float64)     # two layers, B = 2
    energy = torch.tensor([[2.5, 3.5], [1.25, 0.75]], dtype=torch.float64)
    fills, floor = torch.full_like(cycles, 1000.0), torch.zeros_like(cycles)
    sp = torch.tensor([64.0, 64.0], dtype=torch.float64)
    off = terms.network(cycles, energy, fills, floor, torch.zeros(2, 1, dtype=torch.float64), sp, programs)
    on = terms.network(cycles, energy, fills, floor, torch.ones(2, 1, dtype=torch.float64), sp, programs)
    assert torch.equal(off[1], energy.sum(0)) and torch.equal(off[0], cycles.sum(0))
    assert torch.allclose(on[1], off[1] - energy.sum(0) + programs[0][1], rtol=1e-14, atol=0)
    assert torch.equal(on[0], torch.full((2,), programs[0][0], dtype=torch.float64))
    # without the program (the traffic model) the fused edge's energy is not the program's
    traffic = terms.network(cycles, energy, fills, floor, torch.ones(2, 1, dtype=torch.float64), sp)
    assert not torch.allclose(traffic[1], on[1])


def test_the_program_energy_matches_the_compiled_chain_on_the_iss():
    """The tuner's loop-form program energy of a 40-row 48-96-32 MLP chain against the cycle model's
    energy of the compiled chain run on the ISS: exact."""
    rows, K, H, N = 40, 48, 96, 32
    cfg = Hardware(16, 64, 32, ext_spad=True).to_gemmini_config()
    launch, ref = launch_of(rows, K, H, N, cfg, True, False)
    ck = launch.kernel.compile(*launch.args, target="iss", **launch.options)
    tm = TimingModel(cfg)
    ck.run(launch.grid, launch.runtime_args(), timing=tm)
    assert (launch.y == ref).all()
    assert gemm_chain_loop_ws_energy(rows, K, H, N, cfg) == pytest.approx(tm.report()["energy_uj"], rel=1e-9)
