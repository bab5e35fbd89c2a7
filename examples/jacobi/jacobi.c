/* SPDX-License-Identifier: MIT */
/*
 * 2-D Jacobi heat solver: the README's first example. The N x N plate is
 * split over a 2-D Cartesian grid of ranks; each iteration exchanges halos
 * with non-blocking send/recv, sweeps, and every `check` iterations
 * computes the global residual with MPI_Allreduce. Compiled with
 * -finstrument-functions so its functions appear next to the MPI calls.
 *
 *   jacobi [N] [iterations] [check]     (defaults 256 200 10)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct grid {
	int nx, ny;             /* interior points of this rank */
	int x0, y0;             /* global index of the first interior point */
	double *u, *unew;       /* (nx + 2) x (ny + 2), row-major, halo of 1 */
	MPI_Comm cart;
	int north, south, west, east;
	MPI_Datatype column;    /* one interior column, strided */
};

#define AT(g, a, i, j) ((a)[(size_t)(i) * ((g)->ny + 2) + (j)])

static void split(int n, int parts, int me, int *len, int *first)
{
	int base = n / parts, extra = n % parts;
	*len = base + (me < extra);
	*first = me * base + (me < extra ? me : extra);
}

static void grid_init(struct grid *g, int n)
{
	int size, dims[2] = { 0, 0 }, periods[2] = { 0, 0 }, coords[2];
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Dims_create(size, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &g->cart);
	int me;
	MPI_Comm_rank(g->cart, &me);
	MPI_Cart_coords(g->cart, me, 2, coords);
	MPI_Cart_shift(g->cart, 0, 1, &g->north, &g->south);
	MPI_Cart_shift(g->cart, 1, 1, &g->west, &g->east);
	split(n, dims[0], coords[0], &g->nx, &g->x0);
	split(n, dims[1], coords[1], &g->ny, &g->y0);
	size_t cells = (size_t)(g->nx + 2) * (g->ny + 2);
	g->u = calloc(cells, sizeof *g->u);
	g->unew = calloc(cells, sizeof *g->unew);
	MPI_Type_vector(g->nx, 1, g->ny + 2, MPI_DOUBLE, &g->column);
	MPI_Type_commit(&g->column);
}

/* Boundary: the top edge of the plate is held at 100 degrees. */
static void apply_boundary(struct grid *g, int n)
{
	if (g->north == MPI_PROC_NULL)
		for (int j = 0; j < g->ny + 2; j++)
			AT(g, g->u, 0, j) = AT(g, g->unew, 0, j) = 100.0;
	(void)n;
}

static void exchange_halo(struct grid *g)
{
	MPI_Request req[8];
	int nx = g->nx, ny = g->ny;
	double *u = g->u;
	MPI_Irecv(&AT(g, u, 0, 1), ny, MPI_DOUBLE, g->north, 1, g->cart, &req[0]);
	MPI_Irecv(&AT(g, u, nx + 1, 1), ny, MPI_DOUBLE, g->south, 2, g->cart, &req[1]);
	MPI_Irecv(&AT(g, u, 1, 0), 1, g->column, g->west, 3, g->cart, &req[2]);
	MPI_Irecv(&AT(g, u, 1, ny + 1), 1, g->column, g->east, 4, g->cart, &req[3]);
	MPI_Isend(&AT(g, u, 1, 1), ny, MPI_DOUBLE, g->north, 2, g->cart, &req[4]);
	MPI_Isend(&AT(g, u, nx, 1), ny, MPI_DOUBLE, g->south, 1, g->cart, &req[5]);
	MPI_Isend(&AT(g, u, 1, 1), 1, g->column, g->west, 4, g->cart, &req[6]);
	MPI_Isend(&AT(g, u, 1, ny), 1, g->column, g->east, 3, g->cart, &req[7]);
	MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
}

static double jacobi_sweep(struct grid *g)
{
	double diff = 0.0;
	for (int i = 1; i <= g->nx; i++)
		for (int j = 1; j <= g->ny; j++) {
			double v = 0.25 * (AT(g, g->u, i - 1, j) + AT(g, g->u, i + 1, j) +
					   AT(g, g->u, i, j - 1) + AT(g, g->u, i, j + 1));
			double d = v - AT(g, g->u, i, j);
			diff += d * d;
			AT(g, g->unew, i, j) = v;
		}
	double *t = g->u;
	g->u = g->unew;
	g->unew = t;
	return diff;
}

static double global_residual(struct grid *g, double local)
{
	double sum = 0.0;
	MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, g->cart);
	return sqrt(sum);
}

/* Sum over the plate, gathered in a fixed order so it is reproducible. */
static double checksum(struct grid *g)
{
	double local = 0.0, total = 0.0;
	for (int i = 1; i <= g->nx; i++)
		for (int j = 1; j <= g->ny; j++)
			local += AT(g, g->u, i, j) * (1.0 + 1e-3 * (g->x0 + i) + 1e-6 * (g->y0 + j));
	MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, g->cart);
	return total;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int n = argc > 1 ? atoi(argv[1]) : 256;
	int iters = argc > 2 ? atoi(argv[2]) : 200;
	int check = argc > 3 ? atoi(argv[3]) : 10;
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	struct grid g;
	grid_init(&g, n);
	apply_boundary(&g, n);
	double res = 0.0;
	for (int it = 1; it <= iters; it++) {
		exchange_halo(&g);
		double local = jacobi_sweep(&g);
		apply_boundary(&g, n);
		if (it % check == 0)
			res = global_residual(&g, local);
	}
	double sum = checksum(&g);
	if (rank == 0)
		printf("jacobi: N=%d ranks=%d iterations=%d residual=%.12e checksum=%.12e\n", n,
		       size, iters, res, sum);
	MPI_Type_free(&g.column);
	MPI_Comm_free(&g.cart);
	free(g.u);
	free(g.unew);
	MPI_Finalize();
	return 0;
}
