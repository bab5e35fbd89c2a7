/* SPDX-License-Identifier: MIT */
/*
 * Start and finish of a profiled process. The library constructor starts
 * recording (unless the process is an MPI launcher or the profiler is
 * disabled); the destructor writes the file of a serial program. An MPI
 * program's file is written by the MPI_Finalize wrapper instead.
 */
#define _GNU_SOURCE
#include "lifecycle.h"

#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "functions.h"
#include "log.h"
#include "metadata.h"
#include "output.h"
#include "output-path.h"
#include "recorder.h"
#include "snapshot.h"
#include "spill.h"
#include "writer.h"

bool sp_lifecycle_mpi_owned;
void (*sp_lifecycle_resolve_hook)(void);

static atomic_int state;
static pthread_mutex_t finalize_lock = PTHREAD_MUTEX_INITIALIZER;
static bool config_loaded;
static bool keep_spill; /* the file could not be written: the spill file stays */
static bool is_exec_child; /* started by a profiled process (resolve_output) */
/* The output's name is the same for every rank of a launcher's job (no %p
 * or %r): one that writes without MPI's merge names its own (write_local). */
static bool name_shared;
static char *rank_output; /* that name (ranks above 0), once chosen */
/* The process tree (output-path.h; metadata process_tree): set by the
 * root, inherited by the programs it starts (SP_ROOT_ENV). */
static char tree_id[SP_TREE_ID_MAX];
static int64_t started_realtime_s; /* when the output was resolved */
static char *export_tmpl; /* the root's template, put in the environment at the start's end */
static bool rank0_told;   /* world rank 0 said where the other ranks' files go */

enum sp_state sp_lifecycle_state(void)
{
	return (enum sp_state)atomic_load_explicit(&state, memory_order_relaxed);
}

/* Launchers and daemons are never profiled, even when LD_PRELOAD reaches
 * them (mpirun -x LD_PRELOAD, orted). */
static bool is_launcher(void)
{
	static const char *const names[] = {
		"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted", "prte",
		"scope-profiler", "hydra_pmi_proxy", "srun",
	};
	const char *self = program_invocation_short_name;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(self, names[i]) == 0)
			return true;
	return false;
}

static void load_config(void)
{
	if (config_loaded)
		return;
	config_loaded = true;
	sp_config_load();
	if (sp_config.print_config && !is_launcher())
		sp_config_print(stderr);
}

/* The output is written beside its path and renamed over it, so an
 * existing output that is not a regular file (-o /dev/null, a FIFO) would
 * be replaced: nothing is recorded then, with one line saying so. */
static bool output_usable(void)
{
	struct stat st;
	if (!sp_config.output || stat(sp_config.output, &st) != 0 || S_ISREG(st.st_mode))
		return true;
	if (!sp_config.quiet)
		sp_log(SP_LOG_WARN, "lifecycle", "%s is not a regular file: nothing is recorded "
				"(name a file to write the profile)", sp_config.output);
	return false;
}

/* The spill file (docs/RESILIENCE.md): spilling at the memory cap and the
 * fatal-signal dump both need it. */
static void open_spill(void)
{
	if (!sp_config.spill && !sp_config.signals)
		return;
	if (sp_spill_open(sp_config.output, sp_config.spill, tree_id) == 0 && sp_config.signals)
		sp_signals_install();
}

/* An exec'd child of a profiled process (docs/CONFIG.md, "The output
 * path"): the first profiled process of a tree puts "<pid> <template>" in
 * SCOPE_PROFILER_ROOT; a process that finds another pid there was started
 * by it (system(), popen(), exec after fork). The same pid is the root
 * itself after an exec of its own. *ret_same: the child still has the
 * root's template (it would write the root's file). */
