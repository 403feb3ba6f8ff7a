/* Residual add through LOOP_WS's is_resadd mode, configured as the C
 * library's tiled_resadd does: A and B int8 in DRAM, moved into the
 * accumulator with their mvin scales (A overwrites, B accumulates), then
 * C = ReLU(A' + B') scaled to int8 by the mvout; ragged I and J (pads). */
#include "common.h"

#define MAT_I (2 * DIM + 3)
#define MAT_J (3 * DIM - 1)
#define BLOCKS(n) (((n) + DIM - 1) / DIM)
#define A_SCALE 0.5f
#define B_SCALE 1.5f
#define C_SCALE 0.75f

static elem_t A[MAT_I][MAT_J];
static elem_t B[MAT_I][MAT_J];
static elem_t C[MAT_I][MAT_J];
static elem_t ref[MAT_I][MAT_J];

int main(void)
{
  fill_i8(&A[0][0], MAT_I * MAT_J, -128, 127);
  fill_i8(&B[0][0], MAT_I * MAT_J, -128, 127);

  gemmini_extended_config_st(MAT_J * sizeof(elem_t), RELU, C_SCALE);
  gemmini_extended_config_ex(WEIGHT_STATIONARY, NO_ACTIVATION, 0, 1, false, false);
  gemmini_extended3_config_ld(MAT_J * sizeof(elem_t), A_SCALE, true, 0);
  gemmini_extended3_config_ld(MAT_J * sizeof(elem_t), B_SCALE, true, 1);
  gemmini_loop_ws(BLOCKS(MAT_I), BLOCKS(MAT_J), 1, BLOCKS(MAT_I) * DIM - MAT_I, BLOCKS(MAT_J) * DIM - MAT_J, 0,
                  A, B, NULL, C, MAT_J, MAT_J, MAT_J, MAT_J, false, false, false, false, false, RELU, 0, 0, true);
  gemmini_fence();

  for (int i = 0; i < MAT_I; i++)
    for (int j = 0; j < MAT_J; j++)
      ref[i][j] = acc_to_i8((acc_t)MVIN_SCALE(A[i][j], A_SCALE) + (acc_t)MVIN_SCALE(B[i][j], B_SCALE), C_SCALE, 1);
  int bad = check_i8("resadd", &C[0][0], &ref[0][0], MAT_I * MAT_J);
  if (!bad)
    printf("resadd: PASS (%dx%d)\n", MAT_I, MAT_J);
  return bad;
}
