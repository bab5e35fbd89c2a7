/* SPDX-License-Identifier: MIT */
/*
 * export chrome-trace: the Trace Event Format JSON that Perfetto and
 * chrome://tracing load. Rank = process, thread lane = thread, each call a
 * complete ("X") event with its MPI bytes/peer/root/tag/communicator, call
 * site ("file:line function" from /callsites), GPU and await times in args. Streamed rank by rank, one event per line;
 * times are microseconds with nanosecond decimals from the first entry.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "sp-config.h"

/* Per-event values written to args when present (value >= min). */
static const struct {
	enum sp_column col;
	const char *key;
	int64_t min;
} arg_columns[] = {
	{ SP_COL_MPI_BYTES, "mpi_bytes", 0 },
	{ SP_COL_MPI_PEERS, "mpi_peer", 0 },
	{ SP_COL_MPI_ROOTS, "mpi_root", 0 },
	{ SP_COL_MPI_TAGS, "mpi_tag", 0 },
	{ SP_COL_MPI_COMMS, "mpi_comm", 0 },
	{ SP_COL_GPU_DURATIONS, "gpu_duration_ns", 0 },
	{ SP_COL_AWAIT_NS, "await_ns", 1 },
	{ SP_COL_TASK_IDS, "task_id", 0 },
	{ SP_COL_CALLSITE_IDS, "callsite_id", 0 },
};
#define N_ARGS (sizeof(arg_columns) / sizeof(arg_columns[0]))

/*
 * Events are formatted into a line buffer by hand and written with one
 * fwrite: printf was most of the time of a many-million-event export.
 * Each put_* appends at p and returns the new end.
 */
