/* SPDX-License-Identifier: MIT */
/*
 * The spill file of this process: raw records (sp-spill.h) appended with
 * pwrite(2) at byte ranges reserved by one atomic add, so threads never
 * lock and a signal handler can append too. Threads spill their chunks at
 * the memory cap (slow path); the handler dumps what is still in memory.
 * The first failed write (disk full, quota, I/O error, short write) stops
 * the spill for good in this process: one warning, no write after it.
 * The descriptor lives at a high number and every write first checks that
 * it still is our file (our_fd()): an application that closes every
 * descriptor and reopens its own files never gets our records.
 */
#define _GNU_SOURCE
#include "spill.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "functions.h"
#include "log.h"
#include "output-path.h"
#include "sp-spill.h"
#include "spill-internal.h"
#include "sp-io.h"
#include "sp-safe-file.h"
#include "spill-read.h"
#include "thread-internal.h"

_Static_assert(sizeof(struct sp_event) == sizeof(struct sp_spill_event), "event layout");
_Static_assert(SP_OPEN == SP_SPILL_OPEN, "open marker");
_Static_assert(SP_SPILL_TREE_BYTES == SP_TREE_ID_MAX, "tree id");

/* Open calls whose event is already in the file. ev[i] is what the frame
 * points to now (the hot path closes it there); seq[i] its event number. */
struct sp_spill_slots {
	struct sp_event ev[SP_STACK_MAX];
	uint64_t seq[SP_STACK_MAX];
	uint8_t used[SP_STACK_MAX];
};

/* Our descriptor (-1: none). Replaced, never closed, when the program
 * closed it: that number may be one of its files now. spill_dev/spill_ino
 * name our file; fd_base is where our descriptors start (high_fd()). */
static atomic_int spill_fd = -1;
static dev_t spill_dev;
static ino_t spill_ino;
static struct sp_spill_header spill_header;
static int fd_base = 3;
static atomic_uint reopened;
static bool spill_at_cap;
static pid_t owner;
static char path[4096];
static atomic_uint_least64_t file_end;
static atomic_uint names_written;
static atomic_int dumped;
static atomic_uint_least64_t events_total;
/* Set by the first failed write (its errno): every writer checks it first,
 * so a full disk costs one failing pwrite per thread in flight, not one per
 * later call. `warned` makes the warning one line per process. */
static atomic_int stopped;
static atomic_int warned;
static struct sp_spill_data loaded;
static bool have_loaded;

/* Events in the file per region, added by sp_spill_thread() (normal
 * context) once written. If the file goes out of reach (-ESTALE: the
 * program closed our descriptor and the path names another file or none),
 * finalize counts them as dropped, so dropped_events says what was lost. */
static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *tally;
static uint32_t ntally;
static atomic_uint_least64_t tallied; /* their sum, for the warning */
static bool lost_counted;

static void modules_changed(void);

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/*
 * Our descriptors sit at a fixed base, 1000, lowered to 24 below the soft
 * RLIMIT_NOFILE when that is lower. open() takes the lowest free number,
 * so a program that opens files after closing ours (close-all loops, a
 * daemon) does not get our number back unless it holds ~1000 descriptors.
 * Not the top of the limit: the kernel sizes each process's descriptor
 * table to its highest number, and soft limits of 2^20 are common in
 * containers (an 8 MB table per rank, and slower close-all loops).
 */
#define FD_BASE 1000
#define FD_MARGIN 24

static void set_fd_base(void)
{
	struct rlimit rl;
	fd_base = FD_BASE;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < FD_BASE + FD_MARGIN)
		fd_base = rl.rlim_cur > 3 + FD_MARGIN ? (int)rl.rlim_cur - FD_MARGIN : 3;
}

/* fd moved to fd_base or above, close-on-exec (fd itself if none is free
 * there: the check in our_fd() still holds). Async-signal-safe. */
