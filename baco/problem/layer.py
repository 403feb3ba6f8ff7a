"""A layer as a Timeloop/DOSA problem: the seven loop dimensions (R, S, P, Q, C, K, N), strides
and dilation, its key (the text form result.json and the caches use) and the key's parser.

A depthwise convolution (one R x S filter per channel, Timeloop's dw-cnn-layer) is a Layer with
depthwise=True, C = 1 and K = its channels: its MACs, weights and outputs are those of that C=1
convolution, and its input has K channels (channel k of the output reads channel k of the input
only).

A layer with bias=True starts its accumulators from an int32 bias, one value an output channel (a
whole model's convolutions and linear layers: baco.model.lower gives each its folded bias), which
its programs move into the accumulator with every output block; DOSA's and Timeloop's workloads
have none (the default)."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from baco.problem.dims import DIMS

FIELDS = DIMS + ("Wstride", "Hstride", "Wdilation", "Hdilation")
DEPTHWISE_KEY = "dw"      # a depthwise layer's key ends with it
BIAS_KEY = "b"            # a layer with a bias: the last part of its key


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

    def __post_init__(self):
        for d in DIMS:
            if int(getattr(self, d)) < 1:
                raise ValueError(f"layer dimension {d} must be >= 1, got {getattr(self, d)}")
        for f in ("Wstride", "Hstride", "Wdilation", "Hdilation"):
            if int(getattr(self, f)) < 1:
                raise ValueError(f"layer {f} must be >= 1, got {getattr(self, f)}")
        if self.depthwise and self.C != 1:
            raise ValueError(f"a depthwise layer has C = 1 (K = its channels), got C={self.C}")

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
    def key(self) -> str:
        return "_".join([str(getattr(self, f)) for f in FIELDS] + [DEPTHWISE_KEY] * self.depthwise
                        + [BIAS_KEY] * self.bias)

    @property
    def shape(self) -> dict:
        """The layer's fields as result.json writes them (every FIELDS entry, depthwise and bias when set)."""
        return {**{f: getattr(self, f) for f in FIELDS}, **({"depthwise": True} if self.depthwise else {}),
                **({"bias": True} if self.bias else {})}

    def with_count(self, count: int) -> "Layer":
        return replace(self, count=count)


def layer_from_key(key: str, count: int = 1, name: str = "") -> Layer:
    """The Layer of a key (Layer.key; keys written before layers had a bias parse as layers without)."""
    parts = key.split("_")
    bias = parts[-1] == BIAS_KEY
    depthwise = parts[len(parts) - bias - 1] == DEPTHWISE_KEY
    v = [int(x) for x in parts[:len(parts) - bias - depthwise]]
    if len(v) != len(FIELDS):
        raise ValueError(f"a layer key has {len(FIELDS)} numbers ({'_'.join(FIELDS)}), then dw and b when set: "
                         f"{key!r}")
    return Layer(**dict(zip(FIELDS, v)), name=name or key, count=count, depthwise=depthwise, bias=bias)
