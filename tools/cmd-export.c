/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler export (placeholder while the command is being written).
 */
#include <stdio.h>

#include "cli-common.h"
#include "commands.h"

int cmd_export(int argc, char **argv)
{
	fprintf(stderr, "scope-profiler export: not implemented yet\n");
	return EXIT_USAGE;
}
