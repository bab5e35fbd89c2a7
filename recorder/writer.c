/* SPDX-License-Identifier: MIT */
/*
 * HDF5 writer for schema 2. Datasets are contiguous and sized up front
 * (the layout is known before any data), so every put is one hyperslab
 * write and the file needs no repacking; uncompressed start/end columns
 * can instead be written by the caller at their byte offsets. Publication
 * is atomic: temp file, fsync, rename, fsync of the directory.
 */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sp_writer {
	hid_t file;
	char *path, *tmp;
	struct sp_writer_layout layout;
	hid_t str_type;   /* vlen UTF-8 */
	hid_t summary_type;
	hid_t g_meta, g_index, g_events, g_threads;
	bool times_raw;   /* start/end written by the caller (sp_writer_times_raw) */
};

static hid_t make_str_type(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	return t;
}

static hid_t make_summary_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct sp_summary_record));
#define F_int64 H5T_STD_I64LE
#define F_uint64 H5T_STD_U64LE
#define F_double H5T_IEEE_F64LE
#define INSERT(name, type) H5Tinsert(t, #name, HOFFSET(struct sp_summary_record, name), F_##type);
	SP_SUMMARY_FIELDS(INSERT)
#undef INSERT
	return t;
}

/* Map a file type to the matching in-memory type. */
static hid_t mem_type(hid_t file_type)
{
	if (H5Tequal(file_type, H5T_STD_I64LE) > 0)
		return H5T_NATIVE_INT64;
	if (H5Tequal(file_type, H5T_STD_U64LE) > 0)
		return H5T_NATIVE_UINT64;
	if (H5Tequal(file_type, H5T_STD_U32LE) > 0)
		return H5T_NATIVE_UINT32;
	if (H5Tequal(file_type, H5T_STD_I32LE) > 0)
		return H5T_NATIVE_INT32;
	if (H5Tequal(file_type, H5T_STD_I8LE) > 0)
		return H5T_NATIVE_INT8;
	if (H5Tequal(file_type, H5T_STD_U8LE) > 0)
		return H5T_NATIVE_UINT8;
	return file_type; /* strings and the compound use the same type */
}

/* Events per chunk of a compressed column (512 KiB of int64). */
#define COMPRESSED_CHUNK 65536

/* make_dset_level: contiguous, storage allocated now and never filled by
 * HDF5, so that sp_writer_times_raw can hand out where it lies. */
#define DSET_RAW (-1)

/* A 1-D dataset of n values: contiguous, or chunked with byte shuffle +
 * deflate at `level` (1-9). Compression only pays on event columns. */
static int make_dset_level(hid_t group, const char *name, hid_t type, uint64_t n, int level)
{
	hsize_t dims = n;
	hid_t space = H5Screate_simple(1, &dims, NULL);
	hid_t dcpl = H5P_DEFAULT;
	if (level == DSET_RAW && n > 0) {
		dcpl = H5Pcreate(H5P_DATASET_CREATE);
		H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
		H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
	} else if (level > 0 && n > 0) {
		hsize_t chunk = n < COMPRESSED_CHUNK ? n : COMPRESSED_CHUNK;
		dcpl = H5Pcreate(H5P_DATASET_CREATE);
		H5Pset_chunk(dcpl, 1, &chunk);
		H5Pset_shuffle(dcpl);
		H5Pset_deflate(dcpl, (unsigned)level);
	}
	hid_t d = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (dcpl != H5P_DEFAULT)
		H5Pclose(dcpl);
	H5Sclose(space);
	if (d < 0)
		return -EIO;
	H5Dclose(d);
	return 0;
}

static int make_dset(hid_t group, const char *name, hid_t type, uint64_t n)
{
	return make_dset_level(group, name, type, n, 0);
}

/* Write n values of `buf` at [first, first+n) of group/name. */
static int put(hid_t group, const char *name, uint64_t first, uint64_t n, const void *buf)
{
	if (n == 0)
		return 0;
	hid_t d = H5Dopen2(group, name, H5P_DEFAULT);
	if (d < 0)
		return -EIO;
	hid_t ftype = H5Dget_type(d);
	hid_t fspace = H5Dget_space(d);
	hsize_t start = first, count = n;
	hid_t mspace = H5Screate_simple(1, &count, NULL);
	herr_t rc = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
	if (rc >= 0)
		rc = H5Dwrite(d, mem_type(ftype), mspace, fspace, H5P_DEFAULT, buf);
	H5Sclose(mspace);
	H5Sclose(fspace);
	H5Tclose(ftype);
	H5Dclose(d);
	return rc < 0 ? -EIO : 0;
}

