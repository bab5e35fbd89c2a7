/* SPDX-License-Identifier: MIT */
/*
 * A LULESH-shaped profile for the reader benchmark, written through the
 * recorder's own writer (schema 2, exactly its layout): RANKS ranks of
 * about EVENTS_PER_RANK events each, one thread per rank, 300 regions,
 * calls nested 6-10 deep, mostly tiny accessor calls inside medium
 * functions, a few MPI calls per time step (as regions only: the MPI
 * columns are left out, their storage is the writer's business).
 * Deterministic (fixed seeds): the same arguments give the same file.
 * Usage: gen-lulesh OUT.h5 RANKS EVENTS_PER_RANK
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metadata.h"
#include "snapshot.h"
#include "writer.h"

enum {
	N_PHASES = 10, N_MID = 60, N_TINY = 220, N_MPI = 8,
	R_MAIN = 0, R_LEAP = 1, R_PHASE = 2, R_MID = R_PHASE + N_PHASES,
	R_TINY = R_MID + N_MID, R_MPI = R_TINY + N_TINY,
	N_REGIONS = R_MPI + N_MPI, /* 300 */
	MAX_KIDS = 12,
};

static const char *mpi_names[N_MPI] = {
	"MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce",
	"MPI_Wait", "MPI_Barrier", "MPI_Comm_rank", "MPI_Comm_size",
};

/* The static call graph: each region calls its kids, each kid reps times
 * (jittered by a quarter either way). */
struct kid { uint16_t region, reps; };
struct node { struct kid kid[MAX_KIDS]; int n; };

static struct node graph[N_REGIONS];
static char *names[N_REGIONS];

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static void add_kid(int r, int kid, int reps)
{
	if (graph[r].n < MAX_KIDS)
		graph[r].kid[graph[r].n++] = (struct kid){ (uint16_t)kid, (uint16_t)reps };
}

static void make_graph(void)
{
	char buf[128];

	rng_state = 0x9e3779b97f4a7c15ull;
	names[R_MAIN] = strdup("main");
	names[R_LEAP] = strdup("LagrangeLeapFrog(Domain&)");
	for (int i = 0; i < N_PHASES; i++) {
		snprintf(buf, sizeof(buf), "Phase%d(Domain&)", i);
		names[R_PHASE + i] = strdup(buf);
	}
	for (int i = 0; i < N_MID; i++) {
		snprintf(buf, sizeof(buf), "CalcKernel%02d(Domain&, double*, int)", i);
		names[R_MID + i] = strdup(buf);
	}
	for (int i = 0; i < N_TINY; i++) {
		snprintf(buf, sizeof(buf), "Domain::field%03d(int)", i);
		names[R_TINY + i] = strdup(buf);
	}
	for (int i = 0; i < N_MPI; i++)
		names[R_MPI + i] = strdup(mpi_names[i]);
	/* main: setup kernels, then the time steps (driven by gen_rank). */
	add_kid(R_MAIN, R_MID + 0, 1);
	add_kid(R_MAIN, R_MID + 1, 1);
	for (int i = 0; i < N_PHASES; i++)
		add_kid(R_LEAP, R_PHASE + i, 1);
	/* Each phase: its six kernels (every kernel is reached); phase 9
	 * also talks. */
	for (int i = 0; i < N_PHASES; i++)
		for (int j = 0; j < N_MID / N_PHASES; j++)
			add_kid(R_PHASE + i, R_MID + i * (N_MID / N_PHASES) + j, 1);
	add_kid(R_PHASE + 9, R_MPI + 0, 6);
	add_kid(R_PHASE + 9, R_MPI + 1, 6);
	add_kid(R_PHASE + 9, R_MPI + 2, 1);
	add_kid(R_PHASE + 9, R_MPI + 3, 1);
	/* Kernels: two times in three a deeper kernel (a higher id, so no
	 * cycles: chains of ~3), and loops over elements calling tiny
	 * accessors (every accessor is called from somewhere). */
	for (int i = 0; i < N_MID; i++) {
		int left = N_MID - i - 1;

		if (left > 0 && below(3) != 0)
			add_kid(R_MID + i, R_MID + i + 1 + (int)below(left < 12 ? left : 12), 1);
		add_kid(R_MID + i, R_TINY + (4 * i) % N_TINY, 4 + (int)below(20));
		add_kid(R_MID + i, R_TINY + (4 * i + 1) % N_TINY, 4 + (int)below(20));
		add_kid(R_MID + i, R_TINY + (4 * i + 2) % N_TINY, 4 + (int)below(20));
		add_kid(R_MID + i, R_TINY + (4 * i + 3) % N_TINY, 4 + (int)below(20));
		add_kid(R_MID + i, R_TINY + (int)below(N_TINY), 4 + (int)below(20));
	}
	/* A fifth of the accessors call another (a nested tiny call). */
	for (int i = 0; i < N_TINY - 1; i++)
		if (below(5) == 0)
			add_kid(R_TINY + i, R_TINY + i + 1 + (int)below(N_TINY - i - 1), 1);
}

