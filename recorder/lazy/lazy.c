/* SPDX-License-Identifier: MIT */
/* Libraries loaded on first use (lazy.h). */
#define _GNU_SOURCE
#include "lazy.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lazy-names.h"

/* SONAMEs found at configure time (meson.build: objdump -p). */
static const char *const sonames[SP_LAZY_NLIBS] = { SP_HDF5_SONAME, SP_LIBDW_SONAME };
/* A function of each, to tell whether the program has the same library in
 * its global scope. */
static const char *const probes[SP_LAZY_NLIBS] = { "H5open", "dwfl_begin" };

/* Every name the recorder and the reader use, per library. */
#define SP_LAZY_NAME_STR(name) #name,
static const char *const hdf5_names[] = { SP_LAZY_HDF5_NAMES(SP_LAZY_NAME_STR) NULL };
static const char *const dw_names[] = { SP_LAZY_DW_NAMES(SP_LAZY_NAME_STR) NULL };
static const char *const *const names[SP_LAZY_NLIBS] = { hdf5_names, dw_names };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *handles[SP_LAZY_NLIBS];
/* Where names are looked up: the handle, or RTLD_DEFAULT when the program
 * itself links the same library. Then its data (HDF5's H5T_* type ids)
 * lives in the program's copies (copy relocations), which the library's
 * code uses and dlsym on the handle would not give. */
static void *scopes[SP_LAZY_NLIBS];
static int errs[SP_LAZY_NLIBS];
/* dlerror()'s text at the failed load, for sp_lazy_error. */
static char why[SP_LAZY_NLIBS][256];
/* The failure was printed (once, by the first caller that asks to). */
static bool said[SP_LAZY_NLIBS];

static int load(enum sp_lazy_lib lib, bool say)
{
	if (__atomic_load_n(&handles[lib], __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&lock);
	if (!handles[lib] && !errs[lib]) {
		/* RTLD_LOCAL: its symbols stay out of the program's lookups */
		void *h = dlopen(sonames[lib], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		const char *missing = NULL;
		if (h) {
			void *mine = dlsym(h, probes[lib]);
			scopes[lib] = mine && dlsym(RTLD_DEFAULT, probes[lib]) == mine ? RTLD_DEFAULT
										: h;
			/* Every name now, not at its first call: a library of
			 * this SONAME from another build (LD_LIBRARY_PATH, a
			 * module) that lacks one is refused here, cleanly. */
			for (const char *const *n = names[lib]; *n && !missing; n++)
				if (!dlsym(scopes[lib], *n))
					missing = *n;
		}
		if (h && !missing) {
			__atomic_store_n(&handles[lib], h, __ATOMIC_RELEASE);
		} else {
			const char *e = h ? NULL : dlerror();
			errs[lib] = -ELIBACC; /* strerror: "Can not access a needed shared library" */
			if (missing)
				snprintf(why[lib], sizeof why[lib], "it has no %s; it is another build "
					 "than the one scope-profiler was built with", missing);
			else
				snprintf(why[lib], sizeof why[lib], "%s", e ? e : "unknown error");
		}
	}
	int ret = handles[lib] ? 0 : errs[lib];
	/* A silent try (sp_lazy_try: the reader) leaves the warning to the
	 * first caller that needs the library and says so (the writer). */
	bool tell = ret && say && !said[lib];
	if (tell)
		said[lib] = true;
	pthread_mutex_unlock(&lock);
	/* stderr itself: the CLI's file writer has no sp_log */
	if (tell)
		fprintf(stderr, "scope-profiler: could not load %s: %s\n", sonames[lib], why[lib]);
	return ret;
}

int sp_lazy_load(enum sp_lazy_lib lib)
{
	return load(lib, true);
}

int sp_lazy_try(enum sp_lazy_lib lib)
{
	return load(lib, false);
}

const char *sp_lazy_error(enum sp_lazy_lib lib)
{
	return errs[lib] ? why[lib] : "";
}

const char *sp_lazy_soname(enum sp_lazy_lib lib)
{
	return sonames[lib];
}

void *sp_lazy_resolve(enum sp_lazy_lib lib, const char *name, void **slot)
{
	void *p = sp_lazy_load(lib) ? NULL : dlsym(scopes[lib], name);
	if (!p) {
		fprintf(stderr, "scope-profiler: %s has no %s (a different build of the "
			"library than scope-profiler's): stopping\n", sonames[lib], name);
		abort();
	}
	__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}
