"""Gemmini master's ext-spad commands (GemminiConfig.mvout_spad; gemmini-isa.md §1.3.10, §1.3.7):
MVOUT_SPAD and LOOP_WS spad_only, hand-built command streams run on the functional model,
bit-exact against a numpy reference of Gemmini's arithmetic written here (int32 products and
sums, then the accumulator read: ReLU, float32 scale rounded half to even, int8 saturation),
timed by the cycle model without data races; and the faults of a Gemmini without the option."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import ACC_BIT, COMMANDS, GemminiFault, decode, disassemble, encode
from baco.sim.functional import ArrayMemory, GemminiModel
from baco.sim.timing import TimingModel

BASE = 0x80000000
PC = 0x80000444
ONE = 0x3F800000
EXT = {8: replace(GemminiConfig.from_capacity(8, 64, 64), mvout_spad=True),
       16: replace(GemminiConfig(), mvout_spad=True)}


def f32(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


def acc_read(x, scale, relu):
    """The accumulator read as the reference computes it: ReLU, float32 multiply, round half to
    even, saturate to int8."""
    x = np.asarray(x, dtype=np.int64)
    if relu:
        x = np.maximum(x, 0)
    y = (x.astype(np.float32) * np.float32(scale)).astype(np.float64)
    return np.clip(np.rint(y), -128, 127).astype(np.int8)


class Rig:
    """A model (timed by a TimingModel that checks races) with 1 MiB of DRAM at BASE."""

    def __init__(self, cfg):
        self.cfg, self.d = cfg, cfg.dim
        self.mem = ArrayMemory(BASE, 1 << 20)
        self.m = GemminiModel(cfg, self.mem)
        self.tm = TimingModel(cfg)
        self.tm.attach(self.m)

    def __call__(self, name, **fields):
        return self.m.execute(COMMANDS[name].funct, *encode(name, **fields), PC)

    def put(self, offset, array):
        self.mem.write(BASE + offset, np.ascontiguousarray(array).tobytes())
        return BASE + offset

    def get(self, offset, rows, cols, dtype):
        item = np.dtype(dtype).itemsize
        raw = self.mem.read(BASE + offset, rows * cols * item)
        return np.frombuffer(raw, dtype=dtype).reshape(rows, cols)

    def report(self):
        self.tm.fence()
        return self.tm.report()


def test_the_command_table_defines_funct_23_and_the_loop_ws_master_fields():
    rs1, rs2 = encode("mvout_spad", dst_addr=40, dst_stride=3, local_addr=ACC_BIT | 8, cols=5, rows=7)
    assert rs1 == 40 | 3 << 32 and rs2 == (ACC_BIT | 8) | 5 << 32 | 7 << 48
    cmd, f = decode(23, rs1, rs2)
    assert cmd.name == "mvout_spad" and cmd.queue == "st"
    assert disassemble(23, rs1, rs2) == "mvout_spad dst_addr=sp[40] dst_stride=3 local_addr=acc[8] cols=5 rows=7"
    _, rs2 = encode("loop_ws", skip_stages=0b10101, inc_acc_addr=1, spad_only=1, c_spad_addr=0x1234)
    assert rs2 == 0b10101 << 3 | 1 << 8 | 1 << 9 | 0x1234 << 32
    assert {k: v for k, v in decode(8, 0, rs2)[1].items() if v} == dict(
        skip_stages=0b10101, inc_acc_addr=1, spad_only=1, c_spad_addr=0x1234)


@pytest.mark.parametrize("dim", [8, 16])
@pytest.mark.parametrize("rows,cols,stride,scale,relu", [(None, None, 1, 1.0, False), (5, 3, 1, 0.25, True),
                                                          (1, 1, 2, 1 / 3, False), (3, None, 0, 2.0, True)])
def test_mvout_spad_scales_activates_and_writes_scratchpad_rows(dim, rows, cols, stride, scale, relu):
    g = Rig(EXT[dim])
    rows, cols = rows or dim, cols or dim
    rng = np.random.default_rng(dim + rows * 7 + cols)
    acc = rng.integers(-3000, 3000, (rows, dim), dtype=np.int32)
    before = rng.integers(-128, 128, (3 * dim, dim), dtype=np.int8)
    g.m.acc[20:20 + rows] = acc
    g.m.spad[100:100 + 3 * dim] = before
    g("config_st", stride=dim, acc_scale=f32(scale), activation=int(relu))
    g("mvout_spad", dst_addr=100 + 1, dst_stride=stride, local_addr=ACC_BIT | 20, rows=rows, cols=cols)
    expected = before.copy()
    for r in range(rows):       # in order: stride 0 leaves the last row
        expected[1 + r * stride, :cols] = acc_read(acc[r, :cols], scale, relu)
    np.testing.assert_array_equal(g.m.spad[100:100 + 3 * dim], expected)
    rep = g.report()
    assert rep["dram_bytes_out"] == 0 and rep["accumulator_reads"] == rows * cols


def test_mvout_spad_faults_name_pc_command_and_field():
    plain = Rig(GemminiConfig())
    with pytest.raises(GemminiFault) as e:
        plain("mvout_spad", dst_addr=0, dst_stride=1, local_addr=ACC_BIT, rows=1, cols=1)
    assert e.value.pc == PC and e.value.field == "funct" and "mvout_spad" in e.value.command
    assert "GemminiConfig.mvout_spad" in str(e.value)
    g = Rig(EXT[16])
    for fields, field in ((dict(local_addr=0), "local_addr"), (dict(dst_addr=ACC_BIT), "dst_addr"),
                          (dict(cols=17), "cols"), (dict(dst_addr=g.cfg.sp_rows - 1, rows=2), "dst_addr")):
        with pytest.raises(GemminiFault) as e:
            g("mvout_spad", **{**dict(dst_addr=0, dst_stride=1, local_addr=ACC_BIT, rows=1, cols=1), **fields})
        assert e.value.field == field and e.value.pc == PC


def loop_ws(g, I, J, K, pads, *, a=0, b=0, d=0, c=0, strides=(0, 0, 0, 0), **flags):
    """LOOP_WS's six commands, bounds in blocks."""
    pi, pj, pk = pads
    g("loop_ws_config_bounds", max_i=I, max_j=J, max_k=K, pad_i=pi, pad_j=pj, pad_k=pk)
    g("loop_ws_config_addrs_ab", a_addr=a, b_addr=b)
    g("loop_ws_config_addrs_dc", d_addr=d, c_addr=c)
    sa, sb, sd, sc = strides
    g("loop_ws_config_strides_ab", a_stride=sa, b_stride=sb)
    g("loop_ws_config_strides_dc", d_stride=sd, c_stride=sc)
    g("loop_ws", **flags)


