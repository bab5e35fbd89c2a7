/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler events (placeholder while the command is being written).
 */
#include <stdio.h>

#include "cli-common.h"
#include "commands.h"

int cmd_events(int argc, char **argv)
{
	fprintf(stderr, "scope-profiler events: not implemented yet\n");
	return EXIT_USAGE;
}
