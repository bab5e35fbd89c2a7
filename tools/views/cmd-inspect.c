/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler inspect: per file a headline (ranks, regions, size, wall
 * clock), the grouped metadata, the Regions table (the summary table under
 * "Regions (N)") and what the recorder had to leave out (dropped and
 * throttled calls, our extension columns); --json, --source and
 * --export-metadata (the write_metadata_json document of §3.4).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-common.h"
#include "table.h"
#include "commands.h"
#include "inspect.h"

enum { OPT_SORT = OPT_FIRST_COMMAND_SPECIFIC, OPT_COLUMNS, OPT_FULL,
       OPT_METADATA_ONLY, OPT_REGIONS_ONLY, OPT_EXPORT_METADATA, OPT_SOURCE,
       OPT_QUIET };

static const char usage[] =
	"FILE... [--metadata-only | --regions-only] [--full] [--json] [-q]\n"
	"       [--export-metadata PATH] [--source NAME]...\n"
	"       [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]\n"
	"       [--sort start|total|calls|avg|min|max|first|last|std|p50|p95|p99|imbalance|name]\n"
	"       [--columns region,ranks,calls,total,percent,avg,min,max,first,last,std,p50,p95,p99,imbalance]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler inspect [options] FILE...\n"
	"\n"
	"Metadata and the region table of profiles.\n"
	"\n"
	"options:\n"
	"  --metadata-only       print only the metadata\n"
	"  --regions-only        print only the region table\n"
	"  --full                every metadata entry, long values in full\n"
	"  -q, --quiet           no headers, only the tables\n"
	"  --export-metadata PATH\n"
	"                        write the metadata as JSON to PATH\n"
	"  --source NAME         show the source file NAME stored in the profile\n"
	"                        (repeatable)\n"
	"  --sort KEY            start, total, calls, avg, min, max, first, last,\n"
	"                        std, p50, p95, p99, imbalance or name (default:\n"
	"                        start)\n"
	"  --columns LIST        comma list of region, ranks, calls, total, percent,\n"
	"                        avg, min, max, first, last, std, p50, p95, p99,\n"
	"                        imbalance (default: the standard layout)\n"
	"  --json                machine-readable output\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n";

struct inspect_opts {
	bool metadata, regions, full, quiet;
	const char *columns;
	enum sp_sort_key sort;
	const char *export_path;
	const char **sources;
	size_t n_sources;
};

/* Wall-clock span, or NAN when no region has any call. */
static double time_span(struct sp_reader *r)
{
	struct sp_times t;
	bool any = false;

	for (size_t i = 0; i < sp_reader_num_rows(r) && !any; i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		any = row->count > 0 || (row->has_aggregate && row->agg_count > 0);
	}
	sp_reader_times(r, &t);
	return any ? t.time_span : NAN;
}

static const char *label_of(struct sp_reader *r)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, "label");

	return m && m->type == SP_META_STRING ? m->s : NULL;
}

static int num_regions(struct sp_reader *r, const struct sp_selection *sel)
{
	uint32_t *ids = NULL;
	int n = sp_reader_regions(r, sel, &ids);

	free(ids);
	return n;
}

static void print_headline(struct sp_reader *r)
{
	struct sp_times t;
	double span = time_span(r);
	const char *label = label_of(r);
	static const char rule[] =
		"==============================================================================";

	sp_reader_times(r, &t);
	printf("%s\n", rule);
	if (label)
		printf("%s - %s\n", label, sp_reader_path(r));
	else
		printf("%s\n", sp_reader_path(r));
	unsigned n_ranks = sp_reader_num_ranks(r);
	int n_regions = num_regions(r, NULL);

	printf("%u %s, %d %s, %.2f MiB", n_ranks, n_ranks == 1 ? "rank" : "ranks",
	       n_regions, n_regions == 1 ? "region" : "regions",
	       (double)sp_reader_file_size(r) / (1024.0 * 1024.0));
	if (!isnan(span))
		printf(", %.6g s wall clock", span);
	if (t.has_total_time)
		printf(", %.6g s total (setup to finalize)", t.total_time);
	printf("\n%s\n\n", rule);
}

/* Dropped / throttled counts of a region over the selected ranks. */
struct limits {
	bool has_dropped, has_throttled, has_timed, ci_unknown;
	int64_t dropped, throttled, throttled_ns, timed;
	double ci_var; /* 95 % half-widths add in quadrature over ranks */
};

