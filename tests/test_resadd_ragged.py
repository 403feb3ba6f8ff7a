"""Residual adds whose elements are not whole DIM rows.

A zero fill under an added load is left out when nothing reads the block outside the load's window
(linalg_to_instgem.LinalgToInstGem.stored_only_within): the residual add's programs of ragged rows
(explicit streams) move in their two operands and store the sum, with no zero mvin (DRAM address
0), bit-exact against Gemmini's arithmetic; a block stored beyond the window keeps its zeros there.
resadd_launches runs such an add as whole DIM rows and one short row (resadd.default_views), as a
whole model's add step does."""
from __future__ import annotations

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import resadd_programs
from baco.kernels.resadd import reference, resadd_launch

CONFIGS = {4: GemminiConfig.from_capacity(4, 16, 8), 16: GemminiConfig.from_capacity(16, 256, 64)}


def commands(launch, target):
    """(output, every command's (name, fields)) of the launch on `target`."""
    seen = []
    launch.compiled(target).run(launch.grid, launch.runtime_args(),
                                observers=[lambda name, fields, pc=None: seen.append((name, fields))])
    return launch.y, seen


@pytest.mark.parametrize("dim,shape,block", [
    (16, (49, 33), None), (16, (1, 17), None), (16, (65, 129), None), (16, (17, 300), None),
    (16, (33, 17), (32, 32)), (4, (7, 5), (4, 8)), (4, (9, 13), (8, 8)), (4, (1, 1), (4, 4))])
@pytest.mark.parametrize("target", ["sim", "iss"])
def test_ragged_adds_move_no_zeros(dim, shape, block, target):
    rng = np.random.default_rng(sum(shape) + dim)
    a, b = (rng.integers(-128, 128, shape, dtype=np.int8) for _ in range(2))
    launch = resadd_launch(a, b, 0.5, 0.75, 0.5, block=block, config=CONFIGS[dim])
    y, seen = commands(launch, target)
    np.testing.assert_array_equal(y, reference(a, b, 0.5, 0.75, 0.5))
    zeros = [f for name, f in seen if name.startswith("mvin") and f["dram_addr"] == 0]
    assert not zeros, f"{len(zeros)} zero mvins"


@baco.jit
def add_stored_wider(a_ptr, b_ptr, c_ptr, M, N, MO, NO, BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr):
    """The sum of an M x N window (resadd's arithmetic, unit scales), stored as an MO x NO window
    (MO >= M, NO >= N) of the block: the rows and columns beyond M x N are the fill's zeros."""
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BLOCK_M, BLOCK_N),
                              order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BLOCK_M, BLOCK_N),
                              order=(1, 0))
    total = bl.load(a_blk, boundary_check=(0, 1)) * 1.0 + bl.load(b_blk, boundary_check=(0, 1)) * 1.0
    c_blk = bl.make_block_ptr(c_ptr, shape=(MO, NO), strides=(NO, 1), offsets=(0, 0), block_shape=(BLOCK_M, BLOCK_N),
                              order=(1, 0))
    bl.store(c_blk, (total * 1.0).to(bl.int8), boundary_check=(0, 1))


@pytest.mark.parametrize("target", ["sim", "iss"])
def test_a_block_stored_beyond_the_window_keeps_its_zeros(target):
    M, N, MO, NO = 17, 20, 30, 40
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-128, 128, (M, N), dtype=np.int8) for _ in range(2))
    c = np.full((MO, NO), 7, np.int8)
    ck, args = add_stored_wider.compile_launch(a, b, c, M, N, MO, NO, BLOCK_M=32, BLOCK_N=48, target=target,
                                               config=CONFIGS[16])
    seen = []
    ck.run((1, 1), args, observers=[lambda name, fields, pc=None: seen.append((name, fields))])
    expected = np.zeros((MO, NO), np.int8)
    expected[:M, :N] = reference(a, b, 1.0, 1.0, 1.0, relu=False)
    np.testing.assert_array_equal(c, expected)
    assert any(name.startswith("mvin") and f["dram_addr"] == 0 for name, f in seen)


@pytest.mark.parametrize("dim,shape", [(16, (65, 129)), (16, (17, 300)), (16, (49, 33)), (4, (9, 13)), (16, (7, 7)),
                                       (16, (1, 17)), (16, (100, 72)), (16, (16, 1024)), (4, (4, 40))])
def test_default_views_cover_the_elements_once(dim, shape):
    """resadd_launches over default_views: the elements not in whole DIM rows of an add whose M x N
    view would be several programs run as a launch of one row after the whole-row launch; an M x N
    view of one program, or whole DIM rows, stay one launch. Bit-exact on the host simulator."""
    from baco.kernels.resadd import default_views, resadd_launches
    cfg = CONFIGS[dim]
    M, N = shape
    views = default_views(M, N, cfg)
    assert sum(rows * cols for _, rows, cols in views) == M * N
    assert [first for first, *_ in views] == [0] + [sum(r * c for _, r, c in views[:i]) for i in range(1, len(views))]
    split = (M * N) % dim and M * N > dim and len(resadd_programs(M, N, cfg)) > 1
    assert len(views) == (2 if split else 1)
    if split:
        assert views[0][1:] == (dim, M * N // dim) and views[1][1:] == (1, (M * N) % dim)
    rng = np.random.default_rng(M + N)
    a, b = (rng.integers(-128, 128, shape, dtype=np.int8) for _ in range(2))
    launches, c = resadd_launches(a, b, 0.5, 0.75, 0.5, config=cfg)
    for launch in launches:
        assert np.shares_memory(launch.args[0], a) and np.shares_memory(launch.y, c)
        launch.run("sim")
    np.testing.assert_array_equal(c, reference(a, b, 0.5, 0.75, 0.5))


def test_a_model_add_of_ragged_rows_runs_as_two_launches():
    """A whole model's residual add of 65 x 129 elements (two linears of one input, summed): its step
    is resadd_launches' two launches (4 ragged-row programs otherwise), bit-exact on the host
    simulator and as one ELF on the ISS."""
    import torch

    class TwoBranches(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(40, 129), torch.nn.Linear(40, 129)

        def forward(self, x):
            return torch.relu(self.a(x) + self.b(x))

    torch.manual_seed(0)
    model = TwoBranches().eval()
    x = torch.randn(65, 40)
    compiled = baco.compile_model(model, x, calibrate=2)
    add = [s for s in compiled.lowered.steps if s.op.kind == "add"]
    assert len(add) == 1 and [launch.args[0].shape for launch in add[0].launches] == [(16, 524), (1, 1)]
    np.testing.assert_array_equal(compiled(x), compiled.reference(x))
    np.testing.assert_array_equal(compiled(x, target="iss"), compiled.reference(x))
