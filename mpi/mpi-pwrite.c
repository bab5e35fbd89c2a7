/* SPDX-License-Identifier: MIT */
/*
 * The parallel finalize (docs/MPI.md, "The parallel finalize"): every rank
 * writes its own slices of the file's numeric columns through MPI-IO, so
 * rank 0 receives O(regions x ranks) bytes, never the events.
 *   names   a binomial tree unions the region names (with kinds and whether
 *           a row uses them) and the call-site keys in rank order; rank 0
 *           keeps the used names, in that order, and broadcasts the table;
 *   scan    MPI_Exscan gives each rank its first row, event, thread and
 *           MPI value; MPI_Allreduce the totals and the regions' order keys,
 *           from which each rank computes its rows' exclusive times;
 *   layout  rank 0 gathers the small variable parts (source files, thread
 *           indexes, communicators) and creates the file with serial HDF5
 *           in the raw layout (contiguous datasets allocated at creation,
 *           never filled), writes names, strings, groups and metadata,
 *           reads where each numeric dataset lies, closes it and
 *           broadcasts the offsets;
 *   write   a temporary of at most SP_PWRITE_GATHER_MAX, or any on one
 *           crowded host (FINALIZE=auto): rank 0 gathers every rank's
 *           slices and pwrite()s them; else
 *           every rank opens the temporary with MPI_File_open and writes
 *           its slices with MPI_File_write_at_all;
 *   commit  rank 0 fsyncs and renames, as every writer does.
 * A rank that cannot open the file makes every rank take the rank-0
 * stream instead (mpi-merge.c), with one warning.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "groups.h"
#include "lifecycle.h"
#include "log.h"
#include "mpi-clock.h"
#include "mpi-merge.h"
#include "mpi-wait.h"
#include "names.h"
#include "recorder.h"
#include "snapshot.h"
#include "sp-io.h"
#include "sp-safe-file.h"
#include "writer.h"

#define CHUNK (1u << 18) /* values per collective write of an event column */

enum { TAG_UNION = 41 };
enum { N_ROWS, N_EVENTS, N_THREADS, N_MPI, N_MEM, N_COUNTS }; /* N_MEM: events in memory */

struct pw {
	MPI_Comm comm;
	int rank, P;
	struct sp_merge_local *l;
	const char *path;
	int ret;                      /* this rank's first failure */
	uint64_t recv;                /* bytes received (rank 0's figure is kept) */
	/* names */
	uint32_t nfinal;              /* the file's region names */
	char *final_blob;             /* rank 0: the used names back to back */
	uint8_t *final_kinds;
	char **uncalled;              /* rank 0: the others */
	uint32_t nuncalled;
	struct sp_names sites;        /* the call-site keys, the file's ids */
	/* scan */
	unsigned columns;
	uint64_t mine[N_COUNTS], base[N_COUNTS], total[N_COUNTS], most[N_COUNTS];
	uint64_t dropped;
	int64_t *excl;                /* per local row */
	uint32_t *rpos;               /* per local row: its region's position (a plan streams) */
	/* layout */
	struct sp_writer *w;          /* rank 0 */
	uint64_t off[SP_RAW_NCOLS];
	uint64_t size;                /* the temporary's size after the layout */
	bool gather;                  /* the slices go through rank 0 (a small file, or one
				       * crowded host) */
	uint64_t chunk;               /* events and MPI values of a rank per write round */
	int64_t t[6];                 /* phase ends (rank 0's debug line) */
};

#define fail(W, ret) fail_at(W, ret, __LINE__)
static void fail_at(struct pw *W, int ret, int line)
{
	if (!W->ret && ret) {
		W->ret = ret;
		sp_log(SP_LOG_DEBUG, "finalize", "rank %d: %s at mpi-pwrite.c:%d", W->rank,
		       strerror(-ret), line);
	}
}

/* Whether every rank has nothing to report (collective). */
static bool all_ok(struct pw *W)
{
	int bad = W->ret != 0;
	if (sp_mpi_allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, W->comm) != MPI_SUCCESS)
		return false;
	return !bad;
}

/* ---- names: a tree union ------------------------------------------------- */

/* A set of names on its way up the tree, first-seen order. */
struct nset {
	struct sp_names t;
	uint8_t *kinds;   /* SP_KIND_* per name; NULL for call-site keys */
	uint8_t *used;    /* per name: a row has it */
	bool with_kinds;
	int ret;
};

/* Add n names of blob with their kinds and used flags (NULL: none). */
static int nset_add(struct nset *s, const char *blob, uint32_t n, const uint8_t *kinds,
		    const uint8_t *used)
{
	uint32_t *map = malloc(((size_t)n + 1) * sizeof *map);
	uint32_t n_old = s->t.n;
	int ret = map ? sp_names_map(&s->t, blob, n, map) : -ENOMEM;
	if (!ret && s->with_kinds)
		ret = sp_names_kinds(&s->t, &s->kinds, n_old, map, kinds, n);
	uint8_t *u = ret ? NULL : realloc(s->used, (size_t)s->t.n + 1);
	if (!ret && !u)
		ret = -ENOMEM;
	if (u) {
		s->used = u;
		memset(u + n_old, 0, s->t.n - n_old);
		for (uint32_t i = 0; used && i < n; i++)
			u[map[i]] |= used[i];
	}
	free(map);
	return ret;
}

/* The set as one message: n, blob bytes, ok; blob, kinds, used. */
static char *nset_pack(const struct nset *s, uint64_t *ret_len)
{
	uint64_t bytes = 0, n = s->ret ? 0 : s->t.n;
	for (uint32_t i = 0; i < n; i++)
		bytes += strlen(s->t.v[i]) + 1;
	uint64_t len = 3 * 8 + bytes + (s->with_kinds ? n : 0) + n;
	char *buf = malloc(len + 1);
	if (!buf)
		return NULL;
	uint64_t head[3] = { n, bytes, s->ret == 0 };
	memcpy(buf, head, sizeof head);
	char *p = buf + sizeof head;
	for (uint32_t i = 0; i < n; i++)
		p = stpcpy(p, s->t.v[i]) + 1;
	if (s->with_kinds && n)
		memcpy(p, s->kinds, n);
	p += s->with_kinds ? n : 0;
	if (n)
		memcpy(p, s->used, n);
	*ret_len = len;
	return buf;
}

/* A child's message into the set; a malformed one fails the set. */
static int nset_merge(struct nset *s, const char *buf, uint64_t len)
{
	uint64_t head[3];
	if (len < sizeof head)
		return -EBADMSG;
	memcpy(head, buf, sizeof head);
	uint64_t n = head[0], bytes = head[1];
	if (!head[2])
		return -EIO; /* the child failed */
	uint64_t need = sizeof head + bytes + (s->with_kinds ? n : 0) + n;
	if (n > UINT32_MAX || bytes > len || need != len || (bytes && buf[sizeof head + bytes - 1]))
		return -EBADMSG;
	const char *blob = buf + sizeof head;
	const uint8_t *kinds = (const uint8_t *)blob + bytes;
	return nset_add(s, blob, (uint32_t)n, s->with_kinds ? kinds : NULL,
			kinds + (s->with_kinds ? n : 0));
}

