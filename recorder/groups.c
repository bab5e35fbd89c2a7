/* SPDX-License-Identifier: MIT */
/*
 * The optional groups: gathered from this process or read back from a file
 * we wrote, unified (call sites by key), written through the writer. A file
 * given to `merge` or `recover` is hostile: every length and offset is
 * checked before use.
 */
#define _GNU_SOURCE
#include "groups.h"

#include <errno.h>
#include <hdf5.h>
#include "lazy-hdf5.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sp_groups_add_comms(struct sp_groups *g, const struct sp_comm_row *rows, uint64_t n)
{
	g->comms_present = true;
	if (g->ncomms + n > g->capcomms) {
		uint64_t cap = g->capcomms ? 2 * g->capcomms : 64;
		while (cap < g->ncomms + n)
			cap *= 2;
		struct sp_comm_row *v = realloc(g->comms, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		g->comms = v;
		g->capcomms = cap;
	}
	if (n)
		memcpy(g->comms + g->ncomms, rows, n * sizeof *rows);
	g->ncomms += n;
	return 0;
}

int sp_groups_add_clock(struct sp_groups *g, const struct sp_clock_row *rows, uint64_t n,
			const struct sp_clock_attrs *attrs)
{
	if (!g->clock_present)
		g->clock_attrs = *attrs;
	g->clock_present = true;
	if (g->nclock + n > g->capclock) {
		uint64_t cap = g->capclock ? 2 * g->capclock : 64;
		while (cap < g->nclock + n)
			cap *= 2;
		struct sp_clock_row *v = realloc(g->clock, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		g->clock = v;
		g->capclock = cap;
	}
	if (n)
		memcpy(g->clock + g->nclock, rows, n * sizeof *rows);
	g->nclock += n;
	return 0;
}

void sp_groups_free(struct sp_groups *g)
{
	free(g->clock);
	free(g->comms);
	sp_names_free(&g->sites);
	memset(g, 0, sizeof *g);
}

/* ---- writing ---------------------------------------------------------------- */

static int write_comms(struct sp_writer *w, const struct sp_groups *g)
{
	uint64_t n = g->ncomms;
	uint32_t *ranks = malloc((n + 1) * sizeof *ranks);
	int32_t *v = malloc((4 * n + 1) * sizeof *v);
	int ret = ranks && v ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < n; i++) {
		const struct sp_comm_row *c = &g->comms[i];
		ranks[i] = c->rank;
		v[i] = c->id;
		v[n + i] = c->size;
		v[2 * n + i] = c->remote_size;
		v[3 * n + i] = c->leader;
	}
	const struct sp_writer_column cols[] = {
		{ SP_COMM_RANKS, SP_WTYPE_U32, n, ranks },
		{ SP_COMM_IDS, SP_WTYPE_I32, n, v },
		{ SP_COMM_SIZES, SP_WTYPE_I32, n, v + n },
		{ SP_COMM_REMOTE_SIZES, SP_WTYPE_I32, n, v + 2 * n },
		{ SP_COMM_LEADERS, SP_WTYPE_I32, n, v + 3 * n },
	};
	const struct sp_writer_group grp = { SP_GROUP_MPI_COMMS, 5, cols, 0, NULL };
	if (!ret)
		ret = sp_writer_put_group(w, &grp);
	free(ranks);
	free(v);
	return ret;
}

/* The /callsites columns, split out of the keys (the copies are cut in place). */
struct site_table {
	uint64_t nframes;
	const char **fn, **file, **ffn, **ffile;
	int64_t *line, *fline;
	uint64_t *off;
	uint32_t *count;
	char **keys;
};

static void site_table_free(struct site_table *t, uint32_t n)
{
	for (uint32_t i = 0; t->keys && i < n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->fn);
	free(t->file);
	free(t->line);
	free(t->off);
	free(t->count);
	free(t->ffn);
	free(t->ffile);
	free(t->fline);
}

/* Split one key into its frames' fields at fn/file/line (the key is cut). */
static uint32_t split_frames(char *key, const char **fn, const char **file, int64_t *line)
{
	uint32_t n = 0;
	for (char *fr = key; fr; n++) {
		char *next = strchr(fr, SP_SITE_FRAME_SEP);
		if (next)
			*next++ = '\0';
		const char *f[3] = { fr, "", "-1" };
		for (int k = 1; k < 3; k++) {
			char *sep = strchr(f[k - 1], SP_SITE_FIELD_SEP);
			if (!sep)
				break;
			*sep = '\0';
			f[k] = sep + 1;
		}
		fn[n] = f[0];
		file[n] = f[1];
		line[n] = strtoll(f[2], NULL, 10);
		fr = next;
	}
	return n;
}

static uint64_t count_frames(const struct sp_names *keys)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < keys->n; i++) {
		n++;
		for (const char *p = keys->v[i]; (p = strchr(p, SP_SITE_FRAME_SEP)); p++)
			n++;
	}
	return n;
}

