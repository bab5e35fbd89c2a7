/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler run: run a program with libscope-profiler.so preloaded and
 * its SCOPE_PROFILER_* configuration set from options (one option per
 * variable, docs/HOOKS.md). Works per rank under mpirun. The launcher forks
 * the program, passes termination signals on to it, and when it ends
 * without writing its output writes it from the spill (finish.c); neither
 * the launcher nor mpirun/orted is ever profiled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli-common.h"
#include "sp-duration.h"
#include "sp-config.h"
#include "commands.h"
#include "output-path.h" /* the preload's own path rules (docs/ARCHITECTURE.md) */
#include "finish.h"
#include "mpi-family.h"

static const char usage[] =
	"usage: scope-profiler run [-o FILE] [--include RE] [--exclude RE]\n"
	"                          [--min-duration T] [--max-depth N]\n"
	"                          [--throttle-calls N] [--throttle-mean T]\n"
	"                          [--throttle-timing sampled|exact|estimate] [--throttle-sample K] [--patch]\n"
	"                          [--max-memory SIZE] [--label L] [--clock C]\n"
	"                          [--callsites N] [--no-functions] [--no-mpi]\n"
	"                          [-q] [-v] [--print-config] [--library PATH] [--mpi FAMILY]\n"
	"                          [--merge-wait T]\n"
	"                          -- PROGRAM [ARGS...]\n"
	"Run PROGRAM with the profiler preloaded. Durations: 250ns, 10us, 1.5ms, 2s;\n"
	"sizes: 64K, 256M, 1G; regexes match demangled function names from the start.\n"
	"If PROGRAM ends by a signal or without writing its output, run writes it\n"
	"from the spill files (under mpirun/srun: each rank its part, rank 0 merges\n"
	"them, until none came for --merge-wait, default 10s); -v: every\n"
	"rank says what it saved. run exits with PROGRAM's status (or signal).\n"
	"The library is PROGRAM's MPI family's (openmpi, mpich: read from its\n"
	"dynamic dependencies); --mpi FAMILY forces one.\n";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler run [options] -- PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM with the profiler preloaded; each option sets one\n"
	"SCOPE_PROFILER_* variable (docs/CONFIG.md). Works per rank under mpirun\n"
	"and srun, after the launcher: mpirun -n 4 scope-profiler run -- ./app\n"
	"(run -- mpirun ... is refused). If PROGRAM ends by a signal or without\n"
	"writing its output, run writes it from the spill files (under mpirun/srun\n"
	"each rank its part, and rank 0 merges them). run exits with PROGRAM's\n"
	"status (or signal).\n"
	"\n"
	"options:\n"
	"  -o, --output FILE     output file; %p pid, %r rank, %h host, %j job id, %t\n"
	"                        start time (default: profiling_data.h5)\n"
	"  --include RE          record only functions whose name matches RE (regex\n"
	"                        on demangled names, from the start)\n"
	"  --exclude RE          do not record functions whose name matches RE\n"
	"  --min-duration DUR    calls shorter than DUR are not on the timeline\n"
	"                        (default: 0)\n"
	"  --max-depth N         deepest function nesting recorded; 0 = unlimited\n"
	"                        (default: 0)\n"
	"  --throttle-calls N    throttle a function after N calls; 0 = off\n"
	"                        (default: 1000)\n"
	"  --throttle-mean DUR   ... when its mean own cost is below DUR\n"
	"                        (default: 10us)\n"
	"  --throttle-timing T   throttled calls: sampled, exact or estimate\n"
	"                        (default: sampled)\n"
	"  --throttle-sample K   sampled timing: 1 in K throttled calls is timed\n"
	"                        (default: 256)\n"
	"  --patch               rewrite the hooks of throttled functions to NOPs\n"
	"  --max-memory SIZE     event memory per process, e.g. 64K, 256M, 1G\n"
	"                        (default: 1G)\n"
	"  --label L             run label stored as metadata label\n"
	"  --clock C             auto, tsc or monotonic (default: auto)\n"
	"  --callsites N         call-site stack depth of MPI calls, 0-8; 0 = off\n"
	"                        (default: 0)\n"
	"  --no-functions        do not record -finstrument-functions hooks\n"
	"  --no-mpi              do not record MPI calls\n"
	"  -q, --quiet           no \"wrote FILE\" line\n"
	"  --print-config        print the effective configuration at start\n"
	"  --merge-wait DUR      rank 0 waits up to DUR for each next rank's part\n"
	"                        (default: 10s)\n"
	"  --library PATH        the preload library (default: the one installed\n"
	"                        with this scope-profiler)\n"
	"  --mpi FAMILY          the MPI family's library: openmpi or mpich\n"
	"                        (default: read from PROGRAM's dynamic dependencies)\n"
	"  -v, --verbose         every rank says what it saved\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"Durations (DUR) take a unit, ns, us, ms or s; a bare number is seconds.\n"
	"--min-duration and --throttle-mean refuse a bare number of 1 or more (a\n"
	"second per call is surely meant as ns or us): write its unit. When the\n"
	"output has no function and no MPI region, run says how to instrument the\n"
	"program (-finstrument-functions, or an MPI program); a statically linked\n"
	"PROGRAM, which LD_PRELOAD cannot reach, is said before it runs. When\n"
	"PROGRAM only wraps another (a script, bash -c, timeout, /usr/bin/time)\n"
	"and records nothing itself, the profile of the program it starts gets\n"
	"FILE's name (docs/CONFIG.md, \"The output path\").\n";

