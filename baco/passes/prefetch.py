"""Software pipelining of a kernel loop's loads (the double-buffering half of
the lowering).

Gemmini dispatches commands in program order into small reservation stations
(8 loads, 16 executes, 4 stores): a block of mvins written before a step's
computes holds those computes back until the mvins have issued. So a loop whose
blocks are double-buffered (placement gave every block allocated in its body
two homes, alternating with the iteration's parity) is rewritten after
lowering so that the next iteration's mvins are spread through this
iteration's computes:

    if (lb < ub) { config_ld…; loads(lb) }                    // prologue
    for k:
        next = k + step
        if (next < ub) { next's arithmetic; config_ld… }      // one load slot per block copy
        for outer in compute nest (n iterations):             // e.g. WS: per column of C
            if (next < ub) loads(next)[share(outer) : share(outer + 1)]   per block copy
            …computes of k…
        if (next < ub) loads(next)[share(n) : L]              // what an empty nest left

where share(j) = ⌈(j·L − i·n/S)/n⌉ (in [0, L] for 0 <= j <= n) for block copy i of S: mvin p of a copy goes
to outer step ⌊(p + i/S)·n/L⌋, so a long copy is spread evenly and the many short copies of
a 3-D load (a mvin or two per slice) are staggered over the steps instead of all landing in
the first one, where they held the computes back behind a full load reservation station.

A loop that runs once (a program whose K fits one block) runs a copy of its body instead
(_single_step_copy).

`loads(x)` (after the iteration's boundary checks) are the body's load streams (each block copy lowered as a flat
loop of L mvins, `STREAM`) with their address and extent arithmetic
recomputed for iteration x (the induction variable and iter_args replaced by
the next iteration's values). Every block has its own config_ld slot
(mvin / mvin2 / mvin3; the slices of a 3-D load share their block's), so the streams interleave.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir.dialects import scf
from mlir.ir import InsertionPoint

from baco.gemmini.abi import BOUNDARY_ERROR, NUM_PROGRAMS, PROGRAM_ID, RUNTIME_ERROR
from baco.passes import irutil as ir
from baco.passes.irutil import alloc_of

STREAM = "gemmini.load_stream"      # flat scf.for of one block copy's mvins
COMPUTE = "gemmini.compute_nest"    # outer loop of a lowered matmul (or each copy of it under an scf.if)
SLOTS = 3
PURE_MEMREF = ("memref.subview", "memref.collapse_shape", "memref.extract_strided_metadata", "memref.extract_aligned_pointer_as_index",
               "memref.reinterpret_cast", "memref.alloc")
GRID_CALLS = (f"@{PROGRAM_ID}", f"@{NUM_PROGRAMS}")


def is_pure(op) -> bool:
    if op.name.startswith("arith.") or op.name in PURE_MEMREF:
        return True
    return op.name == "func.call" and str(op.attributes["callee"]) in GRID_CALLS


def is_boundary_check(op) -> bool:
    """`scf.if (bad window) { baco_boundary_error(line, col) }` from a boundary-checked access, or
    any other run-time check `scf.if (failed) { baco_runtime_error(code, line, col) }` (a zero
    divisor or step, a pooling field): it writes nothing the kernel reads. Canonicalization may
    merge the guards of one condition (two divisions by one value) into one scf.if of several calls."""
    if op.name != "scf.if" or len(op.regions[1].blocks):
        return False
    *calls, end = [o.operation for o in op.regions[0].blocks[0].operations]
    return bool(calls) and end.name == "scf.yield" and all(
        c.name == "func.call" and str(c.attributes["callee"]) in (f"@{BOUNDARY_ERROR}", f"@{RUNTIME_ERROR}")
        for c in calls)


def body_ops(loop_op):
    return [o.operation for o in loop_op.regions[0].blocks[0].operations]


def distinct_targets(loop_op) -> bool:
    """Before lowering: every load of the loop writes its own block, so the prologue may
    interleave their streams (a zero fill and the copy over it must stay in order)."""
    found = loads_and_targets(loop_op)
    return found is not None and len({t for _, t in found}) == len(found)


def loads_and_targets(loop_op):
    """Before lowering: the body's loads (DRAM copies and zero fills into its blocks), each
    with the block (alloc) it writes, or None when the body does anything else than load its
    own double-buffered blocks and compute on them (then loading early could change a result)."""
    allocs = [op for op in body_ops(loop_op) if op.name == "memref.alloc"]
    if not allocs or any("gemmini.copy_rows" not in a.attributes for a in allocs):
        return None
    loads, computes = [], 0
    for op in body_ops(loop_op):
        if is_pure(op) or is_boundary_check(op) or op.name == "scf.yield":
            continue
        if op.name == "linalg.matmul":
            computes += 1
            continue
        if op.name in ("linalg.fill", "linalg.map"):
            target = alloc_of(op.operands[-1] if op.name == "linalg.fill" else op.operands[0])
        elif op.name == "memref.copy" and alloc_of(op.operands[0]) is None:
            target = alloc_of(op.operands[1])
        else:
            return None
        if target is None or target.operation.parent.operation != loop_op:
            return None
        loads.append((op, target.operation))
    return loads if computes == 1 and loads else None


def slot_keys(loop_op) -> list | None:
    """(load, key) per load: loads with one key share a config_ld slot. The slices of a 3-D
    load (one row stride) share their block's; every other load has its own."""
    found = loads_and_targets(loop_op)
    if found is None:
        return None
    return [(op, target if "gemmini.slice_rows" in target.attributes else op) for op, target in found]


