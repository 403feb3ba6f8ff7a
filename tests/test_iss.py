"""The RISC-V ISS: loading, HTIF console/exit, custom-instruction dispatch,
limits and error reporting, the `baco sim` command line, and the toolchain
pieces it relies on (gemmini_params.h generation, compile_and_link)."""
import io
import re
import textwrap

import pytest

from baco.codegen.toolchain import ToolchainError, compile_and_link, compile_object
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import encode, insn_word
from baco.gemmini.params_header import generate_params_header
from baco.sim import cli
from baco.sim.iss import ECALL, IssError, instruction_words, run_elf


def build(tmp_path, name, source, **kw):
    src = tmp_path / f"{name}.c"
    src.write_text(textwrap.dedent(source))
    return compile_and_link([src], tmp_path / f"{name}.elf", **kw)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """Small programs compiled once for this module."""
    d = tmp_path_factory.mktemp("iss")
    src = {
        "hello": r"""
            #include <stdio.h>
            #include <string.h>
            long answer = 42;
            char buf[32];
            int main(void) {
              snprintf(buf, sizeof buf, "%05d|%-3s|%x", -12, "ab", 0xbeef);
              printf("hello %s %ld %c %lu%%\n", buf, answer, 'z', 18446744073709551615UL);
              volatile double d = 1.5;
              d *= 3.0;
              if (d != 4.5) return 9;
              return strcmp(buf, "-0012|ab |beef") == 0 ? 7 : 8;
            }""",
        "spin": r"""
            volatile long n;
            int main(void) { for (;;) n++; }""",
        "illegal": r"""
            int main(void) { asm volatile(".word 0xffffffff"); return 0; }""",
        "ecall": r"""
            int main(void) { asm volatile("li a7, 64; ecall" ::: "a7"); return 0; }""",
        "wild_store": r"""
            int main(void) { *(volatile long *)0x1000 = 1; return 0; }""",
        "gemmini_fault": r"""
            #include "gemmini.h"
            int main(void) {
              gemmini_config_ld(DIM);
              gemmini_mvin(0x1000, 0);  /* DRAM below RAM: the model faults */
              gemmini_fence();
              return 0;
            }""",
        "gemmini_counter": r"""
            #include <stdio.h>
            #include "gemmini.h"
            int main(void) {
              static elem_t a[DIM][DIM] row_align(1), b[DIM][DIM] row_align(1);
              for (int i = 0; i < DIM; i++) for (int j = 0; j < DIM; j++) a[i][j] = i - j;
              gemmini_config_ld(DIM);
              gemmini_config_st(DIM);
              gemmini_mvin(a, 0);
              gemmini_mvout(b, 0);
              gemmini_fence();
              for (int i = 0; i < DIM; i++) for (int j = 0; j < DIM; j++)
                if (b[i][j] != a[i][j]) return 3;
              uint64_t r;
              ROCC_INSTRUCTION(XCUSTOM_ACC, r, 0, 0, k_COUNTER);
              printf("counter=%lu\n", (unsigned long)r);
              return 0;
            }""",
    }
    return {name: build(d, name, s) for name, s in src.items()}


def test_console_and_exit_code(programs):
    out = io.StringIO()
    res = run_elf(programs["hello"], stdout=out)
    assert res.error is None
    assert res.exit_code == 7
    assert res.console == "hello -0012|ab |beef 42 z 18446744073709551615%\n"
    assert out.getvalue() == res.console
    assert 500 < res.instructions < 100_000
    assert res.gemmini_commands == 0
    assert res.read_memory(res.symbol("answer"), 8) == (42).to_bytes(8, "little")
    with pytest.raises(KeyError):
        res.symbol("no_such_symbol")


def test_instruction_limit_stops_with_message(programs):
    res = run_elf(programs["spin"], max_instructions=50_000, stdout=None)
    assert res.exit_code is None and not res.ok
    assert "instruction limit" in res.error and "50000" in res.error
    assert 50_000 <= res.instructions < 50_100


def test_time_limit_stops_with_message(programs):
    res = run_elf(programs["spin"], timeout_s=0.2, stdout=None)
    assert res.exit_code is None
    assert "time limit" in res.error


def test_illegal_instruction_names_pc_and_word(programs):
    res = run_elf(programs["illegal"], stdout=None)
    assert res.exit_code is None
    assert re.search(r"illegal instruction .* at pc=0x8000[0-9a-f]+ \(word 0xffffffff\)", res.error)


def test_genuine_ecall_is_an_error(programs):
    res = run_elf(programs["ecall"], stdout=None)
    assert "unexpected ecall" in res.error and "a7=64" in res.error