static int site_table_build(struct site_table *t, const struct sp_names *keys)
{
	uint32_t n = keys->n;
	uint64_t fmax = count_frames(keys) + 1;
	memset(t, 0, sizeof *t);
	t->keys = calloc(n + 1, sizeof *t->keys);
	t->fn = calloc(n + 1, sizeof *t->fn);
	t->file = calloc(n + 1, sizeof *t->file);
	t->line = calloc(n + 1, sizeof *t->line);
	t->off = calloc(n + 1, sizeof *t->off);
	t->count = calloc(n + 1, sizeof *t->count);
	t->ffn = calloc(fmax, sizeof *t->ffn);
	t->ffile = calloc(fmax, sizeof *t->ffile);
	t->fline = calloc(fmax, sizeof *t->fline);
	if (!t->keys || !t->fn || !t->file || !t->line || !t->off || !t->count || !t->ffn ||
	    !t->ffile || !t->fline)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!(t->keys[i] = strdup(keys->v[i])))
			return -ENOMEM;
		t->off[i] = t->nframes;
		t->count[i] = split_frames(t->keys[i], t->ffn + t->nframes, t->ffile + t->nframes,
					   t->fline + t->nframes);
		t->fn[i] = t->ffn[t->nframes];
		t->file[i] = t->ffile[t->nframes];
		t->line[i] = t->fline[t->nframes];
		t->nframes += t->count[i];
	}
	return 0;
}

static int write_sites(struct sp_writer *w, const struct sp_groups *g)
{
	struct site_table t;
	uint32_t n = g->sites.n;
	int ret = site_table_build(&t, &g->sites);
	const struct sp_writer_column cols[] = {
		{ SP_CS_FUNCTIONS, SP_WTYPE_STR, n, t.fn },
		{ SP_CS_FILES, SP_WTYPE_STR, n, t.file },
		{ SP_CS_LINES, SP_WTYPE_I64, n, t.line },
		{ SP_CS_FRAME_OFFSETS, SP_WTYPE_U64, n, t.off },
		{ SP_CS_FRAME_COUNTS, SP_WTYPE_U32, n, t.count },
		{ SP_CS_FRAME_FUNCTIONS, SP_WTYPE_STR, t.nframes, t.ffn },
		{ SP_CS_FRAME_FILES, SP_WTYPE_STR, t.nframes, t.ffile },
		{ SP_CS_FRAME_LINES, SP_WTYPE_I64, t.nframes, t.fline },
	};
	const struct sp_writer_attr depth = { SP_CS_ATTR_DEPTH, g->sites_depth };
	const struct sp_writer_group grp = { SP_GROUP_CALLSITES, 8, cols, 1, &depth };
	if (!ret)
		ret = sp_writer_put_group(w, &grp);
	site_table_free(&t, n);
	return ret;
}

/* /clock_sync: the int64 columns in one block, then the rest. */
enum { CLK_I64 = 7 };