/* Receive one message of unknown length from src. */
static char *recv_any(struct pw *W, int src, uint64_t *ret_len)
{
	MPI_Status st;
	int n = 0;
	if (sp_mpi_probe(src, TAG_UNION, W->comm, &st) != MPI_SUCCESS ||
	    PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
		return NULL;
	char *buf = malloc((size_t)n + 1);
	if (PMPI_Recv(buf ? buf : (char *)&st, buf ? n : 0, MPI_BYTE, src, TAG_UNION, W->comm,
		      &st) != MPI_SUCCESS || !buf) {
		free(buf);
		return NULL;
	}
	*ret_len = (uint64_t)n;
	W->recv += (uint64_t)n;
	return buf;
}

/*
 * Binomial tree to rank 0: rank r takes the sets of r+1, r+2, r+4, ...
 * (each a block of higher ranks, in rank order), then sends its own to
 * r - lowest bit. So rank 0 ends with every name in first-seen rank order,
 * as the stream builds it, in log2(P) rounds.
 */
static void tree_union(struct pw *W, struct nset *s)
{
	for (int mask = 1; mask < W->P; mask <<= 1) {
		if (W->rank & mask) {
			uint64_t len = 0;
			char *buf = nset_pack(s, &len);
			char failed[24] = { 0 }; /* n 0, not ok */
			bool send = buf && len <= INT32_MAX;
			if (sp_mpi_send(send ? buf : failed, send ? (int)len : (int)sizeof failed,
				      MPI_BYTE, W->rank - mask, TAG_UNION, W->comm) != MPI_SUCCESS)
				s->ret = s->ret ? s->ret : -EIO;
			free(buf);
			return;
		}
		int child = W->rank + mask;
		if (child >= W->P)
			continue;
		uint64_t len = 0;
		char *buf = recv_any(W, child, &len);
		int ret = buf ? nset_merge(s, buf, len) : -EIO;
		s->ret = s->ret ? s->ret : ret;
		free(buf);
	}
}

static void nset_free(struct nset *s)
{
	sp_names_free(&s->t);
	free(s->kinds);
	free(s->used);
}

/* Broadcast rank 0's n strings of blob (bytes long) to every rank. */
static int bcast_blob(struct pw *W, char **blob, uint64_t *bytes, uint32_t *n)
{
	uint64_t v[2] = { *bytes, *n };
	if (sp_mpi_bcast(v, 2, MPI_UINT64_T, 0, W->comm) != MPI_SUCCESS || v[0] > INT32_MAX)
		return -EIO;
	if (W->rank != 0) {
		*blob = malloc(v[0] + 1);
		*bytes = v[0];
		*n = (uint32_t)v[1];
	}
	int ok = *blob != NULL;
	if (sp_mpi_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, W->comm) != MPI_SUCCESS || !ok)
		return -ENOMEM;
	if (sp_mpi_bcast(*blob, (int)v[0], MPI_CHAR, 0, W->comm) != MPI_SUCCESS)
		return -EIO;
	return v[0] && (*blob)[v[0] - 1] ? -EBADMSG : 0;
}

/* Map n names of blob to ids through the table made of the first nt
 * names of table_blob (names not in it get ids >= nt). */
static int map_through(const char *table_blob, uint32_t nt, const char *blob, uint32_t n,
		       uint32_t *map, struct sp_names *keep)
{
	struct sp_names t = { 0 };
	uint32_t *tmp = malloc(((size_t)nt + 1) * sizeof *tmp);
	int ret = tmp ? sp_names_map(&t, table_blob, nt, tmp) : -ENOMEM;
	if (!ret && n)
		ret = sp_names_map(&t, blob, n, map);
	free(tmp);
	if (keep && !ret)
		*keep = t;
	else
		sp_names_free(&t);
	return ret;
}

/* Rank 0: the used names of the union, in order, and the others. */
static int choose_names(struct pw *W, const struct nset *s, uint64_t *ret_bytes)
{
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < s->t.n; i++)
		bytes += s->used[i] ? strlen(s->t.v[i]) + 1 : 0;
	W->final_blob = malloc(bytes + 1);
	W->final_kinds = malloc((size_t)s->t.n + 1);
	W->uncalled = malloc(((size_t)s->t.n + 1) * sizeof *W->uncalled);
	if (!W->final_blob || !W->final_kinds || !W->uncalled)
		return -ENOMEM;
	char *p = W->final_blob;
	for (uint32_t i = 0; i < s->t.n; i++) {
		if (!s->used[i]) {
			W->uncalled[W->nuncalled] = strdup(s->t.v[i]);
			if (!W->uncalled[W->nuncalled++])
				return -ENOMEM;
			continue;
		}
		W->final_kinds[W->nfinal++] = s->kinds ? s->kinds[i] : SP_KIND_FUNCTION;
		p = stpcpy(p, s->t.v[i]) + 1;
	}
	*ret_bytes = bytes;
	return 0;
}

/* The names phase: every rank's map to the file's ids, call sites too. */
static void phase_names(struct pw *W)
{
	struct sp_merge_local *l = W->l;
	struct nset names = { .with_kinds = true }, sites = { 0 };
	uint8_t *used = calloc((size_t)l->h.nnames + 1, 1);
	uint8_t *kinds = malloc((size_t)l->h.nnames + 1);
	names.ret = used && kinds ? 0 : -ENOMEM;
	for (uint32_t i = 0; !names.ret && i < l->s.nrows; i++)
		used[l->s.rows[i].region] = 1;
	if (!names.ret) { /* a name without a kind is a function */
		memset(kinds, 0xff, (size_t)l->h.nnames + 1);
		if (l->s.kinds)
			memcpy(kinds, l->s.kinds, l->h.nnames);
		names.ret = nset_add(&names, l->names, l->h.nnames, kinds, used);
	}
	if (l->sites.global)
		sites.ret = nset_add(&sites, l->sites.blob, l->sites.n, NULL, NULL);
	tree_union(W, &names);
	tree_union(W, &sites);
	free(used);
	free(kinds);
	/* rank 0 broadcasts the used names (with their kinds) and the keys */
	int ok = !names.ret && !sites.ret;
	uint64_t bytes = 0, sbytes = 0;
	char *sblob = NULL;
	uint32_t ns = 0;
	if (W->rank == 0 && ok) {
		ok = !choose_names(W, &names, &bytes);
		struct nset *k = &sites;
		for (uint32_t i = 0; i < k->t.n; i++)
			sbytes += strlen(k->t.v[i]) + 1;
		sblob = malloc(sbytes + 1);
		ok = ok && sblob;
		for (char *p = sblob; ok && ns < k->t.n; ns++)
			p = stpcpy(p, k->t.v[ns]) + 1;
	}
	nset_free(&names);
	nset_free(&sites);
	if (sp_mpi_bcast(&ok, 1, MPI_INT, 0, W->comm) != MPI_SUCCESS || !ok) {
		fail(W, -ENOMEM);
		free(sblob);
		return;
	}
	fail(W, bcast_blob(W, &W->final_blob, &bytes, &W->nfinal));
	if (!W->ret && W->rank != 0)
		W->final_kinds = malloc((size_t)W->nfinal + 1);
	if (sp_mpi_bcast(W->final_kinds ? W->final_kinds : (uint8_t *)&ok,
		       W->final_kinds ? (int)W->nfinal : 0, MPI_UINT8_T, 0, W->comm) != MPI_SUCCESS)
		fail(W, -EIO);
	fail(W, bcast_blob(W, &sblob, &sbytes, &ns));
	if (!W->ret)
		fail(W, map_through(W->final_blob, W->nfinal, l->names, l->h.nnames, l->map, NULL));
	uint32_t *smap = l->sites.global;
	if (!W->ret)
		fail(W, map_through(sblob, ns, l->sites.blob, smap ? l->sites.n : 0,
				    smap ? smap : (uint32_t *)&ok, &W->sites));
	free(sblob);
}

