/* SPDX-License-Identifier: MIT */
/*
 * The MPI event columns in the row layout (docs/FORMAT.md, "MPI additions"):
 * values only for the events of the rows that carry MPI data, each row's
 * slice at rank_region_index/mpi_offsets. Loaded and checked against the
 * index rows here; the full-length columns of sp_reader_column() are built
 * only when asked for, and sp_reader_row_column() needs none.
 */
#define _GNU_SOURCE /* qsort_r */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpi-layout.h"
#include "sp-format.h"

static const struct {
	enum sp_column col;
	const char *name;
} row_columns[] = {
	{ SP_COL_MPI_BYTES, SP_EV_MPI_BYTES },
	{ SP_COL_MPI_PEERS, SP_EV_MPI_PEERS },
	{ SP_COL_MPI_ROOTS, SP_EV_MPI_ROOTS },
	{ SP_COL_MPI_TAGS, SP_EV_MPI_TAGS },
	{ SP_COL_MPI_COMMS, SP_EV_MPI_COMMS },
	{ SP_COL_CALLSITE_IDS, SP_EV_CALLSITE_IDS },
};

#define N_ROW_COLUMNS (sizeof(row_columns) / sizeof(row_columns[0]))

/* Owned by the reader's pool, like every array it points to. */
struct mpi_rows {
	size_t n;                   /* values per column */
	int64_t *val[SP_COL_COUNT]; /* the columns present, NULL otherwise */
	int64_t *row_off;           /* [n_rows]: first value of each row, -1 none */
};

/*
 * Serialises the first sp_reader_column() call of a column, which builds
 * it: readers are shared by threads read-only, and r->col[c] goes from
 * NULL to the finished array once (release store, acquire load).
 */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

bool mpi_rows_holds(enum sp_column c)
{
	for (size_t k = 0; k < N_ROW_COLUMNS; k++)
		if (row_columns[k].col == c)
			return true;
	return false;
}

