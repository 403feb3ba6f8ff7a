"""The Gemmini command table: the single definition of every RoCC command's
funct number, rs1/rs2 field layout (gemmini-isa.md §1.3), the queue it goes to,
its load slot and the configuration state it reads and writes, with encode,
decode, disassembly and instruction-word assembly. The compiler lowering, the
config elimination, the simulator's decoder and cycle model and the
disassembler all read this table."""
from __future__ import annotations

from dataclasses import dataclass

OPCODE_CUSTOM3 = 0x7B
GARBAGE_ADDR = 0xFFFFFFFF
MASK64 = (1 << 64) - 1

# local address flag bits (§2.1)
ACC_BIT = 1 << 31
ACCUMULATE_BIT = 1 << 30
READ_FULL_BIT = 1 << 29

# LoopMatmul and LoopConv each hold this many loops at once (gemmini LoopMatmul.scala /
# LoopConv.scala `concurrent_loops`): loop n takes slot n mod 2, whose default scratchpad
# operands are half n mod 2, so one loop's loads run while the other executes
CONCURRENT_LOOPS = 2
# the fewest rows the ExecuteController feeds the array per WS operation (ExecuteController
# total_rows: two writes to one accumulator row must be 4 cycles apart)
MIN_FEED_ROWS = 4


class IsaError(ValueError):
    """An instruction that does not decode (unknown funct, bad sub-command)."""


class GemminiFault(Exception):
    """A command the hardware cannot execute: names the pc, the command and the field."""

    def __init__(self, message, pc=None, command=None, field=None):
        self.message, self.pc, self.command, self.field = message, pc, command, field
        where = f"pc {pc:#x}: " if pc is not None else ""
        what = f" [{command}]" if command else ""
        fld = f" (field {field})" if field else ""
        super().__init__(f"Gemmini fault: {where}{message}{fld}{what}")


@dataclass(frozen=True)
class Field:
    name: str
    word: str          # "rs1" | "rs2"
    lsb: int
    width: int
    fixed: int | None = None   # selector bits set by the command itself (config sub-type)
    doc: str = ""

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def get(self, rs1: int, rs2: int) -> int:
        return ((rs1 if self.word == "rs1" else rs2) >> self.lsb) & self.mask


# The configuration state Gemmini keeps between commands, each named after the command that
# sets it: config_ex (dataflow, activation, strides), config_ld (one state per load slot,
# selected by its state_id), config_st (store stride, activation, pooling), config_norm
CONFIG_STATES = ("config_ex", "config_ld", "config_st", "config_norm")
# The activation field's code for ReLU (config_ex, config_st, LOOP_WS, LOOP_CONV_WS); 0 is none.
ACTIVATION_RELU = 1


@dataclass(frozen=True)
class Command:
    name: str
    funct: int
    fields: tuple
    queue: str             # "ld" | "ex" | "st" | "ctl" | "loop"
    subtype: int | None = None
    doc: str = ""
    load_slot: int | None = None    # a move-in's load slot: its config_ld state_id
    reads: tuple = ()      # the configuration states (CONFIG_STATES) it reads
    writes: tuple = ()     # ... and those it sets (LOOP_CONV_WS: those its expansion may set)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")


def F(name, word, lsb, width, doc=""):
    return Field(name, word, lsb, width, None, doc)


def SEL(value, width=2):
    return Field("cmd_type", "rs1", 0, width, value, "sub-command selector")


def _rows_cols_addr(prefix, word):
    return (F(f"{prefix}_addr", word, 0, 32, "local address"),
            F(f"{prefix}_cols", word, 32, 16), F(f"{prefix}_rows", word, 48, 16))


_MOVE = lambda doc: (F("dram_addr", "rs1", 0, 64, "DRAM byte address; 0 = zeros (mvin)"),  # noqa: E731
                     F("local_addr", "rs2", 0, 32), F("cols", "rs2", 32, 16), F("rows", "rs2", 48, 16))

