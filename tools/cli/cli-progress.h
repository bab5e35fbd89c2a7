/* SPDX-License-Identifier: MIT */
/*
 * Terminal progress for slow commands (report, plot, export, tree, events,
 * and every file read): "scope-profiler: WHAT… N s" on stderr once an
 * operation has taken more than a second, only when stderr is a terminal,
 * erased when the operation ends. The one progress module of the CLI.
 */
#ifndef SP_CLI_PROGRESS_H
#define SP_CLI_PROGRESS_H

struct cli_progress;

/** The command writes to stdout as it goes: stay silent when stdout is a
 * terminal too (the output itself shows progress, and must not be mixed). */
#define CLI_PROGRESS_STREAMS_STDOUT 1u

/**
 * Start watching an operation described by `what` ("writing report.html").
 * Returns NULL, and prints nothing ever, when stderr is not a terminal,
 * when another operation is being watched (the outer one covers it), or
 * when the watcher cannot start. cli_progress_stop accepts NULL.
 * The delay is one second; SCOPE_PROFILER_PROGRESS_DELAY_MS overrides it
 * (for tests).
 */
struct cli_progress *cli_progress_begin(const char *what, unsigned flags);

/** cli_progress_begin("reading PATH", 0). */
struct cli_progress *cli_progress_start(const char *path);

/** Stop watching; erase the message if one was printed. Frees p. */
void cli_progress_stop(struct cli_progress *p);

#endif /* SP_CLI_PROGRESS_H */