static int high_fd(int fd)
{
	if (fd >= fd_base)
		return fd;
	int h = fcntl(fd, F_DUPFD_CLOEXEC, fd_base);
	if (h < 0)
		return fd;
	close(fd);
	return h;
}

static bool is_ours(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == spill_dev && st.st_ino == spill_ino;
}

/* A descriptor opened by path is our file: same device and inode, and our
 * header at offset 0 (a file created where ours was removed can get its
 * inode number back at once, ext4 and tmpfs do). Async-signal-safe. */
static bool opened_is_ours(int fd)
{
	struct sp_spill_header h;
	return is_ours(fd) && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
	       memcmp(h.magic, spill_header.magic, sizeof h.magic) == 0 &&
	       h.pid == spill_header.pid && h.tick0 == spill_header.tick0 &&
	       h.ns0 == spill_header.ns0;
}

/* The path still names our file (checked as above). */
static bool path_is_ours(void)
{
	int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW) : -1;
	bool ours = opened_is_ours(fd);
	if (fd >= 0)
		close(fd);
	return ours;
}

/*
 * The descriptor to write through, checked to be our file (device and
 * inode) just before each write. When it is not (the program closed it, and
 * the number may be one of its files now), the path is reopened if it
 * still names our file; else -ESTALE, and the spill stops. Nothing is
 * created, truncated or closed that is not ours. A program that closes and
 * reuses our number between the check and the pwrite (another thread, at
 * that instant) is not caught; the high number makes that need ~1000 open
 * descriptors. Async-signal-safe: open, fstat, fcntl, close, atomics.
 */
static int our_fd(void)
{
	int fd = atomic_load(&spill_fd);
	if (is_ours(fd))
		return fd;
	if (fd < 0 || !path[0])
		return -EBADF;
	int again = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (again < 0)
		return -ESTALE;
	if (!opened_is_ours(again)) {
		close(again);
		return -ESTALE;
	}
	again = high_fd(again);
	if (!atomic_compare_exchange_strong(&spill_fd, &fd, again)) {
		close(again); /* another thread reopened it first: fd is that one */
		return is_ours(fd) ? fd : -ESTALE;
	}
	atomic_fetch_add(&reopened, 1);
	return again;
}

static size_t append(char *buf, size_t n, size_t cap, const char *s)
{
	while (*s && n < cap)
		buf[n++] = *s++;
	return n;
}

static size_t append_u64(char *buf, size_t n, size_t cap, uint64_t v)
{
	char d[24];
	size_t k = 0;
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < sizeof d);
	while (k && n < cap)
		buf[n++] = d[--k];
	return n;
}

/* The one warning line, written with write(2): async-signal-safe (the
 * handler may be the one that hits the full disk) and no stdio lock taken
 * in the middle of the application's calls. `what` says what happens next;
 * with lost != UINT64_MAX, "; the <lost> events in it are lost" comes first. */
static void warn_lost(const char *doing, int err, uint64_t lost, const char *what)
{
	if (atomic_exchange(&warned, 1))
		return;
	char msg[sizeof path + 512];
	const size_t cap = sizeof msg - 1;
	const char *why = err == ESTALE ? "its descriptor was closed by the program and the path no "
					  "longer names the file"
					: strerrordesc_np(err);
	size_t n = append(msg, 0, cap, "scope-profiler: ");
	n = append(msg, n, cap, path);
	n = append(msg, n, cap, doing);
	n = append(msg, n, cap, why ? why : "unknown error");
	if (lost != UINT64_MAX) {
		n = append(msg, n, cap, "; the ");
		n = append_u64(msg, n, cap, lost);
		n = append(msg, n, cap, " events in it are lost and counted as dropped");
	}
	n = append(msg, n, cap, what);
	msg[n++] = '\n';
	if (!sp_log_stderr_ok()) /* closed, and the descriptor maybe another file's */
		return;
	ssize_t w = write(STDERR_FILENO, msg, n);
	(void)w; /* nothing better to do when stderr is gone too */
}

