/* SPDX-License-Identifier: MIT */
/*
 * Parts to file: the layout is the sum of the parts (rows, events, threads
 * and MPI values part after part, optional columns the union), each piece
 * a part puts lands at its part's base, and the groups and metadata go in
 * before the commit. The only code that turns rows and threads into the
 * writer's records.
 */
#define _GNU_SOURCE
#include "assemble.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Thread ids widened per slice of this many events. */
#define TID_SLICE 65536

struct part_base {
	uint64_t row, ev, thr, mpi;
};

struct sp_assembly {
	struct sp_writer *w;
	unsigned columns;
	size_t nparts;
	struct sp_part_size *size;
	struct part_base *base;
	uint64_t dropped;
	bool excl_given;        /* rows carry exclusive_ns (sp_assembly_exclusive_given) */
};

unsigned sp_part_columns(const struct sp_snapshot *s)
{
	unsigned cols = 0;
	if (s->threads_with_events > 1)
		cols |= SP_WCOL_THREAD_IDS;
	for (uint32_t i = 0; i < s->nrows; i++) {
		if (s->rows[i].dropped)
			cols |= SP_WCOL_DROPPED;
		if (s->rows[i].throttled_calls)
			cols |= SP_WCOL_THROTTLED;
	}
	return cols;
}

struct sp_part_size sp_part_size_of(const struct sp_snapshot *s, uint32_t rank)
{
	return (struct sp_part_size){ .rank = rank, .nrows = s->nrows, .nevents = s->nevents,
				      .nthreads = s->nthreads, .dropped = s->dropped,
				      .columns = sp_part_columns(s) };
}

int sp_assembly_create(const char *path, const char *const *names,
		       const uint8_t *kinds, uint32_t nnames,
		       const struct sp_part_size *parts, size_t nparts, int compression,
		       struct sp_assembly **ret_a)
{
	struct sp_assembly *a = calloc(1, sizeof *a);
	if (!a)
		return -ENOMEM;
	a->nparts = nparts;
	a->size = malloc((nparts + 1) * sizeof *a->size);
	a->base = malloc((nparts + 1) * sizeof *a->base);
	if (!a->size || !a->base) {
		sp_assembly_destroy(a);
		return -ENOMEM;
	}
	struct sp_writer_layout l = { .nnames = nnames, .names = names, .kinds = kinds,
				      .compression = compression };
	for (size_t p = 0; p < nparts; p++)
		l.columns |= parts[p].columns;
	for (size_t p = 0; p < nparts; p++) {
		a->size[p] = parts[p];
		a->base[p] = (struct part_base){ l.nrows, l.nevents, l.nthreads, l.nmpi };
		l.nrows += parts[p].nrows;
		l.nevents += parts[p].nevents;
		l.nthreads += (l.columns & SP_WCOL_THREAD_IDS) ? parts[p].nthreads : 0;
		l.nmpi += parts[p].nmpi;
		a->dropped += parts[p].dropped;
	}
	a->columns = l.columns;
	int ret = sp_writer_create(path, &l, &a->w);
	if (ret) {
		sp_assembly_destroy(a);
		return ret;
	}
	*ret_a = a;
	return 0;
}

unsigned sp_assembly_columns(const struct sp_assembly *a)
{
	return a->columns;
}

/* Whether [first, first+n) lies inside [0, max). */
static bool in_range(uint64_t first, uint64_t n, uint64_t max)
{
	return first <= max && n <= max - first;
}

int sp_assembly_put_rows(struct sp_assembly *a, size_t p, uint64_t first, uint64_t n,
			 const struct sp_snap_row *rows, const uint32_t *region_map,
			 const int64_t *mpi_offsets)
{
	const struct sp_part_size *z = &a->size[p];
	if (!in_range(first, n, z->nrows))
		return -EINVAL;
	struct sp_writer_row *out = calloc(n + 1, sizeof *out);
	if (!out)
		return -ENOMEM;
	int ret = 0;
	for (uint64_t i = 0; !ret && i < n; i++) {
		const struct sp_snap_row *r = &rows[i];
		int64_t mo = mpi_offsets ? mpi_offsets[i] : -1;
		if (!in_range(r->offset, r->count, z->nevents) ||
		    (mo >= 0 && !in_range((uint64_t)mo, r->count, z->nmpi)))
			ret = -EINVAL;
		out[i] = (struct sp_writer_row){
			.region = region_map ? region_map[r->region] : r->region, .rank = z->rank,
			.offset = a->base[p].ev + r->offset, .count = r->count,
			.source_line = r->source_line, .source_file = r->source_file,
			.summary = r->summary, .dropped = r->dropped,
			.throttled_calls = r->throttled_calls, .throttled_ns = r->throttled_ns,
			.throttle_timed = r->throttle_timed, .throttled_ci_ns = r->throttled_ci_ns,
			.throttled_since_ns = r->throttled_since_ns,
			.patched_since_ns = r->patched_since_ns,
			.mpi_offset = mo < 0 ? -1 : (int64_t)(a->base[p].mpi + (uint64_t)mo),
			.exclusive_ns = a->excl_given ? r->exclusive_ns : -1,
		};
	}
	if (!ret)
		ret = sp_writer_put_rows(a->w, a->base[p].row + first, n, out);
	free(out);
	return ret;
}

