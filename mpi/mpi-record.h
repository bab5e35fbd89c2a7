/* SPDX-License-Identifier: MIT */
/*
 * The MPI layer's runtime, as the generated wrappers see it: begin (collect
 * post-time data), enter, PMPI call, leave, completion bookkeeping, end.
 * Per-call data becomes one struct sp_mpi_rec per recorded event, referenced
 * by the event's aux field (1 + index into the thread's records).
 */
#ifndef SP_MPI_RECORD_H
#define SP_MPI_RECORD_H

#include <errno.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "mpi-names.h"
#include "recorder.h"

/* The MPI family of the mpi.h this is compiled against: Open MPI, or
 * MPICH and its ABI (Intel MPI, Cray MPICH, MVAPICH). One library per
 * family (mpi/meson.build, preload/meson.build); only=FAMILY in mpi-functions.def. */
#ifdef OPEN_MPI
#define SP_MPI_FAMILY_OPENMPI 1
#define SP_MPI_FAMILY_MPICH 0
#else
#define SP_MPI_FAMILY_OPENMPI 0
#define SP_MPI_FAMILY_MPICH 1
#endif
/* Open MPI's Fortran bindings (mpif.h, use mpi) call PMPI_* in C: their
 * mpi_*_ entry points are wrapped (mpi-fortran.c, mpi-init.c). MPICH's
 * (libmpichfort) call the C MPI_* entry points, where the C wrappers count
 * them, with the handles, MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS_IGNORE
 * already converted to C's: no Fortran wrappers there, so every Fortran
 * call is counted once in both. (MPICH's mpi_f08 calls PMPI_*: those
 * calls are not recorded.) */
#define SP_MPI_FORTRAN_WRAPPERS SP_MPI_FAMILY_OPENMPI

/* A handle (communicator, window, request) as a table key. Open MPI's
 * handles are pointers, MPICH's (and Intel MPI's, Cray MPICH's) are ints:
 * no code hashes, compares or prints a handle other than through this key
 * (an int is sign-extended: still unique, and never 0 for a valid handle). */
#define SP_MPI_KEY(h) ((uintptr_t)(h))

/* "Not given" for peer/root/tag before resolution (MPI uses small negative
 * values for ANY_SOURCE, PROC_NULL, ROOT). */
#define SP_MPI_UNSET INT32_MIN

/* One recorded call's MPI data. -1 means none / not applicable. */
struct sp_mpi_rec {
	int64_t bytes;  /* count x type size at post time */
	int32_t peer;   /* world rank */
	int32_t root;   /* world rank */
	int32_t tag;
	int32_t comm;   /* communicator id of this rank (world 0, self 1) */
};

/* aux of an MPI event: 1 + index into the thread's records, or, with this
 * bit set, a call without message data whose low bits are comm id + 1. */
#define SP_MPI_AUX_INLINE 0x80000000u

#define SP_MPI_SAVED 16

/* ---- the record builder ----------------------------------------------------
 *
 * Both paths of a wrapper (the general one, struct sp_mpi_call, and the fast
 * one, struct sp_mpi_fast) collect a call's data as passed into a struct
 * sp_mpi_args, the same statements generated from the same annotations, and
 * turn it into the record with sp_mpi_rec_build() against the view of the
 * call's communicator. Completions take their record from the requests
 * (sp_mpi_reqs_rec); sp_mpi_rec_keep() stores either with the event.
 */

/* A call's data as passed: ranks in its communicator or window,
 * SP_MPI_UNSET when the call has none; bytes -1 unknown. */
struct sp_mpi_args {
	int64_t bytes;
	int peer, root, tag;
};

/* A communicator or window as the builder sees it: its id (-1 for a
 * window) and its rank -> world rank table (world NULL: identity below
 * nworld; remote ranks for an intercommunicator). */
struct sp_mpi_view {
	int32_t id;
	int32_t nworld;
	bool inter;
	const int32_t *world;
};

static SP_ALWAYS_INLINE void sp_mpi_args_init(struct sp_mpi_args *a)
{
	*a = (struct sp_mpi_args){ .bytes = -1, .peer = SP_MPI_UNSET, .root = SP_MPI_UNSET,
				   .tag = SP_MPI_UNSET };
}

