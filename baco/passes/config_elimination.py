"""Config-command elimination on InstGem (the config-state tracking Exo does for Gemmini).

Gemmini's config_ex, config_ld (per load slot) and config_st set state that stays until the
next command of the same kind. A config command is redundant when the state it sets is
provably already set: the last command of its kind on every path to it applied the same
operands (applying the same operands twice is a no-op, also for the partial forms:
config_ex's set_only_strides and config_st's all-ones "keep the scale"). A forward
must-analysis over the function tracks, per state (config_ex, config_ld slot 0/1/2,
config_st, config_norm), the operands last applied: constants by value, other values by
structural keys. scf.if meets its branches; scf.for meets the state before the loop with the
state at the end of its body until nothing changes, so a command set to a loop-invariant
value on every iteration is removed from the body when the loop is entered with it set. An
scf.if without else also records the state when its condition held, which a loop uses when
that condition is the one it runs under: the prefetch pass's `if (lb < ub) config…` before
a loop and `if (i + step < ub) config…` in it set what every iteration starts in.
Any other command or call that could touch Gemmini (unknown calls, regions this pass does not
model) forgets every state; LOOP_WS reads it only; LOOP_CONV_WS forgets the load slots (its
loads set their block strides), config_st unless no_pool is 1 (or its closing config_st sets what
the state already was) and config_ex unless trans_input_3120 is 0 (baco.sim.loops.conv_stream).

Across the programs of a launch: the harnesses (host JIT and ELF) run every program of
the grid in order, program (0, 0, 0) first, on one Gemmini, with the same arguments. When
the state at the function's end is known and set from launch-invariant values (constants
and arithmetic on the function's arguments at its top level), the next program starts in
it. A command that is redundant from that state but not from an unknown one (typically
the configs at the top of the kernel) runs only in the first program:
`scf.if (program_id == (0, 0, 0)) { config… }`. That keeps e.g. a config_st from taking
a store reservation-station slot while the previous program's mvouts drain.

    baco opt --pass config-elimination kernel.instgem.mlir
"""
from __future__ import annotations

from mlir.dialects import scf
from mlir.ir import InsertionPoint, IntegerAttr

from baco.dialects.instgem import PREFIX, operand_fields
from baco.gemmini.abi import BOUNDARY_ERROR, NUM_PROGRAMS, PROGRAM_ID, RUNTIME_ERROR
from baco.gemmini.isa import COMMANDS, CONFIG_COMMANDS
from baco.passes import irutil as ir

# commands that change no configuration state (the command table's `writes`), and the fence
READERS = {PREFIX + c.name for c in COMMANDS.values() if not c.writes} | {PREFIX + "fence"}
HARMLESS_CALLS = (f"@{PROGRAM_ID}", f"@{NUM_PROGRAMS}", f"@{BOUNDARY_ERROR}", f"@{RUNTIME_ERROR}")
PURE_MEMREF = ("memref.extract_strided_metadata", "memref.extract_aligned_pointer_as_index", "memref.subview",
               "memref.reinterpret_cast", "memref.cast", "memref.dim")
ALL = None      # "forget every state"


def _constant(value):
    """The integer value of an integer constant, else None."""
    owner = value.owner
    if getattr(owner, "name", None) != "arith.constant":
        return None
    try:
        return IntegerAttr(owner.attributes["value"]).value
    except ValueError:      # a float constant
        return None


def _segments(op) -> list:
    """The operand groups of an op with operandSegmentSizes (e.g. memref.subview's source,
    offsets, sizes, strides)."""
    sizes = [int(x) for x in str(op.attributes["operandSegmentSizes"]).split(":")[1].strip(" >").split(",")]
    operands, out, i = list(op.operands), [], 0
    for n in sizes:
        out.append(operands[i:i + n])
        i += n
    return out


