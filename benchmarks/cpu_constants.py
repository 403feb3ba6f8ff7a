"""Refit the CPU instruction constants of the explicit command streams (baco.gemmini.schedule's
EXPLICIT_INSTRUCTIONS, CONV_EXPLICIT_INSTRUCTIONS, DEPTHWISE_EXPLICIT_INSTRUCTIONS), of the GEMM
kernel's LOOP_WS programs (LOOP_WS_INSTRUCTIONS) and of the conv and depthwise kernels' LOOP_CONV_WS
programs (LOOP_CONV_INSTRUCTIONS) on the ISS.

    python benchmarks/cpu_constants.py [--smoke] [--only gemm loop_ws loop_conv conv depthwise residual_add fused
                                                     chain_loop]

Each fitting program is compiled explicit (loop_ws=False: no LOOP_WS / LOOP_CONV_WS) and run on
the ISS; its RISC-V instructions (the harness's grid loop and the kernel) are the measured count.
The terms each constant multiplies are the cost model's: for the GEMM kernel per program, per
program K step, per program C column block (DIM-wide), per weight block (a column block's DIM rows
of a K step), per preload/compute pair, per store, per accumulator fill mvin (a bias's rows and
the zeros under them) and per program whose K loop runs more than one step of the edge programs, per program, K step and command of the interior
ones (all blocks full, the clamp-free version: EXPLICIT_INTERIOR_INSTRUCTIONS, "interior_*") and per
program, K step, weight block and command of the ragged-K ones (M and N blocks full, the last K
step short: EXPLICIT_RAGGED_K_INSTRUCTIONS, "ragged_k_*"), as explicit_gemm_program_cycles counts
them (schedule.explicit_gemm_terms), on programs with and
without a bias; for the conv and depthwise kernels per program K step, per K step of a strided layer's program
again, per output row's A slice of a step and per command, the commands as costmodel.conv_program_terms counts
them (the tuner's program model).
The LOOP_WS programs (the compiler's default form) are counted by rdcycle around the grid loop on
the ISS without the cycle model (instructions), their terms schedule.loop_ws_launch_terms' (per
program, K step, program of several steps, split step's second LOOP_WS (the head first, the head
last, a one-row grid's split_after: schedule.split_term), explicit B and its mvins, those again in a grid of
several columns, program of a K and
of an N not specialized to 1, program and K step of a ragged K loop: schedule.ragged_k_loop, the
launch's own); the LOOP_CONV_WS programs (the conv kernels'
default form where LoopConv fits) the same way, their terms schedule.loop_conv_program_terms' (per
conv program, per depthwise program, per further input channel block's LOOP_CONV_WS of a program:
schedule.loop_conv_channels, per program of a strided layer, with a bias, of a layer of more than one
output row and of more than one row itself) and the launch's own. The unfused residual adds
(RESADD_INSTRUCTIONS: baco.kernels.resadd at its default view and blocks) the same way, per launch, per
program, per program of a grid of more than one and per tile of its programs of ragged rows
(schedule.resadd_terms), on adds of whole DIM-row programs (one LOOP_WS each) and adds with a program
of ragged rows (an explicit stream), then on held-out adds of ragged rows (reported, not fitted).
The fit is a non-negative least squares of the relative error (each row divided by its count).
Printed: the fitted table beside the constants in use, and each program's predicted / measured
ratio under both. Then the same for the fused kernels' programs (baco.gemmini.fused's
FUSED_INSTRUCTIONS: a table per kernel, each fitted on its own kernel's programs, the chain's with
five tiny chains; per program, per K step and per command, and the chain's per program and DIM-wide
column block of H and N, each of the edge and of the interior programs: fused.fused_instruction_terms), and for the fused chain on the loop unit
(CHAIN_LOOP_WS_INSTRUCTIONS: per LOOP_WS tile, column group, program and launch, counted by
rdcycle as the LOOP_WS programs; each launch's RoCC commands checked against
gemm_chain_loop_ws_loops'). --smoke: one GEMM, one LOOP_WS, one LOOP_CONV_WS, one conv and one
chain program (checks the script runs).
"""
import argparse
import sys
from dataclasses import replace

import numpy as np
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.fused import (CHAIN_LOOP_WS_INSTRUCTIONS, FUSED_INSTRUCTIONS, _chain_launch, _resadd_launch,
                                chain_loop_tile_shape, fused_instruction_terms, gemm_chain_loop_ws_loops)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.gemmini.schedule import (CONV_EXPLICIT_INSTRUCTIONS, DEPTHWISE_EXPLICIT_INSTRUCTIONS,
                                   EXPLICIT_TERM_TABLE, LOOP_CONV_INSTRUCTIONS,
                                   LOOP_WS_INSTRUCTIONS, RESADD_INSTRUCTIONS, GemmSchedule, default_gemm_schedule,
                                   explicit_gemm_program_cycles, loop_conv_channels, loop_conv_program_terms, loop_ws_fits,
                                   loop_ws_launch_terms,
                                   padded_rows, resadd_programs, resadd_terms, schedule_problems)
from baco.kernels.conv import conv2d_launch
from baco.kernels.depthwise import depthwise_launch
from baco.kernels.fused import gemm_chain_launch, gemm_resadd_launch
from baco.kernels.resadd import resadd_launch
from baco.kernels.matmul import matmul_kernel
from baco.problem.layer import Layer
from baco.tuner import costmodel, kernel_model

