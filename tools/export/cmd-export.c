/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler export FORMAT FILES... -o PATH: dispatches to the format
 * writers (chrome-trace, speedscope, folded, json, plot-data in
 * tools/export-*.c; region-statistics in export-region-stats.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli-common.h"
#include "commands.h"
#include "export-region-stats.h"
#include "export.h"

int cmd_export(int argc, char **argv)
{
	int rc = argc > 1 ? export_formats_run(argc - 1, argv + 1) : -1;

	if (rc < 0 && argc > 1)
		rc = export_region_stats_run(argc - 1, argv + 1);
	if (rc >= 0)
		return rc;
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: scope-profiler export FORMAT FILE... -o PATH [options]\n"
		       "formats: %s, region-statistics\n"
		       "Run 'scope-profiler export FORMAT --help' for the options of a format.\n",
		       export_formats_names());
		return EXIT_OK;
	}
	if (argc > 1 && argv[1][0] == '-')
		fprintf(stderr, "scope-profiler export: the FORMAT comes first, before '%s' "
			"(choose from %s, region-statistics)\n", argv[1], export_formats_names());
	else if (argc > 1) {
		static const char *const names[] = { "chrome-trace", "speedscope", "folded", "json",
						     "plot-data", "region-statistics" };
		const char *guess = cli_suggest(argv[1], names, sizeof(names) / sizeof(names[0]));

		fprintf(stderr, "scope-profiler export: '%s' is not a format", argv[1]);
		if (guess)
			fprintf(stderr, "; did you mean '%s'?", guess);
		fprintf(stderr, " (choose from %s, region-statistics)\n", export_formats_names());
	}
	else
		fprintf(stderr, "scope-profiler export: missing FORMAT (choose from %s, "
			"region-statistics)\n", export_formats_names());
	return EXIT_USAGE;
}
