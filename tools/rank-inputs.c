/* SPDX-License-Identifier: MIT */
/*
 * Loading per-rank profiles and spill files as snapshots, and writing them
 * as one schema-2 file (assemble.c). Shared by `merge` and `recover`.
 */
#define _GNU_SOURCE
#include "rank-inputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble.h"
#include "sp-spill.h"
#include "spill-read.h"

static bool is_spill(const char *path)
{
	char magic[8] = { 0 };
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t n = fread(magic, 1, sizeof magic, f);
	fclose(f);
	return n == sizeof magic && memcmp(magic, SP_SPILL_MAGIC, sizeof magic) == 0;
}

static struct rank_input *add(struct rank_inputs *in)
{
	struct rank_input *v = realloc(in->v, (in->n + 1) * sizeof *v);
	if (!v)
		return NULL;
	in->v = v;
	memset(&v[in->n], 0, sizeof *v);
	return &v[in->n++];
}

static int load_spill(const struct cli_common *c, const char *path, struct rank_inputs *in)
{
	struct sp_spill_data d;
	int ret = sp_spill_read(path, &d);
	if (ret) {
		cli_error(c, "%s: %s", path,
			  ret == SP_SPILL_EVERSION ? "unsupported spill file version" : strerror(-ret));
		return EXIT_USAGE;
	}
	struct rank_input *ri = add(in);
	if (!ri) {
		sp_spill_data_free(&d);
		cli_error(c, "out of memory");
		return EXIT_USAGE;
	}
	ri->path = path;
	ri->rank = d.rank >= 0 ? (uint32_t)d.rank : 0;
	ri->size = d.size;
	ri->partial = true;
	ri->signo = d.partial ? d.trailer.signo : -1;
	ri->start_ns = d.hdr.start_ns;
	ri->end_ns = d.partial ? d.trailer.ns : d.last_ns;
	ret = sp_spill_to_snapshot(&d, NULL, NULL, &ri->s, &ri->unclosed);
	sp_spill_data_free(&d);
	if (ret) {
		cli_error(c, "%s: %s", path, strerror(-ret));
		return EXIT_USAGE;
	}
	return 0;
}

static int64_t meta_int(struct sp_reader *r, const char *key, int64_t def)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, key);
	return m && m->type == SP_META_INT ? m->i : def;
}

static const enum sp_column mpi_cols[5] = { SP_COL_MPI_BYTES, SP_COL_MPI_PEERS,
	SP_COL_MPI_ROOTS, SP_COL_MPI_TAGS, SP_COL_MPI_COMMS };

/* Whether reader row i carries MPI data: some value other than -1 (the
 * function rows of a file in the old, full-length layout hold only -1). */
static bool row_has_mpi(struct sp_reader *r, size_t i)
{
	uint64_t n = sp_reader_row(r, i)->count;
	for (int j = 0; j < 5; j++) {
		const int64_t *v = sp_reader_row_column(r, i, mpi_cols[j]);
		for (uint64_t k = 0; v && k < n; k++)
			if (v[k] != -1)
				return true;
	}
	return false;
}

/* The MPI values of the rank's rows (taken by take_rank, same order) in
 * the row layout: only rows with MPI data get values, read row by row
 * without building the file's full-length columns. */
static int take_mpi(struct sp_reader *r, uint32_t rank, struct rank_input *ri)
{
	size_t nrows = sp_reader_num_rows(r);
	uint64_t m = 0;
	uint32_t o = 0;
	for (int j = 0; j < 5; j++)
		if (!sp_reader_has_column(r, mpi_cols[j]))
			return 0; /* no MPI columns (all or none are written) */
	ri->mpi_offsets = malloc((ri->s.nrows + 1) * sizeof *ri->mpi_offsets);
	if (!ri->mpi_offsets)
		return -ENOMEM;
	for (size_t i = 0; i < nrows; i++) {
		if (sp_reader_row(r, i)->rank != rank)
			continue;
		bool any = row_has_mpi(r, i);
		ri->mpi_offsets[o++] = any ? (int64_t)m : -1;
		m += any ? sp_reader_row(r, i)->count : 0;
	}
	ri->nmpi = m;
	ri->mpi_bytes = malloc((m + 1) * sizeof *ri->mpi_bytes);
	ri->mpi_i32 = malloc((4 * m + 1) * sizeof *ri->mpi_i32);
	if (!ri->mpi_bytes || !ri->mpi_i32)
		return -ENOMEM;
	o = 0;
	for (size_t i = 0; i < nrows; i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		if (row->rank != rank)
			continue;
		int64_t at = ri->mpi_offsets[o++];
		for (int j = 0; at >= 0 && j < 5; j++) {
			const int64_t *v = sp_reader_row_column(r, i, mpi_cols[j]);
			for (uint64_t k = 0; k < row->count; k++) {
				int64_t x = v ? v[k] : -1;
				if (j == 0)
					ri->mpi_bytes[(uint64_t)at + k] = x;
				else
					ri->mpi_i32[(uint64_t)(j - 1) * m + (uint64_t)at + k] = (int32_t)x;
			}
		}
	}
	return 0;
}

