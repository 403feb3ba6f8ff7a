/* Helpers shared by bare-metal test programs (riscv-tests style). */
#ifndef BACO_UTIL_H
#define BACO_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define read_csr(reg) ({ unsigned long __v; asm volatile ("csrr %0, " #reg : "=r"(__v)); __v; })

static inline uint64_t rdcycle(void) { return read_csr(mcycle); }
static inline uint64_t rdinstret(void) { return read_csr(minstret); }

/* Compare n words and report the first mismatch; returns 0 when equal. */
#define DEFINE_VERIFY(name, type, fmt)                                             \
  static inline int name(const char *what, size_t n, const type *got, const type *want) { \
    for (size_t i = 0; i < n; i++)                                                 \
      if (got[i] != want[i]) {                                                     \
        printf("%s: mismatch at %lu: got " fmt ", want " fmt "\n", what,           \
               (unsigned long)i, got[i], want[i]);                                 \
        return 1;                                                                  \
      }                                                                            \
    return 0;                                                                      \
  }

DEFINE_VERIFY(verify_i8, int8_t, "%d")
DEFINE_VERIFY(verify_i32, int32_t, "%d")
DEFINE_VERIFY(verify_i64, int64_t, "%ld")

/* Deterministic pseudo-random int8 in [lo, hi]. */
static inline int8_t rand_i8(int lo, int hi) { return (int8_t)(lo + rand() % (hi - lo + 1)); }

#endif
