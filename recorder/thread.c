/* SPDX-License-Identifier: MIT */
/*
 * Per-thread event buffers. Each thread appends to its own chunk list; a
 * full chunk gets a successor on the slow path, as long as the process-wide
 * memory cap allows, and otherwise the call is counted as dropped against
 * its region. With spilling on (spill.c), a thread that reaches the cap
 * writes its chunks to the spill file instead and reuses its newest chunk,
 * so memory stays bounded and nothing is dropped, until a spill write fails
 * (disk full): then the spill is off for good and calls past the cap are
 * dropped and counted as without it. Thread structs go on one
 * global list and are never freed while recording, so an exited thread's
 * events survive until the flush.
 */
#define _GNU_SOURCE
#include "recorder.h"

#include "spill.h"
#include "thread-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>


atomic_int sp_recording;
__thread struct sp_rec_thread *sp_tls SP_TLS_INITIAL_EXEC;

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sp_rec_thread *thread_list;   /* newest first */
static uint32_t thread_total;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
/* ns spent allocating and faulting in event chunks (overhead estimate). */
static atomic_int_least64_t alloc_ns;
static atomic_uint_least64_t mem_used;
static uint64_t mem_cap = 1ull << 30;
static atomic_uint_least64_t dropped_total;

/* First chunk is small so that many short-lived threads stay cheap; later
 * chunks are large so the slow path is rare. */
#define FIRST_CHUNK_EVENTS 4096
/* Later chunks are 2 MiB of small pages, populated in batches: one batched
 * fault-in is far cheaper than a page fault per 256 events on the hot
 * path. Not madvised as transparent huge pages: one populates in 0.18 ms
 * while free huge pages last, but with Debian's "madvise" defrag a 430 MB
 * run spent 0.6-1.5 s in direct compaction instead of 0.2 s (tried). */
#define HUGE_CHUNK_BYTES (2u << 20)
/* A mapped chunk is populated 256 KiB first, then four times what it has,
 * as the thread fills it (MADV_POPULATE_WRITE, Linux >= 5.14; else all of
 * it at the mmap, MAP_POPULATE): a short run populates about what it
 * fills. The whole 2 MiB at once took ~0.6 ms alone here and 2.5 ms of a
 * rank's kernel time among 8 ranks on 2 cores, for the 15 k events (240
 * KB) a rank of the bench's short proxy run records. The memory cap counts
 * the whole chunk from its mmap, so when a run spills does not change. */
#define FIRST_READY_BYTES (256u << 10)
#define READY_GROWTH 4
static atomic_int populate_by_madvise = 1; /* 0 once the kernel refused it */

/* Populate bytes [from, to) of mapped chunk c (page-aligned outward);
 * false when the kernel has no MADV_POPULATE_WRITE. */
static bool populate(struct sp_chunk *c, size_t from, size_t to)
{
	uintptr_t page = (uintptr_t)getpagesize(), a = ((uintptr_t)c + from) & ~(page - 1);
	uintptr_t b = ((uintptr_t)c + to + page - 1) & ~(page - 1);
	if (b > (uintptr_t)c + c->mapped)
		b = (uintptr_t)c + c->mapped;
	int saved = errno; /* a hook's caller keeps its errno */
	/* SCOPE_PROFILER_TEST_NO_MADV_POPULATE (test only): as a kernel
	 * before 5.14 answers */
	static atomic_int test_no_madv = -1;
	int no_madv = atomic_load_explicit(&test_no_madv, memory_order_relaxed);
	if (no_madv < 0) {
		no_madv = getenv("SCOPE_PROFILER_TEST_NO_MADV_POPULATE") != NULL;
		atomic_store_explicit(&test_no_madv, no_madv, memory_order_relaxed);
	}
	bool ok = !no_madv && madvise((void *)a, b - a, MADV_POPULATE_WRITE) == 0;
	if (no_madv)
		errno = EINVAL;
	/* EINVAL: a kernel before 5.14. Anything else (ENOMEM, EFAULT, an
	 * interrupted call): the pages fault in one by one as written,
	 * which MAP_POPULATE's silent failure left too. */
	bool supported = ok || errno != EINVAL;
	errno = saved;
	return supported;
}

/* The current mapped chunk has unpopulated room: populate the next part
 * and extend the thread's end to it. */
static bool extend(struct sp_rec_thread *t)
{
	struct sp_chunk *c = t->chunks;
	size_t ready = c->ready * READY_GROWTH < c->capacity ? c->ready * READY_GROWTH : c->capacity;
	int64_t t0 = sp_monotonic_ns();
	populate(c, sizeof *c + c->ready * sizeof(struct sp_event),
		 sizeof *c + ready * sizeof(struct sp_event));
	atomic_fetch_add_explicit(&alloc_ns, sp_monotonic_ns() - t0, memory_order_relaxed);
	c->ready = ready;
	t->end = c->events + ready;
	return true;
}

void sp_thread_set_cap(uint64_t bytes)
{
	mem_cap = bytes;
}

static void thread_exited(void *arg)
{
	struct sp_rec_thread *t = arg;
	t->end_ns = sp_monotonic_ns();
}