_TABLE = [
    Command("config_ex", 0, (
        SEL(0), F("dataflow", "rs1", 2, 1, "0 OS, 1 WS"), F("activation", "rs1", 3, 2),
        F("set_only_strides", "rs1", 7, 1), F("a_transpose", "rs1", 8, 1), F("b_transpose", "rs1", 9, 1),
        F("a_stride", "rs1", 16, 16), F("acc_scale", "rs1", 32, 32, "float32 bits"),
        F("in_shift", "rs2", 0, 32), F("relu6_shift", "rs2", 32, 16, "unused since 2022"),
        F("c_stride", "rs2", 48, 16)), "ex", 0, "execute-side configuration", writes=("config_ex",)),
    Command("config_ld", 0, (
        SEL(1), F("shrink", "rs1", 2, 1), F("state_id", "rs1", 3, 2, "mvin slot 0/1/2"),
        F("pixel_repeats", "rs1", 8, 8), F("block_stride", "rs1", 16, 16),
        F("scale", "rs1", 32, 32, "float32 bits"), F("stride", "rs2", 0, 64, "DRAM row stride, bytes")),
        "ld", 1, "load-side configuration of one mvin slot", writes=("config_ld",)),
    Command("config_st", 0, (
        SEL(2), F("activation", "rs1", 2, 2), F("pool_stride", "rs1", 4, 2), F("pool_size", "rs1", 6, 2),
        F("upad", "rs1", 8, 2), F("lpad", "rs1", 10, 2), F("pool_out_dim", "rs1", 24, 8),
        F("porows", "rs1", 32, 8), F("pocols", "rs1", 40, 8), F("orows", "rs1", 48, 8),
        F("ocols", "rs1", 56, 8), F("stride", "rs2", 0, 32, "DRAM row stride, bytes"),
        F("acc_scale", "rs2", 32, 32, "float32 bits")), "st", 2, "store-side configuration", writes=("config_st",)),
    Command("config_norm", 0, (
        SEL(3), F("norm_stats_id", "rs1", 8, 8), F("act_msb", "rs1", 16, 1),
        F("set_stats_id_only", "rs1", 17, 1), F("q_const_type", "rs1", 18, 1),
        F("q_const", "rs1", 32, 32), F("igelu_qb", "rs2", 0, 32), F("igelu_qc", "rs2", 32, 32)),
        "st", 3, "normalisation configuration (has_normalizations only)", writes=("config_norm",)),
    Command("mvin2", 1, _MOVE(""), "ld", doc="move-in, load slot 1", load_slot=1, reads=("config_ld",)),
    Command("mvin", 2, _MOVE(""), "ld", doc="move-in, load slot 0", load_slot=0, reads=("config_ld",)),
    Command("mvout", 3, _MOVE(""), "st", doc="move-out to DRAM", reads=("config_st", "config_norm")),
    Command("compute_preloaded", 4, _rows_cols_addr("a", "rs1") + _rows_cols_addr("bd", "rs2"), "ex",
            doc="matmul switching to the newly preloaded operand", reads=("config_ex",)),
    Command("compute_accumulated", 5, _rows_cols_addr("a", "rs1") + _rows_cols_addr("bd", "rs2"), "ex",
            doc="matmul keeping the operand in the array", reads=("config_ex",)),
    Command("preload", 6, _rows_cols_addr("bd", "rs1") + _rows_cols_addr("c", "rs2"), "ex",
            doc="preloaded operand (D in OS, B in WS) and output C", reads=("config_ex",)),
    Command("flush", 7, (F("skip", "rs1", 0, 1),), "ctl", doc="TLB flush / fault skip"),
    Command("loop_ws", 8, (
        F("ex_accumulate", "rs1", 0, 1), F("full_c", "rs1", 1, 1), F("low_d", "rs1", 2, 1),
        F("activation", "rs1", 8, 3), F("b_spad_id", "rs1", 16, 2), F("a_spad_id", "rs1", 18, 2),
        F("a_transpose", "rs2", 0, 1), F("b_transpose", "rs2", 1, 1), F("is_resadd", "rs2", 2, 1),
        # Gemmini master only (GemminiConfig.mvout_spad): stages marked done, the accumulator
        # rotation of a spad_only loop, C stored into the scratchpad at c_spad_addr
        F("skip_stages", "rs2", 3, 5, "master: A-load, B-load, D-load, execute, store already done"),
        F("inc_acc_addr", "rs2", 8, 1, "master: a spad_only loop moves on to the next accumulator half"),
        F("spad_only", "rs2", 9, 1, "master: C goes to the scratchpad (MVOUT_SPAD), not DRAM"),
        F("c_spad_addr", "rs2", 32, 32, "master: scratchpad row of C block (0, 0) with spad_only")),
        "loop", doc="start the LoopMatmul FSM: its moves, preloads and computes read the state it finds",
        reads=("config_ex", "config_ld", "config_st")),
    Command("loop_ws_config_bounds", 9, (
        F("pad_i", "rs1", 0, 16), F("pad_j", "rs1", 16, 16), F("pad_k", "rs1", 32, 16),
        F("max_i", "rs2", 0, 16), F("max_j", "rs2", 16, 16), F("max_k", "rs2", 32, 16)), "loop"),
    Command("loop_ws_config_addrs_ab", 10, (F("a_addr", "rs1", 0, 64), F("b_addr", "rs2", 0, 64)), "loop"),
    Command("loop_ws_config_addrs_dc", 11, (F("d_addr", "rs1", 0, 64), F("c_addr", "rs2", 0, 64)), "loop"),
    Command("loop_ws_config_strides_ab", 12, (F("a_stride", "rs1", 0, 64), F("b_stride", "rs2", 0, 64)), "loop"),
    Command("loop_ws_config_strides_dc", 13, (F("d_stride", "rs1", 0, 64), F("c_stride", "rs2", 0, 64)), "loop"),
    Command("mvin3", 14, _MOVE(""), "ld", doc="move-in, load slot 2", load_slot=2, reads=("config_ld",)),
    Command("loop_conv_ws", 15, (
        F("no_bias", "rs1", 0, 1), F("wrot180", "rs1", 1, 1), F("trans_output_1203", "rs1", 2, 1),
        F("trans_weight_1203", "rs1", 3, 1), F("trans_weight_0132", "rs1", 4, 1),
        F("trans_input_3120", "rs1", 5, 1), F("dw", "rs1", 6, 1), F("max_pixels_per_row", "rs1", 8, 8),
        F("b_spad_id", "rs1", 16, 2), F("a_spad_id", "rs1", 18, 2),
        F("no_pool", "rs2", 0, 1), F("downsample", "rs2", 1, 1), F("input_dilated", "rs2", 2, 1),
        F("activation", "rs2", 3, 2)), "loop",
        doc="start the LoopConv FSM: it sets every load slot, config_st when it pools and config_ex when "
            "it transposes its input (baco.sim.loops.conv_stream)",
        reads=("config_ex", "config_st"), writes=("config_ex", "config_ld", "config_st")),
    Command("loop_conv_ws_config_1", 16, (
        F("batch_size", "rs1", 0, 16), F("in_row_dim", "rs1", 16, 16), F("in_channels", "rs1", 32, 16),
        F("out_channels", "rs1", 48, 16), F("out_row_dim", "rs2", 0, 16), F("pool_out_row_dim", "rs2", 16, 16),
        F("out_col_dim", "rs2", 32, 16), F("stride", "rs2", 48, 8), F("padding", "rs2", 56, 8)), "loop"),
    Command("loop_conv_ws_config_2", 17, (
        F("pool_padding", "rs1", 0, 8), F("pool_stride", "rs1", 8, 8), F("pool_size", "rs1", 16, 16),
        F("pool_out_col_dim", "rs1", 32, 16), F("kernel_dim", "rs1", 48, 16),
        F("pochs", "rs2", 0, 16), F("pocols", "rs2", 16, 16), F("porows", "rs2", 32, 16),
        F("batches", "rs2", 48, 16)), "loop"),
    Command("loop_conv_ws_config_3", 18, (
        F("lpad", "rs1", 0, 16), F("kchs", "rs1", 16, 16), F("kcols", "rs1", 32, 16), F("krows", "rs1", 48, 16),
        F("in_col_dim", "rs2", 0, 16), F("plpad", "rs2", 16, 8), F("dpad", "rs2", 24, 8),
        F("upad", "rs2", 32, 16), F("rpad", "rs2", 48, 16)), "loop"),
    Command("loop_conv_ws_config_4", 19, (
        F("kernel_dilation", "rs1", 0, 10), F("pdpad", "rs1", 10, 11), F("pupad", "rs1", 21, 11),
        F("prpad", "rs1", 32, 16), F("orows", "rs1", 48, 16),
        F("ocols", "rs2", 0, 16), F("out_stride", "rs2", 16, 16), F("weight_stride", "rs2", 32, 16),
        F("in_stride", "rs2", 48, 16)), "loop"),
    Command("loop_conv_ws_config_5", 20, (F("weights_addr", "rs1", 0, 64), F("output_addr", "rs2", 0, 64)), "loop"),
    Command("loop_conv_ws_config_6", 21, (F("bias_addr", "rs1", 0, 64), F("input_addr", "rs2", 0, 64)), "loop"),
    Command("mvout_spad", 23, (
        F("dst_addr", "rs1", 0, 32, "scratchpad local address of the first row written"),
        F("dst_stride", "rs1", 32, 32, "scratchpad rows between the rows written"),
        F("local_addr", "rs2", 0, 32), F("cols", "rs2", 32, 16), F("rows", "rs2", 48, 16)), "st",
        doc="Gemmini master only (GemminiConfig.mvout_spad): move-out into the scratchpad, through "
            "config_st's scale and activation", reads=("config_st",)),
    Command("loop_ws_config_spad_ab", 24, (
        F("a_addr_start", "rs1", 0, 32, "scratchpad row of A block (0, 0)"),
        F("b_addr_end", "rs2", 0, 32, "scratchpad row after B's last block")), "loop",
        doc="Gemmini master only (GemminiConfig.mvout_spad): the A/B scratchpad addresses of the loop slot "
            "being configured, kept by the slot for its later loops"),
    Command("clkgate_en", 22, (F("enable", "rs1", 0, 1),), "ctl", doc="clock-gate enable"),
    Command("counter", 126, (
        F("reset_counters", "rs1", 0, 1), F("reset_snapshot", "rs1", 1, 1), F("take_snapshot", "rs1", 2, 1),
        F("change_config", "rs1", 3, 1), F("counter_index", "rs1", 4, 3), F("event_id", "rs1", 12, 6),
        F("external", "rs1", 31, 1)), "ctl", doc="performance counters; returns a value in rd"),
]

