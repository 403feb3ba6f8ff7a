/* mvin/mvout round trips: scratchpad (block mvin), accumulator (int32 in,
 * raw int32 out, accumulate-on-write), zero fill (DRAM address 0) and row
 * replication (DRAM stride 0). */
#include "common.h"

#define BLOCKS (MAX_BLOCK_LEN < 2 ? MAX_BLOCK_LEN : 2)
#define COLS (BLOCKS * DIM)

static elem_t in[DIM][COLS] row_align(1);
static elem_t out[DIM][COLS] row_align(1);
static elem_t zeros_out[DIM][DIM] row_align(1);
static elem_t one_row[DIM] row_align(1);
static elem_t repeated[DIM][DIM] row_align(1);
static acc_t acc_in[DIM][DIM] row_align_acc(1);
static acc_t acc_out[DIM][DIM] row_align_acc(1);

int main(void)
{
  int bad = 0;
  fill_i8(&in[0][0], DIM * COLS, -128, 127);
  fill_i8(one_row, DIM, -128, 127);
  fill_i32(&acc_in[0][0], DIM * DIM, -100000, 100000);
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++)
      zeros_out[i][j] = 55;

  /* One block mvin of BLOCKS DIM-wide column blocks (block stride DIM rows),
   * then one mvout per block. */
  gemmini_config_ld(COLS * sizeof(elem_t));
  gemmini_config_st(COLS * sizeof(elem_t));
  gemmini_block_mvin(in, 0, BLOCKS);
  for (int b = 0; b < BLOCKS; b++)
    gemmini_extended_mvout(&out[0][b * DIM], b * DIM, DIM, DIM);

  /* DRAM address 0 fills rows with zeros. */
  gemmini_config_st(DIM * sizeof(elem_t));
  gemmini_extended_mvin(0, 4 * DIM, DIM, DIM);
  gemmini_extended_mvout(zeros_out, 4 * DIM, DIM, DIM);

  /* DRAM stride 0 repeats one row into every row. */
  gemmini_config_ld(0);
  gemmini_extended_mvin(one_row, 5 * DIM, DIM, DIM);
  gemmini_extended_mvout(repeated, 5 * DIM, DIM, DIM);
  gemmini_fence();

  bad |= check_i8("spad round trip", &out[0][0], &in[0][0], DIM * COLS);
  for (int i = 0; i < DIM; i++) {
    for (int j = 0; j < DIM; j++) {
      if (zeros_out[i][j] != 0) {
        printf("zero fill: element (%d,%d) = %d\n", i, j, zeros_out[i][j]);
        bad = 1;
      }
    }
    bad |= check_i8("stride-0 repeat", repeated[i], one_row, DIM);
  }

#ifdef ACC_READ_FULL_WIDTH
  /* int32 into the accumulator, twice with accumulate: raw read gives 2x. */
  gemmini_config_ld(DIM * sizeof(acc_t));
  gemmini_config_st(DIM * sizeof(acc_t));
  gemmini_extended_mvin(acc_in, ACC_ADDR_BIT, DIM, DIM);
  gemmini_extended_mvout(acc_out, ACC_ADDR_BIT | ACC_READ_FULL_BIT, DIM, DIM);
  gemmini_fence();
  bad |= check_i32("acc round trip", &acc_out[0][0], &acc_in[0][0], DIM * DIM);

  gemmini_extended_mvin(acc_in, ACC_ADDR_BIT | ACC_ACCUMULATE_BIT, DIM, DIM);
  gemmini_extended_mvout(acc_out, ACC_ADDR_BIT | ACC_READ_FULL_BIT, DIM, DIM);
  gemmini_fence();
  for (int i = 0; i < DIM; i++)
    for (int j = 0; j < DIM; j++)
      acc_in[i][j] *= 2;
  bad |= check_i32("acc accumulate", &acc_out[0][0], &acc_in[0][0], DIM * DIM);
#endif

  if (!bad)
    printf("mvin_mvout: PASS (DIM=%d, %d-block mvin)\n", DIM, BLOCKS);
  return bad;
}
