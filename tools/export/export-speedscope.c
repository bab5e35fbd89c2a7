/* SPDX-License-Identifier: MIT */
/*
 * export speedscope: a speedscope file (https://www.speedscope.app/
 * file-format-schema.json) with one shared frame per region and one
 * evented profile per rank and thread lane, all on one time origin (the
 * file's first region entry), in integer nanoseconds. The open/close
 * events are streamed from each rank's reconstructed call stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "sp-config.h"

struct open_call {
	uint32_t frame;
	int64_t end;
};

struct profile_state {
	struct export_ctx *x;
	struct export_file *f;
	FILE *out;
	const long *frame_of_region;
	size_t n_profiles;
	bool open;               /* a profile is being written */
	size_t n_events;
	struct open_call *stack; /* open calls of the current lane */
	size_t depth;
};

static void frames(FILE *out, struct export_file *f, long *frame_of_region,
		   const struct sp_selection *sel)
{
	size_t n = sp_reader_num_regions(f->r), n_frames = 0;
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(f->r, &ranks);

	fputs("\"shared\":{\"frames\":[", out);
	for (uint32_t id = 0; id < n; id++) {
		const char *name = sp_reader_region_name(f->r, id);
		const struct sp_row *src = NULL;

		frame_of_region[id] = -1;
		if (!sp_selection_match_name(sel, name))
			continue;
		for (size_t k = 0; k < n_ranks && !src; k++) {
			long row = sp_reader_row_find(f->r, id, ranks[k]);
			const struct sp_row *p = row < 0 ? NULL : sp_reader_row(f->r, (size_t)row);

			if (p && p->source_file && p->source_file[0])
				src = p;
		}
		fputs(n_frames ? ",\n{\"name\":" : "\n{\"name\":", out);
		ex_json_string(out, name);
		if (src) {
			fputs(",\"file\":", out);
			ex_json_string(out, src->source_file);
			if (src->source_lineno >= 0)
				fprintf(out, ",\"line\":%" PRId64, src->source_lineno);
		}
		fputc('}', out);
		frame_of_region[id] = (long)n_frames++;
	}
	fputs("]},\n", out);
}

static void event(struct profile_state *p, char type, uint32_t frame, int64_t at)
{
	fprintf(p->out, "%s{\"type\":\"%c\",\"frame\":%" PRIu32 ",\"at\":%" PRId64 "}",
		p->n_events++ ? ",\n" : "\n", type, frame, at - p->f->origin_ns);
}

static void open_profile(struct profile_state *p, uint32_t rank, bool lanes,
			 int64_t lane)
{
	const char *tname = lanes ? ex_thread_name(p->f, rank, lane) : NULL;
	char name[160];

	if (!lanes)
		snprintf(name, sizeof(name), "rank %" PRIu32, rank);
	else if (tname)
		snprintf(name, sizeof(name), "rank %" PRIu32 " %s", rank, tname);
	else
		snprintf(name, sizeof(name), "rank %" PRIu32 " thread %" PRId64, rank, lane);
	fputs(p->n_profiles++ ? ",\n{" : "\n{", p->out);
	fputs("\"type\":\"evented\",\"name\":", p->out);
	ex_json_string(p->out, name);
	fprintf(p->out, ",\"unit\":\"nanoseconds\",\"startValue\":%" PRId64
		",\"endValue\":%" PRId64 ",\"events\":[",
		p->f->lo_ns - p->f->origin_ns, p->f->hi_ns - p->f->origin_ns);
	p->open = true;
	p->n_events = 0;
	p->depth = 0;
}

/* Close open calls deeper than or at `depth`; depth 0 ends the profile. */
static void unwind(struct profile_state *p, size_t depth, bool end_profile)
{
	while (p->depth > depth) {
		p->depth--;
		event(p, 'C', p->stack[p->depth].frame, p->stack[p->depth].end);
	}
	if (end_profile && p->open) {
		fputs("]}", p->out);
		p->open = false;
	}
}

/* Kept calls: pass the filter and have a kept parent. */
static int write_rank(struct profile_state *p, uint32_t rank)
{
	struct sp_call_stack *st;
	int rc = sp_call_stack_build(p->f->r, rank, INT64_MIN, p->x->c.sel, &st);
	size_t n;
	bool *kept;
	int64_t lane = INT64_MIN;

	if (rc < 0)
		return ex_reader_error(p->x, p->f, rc);
	n = sp_call_stack_count(st);
	kept = calloc(n ? n : 1, sizeof(*kept));
	p->stack = calloc(n ? n : 1, sizeof(*p->stack));
	if (!kept || !p->stack) {
		free(kept);
		sp_call_stack_destroy(st);
		return ex_reader_error(p->x, p->f, -ENOMEM);
	}
	for (size_t i = 0; i < n; i++) {
		struct sp_call call;
		int64_t s, e;

		sp_call_stack_get(st, i, &call);
		kept[i] = ex_keep(p->x, p->f, call.start_ns, call.end_ns) &&
			  (call.parent < 0 || kept[call.parent]);
		if (!kept[i])
			continue;
		if (!p->open || call.lane != lane) {
			unwind(p, 0, true);
			open_profile(p, rank, ex_has_lanes(p->f), call.lane);
			lane = call.lane;
		}
		unwind(p, (size_t)call.depth < p->depth ? (size_t)call.depth : p->depth, false);
		s = call.start_ns;
		e = call.end_ns;
		ex_clip(p->f, &s, &e);
		event(p, 'O', (uint32_t)p->frame_of_region[call.region], s);
		p->stack[p->depth].frame = (uint32_t)p->frame_of_region[call.region];
		p->stack[p->depth].end = e;
		p->depth++;
	}
	unwind(p, 0, true);
	free(kept);
	free(p->stack);
	p->stack = NULL;
	sp_call_stack_destroy(st);
	return 0;
}

int export_speedscope_write(struct export_ctx *x, struct export_file *f, FILE *out)
{
	size_t n_regions = sp_reader_num_regions(f->r);
	long *frame_of_region = calloc(n_regions ? n_regions : 1, sizeof(long));
	struct profile_state p = { .x = x, .f = f, .out = out,
				   .frame_of_region = frame_of_region };
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(f->r, &ranks);
	int rc = 0;

	if (!frame_of_region)
		return ex_reader_error(x, f, -ENOMEM);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", out);
	fputs("\"exporter\":\"scope-profiler@" SP_VERSION "\",\"name\":", out);
	ex_json_string(out, f->label);
	fputs(",\"activeProfileIndex\":0,\n", out);
	frames(out, f, frame_of_region, x->c.sel);
	fputs("\"profiles\":[", out);
	for (size_t k = 0; k < n_ranks && rc == 0; k++)
		if (sp_selection_match_rank(x->c.sel, ranks[k]))
			rc = write_rank(&p, ranks[k]);
	fputs(p.n_profiles ? "\n]}\n" : "]}\n", out);
	free(frame_of_region);
	return rc;
}
