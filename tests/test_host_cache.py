"""The host JIT's disk cache (BACO_CACHE_DIR/host-obj): a kernel compiled once is loaded
from its object without LLVM's optimization or code generation, and computes the same."""
import numpy as np
import pytest

from baco.codegen import host
from baco.kernels.matmul import matmul, matmul_kernel, reference


def run_matmul(a, b):
    matmul_kernel.cache.clear()        # a new CompiledKernel: its JIT engine is built again
    c, info = matmul(a, b, out="int8", scale=1 / 64, relu=True, block=(16, 16, 32))
    return c, info["kernel"]


def test_a_cached_object_is_loaded_without_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("BACO_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (33, 65), dtype=np.int8)
    b = rng.integers(-128, 128, (65, 17), dtype=np.int8)
    first, kernel = run_matmul(a, b)
    (obj,) = (tmp_path / "host-obj").glob("*.o")
    assert obj == host.host_object_path(kernel.llvm_ir, host._target_machine(), tmp_path)

    def no_optimize(*_args, **_kw):
        raise AssertionError("the cached object was compiled again")
    monkeypatch.setattr(host, "optimize", no_optimize)
    again, _ = run_matmul(a, b)
    expected = reference(a, b, out="int8", scale=1 / 64, relu=True, block=(16, 16, 32))
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(again, expected)
    assert [p.name for p in (tmp_path / "host-obj").iterdir()] == [obj.name]    # no temporary left behind


def test_without_a_disk_cache_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("BACO_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    a = np.ones((17, 16), np.int8)
    c, _ = run_matmul(a, np.eye(16, dtype=np.int8))
    np.testing.assert_array_equal(c, reference(a, np.eye(16, dtype=np.int8), out="int8", scale=1 / 64, relu=True,
                                               block=(16, 16, 32)))
    assert not list(tmp_path.rglob("*.o"))


def test_a_missing_kernel_symbol_raises(tmp_path):
    ir = "define void @other() {\n  ret void\n}\n"
    with pytest.raises(RuntimeError, match="no function kernel"):
        host.HostKernel(ir, "kernel", [], None, cache_dir=tmp_path)
