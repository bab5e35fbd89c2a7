/* SPDX-License-Identifier: MIT */
/*
 * HDF5 writer for schema 2. Datasets are contiguous and sized up front
 * (the layout is known before any data), so every put is one hyperslab
 * write and the file needs no repacking; uncompressed start/end columns
 * can instead be written by the caller at their byte offsets. Publication
 * is atomic: temp file, fsync, rename, fsync of the directory. The index
 * and thread tables are in writer-index.c.
 */
#define _GNU_SOURCE
#include "writer-internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <hdf5.h>
#include "lazy-hdf5.h"
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* The errno of the last HDF5 failure (h5_error()), for callers in
 * writer-index.c that only say -EIO. The writer is used by one thread. */
static int last_err;

struct h5_why {
	int err;
	bool lock;
};

static herr_t find_why(unsigned n, const H5E_error2_t *e, void *data)
{
	(void)n;
	struct h5_why *why = data;
	if (e->min_num == H5E_CANTLOCKFILE)
		why->lock = true;
	/* The sec2 driver's messages carry the system call's errno:
	 * "... errno = 28, error message = 'No space left on device' ..." */
	const char *p = e->desc ? strstr(e->desc, "errno = ") : NULL;
	long v = p ? strtol(p + 8, NULL, 10) : 0;
	if (v > 0 && v < 4096)
		why->err = (int)v; /* walking down: the deepest one wins */
	return 0;
}

/*
 * Why the HDF5 call that just failed failed, as a negative errno: -ENOLCK
 * when HDF5 could not lock the file (file systems without locks:
 * HDF5_USE_FILE_LOCKING=FALSE), else the errno of the failed system call
 * (ENOSPC, ENOENT, EROFS, ENAMETOOLONG, EACCES ...) that HDF5's error stack
 * names, else -EIO.
 */
static int h5_error(void)
{
	struct h5_why why = { 0 };
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_why, &why);
	last_err = why.lock ? ENOLCK : why.err ? why.err : EIO;
	return -last_err;
}

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
	if (H5Tequal(file_type, H5T_IEEE_F64LE) > 0)
		return H5T_NATIVE_DOUBLE;
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
	int ret = d < 0 ? h5_error() : 0;
	if (dcpl != H5P_DEFAULT)
		H5Pclose(dcpl);
	H5Sclose(space);
	if (ret)
		return ret;
	H5Dclose(d);
	return 0;
}

int sp_writer_make_dset(hid_t group, const char *name, hid_t type, uint64_t n)
{
	return make_dset_level(group, name, type, n, 0);
}

int sp_writer_make_col(struct sp_writer *w, hid_t group, const char *name, hid_t type,
		       uint64_t n)
{
	bool raw = w->layout.raw && H5Tequal(type, w->str_type) <= 0;
	return make_dset_level(group, name, type, n, raw ? DSET_RAW : 0);
}

/*
 * A transfer property list whose type-conversion buffers hold n values of
 * the two types and no more (at least 4 KiB, at most HDF5's default of
 * 1 MiB): HDF5 allocates and zeroes the whole default 1 MiB twice for any
 * converted write, 10 MB of memset and page faults in a finalize that
 * writes a few hundred names. H5P_DEFAULT when it cannot be made.
 */
static hid_t small_xfer(hid_t ftype, hid_t mtype, uint64_t n)
{
	size_t a = H5Tget_size(ftype), b = H5Tget_size(mtype), one = a > b ? a : b;
	if (!one)
		return H5P_DEFAULT;
	size_t bytes = n < ((size_t)1 << 20) / one ? (size_t)n * one : (size_t)1 << 20;
	bytes = bytes < 4096 ? 4096 : bytes;
	hid_t x = H5Pcreate(H5P_DATASET_XFER);
	if (x >= 0 && H5Pset_buffer(x, bytes, NULL, NULL) < 0) {
		H5Pclose(x);
		x = H5I_INVALID_HID;
	}
	return x >= 0 ? x : H5P_DEFAULT;
}

