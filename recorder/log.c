/* SPDX-License-Identifier: MIT */
/*
 * sp_log(): the "scope-profiler: " lines on stderr, with the debug switch
 * (SCOPE_PROFILER_DEBUG, a comma list of domains) and QUIET for info lines.
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

bool sp_log_debug_on(const char *domain)
{
	const char *list = sp_config.debug;
	if (!list || !*list || strcmp(list, "0") == 0)
		return false;
	if (strcmp(list, "1") == 0 || strcmp(list, "all") == 0)
		return true;
	size_t n = strlen(domain);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, domain, n) == 0)
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

/* stderr at the start: 0 not captured, 1 open (dev, ino), -1 closed. */
static struct {
	int state;
	dev_t dev;
	ino_t ino;
} start_err;

void sp_log_capture_stderr(void)
{
	struct stat st;
	if (fstat(STDERR_FILENO, &st) == 0)
		start_err.dev = st.st_dev, start_err.ino = st.st_ino, start_err.state = 1;
	else
		start_err.state = -1;
}

bool sp_log_stderr_ok(void)
{
	struct stat st;
	if (!start_err.state)
		return true;
	int saved = errno;
	bool ok = start_err.state > 0 && fstat(STDERR_FILENO, &st) == 0 &&
		  st.st_dev == start_err.dev && st.st_ino == start_err.ino;
	errno = saved;
	return ok;
}

void sp_log(enum sp_log_level level, const char *domain, const char *fmt, ...)
{
	if (level == SP_LOG_DEBUG && !sp_log_debug_on(domain))
		return;
	if (level == SP_LOG_INFO && sp_config.quiet)
		return;
	int saved = errno;
	char line[1024];
	int n = level == SP_LOG_DEBUG ? snprintf(line, sizeof line, "scope-profiler: debug: %s: ", domain)
				      : snprintf(line, sizeof line, "scope-profiler: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0) {
		errno = saved;
		return;
	}
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof line - 2)
		len = sizeof line - 2;
	line[len++] = '\n';
	if (!sp_log_stderr_ok()) {
		errno = saved;
		return;
	}
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w; /* nothing better to do when stderr is gone */
	errno = saved;
}
