"""The tuner's price of a strided 3x3 LoopConv program (kernel_model.conv_schedule_cycles, Gemmini
alone) against the cycle model timing the compiled kernel (as benchmarks/loop_check.py compares
them): a 17x17-output, stride-2, 65 -> 24 channel convolution under blocks (17, 16, 32) on a DIM 16
Gemmini, reported as priced 3.8x low (76,775 predicted against 289,161 simulated), and its
neighbours (strides 1 and 2, 17/33/65 input and 24/33 output channels, 15/17 output columns,
DIM 16 and 32, with and without a bias). Measured on this code: predicted 76,775, simulated 76,255
(the report's simulated figure was not reproduced, with or without bias, padding, 128-512 KB
scratchpads, nor end to end on the ISS: 76,843); on the neighbours (3 output rows) the walk is
0.5-6.2% high. And a program split into channel blocks whose ragged last block the walk packed
(priced 24% low before the fix)."""
import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, schedule_problems
from baco.kernels.conv import conv2d_launch
from baco.problem.layer import Layer
from baco.tuner.kernel_model import conv_schedule_cycles, runs_loop_conv
from baco.tuner.mapping import KERNEL_OUT_INT8

# the largest |predicted - simulated| / simulated measured over the neighbours is 6.2% (DIM 32, C 17)
TOLERANCE = 0.08


def predicted_and_simulated(rows: int, cols: int, C: int, K: int, stride: int, dim: int, blocks, bias=False, R=3,
                            program_rows=1):
    """(predicted, simulated) Gemmini-alone cycles of an R x R conv of rows x cols outputs (no
    padding: the layer's input is (rows - 1) * stride + R rows) compiled under `blocks` and
    `program_rows` output rows a program, on the memories loop_check gives a DIM `dim` Gemmini."""
    layer = Layer(R=R, S=R, P=rows, Q=cols, C=C, K=K, Hstride=stride, Wstride=stride, bias=bias)
    cfg = GemminiConfig.from_capacity(dim, 64 * max(1, dim // 8), 16 * max(1, dim // 4))
    schedule = GemmSchedule(*blocks, rows=program_rows)
    assert not schedule_problems(schedule, cfg, KERNEL_OUT_INT8)
    assert runs_loop_conv(layer, schedule, cfg), (layer, schedule)
    predicted = conv_schedule_cycles(layer, schedule, (cfg.dim, cfg.sp_kb, cfg.acc_kb), end_to_end=False)
    x = np.zeros((1, layer.input_rows, layer.input_cols, C), np.int8)
    w = np.zeros((R, R, C, K), np.int8)
    b = np.zeros(K, np.int32) if bias else None
    simulated = conv2d_launch(x, w, b, stride=stride, config=cfg, blocks=schedule, scale=1 / 256).cycles()["cycles"]
    return predicted, simulated


@pytest.mark.parametrize("bias", [False, True])
def test_the_reported_strided_program_is_priced_as_it_runs(bias):
    predicted, simulated = predicted_and_simulated(17, 17, 65, 24, 2, 16, (17, 16, 32), bias=bias)
    assert predicted == pytest.approx(simulated, rel=0.01)


@pytest.mark.parametrize("dim", [16, 32])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("C,K", [(17, 24), (33, 33), (65, 24), (65, 33)])
@pytest.mark.parametrize("cols", [15, 17])
def test_strided_neighbours_are_priced_as_they_run(dim, stride, C, K, cols):
    predicted, simulated = predicted_and_simulated(3, cols, C, K, stride, dim, (17, 16, 32))
    assert predicted == pytest.approx(simulated, rel=TOLERANCE)


@pytest.mark.parametrize("rows,program_rows,C", [(4, 2, 65), (2, 2, 65), (4, 1, 65), (3, 1, 33), (4, 2, 64)])
def test_a_split_programs_ragged_channel_block_is_priced_unpacked(rows, program_rows, C):
    """A 7x7 conv whose programs split their input channels into LOOP_CONV_WS of 32 (DIM 32): the
    pass sets max_pixels_per_row by the program's channels (no packing with more than DIM/2), so
    the ragged last block (1 channel of 65) runs unpacked; the walk packed it 7 kernel columns a
    row (predicted 64,562 against 79,954 simulated at 4 rows of 2; now 79,988)."""
    predicted, simulated = predicted_and_simulated(rows, 56, C, 64, 1, 32, (56, 64, 64), R=7,
                                                   program_rows=program_rows)
    assert predicted == pytest.approx(simulated, rel=0.02)
