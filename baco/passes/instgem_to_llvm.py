"""InstGem → LLVM dialect.

A pattern per InstGem op (baco.passes.rewrite, one walk) packs its field operands into the 64-bit rs1/rs2 words with
the layout of the command table and becomes a call to the RoCC intrinsic
`@"baco.rocc.<command>"(i64 rs1, i64 rs2, i64 site)` (`instgem.fence` →
`@"baco.fence"`; the names are baco.gemmini.abi's), where `site` is the op's source line and
column (abi.source_site):
a fault on the host JIT names the kernel line whose command faulted.
The intrinsics are the only thing the two backends define differently: the
host JIT binds them to the in-process Gemmini model, the RISC-V backend
defines them as `.insn r CUSTOM_3` inline assembly (baco/codegen/riscv.py),
which ignores the site.
The rest of the module is lowered by upstream MLIR conversions.
"""
from __future__ import annotations

from mlir.ir import Attribute, BlockArgument, InsertionPoint, IntegerAttr, StringAttr, WalkResult
from mlir.passmanager import PassManager

from baco.dialects import instgem
from baco.gemmini.abi import FENCE, intrinsic_name, source_site
from baco.gemmini.isa import COMMANDS
from baco.passes import irutil as ir
from baco.passes.rewrite import WALK, apply_patterns

UPSTREAM_TO_LLVM = ("builtin.module(convert-scf-to-cf,expand-strided-metadata,lower-affine,"
                    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
                    "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts,"
                    "canonicalize,cse)")


def _declare(module_op, name: str, signature: str, loc):
    body = module_op.regions[0].blocks[0]
    for f in body.operations:
        if f.operation.name == "func.func" and StringAttr(f.operation.attributes["sym_name"]).value == name:
            return
    with InsertionPoint.at_block_begin(body), loc:
        ir.create("func.func", regions=1, attributes={
            "sym_name": StringAttr.get(name), "function_type": Attribute.parse(signature),
            "sym_visibility": StringAttr.get("private")})


def pack(cmd, operands, ranges=None):
    """rs1, rs2 as i64 Values: OR of (field & mask) << lsb, selector bits included. The mask is
    left out where it changes nothing: a field ending at bit 63 (the shift drops the high
    bits) and a value whose range (value_range) lies inside the field."""
    ranges = {} if ranges is None else ranges
    words = {"rs1": None, "rs2": None}
    fixed = {"rs1": 0, "rs2": 0}
    values = dict(zip([f.name for f in instgem.operand_fields(cmd)], operands))
    for f in cmd.fields:
        if f.name not in values:
            fixed[f.word] |= (f.fixed or 0) << f.lsb
            continue
        v = values[f.name]
        lo, hi = value_range(v, ranges)
        if f.lsb + f.width < 64 and not (lo is not None and hi is not None and 0 <= lo and hi <= f.mask):
            v = ir.binop("andi", v, ir.const_int(f.mask, ir.i64()))
        if f.lsb:
            v = ir.binop("shli", v, ir.const_int(f.lsb, ir.i64()))
        words[f.word] = v if words[f.word] is None else ir.binop("ori", words[f.word], v)
    out = []
    for w in ("rs1", "rs2"):
        c = ir.const_int(_signed64(fixed[w]), ir.i64())
        out.append(c if words[w] is None else (ir.binop("ori", words[w], c) if fixed[w] else words[w]))
    return out


UNKNOWN = (None, None)


def value_range(value, ranges: dict, depth: int = 0):
    """Signed bounds (lo, hi) of an integer Value from the arithmetic that computes it (None:
    unbounded on that side): constants, casts, + - * / rem min max select or and, and scf.for
    induction variables (lb <= iv < ub). `ranges` memoizes."""
    if value in ranges:
        return ranges[value]
    ranges[value] = UNKNOWN           # cycles (loop-carried values) are unbounded
    r = _range_of(value, ranges, depth) if depth < 64 else UNKNOWN
    if any(b is not None and not -(1 << 63) <= b < 1 << 63 for b in r):
        r = UNKNOWN                 # the i64 arithmetic may wrap
    ranges[value] = r
    return r