/* Read or write n values at [first, first+n) of group/name (native types). */
static int range_io(hid_t group, const char *name, uint64_t first, uint64_t n, void *buf,
		    bool write)
{
	if (n == 0)
		return 0;
	hid_t d = H5Dopen2(group, name, H5P_DEFAULT);
	if (d < 0)
		return h5_error();
	hid_t ftype = H5Dget_type(d);
	hid_t fspace = H5Dget_space(d);
	hsize_t start = first, count = n;
	hid_t mspace = H5Screate_simple(1, &count, NULL);
	herr_t rc = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
	hid_t mtype = mem_type(ftype);
	hid_t xfer = small_xfer(ftype, mtype, n);
	if (rc >= 0)
		rc = write ? H5Dwrite(d, mtype, mspace, fspace, xfer, buf)
			   : H5Dread(d, mtype, mspace, fspace, xfer, buf);
	int ret = rc < 0 ? h5_error() : 0;
	if (xfer != H5P_DEFAULT)
		H5Pclose(xfer);
	H5Sclose(mspace);
	H5Sclose(fspace);
	H5Tclose(ftype);
	H5Dclose(d);
	return ret;
}

int sp_writer_get_range(hid_t group, const char *name, uint64_t first, uint64_t n, void *buf)
{
	return range_io(group, name, first, n, buf, false);
}

int sp_writer_put_range(hid_t group, const char *name, uint64_t first, uint64_t n, const void *buf)
{
	return range_io(group, name, first, n, (void *)buf, true);
}

static int attr_scalar(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
	hid_t space = H5Screate(H5S_SCALAR);
	if (H5Aexists(obj, name) > 0)
		H5Adelete(obj, name);
	hid_t a = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
	herr_t rc = a < 0 ? -1 : H5Awrite(a, mtype, v);
	int ret = rc < 0 ? h5_error() : 0;
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(space);
	return ret;
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
	int ret = rc < 0 ? h5_error() : 0;
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(space);
	return ret;
}

/*
 * The MPI columns in the row layout: nmpi values (the events of the rows
 * with MPI data, mpi_offsets says where each row's are), so the events of
 * function and manual regions cost nothing here; /events names the layout.
 */
static int create_mpi(struct sp_writer *w, hid_t g, uint64_t m, int z)
{
	unsigned c = w->layout.columns;
	static const struct {
		const char *name;
		bool callsite;
	} cols[] = { { SP_EV_MPI_BYTES, false }, { SP_EV_MPI_PEERS, false },
		     { SP_EV_MPI_ROOTS, false }, { SP_EV_MPI_TAGS, false },
		     { SP_EV_MPI_COMMS, false }, { SP_EV_CALLSITE_IDS, true } };
	int ret = 0;
	for (size_t i = 0; !ret && i < sizeof cols / sizeof *cols; i++)
		if (!cols[i].callsite || (c & SP_WCOL_CALLSITE))
			ret = make_dset_level(g, cols[i].name, i ? H5T_STD_I32LE : H5T_STD_I64LE, m,
					      w->layout.raw ? DSET_RAW : z);
	if (!ret)
		ret = attr_str(w, g, SP_EV_ATTR_MPI_LAYOUT, SP_MPI_LAYOUT_ROWS);
	return ret;
}

static int create_events(struct sp_writer *w)
{
	const struct sp_writer_layout *l = &w->layout;
	hid_t g = w->g_events;
	uint64_t n = l->nevents;
	int z = l->compression;
	int ret = make_dset_level(g, SP_EV_START_TIMES, H5T_STD_I64LE, n, z ? z : DSET_RAW);
	if (!ret)
		ret = make_dset_level(g, SP_EV_END_TIMES, H5T_STD_I64LE, n, z ? z : DSET_RAW);
	if (!ret && (l->columns & SP_WCOL_THREAD_IDS))
		ret = make_dset_level(g, SP_EV_THREAD_IDS, H5T_STD_I64LE, n, z ? z : DSET_RAW);
	if (!ret && (l->columns & SP_WCOL_MPI))
		ret = create_mpi(w, g, l->nmpi, z);
	return ret;
}

/*
 * The n names of `names` (kinds: theirs, or NULL) as region_table/names
 * and /kinds, and the `n_uncalled` others as region_table/uncalled_names.
 * Called at the commit (writer-finish.c), when the rows say which are used.
 */
