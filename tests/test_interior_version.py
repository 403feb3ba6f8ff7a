"""A GEMM-like block program is versioned on all its windows being full (baco.passes.interior):
`if (no boundary clamp bites) { body without clamps } else { body }`, the test over the program's
origin and the K loop's first and last offsets; the two versions issue the same commands."""
import re
from pathlib import Path

import numpy as np
from mlir.passmanager import PassManager

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, explicit_program_version, pieces
from baco.kernels.matmul import matmul_launch, reference
from baco.options import CompileOptions
from baco.passes.interior import _clamped_end, version_interior
from baco.passes.pipeline import run_pipeline
from baco.passes.prefetch import body_ops, nested

IR = Path(__file__).parent / "ir" / "matmul.baco.mlir"


def clamps(op) -> int:
    return sum(_clamped_end(o) is not None for o in nested(op))


def test_the_interior_version_has_no_clamp_and_the_edge_version_all():
    res = run_pipeline(IR.read_text(), CompileOptions.of(loop_ws=False, double_buffer=True), until="loop-conv-ws")
    with res.context:
        cleanup = PassManager.parse("builtin.module(canonicalize,cse)")
        cleanup.run(res.module.operation)
        func = next(op for op in nested(res.module.operation) if op.name == "func.func" and len(op.regions[0].blocks))
        assert clamps(func) >= 6      # A's and B's windows along K, M and N, C's store window
        assert version_interior(func)
        cleanup.run(res.module.operation)
        (branch,) = [op for op in body_ops(func) if op.name == "scf.if" and len(op.regions[1].blocks)]
        then_ops = [o for op in body_ops(branch) for o in nested(op)]
        else_ops = [o for o in branch.regions[1].blocks[0].operations]
        assert sum(_clamped_end(o) is not None for o in then_ops) == 0     # removed, the lead rows' folded
        assert sum(clamps(o.operation) for o in else_ops) >= 6     # the edge version keeps them
        # the test reads the program's origin and the K loop's bounds: nothing of the body runs before it
        assert not any(op.name in ("memref.alloc", "scf.for", "linalg.matmul") for op in body_ops(func)
                       if op != branch)


def test_interior_and_edge_programs_of_one_launch_are_bit_exact():
    """65 x 48 x 64 at 32/16/32: programs of full blocks and a last row block of one row."""
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, (65, 64), dtype=np.int8)
    b = rng.integers(-128, 128, (64, 48), dtype=np.int8)
    bias = rng.integers(-3000, 3000, 48, dtype=np.int32)
    schedule = GemmSchedule(32, 16, 32, double_buffer=True)
    launch = matmul_launch(a, b, bias=bias, out="int8", scale=0.02, schedule=schedule, config=GemminiConfig())
    launch.kernel[launch.grid](*launch.args, target="sim", **dict(launch.options, loop_ws=False))
    expected = reference(a, b, bias=bias, out="int8", scale=0.02, schedule=schedule)
    np.testing.assert_array_equal(launch.y, expected)


def test_the_ragged_k_version_keeps_only_the_k_windows_ends():
    """Where M and N's windows are full but a K window is short: M and N's clamps removed, the K
    windows' ends min(x, D), their starts unclamped (no lead rows); the edge version keeps all."""
    res = run_pipeline(IR.read_text(), CompileOptions.of(loop_ws=False, double_buffer=True), until="loop-conv-ws")
    with res.context:
        cleanup = PassManager.parse("builtin.module(canonicalize,cse)")
        cleanup.run(res.module.operation)
        func = next(op for op in nested(res.module.operation) if op.name == "func.func" and len(op.regions[0].blocks))
        assert version_interior(func)
        cleanup.run(res.module.operation)
        (branch,) = [op for op in body_ops(func) if op.name == "scf.if" and len(op.regions[1].blocks)]
        (k_full,) = [op for op in body_ops(branch) if op.name == "scf.if"]
        ragged_ops = [o for b in k_full.regions[1].blocks for op in b.operations for o in nested(op.operation)]
        assert sum(_clamped_end(o) is not None for o in ragged_ops) == 0
        assert not any(o.name == "arith.maxsi" for o in ragged_ops)
        mins = [o for o in ragged_ops if o.name == "arith.minsi"]
        assert len(mins) == 2          # A's and B's K window ends
        assert sum(clamps(o.operation) for o in branch.regions[1].blocks[0].operations) >= 6     # the edge version


