/* SPDX-License-Identifier: MIT */
/*
 * export json: the JSON profile format v1 (§3.7), streamed row by row in
 * region order, then rank order. Layout is fixed (2-space indent, arrays of
 * scalars on one line) so that export -> read -> export is byte-identical.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "sp-config.h"

/* Optional per-event columns the JSON v1 loader reads back, in §3.7 order. */
static const struct {
	enum sp_column col;
	const char *key;
} columns[] = {
	{ SP_COL_START_TIMES, "start_times_ns" },
	{ SP_COL_END_TIMES, "end_times_ns" },
	{ SP_COL_GPU_DURATIONS, "gpu_durations_ns" },
	{ SP_COL_CALL_IDS, "call_ids" },
	{ SP_COL_PARENT_IDS, "parent_ids" },
	{ SP_COL_THREAD_IDS, "thread_ids" },
	{ SP_COL_TASK_IDS, "task_ids" },
	{ SP_COL_AWAIT_NS, "await_ns" },
};

static void key(FILE *out, int indent, const char *k)
{
	fprintf(out, "%*s", indent, "");
	ex_json_string(out, k);
	fputs(": ", out);
}

static void string_list(FILE *out, const char *const *v, size_t n)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		ex_json_string(out, v[i]);
	}
	fputc(']', out);
}

static void metadata(FILE *out, struct sp_reader *r)
{
	size_t n = sp_reader_num_metadata(r);

	key(out, 2, "metadata");
	fputs(n ? "{\n" : "{}", out);
	for (size_t i = 0; i < n; i++) {
		const struct sp_meta *m = sp_reader_metadata(r, i);

		key(out, 4, m->key);
		switch (m->type) {
		case SP_META_INT: fprintf(out, "%" PRId64, m->i); break;
		case SP_META_FLOAT: ex_json_double(out, m->f); break;
		case SP_META_STRING: ex_json_string(out, m->s); break;
		case SP_META_STRINGS: string_list(out, m->strv, m->n); break;
		}
		fputs(i + 1 < n ? ",\n" : "\n  }", out);
	}
	fputs(",\n", out);
}

static void int_array(FILE *out, const int64_t *v, uint64_t n)
{
	fputc('[', out);
	for (uint64_t i = 0; i < n; i++)
		fprintf(out, i ? ", %" PRId64 : "%" PRId64, v[i]);
	fputc(']', out);
}

static void aggregate(FILE *out, const struct sp_row *row)
{
	key(out, 6, "aggregate");
	fprintf(out, "{\"count\": %" PRIu64 ", \"total\": %" PRId64
		", \"minimum\": %" PRId64 ", \"maximum\": %" PRId64,
		row->agg_count, row->agg_total_ns, row->agg_min_ns,
		row->agg_max_ns);
	if (row->agg_exclusive_ns >= 0)
		fprintf(out, ", \"exclusive\": %" PRId64, row->agg_exclusive_ns);
	fputc('}', out);
}

/* One (region, rank) entry. */
static void row_entry(FILE *out, struct sp_reader *r, const struct sp_row *row)
{
	fputs("    {\n", out);
	key(out, 6, "name");
	ex_json_string(out, sp_reader_region_name(r, row->region));
	fprintf(out, ",\n");
	key(out, 6, "rank");
	fprintf(out, "%" PRIu32, row->rank);
	if (row->source_file && row->source_file[0]) {
		fputs(",\n", out);
		key(out, 6, "source_file");
		ex_json_string(out, row->source_file);
	}
	if (row->source_lineno >= 0) {
		fputs(",\n", out);
		key(out, 6, "source_lineno");
		fprintf(out, "%" PRId64, row->source_lineno);
	}
	if (row->source_text && row->source_text[0]) {
		fputs(",\n", out);
		key(out, 6, "source_text");
		ex_json_string(out, row->source_text);
	}
	if (row->num_tags) {
		fputs(",\n", out);
		key(out, 6, "tags");
		string_list(out, row->tags, row->num_tags);
	}
	if (row->has_aggregate) {
		fputs(",\n", out);
		aggregate(out, row);
	}
	for (size_t c = 0; !row->has_aggregate && c < sizeof(columns) / sizeof(columns[0]); c++) {
		const int64_t *v = sp_reader_column(r, columns[c].col);

		if (!v)
			continue;
		fputs(",\n", out);
		key(out, 6, columns[c].key);
		int_array(out, v + row->offset, row->count);
	}
	if (row->exclusive_total_ns >= 0) {
		fputs(",\n", out);
		key(out, 6, "exclusive_total_ns");
		fprintf(out, "%" PRId64, row->exclusive_total_ns);
	}
	fputs("\n    }", out);
}

int export_json_write(struct export_ctx *x, struct export_file *f, FILE *out)
{
	struct sp_reader *r = f->r;
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(r, &ranks), n_out = 0;

	if (x->min_duration_ns || x->has_start || x->has_end) {
		cli_usage_error(&x->c, "json is lossless: --min-duration, --start and --end do not apply");
		return EXIT_USAGE;
	}
	fputs("{\n", out);
	key(out, 2, "format"); fputs("\"scope-profiler-profile\",\n", out);
	key(out, 2, "format_version"); fputs("1,\n", out);
	key(out, 2, "time_unit"); fputs("\"nanoseconds\",\n", out);
	key(out, 2, "exporter"); fputs("\"scope-profiler@" SP_VERSION "\",\n", out);
	key(out, 2, "num_ranks"); fprintf(out, "%u,\n", sp_reader_num_ranks(r));
	key(out, 2, "event_data_available");
	fprintf(out, "%s,\n", sp_reader_layout(r) == SP_LAYOUT_AGGREGATE ? "false" : "true");
	metadata(out, r);
	key(out, 2, "regions");
	fputc('[', out);
	for (uint32_t id = 0; id < sp_reader_num_regions(r); id++) {
		if (!sp_selection_match_name(x->c.sel, sp_reader_region_name(r, id)))
			continue;
		for (size_t k = 0; k < n_ranks; k++) {
			long row = sp_reader_row_find(r, id, ranks[k]);

			if (row < 0 || !sp_selection_match_rank(x->c.sel, ranks[k]))
				continue;
			fputs(n_out++ ? ",\n" : "\n", out);
			row_entry(out, r, sp_reader_row(r, (size_t)row));
		}
	}
	fputs(n_out ? "\n  ]\n}\n" : "]\n}\n", out);
	return 0;
}