static void warn(const char *doing, int err, const char *what)
{
	warn_lost(doing, err, UINT64_MAX, what);
}

/* The first failure: no writer starts a pwrite after this. -ESTALE (the
 * file is out of reach, see our_fd()) also loses what it held. */
static void stop(int err)
{
	int none = 0;
	if (!atomic_compare_exchange_strong(&stopped, &none, err))
		return;
	warn_lost(": spill stopped: ", err, err == ESTALE ? atomic_load(&tallied) : UINT64_MAX,
		  atomic_load(&dumped) ? "; the events still in memory are not all in it"
				       : "; later calls past the memory cap (SCOPE_PROFILER_MAX_MEMORY) "
					 "are dropped and counted");
}

/* Append one record: payload a then b, header last, so a record cut short
 * by a kill or a full disk has no header and reads as a hole. Any failure
 * stops the spill (stop()). Async-signal-safe. */
int sp_spill_put_rec(uint32_t type, uint32_t thread, const void *a, size_t na, const void *b,
		   size_t nb)
{
	if (atomic_load_explicit(&spill_fd, memory_order_relaxed) < 0)
		return -EBADF;
	int err = atomic_load_explicit(&stopped, memory_order_relaxed);
	if (err)
		return -err;
	int e = errno;
	int fd = our_fd();
	int ret = fd < 0 ? fd : 0;
	struct sp_spill_rec h = { SP_SPILL_REC_MAGIC, type, (uint32_t)(na + nb), thread };
	uint64_t off = ret ? 0 : atomic_fetch_add(&file_end, ALIGN8(sizeof h + na + nb));
	if (!ret && na)
		ret = sp_pwrite_full(fd, a, na, off + sizeof h);
	if (!ret && nb)
		ret = sp_pwrite_full(fd, b, nb, off + sizeof h + na);
	if (!ret)
		ret = sp_pwrite_full(fd, &h, sizeof h, off);
	if (ret)
		stop(-ret);
	errno = e;
	return ret;
}

bool sp_spill_active(void)
{
	return spill_fd >= 0 && spill_at_cap && !atomic_load_explicit(&stopped, memory_order_relaxed);
}

const char *sp_spill_path(void)
{
	return path;
}

uint64_t sp_spill_events_total(void)
{
	return atomic_load(&events_total);
}

int64_t sp_spill_kept(char *buf, size_t n)
{
	if (!buf || n < 2 || atomic_load(&spill_fd) < 0 || getpid() != owner)
		return -EBADF;
	int fd = our_fd();
	if (fd < 0)
		return fd;
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	ssize_t len = readlink(self, buf, n - 1);
	struct stat st;
	if (len > 0) { /* where it is now: its directory may have moved */
		buf[len] = '\0';
		if (stat(buf, &st) != 0 || st.st_dev != spill_dev || st.st_ino != spill_ino)
			return -ENOENT; /* removed: "<path> (deleted)" */
	} else if (path_is_ours()) { /* no /proc */
		snprintf(buf, n, "%s", path);
	} else {
		return -ENOENT;
	}
	return (int64_t)atomic_load(&events_total);
}

/*
 * Create the spill file at path: a random name beside it, created O_EXCL |
 * O_NOFOLLOW, renamed over path within the same directory. A symlink or a
 * file planted at the predictable name is replaced, never written through.
 * Where it cannot be replaced (another user's file in a sticky directory)
 * the spill keeps its random name, and says so. The mode is 0666 less the
 * umask. The directory is not fsync'ed: the spill serves a process that
 * is killed, whose name the kernel keeps, not a machine that crashes, and
 * the fsync cost every process 0.5 ms at start-up here (more on a
 * parallel file system's metadata server).
 */
