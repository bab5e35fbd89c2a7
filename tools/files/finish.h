/* SPDX-License-Identifier: MIT */
/*
 * The launcher's finish (`scope-profiler run` after the program ended
 * without writing its output): its spill file becomes the output (serial)
 * or a part file per rank, which world rank 0's launcher merges into the
 * output. docs/RESILIENCE.md, "The launcher finishes the job".
 */
#ifndef SP_FINISH_H
#define SP_FINISH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the launcher knows about its program. */
struct finish_job {
	const char *output;  /* SCOPE_PROFILER_OUTPUT as the program was given it */
	const char *program; /* for messages */
	pid_t pid;           /* the program: its spill file before MPI_Init is OUT.spill.pid<PID> */
	int pidfd;           /* pidfd of the program while it may run, -1 none (it has ended) */
	int rank;            /* world rank from the environment, -1 none */
	int size;            /* world size from the environment, 0 unknown */
	bool mpi_env;        /* the rank is an MPI launcher's (not only a Slurm task's) */
	int64_t wait_ns;     /* rank 0: longest wait for the next of the other ranks' parts */
	int64_t started_ns;  /* CLOCK_REALTIME at the launch: older rank files are stale */
	char tree[32];       /* the program's process tree (metadata process_tree), "" none */
	bool verbose, quiet;
	bool is_static;      /* the program is static: the preload never reached it (said) */
};

/** The world rank of this process from its MPI launcher's or Slurm's
 * environment (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID),
 * with the size when known: fills rank, size and mpi_env of @j. */
void finish_job_from_env(struct finish_job *j);

/** Whether the program left data the launcher must turn into the output:
 * its spill file, or (MPI) a per-rank file it wrote at exit. */
bool finish_needed(const struct finish_job *j);

/** The one line printed when a termination signal reaches the launcher:
 * what is saved where and what happens next. */
void finish_notice(const struct finish_job *j, int signo);

/** Wait for the program to end (j->pidfd), then write the output from its
 * spill (serial), or its part file, and on rank 0 merge the parts into the
 * output, waiting for them until none came for j->wait_ns. Prints what it wrote, and
 * the missing ranks. Returns 0, or 1 when nothing could be written. */
int finish_job_run(const struct finish_job *j);

/** The program ended normally and no output is there (nor was one written
 * from a spill): a wrapper that recorded nothing and ended with _exit
 * (dash), so that its library could not give its program's profile the
 * output's name (docs/CONFIG.md, "The output path" 4). World rank 0's
 * launcher (or a serial one) does it: this tree's one <output>.pid<N>
 * file becomes the output, several are listed, none is said. */
void finish_adopt(const struct finish_job *j);

#endif /* SP_FINISH_H */
