/* SPDX-License-Identifier: MIT */
/*
 * The reader object: opening (format detection and dispatch to a loader),
 * per-thread error messages, validation of the index against the event
 * columns, and the plain accessors of the public API.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader-internal.h"
#include "sp-format.h"
#include "sp-array.h"

static _Thread_local char last_error[1024];

const char *sp_reader_last_error(void)
{
	return last_error;
}

int sp_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	/* One line whatever the file holds: names may contain newlines. */
	for (char *p = last_error; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return -code;
}

void sp_error_clear(void)
{
	last_error[0] = '\0';
}

void *pool_add(struct sp_reader *r, void *p)
{
	struct str_pool *pool = &r->pool;

	if (!p)
		return NULL;
	if (SP_ARRAY_RESERVE(pool->items, pool->cap, pool->n + 1, 64) < 0) {
		free(p);
		return NULL;
	}
	pool->items[pool->n++] = p;
	return p;
}

char *pool_strdup(struct sp_reader *r, const char *s)
{
	return pool_add(r, strdup(s ? s : ""));
}

/*
 * A region name is kept whole up to SP_NAME_MAX bytes; a longer one (a
 * hostile file's megabyte names would cost gigabytes in every table and
 * report) is cut at a UTF-8 boundary and marked: "...[+N bytes]".
 */
static char *name_copy(const char *name)
{
	size_t n = strlen(name), keep = n;
	char *copy;

	if (n <= SP_NAME_MAX)
		return strdup(name);
	keep = SP_NAME_MAX;
	while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80)
		keep--;
	if (asprintf(&copy, "%.*s...[+%zu bytes]", (int)keep, name, n - keep) < 0)
		return NULL;
	return copy;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int reader_add_region(struct sp_reader *r, const char *name, uint32_t *ret_id)
{
	char *copy;
	uint64_t key;

	if (SP_ARRAY_RESERVE(r->names, r->cap_regions, r->n_regions + 1, 16) < 0)
		return -ENOMEM;
	copy = name_copy(name);
	if (!copy)
		return -ENOMEM;
	/* The first id of a name is the one found (names may repeat). */
	for (key = name_hash(copy); sp_map_find(&r->name_ids, key); key++)
		;
	if (sp_map_put(&r->name_ids, key, (uint32_t)r->n_regions) < 0) {
		free(copy);
		return -ENOMEM;
	}
	r->names[r->n_regions] = copy;
	if (ret_id)
		*ret_id = (uint32_t)r->n_regions;
	r->n_regions++;
	return 0;
}

/* O(1): a hash lookup of the name as it is stored (cut, if over the cap). */
int reader_find_or_add_region(struct sp_reader *r, const char *name,
			      uint32_t *ret_id)
{
	char *stored = name_copy(name);
	uint32_t *v;

	if (!stored)
		return -ENOMEM;
	for (uint64_t key = name_hash(stored); (v = sp_map_find(&r->name_ids, key)); key++) {
		if (strcmp(r->names[*v], stored) == 0) {
			*ret_id = *v;
			free(stored);
			return 0;
		}
	}
	free(stored);
	return reader_add_region(r, name, ret_id);
}

struct sp_row *reader_add_row(struct sp_reader *r)
{
	struct sp_row *row;

	if (SP_ARRAY_RESERVE(r->rows, r->cap_rows, r->n_rows + 1, 16) < 0)
		return NULL;
	row = &r->rows[r->n_rows++];
	memset(row, 0, sizeof(*row));
	row->source_lineno = -1;
	row->source_file = "";
	row->source_text = "";
	row->exclusive_total_ns = -1;
	row->dropped_count = -1;
	row->throttled_count = -1;
	row->throttled_total_ns = -1;
	row->throttle_timed = -1;
	row->throttled_ci_ns = -1;
	row->throttled_since_ns = -1;
	row->patched_since_ns = -1;
	return row;
}

struct sp_meta *reader_add_meta(struct sp_reader *r, const char *key)
{
	struct sp_meta *m;

	if (SP_ARRAY_RESERVE(r->meta, r->cap_meta, r->n_meta + 1, 16) < 0)
		return NULL;
	m = &r->meta[r->n_meta];
	memset(m, 0, sizeof(*m));
	m->key = pool_strdup(r, key);
	if (!m->key)
		return NULL;
	r->n_meta++;
	return m;
}