int sp_writer_put_names(struct sp_writer *w, const char *const *names, const uint8_t *kinds,
			uint32_t n, const char *const *uncalled, uint32_t n_uncalled)
{
	hid_t g = H5Gopen2(w->file, SP_GROUP_REGION_TABLE, H5P_DEFAULT);
	if (g < 0)
		return h5_error();
	int ret = sp_writer_make_dset(g, SP_DSET_REGION_NAMES, w->str_type, n);
	if (!ret)
		ret = sp_writer_put_range(g, SP_DSET_REGION_NAMES, 0, n, names);
	if (!ret && kinds)
		ret = sp_writer_make_dset(g, SP_DSET_REGION_KINDS, H5T_STD_U8LE, n);
	if (!ret && kinds)
		ret = sp_writer_put_range(g, SP_DSET_REGION_KINDS, 0, n, kinds);
	if (!ret && n_uncalled)
		ret = sp_writer_make_dset(g, SP_DSET_REGION_UNCALLED, w->str_type, n_uncalled);
	if (!ret && n_uncalled)
		ret = sp_writer_put_range(g, SP_DSET_REGION_UNCALLED, 0, n_uncalled, uncalled);
	H5Gclose(g);
	return ret;
}

/* HDF5 opened the temporary we created (by /proc/self/fd, or by name when
 * /proc is missing: then a file swapped in meanwhile is refused). */
static int check_ours(struct sp_writer *w)
{
	void *handle = NULL;
	if (H5Fget_vfd_handle(w->file, H5P_DEFAULT, &handle) < 0 || !handle)
		return 0; /* not the sec2 driver: nothing to compare */
	return sp_safe_is_ours(&w->out, *(int *)handle) ? 0 : -EEXIST;
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
	if (!ret && (w->g_meta < 0 || rt < 0 || w->g_index < 0 || w->g_events < 0))
		ret = h5_error();
	if (rt >= 0)
		H5Gclose(rt);
	if (!ret && (w->layout.columns & SP_WCOL_THREAD_IDS)) {
		w->g_threads = H5Gcreate2(root, SP_GROUP_THREAD_TABLE, H5P_DEFAULT, H5P_DEFAULT,
					  H5P_DEFAULT);
		ret = w->g_threads < 0 ? h5_error() : sp_writer_create_threads(w);
	}
	return ret;
}