static bool exec_child(const char *tmpl, bool *ret_same)
{
	const char *root = getenv(SP_ROOT_ENV);
	char *end, *abs = NULL;
	*ret_same = false;
	if (!root || !*root)
		return false;
	long pid = strtol(root, &end, 10);
	/* "<pid>:<id> <template>": the tree's id, kept by the root after an
	 * exec of its own (same pid) and stored by every process of the tree. */
	size_t idn = *end == ':' ? strspn(end + 1, "0123456789abcdef") : 0;
	if (idn == SP_TREE_ID_HEX && (end[1 + idn] == ' ' || !end[1 + idn]))
		snprintf(tree_id, sizeof tree_id, "%ld:%.*s", pid, (int)idn, end + 1);
	end += idn ? 1 + idn : 0;
	if (pid == (long)getpid())
		return false;
	if (*end == ' ' && sp_output_template_absolute(tmpl, &abs) == 0)
		*ret_same = strcmp(abs, end + 1) == 0;
	free(abs);
	return true;
}

/* A new tree (this process is its root, and no id came with it: not the
 * root again after an exec of its own, nor started by `run`). */
static void new_tree_id(void)
{
	char self[24];
	snprintf(self, sizeof self, "%d:", (int)getpid());
	if (strncmp(tree_id, self, strlen(self)) != 0)
		sp_output_tree_id(getpid(), tree_id);
}

static int set_output(char *path)
{
	if (!path)
		return -ENOMEM;
	free(sp_config.output);
	sp_config.output = path;
	return 0;
}

/* The root's template, absolute, in the environment: a child started from
 * another directory expands it to a file beside the root's. */
static void export_template(const char *tmpl)
{
	char *abs = NULL, *root = NULL;
	if (sp_output_template_absolute(tmpl, &abs) < 0)
		return;
	if (tmpl[0] != '/')
		setenv("SCOPE_PROFILER_OUTPUT", abs, 1);
	if (asprintf(&root, "%s %s", tree_id, abs) >= 0)
		setenv(SP_ROOT_ENV, root, 1);
	free(root);
	free(abs);
}

/* A path in a message, cut to 256 characters so that the rest of the line
 * (sp_log cuts long lines) still says where the profile went. */
#define SHOWN(path) (strlen(path) > 256 ? 256 : (int)strlen(path)), (path), \
	(strlen(path) > 256 ? "..." : "")

/* Where this process writes: placeholders expanded, made absolute now
 * (before the program can chdir), an exec'd child's own name, the $TMPDIR
 * fallback when the directory cannot be written (one warning), and a
 * previous file rotated. -ECANCELED: record nothing. */
static int resolve_output(void)
{
	const char *tmpl = sp_config.output && *sp_config.output ? sp_config.output
								 : "profiling_data.h5";
	bool same;
	bool child = exec_child(tmpl, &same);
	started_realtime_s = (int64_t)time(NULL);
	is_exec_child = child;
	if (child && strcmp(sp_config.exec, "none") == 0)
		return -ECANCELED;
	struct sp_path_values v;
	char host[256], *expanded = NULL, *path = NULL;
	sp_path_values_init(&v, host, sizeof host);
	int ret = sp_output_path_expand(tmpl, &v, &expanded);
	if (!ret)
		ret = sp_output_path_absolute(expanded, &path);
	free(expanded);
	if (!ret && child && same && !strstr(tmpl, "%p")) {
		char *own = NULL;
		ret = sp_output_path_for_pid(path, getpid(), &own);
		free(path);
		path = own;
	}
	if (!ret && !child) {
		new_tree_id();
		if (!(export_tmpl = strdup(tmpl)))
			ret = -ENOMEM;
	}
	name_shared = !child && !sp_output_template_per_process(tmpl);
	if (ret || (ret = set_output(path)) < 0) {
		free(path);
		sp_log(SP_LOG_WARN, "lifecycle", "cannot name the output %s: %s; nothing is recorded",
		       tmpl, strerror(-ret));
		return -ECANCELED;
	}
	if (!output_usable())
		return -ECANCELED;
	if ((ret = sp_output_path_check(sp_config.output)) < 0) {
		char *fb = NULL;
		int fret = sp_output_path_fallback(sp_config.output, &fb);
		if (fret < 0) {
			sp_log(SP_LOG_WARN, "lifecycle", "cannot write %.*s%s: %s; nor a fallback in "
			       "$TMPDIR: %s; nothing is recorded", SHOWN(sp_config.output),
			       strerror(-ret), strerror(-fret));
			return -ECANCELED;
		}
		/* In an MPI job the file is world rank 0's: the other ranks only
		 * need a free name for their spill files, and say nothing. */
		if (sp_launcher_rank() > 0)
			unlink(fb);
		else
			sp_log(SP_LOG_WARN, "lifecycle", "cannot write %.*s%s: %s; the profile goes to "
			       "%s instead", SHOWN(sp_config.output), strerror(-ret), fb);
		set_output(fb);
		return 0;
	}
	/* Only the process that writes the plain name rotates it: an MPI
	 * job's file is written by world rank 0. */
	char *moved = NULL;
	int rank = sp_launcher_rank();
	if (rank <= 0 && (ret = sp_output_path_rotate(sp_config.output, &moved)) > 0)
		sp_log(SP_LOG_WARN, "lifecycle", "%s exists: kept it as %s", sp_config.output, moved);
	else if (rank <= 0 && ret < 0)
		sp_log(SP_LOG_WARN, "lifecycle", "%s exists and could not be kept aside (%s): it "
		       "will be replaced", sp_config.output, strerror(-ret));
	free(moved);
	return 0;
}

