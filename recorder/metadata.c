/* SPDX-License-Identifier: MIT */
/*
 * Metadata collection: the keys of reference §1.2 that make sense for a
 * native run (host, CPU model, parallelism, environment, Slurm, modules),
 * plus source="native", source_language="c" and our version.
 */
#define _GNU_SOURCE
#include "metadata.h"

#include <dlfcn.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "output-path.h"
#include "sp-config.h"
#include "sp-format.h"

extern char **environ;

/* HDF5 attributes are capped at 64 KiB; upstream clips at 60 000 chars. */
#define MAX_VALUE 60000
#define TRUNCATED "...[truncated]"

static struct sp_run_meta_item *slot(struct sp_run_meta *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->items[i].key, key) == 0) {
			struct sp_run_meta_item *it = &m->items[i];
			free(it->s);
			for (size_t j = 0; j < it->nlist; j++)
				free(it->list[j]);
			free(it->list);
			char *k = it->key;
			memset(it, 0, sizeof *it);
			it->key = k;
			return it;
		}
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		struct sp_run_meta_item *n = realloc(m->items, cap * sizeof *n);
		if (!n)
			return NULL;
		m->items = n;
		m->cap = cap;
	}
	struct sp_run_meta_item *it = &m->items[m->n];
	memset(it, 0, sizeof *it);
	it->key = strdup(key);
	if (!it->key)
		return NULL;
	m->n++;
	return it;
}

static char *clip(const char *v)
{
	size_t len = strlen(v);
	if (len <= MAX_VALUE)
		return strdup(v);
	char *s = malloc(MAX_VALUE + sizeof TRUNCATED);
	if (s) {
		memcpy(s, v, MAX_VALUE);
		memcpy(s + MAX_VALUE, TRUNCATED, sizeof TRUNCATED);
	}
	return s;
}

int sp_meta_set_int(struct sp_run_meta *m, const char *key, int64_t v)
{
	struct sp_run_meta_item *it = slot(m, key);
	if (!it)
		return -ENOMEM;
	it->type = SP_RUN_META_INT;
	it->i = v;
	return 0;
}

int sp_meta_set_double(struct sp_run_meta *m, const char *key, double v)
{
	struct sp_run_meta_item *it = slot(m, key);
	if (!it)
		return -ENOMEM;
	it->type = SP_RUN_META_DOUBLE;
	it->d = v;
	return 0;
}

int sp_meta_set_str(struct sp_run_meta *m, const char *key, const char *v)
{
	struct sp_run_meta_item *it = slot(m, key);
	if (!it)
		return -ENOMEM;
	it->type = SP_RUN_META_STR;
	it->s = clip(v ? v : "");
	return it->s ? 0 : -ENOMEM;
}

int sp_meta_set_strlist(struct sp_run_meta *m, const char *key, const char *const *v, size_t n)
{
	struct sp_run_meta_item *it = slot(m, key);
	if (!it)
		return -ENOMEM;
	it->type = SP_RUN_META_STRLIST;
	it->list = calloc(n ? n : 1, sizeof *it->list);
	if (!it->list)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		it->list[i] = clip(v[i]);
		if (!it->list[i])
			return -ENOMEM;
		it->nlist++;
	}
	return 0;
}

void sp_meta_free(struct sp_run_meta *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct sp_run_meta_item *it = &m->items[i];
		free(it->key);
		free(it->s);
		for (size_t j = 0; j < it->nlist; j++)
			free(it->list[j]);
		free(it->list);
	}
	free(m->items);
	memset(m, 0, sizeof *m);
}

static void cpu_model(char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) && strncmp(line, "cpu model", 9))
			continue;
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		break;
	}
	fclose(f);
}

/* omp_get_max_threads() if an OpenMP runtime is already loaded, else the
 * first value of OMP_NUM_THREADS, else 1 (upstream's rule). */
static int64_t omp_threads(void)
{
	int (*get_max)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_max_threads");
	if (get_max)
		return get_max();
	const char *e = getenv("OMP_NUM_THREADS");
	long v = e ? strtol(e, NULL, 10) : 0;
	return v > 0 ? v : 1;
}

static int add_modules(struct sp_run_meta *m)
{
	const char *lm = getenv("LOADEDMODULES");
	char *copy = strdup(lm ? lm : "");
	if (!copy)
		return -ENOMEM;
	const char *parts[512];
	size_t n = 0;
	for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok && n < 512;
	     tok = strtok_r(NULL, ":", &save))
		parts[n++] = tok;
	int ret = sp_meta_set_strlist(m, SP_META_MODULES, parts, n);
	free(copy);
	return ret;
}