static int attr_scalar(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
	hid_t space = H5Screate(H5S_SCALAR);
	if (H5Aexists(obj, name) > 0)
		H5Adelete(obj, name);
	hid_t a = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
	herr_t rc = a < 0 ? -1 : H5Awrite(a, mtype, v);
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(space);
	return rc < 0 ? -EIO : 0;
}

static int attr_str(struct sp_writer *w, hid_t obj, const char *name, const char *v)
{
	return attr_scalar(obj, name, w->str_type, w->str_type, &v);
}

static int attr_strlist(struct sp_writer *w, hid_t obj, const char *name, char *const *v,
			size_t n)
{
	hsize_t dims = n;
	hid_t space = H5Screate_simple(1, &dims, NULL);
	hid_t a = H5Acreate2(obj, name, w->str_type, space, H5P_DEFAULT, H5P_DEFAULT);
	herr_t rc = a < 0 ? -1 : (n ? H5Awrite(a, w->str_type, v) : 0);
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(space);
	return rc < 0 ? -EIO : 0;
}

static int create_index(struct sp_writer *w)
{
	const struct sp_writer_layout *l = &w->layout;
	hid_t g = w->g_index;
	uint64_t n = l->nrows;
	int ret = 0;
	ret |= make_dset(g, SP_IDX_REGION_IDS, H5T_STD_U32LE, n);
	ret |= make_dset(g, SP_IDX_RANKS, H5T_STD_U32LE, n);
	ret |= make_dset(g, SP_IDX_EVENT_OFFSETS, H5T_STD_U64LE, n);
	ret |= make_dset(g, SP_IDX_EVENT_COUNTS, H5T_STD_U64LE, n);
	ret |= make_dset(g, SP_IDX_SOURCE_LINES, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_IDX_SOURCE_FILES, w->str_type, n);
	ret |= make_dset(g, SP_IDX_SOURCE_TEXTS, w->str_type, n);
	ret |= make_dset(g, SP_IDX_TAGS, w->str_type, n);
	ret |= make_dset(g, SP_IDX_EXCLUSIVE_TOTALS, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_IDX_SUMMARY, w->summary_type, n);
	if (l->columns & SP_COL_DROPPED)
		ret |= make_dset(g, SP_IDX_DROPPED_COUNTS, H5T_STD_U64LE, n);
	if (l->columns & SP_COL_THROTTLED) {
		ret |= make_dset(g, SP_IDX_THROTTLED_COUNTS, H5T_STD_U64LE, n);
		ret |= make_dset(g, SP_IDX_THROTTLED_TOTALS, H5T_STD_I64LE, n);
		ret |= make_dset(g, SP_IDX_THROTTLED_TIMED, H5T_STD_U64LE, n);
		ret |= make_dset(g, SP_IDX_THROTTLED_CI95, H5T_STD_I64LE, n);
		ret |= make_dset(g, SP_IDX_THROTTLED_SINCE, H5T_STD_I64LE, n);
		ret |= make_dset(g, SP_IDX_PATCHED_SINCE, H5T_STD_I64LE, n);
	}
	if (l->columns & SP_COL_MPI)
		ret |= make_dset(g, SP_IDX_MPI_OFFSETS, H5T_STD_I64LE, n);
	return ret ? -EIO : 0;
}

/*
 * The MPI columns in the row layout: nmpi values (the events of the rows
 * with MPI data, mpi_offsets says where each row's are), so the events of
 * function and manual regions cost nothing here; /events names the layout.
 */
static int create_mpi(struct sp_writer *w, hid_t g, uint64_t m, int z)
{
	unsigned c = w->layout.columns;
	int ret = 0;
	ret |= make_dset_level(g, SP_EV_MPI_BYTES, H5T_STD_I64LE, m, z);
	ret |= make_dset_level(g, SP_EV_MPI_PEERS, H5T_STD_I32LE, m, z);
	ret |= make_dset_level(g, SP_EV_MPI_ROOTS, H5T_STD_I32LE, m, z);
	ret |= make_dset_level(g, SP_EV_MPI_TAGS, H5T_STD_I32LE, m, z);
	ret |= make_dset_level(g, SP_EV_MPI_COMMS, H5T_STD_I32LE, m, z);
	if (c & SP_COL_CALLSITE)
		ret |= make_dset_level(g, SP_EV_CALLSITE_IDS, H5T_STD_I32LE, m, z);
	if (!ret)
		ret = attr_str(w, g, SP_EV_ATTR_MPI_LAYOUT, SP_MPI_LAYOUT_ROWS);
	return ret ? -EIO : 0;
}

