/* SPDX-License-Identifier: MIT */
/* The out-of-line growth of SP_ARRAY_RESERVE() (sp-array.h). */
#include "sp-array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sp_array_grow_(void *pitems, size_t *cap, size_t need, size_t size, size_t min_cap)
{
	size_t n = *cap ? *cap : (min_cap ? min_cap : 1);
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return -ENOMEM;
	void *items; /* through memcpy: pitems points at a pointer of any type */
	memcpy(&items, pitems, sizeof items);
	void *p = realloc(items, n * size);
	if (!p)
		return -ENOMEM;
	memcpy(pitems, &p, sizeof p);
	*cap = n;
	return 0;
}
