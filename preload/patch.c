/* SPDX-License-Identifier: MIT */
/*
 * Self-patching of throttled functions' hook calls (patch.h): the call to
 * __cyg_profile_func_enter/exit that returned to `ret` becomes a NOP of the
 * same length, written with the int3 protocol of cross-modifying code
 * (int3, sync every core, the tail, sync, the head, sync) while a SIGTRAP
 * handler steps a thread that meets the int3 over the call. docs/HOOKS.md,
 * "Self-patching", gives the safety argument and the refusals.
 */
#define _GNU_SOURCE
#include "patch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "config.h"
#include "eh-frame.h"
#include "functions.h"
#include "log.h"
#include "recorder.h"

#if defined(__x86_64__)
#include <linux/membarrier.h>
#endif

bool sp_patch_enabled;

#if !defined(__x86_64__)

void sp_patch_setup(void)
{
	if (sp_config.patch)
		sp_log(SP_LOG_WARN, "patch", "SCOPE_PROFILER_PATCH=1: call-site patching is implemented for "
		    "x86-64 only; throttled functions stay sampled");
}

int sp_patch_site(void *ret, uint32_t region, void *fn)
{
	(void)ret;
	(void)region;
	(void)fn;
	return -ENOSYS;
}

const uint32_t *sp_patch_log(uint32_t *n)
{
	*n = 0;
	return NULL;
}

void sp_patch_forget_queue(void)
{
}

#else /* __x86_64__ */

/* The hooks whose calls are patched (cyg-hooks.c). Their address here is
 * the one every module's PLT/GOT resolves to whenever they are reached. */
void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

/*
 * Site table: one entry per hook return address ever handled, insert-only
 * open addressing (never freed, never moved), so the SIGTRAP handler probes
 * it with atomic loads and no lock. Entries are written under patch_lock.
 * `code` holds the 6 bytes before `ret` when the entry was last decided: a
 * module unloaded and another mapped at the same address shows different
 * bytes, and the site is decided again.
 */
enum { SITE_NEW, SITE_BUSY, SITE_PATCHED, SITE_REFUSED, SITE_QUEUED, SITE_ALIAS };

/*
 * A tail exit (`jmp` to the exit hook, the function's last instruction)
 * is keyed like a call, by the address after it, and becomes `ret` and
 * four int3s. The hook returns to the function's caller: that return
 * address gets an ALIAS entry that names the tail site (`alias`), with the
 * 6 bytes before it in `code` (another module there: decided again).
 */
struct site {
	_Atomic uintptr_t ret;  /* key, 0 free; set once */
	_Atomic uint64_t code;  /* bytes ret-6 .. ret-1 when decided; QUEUED: ret-5 .. ret-1 */
	_Atomic uint8_t state;  /* SITE_*: BUSY while the int3 may be in the code */
	_Atomic uint8_t len;    /* 5 (e8 rel32, e9 rel32) or 6 (ff 15 disp32); 0 refused */
	_Atomic uint8_t tail;   /* 1: a tail exit (e9 rel32, written as ret) */
	int16_t err;            /* SITE_REFUSED: the -errno returned again */
	uint32_t region;        /* QUEUED: the function of an enter site, or SP_NO_REGION */
	_Atomic uintptr_t alias; /* SITE_ALIAS: the key of the function's tail exit */
};

#define SITE_BITS 14
#define NSITES (1u << SITE_BITS)
static struct site sites[NSITES]; /* 384 KiB of .bss, touched as used */
static unsigned nsites;            /* guarded by patch_lock */

static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Sites are patched in batches: a site met for the first time is queued
 * (SITE_QUEUED; its hook keeps counting meanwhile), and the queue is
 * written when one of its sites is met again QUEUE_NS or more after the
 * queue's first site (its function is still hot, and the sites met since
 * are most of those of its loop) or when it is full; it is emptied before
 * a dlclose. A batch costs the syscalls of one patch: one mprotect per
 * run of pages and three membarriers per module, not per site (about 10
 * syscalls a site otherwise: ~10 ms for the proxy's 1,500 sites, more under
 * oversubscription). Guarded by patch_lock.
 */
#define QUEUE_MAX 128
static struct site *queue[QUEUE_MAX];
static unsigned nqueue;
static _Atomic int64_t queued_since; /* ns, the queue's first site (read without the lock) */
#define QUEUE_NS 500000LL /* a queued site met again this soon waits */
/* Enter sites patched, by function, in order: each thread brings its own
 * state of those functions in step on its next rare path
 * (sp_patch_log). Written under patch_lock, published by npatched. */
static uint32_t patched_log[NSITES];
static _Atomic uint32_t npatched;
static unsigned long long batches, batch_sites, tail_sites; /* debug line at exit */
static int64_t patch_ns;                          /* time in sp_patch_site's locked part */
static atomic_int stopped;      /* patching stopped for the process (one line said why) */
static struct sigaction previous_trap;
/* Tail exits are patched: not under a shadow stack (CET), where the SIGTRAP
 * handler's `ret` (RIP and RSP set in the context) would leave the shadow
 * stack's entry behind and the caller's own ret would fault. */
