"""The hardware loop FSMs as command generators.

LOOP_WS (funct 8, after its config commands 9–13) is expanded into the
mvin/mvin2/mvin3, preload/compute and mvout stream that LoopMatmul emits
(gemmini-isa.md §5.3): D loads into the accumulator, A and B loads in
MAX_BLOCK_LEN-wide chunks, the execute nest k → j → i with each weight block
preloaded once per (k, j) and reused over i, and the C stores. The loads' and
stores' commands (which blocks, rows and columns, in which order) come from
baco.gemmini.loop_ws_commands, the one description the walk of LoopMatmul's
timing (baco.gemmini.loop_ws_timing) prices too; here they get their addresses. Local layout:
A(i,k) at a_base + (i·K + k)·DIM, B(k,j) at b_base + (k·J + j)·DIM (the block
stride of a multi-block mvin is DIM, as the C library configures it), C(i,j)
at acc_base + (i·J + j)·DIM. LoopMatmul holds two loops at once in two slots that
loops take in turn: without a_spad_id/b_spad_id a loop's A and B live in its
slot's scratchpad half (or where Gemmini master's funct 24 put the slot's). Two accumulator halves alternate between loops that
store C, as in the RTL (a loop with C = 0 keeps accumulating into the same half).
With is_resadd the same FSMs do a residual add instead (_resadd): A into the
accumulator, B accumulated onto it, C stored. With spad_only (Gemmini master,
GemminiConfig.mvout_spad) the store FSM is LoopMatmulStCSpad: MVOUT_SPADs of C into
the scratchpad at c_spad_addr + (i·J + j)·DIM (_c_spad_stores).

Each loop is a LoopProgram: the functional model runs its commands in program
order; the cycle model (baco.sim.timing) interleaves its FSMs as the loop units do.
"""
from __future__ import annotations

import itertools

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import (ACC_BIT, ACCUMULATE_BIT, COMMANDS, CONCURRENT_LOOPS, GARBAGE_ADDR,
                              GemminiFault, READ_FULL_BIT, command_fields, encode)
from baco.gemmini.loop_conv_stream import (ConvTile, bias_mvins, compute_images, compute_runs, execute_blocks,
                                           input_mvins, pooled_stores, store_row, undilated, weight_mvins)
from baco.gemmini.loop_ws_commands import (lda_commands, ldb_commands, ldd_commands, resadd_commands,
                                            store_commands)
from baco.gemmini.schedule import loop_unit_half


LARGE_ITERATOR_BITS = 16   # LoopConv's derived row/column counts (large_iterator_bitwidth)


def _wrap(row, rows):
    return row % rows if rows else row


def cmd(name, **fields):
    """(name, fields as decoded): a command an FSM issues, never packed into rs1/rs2 on its way
    to the models."""
    return name, command_fields(name, **fields)


class LoopWsState:
    """The LoopMatmul registers latched by funct 9–13, the loop slot the next LOOP_WS is
    configured into (LoopMatmul holds two loops; they take slots 0, 1, 0, ... and a slot's
    default A/B scratchpad half is its own, unless Gemmini master's funct 24 placed them: the
    slot keeps that for its later loops) and the accumulator halves in use: `acc_half` the
    execute and store FSMs', `ldd_half` LdD's. They move together except after a spad_only loop
    (Gemmini master), whose inc_acc_addr moves the first and whose C DRAM address the second, as
    LoopMatmul's ex_c_addr_start/st_c_addr_start and ld_d_addr_start do."""

    def __init__(self):
        self.bounds = dict(pad_i=0, pad_j=0, pad_k=0, max_i=0, max_j=0, max_k=0)
        self.addrs = dict(a_addr=0, b_addr=0, d_addr=0, c_addr=0)
        self.strides = dict(a_stride=0, b_stride=0, d_stride=0, c_stride=0)
        self.slot = 0
        self.acc_half = self.ldd_half = 0
        self.spad_ab = [None] * CONCURRENT_LOOPS    # a slot's (A start, B end) set by funct 24, else its half

    def latch(self, name, fields):
        if name == "loop_ws_config_bounds":
            self.bounds.update(fields)
        elif name in ("loop_ws_config_addrs_ab", "loop_ws_config_addrs_dc"):
            self.addrs.update(fields)
        elif name in ("loop_ws_config_strides_ab", "loop_ws_config_strides_dc"):
            self.strides.update(fields)
        elif name == "loop_ws_config_spad_ab":
            self.spad_ab[self.slot] = fields["a_addr_start"], fields["b_addr_end"]


def _addressed(cfg, name, commands, base, stride, local, local_flags=0, elem_bytes=None):
    """LoopMatmul's commands (baco.gemmini.loop_ws_commands) as `name` with their addresses: the DRAM
    matrix at `base`, `stride` elements of `elem_bytes` (the inputs') a row; local(row block, column
    block) is a command's local row as DRAM holds the matrix. Yields (fsm, iterators, name, fields)."""
    d, eb = cfg.dim, elem_bytes or cfg.input_bytes
    for c in commands:
        yield c.fsm, c.iters, *cmd(name, dram_addr=base + (c.row * d * stride + c.col * d) * eb,
                                   local_addr=local_flags | local(c.row, c.col), cols=c.cols, rows=c.rows)


