/* SPDX-License-Identifier: MIT */
/*
 * Time per source location, shared by `scope-profiler line-profile` and the
 * HTML report: MPI calls grouped by the file:line of their call site (the
 * innermost frame of /callsites) and MPI function, then the manual and
 * function regions that carry a source file and line.
 */
#ifndef SP_LINE_PROFILE_H
#define SP_LINE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scope-profiler-reader.h"

/* One call path (a /callsites row) that contributes to an MPI row. */
struct lp_path {
	int64_t site;            /* id in /callsites */
	uint64_t calls;
};

struct lp_row {
	bool mpi;                /* an MPI call site (else a region with a source) */
	const char *file;        /* "" unknown */
	int64_t line;            /* -1 unknown */
	const char *function;    /* source function (regions: the region name) */
	const char *region;      /* MPI function / region name */
	uint32_t region_id;
	uint64_t calls;
	int64_t total_ns;
	double max_s;            /* longest single call */
	bool has_bytes;
	int64_t bytes;           /* summed mpi_bytes >= 0 */
	double percent_mpi;      /* of all MPI time of the selected ranks; NAN for regions */
	unsigned num_ranks;      /* ranks with calls here */
	double cov;              /* std / mean of the per-rank totals over those ranks */
	uint32_t slowest_rank;   /* largest per-rank total */
	int64_t slowest_total_ns;
	struct lp_path *paths;   /* MPI rows: by calls, descending */
	size_t n_paths;
};

struct lp_result {
	struct lp_row *rows;     /* MPI rows, then region rows; each part by total desc */
	size_t n_mpi, n_regions;
	int64_t mpi_total_ns;    /* all MPI calls of the selected ranks */
	struct sp_callsites *sites; /* NULL: no call-site table in the file */
	bool has_site_column;
};

struct lp_filter {
	const struct sp_selection *ranks;     /* rank list and --include/--exclude (NULL: all) */
	const struct sp_selection *regions;   /* on region / MPI function names */
	const struct sp_selection *functions; /* on source function names */
	size_t top;                           /* rows per part, 0 = all */
};

/* Collect the rows. Returns 0, -ENOMEM, or a reader error (call-site
 * table present but unreadable; see sp_reader_last_error). */
int lp_collect(struct sp_reader *r, const struct lp_filter *f, struct lp_result *out);
void lp_free(struct lp_result *res);

/* Source lines read once per file. */
struct lp_sources;
struct lp_sources *lp_sources_new(void);
void lp_sources_free(struct lp_sources *s);
/* The line's text without leading/trailing blanks, NULL if the file cannot
 * be read or has no such line. Owned by s. */
const char *lp_source_line(struct lp_sources *s, const char *file, int64_t line);

/* Add a Python re.search pattern to sel (an anchored match of ".*?(?:RE)").
 * Returns 0 or a negative errno (see sp_reader_last_error). */
int lp_add_search(struct sp_selection *sel, const char *pattern);

#endif /* SP_LINE_PROFILE_H */
