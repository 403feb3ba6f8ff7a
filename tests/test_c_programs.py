"""The bare-metal Gemmini test programs in tests/c/, compiled once per session
and run unchanged on the ISS. Each program checks Gemmini's results against
its own plain-C reference and exits 0 only when they are bit-exact; the
DIM-generic ones also run at DIM 4 and 32 (their gemmini_params.h comes from
the config)."""
import os
from pathlib import Path

import numpy as np
import pytest

from baco.codegen.toolchain import compile_and_link
from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig
from baco.sim import cli, external
from baco.sim.iss import run_elf
from baco.sim.timing import TimingModel

C_DIR = Path(__file__).parent / "c"
PROGRAMS = sorted(p.stem for p in C_DIR.glob("*.c"))
CONFIGS = {
    "dim16": DEFAULT_CONFIG,
    "dim4": GemminiConfig.from_capacity(4, 16, 8),
    "dim32": GemminiConfig.from_capacity(32, 256, 64),
}
# Programs run at the other sizes too (slow ones are marked below).
DIM_GENERIC = ["mvin_mvout", "matmul_ws", "matmul_os", "loop_ws", "transpose", "transpose_ragged", "scale_relu",
               "matmul_perf", "resadd", "conv_first_layer"]
# Programs that time themselves (rdcycle, counters) run with the cycle model attached.
TIMED = {"matmul_perf"}


class Builds:
    """Compiles each (program, config) on first use into one session directory."""

    def __init__(self, root: Path):
        self.root, self.elfs = root, {}

    def elf(self, program: str, config_name: str) -> Path:
        key = (program, config_name)
        if key not in self.elfs:
            out = self.root / config_name / f"{program}.elf"
            self.elfs[key] = compile_and_link([C_DIR / f"{program}.c"], out, include_dirs=[C_DIR],
                                              config=CONFIGS[config_name])
        return self.elfs[key]


@pytest.fixture(scope="session")
def builds(tmp_path_factory):
    return Builds(tmp_path_factory.mktemp("cprogs"))


def run(builds, program, config_name, timing=None):
    if timing is None and program in TIMED:
        timing = TimingModel(CONFIGS[config_name])
    res = run_elf(builds.elf(program, config_name), config=CONFIGS[config_name], stdout=None,
                  max_instructions=200_000_000, timeout_s=300, timing=timing)
    assert res.error is None, f"{program}: {res.error}\n{res.console}"
    assert res.exit_code == 0, f"{program} exited {res.exit_code}:\n{res.console}"
    assert "PASS" in res.console
    return res


def test_at_least_eight_programs():
    assert len(PROGRAMS) >= 8, PROGRAMS


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_default_config(builds, program):
    res = run(builds, program, "dim16")
    assert res.gemmini_commands > 0


@pytest.mark.parametrize("program", ["matmul_ws", "loop_ws", "resadd", "transpose_ragged", "conv_first_layer"])
@pytest.mark.parametrize("config_name", ["dim4", "dim32"])
def test_program_other_dims(builds, program, config_name):
    run(builds, program, config_name)


@pytest.mark.slow
@pytest.mark.parametrize("program", [p for p in DIM_GENERIC if p not in ("matmul_ws", "loop_ws", "resadd", "transpose_ragged", "conv_first_layer")])
@pytest.mark.parametrize("config_name", ["dim4", "dim32"])
def test_program_other_dims_slow(builds, program, config_name):
    run(builds, program, config_name)


@pytest.mark.parametrize("config_name", ["dim16", "dim4"])
def test_program_times_itself(builds, config_name):
    """tiled_matmul_ws_perf-style: rdcycle around the kernel measures the cycle model's time
    for it (the CPU waits at the fence), and the counters report what the model counted."""
    cfg = CONFIGS[config_name]
    tm = TimingModel(cfg)
    res = run(builds, "matmul_perf", config_name, timing=tm)
    out = dict(line.split(": ", 1) for line in res.console.splitlines() if ": " in line)
    cycles = int(out["Cycles taken"])
    report = tm.report()
    gemmini_span = tm.finish - tm.first_dispatch
    assert report["macs"] / cfg.dim ** 2 <= cycles
    # the kernel is everything Gemmini does, bracketed by the CPU's few instructions around it
    assert gemmini_span - 50 <= cycles <= gemmini_span + 200
    assert 0 < int(out["Utilization"].rstrip("%")) <= 100
    assert int(out["RDMA_BYTES_REC"]) == report["dram_bytes_in"] > 0
    assert int(out["WDMA_BYTES_SENT"]) == report["dram_bytes_out"] == (4 * cfg.dim) ** 2
    assert int(out["LOAD_ACTIVE_CYCLE"]) == report["load_busy"]
    assert int(out["EXE_ACTIVE_CYCLE"]) == report["execute_busy"]
    assert int(out["STORE_ACTIVE_CYCLE"]) == report["store_busy"]
    assert 0 < int(out["LOOP_MATMUL_ACTIVE_CYCLES"]) <= cycles
    assert res.cpu_cycles >= res.instructions + cycles - 100


