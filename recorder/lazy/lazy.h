/* SPDX-License-Identifier: MIT */
/*
 * Libraries loaded when first needed instead of with the preload: HDF5
 * (writing a file) and libdw (naming functions). Linked at start-up they
 * cost every profiled process ~40 more objects to map and relocate, and
 * every symbol lookup of the program a longer search (docs/HOOKS.md,
 * "Start-up"). lazy-hdf5.h and lazy-dw.h turn each name the recorder uses
 * into SP_LAZY(lib, name): the address dlsym found, cached per name.
 */
#ifndef SP_LAZY_H
#define SP_LAZY_H

#include "compiler.h"

enum sp_lazy_lib { SP_LAZY_HDF5, SP_LAZY_DW, SP_LAZY_NLIBS };

/* Load lib (once, thread-safe; never unloaded). Returns 0, or -ELIBACC
 * after one warning naming the library and why: dlerror(), or a name of
 * lazy-names.h it lacks (another build of it). Every path into the
 * library calls it first and fails cleanly with it. */
SP_HIDDEN int sp_lazy_load(enum sp_lazy_lib lib);
/* The same, without the warning (the reader library never prints; it
 * returns an error naming the library and sp_lazy_error's text). */
SP_HIDDEN int sp_lazy_try(enum sp_lazy_lib lib);
/* Why lib could not be loaded (dlerror's text), "" when it was. */
SP_HIDDEN const char *sp_lazy_error(enum sp_lazy_lib lib);

/* The SONAME lib is loaded by (for messages). */
SP_HIDDEN const char *sp_lazy_soname(enum sp_lazy_lib lib);

/* name in lib, loading lib, stored in *slot. The load looked up every
 * name of lazy-names.h and refused a library that lacks one, so a name
 * is missing here only if it is missing from that list: that aborts with
 * a message (the caller would otherwise call through NULL). */
SP_HIDDEN void *sp_lazy_resolve(enum sp_lazy_lib lib, const char *name, void **slot);

static inline void *sp_lazy_cached(enum sp_lazy_lib lib, const char *name, void **slot)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	return p ? p : sp_lazy_resolve(lib, name, slot);
}

/* One file's cache of name's address (lazy-names.h lists the names). */
#define SP_LAZY_SLOT(name) static void *sp_lazy_##name __attribute__((unused));

/* The function (or global) name of lib, typed as declared. */
#define SP_LAZY(lib, name) (*(__typeof__(&name))sp_lazy_cached(lib, #name, &sp_lazy_##name))

#endif /* SP_LAZY_H */
