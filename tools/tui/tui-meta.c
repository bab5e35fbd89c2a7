/* SPDX-License-Identifier: MIT */
/*
 * Metadata pane of `scope-profiler tui`: the profile's headline and its
 * metadata grouped as `inspect` does (§4.2): Run, System, Parallelism,
 * Slurm, Environment (other upper-case keys), Other, and Modules one per line.
 */
#include <ctype.h>
#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "sp-array.h"
#include "tui.h"

enum group { G_RUN, G_SYSTEM, G_PARALLEL, G_SLURM, G_ENV, G_OTHER, G_MODULES, G_N };

static const char *const group_names[G_N] = {
    "Run", "System", "Parallelism", "Slurm", "Environment", "Other", "Modules",
};

/* Keys of the fixed groups, in display order. */
static const char *const run_keys[] = {
    "timestamp",	 "start_time_ns",	   "user",	     "hostname",
    "working_directory", "scope_profiler_version", "python_version", NULL,
};
static const char *const system_keys[] = {
    "platform",
    "uname",
    "chip_information",
    NULL,
};
static const char *const parallel_keys[] = {
    "mpi_size",
    "omp_num_threads",
    "total_cores",
    NULL,
};

struct meta_line {
	enum group group;
	bool header;
	char *key, *value;
};

struct tui_meta {
	struct meta_line *lines;
	size_t n, cap;
	int key_width;
	struct tui_cursor cur;
};

void tui_meta_destroy(struct tui *t)
{
	struct tui_meta *m = t->meta;

	for (size_t i = 0; m && i < m->n; i++) {
		free(m->lines[i].key);
		free(m->lines[i].value);
	}
	if (m)
		free(m->lines);
	free(m);
	t->meta = NULL;
}

static int key_rank(const char *key, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(key, list[i]) == 0)
			return i;
	return -1;
}

static bool upper_case(const char *key)
{
	bool letter = false;

	for (; *key; key++) {
		if (islower((unsigned char)*key))
			return false;
		letter |= isupper((unsigned char)*key) != 0;
	}
	return letter;
}

static enum group group_of(const char *key)
{
	if (key_rank(key, run_keys) >= 0)
		return G_RUN;
	if (key_rank(key, system_keys) >= 0)
		return G_SYSTEM;
	if (key_rank(key, parallel_keys) >= 0)
		return G_PARALLEL;
	if (strncmp(key, "SLURM_", 6) == 0 || strncmp(key, "SLURMD_", 7) == 0)
		return G_SLURM;
	if (strcmp(key, "modules") == 0)
		return G_MODULES;
	return upper_case(key) ? G_ENV : G_OTHER;
}

/* The value as text (string lists joined by ", "); malloc'ed. */
static char *value_text(const struct sp_meta *m)
{
	char buf[64], *s;
	size_t len = 1;

	switch (m->type) {
	case SP_META_INT:
		snprintf(buf, sizeof(buf), "%lld", (long long)m->i);
		return strdup(buf);
	case SP_META_FLOAT:
		snprintf(buf, sizeof(buf), "%.15g", m->f);
		return strdup(buf);
	case SP_META_STRING:
		return strdup(m->s ? m->s : "");
	default:
		break;
	}
	for (size_t i = 0; i < m->n; i++)
		len += strlen(m->strv[i]) + 2;
	if (!(s = malloc(len)))
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < m->n; i++) {
		if (i)
			strcat(s, ", ");
		strcat(s, m->strv[i]);
	}
	return s;
}

static int add(struct tui_meta *m, enum group g, bool header, const char *key, char *value)
{
	struct meta_line *l;

	if (SP_ARRAY_RESERVE(m->lines, m->cap, m->n + 1, 64) < 0) {
		free(value);
		return -1;
	}
	l = &m->lines[m->n++];
	l->group = g;
	l->header = header;
	l->key = strdup(key);
	l->value = value;
	return l->key ? 0 : -1;
}

/* Entries of one group: fixed groups in their key order, others in file
 * order. */
