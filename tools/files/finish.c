/* SPDX-License-Identifier: MIT */
/*
 * What `scope-profiler run` does after its program ended without writing
 * its output: the same conversion as `recover` and `merge` (rank-inputs.h),
 * serial into the output, under MPI into one part file per rank
 * (OUT.part<NNNNN>) that world rank 0's launcher merges into the output.
 */
#define _GNU_SOURCE
#include "finish.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli-common.h"
#include "output-path.h"
#include "rank-inputs.h"
#include "sp-spill.h"
#include "spill-read.h"
#include "writer.h"

/* A rank file (OUT.rank<N>, written by the program at exit) counts when it
 * is not older than the launch less this slack (clocks of a shared file
 * system's clients and server differ a little). */
#define FRESH_SLACK_NS 2000000000LL
#define POLL_NS 50000000LL

static int64_t now_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *signame(int signo, char *buf, size_t n)
{
	const char *abbrev = signo > 0 ? sigabbrev_np(signo) : NULL;
	if (abbrev)
		snprintf(buf, n, "SIG%s", abbrev);
	else
		snprintf(buf, n, "signal %d", signo);
	return buf;
}

/* OUT<what><number>: what is ".spill.pid", ".spill.rank", ".part", ".rank". */
static const char *path_of(char *buf, const struct finish_job *j, const char *what, int number)
{
	const char *fmt = strcmp(what, SP_SPILL_SUFFIX "pid") == 0 ? "%s%s%d" : "%s%s%05d";
	if (snprintf(buf, PATH_MAX, fmt, j->output, what, number) >= PATH_MAX)
		buf[0] = '\0';
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;
	return path[0] && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool fresh(const struct finish_job *j, const char *path)
{
	struct stat st;
	if (!path[0] || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	int64_t m = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	return m >= j->started_ns - FRESH_SLACK_NS;
}

static int env_int(const char *const *names, const char **ret_name)
{
	for (size_t i = 0; names[i]; i++) {
		const char *v = getenv(names[i]);
		char *end;
		long x = v && *v ? strtol(v, &end, 10) : -1;
		if (v && *v && !*end && x >= 0 && x < INT_MAX) {
			if (ret_name)
				*ret_name = names[i];
			return (int)x;
		}
	}
	return -1;
}

void finish_job_from_env(struct finish_job *j)
{
	static const char *const ranks[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
		"SLURM_PROCID", NULL };
	static const char *const sizes[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
		"SLURM_NPROCS", NULL };
	const char *which = NULL;
	j->rank = env_int(ranks, &which);
	int size = env_int(sizes, NULL);
	j->size = size > 0 ? size : 0;
	/* A batch script's shell has SLURM_PROCID too: Slurm alone does not make
	 * a serial program's spill a rank's part. */
	j->mpi_env = j->rank >= 0 && strcmp(which, "SLURM_PROCID") != 0;
}

/* The program's own data: its rank's spill file, its pid's spill file, or
 * (MPI) the rank file it wrote at exit. ret_spill empty when none. */
static bool is_mpi(const struct finish_job *j, char *ret_spill)
{
	char p[PATH_MAX];
	if (j->rank >= 0 && exists(path_of(p, j, SP_SPILL_SUFFIX "rank", j->rank))) {
		strcpy(ret_spill, p);
		return true;
	}
	if (!exists(path_of(ret_spill, j, SP_SPILL_SUFFIX "pid", (int)j->pid)))
		ret_spill[0] = '\0';
	if (j->rank < 0)
		return false;
	if (fresh(j, path_of(p, j, ".rank", j->rank)))
		return true;
	return ret_spill[0] && j->mpi_env && j->size > 1;
}

bool finish_needed(const struct finish_job *j)
{
	char spill[PATH_MAX];
	return is_mpi(j, spill) || spill[0];
}

void finish_notice(const struct finish_job *j, int signo)
{
	char s[32], p[PATH_MAX];
	signame(signo, s, sizeof s);
	if (j->rank < 0 || j->size <= 1) {
		fprintf(stderr, "scope-profiler run: %s: passed on to %s (pid %d), which saves its "
			"events to %s; then %s is written from them (if it is not: scope-profiler "
			"recover %s" SP_SPILL_SUFFIX "* -o %s)\n", s, j->program, (int)j->pid,
			path_of(p, j, SP_SPILL_SUFFIX "pid", (int)j->pid), j->output, j->output,
			j->output);
		return;
	}
	fprintf(stderr, "scope-profiler run: rank %d: %s: passed on to %s (pid %d)%s, which saves "
		"its events to %s" SP_SPILL_SUFFIX "rank%05d; each rank's launcher converts its own "
		"to %s.part<N> and rank 0 merges the %d rank%s into %s (waiting up to %.0f s for "
		"each next one), in the background (if %s is not written: scope-profiler merge %s.part* "
		"%s" SP_SPILL_SUFFIX "* -o %s)\n", j->rank, s, j->program, (int)j->pid,
		j->mpi_env ? " and its process group" : "", j->output,
		j->rank, j->output, j->size, j->size == 1 ? "" : "s", j->output,
		(double)j->wait_ns / 1e9, j->output, j->output,
		j->output, j->output);
}

/* Load these files as recover/merge do; 0 or EXIT_USAGE (reported). */
static int load(struct cli_common *c, struct rank_inputs *in, char *const *paths, size_t n)
{
	memset(in, 0, sizeof *in);
	if (cli_common_init(c, "run", "") < 0)
		return EXIT_USAGE;
	c->files = calloc(n + 1, sizeof *c->files);
	if (!c->files)
		return EXIT_USAGE;
	for (size_t i = 0; i < n; i++)
		if (!(c->files[c->n_files++] = strdup(paths[i])))
			return EXIT_USAGE;
	return rank_inputs_load(c, in);
}

static uint64_t events_of(const struct rank_inputs *in)
{
	uint64_t n = 0;
	for (size_t i = 0; i < in->n; i++)
		n += in->v[i].s.nevents;
	return n;
}

/* How the spill ended, for the "wrote" line. */
static const char *ending(int signo, char *buf, size_t n)
{
	char s[32];
	if (signo > 0)
		snprintf(buf, n, "stopped by %s", signame(signo, s, sizeof s));
	else if (signo == 0)
		snprintf(buf, n, "its final write failed");
	else
		snprintf(buf, n, "no dump: only the events spilled before it ended");
	return buf;
}

/*
 * The output the finish wrote has no function, manual or MPI region:
 * nothing was instrumented, almost always a build problem. Say so and how
 * to fix it (the library says it of the files it writes itself). Never
 * changes the exit status.
 */
static void warn_if_empty(const struct finish_job *j, const struct rank_inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].s.nrows)
			return;
	if (j->quiet)
		return;
	fprintf(stderr, "scope-profiler run: " SP_NOTHING_INSTRUMENTED_FMT "\n", j->output,
		j->program);
}

