"""The fuzz corpus: malformed and edge-case kernels and launches, each with the outcome
it must have (issue G):

- "compile": a CompilationError at a stated line:col (the `@@` marker in the source)
  whose message contains `match`;
- "launch": a TypeError/ValueError naming the argument (`match`), raised before compiling;
- "runtime": a located error while running (GemminiFault, KernelRuntimeError);
- "result": a correct result, compared with a numpy reference of Gemmini's arithmetic
  and with the interpreter (BACO_INTERPRET=1).

Hand-written cases cover every statement and builtin of baco.language; generated ones
cover every launch argument kind, the capacity limits and shapes/blocks/dataflows.
The kernels are written to one generated module (stable path under the compile
cache, so the disk cache serves repeated runs). Used by tests/test_fuzz_corpus.py
and benchmarks/fuzz_report.py."""
from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from baco.errors import CompilationError, KernelRuntimeError
from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import GemminiFault

MARK = "@@"


@dataclass
class Case:
    name: str
    category: str
    expect: str                      # compile | launch | runtime | result
    source: str | None = None        # `def KERNEL(...)` text; `@@` marks a compile error's column
    run: Callable | None = None      # run(kernel, target) -> dict of output arrays
    match: str = ""
    exc: tuple = ()
    reference: Callable | None = None     # () -> dict of expected arrays
    where: tuple | None = None       # (line, col) in the generated file, filled in by build()
    kernel: object = field(default=None, repr=False)
    on_iss: bool = False             # also run on the ISS in the default suite
    slow: bool = False               # only with -m slow (the default suite keeps a third of the shapes)
    located: bool = False            # a "runtime" case whose KernelRuntimeError is at the `@@` marker


GEMM_PARAMS = ("a_ptr, b_ptr, c_ptr, M, N, K, scale, "
               "BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr")
P_A = "a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(BM, BK))"
P_B = "b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, 0), block_shape=(BK, BN))"
P_C = "c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BM, BN))"
ACC = "acc = bl.zeros((BM, BN), dtype=bl.int32)"


def kernel_source(body: list[str], params: str = GEMM_PARAMS) -> str:
    lines = [f"def KERNEL({params}):"]
    for stmt in body:
        lines += ["    " + line for line in stmt.split("\n")]
    return "\n".join(lines) + "\n"


def rand(shape, seed, dtype=np.int8, lo=-128, hi=128):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def gemm_args(M=32, N=32, K=32, seed=0, out=np.int32):
    return [rand((M, K), seed), rand((K, N), seed + 1), np.zeros((M, N), out), M, N, K, 1.0]


def launch_gemm(args, grid=(2, 2), **meta):
    meta = {"BM": 16, "BN": 16, "BK": 16, **meta}

    def run(kernel, target="sim"):
        kernel[grid](*args, target=target, **meta)
        return {"c": args[2]}
    return run


