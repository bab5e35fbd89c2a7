/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler events: one line per recorded call, as the Python events()
 * / to_events_dataframe(): name, rank, call_index, start, end, duration
 * (seconds from the time origin), and thread (the event's thread_ids value,
 * null without the column), regions in get_regions() order, then rank,
 * then call order. Output is streamed straight from the event columns, so
 * tens of millions of events need no memory beyond the loaded file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "cli-origin.h"
#include "sp-duration.h"
#include "cli-progress.h"
#include "commands.h"
#include "sp-format.h"
#include "table.h"

/* An escaped name: every byte of a name of at most SP_NAME_MAX bytes (plus
 * the reader's cut marker) shown as up to 4. */
#define ESC_MAX (4 * SP_NAME_MAX + 64)

enum { OPT_FORMAT = OPT_FIRST_COMMAND_SPECIFIC, OPT_ORIGIN };

enum events_format { FMT_TABLE, FMT_CSV, FMT_JSON };

static const char usage[] =
	"FILE... [--format table|csv|json] [--json] [--origin " CLI_ORIGIN_HELP "]\n"
	"       [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler events [options] FILE...\n"
	"\n"
	"One line per recorded call: region, rank, thread, start, end and duration\n"
	"(table, CSV or JSON).\n"
	"\n"
	"options:\n"
	"  --format FMT          table, csv or json (default: table)\n"
	"  --json                the same as --format json\n"
	"  --origin ORIGIN       time zero: run (the run start: metadata\n"
	"                        start_time_ns, else the first region entry), first\n"
	"                        (the first entry), absolute (the raw clock) or a\n"
	"                        duration such as 1.5s (default: run)\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"Times are seconds from the origin.\n";

/* What one file's events carry beyond the six fixed keys. */
struct events_ctx {
	const struct cli_common *c;
	enum events_format format;
	struct sp_reader *r;
	double origin;
	const int64_t *s, *e, *gpu, *call_ids, *parent_ids, *thread;
	int name_width, time_width;
	struct json_writer *w;
	const char *file;      /* non-NULL: prefix rows with the file (several inputs) */
};

static void put_double(FILE *f, double v)
{
	char buf[64];

	cli_format_double(buf, sizeof(buf), v);
	/* CSV has no null: leave the cell empty, as pandas does for NaN. */
	fputs(strcmp(buf, "null") ? buf : "", f);
}

static void header(struct events_ctx *x)
{
	if (x->format == FMT_CSV) {
		if (x->file)
			fputs("file,", stdout);
		fputs("name,rank,call_index,start,end,duration,thread", stdout);
		fputs(x->gpu ? ",gpu_duration\n" : "\n", stdout);
	} else if (x->format == FMT_TABLE) {
		printf("%-*s %6s %10s %*s %*s %*s %6s%s\n", x->name_width, "name", "rank",
		       "call_index", x->time_width, "start [s]", x->time_width,
		       "end [s]", x->time_width, "duration [s]", "thread",
		       x->gpu ? "     gpu [s]" : "");
	}
}

