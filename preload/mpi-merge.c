/* SPDX-License-Identifier: MIT */
/*
 * The merge at MPI_Finalize: every rank's snapshot into one schema-2 file
 * written by rank 0, on the private communicator, recording off.
 * Phase A (names): rank by rank, rank 0 unifies region names and sends each
 * rank its local -> global map, and learns the sizes. Phase B (data): rank
 * by rank, on rank 0's "go", a rank streams rows, events (times, thread)
 * and the MPI values of its MPI rows (row layout, docs/FORMAT.md) in chunks
 * of at most CHUNK, threads and communicators; rank 0 writes each piece as
 * it arrives. Rank 0 never holds more than its own snapshot, the name
 * table and one chunk. A failure on rank 0 turns later "go"s into "skip":
 * every rank always returns.
 */
#define _GNU_SOURCE
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lifecycle.h"
#include "mpi-callsites.h"
#include "mpi-names-table.h"
#include "mpi-record.h"
#include "output.h"
#include "snapshot.h"

#define CHUNK (1u << 18) /* events or MPI values per message: 7 MiB at most */
enum { TAG_HDR = 1, TAG_NAMES, TAG_MAP, TAG_GO, TAG_ROWS, TAG_FILES, TAG_EV, TAG_THR, TAG_COMM,
       TAG_SITES, TAG_SMAP, TAG_MPI, TAG_KINDS };

struct hdr {
	uint64_t names_bytes, nrows, nevents, nthreads, dropped;
	uint32_t nnames, columns, ncomms, ok;
	uint64_t sites_bytes;  /* call-site keys (mpi-callsites.h), unified like names */
	uint32_t nsites, pad;
	uint64_t nmpi;         /* MPI values: the events of the rows with MPI data */
};

struct wire_row {
	uint32_t region, pad;
	uint64_t offset, count, dropped, throttled_calls, file_off;
	int64_t source_line, throttled_ns;
	uint64_t throttle_timed;
	int64_t throttled_ci_ns, throttled_since_ns, patched_since_ns;
	int64_t mpi_offset;    /* into the rank's MPI values, -1 none */
	struct sp_summary_record summary;
};

#define EV_BYTES (3 * 8)          /* start, end, thread */
#define MPI_VBYTES (8 + 5 * 4)    /* bytes; peer, root, tag, comm, call site */

/* Everything one rank contributes. */
struct local {
	struct sp_snapshot s;
	struct hdr h;
	char *names;           /* names back to back, NUL-terminated */
	uint32_t *map;         /* local name -> global id */
	int64_t *row_mpi;      /* per row: first of its MPI values, -1 none */
	struct sp_mpi_comm_row *comms;
	struct sp_mpi_sites sites; /* sites.global: local key -> global id */
};

/* ---- this rank's contribution ------------------------------------------- */

/* Whether events [first, first+n) have an MPI value other than -1. */
static bool any_mpi_value(const struct local *l, uint64_t first, uint64_t n)
{
	enum { B = 256 };
	int64_t bytes[B];
	int32_t v[5][B];
	for (uint64_t at = 0; at < n; at += B) {
		uint64_t m = n - at < B ? n - at : B;
		sp_mpi_columns(&l->s, first + at, m, bytes, v[0], v[1], v[2], v[3]);
		sp_mpi_site_column(&l->s, first + at, m, &l->sites, v[4]);
		for (uint64_t i = 0; i < m; i++)
			if (bytes[i] != -1 || v[0][i] != -1 || v[1][i] != -1 || v[2][i] != -1 ||
			    v[3][i] != -1 || v[4][i] != -1)
				return true;
	}
	return false;
}

/*
 * The rows that carry MPI data get values (docs/FORMAT.md, row layout):
 * those with a value other than -1, which needs an extension record or an
 * inline communicator (function and manual regions have neither), as
 * `merge` decides from a file. Fills row_mpi; returns the values in all.
 */
static uint64_t mpi_rows(const struct local *l)
{
	const struct sp_snapshot *s = &l->s;
	uint64_t n = 0;
	for (uint32_t i = 0; i < s->nrows; i++) {
		const struct sp_snap_row *r = &s->rows[i];
		uint64_t e = r->offset, end = r->offset + r->count;
		while (s->aux && e < end && s->aux[e] == 0)
			e++;
		bool any = s->aux && e < end && any_mpi_value(l, e, end - e);
		l->row_mpi[i] = any ? (int64_t)n : -1;
		n += any ? r->count : 0;
	}
	return n;
}

