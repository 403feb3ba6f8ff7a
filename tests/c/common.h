/* Reference arithmetic and checks shared by the bare-metal Gemmini test
 * programs. Every program computes its expected results in plain C with
 * these helpers, so a program exits 0 only if Gemmini's results are bit-exact. */
#ifndef BACO_TEST_COMMON_H
#define BACO_TEST_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemmini.h"

static inline void fill_i8(elem_t *p, size_t n, int lo, int hi)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (elem_t)(lo + rand() % (hi - lo + 1));
}

static inline void fill_i32(acc_t *p, size_t n, int lo, int hi)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (acc_t)(lo + rand() % (hi - lo + 1));
}

static inline elem_t sat_i8(long long x) { return (elem_t)GEMMINI_CLAMP(x, elem_t_min, elem_t_max); }

/* mvout of an accumulator value in the RTL order: activation, float32
 * scale rounded to nearest even, saturation to the input type. */
static inline elem_t acc_to_i8(acc_t x, float scale, int relu)
{
  if (relu && x < 0)
    x = 0;
  return (elem_t)ACC_SCALE(x, scale);
}

/* Round-half-even arithmetic shift, as the array applies in_shift in OS. */
static inline long long round_shift(long long x, int shift) { return ROUNDING_RIGHT_SHIFT(x, shift); }

/* out[i][j] = bias[i][j] + sum_k a[i][k] * b[k][j] (row-major, leading dims given). */
static inline void ref_matmul(int I, int J, int K, const elem_t *a, int lda, const elem_t *b, int ldb,
                              const acc_t *bias, int ldbias, acc_t *out, int ldo)
{
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      acc_t s = bias ? bias[i * ldbias + j] : 0;
      for (int k = 0; k < K; k++)
        s += (acc_t)a[i * lda + k] * b[k * ldb + j];
      out[i * ldo + j] = s;
    }
}

static inline int check_i8(const char *what, const elem_t *got, const elem_t *want, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      printf("%s: mismatch at element %lu: got %d, want %d\n", what, (unsigned long)i, got[i], want[i]);
      return 1;
    }
  return 0;
}

static inline int check_i32(const char *what, const acc_t *got, const acc_t *want, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      printf("%s: mismatch at element %lu: got %d, want %d\n", what, (unsigned long)i, got[i], want[i]);
      return 1;
    }
  return 0;
}

#endif
