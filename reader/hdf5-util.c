/* SPDX-License-Identifier: MIT */
/*
 * HDF5 helpers: attribute values (int64 / float64 / vlen or fixed strings /
 * 1-D string arrays) and whole-column reads (one H5Dread per column, HDF5
 * doing the type conversion to int64), plus the top-level HDF5 loader that
 * checks the schema version and dispatches to schema 1 or columnar.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hdf5-util.h"
#include "sp-format.h"

bool h5_exists(hid_t loc, const char *name)
{
	return H5Lexists(loc, name, H5P_DEFAULT) > 0;
}

hssize_t h5_dset_len(hid_t dset)
{
	hid_t space = H5Dget_space(dset);
	hsize_t dims[1];
	int nd;

	if (space < 0)
		return -1;
	nd = H5Sget_simple_extent_ndims(space);
	if (nd == 0) {
		H5Sclose(space);
		return -2; /* scalar */
	}
	if (nd != 1) {
		H5Sclose(space);
		return -1;
	}
	H5Sget_simple_extent_dims(space, dims, NULL);
	H5Sclose(space);
	return (hssize_t)dims[0];
}

/*
 * A column must not claim more values than its storage can hold: a small
 * hostile file could otherwise make us allocate (and HDF5 fill) gigabytes.
 * Unfiltered data is stored at full size; filtered (compressed) chunks are
 * allowed a generous ratio. Unallocated storage (fill values) is refused.
 */
static bool storage_plausible(hid_t dset, hsize_t n, size_t tsize)
{
	hsize_t stored = H5Dget_storage_size(dset);
	hid_t dcpl = H5Dget_create_plist(dset);
	int nfilters = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0;

	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (tsize == 0 || n > (hsize_t)1 << 40)
		return false;
	if (nfilters > 0)
		return n * tsize / 2048 <= stored + 1;
	return stored >= n * tsize;
}

/*
 * Big columns go into transparent huge pages when the kernel offers them:
 * 2 MB pages cut the page faults of reading 100s of MB about 500-fold.
 * Freed with free().
 */
