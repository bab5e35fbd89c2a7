/* SPDX-License-Identifier: MIT */
/*
 * SIGBUS from a mapped profile that shrank under us: report and exit 2
 * (the status of every other unreadable input). Other SIGBUS causes keep
 * the default action, so real bugs still dump core.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli-sigbus.h"

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
	static const char msg[] =
		"scope-profiler: error: an input file was truncated or replaced "
		"while it was being read (SIGBUS on its mapped data); rerun once "
		"the file is complete\n";

	(void)ctx;
	if (info && info->si_code == BUS_ADRERR) {
		ssize_t n = write(STDERR_FILENO, msg, sizeof(msg) - 1);

		(void)n;
		_exit(2);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_catch_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}
