/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the scope-profiler subcommands: error reporting, the
 * common options (--json, --include, --exclude, --ranks), glob expansion of
 * file arguments, opening profiles, a small JSON writer and the summary
 * table renderer.
 */
#ifndef SP_CLI_COMMON_H
#define SP_CLI_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "compiler.h"
#include "format-fixed.h"

#include "scope-profiler-reader.h"

/* Exit codes (DESIGN.md). */
#define EXIT_OK 0
#define EXIT_CHECK_FAILED 1
#define EXIT_USAGE 2

/* Long-option ids of the common options (use in each command's table). */
enum {
	OPT_JSON = 1000,
	OPT_INCLUDE,
	OPT_EXCLUDE,
	OPT_RANKS,
	OPT_HELP,
	OPT_FIRST_COMMAND_SPECIFIC = 1100,
};

#define CLI_COMMON_OPTIONS \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "include", required_argument, NULL, OPT_INCLUDE }, \
	{ "exclude", required_argument, NULL, OPT_EXCLUDE }, \
	{ "ranks", required_argument, NULL, OPT_RANKS }, \
	{ "help", no_argument, NULL, OPT_HELP }

/* The help lines of --include and --exclude (help format: docs/CLI.md). */
#define CLI_HELP_FILTERS \
	"  -i, --include RE      keep regions whose name matches RE (Python re.match;\n" \
	"                        repeatable)\n" \
	"  -e, --exclude RE      drop regions whose name matches RE (repeatable)\n"

struct cli_common {
	const char *command;   /* for messages */
	const char *usage;     /* printed on usage errors / --help */
	bool json;
	bool help;
	struct sp_selection *sel;
	char *rank_specs;      /* the --ranks lists, comma-joined (cli_open checks) */
	char **files;          /* expanded file arguments */
	size_t n_files;
	/* cli_open reads columns into memory instead of mapping them: for
	 * long sessions (tui), where a file rewritten in place by another
	 * program must not end the session with SIGBUS. */
	bool read_columns;
};

/* One-line error on stderr: "scope-profiler <cmd>: message". */
void cli_error(const struct cli_common *c, const char *fmt, ...)
	SP_PRINTF(2, 3);
/* A usage error (one line, pointing at --help); returns EXIT_USAGE. */
/* argv of the running command (set by main.c), for error messages. */
extern char **cli_command_argv;

int cli_usage_error(const struct cli_common *c, const char *fmt, ...)
	SP_PRINTF(2, 3);

int cli_common_init(struct cli_common *c, const char *command,
		    const char *usage);
void cli_common_fini(struct cli_common *c);
/*
 * Handle a common option. Returns 1 if handled, 0 if not a common option,
 * -1 on error (already reported).
 */
int cli_common_option(struct cli_common *c, int opt, const char *arg);
/* Expand the remaining arguments (globs) into c->files. -1 on error. */
int cli_collect_files(struct cli_common *c, int argc, char **argv, int first);

/* A CSV text cell: RFC 4180 quoting, formula cells neutralised with a
 * leading ' (cli-common.c; docs/CLI.md). */
void cli_csv_text(FILE *f, const char *s);

/* Open a profile, reporting failures; returns 0 or EXIT_USAGE. A rank of
 * --ranks that the file does not have is such a failure. */
int cli_open(const struct cli_common *c, const char *path,
	     struct sp_reader **ret);

/*
 * "Did you mean": the one of names[n] that name is a typo (at most 2 edits)
 * or the unique prefix of, or NULL.
 */
const char *cli_suggest(const char *name, const char *const *names, size_t n);

/* The auto-throttle's early decision in a file: its bound on the mean in
 * ns (metadata throttle_early_mean_ns; files before that key used
 * throttle_mean_ns/100), or -1 when the file has no early decision. */
double cli_throttle_early_mean_ns(const struct sp_reader *r);

/* Shortest "%.{15,16,17}g" that round-trips; NaN/inf => "null". */
void cli_format_double(char *buf, size_t size, double v);

/* Number of display columns of a UTF-8 string. */
/*
 * Output files. A new or regular file is written through the temp file
 * *tmp beside it and renamed into place; an existing file that is not a
 * regular one (/dev/null, a FIFO, a terminal, /dev/stdout) is written in
 * place, never replaced: *tmp is freed and set to NULL. The rename and the
 * discard of a failed output do nothing for an output written in place.
 */
FILE *cli_output_fopen(const char *path, char **tmp);
int cli_output_rename(const char *tmp, const char *path);
void cli_output_discard(const char *tmp);

size_t cli_display_width(const char *s);

/* ---- JSON writer ------------------------------------------------------ */

struct json_writer {
	FILE *f;
	int depth;
	bool need_comma[64];
	bool after_key;
	bool pretty;
};

/* A JSON string literal; invalid UTF-8 becomes U+FFFD (json-writer.c). */
void cli_json_escape(FILE *f, const char *s);

void jw_init(struct json_writer *w, FILE *f, bool pretty);
void jw_begin_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
void jw_key(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *s);
void jw_int(struct json_writer *w, long long v);
void jw_double(struct json_writer *w, double v); /* null if not finite */
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);
/* Finish the document with a newline. */
void jw_finish(struct json_writer *w);

/* ---- summary table (summary, inspect) ------------------------------------ */

/*
 * Print the framed summary table. columns: comma-separated keys (NULL for
 * the default layout). Returns 0 or EXIT_USAGE on a bad column name.
 */
int cli_print_summary_table(const struct cli_common *c, FILE *f,
			    struct sp_reader *r, const char *columns,
			    enum sp_sort_key sort);
/* The same table under a title line of the caller's (NULL: "FILE (N ranks)"). */
int cli_print_region_table(const struct cli_common *c, FILE *f,
			   struct sp_reader *r, const char *columns,
			   enum sp_sort_key sort, const char *title);

#endif /* SP_CLI_COMMON_H */
