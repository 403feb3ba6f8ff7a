/* Gemmini programming interface for bare-metal C programs.
 *
 * The macro names and argument orders are those of gemmini-rocc-tests'
 * include/gemmini.h, so programs written for it compile unchanged; the field
 * packing follows the command layouts of the Gemmini ISA (rs1/rs2 bit ranges
 * per command).  DIM, the memory sizes and the element types come from
 * gemmini_params.h, which baco generates for the target GemminiConfig. */
#ifndef BACO_GEMMINI_H
#define BACO_GEMMINI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gemmini_params.h"

/* ---- command numbers (funct7) ------------------------------------------- */
#define k_CONFIG 0
#define k_MVIN2 1
#define k_MVIN 2
#define k_MVOUT 3
#define k_COMPUTE_PRELOADED 4
#define k_COMPUTE_ACCUMULATE 5
#define k_PRELOAD 6
#define k_FLUSH 7
#define k_LOOP_WS 8
#define k_LOOP_WS_CONFIG_BOUNDS 9
#define k_LOOP_WS_CONFIG_ADDRS_AB 10
#define k_LOOP_WS_CONFIG_ADDRS_DC 11
#define k_LOOP_WS_CONFIG_STRIDES_AB 12
#define k_LOOP_WS_CONFIG_STRIDES_DC 13
#define k_MVIN3 14
#define k_LOOP_CONV_WS 15
#define k_LOOP_CONV_WS_CONFIG_1 16
#define k_LOOP_CONV_WS_CONFIG_2 17
#define k_LOOP_CONV_WS_CONFIG_3 18
#define k_LOOP_CONV_WS_CONFIG_4 19
#define k_LOOP_CONV_WS_CONFIG_5 20
#define k_LOOP_CONV_WS_CONFIG_6 21
#define k_CLKGATE_EN 22
#define k_COUNTER 126

/* config sub-commands, rs1[1:0] of funct 0 */
#define CONFIG_EX 0
#define CONFIG_LD 1
#define CONFIG_ST 2
#define CONFIG_BERT 3

#define OUTPUT_STATIONARY 0
#define WEIGHT_STATIONARY 1

#define NO_ACTIVATION 0
#define RELU 1
#define LAYERNORM 2
#define IGELU 3
#define SOFTMAX 4

/* Local addresses: bit 31 selects the accumulator, bit 30 accumulates on
 * write, bit 29 reads raw accumulator values. */
#define GARBAGE_ADDR ((uint32_t)(-1))
#define ACC_ADDR_BIT (1u << 31)
#define ACC_ACCUMULATE_BIT (1u << 30)
#define ACC_READ_FULL_BIT (1u << 29)

#define NO_BIAS false
#define BIAS true

/* ---- the RoCC instruction ------------------------------------------------ */
#include "../rocc-software/src/xcustom.h"

/* A program may define ROCC_INSTRUCTION_RS1_RS2 itself before including
 * this header (e.g. to record commands instead of issuing them). */
#ifndef ROCC_INSTRUCTION_RS1_RS2
#define ROCC_INSTRUCTION_RS1_RS2(x, rs1, rs2, funct) ROCC_ASM_0_R_R(x, rs1, rs2, funct)
#endif

#define gemmini_fence() asm volatile("fence" ::: "memory")

/* ---- scale values travel as float32 bit patterns -------------------------- */
static inline uint32_t gemmini_f32_bits(float f)
{
  union { float f; uint32_t u; } v = {.f = f};
  return v.u;
}
#define scale_t_to_scale_t_bits(x) gemmini_f32_bits((float)(x))
#define acc_scale_t_to_acc_scale_t_bits(x) gemmini_f32_bits((float)(x))

/* rows/cols/address triple used by mvin/mvout/preload/compute operands */
#define GEMMINI_OPERAND(addr, cols, rows)                                                   \
  (((uint64_t)(uint16_t)(rows) << 48) | ((uint64_t)(uint16_t)(cols) << 32) | (uint64_t)(uint32_t)(addr))