static struct limits region_limits(struct sp_reader *r, uint32_t id,
				   const struct sp_selection *sel)
{
	struct limits l = { 0 };
	const uint32_t *ranks;
	size_t nr = sp_reader_ranks(r, &ranks);

	/* The region's row on each rank (a lookup, not a scan of all rows:
	 * O(ranks log rows) per region). */
	for (size_t k = 0; k < nr; k++) {
		long i = sp_reader_row_find(r, id, ranks[k]);
		const struct sp_row *row = i >= 0 ? sp_reader_row(r, (size_t)i) : NULL;

		if (!row || !sp_selection_match_rank(sel, row->rank))
			continue;
		if (row->dropped_count >= 0) {
			l.has_dropped = true;
			l.dropped += row->dropped_count;
		}
		if (row->throttled_count >= 0) {
			l.has_throttled = true;
			l.throttled += row->throttled_count;
			l.throttled_ns += row->throttled_total_ns > 0 ? row->throttled_total_ns : 0;
		}
		if (row->throttle_timed >= 0) {
			l.has_timed = true;
			l.timed += row->throttle_timed;
			if (row->throttled_ci_ns >= 0)
				l.ci_var += (double)row->throttled_ci_ns * (double)row->throttled_ci_ns;
			else if (row->throttled_count > 0)
				l.ci_unknown = true;
		}
	}
	return l;
}

/* How a throttled total was obtained, from the file's throttle settings. */
static void explain_throttle(struct sp_reader *r)
{
	const struct sp_meta *timing = sp_reader_metadata_find(r, "throttle_timing");
	const struct sp_meta *calls = sp_reader_metadata_find(r, "throttle_calls");
	const struct sp_meta *mean = sp_reader_metadata_find(r, "throttle_mean_ns");
	const struct sp_meta *sample = sp_reader_metadata_find(r, "throttle_sample");
	const struct sp_meta *early = sp_reader_metadata_find(r, "throttle_early_calls");
	const char *t = timing && timing->s ? timing->s : "";

	printf("  (throttled: counted exactly, not on the timeline");
	if (calls && mean)
		printf(";\n   auto-throttle after a window of %lld calls with a mean own cost under\n"
		       "   %.3g us, decided once per function for the whole process",
		       (long long)calls->i, (double)mean->i / 1e3);
	double early_ns = cli_throttle_early_mean_ns(r);
	if (calls && mean && early && early_ns >= 0)
		printf(";\n   or after the window's first %lld calls with a mean under %.3g us",
		       (long long)early->i, early_ns / 1e3);
	printf(";\n   also calls under MIN_DURATION or deeper than MAX_DEPTH, timed exactly.\n");
	if (strcmp(t, "sampled") == 0)
		printf("   throttle_timing=sampled: 1 in %lld throttled calls timed at random\n"
		       "   (\"timed\"); the total is count x their mean, unbiased, with its 95 %%\n"
		       "   interval; \"-\": no call timed yet)\n",
		       sample ? (long long)sample->i : 256LL);
	else if (strcmp(t, "estimate") == 0)
		printf("   throttle_timing=estimate: a throttled function's total is its count x\n"
		       "   the mean of its calls before the throttle, not a measured sum)\n");
	else
		printf("   throttle_timing=exact: every throttled call is timed, totals exact)\n");
}

/* "Recording limits": only when the file has our extension columns. Drawn
 * by the table module (aligned, names escaped and cut to the terminal). */
