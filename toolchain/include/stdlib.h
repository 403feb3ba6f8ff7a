/* Minimal stdlib for bare-metal programs; implemented in toolchain/syscalls.c. */
#ifndef BACO_STDLIB_H
#define BACO_STDLIB_H

#include <stddef.h>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 0x7fffffff

void exit(int code) __attribute__((noreturn));
void abort(void) __attribute__((noreturn));
int rand(void);
void srand(unsigned seed);
int abs(int x);
long labs(long x);

#endif
