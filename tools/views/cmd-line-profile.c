/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler line-profile: time per source line. MPI calls by the
 * file:line of their call site (recorded with SCOPE_PROFILER_CALLSITES) and
 * MPI function: calls, total/avg/max time, bytes, % of MPI time, variation
 * across ranks; then manual and function regions with a source location.
 * The source line is shown when the file is readable.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "commands.h"
#include "line-profile.h"
#include "table.h"

static const char usage[] =
	"FILE... [--rank R]... [--region REGEX] [--function REGEX] [--top N] [--json]\n"
	"       [--ranks 0,2,4-7] [--include RE]... [--exclude RE]...";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler line-profile [options] FILE...\n"
	"\n"
	"Time per source line. MPI calls are grouped by the file:line of their call\n"
	"site (record with 'scope-profiler run --callsites DEPTH') and MPI function:\n"
	"calls, total/avg/max seconds, bytes, % of all MPI time, and the variation\n"
	"across ranks (CoV of the per-rank totals, slowest rank). Manual and\n"
	"function regions with a source file and line follow.\n"
	"\n"
	"options:\n"
	"  --rank R              only rank R (repeatable; default: all)\n"
	"  --region REGEX        rows whose MPI function or region name contains a\n"
	"                        match of REGEX\n"
	"  --function REGEX      rows whose source function contains a match of REGEX\n"
	"  --top N               keep the N rows with the most time in each part\n"
	"                        (default: all)\n"
	"  --json                machine-readable output\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n";

enum { OPT_RANK = OPT_FIRST_COMMAND_SPECIFIC, OPT_REGION, OPT_FUNCTION, OPT_TOP };