# (DIM, M, N, K, bias): kernels.py-like shapes (ragged, GEMV, square, tiny K, one row, interior-rich:
# many full programs; ragged-K-rich: K not a multiple of the K block under full M and N blocks, K of
# 2-100; K = 1, the K loop specialized away), the default schedule's blocks, int32 out or with a
# bias and int8 out (benchmarks/explicit_gemm_iss.py's shapes, against which the fit is checked,
# are none of these)
GEMMS = [(dim, M, N, K, bias) for dim, M, N, K in
         [(16, 17, 33, 65), (16, 93, 116, 258), (16, 200, 1, 300), (16, 267, 41, 3), (16, 160, 139, 41),
          (32, 93, 116, 258), (32, 17, 33, 65), (32, 256, 64, 128), (16, 64, 48, 16), (16, 1, 128, 64),
          (16, 250, 70, 20), (32, 40, 300, 90), (16, 48, 48, 160), (32, 512, 32, 32), (16, 130, 130, 130),
          (32, 100, 9, 70), (16, 128, 256, 256), (16, 64, 64, 512), (32, 128, 256, 256), (16, 256, 256, 64),
          (16, 100, 70, 128), (32, 512, 128, 256), (32, 80, 200, 64),
          (16, 256, 96, 5), (16, 320, 128, 40), (32, 256, 128, 100), (16, 64, 256, 7), (32, 200, 96, 2),
          (16, 256, 128, 24), (32, 512, 64, 9), (32, 384, 64, 1), (16, 128, 64, 1), (16, 97, 70, 1)]
         for bias in (False, True)] + [
    # store-bound ragged-K programs of one short K step under 128-256-row blocks (full M and N
    # blocks; their blocks given, double-buffered), whose stores dominate the CPU's work: of the kind
    # of explicit_gemm_iss.py's 512x128x3, 1024x64x8 and 256x256x16 probes (other shapes)
    (dim, M, N, K, bias, blocks) for dim, M, N, K, blocks in
    [(16, 768, 128, 5, (256, 64, 16)), (16, 384, 256, 10, (128, 128, 16)), (16, 512, 64, 12, (128, 64, 16)),
     (32, 512, 128, 6, (128, 64, 32)), (32, 256, 256, 20, (64, 128, 32)),
     # wide column blocks under K steps of one or two DIM blocks (a C column's work is a weight
     # block or two: the column loop's own instructions, which LLVM unrolls for a few columns only,
     # weigh), whole and with an edge program in a grid of several
     (16, 64, 256, 512, (32, 256, 16)), (16, 96, 320, 256, (32, 320, 16)), (16, 49, 512, 512, (32, 512, 16)),
     (16, 81, 128, 256, (32, 128, 32)), (32, 64, 256, 256, (64, 256, 32)), (32, 49, 256, 512, (32, 256, 32))]
    for bias in (False, True)]
# (DIM, R, stride, P, C, K, rows, block_m, block_n, block_k): explicit conv programs (P = Q, no padding)
CONVS = [(16, 3, 1, 8, 32, 32, 1, 8, 32, 16), (16, 3, 1, 8, 32, 32, 4, 8, 32, 32), (16, 3, 2, 7, 64, 32, 2, 7, 32, 32),
         (16, 7, 2, 8, 3, 32, 1, 8, 32, 16), (16, 7, 2, 8, 3, 32, 8, 8, 32, 16), (16, 3, 1, 14, 16, 64, 2, 14, 64, 16),
         (32, 3, 1, 8, 64, 64, 1, 8, 64, 32), (32, 3, 1, 8, 32, 64, 8, 8, 64, 32), (32, 7, 2, 8, 3, 64, 2, 8, 32, 32),
         (32, 3, 2, 7, 64, 64, 4, 7, 64, 64), (16, 3, 2, 14, 32, 32, 1, 14, 32, 32), (16, 5, 1, 8, 16, 32, 2, 8, 32, 16),
         # added with the strided term (the slice and command terms were within one standard error of
         # 0): narrow and wide channel blocks, 2-8 rows a program, a strided and a 5x5 one
         (16, 3, 1, 8, 64, 64, 2, 8, 16, 16), (16, 3, 1, 8, 64, 64, 8, 8, 64, 64), (16, 3, 1, 16, 32, 32, 4, 16, 32, 32),
         (32, 3, 1, 14, 64, 64, 7, 14, 64, 64), (16, 3, 2, 8, 32, 64, 4, 8, 64, 32), (16, 5, 1, 8, 32, 32, 4, 8, 32, 32),
         # double-buffered programs (an 11th field True; the "double_buffer" and "double_buffer_row" terms):
         # 1-8 rows, narrow and wide blocks, strided, 5x5, 7x7 stems, DIM 16 and 32, and the
         # tuned_0.15mm2 test's 3x3 14x14 32>64 2x14/32/32
         (16, 3, 1, 14, 32, 64, 2, 14, 32, 32, True), (16, 3, 1, 8, 32, 32, 1, 8, 32, 16, True),
         (16, 3, 1, 8, 32, 32, 4, 8, 32, 32, True), (16, 3, 2, 7, 64, 32, 2, 7, 32, 32, True),
         (32, 3, 1, 8, 64, 64, 1, 8, 64, 32, True), (16, 3, 1, 8, 64, 64, 8, 8, 64, 64, True),
         (16, 5, 1, 8, 16, 32, 2, 8, 32, 16, True), (16, 3, 1, 8, 64, 64, 2, 8, 16, 16, True),
         (32, 3, 1, 14, 64, 64, 7, 14, 64, 64, True), (16, 3, 1, 14, 16, 64, 2, 14, 64, 16, True),
         (16, 3, 2, 14, 32, 32, 1, 14, 32, 32, True), (16, 7, 2, 8, 3, 32, 1, 8, 32, 16, True),
         (16, 3, 1, 8, 64, 64, 1, 8, 16, 16, True), (16, 5, 1, 8, 32, 32, 1, 8, 32, 32, True),
         (16, 3, 1, 16, 32, 32, 4, 16, 32, 32, True), (16, 3, 2, 8, 32, 64, 4, 8, 64, 32, True),
         (16, 7, 2, 8, 3, 32, 8, 8, 32, 16, True), (32, 3, 1, 8, 32, 64, 8, 8, 64, 32, True)]