static int local_take(struct local *l, bool recorded)
{
	memset(l, 0, sizeof *l);
	int ret = recorded ? sp_snapshot_take(&l->s) : 0;
	if (ret)
		memset(&l->s, 0, sizeof l->s);
	uint32_t ncomms = 0;
	if (!ret && sp_mpi_comm_rows(&l->comms, &ncomms))
		ncomms = 0;
	struct sp_snapshot *s = &l->s;
	for (uint32_t i = 0; i < s->nnames; i++)
		l->h.names_bytes += strlen(s->names[i]) + 1;
	l->names = malloc(l->h.names_bytes + 1);
	l->map = malloc((s->nnames + 1) * sizeof *l->map);
	l->row_mpi = malloc((s->nrows + 1) * sizeof *l->row_mpi);
	if (!l->names || !l->map || !l->row_mpi)
		ret = -ENOMEM;
	char *p = l->names;
	for (uint32_t i = 0; !ret && i < s->nnames; i++)
		p = stpcpy(p, s->names[i]) + 1;
	l->h.ok = !ret;
	if (ret) { /* contribute nothing, but take part */
		sp_snapshot_free(s);
		l->h.names_bytes = 0;
		ncomms = 0;
	}
	l->h.nnames = s->nnames;
	l->h.nrows = s->nrows;
	l->h.nevents = s->nevents;
	l->h.nthreads = s->nthreads;
	l->h.dropped = s->dropped;
	l->h.columns = sp_output_columns(s) | (s->aux ? SP_COL_MPI : 0);
	l->h.ncomms = ncomms;
	if (s->aux && sp_mpi_sites_enabled()) {
		l->h.columns |= SP_COL_CALLSITE;
		if (sp_mpi_sites_take(&l->sites))
			fprintf(stderr, "scope-profiler: out of memory resolving MPI call sites\n");
		l->h.sites_bytes = l->sites.bytes;
		l->h.nsites = l->sites.n;
	}
	l->h.nmpi = ret ? 0 : mpi_rows(l); /* after the sites: they count */
	return ret;
}

static void local_free(struct local *l)
{
	sp_snapshot_free(&l->s);
	free(l->names);
	free(l->map);
	free(l->row_mpi);
	free(l->comms);
	sp_mpi_sites_free(&l->sites);
}

/* Rows with global region ids; source files as offsets into a blob. */
static int pack_rows(const struct local *l, struct wire_row **ret_rows, char **ret_files,
		     uint64_t *ret_fbytes)
{
	const struct sp_snapshot *s = &l->s;
	struct wire_row *rows = calloc(s->nrows + 1, sizeof *rows);
	uint64_t fb = 1;
	for (uint32_t i = 0; i < s->nrows; i++)
		fb += s->rows[i].source_file ? strlen(s->rows[i].source_file) + 1 : 0;
	char *files = malloc(fb), *p = files;
	if (!rows || !files) {
		free(rows);
		free(files);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->nrows; i++) {
		const struct sp_snap_row *r = &s->rows[i];
		rows[i] = (struct wire_row){ .region = l->map[r->region], .offset = r->offset,
			.count = r->count, .dropped = r->dropped, .throttled_calls = r->throttled_calls,
			.throttled_ns = r->throttled_ns, .source_line = r->source_line,
			.throttle_timed = r->throttle_timed, .throttled_ci_ns = r->throttled_ci_ns,
			.throttled_since_ns = r->throttled_since_ns, .patched_since_ns = r->patched_since_ns,
			.mpi_offset = l->row_mpi[i], .summary = r->summary, .file_off = UINT64_MAX };
		if (r->source_file) {
			rows[i].file_off = (uint64_t)(p - files);
			p = stpcpy(p, r->source_file) + 1;
		}
	}
	*ret_rows = rows;
	*ret_files = files;
	*ret_fbytes = (uint64_t)(p - files) + 1;
	return 0;
}

