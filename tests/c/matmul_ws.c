/* Weight-stationary matmul by hand: C = A·B + D over two K blocks, bias D
 * moved into the accumulator, partial sums accumulated there, and the result
 * moved out scaled to int8. Prints the first output row. */
#include "common.h"

#define KB 2
#define K (KB * DIM)
#define SCALE 0.0625f

static elem_t A[DIM][K] row_align(1);
static elem_t B[K][DIM] row_align(1);
static acc_t D[DIM][DIM] row_align_acc(1);
static elem_t C[DIM][DIM] row_align(1);
static acc_t ref_acc[DIM][DIM];
static elem_t ref[DIM][DIM];

int main(void)
{
  fill_i8(&A[0][0], DIM * K, -128, 127);
  fill_i8(&B[0][0], K * DIM, -128, 127);
  fill_i32(&D[0][0], DIM * DIM, -5000, 5000);

  const uint32_t a_sp = 0, b_sp = KB * DIM, c_acc = ACC_ADDR_BIT;
  gemmini_config_ex(WEIGHT_STATIONARY, NO_ACTIVATION, 0);
  gemmini_extended3_config_ld(K * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 0);
  gemmini_extended3_config_ld(DIM * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 1);
  gemmini_extended3_config_ld(DIM * sizeof(acc_t), MVIN_SCALE_IDENTITY, false, 2);
  gemmini_extended_config_st(DIM * sizeof(elem_t), NO_ACTIVATION, SCALE);

  for (int k = 0; k < KB; k++) {
    gemmini_extended_mvin(&A[0][k * DIM], a_sp + k * DIM, DIM, DIM);
    gemmini_extended_mvin2(&B[k * DIM][0], b_sp + k * DIM, DIM, DIM);
  }
  gemmini_extended_mvin3(D, c_acc, DIM, DIM);
  for (int k = 0; k < KB; k++) {
    gemmini_preload(b_sp + k * DIM, c_acc | ACC_ACCUMULATE_BIT);
    gemmini_compute_preloaded(a_sp + k * DIM, GARBAGE_ADDR);
  }
  gemmini_mvout(C, c_acc);
  gemmini_fence();

  ref_matmul(DIM, DIM, K, &A[0][0], K, &B[0][0], DIM, &D[0][0], DIM, &ref_acc[0][0], DIM);
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++)
      ref[i][j] = acc_to_i8(ref_acc[i][j], SCALE, 0);

  printf("C[0] =");
  for (int j = 0; j < DIM; j++)
    printf(" %d", C[0][j]);
  printf("\n");
  int bad = check_i8("matmul_ws", &C[0][0], &ref[0][0], DIM * DIM);
  if (!bad)
    printf("matmul_ws: PASS (DIM=%d, K=%d)\n", DIM, K);
  return bad;
}