int sp_writer_create(const char *path, const struct sp_writer_layout *layout,
		     struct sp_writer **ret_writer)
{
	int lz = sp_lazy_load(SP_LAZY_HDF5);
	if (lz)
		return lz;
	struct sp_writer *w = calloc(1, sizeof *w);
	if (!w)
		return -ENOMEM;
	w->file = w->g_meta = w->g_index = w->g_events = w->g_threads = H5I_INVALID_HID;
	w->layout = *layout;
	if (((layout->columns & SP_WCOL_CALLSITE) && !(layout->columns & SP_WCOL_MPI)) ||
	    (layout->raw && layout->compression)) {
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
	/* The temporary dir/.NAME.PID.<random>.tmp is created O_EXCL |
	 * O_NOFOLLOW and HDF5 opens it through our descriptor, so nothing
	 * planted at a name in a shared directory is ever written through. */
	w->out.dirfd = w->out.fd = -1;
	w->path = strdup(path);
	char infix[24], fdname[32];
	snprintf(infix, sizeof infix, ".%d.", (int)getpid());
	int err = w->path ? sp_safe_create(&w->out, path, ".", infix, ".tmp") : -ENOMEM;
	if (err) {
		sp_writer_destroy(w);
		return err;
	}
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the library never prints */
	w->str_type = make_str_type();
	w->summary_type = make_summary_type();
	last_err = 0;
	w->file = H5Fcreate(sp_safe_fd_path(&w->out, fdname), H5F_ACC_TRUNC, H5P_DEFAULT,
			    H5P_DEFAULT);
	int ret = w->file < 0 ? h5_error() : check_ours(w);
	if (!ret)
		ret = open_groups(w);
	if (!ret)
		ret = sp_writer_create_index(w);
	if (!ret)
		ret = create_events(w);
	if (!ret && layout->raw)
		ret = sp_writer_put_names(w, layout->names, layout->kinds, layout->nnames,
					  layout->uncalled, layout->nuncalled);
	if (ret == -EIO && last_err) /* writer-index.c says only -EIO */
		ret = -last_err;
	if (ret) {
		sp_writer_destroy(w);
		return ret;
	}
	*ret_writer = w;
	return 0;
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

int sp_writer_times_raw(struct sp_writer *w, struct sp_writer_times *t)
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
	haddr_t th = (w->layout.columns & SP_WCOL_THREAD_IDS)
			     ? dset_offset(w->g_events, SP_EV_THREAD_IDS) : 0;
	if (s == HADDR_UNDEF || e == HADDR_UNDEF || th == HADDR_UNDEF)
		return -ENOTSUP;
	*t = (struct sp_writer_times){
		.fd = *(int *)handle, .dirfd = w->out.dirfd, .start = s, .end = e,
		.thread = (w->layout.columns & SP_WCOL_THREAD_IDS) ? th : SP_RAW_ABSENT,
	};
	w->times_raw = true;
	return 0;
}

void sp_writer_exclusive_given(struct sp_writer *w)
{
	w->excl_given = true;
}

int sp_writer_raw_offsets(struct sp_writer *w, uint64_t off[SP_RAW_NCOLS])
{
	static const char *const ev_names[] = {
		[SP_RAW_EV_START] = SP_EV_START_TIMES, [SP_RAW_EV_END] = SP_EV_END_TIMES,
		[SP_RAW_EV_THREAD] = SP_EV_THREAD_IDS, [SP_RAW_MPI_BYTES] = SP_EV_MPI_BYTES,
		[SP_RAW_MPI_PEERS] = SP_EV_MPI_PEERS, [SP_RAW_MPI_ROOTS] = SP_EV_MPI_ROOTS,
		[SP_RAW_MPI_TAGS] = SP_EV_MPI_TAGS, [SP_RAW_MPI_COMMS] = SP_EV_MPI_COMMS,
		[SP_RAW_MPI_SITES] = SP_EV_CALLSITE_IDS,
	};
	const struct sp_writer_layout *l = &w->layout;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return -ENOTSUP; /* the columns are little-endian */
#endif
	if (!l->raw)
		return -ENOTSUP;
	for (int c = 0; c < SP_RAW_NCOLS; c++) {
		hid_t g = w->g_events;
		const char *name = NULL;
		uint64_t n = c >= SP_RAW_ROW0 ? l->nrows : c >= SP_RAW_TT_RANKS ? l->nthreads
			   : c >= SP_RAW_MPI_BYTES ? l->nmpi : l->nevents;
		if (c < SP_RAW_TT_RANKS)
			name = ev_names[c];
		else
			name = sp_writer_raw_name(w, (enum sp_raw_col)c, &g);
		if ((c == SP_RAW_EV_THREAD && !(l->columns & SP_WCOL_THREAD_IDS)) ||
		    (c >= SP_RAW_MPI_BYTES && c <= SP_RAW_MPI_SITES && !(l->columns & SP_WCOL_MPI)) ||
		    (c == SP_RAW_MPI_SITES && !(l->columns & SP_WCOL_CALLSITE)))
			name = NULL;
		off[c] = SP_RAW_ABSENT;
		if (!name || n == 0)
			continue;
		haddr_t a = dset_offset(g, name);
		if (a == HADDR_UNDEF)
			return -EIO;
		off[c] = a;
	}
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
		ret = sp_writer_put_range(g, SP_EV_START_TIMES, first, n, ev->start);
		if (!ret)
			ret = sp_writer_put_range(g, SP_EV_END_TIMES, first, n, ev->end);
	}
	/* No thread ids with raw times: the caller wrote that column too. */
	if (!ret && (c & SP_WCOL_THREAD_IDS) && (ev->thread_ids || !raw))
		ret = sp_writer_put_range(g, SP_EV_THREAD_IDS, first, n, ev->thread_ids);
	return ret;
}

int sp_writer_put_mpi(struct sp_writer *w, uint64_t first, uint64_t n,
		      const struct sp_writer_mpi *m)
{
	unsigned c = w->layout.columns;
	hid_t g = w->g_events;
	if (!(c & SP_WCOL_MPI) || first > w->layout.nmpi || n > w->layout.nmpi - first)
		return -EINVAL;
	int ret = sp_writer_put_range(g, SP_EV_MPI_BYTES, first, n, m->bytes);
	ret = ret ? ret : sp_writer_put_range(g, SP_EV_MPI_PEERS, first, n, m->peers);
	ret = ret ? ret : sp_writer_put_range(g, SP_EV_MPI_ROOTS, first, n, m->roots);
	ret = ret ? ret : sp_writer_put_range(g, SP_EV_MPI_TAGS, first, n, m->tags);
	ret = ret ? ret : sp_writer_put_range(g, SP_EV_MPI_COMMS, first, n, m->comms);
	if (!ret && (c & SP_WCOL_CALLSITE))
		ret = sp_writer_put_range(g, SP_EV_CALLSITE_IDS, first, n, m->callsite_ids);
	return ret;
}