enum value_kind { V_STR, V_INT, V_DURATION, V_SIZE, V_ON, V_OFF };

/* Options and the variable each one sets: the table is the mapping. */
static const struct run_option {
	const char *name;
	int short_name;
	enum value_kind kind;
	const char *variable; /* after SCOPE_PROFILER_ */
} run_options[] = {
	{ "output", 'o', V_STR, "OUTPUT" },
	{ "include", 0, V_STR, "INCLUDE" },
	{ "exclude", 0, V_STR, "EXCLUDE" },
	{ "min-duration", 0, V_DURATION, "MIN_DURATION" },
	{ "max-depth", 0, V_INT, "MAX_DEPTH" },
	{ "throttle-calls", 0, V_INT, "THROTTLE_CALLS" },
	{ "throttle-mean", 0, V_DURATION, "THROTTLE_MEAN" },
	{ "throttle-timing", 0, V_STR, "THROTTLE_TIMING" },
	{ "throttle-sample", 0, V_INT, "THROTTLE_SAMPLE" },
	{ "patch", 0, V_ON, "PATCH" },
	{ "max-memory", 0, V_SIZE, "MAX_MEMORY" },
	{ "label", 0, V_STR, "LABEL" },
	{ "clock", 0, V_STR, "CLOCK" },
	{ "callsites", 0, V_INT, "CALLSITES" },
	{ "no-functions", 0, V_OFF, "FUNCTIONS" },
	{ "no-mpi", 0, V_OFF, "MPI" },
	{ "quiet", 'q', V_ON, "QUIET" },
	{ "print-config", 0, V_ON, "PRINT_CONFIG" },
	/* read by the launcher only (finish.c), not by the library */
	{ "merge-wait", 0, V_DURATION, "MERGE_WAIT" },
};
#define N_RUN_OPTIONS (sizeof run_options / sizeof run_options[0])
enum { OPT_LIBRARY = OPT_FIRST_COMMAND_SPECIFIC, OPT_VERBOSE, OPT_MPI, OPT_TABLE };

/* Same units as the preload's parser (recorder/config.c), checked here so
 * that a typo is a usage error instead of a warning inside the program. */
static bool valid_number(const char *s, const char *const *units, size_t n, bool fold)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0 || !isfinite(v))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((fold ? strcasecmp(end, units[i]) : strcmp(end, units[i])) == 0)
			return true;
	return false;
}

