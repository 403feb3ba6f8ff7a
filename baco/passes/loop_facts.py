"""What both hardware-loop passes (loop_ws, loop_conv_ws) read off the IR: the kernel's word on
its programs (not_a_conv), constants, loop-carried values, the one prover of index arithmetic
(Facts: structural and sign facts, and the affine normal form), the local windows of placed
blocks, and address arithmetic moved above a loop."""
from __future__ import annotations

from mlir.ir import Block, BlockArgument, BoolAttr, DenseI64ArrayAttr, IntegerAttr, MemRefType, StringAttr

from baco.dialects.baco_dialect import LOOP_CONV_ATTR
from baco.passes import irutil as ir
from baco.passes import prefetch


def not_a_conv(func) -> bool:
    """The function's kernel says its programs are not convolutions (baco.loop_conv = false)."""
    return LOOP_CONV_ATTR in func.attributes and not BoolAttr(func.attributes[LOOP_CONV_ATTR]).value


def const_value(v):
    """The integer of an arith.constant, else None."""
    owner = v.owner
    if getattr(owner, "name", None) == "arith.constant":
        try:
            return IntegerAttr(owner.attributes["value"]).value
        except ValueError:
            return None
    return None


def loop_arg(v):
    """(scf.for op, argument number) for a loop body's block argument, else None."""
    if not isinstance(v.owner, Block):
        return None
    parent = v.owner.owner
    if parent is None or parent.name != "scf.for":
        return None
    return parent.operation, BlockArgument(v).arg_number


def yielded(loop_op, n):
    """(initial value, yielded value) of iter_arg n (n ≥ 1) of `loop_op`."""
    body = loop_op.regions[0].blocks[0]
    yield_op = list(body.operations)[-1].operation
    return list(loop_op.operands)[3 + n - 1], list(yield_op.operands)[n - 1]


# ---- the prover of index arithmetic --------------------------------------------------------

def p_const(c):
    """A polynomial is a sorted tuple of (monomial: sorted atom ids, coefficient); a constant
    has the empty monomial."""
    return (((), c),) if c else ()


def _canon(d):
    return tuple(sorted((m, c) for m, c in d.items() if c))


def p_add(*ps):
    d = {}
    for p in ps:
        for m, c in p:
            d[m] = d.get(m, 0) + c
    return _canon(d)


def p_scale(p, k):
    return _canon({m: c * k for m, c in p})


def p_sub(a, b):
    return p_add(a, p_scale(b, -1))


def p_mul(a, b):
    d = {}
    for ma, ca in a:
        for mb, cb in b:
            m = tuple(sorted(ma + mb))
            d[m] = d.get(m, 0) + ca * cb
    return _canon(d)


def p_div(a, b):
    """a / b when b is one monomial dividing every monomial of a exactly, else None."""
    if len(b) != 1:
        return None
    (mb, cb), = b
    out = {}
    for m, c in a:
        rest = list(m)
        for x in mb:
            if x not in rest:
                return None
            rest.remove(x)
        if c % cb:
            return None
        out[tuple(rest)] = c // cb
    return _canon(out)


def p_value(p):
    """The constant of a constant polynomial, else None."""
    if not p:
        return 0
    if len(p) == 1 and p[0][0] == ():
        return p[0][1]
    return None