static int create_events(struct sp_writer *w)
{
	const struct sp_writer_layout *l = &w->layout;
	hid_t g = w->g_events;
	uint64_t n = l->nevents;
	int z = l->compression, ret = 0;
	ret |= make_dset_level(g, SP_EV_START_TIMES, H5T_STD_I64LE, n, z ? z : DSET_RAW);
	ret |= make_dset_level(g, SP_EV_END_TIMES, H5T_STD_I64LE, n, z ? z : DSET_RAW);
	if (l->columns & SP_COL_THREAD_IDS)
		ret |= make_dset_level(g, SP_EV_THREAD_IDS, H5T_STD_I64LE, n, z);
	if (l->columns & SP_COL_MPI)
		ret |= create_mpi(w, g, l->nmpi, z);
	return ret ? -EIO : 0;
}

static int create_threads(struct sp_writer *w)
{
	hid_t g = w->g_threads;
	uint64_t n = w->layout.nthreads;
	int ret = 0;
	ret |= make_dset(g, SP_TT_RANKS, H5T_STD_U32LE, n);
	ret |= make_dset(g, SP_TT_INDEX, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_TT_IDENT, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_TT_NATIVE_ID, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_TT_DAEMON, H5T_STD_I8LE, n);
	ret |= make_dset(g, SP_TT_START_NS, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_TT_END_NS, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_TT_CPU_NS, H5T_STD_I64LE, n);
	ret |= make_dset(g, SP_TT_NAME, w->str_type, n);
	return ret ? -EIO : 0;
}

static int write_region_names(struct sp_writer *w, hid_t g)
{
	int ret = make_dset(g, SP_DSET_REGION_NAMES, w->str_type, w->layout.nnames);
	if (!ret)
		ret = put(g, SP_DSET_REGION_NAMES, 0, w->layout.nnames, w->layout.names);
	if (!ret && w->layout.kinds)
		ret = make_dset(g, SP_DSET_REGION_KINDS, H5T_STD_U8LE, w->layout.nnames);
	if (!ret && w->layout.kinds)
		ret = put(g, SP_DSET_REGION_KINDS, 0, w->layout.nnames, w->layout.kinds);
	return ret;
}

static char *temp_path(const char *path)
{
	char *dup = strdup(path), *dup2 = strdup(path), *out = NULL;
	if (dup && dup2 &&
	    asprintf(&out, "%s/.%s.%d.tmp", dirname(dup), basename(dup2), (int)getpid()) < 0)
		out = NULL;
	free(dup);
	free(dup2);
	return out;
}