int sp_writer_put_metadata(struct sp_writer *w, const struct sp_run_meta *m)
{
	int ret = 0;
	for (size_t i = 0; !ret && i < m->n; i++) {
		const struct sp_run_meta_item *it = &m->items[i];
		switch (it->type) {
		case SP_RUN_META_INT:
			ret = attr_scalar(w->g_meta, it->key, H5T_STD_I64LE, H5T_NATIVE_INT64, &it->i);
			break;
		case SP_RUN_META_DOUBLE:
			ret = attr_scalar(w->g_meta, it->key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &it->d);
			break;
		case SP_RUN_META_STR:
			ret = attr_str(w, w->g_meta, it->key, it->s);
			break;
		case SP_RUN_META_STRLIST:
			ret = attr_strlist(w, w->g_meta, it->key, it->list, it->nlist);
			break;
		}
	}
	return ret;
}

static hid_t group_type(const struct sp_writer *w, enum sp_writer_type t)
{
	switch (t) {
	case SP_WTYPE_U32:
		return H5T_STD_U32LE;
	case SP_WTYPE_I32:
		return H5T_STD_I32LE;
	case SP_WTYPE_U64:
		return H5T_STD_U64LE;
	case SP_WTYPE_I64:
		return H5T_STD_I64LE;
	case SP_WTYPE_STR:
		return w->str_type;
	case SP_WTYPE_F64:
		return H5T_IEEE_F64LE;
	}
	return H5I_INVALID_HID;
}

int sp_writer_put_group(struct sp_writer *w, const struct sp_writer_group *grp)
{
	hid_t g = H5Gcreate2(w->file, grp->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		return h5_error();
	int ret = 0;
	for (size_t i = 0; !ret && i < grp->nattrs; i++)
		ret = attr_scalar(g, grp->attrs[i].name, H5T_STD_I64LE, H5T_NATIVE_INT64,
				  &grp->attrs[i].value);
	for (size_t i = 0; !ret && i < grp->ncolumns; i++) {
		const struct sp_writer_column *c = &grp->columns[i];
		ret = sp_writer_make_dset(g, c->name, group_type(w, c->type), c->n);
		if (!ret)
			ret = sp_writer_put_range(g, c->name, 0, c->n, c->data);
	}
	H5Gclose(g);
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

/*
 * HDF5 1.10 (Debian 12 ships 1.10.8): an H5Fclose whose flush fails (a full
 * disk, RLIMIT_FSIZE) frees the file but leaves its ID registered, and the
 * library's teardown at exit closes it again: SIGSEGV in H5F__close_cb,
 * inside the application's exit(), its exit status lost (fixed in HDF5
 * 1.14.1, HDFGroup/hdf5 pull request 2496). So no file is closed with a
 * flush that can fail: a file given up (an error before the commit) or
 * whose flush before the close failed has HDF5's descriptor pointed at an
 * empty anonymous file (memfd), where the close's last writes succeed
 * (metadata only; the size is set sparsely), and the soft RLIMIT_FSIZE is
 * raised to the hard one for the close alone (the close writes past it;
 * restored by restore_fsize()). The temp file is removed by name.
 */
static bool discard(struct sp_writer *w, struct rlimit *ret_saved)
{
	hid_t fapl = H5Fget_access_plist(w->file);
	bool sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2;
	if (fapl >= 0)
		H5Pclose(fapl);
	void *handle = NULL;
	if (!sec2 || H5Fget_vfd_handle(w->file, H5P_DEFAULT, &handle) < 0 || !handle)
		return false;
	int fd = *(int *)handle;
	int m = memfd_create("scope-profiler-discarded", MFD_CLOEXEC);
	if (m < 0)
		return false;
	if (m != fd)
		dup3(m, fd, O_CLOEXEC);
	close(m);
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == rl.rlim_max)
		return false;
	*ret_saved = rl;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_FSIZE, &rl) == 0;
}

static void close_discarded(struct sp_writer *w)
{
	struct rlimit saved;
	bool raised = discard(w, &saved);
	H5Fclose(w->file);
	if (raised)
		setrlimit(RLIMIT_FSIZE, &saved);
}

/* Everything HDF5 holds to the file, then the file closed; 0 or -errno. */
static int close_file(struct sp_writer *w, int ret)
{
	close_handles(w);
	if (!ret)
		ret = H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0 ? h5_error() : 0;
	if (ret)
		close_discarded(w);
	else if (H5Fclose(w->file) < 0)
		ret = h5_error();
	w->file = H5I_INVALID_HID;
	return ret;
}

