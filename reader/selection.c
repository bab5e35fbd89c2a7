/* SPDX-License-Identifier: MIT */
/*
 * Region/rank selection: include/exclude regexes with Python re.match
 * semantics (PCRE2, anchored at the start, not a full match) and rank lists
 * such as "0,2,4-7".
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <limits.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"

struct pattern_list {
	pcre2_code **codes;
	size_t n;
};

struct sp_selection {
	struct pattern_list include, exclude;
	pcre2_match_data *md;
	uint32_t *ranks; /* sorted, unique */
	size_t n_ranks;
	bool has_ranks;
};

int sp_selection_create(struct sp_selection **ret)
{
	struct sp_selection *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

static void free_list(struct pattern_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		pcre2_code_free(l->codes[i]);
	free(l->codes);
}

void sp_selection_destroy(struct sp_selection *s)
{
	if (!s)
		return;
	free_list(&s->include);
	free_list(&s->exclude);
	pcre2_match_data_free(s->md);
	free(s->ranks);
	free(s);
}

static int add_pattern(struct sp_selection *s, struct pattern_list *l,
		       const char *pattern)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	pcre2_code **codes;
	pcre2_code *code;
	int err;

	code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
			     PCRE2_ANCHORED | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
			     &err, &off, NULL);
	if (!code) {
		pcre2_get_error_message(err, msg, sizeof(msg));
		return sp_error(EINVAL, "invalid regular expression '%s': %s at offset %zu",
				pattern, (char *)msg, (size_t)off);
	}
	if (!s->md)
		s->md = pcre2_match_data_create(1, NULL);
	codes = realloc(l->codes, (l->n + 1) * sizeof(*codes));
	if (!codes || !s->md) {
		pcre2_code_free(code);
		if (codes)
			l->codes = codes;
		return -ENOMEM;
	}
	codes[l->n++] = code;
	l->codes = codes;
	return 0;
}

int sp_selection_add_include(struct sp_selection *s, const char *pattern)
{
	return add_pattern(s, &s->include, pattern);
}

int sp_selection_add_exclude(struct sp_selection *s, const char *pattern)
{
	return add_pattern(s, &s->exclude, pattern);
}

static bool any_match(const struct sp_selection *s,
		      const struct pattern_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (pcre2_match(l->codes[i], (PCRE2_SPTR)name,
				PCRE2_ZERO_TERMINATED, 0, 0, s->md, NULL) >= 0)
			return true;
	return false;
}

bool sp_selection_match_name(const struct sp_selection *s, const char *name)
{
	if (!s)
		return true;
	if (s->include.n && !any_match(s, &s->include, name))
		return false;
	return !any_match(s, &s->exclude, name);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int parse_num(const char **p, unsigned long *ret)
{
	char *end;

	while (**p == ' ')
		(*p)++;
	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*ret = strtoul(*p, &end, 10);
	if (errno || *ret > UINT32_MAX)
		return -EINVAL;
	*p = end;
	while (**p == ' ')
		(*p)++;
	return 0;
}

static int add_range(struct sp_selection *s, unsigned long a, unsigned long b)
{
	size_t n = b - a + 1;
	uint32_t *p;

	if (n > (1u << 24))
		return -EINVAL;
	p = realloc(s->ranks, (s->n_ranks + n) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->ranks = p;
	for (unsigned long v = a; v <= b; v++)
		s->ranks[s->n_ranks++] = (uint32_t)v;
	return 0;
}

int sp_selection_add_ranks(struct sp_selection *s, const char *spec)
{
	const char *p = spec;
	size_t n = 0;
	int rc = 0;

	while (rc == 0 && *p) {
		unsigned long a, b;

		if (parse_num(&p, &a) < 0) {
			rc = -EINVAL;
			break;
		}
		b = a;
		if (*p == '-') {
			p++;
			if (parse_num(&p, &b) < 0 || b < a) {
				rc = -EINVAL;
				break;
			}
		}
		rc = add_range(s, a, b);
		if (rc < 0 || !*p)
			break;
		if (*p != ',')
			break;
		p++;
		if (!*p)
			p--; /* trailing comma: error below */
	}
	if (rc == 0 && (*p || !*spec))
		rc = -EINVAL;
	if (rc == -EINVAL)
		return sp_error(EINVAL,
				"invalid rank list '%s' (expected e.g. 0,2,4-7)",
				spec);
	if (rc < 0)
		return rc;
	qsort(s->ranks, s->n_ranks, sizeof(*s->ranks), cmp_u32);
	for (size_t i = 0; i < s->n_ranks; i++)
		if (n == 0 || s->ranks[n - 1] != s->ranks[i])
			s->ranks[n++] = s->ranks[i];
	s->n_ranks = n;
	s->has_ranks = true;
	return 0;
}

bool sp_selection_match_rank(const struct sp_selection *s, uint32_t rank)
{
	size_t lo = 0, hi;

	if (!s || !s->has_ranks)
		return true;
	hi = s->n_ranks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_ranks && s->ranks[lo] == rank;
}

bool sp_selection_has_ranks(const struct sp_selection *s)
{
	return s && s->has_ranks;
}
