/* SPDX-License-Identifier: MIT */
/*
 * The plot-data table writer: rows go straight to a CSV file or into the
 * JSON envelope of a plot-data document, one row per line, never held in
 * memory. The JSON document ends with the shared region colour map.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "export-plot.h"

int pd_open(struct export_ctx *x, struct pd_doc *d, const char *kind,
	    const char *rows_key, const char *const *cols, size_t n_cols,
	    const struct sp_color_map *colors)
{
	char *path;
	size_t len = strlen(x->output);
	int rc;

	memset(d, 0, sizeof(*d));
	d->x = x;
	d->json = x->pd.json;
	d->cols = cols;
	d->n_cols = n_cols;
	d->colors = colors;
	if (asprintf(&path, "%s%s%s_data.%s", x->output,
		     len && x->output[len - 1] == '/' ? "" : "/", kind,
		     d->json ? "json" : "csv") < 0) {
		cli_error(&x->c, "out of memory");
		return EXIT_USAGE;
	}
	rc = ex_open_output(x, path, &d->o);
	free(path);
	if (rc)
		return rc;
	d->out = d->o.f;
	if (d->json) {
		fprintf(d->out, "{\"format\": \"scope-profiler-plot-data\", "
			"\"format_version\": 1, \"plot\": \"%s\",\n", kind);
		ex_json_string(d->out, rows_key);
		fputs(": [", d->out);
		return 0;
	}
	for (size_t i = 0; i < n_cols; i++) {
		ex_csv_string(d->out, cols[i]);
		fputc(i + 1 < n_cols ? ',' : '\n', d->out);
	}
	return 0;
}

void pd_row(struct pd_doc *d)
{
	if (d->n_rows && d->json)
		fputs("},", d->out);
	else if (d->n_rows)
		fputc('\n', d->out);
	if (d->json)
		fputs("\n{", d->out);
	d->n_rows++;
	d->col = 0;
}

/* Separator and key before the next value of the row. */
static void field(struct pd_doc *d)
{
	if (d->json) {
		if (d->col)
			fputs(", ", d->out);
		ex_json_string(d->out, d->col < d->n_cols ? d->cols[d->col] : "?");
		fputs(": ", d->out);
	} else if (d->col) {
		fputc(',', d->out);
	}
	d->col++;
}

void pd_str(struct pd_doc *d, const char *s)
{
	field(d);
	if (d->json)
		ex_json_string(d->out, s);
	else
		ex_csv_string(d->out, s);
}

void pd_int(struct pd_doc *d, long long v)
{
	field(d);
	fprintf(d->out, "%lld", v);
}

void pd_dbl(struct pd_doc *d, double v)
{
	char buf[64];

	field(d);
	cli_format_double(buf, sizeof(buf), v);
	if (d->json || strcmp(buf, "null") != 0)
		fputs(buf, d->out);
}

void pd_sec(struct pd_doc *d, int64_t ns)
{
	pd_dbl(d, (double)ns / 1e9);
}

void pd_null(struct pd_doc *d)
{
	field(d);
	if (d->json)
		fputs("null", d->out);
}

static void close_rows(struct pd_doc *d)
{
	if (d->rows_closed)
		return;
	fputs(d->n_rows ? "}\n]" : "]", d->out);
	d->rows_closed = true;
}

void pd_extra_key(struct pd_doc *d, const char *key)
{
	if (!d->json)
		return;
	close_rows(d);
	fputs(",\n", d->out);
	ex_json_string(d->out, key);
	fputs(": ", d->out);
}

int pd_close(struct pd_doc *d, bool ok)
{
	if (d->json) {
		size_t n = d->colors ? sp_color_map_count(d->colors) : 0;

		close_rows(d);
		fputs(",\n\"colors\": {", d->out);
		for (size_t i = 0; i < n; i++) {
			fputs(i ? ", " : "", d->out);
			ex_json_string(d->out, sp_color_map_name(d->colors, i));
			fputs(": ", d->out);
			ex_json_string(d->out, sp_color_map_color(d->colors, i));
		}
		fputs("}}\n", d->out);
	} else if (d->n_rows) {
		fputc('\n', d->out);
	}
	return ex_close_output(d->x, &d->o, ok);
}
