/* SPDX-License-Identifier: MIT */
/*
 * The two paths of a generated MPI wrapper build the same record. The
 * generated wrappers are compiled into this program (their general paths
 * are the static sp_slow_* functions), so every sample call runs through
 * the general path with its communicator not cached (sp_mpi_resolve), the
 * general path with it cached (sp_mpi_resolve_fast) and the fast path
 * (checked eligible just before the call). Each record, and each request's
 * post-time record, is compared field by field with the values computed
 * here from the rank. Run under mpirun with 2 ranks.
 */
#include "mpi-wrappers.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { GENERAL_UNCACHED, GENERAL_CACHED, FAST, NPATHS };
static const char *const path_name[NPATHS] = { "general (comm looked up)",
					       "general (comm cached)", "fast" };

static int rank, other, fails;
static MPI_Comm rev; /* world reversed: world rank w is rank 1 - w here */

/* The communicator ids this rank gives out: world 0, self 1, then in
 * creation order (docs/MPI.md). */
enum { ID_REV = 2, ID_DUP = 3 };

static struct sp_mpi_rec want(int64_t bytes, int32_t peer, int32_t root, int32_t tag, int32_t comm)
{
	return (struct sp_mpi_rec){ .bytes = bytes, .peer = peer, .root = root, .tag = tag,
				    .comm = comm };
}

static void compare(const char *what, int path, const struct sp_mpi_rec *got,
		    const struct sp_mpi_rec *exp)
{
	const char *field[] = { "bytes", "peer", "root", "tag", "comm" };
	int64_t g[] = { got->bytes, got->peer, got->root, got->tag, got->comm };
	int64_t e[] = { exp->bytes, exp->peer, exp->root, exp->tag, exp->comm };
	for (int i = 0; i < 5; i++)
		if (g[i] != e[i]) {
			fprintf(stderr, "rank %d: %s, %s path: %s %lld, want %lld\n", rank, what,
				path_name[path], field[i], (long long)g[i], (long long)e[i]);
			fails++;
		}
}

/* The record of this thread's newest event, which must be a call of name. */
static void check_last(const char *name, int path, struct sp_mpi_rec exp)
{
	const struct sp_rec_thread *t = sp_tls;
	const struct sp_event *ev = t ? t->pos - 1 : NULL;
	const struct sp_region *r = ev ? sp_region_get(ev->region) : NULL;
	if (!r || !r->name || strcmp(r->name, name) != 0 || ev->end == SP_OPEN) {
		fprintf(stderr, "rank %d: %s, %s path: newest event is %s\n", rank, name,
			path_name[path], r && r->name ? r->name : "none");
		fails++;
		return;
	}
	struct sp_mpi_rec got;
	sp_mpi_rec_of(t->index, ev->aux, &got);
	compare(name, path, &got, &exp);
}

/* The record kept with a request at post time. */
static void check_req(const char *name, int path, MPI_Request req, struct sp_mpi_rec exp)
{
	const struct sp_mpi_rec *got = sp_mpi_req_get(req);
	if (!got) {
		fprintf(stderr, "rank %d: %s, %s path: request not kept\n", rank, name,
			path_name[path]);
		fails++;
		return;
	}
	compare(name, path, got, &exp);
}

/* Before a general-path call on comm: the communicator this thread resolved
 * last is another one (looked up) or comm itself (cached). */
static void prepare_general(int path, MPI_Comm comm)
{
	if (comm != MPI_COMM_NULL)
		sp_mpi_comm_new(path == GENERAL_CACHED ? comm : MPI_COMM_SELF);
}

/* Before a fast-path call: it must take the fast path. */
static void expect_fast(enum sp_mpi_fn fn, MPI_Comm comm)
{
	struct sp_mpi_fast probe;
	if (comm != MPI_COMM_NULL)
		sp_mpi_comm_new(comm);
	bool ok = comm == MPI_COMM_NULL ? sp_mpi_fast_begin(&probe, fn)
					: sp_mpi_fast_begin_comm(&probe, fn, comm);
	if (!ok) {
		fprintf(stderr, "rank %d: %s would not take the fast path\n", rank, sp_mpi_fn_names[fn]);
		fails++;
	}
}