static void print_limits(struct sp_reader *r, const struct sp_selection *sel)
{
	uint32_t *ids = NULL;
	int n = sp_reader_regions(r, sel, &ids), shown = 0;
	bool present = false;
	struct tbl_style st;
	struct tbl *t;
	char buf[64];

	for (int i = 0; i < n; i++) {
		struct limits l = region_limits(r, ids[i], sel);

		present |= l.has_dropped || l.has_throttled;
	}
	if (!present) {
		free(ids);
		return;
	}
	printf("Recording limits\n");
	tbl_style_init(&st, false, false);
	t = tbl_create(&st);
	if (t) {
		static const char *const heads[] = { "region", "dropped", "throttled",
						     "throttled total", "timed", "± 95 %" };

		for (int k = 0; k < 6; k++)
			tbl_column(t, k == 5 && st.ascii ? "+- 95 %" : heads[k],
				   k ? TBL_RIGHT : TBL_LEFT, k == 0);
	}
	for (int i = 0; t && i < n; i++) {
		struct limits l = region_limits(r, ids[i], sel);

		if (!l.dropped && !l.throttled)
			continue;
		shown++;
		tbl_row(t, 0, ' ');
		tbl_cell(t, 0, sp_reader_region_name(r, ids[i]));
		tbl_cellf(t, 1, "%lld", (long long)l.dropped);
		tbl_cellf(t, 2, "%lld", (long long)l.throttled);
		tbl_duration(buf, sizeof buf, (double)l.throttled_ns / 1e9, st.ascii);
		tbl_cell(t, 3, buf);
		if (l.has_timed && l.throttled) {
			tbl_cellf(t, 4, "%lld", (long long)l.timed);
			tbl_duration(buf, sizeof buf, l.ci_unknown ? NAN : sqrt(l.ci_var) / 1e9, st.ascii);
			tbl_cell(t, 5, buf);
		} else {
			tbl_cell(t, 4, "-");
			tbl_cell(t, 5, "-");
		}
	}
	if (t && shown)
		tbl_print(t, stdout);
	tbl_destroy(t);
	if (!shown)
		printf("  no calls were dropped or throttled\n");
	else
		explain_throttle(r);
	printf("\n");
	free(ids);
}

/* The first row of a region (rank order) with source text, or NULL. */
static const struct sp_row *source_row(struct sp_reader *r, uint32_t id)
{
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (row->region == id && row->source_text && row->source_text[0])
			return row;
	}
	return NULL;
}

static void print_sources(struct sp_reader *r, const struct inspect_opts *o)
{
	printf("Source (%zu)\n", o->n_sources);
	for (size_t i = 0; i < o->n_sources; i++) {
		int id = sp_reader_region_find(r, o->sources[i]);
		const struct sp_row *row = id >= 0 ? source_row(r, (uint32_t)id) : NULL;
		const char *p, *nl;

		if (id < 0) {
			printf("  '%s': no such region. Available regions: [", o->sources[i]);
			for (size_t k = 0; k < sp_reader_num_regions(r); k++)
				printf("%s'%s'", k ? ", " : "",
				       sp_reader_region_name(r, (uint32_t)k));
			printf("]\n");
			continue;
		}
		if (!row) {
			printf("  %s: source not captured\n", o->sources[i]);
			continue;
		}
		printf("  %s  (%s:%lld)\n", o->sources[i], row->source_file,
		       (long long)row->source_lineno);
		for (p = row->source_text; *p; p = nl + 1) {
			nl = strchr(p, '\n');
			if (!nl) {
				printf("    %s\n", p);
				break;
			}
			if (nl[1] || nl > p)
				printf("    %.*s\n", (int)(nl - p), p);
		}
	}
	printf("\n");
}

/* Default Regions columns; "% session" only with a session region. */
static const char *default_columns(struct sp_reader *r)
{
	return sp_reader_region_find(r, "scope_profiler.session") >= 0
		       ? "region,ranks,calls,percent,total,avg"
		       : "region,ranks,calls,total,avg";
}

static int print_file(struct cli_common *c, struct sp_reader *r,
		      const struct inspect_opts *o)
{
	char title[64];
	int rc = 0;

	print_headline(r);
	if (o->metadata)
		inspect_print_metadata(stdout, r, o->full);
	if (o->regions) {
		snprintf(title, sizeof(title), "Regions (%d)", num_regions(r, c->sel));
		rc = cli_print_region_table(c, stdout, r,
					    o->columns ? o->columns : default_columns(r),
					    o->sort, title);
		if (rc)
			return rc;
		printf("\n");
		print_limits(r, c->sel);
	}
	if (o->n_sources)
		print_sources(r, o);
	return 0;
}

