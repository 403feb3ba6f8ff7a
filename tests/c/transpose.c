/* Transposed operands: WS with A transposed, WS with B transposed, and OS
 * with A transposed (the combinations the hardware allows); A^T·B and A·B^T
 * are checked against plain C. Results go to the accumulator as int32. */
#include "common.h"

static elem_t A[DIM][DIM] row_align(1);
static elem_t B[DIM][DIM] row_align(1);
static elem_t At[DIM][DIM];
static elem_t Bt[DIM][DIM];
static acc_t C[DIM][DIM] row_align_acc(1);
static acc_t ref[DIM][DIM];

static int run_case(const char *what, int dataflow, bool a_t, bool b_t)
{
  gemmini_extended_config_ex(dataflow, NO_ACTIVATION, 0, 1, a_t, b_t);
  if (dataflow == WEIGHT_STATIONARY) {
    gemmini_preload(DIM, ACC_ADDR_BIT);
    gemmini_compute_preloaded(0, GARBAGE_ADDR);
  } else {
    gemmini_preload(GARBAGE_ADDR, ACC_ADDR_BIT);
    gemmini_compute_preloaded(0, DIM);
  }
  gemmini_mvout(C, ACC_ADDR_BIT | ACC_READ_FULL_BIT);
  gemmini_fence();
  ref_matmul(DIM, DIM, DIM, a_t ? &At[0][0] : &A[0][0], DIM, b_t ? &Bt[0][0] : &B[0][0], DIM, NULL, 0,
             &ref[0][0], DIM);
  return check_i32(what, &C[0][0], &ref[0][0], DIM * DIM);
}

int main(void)
{
  fill_i8(&A[0][0], DIM * DIM, -128, 127);
  fill_i8(&B[0][0], DIM * DIM, -64, 63);
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++) {
      At[i][j] = A[j][i];
      Bt[i][j] = B[j][i];
    }
  gemmini_config_ld(DIM * sizeof(elem_t));
  gemmini_config_st(DIM * sizeof(acc_t));
  gemmini_mvin(A, 0);
  gemmini_mvin(B, DIM);

  int bad = run_case("WS A^T", WEIGHT_STATIONARY, true, false);
  bad |= run_case("WS B^T", WEIGHT_STATIONARY, false, true);
  bad |= run_case("OS A^T", OUTPUT_STATIONARY, true, false);
  bad |= run_case("WS plain", WEIGHT_STATIONARY, false, false);
  if (!bad)
    printf("transpose: PASS\n");
  return bad;
}
