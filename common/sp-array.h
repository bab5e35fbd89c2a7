/* SPDX-License-Identifier: MIT */
/*
 * The growable array: a pointer and a capacity the caller keeps next to its
 * count, grown by doubling.
 *
 *	struct item *items = NULL;
 *	size_t n = 0, cap = 0;
 *	if (SP_ARRAY_RESERVE(items, cap, n + 1, 64) < 0)
 *		return -ENOMEM;   // items, cap unchanged
 *	items[n++] = x;
 */
#ifndef SP_ARRAY_H
#define SP_ARRAY_H

#include <stddef.h>

/*
 * Make room for `need` elements in the array `items` (an lvalue pointer) of
 * capacity `cap` (an lvalue size_t): nothing when cap >= need, else a
 * realloc to max(min_cap, cap doubled until >= need) elements.
 * @return 0, or -ENOMEM (items and cap unchanged).
 */
#define SP_ARRAY_RESERVE(items, cap, need, min_cap)                                      \
	((size_t)(need) <= (cap) ? 0                                                     \
				 : sp_array_grow_((void *)&(items), &(cap), (need),     \
						  sizeof(*(items)), (min_cap)))

/* The out-of-line half of SP_ARRAY_RESERVE(); pitems is the address of the
 * array pointer. */
int sp_array_grow_(void *pitems, size_t *cap, size_t need, size_t size, size_t min_cap);

#endif /* SP_ARRAY_H */