static bool valid_value(enum value_kind kind, const char *v)
{
	static const char *const sizes[] = { "", "B", "K", "KiB", "M", "MiB", "G", "GiB" };
	char *end;
	switch (kind) {
	case V_INT:
		errno = 0;
		(void)strtoll(v, &end, 10);
		return end != v && !*end && !errno;
	case V_DURATION:
		return sp_duration_parse(v, &(int64_t){ 0 }) == 0;
	case V_SIZE:
		return valid_number(v, sizes, 8, true);
	default:
		return true;
	}
}

/* The preload library: $SCOPE_PROFILER_LIBRARY, the build tree next to
 * this binary, the install tree next to it, else the loader's search path. */
static int find_library(const char *override, char *out, size_t size)
{
	if (override && *override) {
		if (!realpath(override, out))
			return -errno;
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		static const char *const rel[] = {
			"../preload/libscope-profiler.so", "../lib/x86_64-linux-gnu/libscope-profiler.so.0",
			"../lib/aarch64-linux-gnu/libscope-profiler.so.0", "../lib64/libscope-profiler.so.0",
			"../lib/libscope-profiler.so.0",
		};
		for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
			char cand[PATH_MAX + 64];
			snprintf(cand, sizeof cand, "%s/%s", self, rel[i]);
			if (access(cand, R_OK) == 0 && realpath(cand, out))
				return 0;
		}
	}
	snprintf(out, size, "libscope-profiler.so.0");
	return 0;
}

/* LD_PRELOAD = lib first, then whatever was there (once). */
static int set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	if (old && strstr(old, lib))
		return 0;
	char *v = NULL;
	/* A sanitizer build's library needs the sanitizer runtime loaded first
	 * (SP_SANITIZER_PRELOAD is empty in normal builds). */
	const char *rt = SP_SANITIZER_PRELOAD;
	if (asprintf(&v, "%s%s%s%s%s", rt, *rt ? ":" : "", lib, old && *old ? ":" : "",
		     old ? old : "") < 0)
		return -ENOMEM;
	int ret = setenv("LD_PRELOAD", v, 1) ? -errno : 0;
	free(v);
	return ret;
}

static int set_variable(const struct run_option *o, const char *arg)
{
	char var[64];
	snprintf(var, sizeof var, "SCOPE_PROFILER_%s", o->variable);
	const char *v = o->kind == V_ON ? "1" : o->kind == V_OFF ? "0" : arg;
	return setenv(var, v, 1) ? -errno : 0;
}

static bool disabled(void)
{
	const char *v = getenv("SCOPE_PROFILER_ENABLE");
	return v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") ||
		     !strcasecmp(v, "false"));
}

/*
 * The output, checked before the program starts (docs/CONFIG.md, "The
 * output path"): the placeholders known here are expanded (%p stays for
 * the program's own pid), the name is made absolute against this
 * directory and a probe file is created beside it. The program gets the
 * absolute template and starts a new process tree (no inherited
 * SCOPE_PROFILER_ROOT). Returns 0, or EXIT_USAGE after one line with
 * the real error.
 */
static int prepare_output(void)
{
	if (disabled())
		return 0;
	const char *tmpl = getenv("SCOPE_PROFILER_OUTPUT");
	if (!tmpl || !*tmpl)
		tmpl = "profiling_data.h5";
	struct sp_path_values v;
	char host[256], *partial = NULL, *abs = NULL, *path = NULL;
	sp_path_values_init(&v, host, sizeof host);
	v.keep_pid = true;
	int ret = sp_output_path_expand(tmpl, &v, &partial);
	if (!ret)
		ret = sp_output_template_absolute(partial, &abs);
	v.keep_pid = false;
	if (!ret)
		ret = sp_output_path_expand(abs, &v, &path);
	if (!ret)
		ret = sp_output_path_check(path);
	if (ret < 0) {
		fprintf(stderr, "scope-profiler run: cannot write %s: %s\n", abs ? abs : tmpl,
			strerror(-ret));
	} else if (setenv("SCOPE_PROFILER_OUTPUT", abs, 1) < 0 ||
		   unsetenv(SP_ROOT_ENV) < 0) {
		ret = -errno;
		fprintf(stderr, "scope-profiler run: %s\n", strerror(errno));
	}
	free(partial);
	free(abs);
	free(path);
	return ret < 0 ? EXIT_USAGE : 0;
}