def _c_stores(cfg, st, f, commands, c_local):
    """StC's commands (loop_ws_commands.store_commands) as mvouts; then the next loop uses the other
    accumulator half."""
    c_bytes = cfg.acc_bytes if f["full_c"] else cfg.input_bytes
    yield from _addressed(cfg, "mvout", commands, st.addrs["c_addr"], st.strides["c_stride"], c_local,
                          ACC_BIT | (READ_FULL_BIT if f["full_c"] else 0), c_bytes)
    st.acc_half ^= 1
    st.ldd_half ^= 1


def _c_spad_stores(cfg, st, f, commands, c_local, sp_wrap):
    """A spad_only loop's StC (LoopMatmulStCSpad): C block (i, j) from the accumulator into the
    scratchpad at c_spad_addr + (i·J + j)·DIM, row stride 1, through config_st's scale and
    activation; then the execute/store half moves on if inc_acc_addr, LdD's if C's DRAM address
    is not 0 (the RTL's rotation conditions)."""
    J, d = st.bounds["max_j"], cfg.dim
    for c in commands:
        yield c.fsm, c.iters, *cmd("mvout_spad", dst_addr=_wrap(f["c_spad_addr"] + (c.row * J + c.col) * d, sp_wrap),
                                   dst_stride=1, local_addr=ACC_BIT | c_local(c.row, c.col), cols=c.cols, rows=c.rows)
    st.acc_half ^= f["inc_acc_addr"]
    st.ldd_half ^= bool(st.addrs["c_addr"])


def require_ext_spad(cfg: GemminiConfig, what: str, field: str):
    """Fault on `what` (a command, or a field: `field`) unless this Gemmini has Gemmini master's
    ext-spad commands."""
    if not cfg.mvout_spad:
        raise GemminiFault(f"{what} is Gemmini master's (ext-spad); this Gemmini (GemminiConfig.mvout_spad off, "
                           "v0.7.2) has no such " + ("command" if field == "funct" else "field"), field=field)


# LOOP_WS's Gemmini master fields (GemminiConfig.mvout_spad) and the flags a spad_only loop cannot take
MASTER_LOOP_WS_FIELDS = ("skip_stages", "inc_acc_addr", "spad_only", "c_spad_addr")
_NOT_SPAD_ONLY = {"is_resadd": "the RTL's residual add has no scratchpad store (LoopMatmul: a TODO)",
                  "full_c": "the scratchpad holds input-type rows, not int32 ones",
                  "a_spad_id": "the RTL's LdA honours it but its execute FSM reads the slot's half with spad_only",
                  "b_spad_id": "the RTL's LdB honours it but its execute FSM reads the slot's half with spad_only"}


def check_master_fields(cfg: GemminiConfig, f: dict):
    """Fault on LOOP_WS fields this Gemmini lacks (v0.7.2 has none of Gemmini master's), on the
    stage-skip bits (not modelled) and on flags a spad_only loop cannot combine with."""
    for name in MASTER_LOOP_WS_FIELDS:
        if f[name]:
            require_ext_spad(cfg, f"LOOP_WS {name} = {f[name]}", name)
    if f["skip_stages"]:
        raise GemminiFault("LOOP_WS's stage-skip bits (rs2[7:3]) are not modelled by baco.sim", field="skip_stages")
    if f["spad_only"]:
        for name, why in _NOT_SPAD_ONLY.items():
            if f[name]:
                raise GemminiFault(f"spad_only with {name}: {why}", field=name)


class LoopProgram:
    """One hardware loop as its FSMs issue it. `commands` are (fsm, iterators, name, fields)
    in program order (the order the functional model runs them in); each FSM issues its own
    commands in that order, and the cycle model interleaves the FSMs as the loop unit's
    arbiter does (baco.sim.timing). kind "ws" (LoopMatmul: FSMs ldd, lda, ldb, ex, st) or
    "conv" (LoopConv: bias, weights, input, ex, st); iterators are LoopMatmul's FSM registers
    while the command waits ((k, i) for lda, (k, j) for ldb, (k, j, i) for ex, (j, i, blocks)
    for st), which gate one FSM on another's progress; LoopConv's FSMs wait for whole FSMs."""

    def __init__(self, kind: str, commands, *, resadd: bool = False, max_k: int = 0):
        self.kind, self.resadd, self.max_k = kind, resadd, max_k
        self.commands = list(commands)

    def triples(self):
        """(funct, rs1, rs2) of the commands, packed as the ISA encodes them."""
        return [(COMMANDS[name].funct, *encode(name, **fields)) for _, _, name, fields in self.commands]


