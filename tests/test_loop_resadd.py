"""LOOP_WS's residual-add mode (is_resadd) against a numpy reference of Gemmini's arithmetic:
C = sat8(rne(act(sat8(rne(A·a_scale)) + sat8(rne(B·b_scale))) · c_scale)), configured as the
C library's tiled_resadd does (shrunk int8 mvins into the accumulator with the A/B scales in
load slots 0/1, the C scale and ReLU in config_st), at DIM 4 and 16 with ragged shapes, and
the command stream LoopMatmul issues for it."""
from __future__ import annotations

import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import ACC_BIT, ACCUMULATE_BIT, COMMANDS, decode, encode
from baco.sim.functional import ArrayMemory, GemminiModel
from baco.sim.loops import LoopWsState, loop_ws_commands
from baco.sim.timing import TimingModel

BASE = 0x80000000
CONFIGS = {4: GemminiConfig.from_capacity(4, 16, 8), 16: GemminiConfig()}


def f32(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


def mvin_scale(x, scale):
    """float32 product, rounded half to even, saturated to int8 (MVIN_SCALE)."""
    return np.clip(np.rint(x.astype(np.float32) * np.float32(scale)), -128, 127).astype(np.int64)


def reference(A, B, a_scale, b_scale, c_scale, relu):
    s = mvin_scale(A, a_scale) + mvin_scale(B, b_scale)
    if relu:
        s = np.maximum(s, 0)
    return np.clip(np.rint(s.astype(np.float32) * np.float32(c_scale)), -128, 127).astype(np.int8)


def run_resadd(dim, A, B, a_scale, b_scale, c_scale, relu, model=None):
    cfg = CONFIGS[dim]
    M, N = A.shape
    mem = ArrayMemory(BASE, 1 << 20)
    m = model or GemminiModel(cfg, mem)
    m.memory = mem

    def ex(name, **f):
        return m.execute(COMMANDS[name].funct, *encode(name, **f))

    a, b, c = BASE, BASE + 0x40000, BASE + 0x80000
    mem.write(a, np.ascontiguousarray(A).tobytes())
    mem.write(b, np.ascontiguousarray(B).tobytes())
    I, J = -(-M // dim), -(-N // dim)
    ex("config_st", stride=N, activation=int(relu), acc_scale=f32(c_scale))
    ex("config_ex", dataflow=1, acc_scale=f32(1.0), a_stride=1, c_stride=1)
    ex("config_ld", state_id=0, stride=N, scale=f32(a_scale), shrink=1, block_stride=dim)
    ex("config_ld", state_id=1, stride=N, scale=f32(b_scale), shrink=1, block_stride=dim)
    ex("loop_ws_config_bounds", max_i=I, max_j=J, max_k=1, pad_i=I * dim - M, pad_j=J * dim - N)
    ex("loop_ws_config_addrs_ab", a_addr=a, b_addr=b)
    ex("loop_ws_config_addrs_dc", d_addr=0, c_addr=c)
    ex("loop_ws_config_strides_ab", a_stride=N, b_stride=N)
    ex("loop_ws_config_strides_dc", d_stride=N, c_stride=N)
    ex("loop_ws", is_resadd=1)
    out = np.frombuffer(mem.read(c, M * N), dtype=np.int8).reshape(M, N)
    return out, m


SHAPES = {4: [(1, 1), (4, 4), (5, 17), (17, 5), (13, 33), (8, 64)],
          16: [(1, 1), (16, 16), (17, 33), (33, 65), (65, 17), (40, 100)]}


@pytest.mark.parametrize("dim", [4, 16])
@pytest.mark.parametrize("case", ["plain", "scales_relu", "saturating"])
def test_resadd_matches_numpy(dim, case):
    rng = np.random.default_rng(dim * 7 + len(case))
    scales = {"plain": (1.0, 1.0, 1.0, False), "scales_relu": (0.5, 1.75, 0.375, True),
              "saturating": (3.0, 2.5, 1.0, False)}[case]
    for M, N in SHAPES[dim]:
        A = rng.integers(-128, 128, (M, N)).astype(np.int8)
        B = rng.integers(-128, 128, (M, N)).astype(np.int8)
        got, _ = run_resadd(dim, A, B, *scales)
        want = reference(A, B, *scales)
        assert (got == want).all(), (M, N, case, np.argwhere(got != want)[:3])
    if case == "saturating":       # the case really saturates, at both the mvin and the mvout
        assert (np.abs(mvin_scale(A, scales[0])) == 128).any() or (np.abs(mvin_scale(A, scales[0])) == 127).any()
        assert ((want == 127) | (want == -128)).any()


def test_resadd_stream_is_lda_ldb_stc_without_execute():
    """The LoopMatmul stream: A mvins overwrite accumulator rows, B mvin2s accumulate onto the
    same rows (always DIM rows: LdB never applies its row pad), mvouts read them; nothing
    for the array. Consecutive loops use alternating accumulator halves."""
    cfg = CONFIGS[4]
    st = LoopWsState()
    st.latch("loop_ws_config_bounds", dict(max_i=3, max_j=2, max_k=1, pad_i=1, pad_j=2))
    st.latch("loop_ws_config_addrs_ab", dict(a_addr=BASE, b_addr=BASE + 0x1000))
    st.latch("loop_ws_config_addrs_dc", dict(d_addr=0, c_addr=BASE + 0x2000))
    st.latch("loop_ws_config_strides_ab", dict(a_stride=6, b_stride=6))
    st.latch("loop_ws_config_strides_dc", dict(d_stride=6, c_stride=6))
    flags = decode(COMMANDS["loop_ws"].funct, *encode("loop_ws", is_resadd=1))[1]
    stream = [decode(*c) for c in loop_ws_commands(cfg, st, flags)]
    names = [c.name for c, _ in stream]
    assert names == ["mvin"] * 3 + ["mvin2"] * 3 + ["mvout"] * 3
    a_loads, b_loads, stores = stream[:3], stream[3:6], stream[6:]
    half = cfg.acc_rows // 2
    assert [f["local_addr"] for _, f in a_loads] == [ACC_BIT | (i * 2 * 4) for i in range(3)]
    assert [f["local_addr"] for _, f in b_loads] == [ACC_BIT | ACCUMULATE_BIT | (i * 2 * 4) for i in range(3)]
    assert [f["rows"] for _, f in a_loads] == [4, 4, 3] and [f["rows"] for _, f in b_loads] == [4, 4, 4]
    assert all(f["cols"] == 6 for _, f in a_loads + b_loads + stores)
    assert [f["dram_addr"] for _, f in b_loads] == [BASE + 0x1000 + i * 4 * 6 for i in range(3)]
    second = [decode(*c)[1]["local_addr"] for c in loop_ws_commands(cfg, st, flags)][:1]
    assert second == [ACC_BIT | half]


def test_resadd_is_timed_and_counted():
    cfg = CONFIGS[16]
    model = GemminiModel(cfg, ArrayMemory(BASE, 1 << 20))
    tm = TimingModel(cfg)
    tm.attach(model)
    A = np.ones((33, 40), np.int8)
    got, _ = run_resadd(16, A, A, 1.0, 1.0, 1.0, False, model=model)
    assert (got == 2).all()
    r = tm.report()
    assert r["macs"] == 0 and r["dram_bytes_out"] == 33 * 40
    assert r["dram_bytes_in"] == 33 * 40 + 48 * 40      # B always moves DIM rows per block
    assert tm.cycles > 0


# ---- resadd_kernel compiled for its shapes (the grid folded): one LOOP_WS with is_resadd a program ----

def _operands(M, N, seed=0):
    rng = np.random.default_rng(seed + 31 * M + N)
    return rng.integers(-128, 128, (M, N), dtype=np.int8), rng.integers(-128, 128, (M, N), dtype=np.int8)


def _loop_ws_input(M, N, block) -> str:
    """loop-ws's input (the stages before it, as text) for resadd_kernel specialized on its grid."""
    from baco.kernels.resadd import resadd_launch
    from baco.passes.pipeline import run_pipeline
    launch = resadd_launch(*_operands(M, N), 0.5, 0.75, 0.5, block=block)
    ck = launch.compiled("sim", specialize_shapes=True)
    return run_pipeline(ck.baco_ir, ck.options, until="chain-loop-ws").stage_ir["chain-loop-ws"]


def test_loop_ws_pass_alone_matches_the_in_place_form():
    """A (1, 1) grid over an exact 32x48 block: both acc_add generics read their DRAM views in
    place (no staging block, no copy) and the store copies the whole epilogue block. loop-ws alone
    makes it one LOOP_WS with is_resadd whose A, B and C addresses are the kernel arguments' views."""
    import re

    from baco.passes.pipeline import run_pipeline
    text = _loop_ws_input(32, 48, (32, 48))
    assert '"acc_add"' not in text and "memref.subview" not in text
    assert len(re.findall(r"ins\(%reinterpret_cast\w* : memref<32x48xi8.*gemmini\.acc_add", text)) == 2
    out = run_pipeline(text, start="loop-ws", until="loop-ws").stage_ir["loop-ws"]
    assert out.count('"instgem.loop_ws"(') == 1 and out.count('"instgem.config_ld"(') == 2
    views = dict(re.findall(r"(%reinterpret_cast\w*) = memref\.reinterpret_cast (%arg\d)", out))
    pointers = re.findall(r"extract_aligned_pointer_as_index (%reinterpret_cast\w*)", out)
    assert [views[p] for p in pointers] == ["%arg0", "%arg1", "%arg2"]     # A, B, C


def test_loop_ws_pass_alone_keeps_known_ragged_rows_explicit():
    """A (1, 1) grid over an exact 17x33 block: rows known ragged, so the stream stays explicit."""
    from baco.passes.pipeline import run_pipeline
    text = _loop_ws_input(17, 33, (17, 33))
    out = run_pipeline(text, start="loop-ws", until="loop-ws").stage_ir["loop-ws"]
    assert "instgem.loop_ws" not in out and out.count("gemmini.acc_add") == 2


# (M, N, block): (1, 1) grids over exact blocks (read in place), an exact block of ragged rows,
# (1, n), (m, 1) and (m, n) grids, ragged windows; None: the launch's default view and blocks
SPECIALIZED = [(64, 64, (64, 64)), (32, 48, (32, 48)), (16, 16, None), (17, 33, (17, 33)), (32, 96, (32, 32)),
               (96, 16, (32, 16)), (33, 17, (16, 16)), (49, 512, None), (1, 17, None)]


@pytest.mark.parametrize("case", SPECIALIZED, ids=lambda c: f"{c[0]}x{c[1]}-b{c[2]}")
@pytest.mark.parametrize("target", ["sim", "iss"])
def test_specialized_resadd_is_one_loop_ws_a_program(case, target):
    """Each program of whole DIM-row blocks is one LOOP_WS with is_resadd, bit-exact."""
    from baco.kernels.resadd import reference as resadd_reference
    from baco.kernels.resadd import resadd_launch
    M, N, block = case
    a, b = _operands(M, N)
    launch = resadd_launch(a, b, 0.5, 0.75, 0.5, block=block)
    ck = launch.compiled(target, specialize_shapes=True)
    assert ck.grid == tuple(launch.grid) + (1,)
    info = ck.run(launch.grid, launch.runtime_args())
    stats = info["model"].stats if target == "sim" else info["result"].stats
    bm, rows, d = launch.options["BLOCK_M"], launch.args[3], launch.config.dim
    whole = sum(min(bm, rows - i * bm) % d == 0 for i in range(launch.grid[0]))
    assert whole * launch.grid[1] > 0 or M % d
    assert stats.get("loop_ws", 0) == whole * launch.grid[1]
    np.testing.assert_array_equal(launch.y, resadd_reference(a, b, 0.5, 0.75, 0.5))
