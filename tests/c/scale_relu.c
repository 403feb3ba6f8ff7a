/* Scaling and activation paths: mvin scale (float32, round half to even,
 * int8 saturation), the accumulator mvout scale with ReLU (RTL order:
 * activation, scale, saturate), and ReLU on results the array writes to the
 * scratchpad (config_ex activation). */
#include "common.h"

static elem_t X[DIM][DIM] row_align(1);
static elem_t X_scaled[DIM][DIM] row_align(1);
static acc_t acc[DIM][DIM] row_align_acc(1);
static elem_t acc_out[DIM][DIM] row_align(1);
static elem_t W[DIM][DIM] row_align(1);
static elem_t relu_out[DIM][DIM] row_align(1);
static elem_t ref[DIM][DIM];
static acc_t sum[DIM][DIM];

int main(void)
{
  int bad = 0;
  fill_i8(&X[0][0], DIM * DIM, -128, 127);
  fill_i8(&W[0][0], DIM * DIM, -128, 127);
  fill_i32(&acc[0][0], DIM * DIM, -2000, 2000);
  acc[0][0] = 5;   /* 5 * 0.5 = 2.5 -> 2 (ties to even) */
  acc[0][1] = 7;   /* 3.5 -> 4 */
  acc[0][2] = -3;  /* ReLU first: 0 */

  /* mvin with scale 1.5: products like 2.5, -0.5 round to even; large ones saturate */
  gemmini_extended3_config_ld(DIM * sizeof(elem_t), 1.5f, false, 0);
  gemmini_extended_mvin(X, 0, DIM, DIM);
  gemmini_config_st(DIM * sizeof(elem_t));
  gemmini_extended_mvout(X_scaled, 0, DIM, DIM);
  gemmini_fence();
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++)
      ref[i][j] = (elem_t)MVIN_SCALE(X[i][j], 1.5f);
  bad |= check_i8("mvin scale", &X_scaled[0][0], &ref[0][0], DIM * DIM);

  /* accumulator -> int8 with ReLU and scale 0.5 */
  gemmini_extended3_config_ld(DIM * sizeof(acc_t), MVIN_SCALE_IDENTITY, false, 0);
  gemmini_extended_mvin(acc, ACC_ADDR_BIT, DIM, DIM);
  gemmini_extended_config_st(DIM * sizeof(elem_t), RELU, 0.5f);
  gemmini_extended_mvout(acc_out, ACC_ADDR_BIT, DIM, DIM);
  gemmini_fence();
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++)
      ref[i][j] = acc_to_i8(acc[i][j], 0.5f, 1);
  bad |= check_i8("mvout scale+relu", &acc_out[0][0], &ref[0][0], DIM * DIM);

  /* WS matmul written straight to the scratchpad: saturate, then ReLU */
  gemmini_extended3_config_ld(DIM * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 0);
  gemmini_extended_mvin(X, 0, DIM, DIM);
  gemmini_extended_mvin(W, DIM, DIM, DIM);
  gemmini_config_ex(WEIGHT_STATIONARY, RELU, 0);
  gemmini_preload(DIM, 2 * DIM);
  gemmini_compute_preloaded(0, GARBAGE_ADDR);
  gemmini_config_st(DIM * sizeof(elem_t));
  gemmini_mvout(relu_out, 2 * DIM);
  gemmini_fence();
  ref_matmul(DIM, DIM, DIM, &X[0][0], DIM, &W[0][0], DIM, NULL, 0, &sum[0][0], DIM);
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++) {
      elem_t v = sat_i8(sum[i][j]);
      ref[i][j] = v < 0 ? 0 : v;
    }
  bad |= check_i8("spad write relu", &relu_out[0][0], &ref[0][0], DIM * DIM);

  if (!bad)
    printf("scale_relu: PASS\n");
  return bad;
}
