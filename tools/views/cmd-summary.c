/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler summary: per-region statistics of one or more profiles, as
 * the framed call-tree table of §3.8 or, with --json, the list of objects of
 * the Python summary() (same key names, full precision).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "commands.h"
#include "overhead-estimate.h"
#include "summary-view.h"

enum { OPT_SORT = OPT_FIRST_COMMAND_SPECIFIC, OPT_COLUMNS, OPT_FLAT, OPT_SUM, OPT_WIDE,
       OPT_ASCII };

static const char usage[] =
	"usage: scope-profiler summary [options] FILE...\n"
	"\n"
	"Where the time of a run went: a header line (wall run time, ranks, threads,\n"
	"MPI share, profiler overhead), the call-path tree with calls, % of the run,\n"
	"inclusive and exclusive time and rank imbalance, the top 10 functions by\n"
	"exclusive time and, for MPI runs, MPI time per rank and the top MPI functions.\n"
	"\n"
	"options:\n"
	"  --json                the upstream summary() list, full precision\n"
	"  -i, --include RE      only regions whose name matches RE (re.match)\n"
	"  -e, --exclude RE      leave out regions whose name matches RE\n"
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all)\n"
	"  --sort KEY            order siblings (with --flat: all rows) by KEY,\n"
	"                        largest first: start, name, calls, total,\n"
	"                        exclusive, percent, avg, min, max, first, last,\n"
	"                        std, p50, p95, p99, imbalance, slowest, ranks\n"
	"                        (default: start, the call order; --flat: total)\n"
	"  --columns LIST        columns of the tree or flat table, from region,\n"
	"                        ranks, calls, total, exclusive, percent, avg, min,\n"
	"                        max, first, last, std, p50, p95, p99, imbalance,\n"
	"                        slowest (default: region,calls,percent,total,\n"
	"                        exclusive,imbalance,slowest)\n"
	"  --flat                one row per region, sorted over all rows\n"
	"  --sum                 times summed over ranks (default: per-rank means)\n"
	"  --wide                never cut names to the terminal width\n"
	"  --ascii               ASCII glyphs and units (default: by the locale)\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"Durations carry their unit (s, ms, us, ns). Names are cut in the middle to the\n"
	"terminal width on a terminal (SCOPE_PROFILER_COLUMNS=N forces a width);\n"
	"SCOPE_PROFILER_ASCII=1 is --ascii. docs/SUMMARY.md describes every column.\n";

/* One region of summary --json. Long but flat: one field after another in
 * the order of the Python project's keys, which a split would scatter. */
