"""@baco.jit helpers that tests/test_frontend_calls.py's kernels call from another module. Their
names resolve here: ROW_SHIFT is this module's (the test module has its own)."""
import baco
import baco.language as bl

ROW_SHIFT = 0       # the tile's first row moves by this many rows (the test module's is different)


@baco.jit
def tile_ptr(base, rows, cols, ld, r0, c0, BR: bl.constexpr, BC: bl.constexpr):
    """The (BR, BC) tile at (r0 + ROW_SHIFT, c0) of a row-major (rows, cols) matrix of row stride ld."""
    return bl.make_block_ptr(base, shape=(rows, cols), strides=(ld, 1), offsets=(r0 + ROW_SHIFT, c0),
                             block_shape=(BR, BC))


@baco.jit
def output_tile(c_ptr, M, N, pm, pn, BM: bl.constexpr, BN: bl.constexpr):
    """Program (pm, pn)'s output tile: a helper calling a helper."""
    return tile_ptr(c_ptr, M, N, N, pm * BM, pn * BN, BM, BN)
