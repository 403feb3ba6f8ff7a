/* Ragged transposed operands: a transposed operand's rows/cols fields describe it as the
 * array sees it, after the transpose (the RTL's ExecuteController swaps the fields when the
 * transposer is in use; libgemmini masks after transposing). The stored blocks are full of
 * nonzero values, so reading the fields before the transpose gives a different product.
 * Cases: WS A^T, WS B^T, OS A^T, OS A^T with B^T, each with R x Kc times Kc x Cc, R != Kc. */
#include "common.h"

#define R (DIM - 1 > 1 ? DIM - 1 : 1)    /* rows of A and C as fed */
#define KC (DIM / 2 > 1 ? DIM / 2 : 1)  /* inner dimension */
#define CC (DIM - 2 > 1 ? DIM - 2 : 1)  /* columns of B and C */

static elem_t A[DIM][DIM] row_align(1);   /* stored blocks (every element nonzero) */
static elem_t B[DIM][DIM] row_align(1);
static elem_t Af[DIM][DIM];                /* as fed: masked and (un)transposed */
static elem_t Bf[DIM][DIM];
static acc_t C[DIM][DIM] row_align_acc(1);
static acc_t ref[DIM][DIM];

static int run_case(const char *what, int dataflow, bool a_t, bool b_t)
{
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++) {
      Af[i][j] = i < R && j < KC ? (a_t ? A[j][i] : A[i][j]) : 0;
      Bf[i][j] = i < KC && j < CC ? (b_t ? B[j][i] : B[i][j]) : 0;
    }
  gemmini_extended_config_ex(dataflow, NO_ACTIVATION, 0, 1, a_t, b_t);
  if (dataflow == WEIGHT_STATIONARY) {
    gemmini_extended_preload(DIM, ACC_ADDR_BIT, CC, KC, CC, R);
    gemmini_extended_compute_preloaded(0, GARBAGE_ADDR, KC, R, DIM, DIM);
  } else {
    gemmini_extended_preload(GARBAGE_ADDR, ACC_ADDR_BIT, DIM, DIM, CC, R);
    gemmini_extended_compute_preloaded(0, DIM, KC, R, CC, KC);
  }
  gemmini_extended_mvout(C, ACC_ADDR_BIT | ACC_READ_FULL_BIT, CC, R);
  gemmini_fence();
  ref_matmul(R, CC, KC, &Af[0][0], DIM, &Bf[0][0], DIM, NULL, 0, &ref[0][0], DIM);
  int bad = 0;
  for (int i = 0; i < R; i++)
    bad |= check_i32(what, &C[i][0], &ref[i][0], CC);
  return bad;
}

int main(void)
{
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++) {
      A[i][j] = (elem_t)(1 + rand() % 100);
      B[i][j] = (elem_t)(-1 - rand() % 100);
    }
  gemmini_config_ld(DIM * sizeof(elem_t));
  gemmini_config_st(DIM * sizeof(acc_t));
  gemmini_mvin(A, 0);
  gemmini_mvin(B, DIM);

  int bad = run_case("WS A^T", WEIGHT_STATIONARY, true, false);
  bad |= run_case("WS B^T", WEIGHT_STATIONARY, false, true);
  bad |= run_case("OS A^T", OUTPUT_STATIONARY, true, false);
  bad |= run_case("OS A^T B^T", OUTPUT_STATIONARY, true, true);
  bad |= run_case("WS plain", WEIGHT_STATIONARY, false, false);
  if (!bad)
    printf("transpose_ragged: PASS\n");
  return bad;
}
