"""Every `baco` subcommand's error paths: a bad file, input of the wrong stage, a bad
option each give one line on stderr (a located error in an input file adds its source
line and a caret) and a non-zero exit, never a traceback, a usage block or a crash;
Ctrl-C exits 130 quietly; ELFs carry the GemminiConfig they were built for."""
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from baco.cli import main
from baco.codegen import toolchain
from baco.gemmini.config import GemminiConfig
from baco.sim.elfinfo import read_config_note

IR = Path(__file__).parent / "ir" / "matmul.baco.mlir"
CAPACITY = Path(__file__).parent / "ir" / "gemmini-placement" / "error_capacity.mlir"
# the line of its first 128-row block (the op placement reports)
CAPACITY_LINE = next(i for i, line in enumerate(CAPACITY.read_text().splitlines(), 1)
                     if "memref.alloc" in line and "128x" in line and not line.startswith("//"))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "main.c").write_text("int main(void) { return 0; }\n")
    (d / "loop.c").write_text('#include <stdio.h>\nint main(void) { puts("spinning"); volatile long x = 0; '
                              "for (;;) x++; return 0; }\n")      # puts: the line goes out at its newline
    (d / "garbage.txt").write_text("garbage\n")
    (d / "empty.mlir").write_text("")
    toolchain.compile_and_link([d / "main.c"], d / "ok.elf")
    toolchain.compile_and_link([d / "main.c"], d / "dim8.elf", config=GemminiConfig.from_capacity(8, 64, 16))
    toolchain.compile_and_link([d / "loop.c"], d / "loop.elf")
    toolchain.compile_object(d / "main.c", d / "main.o")
    assert main(["opt", str(IR), "--to", "bufferize", "-o", str(d / "stage2.mlir")]) == 0
    assert main(["opt", str(IR), "-o", str(d / "llvm_dialect.mlir")]) == 0
    assert main(["translate", str(IR), "-o", str(d / "kernel.ll")]) == 0
    return d


