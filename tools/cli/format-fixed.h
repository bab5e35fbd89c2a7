/* SPDX-License-Identifier: MIT */
/* Seconds with nanosecond digits, as printf's "%*.9f", fast. */
#ifndef SP_FORMAT_FIXED_H
#define SP_FORMAT_FIXED_H

#include <stddef.h>

/* snprintf(buf, size, "%*.9f", width, v): the same characters and return
 * value, without glibc's multi-precision path for the common case (the call
 * tree and events print millions of these). */
int cli_format_fixed9(char *buf, size_t size, int width, double v);

#endif
