/* SPDX-License-Identifier: MIT */
/*
 * Fatal signals (the walltime SIGTERM/SIGXCPU, Ctrl-C, SIGHUP, crashes):
 * the handler dumps every thread's events to the spill file once, with
 * pwrite(2) only (async-signal-safe, no HDF5, no locks), then hands the
 * signal to what the application asked for (its own handler, or the
 * default, re-raised), so the process ends exactly as it would have.
 * sigaction()/signal() are interposed so that a handler the application
 * installs after us is chained behind the dump instead of replacing it, and
 * _exit() dumps too (Open MPI's fatal-error abort ends that way).
 * `scope-profiler recover` turns the spill file into a profile.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "lifecycle.h"
#include "spill.h"

static const int caught[] = { SIGTERM, SIGINT, SIGXCPU, SIGHUP, SIGSEGV, SIGBUS, SIGFPE,
			      SIGILL, SIGABRT };
#define NCAUGHT (sizeof caught / sizeof *caught)
/* What the application wants after the dump: the disposition we replaced,
 * or the one it set since through sigaction()/signal(). While installed[i],
 * the kernel's disposition is ours and previous[i] is the application's.
 * previous[i] is written without a lock: an application that changes its
 * handler while the same signal is being handled on another thread may
 * have either one run (the kernel gives no stronger promise either). */
static struct sigaction previous[NCAUGHT];
static atomic_bool installed[NCAUGHT];
static bool armed[NCAUGHT]; /* installed once: a handler set after SIG_IGN takes ours back */
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
/* While a finalize writes the file, a termination request waits for it
 * (Extrae's deferred signals): the write is nearly done, and killing it
 * would lose the file. The events are dumped to the spill at once, so a
 * SIGKILL that follows still leaves them. */
static atomic_int deferring, pending;
/* The dump runs once per process: 0 not yet, 1 running (on thread
 * dump_tid), 2 done. A second signal on another thread waits for it. */
static atomic_int dump_state, dump_tid;

/* After its dump for a termination signal, an MPI rank waits this long
 * before it ends. Open MPI's mpirun (4.1) sends SIGKILL to every rank still
 * alive as soon as one rank has ended after its SIGTERM (a SIGCHLD cuts its
 * 1 s grace short), about 10 ms later: on a loaded node a rank that was not
 * scheduled yet was killed before its handler ran (an empty spill), or in
 * the middle of its dump (no trailer). Waiting gives every rank of the node
 * its turn; a SIGKILL during the wait loses nothing. */
#define LINGER_NS 500000000L

static bool deferrable(int signo)
{
	return signo == SIGTERM || signo == SIGINT || signo == SIGXCPU || signo == SIGHUP;
}

static int index_of(int signo)
{
	for (size_t i = 0; i < NCAUGHT; i++)
		if (caught[i] == signo)
			return (int)i;
	return -1;
}

/* libc's sigaction, looked up once outside any handler (install time, or
 * the application's first call). */
static bool resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))
			dlsym(RTLD_NEXT, "sigaction");
	return real_sigaction != NULL;
}

static void nap(long ns)
{
	struct timespec t = { ns / 1000000000L, ns % 1000000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* Returns true when this call wrote the dump (and it is complete). */
static bool dump_once(int signo)
{
	int none = 0, self = (int)syscall(SYS_gettid);
	if (atomic_compare_exchange_strong(&dump_state, &none, 1)) {
		atomic_store(&dump_tid, self);
		int ret = sp_spill_dump(signo);
		atomic_store(&dump_state, 2);
		return ret == 0;
	}
	/* Another thread is dumping (the signal was sent twice, or a thread
	 * _exits meanwhile): ending the process now would cut its dump short.
	 * Wait for it, at most 10 s. */
	for (int i = 0; i < 10000 && atomic_load(&dump_state) == 1 && atomic_load(&dump_tid) != self;
	     i++)
		nap(1000000);
	return false;
}

/* sa_handler and sa_sigaction share their storage (SIG_DFL is NULL in both). */
static bool is_handler(const struct sigaction *a)
{
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

/* The application's handler runs as the kernel would have run it: with
 * the mask of the interrupted code plus its sa_mask (and the signal). */
static bool chain_to_handler(int signo, siginfo_t *info, void *uctx, int i)
{
	struct sigaction p = previous[i];
	if (!is_handler(&p))
		return false;
	if (p.sa_flags & SA_RESETHAND) {
		memset(&previous[i], 0, sizeof previous[i]);
		previous[i].sa_handler = SIG_DFL;
	}
	sigset_t m = ((ucontext_t *)uctx)->uc_sigmask, all;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&p.sa_mask, s) == 1)
			sigaddset(&m, s);
	if (!(p.sa_flags & SA_NODEFER))
		sigaddset(&m, signo);
	sigprocmask(SIG_SETMASK, &m, &all);
	if (p.sa_flags & SA_SIGINFO)
		p.sa_sigaction(signo, info, uctx);
	else
		p.sa_handler(signo);
	sigprocmask(SIG_SETMASK, &all, NULL);
	return true;
}

static void on_signal(int signo, siginfo_t *info, void *uctx)
{
	int e = errno, i = index_of(signo);
	if (deferrable(signo) && atomic_load(&deferring)) {
		dump_once(signo);
		atomic_store(&pending, signo);
		errno = e;
		return;
	}
	if (dump_once(signo) && deferrable(signo) && sp_lifecycle_mpi_owned)
		nap(LINGER_NS);
	if (i >= 0 && !chain_to_handler(signo, info, uctx, i)) {
		/* The default: put it back and re-raise. The signal is blocked
		 * in here, so it is delivered when this returns; a synchronous
		 * fault re-faults into the same disposition. */
		real_sigaction(signo, &previous[i], NULL);
		atomic_store(&installed[i], false);
		raise(signo);
	}
	errno = e;
}

void sp_signals_defer(bool on)
{
	atomic_store(&deferring, on);
	int signo = on ? 0 : atomic_exchange(&pending, 0);
	if (signo)
		raise(signo); /* the file is written; now end as asked */
}

/* Ours in front of signal i; prev is what runs after the dump. */
static void install_one(size_t i, const struct sigaction *prev)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask); /* no other caught signal interrupts the dump */
	previous[i] = *prev;
	if (real_sigaction(caught[i], &sa, NULL) == 0)
		atomic_store(&installed[i], armed[i] = true);
}