/* World rank of `rank` in v (NULL: no communicator), -1 if none. */
static SP_ALWAYS_INLINE int32_t sp_mpi_view_world(const struct sp_mpi_view *v, int rank)
{
	if (!v || rank < 0 || rank >= v->nworld)
		return -1;
	return v->world ? v->world[rank] : rank;
}

SP_HIDDEN extern int sp_mpi_world_rank, sp_mpi_world_size;

/* The record of a call from its data, v its communicator or window (NULL
 * none). SP_MPI_UNSET and MPI's negative ranks and tags become -1;
 * MPI_ROOT on an intercommunicator is this rank. */
static SP_ALWAYS_INLINE void sp_mpi_rec_build(struct sp_mpi_rec *r, const struct sp_mpi_view *v,
					      const struct sp_mpi_args *a)
{
	r->bytes = a->bytes;
	r->peer = sp_mpi_view_world(v, a->peer);
	r->root = v && v->inter && a->root == MPI_ROOT ? sp_mpi_world_rank
						       : sp_mpi_view_world(v, a->root);
	r->tag = a->tag < 0 ? -1 : a->tag;
	r->comm = v ? v->id : -1;
}

/* A receive posted with MPI_ANY_SOURCE: the peer, and the tag if it was
 * MPI_ANY_TAG, from its status (a Fortran status if fortran). */
static SP_ALWAYS_INLINE void sp_mpi_args_status(struct sp_mpi_args *a, const void *status,
						int fortran)
{
	if (a->peer != MPI_ANY_SOURCE || !status)
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
	a->peer = st.MPI_SOURCE;
	if (a->tag == MPI_ANY_TAG)
		a->tag = st.MPI_TAG;
}

/* True when a record has nothing but its communicator id, and the id fits
 * in an event's aux (SP_MPI_AUX_INLINE). */
static SP_ALWAYS_INLINE bool sp_mpi_rec_inline(const struct sp_mpi_rec *r)
{
	return r->bytes == -1 && r->peer == -1 && r->root == -1 && r->tag == -1 &&
	       r->comm < 0x3fffffff;
}

/* State of one wrapped call, on the wrapper's stack. */
struct sp_mpi_call {
	int active;              /* recorded: outermost MPI call, recording on */
	int err;                 /* errno kept for the application */
	uint32_t region;
	struct sp_event *ev;     /* the call's event, NULL if dropped */
	struct sp_mpi_args a;
	MPI_Comm comm;
	MPI_Win win;
	bool resolved;           /* rec below is final */
	uint32_t site;           /* call site: 1 + this thread's site id, 0 = none */
	struct sp_mpi_rec rec;
	int nsaved;              /* request handles saved before a completion */
	MPI_Request *saved;
	MPI_Request small[SP_MPI_SAVED];
};

SP_HIDDEN extern bool sp_mpi_on;                          /* SCOPE_PROFILER_MPI */
SP_HIDDEN extern uint32_t sp_mpi_region_ids[SP_MPI_FN_COUNT]; /* id + 1, 0 = not yet */
SP_HIDDEN extern __thread int sp_mpi_depth __attribute__((tls_model("initial-exec")));

SP_HIDDEN uint32_t sp_mpi_region_slow(enum sp_mpi_fn fn);
SP_HIDDEN void sp_mpi_store(struct sp_mpi_call *c);
/* Fill c->rec from the call's data with the builder, the communicator or
 * window looked up in the cache. */
SP_HIDDEN void sp_mpi_resolve(struct sp_mpi_call *c);

/* ---- call sites (mpi-callsites.c) ----------------------------------------- */

/* Frames a call-site capture asks libunwind for: SCOPE_PROFILER_CALLSITES
 * plus the wrappers' own frames (the exported wrapper and its out-of-line
 * general path, which an optimizing build enters by a tail call and an
 * instrumented one by a call; sp_mpi_site_id() drops every frame of this
 * library and caps the rest); 0 = call sites off (the only cost then is the
 * test of this global, set once before MPI_Init). */
#define SP_CS_DEPTH_MAX 8
#define SP_CS_OWN_FRAMES 2
SP_HIDDEN extern int sp_mpi_cs_frames;
SP_HIDDEN extern int (*sp_mpi_unw_backtrace)(void **buffer, int size);
/* 1 + the calling thread's id for the return addresses pcs[0..n) (our own
 * frames first), 0 when the site cannot be recorded. No syscalls, no
 * symbol lookup; allocates only when a thread's table grows. */
