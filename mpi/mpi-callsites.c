/* SPDX-License-Identifier: MIT */
/*
 * MPI call sites (SCOPE_PROFILER_CALLSITES=DEPTH). Capture: the wrapper asks
 * libunwind's fast path (unw_backtrace) for the return addresses, and a
 * per-thread hash table turns the address tuple into a small id stored with
 * the call's record. Finalize: every tuple becomes a text key (function,
 * file:line of each frame, groups.h), keys are unified across ranks by the
 * merge, and the file's /callsites table is made from them (groups.c).
 * Layout: docs/CALLSITES.md.
 */
#define _GNU_SOURCE
#include "mpi-callsites.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "functions.h"
#include "lifecycle.h"
#include "log.h"
#include "mpi-record.h"

int sp_mpi_cs_frames;
int (*sp_mpi_unw_backtrace)(void **buffer, int size);
_Static_assert(__builtin_types_compatible_p(__typeof__(&unw_backtrace),
					    __typeof__(sp_mpi_unw_backtrace)),
	       "unw_backtrace prototype");
static int depth;                 /* application frames kept per site */
static uintptr_t own_lo, own_hi;  /* this library's mapping */

/* ---- set-up --------------------------------------------------------------- */

static int find_own(struct dl_phdr_info *info, size_t size, void *data)
{
	const struct link_map *lm = data;
	if (info->dlpi_addr != lm->l_addr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		own_lo = own_lo && own_lo < lo ? own_lo : lo;
		own_hi = own_hi > hi ? own_hi : hi;
	}
	return own_hi != 0;
}

/*
 * libunwind is opened here, RTLD_LOCAL, and only when call sites are on: its
 * shared library also defines backtrace() and the _Unwind_* entry points,
 * which must not take over the application's (C++ exceptions) through our
 * preload. Runs after the configuration (101) and the MPI switch (102).
 */