static void emit_region(struct json_writer *w, struct sp_reader *r, const struct sp_selection *sel,
			uint32_t id, const struct sp_stats *st, const double *overhead)
{
	const struct sp_row *first = NULL, *src = NULL;
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(r, &ranks);
	/* Our extension columns, summed over the selected ranks (-1: absent). */
	int64_t dropped = -1, throttled = -1, throttled_ns = -1, timed = -1;
	double ci_var = 0; /* 95 % half-widths add in quadrature over ranks */
	bool ci_unknown = false;
	int64_t since = -1;

	for (size_t k = 0; k < n; k++) {
		long i = sp_reader_row_find(r, id, ranks[k]);
		const struct sp_row *row = i >= 0 ? sp_reader_row(r, (size_t)i) : NULL;

		if (!row || !sp_selection_match_rank(sel, ranks[k]))
			continue;
		if (!first && row->num_tags)
			first = row;
		if (!src && row->source_file && row->source_file[0])
			src = row;
		if (row->dropped_count >= 0)
			dropped = (dropped < 0 ? 0 : dropped) + row->dropped_count;
		if (row->throttled_count >= 0) {
			throttled = (throttled < 0 ? 0 : throttled) + row->throttled_count;
			throttled_ns = (throttled_ns < 0 ? 0 : throttled_ns) + row->throttled_total_ns;
			if (row->throttle_timed >= 0)
				timed = (timed < 0 ? 0 : timed) + row->throttle_timed;
			if (row->throttled_ci_ns < 0)
				ci_unknown |= row->throttled_count > 0;
			else
				ci_var += (double)row->throttled_ci_ns * (double)row->throttled_ci_ns;
			if (row->throttled_since_ns >= 0 && (since < 0 || row->throttled_since_ns < since))
				since = row->throttled_since_ns;
		}
	}
	jw_begin_object(w);
	jw_key(w, "name"); jw_string(w, sp_reader_region_name(r, id));
	jw_key(w, "num_ranks"); jw_int(w, st->num_ranks);
	jw_key(w, "num_calls"); jw_int(w, (long long)st->num_calls);
	jw_key(w, "total_duration"); jw_double(w, st->total);
	jw_key(w, "inclusive_duration"); jw_double(w, st->total);
	jw_key(w, "exclusive_duration");
	if (st->has_exclusive)
		jw_double(w, st->exclusive);
	else
		jw_null(w);
	jw_key(w, "average_duration"); jw_double(w, st->average);
	jw_key(w, "min_duration"); jw_double(w, st->min);
	jw_key(w, "max_duration"); jw_double(w, st->max);
	jw_key(w, "first_duration"); jw_double(w, st->first);
	jw_key(w, "last_duration"); jw_double(w, st->last);
	jw_key(w, "std_duration"); jw_double(w, st->std);
	jw_key(w, "tags");
	jw_begin_array(w);
	for (size_t t = 0; first && t < first->num_tags; t++)
		jw_string(w, first->tags[t]);
	jw_end_array(w);
	jw_key(w, "p50_duration"); jw_double(w, st->p50);
	jw_key(w, "p95_duration"); jw_double(w, st->p95);
	jw_key(w, "p99_duration"); jw_double(w, st->p99);
	jw_key(w, "rank_imbalance"); jw_double(w, st->rank_imbalance);
	jw_key(w, "rank_imbalance_pct"); jw_double(w, st->rank_imbalance_pct);
	jw_key(w, "p50"); jw_double(w, st->p50);
	jw_key(w, "p95"); jw_double(w, st->p95);
	jw_key(w, "p99"); jw_double(w, st->p99);
	jw_key(w, "imbalance"); jw_double(w, st->rank_imbalance_pct);
	/* Extra keys (not upstream's): where the region is defined, and the
	 * calls that are counted but not on the timeline. */
	jw_key(w, "source_file"); src ? jw_string(w, src->source_file) : jw_null(w);
	/* The exact integer sums the seconds above were made from. */
	jw_key(w, "total_duration_ns"); jw_int(w, st->total_ns);
	jw_key(w, "exclusive_duration_ns");
	st->has_exclusive ? jw_int(w, st->exclusive_ns) : jw_null(w);
	jw_key(w, "source_lineno");
	src && src->source_lineno >= 0 ? jw_int(w, src->source_lineno) : jw_null(w);
	if (dropped >= 0) {
		jw_key(w, "dropped_calls"); jw_int(w, dropped);
	}
	if (throttled >= 0) {
		jw_key(w, "throttled_calls"); jw_int(w, throttled);
		jw_key(w, "throttled_total_duration"); jw_double(w, (double)throttled_ns / 1e9);
		/* Sampled timing: how the total was obtained (docs/HOOKS.md). */
		if (timed >= 0) {
			jw_key(w, "throttled_timed_calls"); jw_int(w, timed);
			jw_key(w, "throttled_total_ci95");
			ci_unknown ? jw_null(w) : jw_double(w, sqrt(ci_var) / 1e9);
			jw_key(w, "throttled_since_ns");
			since >= 0 ? jw_int(w, since) : jw_null(w);
		}
	}
	if (dropped >= 0 || throttled >= 0) {
		jw_key(w, "all_calls");
		jw_int(w, (long long)st->num_calls + (dropped > 0 ? dropped : 0) +
			       (throttled > 0 ? throttled : 0));
	}
	/* The profiler's own share of total_duration (docs/FORMAT.md). */
	if (overhead && overhead[id] >= 0) {
		jw_key(w, "profiler_overhead_estimate"); jw_double(w, overhead[id]);
	}
	jw_end_object(w);
}

/* The summary() list of one file. Returns 0 or EXIT_USAGE. */
static int emit_file_json(struct cli_common *c, struct json_writer *w,
			  struct sp_reader *r)
{
	uint32_t *ids = NULL;
	double *overhead = NULL;
	int n = sp_reader_regions(r, c->sel, &ids);
	const char *problem;

