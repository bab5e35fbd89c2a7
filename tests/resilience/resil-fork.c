/* SPDX-License-Identifier: MIT */
/*
 * fork and exec. usage: resil-fork fork|exec|exec-child
 *   fork: "before" once, fork; the child records "in_child" 3 times and
 *         exits (SCOPE_PROFILER_FORK decides whether it writes a file);
 *         the parent waits, then records "after" once.
 *   exec: the child execs this program as exec-child with
 *         SCOPE_PROFILER_OUTPUT=<output>.exec.h5: it records "in_exec"
 *         twice into its own, fresh file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "exec-child") == 0) {
		for (int i = 0; i < 2; i++) {
			sp_begin_name("in_exec");
			sp_end_name("in_exec");
		}
		return 0;
	}
	sp_begin_name("before");
	sp_end_name("before");
	pid_t pid = fork();
	if (pid == 0) {
		if (strcmp(argv[1], "exec") == 0) {
			char out[4096];
			snprintf(out, sizeof out, "%s.exec.h5", getenv("SCOPE_PROFILER_OUTPUT"));
			setenv("SCOPE_PROFILER_OUTPUT", out, 1);
			execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
			_exit(127);
		}
		for (int i = 0; i < 3; i++) {
			sp_begin_name("in_child");
			sp_end_name("in_child");
		}
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("child %d\n", (int)pid);
	sp_begin_name("after");
	sp_end_name("after");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
