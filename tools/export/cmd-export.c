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

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
const char export_help[] =
	"usage: scope-profiler export [options] FORMAT FILE...\n"
	"\n"
	"Convert profiles. FORMAT is chrome-trace (Chrome/Perfetto trace),\n"
	"speedscope, folded (flame graph stacks), json (JSON profile v1, read back\n"
	"by every command), plot-data (the data behind each chart) or\n"
	"region-statistics (per-region duration statistics).\n"
	"\n"
	"options:\n"
	"  -o, --output PATH     the file (or directory, for several inputs or\n"
	"                        plot-data) to write; - for stdout (required)\n"
	"  --min-duration DUR    traces, folded: leave out calls shorter than DUR\n"
	"                        (default: 0)\n"
	"  --start TIME          traces, folded: keep what ends after TIME from the\n"
	"                        first region entry (default: the start)\n"
	"  --end TIME            traces, folded: keep what starts before TIME\n"
	"                        (default: the end)\n"
	"  --merge-ranks         folded: one stack set for all ranks\n"
	"  --format FMT          plot-data: csv or json (default: csv)\n"
	"  --plots LIST          plot-data: the chart kinds (default: all)\n"
	"  --metrics LIST        plot-data: total, avg, min, max (default: all four)\n"
	"  --imbalance-metric M  plot-data: the imbalance statistic (default: total)\n"
	"  --x FIELD             plot-data: scaling x axis (default: num_ranks)\n"
	"  --cmap PALETTE        plot-data: colour palette (default: tab20)\n"
	"  --json                print what was written as JSON\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"Durations (DUR, TIME) take a unit, ns, us, ms or s; a bare number is\n"
	"seconds: --min-duration 1us, --start 2 --end 2.5s. json is lossless and\n"
	"refuses --min-duration, --start and --end.\n";

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
		fputs(export_help, stdout);
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
