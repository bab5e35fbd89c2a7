/* SPDX-License-Identifier: MIT */
/* The MPI family of a program, for scope-profiler run (mpi-family.c). */
#ifndef SP_MPI_FAMILY_H
#define SP_MPI_FAMILY_H

#include <stdbool.h>
#include <stddef.h>

/**
 * Replace lib (the default preload library run found: a path, or a bare
 * name for the loader's search path; size >= PATH_MAX) with the library of
 * program's MPI family: libscope-profiler-FAMILY.so next to it. The family
 * is forced ("openmpi", "mpich"; NULL: none), else read from the program's
 * dynamic dependencies. No MPI: libscope-profiler-serial.so next to it when
 * built and not under an MPI launcher, else lib as it is. keep: lib was chosen by
 * the user (--library): checked, never replaced. verbose: say the choice.
 * Returns 0, or -1 after printing one error line (unknown family, a forced
 * family the program is not linked with, a family library not built, a
 * program loading two MPIs).
 */
int sp_mpi_family_library(const char *program, const char *forced, bool keep, char *lib,
			  size_t size, bool verbose);

/**
 * True when program (a name looked up in PATH, or a path) is an MPI or
 * batch launcher (mpirun, mpiexec and their Debian-suffixed names, orterun,
 * srun, ...), by its own name or the name it resolves to through symbolic
 * links. "scope-profiler run -- mpirun ./app" would profile the launcher
 * and give every rank the launcher's preload, with no launcher of ours per
 * rank: run refuses it and names the right order.
 */
bool sp_is_mpi_launcher(const char *program);

/**
 * True when program (as execvp finds it) is an ELF executable the kernel
 * loads without a dynamic loader (static, static-pie): LD_PRELOAD cannot
 * reach it. False when it cannot be read, is a script, or is dynamic.
 */
bool sp_program_is_static(const char *program);

#endif