SP_HIDDEN uint32_t sp_mpi_site_id(void *const *pcs, int n);

/* Start a call: returns true when it is recorded (then fill c->bytes etc.).
 * MPI calls made inside another MPI call (ROMIO, callbacks) are not
 * recorded: the guard is per thread. */
static SP_ALWAYS_INLINE bool sp_mpi_begin(struct sp_mpi_call *c, enum sp_mpi_fn fn)
{
	c->err = errno;
	c->active = 0;
	c->ev = NULL;
	if (sp_mpi_depth++ || !sp_mpi_on ||
	    !atomic_load_explicit(&sp_recording, memory_order_relaxed))
		return false;
	uint32_t r = sp_mpi_region_ids[fn];
	c->region = r ? r - 1 : sp_mpi_region_slow(fn);
	if (SP_UNLIKELY(c->region == SP_NO_REGION))
		return false;
	c->active = 1;
	sp_mpi_args_init(&c->a);
	c->comm = MPI_COMM_NULL;
	c->win = MPI_WIN_NULL;
	c->resolved = false;
	c->nsaved = 0;
	c->saved = c->small;
	c->site = 0;
	if (SP_UNLIKELY(sp_mpi_cs_frames)) {
		/* Here, inlined in the wrapper's general path: the first one
		 * or two frames are ours, then the application's call. Before
		 * the timestamp, so the unwinding is not part of the call's
		 * duration. */
		void *pcs[SP_CS_DEPTH_MAX + SP_CS_OWN_FRAMES];
		int n = sp_mpi_unw_backtrace(pcs, sp_mpi_cs_frames);
		c->site = sp_mpi_site_id(pcs, n);
	}
	return true;
}

/* Open the call's event (timestamp) and give errno back to the call. */
static SP_ALWAYS_INLINE void sp_mpi_enter(struct sp_mpi_call *c)
{
	if (c->active) {
		struct sp_rec_thread *t = sp_thread_get();
		if (SP_LIKELY(t != NULL))
			c->ev = sp_rec_enter_at(t, c->region, sp_ticks());
	}
	errno = c->err;
}

/* Close the call's event (timestamp). True if completion bookkeeping is
 * wanted. */
static SP_ALWAYS_INLINE bool sp_mpi_leave(struct sp_mpi_call *c)
{
	c->err = errno;
	if (c->active) {
		struct sp_rec_thread *t = sp_tls;
		if (SP_LIKELY(t != NULL))
			sp_rec_exit_thread(t, c->region);
	}
	return c->active;
}

/* The last communicator this thread resolved (mpi-comms.c), valid while
 * sp_mpi_comm_gen has not moved. */
struct sp_mpi_last {
	uintptr_t key;          /* SP_MPI_KEY of the communicator */
	unsigned gen;
	struct sp_mpi_view view;
};
SP_HIDDEN extern __thread struct sp_mpi_last sp_mpi_last __attribute__((tls_model("initial-exec")));
SP_HIDDEN extern atomic_uint sp_mpi_comm_gen;

/* True when comm is the communicator this thread resolved last. */
static SP_ALWAYS_INLINE bool sp_mpi_last_is(MPI_Comm comm)
{
	return sp_mpi_last.key == SP_MPI_KEY(comm) &&
	       sp_mpi_last.gen == atomic_load_explicit(&sp_mpi_comm_gen, memory_order_relaxed);
}

/* Fill c->rec (as sp_mpi_resolve), inline when the call's communicator is
 * the one this thread resolved last. */
static SP_ALWAYS_INLINE void sp_mpi_resolve_fast(struct sp_mpi_call *c)
{
	if (c->resolved)
		return;
	if (SP_LIKELY(c->comm != MPI_COMM_NULL && c->win == MPI_WIN_NULL && sp_mpi_last_is(c->comm))) {
		sp_mpi_rec_build(&c->rec, &sp_mpi_last.view, &c->a);
		c->resolved = true;
		return;
	}
	sp_mpi_resolve(c);
}

/* ---- per-thread records (mpi-record.c) ----------------------------------- */

/* Records of one thread, in chunks of SP_MPI_REC_CHUNK (pre-faulted, never
 * moved: the hot path appends without page faults or copies). Appended only
 * by the owning thread while it records; read by the merge after recording
 * stopped. Never freed before the process ends, so a thread that exited
 * keeps its records (as its events are kept). */