static bool tail_exits;
static pid_t registered_pid;    /* membarrier registration is per process */
/* Test only (SCOPE_PROFILER_PATCH_TEST_HOLD_US, tests/e2e/patch): keep the
 * int3 in place this long, so that other threads meet it, and count the
 * traps stepped over (printed at exit). */
static long test_hold_us;
static atomic_long test_traps, test_tail_traps;

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t nop6[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 };
/* A tail exit's jmp becomes ret: what the hook would have done next. */
static const uint8_t ret5[5] = { 0xc3, 0xcc, 0xcc, 0xcc, 0xcc };

static const uint8_t *written_as(unsigned len, bool tail)
{
	return tail ? ret5 : len == 5 ? nop5 : nop6;
}

static uint64_t hash_ret(uintptr_t a)
{
	uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 29);
}

/* Lock-free probe (the signal handler and the fast path). */
static struct site *site_find(uintptr_t ret)
{
	for (uint64_t i = hash_ret(ret), n = 0; n < NSITES; i++, n++) {
		struct site *s = &sites[i & (NSITES - 1)];
		uintptr_t k = atomic_load_explicit(&s->ret, memory_order_acquire);
		if (k == ret)
			return s;
		if (!k)
			return NULL;
	}
	return NULL;
}

/* Under patch_lock: the entry of ret, created in state NEW. NULL when the
 * table is 3/4 full. */
static struct site *site_get(uintptr_t ret)
{
	struct site *s = site_find(ret);
	if (s || nsites >= NSITES / 4 * 3)
		return s;
	for (uint64_t i = hash_ret(ret);; i++) {
		s = &sites[i & (NSITES - 1)];
		if (!atomic_load_explicit(&s->ret, memory_order_relaxed))
			break;
	}
	atomic_store_explicit(&s->state, SITE_NEW, memory_order_relaxed);
	atomic_store_explicit(&s->ret, ret, memory_order_release);
	nsites++;
	return s;
}

static uint64_t code_before(uintptr_t ret)
{
	uint64_t v = 0;
	memcpy(&v, (const void *)(ret - 6), 6);
	return v;
}

/* The call's last 5 bytes: mapped whenever a hook returned to ret. */
static uint64_t code_call(uintptr_t ret)
{
	uint64_t v = 0;
	memcpy(&v, (const void *)(ret - 5), 5);
	return v;
}

static bool is_nop_at(uintptr_t at, unsigned len, bool tail)
{
	return memcmp((const void *)at, written_as(len, tail), len) == 0;
}

static long membarrier_call(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

/* Stop patching for the whole process, saying why once. */
static void stop(const char *why, int err)
{
	if (atomic_exchange(&stopped, 1))
		return;
	if (err)
		sp_log(SP_LOG_WARN, "patch", "SCOPE_PROFILER_PATCH: %s (%s); patching stops, throttled functions "
		    "stay sampled", why, strerror(err));
	else
		sp_log(SP_LOG_WARN, "patch", "SCOPE_PROFILER_PATCH: %s; patching stops, throttled functions stay "
		    "sampled", why);
}

/* ---- the SIGTRAP handler ------------------------------------------------- */

/*
 * A thread executed the int3 of a site being patched (or patched already:
 * the trap can be delivered after the patch completed). Skipping the call
 * is what the NOP does. Any other trap goes to the previous disposition.
 * Async-signal-safe: atomic loads, one byte read of the code that trapped.
 */
static void on_trap(int signo, siginfo_t *info, void *uctx)
{
	int saved = errno;
	ucontext_t *uc = uctx;
	if (info->si_code <= 0) /* sent by kill/tgkill/sigqueue, not an int3 */
		goto chain;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
	for (unsigned len = 5; len <= 6; len++) {
		struct site *s = site_find(pc + len);
		if (!s || atomic_load_explicit(&s->len, memory_order_acquire) != len)
			continue;
		unsigned st = atomic_load_explicit(&s->state, memory_order_acquire);
		uint8_t head = *(volatile const uint8_t *)pc;
		/* BUSY: ours. PATCHED: ours unless an int3 is there again (not
		 * ours: we never write one after the NOP). */
		if (st == SITE_BUSY || (st == SITE_PATCHED && head != 0xcc)) {
			if (test_hold_us)
				atomic_fetch_add_explicit(&test_traps, 1, memory_order_relaxed);
			if (atomic_load_explicit(&s->tail, memory_order_relaxed)) {
				/* the ret the jmp becomes: to the function's caller */
				if (test_hold_us)
					atomic_fetch_add_explicit(&test_tail_traps, 1,
								  memory_order_relaxed);
				uintptr_t *sp = (uintptr_t *)uc->uc_mcontext.gregs[REG_RSP];
				uc->uc_mcontext.gregs[REG_RIP] = (greg_t)sp[0];
				uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)(sp + 1);
			} else {
				uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(pc + len);
			}
			errno = saved;
			return;
		}
	}
chain:
	errno = saved;
	if (previous_trap.sa_flags & SA_SIGINFO) {
		previous_trap.sa_sigaction(signo, info, uctx);
	} else if (previous_trap.sa_handler == SIG_DFL) {
		/* Blocked while in here: delivered, with the default action,
		 * when this returns. */
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigaction(SIGTRAP, &dfl, NULL);
		raise(SIGTRAP);
	} else if (previous_trap.sa_handler != SIG_IGN) {
		previous_trap.sa_handler(signo);
	}
}

