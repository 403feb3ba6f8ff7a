"""Versioning a block program on "all its windows are full" (the interior of the grid).

A boundary-checked load or store clamps its window to the array, `min(max(x, 0), D)` per end
(`irutil.checked_window`), and every program pays for that arithmetic, for the zero rows and
ragged chunks it allows and for the checks, although in most launches most programs lie
inside the arrays. Before lowering, a GEMM-like function (versionable) whose clamps see an end
`x` that is computed before its body (a program's origin) or a top-level loop's carried offset
stepping by a constant (a block pointer advanced along K) is rewritten

    if (each such clamp is the identity: 0 <= x <= D on every iteration) { body, those clamps removed }
    else { body }

so the first copy's windows have constant extents and no lead rows: canonicalization folds
them, and the lowering's streams get constant trip counts and no ragged branches. Other clamps
stay in both copies. A K that is not a multiple of the K block fails that test for every program
(its last K window is short), so where a loop's window ends past its offset (x = v + c, c > 0)
the test is split in two:

    if (those ends are >= 0 and every other clamp is the identity) {
        if (those ends are <= D too) { body, clamps removed }
        else { body, those clamps min(x, D), the others removed } } else { body }

(the ragged-K version: M and N extents constant, only the K extent computed each step). In a
kernel compiled for its launch's integers, the general copy is versioned again on the program id
of each axis whose last program's window is short, `if (id == last) { body, the id a constant }`
(_version_last_program): that program's extents fold as a launch of it alone would. The
test costs ~30 instructions a program; the kernel function of 512^3 at 32/32/512 (DIM 16) grew
from 11,618 to 13,866 bytes with the interior copy, to 18,498 with the ragged-K one (at 64/128/64:
17,322 -> 23,438 bytes for the ragged-K copy).
"""
from __future__ import annotations

from mlir.dialects import scf
from mlir.ir import InsertionPoint, IntegerAttr

from baco.gemmini.abi import PROGRAM_ID
from baco.passes import irutil as ir
from baco.passes.prefetch import GRID_CALLS, body_ops, clone_with, nested

TRAPPING_DIVISIONS = ("arith.divsi", "arith.divui", "arith.ceildivsi", "arith.ceildivui", "arith.floordivsi",
          "arith.remsi", "arith.remui")


def _const(v):
    """v's value if it is an integer arith.constant, else None."""
    owner = v.owner
    if not hasattr(owner, "name") or owner.operation.name != "arith.constant":
        return None
    try:
        return IntegerAttr(owner.operation.attributes["value"]).value
    except ValueError:
        return None


def _defining(v):
    owner = v.owner
    return owner.operation if hasattr(owner, "name") else None


def _binop_with_const(op, name):
    """(other operand, constant) of a commutative `name` op with one constant operand, else None."""
    if op is None or op.name != name:
        return None
    a, b = op.operands
    if _const(b) is not None:
        return a, _const(b)
    if _const(a) is not None:
        return b, _const(a)
    return None


def _clamped_end(op):
    """(x, D) of `op` = min(max(x, 0), D) (either operand order), else None."""
    if op.name != "arith.minsi":
        return None
    for m, bound in (op.operands, reversed(list(op.operands))):
        inner = _binop_with_const(_defining(m), "arith.maxsi")
        if inner is not None and inner[1] == 0:
            return inner[0], bound
    return None


class _Hoist:
    """Values of the function's entry block computable before its body (after the prefix of
    grid calls and arithmetic): block arguments, the prefix's results, and arithmetic on them
    without a division that could trap (cloned before the test)."""

    def __init__(self, entry, prefix):
        self.entry, self.prefix = entry, set(prefix)
        self.needed = []

    def ok(self, v) -> bool:
        op = _defining(v)
        if op is None:
            return v.owner == self.entry
        if op in self.prefix or op in self.needed:
            return True
        if op.parent.operation != self.entry.owner.operation or not op.name.startswith("arith.") or \
                (op.name in TRAPPING_DIVISIONS and not _const(op.operands[1])):
            return False
        if all(self.ok(o) for o in op.operands):
            self.needed.append(op)
            return True
        return False


