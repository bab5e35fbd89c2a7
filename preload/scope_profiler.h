/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler manual region API. Link with -lscope-profiler or preload
 * libscope-profiler.so. Source-compatible with upstream scope-profiler's
 * native C API (every name, signature, status code and error string), plus
 * our own additions below it. docs/API.md describes both.
 */
#ifndef SCOPE_PROFILER_H
#define SCOPE_PROFILER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- upstream-compatible API ------------------------------------------ */

/** The .spt format version the library writes (also in HDF5 metadata). */
#define SP_FORMAT_VERSION 2
/** The handle returned when registration is impossible; begin/end ignore it. */
#define SP_INVALID_REGION (-1)

/** A profiling context (opaque). */
typedef struct sp_profiler sp_profiler;

/** Status codes; sp_error_string() names them. */
typedef enum {
	SP_OK = 0,
	SP_ERR_INACTIVE = 1,
	SP_ERR_NO_CLOCK = 2,
	SP_ERR_NO_MEMORY = 3,
	SP_ERR_IO = 4,
	SP_ERR_UNMATCHED_END = 5,
	SP_ERR_OPEN_SCOPES = 6,
	SP_ERR_UNSUPPORTED = 7
} sp_status;

/** What sp_profiler_flush()/sp_profiler_finalize() write. */
typedef enum { SP_OUTPUT_HDF5 = 0, SP_OUTPUT_TRACE = 1 } sp_output_format;

/** Statistics of one region: calls are entries (open ones included); the
 * durations cover completed calls, 0 when none completed. */
typedef struct {
	int64_t calls;
	int64_t total_ns;
	int64_t min_ns;
	int64_t max_ns;
} sp_region_stats;

/** A scope token: slot < 0 means inert (nothing to end). */
typedef struct {
	sp_profiler *profiler;
	int region;
	int64_t slot;
} sp_scope;

/** sp_error_string() - the fixed text of @status ("unknown status" for any
 * other value). Never NULL. */
const char *sp_error_string(sp_status status);
/** sp_hdf5_available() - 1: this library writes HDF5 (always, here). */
int sp_hdf5_available(void);
/** sp_default_output_format() - SP_OUTPUT_HDF5 here. */
sp_output_format sp_default_output_format(void);
/** Switch the output format of @profiler; SP_ERR_INACTIVE for NULL or an
 * inactive context, SP_ERR_UNSUPPORTED for an unknown value. */
int sp_profiler_set_output_format(sp_profiler *profiler, sp_output_format format);
/** The format of @profiler, the default format for NULL. */
sp_output_format sp_profiler_output_format(const sp_profiler *profiler);

/** sp_create() - a new active context writing <prefix>_rank<%05d rank>.
 * NULL prefix: "scope_profile". Returns NULL only when out of memory.
 * Destroy with sp_destroy(). */
sp_profiler *sp_create(const char *prefix, int rank);
/** sp_destroy() - free @profiler without writing; NULL is a no-op. */
void sp_destroy(sp_profiler *profiler);
/** The handle of region @name (registered on first use, 0-based, dense),
 * -1 for a NULL or inactive context or a NULL name. */
int sp_profiler_region(sp_profiler *profiler, const char *name);
/** As sp_profiler_region(), attaching @source_file:@source_line if the
 * region has no location yet (first writer wins). */
int sp_profiler_region_at(sp_profiler *profiler, const char *name, const char *source_file,
			  int source_line);
/** Open a call of @region (bad input: a silent no-op). */
void sp_profiler_begin(sp_profiler *profiler, int region);
/** Close the innermost open call of @region. */
void sp_profiler_end(sp_profiler *profiler, int region);
/** Close the most recently begun open call, any region: SP_OK or
 * SP_ERR_UNMATCHED_END. */
int sp_profiler_end_last(sp_profiler *profiler);
/** Open a call of @region and return a token naming it. */
sp_scope sp_profiler_scope_begin(sp_profiler *profiler, int region);
/** End the call @scope names if it is the innermost open call of its
 * region: SP_OK (the token becomes inert), else SP_ERR_UNMATCHED_END. */
int sp_scope_end(sp_scope *scope);
/** Discard every recorded call, keeping the handles: SP_OK,
 * SP_ERR_OPEN_SCOPES while a call is open, SP_ERR_INACTIVE for NULL. */
int sp_profiler_reset(sp_profiler *profiler);
/** Fill @stats for @region: SP_OK or SP_ERR_INACTIVE (bad input). */
int sp_profiler_get_region_stats(const sp_profiler *profiler, int region, sp_region_stats *stats);
/** The number of registered regions (0 for NULL). */
int sp_profiler_num_regions(const sp_profiler *profiler);
/** The name of @region, owned by the context; NULL for bad input. */
const char *sp_profiler_region_name(const sp_profiler *profiler, int region);
/** Write the output file now and keep recording: 0, or 1 on failure. */
int sp_profiler_flush(sp_profiler *profiler);
/** Write the output file and deactivate @profiler: 0, or 1 if the write
 * failed. Never communicates (safe when only some MPI ranks call it). */
