/* SPDX-License-Identifier: MIT */
/*
 * MPI call sites (SCOPE_PROFILER_CALLSITES=DEPTH). Capture: the wrapper asks
 * libunwind's fast path (unw_backtrace) for the return addresses, and a
 * per-thread hash table turns the address tuple into a small id stored with
 * the call's record. Finalize: every tuple becomes a text key (function,
 * file:line of each frame), keys are unified across ranks by the merge, and
 * rank 0 writes /callsites. Layout: docs/CALLSITES.md.
 */
#define _GNU_SOURCE
#include "mpi-callsites.h"

#include <dlfcn.h>
#include <hdf5.h>
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
		fprintf(stderr, "scope-profiler: SCOPE_PROFILER_CALLSITES ignored: %s\n",
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
	struct sp_thread *t = sp_thread_get();
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
static int add_key(struct sp_mpi_sites *s, struct sp_mpi_names *seen, const char *key,
		   uint32_t *ret_index)
{
	uint32_t before = seen->n, idx;
	if (sp_mpi_names_map(seen, key, 1, &idx) < 0)
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
	struct sp_mpi_names seen = { 0 };
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
	sp_mpi_names_free(&seen);
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

/* ---- rank 0: the /callsites table -------------------------------------------- */

/* Split one key into its frames' fields (the key is modified). */
static uint32_t split_frames(char *key, const char **fn, const char **file, int64_t *line)
{
	uint32_t n = 0;
	for (char *fr = key; fr && n < SP_CS_DEPTH_MAX; n++) {
		char *next = strchr(fr, '\n');
		if (next)
			*next++ = '\0';
		const char *f[4] = { fr, "", "-1", "" };
		for (int k = 1; k < 4; k++) {
			char *tab = strchr(f[k - 1], '\t');
			if (!tab)
				break;
			*tab = '\0';
			f[k] = tab + 1;
		}
		fn[n] = f[0];
		file[n] = f[1];
		line[n] = strtoll(f[2], NULL, 10);
		fr = next;
	}
	return n;
}

static int put_dset(hid_t g, const char *name, hid_t ftype, hid_t mtype, uint64_t n,
		    const void *buf)
{
	hsize_t dims = n;
	hid_t sp = H5Screate_simple(1, &dims, NULL);
	hid_t d = sp < 0 ? -1 : H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int ret = d < 0 || (n && H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) ? -EIO : 0;
	if (d >= 0)
		H5Dclose(d);
	if (sp >= 0)
		H5Sclose(sp);
	return ret;
}

/* Columns of the table, built from the keys. */
struct table {
	uint64_t nframes;
	const char **fn, **file, **ffn, **ffile;
	int64_t *line, *fline;
	uint64_t *off;
	uint32_t *count;
	char **keys;   /* copies split in place */
};

static void table_free(struct table *t, uint32_t n)
{
	for (uint32_t i = 0; t->keys && i < n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->fn);
	free(t->file);
	free(t->line);
	free(t->off);
	free(t->count);
	free(t->ffn);
	free(t->ffile);
	free(t->fline);
}

static int table_build(struct table *t, const struct sp_mpi_names *keys)
{
	uint32_t n = keys->n;
	uint64_t fmax = (uint64_t)n * SP_CS_DEPTH_MAX + 1;
	memset(t, 0, sizeof *t);
	t->keys = calloc(n + 1, sizeof *t->keys);
	t->fn = calloc(n + 1, sizeof *t->fn);
	t->file = calloc(n + 1, sizeof *t->file);
	t->line = calloc(n + 1, sizeof *t->line);
	t->off = calloc(n + 1, sizeof *t->off);
	t->count = calloc(n + 1, sizeof *t->count);
	t->ffn = calloc(fmax, sizeof *t->ffn);
	t->ffile = calloc(fmax, sizeof *t->ffile);
	t->fline = calloc(fmax, sizeof *t->fline);
	if (!t->keys || !t->fn || !t->file || !t->line || !t->off || !t->count || !t->ffn ||
	    !t->ffile || !t->fline)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!(t->keys[i] = strdup(keys->v[i])))
			return -ENOMEM;
		t->off[i] = t->nframes;
		t->count[i] = split_frames(t->keys[i], t->ffn + t->nframes, t->ffile + t->nframes,
					   t->fline + t->nframes);
		t->fn[i] = t->ffn[t->nframes];
		t->file[i] = t->ffile[t->nframes];
		t->line[i] = t->fline[t->nframes];
		t->nframes += t->count[i];
	}
	return 0;
}

int sp_mpi_sites_write(const char *path, const struct sp_mpi_names *keys)
{
	struct table t;
	int ret = table_build(&t, keys);
	hid_t f = ret ? -1 : H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	hid_t g = f < 0 ? -1 : H5Gcreate2(f, SP_GROUP_CALLSITES, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	hid_t str = H5Tcopy(H5T_C_S1);
	H5Tset_size(str, H5T_VARIABLE);
	H5Tset_cset(str, H5T_CSET_UTF8);
	if (!ret && g < 0)
		ret = -EIO;
	uint32_t n = keys->n;
	if (!ret) {
		int64_t d = depth;
		hid_t sp = H5Screate(H5S_SCALAR);
		hid_t a = H5Acreate2(g, SP_CS_ATTR_DEPTH, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
		if (a < 0 || H5Awrite(a, H5T_NATIVE_INT64, &d) < 0)
			ret = -EIO;
		if (a >= 0)
			H5Aclose(a);
		H5Sclose(sp);
	}
	if (!ret)
		ret = put_dset(g, SP_CS_FUNCTIONS, str, str, n, t.fn) |
		      put_dset(g, SP_CS_FILES, str, str, n, t.file) |
		      put_dset(g, SP_CS_LINES, H5T_STD_I64LE, H5T_NATIVE_INT64, n, t.line) |
		      put_dset(g, SP_CS_FRAME_OFFSETS, H5T_STD_U64LE, H5T_NATIVE_UINT64, n, t.off) |
		      put_dset(g, SP_CS_FRAME_COUNTS, H5T_STD_U32LE, H5T_NATIVE_UINT32, n, t.count) |
		      put_dset(g, SP_CS_FRAME_FUNCTIONS, str, str, t.nframes, t.ffn) |
		      put_dset(g, SP_CS_FRAME_FILES, str, str, t.nframes, t.ffile) |
		      put_dset(g, SP_CS_FRAME_LINES, H5T_STD_I64LE, H5T_NATIVE_INT64, t.nframes,
			       t.fline);
	H5Tclose(str);
	if (g >= 0)
		H5Gclose(g);
	if (f >= 0 && H5Fclose(f) < 0)
		ret = -EIO;
	table_free(&t, n);
	return ret ? (ret == -ENOMEM ? ret : -EIO) : 0;
}
