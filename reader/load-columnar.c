/* SPDX-License-Identifier: MIT */
/*
 * Loader for the columnar HDF5 layouts (schema 2 absolute times, schema 3
 * delta-encoded, and the aggregate layout): region table, index rows with
 * their optional columns, event columns read whole (the MPI columns of the
 * row layout: mpi-layout.c), and the thread table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hdf5-util.h"
#include "mpi-layout.h"
#include "region-kinds.h"
#include "sp-format.h"

static const struct {
	enum sp_column col;
	const char *name;
} optional_event_columns[] = {
	{ SP_COL_GPU_DURATIONS, SP_EV_GPU_DURATIONS },
	{ SP_COL_CALL_IDS, SP_EV_CALL_IDS },
	{ SP_COL_PARENT_IDS, SP_EV_PARENT_IDS },
	{ SP_COL_THREAD_IDS, SP_EV_THREAD_IDS },
	{ SP_COL_TASK_IDS, SP_EV_TASK_IDS },
	{ SP_COL_AWAIT_NS, SP_EV_AWAIT_NS },
	{ SP_COL_MPI_BYTES, SP_EV_MPI_BYTES },
	{ SP_COL_MPI_PEERS, SP_EV_MPI_PEERS },
	{ SP_COL_MPI_ROOTS, SP_EV_MPI_ROOTS },
	{ SP_COL_MPI_TAGS, SP_EV_MPI_TAGS },
	{ SP_COL_MPI_COMMS, SP_EV_MPI_COMMS },
	{ SP_COL_CALLSITE_IDS, SP_EV_CALLSITE_IDS },
};

enum idx_col {
	IX_REGION, IX_RANK, IX_OFFSET, IX_COUNT, IX_LINE, IX_EXCL,
	IX_AGG_COUNT, IX_AGG_TOTAL, IX_AGG_MIN, IX_AGG_MAX, IX_AGG_EXCL,
	IX_DROPPED, IX_THR_COUNT, IX_THR_TOTAL, IX_THR_TIMED, IX_THR_CI, IX_THR_SINCE, IX_PATCHED, IX_N
};

static const char *const idx_names[IX_N] = {
	SP_IDX_REGION_IDS, SP_IDX_RANKS, SP_IDX_EVENT_OFFSETS,
	SP_IDX_EVENT_COUNTS, SP_IDX_SOURCE_LINES, SP_IDX_EXCLUSIVE_TOTALS,
	SP_IDX_AGG_COUNTS, SP_IDX_AGG_TOTALS, SP_IDX_AGG_MINIMUMS,
	SP_IDX_AGG_MAXIMUMS, SP_IDX_AGG_EXCLUSIVES, SP_IDX_DROPPED_COUNTS,
	SP_IDX_THROTTLED_COUNTS, SP_IDX_THROTTLED_TOTALS, SP_IDX_THROTTLED_TIMED,
	SP_IDX_THROTTLED_CI95, SP_IDX_THROTTLED_SINCE, SP_IDX_PATCHED_SINCE,
};

static int check_len(struct sp_reader *r, const char *group, const char *name,
		     long n, long expect)
{
	if (n >= 0 && n != expect)
		return sp_error(SP_E_CORRUPT,
				"%s: corrupt file: column '%s/%s' has %ld rows, expected %ld",
				r->path, group, name, n, expect);
	return 0;
}

static int read_summary_column(struct sp_reader *r, hid_t idx, long n)
{
	struct sp_summary_record *buf;
	hid_t dset, mtype;
	herr_t st;

	if (!h5_exists(idx, SP_IDX_SUMMARY))
		return 0;
	dset = H5Dopen2(idx, SP_IDX_SUMMARY, H5P_DEFAULT);
	if (dset < 0)
		return sp_error(SP_E_CORRUPT, "%s: cannot open '%s/%s'", r->path,
				SP_GROUP_INDEX, SP_IDX_SUMMARY);
	/* H5S_ALL reads the whole dataset: it must have exactly n records. */
	if (h5_dset_len(dset) != n) {
		H5Dclose(dset);
		return sp_error(SP_E_CORRUPT,
				"%s: corrupt file: '%s/%s' is not a 1-D column of %ld records",
				r->path, SP_GROUP_INDEX, SP_IDX_SUMMARY, n);
	}
	mtype = H5Tcreate(H5T_COMPOUND, sizeof(struct sp_summary_record));
