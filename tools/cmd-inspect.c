/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler inspect (placeholder while the command is being written).
 */
#include <stdio.h>

#include "cli-common.h"
#include "commands.h"

int cmd_inspect(int argc, char **argv)
{
	fprintf(stderr, "scope-profiler inspect: not implemented yet\n");
	return EXIT_USAGE;
}