/* Rank `rank` of an HDF5 profile as a snapshot: all of the file's names,
 * its rows, their events copied back to back. */
static int take_rank(struct sp_reader *r, uint32_t rank, struct rank_input *ri)
{
	struct sp_snapshot *s = &ri->s;
	size_t nreg = sp_reader_num_regions(r), nrows = sp_reader_num_rows(r);
	const int64_t *st = sp_reader_column(r, SP_COL_START_TIMES);
	const int64_t *en = sp_reader_column(r, SP_COL_END_TIMES);
	const int64_t *th = sp_reader_column(r, SP_COL_THREAD_IDS);
	s->names = calloc(nreg + 1, sizeof *s->names);
	s->kinds = calloc(nreg + 1, sizeof *s->kinds);
	s->rows = calloc(nrows + 1, sizeof *s->rows);
	if (!s->names || !s->kinds || !s->rows || !st || !en)
		return -ENOMEM;
	for (size_t i = 0; i < nreg; i++, s->nnames++) {
		if (!(s->names[i] = strdup(sp_reader_region_name(r, (uint32_t)i))))
			return -ENOMEM;
		s->kinds[i] = (uint8_t)sp_reader_region_kind(r, (uint32_t)i); /* = SP_KIND_* */
	}
	uint64_t n = 0;
	for (size_t i = 0; i < nrows; i++)
		if (sp_reader_row(r, i)->rank == rank)
			n += sp_reader_row(r, i)->count;
	s->start = malloc((n + 1) * sizeof *s->start);
	s->end = malloc((n + 1) * sizeof *s->end);
	s->thread = malloc((n + 1) * sizeof *s->thread);
	if (!s->start || !s->end || !s->thread)
		return -ENOMEM;
	uint64_t at = 0;
	for (size_t i = 0; i < nrows; i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		if (row->rank != rank)
			continue;
		struct sp_snap_row *o = &s->rows[s->nrows++];
		*o = (struct sp_snap_row){ .region = row->region, .offset = at, .count = row->count,
			.dropped = row->dropped_count > 0 ? (uint64_t)row->dropped_count : 0,
			.throttled_calls = row->throttled_count > 0 ? (uint64_t)row->throttled_count : 0,
			.throttled_ns = row->throttled_total_ns > 0 ? row->throttled_total_ns : 0,
			.throttle_timed = row->throttle_timed > 0 ? (uint64_t)row->throttle_timed : 0,
			.throttled_ci_ns = row->throttled_ci_ns,
			.throttled_since_ns = row->throttled_since_ns,
			.patched_since_ns = row->patched_since_ns,
			.source_line = row->source_lineno,
			.source_file = row->source_file && *row->source_file ? row->source_file : NULL };
		s->dropped += o->dropped;
		for (uint64_t k = 0; k < row->count; k++) {
			uint64_t e = row->offset + k;
			s->start[at + k] = st[e];
			s->end[at + k] = en[e];
			s->thread[at + k] = th && th[e] >= 0 ? (uint32_t)th[e] : 0;
		}
		sp_summary_compute(&o->summary, s->start + at, s->end + at, row->count);
		at += row->count;
	}
	s->nevents = n;
	int ret = take_mpi(r, rank, ri);
	if (ret)
		return ret;
	size_t nt = sp_reader_num_threads(r);
	s->threads = calloc(nt + 1, sizeof *s->threads);
	if (!s->threads)
		return -ENOMEM;
	uint8_t seen[64] = { 0 };
	for (uint64_t e = 0; e < n; e++)
		seen[s->thread[e] & 63] = 1;
	for (int i = 0; i < 64; i++)
		s->threads_with_events += seen[i];
	for (size_t i = 0; i < nt; i++) {
		const struct sp_thread *t = sp_reader_thread(r, i);
		if (t->rank == rank)
			s->threads[s->nthreads++] = (struct sp_snap_thread){ t->index, t->ident,
				t->native_id, t->start_ns, t->end_ns };
	}
	ri->size = (int32_t)meta_int(r, "mpi_size", 0);
	ri->start_ns = meta_int(r, "start_time_ns", 0);
	ri->end_ns = meta_int(r, "finalize_time_ns", 0);
	ri->partial = meta_int(r, "partial", 0) != 0;
	ri->signo = (int)meta_int(r, "partial_signal", 0);
	return 0;
}

