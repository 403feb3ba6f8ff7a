"""baco → linalg/tensor/memref.

Pointer analysis: every `!baco.block_ptr` is resolved to (strided 2-D memref
view of its base buffer, starting at the base's element offset (`ptr + n`),
row offset, column offset). Block pointers carried by
`scf.for` become two index iter_args (the view is loop-invariant: a carried
pointer must be an `advance` chain of itself). Loads become subview → tensor →
zero pad to the block shape; `dot` becomes `linalg.matmul`; an elementwise
chain (scale / relu / convert) feeding a store becomes one `linalg.generic`
tagged `gemmini.epilogue` (what an accumulator mvout computes); `max_pool2d` of
such a chain becomes a reduction `linalg.generic` tagged `gemmini.max_pool` over
that epilogue's pixels (what a pooled mvout computes); stores become
`materialize_in_destination` into the clipped window. Written as rewrite patterns, one per op,
over the shared driver (baco.passes.rewrite).
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir.ir import (AffineExpr, AffineMap, AffineMapAttr, ArrayAttr, Attribute, Block,
                     BoolAttr, DictAttr, F32Type, InsertionPoint, IntegerType,
                     RankedTensorType, ShapedType, Type)

from baco.errors import NEGATIVE_COLUMN_OFFSET, POOLED_NEGATIVE_ROW, RUNTIME_ERRORS
from baco.gemmini.abi import NUM_PROGRAMS, PROGRAM_ID
from baco.passes import irutil as ir
from baco.passes.irutil import fail
from baco.passes.rewrite import IN_ORDER, apply_patterns

EPILOGUE_OPS = ("baco.scale", "baco.relu", "baco.convert")
# the BACO ops lowered by a pattern of their own (the epilogue ops are folded by their users)
BACO_OPS = ("program_id", "num_programs", "offset_ptr", "make_block_ptr", "advance", "load", "store",
            "zeros", "dot", "add", "max_pool")


@dataclass
class BlockPtr:
    view: object           # memref<?x?xT, strided<[?, ?]>> of the whole 2-D tensor
    shape: list            # index values
    offsets: list          # index values
    block_shape: list      # ints
    elem: Type
    root: object           # the make_block_ptr op (identity for loop checks)


@dataclass
class RewrittenLoop:
    anchor: object         # the new loop's placeholder terminator until its yield is built
    arg_ptrs: dict         # carried iter_arg index -> the BlockPtr of its initial value
    casts: list            # the casts standing for the carried pointers inside the loop


def _blk_type(t: Type):
    """The tensor parameter of !baco.block_ptr<tensor<…>>."""
    s = str(t)
    return RankedTensorType(Type.parse(s[len("!baco.block_ptr<"):-1]))


def _is_bp(t: Type) -> bool:
    return str(t).startswith("!baco.block_ptr")


class BacoToLinalg:
    """The lowering as a pattern set (one pattern per BACO op, plus scf.for / scf.yield for
    loops that carry block pointers) run top-down by the in-order driver: the pointer analysis
    flows from producers to users and from a loop into its body. A lowered BACO op is only
    marked dead (later ops still read the pointer analysis through its results) and erased,
    users first, once every op is lowered."""

    def __init__(self):
        self.bp: dict = {}      # Value -> BlockPtr (values hash by identity)
        self.ptr_offset: dict = {}   # offset_ptr Value -> (base argument, element offset Value)
        self.dead: dict = {}    # lowered Operation -> None, in the order they were lowered
        self.loops: dict = {}   # scf.for carrying block pointers -> its RewrittenLoop

    # ---- driver -----------------------------------------------------------
    def patterns(self) -> dict:
        """op name -> pattern; scale/relu/convert (EPILOGUE_OPS) have none: the store, dot,
        max_pool or add reading them folds them in and marks them dead."""
        lowerings = {f"baco.{name}": getattr(self, f"lower_baco_{name}") for name in BACO_OPS}
        lowerings["scf.for"] = self.lower_scf_for
        patterns = {name: self._once(lower) for name, lower in lowerings.items()}
        patterns["scf.yield"] = self.lower_scf_yield
        return patterns

    def _once(self, lower):
        """A pattern that lowers an op once (the driver sweeps again after a change): False
        once the op is lowered, or when `lower` leaves it as it is (returns False)."""
        def pattern(op, _rewriter):
            if op in self.dead or op in self.loops:       # lowered, or a loop waiting for its yield
                return False
            return lower(op) is not False
        return pattern

    def run(self, module_op):
        apply_patterns(module_op, self.patterns(), IN_ORDER)
        # erase users before producers: repeat until every dead op is gone
        dead = list(self.dead)
        while dead:
            unused = [op for op in dead if all(not list(r.uses) for r in op.results)]
            if not unused:
                raise fail("internal: lowered baco op still has uses", dead[0])
            for op in unused:
                dead.remove(op)
                op.erase()

    def kill(self, op):
        self.dead[op.operation] = None

    # ---- block pointers ----------------------------------------------------
    def lower_baco_offset_ptr(self, op):
        """`ptr + n`: remembered as (base argument, element offset) for make_block_ptr."""
        base, offset = self.ptr_offset.get(op.operands[0], (op.operands[0], None))
        n = op.operands[1]
        self.ptr_offset[op.result] = (base, n if offset is None else ir.binop("addi", offset, n))
        self.kill(op)

    def lower_baco_make_block_ptr(self, op):
        base, offset = self.ptr_offset.get(op.operands[0], (op.operands[0], None))
        rest = list(op.operands)[1:]
        n = len(rest) // 3
        shape, strides, offsets = rest[:n], rest[n:2 * n], rest[2 * n:]
        if n not in (2, 3):
            raise fail(f"block pointers must be 2-D for Gemmini, or 3-D to be loaded as slices (got {n}-D)", op)
        blk = _blk_type(op.result.type)
        elem = ShapedType(base.type).element_type
        if str(elem) != str(blk.element_type):
            raise fail(f"block element type {blk.element_type} does not match pointer type {elem}", op)
        view = ir.create(
            "memref.reinterpret_cast", operands=[base, offset or ir.const_index(0), *shape, *strides],
            results=[ir.strided_type(elem, n)],
            attributes={"operandSegmentSizes": Attribute.parse(f"array<i32: 1, 1, {n}, {n}>"),
                        "static_offsets": ir.dense_i64([ir.DYN]),
                        "static_sizes": ir.dense_i64([ir.DYN] * n),
                        "static_strides": ir.dense_i64([ir.DYN] * n)}).result
        self.bp[op.result] = BlockPtr(view, shape, offsets, list(blk.shape), elem, op)
        self.kill(op)

    def lower_baco_advance(self, op):
        src = self.bp[op.operands[0]]
        deltas = list(op.operands)[1:]
        offsets = [ir.binop("addi", o, d) for o, d in zip(src.offsets, deltas)]
        self.bp[op.result] = BlockPtr(src.view, src.shape, offsets, src.block_shape, src.elem, src.root)
        self.kill(op)

    def lower_scf_for(self, op):
        """A loop carrying block pointers becomes a loop carrying each one's two offsets: its
        body moves into the new loop (before a placeholder terminator) and is lowered there
        next; its yield (lower_scf_yield) is rebuilt once the body is lowered. A carried
        pointer, inside the loop and as its result, is materialized as an
        unrealized_conversion_cast of its offsets (dead, erased with the lowered BACO ops), so
        nothing uses the old loop and the yield's pattern erases it."""
        lb, ub, step, *inits = list(op.operands)
        body = op.regions[0].blocks[0]
        carried = [i for i, v in enumerate(inits) if _is_bp(v.type)]
        if not carried:
            return False
        new_inits = []
        for i, v in enumerate(inits):
            new_inits += self.bp[v].offsets if i in carried else [v]
        from mlir.dialects import scf
        new_for = scf.ForOp(lb, ub, step, new_inits)
        new_body = new_for.body
        old_yield = body.operations[len(body.operations) - 1].operation
        with InsertionPoint(new_body):
            anchor = ir.create("scf.yield", operands=[], loc=old_yield.location)
        for inner in list(body.operations):
            inner = inner.operation
            if inner == old_yield:
                continue
            inner.move_before(anchor)
        old_args = list(body.arguments)
        old_args[0].replace_all_uses_with(new_for.induction_variable)
        arg_ptrs = {i: self.bp[inits[i]] for i in carried}
        casts = self._carry(old_args[1:], list(new_body.arguments)[1:], arg_ptrs,
                            InsertionPoint.at_block_begin(new_body))
        self._carry(list(op.results), list(new_for.results), arg_ptrs, InsertionPoint(op))
        self.loops[op] = RewrittenLoop(anchor, arg_ptrs, casts)

    def _carry(self, old_values, new_values, arg_ptrs, where) -> list:
        """Replace the old loop's iter_args or results (`old_values`) by the new loop's: a used
        carried pointer's by a cast of its two offsets that the pointer analysis maps to them
        (the casts, marked dead, are returned). A cast is used until the BACO ops reading it
        are erased after the driver, which would otherwise erase it as trivially dead."""
        casts = []
        pos = 0
        for i, old in enumerate(old_values):
            if i not in arg_ptrs:
                old.replace_all_uses_with(new_values[pos])
                pos += 1
                continue
            init, offsets = arg_ptrs[i], new_values[pos:pos + 2]
            pos += 2
            if not list(old.uses):
                continue
            with where:
                cast = ir.create("builtin.unrealized_conversion_cast", operands=offsets, results=[old.type])
            self.bp[cast.result] = BlockPtr(init.view, init.shape, offsets, init.block_shape, init.elem, init.root)
            old.replace_all_uses_with(cast.result)
            self.kill(cast)
            casts.append(cast)
        return casts

    def lower_scf_yield(self, op, rewriter):
        """The old yield of a rewritten loop (left in the old body, visited after the moved
        body): the new loop's yield of each carried pointer's offsets, in place of the
        placeholder; then the old loop, empty and unused, is erased."""
        old_loop = op.parent.operation
        loop = self.loops.get(old_loop)
        if loop is None:
            return False
        yielded = []
        for i, v in enumerate(op.operands):
            if i in loop.arg_ptrs:
                p = self.bp.get(v)
                if p is None or p.root != loop.arg_ptrs[i].root:
                    raise fail("a block pointer carried by a loop must be updated with advance() of itself", op)
                yielded += p.offsets
            else:
                yielded.append(v)
        with InsertionPoint(loop.anchor), op.location:
            ir.create("scf.yield", operands=yielded)
        loop.anchor.erase()
        del self.loops[old_loop]
        rewriter.erase_op(op)
        rewriter.erase_op(old_loop)      # through the rewriter: the driver lists it
        for cast in loop.casts:          # a pointer only the old yield read (yielded unchanged)
            if not list(cast.result.uses):
                del self.dead[cast]
                rewriter.erase_op(cast)
        return True

    # ---- memory ------------------------------------------------------------
    def _window(self, p: BlockPtr, checked, op):
        """The DRAM window an access touches and where it sits in the block: boundary_check
        dimensions keep [0, limit) (a negative offset reads zeros / writes nothing for the
        part before 0), unchecked ones access the whole block. Gemmini cannot place data at
        a column offset inside a scratchpad row, so a checked negative column offset is a
        compile error when constant and a located run-time error otherwise."""
        starts, sizes, leads = [], [], []
        for d in range(2):
            if d in checked:
                start, size, lead = ir.checked_window(p.shape[d], p.offsets[d], p.block_shape[d])
                start = ir.view_start(start, p.shape[d])
            else:
                start, size, lead = p.offsets[d], ir.const_index(p.block_shape[d]), ir.const_index(0)
            starts.append(start)
            sizes.append(size)
            leads.append(lead)
        if 1 in checked:
            self._forbid_column_lead(p.offsets[1], leads[1], op)
            leads[1] = ir.const_index(0)
        one = ir.const_index(1)
        return ir.subview(p.view, starts, sizes, [one, one]), sizes, leads

    @staticmethod
    def _forbid_column_lead(offset, lead, op):
        owner = offset.owner
        if getattr(owner, "name", None) == "arith.constant" and ir.IntegerAttr(owner.attributes["value"]).value < 0:
            raise fail(NEGATIVE_COLUMN_OFFSET, op)
        from mlir.dialects import scf
        guard = scf.IfOp(ir.cmpi("sgt", lead, ir.const_index(0)))
        with InsertionPoint(guard.then_block):
            ir.call_boundary_error(op)
            scf.YieldOp([])

    @staticmethod
    def _pooled(value) -> bool:
        owner = value.owner
        return getattr(owner, "name", None) == "linalg.generic" and "gemmini.max_pool" in owner.attributes

    @staticmethod
    def _forbid_pooled_row_lead(offset, op):
        """A pooled block's rows are whole pooled image rows that one mvout writes from the first:
        a negative row offset is a compile error when constant, a located run-time error otherwise."""
        owner = offset.owner
        if getattr(owner, "name", None) == "arith.constant" and ir.IntegerAttr(owner.attributes["value"]).value < 0:
            raise fail(RUNTIME_ERRORS[POOLED_NEGATIVE_ROW], op)
        from mlir.dialects import scf
        guard = scf.IfOp(ir.cmpi("slt", offset, ir.const_index(0)))
        with InsertionPoint(guard.then_block):
            ir.call_runtime_error(op, POOLED_NEGATIVE_ROW)
            scf.YieldOp([])

    @staticmethod
    def _checked(op):
        if "boundary_check" not in op.attributes:
            return ()
        return tuple(int(x) for x in ir.DenseI64ArrayAttr(op.attributes["boundary_check"]))

    def lower_baco_load(self, op):
        p = self.bp[op.operands[0]]
        if len(p.block_shape) == 3:
            return self._load_slices(p, op)
        window, sizes, leads = self._window(p, self._checked(op), op)
        dyn = ir.tensor_type([ir.DYN, ir.DYN], p.elem)
        loaded = ir.create("bufferization.to_tensor", operands=[window], results=[dyn],
                           attributes={"restrict": ir.unit()}).result
        # zero-pad the clipped window back to the static block shape
        highs = [ir.binop("subi", ir.binop("subi", ir.const_index(b), s), lead)
                 for b, s, lead in zip(p.block_shape, sizes, leads)]
        pad = ir.create("tensor.pad", operands=[loaded, *leads, *highs],
                        results=[op.result.type], regions=1,
                        attributes={"operandSegmentSizes": Attribute.parse("array<i32: 1, 2, 2>"),
                                    "static_low": ir.dense_i64([ir.DYN, ir.DYN]),
                                    "static_high": ir.dense_i64([ir.DYN, ir.DYN])})
        blk = Block.create_at_start(pad.regions[0], [ir.index(), ir.index()])
        with InsertionPoint(blk):
            z = ir.const_int(0, p.elem)
            ir.create("tensor.yield", operands=[z])
        op.result.replace_all_uses_with(pad.result)
        self.kill(op)

    def _load_slices(self, p: BlockPtr, op):
        """A 3-D block pointer's load: slice i (dimension-0 index offsets[0] + i) is a 2-D
        window of the view inserted at [i, lead, 0] of a fresh (S, R, C) local block, which
        the dot reads collapsed to (S*R, C). Rows of a slice the window leaves (padding, or a
        whole slice outside a checked dimension 0) are zeroed by the lowering of its copy."""
        checked = self._checked(op)
        slices, rows, cols = p.block_shape
        zero, one = ir.const_index(0), ir.const_index(1)
        block = self._fresh_tensor(ir.tensor_type(p.block_shape, p.elem))
        for i in range(slices):
            index = ir.binop("addi", p.offsets[0], ir.const_index(i))
            starts, sizes, leads = [], [], []
            for d in (1, 2):
                if d in checked:
                    start, size, lead = ir.checked_window(p.shape[d], p.offsets[d], p.block_shape[d])
                    start = ir.view_start(start, p.shape[d])
                else:
                    start, size, lead = p.offsets[d], ir.const_index(p.block_shape[d]), zero
                starts.append(start)
                sizes.append(size)
                leads.append(lead)
            if 2 in checked:
                self._forbid_column_lead(p.offsets[2], leads[1], op)
            if 0 in checked:        # a slice outside dimension 0: an empty window at index 0
                inside = ir.binop("andi", ir.cmpi("sge", index, zero), ir.cmpi("slt", index, p.shape[0]))
                index, sizes[0], leads[0] = (ir.select(inside, v, zero) for v in (index, sizes[0], leads[0]))
            window = ir.create("memref.subview", operands=[p.view, index, *starts, *sizes, one, one],
                               results=[ir.strided_type(p.elem, 2)],
                               attributes={"operandSegmentSizes": Attribute.parse("array<i32: 1, 3, 2, 2>"),
                                           "static_offsets": ir.dense_i64([ir.DYN] * 3),
                                           "static_sizes": ir.dense_i64([1, ir.DYN, ir.DYN]),
                                           "static_strides": ir.dense_i64([1, ir.DYN, ir.DYN])}).result
            loaded = ir.create("bufferization.to_tensor", operands=[window],
                               results=[ir.tensor_type([ir.DYN, ir.DYN], p.elem)],
                               attributes={"restrict": ir.unit()}).result
            block = ir.create("tensor.insert_slice", operands=[loaded, block, leads[0], *sizes],
                              results=[block.type],
                              attributes={"operandSegmentSizes": Attribute.parse("array<i32: 1, 1, 1, 2, 0>"),
                                          "static_offsets": ir.dense_i64([i, ir.DYN, 0]),
                                          "static_sizes": ir.dense_i64([1, ir.DYN, ir.DYN]),
                                          "static_strides": ir.dense_i64([1, 1, 1])}).result
        flat = ir.create("tensor.collapse_shape", operands=[block], results=[op.result.type],
                         attributes={"reassociation": Attribute.parse("[[0, 1], [2]]")}).result
        op.result.replace_all_uses_with(flat)
        self.kill(op)

    def lower_baco_store(self, op):
        p = self.bp[op.operands[0]]
        value = op.operands[1]
        if list(RankedTensorType(value.type).shape) != p.block_shape:
            raise fail("stored block shape does not match the block pointer", op)
        value = self._epilogue(value, p.elem, op)
        if 0 in self._checked(op) and self._pooled(value):
            self._forbid_pooled_row_lead(p.offsets[0], op)
        window, sizes, leads = self._window(p, self._checked(op), op)
        one = ir.const_index(1)
        dyn = ir.tensor_type([ir.DYN, ir.DYN], p.elem)
        part = ir.create("tensor.extract_slice", operands=[value, *leads, *sizes, one, one],
                         results=[dyn],
                         attributes={"operandSegmentSizes": Attribute.parse("array<i32: 1, 2, 2, 2>"),
                                     "static_offsets": ir.dense_i64([ir.DYN] * 2),
                                     "static_sizes": ir.dense_i64([ir.DYN] * 2),
                                     "static_strides": ir.dense_i64([ir.DYN] * 2)}).result
        ir.create("bufferization.materialize_in_destination", operands=[part, window],
                  attributes={"restrict": ir.unit(), "writable": ir.unit()})
        self.kill(op)

    # ---- compute -----------------------------------------------------------
    @staticmethod
    def _fresh_tensor(t):
        """A new local block: bufferization.alloc_tensor, not tensor.empty, which CSE would
        merge with an equal one (two accumulators, or a dot's int8 operand and a stored
        int8 block, would then share one buffer)."""
        return ir.create("bufferization.alloc_tensor", results=[t],
                         attributes={"operandSegmentSizes": Attribute.parse("array<i32: 0, 0, 0>")}).result

    def lower_baco_zeros(self, op):
        t = RankedTensorType(op.result.type)
        empty = self._fresh_tensor(t)
        zero = ir.const_int(0, t.element_type)
        from mlir.dialects import linalg
        filled = linalg.fill(zero, outs=[empty])
        op.result.replace_all_uses_with(filled)
        self.kill(op)

    def lower_baco_dot(self, op):
        a, b, acc = (self._dot_operand(v) for v in op.operands)
        ta, tb, tc = (RankedTensorType(v.type) for v in (a, b, acc))
        if str(ta.element_type) != "i8" or str(tb.element_type) != "i8" or str(tc.element_type) != "i32":
            raise fail(f"Gemmini dot takes int8 blocks and accumulates in int32 "
                       f"(got {ta.element_type} x {tb.element_type} -> {tc.element_type})", op)
        if ta.shape[1] != tb.shape[0] or [ta.shape[0], tb.shape[1]] != list(tc.shape):
            raise fail(f"dot shapes do not match: {list(ta.shape)} x {list(tb.shape)} -> {list(tc.shape)}", op)
        from mlir.dialects import linalg
        res = linalg.matmul(a, b, outs=[acc])
        op.result.replace_all_uses_with(res)
        self.kill(op)

    def lower_baco_add(self, op):
        """x + y in the accumulator: a loaded block (int8, optionally `* scale`, or int32) is
        added by an mvin into the accumulator block with the accumulate bit (int8 widened and
        scaled by the mvin scale), as the C library's tiled_resadd does. At most one operand
        may be an accumulator value (a dot's result, an earlier sum); without one the sum
        starts from a zeroed accumulator block."""
        target, loads = None, []
        for v in op.operands:
            scale, source = None, v
            if getattr(v.owner, "name", None) == "baco.scale" and str(RankedTensorType(v.type).element_type) == "i8":
                scale, source = v.owner.operands[1], v.owner.operands[0]
                if v.owner.operation not in self.dead:
                    self.kill(v.owner)
            if getattr(source.owner, "name", None) == "tensor.pad":
                loads.append((source, scale))
            elif target is None and str(RankedTensorType(v.type).element_type) == "i32" and \
                    getattr(v.owner, "name", None) not in EPILOGUE_OPS:
                target = v
            else:
                raise fail("Gemmini adds blocks in the accumulator: each operand of + must be a loaded "
                           "block (int8, optionally * scale, or int32) except at most one int32 "
                           "accumulator block (a dot's result or an earlier sum)", op)
        t = RankedTensorType(op.result.type)
        if target is None:
            from mlir.dialects import linalg
            target = linalg.fill(ir.const_int(0, t.element_type), outs=[self._fresh_tensor(t)])
        for source, scale in loads:
            target = self._accumulate_load(target, source, scale)
        op.result.replace_all_uses_with(target)
        self.kill(op)

    @staticmethod
    def _accumulate_load(target, loaded, scale):
        """target + loaded as a linalg.generic tagged `gemmini.acc_add` (what an accumulating
        mvin computes): an int8 block is scaled (RNE) and saturated to int8, then widened."""
        i32 = IntegerType.get_signless(32)
        gen, blk = _elementwise_generic(loaded, target, "gemmini.acc_add", {"scaled": BoolAttr.get(scale is not None)})
        with InsertionPoint(blk):
            x = blk.arguments[0]
            if scale is not None:
                x = _round_saturate_int8(x, scale, i32)
            elif str(RankedTensorType(loaded.type).element_type) != "i32":
                x = ir.create("arith.extsi", operands=[x], results=[i32]).result
            ir.create("linalg.yield", operands=[ir.binop("addi", blk.arguments[1], x)])
        return gen.result

    def _epilogue_chain(self, value):
        """(source value, scale, relu, chain ops) of the scale/relu/convert ops feeding `value`;
        the chain ops are killed (a store or a dot applies them)."""
        scale, relu = None, False
        chain = []
        while value.owner.name in EPILOGUE_OPS if hasattr(value.owner, "name") else False:
            producer = value.owner
            chain.append(producer)
            if producer.name == "baco.scale":
                if scale is not None:
                    raise fail("only one scale factor per stored block is supported", producer)
                scale = producer.operands[1]
            elif producer.name == "baco.relu":
                relu = True
            value = producer.operands[0]
        for producer in chain:
            for use in producer.result.uses:
                if use.owner.name not in EPILOGUE_OPS + ("baco.store", "baco.dot", "baco.max_pool"):
                    raise fail(f"this elementwise result is used by {use.owner.name}; on Gemmini "
                               "scale/relu/convert are applied by the store (mvout), by its pooling "
                               "or by a dot reading the accumulator", producer)
            if producer.operation not in self.dead:
                self.kill(producer)
        return value, scale, relu, chain

    def _dot_operand(self, value):
        """A dot operand; `acc*scale` / relu / .to(int8) of an int32 block becomes a
        gemmini.epilogue generic the dot reads through the accumulator read path
        (config_ex acc_scale + activation), so the block never leaves the accumulator."""
        if not (hasattr(value.owner, "name") and value.owner.name in EPILOGUE_OPS):
            return value
        out_elem = RankedTensorType(value.type).element_type
        source, scale, relu, chain = self._epilogue_chain(value)
        if str(RankedTensorType(source.type).element_type) != "i32" or str(out_elem) != "i8":
            raise fail("a dot reads an accumulator block only as scaled/ReLU'd int8 "
                       "(acc * scale, relu, .to(bl.int8))", chain[0])
        return self._build_epilogue(source, scale, relu, out_elem)

    def _epilogue(self, value, out_elem, store_op):
        """Fold scale/relu/convert feeding a store into one tagged linalg.generic."""
        value, scale, relu, chain = self._epilogue_chain(value)
        src = RankedTensorType(value.type)
        if str(src.element_type) != "i32":
            if chain:
                raise fail("scale/relu/convert apply to int32 accumulator blocks", chain[-1])
            if str(src.element_type) != str(out_elem):
                raise fail(f"cannot store a {src.element_type} block through a {out_elem} pointer", store_op)
            return value
        if str(out_elem) not in ("i8", "i32"):
            raise fail(f"accumulator blocks are stored as int8 or int32, not {out_elem}", store_op)
        if not chain and str(out_elem) == "i32":
            return value
        if relu and str(out_elem) == "i32":
            raise fail("relu on an int32 output: Gemmini's full-width mvout bypasses the activation; "
                       "store int8 (.to(bl.int8)) or drop relu", chain[0])
        if scale is not None and str(out_elem) == "i32":
            raise fail("scaled results must be converted with .to(bl.int8) before storing", chain[0])
        return self._build_epilogue(value, scale, relu, out_elem)

    def lower_baco_max_pool(self, op):
        """max_pool2d of an accumulator block's int8 epilogue: the epilogue generic, then a
        gemmini.max_pool generic computing the pooled pixels from its output (the pooled
        mvout's arithmetic; baco.gemmini.arith.max_pool)."""
        value = op.operands[0]
        if not (hasattr(value.owner, "name") and value.owner.name in EPILOGUE_OPS):
            raise fail("max_pool2d() pools an accumulator block on its way out (acc.to(bl.int8), "
                       "optionally scaled and ReLU'd); this block is not read out of the accumulator", op)
        source, scale, relu, chain = self._epilogue_chain(value)
        if str(RankedTensorType(source.type).element_type) != "i32":
            raise fail("max_pool2d() pools an int32 accumulator block converted with .to(bl.int8)", op)
        misuse = next((use.owner for use in op.result.uses if use.owner.name != "baco.store"
                       or use.operand_number != 1), None)
        if misuse is not None:      # reported where the pooled block is used, not where it is made
            raise fail("a pooled block can only be stored: Gemmini pools on the way out of the accumulator "
                       "(mvout), so a max_pool2d result has no other use", misuse)
        pixels = self._build_epilogue(source, scale, relu, IntegerType.get_signless(8))
        attrs = {k: op.attributes[k] for k in ("image", "kernel", "stride", "padding")}
        op.result.replace_all_uses_with(self._build_max_pool(pixels, op.operands[1], op.operands[2],
                                                             RankedTensorType(op.result.type), attrs))
        self.kill(op)

    def _build_max_pool(self, pixels, lo, hi, out_type, attrs):
        """out[p, c] = max over the window of pooled pixel p (pr, pc) = (p // PC, p % PC) of the
        image pixels j = (jr, jc) = (j // cols, j % cols), as a reduction over all pixels j:
        pixel j counts if it lies in the window and in the valid rows [lo, hi) (scalar inputs),
        and 0 counts if the window reaches into the padding or outside the valid rows
        (positions outside the image are 0 on a pooled mvout)."""
        from mlir.dialects import linalg
        _, cols = list(ir.DenseI64ArrayAttr(attrs["image"]))
        upad, lpad = list(ir.DenseI64ArrayAttr(attrs["padding"]))
        k, s = (ir.IntegerAttr(attrs[n]).value for n in ("kernel", "stride"))
        pocols = (cols + 2 * lpad - k) // s + 1
        i8 = IntegerType.get_signless(8)
        init = linalg.fill(ir.const_int(-128, i8), outs=[self._fresh_tensor(out_type)])
        scalar = AffineMap.get(3, 0, [])
        maps = [AffineMap.get(3, 0, [AffineExpr.get_dim(2), AffineExpr.get_dim(1)]), scalar, scalar,
                AffineMap.get(3, 0, [AffineExpr.get_dim(0), AffineExpr.get_dim(1)])]
        par, red = (Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
        gen = ir.create("linalg.generic", operands=[pixels, lo, hi, init], results=[out_type], regions=1,
                        attributes={"indexing_maps": ArrayAttr.get([AffineMapAttr.get(m) for m in maps]),
                                    "iterator_types": ArrayAttr.get([par, par, red]),
                                    "operandSegmentSizes": Attribute.parse("array<i32: 3, 1>"),
                                    "gemmini.max_pool": DictAttr.get(attrs)})
        blk = Block.create_at_start(gen.regions[0], [i8, ir.index(), ir.index(), i8])
        lo, hi = blk.arguments[1], blk.arguments[2]
        with InsertionPoint(blk):
            def idx(n):
                return ir.const_index(n)

            def index_of(dim):
                return ir.create("linalg.index", results=[ir.index()],
                                 attributes={"dim": ir.IntegerAttr.get(ir.i64(), dim)}).result
            p, j = index_of(0), index_of(2)
            r0 = ir.binop("subi", ir.binop("muli", ir.binop("divui", p, idx(pocols)), idx(s)), idx(upad))
            c0 = ir.binop("subi", ir.binop("muli", ir.binop("remui", p, idx(pocols)), idx(s)), idx(lpad))
            jr = ir.binop("divui", j, idx(cols))
            dr = ir.binop("subi", jr, r0)
            dc = ir.binop("subi", ir.binop("remui", j, idx(cols)), c0)
            inside = ir.binop("andi", ir.binop("andi", ir.cmpi("sge", dr, idx(0)), ir.cmpi("slt", dr, idx(k))),
                              ir.binop("andi", ir.cmpi("sge", dc, idx(0)), ir.cmpi("slt", dc, idx(k))))
            inside = ir.binop("andi", inside, ir.binop("andi", ir.cmpi("sge", jr, lo), ir.cmpi("slt", jr, hi)))
            padded = ir.binop("ori", ir.binop("ori", ir.cmpi("slt", r0, lo),
                                              ir.cmpi("sgt", ir.binop("addi", r0, idx(k)), hi)),
                              ir.binop("ori", ir.cmpi("slt", c0, idx(0)),
                                       ir.cmpi("sgt", ir.binop("addi", c0, idx(k)), idx(cols))))
            v = ir.select(inside, blk.arguments[0], ir.const_int(-128, i8))
            v = ir.select(padded, ir.binop("maxsi", v, ir.const_int(0, i8)), v)
            ir.create("linalg.yield", operands=[ir.binop("maxsi", blk.arguments[3], v)])
        return gen.result

    def _build_epilogue(self, value, scale, relu, out_elem):
        empty = self._fresh_tensor(ir.tensor_type(RankedTensorType(value.type).shape, out_elem))
        gen, blk = _elementwise_generic(value, empty, "gemmini.epilogue",
                                        {"relu": BoolAttr.get(relu), "scaled": BoolAttr.get(scale is not None)})
        with InsertionPoint(blk):
            x = blk.arguments[0]
            if relu:  # RTL order: activation first, then scale, round, saturate
                x = ir.binop("maxsi", x, ir.const_int(0, IntegerType.get_signless(32)))
            ir.create("linalg.yield", operands=[_round_saturate_int8(x, scale, out_elem)])
        return gen.result

    def lower_baco_program_id(self, op):
        self._grid_query(op, PROGRAM_ID)

    def lower_baco_num_programs(self, op):
        self._grid_query(op, NUM_PROGRAMS)

    def _grid_query(self, op, callee):
        axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
        if not 0 <= axis <= 2:
            raise fail(f"grid axis must be 0, 1 or 2 (got {axis})", op)
        v = ir.call_grid(op, callee, axis)
        op.result.replace_all_uses_with(ir.index_cast(v, ir.index()))
        self.kill(op)


def _elementwise_generic(source, init, tag: str, tag_attrs: dict):
    """A 2-D elementwise linalg.generic from `source` into `init` (its result has init's type),
    tagged `tag` with `tag_attrs` for placement; (the op, its empty body block)."""
    ident = AffineMapAttr.get(AffineMap.get_identity(2))
    par = Attribute.parse("#linalg.iterator_type<parallel>")
    gen = ir.create("linalg.generic", operands=[source, init], results=[init.type], regions=1,
                    attributes={
                        "indexing_maps": ArrayAttr.get([ident, ident]),
                        "iterator_types": ArrayAttr.get([par, par]),
                        "operandSegmentSizes": Attribute.parse("array<i32: 1, 1>"),
                        tag: DictAttr.get(tag_attrs)})
    elems = [RankedTensorType(v.type).element_type for v in (source, init)]
    return gen, Block.create_at_start(gen.regions[0], elems)


def _round_saturate_int8(x, scale, result_type):
    """Gemmini's int8 path for an integer x: float32, times scale (if any), round-half-even,
    saturated to [-128, 127], as result_type."""
    f = ir.create("arith.sitofp", operands=[x], results=[F32Type.get()]).result
    if scale is not None:
        f = ir.binop("mulf", f, scale)
    f = ir.create("math.roundeven", operands=[f], results=[F32Type.get()]).result
    f = ir.binop("maximumf", f, ir.const_f32(-128.0))
    f = ir.binop("minimumf", f, ir.const_f32(127.0))
    return ir.create("arith.fptosi", operands=[f], results=[result_type]).result


def run(module_op, options):
    BacoToLinalg().run(module_op)