static void json_region(struct json_writer *w, struct sp_reader *r, uint32_t id,
			const struct sp_stats *st, const struct sp_selection *sel)
{
	struct limits l = region_limits(r, id, sel);
	const struct sp_row *src = NULL;

	for (size_t i = 0; i < sp_reader_num_rows(r) && !src; i++)
		if (sp_reader_row(r, i)->region == id)
			src = sp_reader_row(r, i);
	enum sp_region_kind kind = sp_reader_region_kind(r, id);
	jw_begin_object(w);
	jw_key(w, "name"); jw_string(w, sp_reader_region_name(r, id));
	jw_key(w, "kind"); jw_string(w, sp_region_kind_name(kind));
	jw_key(w, "mpi_class");
	sp_region_kind_is_mpi(kind) ? jw_string(w, sp_region_kind_mpi_class(kind)) : jw_null(w);
	jw_key(w, "num_ranks"); jw_int(w, st->num_ranks);
	jw_key(w, "num_calls"); jw_int(w, (long long)st->num_calls);
	jw_key(w, "total_duration"); jw_double(w, st->total);
	jw_key(w, "exclusive_duration");
	if (st->has_exclusive)
		jw_double(w, st->exclusive);
	else
		jw_null(w);
	jw_key(w, "average_duration"); jw_double(w, st->average);
	jw_key(w, "min_duration"); jw_double(w, st->min);
	jw_key(w, "max_duration"); jw_double(w, st->max);
	jw_key(w, "std_duration"); jw_double(w, st->std);
	jw_key(w, "rank_imbalance_pct"); jw_double(w, st->rank_imbalance_pct);
	jw_key(w, "source_file");
	if (src && src->source_file && src->source_file[0])
		jw_string(w, src->source_file);
	else
		jw_null(w);
	jw_key(w, "source_lineno");
	if (src && src->source_lineno >= 0)
		jw_int(w, src->source_lineno);
	else
		jw_null(w);
	if (l.has_dropped) {
		jw_key(w, "dropped_count");
		jw_int(w, l.dropped);
	}
	if (l.has_throttled) {
		jw_key(w, "throttled_count");
		jw_int(w, l.throttled);
		jw_key(w, "throttled_total_duration");
		jw_double(w, (double)l.throttled_ns / 1e9);
	}
	jw_end_object(w);
}

static int json_file(struct cli_common *c, struct json_writer *w,
		     struct sp_reader *r, const struct inspect_opts *o)
{
	struct sp_times t;
	double span = time_span(r);
	const char *label = label_of(r);

	sp_reader_times(r, &t);
	jw_begin_object(w);
	jw_key(w, "file"); jw_string(w, sp_reader_path(r));
	jw_key(w, "label");
	if (label)
		jw_string(w, label);
	else
		jw_null(w);
	jw_key(w, "num_ranks"); jw_int(w, sp_reader_num_ranks(r));
	jw_key(w, "num_regions"); jw_int(w, num_regions(r, NULL));
	jw_key(w, "file_size_bytes"); jw_int(w, (long long)sp_reader_file_size(r));
	jw_key(w, "time_span"); jw_double(w, span); /* null when NAN */
	jw_key(w, "total_time");
	if (t.has_total_time)
		jw_double(w, t.total_time);
	else
		jw_null(w);
	if (o->metadata) {
		jw_key(w, "metadata");
		inspect_metadata_json(w, r);
	}
	if (o->regions) {
		uint32_t *ids = NULL;
		int n = sp_reader_regions(r, c->sel, &ids);

		jw_key(w, "regions");
		jw_begin_array(w);
		for (int i = 0; i < n; i++) {
			struct sp_stats st;

			if (sp_reader_region_stats(r, ids[i], c->sel, &st) < 0) {
				free(ids);
				cli_error(c, "%s: %s", sp_reader_path(r), sp_reader_last_error());
				return EXIT_USAGE;
			}
			json_region(w, r, ids[i], &st, c->sel);
		}
		jw_end_array(w);
		free(ids);
	}
	jw_end_object(w);
	return 0;
}