int sp_profiler_finalize(sp_profiler *profiler);
/** 1 if @profiler is non-NULL and active. */
int sp_profiler_is_active(const sp_profiler *profiler);
/** The output path for the current format, owned by the context. */
const char *sp_profiler_output_path(const sp_profiler *profiler);
/** The status recorded last (SP_OK for NULL). */
sp_status sp_profiler_last_error(const sp_profiler *profiler);

/** sp_init() - replace the default context (without writing the old one)
 * by sp_create(@prefix, @rank). Return: 0, or 1 if it is not active. */
int sp_init(const char *prefix, int rank);
/** The default context's sp_profiler_region(); -1 before sp_init(). */
int sp_region(const char *name);
/** The default context's sp_profiler_region_at(). */
int sp_region_at(const char *name, const char *source_file, int source_line);
/** Open a call of @region in the default context. */
void sp_begin(int region);
/** Close the innermost open call of @region in the default context. */
void sp_end(int region);
/** Entries of @region in the default context (readable after finalize). */
int64_t sp_num_calls(int region);
/** The profiler clock (CLOCK_MONOTONIC) in ns, -1 without a clock. */
int64_t sp_now_ns(void);
/** 1 while the default context is active. */
int sp_is_active(void);
/** The default context's sp_profiler_set_output_format(). */
int sp_set_output_format(sp_output_format format);
/** The default context's format. */
sp_output_format sp_current_output_format(void);
/** The default context's output path; NULL before sp_init(). */
const char *sp_output_path(void);
/** Finalize the default context; 0 before sp_init() and when repeated. */
int sp_finalize(void);
/** The default context (NULL before the first sp_init()). */
sp_profiler *sp_default_profiler(void);

#define SP_PROFILER_REGION_AT(profiler, name) \
	sp_profiler_region_at((profiler), (name), __FILE__, __LINE__)
#define SP_REGION_AT(name) sp_region_at((name), __FILE__, __LINE__)

/* ---- scope-profiler additions ----------------------------------------- */

/** sp_begin_name() / sp_end_name() - open/close a call of the region
 * @name on the process timeline directly (no context, no sp_init()
 * needed; recording starts when the library loads). */
void sp_begin_name(const char *name);
void sp_end_name(const char *name);

/**
 * sp_flush() - write the process file now with every call completed so
 * far, and keep recording. The final write at exit (or MPI_Finalize)
 * replaces it. In an MPI rank, each rank writes its own
 * <output>.rank<NNNNN> checkpoint (no collective call).
 * Return: 0 or a negative errno.
 */
int sp_flush(void);

/**
 * sp_stop() - stop recording and write the process file now, as exit
 * would. Later calls of the API record nothing. Under MPI the file is
 * written at MPI_Finalize instead and this only returns 0.
 * Return: 0 or a negative errno (-EALREADY if already stopped).
 */
int sp_stop(void);

/**
 * sp_set_output() - the process file to write at exit (instead of
 * $SCOPE_PROFILER_OUTPUT, default "profiling_data.h5").
 * Return: 0, -EINVAL for NULL or "", -ENOMEM, -ESHUTDOWN once stopped.
 */
int sp_set_output(const char *output);

/** sp_profiler_completed_calls() - the completed calls of @region since
 * creation or reset (sp_region_stats counts entries); 0 for bad input. */
int64_t sp_profiler_completed_calls(const sp_profiler *profiler, int region);

/** sp_mpi_intercepted() - 1 when this library's PMPI layer records the
 * MPI calls of this process (its MPI_Init wrapper ran), else 0. */
int sp_mpi_intercepted(void);

/** sp_version() - the library version, e.g. "0.1.0". */
const char *sp_version(void);

/* Helpers of SP_SCOPE(); not part of the API. */
static inline int sp_scope_begin_(int handle)
{
	sp_begin(handle);
	return handle;
}
static inline void sp_scope_end_(const int *handle)
{
	sp_end(*handle);
}

#if defined(__GNUC__) && !defined(__cplusplus)
#define SP_CAT_(a, b) a##b
#define SP_CAT(a, b) SP_CAT_(a, b)
/**
 * SP_SCOPE(name) - time the rest of the enclosing block as region @name of
 * the default context (after sp_init()). The handle is looked up once per
 * call site.
 */
#define SP_SCOPE(name)                                                              \
	static int SP_CAT(sp_scope_handle_, __LINE__) = -1;                        \
	if (SP_CAT(sp_scope_handle_, __LINE__) < 0)                                \
		SP_CAT(sp_scope_handle_, __LINE__) = sp_region(name);              \
	__attribute__((cleanup(sp_scope_end_))) const int SP_CAT(sp_scope_, __LINE__) = \
		sp_scope_begin_(SP_CAT(sp_scope_handle_, __LINE__))
#endif

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_H */