# (DIM, R, stride, P, channels, rows): depthwise programs (BLOCK_N = BLOCK_K = DIM, whole rows)
DEPTHWISE = [(16, 3, 1, 8, 32, 1), (16, 3, 2, 7, 64, 2), (16, 5, 1, 6, 16, 3), (16, 3, 1, 14, 48, 7),
             (16, 3, 1, 8, 64, 4), (16, 3, 1, 16, 16, 1), (32, 3, 1, 8, 64, 2), (32, 3, 2, 7, 32, 7),
             # added with the strided term (the slice and command terms were within one standard error of 0)
             (16, 3, 1, 8, 32, 8), (16, 3, 2, 8, 32, 4), (32, 3, 1, 14, 64, 7), (16, 5, 1, 8, 32, 1), (16, 3, 1, 16, 32, 4),
             # double-buffered programs (a 7th field True; the "double_buffer" and "double_buffer_row" terms)
             (16, 3, 1, 8, 32, 1, True), (16, 3, 2, 7, 64, 2, True), (16, 3, 1, 14, 48, 7, True),
             (16, 3, 1, 8, 64, 4, True), (32, 3, 1, 8, 64, 2, True), (16, 5, 1, 8, 32, 1, True)]
# fused programs (baco.kernels.fused): (DIM, "chain", M, K, H, N, BLOCK_M, BLOCK_K) and
# (DIM, "resadd", M, K, N, BLOCK_M, BLOCK_N, BLOCK_K)
FUSED = [(16, "chain", 20, 40, 96, 48, 32, 48), (16, "chain", 256, 64, 128, 64, 64, 64),
         (16, "chain", 1024, 32, 64, 32, 64, 32), (32, "chain", 256, 64, 128, 64, 64, 64),
         (16, "chain", 17, 33, 65, 17, 16, 32), (16, "chain", 100, 128, 48, 80, 32, 64),
         (32, "chain", 65, 96, 64, 33, 32, 32), (16, "chain", 97, 65, 33, 17, 32, 32), (16, "chain", 1, 97, 17, 33, 16, 64),
         (32, "chain", 97, 33, 65, 17, 64, 32), (32, "chain", 65, 65, 97, 1, 32, 32),
         (16, "resadd", 64, 96, 16, 64, 16, 96), (16, "resadd", 1024, 96, 24, 64, 32, 96),
         (16, "resadd", 256, 192, 32, 128, 32, 64), (16, "resadd", 16, 384, 64, 16, 64, 128),
         (16, "resadd", 64, 576, 96, 16, 96, 192), (32, "resadd", 256, 192, 64, 64, 64, 64),
         (16, "resadd", 33, 65, 17, 16, 32, 32), (16, "resadd", 97, 65, 33, 32, 32, 32), (16, "resadd", 1, 17, 33, 16, 32, 32),
         (32, "resadd", 97, 96, 65, 64, 64, 64), (32, "resadd", 33, 97, 65, 32, 64, 64),
         # ragged-K ones: full row (and column) blocks, K not a multiple of the K block
         (16, "chain", 64, 65, 32, 16, 32, 32), (16, "chain", 128, 40, 64, 32, 32, 32),
         (32, "chain", 128, 80, 64, 64, 64, 64), (16, "chain", 96, 100, 48, 32, 32, 64),
         (16, "chain", 256, 24, 64, 64, 64, 32), (16, "resadd", 64, 40, 32, 32, 32, 32),
         (16, "resadd", 128, 100, 64, 64, 64, 64), (32, "resadd", 128, 72, 64, 64, 64, 64),
         (16, "resadd", 256, 20, 64, 64, 64, 32),
         # MobileNetV2 64x64's project convs + add at their default blocks (fused.gemm_resadd_default_blocks)
         (16, "resadd", 256, 144, 24, 32, 32, 48), (16, "resadd", 64, 192, 32, 32, 32, 48),
         (16, "resadd", 4, 960, 160, 16, 160, 64), (16, "resadd", 16, 576, 96, 16, 48, 576),
         # ... at the default blocks with BLOCK_N at most 2·DIM, and the BERT layer's out_proj + add
         (16, "resadd", 16, 384, 64, 16, 32, 64), (16, "resadd", 16, 576, 96, 16, 32, 64),
         (16, "resadd", 4, 960, 160, 16, 32, 64), (16, "resadd", 32, 768, 768, 32, 32, 32),
         # MobileNetV2 64x64's project -> expand chain (features.1.conv.1 -> features.2.conv.0.0) at the
         # blocks its forced edge has run (benchmarks/fused_programs.py --models mobilenet_v2): the
         # producer's tile and the default ones
         (16, "chain", 1024, 32, 16, 96, 80, 32), (16, "chain", 1024, 32, 16, 96, 32, 32)]
# tiny chains (8-64 rows, 16-32 wide: a whole model's small MLP), fitted with the chain's FUSED ones
TINY_CHAINS = [(16, "chain", 20, 16, 16, 16, 16, 16), (16, "chain", 20, 16, 16, 16, 32, 16),
               (32, "chain", 8, 32, 32, 32, 32, 32), (16, "chain", 64, 32, 32, 32, 32, 32),
               (16, "chain", 40, 16, 32, 16, 16, 16)]
