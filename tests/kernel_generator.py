"""A generator of kernels and launches (issue L, item 1): case `seed` is a random well-formed
block kernel of baco.language with a random launch, a random mutation of one (a located
CompilationError, a located run-time error, or a TypeError/ValueError naming the argument),
or a random call of a shipped kernel (baco.kernels.*), with the outcome it must have.

Each case is drawn from its seed alone (`case(seed)`), so a failing seed is its own
regression test. Kernels are drawn from `seed // LAUNCHES_PER_KERNEL` and launches from the
seed, so neighbouring seeds share a kernel (and its compiled specialization) and vary the
run-time arguments. Results are checked against a numpy model of the generated description
written here (the windows each program reads and writes, Gemmini's int32 accumulation,
OS saturation, ReLU, float32 scale with round-half-even, int8 saturation, max pooling),
independent of the compiler and of its interpreter.

Kernel families (each a small grammar over the language):
- gemm: 1-D/2-D grids (program_id, num_programs, cdiv), run-time or expression strides,
  a column-major B (order=(0, 1)), `ptr + n` bases, run-time row offsets (negative too), bias rows at stride 0, every loop
  form (cdiv/advance, range with a step, run-time and constexpr bounds and steps of either
  sign, min/max bounds, nested loops), three accumulation forms, scalar `//`/`%` with a
  run-time divisor, epilogues int32, int8 through a run-time or constexpr scale (1.0, NaN,
  inf included), ReLU, WS/OS, double buffering, Gemminis of DIM 8, 16 and 32;
- pool: a dot read out through max_pool2d (kernel, stride, padding, run-time valid_rows,
  a stored block at a run-time row offset);
- chain: two chained dots (relu(h * s1).to(int8) as the second A);
- sum: two scaled int8 loads summed in the accumulator, or a plain int8 copy; or a 3-D block
  pointer (slices of rows, a run-time slice stride, slices and rows outside the array) loaded
  as one block and multiplied.
Mutations insert a bad statement at a random place (bad types, shapes, out-of-range
constexprs, unsupported constructs), pass a zero divisor or step at run time, break one
launch argument, or break one argument of a shipped-kernel call.

Seeds from ENTRY_POINTS on launch the widened gemm kernels through the other entry points:
- schedule: `kernel[grid](..., schedule=s)` (a GemmSchedule, its dict or a tuple; blocks of 1
  to 64, not all multiples of DIM) checked under the schedule's blocks, or a broken schedule
  (an argument error naming `schedule`) or one over the accumulator (a located compile error);
- autotune: `@baco.autotune` with random configs (some the compiler rejects, which it skips),
  keys, pruning (early_config_prune, perf_model with a count or a fraction as top_k), timed
  alone or end to end on the ISS, cached or not: the result under the chosen config, the
  choice one of the kept candidates that compile (the generator's own model of the pruning);
  or a broken argument of autotune or of the launch (an error naming it);
- aot: `kernel.compile()` with one launch's arguments, `ck.run(grid, args)` on another's: the
  second's result, or a broken compile (a constexpr missing, unknown, beyond i64, beyond any
  memory, of the wrong type) or run (the arguments' number, element types, layout, a float
  integer, the grid, an integer compiled as the constant 1, a zero divisor).

`classify(case, target)` gives the outcome of one run; `run_isolated` runs cases in a
worker process with a time limit per case, so a hang or a crash is an outcome too. Used by
tests/test_kernel_generator.py and benchmarks/fuzz_report.py --generated."""
from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
import re
import select
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from baco.errors import CompilationError, KernelRuntimeError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import GemminiFault
from tests.fuzz_corpus import MARK, Case, corpus_dir, window

LAUNCHES_PER_KERNEL = 8
GOOD = ("bit-exact", "compile error", "argument error", "run-time error")
BAD = ("wrong result", "unexpected outcome", "internal error", "unlocated error", "crash", "hang")
SPATIAL_BITS = 20          # the default GemminiConfig's array output width (OS partial sums)
NAN, INF = float("nan"), float("inf")


