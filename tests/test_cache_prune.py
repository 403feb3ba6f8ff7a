"""The disk cache's size limit (baco.compiler.prune_cache, BACO_CACHE_MAX_MB): least recently used
files go first, files used within the grace period stay, a process that writes the cache prunes it
at most once an interval, and a kernel keeps running when its cached files are pruned."""
import os
import time

import numpy as np
import pytest

from baco import compiler
from baco.kernels.matmul import matmul, matmul_kernel, reference


def _file(path, size, age_s):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def test_least_recently_used_files_go_first_until_the_limit(tmp_path):
    old = _file(tmp_path / "a.ll", 1000, 3 * 3600)
    older = _file(tmp_path / "host-obj" / "b.o", 1000, 4 * 3600)
    recent = _file(tmp_path / "riscv" / "c.elf", 1000, 2 * 3600)
    young = _file(tmp_path / "d.ll", 1000, 60)
    assert compiler.prune_cache(tmp_path, 2500, grace_s=3600) == 2000
    assert not older.exists() and not old.exists()
    assert recent.exists() and young.exists()


def test_files_within_the_grace_period_stay_over_the_limit(tmp_path):
    young = [_file(tmp_path / f"{i}.ll", 1000, 10 * i) for i in range(3)]
    assert compiler.prune_cache(tmp_path, 0, grace_s=3600) == 0
    assert all(p.exists() for p in young)


@pytest.mark.parametrize("value", ["lots", "0", "-5", "nan"])
def test_a_bad_limit_is_an_error_naming_it(monkeypatch, value):
    monkeypatch.setenv("BACO_CACHE_MAX_MB", value)
    with pytest.raises(ValueError, match="BACO_CACHE_MAX_MB"):
        compiler.cache_limit_bytes()


def test_compiling_prunes_at_most_once_an_interval(tmp_path, monkeypatch):
    monkeypatch.setenv("BACO_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("BACO_CACHE_MAX_MB", "0.5")
    stale = _file(tmp_path / "stale.ll", 2**20, 2 * compiler.PRUNE_GRACE_S)
    a = np.arange(17 * 33, dtype=np.int64).reshape(17, 33).astype(np.int8)
    b = np.ones((33, 65), np.int8)
    matmul_kernel.cache.clear()
    c, _ = matmul(a, b, out="int8", scale=1 / 64, relu=True, block=(16, 16, 32))
    np.testing.assert_array_equal(c, reference(a, b, out="int8", scale=1 / 64, relu=True, block=(16, 16, 32)))
    assert not stale.exists() and (tmp_path / ".pruned").exists()
    again = _file(tmp_path / "stale.ll", 2**20, 2 * compiler.PRUNE_GRACE_S)
    matmul_kernel.cache.clear()
    written = len(list(tmp_path.glob("*.ll")))
    matmul(a, b, out="int8", scale=1 / 64, relu=True, block=(16, 32, 32))     # another kernel: written
    assert len(list(tmp_path.glob("*.ll"))) == written + 1
    assert again.exists()      # pruned less than PRUNE_INTERVAL_S ago: not again


def test_an_iss_kernel_runs_after_its_cached_runner_is_pruned(tmp_path, monkeypatch):
    monkeypatch.setenv("BACO_CACHE_DIR", str(tmp_path))
    a = np.arange(17 * 33, dtype=np.int64).reshape(17, 33).astype(np.int8)
    b = np.ones((33, 17), np.int8)
    expected = reference(a, b, out="int8", scale=1 / 64, relu=False, block=(16, 16, 32))
    for _ in range(2):      # the second compile finds the runner in the cache
        matmul_kernel.cache.clear()
        c, _ = matmul(a, b, out="int8", scale=1 / 64, block=(16, 16, 32), target="iss")
        np.testing.assert_array_equal(c, expected)
    assert compiler.prune_cache(tmp_path, 0, grace_s=0) > 0
    assert not list((tmp_path / "riscv").glob("*.elf"))
    c, _ = matmul(a, b, out="int8", scale=1 / 64, block=(16, 16, 32), target="iss")
    np.testing.assert_array_equal(c, expected)
