/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler recover: turn the spill files of a killed run into one
 * schema-2 file marked partial. Loading, writing and the command line are
 * shared with merge (rank-inputs.c). A complete temporary output left by a
 * finalize killed between its write and its rename is adopted instead.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "rank-inputs.h"
#include "scope-profiler-reader.h"
#include "sp-spill.h"

/* The writer's temporary for OUT written by process pid:
 * DIR/.BASE.PID.<random>.tmp (recorder/writer.c); the first found. */
static char *temp_of(const char *out, long pid)
{
	char *d = strdup(out), *b = strdup(out), *pre = NULL, *t = NULL;
	const char *dn = NULL;
	DIR *dir = NULL;
	if (d && b && asprintf(&pre, ".%.200s.%ld.", basename(b), pid) >= 0)
		dir = opendir(dn = dirname(d));
	else
		pre = NULL;
	for (struct dirent *e; dir && !t && (e = readdir(dir));) {
		size_t n = strlen(e->d_name), np = strlen(pre);
		if (n > np + 4 && strncmp(e->d_name, pre, np) == 0 &&
		    strcmp(e->d_name + n - 4, ".tmp") == 0 &&
		    asprintf(&t, "%s/%s", dn, e->d_name) < 0)
			t = NULL;
	}
	if (dir)
		closedir(dir);
	free(pre);
	free(d);
	free(b);
	return t;
}

/* For a spill file OUT.spill.*: the temporary output its process would
 * have renamed to OUT (NULL when not a spill file or none exists). */
static char *temp_beside(const char *spill)
{
	const char *s = strstr(spill, SP_SPILL_SUFFIX);
	struct sp_spill_header h;
	int fd = s ? open(spill, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return NULL;
	ssize_t n = pread(fd, &h, sizeof h, 0);
	close(fd);
	if (n != (ssize_t)sizeof h || memcmp(h.magic, SP_SPILL_MAGIC, 8) != 0)
		return NULL;
	char *out = strndup(spill, (size_t)(s - spill));
	char *t = out ? temp_of(out, (long)h.pid) : NULL;
	free(out);
	if (t && access(t, F_OK) != 0) {
		free(t);
		t = NULL;
	}
	return t;
}

static bool is_temp(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	return b[0] == '.' && n > 4 && strcmp(b + n - 4, ".tmp") == 0;
}

/* A temporary output is complete when the reader takes it (a write killed
 * before its H5Fclose leaves a file HDF5 cannot open or the reader refuses). */
static bool complete(const char *path)
{
	struct sp_reader *r = NULL;
	if (sp_reader_open(path, &r) != 0)
		return false;
	sp_reader_destroy(r);
	return true;
}

/*
 * The finalize's output is the whole run, and it is complete (not partial)
 * when the writer closed it: the spill files are then left out. Inputs are
 * rewritten here, before the shared loader sees them: spill files that a
 * complete temporary output replaces are dropped, and it is added once.
 */
static char **adopt_temp(int argc, char **argv, int *ret_argc, char **ret_temp)
{
	char **v = calloc((size_t)argc + 2, sizeof *v), *temp = NULL;
	if (!v)
		return NULL;
	for (int i = 1; i < argc && !temp; i++) {
		if (argv[i][0] == '-') {
			i += strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0;
			continue;
		}
		char *t = is_temp(argv[i]) ? strdup(argv[i]) : temp_beside(argv[i]);
		if (t && complete(t))
			temp = t;
		else if (t) {
			fprintf(stderr, "scope-profiler recover: %s is incomplete (the finalize "
				"was killed while writing it); using the spill files\n", t);
			free(t);
		}
	}
	int n = 0, dropped = 0;
	for (int i = 0; i < argc; i++) {
		bool input = i > 0 && argv[i][0] != '-' &&
			     !(strcmp(argv[i - 1], "-o") == 0 || strcmp(argv[i - 1], "--output") == 0);
		if (temp && input && (strstr(argv[i], SP_SPILL_SUFFIX) || is_temp(argv[i]))) {
			dropped += !is_temp(argv[i]);
			continue;
		}
		v[n++] = argv[i];
	}
	if (temp) {
		fprintf(stderr, "scope-profiler recover: adopting %s, the complete output the "
			"killed finalize wrote but did not rename (in place of %d spill file%s)\n",
			temp, dropped, dropped == 1 ? "" : "s");
		v[n++] = temp;
	}
	*ret_argc = n;
	*ret_temp = temp;
	return v;
}

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler recover [options] FILE...\n"
	"\n"
	"Convert the spill files of a run that was killed (<output>.spill.rank<NNNNN>\n"
	"or <output>.spill.pid<PID>: see docs/RESILIENCE.md) into one schema-2 file\n"
	"with metadata partial=1. Calls that ended before the signal are kept;\n"
	"after SIGKILL, only what had been spilled. Per-rank HDF5 files of the same\n"
	"run may be given too; a complete file stays complete. A complete temporary\n"
	"output (.<output>.<PID>.tmp, left by a finalize killed before its rename)\n"
	"beside the spill files, or given, is used instead of them, and stderr says\n"
	"so.\n"
	"\n"
	"options:\n"
	"  -o, --output OUT      the file to write (required)\n"
	"  --json                print what was written as JSON\n"
	"  -h, --help            print this help and exit\n";

int cmd_recover(int argc, char **argv)
{
	int n = argc;
	char *temp = NULL, **v = adopt_temp(argc, argv, &n, &temp);
	int rc = rank_inputs_main(v ? n : argc, v ? v : argv, "recover", help);
	free(temp);
	free(v);
	return rc;
}