	if (n >= 0 && cli_overhead_regions(r, c->sel, &overhead) < 0) {
		free(ids);
		n = -ENOMEM;
	}
	if (n < 0) {
		cli_error(c, "%s: out of memory", sp_reader_path(r));
		return EXIT_USAGE;
	}
	jw_begin_array(w);
	for (int i = 0; i < n; i++) {
		struct sp_stats st;

		/* upstream's floating-point arithmetic, bit for bit */
		if (sp_reader_region_stats_numpy(r, ids[i], c->sel, &st) < 0) {
			free(ids);
			free(overhead);
			cli_error(c, "%s: out of memory", sp_reader_path(r));
			return EXIT_USAGE;
		}
		emit_region(w, r, c->sel, ids[i], &st, overhead);
	}
	jw_end_array(w);
	free(ids);
	free(overhead);
	problem = sp_reader_nesting_problem(r);
	if (problem)
		cli_error(c, "warning: exclusive time unavailable: %s", problem);
	return 0;
}

static int run(struct cli_common *c, const struct summary_opts *o)
{
	struct json_writer w;
	int rc = 0;

	jw_init(&w, stdout, true);
	if (c->json && c->n_files > 1)
		jw_begin_array(&w);
	for (size_t i = 0; i < c->n_files && rc == 0; i++) {
		struct sp_reader *r;

		rc = cli_open(c, c->files[i], &r);
		if (rc)
			break;
		if (c->json && c->n_files > 1) {
			jw_begin_object(&w);
			jw_key(&w, "file");
			jw_string(&w, c->files[i]);
			jw_key(&w, "regions");
		}
		if (c->json)
			rc = emit_file_json(c, &w, r);
		else
			rc = summary_print(c, stdout, r, o);
		if (!c->json && rc == 0)
			cli_overhead_print_footer(stdout, r, c->sel);
		if (!c->json && rc == 0 && i + 1 < c->n_files)
			fputc('\n', stdout);
		if (c->json && c->n_files > 1)
			jw_end_object(&w);
		sp_reader_destroy(r);
	}
	if (c->json && rc == 0) {
		if (c->n_files > 1)
			jw_end_array(&w);
		jw_finish(&w);
	}
	return rc;
}

int cmd_summary(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "columns", required_argument, NULL, OPT_COLUMNS },
		{ "flat", no_argument, NULL, OPT_FLAT },
		{ "sum", no_argument, NULL, OPT_SUM },
		{ "wide", no_argument, NULL, OPT_WIDE },
		{ "ascii", no_argument, NULL, OPT_ASCII },
		{ 0 },
	};
	struct summary_opts o = { .sort = SV_START };
	bool wide = false, ascii = false;
	struct cli_common c;
	int opt, rc;

	if (cli_common_init(&c, "summary", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);

		if (h < 0) {
			cli_common_fini(&c);
			return EXIT_USAGE;
		}
		if (h > 0)
			continue;
		switch (opt) {
		case OPT_SORT:
			if (summary_key_parse(optarg, &o.sort) == 0 && o.sort != SV_REGION) {
				o.sorted = true;
				continue;
			}
			rc = cli_usage_error(&c, "unknown sort key '%s'", optarg);
			cli_common_fini(&c);
			return rc;
		case OPT_COLUMNS: o.columns = optarg; continue;
		case OPT_FLAT: o.flat = true; continue;
		case OPT_SUM: o.sum = true; continue;
		case OPT_WIDE: wide = true; continue;
		case OPT_ASCII: ascii = true; continue;
		default:
			rc = cli_usage_error(&c, "invalid option");
			cli_common_fini(&c);
			return rc;
		}
	}
	if (c.help) {
		fputs(usage, stdout);
		cli_common_fini(&c);
		return EXIT_OK;
	}
	if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0) {
		rc = cli_usage_error(&c, "no profile file given");
		cli_common_fini(&c);
		return rc;
	}
	tbl_style_init(&o.st, ascii, wide);
	rc = run(&c, &o);
	cli_common_fini(&c);
	return rc;
}