/* ---- scan: slices, totals, exclusive times ------------------------------- */

/* A plan's times onto rank 0's timeline, as the events in memory were. */
static const struct sp_stream_part stream_map = { .map = sp_mpi_clock_map_ns };

static void phase_scan(struct pw *W)
{
	struct sp_merge_local *l = W->l;
	const struct sp_snapshot *s = &l->s;
	unsigned cols = l->h.columns;
	if (sp_mpi_allreduce(&cols, &W->columns, 1, MPI_UNSIGNED, MPI_BOR, W->comm) != MPI_SUCCESS)
		fail(W, -EIO);
	bool threads = W->columns & SP_WCOL_THREAD_IDS;
	W->mine[N_ROWS] = s->nrows;
	W->mine[N_EVENTS] = s->nevents;
	W->mine[N_THREADS] = threads ? s->nthreads : 0;
	W->mine[N_MPI] = l->h.nmpi;
	W->mine[N_MEM] = s->nmem;
	uint64_t sums[N_COUNTS + 1];
	memcpy(sums, W->mine, sizeof W->mine);
	sums[N_COUNTS] = l->h.dropped;
	uint64_t tot[N_COUNTS + 1];
	memset(W->base, 0, sizeof W->base);
	if (sp_mpi_exscan(W->mine, W->base, N_COUNTS, MPI_UINT64_T, MPI_SUM, W->comm) != MPI_SUCCESS ||
	    sp_mpi_allreduce(sums, tot, N_COUNTS + 1, MPI_UINT64_T, MPI_SUM, W->comm) != MPI_SUCCESS ||
	    sp_mpi_allreduce(W->mine, W->most, N_COUNTS, MPI_UINT64_T, MPI_MAX, W->comm) !=
		    MPI_SUCCESS)
		fail(W, -EIO);
	if (W->rank == 0)
		memset(W->base, 0, sizeof W->base); /* Exscan leaves rank 0's undefined */
	memcpy(W->total, tot, sizeof W->total);
	W->dropped = tot[N_COUNTS];

	/* the regions' order (by first start over all ranks), for nesting ties */
	uint32_t nf = W->nfinal;
	double *key = malloc(((size_t)nf + 1) * sizeof *key);
	uint32_t *pos = malloc(((size_t)nf + 1) * sizeof *pos);
	uint32_t *rpos = malloc(((size_t)s->nrows + 1) * sizeof *rpos);
	uint64_t *off = malloc(((size_t)s->nrows + 1) * sizeof *off);
	uint64_t *cnt = malloc(((size_t)s->nrows + 1) * sizeof *cnt);
	W->excl = malloc(((size_t)s->nrows + 1) * sizeof *W->excl);
	int ok = key && pos && rpos && off && cnt && W->excl && !W->ret;
	for (uint32_t i = 0; key && i < nf; i++)
		key[i] = INFINITY;
	for (uint32_t i = 0; ok && i < s->nrows; i++) {
		const struct sp_snap_row *r = &s->rows[i];
		uint32_t id = l->map[r->region];
		bool mem = r->offset + r->count <= s->nmem;
		double k = !r->count ? 0.0
			   : mem ? sp_writer_region_key(s->start + r->offset, r->count)
				 : (double)sp_snapshot_plan_first_ns(l->plan, r, &stream_map) / 1e9;
		if (id >= nf) {
			ok = 0;
			break;
		}
		key[id] = k < key[id] ? k : key[id];
	}
	if (sp_mpi_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, W->comm) != MPI_SUCCESS || !ok ||
	    sp_mpi_allreduce(MPI_IN_PLACE, key, (int)nf, MPI_DOUBLE, MPI_MIN, W->comm) != MPI_SUCCESS)
		fail(W, -ENOMEM);
	if (!W->ret)
		fail(W, sp_writer_region_order(key, nf, pos));
	for (uint32_t i = 0; !W->ret && i < s->nrows; i++) {
		rpos[i] = pos[l->map[s->rows[i].region]];
		off[i] = s->rows[i].offset;
		cnt[i] = s->rows[i].count;
	}
	if (!W->ret && !l->plan)
		fail(W, sp_writer_exclusive_rows(s->nrows, off, cnt, rpos, s->start, s->end,
						 s->thread, W->excl));
	if (l->plan) { /* nested as the events stream (phase_write) */
		W->rpos = rpos;
		rpos = NULL;
	}
	free(key);
	free(pos);
	free(rpos);
	free(off);
	free(cnt);
}

/* ---- layout: rank 0 creates the file ------------------------------------- */

/* Gather n_mine bytes of every rank into *ret (rank 0), *ret_total long,
 * with the counts per rank when ret_counts is not NULL. */
static int gather_bytes(struct pw *W, const void *mine, uint64_t n_mine, char **ret,
			uint64_t *ret_total, uint64_t **ret_counts)
{
	uint64_t *counts = W->rank == 0 ? calloc((size_t)W->P, sizeof *counts) : NULL;
	int *c = W->rank == 0 ? calloc((size_t)W->P, sizeof *c) : NULL;
	int *d = W->rank == 0 ? calloc((size_t)W->P, sizeof *d) : NULL;
	int ret_v = 0;
	if (sp_mpi_gather(&n_mine, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, 0, W->comm) !=
	    MPI_SUCCESS)
		ret_v = -EIO;
	uint64_t total = 0;
	int ok = W->rank != 0 || (counts && c && d);
	for (int r = 0; ok && W->rank == 0 && r < W->P; r++) {
		if (total + counts[r] > INT32_MAX) {
			ok = 0; /* Gatherv counts in int: the stream has no such limit */
			break;
		}
		c[r] = (int)counts[r];
		d[r] = (int)total;
		total += counts[r];
	}
	char *all = W->rank == 0 && ok ? malloc(total + 1) : NULL;
	ok = ok && (W->rank != 0 || all);
	if (sp_mpi_bcast(&ok, 1, MPI_INT, 0, W->comm) != MPI_SUCCESS || !ok) {
		free(counts);
		free(c);
		free(d);
		free(all);
		return ret_v ? ret_v : -E2BIG;
	}
	if (sp_mpi_gatherv(mine, (int)n_mine, MPI_BYTE, all, c, d, MPI_BYTE, 0, W->comm) !=
	    MPI_SUCCESS)
		ret_v = -EIO;
	if (W->rank == 0)
		W->recv += total - n_mine;
	free(c);
	free(d);
	*ret = all;
	*ret_total = total;
	if (ret_counts)
		*ret_counts = counts;
	else
		free(counts);
	return ret_v;
}