static int64_t *column_alloc(size_t n)
{
	const size_t huge = (size_t)2 << 20;
	size_t bytes = n * sizeof(int64_t);
	void *p;

	if (bytes < 4 * huge)
		return malloc(bytes);
	bytes = (bytes + huge - 1) / huge * huge;
	p = aligned_alloc(huge, bytes);
	if (p)
		madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

long h5_read_i64(struct sp_reader *r, hid_t loc, const char *name,
		 int64_t **ret)
{
	return h5_read_i64_max(r, loc, name, UINT64_MAX, ret);
}

/* Read values [0, sel) of a 1-D dataset into buf: the whole dataset, or
 * its first sel values (a hyperslab: HDF5 reads only the chunks holding
 * them). */
static herr_t read_prefix(hid_t dset, hssize_t n, hsize_t sel, int64_t *buf)
{
	if ((hsize_t)n == sel)
		return H5Dread(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	hid_t fs = H5Dget_space(dset), ms = H5Screate_simple(1, &sel, NULL);
	hsize_t start = 0;
	herr_t st = -1;

	if (fs >= 0 && ms >= 0 &&
	    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &sel, NULL) >= 0)
		st = H5Dread(dset, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, buf);
	if (ms >= 0)
		H5Sclose(ms);
	if (fs >= 0)
		H5Sclose(fs);
	return st;
}

long h5_read_i64_max(struct sp_reader *r, hid_t loc, const char *name, uint64_t limit,
		     int64_t **ret)
{
	hid_t dset, type;
	hssize_t n;
	H5T_class_t cls;
	size_t tsize;
	int64_t *buf;

	if (!h5_exists(loc, name))
		return -ENOENT;
	dset = H5Dopen2(loc, name, H5P_DEFAULT);
	if (dset < 0)
		return sp_error(SP_E_CORRUPT, "%s: cannot open dataset '%s'",
				r->path, name);
	type = H5Dget_type(dset);
	cls = H5Tget_class(type);
	tsize = type >= 0 ? H5Tget_size(type) : 0;
	H5Tclose(type);
	n = h5_dset_len(dset);
	if (n < 0 || cls != H5T_INTEGER) {
		H5Dclose(dset);
		return sp_error(SP_E_CORRUPT,
				"%s: dataset '%s' is not a 1-D integer column",
				r->path, name);
	}
	if (n > 0 && !storage_plausible(dset, (hsize_t)n, tsize)) {
		H5Dclose(dset);
		return sp_error(SP_E_CORRUPT,
				"%s: dataset '%s' claims %lld values but stores far fewer bytes",
				r->path, name, (long long)n);
	}
	/* Values past what the index refers to are never read. */
	hsize_t sel = (uint64_t)n < limit ? (hsize_t)n : (hsize_t)limit;
	buf = column_alloc((size_t)sel + 1);
	if (!buf) {
		H5Dclose(dset);
		return -ENOMEM;
	}
	if (sel > 0 && read_prefix(dset, n, sel, buf) < 0) {
		free(buf);
		H5Dclose(dset);
		return sp_error(EIO, "%s: cannot read dataset '%s'", r->path,
				name);
	}
	H5Dclose(dset);
	*ret = buf;
	return (long)sel;
}

/* A string of the file kept whole up to SP_STRING_MAX bytes, else cut at
 * a UTF-8 boundary with a marker ("...[+N bytes]"). */
static char *pool_string(struct sp_reader *r, const char *s, size_t n)
{
	char *copy;
	size_t keep = SP_STRING_MAX;

	if (n <= SP_STRING_MAX)
		return pool_add(r, strndup(s, n));
	while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
		keep--;
	if (asprintf(&copy, "%.*s...[+%zu bytes]", (int)keep, s, n - keep) < 0)
		copy = NULL;
	return pool_add(r, copy);
}

/* Read n strings of type ftype from obj (dataset or attribute). */
static int read_strings_raw(struct sp_reader *r, hid_t obj, bool is_attr,
			    hid_t ftype, hid_t space, size_t n, char **out)
{
	htri_t vlen = H5Tis_variable_str(ftype);
	hid_t mtype = H5Tcopy(H5T_C_S1);
	int rc = 0;
	herr_t st;

	H5Tset_cset(mtype, H5Tget_cset(ftype));
	if (vlen > 0) {
		char **tmp = calloc(n + 1, sizeof(*tmp));

		if (!tmp) {
			H5Tclose(mtype);
			return -ENOMEM;
		}
		H5Tset_size(mtype, H5T_VARIABLE);
		st = is_attr ? H5Aread(obj, mtype, tmp)
			     : H5Dread(obj, mtype, H5S_ALL, H5S_ALL,
				       H5P_DEFAULT, tmp);
		for (size_t i = 0; st >= 0 && i < n; i++) {
			out[i] = pool_string(r, tmp[i] ? tmp[i] : "",
					     tmp[i] ? strlen(tmp[i]) : 0);
			if (!out[i])
				rc = -ENOMEM;
		}
		if (st >= 0)
			H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, tmp);
		free(tmp);
	} else {
		size_t size = H5Tget_size(ftype);
		char *tmp = calloc(n * size + 1, 1);

		if (!tmp) {
			H5Tclose(mtype);
			return -ENOMEM;
		}
		H5Tset_size(mtype, size);
		st = is_attr ? H5Aread(obj, mtype, tmp)
			     : H5Dread(obj, mtype, H5S_ALL, H5S_ALL,
				       H5P_DEFAULT, tmp);
		for (size_t i = 0; st >= 0 && i < n; i++) {
			char *s = pool_string(r, tmp + i * size, strnlen(tmp + i * size, size));

			if (!s) {
				rc = -ENOMEM;
				break;
			}
			out[i] = s;
		}
		free(tmp);
	}
	H5Tclose(mtype);
	if (st < 0)
		return sp_error(EIO, "%s: cannot read strings", r->path);
	return rc;
}

long h5_read_strings(struct sp_reader *r, hid_t loc, const char *name,
		     char ***ret)
{
	hid_t dset, type, space;
	hssize_t n;
	char **out;
	int rc;

	if (!h5_exists(loc, name))
		return -ENOENT;
	dset = H5Dopen2(loc, name, H5P_DEFAULT);
	if (dset < 0)
		return sp_error(SP_E_CORRUPT, "%s: cannot open dataset '%s'",
				r->path, name);
	type = H5Dget_type(dset);
	n = h5_dset_len(dset);
	if (n < 0 || H5Tget_class(type) != H5T_STRING) {
		H5Tclose(type);
		H5Dclose(dset);
		return sp_error(SP_E_CORRUPT,
				"%s: dataset '%s' is not a 1-D string column",
				r->path, name);
	}
	if (n > 0 && !storage_plausible(dset, (hsize_t)n,
					H5Tis_variable_str(type) > 0 ? 8
						: H5Tget_size(type))) {
		H5Tclose(type);
		H5Dclose(dset);
		return sp_error(SP_E_CORRUPT,
				"%s: dataset '%s' claims %lld strings but stores far fewer bytes",
				r->path, name, (long long)n);
	}
	out = pool_add(r, calloc((size_t)n + 1, sizeof(*out)));
	space = H5Dget_space(dset);
	rc = out ? read_strings_raw(r, dset, false, type, space, (size_t)n, out)
		 : -ENOMEM;
	H5Sclose(space);
	H5Tclose(type);
	H5Dclose(dset);
	if (rc < 0)
		return rc;
	*ret = out;
	return (long)n;
}

