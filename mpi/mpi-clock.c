/* SPDX-License-Identifier: MIT */
/*
 * One timeline across hosts. At MPI_Init and at MPI_Finalize rank 0 serves
 * every other rank in turn with SP_MPI_CLOCK_PINGPONGS ping-pongs; a rank
 * keeps the one of shortest round trip. Rank 0 read its clock inside that
 * round trip, so the offset (midpoint minus rank 0's reading) is off by at
 * most half of it. The two offsets give offset + drift, with which the
 * rank's snapshot is mapped onto rank 0's timeline at finalize. A rank
 * that reads rank 0's very CLOCK_MONOTONIC (same boot and time namespace)
 * is neither measured nor mapped: there is nothing to measure (unless the
 * test skew is set). Only PMPI calls, on the private communicator.
 */
#define _GNU_SOURCE
#include "mpi-clock.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "mpi-wait.h"

/* Tags of their own: the merge's messages on the same communicator never
 * match them (both are below the guaranteed MPI_TAG_UB of 32767). */
enum { TAG_PING = 23000, TAG_PONG, TAG_READY, TAG_GO, TAG_DONE };

/* Waiting ranks: "ready" this many ranks before their turn; until then
 * naps grow to LONG_NAP_NS, after it they are SHORT_NAP_NS. */
#define AHEAD 8
#define SHORT_NAP_NS 50000
#define LONG_NAP_NS 1000000

/* Past SP_MPI_CLOCK_PINGPONGS: a best round trip above GOOD_RTT_NS (an
 * HPC interconnect or shared memory does far better) means the two
 * processes were not running at once; a rank then tries again, at most
 * MAX_PINGPONGS times in all and for EXTRA_NS. */
#define GOOD_RTT_NS 100000
#define MAX_PINGPONGS 200
#define EXTRA_NS 20000000
/* No extra ping-pongs once a measurement has taken this long: at most
 * about a second more than 11 round trips per rank, whatever the ranks. */
#define BUDGET_NS 1000000000

/* What names a CLOCK_MONOTONIC: the kernel's boot id and the time
 * namespace's monotonic offset (containers, CRIU). */
#define ID_BYTES 128

/* t -> t + a + c (t - t0): the test skew, and the map onto rank 0's clock. */
struct lin {
	int64_t t0, a;
	double c;
};

/* One measurement against rank 0: its best ping-pong. */
struct sample {
	int64_t local;  /* this rank's clock at the midpoint of the round trip */
	int64_t ref;    /* rank 0's clock, read inside it */
	int64_t error;  /* |true offset - (local - ref)| <= error; -1 not measured */
};

/* Written at MPI_Init, read at MPI_Finalize, by the thread that calls them. */
static struct {
	struct sample init;
	bool same_boot;
	bool skewed;               /* SCOPE_PROFILER_TEST_CLOCK_SKEW applies */
	bool measured;             /* this rank takes part in the ping-pongs */
	int *todo;                 /* rank 0: the ranks it serves, in order */
	int ntodo;
	struct lin skew;           /* this rank's share of it */
	int64_t skew_offset, skew_origin;
	double skew_ppm;
	struct sp_clock_row *rows; /* rank 0, after finalize: every rank's */
	uint32_t nrows;
	bool mapped;               /* finalize applied map */
	struct lin map;
} clk = { .init = { 0, 0, -1 } };

static int64_t lin_at(const struct lin *m, int64_t t)
{
	return t + m->a + llround(m->c * (double)(t - m->t0));
}

static int64_t local_now(void)
{
	int64_t t = sp_monotonic_ns();
	return clk.skewed ? lin_at(&clk.skew, t) : t;
}

static void clock_id(char id[ID_BYTES])
{
	memset(id, 0, ID_BYTES);
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return;
	size_t n = fread(id, 1, 40, f);
	fclose(f);
	if (n < 16) {
		id[0] = '\0';
		return;
	}
	f = fopen("/proc/self/timens_offsets", "re");
	char line[96];
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "monotonic", 9) == 0)
			strncat(id, line, ID_BYTES - strlen(id) - 1);
	if (f)
		fclose(f);
}