# ---- compile errors: every statement and builtin, misused --------------------------------------
COMPILE = [  # (name, category, body statements, message)
    ("while_loop", "statement", ["@@while M > 0:\n    pass"], "while loops are not supported"),
    ("runtime_if", "statement", ["if @@M > 3:\n    pass"], "comparisons of runtime values are not supported"),
    ("return_value", "statement", ["@@return 1"], "kernels cannot return a value"),
    ("chained_assign", "statement", ["@@x = y = 1"], "chained assignment is not supported"),
    ("subscript_assign", "statement", [P_A, "@@a[0] = 1"], "only assignment to names"),
    ("attribute_augassign", "statement", [P_A, "@@a.x += 1"], "only names can be updated in place"),
    ("with_statement", "statement", ["@@with M:\n    pass"], "unsupported construct in a baco kernel: With"),
    ("try_statement", "statement", ["@@try:\n    pass\nexcept Exception:\n    pass"], "unsupported construct"),
    ("import_statement", "statement", ["@@import os"], "unsupported construct in a baco kernel: Import"),
    ("nested_def", "statement", ["@@def f():\n    pass"], "unsupported construct"),
    ("assert_statement", "statement", ["@@assert M > 0"], "unsupported construct"),
    ("raise_statement", "statement", ["@@raise ValueError()"], "unsupported construct"),
    ("del_statement", "statement", ["x = 1", "@@del x"], "unsupported construct"),
    ("global_statement", "statement", ["@@global q"], "unsupported construct"),
    ("for_tuple_target", "statement", ["for @@(i, j) in range(3):\n    pass"], "the loop variable must be a name"),
    ("for_over_list", "statement", ["for i in @@[1, 2]:\n    pass"], "kernels loop with `for i in range(...)`"),
    ("for_else", "statement", ["@@for i in range(3):\n    pass\nelse:\n    pass"], "for/else is not supported"),
    ("range_four_args", "statement", ["for i in @@range(0, 1, 2, 3):\n    pass"], "range() takes 1 to 3 arguments"),
    ("pointer_reassigned_in_loop", "statement", ["for i in range(3):\n    @@a_ptr = b_ptr"],
     "pointer argument `a_ptr` cannot be reassigned in a loop"),
    ("loop_changes_type", "statement", ["x = 1", "for i in range(3):\n    @@x = scale"], "changes type inside the loop"),
    ("loop_changes_nested", "statement", [P_A, "for i in range(3):\n    for j in range(2):\n        @@a = 5"],
     "changes type inside the loop"),
    ("undefined_name", "expression", ["x = @@undefined_thing"], "name `undefined_thing` is not defined"),
    ("list_comprehension", "expression", ["x = @@[i for i in range(3)]"], "unsupported expression"),
    ("lambda", "expression", ["f = @@lambda: 1"], "unsupported expression in a baco kernel: Lambda"),
    ("fstring", "expression", ['x = @@f"{M}"'], "unsupported expression"),
    ("subscript_read", "expression", ["x = @@M[0]"], "unsupported expression in a baco kernel: Subscript"),
    ("attribute_of_scalar", "expression", ["x = @@M.real"], "has no attribute `real`"),
    ("unknown_language_function", "builtin", ["x = @@bl.nothing"], "`nothing` is not an attribute"),
    ("invert_operator", "expression", ["x = @@~M"], "unsupported unary operator"),
    ("runtime_and", "expression", ["x = @@M and N"], "`and`/`or` work on compile-time values only"),
    ("chained_comparison", "expression", ["x = @@0 < BM < 64"], "chained comparisons are not supported"),
    ("runtime_comparison", "expression", ["x = @@M < N"], "comparisons of runtime values are not supported"),
    ("integer_power", "expression", ["x = @@M ** 2"], "unsupported integer operator Pow"),
    ("integer_true_division", "expression", ["x = @@M / 2"], "use // for division"),
    ("float_floor_division", "expression", ["x = @@scale // 2.0"], "unsupported float operator FloorDiv"),
    ("non_language_call", "builtin", ["x = @@print(M)"], "`print` is not a baco.language function"),
    ("range_as_value", "builtin", ["x = @@range(3)"], "range() is only allowed as a for-loop iterator"),
    ("program_id_axis_3", "builtin", ["x = @@bl.program_id(3)"], "the grid axis must be the constant 0, 1 or 2"),
    ("program_id_runtime_axis", "builtin", ["x = @@bl.program_id(M)"], "the grid axis must be the constant"),
    ("num_programs_axis_5", "builtin", ["x = @@bl.num_programs(5)"], "the grid axis must be the constant"),
    ("cdiv_of_block", "builtin", [P_A, "x = @@bl.cdiv(bl.load(a), 2)"], "must be an integer scalar, got int8 block"),
    ("make_block_ptr_scalar_base", "builtin",
     ["p = @@bl.make_block_ptr(M, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(BM, BK))"],
     "make_block_ptr needs a pointer argument as base"),
    ("make_block_ptr_3d", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K, N), strides=(K, 1), offsets=(0, 0), block_shape=(BM, BK))"],
     "must be a 2-tuple"),
    ("make_block_ptr_runtime_block", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(M, BK))"],
     "block_shape must be positive compile-time integers"),
    ("make_block_ptr_zero_block", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(0, BK))"],
     "block_shape must be positive compile-time integers"),
    ("make_block_ptr_column_major", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(BM, BK), "
      "order=(0, 1))"], "order=(0, 1) (column-major) needs stride 1 in dimension 0"),
    ("make_block_ptr_float_offset", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(scale, 0), block_shape=(BM, BK))"],
     "must be an integer scalar"),
    ("make_block_ptr_bool_stride", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(True, 1), offsets=(0, 0), block_shape=(BM, BK))"],
     "must be an integer, not a bool"),
    ("advance_scalar", "builtin", ["p = @@bl.advance(M, (0, 1))"], "advance() needs a block pointer"),
    ("advance_three_offsets", "builtin", [P_A, "a = @@bl.advance(a, (0, 1, 2))"], "advance() offsets must be a 2-tuple"),
    ("boundary_check_dim_2", "builtin", [P_A, "x = @@bl.load(a, boundary_check=(2,))"],
     "boundary_check dimensions must be 0 and/or 1"),
    ("load_scalar", "builtin", ["x = @@bl.load(M)"], "load() needs a block pointer"),
    ("load_nan_padding", "builtin", [P_A, 'x = @@bl.load(a, padding_option="nan")'],
     "only padding_option='zero' is supported"),
    ("store_to_scalar", "builtin", [P_A, "@@bl.store(M, bl.load(a))"], "store() needs a block pointer"),
    ("store_scalar_value", "builtin", [P_C, "@@bl.store(c, M)"], "store() needs a block value"),
    ("store_shape_mismatch", "builtin", [P_A, P_C, "@@bl.store(c, bl.load(a))"], "through a"),
    ("store_int32_via_int8", "builtin", [P_A, ACC, "@@bl.store(a, acc)"],
     "cannot store a int32 block through a int8 pointer"),
    ("dot_scalar_operand", "builtin", [P_A, "x = @@bl.dot(M, bl.load(a))"], "dot() first operand must be a block, got integer scalar"),
    ("dot_int32_operands", "builtin", [ACC, "x = @@bl.dot(acc, acc)"], "Gemmini dot() multiplies int8 blocks"),
    ("dot_shape_mismatch", "builtin", [P_A, P_B.replace("block_shape=(BK, BN)", "block_shape=(32, BN)"),
                                        "x = @@bl.dot(bl.load(a), bl.load(b))"], "dot() shapes do not match"),
    ("dot_scalar_accumulator", "builtin", [P_A, P_B, "x = @@bl.dot(bl.load(a), bl.load(b), M)"],
     "dot() accumulator must be a"),
    ("zeros_runtime_shape", "builtin", ["x = @@bl.zeros((M, 16))"], "zeros() shape must be two positive"),
    ("zeros_int8", "builtin", ["x = @@bl.zeros((16, 16), dtype=bl.int8)"], "zeros() makes int32 accumulator blocks"),
    ("relu_scalar", "builtin", ["x = @@bl.relu(M)"], "relu() needs a block"),
    ("to_float32", "builtin", [ACC, "x = @@acc.to(bl.float32)"], "blocks convert to int8 or int32"),
    ("to_not_a_dtype", "builtin", [ACC, "x = @@acc.to(3)"], ".to() needs a baco dtype"),
    ("to_two_args", "builtin", [ACC, "x = @@acc.to(bl.int8, 1)"], ".to() takes one dtype"),
    ("block_times_block", "builtin", [P_A, "x = bl.load(a)", "y = @@x * x"],
     "elementwise block * block is not supported"),
    ("store_scaled_int8_block", "builtin", [P_A, "bl.store(a, @@bl.load(a) * scale)"],
     "scale/relu/convert apply to int32 accumulator blocks"),
    ("add_mismatched_blocks", "builtin", [P_A, "acc = bl.zeros((BM, BK + 16), dtype=bl.int32)",
                                          "x = @@acc + bl.load(a)"], "cannot add blocks of types"),
    # scalar min()/max(), compile-time `a if c else b`, pointer arithmetic `ptr + n`, optional pointers
    ("min_one_argument", "builtin", ["x = @@min(M)"], "min() takes two or more integer scalars"),
    ("max_of_block", "builtin", [P_A, "x = max(M, @@bl.load(a))"],
     "an argument of max() must be an integer scalar, got int8 block"),
    ("min_of_float", "builtin", ["x = min(M, @@scale)"], "an argument of min() must be an integer scalar, got float"),
    ("min_of_pointer", "builtin", ["x = min(M, @@a_ptr)"], "an argument of min() must be an integer scalar, got pointer"),
    ("max_float_loop_bound", "builtin", ["for i in range(max(0, @@scale), M):\n    pass"],
     "an argument of max() must be an integer scalar, got float"),
    ("min_block_shape", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(min(BM, M), BK))"],
     "block_shape must be positive compile-time integers"),
    ("runtime_if_expression", "expression", ["x = 1 if @@M else 2"], "`a if cond else b` needs a compile-time condition"),
    ("pointer_minus", "expression", ["p = @@a_ptr - 1"], "a pointer can only be moved by adding an integer"),
    ("pointer_times", "expression", ["p = @@a_ptr * 2"], "a pointer can only be moved by adding an integer"),
    ("pointer_plus_pointer", "expression", ["p = @@a_ptr + b_ptr"], "a pointer can only be moved by adding"),
    ("pointer_plus_float", "expression", ["p = a_ptr + @@scale"], "a pointer offset must be an integer scalar, got float"),
    ("pointer_plus_block", "expression", [P_B, "p = a_ptr + @@bl.load(b)"],
     "a pointer offset must be an integer scalar, got int8 block"),
    ("pointer_is_pointer", "expression", ["x = @@a_ptr is b_ptr"], "comparisons of runtime values are not supported"),
    ("load_offset_pointer", "builtin", ["p = a_ptr + M", "x = @@bl.load(p)"], "load() needs a block pointer, got pointer"),
    ("store_offset_pointer", "builtin", [ACC, "@@bl.store(c_ptr + N, acc)"], "store() needs a block pointer, got pointer"),
    ("int8_bias_as_accumulator", "builtin",
     [P_A, P_B, "bias = bl.make_block_ptr(a_ptr, shape=(1, K), strides=(0, 1), offsets=(0, 0), block_shape=(BM, BK))",
      "acc = bl.load(bias)", "for _ in range(2):\n    acc += @@bl.dot(bl.load(a), bl.load(b))"],
     "dot() accumulator must be a tensor<16x16xi32> block, got int8 block"),
    ("relu_int32_store", "epilogue", [P_C, ACC, "bl.store(c, @@bl.relu(acc))"], "relu on an int32 output"),
    ("scaled_int32_store", "epilogue", [P_C, ACC, "@@bl.store(c, acc * scale)"],
     "cannot store a float32 block through a int32 pointer; convert it with .to()"),
    ("two_scales", "epilogue", [P_A, ACC, "bl.store(a, (@@acc * scale * scale).to(bl.int8))"],
     "only int32 accumulator blocks and loaded int8 blocks can be scaled (this block is f32)"),
    ("max_pool_int32", "epilogue", [ACC, "x = @@bl.max_pool2d(acc, (4, 4), 2)"], "max_pool2d() pools int8 pixels"),
    ("max_pool_kernel_4", "epilogue", [ACC, "x = @@bl.max_pool2d(acc.to(bl.int8), (4, 4), 4)"],
     "kernel 4 is outside 1..3 (config_st's 2-bit pool_size field)"),
    # constant zero steps and divisors (run-time ones are runtime_check_cases)
    ("range_zero_step", "statement", ["for i in @@range(0, M, 0):\n    pass"], "range() step must not be zero"),
    ("range_zero_step_constexpr", "statement", ["for i in @@range(BM, 0, BM - BM):\n    pass"],
     "range() step must not be zero"),
    ("floordiv_by_zero", "expression", ["x = @@M // 0"], "integer division or modulo by zero"),
    ("mod_by_zero_constexpr", "expression", ["x = @@M % (BM - BM)"], "integer division or modulo by zero"),
    ("constant_mod_by_zero", "expression", ["x = @@BM % 0"], "division or modulo by zero"),
    ("cdiv_by_zero", "builtin", ["x = @@bl.cdiv(BM, 0)"], "cdiv() by zero"),
    ("runtime_cdiv_by_zero", "builtin", ["x = @@bl.cdiv(M, 0)"], "integer division or modulo by zero"),
    # what the user did, where: carried blocks and pointers replaced in a loop (bufferization's
    # "Yield operand #0 is not equivalent to the corresponding iter bbArg" at the `for`), a
    # pointer's stride at the pointer (not its load), a pooled block's misuse at the misuse
    ("loop_fresh_zeros", "statement", [P_A, P_B, ACC, "for i in range(2):\n    acc = @@bl.zeros((BM, BN), "
                                       "dtype=bl.int32)\n    acc += bl.dot(bl.load(a), bl.load(b))",
                                       P_C, "bl.store(c, acc)"], "`acc` is a block carried by the loop"),
    ("loop_dot_without_acc", "statement", [P_A, P_B, ACC, "for i in range(2):\n    acc = @@bl.dot(bl.load(a), "
                                           "bl.load(b))", P_C, "bl.store(c, acc)"], "cannot keep in place"),
    ("loop_reloaded_block", "statement", [P_A, P_B, "x = bl.load(a)", "for i in range(2):\n    x = @@bl.load(b)",
                                          "bl.store(a, x)"], "`x` is a block carried by the loop"),
    ("loop_nested_fresh_block", "statement", [P_A, P_B, ACC, "for i in range(2):\n    for j in range(2):\n"
                                              "        acc = @@bl.dot(bl.load(a), bl.load(b))", P_C, "bl.store(c, acc)"],
     "`acc` is a block carried by the loop"),
    ("loop_pointer_replaced", "statement", [P_A, P_B, "for i in range(2):\n    @@a = b\n    x = bl.load(a)"],
     "`a` is a block pointer carried by the loop"),
    ("pointer_column_stride", "builtin",
     ["p = @@bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 2), offsets=(0, 0), block_shape=(BM, BK))",
      "x = bl.load(p)"], "no dimension has stride 1 (strides ('integer scalar', 'int 2'))"),
    ("pooled_block_dot", "epilogue", [P_A, P_B, "acc = bl.dot(bl.load(a), bl.load(b))",
                                      "x = bl.max_pool2d(acc.to(bl.int8), (4, 4), 2)", "y = @@bl.dot(x, bl.load(b))",
                                      P_C.replace("(BM, BN)", "(4, BN)"), "bl.store(c, y)"], "a pooled block can only be stored"),
]

