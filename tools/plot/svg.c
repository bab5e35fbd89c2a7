/* SPDX-License-Identifier: MIT */
/*
 * SVG writing helpers shared by every chart: escaping, the frame with its
 * stylesheet (also pasted once into the HTML report), text, lines, nice
 * ticks and duration labels.
 */
#include <math.h>
#include <string.h>

#include "svg.h"

/* Chart stylesheet: standalone .svg files embed it, the report inlines it once. */
const char svg_css[] =
	"svg.sp-chart{font-family:system-ui,-apple-system,'DejaVu Sans',sans-serif;"
	"font-size:11px;background:#fff}\n"
	"svg.sp-chart text{fill:#222}\n"
	"svg.sp-chart .title{font-size:13px;font-weight:600}\n"
	"svg.sp-chart .label{font-size:11px}\n"
	"svg.sp-chart .small{font-size:9px;fill:#555}\n"
	"svg.sp-chart .inbar{font-size:10px;fill:#111;pointer-events:none}\n"
	"svg.sp-chart .grid{stroke:#e3e3e3;stroke-width:1}\n"
	"svg.sp-chart .axis{stroke:#888;stroke-width:1}\n"
	"svg.sp-chart .mean{stroke:#222;stroke-width:1.2;stroke-dasharray:4 3}\n"
	"svg.sp-chart .ideal{stroke:#888;stroke-width:1.2;stroke-dasharray:5 4;fill:none}\n"
	"svg.sp-chart .series{fill:none;stroke-width:2}\n"
	"svg.sp-chart .lane-bg{fill:#f6f6f6}\n"
	"svg.sp-chart rect.bar{stroke:#fff;stroke-width:.4}\n"
	"svg.sp-chart rect.hot{stroke:#d00;stroke-width:1.5}\n"
	"svg.sp-chart .dim{opacity:.12}\n";

void svg_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

void svg_open(FILE *f, double w, double h, const char *kind, bool standalone,
	      const char *title)
{
	if (standalone)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<svg class=\"sp-chart\" data-chart=\"%s\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\"%s role=\"img\" "
		   "aria-label=\"", kind, w, h, w, h,
		standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "");
	svg_escape(f, title);
	fputs("\">\n", f);
	if (standalone) {
		fprintf(f, "<style>\n%s</style>\n", svg_css);
		fputs("<title>", f);
		svg_escape(f, title);
		fputs("</title>\n", f);
	}
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
		   "fill=\"#fff\"/>\n", w, h);
}

void svg_close(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg_text(FILE *f, double x, double y, const char *anchor, const char *cls,
	      const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
	if (anchor && strcmp(anchor, "start") != 0)
		fprintf(f, " text-anchor=\"%s\"", anchor);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputc('>', f);
	svg_escape(f, text);
	fputs("</text>\n", f);
}

void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *cls)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		   "class=\"%s\"/>\n", x1, y1, x2, y2, cls);
}

int svg_ticks(double lo, double hi, int target, double *ret, int max)
{
	double span = hi - lo, step, mag, first;
	int n = 0;

	if (!(span > 0) || !isfinite(span) || target < 1)
		span = fabs(hi) > 0 ? fabs(hi) : 1.0;
	step = span / target;
	mag = pow(10.0, floor(log10(step)));
	if (step / mag >= 5)
		step = 5 * mag;
	else if (step / mag >= 2)
		step = 2 * mag;
	else
		step = mag;
	first = ceil(lo / step - 1e-9) * step;
	for (double v = first; v <= hi + step * 1e-9 && n < max; v += step)
		ret[n++] = fabs(v) < step * 1e-9 ? 0.0 : v;
	return n;
}

void svg_axis_x(FILE *f, double x0, double x1, double y, double v0, double v1,
		double grid_h, bool seconds)
{
	double ticks[16];
	int n = svg_ticks(v0, v1, 8, ticks, 16);
	char buf[48];

	svg_line(f, x0, y, x1, y, "axis");
	for (int i = 0; i < n; i++) {
		double x = v1 > v0 ? x0 + (ticks[i] - v0) / (v1 - v0) * (x1 - x0) : x0;

		if (grid_h > 0)
			svg_line(f, x, y - grid_h, x, y, "grid");
		if (seconds)
			fmt_seconds(buf, sizeof(buf), ticks[i]);
		else
			snprintf(buf, sizeof(buf), "%g", ticks[i]);
		svg_text(f, x, y + 13, "middle", "small", buf);
	}
}

void fmt_seconds(char *buf, size_t size, double s)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = { { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "\xc2\xb5s" }, { 1e-9, "ns" } };
	double a = fabs(s);

	if (!isfinite(s)) {
		snprintf(buf, size, "-");
		return;
	}
	if (a == 0) {
		snprintf(buf, size, "0 s");
		return;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (a >= units[i].scale * 0.9995 || i + 1 == sizeof(units) / sizeof(units[0])) {
			snprintf(buf, size, "%.3g %s", s / units[i].scale, units[i].unit);
			return;
		}
}