static int cmp_off(const void *a, const void *b, void *ctx)
{
	const int64_t *off = ctx;
	int64_t x = off[*(const size_t *)a], y = off[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

/*
 * Every row's slice [off, off + count) inside the m values, slices
 * disjoint and covering all m (rows hold every value, back to back or
 * not); -1 means the row has none.
 */
static int check_offsets(struct sp_reader *r, const int64_t *off, size_t m)
{
	size_t *order = malloc((r->n_rows + 1) * sizeof(*order)), n = 0;
	uint64_t covered = 0;
	int rc = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_rows && rc == 0; i++) {
		uint64_t cnt = r->rows[i].count;

		if (off[i] == -1)
			continue;
		if (off[i] < 0 || (uint64_t)off[i] > m || cnt > m - (uint64_t)off[i])
			rc = sp_error(SP_E_CORRUPT,
				      "%s: corrupt index: '%s/%s' row %zu puts its %llu events at %lld, outside the %zu values of the MPI columns",
				      r->path, SP_GROUP_INDEX, SP_IDX_MPI_OFFSETS, i,
				      (unsigned long long)cnt, (long long)off[i], m);
		else if (cnt > 0)
			order[n++] = i;
	}
	if (rc == 0)
		qsort_r(order, n, sizeof(*order), cmp_off, (void *)off);
	for (size_t k = 0; rc == 0 && k < n; k++) {
		uint64_t cnt = r->rows[order[k]].count;

		if (k > 0 && (uint64_t)off[order[k - 1]] + r->rows[order[k - 1]].count >
				     (uint64_t)off[order[k]])
			rc = sp_error(SP_E_CORRUPT,
				      "%s: corrupt index: '%s/%s' rows %zu and %zu overlap in the MPI columns",
				      r->path, SP_GROUP_INDEX, SP_IDX_MPI_OFFSETS, order[k - 1],
				      order[k]);
		covered += cnt; /* disjoint slices inside [0, m]: no overflow */
	}
	if (rc == 0 && covered != m)
		rc = sp_error(SP_E_CORRUPT,
			      "%s: corrupt file: the MPI columns hold %zu values but the rows of '%s/%s' use %llu",
			      r->path, m, SP_GROUP_INDEX, SP_IDX_MPI_OFFSETS,
			      (unsigned long long)covered);
	free(order);
	return rc;
}

static int read_columns(struct sp_reader *r, hid_t ev, struct mpi_rows *m)
{
	long len = -1;

	for (size_t k = 0; k < N_ROW_COLUMNS; k++) {
		enum sp_column c = row_columns[k].col;
		long n = h5_read_i64(r, ev, row_columns[k].name, &m->val[c]);

		if (n == -ENOENT)
			continue;
		if (n < 0)
			return (int)n;
		if (!pool_add(r, m->val[c])) {
			m->val[c] = NULL;
			return -ENOMEM;
		}
		if (len >= 0 && n != len)
			return sp_error(SP_E_CORRUPT,
					"%s: corrupt file: MPI column '%s/%s' has %ld values, '%s/%s' %ld",
					r->path, SP_GROUP_EVENTS, row_columns[k].name, n,
					SP_GROUP_EVENTS, SP_EV_MPI_BYTES, len);
		len = n;
	}
	m->n = len > 0 ? (size_t)len : 0;
	return 0;
}

int mpi_rows_load(struct sp_reader *r, hid_t file, hid_t ev)
{
	struct mpi_rows *m;
	char *layout = NULL;
	hid_t idx;
	long n;
	int rc = h5_attr_string(r, ev, SP_EV_ATTR_MPI_LAYOUT, &layout);

	if (rc == -ENOENT)
		return -ENOENT;
	if (rc == -EINVAL)
		return sp_error(SP_E_CORRUPT, "%s: corrupt file: attribute '/%s' %s is not a string",
				r->path, SP_GROUP_EVENTS, SP_EV_ATTR_MPI_LAYOUT);
	if (rc < 0)
		return rc;
	if (strcmp(layout, SP_MPI_LAYOUT_ROWS) != 0)
		return sp_error(SP_E_SCHEMA,
				"%s: unsupported MPI column layout '%s' (attribute '/%s' %s; this reader knows \"%s\")",
				r->path, layout, SP_GROUP_EVENTS, SP_EV_ATTR_MPI_LAYOUT,
				SP_MPI_LAYOUT_ROWS);
	m = pool_add(r, calloc(1, sizeof(*m)));
	if (!m)
		return -ENOMEM;
	idx = H5Gopen2(file, SP_GROUP_INDEX, H5P_DEFAULT);
	n = idx < 0 ? -ENOENT : h5_read_i64(r, idx, SP_IDX_MPI_OFFSETS, &m->row_off);
	if (idx >= 0)
		H5Gclose(idx);
	if (n == -ENOENT)
		return sp_error(SP_E_CORRUPT,
				"%s: corrupt file: '/%s' names the MPI layout \"%s\" but '/%s/%s' is missing",
				r->path, SP_GROUP_EVENTS, SP_MPI_LAYOUT_ROWS, SP_GROUP_INDEX,
				SP_IDX_MPI_OFFSETS);
	if (n < 0)
		return (int)n;
	if (!pool_add(r, m->row_off))
		return -ENOMEM;
	if ((size_t)n != r->n_rows)
		return sp_error(SP_E_CORRUPT,
				"%s: corrupt file: column '%s/%s' has %ld rows, expected %zu",
				r->path, SP_GROUP_INDEX, SP_IDX_MPI_OFFSETS, n, r->n_rows);
	rc = read_columns(r, ev, m);
	if (rc == 0)
		rc = check_offsets(r, m->row_off, m->n);
	if (rc == 0)
		r->mpi_rows = m;
	return rc;
}

/* The full-length column: -1, then each MPI row's values at its events. */
static int64_t *build(const struct sp_reader *r, const struct mpi_rows *m, enum sp_column c)
{
	int64_t *full = malloc((r->n_events + 1) * sizeof(*full));

	if (!full)
		return NULL;
	for (size_t e = 0; e < r->n_events; e++)
		full[e] = -1;
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct sp_row *row = &r->rows[i];

		/* Slices were checked when the reader was finished; re-checked
		 * here since this is cheap and the copy must stay in bounds. */
		if (m->row_off[i] < 0 || row->offset > r->n_events ||
		    row->count > r->n_events - row->offset)
			continue;
		memcpy(full + row->offset, m->val[c] + m->row_off[i], row->count * sizeof(*full));
	}
	return full;
}

const int64_t *mpi_rows_column(const struct sp_reader *r, enum sp_column c)
{
	const struct mpi_rows *m = r->mpi_rows;
	int64_t *full;

	if (!m->val[c])
		return r->col[c];
	full = __atomic_load_n(&r->col[c], __ATOMIC_ACQUIRE);
	if (full)
		return full;
	pthread_mutex_lock(&build_lock);
	full = r->col[c];
	if (!full) {
		full = build(r, m, c);
		/* The reader is const to its users; this cache is its own
		 * (freed with the other columns by sp_reader_destroy). */
		if (full)
			__atomic_store_n(&((struct sp_reader *)r)->col[c], full, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&build_lock);
	return full;
}

bool sp_reader_has_column(const struct sp_reader *r, enum sp_column c)
{
	if ((unsigned)c >= SP_COL_COUNT)
		return false;
	if (r->mpi_rows && r->mpi_rows->val[c])
		return true;
	return __atomic_load_n(&r->col[c], __ATOMIC_ACQUIRE) != NULL;
}

const int64_t *sp_reader_row_column(const struct sp_reader *r, size_t row, enum sp_column c)
{
	const struct mpi_rows *m = r->mpi_rows;
	const int64_t *col;

	if ((unsigned)c >= SP_COL_COUNT || row >= r->n_rows)
		return NULL;
	if (m && m->val[c])
		return m->row_off[row] >= 0 ? m->val[c] + m->row_off[row] : NULL;
	col = r->col[c];
	return col ? col + r->rows[row].offset : NULL;
}