# (DIM, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K or None for the default schedule, B padded to whole DIM
# blocks): LOOP_WS programs of 1, 2 and many K steps, a ragged step split (a head LOOP_WS), padded
# (one LOOP_WS) or of K < DIM (B moved explicitly), resident B down a column, one and many programs,
# K = 1 (no K loop: specialized) and N = 1 (GEMVs), DIM 2, 4 and 8 arrays (the tuner's tiny ones),
# one-row grids (A resident across the columns)
LOOP_WS_GEMMS = [(16, 16, 16, 16, 16, 16, 16, False), (16, 48, 16, 16, 16, 16, 16, False),
                 (16, 16, 16, 32, 16, 16, 16, False), (16, 16, 16, 64, 16, 16, 16, False),
                 (16, 16, 16, 41, 16, 16, 48, False), (16, 16, 16, 41, 16, 16, 48, True),
                 (16, 16, 16, 9, 16, 16, 16, False), (16, 64, 64, 100, 32, 32, 32, False),
                 (16, 128, 256, 256, None, None, None, False), (16, 512, 512, 512, None, None, None, False),
                 (16, 160, 139, 41, None, None, None, False), (16, 160, 139, 41, None, None, None, True),
                 (16, 666, 340, 19, None, None, None, False), (16, 666, 340, 19, None, None, None, True),
                 (16, 1086, 1, 572, None, None, None, False), (16, 267, 41, 3, None, None, None, False),
                 (32, 128, 256, 256, None, None, None, False), (32, 1271, 139, 41, None, None, None, True),
                 (32, 1271, 139, 41, None, None, None, False), (32, 629, 1, 109, None, None, None, False),
                 (32, 200, 1, 300, None, None, None, False), (32, 267, 41, 3, None, None, None, False),
                 (32, 93, 116, 258, None, None, None, False), (32, 96, 96, 200, 32, 96, 64, True),
                 (4, 34, 4, 1, 8, 4, 4, False), (2, 5, 1, 1, None, None, None, False),
                 (4, 4287, 1, 4, None, None, None, False), (2, 5, 1, 1, 2, 2, 2, False),
                 (8, 34, 4, 1, 8, 8, 8, False), (4, 40, 12, 20, 8, 8, 8, False),
                 (8, 100, 20, 30, 16, 16, 16, False), (2, 64, 2, 2, 8, 2, 2, False),
                 (4, 64, 16, 4, 16, 16, 4, False), (16, 64, 16, 1, 16, 16, 16, False),
                 (16, 64, 1, 16, 16, 16, 16, False), (16, 64, 16, 16, 16, 16, 16, False),
                 (16, 1, 1000, 512, 16, 240, 512, False), (16, 1, 100, 64, 16, 32, 64, False),
                 (32, 17, 200, 33, 32, 64, 64, False), (2, 5, 1, 1, 2, 1, 1, False),
                 (16, 1295, 1, 20, 128, 16, 32, False), (16, 1295, 1, 20, 176, 16, 32, False),
                 (16, 389, 1, 25, 144, 16, 32, False), (16, 697, 1, 55, 96, 16, 64, False),
                 # programs moving several k rows of B explicitly (one step over a one-column-block B,
                 # K ragged: 3-5 mvins a program, 3-7 such programs), separating "mvin" from "explicit_b"
                 (16, 48, 40, 72, 48, 16, 80, False), (16, 33, 97, 33, 48, 16, 48, False),
                 (16, 96, 40, 72, 48, 16, 80, False), (16, 48, 80, 72, 48, 16, 80, False),
                 (16, 48, 40, 40, 48, 16, 48, False),
                 # the same in two rows of programs (a one-row grid's are split_after, no explicit B)
                 (16, 96, 97, 33, 48, 16, 48, False), (16, 96, 80, 72, 48, 16, 80, False),
                 (16, 96, 40, 40, 48, 16, 48, False),
                 # one-program splits with the head last (3+ blocks: "head_last"), one-row grids' splits
                 # with the head storing C ("split_after"), a column of explicit-B programs
                 (16, 20, 1, 179, None, None, None, False), (16, 1, 1, 91, None, None, None, False),
                 (32, 20, 1, 179, None, None, None, False), (16, 1, 1, 1169, None, None, None, False),
                 (32, 1, 1, 91, None, None, None, False), (16, 33, 1, 33, 48, 16, 48, False),
                 (32, 65, 17, 97, None, None, None, False), (16, 16, 64, 40, 16, 16, 48, False),
                 (16, 16, 64, 20, 16, 16, 32, False), (32, 32, 128, 72, 32, 32, 96, False)]
# (DIM, R, stride, H, C, K, depthwise, rows, BLOCK_M, BLOCK_N or None for the default schedule[, bias]):
# LOOP_CONV_WS programs (padding R // 2), conv and depthwise, one LOOP_CONV_WS a program and a
# program split into 2, 3 and more input channel blocks, few and many programs, DIM 16 and 32
LOOP_CONVS = [(16, 3, 1, 14, 64, 64, False, 7, 14, 64), (16, 3, 1, 14, 64, 64, False, 2, 14, 32),
              (16, 3, 1, 14, 64, 64, False, 1, 14, 16), (16, 3, 2, 32, 3, 32, False, None, None, None),
              (16, 3, 1, 14, 128, 64, False, None, None, None), (16, 3, 1, 14, 256, 64, False, None, None, None),
              (16, 3, 1, 14, 520, 64, False, None, None, None), (16, 3, 1, 14, 800, 64, False, None, None, None),
              (16, 3, 1, 14, 1200, 64, False, None, None, None), (16, 3, 1, 28, 512, 64, False, None, None, None),
              (16, 3, 1, 28, 128, 256, False, None, None, None), (16, 1, 2, 28, 128, 256, False, None, None, None),
              (16, 3, 1, 7, 512, 128, False, None, None, None), (16, 3, 1, 28, 64, 64, True, None, None, None),
              (16, 3, 2, 28, 96, 96, True, None, None, None), (16, 5, 1, 14, 48, 48, True, None, None, None),
              (32, 3, 1, 14, 64, 64, False, None, None, None), (32, 3, 1, 14, 1024, 64, False, None, None, None),
              (32, 3, 1, 28, 128, 128, True, None, None, None),
              # strided programs of small outputs (MobileNetV2 64x64's 4x4 and 2x2 depthwise steps), and
              # with a bias (a model's layers: BatchNorm folded into it) strided or not
              (16, 3, 2, 8, 192, 192, True, None, None, None), (16, 3, 2, 4, 576, 576, True, None, None, None),
              (16, 3, 2, 16, 144, 144, True, None, None, None), (16, 3, 2, 14, 64, 64, False, None, None, None),
              (16, 3, 2, 8, 128, 128, False, None, None, None),
              (16, 3, 2, 8, 192, 192, True, None, None, None, True),
              (16, 3, 1, 4, 576, 576, True, None, None, None, True),
              (16, 3, 1, 28, 64, 64, True, None, None, None, True),
              (16, 3, 1, 14, 64, 64, False, None, None, None, True),
              (16, 3, 2, 14, 64, 64, False, None, None, None, True),
              # outputs of one row (P = 1: the row arithmetic folded away), 1x1 outputs (a small image's
              # last layers), strided, depthwise, with a bias, DIM 32, several channel blocks
              (16, 3, 1, 1, 64, 64, False, None, None, None), (16, 3, 2, 2, 64, 64, False, None, None, None),
              (16, 3, 1, 1, 64, 64, True, None, None, None), (16, 3, 2, 2, 96, 96, True, None, None, None),
              (32, 3, 1, 1, 64, 64, False, None, None, None), (16, 3, 1, 1, 64, 64, False, None, None, None, True),
              (16, 3, 1, 1, 576, 576, True, None, None, None, True), (16, 3, 1, 1, 800, 64, False, None, None, None),
              # programs of one output row of multi-row layers (P > 1 but rows 1: the program's row
              # bounds folded, its first row not): conv, strided, depthwise, DIM 32
              (16, 3, 1, 14, 64, 64, False, 1, 14, 32), (16, 3, 2, 14, 64, 64, False, 1, 7, 16),
              (16, 3, 1, 14, 64, 64, True, 1, 14, 16), (32, 3, 1, 14, 64, 64, False, 1, 14, 32),
              (16, 3, 1, 7, 128, 64, False, 1, 7, 32), (16, 3, 1, 28, 64, 64, True, 1, 28, 16)]
