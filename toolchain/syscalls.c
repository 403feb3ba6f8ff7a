/* The small C runtime for bare-metal programs: HTIF exit and console through
 * the `tohost`/`fromhost` mailbox (the riscv-tests syscall proxy), printf, and
 * the few libc functions compiled code expects (memcpy, memset, ...). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS_write 64
#define SYS_exit 93

/* The host polls `tohost`.  An odd value ends the run with exit code
 * value>>1; an even value is the address of a magic_mem block
 * {syscall number, arg0, arg1, arg2}, answered by writing `fromhost`. */
volatile uint64_t tohost __attribute__((section(".tohost"), aligned(64)));
volatile uint64_t fromhost __attribute__((section(".tohost"), aligned(64)));

static uintptr_t htif_syscall(uintptr_t which, uint64_t arg0, uint64_t arg1, uint64_t arg2)
{
  volatile uint64_t magic_mem[8] __attribute__((aligned(64)));
  magic_mem[0] = which;
  magic_mem[1] = arg0;
  magic_mem[2] = arg1;
  magic_mem[3] = arg2;
  __sync_synchronize();
  tohost = (uintptr_t)magic_mem;
  while (fromhost == 0)
    ;
  fromhost = 0;
  __sync_synchronize();
  return magic_mem[0];
}

/* Console output is buffered per line so each line is one syscall. */
static char console_buf[64];
static size_t console_len;

static void console_flush(void)
{
  if (console_len) {
    htif_syscall(SYS_write, 1, (uintptr_t)console_buf, console_len);
    console_len = 0;
  }
}

int putchar(int ch)
{
  console_buf[console_len++] = (char)ch;
  if (ch == '\n' || console_len == sizeof(console_buf))
    console_flush();
  return ch & 0xff;
}

int puts(const char *s)
{
  while (*s)
    putchar(*s++);
  putchar('\n');
  return 0;
}

void exit(int code)
{
  console_flush();
  __sync_synchronize();
  tohost = ((uint64_t)(uint32_t)code << 1) | 1;
  for (;;)
    ;
}

void abort(void) { exit(134); }

void __assert_fail(const char *expr, const char *file, int line)
{
  printf("%s:%d: assertion failed: %s\n", file, line, expr);
  exit(134);
}

void handle_trap(uintptr_t cause, uintptr_t epc, uintptr_t tval)
{
  printf("unexpected trap: mcause=%lu mepc=0x%lx mtval=0x%lx\n",
         (unsigned long)cause, (unsigned long)epc, (unsigned long)tval);
  exit(1337);
}

int main(int argc, char **argv);

void _init(void)
{
  exit(main(0, 0));
}

/* ---- formatted output ------------------------------------------------- */

/* Output goes either to the console (buf == NULL) or into a bounded buffer. */
struct sink {
  char *buf;
  size_t size;
  size_t len;
};

static void emit(struct sink *s, char ch)
{
  if (!s->buf)
    putchar(ch);
  else if (s->len + 1 < s->size)
    s->buf[s->len] = ch;
  s->len++;
}

static void emit_padded(struct sink *s, const char *digits, size_t n, int width,
                        int left, char pad, char sign)
{
  int fill = width - (int)n - (sign ? 1 : 0);
  if (sign && pad == '0')
    emit(s, sign);
  if (!left)
    for (; fill > 0; fill--)
      emit(s, pad);
  if (sign && pad != '0')
    emit(s, sign);
  for (size_t i = 0; i < n; i++)
    emit(s, digits[i]);
  for (; fill > 0; fill--)
    emit(s, ' ');
}

static size_t format_unsigned(char *out, unsigned long long v, unsigned base, int upper)
{
  const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = digits[v % base];
    v /= base;
  } while (v);
  for (size_t i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  return n;
}