/* Serial: the spill file becomes the output, as `recover SPILL -o OUT`. */
static int finish_serial(const struct finish_job *j, char *spill)
{
	struct cli_common c;
	struct rank_inputs in;
	int rc = load(&c, &in, &spill, 1);
	if (!rc)
		rc = rank_inputs_write(&c, &in, j->output);
	if (!rc) {
		char e[96];
		unlink(spill);
		if (!j->quiet)
			fprintf(stderr, "scope-profiler run: wrote %s from %s (%llu events, partial=1: "
				"%s)\n", j->output, spill, (unsigned long long)events_of(&in),
				ending(in.n ? in.v[0].signo : -1, e, sizeof e));
		warn_if_empty(j, &in);
	}
	rank_inputs_free(&in);
	cli_common_fini(&c);
	return rc ? 1 : 0;
}

/* This rank's part: its spill converted (rank and size from the
 * environment when the spill does not know them), or the rank file the
 * program wrote. Returns the size the data knows (0 unknown). */
static int write_part(const struct finish_job *j, char *spill, int *ret_size)
{
	char part[PATH_MAX];
	*ret_size = 0;
	if (!spill[0])
		return 0; /* OUT.rank<R>: already a part */
	struct cli_common c;
	struct rank_inputs in;
	int rc = load(&c, &in, &spill, 1);
	if (!rc && in.n == 1) {
		if (in.v[0].size <= 0)
			in.v[0].size = j->size;
		in.v[0].rank = (uint32_t)j->rank;
		*ret_size = in.v[0].size;
		rc = rank_inputs_write(&c, &in, path_of(part, j, ".part", j->rank));
	}
	if (!rc)
		unlink(spill); /* its events are all in the part */
	if (!rc && j->verbose && !j->quiet)
		fprintf(stderr, "scope-profiler run: rank %d: wrote %s (%llu events)\n", j->rank, part,
			(unsigned long long)events_of(&in));
	rank_inputs_free(&in);
	cli_common_fini(&c);
	return rc ? 1 : 0;
}