static int open_groups(struct sp_writer *w)
{
	hid_t root = w->file;
	int64_t schema = SP_SCHEMA_WRITTEN;
	int ret = attr_scalar(root, SP_ATTR_SCHEMA, H5T_STD_I64LE, H5T_NATIVE_INT64, &schema);
	if (!ret)
		ret = attr_str(w, root, SP_ATTR_STORAGE_LAYOUT, SP_STORAGE_COLUMNAR);
	w->g_meta = H5Gcreate2(root, SP_GROUP_METADATA, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	hid_t rt = H5Gcreate2(root, SP_GROUP_REGION_TABLE, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	w->g_index = H5Gcreate2(root, SP_GROUP_INDEX, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	w->g_events = H5Gcreate2(root, SP_GROUP_EVENTS, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (w->g_meta < 0 || rt < 0 || w->g_index < 0 || w->g_events < 0)
		ret = -EIO;
	if (!ret)
		ret = write_region_names(w, rt);
	if (rt >= 0)
		H5Gclose(rt);
	if (!ret && (w->layout.columns & SP_COL_THREAD_IDS)) {
		w->g_threads = H5Gcreate2(root, SP_GROUP_THREAD_TABLE, H5P_DEFAULT, H5P_DEFAULT,
					  H5P_DEFAULT);
		ret = w->g_threads < 0 ? -EIO : create_threads(w);
	}
	return ret;
}

static herr_t find_lock_error(unsigned n, const H5E_error2_t *e, void *data)
{
	(void)n;
	if (e->min_num == H5E_CANTLOCKFILE)
		*(bool *)data = true;
	return 0;
}

/* Why H5Fcreate failed: -ENOLCK when HDF5 could not lock the file (file
 * systems without locks: HDF5_USE_FILE_LOCKING=FALSE), -EIO otherwise. */
static int create_error(void)
{
	bool lock = false;
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_lock_error, &lock);
	return lock ? -ENOLCK : -EIO;
}

int sp_writer_create(const char *path, const struct sp_writer_layout *layout,
		     struct sp_writer **ret_writer)
{
	struct sp_writer *w = calloc(1, sizeof *w);
	if (!w)
		return -ENOMEM;
	w->file = w->g_meta = w->g_index = w->g_events = w->g_threads = H5I_INVALID_HID;
	w->layout = *layout;
	if ((layout->columns & SP_COL_CALLSITE) && !(layout->columns & SP_COL_MPI)) {
		free(w);
		return -EINVAL; /* call sites are laid out as the MPI columns */
	}
	/* The file is written beside the output and renamed over it: an output
	 * that exists and is not a regular file (/dev/null, a FIFO, a device)
	 * would be replaced, so it is refused (-EEXIST: "File exists"). */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		free(w);
		return -EEXIST;
	}
	w->path = strdup(path);
	w->tmp = temp_path(path);
	if (!w->path || !w->tmp) {
		sp_writer_destroy(w);
		return -ENOMEM;
	}
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the library never prints */
	w->str_type = make_str_type();
	w->summary_type = make_summary_type();
	w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	int ret = w->file < 0 ? create_error() : open_groups(w);
	if (!ret)
		ret = create_index(w);
	if (!ret)
		ret = create_events(w);
	if (ret) {
		sp_writer_destroy(w);
		return ret;
	}
	*ret_writer = w;
	return 0;
}

/* Column scratch for one slice of rows. */
static int put_row_strings(struct sp_writer *w, uint64_t first, uint64_t n,
			   const struct sp_writer_row *rows)
{
	const char **files = malloc(n * sizeof *files), **empty = malloc(n * sizeof *empty),
		   **tags = malloc(n * sizeof *tags);
	int ret = files && empty && tags ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < n; i++) {
		files[i] = rows[i].source_file ? rows[i].source_file : "";
		empty[i] = "";
		tags[i] = "[]";
	}
	if (!ret)
		ret = put(w->g_index, SP_IDX_SOURCE_FILES, first, n, files);
	if (!ret)
		ret = put(w->g_index, SP_IDX_SOURCE_TEXTS, first, n, empty);
	if (!ret)
		ret = put(w->g_index, SP_IDX_TAGS, first, n, tags);
	free(files);
	free(empty);
	free(tags);
	return ret;
}

/* Gather one struct member of every row into a column and write it. */
#define PUT_ROW_COLUMN(name, type, expr)                                  \
	do {                                                              \
		type *col_ = malloc(n * sizeof *col_);                    \
		if (!col_)                                                \
			return -ENOMEM;                                   \
		for (uint64_t i = 0; i < n; i++)                          \
			col_[i] = (expr);                                 \
		int r_ = put(w->g_index, name, first, n, col_);           \
		free(col_);                                               \
		if (r_)                                                   \
			return r_;                                        \
	} while (0)

int sp_writer_put_rows(struct sp_writer *w, uint64_t first, uint64_t n,
		       const struct sp_writer_row *rows)
{
	if (first + n > w->layout.nrows)
		return -EINVAL;
	if (n == 0)
		return 0;
	PUT_ROW_COLUMN(SP_IDX_REGION_IDS, uint32_t, rows[i].region);
	PUT_ROW_COLUMN(SP_IDX_RANKS, uint32_t, rows[i].rank);
	PUT_ROW_COLUMN(SP_IDX_EVENT_OFFSETS, uint64_t, rows[i].offset);
	PUT_ROW_COLUMN(SP_IDX_EVENT_COUNTS, uint64_t, rows[i].count);
	PUT_ROW_COLUMN(SP_IDX_SOURCE_LINES, int64_t, rows[i].source_line);
	PUT_ROW_COLUMN(SP_IDX_EXCLUSIVE_TOTALS, int64_t, -1);
	PUT_ROW_COLUMN(SP_IDX_SUMMARY, struct sp_summary_record, rows[i].summary);
	if (w->layout.columns & SP_COL_DROPPED)
		PUT_ROW_COLUMN(SP_IDX_DROPPED_COUNTS, uint64_t, rows[i].dropped);
	if (w->layout.columns & SP_COL_THROTTLED) {
		PUT_ROW_COLUMN(SP_IDX_THROTTLED_COUNTS, uint64_t, rows[i].throttled_calls);
		PUT_ROW_COLUMN(SP_IDX_THROTTLED_TOTALS, int64_t, rows[i].throttled_ns);
		PUT_ROW_COLUMN(SP_IDX_THROTTLED_TIMED, uint64_t, rows[i].throttle_timed);
		PUT_ROW_COLUMN(SP_IDX_THROTTLED_CI95, int64_t, rows[i].throttled_ci_ns);
		PUT_ROW_COLUMN(SP_IDX_THROTTLED_SINCE, int64_t,
			       rows[i].throttled_since_ns > 0 ? rows[i].throttled_since_ns : -1);
		PUT_ROW_COLUMN(SP_IDX_PATCHED_SINCE, int64_t,
			       rows[i].patched_since_ns > 0 ? rows[i].patched_since_ns : -1);
	}
	if (w->layout.columns & SP_COL_MPI)
		PUT_ROW_COLUMN(SP_IDX_MPI_OFFSETS, int64_t, rows[i].mpi_offset);
	return put_row_strings(w, first, n, rows);
}

/* Where the bytes of an allocated contiguous dataset start in the file. */
static haddr_t dset_offset(hid_t group, const char *name)
{
	hid_t d = H5Dopen2(group, name, H5P_DEFAULT);
	if (d < 0)
		return HADDR_UNDEF;
	haddr_t off = H5Dget_offset(d);
	H5Dclose(d);
	return off;
}

int sp_writer_times_raw(struct sp_writer *w, int *ret_fd, uint64_t *off_start,
			uint64_t *off_end)
{
	void *handle = NULL;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return -ENOTSUP; /* the columns are little-endian int64 */
#endif
	if (w->layout.compression != 0 || w->layout.nevents == 0 || w->times_raw ||
	    H5Fget_vfd_handle(w->file, H5P_DEFAULT, &handle) < 0 || !handle)
		return -ENOTSUP;
	haddr_t s = dset_offset(w->g_events, SP_EV_START_TIMES);
	haddr_t e = dset_offset(w->g_events, SP_EV_END_TIMES);
	if (s == HADDR_UNDEF || e == HADDR_UNDEF)
		return -ENOTSUP;
	*ret_fd = *(int *)handle;
	*off_start = s;
	*off_end = e;
	w->times_raw = true;
	return 0;
}

int sp_writer_put_events(struct sp_writer *w, uint64_t first, uint64_t n,
			 const struct sp_writer_events *ev)
{
	unsigned c = w->layout.columns;
	hid_t g = w->g_events;
	bool raw = !ev->start && !ev->end; /* the caller wrote them */
	if (first + n > w->layout.nevents || (raw && !w->times_raw) ||
	    (!raw && (!ev->start || !ev->end)))
		return -EINVAL;
	int ret = 0;
	if (!raw) {
		ret = put(g, SP_EV_START_TIMES, first, n, ev->start);
		if (!ret)
			ret = put(g, SP_EV_END_TIMES, first, n, ev->end);
	}
	if (!ret && (c & SP_COL_THREAD_IDS))
		ret = put(g, SP_EV_THREAD_IDS, first, n, ev->thread_ids);
	return ret;
}

int sp_writer_put_mpi(struct sp_writer *w, uint64_t first, uint64_t n,
		      const struct sp_writer_mpi *m)
{
	unsigned c = w->layout.columns;
	hid_t g = w->g_events;
	if (!(c & SP_COL_MPI) || first > w->layout.nmpi || n > w->layout.nmpi - first)
		return -EINVAL;
	int ret = put(g, SP_EV_MPI_BYTES, first, n, m->bytes);
	ret = ret ? ret : put(g, SP_EV_MPI_PEERS, first, n, m->peers);
	ret = ret ? ret : put(g, SP_EV_MPI_ROOTS, first, n, m->roots);
	ret = ret ? ret : put(g, SP_EV_MPI_TAGS, first, n, m->tags);
	ret = ret ? ret : put(g, SP_EV_MPI_COMMS, first, n, m->comms);
	if (!ret && (c & SP_COL_CALLSITE))
		ret = put(g, SP_EV_CALLSITE_IDS, first, n, m->callsite_ids);
	return ret;
}

#define PUT_THREAD_COLUMN(name, type, expr)                               \
	do {                                                              \
		type *col_ = malloc(n * sizeof *col_);                    \
		if (!col_)                                                \
			return -ENOMEM;                                   \
		for (uint64_t i = 0; i < n; i++)                          \
			col_[i] = (expr);                                 \
		int r_ = put(w->g_threads, name, first, n, col_);         \
		free(col_);                                               \
		if (r_)                                                   \
			return r_;                                        \
	} while (0)

int sp_writer_put_threads(struct sp_writer *w, uint64_t first, uint64_t n,
			  const struct sp_writer_thread *t)
{
	if (!(w->layout.columns & SP_COL_THREAD_IDS) || first + n > w->layout.nthreads)
		return -EINVAL;
	if (n == 0)
		return 0;
	PUT_THREAD_COLUMN(SP_TT_RANKS, uint32_t, t[i].rank);
	PUT_THREAD_COLUMN(SP_TT_INDEX, int64_t, t[i].index);
	PUT_THREAD_COLUMN(SP_TT_IDENT, int64_t, t[i].ident);
	PUT_THREAD_COLUMN(SP_TT_NATIVE_ID, int64_t, t[i].native_id);
	PUT_THREAD_COLUMN(SP_TT_DAEMON, int8_t, 0);
	PUT_THREAD_COLUMN(SP_TT_START_NS, int64_t, t[i].start_ns);
	PUT_THREAD_COLUMN(SP_TT_END_NS, int64_t, t[i].end_ns);
	PUT_THREAD_COLUMN(SP_TT_CPU_NS, int64_t, t[i].cpu_ns);
	char buf[32];
	const char **names = malloc(n * sizeof *names);
	char *store = malloc(n * sizeof buf);
	int ret = names && store ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < n; i++) {
		snprintf(store + i * sizeof buf, sizeof buf, "%s-%" PRId64,
			 t[i].index == 0 ? "main" : "thread", t[i].index);
		names[i] = store + i * sizeof buf;
	}
	if (!ret)
		ret = put(w->g_threads, SP_TT_NAME, first, n, names);
	free(names);
	free(store);
	return ret;
}