static void make_key(void)
{
	pthread_key_create(&exit_key, thread_exited);
}

struct sp_rec_thread *sp_thread_attach(void)
{
	/* sp_tls is set before anything else can re-enter (malloc hooks,
	 * instrumented allocators), so a nested attach sees it. */
	static __thread int attaching SP_TLS_INITIAL_EXEC;
	if (attaching)
		return NULL;
	attaching = 1;
	struct sp_rec_thread *t = calloc(1, sizeof *t);
	if (t) {
		t->native_id = gettid();
		t->ident = (int64_t)pthread_self();
		t->start_ns = sp_monotonic_ns();
		t->stack_at[0] = SP_FRAME_NOWHERE; /* below the outermost frame */
		pthread_once(&key_once, make_key);
		pthread_setspecific(exit_key, t);
		pthread_mutex_lock(&list_lock);
		t->index = thread_total++;
		t->next = thread_list;
		/* Release: a signal handler walks the list without the lock. */
		__atomic_store_n(&thread_list, t, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&list_lock);
		sp_tls = t;
	}
	attaching = 0;
	return t;
}

void sp_chunk_release(struct sp_chunk *c)
{
	size_t bytes = c->mapped ? c->mapped
				 : sizeof(struct sp_chunk) + c->capacity * sizeof(struct sp_event);
	atomic_fetch_sub(&mem_used, bytes);
	if (c->mapped)
		munmap(c, c->mapped);
	else
		free(c);
}

/*
 * The cap is reached: write this thread's chunks to the spill file and
 * keep only the newest chunk, emptied, for reuse. `spilling` tells a signal
 * handler that lands meanwhile to leave this thread's memory alone (it is
 * half in the file). Returns false if the spill failed: the thread keeps
 * its chunks and the caller drops; after a failed write sp_spill_active()
 * is false for good, so later calls drop without a write each.
 */
static bool spill_and_reuse(struct sp_rec_thread *t)
{
	atomic_store(&t->spilling, 1);
	bool ok = sp_spill_thread(t) == 0;
	if (ok) {
		struct sp_chunk *keep = t->chunks, *c = keep->next;
		keep->next = NULL;
		while (c) {
			struct sp_chunk *next = c->next;
			sp_chunk_release(c);
			c = next;
		}
		keep->used = 0;
		t->pos = keep->events;
		t->end = keep->events + keep->ready;
	}
	atomic_store(&t->spilling, 0);
	return ok;
}

/* Seal the current chunk and start a new one (or, at the cap, spill and
 * reuse). Returns false when the call must be dropped. */
static bool grow(struct sp_rec_thread *t)
{
	if (t->chunks && t->chunks->ready < t->chunks->capacity)
		return extend(t);
	if (t->chunks)
		t->chunks->used = (size_t)(t->pos - t->chunks->events);
	bool huge = t->chunks != NULL;
	size_t bytes = huge ? HUGE_CHUNK_BYTES
			    : sizeof(struct sp_chunk) + FIRST_CHUNK_EVENTS * sizeof(struct sp_event);
	size_t n = (bytes - sizeof(struct sp_chunk)) / sizeof(struct sp_event);
	uint64_t before = atomic_fetch_add(&mem_used, bytes);
	/* With spilling, every thread gets its first (small) chunk even past
	 * the cap: it needs one buffer to spill from. */
	if (before + bytes > mem_cap && (huge || !sp_spill_active())) {
		atomic_fetch_sub(&mem_used, bytes);
		if (huge && sp_spill_active() && spill_and_reuse(t))
			return true;
		t->pos = t->end; /* stay full: every later call takes this path */
		return false;
	}
	struct sp_chunk *c = NULL;
	size_t ready = n;
	if (huge) {
		int64_t t0 = sp_monotonic_ns();
		bool in_parts = atomic_load_explicit(&populate_by_madvise, memory_order_relaxed);
		c = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | (in_parts ? 0 : MAP_POPULATE), -1, 0);
		if (c == MAP_FAILED)
			c = NULL;
		if (c && in_parts) {
			c->mapped = bytes;
			ready = (FIRST_READY_BYTES - sizeof *c) / sizeof(struct sp_event);
			if (!populate(c, 0, FIRST_READY_BYTES)) {
				atomic_store_explicit(&populate_by_madvise, 0, memory_order_relaxed);
				ready = n; /* faulted in as written this once */
			}
		}
		atomic_fetch_add_explicit(&alloc_ns, sp_monotonic_ns() - t0, memory_order_relaxed);
	} else {
		c = malloc(bytes);
	}
	if (!c) {
		atomic_fetch_sub(&mem_used, bytes);
		return false;
	}
	c->capacity = n;
	c->ready = ready < n ? ready : n;
	c->used = 0;
	c->mapped = huge ? bytes : 0;
	c->next = t->chunks;
	t->chunks = c;
	t->pos = c->events;
	t->end = c->events + c->ready;
	return true;
}

int64_t sp_thread_alloc_ns(void)
{
	return atomic_load_explicit(&alloc_ns, memory_order_relaxed);
}

