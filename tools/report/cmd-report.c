/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler report FILES... -o report.html: one self-contained HTML
 * page (inline CSS, SVG and JS; a Content-Security-Policy forbids any
 * network access) with, per file, an overview, the sortable region table,
 * the call tree, the charts and the metadata, plus speedup charts when
 * several files are given and a search box that filters tables and charts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-progress.h"
#include "commands.h"
#include "report.h"
#include "sp-config.h"
#include "svg.h"

extern const char sp_report_css[];
extern const char sp_report_js[];

enum {
	OPT_OUT = OPT_FIRST_COMMAND_SPECIFIC, OPT_CMAP, OPT_X, OPT_LABEL, OPT_TITLE,
	OPT_SORT, OPT_NO_CHARTS, OPT_WIDTH, OPT_MAX_BARS,
};

/* The --help text, in the CLI's help format (man pages and completion are
 * generated from it): usage line, description, options, notes. */
static const char usage[] =
	"usage: scope-profiler report [options] FILE...\n"
	"\n"
	"Write one self-contained HTML page (no network access) with, per file, an\n"
	"overview (MPI share per rank, hot spot, imbalance), the sortable region\n"
	"table, the call tree, a zoomable Gantt chart, flame, duration and imbalance\n"
	"charts and the metadata; with several files, a comparison and scaling charts.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE     page to write, atomically (default: report.html)\n"
	"  --sort KEY            initial order of the table and tree: total, start,\n"
	"                        calls, avg, min, max, first, last, std, p50, p95,\n"
	"                        p99, imbalance, exclusive, name (default: total)\n"
	"  --x FIELD             x axis of the scaling charts: num_ranks,\n"
	"                        omp_num_threads, total_cores or a metadata key\n"
	"                        (default: num_ranks)\n"
	"  --label L             display name of the next file, repeatable (default:\n"
	"                        metadata label, else the file name)\n"
	"  --title T             page title (default: scope-profiler report)\n"
	"  --cmap NAME           palette: tab20, tab10, tab20b, tab20c, Set1, Set2, Set3,\n"
	"                        Pastel1, Pastel2, Dark2, Accent, Paired (default: tab20)\n"
	"  --width PX            chart width in pixels, 100..20000 (default: 900)\n"
	"  --max-bars N          timeline bars before per-pixel aggregation\n"
	"                        (default: 20000)\n"
	"  --no-charts           tables only\n"
	"  -i, --include RE      only regions whose name matches RE (repeatable)\n"
	"  -e, --exclude RE      leave out regions whose name matches RE (repeatable)\n"
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all)\n"
	"  --json                print {output, files: [...]} instead of \"wrote FILE\"\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"Example: scope-profiler report run.h5 -o run.html\n"
	"See docs/REPORT.md. On a terminal, progress goes to stderr after one second.\n";

static const char *const sort_keys[] = {
	"start", "total", "calls", "avg", "min", "max", "first", "last", "std",
	"p50", "p95", "p99", "imbalance", "name", "exclusive", NULL,
};

static int own_option(struct report *rp, int opt, const char *arg)
{
	char *end;

	switch (opt) {
	case OPT_OUT: rp->out = arg; return 0;
	case OPT_CMAP: rp->cmap = arg; return 0;
	case OPT_X: rp->x_field = arg; return 0;
	case OPT_TITLE: rp->title = arg; return 0;
	case OPT_NO_CHARTS: rp->no_charts = true; return 0;
	case OPT_LABEL:
		if (rp->n_labels < REPORT_MAX_LABELS)
			rp->labels[rp->n_labels++] = arg;
		return 0;
	case OPT_SORT:
		for (size_t i = 0; sort_keys[i]; i++)
			if (strcmp(sort_keys[i], arg) == 0) {
				rp->sort = arg;
				return 0;
			}
		return cli_usage_error(&rp->c, "unknown sort key '%s'", arg), -1;
	case OPT_WIDTH:
		rp->o.width = strtod(arg, &end);
		if (*end || rp->o.width < 100 || rp->o.width > 20000)
			return cli_usage_error(&rp->c, "--width must be 100..20000 pixels"), -1;
		return 0;
	case OPT_MAX_BARS:
		rp->o.max_bars = strtoull(arg, &end, 10);
		if (*end || !*arg)
			return cli_usage_error(&rp->c, "--max-bars needs a number"), -1;
		return 0;
	}
	return cli_usage_error(&rp->c, "invalid option"), -1;
}

static int parse(struct report *rp, int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "output", required_argument, NULL, OPT_OUT },
		{ "cmap", required_argument, NULL, OPT_CMAP },
		{ "x", required_argument, NULL, OPT_X },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "no-charts", no_argument, NULL, OPT_NO_CHARTS },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "max-bars", required_argument, NULL, OPT_MAX_BARS },
		{ 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:i:e:r:", options, NULL)) != -1) {
		int h;

		opt = opt == 'h' ? OPT_HELP : opt == 'o' ? OPT_OUT : opt == 'i' ? OPT_INCLUDE
		    : opt == 'e' ? OPT_EXCLUDE : opt == 'r' ? OPT_RANKS : opt;
		h = cli_common_option(&rp->c, opt, optarg);
		if (h < 0 || (h == 0 && own_option(rp, opt, optarg) < 0))
			return -1;
	}
	if (rp->c.help)
		return 0;
	if (cli_collect_files(&rp->c, argc, argv, optind) < 0 || rp->c.n_files == 0)
		return cli_usage_error(&rp->c, "no profile file given"), -1;
	if (rp->n_labels > rp->c.n_files)
		return cli_usage_error(&rp->c, "%zu --label for %zu file(s)", rp->n_labels,
				       rp->c.n_files), -1;
	return 0;
}