/* Signals passed on to the program. The first termination signal (not
 * USR1/USR2, which programs use for their own ends) is announced once. */
static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGXCPU, SIGUSR1, SIGUSR2 };
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])
static struct sigaction old_actions[N_FORWARDED];
static volatile sig_atomic_t program_pid, first_signal;
/* The program has a process group of its own (made by spawn under an MPI
 * launcher): a termination signal goes to the group, as the launcher
 * would have sent it to the program's group without us, so that a
 * wrapper's program (a job script's, timeout's) gets it too and saves its
 * events. */
static volatile sig_atomic_t program_group;

static bool terminating(int sig)
{
	return sig != SIGUSR1 && sig != SIGUSR2;
}

/* A burst of the same termination signal (orted, mpirun and a batch
 * system each sending SIGTERM) is passed on once: a second one that lands
 * on another thread of the program while the first is dumping can end it
 * before the dump is complete. One a second later is passed on again. */
#define BURST_NS 1000000000LL
static int64_t last_passed[N_FORWARDED];

static void pass_on(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved = errno;
	if (!first_signal && terminating(sig))
		first_signal = sig;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	int64_t now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	size_t i = 0;
	while (i < N_FORWARDED && forwarded[i] != sig)
		i++;
	bool burst = terminating(sig) && last_passed[i] && now - last_passed[i] < BURST_NS;
	/* A terminal's signals (SI_KERNEL: Ctrl-C, hang-up) went to its whole
	 * foreground process group, the program included: not twice. */
	if (program_pid > 0 && si->si_code != SI_KERNEL && !burst) {
		if (!program_group || !terminating(sig) || kill(-(pid_t)program_pid, sig) != 0)
			kill((pid_t)program_pid, sig);
		last_passed[i] = now;
	}
	errno = saved;
}

/* Block the forwarded signals (until the program's pid is known) and catch
 * them; one ignored at our start (nohup) stays ignored, for the program too. */
static void catch_signals(sigset_t *ret_old_mask)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, ret_old_mask);
	for (size_t i = 0; i < N_FORWARDED; i++) {
		sigaction(forwarded[i], NULL, &old_actions[i]);
		if (old_actions[i].sa_handler == SIG_IGN)
			continue;
		struct sigaction sa = { .sa_sigaction = pass_on, .sa_flags = SA_SIGINFO };
		sa.sa_mask = set;
		sigaction(forwarded[i], &sa, NULL);
	}
}

static void restore_signals(const sigset_t *mask)
{
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &old_actions[i], NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
}

/* When the launcher started: now less the CPU time the process has used
 * (its exec, the loader, main so far: CLOCK_PROCESS_CPUTIME_ID counts
 * from the MPI launcher's fork, exec keeps it). The start-up the library
 * reports then includes the launcher's own (2-5 ms of CPU a rank here),
 * which the run pays as well. */
static int64_t launch_ns;

static int64_t cpu_ns(void)
{
	struct timespec cpu;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) != 0)
		return 0;
	return (int64_t)cpu.tv_sec * 1000000000LL + cpu.tv_nsec;
}

static int64_t launcher_start_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - cpu_ns();
}

/* The program, with the launcher's original signal state. Under an MPI
 * launcher it gets a process group of its own: orted signals the group of
 * each process it started (SIGTERM, then SIGKILL 1 s later), and the
 * program must get the SIGTERM (passed on by us) but not the SIGKILL, or a
 * dump that takes more than a second is cut. */