def _range(x, hoist: _Hoist, loops):
    """The values end `x` takes: ("once", base, c) for x = base + c with base hoistable, or
    ("loop", (start, s, lb, ub), c) for x = v + c with v a top-level loop's carried value stepping
    by a constant s >= 0 from a hoistable start, over a loop of step 1 from lb to ub (v runs over
    start + s·t, t < ub - lb). None if x is neither."""
    base, c = x, 0
    split = _binop_with_const(_defining(x), "arith.addi")
    if split is not None:
        base, c = split
    if hoist.ok(base):
        return ("once", base, c)
    owner = base.owner
    loop = next((lp for lp in loops if owner == lp.regions[0].blocks[0]), None)
    if loop is None or base == owner.arguments[0]:
        return None
    lb, ub, step, *inits = loop.operands
    index = list(owner.arguments).index(base) - 1
    advance = _binop_with_const(_defining(body_ops(loop)[-1].operands[index]), "arith.addi")
    if _const(step) != 1 or advance is None or advance[0] != base or advance[1] < 0 or \
            not all(hoist.ok(v) for v in (lb, ub, inits[index])):
        return None
    return ("loop", (inits[index], advance[1], lb, ub), c)


def _clamps(top, hoist: _Hoist):
    """[(clamp op, its range, bound D)] of the clamps among the function's top-level ops `top` or in
    a top-level loop's body."""
    loops = [op for op in top if op.name == "scf.for"]
    candidates = top + [op for lp in loops for op in body_ops(lp)]
    found = []
    for op in candidates:
        end = _clamped_end(op)
        if end is None or not hoist.ok(end[1]):
            continue
        rng = _range(end[0], hoist, loops)
        if rng is not None:
            found.append((op, rng, end[1]))
    return found


def _condition(clamps, hoisted: dict, lows=True, skip_high=()):
    """i1: every clamp's end lies in [0, D] on every iteration (only <= D without `lows`, only
    >= 0 for the clamps in `skip_high`), built at the insertion point over the `hoisted` clones of
    the values it reads."""
    conds = []
    at = lambda v: hoisted.get(v, v)      # noqa: E731
    for op, (kind, what, c), bound in clamps:
        bound = at(bound)
        if kind == "once":
            low = high = ir.binop("addi", at(what), ir.const_index(c)) if c else at(what)
        else:
            init, s, lb, ub = at(what[0]), what[1], at(what[2]), at(what[3])
            low = ir.binop("addi", init, ir.const_index(c))
            last = ir.binop("subi", ir.binop("subi", ub, lb), ir.const_index(1))
            high = ir.binop("addi", low, ir.binop("muli", last, ir.const_index(s)))
        for cond in (("sge", low, None),) * lows + (("sle", high, bound),) * (op not in skip_high):
            if cond not in conds:       # a window's two ends and its store's repeat a test
                conds.append(cond)
    conds = [ir.cmpi(pred, a, ir.const_index(0) if b is None else b) for pred, a, b in conds]
    out = conds[0]
    for c in conds[1:]:
        out = ir.binop("andi", out, c)
    return out


def _unclamped_copy(rest, clamps, prefix, keep_min=()):
    """Clone `rest` at the insertion point with each clamp min(max(x, 0), D) replaced by x, or by
    min(x, D) for the clamps in `keep_min`; a clamp before the test is read as its x (`prefix`:
    {its result: x})."""
    clones = {}
    for op, new in zip(rest, clone_with(rest, dict(prefix))):
        clones.update(zip(nested(op), nested(new)))
    for op in (op for op, _, _ in clamps if op in clones):
        clamp = clones[op]
        x = _clamped_end(clamp)[0]
        if op in keep_min:
            inner = next(i for i, v in enumerate(clamp.operands) if _binop_with_const(_defining(v), "arith.maxsi"))
            clamp.operands[inner] = x
        else:
            clamp.result.replace_all_uses_with(x)
    scf.YieldOp([])


def versionable(func) -> bool:
    """A GEMM-like block program: no 3-D loads (convs), no block an OS dot writes through the array
    (placement's gemmini.array_written, which the lowering finds again only for a dot at the
    function's top level), nothing lowered yet, no result."""
    ops = ir.walk_ops(func)
    return not any(op.name.startswith("instgem.") or (op.name == "memref.alloc" and (
        "gemmini.slice_rows" in op.attributes or "gemmini.array_written" in op.attributes)) for op in ops) and \
        not list(body_ops(func)[-1].operands)


