"""baco.language: the block language kernels are written in (Triton-like).

Inside a `@baco.jit` kernel these functions are compiled, not called. Under
the interpreter (`BACO_INTERPRET=1`) they run on numpy blocks with Gemmini's
arithmetic, one program at a time. Called anywhere else they raise.

Scalars in a kernel (program ids, integer arguments, loop variables) support
`+ - * // %` with Python's semantics (`//` floors, `%` takes the divisor's sign)
and the builtins `min(a, b, ...)` / `max(a, b, ...)`, so a loop can run over the
valid part of a range: `for r in range(max(0, lo), min(R, hi))`.
A pointer argument moved by an integer number of elements, `ptr + n`, is the
base of a block pointer (`make_block_ptr(x_ptr + row * W * C, ...)`): a view of
a 4-D tensor's 2-D slice, e.g. a convolution's input row (baco.kernels.conv).

`max_pool2d(x, image, kernel, stride, padding)` is Gemmini's max-pool epilogue: x is
an int8 block read out of the accumulator (`acc.to(bl.int8)`, optionally `* scale`
and `relu`) whose BLOCK_M rows are an image of rows x cols output pixels, row-major
(image=(rows, cols), compile-time); the result is the (PR*PC, BLOCK_N) int8 block of
pooled pixels, row-major, PR = (rows + 2*pad_rows - kernel)//stride + 1 (PC likewise),
each the max over its kernel x kernel window of the scaled/ReLU'd/saturated pixels;
window positions in the padding count as 0 (not -inf: the same as PyTorch's after a
ReLU). It compiles to one pooled mvout per DIM channels (config_st's pool fields), so
kernel and stride are 1..3, padding (int or (rows, cols)) 0..3, image and pooled sizes
at most 255, and the pooled block can only be stored: its pixel (pr, pc) goes to row
pr*PC + pc of the store's block pointer, whose rows are pooled pixels (e.g. a
(PH*PW, K) view of an NHWC output with PC = PW). A store
clipped by boundary_check writes the whole pooled rows inside its window (rows are
clipped at the end, at a multiple of PC; a negative row offset is a located run-time error).
`valid_rows=(lo, hi)` (runtime integers, default all rows) makes the image rows outside
[lo, hi) padding too (they count as 0 whatever the block holds): a tile of conv rows
that reaches above or below the image pools exactly as the whole image would. Gemmini
starts the pooled image at row lo with lo more rows of upper padding, so pad_rows + lo
must stay <= 3 (config_st's 2-bit upad); hi - lo is its orows. Runtime bounds outside
0 <= lo <= 3 - pad_rows, lo <= hi <= rows are a located run-time error.

Chained dots: a dot's A operand may be `relu(acc * scale).to(int8)` (relu and scale
optional) of an earlier dot's accumulator block `acc`; the hidden layer never goes to
DRAM (examples/fused_mlp.py). In WS the dot reads `acc` through the execute unit's scaled
accumulator read (config_ex acc_scale and activation; any scale; an RTL feature Spike's
model lacks). In OS, when `acc` is zero-initialised and written by ONE dot outside any loop
(the whole K summed in the array) and `scale` is a constexpr power of two 2^-s (0 <= s <= 31)
or absent, the array writes the int8 block straight into the scratchpad instead: the sum
rounding-shifted right by s (round half to even, config_ex's in_shift), saturated to int8,
then ReLU'd; any other constexpr scale is a compile error there. A runtime scale or an
accumulator summed over a loop keeps the accumulator read.

A block pointer is 2-D (a Gemmini block: rows × columns), or 3-D for loading only:
shape/strides/offsets/block_shape (S, R, C) describe S slices of an R × C block
(e.g. a convolution's input rows: slice i is output row p0 + i, whose rows are
output pixels), and `load` returns the 2-D (S·R) × C block, slice i in rows
[i·R, (i+1)·R), so one dot multiplies every slice with the same B. boundary_check
may name any of the three dimensions: a slice outside dimension 0 reads zeros, as
rows outside dimension 1 do. The compiler moves each slice in with its own mvins
(rows of a slice need a constant stride; slices need not) into one local block.
"""
from __future__ import annotations

import threading

import numpy as np

from baco.gemmini.arith import acc_to_int8, max_pool, pooled_size, saturate, scale_to_int
from baco.gemmini.config import ELEMENTS, NUMPY_ELEMENTS, Element


class dtype:
    def __init__(self, element: Element):
        self.name, self.mlir, self.np = element.name, element.mlir, np.dtype(element.name)

    def __repr__(self):
        return f"baco.language.{self.name}"


int8 = dtype(ELEMENTS["int8"])
int32 = dtype(ELEMENTS["int32"])
float32 = dtype(ELEMENTS["float32"])
DTYPES = {d.mlir: d for d in (int8, int32, float32)}


class constexpr:
    """Annotation for compile-time parameters: `BLOCK_M: bl.constexpr`."""

    def __init__(self, value=None):
        self.value = value


