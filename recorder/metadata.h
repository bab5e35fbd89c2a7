/* SPDX-License-Identifier: MIT */
/*
 * Run metadata: typed key/value pairs written as /metadata attributes.
 */
#ifndef SP_METADATA_H
#define SP_METADATA_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

enum sp_run_meta_type {
	SP_RUN_META_INT,
	SP_RUN_META_DOUBLE,
	SP_RUN_META_STR,
	SP_RUN_META_STRLIST,
};

struct sp_run_meta_item {
	char *key;
	enum sp_run_meta_type type;
	int64_t i;
	double d;
	char *s;
	char **list;
	size_t nlist;
};

struct sp_run_meta {
	size_t n, cap;
	struct sp_run_meta_item *items;
};

/* Add or replace a key. Return 0 or -ENOMEM. Strings are copied. */
SP_HIDDEN int sp_meta_set_int(struct sp_run_meta *m, const char *key, int64_t v);
SP_HIDDEN int sp_meta_set_double(struct sp_run_meta *m, const char *key, double v);
SP_HIDDEN int sp_meta_set_str(struct sp_run_meta *m, const char *key, const char *v);
SP_HIDDEN int sp_meta_set_strlist(struct sp_run_meta *m, const char *key, const char *const *v,
				       size_t n);
SP_HIDDEN void sp_meta_free(struct sp_run_meta *m);

/* The keys that describe this process and run (host, CPU, environment,
 * times, sizes): everything of reference §1.2 that a native run has. */
struct sp_run_info {
	int64_t start_time_ns;
	int64_t finalize_time_ns;
	int64_t start_realtime_s;   /* UTC seconds at start, for `timestamp` */
	int mpi_size;
	int mpi_rank;
	const char *label;          /* NULL: none */
	int64_t finalize_spent_ns;  /* time from finalize start to the write */
	double event_cost_ns;       /* measured cost of one recorded call, <0 unknown */
	double call_cost_ns;        /* a timed function call, measured during the run, <0 unknown */
	double count_cost_ns;       /* a counted-only call over empty hooks, <0 unknown */
	double sample_bias_ns;      /* taken off each sampled call's duration, <0 unknown */
	int64_t alloc_ns;           /* allocating and faulting in event memory */
	int64_t startup_ns;         /* the launcher's start to the end of the constructor, <0 unknown */
	int64_t startup_cpu_ns;     /* the same in CPU time: the launcher's and the constructor's */
	int64_t concurrency;        /* MPI: ranks that could run at once (per node the fewer of its
				     * ranks and its CPUs, summed); 0 unknown (not written) */
	/* Auto-throttle settings (throttle_calls 0: off; then none is written). */
	int64_t throttle_calls, throttle_mean_ns, throttle_sample;
	int64_t throttle_early_calls; /* the early decision's calls, 0 none */
	int64_t throttle_early_mean_ns; /* ... and its bound on the mean */
	const char *throttle_timing; /* sampled | exact | estimate */
};
/* Called once at recording start, before the program can chdir(): its
 * command line and working directory, and the process tree it belongs to
 * (NULL or "": none), stored by every later sp_meta_collect() (keys
 * command_line, working_directory, process_tree). */
SP_HIDDEN void sp_meta_capture_process(const char *tree);
SP_HIDDEN int sp_meta_collect(struct sp_run_meta *m, const struct sp_run_info *run);

#endif /* SP_METADATA_H */
