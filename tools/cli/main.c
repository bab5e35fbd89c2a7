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

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The help format of docs/CLI.md: tools/cli/gen-docs.py reads it. */
static void print_help(FILE *f)
{
	fprintf(f, "usage: scope-profiler [--version] [--help] COMMAND [ARGS...]\n\n"
		   "Run a program under the profiler and analyse its profiles (HDF5, JSON\n"
		   "or .spt).\n\n"
		   "options:\n"
		   "  -h, --help            print this help and exit\n"
		   "  -V, --version         print the version and exit\n\n"
		   "commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-20s  %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'scope-profiler help COMMAND' or 'scope-profiler COMMAND --help' prints\n"
		   "the options of a command. Exit status: 0 success, 1 a check failed\n"
		   "(check), 2 usage or input error; run exits as its program.\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

static int run_command(const struct command *cmd, int argc, char **argv)
{
	/* Commands report bad options themselves, in one line. */
	opterr = 0;
	cli_command_argv = argv;
	return cmd->fn(argc, argv);
}

/* "invalid command 'sumary'; did you mean 'summary'?" */
static int unknown_command(const char *name)
{
	const char *names[N_COMMANDS];
	const char *guess;

	for (size_t i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	guess = cli_suggest(name, names, N_COMMANDS);
	fprintf(stderr, "scope-profiler: invalid command '%s'", name);
	if (guess)
		fprintf(stderr, "; did you mean '%s'?\n", guess);
	else {
		fprintf(stderr, " (choose from ");
		for (size_t i = 0; i < N_COMMANDS; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
		fprintf(stderr, ")\n");
	}
	return EXIT_USAGE;
}

/* `help CMD`: the same as `CMD --help`. */
static int help_command(int argc, char **argv)
{
	const struct command *cmd;
	char *args[3];

	if (argc < 3) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (!(cmd = find_command(argv[2])))
		return unknown_command(argv[2]);
	args[0] = argv[2];
	args[1] = "--help";
	args[2] = NULL;
	return run_command(cmd, 2, args);
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
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (strcmp(name, "help") == 0)
		return help_command(argc, argv);
	if (find_command(name))
		return run_command(find_command(name), argc - 1, argv + 1);
	if (name[0] == '-') {
		fprintf(stderr, "scope-profiler: unrecognized option '%s' (see 'scope-profiler "
			"--help')\n", name);
		return EXIT_USAGE;
	}
	return unknown_command(name);
}