#define SP_MPI_REC_SHIFT 14
#define SP_MPI_REC_CHUNK (1u << SP_MPI_REC_SHIFT)
struct sp_mpi_thread {
	struct sp_mpi_rec *pos, *end; /* free slots of the newest chunk */
	uint32_t n;                   /* records so far; aux = 1 + index */
	uint32_t nchunks, capchunks;
	struct sp_mpi_rec **chunks;
	uint32_t *sites;              /* parallel to the records, call sites on only */
	uint32_t sites_cap;
};
SP_HIDDEN extern __thread struct sp_mpi_thread *sp_mpi_my SP_TLS_INITIAL_EXEC;
/* Append with the chunk full or the thread not attached yet; with call
 * sites on, every append goes here (the site is stored beside the record). */
/* Records go to the out-of-line functions by value: a caller's record whose
 * address escapes would live in memory, and the fast path's checks on it
 * would load what it just stored. */
SP_HIDDEN void sp_mpi_append_slow(struct sp_event *ev, struct sp_mpi_rec r, uint32_t site);

/* Field by field: the record was just written field by field, and a wide
 * load of narrow stores would miss store-to-load forwarding (a stall longer
 * than the copy). The empty asm keeps the compiler from merging the loads. */
static SP_ALWAYS_INLINE void sp_mpi_rec_copy(struct sp_mpi_rec *dst, const struct sp_mpi_rec *src)
{
	int64_t bytes = src->bytes;
	int32_t peer = src->peer, root = src->root, tag = src->tag, comm = src->comm;
	__asm__("" : "+r"(bytes), "+r"(peer), "+r"(root), "+r"(tag), "+r"(comm));
	dst->bytes = bytes;
	dst->peer = peer;
	dst->root = root;
	dst->tag = tag;
	dst->comm = comm;
}

static SP_ALWAYS_INLINE void sp_mpi_append(struct sp_event *ev, const struct sp_mpi_rec *r)
{
	struct sp_mpi_thread *th = sp_mpi_my;
	if (SP_UNLIKELY(!th || th->pos == th->end)) {
		sp_mpi_append_slow(ev, *r, 0);
		return;
	}
	sp_mpi_rec_copy(th->pos++, r);
	ev->aux = ++th->n; /* 1 + index */
}

/* Keep a call's record with its event (call sites off): a call without
 * message data keeps its communicator id in aux itself (no record memory:
 * Comm_rank, Barrier, Type_*, ...); the others append a record. */
static SP_ALWAYS_INLINE void sp_mpi_rec_keep(struct sp_event *ev, const struct sp_mpi_rec *r)
{
	if (sp_mpi_rec_inline(r))
		ev->aux = SP_MPI_AUX_INLINE | (uint32_t)(r->comm + 1);
	else
		sp_mpi_append(ev, r);
}

/* Store the call's record and restore errno. */
static SP_ALWAYS_INLINE void sp_mpi_end(struct sp_mpi_call *c)
{
	if (c->active) {
		if (SP_LIKELY(c->ev && c->saved == c->small && !sp_mpi_cs_frames)) {
			sp_mpi_resolve_fast(c);
			sp_mpi_rec_keep(c->ev, &c->rec);
		} else {
			sp_mpi_store(c);
		}
	}
	sp_mpi_depth--;
	errno = c->err;
}

/* ---- the fast path ---------------------------------------------------------
 *
 * Wrappers whose data is known at post time (bytes of one count x type,
 * peer, root, tag, communicator; a request to remember) try this first: no
 * call-state struct, no errno traffic (nothing here calls into libc), the
 * record built by the same builder right after the call. It applies when
 * the thread is attached, its buffers have room, the communicator is the
 * one it resolved last and call sites are off; anything else takes the
 * general path. (A datatype other than the last one costs a PMPI_Type_size
 * call, errno kept.)
 */
struct sp_mpi_fast {
	struct sp_rec_thread *t;
	struct sp_event *ev;   /* the closed event, NULL if it could not close */
	uint32_t region;
	const struct sp_mpi_view *view; /* the communicator's, NULL without one */
	struct sp_mpi_args a;
};
/* The record is a separate local of the wrapper, built after the call:
 * its address goes to out-of-line slow paths, and a struct whose address
 * escapes is kept in memory, so f stays in registers and the data the call
 * does not have (SP_MPI_UNSET) folds away. */

