/* Gemmini's own C library (gemmini-rocc-tests' include/gemmini.h) built
 * against an emitted gemmini_params.h: tiled_matmul_auto (WS and OS, bias,
 * scale, ReLU), tiled_conv_auto (padding, stride, ReLU and the max-pooling
 * epilogue) and tiled_resadd_auto run on the ragged case data that
 * tests/test_emitted_header.py writes into library_case.h, and each output is
 * compared element by element with numpy's reference of Gemmini's arithmetic
 * stored beside it. Exit 0 iff every output is bit-exact. */
#include <stdio.h>
#include <stdlib.h>

#include "include/gemmini.h"
#include "library_case.h"

static elem_t mm_out[MM_I][MM_J] row_align(1);
static elem_t cv_out[CV_N][CV_POOL_OH][CV_POOL_OW][CV_OC] row_align(1);
static elem_t ra_out[RA_I][RA_J] row_align(1);

static int differs(const char *what, const elem_t *got, const elem_t *want, int n)
{
  int bad = 0, first = -1;
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) {
      if (first < 0)
        first = i;
      bad++;
    }
  if (bad)
    printf("%s: %d of %d elements differ; first at %d: %d, expected %d\n", what, bad, n, first,
           got[first], want[first]);
  else
    printf("%s: bit-exact, %d elements\n", what, n);
  return bad != 0;
}

static int matmul(enum tiled_matmul_type_t dataflow, const char *what)
{
  for (int i = 0; i < MM_I; i++)
    for (int j = 0; j < MM_J; j++)
      mm_out[i][j] = 0;
  tiled_matmul_auto(MM_I, MM_J, MM_K, &mm_A[0][0], &mm_B[0][0], mm_bias, &mm_out[0][0],
                    MM_K, MM_J, MM_J, MM_J,
                    MVIN_SCALE_IDENTITY, MVIN_SCALE_IDENTITY, MVIN_SCALE_IDENTITY,
                    MM_ACT, MM_SCALE, 0, true,
                    false, false, false, false, 0, dataflow);
  gemmini_fence();
  return differs(what, &mm_out[0][0], &mm_want[0][0], MM_I * MM_J);
}

int main(void)
{
  int failed = 0;
  gemmini_flush(0);

  failed |= matmul(WS, "tiled_matmul_auto WS");
  failed |= matmul(OS, "tiled_matmul_auto OS");

  tiled_conv_auto(CV_N, CV_H, CV_W, CV_IC, CV_OC, CV_OH, CV_OW,
                  CV_STRIDE, 1, 1, CV_PAD, CV_K,
                  false, false, false, false, false,
                  &cv_in[0][0][0][0], &cv_w[0][0], cv_bias, &cv_out[0][0][0][0],
                  CV_ACT, CV_SCALE, CV_POOL, CV_POOL_STRIDE, CV_POOL_PAD, WS);
  gemmini_fence();
  failed |= differs("tiled_conv_auto + pool", &cv_out[0][0][0][0], &cv_want[0][0][0][0],
                    CV_N * CV_POOL_OH * CV_POOL_OW * CV_OC);

  tiled_resadd_auto(RA_I, RA_J, RA_A_SCALE, RA_B_SCALE, RA_C_SCALE,
                    &ra_A[0][0], &ra_B[0][0], &ra_out[0][0], RA_RELU, WS);
  gemmini_fence();
  failed |= differs("tiled_resadd_auto", &ra_out[0][0], &ra_want[0][0], RA_I * RA_J);

  return failed;
}
