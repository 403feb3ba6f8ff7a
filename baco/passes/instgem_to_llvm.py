"""InstGem → LLVM dialect.

Each InstGem op packs its field operands into the 64-bit rs1/rs2 words with
the layout of the command table and becomes a call to the RoCC intrinsic
`@"baco.rocc.<command>"(i64 rs1, i64 rs2, i64 site)` (`instgem.fence` →
`@"baco.fence"`), where `site` is the op's source line and column (source_site):
a fault on the host JIT names the kernel line whose command faulted.
The intrinsics are the only thing the two backends define differently: the
host JIT binds them to the in-process Gemmini model, the RISC-V backend
defines them as `.insn r CUSTOM_3` inline assembly (baco/codegen/riscv.py),
which ignores the site.
The rest of the module is lowered by upstream MLIR conversions.
"""
from __future__ import annotations

import re

from mlir.ir import Attribute, InsertionPoint, StringAttr
from mlir.passmanager import PassManager

from baco.dialects import instgem
from baco.gemmini.isa import COMMANDS
from baco.passes import irutil as ir

INTRINSIC_PREFIX = "baco.rocc."
FENCE = "baco.fence"

UPSTREAM_TO_LLVM = ("builtin.module(convert-scf-to-cf,expand-strided-metadata,lower-affine,"
                    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
                    "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts,"
                    "canonicalize,cse)")


def intrinsic_name(command: str) -> str:
    return INTRINSIC_PREFIX + command


def source_site(loc) -> int:
    """A command's `site` operand: (line << 32) | col of the first file:line:col in its
    location, 0 when it has none (IR text without locations: "-" is the text itself)."""
    m = re.search(r'"([^"]+)":(\d+):(\d+)', str(loc))
    return (int(m.group(2)) << 32) | int(m.group(3)) if m and m.group(1) != "-" else 0


def site_line_col(site: int) -> tuple[int, int] | None:
    """(line, col) of a `site` operand, None for 0."""
    return (site >> 32, site & 0xFFFFFFFF) if site else None


def _declare(module_op, name: str, signature: str, loc):
    body = module_op.regions[0].blocks[0]
    for f in body.operations:
        if f.operation.name == "func.func" and StringAttr(f.operation.attributes["sym_name"]).value == name:
            return
    with InsertionPoint.at_block_begin(body), loc:
        ir.create("func.func", regions=1, attributes={
            "sym_name": StringAttr.get(name), "function_type": Attribute.parse(signature),
            "sym_visibility": StringAttr.get("private")})


def pack(cmd, operands):
    """rs1, rs2 as i64 Values: OR of (field & mask) << lsb, selector bits included."""
    words = {"rs1": None, "rs2": None}
    fixed = {"rs1": 0, "rs2": 0}
    values = dict(zip([f.name for f in instgem.operand_fields(cmd)], operands))
    for f in cmd.fields:
        if f.name not in values:
            fixed[f.word] |= (f.fixed or 0) << f.lsb
            continue
        v = values[f.name]
        if f.width < 64:
            v = ir.binop("andi", v, ir.const_int(f.mask, ir.i64()))
        if f.lsb:
            v = ir.binop("shli", v, ir.const_int(f.lsb, ir.i64()))
        words[f.word] = v if words[f.word] is None else ir.binop("ori", words[f.word], v)
    out = []
    for w in ("rs1", "rs2"):
        c = ir.const_int(_signed64(fixed[w]), ir.i64())
        out.append(c if words[w] is None else (ir.binop("ori", words[w], c) if fixed[w] else words[w]))
    return out


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def lower_instgem(module_op):
    for op in list(ir.walk_ops(module_op)):
        if not op.name.startswith(instgem.PREFIX):
            continue
        name = op.name[len(instgem.PREFIX):]
        with InsertionPoint(op), op.location:
            if name == "fence":
                _declare(module_op, FENCE, "() -> ()", op.location)
                ir.create("func.call", attributes={"callee": Attribute.parse(f'@"{FENCE}"')})
            else:
                cmd = COMMANDS[name]
                rs1, rs2 = pack(cmd, list(op.operands))
                ret = "i64" if cmd.name == "counter" else ""
                _declare(module_op, intrinsic_name(name), f"(i64, i64, i64) -> ({ret})", op.location)
                site = ir.const_int(source_site(op.location), ir.i64())
                call = ir.create("func.call", operands=[rs1, rs2, site],
                                 results=[ir.i64()] if ret else [],
                                 attributes={"callee": Attribute.parse(f'@"{intrinsic_name(name)}"')})
                if ret:
                    op.results[0].replace_all_uses_with(call.results[0])
        op.erase()


def run(module_op, **_):
    lower_instgem(module_op)
    PassManager.parse(UPSTREAM_TO_LLVM).run(module_op)
