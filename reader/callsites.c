/* SPDX-License-Identifier: MIT */
/*
 * The MPI call-site table /callsites (docs/CALLSITES.md): one row per
 * unified call site with its frames (function, file, line), innermost
 * first. Read on demand from the profile's file; the loaded reader is not
 * touched.
 */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5-util.h"
#include "reader-internal.h"
#include "sp-format.h"

struct sp_callsites {
	size_t n, nframes;
	int depth;
	struct sp_callsite *sites;
	struct sp_callsite_frame *frames;
	char **strings;       /* owned copies, 2 per frame */
	size_t nstrings;
};

void sp_callsites_destroy(struct sp_callsites *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstrings; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->sites);
	free(t->frames);
	free(t);
}

size_t sp_callsites_count(const struct sp_callsites *t)
{
	return t ? t->n : 0;
}

int sp_callsites_depth(const struct sp_callsites *t)
{
	return t ? t->depth : 0;
}

const struct sp_callsite *sp_callsites_get(const struct sp_callsites *t, int64_t id)
{
	return t && id >= 0 && (uint64_t)id < t->n ? &t->sites[id] : NULL;
}

/* Length of a 1-D dataset, -1 if it is not one. */
static long dset_len(hid_t d)
{
	hid_t sp = H5Dget_space(d);
	hsize_t dims[2];
	int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
	if (nd == 1)
		H5Sget_simple_extent_dims(sp, dims, NULL);
	if (sp >= 0)
		H5Sclose(sp);
	return nd == 1 ? (long)dims[0] : -1;
}

/* A whole integer column as int64; *ret has want elements. */
static int read_ints(const char *path, hid_t g, const char *name, size_t want, int64_t **ret)
{
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
	long n = d < 0 ? -1 : dset_len(d);
	int64_t *v = malloc((want + 1) * sizeof *v);
	int rc = 0;
	if (n < 0 || (size_t)n != want)
		rc = sp_error(SP_E_CORRUPT, "%s: /%s/%s is missing or has the wrong length", path,
			      SP_GROUP_CALLSITES, name);
	else if (!v)
		rc = -ENOMEM;
	else if (want && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
		rc = sp_error(SP_E_CORRUPT, "%s: cannot read /%s/%s", path, SP_GROUP_CALLSITES, name);
	if (d >= 0)
		H5Dclose(d);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*ret = v;
	return 0;
}

/* A vlen string column; the strings become owned copies in t->strings
 * (NULL entries become ""). */
static int read_strings(struct sp_callsites *t, const char *path, hid_t g, const char *name,
			size_t want, const char **out)
{
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
	long n = d < 0 ? -1 : dset_len(d);
	hid_t ft = d < 0 ? -1 : H5Dget_type(d);
	int rc = 0;
	if (n < 0 || (size_t)n != want || ft < 0 || H5Tget_class(ft) != H5T_STRING ||
	    H5Tis_variable_str(ft) <= 0) {
		rc = sp_error(SP_E_CORRUPT, "%s: /%s/%s is missing, not a vlen string column or has "
			      "the wrong length", path, SP_GROUP_CALLSITES, name);
	}
	char **raw = rc ? NULL : calloc(want + 1, sizeof *raw);
	hid_t mt = H5Tcopy(H5T_C_S1);
	H5Tset_size(mt, H5T_VARIABLE);
	if (!rc && !raw)
		rc = -ENOMEM;
	if (!rc && want && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0)
		rc = sp_error(SP_E_CORRUPT, "%s: cannot read /%s/%s", path, SP_GROUP_CALLSITES, name);
	for (size_t i = 0; !rc && i < want; i++) {
		char *s = strdup(raw[i] ? raw[i] : "");
		if (!s) {
			rc = -ENOMEM;
			break;
		}
		t->strings[t->nstrings++] = s;
		out[i] = s;
	}
	if (raw && want && d >= 0) {
		hid_t sp = H5Dget_space(d);
		H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, raw);
		H5Sclose(sp);
	}
	free(raw);
	H5Tclose(mt);
	if (ft >= 0)
		H5Tclose(ft);
	if (d >= 0)
		H5Dclose(d);
	return rc;
}

/* Sites from the columns: frame ranges checked against the frame table. */
static int build_sites(struct sp_callsites *t, const char *path, const int64_t *off,
		       const int64_t *cnt)
{
	for (size_t i = 0; i < t->n; i++) {
		if (off[i] < 0 || cnt[i] < 1 || (uint64_t)off[i] > t->nframes ||
		    (uint64_t)cnt[i] > t->nframes - (uint64_t)off[i])
			return sp_error(SP_E_CORRUPT, "%s: call site %zu has frames outside "
					"/%s/frame_*", path, i, SP_GROUP_CALLSITES);
		struct sp_callsite *s = &t->sites[i];
		s->frames = &t->frames[off[i]];
		s->num_frames = (size_t)cnt[i];
		s->function = s->frames[0].function;
		s->file = s->frames[0].file;
		s->line = s->frames[0].line;
	}
	return 0;
}

