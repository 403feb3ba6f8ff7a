"""Python AST → BACO dialect MLIR text, every op located at the user's
file:line:col. Compile-time values (constexpr parameters, Python ints,
floats and bools) are folded; runtime scalars are `index` or `f32` SSA
values; blocks are tensors and block pointers `!baco.block_ptr<tensor<…>>`."""
from __future__ import annotations

import ast
import hashlib
import inspect
import math
import operator
import os
import textwrap
from dataclasses import dataclass

import numpy as np

from baco.dialects.baco_dialect import LOOP_CONV_ATTR
from baco.errors import DIVISION_BY_ZERO, POOL_VALID_ROWS, ZERO_STEP, CompilationError
from baco.frontend import language as bl
from baco.gemmini.abi import RUNTIME_ERROR, RUNTIME_ERROR_SIGNATURE
from baco.gemmini.arith import f32_bits, pool_field_problems, pooled_size


# compile-time comparisons (constexpr values)
COMPARISONS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
               ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
               ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


@dataclass(frozen=True)
class Val:
    """An SSA value and its MLIR type."""
    name: str
    type: str

    @property
    def is_block(self):
        return self.type.startswith("tensor<")

    @property
    def is_ptr(self):
        return self.type.startswith("!baco.block_ptr")

    @property
    def is_memref(self):
        return self.type.startswith("memref<")


def tensor_type(shape, elem):
    return f"tensor<{'x'.join(str(s) for s in shape)}x{elem}>"


def block_shape(t: str):
    inner = t[t.index("<") + 1:t.rindex(">")]
    if inner.startswith("tensor<"):
        inner = inner[len("tensor<"):-1]
    *dims, elem = inner.split("x")
    return [int(d) for d in dims], elem


@dataclass(frozen=True, eq=False)
class KernelSource:
    """A @baco.jit function's parsed source: what the code generator evaluates, as the kernel or
    inlined where another kernel calls it (a helper). Its names resolve in its own module."""
    name: str
    tree: ast.FunctionDef
    filename: str
    line_offset: int        # the file's line of the tree's line 1, minus 1
    col_offset: int         # the indentation the tree was dedented by
    globals: dict
    signature: inspect.Signature
    constexprs: frozenset
    code: object            # the function's code object (the interpreter's frames)
    digest: str             # of its file, line and text: part of the jit cache key
    global_refs: tuple      # the name chains (`f`, `mod.f`) its body reads: where helpers can come from

    @classmethod
    def of(cls, fn) -> "KernelSource":
        lines, first = inspect.getsourcelines(fn)
        text = "".join(lines)
        tree = ast.parse(textwrap.dedent(text)).body[0]
        signature = inspect.signature(fn)
        constexprs = frozenset(p.name for p in signature.parameters.values() if p.annotation is bl.constexpr
                               or p.annotation == "bl.constexpr" or str(p.annotation).endswith("constexpr"))
        filename = os.path.abspath(inspect.getsourcefile(fn))
        digest = hashlib.sha256(f"{filename}:{first}:{text}".encode()).hexdigest()
        return cls(fn.__name__, tree, filename, first - 1, len(lines[0]) - len(lines[0].lstrip()), fn.__globals__,
                   signature, constexprs, fn.__code__, digest, name_chains(tree))


def name_chains(tree: ast.FunctionDef) -> tuple:
    """The dotted names (`f`, `mod.f`, as tuples) the body of `tree` reads from its module: each
    once, its parameters and the names it assigns left out."""
    loop_names = {n.target.id for s in tree.body for n in ast.walk(s)
                  if isinstance(n, ast.For) and isinstance(n.target, ast.Name)}
    local = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)} | set(assigned_names(tree.body)) | loop_names
    chains = []
    for node in (n for s in tree.body for n in ast.walk(s)):
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            chain = (node.id, *reversed(chain))
            if chain not in chains:
                chains.append(chain)
    return tuple(chains)


def jit_source(obj) -> KernelSource | None:
    """The KernelSource of a @baco.jit function, None for anything else."""
    source = getattr(obj, "kernel_source", None)
    return source if isinstance(source, KernelSource) else None


def helper_sources(source: KernelSource) -> tuple:
    """The @baco.jit functions `source` can call, directly or through each other, as its module's
    names resolve now (a reloaded or reassigned helper is a new one)."""
    found, todo = [], [source]
    while todo:
        s = todo.pop()
        for root, *attrs in s.global_refs:
            if root not in s.globals:
                continue
            obj = s.globals[root]
            for a in attrs:
                obj = getattr(obj, a, None)
            helper = jit_source(obj)
            if helper is not None and helper is not source and helper not in found:
                found.append(helper)
                todo.append(helper)
    return tuple(found)


@dataclass(frozen=True)
class CallSite:
    """An inlined helper call being evaluated: the helper, and the call's file:line:col."""
    helper: KernelSource
    filename: str
    line: int
    col: int


LANG_FUNCS = {"program_id", "num_programs", "cdiv", "make_block_ptr", "advance", "load", "store",
              "dot", "zeros", "relu", "max_pool2d"}