/* Tolerant parser for a JSON list of strings such as ["a", "b\"c"]. */
int row_set_tags_json(struct sp_reader *r, struct sp_row *row,
		      const char *json)
{
	const char **tags = NULL;
	size_t n = 0, cap = 0;
	const char *p = json ? json : "";

	while (*p && *p != '[')
		p++;
	while (*p) {
		char *s, *o;

		while (*p && *p != '"' && *p != ']')
			p++;
		if (*p != '"')
			break;
		s = malloc(strlen(p) + 1);
		if (!s || SP_ARRAY_RESERVE(tags, cap, n + 1, 16) < 0) {
			free(s);
			free(tags);
			return -ENOMEM;
		}
		o = s;
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;
			*o++ = *p;
		}
		*o = '\0';
		if (*p)
			p++;
		if (!pool_add(r, s)) {
			free(tags);
			return -ENOMEM;
		}
		tags[n++] = s;
	}
	if (tags && !pool_add(r, tags))
		return -ENOMEM;
	row->tags = (const char *const *)tags;
	row->num_tags = n;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_row_offset(const void *a, const void *b, void *ctx)
{
	const struct sp_row *rows = ctx;
	const struct sp_row *x = &rows[*(const size_t *)a];
	const struct sp_row *y = &rows[*(const size_t *)b];

	return (x->offset > y->offset) - (x->offset < y->offset);
}

long reader_rank_slot(const struct sp_reader *r, uint32_t rank)
{
	size_t lo = 0, hi = r->n_ranks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_ranks && r->ranks[lo] == rank ? (long)lo : -1;
}

static int check_partition(struct sp_reader *r)
{
	size_t *order, n = 0;

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct sp_row *row = &r->rows[i];

		if (row->rank > SP_RANK_MAX)
			return sp_error(SP_E_CORRUPT,
					"%s: corrupt index: row %zu names rank %u (ranks are 0 to %u)",
					r->path, i, row->rank, SP_RANK_MAX);
		if (row->region >= r->n_regions)
			return sp_error(SP_E_CORRUPT,
					"%s: corrupt index: row %zu names region id %u but the region table has %zu",
					r->path, i, row->region, r->n_regions);
		if (row->offset > r->n_events ||
		    row->count > r->n_events - row->offset)
			return sp_error(SP_E_CORRUPT,
					"%s: corrupt index: row %zu (region '%s', rank %u) spans events [%llu, %llu) past the end of the %zu events",
					r->path, i, r->names[row->region], row->rank,
					(unsigned long long)row->offset,
					(unsigned long long)(row->offset + row->count),
					r->n_events);
	}
	order = malloc((r->n_rows + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_rows; i++)
		if (r->rows[i].count > 0)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_row_offset, r->rows);
	for (size_t k = 1; k < n; k++) {
		const struct sp_row *a = &r->rows[order[k - 1]];
		const struct sp_row *b = &r->rows[order[k]];

		if (a->offset + a->count > b->offset) {
			int rc = sp_error(SP_E_CORRUPT,
					  "%s: corrupt index: rows %zu and %zu overlap in the event columns",
					  r->path, order[k - 1], order[k]);
			free(order);
			return rc;
		}
	}
	free(order);
	return 0;
}

/* Counting sort of the rows by key (stable: ties keep row order). */
static int bucket_rows(struct sp_reader *r, size_t n_keys, bool by_region,
		       size_t **ret_off, size_t **ret_rows)
{
	size_t *off = calloc(n_keys + 2, sizeof(*off));
	size_t *rows = malloc((r->n_rows + 1) * sizeof(*rows));

	if (!off || !rows) {
		free(off);
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct sp_row *row = &r->rows[i];
		size_t key = by_region ? row->region
				       : (size_t)reader_rank_slot(r, row->rank);

		off[key + 2]++;
	}
	for (size_t k = 2; k < n_keys + 2; k++)
		off[k] += off[k - 1];
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct sp_row *row = &r->rows[i];
		size_t key = by_region ? row->region
				       : (size_t)reader_rank_slot(r, row->rank);

		rows[off[key + 1]++] = i;
	}
	*ret_off = off;
	*ret_rows = rows;
	return 0;
}

static int cmp_row_rank(const void *a, const void *b, void *ctx)
{
	const struct sp_row *rows = ctx;
	uint32_t x = rows[*(const size_t *)a].rank, y = rows[*(const size_t *)b].rank;

	return (x > y) - (x < y);
}

static int cmp_row_region(const void *a, const void *b, void *ctx)
{
	const struct sp_row *rows = ctx;
	uint32_t x = rows[*(const size_t *)a].region;
	uint32_t y = rows[*(const size_t *)b].region;

	return (x > y) - (x < y);
}

/* Distinct ranks, rows per region (by rank) and per rank (by region). */
static int cmp_id_name(const void *a, const void *b, void *ctx)
{
	char *const *names = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(names[x], names[y]);

	return c ? c : x < y ? -1 : x > y;
}

