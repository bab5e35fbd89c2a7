/* SPDX-License-Identifier: MIT */
/*
 * Function names resolved once per node at finalize. Naming reads the
 * program's symbol table and DWARF (libdw): ~8 ms of CPU a rank for a C++
 * proxy of 450 functions, the same files on every rank of a node. Instead,
 * every rank sends the functions it has not named yet (module file by path,
 * device and inode, and offset) to the node's last rank, which resolves each
 * distinct one once and sends every rank its answers (the last: world rank
 * 0, the first of its node, loads HDF5 for the file's layout meanwhile).
 * The answers are what the rank's own symbolizer would give for the same
 * file; anything not answered (another file at the path, a module without
 * an absolute path, no memory) the rank names itself, as before. Five
 * collective rounds on the node communicator:
 *   Gather    the request sizes (the answering rank asks nothing)
 *   Bcast     whether it takes them (they fit an int and its memory)
 *   Gatherv   the requests
 *   Scatter   the answer sizes (0: none)
 *   Scatterv  the answers
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "functions.h"
#include "log.h"
#include "mpi-record.h"
#include "mpi-wait.h"

/* The answering rank: the answers to every request, back to back; lens
 * and displs per rank. Returns the buffer or NULL (then every len is 0). */
static char *answer_all(const char *reqs, const int *rlens, const int *rdispls, int size,
			int *alens, int *adispls)
{
	char **each = calloc((size_t)size, sizeof *each);
	size_t *n = calloc((size_t)size, sizeof *n);
	size_t total = 0;
	for (int i = 0; each && n && i < size; i++) {
		if (rlens[i] > 0)
			each[i] = sp_fn_names_answer(reqs + rdispls[i], (size_t)rlens[i], &n[i]);
		if (!each[i] || n[i] > (size_t)INT_MAX - total)
			n[i] = 0; /* no answer: the rank names its own */
		total += n[i];
	}
	char *all = each && n && total ? malloc(total) : NULL;
	size_t at = 0;
	for (int i = 0; i < size; i++) {
		alens[i] = all ? (int)n[i] : 0;
		adispls[i] = (int)at;
		if (all && n[i])
			memcpy(all + at, each[i], n[i]);
		at += all ? n[i] : 0;
		if (each)
			free(each[i]);
	}
	free(each);
	free(n);
	return all;
}

void sp_mpi_names_share(bool mine, void (*meanwhile)(void))
{
	MPI_Comm node = sp_mpi_node_comm;
	int rank = 0, size = 1;
	if (node == MPI_COMM_NULL || PMPI_Comm_rank(node, &rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(node, &size) != MPI_SUCCESS || size < 2)
		return;
	const int root = size - 1;
	int64_t t0 = sp_monotonic_ns();
	char *req = NULL;
	size_t len = 0;
	/* every rank's request fits an int, and so do all of them together */
	if (rank != root && mine &&
	    (sp_fn_names_request(&req, &len) < 0 || len > (size_t)(INT_MAX / size))) {
		free(req);
		req = NULL;
		len = 0;
	}
	int n = (int)len, ok = 0;
	int *rlens = NULL, *rdispls = NULL, *alens = NULL, *adispls = NULL;
	char *reqs = NULL;
	if (rank == root) {
		rlens = calloc((size_t)size, sizeof *rlens);
		rdispls = calloc((size_t)size, sizeof *rdispls);
		alens = calloc((size_t)size, sizeof *alens);
		adispls = calloc((size_t)size, sizeof *adispls);
	}
	int gathered = sp_mpi_gather(&n, 1, MPI_INT, rlens, 1, MPI_INT, root, node) == MPI_SUCCESS;
	if (gathered && rank == root && rlens && rdispls && alens && adispls) {
		size_t total = 0;
		for (int i = 0; i < size; i++) {
			rdispls[i] = (int)total;
			total += rlens[i] > 0 ? (size_t)rlens[i] : 0;
		}
		reqs = total && total <= INT_MAX ? malloc(total) : NULL;
		ok = reqs != NULL;
	}
	if (sp_mpi_bcast(&ok, 1, MPI_INT, root, node) != MPI_SUCCESS)
		ok = 0;
	int alen = 0;
	char *all = NULL, *ans = NULL;
	if (ok) {
		if (sp_mpi_gatherv(req, n, MPI_CHAR, reqs, rlens, rdispls, MPI_CHAR, root, node) ==
			MPI_SUCCESS &&
		    rank == root)
			all = answer_all(reqs, rlens, rdispls, size, alens, adispls);
		else if (meanwhile)
			meanwhile(); /* the others wait for the answers anyway */
		sp_mpi_await(node, root); /* asleep, on a crowded node */
		if (sp_mpi_scatter(alens, 1, MPI_INT, &alen, 1, MPI_INT, root, node) != MPI_SUCCESS)
			alen = 0;
		/* without the memory for its answers a rank fails its receive
		 * (MPI_ERRORS_RETURN) and names its own */
		ans = alen > 0 ? malloc((size_t)alen) : NULL;
		if (sp_mpi_scatterv(all, alens, adispls, MPI_CHAR, ans, ans ? alen : 0, MPI_CHAR,
				  root, node) == MPI_SUCCESS &&
		    ans)
			sp_fn_names_apply(ans, (size_t)alen);
	}
	if (rank == root)
		sp_log(SP_LOG_DEBUG, "mpi", "names: the node's %d other ranks answered in %.3f ms",
		       size - 1, (double)(sp_monotonic_ns() - t0) / 1e6);
	free(ans);
	free(all);
	free(reqs);
	free(req);
	free(rlens);
	free(rdispls);
	free(alens);
	free(adispls);
}
