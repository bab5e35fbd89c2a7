/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler tree: the reconstructed call stack of one rank (or one
 * thread lane), as an indented tree or, with --json, the Python
 * call_stack() list. Filtering re-nests: the stack is rebuilt from the
 * selected regions only, so a call whose parent was filtered out hangs under
 * its nearest surviving ancestor.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "table.h"
#include "cli-origin.h"
#include "sp-duration.h"
#include "cli-progress.h"
#include "commands.h"

enum { OPT_RANK = OPT_FIRST_COMMAND_SPECIFIC, OPT_THREAD, OPT_MAX_DEPTH,
       OPT_ORIGIN, OPT_PER_THREAD };

static const char usage[] =
	"FILE [--rank R] [--thread T] [--max-depth N] [--origin " CLI_ORIGIN_HELP "]\n"
	"       [--per-thread] [--include RE]... [--exclude RE]... [--json]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler tree [options] FILE\n"
	"\n"
	"The reconstructed call stack of one rank: every call with its start,\n"
	"duration and exclusive time, indented by nesting.\n"
	"\n"
	"options:\n"
	"  --rank R              the rank to show (default: the lowest rank)\n"
	"  --thread T            one lane (thread id) of a file with thread_ids\n"
	"                        (default: every lane)\n"
	"  --max-depth N         show N levels (default: all)\n"
	"  --origin ORIGIN       time zero: run, first, absolute or a duration\n"
	"                        (default: run)\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      refused: tree shows one rank, use --rank\n"
	"  --json                the calls as JSON, numbered across threads in start\n"
	"                        order (as the Python call_stack() does)\n"
	"  --per-thread          with --json: number the calls thread after thread\n"
	"  -h, --help            print this help and exit\n";

struct tree_opts {
	bool has_rank, has_thread;
	bool per_thread;         /* --json: number calls lane by lane */
	uint32_t rank;
	int64_t thread;
	int max_depth;           /* levels shown; 0 = all */
	struct cli_origin origin;
};

static bool shown(const struct tree_opts *o, const struct sp_call *call)
{
	return o->max_depth <= 0 || call->depth < o->max_depth;
}

static void print_list(FILE *f, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
	fputs(n ? "\n" : "(none)\n", f);
}

/* Distinct thread ids of a rank's events (sorted). NULL without lanes. */
static int64_t *rank_lanes(struct sp_reader *r, uint32_t rank, size_t *ret_n)
{
	const int64_t *t = sp_reader_column(r, SP_COL_THREAD_IDS);
	size_t n = 0, cap = 8;
	int64_t *lanes;

	*ret_n = 0;
	if (!t || !(lanes = malloc(cap * sizeof(*lanes))))
		return NULL;
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		for (uint64_t k = 0; row->rank == rank && k < row->count; k++) {
			int64_t id = t[row->offset + k];
			size_t j = 0;

			while (j < n && lanes[j] < id)
				j++;
			if (j < n && lanes[j] == id)
				continue;
			if (n == cap) {
				int64_t *grown = realloc(lanes, 2 * cap * sizeof(*lanes));

				if (!grown)
					break;
				lanes = grown;
				cap *= 2;
			}
			memmove(lanes + j + 1, lanes + j, (n - j) * sizeof(*lanes));
			lanes[j] = id;
			n++;
		}
	}
	*ret_n = n;
	return lanes;
}

