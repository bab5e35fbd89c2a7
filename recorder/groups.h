/* SPDX-License-Identifier: MIT */
/*
 * The optional groups of a file (/mpi_communicators, /callsites,
 * /clock_sync), gathered
 * from any input (this process, other ranks, other files) and written
 * through the writer before the commit. To add a group: a member of
 * struct sp_groups, its reading in sp_groups_read_file and its writing in
 * sp_groups_write (groups.c); every way of writing a file then keeps it.
 * Hidden like all of the recorder (built with -fvisibility=hidden).
 */
#ifndef SP_GROUPS_H
#define SP_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "names.h"
#include "writer.h"

/* One row of /mpi_communicators. */
struct sp_comm_row {
	uint32_t rank;
	int32_t id, size, remote_size, leader;
};

/*
 * One row of /clock_sync: a rank's clock against rank 0's, measured at
 * MPI_Init and at MPI_Finalize (preload/mpi-clock.c). Times are rank 0's
 * clock, offsets this rank's clock minus rank 0's, all ns; an error is a
 * bound on |measured - true|, -1 when not measured.
 */
struct sp_clock_row {
	uint32_t rank;
	int32_t applied;          /* 1: the rank's timestamps were mapped */
	int32_t same_boot;        /* 1: same boot (and time namespace) as rank 0 */
	int64_t init_time, init_offset, init_error;
	int64_t final_time, final_offset, final_error;
	double drift_ppm;         /* d offset / d rank 0's time, x 1e6 */
	double drift_error_ppm;   /* bound on its error, -1 unknown */
	int64_t error;            /* bound on a mapped time in [init_time, final_time], -1 none */
};

/* The attributes of /clock_sync. */
struct sp_clock_attrs {
	int64_t pingpongs;        /* per rank and measurement */
	int64_t test_skew;        /* 1: SCOPE_PROFILER_TEST_CLOCK_SKEW was set */
	int64_t skew_offset_ns, skew_drift_ppb, skew_origin_ns;
};

/*
 * Call sites are unified by key: the frames, innermost first, each
 * "function\tfile\tline", joined by '\n'. A site's id (its row of
 * /callsites, the value in events/callsite_ids) is its key's id.
 */
#define SP_SITE_FIELD_SEP '\t'
#define SP_SITE_FRAME_SEP '\n'

struct sp_groups {
	bool comms_present;      /* write /mpi_communicators (MPI runs, even empty) */
	uint64_t ncomms, capcomms;
	struct sp_comm_row *comms;
	bool sites_present;      /* write /callsites */
	int64_t sites_depth;     /* frames captured per site */
	struct sp_names sites;   /* keys, id order */
	bool clock_present;      /* write /clock_sync */
	struct sp_clock_attrs clock_attrs;
	uint64_t nclock, capclock;
	struct sp_clock_row *clock;
};

/* Append n communicator rows. Returns 0 or -ENOMEM. */
int sp_groups_add_comms(struct sp_groups *g, const struct sp_comm_row *rows, uint64_t n);
/* Append n /clock_sync rows; attrs of the first call that gives them. */
int sp_groups_add_clock(struct sp_groups *g, const struct sp_clock_row *rows, uint64_t n,
			const struct sp_clock_attrs *attrs);
/*
 * Add the groups of the HDF5 file at path. *ret_site_map (malloc'd, NULL
 * when the file has no /callsites) maps the file's call-site ids to g's,
 * for its events/callsite_ids; *ret_nsites is its length. Returns 0,
 * -ENOMEM, or -EBADMSG for a group that does not hold together.
 */
int sp_groups_read_file(struct sp_groups *g, const char *path, uint32_t **ret_site_map,
			uint32_t *ret_nsites);
/* Write the present groups. Returns 0, -EIO or -ENOMEM. */
int sp_groups_write(struct sp_writer *w, const struct sp_groups *g);
void sp_groups_free(struct sp_groups *g);

#endif /* SP_GROUPS_H */