# (DIM, M, K, H, N): the fused chain on the loop unit (Gemmini's default sizes with the ext-spad
# commands): one and many programs, one and many tiles a layer, ragged widths, DIM 8
CHAIN_LOOPS = [(16, 64, 64, 64, 64), (16, 128, 64, 64, 64), (16, 17, 33, 65, 17), (16, 65, 17, 33, 65),
               (16, 256, 32, 16, 96), (16, 1024, 32, 16, 96), (16, 64, 128, 128, 128), (16, 33, 65, 96, 128),
               (16, 96, 96, 128, 1), (8, 65, 33, 96, 17), (8, 128, 64, 64, 64), (16, 1, 16, 16, 16),
               (16, 1, 65, 96, 33), (16, 16, 16, 16, 16), (16, 200, 16, 16, 16), (8, 1, 8, 8, 8),
               (16, 300, 64, 200, 40)]
# (DIM, rows, cols): unfused residual adds (baco.kernels.resadd at its default view and blocks) of
# whole DIM-row programs (one LOOP_WS each): 1-98 programs, DIM 16 and 32 (ResNet's and
# MobileNetV2's adds among them); RAGGED_ADDS: adds whose view is not whole DIM rows (M x N, a
# program of ragged rows an explicit stream), fitted with them; HELD_OUT_ADDS: more such adds,
# reported, not fitted
ADDS = [(16, 16, 16), (16, 49, 512), (16, 3136, 64), (16, 196, 256), (16, 784, 128), (16, 1024, 24),
        (32, 196, 256), (32, 49, 2048), (32, 3136, 24), (32, 3136, 64)]
RAGGED_ADDS = [(16, 49, 33), (16, 7, 7), (32, 33, 65), (16, 100, 1), (16, 33, 17), (16, 17, 300), (16, 49, 129),
               (32, 49, 33)]
HELD_OUT_ADDS = [(16, 65, 129), (16, 17, 33), (16, 255, 255), (16, 196, 33), (16, 17, 513), (32, 65, 300)]
SMOKE_GEMMS = [(16, 17, 33, 65, True)]
SMOKE_LOOP_WS = [(16, 16, 16, 41, 16, 16, 48, False)]
SMOKE_CONVS = [(16, 3, 1, 4, 16, 16, 2, 4, 16, 16)]
SMOKE_LOOP_CONVS = [(16, 3, 1, 8, 16, 16, False, None, None, None)]
TABLES = ("gemm", "loop_ws", "loop_conv", "conv", "depthwise", "residual_add", "fused", "chain_loop")


def iss_instructions(kernel, grid, args, options) -> int:
    """RISC-V instructions of one explicit-stream launch on the ISS."""
    return kernel.compile(*args, target="iss", **dict(options, loop_ws=False)).run(grid, args)["instructions"]