static int build_lookups(struct sp_reader *r)
{
	size_t n = 0;
	int rc;

	r->ranks = malloc((r->n_rows + 1) * sizeof(*r->ranks));
	if (!r->ranks)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_rows; i++)
		r->ranks[i] = r->rows[i].rank;
	qsort(r->ranks, r->n_rows, sizeof(*r->ranks), cmp_u32);
	for (size_t i = 0; i < r->n_rows; i++)
		if (n == 0 || r->ranks[n - 1] != r->ranks[i])
			r->ranks[n++] = r->ranks[i];
	r->n_ranks = n;
	rc = bucket_rows(r, r->n_regions, true, &r->region_off, &r->region_rows);
	if (rc == 0)
		rc = bucket_rows(r, r->n_ranks, false, &r->rank_off, &r->rank_rows);
	if (rc < 0)
		return rc;
	for (size_t g = 0; g < r->n_regions; g++) {
		size_t *rows = r->region_rows + r->region_off[g];
		size_t m = r->region_off[g + 1] - r->region_off[g];

		qsort_r(rows, m, sizeof(*rows), cmp_row_rank, r->rows);
		for (size_t i = 1; i < m; i++)
			if (r->rows[rows[i]].rank == r->rows[rows[i - 1]].rank)
				return sp_error(SP_E_CORRUPT,
						"%s: corrupt index: duplicate row for region '%s' on rank %u",
						r->path, r->names[g], r->rows[rows[i]].rank);
	}
	for (size_t k = 0; k < r->n_ranks; k++)
		qsort_r(r->rank_rows + r->rank_off[k],
			r->rank_off[k + 1] - r->rank_off[k], sizeof(size_t),
			cmp_row_region, r->rows);
	r->name_order = malloc((r->n_regions + 1) * sizeof(*r->name_order));
	if (!r->name_order)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_regions; i++)
		r->name_order[i] = (uint32_t)i;
	qsort_r(r->name_order, r->n_regions, sizeof(*r->name_order), cmp_id_name, r->names);
	return 0;
}

struct pos_ctx {
	const struct sp_row *rows;
	const uint32_t *pos;
};

static int cmp_row_pos(const void *a, const void *b, void *ctx)
{
	const struct pos_ctx *c = ctx;
	uint32_t x = c->pos[c->rows[*(const size_t *)a].region];
	uint32_t y = c->pos[c->rows[*(const size_t *)b].region];

	return (x > y) - (x < y);
}

size_t reader_rank_rows(const struct sp_reader *r, size_t k,
			const uint32_t *pos, size_t *rows)
{
	struct pos_ctx c = { r->rows, pos };
	size_t n = 0;

	for (size_t i = r->rank_off[k]; i < r->rank_off[k + 1]; i++)
		if (pos[r->rows[r->rank_rows[i]].region] != UINT32_MAX)
			rows[n++] = r->rank_rows[i];
	qsort_r(rows, n, sizeof(*rows), cmp_row_pos, &c);
	return n;
}

size_t reader_threads(const struct sp_reader *r, size_t items)
{
	cpu_set_t set;
	size_t cpus = 1;

	if (r->n_events < (size_t)1 << 20 || items < 2)
		return 1;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		cpus = (size_t)CPU_COUNT(&set);
	if (cpus > items)
		cpus = items;
	return cpus < 1 ? 1 : cpus > READER_MAX_THREADS ? READER_MAX_THREADS : cpus;
}