class Facts:
    """Facts about index/i64 values, over one table of the values the prover cannot see into.

    Structural and sign facts (`key`, `same`, `nonneg`, `le`, `nonpos`, `zero`): equal keys (pure
    ops on equal keys) are equal values, enough for the window equalities and zero offsets the
    GEMM kernels' boundary arithmetic produces. They hold unconditionally, so loop-ws, which
    guards nothing at run time, uses only these.

    The affine normal form (`poly`, with `coefficients`, `substitute`, `atoms_in`): values as
    polynomials over opaque atoms (function arguments, grid ids, loop variables, min/max/select
    results, floordivs and ceildivs that do not divide exactly, each keyed by its structural
    `key`). Equal polynomials are equal values provided the divisors of the nested floordivs it
    merged are positive (`divisors`): loop-conv-ws guards those at run time. Atoms keep the first
    value seen (`rep`) so a polynomial whose atoms are available can be rebuilt at another place."""

    def __init__(self):
        self._active = []       # iter_args whose key is being built (innermost last)
        self.ids, self.rep, self.key_of = {}, {}, {}
        self.divisors = []          # polynomials a nested floordiv merge assumed positive

    def key(self, v):
        """A hashable expression: equal keys mean equal values (pure ops on equal keys;
        an iter_arg is its loop, initial value and update with itself as ("self",))."""
        c = const_value(v)
        if c is not None:
            return ("c", c)
        arg = loop_arg(v)
        if arg is not None:
            loop_op, n = arg
            if n == 0:
                return ("iv", loop_op)
            if self._active and self._active[-1] == (loop_op, n):
                return ("self",)
            if (loop_op, n) in self._active:
                return ("cycle", loop_op, n)
            init, nxt = yielded(loop_op, n)
            self._active.append((loop_op, n))
            try:
                return ("iter", loop_op, self.key(init), self.key(nxt))
            finally:
                self._active.pop()
        owner = v.owner
        if isinstance(owner, Block) or not prefetch.is_pure(owner) or owner.name.startswith("memref."):
            return ("value", v)
        attrs = str(owner.attributes["predicate"]) if "predicate" in owner.attributes else \
            str(owner.attributes["callee"]) if "callee" in owner.attributes else ""
        return (owner.name, attrs, tuple(self.key(o) for o in owner.operands))

    def same(self, a, b) -> bool:
        if isinstance(a, int) or isinstance(b, int):
            return (a if isinstance(a, int) else const_value(a)) == (b if isinstance(b, int) else const_value(b))
        return self.key(a) == self.key(b)

    def nonneg(self, v, assumed=()) -> bool:
        c = const_value(v)
        if c is not None:
            return c >= 0
        arg = loop_arg(v)
        if arg is not None:
            loop_op, n = arg
            if n == 0:
                return self.nonneg(list(loop_op.operands)[0], assumed)
            if arg in assumed:
                return True
            init, nxt = yielded(loop_op, n)
            return self.nonneg(init, assumed) and self.nonneg(nxt, assumed + (arg,))
        owner = v.owner
        if isinstance(owner, Block):
            return False
        name, ops = owner.name, list(owner.operands)
        if name == "func.call":
            return str(owner.attributes["callee"]) in prefetch.GRID_CALLS
        if name in ("arith.index_cast", "arith.extui"):
            return self.nonneg(ops[0], assumed)
        if name in ("arith.addi", "arith.muli", "arith.divsi", "arith.ceildivsi", "arith.minsi"):
            return all(self.nonneg(o, assumed) for o in ops)
        if name == "arith.maxsi":
            return any(self.nonneg(o, assumed) for o in ops)
        return False

    def le(self, a, b) -> bool:
        """a ≤ b provably."""
        ca, cb = const_value(a), const_value(b)
        if ca is not None and cb is not None:
            return ca <= cb
        if ca is not None and ca <= 0 and self.nonneg(b):
            return True
        if self.same(a, b):
            return True
        owner = a.owner
        if isinstance(owner, Block):
            return False
        ops = list(owner.operands)
        if owner.name == "arith.minsi":
            return any(self.le(o, b) for o in ops)
        if owner.name == "arith.maxsi":
            return all(self.le(o, b) for o in ops)
        return False

    def nonpos(self, v) -> bool:
        c = const_value(v)
        if c is not None:
            return c <= 0
        owner = v.owner
        if isinstance(owner, Block):
            return False
        ops = list(owner.operands)
        if owner.name == "arith.subi":
            return self.le(ops[0], ops[1])
        if owner.name == "arith.minsi":
            return any(self.nonpos(o) for o in ops)
        if owner.name == "arith.maxsi":
            return all(self.nonpos(o) for o in ops)
        return False

    def zero(self, v) -> bool:
        """v is provably 0: e.g. the lead clamp(min(max(x, 0), limit) − x, 0, B) of a window
        at a non-negative offset x (irutil.checked_window)."""
        if isinstance(v, int):
            return v == 0
        return self.nonneg(v) and self.nonpos(v)

    # ---- the affine normal form

    def atom(self, key, value=None):
        """The polynomial of the atom `key` (a new id on first sight; `value` its first value)."""
        if key not in self.ids:
            self.ids[key] = len(self.ids)
            self.key_of[self.ids[key]] = key
        i = self.ids[key]
        if value is not None:
            self.rep.setdefault(i, value)
        return (((i,), 1),)

    def poly(self, v):
        """v as a polynomial (the affine normal form)."""
        if isinstance(v, int):
            return p_const(v)
        c = const_value(v)
        if c is not None:
            return p_const(c)
        owner = v.owner
        if isinstance(owner, Block):
            return self.atom(("value", self.key(v)), v)
        name, ops = owner.name, list(owner.operands)
        if name in ("arith.index_cast", "arith.extsi", "arith.index_castui", "arith.extui"):
            return self.poly(ops[0])
        if name == "arith.addi":
            return p_add(self.poly(ops[0]), self.poly(ops[1]))
        if name == "arith.subi":
            return p_sub(self.poly(ops[0]), self.poly(ops[1]))
        if name == "arith.muli":
            return p_mul(self.poly(ops[0]), self.poly(ops[1]))
        if name in ("arith.floordivsi", "arith.ceildivsi", "arith.divsi"):
            num, den = self.poly(ops[0]), self.poly(ops[1])
            q = p_div(num, den) if p_value(den) != 0 else None
            if q is not None:
                return q
            kind = "cdiv" if name == "arith.ceildivsi" else "fdiv"
            if kind == "fdiv" and name == "arith.floordivsi" and len(num) == 1 and num[0][1] == 1 \
                    and len(num[0][0]) == 1:
                inner = self.key_of[num[0][0][0]]
                if inner[0] == "fdiv":      # floordiv(floordiv(x, a), b) = floordiv(x, a·b) for a, b > 0
                    self.divisors += [inner[2], den]
                    return self.atom(("fdiv", inner[1], p_mul(inner[2], den)), v)
            if name == "arith.divsi":
                return self.atom(("value", self.key(v)), v)
            return self.atom((kind, num, den), v)
        return self.atom(("value", self.key(v)), v)

    def coefficients(self, p, variables):
        """{variable atom id or None: coefficient polynomial} of a p linear in `variables`
        (no monomial with two of them), else None."""
        out = {}
        for m, c in p:
            vs = [x for x in m if x in variables]
            if len(vs) > 1:
                return None
            v = vs[0] if vs else None
            rest = list(m)
            if v is not None:
                rest.remove(v)
            out.setdefault(v, {})
            out[v][tuple(rest)] = out[v].get(tuple(rest), 0) + c
        return {v: _canon(d) for v, d in out.items()}

    def substitute(self, p, table):
        """p with atom ids replaced by polynomials."""
        out = ()
        for m, c in p:
            term = p_const(c)
            for x in m:
                term = p_mul(term, table.get(x, (((x,), 1),)))
            out = p_add(out, term)
        return out

    def atoms_in(self, p):
        """The atom ids of p, and of the polynomials inside its floordiv and ceildiv atoms."""
        found = set()
        for m, _ in p:
            for x in m:
                found.add(x)
                key = self.key_of[x]
                if key[0] in ("fdiv", "cdiv"):
                    found |= self.atoms_in(key[1]) | self.atoms_in(key[2])
        return found