def _resadd(cfg: GemminiConfig, st: LoopWsState, f: dict):
    """LOOP_WS with is_resadd: C = act(A + B) for I×J blocks, no execute commands. LdA moves A
    (I×J blocks, as for a matmul's A with J in place of K) into the loop's accumulator half,
    overwriting; LdB moves B (I×J blocks, as B with I in place of K, so without its row pad)
    onto the same rows with the accumulate bit; StC stores the rows through the mvout path
    (config_st's activation and scale), as the C library's tiled_resadd configures it. The
    element scales are the mvin scales of load slots 0 and 1 (shrunk: int8 in DRAM)."""
    d = cfg.dim
    b, a, s = st.bounds, st.addrs, st.strides
    I, J = b["max_i"], b["max_j"]
    pad_i, pad_j = b["pad_i"], b["pad_j"]
    if I == 0 or J == 0:
        return
    base = st.acc_half * loop_unit_half(cfg).acc_rows

    def local(i, j):
        return base + (i * J + j) * d

    operands = {"lda": ("mvin", a["a_addr"], s["a_stride"], ACC_BIT),
                "ldb": ("mvin2", a["b_addr"], s["b_stride"], ACC_BIT | ACCUMULATE_BIT)}
    stores = []
    for c in resadd_commands(cfg, I, J, pad_i, pad_j, load_a=bool(a["a_addr"]), load_b=bool(a["b_addr"]),
                             store=bool(a["c_addr"]), full_c=bool(f["full_c"])):
        if c.fsm == "st":
            stores.append(c)
        else:
            name, base_addr, stride, flags = operands[c.fsm]
            yield from _addressed(cfg, name, (c,), base_addr, stride, local, flags)
    if stores:
        yield from _c_stores(cfg, st, f, stores, local)


def _matmul(cfg: GemminiConfig, st: LoopWsState, f: dict, rtl_wrap: bool):
    d = cfg.dim
    b, a, s = st.bounds, st.addrs, st.strides
    I, J, K = b["max_i"], b["max_j"], b["max_k"]
    pad_i, pad_j, pad_k = b["pad_i"], b["pad_j"], b["pad_k"]
    if I == 0 or J == 0 or K == 0:
        return
    ib, ab = cfg.input_bytes, cfg.acc_bytes
    half_sp = loop_unit_half(cfg).sp_rows
    a_start, b_end = st.spad_ab[st.slot] or (st.slot * half_sp, (st.slot + 1) * half_sp)
    a_base = (f["a_spad_id"] - 1) * half_sp if f["a_spad_id"] else a_start
    b_end = f["b_spad_id"] * half_sp if f["b_spad_id"] else b_end
    b_base = b_end - K * J * d
    acc_base = st.acc_half * loop_unit_half(cfg).acc_rows
    d_base = st.ldd_half * loop_unit_half(cfg).acc_rows
    a_t, b_t = f["a_transpose"], f["b_transpose"]

    def rows_of(idx, n, pad):
        return d - (pad if idx == n - 1 else 0)

    sp_wrap = cfg.sp_rows if rtl_wrap else None
    acc_wrap = cfg.acc_rows if rtl_wrap else None

    def a_local(i, k):
        return _wrap(a_base + ((k * I + i) if a_t else (i * K + k)) * d, sp_wrap)

    def b_local(k, j):
        return _wrap(b_base + ((j * K + k) if b_t else (k * J + j)) * d, sp_wrap)

    def c_local(i, j):
        return _wrap(acc_base + (i * J + j) * d, acc_wrap)

    def d_local(i, j):
        return _wrap(d_base + (i * J + j) * d, acc_wrap)

    # D (bias) into the accumulator, overwriting; A and B into the scratchpad
    if a["d_addr"]:
        yield from _addressed(cfg, "mvin3", ldd_commands(cfg, I, J, pad_i, pad_j, bool(f["low_d"])),
                              a["d_addr"], s["d_stride"], d_local, ACC_BIT, ib if f["low_d"] else ab)
    if a["a_addr"]:   # A is I×K blocks in DRAM, K×I when transposed
        yield from _addressed(cfg, "mvin", lda_commands(cfg, I, K, pad_i, pad_k, bool(a_t)), a["a_addr"],
                              s["a_stride"], (lambda k, i: a_local(i, k)) if a_t else a_local)
    if a["b_addr"]:   # B is K×J blocks, J×K when transposed
        yield from _addressed(cfg, "mvin2", ldb_commands(cfg, K, J, pad_k, pad_j, bool(b_t)), a["b_addr"],
                              s["b_stride"], (lambda j, k: b_local(k, j)) if b_t else b_local)
    # execute: k → j → i, the weight block preloaded at i = 0 and reused
    for k in range(K):
        for j in range(J):
            b_rows, b_cols = rows_of(k, K, pad_k), rows_of(j, J, pad_j)   # as fed (after any transpose)
            accumulate = ACCUMULATE_BIT if (f["ex_accumulate"] or k) else 0
            for i in range(I):
                a_rows, a_cols = rows_of(i, I, pad_i), rows_of(k, K, pad_k)
                c_rows, c_cols = rows_of(i, I, pad_i), rows_of(j, J, pad_j)
                yield ("ex", (k, j, i), *cmd("preload", bd_addr=b_local(k, j) if i == 0 else GARBAGE_ADDR,
                                              bd_rows=b_rows, bd_cols=b_cols,
                                              c_addr=ACC_BIT | accumulate | c_local(i, j), c_rows=c_rows,
                                              c_cols=c_cols))
                yield ("ex", (k, j, i), *cmd("compute_preloaded" if i == 0 else "compute_accumulated",
                                              a_addr=a_local(i, k), a_rows=a_rows, a_cols=a_cols,
                                              bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d))
    if f["spad_only"]:
        yield from _c_spad_stores(cfg, st, f, store_commands(cfg, I, J, pad_i, pad_j, False, spad=True), c_local,
                                  sp_wrap)
    elif a["c_addr"]:
        yield from _c_stores(cfg, st, f, store_commands(cfg, I, J, pad_i, pad_j, bool(f["full_c"])), c_local)