def version_interior(func) -> bool:
    """Rewrite `func` as the module doc says; False (unchanged) if it has no clamp to remove."""
    if not versionable(func):
        return False
    entry = func.regions[0].blocks[0]
    ops = body_ops(func)
    split = next(i for i, op in enumerate(ops) if not (
        op.name.startswith("arith.") or (op.name == "func.call" and str(op.attributes["callee"]) in GRID_CALLS)))
    rest = ops[split:-1]
    hoist = _Hoist(entry, ops[:split])
    clamps = _clamps(ops[:-1], hoist)
    if not clamps:
        return False
    prefix = {op.result: _clamped_end(op)[0] for op, _, _ in clamps if op in ops[:split]}
    # the ends of a loop's windows past its offset (x = v + c, c > 0): a last short K step clips them
    ragged = {op for op, (kind, _, c), _ in clamps if kind == "loop" and c > 0}
    with InsertionPoint(ops[split]), func.location:
        mapping = {}
        clone_with(sorted(hoist.needed, key=ops.index), mapping)
        if_op = scf.IfOp(_condition(clamps, mapping, skip_high=ragged), [], has_else=True)
    with InsertionPoint(if_op.then_block), func.location:
        if ragged:          # M and N full: all K windows full too, or only the last K step's short
            k_full = scf.IfOp(_condition([c for c in clamps if c[0] in ragged], mapping, lows=False), [],
                              has_else=True)
            with InsertionPoint(k_full.then_block):
                _unclamped_copy(rest, clamps, prefix)
            with InsertionPoint(k_full.else_block):
                _unclamped_copy(rest, clamps, prefix, keep_min=ragged)
            scf.YieldOp([])
        else:
            _unclamped_copy(rest, clamps, prefix)
    with InsertionPoint(if_op.else_block), func.location:
        anchor = scf.YieldOp([])
    for op in rest:
        op.move_before(anchor)
    for call, last in _last_programs(clamps).items():
        anchor = _version_last_program(func, ops[:split], call, last, anchor)
    return True


def _last_programs(clamps) -> dict:
    """{program id call: the id of its axis's last program} for the axes whose last program's
    window is short: a clamp's end x = id·f + f (a block's end past its start id·f) against a
    constant D (the launch's integers specialized) that is not a multiple of f. That program is
    pid = floor(D / f) (its window [pid·f, D) is not empty)."""
    found = {}
    for _, (kind, base, c), bound in clamps:
        D = _const(bound)
        scaled = _binop_with_const(_defining(base), "arith.muli") if kind == "once" else None
        if D is None or scaled is None or scaled[1] != c or c <= 0 or D % c == 0:
            continue
        pid = scaled[0]
        cast = _defining(pid)
        if cast is not None and cast.name == "arith.index_cast":
            pid = cast.operands[0]
        call = _defining(pid)
        if call is not None and call.name == "func.call" and str(call.attributes["callee"]) == f"@{PROGRAM_ID}":
            found.setdefault(call, D // c)
    return found


def _version_last_program(func, prefix, call, last: int, anchor):
    """Wrap the ops before `anchor` (the general copy's yield) as

        if (program id == last) { the prefix's arithmetic on that id, then those ops, the id a constant }
        else { those ops }

    so the last program along the axis, whose window is short, computes its extents at compile
    time, as a launch of that one program would (canonicalization folds them: its nests get
    constant trip counts, its load shares no division); on the ISS an edge program of a grid of
    several ran 1.9-5.1x the instructions of the same program alone. Returns the inner else's
    yield (the next axis wraps what is left there)."""
    block = anchor.operation.block
    body = [op.operation for op in block.operations][:-1]
    pid = call.result
    dependent, varying = [], {pid}
    for op in prefix:
        if any(v in varying for v in op.operands):
            dependent.append(op)
            varying.update(op.results)
    with InsertionPoint(anchor), func.location:
        if_op = scf.IfOp(ir.cmpi("eq", pid, ir.const_int(last, pid.type)), [], has_else=True)
    with InsertionPoint(if_op.then_block), func.location:
        clone_with(dependent + body, {pid: ir.const_int(last, pid.type)})
        scf.YieldOp([])
    with InsertionPoint(if_op.else_block), func.location:
        inner = scf.YieldOp([])
    for op in body:
        op.move_before(inner)
    return inner
