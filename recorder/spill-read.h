/* SPDX-License-Identifier: MIT */
/*
 * Reading a spill file back (sp-spill.h): at finalize by the recorder, and
 * by `scope-profiler recover`. Needs nothing of the recording runtime.
 */
#ifndef SP_SPILL_READ_H
#define SP_SPILL_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "snapshot.h"
#include "sp-spill.h"

/* Not a spill file / a spill version we cannot read. */
#define SP_SPILL_ENOTSPILL (-EBADMSG)
#define SP_SPILL_EVERSION (-EPROTONOSUPPORT)

/* An EVENTS record's events where they lie in the file (indexed read). */
struct sp_spill_span {
	uint64_t off;                 /* file offset of its first event */
	uint64_t first_seq;
	uint64_t n;
};

struct sp_spill_tdata {
	uint32_t index;
	bool has_info;
	struct sp_spill_thread info;
	uint64_t n, cap;              /* events numbered 0..n-1 */
	struct sp_spill_event *ev;    /* region SP_SPILL_NO_REGION where none was read;
				       * NULL in an indexed read */
	/* Indexed read: the EVENTS records in file order (a later one wins
	 * where two hold the same events) and the CLOSE entries sorted by seq
	 * (file order among equal seqs), applied by sp_spill_read_events. */
	struct sp_spill_span *spans;
	uint64_t nspans, spans_cap;
	struct sp_spill_close *closes;
	uint64_t ncloses;
};

struct sp_spill_rdata {
	bool present;
	uint32_t kind;
	uint64_t addr;
	int32_t module;
	char *name;                   /* NULL for a function region */
	uint64_t dropped;
};

struct sp_spill_mdata {
	int32_t index;
	uint64_t bias;
	char *path;
	uint32_t build_id_bytes;      /* 0: none recorded (a version-1 writer, or no note) */
	uint8_t build_id[SP_SPILL_BUILD_ID_MAX];
};

struct sp_spill_data {
	struct sp_spill_header hdr;
	int32_t rank, size;           /* -1, 0 when the process was not an MPI rank */
	uint32_t nthreads;
	struct sp_spill_tdata *threads;
	uint32_t nregions;            /* max id + 1 */
	struct sp_spill_rdata *regions;
	uint32_t nmodules;
	struct sp_spill_mdata *modules;
	bool partial;                 /* a trailer: stopped by trailer.signo */
	struct sp_spill_trailer trailer;
	int64_t last_tick, last_ns;   /* latest (tick, ns) pair in the file */
	uint64_t skipped_bytes;       /* holes and damaged records */
	uint64_t dropped;             /* trailer's total, else the sum of DROPS */
	uint64_t file_bytes;          /* the file's size: bounds every table read from it */
	bool indexed;                 /* sp_spill_index: threads hold spans, not ev */
	char tree[SP_SPILL_TREE_BYTES]; /* the process tree, "" when the file has none */
};

/* Read and check a whole spill file. Returns 0, -errno,
 * SP_SPILL_ENOTSPILL or SP_SPILL_EVERSION. */
SP_HIDDEN int sp_spill_read(const char *path, struct sp_spill_data *ret_data);
SP_HIDDEN void sp_spill_data_free(struct sp_spill_data *d);

/*
 * The same pass over the open file fd without holding its events: each
 * thread gets an index of where they lie (spans, closes) instead of ev, and
 * sp_spill_read_events reads any range of them later in bounded pieces.
 * Memory is the index: a few words per EVENTS record and CLOSE entry.
 * Returns as sp_spill_read.
 */
SP_HIDDEN int sp_spill_index(int fd, struct sp_spill_data *ret_data);
/* Events [first, first+n) of an indexed thread into out, exactly as
 * sp_spill_read would hold them (CLOSE records applied; region
 * SP_SPILL_NO_REGION where the file has none). Returns 0 or -errno. */
SP_HIDDEN int sp_spill_read_events(int fd, const struct sp_spill_tdata *t, uint64_t first,
				   size_t n, struct sp_spill_event *out);

/* Names for function regions: called with the region's module (NULL when
 * the file names none) and its address; returns a malloc'd name, or NULL
 * for the default "module+0xoffset" ("0x<addr>" without a module). It may
 * set *ret_file (owned by ctx, alive until the snapshot is freed) and
 * *ret_line, the function's definition. */
typedef char *(*sp_spill_namer)(const struct sp_spill_mdata *module, uint64_t addr, void *ctx,
				const char **ret_file, int64_t *ret_line);

/*
 * The complete calls of a spill file as a snapshot (ns, rows per name, in
 * start order). Calls still open are dropped and counted in *ret_unclosed,
 * unless the file has a trailer: then they were closed by the handler.
 * Returns 0 or -ENOMEM.
 */
SP_HIDDEN int sp_spill_to_snapshot(const struct sp_spill_data *d, sp_spill_namer namer,
					 void *ctx, struct sp_snapshot *ret_snap,
					 uint64_t *ret_unclosed);
/* Tick -> ns of a spill file: the line through the header's pair and the
 * latest pair. */
SP_HIDDEN int64_t sp_spill_ns(const struct sp_spill_data *d, int64_t tick);

/* Whether the spill file open at fd is of the process tree tree (a
 * string: its first record, SP_SPILL_TREE, holds the same). Reads the
 * header and that record only; anything else is not. The predicate of
 * sp_output_tree_files (output-path.h). */
SP_HIDDEN bool sp_spill_fd_of_tree(int fd, void *tree);
/* Whether the spill file open at fd has a REGION record (its process
 * recorded something), reading record headers up to the first one; true
 * too when it cannot tell (not a spill file of this version, or 1 MiB of
 * damage before any). A wrapper's spill has none and is small. */
SP_HIDDEN bool sp_spill_fd_has_region(int fd);

#endif /* SP_SPILL_READ_H */