/* Statistics of the selected regions of file i. 0 or -ENOMEM. */
static int load_stats(struct report *rp, size_t i)
{
	struct report_file *rf = &rp->rf[i];
	uint32_t *ids = NULL;
	int n = sp_reader_regions(rp->files[i].r, rp->c.sel, &ids);

	if (n < 0)
		return n;
	rf->regs = calloc((size_t)n + 1, sizeof(*rf->regs));
	if (!rf->regs) {
		free(ids);
		return -ENOMEM;
	}
	for (int k = 0; k < n; k++) {
		struct report_region *g = &rf->regs[rf->n_regs];

		g->id = ids[k];
		g->name = sp_reader_region_name(rp->files[i].r, ids[k]);
		if (sp_reader_region_stats(rp->files[i].r, ids[k], rp->c.sel, &g->st) < 0) {
			free(ids);
			return -ENOMEM;
		}
		rf->calls += g->st.num_calls;
		rf->n_regs++;
	}
	free(ids);
	return 0;
}

static int load(struct report *rp, const struct sp_palette *pal)
{
	int rc;

	rp->files = calloc(rp->c.n_files, sizeof(*rp->files));
	rp->rf = calloc(rp->c.n_files, sizeof(*rp->rf));
	if (!rp->files || !rp->rf)
		return cli_error(&rp->c, "out of memory"), EXIT_USAGE;
	for (; rp->n < rp->c.n_files; rp->n++)
		if ((rc = cli_open(&rp->c, rp->c.files[rp->n], &rp->files[rp->n].r)) != 0)
			return rc;
	if (chart_files_init(rp->files, rp->n, rp->c.sel, pal, &rp->map) < 0)
		return cli_error(&rp->c, "out of memory"), EXIT_USAGE;
	for (size_t i = 0; i < rp->n_labels; i++) {
		free(rp->files[i].label);
		rp->files[i].label = strdup(rp->labels[i]);
		if (!rp->files[i].label)
			return cli_error(&rp->c, "out of memory"), EXIT_USAGE;
	}
	for (size_t i = 0; i < rp->n; i++)
		if (load_stats(rp, i) < 0) {
			cli_error(&rp->c, "%s: %s", rp->c.files[i], sp_reader_last_error());
			return EXIT_USAGE;
		}
	return 0;
}

static void page_head(struct report *rp)
{
	FILE *f = rp->f;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"scope-profiler " SP_VERSION "\">\n<title>", f);
	if (rp->title) {
		html_text(f, rp->title);
	} else {
		fputs("scope-profiler report: ", f);
		for (size_t i = 0; i < rp->n; i++) {
			fputs(i ? ", " : "", f);
			html_text(f, rp->files[i].label);
		}
	}
	fprintf(f, "</title>\n<style>\n%s\n%s</style>\n</head>\n<body>\n<header>\n<h1>", sp_report_css,
		svg_css);
	html_text(f, rp->title ? rp->title : "scope-profiler report");
	fprintf(f, "</h1>\n<span class=\"sub\">%zu file%s, durations in seconds</span>\n",
		rp->n, rp->n == 1 ? "" : "s");
	fputs("<input id=\"search\" type=\"search\" autocomplete=\"off\" "
	      "placeholder=\"Filter regions: solve, ^mpi_ (comma-separated)\" "
	      "aria-label=\"Filter regions\">\n<span id=\"search-status\"></span>\n<nav>", f);
	for (size_t i = 0; i < rp->n; i++) {
		fprintf(f, "<a href=\"#run-%zu\">", i);
		html_text(f, rp->files[i].label);
		fputs("</a>", f);
	}
	if (rp->n > 1)
		fputs("<a href=\"#comparison\">comparison</a>", f);
	fputs("</nav>\n</header>\n<main>\n", f);
}

static int page_file(struct report *rp, size_t i)
{
	FILE *f = rp->f;
	char *charts = NULL;
	size_t charts_len = 0;
	int rc = 0;

	fprintf(f, "<section class=\"run\" id=\"run-%zu\" data-file=\"%zu\">\n<h2>", i, i);
	html_text(f, rp->files[i].label);
	fputs("<small>", f);
	html_text(f, sp_reader_path(rp->files[i].r));
	fputs("</small></h2>\n", f);
	/* Charts first, into memory: the overview reports their aggregation notes. */
	if (!rp->no_charts) {
		rp->f = open_memstream(&charts, &charts_len);
		if (!rp->f) {
			rp->f = f;
			return cli_error(&rp->c, "out of memory"), EXIT_USAGE;
		}
		rc = report_charts(rp, i);
		fclose(rp->f);
		rp->f = f;
		if (rc != 0) {
			free(charts);
			return rc;
		}
	}
	report_overview(rp, i);
	rc = report_region_table(rp, i);
	if (rc == 0)
		rc = report_callsites(rp, i);
	if (rc == 0)
		rc = report_call_tree(rp, i);
	if (rc == 0 && charts) {
		fputs("<h3>Charts</h3>\n", f);
		fwrite(charts, 1, charts_len, f);
	}
	free(charts);
	if (rc == 0) {
		report_metadata(rp, i);
		fputs("</section>\n", f);
	}
	return rc;
}

