"""Kernels that call @baco.jit helpers: the helper's body is inlined where it is called (its
arguments bound in a fresh scope, its names resolved in its own module), bit-exact against a
numpy reference of Gemmini's arithmetic; misuse is a CompilationError at the helper's line with
the call site's line; the jit cache is keyed by the helpers' source too."""
import importlib
import sys

import numpy as np
import pytest

import baco
import baco.language as bl
from baco import CompilationError
from baco.errors import KernelRuntimeError
from baco.gemmini.arith import acc_to_int8
from tests.kernels import bad_calls
from tests.kernels import helpers as hp

ROW_SHIFT = 5       # not the helpers' (they read tests/kernels/helpers.py's ROW_SHIFT = 0)


@baco.jit
def operand_tiles(a_ptr, b_ptr, M, N, K, pm, pn, BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr):
    """Program (pm, pn)'s first A and B tiles: a helper returning a tuple, calling another module's."""
    a = hp.tile_ptr(a_ptr, M, K, K, pm * BM, 0, BM, BK)
    b = hp.tile_ptr(b_ptr, K, N, N, 0, pn * BN, BR=BK, BC=BN)
    return a, b


@baco.jit
def requantize(acc, scale, RELU: bl.constexpr):
    out = acc * scale
    if RELU:
        out = bl.relu(out)
    return out.to(bl.int8)


@baco.jit
def accumulate(acc, a, b):
    acc += bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)))
    return acc


@baco.jit
def gemm(a_ptr, b_ptr, c_ptr, M, N, K, scale, BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr,
         RELU: bl.constexpr, OUT_INT8: bl.constexpr):
    pm = bl.program_id(0)
    pn = bl.program_id(1)
    a, b = operand_tiles(a_ptr, b_ptr, M, N, K, pm, pn, BM=BM, BN=BN, BK=BK)
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for _ in range(bl.cdiv(K, BK)):
        acc = accumulate(acc, a, b)
        a = bl.advance(a, (0, BK))
        b = bl.advance(b, (BK, 0))
    c = hp.output_tile(c_ptr, M, N, pm, pn, BM, BN)
    if OUT_INT8:
        bl.store(c, requantize(acc, scale, RELU), boundary_check=(0, 1))
    else:
        bl.store(c, acc, boundary_check=(0, 1))


