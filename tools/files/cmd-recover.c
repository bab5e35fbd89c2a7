/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler recover: turn the spill files of a killed run into one
 * schema-2 file marked partial. Loading, writing and the command line are
 * shared with merge (rank-inputs.c).
 */
#include "commands.h"
#include "rank-inputs.h"

int cmd_recover(int argc, char **argv)
{
	return rank_inputs_main(argc, argv, "recover",
		"Convert the spill files of a run that was killed (<output>.spill.rank<NNNNN>\n"
		"or <output>.spill.pid<PID>: see docs/RESILIENCE.md) into one schema-2\n"
		"file with metadata partial=1. Calls that ended before the signal are\n"
		"kept; after SIGKILL, only what had been spilled. Per-rank HDF5 files\n"
		"of the same run may be given too; a complete file stays complete.\n");
}