int sp_lifecycle_start(void)
{
	pthread_mutex_lock(&finalize_lock);
	int ret = 0;
	load_config();
	if (atomic_load(&state) == SP_STATE_FINALIZED)
		ret = -ESHUTDOWN;
	else if (!sp_config.enabled || is_launcher())
		ret = -ECANCELED;
	else if (atomic_load(&state) == SP_STATE_OFF && resolve_output() < 0) {
		atomic_store(&state, SP_STATE_FINALIZED);
		ret = -ECANCELED;
	} else if (atomic_load(&state) == SP_STATE_OFF) {
		sp_meta_capture_process(tree_id);
		ret = sp_recorder_start();
		if (!ret)
			open_spill();
		if (!ret) {
			atomic_store(&state, SP_STATE_RECORDING);
			sp_log(SP_LOG_DEBUG, "lifecycle", "recording pid %d to %s (functions %d, mpi %d)",
			       (int)getpid(), sp_config.output, sp_config.functions, sp_config.mpi);
		}
	}
	/* Last: a program's own setenv (bash's) may hide the environment
	 * from getenv once a variable is set, until its main starts. */
	if (export_tmpl) {
		export_template(export_tmpl);
		free(export_tmpl);
		export_tmpl = NULL;
	}
	pthread_mutex_unlock(&finalize_lock);
	return ret;
}

bool sp_lifecycle_begin_finalize(void)
{
	pthread_mutex_lock(&finalize_lock);
	if (atomic_load(&state) != SP_STATE_RECORDING) {
		pthread_mutex_unlock(&finalize_lock);
		return false;
	}
	sp_signals_defer(true);
	sp_recorder_stop();
	sp_recorder_mark_finalize();
	/* Calls still open (main, when MPI_Finalize or exit runs inside it)
	 * end now: they are on the timeline up to the finalize. */
	sp_thread_close_open(sp_ticks());
	if (sp_lifecycle_resolve_hook)
		sp_lifecycle_resolve_hook();
	if (sp_spill_load() < 0) {
		sp_log(SP_LOG_WARN, "lifecycle", "could not read back %s; its events are kept there "
			"(scope-profiler recover)", sp_spill_path());
		keep_spill = true;
	}
	return true; /* lock held until sp_lifecycle_end_finalize() */
}

void sp_lifecycle_end_finalize(void)
{
	atomic_store(&state, SP_STATE_FINALIZED);
	sp_spill_unload();
	if (keep_spill)
		sp_spill_close();
	else
		sp_spill_remove();
	sp_thread_reset_all();
	pthread_mutex_unlock(&finalize_lock);
	sp_signals_defer(false);
}