#define INSERT_FIELD(f, t) \
	H5Tinsert(mtype, #f, HOFFSET(struct sp_summary_record, f), \
		  _Generic(((struct sp_summary_record *)0)->f, \
			   int64_t: H5T_NATIVE_INT64, \
			   uint64_t: H5T_NATIVE_UINT64, \
			   double: H5T_NATIVE_DOUBLE));
	SP_SUMMARY_FIELDS(INSERT_FIELD)
#undef INSERT_FIELD
	buf = calloc((size_t)n + 1, sizeof(*buf));
	st = buf ? H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : -1;
	H5Tclose(mtype);
	H5Dclose(dset);
	if (st < 0) {
		free(buf);
		return buf ? sp_error(SP_E_CORRUPT,
				      "%s: cannot read '%s/%s'", r->path,
				      SP_GROUP_INDEX, SP_IDX_SUMMARY)
			   : -ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		struct sp_row_summary *s = &r->rows[i].summary;

		r->rows[i].has_summary = true;
		s->total = buf[i].total;
		s->minimum = buf[i].minimum;
		s->maximum = buf[i].maximum;
		s->first = buf[i].first;
		s->last = buf[i].last;
		s->start_minimum = buf[i].start_minimum;
		s->end_maximum = buf[i].end_maximum;
		s->gpu_count = buf[i].gpu_count;
		s->gpu_total = buf[i].gpu_total;
		s->mean = buf[i].mean;
		s->m2 = buf[i].m2;
	}
	free(buf);
	return 0;
}

/* Index values must fit the row fields before they are narrowed. */
static int check_row(struct sp_reader *r, int64_t *const c[IX_N], long i)
{
	const char *what = NULL;
	int64_t v = 0;

	if (c[IX_REGION][i] < 0 || c[IX_REGION][i] > (int64_t)UINT32_MAX)
		what = SP_IDX_REGION_IDS, v = c[IX_REGION][i];
	else if (c[IX_RANK][i] < 0 || c[IX_RANK][i] > (int64_t)SP_RANK_MAX)
		what = SP_IDX_RANKS, v = c[IX_RANK][i];
	else if (c[IX_OFFSET] && c[IX_OFFSET][i] < 0)
		what = SP_IDX_EVENT_OFFSETS, v = c[IX_OFFSET][i];
	else if (c[IX_COUNT] && c[IX_COUNT][i] < 0)
		what = SP_IDX_EVENT_COUNTS, v = c[IX_COUNT][i];
	else if (c[IX_AGG_COUNT] && c[IX_AGG_COUNT][i] < 0)
		what = SP_IDX_AGG_COUNTS, v = c[IX_AGG_COUNT][i];
	if (!what)
		return 0;
	return sp_error(SP_E_CORRUPT,
			"%s: corrupt index: '%s/%s' row %ld holds %lld, out of range",
			r->path, SP_GROUP_INDEX, what, i, (long long)v);
}