static int load_group(struct sp_callsites *t, const char *path, hid_t g)
{
	hid_t d = H5Dopen2(g, SP_CS_FUNCTIONS, H5P_DEFAULT);
	long n = d < 0 ? -1 : dset_len(d);
	if (d >= 0)
		H5Dclose(d);
	hid_t fd = H5Dopen2(g, SP_CS_FRAME_FUNCTIONS, H5P_DEFAULT);
	long nf = fd < 0 ? -1 : dset_len(fd);
	if (fd >= 0)
		H5Dclose(fd);
	if (n < 0 || nf < 0)
		return sp_error(SP_E_CORRUPT, "%s: /%s lacks %s or %s", path, SP_GROUP_CALLSITES,
				SP_CS_FUNCTIONS, SP_CS_FRAME_FUNCTIONS);
	t->n = (size_t)n;
	t->nframes = (size_t)nf;
	t->sites = calloc(t->n + 1, sizeof *t->sites);
	t->frames = calloc(t->nframes + 1, sizeof *t->frames);
	t->strings = calloc(2 * t->nframes + 1, sizeof *t->strings);
	const char **fn = calloc(t->nframes + 1, sizeof *fn), **file = calloc(t->nframes + 1,
									   sizeof *file);
	int64_t *line = NULL, *off = NULL, *cnt = NULL;
	int rc = t->sites && t->frames && t->strings && fn && file ? 0 : -ENOMEM;
	if (!rc)
		rc = read_strings(t, path, g, SP_CS_FRAME_FUNCTIONS, t->nframes, fn);
	if (!rc)
		rc = read_strings(t, path, g, SP_CS_FRAME_FILES, t->nframes, file);
	if (!rc)
		rc = read_ints(path, g, SP_CS_FRAME_LINES, t->nframes, &line);
	if (!rc)
		rc = read_ints(path, g, SP_CS_FRAME_OFFSETS, t->n, &off);
	if (!rc)
		rc = read_ints(path, g, SP_CS_FRAME_COUNTS, t->n, &cnt);
	for (size_t i = 0; !rc && i < t->nframes; i++)
		t->frames[i] = (struct sp_callsite_frame){ fn[i], file[i], line[i] };
	if (!rc)
		rc = build_sites(t, path, off, cnt);
	free(fn);
	free(file);
	free(line);
	free(off);
	free(cnt);
	return rc;
}

int sp_callsites_load(const struct sp_reader *reader, struct sp_callsites **ret_table)
{
	const char *path = reader ? sp_reader_path(reader) : NULL;
	if (!path || sp_reader_input_format(reader) != SP_INPUT_HDF5)
		return sp_error(ENOENT, "%s: not an HDF5 profile: no call-site table",
				path ? path : "(null)");
	hid_t f = -1, g = -1;
	H5E_BEGIN_TRY
	{
		hid_t fapl = sp_h5_fapl();
		f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
		if (fapl != H5P_DEFAULT)
			H5Pclose(fapl);
		g = f < 0 || H5Lexists(f, SP_GROUP_CALLSITES, H5P_DEFAULT) <= 0
			? -1 : H5Gopen2(f, SP_GROUP_CALLSITES, H5P_DEFAULT);
	}
	H5E_END_TRY;
	if (f < 0)
		return sp_error(EIO, "%s: cannot open the file again", path);
	if (g < 0) {
		H5Fclose(f);
		return sp_error(ENOENT, "%s has no /%s table (record with SCOPE_PROFILER_CALLSITES="
				"DEPTH or `scope-profiler run --callsites DEPTH`)", path,
				SP_GROUP_CALLSITES);
	}
	struct sp_callsites *t = calloc(1, sizeof *t);
	int rc = t ? 0 : -ENOMEM;
	H5E_BEGIN_TRY
	{
		if (!rc)
			rc = load_group(t, path, g);
		int64_t depth = 0;
		hid_t a = rc ? -1 : H5Aopen(g, SP_CS_ATTR_DEPTH, H5P_DEFAULT);
		if (a >= 0 && H5Aread(a, H5T_NATIVE_INT64, &depth) >= 0 && t)
			t->depth = (int)depth;
		if (a >= 0)
			H5Aclose(a);
	}
	H5E_END_TRY;
	H5Gclose(g);
	H5Fclose(f);
	if (rc < 0) {
		sp_callsites_destroy(t);
		return rc;
	}
	*ret_table = t;
	return 0;
}
