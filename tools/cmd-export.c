/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler export (placeholder while the command is being written).
 */
#include <stdio.h>

#include "cli-common.h"
#include "commands.h"
#include "export.h"
#include "export-region-stats.h"

int cmd_export(int argc, char **argv)
{
	/* chrome-trace, speedscope, folded, json, plot-data: tools/export-*.c */
	int rc = argc > 1 ? export_formats_run(argc - 1, argv + 1) : -1;

	if (rc < 0 && argc > 1) /* region-statistics: export-region-stats.c */
		rc = export_region_stats_run(argc - 1, argv + 1);
	if (rc >= 0)
		return rc;
	fprintf(stderr, "scope-profiler export: not implemented yet\n");
	return EXIT_USAGE;
}
