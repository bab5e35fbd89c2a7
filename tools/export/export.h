/* SPDX-License-Identifier: MIT */
/*
 * Shared state of `scope-profiler export FORMAT`: parsed options, one entry
 * per input profile (time origin, window), the format table, and the small
 * helpers the format writers share (JSON strings, atomic output files,
 * duration parsing, per-rank event selection).
 */
#ifndef SP_EXPORT_H
#define SP_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli-common.h"

struct export_ctx;

/* One input profile. */
struct export_file {
	const char *path;
	char *label;           /* de-duplicated file stem */
	struct sp_reader *r;
	int64_t origin_ns;     /* first region entry of the whole file */
	int64_t span_ns;       /* last end - origin (0 without events) */
	int64_t lo_ns, hi_ns;  /* absolute time window (clipped to the file) */
};

/* One export format. */
struct export_format {
	const char *name;
	const char *suffix;    /* output name suffix; NULL: writes a directory */
	const char *help;
	/* Per-input formats: write one profile to out. 0 or EXIT_USAGE. */
	int (*write_one)(struct export_ctx *x, struct export_file *f, FILE *out);
	/* Directory formats: everything at once. 0 or EXIT_USAGE. */
	int (*write_all)(struct export_ctx *x);
	/* Output bytes per exported call (an estimate, for the size
	 * warning), plus its region name when call_names; 0: not written
	 * per call. */
	unsigned call_bytes;
	bool call_names;
};

/* Options of plot-data. */
struct plot_data_opts {
	bool json;             /* --format json (default csv) */
	const char *plots;     /* comma list, NULL = default set */
	const char *metrics;   /* comma list, NULL = "total" */
	const char *imbalance_metric; /* NULL = "total" */
	const char *x_field;   /* NULL = "num_ranks" */
	const char *cmap;      /* NULL = tab20 */
};

struct export_ctx {
	struct cli_common c;
	const struct export_format *format;
	const char *output;    /* -o PATH */
	int64_t min_duration_ns;
	bool has_start, has_end;
	int64_t start_ns, end_ns; /* relative to each file's origin */
	bool merge_ranks;      /* folded: one stack set for all ranks */
	struct plot_data_opts pd;
	char **filter_args;    /* "--include=RE"... as given (for region-statistics) */
	size_t n_filter_args;
	struct export_file *files;
	size_t n_files;
};

/* Format writers (export-*.c). */
int export_chrome_write(struct export_ctx *x, struct export_file *f, FILE *out);
int export_speedscope_write(struct export_ctx *x, struct export_file *f,
			    FILE *out);
int export_folded_write(struct export_ctx *x, struct export_file *f, FILE *out);
int export_json_write(struct export_ctx *x, struct export_file *f, FILE *out);
int export_plot_data_write(struct export_ctx *x);

/*
 * Run `export FORMAT ...` for the formats of this file set (argv[0] is the
 * format name). Returns the exit code, or -1 when the format is not one of
 * them (the caller then tries its own formats).
 */
int export_formats_run(int argc, char **argv);
/* Comma-separated names of those formats (for messages). */
const char *export_formats_names(void);

/* ---- helpers (export-common.c) ---------------------------------------- */

/* JSON string with RFC 8259 escaping; invalid UTF-8 bytes become U+FFFD. */
void ex_json_string(FILE *out, const char *s);
/* Shortest round-trip double, "null" when not finite. */
void ex_json_double(FILE *out, double v);
/* A CSV field (quoted when it holds , " or a newline). */
void ex_csv_string(FILE *out, const char *s);

/* "250ns", "10us", "1.5ms", "2s", "3" (seconds). 0 or -EINVAL. */
/* export --help, the same for every FORMAT --help (cmd-export.c). */
extern const char export_help[];

int ex_parse_duration(const char *s, int64_t *ret_ns);

/*
 * Open an output file: "-" is stdout; otherwise a temporary sibling that
 * ex_close_output renames into place when everything was written.
 */
struct ex_output {
	FILE *f;
	char *path, *tmp;
};
int ex_open_output(struct export_ctx *x, const char *path, struct ex_output *o);
/* Close (and publish when ok). Returns 0 or EXIT_USAGE (reported). */
int ex_close_output(struct export_ctx *x, struct ex_output *o, bool ok);
/* mkdir -p. 0 or EXIT_USAGE (reported). */
int ex_make_dir(struct export_ctx *x, const char *dir);

/* Does call [s, e] pass --min-duration and overlap the window? */
bool ex_keep(const struct export_ctx *x, const struct export_file *f,
	     int64_t s, int64_t e);
/* Clip to the window. */
void ex_clip(const struct export_file *f, int64_t *s, int64_t *e);

/* Does the file have a lane (thread_ids) column? */
bool ex_has_lanes(const struct export_file *f);
/* Display name of lane (thread) `lane` of `rank` from the thread table. */
const char *ex_thread_name(const struct export_file *f, uint32_t rank,
			   int64_t lane);

/*
 * Events of one rank in the selected regions that pass ex_keep, ordered
 * by lane, start ascending, end descending, then region order.
 * @return count (>= 0) and *ret_idx (malloc'ed, caller frees), or -ENOMEM.
 */
long ex_rank_events(const struct export_ctx *x, const struct export_file *f,
		    uint32_t rank, uint64_t **ret_idx);

/*
 * Estimated output bytes of file f in x's format: its exported calls (the
 * selected regions and ranks, kept by --min-duration and the window) x
 * call_bytes (+ the name length with call_names). 0 for formats not
 * written per call.
 */
uint64_t ex_estimate_bytes(const struct export_ctx *x, const struct export_file *f);

/* Report a reader error for file f; returns EXIT_USAGE. */
int ex_reader_error(struct export_ctx *x, const struct export_file *f, int rc);

#endif /* SP_EXPORT_H */
