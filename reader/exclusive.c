/* SPDX-License-Identifier: MIT */
/*
 * Exclusive time per (region, rank) row: the stored exclusive_totals (or
 * aggregate exclusives) when present, else the sum of the reconstructed
 * calls' exclusive time on that rank, computed against all regions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"

static int64_t stored_exclusive(const struct sp_row *row)
{
	if (row->has_aggregate && row->count == 0)
		return row->agg_exclusive_ns;
	return row->exclusive_total_ns;
}

static int rank_exclusive(struct sp_reader *r, uint32_t rank,
			  const uint32_t *order, size_t n_order, size_t *rows)
{
	int64_t *sums;
	size_t n = 0;
	bool need = false;
	int rc = 0;

	for (size_t i = 0; i < n_order; i++) {
		long row = sp_reader_row_find(r, order[i], rank);

		if (row < 0)
			continue;
		rows[n++] = (size_t)row;
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
	sums = calloc(r->n_rows + 1, sizeof(*sums));
	if (!sums)
		return -ENOMEM;
	rc = exclusive_from_rows(r, rank, rows, n, sums);
	if (rc < 0) {
		free(sums);
		if (rc == -ENOMEM)
			return rc;
		if (!r->nesting_problem)
			r->nesting_problem = strdup(sp_reader_last_error());
		for (size_t i = 0; i < n; i++)
			if (r->row_exclusive[rows[i]] < 0)
				r->row_exclusive[rows[i]] = -2;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (stored_exclusive(&r->rows[rows[i]]) < 0)
			r->row_exclusive[rows[i]] = sums[rows[i]];
	free(sums);
	return 0;
}

int reader_compute_exclusive(struct sp_reader *r)
{
	uint32_t *order = NULL;
	size_t *rows;
	int n, rc = 0;

	if (r->exclusive_done)
		return 0;
	n = sp_reader_regions(r, NULL, &order);
	if (n < 0)
		return n;
	rows = malloc(((size_t)n + 1) * sizeof(*rows));
	if (!rows) {
		free(order);
		return -ENOMEM;
	}
	for (size_t k = 0; k < r->n_ranks && rc == 0; k++)
		rc = rank_exclusive(r, r->ranks[k], order, (size_t)n, rows);
	free(rows);
	free(order);
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