static int create_spill(void)
{
	struct sp_safe_file f;
	int err = sp_safe_create(&f, path, ".", SP_SPILL_SUFFIX "new.", "");
	if (err)
		return err;
	if (sp_safe_commit(&f, false) != 0) {
		sp_log(SP_LOG_WARN, "spill", "%s cannot be replaced (%s); the spill file is %s",
		       path, strerror(errno), f.tmp_path);
		snprintf(path, sizeof path, "%s", f.tmp_path);
	}
	int fd = f.fd;
	f.fd = -1; /* kept: it is the spill's descriptor */
	f.committed = true;
	sp_safe_close(&f);
	return fd;
}

int sp_spill_open(const char *output, bool at_cap, const char *tree)
{
	if (spill_fd >= 0)
		return 0;
	spill_at_cap = at_cap;
	if (snprintf(path, sizeof path, "%s" SP_SPILL_SUFFIX "pid%d", output, (int)getpid()) >=
	    (int)sizeof path) {
		path[0] = '\0';
		return -ENAMETOOLONG;
	}
	set_fd_base();
	int fd = create_spill();
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int err = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		path[0] = '\0';
		return err;
	}
	fd = high_fd(fd);
	spill_dev = st.st_dev;
	spill_ino = st.st_ino;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	struct sp_spill_header h = {
		.magic = SP_SPILL_MAGIC, .version = SP_SPILL_VERSION, .header_bytes = sizeof h,
		.pid = getpid(), .rank = -1, .clock_tsc = sp_clock_tsc,
		.start_ns = sp_recorder_start_ns(), .start_realtime_s = rt.tv_sec,
	};
	h.tick0 = sp_ticks();
	h.ns0 = sp_monotonic_ns();
	spill_header = h;
	spill_fd = fd;
	owner = getpid();
	atomic_store(&file_end, ALIGN8(sizeof h));
	atomic_store(&names_written, 0);
	atomic_store(&dumped, 0);
	atomic_store(&stopped, 0);
	atomic_store(&warned, 0);
	atomic_store(&events_total, 0);
	atomic_store(&reopened, 0);
	atomic_store(&tallied, 0);
	sp_spill_modules_reset();
	int ret = sp_pwrite_full(fd, &h, sizeof h, 0);
	if (ret < 0) {
		warn(": could not write the spill file: ", -ret,
		     "; calls past the memory cap (SCOPE_PROFILER_MAX_MEMORY) are dropped and counted");
		sp_spill_remove();
		return ret;
	}
	if (tree && *tree) { /* the first record: a reader finds it without a whole pass */
		struct sp_spill_tree t = { { 0 } };
		strncpy(t.id, tree, sizeof t.id - 1);
		sp_spill_put_rec(SP_SPILL_TREE, 0, &t, sizeof t, NULL, 0);
	}
	sp_sym_set_module_hook(modules_changed);
	sp_spill_modules_describe();
	sp_log(SP_LOG_DEBUG, "spill", "spill file %s open (%s)", path,
	       at_cap ? "written at the memory cap and on fatal signals" : "written on fatal signals");
	return 0;
}

void sp_spill_set_rank(const char *output, int rank, int size)
{
	if (spill_fd < 0)
		return;
	char to[sizeof path];
	if (snprintf(to, sizeof to, "%s" SP_SPILL_SUFFIX "rank%05d", output, rank) < (int)sizeof to &&
	    path_is_ours() && rename(path, to) == 0) /* never rename a file not ours */
		memcpy(path, to, sizeof path);
	struct sp_spill_rank r = { rank, size };
	sp_spill_put_rec(SP_SPILL_RANK, 0, &r, sizeof r, NULL, 0);
}

/* REGION records for regions created since the last sync. Two threads may
 * both write one: the reader keeps the last, they are identical. */