ARITH = {ast.Add: "addi", ast.Sub: "subi", ast.Mult: "muli", ast.FloorDiv: "floordivsi", ast.Mod: "remsi"}
FARITH = {ast.Add: "addf", ast.Sub: "subf", ast.Mult: "mulf", ast.Div: "divf"}
# far beyond any Gemmini's memories (local addresses have 29 row bits), and within MLIR's i64 size arithmetic
MAX_BLOCK_ELEMENTS = 1 << 40
CMP = {ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge", ast.Eq: "eq", ast.NotEq: "ne"}


class KernelCodegen(ast.NodeVisitor):
    def __init__(self, kernel: KernelSource, params, grid=None, loop_conv: bool = True):
        """params: list of (name, kind, value): kind memref:<elem> / index / f32 / const; an index
        param's value is None, or the launch's value the code is specialized on (the argument is
        still passed, but the code reads the constant: 1 is a Python constant, folded here, any
        other value an arith.constant that the compiler folds). grid: None, or the launch's three
        axes the code is specialized on (grid_query). loop_conv False: the function carries
        `baco.loop_conv = false` (jit's option: the loop-conv-ws pass leaves its programs alone)."""
        self.kernel = kernel
        self.grid = grid
        self.loop_conv = loop_conv
        self.source = kernel    # the function whose body is being evaluated (a helper while inlined)
        self.calls = []         # the CallSites of the helpers being inlined, outermost first
        self.params = params
        self.lines = []
        self.indent = 2
        self.counter = 0
        self.env = {}
        self.node = kernel.tree
        self.checks_at_run_time = False     # a runtime check was emitted: declare RUNTIME_ERROR
        self.made = {}          # SSA name -> (op name, operands, AST node) of the op that made it

    # ---- emission -----------------------------------------------------------
    def line_col(self, node):
        return (getattr(node, "lineno", self.source.tree.lineno) + self.source.line_offset,
                getattr(node, "col_offset", 0) + self.source.col_offset + 1)

    def loc(self, node=None):
        """The location of `node`; inside an inlined helper, MLIR's callsite(helper's line at the
        call's line at ...), which keeps the helper's file:line:col first."""
        line, col = self.line_col(node or self.node)
        text = f'"{self.source.filename}":{line}:{col}'
        for site in reversed(self.calls):
            text = f'callsite({text} at "{site.filename}":{site.line}:{site.col})'
        return f"loc({text})"

    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, text):
        self.lines.append("  " * self.indent + text)

    def op(self, name, operands, result_type, attrs="", operand_types=None):
        res = self.fresh() if result_type else None
        ops = ", ".join(v.name for v in operands)
        in_types = ", ".join(operand_types or [v.type for v in operands])
        prefix = f"{res} = " if res else ""
        attr = f" {{{attrs}}}" if attrs else ""
        self.emit(f'{prefix}"{name}"({ops}){attr} : ({in_types}) -> {result_type or "()"} {self.loc()}')
        if res:
            self.made[res] = (name, list(operands), self.node)
        return Val(res, result_type) if res else None

    def error(self, msg, node=None):
        return CompilationError(msg, self.source.filename, *self.line_col(node or self.node),
                                called_from=[(c.filename, c.line, c.col) for c in reversed(self.calls)])

    # ---- values ------------------------------------------------------------------
    def const_index(self, v: int) -> Val:
        r = self.fresh()
        self.emit(f"{r} = arith.constant {int(v)} : index {self.loc()}")
        return Val(r, "index")

    def const_f32(self, v: float) -> Val:
        """v as the float32 the kernel computes with: NaN, infinities and values beyond float32's
        range (which round to infinity) as the attribute's bit pattern, which MLIR parses."""
        r = self.fresh()
        with np.errstate(over="ignore"):
            single = np.float32(v)
        text = repr(float(v)) if np.isfinite(single) else f"0x{f32_bits(single):08X}"
        self.emit(f"{r} = arith.constant {text} : f32 {self.loc()}")
        return Val(r, "f32")

    def as_index(self, v, what="value") -> Val:
        if isinstance(v, bool):
            raise self.error(f"{what} must be an integer, not a bool")
        if isinstance(v, int):
            return self.const_index(v)
        if isinstance(v, Val) and v.type == "index":
            return v
        raise self.error(f"{what} must be an integer scalar, got {describe(v)}")

    def as_f32(self, v) -> Val:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return self.const_f32(v)
        if isinstance(v, Val) and v.type == "f32":
            return v
        if isinstance(v, Val) and v.type == "index":
            i = self.fresh()
            self.emit(f"{i} = arith.index_cast {v.name} : index to i64 {self.loc()}")
            r = self.fresh()
            self.emit(f"{r} = arith.sitofp {i} : i64 to f32 {self.loc()}")
            return Val(r, "f32")
        raise self.error(f"expected a float scalar, got {describe(v)}")

    def runtime_check(self, failed: Val, code: int, node):
        """`if failed: baco_runtime_error(code, line, col)` at `node` (baco.errors.RUNTIME_ERRORS);
        the kernel then goes on with safe values, and no Gemmini command runs after it."""
        self.checks_at_run_time = True
        self.node = node
        loc = self.loc(node)
        line, col = self.line_col(node)
        vals = []
        for v in (code, line, col):     # outside the guard: it holds the call alone (prefetch.is_boundary_check)
            r = self.fresh()
            self.emit(f"{r} = arith.constant {v} : i64 {loc}")
            vals.append(r)
        self.emit(f"scf.if {failed.name} {{")
        self.indent += 1
        self.emit(f"func.call @{RUNTIME_ERROR}({', '.join(vals)}) : {RUNTIME_ERROR_SIGNATURE} {loc}")
        self.indent -= 1
        self.emit(f"}} {loc}")

    def cmp_index(self, predicate: str, a: Val, b: Val) -> Val:
        r = self.fresh()
        self.emit(f"{r} = arith.cmpi {predicate}, {a.name}, {b.name} : index {self.loc()}")
        return Val(r, "i1")

    def select(self, cond: Val, a: Val, b: Val) -> Val:
        r = self.fresh()
        self.emit(f"{r} = arith.select {cond.name}, {a.name}, {b.name} : {a.type} {self.loc()}")
        return Val(r, a.type)

    def divisor(self, b, node) -> Val:
        """The divisor of an integer `//`, `%` or cdiv: a constant 0 is a compile error, a runtime
        0 a located run-time error (checked before the division, which then divides by 1:
        instgem_to_llvm.safe_divisions; -2**63 // -1 wraps there too, as +, -, * wrap)."""
        if not isinstance(b, Val):
            if b == 0:
                raise self.error("integer division or modulo by zero", node)
            return self.as_index(b)
        self.node = node
        self.runtime_check(self.cmp_index("eq", b, self.const_index(0)), DIVISION_BY_ZERO, node)
        return b

    # ---- function -------------------------------------------------------------------
    def generate(self) -> str:
        args = []
        for name, kind, value in self.params:
            if kind == "const":
                self.env[name] = value
            else:
                v = Val(f"%{name}", kind)
                args.append(f"{v.name}: {kind}")
                self.env[name] = v
        body_start = len(self.lines)
        for name, kind, value in self.params:   # integers the code is specialized on
            if kind == "index" and value == 1:  # 1: a Python constant (e.g. a GEMV's N folds in the frontend)
                self.env[name] = 1
            elif kind == "index" and value is not None:   # the launch's value, a constant in the IR
                self.env[name] = self.const_index(value)
        fn = self.kernel.tree
        self.visit_body(fn.body)
        self.emit(f"return {self.loc(fn)}")
        body = self.lines[body_start:]
        attributes = "" if self.loop_conv else f" attributes {{{LOOP_CONV_ATTR} = false}}"
        head = ["module {", f"  func.func @{fn.name}({', '.join(args)}){attributes} {{"]
        if self.checks_at_run_time:
            inputs = RUNTIME_ERROR_SIGNATURE.split(" -> ")[0]
            head.insert(1, f"  func.func private @{RUNTIME_ERROR}{inputs} {self.loc(fn)}")
        return "\n".join(head + body + [f"  }} {self.loc(fn)}", f"}} {self.loc(fn)}"]) + "\n"

    def visit_body(self, stmts):
        for s in stmts:
            self.node = s
            try:
                self.visit(s)
            except CompilationError:
                raise
            except Exception as e:  # never show a compiler traceback for a user error
                raise self.error(f"cannot compile this statement: {type(e).__name__}: {e}", s) from None

    def generic_visit(self, node):
        raise self.error(f"unsupported construct in a baco kernel: {type(node).__name__}", node)

    # ---- statements ----------------------------------------------------------------
    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.expr(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Return(self, node):
        if node.value is not None:
            raise self.error("kernels cannot return a value; store results through a pointer", node)

    def visit_Assign(self, node):
        if len(node.targets) != 1:
            raise self.error("chained assignment is not supported", node)
        value = self.expr(node.value)
        self.assign(node.targets[0], value)

    def visit_AnnAssign(self, node):
        self.assign(node.target, self.expr(node.value))

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(value) == len(target.elts):
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        else:
            raise self.error("only assignment to names (or tuples of names) is supported", target)

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error("only names can be updated in place", node.target)
        cur = self.lookup(node.target)
        # acc += dot(a, b) is one accumulate-dot
        if isinstance(node.op, ast.Add) and is_lang_call(node.value, "dot") and isinstance(cur, Val) and cur.is_block:
            self.node = node.value
            a, b = [self.expr(x) for x in node.value.args[:2]]
            self.env[node.target.id] = self.dot(a, b, cur, node.value)
            return
        self.env[node.target.id] = self.binop(node.op, cur, self.expr(node.value), node)

    def visit_If(self, node):
        cond = self.expr(node.test)
        if isinstance(cond, Val):
            raise self.error("runtime `if` is not supported in a kernel; branch on a constexpr parameter", node.test)
        self.visit_body(node.body if cond else node.orelse)

    def visit_For(self, node):
        it = node.iter
        bounds = self.range_bounds(node)
        # a positive constant step is scf.for's own; any other runs as Python's range does, by
        # counting its trips: iv = first + t * step for t in [0, trips)
        counted = isinstance(bounds[2], Val) or bounds[2] < 0
        if counted:
            first, step = (self.as_index(b, "a range bound") for b in (bounds[0], bounds[2]))
            lb, ub, step_v = self.const_index(0), self.trip_count(*bounds, it), self.const_index(1)
        else:
            lb, ub, step_v = (self.as_index(b, "a range bound") for b in bounds)
        carried, inits = self.loop_carried(node)
        iv = self.fresh()
        results = self.fresh()
        args = [self.fresh() for _ in carried]
        types = [v.type for v in inits]
        head = f"scf.for {iv} = {lb.name} to {ub.name} step {step_v.name}"
        if carried:
            iters = ", ".join(f"{a} = {v.name}" for a, v in zip(args, inits))
            head = f"{results}:{len(carried)} = {head} iter_args({iters}) -> ({', '.join(types)})"
        self.emit(head + " {")
        saved = dict(self.env)
        self.env[node.target.id] = Val(iv, "index")
        if counted:
            self.node = it
            self.env[node.target.id] = self.arith("addi", first, self.arith("muli", Val(iv, "index"), step, "index"),
                                                  "index")
        for n, a, t in zip(carried, args, types):
            self.env[n] = Val(a, t)
        self.indent += 1
        self.visit_body(node.body)
        self.node = node
        self.loop_yield(node, carried, args, types)
        self.indent -= 1
        self.emit(f"}} {self.loc(node)}")
        self.env = saved
        for i, (n, t) in enumerate(zip(carried, types)):
            self.env[n] = Val(f"{results}#{i}", t)
            self.made[f"{results}#{i}"] = ("scf.for", [inits[i]], node)

    def range_bounds(self, node) -> list:
        """[start, stop, step] of a `for name in range(...)` loop (ints or index values), checked."""
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable must be a name", node.target)
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
            raise self.error("kernels loop with `for i in range(...)`", it)
        if node.orelse:
            raise self.error("for/else is not supported", node)
        bounds = [self.expr(a) for a in it.args]
        if len(bounds) == 1:
            bounds = [0] + bounds
        if len(bounds) == 2:
            bounds.append(1)
        if len(bounds) != 3:
            raise self.error("range() takes 1 to 3 arguments", it)
        for b in bounds:
            if isinstance(b, Val) or isinstance(b, bool) or not isinstance(b, int):
                self.as_index(b, "a range bound")        # an integer scalar, else a located error
        self.node = it
        if not isinstance(bounds[2], Val) and bounds[2] == 0:
            raise self.error("range() step must not be zero", it)
        return bounds

    def loop_carried(self, node) -> tuple[list, list]:
        """The names the loop's body assigns that live before it, and their initial values (scalars:
        Python numbers become constants; arrays cannot be reassigned)."""
        carried = [n for n in assigned_names(node.body) if n in self.env and n != node.target.id]
        inits = []
        for n in carried:
            v = self.env[n]
            if isinstance(v, bool) or not isinstance(v, (int, float, Val)):
                raise self.error(f"`{n}` cannot change inside a loop (it is a {describe(v)})",
                                 assignment_of(n, node.body) or node)
            if isinstance(v, float):
                v = self.const_f32(v)
            elif isinstance(v, int):
                v = self.const_index(v)
            if v.is_memref:
                raise self.error(f"pointer argument `{n}` cannot be reassigned in a loop",
                                 assignment_of(n, node.body) or node)
            inits.append(v)
        return carried, inits

    def loop_yield(self, node, carried, args, types):
        """The body's scf.yield of the carried names' values at its end (same types as they entered)."""
        loc = self.loc(node)
        outs = []
        for n, t, a in zip(carried, types, args):
            v = self.env[n]
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                v = self.const_index(v) if t == "index" else self.const_f32(v)
            if not isinstance(v, Val) or v.type != t:
                raise self.error(f"`{n}` changes type inside the loop ({t} -> {describe(v)})",
                                 assignment_of(n, node.body) or node)
            self.check_kept_in_place(n, v, a, node)
            outs.append(v)
        if carried:
            self.emit(f"scf.yield {', '.join(v.name for v in outs)} : {', '.join(types)} {loc}")
        else:
            self.emit(f"scf.yield {loc}")

    def in_place_root(self, v: Val) -> Val:
        """The value `v` updates in place: through an accumulating dot (its accumulator), a sum in
        the accumulator (its accumulator operand), advance() (its pointer) and loops (their
        initial value); `v` itself when it is a new block or pointer."""
        while v.name in self.made:
            name, operands, _ = self.made[v.name]
            if name in ("baco.dot", "scf.for", "baco.advance"):
                v = operands[2 if name == "baco.dot" else 0]
            elif name == "baco.add":
                acc = [o for o in operands if o.name not in self.made or
                       self.made[o.name][0] in ("baco.dot", "baco.add", "baco.zeros", "scf.for")]
                if not acc:
                    return v
                v = acc[0]
            else:
                return v
        return v

    def check_kept_in_place(self, n: str, v: Val, arg: str, loop):
        """A block or block pointer carried by a loop stays in one place (its buffer, its view):
        each iteration must update the value it started with (accumulate into the block, advance
        the pointer), not replace it with a new one (bufferization could not keep it in place)."""
        if not (v.is_block or v.is_ptr):
            return
        root = self.in_place_root(v)
        if root.name == arg:
            return
        made_at = self.made[root.name][2] if root.name in self.made else None
        inside = made_at is not None and any(made_at is x for x in ast.walk(loop))
        where = made_at if inside else assignment_of(n, loop.body) or loop    # the loop's own statement
        if v.is_ptr:
            raise self.error(f"`{n}` is a block pointer carried by the loop, but this makes it another pointer "
                             f"in the loop: a carried pointer moves with advance() of itself "
                             f"(`{n} = bl.advance({n}, ...)`); make the pointer inside the loop instead",
                             where)
        raise self.error(f"`{n}` is a block carried by the loop (made before it, used after it), but this makes "
                         f"it a new block in each iteration, which the compiler cannot keep in place: "
                         f"accumulate into it (`{n} += bl.dot(a, b)`, `{n} = bl.dot(a, b, {n})`), or make and "
                         f"use the block inside the loop body", where)

    def trip_count(self, first, end, step, it) -> Val:
        """How many values range(first, end, step) gives, step not a positive constant:
        max(0, ceil((end - first) / step)); a runtime step of 0 is a located run-time error
        (the loop then runs no trip)."""
        if not any(isinstance(v, Val) for v in (first, end, step)):
            return self.const_index(max(0, -((first - end) // step)))
        first, end = self.as_index(first), self.as_index(end)
        distance = self.arith("subi", end, first, "index")
        if not isinstance(step, Val):
            trips = self.arith("ceildivsi", distance, self.as_index(step), "index")
            return self.arith("maxsi", trips, self.const_index(0), "index")
        zero = self.cmp_index("eq", step, self.const_index(0))
        self.runtime_check(zero, ZERO_STEP, it)
        self.node = it
        trips = self.arith("ceildivsi", distance, self.select(zero, self.const_index(1), step), "index")
        trips = self.arith("maxsi", trips, self.const_index(0), "index")
        return self.select(zero, self.const_index(0), trips)

    def visit_While(self, node):
        raise self.error("while loops are not supported; use `for i in range(...)`", node)

    # ---- expressions -----------------------------------------------------------------
    def expr(self, node):
        self.node = node
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"unsupported expression in a baco kernel: {type(node).__name__}", node)
        return method(node)

    def lookup(self, node):
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.source.globals:
            return self.source.globals[node.id]
        import builtins
        if hasattr(builtins, node.id):
            return getattr(builtins, node.id)
        raise self.error(f"name `{node.id}` is not defined", node)

    def expr_Name(self, node):
        return self.lookup(node)

    def expr_Constant(self, node):
        if isinstance(node.value, (int, float, bool, str)) or node.value is None:
            return node.value
        raise self.error(f"unsupported constant {node.value!r}", node)

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    expr_List = expr_Tuple

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, Val):
            if node.attr == "to":
                return ("method_to", base)
            if node.attr in ("dtype", "shape") and base.is_block:
                shape, elem = block_shape(base.type)
                return tuple(shape) if node.attr == "shape" else bl.DTYPES[elem]
            raise self.error(f"a {describe(base)} has no attribute `{node.attr}`", node)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.error(f"`{node.attr}` is not an attribute of {describe(base)}", node) from None

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            return -v if not isinstance(v, Val) else self.binop(ast.Sub, 0, v, node, op_is_class=True)
        if isinstance(node.op, ast.Not) and not isinstance(v, Val):
            return not v
        if isinstance(node.op, ast.UAdd):
            return v
        raise self.error(f"unsupported unary operator {type(node.op).__name__}", node)

    def expr_IfExp(self, node):
        cond = self.expr(node.test)
        if isinstance(cond, Val):
            raise self.error("`a if cond else b` needs a compile-time condition (a constexpr); "
                             "for a runtime choice of integers use min()/max()", node.test)
        return self.expr(node.body if cond else node.orelse)

    def expr_BoolOp(self, node):
        vals = [self.expr(v) for v in node.values]
        if any(isinstance(v, Val) for v in vals):
            raise self.error("`and`/`or` work on compile-time values only", node)
        if isinstance(node.op, ast.And):
            return all(vals)
        return any(vals)

    def expr_Compare(self, node):
        if len(node.ops) != 1:
            raise self.error("chained comparisons are not supported", node)
        a, b = self.expr(node.left), self.expr(node.comparators[0])
        if not isinstance(a, Val) and not isinstance(b, Val):
            return COMPARISONS[type(node.ops[0])](a, b)
        if isinstance(node.ops[0], (ast.Is, ast.IsNot)) and (a is None or b is None):
            return isinstance(node.ops[0], ast.IsNot)   # a runtime value (a given pointer) is never None
        raise self.error("comparisons of runtime values are not supported (no runtime branches)", node)

    def expr_BinOp(self, node):
        calls = [side for side in (node.right, node.left) if isinstance(node.op, ast.Add)
                 and is_lang_call(side, "dot") and len(side.args) == 2 and not side.keywords]
        if not calls:
            return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)
        # int32 block + dot(a, b) (either order) is one accumulate-dot, as `acc += dot(a, b)` is
        call = calls[0]
        other = self.expr(node.left if call is node.right else node.right)
        if isinstance(other, Val) and other.is_block and block_shape(other.type)[1] == "i32":
            self.node = call
            a, b = [self.expr(x) for x in call.args]
            return self.dot(a, b, other, call)
        product = self.expr(call)
        return self.binop(node.op, other, product, node) if call is node.right else \
            self.binop(node.op, product, other, node)

    def binop(self, op, a, b, node, op_is_class=False):
        opc = op if op_is_class else type(op)
        if not isinstance(a, Val) and not isinstance(b, Val):
            if opc in (ast.FloorDiv, ast.Mod, ast.Div) and b == 0:
                raise self.error("division or modulo by zero", node)
            fn = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                  ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Div: operator.truediv}.get(opc)
            if fn is None:
                raise self.error(f"unsupported operator {opc.__name__}", node)
            return fn(a, b)
        if any(isinstance(v, Val) and v.is_memref for v in (a, b)):
            return self.offset_ptr(opc, a, b, node)
        blocks = [v for v in (a, b) if isinstance(v, Val) and v.is_block]
        if blocks:
            return self.block_binop(opc, a, b, node)
        if any(isinstance(v, Val) and v.type == "f32" for v in (a, b)) or isinstance(a, float) or isinstance(b, float):
            if opc not in FARITH:
                raise self.error(f"unsupported float operator {opc.__name__}", node)
            return self.arith(FARITH[opc], self.as_f32(a), self.as_f32(b), "f32")
        if opc not in ARITH:
            raise self.error(f"unsupported integer operator {opc.__name__} (use // for division)", node)
        a = self.as_index(a)
        if opc in (ast.FloorDiv, ast.Mod):
            b = self.divisor(b, node)
            self.node = node
        b = self.as_index(b)
        if opc is ast.Mod:   # Python's floor modulo (the sign of b), as the interpreter computes it
            return self.arith("subi", a, self.arith("muli", self.arith("floordivsi", a, b, "index"), b, "index"),
                              "index")
        return self.arith(ARITH[opc], a, b, "index")

    def offset_ptr(self, opc, a, b, node):
        """`ptr + n`: the pointer argument moved by n elements (n an integer scalar)."""
        ptr, n = (a, b) if isinstance(a, Val) and a.is_memref else (b, a)
        if opc is not ast.Add or (isinstance(n, Val) and n.is_memref):
            raise self.error("a pointer can only be moved by adding an integer number of elements (`ptr + n`)",
                             node)
        return self.op("baco.offset_ptr", [ptr, self.as_index(n, "a pointer offset")], ptr.type)

    def min_max(self, fn, args, node):
        """Scalar min()/max() of integers; folded when every argument is a compile-time value."""
        if len(args) < 2:
            raise self.error(f"{fn.__name__}() takes two or more integer scalars in a kernel", node)
        if not any(isinstance(v, Val) for v in args):
            return fn(*args)
        vals = [self.as_index(v, f"an argument of {fn.__name__}()") for v in args]
        out = vals[0]
        for v in vals[1:]:
            out = self.arith("minsi" if fn is min else "maxsi", out, v, "index")
        return out

    def arith(self, name, a, b, ty):
        r = self.fresh()
        self.emit(f"{r} = arith.{name} {a.name}, {b.name} : {ty} {self.loc()}")
        return Val(r, ty)

    def block_binop(self, opc, a, b, node):
        self.node = node        # the op is located at the whole expression, not its last operand
        if opc is ast.Mult:
            blk, s = (a, b) if isinstance(a, Val) and a.is_block else (b, a)
            if isinstance(s, Val) and s.is_block:
                raise self.error("elementwise block * block is not supported on Gemmini", node)
            shape, elem = block_shape(blk.type)
            if elem not in ("i32", "i8"):
                raise self.error(f"only int32 accumulator blocks and loaded int8 blocks can be scaled "
                                 f"(this block is {elem})", node)
            # int32: the accumulator read path scales it (pending until the store or a dot reads
            # it); int8: Gemmini's mvin scale (round half to even, saturate to int8)
            return self.op("baco.scale", [blk, self.as_f32(s)], tensor_type(shape, "f32" if elem == "i32" else "i8"))
        if opc is ast.Add and isinstance(a, Val) and isinstance(b, Val) and a.is_block and b.is_block:
            (sa, ea), (sb, eb) = block_shape(a.type), block_shape(b.type)
            if sa != sb or ea not in ("i8", "i32") or eb not in ("i8", "i32"):
                raise self.error(f"cannot add blocks of types {a.type} and {b.type}", node)
            # blocks add in the int32 accumulator (int8 blocks widen), as Gemmini's mvin does
            return self.op("baco.add", [a, b], tensor_type(sa, "i32"))
        raise self.error(f"unsupported block operation {opc.__name__} between {describe(a)} and {describe(b)}", node)

    def expr_Call(self, node):
        fn = self.expr(node.func)
        self.node = node
        if isinstance(fn, tuple) and fn and fn[0] == "method_to":
            if len(node.args) != 1:
                raise self.error(".to() takes one dtype", node)
            return self.convert(fn[1], self.expr(node.args[0]), node)
        name = lang_name(fn)
        if name is None:
            if fn is range:
                raise self.error("range() is only allowed as a for-loop iterator", node)
            if fn in (min, max) and not node.keywords:
                return self.min_max(fn, [self.expr(a) for a in node.args], node)
            helper = jit_source(fn)
            if helper is not None:
                return self.inline(helper, node)
            raise self.error(f"`{ast.unparse(node.func)}` is not a baco.language function or a @baco.jit "
                             f"function (a kernel calls only those; a @baco.jit helper is inlined)", node)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        self.node = node
        return getattr(self, "call_" + name)(node, *args, **kwargs)

    def inline(self, helper: KernelSource, node):
        """A call of a @baco.jit helper: its arguments (evaluated here) bound to its parameters in a
        fresh scope, and its body evaluated in place, in its module's names, its ops located at
        its own lines (called from this one); the value of its final `return`, else None."""
        if helper is self.kernel or any(c.helper is helper for c in self.calls):
            chain = " -> ".join([self.kernel.name] + [c.helper.name for c in self.calls] + [helper.name])
            raise self.error(f"recursive call of `{helper.name}` ({chain}): a @baco.jit helper is inlined "
                             f"into its caller, so it cannot call itself", node)
        if any(k.arg is None for k in node.keywords):
            raise self.error("`**` arguments are not supported in a helper call", node)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        self.node = node
        try:
            bound = helper.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(f"cannot call @baco.jit helper `{helper.name}`: {e}", node) from None
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            if name in helper.constexprs and isinstance(value, Val):
                raise self.error(f"argument `{name}` of @baco.jit helper `{helper.name}` is a bl.constexpr "
                                 f"parameter, but this call gives it a runtime {describe(value)}", node)
        caller = (self.source, self.env)
        self.calls.append(CallSite(helper, self.source.filename, *self.line_col(node)))
        self.source, self.env = helper, dict(bound.arguments)
        try:
            body = helper.tree.body
            result = body[-1].value if isinstance(body[-1], ast.Return) else None
            self.check_returns(body)
            self.visit_body(body[:-1] if isinstance(body[-1], ast.Return) else body)
            value = self.expr(result) if result is not None else None
        finally:
            self.calls.pop()
            self.source, self.env = caller
        self.node = node
        return value

    def check_returns(self, body):
        """A helper returns once, at the end of its body: a `return` anywhere else is an error."""
        def returns(stmts, inside):
            for s in stmts:
                if isinstance(s, ast.Return):
                    yield s, inside
                elif isinstance(s, (ast.For, ast.While, ast.If)):
                    yield from returns(s.body + s.orelse, "branch" if isinstance(s, ast.If) else "loop")
        for ret, inside in returns(body, None):
            if ret is body[-1]:
                continue
            if inside == "loop":
                raise self.error("`return` inside a loop: a @baco.jit helper returns once, at the end of its "
                                 "body", ret)
            if inside == "branch":
                raise self.error("`return` inside a branch: a @baco.jit helper returns once, at the end of its "
                                 "body (assign the value in the branches and return it after them)", ret)
            raise self.error("`return` before the end of the body: a @baco.jit helper returns once, at the end "
                             "of its body", ret)

    # ---- language functions --------------------------------------------------------------
    def call_program_id(self, node, axis=0):
        return self.grid_query("baco.program_id", axis, node)

    def call_num_programs(self, node, axis=0):
        return self.grid_query("baco.num_programs", axis, node)

    def grid_query(self, name, axis, node):
        """The op of `name` on `axis`; for a launch specialized on its grid, a constant: program_id
        of an axis of size 1 is 0, num_programs the axis's size (1 a Python constant, as an index
        parameter's, others an arith.constant)."""
        if not isinstance(axis, int) or not 0 <= axis <= 2:
            raise self.error("the grid axis must be the constant 0, 1 or 2", node)
        if self.grid is not None:
            size = self.grid[axis]
            if name == "baco.num_programs":
                return 1 if size == 1 else self.const_index(size)
            if size == 1:
                return 0
        return self.op(name, [], "index", f"axis = {axis} : i32")

    def call_cdiv(self, node, a, b):
        if not isinstance(a, Val) and not isinstance(b, Val):
            if b == 0:
                raise self.error("cdiv() by zero", node)
            return -(-a // b)
        a = self.as_index(a)
        b = self.divisor(self.as_index(b) if isinstance(b, Val) else b, node)
        self.node = node
        return self.arith("ceildivsi", a, b, "index")

    def check_block_size(self, shape, node):
        if math.prod(shape) > MAX_BLOCK_ELEMENTS:
            raise self.error(f"a block of shape {tuple(shape)} ({math.prod(shape)} elements) is larger than any "
                             f"Gemmini memory (at most {MAX_BLOCK_ELEMENTS} elements)", node)

    def call_make_block_ptr(self, node, base, shape, strides, offsets, block_shape, order=(1, 0)):
        if not (isinstance(base, Val) and base.is_memref):
            raise self.error(f"make_block_ptr needs a pointer argument as base, got {describe(base)}", node)
        rank = len(block_shape) if isinstance(block_shape, tuple) else 0
        for what, t in (("shape", shape), ("strides", strides), ("offsets", offsets), ("block_shape", block_shape)):
            if not isinstance(t, tuple) or len(t) not in (2, 3) or len(t) != rank:
                raise self.error(f"make_block_ptr {what} must be a 2-tuple (a Gemmini block) or a 3-tuple "
                                 f"(slices of rows flattened into one block), like block_shape", node)
        if not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block_shape):
            raise self.error(f"block_shape must be positive compile-time integers (constexpr), "
                             f"got {tuple(describe(b) for b in block_shape)}", node)
        self.check_block_size(block_shape, node)
        if tuple(order) not in (((1, 0), (0, 1)) if rank == 2 else ((1, 0), (2, 1, 0))):
            raise self.error("order must be (1, 0) (row-major) or (0, 1) (column-major: strides (1, ld), "
                             "a transposed operand); a 3-D block pointer is row-major, (2, 1, 0)", node)
        if tuple(order) == (0, 1) and strides[0] != 1:
            raise self.error(f"order=(0, 1) (column-major) needs stride 1 in dimension 0, got "
                             f"{describe(strides[0])}: Gemmini's DMA moves contiguous rows", node)
        if 1 not in (strides if rank == 2 else strides[-1:]):     # 2-D: strides (1, ld) are a transposed block
            raise self.error(f"no dimension has stride 1 (strides {tuple(describe(v) for v in strides)}): Gemmini's "
                             f"DMA moves contiguous rows (pass a row-major array; integer arguments equal to 1 "
                             f"are specialized)", node)
        elem = base.type[len("memref<?x"):-1]
        vals = [self.as_index(v, "a block pointer shape/stride/offset") for v in (*shape, *strides, *offsets)]
        t = f"!baco.block_ptr<{tensor_type(block_shape, elem)}>"
        attrs = (f"operandSegmentSizes = array<i32: 1, {rank}, {rank}, {rank}>, block_shape = array<i64: "
                 f"{', '.join(map(str, block_shape))}>, order = array<i64: {', '.join(map(str, range(rank - 1, -1, -1)))}>")
        return self.op("baco.make_block_ptr", [base] + vals, t, attrs)

    def call_advance(self, node, ptr, offsets):
        if not (isinstance(ptr, Val) and ptr.is_ptr):
            raise self.error(f"advance() needs a block pointer, got {describe(ptr)}", node)
        if len(block_shape(ptr.type)[0]) != 2:
            raise self.error("advance() moves 2-D block pointers; make a 3-D block pointer where it is loaded", node)
        if not isinstance(offsets, tuple) or len(offsets) != 2:
            raise self.error("advance() offsets must be a 2-tuple", node)
        return self.op("baco.advance", [ptr] + [self.as_index(o, "an offset") for o in offsets], ptr.type)

    def check_boundary(self, bc, node, rank=2):
        bc = tuple(bc) if isinstance(bc, (tuple, list)) else (bc,)
        if not all(d in range(rank) for d in bc):
            raise self.error(f"boundary_check dimensions must be {'0 and/or 1' if rank == 2 else '0, 1 and/or 2'}",
                             node)
        return f"boundary_check = array<i64{': ' + ', '.join(map(str, sorted(set(bc)))) if bc else ''}>"

    def call_load(self, node, ptr, boundary_check=(), padding_option="zero"):
        """A 3-D block pointer (slices, rows, cols) loads as one 2-D (slices*rows, cols) block."""
        if not (isinstance(ptr, Val) and ptr.is_ptr):
            raise self.error(f"load() needs a block pointer, got {describe(ptr)}", node)
        if padding_option not in ("zero", "", None):
            raise self.error("only padding_option='zero' is supported", node)
        shape, elem = block_shape(ptr.type)
        flat = [shape[0] * shape[1], shape[2]] if len(shape) == 3 else shape
        return self.op("baco.load", [ptr], tensor_type(flat, elem), self.check_boundary(boundary_check, node,
                                                                                           len(shape)))

    def call_store(self, node, ptr, value, boundary_check=()):
        if not (isinstance(ptr, Val) and ptr.is_ptr):
            raise self.error(f"store() needs a block pointer, got {describe(ptr)}", node)
        if not (isinstance(value, Val) and value.is_block):
            raise self.error(f"store() needs a block value, got {describe(value)}", node)
        pshape, pelem = block_shape(ptr.type)
        if len(pshape) != 2:
            raise self.error("store() writes through 2-D block pointers; 3-D block pointers are loaded only", node)
        vshape, velem = block_shape(value.type)
        if pshape != vshape:
            raise self.error(f"cannot store a {vshape} block through a {pshape} block pointer", node)
        if pelem != velem:
            raise self.error(f"cannot store a {bl.DTYPES[velem].name} block through a "
                             f"{bl.DTYPES[pelem].name} pointer; convert it with .to()", node)
        self.op("baco.store", [ptr, value], None, self.check_boundary(boundary_check, node))

    def call_dot(self, node, a, b, acc=None):
        return self.dot(a, b, acc, node)

    def dot(self, a, b, acc, node):
        for v, what in ((a, "first"), (b, "second")):
            if not (isinstance(v, Val) and v.is_block):
                raise self.error(f"dot() {what} operand must be a block, got {describe(v)}", node)
        (sa, ea), (sb, eb) = block_shape(a.type), block_shape(b.type)
        if ea != "i8" or eb != "i8":
            raise self.error(f"Gemmini dot() multiplies int8 blocks (got {bl.DTYPES[ea].name} x "
                             f"{bl.DTYPES[eb].name})", node)
        if sa[1] != sb[0]:
            raise self.error(f"dot() shapes do not match: {sa} x {sb}", node)
        out = tensor_type([sa[0], sb[1]], "i32")
        if acc is None:
            acc = self.op("baco.zeros", [], out)
        elif not (isinstance(acc, Val) and acc.type == out):
            raise self.error(f"dot() accumulator must be a {out} block, got {describe(acc)}", node)
        return self.op("baco.dot", [a, b, acc], out)

    def call_zeros(self, node, shape, dtype=bl.int32):
        if not (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(s, int) and s > 0 for s in shape)):
            raise self.error("zeros() shape must be two positive compile-time integers", node)
        self.check_block_size(shape, node)
        if dtype is not bl.int32:
            raise self.error("zeros() makes int32 accumulator blocks on Gemmini", node)
        return self.op("baco.zeros", [], tensor_type(shape, "i32"))

    def call_relu(self, node, x):
        if not (isinstance(x, Val) and x.is_block):
            raise self.error(f"relu() needs a block, got {describe(x)}", node)
        return self.op("baco.relu", [x], x.type)

    def call_max_pool2d(self, node, x, image, kernel, stride=None, padding=0, valid_rows=None):
        if not (isinstance(x, Val) and x.is_block):
            raise self.error(f"max_pool2d() needs a block, got {describe(x)}", node)
        shape, elem = block_shape(x.type)
        if elem != "i8":
            raise self.error(f"max_pool2d() pools int8 pixels (Gemmini pools on the int8 mvout path, after "
                             f"scale and ReLU), got a {bl.DTYPES[elem].name} block: convert the accumulator "
                             f"block with .to(bl.int8)", node)

        def const_ints(v, what):
            vals = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
            if len(vals) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in vals):
                raise self.error(f"max_pool2d() {what} must be compile-time integers (constexpr), "
                                 f"got {describe(v) if not isinstance(v, tuple) else v}", node)
            return vals
        if not isinstance(image, tuple):
            raise self.error(f"max_pool2d() image must be a (rows, cols) pair, got {describe(image)}", node)
        rows, cols = const_ints(image, "image (rows, cols)")
        k, k2 = const_ints(kernel, "kernel")
        s, s2 = const_ints(kernel if stride is None else stride, "stride")
        upad, lpad = const_ints(padding, "padding")
        if k != k2 or s != s2:
            raise self.error(f"Gemmini pools square windows with one stride (config_st pool_size, pool_stride), "
                             f"got kernel {kernel}, stride {stride}", node)
        if rows * cols != shape[0]:
            raise self.error(f"max_pool2d() image {rows}x{cols} is {rows * cols} pixels but the block has "
                             f"{shape[0]} rows: its rows must be a whole rows x cols tile of output pixels, "
                             f"row-major", node)
        problems = pool_field_problems(rows, cols, k, s, upad, lpad)
        if problems:
            raise self.error("Gemmini cannot pool this on mvout: " + "; ".join(problems), node)
        if valid_rows is None:
            valid_rows = (0, rows)
        if not (isinstance(valid_rows, tuple) and len(valid_rows) == 2):
            raise self.error(f"max_pool2d() valid_rows must be a (lo, hi) pair of integers, got "
                             f"{describe(valid_rows)}", node)
        lo, hi = valid_rows
        if isinstance(lo, int) and not 0 <= lo <= 3 - upad:
            raise self.error(f"max_pool2d() valid_rows starts at row {lo}: Gemmini pads the rows above it "
                             f"(config_st upad = padding {upad} + {lo}), which must be 0..3", node)
        if isinstance(hi, int) and not (lo if isinstance(lo, int) else 0) <= hi <= rows:
            raise self.error(f"max_pool2d() valid_rows ends at row {hi}, outside the image's 0..{rows}", node)
        bounds = [self.as_index(v, "a max_pool2d() valid_rows bound") for v in (lo, hi)]
        if isinstance(lo, Val) or isinstance(hi, Val):     # the rules above, at run time
            lo_v, hi_v = bounds
            bad = [self.cmp_index("slt", lo_v, self.const_index(0)),
                   self.cmp_index("sgt", lo_v, self.const_index(3 - upad)),
                   self.cmp_index("slt", hi_v, lo_v), self.cmp_index("sgt", hi_v, self.const_index(rows))]
            failed = bad[0]
            for b in bad[1:]:
                failed = self.arith("ori", failed, b, "i1")
            self.runtime_check(failed, POOL_VALID_ROWS, node)
            self.node = node
        out = tensor_type([pooled_size(rows, k, s, upad) * pooled_size(cols, k, s, lpad), shape[1]], "i8")
        attrs = (f"image = array<i64: {rows}, {cols}>, kernel = {k} : i64, stride = {s} : i64, "
                 f"padding = array<i64: {upad}, {lpad}>")
        return self.op("baco.max_pool", [x, *bounds], out, attrs)

    def convert(self, x, dt, node):
        if not isinstance(dt, bl.dtype):
            raise self.error(f".to() needs a baco dtype (bl.int8, bl.int32), got {describe(dt)}", node)
        shape, elem = block_shape(x.type)
        if elem == dt.mlir:
            return x
        if dt.mlir not in ("i8", "i32"):
            raise self.error(f"blocks convert to int8 or int32, not {dt.name}", node)
        return self.op("baco.convert", [x], tensor_type(shape, dt.mlir))


