/* SPDX-License-Identifier: MIT */
/*
 * Internal to `scope-profiler report`: the parsed invocation, the loaded
 * files with their per-region statistics, and the functions that write
 * each part of the HTML page (report-*.c).
 */
#ifndef SP_REPORT_H
#define SP_REPORT_H

#include "charts.h"
#include "cli-common.h"

#define REPORT_MAX_LABELS 256

/** Statistics of one selected region of one file. */
struct report_region {
	uint32_t id;
	const char *name;
	struct sp_stats st;
};

struct report_file {
	struct report_region *regs; /* selected regions with their stats, get_regions order */
	size_t n_regs;
	uint64_t calls;             /* sum of calls over the selected regions */
	char chart_notes[1024];     /* aggregation / sampling notes of the charts */
};

struct report {
	struct cli_common c;
	const char *out;            /* -o FILE */
	const char *cmap, *x_field, *title, *sort;
	const char *labels[REPORT_MAX_LABELS];
	size_t n_labels;
	bool no_charts;
	struct chart_opts o;        /* o.sel = c.sel */
	struct chart_file *files;
	struct report_file *rf;
	size_t n;
	struct sp_color_map *map;
	FILE *f;                    /* the page being written */
};

/** Cards and callouts (hot spot, imbalance, tiny calls, notes). */
void report_overview(struct report *rp, size_t i);
/** The sortable region table; rows expand to per-rank statistics. */
int report_region_table(struct report *rp, size_t i);
/** The MPI call-site table (files recorded with call sites only). */
int report_callsites(struct report *rp, size_t i);
/** The call tree (summary rows) of the file. */
int report_call_tree(struct report *rp, size_t i);
/** Every metadata attribute. */
void report_metadata(struct report *rp, size_t i);
/** Gantt, flame, durations and imbalance charts of one file. */
int report_charts(struct report *rp, size_t i);
/** Durations of all files, speedup and weak scaling (several files). */
int report_comparison(struct report *rp);

/** Text with HTML escaping. */
void html_text(FILE *f, const char *s);
/** "1.23 ms" into a static buffer (one use per statement). */
const char *report_sec(double s);

#endif /* SP_REPORT_H */