def loop_ws_program(cfg: GemminiConfig, st: LoopWsState, f: dict, *, rtl_wrap: bool = False) -> LoopProgram:
    """One LOOP_WS with flags `f` (decoded funct 8) as LoopMatmul's FSMs issue it. With
    rtl_wrap, local addresses of tiles larger than the memories wrap around them as the
    RTL's address registers do (timing of unchecked programs; the data is garbage)."""
    check_master_fields(cfg, f)
    resadd = bool(f["is_resadd"])
    commands = _resadd(cfg, st, f) if resadd else _matmul(cfg, st, f, rtl_wrap)
    program = LoopProgram("ws", commands, resadd=resadd, max_k=1 if resadd else st.bounds["max_k"])
    st.slot = (st.slot + 1) % CONCURRENT_LOOPS
    return program


def loop_ws_commands(cfg: GemminiConfig, st: LoopWsState, f: dict, *, rtl_wrap: bool = False):
    """(funct, rs1, rs2) of one LOOP_WS in program order (loop_ws_program)."""
    return loop_ws_program(cfg, st, f, rtl_wrap=rtl_wrap).triples()


# ---------------------------------------------------------------------------------------------
# LOOP_CONV_WS
#
# Expansion of the LoopConv FSM (ucb-bar/gemmini src/main/scala/gemmini/LoopConv.scala: the
# LoopConvLdBias, LoopConvLdWeight, LoopConvLdInput, LoopConvExecute and LoopConvSt
# sub-FSMs and the derived parameters of LoopConvState; the stored version has square
# images, so the v0.7.2 rectangular dims and in/weight/out strides of gemmini-isa.md
# §1.3.8 are substituted) and the C library's use of it (ucb-bar/gemmini-rocc-tests
# include/gemmini.h: tiled_conv / sp_tiled_conv). Written from those sources; the code is
# our own. Inferred, not read: a_spad_id/b_spad_id pick the slot as in LOOP_WS, a zero
# input/weight address skips that load (as a zero bias address does), depthwise weights
# are read at krow·kernel_dim + kcol (one channel per loop, as the C library issues it).
#
# The commands each FSM issues, their rows and columns and the loop indices they are issued at,
# are baco.gemmini.loop_conv_stream's (one description, which the LoopConv walk prices and the
# tuner counts too); the functions below add the local and DRAM addresses and the fields.
#
# Order: the FSMs run concurrently in hardware behind an arbiter, but the execute FSM
# waits until every load of its loop has been issued and the store FSM until the execute
# FSM is done, so the program order used here is bias → weights → inputs → execute → store.
# Local layout (rows): bias/outputs at acc_base + (och/DIM)·B·orows·ocols + b·orows·ocols
# + orow·ocols + ocol; inputs at a_base + (ich/DIM)·input_spad_stride + b·irows·icols
# + irow·icols + icol (padding rows/cols included, zero-filled by mvins from address 0);
# weights at b_end − B_rows + (och/DIM)·krows·kcols·kchs + krow·kcols·kchs + kcol·kchs + kch.
# The two LoopConv slots alternate between loops (A at 0 / half, B ending at half / end),
# unless the spad ids pick one; the accumulator half rotates after a loop that stores.
# ---------------------------------------------------------------------------------------------

MVIN_SCALE_IDENTITY = 0x3F800000    # float32 1.0
ACC_SCALE_NO_CHANGE = 0xFFFFFFFF    # config_st: keep the previous mvout scale


class LoopConvState:
    """The LoopConv registers latched by funct 16–21, the LoopConv slot and accumulator half."""

    def __init__(self):
        self.fields = {}
        self.slot = 0
        self.acc_half = 0

    def latch(self, fields):
        self.fields.update(fields)


def _conv_fault(message, field):
    return GemminiFault(message, field=field)


# the fields funct 16–21 latch (a loop's unlatched fields read 0)
LATCHED_CONV_FIELDS = tuple(field.name for command in COMMANDS.values()
                            if command.name.startswith("loop_conv_ws_config")
                            for field in command.fields if field.fixed is None)


