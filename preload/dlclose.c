/* SPDX-License-Identifier: MIT */
/*
 * dlclose(), interposed: when a call really unloads objects (the library,
 * and those only it held), the function table forgets their code ranges
 * (sp_fn_forget_range), so that a module loaded at the same addresses later
 * gets its own regions and names. The call itself is glibc's, unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>

#include "compiler.h"
#include "functions.h"
#include "patch.h"

SP_EXPORT int dlclose(void *handle);

/* A loaded object: its program headers (unique while it is mapped) and
 * the range of its executable segments. */
struct object {
	const void *phdr;
	uintptr_t lo, hi;
};

struct objects {
	struct object *v;
	size_t n, cap;
	unsigned long long subs; /* objects unloaded so far in the process */
	bool failed;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objects *s = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		s->subs = info->dlpi_subs;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct object *v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->failed = true;
			return 1;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct object){ .phdr = info->dlpi_phdr, .lo = lo, .hi = hi };
	return 0;
}

static bool still_loaded(const struct objects *after, const struct object *o)
{
	for (size_t i = 0; i < after->n; i++)
		if (after->v[i].phdr == o->phdr && after->v[i].lo == o->lo)
			return true;
	return false;
}

int dlclose(void *handle)
{
	static int (*real)(void *);
	if (!real)
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (!real)
		return -1; /* cannot happen with glibc: libc.so.6 defines it */
	if (!sp_fn_table_used())
		return real(handle);
	/* The objects before and after: what disappeared was unloaded. */
	int saved = errno;
	struct objects before = { 0 }, after = { 0 };
	dl_iterate_phdr(collect, &before);
	sp_patch_forget_queue();
	errno = saved;
	int ret = real(handle);
	saved = errno;
	dl_iterate_phdr(collect, &after);
	if (ret == 0 && !before.failed && !after.failed && after.subs != before.subs)
		for (size_t i = 0; i < before.n; i++)
			if (!still_loaded(&after, &before.v[i]))
				sp_fn_forget_range(before.v[i].lo, before.v[i].hi);
	free(before.v);
	free(after.v);
	errno = saved;
	return ret;
}
