"""A layer as a Timeloop/DOSA problem: the seven loop dimensions (R, S, P, Q, C, K, N), strides
and dilation, its key (the text form result.json and the caches use) and the key's parser.

A depthwise convolution (one R x S filter per channel, Timeloop's dw-cnn-layer) is a Layer with
depthwise=True, C = 1 and K = its channels: its MACs, weights and outputs are those of that C=1
convolution, and its input has K channels (channel k of the output reads channel k of the input
only).

A layer with bias=True starts its accumulators from an int32 bias, one value an output channel (a
whole model's convolutions and linear layers: baco.model.lower gives each its folded bias), which
its programs move into the accumulator with every output block; DOSA's and Timeloop's workloads
have none (the default).

A layer with padding=p > 0 reads its image padded by p zero rows and columns on every side (as
PyTorch's padding=p; a whole model's padded convolutions): P and Q stay its output, input_rows x
input_cols the padded window the Timeloop problem reads, and image_rows x image_cols the image's
pixels inside it, what its programs move from DRAM (LoopConv fills the padding with zeros on chip;
the explicit stream skips or masks it). The image is the largest that gives P x Q (an even image
under stride 2 and padding 1: MobileNet's and ResNet's), trimmed to the rows the filter reaches: an
image one row or column smaller (odd under stride 2) reads one padding row or column more. DOSA's and
Timeloop's workloads are unpadded (the default)."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from baco.problem.dims import DIMS

FIELDS = DIMS + ("Wstride", "Hstride", "Wdilation", "Hdilation")
DEPTHWISE_KEY = "dw"      # a depthwise layer's key ends with it
BIAS_KEY = "b"            # a layer with a bias: the last part of its key
PADDING_KEY = "p"         # a padded layer's key ends with p and its padding (after dw and b)


@dataclass(frozen=True)
class Layer:
    R: int = 1
    S: int = 1
    P: int = 1
    Q: int = 1
    C: int = 1
    K: int = 1
    N: int = 1
    Wstride: int = 1
    Hstride: int = 1
    Wdilation: int = 1
    Hdilation: int = 1
    name: str = ""
    count: int = 1
    depthwise: bool = False      # one filter per channel: C = 1, K = channels (the module docstring)
    bias: bool = False           # the accumulators start from an int32 bias (the module docstring)
    padding: int = 0             # zero rows and columns around the image, each side (the module docstring)

    def __post_init__(self):
        for d in DIMS:
            if int(getattr(self, d)) < 1:
                raise ValueError(f"layer dimension {d} must be >= 1, got {getattr(self, d)}")
        for f in ("Wstride", "Hstride", "Wdilation", "Hdilation"):
            if int(getattr(self, f)) < 1:
                raise ValueError(f"layer {f} must be >= 1, got {getattr(self, f)}")
        if self.depthwise and self.C != 1:
            raise ValueError(f"a depthwise layer has C = 1 (K = its channels), got C={self.C}")
        if not isinstance(self.padding, int) or isinstance(self.padding, bool):
            raise TypeError(f"layer padding must be an int, got {self.padding!r}")
        # (at or beyond the filter's extent, output rows of padding alone: image_rows is exact
        # there under stride 1 only)
        if self.padding < 0 or (self.padding >= self.filter_extent and (self.Hstride, self.Wstride) != (1, 1)):
            raise ValueError(f"layer padding must be >= 0 and, under a stride, less than the filter's extent "
                             f"({self.filter_extent}), got {self.padding}")

    @property
    def dims(self) -> dict:
        return {d: getattr(self, d) for d in DIMS}

    @property
    def macs(self) -> int:
        return math.prod(self.dims.values())

    @property
    def input_rows(self) -> int:
        return (self.P - 1) * self.Hstride + (self.R - 1) * self.Hdilation + 1

    @property
    def input_cols(self) -> int:
        return (self.Q - 1) * self.Wstride + (self.S - 1) * self.Wdilation + 1

    @property
    def filter_extent(self) -> int:
        """The dilated filter's smaller extent (rows or columns): a padding is less."""
        return min((self.R - 1) * self.Hdilation, (self.S - 1) * self.Wdilation) + 1

    @property
    def image_rows(self) -> int:
        """The image's rows the layer reads (input_rows less its padding: the module docstring)."""
        return self.input_rows - 2 * self.padding + min(self.padding, self.Hstride - 1)

    @property
    def image_cols(self) -> int:
        """The image's columns the layer reads (input_cols less its padding: the module docstring)."""
        return self.input_cols - 2 * self.padding + min(self.padding, self.Wstride - 1)

    @property
    def key(self) -> str:
        return "_".join([str(getattr(self, f)) for f in FIELDS] + [DEPTHWISE_KEY] * self.depthwise
                        + [BIAS_KEY] * self.bias + [f"{PADDING_KEY}{self.padding}"] * (self.padding > 0))

    @property
    def shape(self) -> dict:
        """The layer's fields as result.json writes them (every FIELDS entry; depthwise, bias and
        padding when set)."""
        return {**{f: getattr(self, f) for f in FIELDS}, **({"depthwise": True} if self.depthwise else {}),
                **({"bias": True} if self.bias else {}), **({"padding": self.padding} if self.padding else {})}

    def with_count(self, count: int) -> "Layer":
        return replace(self, count=count)


def symmetric_padding(padding) -> int:
    """Layer.padding of a convolution's padding: an int, or equal (rows, columns); a ValueError
    where rows and columns differ (a Layer pads both alike), a TypeError for any other value (e.g.
    PyTorch's padding="same")."""
    if isinstance(padding, (tuple, list)) and len(padding) == 2 and padding[0] != padding[1]:
        raise ValueError(f"a layer pads rows and columns alike: padding {tuple(padding)} cannot be expressed")
    value = padding[0] if isinstance(padding, (tuple, list)) and len(padding) == 2 else padding
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"a layer's padding is an int or an (int, int) pair, got {padding!r}")
    return value


def layer_from_key(key: str, count: int = 1, name: str = "") -> Layer:
    """The Layer of a key (Layer.key; keys written before layers had a bias or padding parse as
    layers without)."""
    parts = key.split("_")
    padding = 0
    if parts[-1].startswith(PADDING_KEY):
        if not parts[-1][len(PADDING_KEY):].isdigit():
            raise ValueError(f"a layer key's padding is p and a number: {key!r}")
        padding = int(parts.pop()[len(PADDING_KEY):])
    bias = parts[-1] == BIAS_KEY
    depthwise = parts[len(parts) - bias - 1] == DEPTHWISE_KEY
    v = [int(x) for x in parts[:len(parts) - bias - depthwise]]
    if len(v) != len(FIELDS):
        raise ValueError(f"a layer key has {len(FIELDS)} numbers ({'_'.join(FIELDS)}), then dw, b and p<padding> "
                         f"when set: {key!r}")
    return Layer(**dict(zip(FIELDS, v)), name=name or key, count=count, depthwise=depthwise, bias=bias,
                 padding=padding)
