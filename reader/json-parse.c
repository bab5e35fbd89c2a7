/* SPDX-License-Identifier: MIT */
/*
 * Minimal recursive-descent JSON parser producing a DOM (see json-parse.h).
 * Used only for JSON profiles, which are small next to HDF5 files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json-parse.h"

#define MAX_DEPTH 256

struct parser {
	const char *p, *end, *start;
	int depth;
};

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static struct json *value(struct parser *ps);

static void put_utf8(char **o, unsigned cp)
{
	char *s = *o;

	if (cp < 0x80) {
		*s++ = (char)cp;
	} else if (cp < 0x800) {
		*s++ = (char)(0xc0 | (cp >> 6));
		*s++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*s++ = (char)(0xe0 | (cp >> 12));
		*s++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*s++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*s++ = (char)(0xf0 | (cp >> 18));
		*s++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*s++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*s++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = s;
}

static int hex4(const char *p, unsigned *ret)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*ret = v;
	return 0;
}

static char *string(struct parser *ps)
{
	const char *p = ps->p + 1;
	char *out, *o;

	out = malloc((size_t)(ps->end - p) + 1);
	if (!out)
		return NULL;
	o = out;
	while (p < ps->end && *p != '"') {
		if ((unsigned char)*p < 0x20)
			goto fail;
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		if (++p >= ps->end)
			goto fail;
		switch (*p) {
		case '"': case '\\': case '/': *o++ = *p; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;

			if (ps->end - p < 5 || hex4(p + 1, &cp) < 0)
				goto fail;
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && ps->end - p >= 7 &&
			    p[1] == '\\' && p[2] == 'u' && hex4(p + 3, &lo) == 0 &&
			    lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			put_utf8(&o, cp);
			break;
		}
		default:
			goto fail;
		}
		p++;
	}
	if (p >= ps->end)
		goto fail;
	*o = '\0';
	ps->p = p + 1;
	return out;
fail:
	ps->p = p;
	free(out);
	return NULL;
}

static int append(struct json *v, struct json *item, char *key)
{
	if ((v->n & (v->n - 1)) == 0 || v->n == 0) {
		size_t cap = v->n ? v->n * 2 : 4;
		struct json **items = realloc(v->items, cap * sizeof(*items));

		if (!items)
			return -1;
		v->items = items;
		if (v->type == JSON_OBJECT) {
			char **keys = realloc(v->keys, cap * sizeof(*keys));

			if (!keys)
				return -1;
			v->keys = keys;
		}
	}
	v->items[v->n] = item;
	if (v->type == JSON_OBJECT)
		v->keys[v->n] = key;
	v->n++;
	return 0;
}

static struct json *container(struct parser *ps, bool object)
{
	struct json *v = calloc(1, sizeof(*v));
	char close = object ? '}' : ']';

	if (!v || ++ps->depth > MAX_DEPTH)
		goto fail;
	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct json *item;

		skip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"' ||
			    !(key = string(ps)))
				goto fail;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				goto fail;
			}
			ps->p++;
		}
		item = value(ps);
		if (!item || append(v, item, key) < 0) {
			json_free(item);
			free(key);
			goto fail;
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			ps->depth--;
			return v;
		}
		goto fail;
	}
fail:
	json_free(v);
	return NULL;
}

static struct json *number(struct parser *ps)
{
	struct json *v = calloc(1, sizeof(*v));
	const char *s = ps->p;
	char *endp;
	bool frac = false;

	if (!v)
		return NULL;
	v->type = JSON_NUMBER;
	while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p)) {
		if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E')
			frac = true;
		ps->p++;
	}
	v->d = strtod(s, &endp);
	if (endp != ps->p || endp == s) {
		ps->p = s;
		free(v);
		return NULL;
	}
	if (!frac) {
		errno = 0;
		v->i = strtoll(s, NULL, 10);
		v->is_int = errno != ERANGE; /* beyond int64: not an integer */
	}
	if (!v->is_int) /* converting an out-of-range double is undefined */
		v->i = v->d > -9.2e18 && v->d < 9.2e18 ? (int64_t)v->d : 0;
	return v;
}

static struct json *literal(struct parser *ps, const char *word,
			    enum json_type type, bool b)
{
	size_t n = strlen(word);
	struct json *v;

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->type = type;
	v->b = b;
	ps->p += n;
	return v;
}

static struct json *value(struct parser *ps)
{
	struct json *v;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return NULL;
	switch (*ps->p) {
	case '{': return container(ps, true);
	case '[': return container(ps, false);
	case '"':
		v = calloc(1, sizeof(*v));
		if (!v)
			return NULL;
		v->type = JSON_STRING;
		v->s = string(ps);
		if (!v->s) {
			free(v);
			return NULL;
		}
		return v;
	case 't': return literal(ps, "true", JSON_BOOL, true);
	case 'f': return literal(ps, "false", JSON_BOOL, false);
	case 'n': return literal(ps, "null", JSON_NULL, false);
	default: return number(ps);
	}
}

struct json *json_parse(const char *text, size_t len, size_t *err_pos)
{
	struct parser ps = { text, text + len, text, 0 };
	struct json *v;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		ps.p += 3;
	v = value(&ps);
	skip_ws(&ps);
	if (v && ps.p != ps.end) {
		json_free(v);
		v = NULL;
	}
	if (!v && err_pos)
		*err_pos = (size_t)(ps.p - text);
	return v;
}

void json_free(struct json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->s);
	free(v);
}

const struct json *json_get(const struct json *v, const char *key)
{
	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return v->items[i];
	return NULL;
}