def blocks(n, dim):
    return -(-n // dim), -(-n // dim) * dim - n


def configure(g, m_k_n_strides, scale, relu):
    """config_ex (WS), config_st (int8 out through scale/ReLU), load slots A, B, D (int32 bias rows)."""
    sa, sb, sd, sc = m_k_n_strides
    g("config_ex", dataflow=1, acc_scale=ONE, a_stride=1, c_stride=1)
    g("config_st", stride=sc, acc_scale=f32(scale), activation=int(relu))
    for slot, stride in ((0, sa), (1, sb), (2, sd * 4)):
        g("config_ld", state_id=slot, stride=stride, scale=ONE, block_stride=g.d, pixel_repeats=1)


@pytest.mark.parametrize("dim", [8, 16])
@pytest.mark.parametrize("M,K,N", [(1, 1, 1), (17, 33, 65), (33, 17, 1), (65, 65, 33)])
def test_spad_only_loop_ws_leaves_c_in_the_scratchpad(dim, M, K, N):
    g = Rig(EXT[dim])
    rng = np.random.default_rng(M * 3 + K * 5 + N + dim)
    A = rng.integers(-128, 128, (M, K), dtype=np.int8)
    B = rng.integers(-128, 128, (K, N), dtype=np.int8)
    D = rng.integers(-20000, 20000, (M, N), dtype=np.int32)
    (I, pi), (Kb, pk), (J, pj) = blocks(M, dim), blocks(K, dim), blocks(N, dim)
    a, b, d = g.put(0, A), g.put(0x10000, B), g.put(0x20000, D)
    configure(g, (K, N, N, N), 1 / 128, True)
    c_spad = g.cfg.sp_rows // 2     # slot 1's half: A and B are in slot 0's
    loop_ws(g, I, J, Kb, (pi, pj, pk), a=a, b=b, d=d, strides=(K, N, N, N), ex_accumulate=1, spad_only=1,
            inc_acc_addr=1, c_spad_addr=c_spad)
    H = acc_read(A.astype(np.int64) @ B + D, 1 / 128, True)
    for i in range(I):
        for j in range(J):
            rows, cols = min(dim, M - i * dim), min(dim, N - j * dim)
            row = c_spad + (i * J + j) * dim
            np.testing.assert_array_equal(g.m.spad[row:row + rows, :cols],
                                          H[i * dim:i * dim + rows, j * dim:j * dim + cols])
    rep = g.report()
    assert rep["dram_bytes_out"] == 0
    assert g.m.loop_ws.acc_half == 1 and g.m.loop_ws.ldd_half == 0    # inc_acc_addr; C's DRAM address is 0


def test_spad_only_loop_ws_faults():
    plain, g = Rig(GemminiConfig()), Rig(EXT[16])
    for field, value in (("spad_only", 1), ("inc_acc_addr", 1), ("c_spad_addr", 64), ("skip_stages", 1)):
        with pytest.raises(GemminiFault) as e:
            loop_ws(plain, 1, 1, 1, (0, 0, 0), **{field: value})
        assert e.value.field == field and e.value.pc == PC and "loop_ws" in e.value.command
    for flags, field in ((dict(skip_stages=4), "skip_stages"), (dict(spad_only=1, full_c=1), "full_c"),
                         (dict(spad_only=1, a_spad_id=1), "a_spad_id"), (dict(spad_only=1, is_resadd=1), "is_resadd")):
        with pytest.raises(GemminiFault) as e:
            loop_ws(g, 1, 1, 1, (0, 0, 0), **flags)
        assert e.value.field == field and e.value.pc == PC


@pytest.mark.parametrize("dim", [8, 16])
@pytest.mark.parametrize("M,K,H,N", [(1, 1, 1, 1), (17, 33, 65, 17), (65, 17, 33, 65), (33, 65, 17, 33)])
def test_two_loop_ws_chained_through_the_scratchpad(dim, M, K, H, N):
    """Layer 1 (loop slot 0) stores H = f1(A·W1 + b1) into slot 1's scratchpad half, where layer 2
    (slot 1, A address 0: no load) reads its A blocks; Y = f2(H·W2 + b2) goes to DRAM."""
    cfg = EXT[dim]
    g = Rig(cfg)
    rng = np.random.default_rng(M + 3 * K + 5 * H + 7 * N + dim)
    X = rng.integers(-128, 128, (M, K), dtype=np.int8)
    W1 = rng.integers(-128, 128, (K, H), dtype=np.int8)
    W2 = rng.integers(-128, 128, (H, N), dtype=np.int8)
    b1 = rng.integers(-5000, 5000, (1, H), dtype=np.int32)
    b2 = rng.integers(-5000, 5000, (1, N), dtype=np.int32)
    x, w1, w2, d1, d2 = (g.put(o, v) for o, v in ((0, X), (0x10000, W1), (0x20000, W2), (0x30000, b1),
                                                  (0x31000, b2)))
    y = BASE + 0x40000
    (I, pi), (Kb, pk), (Hb, ph), (Nb, pn) = (blocks(v, dim) for v in (M, K, H, N))
    half = cfg.sp_rows // 2
    configure(g, (K, H, 0, N), 1 / 256, True)
    loop_ws(g, I, Hb, Kb, (pi, ph, pk), a=x, b=w1, d=d1, c=y, strides=(K, H, 0, N), ex_accumulate=1, spad_only=1,
            inc_acc_addr=1, c_spad_addr=half)      # C's DRAM address: LdD's half rotates with the others
    g("config_ld", state_id=1, stride=N, scale=ONE, block_stride=dim, pixel_repeats=1)
    g("config_st", stride=N, acc_scale=f32(1 / 64), activation=0)
    loop_ws(g, I, Nb, Hb, (pi, pn, ph), a=0, b=w2, d=d2, c=y, strides=(0, N, 0, N), ex_accumulate=1)
    Hr = acc_read(X.astype(np.int64) @ W1 + b1, 1 / 256, True)
    Y = acc_read(Hr.astype(np.int64) @ W2 + b2, 1 / 64, False)
    rep = g.report()
    np.testing.assert_array_equal(g.get(0x40000, M, N, np.int8), Y)
    assert rep["dram_bytes_out"] == M * N


def test_loop_ws_config_spad_ab_places_a_loop_slots_operands():
    """funct 24 sets the A start and B end of the loop slot being configured, which keeps them for
    its later loops (LoopMatmul resets them only at reset); the other slot keeps its half."""
    g = Rig(EXT[8])
    d = 8
    rng = np.random.default_rng(5)
    A = rng.integers(-128, 128, (d, d), dtype=np.int8)
    B = rng.integers(-128, 128, (d, d), dtype=np.int8)
    a, b = g.put(0, A), g.put(0x1000, B)
    configure(g, (d, d, d, d), 1.0, False)
    g("loop_ws_config_spad_ab", a_addr_start=3 * d, b_addr_end=7 * d)
    for out in (0x2000, 0x3000, 0x4000):        # slots 0, 1, 0
        loop_ws(g, 1, 1, 1, (0, 0, 0), a=a, b=b, c=BASE + out, strides=(d, d, 0, d))
        np.testing.assert_array_equal(g.get(out, d, d, np.int8), acc_read(A.astype(np.int64) @ B, 1.0, False))
    np.testing.assert_array_equal(g.m.spad[3 * d:4 * d], A)          # slot 0's A where funct 24 put it
    np.testing.assert_array_equal(g.m.spad[6 * d:7 * d], B)
    half = g.cfg.sp_rows // 2
    np.testing.assert_array_equal(g.m.spad[half:half + d], A)        # slot 1's in its half
    g.report()
    with pytest.raises(GemminiFault) as e:
        Rig(GemminiConfig())("loop_ws_config_spad_ab", a_addr_start=0, b_addr_end=16)
    assert e.value.field == "funct" and e.value.pc == PC
    for fields, field in ((dict(a_addr_start=g.cfg.sp_rows, b_addr_end=16), "a_addr_start"),
                          (dict(a_addr_start=0, b_addr_end=g.cfg.sp_rows + 1), "b_addr_end")):
        with pytest.raises(GemminiFault) as e:
            g("loop_ws_config_spad_ab", **fields)
        assert e.value.field == field
