/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler export FORMAT FILES... -o PATH: dispatches to the format
 * writers (chrome-trace, speedscope, folded, json, plot-data in
 * tools/export-*.c; region-statistics in export-region-stats.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli-common.h"
#include "cli-progress.h"
#include "commands.h"
#include "export-region-stats.h"
#include "export.h"

int cmd_export(int argc, char **argv)
{
	struct cli_progress *progress = cli_progress_begin("export", 0);
	int rc = argc > 1 ? export_formats_run(argc - 1, argv + 1) : -1;

	if (rc < 0 && argc > 1)
		rc = export_region_stats_run(argc - 1, argv + 1);
	cli_progress_stop(progress);
	if (rc >= 0)
		return rc;
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: scope-profiler export FORMAT FILE... -o PATH [options]\n"
		       "formats: %s, region-statistics\n"
		       "Run 'scope-profiler export FORMAT --help' for the options of a format.\n",
		       export_formats_names());
		return EXIT_OK;
	}
	if (argc > 1)
		fprintf(stderr, "scope-profiler export: invalid format '%s' (choose from %s, "
			"region-statistics)\n", argv[1], export_formats_names());
	else
		fprintf(stderr, "scope-profiler export: missing FORMAT (choose from %s, "
			"region-statistics)\n", export_formats_names());
	return EXIT_USAGE;
}
