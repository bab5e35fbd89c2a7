/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler comm: MPI message statistics from the optional event
 * columns events/mpi_*: bytes per MPI function (calls, total, min, mean,
 * max) of the regions whose kind is MPI, and the rank x rank matrix of
 * point-to-point sends (the send and sendrecv classes: bytes and messages,
 * sender row, receiver column).
 */
#include <stdlib.h>

#include "cli-common.h"
#include "table.h"
#include "commands.h"

static const char usage[] =
	"FILE... [--json] [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler comm [options] FILE...\n"
	"\n"
	"Bytes per MPI function (count x type size at post time; waits carry the\n"
	"bytes of the requests they completed) and the rank x rank matrix of\n"
	"point-to-point sends (sender row, receiver column).\n"
	"\n"
	"options:\n"
	"  --json                machine-readable output\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these calling ranks, e.g. 0,2,4-7 (default:\n"
	"                        all); a rank the file does not have is an error\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"Counting rules, also printed under the numbers: calls to MPI_PROC_NULL\n"
	"count in the function totals but have no peer, so they are not in the\n"
	"matrix; self-messages are on its diagonal.\n";

/* Kinds whose bytes go from the calling rank to its peer: the matrix. */
static const enum sp_region_kind send_kinds[] = { SP_REGION_MPI_SEND, SP_REGION_MPI_SENDRECV };

struct fn_stats {
	uint32_t region;
	uint64_t calls, with_bytes;
	int64_t total, min, max;
};

struct comm_result {
	struct fn_stats *fns;
	size_t nfns;
	unsigned nranks;
	int64_t *bytes;       /* nranks x nranks */
	uint64_t *messages;
	/* The counting rules (print_counting_rules): sends in the function
	 * totals but not in the matrix (no peer rank: MPI_PROC_NULL, or a peer
	 * outside the file's ranks), and self-messages (on the diagonal). */
	int64_t no_peer_bytes, self_bytes;
	uint64_t no_peer_messages, self_messages;
};

static bool is_send(enum sp_region_kind kind)
{
	for (size_t i = 0; i < sizeof send_kinds / sizeof *send_kinds; i++)
		if (kind == send_kinds[i])
			return true;
	return false;
}