static void emit(struct events_ctx *x, const char *name, uint32_t rank,
		 uint64_t index, uint64_t ev)
{
	/* Seconds minus origin, then end - start: the Python arithmetic. */
	double start = (double)x->s[ev] / 1e9 - x->origin;
	double end = (double)x->e[ev] / 1e9 - x->origin;
	double gpu = x->gpu && x->gpu[ev] >= 0 ? (double)x->gpu[ev] / 1e9 : NAN;

	switch (x->format) {
	case FMT_JSON:
		jw_begin_object(x->w);
		if (x->file) {
			jw_key(x->w, "file");
			jw_string(x->w, x->file);
		}
		jw_key(x->w, "name"); jw_string(x->w, name);
		jw_key(x->w, "rank"); jw_int(x->w, rank);
		jw_key(x->w, "call_index"); jw_int(x->w, (long long)index);
		jw_key(x->w, "start"); jw_double(x->w, start);
		jw_key(x->w, "end"); jw_double(x->w, end);
		jw_key(x->w, "duration"); jw_double(x->w, end - start);
		jw_key(x->w, "thread");
		x->thread ? jw_int(x->w, x->thread[ev]) : jw_null(x->w);
		if (x->gpu) {
			jw_key(x->w, "gpu_duration");
			jw_double(x->w, gpu);
		}
		if (x->call_ids && x->parent_ids) {
			jw_key(x->w, "call_id"); jw_int(x->w, x->call_ids[ev]);
			jw_key(x->w, "parent_id"); jw_int(x->w, x->parent_ids[ev]);
		}
		jw_end_object(x->w);
		break;
	case FMT_CSV:
		if (x->file) {
			cli_csv_text(stdout, x->file);
			fputc(',', stdout);
		}
		cli_csv_text(stdout, name);
		printf(",%u,%llu,", rank, (unsigned long long)index);
		put_double(stdout, start);
		fputc(',', stdout);
		put_double(stdout, end);
		fputc(',', stdout);
		put_double(stdout, end - start);
		fputc(',', stdout);
		if (x->thread)
			printf("%lld", (long long)x->thread[ev]);
		if (x->gpu) {
			fputc(',', stdout);
			put_double(stdout, gpu);
		}
		fputc('\n', stdout);
		break;
	case FMT_TABLE: {
		char t[3][64];
		cli_format_fixed9(t[0], sizeof t[0], x->time_width, start);
		cli_format_fixed9(t[1], sizeof t[1], x->time_width, end);
		cli_format_fixed9(t[2], sizeof t[2], x->time_width, end - start);
		char esc[ESC_MAX];
		int pad;

		/* Escaped (table.c's rule: nothing raw reaches the terminal),
		 * padded by display width. */
		tbl_escape(esc, sizeof esc, name);
		pad = x->name_width - (int)cli_display_width(esc);
		printf("%s%*s %6u %10llu %s %s %s", esc, pad > 0 ? pad : 0, "", rank,
		       (unsigned long long)index, t[0], t[1], t[2]);
		if (x->thread)
			printf(" %6lld", (long long)x->thread[ev]);
		else
			printf(" %6s", "-");
		if (x->gpu && !isnan(gpu))
			printf(" %11.9f", gpu);
		else if (x->gpu)
			printf(" %11s", "-");
		fputc('\n', stdout);
		break;
	}
	}
}

/* Column widths of the table: the longest name, the widest timestamp. */
static void table_widths(struct events_ctx *x, const uint32_t *ids, int n)
{
	struct sp_times t;
	char buf[64];
	int w;

	x->name_width = 4;
	for (int i = 0; i < n; i++) {
		char esc[ESC_MAX];
		int len;

		tbl_escape(esc, sizeof esc, sp_reader_region_name(x->r, ids[i]));
		len = (int)cli_display_width(esc);

		if (len > x->name_width)
			x->name_width = len;
	}
	sp_reader_times(x->r, &t);
	x->time_width = 12;
	w = snprintf(buf, sizeof(buf), "%.9f", t.maximum_end_time - x->origin);
	if (w > x->time_width)
		x->time_width = w;
	w = snprintf(buf, sizeof(buf), "%.9f", t.minimum_start_time - x->origin);
	if (w > x->time_width)
		x->time_width = w;
}

