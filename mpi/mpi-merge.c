/* SPDX-License-Identifier: MIT */
/*
 * The merge at MPI_Finalize: every rank's snapshot into one schema-2 file
 * written by rank 0, on the private communicator, recording off.
 * Phase A (names): rank by rank, rank 0 unifies region names and sends each
 * rank its local -> global map, and learns the sizes. Phase B (data): rank
 * by rank, on rank 0's "go", a rank streams rows, events (times, thread)
 * and the MPI values of its MPI rows (row layout, docs/FORMAT.md) in chunks
 * of at most CHUNK, threads and communicators; rank 0 puts each piece into
 * the file (assemble.h) as it arrives. Rank 0 never holds more than its
 * own snapshot, the name table, the groups and one chunk. A failure on
 * rank 0 turns later "go"s into "skip": every rank always returns. A rank
 * that writes its own file (no finalize) goes through the same module.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "functions.h"
#include "lazy.h"
#include "lifecycle.h"
#include "log.h"
#include "mpi-callsites.h"
#include "mpi-clock.h"
#include "mpi-merge.h"
#include "mpi-record.h"
#include "mpi-wait.h"
#include "names.h"
#include "output.h"
#include "snapshot.h"
#include "sp-safe-file.h"

#define CHUNK (1u << 18) /* events or MPI values per message: 7 MiB at most */
enum { TAG_HDR = 1, TAG_NAMES, TAG_MAP, TAG_GO, TAG_ROWS, TAG_FILES, TAG_EV, TAG_THR, TAG_COMM,
       TAG_SITES, TAG_SMAP, TAG_MPI, TAG_KINDS };

/* A row on the wire: the snapshot row (region mapped to the global id,
 * source_file NULL), where its source file is in the rank's blob
 * (UINT64_MAX none) and its first MPI value (-1 none). */
struct wire_row {
	struct sp_snap_row row;
	uint64_t file_off;
	int64_t mpi_offset;
};

#define EV_BYTES (8 + 8 + 4)      /* start, end; thread */
#define MPI_VBYTES SP_MERGE_MPI_VBYTES
#define CHUNK_BYTES (EV_BYTES > MPI_VBYTES ? EV_BYTES : MPI_VBYTES)

/* ---- this rank's contribution ------------------------------------------- */

/* Whether events [first, first+n) have an MPI value other than -1. */
static bool any_mpi_value(const struct sp_merge_local *l, uint64_t first, uint64_t n)
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
static uint64_t mpi_rows(const struct sp_merge_local *l)
{
	const struct sp_snapshot *s = &l->s;
	uint64_t n = 0;
	for (uint32_t i = 0; i < s->nrows; i++) {
		const struct sp_snap_row *r = &s->rows[i];
		uint64_t e = r->offset, end = r->offset + r->count;
		if (end > s->nmem) { /* streamed: no extension records */
			l->row_mpi[i] = -1;
			continue;
		}
		while (s->aux && e < end && s->aux[e] == 0)
			e++;
		bool any = s->aux && e < end && any_mpi_value(l, e, end - e);
		l->row_mpi[i] = any ? (int64_t)n : -1;
		n += any ? r->count : 0;
	}
	return n;
}

/* Whether the stream can have its temporary for rows that several threads
 * recorded (where the output goes, else the temporary directory). */
static bool tmpfile_possible(void)
{
	int d = sp_open_dir_of(sp_config.output);
	int fd = sp_stream_tmpfile(d);
	if (fd >= 0)
		close(fd);
	if (d >= 0)
		close(d);
	return fd >= 0;
}

/*
 * The snapshot, whole, or (may_plan, and the events would take more than
 * SP_MERGE_MEMORY_EVENTS_BYTES, or the test asks: SCOPE_PROFILER_TEST_
 * FINALIZE_PLAN=1) a plan with the MPI rows in memory.
 */
static int take_snapshot(struct sp_merge_local *l, bool may_plan)
{
	struct sp_snapshot_plan *plan;
	int ret = sp_snapshot_plan(&l->s, &plan);
	if (ret)
		return ret;
	const char *t = getenv("SCOPE_PROFILER_TEST_FINALIZE_PLAN");
	bool big = l->s.nevents > SP_MERGE_MEMORY_EVENTS_BYTES / 24 || (t && !strcmp(t, "1"));
	if (may_plan && big && sp_snapshot_plan_shares_rows(&l->s, plan) && !tmpfile_possible()) {
		sp_log(SP_LOG_DEBUG, "finalize", "rank %d: no O_TMPFILE beside %s nor in the "
		       "temporary directory for rows shared by threads: events in memory",
		       sp_mpi_world_rank, sp_config.output);
		big = false;
	}
	if (!may_plan || !big)
		return sp_snapshot_fill(&l->s, plan);
	ret = sp_snapshot_fill_aux(&l->s, plan);
	if (ret) {
		sp_snapshot_plan_free(plan);
		sp_snapshot_free(&l->s);
		return ret;
	}
	l->plan = plan;
	sp_log(SP_LOG_DEBUG, "finalize", "rank %d: %llu events, %llu of them in memory (MPI rows); "
	       "the rest streamed", sp_mpi_world_rank, (unsigned long long)l->s.nevents,
	       (unsigned long long)l->s.nmem);
	return 0;
}