/* Check --rank / --thread against the file. 0 or EXIT_USAGE (reported). */
static int check_target(const struct cli_common *c, struct sp_reader *r,
			struct tree_opts *o)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(r, &ranks), n_lanes;
	bool found = false;
	int64_t *lanes;

	if (n == 0) {
		cli_error(c, "%s: no recorded calls", sp_reader_path(r));
		return EXIT_USAGE;
	}
	if (!o->has_rank)
		o->rank = ranks[0];
	for (size_t i = 0; i < n; i++)
		found |= ranks[i] == o->rank;
	if (!found) {
		fprintf(stderr, "scope-profiler tree: %s: no rank %u; available ranks: ",
			sp_reader_path(r), o->rank);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s%u", i ? ", " : "", ranks[i]);
		fputc('\n', stderr);
		return EXIT_USAGE;
	}
	if (!o->has_thread)
		return 0;
	lanes = rank_lanes(r, o->rank, &n_lanes);
	if (!sp_reader_column(r, SP_COL_THREAD_IDS)) {
		cli_error(c, "%s: no thread lanes recorded (no thread_ids column); drop --thread",
			  sp_reader_path(r));
		return EXIT_USAGE;
	}
	found = false;
	for (size_t i = 0; i < n_lanes; i++)
		found |= lanes[i] == o->thread;
	if (!found) {
		fprintf(stderr, "scope-profiler tree: %s: rank %u has no thread %lld; available threads: ",
			sp_reader_path(r), o->rank, (long long)o->thread);
		print_list(stderr, lanes, n_lanes);
	}
	free(lanes);
	return found ? 0 : EXIT_USAGE;
}

/*
 * Call ids of the JSON list. Upstream numbers the calls of all threads
 * together in start order (start asc, end desc, then our order: lane,
 * position), nesting each thread on its own; --per-thread keeps the stack's
 * order, lane after lane. order[k] is the stack index of call id k and
 * id[i] the call id of stack index i. Returns 0 or -ENOMEM.
 */
struct by_start { int64_t s, e; size_t i; };