def run_gemm(M, N, K, block, out_int8, relu=False, scale=0.0123, target="sim", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    c = np.zeros((M, N), np.int8 if out_int8 else np.int32)
    grid = (-(-M // block[0]), -(-N // block[1]))
    gemm[grid](a, b, c, M, N, K, scale, BM=block[0], BN=block[1], BK=block[2], RELU=relu, OUT_INT8=out_int8,
               target=target)
    acc = a.astype(np.int64) @ b.astype(np.int64)       # |sum| < 2**31 for these K: no int32 wrap
    return c, (acc_to_int8(acc, scale, relu) if out_int8 else acc.astype(np.int32))


@pytest.mark.parametrize("M,N,K,block,out_int8,relu", [
    (37, 29, 45, (16, 16, 16), True, True),
    (37, 29, 45, (16, 16, 16), True, False),
    (50, 17, 33, (32, 16, 16), False, False),
    (16, 16, 16, (16, 16, 16), False, False),
    (3, 70, 5, (16, 32, 16), True, True),
])
def test_gemm_through_helpers_is_bit_exact(M, N, K, block, out_int8, relu):
    c, ref = run_gemm(M, N, K, block, out_int8, relu)
    np.testing.assert_array_equal(c, ref)


def test_gemm_through_helpers_on_the_iss_matches_sim():
    c_iss, ref = run_gemm(37, 29, 45, (16, 16, 16), True, relu=True, target="iss", seed=1)
    c_sim, _ = run_gemm(37, 29, 45, (16, 16, 16), True, relu=True, target="sim", seed=1)
    np.testing.assert_array_equal(c_iss, ref)
    np.testing.assert_array_equal(c_iss, c_sim)


def test_interpreter_calls_helpers(monkeypatch):
    monkeypatch.setenv("BACO_INTERPRET", "1")
    c, ref = run_gemm(37, 29, 45, (16, 16, 16), True, relu=True, seed=2)
    np.testing.assert_array_equal(c, ref)


@baco.jit
def first_row(pid, programs_per_row):
    return pid // programs_per_row * 16


@baco.jit
def rows_times_identity(a_ptr, e_ptr, c_ptr, M, PROGRAMS_PER_ROW):
    r0 = first_row(bl.program_id(0), PROGRAMS_PER_ROW)
    a = hp.tile_ptr(a_ptr, M, 16, 16, r0, 0, 16, 16)
    product = bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(hp.tile_ptr(e_ptr, 16, 16, 16, 0, 0, 16, 16)))
    bl.store(hp.tile_ptr(c_ptr, M, 16, 16, r0, 0, 16, 16), product, boundary_check=(0, 1))


@pytest.mark.parametrize("interpret", ["0", "1"])
def test_a_run_time_error_in_a_helper_is_at_the_helpers_line(monkeypatch, interpret):
    """Compiled and interpreted, a division by zero inside a helper stops the launch at the
    helper's line:col (and without the error, the kernel computes its rows)."""
    monkeypatch.setenv("BACO_INTERPRET", interpret)
    a = (np.arange(40 * 16) % 199 - 99).astype(np.int8).reshape(40, 16)
    e, c = np.eye(16, dtype=np.int8), np.zeros((40, 16), np.int32)
    rows_times_identity[(3,)](a, e, c, 40, 1)
    np.testing.assert_array_equal(c, a)
    with pytest.raises(KernelRuntimeError, match="integer division or modulo by zero") as err:
        rows_times_identity[(3,)](a, e, c, 40, 0)
    assert (err.value.line, err.value.col) == (first_row.first_line + 2, 12)


def test_a_helper_is_not_launched_or_called_outside_a_kernel():
    with pytest.raises(RuntimeError, match="launch the kernel with a grid"):
        hp.tile_ptr(None, 1, 1, 1, 0, 0, 16, 16)


def test_inlined_ops_carry_the_helpers_lines():
    """No func.call: the helpers' ops are in the kernel, located at the helper's file:line:col
    called from the kernel's line (MLIR callsite locations)."""
    vals, _ = gemm.bind([np.zeros((16, 16), np.int8), np.zeros((16, 16), np.int8), np.zeros((16, 16), np.int8),
                         16, 16, 16, 1.0], dict(BM=16, BN=16, BK=16, RELU=True, OUT_INT8=True))
    ir = gemm.baco_ir(gemm.specialize(vals)[0])
    assert "func.call" not in ir and ir.count("func.func") == 1
    tile_line = hp.tile_ptr.first_line + 3        # tile_ptr's make_block_ptr
    call_line = operand_tiles.first_line + 3      # operand_tiles' first call of it
    kernel_line = gemm.first_line + 5             # gemm's call of operand_tiles
    assert ('"baco.make_block_ptr"' in ir and
            f'loc(callsite(callsite("{hp.__file__}":{tile_line}:12 at "{__file__}":{call_line}:9) at '
            f'"{__file__}":{kernel_line}:12))' in ir)


def where(text: str, column_of: str | None = None):
    """(line, col) in tests/kernels/bad_calls.py of the only line containing `text`, at
    `column_of` in it (else its first non-blank character)."""
    lines = open(bad_calls.__file__).read().splitlines()
    found = [i for i, s in enumerate(lines) if text in s]
    assert len(found) == 1, text
    s = lines[found[0]]
    return found[0] + 1, s.index(column_of or s.strip()) + 1


C32 = np.zeros((64, 64), np.int32)

# kernel, where the error is, where it is called from (innermost first), message fragment
ERRORS = [
    (bad_calls.dot_in_helper, ("return bl.dot(acc, acc)", "bl.dot"), [("acc = int32_dot(acc)", "int32_dot")],
     "Gemmini dot() multiplies int8 blocks"),
    (bad_calls.recursive, ("return countdown(n, DEPTH - 1)", "countdown"), [("m = countdown(M, 3)", "countdown")],
     "recursive call of `countdown` (recursive -> countdown -> countdown)"),
    (bad_calls.mutually_recursive, ("return ping(n)", "ping"), [("return pong(n)", "pong"), ("m = ping(M)", "ping")],
     "recursive call of `ping` (mutually_recursive -> ping -> pong -> ping)"),
    (bad_calls.calls_plain_python, ("m = plain_python(M)", "plain_python"), [],
     "`plain_python` is not a baco.language function or a @baco.jit function"),
    (bad_calls.too_many_arguments, ("16, 16, 3)", "helpers.tile_ptr"), [],
     "cannot call @baco.jit helper `tile_ptr`: too many positional arguments"),
    (bad_calls.too_few_arguments, ("0, 0, 16)", "helpers.tile_ptr"), [],
     "cannot call @baco.jit helper `tile_ptr`: missing a required argument: 'BC'"),
    (bad_calls.unknown_keyword, ("ORDER=1", "helpers.tile_ptr"), [],
     "cannot call @baco.jit helper `tile_ptr`: got an unexpected keyword argument 'ORDER'"),
    (bad_calls.runtime_constexpr, ("0, 0, M, 16)", "helpers.tile_ptr"), [],
     "argument `BR` of @baco.jit helper `tile_ptr` is a bl.constexpr parameter, but this call gives it a runtime "
     "integer scalar"),
    (bad_calls.calls_loop_return, ("return i", None), [("m = loop_return(M)", "loop_return")],
     "`return` inside a loop: a @baco.jit helper returns once, at the end of its body"),
    (bad_calls.calls_branch_return, ("        return n\n", None), [("m = branch_return(M, True)", "branch_return")],
     "`return` inside a branch"),
    # an error of a later stage (the lowering), located through the op's callsite location
    (bad_calls.loads_shifted_left, ("return bl.load(helpers.tile_ptr(c_ptr, M, M, M, 0, -3", "bl.load"),
     [("shifted_left(c_ptr, M))", "shifted_left")], "boundary_check with a negative column offset"),
]


@pytest.mark.parametrize("kernel,at,sites,fragment", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_misused_helpers_are_located(kernel, at, sites, fragment):
    with pytest.raises(CompilationError) as e:
        kernel.compile(C32 if kernel is not bad_calls.loads_shifted_left else C32.astype(np.int8), 64)
    err, path = e.value, bad_calls.__file__
    line, col = where(at[0].strip("\n") if at[0].endswith("\n") else at[0], at[1])
    assert (err.filename, err.line, err.col) == (path, line, col), str(err)
    assert err.called_from == tuple((path, *where(*s)) for s in sites), str(err)
    text = str(err).splitlines()
    assert text[0] == f"{path}:{line}:{col}: error: {err.message}" and fragment in err.message
    assert text[2] == " " * (col - 1) + "^"                     # the caret under the helper's column
    for i, s in enumerate(sites):                               # each call site: its line and a caret
        sl, sc = where(*s)
        assert text[3 + 3 * i] == f"{path}:{sl}:{sc}: note: in the @baco.jit helper called here"
        assert s[0] in text[4 + 3 * i] and text[5 + 3 * i] == " " * (sc - 1) + "^"


HELPER_V1 = '''import baco
import baco.language as bl


@baco.jit
def first_row():
    return 0
'''

KERNEL = '''import baco
import baco.language as bl
import {helpers}


@baco.jit
def copy_rows(x_ptr, e_ptr, y_ptr):
    """y = the 16 rows of x from the helper's first row on (times the identity e)."""
    x = bl.make_block_ptr(x_ptr, shape=(32, 16), strides=(16, 1), offsets=({helpers}.first_row(), 0),
                          block_shape=(16, 16))
    y = bl.make_block_ptr(y_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), block_shape=(16, 16))
    e = bl.make_block_ptr(e_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), block_shape=(16, 16))
    bl.store(y, bl.dot(bl.load(x), bl.load(e)))
'''


def test_editing_a_helper_recompiles_the_kernel(tmp_path, monkeypatch):
    """The cache key holds the helpers' source: the kernel reloads nothing, its helper module is
    edited and reloaded, and the next launch compiles the new helper."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    names = ("fi_cache_helpers", "fi_cache_kernel")
    (tmp_path / f"{names[0]}.py").write_text(HELPER_V1)
    (tmp_path / f"{names[1]}.py").write_text(KERNEL.format(helpers=names[0]))
    try:
        helpers, kernel = (importlib.import_module(n) for n in names)
        x = (np.arange(32 * 16) % 251 - 125).astype(np.int8).reshape(32, 16)
        e, y = np.eye(16, dtype=np.int8), np.zeros((16, 16), np.int32)
        kernel.copy_rows[(1,)](x, e, y)
        np.testing.assert_array_equal(y, x[:16])
        kernel.copy_rows[(1,)](x, e, y)
        assert len(kernel.copy_rows.cache) == 1
        (tmp_path / f"{names[0]}.py").write_text(HELPER_V1.replace("return 0", "return 13"))
        importlib.reload(helpers)
        kernel.copy_rows[(1,)](x, e, y)
        assert len(kernel.copy_rows.cache) == 2
        np.testing.assert_array_equal(y, x[13:29])
    finally:
        for n in names:
            sys.modules.pop(n, None)
