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

int sp_patch_site(void *ret)
{
	(void)ret;
	return -ENOSYS;
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
enum { SITE_NEW, SITE_BUSY, SITE_PATCHED, SITE_REFUSED };

struct site {
	_Atomic uintptr_t ret;  /* key, 0 free; set once */
	_Atomic uint64_t code;  /* bytes ret-6 .. ret-1 when decided */
	_Atomic uint8_t state;  /* SITE_*: BUSY while the int3 may be in the code */
	_Atomic uint8_t len;    /* 5 (e8 rel32) or 6 (ff 15 disp32); 0 refused */
	int16_t err;            /* SITE_REFUSED: the -errno returned again */
};

#define SITE_BITS 14
#define NSITES (1u << SITE_BITS)
static struct site sites[NSITES]; /* 384 KiB of .bss, touched as used */
static unsigned nsites;            /* guarded by patch_lock */

static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stopped;      /* patching stopped for the process (one line said why) */
static struct sigaction previous_trap;
static pid_t registered_pid;    /* membarrier registration is per process */
/* Test only (SCOPE_PROFILER_PATCH_TEST_HOLD_US, tests/e2e/patch): keep the
 * int3 in place this long, so that other threads meet it, and count the
 * traps stepped over (printed at exit). */
static long test_hold_us;
static atomic_long test_traps;

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t nop6[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 };

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

static bool is_nop_at(uintptr_t at, unsigned len)
{
	return memcmp((const void *)at, len == 5 ? nop5 : nop6, len) == 0;
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
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(pc + len);
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

/* The 8-byte GOT slot at `slot` holds one of our hooks. */
static bool got_holds_hook(const struct module *m, uintptr_t slot)
{
	if (!(segment_flags(m, slot, 8, NULL, NULL) & PF_R) || (slot & 7))
		return false;
	return is_hook(__atomic_load_n((const uintptr_t *)slot, __ATOMIC_RELAXED));
}

/* A PLT stub at `t` whose GOT slot holds one of our hooks: `ff 25 disp32`
 * (.plt, .plt.got), or with IBT `f3 0f 1e fa` then `f2 ff 25 disp32`
 * (.plt.sec, bnd) or `ff 25 disp32`. */
static bool plt_to_hook(const struct module *m, uintptr_t t)
{
	if (!(segment_flags(m, t, 11, NULL, NULL) & PF_X))
		return false;
	const uint8_t *p = (const uint8_t *)t;
	int32_t disp;
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) {
		p += 4;
		if (p[0] == 0xf2)
			p++;
	}
	if (p[0] != 0xff || p[1] != 0x25)
		return false;
	memcpy(&disp, p + 2, 4);
	return got_holds_hook(m, (uintptr_t)(p + 6) + (intptr_t)disp);
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
		return is_hook(t) || plt_to_hook(m, t) ? 5 : -ENOEXEC;
	}
	if (p[-6] == 0xff && p[-5] == 0x15) { /* call *disp32(%rip): -fno-plt */
		memcpy(&disp, p - 4, 4);
		return got_holds_hook(m, ret + (intptr_t)disp) ? 6 : -ENOEXEC;
	}
	return -ENOEXEC;
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
 * The int3 protocol (the kernel's text_poke_bp): a core decodes either the
 * old call, the int3 (stepped over by on_trap) or the whole NOP, never a
 * mix, since nobody jumps into the middle of the call. Each step is made
 * visible to every core of the process before the next one (membarrier
 * SYNC_CORE: a core-serializing instruction on each).
 */
static int write_nop(struct site *s, uintptr_t at, unsigned len, int prot)
{
	const uint8_t *nop = len == 5 ? nop5 : nop6;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = at & ~(page - 1), hi = (at + len - 1 + page) & ~(page - 1);
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
		int err = errno;
		stop(err == EACCES || err == EPERM
		     ? "the kernel refused to make code writable (W^X policy: SELinux execmod/execmem, "
		       "PaX MPROTECT or a seccomp filter)"
		     : "mprotect of the code failed", err);
		return -err;
	}
	atomic_store_explicit(&s->len, (uint8_t)len, memory_order_relaxed);
	atomic_store_explicit(&s->state, SITE_BUSY, memory_order_release);
	write_byte(at, 0xcc);
	int rc = sync_cores();
	if (test_hold_us) {
		struct timespec hold = { test_hold_us / 1000000, test_hold_us % 1000000 * 1000 };
		nanosleep(&hold, NULL);
	}
	for (unsigned i = 1; i < len; i++)
		write_byte(at + i, nop[i]);
	int rc2 = sync_cores();
	write_byte(at, nop[0]);
	int rc3 = sync_cores();
	if (rc || rc2 || rc3) {
		/* Never seen with a registered process. A core may then still
		 * see the int3 or a mix: the site stays BUSY for good, so that
		 * on_trap steps over any trap there. */
		stop("membarrier failed in the middle of a patch", -(rc ? rc : rc2 ? rc2 : rc3));
	} else {
		atomic_store_explicit(&s->state, SITE_PATCHED, memory_order_release);
	}
	if (mprotect((void *)lo, hi - lo, prot) != 0) {
		stop("restoring the protection of patched code failed", errno);
		return 0; /* the NOP is in place all the same */
	}
	return 0;
}

/* ---- one site ------------------------------------------------------------ */

struct request {
	uintptr_t ret;
	int rc;
};

static void refuse(struct site *s, uintptr_t ret, int err)
{
	s->err = (int16_t)err;
	atomic_store_explicit(&s->code, code_before(ret), memory_order_relaxed);
	atomic_store_explicit(&s->len, 0, memory_order_relaxed);
	atomic_store_explicit(&s->state, SITE_REFUSED, memory_order_release);
}

/* In the module that holds the site, under the loader's lock (no dlclose
 * can unmap it meanwhile) and patch_lock. */
static int patch_in_module(const struct module *m, uintptr_t ret)
{
	unsigned flags = segment_flags(m, ret - 6, 6, NULL, NULL);
	if (!(flags & PF_X))
		return -EFAULT; /* not code, or the first bytes of a segment */
	struct site *s = site_get(ret);
	if (!s) {
		stop("too many call sites", 0);
		return -ENOSPC;
	}
	unsigned st = atomic_load_explicit(&s->state, memory_order_relaxed);
	if (st == SITE_PATCHED && is_nop_at(ret - s->len, s->len))
		return 0;
	if (st == SITE_REFUSED && atomic_load_explicit(&s->code, memory_order_relaxed) == code_before(ret))
		return s->err;
	int len = decode_call(m, ret);
	if (len < 0) {
		refuse(s, ret, len);
		return len;
	}
	int rc = can_patch_now();
	if (rc < 0)
		return rc;
	int prot = ((flags & PF_R) ? PROT_READ : 0) | PROT_EXEC | ((flags & PF_W) ? PROT_WRITE : 0);
	rc = write_nop(s, ret - (unsigned)len, (unsigned)len, prot);
	if (rc < 0)
		refuse(s, ret, rc);
	else
		atomic_store_explicit(&s->code, code_before(ret), memory_order_relaxed);
	return rc;
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct request *rq = data;
	struct module m = { info };
	if (!segment_flags(&m, rq->ret - 1, 1, NULL, NULL))
		return 0;
	rq->rc = patch_in_module(&m, rq->ret);
	return 1;
}

/* Without a lock: the site was decided already and nothing changed. Only
 * when ret - 6 is in ret - 1's page (mapped: the caller returns there). */
static bool decided(uintptr_t ret, int *ret_rc)
{
	struct site *s = site_find(ret);
	if (!s || (ret & 4095) < 6)
		return false;
	unsigned st = atomic_load_explicit(&s->state, memory_order_acquire);
	if (st == SITE_PATCHED) {
		unsigned len = atomic_load_explicit(&s->len, memory_order_relaxed);
		if (!is_nop_at(ret - len, len))
			return false; /* another module at the same address */
		*ret_rc = 0;
		return true;
	}
	if (st == SITE_REFUSED && atomic_load_explicit(&s->code, memory_order_relaxed) == code_before(ret)) {
		*ret_rc = s->err;
		return true;
	}
	return false;
}

int sp_patch_site(void *ret_addr)
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
	struct request rq = { .ret = ret, .rc = -ENOENT };
	if (!atomic_load_explicit(&stopped, memory_order_relaxed))
		dl_iterate_phdr(module_cb, &rq); /* no module holds it: -ENOENT, retried */
	pthread_mutex_unlock(&patch_lock);
	pthread_setcancelstate(cancel, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return rq.rc;
}

/* ---- setup and fork ------------------------------------------------------ */

__attribute__((destructor)) static void test_report(void)
{
	if (test_hold_us && sp_patch_enabled && getpid() == registered_pid)
		/* a warning, so QUIET does not hide it: the e2e test reads it */
		sp_log(SP_LOG_WARN, "patch", "patch test: %ld trap(s) stepped over",
		    atomic_load_explicit(&test_traps, memory_order_relaxed));
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
	struct sigaction sa = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK };
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
	sp_log(SP_LOG_DEBUG, "patch", "call-site patching on (membarrier registered, SIGTRAP handler installed)");
}

#endif /* __x86_64__ */