/* Rank r's part, if it is there: OUT.part<r> or a fresh OUT.rank<r>. */
static bool part_of(const struct finish_job *j, int r, char *ret)
{
	if (exists(path_of(ret, j, ".part", r)))
		return true;
	return fresh(j, path_of(ret, j, ".rank", r));
}

/* Rank 0: wait for every rank's part, as long as new ones keep coming (at
 * most j->wait_ns without a new one), merge them into the output, remove
 * the part files, say which ranks are missing. */
static int merge_parts(const struct finish_job *j, int size)
{
	char **paths = calloc((size_t)size + 1, sizeof *paths);
	if (!paths)
		return 1;
	int64_t deadline = now_ns(CLOCK_MONOTONIC) + j->wait_ns;
	size_t n, seen = 0;
	for (;;) {
		n = 0;
		char p[PATH_MAX];
		for (int r = 0; r < size; r++)
			n += part_of(j, r, p);
		if (n > seen) {
			seen = n;
			deadline = now_ns(CLOCK_MONOTONIC) + j->wait_ns;
		}
		if (n == (size_t)size || now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		nanosleep(&(struct timespec){ 0, POLL_NS }, NULL);
	}
	char missing[4096] = "";
	n = 0;
	for (int r = 0; r < size; r++) {
		char p[PATH_MAX];
		if (part_of(j, r, p))
			paths[n++] = strdup(p);
		else if (strlen(missing) < sizeof missing - 16)
			snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%d",
				 missing[0] ? "," : "", r);
	}
	int rc = 1;
	struct cli_common c;
	struct rank_inputs in;
	if (n && !load(&c, &in, paths, n) && !rank_inputs_write(&c, &in, j->output)) {
		rc = 0;
		for (size_t i = 0; i < n; i++)
			if (strstr(paths[i] + strlen(j->output), ".part") == paths[i] + strlen(j->output))
				unlink(paths[i]);
		/* As rank_inputs_write decides partial: an input that is, or a gap. */
		const struct rank_input *first = NULL;
		for (size_t i = 0; i < in.n && !first; i++)
			first = in.v[i].partial ? &in.v[i] : NULL;
		char e[96] = "complete";
		if (first || in.n < (size_t)size)
			snprintf(e, sizeof e, "partial=1: %s", first ? ending(first->signo, (char[64]){ 0 },
				 64) : "ranks missing");
		if (!j->quiet)
			fprintf(stderr, "scope-profiler run: wrote %s (%zu of %d rank%s, %llu events, "
				"%s)\n", j->output, in.n, size, size == 1 ? "" : "s", (unsigned long long)events_of(&in), e);
		warn_if_empty(j, &in);
	}
	if (n) {
		rank_inputs_free(&in);
		cli_common_fini(&c);
	}
	if (missing[0])
		fprintf(stderr, "scope-profiler run: %s: ranks %s sent no data (none came for %.0f s) "
			"(metadata missing_ranks; parts that come later: scope-profiler merge %s "
			"%s.part* -o %s)\n", j->output, missing, (double)j->wait_ns / 1e9, j->output,
			j->output, j->output);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

static void wait_program(const struct finish_job *j)
{
	struct pollfd p = { .fd = j->pidfd, .events = POLLIN };
	while (j->pidfd >= 0 && poll(&p, 1, -1) < 0 && errno == EINTR)
		;
}

void finish_adopt(const struct finish_job *j)
{
	struct stat st;
	if (!j->tree[0] || j->rank > 0 || lstat(j->output, &st) == 0 || errno != ENOENT)
		return;
	char msg[2048], who[64];
	const char *base = strrchr(j->program, '/');
	snprintf(who, sizeof who, "%s", base ? base + 1 : j->program);
	int err;
	if (!sp_output_adopt(j->output, j->started_ns / 1000000000LL, who, sp_writer_of_tree,
			     (void *)j->tree, msg, sizeof msg, &err)) {
		if (j->is_static)
			return; /* said before it ran */
		snprintf(msg, sizeof msg, SP_NOTHING_WRITTEN_FMT, j->output, who);
	}
	if (err || !j->quiet)
		fprintf(stderr, "scope-profiler run: %s\n", msg);
}

/* Whether the spill file at path holds no region (its process, a shell or
 * another wrapper, was never instrumented). */
static bool recorded_nothing(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool none = !sp_spill_fd_has_region(fd);
	close(fd);
	return none;
}

/* Whether process pid has ended (gone, or a zombie nobody has reaped). */
static bool ended(pid_t pid)
{
	char p[64], buf[256];
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kill(pid, 0) != 0 && errno == ESRCH;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *paren = strrchr(buf, ')'); /* after the command name */
	return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

/*
 * The program wrapped the profiled one (a shell script, timeout) and
 * recorded nothing: the spill file of the program it started, found by
 * the tree's id (OUT's name for that pid, then .spill.rank<R> for this
 * rank or .spill.pid<N> before MPI_Init), into ret. It is taken once that
 * program has ended (its handler dumped before it did), waiting up to
 * j->wait_ns. Several, or one whose program still runs: said, and none is
 * taken. Returns 1 (taken), 0 (none found) or -1 (said). The wrapper's
 * own spill, which holds nothing, is removed unless none was found.
 */
static int wrapped_spill(const struct finish_job *j, const char *own, char *ret)
{
	enum { LISTED = 4 };
	if (!j->tree[0] || (own[0] && !recorded_nothing(own)))
		return 0;
	char suffix[64], *found[LISTED];
	pid_t pid;
	int64_t since = j->started_ns / 1000000000LL;
	size_t n = 0;
	if (j->rank >= 0) {
		snprintf(suffix, sizeof suffix, SP_SPILL_SUFFIX "rank%05d", j->rank);
		n = sp_output_tree_files(j->output, suffix, since, sp_spill_fd_of_tree,
					 (void *)j->tree, found, LISTED, &pid);
	}
	if (!n)
		n = sp_output_tree_files(j->output, SP_SPILL_SUFFIX "pid%p", since,
					 sp_spill_fd_of_tree, (void *)j->tree, found, LISTED, &pid);
	bool took = false;
	if (n == 1 && found[0]) {
		int64_t deadline = now_ns(CLOCK_MONOTONIC) + j->wait_ns;
		while (!ended(pid) && now_ns(CLOCK_MONOTONIC) < deadline)
			nanosleep(&(struct timespec){ 0, POLL_NS }, NULL);
		took = ended(pid);
		if (took)
			snprintf(ret, PATH_MAX, "%s", found[0]);
		else if (!j->quiet)
			fprintf(stderr, "scope-profiler run: %s recorded nothing; the program it started "
				"(pid %d) still runs after %.0f s: it writes its own profile when it ends "
				"(if it is killed: scope-profiler recover %s -o %s)\n", j->program,
				(int)pid, (double)j->wait_ns / 1e9, found[0], j->output);
	} else if (n > 1 && !j->quiet) {
		fprintf(stderr, "scope-profiler run: %s recorded nothing; the %zu programs it started "
			"left spill files: %s%s%s%s%s%s%s%s (no %s is written from them: scope-profiler "
			"recover FILE -o %s)\n", j->program, n, found[0] ? found[0] : "",
			found[1] ? ", " : "", found[1] ? found[1] : "", found[2] ? ", " : "",
			found[2] ? found[2] : "", found[3] ? ", " : "", found[3] ? found[3] : "",
			n > LISTED ? ", ..." : "", j->output, j->output);
	}
	for (size_t i = 0; i < LISTED; i++)
		free(found[i]);
	if (n && own[0])
		unlink(own);
	return took ? 1 : n ? -1 : 0;
}

int finish_job_run(const struct finish_job *j)
{
	wait_program(j);
	char spill[PATH_MAX], theirs[PATH_MAX];
	bool mpi = is_mpi(j, spill);
	/* The root's own rank spill or rank file: it is the profiled program. */
	bool own_rank = mpi && (!spill[0] || strstr(spill, SP_SPILL_SUFFIX "rank"));
	int wrapped = own_rank ? 0 : wrapped_spill(j, spill, theirs);
	if (wrapped > 0) {
		strcpy(spill, theirs);
		const char *base = strrchr(spill, '/');
		mpi = j->rank >= 0 && (strstr(base ? base : spill, SP_SPILL_SUFFIX "rank") ||
				       (j->mpi_env && j->size > 1));
	} else if (wrapped < 0) {
		spill[0] = '\0'; /* the wrapper's own held nothing */
		mpi = mpi && j->rank == 0;
	}
	if (!mpi)
		return spill[0] ? finish_serial(j, spill) : 0;
	int size = 0;
	int rc = write_part(j, spill, &size);
	if (j->rank != 0)
		return rc;
	if (size <= 0)
		size = j->size > 0 ? j->size : 1;
	return merge_parts(j, size) | rc;
}