static int add_environment(struct sp_run_meta *m)
{
	static const char *const keys[] = {
		"PATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "LOADEDMODULES", "MODULEPATH",
		"MODULESHOME", "MODULES_CMD", "MODULES_RUN_QUARANTINE", "PYTHON_HOME",
		"PYTHON_INC", "PYTHON_INCLUDE", "PYTHON_LIB",
	};
	int ret = 0;
	for (size_t i = 0; !ret && i < sizeof keys / sizeof *keys; i++) {
		const char *v = getenv(keys[i]);
		if (v && *v)
			ret = sp_meta_set_str(m, keys[i], v);
	}
	for (char **e = environ; !ret && e && *e; e++) {
		if (strncmp(*e, "SLURM_", 6) && strncmp(*e, "SLURMD_", 7))
			continue;
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		char key[256];
		snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
		ret = sp_meta_set_str(m, key, eq + 1);
	}
	return ret;
}

/* What sp_meta_capture_process() saw at recording start (NULL: not
 * captured, as in `recover` and `merge`, which describe no process). */
static struct {
	char *cmdline;   /* /proc/self/cmdline: arguments separated by '\0' */
	size_t cmdline_bytes;
	char *cwd;
	char *tree;
} start;

void sp_meta_capture_process(const char *tree)
{
	if (start.cwd)
		return;
	start.cwd = getcwd(NULL, 0);
	start.tree = tree && *tree ? strdup(tree) : NULL;
	FILE *f = fopen("/proc/self/cmdline", "re");
	if (!f)
		return;
	char *buf = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&buf, &size);
	char chunk[4096];
	size_t n;
	while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, mem);
	fclose(f);
	if (mem && fclose(mem) == 0) {
		start.cmdline = buf;
		start.cmdline_bytes = size;
	} else {
		free(buf);
	}
}

/* The command line (one string per argument), the job and its step. */
static int add_process(struct sp_run_meta *m)
{
	int ret = 0;
	if (start.cmdline && start.cmdline_bytes) {
		size_t n = 0;
		for (size_t i = 0; i < start.cmdline_bytes; i++)
			n += start.cmdline[i] == '\0';
		if (start.cmdline[start.cmdline_bytes - 1] != '\0')
			n++; /* the last argument without its '\0' (cut short) */
		const char **args = calloc(n, sizeof *args);
		if (!args)
			return -ENOMEM;
		char *end = start.cmdline + start.cmdline_bytes;
		size_t i = 0;
		for (char *a = start.cmdline; a < end && i < n; a += strnlen(a, (size_t)(end - a)) + 1)
			args[i++] = a;
		char *last = NULL; /* a copy of an unterminated last argument */
		if (i && start.cmdline[start.cmdline_bytes - 1] != '\0') {
			last = strndup(args[i - 1], (size_t)(end - args[i - 1]));
			args[i - 1] = last ? last : "";
		}
		ret = sp_meta_set_strlist(m, SP_META_COMMAND_LINE, args, i);
		free(last);
		free(args);
	}
	if (!ret && start.tree)
		ret = sp_meta_set_str(m, SP_META_PROCESS_TREE, start.tree);
	const char *scheduler = NULL, *job = sp_job_id(&scheduler), *step = sp_job_step();
	if (!ret && job)
		ret = sp_meta_set_str(m, SP_META_JOB_ID, job);
	if (!ret && job)
		ret = sp_meta_set_str(m, SP_META_JOB_SCHEDULER, scheduler);
	if (!ret && step)
		ret = sp_meta_set_str(m, SP_META_JOB_STEP, step);
	return ret;
}

static int add_host(struct sp_run_meta *m)
{
	char buf[4096];
	struct utsname u;
	int ret = 0;
	if (gethostname(buf, sizeof buf) == 0)
		ret = sp_meta_set_str(m, SP_META_HOSTNAME, buf);
	struct passwd pw, *pwp = NULL;
	char pwbuf[1024];
	if (!ret && getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &pwp) == 0 && pwp)
		ret = sp_meta_set_str(m, SP_META_USER, pw.pw_name);
	if (!ret && uname(&u) == 0) {
		snprintf(buf, sizeof buf, "%s-%s-%s", u.sysname, u.release, u.machine);
		ret = sp_meta_set_str(m, SP_META_PLATFORM, buf);
		snprintf(buf, sizeof buf, "%s %s %s %s %s", u.sysname, u.nodename, u.release,
			 u.version, u.machine);
		if (!ret)
			ret = sp_meta_set_str(m, SP_META_UNAME, buf);
	}
	cpu_model(buf, sizeof buf);
	if (!ret && buf[0])
		ret = sp_meta_set_str(m, SP_META_CHIP, buf);
	/* The directory the program started in (it may chdir later). */
	if (!ret && start.cwd)
		ret = sp_meta_set_str(m, SP_META_WORKING_DIRECTORY, start.cwd);
	else if (!ret && getcwd(buf, sizeof buf))
		ret = sp_meta_set_str(m, SP_META_WORKING_DIRECTORY, buf);
	return ret;
}

