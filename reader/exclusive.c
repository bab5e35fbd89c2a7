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

static int rank_exclusive(struct sp_reader *r, size_t slot,
			  const uint32_t *pos, size_t *rows, int64_t *sums)
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
	return 0;
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
	size_t *rows;
	int64_t *sums;
	int n, rc = 0;

	if (r->exclusive_done)
		return 0;
	n = reader_region_positions(r, NULL, &pos);
	if (n < 0)
		return n;
	rows = malloc((r->n_rows + 1) * sizeof(*rows));
	sums = malloc((r->n_rows + 1) * sizeof(*sums));
	if (!rows || !sums)
		rc = -ENOMEM;
	for (size_t k = 0; k < r->n_ranks && rc == 0; k++)
		rc = rank_exclusive(r, k, pos, rows, sums);
	free(rows);
	free(sums);
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