int sp_writer_put_metadata(struct sp_writer *w, const struct sp_meta *m)
{
	int ret = 0;
	for (size_t i = 0; !ret && i < m->n; i++) {
		const struct sp_meta_item *it = &m->items[i];
		switch (it->type) {
		case SP_META_INT:
			ret = attr_scalar(w->g_meta, it->key, H5T_STD_I64LE, H5T_NATIVE_INT64, &it->i);
			break;
		case SP_META_DOUBLE:
			ret = attr_scalar(w->g_meta, it->key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &it->d);
			break;
		case SP_META_STR:
			ret = attr_str(w, w->g_meta, it->key, it->s);
			break;
		case SP_META_STRLIST:
			ret = attr_strlist(w, w->g_meta, it->key, it->list, it->nlist);
			break;
		}
	}
	return ret;
}

static void close_handles(struct sp_writer *w)
{
	hid_t *groups[] = { &w->g_meta, &w->g_index, &w->g_events, &w->g_threads };
	for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
		if (*groups[i] >= 0)
			H5Gclose(*groups[i]);
		*groups[i] = H5I_INVALID_HID;
	}
	if (w->str_type > 0)
		H5Tclose(w->str_type);
	if (w->summary_type > 0)
		H5Tclose(w->summary_type);
	w->str_type = w->summary_type = 0;
}

static int fsync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = fsync(fd) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

int sp_writer_commit(struct sp_writer *w)
{
	close_handles(w);
	int ret = H5Fclose(w->file) < 0 ? -EIO : 0;
	w->file = H5I_INVALID_HID;
	if (!ret)
		ret = fsync_path(w->tmp, O_RDONLY);
	if (!ret && rename(w->tmp, w->path) < 0)
		ret = -errno;
	if (!ret) {
		char *dup = strdup(w->path);
		if (dup)
			fsync_path(dirname(dup), O_RDONLY | O_DIRECTORY);
		free(dup);
	}
	sp_writer_destroy(w);
	return ret;
}

void sp_writer_destroy(struct sp_writer *w)
{
	if (!w)
		return;
	close_handles(w);
	if (w->file >= 0) {
		H5Fclose(w->file);
	}
	if (w->tmp)
		unlink(w->tmp); /* after a commit the name is gone: ENOENT */
	free(w->path);
	free(w->tmp);
	free(w);
}