# The capacity rule: blocks that do not fit (config, BM, BN, BK, space named in the message).
CAPACITY = [(GemminiConfig.from_capacity(dim, sp, acc), bm, bn, bk, space)
            for dim, sp, acc, bm, bn, bk, space in [
                (16, 8, 64, 256, 16, 256, "scratchpad"), (16, 256, 4, 128, 128, 16, "accumulator"),
                (16, 256, 64, 512, 512, 512, "scratchpad"), (8, 16, 16, 128, 8, 256, "scratchpad"),
                (8, 64, 2, 64, 64, 8, "accumulator"), (4, 4, 4, 64, 64, 64, "scratchpad"),
                (32, 64, 32, 256, 256, 32, "accumulator"), (32, 32, 256, 128, 32, 512, "scratchpad"),
                (16, 16, 16, 64, 256, 64, "scratchpad"), (4, 2, 64, 32, 4, 64, "scratchpad")]]

GEMM_BODY = [
    "pm = bl.program_id(0)", "pn = bl.program_id(1)",
    "a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pm * BM, 0), block_shape=(BM, BK))",
    "b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pn * BN), block_shape=(BK, BN))",
    ACC,
    "for _ in range(bl.cdiv(K, BK)):\n"
    "    acc += bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)))\n"
    "    a = bl.advance(a, (0, BK))\n"
    "    b = bl.advance(b, (BK, 0))",
    "c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pm * BM, pn * BN), block_shape=(BM, BN))",
    "@@bl.store(c, acc, boundary_check=(0, 1))"]


def gemm_kernel_source(epilogue: str = "int32") -> str:
    """The corpus GEMM: int32 output, or int8 through scale (+ ReLU) with `epilogue` int8/relu8."""
    body = list(GEMM_BODY)
    if epilogue != "int32":
        out = "bl.relu(acc * scale)" if epilogue == "relu8" else "acc * scale"
        body[-1] = f"@@bl.store(c, ({out}).to(bl.int8), boundary_check=(0, 1))"
    return kernel_source(body)


def capacity_source(space: str) -> str:
    """The corpus GEMM with the marker where a capacity error points: the last block placed in
    the space that overflows (B's load for the scratchpad, the accumulator's zeros)."""
    text = gemm_kernel_source().replace(MARK, "")
    if space == "scratchpad":
        return text.replace("bl.load(b, boundary_check", MARK + "bl.load(b, boundary_check")
    return text.replace("acc = bl.zeros(", "acc = " + MARK + "bl.zeros(")