def pipelinable(loop_op) -> bool:
    keys = slot_keys(loop_op)
    return keys is not None and len({k for _, k in keys}) <= SLOTS


def load_slots(loop_op) -> dict:
    """Copy/fill op -> its config_ld slot (slot_keys)."""
    order = []
    for _, key in slot_keys(loop_op):
        if key not in order:
            order.append(key)
    return {op: order.index(key) for op, key in slot_keys(loop_op)}


def nested(op) -> list:
    """`op` and every op nested in it, in pre-order (one walk, none for an op without regions: a
    generator recursing through the bindings' regions and blocks cost most of the cloning's time)."""
    return [op] + ir.walk_ops(op) if len(op.regions) else [op]


def clone_with(ops, mapping):
    """Clone `ops` (in order) at the current insertion point, replacing operands
    (also inside nested regions) through `mapping` (Value -> Value), which grows."""
    clones = []
    for op in ops:
        new = op.clone().operation
        for o_old, o_new in zip(nested(op), nested(new)):
            for i, v in enumerate(o_old.operands):
                if v in mapping:
                    o_new.operands[i] = mapping[v]
        for r_old, r_new in zip(op.results, new.results):
            mapping[r_old] = r_new
        clones.append(new)
    return clones


def slice_of(roots, body):
    """The pure ops of `body` the roots (and their nested ops) depend on, in body
    order; None if one is not pure."""
    pos = {op: i for i, op in enumerate(body)}
    need, stack = set(), [v for r in roots for o in nested(r) for v in o.operands]
    while stack:
        owner = stack.pop().owner
        if not hasattr(owner, "name"):      # a block argument
            continue
        owner = owner.operation
        if owner in need or owner not in pos:
            continue
        if not is_pure(owner):
            return None
        need.add(owner)
        stack.extend(owner.operands)
    return sorted(need, key=pos.get)


def when(cond, build):
    if_op = scf.IfOp(cond)
    with InsertionPoint(if_op.then_block):
        build()
        scf.YieldOp([])


def stream_slice(stream, mapping, lo, hi):
    """Clone load stream `stream` (a flat scf.for) over [lo, hi) (index values)."""
    (new,) = clone_with([stream], mapping)
    new.operands[0] = lo
    new.operands[1] = hi