COMMANDS: dict[str, Command] = {c.name: c for c in _TABLE}
BY_FUNCT: dict[int, list[Command]] = {}
for _c in _TABLE:
    BY_FUNCT.setdefault(_c.funct, []).append(_c)

# the commands that set exactly the configuration state named after them
CONFIG_COMMANDS = tuple(c.name for c in _TABLE if c.writes == (c.name,))
# load slot -> its move-in
MVIN_OF_SLOT = tuple(c.name for c in sorted((c for c in _TABLE if c.load_slot is not None),
                                            key=lambda c: c.load_slot))
# LoopMatmul's configuration registers of every LOOP_WS, each latched by its own command (not
# Gemmini master's loop_ws_config_spad_ab, whose addresses a loop slot keeps until set again)
LOOP_WS_CONFIGS = tuple(c.name for c in _TABLE if c.name.startswith("loop_ws_config_") and c.funct < 24)
# the queues of Gemmini's three controllers (load, execute, store) -> the commands each takes
CONTROLLER_QUEUES = ("ld", "ex", "st")
QUEUE_OF = {c.name: c.queue for c in _TABLE if c.queue in CONTROLLER_QUEUES}


def encode(name: str, **values) -> tuple[int, int]:
    """Pack field values into (rs1, rs2). Unknown or too-wide values raise ValueError."""
    cmd = COMMANDS[name]
    words = {"rs1": 0, "rs2": 0}
    names = set()
    for f in cmd.fields:
        names.add(f.name)
        v = f.fixed if f.fixed is not None else values.get(f.name, 0)
        if f.fixed is not None and f.name in values and values[f.name] != f.fixed:
            raise ValueError(f"{name}.{f.name} is fixed to {f.fixed}")
        v = int(v)
        if v < 0 and f.width == 64:
            v &= MASK64
        if v < 0 or v > f.mask:
            raise ValueError(f"{name}.{f.name} = {v} does not fit its {f.width}-bit field")
        words[f.word] |= v << f.lsb
    extra = set(values) - names
    if extra:
        raise ValueError(f"{name} has no field(s) {sorted(extra)}")
    return words["rs1"], words["rs2"]