/* Stream the events of one profile. Returns 0 or EXIT_USAGE. */
static int emit_file(struct events_ctx *x, bool first_file)
{
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(x->r, &ranks);
	uint32_t *ids = NULL;
	int n;

	if (sp_reader_layout(x->r) == SP_LAYOUT_AGGREGATE) {
		cli_error(x->c, "%s: no per-call events (aggregate storage layout); use 'summary'",
			  sp_reader_path(x->r));
		return EXIT_USAGE;
	}
	n = sp_reader_regions(x->r, x->c->sel, &ids);
	if (n < 0) {
		cli_error(x->c, "%s: %s", sp_reader_path(x->r), sp_reader_last_error());
		return EXIT_USAGE;
	}
	x->s = sp_reader_column(x->r, SP_COL_START_TIMES);
	x->e = sp_reader_column(x->r, SP_COL_END_TIMES);
	x->gpu = sp_reader_column(x->r, SP_COL_GPU_DURATIONS);
	x->call_ids = sp_reader_column(x->r, SP_COL_CALL_IDS);
	x->parent_ids = sp_reader_column(x->r, SP_COL_PARENT_IDS);
	x->thread = sp_reader_column(x->r, SP_COL_THREAD_IDS);
	if (x->format == FMT_TABLE) {
		table_widths(x, ids, n);
		if (!first_file)
			fputc('\n', stdout);
		if (x->file) {
			char esc[ESC_MAX];

			tbl_escape(esc, sizeof esc, x->file);
			printf("%s\n", esc);
		}
	}
	if (first_file || x->format == FMT_TABLE)
		header(x);
	for (int i = 0; i < n; i++) {
		const char *name = sp_reader_region_name(x->r, ids[i]);

		for (size_t k = 0; k < n_ranks; k++) {
			long row;
			const struct sp_row *rw;

			if (!sp_selection_match_rank(x->c->sel, ranks[k]))
				continue;
			row = sp_reader_row_find(x->r, ids[i], ranks[k]);
			if (row < 0)
				continue;
			rw = sp_reader_row(x->r, (size_t)row);
			for (uint64_t j = 0; j < rw->count; j++)
				emit(x, name, ranks[k], j, rw->offset + j);
		}
	}
	free(ids);
	return 0;
}

static int run(struct cli_common *c, enum events_format format,
	       const struct cli_origin *origin)
{
	static char buf[1 << 20];
	struct json_writer w;
	int rc = 0;

	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	jw_init(&w, stdout, true);
	if (format == FMT_JSON)
		jw_begin_array(&w);
	for (size_t i = 0; i < c->n_files && rc == 0; i++) {
		struct events_ctx x = { .c = c, .format = format, .w = &w };

		rc = cli_open(c, c->files[i], &x.r);
		if (rc)
			break;
		x.origin = cli_origin_resolve(origin, x.r);
		x.file = c->n_files > 1 ? c->files[i] : NULL;
		rc = emit_file(&x, i == 0);
		sp_reader_destroy(x.r);
	}
	if (format == FMT_JSON && rc == 0) {
		jw_end_array(&w);
		jw_finish(&w);
	}
	fflush(stdout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return rc;
}

static int parse_format(const char *arg, enum events_format *ret)
{
	if (strcmp(arg, "table") == 0)
		*ret = FMT_TABLE;
	else if (strcmp(arg, "csv") == 0)
		*ret = FMT_CSV;
	else if (strcmp(arg, "json") == 0)
		*ret = FMT_JSON;
	else
		return -1;
	return 0;
}

int cmd_events(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "origin", required_argument, NULL, OPT_ORIGIN },
		{ 0 },
	};
	enum events_format format = FMT_TABLE;
	struct cli_origin origin = { CLI_ORIGIN_DEFAULT, 0.0 };
	struct cli_common c;
	int opt, rc = EXIT_OK;

	if (cli_common_init(&c, "events", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == EXIT_OK &&
	       (opt = getopt_long(argc, argv, "hi:e:r:", options, NULL)) != -1) {
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);

		if (h < 0)
			rc = EXIT_USAGE;
		else if (h > 0)
			continue;
		else if (opt == OPT_FORMAT && parse_format(optarg, &format) < 0)
			rc = cli_usage_error(&c, "invalid --format '%s' (choose from table, csv, json)",
					     optarg);
		else if (opt == OPT_ORIGIN && cli_origin_parse(optarg, &origin) < 0)
			rc = cli_usage_error(&c, "invalid --origin '%s' (run, first, absolute or a "
					     "duration: " SP_DURATION_EXAMPLES ")",
					     optarg);
		else if (opt != OPT_FORMAT && opt != OPT_ORIGIN)
			rc = cli_usage_error(&c, "invalid option");
	}
	if (rc == EXIT_OK && c.help) {
		fputs(help, stdout);
	} else if (rc == EXIT_OK) {
		struct cli_progress *progress = cli_progress_begin("events", CLI_PROGRESS_STREAMS_STDOUT);

		if (c.json)
			format = FMT_JSON;
		if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0)
			rc = cli_usage_error(&c, "no profile file given");
		else
			rc = run(&c, format, &origin);
		cli_progress_stop(progress);
	}
	cli_common_fini(&c);
	return rc;
}