@dataclass
class _Pipelinable:
    """A lowered loop's parts that pipeline_loads moves: the config_lds and load streams (the
    roots), the boundary checks, the one compute nest, and the pure ops they and the carried
    values depend on."""
    body: list
    yield_op: object
    configs: list
    streams: list
    checks: list
    nest: object            # the compute nest's body op: its outer loop, or an scf.if of copies of it
    outer_loops: list       # the nest's outer loop (each copy's; one trip count)
    deps: list
    carried_deps: list

    @property
    def roots(self):
        return self.configs + self.streams

    def in_order(self, ops):
        return sorted(ops, key=self.body.index)


def pipeline_loads(loop_op, interleave: bool = False) -> bool:
    """Rewrite a lowered pipelinable loop (see module doc); False if its shape is not the expected one.
    `interleave` (the streams write distinct blocks, distinct_targets): the prologue issues the
    first mvin of every stream before the rest of any, so the first compute, which needs the
    first tile of each operand, does not wait for a whole block of the other (e.g. all of
    a tall A before B's single tile)."""
    loop = _pipelinable(loop_op)
    if loop is None:
        return False
    _prologue(loop_op, loop, interleave)
    nxt = _next_iteration(loop_op, loop)
    _spread_loads(loop_op, loop, nxt)
    after = loop.body[loop.body.index(loop.nest) + 1]
    with InsertionPoint(after), loop_op.location:             # the rest when the nest ran 0 times
        def rest_of_loads():
            for i, (s, length) in enumerate(zip(loop.in_order(loop.streams), nxt.lengths)):
                stream_slice(s, nxt.mapping, _shares(i, len(nxt.lengths), length, nxt.n_outer, nxt.n_steps, 0)[0], length)
        when(nxt.has_next, rest_of_loads)
    for op in reversed(loop.roots):
        op.erase()
    _single_step_copy(loop_op)
    return True


def _single_step_copy(loop_op):
    """A program whose loop runs once (K in one block) runs a copy of the body instead:

        if (lb + step >= ub) { if (lb < ub) body(lb) } else { the loop }

    so the loop's invariants, which LLVM hoists before it (those of every nest copy and of
    the next step's loads, none of which the only step runs), are computed only where the loop
    runs; in the copy the next step's guard and the last-iteration tests repeat the outer
    condition, which LLVM folds. 128x256x256 at 32/32/256 (one K step): 17.44 -> 14.95 RISC-V
    instructions a command; at 64/128/64 (four) 12.62 -> 12.74 (the larger function's
    register allocation)."""
    lb, ub, step, *inits = list(loop_op.operands)
    iv, *iter_args = list(loop_op.regions[0].blocks[0].arguments)
    types = [r.type for r in loop_op.results]
    body = body_ops(loop_op)
    with InsertionPoint(loop_op), loop_op.location:
        once = scf.IfOp(ir.cmpi("sge", ir.binop("addi", lb, step), ub), types, has_else=True)
    for old, new in zip(loop_op.results, once.results):
        old.replace_all_uses_with(new)
    with InsertionPoint(once.then_block), loop_op.location:
        runs = scf.IfOp(ir.cmpi("slt", lb, ub), types, has_else=True)
        scf.YieldOp(list(runs.results))
    with InsertionPoint(runs.then_block), loop_op.location:
        mapping = {iv: lb, **dict(zip(iter_args, inits))}
        clone_with(body[:-1], mapping)
        scf.YieldOp([mapping.get(v, v) for v in body[-1].operands])
    with InsertionPoint(runs.else_block), loop_op.location:
        scf.YieldOp(inits)
    with InsertionPoint(once.else_block), loop_op.location:
        anchor = scf.YieldOp(list(loop_op.results))
    loop_op.move_before(anchor)