/* path as shown in a message: a name too long for one line (the 512-byte
 * log line) keeps its start and end. */
static const char *shown(const char *path, char *buf, size_t n)
{
	size_t len = strlen(path);
	if (len <= 160 || n < 160)
		return path;
	snprintf(buf, n, "%.72s...%s (%zu characters)", path, path + len - 72, len);
	return buf;
}

static const char *lost_why(int64_t kept)
{
	return kept == 0 ? "the spill file could not take them"
	       : kept == -EBADF ? "no spill file" : "the spill file is gone";
}

/*
 * After a failed write: what is still in memory goes to the spill file
 * (signal 0: "finalize failed"), and one line says what is kept, true by
 * construction: the spill file's path as it is now, and the events its
 * complete records hold (sp_spill_kept), out of the `total` of the run (0:
 * not known here). A signal that dumped meanwhile (-EALREADY) dumped it all.
 */
void sp_lifecycle_keep_spill(const char *path, uint64_t total)
{
	char where[4096], b1[200], b2[200];
	int64_t kept = -EBADF;
	int dump = -EBADF;
	if (sp_spill_path()[0]) {
		keep_spill = true;
		dump = sp_spill_dump(0);
		kept = sp_spill_kept(where, sizeof where);
	}
	const char *out = shown(path, b1, sizeof b1);
	if (kept > 0 && (dump == 0 || dump == -EALREADY))
		sp_log(SP_LOG_WARN, "lifecycle", "all %lld events are kept in %s "
			"(scope-profiler recover FILE -o %s)", (long long)kept,
			shown(where, b2, sizeof b2), out);
	else if (kept > 0 && total) /* the spill stopped (its warning says why) */
		sp_log(SP_LOG_WARN, "lifecycle", "only %lld of the %llu events are kept, in %s "
			"(scope-profiler recover FILE -o %s)", (long long)kept,
			(unsigned long long)total, shown(where, b2, sizeof b2), out);
	else if (kept > 0)
		sp_log(SP_LOG_WARN, "lifecycle", "only %lld events are kept (the spill stopped), "
			"in %s (scope-profiler recover FILE -o %s)", (long long)kept,
			shown(where, b2, sizeof b2), out);
	else if (total)
		sp_log(SP_LOG_WARN, "lifecycle", "the %llu events of this run are lost (%s)",
			(unsigned long long)total, lost_why(kept));
	else
		sp_log(SP_LOG_WARN, "lifecycle", "the events of this run are lost (%s)",
			lost_why(kept));
}

/* Started by `scope-profiler run` (SCOPE_PROFILER_LAUNCH_NS: note_startup). */
static bool under_run;

void sp_lifecycle_warn_empty(const char *path, uint64_t rows)
{
	/* Only under `run`, which used to reopen the file after the program
	 * to tell: HDF5 loaded again, ~10 ms at the end of every run. */
	if (rows || !under_run || sp_launcher_rank() > 0) /* once for a job: its rank 0 */
		return;
	char b[200];
	if (sp_config.functions && sp_config.mpi) {
		sp_log(SP_LOG_INFO, "lifecycle", SP_NOTHING_INSTRUMENTED_FMT,
		       shown(path, b, sizeof b), program_invocation_short_name);
		return;
	}
	/* Turned off on purpose: "compile with -finstrument-functions" would
	 * be wrong advice for a program that was. */
	const char *fn = "function regions (--no-functions, SCOPE_PROFILER_FUNCTIONS=0)";
	const char *mpi = "MPI regions (--no-mpi, SCOPE_PROFILER_MPI=0)";
	char off[200];
	snprintf(off, sizeof off, "%s%s%s", sp_config.functions ? "" : fn,
		 !sp_config.functions && !sp_config.mpi ? " and " : "", sp_config.mpi ? "" : mpi);
	sp_log(SP_LOG_INFO, "lifecycle", SP_NOTHING_RECORDED_OFF_FMT, shown(path, b, sizeof b), off);
}