/* ---- the checks before a patch ------------------------------------------- */

/* SigBlk of thread `tid` has SIGTRAP (the thread exists); false if unknown. */
static bool thread_blocks_trap(int64_t tid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof path, "/proc/self/task/%lld/status", (long long)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false; /* gone (or another process's thread after fork) */
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nSigBlk:");
	if (!p)
		return false;
	unsigned long long mask = strtoull(p + 8, NULL, 16);
	return (mask >> (SIGTRAP - 1)) & 1;
}

/*
 * A thread that has SIGTRAP blocked and meets the int3 is killed by the
 * kernel (a forced SIGTRAP resets a blocked handler to the default), so no
 * thread that runs instrumented code (every thread the recorder knows) may
 * block it. glibc blocks every signal for a moment (pthread_create,
 * posix_spawn), and a thread can be preempted there: a thread found
 * blocking it delays patching for RETRY_NS (-EAGAIN); the same thread found
 * so for BLOCKED_NS stops patching. Racy by nature: a thread can block it
 * right after the check (docs/HOOKS.md).
 */
#define RETRY_NS 1000000LL       /* 1 ms */
#define BLOCKED_NS 2000000000LL  /* 2 s */

static _Atomic int64_t retry_after; /* no patch before this time (ns) */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t trap_blocker(void)
{
	int64_t self = gettid();
	for (struct sp_rec_thread *t = sp_thread_first(); t; t = t->next) {
		int64_t tid = t->native_id;
		if (tid == self || __atomic_load_n(&t->end_ns, __ATOMIC_RELAXED))
			continue;
		for (int i = 0; thread_blocks_trap(tid); i++) {
			if (i == 8)
				return tid;
			sched_yield();
		}
	}
	return 0;
}

/* The process-wide preconditions, checked before each patch: 0, -EAGAIN
 * (not now) or -EPERM (patching stopped). */
static int can_patch_now(void)
{
	static int64_t blocked_tid, blocked_since;
	struct sigaction cur;
	if (sigaction(SIGTRAP, NULL, &cur) == 0 && (!(cur.sa_flags & SA_SIGINFO) ||
						    cur.sa_sigaction != on_trap)) {
		stop("the application replaced the SIGTRAP handler", 0);
		return -EPERM;
	}
	int64_t tid = trap_blocker();
	if (tid) {
		int64_t now = now_ns();
		if (tid != blocked_tid) {
			blocked_tid = tid;
			blocked_since = now;
		} else if (now - blocked_since >= BLOCKED_NS) {
			char why[96];
			snprintf(why, sizeof why, "thread %lld blocks SIGTRAP (a trap there would kill it)",
				 (long long)tid);
			stop(why, 0);
			return -EPERM;
		}
		atomic_store_explicit(&retry_after, now + RETRY_NS, memory_order_relaxed);
		return -EAGAIN;
	}
	blocked_tid = 0;
	pid_t pid = getpid();
	if (registered_pid != pid) { /* first patch, or first in a forked child */
		if (membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) != 0) {
			stop("membarrier registration failed", errno);
			return -EPERM;
		}
		registered_pid = pid;
	}
	return 0;
}

/* ---- decoding the call --------------------------------------------------- */

/* A module's PT_LOAD segments, from the dl_iterate_phdr callback. */
struct module {
	const struct dl_phdr_info *info;
};

/* The flags of the PT_LOAD that holds [a, a + n), 0 if none does. */
static unsigned segment_flags(const struct module *m, uintptr_t a, size_t n, uintptr_t *ret_lo,
			      uintptr_t *ret_hi)
{
	const struct dl_phdr_info *info = m->info;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (a >= lo && a + n <= hi && a + n >= a) {
			if (ret_lo)
				*ret_lo = lo;
			if (ret_hi)
				*ret_hi = hi;
			return ph->p_flags;
		}
	}
	return 0;
}

static bool is_hook(uintptr_t a)
{
	return a == (uintptr_t)__cyg_profile_func_enter || a == (uintptr_t)__cyg_profile_func_exit;
}