static int write_clock(struct sp_writer *w, const struct sp_groups *g)
{
	uint64_t n = g->nclock;
	uint32_t *ranks = malloc((n + 1) * sizeof *ranks);
	int32_t *flags = malloc((2 * n + 1) * sizeof *flags);
	int64_t *v = malloc((CLK_I64 * n + 1) * sizeof *v);
	double *d = malloc((2 * n + 1) * sizeof *d);
	int ret = ranks && flags && v && d ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < n; i++) {
		const struct sp_clock_row *c = &g->clock[i];
		ranks[i] = c->rank;
		flags[i] = c->applied;
		flags[n + i] = c->same_boot;
		const int64_t col[CLK_I64] = { c->init_time, c->init_offset, c->init_error,
					       c->final_time, c->final_offset, c->final_error,
					       c->error };
		for (int k = 0; k < CLK_I64; k++)
			v[(uint64_t)k * n + i] = col[k];
		d[i] = c->drift_ppm;
		d[n + i] = c->drift_error_ppm;
	}
	const struct sp_writer_column cols[] = {
		{ SP_CLK_RANKS, SP_WTYPE_U32, n, ranks },
		{ SP_CLK_APPLIED, SP_WTYPE_I32, n, flags },
		{ SP_CLK_SAME_BOOT, SP_WTYPE_I32, n, flags + n },
		{ SP_CLK_INIT_TIMES, SP_WTYPE_I64, n, v },
		{ SP_CLK_INIT_OFFSETS, SP_WTYPE_I64, n, v + n },
		{ SP_CLK_INIT_ERRORS, SP_WTYPE_I64, n, v + 2 * n },
		{ SP_CLK_FINAL_TIMES, SP_WTYPE_I64, n, v + 3 * n },
		{ SP_CLK_FINAL_OFFSETS, SP_WTYPE_I64, n, v + 4 * n },
		{ SP_CLK_FINAL_ERRORS, SP_WTYPE_I64, n, v + 5 * n },
		{ SP_CLK_ERRORS, SP_WTYPE_I64, n, v + 6 * n },
		{ SP_CLK_DRIFTS, SP_WTYPE_F64, n, d },
		{ SP_CLK_DRIFT_ERRORS, SP_WTYPE_F64, n, d + n },
	};
	const struct sp_clock_attrs *a = &g->clock_attrs;
	const struct sp_writer_attr attrs[] = {
		{ SP_CLK_ATTR_PINGPONGS, a->pingpongs },
		{ SP_CLK_ATTR_TEST_SKEW, a->test_skew },
		{ SP_CLK_ATTR_SKEW_OFFSET, a->skew_offset_ns },
		{ SP_CLK_ATTR_SKEW_DRIFT, a->skew_drift_ppb },
		{ SP_CLK_ATTR_SKEW_ORIGIN, a->skew_origin_ns },
	};
	const struct sp_writer_group grp = { SP_GROUP_CLOCK, sizeof cols / sizeof *cols, cols,
					     a->test_skew ? 5 : 2, attrs };
	if (!ret)
		ret = sp_writer_put_group(w, &grp);
	free(ranks);
	free(flags);
	free(v);
	free(d);
	return ret;
}

int sp_groups_write(struct sp_writer *w, const struct sp_groups *g)
{
	int ret = g->comms_present ? write_comms(w, g) : 0;
	if (!ret && g->sites_present)
		ret = write_sites(w, g);
	if (!ret && g->clock_present)
		ret = write_clock(w, g);
	return ret;
}

/* ---- reading a file back ---------------------------------------------------- */

/* Elements of a 1-D dataset, or -1 when it is missing or not 1-D. */
static int64_t dset_len(hid_t g, const char *name)
{
	if (H5Lexists(g, name, H5P_DEFAULT) <= 0)
		return -1;
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
	if (d < 0)
		return -1;
	hid_t sp = H5Dget_space(d);
	hsize_t dims[2] = { 0, 0 };
	int rank = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
	if (rank == 1)
		H5Sget_simple_extent_dims(sp, dims, NULL);
	if (sp >= 0)
		H5Sclose(sp);
	H5Dclose(d);
	return rank == 1 && dims[0] < (1ull << 40) ? (int64_t)dims[0] : -1;
}

/* Read a whole 1-D dataset of n values as mtype (HDF5 converts). */
static int read_all(hid_t g, const char *name, hid_t mtype, void *buf)
{
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
	if (d < 0)
		return -EBADMSG;
	herr_t rc = H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	H5Dclose(d);
	return rc < 0 ? -EBADMSG : 0;
}