/* A call without a communicator (completions, file I/O). */
static SP_ALWAYS_INLINE bool sp_mpi_fast_begin(struct sp_mpi_fast *f, enum sp_mpi_fn fn)
{
	struct sp_rec_thread *t = sp_tls;
	uint32_t r = sp_mpi_region_ids[fn];
	if (SP_UNLIKELY(!t || !r || sp_mpi_depth || !sp_mpi_on || sp_mpi_cs_frames ||
			!atomic_load_explicit(&sp_recording, memory_order_relaxed) ||
			sp_event_full(t)))
		return false;
	f->t = t;
	f->region = r - 1;
	f->view = NULL;
	sp_mpi_args_init(&f->a);
	return true;
}

/* A call on comm: only when it is the communicator this thread resolved
 * last (never MPI_COMM_NULL), whose view the record is built with. */
static SP_ALWAYS_INLINE bool sp_mpi_fast_begin_comm(struct sp_mpi_fast *f, enum sp_mpi_fn fn,
						    MPI_Comm comm)
{
	if (!sp_mpi_fast_begin(f, fn) || SP_UNLIKELY(!sp_mpi_last_is(comm)))
		return false;
	f->view = &sp_mpi_last.view;
	return true;
}

/* Copy n request handles (n <= SP_MPI_SAVED) element by element: as a
 * loop the compiler may turn it into `rep movs`, whose start-up costs more
 * than the whole copy of a few handles. */
