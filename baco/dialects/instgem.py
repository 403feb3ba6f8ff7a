"""The InstGem dialect: one op per Gemmini command, generated from the ISA
command table (`baco.gemmini.isa.COMMANDS`) so that funct numbers and field
layouts are defined exactly once.

Each op takes one i64 operand per field of its command, in table order
(`instgem.mvin(%dram_addr, %local_addr, %cols, %rows)`), plus `instgem.fence`
(the RISC-V `fence` that orders Gemmini against the core). The field-width
verifier checks constant operands against the table.
"""
from __future__ import annotations

from mlir.dialects import arith
from mlir.ir import IntegerAttr, IntegerType, Operation, WalkOrder, WalkResult

from baco.errors import CompilationError
from baco.gemmini.isa import COMMANDS

PREFIX = "instgem."


def operand_fields(cmd):
    """The fields a program sets: the table's fields minus fixed selector bits."""
    return [f for f in cmd.fields if not getattr(f, "fixed", False) and f.name != "cmd_type"]


def irdl_text() -> str:
    lines = ["irdl.dialect @instgem {"]
    for cmd in COMMANDS.values():
        lines.append(f"  irdl.operation @{cmd.name} {{")
        lines.append("    %i64 = irdl.is i64")
        fields = operand_fields(cmd)
        if fields:
            lines.append("    irdl.operands(" + ", ".join(f"{f.name}: %i64" for f in fields) + ")")
        if cmd.name == "counter":
            lines.append("    irdl.results(value: %i64)")
        lines.append("  }")
    lines.append("  irdl.operation @fence {\n  }")
    lines.append("}")
    return "\n".join(lines)


def emit(name: str, loc=None, **values):
    """Create `instgem.<name>` with operands ordered by the command table.
    `values` maps field name -> i64 Value; missing fields are set to 0."""
    cmd = COMMANDS[name]
    i64 = IntegerType.get_signless(64)
    fields = operand_fields(cmd)
    unknown = set(values) - {f.name for f in fields}
    if unknown:
        raise KeyError(f"{name} has no field(s) {sorted(unknown)}")
    operands = []
    for f in fields:
        v = values.get(f.name, 0)
        operands.append(arith.ConstantOp(i64, v, loc=loc).result if isinstance(v, int) else v)
    results = [i64] if name == "counter" else []
    return Operation.create(PREFIX + name, results=results, operands=operands, loc=loc)


def emit_fence(loc=None):
    return Operation.create(PREFIX + "fence", results=[], operands=[], loc=loc)


def verify_fields(module_op):
    """Constant operands must fit their field widths (the part IRDL cannot say)."""
    commands = []

    def collect(op):
        if op.name.startswith(PREFIX) and op.name != PREFIX + "fence":
            commands.append(op)
        return WalkResult.ADVANCE

    module_op.walk(collect, WalkOrder.PRE_ORDER)    # (an exception cannot cross the walk)
    for op in commands:
        cmd = COMMANDS[op.name[len(PREFIX):]]
        for f, v in zip(operand_fields(cmd), op.operands):
            owner = v.owner
            if getattr(owner, "name", None) != "arith.constant":
                continue
            value = IntegerAttr(owner.attributes["value"]).value
            if value < 0 or value >= (1 << f.width):
                raise CompilationError.at_location(
                    f"{cmd.name}.{f.name} = {value} does not fit its {f.width}-bit field", op.location)
