/* Tiled matmul through the LOOP_WS hardware loop (gemmini_loop_ws), with the
 * configuration sequence of the C library's tiled_matmul: ragged sizes
 * (padding in every dimension), an int32 bias, ReLU and a scale on the int8
 * output; then the same product without bias stored as int32 (full_C). */
#include "common.h"

#define DIM_I (2 * DIM - 3)
#define DIM_J (DIM + 5 < 2 * DIM ? DIM + 5 : 2 * DIM - 1)
#define DIM_K (2 * DIM + 1)
#define BLOCKS(n) (((n) + DIM - 1) / DIM)
#define PAD(n) (BLOCKS(n) * DIM - (n))
#define SCALE 0.125f

static elem_t A[DIM_I][DIM_K];
static elem_t B[DIM_K][DIM_J];
static acc_t D[DIM_I][DIM_J];
static elem_t C[DIM_I][DIM_J];
static acc_t C32[DIM_I][DIM_J];
static acc_t sum[DIM_I][DIM_J];
static acc_t product[DIM_I][DIM_J];
static elem_t ref[DIM_I][DIM_J];

static void configure(int c_bytes, int act, float scale)
{
  gemmini_extended_config_ex(WEIGHT_STATIONARY, act & 3, 0, 1, false, false);
  gemmini_extended_config_st(DIM_J * c_bytes, act & 3, scale);
  gemmini_extended3_config_ld(DIM_K * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 0);
  gemmini_extended3_config_ld(DIM_J * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 1);
  gemmini_extended3_config_ld(DIM_J * sizeof(acc_t), MVIN_SCALE_IDENTITY, false, 2);
}

int main(void)
{
  fill_i8(&A[0][0], DIM_I * DIM_K, -128, 127);
  fill_i8(&B[0][0], DIM_K * DIM_J, -128, 127);
  fill_i32(&D[0][0], DIM_I * DIM_J, -20000, 20000);

  /* bias in the accumulator first, so the loop accumulates onto it */
  configure(sizeof(elem_t), RELU, SCALE);
  gemmini_loop_ws(BLOCKS(DIM_I), BLOCKS(DIM_J), BLOCKS(DIM_K), PAD(DIM_I), PAD(DIM_J), PAD(DIM_K),
                  A, B, D, C, DIM_K, DIM_J, DIM_J, DIM_J, false, false, false, false, true, RELU,
                  0, 0, false);
  gemmini_fence();

  /* no bias: the first K block overwrites the accumulator; int32 output */
  configure(sizeof(acc_t), NO_ACTIVATION, ACC_SCALE_IDENTITY);
  gemmini_loop_ws(BLOCKS(DIM_I), BLOCKS(DIM_J), BLOCKS(DIM_K), PAD(DIM_I), PAD(DIM_J), PAD(DIM_K),
                  A, B, NULL, C32, DIM_K, DIM_J, DIM_J, DIM_J, false, false, true, false, false,
                  NO_ACTIVATION, 0, 0, false);
  gemmini_fence();

  ref_matmul(DIM_I, DIM_J, DIM_K, &A[0][0], DIM_K, &B[0][0], DIM_J, &D[0][0], DIM_J, &sum[0][0], DIM_J);
  ref_matmul(DIM_I, DIM_J, DIM_K, &A[0][0], DIM_K, &B[0][0], DIM_J, NULL, 0, &product[0][0], DIM_J);
  for (int i = 0; i < DIM_I; i++)
    for (int j = 0; j < DIM_J; j++)
      ref[i][j] = acc_to_i8(sum[i][j], SCALE, 1);

  int bad = check_i8("loop_ws int8 (bias, relu, scale)", &C[0][0], &ref[0][0], DIM_I * DIM_J);
  bad |= check_i32("loop_ws int32 (full_C)", &C32[0][0], &product[0][0], DIM_I * DIM_J);
  if (!bad)
    printf("loop_ws: PASS (%dx%dx%d)\n", DIM_I, DIM_J, DIM_K);
  return bad;
}