/* One rank's events in entry order; count-only when s is NULL. */
struct gen {
	uint64_t n, cap;
	int64_t t;
	int64_t *s, *e;
	uint16_t *reg;
	uint64_t count[N_REGIONS];
	int rank, ranks;
};

static void call(struct gen *g, int r, int depth)
{
	uint64_t idx = g->n++;
	int64_t s;

	g->t += 2 + below(4);
	s = g->t;
	if (r >= R_MPI)
		g->t += 300 + below(3000);
	else if (r >= R_TINY)
		g->t += 12 + below(60);
	else
		g->t += 20 + below(200);
	/* Outliers, as on a real machine: now and then a call is preempted
	 * or interrupted (a wide range of durations per region). */
	if (below(20000) == 0)
		g->t += 2000 + below(2000000);
	for (int k = 0; k < graph[r].n && depth < 12; k++) {
		unsigned reps = graph[r].kid[k].reps, q = reps / 4;

		reps = reps - q + (q ? below(2 * q + 1) : 0);
		for (unsigned i = 0; i < reps; i++)
			call(g, graph[r].kid[k].region, depth + 1);
	}
	g->t += 2 + below(4);
	g->count[r]++;
	if (g->s) {
		g->s[idx] = s;
		g->e[idx] = g->t;
		g->reg[idx] = (uint16_t)r;
	}
}

/* main -> setup kernels, time steps until the budget is reached. */
static void gen_rank(struct gen *g, uint64_t budget)
{
	uint64_t idx;
	int64_t s;

	rng_state = 0x243f6a8885a308d3ull + 0x1000193ull * (uint64_t)(g->rank + 1);
	g->n = 0;
	g->t = 1000000000000ll + 1000 * g->rank;
	memset(g->count, 0, sizeof(g->count));
	idx = g->n++;
	s = g->t;
	for (int k = 0; k < graph[R_MAIN].n; k++)
		call(g, graph[R_MAIN].kid[k].region, 1);
	while (g->n + 20000 < budget)
		call(g, R_LEAP, 1);
	g->t += 100;
	g->count[R_MAIN]++;
	if (g->s) {
		g->s[idx] = s;
		g->e[idx] = g->t;
		g->reg[idx] = R_MAIN;
	}
}