static int collect(const struct cli_common *c, struct sp_reader *r, struct comm_result *res)
{
	size_t nreg = sp_reader_num_regions(r), nrows = sp_reader_num_rows(r);
	res->nranks = sp_reader_num_ranks(r);
	res->fns = calloc(nreg + 1, sizeof *res->fns);
	res->bytes = calloc((size_t)res->nranks * res->nranks + 1, sizeof *res->bytes);
	res->messages = calloc((size_t)res->nranks * res->nranks + 1, sizeof *res->messages);
	long *slot = malloc((nreg + 1) * sizeof *slot);
	if (!res->fns || !res->bytes || !res->messages || !slot) {
		free(slot);
		cli_error(c, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nreg; i++)
		slot[i] = -1;
	for (size_t i = 0; i < nrows; i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		const char *name = sp_reader_region_name(r, row->region);
		enum sp_region_kind kind = sp_reader_region_kind(r, row->region);
		if (!sp_region_kind_is_mpi(kind) || !sp_selection_match_name(c->sel, name) ||
		    !sp_selection_match_rank(c->sel, row->rank))
			continue;
		if (slot[row->region] < 0) {
			slot[row->region] = (long)res->nfns;
			res->fns[res->nfns++] = (struct fn_stats){ .region = row->region,
				.min = INT64_MAX, .max = INT64_MIN };
		}
		struct fn_stats *f = &res->fns[slot[row->region]];
		bool send = is_send(kind);
		f->calls += row->count;
		/* The row's values only (no full-length column is built). */
		const int64_t *bytes = sp_reader_row_column(r, i, SP_COL_MPI_BYTES);
		const int64_t *peers = sp_reader_row_column(r, i, SP_COL_MPI_PEERS);
		for (uint64_t e = 0; bytes && e < row->count; e++) {
			if (bytes[e] < 0)
				continue;
			f->with_bytes++;
			f->total += bytes[e];
			f->min = bytes[e] < f->min ? bytes[e] : f->min;
			f->max = bytes[e] > f->max ? bytes[e] : f->max;
			if (send && peers && peers[e] >= 0 && (uint64_t)peers[e] < res->nranks &&
			    row->rank < res->nranks) {
				size_t at = (size_t)row->rank * res->nranks + (size_t)peers[e];
				res->bytes[at] += bytes[e];
				res->messages[at]++;
				if ((uint32_t)peers[e] == row->rank) {
					res->self_bytes += bytes[e];
					res->self_messages++;
				}
			} else if (send) {
				res->no_peer_bytes += bytes[e];
				res->no_peer_messages++;
			}
		}
	}
	free(slot);
	return 0;
}

static void print_json(struct json_writer *w, struct sp_reader *r, const struct comm_result *res)
{
	jw_begin_object(w);
	jw_key(w, "file");
	jw_string(w, sp_reader_path(r));
	jw_key(w, "num_ranks");
	jw_int(w, res->nranks);
	jw_key(w, "functions");
	jw_begin_array(w);
	for (size_t i = 0; i < res->nfns; i++) {
		const struct fn_stats *f = &res->fns[i];
		jw_begin_object(w);
		jw_key(w, "name");
		jw_string(w, sp_reader_region_name(r, f->region));
		jw_key(w, "mpi_class");
		jw_string(w, sp_region_kind_mpi_class(sp_reader_region_kind(r, f->region)));
		jw_key(w, "num_calls");
		jw_int(w, (long long)f->calls);
		jw_key(w, "num_calls_with_bytes");
		jw_int(w, (long long)f->with_bytes);
		jw_key(w, "total_bytes");
		jw_int(w, f->total);
		jw_key(w, "min_bytes");
		f->with_bytes ? jw_int(w, f->min) : jw_null(w);
		jw_key(w, "max_bytes");
		f->with_bytes ? jw_int(w, f->max) : jw_null(w);
		jw_key(w, "mean_bytes");
		f->with_bytes ? jw_double(w, (double)f->total / (double)f->with_bytes) : jw_null(w);
		jw_end_object(w);
	}
	jw_end_array(w);
	const char *keys[] = { "bytes", "messages" };
	jw_key(w, "matrix");
	jw_begin_object(w);
	jw_key(w, "sent_by");
	jw_begin_array(w);
	for (size_t i = 0; i < sizeof send_kinds / sizeof *send_kinds; i++)
		jw_string(w, sp_region_kind_mpi_class(send_kinds[i]));
	jw_end_array(w);
	for (int k = 0; k < 2; k++) {
		jw_key(w, keys[k]);
		jw_begin_array(w);
		for (unsigned s = 0; s < res->nranks; s++) {
			jw_begin_array(w);
			for (unsigned d = 0; d < res->nranks; d++) {
				size_t at = (size_t)s * res->nranks + d;
				jw_int(w, k ? (long long)res->messages[at] : res->bytes[at]);
			}
			jw_end_array(w);
		}
		jw_end_array(w);
	}
	/* The counting rules of print_counting_rules, as numbers. */
	jw_key(w, "self_bytes");
	jw_int(w, res->self_bytes);
	jw_key(w, "self_messages");
	jw_int(w, (long long)res->self_messages);
	jw_key(w, "sends_without_peer_bytes");
	jw_int(w, res->no_peer_bytes);
	jw_key(w, "sends_without_peer_messages");
	jw_int(w, (long long)res->no_peer_messages);
	jw_end_object(w);
	jw_end_object(w);
}

/*
 * Where the numbers are shown, say how they were counted, so that the
 * function totals and the matrix agree or say why not.
 */
static void print_counting_rules(const struct comm_result *res)
{
	printf("\n  Counting: calls are all calls; bytes are count x type size at post time,\n"
	       "  calls to MPI_PROC_NULL included (no data moves). The matrix holds the send\n"
	       "  and sendrecv calls with a peer rank; self-messages are on its diagonal\n  "
	       "(%lld bytes in %llu message%s).\n", (long long)res->self_bytes,
	       (unsigned long long)res->self_messages, res->self_messages == 1 ? "" : "s");
	if (res->no_peer_messages)
		printf("  %lld bytes in %llu send%s without a peer rank (MPI_PROC_NULL) are in the "
		       "function\n  totals, not in the matrix.\n", (long long)res->no_peer_bytes,
		       (unsigned long long)res->no_peer_messages,
		       res->no_peer_messages == 1 ? "" : "s");
	else
		printf("  Every send has a peer rank: the send and sendrecv bytes of the function "
		       "table\n  add up to the matrix.\n");
}

static void print_text(struct sp_reader *r, const struct comm_result *res)
{
	struct tbl_style st;
	struct tbl *t;
	char path[1024];

	tbl_style_init(&st, false, false);
	tbl_escape(path, sizeof path, sp_reader_path(r));
	printf("%s (%u %s)\n\n", path, res->nranks, res->nranks == 1 ? "rank" : "ranks");
	t = tbl_create(&st);
	if (t) {
		static const char *const heads[] = { "MPI function", "calls", "total bytes", "min",
						     "mean", "max" };

		for (int k = 0; k < 6; k++)
			tbl_column(t, heads[k], k ? TBL_RIGHT : TBL_LEFT, k == 0);
		for (size_t i = 0; i < res->nfns; i++) {
			const struct fn_stats *f = &res->fns[i];

			tbl_row(t, 0, ' ');
			tbl_cell(t, 0, sp_reader_region_name(r, f->region));
			tbl_cellf(t, 1, "%llu", (unsigned long long)f->calls);
			if (!f->with_bytes) {
				for (int k = 2; k < 6; k++)
					tbl_cell(t, k, "-");
				continue;
			}
			tbl_cellf(t, 2, "%lld", (long long)f->total);
			tbl_cellf(t, 3, "%lld", (long long)f->min);
			tbl_cellf(t, 4, "%.1f", (double)f->total / (double)f->with_bytes);
			tbl_cellf(t, 5, "%lld", (long long)f->max);
		}
		tbl_print(t, stdout);
		tbl_destroy(t);
	}
	printf("\n  point-to-point bytes sent (row: sender, column: receiver)\n  %6s", "");
	for (unsigned d = 0; d < res->nranks; d++)
		printf(" %12u", d);
	printf("\n");
	for (unsigned s = 0; s < res->nranks; s++) {
		printf("  %6u", s);
		for (unsigned d = 0; d < res->nranks; d++)
			printf(" %12lld", (long long)res->bytes[(size_t)s * res->nranks + d]);
		printf("\n");
	}
	print_counting_rules(res);
}

static int run(const struct cli_common *c)
{
	struct json_writer w;
	int rc = EXIT_OK;
	if (c->json) {
		jw_init(&w, stdout, true);
		if (c->n_files > 1)
			jw_begin_array(&w);
	}
	for (size_t i = 0; rc == EXIT_OK && i < c->n_files; i++) {
		struct sp_reader *r = NULL;
		struct comm_result res = { 0 };
		rc = cli_open(c, c->files[i], &r);
		if (rc == EXIT_OK && !sp_reader_has_column(r, SP_COL_MPI_BYTES)) {
			cli_error(c, "%s has no MPI columns (events/mpi_bytes): not an MPI run "
				  "recorded by scope-profiler", c->files[i]);
			rc = EXIT_USAGE;
		}
		if (rc == EXIT_OK && collect(c, r, &res) < 0)
			rc = EXIT_USAGE;
		if (rc == EXIT_OK && c->json)
			print_json(&w, r, &res);
		else if (rc == EXIT_OK)
			print_text(r, &res);
		free(res.fns);
		free(res.bytes);
		free(res.messages);
		sp_reader_destroy(r);
	}
	if (c->json && rc == EXIT_OK) {
		if (c->n_files > 1)
			jw_end_array(&w);
		jw_finish(&w);
	}
	return rc;
}

int cmd_comm(int argc, char **argv)
{
	static const struct option options[] = { CLI_COMMON_OPTIONS, { 0 } };
	struct cli_common c;
	int opt, rc = EXIT_OK;

	if (cli_common_init(&c, "comm", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == EXIT_OK && (opt = getopt_long(argc, argv, "hi:e:r:", options, NULL)) != -1) {
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);
		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0)
			rc = cli_usage_error(&c, "invalid option");
	}
	if (rc == EXIT_OK && c.help) {
		fputs(help, stdout);
	} else if (rc == EXIT_OK) {
		if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0)
			rc = cli_usage_error(&c, "no profile file given");
		else
			rc = run(&c);
	}
	cli_common_fini(&c);
	return rc;
}
