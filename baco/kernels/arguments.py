"""Argument checks of the shipped kernels' wrappers: arrays are taken as they are, never
converted. A numpy array or CPU torch tensor must have the exact element type (int8 images,
activations and weights, int32 biases), else a TypeError naming the argument; a list or tuple
of Python ints is accepted when every value fits that type (else a ValueError). A
non-contiguous array is copied into a contiguous one (same dtype, same values): the kernels
address C-contiguous arrays."""
from __future__ import annotations

import numpy as np


def exact_array(value, name: str, dtype, ndim: int | tuple | None = None) -> np.ndarray:
    """`value` as a C-contiguous numpy array of `dtype` (see the module docstring); `ndim`: the
    number (or the numbers) of dimensions it must have."""
    dtype = np.dtype(dtype)
    if type(value).__module__.startswith("torch"):
        if value.device.type != "cpu":
            raise TypeError(f"{name} must be a CPU tensor, got one on {value.device}")
        value = value.detach().numpy()
    if isinstance(value, np.ndarray):
        if value.dtype != dtype:
            raise TypeError(f"{name} must be a {dtype} array, got dtype {value.dtype} (convert it explicitly; "
                            f"the kernels never convert values)")
        array = value
    elif isinstance(value, (list, tuple)):
        array = np.asarray(value)
        if array.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integers, got {array.dtype} values")
        info = np.iinfo(dtype)
        if array.size and (array.min() < info.min or array.max() > info.max):
            raise ValueError(f"{name} holds values outside {dtype}'s range [{info.min}, {info.max}]: "
                             f"{array.min()} .. {array.max()}")
        array = array.astype(dtype)
    else:
        raise TypeError(f"{name} must be a {dtype} numpy array or CPU torch tensor, got {type(value).__name__}")
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if allowed is not None and array.ndim not in allowed:
        raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimensions, got shape {array.shape}")
    return np.ascontiguousarray(array)


def real_scalar(value, name: str = "scale") -> float:
    """A scale as the float the kernel takes: a Python or numpy real number (not a bool, a string
    or an array), else a TypeError naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def bias_vector(bias, channels: int, name: str = "bias"):
    """`bias` as the kernels' C-contiguous int32 vector of one value per output channel (None
    stays None)."""
    if bias is None:
        return None
    b = exact_array(bias, name, np.int32)
    if b.shape != (channels,):
        raise ValueError(f"{name} must hold one int32 per output channel ({channels}), got shape {b.shape}")
    return b


def output_kind(out, relu) -> None:
    """`out` is "int8" or "int32" and `relu` a bool that only an int8 output can take (Gemmini's
    full-width int32 mvout bypasses the activation), else a ValueError/TypeError naming it."""
    if out not in ("int8", "int32"):
        raise ValueError(f"out must be 'int8' or 'int32', not {out!r}")
    if not isinstance(relu, (bool, np.bool_)):
        raise TypeError(f"relu must be a bool, got {type(relu).__name__} {relu!r}")
    if relu and out == "int32":
        raise ValueError("relu needs out='int8' (Gemmini's full-width int32 mvout bypasses the activation)")

