/* SPDX-License-Identifier: MIT */
/*
 * Exclusive time per (region, rank) row: the stored exclusive_totals (or
 * aggregate exclusives) when present, else the sum of the reconstructed
 * calls' exclusive time on that rank, computed against all regions.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"
#include "summary-tree.h"

static int64_t stored_exclusive(const struct sp_row *row)
{
	if (row->has_aggregate && row->count == 0)
		return row->agg_exclusive_ns;
	return row->exclusive_total_ns;
}

/*
 * Exclusive ns of the rows of rank slot k. On a nesting error the rows
 * without stored values get -2 and *ret_problem the message (malloc'ed).
 */
static int rank_exclusive(struct sp_reader *r, size_t slot,
			  const uint32_t *pos, size_t *rows, int64_t *sums,
			  char **ret_problem)
{
	size_t n = reader_rank_rows(r, slot, pos, rows);
	bool need = false;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		size_t row = rows[i];

		r->row_exclusive[row] = stored_exclusive(&r->rows[row]);
		if (r->row_exclusive[row] < 0) {
			if (r->rows[row].count == 0 && !r->rows[row].has_aggregate)
				r->row_exclusive[row] = 0;
			else
				need = true;
		}
	}
	if (!need)
		return 0;
	for (size_t i = 0; i < n; i++)
		sums[rows[i]] = 0;
	rc = exclusive_from_rows(r, r->ranks[slot], rows, n, sums);
	if (rc < 0) {
		if (rc == -ENOMEM)
			return rc;
		*ret_problem = strdup(sp_reader_last_error());
		for (size_t i = 0; i < n; i++)
			if (r->row_exclusive[rows[i]] < 0)
				r->row_exclusive[rows[i]] = -2;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (stored_exclusive(&r->rows[rows[i]]) < 0)
			r->row_exclusive[rows[i]] = sums[rows[i]];
	return 0;
}

void exclusive_from_sums(struct sp_reader *r, const size_t *rows, size_t n,
			 const int64_t *sums)
{
	for (size_t i = 0; i < n; i++) {
		const struct sp_row *row = &r->rows[rows[i]];
		int64_t v = stored_exclusive(row);

		if (v < 0)
			v = row->count == 0 && !row->has_aggregate ? 0 : sums[rows[i]];
		r->row_exclusive[rows[i]] = v;
	}
}

/*
 * Ranks are independent, so big files spread them over the CPUs this
 * process may use: each worker takes the next rank slot; each rank writes
 * only its own rows. Small files stay on one thread.
 */
struct excl_work {
	struct sp_reader *r;
	const uint32_t *pos;
	char **problems;          /* per rank slot */
	atomic_size_t next;
	atomic_int rc;
};

static void *excl_worker(void *arg)
{
	struct excl_work *w = arg;
	size_t *rows = malloc((w->r->n_rows + 1) * sizeof(*rows));
	/* Per thread: the sums are updated at every call, and rows of two
	 * ranks share cache lines (a shared array ran 2.4x slower per rank). */
	int64_t *sums = malloc((w->r->n_rows + 1) * sizeof(*sums));
	size_t k;

	if (!rows || !sums) {
		free(rows);
		free(sums);
		atomic_store(&w->rc, -ENOMEM);
		return NULL;
	}
	while (atomic_load(&w->rc) == 0 &&
	       (k = atomic_fetch_add(&w->next, 1)) < w->r->n_ranks) {
		int rc = rank_exclusive(w->r, k, w->pos, rows, sums,
					&w->problems[k]);

		if (rc < 0)
			atomic_store(&w->rc, rc);
	}
	free(rows);
	free(sums);
	return NULL;
}

static int all_ranks_exclusive(struct sp_reader *r, const uint32_t *pos)
{
	struct excl_work w = { r, pos, NULL, 0, 0 };
	int rc;

	w.problems = calloc(r->n_ranks + 1, sizeof(*w.problems));
	if (!w.problems)
		return -ENOMEM;
	reader_parallel(r, r->n_ranks, excl_worker, &w);
	rc = atomic_load(&w.rc);
	for (size_t k = 0; k < r->n_ranks; k++) {
		/* The first problem in rank order, as one thread would find it. */
		if (w.problems[k] && !r->nesting_problem)
			r->nesting_problem = w.problems[k];
		else
			free(w.problems[k]);
	}
	free(w.problems);
	return rc;
}

/* Position of each region in sp_reader_regions() order. */
int reader_region_positions(const struct sp_reader *r,
			    const struct sp_selection *sel, uint32_t **ret)
{
	uint32_t *order = NULL, *pos;
	int n = sp_reader_regions(r, sel, &order);

	if (n < 0)
		return n;
	pos = malloc((r->n_regions + 1) * sizeof(*pos));
	if (!pos) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_regions; i++)
		pos[i] = UINT32_MAX;
	for (int i = 0; i < n; i++)
		pos[order[i]] = (uint32_t)i;
	free(order);
	*ret = pos;
	return n;
}

int reader_compute_exclusive(struct sp_reader *r)
{
	uint32_t *pos = NULL;
	int n, rc;

	if (r->exclusive_done)
		return 0;
	n = reader_region_positions(r, NULL, &pos);
	if (n < 0)
		return n;
	rc = all_ranks_exclusive(r, pos);
	free(pos);
	if (rc == 0)
		r->exclusive_done = true;
	return rc;
}

const char *sp_reader_nesting_problem(struct sp_reader *r)
{
	if (reader_compute_exclusive(r) < 0)
		return NULL;
	return r->nesting_problem;
}