class ValueKeys:
    """Structural keys of SSA values: two values with equal keys hold the same number
    wherever both are defined, also across loop iterations (a key names a block argument
    only by identity, and no such key survives past its loop: the meet at the loop's entry
    drops it). Constants are keyed by value; pure arithmetic and memref metadata by op and
    operand keys; a stride of a view by the strides it is made from (not its offsets, which
    move with the loop or the program); anything else by identity. `launch` keys are those
    the same in every program of a launch: no program id, no loop variable, no opaque value."""

    def __init__(self, func_args):
        self.func_args = {a: i for i, a in enumerate(func_args)}
        self.memo = {}
        self.conditions = {}        # key -> its _Condition; value -> its _Condition

    def key(self, value):
        if value not in self.memo:
            self.memo[value] = self._key(value)
        return self.memo[value]

    def _key(self, value):
        owner = value.owner
        if getattr(owner, "name", None) == "arith.constant":
            return ("const", str(owner.attributes["value"]))
        if not hasattr(owner, "name"):          # a block argument
            return ("arg", self.func_args[value]) if value in self.func_args else ("opaque", value)
        owner = owner.operation
        index = list(owner.results).index(value)
        if owner.name == "memref.extract_strided_metadata":
            rank = (len(owner.results) - 2) // 2
            if index >= 2 + rank:
                return ("stride", index - 2 - rank, self.strides(owner.operands[0]))
        if owner.name == "func.call" and str(owner.attributes["callee"]) in (f"@{PROGRAM_ID}", f"@{NUM_PROGRAMS}"):
            return ("grid", str(owner.attributes["callee"]), self.key(owner.operands[0]))
        if owner.name.startswith("arith.") or owner.name in PURE_MEMREF:
            attrs = tuple(sorted((a, str(owner.attributes[a])) for a in owner.attributes))
            return (owner.name, attrs, index, tuple(self.key(v) for v in owner.operands))
        return ("opaque", value)

    def condition(self, value) -> "_Condition":
        """The one _Condition of i1 `value`'s key (values of equal keys share it)."""
        found = self.conditions.get(value)
        if found is None:
            key = self.key(value)
            found = self.conditions.get(key)
            if found is None:
                found = self.conditions[key] = _Condition(key)
            self.conditions[value] = found
        return found

    def strides(self, memref):
        """Key of the strides of `memref` (a view's strides do not depend on its offsets)."""
        owner = memref.owner
        op = owner.operation if hasattr(owner, "name") else None
        if op is not None and op.name == "memref.subview":
            source, _, _, strides = _segments(op)
            return ("subview", self.strides(source[0]), str(op.attributes["static_strides"]),
                    tuple(self.key(v) for v in strides))
        if op is not None and op.name == "memref.reinterpret_cast":
            _, _, _, strides = _segments(op)
            return ("reinterpret", str(op.attributes["static_strides"]), tuple(self.key(v) for v in strides))
        if op is not None and op.name == "memref.cast":
            return self.strides(op.operands[0])
        return ("memref", self.key(memref))

    @staticmethod
    def launch_invariant(key) -> bool:
        if not isinstance(key, tuple):
            return True
        if key and key[0] in ("opaque", "grid"):
            return key[0] == "grid" and key[1] == f"@{NUM_PROGRAMS}"
        return all(ValueKeys.launch_invariant(k) for k in key)


def _field(op, name):
    cmd = COMMANDS[op.name[len(PREFIX):]]
    names = [f.name for f in operand_fields(cmd)]
    return op.operands[names.index(name)]


def state_of(op):
    """The state a config command sets (a key), or ALL when it is not known which."""
    kind = op.name[len(PREFIX):]
    if kind != "config_ld":
        return kind
    slot = _constant(_field(op, "state_id"))
    return ("config_ld", slot) if slot is not None else ALL


def _meet(a: dict, b: dict) -> dict:
    return {k: v for k, v in a.items() if k in b and b[k] == v}


# A state maps a config state (its key) to the operands last applied. It also holds what is
# known only when a condition held: ("taken", condition key, state key) -> operands, the
# state after an `scf.if` without else when its condition was true. Entering a loop whose
# condition to run is that one (lb < ub; the next iteration's iv + step < ub) uses it:
# that is how the prefetched loops' `if (lb < ub) config…` / `if (next < ub) config…` are
# known to have set the state every iteration starts in.
def _taken(k) -> bool:
    return isinstance(k, tuple) and k[0] == "taken"


class _Condition:
    """A condition's key in a taken key, one object per key (ValueKeys.condition), so compared and
    hashed by identity: taken keys are hashed at every meet and tested at every loop's entry, and a
    condition's key is a deep tuple (the whole arithmetic of both sides)."""
    __slots__ = ("key", "predicate")

    def __init__(self, key):
        self.key, self.predicate = key, _predicate(key)


def _sets(k):
    return k[2] if _taken(k) else k


def _is_load_slot(k) -> bool:
    k = _sets(k)
    return isinstance(k, tuple) and k[0] == "config_ld"


