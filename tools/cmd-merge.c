/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler merge: combine per-rank profiles (and spill files) into one file.
 * Loading and writing are shared with the other of merge/recover
 * (rank-inputs.c); this file is the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "commands.h"
#include "rank-inputs.h"

static const char usage[] = "FILE... -o OUT [--json]";

int cmd_merge(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	struct cli_common c;
	const char *out = NULL;
	int opt, rc = EXIT_OK;

	if (cli_common_init(&c, "merge", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == EXIT_OK && (opt = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
		if (opt == 'o') {
			out = optarg;
			continue;
		}
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);
		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0)
			rc = cli_usage_error(&c, "invalid option");
	}
	if (rc == EXIT_OK && c.help) {
		printf("usage: scope-profiler merge %s\n\n"
		       "Combine the per-rank files of one run (<output>.rank<NNNNN>, written when\\n"
		       "MPI_Finalize was not reached) and spill files into one schema-2 file:\\n"
		       "region names unified, one row per (rank, region), mpi_size = highest\\n"
		       "rank + 1. A spill file is converted as by recover. Metadata partial=1\\n"
		       "when a rank ended on a signal or ranks are missing.\\n", usage);
	} else if (rc == EXIT_OK) {
		if (cli_collect_files(&c, argc, argv, optind) < 0 || c.n_files == 0)
			rc = cli_usage_error(&c, "no input file given");
		else if (!out)
			rc = cli_usage_error(&c, "no output file given (-o OUT)");
	}
	struct rank_inputs in = { 0 };
	if (rc == EXIT_OK && !c.help)
		rc = rank_inputs_load(&c, &in);
	if (rc == EXIT_OK && !c.help)
		rc = rank_inputs_write(&c, &in, out, false);
	if (rc == EXIT_OK && !c.help) {
		uint64_t events = 0, unclosed = 0;
		for (size_t i = 0; i < in.n; i++) {
			events += in.v[i].s.nevents;
			unclosed += in.v[i].unclosed;
		}
		if (c.json)
			printf("{\"output\": \"%s\", \"ranks\": %zu, \"events\": %llu, "
			       "\"unclosed\": %llu}\n", out, in.n, (unsigned long long)events,
			       (unsigned long long)unclosed);
		else
			printf("wrote %s (%zu ranks, %llu events%s)\n", out, in.n,
			       (unsigned long long)events,
			       unclosed ? "; calls open at the kill are not included" : "");
	}
	rank_inputs_free(&in);
	cli_common_fini(&c);
	return rc;
}