/* The hook the 8-byte GOT slot at `slot` holds, 0 if none of ours. */
static uintptr_t got_hook(const struct module *m, uintptr_t slot)
{
	if (!(segment_flags(m, slot, 8, NULL, NULL) & PF_R) || (slot & 7))
		return 0;
	uintptr_t v = __atomic_load_n((const uintptr_t *)slot, __ATOMIC_RELAXED);
	return is_hook(v) ? v : 0;
}

/* The hook of a PLT stub at `t` whose GOT slot holds one of ours (0 if
 * not): `ff 25 disp32` (.plt, .plt.got), or with IBT `f3 0f 1e fa` then
 * `f2 ff 25 disp32` (.plt.sec, bnd) or `ff 25 disp32`. */
static uintptr_t plt_hook(const struct module *m, uintptr_t t)
{
	if (!(segment_flags(m, t, 11, NULL, NULL) & PF_X))
		return 0;
	const uint8_t *p = (const uint8_t *)t;
	int32_t disp;
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) {
		p += 4;
		if (p[0] == 0xf2)
			p++;
	}
	if (p[0] != 0xff || p[1] != 0x25)
		return 0;
	memcpy(&disp, p + 2, 4);
	return got_hook(m, (uintptr_t)(p + 6) + (intptr_t)disp);
}

/* Length of the call to one of our hooks that ends at ret (5 or 6), or
 * -errno. The caller checked [ret - 6, ret) is in an executable segment. */
static int decode_call(const struct module *m, uintptr_t ret)
{
	const uint8_t *p = (const uint8_t *)ret;
	int32_t disp;
	if (p[-5] == 0xe8) { /* call rel32: the hook, or a PLT stub */
		memcpy(&disp, p - 4, 4);
		uintptr_t t = ret + (intptr_t)disp;
		return is_hook(t) || plt_hook(m, t) ? 5 : -ENOEXEC;
	}
	if (p[-6] == 0xff && p[-5] == 0x15) { /* call *disp32(%rip): -fno-plt */
		memcpy(&disp, p - 4, 4);
		return got_hook(m, ret + (intptr_t)disp) ? 6 : -ENOEXEC;
	}
	return -ENOEXEC;
}

/* 5 when the 5 bytes before ret are `jmp rel32` to the exit hook or to a
 * PLT stub whose GOT slot holds it (a tail exit), else -ENOEXEC. The
 * caller checked [ret - 5, ret) is in an executable segment. */
static int decode_tail(const struct module *m, uintptr_t ret)
{
	const uint8_t *p = (const uint8_t *)ret;
	int32_t disp;
	if (p[-5] != 0xe9)
		return -ENOEXEC;
	memcpy(&disp, p - 4, 4);
	uintptr_t t = ret + (intptr_t)disp, exit_hook = (uintptr_t)__cyg_profile_func_exit;
	return t == exit_hook || plt_hook(m, t) == exit_hook ? 5 : -ENOEXEC;
}

/* What the hook that returned to `ret` for `fn` tells: `ret` follows a
 * `call rel32` to fn, so the exit was jumped to, and fn's code ends with
 * that jmp. */
struct tail_find {
	uintptr_t ret, fn;
	bool called;   /* first walk: ret follows a call rel32 to fn */
	uintptr_t end; /* second walk: the key of fn's tail exit (the address after it) */
};

static int called_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct tail_find *tf = data;
	struct module m = { info };
	if (!(segment_flags(&m, tf->ret - 5, 5, NULL, NULL) & PF_X))
		return 0;
	const uint8_t *p = (const uint8_t *)tf->ret;
	int32_t disp;
	memcpy(&disp, p - 4, 4);
	tf->called = p[-5] == 0xe8 && tf->ret + (intptr_t)disp == tf->fn;
	return 1;
}

static int end_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct tail_find *tf = data;
	struct module m = { info };
	if (!(segment_flags(&m, tf->fn, 1, NULL, NULL) & PF_X))
		return 0;
	uintptr_t end = sp_eh_frame_end(info, tf->fn);
	if (end && (segment_flags(&m, end - 5, 5, NULL, NULL) & PF_X) && decode_tail(&m, end) == 5)
		tf->end = end;
	return 1;
}

/* Under patch_lock: the key of fn's tail exit when the exit hook that
 * returned to ret was jumped to from it, else 0. Each walk holds the
 * loader's lock: no module goes away while it reads. */
static uintptr_t tail_exit(uintptr_t ret, uintptr_t fn)
{
	struct tail_find tf = { .ret = ret, .fn = fn };
	dl_iterate_phdr(called_module, &tf);
	if (tf.called)
		dl_iterate_phdr(end_module, &tf);
	return tf.end;
}

/* ---- writing the NOP ----------------------------------------------------- */

static void write_byte(uintptr_t at, uint8_t b)
{
	__atomic_store_n((uint8_t *)at, b, __ATOMIC_RELEASE);
}