/* Numeric attribute arrays become lists of formatted strings. */
static int numeric_array_to_meta(struct sp_reader *r, hid_t attr, bool is_int,
				 size_t n, struct sp_meta *m)
{
	char **strv = pool_add(r, calloc(n + 1, sizeof(char *)));
	void *buf = malloc((n + 1) * 8);
	char tmp[64];

	if (!strv || !buf) {
		free(buf);
		return -ENOMEM;
	}
	H5Aread(attr, is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, buf);
	for (size_t i = 0; i < n; i++) {
		if (is_int)
			snprintf(tmp, sizeof(tmp), "%" PRId64, ((int64_t *)buf)[i]);
		else
			snprintf(tmp, sizeof(tmp), "%.17g", ((double *)buf)[i]);
		strv[i] = pool_strdup(r, tmp);
	}
	free(buf);
	m->type = SP_META_STRINGS;
	m->strv = (const char *const *)strv;
	m->n = n;
	return 0;
}

int h5_attr_to_meta(struct sp_reader *r, hid_t obj, const char *name,
		    struct sp_meta *m)
{
	hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
	hid_t type, space;
	H5T_class_t cls;
	hssize_t npoints;
	int nd, rc = 0;

	if (attr < 0)
		return -ENOENT;
	type = H5Aget_type(attr);
	space = H5Aget_space(attr);
	cls = H5Tget_class(type);
	nd = H5Sget_simple_extent_ndims(space);
	npoints = H5Sget_simple_extent_npoints(space);
	if (cls == H5T_STRING) {
		char **strv = pool_add(r, calloc((size_t)npoints + 1,
						 sizeof(char *)));

		rc = strv ? read_strings_raw(r, attr, true, type, space,
					     (size_t)npoints, strv)
			  : -ENOMEM;
		if (rc == 0 && nd == 0) {
			m->type = SP_META_STRING;
			m->s = strv[0];
		} else if (rc == 0) {
			m->type = SP_META_STRINGS;
			m->strv = (const char *const *)strv;
			m->n = (size_t)npoints;
		}
	} else if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && nd == 0) {
		if (cls == H5T_INTEGER) {
			m->type = SP_META_INT;
			H5Aread(attr, H5T_NATIVE_INT64, &m->i);
			m->f = (double)m->i;
		} else {
			m->type = SP_META_FLOAT;
			H5Aread(attr, H5T_NATIVE_DOUBLE, &m->f);
		}
	} else if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
		rc = numeric_array_to_meta(r, attr, cls == H5T_INTEGER,
					   (size_t)npoints, m);
	} else if (cls == H5T_ENUM && nd == 0) { /* h5py bool */
		int8_t v = 0;

		H5Aread(attr, H5T_NATIVE_INT8, &v);
		m->type = SP_META_INT;
		m->i = v;
		m->f = v;
	} else {
		m->type = SP_META_STRING;
		m->s = "<unsupported attribute type>";
	}
	H5Sclose(space);
	H5Tclose(type);
	H5Aclose(attr);
	return rc;
}

struct meta_ctx {
	struct sp_reader *r;
	int rc;
};

static herr_t meta_cb(hid_t obj, const char *name, const H5A_info_t *info,
		      void *data)
{
	struct meta_ctx *ctx = data;
	struct sp_meta *m = reader_add_meta(ctx->r, name);

	if (!m) {
		ctx->rc = -ENOMEM;
		return 1;
	}
	ctx->rc = h5_attr_to_meta(ctx->r, obj, name, m);
	return ctx->rc < 0 ? 1 : 0;
}

int h5_read_metadata(struct sp_reader *r, hid_t obj)
{
	struct meta_ctx ctx = { r, 0 };
	hsize_t idx = 0;

	H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, meta_cb, &ctx);
	return ctx.rc;
}