/* ---- configuration ---------------------------------------------------------- */
#define gemmini_extended3_config_ex(dataflow, sys_act, sys_shift, sys_acc_scale, C_stride, A_stride, \
                                    A_transpose, B_transpose, set_only_strides)                   \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                          \
      ((uint64_t)acc_scale_t_to_acc_scale_t_bits(sys_acc_scale) << 32) |                         \
          ((uint64_t)(uint16_t)(A_stride) << 16) | ((uint64_t)((B_transpose) ? 1 : 0) << 9) |   \
          ((uint64_t)((A_transpose) ? 1 : 0) << 8) | ((uint64_t)((set_only_strides) ? 1 : 0) << 7) | \
          ((uint64_t)((sys_act) & 3) << 3) | ((uint64_t)((dataflow) & 1) << 2) | CONFIG_EX,      \
      ((uint64_t)(uint16_t)(C_stride) << 48) | (uint64_t)(uint32_t)(sys_shift), k_CONFIG)

#define gemmini_extended2_config_ex(dataflow, sys_act, sys_shift, A_stride, A_transpose, B_transpose) \
  gemmini_extended3_config_ex(dataflow, sys_act, sys_shift, ACC_SCALE_IDENTITY, 1, A_stride,        \
                              A_transpose, B_transpose, false)

#define gemmini_extended_config_ex(dataflow, sys_act, sys_shift, A_stride, A_transpose, B_transpose) \
  gemmini_extended2_config_ex(dataflow, sys_act, sys_shift, A_stride, A_transpose, B_transpose)

#define gemmini_config_ex(dataflow, sys_act, sys_shift) \
  gemmini_extended_config_ex(dataflow, sys_act, sys_shift, 1, 0, 0)

/* id selects the mvin slot: 0 = gemmini_mvin, 1 = mvin2, 2 = mvin3. */
#define gemmini_extended5_config_ld(stride, scale, shrunk, block_mvin_stride, pixel_repeats, id)   \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                           \
      ((uint64_t)scale_t_to_scale_t_bits(scale) << 32) |                                          \
          ((uint64_t)(uint16_t)(block_mvin_stride) << 16) | ((uint64_t)(uint8_t)(pixel_repeats) << 8) | \
          ((uint64_t)((id) & 3) << 3) | ((uint64_t)((shrunk) ? 1 : 0) << 2) | CONFIG_LD,          \
      (uint64_t)(stride), k_CONFIG)

#define gemmini_extended4_config_ld(stride, scale, shrunk, block_mvin_stride, id) \
  gemmini_extended5_config_ld(stride, scale, shrunk, block_mvin_stride, 1, id)
#define gemmini_extended3_config_ld(stride, scale, shrunk, id) \
  gemmini_extended4_config_ld(stride, scale, shrunk, DIM, id)
#define gemmini_extended2_config_ld(stride, scale, shrunk) \
  gemmini_extended3_config_ld(stride, scale, shrunk, 0)
#define gemmini_extended_config_ld(stride, scale) gemmini_extended2_config_ld(stride, scale, false)
#define gemmini_config_ld(stride) gemmini_extended_config_ld(stride, MVIN_SCALE_IDENTITY)

#define gemmini_extended2_config_st(stride, acc_act, acc_scale, pool_stride, pool_size, pool_out_dim, \
                                    porows, pocols, orows, ocols, upad, lpad)                       \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                            \
      ((uint64_t)(uint8_t)(ocols) << 56) | ((uint64_t)(uint8_t)(orows) << 48) |                    \
          ((uint64_t)(uint8_t)(pocols) << 40) | ((uint64_t)(uint8_t)(porows) << 32) |              \
          ((uint64_t)(uint8_t)(pool_out_dim) << 24) | ((uint64_t)((lpad) & 3) << 10) |              \
          ((uint64_t)((upad) & 3) << 8) | ((uint64_t)((pool_size) & 3) << 6) |                      \
          ((uint64_t)((pool_stride) & 3) << 4) | ((uint64_t)((acc_act) & 3) << 2) | CONFIG_ST,     \
      ((uint64_t)acc_scale_t_to_acc_scale_t_bits(acc_scale) << 32) | (uint32_t)(stride), k_CONFIG)

