/* SPDX-License-Identifier: MIT */
/*
 * Shared CLI plumbing: one-line error reporting, the common options, glob
 * expansion of file arguments, opening profiles with readable errors, and
 * number formatting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <string.h>

#include "cli-common.h"
#include "sp-safe-file.h"
#include "cli-progress.h"
#include "table.h"

/* A message naming files and regions is escaped (table.c's rule), so a
 * hostile name can neither reach the terminal raw nor break the line. */
static void vput_escaped(const char *fmt, va_list ap)
{
	char *msg = NULL, *esc;
	int n = vasprintf(&msg, fmt, ap);

	if (n < 0)
		return;
	esc = malloc(4 * (size_t)n + 1);
	if (esc) {
		tbl_escape(esc, 4 * (size_t)n + 1, msg);
		fputs(esc, stderr);
	}
	free(esc);
	free(msg);
}

static void verror(const struct cli_common *c, const char *fmt, va_list ap)
{
	fprintf(stderr, "scope-profiler %s: ", c && c->command ? c->command : "");
	vput_escaped(fmt, ap);
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

/*
 * After getopt_long returned '?' (opterr is 0: main.c), say what was wrong
 * with the argument it stopped at: an unknown option, a missing argument or
 * an argument given to a flag, naming the option as it was written.
 */
static void name_bad_option(void)
{
	const char *a = optind > 0 ? cli_command_argv[optind - 1] : NULL;

	if (!a || a[0] != '-') {
		/* A short option in the middle of a cluster ("-qz"). */
		fprintf(stderr, "unrecognized option '-%c'", optopt);
		return;
	}
	if (a[1] == '-') {
		const char *eq = strchr(a, '=');
		int len = eq ? (int)(eq - a) : (int)strlen(a);

		if (optopt == 0)
			fprintf(stderr, "unrecognized option '%.*s'", len, a);
		else if (eq)
			fprintf(stderr, "option '%.*s' takes no argument", len, a);
		else
			fprintf(stderr, "option '%s' requires an argument", a);
		return;
	}
	/* "-x": unknown, or a known one missing its argument at the end. */
	if (optopt && a[strlen(a) - 1] == optopt && !cli_command_argv[optind])
		fprintf(stderr, "option '-%c' is unknown or requires an argument", optopt);
	else
		fprintf(stderr, "unrecognized option '-%c'", optopt ? optopt : a[1]);
}

int cli_usage_error(const struct cli_common *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "scope-profiler %s: ", c && c->command ? c->command : "");
	if (strcmp(fmt, "invalid option") == 0 && cli_command_argv) {
		name_bad_option();
	} else {
		va_start(ap, fmt);
		vput_escaped(fmt, ap);
		va_end(ap);
	}
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
	free(c->rank_specs);
	for (size_t i = 0; i < c->n_files; i++)
		free(c->files[i]);
	free(c->files);
}

/* Keep the --ranks lists as given, to check them against each file. */
static int add_rank_spec(struct cli_common *c, const char *spec)
{
	size_t old = c->rank_specs ? strlen(c->rank_specs) : 0;
	char *p = realloc(c->rank_specs, old + strlen(spec) + 2);

	if (!p)
		return -1;
	if (old)
		p[old++] = ',';
	strcpy(p + old, spec);
	c->rank_specs = p;
	return 0;
}

int cli_common_option(struct cli_common *c, int opt, const char *arg)
{
	int rc;

	/* The short forms, -i, -e and -r, in every command that takes them. */
	opt = opt == 'i' ? OPT_INCLUDE : opt == 'e' ? OPT_EXCLUDE : opt == 'r' ? OPT_RANKS : opt;
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
		if (rc == 0 && add_rank_spec(c, arg) < 0) {
			cli_error(c, "out of memory");
			return -1;
		}
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

/* Print "0-3, 5" for a sorted list of ranks. */
static void print_rank_list(const uint32_t *ranks, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
			j++;
		fprintf(stderr, "%s%u", i ? ", " : "", ranks[i]);
		if (j > i)
			fprintf(stderr, "%s%u", j == i + 1 ? ", " : "-", ranks[j]);
		i = j + 1;
	}
}

/*
 * A --ranks selection that selects none of a file's ranks is a usage error
 * (exit 2), for every command, as tree's --rank: an empty table with exit 0
 * hid the mistake. A list that selects some of them is taken (runs of
 * different sizes are compared with one list). The lists were checked by
 * the reader when given (c->rank_specs).
 */
static int check_ranks(const struct cli_common *c, const struct sp_reader *r)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(r, &ranks);
	const char *p = c->rank_specs;

	if (!p || !*p)
		return 0;
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (size_t i = 0; i < n; i++)
			if (ranks[i] >= a && ranks[i] <= b)
				return 0;
		p = *end == ',' ? end + 1 : end;
	}
	fprintf(stderr, "scope-profiler %s: --ranks %s selects no rank of %s (", c->command,
		c->rank_specs, sp_reader_path(r));
	if (n == 0)
		fprintf(stderr, "it has no rank with data)\n");
	else {
		fprintf(stderr, "its %s: ", n == 1 ? "rank" : "ranks");
		print_rank_list(ranks, n);
		fputs(")\n", stderr);
	}
	return -1;
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
	if (check_ranks(c, *ret) < 0) {
		sp_reader_destroy(*ret);
		*ret = NULL;
		return EXIT_USAGE;
	}
	return 0;
}

/* Edit distance with transpositions (optimal string alignment): "plto" is
 * one edit from "plot". Names are short (commands, kinds, options). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[64][64];

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

double cli_throttle_early_mean_ns(const struct sp_reader *r)
{
	const struct sp_meta *early = sp_reader_metadata_find(r, "throttle_early_calls");
	const struct sp_meta *bound = sp_reader_metadata_find(r, "throttle_early_mean_ns");
	const struct sp_meta *mean = sp_reader_metadata_find(r, "throttle_mean_ns");
	if (!early || early->type != SP_META_INT || early->i <= 0)
		return -1;
	if (bound && bound->type == SP_META_INT && bound->i >= 0)
		return (double)bound->i;
	if (mean && mean->type == SP_META_INT && mean->i >= 0)
		return (double)mean->i / 100;
	return -1;
}

const char *cli_suggest(const char *name, const char *const *names, size_t n)
{
	const char *best = NULL, *prefix = NULL;
	size_t best_d = SIZE_MAX, n_prefix = 0, len = strlen(name);

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(name, names[i]);

		if (len && strncmp(names[i], name, len) == 0) {
			prefix = names[i];
			n_prefix++;
		}
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	if (n_prefix == 1)
		return prefix;
	/* Close enough to be a typo: at most 2 edits, and under half the name. */
	return best && best_d <= 2 && 2 * best_d < len ? best : NULL;
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

/*
 * A text cell of a CSV file (RFC 4180: quoted when it holds a comma, quote
 * or line break). A cell that starts with = + - @, TAB or CR would be run
 * as a formula by spreadsheets (CSV injection): it is written with a
 * leading ' inside quotes, the rule OWASP gives; readers that care strip it.
 */
void cli_csv_text(FILE *f, const char *s)
{
	bool formula = s && strchr("=+-@\t\r", s[0]) && s[0];

	if (!s)
		s = "";
	if (!formula && !strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}