static pid_t spawn(char **argv, const sigset_t *mask, bool own_group, const char *tree_hex)
{
	/* The launcher's CPU time so far (the child's clock starts again at
	 * the fork): the library's start-up on a node with more ranks than
	 * CPUs, where wall time is mostly waiting for one. */
	int64_t cpu = cpu_ns();
	pid_t pid = fork();
	if (pid > 0 && own_group)
		setpgid(pid, pid);
	if (pid != 0)
		return pid;
	if (own_group)
		setpgid(0, 0);
	restore_signals(mask);
	/* The library measures its start-up from the launcher's own start
	 * (cmd_run: its exec, loading it, the checks, the forks) to the end
	 * of its constructor: metadata profiler_startup_ns. ":<pid>": for
	 * this process only, not for a program it starts (a shell's own
	 * unsetenv, as bash's, may leave them in its children's environment). */
	char launch[48];
	snprintf(launch, sizeof launch, "%lld:%d", (long long)launch_ns, (int)getpid());
	setenv("SCOPE_PROFILER_LAUNCH_NS", launch, 1);
	snprintf(launch, sizeof launch, "%lld:%d", (long long)cpu, (int)getpid());
	setenv("SCOPE_PROFILER_LAUNCH_CPU_NS", launch, 1);
	/* The program is the root of a process tree whose id the finish knows
	 * too (output-path.h): a wrapper that records nothing (a shell script,
	 * timeout) leaves its program's profile to be named by the finish. */
	const char *tmpl = getenv("SCOPE_PROFILER_OUTPUT");
	char *root = NULL;
	if (tree_hex[0] && tmpl && asprintf(&root, "%d:%s %s", (int)getpid(), tree_hex, tmpl) >= 0)
		setenv(SP_ROOT_ENV, root, 1);
	free(root);
	execvp(argv[0], argv);
	int e = errno;
	fprintf(stderr, "scope-profiler run: cannot run %s: %s\n", argv[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

/* The finish in a child in a process group of its own, set from both
 * sides of the fork so that no signal to the launcher's group can reach it
 * first: orted sends the launcher's group SIGKILL 1 s after SIGTERM, and
 * the finish must outlive that. It ignores further termination signals (a
 * batch system signals every process of the job); SIGKILL stops it.
 * Returns its pid, or -1 (then finish in place). */
static pid_t start_finisher(const struct finish_job *j)
{
	fflush(NULL);
	pid_t f = fork();
	if (f > 0)
		setpgid(f, f);
	if (f != 0)
		return f;
	setpgid(0, 0);
	for (size_t i = 0; i < N_FORWARDED; i++)
		signal(forwarded[i], terminating(forwarded[i]) ? SIG_IGN : SIG_DFL);
	signal(SIGPIPE, SIG_IGN); /* mpirun may be gone: its pipes with it */
	signal(SIGTTOU, SIG_IGN); /* a background group writing to a terminal */
	_exit(finish_job_run(j));
}

static void reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* SCOPE_PROFILER_MERGE_WAIT (set by --merge-wait too): a duration. */
static int64_t merge_wait_ns(void)
{
	const char *v = getenv("SCOPE_PROFILER_MERGE_WAIT");
	int64_t ns;

	if (!v || !*v)
		return 10000000000LL;
	if (sp_duration_parse(v, &ns) == 0)
		return ns;
	fprintf(stderr, "scope-profiler run: ignoring SCOPE_PROFILER_MERGE_WAIT=%s (not a "
		"duration: " SP_DURATION_EXAMPLES "), using 10s\n", v);
	return 10000000000LL;
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);
	return v && (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") ||
		     !strcasecmp(v, "true"));
}

/* Why run forks instead of exec'ing: to finish the job when the program
 * cannot. The finisher is started with the program and waits for its end
 * (a pidfd), so that nothing is left to do at the signal but pass it on:
 * under load the launcher may not run again before orted's SIGKILL. The
 * launcher waits for the program, passing signals on, says at the first
 * termination signal what happens, then waits for the finisher. Without
 * pidfds the finisher starts after the program's end. Exit as the program
 * did: its code, or its signal raised again. */
static int launch(char **argv, bool verbose, bool is_static)
{
	struct finish_job j = { .program = argv[0], .pidfd = -1, .verbose = verbose,
				.is_static = is_static };
	j.output = getenv("SCOPE_PROFILER_OUTPUT");
	if (!j.output || !*j.output)
		j.output = "profiling_data.h5";
	j.quiet = env_on("SCOPE_PROFILER_QUIET");
	j.wait_ns = merge_wait_ns();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	j.started_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	finish_job_from_env(&j);
	sigset_t mask;
	catch_signals(&mask);
	/* The tree's id: the program's pid, known after the fork, and this. */
	char tree[SP_TREE_ID_MAX] = "", *hex = "";
	if (!disabled()) {
		sp_output_tree_id(getpid(), tree);
		hex = strchr(tree, ':') + 1;
	}
	pid_t pid = spawn(argv, &mask, j.mpi_env, hex);
	if (pid < 0) {
		restore_signals(&mask);
		fprintf(stderr, "scope-profiler run: cannot start %s: %s\n", argv[0], strerror(errno));
		return 126;
	}
	program_group = j.mpi_env;
	program_pid = j.pid = pid;
	if (hex[0])
		snprintf(j.tree, sizeof j.tree, "%d:%s", (int)pid, hex);
	/* The template's %p is the program's pid (prepare_output left it). */
	char *named = NULL, host[256];
	if (strchr(j.output, '%')) {
		struct sp_path_values v;
		sp_path_values_init(&v, host, sizeof host);
		v.pid = pid;
		if (sp_output_path_expand(j.output, &v, &named) == 0)
			j.output = named;
	}
	pid_t fin = -1;
	j.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (j.pidfd >= 0) {
		fin = start_finisher(&j);
		close(j.pidfd);
		j.pidfd = -1;
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
	int status = 0;
	bool noticed = false;
	for (;;) {
		pid_t w = waitpid(pid, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			status = 126 << 8;
			break;
		}
		if (first_signal && !noticed) {
			noticed = true;
			if (!j.quiet && (j.rank <= 0 || verbose))
				finish_notice(&j, first_signal);
		}
	}
	program_pid = 0;
	if (first_signal && !noticed && !j.quiet && (j.rank <= 0 || verbose))
		finish_notice(&j, first_signal);
	if (fin < 0 && finish_needed(&j) && (fin = start_finisher(&j)) < 0)
		finish_job_run(&j);
	if (fin > 0)
		reap(fin, &(int){ 0 });
	/* Not after a signal, nor when the program could not be started (126,
	 * 127: said already, by us or by the shell that could not find it). */
	if (WIFEXITED(status) && WEXITSTATUS(status) != 126 && WEXITSTATUS(status) != 127 &&
	    !first_signal)
		finish_adopt(&j);
	free(named);
	if (!WIFSIGNALED(status))
		return WIFEXITED(status) ? WEXITSTATUS(status) : 126;
	/* Killed by S: end by S too (no core file of ours), as a shell reports. */
	int sig = WTERMSIG(status);
	fflush(NULL);
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	return 128 + sig;
}

int cmd_run(int argc, char **argv)
{
	launch_ns = launcher_start_ns();
	struct option longopts[N_RUN_OPTIONS + 5];
	char shortopts[2 * N_RUN_OPTIONS + 5] = "+hv";
	for (size_t i = 0; i < N_RUN_OPTIONS; i++) {
		const struct run_option *o = &run_options[i];
		bool arg = o->kind != V_ON && o->kind != V_OFF;
		longopts[i] = (struct option){ o->name, arg ? required_argument : no_argument, NULL,
					       OPT_TABLE + (int)i };
		if (o->short_name) {
			size_t l = strlen(shortopts);
			shortopts[l] = (char)o->short_name;
			shortopts[l + 1] = arg ? ':' : '\0';
			shortopts[l + 2] = '\0';
		}
	}
	longopts[N_RUN_OPTIONS] = (struct option){ "library", required_argument, NULL, OPT_LIBRARY };
	longopts[N_RUN_OPTIONS + 1] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[N_RUN_OPTIONS + 2] = (struct option){ "verbose", no_argument, NULL, OPT_VERBOSE };
	longopts[N_RUN_OPTIONS + 3] = (struct option){ "mpi", required_argument, NULL, OPT_MPI };
	longopts[N_RUN_OPTIONS + 4] = (struct option){ 0 };

	const char *library = getenv("SCOPE_PROFILER_LIBRARY");
	const char *mpi_family = NULL;
	bool verbose = false;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct run_option *o = NULL;
		if (opt == 'h') {
			fputs(help, stdout);
			return EXIT_OK;
		} else if (opt == OPT_LIBRARY) {
			library = optarg;
			continue;
		} else if (opt == OPT_MPI) {
			mpi_family = optarg;
			continue;
		} else if (opt == OPT_VERBOSE || opt == 'v') {
			verbose = true;
			continue;
		} else if (opt >= OPT_TABLE && opt < OPT_TABLE + (int)N_RUN_OPTIONS) {
			o = &run_options[opt - OPT_TABLE];
		} else {
			for (size_t i = 0; i < N_RUN_OPTIONS && !o; i++)
				if (run_options[i].short_name == opt)
					o = &run_options[i];
		}
		if (!o) /* names the option (cli-common.c) */
			return cli_usage_error(&(struct cli_common){ .command = "run" },
					       "invalid option");
		if (o->kind == V_DURATION && strcmp(o->variable, "MERGE_WAIT") &&
		    sp_duration_parse_per_call(optarg, &(int64_t){ 0 }) == -EDOM) {
			fprintf(stderr, "scope-profiler run: --%s %s is ambiguous: a bare number is "
				"seconds, and %s s per call is surely meant as %sns or %sus; write the "
				"unit\n", o->name, optarg, optarg, optarg, optarg);
			return EXIT_USAGE;
		}
		if (!valid_value(o->kind, optarg)) {
			if (o->kind == V_DURATION)
				fprintf(stderr, "scope-profiler run: invalid duration '%s' for --%s "
					"(use " SP_DURATION_EXAMPLES ")\n", optarg, o->name);
			else
				fprintf(stderr, "scope-profiler run: invalid value '%s' for --%s\n",
					optarg, o->name);
			return EXIT_USAGE;
		}
		if (set_variable(o, optarg) < 0) {
			fprintf(stderr, "scope-profiler run: %s\n", strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "scope-profiler run: no program given\n%s", usage);
		return EXIT_USAGE;
	}
	if (!disabled() && sp_is_mpi_launcher(argv[optind])) {
		/* Before prepare_output: a refused run leaves no file moved.
		 * With the profiler switched off run only runs the program. */
		fprintf(stderr, "scope-profiler run: %s is an MPI launcher: put scope-profiler run "
			"after it, so that every rank is profiled and the ranks' data merged into one "
			"file: %s -n 4 scope-profiler run [options] -- ./app\n", argv[optind],
			argv[optind]);
		return EXIT_USAGE;
	}
	if (prepare_output() != 0)
		return EXIT_USAGE;
	char lib[PATH_MAX];
	int ret = find_library(library, lib, sizeof lib);
	if (ret < 0) {
		fprintf(stderr, "scope-profiler run: cannot use library %s: %s\n", library, strerror(-ret));
		return EXIT_USAGE;
	}
	if (sp_mpi_family_library(argv[optind], mpi_family, library && *library, lib, sizeof lib,
				  verbose) < 0)
		return EXIT_USAGE;
	if ((ret = set_preload(lib)) < 0) {
		fprintf(stderr, "scope-profiler run: %s\n", strerror(-ret));
		return EXIT_USAGE;
	}
	/* Said before it runs: afterwards "nothing was instrumented" would
	 * point at the compile flags, which are not the cause. */
	bool is_static = !disabled() && sp_program_is_static(argv[optind]);
	if (is_static)
		fprintf(stderr, "scope-profiler run: warning: %s is statically linked: the profiler "
			"is loaded by LD_PRELOAD, which a static program never reads, so nothing of it "
			"is recorded; link it dynamically (without -static)\n", argv[optind]);
	return launch(argv + optind, verbose, is_static);
}