int h5_attr_string(struct sp_reader *r, hid_t obj, const char *name,
		   char **ret)
{
	struct sp_meta m = { 0 };
	int rc;

	if (H5Aexists(obj, name) <= 0)
		return -ENOENT;
	rc = h5_attr_to_meta(r, obj, name, &m);
	if (rc < 0)
		return rc;
	if (m.type == SP_META_STRING)
		*ret = (char *)m.s;
	else if (m.type == SP_META_STRINGS && m.n > 0)
		*ret = (char *)m.strv[0];
	else
		return -EINVAL;
	return 0;
}

int h5_attr_int(hid_t obj, const char *name, int64_t *ret)
{
	hid_t attr, type;
	H5T_class_t cls;
	herr_t st;

	if (H5Aexists(obj, name) <= 0)
		return -ENOENT;
	attr = H5Aopen(obj, name, H5P_DEFAULT);
	type = H5Aget_type(attr);
	cls = H5Tget_class(type);
	H5Tclose(type);
	if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
		H5Aclose(attr);
		return -EINVAL;
	}
	st = H5Aread(attr, H5T_NATIVE_INT64, ret);
	H5Aclose(attr);
	return st < 0 ? -EINVAL : 0;
}

/* Schema attribute: absent => 1; must be an integer (not bool, not string). */
static int read_schema(struct sp_reader *r, hid_t file, int *ret)
{
	hid_t attr, type, space;
	H5T_class_t cls;
	int64_t v = 0;
	int nd;

	if (H5Aexists(file, SP_ATTR_SCHEMA) <= 0) {
		*ret = 1;
		return 0;
	}
	attr = H5Aopen(file, SP_ATTR_SCHEMA, H5P_DEFAULT);
	type = H5Aget_type(attr);
	space = H5Aget_space(attr);
	cls = H5Tget_class(type);
	nd = H5Sget_simple_extent_ndims(space);
	if (cls == H5T_INTEGER && nd == 0)
		H5Aread(attr, H5T_NATIVE_INT64, &v);
	H5Sclose(space);
	H5Tclose(type);
	H5Aclose(attr);
	if (cls != H5T_INTEGER || nd != 0)
		return sp_error(SP_E_SCHEMA,
				"%s: unsupported schema version: attribute '%s' must be an integer",
				r->path, SP_ATTR_SCHEMA);
	if (v < 1)
		return sp_error(SP_E_SCHEMA,
				"%s: unsupported schema version %" PRId64 " (must be >= 1)",
				r->path, v);
	if (v > SP_SCHEMA_MAX_READ)
		return sp_error(SP_E_SCHEMA,
				"%s: unsupported schema version %" PRId64 " (this reader understands 1 to %d); upgrade scope-profiler to read this file",
				r->path, v, SP_SCHEMA_MAX_READ);
	*ret = (int)v;
	return 0;
}

static int load_open_file(struct sp_reader *r, hid_t file)
{
	int schema = 0, rc;
	char *layout;

	rc = read_schema(r, file, &schema);
	if (rc < 0)
		return rc;
	r->schema = schema;
	if (h5_exists(file, SP_GROUP_METADATA)) {
		hid_t g = H5Gopen2(file, SP_GROUP_METADATA, H5P_DEFAULT);

		rc = g < 0 ? -EIO : h5_read_metadata(r, g);
		if (g >= 0)
			H5Gclose(g);
		if (rc < 0)
			return rc;
	}
	if (schema == 1)
		return sp_load_schema1(r, file);
	if (h5_attr_string(r, file, SP_ATTR_STORAGE_LAYOUT, &layout) == 0 &&
	    strcmp(layout, SP_STORAGE_AGGREGATE) == 0)
		r->layout = SP_LAYOUT_AGGREGATE;
	return sp_load_columnar(r, file);
}

/*
 * The reader opens only what the file holds: an external link (to another
 * file, a FIFO, a device), a user-defined link, a dataset stored in
 * external raw files or a virtual dataset is refused before any read. The
 * file access list also denies every external-link traversal, should one
 * be met some other way.
 */
static herr_t deny_elink(const char *parent, const char *parent_obj, const char *target,
			 const char *target_obj, unsigned *flags, hid_t fapl, void *data)
{
	(void)parent, (void)parent_obj, (void)target, (void)target_obj, (void)flags;
	(void)fapl, (void)data;
	return -1;
}