def describe(v) -> str:
    if isinstance(v, Val):
        if v.is_block:
            shape, elem = block_shape(v.type)
            return f"{bl.DTYPES[elem].name} block {shape}"
        if v.is_ptr:
            return "block pointer"
        if v.is_memref:
            return "pointer"
        return {"index": "integer scalar", "f32": "float scalar"}.get(v.type, v.type)
    return f"{type(v).__name__} {v!r}" if isinstance(v, (int, float, bool, str)) else type(v).__name__


def lang_name(fn):
    mod = getattr(fn, "__module__", "")
    name = getattr(fn, "__name__", None)
    if mod.startswith("baco.frontend.language") and name in LANG_FUNCS:
        return name
    return None


def is_lang_call(node, name):
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == name) or (isinstance(f, ast.Name) and f.id == name)


def assignment_of(name: str, stmts):
    """The first statement in `stmts` (nested included) that assigns `name`: where a loop
    error about that name belongs."""
    for s in stmts:
        for n in ast.walk(s):
            targets = n.targets if isinstance(n, ast.Assign) else \
                [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
            if any(isinstance(x, ast.Name) and x.id == name for t in targets for x in ast.walk(t)):
                return n
    return None


def assigned_names(stmts):
    names = []
    for s in stmts:
        for n in ast.walk(s):
            targets = []
            if isinstance(n, ast.Assign):
                targets = n.targets
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                targets = [n.target]
            for t in targets:
                for x in ast.walk(t):
                    if isinstance(x, ast.Name) and x.id not in names:
                        names.append(x.id)
    return names
