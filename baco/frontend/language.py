"""baco.language: the block language kernels are written in (Triton-like).

Inside a `@baco.jit` kernel these functions are compiled, not called. Under
the interpreter (`BACO_INTERPRET=1`) they run on numpy blocks with Gemmini's
arithmetic, one program at a time. Called anywhere else they raise.
"""
from __future__ import annotations

import threading

import numpy as np

from baco.gemmini.arith import saturate


class dtype:
    def __init__(self, name: str, mlir: str, np_dtype):
        self.name, self.mlir, self.np = name, mlir, np.dtype(np_dtype)

    def __repr__(self):
        return f"baco.language.{self.name}"


int8 = dtype("int8", "i8", np.int8)
int32 = dtype("int32", "i32", np.int32)
float32 = dtype("float32", "f32", np.float32)
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
    def __init__(self, pid, nprog):
        self.pid, self.nprog = pid, nprog


class BlockPtr:
    def __init__(self, base, shape, strides, offsets, block_shape):
        self.base, self.shape, self.strides = base, tuple(shape), tuple(strides)
        self.offsets, self.block_shape = tuple(offsets), tuple(block_shape)

    def _index(self):
        """Flat element indices of the block and the in-bounds mask."""
        r = np.arange(self.block_shape[0])[:, None] + self.offsets[0]
        c = np.arange(self.block_shape[1])[None, :] + self.offsets[1]
        inside = (r >= 0) & (r < self.shape[0]) & (c >= 0) & (c < self.shape[1])
        return r * self.strides[0] + c * self.strides[1], inside


class Block:
    """A block value under the interpreter: int8/int32 integers or float32."""

    def __init__(self, data):
        self.data = data

    @property
    def dtype(self):
        return {np.dtype(np.int8): int8, np.dtype(np.int32): int32}.get(self.data.dtype, float32)

    def to(self, dt):
        if self.data.dtype == np.float32 or dt is int8:
            x = np.rint(self.data.astype(np.float64)) if self.data.dtype == np.float32 else self.data
            return Block(saturate(x, 8 if dt is int8 else 32).astype(dt.np))
        return Block(self.data.astype(dt.np))

    def __add__(self, other):
        return Block((self.data.astype(np.int64) + _data(other)).astype(np.int32))

    __iadd__ = __radd__ = __add__

    def __mul__(self, scale):
        return Block((self.data.astype(np.float32) * np.float32(scale)).astype(np.float32))

    __rmul__ = __mul__


def _data(x):
    return x.data if isinstance(x, Block) else x


def _interp(name, *args, **kwargs):
    prog = getattr(_state, "program", None)
    if prog is None:
        raise RuntimeError(f"baco.language.{name}() can only be used inside a @baco.jit kernel")
    return _IMPL[name](prog, *args, **kwargs)


def _load(prog, ptr, boundary_check=(), padding_option="zero"):
    idx, inside = ptr._index()
    out = np.zeros(ptr.block_shape, dtype=ptr.base.dtype)
    out[inside] = ptr.base.reshape(-1)[idx[inside]]
    return Block(out)


def _store(prog, ptr, value, boundary_check=()):
    idx, inside = ptr._index()
    flat = ptr.base.reshape(-1)
    flat[idx[inside]] = _data(value)[inside].astype(ptr.base.dtype)


def _dot(prog, a, b, acc=None):
    prod = _data(a).astype(np.int64) @ _data(b).astype(np.int64)
    if acc is not None:
        prod = prod + _data(acc)
    return Block(prod.astype(np.int32))


def _relu(prog, x):
    d = _data(x)
    return Block(np.maximum(d, 0).astype(d.dtype))


_IMPL = {
    "program_id": lambda p, axis: p.pid[axis],
    "num_programs": lambda p, axis: p.nprog[axis],
    "cdiv": lambda p, a, b: -(-a // b),
    "make_block_ptr": lambda p, base, shape, strides, offsets, block_shape, order=(1, 0):
        BlockPtr(base, shape, strides, offsets, block_shape),
    "advance": lambda p, ptr, offsets: BlockPtr(ptr.base, ptr.shape, ptr.strides,
                                                [o + d for o, d in zip(ptr.offsets, offsets)], ptr.block_shape),
    "load": _load, "store": _store, "dot": _dot, "relu": _relu,
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


__all__ = ["int8", "int32", "float32", "constexpr", "cdiv", "program_id", "num_programs",
           "make_block_ptr", "advance", "load", "store", "dot", "zeros", "relu"]