/* This rank's source files, one string per row ("" unknown). */
static char *row_files(const struct sp_snapshot *s, uint64_t *ret_len)
{
	uint64_t len = 0;
	for (uint32_t i = 0; i < s->nrows; i++)
		len += (s->rows[i].source_file ? strlen(s->rows[i].source_file) : 0) + 1;
	char *b = malloc(len + 1), *p = b;
	for (uint32_t i = 0; b && i < s->nrows; i++)
		p = stpcpy(p, s->rows[i].source_file ? s->rows[i].source_file : "") + 1;
	*ret_len = len;
	return b;
}

/* Rank 0: the rows' strings from every rank's blob, in file row order. */
static int root_row_strings(struct pw *W, const char *files, uint64_t flen)
{
	uint64_t n = W->total[N_ROWS];
	struct sp_writer_row *rows = calloc(n + 1, sizeof *rows);
	if (!rows)
		return -ENOMEM;
	const char *p = files, *end = files + flen;
	int ret = 0;
	for (uint64_t i = 0; i < n; i++) {
		const char *z = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
		if (!z) {
			ret = -EBADMSG;
			break;
		}
		rows[i].source_file = p;
		p = z + 1;
	}
	if (!ret)
		ret = sp_writer_put_row_strings(W->w, 0, n, rows);
	free(rows);
	return ret;
}

/* Rank 0: the thread names from every rank's thread indexes. */
static int root_thread_names(struct pw *W, const int64_t *index)
{
	uint64_t n = W->total[N_THREADS];
	struct sp_writer_thread *t = calloc(n + 1, sizeof *t);
	if (!t)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		t[i].index = index[i];
	int ret = sp_writer_put_thread_names(W->w, 0, n, t);
	free(t);
	return ret;
}

/* Rank 0: /mpi_communicators from every rank's rows (counts per rank). */
static int root_comms(struct pw *W, struct sp_groups *g, const char *all, const uint64_t *bytes)
{
	const struct sp_mpi_comm_row *c = (const struct sp_mpi_comm_row *)(const void *)all;
	int ret = 0;
	for (int r = 0; !ret && r < W->P; r++) {
		uint32_t n = (uint32_t)(bytes[r] / sizeof *c);
		ret = sp_merge_add_comms(g, c, n, (uint32_t)r);
		c += n;
	}
	return ret;
}

/* Rank 0: create, fill and seal the file; the offsets in W->off. */
static int root_layout(struct pw *W, const char *files, uint64_t flen, const int64_t *tindex,
		       const char *comms, const uint64_t *comm_bytes, int64_t t0)
{
	const char **names = malloc(((size_t)W->nfinal + 1) * sizeof *names);
	if (!names)
		return -ENOMEM;
	const char *p = W->final_blob;
	for (uint32_t i = 0; i < W->nfinal; i++, p += strlen(p) + 1)
		names[i] = p;
	struct sp_writer_layout lay = {
		.nnames = W->nfinal, .names = names, .kinds = W->final_kinds,
		.nrows = W->total[N_ROWS], .nevents = W->total[N_EVENTS],
		.nthreads = W->total[N_THREADS], .nmpi = W->total[N_MPI],
		.columns = W->columns, .raw = true,
		.uncalled = (const char *const *)W->uncalled, .nuncalled = W->nuncalled,
	};
	struct sp_groups g = { .comms_present = true };
	struct sp_run_meta meta = { 0 };
	int ret = sp_writer_create(W->path, &lay, &W->w);
	if (!ret)
		ret = root_row_strings(W, files, flen);
	if (!ret && (W->columns & SP_WCOL_THREAD_IDS))
		ret = root_thread_names(W, tindex);
	if (!ret)
		ret = root_comms(W, &g, comms, comm_bytes);
	if (!ret && (W->columns & SP_WCOL_CALLSITE)) {
		g.sites_present = true;
		g.sites_depth = sp_mpi_sites_depth();
		g.sites = W->sites;
		memset(&W->sites, 0, sizeof W->sites);
	}
	if (!ret)
		ret = sp_mpi_clock_add_group(&g);
	if (!ret)
		ret = sp_groups_write(W->w, &g);
	if (!ret)
		ret = sp_merge_meta(&meta, t0, W->dropped, "parallel", W->recv);
	if (!ret)
		ret = sp_writer_put_metadata(W->w, &meta);
	if (!ret)
		ret = sp_writer_raw_offsets(W->w, W->off);
	if (!ret)
		ret = sp_writer_seal(W->w);
	sp_meta_free(&meta);
	sp_groups_free(&g);
	free(names);
	return ret;
}

/* What rank 0 tells every rank after the layout. */
struct layout_msg {
	int64_t ret;
	uint64_t off[SP_RAW_NCOLS];
	uint64_t ino;
	uint64_t path_len;
	uint64_t size;   /* the temporary's size */
	uint64_t gather; /* small: rank 0 writes every rank's slices */
};

/* The layout phase; every rank ends with the offsets and the temporary's
 * path (tmp, PATH_MAX) and inode, or a failure in W->ret. */
/* Bytes of one event and one MPI value together in this file's columns. */
static uint64_t value_bytes(const struct pw *W)
{
	uint64_t b = sp_raw_col_size(SP_RAW_EV_START) + sp_raw_col_size(SP_RAW_EV_END);
	if (W->off[SP_RAW_EV_THREAD] != SP_RAW_ABSENT)
		b += sp_raw_col_size(SP_RAW_EV_THREAD);
	if (W->columns & SP_WCOL_MPI)
		b += SP_MERGE_MPI_VBYTES;
	return b;
}

/* Bytes of one index row in this file's columns. */
static uint64_t row_bytes(const struct pw *W)
{
	uint64_t width = 0;
	for (int c = SP_RAW_ROW0; c < SP_RAW_NCOLS; c++)
		width += W->off[c] == SP_RAW_ABSENT ? 0 : sp_raw_col_size((enum sp_raw_col)c);
	return width;
}