static SP_ALWAYS_INLINE void sp_mpi_copy_reqs(MPI_Request *dst, const MPI_Request *src, int n)
{
	for (int i = 0; i < n; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

/* Open the event: the timestamp is the last thing before the MPI call. */
static SP_ALWAYS_INLINE void sp_mpi_fast_enter(struct sp_mpi_fast *f)
{
	struct sp_rec_thread *t = f->t;
	sp_mpi_depth = 1;
	struct sp_frame *fr = sp_event_push(t, f->region);
	sp_event_start(fr, sp_ticks());
}

/* Close the event: the timestamp is the first thing after the MPI call. */
static SP_ALWAYS_INLINE void sp_mpi_fast_leave(struct sp_mpi_fast *f)
{
	int64_t now = sp_ticks();
	f->ev = sp_event_close(f->t, f->region, now);
	if (SP_UNLIKELY(!f->ev)) {
		int saved = errno;
		sp_thread_exit_slow(f->t, f->region, now);
		errno = saved;
	}
}

/* The record from the call's data (the status applied), for a call that
 * is not a completion (whose record comes from its requests). */
static SP_ALWAYS_INLINE void sp_mpi_fast_build(const struct sp_mpi_fast *f, struct sp_mpi_rec *rec)
{
	sp_mpi_rec_build(rec, f->view, &f->a);
}

/* Store the record (or the communicator id alone, in aux). */
static SP_ALWAYS_INLINE void sp_mpi_fast_end(struct sp_mpi_fast *f, const struct sp_mpi_rec *rec)
{
	if (SP_LIKELY(f->ev != NULL))
		sp_mpi_rec_keep(f->ev, rec);
	sp_mpi_depth = 0;
}

/* ---- post-time data ------------------------------------------------------ */

/* count: an int, or an MPI_Count of the MPI-4 large-count calls */
SP_HIDDEN int64_t sp_mpi_bytes(int64_t count, MPI_Datatype type);

/* The size of the datatype this thread measured last, valid while
 * sp_mpi_type_gen has not moved (every MPI_Type_free moves it: a freed
 * handle's address can come back as another type). */
struct sp_mpi_tcache {
	MPI_Datatype type;
	int64_t size;
	unsigned gen;
};
SP_HIDDEN extern __thread struct sp_mpi_tcache sp_mpi_tc __attribute__((tls_model("initial-exec")));
SP_HIDDEN extern atomic_uint sp_mpi_type_gen;
/* Before MPI_Type_free (whatever the recording state). */
SP_HIDDEN void sp_mpi_type_forget(void);

/* sp_mpi_bytes, without a call into MPI when the type is the last one. */
static SP_ALWAYS_INLINE int64_t sp_mpi_bytes_fast(int64_t count, MPI_Datatype type)
{
	if (SP_LIKELY(type == sp_mpi_tc.type && count >= 0 &&
		      sp_mpi_tc.gen == atomic_load_explicit(&sp_mpi_type_gen, memory_order_relaxed)))
		return (int64_t)count * sp_mpi_tc.size;
	return sp_mpi_bytes(count, type);
}
/* Sum of counts[i] (one per rank of comm, remote group for an
 * intercommunicator) times the size of type. */
SP_HIDDEN int64_t sp_mpi_bytes_sum(const void *counts, MPI_Datatype type, MPI_Comm comm);
/* Sum of counts[i] x size of types[i]; types are Fortran handles if fortran. */
SP_HIDDEN int64_t sp_mpi_bytes_sumw(const void *counts, const void *types, int fortran,
				    MPI_Comm comm);
/* True if a Fortran buffer argument is MPI_IN_PLACE. */
SP_HIDDEN bool sp_mpi_f_in_place(const void *buf);

/* ---- requests: post-time data kept with the request ---------------------- */

/*
 * Request handle -> post-time record. Lock-free open addressing; entries
 * are overwritten, never removed: Open MPI recycles request objects, so the
 * table holds at most the peak number of distinct live requests, and a
 * handle that is live is unique, so a lookup finds the latest post. A wait
 * on a request the table lost (full) records bytes -1.
 */
#define SP_MPI_REQ_SLOTS (1u << 16)
#define SP_MPI_REQ_PROBE 64
struct sp_mpi_req_slot {
	_Atomic(uintptr_t) key;
	struct sp_mpi_rec rec;
};
SP_HIDDEN extern struct sp_mpi_req_slot *sp_mpi_reqs;

static inline size_t sp_mpi_req_hash(uintptr_t k)
{
	return (size_t)((k ^ k >> 3) * 0x9e3779b97f4a7c15ull >> 40) & (SP_MPI_REQ_SLOTS - 1);
}

SP_HIDDEN void sp_mpi_req_put(struct sp_mpi_call *c, MPI_Request req);
/* Keep a resolved record with a request (any slot). */
SP_HIDDEN void sp_mpi_req_put_rec(struct sp_mpi_rec rec, MPI_Request req);

/* The same, inline when the request's home slot already holds it (a
 * recycled request object: the common case in a loop). */
static SP_ALWAYS_INLINE void sp_mpi_req_put_fast(const struct sp_mpi_rec *rec, MPI_Request req)
{
	struct sp_mpi_req_slot *tab = sp_mpi_reqs;
	uintptr_t k = SP_MPI_KEY(req);
	if (SP_LIKELY(tab && req != MPI_REQUEST_NULL)) {
		struct sp_mpi_req_slot *s = &tab[sp_mpi_req_hash(k)];
		if (SP_LIKELY(atomic_load_explicit(&s->key, memory_order_acquire) == k)) {
			sp_mpi_rec_copy(&s->rec, rec);
			return;
		}
	}
	sp_mpi_req_put_rec(*rec, req);
}

static inline const struct sp_mpi_rec *sp_mpi_req_get(MPI_Request req)
{
	uintptr_t k = SP_MPI_KEY(req);
	if (!sp_mpi_reqs || req == MPI_REQUEST_NULL)
		return NULL;
	size_t h = sp_mpi_req_hash(k);
	for (size_t i = 0; i < SP_MPI_REQ_PROBE; i++) {
		const struct sp_mpi_req_slot *s = &sp_mpi_reqs[(h + i) & (SP_MPI_REQ_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
		if (cur == k)
			return &s->rec;
		if (cur == 0)
			return NULL;
	}
	return NULL;
}
/* Save n request handles before a completion call (Fortran handles if
 * fortran). */
SP_HIDDEN void sp_mpi_reqs_save(struct sp_mpi_call *c, const void *reqs, int n, int fortran);
/* The saved requests that completed: all (n == -1) or those at idx[0..n)
 * (1-based if fortran). The call's record gets their summed bytes, and
 * peer/tag/comm when exactly one request completed. */
SP_HIDDEN void sp_mpi_reqs_done(struct sp_mpi_call *c, int n, const int *idx, int fortran);
/* The same for requests saved[0..nsaved) (the fast path's copy), into out. */
static SP_ALWAYS_INLINE void sp_mpi_reqs_rec(struct sp_mpi_rec *out, const MPI_Request *saved,
					     int nsaved, int n, const int *idx, int fortran)
{
	int64_t bytes = 0;
	int found = 0, known = 0;
	const struct sp_mpi_rec *one = NULL;
	int count = n < 0 ? nsaved : n;
	if (n == MPI_UNDEFINED)
		count = 0;
	for (int k = 0; k < count; k++) {
		int i = n < 0 ? k : idx[k] - (fortran ? 1 : 0);
		if (i < 0 || i >= nsaved || saved[i] == MPI_REQUEST_NULL)
			continue;
		const struct sp_mpi_rec *r = sp_mpi_req_get(saved[i]);
		found++;
		if (r && r->bytes >= 0) {
			bytes += r->bytes;
			known++;
		}
		one = r;
	}
	out->bytes = known ? bytes : (found ? -1 : 0);
	out->peer = out->root = out->tag = out->comm = -1;
	if (found == 1 && one) {
		out->peer = one->peer;
		out->root = one->root;
		out->tag = one->tag;
		out->comm = one->comm;
	}
}

/* ---- communicators and windows ------------------------------------------ */

SP_HIDDEN void sp_mpi_comm_new(MPI_Comm comm);
/* Number of entries of a per-rank count array for comm (remote size for an
 * intercommunicator), -1 if unknown. */
SP_HIDDEN int sp_mpi_comm_count_len(MPI_Comm comm);
/* Set up the caches once MPI is initialized. */
SP_HIDDEN void sp_mpi_comms_init(void);
SP_HIDDEN void sp_mpi_comm_forget(struct sp_mpi_call *c, MPI_Comm comm);
SP_HIDDEN void sp_mpi_win_forget(MPI_Win win);

/* One row of the communicator table (per rank). */
struct sp_mpi_comm_row {
	int32_t id, size, remote_size, leader; /* leader: world rank of rank 0 */
};
/* The communicators this rank has seen, in id order. Caller frees. */
SP_HIDDEN int sp_mpi_comm_rows(struct sp_mpi_comm_row **ret_rows, uint32_t *ret_n);

/* ---- lifecycle (mpi-init.c, mpi-merge.c) ---------------------------------- */

/* After a successful PMPI_Init/_thread: world, caches, private comm. */
SP_HIDDEN void sp_mpi_after_init(void);
/* At MPI_Finalize, before PMPI_Finalize: merge all ranks into one file. */
SP_HIDDEN void sp_mpi_before_finalize(void);
/* Write this rank alone to <output>.rank<NNNNN> (mpi-abort.c). */
SP_HIDDEN void sp_mpi_write_rank_alone(const char *why);
SP_HIDDEN int sp_mpi_record_init(void);
/* The private communicator of the merge, and the part of it on this node
 * (MPI_COMM_NULL: none). */
SP_HIDDEN extern MPI_Comm sp_mpi_private_comm, sp_mpi_node_comm;
/* At finalize, recording stopped (mpi-naming.c): the node's last rank names
 * the functions of every rank on it that asks (mine: this rank recorded),
 * so that the node reads its files' symbols once, not once per rank; the
 * others call meanwhile() (if not NULL) while it does. Collective over
 * sp_mpi_node_comm; a rank without answers names its own. */
SP_HIDDEN void sp_mpi_names_share(bool mine, void (*meanwhile)(void));

/* MPI columns of snapshot events: aux -> record of the event's thread. */
struct sp_snapshot;
SP_HIDDEN void sp_mpi_columns(const struct sp_snapshot *s, uint64_t first, uint64_t n,
			      int64_t *bytes, int32_t *peer, int32_t *root, int32_t *tag,
			      int32_t *comm);
/* The record of an event (thread = recorder thread index, aux = the event's
 * aux): all -1 when it has none. */
SP_HIDDEN void sp_mpi_rec_of(uint32_t thread, uint32_t aux, struct sp_mpi_rec *ret_rec);
/* The call site stored with an event's record: 1 + the thread's site id,
 * 0 if none (thread = recorder thread index, aux = the event's aux). */
SP_HIDDEN uint32_t sp_mpi_rec_site(uint32_t thread, uint32_t aux);
/* Forget every record (after the merge). */
SP_HIDDEN void sp_mpi_records_reset(void);

#endif /* SP_MPI_RECORD_H */