def gemm_row(dim, M, N, K, bias, blocks=None):
    """An explicit GEMM program under the shape's default schedule (or `blocks`, double-buffered):
    int32 out, or with a bias and int8 out; its EXPLICIT_INSTRUCTIONS terms
    (explicit_gemm_program_cycles') and instructions."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    s = default_gemm_schedule(M, N, K, cfg, bias, bias) if blocks is None else GemmSchedule(*blocks, "WS", True)
    problems = schedule_problems(s, cfg, bias)
    if problems:
        raise SystemExit(f"{M}x{N}x{K} at DIM {dim}: {s}: {problems}")
    rng = np.random.default_rng(M + N + K)
    a, b = rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, N), dtype=np.int8)
    args = [a, b, np.zeros((M, N), np.int8 if bias else np.int32), M, N, K, K, 1, N, 1, N, 1, 0.05 if bias else 1.0]
    options = dict(config=cfg, RELU=False, OUT_INT8=bias, schedule=s)
    runtime = list(args)
    if bias:
        options["bias_ptr"] = rng.integers(-1000, 1000, N).astype(np.int32)
        runtime.append(options["bias_ptr"])
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    info = matmul_kernel.compile(*args, target="iss", **options, loop_ws=False, grid=grid).run(grid, runtime)
    model = explicit_gemm_program_cycles(M, N, K, s, cfg, bias, bias=bias)
    name = f"GEMM {M}x{N}x{K} DIM {dim} {s.block_m}/{s.block_n}/{s.block_k}{' bias int8' if bias else ''}"
    return name, model["terms"], info["instructions"]


def loop_ws_row(dim, M, N, K, bm, bn, bk, b_padded):
    """A LOOP_WS program's terms and its kernel's instructions: rdcycle around the grid loop on the
    ISS without the cycle model (the CPU at one instruction a cycle, Gemmini taking no time)."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    s = default_gemm_schedule(M, N, K, cfg, False, b_padded=b_padded) if bm is None else GemmSchedule(bm, bn, bk)
    if not loop_ws_fits(s.block_m, s.block_n, s.block_k, cfg):
        raise SystemExit(f"{M}x{N}x{K} at DIM {dim}: {s} is not a LOOP_WS program")
    rng = np.random.default_rng(M + N + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (padded_rows(K, dim) if b_padded else K, N), dtype=np.int8)
    args = [a, b, np.zeros((M, N), np.int32), M, N, K, K, 1, N, 1, N, 1, 1.0]
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    ck = matmul_kernel.compile(*args, target="iss", config=cfg, RELU=False, OUT_INT8=False, schedule=s, grid=grid)
    count = ck.run(grid, args)["kernel_cycles"]
    terms = loop_ws_launch_terms(M, N, K, s, cfg, b_padded=b_padded)
    name = f"LOOP_WS {M}x{N}x{K} DIM {dim} {s.block_m}/{s.block_n}/{s.block_k}{' padded B' if b_padded else ''}"
    return name, terms, count


def conv_terms(layer, schedule, dim):
    terms = costmodel.conv_program_terms(layer, kernel_model._schedule_blocks(layer, schedule), float(dim),
                                         rows=schedule.rows)
    programs, steps = float(terms["programs"][0]), float(terms["k_steps"][0])
    commands = float(terms["commands"][0])
    return {"step": programs * steps, "slice": programs * steps * schedule.rows, "command": commands,
            "strided_step": programs * steps * (layer.Hstride != 1),
            "double_buffer": commands * schedule.double_buffer,
            "double_buffer_row": programs * steps * schedule.double_buffer * (schedule.rows == 1)}


def conv_row(dim, R, stride, P, C, K, rows, bm, bn, bk, double_buffer=False):
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    layer = Layer(R=R, S=R, P=P, Q=P, C=C, K=K, Hstride=stride, Wstride=stride)
    rng = np.random.default_rng(R + P + C + K)
    x = rng.integers(-128, 128, (1, layer.input_rows, layer.input_cols, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C, K), dtype=np.int8)
    s = GemmSchedule(bm, bn, bk, rows=rows, double_buffer=double_buffer)
    launch = conv2d_launch(x, w, stride=stride, config=cfg, blocks=s, scale=1 / 256)
    count = iss_instructions(launch.kernel, launch.grid, launch.args, launch.options)
    return (f"conv {R}x{R}/{stride} {P}x{P} {C}>{K} DIM {dim} {rows}x{bm}/{bn}/{bk}{' db' if double_buffer else ''}",
            conv_terms(layer, s, dim), count)


def loop_conv_row(dim, R, stride, H, C, K, depthwise, rows, bm, bn, bias=False):
    """A LOOP_CONV_WS launch's terms (programs of a conv or depthwise kernel, their further channel
    blocks' LOOP_CONV_WS, strided or not, with a bias or not) and its kernel's instructions: rdcycle
    around the grid loop on the ISS without the cycle model, as loop_ws_row."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    rng = np.random.default_rng(R + H + C + K)
    x = rng.integers(-128, 128, (1, H, H, C), dtype=np.int8)
    s = None if rows is None else GemmSchedule(bm, bn, dim, rows=rows)
    b = rng.integers(-1000, 1000, K, dtype=np.int32) if bias else None
    if depthwise:
        launch = depthwise_launch(x, rng.integers(-128, 128, (R, R, C), dtype=np.int8), b, stride=stride,
                                  padding=R // 2, config=cfg, blocks=s, scale=1 / 256, out="int8")
    else:
        launch = conv2d_launch(x, rng.integers(-128, 128, (R, R, C, K), dtype=np.int8), b, stride=stride,
                               padding=R // 2, config=cfg, blocks=s, scale=1 / 256)
    s = launch.schedule
    P = (H + 2 * (R // 2) - R) // stride + 1
    channels = loop_conv_channels(s, P, P, s.block_n if depthwise else K, s.block_n if depthwise else C, R, R, stride,
                                  1, cfg)
    if channels is None:
        raise SystemExit(f"{R}x{R}/{stride} {H}x{H} {C}>{K} at DIM {dim}: {s} is not a LOOP_CONV_WS program")
    programs = float(np.prod(launch.grid))
    loops = 1 if depthwise else -(-C // channels)
    info = launch.compiled("iss").run(launch.grid, launch.runtime_args())     # for its shapes and grid, as it runs
    if info["commands"] > programs * loops * 12:
        raise SystemExit(f"{R}x{R}/{stride} {H}x{H} {C}>{K} at DIM {dim}: {info['commands']} commands, "
                         f"not LOOP_CONV_WS programs")
    terms = {name: programs * n for name, n in loop_conv_program_terms(loops, depthwise, stride != 1, bias, P > s.rows,
                                                                       s.rows > 1 and P > s.rows).items()} \
        | {"launch": 1.0}
    kind = "depthwise" if depthwise else "conv"
    return (f"LOOP_CONV_WS {kind} {R}x{R}/{stride} {H}x{H} {C}>{K} DIM {dim} {s.rows}x{s.block_m}/{s.block_n}, "
            f"{loops} block{'s' if loops > 1 else ''}{', bias' if bias else ''}"), terms, info["kernel_cycles"]


def depthwise_row(dim, R, stride, P, channels, rows, double_buffer=False):
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    layer = Layer(R=R, S=R, P=P, Q=P, C=1, K=channels, Hstride=stride, Wstride=stride, depthwise=True)
    rng = np.random.default_rng(R + P + channels)
    x = rng.integers(-128, 128, (1, layer.input_rows, layer.input_cols, channels), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, channels), dtype=np.int8)
    s = GemmSchedule(P, dim, dim, rows=rows, double_buffer=double_buffer)
    launch = depthwise_launch(x, w, stride=stride, config=cfg, blocks=s, scale=1 / 256)
    count = iss_instructions(launch.kernel, launch.grid, launch.args, launch.options)
    return (f"depthwise {R}x{R}/{stride} {P}x{P} {channels} DIM {dim} {rows}x{P}{' db' if double_buffer else ''}",
            conv_terms(layer, s, dim), count)


def residual_add_row(dim, rows, cols):
    """An unfused residual add (baco.kernels.resadd at its default view and blocks) of rows x cols
    int8 operands: its RESADD_INSTRUCTIONS terms (the launch, its programs) and its launch's
    instructions (rdcycle around the grid loop on the ISS without the cycle model, as loop_ws_row:
    what whole_model.residual_add_cost sets against Gemmini's time, the ELF's start-up left out)."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64 if dim == 16 else 128)
    a = np.random.default_rng(rows + cols).integers(-128, 128, (rows, cols), dtype=np.int8)
    launch = resadd_launch(a, a[::-1].copy(), 0.5, 0.7, 0.9, relu=False, config=cfg)
    info = launch.compiled("iss").run(launch.grid, launch.runtime_args())     # for its shapes and grid, as it runs
    view = "x".join(map(str, launch.args[3:5]))
    return (f"add {rows}x{cols} DIM {dim} as {view}, {launch.options['BLOCK_M']}x{launch.options['BLOCK_N']}",
            {k: float(n) for k, n in resadd_terms(resadd_programs(*launch.args[3:5], cfg), dim).items()},
            info["kernel_cycles"])