def subview_parts(view):
    """(offsets, sizes) of a memref.subview result: ints (static) or Values."""
    op = view.owner
    dyn = list(op.operands)[1:]
    out = []
    for name in ("static_offsets", "static_sizes"):
        static = list(DenseI64ArrayAttr(op.attributes[name]))
        vals = []
        for s in static:
            vals.append(dyn.pop(0) if s == ir.DYN else s)
        out.append(vals)
    return out


# ---- placed blocks and their windows ------------------------------------------------------

def block_space(op):
    return StringAttr(op.attributes["gemmini.space"]).value if "gemmini.space" in op.attributes else None


def local_window(view):
    """(offsets, sizes) of a local subview of a placed block (or the whole block), or None
    for another view."""
    if getattr(view.owner, "name", None) == "memref.alloc":
        return [0] * len(MemRefType(view.type).shape), list(MemRefType(view.type).shape)
    if getattr(view.owner, "name", None) != "memref.subview":
        return None
    src = view.owner.operands[0].owner
    if getattr(src, "name", None) != "memref.alloc":
        return None
    return subview_parts(view)


def subview_ops(values):
    """The subview ops among the defining ops of local views (a whole block is its alloc)."""
    return [v.owner.operation for v in values if v.owner.name == "memref.subview"]


# ---- moving address arithmetic ------------------------------------------------------------

def hoist_above(loop_op, tail, fused: bool = False) -> bool:
    """Move the pure ops after `loop_op` that the ops of `tail` (after the loop, about to be issued
    before it or inside it) depend on to just before the loop: they only compute addresses. False,
    with nothing moved, if one of them is not pure or is the loop itself, or is an allocation: a
    block the tail reads that something left after the loop may write. With `fused` (the tail is a
    store the lowering issues in the loop's last iteration, with the epilogue that writes its
    blocks), the blocks' allocations move too, and so do the boundary checks between the loop and
    the tail (the store's window checks, which must still fail before anything is stored)."""
    top = [o.operation for o in loop_op.block.operations]
    at = {op: i for i, op in enumerate(top)}
    i_loop = at[loop_op]
    need = set()
    if fused:       # the tail's ops are in the loop's block
        need = {op for op in top[i_loop + 1:max(at[op] for op in tail)] if prefetch.is_boundary_check(op)}
    stack = [v for r in list(tail) + list(need) for o in [r] + ir.walk_ops(r) for v in o.operands]
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Block):
            continue
        owner = owner.operation
        if owner == loop_op:
            return False
        if owner in at and at[owner] > i_loop and owner not in need and owner not in tail:
            if not prefetch.is_pure(owner) or (owner.name == "memref.alloc" and not fused):
                return False
            need.add(owner)
            stack.extend(owner.operands)
    for op in sorted(need, key=at.get):
        op.move_before(loop_op)
    return True