static void fill_row(struct sp_row *row, int64_t *const c[IX_N], long i)
{
	row->region = (uint32_t)c[IX_REGION][i];
	row->rank = (uint32_t)c[IX_RANK][i];
	row->offset = c[IX_OFFSET] ? (uint64_t)c[IX_OFFSET][i] : 0;
	row->count = c[IX_COUNT] ? (uint64_t)c[IX_COUNT][i] : 0;
	if (c[IX_LINE])
		row->source_lineno = c[IX_LINE][i];
	if (c[IX_EXCL])
		row->exclusive_total_ns = c[IX_EXCL][i];
	if (c[IX_AGG_COUNT]) {
		row->has_aggregate = true;
		row->agg_count = (uint64_t)c[IX_AGG_COUNT][i];
		row->agg_total_ns = c[IX_AGG_TOTAL] ? c[IX_AGG_TOTAL][i] : 0;
		row->agg_min_ns = c[IX_AGG_MIN] ? c[IX_AGG_MIN][i] : 0;
		row->agg_max_ns = c[IX_AGG_MAX] ? c[IX_AGG_MAX][i] : 0;
		row->agg_exclusive_ns = c[IX_AGG_EXCL] ? c[IX_AGG_EXCL][i] : -1;
	}
	if (c[IX_DROPPED])
		row->dropped_count = c[IX_DROPPED][i];
	if (c[IX_THR_COUNT])
		row->throttled_count = c[IX_THR_COUNT][i];
	if (c[IX_THR_TOTAL])
		row->throttled_total_ns = c[IX_THR_TOTAL][i];
	if (c[IX_THR_TIMED])
		row->throttle_timed = c[IX_THR_TIMED][i];
	if (c[IX_THR_CI])
		row->throttled_ci_ns = c[IX_THR_CI][i];
	if (c[IX_THR_SINCE])
		row->throttled_since_ns = c[IX_THR_SINCE][i];
	if (c[IX_PATCHED])
		row->patched_since_ns = c[IX_PATCHED][i];
}

static int read_index_strings(struct sp_reader *r, hid_t idx, long n)
{
	char **files = NULL, **texts = NULL, **tags = NULL;
	long nf = h5_read_strings(r, idx, SP_IDX_SOURCE_FILES, &files);
	long nt = h5_read_strings(r, idx, SP_IDX_SOURCE_TEXTS, &texts);
	long ng = h5_read_strings(r, idx, SP_IDX_TAGS, &tags);
	int rc = 0;

	if (nf < 0 && nf != -ENOENT)
		return (int)nf;
	if (nt < 0 && nt != -ENOENT)
		return (int)nt;
	if (ng < 0 && ng != -ENOENT)
		return (int)ng;
	if (check_len(r, SP_GROUP_INDEX, SP_IDX_SOURCE_FILES, nf, n) ||
	    check_len(r, SP_GROUP_INDEX, SP_IDX_SOURCE_TEXTS, nt, n) ||
	    check_len(r, SP_GROUP_INDEX, SP_IDX_TAGS, ng, n))
		return -SP_E_CORRUPT;
	for (long i = 0; i < n && rc == 0; i++) {
		if (nf > 0)
			r->rows[i].source_file = files[i];
		if (nt > 0)
			r->rows[i].source_text = texts[i];
		if (ng > 0)
			rc = row_set_tags_json(r, &r->rows[i], tags[i]);
	}
	return rc;
}

static int load_index(struct sp_reader *r, hid_t file)
{
	int64_t *c[IX_N] = { 0 };
	long n = -1, len;
	hid_t idx;
	int rc = 0;

	if (!h5_exists(file, SP_GROUP_INDEX))
		return sp_error(SP_E_NOT_PROFILE,
				"%s: not a scope-profiler file: group '/%s' is missing",
				r->path, SP_GROUP_INDEX);
	idx = H5Gopen2(file, SP_GROUP_INDEX, H5P_DEFAULT);
	for (int k = 0; k < IX_N && rc == 0; k++) {
		len = h5_read_i64(r, idx, idx_names[k], &c[k]);
		if (len == -ENOENT) {
			if (k == IX_REGION || k == IX_RANK ||
			    ((k == IX_OFFSET || k == IX_COUNT) &&
			     r->layout != SP_LAYOUT_AGGREGATE))
				rc = sp_error(SP_E_NOT_PROFILE,
					      "%s: not a scope-profiler file: '/%s/%s' is missing",
					      r->path, SP_GROUP_INDEX, idx_names[k]);
			continue;
		}
		if (len < 0) {
			rc = (int)len;
			break;
		}
		if (n < 0)
			n = len;
		rc = check_len(r, SP_GROUP_INDEX, idx_names[k], len, n);
	}
	for (long i = 0; rc == 0 && i < n; i++) {
		struct sp_row *row;

		rc = check_row(r, c, i);
		if (rc < 0)
			break;
		row = reader_add_row(r);
		if (!row)
			rc = -ENOMEM;
		else
			fill_row(row, c, i);
	}
	if (rc == 0)
		rc = read_index_strings(r, idx, n);
	if (rc == 0)
		rc = read_summary_column(r, idx, n);
	for (int k = 0; k < IX_N; k++)
		free(c[k]);
	H5Gclose(idx);
	return rc;
}

