/* SPDX-License-Identifier: MIT */
/*
 * Internal to `scope-profiler plot`: the parsed invocation (cmd-plot.c) and
 * the function that loads the files and writes the charts (plot-write.c).
 */
#ifndef SP_PLOT_H
#define SP_PLOT_H

#include "charts.h"
#include "cli-common.h"

enum {
	K_GANTT = 1, K_FLAME = 2, K_DURATIONS = 4, K_IMBALANCE = 8,
	K_SPEEDUP = 16, K_WEAK = 32,
};

#define PLOT_MAX_LABELS 256

struct plot_run {
	struct cli_common c;
	const char *out;        /* -o DIR, or -o FILE.svg (one_file) */
	const char *cmap;       /* NULL: tab20 */
	const char *x_field;    /* speedup / weak scaling x axis */
	const char *data;       /* NULL, "csv" or "json" */
	const char *labels[PLOT_MAX_LABELS];
	size_t n_labels;
	unsigned metric_set;    /* bit per enum dur_metric */
	unsigned kinds;         /* K_* */
	bool preset;            /* default / all: skip what does not apply */
	bool list;
	bool one_file;          /* -o names the one chart's file, not a directory */
	struct chart_opts o;
	const char *fwd[128];   /* --include/--exclude/--ranks as given (for --data) */
	size_t n_fwd;
};

/** Load the files and write the charts. @return the exit code. */
int plot_run(struct plot_run *p);

#endif /* SP_PLOT_H */
