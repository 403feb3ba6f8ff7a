"""baco.gemmini.fused_counts (a fused edge's energy under the compiled-program model) against the
cycle model's own counts of the fused kernels' command streams (baco.sim.timing's stats), on
ragged shapes at DIM 16 and 32: equal, key by key."""
import sys
from pathlib import Path

import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.energy import energy_pj
from baco.gemmini.fused_counts import counts_energy_uj, gemm_chain_counts, gemm_resadd_counts
from baco.gemmini.loop_conv_timing import COUNT_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from fused_programs import launch_and_model  # noqa: E402


@pytest.mark.parametrize("dim,kind,shape", [
    (16, "chain", (17, 33, 17, 17, 16, 32)), (16, "chain", (65, 33, 65, 1, 64, 32)),
    (32, "chain", (100, 40, 70, 30, 48, 32)), (32, "chain", (1, 17, 33, 65, 32, 64)),
    (16, "resadd", (33, 65, 17, 32, 16, 64)), (16, "resadd", (1, 1, 1, 16, 16, 16)),
    (32, "resadd", (100, 40, 70, 48, 48, 32)), (32, "resadd", (65, 33, 1, 64, 32, 32))])
def test_fused_program_counts_equal_the_cycle_models(dim, kind, shape):
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    launch, _ = launch_and_model(kind, shape, dim)       # (launch_and_model's config: the same)
    report = launch.cycles()
    if kind == "chain":
        M, K, H, N, bm, bk = shape
        counts = gemm_chain_counts(M, K, H, N, bm, bk, cfg)
    else:
        M, K, N, bm, bn, bk = shape
        counts = gemm_resadd_counts(M, N, K, bm, bn, bk, cfg)
    assert {k: counts[k] for k in COUNT_KEYS} == {k: report[k] for k in COUNT_KEYS}
    assert counts_energy_uj(counts, cfg) == pytest.approx(
        energy_pj(report, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6, rel=1e-12)


def test_a_residual_adds_narrow_column_blocks_reread_its_input():
    """The linear2-shaped add (32 x 3072 x 768) at 32-column blocks re-reads X from DRAM per column
    block (its identity, twice a program, the smaller): more DRAM bytes and energy than at 128
    columns (the program's, not the traffic model's)."""
    cfg = GemminiConfig()
    narrow, wide = (gemm_resadd_counts(32, 768, 3072, 32, bn, 64, cfg) for bn in (32, 128))
    x_rereads = 32 * 3072 * (768 // 32 - 768 // 128)
    identities = 2 * (768 // 32 * 32 ** 2 - 768 // 128 * 128 ** 2)
    assert narrow["dram_bytes_in"] - wide["dram_bytes_in"] == x_rereads + identities
    assert counts_energy_uj(narrow, cfg) > 1.3 * counts_energy_uj(wide, cfg)
