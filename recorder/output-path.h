/* SPDX-License-Identifier: MIT */
/*
 * The output path: placeholders (%p %r %h %j %t %%), the absolute form
 * taken at start, the check that it can be written, the fallback in
 * $TMPDIR, the name of an exec'd child and the rotation of a previous
 * file. The rules are documented in docs/CONFIG.md ("The output path").
 * No recording state: `scope-profiler run` uses the same functions for
 * its check before the program starts.
 */
#ifndef SP_OUTPUT_PATH_H
#define SP_OUTPUT_PATH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "compiler.h"

/* The internal variable that marks a process tree: the first profiled
 * process sets it to "<pid>:<id> <absolute template>"; a process that
 * finds another pid in it is an exec'd child. */
#define SP_ROOT_ENV "SCOPE_PROFILER_ROOT"
/* A tree's id, "<root pid>:<16 hex digits>" (metadata process_tree), is
 * the first part of that value ("<id> <template>"); `scope-profiler run`
 * sets it for its program, which is then the root (same pid), so that the
 * launcher knows the id too. */
#define SP_TREE_ID_HEX 16
#define SP_TREE_ID_MAX 32
/* A new tree id for a root of this pid: 64 random bits. */
SP_HIDDEN void sp_output_tree_id(pid_t pid, char buf[SP_TREE_ID_MAX]);

/* A written output without a single region row (printf format: the
 * output's path, then the program): said by the library as it writes one
 * under `scope-profiler run`, and by run's finish of a file it wrote from
 * a spill, each with its own prefix. */
#define SP_NOTHING_INSTRUMENTED_FMT                                                            \
	"warning: nothing was instrumented: %s has no function, manual or MPI region. To time " \
	"functions, compile and link %s with -finstrument-functions" SP_NOTHING_HOW
#define SP_NOTHING_HOW                                                                         \
	" (or mark regions with sp_region_begin/sp_region_end); to time MPI calls, run an MPI "  \
	"program (dynamically linked to libmpi) under mpirun."
/* The same when the run had function or MPI regions turned off (format:
 * the output, then what was off: "function regions (--no-functions,
 * SCOPE_PROFILER_FUNCTIONS=0)" and/or "MPI regions (...)"): nothing to
 * build differently, so no advice to. */
#define SP_NOTHING_RECORDED_OFF_FMT                                                            \
	"warning: nothing was recorded: %s has no function, manual or MPI region, and %s were off"
/* The same when no output was written at all: the program (a wrapper that
 * ends with _exit, such as dash) and every program it started recorded
 * nothing (format: the output, then the program). */
#define SP_NOTHING_WRITTEN_FMT                                                                 \
	"warning: nothing was instrumented: %s was not written: %s and the programs it started " \
	"recorded no function, manual or MPI region. To time functions, compile and link the "    \
	"program with -finstrument-functions" SP_NOTHING_HOW

/* What the placeholders expand to. */
struct sp_path_values {
	pid_t pid;            /* %p */
	int rank;             /* %r */
	const char *host;     /* %h */
	const char *job;      /* %j */
	int64_t start_s;      /* %t: UTC seconds, written YYYYMMDDTHHMMSSZ */
	bool keep_pid;        /* leave %p and %r as they are (run: the program's pid is not
			       * known yet, and the program decides whether %r names its own
			       * file; the rank is the same there) */
};

/* This process's values: getpid(), the rank from the launcher's
 * environment, gethostname(), the job id, now. */
SP_HIDDEN void sp_path_values_init(struct sp_path_values *v, char *host, size_t host_size);

/* The batch job: SLURM_JOB_ID, PBS_JOBID, LSB_JOBID or FLUX_JOB_ID (the
 * first set), NULL outside a job. *ret_scheduler (may be NULL): slurm,
 * pbs, lsf or flux. */
SP_HIDDEN const char *sp_job_id(const char **ret_scheduler);
/* The job step (SLURM_STEP_ID), NULL when there is none. */
SP_HIDDEN const char *sp_job_step(void);
/* The MPI world rank from the launcher's environment (Open MPI, PMIx,
 * MPICH/Hydra PMI, Slurm), -1 when none is set. */
SP_HIDDEN int sp_launcher_rank(void);