/* sp_lifecycle_write_rank, and the file's region rows in *ret_rows. */
static int write_rank(const char *path, int rank, int size, uint64_t *ret_rows)
{
	struct sp_snapshot snap;
	int ret = sp_output_write_local(path, &snap, rank, size);
	char b[200];
	if (!ret) /* an info line: SCOPE_PROFILER_QUIET=1 silences it */
		sp_log(SP_LOG_INFO, "lifecycle", "wrote %s (%u regions, %llu events)",
			path, snap.nrows, (unsigned long long)snap.nevents);
	*ret_rows = snap.nrows;
	if (snap.dropped) /* known once the snapshot is planned, written or not */
		sp_log(SP_LOG_WARN, "lifecycle", "%llu calls were dropped (memory cap "
			"SCOPE_PROFILER_MAX_MEMORY or nesting depth)%s",
			(unsigned long long)snap.dropped, ret ? "" : "; counts are in the file");
	uint64_t total = snap.nevents;
	sp_snapshot_free(&snap);
	if (ret) {
		sp_log(SP_LOG_WARN, "lifecycle", "could not write %s: %s", shown(path, b, sizeof b),
			ret == -ENOLCK ? "HDF5 could not lock the file (on a file system without "
					 "locks, set HDF5_USE_FILE_LOCKING=FALSE)" : strerror(-ret));
		sp_lifecycle_keep_spill(path, total);
	}
	return ret;
}

int sp_lifecycle_write_rank(const char *path, int rank, int size)
{
	uint64_t rows;
	return write_rank(path, rank, size, &rows);
}

/* A rank above 0 of a launcher's job that writes without MPI's merge (a
 * program without MPI_Init under mpirun, or started with the preload that
 * has no MPI layer) writes <output>.rank<R><ext>, not world rank 0's name,
 * which every rank would otherwise write over. A previous file of that
 * name is kept aside once (a checkpoint writes it again). */
static const char *local_output(void)
{
	int rank = sp_launcher_rank();
	if (rank == 0 && name_shared && !rank0_told) {
		rank0_told = true;
		/* Said once, by world rank 0, when an MPI launcher started more
		 * than one (its size variable; not Slurm's, which a batch
		 * script's own programs see too). */
		const char *n = getenv("OMPI_COMM_WORLD_SIZE");
		if (!n || !*n)
			n = getenv("PMI_SIZE");
		long size = n && *n ? strtol(n, NULL, 10) : 0;
		char *first = NULL, *last = NULL;
		if (size > 1 && size <= INT_MAX &&
		    !sp_output_path_for_rank(sp_config.output, 1, &first) &&
		    !sp_output_path_for_rank(sp_config.output, (int)size - 1, &last))
			sp_log(SP_LOG_INFO, "lifecycle", "world rank 0 of %ld writes without MPI's "
			       "merge (no MPI_Init in the program, or a preload without MPI: "
			       "scope-profiler run goes after mpirun): each rank writes its own "
			       "file, %s here, %s%s%s for the others", size, sp_config.output,
			       first, size > 2 ? " to " : "", size > 2 ? last : "");
		free(first);
		free(last);
	}
	if (rank_output || !name_shared || rank <= 0)
		return rank_output ? rank_output : sp_config.output;
	char *moved = NULL, *own = NULL;
	if (sp_output_path_for_rank(sp_config.output, rank, &own) < 0)
		return sp_config.output;
	rank_output = own;
	int ret = sp_output_path_rotate(own, &moved);
	if (ret > 0)
		sp_log(SP_LOG_WARN, "lifecycle", "%s exists: kept it as %s", own, moved);
	else if (ret < 0)
		sp_log(SP_LOG_WARN, "lifecycle", "%s exists and could not be kept aside (%s): it "
		       "will be replaced", own, strerror(-ret));
	free(moved);
	return own;
}