def command_fields(name: str, **values) -> dict:
    """The fields `decode(funct, *encode(name, **values))` returns (every variable field, 0 where
    not given), without packing and unpacking them: the hardware loops' expansion issues
    millions of commands. The same values are errors as in encode (no two fields of a
    command share a bit, so the round trip changes nothing else)."""
    spec = _FIELD_SPECS.get(name)
    if spec is None:
        cmd = COMMANDS[name]
        spec = _FIELD_SPECS[name] = ({f.name: 0 for f in cmd.fields if f.fixed is None},
                                     {f.name: f for f in cmd.fields})
    template, fields = spec
    out = dict(template)
    for key, v in values.items():
        f = fields.get(key)
        if f is None:
            raise ValueError(f"{name} has no field(s) {sorted(set(values) - set(fields))}")
        if f.fixed is not None:
            if v != f.fixed:
                raise ValueError(f"{name}.{key} is fixed to {f.fixed}")
            continue
        v = int(v)
        if v < 0 and f.width == 64:
            v &= MASK64
        if v < 0 or v > f.mask:
            raise ValueError(f"{name}.{key} = {v} does not fit its {f.width}-bit field")
        out[key] = v
    return out


_FIELD_SPECS: dict = {}     # command name -> (its variable fields at 0, every field by name)


