/* SPDX-License-Identifier: MIT */
/*
 * Compiler attributes, spelled once for recorder/, preload/, reader/ and
 * tools/ (GCC and Clang). Public headers do not include this: they must stay
 * self-contained.
 */
#ifndef SP_COMPILER_H
#define SP_COMPILER_H

/* Symbol visibility: the libraries build with -fvisibility=hidden; SP_HIDDEN
 * also keeps a declaration hidden where a file is compiled without it, and
 * SP_EXPORT marks what a version script then exports. */
#define SP_HIDDEN __attribute__((visibility("hidden")))
#define SP_EXPORT __attribute__((visibility("default")))

/* Branch hints for the hot paths. */
#define SP_LIKELY(x) __builtin_expect(!!(x), 1)
#define SP_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define SP_ALWAYS_INLINE inline __attribute__((always_inline))
#define SP_NOINLINE __attribute__((noinline))
#define SP_UNUSED __attribute__((unused))
/* printf-style checking: fmt is argument f, the values start at argument a. */
#define SP_PRINTF(f, a) __attribute__((format(printf, f, a)))
/* Thread-locals read on the hot path: one TLS access, no __tls_get_addr. */
#define SP_TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))

#endif /* SP_COMPILER_H */
