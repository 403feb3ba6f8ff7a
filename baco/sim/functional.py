"""Gemmini functional model: the executable specification of gemmini-isa.md.

`GemminiModel(config, memory).execute(funct, rs1, rs2, pc)` runs one RoCC
command against the scratchpad/accumulator state and a DRAM `Memory`. Every
command is decoded with the one command table (baco.gemmini.isa). Where the
Spike model and the RTL differ (§8), the RTL is followed: OS results are
rounding-shifted by in_shift and saturated to the array's output width, the
mvout activation comes before the scale, config_st's all-ones scale keeps the
previous one, a packed pixel copy (config_ld pixel_repeats) is dropped where it would
cross below the start of its scratchpad half. A transposed operand's rows/cols fields
describe it as fed to the array, after the transpose (both models agree).
"""
from __future__ import annotations

import numpy as np

from baco.gemmini.arith import (acc_to_int8, bits_f32, max_pool, rounding_right_shift,
                                saturate, scale_to_int)
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import (ACC_BIT, ACCUMULATE_BIT, COMMANDS, READ_FULL_BIT, GemminiFault,
                              IsaError, decode, disassemble, encode, is_garbage)
from baco.sim.batched import run_pairs
from baco.sim.loops import LoopConvState, LoopWsState, loop_conv_program, loop_ws_program, require_ext_spad
from baco.sim.timing import EXTERNAL_BASE, EXTERNAL_TOTALS

# below this many preload/compute pairs numpy's fixed cost exceeds running them one by one
MIN_BATCHED_PAIRS = 8

ALLOWED_TRANSPOSES = {  # (dataflow, a_transpose, b_transpose) -> allowed (§1.3.1)
    (0, 0, 0): True, (0, 0, 1): False, (0, 1, 0): True, (0, 1, 1): True,
    (1, 0, 0): True, (1, 0, 1): True, (1, 1, 0): True, (1, 1, 1): False}


class Memory:
    """DRAM as the model sees it."""

    def read(self, addr: int, n: int) -> bytes:
        raise NotImplementedError

    def write(self, addr: int, data: bytes) -> None:
        raise NotImplementedError


class ArrayMemory(Memory):
    """A bytearray DRAM at [base, base + size), bounds-checked."""

    def __init__(self, base: int = 0x80000000, size: int = 1 << 20):
        self.base, self.size = base, size
        self.data = bytearray(size)

    def _off(self, addr, n, what):
        off = addr - self.base
        if off < 0 or off + n > self.size:
            raise GemminiFault(f"DRAM {what} of {n} bytes at {addr:#x} is outside memory "
                               f"[{self.base:#x}, {self.base + self.size:#x})", field="dram_addr")
        return off

    def read(self, addr, n):
        off = self._off(addr, n, "read")
        return bytes(self.data[off:off + n])

    def write(self, addr, data):
        off = self._off(addr, len(data), "write")
        self.data[off:off + len(data)] = data


class _LoadSlot:
    def __init__(self):
        self.stride, self.scale, self.shrink, self.block_stride, self.pixel_repeats = 0, 1.0, 0, 0, 1