int main(int argc, char **argv)
{
	struct sp_writer_layout layout = { 0 };
	struct sp_writer *w = NULL;
	struct gen g = { 0 };
	struct sp_run_meta meta = { 0 };
	struct sp_run_info run = { 0 };
	uint32_t id_of[N_REGIONS], n_ids = 0;
	const char *order[N_REGIONS];
	uint64_t (*counts)[N_REGIONS], per_rank_max = 0, row_at = 0, ev_at = 0;
	int ranks;
	uint64_t budget;
	int64_t t_end = 0;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: gen-lulesh OUT.h5 RANKS EVENTS_PER_RANK\n");
		return 2;
	}
	ranks = atoi(argv[2]);
	budget = strtoull(argv[3], NULL, 10);
	if (ranks < 1 || budget < 100000) {
		fprintf(stderr, "gen-lulesh: RANKS >= 1, EVENTS_PER_RANK >= 100000\n");
		return 2;
	}
	make_graph();
	counts = calloc((size_t)ranks, sizeof(*counts));
	for (int r = 0; r < N_REGIONS; r++)
		id_of[r] = UINT32_MAX;
	/* Pass 1: counts per (rank, region); ids in first-seen order (rank
	 * 0's first calls first, as the recorder assigns them). */
	g.ranks = ranks;
	for (int k = 0; k < ranks; k++) {
		g.rank = k;
		gen_rank(&g, budget);
		memcpy(counts[k], g.count, sizeof(g.count));
		if (g.n > per_rank_max)
			per_rank_max = g.n;
		for (int r = 0; r < N_REGIONS; r++) {
			if (g.count[r] && id_of[r] == UINT32_MAX) {
				id_of[r] = n_ids;
				order[n_ids++] = names[r];
			}
			if (g.count[r])
				layout.nrows++;
		}
		layout.nevents += g.n;
		t_end = g.t > t_end ? g.t : t_end;
	}
	layout.nnames = n_ids;
	layout.names = order;
	rc = sp_writer_create(argv[1], &layout, &w);
	g.s = malloc(per_rank_max * sizeof(*g.s));
	g.e = malloc(per_rank_max * sizeof(*g.e));
	g.reg = malloc(per_rank_max * sizeof(*g.reg));
	int64_t *rs = malloc(per_rank_max * sizeof(*rs)), *re = malloc(per_rank_max * sizeof(*re));

	if (!g.s || !g.e || !g.reg || !rs || !re)
		rc = rc ? rc : -ENOMEM;
	/* Pass 2: per rank, events into rows (counting sort by region id,
	 * stable: entry order within a row), written slice by slice. */
	for (int k = 0; rc == 0 && k < ranks; k++) {
		uint64_t off[N_REGIONS + 1] = { 0 }, fill[N_REGIONS];
		struct sp_writer_row rows[N_REGIONS];
		uint32_t nr = 0;

		g.rank = k;
		gen_rank(&g, budget);
		for (int r = 0; r < N_REGIONS; r++)
			if (g.count[r])
				off[id_of[r] + 1] = g.count[r];
		for (uint32_t i = 0; i < n_ids; i++)
			off[i + 1] += off[i];
		memcpy(fill, off, sizeof(fill));
		for (uint64_t i = 0; i < g.n; i++) {
			uint64_t j = fill[id_of[g.reg[i]]]++;

			rs[j] = g.s[i];
			re[j] = g.e[i];
		}
		for (uint32_t i = 0; i < n_ids; i++) {
			uint64_t n = off[i + 1] - off[i];

			if (n == 0)
				continue;
			rows[nr] = (struct sp_writer_row){
				.region = i, .rank = (uint32_t)k, .offset = ev_at + off[i],
				.count = n, .source_line = -1,
			};
			sp_summary_compute(&rows[nr].summary, rs + off[i], re + off[i], n);
			nr++;
		}
		rc = sp_writer_put_rows(w, row_at, nr, rows);
		if (rc == 0) {
			struct sp_writer_events ev = { .start = rs, .end = re };

			rc = sp_writer_put_events(w, ev_at, g.n, &ev);
		}
		row_at += nr;
		ev_at += g.n;
	}
	run.start_time_ns = 1000000000000ll - 5000000;
	run.finalize_time_ns = t_end + 1000;
	run.start_realtime_s = 1780000000;
	run.mpi_size = ranks;
	run.event_cost_ns = 37.5;
	if (rc == 0)
		rc = sp_meta_collect(&meta, &run);
	if (rc == 0)
		rc = sp_meta_set_int(&meta, "dropped_events", 0);
	if (rc == 0)
		rc = sp_writer_put_metadata(w, &meta);
	if (rc == 0) {
		rc = sp_writer_commit(w);
		w = NULL;
	}
	sp_writer_destroy(w);
	sp_meta_free(&meta);
	free(counts);
	free(g.s);
	free(g.e);
	free(g.reg);
	free(rs);
	free(re);
	if (rc) {
		fprintf(stderr, "gen-lulesh: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	printf("%s: %d ranks, %llu events, %llu rows, %u regions\n", argv[1], ranks,
	       (unsigned long long)layout.nevents, (unsigned long long)layout.nrows, n_ids);
	return 0;
}
