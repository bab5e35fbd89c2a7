/* SPDX-License-Identifier: MIT */
/*
 * Minimal JSON DOM parser for the JSON profile loader (RFC 8259 subset:
 * objects, arrays, strings with escapes incl. \u, numbers, literals).
 */
#ifndef SP_JSON_PARSE_H
#define SP_JSON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY,
		 JSON_OBJECT };

struct json {
	enum json_type type;
	bool b;
	bool is_int;        /* number written without fraction/exponent */
	int64_t i;
	double d;
	char *s;            /* string value */
	char **keys;        /* object keys */
	struct json **items; /* array items / object values */
	size_t n;
};

/* Parse text; returns NULL on error with *err_pos set to the byte offset. */
struct json *json_parse(const char *text, size_t len, size_t *err_pos);
void json_free(struct json *v);
/* Object member by key, NULL if absent or v is not an object. */
const struct json *json_get(const struct json *v, const char *key);

#endif /* SP_JSON_PARSE_H */