/* Events [first, first+n) as columns: start, end, thread (int64). */
static void pack_events(const struct local *l, uint64_t first, uint64_t n, char *buf)
{
	const struct sp_snapshot *s = &l->s;
	int64_t *start = (int64_t *)buf, *end = start + n, *thr = end + n;
	memcpy(start, s->start + first, n * 8);
	memcpy(end, s->end + first, n * 8);
	for (uint64_t i = 0; i < n; i++)
		thr[i] = s->thread[first + i];
}

/* Where the next MPI value of a rank comes from: row, event in the row. */
struct mpi_cursor {
	uint32_t row;
	uint64_t k;
};

/* The next n MPI values (the events of the MPI rows, row order) as columns:
 * bytes (int64), peer, root, tag, comm, call site (int32). */
static void pack_mpi(const struct local *l, struct mpi_cursor *c, uint64_t n, char *buf)
{
	const struct sp_snapshot *s = &l->s;
	int64_t *bytes = (int64_t *)buf;
	int32_t *peer = (int32_t *)(bytes + n), *root = peer + n, *tag = root + n, *comm = tag + n;
	int32_t *site = comm + n;
	for (uint64_t i = 0; i < n && c->row < s->nrows;) {
		const struct sp_snap_row *row = &s->rows[c->row];
		if (l->row_mpi[c->row] < 0 || c->k == row->count) {
			c->row++;
			c->k = 0;
			continue;
		}
		uint64_t m = row->count - c->k < n - i ? row->count - c->k : n - i;
		uint64_t e = row->offset + c->k;
		sp_mpi_columns(s, e, m, bytes + i, peer + i, root + i, tag + i, comm + i);
		sp_mpi_site_column(s, e, m, &l->sites, site + i);
		c->k += m;
		i += m;
	}
}

static void pack_threads(const struct sp_snapshot *s, struct sp_writer_thread *t)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct sp_snap_thread *st = &s->threads[i];
		t[i] = (struct sp_writer_thread){ .rank = (uint32_t)sp_mpi_world_rank,
			.index = st->index, .ident = st->ident, .native_id = st->native_id,
			.start_ns = st->start_ns, .end_ns = st->end_ns ? st->end_ns : sp_monotonic_ns(),
			.cpu_ns = -1 };
	}
}

/* ---- transport ------------------------------------------------------------ */

static int send_big(const void *buf, uint64_t n, int tag, MPI_Comm comm)
{
	return PMPI_Send(buf, (int)n, MPI_BYTE, 0, tag, comm) == MPI_SUCCESS ? 0 : -EIO;
}

