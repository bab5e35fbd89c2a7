/* SPDX-License-Identifier: MIT */
/*
 * Fatal signals (the walltime SIGTERM/SIGXCPU, Ctrl-C, SIGHUP, crashes):
 * the handler dumps every thread's events to the spill file with pwrite(2)
 * only (async-signal-safe, no HDF5, no locks), puts back the disposition it
 * replaced and re-raises, so the process ends exactly as it would have.
 * `scope-profiler recover` turns the spill file into a profile.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "lifecycle.h"
#include "spill.h"

static const int caught[] = { SIGTERM, SIGINT, SIGXCPU, SIGHUP, SIGSEGV, SIGBUS, SIGFPE,
			      SIGILL, SIGABRT };
#define NCAUGHT (sizeof caught / sizeof *caught)
static struct sigaction previous[NCAUGHT];
static bool installed[NCAUGHT];
/* While a finalize writes the file, a termination request waits for it
 * (Extrae's deferred signals): the write is nearly done, and killing it
 * would lose the file and leave only the spill. */
static atomic_int deferring, pending;

static bool deferrable(int signo)
{
	return signo == SIGTERM || signo == SIGINT || signo == SIGXCPU || signo == SIGHUP;
}

static void on_signal(int signo, siginfo_t *info, void *uctx)
{
	(void)info;
	(void)uctx;
	if (deferrable(signo) && atomic_load(&deferring)) {
		atomic_store(&pending, signo);
		return;
	}
	sp_spill_dump(signo);
	for (size_t i = 0; i < NCAUGHT; i++) {
		if (caught[i] != signo)
			continue;
		/* Whatever was there before (the default, or the application's
		 * own handler) handles the re-raised signal. The signal is
		 * blocked in here, so it is delivered when this returns; a
		 * synchronous fault re-faults into the same disposition. */
		sigaction(signo, &previous[i], NULL);
		installed[i] = false;
	}
	raise(signo);
}

void sp_signals_defer(bool on)
{
	atomic_store(&deferring, on);
	int signo = on ? 0 : atomic_exchange(&pending, 0);
	if (signo)
		raise(signo); /* the file is written; now end as asked */
}

void sp_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask); /* no other caught signal interrupts the dump */
	for (size_t i = 0; i < NCAUGHT; i++) {
		struct sigaction old;
		if (installed[i] || sigaction(caught[i], NULL, &old) < 0)
			continue;
		/* An ignored signal (nohup) stays ignored; an application that
		 * installed its handler before us keeps it in charge, after the dump. */
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(caught[i], &sa, &previous[i]) == 0)
			installed[i] = true;
	}
}