hid_t sp_h5_fapl(void)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0)
		return H5P_DEFAULT;
	/* Closing the file closes whatever a failed read left open, so no
	 * object outlives it (HDF5 complains at exit otherwise). */
	H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
	H5Pset_elink_cb(fapl, deny_elink, NULL);
	return fapl;
}

struct foreign {
	struct sp_reader *r;
	int rc;
	size_t links;
};

#define MAX_LINKS 1000000 /* objects visited at open; a profile has dozens */

static herr_t check_link(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
	struct foreign *f = data;
	if (++f->links > MAX_LINKS) {
		f->rc = sp_error(SP_E_NOT_PROFILE, "%s: more than %d HDF5 objects: not a profile",
				 f->r->path, MAX_LINKS);
		return 1;
	}
	if (info->type == H5L_TYPE_EXTERNAL || info->type >= H5L_TYPE_UD_MIN) {
		f->rc = sp_error(SP_E_NOT_PROFILE, "%s: /%s is %s link: refused (a profile holds "
				 "its own data)", f->r->path, name,
				 info->type == H5L_TYPE_EXTERNAL ? "an external" : "a user-defined");
		return 1;
	}
	if (info->type != H5L_TYPE_HARD)
		return 0; /* a soft link resolves inside the file */
	H5O_info_t oi;
	if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET)
		return 0;
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
	hid_t dcpl = d >= 0 ? H5Dget_create_plist(d) : -1;
	if (dcpl >= 0) {
		if (H5Pget_layout(dcpl) == H5D_VIRTUAL)
			f->rc = sp_error(SP_E_NOT_PROFILE, "%s: /%s is a virtual dataset: refused "
					 "(a profile holds its own data)", f->r->path, name);
		else if (H5Pget_external_count(dcpl) > 0)
			f->rc = sp_error(SP_E_NOT_PROFILE, "%s: /%s is stored in external files: "
					 "refused (a profile holds its own data)", f->r->path, name);
		H5Pclose(dcpl);
	}
	if (d >= 0)
		H5Dclose(d);
	return f->rc ? 1 : 0;
}

static int refuse_foreign(struct sp_reader *r, hid_t file)
{
	struct foreign f = { r, 0, 0 };
	if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, check_link, &f) < 0 && !f.rc)
		f.rc = sp_error(SP_E_NOT_PROFILE, "%s: cannot list the HDF5 objects (corrupt)",
				r->path);
	return f.rc;
}

int sp_load_hdf5(struct sp_reader *r)
{
	H5E_auto2_t old_func;
	void *old_data;
	hid_t file, fapl;
	htri_t is;
	int rc;

	/* HDF5 is loaded here, on the first file (lazy.h): without it, no HDF5
	 * file can be read, and the message says which library is missing. */
	if (sp_lazy_try(SP_LAZY_HDF5) != 0)
		return sp_error(SP_E_NOT_PROFILE, "%s: cannot read HDF5 files: %s could not be loaded "
				"(%s)", r->path, sp_lazy_soname(SP_LAZY_HDF5), sp_lazy_error(SP_LAZY_HDF5));
	/* The library never prints: silence HDF5's error stack while we work. */
	H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	r->input_format = SP_INPUT_HDF5;
	is = H5Fis_hdf5(r->path);
	if (is <= 0) {
		rc = sp_error(SP_E_NOT_PROFILE,
			      "%s: not a scope-profiler file (not an HDF5 file, or truncated)",
			      r->path);
		goto out;
	}
	fapl = sp_h5_fapl();
	file = H5Fopen(r->path, H5F_ACC_RDONLY, fapl);
	if (fapl != H5P_DEFAULT)
		H5Pclose(fapl);
	if (file < 0) {
		rc = sp_error(SP_E_NOT_PROFILE,
			      "%s: cannot open HDF5 file (corrupt or truncated)",
			      r->path);
		goto out;
	}
	/* The descriptor lets load_events map columns (same file, no race
	 * with a renamed path); only the default sec2 driver has one. */
	if (r->open_flags & SP_OPEN_MAP_COLUMNS) {
		void *handle = NULL;

		if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle) {
			r->h5_fd = *(int *)handle;
			r->h5_fd_ok = true;
		}
	}
	rc = refuse_foreign(r, file);
	if (rc == 0)
		rc = load_open_file(r, file);
	r->h5_fd_ok = false;
	H5Fclose(file);
out:
	H5Eclear2(H5E_DEFAULT);
	H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
	return rc;
}