def test_unmapped_store_is_reported(programs):
    res = run_elf(programs["wild_store"], stdout=None)
    assert res.exit_code is None
    assert "0x1000" in res.error and "unmapped" in res.error


def test_gemmini_fault_names_pc_and_command(programs):
    res = run_elf(programs["gemmini_fault"], stdout=None)
    assert res.exit_code is None
    assert "Gemmini fault at pc=0x8" in res.error
    assert "mvin" in res.error and "0x1000" in res.error


def test_custom_words_served_and_rd_written(programs):
    seen = []
    res = run_elf(programs["gemmini_counter"], stdout=None,
                  observers=(lambda name, fields, pc: seen.append((name, pc)),))
    assert res.error is None and res.exit_code == 0, res.error or res.console
    assert res.gemmini_commands == 5
    names = [n for n, _ in seen]
    assert names[:4] == ["config_ld", "config_st", "mvin", "mvout"]
    assert all(pc is not None and pc >= 0x80000000 for _, pc in seen)
    # the counter result travelled through rd into the program
    assert re.fullmatch(r"counter=\d+\n", res.console)


def test_custom_words_replaced_by_ecall(programs):
    from elftools.elf.elffile import ELFFile
    with open(programs["gemmini_counter"], "rb") as f:
        text = ELFFile(f).get_section_by_name(".text")
        code = text.data()
    words = [w for _, n, w in instruction_words(code) if n == 4]
    customs = [w for w in words if w & 0x7F == 0x7B]
    assert len(customs) >= 5
    res = run_elf(programs["gemmini_counter"], stdout=None)
    image = res.read_memory(text["sh_addr"], len(code))
    patched = [w for _, n, w in instruction_words(image) if n == 4]
    assert not any(w & 0x7F == 0x7B for w in patched)
    assert patched.count(ECALL) >= len(customs)


def test_trace_prints_instructions(programs):
    trace = io.StringIO()
    res = run_elf(programs["gemmini_counter"], trace=True, trace_out=trace, stdout=None)
    assert res.exit_code == 0
    lines = trace.getvalue().splitlines()
    assert len(lines) == res.instructions or abs(len(lines) - res.instructions) <= 2
    assert any("gemmini mvin" in line for line in lines)


def test_not_an_elf(tmp_path):
    bad = tmp_path / "x.elf"
    bad.write_bytes(b"not an elf")
    with pytest.raises(IssError, match="not an ELF"):
        run_elf(bad)


def test_insn_word_matches_compiled_instruction(tmp_path):
    # mvin with rs1=a0, rs2=a1 is 0x04B5307B (gemmini-isa.md §1.1)
    assert insn_word(2, 10, 11) == 0x04B5307B
    obj = tmp_path / "one.o"
    # (a label is needed: the assembler rejects an unlabeled section holding only .insn)
    (tmp_path / "one.S").write_text(".text\n.globl f\nf:\n.insn r CUSTOM_3, 3, 2, x0, a0, a1\nret\n")
    compile_object(tmp_path / "one.S", obj)
    assert (0x04B5307B).to_bytes(4, "little") in obj.read_bytes()


def test_compile_error_is_reported(tmp_path):
    with pytest.raises(ToolchainError, match="error"):
        build(tmp_path, "broken", "int main(void) { return undefined_name; }")


@pytest.mark.parametrize("dim,sp_kb,acc_kb", [(16, 256, 64), (4, 16, 8), (32, 512, 128)])
def test_params_header_values(tmp_path, dim, sp_kb, acc_kb):
    cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
    text = generate_params_header(cfg)
    assert f"#define DIM {dim}\n" in text
    assert f"#define BANK_ROWS {cfg.sp_bank_rows}\n" in text
    assert f"#define ACC_ROWS {cfg.acc_rows}\n" in text
    assert f"#define MAX_BLOCK_LEN {cfg.max_block_len}\n" in text
    # the macros compile and agree with the config inside a program
    elf = build(tmp_path, "params", f"""
        #include "gemmini_params.h"
        int main(void) {{
          if (DIM != {dim} || BANK_NUM * BANK_ROWS != {cfg.sp_rows} || ACC_ROWS != {cfg.acc_rows}) return 1;
          if (ACC_SCALE(5, 0.5f) != 2 || ACC_SCALE(7, 0.5f) != 4 || ACC_SCALE(-5, 0.5f) != -2) return 2;
          if (ACC_SCALE(1000, 1.0f) != 127 || ACC_SCALE(-1000, 1.0f) != -128) return 3;
          if (ROUNDING_RIGHT_SHIFT(6, 2) != 2 || ROUNDING_RIGHT_SHIFT(10, 2) != 2) return 4;
          if (ROUNDING_RIGHT_SHIFT(-6, 2) != -2 || ROUNDING_RIGHT_SHIFT(7, 0) != 7) return 5;
          return 0;
        }}""", config=cfg)
    assert run_elf(elf, config=cfg, stdout=None).exit_code == 0