static void page_tail(struct report *rp)
{
	fprintf(rp->f, "</main>\n<footer>Written by scope-profiler %s. Self-contained: no "
		       "network access. Search: comma-separated terms, case-insensitive "
		       "substring, ^ anchors at the start of the region name.</footer>\n"
		       "<div id=\"tip\" hidden></div>\n<script>\n%s</script>\n</body>\n</html>\n",
		SP_VERSION, sp_report_js);
}

/* Write the page to a temporary sibling of the output, then rename it. */
static int write_page(struct report *rp)
{
	char *tmp = NULL;
	int rc = 0;

	if (asprintf(&tmp, "%s.tmp", rp->out) < 0)
		return cli_error(&rp->c, "out of memory"), EXIT_USAGE;
	rp->f = cli_output_fopen(rp->out, &tmp);
	if (!rp->f) {
		cli_error(&rp->c, "%s: cannot write: %s", rp->out, strerror(errno));
		free(tmp);
		return EXIT_USAGE;
	}
	page_head(rp);
	for (size_t i = 0; i < rp->n && rc == 0; i++)
		rc = page_file(rp, i);
	if (rc == 0 && rp->n > 1 && !rp->no_charts)
		rc = report_comparison(rp);
	if (rc == 0)
		page_tail(rp);
	if (ferror(rp->f) && rc == 0) {
		cli_error(&rp->c, "%s: write failed", rp->out);
		rc = EXIT_USAGE;
	}
	if (fclose(rp->f) != 0 && rc == 0) {
		cli_error(&rp->c, "%s: write failed: %s", rp->out, strerror(errno));
		rc = EXIT_USAGE;
	}
	rp->f = NULL;
	if (rc == 0 && cli_output_rename(tmp, rp->out) != 0) {
		cli_error(&rp->c, "%s: cannot write: %s", rp->out, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc != 0)
		cli_output_discard(tmp);
	free(tmp);
	return rc;
}

static void print_result(struct report *rp)
{
	struct json_writer w;

	if (!rp->c.json) {
		printf("wrote %s\n", rp->out);
		return;
	}
	jw_init(&w, stdout, true);
	jw_begin_object(&w);
	jw_key(&w, "output");
	jw_string(&w, rp->out);
	jw_key(&w, "files");
	jw_begin_array(&w);
	for (size_t i = 0; i < rp->n; i++) {
		jw_begin_object(&w);
		jw_key(&w, "file");
		jw_string(&w, sp_reader_path(rp->files[i].r));
		jw_key(&w, "label");
		jw_string(&w, rp->files[i].label);
		jw_key(&w, "regions");
		jw_int(&w, (long long)rp->rf[i].n_regs);
		jw_key(&w, "notes");
		jw_string(&w, rp->rf[i].chart_notes);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	jw_finish(&w);
}

static void cleanup(struct report *rp)
{
	for (size_t i = 0; rp->rf && i < rp->n; i++)
		free(rp->rf[i].regs);
	for (size_t i = 0; rp->files && i < rp->n; i++)
		sp_reader_destroy(rp->files[i].r);
	if (rp->files)
		chart_files_fini(rp->files, rp->n, rp->map);
	free(rp->files);
	free(rp->rf);
	cli_common_fini(&rp->c);
}

int cmd_report(int argc, char **argv)
{
	const struct sp_palette *pal;
	struct cli_progress *progress;
	char what[4096];
	struct report rp;
	int rc = EXIT_USAGE;

	memset(&rp, 0, sizeof(rp));
	chart_opts_default(&rp.o);
	rp.out = "report.html";
	rp.x_field = "num_ranks";
	rp.sort = "total";
	if (cli_common_init(&rp.c, "report", usage) < 0)
		return EXIT_USAGE;
	rp.o.sel = rp.c.sel;
	if (parse(&rp, argc, argv) < 0)
		goto out;
	if (rp.c.help) {
		fputs(usage, stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (sp_palette_find(rp.cmap, &pal) < 0) {
		rc = cli_usage_error(&rp.c, "unknown colormap '%s' (choose from %s)", rp.cmap,
				     sp_palette_names());
		goto out;
	}
	snprintf(what, sizeof(what), "report: writing %s", rp.out);
	progress = cli_progress_begin(what, 0);
	rc = load(&rp, pal);
	if (rc == 0)
		rc = write_page(&rp);
	cli_progress_stop(progress);
	if (rc == 0)
		print_result(&rp);
out:
	cleanup(&rp);
	return rc;
}