def _check_conv_flags(d, f, c, mppr, kdil, pooled):
    """The combinations of funct 15's flags and the latched fields the C library refuses
    (tiled_conv) or the RTL's (commented) assertions exclude."""
    idl, dw = f["input_dilated"], f["dw"]
    t_in, t_w0132, t_w1203, t_out = (f["trans_input_3120"], f["trans_weight_0132"], f["trans_weight_1203"],
                                     f["trans_output_1203"])
    if c["stride"] == 0:
        raise _conv_fault("LOOP_CONV_WS with stride 0", "stride")
    if t_w1203 and t_w0132:
        raise _conv_fault("only one weight transformation at a time (trans_weight_1203 and trans_weight_0132)",
                          "trans_weight_0132")
    if t_in and t_w0132:
        raise _conv_fault("trans_input_3120 with trans_weight_0132 needs A and B transposed at once, "
                          "which WS does not allow", "trans_weight_0132")
    if t_out and pooled:
        raise _conv_fault("the output can be transposed (trans_output_1203) only without pooling",
                          "trans_output_1203")
    if idl and c["stride"] != 1:
        raise _conv_fault("input_dilated needs stride 1", "stride")
    if idl and kdil != 1:
        raise _conv_fault("input_dilated and kernel dilation cannot be combined", "kernel_dilation")
    if f["downsample"] and (c["stride"] != 2 or c["krows"] != 1 or c["kcols"] != 1 or idl):
        raise _conv_fault("downsample needs a 1x1 kernel, stride 2 and no input dilation", "downsample")
    if dw and (c["kchs"] != 1 or c["pochs"] != 1 or t_in or t_w0132 or t_w1203):
        raise _conv_fault("depthwise (dw) tiles are one channel (kchs = pochs = 1), untransposed", "dw")
    if mppr > 1 and (t_in or t_out or t_w0132 or t_w1203 or f["wrot180"] or f["downsample"] or idl or kdil > 1
                     or mppr * c["kchs"] > d):
        raise _conv_fault(f"max_pixels_per_row {mppr} needs kchs·pixels <= DIM and no transpose, "
                          "rotation, downsampling or dilation", "max_pixels_per_row")
    if pooled and (c["pool_stride"] > 3 or c["pool_size"] > 3):
        raise _conv_fault("config_st holds 2-bit pool size/stride", "pool_size")
    if pooled:
        for name, width in (("pool_out_col_dim", 8), ("porows", 8), ("pocols", 8), ("orows", 8), ("ocols", 8),
                            ("pupad", 2), ("plpad", 2)):
            if c[name] >> width:
                raise _conv_fault(f"pooling: {name} = {c[name]} does not fit config_st's {width}-bit field", name)


def _derive_input_tile(c, f, kdil, rtl_wrap):
    """LoopConvState's input tile: irows/icols (padding included) and their unpadded parts."""
    idl = f["input_dilated"]
    dil_krows = c["krows"] + (kdil - 1) * (c["krows"] - 1)
    dil_kcols = c["kcols"] + (kdil - 1) * (c["kcols"] - 1)
    irows_nd = c["orows"] * c["stride"] + dil_krows - 1
    icols_nd = c["ocols"] * c["stride"] + dil_kcols - 1
    irows_unp_nd = irows_nd - c["upad"] - c["dpad"]
    icols_unp_nd = icols_nd - c["lpad"] - c["rpad"]
    if rtl_wrap:
        irows_unp_nd %= 1 << LARGE_ITERATOR_BITS
        icols_unp_nd %= 1 << LARGE_ITERATOR_BITS
    elif irows_unp_nd < 0 or icols_unp_nd < 0:
        raise _conv_fault("padding exceeds the input tile", "upad" if irows_unp_nd < 0 else "lpad")
    c["irows_unpadded"], c["icols_unpadded"] = undilated(irows_unp_nd, idl), undilated(icols_unp_nd, idl)
    c["irows"] = (c["irows_unpadded"] + undilated(c["upad"], idl) + undilated(c["dpad"], idl)
                  if idl else irows_nd)
    c["icols"] = (c["icols_unpadded"] + undilated(c["lpad"], idl) + undilated(c["rpad"], idl)
                  if idl else icols_nd)


