/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler tree (placeholder while the command is being written).
 */
#include <stdio.h>

#include "cli-common.h"
#include "commands.h"

int cmd_tree(int argc, char **argv)
{
	fprintf(stderr, "scope-profiler tree: not implemented yet\n");
	return EXIT_USAGE;
}