/* The root of a tree recorded nothing: it only wrapped the program, which
 * wrote its profile as an exec'd child (docs/CONFIG.md, "The output path"
 * 4). True when such files were found (then there is nothing to write). */
static bool adopt_children(const char *path)
{
	if (!tree_id[0])
		return false;
	char msg[2048];
	int err;
	size_t n = sp_output_adopt(path, started_realtime_s, program_invocation_short_name,
				   sp_writer_of_tree, tree_id, msg, sizeof msg, &err);
	if (n)
		sp_log(err ? SP_LOG_WARN : SP_LOG_INFO, "lifecycle", "%s", msg);
	return n > 0;
}

static int find_libmpi(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name;
	if (base && (!strncmp(base, "libmpi.so", 9) || !strncmp(base, "libmpich.so", 11) ||
		     !strncmp(base, "libmpi_", 7))) {
		snprintf(data, 64, "%s", base);
		return 1;
	}
	return 0;
}

/*
 * The library without MPI in an MPI program's rank: `scope-profiler run`
 * chose it for a wrapper with no MPI (`run -- job.sh`, whose mpirun
 * starts the ranks), so MPI calls go unrecorded and each rank writes its
 * own file. Said once, by world rank 0, with the fix.
 */
static void warn_mpi_unwrapped(void)
{
	char lib[64] = "";
	if (sp_lifecycle_has_mpi || sp_launcher_rank() != 0 || !dl_iterate_phdr(find_libmpi, lib))
		return;
	sp_log(SP_LOG_WARN, "lifecycle", "%s is an MPI program (it loads %s), profiled by the "
	       "library without MPI, which `scope-profiler run` chose for a program with no MPI "
	       "in it (a script or wrapper that runs mpirun): its MPI calls are not recorded and "
	       "each rank writes its own file. Put scope-profiler run after mpirun (mpirun -n N "
	       "scope-profiler run -- ./app, also inside the script), or give run --mpi openmpi|mpich",
	       program_invocation_short_name, lib);
}

static int write_local(bool last)
{
	if (last)
		warn_mpi_unwrapped();
	/* An exec'd child that recorded nothing (the shell of system(), a
	 * tool without instrumentation) writes no file of its own. */
	if (is_exec_child && sp_region_count() == 0)
		return 0;
	/* A root that recorded nothing: a rank above 0 leaves the job's word to
	 * world rank 0; a wrapper of the program gives it the name. */
	if (last && sp_region_count() == 0 &&
	    (sp_launcher_rank() > 0 || adopt_children(sp_config.output)))
		return 0;
	const char *path = local_output();
	uint64_t rows;
	int ret = write_rank(path, 0, 1, &rows);
	if (last && !ret)
		sp_lifecycle_warn_empty(path, rows);
	return ret;
}

int sp_lifecycle_write_local(void)
{
	return write_local(false);
}

/*
 * fork without exec. SCOPE_PROFILER_FORK=none: the child stops recording
 * and writes nothing (it must not write a second copy of the parent's
 * data). =child: it forgets the parent's events and records into
 * <output>.pid<N>. Either way it lets go of the parent's spill file (the
 * descriptor is shared) without removing it. An exec'd program starts
 * afresh with its own constructor.
 */
static void forked_child(void)
{
	sp_spill_close();
	sp_thread_after_fork();
	pthread_mutex_init(&finalize_lock, NULL);
	if (atomic_load(&state) != SP_STATE_RECORDING || !sp_config.fork ||
	    strcmp(sp_config.fork, "child") != 0) {
		sp_recorder_stop();
		atomic_store(&state, SP_STATE_FINALIZED);
		return;
	}
	sp_recorder_stop();
	sp_thread_reset_all();
	sp_fn_forget_counts();
	char *out = NULL;
	if (asprintf(&out, "%s.pid%d", sp_config.output, (int)getpid()) < 0) {
		atomic_store(&state, SP_STATE_FINALIZED);
		return;
	}
	free(sp_config.output);
	sp_config.output = out;
	free(rank_output); /* the parent's: this child's name has its pid */
	rank_output = NULL;
	rank0_told = true;
	name_shared = false;
	sp_lifecycle_mpi_owned = false;
	open_spill();
	atomic_store(&sp_recording, 1);
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The launcher's values (run sets "<ns>:<pid>", for that process only;
 * a bare "<ns>" holds for any), read before the constructor sets a
 * variable: a shell's own setenv (bash's) hides the rest of the
 * environment from getenv afterwards. */