def _derive_local_layout(cfg, c, f, rtl_wrap):
    """The spad strides of the bias/output, input and weight tiles and their rows, checked
    against LoopConv's halves of the scratchpad (inputs from the bottom, weights from the top)
    and the accumulator."""
    d, ds = cfg.dim, f["downsample"]
    t_in, t_w0132 = f["trans_input_3120"], f["trans_weight_0132"]
    c["ichs"], c["ochs"] = c["kchs"], c["pochs"]
    c["ds_pixels"] = (c["irows"] >> ds) * (c["icols"] >> ds)
    c["bias_spad_stride"] = c["batches"] * c["orows"] * c["ocols"]
    c["input_spad_stride"] = (c["ichs"] if t_in else c["batches"]) * c["ds_pixels"]
    c["weight_spad_stride"] = c["krows"] * c["kcols"] * (c["ochs"] if t_w0132 else c["kchs"])
    banks = -(-(c["batches"] if t_in else c["ichs"]) // d)
    a_rows = banks * c["input_spad_stride"]
    b_rows = (-(-c["kchs"] // d) if t_w0132 else -(-c["ochs"] // d)) * c["weight_spad_stride"]
    c_rows = -(-c["ochs"] // d) * c["bias_spad_stride"]
    half = loop_unit_half(cfg)
    if a_rows + b_rows > half.sp_rows and not rtl_wrap:
        raise _conv_fault(f"the input and weight tiles need {a_rows} + {b_rows} scratchpad rows "
                          f"(half is {half.sp_rows})", "kchs")
    if c_rows > half.acc_rows and not rtl_wrap:
        raise _conv_fault(f"the output tile needs {c_rows} accumulator rows (half is {half.acc_rows})", "orows")
    c["b_rows"] = b_rows


def conv_params(cfg: GemminiConfig, st: LoopConvState, f: dict, *, rtl_wrap: bool = False) -> dict:
    """The latched fields plus LoopConvState.derived_params, after the legality checks. With
    rtl_wrap (timing of programs the C library runs unchecked) a tile larger than the
    memories is not refused, and padding larger than the input tile wraps the unpadded row
    and column counts around LoopConv's 16-bit iterators, as the RTL's UInt arithmetic does
    (the input loader then streams ~65k rows)."""
    c = dict(st.fields)
    for name in LATCHED_CONV_FIELDS:
        c.setdefault(name, 0)
    mppr = max(1, f["max_pixels_per_row"])
    pooled = not f["no_pool"] and c["pool_stride"] != 0
    kdil = max(1, c["kernel_dilation"])
    _check_conv_flags(cfg.dim, f, c, mppr, kdil, pooled)
    _derive_input_tile(c, f, kdil, rtl_wrap)
    _derive_local_layout(cfg, c, f, rtl_wrap)
    c.update(mppr=mppr, kdil=kdil, pooled=pooled, rtl_wrap=rtl_wrap)
    return c


def loop_conv_program(cfg: GemminiConfig, st: LoopConvState, f: dict, c: dict | None = None) -> LoopProgram:
    """One LOOP_CONV_WS with flags `f` (decoded funct 15) as LoopConv's FSMs issue it; `c`:
    the derived parameters (conv_params, whose legality checks run first, by default)."""
    return LoopProgram("conv", _conv(cfg, st, f, conv_params(cfg, st, f) if c is None else c))


def loop_conv_ws_commands(cfg: GemminiConfig, st: LoopConvState, f: dict):
    """(funct, rs1, rs2) of one LOOP_CONV_WS in program order (loop_conv_program)."""
    return loop_conv_program(cfg, st, f).triples()


def conv_stream(cfg, st, f, c):
    """(funct, rs1, rs2) of LoopConv for derived parameters `c` (conv_params)."""
    return loop_conv_program(cfg, st, f, c).triples()


class _ConvLayout:
    """Where one LoopConv loop's tiles live (the section comment above): its scratchpad slot
    (A from the bottom, B ending at the top) and accumulator half; the local rows of an
    output pixel, a weight block row and an input pixel; `tile`, its shape as
    baco.gemmini.loop_conv_stream describes its FSMs' commands."""

    def __init__(self, cfg, st, f, c):
        half = loop_unit_half(cfg)
        self.d, self.ds = cfg.dim, f["downsample"]
        self.t_in, self.t_w0132 = f["trans_input_3120"], f["trans_weight_0132"]
        self.a_base = (f["a_spad_id"] - 1) * half.sp_rows if f["a_spad_id"] else st.slot * half.sp_rows
        b_end = f["b_spad_id"] * half.sp_rows if f["b_spad_id"] else (st.slot + 1) * half.sp_rows
        self.b_base = _wrap(b_end - c["b_rows"], cfg.sp_rows if c["rtl_wrap"] else None)
        self.acc_base = st.acc_half * half.acc_rows
        self.B, self.orows, self.ocols = c["batches"], c["orows"], c["ocols"]
        self.per_b = self.orows * self.ocols
        self.krows, self.kcols, self.kchs, self.ochs = c["krows"], c["kcols"], c["kchs"], c["ochs"]
        self.input_spad_stride, self.ds_pixels = c["input_spad_stride"], c["ds_pixels"]
        self.icols_ds = c["icols"] >> self.ds
        idl = f["input_dilated"]
        self.tile = ConvTile(self.B, self.orows, self.ocols, self.ochs, self.krows, self.kcols, self.kchs,
                             c["irows_unpadded"], c["icols_unpadded"], undilated(c["upad"], idl),
                             undilated(c["dpad"], idl), undilated(c["lpad"], idl), undilated(c["rpad"], idl),
                             self.ds, c["mppr"], f["trans_input_3120"], self.t_w0132, idl)

    def out_row(self, och, b, orow, ocol):
        """Accumulator row of an output pixel."""
        return self.acc_base + (och // self.d) * self.B * self.per_b + b * self.per_b + orow * self.ocols + ocol

    def weight_row(self, och, krow, kcol, kch):
        """Scratchpad row of a weight block row (kch's for och, och's for kch when transposed)."""
        taps = krow * self.kcols + kcol
        if self.t_w0132:
            return self.b_base + (kch // self.d) * self.krows * self.kcols * self.ochs + taps * self.ochs + och
        return self.b_base + (och // self.d) * self.krows * self.kcols * self.kchs + taps * self.kchs + kch

    def input_row(self, ich, b, irow, icol):
        """Scratchpad row of the input pixel at padded (irow, icol), downsampled: ich's
        channels of batch b, or b's batches of channel ich when transposed."""
        pix = (irow >> self.ds) * self.icols_ds + (icol >> self.ds)
        if self.t_in:
            return self.a_base + (b // self.d) * self.input_spad_stride + ich * self.ds_pixels + pix
        return self.a_base + (ich // self.d) * self.input_spad_stride + b * self.ds_pixels + pix


def _conv(cfg, st, f, c):
    """The LoopConv FSMs' commands for derived parameters `c` (conv_params), tagged by FSM, in
    program order: bias → weights → inputs → execute → store."""
    lay = _ConvLayout(cfg, st, f, c)
    if lay.tile.empty():
        return
    if c["bias_addr"]:
        yield from _conv_bias(cfg, f, c, lay)
    if c["weights_addr"]:
        yield from _conv_weights(cfg, f, c, lay)
    if c["input_addr"]:
        yield from _conv_inputs(cfg, f, c, lay)
    yield from _conv_execute(cfg, f, c, lay)
    if c["output_addr"]:
        yield from (_conv_pooled_store if c["pooled"] else _conv_store)(cfg, f, c, lay)
        st.acc_half ^= 1
    st.slot ^= 1


def _conv_bias(cfg, f, c, lay):
    """LoopConvLdBias (bias_mvins): overwrite every output row; zeros (from DRAM address 0) when no_bias."""
    no_bias, bias, ab = f["no_bias"], c["bias_addr"], cfg.acc_bytes
    yield ("bias", None, *cmd("config_ld", state_id=2, shrink=0, block_stride=c["bias_spad_stride"],
                              pixel_repeats=1, scale=MVIN_SCALE_IDENTITY, stride=0))
    for b, orow, ocol, och, rows, cols in bias_mvins(lay.tile, cfg.dim, cfg.max_block_len_acc):
        yield ("bias", None, *cmd("mvin3", dram_addr=0 if no_bias else bias + och * ab,
                                  local_addr=ACC_BIT | lay.out_row(och, b, orow, ocol), cols=cols, rows=rows))


def _weight_offset(f, c, och, krow, kcol, kch):
    """DRAM element offset of a weight block row in the layout funct 15's flags select."""
    kdim = c["kernel_dim"]
    if f["dw"]:
        return krow * kdim + kcol
    if f["trans_weight_1203"]:
        return (kch * kdim * kdim + krow * kdim + kcol) * c["out_channels"] + och
    if f["trans_weight_0132"]:
        return (krow * kdim * c["out_channels"] + kcol * c["out_channels"] + och) * c["in_channels"] + kch
    return (krow * kdim * c["in_channels"] + kcol * c["in_channels"] + kch) * c["weight_stride"] + och


def _conv_weights(cfg, f, c, lay):
    """LoopConvLdWeight (weight_mvins): its DRAM row stride in the layout funct 15's flags select."""
    ib = cfg.input_bytes
    if f["trans_weight_0132"]:
        wstride = c["in_channels"]
    elif f["trans_weight_1203"]:
        wstride = c["kernel_dim"] * c["kernel_dim"] * c["out_channels"]
    else:
        wstride = 1 if f["dw"] else c["weight_stride"]
    yield ("weights", None, *cmd("config_ld", state_id=1, shrink=0, block_stride=c["weight_spad_stride"],
                                 pixel_repeats=1, scale=MVIN_SCALE_IDENTITY, stride=wstride * ib))
    for och, krow, kcol, kch, rows, cols in weight_mvins(lay.tile, cfg.dim, cfg.max_block_len):
        yield ("weights", None, *cmd("mvin2", dram_addr=c["weights_addr"] + _weight_offset(
            f, c, och, krow, kcol, kch) * ib, local_addr=lay.weight_row(och, krow, kcol, kch), cols=cols, rows=rows))


def _conv_inputs(cfg, f, c, lay):
    """LoopConvLdInput (input_mvins): padding pixels come from DRAM address 0 (zeros)."""
    ib, ds, t_in = cfg.input_bytes, f["downsample"], f["trans_input_3120"]
    t = lay.tile
    in_rows, in_cols = c["in_row_dim"], c["in_col_dim"]
    dstride = c["batch_size"] if t_in else c["in_stride"]
    yield ("input", None, *cmd("config_ld", state_id=0, shrink=0, block_stride=c["input_spad_stride"],
                               pixel_repeats=c["mppr"], scale=MVIN_SCALE_IDENTITY, stride=(dstride * ib) << ds))
    for b, irow, icol, ich, rows, cols, zeros in input_mvins(t, cfg.dim, cfg.max_block_len):
        if t_in:
            off = (ich * in_rows * in_cols + irow * in_cols + icol) * c["batch_size"] + b
        else:
            off = (b * in_rows * in_cols + irow * in_cols + icol) * c["in_stride"] + ich
        yield ("input", None, *cmd("mvin", dram_addr=0 if zeros else c["input_addr"] + off * ib,
                                   local_addr=lay.input_row(ich, b, irow + t.upad, icol + t.lpad),
                                   cols=cols, rows=rows))


def _conv_execute(cfg, f, c, lay):
    """LoopConvExecute: every weight block (execute_blocks) preloaded once and reused over the
    images and output rows' computes (compute_runs); rows/cols of A (I×K) and B (K×J) as fed."""
    d, idl, t_in, t = cfg.dim, f["input_dilated"], f["trans_input_3120"], lay.tile
    if t_in:   # A is read across channels, C written across batches
        yield ("ex", None, *cmd("config_ex", set_only_strides=1, a_stride=c["irows"] * c["icols"],
                                c_stride=lay.orows * lay.ocols))
    upad, lpad, kdil, stride, krows, kcols = c["upad"], c["lpad"], c["kdil"], c["stride"], lay.krows, lay.kcols
    och_blocks, col_groups, kch_blocks = execute_blocks(t, d)
    for (och, J), krow, (kcol, pixels), (kch, channels) in itertools.product(och_blocks, range(krows), col_groups,
                                                                            kch_blocks):
        krow_, kcol_ = (krows - krow - 1, kcols - kcol - 1) if f["wrot180"] else (krow, kcol)
        K, b_addr = pixels * channels, lay.weight_row(och, krow_, kcol_, kch)
        new_weights = True
        for b, orow in itertools.product(compute_images(t, d), range(lay.orows)):
            for ocol, I in compute_runs(t, d, b, (krow * kdil + orow - upad) & 1, (kcol * kdil - lpad) & 1):
                a_addr = lay.input_row(kch, b, undilated(orow * stride + krow * kdil, idl),
                                       undilated(ocol * stride + kcol * kdil, idl))
                yield ("ex", None, *cmd("preload", bd_addr=b_addr if new_weights else GARBAGE_ADDR,
                                        bd_rows=K, bd_cols=J, c_addr=ACC_BIT | ACCUMULATE_BIT | lay.out_row(
                                            och, b, orow, ocol), c_rows=I, c_cols=J))
                yield ("ex", None, *cmd("compute_preloaded" if new_weights else "compute_accumulated",
                                        a_addr=a_addr, a_rows=I, a_cols=K, bd_addr=GARBAGE_ADDR, bd_rows=I, bd_cols=J))
                new_weights = False


def _conv_store(cfg, f, c, lay):
    """LoopConvSt without pooling (store_row): one mvout per DIM output pixels and DIM channels."""
    ib, row = cfg.input_bytes, store_row(lay.tile, cfg.dim)
    for b, orow in itertools.product(range(lay.B), range(lay.orows)):
        for ocol, och, rows, cols in row:
            if f["trans_output_1203"]:
                off = ((orow * c["out_col_dim"] * c["batch_size"] + ocol * c["batch_size"] + b)
                       * c["out_channels"] + och)
            else:
                off = (b * c["out_row_dim"] * c["out_col_dim"] + orow * c["out_col_dim"] + ocol) * c["out_stride"] + och
            yield ("st", None, *cmd("mvout", dram_addr=c["output_addr"] + off * ib,
                                    local_addr=ACC_BIT | lay.out_row(och, b, orow, ocol), cols=cols, rows=rows))


def _conv_pooled_store(cfg, f, c, lay):
    """LoopConvSt with pooling: config_st's pooling fields, one mvout per batch and DIM
    channels (pooled_stores; the store unit walks the windows), then config_st back without pooling."""
    ib = cfg.input_bytes
    yield ("st", None, *cmd("config_st", activation=f["activation"], pool_stride=c["pool_stride"],
                            pool_size=c["pool_size"], upad=c["pupad"], lpad=c["plpad"],
                            pool_out_dim=c["pool_out_col_dim"], porows=c["porows"], pocols=c["pocols"],
                            orows=lay.orows, ocols=lay.ocols, stride=c["out_stride"] * ib,
                            acc_scale=ACC_SCALE_NO_CHANGE))
    for b, (och, cols) in itertools.product(range(lay.B), pooled_stores(lay.tile, cfg.dim)):
        off = b * c["pool_out_row_dim"] * c["pool_out_col_dim"] * c["out_stride"] + och
        yield ("st", None, *cmd("mvout", dram_addr=c["output_addr"] + off * ib,
                                local_addr=ACC_BIT | lay.out_row(och, b, 0, 0), cols=cols, rows=0))
    yield ("st", None, *cmd("config_st", activation=f["activation"], stride=c["out_stride"] * ib,
                            acc_scale=ACC_SCALE_NO_CHANGE))