def _range_of(value, ranges, depth):
    owner = value.owner
    if not hasattr(owner, "name"):          # a block argument: an scf.for induction variable?
        parent = owner.owner
        if parent is not None and parent.name == "scf.for" and BlockArgument(value).arg_number == 0:
            lo = value_range(parent.operands[0], ranges, depth + 1)[0]
            hi = value_range(parent.operands[1], ranges, depth + 1)[1]
            step = value_range(parent.operands[2], ranges, depth + 1)[0]
            return (lo, None if hi is None else hi - 1) if step is not None and step > 0 else UNKNOWN
        return UNKNOWN
    name, ops = owner.name, list(owner.operands)

    def rng(i):
        return value_range(ops[i], ranges, depth + 1)
    if name == "arith.constant":
        v = owner.attributes["value"]
        if not ("i64" in str(v.type) or "index" in str(v.type) or "i32" in str(v.type)):
            return UNKNOWN
        n = IntegerAttr(v).value
        return n, n
    if name in ("arith.index_cast", "arith.extsi"):
        return rng(0)
    if name == "arith.extui":
        return (0, 1) if str(ops[0].type) == "i1" else UNKNOWN
    (alo, ahi) = rng(0) if ops else UNKNOWN
    (blo, bhi) = rng(1) if len(ops) > 1 else UNKNOWN
    both = None not in (alo, ahi, blo, bhi)
    if name == "arith.addi":
        return (None if None in (alo, blo) else alo + blo, None if None in (ahi, bhi) else ahi + bhi)
    if name == "arith.subi":
        return (None if None in (alo, bhi) else alo - bhi, None if None in (ahi, blo) else ahi - blo)
    if name == "arith.muli" and both:
        p = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
        return min(p), max(p)
    if name == "arith.minsi":
        return (None if None in (alo, blo) else min(alo, blo),
                bhi if ahi is None else ahi if bhi is None else min(ahi, bhi))
    if name == "arith.maxsi":
        return (blo if alo is None else alo if blo is None else max(alo, blo),
                None if None in (ahi, bhi) else max(ahi, bhi))
    if name in ("arith.divsi", "arith.ceildivsi", "arith.floordivsi") and blo is not None and blo == bhi and blo > 0:
        div = {"arith.divsi": lambda x: int(x / blo), "arith.ceildivsi": lambda x: -(-x // blo),
               "arith.floordivsi": lambda x: x // blo}[name]       # monotone in the dividend
        return (None if alo is None else div(alo), None if ahi is None else div(ahi))
    if name == "arith.remsi" and blo is not None and blo == bhi and blo > 0:
        return (0 if alo is not None and alo >= 0 else 1 - blo, blo - 1)
    if name == "arith.select":
        (clo, chi), (dlo, dhi) = rng(1), rng(2)
        return (None if None in (clo, dlo) else min(clo, dlo), None if None in (chi, dhi) else max(chi, dhi))
    if name == "arith.ori" and both and alo >= 0 and blo >= 0:
        return max(alo, blo), ahi + bhi
    if name == "arith.andi" and (alo is not None and alo >= 0 or blo is not None and blo >= 0):
        return 0, min(h for lo, h in ((alo, ahi), (blo, bhi)) if lo is not None and lo >= 0 and h is not None)
    return UNKNOWN


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def lower_instgem(module_op):
    """One pattern per InstGem op, applied in one walk: the fence becomes a call of
    @"baco.fence", a command packs its fields into rs1/rs2 (one value_range memo for the
    module) and calls its intrinsic."""
    ranges, declared = {}, set()

    def declare(name, signature, loc):      # once a name: _declare reads every function of the module
        if name not in declared:
            _declare(module_op, name, signature, loc)
            declared.add(name)

    def fence(op, rewriter):
        declare(FENCE, "() -> ()", op.location)
        ir.create("func.call", attributes={"callee": Attribute.parse(f'@"{FENCE}"')})
        rewriter.erase_op(op)
        return True

    def command(op, rewriter):
        cmd = COMMANDS[op.name[len(instgem.PREFIX):]]
        rs1, rs2 = pack(cmd, list(op.operands), ranges)
        ret = "i64" if cmd.name == "counter" else ""
        declare(intrinsic_name(cmd.name), f"(i64, i64, i64) -> ({ret})", op.location)
        site = ir.const_int(source_site(op.location), ir.i64())
        call = ir.create("func.call", operands=[rs1, rs2, site],
                         results=[ir.i64()] if ret else [],
                         attributes={"callee": Attribute.parse(f'@"{intrinsic_name(cmd.name)}"')})
        if ret:
            rewriter.replace_op(op, list(call.results))
        else:
            rewriter.erase_op(op)
        return True

    apply_patterns(module_op, {instgem.PREFIX + "fence": fence, **{instgem.PREFIX + name: command for name in COMMANDS}},
                   WALK)


SIGNED_DIVISIONS = ("arith.divsi", "arith.floordivsi", "arith.ceildivsi", "arith.remsi")
UNSIGNED_OF = {"arith.divsi": "divui", "arith.floordivsi": "divui", "arith.remsi": "remui"}


def unsigned_divisions(module_op):
    """A signed division whose dividend is >= 0 and divisor > 0 (value_range) becomes the unsigned
    one, equal there, and a ceiling division (a + b - 1) / b unsigned where that sum fits: the
    backends expand a signed division by a constant DIM into shifts that correct for a negative
    dividend (four instructions; ceildivsi's sign cases about ten), the unsigned one into a
    shift. All are decided on the IR as it is, then rewritten."""
    ranges, found = {}, []

    def collect(op):
        # i64 and index only: value_range's bounds assume 64-bit arithmetic (an i32 sum may wrap)
        if op.name in SIGNED_DIVISIONS and str(op.result.type) in ("i64", "index"):
            (alo, ahi), (blo, bhi) = (value_range(v, ranges) for v in op.operands)
            fits = op.name != "arith.ceildivsi" or None not in (ahi, bhi) and ahi + bhi - 1 < 1 << 63
            if alo is not None and alo >= 0 and blo is not None and blo > 0 and fits:
                found.append(op)
        return WalkResult.ADVANCE
    module_op.walk(collect)
    for op in found:
        a, b = op.operands
        with InsertionPoint(op), op.location:
            if op.name == "arith.ceildivsi":
                a = ir.binop("addi", a, ir.binop("subi", b, ir.const_int(1, b.type)))
            new = ir.binop(UNSIGNED_OF.get(op.name, "divui"), a, b)
        op.result.replace_all_uses_with(new)
        op.erase()


UNSIGNED_DIVISIONS = ("arith.divui", "arith.ceildivui", "arith.remui")


def safe_divisions(module_op):
    """A pattern on each integer division, applied in one walk: a division whose divisor may be
    0 (or, signed, the one overflowing quotient MIN / -1) divides by 1 instead, so no backend traps (x86's idiv raises SIGFPE in the host
    process). The kernel's own divisions are checked before they run (a located run-time error,
    baco.errors.DIVISION_BY_ZERO): what they then compute is never used. Done here, last, so
    the passes before see the kernel's arithmetic as written."""
    ranges = {}

    def guard_divisor(op, _rewriter):
        a, b = op.operands
        lo, hi = value_range(b, ranges)
        signed = op.name in SIGNED_DIVISIONS
        if lo is not None and (lo > 0 if signed else lo != 0) or hi is not None and hi < -1:
            return False
        bad = ir.cmpi("eq", b, ir.const_int(0, b.type))
        if signed:
            width = 64 if str(b.type) == "index" else int(str(b.type)[1:])
            overflow = ir.binop("andi", ir.cmpi("eq", b, ir.const_int(-1, b.type)),
                                ir.cmpi("eq", a, ir.const_int(-(1 << (width - 1)), a.type)))
            bad = ir.binop("ori", bad, overflow)
        op.operands[1] = ir.select(bad, ir.const_int(1, b.type), b)   # in place: the walk has no listener
        return True

    apply_patterns(module_op, {name: guard_divisor for name in SIGNED_DIVISIONS + UNSIGNED_DIVISIONS}, WALK)


def run(module_op, options):
    lower_instgem(module_op)
    unsigned_divisions(module_op)
    safe_divisions(module_op)
    PassManager.parse(UPSTREAM_TO_LLVM).run(module_op)