def run(capsys, *argv):
    """(exit code, stderr) of `baco argv...`; stderr must be one line of errors, no traceback."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


CASES = [  # (argv with {d} for the fixture folder, exit code, message)
    ("opt {d}/nope.mlir", 2, "baco opt: {d}/nope.mlir: No such file or directory"),
    ("opt {d}/main.o", 2, "not a text file"),
    ("opt {d}/empty.mlir", 1, "empty input"),
    ("opt {d}/garbage.txt", 1, "baco opt: {d}/garbage.txt:1:1: error: invalid input IR: custom op 'garbage' is "
                               "unknown"),
    (f"opt {CAPACITY} --pass gemmini-placement --dim 16 --sp-kb 8 --acc-kb 4", 1,
     f"baco opt: {CAPACITY}:{CAPACITY_LINE}:"),          # a pass's error on hand-written IR names the file
    ("opt {d}/garbage.txt --pass nosuch", 2, "baco opt: error: argument --pass: invalid choice: 'nosuch'"),
    ("opt {d}/garbage.txt --dim sixteen", 2, "baco opt: error: argument --dim: invalid int value: 'sixteen'"),
    ("translate {d}/garbage.txt --dataflow XS", 2, "baco translate: error: argument --dataflow: invalid choice"),
    ("llc {d}/kernel.ll", 2, "baco llc: error: the following arguments are required: -o/--output"),
    ("sim", 2, "baco sim: error: the following arguments are required"),
    ("sim {d}/ok.elf --bogus", 2, "baco sim: error: unrecognized arguments: --bogus"),
    ("disasm {d}/ok.elf --bogus", 2, "baco disasm: error: unrecognized arguments: --bogus"),
    ("run --bogus", 2, "baco run: error:"),
    ("sweep --bogus", 2, "baco sweep: error:"),
    ("tune --bogus", 2, "baco tune: error:"),
    (f"opt {IR} --pass linalg-to-instgem", 1, "the input of stage 'baco-to-linalg', not the input of stage "
                                              "'linalg-to-instgem'"),
    ("opt {d}/stage2.mlir --pass baco-to-linalg", 1, "the input of stage 'gemmini-placement'"),
    (f"opt {IR} --from gemmini-placement --to bufferize", 1, "not the input of stage 'gemmini-placement'"),
    ("opt {d}/stage2.mlir --from gemmini-placement --to bufferize", 1, "'bufferize' comes before stage "
                                                                      "'gemmini-placement'"),
    ("opt {d}/llvm_dialect.mlir", 1, "already LLVM dialect"),
    (f"opt {IR} --pass bufferize --to instgem-to-llvm", 2, "cannot be combined"),
    ("translate {d}/nope.mlir", 2, "No such file or directory"),
    (f"translate {IR} --from llvm", 1, "--from llvm needs LLVM-dialect input"),
    (f"translate {IR} --from bufferize", 1, "not the input of stage 'bufferize'"),
    ("translate {d}/garbage.txt", 1, "invalid input IR"),
    ("translate {d}/empty.mlir", 1, "empty input"),
    ("translate {d}/ok.elf", 2, "not a text file"),
    ("llc {d}/kernel.ll -o {d}/x.elf", 2, "an ELF needs a main()"),
    ("llc {d}/kernel.ll -o {d}/x.bin", 2, "name the output x.o"),
    (f"llc {IR} -o {{d}}/x.o", 2, "not valid LLVM IR: <string>:1:8: error: expected 'module asm' "
                                  "(MLIR? run `baco translate` first)"),
    ("llc {d}/garbage.txt -o {d}/x.o", 2, "not valid LLVM IR"),
    ("llc {d}/nope.ll -o {d}/x.o", 2, "nope.ll: No such file or directory"),
    ("llc {d}/kernel.ll -o {d}/x.elf --main {d}/nope.c", 2, "nope.c: No such file or directory"),
    ("sim {d}/nope.elf", 2, "nope.elf: No such file or directory"),
    ("sim {d}/garbage.txt", 2, "not an ELF file"),
    ("sim {d}/main.o", 2, "a relocatable object file, not an executable"),
    ("sim {d}/ok.elf --dim 8", 2, "was built for another Gemmini configuration: dim 8 (ELF: 16)"),
    ("sim {d}/ok.elf --timeout -1", 2, "argument --timeout: expected a positive number of seconds, got '-1'"),
    ("sim {d}/ok.elf --max-instructions 1.5", 2, "expected a positive whole count"),
    ("sim {d}/ok.elf --max-instructions lots", 2, "expected a positive whole count"),
    ("sim {d}/ok.elf --config {d}/nope.json", 2, "nope.json: No such file or directory"),
    ("disasm {d}/nope.elf", 2, "nope.elf: No such file or directory"),
    ("disasm {d}/garbage.txt", 2, "not an ELF file"),
    ("disasm {d}/main.o --run", 2, "a relocatable object file"),
    ("disasm 1 2", 2, "expected (funct, rs1, rs2) triples, got 2 values"),
    ("disasm {d}/ok.elf --run --timeout 0", 2, "expected a positive number of seconds"),
    ("tune --problem {d}/nope.yaml --out {d}/t", 2, "nope.yaml: No such file or directory"),
    ("tune --problem {d}/garbage.txt --out {d}/t", 2, "not a Timeloop problem"),
    ("tune --problem {d}/main.o --out {d}/t", 2, "not a YAML file"),
    ("tune --network no_such_net --out {d}/t", 2, "no workload folder 'no_such_net'"),
    ("tune --op gemm --M 16 --N 16 --K 16 --budget -1 --out {d}/t", 2, "--budget must be a positive number"),
    ("tune --op gemm --M 0 --N 16 --K 16 --method default --out {d}/t", 2, "must be >= 1, got 0"),
    ("tune --torch no_such_module:model --input-shape 1,2 --out {d}/t", 2, "No module named 'no_such_module'"),
    ("tune --op gemm --M 16 --N 16 --K 16", 2, "the following arguments are required: --out"),
    ("nosuchtool", 2, "unknown command 'nosuchtool'"),
]


@pytest.mark.parametrize("argv,code,message", CASES, ids=[c[0].split()[0] + ":" + c[2][:30] for c in CASES])
def test_error_paths(files, capsys, argv, code, message):
    got, err = run(capsys, *argv.format(d=files).split())
    assert got == code, err
    if argv == "nosuchtool":                 # the error, then the list of commands
        assert err.splitlines()[0] == "baco: unknown command 'nosuchtool'"
        return
    assert "usage:" not in err                # argparse errors too are one line
    lines = err.strip().splitlines()
    assert lines[0].startswith(message.format(d=files)) or message.format(d=files) in lines[0], err
    if len(lines) > 1:                       # a located error: its source line and a caret
        assert len(lines) == 3 and lines[2].strip() == "^", err


def test_good_paths_exit_zero(files, capsys):
    assert run(capsys, "opt", "--list")[0] == 0
    assert run(capsys, "translate", files / "llvm_dialect.mlir", "-o", files / "x.ll")[0] == 0
    assert run(capsys, "llc", files / "kernel.ll", "-o", files / "k.elf", "--main", files / "main.c")[0] == 0
    assert run(capsys, "sim", files / "ok.elf", "--max-instructions", "1e6")[0] == 0
    assert run(capsys, "sim", files / "ok.elf", "--max-instructions", "2M", "--timeout", "30")[0] == 0
    assert run(capsys, "sim", files / "dim8.elf")[0] == 0      # the ELF's own config by default
    assert run(capsys, "sim", files / "dim8.elf", "--dim", "8", "--sp-kb", "64", "--acc-kb", "16")[0] == 0


def test_elfs_record_their_gemmini_config(files):
    assert read_config_note(files / "ok.elf") == GemminiConfig()
    assert read_config_note(files / "dim8.elf") == GemminiConfig.from_capacity(8, 64, 16)
    assert read_config_note(files / "main.o") is None


def test_sigint_exits_130_quietly(files):
    proc = subprocess.Popen([sys.executable, "-m", "baco.cli", "sim", str(files / "loop.elf")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # its first line: the program now spins on the ISS (a fixed wait flaked under load)
        assert proc.stdout.readline() == "spinning\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.strip() == "baco sim: interrupted"


def test_translate_from_llvm_on_baco_ir_does_not_crash(files):
    """It used to segfault (exit 139) inside MLIR's translation."""
    proc = subprocess.run([sys.executable, "-m", "baco.cli", "translate", str(IR), "--from", "llvm"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert one_line(proc.stderr).startswith("baco translate: --from llvm needs LLVM-dialect input")