# ---- Gemmini's arithmetic, restated in numpy for the reference ----------------------------
def sat(x, bits):
    return np.clip(np.asarray(x, np.int64), -(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def scaled(x, scale, bits=32):
    """int -> float32, times the float32 scale (RNE), rounded half to even, NaN -> 0, saturated."""
    with np.errstate(invalid="ignore", over="ignore"):
        y = (np.asarray(x, np.int64).astype(np.float32) * np.float32(scale)).astype(np.float64)
    y = np.where(np.isnan(y), 0.0, np.clip(np.rint(y), -2.0 ** 62, 2.0 ** 62))
    return sat(y.astype(np.int64), bits)


def readout(acc, scale=1.0, relu=False):
    """The accumulator's int8 read-out: ReLU, scale, int8 saturation."""
    acc = np.asarray(acc, np.int64)
    if relu:
        acc = np.maximum(acc, 0)
    return sat(scaled(acc, scale), 8).astype(np.int8)


def put(dst, r0, c0, block, rows_limit=None, cols_limit=None):
    """Store `block` at (r0, c0) of dst, clipped to [0, rows_limit) x [0, cols_limit)."""
    rows_limit = dst.shape[0] if rows_limit is None else rows_limit
    cols_limit = dst.shape[1] if cols_limit is None else cols_limit
    r, c = np.arange(r0, r0 + block.shape[0]), np.arange(c0, c0 + block.shape[1])
    rm, cm = (r >= 0) & (r < rows_limit), (c >= 0) & (c < cols_limit)
    dst[np.ix_(r[rm], c[cm])] = block[np.ix_(rm, cm)].astype(dst.dtype)


def pool(pixels, rows, cols, k, stride, upad, lpad):
    """Max over k x k windows of the rows x cols image (one pixel per row of `pixels`); window
    positions outside the image count as 0."""
    ch = pixels.shape[1]
    img = np.asarray(pixels[:rows * cols], np.int64).reshape(rows, cols, ch)
    pr, pc = (rows + 2 * upad - k) // stride + 1, (cols + 2 * lpad - k) // stride + 1
    out = np.zeros((pr, pc, ch), np.int64)
    for i in range(pr):
        for j in range(pc):
            best = None
            for wr in range(k):
                for wc in range(k):
                    y, x = i * stride - upad + wr, j * stride - lpad + wc
                    v = img[y, x] if 0 <= y < rows and 0 <= x < cols else np.zeros(ch, np.int64)
                    best = v if best is None else np.maximum(best, v)
            out[i, j] = best
    return out.reshape(pr * pc, ch).astype(np.int8), pc


def cdiv(a, b):
    return -(-a // b)


def int8s(rng, shape, extreme=False):
    if extreme and rng.random() < 0.5:
        return rng.choice(np.array([-128, -127, 0, 126, 127], np.int8), shape)
    return rng.integers(-128, 128, shape).astype(np.int8)


# ---- kernel text ------------------------------------------------------------------------
def source(params: list[str], body: list[str]) -> str:
    lines = [f"def KERNEL({', '.join(params)}):"]
    for stmt in body:
        lines += ["    " + line for line in stmt.split("\n")]
    return "\n".join(lines) + "\n"


def indent(stmt: str, levels: int) -> str:
    return "\n".join("    " * levels + line for line in stmt.split("\n"))


SCALES = (1.0, 0.5, 0.0125, -0.03, 2.0 ** -7, 1e-7, 3.0, NAN, INF, -INF)
CONST_SCALES = (1.0, 0.25, 0.0078125, 0.03, -0.5, NAN, INF)
# (statement, needs acc, message): a bad statement inserted at a random place of a good kernel; run-time
# values in them are program ids, never a launch integer (an argument equal to 1 is a compile-time constant)
BAD_STATEMENTS = [
    ("bad = @@bl.zeros((BM, BN), dtype=bl.int8)", False, "zeros() makes int32 accumulator blocks"),
    ("bad = @@M ** 2", False, "operator Pow"),
    ("bad = @@bl.program_id(0) / 2", False, "use // for division"),
    ("bad = @@BM // (BM - BM)", False, "division or modulo by zero"),
    ("bad = @@BN % (BK - BK)", False, "division or modulo by zero"),
    ("bad = @@bl.cdiv(BM, BK - BK)", False, "cdiv() by zero"),
    ("for i in @@range(0, M, BK - BK):\n    pass", False, "range() step must not be zero"),
    ("bad = @@bl.relu(M)", False, "relu() needs a block"),
    ("bad = @@acc.to(bl.float32)", True, "blocks convert to int8 or int32"),
    ("bad = @@bl.max_pool2d(acc.to(bl.int8), (BM // 4, 4), 4)", True, "outside 1..3"),
    ("bad = @@bl.max_pool2d(acc.to(bl.int8), (BM // 4, 4), 2, 1, 4)", True, "outside 0..3"),
    ("bad = @@bl.max_pool2d(acc, (BM // 4, 4), 2)", True, "max_pool2d() pools int8 pixels"),
    ("bad = @@bl.program_id(3)", False, "the grid axis must be the constant"),
    ("bad = @@bl.num_programs(M * 7)", False, "the grid axis must be the constant"),
    ("bad = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(BM - BM, BK))",
     False, "block_shape must be positive"),
    ("bad = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K + 2, 2), offsets=(0, 0), block_shape=(BM, BK))",
     False, "no dimension has stride 1"),
    ("bad = @@bl.dot(acc, acc)", True, "Gemmini dot() multiplies int8 blocks"),
    ("bad = @@acc * acc", True, "elementwise block * block is not supported"),
    ("if @@bl.program_id(0) > 3:\n    pass", False, "comparisons of runtime values"),
    ("bad = @@undefined_thing", False, "name `undefined_thing` is not defined"),
    ("bad = @@bl.load(M)", False, "load() needs a block pointer"),
    ("@@bl.store(c_ptr + N, acc)", True, "store() needs a block pointer, got pointer"),
    ("bad = @@a_ptr * 2", False, "a pointer can only be moved by adding an integer"),
    ("bad = M if @@bl.program_id(0) else N", False, "needs a compile-time condition"),
    ("bad = @@bl.zeros((bl.program_id(0), BN))", False, "zeros() shape must be two positive"),
    ("bad = @@bl.cdiv(acc, 2)", True, "must be an integer scalar"),
    ("bad = @@[i for i in range(3)]", False, "unsupported expression"),
    ("@@while M > 0:\n    pass", False, "while loops are not supported"),
    ("bad = min(M, @@a_ptr)", False, "an argument of min() must be an integer scalar, got pointer"),
    ("bad = @@acc.to(bl.int8) * acc.to(bl.int8)", True, "elementwise block * block is not supported"),
]


class GemmKernel:
    """The gemm family: one random kernel (its text and what the reference needs)."""

    def __init__(self, rng, wide=None):
        c = lambda *xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
        self.bm, self.bn, self.bk = c(16, 32), c(16, 32), c(16, 32, 64)
        self.grid1d = rng.random() < 0.3
        self.runtime_strides = rng.random() < 0.4
        self.base_offset = rng.random() < 0.25
        self.row_offset = rng.random() < 0.35
        self.loop = c("cdiv_advance", "step_advance", "runtime_range", "constexpr_range", "negative_step",
                      "minmax", "nested")
        self.acc_form = c("iadd", "dot_acc", "add")
        self.bias = rng.random() < 0.3
        self.divide = rng.random() < 0.3
        self.epilogue = c("int32", "int8", "relu8", "relu_first8", "to8")
        self.constexpr_scale = rng.random() < 0.35
        self.const_scale = c(*CONST_SCALES)
        self.dataflow = c("WS", "WS", "OS")
        self.double_buffer = rng.random() < 0.3
        self.kb_range = (c(0, 1, 2), c(1, 3, 5), c(1, 1, 2)) if rng.random() < 0.7 else (c(3, 4), -1, c(-1, -2))
        self.checked = rng.random() < 0.9      # unchecked loads only with exact multiples
        if not self.checked and self.loop in ("runtime_range", "constexpr_range", "nested"):
            self.loop = "cdiv_advance"         # (those visit K blocks past the end, which only a checked load reads as 0)
        self.b_column_major = rng.random() < 0.25     # B given as (N, K): a column-major view, order=(0, 1)
        self.dim = c(16, 16, 16, 8, 32)               # the Gemmini's DIM (config=)
        if self.dataflow == "OS":
            self.b_column_major = False    # OS cannot transpose B alone: a located compile error, by design
        # widened seeds (`wide`, the kernel's second stream): an optional bias pointer (`bias_ptr=None`,
        # `if bias_ptr is not None:`, passed or not per launch) and an epilogue chosen per launch by
        # constexpr flags (`if OUT8:` / `if RELU:`, a run-time scale)
        self.optional_bias = wide is not None and not self.bias and wide.random() < 0.4
        if wide is not None and wide.random() < 0.35:
            self.epilogue, self.constexpr_scale = "flags", False
        self.names = ("BM", "BN", "BK")      # the block sizes' constexprs (BLOCK_M/N/K take a schedule=)

    # the K-block indices the loop visits, given the launch (and the BK it runs with)
    def kbs(self, K, klo=0, khi=0, step=1, bk=None):
        n = cdiv(K, bk or self.bk)
        if self.loop in ("cdiv_advance", "step_advance"):
            return list(range(n))
        if self.loop == "runtime_range":
            return list(range(klo, khi, step))
        if self.loop == "constexpr_range":
            return list(range(*self.kb_range))
        if self.loop == "negative_step":
            return list(range(n - 1, -1, -1))
        if self.loop == "minmax":
            return list(range(max(0, klo), min(n, khi)))
        return [k0 + k1 for k0 in range(0, n, 2) for k1 in range(2)]

    def grid(self, M, N, off, bm=None, bn=None):
        """The launch grid: every block row of C (and those a negative row offset moves in) x
        every block column, 1-D or 2-D."""
        bm, bn = bm or self.bm, bn or self.bn
        gm, gn = cdiv(M, bm) + (cdiv(-off, bm) if off < 0 else 0), cdiv(N, bn)
        return (gm * gn,) if self.grid1d else (gm, gn)

    def params(self):
        p = ["a_ptr", "b_ptr", "c_ptr"] + (["bias_ptr"] if self.bias else []) + ["M", "N", "K"]
        p += ["SA", "SB", "SC"] if self.runtime_strides else []
        p += ["R0"] if self.base_offset else []
        p += ["OFF"] if self.row_offset else []
        p += ["KLO", "KHI", "STEP"] if self.loop == "runtime_range" else ["KLO", "KHI"] if self.loop == "minmax" else []
        p += ["D"] if self.divide else []
        p += ["scale"] if self.epilogue in ("int8", "relu8", "relu_first8", "flags") and not self.constexpr_scale else []
        p += ["BM: bl.constexpr", "BN: bl.constexpr", "BK: bl.constexpr"]
        p += ["S: bl.constexpr"] if self.epilogue in ("int8", "relu8", "relu_first8") and self.constexpr_scale else []
        p += ["OUT8: bl.constexpr", "RELU: bl.constexpr"] if self.epilogue == "flags" else []
        p += ["bias_ptr=None"] if self.optional_bias else []
        return p

    def body(self, mutation=None):
        """Statements (top level), the index after which acc exists, and the loop's position."""
        sa, sb, sc = ("SA", "SB", "SC") if self.runtime_strides else ("K", "N", "N")
        bc = ", boundary_check=(0, 1)" if self.checked else ""
        body = []
        if self.grid1d:
            body += ["gn = bl.cdiv(N, BN)", "pm = bl.program_id(0) // gn",
                     "pn = bl.program_id(0) % bl.num_programs(0) % gn"]
        else:
            body += ["pm = bl.program_id(0)", "pn = bl.program_id(1)"]
        row0 = "pm * BM" + (" + OFF" if self.row_offset else "")
        if self.divide:
            body.append("z = @@M // D - M // D + (N % D - N % D)")
            row0 += " + z"
        body.append(f"row0 = {row0}")
        base_a = "a_ptr + R0 * " + sa if self.base_offset else "a_ptr"
        bs_b = "(BK + 16, BN)" if mutation == "dot_shape" else "(BK, BN)"
        a_ptr = lambda off: (f"bl.make_block_ptr({base_a}, shape=(M, K), strides=({sa}, 1), offsets=(row0, {off}), "  # noqa: E731
                             f"block_shape=(BM, BK))")
        b_strides, order = (f"(1, {'SB' if self.runtime_strides else 'K'})", ", order=(0, 1)") \
            if self.b_column_major else (f"({sb}, 1)", "")
        b_ptr = lambda off: (f"bl.make_block_ptr(b_ptr, shape=(K, N), strides={b_strides}, offsets=({off}, pn * BN), "  # noqa: E731
                             f"block_shape={bs_b}{order})")
        bias_load = ("acc = bl.load(bl.make_block_ptr(bias_ptr, shape=(M, N), strides=(0, 1), "
                     "offsets=(row0, pn * BN), block_shape=(BM, BN)), boundary_check=(0, 1))")
        if self.bias:
            body.append(bias_load)
        elif self.optional_bias:
            body.append("\n".join(["if bias_ptr is not None:", indent(bias_load, 1), "else:",
                                   indent("acc = bl.zeros((BM, BN), dtype=bl.int32)", 1)]))
        else:
            body.append("acc = bl.zeros((BM, BN), dtype=bl.int32)")
        acc_at = len(body)
        dot_mark = MARK if mutation == "dot_shape" else ""
        if self.acc_form == "iadd":
            step = [f"acc += {dot_mark}bl.dot(bl.load(a{bc}), bl.load(b{bc}))"]
        elif self.acc_form == "dot_acc":
            step = [f"acc = {dot_mark}bl.dot(bl.load(a{bc}), bl.load(b{bc}), acc)"]
        else:
            step = [f"x = bl.load(a{bc})", f"y = bl.load(b{bc})", f"acc = acc + {dot_mark}bl.dot(x, y)"]
        advancing = self.loop in ("cdiv_advance", "step_advance")
        if advancing:
            body += [f"a = {a_ptr(0)}", f"b = {b_ptr(0)}"]
            header = "for _ in range(bl.cdiv(K, BK)):" if self.loop == "cdiv_advance" else "for k in range(0, K, BK):"
            inner = step + ["a = bl.advance(a, (0, BK))", "b = bl.advance(b, (BK, 0))"]
            loop = [header] + [indent(s, 1) for s in inner]
        else:
            fresh = [f"a = {a_ptr('kb * BK')}", f"b = {b_ptr('kb * BK')}"] + step
            if self.loop == "nested":
                loop = ["for k0 in range(0, bl.cdiv(K, BK), 2):", indent("for k1 in range(2):", 1),
                        indent("kb = k0 + k1", 2)] + [indent(s, 2) for s in fresh]
            else:
                header = {"runtime_range": "for kb in @@range(KLO, KHI, STEP):",
                          "constexpr_range": "for kb in range({}, {}, {}):".format(*self.kb_range),
                          "negative_step": "for kb in range(bl.cdiv(K, BK) - 1, -1, -1):",
                          "minmax": "for kb in range(max(0, KLO), min(bl.cdiv(K, BK), KHI)):"}[self.loop]
                loop = [header] + [indent(s, 1) for s in fresh]
        loop_at = len(body)
        body.append("\n".join(loop))
        body.append(f"c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=({sc}, 1), offsets=(row0, pn * BN), "
                    "block_shape=(BM, BN))")
        scale = "S" if self.constexpr_scale else "scale"
        store_mark = MARK if mutation == "store_dtype" else ""
        if self.epilogue == "flags":
            body.append("\n".join(["if OUT8:", indent("out = acc * scale", 1), indent("if RELU:", 1),
                                   indent("out = bl.relu(out)", 2), indent(f"bl.store(c, out.to(bl.int8){bc})", 1),
                                   "else:", indent(f"bl.store(c, acc{bc})", 1)]))
            return body, acc_at, loop_at
        value = {"int32": "acc", "int8": f"(acc * {scale}).to(bl.int8)",
                 "relu8": f"bl.relu(acc * {scale}).to(bl.int8)",
                 "relu_first8": f"(bl.relu(acc) * {scale}).to(bl.int8)", "to8": "acc.to(bl.int8)"}[self.epilogue]
        body.append(f"{store_mark}bl.store(c, {value}{bc})")
        return body, acc_at, loop_at

    def text(self, mutation=None, insert=None):
        """The kernel's source; `mutation` keeps its marker (zero_divisor, zero_step, dot_shape,
        store_dtype); `insert` = (statement, position) puts a bad statement at a top-level
        position (an int) or as the first statement of the loop (position "loop")."""
        body, acc_at, loop_at = self.body(mutation)
        keep = {"zero_divisor": "z = @@", "zero_step": "@@range(KLO"}.get(mutation)
        body = [s if keep and keep in s else s.replace("z = @@", "z = ").replace("@@range(KLO", "range(KLO")
                for s in body]
        if insert is not None:
            stmt, where = insert
            if where == "loop":
                header, rest = body[loop_at].split("\n", 1)
                body[loop_at] = header + "\n" + indent(stmt, 1) + "\n" + rest
            else:
                body.insert(where, stmt)
        text = source(self.params(), body)
        for short, name in zip(("BM", "BN", "BK"), self.names):
            text = re.sub(rf"\b{short}\b", name, text)
        return text

    def insert_positions(self, needs_acc):
        body, acc_at, loop_at = self.body()
        first = acc_at + 1 if needs_acc else 0
        return list(range(first, len(body) + 1)) + ["loop"]

    def int8_out(self, flags=None):
        return flags["OUT8"] if self.epilogue == "flags" else self.epilogue != "int32"

    def scale_value(self, launch_scale, flags=None):
        if self.epilogue == "to8":
            return 1.0, False
        if self.epilogue == "flags":
            return launch_scale, flags["RELU"]
        s = self.const_scale if self.constexpr_scale else launch_scale
        return s, self.epilogue in ("relu8", "relu_first8")


def gemm_launch(kernel: GemmKernel, rng, name, category="gemm", expect="result", like=None):
    """A random launch of a gemm kernel with its reference (a Case). `like` (a previous launch
    of the kernel) fixes the constexpr choices (epilogue flags, whether the bias is passed), so
    one ahead-of-time compile serves both. `case.reference(blocks)` gives the result under other
    block sizes and dataflow ((BM, BN, BK, dataflow): a schedule's or an autotune choice)."""
    g = kernel
    sizes = (1, 2, 7, 15, 16, 17, 31, 32, 33, 48, 50, 64, 65)
    if g.checked:
        M, N, K = (int(rng.choice(sizes)) for _ in range(3))
    else:     # unchecked loads and stores: whole blocks only
        M, N, K = g.bm * int(rng.integers(1, 3)), g.bn * int(rng.integers(1, 3)), g.bk * int(rng.integers(1, 3))
    pads = [int(rng.integers(0, 9)) if g.runtime_strides else 0 for _ in range(3)]
    r0 = int(rng.integers(0, 6)) if g.base_offset else 0
    off = int(rng.integers(-40, 13)) if g.row_offset and g.checked else 0
    klo, khi, step = 0, 0, 1
    if g.loop == "runtime_range":
        step = int(rng.choice([1, 1, 2, 3, -1, -2]))
        n = cdiv(K, g.bk) + 1
        klo, khi = (int(rng.integers(0, n)), int(rng.integers(0, n + 1))) if step > 0 else \
            (int(rng.integers(0, n)), int(rng.integers(-1, n)))
    elif g.loop == "minmax":
        klo, khi = int(rng.integers(-3, 3)), int(rng.integers(0, cdiv(K, g.bk) + 3))
    d = int(rng.choice([-7, -3, -1, 1, 2, 5, 1000]))
    launch_scale = float(rng.choice(SCALES))
    flags = dict(OUT8=bool(rng.random() < 0.6), RELU=bool(rng.random() < 0.5)) if g.epilogue == "flags" else {}
    pass_bias = g.optional_bias and rng.random() < 0.6
    if like is not None:
        flags, pass_bias = dict(like.flags), like.pass_bias
    extreme = g.dataflow == "WS"
    a_buf = int8s(rng, (r0 + M, K + pads[0]), extreme)
    b_buf = int8s(rng, (N, K + pads[1]) if g.b_column_major else (K, N + pads[1]), extreme)
    out = np.int8 if g.int8_out(flags) else np.int32
    c_buf = rng.integers(-100, 100, (M, N + pads[2])).astype(out)
    bias = rng.integers(-(1 << 20), 1 << 20, N).astype(np.int32)
    grid = g.grid(M, N, off)
    args = [a_buf, b_buf, c_buf] + ([bias] if g.bias else []) + [M, N, K]
    args += [K + pads[0], (K if g.b_column_major else N) + pads[1], N + pads[2]] if g.runtime_strides else []
    args += [r0] if g.base_offset else []
    args += [off] if g.row_offset else []
    args += [klo, khi, step] if g.loop == "runtime_range" else [klo, khi] if g.loop == "minmax" else []
    args += [d] if g.divide else []
    args += [launch_scale] if "scale" in g.params() else []
    bm, bn, bk = g.names
    meta = {bm: g.bm, bn: g.bn, bk: g.bk, **flags, **({"bias_ptr": bias} if pass_bias else {})}
    if "S: bl.constexpr" in g.params():
        meta["S"] = g.const_scale
    options = dict(dataflow=g.dataflow, double_buffer=g.double_buffer)
    if g.dim != 16:
        options["config"] = GemminiConfig(dim=g.dim)
    c0 = c_buf.copy()

    def run(kernel, target="sim", _args=args, _grid=grid):
        _args[2][...] = c0
        kernel[_grid](*_args, **meta, **options, target=target)
        return {"c": _args[2].copy()}

    def reference(blocks=None):
        blk_m, blk_n, blk_k, dataflow = blocks or (g.bm, g.bn, g.bk, g.dataflow)
        a = a_buf[r0:r0 + M, :K].astype(np.int64)
        b = (b_buf[:, :K].T if g.b_column_major else b_buf[:, :N]).astype(np.int64)
        c = c0.copy()
        scale, relu = g.scale_value(launch_scale, flags)
        for pm in range(cdiv(M, blk_m) + (cdiv(-off, blk_m) if off < 0 else 0)):
            for pn in range(cdiv(N, blk_n)):
                row0, col0 = pm * blk_m + off, pn * blk_n
                acc = window(bias[None, :].repeat(M, 0), row0, col0, blk_m, blk_n) if g.bias or pass_bias else \
                    np.zeros((blk_m, blk_n), np.int64)
                for kb in g.kbs(K, klo, khi, step, blk_k):
                    part = window(a, row0, kb * blk_k, blk_m, blk_k) @ window(b, kb * blk_k, col0, blk_k, blk_n)
                    acc = acc + (sat(part, SPATIAL_BITS) if dataflow == "OS" else part)
                acc = (acc.astype(np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)      # the int32 accumulator
                value = acc if out == np.int32 else readout(acc, scale, relu)
                put(c, row0, col0, value, M, N)
        return {"c": c}
    case = Case(name, category, expect, g.text(), run, reference=reference)
    case.grid, case.args, case.meta, case.options = grid, args, meta, options
    case.flags, case.pass_bias, case.sizes, case.c0 = flags, pass_bias, (M, N, off), c0
    case.k_loop = (klo, khi, step)
    # the run-time arguments of the compiled kernel, in its parameters' order (bias_ptr comes last)
    case.runtime = list(args) + ([bias] if pass_bias else [])
    return case


# ---- the pool family -------------------------------------------------------------------------
class PoolKernel:
    def __init__(self, rng):
        c = lambda *xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
        self.kernel = c(1, 2, 3)
        self.stride = c(1, 2, 3)
        self.upad, self.lpad = c(0, 0, 1, 2), c(0, 1, 2)
        self.lpad = min(self.lpad, self.kernel - 1) if self.kernel > 1 else 0
        self.upad = min(self.upad, self.kernel - 1) if self.kernel > 1 else 0
        self.rows, self.cols = c(4, 5, 6, 8), c(3, 4, 5, 7)
        self.bn, self.bk = c(16, 32), c(16, 32)
        self.relu = rng.random() < 0.5
        self.scaled = rng.random() < 0.6
        self.valid = rng.random() < 0.6
        self.dataflow = c("WS", "OS")
        self.pr = (self.rows + 2 * self.upad - self.kernel) // self.stride + 1
        self.pc = (self.cols + 2 * self.lpad - self.kernel) // self.stride + 1

    def text(self, mutation=None):
        rows_px = self.rows * self.cols
        x = "(acc * scale)" if self.scaled else "acc"
        x = f"bl.relu({x})" if self.relu else x
        valid = ", valid_rows=(LO, HI)" if self.valid else ""
        pool_mark = MARK if mutation == "valid_rows" else ""
        store_mark = MARK if mutation == "negative_row" else ""
        body = [f"a = bl.load(bl.make_block_ptr(a_ptr, shape=({rows_px}, K), strides=(K, 1), offsets=(0, 0), "
                f"block_shape=({rows_px}, BK)), boundary_check=(0, 1))",
                "b = bl.load(bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, bl.program_id(0) * BN), "
                "block_shape=(BK, BN)), boundary_check=(0, 1))",
                "acc = bl.dot(a, b)",
                f"pooled = {pool_mark}bl.max_pool2d({x}.to(bl.int8), ({self.rows}, {self.cols}), {self.kernel}, "
                f"{self.stride}, ({self.upad}, {self.lpad}){valid})",
                f"p = bl.make_block_ptr(p_ptr, shape=(PM, N), strides=(N, 1), offsets=(OFF, bl.program_id(0) * BN), "
                f"block_shape=({self.pr * self.pc}, BN))",
                f"{store_mark}bl.store(p, pooled, boundary_check=(0, 1))"]
        params = ["a_ptr", "b_ptr", "p_ptr", "K", "N", "PM", "OFF"] + (["LO", "HI"] if self.valid else []) + \
            (["scale"] if self.scaled else []) + ["BN: bl.constexpr", "BK: bl.constexpr"]
        return source(params, body)


def pool_launch(pk: PoolKernel, rng, name, mutation=None):
    K = int(rng.integers(1, pk.bk + 1))
    N = int(rng.integers(1, 2 * pk.bn + 1))
    npx = pk.rows * pk.cols
    lo, hi = 0, pk.rows
    if pk.valid:
        lo = int(rng.integers(0, 3 - pk.upad + 1))
        hi = int(rng.integers(lo, pk.rows + 1))
        if mutation == "valid_rows":
            lo, hi = ((4 - pk.upad + int(rng.integers(0, 3)), pk.rows) if rng.random() < 0.4 else
                      (-1 - int(rng.integers(0, 3)), hi) if rng.random() < 0.5 else (lo, pk.rows + 1 + int(rng.integers(0, 3))))
    pooled_rows = pk.pr * pk.pc
    pm = pooled_rows + int(rng.integers(-pooled_rows + 1, 8))
    off = int(rng.integers(0, 6))
    if mutation == "negative_row":
        off = -int(rng.integers(1, 6))
    scale = float(rng.choice(SCALES))
    a = int8s(rng, (npx, K))
    b = int8s(rng, (K, N))
    p0 = rng.integers(-100, 100, (pm, N)).astype(np.int8)
    p = p0.copy()
    args = [a, b, p, K, N, pm, off] + ([lo, hi] if pk.valid else []) + ([scale] if pk.scaled else [])
    grid = (cdiv(N, pk.bn),)

    def run(kernel, target="sim"):
        p[...] = p0
        kernel[grid](*args, BN=pk.bn, BK=pk.bk, dataflow=pk.dataflow, target=target)
        return {"p": p.copy()}

    def reference():
        out = p0.copy()
        for g in range(grid[0]):
            col0 = g * pk.bn
            part = window(a.astype(np.int64), 0, 0, npx, pk.bk) @ window(b.astype(np.int64), 0, col0, pk.bk, pk.bn)
            acc = sat(part, SPATIAL_BITS) if pk.dataflow == "OS" else part
            px = readout(acc, scale if pk.scaled else 1.0, pk.relu).astype(np.int64)
            px[:lo * pk.cols] = 0
            px[hi * pk.cols:] = 0
            pooled, pc = pool(px, pk.rows, pk.cols, pk.kernel, pk.stride, pk.upad, pk.lpad)
            inside_rows = int(((np.arange(off, off + pooled_rows) >= 0) & (np.arange(off, off + pooled_rows) < pm)).sum())
            whole = inside_rows // pc * pc        # a pooled mvout writes whole pooled rows
            put(out, off, col0, pooled[:whole], pm, N)
        return {"p": out}
    if mutation == "valid_rows":
        return Case(name, "pool", "runtime", pk.text(mutation), run, match="valid_rows (lo, hi) must satisfy",
                    exc=(KernelRuntimeError,), located=True)
    if mutation == "negative_row":
        return Case(name, "pool", "runtime", pk.text(mutation), run, match="negative row offset",
                    exc=(KernelRuntimeError,), located=True)
    return Case(name, "pool", "result", pk.text(), run, reference=reference)


# ---- chained dots and the int8-sum family --------------------------------------------------------
def chain_case(rng, krng, name):
    c = lambda *xs: xs[int(krng.integers(len(xs)))]  # noqa: E731
    dataflow = c("WS", "OS")
    const = krng.random() < 0.5
    s1 = c(1.0, 0.5, 0.25, 2.0 ** -6) if (const and dataflow == "OS") else c(1.0, 0.03, 0.5, NAN, 0.0078125)
    s2 = c(1.0, 0.25, 0.01, INF)
    relu = krng.random() < 0.6
    d1, d2, d3 = c(16, 32), c(16, 32), c(16, 32)
    h = f"(h * {'S1' if const else 's1'})"
    h = f"bl.relu({h})" if relu else h
    body = [f"x = bl.load(bl.make_block_ptr(x_ptr, shape=(M, {d1}), strides=({d1}, 1), offsets=(0, 0), "
            f"block_shape=(32, {d1})), boundary_check=(0, 1))",
            f"w1 = bl.load(bl.make_block_ptr(w1_ptr, shape=({d1}, {d2}), strides=({d2}, 1), offsets=(0, 0), "
            f"block_shape=({d1}, {d2})))",
            f"w2 = bl.load(bl.make_block_ptr(w2_ptr, shape=({d2}, {d3}), strides=({d3}, 1), offsets=(0, 0), "
            f"block_shape=({d2}, {d3})))",
            "h = bl.dot(x, w1)", f"y = bl.dot({h}.to(bl.int8), w2)",
            f"bl.store(bl.make_block_ptr(y_ptr, shape=(M, {d3}), strides=({d3}, 1), offsets=(0, 0), "
            f"block_shape=(32, {d3})), (y * s2).to(bl.int8), boundary_check=(0, 1))"]
    params = ["x_ptr", "w1_ptr", "w2_ptr", "y_ptr", "M", "s2"] + (["S1: bl.constexpr"] if const else ["s1"])
    M = int(rng.integers(1, 33))
    small = rng.random() < 0.5
    gen = (lambda shape: rng.integers(-6, 7, shape).astype(np.int8)) if small else (lambda shape: int8s(rng, shape))
    x, w1, w2 = gen((M, d1)), gen((d1, d2)), gen((d2, d3))
    y0 = rng.integers(-100, 100, (M, d3)).astype(np.int8)
    y = y0.copy()
    s2v = float(rng.choice((s2, 0.02, 1.0)))
    args = [x, w1, w2, y, M, s2v] + ([] if const else [s1])
    meta = {"S1": s1} if const else {}

    def run(kernel, target="sim"):
        y[...] = y0
        kernel[(1,)](*args, **meta, dataflow=dataflow, target=target)
        return {"y": y.copy()}

    def reference():
        p1 = x.astype(np.int64) @ w1.astype(np.int64)
        p1 = sat(p1, SPATIAL_BITS) if dataflow == "OS" else p1
        hid = readout(p1, s1, relu).astype(np.int64)
        p2 = hid @ w2.astype(np.int64)
        p2 = sat(p2, SPATIAL_BITS) if dataflow == "OS" else p2
        return {"y": readout(p2, s2v)}
    return Case(name, "chain", "result", source(params, body), run, reference=reference)


def sum_case(rng, krng, name):
    """bl.load(p) * SA + bl.load(q) * SB through the accumulator (or a plain int8 copy)."""
    c = lambda *xs: xs[int(krng.integers(len(xs)))]  # noqa: E731
    bm, bn = c(16, 32, 64), c(16, 32)
    copy = krng.random() < 0.25
    relu = krng.random() < 0.5
    const = krng.random() < 0.4
    ptr = lambda base: (f"bl.make_block_ptr({base}, shape=(M, N), strides=(N, 1), "  # noqa: E731
                        f"offsets=(bl.program_id(0) * BM, bl.program_id(1) * BN), block_shape=(BM, BN))")
    if copy:
        body = [f"bl.store({ptr('c_ptr')}, bl.load({ptr('a_ptr')}, boundary_check=(0, 1)), boundary_check=(0, 1))"]
        params = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "sa", "sb", "so"]
    else:
        sa = "SA" if const else "sa"
        out = "(total * so)"
        out = f"bl.relu({out})" if relu else out
        body = [f"total = bl.load({ptr('a_ptr')}, boundary_check=(0, 1)) * {sa} + "
                f"bl.load({ptr('b_ptr')}, boundary_check=(0, 1)) * sb",
                f"bl.store({ptr('c_ptr')}, {out}.to(bl.int8), boundary_check=(0, 1))"]
        params = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "sb", "so"] + (["SA: bl.constexpr"] if const else ["sa"])
    params += ["BM: bl.constexpr", "BN: bl.constexpr"]
    M, N = int(rng.integers(1, 80)), int(rng.integers(1, 70))
    a, b = int8s(rng, (M, N), True), int8s(rng, (M, N), True)
    c0 = rng.integers(-100, 100, (M, N)).astype(np.int8)
    cbuf = c0.copy()
    sa_v = c(1.0, 0.5, 2.0, -1.0, NAN) if const else float(rng.choice(SCALES))
    sb_v, so_v = float(rng.choice(SCALES)), float(rng.choice(SCALES))
    grid = (cdiv(M, bm), cdiv(N, bn))
    if copy:
        args = [a, b, cbuf, M, N, sa_v, sb_v, so_v]
    else:
        args = [a, b, cbuf, M, N, sb_v, so_v] + ([] if const else [sa_v])
    meta = dict(BM=bm, BN=bn, **({"SA": sa_v} if const and not copy else {}))

    def run(kernel, target="sim"):
        cbuf[...] = c0
        kernel[grid](*args, **meta, target=target)
        return {"c": cbuf.copy()}

    def reference():
        if copy:
            return {"c": a.copy()}
        total = sat(scaled(a, sa_v), 8) + sat(scaled(b, sb_v), 8)
        return {"c": readout(total, so_v, relu)}
    return Case(name, "sum", "result", source(params, body), run, reference=reference)


def slices_case(rng, krng, name):
    """A 3-D block pointer (NS slices of BR rows of an (S, R, K) array, slice stride SS) loaded as
    one (NS*BR, BK) block, multiplied with B and stored: slices and rows outside the array read 0."""
    c = lambda *xs: xs[int(krng.integers(len(xs)))]  # noqa: E731
    ns, br, bk, bn = c(1, 2, 3), c(4, 8, 16), c(16, 32), c(16, 32)
    dataflow = c("WS", "OS")
    body = [f"x = bl.load(bl.make_block_ptr(a_ptr, shape=(S, R, K), strides=(SS, K, 1), offsets=(S0, R0, 0), "
            f"block_shape=({ns}, {br}, {bk})), boundary_check=(0, 1, 2))",
            f"w = bl.load(bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, 0), "
            f"block_shape=({bk}, {bn})), boundary_check=(0, 1))",
            f"bl.store(bl.make_block_ptr(c_ptr, shape=({ns * br}, N), strides=(N, 1), offsets=(0, 0), "
            f"block_shape=({ns * br}, {bn})), bl.dot(x, w), boundary_check=(0, 1))"]
    params = ["a_ptr", "b_ptr", "c_ptr", "S", "R", "K", "N", "SS", "S0", "R0"]
    S, R, K, N = int(rng.integers(1, 5)), int(rng.integers(1, 2 * br)), int(rng.integers(1, bk + 1)), \
        int(rng.integers(1, bn + 1))
    gap = int(rng.integers(0, 20))
    s0, r0 = int(rng.integers(-2, S + 1)), int(rng.integers(-br, R + 1))
    flat = int8s(rng, (S * (R * K + gap) + 1,))
    a = np.stack([flat[i * (R * K + gap):i * (R * K + gap) + R * K].reshape(R, K) for i in range(S)])
    b = int8s(rng, (K, N))
    c0 = rng.integers(-1000, 1000, (ns * br, N)).astype(np.int32)
    out = c0.copy()
    args = [flat, b, out, S, R, K, N, R * K + gap, s0, r0]

    def run(kernel, target="sim"):
        out[...] = c0
        kernel[(1,)](*args, dataflow=dataflow, target=target)
        return {"c": out.copy()}

    def reference():
        x = np.zeros((ns, br, bk), np.int64)
        for i in range(ns):
            if 0 <= s0 + i < S:
                x[i] = window(a[s0 + i].astype(np.int64), r0, 0, br, bk)
        prod = x.reshape(ns * br, bk) @ window(b.astype(np.int64), 0, 0, bk, bn)
        prod = sat(prod, SPATIAL_BITS) if dataflow == "OS" else prod
        got = c0.copy()
        put(got, 0, 0, prod.astype(np.int32), ns * br, N)
        return {"c": got}
    return Case(name, "slices", "result", source(params, body), run, reference=reference)


# ---- mutations of a gemm kernel or launch ----------------------------------------------------
def gemm_mutation(g: GemmKernel, rng, name):
    """A gemm case that must fail: a bad statement (located compile error), a dot of mismatched
    blocks or an int32 store through an int8 pointer (located compile errors), a zero divisor or
    step at run time (located run-time error), or one broken launch argument (an argument error)."""
    kinds = ["insert", "insert", "launch", "launch", "dot_shape"]
    kinds += ["zero_divisor"] * 2 if g.divide else []
    kinds += ["zero_step"] * 2 if g.loop == "runtime_range" else []
    kinds += ["store_dtype"] if g.epilogue == "int32" else []
    kind = kinds[int(rng.integers(len(kinds)))]
    case = gemm_launch(g, rng, name)
    if kind == "insert":
        stmt, needs_acc, match = BAD_STATEMENTS[int(rng.integers(len(BAD_STATEMENTS)))]
        places = g.insert_positions(needs_acc)
        where = places[int(rng.integers(len(places)))]
        case.source, case.expect, case.match, case.exc = g.text(insert=(stmt, where)), "compile", match, \
            (CompilationError,)
        case.category = "mutation-compile"
    elif kind in ("dot_shape", "store_dtype"):
        case.source, case.expect, case.exc = g.text(kind), "compile", (CompilationError,)
        case.match = "dot() shapes do not match" if kind == "dot_shape" else \
            "cannot store a int32 block through a int8 pointer"
        if kind == "store_dtype":
            case.args[2] = case.args[2].astype(np.int8)
        case.category = "mutation-compile"
    elif kind in ("zero_divisor", "zero_step"):
        names = g.params()
        index = names.index("D" if kind == "zero_divisor" else "STEP")
        case.args[index] = 0
        case.source, case.expect, case.exc, case.located = g.text(kind), "runtime", (KernelRuntimeError,), True
        case.match = "integer division or modulo by zero" if kind == "zero_divisor" else "range() step is zero"
        case.category = "mutation-runtime"
    else:
        launch_mutation(case, g, rng)
    return case


def launch_mutation(case, g, rng):
    """One launch argument of a gemm case made wrong; the error must name it."""
    names = [p.split(":")[0] for p in g.params() if "constexpr" not in p and "=" not in p]
    pointers = [n for n in names if n.endswith("_ptr")]
    scalars = [n for n in names if not n.endswith("_ptr") and n != "scale"]
    kind = ["pointer", "pointer", "scalar", "scalar", "grid", "keyword", "missing", "option"][int(rng.integers(8))]
    args, grid, meta, options = list(case.args), case.grid, dict(case.meta), dict(case.options)
    if kind == "pointer":
        name = pointers[int(rng.integers(len(pointers)))]
        i = names.index(name)
        bad = [lambda x: x.astype(np.float64), lambda x: x.astype(np.int16), lambda x: x.astype(np.uint8),
               lambda x: x.astype(np.int64), lambda x: np.asfortranarray(np.tile(x, (1, 2)))[:, ::2]
               if x.ndim == 2 and x.shape[1] > 1 else x.astype(np.float16),
               lambda x: x.tolist(), lambda x: None, lambda x: "abc"][int(rng.integers(8))]
        args[i] = bad(args[i])
        case.match = f"`{name}`"
    elif kind == "scalar":
        name = scalars[int(rng.integers(len(scalars)))]
        args[names.index(name)] = [2 ** 70, -2 ** 64, 2 ** 63, True, "32", None, 1j,
                                   np.uint64(2 ** 64 - 1)][int(rng.integers(8))]
        case.match = f"`{name}`"
    elif kind == "grid":
        grid = [(2.5,) + grid[1:], (-1,) + grid[1:], (), (1, 1, 1, 1), ("2",) + grid[1:], (None,) + grid[1:],
                (float("nan"),) + grid[1:], grid[:-1] + (2 ** 70,)][int(rng.integers(8))]
        case.match = "grid"
    elif kind == "keyword":
        meta["BLOCK"] = 16
        case.match = "'BLOCK'"
    elif kind == "missing":
        name = names[-1]
        args = args[:-1]
        case.match = f"'{name}'"
    else:
        option, value = [("dataflow", "XS"), ("dataflow", None), ("target", "gpu"), ("double_buffer", "no"),
                         ("config", "big"), ("config", 16)][int(rng.integers(6))]
        options[option] = value
        case.match = option
    c_shape = case.args[2].shape

    def run(kernel, target="sim"):
        opts = dict(options)
        kernel[grid](*args, **meta, **{"target": target, **opts})
        return {"c": np.zeros(c_shape)}
    case.run, case.expect, case.exc, case.category = run, "launch", (TypeError, ValueError), "mutation-launch"


# ---- calls of the shipped kernels ------------------------------------------------------------------
def conv_reference(x, w, bias, stride, padding, dilation, out, scale, relu, depthwise=False, os_block_k=None):
    """NHWC x, RSCK (or RSC depthwise) w: the int32 accumulation per tap (and per BLOCK_K channel
    step, saturated to the array's width in OS), then the read-out."""
    N, H, W, C = x.shape
    R, S = w.shape[:2]
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    P, Q = (H + 2 * ph - dh * (R - 1) - 1) // sh + 1, (W + 2 * pw - dw * (S - 1) - 1) // sw + 1
    xp = np.zeros((N, H + 2 * ph, W + 2 * pw, C), np.int64)
    xp[:, ph:ph + H, pw:pw + W] = x
    K = C if depthwise else w.shape[3]
    acc = np.zeros((N, P, Q, K), np.int64)
    for r in range(R):
        for s in range(S):
            patch = xp[:, r * dh:r * dh + (P - 1) * sh + 1:sh, s * dw:s * dw + (Q - 1) * sw + 1:sw]
            if depthwise:
                acc += patch * w[r, s].astype(np.int64)
                continue
            step = os_block_k or C
            for c0 in range(0, C, step):
                part = patch[..., c0:c0 + step] @ w[r, s, c0:c0 + step].astype(np.int64)
                acc += sat(part, SPATIAL_BITS) if os_block_k else part
    if bias is not None:
        acc += np.asarray(bias, np.int64)
    return acc.astype(np.int32) if out == "int32" else readout(acc, scale, relu)


def example_module(name: str):
    """examples/<name>.py as a module (the shipped GEMV and fused-MLP wrappers live there)."""
    key = f"example:{name}"
    if key not in _modules:
        spec = importlib.util.spec_from_file_location(f"baco_example_{name}", REPO / "examples" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[key] = module
    return _modules[key]


def column_major(x) -> bool:
    """x is a numpy matrix the matmul wrapper reads in place as column-major: its columns are not
    one element apart but its rows are (a single row with an element stride of 2 is a column-major
    1×N matrix; a view with neither stride of one element is copied row-major)."""
    return (isinstance(x, np.ndarray) and x.ndim == 2 and x.shape[1] > 1 and x.strides[1] not in (0, x.itemsize)
            and (x.shape[0] == 1 or x.strides[0] in (0, x.itemsize)))


def os_sum(a, b, block_k):
    """a @ b with K reduced in blocks of block_k, each block's sum saturated to the OS array's width
    (plain a @ b for block_k None: WS sums in the int32 accumulator)."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    if block_k is None:
        return a @ b
    return sum((sat(a[:, k0:k0 + block_k] @ b[k0:k0 + block_k], SPATIAL_BITS)
                for k0 in range(0, a.shape[1], block_k)), np.zeros((a.shape[0], b.shape[1]), np.int64))


def shipped_case(rng, name, wide=False):
    """A random call of one of baco.kernels' entry points (valid, or with one argument broken);
    widened seeds (`wide`) also call the GEMV and fused-MLP wrappers of examples/."""
    import baco.kernels.conv as conv
    import baco.kernels.depthwise as dw
    import baco.kernels.matmul as mm
    import baco.kernels.pool as pl
    import baco.kernels.resadd as ra
    c = lambda *xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    which = c("matmul", "matmul", "conv2d", "conv2d", "depthwise", "conv1d", "conv_pool", "resadd",
              *(("gemv", "gemv", "fused_mlp", "fused_mlp") if wide else ()))
    mutate = rng.random() < 0.4
    blocks_os = None
    if which == "matmul":
        M, N, K = (int(rng.choice((1, 5, 16, 17, 33, 64, 70))) for _ in range(3))
        a, b = int8s(rng, (M, K)), int8s(rng, (K, N))
        out = c("int32", "int8")
        kw = dict(bias=c(None, rng.integers(-(1 << 20), 1 << 20, N).astype(np.int32)), out=out,
                  scale=float(rng.choice(SCALES)), relu=out == "int8" and rng.random() < 0.5)
        sched = c(None, "block", "schedule")
        if sched == "block":
            kw["block"] = (c(16, 32), c(16, 32), c(16, 32, 64))
            kw["dataflow"] = c("WS", "OS")
            blocks_os = kw["block"][2] if kw["dataflow"] == "OS" else None
        elif sched == "schedule":
            kw["schedule"] = {"block_m": c(16, 32), "block_n": c(16, 32), "block_k": c(16, 32),
                              "dataflow": c("WS", "OS"), "double_buffer": c(False, True)}
            blocks_os = kw["schedule"]["block_k"] if kw["schedule"]["dataflow"] == "OS" else None
        pos = {"a": a, "b": b}
        if wide and rng.random() < 0.35:     # layouts read in place: a column-major operand, a row stride
            layout = c("a", "b", "stride")
            pos = {"a": np.asfortranarray(a), "b": b} if layout == "a" else {"a": a, "b": np.asfortranarray(b)} \
                if layout == "b" else {"a": np.pad(a, ((0, 0), (0, 3)))[:, :K], "b": b}
        call = lambda p, k: mm.matmul(p["a"], p["b"], **k)[0]  # noqa: E731

        def reference():
            acc = a.astype(np.int64) @ b.astype(np.int64) if blocks_os is None else sum(
                sat(a[:, k0:k0 + blocks_os].astype(np.int64) @ b[k0:k0 + blocks_os].astype(np.int64), SPATIAL_BITS)
                for k0 in range(0, K, blocks_os))
            acc = acc + (0 if kw["bias"] is None else kw["bias"].astype(np.int64))
            return acc.astype(np.int32) if out == "int32" else readout(acc, kw["scale"], kw["relu"])
        bad = [("a", lambda p, k: p.update(a=p["a"].astype(np.float32)), ("a",)),
               ("b", lambda p, k: p.update(b=p["b"][:-1] if p["b"].shape[0] > 1 else p["b"].astype(np.int16)), ("b",)),
               ("bias", lambda p, k: k.update(bias=np.zeros(N, np.int64) + 2 ** 33), ("bias",)),
               ("bias", lambda p, k: k.update(bias=np.zeros(N + 1, np.int32)), ("bias",)),
               ("scale", lambda p, k: k.update(scale="0.5"), ("scale",)),
               ("out", lambda p, k: k.update(out="int16"), ("out",)),
               ("relu", lambda p, k: k.update(relu=True, out="int32"), ("relu",)),
               ("block", lambda p, k: k.update(block=(0, 16, 16)), ("block", "block_m")),
               ("block", lambda p, k: k.update(block=(512, 512, 256), schedule=None), ("block",)),
               ("schedule", lambda p, k: k.update(schedule={"block_m": 1024, "block_n": 64, "block_k": 64}),
                ("schedule",)),
               ("schedule", lambda p, k: k.update(schedule={"block_m": 16, "block_n": -16, "block_k": 16}),
                ("schedule", "block_n")),
               ("dataflow", lambda p, k: k.update(dataflow="XS"), ("dataflow",)),
               ("a", lambda p, k: p.update(a=p["a"][None]), ("a",))]
        if wide and min(M, N, K) > 1:      # both operands column-major: one transposer per array
            bad.append(("a", lambda p, k: p.update(a=np.asfortranarray(p["a"]), b=np.asfortranarray(p["b"])),
                        ("a", "b")))
    elif which in ("conv2d", "depthwise", "conv1d", "conv_pool"):
        Nb = c(1, 1, 2)
        H, W = (1 if which == "conv1d" else int(rng.integers(3, 7))), int(rng.integers(3, 9))
        C = c(1, 3, 8, 16, 20) if which != "depthwise" else c(1, 5, 16, 17, 33)
        K = c(1, 8, 16, 20)
        R = 1 if which == "conv1d" else c(1, 2, 3)
        S = c(1, 2, 3)
        if which == "conv_pool":
            R, S = c((1, 1), (3, 3), (2, 1))
        stride = (1, c(1, 1, 2)) if which == "conv1d" else (c(1, 1, 2), c(1, 2))
        padding = (0, c(0, 1)) if which == "conv1d" else (c(0, 1, 2), c(0, 1))
        dilation = (1, 1) if which == "conv_pool" else (1, c(1, 1, 2)) if which == "conv1d" else (c(1, 1, 2), 1)
        if which == "conv_pool":
            stride, padding = (1, 1), (c(0, 1), ) * 2
            H, W = max(H, R + 3), max(W, S + 3)      # a conv output the pool fits
        if any((sz + 2 * pd - dl * (f - 1) - 1) < 0 for sz, pd, dl, f in
               zip((H, W), padding, dilation, (R, S))):
            H, W = H + 6, W + 6
        x = int8s(rng, (Nb, H, W, C))
        w = int8s(rng, (R, S, C) if which == "depthwise" else (R, S, C, K))
        out = "int8" if which == "conv_pool" else c("int8", "int32")
        Kout = C if which == "depthwise" else K
        kw = dict(bias=c(None, rng.integers(-(1 << 20), 1 << 20, Kout).astype(np.int32)),
                  scale=float(rng.choice(SCALES)), relu=out == "int8" and rng.random() < 0.5)
        if which != "conv_pool":
            kw["out"] = out
        if which == "conv1d":
            kw.update(stride=stride[1], padding=padding[1], dilation=dilation[1])
            pos = {"x": x[:, 0], "w": w[0]}
            call = lambda p, k: conv.conv1d(p["x"], p["w"], **k)[0]  # noqa: E731
        elif which == "conv_pool":
            pool_k = c(2, 3)
            kw.update(pool=pool_k, stride=c(None, 1, 2), padding=c(0, 1) if pool_k > 1 else 0,
                      conv_padding=padding[0], relu=rng.random() < 0.7)
            pos = {"x": x, "w": w}
            call = lambda p, k: pl.conv_pool(p["x"], p["w"], **k)[0]  # noqa: E731
        else:
            kw.update(stride=stride, padding=padding, dilation=dilation)
            if which == "conv2d" and rng.random() < 0.4:
                kw["blocks"] = (c(16, 32), c(16, 32), c(16, 32), c("WS", "OS"), c(False, True))
                if rng.random() < 0.4:     # whole output rows, two per program (a 3-D input block pointer)
                    Q = (W + 2 * padding[1] - dilation[1] * (S - 1) - 1) // stride[1] + 1
                    kw["blocks"] = (Q,) + kw["blocks"][1:] + (2,)
                blocks_os = kw["blocks"][2] if kw["blocks"][3] == "OS" else None
            if which == "depthwise":
                kw["formulation"] = c("block-diagonal", "per-channel")
            pos = {"x": x, "w": w}
            fn = conv.conv2d if which == "conv2d" else dw.depthwise_conv2d
            call = lambda p, k: fn(p["x"], p["w"], **k)[0]  # noqa: E731

        def reference():
            if which == "conv_pool":
                y = conv_reference(x, w, kw["bias"], (1, 1), (kw["conv_padding"],) * 2, (1, 1), "int8", kw["scale"],
                                   kw["relu"])
                st = kw["pool"] if kw["stride"] is None else kw["stride"]
                n, P, Q, _ = y.shape
                return np.stack([pool(y[i].reshape(P * Q, -1), P, Q, kw["pool"], st, kw["padding"],
                                      kw["padding"])[0].reshape((P + 2 * kw["padding"] - kw["pool"]) // st + 1,
                                                                (Q + 2 * kw["padding"] - kw["pool"]) // st + 1, -1)
                                 for i in range(n)])
            y = conv_reference(x, w, kw["bias"], stride, padding, dilation, out, kw["scale"], kw["relu"],
                               which == "depthwise", blocks_os)
            return y[:, 0] if which == "conv1d" else y
        bad = [("x", lambda p, k: p.update(x=p["x"].astype(np.float32) / 256), ("x",)),
               ("x", lambda p, k: p.update(x=p["x"][0]), ("x",)),
               ("w", lambda p, k: p.update(w=p["w"].astype(np.int32)), ("w",)),
               ("bias", lambda p, k: k.update(bias=np.full(Kout, 2 ** 33 + 5, np.int64)), ("bias",)),
               ("bias", lambda p, k: k.update(bias=np.zeros(Kout + 2, np.int32)), ("bias",)),
               ("scale", lambda p, k: k.update(scale=None), ("scale",)),
               ("stride", lambda p, k: k.update(stride=0), ("stride",)),
               ("padding", lambda p, k: k.update(padding=-1), ("padding",)),
               ("stride", lambda p, k: k.update(stride=1.5), ("stride",))]
        if which != "conv_pool":
            bad += [("out", lambda p, k: k.update(out="int4"), ("out",)),
                    ("relu", lambda p, k: k.update(relu=True, out="int32"), ("relu",)),
                    ("dilation", lambda p, k: k.update(dilation=0), ("dilation",))]
        else:
            bad += [("pool", lambda p, k: k.update(pool=0), ("pool", "kernel")),
                    ("pool", lambda p, k: k.update(pool=5), ("pool", "kernel"))]
        if which == "conv2d":
            bad += [("blocks", lambda p, k: k.update(blocks=(16, 0, 16)), ("blocks", "block_n")),
                    ("blocks", lambda p, k: k.update(blocks=(16, 16, 16, "WS", False, 2)), ("rows", "blocks"))]
        if which == "depthwise":
            bad += [("formulation", lambda p, k: k.update(formulation="dense"), ("formulation",))]
    elif which == "gemv":
        gv = example_module("gemv")
        form = c("Ax", "xB")
        n_out, K = (int(rng.choice((1, 5, 16, 17, 33, 64, 100))) for _ in range(2))
        mat = int8s(rng, (n_out, K) if form == "Ax" else (K, n_out), True)
        vec = int8s(rng, (K,), True)
        out = c("int32", "int8")
        kw = dict(bias=c(None, rng.integers(-(1 << 20), 1 << 20, n_out).astype(np.int32)), out=out,
                  scale=float(rng.choice(SCALES)), relu=out == "int8" and rng.random() < 0.5,
                  block=c(None, (16, 16), (32, 64), (64, 32), (16, 48)), dataflow=c("WS", "WS", "OS"),
                  double_buffer=c(True, False))
        block_k = gv.resolve_schedule(form, n_out, K, GemminiConfig(), out == "int8", kw["block"], kw["dataflow"],
                                      kw["double_buffer"])[0][1]
        pos = {"mat": mat, "x": vec}
        call = lambda p, k: gv.gemv(form, p["mat"], p["x"], **k)[0]  # noqa: E731

        def reference():
            a, b = (mat, vec[:, None]) if form == "Ax" else (vec[None, :], mat)
            acc = os_sum(a, b, block_k if kw["dataflow"] == "OS" else None).reshape(-1)
            acc = acc + (0 if kw["bias"] is None else kw["bias"].astype(np.int64))
            return acc.astype(np.int32) if out == "int32" else readout(acc, kw["scale"], kw["relu"])
        bad = [("mat", lambda p, k: p.update(mat=p["mat"].astype(np.float32)), ("mat",)),
               ("x", lambda p, k: p.update(x=p["x"][None]), ("x",)),
               ("x", lambda p, k: p.update(x=np.concatenate([p["x"], p["x"][:1]])), ("x", "mat")),
               ("x", lambda p, k: p.update(x=p["x"].astype(np.int16)), ("x",)),
               ("bias", lambda p, k: k.update(bias=np.zeros(n_out, np.int64) + 2 ** 33), ("bias",)),
               ("bias", lambda p, k: k.update(bias=np.zeros(n_out + 1, np.int32)), ("bias",)),
               ("scale", lambda p, k: k.update(scale="0.5"), ("scale",)),
               ("out", lambda p, k: k.update(out="int16"), ("out",)),
               ("relu", lambda p, k: k.update(relu=True, out="int32"), ("relu",)),
               ("block", lambda p, k: k.update(block=(0, 16)), ("block", "block_m", "block_n")),
               ("block", lambda p, k: k.update(block=(16,)), ("block",)),
               ("block", lambda p, k: k.update(block=(4096, 4096)), ("block",)),
               ("dataflow", lambda p, k: k.update(dataflow="XS"), ("dataflow",)),
               ("double_buffer", lambda p, k: k.update(double_buffer="no"), ("double_buffer",))]
    elif which == "fused_mlp":
        fm = example_module("fused_mlp")
        M, K, H, N = int(rng.integers(1, 70)), int(rng.integers(1, 100)), int(rng.integers(1, 65)), \
            int(rng.integers(1, 65))
        dataflow = c("WS", "WS", "OS")
        small = rng.random() < 0.5
        gen = (lambda shape: rng.integers(-6, 7, shape).astype(np.int8)) if small else (lambda shape: int8s(rng, shape))
        x, w1, w2 = gen((M, K)), gen((K, H)), gen((H, N))
        s1 = float(c(1.0, 0.5, 0.25, 2.0 ** -6) if dataflow == "OS" else rng.choice(SCALES))
        s2 = float(rng.choice(SCALES))
        kw = dict(block_m=c(16, 32, 64), block_k=c(16, 32, 64), double_buffer=c(False, True), dataflow=dataflow)
        pos = {"x": x, "w1": w1, "w2": w2}
        call = lambda p, k: fm.fused_mlp(p["x"], p["w1"], p["w2"], k.pop("scale1", s1), k.pop("scale2", s2), **k)[0]  # noqa: E731

        def reference():
            # OS: the first layer is one dot over the whole K (padded to DIM) summed in the array
            first_k = cdiv(K, GemminiConfig().dim) * GemminiConfig().dim if dataflow == "OS" else None
            hid = readout(os_sum(x, w1, first_k), s1, True)
            return readout(os_sum(hid, w2, cdiv(H, GemminiConfig().dim) * GemminiConfig().dim
                                  if dataflow == "OS" else None), s2)
        bad = [("x", lambda p, k: p.update(x=p["x"].astype(np.float32)), ("x",)),
               ("w1", lambda p, k: p.update(w1=np.concatenate([p["w1"], p["w1"][:1]])), ("w1",)),
               ("w2", lambda p, k: p.update(w2=p["w2"].astype(np.int32)), ("w2",)),
               ("x", lambda p, k: p.update(x=p["x"][0]), ("x",)),
               ("scale1", lambda p, k: k.update(scale1="0.5"), ("scale1",)),
               ("scale2", lambda p, k: k.update(scale2=None), ("scale2",)),
               ("block_m", lambda p, k: k.update(block_m=0), ("block_m",)),
               ("block_k", lambda p, k: k.update(block_k=-16), ("block_k",)),
               ("dataflow", lambda p, k: k.update(dataflow="XS"), ("dataflow",)),
               ("scale1", lambda p, k: k.update(dataflow="OS", scale1=0.3), ("scale1",)),
               ("double_buffer", lambda p, k: k.update(double_buffer="yes"), ("double_buffer",))]
    else:
        M, N = int(rng.integers(1, 70)), int(rng.integers(1, 70))
        a, b = int8s(rng, (M, N), True), int8s(rng, (M, N), True)
        kw = dict(sa=float(rng.choice(SCALES)), sb=float(rng.choice(SCALES)), out_scale=float(rng.choice(SCALES)),
                  relu=c(True, False), block=c(None, (16, 16), (32, 64)))
        pos = {"a": a, "b": b}
        call = lambda p, k: ra.resadd(p["a"], p["b"], k.pop("sa"), k.pop("sb"), **k)[0]  # noqa: E731

        def reference():
            total = sat(scaled(a, kw["sa"]), 8) + sat(scaled(b, kw["sb"]), 8)
            return readout(total, kw["out_scale"], kw["relu"])
        bad = [("a", lambda p, k: p.update(a=p["a"].astype(np.int32)), ("a",)),
               ("b", lambda p, k: p.update(b=p["b"][:, :-1] if p["b"].shape[1] > 1 else p["b"][None]), ("b",)),
               ("sa", lambda p, k: k.update(sa="1"), ("sa",)),
               ("out_scale", lambda p, k: k.update(out_scale=True), ("out_scale",)),
               ("block", lambda p, k: k.update(block=(0, 16)), ("block",)),
               ("block", lambda p, k: k.update(block=(16,)), ("block",)),
               ("block", lambda p, k: k.update(block=(4096, 64)), ("block",)),
               ("block", lambda p, k: k.update(block=(16.5, 16)), ("block",)),
               ("relu", lambda p, k: k.update(relu="yes"), ("relu",))]
    bad.append(("config", lambda p, k: k.update(config=16), ("config",)))
    torch_inputs = not mutate and rng.random() < 0.15
    if not mutate and rng.random() < 0.15:       # a non-contiguous view of the same values is accepted
        pos = {k: np.repeat(v, 2, axis=-1)[..., ::2] for k, v in pos.items()}
    if torch_inputs:
        import torch
        pos = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in pos.items()}
    # a column-major B under OS (the array's transposer feeds A): the wrapper's ValueError naming b
    transposed_b_os = which == "matmul" and blocks_os is not None and column_major(pos["b"])
    if mutate or transposed_b_os:
        index = -1 if transposed_b_os and not mutate else int(rng.integers(len(bad)))
        what, breaks, names = ("b", lambda p, k: None, ("b",)) if index == -1 else bad[index]
        if transposed_b_os and "b" not in names:    # two bad arguments: the error may name either
            names = (*names, "b")
        breaks(pos, kw)

        def run(kernel, target="sim"):
            call(dict(pos), dict(kw, target=target))
            return {}
        case = Case(name, f"shipped-{which}", "launch", None, run, exc=(TypeError, ValueError))
        case.names, case.broken = names, (what, index)
        return case

    def run(kernel, target="sim"):
        return {"y": np.asarray(call(dict(pos), dict(kw, target=target)))}
    return Case(name, f"shipped-{which}", "result", None, run, reference=lambda: {"y": reference()})


# ---- compile_model-level entry points ---------------------------------------------------------------
_compiled = {}


def unsupported_layers():
    """Layers compile_model has no operator for, with the call its located CompilationError
    points at (the forward's line, the call's column) and the operator the message names."""
    import torch

    class Elu(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.elu(x)

    class Softplus(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.softplus(x)

    class Cumsum(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, -1)

    class BroadcastMul(torch.nn.Module):      # the error points at the `*`, not at the return
        def forward(self, x):
            return x * x[:, :1]
    return [(Elu, "torch.nn.functional.elu", "aten.elu"), (Softplus, "torch.nn.functional.softplus", "aten.softplus"),
            (Cumsum, "torch.cumsum", "aten.cumsum"), (BroadcastMul, "* x[", "aten.mul")]


def model_case(rng, krng, name, group, entry=False):
    """baco.compile_model on a small random torch model (an MLP, or convolutions with ReLU and
    max-pooling), then a call of the compiled model on a fresh input checked bit for bit against
    the model's numpy reference (baco.model.reference, which runs the quantised graph without the
    compiler), or one argument of compile_model or of the call broken. The compiled model is
    shared by the seeds of a kernel group."""
    import torch
    c = lambda *xs: xs[int(krng.integers(len(xs)))]  # noqa: E731
    kind = c("mlp", "conv")
    torch.manual_seed(int(krng.integers(1 << 30)))
    if kind == "mlp":
        d0, d1, d2 = c(8, 20, 33), c(12, 16, 40), c(5, 10, 16)
        model = torch.nn.Sequential(torch.nn.Linear(d0, d1), torch.nn.ReLU(), torch.nn.Linear(d1, d2))
        shape = (c(1, 3, 4), d0)
    else:
        c0, c1, k, pad = c(1, 3, 8), c(4, 8, 16), c(1, 3), c(0, 1)
        layers = [torch.nn.Conv2d(c0, c1, k, padding=pad), torch.nn.ReLU()]
        layers += [torch.nn.MaxPool2d(2)] if krng.random() < 0.5 else [torch.nn.Conv2d(c1, c(4, 8), 1)]
        model = torch.nn.Sequential(*layers)
        shape = (1, c0, c(6, 8), c(6, 9))
    model = model.eval()
    wrong = tuple(n + 1 if i == (1 if kind == "conv" else len(shape) - 1) else n for i, n in enumerate(shape))
    example = torch.randn(shape, generator=torch.Generator().manual_seed(group))
    x = torch.randn(shape, generator=torch.Generator().manual_seed(int(rng.integers(1 << 30)))) * \
        float(rng.choice((0.5, 1.0, 3.0)))

    def compiled():
        if group not in _compiled:
            from baco.model.compile import compile_model
            _compiled[group] = compile_model(model, example, calibrate=2)
        return _compiled[group]
    bad_compile = [("model", dict(model="resnet"), ("model",)),
                   ("model", dict(model=lambda t: t), ("model",)),
                   ("example_input", dict(example_input=[example]), ("example_input",)),
                   ("example_input", dict(example_input=example.to(torch.int32)), ("example_input",)),
                   ("example_input", dict(example_input=example.double()), ("example_input",)),
                   ("example_input", dict(example_input=torch.randn(*wrong)), ("example_input",)),
                   ("calibrate", dict(calibrate=0), ("calibrate",)),
                   ("calibrate", dict(calibrate=2.5), ("calibrate",)),
                   ("observer", dict(observer="median"), ("observer",)),
                   ("target", dict(target="gpu"), ("target",)),
                   ("design", dict(design=5), ("design",)),
                   ("design", dict(design={"layers": []}), ("design",)),
                   ("design", dict(design="/nonexistent/baco-design"), ("design",))]
    bad_call = [("x", lambda: torch.randn(*shape[:-1], shape[-1] + 2), ("x",)),
                ("x", lambda: np.zeros(shape, np.int16), ("x",)),
                ("x", lambda: x.to(torch.int32), ("x",)),
                ("x", lambda: "input", ("x",)),
                ("target", None, ("target",))]
    pick = rng.random()
    if pick >= 0.94:     # a layer without an operator after the model's own: a located compile error
        layer, call, op = unsupported_layers()[int(rng.integers(4 if entry else 3))]   # entry seeds: a broadcast too

        def run(kernel, target="sim"):
            from baco.model.compile import compile_model
            compile_model(torch.nn.Sequential(model, layer()), example, calibrate=2)
            return {}
        case = Case(name, f"model-{kind}", "compile", None, run, match=op, exc=(CompilationError,))
        case.path = layer.forward.__code__.co_filename
        line = layer.forward.__code__.co_firstlineno + 1
        with open(case.path) as f:
            case.where = (line, f.read().splitlines()[line - 1].index(call) + 1)
        return case
    if pick < 0.3:
        index = int(rng.integers(len(bad_compile)))
        what, change, names = bad_compile[index]

        def run(kernel, target="sim"):
            from baco.model.compile import compile_model
            compile_model(**{"model": model, "example_input": example, "calibrate": 2, **change})
            return {}
    elif pick < 0.5:
        index = len(bad_compile) + int(rng.integers(len(bad_call)))
        what, make, names = bad_call[index - len(bad_compile)]

        def run(kernel, target="sim"):
            cm = compiled()
            cm(x, target="gpu") if make is None else cm(make(), target=target)
            return {}
    else:
        def run(kernel, target="sim"):
            return {"y": compiled()(x, target=target)}
        return Case(name, f"model-{kind}", "result", None, run, reference=lambda: {"y": compiled().reference(x)})
    case = Case(name, f"model-{kind}", "launch", None, run, exc=(TypeError, ValueError, FileNotFoundError))
    case.names, case.broken = names, (what, index)
    return case


# ---- the entry points: schedule=, @baco.autotune, kernel.compile() ------------------------------------
SCHEDULE_BLOCKS = (1, 8, 16, 16, 24, 32, 32, 48, 64)
OVER_CAPACITY = (4096, 4096, 16)         # an accumulator block no Gemmini here holds


def entry_kernel(krng, group, names=("BLOCK_M", "BLOCK_N", "BLOCK_K")):
    """A gemm kernel of the widened grammar whose block sizes are the constexprs `names`
    (BLOCK_M/N/K take a schedule= and autotune's schedule space)."""
    g = GemmKernel(krng, np.random.default_rng([13, group]))
    g.names = names
    return g


def with_blocks(g: GemmKernel, bm, bn, bk, dataflow=None, double_buffer=None) -> GemmKernel:
    """The same kernel (the same text) launched with other block sizes / schedule choices."""
    out = copy.copy(g)
    out.bm, out.bn, out.bk = bm, bn, bk
    out.dataflow = g.dataflow if dataflow is None else dataflow
    out.double_buffer = g.double_buffer if double_buffer is None else double_buffer
    return out


def relaunch(case, meta, options, grid=None):
    """case.run with other constexprs and options (the same arrays, reset each run)."""
    args, c0, grid = case.args, case.c0, case.grid if grid is None else grid

    def run(kernel, target="sim"):
        args[2][...] = c0
        kernel[grid](*args, **meta, **options, target=target)
        return {"c": args[2].copy()}
    return run


def schedule_case(g: GemmKernel, rng, name):
    """A gemm kernel launched with `schedule=` (a GemmSchedule, its dict or a tuple; block sizes
    from 1 to 64, not all multiples of DIM, with the dataflow and double buffering) instead of
    BLOCK_M/N/K, sometimes with explicit launch values that agree; the result under the
    schedule's blocks. Or a broken schedule (a bad field, an unknown or missing field, a
    contradicting launch value, ROWS on a GEMM, a kernel without BLOCK_M/N/K): an argument error
    naming `schedule`; or one over the accumulator: the placement's located compile error."""
    from baco.gemmini.schedule import GemmSchedule
    c = lambda *xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    bm, bn, bk = (int(rng.choice(SCHEDULE_BLOCKS)) for _ in range(3))
    dataflow = "WS" if g.b_column_major else g.dataflow if rng.random() < 0.7 else c("WS", "OS")
    db = bool(rng.random() < 0.4)
    sg = with_blocks(g, bm, bn, bk, dataflow, db)
    kind = c(*(["valid"] * 10 + ["field", "field", "unknown", "missing", "rows", "contradicts", "type", "capacity",
                                 "names"]))
    if kind == "names":          # the same kernel with its block sizes named BM/BN/BK: nothing to fill
        sg.names = ("BM", "BN", "BK")
    case = gemm_launch(sg, rng, name, "schedule")
    sched = GemmSchedule(bm, bn, bk, dataflow, db)
    form = c("object", "dict", "tuple")
    given = sched if form == "object" else sched.to_dict() if form == "dict" else (bm, bn, bk, dataflow, db)
    if form == "dict" and rng.random() < 0.5:
        given = {k: v for k, v in given.items() if k != "rows"}
    meta = {k: v for k, v in case.meta.items() if k not in sg.names}
    options = {k: v for k, v in case.options.items() if k not in ("dataflow", "double_buffer")}
    if rng.random() < 0.3:       # launch values that agree with the schedule are allowed
        options["dataflow"] = dataflow
    if rng.random() < 0.3 and kind != "capacity":
        meta[sg.names[0]] = bm
    names = ("schedule",)
    if kind == "field":
        field_name = c("block_m", "block_n", "block_k", "dataflow", "double_buffer")
        value = c(0, -16, 16.5, True, "16", None) if field_name.startswith("block") else \
            c("XS", None, "os") if field_name == "dataflow" else c("yes", 1, None)
        given = dict(sched.to_dict(), **{field_name: value})
    elif kind == "unknown":
        given = dict(sched.to_dict(), **{c("bm", "block", "BLOCK_M"): 16})
    elif kind == "missing":
        gone = c("block_m", "block_n", "block_k")
        given = {k: v for k, v in sched.to_dict().items() if k != gone}
    elif kind == "rows":
        given = dict(sched.to_dict(), rows=2)
    elif kind == "contradicts":
        if rng.random() < 0.5:
            meta[sg.names[int(rng.integers(3))]] = 128
        else:
            options["dataflow"] = "OS" if dataflow == "WS" else "WS"
    elif kind == "type":
        given = c("16, 16, 16", 16, [16], (16, 16), (16, 16, 16, "WS", False, 1, 0), {16, 32})
    elif kind == "capacity":
        given = GemmSchedule(*OVER_CAPACITY, dataflow, db)
    case.run, case.schedule = relaunch(case, meta, dict(options, schedule=given)), given
    if kind == "valid":
        return case
    if kind == "capacity":
        case.expect, case.exc, case.match, case.category = "compile", (CompilationError,), "do not fit", \
            "schedule-capacity"
        return case
    case.expect, case.exc, case.category = "launch", (TypeError, ValueError), "schedule-launch"
    case.names, case.broken = names, (kind, 0)
    return case


def autotune_case(g: GemmKernel, rng, name):
    """@baco.autotune over a gemm kernel: 1-4 random Configs (block sizes, dataflow, double
    buffering; some the compiler rejects: over the accumulator, OS with a column-major B, a zero
    block), a random key, pruned by an early_config_prune and/or a perf_model with top_k (a count
    or a fraction), timed on the cycle model alone or end to end on the ISS, cached or not. The
    result must be the reference under the chosen config, and the choice one of the candidates
    the pruning keeps that compile; when none compiles, the autotuner's ValueError. Or one
    argument of autotune or of the launch broken: an error naming it."""
    import baco
    c = lambda *xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    bm_name, bn_name, bk_name = g.names
    blocks = (16, 32, 64) if g.checked else (g.bm,)        # unchecked kernels need whole blocks
    configs = []
    for _ in range(int(rng.integers(1, 5))):
        kw = {bm_name: int(rng.choice(blocks)), bn_name: int(rng.choice(blocks)), bk_name: int(rng.choice(blocks))}
        if not g.checked:
            kw = {bm_name: g.bm, bn_name: g.bn, bk_name: g.bk}
        if rng.random() < 0.1:
            kw.update(zip(g.names, OVER_CAPACITY))
        elif rng.random() < 0.06 and bm_name == "BM":
            kw[bm_name] = 0          # not a schedule's field: the compiler rejects it, the autotuner skips it
        opts = {}
        if rng.random() < 0.3:
            opts["dataflow"] = c("WS", "OS")
        if rng.random() < 0.4:
            opts["double_buffer"] = bool(rng.random() < 0.5)
        configs.append(baco.Config(kw, **opts))
    configs = list(dict.fromkeys(configs))
    sets_options = {k for cf in configs for k in cf.options}
    case = gemm_launch(g, rng, name, "autotune")
    meta = {k: v for k, v in case.meta.items() if k not in g.names}
    options = {k: v for k, v in case.options.items() if k not in sets_options}
    launch_dataflow = options.get("dataflow", "WS")
    key = c([], ["M"], ["M", "N", "K"], ["a_ptr"], ["K", "c_ptr"])
    prune = {}
    threshold = int(rng.choice((16, 32, 64, 64)))
    if rng.random() < 0.4:
        prune["early_config_prune"] = lambda cs, named, t=threshold, n=bk_name: [cf for cf in cs if cf.kwargs[n] <= t]
    weights = (float(rng.integers(-3, 4)), float(rng.integers(-3, 4)))
    if rng.random() < 0.5:
        prune["perf_model"] = lambda w=weights, m=bm_name, n=bn_name, **kw: w[0] * kw[m] + w[1] * kw[n]
        prune["top_k"] = c(1, 2, 3, 0.5, 1.0)
    settings = dict(configs=configs, key=key, prune_configs_by=prune or None,
                    cache_results=bool(rng.random() < 0.3), end_to_end=bool(rng.random() < 0.1))

    def grid(meta_values):
        return g.grid(case.sizes[0], case.sizes[1], case.sizes[2], meta_values[bm_name], meta_values[bn_name])

    def survivors():
        """The candidates the pruning keeps (the generator's own model of it), then those that compile."""
        kept = [cf for cf in configs if "early_config_prune" not in prune or cf.kwargs[bk_name] <= threshold]
        if "perf_model" in prune and len(kept) > 1:
            k = prune["top_k"]
            k = max(1, int(len(kept) * k)) if isinstance(k, float) else k
            kept = sorted(kept, key=lambda cf: weights[0] * cf.kwargs[bm_name] + weights[1] * cf.kwargs[bn_name])[:k]
        # (OS with a column-major B is a compile error where a dot runs: a constexpr loop may have none,
        # and so may a runtime range whose bounds are all 1, which the kernel is compiled with as
        # constants (@baco.jit specializes an integer argument of value 1): range(1, 1, 1) folds away)
        dot = len(range(*g.kb_range)) > 0 if g.loop == "constexpr_range" else \
            case.k_loop != (1, 1, 1) if g.loop == "runtime_range" else True
        return kept, [cf for cf in kept if cf.kwargs[bm_name] > 0 and cf.kwargs[bm_name] != OVER_CAPACITY[0]
                      and not (dot and g.b_column_major and cf.options.get("dataflow", launch_dataflow) == "OS")]

    state = {}
    kind = c(*(["valid"] * 10 + ["config", "key", "top_k", "prune", "pruner", "passed", "argument", "flag"]))
    args = list(case.args)
    names, match = (), ""
    if kind == "config":
        bad, names = c((baco.Config({**configs[0].kwargs, "M": 16}), ("configs",)),
                       (baco.Config({**configs[0].kwargs, "BLOK_M": 16}), ("configs",)),
                       ("Config(BLOCK_M=16)", ("configs",)),
                       (None if bm_name == "BM" else baco.Config({**configs[0].kwargs, bm_name: c(0, -32, 16.5)}),
                        ("configs",)),
                       (c("XS", "ws"), ("dataflow",)))
        if bad is None:
            bad, names = baco.Config({**configs[0].kwargs, "M": 16}), ("configs",)
        settings["configs"] = configs + [bad]
    elif kind == "key":
        settings["key"], names = c(["Q"], "M", ["M", 3]), ("key",)
    elif kind == "top_k":
        settings["prune_configs_by"], names = {"perf_model": lambda **kw: 0.0, "top_k": c(0, -1, 1.5, "2", None)}, \
            ("top_k",)
    elif kind == "prune":
        settings["prune_configs_by"], names = c([("top_k", 2)], "cost", {"topk": 2}), ("prune_configs_by",)
    elif kind == "pruner":
        which = c("early_config_prune", "perf_model")
        settings["prune_configs_by"] = {which: c(lambda cs, named: None, lambda cs, named: [],
                                                 lambda cs, named: [1]) if which == "early_config_prune"
                                        else (lambda **kw: c("fast", None, float("nan")))}
        if which == "perf_model":
            settings["configs"] = configs + [baco.Config({**configs[0].kwargs, bk_name: 17})]
        names = (which,)
    elif kind == "passed":
        name_given = c(*g.names)
        meta[name_given], names = 16, (name_given,)
    elif kind == "argument":
        args[0], names = args[0].astype(c(np.float64, np.int16)), ("a_ptr",)
    elif kind == "flag":
        settings[c("cache_results", "end_to_end")] = c("no", 1, None)
        names = tuple(k for k in ("cache_results", "end_to_end") if not isinstance(settings[k], bool))

    def run(kernel, target="sim"):
        args[2][...] = case.c0
        cfgs = [baco.Config(configs[0].kwargs, dataflow=cf) if isinstance(cf, str) and cf in ("XS", "ws") else cf
                for cf in settings["configs"]]        # a Config with a bad dataflow: its own error
        tuner = baco.autotune(**dict(settings, configs=cfgs))(kernel)
        state["tuner"] = None
        tuner[grid](*args, **meta, **options, target=target)
        state["tuner"] = tuner
        # the choice is one of the candidates the pruning keeps that compile (1), or it is not (0)
        return {"c": args[2].copy(), "choice": np.array([tuner.best_config in survivors()[1]])}

    launch_reference = case.reference

    def reference():
        chosen = state["tuner"].best_config.all_kwargs()
        return {"c": launch_reference((chosen[bm_name], chosen[bn_name], chosen[bk_name],
                                     chosen.get("dataflow", launch_dataflow)))["c"], "choice": np.array([True])}
    case.run, case.reference = run, reference
    case.settings = settings
    if kind == "valid":
        kept, runnable = survivors()
        if not runnable:       # the pruning kept nothing, or the compiler rejects every candidate kept
            case.expect, case.exc, case.category = "launch", (ValueError,), "autotune-launch"
            case.names = ("candidate",) if kept else ("early_config_prune",)
        return case
    case.expect, case.exc, case.category, case.match = "launch", (TypeError, ValueError), "autotune-launch", match
    case.names, case.broken = names, (kind, 0)
    return case


def aot_case(g: GemmKernel, rng, name):
    """kernel.compile() ahead of time with one launch's arguments, then ck.run(grid, args) on
    another launch's (other sizes, arrays and scalars; the same constexprs): the result is the
    reference of the second launch. Or a broken compile (a missing or unknown constexpr, one
    beyond i64 or beyond any memory, one of the wrong type: an error naming it or a located
    compile error) or a broken run (the arguments' number, an array's element type or layout, a
    float for an integer, a bad grid, an integer compiled as the constant 1 given another value,
    a zero divisor at run time: an error naming the argument, or the located run-time error)."""
    c = lambda *xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    first = gemm_launch(g, rng, name, "aot")
    second = gemm_launch(g, rng, name, "aot", like=first)
    params = [p.split(":")[0] for p in g.params() if "constexpr" not in p and "=" not in p]
    params += ["bias_ptr"] if second.pass_bias else []
    compile_args, meta, options = list(first.args), dict(first.meta), dict(first.options)
    runtime, grid = list(second.runtime), second.grid
    ints = [i for i, p in enumerate(params) if isinstance(runtime[i], int)]
    for i in ints:       # an integer of 1 is compiled as a constant: the first launch's 1 becomes the second's value
        if compile_args[i] == 1:
            compile_args[i] = runtime[i]
    # (an unchecked kernel's sizes and strides are its blocks': the constant 1 there is a compile error)
    fixable = [i for i in ints if g.checked or params[i] not in ("M", "N", "K", "SA", "SB", "SC")]
    kinds = ["valid"] * 12 + ["missing", "unknown", "huge", "type", "memory", "count", "dtype", "layout", "float",
                             "list", "grid"] + (["fixed"] if fixable else [])
    kinds += ["zero_divisor"] if g.divide else []
    kind = c(*kinds)
    expect, names, match, exc = "launch", (), "", (TypeError, ValueError)
    text = g.text()
    if kind == "missing":
        gone = c(*[k for k in meta if k != "bias_ptr"])
        meta.pop(gone)
        names = (gone,)
    elif kind == "unknown":
        meta["BLOCK"], names = 16, ("BLOCK",)
    elif kind == "huge":
        name_big = c(*g.names)
        meta[name_big], names = c(2 ** 63, 2 ** 70, -2 ** 64), (name_big,)
    elif kind == "type":
        meta[c(*g.names)] = c("16", None, 16.5, np.zeros(2, np.int8))
        expect, exc = "compile", (CompilationError,)
    elif kind == "memory":
        meta[c(*g.names)], expect, exc, match = 2 ** 62, "compile", (CompilationError,), "larger than any Gemmini memory"
    elif kind == "count":
        runtime = runtime[:-1] if rng.random() < 0.5 else runtime + [c(1, 0.5, runtime[0])]
        names = ("run-time arguments",)
    elif kind == "dtype":
        i = c(*[i for i, a in enumerate(runtime) if isinstance(a, np.ndarray)])
        runtime[i] = runtime[i].astype(c(np.int16, np.float32, np.int64, np.uint8) if runtime[i].dtype == np.int32
                                       else c(np.int16, np.float32, np.int32, np.uint8))
        names = (params[i],)
    elif kind == "layout":
        i = c(*[i for i, a in enumerate(runtime) if isinstance(a, np.ndarray)])
        runtime[i] = np.repeat(runtime[i], 2, axis=-1)[..., ::2]
        names = (params[i],)
    elif kind == "float":
        i = c(*ints)
        runtime[i], names = runtime[i] + c(0.5, 0.25), (params[i],)
    elif kind == "list":
        i = c(*[i for i, a in enumerate(runtime) if isinstance(a, np.ndarray)])
        runtime[i], names = runtime[i].tolist(), (params[i],)
    elif kind == "grid":
        grid, names = c((2.5,), (), (1, 1, 1, 1), (-1,) + grid[1:], ("2",)), ("grid",)
    elif kind == "fixed":
        i = c(*fixable)
        compile_args[i] = 1            # compiled as the constant 1, run with another value
        if runtime[i] == 1:
            runtime[i] = 2 if params[i] not in ("M", "N", "K") else runtime[i]
        names = (params[i],) if runtime[i] != 1 else ()
    elif kind == "zero_divisor":
        runtime[params.index("D")] = 0
        text, expect, exc, match = g.text("zero_divisor"), "runtime", (KernelRuntimeError,), \
            "integer division or modulo by zero"
    out = runtime[2]

    def run(kernel, target="sim"):
        if isinstance(out, np.ndarray):
            out[...] = second.c0 if out.dtype == second.c0.dtype else 0
        ck = kernel.compile(*compile_args, **meta, **options, target=target)
        ck.run(grid, runtime)
        return {"c": np.asarray(out).copy()}
    if kind in ("valid", "fixed") and not names:
        return Case(name, "aot", "result", text, run, reference=second.reference)
    case = Case(name, f"aot-{expect}", "result", text, run, reference=second.reference)
    case.expect, case.exc, case.match = expect, exc, match
    case.located = expect == "runtime"
    if expect == "launch":
        case.names, case.broken = names, (kind, 0)
    return case


# ---- the cases ---------------------------------------------------------------------------------------
FAMILIES = ("gemm",) * 9 + ("pool",) * 2 + ("chain", "sum") + ("shipped",) * 2
# seeds from WIDENED on draw from the widened grammar (optional pointers and constexpr-flag epilogues
# in gemm kernels, the GEMV and fused-MLP wrappers, compile_model); seeds below it keep their cases,
# so the regression seeds stay what they found
WIDENED = 100_000
FAMILIES_WIDE = FAMILIES + ("shipped", "model")
# seeds from ENTRY_POINTS on draw the launch entry points over the widened gemm kernels: schedule=,
# @baco.autotune and kernel.compile(), and compile_model (whose located errors include a broadcast)
ENTRY_POINTS = 200_000
FAMILIES_ENTRY = ("schedule", "autotune", "aot") * 3 + ("model",)


def case(seed: int) -> Case:
    """Case `seed`: its family and kernel from seed // LAUNCHES_PER_KERNEL, its launch (or
    mutation) from the seed."""
    group = seed // LAUNCHES_PER_KERNEL
    krng = np.random.default_rng([7, group])
    wide = seed >= WIDENED
    families = FAMILIES_ENTRY if seed >= ENTRY_POINTS else FAMILIES_WIDE if wide else FAMILIES
    family = families[int(krng.integers(len(families)))]
    rng = np.random.default_rng([11, seed])
    name = f"gen:{seed}:{family}"
    if family == "schedule":
        made = schedule_case(entry_kernel(krng, group), rng, name)
    elif family == "autotune":
        made = autotune_case(entry_kernel(krng, group, ("BLOCK_M", "BLOCK_N", "BLOCK_K") if krng.random() < 0.7
                                          else ("BM", "BN", "BK")), rng, name)
    elif family == "aot":
        made = aot_case(entry_kernel(krng, group, ("BM", "BN", "BK")), rng, name)
    elif family == "gemm":
        g = GemmKernel(krng, np.random.default_rng([13, group]) if wide else None)
        made = gemm_mutation(g, rng, name) if rng.random() < 0.4 else gemm_launch(g, rng, name)
    elif family == "pool":
        pk = PoolKernel(krng)
        mutation = [None, None, None, "valid_rows" if pk.valid else None, "negative_row"][int(rng.integers(5))]
        made = pool_launch(pk, rng, name, mutation)
    elif family == "chain":
        made = chain_case(rng, krng, name)
    elif family == "sum":
        made = slices_case(rng, krng, name) if krng.random() < 0.5 else sum_case(rng, krng, name)
    elif family == "model":
        made = model_case(rng, krng, name, group, seed >= ENTRY_POINTS)
    else:
        made = shipped_case(rng, name, wide)
    made.seed = seed
    made.on_iss = seed % 10 == 0 and made.expect in ("result", "runtime")
    return made


_modules = {}


def build(c: Case) -> Case:
    """Write the case's kernel to its own file (named by the text's hash, so the disk cache
    serves it again) and attach the JIT kernel and the marker's (line, col)."""
    if c.source is None:
        return c
    text = "import baco\nimport baco.language as bl\n\n\n@baco.jit\n"
    where = None
    lines = text.count("\n")
    out = []
    for i, line in enumerate(c.source.splitlines()):
        if MARK in line:
            where = (lines + i + 1, line.index(MARK) + 1)
            line = line.replace(MARK, "")
        out.append(line)
    text += "\n".join(out) + "\n"
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    directory = corpus_dir() / "generated"
    directory.mkdir(exist_ok=True)
    path = directory / f"k_{digest}.py"
    if digest not in _modules:
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            tmp.replace(path)
        spec = importlib.util.spec_from_file_location(f"baco_generated_{digest}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[digest] = module
    c.kernel, c.path = _modules[digest].KERNEL, str(path)
    c.where = where if c.expect == "compile" or c.located else None
    return c


def _names_argument(message: str, names) -> bool:
    return any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", message) for n in names)


def classify(c: Case, target: str = "sim") -> tuple[str, str]:
    """(outcome, detail) of one run of case `c` on `target` ("sim", "interpreter" or "iss")."""
    backend = "sim" if target == "interpreter" else target
    previous = os.environ.get("BACO_INTERPRET")
    os.environ["BACO_INTERPRET"] = "1" if target == "interpreter" else "0"
    try:
        got = c.run(c.kernel, backend)
    except Exception as e:     # noqa: BLE001 — classifying every outcome is the point
        return _classify_error(c, e)
    finally:
        if previous is None:
            os.environ.pop("BACO_INTERPRET", None)
        else:
            os.environ["BACO_INTERPRET"] = previous
    if c.expect != "result":
        return "unexpected outcome", f"ran without the expected {c.expect} error"
    with np.errstate(invalid="ignore"):
        expected = c.reference()
    for key, array in expected.items():
        if got[key].shape != array.shape or got[key].dtype != array.dtype:
            return "wrong result", f"{key}: {got[key].dtype}{got[key].shape} instead of {array.dtype}{array.shape}"
        if not np.array_equal(got[key], array):
            return "wrong result", f"{key}: {int((got[key] != array).sum())} of {array.size} elements differ"
    return "bit-exact", ""


def _classify_error(c: Case, e: Exception) -> tuple[str, str]:
    kind = type(e).__name__
    text = str(e).splitlines()[0] if str(e) else ""
    detail = f"{kind}: {text}"
    if isinstance(e, CompilationError):
        path = getattr(c, "path", None)
        located = path is not None and e.filename == path and e.line is not None
        if c.expect != "compile":
            return ("unexpected outcome" if located else "unlocated error"), detail
        if c.match not in str(e):
            return "unexpected outcome", f"message lacks {c.match!r}: {detail}"
        if not located or (c.where is not None and (e.line, e.col) != c.where):
            return "unlocated error", f"at {e.filename}:{e.line}:{e.col}, expected {c.where}: {detail}"
        return "compile error", ""
    if isinstance(e, (KernelRuntimeError, GemminiFault)):
        if c.expect != "runtime":
            return "unexpected outcome", detail
        if c.match not in str(e) or not isinstance(e, c.exc):
            return "unexpected outcome", f"expected {c.match!r}: {detail}"
        if c.located and (getattr(e, "line", None), getattr(e, "col", None)) != c.where:
            return "unlocated error", f"at {getattr(e, 'line', None)}:{getattr(e, 'col', None)}, expected {c.where}"
        return "run-time error", ""
    if type(e) in (TypeError, ValueError) or (isinstance(e, (TypeError, ValueError)) and "baco" in type(e).__module__) \
            or (c.expect == "launch" and type(e) in c.exc):
        if c.expect != "launch":
            return "internal error" if _internal(e) else "unexpected outcome", detail
        names = getattr(c, "names", None)
        if (names and not _names_argument(str(e), names)) or (not names and c.match not in str(e)):
            return "unlocated error", f"does not name {names or c.match}: {detail}"
        if "Traceback" in str(e):
            return "unlocated error", f"a traceback in the message: {detail}"
        return "argument error", ""
    return "internal error", detail + " @ " + _innermost(e)


def _internal(e: Exception) -> bool:
    """Raised inside the compiler's passes (not by an entry point's argument check)."""
    return any(part in _innermost(e) for part in ("/passes/", "/codegen/", "/dialects/", "/sim/"))


def _innermost(e: Exception) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"


def targets(c: Case, iss: bool = True) -> list[str]:
    out = ["sim"]
    interpreted = not c.category.startswith("aot")      # a compiled kernel's run is never interpreted
    if interpreted and (c.expect in ("result", "runtime") or c.category.startswith(("shipped", "model", "autotune"))):
        out.append("interpreter")
    if iss and c.on_iss:
        out.append("iss")
    return out


def run_seed(seed: int, iss: bool = True) -> dict:
    """Every target's outcome of case `seed` (in this process)."""
    try:
        c = build(case(seed))
    except Exception as e:     # noqa: BLE001 — a generator bug is reported, not hidden
        return {"seed": seed, "name": f"gen:{seed}", "expect": "?", "category": "?",
                "results": [["-", "internal error", f"generator: {type(e).__name__}: {e} @ {_innermost(e)}"]]}
    results = []
    for target in targets(c, iss):
        try:
            results.append([target, *classify(c, target)])
        except Exception as e:     # noqa: BLE001
            results.append([target, "internal error", f"checker: {type(e).__name__}: {e}"])
    return {"seed": seed, "name": c.name, "expect": c.expect, "category": c.category, "results": results}


# ---- isolation: one worker process, a time limit per case ---------------------------------------------
REPO = Path(__file__).resolve().parents[1]


class Worker:
    """A `python -m tests.kernel_generator --worker` process that runs seeds sent on its stdin
    and answers one JSON line each."""

    def __init__(self, iss: bool):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.kernel_generator", "--worker"]
                                     + ([] if iss else ["--no-iss"]), cwd=REPO, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(self, seed: int, timeout: float):
        """The seed's result dict, or ("hang", seconds) / ("crash", return code)."""
        self.proc.stdin.write(f"{seed}\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.kill()
            return "hang", timeout
        line = self.proc.stdout.readline()
        if not line:
            return "crash", self.proc.wait()
        return json.loads(line)

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def run_isolated(seeds, timeout: float = 300.0, iss: bool = True):
    """Yield each seed's result dict, run in a worker process (restarted after a hang or a
    crash, which become the seed's outcome)."""
    worker = None
    for seed in seeds:
        worker = worker or Worker(iss)
        t0 = time.perf_counter()
        answer = worker.ask(seed, timeout)
        if isinstance(answer, tuple):
            what, value = answer
            worker = None if what == "crash" else worker.kill() or None
            detail = f"no answer in {timeout:g} s" if what == "hang" else f"worker exited with {value}"
            answer = {"seed": seed, "name": f"gen:{seed}", "expect": "?", "category": "?",
                      "results": [["-", what, detail]]}
        answer["seconds"] = time.perf_counter() - t0
        yield answer
    if worker is not None:
        worker.proc.stdin.close()
        worker.proc.wait()


def worker_main(iss: bool) -> int:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)           # anything the compiler prints goes to stderr, not into the answers
    sys.stdout = sys.stderr
    for line in sys.stdin:
        out.write(json.dumps(run_seed(int(line), iss)) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    if "--worker" in sys.argv:
        sys.exit(worker_main("--no-iss" not in sys.argv))
    for s in map(int, sys.argv[1:]):
        print(json.dumps(run_seed(s)))
