/* SPDX-License-Identifier: MIT */
/*
 * Communicator and window cache: small ids (world 0, self 1, then creation
 * order on this rank), sizes, and the local-rank -> world-rank table used to
 * record peers and roots as world ranks. Lookups are lock-free; inserts and
 * forgets take a mutex (slow path, once per communicator).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpi-record.h"

enum { KIND_COMM = 1, KIND_WIN = 2 };

/*
 * An entry is never freed while the process runs (the table of ids written
 * at finalize needs every communicator ever seen), so a lock-free reader can
 * hold a pointer to it safely. `dead` is set when the handle is freed: the
 * address may then be reused by a new object, which gets a new entry.
 */
struct comm_entry {
	uintptr_t key;           /* SP_MPI_KEY of the handle */
	int kind;
	atomic_int dead;
	int32_t id, size, remote_size, leader;
	int32_t nworld;          /* entries in world[] */
	int32_t *world;          /* rank (remote rank if inter) -> world rank; NULL: identity */
	bool inter;
};

#define SLOTS 4096 /* live communicators + windows at once */
static _Atomic(struct comm_entry *) slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct comm_entry **all;     /* communicators in id order */
static uint32_t nall, capall;
static MPI_Group world_group = MPI_GROUP_NULL;
static bool ready;

/* Open MPI's keys are aligned addresses, MPICH's consecutive indexes under
 * kind bits: both mixed before the multiplicative hash. */
static inline size_t hash(uintptr_t key)
{
	return (size_t)((key ^ key >> 4) * 0x9e3779b97f4a7c15ull >> 52) & (SLOTS - 1);
}

static struct comm_entry *find(uintptr_t key, int kind)
{
	size_t h = hash(key);
	for (size_t i = 0; i < SLOTS; i++) {
		struct comm_entry *e = atomic_load_explicit(&slots[(h + i) & (SLOTS - 1)],
							    memory_order_acquire);
		if (!e)
			return NULL;
		if (e->key == key && e->kind == kind &&
		    !atomic_load_explicit(&e->dead, memory_order_relaxed))
			return e;
	}
	return NULL;
}

