/* SPDX-License-Identifier: MIT */
/*
 * summary_statistics of one row from its events (two-pass mean/m2), and
 * freeing a snapshot: the parts of snapshot.h that need no recording
 * runtime, shared with spill recovery and the merge of per-rank files.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

void sp_summary_compute(struct sp_summary_record *out, const int64_t *start, const int64_t *end,
			uint64_t n)
{
	memset(out, 0, sizeof *out);
	if (!n)
		return;
	out->minimum = INT64_MAX;
	out->maximum = INT64_MIN;
	out->start_minimum = INT64_MAX;
	out->end_maximum = INT64_MIN;
	for (uint64_t i = 0; i < n; i++) {
		int64_t d = end[i] - start[i];
		out->total += d;
		out->minimum = d < out->minimum ? d : out->minimum;
		out->maximum = d > out->maximum ? d : out->maximum;
		out->start_minimum = start[i] < out->start_minimum ? start[i] : out->start_minimum;
		out->end_maximum = end[i] > out->end_maximum ? end[i] : out->end_maximum;
	}
	out->first = end[0] - start[0];
	out->last = end[n - 1] - start[n - 1];
	out->mean = (double)out->total / (double)n;
	double m2 = 0;
	for (uint64_t i = 0; i < n; i++) {
		double dev = (double)(end[i] - start[i]) - out->mean;
		m2 += dev * dev;
	}
	out->m2 = m2;
}

void sp_snapshot_free(struct sp_snapshot *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->kinds);
	free(s->rows);
	free(s->start);
	free(s->end);
	free(s->thread);
	free(s->aux);
	free(s->threads);
	memset(s, 0, sizeof *s);
}