static void sync_regions(bool may_lock)
{
	uint32_t n = sp_region_count();
	uint32_t from = atomic_load(&names_written);
	for (uint32_t id = from; id < n; id++) {
		const struct sp_region *r = sp_region_get(id);
		if (!r)
			break;
		const char *name = r->name;
		struct sp_spill_region rec = { .id = id, .kind = r->kind, .addr = r->addr,
					       .module = -1,
					       .name_bytes = name ? (uint32_t)strlen(name) : 0 };
		if (!name && r->addr)
			rec.module = may_lock ? sp_spill_module_of(r->addr) : sp_spill_module_index(r->addr);
		sp_spill_put_rec(SP_SPILL_REGION, 0, &rec, sizeof rec, name, rec.name_bytes);
	}
	while (from < n && !atomic_compare_exchange_weak(&names_written, &from, n))
		;
}

/* The function table met a module it did not know (normal context, on a
 * function's first call). The regions so far get their REGION records
 * first, while their addresses still find their own module: a library
 * loaded where a dlclose'd one was would otherwise take them (newest
 * first). Then the new module is described. */
bool sp_spill_owned(void)
{
	return atomic_load(&spill_fd) >= 0 && getpid() == owner;
}

static void modules_changed(void)
{
	if (!sp_spill_owned())
		return;
	sync_regions(true);
	sp_spill_modules_describe();
}

static void put_thread(const struct sp_rec_thread *t)
{
	struct sp_spill_thread r = { t->index, t->ident, t->native_id, t->start_ns, t->end_ns };
	sp_spill_put_rec(SP_SPILL_THREAD, t->index, &r, sizeof r, NULL, 0);
}

/* Events [seq, seq+n) of thread t, in records of at most 64 Ki events;
 * events_total counts those written. */
static int put_events(const struct sp_rec_thread *t, uint64_t seq, const struct sp_event *ev,
		      size_t n)
{
	while (n) {
		size_t k = n < 65536 ? n : 65536;
		struct sp_spill_events h = { .first_seq = seq, .n = (uint32_t)k };
		h.tick = sp_ticks();
		h.ns = sp_monotonic_ns();
		int ret = sp_spill_put_rec(SP_SPILL_EVENTS, t->index, &h, sizeof h, ev, k * sizeof *ev);
		if (ret)
			return ret;
		atomic_fetch_add(&events_total, k);
		seq += k;
		ev += k;
		n -= k;
	}
	return 0;
}

/* CLOSE entries, batched on the stack. slot[i] is the slot that entry i
 * frees once its record is written (NO_SLOT: none): a slot whose CLOSE
 * could not be written stays, and sp_spill_load() applies it from memory. */
#define NO_SLOT UINT16_MAX
struct closes {
	struct sp_rec_thread *t;
	uint32_t n;
	struct sp_spill_close v[64];
	uint16_t slot[64];
};

static void close_flush(struct closes *c)
{
	if (c->n && sp_spill_put_rec(SP_SPILL_CLOSE, c->t->index, c->v, c->n * sizeof *c->v, NULL, 0) == 0)
		for (uint32_t i = 0; i < c->n; i++)
			if (c->slot[i] != NO_SLOT)
				c->t->slots->used[c->slot[i]] = 0;
	c->n = 0;
}

static void close_add(struct closes *c, uint64_t seq, int64_t end, uint32_t region,
		      uint16_t slot)
{
	c->slot[c->n] = slot;
	c->v[c->n++] = (struct sp_spill_close){ seq, end, region, 0 };
	if (c->n == 64)
		close_flush(c);
}

static bool is_slot(const struct sp_rec_thread *t, const struct sp_event *ev)
{
	return t->slots && ev >= t->slots->ev && ev < t->slots->ev + SP_STACK_MAX;
}

/* Write the slots whose call ended (or was deleted) and free them once
 * written. With now != SP_OPEN (signal), still-open ones are written as
 * ending at now and no slot is freed. */
