"""Malformed kernels give a CompilationError at the user's line and column,
with the source line and a caret, and no compiler traceback."""
import numpy as np
import pytest

import baco
import baco.language as bl
from baco import CompilationError
from baco.gemmini.config import GemminiConfig
from tests.kernels import bad_kernels as k

FILE = k.__file__
A8 = np.zeros((64, 64), np.int8)
C32 = np.zeros((64, 64), np.int32)

# kernel, args, meta, (line, col), message fragment
CASES = [
    (k.dot_of_int32, (A8, C32, 64), dict(BLOCK=16), (11, 11), "multiplies int8 blocks"),
    (k.runtime_block_shape, (A8, 64, 16), {}, (18, 9), "block_shape must be positive compile-time integers"),
    (k.while_loop, (A8, 64), {}, (25, 5), "while loops are not supported"),
    (k.unknown_name, (A8, 64), {}, (33, 17), "name `undefined_thing` is not defined"),
    (k.wrong_store_dtype, (A8, A8, 64), dict(BLOCK=16), (41, 5), "cannot store a int32 block through a int8 pointer"),
    (k.dot_shape_mismatch, (A8, A8, 64), {}, (48, 11), "dot() shapes do not match"),
    (k.calls_numpy, (A8, 64), {}, (53, 9), "`print` is not a baco.language function"),
    (k.runtime_if, (A8, 64), {}, (58, 8), "comparisons of runtime values are not supported"),
    (k.relu_int32_store, (A8, C32, 64), {}, (68, 17), "relu on an int32 output"),
]


@pytest.mark.parametrize("kernel,args,meta,where,fragment", CASES, ids=[c[0].__name__ for c in CASES])
def test_malformed_kernel_points_at_the_line(kernel, args, meta, where, fragment):
    with pytest.raises(CompilationError) as e:
        kernel[(1,)](*args, **meta)
    err = e.value
    assert (err.filename, err.line, err.col) == (FILE, *where), str(err)
    text = str(err)
    assert fragment in text
    lines = text.splitlines()
    assert lines[0].startswith(f"{FILE}:{where[0]}:{where[1]}: error:")
    assert lines[2] == " " * (where[1] - 1) + "^"          # caret under the column
    assert "Traceback" not in text


def test_capacity_overflow_names_block_sizes_and_limit():
    small = GemminiConfig.from_capacity(16, 8, 64)        # 512 scratchpad rows
    with pytest.raises(CompilationError) as e:
        k.too_big_blocks[(1,)](A8, C32, 64, BLOCK=128, config=small)
    msg = str(e.value)
    assert "128x128 i8 (1024 rows)" in msg and "need 1024 rows" in msg
    assert "scratchpad (512 rows of 16 int8 = 8 KiB) at DIM=16" in msg
    assert (e.value.filename, e.value.line) == (FILE, 75)


@baco.jit
def fresh_block_each_iteration(a_ptr, c_ptr):
    a = bl.make_block_ptr(a_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), block_shape=(16, 16))
    acc = bl.zeros((16, 16), dtype=bl.int32)
    for i in range(2):
        acc = bl.zeros((16, 16), dtype=bl.int32)
        acc += bl.dot(bl.load(a), bl.load(a))
    bl.store(bl.make_block_ptr(c_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), block_shape=(16, 16)), acc)


def test_bufferization_of_a_replaced_carried_block_speaks_the_language(monkeypatch):
    """The frontend reports a carried block replaced in its loop at the replacing statement
    (tests/fuzz_corpus.py); IR that reaches bufferization anyway (the check switched off here, or
    BACO IR given to `baco opt`) gets the same explanation at the loop, not MLIR's "Yield operand
    #0 is not equivalent to the corresponding iter bbArg"."""
    from baco.frontend.codegen import KernelCodegen
    args = (np.zeros((16, 16), np.int8), np.zeros((16, 16), np.int32))
    with pytest.raises(CompilationError, match="`acc` is a block carried by the loop") as e:
        fresh_block_each_iteration.compile(*args)
    assert "acc = bl.zeros" in str(e.value)
    monkeypatch.setattr(KernelCodegen, "check_kept_in_place", lambda *a: None)
    with pytest.raises(CompilationError, match="the block this loop carries as its value #0 is replaced") as e:
        fresh_block_each_iteration.compile(*args)
    assert "for i in range(2):" in str(e.value) and "iter bbArg" not in str(e.value)