static int cmp_by_start(const void *pa, const void *pb)
{
	const struct by_start *a = pa, *b = pb;

	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	if (a->e != b->e)
		return a->e > b->e ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

static int call_ids(const struct sp_call_stack *cs, bool per_thread, size_t **ret_order,
		    int64_t **ret_id)
{
	size_t n = sp_call_stack_count(cs);
	struct by_start *k = malloc((n + 1) * sizeof(*k));
	size_t *order = malloc((n + 1) * sizeof(*order));
	int64_t *id = malloc((n + 1) * sizeof(*id));
	struct sp_call call;

	if (!k || !order || !id) {
		free(k);
		free(order);
		free(id);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		sp_call_stack_get(cs, i, &call);
		k[i] = (struct by_start){ call.start_ns, call.end_ns, i };
	}
	if (!per_thread)
		qsort(k, n, sizeof(*k), cmp_by_start);
	for (size_t j = 0; j < n; j++) {
		order[j] = k[j].i;
		id[k[j].i] = (int64_t)j;
	}
	free(k);
	*ret_order = order;
	*ret_id = id;
	return 0;
}

static void emit_json_call(struct json_writer *w, struct sp_reader *r,
			   const struct sp_call_stack *cs, size_t i,
			   const struct sp_call *call, double origin, bool lanes,
			   const int64_t *id)
{
	const struct sp_row *row =
		sp_reader_row(r, (size_t)sp_reader_row_find(r, call->region, call->rank));
	char stack_buf[1024], *path = stack_buf;
	int len = sp_call_stack_path(cs, r, i, stack_buf, sizeof(stack_buf));
	double dur = (double)(call->end_ns - call->start_ns) / 1e9;

	if (len >= (int)sizeof(stack_buf) && (path = malloc((size_t)len + 1)))
		sp_call_stack_path(cs, r, i, path, (size_t)len + 1);
	else if (len >= (int)sizeof(stack_buf))
		path = stack_buf; /* out of memory: clipped path */
	jw_begin_object(w);
	jw_key(w, "call_id"); jw_int(w, id[i]);
	jw_key(w, "name"); jw_string(w, sp_reader_region_name(r, call->region));
	jw_key(w, "call_index"); jw_int(w, (long long)call->call_index);
	jw_key(w, "start"); jw_double(w, (double)call->start_ns / 1e9 - origin);
	jw_key(w, "end"); jw_double(w, (double)call->end_ns / 1e9 - origin);
	jw_key(w, "duration"); jw_double(w, dur);
	jw_key(w, "inclusive_duration"); jw_double(w, dur);
	jw_key(w, "exclusive_duration"); jw_double(w, (double)call->exclusive_ns / 1e9);
	jw_key(w, "depth"); jw_int(w, call->depth);
	jw_key(w, "parent");
	if (call->parent < 0)
		jw_null(w);
	else
		jw_int(w, id[call->parent]);
	jw_key(w, "call_path"); jw_string(w, path);
	jw_key(w, "source_file");
	if (row && row->source_file && row->source_file[0])
		jw_string(w, row->source_file);
	else
		jw_null(w);
	jw_key(w, "source_lineno");
	if (row && row->source_lineno >= 0)
		jw_int(w, row->source_lineno);
	else
		jw_null(w);
	if (lanes) {
		jw_key(w, "thread_id");
		jw_int(w, call->lane);
	}
	jw_end_object(w);
	if (path != stack_buf)
		free(path);
}

/* Region names escaped for the terminal (tbl_escape), one per region id;
 * NULL without memory. Free with free_names(). */
static char **escaped_names(const struct sp_reader *r)
{
	size_t nreg = sp_reader_num_regions(r);
	char **e = calloc(nreg ? nreg : 1, sizeof(*e));

	for (size_t i = 0; e && i < nreg; i++) {
		const char *name = sp_reader_region_name(r, (uint32_t)i);
		size_t len = 6 * strlen(name) + 1;

		if ((e[i] = malloc(len)))
			tbl_escape(e[i], len, name);
	}
	return e;
}

static void free_names(char **e, size_t n)
{
	for (size_t i = 0; e && i < n; i++)
		free(e[i]);
	free(e);
}

static const char *shown_name(char **esc, const struct sp_reader *r, uint32_t region)
{
	return esc && esc[region] ? esc[region] : "?";
}

/* The indented tree: name, start, duration, exclusive (seconds). Names are
 * escaped: a hostile name cannot reach the terminal raw. */
static void print_tree(struct sp_reader *r, const struct sp_call_stack *cs,
		       const struct tree_opts *o, double origin, bool lanes)
{
	size_t n = sp_call_stack_count(cs), width = 6;
	int64_t lane = INT64_MIN;
	struct sp_call call;
	bool new_lane;
	char **esc = escaped_names(r), path[1024];

	for (size_t i = 0; i < n; i++) {
		size_t w;

		sp_call_stack_get(cs, i, &call);
		if (!shown(o, &call))
			continue;
		w = 2 * (size_t)call.depth +
		    cli_display_width(shown_name(esc, r, call.region));
		if (w > width)
			width = w;
	}
	tbl_escape(path, sizeof path, sp_reader_path(r));
	printf("%s: rank %u (%zu call%s)\n", path, o->rank, n,
	       n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const char *name;
		size_t pad;

		sp_call_stack_get(cs, i, &call);
		new_lane = lanes && call.lane != lane;
		if (new_lane) {
			lane = call.lane;
			printf("%sthread %lld\n", i ? "\n" : "", (long long)lane);
		}
		if (i == 0 || new_lane)
			printf("%-*s %15s %15s %15s\n", (int)width, "region",
			       "start [s]", "duration [s]", "exclusive [s]");
		if (!shown(o, &call))
			continue;
		name = shown_name(esc, r, call.region);
		pad = width - 2 * (size_t)call.depth - cli_display_width(name);
		char t[3][64];
		cli_format_fixed9(t[0], sizeof t[0], 15, (double)call.start_ns / 1e9 - origin);
		cli_format_fixed9(t[1], sizeof t[1], 15, (double)(call.end_ns - call.start_ns) / 1e9);
		cli_format_fixed9(t[2], sizeof t[2], 15, (double)call.exclusive_ns / 1e9);
		printf("%*s%s%*s %s %s %s\n", 2 * call.depth, "", name, (int)pad, "", t[0], t[1],
		       t[2]);
	}
	free_names(esc, sp_reader_num_regions(r));
}

static int run(struct cli_common *c, struct tree_opts *o)
{
	struct sp_call_stack *cs = NULL;
	struct sp_reader *r;
	bool lanes;
	double origin;
	int rc;

	rc = cli_open(c, c->files[0], &r);
	if (rc)
		return rc;
	rc = check_target(c, r, o);
	lanes = sp_reader_column(r, SP_COL_THREAD_IDS) != NULL;
	if (rc == 0 && sp_call_stack_build(r, o->rank, o->has_thread ? o->thread : INT64_MIN,
					   c->sel, &cs) < 0) {
		cli_error(c, "%s", sp_reader_last_error());
		rc = EXIT_USAGE;
	}
	origin = cli_origin_resolve(&o->origin, r);
	if (rc == 0 && c->json) {
		struct json_writer w;
		struct sp_call call;
		size_t *order;
		int64_t *id;

		if (call_ids(cs, o->per_thread, &order, &id) < 0) {
			cli_error(c, "out of memory");
			rc = EXIT_USAGE;
		} else {
			jw_init(&w, stdout, true);
			jw_begin_array(&w);
			for (size_t j = 0; j < sp_call_stack_count(cs); j++) {
				sp_call_stack_get(cs, order[j], &call);
				if (shown(o, &call))
					emit_json_call(&w, r, cs, order[j], &call, origin, lanes, id);
			}
			jw_end_array(&w);
			jw_finish(&w);
			free(order);
			free(id);
		}
	} else if (rc == 0) {
		print_tree(r, cs, o, origin, lanes);
	}
	sp_call_stack_destroy(cs);
	sp_reader_destroy(r);
	return rc;
}

static int parse_int(const char *arg, long long lo, long long hi, long long *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (end == arg || *end || errno || v < lo || v > hi)
		return -1;
	*ret = v;
	return 0;
}

/* One command-specific option. 0 or EXIT_USAGE (reported). */
static int own_option(struct cli_common *c, struct tree_opts *o, int opt,
		      const char *arg)
{
	long long v;

	switch (opt) {
	case OPT_RANK:
		if (parse_int(arg, 0, UINT32_MAX, &v) < 0)
			return cli_usage_error(c, "invalid --rank '%s'", arg);
		o->has_rank = true;
		o->rank = (uint32_t)v;
		return 0;
	case OPT_THREAD:
		if (parse_int(arg, INT64_MIN + 1, INT64_MAX, &v) < 0)
			return cli_usage_error(c, "invalid --thread '%s'", arg);
		o->has_thread = true;
		o->thread = v;
		return 0;
	case OPT_MAX_DEPTH:
		if (parse_int(arg, 1, INT32_MAX, &v) < 0)
			return cli_usage_error(c, "invalid --max-depth '%s' (a positive number of levels)",
					       arg);
		o->max_depth = (int)v;
		return 0;
	case OPT_PER_THREAD:
		o->per_thread = true;
		return 0;
	case OPT_ORIGIN:
		if (cli_origin_parse(arg, &o->origin) < 0)
			return cli_usage_error(c, "invalid --origin '%s' (run, first, absolute or a "
					     "duration: " SP_DURATION_EXAMPLES ")",
					       arg);
		return 0;
	}
	return cli_usage_error(c, "invalid option");
}

int cmd_tree(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "rank", required_argument, NULL, OPT_RANK },
		{ "thread", required_argument, NULL, OPT_THREAD },
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "origin", required_argument, NULL, OPT_ORIGIN },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ 0 },
	};
	struct tree_opts o = { 0 };
	struct cli_common c;
	int opt, rc = EXIT_OK;

	if (cli_common_init(&c, "tree", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == EXIT_OK &&
	       (opt = getopt_long(argc, argv, "hi:e:r:", options, NULL)) != -1) {
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);

		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0)
			rc = own_option(&c, &o, opt, optarg);
	}
	if (rc == EXIT_OK && c.help) {
		fputs(help, stdout);
	} else if (rc == EXIT_OK) {
		struct cli_progress *progress = cli_progress_begin("tree", CLI_PROGRESS_STREAMS_STDOUT);

		if (sp_selection_has_ranks(c.sel))
			rc = cli_usage_error(&c, "tree shows one rank; use --rank R");
		else if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0)
			rc = cli_usage_error(&c, "no profile file given");
		else if (c.n_files > 1)
			rc = cli_usage_error(&c, "tree takes one profile (got %zu)", c.n_files);
		else
			rc = run(&c, &o);
		cli_progress_stop(progress);
	}
	cli_common_fini(&c);
	return rc;
}
