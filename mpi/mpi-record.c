/* SPDX-License-Identifier: MIT */
/*
 * Per-call MPI data: region ids of the MPI functions, byte counts, the
 * per-thread record arrays that event aux fields point into, and the
 * request table that keeps post-time data with non-blocking requests.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mpi-record.h"
#include "snapshot.h"

bool sp_mpi_on = true;
uint32_t sp_mpi_region_ids[SP_MPI_FN_COUNT];
__thread int sp_mpi_depth __attribute__((tls_model("initial-exec")));

uint32_t sp_mpi_region_slow(enum sp_mpi_fn fn)
{
	uint32_t id = sp_region_intern(sp_mpi_fn_names[fn], sp_mpi_fn_kinds[fn]);
	if (id != SP_NO_REGION)
		__atomic_store_n(&sp_mpi_region_ids[fn], id + 1, __ATOMIC_RELAXED);
	return id;
}

/* ---- bytes ---------------------------------------------------------------- */

__thread struct sp_mpi_tcache sp_mpi_tc __attribute__((tls_model("initial-exec")));
atomic_uint sp_mpi_type_gen = 1; /* the empty cache (gen 0) never matches */

void sp_mpi_type_forget(void)
{
	atomic_fetch_add_explicit(&sp_mpi_type_gen, 1, memory_order_relaxed);
}

int64_t sp_mpi_bytes(int64_t count, MPI_Datatype type)
{
	int size = 0, saved = errno;
	unsigned gen = atomic_load_explicit(&sp_mpi_type_gen, memory_order_relaxed);
	bool ok = type != MPI_DATATYPE_NULL && PMPI_Type_size(type, &size) == MPI_SUCCESS &&
		  size != MPI_UNDEFINED;
	errno = saved;
	if (!ok)
		return -1;
	sp_mpi_tc = (struct sp_mpi_tcache){ .type = type, .size = size, .gen = gen };
	return count < 0 ? -1 : count * size;
}

int64_t sp_mpi_bytes_sum(const void *counts, MPI_Datatype type, MPI_Comm comm)
{
	int n = sp_mpi_comm_count_len(comm);
	int64_t per = sp_mpi_bytes(1, type);
	if (n < 0 || per < 0 || !counts)
		return -1;
	int64_t sum = 0;
	for (int i = 0; i < n; i++)
		sum += ((const int *)counts)[i];
	return sum * per;
}

int64_t sp_mpi_bytes_sumw(const void *counts, const void *types, int fortran, MPI_Comm comm)
{
	int n = sp_mpi_comm_count_len(comm);
	if (n < 0 || !counts || !types)
		return -1;
	int64_t sum = 0;
	for (int i = 0; i < n; i++) {
		MPI_Datatype t = fortran ? PMPI_Type_f2c(((const MPI_Fint *)types)[i])
					 : ((const MPI_Datatype *)types)[i];
		int64_t b = sp_mpi_bytes(((const int *)counts)[i], t);
		if (b < 0)
			return -1;
		sum += b;
	}
	return sum;
}

/* Open MPI's Fortran sentinels (absent from other MPIs: weak). */
extern int mpi_fortran_in_place_ __attribute__((weak));

bool sp_mpi_f_in_place(const void *buf)
{
	return &mpi_fortran_in_place_ && buf == (const void *)&mpi_fortran_in_place_;
}

/* ---- per-thread records ------------------------------------------------- */

__thread struct sp_mpi_thread *sp_mpi_my __attribute__((tls_model("initial-exec")));
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
/* Indexed by the recorder's thread index. */
static struct sp_mpi_thread **by_index;
static uint32_t nby_index;