int sp_writer_seal(struct sp_writer *w)
{
	if (!w->layout.raw || w->file < 0)
		return -EINVAL;
	return close_file(w, 0);
}

const char *sp_writer_temp_path(const struct sp_writer *w)
{
	return w->out.tmp_path;
}

int sp_writer_temp_id(const struct sp_writer *w, uint64_t *dev, uint64_t *ino, uint64_t *size)
{
	struct stat st;
	if (fstat(w->out.fd, &st) != 0)
		return -errno;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	*size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

int sp_writer_temp_fd(const struct sp_writer *w)
{
	return w->layout.raw && w->file < 0 ? w->out.fd : -1;
}

int sp_writer_update_ints(struct sp_writer *w, const char *const *keys, const int64_t *values,
			  int n)
{
	if (!w->layout.raw || w->file >= 0)
		return -EINVAL;
	char fdname[32];
	last_err = 0;
	/* Through our descriptor, as at the creation (nothing at a name). */
	hid_t f = H5Fopen(sp_safe_fd_path(&w->out, fdname), H5F_ACC_RDWR, H5P_DEFAULT);
	if (f < 0)
		return h5_error();
	hid_t g = H5Gopen2(f, SP_GROUP_METADATA, H5P_DEFAULT);
	int ret = g < 0 ? h5_error() : 0;
	for (int i = 0; !ret && i < n; i++) {
		hid_t a = H5Aopen(g, keys[i], H5P_DEFAULT);
		if (a < 0 || H5Awrite(a, H5T_NATIVE_INT64, &values[i]) < 0)
			ret = h5_error();
		if (a >= 0)
			H5Aclose(a);
	}
	if (g >= 0)
		H5Gclose(g);
	if (H5Fclose(f) < 0 && !ret)
		ret = h5_error();
	return ret;
}

bool sp_writer_meta_str_equals(int fd, const char *key, const char *value)
{
	if (sp_lazy_load(SP_LAZY_HDF5))
		return false;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	char fdname[32];
	snprintf(fdname, sizeof fdname, "/proc/self/fd/%d", fd);
	bool equal = false;
	hid_t f = H5Fopen(fdname, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t g = f < 0 ? H5I_INVALID_HID : H5Gopen2(f, SP_GROUP_METADATA, H5P_DEFAULT);
	hid_t a = g < 0 || H5Aexists(g, key) <= 0 ? H5I_INVALID_HID : H5Aopen(g, key, H5P_DEFAULT);
	hid_t t = a < 0 ? H5I_INVALID_HID : H5Aget_type(a);
	hid_t sp = a < 0 ? H5I_INVALID_HID : H5Aget_space(a);
	/* A scalar variable-length string, as the writer makes them. */
	if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0 &&
	    H5Sget_simple_extent_npoints(sp) == 1) {
		hid_t mem = make_str_type();
		char *v = NULL;
		if (H5Aread(a, mem, &v) >= 0 && v)
			equal = strcmp(v, value) == 0;
		if (v)
			H5free_memory(v);
		H5Tclose(mem);
	}
	if (sp >= 0)
		H5Sclose(sp);
	if (t >= 0)
		H5Tclose(t);
	if (a >= 0)
		H5Aclose(a);
	if (g >= 0)
		H5Gclose(g);
	if (f >= 0)
		H5Fclose(f);
	return equal;
}

bool sp_writer_of_tree(int fd, void *tree)
{
	return sp_writer_meta_str_equals(fd, SP_META_PROCESS_TREE, tree);
}

int sp_writer_publish(struct sp_writer *w)
{
	int ret = w->file >= 0 ? -EINVAL : 0;
	if (!ret && fsync(w->out.fd) < 0)
		ret = -errno;
	if (!ret)
		ret = sp_safe_commit(&w->out, true);
	sp_writer_destroy(w);
	return ret;
}

int sp_writer_commit(struct sp_writer *w)
{
	int ret = close_file(w, w->layout.raw ? 0 : sp_writer_finish_index(w));
	if (ret) {
		sp_writer_destroy(w);
		return ret;
	}
	return sp_writer_publish(w);
}

void sp_writer_destroy(struct sp_writer *w)
{
	if (!w)
		return;
	close_handles(w);
	if (w->file >= 0) /* given up: nothing of it is kept */
		close_discarded(w);
	sp_safe_close(&w->out); /* removes the temporary unless committed */
	free(w->path);
	free(w);
}
