"""`baco build`: a model file becomes one self-checking ELF that `baco sim` runs bit-exact; bad
specs and unsupported operators are one-line errors."""
import subprocess
import sys
import textwrap

import pytest

from baco.cli import main

MODEL = textwrap.dedent("""
    import torch
    def net():
        return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                   torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5))
    class Odd(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 1)
    def odd():
        return Odd()
    def not_a_model():
        return 3
""")


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "models.py"
    path.write_text(MODEL)
    return path


def test_build_runs_bit_exact_on_the_iss(model_file, tmp_path, capsys):
    elf = tmp_path / "net.elf"
    assert main(["build", "--torch", f"{model_file}:net", "--input-shape", "1,3,9,7", "--elf", str(elf),
                 "--run"]) == 0
    out = capsys.readouterr().out
    assert "3 steps (2 on Gemmini, 1 on the CPU)" in out and "bit-exact" in out
    run = subprocess.run([sys.executable, "-m", "baco.cli", "sim", str(elf)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS" in run.stdout and "step 1 s001_adaptive_avg_pool" in run.stdout


@pytest.mark.parametrize("spec,shape,message", [
    ("nocolon", "1,3,8,8", "MODULE:CALLABLE"),
    ("{file}:missing", "1,3,8,8", "no callable 'missing'"),
    ("{file}:not_a_model", "1,3,8,8", "not a torch.nn.Module"),
    ("{file}:net", "1,x,8,8", "--input-shape"),
    ("{dir}/absent.py:net", "1,3,8,8", "absent.py"),
])
def test_bad_arguments_are_one_line_errors(model_file, tmp_path, capsys, spec, shape, message):
    spec = spec.format(file=model_file, dir=tmp_path)
    assert main(["build", "--torch", spec, "--input-shape", shape, "--elf", str(tmp_path / "x.elf")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_unsupported_operator_names_op_and_line(model_file, tmp_path, capsys):
    assert main(["build", "--torch", f"{model_file}:odd", "--input-shape", "2,6", "--elf",
                 str(tmp_path / "x.elf")]) == 1
    err = capsys.readouterr().err
    assert "cumsum" in err and f"{model_file}:8:" in err and "internal error" not in err, err
