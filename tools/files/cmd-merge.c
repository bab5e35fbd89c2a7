/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler merge: combine per-rank profiles (and spill files) into one
 * file. Loading, writing and the command line are shared with recover
 * (rank-inputs.c).
 */
#include "commands.h"
#include "rank-inputs.h"

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler merge [options] FILE...\n"
	"\n"
	"Combine the per-rank files of one run (<output>.rank<NNNNN>, written when\n"
	"MPI_Finalize was not reached) and spill files into one schema-2 file:\n"
	"region names unified, one row per (rank, region), mpi_size = highest\n"
	"rank + 1. A spill file is converted as by recover. Metadata partial=1\n"
	"when a rank ended on a signal or ranks are missing.\n"
	"\n"
	"options:\n"
	"  -o, --output OUT      the file to write (required)\n"
	"  --json                print what was written as JSON\n"
	"  -h, --help            print this help and exit\n";

int cmd_merge(int argc, char **argv)
{
	return rank_inputs_main(argc, argv, "merge", help);
}
