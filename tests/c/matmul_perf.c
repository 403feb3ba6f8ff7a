/* A program that times itself, in the style of gemmini-rocc-tests'
 * tiled_matmul_ws_perf: a tiled int8 matmul (one LOOP_WS per output tile,
 * as tiled_matmul_auto issues them) between two rdcycle reads and with the
 * performance counters configured around it. It prints the cycles taken,
 * the array's utilization and the counter values, checks the result
 * bit-exact against plain C, and checks what the counters must say:
 * zero right after configuring, bytes moved at least the operands' size,
 * the bytes written exactly the output's. */
#include "common.h"
#include "gemmini_counter.h"
#include "util.h"

#define MAT_I (4 * DIM)
#define MAT_J (4 * DIM)
#define MAT_K (4 * DIM)
#define TILE_I (2 * DIM)
#define TILE_J (2 * DIM)

static elem_t A[MAT_I][MAT_K];
static elem_t B[MAT_K][MAT_J];
static acc_t D[MAT_I][MAT_J];
static elem_t C[MAT_I][MAT_J];
static acc_t sum[MAT_I][MAT_J];
static elem_t ref[MAT_I][MAT_J];

static const int events[NUM_COUNTERS] = {
  LOAD_ACTIVE_CYCLE, EXE_ACTIVE_CYCLE, STORE_ACTIVE_CYCLE, RDMA_BYTES_REC,
  WDMA_BYTES_SENT, LOOP_MATMUL_ACTIVE_CYCLES, MAIN_LD_ST_EX_CYCLES, RESERVATION_STATION_FULL_CYCLES};
static const char *names[NUM_COUNTERS] = {
  "LOAD_ACTIVE_CYCLE", "EXE_ACTIVE_CYCLE", "STORE_ACTIVE_CYCLE", "RDMA_BYTES_REC",
  "WDMA_BYTES_SENT", "LOOP_MATMUL_ACTIVE_CYCLES", "MAIN_LD_ST_EX_CYCLES", "RESERVATION_STATION_FULL_CYCLES"};

int main(void)
{
  fill_i8(&A[0][0], MAT_I * MAT_K, -128, 127);
  fill_i8(&B[0][0], MAT_K * MAT_J, -128, 127);
  fill_i32(&D[0][0], MAT_I * MAT_J, -2000, 2000);

  int bad = 0;
  counter_reset();
  for (int c = 0; c < NUM_COUNTERS; c++) {
    counter_configure(c, events[c]);
    if (counter_read(c) != 0) {
      printf("counter %d (%s) reads %u right after configuring\n", c, names[c], counter_read(c));
      bad = 1;
    }
  }

  uint64_t start = rdcycle();
  gemmini_extended_config_ex(WEIGHT_STATIONARY, NO_ACTIVATION, 0, 1, false, false);
  gemmini_extended_config_st(MAT_J * sizeof(elem_t), NO_ACTIVATION, ACC_SCALE_IDENTITY);
  gemmini_extended3_config_ld(MAT_K * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 0);
  gemmini_extended3_config_ld(MAT_J * sizeof(elem_t), MVIN_SCALE_IDENTITY, false, 1);
  gemmini_extended3_config_ld(MAT_J * sizeof(acc_t), MVIN_SCALE_IDENTITY, false, 2);
  for (int i0 = 0; i0 < MAT_I; i0 += TILE_I)
    for (int j0 = 0; j0 < MAT_J; j0 += TILE_J)
      gemmini_loop_ws(TILE_I / DIM, TILE_J / DIM, MAT_K / DIM, 0, 0, 0,
                      &A[i0][0], &B[0][j0], &D[i0][j0], &C[i0][j0], MAT_K, MAT_J, MAT_J, MAT_J,
                      false, false, false, false, true, NO_ACTIVATION, 0, 0, false);
  gemmini_fence();
  uint64_t end = rdcycle();

  uint32_t value[NUM_COUNTERS];
  for (int c = 0; c < NUM_COUNTERS; c++)
    value[c] = counter_read(c);

  const uint64_t total_macs = (uint64_t)MAT_I * MAT_J * MAT_K;
  const uint64_t ideal_cycles = total_macs / (DIM * DIM);
  printf("I: %d, J: %d, K: %d\n", MAT_I, MAT_J, MAT_K);
  printf("Cycles taken: %lu\n", (unsigned long)(end - start));
  printf("Total macs: %lu\n", (unsigned long)total_macs);
  printf("Ideal cycles: %lu\n", (unsigned long)ideal_cycles);
  printf("Utilization: %lu%%\n", (unsigned long)(100 * ideal_cycles / (end - start)));
  for (int c = 0; c < NUM_COUNTERS; c++)
    printf("%s: %u\n", names[c], value[c]);

  ref_matmul(MAT_I, MAT_J, MAT_K, &A[0][0], MAT_K, &B[0][0], MAT_J, &D[0][0], MAT_J, &sum[0][0], MAT_J);
  for (int i = 0; i < MAT_I; i++)
    for (int j = 0; j < MAT_J; j++)
      ref[i][j] = acc_to_i8(sum[i][j], 1.0f, 0);
  bad |= check_i8("matmul_perf", &C[0][0], &ref[0][0], MAT_I * MAT_J);

  const uint32_t operand_bytes = MAT_I * MAT_K + MAT_K * MAT_J + MAT_I * MAT_J * sizeof(acc_t);
  if (value[3] < operand_bytes) {
    printf("RDMA_BYTES_REC %u < the operands' %u bytes\n", value[3], operand_bytes);
    bad = 1;
  }
  if (value[4] != MAT_I * MAT_J * sizeof(elem_t)) {
    printf("WDMA_BYTES_SENT %u != the output's %u bytes\n", value[4], (unsigned)(MAT_I * MAT_J));
    bad = 1;
  }
  if (value[1] < ideal_cycles || end - start < ideal_cycles) {
    printf("execute busy %u or cycles %lu below the ideal %lu\n", value[1], (unsigned long)(end - start),
           (unsigned long)ideal_cycles);
    bad = 1;
  }
  if (!bad)
    printf("matmul_perf: PASS\n");
  return bad;
}
