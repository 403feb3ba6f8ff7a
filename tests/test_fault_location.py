"""A GemminiFault of a compiled kernel on the host JIT names the kernel's source line
(file:line:col, the line and a caret, like a CompilationError): every Gemmini command
carries its op's source site (baco.gemmini.abi.source_site) into the JIT's callbacks."""
import inspect

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.errors import KernelFault
from baco.gemmini.isa import GemminiFault
from baco.gemmini.abi import site_line_col, source_site


@baco.jit
def times_w(x_ptr, w_ptr, y_ptr, M, BM: bl.constexpr):
    pid = bl.program_id(0)
    x = bl.make_block_ptr(x_ptr, shape=(M, 16), strides=(16, 1), offsets=(pid * BM, 0), block_shape=(BM, 16))
    w = bl.make_block_ptr(w_ptr, shape=(16, 16), strides=(16, 1), offsets=(0, 0), block_shape=(16, 16))
    y = bl.make_block_ptr(y_ptr, shape=(M, 16), strides=(16, 1), offsets=(pid * BM, 0), block_shape=(BM, 16))
    bl.store(y, bl.dot(bl.load(x), bl.load(w)))


def line_of(text: str) -> tuple[int, int]:
    """(line, col) of `text` in this file's times_w."""
    src, first = inspect.getsourcelines(times_w.fn)
    for i, line in enumerate(src):
        if text in line:
            return first + i, line.index(text) + 1
    raise AssertionError(text)


def test_site_encoding_round_trips():
    assert site_line_col(source_site('loc("k.py":123:45)')) == (123, 45)
    assert site_line_col(source_site("loc(unknown)")) is None


@pytest.mark.parametrize("lie,text", [(32, "bl.load(x)"), (17, "bl.load(x)")])
def test_fault_names_the_kernel_line(lie, text):
    """M is a lie (the arrays hold 16 rows): the load of the second block reads past x."""
    x, w, y = np.ones((16, 16), np.int8), np.eye(16, dtype=np.int8), np.zeros((16, 16), np.int32)
    with pytest.raises(KernelFault) as e:
        times_w[(2,)](x, w, y, lie, BM=16)
    line, col = line_of(text)
    assert (e.value.filename, e.value.line, e.value.col) == (__file__, line, col)
    assert isinstance(e.value, GemminiFault) and e.value.field == "dram_addr"
    head, src, caret = str(e.value).splitlines()
    assert head.startswith(f"{__file__}:{line}:{col}: Gemmini fault:") and "outside the kernel's arrays" in head
    assert "mvin" in head and src.strip() == "bl.store(y, bl.dot(bl.load(x), bl.load(w)))" and caret == " " * (col - 1) + "^"


def test_store_fault_names_the_store():
    """y is smaller than M says: the store's mvout faults, at the store."""
    x, w, y = np.ones((32, 16), np.int8), np.eye(16, dtype=np.int8), np.zeros((16, 16), np.int32)
    with pytest.raises(KernelFault) as e:
        times_w[(2,)](x, w, y, 32, BM=16)
    assert (e.value.line, e.value.col) == line_of("bl.store(")
    assert "mvout" in str(e.value)