static void harvest(struct sp_rec_thread *t, struct closes *c, int64_t now)
{
	struct sp_spill_slots *s = t->slots;
	for (uint32_t i = 0; s && i < SP_STACK_MAX; i++) {
		if (!s->used[i])
			continue;
		const struct sp_event *e = &s->ev[i];
		if (e->end != SP_OPEN || e->region == SP_NO_REGION)
			close_add(c, s->seq[i], e->end, e->region, now == SP_OPEN ? (uint16_t)i : NO_SLOT);
		else if (now != SP_OPEN)
			close_add(c, s->seq[i], now, e->region, NO_SLOT);
	}
}

/* Open frames whose event is in chunk c (events seq..seq+n-1, now in the
 * file) close into a slot from now on. */
static void move_to_slots(struct sp_rec_thread *t, struct sp_chunk *c, size_t n, uint64_t seq)
{
	for (uint32_t i = 0; i < t->depth && i < SP_STACK_MAX; i++) {
		struct sp_frame *f = &t->stack[i];
		if (!f->ev || f->ev < c->events || f->ev >= c->events + n)
			continue;
		uint32_t k = 0;
		while (k < SP_STACK_MAX && t->slots->used[k])
			k++;
		if (k == SP_STACK_MAX)
			break; /* cannot happen: at most depth slots are open */
		t->slots->used[k] = 1;
		t->slots->ev[k] = *f->ev;
		t->slots->seq[k] = seq + (uint64_t)(f->ev - c->events);
		f->ev = &t->slots->ev[k];
	}
}

static void tally_add(const struct sp_event *ev, size_t n)
{
	pthread_mutex_lock(&tally_lock);
	for (size_t i = 0; i < n; i++) {
		uint32_t r = ev[i].region;
		if (r == SP_NO_REGION)
			continue;
		if (r >= ntally) {
			uint32_t cap = ntally ? ntally : 64;
			while (cap <= r)
				cap *= 2;
			uint64_t *m = realloc(tally, cap * sizeof *m);
			if (!m)
				continue;
			memset(m + ntally, 0, (cap - ntally) * sizeof *m);
			tally = m;
			ntally = cap;
		}
		tally[r]++;
		atomic_fetch_add_explicit(&tallied, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&tally_lock);
}

/* The file is out of reach: what it held is counted as dropped, once. */
static void count_lost(void)
{
	pthread_mutex_lock(&tally_lock);
	for (uint32_t r = 0; !lost_counted && r < ntally; r++)
		if (tally[r])
			sp_thread_count_dropped(r, tally[r]);
	lost_counted = true;
	pthread_mutex_unlock(&tally_lock);
}

/*
 * All chunks are written before any frame moves to a slot: if a write
 * fails, the thread's memory is exactly as before (it keeps its chunks and
 * the caller drops), and the records already written for it are beyond
 * t->spilled, which finalize ignores (the same events come from memory).
 */
int sp_spill_thread(struct sp_rec_thread *t)
{
	if (!sp_spill_active() || getpid() != owner)
		return -EBADF;
	if (!t->slots && !(t->slots = calloc(1, sizeof *t->slots)))
		return -ENOMEM;
	sync_regions(true);
	put_thread(t);
	struct closes cl = { .t = t };
	harvest(t, &cl, SP_OPEN);
	close_flush(&cl);
	uint64_t seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		size_t n = sp_chunk_count(t, c, t->pos);
		int ret = put_events(t, seq, c->events, n);
		if (ret)
			return ret;
		seq += n;
	}
	seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		size_t n = sp_chunk_count(t, c, t->pos);
		tally_add(c->events, n);
		move_to_slots(t, c, n, seq);
		seq += n;
	}
	t->spilled = seq;
	return 0;
}

/* Event number of an open frame's event in thread t's memory, or
 * UINT64_MAX if it is not there. */
static uint64_t seq_in_memory(const struct sp_rec_thread *t, const struct sp_event *ev)
{
	uint64_t seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		if (ev >= c->events && ev < c->events + c->capacity)
			return seq + (uint64_t)(ev - c->events);
		seq += c == t->chunks ? c->capacity : c->used;
	}
	return UINT64_MAX;
}