void reader_parallel(const struct sp_reader *r, size_t items,
		     void *(*fn)(void *), void *arg)
{
	pthread_t tid[READER_MAX_THREADS];
	size_t n = reader_threads(r, items), started = 0;

	for (size_t i = 1; i < n; i++)
		if (pthread_create(&tid[started], NULL, fn, arg) == 0)
			started++;
	fn(arg); /* this thread works too (and alone if none started) */
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

int reader_finish(struct sp_reader *r)
{
	int rc;

	if (!r->col[SP_COL_START_TIMES] && r->n_events == 0) {
		r->col[SP_COL_START_TIMES] = malloc(sizeof(int64_t));
		r->col[SP_COL_END_TIMES] = malloc(sizeof(int64_t));
		if (!r->col[SP_COL_START_TIMES] || !r->col[SP_COL_END_TIMES])
			return -ENOMEM;
	}
	if (!r->num_ranks_known) {
		const struct sp_meta *m = sp_reader_metadata_find(r, "mpi_size");
		int64_t n = m && m->type == SP_META_INT ? m->i : 1;

		/* Per-rank tables are sized by it: a value no MPI job has is
		 * the file's error, not an allocation to try. */
		if (n < 1 || n > SP_MAX_RANKS)
			return sp_error(SP_E_NOT_PROFILE, "%s: metadata mpi_size = %" PRId64
					" is out of range (1 to %d)", r->path, n, SP_MAX_RANKS);

		for (size_t i = 0; i < r->n_rows; i++) {
			if (r->rows[i].rank >= SP_MAX_RANKS)
				return sp_error(SP_E_NOT_PROFILE, "%s: rank %u is out of range "
						"(0 to %d)", r->path, r->rows[i].rank,
						SP_MAX_RANKS - 1);
			if ((int64_t)r->rows[i].rank + 1 > n)
				n = (int64_t)r->rows[i].rank + 1;
		}
		r->num_ranks = r->n_rows ? (unsigned)n : 0;
	}
	rc = check_partition(r);
	if (rc < 0)
		return rc;
	rc = reader_finish_kinds(r);
	if (rc < 0)
		return rc;
	rc = build_lookups(r);
	if (rc < 0)
		return rc;
	r->row_exclusive = malloc((r->n_rows + 1) * sizeof(int64_t));
	if (!r->row_exclusive)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_rows; i++)
		r->row_exclusive[i] = -1;
	return reader_compute_basics(r);
}

enum detected { DETECT_HDF5, DETECT_JSON, DETECT_SPT, DETECT_NONE };

static enum detected detect(const unsigned char *head, size_t n)
{
	static const unsigned char hdf5_sig[8] = { 0x89, 'H', 'D', 'F',
						   '\r', '\n', 0x1a, '\n' };
	size_t i = 0;

	if (n >= 8 && memcmp(head, hdf5_sig, 8) == 0)
		return DETECT_HDF5;
	if (n >= 8 && memcmp(head, "SCOPEPRF", 8) == 0)
		return DETECT_SPT;
	if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf)
		i = 3;
	while (i < n && (head[i] == ' ' || head[i] == '\n' ||
			 head[i] == '\r' || head[i] == '\t'))
		i++;
	if (i < n && head[i] == '{')
		return DETECT_JSON;
	return DETECT_NONE; /* HDF5 with a user block is tried last */
}