/* A file past SP_PWRITE_GATHER_MAX goes through rank 0 too when every rank
 * is on one crowded host (rank 0's node communicator is the world): 64
 * ranks of the proxy on 2 CPUs, a 17 MB file, wrote in 48-76 ms gathered
 * against 164-179 ms through MPI-IO (stop 44). In rounds of at most
 * SP_PWRITE_GATHER_ROUND bytes, so not with so many ranks that a round
 * would hold fewer than 1024 values of each, nor when the index rows of the
 * first round would not fit beside one. Rank 0, after its layout. */
static bool gather_crowded_host(const struct pw *W)
{
	int n = 0;
	if (!sp_mpi_crowded || sp_mpi_node_comm == MPI_COMM_NULL ||
	    PMPI_Comm_size(sp_mpi_node_comm, &n) != MPI_SUCCESS || n != W->P)
		return false;
	uint64_t first = W->total[N_ROWS] * row_bytes(W) +
			 W->total[N_THREADS] * 8 * (SP_RAW_TT_DAEMON - SP_RAW_TT_RANKS + 1);
	return (uint64_t)W->P * 1024 * value_bytes(W) <= SP_PWRITE_GATHER_ROUND &&
	       first <= SP_PWRITE_GATHER_MAX - SP_PWRITE_GATHER_ROUND;
}

static void phase_layout(struct pw *W, int64_t t0, char *tmp, uint64_t *ret_ino)
{
	struct sp_merge_local *l = W->l;
	const struct sp_snapshot *s = &l->s;
	uint64_t flen = 0, ftot = 0, ttot = 0, ctot = 0;
	char *mine_files = row_files(s, &flen), *files = NULL, *tidx = NULL, *comms = NULL;
	uint64_t *comm_bytes = NULL;
	int64_t *index = malloc(((size_t)W->mine[N_THREADS] + 1) * sizeof *index);
	for (uint64_t i = 0; index && i < W->mine[N_THREADS]; i++)
		index[i] = s->threads[i].index;
	if (!mine_files || !index)
		fail(W, -ENOMEM);
	struct layout_msg m = { .ret = -EIO };
	if (all_ok(W)) {
		/* every rank makes every call: rank 0 decides from what it got */
		int r1 = gather_bytes(W, mine_files, flen, &files, &ftot, NULL);
		int r2 = gather_bytes(W, index, W->mine[N_THREADS] * sizeof *index, &tidx, &ttot,
				      NULL);
		int r3 = gather_bytes(W, l->comms ? (void *)l->comms : (void *)"",
				      l->h.ncomms * sizeof *l->comms, &comms, &ctot, &comm_bytes);
		m.ret = r1 ? r1 : r2 ? r2 : r3;
	}
	if (W->rank == 0 && !m.ret) {
		m.ret = root_layout(W, files, ftot, (const int64_t *)(void *)tidx, comms,
				    comm_bytes, t0);
	}
	if (W->rank == 0 && !m.ret) {
		const char *p = sp_writer_temp_path(W->w);
		uint64_t dev = 0;
		m.path_len = strlen(p) + 1;
		m.ret = m.path_len <= PATH_MAX ? sp_writer_temp_id(W->w, &dev, &m.ino, &m.size)
					       : -ENAMETOOLONG;
		m.gather = !strcmp(sp_config.finalize, "auto") &&
			   (m.size <= SP_PWRITE_GATHER_MAX || gather_crowded_host(W));
		memcpy(m.off, W->off, sizeof m.off);
		if (!m.ret)
			memcpy(tmp, p, m.path_len);
	}
	sp_mpi_await(W->comm, 0); /* the others wait for the layout asleep */
	if (sp_mpi_bcast(&m, sizeof m, MPI_BYTE, 0, W->comm) != MPI_SUCCESS)
		m.ret = -EIO;
	if (!m.ret && (m.path_len == 0 || m.path_len > PATH_MAX ||
		       sp_mpi_bcast(tmp, (int)m.path_len, MPI_CHAR, 0, W->comm) != MPI_SUCCESS ||
		       tmp[m.path_len - 1]))
		m.ret = -EIO;
	if (m.ret)
		W->ret = (int)m.ret; /* every rank agrees */
	memcpy(W->off, m.off, sizeof W->off);
	*ret_ino = m.ino;
	W->size = m.size;
	W->gather = m.gather != 0;
	/* A small file's rounds hold all of it at most; a crowded host's bigger
	 * one is cut into rounds of SP_PWRITE_GATHER_ROUND bytes. */
	W->chunk = CHUNK;
	if (W->gather && W->size > SP_PWRITE_GATHER_MAX) {
		uint64_t n = SP_PWRITE_GATHER_ROUND / ((uint64_t)W->P * value_bytes(W));
		W->chunk = n < CHUNK ? n : CHUNK;
	}
	free(mine_files);
	free(index);
	free(files);
	free(tidx);
	free(comms);
	free(comm_bytes);
}

/* ---- write: every rank its slices ----------------------------------------- */

/*
 * This rank's pieces of one collective write: (file offset, memory, bytes)
 * of every column slice it writes in a round, described to MPI as one
 * file view and one memory type, so that a round is one
 * MPI_File_write_at_all whatever the number of columns.
 */
struct blocks {
	int n, cap;
	MPI_Aint *file, *mem;
	int *len;
	int *order;
};

struct slices {
	MPI_File fh;                  /* not with W->gather */
	struct pw *W;
	int ok;
	struct blocks b;
	int fd, dirfd;                /* a plan's stream: the temporary, its directory */
};

/* Values [first, first+n) of this rank's slice of column c, from buf. */
static void put_col(struct slices *S, enum sp_raw_col c, int which, uint64_t first, uint64_t n,
		    const void *buf)
{
	struct pw *W = S->W;
	struct blocks *b = &S->b;
	size_t size = sp_raw_col_size(c);
	if (W->off[c] == SP_RAW_ABSENT || n == 0 || !S->ok)
		return;
	if (n * size > INT32_MAX) {
		S->ok = 0;
		return;
	}
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 64;
		MPI_Aint *f = realloc(b->file, (size_t)cap * sizeof *f);
		if (f)
			b->file = f;
		MPI_Aint *m = realloc(b->mem, (size_t)cap * sizeof *m);
		if (m)
			b->mem = m;
		int *l = realloc(b->len, (size_t)cap * sizeof *l);
		if (l)
			b->len = l;
		int *o = realloc(b->order, (size_t)cap * sizeof *o);
		if (o)
			b->order = o;
		if (!f || !m || !l || !o) {
			S->ok = 0;
			return;
		}
		b->cap = cap;
	}
	MPI_Aint addr;
	if (PMPI_Get_address(buf, &addr) != MPI_SUCCESS)
		S->ok = 0;
	b->file[b->n] = (MPI_Aint)(W->off[c] + (W->base[which] + first) * size);
	b->mem[b->n] = addr;
	b->len[b->n] = (int)(n * size);
	b->n++;
}

static int cmp_block(const void *pa, const void *pb, void *arg)
{
	const MPI_Aint *file = arg;
	MPI_Aint a = file[*(const int *)pa], b = file[*(const int *)pb];
	return (a > b) - (a < b);
}