static struct {
	const char *launch, *cpu; /* NULL: unset; else these copies */
	char launch_buf[48], cpu_buf[48];
} launcher_env;

static const char *launcher_copy(const char *name, char *buf, size_t n)
{
	const char *v = getenv(name);
	if (!v)
		return NULL;
	snprintf(buf, n, "%s", v); /* a longer value is not a number: ignored */
	return buf;
}

/* v's nanoseconds, when v is "<ns>" or "<ns>:<this pid>"; else -1. */
static long long launcher_value(const char *v)
{
	char *end;
	if (!v)
		return -1;
	errno = 0;
	long long ns = strtoll(v, &end, 10);
	if (errno || end == v || ns < 0)
		return -1;
	if (*end == ':') {
		const char *p = end + 1;
		long pid = strtol(p, &end, 10);
		if (end == p || pid != (long)getpid())
			return -1;
	}
	return *end == '\0' ? ns : -1;
}

/* What starting cost the run: from the launcher's exec (`scope-profiler
 * run` passes the time in SCOPE_PROFILER_LAUNCH_NS, removed here so the
 * program's own children do not inherit it) to the end of the constructor;
 * without the launcher, the constructor alone. Also in CPU time: the
 * launcher's until it forked the program (SCOPE_PROFILER_LAUNCH_CPU_NS)
 * and the constructor's, which the MPI finalize reports instead on a node
 * with more ranks than CPUs, where the wall time is mostly the wait for a
 * CPU (metadata profiler_startup_ns). Values that cannot be (in the
 * future, over a minute, not a number) are ignored. */
static void note_startup(int64_t entry_ns, int64_t entry_cpu_ns)
{
	long long launch = launcher_value(launcher_env.launch);
	long long launcher = launcher_value(launcher_env.cpu);
	int64_t now = sp_monotonic_ns(), from = entry_ns;
	int64_t cpu = thread_cpu_ns() - entry_cpu_ns;
	if (launch >= 0) {
		under_run = true;
		if (launch > 0 && launch <= now && now - launch < 60000000000LL)
			from = launch;
	}
	if (launcher >= 0 && launcher < 60000000000LL)
		cpu += launcher;
	if (launcher_env.launch)
		unsetenv("SCOPE_PROFILER_LAUNCH_NS");
	if (launcher_env.cpu)
		unsetenv("SCOPE_PROFILER_LAUNCH_CPU_NS");
	sp_recorder_set_startup_ns(now - from, cpu);
}

__attribute__((constructor(101))) static void sp_constructor(void)
{
	int64_t entry = sp_monotonic_ns(), entry_cpu = thread_cpu_ns();
	sp_log_capture_stderr(); /* lines go to this stderr only (log.h) */
	launcher_env.launch = launcher_copy("SCOPE_PROFILER_LAUNCH_NS", launcher_env.launch_buf,
					    sizeof launcher_env.launch_buf);
	launcher_env.cpu = launcher_copy("SCOPE_PROFILER_LAUNCH_CPU_NS", launcher_env.cpu_buf,
					 sizeof launcher_env.cpu_buf);
	pthread_atfork(NULL, NULL, forked_child);
	sp_lifecycle_start();
	note_startup(entry, entry_cpu);
}

__attribute__((destructor(101))) static void sp_destructor(void)
{
	if (sp_lifecycle_mpi_owned)
		return; /* MPI_Finalize writes (or the MPI layer handles a missing one) */
	if (sp_lifecycle_begin_finalize()) {
		write_local(true);
		sp_lifecycle_end_finalize();
	}
}