static int sync_cores(void)
{
	return membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) == 0 ? 0 : -errno;
}

/*
 * The int3 protocol (the kernel's text_poke_bp), for a batch of sites of
 * one module at once: a core decodes either the old call, the int3
 * (stepped over by on_trap) or the whole NOP, never a mix, since nobody
 * jumps into the middle of a call. Each step is made visible to every core
 * of the process before the next one (membarrier SYNC_CORE: a
 * core-serializing instruction on each).
 */
struct job {
	struct site *s;
	uintptr_t ret, at;  /* the call is [at, ret) */
	uintptr_t lo, hi;   /* its pages */
	int prot;           /* its segment's protection */
	unsigned len;
	bool tail;          /* a tail exit's jmp: written as ret */
};

static int job_cmp(const void *a, const void *b)
{
	const struct job *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Make [lo, hi) writable (w) or give it back its protection. */
static int set_prot(uintptr_t lo, uintptr_t hi, int prot, bool w)
{
	int p = w ? PROT_READ | PROT_WRITE | PROT_EXEC : prot;
	return mprotect((void *)lo, hi - lo, p) == 0 ? 0 : -errno;
}

/* The runs of pages of the jobs (sorted by page), one mprotect each: the
 * run that starts at job i ends before the returned job, its pages end at
 * *ret_hi. */
static unsigned run_at(const struct job *j, unsigned n, unsigned i, uintptr_t *ret_hi)
{
	uintptr_t hi = j[i].hi;
	unsigned k = i + 1;
	for (; k < n && j[k].lo <= hi && j[k].prot == j[i].prot; k++)
		if (j[k].hi > hi)
			hi = j[k].hi;
	*ret_hi = hi;
	return k;
}

/* Every run's pages back to their protection: 0 or the first -errno. */
static int restore_runs(const struct job *j, unsigned n)
{
	int ret = 0;
	for (unsigned i = 0, k; i < n; i = k) {
		uintptr_t hi;
		k = run_at(j, n, i, &hi);
		int rc = set_prot(j[i].lo, hi, j[i].prot, false);
		if (rc < 0 && !ret)
			ret = rc;
	}
	return ret;
}

static void refuse(struct site *s, uintptr_t ret, int err)
{
	s->err = (int16_t)err;
	atomic_store_explicit(&s->code, code_before(ret), memory_order_relaxed);
	atomic_store_explicit(&s->len, 0, memory_order_relaxed);
	atomic_store_explicit(&s->state, SITE_REFUSED, memory_order_release);
}

/* Tell the function table, and the threads through the log, that an enter
 * site of `region` is a NOP now. */
static void log_patched(uint32_t region)
{
	if (region == SP_NO_REGION)
		return;
	sp_fn_region_set_patched(region);
	uint32_t n = atomic_load_explicit(&npatched, memory_order_relaxed);
	if (n < NSITES) {
		patched_log[n] = region;
		atomic_store_explicit(&npatched, n + 1, memory_order_release);
	}
}

static void write_jobs(struct job *j, unsigned n)
{
	qsort(j, n, sizeof *j, job_cmp);
	for (unsigned i = 0, k; i < n; i = k) {
		uintptr_t hi;
		k = run_at(j, n, i, &hi);
		int rc = set_prot(j[i].lo, hi, j[i].prot, true);
		if (rc < 0) {
			stop(rc == -EACCES || rc == -EPERM
			     ? "the kernel refused to make code writable (W^X policy: SELinux execmod/execmem, "
			       "PaX MPROTECT or a seccomp filter)"
			     : "mprotect of the code failed", -rc);
			(void)restore_runs(j, i); /* the runs before this one */
			for (unsigned x = 0; x < n; x++)
				refuse(j[x].s, j[x].ret, rc);
			return;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		atomic_store_explicit(&j[i].s->len, (uint8_t)j[i].len, memory_order_relaxed);
		atomic_store_explicit(&j[i].s->state, SITE_BUSY, memory_order_release);
		write_byte(j[i].at, 0xcc);
	}
	int rc = sync_cores();
	if (test_hold_us) {
		struct timespec hold = { test_hold_us / 1000000, test_hold_us % 1000000 * 1000 };
		nanosleep(&hold, NULL);
	}
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *nop = written_as(j[i].len, j[i].tail);
		for (unsigned b = 1; b < j[i].len; b++)
			write_byte(j[i].at + b, nop[b]);
	}
	int rc2 = sync_cores();
	for (unsigned i = 0; i < n; i++)
		write_byte(j[i].at, written_as(j[i].len, j[i].tail)[0]);
	int rc3 = sync_cores();
	if (rc || rc2 || rc3) {
		/* Never seen with a registered process. A core may then still
		 * see the int3 or a mix: the sites stay BUSY for good, so that
		 * on_trap steps over any trap there. */
		stop("membarrier failed in the middle of a patch", -(rc ? rc : rc2 ? rc2 : rc3));
	} else {
		for (unsigned i = 0; i < n; i++) {
			struct site *s = j[i].s;
			uint32_t region = s->region;
			atomic_store_explicit(&s->code, code_before(j[i].ret), memory_order_relaxed);
			atomic_store_explicit(&s->state, SITE_PATCHED, memory_order_release);
			log_patched(region);
			tail_sites += j[i].tail;
		}
		batches++;
		batch_sites += n;
	}
	int rc4 = restore_runs(j, n);
	if (rc4 < 0)
		stop("restoring the protection of patched code failed", -rc4);
	/* (the NOPs are in place all the same) */
}

/* ---- a batch ------------------------------------------------------------- */

static void dequeue(struct site *s)
{
	atomic_store_explicit(&s->state, SITE_NEW, memory_order_release);
}

/* In one module, under the loader's lock (no dlclose can unmap it
 * meanwhile) and patch_lock: the queued sites it holds are decoded and
 * written (or refused), and leave the queue. */
static int flush_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	struct module m = { info };
	static struct job j[QUEUE_MAX]; /* under patch_lock: off the thread's stack */
	unsigned n = 0, left = 0;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (unsigned i = 0; i < nqueue; i++) {
		struct site *s = queue[i];
		uintptr_t ret = atomic_load_explicit(&s->ret, memory_order_relaxed);
		if (!segment_flags(&m, ret - 1, 1, NULL, NULL)) {
			queue[left++] = s; /* another module's */
			continue;
		}
		unsigned flags = segment_flags(&m, ret - 6, 6, NULL, NULL);
		if (!(flags & PF_X) || code_call(ret) != atomic_load_explicit(&s->code, memory_order_relaxed)) {
			/* not code, the first bytes of a segment, or another
			 * module's code since it was queued: decided again when met */
			dequeue(s);
			continue;
		}
		bool tail = atomic_load_explicit(&s->tail, memory_order_relaxed);
		int len = tail ? decode_tail(&m, ret) : decode_call(&m, ret);
		if (len < 0) {
			refuse(s, ret, len);
			continue;
		}
		uintptr_t at = ret - (unsigned)len;
		j[n++] = (struct job){
			.s = s, .ret = ret, .at = at, .len = (unsigned)len, .tail = tail,
			.lo = at & ~(page - 1), .hi = (at + (unsigned)len - 1 + page) & ~(page - 1),
			.prot = ((flags & PF_R) ? PROT_READ : 0) | PROT_EXEC | ((flags & PF_W) ? PROT_WRITE : 0),
		};
	}
	nqueue = left;
	if (n)
		write_jobs(j, n);
	return nqueue == 0; /* 1: every queued site was found, stop iterating */
}