#define gemmini_extended_config_st(stride, acc_act, acc_scale) \
  gemmini_extended2_config_st(stride, acc_act, acc_scale, 0, 0, 0, 0, 0, 0, 0, 0, 0)
#define gemmini_config_st(stride) gemmini_extended_config_st(stride, NO_ACTIVATION, ACC_SCALE_IDENTITY)

/* ---- data movement ------------------------------------------------------------ */
#define gemmini_extended_mvin(dram_addr, spad_addr, cols, rows) \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(dram_addr), GEMMINI_OPERAND(spad_addr, cols, rows), k_MVIN)
#define gemmini_extended_mvin2(dram_addr, spad_addr, cols, rows) \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(dram_addr), GEMMINI_OPERAND(spad_addr, cols, rows), k_MVIN2)
#define gemmini_extended_mvin3(dram_addr, spad_addr, cols, rows) \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(dram_addr), GEMMINI_OPERAND(spad_addr, cols, rows), k_MVIN3)
#define gemmini_mvin(dram_addr, spad_addr) gemmini_extended_mvin(dram_addr, spad_addr, DIM, DIM)
#define gemmini_block_mvin(dram_addr, spad_addr, len) \
  gemmini_extended_mvin(dram_addr, spad_addr, (len) * DIM, DIM)

#define gemmini_extended_mvout(dram_addr, spad_addr, cols, rows) \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(dram_addr), GEMMINI_OPERAND(spad_addr, cols, rows), k_MVOUT)
#define gemmini_mvout(dram_addr, spad_addr) gemmini_extended_mvout(dram_addr, spad_addr, DIM, DIM)

/* ---- compute -------------------------------------------------------------------- */
/* preload: BD is D (bias) in OS or B (weights) in WS; C is the output. */
#define gemmini_extended_preload(BD, C, BD_cols, BD_rows, C_cols, C_rows)                      \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, GEMMINI_OPERAND(BD, BD_cols, BD_rows),                 \
                           GEMMINI_OPERAND(C, C_cols, C_rows), k_PRELOAD)
#define gemmini_preload(BD, C) gemmini_extended_preload(BD, C, DIM, DIM, DIM, DIM)
#define gemmini_preload_zeros(C) gemmini_preload(GARBAGE_ADDR, C)

#define gemmini_extended_compute_preloaded(A, BD, A_cols, A_rows, BD_cols, BD_rows)            \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, GEMMINI_OPERAND(A, A_cols, A_rows),                    \
                           GEMMINI_OPERAND(BD, BD_cols, BD_rows), k_COMPUTE_PRELOADED)
#define gemmini_extended_compute_accumulated(A, BD, A_cols, A_rows, BD_cols, BD_rows)          \
  ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, GEMMINI_OPERAND(A, A_cols, A_rows),                    \
                           GEMMINI_OPERAND(BD, BD_cols, BD_rows), k_COMPUTE_ACCUMULATE)
#define gemmini_compute_preloaded(A, BD) gemmini_extended_compute_preloaded(A, BD, DIM, DIM, DIM, DIM)
#define gemmini_compute_accumulated(A, BD) gemmini_extended_compute_accumulated(A, BD, DIM, DIM, DIM, DIM)

#define gemmini_flush(skip) ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, skip, 0, k_FLUSH)