def test_cycle_csrs_without_timing_count_instructions(builds):
    """No cycle model: Gemmini takes no time and the hart's cycle CSR counts instructions;
    counters read 0 (and the program's counter checks fail rather than pass vacuously)."""
    res = run_elf(builds.elf("matmul_perf", "dim16"), config=CONFIGS["dim16"], stdout=None)
    assert res.exit_code == 1 and res.cpu_cycles == res.instructions
    assert "RDMA_BYTES_REC: 0" in res.console


def test_printf_program_output(builds):
    res = run(builds, "matmul_ws", "dim16")
    lines = res.console.splitlines()
    assert lines[0].startswith("C[0] =") and len(lines[0].split()) == 2 + 16
    assert lines[-1] == "matmul_ws: PASS (DIM=16, K=32)"


def test_loop_ws_expands_in_model(builds):
    """LOOP_WS reaches the model as one command and is observed as its primitive stream."""
    seen = []
    res = run_elf(builds.elf("loop_ws", "dim16"), stdout=None,
                  observers=(lambda name, fields, pc: seen.append(name),))
    assert res.exit_code == 0, res.console
    assert "loop_ws" not in seen
    assert seen.count("mvin") > 0 and seen.count("preload") > 0 and seen.count("mvout") > 0


@pytest.mark.skipif(not Path(os.environ.get(external.SPIKE_EXTLIB_ENV, "/nonexistent")).is_file(),
                    reason=f"Spike's Gemmini library is not installed (set {external.SPIKE_EXTLIB_ENV})")
@pytest.mark.parametrize("program", ["transpose", "transpose_ragged", "loop_ws", "conv_loop_ws", "conv_first_layer"])
def test_program_on_spike(builds, program, capfd):
    """The same ELFs pass on Spike with libgemmini: its reading of the ISA agrees with the
    model's (transpose_ragged tells apart where a transposed operand's rows/cols apply,
    conv_first_layer whether packed pixel copies are written at scratchpad row 0)."""
    assert external.run_spike(builds.elf(program, "dim16"), timeout_s=300) == 0
    assert f"{program}: PASS" in capfd.readouterr().out


def test_program_through_cli(builds, capsys):
    assert cli.main([str(builds.elf("transpose", "dim16"))]) == 0
    captured = capsys.readouterr()
    assert "transpose: PASS" in captured.out
    assert "Gemmini commands" in captured.err


def test_wrong_config_is_caught(builds):
    """A DIM=16 program on a DIM=4 model fails loudly rather than computing garbage."""
    res = run_elf(builds.elf("matmul_ws", "dim16"), config=CONFIGS["dim4"], stdout=None)
    assert res.exit_code != 0
    assert res.error is not None or "mismatch" in res.console


PACKING_PROGRAM = r"""
#include <stdint.h>
struct record { uint64_t funct, rs1, rs2; };
struct record recorded[64];
int n_recorded;
#define ROCC_INSTRUCTION_RS1_RS2(x, a, b, f) \
  (recorded[n_recorded].funct = (f), recorded[n_recorded].rs1 = (uint64_t)(a), \
   recorded[n_recorded].rs2 = (uint64_t)(b), n_recorded++)
#include "gemmini.h"

int main(void)
{
  gemmini_extended3_config_ex(WEIGHT_STATIONARY, RELU, 5, 0.5, 3, 2, true, false, false);
  gemmini_extended5_config_ld(1234, 2.0, true, 7, 3, 2);
  gemmini_extended2_config_st(48, RELU, 0.25, 2, 3, 10, 4, 5, 11, 12, 1, 2);
  gemmini_extended_mvin(0x80001000, 17, 13, 9);
  gemmini_extended_mvin2(0x80002000, ACC_ADDR_BIT | 3, 16, 4);
  gemmini_extended_mvin3(0, 40, 64, 16);
  gemmini_extended_mvout(0x80003000, ACC_ADDR_BIT | ACC_READ_FULL_BIT | 8, 15, 14);
  gemmini_extended_preload(GARBAGE_ADDR, ACC_ADDR_BIT | ACC_ACCUMULATE_BIT | 5, 3, 4, 5, 6);
  gemmini_extended_compute_preloaded(1, 2, 3, 4, 5, 6);
  gemmini_extended_compute_accumulated(7, GARBAGE_ADDR, 8, 9, 10, 11);
  gemmini_loop_ws(3, 4, 5, 1, 2, 3, 0x80010000, 0x80020000, 0, 0x80030000, 40, 50, 60, 70,
                  true, false, true, false, true, RELU, 1, 2, false);
  gemmini_loop_conv_ws(1, 30, 31, 3, 64, 28, 29, 14, 15, 2, 1, 3, 1, 2, 2, 0,
                       1, 7, 8, 16, 3, 3, 3, 1, 2, 3, 4, 0, 1, 1, 0, 15, 16,
                       0x80040000, 0x80050000, 0x80060000, 0x80070000,
                       false, true, false, true, false, RELU, false, true, false, false, 2,
                       3, 64, 64, false, 1, 2);
  gemmini_flush(1);
  return 0;
}
"""