void sp_signals_install(void)
{
	if (!resolve())
		return;
	for (size_t i = 0; i < NCAUGHT; i++) {
		struct sigaction old;
		if (atomic_load(&installed[i]) || real_sigaction(caught[i], NULL, &old) < 0)
			continue;
		/* An ignored signal (nohup) stays ignored; an application that
		 * installed its handler before us keeps it, after the dump. */
		if (old.sa_handler == SIG_IGN)
			continue;
		install_one(i, &old);
	}
}

/* The application's sigaction() for a signal we hold: it becomes what runs
 * after the dump, and it reads back what it set. Ignoring the signal (its
 * choice: the process is not to end) removes ours. */
static int intercept(int signo, const struct sigaction *act, struct sigaction *old)
{
	int i = index_of(signo);
	if (!resolve()) {
		errno = ENOSYS;
		return -1;
	}
	if (i >= 0 && !atomic_load(&installed[i]) && armed[i] && act && is_handler(act)) {
		/* ignored for a while, handled again: ours goes back in front */
		struct sigaction was;
		if (real_sigaction(signo, NULL, &was) < 0)
			return -1;
		install_one((size_t)i, act);
		if (old)
			*old = was;
		return 0;
	}
	if (i < 0 || !atomic_load(&installed[i]))
		return real_sigaction(signo, act, old);
	struct sigaction was = previous[i];
	if (act && act->sa_handler == SIG_IGN) {
		if (real_sigaction(signo, act, NULL) < 0)
			return -1;
		atomic_store(&installed[i], false);
	} else if (act) {
		previous[i] = *act;
	}
	if (old)
		*old = was;
	return 0;
}

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

SP_EXPORT int sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
	return intercept(signo, act, old);
}

/* glibc's signal() calls its sigaction internally, past the one above.
 * Same semantics as glibc's (BSD: restart, the signal blocked meanwhile). */
SP_EXPORT sighandler_t signal(int signo, sighandler_t handler)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (signo > 0 && signo < NSIG)
		sigaddset(&sa.sa_mask, signo);
	if (intercept(signo, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* The other ways glibc offers to set a handler (each calls its sigaction
 * internally, past ours), with glibc's semantics: BSD's is signal(); System
 * V's is one-shot (the handler resets to the default when it runs), not
 * blocked while it runs and not restarting; sigset() (System V) also
 * unblocks the signal, and SIG_HOLD blocks it instead. */
SP_EXPORT sighandler_t bsd_signal(int signo, sighandler_t handler)
{
	return signal(signo, handler);
}

SP_EXPORT sighandler_t sysv_signal(int signo, sighandler_t handler)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (intercept(signo, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

SP_EXPORT __attribute__((alias("sysv_signal"))) sighandler_t __sysv_signal(int signo,
									  sighandler_t handler);

SP_EXPORT sighandler_t sigset(int signo, sighandler_t handler)
{
	sigset_t one, was;
	struct sigaction sa, old;
	if (signo <= 0 || signo >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&one);
	sigaddset(&one, signo);
	if (handler == SIG_HOLD) {
		if (intercept(signo, NULL, &old) < 0 || sigprocmask(SIG_BLOCK, &one, &was) < 0)
			return SIG_ERR;
		return sigismember(&was, signo) ? SIG_HOLD : old.sa_handler;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (intercept(signo, &sa, &old) < 0 || sigprocmask(SIG_UNBLOCK, &one, &was) < 0)
		return SIG_ERR;
	return sigismember(&was, signo) ? SIG_HOLD : old.sa_handler;
}

/* A process that ends here never runs the destructor that writes its file:
 * Open MPI's abort on a fatal MPI error (MPI_ERRORS_ARE_FATAL), an
 * application handler that calls _exit(). What was recorded goes to the
 * spill file (trailer signal 0), like a failed finalize write. */
SP_EXPORT __attribute__((noreturn)) void _exit(int status)
{
	/* Not in a vfork child (it shares our memory: marking the dump done
	 * there would stop the parent's own dump later) nor a forked copy.
	 * A process that recorded nothing (the shell of system(), which
	 * _exits after its child) leaves no spill file behind. */
	if (sp_config.signals && sp_lifecycle_state() == SP_STATE_RECORDING && sp_spill_owned()) {
		if (sp_region_count() == 0 && sp_spill_events_total() == 0)
			sp_spill_remove();
		else
			dump_once(0);
	}
	for (;;)
		syscall(SYS_exit_group, status);
}

SP_EXPORT __attribute__((noreturn, alias("_exit"))) void _Exit(int status);