/* --export-metadata: {"files": [{file_path, num_ranks, metadata}]}. */
static int export_metadata(struct cli_common *c, const char *path)
{
	char *tmp = NULL;
	FILE *f;
	struct json_writer w;
	int rc = 0;

	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0)
		return EXIT_USAGE;
	f = cli_output_fopen(path, &tmp);
	if (!f) {
		cli_error(c, "%s: %s", path, strerror(errno));
		free(tmp);
		return EXIT_USAGE;
	}
	jw_init(&w, f, true);
	jw_begin_object(&w);
	jw_key(&w, "files");
	jw_begin_array(&w);
	for (size_t i = 0; i < c->n_files && rc == 0; i++) {
		struct sp_reader *r;
		char *abs;

		rc = cli_open(c, c->files[i], &r);
		if (rc)
			break;
		abs = realpath(c->files[i], NULL);
		jw_begin_object(&w);
		jw_key(&w, "file_path"); jw_string(&w, abs ? abs : c->files[i]);
		jw_key(&w, "num_ranks"); jw_int(&w, sp_reader_num_ranks(r));
		jw_key(&w, "metadata");
		inspect_metadata_json(&w, r);
		jw_end_object(&w);
		free(abs);
		sp_reader_destroy(r);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	jw_finish(&w);
	if (fclose(f) != 0 && rc == 0) {
		cli_error(c, "%s: %s", path, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc == 0 && cli_output_rename(tmp, path) < 0) {
		cli_error(c, "%s: %s", path, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc)
		cli_output_discard(tmp);
	else
		printf("Metadata written to %s\n", path);
	free(tmp);
	return rc;
}

static int run(struct cli_common *c, const struct inspect_opts *o)
{
	struct json_writer w;
	int rc = 0;

	jw_init(&w, stdout, true);
	if (c->json && c->n_files > 1)
		jw_begin_array(&w);
	for (size_t i = 0; i < c->n_files && rc == 0 && !o->quiet; i++) {
		struct sp_reader *r;

		rc = cli_open(c, c->files[i], &r);
		if (rc)
			break;
		if (c->json) {
			rc = json_file(c, &w, r, o);
		} else {
			if (i)
				printf("\n");
			rc = print_file(c, r, o);
		}
		sp_reader_destroy(r);
	}
	if (c->json && !o->quiet && rc == 0) {
		if (c->n_files > 1)
			jw_end_array(&w);
		jw_finish(&w);
	}
	fflush(stdout);
	if (rc == 0 && o->export_path)
		rc = export_metadata(c, o->export_path);
	return rc;
}

/* One command-specific option. 0 or EXIT_USAGE (reported). */
static int own_option(struct cli_common *c, struct inspect_opts *o, int opt,
		      const char *arg)
{
	const char **grown;

	switch (opt) {
	case OPT_SORT:
		if (sp_sort_key_parse(arg, &o->sort) == 0)
			return 0;
		return cli_usage_error(c, "unknown sort key '%s'", arg);
	case OPT_COLUMNS: o->columns = arg; return 0;
	case OPT_FULL: o->full = true; return 0;
	case OPT_QUIET: o->quiet = true; return 0;
	case OPT_EXPORT_METADATA: o->export_path = arg; return 0;
	case OPT_METADATA_ONLY:
	case OPT_REGIONS_ONLY:
		if (!o->metadata || !o->regions)
			return cli_usage_error(c, "--metadata-only and --regions-only exclude each other");
		if (opt == OPT_METADATA_ONLY)
			o->regions = false;
		else
			o->metadata = false;
		return 0;
	case OPT_SOURCE:
		grown = realloc(o->sources, (o->n_sources + 1) * sizeof(*grown));
		if (!grown)
			return EXIT_USAGE;
		o->sources = grown;
		o->sources[o->n_sources++] = arg;
		return 0;
	}
	return cli_usage_error(c, "invalid option");
}

int cmd_inspect(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "columns", required_argument, NULL, OPT_COLUMNS },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "metadata-only", no_argument, NULL, OPT_METADATA_ONLY },
		{ "regions-only", no_argument, NULL, OPT_REGIONS_ONLY },
		{ "export-metadata", required_argument, NULL, OPT_EXPORT_METADATA },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ 0 },
	};
	struct inspect_opts o = { .metadata = true, .regions = true };
	struct cli_common c;
	int opt, rc = EXIT_OK;

	if (cli_common_init(&c, "inspect", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == EXIT_OK &&
	       (opt = getopt_long(argc, argv, "hqi:e:r:", options, NULL)) != -1) {
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);

		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0)
			rc = own_option(&c, &o, opt == 'q' ? OPT_QUIET : opt, optarg);
	}
	if (rc == EXIT_OK && c.help) {
		fputs(help, stdout);
	} else if (rc == EXIT_OK) {
		if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0)
			rc = cli_usage_error(&c, "no profile file given");
		else
			rc = run(&c, &o);
	}
	free(o.sources);
	cli_common_fini(&c);
	return rc;
}