/* Schema 3: cumulative sum within each row's slice; end = start + duration. */
static void decode_deltas(struct sp_reader *r)
{
	int64_t *s = r->col[SP_COL_START_TIMES], *e = r->col[SP_COL_END_TIMES];

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct sp_row *row = &r->rows[i];
		int64_t acc = 0;

		for (uint64_t k = row->offset; k < row->offset + row->count; k++) {
			acc = sp_add_wrap(acc, s[k]); /* garbage is range-checked later */
			s[k] = acc;
		}
	}
	for (size_t k = 0; k < r->n_events; k++)
		e[k] = sp_add_wrap(e[k], s[k]);
}

/*
 * Map event column col from the file when the caller allowed it and the
 * dataset is stored as the recorder writes it: contiguous, unfiltered,
 * native int64, 8-byte aligned and inside the file. Returns the element
 * count, or 0 when the column is to be read instead (absent, empty, or
 * stored any other way: h5_read_i64 then checks and reports it).
 */
static long map_column(struct sp_reader *r, hid_t ev, const char *name,
		       enum sp_column col, uint64_t limit)
{
	hid_t dset, type, dcpl;
	hssize_t n;
	haddr_t off;
	bool plain;
	struct stat st;
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes, skip;
	void *p;

	if (!(r->open_flags & SP_OPEN_MAP_COLUMNS) || !r->h5_fd_ok ||
	    page <= 0 || !h5_exists(ev, name))
		return 0;
	dset = H5Dopen2(ev, name, H5P_DEFAULT);
	if (dset < 0)
		return 0;
	type = H5Dget_type(dset);
	dcpl = H5Dget_create_plist(dset);
	n = h5_dset_len(dset);
	plain = type >= 0 && H5Tequal(type, H5T_NATIVE_INT64) > 0 &&
		dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS &&
		H5Pget_nfilters(dcpl) == 0 && n > 0 &&
		H5Dget_storage_size(dset) == (hsize_t)n * sizeof(int64_t);
	off = plain ? H5Dget_offset(dset) : HADDR_UNDEF;
	if (type >= 0)
		H5Tclose(type);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	H5Dclose(dset);
	if (plain && (uint64_t)n > limit)
		n = (hssize_t)limit; /* values past the index's are not mapped */
	if (!plain || n <= 0 || off == HADDR_UNDEF || off % sizeof(int64_t) != 0 ||
	    fstat(r->h5_fd, &st) != 0 || (uint64_t)st.st_size < off ||
	    (uint64_t)st.st_size - off < (uint64_t)n * sizeof(int64_t))
		return 0;
	skip = (size_t)(off % (haddr_t)page);
	bytes = skip + (size_t)n * sizeof(int64_t);
	/* Populated up front: one call maps the cached pages (faulting them
	 * in 64 KiB at a time costs more). */
	p = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, r->h5_fd,
		 (off_t)(off - skip));
	if (p == MAP_FAILED)
		return 0;
	r->map[col].base = p;
	r->map[col].len = bytes;
	r->col[col] = (int64_t *)((char *)p + skip);
	return (long)n;
}

/* A column mapped when allowed and possible, else read whole. */
static long event_column(struct sp_reader *r, hid_t ev, const char *name,
			 enum sp_column col, uint64_t limit)
{
	long n = map_column(r, ev, name, col, limit);

	return n > 0 ? n : h5_read_i64_max(r, ev, name, limit, &r->col[col]);
}

/* The length a 1-D dataset claims (-1 when absent or not 1-D). */
static long claimed_len(hid_t loc, const char *name)
{
	hid_t d = h5_exists(loc, name) ? H5Dopen2(loc, name, H5P_DEFAULT) : -1;
	hssize_t n = d >= 0 ? h5_dset_len(d) : -1;

	if (d >= 0)
		H5Dclose(d);
	return (long)n;
}