def _pipelinable(loop_op) -> _Pipelinable | None:
    """The loop's parts, or None if its shape is not the expected one: loads, then the one
    compute nest, then only what follows it (e.g. the last iteration's stores)."""
    body = body_ops(loop_op)
    yield_op = body[-1]
    configs = [op for op in body if op.name == "instgem.config_ld"]
    streams = [op for op in body if STREAM in op.attributes]
    nests = [op for op in body if any(COMPUTE in o.attributes for o in nested(op))]
    checks = [op for op in body if is_boundary_check(op)]
    roots = configs + streams
    if not streams or len(nests) != 1:
        return None
    nest = nests[0]
    outer_loops = [o for o in nested(nest) if COMPUTE in o.attributes]
    if any(list(o.operands)[:3] != list(outer_loops[0].operands)[:3] for o in outer_loops):
        return None
    others = [op for op in body if op not in roots + checks and op != yield_op and not is_pure(op)]
    if body.index(nest) < max(body.index(r) for r in roots) or \
            any(body.index(op) < body.index(nest) for op in others):
        return None
    deps = slice_of(roots + checks, body)
    carried_deps = slice_of([yield_op], body)
    if deps is None or carried_deps is None:
        return None
    return _Pipelinable(body, yield_op, configs, streams, checks, nest, outer_loops, deps, carried_deps)


def _prologue(loop_op, loop: _Pipelinable, interleave: bool):
    """Iteration lb's checks, configs and loads, before the loop."""
    lb, ub = list(loop_op.operands)[:2]
    inits = list(loop_op.operands)[3:]
    iv, *iter_args = list(loop_op.regions[0].blocks[0].arguments)
    with InsertionPoint(loop_op), loop_op.location:
        mapping = {iv: lb, **dict(zip(iter_args, inits))}
        if interleave:
            def prologue():
                streams = loop.in_order(loop.streams)
                clone_with(loop.deps + loop.checks + loop.in_order(loop.configs), mapping)
                lengths = [mapping.get(s.operands[1], s.operands[1]) for s in streams]
                heads = [ir.binop("minsi", ir.const_index(1), n) for n in lengths]
                for s, head in zip(streams, heads):
                    stream_slice(s, mapping, ir.const_index(0), head)
                for s, head, n in zip(streams, heads, lengths):
                    stream_slice(s, mapping, head, n)
            when(ir.cmpi("slt", lb, ub), prologue)
        else:
            when(ir.cmpi("slt", lb, ub), lambda: clone_with(loop.deps + loop.checks + loop.in_order(loop.roots),
                                                            mapping))


@dataclass
class _NextIteration:
    mapping: dict       # the body's values -> iteration k + step's
    has_next: object    # i1: iteration k + step runs
    n_outer: object     # the nest's outer trip count
    lengths: list       # its streams' lengths, in body order
    n_steps: object     # the outer steps they are spread over (at least 1)


def _next_iteration(loop_op, loop: _Pipelinable) -> _NextIteration:
    """Before the nest: iteration k + step's arithmetic, and its checks then configs (a bad
    window errors before its loads) when it runs."""
    _, ub, step = list(loop_op.operands)[:3]
    iv, *iter_args = list(loop_op.regions[0].blocks[0].arguments)
    nest, yield_op = loop.nest, loop.yield_op
    with InsertionPoint(nest), loop_op.location:
        carried = {}
        clone_with([op for op in loop.carried_deps if loop.body.index(op) > loop.body.index(nest)], carried)
        next_iv = ir.binop("addi", iv, step)
        mapping = {iv: next_iv, **dict(zip(iter_args, [carried.get(v, v) for v in yield_op.operands]))}
        has_next = ir.cmpi("slt", next_iv, ub)
        _next_deps(loop, mapping, has_next)
        outer = loop.outer_loops[0]
        n_outer = ir.create("arith.subi", operands=[outer.operands[1], outer.operands[0]],
                            results=[ir.index()]).result
        lengths = [mapping.get(s.operands[1], s.operands[1]) for s in loop.in_order(loop.streams)]
        n_steps = ir.binop("maxsi", n_outer, ir.const_index(1))
    return _NextIteration(mapping, has_next, n_outer, lengths, n_steps)