int sp_merge_local_take(struct sp_merge_local *l, bool recorded, bool may_plan)
{
	memset(l, 0, sizeof *l);
	int ret = recorded ? take_snapshot(l, may_plan) : 0;
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
	l->h.columns = sp_part_columns(s) | (s->aux ? SP_WCOL_MPI : 0);
	l->h.ncomms = ncomms;
	if (s->aux && sp_mpi_sites_enabled()) {
		l->h.columns |= SP_WCOL_CALLSITE;
		if (sp_mpi_sites_take(&l->sites))
			sp_log(SP_LOG_WARN, "mpi", "out of memory resolving MPI call sites");
		l->h.sites_bytes = l->sites.bytes;
		l->h.nsites = l->sites.n;
	}
	l->h.nmpi = ret ? 0 : mpi_rows(l); /* after the sites: they count */
	return ret;
}

int sp_merge_local_fill(struct sp_merge_local *l)
{
	if (l->s.nmem == l->s.nevents)
		return 0;
	/* the thread table as it was (a live thread's end is "now") */
	struct sp_snap_thread *threads = l->s.threads;
	uint32_t nthreads = l->s.nthreads;
	l->s.threads = NULL;
	sp_merge_local_free(l);
	int ret = sp_merge_local_take(l, true, false);
	sp_mpi_clock_apply(&l->s);
	if (!ret && l->s.nthreads == nthreads) {
		free(l->s.threads);
		l->s.threads = threads;
		threads = NULL;
	}
	free(threads);
	return ret;
}

void sp_merge_local_free(struct sp_merge_local *l)
{
	sp_snapshot_plan_free(l->plan);
	l->plan = NULL;
	sp_snapshot_free(&l->s);
	free(l->names);
	free(l->map);
	free(l->row_mpi);
	free(l->comms);
	sp_mpi_sites_free(&l->sites);
}

