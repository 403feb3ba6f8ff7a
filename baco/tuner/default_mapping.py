"""The Gemmini-default baseline as mappings: the C library's tilings
(tiled_matmul_auto for GEMM layers, tiled_conv_auto for convolutions, tiled_conv_dw_auto's
one-channel tiles for depthwise ones) on the
given hardware, expressed in the tuner's mapping form.

Each library tile extent becomes the largest divisor of the dimension not above
it when one is at least half of it (exact tiles: the library's own where the
dimension divides), else the library's extent itself, the loop over such tiles
ceil-divided with a short last tile as the library runs it (prime and odd
sizes: a 197-row GEMM runs 16-row tiles, not 1-row ones). The filter's R and S
loops always split exactly. Within a tile, the K columns the L1 loop spreads
over are as many as the tile needs."""
from __future__ import annotations

from baco.gemmini.heuristics import tiled_conv_auto, tiled_matmul_auto
from baco.problem.dims import DIMS, NUM_LEVELS
from baco.problem.layer import Layer
from baco.tuner.arch import Hardware
from baco.tuner.mapping import DEFAULT_ORDER, Mapping, assert_valid


def largest_divisor_at_most(n: int, cap: int) -> int:
    cap = max(1, min(n, int(cap)))
    for d in range(cap, 0, -1):
        if n % d == 0:
            return d
    return 1


def _complete(order):
    return tuple(order) + tuple(d for d in DEFAULT_ORDER if d not in order)


def _ceil_div(n: int, d: int) -> int:
    return -(-n // d)


def _extent(n: int, cap: int) -> int:
    """The factor for `n` (elements, or tiles left) where the library takes `cap`: the largest divisor
    of n not above cap if it is at least half of it, else cap (a ceil-divided loop)."""
    cap = max(1, min(n, int(cap)))
    exact = largest_divisor_at_most(n, cap)
    return exact if 2 * exact >= cap else cap


def _mapping(layer: Layer, spatial_c: int, spatial_k: int, l0: dict, l1: dict, outer_order) -> Mapping:
    temporal = [dict(l0), dict(l1), {}, {}]
    for d in DIMS:
        inner = temporal[0].get(d, 1) * temporal[1].get(d, 1)
        inner *= spatial_c if d == "C" else spatial_k if d == "K" else 1
        temporal[3][d] = _ceil_div(layer.dims[d], inner)
    order = [_complete(("N", "P", "Q")), _complete(("C", "K", "P")), DEFAULT_ORDER, _complete(outer_order)]
    return Mapping(temporal, spatial_c, spatial_k, order)


def default_mapping(layer: Layer, hw: Hardware) -> Mapping:
    cfg = hw.to_gemmini_config()
    d = cfg.dim
    if layer.R == layer.S == layer.Q == 1 and layer.N == 1 and layer.Hstride == 1:
        M, Kd, N = layer.P, layer.C, layer.K
        ti, tj, tk = tiled_matmul_auto(M, N, Kd, cfg, "WS")
        sc, p0, cols = _extent(Kd, d), _extent(M, d), _extent(N, d)
        p1 = _extent(_ceil_div(M, p0), ti * d // p0)
        k1 = _extent(_ceil_div(N, cols), tj * d // cols)
        sk = min(cols, _ceil_div(N, k1))      # the L1 K loop runs inside the columns
        c1 = _extent(_ceil_div(Kd, sc), tk * d // sc)
        m = _mapping(layer, sc, sk, {"P": p0}, {"C": c1, "K": k1, "P": p1}, ("P", "K", "C"))
    else:
        in_rows = (layer.P - 1) * layer.Hstride + (layer.R - 1) * layer.Hdilation + 1
        in_cols = (layer.Q - 1) * layer.Wstride + (layer.S - 1) * layer.Wdilation + 1
        # a depthwise layer: tiled_conv_dw_auto's tiles, one channel deep (its K loop at DRAM)
        channels = 1 if layer.depthwise else layer.K
        b, porows, pocols, pochs, krows, kcols, kchs = tiled_conv_auto(
            layer.N, in_rows, in_cols, layer.C, channels, layer.R, stride=layer.Hstride,
            kernel_dilation=layer.Hdilation, config=cfg, kernel_cols=layer.S, col_stride=layer.Wstride,
            depthwise=layer.depthwise)
        sc, cols = _extent(layer.C, min(d, kchs)), _extent(layer.K, min(d, pochs))
        q0 = _extent(layer.Q, min(d, pocols))
        k1 = _extent(_ceil_div(layer.K, cols), pochs // cols)
        sk = min(cols, _ceil_div(layer.K, k1))   # the L1 K loop runs inside the columns
        l1 = {"N": _extent(layer.N, b), "P": _extent(layer.P, porows),
              "Q": _extent(_ceil_div(layer.Q, q0), pocols // q0), "K": k1,
              "R": largest_divisor_at_most(layer.R, krows), "S": largest_divisor_at_most(layer.S, kcols),
              "C": _extent(_ceil_div(layer.C, sc), kchs // sc)}
        m = _mapping(layer, sc, sk, {"Q": q0}, l1, ("N", "P", "Q", "K", "R", "S", "C"))
    assert_valid(m, layer, hw)
    return m


__all__ = ["default_mapping", "largest_divisor_at_most", "NUM_LEVELS"]