def _next_deps(loop: _Pipelinable, mapping: dict, has_next):
    """Iteration k + step's arithmetic, checks and configs. The arithmetic that depends on the
    iteration (its induction variable, its carried values) goes with the checks and configs
    under one scf.if (has_next), so the loop's last step (a program's only one when K fits one
    block) skips it; the values of it the load streams read (integers and indices: their
    commands' operands) are the if's results (zeros when it does not run: they are read only
    under has_next). The rest is the same every iteration and stays unconditional, where LLVM
    hoists it out of the loop: under has_next too, or hoisted under `if (lb + step < ub)` before
    the loop, it ran more instructions (14.15 and 14.28 a command instead of 13.81 at
    64/128/64 for 128x256x256, measured before _single_step_copy). `mapping` gains the values."""
    varying, steady, varying_deps = set(mapping), [], []
    for op in loop.deps:
        if any(v in varying for o in nested(op) for v in o.operands):
            varying.update(op.results)
            varying_deps.append(op)
        else:
            steady.append(op)
    clone_with(steady, mapping)
    used = []
    for stream in loop.in_order(loop.streams):
        for o in nested(stream):
            used += [v for v in o.operands if v in varying and v not in mapping and v not in used]
    if_op = scf.IfOp(has_next, [v.type for v in used], has_else=True)
    with InsertionPoint(if_op.then_block):
        inner = dict(mapping)
        clone_with(varying_deps + loop.checks + loop.in_order(loop.configs), inner)
        scf.YieldOp([inner[v] for v in used])
    with InsertionPoint(if_op.else_block):
        scf.YieldOp([ir.const_int(0, v.type) for v in used])
    mapping.update(zip(used, if_op.results))


def _shares(i, n_streams, length, j, n_steps, count=1):
    """Where outer steps j .. j + count start their part of stream i: mvin p goes to step
    floor((p + i/S)·n/length) for S streams and n steps, so the streams are spread evenly through
    the steps, and several short streams (the slices of a 3-D load) are staggered, not all in
    step 0. Step j's part starts at ceil((j·L·S − i·n)/(n·S)), computed as the truncating division
    of j·L·S + (n·S − 1 − i·n): that numerator is >= 0 (i < S, n >= 1, j, L >= 0), so the
    division is the floor, and for j <= n the start lies in [0, L] (for L < 0 step n's start is
    >= L: its slice is empty), so no clamp is needed. Consecutive steps share the numerator,
    a step apart by L·S."""
    den = ir.binop("muli", n_steps, ir.const_index(n_streams))
    step = ir.binop("muli", length, ir.const_index(n_streams))
    num = ir.binop("addi", ir.binop("muli", j, step),
                   ir.binop("subi", ir.binop("subi", den, ir.const_index(1)), ir.binop("muli", ir.const_index(i), n_steps)))
    starts = [ir.binop("divsi", num, den)]
    for _ in range(count):
        num = ir.binop("addi", num, step)
        starts.append(ir.binop("divsi", num, den))
    return starts


def _spread_loads(loop_op, loop: _Pipelinable, nxt: _NextIteration):
    """At the top of the body of the nest's outer loop (of each copy): iteration k + step's
    loads, a slice per outer step."""
    for outer in loop.outer_loops:
        nest_block = outer.regions[0].blocks[0]
        with InsertionPoint.at_block_begin(nest_block), loop_op.location:
            j = ir.binop("subi", nest_block.arguments[0], outer.operands[0])
            streams = loop.in_order(loop.streams)

            def slices(j=j):
                # an empty stream (e.g. the zero rows of a window starting at its block's first row)
                # skips its share arithmetic: one compare instead of two divisions
                for i, (s, length) in enumerate(zip(streams, nxt.lengths)):
                    when(ir.cmpi("sgt", length, ir.const_index(0)), lambda i=i, s=s, length=length: stream_slice(
                        s, nxt.mapping, *_shares(i, len(streams), length, j, nxt.n_steps)))
            when(nxt.has_next, slices)