def decode(funct: int, rs1: int, rs2: int) -> tuple[Command, dict]:
    """The command and its field values. Unknown functs raise IsaError."""
    cands = BY_FUNCT.get(funct)
    if not cands:
        raise IsaError(f"unknown Gemmini funct {funct}")
    cmd = cands[0]
    if len(cands) > 1:  # config: rs1[1:0] selects the sub-command
        sub = rs1 & 3
        cmd = next(c for c in cands if c.subtype == sub)
    getters = _GETTERS.get(cmd.name)
    if getters is None:
        getters = _GETTERS[cmd.name] = tuple((f.name, f.word == "rs1", f.lsb, f.mask)
                                             for f in cmd.fields if f.fixed is None)
    return cmd, {name: ((rs1 if in_rs1 else rs2) >> lsb) & mask for name, in_rs1, lsb, mask in getters}


_GETTERS: dict = {}     # command name -> (field, in rs1, lsb, mask) of its variable fields: decode's hot path


def format_field(name: str, value: int) -> str:
    if name.endswith("addr") and value == GARBAGE_ADDR and "dram" not in name:
        return f"{name}=GARBAGE"
    if name.endswith("local_addr") or name in ("a_addr", "bd_addr", "c_addr", "dst_addr") and value <= 0xFFFFFFFF:
        return f"{name}={describe_local(value)}"
    if name in ("acc_scale", "scale", "q_const"):
        import struct
        return f"{name}={struct.unpack('<f', struct.pack('<I', value & 0xFFFFFFFF))[0]:g}"
    return f"{name}={value:#x}" if name.endswith("addr") else f"{name}={value}"


def describe_local(addr: int) -> str:
    if addr == GARBAGE_ADDR:
        return "GARBAGE"
    row = addr & 0x3FFFFFF
    if addr & ACC_BIT:
        flags = ("+acc" if addr & ACCUMULATE_BIT else "") + ("+full" if addr & READ_FULL_BIT else "")
        return f"acc[{row}]{flags}"
    return f"sp[{row}]"


def disassemble(funct: int, rs1: int, rs2: int) -> str:
    try:
        cmd, vals = decode(funct, rs1, rs2)
    except IsaError as e:
        return f"<{e}> rs1={rs1:#x} rs2={rs2:#x}"
    return " ".join([cmd.name] + [format_field(k, v) for k, v in vals.items()])


def insn_word(funct: int, rs1_reg: int, rs2_reg: int, rd_reg: int = 0, xd: bool = False) -> int:
    """The 32-bit `.insn r CUSTOM_3, funct3, funct, rd, rs1, rs2` word (funct3 = xd,xs1,xs2)."""
    funct3 = (0b100 if xd else 0) | 0b011
    return ((funct & 0x7F) << 25) | ((rs2_reg & 31) << 20) | ((rs1_reg & 31) << 15) | \
        (funct3 << 12) | ((rd_reg & 31) << 7) | OPCODE_CUSTOM3


def split_insn(word: int) -> dict:
    """Fields of a custom instruction word (inverse of insn_word)."""
    return {"funct": (word >> 25) & 0x7F, "rs2": (word >> 20) & 31, "rs1": (word >> 15) & 31,
            "xd": (word >> 14) & 1, "xs1": (word >> 13) & 1, "xs2": (word >> 12) & 1,
            "rd": (word >> 7) & 31, "opcode": word & 0x7F}


def local_addr(row: int, acc: bool = False, accumulate: bool = False, read_full: bool = False) -> int:
    return (row | (ACC_BIT if acc else 0) | (ACCUMULATE_BIT if accumulate else 0)
            | (READ_FULL_BIT if read_full else 0))


def is_garbage(addr: int, data_bits: int = 14) -> bool:
    """RTL test: bits 31..29, the garbage bit 14 and all data bits set (Spike: low 32 bits all ones)."""
    a = addr & 0xFFFFFFFF
    data_mask = (1 << data_bits) - 1
    return (a >> 29) == 0b111 and (a >> 14) & 1 == 1 and (a & data_mask) == data_mask
