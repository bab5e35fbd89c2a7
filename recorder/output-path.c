/* SPDX-License-Identifier: MIT */
/*
 * The output path's rules (output-path.h, docs/CONFIG.md): placeholders,
 * the absolute form, the write check, the $TMPDIR fallback, an exec'd
 * child's name and the rotation of a previous file. Pure functions over
 * paths and the environment: used by the preload at start and by
 * `scope-profiler run` before it starts the program.
 */
#define _GNU_SOURCE
#include "output-path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *sp_job_id(const char **ret_scheduler)
{
	static const struct { const char *var, *name; } jobs[] = {
		{ "SLURM_JOB_ID", "slurm" }, { "PBS_JOBID", "pbs" },
		{ "LSB_JOBID", "lsf" }, { "FLUX_JOB_ID", "flux" },
	};
	for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
		const char *v = getenv(jobs[i].var);
		if (v && *v) {
			if (ret_scheduler)
				*ret_scheduler = jobs[i].name;
			return v;
		}
	}
	return NULL;
}

const char *sp_job_step(void)
{
	const char *v = getenv("SLURM_STEP_ID");
	if (!v || !*v)
		v = getenv("SLURM_STEPID");
	return v && *v ? v : NULL;
}

int sp_launcher_rank(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID",
	};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		if (!v || !*v)
			continue;
		long r = strtol(v, &end, 10);
		if (*end == '\0' && r >= 0 && r <= INT_MAX)
			return (int)r;
	}
	return -1;
}

void sp_path_values_init(struct sp_path_values *v, char *host, size_t host_size)
{
	memset(v, 0, sizeof *v);
	v->pid = getpid();
	v->rank = sp_launcher_rank();
	if (v->rank < 0)
		v->rank = 0;
	if (gethostname(host, host_size) != 0)
		snprintf(host, host_size, "localhost");
	host[host_size - 1] = '\0';
	v->host = host;
	v->job = sp_job_id(NULL);
	v->start_s = (int64_t)time(NULL);
}

/* Append s to the buffer; with escape, a '%' in s is doubled (the result
 * is a template again). */
static void put(FILE *f, const char *s, bool escape)
{
	for (; *s; s++) {
		if (escape && *s == '%')
			fputc('%', f);
		fputc(*s, f);
	}
}

int sp_output_path_expand(const char *tmpl, const struct sp_path_values *v, char **ret)
{
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	if (!f)
		return -ENOMEM;
	bool tpl = v->keep_pid; /* the result is expanded again by the program */
	char num[32];
	for (const char *c = tmpl; *c; c++) {
		if (c[0] != '%' || !c[1]) {
			fputc(*c, f);
			continue;
		}
		c++;
		switch (*c) {
		case 'p':
			if (tpl) {
				fputs("%p", f);
			} else {
				snprintf(num, sizeof num, "%d", (int)v->pid);
				fputs(num, f);
			}
			break;
		case 'r':
			if (tpl) {
				fputs("%r", f);
			} else {
				snprintf(num, sizeof num, "%d", v->rank);
				fputs(num, f);
			}
			break;
		case 'h':
			put(f, v->host ? v->host : "localhost", tpl);
			break;
		case 'j':
			put(f, v->job ? v->job : "nojob", tpl);
			break;
		case 't': {
			time_t t = (time_t)v->start_s;
			struct tm tm;
			gmtime_r(&t, &tm);
			strftime(num, sizeof num, "%Y%m%dT%H%M%SZ", &tm);
			fputs(num, f);
			break;
		}
		case '%':
			fputs(tpl ? "%%" : "%", f);
			break;
		default: /* not a placeholder: kept as written */
			fputc('%', f);
			fputc(*c, f);
			break;
		}
	}
	if (fclose(f) != 0) {
		free(out);
		return -ENOMEM;
	}
	*ret = out;
	return 0;
}

/* Absolute against the current directory; escape: the directory's '%'
 * doubled, for a template. */
static int absolute(const char *path, bool escape, char **ret)
{
	if (path[0] == '/') {
		*ret = strdup(path);
		return *ret ? 0 : -ENOMEM;
	}
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return -errno;
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	if (f) {
		put(f, cwd, escape);
		if (strcmp(cwd, "/") != 0)
			fputc('/', f);
		fputs(path[0] == '.' && path[1] == '/' ? path + 2 : path, f);
	}
	free(cwd);
	if (!f || fclose(f) != 0) {
		free(out);
		return -ENOMEM;
	}
	*ret = out;
	return 0;
}