static char *put_str(char *p, const char *str)
{
	size_t n = strlen(str);

	memcpy(p, str, n);
	return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, 0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* Microseconds with exactly three decimals (as "%lld.%03lld" of ns / 1000
 * and ns % 1000). */
static char *put_micros(char *p, int64_t ns)
{
	int64_t q = ns / 1000, r = ns % 1000;

	if (r < 0) /* C's remainder keeps the sign, printf's %03 pads after it */
		return p + sprintf(p, "%" PRId64 ".%03" PRId64, q, r);
	p = put_i64(p, q);
	*p++ = '.';
	*p++ = (char)('0' + r / 100);
	*p++ = (char)('0' + r / 10 % 10);
	*p++ = (char)('0' + r % 10);
	return p;
}

/* "cat": the region's tags joined by ',', else "mpi,CLASS" for an MPI
 * region (its kind), else "region". */
static void category(FILE *out, const struct sp_reader *r, const struct sp_row *row)
{
	size_t len = 0;
	char *buf;

	if (!row || row->num_tags == 0) {
		enum sp_region_kind kind = row ? sp_reader_region_kind(r, row->region) : SP_REGION_FUNCTION;
		if (sp_region_kind_is_mpi(kind))
			fprintf(out, "\"mpi,%s\"", sp_region_kind_mpi_class(kind));
		else
			fputs("\"region\"", out);
		return;
	}
	for (size_t t = 0; t < row->num_tags; t++)
		len += strlen(row->tags[t]) + 1;
	buf = malloc(len + 1);
	if (!buf) {
		fputs("\"region\"", out);
		return;
	}
	buf[0] = '\0';
	for (size_t t = 0; t < row->num_tags; t++) {
		if (t)
			strcat(buf, ",");
		strcat(buf, row->tags[t]);
	}
	ex_json_string(out, buf);
	free(buf);
}

struct rank_ctx {
	struct export_file *f;
	FILE *out;
	size_t n_out;            /* events written (for separators) */
	uint32_t rank;
	const int64_t *s, *e, *lane;
	const int64_t *args[N_ARGS];
	const struct sp_row **rows; /* rows of this rank, by offset */
	char **prefix;              /* per row: "name":...,"cat":...,"ph":"X","ts": */
	size_t n_rows;
	const int64_t *site;        /* callsite_ids, NULL without /callsites */
	struct sp_callsites *sites;
};

/* ,"callsite":"file:line function" of an MPI call with a known site. */
static void callsite_arg(const struct rank_ctx *c, uint64_t k, bool any)
{
	const struct sp_callsite *cs = c->site ? sp_callsites_get(c->sites, c->site[k]) : NULL;
	char buf[1024];

	if (!cs)
		return;
	if (cs->file[0]) {
		const char *b = strrchr(cs->file, '/');

		snprintf(buf, sizeof(buf), "%s:%" PRId64 " %s", b ? b + 1 : cs->file,
			 cs->line, cs->function);
	} else {
		snprintf(buf, sizeof(buf), "%s", cs->function);
	}
	fprintf(c->out, "%s\"callsite\":", any ? "," : "");
	ex_json_string(c->out, buf);
}

static void next_event(struct rank_ctx *c)
{
	fputs(c->n_out++ ? ",\n{" : "\n{", c->out);
}

static void meta_event(struct rank_ctx *c, const char *what, int64_t tid,
		       const char *key, const char *name, long value)
{
	next_event(c);
	fprintf(c->out, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32
		",\"tid\":%" PRId64 ",\"args\":{\"%s\":", what, c->rank, tid, key);
	if (name)
		ex_json_string(c->out, name);
	else
		fprintf(c->out, "%ld", value);
	fputs("}}", c->out);
}

/* The row's constant part of each event, JSON-escaped once. NULL when
 * memory is short. */
static char *row_prefix(struct rank_ctx *c, const struct sp_row *row)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	fputs("\"name\":", m);
	ex_json_string(m, sp_reader_region_name(c->f->r, row->region));
	fputs(",\"cat\":", m);
	category(m, c->f->r, row);
	fputs(",\"ph\":\"X\",\"ts\":", m);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Longest line of one event besides its prefix and call site. */
#define EVENT_LINE_MAX (64 + 3 * 24 + N_ARGS * (24 + 20))

static void complete_event(struct rank_ctx *c, uint64_t k, size_t ri,
			   int64_t tid)
{
	const struct sp_row *row = c->rows[ri];
	FILE *out = c->out;
	int64_t s = c->s[k], e = c->e[k];
	bool any = false;
	char line[EVENT_LINE_MAX], *p = line;

	ex_clip(c->f, &s, &e);
	next_event(c);
	if (!c->prefix[ri])
		c->prefix[ri] = row_prefix(c, row);
	if (c->prefix[ri]) {
		fputs(c->prefix[ri], out);
	} else {
		fputs("\"name\":", out);
		ex_json_string(out, sp_reader_region_name(c->f->r, row->region));
		fputs(",\"cat\":", out);
		category(out, c->f->r, row);
		fputs(",\"ph\":\"X\",\"ts\":", out);
	}
	p = put_micros(p, s - c->f->origin_ns);
	p = put_str(p, ",\"dur\":");
	p = put_micros(p, e - s);
	p = put_str(p, ",\"pid\":");
	p = put_u64(p, c->rank);
	p = put_str(p, ",\"tid\":");
	p = put_i64(p, tid);
	p = put_str(p, ",\"args\":{");
	for (size_t a = 0; a < N_ARGS; a++) {
		if (!c->args[a] || c->args[a][k] < arg_columns[a].min)
			continue;
		if (any)
			*p++ = ',';
		*p++ = '"';
		p = put_str(p, arg_columns[a].key);
		*p++ = '"';
		*p++ = ':';
		p = put_i64(p, c->args[a][k]);
		any = true;
	}
	if (c->site) {
		fwrite(line, 1, (size_t)(p - line), out);
		p = line;
		callsite_arg(c, k, any);
		any = any || sp_callsites_get(c->sites, c->site[k]);
	}
	if (any)
		*p++ = ',';
	p = put_str(p, "\"call_index\":");
	p = put_u64(p, k - row->offset);
	*p++ = '}';
	*p++ = '}';
	fwrite(line, 1, (size_t)(p - line), out);
}

/* Index in c->rows of the row holding event k (binary search). */
static size_t find_row(const struct rank_ctx *c, uint64_t k)
{
	size_t lo = 0, hi = c->n_rows;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (c->rows[mid]->offset <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void lane_name(struct rank_ctx *c, int64_t lane)
{
	const char *name = ex_thread_name(c->f, c->rank, lane);
	char buf[64];

	if (!name) {
		snprintf(buf, sizeof(buf), "thread %" PRId64, lane);
		name = buf;
	}
	meta_event(c, "thread_name", lane, "name", name, 0);
}

static int write_rank(struct export_ctx *x, struct rank_ctx *c)
{
	uint64_t *idx = NULL;
	long n = ex_rank_events(x, c->f, c->rank, &idx);
	bool lane_open = false;
	int64_t cur_lane = 0;
	char name[32];

	if (n < 0)
		return ex_reader_error(x, c->f, (int)n);
	snprintf(name, sizeof(name), "rank %" PRIu32, c->rank);
	meta_event(c, "process_name", 0, "name", name, 0);
	meta_event(c, "process_sort_index", 0, "sort_index", NULL, (long)c->rank);
	for (long i = 0; i < n; i++) {
		uint64_t k = idx[i];
		int64_t lane = c->lane ? c->lane[k] : 0;

		if (c->lane && (!lane_open || lane != cur_lane)) {
			lane_name(c, lane);
			lane_open = true;
			cur_lane = lane;
		}
		complete_event(c, k, find_row(c, k), lane);
	}
	free(idx);
	return 0;
}

static int cmp_row_rank_offset(const void *a, const void *b)
{
	const struct sp_row *x = *(const struct sp_row *const *)a;
	const struct sp_row *y = *(const struct sp_row *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Rows that hold events, by rank then offset (sorted once: a per-rank
 * scan of all rows is ranks x rows with 10 000 ranks). */
static size_t collect_rows(struct sp_reader *r, const struct sp_row **rows)
{
	size_t n = sp_reader_num_rows(r), k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (row->count && !row->has_aggregate)
			rows[k++] = row;
	}
	qsort(rows, k, sizeof(*rows), cmp_row_rank_offset);
	return k;
}

int export_chrome_write(struct export_ctx *x, struct export_file *f, FILE *out)
{
	struct sp_reader *r = f->r;
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(r, &ranks);
	size_t n_rows = sp_reader_num_rows(r);
	struct rank_ctx c = {
		.f = f,
		.out = out,
		.s = sp_reader_column(r, SP_COL_START_TIMES),
		.e = sp_reader_column(r, SP_COL_END_TIMES),
		.lane = sp_reader_column(r, SP_COL_THREAD_IDS),
	};
	int rc = 0;

	for (size_t a = 0; a < N_ARGS; a++)
		c.args[a] = sp_reader_column(r, arg_columns[a].col);
	c.site = sp_reader_column(r, SP_COL_CALLSITE_IDS);
	if (c.site && sp_callsites_load(r, &c.sites) < 0)
		c.site = NULL; /* ids without a table: callsite_id only */
	const struct sp_row **all = malloc((n_rows ? n_rows : 1) * sizeof(*all));
	char **prefix = calloc(n_rows ? n_rows : 1, sizeof(*prefix));
	size_t n_all, at = 0;

	if (!all || !prefix) {
		free(all);
		free(prefix);
		sp_callsites_destroy(c.sites);
		return ex_reader_error(x, f, -ENOMEM);
	}
	n_all = collect_rows(r, all);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"scope-profiler@"
	      SP_VERSION "\",\"source\":", out);
	ex_json_string(out, f->path);
	fprintf(out, ",\"time_origin_ns\":%" PRId64 "},\"traceEvents\":[", f->origin_ns);
	for (size_t k = 0; k < n_ranks && rc == 0; k++) {
		while (at < n_all && all[at]->rank < ranks[k])
			at++;
		c.rows = all + at;
		c.prefix = prefix + at;
		c.n_rows = 0;
		while (at + c.n_rows < n_all && all[at + c.n_rows]->rank == ranks[k])
			c.n_rows++;
		if (!sp_selection_match_rank(x->c.sel, ranks[k]))
			continue;
		c.rank = ranks[k];
		rc = write_rank(x, &c);
	}
	fputs(c.n_out ? "\n]}\n" : "]}\n", out);
	for (size_t i = 0; i < n_all; i++)
		free(prefix[i]);
	free(prefix);
	free(all);
	sp_callsites_destroy(c.sites);
	return rc;
}