def _predicate(ck) -> int | None:
    """arith.cmpi's predicate number of condition key `ck` (2 slt, 4 sgt), else None."""
    if not (isinstance(ck, tuple) and len(ck) == 4 and ck[0] == "arith.cmpi"):
        return None
    text = dict(ck[1]).get("predicate", "")
    return int(text.split(":")[0]) if text.split(":")[0].strip().isdigit() else None


def _less(cond, lo, hi) -> bool:
    """_Condition `cond` is lo < hi (as `slt lo, hi` or `sgt hi, lo`)."""
    p = cond.predicate
    return (p == 2 and cond.key[3] == (lo, hi)) or (p == 4 and cond.key[3] == (hi, lo))


def _assume(state: dict, holds) -> dict:
    """`state` when the conditions (_Condition) for which holds(condition) is true were true."""
    out = dict(state)
    for k, v in state.items():
        if _taken(k) and holds(k[1]):
            out[k[2]] = v
    return out


class Flow:
    """The must-analysis; `redundant` collects the config ops found redundant (in the last
    pass over each region, at its fixpoint)."""
    MAX_ROUNDS = 16

    def __init__(self, keys: ValueKeys, before: "Flow | None" = None):
        self.keys = keys
        self.redundant = set()
        # block -> [(op, name, holds a block)], config op -> (state key, operand keys): read through
        # the bindings once (also for a second analysis of the same function, `before`)
        self.block_ops = before.block_ops if before else {}
        self.configs = before.configs if before else {}
        # loop op -> [[state it was entered with, entry at the fixpoint, state after it, recorded]]:
        # the analysis of a loop is a function of its entry state, and an outer loop's rounds enter
        # an inner loop with the same state again and again (rounds^depth walks of the innermost body)
        self.loops = {}

    def restores_config_st(self, loop_conv, state: dict) -> bool:
        """A pooling LOOP_CONV_WS ends with config_st(activation, stride = config 4's out_stride,
        scale kept, no pooling) (baco.sim.loops): the config_st state it found when that is what
        the state already was (its config 4 set in the same block)."""
        value = state.get("config_st")
        config_4 = None
        for prev in loop_conv.block.operations:
            if prev.operation == loop_conv:
                break
            if prev.operation.name == PREFIX + "loop_conv_ws_config_4":
                config_4 = prev.operation
        if value is None or config_4 is None:
            return False
        fields = dict(zip((f.name for f in operand_fields(COMMANDS["config_st"])), value))
        pooling = ("pool_stride", "pool_size", "upad", "lpad", "pool_out_dim", "porows", "pocols", "orows", "ocols")
        return fields["stride"] == self.keys.key(_field(config_4, "out_stride")) and \
            fields["activation"] == self.keys.key(_field(loop_conv, "activation")) and \
            all(isinstance(fields[f], tuple) and fields[f][0] == "const" and fields[f][1].split(" ")[0] == "0"
                for f in pooling)

    def block(self, block, state: dict, record: bool) -> dict:
        ops = self.block_ops.get(block)
        if ops is None:
            ops = self.block_ops[block] = [(op.operation, op.operation.name,
                                            any(len(r.blocks) for r in op.operation.regions))
                                           for op in block.operations]
        state = dict(state)
        for op, name, nested in ops:
            state = self.op(op, name, nested, state, record)
        return state

    def config(self, op) -> tuple:
        """(the state `op` sets, its operands' keys), computed once."""
        found = self.configs.get(op)
        if found is None:
            found = self.configs[op] = (state_of(op), tuple(self.keys.key(v) for v in op.operands))
        return found

    def op(self, op, name: str, nested: bool, state: dict, record: bool) -> dict:
        if name.startswith(PREFIX) and name[len(PREFIX):] in CONFIG_COMMANDS:
            key, value = self.config(op)
            if key is ALL:
                return {k: v for k, v in state.items() if not _is_load_slot(k)}
            if record and state.get(key) == value:
                self.redundant.add(op)
            for k in [k for k in state if _taken(k) and k[2] == key]:
                state[k] = value
            state[key] = value
            return state
        if name in READERS:
            return state
        if name == PREFIX + "loop_conv_ws":
            kept = {k: v for k, v in state.items() if not _is_load_slot(k)}
            if _constant(_field(op, "no_pool")) != 1 and not self.restores_config_st(op, state):
                kept = {k: v for k, v in kept.items() if _sets(k) != "config_st"}
            if _constant(_field(op, "trans_input_3120")) != 0:
                kept = {k: v for k, v in kept.items() if _sets(k) != "config_ex"}
            return kept
        if name == "func.call":
            return state if str(op.attributes["callee"]) in HARMLESS_CALLS else {}
        if name == "scf.if":
            then = self.block(op.regions[0].blocks[0], state, record)
            if len(op.regions[1].blocks):
                return _meet(then, self.block(op.regions[1].blocks[0], state, record))
            out = _meet(then, state)
            cond = self.keys.condition(op.operands[0])
            out.update({("taken", cond, k): v for k, v in then.items() if not _taken(k)})
            return out
        if name == "scf.for":
            return self.loop(op, state, record)
        if name.startswith(PREFIX) or nested or name == "func.call":
            return {}            # LOOP_WS / LOOP_CONV_WS and their configs, regions not modelled
        return state             # arithmetic, memref metadata, yields

    def loop(self, op, state: dict, record: bool) -> dict:
        """The state after loop `op` entered with `state` (memoized: see self.loops)."""
        seen = self.loops.setdefault(op, [])
        memo = next((m for m in seen if m[0] == state), None)
        if memo is None:
            entry = self.fixpoint(op, state)
            after = _meet(state, self.block(op.regions[0].blocks[0], entry, record))
            seen.append([dict(state), entry, after, record])
            return dict(after)
        if record and not memo[3]:      # found before without recording: walk it once more to record
            self.block(op.regions[0].blocks[0], memo[1], True)
            memo[3] = True
        return dict(memo[2])

    def fixpoint(self, op, state: dict) -> dict:
        """The state every iteration of loop `op` starts in, entered with `state`."""
        body = op.regions[0].blocks[0]
        lb, ub, step = (self.keys.key(v) for v in list(op.operands)[:3])
        iv = self.keys.key(body.arguments[0])

        def next_runs(cond):    # (iv + step) < ub: the next iteration runs (asked again each round)
            if cond not in tested:
                p = cond.predicate
                nxt = None if p not in (2, 4) else cond.key[3][0] if p == 2 else cond.key[3][1]
                tested[cond] = isinstance(nxt, tuple) and len(nxt) == 4 and nxt[0] == "arith.addi" and \
                    nxt[3] in ((iv, step), (step, iv)) and _less(cond, nxt, ub)
            return tested[cond]

        tested = {}
        first = _assume(state, lambda cond: _less(cond, lb, ub))
        entry = first
        for _ in range(self.MAX_ROUNDS):    # the lattice only shrinks: a few rounds at most
            end = self.block(body, entry, False)
            nxt = _meet(first, _assume(end, next_runs))
            if nxt == entry:
                break
            entry = nxt
        else:
            entry = {}
        return entry