/* One collective write of the round's blocks (every rank, even with none):
 * a file view of the blocks in file order (MPI wants its displacements
 * non-decreasing) and the memory in the same order. */
static void gather_round(struct slices *S);

static void write_round(struct slices *S)
{
	struct blocks *b = &S->b;
	if (S->W->gather)
		return gather_round(S);
	int n = S->ok ? b->n : 0;
	MPI_Datatype ft = MPI_BYTE, mt = MPI_BYTE;
	MPI_Aint *fd = NULL, *md = NULL;
	int *len = NULL, count = 0;
	if (n > 0) {
		fd = malloc((size_t)n * sizeof *fd);
		md = malloc((size_t)n * sizeof *md);
		len = malloc((size_t)n * sizeof *len);
		if (!fd || !md || !len)
			n = 0, S->ok = 0;
	}
	if (n > 0) {
		for (int i = 0; i < n; i++)
			b->order[i] = i;
		qsort_r(b->order, (size_t)n, sizeof *b->order, cmp_block, b->file);
		for (int i = 0; i < n; i++) {
			fd[i] = b->file[b->order[i]];
			md[i] = b->mem[b->order[i]];
			len[i] = b->len[b->order[i]];
		}
		if (PMPI_Type_create_hindexed(n, len, fd, MPI_BYTE, &ft) != MPI_SUCCESS ||
		    PMPI_Type_commit(&ft) != MPI_SUCCESS ||
		    PMPI_Type_create_hindexed(n, len, md, MPI_BYTE, &mt) != MPI_SUCCESS ||
		    PMPI_Type_commit(&mt) != MPI_SUCCESS)
			S->ok = 0;
		else
			count = 1;
	}
	MPI_Status st;
	if (PMPI_File_set_view(S->fh, 0, MPI_BYTE, count ? ft : MPI_BYTE, "native",
			       MPI_INFO_NULL) != MPI_SUCCESS ||
	    PMPI_File_write_at_all(S->fh, 0, count ? MPI_BOTTOM : (void *)S, count,
				   count ? mt : MPI_BYTE, &st) != MPI_SUCCESS)
		S->ok = 0;
	if (ft != MPI_BYTE)
		PMPI_Type_free(&ft);
	if (mt != MPI_BYTE)
		PMPI_Type_free(&mt);
	free(fd);
	free(md);
	free(len);
	b->n = 0;
}

/*
 * Rank 0 writes a block received in a gather round: (file offset, length)
 * then the bytes, inside the temporary's allocation (its size after the
 * layout), or the round fails.
 */
static int put_gathered(struct pw *W, const char *p, uint64_t n)
{
	int fd = sp_writer_temp_fd(W->w);
	while (n > 0) {
		uint64_t h[2];
		if (n < sizeof h || fd < 0)
			return -EIO;
		memcpy(h, p, sizeof h);
		p += sizeof h;
		n -= sizeof h;
		if (h[1] > n || h[0] > W->size || h[1] > W->size - h[0])
			return -EIO;
		int ret = sp_pwrite_full(fd, p, (size_t)h[1], h[0]);
		if (ret)
			return ret;
		p += h[1];
		n -= h[1];
	}
	return 0;
}

/*
 * One round of a small file (W->gather): every rank packs its blocks as
 * (file offset, length, bytes) and rank 0 gathers them and pwrite()s them
 * into the temporary. No MPI-IO: its open alone (the io components loaded
 * on every rank) took longer than the whole write of a few MB. Collective.
 */
static void gather_round(struct slices *S)
{
	struct pw *W = S->W;
	struct blocks *b = &S->b;
	uint64_t bytes = 0;
	for (int i = 0; S->ok && i < b->n; i++)
		bytes += 2 * sizeof(uint64_t) + (uint64_t)b->len[i];
	char *mine = S->ok && bytes <= SP_PWRITE_GATHER_MAX ? malloc(bytes + 1) : NULL;
	if (!mine)
		S->ok = 0, bytes = 0; /* sends nothing; the write fails on every rank at its end */
	/* SCOPE_PROFILER_TEST_GATHER_PAST=R (test only): rank R's blocks lie
	 * past the file, which rank 0 must refuse */
	const char *past = getenv("SCOPE_PROFILER_TEST_GATHER_PAST");
	uint64_t shift = past && *past && atoi(past) == W->rank ? W->size : 0;
	char *p = mine;
	for (int i = 0; mine && i < b->n; i++) {
		uint64_t h[2] = { (uint64_t)b->file[i] + shift, (uint64_t)b->len[i] };
		memcpy(p, h, sizeof h);
		memcpy(p + sizeof h, (const void *)(uintptr_t)b->mem[i], (size_t)b->len[i]);
		p += sizeof h + (size_t)b->len[i];
	}
	char *all = NULL;
	uint64_t total = 0, *counts = NULL;
	if (gather_bytes(W, mine ? mine : "", bytes, &all, &total, &counts))
		S->ok = 0;
	for (int r = 0, at = 0; W->rank == 0 && S->ok && all && counts && r < W->P; r++) {
		if (put_gathered(W, all + at, counts[r]))
			S->ok = 0;
		at += (int)counts[r]; /* the counts sum to total <= INT32_MAX */
	}
	free(all);
	free(counts);
	free(mine);
	b->n = 0;
}

/* The rank_region_index columns of this rank's rows, packed into *ret_buf
 * (freed by the caller after the round's write). */
static void put_rows(struct slices *S, char **ret_buf)
{
	struct pw *W = S->W;
	struct sp_merge_local *l = W->l;
	const struct sp_snapshot *s = &l->s;
	uint64_t n = s->nrows, width = row_bytes(W);
	struct sp_writer_row *rows = calloc(n + 1, sizeof *rows);
	char *buf = malloc(n * width + 1);
	*ret_buf = buf;
	if (!rows || !buf) {
		S->ok = 0;
		free(rows);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		const struct sp_snap_row *r = &s->rows[i];
		int64_t mo = l->row_mpi[i];
		rows[i] = (struct sp_writer_row){
			.region = l->map[r->region], .rank = (uint32_t)W->rank,
			.offset = W->base[N_EVENTS] + r->offset, .count = r->count,
			.source_line = r->source_line, .summary = r->summary,
			.dropped = r->dropped, .throttled_calls = r->throttled_calls,
			.throttled_ns = r->throttled_ns, .throttle_timed = r->throttle_timed,
			.throttled_ci_ns = r->throttled_ci_ns,
			.throttled_since_ns = r->throttled_since_ns,
			.patched_since_ns = r->patched_since_ns,
			.mpi_offset = mo < 0 ? -1 : (int64_t)(W->base[N_MPI] + (uint64_t)mo),
			.exclusive_ns = W->excl[i],
		};
	}
	char *p = buf;
	for (int c = SP_RAW_ROW0; c < SP_RAW_NCOLS && n; c++) {
		if (W->off[c] == SP_RAW_ABSENT)
			continue;
		sp_writer_pack_rows((enum sp_raw_col)c, rows, n, p);
		put_col(S, (enum sp_raw_col)c, N_ROWS, 0, n, p);
		p += n * sp_raw_col_size((enum sp_raw_col)c);
	}
	free(rows);
}

