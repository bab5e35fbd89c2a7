/* SPDX-License-Identifier: MIT */
/*
 * A serial program with its own SIGTERM handler, installed after the
 * profiler's (in main): usage: resil-handler K exit|reraise|return|_exit
 * Regions: "outer" (one call around everything), "iter" (K calls), then
 * inside "outer" the program sends itself SIGTERM, and its handler
 *   exit:    calls _exit(3) (installed with sigaction, SA_SIGINFO)
 *   reraise: puts back SIG_DFL and raises again (installed with signal())
 *   return:  returns; the program does K more "iter" calls and exits 0
 *   sigset:  re-raises, installed with sigset() (System V)
 *   sysv:    calls _exit(3), installed with sysv_signal() (one-shot)
 * or, with _exit, there is no signal: the program calls _exit(5);
 * with vfork, no handler of its own: a vfork child fails to exec and calls
 * _exit(127) (sharing the parent's memory), then the SIGTERM ends the
 * program by default (143) and the parent's dump must still run.
 * Prints "done K" on stdout first, flushed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

static volatile sig_atomic_t got;

static void on_term_exit(int signo, siginfo_t *info, void *uctx)
{
	(void)signo;
	(void)info;
	(void)uctx;
	_exit(3);
}

static void on_term_exit_plain(int signo)
{
	(void)signo;
	_exit(3);
}

static void on_term_reraise(int signo)
{
	signal(signo, SIG_DFL);
	raise(signo);
}

static void on_term_return(int signo)
{
	got = signo;
}

static void iters(long k)
{
	for (long i = 0; i < k; i++) {
		sp_begin_name("iter");
		sp_end_name("iter");
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long k = atol(argv[1]);
	const char *how = argv[2];
	if (strcmp(how, "exit") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_term_exit;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(SIGTERM, &sa, NULL) < 0)
			return 2;
	} else if (strcmp(how, "reraise") == 0) {
		if (signal(SIGTERM, on_term_reraise) == SIG_ERR)
			return 2;
	} else if (strcmp(how, "return") == 0) {
		if (signal(SIGTERM, on_term_return) == SIG_ERR)
			return 2;
	} else if (strcmp(how, "sigset") == 0) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* what is tested */
		if (sigset(SIGTERM, on_term_reraise) == SIG_ERR)
			return 2;
#pragma GCC diagnostic pop
	} else if (strcmp(how, "sysv") == 0) {
		if (sysv_signal(SIGTERM, on_term_exit_plain) == SIG_ERR)
			return 2;
	}
	/* The application reads back its own handler, not the profiler's. */
	struct sigaction now;
	bool own = strcmp(how, "_exit") != 0 && strcmp(how, "vfork") != 0;
	if (own && (sigaction(SIGTERM, NULL, &now) < 0 ||
	    (now.sa_flags & SA_SIGINFO ? (void *)now.sa_sigaction : (void *)now.sa_handler) ==
		    (void *)SIG_DFL)) {
		fprintf(stderr, "sigaction does not return the application's handler\n");
		return 2;
	}
	sp_begin_name("outer");
	iters(k);
	printf("done %ld\n", k);
	fflush(stdout);
	if (strcmp(how, "_exit") == 0)
		_exit(5);
	if (strcmp(how, "vfork") == 0) {
		pid_t pid = vfork();
		if (pid == 0) {
			execl("/nonexistent/scope-profiler-test", "x", (char *)NULL);
			_exit(127);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 127)
			return 6;
	}
	kill(getpid(), SIGTERM);
	if (!got)
		return 4; /* exit and reraise never get here */
	iters(k);
	sp_end_name("outer");
	return 0;
}