/* Expand the placeholders of tmpl into a new string (*ret, caller frees).
 * An unknown placeholder (%x) and a lone % at the end stay as written.
 * Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_output_path_expand(const char *tmpl, const struct sp_path_values *v, char **ret);
/* path made absolute against the current directory (not resolved: a
 * symbolic link stays one). Returns 0, -ENOMEM or getcwd()'s -errno. */
SP_HIDDEN int sp_output_path_absolute(const char *path, char **ret);
/* The same for a template: a '%' of the current directory is doubled. */
SP_HIDDEN int sp_output_template_absolute(const char *tmpl, char **ret);
/* Can files be created beside path? Creates and removes a probe named
 * like the spill file (<path>.spill.pid<PID>, the longest name written
 * there) and looks at path itself (an existing non-regular file such as
 * /dev/null: 0, no probe). Returns 0 or the real -errno (ENOENT, ENOTDIR,
 * EACCES, EROFS, ENAMETOOLONG, EISDIR, ...). */
SP_HIDDEN int sp_output_path_check(const char *path);
/* The file of an exec'd child: out.h5 -> out.pid<N>.h5 (before the last
 * extension of the file name; none: appended). Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_output_path_for_pid(const char *path, pid_t pid, char **ret);
/* The file of a launcher's rank that writes without MPI's merge:
 * out.h5 -> out.rank<R>.h5, as for a pid. Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_output_path_for_rank(const char *path, int rank, char **ret);
/* Whether a template names one file per process (it has %p or %r). */
SP_HIDDEN bool sp_output_template_per_process(const char *tmpl);
/* A fallback file in $TMPDIR (else /tmp), created empty with O_EXCL and
 * O_NOFOLLOW under a unique name scope-profiler-<name>.XXXXXX<ext>.
 * Returns 0 or -errno. */
SP_HIDDEN int sp_output_path_fallback(const char *path, char **ret);
/* A previous non-empty file at path is moved to the first free
 * <stem>.<N><ext> (N = 1, 2, ...), never replacing one. Returns 1 and the
 * new name in *ret_moved (caller frees) when it moved a file, 0 when there
 * was none (or it was empty, or not a regular file), -errno on failure. */
SP_HIDDEN int sp_output_path_rotate(const char *path, char **ret_moved);
/* Move from to to without ever replacing to (renameat2 RENAME_NOREPLACE,
 * or link + unlink where the file system lacks it). 0 or -errno. */
SP_HIDDEN int sp_output_path_move(const char *from, const char *to);
/* Whether name, a file name in path's directory, is path's name for a pid
 * (sp_output_path_for_pid: <stem>.pid<N><ext>); its pid in *ret_pid. */
SP_HIDDEN bool sp_output_path_is_for_pid(const char *path, const char *name, pid_t *ret_pid);
/*
 * The files beside path named <stem>.pid<N><ext><suffix> (each "%p" in
 * suffix stands for that N), each opened read-only without following a
 * link, a regular file of this user modified since since_s (less 2 s for
 * a shared file system's clocks) for which ours(fd, ctx) holds. The first
 * max of them in found (full paths, caller frees; NULL past them), the
 * first one's N in *ret_pid. Returns how many there are.
 */
SP_HIDDEN size_t sp_output_tree_files(const char *path, const char *suffix, int64_t since_s,
				      bool (*ours)(int fd, void *ctx), void *ctx, char **found,
				      size_t max, pid_t *ret_pid);
/*
 * A process tree's root recorded nothing (it wrapped the program: a shell
 * script, timeout, /usr/bin/time, perf): the profiles its exec'd children
 * wrote beside path, <stem>.pid<N><ext>, each opened read-only without
 * following a link, a regular file of this user modified since since_s
 * (less 2 s for a shared file system's clocks) for which ours(fd, ctx)
 * holds (its metadata process_tree is the tree's). One is moved to path,
 * never over a file; several are listed. who names the root in the line
 * left in msg (no prefix; "" when none was found). Returns how many were
 * found; *ret_err is 0 or the move's -errno.
 */
SP_HIDDEN size_t sp_output_adopt(const char *path, int64_t since_s, const char *who,
				 bool (*ours)(int fd, void *ctx), void *ctx, char *msg,
				 size_t msg_size, int *ret_err);

#endif /* SP_OUTPUT_PATH_H */