__attribute__((constructor(103))) static void sp_mpi_callsites_setup(void)
{
	if (sp_config.callsites <= 0 || !sp_mpi_on || sp_lifecycle_state() != SP_STATE_RECORDING)
		return;
	Dl_info info;
	struct link_map *lm = NULL;
	if (dladdr1((void *)sp_mpi_site_id, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm)
		dl_iterate_phdr(find_own, lm);
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
	void *fn = h ? dlsym(h, "unw_backtrace") : NULL;
	if (!fn || !own_hi) {
		sp_log(SP_LOG_WARN, "callsites", "SCOPE_PROFILER_CALLSITES ignored: %s",
		       fn ? "own code range unknown" : "libunwind (unw_backtrace) not found");
		return;
	}
	sp_mpi_unw_backtrace = (int (*)(void **, int))fn;
	depth = (int)sp_config.callsites;
	sp_mpi_cs_frames = depth + SP_CS_OWN_FRAMES;
}

bool sp_mpi_sites_enabled(void)
{
	return sp_mpi_cs_frames != 0;
}

/* ---- capture: per-thread tables -------------------------------------------- */

struct site {
	uint64_t hash;
	uint32_t n;
	uintptr_t pc[SP_CS_DEPTH_MAX];
};

/*
 * Sites of one thread: sites[] in id order, slots[] an open-addressing index
 * (1 + id, 0 empty) kept at most half full. Touched only by the owning
 * thread while it records; read at finalize after recording stopped. Never
 * freed before the process ends (a thread that exited keeps its sites, as
 * it keeps its events).
 */
struct cs_thread {
	uint32_t *slots;
	uint32_t mask;
	struct site *sites;
	uint32_t n, cap;
};

static __thread struct cs_thread *my __attribute__((tls_model("initial-exec")));
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cs_thread **by_index;
static uint32_t nby_index;

static struct cs_thread *attach(void)
{
	struct sp_rec_thread *t = sp_thread_get();
	struct cs_thread *th = t ? calloc(1, sizeof *th) : NULL;
	if (!th)
		return NULL;
	pthread_mutex_lock(&threads_lock);
	if (t->index >= nby_index) {
		uint32_t n = t->index + 64;
		struct cs_thread **v = realloc(by_index, n * sizeof *v);
		if (v) {
			memset(v + nby_index, 0, (n - nby_index) * sizeof *v);
			by_index = v;
			nby_index = n;
		}
	}
	if (t->index < nby_index && !by_index[t->index]) {
		by_index[t->index] = th;
	} else {
		free(th);
		th = NULL;
	}
	pthread_mutex_unlock(&threads_lock);
	return my = th;
}

static inline uint64_t hash_pcs(void *const *pcs, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < n; i++)
		h = (h ^ (uintptr_t)pcs[i]) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

/* Double the index (rare: slow path, the only allocation besides attach). */
static bool rehash(struct cs_thread *th)
{
	uint32_t size = th->slots ? 2 * (th->mask + 1) : 256;
	uint32_t *slots = calloc(size, sizeof *slots);
	if (!slots)
		return false;
	for (uint32_t id = 0; id < th->n; id++) {
		uint32_t i = (uint32_t)th->sites[id].hash & (size - 1);
		while (slots[i])
			i = (i + 1) & (size - 1);
		slots[i] = id + 1;
	}
	free(th->slots);
	th->slots = slots;
	th->mask = size - 1;
	return true;
}

static __attribute__((noinline)) uint32_t insert(struct cs_thread *th, uint64_t h,
						 void *const *pcs, int n)
{
	if (th->n == th->cap) {
		uint32_t cap = th->cap ? 2 * th->cap : 64;
		struct site *v = realloc(th->sites, cap * sizeof *v);
		if (!v)
			return 0;
		th->sites = v;
		th->cap = cap;
	}
	if ((!th->slots || 2 * (th->n + 1) > th->mask + 1) && !rehash(th))
		return 0;
	struct site *s = &th->sites[th->n];
	s->hash = h;
	s->n = (uint32_t)n;
	for (int k = 0; k < n; k++)
		s->pc[k] = (uintptr_t)pcs[k];
	uint32_t i = (uint32_t)h & th->mask;
	while (th->slots[i])
		i = (i + 1) & th->mask;
	th->slots[i] = ++th->n;
	return th->n;
}

uint32_t sp_mpi_site_id(void *const *pcs, int n)
{
	int k = 0;
	while (k < n && (uintptr_t)pcs[k] >= own_lo && (uintptr_t)pcs[k] < own_hi)
		k++; /* the wrapper's frame */
	pcs += k;
	n -= k;
	if (n > depth)
		n = depth;
	struct cs_thread *th = my;
	if (SP_UNLIKELY(!th) && !(th = attach()))
		return 0;
	if (n <= 0)
		return 0;
	uint64_t h = hash_pcs(pcs, n);
	if (SP_LIKELY(th->slots)) {
		for (uint32_t i = (uint32_t)h & th->mask;; i = (i + 1) & th->mask) {
			uint32_t id = th->slots[i];
			if (!id)
				break;
			const struct site *s = &th->sites[id - 1];
			if (s->hash == h && s->n == (uint32_t)n &&
			    memcmp(s->pc, pcs, (size_t)n * sizeof *pcs) == 0)
				return id;
		}
	}
	return insert(th, h, pcs, n);
}

/* ---- finalize: resolve and deduplicate ---------------------------------------- */

/* Text of one frame: "function\tfile\tline\tmodule+0xoffset" (the offset
 * only when the line is unknown, so that two sites in a function without
 * line information stay apart). Tabs and newlines in names become spaces. */
static char *frame_text(uintptr_t ret_addr)
{
	uintptr_t pc = ret_addr - 1; /* inside the call instruction */
	struct sp_symbol sym = { 0 };
	int module = sp_sym_module_of(pc);
	if (sp_sym_resolve_pc(module, pc, &sym) < 0)
		return NULL;
	char where[512] = "";
	Dl_info info;
	if (sym.line < 0 && dladdr((void *)pc, &info) && info.dli_fname) {
		const char *base = strrchr(info.dli_fname, '/');
		snprintf(where, sizeof where, "%s+0x%" PRIxPTR, base ? base + 1 : info.dli_fname,
			 pc - (uintptr_t)info.dli_fbase);
	}
	char *s = NULL;
	if (asprintf(&s, "%s\t%s\t%" PRId64 "\t%s", sym.name, sym.file ? sym.file : "",
		     sym.line, where) < 0)
		s = NULL;
	sp_sym_free(&sym);
	for (char *p = s; p && *p; p++) {
		if (*p == '\n')
			*p = ' ';
	}
	/* ELF symbol versions ("__libc_start_main@@GLIBC_2.34") are not part
	 * of the name; C and C++ names never contain '@'. */
	char *tab = s ? strchr(s, '\t') : NULL, *at = tab ? memchr(s, '@', (size_t)(tab - s)) : NULL;
	if (at)
		memmove(at, tab, strlen(tab) + 1);
	return s;
}

/* Key of a site: its frames' texts joined by newlines. */
static char *site_key(const struct site *st)
{
	char *key = NULL;
	size_t len = 0;
	for (uint32_t f = 0; f < st->n; f++) {
		char *t = frame_text(st->pc[f]);
		size_t tl = t ? strlen(t) : 0;
		char *k = t ? realloc(key, len + tl + 2) : NULL;
		if (!k) {
			free(t);
			free(key);
			return NULL;
		}
		key = k;
		if (f)
			key[len++] = '\n';
		memcpy(key + len, t, tl + 1);
		len += tl;
		free(t);
	}
	return key;
}

void sp_mpi_sites_free(struct sp_mpi_sites *s)
{
	for (uint32_t t = 0; s->local && t < s->nthreads; t++)
		free(s->local[t]);
	free(s->local);
	free(s->nlocal);
	free(s->blob);
	free(s->global);
	memset(s, 0, sizeof *s);
}

/* Append the key to the rank's blob unless present; its index. */
static int add_key(struct sp_mpi_sites *s, struct sp_names *seen, const char *key,
		   uint32_t *ret_index)
{
	uint32_t before = seen->n, idx;
	if (sp_names_map(seen, key, 1, &idx) < 0)
		return -ENOMEM;
	if (seen->n != before) {
		size_t kl = strlen(key) + 1;
		char *b = realloc(s->blob, s->bytes + kl);
		if (!b)
			return -ENOMEM;
		memcpy(b + s->bytes, key, kl);
		s->blob = b;
		s->bytes += kl;
		s->n++;
	}
	*ret_index = idx;
	return 0;
}

int sp_mpi_sites_take(struct sp_mpi_sites *s)
{
	memset(s, 0, sizeof *s);
	if (!sp_mpi_cs_frames)
		return 0;
	int ret = 0;
	struct sp_names seen = { 0 };
	pthread_mutex_lock(&threads_lock);
	s->nthreads = nby_index;
	s->local = calloc(nby_index + 1, sizeof *s->local);
	s->nlocal = calloc(nby_index + 1, sizeof *s->nlocal);
	if (!s->local || !s->nlocal)
		ret = -ENOMEM;
	for (uint32_t t = 0; !ret && t < nby_index; t++) {
		const struct cs_thread *th = by_index[t];
		if (!th || !th->n)
			continue;
		s->local[t] = malloc(th->n * sizeof **s->local);
		s->nlocal[t] = th->n;
		for (uint32_t id = 0; s->local[t] && !ret && id < th->n; id++) {
			char *key = site_key(&th->sites[id]);
			ret = key ? add_key(s, &seen, key, &s->local[t][id]) : -ENOMEM;
			free(key);
		}
		if (!s->local[t])
			ret = -ENOMEM;
	}
	pthread_mutex_unlock(&threads_lock);
	sp_sym_close_all();
	sp_names_free(&seen);
	if (!ret && !(s->global = calloc(s->n + 1, sizeof *s->global)))
		ret = -ENOMEM;
	if (ret)
		sp_mpi_sites_free(s);
	return ret;
}

void sp_mpi_site_column(const struct sp_snapshot *snap, uint64_t first, uint64_t n,
			const struct sp_mpi_sites *s, int32_t *out)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t e = first + i;
		uint32_t t = snap->thread[e];
		uint32_t id = snap->aux ? sp_mpi_rec_site(t, snap->aux[e]) : 0;
		out[i] = -1;
		if (id && s->global && t < s->nthreads && s->local[t] && id <= s->nlocal[t])
			out[i] = (int32_t)s->global[s->local[t][id - 1]];
	}
}

int64_t sp_mpi_sites_depth(void)
{
	return depth;
}
