/* SPDX-License-Identifier: MIT */
/*
 * The raw spill format, declared once: what a profiled process appends to
 * its spill file with write(2)/pwrite(2) (when its buffers reach the memory
 * cap, and from the signal handler), and what `scope-profiler recover`
 * reads. docs/RESILIENCE.md describes it; change the two together. Only
 * fixed-size little-endian records of plain integers: no allocation is
 * needed to write one, so the signal handler can.
 */
#ifndef SP_SPILL_H
#define SP_SPILL_H

#include <stdint.h>

#define SP_SPILL_MAGIC "SPSPILL"           /* 8 bytes with the NUL */
#define SP_SPILL_VERSION 1
/* Spill file of a process: <output>.spill.pid<PID>, renamed to
 * <output>.spill.rank<NNNNN> when the process becomes an MPI rank. */
#define SP_SPILL_SUFFIX ".spill."

/* File header, written once at offset 0 when recording starts. */
struct sp_spill_header {
	char magic[8];          /* SP_SPILL_MAGIC */
	uint32_t version;       /* SP_SPILL_VERSION */
	uint32_t header_bytes;  /* sizeof(struct sp_spill_header) */
	int64_t pid;
	int32_t rank;           /* -1 until a RANK record says otherwise */
	int32_t clock_tsc;      /* 1: ticks are TSC cycles, 0: CLOCK_MONOTONIC ns */
	int64_t tick0, ns0;     /* reference (tick, CLOCK_MONOTONIC ns) pair at start */
	int64_t start_ns;       /* CLOCK_MONOTONIC ns when recording started */
	int64_t start_realtime_s;
};

/* Every record starts with this 16-byte header and is padded to 8 bytes.
 * Writers reserve their byte range with one atomic add and pwrite it, so a
 * process killed mid-write can leave a hole of zeros: a reader skips 8
 * bytes at a time until the next valid record magic. */
#define SP_SPILL_REC_MAGIC 0x52505353u     /* "SSPR" */
struct sp_spill_rec {
	uint32_t magic;         /* SP_SPILL_REC_MAGIC */
	uint32_t type;          /* enum sp_spill_type */
	uint32_t bytes;         /* payload bytes after this header (unpadded) */
	uint32_t thread;        /* thread index, or 0 */
};

enum sp_spill_type {
	/* payload: struct sp_spill_region + name bytes (no NUL). Written before
	 * the first EVENTS record that refers to the region. A function region
	 * has no name yet: addr and a module (MODULE record) instead. */
	SP_SPILL_REGION = 1,
	/* payload: struct sp_spill_events + n x struct sp_spill_event, the
	 * thread's events first_seq .. first_seq+n-1 in entry order. An event
	 * whose call was still open has end == SP_SPILL_OPEN. */
	SP_SPILL_EVENTS = 2,
	/* payload: n x struct sp_spill_close: the end (and region, for a call
	 * deleted by MIN_DURATION) of a spilled event that was still open. */
	SP_SPILL_CLOSE = 3,
	/* payload: struct sp_spill_thread. */
	SP_SPILL_THREAD = 4,
	/* payload: struct sp_spill_rank (written at MPI_Init). */
	SP_SPILL_RANK = 5,
	/* payload: n x struct sp_spill_drop: calls lost per region so far. */
	SP_SPILL_DROPS = 6,
	/* payload: struct sp_spill_trailer: the process stopped on a signal. */
	SP_SPILL_TRAILER = 7,
	/* payload: struct sp_spill_module + path bytes (no NUL). */
	SP_SPILL_MODULE = 8,
	/* payload: struct sp_spill_module_id + build-id bytes: the GNU build-id
	 * note of MODULE `index` (build_id_bytes 0: the module has none), written
	 * right after its MODULE record. Version-1 readers skip it as damage. */
	SP_SPILL_MODULE_ID = 9,
	/* payload: struct sp_spill_tree: the process tree the process belongs
	 * to (metadata process_tree), written right after the header when it
	 * has one. `scope-profiler run` finds by it the spill of a program its
	 * wrapper started. Readers before it skip it as damage. */
	SP_SPILL_TREE = 10,
};

#define SP_SPILL_OPEN INT64_MIN     /* same as the recorder's SP_OPEN */
#define SP_SPILL_NO_REGION UINT32_MAX

struct sp_spill_region {
	uint32_t id;
	uint32_t kind;          /* SP_KIND_* (sp-format.h); version 1 wrote every
				 * MPI region as 2, read as SP_KIND_MPI_OTHER */
	uint64_t addr;          /* function address, else 0 */
	int32_t module;         /* MODULE record index for a function, else -1;
				 * the function's offset in it is addr - bias */
	uint32_t name_bytes;
};

struct sp_spill_events {
	uint64_t first_seq;     /* the thread's event number of the first one */
	uint32_t n;
	uint32_t pad;
	int64_t tick, ns;       /* a (tick, CLOCK_MONOTONIC ns) pair taken when written */
};

/* Same layout as the recorder's struct sp_event (checked at compile time). */
struct sp_spill_event {
	int64_t start, end;     /* ticks */
	uint32_t region;
	uint32_t aux;
};

struct sp_spill_close {
	uint64_t seq;
	int64_t end;            /* ticks, or SP_SPILL_OPEN with region = NO_REGION: deleted */
	uint32_t region;
	uint32_t pad;
};

struct sp_spill_thread {
	int64_t index, ident, native_id, start_ns, end_ns; /* end_ns 0: alive */
};

struct sp_spill_rank {
	int32_t rank, size;
};

struct sp_spill_drop {
	uint32_t region;
	uint32_t pad;
	uint64_t dropped;
};

struct sp_spill_trailer {
	int32_t signo;          /* the signal that stopped the process */
	uint32_t pad;
	int64_t tick, ns;       /* when: open calls were closed at this tick */
	uint64_t dropped;       /* calls lost to the cap or depth */
};

struct sp_spill_module {
	uint64_t bias;          /* load bias (link_map l_addr) */
	int32_t index;
	uint32_t path_bytes;
};

#define SP_SPILL_BUILD_ID_MAX 64
struct sp_spill_module_id {
	int32_t index;          /* the MODULE record this completes */
	uint32_t build_id_bytes; /* at most SP_SPILL_BUILD_ID_MAX */
	uint64_t span;          /* bytes from the lowest to the end of the highest PT_LOAD */
};

#define SP_SPILL_TREE_BYTES 32      /* SP_TREE_ID_MAX (output-path.h) */
struct sp_spill_tree {
	char id[SP_SPILL_TREE_BYTES];  /* "<root pid>:<16 hex digits>", NUL-padded */
};

#endif /* SP_SPILL_H */
