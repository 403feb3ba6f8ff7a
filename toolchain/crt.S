/* Bare-metal start-up code in the style of the riscv-tests benchmark
 * environment: one hart runs, the others park.  Runs in machine mode at
 * 0x80000000 on Spike, Chipyard simulators and the baco ISS. */

#define MSTATUS_FS 0x00006000
#define MSTATUS_XS 0x00018000

  .section ".text.init", "ax"
  .globl _start
_start:
  li x1, 0
  li x3, 0
  li x4, 0
  li x5, 0
  li x6, 0
  li x7, 0
  li x8, 0
  li x9, 0
  li x10, 0
  li x11, 0
  li x12, 0
  li x13, 0
  li x14, 0
  li x15, 0
  li x16, 0
  li x17, 0
  li x18, 0
  li x19, 0
  li x20, 0
  li x21, 0
  li x22, 0
  li x23, 0
  li x24, 0
  li x25, 0
  li x26, 0
  li x27, 0
  li x28, 0
  li x29, 0
  li x30, 0
  li x31, 0

  /* FS enables the FPU; Rocket also treats RoCC (Gemmini) instructions as
   * illegal unless XS is non-zero. */
  li t0, MSTATUS_FS | MSTATUS_XS
  csrs mstatus, t0
  fscsr x0

  la t0, trap_entry
  csrw mtvec, t0

  .option push
  .option norelax
  la gp, __global_pointer$
  .option pop

  csrr a0, mhartid
  bnez a0, park

  la sp, __stack_top
  la tp, _end

  /* Zero .sbss/.bss: not every loader does it. */
  la t0, __bss_start
  la t1, __bss_end
1:
  bgeu t0, t1, 2f
  sd x0, 0(t0)
  addi t0, t0, 8
  j 1b
2:
  call _init
  /* _init never returns; fall into park just in case. */

park:
  wfi
  j park

  .align 2
trap_entry:
  la sp, __stack_top
  csrr a0, mcause
  csrr a1, mepc
  csrr a2, mtval
  call handle_trap
  j park
