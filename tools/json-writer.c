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

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (ch < 0x20)
				fprintf(f, "\\u%04x", ch);
			else
				fputc(ch, f);
		}
	}
	fputc('"', f);
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