/* ---- hardware loops ------------------------------------------------------------ */
/* C = A·B + D over I×J×K blocks of DIM×DIM; addresses 0 skip a load/store. */
#define gemmini_loop_ws(I, J, K, pad_I, pad_J, pad_K, A, B, D, C, A_stride, B_stride, D_stride,     \
                        C_stride, A_transpose, B_transpose, full_C, low_D, ex_accumulate, act,      \
                        a_spad_id, b_spad_id, is_resadd)                                           \
  do {                                                                                            \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                         \
        ((uint64_t)(uint16_t)(pad_K) << 32) | ((uint64_t)(uint16_t)(pad_J) << 16) | (uint16_t)(pad_I), \
        ((uint64_t)(uint16_t)(K) << 32) | ((uint64_t)(uint16_t)(J) << 16) | (uint16_t)(I),        \
        k_LOOP_WS_CONFIG_BOUNDS);                                                                 \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(A), (uintptr_t)(B), k_LOOP_WS_CONFIG_ADDRS_AB); \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(D), (uintptr_t)(C), k_LOOP_WS_CONFIG_ADDRS_DC); \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, A_stride, B_stride, k_LOOP_WS_CONFIG_STRIDES_AB);      \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, D_stride, C_stride, k_LOOP_WS_CONFIG_STRIDES_DC);      \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                         \
        ((uint64_t)((a_spad_id) & 3) << 18) | ((uint64_t)((b_spad_id) & 3) << 16) |              \
            ((uint64_t)((act) & 7) << 8) | ((uint64_t)((low_D) ? 1 : 0) << 2) |                  \
            ((uint64_t)((full_C) ? 1 : 0) << 1) | ((ex_accumulate) ? 1 : 0),                     \
        ((uint64_t)((is_resadd) ? 1 : 0) << 2) | ((uint64_t)((B_transpose) ? 1 : 0) << 1) |      \
            ((A_transpose) ? 1 : 0),                                                             \
        k_LOOP_WS);                                                                               \
  } while (0)

/* Weight-stationary convolution over one output tile (rectangular-image
 * layout; strides in elements). */
#define gemmini_loop_conv_ws(batch_size, in_row_dim, in_col_dim, in_channels, out_channels,          \
                             out_row_dim, out_col_dim, pool_out_row_dim, pool_out_col_dim, stride,    \
                             padding, kernel_dim, kernel_dilation, pool_size, pool_stride,            \
                             pool_padding, batches, porows, pocols, pochs, krows, kcols, kchs, lpad,  \
                             rpad, upad, dpad, plpad, prpad, pupad, pdpad, orows, ocols, weights,     \
                             output, bias, input, no_bias, no_pool, downsample, wrot180,              \
                             input_dilated, activation, trans_output_1203, trans_weight_1203,         \
                             trans_weight_0132, trans_input_3120, max_pixels_per_row, in_stride,      \
                             weight_stride, out_stride, dw, a_spad_id, b_spad_id)                     \
  do {                                                                                               \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                            \
        ((uint64_t)(uint16_t)(out_channels) << 48) | ((uint64_t)(uint16_t)(in_channels) << 32) |    \
            ((uint64_t)(uint16_t)(in_row_dim) << 16) | (uint16_t)(batch_size),                      \
        ((uint64_t)(uint8_t)(padding) << 56) | ((uint64_t)(uint8_t)(stride) << 48) |                \
            ((uint64_t)(uint16_t)(out_col_dim) << 32) | ((uint64_t)(uint16_t)(pool_out_row_dim) << 16) | \
            (uint16_t)(out_row_dim),                                                                 \
        k_LOOP_CONV_WS_CONFIG_1);                                                                    \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                            \
        ((uint64_t)(uint16_t)(kernel_dim) << 48) | ((uint64_t)(uint16_t)(pool_out_col_dim) << 32) | \
            ((uint64_t)(uint16_t)(pool_size) << 16) | ((uint64_t)(uint8_t)(pool_stride) << 8) |     \
            (uint8_t)(pool_padding),                                                                 \
        ((uint64_t)(uint16_t)(batches) << 48) | ((uint64_t)(uint16_t)(porows) << 32) |              \
            ((uint64_t)(uint16_t)(pocols) << 16) | (uint16_t)(pochs),                               \
        k_LOOP_CONV_WS_CONFIG_2);                                                                    \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                            \
        ((uint64_t)(uint16_t)(krows) << 48) | ((uint64_t)(uint16_t)(kcols) << 32) |                 \
            ((uint64_t)(uint16_t)(kchs) << 16) | (uint16_t)(lpad),                                  \
        ((uint64_t)(uint16_t)(rpad) << 48) | ((uint64_t)(uint16_t)(upad) << 32) |                   \
            ((uint64_t)(uint8_t)(dpad) << 24) | ((uint64_t)(uint8_t)(plpad) << 16) |                \
            (uint16_t)(in_col_dim),                                                                  \
        k_LOOP_CONV_WS_CONFIG_3);                                                                    \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                            \
        ((uint64_t)(uint16_t)(orows) << 48) | ((uint64_t)(uint16_t)(prpad) << 32) |                 \
            ((uint64_t)((pupad) & 0x7ff) << 21) | ((uint64_t)((pdpad) & 0x7ff) << 10) |             \
            ((kernel_dilation) & 0x3ff),                                                             \
        ((uint64_t)(uint16_t)(in_stride) << 48) | ((uint64_t)(uint16_t)(weight_stride) << 32) |      \
            ((uint64_t)(uint16_t)(out_stride) << 16) | (uint16_t)(ocols),                           \
        k_LOOP_CONV_WS_CONFIG_4);                                                                    \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(weights), (uintptr_t)(output),                 \
                             k_LOOP_CONV_WS_CONFIG_5);                                               \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC, (uintptr_t)(bias), (uintptr_t)(input),                     \
                             k_LOOP_CONV_WS_CONFIG_6);                                               \
    ROCC_INSTRUCTION_RS1_RS2(XCUSTOM_ACC,                                                            \
        ((uint64_t)((a_spad_id) & 3) << 18) | ((uint64_t)((b_spad_id) & 3) << 16) |                 \
            ((uint64_t)(uint8_t)(max_pixels_per_row) << 8) | ((uint64_t)((dw) ? 1 : 0) << 6) |      \
            ((uint64_t)((trans_input_3120) ? 1 : 0) << 5) |                                         \
            ((uint64_t)((trans_weight_0132) ? 1 : 0) << 4) |                                        \
            ((uint64_t)((trans_weight_1203) ? 1 : 0) << 3) |                                        \
            ((uint64_t)((trans_output_1203) ? 1 : 0) << 2) | ((uint64_t)((wrot180) ? 1 : 0) << 1) | \
            ((no_bias) ? 1 : 0),                                                                     \
        ((uint64_t)((activation) & 3) << 3) | ((uint64_t)((input_dilated) ? 1 : 0) << 2) |          \
            ((uint64_t)((downsample) ? 1 : 0) << 1) | ((no_pool) ? 1 : 0),                          \
        k_LOOP_CONV_WS);                                                                             \
  } while (0)

