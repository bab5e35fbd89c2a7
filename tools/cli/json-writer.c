/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON writer for --json output: indented (2 spaces) or compact,
 * RFC 8259 string escaping, floats in shortest round-trip form.
 */
#include <string.h>

#include "cli-common.h"

void jw_init(struct json_writer *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
}

static void newline(struct json_writer *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* Separator before a value or key. */
static void before_value(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (w->need_comma[w->depth])
			fputc(',', w->f);
		newline(w);
	}
	w->need_comma[w->depth] = true;
}

static void open_(struct json_writer *w, char ch)
{
	before_value(w);
	fputc(ch, w->f);
	if (w->depth < 63)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_(struct json_writer *w, char ch)
{
	bool had = w->need_comma[w->depth];

	w->depth--;
	if (had)
		newline(w);
	fputc(ch, w->f);
}

void jw_begin_object(struct json_writer *w) { open_(w, '{'); }
void jw_end_object(struct json_writer *w) { close_(w, '}'); }
void jw_begin_array(struct json_writer *w) { open_(w, '['); }
void jw_end_array(struct json_writer *w) { close_(w, ']'); }

/*
 * Length of the longest prefix of s that is a valid UTF-8 sequence or the
 * start of one ("maximal subpart", Unicode ch. 3 / WHATWG; what Python's
 * bytes.decode('utf-8', 'replace') uses). *ret_valid tells whether it is
 * a whole valid sequence. Never reads past a NUL.
 */
static size_t utf8_prefix(const unsigned char *s, bool *ret_valid)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, k;

	*ret_valid = false;
	if (s[0] < 0x80) {
		*ret_valid = true;
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4;
	else
		return 1;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (k = 1; k < need; k++) {
		if (s[k] < lo || s[k] > hi)
			return k;
		lo = 0x80;
		hi = 0xbf;
	}
	*ret_valid = true;
	return need;
}

/*
 * A JSON string (RFC 8259): quotes, backslash and control characters
 * escaped; valid UTF-8 copied; each maximal invalid subpart replaced by
 * U+FFFD (written "\ufffd"), so the output is always valid UTF-8 JSON and
 * decodes like Python's bytes.decode('utf-8', 'replace').
 */
void cli_json_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	while (*s) {
		bool valid;
		size_t n = utf8_prefix(s, &valid);

		if (!valid) {
			fputs("\\ufffd", f);
			s += n;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		switch (*s) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*s < 0x20)
				fprintf(f, "\\u%04x", *s);
			else
				fputc(*s, f);
		}
		s++;
	}
	fputc('"', f);
}

static void put_string(FILE *f, const char *s)
{
	cli_json_escape(f, s);
}

void jw_key(struct json_writer *w, const char *key)
{
	before_value(w);
	put_string(w->f, key);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void jw_string(struct json_writer *w, const char *s)
{
	before_value(w);
	put_string(w->f, s ? s : "");
}

void jw_int(struct json_writer *w, long long v)
{
	before_value(w);
	fprintf(w->f, "%lld", v);
}

void jw_double(struct json_writer *w, double v)
{
	char buf[64];

	before_value(w);
	cli_format_double(buf, sizeof(buf), v);
	fputs(buf, w->f);
}

void jw_bool(struct json_writer *w, bool v)
{
	before_value(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct json_writer *w)
{
	before_value(w);
	fputs("null", w->f);
}

void jw_finish(struct json_writer *w)
{
	fputc('\n', w->f);
}