/* Non-zero rank, phase A: header and names out, map back. */
static int phase_a_send(struct local *l, MPI_Comm comm)
{
	int ret = send_big(&l->h, sizeof l->h, TAG_HDR, comm);
	if (!ret)
		ret = send_big(l->names, l->h.names_bytes, TAG_NAMES, comm);
	if (!ret)
		ret = send_big(l->s.kinds ? (const void *)l->s.kinds : "", l->h.nnames, TAG_KINDS, comm);
	if (!ret)
		ret = PMPI_Recv(l->map, (int)l->h.nnames, MPI_UINT32_T, 0, TAG_MAP, comm,
				MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -EIO;
	if (!ret)
		ret = send_big(l->sites.blob ? l->sites.blob : "", l->h.sites_bytes, TAG_SITES, comm);
	if (!ret)
		ret = PMPI_Recv(l->sites.global ? l->sites.global : (uint32_t *)&l->h,
				l->sites.global ? (int)l->h.nsites : 0, MPI_UINT32_T, 0, TAG_SMAP,
				comm, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -EIO;
	return ret;
}

/* Non-zero rank, phase B: wait for go, then stream. */
static int phase_b_send(struct local *l, MPI_Comm comm)
{
	int go[2];
	if (PMPI_Recv(go, 2, MPI_INT, 0, TAG_GO, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return -EIO;
	if (!go[0])
		return 0;
	struct wire_row *rows = NULL;
	char *files = NULL;
	uint64_t fbytes = 0;
	int ret = pack_rows(l, &rows, &files, &fbytes);
	/* A pack failure still sends the expected messages, empty. */
	uint64_t nrows = ret ? 0 : l->h.nrows;
	send_big(&fbytes, sizeof fbytes, TAG_FILES, comm);
	send_big(files ? files : "", ret ? 0 : fbytes, TAG_FILES, comm);
	send_big(rows ? (void *)rows : (void *)"", nrows * sizeof *rows, TAG_ROWS, comm);
	free(rows);
	free(files);
	uint64_t most = l->h.nevents < CHUNK ? l->h.nevents : CHUNK;
	char *buf = malloc((size_t)most * (EV_BYTES > MPI_VBYTES ? EV_BYTES : MPI_VBYTES) + 1);
	for (uint64_t at = 0; at < l->h.nevents; at += CHUNK) {
		uint64_t n = l->h.nevents - at < CHUNK ? l->h.nevents - at : CHUNK;
		if (buf)
			pack_events(l, at, n, buf);
		send_big(buf ? buf : "", buf ? n * EV_BYTES : 0, TAG_EV, comm);
	}
	struct mpi_cursor cur = { 0 };
	for (uint64_t at = 0; buf && at < l->h.nmpi; at += CHUNK) {
		uint64_t n = l->h.nmpi - at < CHUNK ? l->h.nmpi - at : CHUNK;
		pack_mpi(l, &cur, n, buf);
		send_big(buf, n * MPI_VBYTES, TAG_MPI, comm);
	}
	for (uint64_t at = 0; !buf && at < l->h.nmpi; at += CHUNK)
		send_big("", 0, TAG_MPI, comm);
	free(buf);
	if (go[1]) {
		struct sp_writer_thread *t = calloc(l->h.nthreads + 1, sizeof *t);
		if (t)
			pack_threads(&l->s, t);
		send_big(t ? (void *)t : (void *)"", t ? l->h.nthreads * sizeof *t : 0, TAG_THR, comm);
		free(t);
	}
	send_big(l->comms ? (void *)l->comms : (void *)"",
		 l->comms ? l->h.ncomms * sizeof *l->comms : 0, TAG_COMM, comm);
	return ret;
}

/* ---- rank 0 --------------------------------------------------------------- */

struct rank_size {
	uint64_t nrows, nevents, nthreads, nmpi;
	uint32_t ncomms;
};

struct root {
	MPI_Comm comm;
	struct sp_writer *w;
	unsigned cols;
	int ret;                   /* first failure; later data is drained, not written */
	uint64_t row_at, ev_at, thr_at, comm_at, mpi_at;
	char *chunk;               /* CHUNK events or MPI values */
	struct sp_mpi_comm_row *comms;
	uint32_t *comm_ranks;
};

static int write_rows(struct root *R, const struct wire_row *wr, uint64_t n, const char *files,
		      uint32_t rank)
{
	struct sp_writer_row *rows = calloc(n + 1, sizeof *rows);
	if (!rows)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		rows[i] = (struct sp_writer_row){ .region = wr[i].region, .rank = rank,
			.offset = R->ev_at + wr[i].offset, .count = wr[i].count,
			.mpi_offset = wr[i].mpi_offset < 0 ? -1 : (int64_t)R->mpi_at + wr[i].mpi_offset,
			.source_line = wr[i].source_line,
			.source_file = wr[i].file_off == UINT64_MAX ? NULL : files + wr[i].file_off,
			.summary = wr[i].summary, .dropped = wr[i].dropped,
			.throttled_calls = wr[i].throttled_calls, .throttled_ns = wr[i].throttled_ns,
			.throttle_timed = wr[i].throttle_timed, .throttled_ci_ns = wr[i].throttled_ci_ns,
			.throttled_since_ns = wr[i].throttled_since_ns,
			.patched_since_ns = wr[i].patched_since_ns };
	int ret = sp_writer_put_rows(R->w, R->row_at, n, rows);
	free(rows);
	return ret;
}

static int write_chunk(struct root *R, uint64_t n, uint64_t at)
{
	int64_t *start = (int64_t *)R->chunk, *end = start + n, *thr = end + n;
	struct sp_writer_events ev = { .start = start, .end = end, .thread_ids = thr };
	return sp_writer_put_events(R->w, at, n, &ev);
}

static int write_mpi_chunk(struct root *R, uint64_t n, uint64_t at)
{
	int64_t *bytes = (int64_t *)R->chunk;
	int32_t *peer = (int32_t *)(bytes + n), *root = peer + n, *tag = root + n, *comm = tag + n;
	struct sp_writer_mpi m = { .bytes = bytes, .peers = peer, .roots = root, .tags = tag,
				   .comms = comm, .callsite_ids = comm + n };
	return sp_writer_put_mpi(R->w, at, n, &m);
}

/* Receive exactly n bytes or fail. */
static int recv_exact(struct root *R, void *buf, uint64_t n, int src, int tag)
{
	MPI_Status st;
	int got = 0;
	if (PMPI_Recv(buf, (int)n, MPI_BYTE, src, tag, R->comm, &st) != MPI_SUCCESS ||
	    PMPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || (uint64_t)got != n)
		return -EIO;
	return 0;
}

static void fail(struct root *R, int ret)
{
	if (!R->ret)
		R->ret = ret;
}

/* Phase B for rank 0 itself. */
static void root_own(struct root *R, struct local *l)
{
	struct wire_row *rows = NULL;
	char *files = NULL;
	uint64_t fb;
	fail(R, pack_rows(l, &rows, &files, &fb));
	if (!R->ret)
		fail(R, write_rows(R, rows, l->h.nrows, files, 0));
	free(rows);
	free(files);
	for (uint64_t at = 0; !R->ret && at < l->h.nevents; at += CHUNK) {
		uint64_t n = l->h.nevents - at < CHUNK ? l->h.nevents - at : CHUNK;
		pack_events(l, at, n, R->chunk);
		fail(R, write_chunk(R, n, R->ev_at + at));
	}
	struct mpi_cursor cur = { 0 };
	for (uint64_t at = 0; !R->ret && at < l->h.nmpi; at += CHUNK) {
		uint64_t n = l->h.nmpi - at < CHUNK ? l->h.nmpi - at : CHUNK;
		pack_mpi(l, &cur, n, R->chunk);
		fail(R, write_mpi_chunk(R, n, R->mpi_at + at));
	}
	if (!R->ret && (R->cols & SP_COL_THREAD_IDS)) {
		struct sp_writer_thread *t = calloc(l->h.nthreads + 1, sizeof *t);
		if (!t)
			fail(R, -ENOMEM);
		else {
			pack_threads(&l->s, t);
			fail(R, sp_writer_put_threads(R->w, R->thr_at, l->h.nthreads, t));
		}
		free(t);
	}
	for (uint32_t i = 0; i < l->h.ncomms; i++) {
		R->comms[R->comm_at + i] = l->comms[i];
		R->comm_ranks[R->comm_at + i] = 0;
	}
}

/* Phase B for rank r > 0: every message is received, written only if
 * nothing failed so far. */
static void root_remote(struct root *R, int r, const struct rank_size *z)
{
	int go[2] = { !R->ret, !!(R->cols & SP_COL_THREAD_IDS) };
	if (PMPI_Send(go, 2, MPI_INT, r, TAG_GO, R->comm) != MPI_SUCCESS || !go[0]) {
		fail(R, -EIO);
		return;
	}
	uint64_t fb = 0;
	int ret = recv_exact(R, &fb, sizeof fb, r, TAG_FILES);
	char *files = malloc(fb + 1);
	struct wire_row *rows = malloc((z->nrows + 1) * sizeof *rows);
	if (!files || !rows) /* still receive, into the chunk buffer: sizes are small */
		ret = -ENOMEM;
	MPI_Status st;
	PMPI_Recv(files ? files : R->chunk, (int)(files ? fb : 0), MPI_BYTE, r, TAG_FILES,
		  R->comm, &st);
	if (!ret)
		ret = recv_exact(R, rows, z->nrows * sizeof *rows, r, TAG_ROWS);
	else
		PMPI_Recv(R->chunk, 0, MPI_BYTE, r, TAG_ROWS, R->comm, &st);
	fail(R, ret);
	if (!R->ret)
		fail(R, write_rows(R, rows, z->nrows, files, (uint32_t)r));
	free(rows);
	free(files);
	for (uint64_t at = 0; at < z->nevents; at += CHUNK) {
		uint64_t n = z->nevents - at < CHUNK ? z->nevents - at : CHUNK;
		fail(R, recv_exact(R, R->chunk, n * EV_BYTES, r, TAG_EV));
		if (!R->ret)
			fail(R, write_chunk(R, n, R->ev_at + at));
	}
	for (uint64_t at = 0; at < z->nmpi; at += CHUNK) {
		uint64_t n = z->nmpi - at < CHUNK ? z->nmpi - at : CHUNK;
		fail(R, recv_exact(R, R->chunk, n * MPI_VBYTES, r, TAG_MPI));
		if (!R->ret)
			fail(R, write_mpi_chunk(R, n, R->mpi_at + at));
	}
	if (go[1]) {
		struct sp_writer_thread *t = calloc(z->nthreads + 1, sizeof *t);
		fail(R, t ? recv_exact(R, t, z->nthreads * sizeof *t, r, TAG_THR) : -ENOMEM);
		if (!t)
			PMPI_Recv(R->chunk, (int)(z->nthreads * sizeof *t), MPI_BYTE, r, TAG_THR,
				  R->comm, &st);
		if (!R->ret)
			fail(R, sp_writer_put_threads(R->w, R->thr_at, z->nthreads, t));
		free(t);
	}
	fail(R, recv_exact(R, R->comms + R->comm_at, z->ncomms * sizeof *R->comms, r, TAG_COMM));
	for (uint32_t i = 0; i < z->ncomms; i++)
		R->comm_ranks[R->comm_at + i] = (uint32_t)r;
}

/* Phase A on rank 0, call sites of rank r (after its names): unify the
 * keys, send the map back. */
static int root_sites(struct local *l0, MPI_Comm comm, int r, const struct hdr *h,
		      struct sp_mpi_names *sites)
{
	if (r == 0)
		return l0->sites.global ? sp_mpi_names_map(sites, l0->sites.blob, h->nsites,
							   l0->sites.global) : 0;
	MPI_Status st;
	char *blob = malloc(h->sites_bytes + 1);
	uint32_t *map = calloc(h->nsites + 1, sizeof *map);
	int ret = blob && map ? 0 : -ENOMEM;
	PMPI_Recv(blob ? blob : (char *)&st, blob ? (int)h->sites_bytes : 0, MPI_BYTE, r, TAG_SITES,
		  comm, &st);
	if (!ret)
		ret = sp_mpi_names_map(sites, blob, h->nsites, map);
	PMPI_Send(map ? map : (uint32_t *)&st, map ? (int)h->nsites : 0, MPI_UINT32_T, r, TAG_SMAP,
		  comm);
	free(blob);
	free(map);
	return ret;
}

/* Phase A on rank 0: the kinds of the global names a rank added (ids
 * n_old .. t->n-1, given in first-seen order) from its kinds lk. */
static int root_kinds(struct sp_mpi_names *t, uint8_t **kinds, uint32_t n_old, const uint32_t *map,
		      const uint8_t *lk, uint32_t nl)
{
	uint8_t *k = realloc(*kinds, (size_t)t->n + 1);
	if (!k)
		return -ENOMEM;
	*kinds = k;
	memset(k + n_old, SP_KIND_FUNCTION, t->n - n_old); /* kept if lk holds no valid kind */
	for (uint32_t i = 0; i < nl; i++)
		if (map[i] >= n_old && map[i] < t->n && lk[i] < SP_KIND_COUNT)
			k[map[i]] = lk[i];
	return 0;
}

/* Phase A on rank 0: unify names and their kinds, send maps, learn sizes. */
static int root_names(struct local *l0, MPI_Comm comm, struct sp_mpi_names *t, uint8_t **kinds,
		      struct rank_size *z, struct hdr *tot, struct sp_mpi_names *sites)
{
	int ret = 0;
	for (int r = 0; r < sp_mpi_world_size; r++) {
		struct hdr h = l0->h;
		char *blob = l0->names;
		uint32_t *map = l0->map, n_old = t->n;
		uint8_t *lk = l0->s.kinds;
		if (r > 0) {
			MPI_Status st;
			if (PMPI_Recv(&h, sizeof h, MPI_BYTE, r, TAG_HDR, comm, &st) != MPI_SUCCESS)
				return -EIO;
			blob = malloc(h.names_bytes + 1);
			map = calloc(h.nnames + 1, sizeof *map);
			lk = malloc((size_t)h.nnames + 1);
			PMPI_Recv(blob ? blob : (char *)&st, blob ? (int)h.names_bytes : 0, MPI_BYTE, r,
				  TAG_NAMES, comm, &st);
			PMPI_Recv(lk ? lk : (uint8_t *)&st, lk ? (int)h.nnames : 0, MPI_BYTE, r,
				  TAG_KINDS, comm, &st);
			if (!blob || !map || !lk)
				ret = ret ? ret : -ENOMEM;
		}
		if (!ret)
			ret = sp_mpi_names_map(t, blob, h.nnames, map);
		if (!ret && h.nnames)
			ret = root_kinds(t, kinds, n_old, map, lk, h.nnames);
		if (r > 0) {
			PMPI_Send(map ? map : (uint32_t *)&h, map ? (int)h.nnames : 0, MPI_UINT32_T, r,
				  TAG_MAP, comm);
			free(blob);
			free(map);
			free(lk);
		}
		int sret = root_sites(l0, comm, r, &h, sites);
		ret = ret ? ret : sret;
		if (!h.ok)
			fprintf(stderr, "scope-profiler: rank %d could not take its snapshot; "
				"its events are missing\n", r);
		z[r] = (struct rank_size){ h.nrows, h.nevents, h.nthreads, h.nmpi, h.ncomms };
		tot->nrows += h.nrows;
		tot->nevents += h.nevents;
		tot->nmpi += h.nmpi;
		tot->nthreads += h.nthreads;
		tot->ncomms += h.ncomms;
		tot->dropped += h.dropped;
		tot->columns |= h.columns;
	}
	return ret;
}

/* /mpi_communicators, added once the file is in place (the writer has no
 * extension groups); a failure leaves a valid file without the table. */
static int write_comms(const char *path, const struct root *R, uint64_t n)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	if (f < 0)
		return -EIO;
	hid_t g = H5Gcreate2(f, SP_GROUP_MPI_COMMS, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int ret = g < 0 ? -EIO : 0;
	int32_t *col = malloc((n + 1) * sizeof *col);
	/* Dataset names of /mpi_communicators (docs/FORMAT.md). */
	const char *names[] = { "ranks", "ids", "sizes", "remote_sizes", "leaders" };
	for (int k = 0; !ret && col && k < 5; k++) {
		for (uint64_t i = 0; i < n; i++) {
			const struct sp_mpi_comm_row *c = &R->comms[i];
			int32_t v[] = { (int32_t)R->comm_ranks[i], c->id, c->size, c->remote_size,
					c->leader };
			col[i] = v[k];
		}
		hsize_t dims = n;
		hid_t sp = H5Screate_simple(1, &dims, NULL);
		hid_t d = H5Dcreate2(g, names[k], k ? H5T_STD_I32LE : H5T_STD_U32LE, sp, H5P_DEFAULT,
				     H5P_DEFAULT, H5P_DEFAULT);
		if (d < 0 || (n && H5Dwrite(d, k ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32, H5S_ALL,
					    H5S_ALL, H5P_DEFAULT, col) < 0))
			ret = -EIO;
		if (d >= 0)
			H5Dclose(d);
		H5Sclose(sp);
	}
	free(col);
	if (g >= 0)
		H5Gclose(g);
	return H5Fclose(f) < 0 || ret ? -EIO : 0;
}

static int root_finish(struct root *R, const struct hdr *tot, int64_t t0,
		       const struct sp_mpi_names *sites)
{
	struct sp_run_info run;
	sp_run_info_init(&run, 0, sp_mpi_world_size);
	struct sp_meta meta = { 0 };
	int ret = sp_meta_collect(&meta, &run);
	if (!ret)
		ret = sp_meta_set_int(&meta, SP_META_DROPPED, (int64_t)tot->dropped);
	if (!ret)
		ret = sp_meta_set_int(&meta, "mpi_merge_ns", sp_monotonic_ns() - t0);
	if (!ret)
		ret = sp_writer_put_metadata(R->w, &meta);
	sp_meta_free(&meta);
	if (!ret) {
		ret = sp_writer_commit(R->w);
		R->w = NULL;
	}
	if (!ret && write_comms(sp_config.output, R, tot->ncomms))
		fprintf(stderr, "scope-profiler: could not add %s to %s\n", SP_GROUP_MPI_COMMS,
			sp_config.output);
	if (!ret && (R->cols & SP_COL_CALLSITE) && sp_mpi_sites_write(sp_config.output, sites))
		fprintf(stderr, "scope-profiler: could not add %s to %s\n", SP_GROUP_CALLSITES,
			sp_config.output);
	return ret;
}

static void merge_root(struct local *l0, MPI_Comm comm)
{
	int64_t t0 = sp_monotonic_ns();
	int P = sp_mpi_world_size;
	struct sp_mpi_names t = { 0 }, sites = { 0 };
	uint8_t *kinds = NULL;
	struct hdr tot = { 0 };
	struct rank_size *z = calloc((size_t)P, sizeof *z);
	struct root R = { .comm = comm };
	if (!z) { /* cannot even track sizes: tell nobody to send */
		fprintf(stderr, "scope-profiler: out of memory at MPI_Finalize\n");
		return;
	}
	R.ret = root_names(l0, comm, &t, &kinds, z, &tot, &sites);
	R.cols = tot.columns;
	struct sp_writer_layout layout = { .nnames = t.n, .names = (const char *const *)t.v,
		.kinds = t.n ? kinds : NULL,
		.nrows = tot.nrows, .nevents = tot.nevents, .nmpi = tot.nmpi,
		.nthreads = (R.cols & SP_COL_THREAD_IDS) ? tot.nthreads : 0, .columns = R.cols,
		.compression = (int)sp_config.compression };
	R.chunk = malloc((size_t)CHUNK * (EV_BYTES > MPI_VBYTES ? EV_BYTES : MPI_VBYTES));
	R.comms = calloc(tot.ncomms + 1, sizeof *R.comms);
	R.comm_ranks = calloc(tot.ncomms + 1, sizeof *R.comm_ranks);
	if (!R.chunk || !R.comms || !R.comm_ranks)
		fail(&R, -ENOMEM);
	if (!R.ret)
		R.ret = sp_writer_create(sp_config.output, &layout, &R.w);
	for (int r = 0; r < P; r++) {
		if (r == 0 && !R.ret)
			root_own(&R, l0);
		else if (r > 0)
			root_remote(&R, r, &z[r]);
		R.row_at += z[r].nrows;
		R.ev_at += z[r].nevents;
		R.thr_at += (R.cols & SP_COL_THREAD_IDS) ? z[r].nthreads : 0;
		R.comm_at += z[r].ncomms;
		R.mpi_at += z[r].nmpi;
	}
	if (!R.ret)
		R.ret = root_finish(&R, &tot, t0, &sites);
	if (R.ret)
		fprintf(stderr, "scope-profiler: could not write %s: %s\n", sp_config.output,
			strerror(-R.ret));
	else if (!sp_config.quiet)
		fprintf(stderr, "scope-profiler: wrote %s (%d ranks, %u regions, %llu events)\n",
			sp_config.output, P, t.n, (unsigned long long)tot.nevents);
	sp_writer_destroy(R.w);
	free(R.chunk);
	free(R.comms);
	free(R.comm_ranks);
	free(z);
	free(kinds);
	sp_mpi_names_free(&t);
	sp_mpi_names_free(&sites);
}

void sp_mpi_before_finalize(void)
{
	int e = errno;
	MPI_Comm comm = sp_mpi_private_comm;
	bool mine = sp_lifecycle_begin_finalize(); /* stops recording */
	int any = mine, rank = sp_mpi_world_rank;
	if (comm == MPI_COMM_NULL ||
	    PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
		any = 0;
	if (any) {
		struct local l;
		local_take(&l, mine);
		if (rank == 0)
			merge_root(&l, comm);
		else if (!phase_a_send(&l, comm))
			phase_b_send(&l, comm);
		local_free(&l);
	} else if (mine && comm == MPI_COMM_NULL) {
		fprintf(stderr, "scope-profiler: no private communicator; rank %d not merged\n", rank);
	}
	if (mine) {
		sp_mpi_records_reset();
		sp_lifecycle_end_finalize();
	}
	if (comm != MPI_COMM_NULL) {
		PMPI_Comm_free(&sp_mpi_private_comm);
		sp_mpi_private_comm = MPI_COMM_NULL;
	}
	errno = e;
}
