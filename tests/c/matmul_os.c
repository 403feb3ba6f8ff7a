/* Output-stationary matmul by hand: the sum over two K blocks stays in the
 * array (compute_preloaded, then compute_accumulated), seeded with an int8
 * bias D preloaded from the scratchpad. Written once to the scratchpad with a
 * rounding in_shift (int8 saturation) and once to the accumulator (raw int32). */
#include "common.h"

#define KB 2
#define K (KB * DIM)
#define SHIFT 3

static elem_t A[DIM][K] row_align(1);
static elem_t B[K][DIM] row_align(1);
static elem_t D[DIM][DIM] row_align(1);
static elem_t C8[DIM][DIM] row_align(1);
static acc_t C32[DIM][DIM] row_align_acc(1);
static acc_t sum[DIM][DIM];
static acc_t bias[DIM][DIM];
static elem_t ref8[DIM][DIM];

/* Run the OS sequence with output C at local address c. */
static void os_matmul(uint32_t a_sp, uint32_t b_sp, uint32_t d_sp, uint32_t c)
{
  for (int k = 0; k < KB; k++) {
    gemmini_preload(k == 0 ? d_sp : GARBAGE_ADDR, k == KB - 1 ? c : GARBAGE_ADDR);
    if (k == 0)
      gemmini_compute_preloaded(a_sp + k * DIM, b_sp + k * DIM);
    else
      gemmini_compute_accumulated(a_sp + k * DIM, b_sp + k * DIM);
  }
}

int main(void)
{
  /* |sums| stay below 2^19: the array's partial sums are 20 bits wide. */
  fill_i8(&A[0][0], DIM * K, -64, 63);
  fill_i8(&B[0][0], K * DIM, -64, 63);
  fill_i8(&D[0][0], DIM * DIM, -128, 127);

  const uint32_t a_sp = 0, b_sp = KB * DIM, d_sp = 2 * KB * DIM, c_sp = d_sp + DIM;
  gemmini_extended3_config_ld(K * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 0);
  gemmini_extended3_config_ld(DIM * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 1);
  for (int k = 0; k < KB; k++) {
    gemmini_extended_mvin(&A[0][k * DIM], a_sp + k * DIM, DIM, DIM);
    gemmini_extended_mvin2(&B[k * DIM][0], b_sp + k * DIM, DIM, DIM);
  }
  gemmini_extended_mvin2(D, d_sp, DIM, DIM);

  /* to the scratchpad: shifted, saturated to int8 */
  gemmini_config_ex(OUTPUT_STATIONARY, NO_ACTIVATION, SHIFT);
  os_matmul(a_sp, b_sp, d_sp, c_sp);
  gemmini_config_st(DIM * sizeof(elem_t));
  gemmini_mvout(C8, c_sp);

  /* to the accumulator: raw sums */
  gemmini_config_ex(OUTPUT_STATIONARY, NO_ACTIVATION, 0);
  os_matmul(a_sp, b_sp, d_sp, ACC_ADDR_BIT);
  gemmini_config_st(DIM * sizeof(acc_t));
  gemmini_mvout(C32, ACC_ADDR_BIT | ACC_READ_FULL_BIT);
  gemmini_fence();

  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++)
      bias[i][j] = D[i][j];
  ref_matmul(DIM, DIM, K, &A[0][0], K, &B[0][0], DIM, &bias[0][0], DIM, &sum[0][0], DIM);
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++)
      ref8[i][j] = sat_i8(round_shift(sum[i][j], SHIFT));

  int bad = check_i8("matmul_os to scratchpad", &C8[0][0], &ref8[0][0], DIM * DIM);
  bad |= check_i32("matmul_os to accumulator", &C32[0][0], &sum[0][0], DIM * DIM);
  if (!bad)
    printf("matmul_os: PASS\n");
  return bad;
}
