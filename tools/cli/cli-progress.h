/* SPDX-License-Identifier: MIT */
/*
 * Terminal progress for slow reads: "reading FILE…" on stderr once an
 * operation has taken more than a second, only when stderr is a terminal.
 */
#ifndef SP_CLI_PROGRESS_H
#define SP_CLI_PROGRESS_H

struct cli_progress;

/**
 * Start watching an operation on `path`. Returns NULL (and prints nothing,
 * ever) when stderr is not a terminal or the watcher cannot start;
 * cli_progress_stop accepts NULL.
 */
struct cli_progress *cli_progress_start(const char *path);

/** Stop watching; erase the message if one was printed. Frees p. */
void cli_progress_stop(struct cli_progress *p);

#endif /* SP_CLI_PROGRESS_H */