/* World ranks of the members of group g (NULL on failure). */
static int32_t *translate_group(MPI_Group g, int32_t *ret_n)
{
	int n = 0;
	if (PMPI_Group_size(g, &n) != MPI_SUCCESS || n <= 0)
		return NULL;
	int *in = malloc((size_t)n * sizeof *in);
	int32_t *out = malloc((size_t)n * sizeof *out);
	if (!in || !out || world_group == MPI_GROUP_NULL) {
		free(in);
		free(out);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		in[i] = i;
	if (PMPI_Group_translate_ranks(g, n, in, world_group, out) != MPI_SUCCESS) {
		free(in);
		free(out);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (out[i] == MPI_UNDEFINED)
			out[i] = -1;
	free(in);
	*ret_n = n;
	return out;
}

static void fill_comm(struct comm_entry *e, MPI_Comm comm)
{
	int inter = 0, size = -1, rsize = -1;
	PMPI_Comm_test_inter(comm, &inter);
	PMPI_Comm_size(comm, &size);
	e->inter = inter;
	e->size = size;
	e->remote_size = -1;
	if (comm == MPI_COMM_WORLD) {
		e->nworld = size;
		e->leader = 0;
		return;
	}
	MPI_Group g = MPI_GROUP_NULL;
	if (inter) {
		PMPI_Comm_remote_size(comm, &rsize);
		e->remote_size = rsize;
		PMPI_Comm_remote_group(comm, &g);
	} else {
		PMPI_Comm_group(comm, &g);
	}
	if (g != MPI_GROUP_NULL) {
		e->world = translate_group(g, &e->nworld);
		PMPI_Group_free(&g);
	}
	e->leader = e->world && !inter ? e->world[0] : -1;
	if (inter) { /* leader of the local group */
		MPI_Group lg = MPI_GROUP_NULL;
		int32_t n = 0;
		PMPI_Comm_group(comm, &lg);
		int32_t *local = lg != MPI_GROUP_NULL ? translate_group(lg, &n) : NULL;
		e->leader = local ? local[0] : -1;
		free(local);
		if (lg != MPI_GROUP_NULL)
			PMPI_Group_free(&lg);
	}
}

static void fill_win(struct comm_entry *e, MPI_Win win)
{
	MPI_Group g = MPI_GROUP_NULL;
	e->id = -1;
	e->size = e->remote_size = e->leader = -1;
	if (PMPI_Win_get_group(win, &g) == MPI_SUCCESS && g != MPI_GROUP_NULL) {
		e->world = translate_group(g, &e->nworld);
		e->size = e->nworld;
		PMPI_Group_free(&g);
	}
}

static bool append_all(struct comm_entry *e)
{
	if (nall == capall) {
		uint32_t cap = capall ? 2 * capall : 64;
		struct comm_entry **v = realloc(all, cap * sizeof *v);
		if (!v)
			return false;
		all = v;
		capall = cap;
	}
	e->id = (int32_t)nall;
	all[nall++] = e;
	return true;
}

/* Insert under the lock, reusing a dead slot. */
static struct comm_entry *insert(uintptr_t key, int kind)
{
	pthread_mutex_lock(&lock);
	struct comm_entry *e = find(key, kind);
	if (e || !ready)
		goto out;
	e = calloc(1, sizeof *e);
	if (!e)
		goto out;
	e->key = key;
	e->kind = kind;
	if (kind == KIND_COMM) {
		fill_comm(e, (MPI_Comm)key);
		if (!append_all(e)) {
			free(e->world);
			free(e);
			e = NULL;
			goto out;
		}
	} else {
		fill_win(e, (MPI_Win)key);
	}
	size_t h = hash(key);
	for (size_t i = 0; i < SLOTS; i++) {
		size_t at = (h + i) & (SLOTS - 1);
		struct comm_entry *old = atomic_load(&slots[at]);
		if (!old || atomic_load(&old->dead)) {
			atomic_store_explicit(&slots[at], e, memory_order_release);
			goto out;
		}
	}
	/* Table full: the entry still has its id but is looked up again next
	 * time (cost only, no wrong data). */
out:
	pthread_mutex_unlock(&lock);
	return e;
}

static struct sp_mpi_view entry_view(const struct comm_entry *e)
{
	return (struct sp_mpi_view){ .id = e->id, .nworld = e->nworld, .inter = e->inter,
				     .world = e->world };
}

/* Last lookup of this thread: most code uses one communicator in a row.
 * Valid while no handle was forgotten since (generation). */
atomic_uint sp_mpi_comm_gen;
__thread struct sp_mpi_last sp_mpi_last SP_TLS_INITIAL_EXEC;
static __thread struct comm_entry *last_entry SP_TLS_INITIAL_EXEC;

static struct comm_entry *lookup(uintptr_t key, int kind)
{
	unsigned gen = atomic_load_explicit(&sp_mpi_comm_gen, memory_order_acquire);
	if (SP_LIKELY(sp_mpi_last.key == key && sp_mpi_last.gen == gen && last_entry &&
		      last_entry->kind == kind))
		return last_entry;
	struct comm_entry *e = find(key, kind);
	if (SP_UNLIKELY(!e))
		e = insert(key, kind);
	if (e && kind == KIND_COMM) {
		sp_mpi_last = (struct sp_mpi_last){ .key = key, .gen = gen, .view = entry_view(e) };
		last_entry = e;
	}
	return e;
}

void sp_mpi_comms_init(void)
{
	pthread_mutex_lock(&lock);
	if (world_group == MPI_GROUP_NULL)
		PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
	ready = true;
	pthread_mutex_unlock(&lock);
	lookup(SP_MPI_KEY(MPI_COMM_WORLD), KIND_COMM); /* id 0 */
	lookup(SP_MPI_KEY(MPI_COMM_SELF), KIND_COMM);  /* id 1 */
}

void sp_mpi_comm_new(MPI_Comm comm)
{
	if (comm != MPI_COMM_NULL)
		lookup(SP_MPI_KEY(comm), KIND_COMM);
}

static void forget(uintptr_t key, int kind)
{
	pthread_mutex_lock(&lock);
	struct comm_entry *e = find(key, kind);
	if (e) {
		atomic_store(&e->dead, 1);
		atomic_fetch_add(&sp_mpi_comm_gen, 1); /* drops every thread's last-lookup cache */
		/* Kept: world[] may still be read by a racing lookup of an
		 * erroneous program; it is small. */
	}
	pthread_mutex_unlock(&lock);
}

void sp_mpi_comm_forget(struct sp_mpi_call *c, MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF)
		return;
	if (c->active) { /* the free call itself records the id */
		c->comm = comm;
		sp_mpi_resolve(c);
	}
	forget(SP_MPI_KEY(comm), KIND_COMM);
}

void sp_mpi_win_forget(MPI_Win win)
{
	if (win != MPI_WIN_NULL)
		forget(SP_MPI_KEY(win), KIND_WIN);
}

int sp_mpi_comm_count_len(MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL)
		return -1;
	struct comm_entry *e = lookup(SP_MPI_KEY(comm), KIND_COMM);
	if (!e)
		return -1;
	return e->inter ? e->remote_size : e->size;
}

void sp_mpi_resolve(struct sp_mpi_call *c)
{
	if (c->resolved)
		return;
	struct comm_entry *e = NULL;
	if (c->comm != MPI_COMM_NULL)
		e = lookup(SP_MPI_KEY(c->comm), KIND_COMM);
	else if (c->win != MPI_WIN_NULL)
		e = lookup(SP_MPI_KEY(c->win), KIND_WIN);
	struct sp_mpi_view v = e ? entry_view(e) : (struct sp_mpi_view){ 0 };
	sp_mpi_rec_build(&c->rec, e ? &v : NULL, &c->a);
	c->resolved = true;
}

int sp_mpi_comm_rows(struct sp_mpi_comm_row **ret_rows, uint32_t *ret_n)
{
	pthread_mutex_lock(&lock);
	struct sp_mpi_comm_row *rows = calloc(nall + 1, sizeof *rows);
	if (rows)
		for (uint32_t i = 0; i < nall; i++)
			rows[i] = (struct sp_mpi_comm_row){ .id = all[i]->id, .size = all[i]->size,
				.remote_size = all[i]->remote_size, .leader = all[i]->leader };
	uint32_t n = nall;
	pthread_mutex_unlock(&lock);
	if (!rows)
		return -ENOMEM;
	*ret_rows = rows;
	*ret_n = n;
	return 0;
}