def test_params_header_matches_arith_scaling():
    """The C ACC_SCALE and the Python reference agree on ties and saturation."""
    import numpy as np
    from baco.gemmini.arith import scale_to_int
    x = np.array([5, 7, -5, -7, 1000, -1000, 3], dtype=np.int32)
    got = np.clip(scale_to_int(x, np.float32(0.5)), -128, 127)
    assert got.tolist() == [2, 4, -2, -4, 127, -128, 2]


def test_cli_exit_code_and_summary(programs, capsys):
    assert cli.main([str(programs["hello"])]) == 7
    captured = capsys.readouterr()
    assert captured.out.startswith("hello ")
    assert re.search(r"baco sim: exit 7, \d+ instructions, 0 Gemmini commands", captured.err)


def test_cli_reports_errors(programs, capsys):
    assert cli.main([str(programs["spin"]), "--max-instructions", "1000"]) == cli.RUN_FAILED
    assert "instruction limit" in capsys.readouterr().err
    assert cli.main([str(programs["gemmini_counter"])]) == 0
    assert "5 Gemmini commands" in capsys.readouterr().err
    assert cli.main([str(programs["gemmini_fault"])]) == cli.RUN_FAILED
    assert "Gemmini fault at pc=" in capsys.readouterr().err


def test_cli_config_file(programs, tmp_path, capsys):
    config = GemminiConfig.from_capacity(8, 64, 16)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(config.to_json())
    elf = build(tmp_path, "dim8", """
        #include "gemmini.h"
        static elem_t a[DIM][DIM] row_align(1), b[DIM][DIM] row_align(1);
        int main(void) {
          a[DIM - 1][DIM - 1] = 5;
          gemmini_config_ld(DIM);
          gemmini_config_st(DIM);
          gemmini_mvin(a, 0);
          gemmini_mvout(b, 0);
          gemmini_fence();
          return DIM == 8 && b[DIM - 1][DIM - 1] == 5 ? 0 : 1;
        }""", config=config)
    assert cli.main([str(elf), "--config", str(cfg)]) == 0
    assert cli.main([str(elf), "--dim", "8", "--sp-kb", "64", "--acc-kb", "16"]) == 0
    capsys.readouterr()
    assert cli.main([str(programs["hello"]), "--config", str(cfg), "--dim", "4"]) == 2
    assert "either --config" in capsys.readouterr().err


def test_builds_are_deterministic(tmp_path):
    src = tmp_path / "det.c"
    src.write_text('#include "gemmini.h"\nint main(void) { gemmini_config_ld(DIM); return 0; }\n')
    a = compile_and_link([src], tmp_path / "a.elf").read_bytes()
    b = compile_and_link([src], tmp_path / "b.elf").read_bytes()
    assert a == b


def test_disasm_static_listing_names_commands_and_registers(programs, capsys):
    from baco.sim import disasm
    assert disasm.main([str(programs["gemmini_counter"])]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [line.split()[3] for line in out]
    assert names.count("mvin") == 1 and names.count("mvout") == 1 and names.count("counter") == 1
    assert names.count("config_ex|config_ld|config_st|config_norm") == 2
    assert all("<main+" in line for line in out if "counter" not in line or "rd=" in line)
    assert any("rd=x" in line for line in out if line.split()[3] == "counter")


def test_disasm_run_shows_field_values(programs, capsys):
    from baco.sim import disasm
    assert disasm.main([str(programs["gemmini_counter"]), "--run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in out] == ["config_ld", "config_st", "mvin", "mvout", "counter"]
    assert "local_addr=sp[0]" in out[2] and "rows=16" in out[2] and "cols=16" in out[2]


def test_disasm_triples_and_errors(capsys, tmp_path):
    from baco.sim import disasm
    rs1, rs2 = encode("mvin", dram_addr=0x80001000, local_addr=0x80000010, rows=4, cols=8)
    assert disasm.main(["2", hex(rs1), hex(rs2), "99", "0", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "mvin dram_addr=0x80001000 local_addr=acc[16] cols=8 rows=4"
    assert "unknown Gemmini funct 99" in lines[1]
    assert disasm.main(["1", "2"]) == 2
    (tmp_path / "junk").write_bytes(b"junk")
    assert disasm.main([str(tmp_path / "junk")]) == 2
    assert "not an ELF" in capsys.readouterr().err