static int read_comms(struct sp_groups *g, hid_t file)
{
	if (H5Lexists(file, SP_GROUP_MPI_COMMS, H5P_DEFAULT) <= 0)
		return 0;
	hid_t grp = H5Gopen2(file, SP_GROUP_MPI_COMMS, H5P_DEFAULT);
	if (grp < 0)
		return -EBADMSG;
	static const char *const names[5] = { SP_COMM_RANKS, SP_COMM_IDS, SP_COMM_SIZES,
					      SP_COMM_REMOTE_SIZES, SP_COMM_LEADERS };
	int64_t n = dset_len(grp, names[0]);
	int ret = n < 0 ? -EBADMSG : 0;
	for (int k = 1; !ret && k < 5; k++)
		if (dset_len(grp, names[k]) != n)
			ret = -EBADMSG;
	int32_t *v = ret ? NULL : malloc(((uint64_t)n * 5 + 1) * sizeof *v);
	if (!ret && !v)
		ret = -ENOMEM;
	for (int k = 0; !ret && k < 5; k++)
		ret = read_all(grp, names[k], H5T_NATIVE_INT32, v + (uint64_t)k * (uint64_t)n);
	struct sp_comm_row *rows = ret ? NULL : malloc(((uint64_t)n + 1) * sizeof *rows);
	if (!ret && !rows)
		ret = -ENOMEM;
	for (int64_t i = 0; !ret && i < n; i++)
		rows[i] = (struct sp_comm_row){ (uint32_t)v[i], v[n + i], v[2 * n + i],
						v[3 * n + i], v[4 * n + i] };
	if (!ret)
		ret = sp_groups_add_comms(g, rows, (uint64_t)n);
	free(rows);
	free(v);
	H5Gclose(grp);
	return ret;
}

/* The columns of /callsites needed to rebuild the keys. */
struct site_cols {
	int64_t n, nframes;
	uint64_t *off;
	uint32_t *count;
	char **ffn, **ffile;
	int64_t *fline;
};

static int site_cols_read(hid_t grp, hid_t str, struct site_cols *c)
{
	c->n = dset_len(grp, SP_CS_FRAME_OFFSETS);
	c->nframes = dset_len(grp, SP_CS_FRAME_FUNCTIONS);
	if (c->n < 0 || c->nframes < 0 || dset_len(grp, SP_CS_FRAME_COUNTS) != c->n ||
	    dset_len(grp, SP_CS_FRAME_FILES) != c->nframes ||
	    dset_len(grp, SP_CS_FRAME_LINES) != c->nframes || c->n > UINT32_MAX)
		return -EBADMSG;
	uint64_t n = (uint64_t)c->n, f = (uint64_t)c->nframes;
	c->off = malloc((n + 1) * sizeof *c->off);
	c->count = malloc((n + 1) * sizeof *c->count);
	c->ffn = calloc(f + 1, sizeof *c->ffn);
	c->ffile = calloc(f + 1, sizeof *c->ffile);
	c->fline = malloc((f + 1) * sizeof *c->fline);
	if (!c->off || !c->count || !c->ffn || !c->ffile || !c->fline)
		return -ENOMEM;
	int ret = read_all(grp, SP_CS_FRAME_OFFSETS, H5T_NATIVE_UINT64, c->off);
	ret = ret ? ret : read_all(grp, SP_CS_FRAME_COUNTS, H5T_NATIVE_UINT32, c->count);
	ret = ret ? ret : read_all(grp, SP_CS_FRAME_LINES, H5T_NATIVE_INT64, c->fline);
	ret = ret ? ret : read_all(grp, SP_CS_FRAME_FUNCTIONS, str, c->ffn);
	ret = ret ? ret : read_all(grp, SP_CS_FRAME_FILES, str, c->ffile);
	for (uint64_t i = 0; !ret && i < n; i++)
		if (c->count[i] == 0 || c->off[i] > f || c->count[i] > f - c->off[i])
			ret = -EBADMSG;
	for (uint64_t i = 0; !ret && i < f; i++)
		if (!c->ffn[i] || !c->ffile[i])
			ret = -EBADMSG;
	return ret;
}

