/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler run: run a program with libscope-profiler.so preloaded and
 * its SCOPE_PROFILER_* configuration set from options (one option per
 * variable, docs/HOOKS.md). Works per rank under mpirun: the launcher execs
 * the program, and neither it nor mpirun/orted is ever profiled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli-common.h"
#include "sp-config.h"
#include "commands.h"
#include "output-path.h" /* the preload's own path rules (docs/ARCHITECTURE.md) */

static const char usage[] =
	"usage: scope-profiler run [-o FILE] [--include RE] [--exclude RE]\n"
	"                          [--min-duration T] [--max-depth N]\n"
	"                          [--throttle-calls N] [--throttle-mean T]\n"
	"                          [--throttle-timing sampled|exact|estimate] [--throttle-sample K] [--patch]\n"
	"                          [--max-memory SIZE] [--label L] [--clock C]\n"
	"                          [--callsites N] [--no-functions] [--no-mpi]\n"
	"                          [-q] [--print-config] [--library PATH]\n"
	"                          -- PROGRAM [ARGS...]\n"
	"Run PROGRAM with the profiler preloaded. Durations: 250ns, 10us, 1.5ms, 2s;\n"
	"sizes: 64K, 256M, 1G; regexes match demangled function names from the start.\n";

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
};
#define N_RUN_OPTIONS (sizeof run_options / sizeof run_options[0])
enum { OPT_LIBRARY = OPT_FIRST_COMMAND_SPECIFIC, OPT_TABLE };

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
	static const char *const durations[] = { "", "ns", "us", "ms", "s" };
	static const char *const sizes[] = { "", "B", "K", "KiB", "M", "MiB", "G", "GiB" };
	char *end;
	switch (kind) {
	case V_INT:
		errno = 0;
		(void)strtoll(v, &end, 10);
		return end != v && !*end && !errno;
	case V_DURATION:
		return valid_number(v, durations, 5, false);
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

int cmd_run(int argc, char **argv)
{
	struct option longopts[N_RUN_OPTIONS + 3];
	char shortopts[2 * N_RUN_OPTIONS + 4] = "+h";
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
	longopts[N_RUN_OPTIONS + 2] = (struct option){ 0 };

	const char *library = getenv("SCOPE_PROFILER_LIBRARY");
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct run_option *o = NULL;
		if (opt == 'h') {
			fputs(usage, stdout);
			return EXIT_OK;
		} else if (opt == OPT_LIBRARY) {
			library = optarg;
			continue;
		} else if (opt >= OPT_TABLE && opt < OPT_TABLE + (int)N_RUN_OPTIONS) {
			o = &run_options[opt - OPT_TABLE];
		} else {
			for (size_t i = 0; i < N_RUN_OPTIONS && !o; i++)
				if (run_options[i].short_name == opt)
					o = &run_options[i];
		}
		if (!o) {
			fprintf(stderr, "%s(see 'scope-profiler run --help')\n", usage);
			return EXIT_USAGE;
		}
		if (!valid_value(o->kind, optarg)) {
			fprintf(stderr, "scope-profiler run: invalid value '%s' for --%s\n", optarg, o->name);
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
	if (prepare_output() != 0)
		return EXIT_USAGE;
	char lib[PATH_MAX];
	int ret = find_library(library, lib, sizeof lib);
	if (ret < 0) {
		fprintf(stderr, "scope-profiler run: cannot use library %s: %s\n", library, strerror(-ret));
		return EXIT_USAGE;
	}
	if ((ret = set_preload(lib)) < 0) {
		fprintf(stderr, "scope-profiler run: %s\n", strerror(-ret));
		return EXIT_USAGE;
	}
	/* The library measures its start-up from here (exec, loading it and
	 * its dependencies, its constructor): metadata profiler_startup_ns. */
	struct timespec ts;
	char launch[32];
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(launch, sizeof launch, "%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	setenv("SCOPE_PROFILER_LAUNCH_NS", launch, 1);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "scope-profiler run: cannot run %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