/* A thread that is spilling while the handler runs on another thread
 * finishes its spill first (its memory is then consistent again, and
 * recording is off, so it adds at most the call it is in): wait for it,
 * 500 ms at most. The thread the handler interrupted cannot finish. */
static void wait_spilled(const struct sp_rec_thread *t)
{
	if (t->native_id == (int64_t)syscall(SYS_gettid))
		return;
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 500 && atomic_load(&t->spilling); i++)
		nanosleep(&ms, NULL);
}

static void dump_thread(struct sp_rec_thread *t, int64_t now)
{
	put_thread(t);
	if (atomic_load(&t->spilling))
		wait_spilled(t);
	if (atomic_load(&t->spilling))
		return; /* interrupted mid-spill: its memory is half in the file */
	const struct sp_event *pos = t->pos;
	uint64_t seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		size_t n = sp_chunk_count(t, c, pos);
		if (n > c->capacity)
			break;
		put_events(t, seq, c->events, n);
		seq += n;
	}
	struct closes cl = { .t = t };
	harvest(t, &cl, now);
	uint32_t depth = t->depth < SP_STACK_MAX ? t->depth : SP_STACK_MAX;
	for (uint32_t i = 0; i < depth; i++) {
		const struct sp_event *ev = t->stack[i].ev;
		if (!ev || is_slot(t, ev) || ev->end != SP_OPEN)
			continue;
		uint64_t s = seq_in_memory(t, ev);
		if (s != UINT64_MAX)
			close_add(&cl, s, now, ev->region, NO_SLOT);
	}
	close_flush(&cl);
}

int sp_spill_dump(int signo)
{
	if (spill_fd < 0 || getpid() != owner)
		return -EBADF;
	if (atomic_exchange(&dumped, 1))
		return -EALREADY;
	atomic_store(&sp_recording, 0);
	int err = atomic_load(&stopped);
	if (err)
		return -err; /* the file holds what was written before it stopped */
	int64_t tick = sp_ticks(), ns = sp_monotonic_ns();
	sync_regions(false);
	for (struct sp_rec_thread *t = sp_thread_list_unlocked(); t; t = t->next)
		dump_thread(t, tick);
	struct sp_spill_drop d[64];
	uint32_t nd = 0, nreg = sp_region_count();
	for (uint32_t id = 0; id < nreg; id++) {
		const struct sp_region *r = sp_region_get(id);
		uint64_t v = r ? atomic_load(&r->dropped) : 0;
		if (v)
			d[nd++] = (struct sp_spill_drop){ id, 0, v };
		if (nd == 64 || (nd && id + 1 == nreg)) {
			sp_spill_put_rec(SP_SPILL_DROPS, 0, d, nd * sizeof *d, NULL, 0);
			nd = 0;
		}
	}
	struct sp_spill_trailer tr = { signo, 0, tick, ns, sp_thread_dropped_total() };
	sp_spill_put_rec(SP_SPILL_TRAILER, 0, &tr, sizeof tr, NULL, 0);
	err = atomic_load(&stopped);
	return -err;
}

/* Spilled events are read back a piece at a time through the index
 * (sp_spill_index): finalize holds one piece, not the whole run. */
enum { PIECE_EVENTS = (1u << 20) / sizeof(struct sp_event) };
static struct sp_event *piece;
static int loaded_fd = -1;

/* Slots still in use hold ends the file may lack (their CLOSE record was
 * not written): apply them to the events [first, first+n) read back, as
 * the reader applies CLOSE records. */