/* The thread_table columns of this rank's threads, packed into *ret_buf. */
static void put_threads(struct slices *S, char **ret_buf)
{
	struct pw *W = S->W;
	const struct sp_snapshot *s = &W->l->s;
	uint64_t n = W->mine[N_THREADS];
	struct sp_writer_thread *t = calloc(n + 1, sizeof *t);
	char *buf = malloc((n + 1) * 8 * (SP_RAW_TT_DAEMON - SP_RAW_TT_RANKS + 1));
	*ret_buf = buf;
	if (!t || !buf) {
		S->ok = 0;
		free(t);
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		t[i] = (struct sp_writer_thread){ .rank = (uint32_t)W->rank,
			.index = s->threads[i].index, .ident = s->threads[i].ident,
			.native_id = s->threads[i].native_id, .start_ns = s->threads[i].start_ns,
			.end_ns = s->threads[i].end_ns, .cpu_ns = -1 };
	char *p = buf;
	for (int c = SP_RAW_TT_RANKS; c <= SP_RAW_TT_DAEMON && n; c++) {
		if (W->off[c] == SP_RAW_ABSENT)
			continue;
		sp_writer_pack_threads((enum sp_raw_col)c, t, n, p);
		put_col(S, (enum sp_raw_col)c, N_THREADS, 0, n, p);
		p += n * sp_raw_col_size((enum sp_raw_col)c);
	}
	free(t);
}

/* Events [at, at+chunk) of this rank (start and end as they are). */
static void put_events(struct slices *S, uint64_t at, int64_t *tid)
{
	struct pw *W = S->W;
	const struct sp_snapshot *s = &W->l->s;
	uint64_t mine = W->mine[N_MEM]; /* a plan streams the others */
	uint64_t n = at < mine ? (mine - at < W->chunk ? mine - at : W->chunk) : 0;
	if (n == 0)
		return;
	put_col(S, SP_RAW_EV_START, N_EVENTS, at, n, s->start + at);
	put_col(S, SP_RAW_EV_END, N_EVENTS, at, n, s->end + at);
	if (W->off[SP_RAW_EV_THREAD] == SP_RAW_ABSENT)
		return;
	for (uint64_t i = 0; i < n; i++)
		tid[i] = s->thread ? s->thread[at + i] : 0;
	put_col(S, SP_RAW_EV_THREAD, N_EVENTS, at, n, tid);
}

/* The next chunk of MPI values of this rank (cursor c), packed into buf. */
static void put_mpi(struct slices *S, uint64_t at, struct sp_merge_cursor *c, char *buf)
{
	struct pw *W = S->W;
	uint64_t mine = W->mine[N_MPI];
	uint64_t n = at < mine ? (mine - at < W->chunk ? mine - at : W->chunk) : 0;
	if (n == 0)
		return;
	sp_merge_pack_mpi(W->l, c, n, buf);
	struct sp_part_mpi m = sp_merge_mpi_view(buf, n);
	put_col(S, SP_RAW_MPI_BYTES, N_MPI, at, n, m.bytes);
	put_col(S, SP_RAW_MPI_PEERS, N_MPI, at, n, m.peers);
	put_col(S, SP_RAW_MPI_ROOTS, N_MPI, at, n, m.roots);
	put_col(S, SP_RAW_MPI_TAGS, N_MPI, at, n, m.tags);
	put_col(S, SP_RAW_MPI_COMMS, N_MPI, at, n, m.comms);
	put_col(S, SP_RAW_MPI_SITES, N_MPI, at, n, m.callsite_ids);
}

static void close_stream(struct slices *S)
{
	if (S->fd >= 0 && close(S->fd) != 0)
		S->ok = 0;
	if (S->dirfd >= 0)
		close(S->dirfd);
	S->fd = S->dirfd = -1;
}

/*
 * A plan's events into this rank's slices of the event columns, with
 * pwrite() on the temporary (every rank writes only its own bytes; the
 * data is on disk, fdatasync, before the rank reports), the rows'
 * summaries and exclusive times on the way. Not collective.
 */
static void stream_plan(struct pw *W, struct slices *S)
{
	struct sp_merge_local *l = W->l;
	struct sp_writer_times t = { .fd = S->fd, .dirfd = S->dirfd,
		.start = W->off[SP_RAW_EV_START] + W->base[N_EVENTS] * sizeof(int64_t),
		.end = W->off[SP_RAW_EV_END] + W->base[N_EVENTS] * sizeof(int64_t),
		.thread = W->off[SP_RAW_EV_THREAD] == SP_RAW_ABSENT
				  ? SP_RAW_ABSENT
				  : W->off[SP_RAW_EV_THREAD] +
					    W->base[N_EVENTS] * sp_raw_col_size(SP_RAW_EV_THREAD) };
	struct sp_stream_part o = stream_map;
	o.pos = W->rpos;
	int ret = sp_snapshot_stream_part(&l->s, l->plan, &t, &o);
	l->plan = NULL; /* consumed */
	if (!ret && fdatasync(S->fd) != 0)
		ret = -errno;
	for (uint32_t i = 0; !ret && i < l->s.nrows; i++)
		W->excl[i] = l->s.exclusive_known ? l->s.rows[i].exclusive_ns : -1;
	if (ret) {
		sp_log(SP_LOG_WARN, "mpi", "rank %d: could not write its events: %s", W->rank,
		       strerror(-ret));
		S->ok = 0;
	}
	close_stream(S);
}

/*
 * Open the temporary rank 0 sealed (the inode it reported: nothing swapped
 * in at its name is written through; on another host the name resolves on
 * the shared file system). SCOPE_PROFILER_TEST_MPIIO_FAIL=R (test only)
 * makes rank R fail here, as a file system without MPI-IO support would.
 */
static bool open_slices(struct slices *S, const char *tmp, uint64_t ino)
{
	struct stat st;
	const char *f = getenv("SCOPE_PROFILER_TEST_MPIIO_FAIL");
	bool forced = !S->W->gather && f && *f && atoi(f) == S->W->rank;
	int ok = !forced && lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) &&
		 (uint64_t)st.st_ino == ino;
	S->fd = S->dirfd = -1;
	if (ok && S->W->l->plan) { /* the stream's pwrite()s, on the same inode */
		S->fd = open(tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		S->dirfd = sp_open_dir_of(tmp);
		ok = S->fd >= 0 && S->dirfd >= 0 && fstat(S->fd, &st) == 0 &&
		     (uint64_t)st.st_ino == ino;
	}
	/* MPI_File_open is collective, with one name on every rank: a rank
	 * whose check failed takes part (no create, no truncation) and then
	 * nothing is written anywhere. A small file goes through rank 0,
	 * which holds the temporary open: no MPI-IO. */
	bool opened = S->W->gather ||
		      PMPI_File_open(S->W->comm, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &S->fh) ==
			      MPI_SUCCESS;
	ok = ok && opened;
	if (sp_mpi_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, S->W->comm) != MPI_SUCCESS)
		ok = 0;
	if (!ok && opened && !S->W->gather)
		PMPI_File_close(&S->fh);
	if (!ok)
		close_stream(S);
	return ok;
}