static int format(struct sink *s, const char *fmt, va_list ap)
{
  for (; *fmt; fmt++) {
    if (*fmt != '%') {
      emit(s, *fmt);
      continue;
    }
    fmt++;
    int left = 0, plus = 0, width = 0, longs = 0;
    char pad = ' ';
    for (;; fmt++) {
      if (*fmt == '-')
        left = 1;
      else if (*fmt == '0')
        pad = '0';
      else if (*fmt == '+')
        plus = 1;
      else
        break;
    }
    if (*fmt == '*') {
      width = va_arg(ap, int);
      fmt++;
    }
    for (; *fmt >= '0' && *fmt <= '9'; fmt++)
      width = width * 10 + (*fmt - '0');
    for (; *fmt == 'l' || *fmt == 'z' || *fmt == 'h'; fmt++)
      if (*fmt != 'h')
        longs++;
    if (left)
      pad = ' ';

    char digits[24];
    size_t n;
    switch (*fmt) {
    case 'd':
    case 'i': {
      long long v = longs ? va_arg(ap, long long) : va_arg(ap, int);
      unsigned long long mag = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
      n = format_unsigned(digits, mag, 10, 0);
      emit_padded(s, digits, n, width, left, pad, v < 0 ? '-' : (plus ? '+' : 0));
      break;
    }
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      unsigned long long v = longs ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
      unsigned base = *fmt == 'u' ? 10 : (*fmt == 'o' ? 8 : 16);
      n = format_unsigned(digits, v, base, *fmt == 'X');
      emit_padded(s, digits, n, width, left, pad, 0);
      break;
    }
    case 'p': {
      n = format_unsigned(digits, (uintptr_t)va_arg(ap, void *), 16, 0);
      emit(s, '0');
      emit(s, 'x');
      emit_padded(s, digits, n, width - 2, left, pad, 0);
      break;
    }
    case 'c':
      digits[0] = (char)va_arg(ap, int);
      emit_padded(s, digits, 1, width, left, ' ', 0);
      break;
    case 's': {
      const char *str = va_arg(ap, const char *);
      if (!str)
        str = "(null)";
      emit_padded(s, str, strlen(str), width, left, ' ', 0);
      break;
    }
    case '%':
      emit(s, '%');
      break;
    case '\0':
      fmt--;
      break;
    default:
      emit(s, '%');
      emit(s, *fmt);
      break;
    }
  }
  if (s->buf && s->size)
    s->buf[s->len < s->size ? s->len : s->size - 1] = '\0';
  return (int)s->len;
}

int vprintf(const char *fmt, va_list ap)
{
  struct sink s = {0, 0, 0};
  return format(&s, fmt, ap);
}

int printf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vprintf(fmt, ap);
  va_end(ap);
  return n;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
  struct sink s = {buf, size, 0};
  return format(&s, fmt, ap);
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return n;
}

int sprintf(char *buf, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, (size_t)-1 >> 1, fmt, ap);
  va_end(ap);
  return n;
}

/* ---- libc bits -------------------------------------------------------- */

/* no_builtin keeps the compiler from turning these loops into calls to
 * themselves. */
#define NO_BUILTIN __attribute__((no_builtin))

NO_BUILTIN void *memcpy(void *dst, const void *src, size_t n)
{
  char *d = dst;
  const char *p = src;
  if ((((uintptr_t)d | (uintptr_t)p | n) & 7) == 0) {
    for (; n; n -= 8, d += 8, p += 8)
      *(uint64_t *)d = *(const uint64_t *)p;
    return dst;
  }
  while (n--)
    *d++ = *p++;
  return dst;
}

NO_BUILTIN void *memmove(void *dst, const void *src, size_t n)
{
  char *d = dst;
  const char *p = src;
  if (d < p || d >= p + n)
    return memcpy(dst, src, n);
  while (n--)
    d[n] = p[n];
  return dst;
}

NO_BUILTIN void *memset(void *dst, int c, size_t n)
{
  char *d = dst;
  if ((((uintptr_t)d | n) & 7) == 0) {
    uint64_t word = (uint8_t)c;
    word |= word << 8;
    word |= word << 16;
    word |= word << 32;
    for (; n; n -= 8, d += 8)
      *(uint64_t *)d = word;
    return dst;
  }
  while (n--)
    *d++ = (char)c;
  return dst;
}

NO_BUILTIN int memcmp(const void *a, const void *b, size_t n)
{
  const unsigned char *x = a, *y = b;
  for (; n; n--, x++, y++)
    if (*x != *y)
      return *x - *y;
  return 0;
}

NO_BUILTIN size_t strlen(const char *str)
{
  size_t n = 0;
  while (str[n])
    n++;
  return n;
}

int strcmp(const char *a, const char *b)
{
  for (; *a && *a == *b; a++, b++)
    ;
  return (unsigned char)*a - (unsigned char)*b;
}

static unsigned long long rand_state = 1;

void srand(unsigned seed) { rand_state = seed; }

/* 64-bit LCG (Knuth's MMIX constants); the high bits are the output. Weak:
 * gemmini-rocc-tests' include/gemmini_testutils.h defines its own rand(). */
__attribute__((weak)) int rand(void)
{
  rand_state = rand_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rand_state >> 33) & RAND_MAX);
}

int abs(int x) { return x < 0 ? -x : x; }
long labs(long x) { return x < 0 ? -x : x; }
