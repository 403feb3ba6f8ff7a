"""The C library's matmul stream (baco.sim.clib): run on the functional model it computes
Gemmini's matmul bit for bit (int32 and scaled int8 outputs, ragged shapes), and the cycle
model times it above the array's MAC floor."""
import numpy as np
import pytest

from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_matmul_auto
from baco.gemmini.isa import encode, COMMANDS
from baco.sim.clib import matmul_stream, time_matmul
from baco.sim.functional import ArrayMemory, GemminiModel


def run_library(a, b, cfg, **kw):
    M, K = a.shape
    N = b.shape[1]
    out_int8 = kw.get("out_int8", False)
    base = 0x80000000
    mem = ArrayMemory(base, 1 << 20)
    a_addr, b_addr, c_addr = base, base + 0x40000, base + 0x80000
    mem.write(a_addr, a.tobytes())
    mem.write(b_addr, b.tobytes())
    model = GemminiModel(cfg, mem)
    for name, fields in matmul_stream(M, N, K, cfg, addrs=(a_addr, b_addr, c_addr), **kw):
        model.execute(COMMANDS[name].funct, *encode(name, **fields))
    dtype = np.int8 if out_int8 else np.int32
    return np.frombuffer(mem.read(c_addr, M * N * np.dtype(dtype).itemsize), dtype=dtype).reshape(M, N)


@pytest.mark.parametrize("dim,shape", [(4, (17, 33, 65)), (16, (33, 17, 70)), (16, (1, 100, 65)),
                                       (8, (64, 64, 64))])
@pytest.mark.parametrize("out", ["int32", "int8"])
def test_library_stream_is_bit_exact(dim, shape, out):
    M, N, K = shape
    cfg = GemminiConfig.from_capacity(dim, 4, 2)     # small memories: several tiles per dimension
    rng = np.random.default_rng(M + N + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    kw = dict(out_int8=True, scale=1 / 64, relu=True) if out == "int8" else {}
    got = run_library(a, b, cfg, **kw)
    ref = reference_matmul(a, b, out=out, scale=kw.get("scale", 1.0), relu=kw.get("relu", False))
    assert np.array_equal(got, ref)


def test_library_tiles_and_timing():
    cfg = GemminiConfig()
    ti, tj, tk = tiled_matmul_auto(256, 256, 256, cfg)
    names = [n for n, _ in matmul_stream(256, 256, 256, cfg)]
    assert names.count("preload") == (256 // 16) ** 3     # one per DIM×DIM×DIM block product
    r = time_matmul(256, 256, 256, cfg)
    # A is re-read for every column tile, B for every row tile (no reuse across LOOP_WS calls)
    col_tiles, row_tiles = -(-16 // tj), -(-16 // ti)
    assert r["dram_bytes_in"] == 256 * 256 * col_tiles + 256 * 256 * row_tiles
    assert r["macs"] == 256 ** 3
    assert r["cycles"] >= 256 ** 3 / 16 ** 2
    assert r["dram_bytes_out"] == 256 * 256 * 4
    r8 = time_matmul(256, 256, 256, cfg, out_int8=True, scale=0.5)
    assert r8["dram_bytes_out"] == 256 * 256
    with pytest.raises(ValueError, match="relu"):
        list(matmul_stream(16, 16, 16, cfg, relu=True))
