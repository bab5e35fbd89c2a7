/* SPDX-License-Identifier: MIT */
/*
 * SVG rendering of timelines: the Gantt chart (one panel per file, one lane
 * per rank/thread, call depth as sub-rows of the lane) and the flame chart
 * (one rank, depth 0 on top, region names inside wide bars). Each lane is a
 * <g class="lane" data-rank data-thread> and each bar a rect.bar.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "svg.h"

#define LEFT 120.0
#define RIGHT 24.0
#define TITLE_H 38.0
#define AXIS_H 30.0

static double gantt_row_h(int32_t rows)
{
	double h = 30.0 / (rows > 0 ? rows : 1);

	return h < 4 ? 4 : h > 10 ? 10 : h;
}

static double lane_h(const struct tl_lane *ln)
{
	return gantt_row_h(ln->rows) * ln->rows + 4;
}

static double panel_h(const struct timeline *t, bool heading)
{
	double h = heading ? 18 : 0;

	for (size_t i = 0; i < t->n_lanes; i++)
		h += lane_h(&t->lanes[i]) + 2;
	return h + AXIS_H;
}

static void lane_label(char *buf, size_t size, const struct tl_lane *ln)
{
	if (ln->thread >= 0)
		snprintf(buf, size, "rank %" PRIu32 " / thread %" PRId64, ln->rank, ln->thread);
	else
		snprintf(buf, size, "rank %" PRIu32, ln->rank);
}

/* The bars of one lane; y0 = top of the lane, row_h per depth row. */
static void draw_bars(FILE *f, const struct chart_file *cf, const struct timeline *t,
		      const struct tl_lane *ln, double y0, double row_h,
		      const struct chart_opts *o, bool names)
{
	double span = (double)(t->t1_ns - t->t0_ns), scale = span > 0 ? o->width / span : 0;

	for (size_t k = ln->first_bar; k < ln->first_bar + ln->n_bars; k++) {
		const struct tl_bar *b = &t->bars[k];
		const char *name = sp_reader_region_name(cf->r, b->region);
		double x = LEFT + (double)(b->start_ns - t->t0_ns) * scale;
		double w = (double)(b->end_ns - b->start_ns) * scale;
		double dur = (double)(b->end_ns - b->start_ns) / 1e9;
		char tip[512], d[32], s[32], attrs[96];

		fmt_seconds(d, sizeof(d), dur);
		fmt_seconds(s, sizeof(s), (double)(b->start_ns - t->t0_ns) / 1e9);
		if (t->aggregated)
			snprintf(tip, sizeof(tip), "%s: %" PRIu64 " call(s) in %s at %s (rank %" PRIu32 ")",
				 name, b->calls, d, s, ln->rank);
		else
			snprintf(tip, sizeof(tip), "%s: %s at %s (rank %" PRIu32 ")", name, d, s,
				 ln->rank);
		snprintf(attrs, sizeof(attrs), " data-depth=\"%d\" data-calls=\"%" PRIu64 "\"",
			 b->depth, b->calls);
		chart_bar(f, o, x, y0 + b->depth * row_h, w < 0.5 ? 0.5 : w, row_h - 1,
			  cf->colors[b->region], "bar", name, tip, attrs);
		if (names && w > 40) {
			char label[256];

			chart_shorten(label, sizeof(label), name, w - 6);
			if (label[0])
				svg_text(f, x + 3, y0 + b->depth * row_h + row_h - 5, "start",
					 "inbar", label);
		}
	}
}

/* Regions drawn in any of the timelines, in colour-map (first-seen) order. */
static size_t drawn_regions(const struct chart_file *files, const struct timeline *tls,
			    size_t n, const char **names, const char **colors, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t b = 0; b < tls[i].n_bars && k < max; b++) {
			const char *name = sp_reader_region_name(files[i].r, tls[i].bars[b].region);
			bool seen = false;

			for (size_t j = 0; j < k && !seen; j++)
				seen = strcmp(names[j], name) == 0;
			if (!seen) {
				names[k] = name;
				colors[k++] = files[i].colors[tls[i].bars[b].region];
			}
		}
	return k;
}

static void legend_and_notes(FILE *f, const struct chart_file *files,
			     const struct timeline *tls, size_t n, double y,
			     const struct chart_opts *o, bool draw, double *ret_h)
{
	size_t max = 256, k;
	const char **names = calloc(max, sizeof(*names));
	const char **colors = calloc(max, sizeof(*colors));
	double h = 0;

	if (names && colors) {
		k = drawn_regions(files, tls, n, names, colors, max);
		h = chart_legend_height(names, k, o->width + LEFT);
		if (draw)
			chart_legend(f, 10, y, o->width + LEFT, names, colors, k);
	}
	free(names);
	free((void *)colors);
	*ret_h = h + 8;
}