static int load_h5(const struct cli_common *c, const char *path, struct rank_inputs *in)
{
	struct sp_reader *r;
	int rc = cli_open(c, path, &r);
	if (rc)
		return rc;
	if (sp_reader_layout(r) != SP_LAYOUT_COLUMNAR) {
		cli_error(c, "%s: only columnar (event) profiles can be merged", path);
		sp_reader_destroy(r);
		return EXIT_USAGE;
	}
	const uint32_t *ranks;
	size_t nr = sp_reader_ranks(r, &ranks);
	for (size_t i = 0; i < nr; i++) {
		struct rank_input *ri = add(in);
		if (!ri || take_rank(r, ranks[i], ri) < 0) {
			cli_error(c, "%s: out of memory", path);
			if (!ri)
				sp_reader_destroy(r);
			else
				ri->reader = r; /* freed with the inputs */
			return EXIT_USAGE;
		}
		ri->path = path;
		ri->rank = ranks[i];
		if (i == 0)
			ri->reader = r; /* the first input of a file owns its reader */
	}
	if (!nr)
		sp_reader_destroy(r);
	else if (!in->first_h5)
		in->first_h5 = r;
	return 0;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct rank_input *x = a, *y = b;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int rank_inputs_load(const struct cli_common *c, struct rank_inputs *in)
{
	memset(in, 0, sizeof *in);
	for (size_t i = 0; i < c->n_files; i++) {
		const char *p = c->files[i];
		int rc = is_spill(p) ? load_spill(c, p, in) : load_h5(c, p, in);
		if (rc)
			return rc;
	}
	qsort(in->v, in->n, sizeof *in->v, cmp_rank);
	for (size_t i = 1; i < in->n; i++) {
		if (in->v[i].rank == in->v[i - 1].rank) {
			cli_error(c, "rank %u is in both %s and %s", in->v[i].rank, in->v[i - 1].path,
				  in->v[i].path);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* Metadata: the first HDF5 input's keys (run description), then the keys
 * that describe the merged run. */
static size_t build_meta(struct rank_inputs *in, struct sp_asm_meta *m, size_t cap,
			 bool partial, int signo, int32_t size)
{
	static const char *const own[] = { "mpi_size", "mpi_rank", "start_time_ns",
		"finalize_time_ns", "dropped_events", "partial", "partial_signal", "merged_from",
		"total_cores", NULL };
	size_t n = 0;
	struct sp_reader *r = in->first_h5;
	for (size_t i = 0; r && i < sp_reader_num_metadata(r) && n + 8 < cap; i++) {
		const struct sp_meta *x = sp_reader_metadata(r, i);
		bool skip = false;
		for (size_t k = 0; own[k]; k++)
			skip |= strcmp(x->key, own[k]) == 0;
		if (skip)
			continue;
		m[n] = (struct sp_asm_meta){ .key = x->key, .i = x->i, .d = x->f, .s = x->s,
					     .list = x->strv, .n = x->n };
		m[n].type = x->type == SP_META_INT ? SP_ASM_INT : x->type == SP_META_FLOAT ? SP_ASM_DOUBLE
			  : x->type == SP_META_STRING ? SP_ASM_STR : SP_ASM_STRLIST;
		n++;
	}
	if (!r) {
		m[n++] = (struct sp_asm_meta){ .key = "source", .type = SP_ASM_STR, .s = "native" };
		m[n++] = (struct sp_asm_meta){ .key = "source_language", .type = SP_ASM_STR, .s = "c" };
	}
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	for (size_t i = 0; i < in->n; i++) {
		if (in->v[i].start_ns && in->v[i].start_ns < t0)
			t0 = in->v[i].start_ns;
		if (in->v[i].end_ns > t1)
			t1 = in->v[i].end_ns;
	}
	m[n++] = (struct sp_asm_meta){ .key = "mpi_size", .type = SP_ASM_INT, .i = size };
	if (t0 != INT64_MAX)
		m[n++] = (struct sp_asm_meta){ .key = "start_time_ns", .type = SP_ASM_INT, .i = t0 };
	if (t1 != INT64_MIN)
		m[n++] = (struct sp_asm_meta){ .key = "finalize_time_ns", .type = SP_ASM_INT, .i = t1 };
	m[n++] = (struct sp_asm_meta){ .key = "partial", .type = SP_ASM_INT, .i = partial };
	if (partial)
		m[n++] = (struct sp_asm_meta){ .key = "partial_signal", .type = SP_ASM_INT, .i = signo };
	return n;
}

int rank_inputs_write(const struct cli_common *c, struct rank_inputs *in, const char *out,
		      bool force_partial)
{
	struct sp_asm_rank *ranks = calloc(in->n + 1, sizeof *ranks);
	size_t cap = 64 + (in->first_h5 ? sp_reader_num_metadata(in->first_h5) : 0);
	struct sp_asm_meta *meta = calloc(cap, sizeof *meta);
	if (!ranks || !meta) {
		free(ranks);
		free(meta);
		cli_error(c, "out of memory");
		return EXIT_USAGE;
	}
	bool partial = force_partial;
	int signo = 0;
	int32_t size = 0;
	for (size_t i = 0; i < in->n; i++) {
		struct rank_input *ri = &in->v[i];
		uint64_t n = ri->nmpi;
		ranks[i] = (struct sp_asm_rank){ .s = &ri->s, .rank = ri->rank };
		if (ri->mpi_offsets)
			ranks[i] = (struct sp_asm_rank){ .s = &ri->s, .rank = ri->rank,
				.mpi_offsets = ri->mpi_offsets, .nmpi = n,
				.mpi_bytes = ri->mpi_bytes, .mpi_peers = ri->mpi_i32,
				.mpi_roots = ri->mpi_i32 + n, .mpi_tags = ri->mpi_i32 + 2 * n,
				.mpi_comms = ri->mpi_i32 + 3 * n };
		if (ri->partial && !signo)
			signo = ri->signo;
		partial |= ri->partial;
		if (ri->size > size)
			size = ri->size;
		if ((int32_t)ri->rank + 1 > size)
			size = (int32_t)ri->rank + 1;
	}
	/* Ranks missing from the inputs make the run partial too. */
	if ((size_t)size > in->n)
		partial = true;
	size_t nmeta = build_meta(in, meta, cap, partial, signo, size);
	int ret = sp_assemble_write(out, ranks, in->n, meta, nmeta);
	free(ranks);
	free(meta);
	if (ret) {
		cli_error(c, "could not write %s: %s", out,
			  ret == -ENOLCK ? "HDF5 could not lock the file (on a file system without "
					   "locks, set HDF5_USE_FILE_LOCKING=FALSE)" : strerror(-ret));
		return EXIT_USAGE;
	}
	return 0;
}

void rank_inputs_free(struct rank_inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		sp_snapshot_free(&in->v[i].s);
		free(in->v[i].mpi_offsets);
		free(in->v[i].mpi_bytes);
		free(in->v[i].mpi_i32);
	}
	for (size_t i = 0; i < in->n; i++)
		sp_reader_destroy(in->v[i].reader);
	free(in->v);
	memset(in, 0, sizeof *in);
}

/* The command line shared by merge and recover. */
static const char usage[] = "FILE... -o OUT [--json]";

int rank_inputs_main(int argc, char **argv, const char *name, const char *description,
		     bool recover)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	struct cli_common c;
	const char *out = NULL;
	int opt, rc = EXIT_OK;

	if (cli_common_init(&c, name, usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == EXIT_OK && (opt = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
		if (opt == 'o') {
			out = optarg;
			continue;
		}
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);
		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0)
			rc = cli_usage_error(&c, "invalid option");
	}
	if (rc == EXIT_OK && c.help) {
		printf("usage: scope-profiler %s %s\n\n%s", name, usage, description);
	} else if (rc == EXIT_OK) {
		if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0)
			rc = cli_usage_error(&c, "no input file given");
		else if (!out)
			rc = cli_usage_error(&c, "no output file given (-o OUT)");
	}
	struct rank_inputs in = { 0 };
	if (rc == EXIT_OK && !c.help)
		rc = rank_inputs_load(&c, &in);
	if (rc == EXIT_OK && !c.help)
		rc = rank_inputs_write(&c, &in, out, recover);
	if (rc == EXIT_OK && !c.help) {
		uint64_t events = 0, unclosed = 0;
		for (size_t i = 0; i < in.n; i++) {
			events += in.v[i].s.nevents;
			unclosed += in.v[i].unclosed;
		}
		if (c.json)
			printf("{\"output\": \"%s\", \"ranks\": %zu, \"events\": %llu, "
			       "\"unclosed\": %llu}\n", out, in.n, (unsigned long long)events,
			       (unsigned long long)unclosed);
		else
			printf("wrote %s (%zu ranks, %llu events%s)\n", out, in.n,
			       (unsigned long long)events,
			       unclosed ? "; calls open at the kill are not included" : "");
	}
	rank_inputs_free(&in);
	cli_common_fini(&c);
	return rc;
}