static void site_cols_free(struct site_cols *c)
{
	for (int64_t i = 0; i < c->nframes; i++) {
		if (c->ffn)
			H5free_memory(c->ffn[i]);
		if (c->ffile)
			H5free_memory(c->ffile[i]);
	}
	free(c->off);
	free(c->count);
	free(c->ffn);
	free(c->ffile);
	free(c->fline);
}

/* Site i's key, malloc'd. */
static char *site_key(const struct site_cols *c, uint64_t i)
{
	char *key = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&key, &len);
	if (!f)
		return NULL;
	for (uint32_t k = 0; k < c->count[i]; k++) {
		uint64_t fr = c->off[i] + k;
		fprintf(f, "%s%s%c%s%c%" PRId64, k ? (char[]){ SP_SITE_FRAME_SEP, 0 } : "",
			c->ffn[fr], SP_SITE_FIELD_SEP, c->ffile[fr], SP_SITE_FIELD_SEP, c->fline[fr]);
	}
	if (fclose(f) != 0) {
		free(key);
		return NULL;
	}
	return key;
}

static int read_sites(struct sp_groups *g, hid_t file, uint32_t **ret_map, uint32_t *ret_n)
{
	if (H5Lexists(file, SP_GROUP_CALLSITES, H5P_DEFAULT) <= 0)
		return 0;
	hid_t grp = H5Gopen2(file, SP_GROUP_CALLSITES, H5P_DEFAULT);
	if (grp < 0)
		return -EBADMSG;
	hid_t str = H5Tcopy(H5T_C_S1);
	H5Tset_size(str, H5T_VARIABLE);
	H5Tset_cset(str, H5T_CSET_UTF8);
	struct site_cols c = { 0 };
	int ret = site_cols_read(grp, str, &c);
	int64_t depth = 0;
	if (!ret && H5Aexists(grp, SP_CS_ATTR_DEPTH) > 0) {
		hid_t a = H5Aopen(grp, SP_CS_ATTR_DEPTH, H5P_DEFAULT);
		if (a < 0 || H5Aread(a, H5T_NATIVE_INT64, &depth) < 0)
			ret = -EBADMSG;
		if (a >= 0)
			H5Aclose(a);
	}
	uint32_t *map = ret ? NULL : malloc(((uint64_t)c.n + 1) * sizeof *map);
	if (!ret && !map)
		ret = -ENOMEM;
	for (int64_t i = 0; !ret && i < c.n; i++) {
		char *key = site_key(&c, (uint64_t)i);
		ret = key ? sp_names_add(&g->sites, key, &map[i]) : -ENOMEM;
		free(key);
	}
	if (!ret) {
		g->sites_present = true;
		g->sites_depth = depth > g->sites_depth ? depth : g->sites_depth;
		*ret_map = map;
		*ret_n = (uint32_t)c.n;
	} else {
		free(map);
	}
	site_cols_free(&c);
	H5Tclose(str);
	H5Gclose(grp);
	return ret;
}

static int read_attr(hid_t grp, const char *name, int64_t *ret)
{
	if (H5Aexists(grp, name) <= 0)
		return 0;
	hid_t a = H5Aopen(grp, name, H5P_DEFAULT);
	int ret_rc = a < 0 || H5Aread(a, H5T_NATIVE_INT64, ret) < 0 ? -EBADMSG : 0;
	if (a >= 0)
		H5Aclose(a);
	return ret_rc;
}

/* The columns of /clock_sync, in the order of struct clock_cols. */
static const char *const clock_names[] = {
	SP_CLK_RANKS, SP_CLK_APPLIED, SP_CLK_SAME_BOOT, SP_CLK_INIT_TIMES, SP_CLK_INIT_OFFSETS,
	SP_CLK_INIT_ERRORS, SP_CLK_FINAL_TIMES, SP_CLK_FINAL_OFFSETS, SP_CLK_FINAL_ERRORS,
	SP_CLK_ERRORS, SP_CLK_DRIFTS, SP_CLK_DRIFT_ERRORS,
};
#define CLK_NCOLS (sizeof clock_names / sizeof *clock_names)