/* SCOPE_PROFILER_TEST_CLOCK_SKEW=OFFSET_NS,DRIFT_PPM for rank `rank`: its
 * clock reads t + rank (OFFSET_NS + DRIFT_PPM 1e-6 (t - origin)). */
static bool parse_skew(const char *s, int rank, int64_t origin)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	long long off = strtoll(s, &end, 10);
	bool ok = end != s && *end == ',' && !errno;
	const char *p = end + 1;
	double ppm = ok ? strtod(p, &end) : 0;
	ok = ok && end != p && !*end && isfinite(ppm);
	/* keep the skewed clock increasing and within int64 */
	ok = ok && fabs((double)rank * ppm) < 1e5 && fabs((double)rank * (double)off) < 1e17;
	if (!ok) {
		sp_log(SP_LOG_WARN, "config", "ignoring SCOPE_PROFILER_TEST_CLOCK_SKEW=%s: not "
		       "OFFSET_NS,DRIFT_PPM within range", s);
		return false;
	}
	clk.skew_offset = off;
	clk.skew_ppm = ppm;
	clk.skew_origin = origin;
	clk.skew = (struct lin){ .t0 = origin, .a = rank * (int64_t)off, .c = rank * ppm * 1e-6 };
	return true;
}

/* Tell rank r the flag and the ns it may spend on extra ping-pongs:
 * EXTRA_NS while the measurement has taken less than BUDGET_NS, then
 * none. */
static void tell(MPI_Comm comm, int r, int tag, int64_t flag, int64_t t0)
{
	int64_t msg[2] = { flag, sp_monotonic_ns() - t0 < BUDGET_NS ? EXTRA_NS : 0 };
	PMPI_Send(msg, 2, MPI_INT64_T, r, tag, comm);
}

/*
 * Rank 0's side, for the ranks todo[0..n). Each rank hears "ready" AHEAD
 * ranks before its turn (it naps short from then on) and "go" one rank
 * before (it pings, then waits in its blocking receive for rank 0 to serve
 * it): the naps of the ready ranks are hidden behind the ranks served
 * meanwhile, and only the ready ones wake up often. Then its ping-pongs
 * until it says stop (msg[1] = 0).
 */
static void serve(MPI_Comm comm, const int *todo, int n, int64_t flag)
{
	int64_t msg[2], t0 = sp_monotonic_ns();
	for (int i = 0; i < AHEAD && i < n; i++)
		tell(comm, todo[i], TAG_READY, flag, t0);
	if (n > 0)
		tell(comm, todo[0], TAG_GO, flag, t0);
	for (int i = 0; i < n; i++) {
		int r = todo[i];
		if (i + AHEAD < n)
			tell(comm, todo[i + AHEAD], TAG_READY, flag, t0);
		if (i + 1 < n)
			tell(comm, todo[i + 1], TAG_GO, flag, t0);
		for (int k = 0; k <= MAX_PINGPONGS; k++) {
			if (PMPI_Recv(msg, 2, MPI_INT64_T, r, TAG_PING, comm,
				      MPI_STATUS_IGNORE) != MPI_SUCCESS || !msg[1])
				break;
			msg[0] = sp_monotonic_ns();
			if (PMPI_Send(msg, 2, MPI_INT64_T, r, TAG_PONG, comm) != MPI_SUCCESS)
				break;
		}
	}
}

/* Whether a rank pings once more: always up to SP_MPI_CLOCK_PINGPONGS,
 * then while its best round trip is still above GOOD_RTT_NS (a time slice
 * lost to another process, not the network), for at most `extra` ns. */
static bool ping_again(int k, int64_t best, int64_t since, int64_t extra)
{
	if (k < SP_MPI_CLOCK_PINGPONGS)
		return true;
	return k < MAX_PINGPONGS && best > GOOD_RTT_NS && sp_monotonic_ns() - since < extra;
}