/*
 * Events the index refers to: the end of the last row's slice. Columns are
 * read only that far, so a small file whose columns claim far more values
 * than its rows use (a compressed "bomb") costs what its rows use.
 */
static uint64_t events_referenced(const struct sp_reader *r)
{
	uint64_t end = 0;

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct sp_row *row = &r->rows[i];
		uint64_t e = row->offset + row->count;

		if (e < row->offset)
			return UINT64_MAX; /* overflow: the partition check reports it */
		if (e > end)
			end = e;
	}
	return end;
}

static int load_events(struct sp_reader *r, hid_t file)
{
	bool deltas, mpi_rows = false;
	uint64_t limit;
	long n, m, full;
	hid_t ev;
	int rc = 0;

	if (!h5_exists(file, SP_GROUP_EVENTS)) {
		if (r->layout == SP_LAYOUT_AGGREGATE)
			return 0;
		return sp_error(SP_E_NOT_PROFILE,
				"%s: not a scope-profiler file: group '/%s' is missing",
				r->path, SP_GROUP_EVENTS);
	}
	ev = H5Gopen2(file, SP_GROUP_EVENTS, H5P_DEFAULT);
	deltas = h5_exists(ev, SP_EV_START_DELTAS);
	/* Deltas are decoded in place: read, never mapped. */
	limit = events_referenced(r);
	full = claimed_len(ev, deltas ? SP_EV_START_DELTAS : SP_EV_START_TIMES);
	if (deltas) {
		n = h5_read_i64_max(r, ev, SP_EV_START_DELTAS, limit,
				    &r->col[SP_COL_START_TIMES]);
		m = h5_read_i64_max(r, ev, SP_EV_DURATIONS, limit,
				    &r->col[SP_COL_END_TIMES]);
	} else {
		n = event_column(r, ev, SP_EV_START_TIMES, SP_COL_START_TIMES, limit);
		m = event_column(r, ev, SP_EV_END_TIMES, SP_COL_END_TIMES, limit);
	}
	if (n == -ENOENT || m == -ENOENT) {
		if (r->layout != SP_LAYOUT_AGGREGATE)
			rc = sp_error(SP_E_NOT_PROFILE,
				      "%s: not a scope-profiler file: '/%s' has no start/end columns",
				      r->path, SP_GROUP_EVENTS);
		n = m = 0;
	} else if (n < 0 || m < 0) {
		rc = (int)(n < 0 ? n : m);
	} else {
		const char *e = deltas ? SP_EV_DURATIONS : SP_EV_END_TIMES;

		rc = check_len(r, SP_GROUP_EVENTS, e, claimed_len(ev, e), full);
		if (rc == 0)
			rc = check_len(r, SP_GROUP_EVENTS, e, m, n);
	}
	r->n_events = n > 0 ? (size_t)n : 0;
	/* MPI columns in the row layout, or (-ENOENT) full-length as before. */
	if (rc == 0) {
		rc = mpi_rows_load(r, file, ev);
		mpi_rows = rc == 0;
		rc = rc == -ENOENT ? 0 : rc;
	}
	for (size_t k = 0; rc == 0 && k < sizeof(optional_event_columns) /
			 sizeof(optional_event_columns[0]); k++) {
		const char *name = optional_event_columns[k].name;
		long len;

		if (mpi_rows && mpi_rows_holds(optional_event_columns[k].col))
			continue;
		/* Every event column claims as many values as the times (only
		 * the referenced ones are read). */
		if (h5_exists(ev, name) && claimed_len(ev, name) != full) {
			rc = check_len(r, SP_GROUP_EVENTS, name, claimed_len(ev, name), full);
			break;
		}
		len = event_column(r, ev, name, optional_event_columns[k].col, limit);

		if (len == -ENOENT)
			continue;
		rc = len < 0 ? (int)len : check_len(r, SP_GROUP_EVENTS, name, len, n);
	}
	H5Gclose(ev);
	if (rc == 0 && deltas) {
		/* Validate slices first so the decode stays in bounds. */
		for (size_t i = 0; i < r->n_rows; i++)
			if (r->rows[i].offset > r->n_events ||
			    r->rows[i].count > r->n_events - r->rows[i].offset)
				return 0; /* reader_finish reports it */
		decode_deltas(r);
	}
	return rc;
}

