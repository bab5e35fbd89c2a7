/* SPDX-License-Identifier: MIT */
/*
 * The merge at MPI_Finalize: every rank's snapshot into one schema-2 file
 * written by rank 0, on the private communicator, recording off.
 * Phase A (names): rank by rank, rank 0 unifies region names and sends each
 * rank its local -> global map, and learns the sizes. Phase B (data): rank
 * by rank, on rank 0's "go", a rank streams rows, events in chunks of at
 * most CHUNK events, threads and communicators; rank 0 writes each piece
 * as it arrives. Rank 0 never holds more than its own snapshot, the name
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
#include "mpi-record.h"
#include "output.h"
#include "snapshot.h"

#define CHUNK (1u << 18) /* events per message: 48 B each, 12 MiB */
enum { TAG_HDR = 1, TAG_NAMES, TAG_MAP, TAG_GO, TAG_ROWS, TAG_FILES, TAG_EV, TAG_THR, TAG_COMM };

struct hdr {
	uint64_t names_bytes, nrows, nevents, nthreads, dropped;
	uint32_t nnames, columns, ncomms, ok;
};

struct wire_row {
	uint32_t region, pad;
	uint64_t offset, count, dropped, throttled_calls, file_off;
	int64_t source_line, throttled_ns;
	struct sp_summary_record summary;
};

#define EV_BYTES (5 * 8 + 4 * 4)

/* Everything one rank contributes. */
struct local {
	struct sp_snapshot s;
	struct hdr h;
	char *names;           /* names back to back, NUL-terminated */
	uint32_t *map;         /* local name -> global id */
	struct sp_mpi_comm_row *comms;
};

/* ---- rank 0's global name table (open addressing over the names) -------- */

struct names {
	char **v;
	uint32_t n, cap;
	uint32_t *slots;
	size_t nslots;
};

static uint32_t names_add(struct names *t, const char *s)
{
	if (2 * (size_t)(t->n + 1) > t->nslots) {
		size_t ns = t->nslots ? 2 * t->nslots : 1024;
		uint32_t *sl = malloc(ns * sizeof *sl);
		if (!sl)
			return UINT32_MAX;
		memset(sl, 0xff, ns * sizeof *sl);
		free(t->slots);
		t->slots = sl;
		t->nslots = ns;
		for (uint32_t i = 0; i < t->n; i++) {
			uint64_t h = 1469598103934665603ull;
			for (const char *p = t->v[i]; *p; p++)
				h = (h ^ (unsigned char)*p) * 1099511628211ull;
			size_t k = h & (ns - 1);
			while (sl[k] != UINT32_MAX)
				k = (k + 1) & (ns - 1);
			sl[k] = i;
		}
	}
	uint64_t h = 1469598103934665603ull;
	for (const char *p = s; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	size_t k = h & (t->nslots - 1);
	while (t->slots[k] != UINT32_MAX) {
		if (strcmp(t->v[t->slots[k]], s) == 0)
			return t->slots[k];
		k = (k + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 256;
		char **v = realloc(t->v, cap * sizeof *v);
		if (!v)
			return UINT32_MAX;
		t->v = v;
		t->cap = cap;
	}
	if (!(t->v[t->n] = strdup(s)))
		return UINT32_MAX;
	t->slots[k] = t->n;
	return t->n++;
}

static void names_free(struct names *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
}

/* Map a rank's names blob; returns 0 or -ENOMEM. */
static int names_map(struct names *t, const char *blob, uint32_t n, uint32_t *map)
{
	for (uint32_t i = 0; i < n; i++) {
		map[i] = names_add(t, blob);
		if (map[i] == UINT32_MAX)
			return -ENOMEM;
		blob += strlen(blob) + 1;
	}
	return 0;
}

/* ---- this rank's contribution ------------------------------------------- */

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
	if (!l->names || !l->map)
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
	return ret;
}

static void local_free(struct local *l)
{
	sp_snapshot_free(&l->s);
	free(l->names);
	free(l->map);
	free(l->comms);
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
			.summary = r->summary, .file_off = UINT64_MAX };
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

/* Events [first, first+n) as columns: start, end, thread, bytes (int64),
 * peer, root, tag, comm (int32). */
static void pack_events(const struct sp_snapshot *s, uint64_t first, uint64_t n, char *buf)
{
	int64_t *start = (int64_t *)buf, *end = start + n, *thr = end + n, *bytes = thr + n;
	int32_t *peer = (int32_t *)(bytes + n), *root = peer + n, *tag = root + n, *comm = tag + n;
	memcpy(start, s->start + first, n * 8);
	memcpy(end, s->end + first, n * 8);
	for (uint64_t i = 0; i < n; i++)
		thr[i] = s->thread[first + i];
	sp_mpi_columns(s, first, n, bytes, peer, root, tag, comm);
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

static int recv_big(void *buf, uint64_t n, int src, int tag, MPI_Comm comm)
{
	return PMPI_Recv(buf, (int)n, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS
		       ? 0 : -EIO;
}

/* Non-zero rank, phase A: header and names out, map back. */
static int phase_a_send(struct local *l, MPI_Comm comm)
{
	int ret = send_big(&l->h, sizeof l->h, TAG_HDR, comm);
	if (!ret)
		ret = send_big(l->names, l->h.names_bytes, TAG_NAMES, comm);
	if (!ret)
		ret = PMPI_Recv(l->map, (int)l->h.nnames, MPI_UINT32_T, 0, TAG_MAP, comm,
				MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -EIO;
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
	char *buf = malloc((size_t)(l->h.nevents < CHUNK ? l->h.nevents : CHUNK) * EV_BYTES + 1);
	for (uint64_t at = 0; at < l->h.nevents; at += CHUNK) {
		uint64_t n = l->h.nevents - at < CHUNK ? l->h.nevents - at : CHUNK;
		if (buf)
			pack_events(&l->s, at, n, buf);
		send_big(buf ? buf : "", buf ? n * EV_BYTES : 0, TAG_EV, comm);
	}
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

#include "mpi-merge-root.c"

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