class GemminiModel:
    def __init__(self, config: GemminiConfig | None = None, memory: Memory | None = None):
        self.config = config = (config or GemminiConfig()).validate()
        self.memory = memory or ArrayMemory()
        d = config.dim
        in_dt = np.int8 if config.input_type == "int8" else np.int32
        self.in_bits = 8 * config.input_bytes
        self.spad = np.zeros((config.sp_rows, d), dtype=in_dt)
        self.acc = np.zeros((config.acc_rows, d), dtype=np.int32)
        # (name, fields, pc) of every command the units execute; an observer with a true
        # `sees_loops` attribute (the cycle model) gets a hardware loop whole instead, as
        # (name, baco.sim.loops.LoopProgram, pc), and not the commands it expands to
        self.observers = []
        self.stats = {}
        self.expanding = False     # executing the commands a hardware loop unrolls to
        self.counter_source = self._no_clock_counter
        self.reset_config()
        self.counter_events = [0] * config.num_counters   # event code per counter, 0 = disabled
        self.counter_base = [0] * config.num_counters     # event value when the counter was zeroed
        self.external_base = {}                           # external event code -> value at the last reset
        self.snapshot = None

    def reset_config(self):
        d = self.config.dim
        self.dataflow, self.ex_activation, self.a_transpose, self.b_transpose = 1, 0, 0, 0
        self.a_stride, self.c_stride, self.ex_acc_scale, self.in_shift = 1, 1, 1.0, 0
        self.load = [_LoadSlot() for _ in range(3)]
        self.st_stride, self.st_activation, self.st_scale = 0, 0, 1.0
        self.pool = dict(pool_stride=0, pool_size=0, upad=0, lpad=0, pool_out_dim=0, porows=0,
                         pocols=0, orows=0, ocols=0)
        self.weights = np.zeros((d, d), dtype=np.int64)       # WS: weights held in the array
        self.os_acc = np.zeros((d, d), dtype=np.int64)        # OS: accumulators in the PEs
        self.preload = None                                   # fields of the pending preload
        self.loop_ws = LoopWsState()
        self.loop_conv = LoopConvState()   # LOOP_CONV_WS config 1..6, LoopConv slot, accumulator half

    # ---- dispatch ----------------------------------------------------------------------
    def execute(self, funct: int, rs1: int, rs2: int, pc: int | None = None) -> int:
        try:
            cmd, f = decode(funct, rs1, rs2)
        except IsaError as e:
            raise GemminiFault(str(e), pc=pc, command=f"funct {funct}", field="funct") from None
        self.pc, self._rs = pc, (funct, rs1, rs2)
        return self._run(cmd.name, cmd.queue, f)

    def _run(self, name, queue, f):
        """Run one decoded command (self.pc and self._rs, its words or None, already set)."""
        self._current = name
        self.stats[name] = self.stats.get(name, 0) + 1
        if queue != "loop":     # loops are observed through the commands they expand to
            for obs in self.observers:
                if not (self.expanding and getattr(obs, "sees_loops", False)):
                    obs(name, f, self.pc)
        handler = getattr(self, "do_" + name, None)
        if handler is None:
            raise self.fault(f"{name} is not supported by this model", "funct")
        try:
            return handler(f) or 0
        except GemminiFault as e:
            if e.command is not None:
                raise
            raise self.fault(e.message, e.field) from None   # a memory fault: name the command

    def run_stream(self, commands):
        """Execute (funct, rs1, rs2) triples (e.g. from baco.sim.loops)."""
        for funct, rs1, rs2 in commands:
            self.execute(funct, rs1, rs2, self.pc)

    def fault(self, message, field=None):
        if self._rs is None:      # a command of a hardware loop: packed only to be named
            self._rs = (COMMANDS[self._current].funct, *encode(self._current, **self._fields))
        funct, rs1, rs2 = self._rs
        return GemminiFault(message, pc=self.pc, command=disassemble(funct, rs1, rs2), field=field)

    def _check_activation(self, f):
        """NONE and RELU only: LAYERNORM/IGELU/SOFTMAX (2–4) exist only with has_normalizations,
        and their normalisation units are not modelled."""
        act = f["activation"]
        if act > 1:
            name = {2: "LAYERNORM", 3: "IGELU", 4: "SOFTMAX"}.get(act, "undefined")
            why = "is not modelled" if self.config.has_normalizations else "needs a Gemmini built with has_normalizations"
            raise self.fault(f"activation {act} ({name}) {why}", "activation")

    def fence(self):
        self.stats["fence"] = self.stats.get("fence", 0) + 1

    # ---- local addresses ------------------------------------------------------------
    def _row(self, addr, rows, field, write=False):
        """(is_acc, first row) of a local address range, checked against the memories."""
        acc = bool(addr & ACC_BIT)
        row = addr & 0x3FFFFFF & ~(0b111 << 26)
        limit = self.config.acc_rows if acc else self.config.sp_rows
        if row + rows > limit:
            mem = "accumulator" if acc else "scratchpad"
            raise self.fault(f"{mem} rows {row}..{row + rows - 1} are out of range (it has {limit} rows)", field)
        return acc, row

    def _check_rc(self, rows, cols, field_prefix, max_cols=None):
        d = self.config.dim
        if rows > d:
            raise self.fault(f"{rows} rows exceed DIM={d}", f"{field_prefix}rows")
        if cols > (max_cols or d):
            raise self.fault(f"{cols} columns exceed {max_cols or d}", f"{field_prefix}cols")

    def read_operand(self, addr, rows, cols, field, transpose=False):
        """A DIM×DIM int64 operand block as fed to the array; outside rows/cols (or GARBAGE)
        reads zero. rows/cols describe the operand as fed, after any transpose: a transposed
        operand reads `cols` stored rows of `rows` elements (the RTL's ExecuteController swaps
        the fields when the transposer is in use; libgemmini masks after transposing)."""
        d = self.config.dim
        out = np.zeros((d, d), dtype=np.int64)
        self._check_rc(rows, cols, field.replace("addr", ""))
        if is_garbage(addr) or rows == 0 or cols == 0:
            return out
        if transpose:
            rows, cols = cols, rows
        acc, row = self._row(addr, rows, field)
        if acc and not self.config.acc_read_operands:
            raise self.fault("this Gemmini's execute unit cannot read the accumulator as an operand "
                             "(acc_read_operands is off)", field)
        if acc:
            block = self.acc[row:row + rows, :cols].astype(np.int64)
            if not addr & READ_FULL_BIT:
                block = saturate(scale_to_int(np.maximum(block, 0) if self.ex_activation == 1 else block,
                                              self.ex_acc_scale), self.in_bits)
        else:
            block = self.spad[row:row + rows, :cols].astype(np.int64)
        out[:rows, :cols] = block
        return out.T.copy() if transpose else out

    # ---- configuration ----------------------------------------------------------------
    def do_config_ex(self, f):
        if f["set_only_strides"]:
            self.a_stride, self.c_stride = f["a_stride"], f["c_stride"]
            return
        combo = (f["dataflow"], f["a_transpose"], f["b_transpose"])
        if not ALLOWED_TRANSPOSES[combo]:
            raise self.fault(f"{'WS' if combo[0] else 'OS'} with a_transpose={combo[1]} b_transpose={combo[2]} "
                             "is not allowed (one transposer per array)", "b_transpose")
        if f["in_shift"] >= 32:
            raise self.fault(f"in_shift {f['in_shift']} must be < 32", "in_shift")
        self._check_activation(f)
        self.dataflow, self.ex_activation = f["dataflow"], f["activation"]
        self.a_transpose, self.b_transpose = f["a_transpose"], f["b_transpose"]
        self.a_stride, self.c_stride = f["a_stride"], f["c_stride"]
        self.ex_acc_scale, self.in_shift = bits_f32(f["acc_scale"]), f["in_shift"]

    def do_config_ld(self, f):
        if f["state_id"] > 2:
            raise self.fault(f"load slot {f['state_id']} does not exist (0..2)", "state_id")
        slot = self.load[f["state_id"]]
        slot.stride, slot.scale, slot.shrink = f["stride"], bits_f32(f["scale"]), f["shrink"]
        slot.block_stride, slot.pixel_repeats = f["block_stride"], max(1, f["pixel_repeats"])

    def do_config_st(self, f):
        self._check_activation(f)
        self.st_stride, self.st_activation = f["stride"], f["activation"]
        if f["acc_scale"] != 0xFFFFFFFF:       # RTL: all ones keeps the previous scale
            self.st_scale = bits_f32(f["acc_scale"])
        self.pool = {k: f[k] for k in self.pool}

    def do_config_norm(self, f):
        if not self.config.has_normalizations:
            raise self.fault("config_norm needs a Gemmini built with has_normalizations", "cmd_type")

    def do_flush(self, f):
        pass

    def do_clkgate_en(self, f):
        pass

    # ---- data movement ------------------------------------------------------------------
    def _mvin(self, slot_id, f):
        cfg, slot = self.config, self.load[slot_id]
        rows, cols, dram, addr = f["rows"], f["cols"], f["dram_addr"], f["local_addr"]
        if is_garbage(addr):
            return
        acc = bool(addr & ACC_BIT)
        elem_bytes = cfg.input_bytes if (not acc or slot.shrink) else cfg.acc_bytes
        max_cols = (cfg.max_block_len if (not acc or slot.shrink) else cfg.max_block_len_acc) * cfg.dim
        self._check_rc(rows, cols, "", max_cols)
        blocks = -(-cols // cfg.dim)
        if blocks > 1 and slot.block_stride < rows:
            raise self.fault(f"block_stride {slot.block_stride} is smaller than rows {rows}", "block_stride")
        last_row = (blocks - 1) * slot.block_stride + rows
        _, row = self._row(addr, last_row, "local_addr")
        dt = {1: np.int8, 4: np.int32}[elem_bytes]
        if dram == 0:
            data = np.zeros((rows, cols), dtype=np.int64)
        elif slot.stride == 0:                       # one row, repeated
            data = np.repeat(np.frombuffer(self.memory.read(dram, cols * elem_bytes), dtype=dt)[None], rows, 0)
        else:
            data = self._read_rows(dram, rows, cols * elem_bytes, slot.stride).view(dt) if rows \
                else np.zeros((0, cols))
        data = data.astype(np.int64)
        if dram != 0 and cfg.mvin_scale and (not acc or slot.shrink) and slot.scale != 1.0:
            data = saturate(scale_to_int(data, slot.scale), self.in_bits)
        for b in range(blocks):
            c0, c1 = b * cfg.dim, min(cols, (b + 1) * cfg.dim)
            r0 = row + b * slot.block_stride
            part = data[:, c0:c1]
            if acc:
                if addr & ACCUMULATE_BIT:
                    self.acc[r0:r0 + rows, :c1 - c0] += part.astype(np.int32)
                else:
                    self.acc[r0:r0 + rows, :c1 - c0] = part
            else:
                self.spad[r0:r0 + rows, :c1 - c0] = part
            if acc:
                continue
            # first-layer packing: each row is also written p rows above, shifted right by p·cols,
            # except where that would cross below the start of its half of the scratchpad (the
            # RTL's PixelRepeater drops those writes)
            floor = 0 if row < cfg.sp_rows // 2 else cfg.sp_rows // 2
            for p in range(1, slot.pixel_repeats):
                shift = p * cols
                if shift >= cfg.dim:
                    break
                lo = max(r0, floor + p)      # the first row whose copy stays in its half
                if lo < r0 + rows:
                    width = min(cfg.dim, shift + c1 - c0) - shift
                    self.spad[lo - p:r0 + rows - p, shift:shift + width] = part[lo - r0:, :width]

    def _read_rows(self, dram, rows, row_bytes, stride):
        """(rows, row_bytes) uint8 from DRAM rows `stride` bytes apart: one read of the span
        when it is not much larger than the rows (the per-command hot path of a strided mvin),
        else (or when a gap between the rows is outside the memory) one read per row."""
        span = (rows - 1) * stride + row_bytes
        if rows > 1 and span <= 4 * rows * row_bytes:
            try:
                flat = np.frombuffer(self.memory.read(dram, span), dtype=np.uint8)
            except GemminiFault:
                flat = None
            if flat is not None:
                return np.lib.stride_tricks.as_strided(flat, (rows, row_bytes), (stride, 1)).copy()
        return np.stack([np.frombuffer(self.memory.read(dram + r * stride, row_bytes), dtype=np.uint8)
                         for r in range(rows)])

    def do_mvin(self, f):
        self._mvin(COMMANDS["mvin"].load_slot, f)

    def do_mvin2(self, f):
        self._mvin(COMMANDS["mvin2"].load_slot, f)

    def do_mvin3(self, f):
        self._mvin(COMMANDS["mvin3"].load_slot, f)

    def do_mvout(self, f):
        cfg = self.config
        rows, cols, dram, addr = f["rows"], f["cols"], f["dram_addr"], f["local_addr"]
        acc = bool(addr & ACC_BIT)
        full = acc and bool(addr & READ_FULL_BIT)
        pooled = self.pool["pool_stride"] != 0
        max_cols = cfg.dim if (full or pooled) else cfg.max_block_len * cfg.dim
        if pooled:   # the rows field is ignored: the whole orows×ocols image is read
            self._check_pooling(full)
            rows = self.pool["orows"] * self.pool["ocols"]
            self._check_rc(0, cols, "", max_cols)
        else:
            if self.pool["pool_size"] != 0:
                raise self.fault("config_st set pool_size with pool_stride 0: the RTL's 1-D mvout mode "
                                 "(StoreController mvout_1d), which baco.sim does not model", "pool_size")
            self._check_rc(rows, cols, "", max_cols)
        blocks = -(-cols // cfg.dim)
        _, row = self._row(addr, (blocks - 1) * cfg.dim + rows, "local_addr")
        if full and not cfg.acc_read_full_width:
            raise self.fault("full-width accumulator reads need acc_read_full_width", "local_addr")
        parts = []
        for b in range(blocks):
            c = min(cfg.dim, cols - b * cfg.dim)
            src = (self.acc if acc else self.spad)[row + b * cfg.dim:row + b * cfg.dim + rows, :c]
            parts.append(src)
        data = np.concatenate(parts, axis=1) if parts else np.zeros((rows, 0))
        if acc and not full:
            data = self._acc_to_input(data)
        elif not acc:
            data = data.astype(self.spad.dtype)
        else:
            data = data.astype(np.int32)
        if pooled:
            self._mvout_pooled(dram, data)
            return
        if rows > 1 and self.st_stride == data.shape[1] * data.itemsize:     # contiguous rows: one write
            try:
                self.memory.write(dram, np.ascontiguousarray(data).tobytes())
                return
            except GemminiFault:     # the rows lie in two arrays: one write per row, each checked
                pass
        for r in range(rows):
            self.memory.write(dram + r * self.st_stride, data[r].tobytes())

    def _acc_to_input(self, data):
        """Accumulator rows as a move-out writes them in the input type: config_st's scale and
        activation, rounded and saturated."""
        if self.in_bits == 8:
            return acc_to_int8(data, self.st_scale, self.st_activation == 1)
        return saturate(scale_to_int(np.maximum(data, 0) if self.st_activation == 1 else data, self.st_scale),
                        self.in_bits).astype(np.int32)

    def do_mvout_spad(self, f):
        """MVOUT_SPAD (Gemmini master, §1.3.10): `rows` accumulator rows of `cols` elements through
        config_st's scale and activation, as an int8 mvout, into scratchpad rows dst_addr +
        r·dst_stride (G:StoreController current_dst_spad_addr); the other columns keep their values."""
        require_ext_spad(self.config, "mvout_spad (funct 23)", "funct")
        rows, cols, src, dst, stride = f["rows"], f["cols"], f["local_addr"], f["dst_addr"], f["dst_stride"]
        if not src & ACC_BIT or src & READ_FULL_BIT:
            raise self.fault("mvout_spad reads the accumulator at input width (a scratchpad source or a "
                             "full-width read, address bit 29, is not a scratchpad row)", "local_addr")
        if dst & ACC_BIT:
            raise self.fault("mvout_spad's destination must be the scratchpad (the RTL asserts it)", "dst_addr")
        if self.pool["pool_stride"] or self.pool["pool_size"]:
            raise self.fault("mvout_spad with config_st's pooling or 1-D mode: its scratchpad destination "
                             "does not follow the pooled rows", "pool_stride")
        # one block: the RTL's destination row does not step with the block counter
        self._check_rc(rows, cols, "")
        if rows == 0 or cols == 0:
            return
        _, row = self._row(src, rows, "local_addr")
        _, dst_row = self._row(dst, (rows - 1) * stride + 1, "dst_addr")
        data = self._acc_to_input(self.acc[row:row + rows, :cols])
        for r in range(rows):      # in order: with stride 0 the last row stays
            self.spad[dst_row + r * stride, :cols] = data[r]

    def _check_pooling(self, full):
        if self.pool["pool_size"] == 0:
            raise self.fault("pooling (pool_stride != 0) with pool_size 0", "pool_size")
        if full:
            raise self.fault("a pooled mvout writes int8 pixels: it cannot read the accumulator at full "
                             "width (address bit 29)", "local_addr")

    def _mvout_pooled(self, dram, data):
        """Max pooling over an orows×ocols NHWC image whose pixels are the rows read (§3.4):
        porows×pocols pooled pixels, pixel (pr, pc) at dram + (pr·pool_out_dim + pc)·stride."""
        p = self.pool
        pooled = max_pool(data, p["orows"], p["ocols"], p["pool_size"], p["pool_stride"], p["upad"], p["lpad"],
                          p["porows"], p["pocols"])
        for pr in range(p["porows"]):
            for pc in range(p["pocols"]):
                self.memory.write(dram + (pr * p["pool_out_dim"] + pc) * self.st_stride,
                                  pooled[pr * p["pocols"] + pc].tobytes())

    # ---- compute --------------------------------------------------------------------------
    def do_preload(self, f):
        self._check_rc(f["bd_rows"], f["bd_cols"], "bd_")
        self._check_rc(f["c_rows"], f["c_cols"], "c_")
        self.preload = f

    def do_compute_preloaded(self, f):
        self._compute(f, flip=True)

    def do_compute_accumulated(self, f):
        self._compute(f, flip=False)

    def _compute(self, f, flip):
        if self.preload is None:
            raise self.fault("compute without a preceding preload", "preload")
        pre, self.preload = self.preload, None
        A = self.read_operand_strided(f["a_addr"], f["a_rows"], f["a_cols"], transpose=self.a_transpose)
        if self.dataflow == 1:   # WS: preloaded B is held in the array; compute rs2 is the bias D
            if flip:
                self.weights = self.read_operand(pre["bd_addr"], pre["bd_rows"], pre["bd_cols"], "bd_addr",
                                                 transpose=self.b_transpose)
            D = self.read_operand(f["bd_addr"], f["bd_rows"], f["bd_cols"], "bd_addr")
            C = A @ self.weights + D
        else:                    # OS: preloaded D seeds the PE accumulators; compute rs2 is B
            B = self.read_operand(f["bd_addr"], f["bd_rows"], f["bd_cols"], "bd_addr",
                                  transpose=self.b_transpose)
            if flip:
                self.os_acc = self.read_operand(pre["bd_addr"], pre["bd_rows"], pre["bd_cols"], "bd_addr")
            self.os_acc = self.os_acc + A @ B
            C = saturate(rounding_right_shift(self.os_acc, self.in_shift), self.config.spatial_output_bits)
        self._write_c(pre["c_addr"], C, pre["c_rows"], pre["c_cols"])

    def read_operand_strided(self, addr, rows, cols, transpose=False):
        """A as fed to the array: stored row r from addr + r·a_stride (a column of A when
        A is transposed, as Spike and the RTL's a_addr_offset step it)."""
        if self.a_stride == 1 or is_garbage(addr):
            return self.read_operand(addr, rows, cols, "a_addr", transpose)
        d = self.config.dim
        out = np.zeros((d, d), dtype=np.int64)
        self._check_rc(rows, cols, "a_")
        stored_rows, stored_cols = (cols, rows) if transpose else (rows, cols)
        for r in range(stored_rows):
            out[r] = self.read_operand(addr + r * self.a_stride, 1, stored_cols, "a_addr")[0]
        return out.T.copy() if transpose else out

    def _write_c(self, addr, C, rows, cols):
        if is_garbage(addr) or rows == 0 or cols == 0:
            return
        acc, row = self._row(addr, (rows - 1) * self.c_stride + 1, "c_addr")
        if acc:
            vals = C[:rows, :cols].astype(np.int64)
        else:
            vals = saturate(C[:rows, :cols], self.in_bits)
            if self.ex_activation == 1:
                vals = np.maximum(vals, 0)
        mem = self.acc if acc else self.spad
        accumulate = acc and addr & ACCUMULATE_BIT
        if self.c_stride == 0:      # every row lands on one: they apply in order
            for r in range(rows):
                mem[row, :cols] = (mem[row, :cols] + vals[r]).astype(np.int32) if accumulate else vals[r]
            return
        target = mem[row:row + (rows - 1) * self.c_stride + 1:self.c_stride, :cols]    # a view
        # int32 wrap-around, as the accumulator's adders
        target[...] = (target.astype(np.int64) + vals).astype(np.int32) if accumulate else vals

    # ---- hardware loops ----------------------------------------------------------------------
    def _latch_loop_ws(self, f):
        self.loop_ws.latch(self._current, f)

    do_loop_ws_config_bounds = do_loop_ws_config_addrs_ab = do_loop_ws_config_addrs_dc = _latch_loop_ws
    do_loop_ws_config_strides_ab = do_loop_ws_config_strides_dc = _latch_loop_ws

    def do_loop_ws_config_spad_ab(self, f):
        """Gemmini master's funct 24: the A start and B end rows of the loop slot being configured."""
        rows = self.config.sp_rows
        require_ext_spad(self.config, "loop_ws_config_spad_ab (funct 24)", "funct")
        if f["a_addr_start"] >= rows:
            raise self.fault(f"A's start row {f['a_addr_start']} is outside the scratchpad ({rows} rows)", "a_addr_start")
        if f["b_addr_end"] > rows:
            raise self.fault(f"B's end row {f['b_addr_end']} is outside the scratchpad ({rows} rows)", "b_addr_end")
        self._latch_loop_ws(f)

    def do_loop_ws(self, f):
        self._check_activation(f)   # NONE/RELU come from config_st, as LoopMatmul's plain mvouts do
        self._unroll(loop_ws_program(self.config, self.loop_ws, f))

    def _unroll(self, program):
        pc, rs = self.pc, self._rs
        for obs in self.observers:
            if getattr(obs, "sees_loops", False):
                obs(self._current, program, pc)
        self.expanding = True
        try:
            self._run_expanded(program.commands)
        finally:
            self.expanding = False
        self.pc, self._rs = pc, rs

    def _run_expanded(self, commands):
        """A loop's commands in order; runs of preload/compute pairs go to baco.sim.batched (one
        numpy computation each) unless an observer must see every command."""
        batch = all(getattr(obs, "sees_loops", False) for obs in self.observers)
        i, n = 0, len(commands)
        while i < n:
            j = i
            while batch and j + 1 < n and commands[j][2] == "preload" and commands[j + 1][2].startswith("compute"):
                j += 2
            if j - i >= 2 * MIN_BATCHED_PAIRS and \
                    run_pairs(self, [(commands[k][3], commands[k + 1][2], commands[k + 1][3]) for k in range(i, j, 2)]):
                i = j
                continue
            for _, _, name, fields in commands[i:max(j, i + 1)]:
                self._rs, self._fields = None, fields
                self._run(name, COMMANDS[name].queue, fields)
            i = max(j, i + 1)

    def _latch_loop_conv(self, f):
        self.loop_conv.latch(f)

    do_loop_conv_ws_config_1 = do_loop_conv_ws_config_2 = do_loop_conv_ws_config_3 = _latch_loop_conv
    do_loop_conv_ws_config_4 = do_loop_conv_ws_config_5 = do_loop_conv_ws_config_6 = _latch_loop_conv

    def do_loop_conv_ws(self, f):
        """LoopConv: run the command stream the FSM issues (baco.sim.loops.loop_conv_program).
        A loop whose output address is 0 leaves its partial sums in the accumulator half, and
        the next loop (bias address 0) accumulates onto them."""
        self._check_activation(f)
        self._unroll(loop_conv_program(self.config, self.loop_conv, f))

    # ---- counters -------------------------------------------------------------------------------
    @staticmethod
    def _no_clock_counter(code: int) -> int:
        """Without a timing model there is no clock and no DMA engine: every event reads 0
        (attach baco.sim.timing.TimingModel, `baco sim --timing`, for the measured values)."""
        return 0

    def do_counter(self, f):
        """Gemmini's CounterFile: configuring a counter zeroes it; a reset zeroes every counter
        and the external values; a snapshot freezes what reads return until it is reset.
        Event codes follow gemmini_counter.h (external values are 44 + their index)."""
        n = self.config.num_counters
        idx = f["counter_index"]
        if idx >= n:
            raise self.fault(f"counter {idx} does not exist ({n} counters)", "counter_index")
        if f["reset_counters"]:
            self.counter_base = [self.counter_source(e) for e in self.counter_events]
            self.external_base = {code: self.counter_source(code) for code in EXTERNAL_TOTALS}
        if f["reset_snapshot"]:
            self.snapshot = None
        if f["change_config"]:
            code = f["event_id"] + (EXTERNAL_BASE if f["external"] else 0)
            self.counter_events[idx] = code
            self.counter_base[idx] = self.external_base.get(code, 0) if f["external"] \
                else self.counter_source(code)
        if f["take_snapshot"]:
            self.snapshot = [self._counter_read(i) for i in range(n)]
        if self.snapshot is not None:
            return self.snapshot[idx]
        return self._counter_read(idx)

    def _counter_read(self, idx):
        code = self.counter_events[idx]
        if code == 0:
            return 0
        if code > EXTERNAL_BASE:      # external values are 32 bits wide
            return (self.counter_source(code) - self.counter_base[idx]) & 0xFFFFFFFF
        return self.counter_source(code) - self.counter_base[idx]


__all__ = ["GemminiModel", "GemminiFault", "Memory", "ArrayMemory"]