static int load_thread_table(struct sp_reader *r, hid_t file)
{
	static const char *const names[] = {
		SP_TT_RANKS, SP_TT_INDEX, SP_TT_IDENT, SP_TT_NATIVE_ID,
		SP_TT_DAEMON, SP_TT_START_NS, SP_TT_END_NS, SP_TT_CPU_NS,
	};
	int64_t *c[8] = { 0 };
	char **tnames = NULL;
	long n = -1;
	hid_t tt;
	int rc = 0;

	if (!h5_exists(file, SP_GROUP_THREAD_TABLE))
		return 0;
	tt = H5Gopen2(file, SP_GROUP_THREAD_TABLE, H5P_DEFAULT);
	for (int k = 0; k < 8 && rc == 0; k++) {
		long len = h5_read_i64(r, tt, names[k], &c[k]);

		if (len == -ENOENT)
			continue;
		if (len < 0)
			rc = (int)len;
		else if (n < 0)
			n = len;
		else
			rc = check_len(r, SP_GROUP_THREAD_TABLE, names[k], len, n);
	}
	if (rc == 0 && n > 0) {
		long nn = h5_read_strings(r, tt, SP_TT_NAME, &tnames);

		r->threads = calloc((size_t)n, sizeof(*r->threads));
		if (!r->threads)
			rc = -ENOMEM;
		for (long i = 0; rc == 0 && i < n; i++) {
			struct sp_thread *t = &r->threads[i];

			t->rank = c[0] ? (uint32_t)c[0][i] : 0;
			t->index = c[1] ? c[1][i] : i;
			t->ident = c[2] ? c[2][i] : -1;
			t->native_id = c[3] ? c[3][i] : -1;
			t->daemon = c[4] ? (int8_t)c[4][i] : 0;
			t->start_ns = c[5] ? c[5][i] : -1;
			t->end_ns = c[6] ? c[6][i] : -1;
			t->cpu_ns = c[7] ? c[7][i] : -1;
			t->name = nn == n ? tnames[i] : "";
		}
		if (rc == 0)
			r->n_threads = (size_t)n;
	}
	for (int k = 0; k < 8; k++)
		free(c[k]);
	H5Gclose(tt);
	return rc;
}

int sp_load_columnar(struct sp_reader *r, hid_t file)
{
	char **names = NULL;
	hid_t rt;
	long n;
	int rc;

	if (!h5_exists(file, SP_GROUP_REGION_TABLE))
		return sp_error(SP_E_NOT_PROFILE,
				"%s: not a scope-profiler file: group '/%s' is missing",
				r->path, SP_GROUP_REGION_TABLE);
	rt = H5Gopen2(file, SP_GROUP_REGION_TABLE, H5P_DEFAULT);
	n = h5_read_strings(r, rt, SP_DSET_REGION_NAMES, &names);
	if (n == -ENOENT)
		rc = sp_error(SP_E_NOT_PROFILE,
			      "%s: not a scope-profiler file: '/%s/%s' is missing",
			      r->path, SP_GROUP_REGION_TABLE, SP_DSET_REGION_NAMES);
	else
		rc = n < 0 ? (int)n : 0;
	for (long i = 0; rc == 0 && i < n; i++)
		if (reader_add_region(r, names[i], NULL) < 0)
			rc = -ENOMEM;
	if (rc == 0)
		rc = reader_load_kinds(r, rt);
	H5Gclose(rt);
	if (rc < 0)
		return rc;
	rc = load_index(r, file);
	if (rc == 0)
		rc = load_events(r, file);
	if (rc == 0)
		rc = load_thread_table(r, file);
	return rc;
}