struct lp_opts {
	struct cli_common c;
	struct sp_selection *regions, *functions;
	size_t top;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void json_frames(struct json_writer *w, const struct sp_callsite *cs)
{
	jw_begin_array(w);
	for (size_t k = 0; cs && k < cs->num_frames; k++) {
		jw_begin_object(w);
		jw_key(w, "function");
		jw_string(w, cs->frames[k].function);
		jw_key(w, "file");
		jw_string(w, cs->frames[k].file);
		jw_key(w, "line");
		jw_int(w, cs->frames[k].line);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void json_row(struct json_writer *w, const struct lp_result *res, const struct lp_row *row,
		     struct lp_sources *src)
{
	const char *text = lp_source_line(src, row->file, row->line);
	jw_begin_object(w);
	jw_key(w, "file");
	jw_string(w, row->file);
	jw_key(w, "line");
	jw_int(w, row->line);
	jw_key(w, "function");
	jw_string(w, row->function);
	jw_key(w, row->mpi ? "mpi_function" : "region");
	jw_string(w, row->region);
	jw_key(w, "num_calls");
	jw_int(w, (long long)row->calls);
	jw_key(w, "total");
	jw_double(w, (double)row->total_ns / 1e9);
	jw_key(w, "average");
	jw_double(w, row->calls ? (double)row->total_ns / 1e9 / (double)row->calls : 0);
	jw_key(w, "maximum");
	jw_double(w, row->max_s);
	if (row->mpi) {
		jw_key(w, "bytes");
		row->has_bytes ? jw_int(w, row->bytes) : jw_null(w);
		jw_key(w, "percent_mpi");
		jw_double(w, row->percent_mpi);
	}
	jw_key(w, "num_ranks");
	jw_int(w, row->num_ranks);
	jw_key(w, "rank_cov");
	jw_double(w, row->cov);
	jw_key(w, "slowest_rank");
	jw_int(w, row->slowest_rank);
	jw_key(w, "slowest_rank_total");
	jw_double(w, (double)row->slowest_total_ns / 1e9);
	jw_key(w, "source_text");
	text ? jw_string(w, text) : jw_null(w);
	if (row->mpi) {
		jw_key(w, "call_paths");
		jw_begin_array(w);
		for (size_t k = 0; k < row->n_paths; k++) {
			jw_begin_object(w);
			jw_key(w, "callsite_id");
			jw_int(w, row->paths[k].site);
			jw_key(w, "num_calls");
			jw_int(w, (long long)row->paths[k].calls);
			jw_key(w, "frames");
			json_frames(w, sp_callsites_get(res->sites, row->paths[k].site));
			jw_end_object(w);
		}
		jw_end_array(w);
	}
	jw_end_object(w);
}

static void print_json(struct json_writer *w, struct sp_reader *r, const struct lp_result *res,
		       struct lp_sources *src)
{
	jw_begin_object(w);
	jw_key(w, "file");
	jw_string(w, sp_reader_path(r));
	jw_key(w, "num_ranks");
	jw_int(w, sp_reader_num_ranks(r));
	jw_key(w, "callsite_depth");
	res->sites ? jw_int(w, sp_callsites_depth(res->sites)) : jw_null(w);
	jw_key(w, "mpi_total");
	jw_double(w, (double)res->mpi_total_ns / 1e9);
	jw_key(w, "callsites");
	jw_begin_array(w);
	for (size_t i = 0; i < res->n_mpi; i++)
		json_row(w, res, &res->rows[i], src);
	jw_end_array(w);
	jw_key(w, "regions");
	jw_begin_array(w);
	for (size_t i = res->n_mpi; i < res->n_mpi + res->n_regions; i++)
		json_row(w, res, &res->rows[i], src);
	jw_end_array(w);
	jw_end_object(w);
}

/* One table: MPI rows (with MPI function, bytes, % MPI) or region rows,
 * drawn by the table module (aligned, escaped, function names elided to
 * the terminal width). The source text is cut at 60 characters. */
static void print_table(const struct lp_row *rows, size_t n, bool mpi, struct lp_sources *src)
{
	static const char *const heads[] = { "location", "function", "MPI function", "calls",
					     "total", "avg", "max", "bytes", "% MPI", "CoV",
					     "slowest", "source" };
	struct tbl_style st;
	struct tbl *t;
	int col[12];
	char buf[64];

	tbl_style_init(&st, false, false);
	t = tbl_create(&st);
	if (!t)
		return;
	for (int k = 0; k < 12; k++)
		col[k] = !mpi && (k == 2 || k == 7 || k == 8) ? -1
			 : tbl_column(t, heads[k], k < 3 || k == 11 ? TBL_LEFT : TBL_RIGHT, k == 1);
	for (size_t i = 0; i < n; i++) {
		const struct lp_row *row = &rows[i];
		const char *text = lp_source_line(src, row->file, row->line);

		tbl_row(t, 0, ' ');
		tbl_cellf(t, col[0], "%s:%lld", base_name(row->file), (long long)row->line);
		tbl_cell(t, col[1], row->function);
		if (mpi)
			tbl_cell(t, col[2], row->region);
		tbl_cellf(t, col[3], "%llu", (unsigned long long)row->calls);
		tbl_duration(buf, sizeof buf, (double)row->total_ns / 1e9, st.ascii);
		tbl_cell(t, col[4], buf);
		tbl_duration(buf, sizeof buf,
			     row->calls ? (double)row->total_ns / 1e9 / (double)row->calls : 0, st.ascii);
		tbl_cell(t, col[5], buf);
		tbl_duration(buf, sizeof buf, row->max_s, st.ascii);
		tbl_cell(t, col[6], buf);
		if (mpi) {
			row->has_bytes ? tbl_cellf(t, col[7], "%lld", (long long)row->bytes)
				       : tbl_cell(t, col[7], "-");
			tbl_cellf(t, col[8], "%.2f", row->percent_mpi);
		}
		tbl_cellf(t, col[9], "%.3f", row->cov);
		tbl_cellf(t, col[10], "r%u", row->slowest_rank);
		tbl_cellf(t, col[11], "%.60s", text ? text : "");
	}
	tbl_print(t, stdout);
	tbl_destroy(t);
}

static void print_text(struct sp_reader *r, const struct lp_result *res, struct lp_sources *src)
{
	char path[1024];
	unsigned nr = sp_reader_num_ranks(r);

	tbl_escape(path, sizeof path, sp_reader_path(r));
	printf("Line profile: %s (%u %s, MPI time %.6f s)\n\n", path, nr, nr == 1 ? "rank" : "ranks",
	       (double)res->mpi_total_ns / 1e9);
	if (res->sites) {
		printf("MPI call sites (depth %d; time summed over the selected ranks; CoV and "
		       "slowest rank over per-rank totals)\n", sp_callsites_depth(res->sites));
		if (res->n_mpi)
			print_table(res->rows, res->n_mpi, true, src);
		else
			printf("  (no MPI call matched)\n");
	} else {
		printf("MPI call sites: not recorded (record with `scope-profiler run --callsites "
		       "DEPTH` or SCOPE_PROFILER_CALLSITES=DEPTH)\n");
	}
	if (res->n_regions) {
		printf("\nRegions with a source location\n");
		print_table(res->rows + res->n_mpi, res->n_regions, false, src);
	}
	if (!res->n_mpi && !res->n_regions)
		printf("\nNo line-profile records matched.\n");
}

static int run(struct lp_opts *o)
{
	struct cli_common *c = &o->c;
	struct json_writer w;
	int rc = EXIT_OK;
	if (c->json) {
		jw_init(&w, stdout, true);
		if (c->n_files > 1)
			jw_begin_array(&w);
	}
	for (size_t i = 0; rc == EXIT_OK && i < c->n_files; i++) {
		struct sp_reader *r = NULL;
		struct lp_result res;
		struct lp_filter f = { .ranks = c->sel, .regions = o->regions,
				       .functions = o->functions, .top = o->top };
		rc = cli_open(c, c->files[i], &r);
		int err = rc == EXIT_OK ? lp_collect(r, &f, &res) : 0;
		if (err < 0) {
			const char *msg = sp_reader_last_error();
			cli_error(c, "%s: %s", c->files[i], err == -ENOMEM ? "out of memory" : msg);
			rc = EXIT_USAGE;
		} else if (rc == EXIT_OK) {
			struct lp_sources *src = lp_sources_new();
			if (c->json)
				print_json(&w, r, &res, src);
			else
				print_text(r, &res, src);
			lp_sources_free(src);
			lp_free(&res);
		}
		sp_reader_destroy(r);
	}
	if (c->json && rc == EXIT_OK) {
		if (c->n_files > 1)
			jw_end_array(&w);
		jw_finish(&w);
	}
	return rc;
}

static int option(struct lp_opts *o, int opt, const char *arg)
{
	char *end;
	int rc = 0;
	switch (opt) {
	case OPT_RANK:
		rc = sp_selection_add_ranks(o->c.sel, arg);
		break;
	case OPT_REGION:
		rc = lp_add_search(o->regions, arg);
		break;
	case OPT_FUNCTION:
		rc = lp_add_search(o->functions, arg);
		break;
	case OPT_TOP:
		errno = 0;
		o->top = (size_t)strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || o->top == 0)
			return cli_usage_error(&o->c, "--top needs a positive integer, not '%s'", arg);
		return 0;
	default: {
		int h = cli_common_option(&o->c, opt == 'h' ? OPT_HELP : opt, arg);
		if (h == 0)
			return cli_usage_error(&o->c, "invalid option");
		return h < 0 ? EXIT_USAGE : 0;
	}
	}
	return rc < 0 ? cli_usage_error(&o->c, "%s", sp_reader_last_error()) : 0;
}

int cmd_line_profile(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "rank", required_argument, NULL, OPT_RANK },
		{ "region", required_argument, NULL, OPT_REGION },
		{ "function", required_argument, NULL, OPT_FUNCTION },
		{ "top", required_argument, NULL, OPT_TOP },
		{ 0 },
	};
	struct lp_opts o = { 0 };
	int opt, rc = EXIT_OK;

	if (cli_common_init(&o.c, "line-profile", usage) < 0 ||
	    sp_selection_create(&o.regions) < 0 || sp_selection_create(&o.functions) < 0) {
		sp_selection_destroy(o.regions);
		cli_common_fini(&o.c);
		return EXIT_USAGE;
	}
	optind = 1;
	while (rc == EXIT_OK && (opt = getopt_long(argc, argv, "hi:e:r:", options, NULL)) != -1)
		rc = option(&o, opt, optarg);
	if (rc == EXIT_OK && o.c.help) {
		fputs(help, stdout);
	} else if (rc == EXIT_OK) {
		if (cli_collect_files(&o.c, argc, argv, optind) < 0 || o.c.n_files == 0)
			rc = cli_usage_error(&o.c, "no profile file given");
		else
			rc = run(&o);
	}
	sp_selection_destroy(o.regions);
	sp_selection_destroy(o.functions);
	cli_common_fini(&o.c);
	return rc;
}