/* Under patch_lock: write the queue. A site whose module is gone leaves
 * it (decided again if it is met again). */
static void flush(void)
{
	if (!nqueue || atomic_load_explicit(&stopped, memory_order_relaxed))
		return;
	int rc = can_patch_now();
	if (rc == -EAGAIN)
		return; /* kept: written on a later call */
	if (rc == 0)
		dl_iterate_phdr(flush_module, NULL);
	for (unsigned i = 0; i < nqueue; i++)
		dequeue(queue[i]);
	nqueue = 0;
}

/* Under patch_lock: the ALIAS entry of `ret`, the caller's return address
 * of a function whose exit hook was jumped to, made or confirmed: the key
 * of the function's tail exit, or 0 (not one: decided as a call). */
static uintptr_t alias_of(uintptr_t ret, uintptr_t fn)
{
	if (!tail_exits)
		return 0;
	struct site *a = site_find(ret);
	unsigned st = a ? atomic_load_explicit(&a->state, memory_order_relaxed) : SITE_NEW;
	if (st == SITE_ALIAS && atomic_load_explicit(&a->code, memory_order_relaxed) == code_before(ret))
		return atomic_load_explicit(&a->alias, memory_order_relaxed);
	if (st == SITE_QUEUED || st == SITE_BUSY || st == SITE_PATCHED)
		return 0;
	uintptr_t t = tail_exit(ret, fn);
	if (!t || !(a = site_get(ret)))
		return 0;
	atomic_store_explicit(&a->alias, t, memory_order_relaxed);
	atomic_store_explicit(&a->code, code_before(ret), memory_order_relaxed);
	atomic_store_explicit(&a->state, SITE_ALIAS, memory_order_release);
	return t;
}

/* Under patch_lock: the site of ret, queued, or met again (then the queue
 * is written). fn: the exit hook's function (a tail exit's), else 0. */
