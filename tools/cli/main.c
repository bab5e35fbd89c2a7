/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler: the command-line front end. Dispatches to one function per
 * subcommand (tools/cmd-<name>.c) through the table below.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli-common.h"
#include "cli-sigbus.h"
#include "commands.h"
#include "sp-config.h"

/*
 * The command table. To add a command X:
 *   1. write cmd-X.c in the tools/ folder of its concern, with `int
 *      cmd_X(int argc, char **argv)` (argv[0] is the command name; parse
 *      with getopt_long and CLI_COMMON_OPTIONS, return EXIT_OK /
 *      EXIT_CHECK_FAILED / EXIT_USAGE), and add it to that folder's
 *      meson.build;
 *   2. declare it in tools/cli/commands.h;
 *   3. add one line here.
 */
static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "summary", cmd_summary, "per-region statistics table (or --json)" },
	{ "tree", cmd_tree, "reconstructed call stack of one rank" },
	{ "events", cmd_events, "one line per recorded call (table, csv, json)" },
	{ "inspect", cmd_inspect, "metadata and region table of profiles" },
	{ "diff", cmd_diff, "compare one metric per region between two runs" },
	{ "check", cmd_check, "regression gate: exit 1 when a region got slower" },
	{ "scaling", cmd_scaling, "speedup, efficiency and weak scaling over runs" },
	{ "export", cmd_export, "chrome-trace, speedscope, folded, json, plot-data, region-statistics" },
	{ "tui", cmd_tui, "interactive terminal browser (ncurses)" },
	{ "run", cmd_run, "run a program with the profiler preloaded" },
	{ "plot", cmd_plot, "SVG charts: gantt, flame, durations, imbalance, speedup" },
	{ "report", cmd_report, "self-contained HTML report with charts" },
	{ "comm", cmd_comm, "MPI bytes per function and rank x rank matrix" },
	{ "merge", cmd_merge, "combine per-rank profiles and spill files into one" },
	{ "recover", cmd_recover, "convert the spill files of a killed run into a profile" },
	{ "line-profile", cmd_line_profile, "time per source line: MPI call sites, regions" },
};

static void print_help(FILE *f)
{
	fprintf(f, "usage: scope-profiler [--version] [--help] <command> [<args>]\n\n"
		   "Analyse scope-profiler profiles (HDF5, JSON or .spt).\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nRun 'scope-profiler <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
	const char *name;

	if (argc < 2) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	cli_catch_sigbus(); /* profiles are read with mapped columns */
	name = argv[1];
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("scope-profiler %s\n", SP_VERSION);
		return EXIT_OK;
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
	    strcmp(name, "help") == 0) {
		print_help(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0) {
			/* Commands report bad options themselves, in one line. */
			opterr = 0;
			cli_command_argv = argv + 1;
			return commands[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "scope-profiler: invalid command '%s' (choose from ", name);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(stderr, "%s%s", i ? ", " : "", commands[i].name);
	fprintf(stderr, ")\n");
	return EXIT_USAGE;
}
