/* SPDX-License-Identifier: MIT */
/*
 * Shared CLI plumbing: one-line error reporting, the common options, glob
 * expansion of file arguments, opening profiles with readable errors, and
 * number formatting.
 */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <string.h>

#include "cli-common.h"
#include "sp-safe-file.h"
#include "cli-progress.h"

static void verror(const struct cli_common *c, const char *fmt, va_list ap)
{
	fprintf(stderr, "scope-profiler %s: ", c && c->command ? c->command : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const struct cli_common *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(c, fmt, ap);
	va_end(ap);
}

char **cli_command_argv;

int cli_usage_error(const struct cli_common *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "scope-profiler %s: ", c && c->command ? c->command : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* After getopt's '?', name the argument it stopped at. */
	if (strcmp(fmt, "invalid option") == 0 && cli_command_argv && optind > 0)
		fprintf(stderr, " '%s'", cli_command_argv[optind - 1]);
	/* One line only: point at --help instead of printing the usage. */
	fprintf(stderr, " (see 'scope-profiler %s --help')\n",
		c && c->command ? c->command : "");
	return EXIT_USAGE;
}

int cli_common_init(struct cli_common *c, const char *command,
		    const char *usage)
{
	memset(c, 0, sizeof(*c));
	c->command = command;
	c->usage = usage;
	if (sp_selection_create(&c->sel) < 0) {
		cli_error(c, "out of memory");
		return -1;
	}
	return 0;
}

void cli_common_fini(struct cli_common *c)
{
	sp_selection_destroy(c->sel);
	for (size_t i = 0; i < c->n_files; i++)
		free(c->files[i]);
	free(c->files);
}

int cli_common_option(struct cli_common *c, int opt, const char *arg)
{
	int rc;

	switch (opt) {
	case OPT_JSON:
		c->json = true;
		return 1;
	case OPT_HELP:
		c->help = true;
		return 1;
	case OPT_INCLUDE:
		rc = sp_selection_add_include(c->sel, arg);
		break;
	case OPT_EXCLUDE:
		rc = sp_selection_add_exclude(c->sel, arg);
		break;
	case OPT_RANKS:
		rc = sp_selection_add_ranks(c->sel, arg);
		break;
	default:
		return 0;
	}
	if (rc < 0) {
		cli_usage_error(c, "%s", sp_reader_last_error());
		return -1;
	}
	return 1;
}

static int add_file(struct cli_common *c, const char *path)
{
	char **files = realloc(c->files, (c->n_files + 1) * sizeof(*files));

	if (!files)
		return -1;
	c->files = files;
	c->files[c->n_files] = strdup(path);
	if (!c->files[c->n_files])
		return -1;
	c->n_files++;
	return 0;
}

int cli_collect_files(struct cli_common *c, int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++) {
		glob_t g;

		if (strpbrk(argv[i], "*?[") &&
		    glob(argv[i], 0, NULL, &g) == 0) {
			for (size_t k = 0; k < g.gl_pathc; k++)
				if (add_file(c, g.gl_pathv[k]) < 0) {
					globfree(&g);
					return -1;
				}
			globfree(&g);
			continue;
		}
		/* No match: keep the literal so the error names it. */
		if (add_file(c, argv[i]) < 0)
			return -1;
	}
	return 0;
}

int cli_open(const struct cli_common *c, const char *path,
	     struct sp_reader **ret)
{
	struct cli_progress *progress = cli_progress_start(path);
	/* Mapped: most of loading a big profile is copying it (cli-sigbus.c
	 * reports a file truncated meanwhile). */
	int rc = sp_reader_open_flags(path, c->read_columns ? 0 : SP_OPEN_MAP_COLUMNS,
				      ret);

	cli_progress_stop(progress);
	if (rc < 0) {
		const char *msg = sp_reader_last_error();

		if (msg[0])
			cli_error(c, "%s", msg);
		else
			cli_error(c, "%s: %s", path, strerror(-rc));
		return EXIT_USAGE;
	}
	return 0;
}

/* Shortest round-trip form, as Python's repr() (tools/cli/double-format.cc). */
size_t cli_format_shortest(char *buf, size_t size, double v);

void cli_format_double(char *buf, size_t size, double v)
{
	cli_format_shortest(buf, size, v);
}

size_t cli_display_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/*
 * Outputs that are not regular files (/dev/null, /dev/stdout, a FIFO, a
 * terminal) are written in place. A symlink is followed for that only when
 * it belongs to us or root, as the kernel's protected_symlinks rule has it:
 * one planted by another user is replaced by the rename, never written
 * through. Everything else is written to a temporary created O_EXCL |
 * O_NOFOLLOW with a random name beside the output (common/sp-safe-file.h).
 */
FILE *cli_output_fopen(const char *path, char **tmp)
{
	struct stat st, lst;
	struct sp_safe_file f;
	FILE *out;

	free(*tmp);
	*tmp = NULL;
	if (lstat(path, &lst) == 0 && (!S_ISLNK(lst.st_mode) || lst.st_uid == 0 ||
				       lst.st_uid == geteuid()) &&
	    stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return fopen(path, "w");
	int err = sp_safe_create(&f, path, ".", ".", ".tmp");
	if (err) {
		errno = -err;
		return NULL;
	}
	*tmp = strdup(f.tmp_path);
	out = *tmp ? fdopen(f.fd, "w") : NULL;
	if (out)
		f.fd = -1; /* the stream's now */
	else {
		free(*tmp);
		*tmp = NULL;
		errno = ENOMEM;
	}
	f.committed = out != NULL; /* renamed into place by cli_output_rename */
	sp_safe_close(&f);
	return out;
}

int cli_output_rename(const char *tmp, const char *path)
{
	return tmp ? rename(tmp, path) : 0;
}

void cli_output_discard(const char *tmp)
{
	if (tmp)
		unlink(tmp);
}
