"""The functional model against hand-computed expectations (gemmini-isa.md §1–3), command by
command and field by field, at DIM 4, 16 and 32. Expected values are written out or built
with plain numpy indexing, never with the model's own arithmetic helpers."""
from __future__ import annotations

import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import (ACC_BIT, ACCUMULATE_BIT, COMMANDS, CONFIG_COMMANDS, CONFIG_STATES,
                              CONTROLLER_QUEUES, GARBAGE_ADDR, MVIN_OF_SLOT, READ_FULL_BIT,
                              decode, disassemble, encode)
from baco.gemmini.isa import GemminiFault
from baco.sim.functional import ArrayMemory, GemminiModel

BASE = 0x80000000
PC = 0x80001234
ONE = 0x3F800000          # float32 1.0
DIMS = [4, 16, 32]
CONFIGS = {4: GemminiConfig.from_capacity(4, 16, 8), 16: GemminiConfig(),
           32: GemminiConfig.from_capacity(32, 256, 128)}


def f32(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


class Rig:
    """A model with a 1 MiB DRAM at BASE, driven by command name and field values."""

    def __init__(self, dim, **overrides):
        cfg = CONFIGS[dim]
        if overrides:
            from dataclasses import replace
            cfg = replace(cfg, **overrides)
        self.d = dim
        self.mem = ArrayMemory(BASE, 1 << 20)
        self.m = GemminiModel(cfg, self.mem)

    def __call__(self, name, **fields):
        rs1, rs2 = encode(name, **fields)
        return self.m.execute(COMMANDS[name].funct, rs1, rs2, PC)

    def put(self, offset, array):
        data = np.ascontiguousarray(array)
        self.mem.write(BASE + offset, data.tobytes())
        return BASE + offset

    def get(self, offset, rows, cols, dtype, stride=None):
        item = np.dtype(dtype).itemsize
        stride = stride or cols * item
        return np.stack([np.frombuffer(self.mem.read(BASE + offset + r * stride, cols * item), dtype=dtype)
                         for r in range(rows)])

    def ws(self, **kw):
        self("config_ex", dataflow=1, acc_scale=ONE, a_stride=1, c_stride=1, **kw)

    def os(self, **kw):
        self("config_ex", dataflow=0, acc_scale=ONE, a_stride=1, c_stride=1, **kw)


def rand8(rng, *shape, lo=-128, hi=128):
    return rng.integers(lo, hi, size=shape, dtype=np.int64).astype(np.int8)


# ---- the command table -----------------------------------------------------------------------
def test_every_field_encodes_and_decodes_alone():
    """Each field at its maximum value lands in its bits and nowhere else."""
    for cmd in COMMANDS.values():
        free = [f for f in cmd.fields if f.fixed is None]
        for f in free:
            rs1, rs2 = encode(cmd.name, **{f.name: f.mask})
            got, vals = decode(cmd.funct, rs1, rs2)
            assert got is cmd
            assert vals[f.name] == f.mask, (cmd.name, f.name)
            assert all(v == 0 for k, v in vals.items() if k != f.name), (cmd.name, f.name, vals)
            assert cmd.name in disassemble(cmd.funct, rs1, rs2)
        # no two fields overlap
        bits = {"rs1": 0, "rs2": 0}
        for f in cmd.fields:
            m = f.mask << f.lsb
            assert bits[f.word] & m == 0, (cmd.name, f.name)
            bits[f.word] |= m


def test_encode_rejects_bad_values():
    with pytest.raises(ValueError, match="does not fit"):
        encode("mvin", rows=1 << 16)
    with pytest.raises(ValueError, match="no field"):
        encode("mvin", bogus=1)
    with pytest.raises(ValueError, match="fixed"):
        encode("config_ld", cmd_type=0)


# ---- mvin --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", DIMS)
def test_mvin_rows_cols_stride(dim):
    g, rng = Rig(dim), np.random.default_rng(dim)
    rows, cols, stride = dim - 1, dim - 2 if dim > 2 else 1, 3 * dim
    src = rand8(rng, rows, stride)
    g.m.spad[:] = 99
    addr = g.put(0, src)
    g("config_ld", state_id=0, stride=stride, scale=ONE)
    g("mvin", dram_addr=addr, local_addr=5, rows=rows, cols=cols)
    assert (g.m.spad[5:5 + rows, :cols] == src[:, :cols]).all()
    assert (g.m.spad[5:5 + rows, cols:] == 99).all()          # columns beyond cols untouched
    assert (g.m.spad[:5] == 99).all() and (g.m.spad[5 + rows:] == 99).all()


def test_rows_in_separate_arrays_are_moved_row_by_row():
    """A strided mvin whose two rows lie in two arrays with bytes of neither between them, and a
    contiguous mvout whose rows straddle two adjacent arrays: the model reads (writes) the span
    at once only when the memory holds it, else each row, each checked; a row in no array faults."""
    from baco.codegen.host import HostMemory
    d = 16
    backing = np.arange(4 * d).astype(np.int8)
    first, second = backing[:d], backing[2 * d:3 * d]          # bytes d..2d are in no array
    m = GemminiModel(GemminiConfig(), HostMemory([first, second]))

    def run(name, **fields):
        m.execute(COMMANDS[name].funct, *encode(name, **fields), PC)
    run("config_ld", state_id=0, stride=2 * d, scale=ONE)
    run("mvin", dram_addr=first.ctypes.data, local_addr=0, rows=2, cols=d)
    assert (m.spad[0] == first).all() and (m.spad[1] == second).all()
    with pytest.raises(GemminiFault, match="outside the kernel's arrays"):
        run("mvin", dram_addr=first.ctypes.data + d, local_addr=0, rows=1, cols=d)

    out = np.zeros(2 * d, np.int8)
    m = GemminiModel(GemminiConfig(), HostMemory([out[:d], out[d:]]))
    m.spad[:2] = backing[:2 * d].reshape(2, d)
    run("config_st", stride=d, acc_scale=ONE)
    run("mvout", dram_addr=out.ctypes.data, local_addr=0, rows=2, cols=d)
    assert (out == backing[:2 * d]).all()


@pytest.mark.parametrize("dim", DIMS)
def test_mvin_zero_fill_and_row_repeat(dim):
    g = Rig(dim)
    g.m.spad[:] = 7
    g("config_ld", state_id=0, stride=dim, scale=ONE)
    g("mvin", dram_addr=0, local_addr=2, rows=3, cols=dim - 1)      # rs1 = 0: zeros, DRAM not read
    assert (g.m.spad[2:5, :dim - 1] == 0).all() and (g.m.spad[2:5, dim - 1] == 7).all()
    row = np.arange(1, dim + 1, dtype=np.int8)
    addr = g.put(0, row)
    g("config_ld", state_id=0, stride=0, scale=ONE)                  # stride 0: one row, repeated
    g("mvin", dram_addr=addr, local_addr=10, rows=dim, cols=dim)
    assert (g.m.spad[10:10 + dim] == row[None]).all()


@pytest.mark.parametrize("dim", DIMS)
def test_mvin_multi_block_rows_use_block_stride(dim):
    g, rng = Rig(dim), np.random.default_rng(1)
    blocks = g.m.config.max_block_len
    cols = blocks * dim - 1 if blocks > 1 else dim
    rows, block_stride = 3, dim + 2
    src = rand8(rng, rows, cols)
    addr = g.put(0, src)
    g("config_ld", state_id=0, stride=cols, scale=ONE, block_stride=block_stride)
    g("mvin", dram_addr=addr, local_addr=4, rows=rows, cols=cols)
    for c in range(cols):     # column c -> row local + r + (c // DIM)·block_stride, element c mod DIM
        r0 = 4 + (c // dim) * block_stride
        assert (g.m.spad[r0:r0 + rows, c % dim] == src[:, c]).all()
    if blocks > 1:
        g("config_ld", state_id=0, stride=cols, scale=ONE, block_stride=rows - 1)
        with pytest.raises(GemminiFault, match="block_stride") as e:
            g("mvin", dram_addr=addr, local_addr=4, rows=rows, cols=cols)
        assert e.value.pc == PC and e.value.field == "block_stride"
    with pytest.raises(GemminiFault) as e:
        g("mvin", dram_addr=addr, local_addr=4, rows=1, cols=blocks * dim + 1)
    assert e.value.field == "cols"


@pytest.mark.parametrize("dim", DIMS)
def test_mvin_scale_rounds_half_even_and_saturates(dim):
    g = Rig(dim)
    vals = np.array([3, 5, -3, -5, 7, 1], dtype=np.int8)
    addr = g.put(0, vals)
    g("config_ld", state_id=0, stride=8, scale=f32(0.5), block_stride=dim)
    g("mvin", dram_addr=addr, local_addr=0, rows=1, cols=len(vals))
    got = [g.m.spad[(c // dim) * dim, c % dim] for c in range(6)]   # at DIM 4 two blocks
    assert got == [2, 2, -2, -2, 4, 0]                    # 1.5→2, 2.5→2, 3.5→4, 0.5→0
    addr = g.put(64, np.array([2, -2, 100, -100], dtype=np.int8))
    g("config_ld", state_id=0, stride=8, scale=f32(100.0), block_stride=dim)
    g("mvin", dram_addr=addr, local_addr=1, rows=1, cols=4)
    assert g.m.spad[1, :4].tolist() == [127, -128, 127, -128]


@pytest.mark.parametrize("dim", DIMS)
def test_mvin_slots_keep_their_own_configuration(dim):
    g = Rig(dim)
    data = np.arange(64 * 4, dtype=np.int64).reshape(64, 4).astype(np.int8)
    addr = g.put(0, data)
    g("config_ld", state_id=0, stride=4, scale=ONE)         # mvin: every row
    g("config_ld", state_id=1, stride=8, scale=ONE)         # mvin2: every other row
    g("config_ld", state_id=2, stride=12, scale=f32(2.0))   # mvin3: every third row, doubled
    g("mvin", dram_addr=addr, local_addr=0, rows=2, cols=4)
    g("mvin2", dram_addr=addr, local_addr=2, rows=2, cols=4)
    g("mvin3", dram_addr=addr, local_addr=4, rows=2, cols=4)
    assert g.m.spad[0:2, :4].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert g.m.spad[2:4, :4].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]
    assert g.m.spad[4:6, :4].tolist() == [[0, 2, 4, 6], [24, 26, 28, 30]]
    with pytest.raises(GemminiFault) as e:
        g("config_ld", state_id=3, stride=4, scale=ONE)
    assert e.value.field == "state_id"


def test_the_command_table_states_its_load_slots_and_configuration_state_consistently():
    """The table's per-command facts (queue, load slot, configuration state read and written) agree
    with each other and with the model: the slots are config_ld's state ids 0.. (the model takes no
    other), each config command goes to the queue of the commands that read its state, and every
    state read is set by some command."""
    assert MVIN_OF_SLOT == ("mvin", "mvin2", "mvin3")
    assert [COMMANDS[n].load_slot for n in MVIN_OF_SLOT] == list(range(len(MVIN_OF_SLOT)))
    assert all(COMMANDS[n].reads == ("config_ld",) and COMMANDS[n].queue == "ld" for n in MVIN_OF_SLOT)
    g = Rig(16)
    with pytest.raises(GemminiFault):
        g("config_ld", state_id=len(MVIN_OF_SLOT), stride=4, scale=ONE)
    assert set(CONFIG_COMMANDS) == set(CONFIG_STATES)
    written = {s for c in COMMANDS.values() for s in c.writes}
    for c in COMMANDS.values():
        assert set(c.reads) <= written and set(c.writes) <= set(CONFIG_STATES), c.name
        for state in c.reads:
            if c.queue in CONTROLLER_QUEUES:
                assert COMMANDS[state].queue == c.queue, (c.name, state)


@pytest.mark.parametrize("dim", DIMS)
def test_mvin_accumulator_int32_shrink_and_accumulate(dim):
    g = Rig(dim)
    wide = np.array([[100000, -7, 3, 0][: min(4, dim)]], dtype=np.int32)
    addr = g.put(0, wide)
    g("config_ld", state_id=2, stride=16, scale=f32(0.5), shrink=0)   # int32: no mvin scale on acc
    g("mvin3", dram_addr=addr, local_addr=ACC_BIT | 3, rows=1, cols=wide.shape[1])
    assert g.m.acc[3, :wide.shape[1]].tolist() == wide[0].tolist()
    narrow = np.array([5, -5, 127, -128], dtype=np.int8)[: min(4, dim)]
    addr = g.put(64, narrow)
    g("config_ld", state_id=2, stride=4, scale=f32(0.5), shrink=1)     # int8, scaled, sign-extended
    g("mvin3", dram_addr=addr, local_addr=ACC_BIT | ACCUMULATE_BIT | 3, rows=1, cols=len(narrow))
    expect = wide[0].astype(np.int64) + np.array([2, -2, 64, -64])[: len(narrow)]   # 2.5→2, 63.5→64
    assert g.m.acc[3, :len(narrow)].tolist() == expect.tolist()
    g("mvin3", dram_addr=addr, local_addr=ACC_BIT | 3, rows=1, cols=len(narrow))   # overwrite
    assert g.m.acc[3, :len(narrow)].tolist() == [2, -2, 64, -64][: len(narrow)]


def test_mvin_pixel_repeats_pack_rows_above():
    g = Rig(4)
    addr = g.put(0, np.array([[11], [22]], dtype=np.int8))
    g("config_ld", state_id=0, stride=1, scale=ONE, pixel_repeats=3)
    g("mvin", dram_addr=addr, local_addr=5, rows=2, cols=1)
    s = g.m.spad
    assert s[5:7, 0].tolist() == [11, 22]
    assert s[4:6, 1].tolist() == [11, 22]      # p = 1: one row up, one column right
    assert s[3:5, 2].tolist() == [11, 22]      # p = 2
    assert s[3, 0] == 0 and s[3, 3] == 0


def test_mvin_pixel_repeats_stop_at_the_start_of_a_scratchpad_half():
    """A copy p rows above is dropped only for the rows it would move below the start of their
    half of the scratchpad (the RTL's PixelRepeater floorSub); the other rows are still packed."""
    g = Rig(4)
    half = g.m.config.sp_rows // 2
    for base in (0, half):
        g.m.spad[:] = 7
        addr = g.put(0, np.array([[11], [22], [33]], dtype=np.int8))
        g("config_ld", state_id=0, stride=1, scale=ONE, pixel_repeats=3)
        g("mvin", dram_addr=addr, local_addr=base, rows=3, cols=1)
        s = g.m.spad
        assert s[base:base + 3, 0].tolist() == [11, 22, 33]
        assert s[base:base + 2, 1].tolist() == [22, 33]      # p = 1: rows 1, 2 move up; row 0 would leave
        assert s[base:base + 1, 2].tolist() == [33]          # p = 2: only row 2 stays in the half
        assert s[base - 1, 1] == 7 and s[base - 1, 2] == 7  # nothing written below the half (or wrapped)


# ---- mvout and config_st -------------------------------------------------------------------------
@pytest.mark.parametrize("dim", DIMS)
def test_mvout_scratchpad_raw_multi_block(dim):
    g, rng = Rig(dim), np.random.default_rng(2)
    blocks = g.m.config.max_block_len
    g.m.spad[:4 * dim] = rand8(rng, 4 * dim, dim)
    cols = blocks * dim
    g("config_st", stride=cols + 5, acc_scale=f32(0.25), activation=1)   # neither applies to the scratchpad
    g("mvout", dram_addr=BASE, local_addr=dim, rows=3, cols=cols)
    out = g.get(0, 3, cols, np.int8, stride=cols + 5)
    expect = np.concatenate([g.m.spad[dim + b * dim:dim + b * dim + 3] for b in range(blocks)], axis=1)
    assert (out == expect).all()


@pytest.mark.parametrize("dim", DIMS)
def test_mvout_accumulator_relu_scale_saturation(dim):
    g = Rig(dim)
    vals = np.array([-300, -3, 3, 5, 7, 1000, 2, -1], dtype=np.int32)
    n = min(dim, 8)
    g.m.acc[7, :n] = vals[:n]
    g("config_st", stride=64, acc_scale=f32(0.5), activation=0)
    g("mvout", dram_addr=BASE, local_addr=ACC_BIT | 7, rows=1, cols=n)
    assert g.get(0, 1, n, np.int8)[0].tolist() == [-128, -2, 2, 2, 4, 127, 1, 0][:n]   # -0.5 → -0
    g("config_st", stride=64, acc_scale=0xFFFFFFFF, activation=1)          # all ones: keep 0.5
    g("mvout", dram_addr=BASE, local_addr=ACC_BIT | 7, rows=1, cols=n)
    assert g.get(0, 1, n, np.int8)[0].tolist() == [0, 0, 2, 2, 4, 127, 1, 0][:n]
    g("mvout", dram_addr=BASE + 256, local_addr=ACC_BIT | READ_FULL_BIT | 7, rows=1, cols=n)
    assert g.get(256, 1, n, np.int32)[0].tolist() == vals[:n].tolist()  # bit 29: raw int32
    if dim * 2 <= g.m.config.max_block_len * dim:
        with pytest.raises(GemminiFault) as e:      # full-width reads cannot be multi-block
            g("mvout", dram_addr=BASE, local_addr=ACC_BIT | READ_FULL_BIT, rows=1, cols=2 * dim)
        assert e.value.field == "cols"


def test_mvout_pooling_windows_and_padding():
    g = Rig(4)
    img = np.array([[1, 5, 2], [7, 3, 0], [4, 8, 6]])     # a 3×3 one-channel image, row-major pixels
    g.m.acc[0:9, 0] = img.reshape(-1)
    g.m.acc[0:9, 1] = -img.reshape(-1)
    # 2×2 windows, stride 1, no padding: 2×2 pooled pixels
    g("config_st", stride=2, acc_scale=ONE, pool_stride=1, pool_size=2, orows=3, ocols=3,
      porows=2, pocols=2, pool_out_dim=2)
    g("mvout", dram_addr=BASE, local_addr=ACC_BIT, rows=4, cols=2)
    assert g.get(0, 4, 2, np.int8).tolist() == [[7, -1], [5, 0], [8, -3], [8, 0]]
    # 2×2 windows, stride 2, one row/column of zero padding above/left
    g("config_st", stride=2, acc_scale=ONE, pool_stride=2, pool_size=2, upad=1, lpad=1,
      orows=3, ocols=3, porows=2, pocols=2, pool_out_dim=2)
    g("mvout", dram_addr=BASE + 64, local_addr=ACC_BIT, rows=4, cols=2)
    assert g.get(64, 4, 2, np.int8).tolist() == [[1, 0], [5, 0], [7, 0], [8, 0]]


# ---- preload / compute: weight-stationary --------------------------------------------------------
@pytest.mark.parametrize("dim", DIMS)
def test_ws_matmul_bias_accumulate_and_weight_reuse(dim):
    g, rng = Rig(dim), np.random.default_rng(3)
    d = dim
    A1, A2, B, D = rand8(rng, d, d), rand8(rng, d, d), rand8(rng, d, d), rand8(rng, d, d)
    g.m.spad[0:d], g.m.spad[d:2 * d], g.m.spad[2 * d:3 * d], g.m.spad[3 * d:4 * d] = A1, A2, B, D
    g.ws()
    ref = lambda a, b, dd=0: a.astype(np.int64) @ b.astype(np.int64) + dd  # noqa: E731
    g("preload", bd_addr=2 * d, bd_rows=d, bd_cols=d, c_addr=ACC_BIT, c_rows=d, c_cols=d)
    g("compute_preloaded", a_addr=0, a_rows=d, a_cols=d, bd_addr=3 * d, bd_rows=d, bd_cols=d)
    assert (g.m.acc[0:d] == ref(A1, B, D.astype(np.int64))).all()
    # funct 5 keeps the weights; a GARBAGE preload does not replace them; bit 30 adds
    g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=ACC_BIT | ACCUMULATE_BIT, c_rows=d, c_cols=d)
    g("compute_accumulated", a_addr=d, a_rows=d, a_cols=d, bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
    assert (g.m.acc[0:d] == ref(A1, B, D.astype(np.int64)) + ref(A2, B)).all()


@pytest.mark.parametrize("dim", DIMS)
def test_ws_masking_of_ragged_operands_and_outputs(dim):
    g, rng = Rig(dim), np.random.default_rng(4)
    d = dim
    ar, ac, bc = max(1, d - 1), max(1, d // 2 + 1), max(1, d - 2)   # A ar×ac, B ac×bc
    g.m.spad[0:2 * d] = rand8(rng, 2 * d, d)          # garbage beyond the operands' rows/cols
    A = g.m.spad[0:ar, :ac].astype(np.int64)
    B = g.m.spad[d:d + ac, :bc].astype(np.int64)
    g.m.acc[:d] = -77
    g.ws()
    g("preload", bd_addr=d, bd_rows=ac, bd_cols=bc, c_addr=ACC_BIT, c_rows=ar, c_cols=bc)
    g("compute_preloaded", a_addr=0, a_rows=ar, a_cols=ac, bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
    assert (g.m.acc[:ar, :bc] == A @ B).all()
    assert (g.m.acc[:ar, bc:] == -77).all() and (g.m.acc[ar:d] == -77).all()


@pytest.mark.parametrize("dim", DIMS)
def test_ws_to_scratchpad_saturates_then_relu(dim):
    g = Rig(dim)
    d = dim
    g.m.spad[0:d] = 0
    g.m.spad[0, 0], g.m.spad[1, 0], g.m.spad[2, 0] = 100, -100, 1
    g.m.spad[d, :3] = [100, -100, 3]                  # weights: one row, three columns
    for act, expect in ((0, [[127, -128, 127], [-128, 127, -128], [100, -100, 3]]),
                        (1, [[127, 0, 127], [0, 127, 0], [100, 0, 3]])):
        g.ws(activation=act)
        g("preload", bd_addr=d, bd_rows=1, bd_cols=3, c_addr=4 * d, c_rows=3, c_cols=3)
        g("compute_preloaded", a_addr=0, a_rows=3, a_cols=1, bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
        assert g.m.spad[4 * d:4 * d + 3, :3].tolist() == expect


@pytest.mark.parametrize("dim", DIMS)
def test_a_stride_and_c_stride(dim):
    g, rng = Rig(dim), np.random.default_rng(5)
    d = dim
    g.m.spad[0:3 * d] = rand8(rng, 3 * d, d)
    B = rand8(rng, d, d)
    g.m.spad[3 * d:4 * d] = B
    g("config_ex", dataflow=1, acc_scale=ONE, a_stride=3, c_stride=2)
    g("preload", bd_addr=3 * d, bd_rows=d, bd_cols=d, c_addr=ACC_BIT, c_rows=d, c_cols=d)
    g("compute_preloaded", a_addr=1, a_rows=d, a_cols=d, bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
    A = g.m.spad[1:1 + 3 * d:3].astype(np.int64)        # A row r from 1 + 3r
    assert (g.m.acc[0:2 * d:2] == A @ B.astype(np.int64)).all()      # C row r at 2r
    # set_only_strides changes the strides and nothing else (still WS, still no activation)
    g("config_ex", set_only_strides=1, a_stride=1, c_stride=1, dataflow=0, activation=1)
    assert g.m.dataflow == 1 and g.m.ex_activation == 0 and g.m.a_stride == 1 and g.m.c_stride == 1


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("dataflow,a_t,b_t", [(1, 0, 1), (1, 1, 0), (0, 1, 0), (0, 1, 1)])
def test_transposes(dim, dataflow, a_t, b_t):
    g, rng = Rig(dim), np.random.default_rng(6)
    d = dim
    X, Y = rand8(rng, d, d), rand8(rng, d, d)
    g.m.spad[0:d], g.m.spad[d:2 * d] = X, Y
    g("config_ex", dataflow=dataflow, acc_scale=ONE, a_stride=1, c_stride=1, a_transpose=a_t, b_transpose=b_t)
    A = X.T if a_t else X
    B = Y.T if b_t else Y
    if dataflow == 1:
        g("preload", bd_addr=d, bd_rows=d, bd_cols=d, c_addr=ACC_BIT, c_rows=d, c_cols=d)
        g("compute_preloaded", a_addr=0, a_rows=d, a_cols=d, bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
    else:
        g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=ACC_BIT, c_rows=d, c_cols=d)
        g("compute_preloaded", a_addr=0, a_rows=d, a_cols=d, bd_addr=d, bd_rows=d, bd_cols=d)
    assert (g.m.acc[0:d] == A.astype(np.int64) @ B.astype(np.int64)).all()


@pytest.mark.parametrize("dataflow,a_t,b_t", [(0, 0, 1), (1, 1, 1)])
def test_illegal_transpose_combination_faults(dataflow, a_t, b_t):
    g = Rig(4)
    with pytest.raises(GemminiFault, match="not allowed") as e:
        g("config_ex", dataflow=dataflow, a_transpose=a_t, b_transpose=b_t)
    assert e.value.pc == PC and e.value.field == "b_transpose" and "config_ex" in e.value.command


# ---- preload / compute: output-stationary --------------------------------------------------------
@pytest.mark.parametrize("dim", DIMS)
def test_os_bias_and_in_array_accumulation(dim):
    g, rng = Rig(dim), np.random.default_rng(7)
    d = dim
    A1, B1, A2, B2, D = (rand8(rng, d, d) for _ in range(5))
    for i, blk in enumerate((A1, B1, A2, B2, D)):
        g.m.spad[i * d:(i + 1) * d] = blk
    i64 = lambda x: x.astype(np.int64)  # noqa: E731
    g.os()
    # k = 0: preload D (bias) and do not write C yet; k = 1: funct 5 continues in the PEs
    g("preload", bd_addr=4 * d, bd_rows=d, bd_cols=d, c_addr=GARBAGE_ADDR, c_rows=d, c_cols=d)
    g("compute_preloaded", a_addr=0, a_rows=d, a_cols=d, bd_addr=d, bd_rows=d, bd_cols=d)
    assert (g.m.acc[0:d] == 0).all()
    g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=ACC_BIT, c_rows=d, c_cols=d)
    g("compute_accumulated", a_addr=2 * d, a_rows=d, a_cols=d, bd_addr=3 * d, bd_rows=d, bd_cols=d)
    assert (g.m.acc[0:d] == i64(D) + i64(A1) @ i64(B1) + i64(A2) @ i64(B2)).all()
    # funct 4 with a GARBAGE preload starts again from zero
    g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=ACC_BIT | ACCUMULATE_BIT, c_rows=d, c_cols=d)
    g("compute_preloaded", a_addr=0, a_rows=d, a_cols=d, bd_addr=d, bd_rows=d, bd_cols=d)
    assert (g.m.acc[0:d] == i64(D) + i64(A1) @ i64(B1) * 2 + i64(A2) @ i64(B2)).all()


@pytest.mark.parametrize("dim", DIMS)
def test_os_in_shift_rounds_half_even_and_saturates_to_20_bits(dim):
    g = Rig(dim)
    d = dim
    g.m.spad[0:2 * d] = 0
    g.m.spad[0:4, 0] = [5, 6, 7, -5]           # A column 0
    g.m.spad[d, 0] = 1                         # B[0, 0] = 1: C column 0 = A column 0
    g("config_ex", dataflow=0, acc_scale=ONE, a_stride=1, c_stride=1, in_shift=1)
    g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=ACC_BIT, c_rows=4, c_cols=1)
    g("compute_preloaded", a_addr=0, a_rows=d, a_cols=d, bd_addr=d, bd_rows=d, bd_cols=d)
    assert g.m.acc[0:4, 0].tolist() == [2, 3, 4, -2]    # 2.5→2, 3→3, 3.5→4, -2.5→-2
    # 20-bit saturation of the array's output (the PE accumulators are 32-bit)
    g.os()
    g.m.spad[0:d] = 0
    g.m.spad[0, 0] = 127
    g.m.spad[d:2 * d] = 0
    g.m.spad[d, 0] = 127
    g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=GARBAGE_ADDR, c_rows=1, c_cols=1)
    g("compute_preloaded", a_addr=0, a_rows=d, a_cols=d, bd_addr=d, bd_rows=d, bd_cols=d)
    for _ in range(31):
        g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=GARBAGE_ADDR, c_rows=1, c_cols=1)
        g("compute_accumulated", a_addr=0, a_rows=d, a_cols=d, bd_addr=d, bd_rows=d, bd_cols=d)
    g("preload", bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d, c_addr=ACC_BIT, c_rows=1, c_cols=1)
    g("compute_accumulated", a_addr=0, a_rows=d, a_cols=d, bd_addr=d, bd_rows=d, bd_cols=d)
    assert 33 * 127 * 127 > (1 << 19) and g.m.acc[0, 0] == (1 << 19) - 1


@pytest.mark.parametrize("dim", DIMS)
def test_operands_read_from_the_accumulator(dim):
    """Execute-side accumulator reads: config_ex's scale and activation, saturated to int8;
    bit 29 reads the raw value."""
    g = Rig(dim)
    d = dim
    g.m.acc[0:d] = 0
    g.m.acc[0, :3] = [300, -9, 5]               # A row 0
    g.m.spad[d:2 * d] = 0
    g.m.spad[d:d + 3, 0] = 1                   # B column 0 sums A's first three columns
    g("config_ex", dataflow=1, acc_scale=f32(0.5), a_stride=1, c_stride=1, activation=1)
    g("preload", bd_addr=d, bd_rows=d, bd_cols=d, c_addr=ACC_BIT | 100, c_rows=1, c_cols=1)
    g("compute_preloaded", a_addr=ACC_BIT, a_rows=1, a_cols=d, bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
    assert g.m.acc[100, 0] == 127 + 0 + 2           # relu, ×0.5: 150→127 (int8), -4.5→0, 2.5→2
    g.m.acc[0, :3] = [300, -9, 5]
    g("preload", bd_addr=d, bd_rows=d, bd_cols=d, c_addr=ACC_BIT | 100, c_rows=1, c_cols=1)
    g("compute_preloaded", a_addr=ACC_BIT | READ_FULL_BIT, a_rows=1, a_cols=d,
      bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
    assert g.m.acc[100, 0] == 296


def test_int32_inputs():
    """A configuration with int32 inputType: 4-byte scratchpad elements end to end."""
    g = Rig(4, input_type="int32")
    A = np.array([[70000, -2, 0, 1], [1, 1, 1, 1], [0, 0, 0, 0], [-5, 4, 3, 2]], dtype=np.int32)
    B = np.eye(4, dtype=np.int32) * 3
    a, b = g.put(0, A), g.put(64, B)
    g("config_ld", state_id=0, stride=16, scale=ONE)
    g("mvin", dram_addr=a, local_addr=0, rows=4, cols=4)
    g("mvin", dram_addr=b, local_addr=4, rows=4, cols=4)
    g.ws()
    g("preload", bd_addr=4, bd_rows=4, bd_cols=4, c_addr=8, c_rows=4, c_cols=4)
    g("compute_preloaded", a_addr=0, a_rows=4, a_cols=4, bd_addr=GARBAGE_ADDR, bd_rows=4, bd_cols=4)
    g("config_st", stride=16, acc_scale=ONE)
    g("mvout", dram_addr=BASE + 256, local_addr=8, rows=4, cols=4)
    assert (g.get(256, 4, 4, np.int32) == A.astype(np.int64) * 3).all()


# ---- hardware loops --------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("variant", ["int8_bias_relu", "full_c_low_d", "a_transposed", "b_transposed"])
def test_loop_ws_tiled_matmul(dim, variant):
    """LOOP_WS configured as tiled_matmul_outer does: ragged I/J/K blocks with pads, bias D."""
    g, rng = Rig(dim), np.random.default_rng(8)
    d = dim
    I, J, K = 2, 3, 2
    pad_i, pad_j, pad_k = 1, min(3, d - 1), 2
    M, N, Kd = I * d - pad_i, J * d - pad_j, K * d - pad_k
    a_t, b_t = variant == "a_transposed", variant == "b_transposed"
    full_c, low_d, relu = variant == "full_c_low_d", variant == "full_c_low_d", variant == "int8_bias_relu"
    A, B = rand8(rng, M, Kd), rand8(rng, Kd, N)
    A_dram, B_dram = (A.T.copy() if a_t else A), (B.T.copy() if b_t else B)
    D = rand8(rng, M, N) if low_d else rng.integers(-5000, 5000, (M, N)).astype(np.int32)
    a = g.put(0x0, A_dram)
    b = g.put(0x20000, B_dram)
    dd = g.put(0x40000, D)
    c_off = 0x60000
    scale = 0.03125
    # the FSM issues no config_ex: the transposes are set beforehand, as tiled_matmul_outer does
    g("config_ex", dataflow=1, acc_scale=ONE, a_stride=1, c_stride=1, a_transpose=int(a_t), b_transpose=int(b_t))
    g("config_st", stride=N * (4 if full_c else 1), acc_scale=f32(scale), activation=int(relu))
    g("config_ld", state_id=0, stride=A_dram.shape[1], scale=ONE, block_stride=d)
    g("config_ld", state_id=1, stride=B_dram.shape[1], scale=ONE, block_stride=d)
    g("config_ld", state_id=2, stride=N * D.itemsize, scale=ONE, block_stride=d, shrink=int(low_d))
    g("loop_ws_config_bounds", max_i=I, max_j=J, max_k=K, pad_i=pad_i, pad_j=pad_j, pad_k=pad_k)
    g("loop_ws_config_addrs_ab", a_addr=a, b_addr=b)
    g("loop_ws_config_addrs_dc", d_addr=dd, c_addr=BASE + c_off)
    g("loop_ws_config_strides_ab", a_stride=A_dram.shape[1], b_stride=B_dram.shape[1])
    g("loop_ws_config_strides_dc", d_stride=N, c_stride=N)
    # ex_accumulate: the first k-block adds onto the bias (tiled_matmul_outer sets it with a D)
    g("loop_ws", ex_accumulate=1, full_c=int(full_c), low_d=int(low_d), a_transpose=int(a_t), b_transpose=int(b_t))
    exact = A.astype(np.int64) @ B.astype(np.int64) + D.astype(np.int64)
    if full_c:
        assert (g.get(c_off, M, N, np.int32) == exact).all()
    else:
        y = (np.maximum(exact, 0) if relu else exact) * scale      # 2^-5: exact in float
        assert (g.get(c_off, M, N, np.int8) == np.clip(np.rint(y), -128, 127)).all()   # rint: half-even


# ---- control, counters, faults ---------------------------------------------------------------------
@pytest.mark.parametrize("dim", DIMS)
def test_flush_fence_clockgate_leave_state(dim):
    g = Rig(dim)
    g.m.spad[:3] = 5
    g.m.acc[:3] = 6
    g("flush", skip=1)
    g("flush", skip=0)
    g("clkgate_en", enable=1)
    g.m.fence()
    assert (g.m.spad[:3] == 5).all() and (g.m.acc[:3] == 6).all()


def test_counters_without_a_timing_model_read_zero():
    """No cycle model, no clock: every event reads 0 (a configured counter reads 0 at once, as a
    public test program expects); the counter index is still checked."""
    g = Rig(4, num_counters=4)
    g("counter", change_config=1, counter_index=1, event_id=9)       # LOAD_ACTIVE_CYCLE
    assert g("counter", counter_index=1) == 0
    for _ in range(3):
        g("mvin", dram_addr=0, local_addr=0, rows=1, cols=1)
    assert g("counter", counter_index=1, take_snapshot=1) == 0
    with pytest.raises(GemminiFault) as e:
        g("counter", counter_index=g.m.config.num_counters)
    assert e.value.field == "counter_index"


@pytest.mark.parametrize("dim", DIMS)
def test_faults_name_pc_command_and_field(dim):
    g = Rig(dim)
    cfg = g.m.config

    def fault(field, name, **f):
        with pytest.raises(GemminiFault) as e:
            g(name, **f)
        assert e.value.pc == PC and e.value.command.startswith(name) and e.value.field == field, e.value
        assert f"{PC:#x}" in str(e.value)

    fault("local_addr", "mvin", dram_addr=0, local_addr=cfg.sp_rows - 1, rows=2, cols=1)
    fault("local_addr", "mvout", dram_addr=BASE, local_addr=ACC_BIT | (cfg.acc_rows - 1), rows=2, cols=1)
    fault("rows", "mvin", dram_addr=0, local_addr=0, rows=dim + 1, cols=1)
    fault("dram_addr", "mvin", dram_addr=BASE - 16, local_addr=0, rows=1, cols=1)
    fault("dram_addr", "mvout", dram_addr=BASE + (1 << 20) - 1, local_addr=0, rows=1, cols=2)
    fault("preload", "compute_preloaded", a_addr=0, a_rows=1, a_cols=1)
    fault("in_shift", "config_ex", in_shift=32)
    fault("cmd_type", "config_norm")
    for name in ("config_ex", "config_st", "loop_ws", "loop_conv_ws"):   # LAYERNORM, IGELU, SOFTMAX
        fault("activation", name, activation=4 if name == "loop_ws" else 2)
    g("preload", bd_addr=GARBAGE_ADDR, c_addr=ACC_BIT | cfg.acc_rows, c_rows=1, c_cols=1)
    fault("c_addr", "compute_preloaded", a_addr=0, a_rows=1, a_cols=1)
    with pytest.raises(GemminiFault) as e:
        g.m.execute(99, 0, 0, PC)
    assert e.value.field == "funct" and e.value.pc == PC and "unknown" in str(e.value)
