/* SPDX-License-Identifier: MIT */
/*
 * The metadata of `inspect`: every key lands in exactly one section (Run,
 * System, Parallelism, Slurm, Environment, Profiler, Other, Modules) so new keys never
 * disappear; values are shown as Python's str() would show them, clipped to
 * 96 characters unless --full. Also the JSON form used by --json and
 * --export-metadata.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

#define VALUE_WIDTH 96
#define ELLIPSIS " […]"
#define ELLIPSIS_LEN 4 /* code points */

static const char *const run_keys[] = {
	"timestamp", "start_time_ns", "finalize_time_ns", "user", "hostname",
	"working_directory", "scope_profiler_version", "python_version", NULL,
};
static const char *const system_keys[] = {
	"platform", "uname", "chip_information", NULL,
};
static const char *const parallel_keys[] = {
	"mpi_size", "num_nodes", "omp_num_threads", "total_cores", NULL,
};

/* The profiler's self-measurement (docs/FORMAT.md). */
static const char *const profiler_keys[] = {
	"profiler_event_cost_ns", "profiler_call_cost_ns", "profiler_count_cost_ns",
	"profiler_alloc_ns", "profiler_startup_ns", "profiler_finalize_ns", "profiler_concurrency",
	"mpi_merge_ns", "dropped_events",
	"throttle_timing", "throttle_calls", "throttle_mean_ns", "throttle_early_calls",
	"throttle_early_mean_ns", "throttle_sample",
	NULL,
};

enum section { S_RUN, S_SYSTEM, S_PARALLEL, S_SLURM, S_ENV, S_PROFILER, S_OTHER,
	       S_MODULES, S_COUNT };

static const char *const section_titles[S_COUNT] = {
	"Run", "System", "Parallelism", "Slurm", "Environment", "Profiler", "Other", "Modules",
};

size_t inspect_strlen(const char *s)
{
	return cli_display_width(s);
}

static int list_index(const char *const *list, const char *key)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], key) == 0)
			return i;
	return -1;
}

/* Python str.isupper(): some cased character and none lower-case. */
static bool is_upper_key(const char *key)
{
	bool cased = false;

	for (; *key; key++) {
		if (islower((unsigned char)*key))
			return false;
		cased |= isupper((unsigned char)*key) != 0;
	}
	return cased;
}

static enum section section_of(const char *key)
{
	if (list_index(run_keys, key) >= 0)
		return S_RUN;
	if (list_index(system_keys, key) >= 0)
		return S_SYSTEM;
	if (list_index(parallel_keys, key) >= 0)
		return S_PARALLEL;
	if (list_index(profiler_keys, key) >= 0)
		return S_PROFILER;
	if (strcmp(key, "modules") == 0)
		return S_MODULES;
	if (strncmp(key, "SLURM_", 6) == 0 || strncmp(key, "SLURMD_", 7) == 0)
		return S_SLURM;
	if (is_upper_key(key))
		return S_ENV;
	return S_OTHER;
}