/* Call wrapper `name` through `path` (a wrapper with both paths). */
#define CALL(path, comm, name, ...)                                                 \
	((path) == FAST ? (expect_fast(SP_MPI_##name, comm), name(__VA_ARGS__))     \
			: (prepare_general(path, comm), sp_slow_##name(__VA_ARGS__)))

/* Point to point on the reversed communicator: rank 0 sends 10 ints (tag
 * 5) to rank 1, which receives from MPI_ANY_SOURCE with MPI_ANY_TAG: its
 * peer and tag come from the status. */
static void send_recv(int path)
{
	int buf[10] = { 0 };
	int dest = 0; /* rank 1 - 1 in rev: world rank 1 */
	if (rank == 0) {
		CALL(path, rev, MPI_Send, buf, 10, MPI_INT, dest, 5, rev);
		check_last("MPI_Send", path, want(40, 1, -1, 5, ID_REV));
	} else {
		MPI_Status st;
		CALL(path, rev, MPI_Recv, buf, 10, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &st);
		check_last("MPI_Recv", path, want(40, 0, -1, 5, ID_REV));
	}
}

/* Nonblocking both ways (8 doubles, tag 7), completed by Wait and Waitall:
 * a completion's record is its requests' (one request: all of it; two:
 * their summed bytes). */
static void nonblocking(int path)
{
	double sb[8] = { 0 }, rb[8];
	int peer = 1 - other; /* the other rank, in rev */
	MPI_Request q[2];
	struct sp_mpi_rec one = want(64, other, -1, 7, ID_REV);
	CALL(path, rev, MPI_Irecv, rb, 8, MPI_DOUBLE, peer, 7, rev, &q[0]);
	check_last("MPI_Irecv", path, one);
	check_req("MPI_Irecv", path, q[0], one);
	CALL(path, rev, MPI_Isend, sb, 8, MPI_DOUBLE, peer, 7, rev, &q[1]);
	check_last("MPI_Isend", path, one);
	check_req("MPI_Isend", path, q[1], one);
	CALL(path, MPI_COMM_NULL, MPI_Wait, &q[0], MPI_STATUS_IGNORE);
	check_last("MPI_Wait", path, one);
	CALL(path, MPI_COMM_NULL, MPI_Wait, &q[1], MPI_STATUS_IGNORE);
	check_last("MPI_Wait", path, one);

	CALL(path, rev, MPI_Irecv, rb, 8, MPI_DOUBLE, peer, 7, rev, &q[0]);
	CALL(path, rev, MPI_Isend, sb, 8, MPI_DOUBLE, peer, 7, rev, &q[1]);
	/* GCC 12 reads mpi.h's array parameter as "20 bytes" and warns
	 * (-Wstringop-overflow) on MPI_STATUSES_IGNORE, a null pointer the
	 * standard allows: the ignored-status path is what is tested here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
	CALL(path, MPI_COMM_NULL, MPI_Waitall, 2, q, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
	check_last("MPI_Waitall", path, want(128, -1, -1, -1, -1));
}

/* Collectives: Bcast from rank 0 of rev (world rank 1), Allreduce, and a
 * call without message data (its id kept in the event itself). */
static void collectives(int path)
{
	long v[3] = { 1, 2, 3 }, s[3];
	CALL(path, rev, MPI_Bcast, v, 3, MPI_LONG, 0, rev);
	check_last("MPI_Bcast", path, want(24, -1, 1, -1, ID_REV));
	CALL(path, rev, MPI_Allreduce, v, s, 3, MPI_LONG, MPI_SUM, rev);
	check_last("MPI_Allreduce", path, want(24, -1, -1, -1, ID_REV));
	int r;
	CALL(path, rev, MPI_Comm_rank, rev, &r);
	check_last("MPI_Comm_rank", path, want(-1, -1, -1, -1, ID_REV));
}

/* File I/O on MPI_COMM_SELF: a call without a communicator in its record. */
static void file_io(int path, MPI_File fh)
{
	int data[16] = { 0 };
	CALL(path, MPI_COMM_NULL, MPI_File_write_at, fh, (MPI_Offset)(path * sizeof data), data, 16,
	     MPI_INT, MPI_STATUS_IGNORE);
	check_last("MPI_File_write_at", path, want(64, -1, -1, -1, -1));
}

/* Wrappers with a general path only: a communicator-creating call and a
 * one-sided call (its peer through the window's group, no communicator
 * id). */
static void general_only(int path, MPI_Win win)
{
	MPI_Comm dup;
	prepare_general(path, rev);
	MPI_Comm_dup(rev, &dup);
	check_last("MPI_Comm_dup", path, want(-1, -1, -1, -1, ID_REV));
	/* The new communicator has the next id (ID_DUP, then ID_DUP + 1). */
	int r;
	CALL(path, dup, MPI_Comm_rank, dup, &r);
	check_last("MPI_Comm_rank", path, want(-1, -1, -1, -1, ID_DUP + path));

	int one = rank;
	MPI_Win_fence(0, win);
	prepare_general(path, rev);
	MPI_Put(&one, 1, MPI_INT, 0, (MPI_Aint)rank, 1, MPI_INT, win); /* rev rank 0: world 1 */
	check_last("MPI_Put", path, want(4, 1, -1, -1, -1));
	MPI_Win_fence(0, win);
	MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
	int size;
	MPI_Init(&argc, &argv);
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi-paths: run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	other = 1 - rank;
	if (!atomic_load(&sp_recording) || !sp_mpi_on) {
		fprintf(stderr, "mpi-paths: not recording\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);

	char path[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/sp-mpi-paths-%d-%d.bin", dir ? dir : "/tmp", (int)getpid(), rank);
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
	    MPI_SUCCESS) {
		fprintf(stderr, "mpi-paths: cannot open %s\n", path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int winbuf[2] = { -1, -1 };
	MPI_Win win;
	MPI_Win_create(winbuf, sizeof winbuf, sizeof(int), MPI_INFO_NULL, rev, &win);

	/* The first call of a wrapper always takes the general path (its
	 * region id is not known yet), so the general paths come first. */
	for (int p = 0; p < NPATHS; p++) {
		send_recv(p);
		nonblocking(p);
		collectives(p);
		file_io(p, fh);
		if (p != FAST)
			general_only(p, win);
		PMPI_Barrier(MPI_COMM_WORLD);
	}

	MPI_Win_free(&win);
	MPI_File_close(&fh);
	unlink(path);
	MPI_Comm_free(&rev);
	int all = 0;
	PMPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi-paths: %s (%d mismatches)\n", all ? "FAIL" : "OK", all);
	MPI_Finalize();
	return all ? 1 : 0;
}