static void handle(uintptr_t ret, uint32_t region, uintptr_t fn)
{
	uintptr_t t = fn && (ret & 4095) >= 6 ? alias_of(ret, fn) : 0;
	if (t)
		ret = t;
	struct site *s = site_get(ret);
	if (!s) {
		stop("too many call sites", 0);
		return;
	}
	unsigned st = atomic_load_explicit(&s->state, memory_order_relaxed);
	if (st == SITE_QUEUED) {
		if (now_ns() - atomic_load_explicit(&queued_since, memory_order_relaxed) >= QUEUE_NS)
			flush();
		return;
	}
	if (st == SITE_PATCHED && is_nop_at(ret - s->len, s->len, s->tail))
		return;
	if (st == SITE_REFUSED && atomic_load_explicit(&s->code, memory_order_relaxed) == code_before(ret))
		return;
	if (st == SITE_BUSY)
		return; /* a membarrier failed: patching stopped */
	if (st == SITE_ALIAS && atomic_load_explicit(&s->code, memory_order_relaxed) == code_before(ret))
		return; /* an alias still: nothing to write at ret */
	/* (an alias whose bytes changed: a module mapped there since, where ret
	 * is a call site now: decided as one) */
	s->region = region;
	atomic_store_explicit(&s->tail, t != 0, memory_order_relaxed);
	atomic_store_explicit(&s->code, code_call(ret), memory_order_relaxed);
	atomic_store_explicit(&s->state, SITE_QUEUED, memory_order_release);
	if (!nqueue)
		atomic_store_explicit(&queued_since, now_ns(), memory_order_relaxed);
	queue[nqueue++] = s;
	if (nqueue == QUEUE_MAX)
		flush();
}

/* The site's outcome: 0 patched, -EINPROGRESS queued, or -errno. */
static int outcome(uintptr_t ret)
{
	struct site *s = site_find(ret);
	if (s && atomic_load_explicit(&s->state, memory_order_acquire) == SITE_ALIAS)
		s = site_find(atomic_load_explicit(&s->alias, memory_order_relaxed));
	if (!s)
		return -ENOSPC;
	switch (atomic_load_explicit(&s->state, memory_order_acquire)) {
	case SITE_PATCHED: return 0;
	case SITE_QUEUED: return -EINPROGRESS;
	case SITE_REFUSED: return s->err;
	case SITE_BUSY: return -EPERM;
	default: return -ENOENT; /* module gone, or not code: decided again when met */
	}
}

/* Without a lock: the site was decided already and nothing changed. Only
 * when ret - 6 is in ret - 1's page (mapped: the caller returns there). */
static bool decided(uintptr_t ret, int *ret_rc)
{
	struct site *s = site_find(ret);
	if (!s || (ret & 4095) < 6)
		return false;
	unsigned st = atomic_load_explicit(&s->state, memory_order_acquire);
	if (st == SITE_ALIAS) { /* the function's tail exit decides */
		if (atomic_load_explicit(&s->code, memory_order_relaxed) != code_before(ret))
			return false;
		ret = atomic_load_explicit(&s->alias, memory_order_relaxed);
		if (!(s = site_find(ret)))
			return false;
		st = atomic_load_explicit(&s->state, memory_order_acquire);
	}
	if (st == SITE_PATCHED) {
		unsigned len = atomic_load_explicit(&s->len, memory_order_relaxed);
		if (!is_nop_at(ret - len, len, atomic_load_explicit(&s->tail, memory_order_relaxed)))
			return false; /* another module at the same address */
		*ret_rc = 0;
		return true;
	}
	if (st == SITE_REFUSED &&
	    atomic_load_explicit(&s->code, memory_order_relaxed) == code_before(ret)) {
		*ret_rc = s->err;
		return true;
	}
	/* Queued, and its batch is not due yet: no lock, no syscall. */
	if (st == SITE_QUEUED &&
	    now_ns() - atomic_load_explicit(&queued_since, memory_order_relaxed) < QUEUE_NS) {
		*ret_rc = -EINPROGRESS;
		return true;
	}
	return false;
}

