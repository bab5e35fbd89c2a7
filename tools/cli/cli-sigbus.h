/* SPDX-License-Identifier: MIT */
/*
 * The CLI reads profiles with their event columns mapped from the file
 * (SP_OPEN_MAP_COLUMNS). A file truncated by another process while mapped
 * raises SIGBUS on the next touch of a lost page; this turns that into one
 * error line and exit status 2 instead of a crash.
 */
#ifndef SP_CLI_SIGBUS_H
#define SP_CLI_SIGBUS_H

/* Install the handler (process-wide; call once from main). */
void cli_catch_sigbus(void);

#endif /* SP_CLI_SIGBUS_H */