static int add_group(struct tui *t, struct tui_meta *m, enum group g)
{
	const char *const *list = g == G_RUN	    ? run_keys
				  : g == G_SYSTEM   ? system_keys
				  : g == G_PARALLEL ? parallel_keys
						    : NULL;
	size_t n = sp_reader_num_metadata(t->r), first = m->n;
	char title[64];

	snprintf(title, sizeof(title), "%s", group_names[g]);
	if (add(m, g, true, title, NULL) < 0)
		return -1;
	for (int k = 0; list && list[k]; k++) {
		const struct sp_meta *e = sp_reader_metadata_find(t->r, list[k]);

		if (e && add(m, g, false, e->key, value_text(e)) < 0)
			return -1;
	}
	for (size_t i = 0; !list && i < n; i++) {
		const struct sp_meta *e = sp_reader_metadata(t->r, i);

		if (group_of(e->key) != g)
			continue;
		if (g != G_MODULES) {
			if (add(m, g, false, e->key, value_text(e)) < 0)
				return -1;
			continue;
		}
		for (size_t j = 0; e->type == SP_META_STRINGS && j < e->n; j++)
			if (add(m, g, false, "", strdup(e->strv[j])) < 0)
				return -1;
		if (e->type != SP_META_STRINGS && add(m, g, false, "", value_text(e)) < 0)
			return -1;
	}
	if (m->n == first + 1) { /* empty group: drop the header */
		free(m->lines[--m->n].key);
		return 0;
	}
	if (g == G_MODULES) {
		snprintf(title, sizeof(title), "Modules (%zu)", m->n - first - 1);
		free(m->lines[first].key);
		m->lines[first].key = strdup(title);
	}
	return 0;
}

static struct tui_meta *get(struct tui *t)
{
	struct tui_meta *m = t->meta;

	if (m)
		return m;
	if (!(m = t->meta = calloc(1, sizeof(*m))))
		return NULL;
	for (int g = 0; g < G_N; g++) {
		if (add_group(t, m, (enum group)g) < 0) {
			tui_message(t, "metadata: out of memory");
			break;
		}
	}
	m->key_width = 8;
	for (size_t i = 0; i < m->n; i++) {
		int w = m->lines[i].header ? 0 : tui_width(t, m->lines[i].key);

		m->key_width = w > m->key_width ? w : m->key_width;
	}
	if (m->key_width > 32)
		m->key_width = 32;
	return m;
}

static void headline(struct tui *t, int y)
{
	struct sp_times times;
	char buf[512];
	unsigned nr = sp_reader_num_ranks(t->r);
	size_t ng = sp_reader_num_regions(t->r);

	sp_reader_times(t->r, &times);
	snprintf(buf, sizeof(buf),
		 "%s: %u rank%s, %zu region%s, %zu events, %.1f MiB, %.3f s wall clock",
		 sp_reader_path(t->r), nr, nr == 1 ? "" : "s", ng, ng == 1 ? "" : "s",
		 sp_reader_num_events(t->r), (double)sp_reader_file_size(t->r) / (1024.0 * 1024.0),
		 times.time_span);
	attron(A_BOLD);
	tui_put(t, y, 0, COLS, buf, true);
	attroff(A_BOLD);
}

static void meta_draw(struct tui *t, int y, int height)
{
	struct tui_meta *m = get(t);

	headline(t, y);
	if (!m || m->n == 0) {
		tui_put(t, y + 1, 0, COLS, "(no metadata)", false);
		return;
	}
	tui_cursor_fix(&m->cur, m->n, height - 1);
	for (int line = 0; line < height - 1; line++) {
		size_t v = m->cur.top + (size_t)line;
		const struct meta_line *l;
		int x = 2 + m->key_width + 2;

		if (v >= m->n)
			break;
		l = &m->lines[v];
		attrset(v == m->cur.cur ? A_REVERSE : A_NORMAL);
		if (l->header) {
			attron(A_BOLD);
			tui_put(t, y + 1 + line, 0, COLS, l->key, true);
			continue;
		}
		tui_put(t, y + 1 + line, 0, COLS, "", true);
		tui_put(t, y + 1 + line, 2, m->key_width, l->key, false);
		if (!l->key[0]) /* a module: no key column */
			x = 2;
		if (x < COLS)
			tui_put(t, y + 1 + line, x, COLS - x, l->value ? l->value : "", false);
	}
	attrset(A_NORMAL);
}

static bool meta_key(struct tui *t, int ch, int height)
{
	struct tui_meta *m = get(t);

	return m && tui_cursor_key(&m->cur, ch, m->n, height - 1);
}

static long meta_csv(struct tui *t, FILE *f)
{
	struct tui_meta *m = get(t);
	long n = 0;

	if (!m)
		return -1;
	fputs("group,key,value\n", f);
	for (size_t i = 0; i < m->n; i++) {
		if (m->lines[i].header)
			continue;
		tui_csv_field(f, true, group_names[m->lines[i].group]);
		tui_csv_field(f, false, m->lines[i].key);
		tui_csv_field(f, false, m->lines[i].value ? m->lines[i].value : "");
		fputc('\n', f);
		n++;
	}
	return n;
}

const struct tui_pane tui_meta_pane = {
    .title = "Metadata",
    .draw = meta_draw,
    .key = meta_key,
    .export_csv = meta_csv,
};
