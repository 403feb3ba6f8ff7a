/* assert() for bare-metal programs: prints the failed condition and exits
 * with code 134 (like SIGABRT from a hosted program). */
#ifndef BACO_ASSERT_H
#define BACO_ASSERT_H

void __assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));

#ifdef NDEBUG
#define assert(cond) ((void)0)
#else
#define assert(cond) ((cond) ? (void)0 : __assert_fail(#cond, __FILE__, __LINE__))
#endif

#endif
