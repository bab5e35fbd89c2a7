/* SPDX-License-Identifier: MIT */
/*
 * The recorder's one way to say something on stderr. Every line starts with
 * "scope-profiler: "; debug lines add "debug: <domain>: " and are printed only
 * for the domains SCOPE_PROFILER_DEBUG names ("1"/"all": every domain).
 */
#ifndef SP_LOG_H
#define SP_LOG_H

#include <stdbool.h>

#include "compiler.h"

enum sp_log_level {
	SP_LOG_DEBUG, /* only with SCOPE_PROFILER_DEBUG naming the domain */
	SP_LOG_INFO,  /* what the run produced; SCOPE_PROFILER_QUIET=1 silences it */
	SP_LOG_WARN,  /* something did not work; the run goes on */
};

/*
 * One line: formatted into a stack buffer (longer lines are cut) and written
 * with one write(2) to stderr, so no stdio lock or allocation is taken in the
 * middle of the application's calls; errno is preserved. vsnprintf is not on
 * POSIX's async-signal-safe list: signal handlers keep their own
 * write(2)-only output (recorder/spill.c, preload/signals.c).
 * @domain  short name of the part speaking ("spill", "patch", "config", ...)
 */
SP_HIDDEN void sp_log(enum sp_log_level level, const char *domain, const char *fmt, ...)
	SP_PRINTF(3, 4);

/*
 * Whether stderr is still the stderr the process started with (the same
 * open file: device and inode, as at sp_log_capture_stderr). A program
 * may close it (GNU tools do at exit, before our destructor writes the
 * file) and open something else that gets descriptor 2: a line written
 * then would go into that file. Without a capture (the CLI): true.
 * Async-signal-safe (fstat), for the signal handlers' own lines.
 */
SP_HIDDEN bool sp_log_stderr_ok(void);
/* Remember stderr as it is now (the library's start). */
SP_HIDDEN void sp_log_capture_stderr(void);

/* Whether debug lines of `domain` are printed (to skip work done only for them). */
SP_HIDDEN bool sp_log_debug_on(const char *domain);

#endif /* SP_LOG_H */
