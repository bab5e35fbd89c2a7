/* SPDX-License-Identifier: MIT */
/*
 * A forked child that exits normally must not overwrite the parent's file
 * with its copy of the parent's buffers. Records "before_fork" once and
 * "after_fork" once in the parent; the child records "in_child" and exits.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(void)
{
	sp_begin_name("before_fork");
	sp_end_name("before_fork");
	pid_t pid = fork();
	if (pid == 0) {
		sp_begin_name("in_child");
		sp_end_name("in_child");
		exit(0); /* runs the library destructor in the child */
	}
	waitpid(pid, NULL, 0);
	/* The child wrote nothing: no file exists before the parent's exit. */
	const char *out = getenv("SCOPE_PROFILER_OUTPUT");
	if (out && access(out, F_OK) == 0)
		return 3;
	usleep(1000);
	sp_begin_name("after_fork");
	sp_end_name("after_fork");
	return 0;
}