def fused_row(dim, kind, *shape):
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    rng = np.random.default_rng(sum(shape))
    i8 = lambda *s: rng.integers(-128, 128, s, dtype=np.int8)  # noqa: E731
    if kind == "chain":
        M, K, H, N, bm, bk = shape
        launch = gemm_chain_launch(i8(M, K), i8(K, H), None, i8(H, N), None, scale1=0.01, scale2=0.01,
                                   block_m=bm, block_k=bk, config=cfg)
        launched = _chain_launch(M, K, H, N, bm, bk, cfg, DEFAULT_CONSTANTS)
    else:
        M, K, N, bm, bn, bk = shape
        launch = gemm_resadd_launch(i8(M, K), i8(K, N), None, i8(M, N), scale=0.01, relu=False, a_scale=0.5,
                                    r_scale=0.7, out_scale=0.9, relu_out=False, schedule=GemmSchedule(bm, bn, bk),
                                    config=cfg)
        launched = _resadd_launch(M, N, K, bm, bn, bk, cfg, DEFAULT_CONSTANTS)
    # the launch's instructions: rdcycle around the grid loop on the ISS without the cycle model (as
    # loop_ws_row; the ISS's whole-run count adds the harness's start-up, ~160 instructions)
    count = launch.compiled("iss").run(launch.grid, launch.args)
    terms = fused_instruction_terms(launched, kind)
    return f"{kind} {'x'.join(map(str, shape))} DIM {dim}", terms, count["kernel_cycles"]


