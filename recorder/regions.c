/* SPDX-License-Identifier: MIT */
/*
 * The region table: ids are dense and assigned in creation order. Regions
 * live in fixed segments that never move, so an id -> region lookup is two
 * loads and takes no lock. Name -> id and address -> id go through
 * insert-only open-addressing maps: readers probe without a lock, writers
 * insert under one mutex, and a full map is replaced by a bigger copy that
 * is published with a release store (old maps are kept, never freed, since a
 * reader may still be probing them).
 */
#include "recorder.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SEG_BITS 12
#define SEG_SIZE (1u << SEG_BITS)
#define SEG_COUNT 1024 /* 4M regions */

static struct sp_region *_Atomic segments[SEG_COUNT];
static atomic_uint region_count;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* Slot value: 0 empty, else region id + 1. */
struct idmap {
	size_t mask;
	size_t used;
	struct idmap *older; /* retired maps, kept alive for late readers */
	atomic_uint slots[];
};

static struct idmap *_Atomic name_map;
static struct idmap *_Atomic addr_map;

static uint64_t hash_bytes(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 29);
}

static uint64_t hash_addr(uintptr_t a)
{
	uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 31);
}

struct sp_region *sp_region_get(uint32_t id)
{
	if (id >= atomic_load_explicit(&region_count, memory_order_acquire))
		return NULL;
	struct sp_region *seg = atomic_load_explicit(&segments[id >> SEG_BITS], memory_order_acquire);
	return seg ? &seg[id & (SEG_SIZE - 1)] : NULL;
}

uint32_t sp_region_count(void)
{
	return atomic_load_explicit(&region_count, memory_order_acquire);
}

static bool key_equal(const struct sp_region *r, const char *name, uintptr_t addr)
{
	if (name)
		return r->addr == 0 && r->name && strcmp(r->name, name) == 0;
	return r->addr == addr;
}

/* Lock-free probe. Returns the id or SP_NO_REGION. */
static uint32_t map_find(struct idmap *m, uint64_t h, const char *name, uintptr_t addr)
{
	if (!m)
		return SP_NO_REGION;
	for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
		unsigned v = atomic_load_explicit(&m->slots[i], memory_order_acquire);
		if (v == 0)
			return SP_NO_REGION;
		struct sp_region *r = sp_region_get(v - 1);
		if (r && key_equal(r, name, addr))
			return v - 1;
	}
}

static uint64_t region_hash(const struct sp_region *r)
{
	return r->addr ? hash_addr(r->addr) : hash_bytes(r->name);
}

static void map_put(struct idmap *m, uint64_t h, uint32_t id)
{
	size_t i = h & m->mask;
	while (atomic_load_explicit(&m->slots[i], memory_order_relaxed))
		i = (i + 1) & m->mask;
	atomic_store_explicit(&m->slots[i], id + 1, memory_order_release);
	m->used++;
}

/* Caller holds table_lock. Grows the map to keep the load under 1/2. */
static struct idmap *map_reserve(struct idmap *_Atomic *slot)
{
	struct idmap *m = atomic_load_explicit(slot, memory_order_relaxed);
	if (m && (m->used + 1) * 2 <= m->mask + 1)
		return m;
	size_t size = m ? (m->mask + 1) * 2 : 256;
	struct idmap *n = calloc(1, sizeof *n + size * sizeof(atomic_uint));
	if (!n)
		return NULL;
	n->mask = size - 1;
	n->older = m;
	if (m) {
		for (size_t i = 0; i <= m->mask; i++) {
			unsigned v = atomic_load_explicit(&m->slots[i], memory_order_relaxed);
			if (v)
				map_put(n, region_hash(sp_region_get(v - 1)), v - 1);
		}
	}
	atomic_store_explicit(slot, n, memory_order_release);
	return n;
}

/* Caller holds table_lock. */
static struct sp_region *region_new(void)
{
	uint32_t id = atomic_load_explicit(&region_count, memory_order_relaxed);
	if (id >= SEG_SIZE * SEG_COUNT)
		return NULL;
	struct sp_region *seg = atomic_load_explicit(&segments[id >> SEG_BITS], memory_order_relaxed);
	if (!seg) {
		seg = calloc(SEG_SIZE, sizeof *seg);
		if (!seg)
			return NULL;
		atomic_store_explicit(&segments[id >> SEG_BITS], seg, memory_order_release);
	}
	struct sp_region *r = &seg[id & (SEG_SIZE - 1)];
	r->id = id;
	r->source_line = -1;
	return r;
}

static uint32_t intern(const char *name, uintptr_t addr, unsigned kind)
{
	struct idmap *_Atomic *slot = name ? &name_map : &addr_map;
	uint64_t h = name ? hash_bytes(name) : hash_addr(addr);
	uint32_t id = map_find(atomic_load_explicit(slot, memory_order_acquire), h, name, addr);
	if (id != SP_NO_REGION)
		return id;

	pthread_mutex_lock(&table_lock);
	struct idmap *m = atomic_load_explicit(slot, memory_order_relaxed);
	id = map_find(m, h, name, addr);
	if (id == SP_NO_REGION && (m = map_reserve(slot)) != NULL) {
		char *copy = name ? strdup(name) : NULL;
		struct sp_region *r = (!name || copy) ? region_new() : NULL;
		if (r) {
			r->name = copy;
			r->addr = addr;
			r->kind = kind;
			id = r->id;
			/* Publish the region before any map slot points at it. */
			atomic_store_explicit(&region_count, id + 1, memory_order_release);
			map_put(m, h, id);
		} else {
			free(copy);
		}
	}
	pthread_mutex_unlock(&table_lock);
	return id;
}

uint32_t sp_region_intern(const char *name, unsigned kind)
{
	if (!name)
		return SP_NO_REGION;
	return intern(name, 0, kind);
}

uint32_t sp_region_for_addr(uintptr_t addr)
{
	if (!addr)
		return SP_NO_REGION;
	return intern(NULL, addr, SP_KIND_FUNCTION);
}

uint32_t sp_region_new_for_addr(uintptr_t addr)
{
	if (!addr)
		return SP_NO_REGION;
	uint32_t id = SP_NO_REGION;
	pthread_mutex_lock(&table_lock);
	struct sp_region *r = region_new();
	if (r) {
		r->addr = addr;
		r->kind = SP_KIND_FUNCTION;
		id = r->id;
		atomic_store_explicit(&region_count, id + 1, memory_order_release);
	}
	pthread_mutex_unlock(&table_lock);
	return id;
}

/* Names and sources are set before the flush reads them, by the thread
 * doing the flush or under table_lock; readers on the hot path never read
 * them. */
void sp_region_set_name(struct sp_region *r, const char *name)
{
	char *copy = name ? strdup(name) : NULL;
	pthread_mutex_lock(&table_lock);
	if (r->addr) {
		/* Function regions keep their address key; the name is display only. */
		free((char *)r->name);
		r->name = copy;
		copy = NULL;
	}
	pthread_mutex_unlock(&table_lock);
	free(copy);
}

void sp_region_set_source(struct sp_region *r, const char *file, int64_t line)
{
	char *copy = file ? strdup(file) : NULL;
	pthread_mutex_lock(&table_lock);
	if (!r->source_file && copy) {
		r->source_file = copy;
		r->source_line = line;
		copy = NULL;
	} else if (r->source_line < 0 && !file) {
		r->source_line = line;
	}
	pthread_mutex_unlock(&table_lock);
	free(copy);
}