/* Another rank's side: wait for "go" (its flag into *ret_flag), keep the
 * shortest round trip. */
static int ping(MPI_Comm comm, struct sample *out, int64_t *ret_flag)
{
	MPI_Request req;
	int64_t go[2];
	if (PMPI_Irecv(go, 2, MPI_INT64_T, 0, TAG_READY, comm, &req) != MPI_SUCCESS ||
	    sp_mpi_wait_idle(&req, SHORT_NAP_NS, LONG_NAP_NS) ||
	    PMPI_Irecv(go, 2, MPI_INT64_T, 0, TAG_GO, comm, &req) != MPI_SUCCESS ||
	    sp_mpi_wait_idle(&req, SHORT_NAP_NS, SHORT_NAP_NS))
		return -EIO;
	*ret_flag = go[0];
	int64_t msg[2], best = INT64_MAX, since = sp_monotonic_ns();
	for (int k = 0; ping_again(k, best, since, go[1]); k++) {
		int64_t t1 = local_now();
		msg[0] = t1;
		msg[1] = 1;
		if (PMPI_Send(msg, 2, MPI_INT64_T, 0, TAG_PING, comm) != MPI_SUCCESS ||
		    PMPI_Recv(msg, 2, MPI_INT64_T, 0, TAG_PONG, comm,
			      MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -EIO;
		int64_t t3 = local_now();
		if (t3 - t1 < best) {
			best = t3 - t1;
			out->local = t1 + best / 2;
			out->ref = msg[0];
		}
		if (k + 1 == SP_MPI_CLOCK_PINGPONGS)
			since = sp_monotonic_ns();
	}
	msg[0] = msg[1] = 0;
	if (PMPI_Send(msg, 2, MPI_INT64_T, 0, TAG_PING, comm) != MPI_SUCCESS)
		return -EIO;
	/* Half the round trip, rounded up, + 1 ns for the skew's rounding. */
	out->error = best - best / 2 + 1;
	return 0;
}

/*
 * One measurement, collective: rank 0 serves the ranks it measures in turn
 * and tells each `flag`, which lands in *ret_flag (a rank not measured
 * gets it with "done"); then all wait, idle, for the last one.
 */
static int measure(MPI_Comm comm, int rank, int size, int64_t flag, struct sample *out,
		   int64_t *ret_flag)
{
	int ret = 0;
	if (rank == 0) {
		int64_t t = sp_monotonic_ns();
		*out = (struct sample){ t, t, 0 };
		serve(comm, clk.todo, clk.ntodo, flag);
		*ret_flag = flag;
		sp_log(SP_LOG_DEBUG, "clock", "served %d of %d ranks in %.3f ms", clk.ntodo, size - 1,
		       (double)(sp_monotonic_ns() - t) / 1e6);
	} else if (clk.measured) {
		ret = ping(comm, out, ret_flag);
	} else {
		*out = (struct sample){ 0, 0, -1 };
	}
	/* The end, by a message from rank 0: a rank waiting in a sleep-polled
	 * MPI_Ibarrier made MPICH's round trips as long as its naps. */
	int64_t done = flag;
	MPI_Request req;
	for (int r = 1; rank == 0 && r < size; r++)
		PMPI_Send(&done, 1, MPI_INT64_T, r, TAG_DONE, comm);
	if (rank != 0 &&
	    (PMPI_Irecv(&done, 1, MPI_INT64_T, 0, TAG_DONE, comm, &req) != MPI_SUCCESS ||
	     sp_mpi_wait_idle(&req, SHORT_NAP_NS, LONG_NAP_NS)))
		return -EIO;
	if (rank != 0 && !clk.measured)
		*ret_flag = done;
	return ret;
}

/* Rank 0 learns which ranks it measures: those off its boot or time
 * namespace, and every rank under the test skew. False if it cannot
 * (then no rank is measured). */
static bool plan(MPI_Comm comm, int rank, int size)
{
	int need = rank != 0 && clk.measured;
	int *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
	int ok = rank != 0 || all;
	/* every rank learns whether rank 0 has room for the list */
	if (PMPI_Bcast(&ok, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !ok ||
	    PMPI_Gather(&need, 1, MPI_INT, all, 1, MPI_INT, 0, comm) != MPI_SUCCESS) {
		free(all);
		return false;
	}
	if (rank == 0) {
		for (int r = 1; r < size; r++)
			if (all[r])
				all[clk.ntodo++] = r;
		clk.todo = all;
	}
	return true;
}

void sp_mpi_clock_init(MPI_Comm comm)
{
	int rank = 0, size = 1;
	if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return;
	struct {
		char id[ID_BYTES];
		int64_t origin;
	} root;
	char mine[ID_BYTES];
	clock_id(mine);
	memcpy(root.id, mine, ID_BYTES);
	root.origin = sp_monotonic_ns();
	if (PMPI_Bcast(&root, sizeof root, MPI_BYTE, 0, comm) != MPI_SUCCESS)
		return;
	clk.same_boot = mine[0] && memcmp(mine, root.id, ID_BYTES) == 0;
	clk.skewed = parse_skew(sp_config.test_clock_skew, rank, root.origin);
	clk.measured = !clk.same_boot || clk.skewed;
	if (!plan(comm, rank, size))
		clk.measured = false; /* and rank 0 serves nobody */
	int64_t flag;
	if (measure(comm, rank, size, 1, &clk.init, &flag))
		clk.init.error = -1;
}

/* Row of this rank and the map onto rank 0's clock from the two samples
 * (either may be missing: then a constant offset, or nothing). */
static void fit(int rank, const struct sample *a, const struct sample *b, struct sp_clock_row *row,
		struct lin *map)
{
	bool ia = a->error >= 0, ib = b->error >= 0;
	*row = (struct sp_clock_row){ .rank = (uint32_t)rank,
		.same_boot = rank == 0 || clk.same_boot,
		.init_time = ia ? a->ref : 0, .init_offset = ia ? a->local - a->ref : 0,
		.init_error = a->error, .final_time = ib ? b->ref : 0,
		.final_offset = ib ? b->local - b->ref : 0, .final_error = b->error,
		.drift_error_ppm = -1, .error = -1 };
	*map = (struct lin){ 0 };
	int64_t d = row->final_offset - row->init_offset;
	/* A drift of half a second per second is no clock: noise of a short
	 * run. Below it the map stays increasing. */
	if (ia && ib && b->ref > a->ref && b->local > a->local &&
	    2 * (d < 0 ? -d : d) < b->local - a->local) {
		double span = (double)(b->ref - a->ref);
		row->drift_ppm = (double)d / span * 1e6;
		row->drift_error_ppm = (double)(a->error + b->error) / span * 1e6;
		row->error = a->error > b->error ? a->error : b->error;
		*map = (struct lin){ .t0 = a->local, .a = -row->init_offset,
				     .c = -(double)d / (double)(b->local - a->local) };
	} else if (ia || ib) {
		const struct sample *o = ib && (!ia || b->error <= a->error) ? b : a;
		row->error = o->error;
		*map = (struct lin){ .t0 = o->local, .a = o->ref - o->local };
	}
	row->applied = rank != 0 && row->error >= 0 && (!clk.same_boot || clk.skewed);
}

static int64_t map_since(const struct lin *m, int64_t t)
{
	if (t <= 0)
		return t; /* -1: never */
	t = lin_at(m, t);
	return t > 0 ? t : 0;
}

/*
 * Every absolute time of s through m: event and thread starts and ends,
 * the rows' *_since times; the rows' summaries are recomputed from the
 * events. Both ends of a call go through the same map, which never
 * decreases (|c| < 1): a call inside another stays inside it, which the
 * reader's call-stack check requires. Moving a call by its start's shift
 * alone would keep its duration to the ns but let a child end after its
 * parent by |c| x (child start - parent start), ms for a long main().
 */
static void transform(struct sp_snapshot *s, const struct lin *m)
{
	bool times = s->start && s->end;
	for (uint64_t i = 0; times && i < s->nmem; i++) {
		s->start[i] = lin_at(m, s->start[i]);
		s->end[i] = lin_at(m, s->end[i]);
	}
	for (uint32_t i = 0; s->threads && i < s->nthreads; i++) {
		s->threads[i].start_ns = lin_at(m, s->threads[i].start_ns);
		s->threads[i].end_ns = lin_at(m, s->threads[i].end_ns);
	}
	for (uint32_t i = 0; i < s->nrows; i++) {
		struct sp_snap_row *r = &s->rows[i];
		r->throttled_since_ns = map_since(m, r->throttled_since_ns);
		r->patched_since_ns = map_since(m, r->patched_since_ns);
		if (times && r->count && r->offset + r->count <= s->nmem)
			sp_summary_compute(&r->summary, s->start + r->offset, s->end + r->offset,
					   r->count);
	}
	if (s->nevents && s->first_start_ns != INT64_MAX)
		s->first_start_ns = lin_at(m, s->first_start_ns);
}

void sp_mpi_clock_finalize(struct sp_snapshot *s, MPI_Comm comm)
{
	int rank = 0, size = 1;
	if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return;
	/* The test skew stands for a clock that was off all along. */
	if (clk.skewed)
		transform(s, &clk.skew);
	struct sp_clock_row *all = NULL;
	int64_t gather = 1; /* rank 0 has room for the rows: told with "go" */
	if (rank == 0) {
		all = calloc((size_t)size, sizeof *all);
		gather = all != NULL;
	}
	struct sample fin = { 0, 0, -1 };
	if (measure(comm, rank, size, gather, &fin, &gather))
		fin.error = -1;
	free(clk.todo);
	clk.todo = NULL;
	clk.ntodo = 0;
	struct sp_clock_row row;
	struct lin map;
	fit(rank, &clk.init, &fin, &row, &map);
	if (row.applied)
		transform(s, &map);
	clk.mapped = row.applied;
	clk.map = map;
	if (rank != 0 && !clk.measured)
		sp_log(SP_LOG_DEBUG, "clock", "rank %d: %s, not measured", rank,
		       clk.same_boot ? "rank 0's clock (same boot and time namespace)"
				     : "rank 0 could not plan the measurement");
	else
		sp_log(SP_LOG_DEBUG, "clock", "rank %d: offset %lld ns +- %lld at init, %lld +- %lld "
		       "at finalize, drift %.3f ppm +- %.3f, %s", rank, (long long)row.init_offset,
		       (long long)row.init_error, (long long)row.final_offset,
		       (long long)row.final_error, row.drift_ppm, row.drift_error_ppm,
		       row.applied ? "mapped" : "not mapped");
	if (gather && PMPI_Gather(&row, sizeof row, MPI_BYTE, all, sizeof row, MPI_BYTE, 0,
				  comm) == MPI_SUCCESS && rank == 0) {
		clk.rows = all;
		clk.nrows = (uint32_t)size;
		return;
	}
	free(all);
}

void sp_mpi_clock_apply(struct sp_snapshot *s)
{
	if (clk.skewed)
		transform(s, &clk.skew);
	if (clk.mapped)
		transform(s, &clk.map);
}

int64_t sp_mpi_clock_map_ns(const void *ctx, int64_t t)
{
	(void)ctx;
	if (clk.skewed)
		t = lin_at(&clk.skew, t);
	return clk.mapped ? lin_at(&clk.map, t) : t;
}

int sp_mpi_clock_add_group(struct sp_groups *g)
{
	if (!clk.rows)
		return 0;
	const struct sp_clock_attrs a = { .pingpongs = SP_MPI_CLOCK_PINGPONGS,
		.test_skew = clk.skewed, .skew_offset_ns = clk.skew_offset,
		.skew_drift_ppb = llround(clk.skew_ppm * 1e3), .skew_origin_ns = clk.skew_origin };
	/* kept: every file this finalize writes (the test copy too) has it */
	return sp_groups_add_clock(g, clk.rows, clk.nrows, &a);
}