int sp_meta_collect(struct sp_run_meta *m, const struct sp_run_info *run)
{
	char ts[64];
	time_t t = (time_t)run->start_realtime_s;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
	int64_t omp = omp_threads();
	int ret = sp_meta_set_str(m, SP_META_TIMESTAMP, ts);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_START_TIME_NS, run->start_time_ns);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_FINALIZE_TIME_NS, run->finalize_time_ns);
	if (!ret && run->label)
		ret = sp_meta_set_str(m, SP_META_LABEL, run->label);
	if (!ret)
		ret = add_host(m);
	if (!ret)
		ret = add_process(m);
	if (!ret)
		ret = sp_meta_set_str(m, SP_META_VERSION, SP_VERSION);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_OMP_NUM_THREADS, omp);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_MPI_SIZE, run->mpi_size);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_TOTAL_CORES, (int64_t)run->mpi_size * omp);
	if (!ret)
		ret = add_modules(m);
	if (!ret)
		ret = add_environment(m);
	if (!ret)
		ret = sp_meta_set_str(m, SP_META_SOURCE, "native");
	if (!ret)
		ret = sp_meta_set_str(m, SP_META_SOURCE_LANGUAGE, "c");
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_MPI_RANK, run->mpi_rank);
	/* Self-measurement (ours): what the profiler costs on this machine. */
	if (!ret && run->event_cost_ns >= 0)
		ret = sp_meta_set_double(m, SP_META_EVENT_COST_NS, run->event_cost_ns);
	if (!ret && run->call_cost_ns >= 0)
		ret = sp_meta_set_double(m, SP_META_CALL_COST_NS, run->call_cost_ns);
	if (!ret && run->count_cost_ns >= 0)
		ret = sp_meta_set_double(m, SP_META_COUNT_COST_NS, run->count_cost_ns);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_ALLOC_NS, run->alloc_ns);
	if (!ret && run->startup_ns >= 0)
		ret = sp_meta_set_int(m, SP_META_STARTUP_NS, run->startup_ns);
	if (!ret)
		ret = sp_meta_set_int(m, SP_META_FINALIZE_NS, run->finalize_spent_ns);
	if (!ret && run->concurrency > 0)
		ret = sp_meta_set_int(m, SP_META_CONCURRENCY, run->concurrency);
	/* Auto-throttle (docs/HOOKS.md): its mode and thresholds. */
	if (!ret && run->throttle_calls > 0 && run->throttle_timing)
		ret = sp_meta_set_str(m, SP_META_THROTTLE_TIMING, run->throttle_timing);
	if (!ret && run->throttle_calls > 0)
		ret = sp_meta_set_int(m, SP_META_THROTTLE_CALLS, run->throttle_calls);
	if (!ret && run->throttle_calls > 0)
		ret = sp_meta_set_int(m, SP_META_THROTTLE_MEAN_NS, run->throttle_mean_ns);
	if (!ret && run->throttle_calls > 0 && run->throttle_early_calls > 0)
		ret = sp_meta_set_int(m, SP_META_THROTTLE_EARLY_CALLS, run->throttle_early_calls);
	if (!ret && run->throttle_calls > 0 && run->throttle_early_calls > 0)
		ret = sp_meta_set_int(m, SP_META_THROTTLE_EARLY_MEAN_NS, run->throttle_early_mean_ns);
	bool sampled = run->throttle_calls > 0 && run->throttle_timing &&
		       strcmp(run->throttle_timing, "sampled") == 0;
	if (!ret && sampled)
		ret = sp_meta_set_int(m, SP_META_THROTTLE_SAMPLE, run->throttle_sample);
	if (!ret && sampled && run->sample_bias_ns >= 0)
		ret = sp_meta_set_double(m, SP_META_THROTTLE_SAMPLE_BIAS_NS, run->sample_bias_ns);
	return ret;
}