def test_gemmini_header_packing(tmp_path):
    """Every gemmini.h macro packs rs1/rs2 exactly as the ISA table encodes them."""
    from baco.gemmini.isa import COMMANDS, GARBAGE_ADDR, encode
    f32 = lambda x: int(np.float32(x).view(np.uint32))  # noqa: E731
    acc, accumulate, full = 1 << 31, 1 << 30, 1 << 29
    expected = [
        ("config_ex", dict(dataflow=1, activation=1, in_shift=5, acc_scale=f32(0.5), c_stride=3, a_stride=2,
                           a_transpose=1)),
        ("config_ld", dict(stride=1234, scale=f32(2.0), shrink=1, block_stride=7, pixel_repeats=3, state_id=2)),
        ("config_st", dict(stride=48, activation=1, acc_scale=f32(0.25), pool_stride=2, pool_size=3,
                           pool_out_dim=10, porows=4, pocols=5, orows=11, ocols=12, upad=1, lpad=2)),
        ("mvin", dict(dram_addr=0x80001000, local_addr=17, cols=13, rows=9)),
        ("mvin2", dict(dram_addr=0x80002000, local_addr=acc | 3, cols=16, rows=4)),
        ("mvin3", dict(dram_addr=0, local_addr=40, cols=64, rows=16)),
        ("mvout", dict(dram_addr=0x80003000, local_addr=acc | full | 8, cols=15, rows=14)),
        ("preload", dict(bd_addr=GARBAGE_ADDR, c_addr=acc | accumulate | 5, bd_cols=3, bd_rows=4, c_cols=5,
                         c_rows=6)),
        ("compute_preloaded", dict(a_addr=1, bd_addr=2, a_cols=3, a_rows=4, bd_cols=5, bd_rows=6)),
        ("compute_accumulated", dict(a_addr=7, bd_addr=GARBAGE_ADDR, a_cols=8, a_rows=9, bd_cols=10,
                                     bd_rows=11)),
        ("loop_ws_config_bounds", dict(max_i=3, max_j=4, max_k=5, pad_i=1, pad_j=2, pad_k=3)),
        ("loop_ws_config_addrs_ab", dict(a_addr=0x80010000, b_addr=0x80020000)),
        ("loop_ws_config_addrs_dc", dict(d_addr=0, c_addr=0x80030000)),
        ("loop_ws_config_strides_ab", dict(a_stride=40, b_stride=50)),
        ("loop_ws_config_strides_dc", dict(d_stride=60, c_stride=70)),
        ("loop_ws", dict(a_transpose=1, full_c=1, ex_accumulate=1, activation=1, a_spad_id=1, b_spad_id=2)),
        ("loop_conv_ws_config_1", dict(batch_size=1, in_row_dim=30, in_channels=3, out_channels=64,
                                       out_row_dim=28, pool_out_row_dim=14, out_col_dim=29, stride=2,
                                       padding=1)),
        ("loop_conv_ws_config_2", dict(kernel_dim=3, pool_size=2, pool_stride=2, pool_padding=0,
                                       pool_out_col_dim=15, batches=1, porows=7, pocols=8, pochs=16)),
        ("loop_conv_ws_config_3", dict(krows=3, kcols=3, kchs=3, lpad=1, in_col_dim=31, rpad=2, upad=3,
                                       dpad=4, plpad=0)),
        ("loop_conv_ws_config_4", dict(kernel_dilation=1, prpad=1, pupad=1, pdpad=0, orows=15, ocols=16,
                                       in_stride=3, weight_stride=64, out_stride=64)),
        ("loop_conv_ws_config_5", dict(weights_addr=0x80040000, output_addr=0x80050000)),
        ("loop_conv_ws_config_6", dict(bias_addr=0x80060000, input_addr=0x80070000)),
        ("loop_conv_ws", dict(no_pool=1, wrot180=1, activation=1, trans_weight_1203=1,
                              max_pixels_per_row=2, a_spad_id=1, b_spad_id=2)),
        ("flush", dict(skip=1)),
    ]
    src = tmp_path / "packing.c"
    src.write_text(PACKING_PROGRAM)
    elf = compile_and_link([src], tmp_path / "packing.elf")
    res = run_elf(elf, stdout=None)
    assert res.exit_code == 0, res.error or res.console
    n = int.from_bytes(res.read_memory(res.symbol("n_recorded"), 4), "little")
    raw = np.frombuffer(res.read_memory(res.symbol("recorded"), 24 * n), dtype=np.uint64).reshape(n, 3)
    assert n == len(expected)
    for (name, fields), (funct, rs1, rs2) in zip(expected, raw.tolist()):
        assert funct == COMMANDS[name].funct, name
        assert (rs1, rs2) == encode(name, **fields), name