def first_program(func, loc):
    """i1: this is program (0, 0, 0), computed at the top of `func`."""
    body = func.regions[0].blocks[0]
    with InsertionPoint.at_block_begin(body), loc:
        zero = ir.const_int(0, ir.i64())
        conds = [ir.cmpi("eq", ir.call_grid(func, PROGRAM_ID, axis), zero) for axis in range(3)]
        return ir.binop("andi", ir.binop("andi", conds[0], conds[1]), conds[2])


def eliminate(func) -> tuple[int, int]:
    """Remove `func`'s redundant configs and guard the ones only the first program needs;
    returns (removed, guarded)."""
    body = func.regions[0].blocks[0]
    keys = ValueKeys(list(body.arguments))
    flow = Flow(keys)
    exit_state = flow.block(body, {}, True)
    removed = set(flow.redundant)
    carried = {k: v for k, v in exit_state.items() if keys.launch_invariant(v)}
    guarded = []
    if carried:
        again = Flow(keys, flow)
        again.block(body, carried, True)
        guarded = [op for op in again.redundant if op not in removed]
    for op in removed:
        op.erase()
    if guarded:
        cond = first_program(func, func.location)
        for op in guarded:
            with InsertionPoint(op), op.location:
                if_op = scf.IfOp(cond)
                with InsertionPoint(if_op.then_block):
                    scf.YieldOp([])
            op.move_before(if_op.then_block.operations[0])
    return len(removed), len(guarded)


def run(module_op, options):
    # the functions are picked before any is rewritten: walk_ops lists every nested op too, and a
    # config op erased in one function must not be read again (a use after free, a rare segfault)
    funcs = [op for op in ir.walk_ops(module_op) if op.name == "func.func" and len(op.regions[0].blocks)]
    for func in funcs:
        eliminate(func)
