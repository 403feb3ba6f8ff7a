/* RoCC custom instructions, under the name and path gemmini-rocc-tests'
 * include/gemmini.h includes them from ("rocc-software/src/xcustom.h"), so
 * Gemmini's own C library builds with `-I toolchain` beside an emitted
 * gemmini_params.h; baco's include/gemmini.h uses the same macros.
 *
 * `.insn r CUSTOM_<x>, funct3, funct7, rd, rs1, rs2`: funct3 bits are
 * xd/xs1/xs2, so 3 reads rs1 and rs2 and writes no register, 7 also writes rd.
 * The memory clobber keeps the compiler from moving the program's loads and
 * stores across commands that read or write them. */
#ifndef BACO_XCUSTOM_H
#define BACO_XCUSTOM_H

#include <stdint.h>

/* Expression forms, for macros that expand to one statement. */
#define ROCC_ASM_0_R_R(x, rs1, rs2, funct)                                        \
  asm volatile(".insn r CUSTOM_%2, 3, %3, x0, %0, %1"                            \
               :                                                                \
               : "r"((uint64_t)(rs1)), "r"((uint64_t)(rs2)), "i"(x), "i"(funct) \
               : "memory")
#define ROCC_ASM_R_R_R(x, rd, rs1, rs2, funct)                                    \
  asm volatile(".insn r CUSTOM_%3, 7, %4, %0, %1, %2"                            \
               : "=r"(rd)                                                       \
               : "r"((uint64_t)(rs1)), "r"((uint64_t)(rs2)), "i"(x), "i"(funct) \
               : "memory")

/* The upstream names are blocks: Gemmini's library writes
 * `{ ...; ROCC_INSTRUCTION(...) }` without a semicolon. */
#define ROCC_INSTRUCTION_0_R_R(x, rs1, rs2, funct) { ROCC_ASM_0_R_R(x, rs1, rs2, funct); }
#define ROCC_INSTRUCTION(x, rd, rs1, rs2, funct) { ROCC_ASM_R_R_R(x, rd, rs1, rs2, funct); }

#endif
