/* SPDX-License-Identifier: MIT */
/*
 * What every chart shares: default options, file labels and the one colour
 * map over all files, the bar element (with the data-* attributes the
 * report's search box, tooltips and the tests read) and the legend.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "svg.h"

void chart_opts_default(struct chart_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = 900;
	o->max_bars = 20000;
	o->max_lanes = 64;
	o->max_regions = 20;
}

/* Metadata label, else the file name without directory and extension. */
static char *base_label(const struct sp_reader *r)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, "label");
	char *copy, *base, *dot, *out;

	if (m && m->type == SP_META_STRING && m->s && m->s[0])
		return strdup(m->s);
	copy = strdup(sp_reader_path(r));
	if (!copy)
		return NULL;
	base = basename(copy);
	dot = strrchr(base, '.');
	if (dot && dot != base)
		*dot = '\0';
	out = strdup(base);
	free(copy);
	return out;
}

static int make_label(struct chart_file *files, size_t i)
{
	char *base = base_label(files[i].r);
	size_t len;

	if (!base)
		return -ENOMEM;
	len = strlen(base) + 16;
	files[i].label = malloc(len);
	if (!files[i].label) {
		free(base);
		return -ENOMEM;
	}
	snprintf(files[i].label, len, "%s", base);
	for (unsigned k = 2;; k++) {
		bool clash = false;

		for (size_t j = 0; j < i && !clash; j++)
			clash = strcmp(files[j].label, files[i].label) == 0;
		if (!clash)
			break;
		snprintf(files[i].label, len, "%s (%u)", base, k);
	}
	free(base);
	return 0;
}

int chart_files_init(struct chart_file *files, size_t n,
		     const struct sp_selection *sel,
		     const struct sp_palette *palette, struct sp_color_map **ret_map)
{
	struct sp_color_map *map;
	int rc = sp_color_map_create(palette, &map);

	for (size_t i = 0; i < n; i++) {
		files[i].label = NULL;
		files[i].colors = NULL;
	}
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = sp_color_map_add_reader(map, files[i].r, sel);
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t nr = sp_reader_num_regions(files[i].r);

		rc = make_label(files, i);
		if (rc == 0 && !(files[i].colors = calloc(nr + 1, sizeof(char *))))
			rc = -ENOMEM;
		for (size_t k = 0; rc == 0 && k < nr; k++) {
			const char *name = sp_reader_region_name(files[i].r, (uint32_t)k);

			if (sp_selection_match_name(sel, name))
				files[i].colors[k] = sp_color_map_get(map, name);
		}
	}
	if (rc < 0) {
		chart_files_fini(files, n, map);
		return rc;
	}
	*ret_map = map;
	return 0;
}

void chart_files_fini(struct chart_file *files, size_t n, struct sp_color_map *map)
{
	for (size_t i = 0; i < n; i++) {
		free(files[i].label);
		free((void *)files[i].colors);
		files[i].label = NULL;
		files[i].colors = NULL;
	}
	sp_color_map_destroy(map);
}

void chart_bar(FILE *f, const struct chart_opts *o, double x, double y, double w,
	       double h, const char *fill, const char *cls, const char *region,
	       const char *tip, const char *attrs)
{
	fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		   "height=\"%.2f\" fill=\"%s\" data-region=\"",
		cls, x, y, w > 0 ? w : 0, h > 0 ? h : 0, fill ? fill : "#999");
	svg_escape(f, region);
	fputs("\" data-tip=\"", f);
	svg_escape(f, tip);
	fputc('"', f);
	if (attrs)
		fputs(attrs, f);
	if (o->standalone) {
		fputs("><title>", f);
		svg_escape(f, tip);
		fputs("</title></rect>\n", f);
	} else {
		fputs("/>\n", f);
	}
}

/* Approximate text width at 11px (no font metrics in C). */
static double text_w(const char *s)
{
	return 6.4 * (double)strlen(s);
}

double chart_legend_height(const char *const *names, size_t n, double width)
{
	double x = 0, rows = n ? 1 : 0;

	for (size_t i = 0; i < n; i++) {
		double w = 18 + text_w(names[i]) + 14;

		if (x > 0 && x + w > width) {
			rows++;
			x = 0;
		}
		x += w;
	}
	return rows * 16;
}

void chart_legend(FILE *f, double x0, double y0, double width,
		  const char *const *names, const char *const *colors, size_t n)
{
	double x = 0, y = y0;

	for (size_t i = 0; i < n; i++) {
		double w = 18 + text_w(names[i]) + 14;

		if (x > 0 && x + w > width) {
			y += 16;
			x = 0;
		}
		fputs("<g class=\"legend\" data-region=\"", f);
		svg_escape(f, names[i]);
		fprintf(f, "\"><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" "
			   "fill=\"%s\"/>", x0 + x, y + 1, colors[i]);
		svg_text(f, x0 + x + 16, y + 10, "start", "label", names[i]);
		fputs("</g>\n", f);
		x += w;
	}
}

void chart_shorten(char *buf, size_t size, const char *s, double px)
{
	size_t max = px > 0 ? (size_t)(px / 6.4) : 0;
	size_t len = strlen(s);

	if (max >= size)
		max = size - 1;
	if (len <= max) {
		snprintf(buf, size, "%s", s);
		return;
	}
	if (max < 4) {
		buf[0] = '\0';
		return;
	}
	/* Cut at a UTF-8 character boundary, then add "...". */
	len = max - 3;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	snprintf(buf, size, "%.*s...", (int)len, s);
}