/* Rows of a hostile file: every column of one length, ranks in range. */
static int clock_rows(hid_t grp, int64_t n, struct sp_clock_row *rows)
{
	int64_t *v = malloc(((uint64_t)n * (CLK_NCOLS - 2) + 1) * sizeof *v);
	double *d = malloc(((uint64_t)n * 2 + 1) * sizeof *d);
	int ret = v && d ? 0 : -ENOMEM;
	for (size_t k = 0; !ret && k < CLK_NCOLS - 2; k++)
		ret = read_all(grp, clock_names[k], H5T_NATIVE_INT64, v + k * (uint64_t)n);
	for (size_t k = 0; !ret && k < 2; k++)
		ret = read_all(grp, clock_names[CLK_NCOLS - 2 + k], H5T_NATIVE_DOUBLE,
			       d + k * (uint64_t)n);
	for (int64_t i = 0; !ret && i < n; i++) {
		const int64_t *c = v + i;
		if (c[0] < 0 || c[0] >= SP_MAX_RANKS) {
			ret = -EBADMSG;
			break;
		}
		rows[i] = (struct sp_clock_row){ .rank = (uint32_t)c[0], .applied = c[n] == 1,
			.same_boot = c[2 * n] == 1, .init_time = c[3 * n], .init_offset = c[4 * n],
			.init_error = c[5 * n], .final_time = c[6 * n], .final_offset = c[7 * n],
			.final_error = c[8 * n], .error = c[9 * n], .drift_ppm = d[i],
			.drift_error_ppm = d[n + i] };
	}
	free(v);
	free(d);
	return ret;
}

static int read_clock(struct sp_groups *g, hid_t file)
{
	if (H5Lexists(file, SP_GROUP_CLOCK, H5P_DEFAULT) <= 0)
		return 0;
	hid_t grp = H5Gopen2(file, SP_GROUP_CLOCK, H5P_DEFAULT);
	if (grp < 0)
		return -EBADMSG;
	int64_t n = dset_len(grp, clock_names[0]);
	int ret = n < 0 || n > SP_MAX_RANKS ? -EBADMSG : 0;
	for (size_t k = 1; !ret && k < CLK_NCOLS; k++)
		if (dset_len(grp, clock_names[k]) != n)
			ret = -EBADMSG;
	struct sp_clock_attrs a = { 0 };
	ret = ret ? ret : read_attr(grp, SP_CLK_ATTR_PINGPONGS, &a.pingpongs);
	ret = ret ? ret : read_attr(grp, SP_CLK_ATTR_TEST_SKEW, &a.test_skew);
	ret = ret ? ret : read_attr(grp, SP_CLK_ATTR_SKEW_OFFSET, &a.skew_offset_ns);
	ret = ret ? ret : read_attr(grp, SP_CLK_ATTR_SKEW_DRIFT, &a.skew_drift_ppb);
	ret = ret ? ret : read_attr(grp, SP_CLK_ATTR_SKEW_ORIGIN, &a.skew_origin_ns);
	struct sp_clock_row *rows = ret ? NULL : malloc(((uint64_t)n + 1) * sizeof *rows);
	if (!ret && !rows)
		ret = -ENOMEM;
	if (!ret)
		ret = clock_rows(grp, n, rows);
	if (!ret)
		ret = sp_groups_add_clock(g, rows, (uint64_t)n, &a);
	free(rows);
	H5Gclose(grp);
	return ret;
}

int sp_groups_read_file(struct sp_groups *g, const char *path, uint32_t **ret_site_map,
			uint32_t *ret_nsites)
{
	*ret_site_map = NULL;
	*ret_nsites = 0;
	int lz = sp_lazy_load(SP_LAZY_HDF5);
	if (lz)
		return lz;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0)
		return -EBADMSG;
	int ret = read_comms(g, f);
	if (!ret)
		ret = read_sites(g, f, ret_site_map, ret_nsites);
	if (!ret)
		ret = read_clock(g, f);
	H5Fclose(f);
	return ret;
}
