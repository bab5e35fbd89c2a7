/* SPDX-License-Identifier: MIT */
/*
 * Per-call MPI data: region ids of the MPI functions, byte counts, the
 * per-thread record arrays that event aux fields point into, and the
 * request table that keeps post-time data with non-blocking requests.
 */
#define _GNU_SOURCE
#include <pthread.h>
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
	uint32_t id = sp_region_intern(sp_mpi_fn_names[fn], SP_REGION_MPI);
	if (id != SP_NO_REGION)
		__atomic_store_n(&sp_mpi_region_ids[fn], id + 1, __ATOMIC_RELAXED);
	return id;
}

/* ---- bytes ---------------------------------------------------------------- */

int64_t sp_mpi_bytes(int count, MPI_Datatype type)
{
	int size = 0;
	if (type == MPI_DATATYPE_NULL || count < 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
	    size == MPI_UNDEFINED)
		return -1;
	return (int64_t)count * size;
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

void sp_mpi_peer_from_status(struct sp_mpi_call *c, const void *status, int fortran)
{
	if (c->peer != MPI_ANY_SOURCE || !status)
		return;
	MPI_Status st;
	if (fortran) {
		if (status == (const void *)MPI_F_STATUS_IGNORE ||
		    PMPI_Status_f2c((const MPI_Fint *)status, &st) != MPI_SUCCESS)
			return;
	} else {
		if (status == (const void *)MPI_STATUS_IGNORE)
			return;
		st = *(const MPI_Status *)status;
	}
	c->peer = st.MPI_SOURCE;
	if (c->tag == MPI_ANY_TAG)
		c->tag = st.MPI_TAG;
}

/* ---- per-thread records ------------------------------------------------- */

/*
 * Records of one thread. Appended only by the owning thread while it
 * records; read by the merge after recording stopped. Indexed by the
 * recorder's thread index, and never freed before the process ends, so a
 * thread that exited keeps its records (as its events are kept).
 */
struct mpi_thread {
	struct sp_mpi_rec *recs;
	uint32_t *sites;   /* parallel to recs, only with call sites on */
	uint32_t n, cap;
};

static __thread struct mpi_thread *my __attribute__((tls_model("initial-exec")));
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mpi_thread **by_index;
static uint32_t nby_index;

static struct mpi_thread *attach(uint32_t index)
{
	struct mpi_thread *th = calloc(1, sizeof *th);
	if (!th)
		return NULL;
	pthread_mutex_lock(&threads_lock);
	if (index >= nby_index) {
		uint32_t n = index + 64;
		struct mpi_thread **v = realloc(by_index, n * sizeof *v);
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

static bool grow(struct mpi_thread *th)
{
	uint32_t cap = th->cap ? 2 * th->cap : 4096;
	if (sp_mpi_cs_frames) {
		uint32_t *sv = realloc(th->sites, cap * sizeof *sv);
		if (!sv)
			return false;
		th->sites = sv;
	}
	struct sp_mpi_rec *v = realloc(th->recs, cap * sizeof *v);
	if (!v)
		return false;
	th->recs = v;
	th->cap = cap;
	return true;
}

/* Append c->rec (and the call site) to this thread's records; the event's
 * aux points to it. */
static inline void append(struct sp_mpi_call *c)
{
	struct mpi_thread *th = my;
	if (SP_UNLIKELY(!th)) {
		th = my = attach(sp_tls->index);
		if (!th)
			return;
	}
	if (SP_UNLIKELY(th->n == th->cap) && !grow(th))
		return;
	th->recs[th->n] = c->rec;
	if (th->sites)
		th->sites[th->n] = c->site;
	c->ev->aux = ++th->n; /* 1 + index */
}

void sp_mpi_store(struct sp_mpi_call *c)
{
	sp_mpi_resolve(c);
	if (c->saved != c->small)
		free(c->saved);
	if (!c->ev || !sp_tls)
		return;
	const struct sp_mpi_rec *r = &c->rec;
	if (r->bytes == -1 && r->peer == -1 && r->root == -1 && r->tag == -1 &&
	    r->comm < 0x3fffffff && !c->site) {
		/* No message data: the communicator id fits in aux itself, no
		 * record memory (most calls: Comm_rank, Barrier, Type_*, ...). */
		c->ev->aux = SP_MPI_AUX_INLINE | (uint32_t)(r->comm + 1);
		return;
	}
	append(c);
}

void sp_mpi_store_comm(struct sp_mpi_call *c, int32_t comm)
{
	if (!sp_tls)
		return;
	c->rec = (struct sp_mpi_rec){ .bytes = -1, .peer = -1, .root = -1, .tag = -1, .comm = comm };
	append(c);
}

uint32_t sp_mpi_rec_site(uint32_t thread, uint32_t aux)
{
	if (!aux || (aux & SP_MPI_AUX_INLINE) || thread >= nby_index || !by_index[thread])
		return 0;
	const struct mpi_thread *th = by_index[thread];
	return th->sites && aux <= th->n ? th->sites[aux - 1] : 0;
}

void sp_mpi_columns(const struct sp_snapshot *s, uint64_t first, uint64_t n, int64_t *bytes,
		    int32_t *peer, int32_t *root, int32_t *tag, int32_t *comm)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t e = first + i;
		uint32_t aux = s->aux ? s->aux[e] : 0, t = s->thread[e];
		const struct sp_mpi_rec *r = NULL;
		if (aux & SP_MPI_AUX_INLINE) {
			bytes[i] = -1;
			peer[i] = root[i] = tag[i] = -1;
			comm[i] = (int32_t)(aux & ~SP_MPI_AUX_INLINE) - 1;
			continue;
		}
		if (aux && t < nby_index && by_index[t] && aux <= by_index[t]->n)
			r = &by_index[t]->recs[aux - 1];
		bytes[i] = r ? r->bytes : -1;
		peer[i] = r ? r->peer : -1;
		root[i] = r ? r->root : -1;
		tag[i] = r ? r->tag : -1;
		comm[i] = r ? r->comm : -1;
	}
}

void sp_mpi_records_reset(void)
{
	pthread_mutex_lock(&threads_lock);
	for (uint32_t i = 0; i < nby_index; i++)
		if (by_index[i])
			by_index[i]->n = 0;
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
#define REQ_SLOTS (1u << 16)
#define REQ_PROBE 64
struct req_slot {
	_Atomic(uintptr_t) key;
	struct sp_mpi_rec rec;
};
static struct req_slot *reqs;

static inline size_t req_hash(uintptr_t k)
{
	return (size_t)((k >> 3) * 0x9e3779b97f4a7c15ull >> 40) & (REQ_SLOTS - 1);
}

int sp_mpi_record_init(void)
{
	if (!reqs)
		reqs = calloc(REQ_SLOTS, sizeof *reqs);
	return reqs ? 0 : -ENOMEM;
}

void sp_mpi_req_put(struct sp_mpi_call *c, MPI_Request req)
{
	uintptr_t k = (uintptr_t)req;
	if (!reqs || req == MPI_REQUEST_NULL)
		return;
	sp_mpi_resolve(c);
	size_t h = req_hash(k);
	for (size_t i = 0; i < REQ_PROBE; i++) {
		struct req_slot *s = &reqs[(h + i) & (REQ_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire), zero = 0;
		if (cur == k || (cur == 0 && atomic_compare_exchange_strong(&s->key, &zero, k)) ||
		    zero == k) {
			s->rec = c->rec;
			return;
		}
	}
}

static const struct sp_mpi_rec *req_get(MPI_Request req)
{
	uintptr_t k = (uintptr_t)req;
	if (!reqs || req == MPI_REQUEST_NULL)
		return NULL;
	size_t h = req_hash(k);
	for (size_t i = 0; i < REQ_PROBE; i++) {
		struct req_slot *s = &reqs[(h + i) & (REQ_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
		if (cur == k)
			return &s->rec;
		if (cur == 0)
			return NULL;
	}
	return NULL;
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
	int64_t bytes = 0;
	int found = 0, known = 0;
	const struct sp_mpi_rec *one = NULL;
	int count = n < 0 ? c->nsaved : n;
	if (n == MPI_UNDEFINED)
		count = 0;
	for (int k = 0; k < count; k++) {
		int i = n < 0 ? k : idx[k] - (fortran ? 1 : 0);
		if (i < 0 || i >= c->nsaved || c->saved[i] == MPI_REQUEST_NULL)
			continue;
		const struct sp_mpi_rec *r = req_get(c->saved[i]);
		found++;
		if (r && r->bytes >= 0) {
			bytes += r->bytes;
			known++;
		}
		one = r;
	}
	c->rec = (struct sp_mpi_rec){ .bytes = known ? bytes : (found ? -1 : 0),
				      .peer = -1, .root = -1, .tag = -1, .comm = -1 };
	if (found == 1 && one) {
		c->rec.peer = one->peer;
		c->rec.root = one->root;
		c->rec.tag = one->tag;
		c->rec.comm = one->comm;
	}
	c->resolved = true;
}
