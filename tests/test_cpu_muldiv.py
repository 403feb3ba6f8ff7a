"""The ISS's CPU clock with Rocket's iterative multiplier and divider (timing_constants.ROCKET_MULDIV)."""
import re
import textwrap

import pytest

from baco.codegen.toolchain import compile_and_link
from baco.gemmini.config import GemminiConfig
from baco.gemmini.timing_constants import ROCKET_MULDIV
from baco.sim import cli
from baco.sim.iss import muldiv_kind, run_elf
from baco.sim.timing import TimingModel

OP, OP_32 = 0x33, 0x3B


def r_type(opcode: int, funct3: int, funct7: int, rd: int = 5, rs1: int = 6, rs2: int = 7) -> int:
    return funct7 << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode


@pytest.mark.parametrize("word, kind", [
    (r_type(OP, 0, 1), 0), (r_type(OP, 1, 1), 0), (r_type(OP, 2, 1), 0), (r_type(OP, 3, 1), 0),  # mul, mulh*
    (r_type(OP_32, 0, 1), 1),                                                                  # mulw
    (r_type(OP, 4, 1), 2), (r_type(OP, 5, 1), 2), (r_type(OP, 6, 1), 2), (r_type(OP, 7, 1), 2),  # div*, rem*
    (r_type(OP_32, 4, 1), 3), (r_type(OP_32, 7, 1), 3),                                        # divw, remuw
    (r_type(OP, 0, 0), None), (r_type(OP, 0, 0x20), None), (r_type(OP_32, 0, 0), None),        # add, sub, addw
    (0x00003083, None),                                                                        # ld
])
def test_muldiv_kind_decodes_the_m_extension(word, kind):
    assert muldiv_kind(word) == kind


@pytest.fixture(scope="module")
def muldiv_program(tmp_path_factory):
    """100 iterations of one each of mul, mulw, divu and remw, no Gemmini command."""
    d = tmp_path_factory.mktemp("muldiv")
    src = d / "muldiv.c"
    src.write_text(textwrap.dedent(r"""
        volatile long sink;
        int main(void) {
          long a = 1234567, b = 89;
          for (int i = 0; i < 100; i++) {
            long p, q, r, s;
            asm volatile("mul %0, %4, %5\n\tmulw %1, %4, %5\n\tdivu %2, %4, %5\n\tremw %3, %4, %5"
                         : "=&r"(p), "=&r"(q), "=&r"(r), "=&r"(s) : "r"(a + i), "r"(b));
            sink = p + q + r + s;
          }
          return 0;
        }"""))
    return compile_and_link([src], d / "muldiv.elf")


def test_rocket_muldiv_prices_each_multiply_and_divide(muldiv_program):
    cfg = GemminiConfig()
    plain = run_elf(muldiv_program, config=cfg, timing=TimingModel(cfg), stdout=None)
    priced = run_elf(muldiv_program, config=cfg, timing=TimingModel(cfg, ROCKET_MULDIV), stdout=None)
    assert plain.ok and priced.ok
    assert plain.instructions == priced.instructions and plain.muldiv == priced.muldiv
    assert all(n >= 100 for n in plain.muldiv)       # the loop's four, besides what the runtime runs
    assert plain.cpu_cycles == plain.instructions     # one cycle each, nothing to wait for
    mul, div = ROCKET_MULDIV.cpu_mul_cycles, ROCKET_MULDIV.cpu_div_cycles
    extra = [mul - 1, mul / 2 - 1, div - 1, div / 2 - 1]     # beyond the one every instruction costs
    assert priced.cpu_cycles == plain.cpu_cycles + sum(n * e for n, e in zip(plain.muldiv, extra))


def test_cli_rocket_muldiv(muldiv_program, capsys):
    assert cli.main([str(muldiv_program), "--rocket-muldiv"]) == 2
    assert "--rocket-muldiv prices the CPU's cycles: it needs --timing" in capsys.readouterr().err
    assert cli.main([str(muldiv_program), "--timing", "--rocket-muldiv"]) == 0
    err = capsys.readouterr().err
    assert cli.main([str(muldiv_program), "--timing"]) == 0
    plain_err = capsys.readouterr().err
    counts = re.search(r"(\d+) multiplies and (\d+) divides, (\d+) CPU cycles", err)
    plain_counts = re.search(r"(\d+) multiplies and (\d+) divides, (\d+) CPU cycles", plain_err)
    assert counts and plain_counts and counts.group(1, 2) == plain_counts.group(1, 2)
    assert int(counts.group(1)) >= 200 and int(counts.group(2)) >= 200
    assert int(counts.group(3)) > int(plain_counts.group(3))