/* Rows with global region ids; source files as offsets into a blob. */
static int pack_rows(const struct sp_merge_local *l, struct wire_row **ret_rows, char **ret_files,
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
		rows[i] = (struct wire_row){ .row = *r, .file_off = UINT64_MAX,
					     .mpi_offset = l->row_mpi[i] };
		rows[i].row.region = l->map[r->region];
		rows[i].row.source_file = NULL;
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

/* Events [first, first+n) as columns: start, end (int64), thread (uint32). */
static void pack_events(const struct sp_merge_local *l, uint64_t first, uint64_t n, char *buf)
{
	const struct sp_snapshot *s = &l->s;
	int64_t *start = (int64_t *)buf, *end = start + n;
	memcpy(start, s->start + first, n * 8);
	memcpy(end, s->end + first, n * 8);
	memcpy(end + n, s->thread + first, n * 4);
}

/* The next n MPI values (the events of the MPI rows, row order) as columns:
 * bytes (int64), peer, root, tag, comm, call site (int32). */
void sp_merge_pack_mpi(const struct sp_merge_local *l, struct sp_merge_cursor *c, uint64_t n,
		       char *buf)
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

/* The part's MPI values [0, n) of a chunk buffer, as the module takes them. */
struct sp_part_mpi sp_merge_mpi_view(char *buf, uint64_t n)
{
	int64_t *bytes = (int64_t *)buf;
	int32_t *peer = (int32_t *)(bytes + n);
	return (struct sp_part_mpi){ .bytes = bytes, .peers = peer, .roots = peer + n,
				     .tags = peer + 2 * n, .comms = peer + 3 * n,
				     .callsite_ids = peer + 4 * n };
}

/* ---- transport ------------------------------------------------------------ */

static int send_big(const void *buf, uint64_t n, int tag, MPI_Comm comm)
{
	return sp_mpi_send(buf, (int)n, MPI_BYTE, 0, tag, comm) == MPI_SUCCESS ? 0 : -EIO;
}

/* Non-zero rank, phase A: header and names out, map back. */
static int phase_a_send(struct sp_merge_local *l, MPI_Comm comm)
{
	int ret = send_big(&l->h, sizeof l->h, TAG_HDR, comm);
	if (!ret)
		ret = send_big(l->names, l->h.names_bytes, TAG_NAMES, comm);
	if (!ret)
		ret = send_big(l->s.kinds ? (const void *)l->s.kinds : "", l->s.kinds ? l->h.nnames : 0,
			       TAG_KINDS, comm);
	if (!ret)
		ret = sp_mpi_recv(l->map, (int)l->h.nnames, MPI_UINT32_T, 0, TAG_MAP, comm,
				MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -EIO;
	if (!ret)
		ret = send_big(l->sites.blob ? l->sites.blob : "", l->h.sites_bytes, TAG_SITES, comm);
	if (!ret)
		ret = sp_mpi_recv(l->sites.global ? l->sites.global : (uint32_t *)&l->h,
				l->sites.global ? (int)l->h.nsites : 0, MPI_UINT32_T, 0, TAG_SMAP,
				comm, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -EIO;
	return ret;
}

/* Non-zero rank, phase B: wait for go, then stream. */
static int phase_b_send(struct sp_merge_local *l, MPI_Comm comm)
{
	int go[2];
	if (sp_mpi_recv(go, 2, MPI_INT, 0, TAG_GO, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
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
	char *buf = malloc((size_t)most * CHUNK_BYTES + 1);
	for (uint64_t at = 0; at < l->h.nevents; at += CHUNK) {
		uint64_t n = l->h.nevents - at < CHUNK ? l->h.nevents - at : CHUNK;
		if (buf)
			pack_events(l, at, n, buf);
		send_big(buf ? buf : "", buf ? n * EV_BYTES : 0, TAG_EV, comm);
	}
	struct sp_merge_cursor cur = { 0 };
	for (uint64_t at = 0; buf && at < l->h.nmpi; at += CHUNK) {
		uint64_t n = l->h.nmpi - at < CHUNK ? l->h.nmpi - at : CHUNK;
		sp_merge_pack_mpi(l, &cur, n, buf);
		send_big(buf, n * MPI_VBYTES, TAG_MPI, comm);
	}
	for (uint64_t at = 0; !buf && at < l->h.nmpi; at += CHUNK)
		send_big("", 0, TAG_MPI, comm);
	free(buf);
	if (go[1])
		send_big(l->h.nthreads ? (void *)l->s.threads : (void *)"",
			 l->h.nthreads * sizeof *l->s.threads, TAG_THR, comm);
	send_big(l->comms ? (void *)l->comms : (void *)"",
		 l->comms ? l->h.ncomms * sizeof *l->comms : 0, TAG_COMM, comm);
	return ret;
}

/* ---- the groups ------------------------------------------------------------ */

/* Communicators of rank `rank` into the file's /mpi_communicators. */
int sp_merge_add_comms(struct sp_groups *g, const struct sp_mpi_comm_row *c, uint32_t n,
		     uint32_t rank)
{
	struct sp_comm_row *rows = malloc((n + 1) * sizeof *rows);
	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		rows[i] = (struct sp_comm_row){ rank, c[i].id, c[i].size, c[i].remote_size,
						c[i].leader };
	int ret = sp_groups_add_comms(g, rows, n);
	free(rows);
	return ret;
}

/* ---- rank 0 --------------------------------------------------------------- */

struct root {
	MPI_Comm comm;
	struct sp_assembly *a;
	unsigned cols;
	int ret;                   /* first failure; later data is drained, not written */
	char *chunk;               /* CHUNK events or MPI values */
	struct sp_groups groups;
	struct sp_mpi_comm_row *comms; /* one rank's, as received */
	uint64_t recv;             /* bytes received from other ranks */
};

/* Receive exactly n bytes or fail. */
static int recv_exact(struct root *R, void *buf, uint64_t n, int src, int tag)
{
	MPI_Status st;
	int got = 0;
	if (sp_mpi_recv(buf, (int)n, MPI_BYTE, src, tag, R->comm, &st) != MPI_SUCCESS ||
	    PMPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || (uint64_t)got != n)
		return -EIO;
	R->recv += n;
	return 0;
}

static void fail(struct root *R, int ret)
{
	if (!R->ret)
		R->ret = ret;
}

/* The MPI values of l in chunks, into the file at part p. */
static void put_own_mpi(struct root *R, struct sp_merge_local *l)
{
	struct sp_merge_cursor cur = { 0 };
	for (uint64_t at = 0; !R->ret && at < l->h.nmpi; at += CHUNK) {
		uint64_t n = l->h.nmpi - at < CHUNK ? l->h.nmpi - at : CHUNK;
		sp_merge_pack_mpi(l, &cur, n, R->chunk);
		struct sp_part_mpi m = sp_merge_mpi_view(R->chunk, n);
		fail(R, sp_assembly_put_mpi(R->a, 0, at, n, &m));
	}
}

/* Phase B for rank 0 itself: its snapshot straight into the file. */
static void root_own(struct root *R, struct sp_merge_local *l)
{
	const struct sp_snapshot *s = &l->s;
	fail(R, sp_assembly_put_rows(R->a, 0, 0, s->nrows, s->rows, l->map, l->row_mpi));
	for (uint64_t at = 0; !R->ret && at < s->nevents; at += CHUNK) {
		uint64_t n = s->nevents - at < CHUNK ? s->nevents - at : CHUNK;
		fail(R, sp_assembly_put_events(R->a, 0, at, n, s->start + at, s->end + at,
					       s->thread + at));
	}
	put_own_mpi(R, l);
	if (!R->ret)
		fail(R, sp_assembly_put_threads(R->a, 0, s->threads));
	if (!R->ret)
		fail(R, sp_merge_add_comms(&R->groups, l->comms, l->h.ncomms, 0));
}

/* Rank r's rows: the wire rows with their source files. */
static int root_rows(struct root *R, int r, const struct sp_part_size *z)
{
	uint64_t fb = 0;
	int ret = recv_exact(R, &fb, sizeof fb, r, TAG_FILES);
	char *files = malloc(fb + 1);
	struct wire_row *wire = malloc((z->nrows + 1) * sizeof *wire);
	struct sp_snap_row *rows = malloc((z->nrows + 1) * sizeof *rows);
	int64_t *mpi = malloc((z->nrows + 1) * sizeof *mpi);
	if (!files || !wire || !rows || !mpi) /* still receive, into the chunk: sizes are small */
		ret = ret ? ret : -ENOMEM;
	MPI_Status st;
	sp_mpi_recv(files ? files : R->chunk, (int)(files ? fb : 0), MPI_BYTE, r, TAG_FILES,
		  R->comm, &st);
	R->recv += files ? fb : 0;
	if (!ret)
		ret = recv_exact(R, wire, z->nrows * sizeof *wire, r, TAG_ROWS);
	else
		sp_mpi_recv(R->chunk, 0, MPI_BYTE, r, TAG_ROWS, R->comm, &st);
	for (uint64_t i = 0; !ret && i < z->nrows; i++) {
		rows[i] = wire[i].row;
		rows[i].source_file = wire[i].file_off < fb ? files + wire[i].file_off : NULL;
		mpi[i] = wire[i].mpi_offset;
	}
	if (files && fb)
		files[fb - 1] = '\0'; /* the blob ends in a terminator */
	if (!ret && !R->ret)
		ret = sp_assembly_put_rows(R->a, (size_t)r, 0, z->nrows, rows, NULL, mpi);
	free(files);
	free(wire);
	free(rows);
	free(mpi);
	return ret;
}

/* Phase B for rank r > 0: every message is received, put only if nothing
 * failed so far. */
static void root_remote(struct root *R, int r, const struct sp_part_size *z, uint32_t ncomms)
{
	int go[2] = { !R->ret, !!(R->cols & SP_WCOL_THREAD_IDS) };
	if (sp_mpi_send(go, 2, MPI_INT, r, TAG_GO, R->comm) != MPI_SUCCESS || !go[0]) {
		fail(R, -EIO);
		return;
	}
	fail(R, root_rows(R, r, z));
	for (uint64_t at = 0; at < z->nevents; at += CHUNK) {
		uint64_t n = z->nevents - at < CHUNK ? z->nevents - at : CHUNK;
		int64_t *start = (int64_t *)R->chunk;
		fail(R, recv_exact(R, R->chunk, n * EV_BYTES, r, TAG_EV));
		if (!R->ret)
			fail(R, sp_assembly_put_events(R->a, (size_t)r, at, n, start, start + n,
						       (const uint32_t *)(start + 2 * n)));
	}
	for (uint64_t at = 0; at < z->nmpi; at += CHUNK) {
		uint64_t n = z->nmpi - at < CHUNK ? z->nmpi - at : CHUNK;
		fail(R, recv_exact(R, R->chunk, n * MPI_VBYTES, r, TAG_MPI));
		struct sp_part_mpi m = sp_merge_mpi_view(R->chunk, n);
		if (!R->ret)
			fail(R, sp_assembly_put_mpi(R->a, (size_t)r, at, n, &m));
	}
	if (go[1]) {
		struct sp_snap_thread *t = calloc(z->nthreads + 1, sizeof *t);
		MPI_Status st;
		fail(R, t ? recv_exact(R, t, z->nthreads * sizeof *t, r, TAG_THR) : -ENOMEM);
		if (!t)
			sp_mpi_recv(R->chunk, (int)(z->nthreads * sizeof *t), MPI_BYTE, r, TAG_THR,
				  R->comm, &st);
		if (!R->ret)
			fail(R, sp_assembly_put_threads(R->a, (size_t)r, t));
		free(t);
	}
	fail(R, recv_exact(R, R->comms, ncomms * sizeof *R->comms, r, TAG_COMM));
	if (!R->ret)
		fail(R, sp_merge_add_comms(&R->groups, R->comms, ncomms, (uint32_t)r));
}

/* Phase A on rank 0, call sites of rank r (after its names): unify the
 * keys, send the map back. */
static int root_sites(struct sp_merge_local *l0, MPI_Comm comm, int r, const struct sp_merge_hdr *h,
		      struct sp_names *sites)
{
	if (r == 0)
		return l0->sites.global ? sp_names_map(sites, l0->sites.blob, h->nsites,
						       l0->sites.global) : 0;
	MPI_Status st;
	char *blob = malloc(h->sites_bytes + 1);
	uint32_t *map = calloc(h->nsites + 1, sizeof *map);
	int ret = blob && map ? 0 : -ENOMEM;
	sp_mpi_recv(blob ? blob : (char *)&st, blob ? (int)h->sites_bytes : 0, MPI_BYTE, r, TAG_SITES,
		  comm, &st);
	if (!ret)
		ret = sp_names_map(sites, blob, h->nsites, map);
	sp_mpi_send(map ? map : (uint32_t *)&st, map ? (int)h->nsites : 0, MPI_UINT32_T, r, TAG_SMAP,
		  comm);
	free(blob);
	free(map);
	return ret;
}

/* Phase A on rank 0: unify names and their kinds, send maps, learn every
 * part's size. */
static int root_names(struct sp_merge_local *l0, MPI_Comm comm, struct sp_names *t, uint8_t **kinds,
		      struct sp_part_size *z, uint32_t *ncomms, struct sp_merge_hdr *tot,
		      struct sp_names *sites, uint64_t *recv)
{
	int ret = 0;
	for (int r = 0; r < sp_mpi_world_size; r++) {
		struct sp_merge_hdr h = l0->h;
		char *blob = l0->names;
		uint32_t *map = l0->map, n_old = t->n;
		uint8_t *lk = l0->s.kinds;
		if (r > 0) {
			MPI_Status st;
			if (sp_mpi_recv(&h, sizeof h, MPI_BYTE, r, TAG_HDR, comm, &st) != MPI_SUCCESS)
				return -EIO;
			blob = malloc(h.names_bytes + 1);
			map = calloc(h.nnames + 1, sizeof *map);
			lk = malloc((size_t)h.nnames + 1);
			if (lk) /* kinds a shorter message leaves out: no kind, a function */
				memset(lk, 0xff, (size_t)h.nnames + 1);
			sp_mpi_recv(blob ? blob : (char *)&st, blob ? (int)h.names_bytes : 0, MPI_BYTE, r,
				  TAG_NAMES, comm, &st);
			sp_mpi_recv(lk ? lk : (uint8_t *)&st, lk ? (int)h.nnames : 0, MPI_BYTE, r,
				  TAG_KINDS, comm, &st);
			if (!blob || !map || !lk)
				ret = ret ? ret : -ENOMEM;
			*recv += sizeof h + h.names_bytes + h.nnames + h.sites_bytes;
		}
		if (!ret)
			ret = sp_names_map(t, blob, h.nnames, map);
		if (!ret)
			ret = sp_names_kinds(t, kinds, n_old, map, lk, h.nnames);
		if (r > 0) {
			sp_mpi_send(map ? map : (uint32_t *)&h, map ? (int)h.nnames : 0, MPI_UINT32_T, r,
				  TAG_MAP, comm);
			free(blob);
			free(map);
			free(lk);
		}
		int sret = root_sites(l0, comm, r, &h, sites);
		ret = ret ? ret : sret;
		if (!h.ok)
			sp_log(SP_LOG_WARN, "mpi", "rank %d could not take its snapshot; "
			       "its events are missing", r);
		z[r] = (struct sp_part_size){ .rank = (uint32_t)r, .nrows = h.nrows,
			.nevents = h.nevents, .nthreads = h.nthreads, .nmpi = h.nmpi,
			.dropped = h.dropped, .columns = h.columns };
		ncomms[r] = h.ncomms;
		tot->nevents += h.nevents;
		tot->ncomms = tot->ncomms > h.ncomms ? tot->ncomms : h.ncomms;
		tot->columns |= h.columns;
	}
	return ret;
}

void sp_merge_warn_dropped(uint64_t dropped, int ranks, bool written)
{
	if (dropped)
		sp_log(SP_LOG_WARN, "mpi", "%llu calls were dropped over the %d rank%s (memory cap "
		       "SCOPE_PROFILER_MAX_MEMORY or nesting depth)%s", (unsigned long long)dropped,
		       ranks, ranks == 1 ? "" : "s", written ? "; counts are in the file" : "");
}

/*
 * The self-measured costs the overhead estimate multiplies (docs/FORMAT.md,
 * "Self-measurement"), over every rank rather than rank 0's alone: each
 * process measures its own, and one rank's measurement of the counted
 * call varies from process to process (0.5-2.6 ns on the 2-core VM, for
 * the same ~1.3 ns paid per call). The per-call costs are means weighted
 * by each rank's calls of that kind (unweighted when no rank has any), so
 * the file's calls x cost is the sum of the ranks' own estimates; the
 * start-up and memory times are means over the ranks (the estimate counts
 * them once per rank). Rank 0 keeps them for sp_merge_meta.
 */
/* Per cost: sum of cost x calls, sum of calls, sum of costs, ranks. */
enum { C_WSUM, C_W, C_SUM, C_RANKS, C_PER };
enum { C_COUNT = 0, C_CALL = C_PER, C_START = 2 * C_PER, C_ALLOC = 3 * C_PER,
       C_CONC = 4 * C_PER, /* the ranks that could run at once: one sum */
       C_N = C_CONC + 1 };
static double costs[C_N];
static bool costs_known;

/* This rank's cost at `at` (< 0: not measured) with its number of calls. */
static void add_cost(double *v, int at, double cost, double calls)
{
	if (!(cost >= 0))
		return;
	v[at + C_WSUM] += cost * calls;
	v[at + C_W] += calls;
	v[at + C_SUM] += cost;
	v[at + C_RANKS] += 1;
}

/* Collective on comm: rank 0 gets the sums of every rank's costs. */
static void reduce_costs(const struct sp_merge_local *l, bool mine, MPI_Comm comm)
{
	double v[C_N] = { 0 }, unused[C_N];
	struct sp_run_info run;
	sp_run_info_init(&run, sp_mpi_world_rank, sp_mpi_world_size);
	if (mine) {
		double counted = 0, timed = 0;
		for (uint32_t i = 0; i < l->s.nrows; i++) {
			const struct sp_snap_row *r = &l->s.rows[i];
			uint64_t t = r->throttle_timed < r->throttled_calls ? r->throttle_timed
									     : r->throttled_calls;
			counted += (double)(r->throttled_calls - t);
			timed += (double)(r->count + t);
		}
		add_cost(v, C_COUNT, run.count_cost_ns, counted);
		add_cost(v, C_CALL, run.call_cost_ns, timed);
		/* On a crowded node the start-up's wall time is mostly the wait
		 * for a CPU: its CPU time then (sp_mpi_crowded: every rank agrees). */
		int64_t start = sp_mpi_crowded && run.startup_cpu_ns >= 0 ? run.startup_cpu_ns
									  : run.startup_ns;
		add_cost(v, C_START, (double)start, 1);
		add_cost(v, C_ALLOC, (double)run.alloc_ns, 1);
		sp_log(SP_LOG_DEBUG, "finalize", "costs: rank %d: %.0f counted x %.6f ns, %.0f timed x "
		       "%.6f ns, start-up %lld ns, memory %lld ns", sp_mpi_world_rank, counted,
		       run.count_cost_ns, timed, run.call_cost_ns, (long long)start,
		       (long long)run.alloc_ns);
	}
	/* Each node's first rank adds the fewer of its ranks and its CPUs; a
	 * rank without the node's communicator counts as a CPU of its own. */
	int nrank = 0, nsize = 1;
	if (sp_mpi_node_comm == MPI_COMM_NULL ||
	    PMPI_Comm_rank(sp_mpi_node_comm, &nrank) != MPI_SUCCESS ||
	    PMPI_Comm_size(sp_mpi_node_comm, &nsize) != MPI_SUCCESS) {
		nrank = 0;
		nsize = 1;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (nrank == 0)
		v[C_CONC] = cpus > 0 && cpus < nsize ? (double)cpus : (double)nsize;
	bool root = sp_mpi_world_rank == 0;
	costs_known = sp_mpi_reduce(root ? MPI_IN_PLACE : v, root ? v : unused, C_N, MPI_DOUBLE,
				  MPI_SUM, 0, comm) == MPI_SUCCESS;
	if (costs_known && root)
		memcpy(costs, v, sizeof costs);
}

/* The mean of the ranks' costs at `at`, weighted by their calls (plain
 * when none had a call of that kind), or `own` when no rank measured it. */
static double mean_cost(int at, double own)
{
	const double *c = costs + at;
	if (!costs_known || c[C_RANKS] <= 0)
		return own;
	return c[C_W] > 0 ? c[C_WSUM] / c[C_W] : c[C_SUM] / c[C_RANKS];
}

int sp_merge_meta(struct sp_run_meta *meta, int64_t t0, uint64_t dropped, const char *path,
		  uint64_t recv_bytes)
{
	struct sp_run_info run;
	sp_run_info_init(&run, 0, sp_mpi_world_size);
	run.count_cost_ns = mean_cost(C_COUNT, run.count_cost_ns);
	run.call_cost_ns = mean_cost(C_CALL, run.call_cost_ns);
	run.startup_ns = (int64_t)mean_cost(C_START, (double)run.startup_ns);
	run.alloc_ns = (int64_t)mean_cost(C_ALLOC, (double)run.alloc_ns);
	run.concurrency = costs_known ? (int64_t)costs[C_CONC] : 0;
	int ret = sp_meta_collect(meta, &run);
	if (!ret)
		ret = sp_meta_set_int(meta, SP_META_DROPPED, (int64_t)dropped);
	if (!ret)
		ret = sp_meta_set_int(meta, SP_META_MPI_MERGE_NS, sp_monotonic_ns() - t0);
	if (!ret)
		ret = sp_meta_set_str(meta, SP_META_MPI_FINALIZE_PATH, path);
	if (!ret)
		ret = sp_meta_set_int(meta, SP_META_MPI_FINALIZE_RECV, (int64_t)recv_bytes);
	return ret;
}

/* The metadata of the run, the groups, the commit. */
static int root_finish(struct root *R, int64_t t0, uint64_t dropped)
{
	struct sp_run_meta meta = { 0 };
	int ret = sp_merge_meta(&meta, t0, dropped, "serial", R->recv);
	if (!ret) {
		ret = sp_assembly_commit(R->a, &meta, &R->groups);
		R->a = NULL;
	}
	sp_meta_free(&meta);
	return ret;
}

static int merge_root(struct sp_merge_local *l0, MPI_Comm comm, const char *path)
{
	int64_t t0 = sp_monotonic_ns();
	int P = sp_mpi_world_size;
	struct sp_names t = { 0 };
	uint8_t *kinds = NULL;
	struct sp_merge_hdr tot = { 0 };
	struct sp_part_size *z = calloc((size_t)P, sizeof *z);
	uint32_t *ncomms = calloc((size_t)P, sizeof *ncomms);
	struct root R = { .comm = comm };
	if (!z || !ncomms) { /* cannot even track sizes: tell nobody to send */
		sp_log(SP_LOG_WARN, "mpi", "out of memory at MPI_Finalize");
		free(z);
		free(ncomms);
		return -ENOMEM;
	}
	R.groups.comms_present = true;
	R.ret = root_names(l0, comm, &t, &kinds, z, ncomms, &tot, &R.groups.sites, &R.recv);
	int64_t t_names = sp_monotonic_ns();
	R.cols = tot.columns;
	R.groups.sites_present = (R.cols & SP_WCOL_CALLSITE) != 0;
	R.groups.sites_depth = sp_mpi_sites_depth();
	R.chunk = malloc((size_t)CHUNK * CHUNK_BYTES);
	R.comms = calloc(tot.ncomms + 1, sizeof *R.comms);
	if (!R.chunk || !R.comms)
		fail(&R, -ENOMEM);
	if (!R.ret)
		R.ret = sp_assembly_create(path, (const char *const *)t.v, kinds, t.n, z,
					   (size_t)P, (int)sp_config.compression, &R.a);
	for (int r = 0; r < P; r++) {
		if (r == 0 && !R.ret)
			root_own(&R, l0);
		else if (r > 0)
			root_remote(&R, r, &z[r], ncomms[r]);
	}
	int64_t t_data = sp_monotonic_ns();
	R.ret = R.ret ? R.ret : sp_mpi_clock_add_group(&R.groups);
	if (!R.ret)
		R.ret = root_finish(&R, t0, 0);
	sp_log(SP_LOG_DEBUG, "finalize", "path=serial ranks=%d events=%llu rank0_recv_bytes=%llu "
	       "names_ms=%.3f data_ms=%.3f commit_ms=%.3f", P, (unsigned long long)tot.nevents,
	       (unsigned long long)R.recv, (t_names - t0) / 1e6, (t_data - t_names) / 1e6,
	       (sp_monotonic_ns() - t_data) / 1e6);
	if (R.ret)
		sp_log(SP_LOG_WARN, "mpi", "could not write %s: %s", path, strerror(-R.ret));
	else
		sp_log(SP_LOG_INFO, "mpi", "wrote %s (%d rank%s, %u region%s, %llu events)",
		       path, P, P == 1 ? "" : "s", t.n, t.n == 1 ? "" : "s",
		       (unsigned long long)tot.nevents);
	if (!R.ret)
		sp_lifecycle_warn_empty(path, tot.nrows);
	uint64_t dropped = 0;
	for (int r = 0; r < P; r++)
		dropped += z[r].dropped;
	sp_merge_warn_dropped(dropped, P, R.ret == 0);
	sp_assembly_destroy(R.a);
	free(R.chunk);
	free(R.comms);
	sp_groups_free(&R.groups);
	free(z);
	free(ncomms);
	free(kinds);
	sp_names_free(&t);
	return R.ret;
}

/* ---- a rank's own file ------------------------------------------------------ */

/*
 * A rank that writes alone (no MPI_Finalize, or a checkpoint): its snapshot
 * with its MPI values and groups, through the same module as the merge.
 * The snapshot moves to *s for the caller's report.
 */
static int write_own_file(const char *path, struct sp_snapshot *s, int rank, int size)
{
	if (!sp_lifecycle_mpi_owned)
		return -ENOTSUP;
	struct sp_merge_local l;
	struct sp_groups g = { .comms_present = true };
	int ret = sp_merge_local_take(&l, true, false);
	if (!ret && l.sites.global) {
		ret = sp_names_map(&g.sites, l.sites.blob, l.sites.n, l.sites.global);
		g.sites_present = true;
		g.sites_depth = sp_mpi_sites_depth();
	}
	char *buf = ret ? NULL : malloc(l.h.nmpi * MPI_VBYTES + 1);
	if (!ret && !buf)
		ret = -ENOMEM;
	struct sp_merge_cursor cur = { 0 };
	if (!ret)
		sp_merge_pack_mpi(&l, &cur, l.h.nmpi, buf);
	struct sp_part_mpi m = buf ? sp_merge_mpi_view(buf, l.h.nmpi) : (struct sp_part_mpi){ 0 };
	if (!ret)
		ret = sp_merge_add_comms(&g, l.comms, l.h.ncomms, (uint32_t)rank);
	if (!ret)
		ret = sp_output_write_part(path, &l.s, l.h.nmpi,
					   l.h.columns & (SP_WCOL_MPI | SP_WCOL_CALLSITE),
					   l.row_mpi, &m, &g, rank, size);
	free(buf);
	sp_groups_free(&g);
	*s = l.s;
	memset(&l.s, 0, sizeof l.s);
	sp_merge_local_free(&l);
	return ret;
}

__attribute__((constructor)) static void sp_mpi_merge_setup(void)
{
	sp_output_local_hook = write_own_file;
}

int sp_merge_serial(struct sp_merge_local *l, MPI_Comm comm, const char *path)
{
	int ret = 0;
	if (sp_mpi_world_rank == 0)
		ret = merge_root(l, comm, path);
	else if (!phase_a_send(l, comm))
		phase_b_send(l, comm);
	return ret;
}

/*
 * Whether rank 0's settings ask for the rank-0 stream (FINALIZE=serial, or
 * compressed columns, which are chunked where the parallel write needs
 * contiguous ones), and the test copy's path (SCOPE_PROFILER_TEST_FINALIZE_COPY,
 * "" none): rank 0 decides for all, so that the ranks agree.
 */
static bool want_stream(MPI_Comm comm, char copy[static 4096])
{
	int v[2] = { 0, 0 };
	copy[0] = '\0';
	if (sp_mpi_world_rank == 0) {
		v[0] = !strcmp(sp_config.finalize, "serial") || sp_config.compression > 0;
		if (sp_config.compression > 0 && strcmp(sp_config.finalize, "serial"))
			sp_log(SP_LOG_WARN, "mpi", "SCOPE_PROFILER_COMPRESSION=%d: rank 0 writes "
			       "every rank's events (compressed columns are chunked; the parallel "
			       "write needs contiguous ones)", (int)sp_config.compression);
		const char *c = getenv("SCOPE_PROFILER_TEST_FINALIZE_COPY");
		if (c && *c && strlen(c) < 4096)
			v[1] = (int)strlen(c) + 1;
		if (v[1])
			memcpy(copy, c, (size_t)v[1]);
	}
	/* rank 0 may still be loading HDF5 (load_hdf5): the others wait asleep */
	sp_mpi_await(comm, 0);
	if (sp_mpi_bcast(v, 2, MPI_INT, 0, comm) != MPI_SUCCESS ||
	    (v[1] && sp_mpi_bcast(copy, v[1], MPI_CHAR, 0, comm) != MPI_SUCCESS))
		return true;
	return v[0];
}

/* World rank 0 lays the file out with HDF5: loaded while the node's
 * names are resolved by another rank, off the finalize's critical path
 * (a failure is said where the layout needs it: sp_lazy_load). */
static void load_hdf5(void)
{
	if (sp_mpi_world_rank == 0)
		(void)sp_lazy_try(SP_LAZY_HDF5);
}

void sp_mpi_before_finalize(void)
{
	int e = errno;
	MPI_Comm comm = sp_mpi_private_comm;
	bool deferred = sp_mpi_node_comm != MPI_COMM_NULL;
	if (deferred)
		sp_fn_defer_names(); /* named once per node, below */
	bool mine = sp_lifecycle_begin_finalize(); /* stops recording */
	int rank = sp_mpi_world_rank, written = 1;
	/* whether any rank recorded, and whether any node is crowded */
	int v[2] = { mine, sp_mpi_node_crowded(sp_mpi_node_comm) };
	if (comm == MPI_COMM_NULL ||
	    PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
		v[0] = v[1] = 0;
	int any = v[0];
	sp_mpi_crowded = v[1];
	if (rank == 0)
		sp_log(SP_LOG_DEBUG, "finalize", "waits: %s", sp_mpi_yielding_waits()
		       ? "nonblocking, tested between yields (a crowded node; the MPI spins)"
		       : sp_mpi_crowded ? "the MPI's own (a crowded node; the MPI yields)"
					: "the MPI's own (a core per rank)");
	if (any)
		sp_mpi_names_share(mine, load_hdf5);
	if (deferred)
		sp_fn_names_finish(); /* what is left, and the symbolizer closed */
	if (any) {
		struct sp_merge_local l;
		char copy[4096];
		bool stream = want_stream(comm, copy);
		/* a big snapshot stays a plan for the parallel write */
		sp_merge_local_take(&l, mine, !stream);
		reduce_costs(&l, mine, comm);
		sp_mpi_clock_finalize(&l.s, comm); /* onto rank 0's timeline */
		int ret = stream ? SP_PWRITE_FALLBACK : sp_pwrite(&l, comm, sp_config.output);
		/* the stream (and the test copy) takes every event in memory */
		if ((ret == SP_PWRITE_FALLBACK || copy[0]) && l.s.nmem < l.s.nevents &&
		    sp_merge_local_fill(&l))
			sp_log(SP_LOG_WARN, "mpi", "rank %d: out of memory for its events; "
			       "it contributes none", rank);
		if (ret == SP_PWRITE_FALLBACK)
			ret = sp_merge_serial(&l, comm, sp_config.output);
		written = ret == 0;
		if (!stream && copy[0]) /* test only: the stream's file of the same run */
			sp_merge_serial(&l, comm, copy);
		sp_merge_local_free(&l);
		/* Every rank keeps its spill file until the root has committed
		 * the file: a rank killed meanwhile (mpirun's SIGTERM, then
		 * SIGKILL) has its events there (the handler dumps them), and
		 * a failed write leaves them all for `recover`. */
		if (sp_mpi_bcast(&written, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
			written = 0;
	} else if (mine && comm == MPI_COMM_NULL) {
		sp_log(SP_LOG_WARN, "mpi", "no private communicator; rank %d not merged", rank);
	}
	if (mine && !written)
		sp_lifecycle_keep_spill(sp_config.output, 0);
	if (mine) {
		sp_mpi_records_reset();
		sp_lifecycle_end_finalize();
	}
	if (sp_mpi_node_comm != MPI_COMM_NULL) {
		PMPI_Comm_free(&sp_mpi_node_comm);
		sp_mpi_node_comm = MPI_COMM_NULL;
	}
	if (comm != MPI_COMM_NULL) {
		PMPI_Comm_free(&sp_mpi_private_comm);
		sp_mpi_private_comm = MPI_COMM_NULL;
	}
	errno = e;
}