static void count_drop(uint32_t region)
{
	struct sp_region *r = sp_region_get(region);
	if (r)
		atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&dropped_total, 1, memory_order_relaxed);
}

struct sp_event *sp_thread_enter_slow(struct sp_rec_thread *t, uint32_t region, int64_t now,
				      struct sp_frame_at at)
{
	if (t->depth >= SP_STACK_MAX) {
		t->overflow++;
		count_drop(region);
		return NULL;
	}
	if (t->pos == t->end && !grow(t)) {
		sp_frame_push(t, (struct sp_frame){ .ev = NULL, .start = now, .region = region,
						    .flags = SP_FRAME_DROPPED }, at);
		count_drop(region);
		return NULL;
	}
	return sp_event_open_at(t, region, now, at);
}

/*
 * Close `region`: the innermost frame normally; with mismatched begin/end
 * (manual API misuse) the innermost frame of that region, removed from the
 * middle of the stack. An end with no matching open call is ignored.
 */
void sp_thread_exit_slow(struct sp_rec_thread *t, uint32_t region, int64_t now)
{
	if (t->overflow) {
		t->overflow--;
		return;
	}
	uint32_t i = t->depth;
	while (i > 0 && t->stack[i - 1].region != region)
		i--;
	if (i == 0)
		return;
	struct sp_frame *f = &t->stack[i - 1];
	if (f->ev)
		f->ev->end = now;
	for (uint32_t j = i; j < t->depth; j++) {
		t->stack[j - 1] = t->stack[j];
		t->stack_at[j] = t->stack_at[j + 1];
	}
	t->depth--;
}

struct sp_rec_thread *sp_thread_first(void)
{
	pthread_mutex_lock(&list_lock);
	struct sp_rec_thread *t = thread_list;
	pthread_mutex_unlock(&list_lock);
	return t;
}

uint32_t sp_thread_count(void)
{
	pthread_mutex_lock(&list_lock);
	uint32_t n = thread_total;
	pthread_mutex_unlock(&list_lock);
	return n;
}

struct sp_rec_thread *sp_thread_list_unlocked(void)
{
	return __atomic_load_n(&thread_list, __ATOMIC_ACQUIRE);
}

/* Chunks are kept newest first; iteration goes oldest first by walking to
 * the chunk whose successor is the previous one. Chunk lists are short
 * (after the first, one 2 MiB chunk per ~87 Ki events: at most ~512 a
 * thread under the default 1 GiB cap), so the quadratic walk stays cheap.
 * Events that were spilled come first, read back from the spill file a
 * piece at a time (finalize's memory stays within the cap). */
size_t sp_thread_next_chunk(const struct sp_rec_thread *t, struct sp_event_iter *it,
			    const struct sp_event **ret_events)
{
	if (it->err)
		return 0;
	if (!it->chunk && it->prefix_at < t->nprefix) {
		ssize_t n = sp_spill_prefix_piece(t, it->prefix_at, ret_events);
		if (n <= 0) {
			it->err = n < 0 ? (int)n : -EIO;
			return 0;
		}
		it->prefix_at += (uint64_t)n;
		return (size_t)n;
	}
	const struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, it->chunk);
	if (!c)
		return 0;
	it->chunk = c;
	*ret_events = c->events;
	return sp_chunk_count(t, c, t->pos);
}

void sp_thread_close_open(int64_t now)
{
	pthread_mutex_lock(&list_lock);
	for (struct sp_rec_thread *t = thread_list; t; t = t->next)
		for (uint32_t i = 0; i < t->depth; i++)
			if (t->stack[i].ev && t->stack[i].ev->end == SP_OPEN)
				t->stack[i].ev->end = now;
	pthread_mutex_unlock(&list_lock);
}

void sp_thread_count_dropped(uint32_t region, uint64_t n)
{
	struct sp_region *r = sp_region_get(region);
	if (r)
		atomic_fetch_add_explicit(&r->dropped, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&dropped_total, n, memory_order_relaxed);
}

uint64_t sp_thread_dropped_total(void)
{
	return atomic_load(&dropped_total);
}

void sp_thread_after_fork(void)
{
	/* Another parent thread may have held the lock at fork(); in the child
	 * it never will release it. The list itself is consistent except for a
	 * half-done attach of a thread that does not exist here. */
	pthread_mutex_init(&list_lock, NULL);
}

void sp_thread_reset_all(void)
{
	pthread_mutex_lock(&list_lock);
	for (struct sp_rec_thread *t = thread_list; t; t = t->next) {
		struct sp_chunk *c = t->chunks;
		while (c) {
			struct sp_chunk *next = c->next;
			sp_chunk_release(c);
			c = next;
		}
		t->chunks = NULL;
		t->pos = t->end = NULL;
		t->depth = 0;
		t->overflow = 0;
		t->spilled = 0;
		free(t->slots);
		t->slots = NULL;
		t->prefix = NULL; /* owned by spill.c, freed by sp_spill_unload() */
		t->nprefix = 0;
	}
	atomic_store(&mem_used, 0);
	atomic_store(&dropped_total, 0);
	pthread_mutex_unlock(&list_lock);
}
