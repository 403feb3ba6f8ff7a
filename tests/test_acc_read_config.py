"""GemminiConfig.acc_read_operands: whether the execute unit reads accumulator rows as
operands (the RTL does; Spike's libgemmini does not). Chained dots need it: without it
they are a located CompilationError, the functional model faults on such a read, and
an ELF's config note records the flag (benchmarks/spike_check.py runs every ELF on the
ISS without it to tell which programs libgemmini cannot run)."""
import dataclasses
import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest

from baco.codegen.host import HostMemory
from baco.errors import CompilationError, KernelFault
from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig
from baco.sim.elfinfo import read_config_note
from baco.sim.functional import GemminiModel
from baco.sim.iss import run_elf

_spec = importlib.util.spec_from_file_location("fused_mlp_example",
                                               Path(__file__).parents[1] / "examples" / "fused_mlp.py")
fm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fm)

NO_ACC_READ = dataclasses.replace(DEFAULT_CONFIG, acc_read_operands=False)


def operands(M=33, K=70, H=30, N=17):
    rng = np.random.default_rng(1)
    return (rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, H), dtype=np.int8),
            rng.integers(-128, 128, (H, N), dtype=np.int8), 1 / 600, 1 / 300)


def chained_dot_line() -> tuple[str, int]:
    src, first = inspect.getsourcelines(fm.fused_mlp_kernel.fn)
    return fm.__file__, first + next(i for i, line in enumerate(src) if "bl.dot(h," in line)


def test_default_config_reads_the_accumulator_and_round_trips():
    assert GemminiConfig().acc_read_operands
    assert GemminiConfig.from_dict(NO_ACC_READ.to_dict()) == NO_ACC_READ
    old = {k: v for k, v in GemminiConfig().to_dict().items() if k != "acc_read_operands"}
    assert GemminiConfig.from_dict(old).acc_read_operands     # notes written before the flag


@pytest.mark.parametrize("target", ["sim", "iss"])
def test_chained_dots_without_accumulator_reads_are_a_located_error(target):
    with pytest.raises(CompilationError, match="cannot read the accumulator") as e:
        fm.fused_mlp(*operands(), config=NO_ACC_READ, target=target)
    assert (e.value.filename, e.value.line) == chained_dot_line()
    assert "bl.dot(h," in str(e.value).splitlines()[-2] and str(e.value).splitlines()[-1].strip() == "^"


def test_plain_gemms_compile_without_accumulator_reads():
    import baco.kernels.matmul as mm
    a, b = np.ones((20, 30), np.int8), np.ones((30, 10), np.int8)
    c, _ = mm.matmul(a, b, config=NO_ACC_READ)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b)


def test_the_model_faults_on_an_accumulator_read_it_does_not_have():
    """The kernel compiled for the RTL, run on a model of libgemmini's Gemmini: the host JIT's
    fault names the chained dot."""
    x, w1, w2, s1, s2 = operands()
    _, info = fm.fused_mlp(x, w1, w2, s1, s2)
    y = np.zeros((x.shape[0], w2.shape[1]), np.int8)
    args = [x, w1, w2, y, x.shape[0], x.shape[1], w1.shape[1], w2.shape[1], s1, s2]
    backend = info["kernel"].backend
    with pytest.raises(KernelFault, match="cannot read the accumulator as an operand") as e:
        backend.run((2, 1), args, model=GemminiModel(NO_ACC_READ, HostMemory([x, w1, w2, y])))
    assert (e.value.filename, e.value.line) == chained_dot_line()


def test_elf_note_records_the_flag_and_the_iss_honours_it(tmp_path):
    x, w1, w2, s1, s2 = operands()
    _, info = fm.fused_mlp(x, w1, w2, s1, s2, target="iss")
    y = np.zeros((x.shape[0], w2.shape[1]), np.int8)
    elf = info["kernel"].build_elf((2, 1), [x, w1, w2, y, x.shape[0], x.shape[1], w1.shape[1], w2.shape[1],
                                            s1, s2], tmp_path / "mlp.elf", expected={3: fm.reference(x, w1, w2, s1, s2)})
    assert read_config_note(elf).acc_read_operands
    assert run_elf(elf, stdout=None).exit_code == 0
    res = run_elf(elf, config=NO_ACC_READ, stdout=None)          # what Spike's libgemmini would do
    assert res.exit_code is None and "cannot read the accumulator" in str(res.fault)