static int read_whole(const char *path, unsigned char **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return sp_error(errno, "%s: %s", path, strerror(errno));
	do {
		if (SP_ARRAY_RESERVE(buf, cap, len + 65536 + 1, 16) < 0) {
			free(buf);
			fclose(f);
			return -ENOMEM;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return sp_error(EIO, "%s: read error", path);
	}
	fclose(f);
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

static int load_by_content(struct sp_reader *r, enum detected kind)
{
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;

	if (kind == DETECT_HDF5 || kind == DETECT_NONE) {
		rc = sp_load_hdf5(r);
		if (rc == -SP_E_NOT_PROFILE && kind == DETECT_NONE)
			return sp_error(SP_E_NOT_PROFILE,
					"%s: not a scope-profiler file (neither HDF5, JSON profile nor .spt trace)",
					r->path);
		return rc;
	}
	rc = read_whole(r->path, &data, &len);
	if (rc < 0)
		return rc;
	if (kind == DETECT_JSON)
		rc = sp_load_json(r, (const char *)data, len);
	else
		rc = sp_load_spt(r, data, len);
	free(data);
	return rc;
}

int sp_reader_open(const char *path, struct sp_reader **ret_reader)
{
	return sp_reader_open_flags(path, 0, ret_reader);
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "a special file";
}

int sp_reader_open_flags(const char *path, unsigned flags,
			 struct sp_reader **ret_reader)
{
	struct sp_reader *r;
	unsigned char head[64];
	struct stat st;
	size_t n;
	FILE *f;
	int fd, rc;

	sp_error_clear();
	if (!path || !ret_reader || (flags & ~(unsigned)SP_OPEN_MAP_COLUMNS))
		return sp_error(EINVAL, "sp_reader_open: invalid argument");
	/* O_NONBLOCK: a FIFO or a device is refused, never waited on. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return sp_error(errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		close(fd);
		return sp_error(err, "%s: is %s, not a profile file", path, file_kind(st.st_mode));
	}
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return sp_error(errno, "%s: %s", path, strerror(errno));
	}
	n = fread(head, 1, sizeof(head), f);
	fclose(f);

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->path = strdup(path);
	r->file_size = (uint64_t)st.st_size;
	r->layout = SP_LAYOUT_COLUMNAR;
	r->open_flags = flags;
	if (!r->path) {
		free(r);
		return -ENOMEM;
	}
	rc = load_by_content(r, detect(head, n));
	if (rc == 0)
		rc = reader_finish(r);
	if (rc < 0) {
		if (rc == -ENOMEM)
			sp_error(ENOMEM, "%s: out of memory", path);
		sp_reader_destroy(r);
		return rc;
	}
	*ret_reader = r;
	return 0;
}

void sp_reader_destroy(struct sp_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->pool.n; i++)
		free(r->pool.items[i]);
	free(r->pool.items);
	for (size_t i = 0; i < r->n_regions; i++)
		free(r->names[i]);
	sp_map_free(&r->name_ids);
	for (int c = 0; c < SP_COL_COUNT; c++) {
		if (r->map[c].base)
			munmap(r->map[c].base, r->map[c].len);
		else
			free(r->col[c]);
	}
	free(r->names);
	free(r->kinds);
	free(r->meta);
	free(r->rows);
	free(r->threads);
	free(r->ranks);
	free(r->region_off);
	free(r->name_order);
	free(r->region_rows);
	free(r->rank_off);
	free(r->rank_rows);
	free(r->row_exclusive);
	free(r->region_stats);
	free(r->region_stats_done);
	free(r->basic);
	free(r->nesting_problem);
	free(r->path);
	free(r);
}

const char *sp_reader_path(const struct sp_reader *r) { return r->path; }
enum sp_input_format sp_reader_input_format(const struct sp_reader *r) { return r->input_format; }
int sp_reader_schema(const struct sp_reader *r) { return r->schema; }
enum sp_layout sp_reader_layout(const struct sp_reader *r) { return r->layout; }
unsigned sp_reader_num_ranks(const struct sp_reader *r) { return r->num_ranks; }
uint64_t sp_reader_file_size(const struct sp_reader *r) { return r->file_size; }
size_t sp_reader_num_regions(const struct sp_reader *r) { return r->n_regions; }
size_t sp_reader_num_rows(const struct sp_reader *r) { return r->n_rows; }
size_t sp_reader_num_events(const struct sp_reader *r) { return r->n_events; }
size_t sp_reader_num_metadata(const struct sp_reader *r) { return r->n_meta; }
size_t sp_reader_num_threads(const struct sp_reader *r) { return r->n_threads; }

const char *sp_reader_region_name(const struct sp_reader *r, uint32_t id)
{
	return id < r->n_regions ? r->names[id] : NULL;
}

int sp_reader_region_find(const struct sp_reader *r, const char *name)
{
	size_t lo = 0, hi = r->name_order ? r->n_regions : 0;

	while (lo < hi) { /* the first id of that name: the lowest */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(r->names[r->name_order[mid]], name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->n_regions && r->name_order &&
	    strcmp(r->names[r->name_order[lo]], name) == 0)
		return (int)r->name_order[lo];
	return -ENOENT;
}

const struct sp_row *sp_reader_row(const struct sp_reader *r, size_t i)
{
	return i < r->n_rows ? &r->rows[i] : NULL;
}

long sp_reader_row_find(const struct sp_reader *r, uint32_t region,
			uint32_t rank)
{
	size_t lo, hi;

	if (region >= r->n_regions)
		return -ENOENT;
	lo = r->region_off[region];
	hi = r->region_off[region + 1];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->rows[r->region_rows[mid]].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->region_off[region + 1] &&
	    r->rows[r->region_rows[lo]].rank == rank)
		return (long)r->region_rows[lo];
	return -ENOENT;
}

const int64_t *sp_reader_column(const struct sp_reader *r,
				enum sp_column column)
{
	if ((unsigned)column >= SP_COL_COUNT)
		return NULL;
	/* MPI columns of the row layout: built on first use (mpi-layout.c). */
	return r->mpi_rows ? mpi_rows_column(r, column) : r->col[column];
}

size_t sp_reader_ranks(const struct sp_reader *r, const uint32_t **ret_ranks)
{
	*ret_ranks = r->ranks;
	return r->n_ranks;
}

const struct sp_meta *sp_reader_metadata(const struct sp_reader *r, size_t i)
{
	return i < r->n_meta ? &r->meta[i] : NULL;
}

const struct sp_meta *sp_reader_metadata_find(const struct sp_reader *r,
					      const char *key)
{
	for (size_t i = 0; i < r->n_meta; i++)
		if (strcmp(r->meta[i].key, key) == 0)
			return &r->meta[i];
	return NULL;
}

const struct sp_thread *sp_reader_thread(const struct sp_reader *r, size_t i)
{
	return i < r->n_threads ? &r->threads[i] : NULL;
}
