/* SPDX-License-Identifier: MIT */
/*
 * Tiny SVG/HTML text helpers for the charts of `plot` and `report`: XML
 * escaping, the <svg> frame, text, lines, "nice" axis ticks and a
 * human-readable seconds format. Everything writes straight to a FILE.
 */
#ifndef SP_SVG_H
#define SP_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/** The chart stylesheet (CSS text), embedded in standalone SVGs and the report. */
extern const char svg_css[];

/** Write s with & < > " ' escaped (valid in XML text and attributes). */
void svg_escape(FILE *f, const char *s);

/**
 * Open an <svg> of w x h pixels. standalone adds the XML namespace and a
 * <style> block so the file renders on its own; kind goes to data-chart.
 */
void svg_open(FILE *f, double w, double h, const char *kind, bool standalone,
	      const char *title);
void svg_close(FILE *f);

/** <text> at (x, y); anchor "start", "middle" or "end"; cls may be NULL. */
void svg_text(FILE *f, double x, double y, const char *anchor, const char *cls,
	      const char *text);
void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *cls);

/**
 * Up to max "nice" tick values (1, 2, 5 x 10^k steps) covering [lo, hi].
 * @return number of ticks written to ret.
 */
int svg_ticks(double lo, double hi, int target, double *ret, int max);

/**
 * A horizontal value axis from x0 to x1 pixels at y for values [v0, v1]
 * (ticks, labels, vertical grid lines of height grid_h above y).
 * seconds: format labels as durations.
 */
void svg_axis_x(FILE *f, double x0, double x1, double y, double v0, double v1,
		double grid_h, bool seconds);

/** "1.23 ms", "45.6 s", "0 s": seconds with an SI prefix, 3 significant digits. */
void fmt_seconds(char *buf, size_t size, double s);

#endif /* SP_SVG_H */