def cdiv(a, b):
    """Ceiling division; on host ints too (grid computations)."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return _interp("cdiv", a, b)


# ---- the interpreter: numpy semantics of the language ------------------------------
_state = threading.local()


class _Program:
    """One program of an interpreted launch, with what the arithmetic depends on: the
    dataflow (OS saturates each dot to the array's output width) and the config."""

    def __init__(self, pid, nprog, dataflow="WS", spatial_output_bits=20):
        self.pid, self.nprog = pid, nprog
        self.dataflow, self.spatial_output_bits = dataflow, spatial_output_bits


class Pointer:
    """A pointer argument under the interpreter: its array and an element offset (`ptr + n`)."""

    def __init__(self, array, offset=0):
        self.array, self.offset = array, offset

    def __add__(self, n):
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
            return NotImplemented
        return Pointer(self.array, self.offset + int(n))

    __radd__ = __add__


class BlockPtr:
    def __init__(self, base, shape, strides, offsets, block_shape):
        if not isinstance(base, Pointer):
            base = Pointer(base)
        self.base, self.base_offset = base.array, base.offset
        self.shape, self.strides = tuple(shape), tuple(strides)
        self.offsets, self.block_shape = tuple(offsets), tuple(block_shape)

    def _index(self, checked, what):
        """Flat element indices of the block and which of them are accessed: boundary_check
        dimensions keep [0, shape); others access the whole block, which must lie in the
        array (the compiled kernel faults outside the kernel's arrays)."""
        last = len(self.block_shape) - 1
        if last in checked and self.offsets[last] < 0:
            from baco.errors import NEGATIVE_COLUMN_OFFSET, KernelRuntimeError
            raise KernelRuntimeError(NEGATIVE_COLUMN_OFFSET, *_kernel_position())
        pos = np.ix_(*(np.arange(b) + o for b, o in zip(self.block_shape, self.offsets)))
        inside = np.ones(self.block_shape, dtype=bool)
        idx = np.full(self.block_shape, self.base_offset)
        for d, p in enumerate(pos):
            if d in checked:
                inside &= (p >= 0) & (p < self.shape[d])
            idx = idx + p * self.strides[d]
        used = idx[inside]
        if used.size and (used.min() < 0 or used.max() >= self.base.size):
            from baco.gemmini.isa import GemminiFault
            raise GemminiFault(f"DRAM {what} of a {'x'.join(map(str, self.block_shape))} block at "
                               f"offsets {self.offsets} is outside the kernel's arrays "
                               f"(boundary_check={tuple(checked)})", field="dram_addr")
        return idx, inside


class Block:
    """A block value under the interpreter. An int32 accumulator block may carry the
    store epilogue it is headed for (scale, ReLU): Gemmini applies them on the way
    out of the accumulator in its own order (ReLU, then scale with RNE, then
    saturation; NaN scales give 0), whatever order the kernel wrote them in."""

    def __init__(self, data, scale=None, relu=False, pool_cols=None):
        self.data, self.scale, self.relu = data, scale, relu
        self.pool_cols = pool_cols      # a max_pool2d result: pooled pixels per pooled row

    @property
    def pending(self):
        return self.scale is not None or self.relu

    @property
    def dtype(self):
        if self.scale is not None:
            return float32
        element = NUMPY_ELEMENTS.get(self.data.dtype)
        return DTYPES[element.mlir] if element is not None else float32

    def to(self, dt):
        if dt is int8:
            return Block(self.as_int8())
        return Block(self.data.astype(dt.np))

    def as_int8(self):
        """The accumulator read path (baco.gemmini.arith.acc_to_int8) or a plain int8 block."""
        if self.data.dtype == np.int8 and not self.pending:
            return self.data
        return acc_to_int8(self.data, 1.0 if self.scale is None else self.scale, self.relu)

    def __add__(self, other):    # the accumulator adds in int32, wrapping
        return Block((self.data.astype(np.int64) + _data(other)).astype(np.int32))

    __iadd__ = __radd__ = __add__

    def __mul__(self, scale):
        if self.data.dtype == np.int8:      # Gemmini's mvin scale: RNE, saturated to int8
            return Block(saturate(scale_to_int(self.data, np.float32(scale)), 8).astype(np.int8))
        return Block(self.data, np.float32(scale), self.relu)

    __rmul__ = __mul__


def _data(x):
    return x.data if isinstance(x, Block) else x


def _kernel_position():
    """(line, col) of the baco.language call being interpreted, as the compiler locates it."""
    import sys
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    if frame is None:
        return 0, 0
    positions = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    return frame.f_lineno, (positions[2] or 0) + 1


def _interp(name, *args, **kwargs):
    prog = getattr(_state, "program", None)
    if prog is None:
        raise RuntimeError(f"baco.language.{name}() can only be used inside a @baco.jit kernel")
    return _IMPL[name](prog, *args, **kwargs)


def _load(prog, ptr, boundary_check=(), padding_option="zero"):
    """A 3-D block (slices, rows, cols) is loaded as the 2-D (slices*rows, cols) block."""
    idx, inside = ptr._index(boundary_check, "read")
    out = np.zeros(ptr.block_shape, dtype=ptr.base.dtype)
    out[inside] = ptr.base.reshape(-1)[idx[inside]]
    return Block(out.reshape(-1, out.shape[-1]))


def _store(prog, ptr, value, boundary_check=()):
    idx, inside = ptr._index(boundary_check, "write")
    if getattr(value, "pool_cols", None) and 0 in boundary_check and ptr.offsets[0] < 0:
        from baco.errors import POOLED_NEGATIVE_ROW, RUNTIME_ERRORS, KernelRuntimeError
        raise KernelRuntimeError(RUNTIME_ERRORS[POOLED_NEGATIVE_ROW], *_kernel_position())
    if getattr(value, "pool_cols", None):    # a pooled mvout writes whole pooled rows
        whole = int(inside.any(axis=1).sum()) // value.pool_cols * value.pool_cols
        inside = inside & (np.arange(inside.shape[0]) < whole)[:, None]
    data = value.as_int8() if ptr.base.dtype == np.int8 else _data(value)
    ptr.base.reshape(-1)[idx[inside]] = data[inside].astype(ptr.base.dtype)


def _dot(prog, a, b, acc=None):
    """WS sums exactly into the int32 accumulator; OS sums the K block in the array and
    saturates it to the array's output width before adding it to the accumulator."""
    prod = _data(a).astype(np.int64) @ _data(b).astype(np.int64)
    if prog.dataflow == "OS":
        prod = saturate(prod, prog.spatial_output_bits)
    if acc is not None:
        prod = prod + _data(acc)
    return Block(prod.astype(np.int32))


def _relu(prog, x):
    return Block(x.data, x.scale, True)


def _max_pool2d(prog, x, image, kernel, stride=None, padding=0, valid_rows=None):
    rows, cols = image
    stride = kernel if stride is None else stride
    upad, lpad = padding if isinstance(padding, (tuple, list)) else (padding, padding)
    lo, hi = (0, rows) if valid_rows is None else valid_rows
    if not (0 <= lo <= 3 - upad and lo <= hi <= rows):     # the compiled kernel checks it at run time
        from baco.errors import POOL_VALID_ROWS, RUNTIME_ERRORS, KernelRuntimeError
        raise KernelRuntimeError(RUNTIME_ERRORS[POOL_VALID_ROWS], *_kernel_position())
    pixels = x.as_int8().copy()
    pixels[:max(0, lo) * cols] = 0          # rows outside [lo, hi) count as padding
    pixels[max(lo, hi) * cols:] = 0
    pooled = max_pool(pixels, rows, cols, kernel, stride, upad, lpad)
    return Block(pooled, pool_cols=pooled_size(cols, kernel, stride, lpad))


_IMPL = {
    "program_id": lambda p, axis: p.pid[axis],
    "num_programs": lambda p, axis: p.nprog[axis],
    "cdiv": lambda p, a, b: -(-a // b),
    "make_block_ptr": lambda p, base, shape, strides, offsets, block_shape, order=(1, 0):
        BlockPtr(base, shape, strides, offsets, block_shape),
    "advance": lambda p, ptr, offsets: BlockPtr(Pointer(ptr.base, ptr.base_offset), ptr.shape, ptr.strides,
                                                [o + d for o, d in zip(ptr.offsets, offsets)], ptr.block_shape),
    "load": _load, "store": _store, "dot": _dot, "relu": _relu, "max_pool2d": _max_pool2d,
    "zeros": lambda p, shape, dtype=int32: Block(np.zeros(shape, dtype=dtype.np)),
}


def program_id(axis):
    return _interp("program_id", axis)


def num_programs(axis):
    return _interp("num_programs", axis)


def make_block_ptr(base, shape, strides, offsets, block_shape, order=(1, 0)):
    return _interp("make_block_ptr", base, shape, strides, offsets, block_shape, order)


def advance(ptr, offsets):
    return _interp("advance", ptr, offsets)


def load(ptr, boundary_check=(), padding_option="zero"):
    return _interp("load", ptr, boundary_check, padding_option)


def store(ptr, value, boundary_check=()):
    return _interp("store", ptr, value, boundary_check)


def dot(a, b, acc=None):
    return _interp("dot", a, b, acc)


def zeros(shape, dtype=int32):
    return _interp("zeros", shape, dtype)


def relu(x):
    return _interp("relu", x)


def max_pool2d(x, image, kernel, stride=None, padding=0, valid_rows=None):
    """Max pooling of the int8 block x, whose rows are an image=(rows, cols) of pixels, with
    kernel x kernel windows, `stride` (default kernel) and zero `padding` (int or (rows, cols));
    image rows outside valid_rows=(lo, hi) count as padding. Gemmini's pooled mvout (see the
    module docstring)."""
    return _interp("max_pool2d", x, image, kernel, stride, padding, valid_rows)


__all__ = ["int8", "int32", "float32", "constexpr", "cdiv", "program_id", "num_programs",
           "make_block_ptr", "advance", "load", "store", "dot", "zeros", "relu", "max_pool2d"]