int sp_assembly_put_events(struct sp_assembly *a, size_t p, uint64_t first, uint64_t n,
			   const int64_t *start, const int64_t *end, const uint32_t *thread)
{
	if (!in_range(first, n, a->size[p].nevents))
		return -EINVAL;
	uint64_t at = a->base[p].ev + first;
	/* Times and thread ids all written through sp_assembly_times_raw. */
	if (!(a->columns & SP_WCOL_THREAD_IDS) || (!start && !end && !thread)) {
		struct sp_writer_events ev = { .start = start, .end = end };
		return sp_writer_put_events(a->w, at, n, &ev);
	}
	int64_t *tids = malloc((n < TID_SLICE ? n : TID_SLICE) * sizeof *tids + 1);
	int ret = tids ? 0 : -ENOMEM;
	for (uint64_t s = 0; !ret && s < n; s += TID_SLICE) {
		uint64_t m = n - s < TID_SLICE ? n - s : TID_SLICE;
		for (uint64_t i = 0; i < m; i++)
			tids[i] = thread ? thread[s + i] : 0;
		struct sp_writer_events ev = { .start = start ? start + s : NULL,
					       .end = end ? end + s : NULL, .thread_ids = tids };
		ret = sp_writer_put_events(a->w, at + s, m, &ev);
	}
	free(tids);
	return ret;
}

int sp_assembly_times_raw(struct sp_assembly *a, struct sp_writer_times *ret_times)
{
	return sp_writer_times_raw(a->w, ret_times);
}

void sp_assembly_exclusive_given(struct sp_assembly *a)
{
	a->excl_given = true;
	sp_writer_exclusive_given(a->w);
}

int sp_assembly_put_mpi(struct sp_assembly *a, size_t p, uint64_t first, uint64_t n,
			const struct sp_part_mpi *m)
{
	if (!in_range(first, n, a->size[p].nmpi))
		return -EINVAL;
	struct sp_writer_mpi wm = { .bytes = m->bytes, .peers = m->peers, .roots = m->roots,
				    .tags = m->tags, .comms = m->comms,
				    .callsite_ids = m->callsite_ids };
	return sp_writer_put_mpi(a->w, a->base[p].mpi + first, n, &wm);
}

int sp_assembly_put_threads(struct sp_assembly *a, size_t p, const struct sp_snap_thread *threads)
{
	uint64_t n = a->size[p].nthreads;
	if (!(a->columns & SP_WCOL_THREAD_IDS) || n == 0)
		return 0;
	struct sp_writer_thread *t = calloc(n, sizeof *t);
	if (!t)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		t[i] = (struct sp_writer_thread){ .rank = a->size[p].rank, .index = threads[i].index,
			.ident = threads[i].ident, .native_id = threads[i].native_id,
			.start_ns = threads[i].start_ns, .end_ns = threads[i].end_ns, .cpu_ns = -1 };
	int ret = sp_writer_put_threads(a->w, a->base[p].thr, n, t);
	free(t);
	return ret;
}

int sp_assembly_put_snapshot(struct sp_assembly *a, size_t p, const struct sp_snapshot *s,
			     const uint32_t *region_map, const int64_t *mpi_offsets,
			     const struct sp_part_mpi *m)
{
	if (s->exclusive_known && a->nparts == 1)
		sp_assembly_exclusive_given(a);
	int ret = sp_assembly_put_rows(a, p, 0, s->nrows, s->rows, region_map, mpi_offsets);
	if (!ret && s->nevents)
		ret = sp_assembly_put_events(a, p, 0, s->nevents,
					     s->times_in_file ? NULL : s->start,
					     s->times_in_file ? NULL : s->end, s->thread);
	if (!ret && mpi_offsets && a->size[p].nmpi)
		ret = sp_assembly_put_mpi(a, p, 0, a->size[p].nmpi, m);
	if (!ret)
		ret = sp_assembly_put_threads(a, p, s->threads);
	return ret;
}

int sp_assembly_commit(struct sp_assembly *a, struct sp_run_meta *meta,
		       const struct sp_groups *groups)
{
	int ret = sp_meta_set_int(meta, SP_META_DROPPED, (int64_t)a->dropped);
	if (!ret && groups)
		ret = sp_groups_write(a->w, groups);
	if (!ret)
		ret = sp_writer_put_metadata(a->w, meta);
	if (!ret) {
		ret = sp_writer_commit(a->w);
		a->w = NULL;
	}
	sp_assembly_destroy(a);
	return ret;
}

void sp_assembly_destroy(struct sp_assembly *a)
{
	if (!a)
		return;
	sp_writer_destroy(a->w);
	free(a->size);
	free(a->base);
	free(a);
}
