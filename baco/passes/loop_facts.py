"""What both hardware-loop passes (loop_ws, loop_conv_ws) read off the IR: constants,
loop-carried values, the structural Facts prover of index arithmetic, the local windows of
placed blocks, and address arithmetic moved above a loop."""
from __future__ import annotations

from mlir.ir import Block, BlockArgument, DenseI64ArrayAttr, IntegerAttr, MemRefType, StringAttr

from baco.passes import irutil as ir
from baco.passes import prefetch


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


class Facts:
    """Structural equality and sign facts about index/i64 values: enough to prove the
    window equalities and zero offsets the GEMM kernels' boundary arithmetic produces."""

    def __init__(self):
        self._active = []       # iter_args whose key is being built (innermost last)

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