def cdiv(a, b):
    return -(-a // b)


def gemm_result_case(name, M, N, K, block, dataflow="WS", epilogue="int32", scale=1.0, seed=0, on_iss=False,
                     category="shapes", slow=False):
    out = np.int32 if epilogue == "int32" else np.int8
    args = gemm_args(M, N, K, seed, out)
    args[6] = scale
    bm, bn, bk = block
    grid = (cdiv(M, bm), cdiv(N, bn))

    def run(kernel, target="sim"):
        args[2][...] = 0
        kernel[grid](*args, BM=bm, BN=bn, BK=bk, target=target, dataflow=dataflow)
        return {"c": args[2].copy()}

    def reference():
        with np.errstate(invalid="ignore"):
            return {"c": reference_matmul(args[0], args[1], out="int32" if epilogue == "int32" else "int8",
                                          scale=scale, relu=epilogue == "relu8",
                                          os_k_block=bk if dataflow == "OS" else None)}
    return Case(name, category, "result", gemm_kernel_source(epilogue), run, reference=reference, on_iss=on_iss,
                slow=slow)


def corpus() -> list[Case]:
    cases = []
    # compile errors
    for name, category, body, match in COMPILE:
        cases.append(Case(f"compile:{name}", category, "compile", kernel_source(body), launch_gemm(gemm_args()),
                          match=match, exc=(CompilationError,)))
    for i, (cfg, bm, bn, bk, space) in enumerate(CAPACITY):
        M = max(bm, bk, 32)
        cases.append(Case(f"capacity:dim{cfg.dim}_sp{cfg.sp_kb:g}_acc{cfg.acc_kb:g}_{bm}x{bn}x{bk}", "capacity",
                          "compile", capacity_source(space),
                          launch_gemm(gemm_args(M, max(bn, 32), max(bk, 32)), grid=(1, 1), BM=bm, BN=bn, BK=bk,
                                      config=cfg),
                          match=f"do not fit the Gemmini {space}", exc=(CompilationError,)))
    cases += launch_cases()
    cases += runtime_cases()
    cases += runtime_check_cases()
    cases += result_cases()
    return cases


# ---- launches: every argument kind, each wrong way -----------------------------------------------
def launch_cases() -> list[Case]:
    cases = []
    src = gemm_kernel_source()
    bad_arrays = [("float64", lambda a: a.astype(np.float64), TypeError, "dtype float64"),
                  ("int16", lambda a: a.astype(np.int16), TypeError, "dtype int16"),
                  ("uint8", lambda a: a.astype(np.uint8), TypeError, "dtype uint8"),
                  ("non_contiguous", lambda a: np.asfortranarray(np.tile(a, (1, 2)))[:, ::2], TypeError,
                   "must be C-contiguous"),
                  ("list", lambda a: a.tolist(), TypeError, "unsupported argument"),
                  ("none", lambda a: None, TypeError, "unsupported argument"),   # no default None
                  ("string", lambda a: "abc", TypeError, "unsupported argument")]
    for pos, pname in enumerate(("a_ptr", "b_ptr", "c_ptr")):
        for label, make, exc, match in bad_arrays:
            args = gemm_args()
            args[pos] = make(args[pos])
            cases.append(Case(f"launch:{pname}_{label}", "launch-array", "launch", src, launch_gemm(args),
                              match=f"`{pname}`" if label not in ("float64", "int16", "uint8") else match,
                              exc=(exc,)))
    bad_ints = [("2**70", 2 ** 70, ValueError, "is outside the kernel's integer range"),
                ("-2**64", -2 ** 64, ValueError, "is outside the kernel's integer range"),
                ("2**63", 2 ** 63, ValueError, "is outside the kernel's integer range"),
                ("np_uint64_max", np.uint64(2 ** 64 - 1), ValueError, "is outside the kernel's integer range"),
                ("bool", True, TypeError, "must be a constexpr parameter"),
                ("string", "32", TypeError, "unsupported argument"),
                ("none", None, TypeError, "unsupported argument"),
                ("complex", 1j, TypeError, "unsupported argument")]
    for pos, pname in ((3, "M"), (4, "N"), (5, "K")):
        for label, value, exc, match in bad_ints:
            args = gemm_args()
            args[pos] = value
            cases.append(Case(f"launch:{pname}_{label}", "launch-scalar", "launch", src, launch_gemm(args),
                              match=f"`{pname}`", exc=(exc,)))
    bad_grids = [("float_2.5", (2.5, 2), ValueError, "grid dimension 0 must be an integer"),
                 ("negative", (-1, 2), ValueError, "grid dimension 0 = -1"),
                 ("too_large", (2, 2 ** 70), ValueError, "grid dimension 1 = "),
                 ("empty", (), ValueError, "1 to 3 dimensions"),
                 ("four_dims", (1, 1, 1, 1), ValueError, "1 to 3 dimensions"),
                 ("string", ("2", 2), TypeError, "grid dimension 0 must be an integer"),
                 ("none", (None, 2), TypeError, "grid dimension 0 must be an integer"),
                 ("bool", (True, 2), TypeError, "grid dimension 0 must be an integer"),
                 ("nan", (float("nan"), 2), ValueError, "grid dimension 0 must be an integer"),
                 ("inf", (2, float("inf")), ValueError, "grid dimension 1 must be an integer")]
    for label, grid, exc, match in bad_grids:
        cases.append(Case(f"launch:grid_{label}", "launch-grid", "launch", src, launch_gemm(gemm_args(), grid=grid),
                          match=match, exc=(exc,)))
    bad_meta = [("BM_zero", dict(BM=0), CompilationError, "block_shape must be positive"),
                ("BM_negative", dict(BM=-16), CompilationError, "block_shape must be positive"),
                ("BM_float", dict(BM=16.5), CompilationError, "block_shape must be positive"),
                ("BM_string", dict(BM="16"), CompilationError, "must be an integer scalar, got str '16'"),
                ("BK_none", dict(BK=None), CompilationError, "block_shape must be positive compile-time integers"),
                ("missing_constexpr", dict(BN=None, BM=16), CompilationError, "must be"),
                ("unknown_keyword", dict(BLOCK=16), TypeError, "unexpected keyword argument 'BLOCK'"),
                ("bad_target", dict(target="gpu"), ValueError, "target must be one of"),
                ("bad_dataflow", dict(dataflow="XS"), ValueError, "dataflow must be 'WS' or 'OS', not 'XS'"),
                # a schedule's fields are checked before anything divides by them
                ("schedule_zero_block", dict(schedule={"block_m": 0, "block_n": 16, "block_k": 16}), ValueError,
                 "schedule: block_m=0 must be a positive integer"),
                ("schedule_zero_rows", dict(schedule=(16, 16, 16, "WS", False, 0)), ValueError,
                 "schedule: rows=0 must be a positive integer"),
                ("schedule_bad_dataflow", dict(schedule=(16, 16, 16, "XS")), ValueError,
                 "dataflow must be one of ('WS', 'OS'), not 'XS'")]
    for label, meta, exc, match in bad_meta:
        run = launch_gemm(gemm_args(), **{k: v for k, v in meta.items() if k != "target"})
        if "target" in meta:
            def run(kernel, target="sim", _args=gemm_args(), _t=meta["target"]):
                kernel[(2, 2)](*_args, BM=16, BN=16, BK=16, target=_t)
        cases.append(Case(f"launch:{label}", "launch-meta", "launch", src, run, match=match, exc=(exc,)))
    # exact values of other kinds are accepted: numpy integers, integral float grids, torch tensors
    for label, convert in (("numpy_int_scalars", lambda a: a[:3] + [np.int64(a[3]), np.int32(a[4]), np.uint16(a[5])]
                            + a[6:]),
                           ("numpy_float32_scale", lambda a: a[:6] + [np.float32(a[6])]),
                           ("torch_tensors", lambda a: [__import__("torch").from_numpy(x) for x in a[:3]] + a[3:])):
        base = gemm_args(seed=7)
        args = convert(base)

        def run(kernel, target="sim", _args=args, _c=base[2]):
            kernel[(np.int64(2), 2.0)](*_args, BM=16, BN=16, BK=16, target=target)
            return {"c": _c}
        cases.append(Case(f"launch:accepts_{label}", "launch-exact", "result", src, run,
                          reference=lambda b=base: {"c": reference_matmul(b[0], b[1])}))
    return cases


# ---- run-time: located errors, never wrong results -----------------------------------------------
def runtime_cases() -> list[Case]:
    cases = []
    body = list(GEMM_BODY)
    body[2] = ("a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pm * BM, 0 - K), "
               "block_shape=(BM, BK))")
    src = kernel_source(body)
    cases.append(Case("runtime:negative_column_offset", "boundary", "runtime", src, launch_gemm(gemm_args()),
                      match="negative column offset", exc=(KernelRuntimeError,), on_iss=True))
    unchecked = [line.replace(", boundary_check=(0, 1)", "") for line in GEMM_BODY]
    src = kernel_source(unchecked)
    for M in (17, 40):
        cases.append(Case(f"runtime:unchecked_ragged_M{M}", "boundary", "runtime", src,
                          launch_gemm(gemm_args(M, 32, 32), grid=(cdiv(M, 16), 2)),
                          match="outside the kernel's arrays", exc=(GemminiFault,), on_iss=M == 17))
    lied = gemm_args(16, 16, 16)
    lied[3] = 64                              # M larger than the array: reads past its end
    cases.append(Case("runtime:lying_about_M", "boundary", "runtime", gemm_kernel_source(), launch_gemm(
        lied, grid=(4, 1)), match="outside the kernel's arrays", exc=(GemminiFault,)))
    return cases


# ---- run-time checks: zero divisors and steps, pooling fields; negative steps run as Python's ----
def k_loop_body(header: str) -> list[str]:
    """The corpus GEMM whose K loop is `header` (over block indices kb), each step a fresh
    block pointer pair at kb * BK."""
    return ["pm = bl.program_id(0)", "pn = bl.program_id(1)", ACC,
            header + "\n"
            "    a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pm * BM, kb * BK), "
            "block_shape=(BM, BK))\n"
            "    b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(kb * BK, pn * BN), "
            "block_shape=(BK, BN))\n"
            "    acc += bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)))",
            P_C.replace("offsets=(0, 0)", "offsets=(pm * BM, pn * BN)"), "bl.store(c, acc, boundary_check=(0, 1))"]


def k_blocks_reference(args, kbs):
    """C = sum over the K blocks kb in `kbs` (each taken as often as it occurs) of A's and B's kb-th blocks."""
    a, b = args[0].astype(np.int64), args[1].astype(np.int64)
    c = np.zeros((a.shape[0], b.shape[1]), np.int64)
    for kb in kbs:
        c += a[:, kb * 16:kb * 16 + 16] @ b[kb * 16:kb * 16 + 16]
    return {"c": c.astype(np.int32)}


def runtime_check_cases() -> list[Case]:
    cases = []

    def launch(args, M, N):
        def run(kernel, target="sim"):
            args[2][...] = 0
            kernel[(cdiv(M, 16), cdiv(N, 16))](*args, BM=16, BN=16, BK=16, target=target)
            return {"c": args[2].copy()}
        return run
    # a constant negative step runs as Python's range (it ran no iteration)
    src = kernel_source(k_loop_body("for kb in range(bl.cdiv(K, BK) - 1, -1, -1):"))
    for M, N, K in ((33, 17, 70), (16, 16, 16)):
        args = gemm_args(M, N, K, seed=K)
        cases.append(Case(f"result:negative_constant_step_{M}x{N}x{K}", "statement", "result", src,
                          launch(args, M, N), reference=lambda a=args, K=K: k_blocks_reference(a, range(cdiv(K, 16))),
                          on_iss=K == 70))
    # a run-time step: any sign runs as Python's range; 0 is a located run-time error
    src = kernel_source(k_loop_body("for kb in @@range(KLO, KHI, STEP):"),
                        GEMM_PARAMS.replace("scale, ", "KLO, KHI, STEP, "))
    for klo, khi, step in ((0, 5, 1), (4, -1, -1), (4, -1, -2), (0, 5, 2), (1, 5, 3), (0, 5, -1), (4, 0, 1), (0, 5, 0)):
        args = gemm_args(40, 20, 70, seed=klo * 7 + step + 10)
        args[6:7] = [klo, khi, step]
        if step == 0:
            cases.append(Case("runtime:range_zero_step", "statement", "runtime", src, launch(args, 40, 20),
                              match="range() step is zero", exc=(KernelRuntimeError,), on_iss=True, located=True))
            continue
        cases.append(Case(f"result:runtime_step_{klo}_{khi}_{step}", "statement", "result", src, launch(args, 40, 20),
                          reference=lambda a=args, r=range(klo, khi, step): k_blocks_reference(a, r),
                          on_iss=step == -2))
    # run-time divisors: 0 is a located run-time error (it was SIGFPE on the host); others floor
    divisions = [("floordiv", "pm = bl.program_id(0) + @@M // D - M // D"),
                 ("mod", "pn = bl.program_id(1) + @@N % D - N % D"),
                 ("cdiv", "for _ in range(@@bl.cdiv(K * D, BK * D)):")]
    for label, stmt in divisions:
        body = list(GEMM_BODY)
        body[-1] = body[-1].replace(MARK, "")
        if label == "cdiv":
            body[5] = body[5].replace("for _ in range(bl.cdiv(K, BK)):", stmt)
        else:
            body[0 if label == "floordiv" else 1] = stmt
        src = kernel_source(body, GEMM_PARAMS.replace("scale", "D"))
        for d in (0, -3, 5):
            args = gemm_args(33, 20, 40, seed=d + 13)
            args[6] = d
            if d == 0:
                cases.append(Case(f"runtime:{label}_by_zero", "expression", "runtime", src, launch_gemm(
                    args, grid=(3, 2)), match="integer division or modulo by zero", exc=(KernelRuntimeError,),
                    on_iss=label == "mod", located=True))
            else:
                cases.append(Case(f"result:{label}_by_{d}", "expression", "result", src, launch(args, 33, 20),
                                  reference=lambda a=args: {"c": reference_matmul(a[0], a[1])}))
    cases += pool_check_cases()
    cases += unit_scale_cases()
    cases += generator_found_cases()
    return cases


def generator_found_cases() -> list[Case]:
    """What the kernel generator (tests/kernel_generator.py) found, each as a small case: a
    constexpr NaN/inf scale (printed into the IR as `nan`: invalid input IR), `acc = acc +
    bl.dot(...)` (rejected as two accumulator blocks, unlike `acc += bl.dot(...)`), a pooled
    store whose window folds to nothing (a verifier failure, then a SIGSEGV in the LLVM
    translation), and launch options of the wrong type (an AttributeError for config=16;
    double_buffer="no" was taken as True)."""
    cases = []
    params = GEMM_PARAMS.replace("scale, ", "") + ", S: bl.constexpr"
    body = list(GEMM_BODY)
    body[-1] = "bl.store(c, bl.relu(acc * S).to(bl.int8), boundary_check=(0, 1))"
    src = kernel_source(body, params)
    for s in (float("nan"), float("inf"), float("-inf"), 1e39):
        args = gemm_args(33, 20, 40, seed=80, out=np.int8)
        del args[6]

        def run(kernel, target="sim", _args=args, _s=s):
            _args[2][...] = 0
            kernel[(3, 2)](*_args, BM=16, BN=16, BK=16, S=_s, target=target)
            return {"c": _args[2].copy()}
        cases.append(Case(f"result:constexpr_scale_{s:g}", "epilogue", "result", src, run, on_iss=s != s,
                          reference=lambda a=args, s=s: {"c": reference_matmul(a[0], a[1], out="int8", scale=s,
                                                                               relu=True)}))
    body = [line.replace("acc += bl.dot(", "acc = acc + bl.dot(") for line in GEMM_BODY]
    body[-1] = body[-1].replace(MARK, "")
    for order in ("acc + dot", "dot + acc"):
        if order == "dot + acc":
            body = [line.replace("acc = acc + bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, "
                                 "1)))", "acc = bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, "
                                 "1))) + acc") for line in body]
        case = gemm_result_case(f"result:{order.replace(' ', '_').replace('+', 'plus')}", 33, 20, 40, (16, 16, 16),
                                seed=81)
        case.source = kernel_source(body)
        cases.append(case)
    pool_body = [POOL_BODY[0], POOL_BODY[1],
                 "p = bl.make_block_ptr(p_ptr, shape=(PM, 16), strides=(16, 1), offsets=(OFF, 0), block_shape=(9, 16))",
                 POOL_BODY[3].replace(MARK, ""), POOL_BODY[4]]
    a, b, p = rand((30, 16), 82), rand((16, 16), 83), np.full((1, 16), 5, np.int8)

    def run(kernel, target="sim"):
        kernel[(1,)](a, b, p, 0, 6, 1, PM=1, target=target)    # OFF = 1 past the 1-row output: nothing stored
        return {"p": p.copy()}
    cases.append(Case("result:pooled_store_folds_to_nothing", "epilogue", "result", kernel_source(pool_body, POOL_PARAMS),
                      run, reference=lambda: {"p": np.full((1, 16), 5, np.int8)}, on_iss=True))
    for label, options, match in (("config_int", dict(config=16), "config must be a GemminiConfig"),
                                  ("double_buffer_string", dict(double_buffer="no"), "double_buffer must be a bool"),
                                  ("loop_ws_int", dict(loop_ws=1), "loop_ws must be a bool")):
        def run(kernel, target="sim", _o=options):
            kernel[(2, 2)](*gemm_args(), BM=16, BN=16, BK=16, target=target, **_o)
        cases.append(Case(f"launch:{label}", "launch-meta", "launch", gemm_kernel_source(), run, match=match,
                          exc=(TypeError,)))
    return cases


def unit_scale_cases() -> list[Case]:
    """A constexpr scale of exactly 1.0 (the multiply folds away; it was a StopIteration in
    placement, linalg-to-instgem and loop-ws) on an int8 store, a chained dot and a resadd."""
    cases = []
    params = GEMM_PARAMS.replace("scale, ", "") + ", S: bl.constexpr"
    for relu in (False, True):
        body = list(GEMM_BODY)
        out = "bl.relu(acc * S)" if relu else "acc * S"
        body[-1] = f"bl.store(c, ({out}).to(bl.int8), boundary_check=(0, 1))"
        src = kernel_source(body, params)
        for dataflow in ("WS", "OS"):
            args = gemm_args(33, 20, 40, seed=50 + relu, out=np.int8)
            del args[6]

            def run(kernel, target="sim", _args=args, _df=dataflow):
                _args[2][...] = 0
                kernel[(3, 2)](*_args, BM=16, BN=16, BK=16, S=1.0, target=target, dataflow=_df)
                return {"c": _args[2].copy()}
            cases.append(Case(f"result:unit_scale_store_{'relu8' if relu else 'int8'}_{dataflow}", "epilogue",
                              "result", src, run, on_iss=relu and dataflow == "WS",
                              reference=lambda a=args, r=relu, df=dataflow: {"c": reference_matmul(
                                  a[0], a[1], out="int8", scale=1.0, relu=r, os_k_block=16 if df == "OS" else None)}))
    chained = ["x = bl.load(bl.make_block_ptr(a_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), "
               "block_shape=(16, 16)))",
               "w1 = bl.load(bl.make_block_ptr(b_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), "
               "block_shape=(16, 16)))",
               "w2 = bl.load(bl.make_block_ptr(w_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), "
               "block_shape=(16, 16)))",
               "h = bl.dot(x, w1)", "y = bl.dot(bl.relu(h * S1).to(bl.int8), w2)",
               "bl.store(bl.make_block_ptr(c_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), "
               "block_shape=(16, 16)), (y * S2).to(bl.int8))"]
    src = kernel_source(chained, "a_ptr, b_ptr, w_ptr, c_ptr, S1: bl.constexpr, S2: bl.constexpr")
    for dataflow in ("WS", "OS"):
        for s1, s2 in ((1.0, 1.0), (0.25, 1.0), (1.0, 0.5)):
            x, w1, w2 = rand((16, 16), 60, lo=-5, hi=5), rand((16, 16), 61, lo=-5, hi=5), rand((16, 16), 62, lo=-5, hi=5)
            y = np.zeros((16, 16), np.int8)

            def run(kernel, target="sim", _v=(x, w1, w2, y), _s=(s1, s2), _df=dataflow):
                _v[3][...] = 0
                kernel[(1,)](*_v, S1=_s[0], S2=_s[1], target=target, dataflow=_df)
                return {"y": _v[3].copy()}

            def reference(_v=(x, w1, w2), s1=s1, s2=s2):
                h = reference_matmul(_v[0], _v[1], out="int8", scale=s1, relu=True)
                return {"y": reference_matmul(h, _v[2], out="int8", scale=s2)}
            cases.append(Case(f"result:unit_scale_chained_dot_{s1:g}_{s2:g}_{dataflow}", "epilogue", "result", src, run,
                              reference=reference, on_iss=(s1, s2, dataflow) == (1.0, 1.0, "WS")))
    resadd = ["p = bl.make_block_ptr(a_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(32, 32))",
              "q = bl.make_block_ptr(b_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(32, 32))",
              "total = bl.load(p, boundary_check=(0, 1)) * S + bl.load(q, boundary_check=(0, 1)) * 0.5",
              "r = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(32, 32))",
              "bl.store(r, (total * S).to(bl.int8), boundary_check=(0, 1))"]
    src = kernel_source(resadd, "a_ptr, b_ptr, c_ptr, M, N, S: bl.constexpr")
    a, b, c = rand((20, 30), 70), rand((20, 30), 71), np.zeros((20, 30), np.int8)

    def run(kernel, target="sim"):
        c[...] = 0
        kernel[(1,)](a, b, c, 20, 30, S=1.0, target=target)
        return {"c": c.copy()}

    def reference():
        from baco.gemmini.arith import acc_to_int8, saturate, scale_to_int
        half = saturate(scale_to_int(b, np.float32(0.5)), 8)
        return {"c": acc_to_int8(a.astype(np.int64) + half, 1.0)}
    cases.append(Case("result:unit_scale_resadd", "epilogue", "result", src, run, reference=reference, on_iss=True))
    return cases


POOL_PARAMS = "a_ptr, b_ptr, p_ptr, LO, HI, OFF, PM: bl.constexpr"
POOL_BODY = [
    "a = bl.load(bl.make_block_ptr(a_ptr, shape=(30, 16), strides=(16, 1), offsets=(0, 0), block_shape=(30, 16)))",
    "b = bl.load(bl.make_block_ptr(b_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), block_shape=(16, 16)))",
    "p = bl.make_block_ptr(p_ptr, shape=(PM, 16), strides=(16, 1), offsets=(OFF, 0), block_shape=(9, 16))",
    "pooled = @@bl.max_pool2d(bl.dot(a, b).to(bl.int8), (6, 5), 3, 2, 1, valid_rows=(LO, HI))",
    "bl.store(p, pooled, boundary_check=(0, 1))"]


def pool_check_cases() -> list[Case]:
    """max_pool2d's run-time valid_rows (config_st's 2-bit upad: a lo past 3 - pad rows wrote wrong
    pixels) and a pooled store at a negative row offset (it wrote the wrong rows): located
    run-time errors; in-range values pool as the reference does."""
    from baco.gemmini.arith import acc_to_int8, max_pool
    cases = []
    store_at = kernel_source(POOL_BODY[:3] + [POOL_BODY[3].replace(MARK, ""), "@@" + POOL_BODY[4]], POOL_PARAMS)
    for lo, hi, off, pm in ((0, 6, 0, 9), (2, 5, 0, 9), (0, 6, 2, 11), (3, 6, 0, 9), (0, 7, 0, 9), (4, 2, 0, 9),
                            (-1, 6, 0, 9), (0, 6, -3, 9)):
        a, b = rand((30, 16), lo + 20), rand((16, 16), hi + 30 - off)
        p = np.zeros((pm, 16), np.int8)

        def run(kernel, target="sim", _a=a, _b=b, _p=p, _v=(lo, hi, off), _pm=pm):
            _p[...] = 0
            kernel[(1,)](_a, _b, _p, *_v, PM=_pm, target=target)
            return {"p": _p.copy()}

        def reference(_a=a, _b=b, lo=lo, hi=hi, off=off, pm=pm):
            pix = acc_to_int8(_a.astype(np.int64) @ _b).astype(np.int64)
            pix[:lo * 5] = 0
            pix[hi * 5:] = 0
            out = np.zeros((pm, 16), np.int8)
            out[off:off + 9] = max_pool(pix.astype(np.int8), 6, 5, 3, 2, 1, 1)
            return {"p": out}
        if off < 0:
            cases.append(Case(f"runtime:pooled_store_row_offset_{off}", "epilogue", "runtime", store_at, run,
                              match="negative row offset", exc=(KernelRuntimeError,), on_iss=True, located=True))
        elif not (0 <= lo <= 2 and lo <= hi <= 6):
            cases.append(Case(f"runtime:pool_valid_rows_{lo}_{hi}", "epilogue", "runtime",
                              kernel_source(POOL_BODY, POOL_PARAMS), run, match="valid_rows (lo, hi) must satisfy",
                              exc=(KernelRuntimeError,), on_iss=lo == 3, located=True))
        else:
            cases.append(Case(f"result:pool_valid_rows_{lo}_{hi}_at_{off}", "epilogue", "result",
                              kernel_source(POOL_BODY, POOL_PARAMS), run, reference=reference, on_iss=lo == 2))
    return cases


# ---- results: shapes, blocks, dataflows, epilogues, offsets --------------------------------------
def result_cases() -> list[Case]:
    cases = []
    rng = np.random.default_rng(2024)
    sizes = (1, 2, 15, 16, 17, 31, 33, 48, 65)
    blocks = ((16, 16, 16), (32, 16, 32), (16, 32, 64), (64, 64, 64), (48, 16, 32))
    epilogues = (("int32", 1.0), ("int8", 0.01), ("relu8", 0.02), ("int8", -0.05), ("relu8", -0.05),
                 ("int8", float("nan")), ("relu8", float("inf")), ("int8", float("-inf")), ("int8", 1e-7))
    for i in range(45):
        M, N, K = (int(rng.choice(sizes)) for _ in range(3))
        block = blocks[i % len(blocks)]
        epilogue, scale = epilogues[i % len(epilogues)]
        dataflow = ("WS", "OS")[(i // 2) % 2]
        cases.append(gemm_result_case(f"result:{M}x{N}x{K}_{'x'.join(map(str, block))}_{dataflow}_{epilogue}"
                                      f"_s{scale:g}", M, N, K, block, dataflow, epilogue, scale, seed=i,
                                      on_iss=i % 15 == 0, slow=i % 3 != 0,
                                      category="epilogue" if epilogue != "int32" else "shapes"))
    # every builtin at least once in a kernel that runs: num_programs, cdiv, advance, strides, offsets
    cases += builtin_result_cases()
    cases += scalar_feature_result_cases()
    return cases


def scalar_feature_result_cases() -> list[Case]:
    """`ptr + n` as a block pointer's base and min()/max() loop bounds, in kernels that run."""
    cases = []
    offset_body = [line.replace("bl.make_block_ptr(a_ptr,", "bl.make_block_ptr(a_ptr + R0 * K,")
                   for line in GEMM_BODY]
    offset_src = kernel_source([line.replace(MARK, "") for line in offset_body],
                               GEMM_PARAMS.replace("scale, ", "R0, "))
    for M, N, K, r0 in ((17, 33, 40, 3), (33, 16, 17, 16), (1, 1, 1, 0)):
        args = gemm_args(M, N, K, seed=r0 + 7)
        a_full = rand((M + r0, K), r0 + 11)
        args[0], args[6] = a_full, r0

        def run(kernel, target="sim", _args=args, _M=M, _N=N):
            _args[2][...] = 0
            kernel[(cdiv(_M, 16), cdiv(_N, 16))](*_args, BM=16, BN=16, BK=16, target=target)
            return {"c": _args[2].copy()}
        cases.append(Case(f"result:offset_pointer_{M}x{N}x{K}_r{r0}", "builtin", "result", offset_src, run,
                          reference=lambda a=args, M=M, r0=r0: {
                              "c": reference_matmul(a[0][r0:r0 + M], a[1], out="int32")},
                          on_iss=r0 == 3))
    minmax_body = [
        "pm = bl.program_id(0)", "pn = bl.program_id(1)", ACC,
        "for kb in range(max(0, KLO), min(bl.cdiv(K, BK), KHI)):\n"
        "    a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pm * BM, kb * BK), "
        "block_shape=(BM, BK))\n"
        "    b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(kb * BK, pn * BN), "
        "block_shape=(BK, BN))\n"
        "    acc += bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)))",
        P_C.replace("offsets=(0, 0)", "offsets=(pm * BM, pn * BN)"),
        "bl.store(c, acc, boundary_check=(0, 1))"]
    minmax_src = kernel_source(minmax_body, GEMM_PARAMS.replace("scale, ", "KLO, KHI, "))
    for M, N, K, klo, khi in ((20, 17, 70, 1, 3), (33, 40, 50, -2, 9), (16, 16, 64, 3, 1)):
        args = gemm_args(M, N, K, seed=klo + khi)
        args[6:7] = [klo, khi]

        def run(kernel, target="sim", _args=args, _M=M, _N=N):
            _args[2][...] = 0
            kernel[(cdiv(_M, 16), cdiv(_N, 16))](*_args, BM=16, BN=16, BK=16, target=target)
            return {"c": _args[2].copy()}

        def reference(a=args, K=K, klo=klo, khi=khi):
            lo, hi = max(0, klo) * 16, min(cdiv(K, 16), khi) * 16
            if lo >= hi:
                return {"c": np.zeros_like(a[2])}
            return {"c": reference_matmul(a[0][:, lo:hi], a[1][lo:hi], out="int32")}
        cases.append(Case(f"result:min_max_k_range_{M}x{N}x{K}_{klo}_{khi}", "builtin", "result", minmax_src, run,
                          reference=reference, on_iss=klo == 1))
    return cases


SHIFT_BODY = [
    "pm = bl.program_id(0)", "pn = bl.program_id(1)",
    "a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pm * BM + OFF, 0), "
    "block_shape=(BM, BK))",
    "b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0 - BK, pn * BN), block_shape=(BK, BN))",
    ACC,
    "for _ in range(bl.cdiv(K, BK) + 1):\n"
    "    acc = bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)), acc)\n"
    "    a = bl.advance(a, (0, BK))\n"
    "    b = bl.advance(b, (BK, 0))",
    "c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pm * BM + OFF, pn * BN), "
    "block_shape=(BM, BN))",
    "bl.store(c, acc, boundary_check=(0, 1))"]


def window(x, r0, c0, rows, cols):
    """x[r0:r0+rows, c0:c0+cols] with zeros outside x (a boundary-checked load)."""
    out = np.zeros((rows, cols), np.int64)
    r, c = np.arange(r0, r0 + rows), np.arange(c0, c0 + cols)
    rm, cm = (r >= 0) & (r < x.shape[0]), (c >= 0) & (c < x.shape[1])
    out[np.ix_(rm, cm)] = x[np.ix_(r[rm], c[cm])]
    return out


def shifted_reference(a, b, off, grid, bm, bn, bk):
    """SHIFT_BODY in numpy: A's rows start at pm*BM+OFF, the K loop starts one block early (B's rows
    at -BK read zeros, as A's columns pair with them one block late: A at k, B at k - BK)."""
    M, K = a.shape
    N = b.shape[1]
    c = np.zeros((M, N), np.int32)
    for pm in range(grid[0]):
        for pn in range(grid[1]):
            acc = sum(window(a, pm * bm + off, k * bk, bm, bk) @ window(b, (k - 1) * bk, pn * bn, bk, bn)
                      for k in range(cdiv(K, bk) + 1))
            r, cc = np.arange(pm * bm + off, pm * bm + off + bm), np.arange(pn * bn, pn * bn + bn)
            rm, cm = (r >= 0) & (r < M), (cc >= 0) & (cc < N)
            c[np.ix_(r[rm], cc[cm])] = acc.astype(np.int32)[np.ix_(rm, cm)]
    return c


def builtin_result_cases() -> list[Case]:
    cases = []
    params = GEMM_PARAMS.replace("scale, ", "OFF, ")
    src = kernel_source(SHIFT_BODY, params)
    for off in (0, -1, -7, -16, -33, 5):
        for dataflow in ("WS", "OS"):
            M, N, K = 37, 21, 40
            args = gemm_args(M, N, K, seed=off + 40)
            args[6] = off
            grid = (cdiv(M, 16) + 2, cdiv(N, 16))

            def run(kernel, target="sim", _args=args, _grid=grid, _df=dataflow):
                _args[2][...] = 0
                kernel[_grid](*_args, BM=16, BN=16, BK=16, target=target, dataflow=_df)
                return {"c": _args[2].copy()}
            cases.append(Case(f"result:negative_offsets_{off}_{dataflow}", "boundary", "result", src, run,
                              reference=lambda a=args, g=grid: {"c": shifted_reference(a[0], a[1], a[6], g, 16, 16, 16)},
                              on_iss=off == -7 and dataflow == "WS"))
    # num_programs and a strided view: C written through a row stride twice its width
    body = ["pm = bl.program_id(0)",
            "a = bl.make_block_ptr(a_ptr, shape=(bl.num_programs(0) * BM, K), strides=(K, 1), offsets=(pm * BM, 0), "
            "block_shape=(BM, BK))",
            "b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, 0), block_shape=(BK, BN))",
            ACC, "for k in range(0, K, BK):\n    acc = bl.dot(bl.load(a), bl.load(b), acc)\n"
                 "    a = bl.advance(a, (0, BK))\n    b = bl.advance(b, (BK, 0))",
            "c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(2 * N, 1), offsets=(pm * BM, 0), "
            "block_shape=(BM, BN))",
            "bl.store(c, (acc * scale).to(bl.int8))"]
    a, b = rand((32, 48), 90), rand((48, 16), 91)
    c = np.zeros((32, 32), np.int8)

    def run(kernel, target="sim"):
        c[...] = 0
        kernel[(2,)](a, b, c, 32, 16, 48, 0.03, BM=16, BN=16, BK=16, target=target)
        return {"c": c.copy()}

    def reference():
        out = np.zeros((32, 32), np.int8)
        out[:, :16] = reference_matmul(a, b, out="int8", scale=0.03)
        return {"c": out}
    cases.append(Case("result:num_programs_strided_view", "builtin", "result", kernel_source(body), run,
                      reference=reference, on_iss=True))
    # a copy through the scratchpad: int8 load stored to an int8 pointer, loops over blocks
    body = ["p = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(bl.program_id(0) * BM, 0), "
            "block_shape=(BM, BK))",
            "q = bl.make_block_ptr(b_ptr, shape=(M, K), strides=(K, 1), offsets=(bl.program_id(0) * BM, 0), "
            "block_shape=(BM, BK))",
            "for j in range(bl.cdiv(K, BK)):\n    bl.store(q, bl.load(p, boundary_check=(0, 1)), "
            "boundary_check=(0, 1))\n    p = bl.advance(p, (0, BK))\n    q = bl.advance(q, (0, BK))"]
    src = kernel_source(body)
    for M, K in ((17, 33), (1, 1), (64, 80)):
        x, y = rand((M, K), M), np.zeros((M, K), np.int8)

        def run(kernel, target="sim", _x=x, _y=y, _M=M, _K=K):
            _y[...] = 0
            kernel[(cdiv(_M, 16),)](_x, _y, np.zeros(1, np.int32), _M, 0, _K, 1.0, BM=16, BN=16, BK=32,
                                    target=target)
            return {"y": _y.copy()}
        cases.append(Case(f"result:copy_{M}x{K}", "builtin", "result", src, run, reference=lambda _x=x: {"y": _x}))
    return cases


# ---- building the kernels --------------------------------------------------------------------------
def corpus_dir() -> Path:
    base = os.environ.get("BACO_CACHE_DIR", str(Path.home() / ".cache" / "baco"))
    d = Path(base) / "corpus" if base else Path(tempfile.gettempdir()) / "baco-corpus"
    d.mkdir(parents=True, exist_ok=True)
    return d


def build(cases: list[Case]) -> list[Case]:
    """Write every case's kernel into one module (the `@@` markers give each compile error's
    line:col), import it and attach the JIT kernels."""
    lines = ["import baco", "import baco.language as bl", ""]
    kernels = {}                     # source -> (function name, (line, col) of its marker)
    for case in cases:
        if case.source not in kernels:
            name, where = f"k{len(kernels)}", None
            lines += ["", "@baco.jit"]
            for text in case.source.replace("def KERNEL(", f"def {name}(").splitlines():
                if MARK in text:
                    where = (len(lines) + 1, text.index(MARK) + 1)
                    text = text.replace(MARK, "")
                lines.append(text)
            kernels[case.source] = (name, where)
    text = "\n".join(lines) + "\n"
    path = corpus_dir() / "corpus_kernels.py"
    if not path.exists() or path.read_text() != text:
        # published by rename: another test worker may be reading the module at the same moment
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location("baco_corpus_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for case in cases:
        name, where = kernels[case.source]
        case.kernel = getattr(module, name)
        case.where = where if case.expect == "compile" or case.located else None
    case_path[0] = path
    return cases


case_path = [None]     # the generated module's path, once built


def counts(cases: list[Case]) -> dict:
    out = {}
    for case in cases:
        out.setdefault(case.expect, {}).setdefault(case.category, 0)
        out[case.expect][case.category] += 1
    return out