static struct sp_mpi_thread *attach(uint32_t index)
{
	struct sp_mpi_thread *th = calloc(1, sizeof *th);
	if (!th)
		return NULL;
	pthread_mutex_lock(&threads_lock);
	if (index >= nby_index) {
		uint32_t n = index + 64;
		struct sp_mpi_thread **v = realloc(by_index, n * sizeof *v);
		if (v) {
			memset(v + nby_index, 0, (n - nby_index) * sizeof *v);
			by_index = v;
			nby_index = n;
		}
	}
	if (index < nby_index && !by_index[index])
		by_index[index] = th;
	else {
		free(th);
		th = NULL;
	}
	pthread_mutex_unlock(&threads_lock);
	return th;
}

#define REC_CHUNK_BYTES (SP_MPI_REC_CHUNK * sizeof(struct sp_mpi_rec))

/* Make room for record th->n: the next chunk (reused after a reset, else
 * mapped pre-faulted) and, with call sites on, the site slot. */
static bool grow(struct sp_mpi_thread *th)
{
	if (sp_mpi_cs_frames && th->n >= th->sites_cap) {
		uint32_t cap = th->sites_cap ? 2 * th->sites_cap : 4096;
		uint32_t *sv = realloc(th->sites, cap * sizeof *sv);
		if (!sv)
			return false;
		th->sites = sv;
		th->sites_cap = cap;
	}
	if (th->pos != th->end)
		return true;
	uint32_t k = th->n >> SP_MPI_REC_SHIFT;
	if (k == th->nchunks) {
		if (th->nchunks == th->capchunks) {
			uint32_t cap = th->capchunks ? 2 * th->capchunks : 16;
			struct sp_mpi_rec **v = realloc(th->chunks, cap * sizeof *v);
			if (!v)
				return false;
			th->chunks = v;
			th->capchunks = cap;
		}
		void *m = mmap(NULL, REC_CHUNK_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (m == MAP_FAILED)
			return false;
		th->chunks[th->nchunks++] = m;
	}
	th->pos = th->chunks[k];
	th->end = th->pos + SP_MPI_REC_CHUNK;
	return true;
}

void sp_mpi_append_slow(struct sp_event *ev, struct sp_mpi_rec r, uint32_t site)
{
	int saved = errno;
	struct sp_mpi_thread *th = sp_mpi_my;
	if (!th && sp_tls)
		th = sp_mpi_my = attach(sp_tls->index);
	if (th && grow(th)) {
		if (th->sites)
			th->sites[th->n] = site;
		sp_mpi_rec_copy(th->pos++, &r);
		ev->aux = ++th->n; /* 1 + index */
	}
	errno = saved;
}

static const struct sp_mpi_rec *rec_at(const struct sp_mpi_thread *th, uint32_t index)
{
	return &th->chunks[index >> SP_MPI_REC_SHIFT][index & (SP_MPI_REC_CHUNK - 1)];
}

void sp_mpi_store(struct sp_mpi_call *c)
{
	int saved = errno;
	sp_mpi_resolve(c);
	if (c->saved != c->small)
		free(c->saved);
	errno = saved;
	if (!c->ev || !sp_tls)
		return;
	/* With call sites on, every record appended carries its site (even
	 * none: the sites stay parallel to the records); a call with neither
	 * data nor site keeps its id in aux. */
	if (sp_mpi_cs_frames && (c->site || !sp_mpi_rec_inline(&c->rec)))
		sp_mpi_append_slow(c->ev, c->rec, c->site);
	else
		sp_mpi_rec_keep(c->ev, &c->rec);
}

uint32_t sp_mpi_rec_site(uint32_t thread, uint32_t aux)
{
	if (!aux || (aux & SP_MPI_AUX_INLINE) || thread >= nby_index || !by_index[thread])
		return 0;
	const struct sp_mpi_thread *th = by_index[thread];
	return th->sites && aux <= th->n ? th->sites[aux - 1] : 0;
}

void sp_mpi_rec_of(uint32_t thread, uint32_t aux, struct sp_mpi_rec *ret_rec)
{
	*ret_rec = (struct sp_mpi_rec){ .bytes = -1, .peer = -1, .root = -1, .tag = -1, .comm = -1 };
	if (aux & SP_MPI_AUX_INLINE)
		ret_rec->comm = (int32_t)(aux & ~SP_MPI_AUX_INLINE) - 1;
	else if (aux && thread < nby_index && by_index[thread] && aux <= by_index[thread]->n)
		*ret_rec = *rec_at(by_index[thread], aux - 1);
}

void sp_mpi_columns(const struct sp_snapshot *s, uint64_t first, uint64_t n, int64_t *bytes,
		    int32_t *peer, int32_t *root, int32_t *tag, int32_t *comm)
{
	for (uint64_t i = 0; i < n; i++) {
		struct sp_mpi_rec r;
		sp_mpi_rec_of(s->thread[first + i], s->aux ? s->aux[first + i] : 0, &r);
		bytes[i] = r.bytes;
		peer[i] = r.peer;
		root[i] = r.root;
		tag[i] = r.tag;
		comm[i] = r.comm;
	}
}

void sp_mpi_records_reset(void)
{
	pthread_mutex_lock(&threads_lock);
	for (uint32_t i = 0; i < nby_index; i++)
		if (by_index[i]) {
			/* The chunks stay mapped and are filled again. */
			by_index[i]->n = 0;
			by_index[i]->pos = by_index[i]->end = NULL;
		}
	pthread_mutex_unlock(&threads_lock);
}

/* ---- requests --------------------------------------------------------------- */

/*
 * Request handle -> post-time record. Lock-free open addressing; entries
 * are overwritten, never removed: Open MPI recycles request objects, so the
 * table holds at most the peak number of distinct live requests, and a
 * handle that is live is unique, so a lookup finds the latest post. A wait
 * on a request the table lost (full) records bytes -1.
 */
struct sp_mpi_req_slot *sp_mpi_reqs;

int sp_mpi_record_init(void)
{
	if (!sp_mpi_reqs)
		sp_mpi_reqs = calloc(SP_MPI_REQ_SLOTS, sizeof *sp_mpi_reqs);
	return sp_mpi_reqs ? 0 : -ENOMEM;
}

void sp_mpi_req_put(struct sp_mpi_call *c, MPI_Request req)
{
	if (!sp_mpi_reqs || req == MPI_REQUEST_NULL)
		return;
	sp_mpi_resolve_fast(c);
	sp_mpi_req_put_rec(c->rec, req);
}

void sp_mpi_req_put_rec(struct sp_mpi_rec rec, MPI_Request req)
{
	uintptr_t k = SP_MPI_KEY(req);
	if (!sp_mpi_reqs || req == MPI_REQUEST_NULL)
		return;
	size_t h = sp_mpi_req_hash(k);
	for (size_t i = 0; i < SP_MPI_REQ_PROBE; i++) {
		struct sp_mpi_req_slot *s = &sp_mpi_reqs[(h + i) & (SP_MPI_REQ_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire), zero = 0;
		if (cur == k || (cur == 0 && atomic_compare_exchange_strong(&s->key, &zero, k)) ||
		    zero == k) {
			sp_mpi_rec_copy(&s->rec, &rec);
			return;
		}
	}
}

void sp_mpi_reqs_save(struct sp_mpi_call *c, const void *handles, int n, int fortran)
{
	if (n <= 0 || !handles)
		return;
	if (n > SP_MPI_SAVED) {
		c->saved = malloc((size_t)n * sizeof *c->saved); /* rare: > 16 requests */
		if (!c->saved) {
			c->saved = c->small;
			return;
		}
	}
	for (int i = 0; i < n; i++)
		c->saved[i] = fortran ? PMPI_Request_f2c(((const MPI_Fint *)handles)[i])
				      : ((const MPI_Request *)handles)[i];
	c->nsaved = n;
}

void sp_mpi_reqs_done(struct sp_mpi_call *c, int n, const int *idx, int fortran)
{
	sp_mpi_reqs_rec(&c->rec, c->saved, c->nsaved, n, idx, fortran);
	c->resolved = true;
}
