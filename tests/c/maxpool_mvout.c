/* Max pooling on mvout: an 8x8 image of DIM channels sits in the accumulator
 * (one pixel per row); a pooled mvout writes the 2x2/stride-2 max pool of the
 * scaled int8 values, then a 3x3/stride-2 pool with one row and column of
 * zero padding. */
#include "common.h"

#define IMG 8
#define SCALE 0.5f

static acc_t image[IMG * IMG][DIM] row_align_acc(1);
static elem_t pooled[IMG * IMG][DIM];
static elem_t ref[IMG * IMG][DIM];

/* pool_out_dim x pool_out_dim pooled pixels of `size`/`stride`/`pad`. */
static void ref_pool(int size, int stride, int pad, int out_dim)
{
  for (int pr = 0; pr < out_dim; pr++)
    for (int pc = 0; pc < out_dim; pc++)
      for (int ch = 0; ch < DIM; ch++) {
        elem_t best = elem_t_min;
        for (int wr = 0; wr < size; wr++)
          for (int wc = 0; wc < size; wc++) {
            int r = pr * stride + wr - pad, c = pc * stride + wc - pad;
            elem_t v = 0;  /* the padding reads as zero */
            if (r >= 0 && c >= 0 && r < IMG && c < IMG)
              v = acc_to_i8(image[r * IMG + c][ch], SCALE, 0);
            if (v > best)
              best = v;
          }
        ref[pr * out_dim + pc][ch] = best;
      }
}

static int pool_case(int size, int stride, int pad)
{
  const int out_dim = (IMG + 2 * pad - size) / stride + 1;
  for (int i = 0; i < IMG * IMG; i++)
    for (int j = 0; j < DIM; j++)
      pooled[i][j] = 99;
  gemmini_extended2_config_st(DIM * sizeof(elem_t), NO_ACTIVATION, SCALE, stride, size, out_dim, out_dim,
                              out_dim, IMG, IMG, pad, pad);
  gemmini_extended_mvout(pooled, ACC_ADDR_BIT, DIM, 0);
  gemmini_fence();
  ref_pool(size, stride, pad, out_dim);
  char what[48];
  snprintf(what, sizeof(what), "max pool %dx%d stride %d pad %d", size, size, stride, pad);
  return check_i8(what, &pooled[0][0], &ref[0][0], (size_t)out_dim * out_dim * DIM);
}

int main(void)
{
  fill_i32(&image[0][0], IMG * IMG * DIM, -300, 300);
  gemmini_config_ld(DIM * sizeof(acc_t));
  for (int row = 0; row < IMG * IMG; row += DIM)
    gemmini_extended_mvin(image[row], ACC_ADDR_BIT | row, DIM, DIM);

  int bad = pool_case(2, 2, 0);
  bad |= pool_case(3, 2, 1);
  gemmini_config_st(DIM);  /* pooling off again */
  if (!bad)
    printf("maxpool_mvout: PASS\n");
  return bad;
}