int sp_output_path_absolute(const char *path, char **ret)
{
	return absolute(path, false, ret);
}

int sp_output_template_absolute(const char *tmpl, char **ret)
{
	return absolute(tmpl, true, ret);
}

int sp_output_path_check(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return 0; /* /dev/null, a FIFO: no probe beside it (the library says it records nothing) */
	char *probe = NULL;
	if (asprintf(&probe, "%s.spill.pid%d", path, (int)getpid()) < 0)
		return -ENOMEM;
	int ret = 0;
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		unlink(probe);
	} else if (errno != EEXIST) { /* EEXIST: the directory is there */
		ret = -errno;
	}
	free(probe);
	return ret;
}

/* Split path's file name at its last '.' (not a leading one): *ret_ext
 * points at the extension or at the terminating '\0'. */
static const char *extension(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	return dot && dot != base ? dot : path + strlen(path);
}

static int with_infix(const char *path, const char *infix, char **ret)
{
	const char *ext = extension(path);
	if (asprintf(ret, "%.*s.%s%s", (int)(ext - path), path, infix, ext) < 0)
		return -ENOMEM;
	return 0;
}

int sp_output_path_for_pid(const char *path, pid_t pid, char **ret)
{
	char infix[32];
	snprintf(infix, sizeof infix, "pid%d", (int)pid);
	return with_infix(path, infix, ret);
}

/* What follows <stem>.pid<N><ext> in name, a file name in path's
 * directory (N in *ret_pid), or NULL when name is not of that form. */
static const char *after_pid_name(const char *path, const char *name, pid_t *ret_pid)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *ext = extension(path);
	size_t stem = (size_t)(ext - base), extlen = strlen(ext);
	if (strncmp(name, base, stem) != 0 || strncmp(name + stem, ".pid", 4) != 0)
		return NULL;
	const char *d = name + stem + 4, *e = d;
	long pid = 0;
	while (*e >= '0' && *e <= '9' && e - d < 10)
		pid = pid * 10 + (*e++ - '0');
	if (e == d || *d == '0' || strncmp(e, ext, extlen) != 0 || pid > INT_MAX)
		return NULL;
	*ret_pid = (pid_t)pid;
	return e + extlen;
}

bool sp_output_path_is_for_pid(const char *path, const char *name, pid_t *ret_pid)
{
	const char *rest = after_pid_name(path, name, ret_pid);
	return rest && !*rest;
}

int sp_output_path_for_rank(const char *path, int rank, char **ret)
{
	char infix[32];
	snprintf(infix, sizeof infix, "rank%d", rank);
	return with_infix(path, infix, ret);
}

bool sp_output_template_per_process(const char *tmpl)
{
	for (const char *c = tmpl; *c; c++) {
		if (c[0] != '%' || !c[1])
			continue;
		c++;
		if (*c == 'p' || *c == 'r')
			return true;
	}
	return false;
}

int sp_output_path_fallback(const char *path, char **ret)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || dir[0] != '/')
		dir = "/tmp";
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *ext = extension(base);
	int stem = (int)(ext - base), extlen = (int)strlen(ext);
	if (stem > 64) /* a name too long for its directory must fit here */
		stem = 64;
	if (extlen > 16)
		extlen = 0;
	char *name = NULL;
	if (asprintf(&name, "%s/scope-profiler-%.*s.XXXXXX%.*s", dir, stem, base, extlen,
		     ext) < 0)
		return -ENOMEM;
	/* mkostemps: O_CREAT | O_EXCL, mode 0600, so an existing name or a
	 * planted symbolic link is never followed. */
	int fd = mkostemps(name, extlen, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(name);
		return -e;
	}
	close(fd);
	*ret = name;
	return 0;
}

/* Move from to to without ever replacing to: renameat2(RENAME_NOREPLACE),
 * or link + unlink where the file system lacks it. 0 or -errno. */
int sp_output_path_move(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (link(from, to) != 0)
		return -errno;
	unlink(from);
	return 0;
}

