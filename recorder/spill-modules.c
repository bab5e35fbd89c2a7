/* SPDX-License-Identifier: MIT */
/*
 * The modules of this process as the spill file describes them (MODULE and
 * MODULE_ID records, docs/RESILIENCE.md): path, load bias, the span of the
 * loadable segments and the GNU build-id, so that `recover` names a killed
 * run's functions from module + offset.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "sp-spill.h"
#include "spill.h"
#include "spill-internal.h"

/*
 * Modules described in the file (MODULE + MODULE_ID records): all of them
 * at open, and again whenever the function table meets a module it did not
 * know (dlopen), both in normal context under module_lock. An entry is
 * filled before nmods is bumped (release), and never changes while the file
 * is open, so the signal handler finds a function's module with plain loads
 * (sp_spill_module_index) and never calls the loader.
 */
#define MAX_MODULES 1024
struct spill_module {
	uintptr_t bias, lo, hi; /* load bias, [lo, hi) of its PT_LOAD segments */
	uint64_t path_hash;
};
static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;
static struct spill_module mods[MAX_MODULES];
static atomic_int nmods;

static uint64_t hash_path(const char *p)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

/* The GNU build-id note of a loaded module, read from its PT_NOTE segments
 * in memory. Returns its length (0: none). */
static uint32_t build_id_of(const struct dl_phdr_info *info, const char **ret_id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *n;
			const char *desc = name + ((n->n_namesz + 3u) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz <= SP_SPILL_BUILD_ID_MAX) {
				*ret_id = desc;
				return n->n_descsz;
			}
			p = desc + ((n->n_descsz + 3u) & ~3u);
		}
	}
	return 0;
}

/* dl_iterate_phdr callback (module_lock held): describe a module not in
 * mods[] yet. The main program has an empty name: /proc/self/exe. Entries
 * without a file (the vDSO) are left out. */
static int describe_one(struct dl_phdr_info *info, size_t size, void *first)
{
	(void)size;
	char exe[4096];
	const char *p = info->dlpi_name;
	bool main_program = *(bool *)first && (!p || !*p);
	*(bool *)first = false;
	if (main_program) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0)
			return 0;
		exe[n] = '\0';
		p = exe;
	}
	if (!p || p[0] != '/')
		return 0;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	int n = atomic_load_explicit(&nmods, memory_order_relaxed);
	uint64_t h = hash_path(p);
	for (int i = 0; i < n; i++)
		if (mods[i].bias == info->dlpi_addr && mods[i].lo == lo && mods[i].path_hash == h)
			return 0;
	if (lo >= hi || n == MAX_MODULES)
		return 0;
	struct sp_spill_module m = { info->dlpi_addr, n, (uint32_t)strlen(p) };
	const char *id = NULL;
	struct sp_spill_module_id mid = { n, build_id_of(info, &id), hi - lo };
	if (sp_spill_put_rec(SP_SPILL_MODULE, 0, &m, sizeof m, p, m.path_bytes) ||
	    sp_spill_put_rec(SP_SPILL_MODULE_ID, 0, &mid, sizeof mid, id, mid.build_id_bytes))
		return 1; /* the spill stopped: nothing more is written */
	mods[n] = (struct spill_module){ info->dlpi_addr, lo, hi, h };
	atomic_store_explicit(&nmods, n + 1, memory_order_release);
	return 0;
}

/* Describe every loaded module not described yet (normal context: the
 * loader's lock is taken). */
void sp_spill_modules_describe(void)
{
	if (!sp_spill_owned())
		return;
	pthread_mutex_lock(&module_lock);
	bool first = true;
	dl_iterate_phdr(describe_one, &first);
	pthread_mutex_unlock(&module_lock);
}

/* Index of the module holding addr, -1 if none is described. The newest
 * first: a module loaded where a dlclose'd one was wins. Async-signal-safe. */
int32_t sp_spill_module_index(uintptr_t addr)
{
	for (int i = atomic_load_explicit(&nmods, memory_order_acquire) - 1; i >= 0; i--)
		if (addr >= mods[i].lo && addr < mods[i].hi)
			return i;
	return -1;
}

/* Module of a function address, describing new modules first if none
 * holds it (normal context only). */
int32_t sp_spill_module_of(uintptr_t addr)
{
	int32_t i = sp_spill_module_index(addr);
	if (i < 0) {
		sp_spill_modules_describe();
		i = sp_spill_module_index(addr);
	}
	return i;
}

void sp_spill_modules_reset(void)
{
	atomic_store(&nmods, 0);
}