/* Python repr() of a str, appended to a growing buffer. */
static void repr_string(FILE *f, const char *s)
{
	char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';

	fputc(q, f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\\' || ch == (unsigned char)q)
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch == '\r')
			fputs("\\r", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputc(q, f);
}

/* str(value) as Python prints it. Returns a malloc'ed string. */
static char *value_text(const struct sp_meta *m)
{
	char *buf = NULL, num[64];
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	switch (m->type) {
	case SP_META_INT:
		fprintf(f, "%lld", (long long)m->i);
		break;
	case SP_META_FLOAT:
		if (isnan(m->f))
			fputs("nan", f);
		else if (isinf(m->f))
			fputs(m->f > 0 ? "inf" : "-inf", f);
		else {
			cli_format_double(num, sizeof(num), m->f);
			fputs(num, f);
		}
		break;
	case SP_META_STRING:
		fputs(m->s ? m->s : "", f);
		break;
	case SP_META_STRINGS:
		fputc('[', f);
		for (size_t i = 0; i < m->n; i++) {
			if (i)
				fputs(", ", f);
			repr_string(f, m->strv[i]);
		}
		fputc(']', f);
		break;
	}
	fclose(f);
	return buf;
}

/* Print value, clipped to VALUE_WIDTH code points with " […]". */
static void put_clipped(FILE *f, const char *v, bool full)
{
	size_t len = inspect_strlen(v), keep, i = 0;

	if (full || len <= VALUE_WIDTH) {
		fputs(v, f);
		return;
	}
	keep = VALUE_WIDTH - ELLIPSIS_LEN;
	for (size_t cp = 0; v[i]; i++) {
		if (((unsigned char)v[i] & 0xc0) != 0x80 && cp++ == keep)
			break;
	}
	fwrite(v, 1, i, f);
	fputs(ELLIPSIS, f);
}

static int cmp_meta_key(const void *a, const void *b)
{
	const struct sp_meta *x = *(const struct sp_meta *const *)a;
	const struct sp_meta *y = *(const struct sp_meta *const *)b;

	return strcmp(x->key, y->key);
}

/* Rank of m inside its section: the fixed order, else sorted by key. */
static int fixed_rank(enum section s, const char *key)
{
	switch (s) {
	case S_RUN: return list_index(run_keys, key);
	case S_SYSTEM: return list_index(system_keys, key);
	case S_PARALLEL: return list_index(parallel_keys, key);
	case S_PROFILER: return list_index(profiler_keys, key);
	default: return 0;
	}
}

static void print_modules(FILE *f, const struct sp_meta *m)
{
	size_t n = m->type == SP_META_STRINGS ? m->n
		   : m->type == SP_META_STRING && m->s && m->s[0] ? 1 : 0;

	fprintf(f, "  Modules (%zu)\n", n);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "    %s\n", m->type == SP_META_STRINGS ? m->strv[i] : m->s);
	if (n == 0)
		fputs("    (none loaded)\n", f);
}

static void print_section(FILE *f, enum section s, const struct sp_meta **sorted,
			  size_t n, size_t key_width, bool full)
{
	bool titled = false;
	int fixed_n = s == S_RUN ? 8 : s == S_SYSTEM ? 3 : s == S_PARALLEL ? 4
		      : s == S_PROFILER ? (int)(sizeof profiler_keys / sizeof *profiler_keys) - 1 : 1;

	/* Fixed sections go in list order; the others in key order. */
	for (int pos = 0; pos < fixed_n; pos++) {
		for (size_t i = 0; i < n; i++) {
			const struct sp_meta *m = sorted[i];
			char *v;

			if (section_of(m->key) != s || fixed_rank(s, m->key) != pos)
				continue;
			if (!titled)
				fprintf(f, "  %s\n", section_titles[s]);
			titled = true;
			v = value_text(m);
			fprintf(f, "    %s%*s : ", m->key,
				(int)(key_width - inspect_strlen(m->key)), "");
			put_clipped(f, v ? v : "", full);
			fputc('\n', f);
			free(v);
		}
	}
}

void inspect_print_metadata(FILE *f, struct sp_reader *r, bool full)
{
	size_t n = sp_reader_num_metadata(r), key_width = 0;
	const struct sp_meta **sorted, *modules = NULL;

	if (n == 0 || !(sorted = calloc(n, sizeof(*sorted)))) {
		fputs("Metadata\n  (none recorded)\n\n", f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		sorted[i] = sp_reader_metadata(r, i);
		if (inspect_strlen(sorted[i]->key) > key_width)
			key_width = inspect_strlen(sorted[i]->key);
		if (strcmp(sorted[i]->key, "modules") == 0)
			modules = sorted[i];
	}
	qsort(sorted, n, sizeof(*sorted), cmp_meta_key);
	fputs("Metadata\n", f);
	for (enum section s = S_RUN; s < S_MODULES; s++)
		print_section(f, s, sorted, n, key_width, full);
	if (modules)
		print_modules(f, modules);
	fputc('\n', f);
	free(sorted);
}

void inspect_metadata_json(struct json_writer *w, struct sp_reader *r)
{
	jw_begin_object(w);
	for (size_t i = 0; i < sp_reader_num_metadata(r); i++) {
		const struct sp_meta *m = sp_reader_metadata(r, i);

		jw_key(w, m->key);
		switch (m->type) {
		case SP_META_INT: jw_int(w, (long long)m->i); break;
		case SP_META_FLOAT: jw_double(w, m->f); break;
		case SP_META_STRING: jw_string(w, m->s); break;
		case SP_META_STRINGS:
			jw_begin_array(w);
			for (size_t k = 0; k < m->n; k++)
				jw_string(w, m->strv[k]);
			jw_end_array(w);
			break;
		}
	}
	jw_end_object(w);
}