int sp_output_path_rotate(const char *path, char **ret_moved)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	for (unsigned n = 1; n < 100000; n++) {
		char infix[16], *to = NULL;
		snprintf(infix, sizeof infix, "%u", n);
		if (with_infix(path, infix, &to) < 0)
			return -ENOMEM;
		int ret = sp_output_path_move(path, to);
		if (ret == 0) {
			*ret_moved = to;
			return 1;
		}
		free(to);
		if (ret == -ENOENT) /* moved away meanwhile: nothing to keep */
			return 0;
		if (ret != -EEXIST)
			return ret;
	}
	return -EEXIST;
}

void sp_output_tree_id(pid_t pid, char buf[SP_TREE_ID_MAX])
{
	uint64_t r;
	struct timespec ts;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) * 0x9e3779b97f4a7c15ull ^
		    (uint64_t)pid << 32;
	}
	snprintf(buf, SP_TREE_ID_MAX, "%d:%016llx", (int)pid, (unsigned long long)r);
}

/* suffix with each "%p" replaced by pid, into buf. */
static bool suffix_for(const char *suffix, pid_t pid, char *buf, size_t n)
{
	size_t at = 0;
	for (const char *c = suffix; *c; c++) {
		int w = c[0] == '%' && c[1] == 'p' ? snprintf(buf + at, n - at, "%d", (int)pid)
						  : snprintf(buf + at, n - at, "%c", *c);
		if (w < 0 || (size_t)w >= n - at)
			return false;
		at += (size_t)w;
		c += c[0] == '%' && c[1] == 'p';
	}
	buf[at] = '\0';
	return true;
}

size_t sp_output_tree_files(const char *path, const char *suffix, int64_t since_s,
			    bool (*ours)(int fd, void *ctx), void *ctx, char **found, size_t max,
			    pid_t *ret_pid)
{
	const char *slash = strrchr(path, '/');
	for (size_t i = 0; i < max; i++)
		found[i] = NULL;
	*ret_pid = 0;
	if (!slash)
		return 0;
	char *dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	DIR *d = dir ? opendir(dir) : NULL;
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		pid_t pid;
		struct stat st;
		char want[64];
		const char *rest = after_pid_name(path, e->d_name, &pid);
		if (!rest || !suffix_for(suffix, pid, want, sizeof want) || strcmp(rest, want) != 0)
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		bool take = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
			    st.st_mtim.tv_sec >= since_s - 2 && ours(fd, ctx);
		close(fd);
		if (!take)
			continue;
		if (n < max && asprintf(&found[n], "%s/%s", slash == path ? "" : dir, e->d_name) < 0)
			found[n] = NULL;
		if (!n)
			*ret_pid = pid;
		n++;
	}
	if (d)
		closedir(d);
	free(dir);
	return n;
}

size_t sp_output_adopt(const char *path, int64_t since_s, const char *who,
		       bool (*ours)(int fd, void *ctx), void *ctx, char *msg, size_t msg_size,
		       int *ret_err)
{
	enum { LISTED = 4 };
	*ret_err = 0;
	msg[0] = '\0';
	char *found[LISTED];
	pid_t first_pid;
	size_t n = sp_output_tree_files(path, "", since_s, ours, ctx, found, LISTED, &first_pid);
	if (n == 1 && found[0] && !(*ret_err = sp_output_path_move(found[0], path)))
		snprintf(msg, msg_size, "%s recorded nothing: %s is the profile of the program it "
			 "started (pid %d), which wrote it as %s", who, path, (int)first_pid, found[0]);
	else if (n == 1 && found[0])
		snprintf(msg, msg_size, "%s recorded nothing; the program it started wrote its "
			 "profile as %s, which could not be named %s: %s", who, found[0], path,
			 strerror(-*ret_err));
	else if (n > 1)
		snprintf(msg, msg_size, "%s recorded nothing; the %zu programs it started wrote "
			 "their own profiles: %s%s%s%s%s%s%s%s (no %s is written)", who, n,
			 found[0] ? found[0] : "", found[1] ? ", " : "", found[1] ? found[1] : "",
			 found[2] ? ", " : "", found[2] ? found[2] : "", found[3] ? ", " : "",
			 found[3] ? found[3] : "", n > LISTED ? ", ..." : "", path);
	for (size_t i = 0; i < LISTED; i++)
		free(found[i]);
	return n;
}
