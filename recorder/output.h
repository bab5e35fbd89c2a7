/* SPDX-License-Identifier: MIT */
/*
 * From snapshot to file: the pieces shared by the single-process write and
 * the MPI merge (which streams other ranks' snapshots through the same
 * writer).
 */
#ifndef SP_OUTPUT_H
#define SP_OUTPUT_H

#include "compiler.h"
#include "metadata.h"
#include "snapshot.h"
#include "writer.h"

/* Run information for the metadata, with finalize_time_ns = now. */
SP_HIDDEN void sp_run_info_init(struct sp_run_info *run, int rank, int size);
/* The optional columns a snapshot needs (SP_COL_* bits). */
SP_HIDDEN unsigned sp_output_columns(const struct sp_snapshot *s);
/* One index row for a snapshot row, with the file's region id and offset. */
SP_HIDDEN void sp_output_row(struct sp_writer_row *out, const struct sp_snap_row *row,
				    uint32_t region, uint32_t rank, uint64_t offset);
/* Write n events of s starting at src to file positions starting at dst. */
SP_HIDDEN int sp_output_events(struct sp_writer *w, unsigned cols,
				      const struct sp_snapshot *s, uint64_t src, uint64_t dst,
				      uint64_t n);
/* Write the thread table rows of s at position first. */
SP_HIDDEN int sp_output_threads(struct sp_writer *w, const struct sp_snapshot *s,
				       uint32_t rank, uint64_t first);
/* Write one process's snapshot as a complete file (serial programs). */
SP_HIDDEN int sp_output_write_single(const char *path, struct sp_snapshot *s,
					    int rank, int size);
/*
 * Take this process's snapshot into *s and write it as a complete file,
 * filling the event times in place in the file when it is uncompressed.
 * *s is valid or zeroed afterwards (free it either way); its start/end are
 * NULL when they were filled in place.
 */
SP_HIDDEN int sp_output_write_local(const char *path, struct sp_snapshot *s, int rank,
					   int size);

#endif /* SP_OUTPUT_H */