static void apply_slots(const struct sp_rec_thread *t, uint64_t first, size_t n,
			struct sp_event *ev)
{
	const struct sp_spill_slots *s = t->slots;
	for (uint32_t i = 0; s && i < SP_STACK_MAX; i++) {
		if (!s->used[i] || s->seq[i] < first || s->seq[i] - first >= n)
			continue;
		struct sp_event *e = &ev[s->seq[i] - first];
		if (e->region == SP_SPILL_NO_REGION)
			continue;
		e->end = s->ev[i].end;
		e->region = s->ev[i].region;
	}
}

ssize_t sp_spill_prefix_piece(const struct sp_rec_thread *t, uint64_t first,
			      const struct sp_event **ret_events)
{
	const struct sp_spill_tdata *d = t->prefix;
	if (!d || !piece || first >= t->nprefix)
		return 0;
	size_t n = t->nprefix - first < PIECE_EVENTS ? (size_t)(t->nprefix - first) : PIECE_EVENTS;
	int ret = sp_spill_read_events(loaded_fd, d, first, n, (struct sp_spill_event *)piece);
	if (ret)
		return ret;
	apply_slots(t, first, n, piece);
	*ret_events = piece;
	return (ssize_t)n;
}

int sp_spill_load(void)
{
	if (spill_fd < 0 || getpid() != owner || !atomic_load(&events_total))
		return 0;
	if (atomic_load(&reopened))
		sp_log(SP_LOG_DEBUG, "spill", "%s reopened %u times (the program closed its descriptor)",
		       path, atomic_load(&reopened));
	if (atomic_load(&stopped) == ESTALE) {
		count_lost();
		return 0;
	}
	/* Calls that were open when spilled have ended by now (finalize closed
	 * every open call): write their ends (so the file stays complete for
	 * `recover` if the write fails), then index everything. After the
	 * spill stopped nothing is written: the ends come from the slots. */
	if (!atomic_load(&stopped)) {
		sync_regions(true);
		for (struct sp_rec_thread *t = sp_thread_first(); t; t = t->next) {
			struct closes cl = { .t = t };
			harvest(t, &cl, SP_OPEN);
			close_flush(&cl);
		}
	}
	/* Read through our descriptor, not the path: the file may have been
	 * renamed (its directory moved) and the path may name another file. */
	int fd = our_fd();
	if (fd < 0) {
		stop(-fd);
		if (fd == -ESTALE) {
			count_lost();
			return 0;
		}
		return fd;
	}
	piece = malloc(PIECE_EVENTS * sizeof *piece);
	if (!piece)
		return -ENOMEM;
	int ret = sp_spill_index(fd, &loaded);
	if (ret) {
		free(piece);
		piece = NULL;
		return ret;
	}
	have_loaded = true;
	loaded_fd = fd;
	for (struct sp_rec_thread *t = sp_thread_first(); t; t = t->next) {
		for (uint32_t i = 0; i < loaded.nthreads; i++) {
			struct sp_spill_tdata *d = &loaded.threads[i];
			if (d->index != t->index || !t->spilled)
				continue;
			if (d->n < t->spilled)
				return -EIO;
			t->prefix = d;
			t->nprefix = t->spilled;
		}
	}
	return 0;
}

void sp_spill_unload(void)
{
	for (struct sp_rec_thread *t = sp_thread_first(); have_loaded && t; t = t->next) {
		t->prefix = NULL;
		t->nprefix = 0;
	}
	if (have_loaded)
		sp_spill_data_free(&loaded);
	have_loaded = false;
	free(piece);
	piece = NULL;
	loaded_fd = -1;
}

/* Closes our descriptor only if it still is ours: a number the program
 * closed and reused is its file now. */
void sp_spill_close(void)
{
	int fd = atomic_exchange(&spill_fd, -1);
	if (is_ours(fd))
		close(fd);
}

/* Unlinks the path only if it still names our file. */
void sp_spill_remove(void)
{
	if (atomic_load(&spill_fd) >= 0 && getpid() == owner && path_is_ours())
		unlink(path);
	sp_spill_close();
	path[0] = '\0';
}