def chain_loop_row(dim, M, K, H, N):
    """The compiled chain on the loop unit's terms (its LOOP_WS tiles, column groups, programs and
    the launch, as gemm_chain_loop_ws_loops walks them) and its kernel's instructions (rdcycle
    around the grid loop on the ISS without the cycle model, as loop_ws_row)."""
    cfg = replace(GemminiConfig.from_capacity(dim, 256, 64), mvout_spad=True)
    rng = np.random.default_rng(M + K + H + N)
    i8 = lambda *s: rng.integers(-128, 128, s, dtype=np.int8)  # noqa: E731
    launch = gemm_chain_launch(i8(M, K), i8(K, H), None, i8(H, N), None, scale1=0.01, scale2=0.01, config=cfg)
    info = launch.compiled("iss").run(launch.grid, launch.runtime_args())     # for its shapes and grid, as it runs
    loops = gemm_chain_loop_ws_loops(M, K, H, N, cfg)
    programs = sum(n for _, n in loops)
    col_blocks = [-(-width // dim) for width in (H, N)]
    groups = programs * sum(-(-j // chain_loop_tile_shape(j)[1]) for j in col_blocks)
    terms = {"tile": sum(n * len(program) for program, n in loops), "group": groups, "program": programs, "launch": 1}
    modelled = sum(n * sum(lp.commands for lp in program) for program, n in loops)
    # compiled for its shapes, config elimination drops a config_ld repeating a constant stride (W1's
    # and W2's rows of one width, a program's strides the one before set): up to two a program fewer
    if not modelled - 2 * programs <= info["commands"] <= modelled:
        raise SystemExit(f"chain {M}x{K}->{H}->{N} DIM {dim}: {info['commands']} commands, the model's {modelled}")
    return f"chain loop form {M}x{K}->{H}->{N} DIM {dim}", terms, info["kernel_cycles"]


def lawson_hanson(A, b) -> np.ndarray:
    """min |A x - b| over x >= 0 by Lawson and Hanson's active set (exact, for tables of any number
    of terms: an unconstrained fit on every subset, which it replaced, is 2^terms fits)."""
    n = A.shape[1]
    x, active = np.zeros(n), np.zeros(n, bool)
    for _ in range(10 * n):
        w = A.T @ (b - A @ x)
        if active.all() or (w[~active] <= 1e-12).all():
            break
        active[np.argmax(np.where(active, -np.inf, w))] = True
        while True:
            z = np.zeros(n)
            z[active] = np.linalg.lstsq(A[:, active], b, rcond=None)[0]
            if (z[active] > 0).all():
                x = z
                break
            shrink = active & (z <= 0)
            x = x + np.min(x[shrink] / (x[shrink] - z[shrink])) * (z - x)
            active &= x > 1e-12
    return x


def nnls_relative(rows, keys) -> dict:
    """Non-negative least squares of the relative error: min sum((x.c - y) / y)^2 over c >= 0,
    exactly (lawson_hanson)."""
    X = np.array([[t[k] for k in keys] for _, t, _ in rows], dtype=float)
    y = np.array([count for _, _, count in rows], dtype=float)
    return {k: round(float(v), 1) for k, v in zip(keys, lawson_hanson(X / y[:, None], np.ones(len(y))))}


def report(title, rows, keys, current, fit=True):
    fitted = nnls_relative(rows, keys) if fit and len(rows) >= len(keys) else None
    print(f"\n{title}: {len(rows)} programs")
    print(f"  in use: {current}")
    if fitted is not None:
        print(f"  fitted: {fitted}")
    print(f"  {'program':>52} {'instructions':>12} {'in use / ISS':>12} {'fitted / ISS':>12}")
    for name, t, count in rows:
        used = sum(current.get(k, 0.0) * t[k] for k in keys) / count
        fit = f"{sum(fitted[k] * t[k] for k in keys) / count:12.2f}" if fitted else f"{'':12}"
        print(f"  {name:>52} {count:>12,} {used:12.2f} {fit}", flush=True)
    for which, table in (("in use", current), ("fitted", fitted)):
        if table:
            ratios = [sum(table.get(k, 0.0) * t[k] for k in keys) / count for _, t, count in rows]
            print(f"  {which} within {min(ratios):.2f}-{max(ratios):.2f}x of the ISS, median {np.median(ratios):.2f}, "
                  f"median error {np.median(np.abs(np.array(ratios) - 1)):.1%}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="one GEMM, LOOP_WS, LOOP_CONV_WS, conv and chain program (seconds)")
    p.add_argument("--only", nargs="+", choices=TABLES, default=list(TABLES), help="these tables only (default: all)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    if "gemm" in args.only:
        gemms = [gemm_row(*g) for g in (SMOKE_GEMMS if args.smoke else GEMMS)]
        report("GEMM explicit stream (EXPLICIT_INSTRUCTIONS, EXPLICIT_INTERIOR_INSTRUCTIONS as interior_*, "
               "EXPLICIT_RAGGED_K_INSTRUCTIONS as ragged_k_*)", gemms,
               list(EXPLICIT_TERM_TABLE), EXPLICIT_TERM_TABLE)
    if "loop_ws" in args.only:
        loop_ws = [loop_ws_row(*g) for g in (SMOKE_LOOP_WS if args.smoke else LOOP_WS_GEMMS)]
        report("GEMM LOOP_WS programs (LOOP_WS_INSTRUCTIONS)", loop_ws, list(LOOP_WS_INSTRUCTIONS),
               LOOP_WS_INSTRUCTIONS)
    if "loop_conv" in args.only:
        loop_convs = [loop_conv_row(*c) for c in (SMOKE_LOOP_CONVS if args.smoke else LOOP_CONVS)]
        # the launch's own instructions fitted and left out, as LOOP_WS's
        report("LOOP_CONV_WS programs (LOOP_CONV_INSTRUCTIONS)", loop_convs, list(LOOP_CONV_INSTRUCTIONS) + ["launch"],
               LOOP_CONV_INSTRUCTIONS)
    if "conv" in args.only:
        convs = [conv_row(*c) for c in (SMOKE_CONVS if args.smoke else CONVS)]
        report("conv explicit stream (CONV_EXPLICIT_INSTRUCTIONS)", convs, list(CONV_EXPLICIT_INSTRUCTIONS),
               CONV_EXPLICIT_INSTRUCTIONS)
    if "chain_loop" in args.only:
        chains = [chain_loop_row(*c) for c in (CHAIN_LOOPS[:1] if args.smoke else CHAIN_LOOPS)]
        report("the chain on the loop unit (baco.gemmini.fused CHAIN_LOOP_WS_INSTRUCTIONS)", chains,
               list(CHAIN_LOOP_WS_INSTRUCTIONS), CHAIN_LOOP_WS_INSTRUCTIONS)
    if args.smoke:
        return 0
    if "depthwise" in args.only:
        depthwise = [depthwise_row(*d) for d in DEPTHWISE]
        report("depthwise explicit stream (DEPTHWISE_EXPLICIT_INSTRUCTIONS)", depthwise,
               list(DEPTHWISE_EXPLICIT_INSTRUCTIONS),
               DEPTHWISE_EXPLICIT_INSTRUCTIONS)
    if "residual_add" in args.only:
        report("unfused residual adds, whole DIM-row programs and programs of ragged rows (RESADD_INSTRUCTIONS)",
               [residual_add_row(*a) for a in ADDS + RAGGED_ADDS], list(RESADD_INSTRUCTIONS), RESADD_INSTRUCTIONS)
        report("held-out residual adds with programs of ragged rows (RESADD_INSTRUCTIONS; not fitted)",
               [residual_add_row(*a) for a in HELD_OUT_ADDS], list(RESADD_INSTRUCTIONS), RESADD_INSTRUCTIONS,
               fit=False)
    if "fused" in args.only:
        for kind, table in FUSED_INSTRUCTIONS.items():
            fused = [fused_row(*f) for f in FUSED + (TINY_CHAINS if kind == "chain" else []) if f[1] == kind]
            report(f"fused {kind} programs (baco.gemmini.fused FUSED_INSTRUCTIONS[{kind!r}])", fused,
                   list(table), table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
