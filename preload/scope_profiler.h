/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler manual region API. Link with -lscope-profiler or preload
 * libscope-profiler.so. Recording starts when the library loads; every
 * call is safe before initialisation, after sp_finalize() and with invalid
 * handles (it does nothing then).
 */
#ifndef SCOPE_PROFILER_H
#define SCOPE_PROFILER_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * sp_init() - start recording (idempotent) and optionally set the output.
 * @output: HDF5 file to write at finalize, or NULL to keep
 *          $SCOPE_PROFILER_OUTPUT (default "profiling_data.h5").
 * Return: 0, -ECANCELED if profiling is disabled (SCOPE_PROFILER_ENABLE=0),
 *         -ESHUTDOWN after sp_finalize(), -ENOMEM.
 */
int sp_init(const char *output);

/**
 * sp_region() - the handle of the region called @name, created on first use.
 * Return: a handle >= 0, -EINVAL for a NULL name, -ENOMEM.
 */
int sp_region(const char *name);

/** sp_begin() - open a call of the region @handle on this thread. */
void sp_begin(int handle);

/** sp_end() - close the innermost open call of @handle on this thread. */
void sp_end(int handle);

/** sp_begin_name() / sp_end_name() - as sp_begin()/sp_end() by name. */
void sp_begin_name(const char *name);
void sp_end_name(const char *name);

/**
 * sp_flush() - write the file now with every call completed so far, and
 * keep recording. The final write at sp_finalize() replaces it. In an MPI
 * rank, each rank writes its own <output>.rank<NNNNN> checkpoint (no
 * collective call); `scope-profiler merge` combines them.
 * Return: 0 or a negative errno.
 */
int sp_flush(void);

/**
 * sp_finalize() - stop recording and write the file. Calls still open are
 * left out. Later calls of the API do nothing. Under MPI, the file is
 * written at MPI_Finalize instead and this only stops recording.
 * Return: 0 or a negative errno (-EALREADY if already finalized).
 */
int sp_finalize(void);

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
 * SP_SCOPE(name) - time the rest of the enclosing block as region @name.
 * The handle is looked up once per call site.
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