/*
 * Rounds of one collective write each: the first has the index and thread
 * rows, every round one chunk of events and one of MPI values, as many
 * rounds as the rank with the most needs (all ranks take part in each).
 */
static void phase_write(struct pw *W, struct slices *S)
{
	if (W->l->plan)
		stream_plan(W, S);
	uint64_t most = W->most[N_MEM] > W->most[N_MPI] ? W->most[N_MEM] : W->most[N_MPI];
	uint64_t rounds = most ? (most + W->chunk - 1) / W->chunk : 1;
	char *rows = NULL, *threads = NULL;
	int64_t *tid = malloc((size_t)CHUNK * sizeof *tid);
	char *mpi = malloc((size_t)CHUNK * SP_MERGE_MPI_VBYTES);
	struct sp_merge_cursor cur = { 0 };
	if (!tid || !mpi)
		S->ok = 0;
	for (uint64_t r = 0; r < rounds; r++) {
		if (r == 0) {
			put_rows(S, &rows);
			if (W->columns & SP_WCOL_THREAD_IDS)
				put_threads(S, &threads);
		}
		if (S->ok)
			put_events(S, r * W->chunk, tid);
		if (S->ok && (W->columns & SP_WCOL_MPI))
			put_mpi(S, r * W->chunk, &cur, mpi);
		write_round(S);
		if (r == 0) {
			free(rows);
			free(threads);
			rows = threads = NULL;
		}
	}
	free(tid);
	free(mpi);
	free(S->b.file);
	free(S->b.mem);
	free(S->b.len);
	free(S->b.order);
	if (!W->gather && PMPI_File_close(&S->fh) != MPI_SUCCESS)
		S->ok = 0;
	if (sp_mpi_allreduce(MPI_IN_PLACE, &S->ok, 1, MPI_INT, MPI_MIN, W->comm) != MPI_SUCCESS)
		S->ok = 0;
}

static void pw_free(struct pw *W)
{
	sp_writer_destroy(W->w);
	free(W->final_blob);
	free(W->final_kinds);
	for (uint32_t i = 0; i < W->nuncalled; i++)
		free(W->uncalled[i]);
	free(W->uncalled);
	sp_names_free(&W->sites);
	free(W->excl);
	free(W->rpos);
}

int sp_pwrite(struct sp_merge_local *l, MPI_Comm comm, const char *path)
{
	int64_t t0 = sp_monotonic_ns();
	struct pw W = { .comm = comm, .l = l, .path = path, .rank = sp_mpi_world_rank,
			.P = sp_mpi_world_size, .chunk = CHUNK };
	char tmp[PATH_MAX];
	uint64_t ino = 0;
	if (!l->h.ok || l->s.times_in_file)
		fail(&W, -ENOMEM);
	if (!all_ok(&W))
		return SP_PWRITE_FALLBACK; /* the stream copes with a rank without data */
	phase_names(&W);
	W.t[0] = sp_monotonic_ns();
	if (all_ok(&W))
		phase_scan(&W);
	W.t[1] = W.t[2] = sp_monotonic_ns();
	if (all_ok(&W))
		phase_layout(&W, t0, tmp, &ino);
	else
		W.ret = W.ret ? W.ret : -EIO;
	W.t[2] = sp_monotonic_ns();
	int ret = W.ret;
	struct slices S = { .W = &W, .ok = 1, .fd = -1, .dirfd = -1 };
	if (!ret && !open_slices(&S, tmp, ino)) {
		if (W.rank == 0)
			sp_log(SP_LOG_WARN, "mpi", "MPI-IO could not open %s: rank 0 writes every "
			       "rank's data instead", tmp);
		pw_free(&W);
		return SP_PWRITE_FALLBACK;
	}
	if (!ret) {
		phase_write(&W, &S);
		ret = S.ok ? 0 : -EIO;
	}
	W.t[3] = sp_monotonic_ns();
	if (W.rank == 0 && !ret) {
		/* The metadata went in with the layout, before the events were
		 * written: the finalize time it holds leaves the write out, which
		 * the overhead estimate needs (every rank waited for it). Set to
		 * the whole finalize now; the file is fine without it. So are
		 * the bytes rank 0 received, when it gathered the slices. */
		const char *keys[] = { SP_META_FINALIZE_NS, SP_META_MPI_FINALIZE_RECV };
		int64_t values[] = { sp_recorder_finalize_spent_ns(), (int64_t)W.recv };
		int up = sp_writer_update_ints(W.w, keys, values, W.gather ? 2 : 1);
		if (up)
			sp_log(SP_LOG_DEBUG, "finalize", "could not update %s after the write: %s",
			       SP_META_FINALIZE_NS, strerror(-up));
		ret = sp_writer_publish(W.w);
		W.w = NULL;
	}
	sp_mpi_await(comm, 0); /* and for the commit */
	if (sp_mpi_bcast(&ret, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
		ret = -EIO;
	int64_t t4 = sp_monotonic_ns();
	if (W.rank == 0) {
		sp_log(SP_LOG_DEBUG, "finalize", "path=parallel ranks=%d events=%llu "
		       "rank0_recv_bytes=%llu write=%s names_ms=%.3f scan_ms=%.3f "
		       "layout_ms=%.3f write_ms=%.3f commit_ms=%.3f", W.P,
		       (unsigned long long)W.total[N_EVENTS], (unsigned long long)W.recv,
		       W.gather ? "gather" : "mpiio", (W.t[0] - t0) / 1e6, (W.t[1] - W.t[0]) / 1e6,
		       (W.t[2] - W.t[1]) / 1e6, (W.t[3] - W.t[2]) / 1e6, (t4 - W.t[3]) / 1e6);
		if (ret)
			sp_log(SP_LOG_WARN, "mpi", "could not write %s: %s", path, strerror(-ret));
		else
			sp_log(SP_LOG_INFO, "mpi", "wrote %s (%d rank%s, %u region%s, %llu events)",
			       path, W.P, W.P == 1 ? "" : "s", W.nfinal, W.nfinal == 1 ? "" : "s",
			       (unsigned long long)W.total[N_EVENTS]);
		if (!ret)
			sp_lifecycle_warn_empty(path, W.total[N_ROWS]);
		/* A fallback to the stream (SP_PWRITE_DONE not returned) says it there. */
		if (ret >= 0)
			sp_merge_warn_dropped(W.dropped, W.P, ret == 0);
	}
	pw_free(&W);
	return ret < 0 ? ret : SP_PWRITE_DONE;
}