def test_ragged_k_programs_are_bit_exact_and_classified():
    """97 x 48 x 250 at 32/16/64: ragged-K programs (full M and N blocks, K steps 64, 64, 64, 58),
    edge ones (the last row block); the model's classifier says which."""
    rng = np.random.default_rng(6)
    a = rng.integers(-128, 128, (97, 250), dtype=np.int8)
    b = rng.integers(-128, 128, (250, 48), dtype=np.int8)
    schedule = GemmSchedule(32, 16, 64, double_buffer=True)
    launch = matmul_launch(a, b, out="int32", schedule=schedule, config=GemminiConfig())
    launch.kernel[launch.grid](*launch.args, target="sim", **dict(launch.options, loop_ws=False))
    np.testing.assert_array_equal(launch.y, reference(a, b, out="int32", schedule=schedule))
    ksteps = pieces(250, 64)
    assert explicit_program_version(32, 16, ksteps, schedule) == "ragged_k"
    assert explicit_program_version(1, 16, ksteps, schedule) == "edge"
    assert explicit_program_version(32, 16, pieces(256, 64), schedule) == "interior"
    assert explicit_program_version(32, 16, pieces(17, 64), schedule) == "ragged_k"   # K < the block: one short step
    assert explicit_program_version(32, 16, pieces(1, 64), schedule) == "interior"    # K = 1: the K loop folded


def _launch_stage_ir(tmp_path, monkeypatch, M, N, K, schedule, seed):
    """An explicit-stream launch of an M x N x K GEMM with a bias, int8 out, compiled for the ISS
    (its integers and grid specialized), run there against the reference; its linalg-to-instgem IR."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    bias = rng.integers(-3000, 3000, N, dtype=np.int32)
    launch = matmul_launch(a, b, bias=bias, out="int8", scale=0.02, schedule=schedule, config=GemminiConfig())
    dump = tmp_path / f"{M}x{N}x{K}"
    monkeypatch.setenv("BACO_DUMP_IR", str(dump))
    launch.compiled("iss", loop_ws=False).run(launch.grid, launch.runtime_args())
    np.testing.assert_array_equal(launch.y, reference(a, b, bias=bias, out="int8", scale=0.02, schedule=schedule))
    (stage,) = dump.glob("*-linalg-to-instgem.mlir")
    return stage.read_text()


def test_the_last_program_of_a_short_axis_runs_its_own_copy(tmp_path, monkeypatch):
    """Compiled for its grid, a launch whose last row and last column of programs hold short
    windows (49 x 40 at 32/16: rows 32 + 17, columns 16 + 16 + 8) versions its edge code on those
    programs' ids (1 along M, 2 along N), whose windows then have constant extents; a launch of
    whole blocks (64 x 48) has no such test. Both bit-exact on the ISS."""
    schedule = GemmSchedule(32, 16, 32, double_buffer=True)
    ragged = _launch_stage_ir(tmp_path, monkeypatch, 49, 40, 64, schedule, 7)
    whole = _launch_stage_ir(tmp_path, monkeypatch, 64, 48, 64, schedule, 8)

    def last_program_tests(text):
        ids = dict(re.findall(r"(%\w+) = call @baco_program_id\(%c(\d)_i64\)", text))
        return sorted((int(ids[v]), int(c)) for v, c in re.findall(r"arith\.cmpi eq, (%\w+), %c(\d+)_i64", text)
                      if v in ids)
    assert last_program_tests(ragged) == [(0, 1), (1, 2)]
    assert last_program_tests(whole) == []
