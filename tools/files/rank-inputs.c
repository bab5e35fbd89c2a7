/* SPDX-License-Identifier: MIT */
/*
 * Loading per-rank profiles (ours, and upstream's native per-rank
 * <prefix>_rank<NNNNN>.h5 and .spt v1/v2 files) and spill files as parts (a snapshot, MPI
 * values, the file's groups) and writing them as one schema-2 file through
 * the recorder's parts-to-file path (assemble.h). Shared by `merge` and
 * `recover`.
 */
#define _GNU_SOURCE
#include "rank-inputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assemble.h"
#include "names.h"
#include "sp-spill.h"
#include "sp-format.h"
#include "spill-names.h"
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
	if (d.rank >= SP_MAX_RANKS || d.size > SP_MAX_RANKS) {
		sp_spill_data_free(&d);
		cli_error(c, "%s: rank %d of %d is out of range (at most %d ranks)", path, d.rank,
			  d.size, SP_MAX_RANKS);
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
	ret = sp_spill_to_snapshot(&d, spill_names_namer, (void *)c, &ri->s, &ri->unclosed);
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

/* The MPI event columns in the order of struct rank_input's arrays; the
 * call-site ids are optional. */
#define NMPI_COLS 6
static const enum sp_column mpi_cols[NMPI_COLS] = { SP_COL_MPI_BYTES, SP_COL_MPI_PEERS,
	SP_COL_MPI_ROOTS, SP_COL_MPI_TAGS, SP_COL_MPI_COMMS, SP_COL_CALLSITE_IDS };

/* Whether reader row i carries MPI data: some value other than -1 (the
 * function rows of a file in the old, full-length layout hold only -1). */
static bool row_has_mpi(struct sp_reader *r, size_t i)
{
	uint64_t n = sp_reader_row(r, i)->count;
	for (int j = 0; j < NMPI_COLS; j++) {
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
	ri->has_sites = sp_reader_has_column(r, SP_COL_CALLSITE_IDS);
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
	ri->mpi_i32 = malloc((5 * m + 1) * sizeof *ri->mpi_i32);
	if (!ri->mpi_bytes || !ri->mpi_i32)
		return -ENOMEM;
	o = 0;
	for (size_t i = 0; i < nrows; i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		if (row->rank != rank)
			continue;
		int64_t at = ri->mpi_offsets[o++];
		for (int j = 0; at >= 0 && j < NMPI_COLS; j++) {
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
	s->nmem = n;
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
	ri->size = (int32_t)meta_int(r, SP_META_MPI_SIZE, 0);
	ri->start_ns = meta_int(r, SP_META_START_TIME_NS, 0);
	ri->end_ns = meta_int(r, SP_META_FINALIZE_TIME_NS, 0);
	ri->partial = meta_int(r, SP_META_PARTIAL, 0) != 0;
	ri->signo = (int)meta_int(r, SP_META_PARTIAL_SIGNAL, 0);
	return 0;
}

/* The file's groups into the merged ones; the call-site ids of its ranks
 * (inputs first..in->n) renumbered to the merged /callsites. */
static int read_groups(struct rank_inputs *in, const char *path, size_t first)
{
	uint32_t *map, nmap;
	int ret = sp_groups_read_file(&in->groups, path, &map, &nmap);
	for (size_t i = first; !ret && i < in->n; i++) {
		struct rank_input *ri = &in->v[i];
		int32_t *ids = ri->mpi_i32 ? ri->mpi_i32 + 4 * ri->nmpi : NULL;
		for (uint64_t k = 0; ids && ri->has_sites && k < ri->nmpi; k++)
			ids[k] = ids[k] >= 0 && map && (uint64_t)ids[k] < nmap ? (int32_t)map[ids[k]] : -1;
		ri->has_sites &= map != NULL;
	}
	free(map);
	return ret;
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
	/* Upstream's native .spt traces (and JSON) carry no HDF5 groups. */
	int ret = nr && sp_reader_input_format(r) == SP_INPUT_HDF5 ? read_groups(in, path, in->n - nr)
								     : 0;
	if (ret) {
		cli_error(c, "%s: %s", path, ret == -ENOMEM ? "out of memory"
			  : "its /callsites, /mpi_communicators or /clock_sync does not hold together");
		return EXIT_USAGE;
	}
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

/* The first HDF5 input's metadata keys (the run's description) except the
 * ones that describe the merged run, which are set after. */
static int copy_meta(struct sp_reader *r, struct sp_run_meta *m)
{
	static const char *const own[] = { SP_META_MPI_SIZE, SP_META_MPI_RANK,
		SP_META_START_TIME_NS, SP_META_FINALIZE_TIME_NS, SP_META_DROPPED, SP_META_PARTIAL,
		SP_META_PARTIAL_SIGNAL, SP_META_MERGED_FROM, SP_META_TOTAL_CORES,
		SP_META_MISSING_RANKS, NULL };
	int ret = 0;
	for (size_t i = 0; !ret && r && i < sp_reader_num_metadata(r); i++) {
		const struct sp_meta *x = sp_reader_metadata(r, i);
		bool skip = false;
		for (size_t k = 0; own[k]; k++)
			skip |= strcmp(x->key, own[k]) == 0;
		if (skip)
			continue;
		switch (x->type) {
		case SP_META_INT:
			ret = sp_meta_set_int(m, x->key, x->i);
			break;
		case SP_META_FLOAT:
			ret = sp_meta_set_double(m, x->key, x->f);
			break;
		case SP_META_STRING:
			ret = sp_meta_set_str(m, x->key, x->s ? x->s : "");
			break;
		case SP_META_STRINGS:
			ret = sp_meta_set_strlist(m, x->key, (const char *const *)x->strv, x->n);
			break;
		}
	}
	if (!ret && !r)
		ret = sp_meta_set_str(m, SP_META_SOURCE, "native");
	if (!ret && !r)
		ret = sp_meta_set_str(m, SP_META_SOURCE_LANGUAGE, "c");
	return ret;
}

/* The keys of the merged run: size, time span, partial. */
static int run_meta(const struct rank_inputs *in, struct sp_run_meta *m, bool partial, int signo,
		    int32_t size)
{
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	for (size_t i = 0; i < in->n; i++) {
		if (in->v[i].start_ns && in->v[i].start_ns < t0)
			t0 = in->v[i].start_ns;
		if (in->v[i].end_ns > t1)
			t1 = in->v[i].end_ns;
	}
	int ret = sp_meta_set_int(m, SP_META_MPI_SIZE, size);
	if (!ret && t0 != INT64_MAX)
		ret = sp_meta_set_int(m, SP_META_START_TIME_NS, t0);
	if (!ret && t1 != INT64_MIN)
		ret = sp_meta_set_int(m, SP_META_FINALIZE_TIME_NS, t1);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_PARTIAL, partial);
	if (!ret && partial)
		ret = sp_meta_set_int(m, SP_META_PARTIAL_SIGNAL, signo);
	const char *const *reasons;
	size_t nreasons = spill_names_reasons(&reasons);
	if (!ret && nreasons)
		ret = sp_meta_set_strlist(m, SP_META_UNRESOLVED_MODULES, reasons, nreasons);
	return ret;
}

/* The ranks below size that no input holds (inputs sorted by rank), as
 * metadata missing_ranks "1,5"; nothing when none is missing. */
static int missing_meta(const struct rank_inputs *in, struct sp_run_meta *m, int32_t size)
{
	char *list = NULL;
	size_t len = 0, at = 0;
	FILE *f = open_memstream(&list, &len);
	if (!f)
		return -ENOMEM;
	for (int32_t r = 0; r < size; r++) {
		while (at < in->n && in->v[at].rank < (uint32_t)r)
			at++;
		if (at >= in->n || in->v[at].rank != (uint32_t)r)
			fprintf(f, "%s%d", ftell(f) ? "," : "", (int)r);
	}
	int ret = fclose(f) ? -ENOMEM : 0;
	if (!ret && len)
		ret = sp_meta_set_str(m, SP_META_MISSING_RANKS, list);
	free(list);
	return ret;
}

/* Input i as a part: its snapshot and MPI values, region names mapped to
 * the merged table (in->names). */
static int input_part(struct rank_inputs *in, size_t i, struct sp_part_size *z, uint32_t **ret_map)
{
	struct rank_input *ri = &in->v[i];
	uint32_t *map = calloc(ri->s.nnames + 1, sizeof *map);
	if (!map)
		return -ENOMEM;
	int ret = 0;
	uint32_t n_old = in->names.n;
	for (uint32_t k = 0; !ret && k < ri->s.nnames; k++)
		ret = sp_names_add(&in->names, ri->s.names[k], &map[k]);
	if (!ret)
		ret = sp_names_kinds(&in->names, &in->kinds, n_old, map, ri->s.kinds, ri->s.nnames);
	*z = sp_part_size_of(&ri->s, ri->rank);
	z->nmpi = ri->nmpi;
	if (ri->mpi_offsets)
		z->columns |= SP_WCOL_MPI | (ri->has_sites && in->groups.sites_present ?
					     SP_WCOL_CALLSITE : 0);
	*ret_map = map;
	return ret;
}

/* All inputs, names unified, through the one parts-to-file path. */
static int write_parts(struct rank_inputs *in, const char *out, struct sp_run_meta *meta)
{
	struct sp_part_size *z = calloc(in->n + 1, sizeof *z);
	uint32_t **maps = calloc(in->n + 1, sizeof *maps);
	int ret = z && maps ? 0 : -ENOMEM;
	for (size_t i = 0; !ret && i < in->n; i++)
		ret = input_part(in, i, &z[i], &maps[i]);
	struct sp_assembly *a = NULL;
	if (!ret)
		ret = sp_assembly_create(out, (const char *const *)in->names.v, in->kinds, in->names.n, z,
					 in->n, 0, &a);
	for (size_t i = 0; !ret && i < in->n; i++) {
		struct rank_input *ri = &in->v[i];
		uint64_t n = ri->nmpi;
		struct sp_part_mpi m = { .bytes = ri->mpi_bytes, .peers = ri->mpi_i32,
			.roots = ri->mpi_i32 + n, .tags = ri->mpi_i32 + 2 * n,
			.comms = ri->mpi_i32 + 3 * n, .callsite_ids = ri->mpi_i32 + 4 * n };
		ret = sp_assembly_put_snapshot(a, i, &ri->s, maps[i], ri->mpi_offsets, &m);
	}
	if (!ret) {
		ret = sp_assembly_commit(a, meta, &in->groups);
		a = NULL;
	}
	sp_assembly_destroy(a);
	for (size_t i = 0; maps && i < in->n; i++)
		free(maps[i]);
	free(maps);
	free(z);
	return ret;
}

int rank_inputs_write(const struct cli_common *c, struct rank_inputs *in, const char *out)
{
	bool partial = false;
	int signo = 0;
	int32_t size = 0;
	for (size_t i = 0; i < in->n; i++) {
		struct rank_input *ri = &in->v[i];
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
	struct sp_run_meta meta = { 0 };
	int ret = copy_meta(in->first_h5, &meta);
	if (!ret)
		ret = run_meta(in, &meta, partial, signo, size);
	if (!ret && (size_t)size > in->n)
		ret = missing_meta(in, &meta, size);
	if (!ret)
		ret = write_parts(in, out, &meta);
	sp_meta_free(&meta);
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
	sp_names_free(&in->names);
	free(in->kinds);
	sp_groups_free(&in->groups);
	for (size_t i = 0; i < in->n; i++)
		sp_reader_destroy(in->v[i].reader);
	free(in->v);
	memset(in, 0, sizeof *in);
	spill_names_free();
}

/* The command line shared by merge and recover. */
static const char usage[] = "FILE... -o OUT [--json]";

/* A pattern that matched no file (cli_collect_files keeps it as given). */
static bool unmatched(const char *path)
{
	struct stat st;
	return strpbrk(path, "*?[") && lstat(path, &st) < 0 && errno == ENOENT;
}

/* Patterns that match no file are left out, with one line each, when other
 * inputs remain: the launcher's fallback `merge OUT.part* OUT.spill.*`
 * (finish.c) must work whichever of the two kinds a killed finish left. */
static void drop_unmatched(struct cli_common *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n_files; i++)
		n += !unmatched(c->files[i]);
	if (n == 0 || n == c->n_files)
		return; /* none left: the error names the pattern */
	n = 0;
	for (size_t i = 0; i < c->n_files; i++) {
		if (!unmatched(c->files[i])) {
			c->files[n++] = c->files[i];
			continue;
		}
		fprintf(stderr, "scope-profiler %s: %s: no file matches (left out)\n", c->command,
			c->files[i]);
		free(c->files[i]);
	}
	c->n_files = n;
}

int rank_inputs_main(int argc, char **argv, const char *name, const char *description)
{
	/* Only --json and --help of the common options: merge and recover keep
	 * every region and rank, so --include, --exclude and --ranks are unknown options. */
	static const struct option options[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
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
		fputs(description, stdout); /* the whole --help (cmd-merge.c, cmd-recover.c) */
	} else if (rc == EXIT_OK) {
		if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0)
			rc = cli_usage_error(&c, "no input file given");
		else if (!out)
			rc = cli_usage_error(&c, "no output file given (-o OUT)");
		else
			drop_unmatched(&c);
	}
	struct rank_inputs in = { 0 };
	if (rc == EXIT_OK && !c.help)
		rc = rank_inputs_load(&c, &in);
	if (rc == EXIT_OK && !c.help)
		rc = rank_inputs_write(&c, &in, out);
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
			printf("wrote %s (%zu rank%s, %llu events%s)\n", out, in.n,
			       in.n == 1 ? "" : "s",
			       (unsigned long long)events,
			       unclosed ? "; calls open at the kill are not included" : "");
	}
	rank_inputs_free(&in);
	cli_common_fini(&c);
	return rc;
}
