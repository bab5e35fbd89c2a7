/* SPDX-License-Identifier: MIT */
/*
 * The optional groups of a file (/mpi_communicators, /callsites), gathered
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
};

/* Append n communicator rows. Returns 0 or -ENOMEM. */
int sp_groups_add_comms(struct sp_groups *g, const struct sp_comm_row *rows, uint64_t n);
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