static void title_line(FILE *f, const char *title, const struct timeline *tls, size_t n)
{
	char note[1024] = "";

	svg_text(f, 10, 17, "start", "title", title);
	for (size_t i = 0; i < n && !note[0]; i++)
		timeline_note(&tls[i], true, note, sizeof(note));
	if (note[0])
		svg_text(f, 10, 31, "start", "small", note);
}

void gantt_render(FILE *f, const struct chart_file *files,
		  const struct timeline *tls, size_t n, const struct chart_opts *o)
{
	double h = TITLE_H, y, legend_h;

	for (size_t i = 0; i < n; i++)
		h += panel_h(&tls[i], n > 1);
	legend_and_notes(f, files, tls, n, 0, o, false, &legend_h);
	svg_open(f, LEFT + o->width + RIGHT, h + legend_h, "gantt", o->standalone,
		 "Gantt timeline");
	title_line(f, "Gantt timeline", tls, n);
	y = TITLE_H;
	for (size_t i = 0; i < n; i++) {
		const struct timeline *t = &tls[i];
		double top;

		if (n > 1) {
			svg_text(f, 10, y + 13, "start", "label", files[i].label);
			y += 18;
		}
		top = y;
		y += panel_h(t, false) - AXIS_H;
		svg_axis_x(f, LEFT, LEFT + o->width, y, 0,
			   (double)(t->t1_ns - t->t0_ns) / 1e9, y - top, true);
		y = top;
		fprintf(f, "<g class=\"panel\" data-file=\"%zu\">\n", i);
		for (size_t l = 0; l < t->n_lanes; l++) {
			const struct tl_lane *ln = &t->lanes[l];
			double lh = lane_h(ln);
			char label[96];

			lane_label(label, sizeof(label), ln);
			fprintf(f, "<g class=\"lane\" data-rank=\"%" PRIu32 "\" data-thread=\"%" PRId64
				   "\" data-rows=\"%d\" data-calls=\"%" PRIu64 "\">\n",
				ln->rank, ln->thread, ln->rows, ln->calls);
			fprintf(f, "<rect class=\"lane-bg\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				   "height=\"%.1f\"/>\n", LEFT, y, o->width, lh);
			svg_text(f, LEFT - 6, y + lh / 2 + 4, "end", "label", label);
			draw_bars(f, &files[i], t, ln, y + 2, gantt_row_h(ln->rows), o, false);
			fputs("</g>\n", f);
			y += lh + 2;
		}
		fputs("</g>\n", f);
		y += AXIS_H;
	}
	legend_and_notes(f, files, tls, n, y, o, true, &legend_h);
	svg_close(f);
}

#define FLAME_ROW 17.0

void flame_render(FILE *f, const struct chart_file *cf, const struct timeline *t,
		  const struct chart_opts *o)
{
	double h = TITLE_H, y = TITLE_H, legend_h;
	char title[512];

	for (size_t l = 0; l < t->n_lanes; l++)
		h += 18 + t->lanes[l].rows * FLAME_ROW + 4;
	h += AXIS_H;
	legend_and_notes(f, cf, t, 1, 0, o, false, &legend_h);
	if (t->n_lanes)
		snprintf(title, sizeof(title), "Flame chart: %s, rank %" PRIu32, cf->label,
			 t->lanes[0].rank);
	else
		snprintf(title, sizeof(title), "Flame chart: %s (no calls)", cf->label);
	svg_open(f, LEFT + o->width + RIGHT, h + legend_h, "flame", o->standalone, title);
	title_line(f, title, t, 1);
	svg_axis_x(f, LEFT, LEFT + o->width, h - AXIS_H, 0,
		   (double)(t->t1_ns - t->t0_ns) / 1e9, h - AXIS_H - TITLE_H, true);
	for (size_t l = 0; l < t->n_lanes; l++) {
		const struct tl_lane *ln = &t->lanes[l];
		char label[96];

		lane_label(label, sizeof(label), ln);
		svg_text(f, LEFT, y + 13, "start", "label", label);
		y += 18;
		fprintf(f, "<g class=\"lane\" data-rank=\"%" PRIu32 "\" data-thread=\"%" PRId64
			   "\" data-rows=\"%d\" data-calls=\"%" PRIu64 "\">\n",
			ln->rank, ln->thread, ln->rows, ln->calls);
		for (int32_t d = 0; d < ln->rows; d++) {
			char depth[32];

			snprintf(depth, sizeof(depth), "depth %d", d);
			svg_text(f, LEFT - 6, y + d * FLAME_ROW + 12, "end", "small", depth);
		}
		draw_bars(f, cf, t, ln, y, FLAME_ROW, o, true);
		fputs("</g>\n", f);
		y += ln->rows * FLAME_ROW + 4;
	}
	y += AXIS_H;
	legend_and_notes(f, cf, t, 1, y, o, true, &legend_h);
	svg_close(f);
}