/* ---- performance counters ------------------------------------------------------- */
#define NUM_COUNTERS 8

#define gemmini_counter_access(rd, config_reg) \
  do { uint64_t _unused = 0; ROCC_INSTRUCTION(XCUSTOM_ACC, rd, config_reg, _unused, k_COUNTER); } while (0)

/* rs1 of the counter op: [0] reset all, [1] reset snapshot, [2] take
 * snapshot, [3] change config, [6:4] counter index, [17:12] event id,
 * [31] external counter. */
static inline uint32_t counter_read(size_t index)
{
  uint64_t value;
  uint64_t rs1 = (uint64_t)(index & 7) << 4;
  gemmini_counter_access(value, rs1);
  return (uint32_t)value;
}

static inline void counter_configure(size_t index, size_t event_id)
{
  uint64_t unused;
  uint64_t external = event_id > 44;
  uint64_t id = external ? event_id - 44 : event_id;
  uint64_t rs1 = (external << 31) | ((id & 0x3f) << 12) | ((uint64_t)(index & 7) << 4) | (1u << 3);
  gemmini_counter_access(unused, rs1);
  (void)unused;
}

static inline void counter_reset(void)
{
  uint64_t unused;
  gemmini_counter_access(unused, 1);
  (void)unused;
}

static inline void counter_snapshot_take(void)
{
  uint64_t unused;
  gemmini_counter_access(unused, 1u << 2);
  (void)unused;
}

static inline void counter_snapshot_reset(void)
{
  uint64_t unused;
  gemmini_counter_access(unused, 1u << 1);
  (void)unused;
}

#endif