int sp_patch_site(void *ret_addr, uint32_t region, void *fn)
{
	uintptr_t ret = (uintptr_t)ret_addr;
	int rc;
	if (!sp_patch_enabled || atomic_load_explicit(&stopped, memory_order_relaxed))
		return -EPERM;
	if (decided(ret, &rc))
		return rc;
	int saved = errno;
	int64_t after = atomic_load_explicit(&retry_after, memory_order_relaxed);
	if (after && now_ns() < after) {
		errno = saved;
		return -EAGAIN;
	}
	/* No signal handler runs on this thread while it holds patch_lock: a
	 * handler that forked would wait for it in the atfork handler. The
	 * synchronous ones stay open (blocked, a fault would kill), SIGTRAP
	 * too (trap_blocker() must not see this thread block it). */
	sigset_t all, old;
	sigfillset(&all);
	static const int sync_signals[] = { SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	for (size_t i = 0; i < sizeof sync_signals / sizeof *sync_signals; i++)
		sigdelset(&all, sync_signals[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_mutex_trylock(&patch_lock) != 0) {
		/* Another thread is patching: never wait in a hook. */
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		errno = saved;
		return -EBUSY;
	}
	/* open/read/close below are cancellation points: a cancelled thread
	 * would keep patch_lock (and the next fork would wait for it). */
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	int64_t t0 = now_ns();
	if (!atomic_load_explicit(&stopped, memory_order_relaxed))
		handle(ret, region, (uintptr_t)fn);
	patch_ns += now_ns() - t0;
	rc = atomic_load_explicit(&stopped, memory_order_relaxed) ? -EPERM : outcome(ret);
	pthread_mutex_unlock(&patch_lock);
	pthread_setcancelstate(cancel, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return rc;
}

const uint32_t *sp_patch_log(uint32_t *n)
{
	*n = atomic_load_explicit(&npatched, memory_order_acquire);
	return patched_log;
}

/* dlclose (dlclose.c), before the objects are unmapped: the queue is
 * emptied (its sites are queued again when met again), so that no site is
 * written into a module mapped later at the same address. */
void sp_patch_forget_queue(void)
{
	if (!sp_patch_enabled)
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&patch_lock);
	for (unsigned i = 0; i < nqueue; i++)
		dequeue(queue[i]);
	nqueue = 0;
	pthread_mutex_unlock(&patch_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- setup and fork ------------------------------------------------------ */

__attribute__((destructor)) static void test_report(void)
{
	if (sp_patch_enabled && batches)
		sp_log(SP_LOG_DEBUG, "patch", "%llu call site(s) patched in %llu batch(es), %.3f ms "
		    "(%llu tail exit(s) among them)", batch_sites, batches, (double)patch_ns / 1e6,
		    tail_sites);
	if (test_hold_us && sp_patch_enabled && getpid() == registered_pid)
		/* a warning, so QUIET does not hide it: the e2e test reads it */
		sp_log(SP_LOG_WARN, "patch", "patch test: %ld trap(s) stepped over (%ld at tail exits)",
		    atomic_load_explicit(&test_traps, memory_order_relaxed),
		    atomic_load_explicit(&test_tail_traps, memory_order_relaxed));
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&patch_lock); /* no half-done patch in the child */
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&patch_lock);
}

static void atfork_child(void)
{
	pthread_mutex_init(&patch_lock, NULL);
}

void sp_patch_setup(void)
{
	if (!sp_config.patch)
		return;
	long q = membarrier_call(MEMBARRIER_CMD_QUERY);
	if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE)) {
		sp_log(SP_LOG_WARN, "patch", "SCOPE_PROFILER_PATCH=1: this kernel has no "
		    "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) (Linux >= 4.16), needed to "
		    "rewrite code that other threads run; throttled functions stay sampled");
		return;
	}
	if (membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) != 0) {
		sp_log(SP_LOG_WARN, "patch", "SCOPE_PROFILER_PATCH=1: membarrier registration failed (%s); "
		    "throttled functions stay sampled", strerror(errno));
		return;
	}
	registered_pid = getpid();
	const char *hold = getenv("SCOPE_PROFILER_PATCH_TEST_HOLD_US");
	test_hold_us = hold ? strtol(hold, NULL, 10) : 0;
	if (test_hold_us < 0 || test_hold_us > 1000000)
		test_hold_us = 0;
	struct sigaction sa = { .sa_sigaction = on_trap,
				.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &previous_trap) != 0) {
		sp_log(SP_LOG_WARN, "patch", "SCOPE_PROFILER_PATCH=1: cannot install the SIGTRAP handler (%s); "
		    "throttled functions stay sampled", strerror(errno));
		return;
	}
	if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child) != 0) {
		sigaction(SIGTRAP, &previous_trap, NULL);
		sp_log(SP_LOG_WARN, "patch", "SCOPE_PROFILER_PATCH=1: pthread_atfork failed; throttled functions "
		    "stay sampled");
		return;
	}
	sp_patch_enabled = true;
	/* arch_prctl(ARCH_SHSTK_STATUS) (Linux >= 6.6; before, EINVAL: no
	 * shadow stack either): bit 0, the shadow stack is on. */
	unsigned long long shstk = 0;
	if (syscall(SYS_arch_prctl, 0x5005 /* ARCH_SHSTK_STATUS */, &shstk) != 0)
		shstk = 0;
	/* Test only (SCOPE_PROFILER_PATCH_TEST_SHSTK, tests/e2e/patch): as
	 * if a shadow stack were on, where no kernel here has one. */
	tail_exits = !(shstk & 1) && !getenv("SCOPE_PROFILER_PATCH_TEST_SHSTK");
	sp_log(SP_LOG_DEBUG, "patch",
	       "call-site patching on (membarrier registered, SIGTRAP handler installed; "
	       "tail exits %s)", tail_exits ? "too" : "not: a shadow stack is on");
}

#endif /* __x86_64__ */
