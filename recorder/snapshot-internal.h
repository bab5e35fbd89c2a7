/* SPDX-License-Identifier: MIT */
/*
 * What snapshot.c (the plan, the fill in memory) shares with
 * snapshot-stream.c (the stream into the file). Recorder-internal.
 */
#ifndef SP_SNAPSHOT_INTERNAL_H
#define SP_SNAPSHOT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "recorder.h"
#include "snapshot.h"

/* What the first pass learned, kept for the second. */
struct sp_snapshot_plan {
	struct sp_clock_map cm;
	uint32_t nreg, nth;
	uint32_t *map, *last;
	uint64_t *count, *fill;
	int64_t *first_tick;      /* per name: its earliest start (ticks) */
	uint8_t *multi;
	uint8_t *has_aux;         /* per name: a call with an extension record */
	struct sp_rec_thread **th;
	bool any_aux;
};

/* A call the file holds: ended, of a region that exists (a call deleted by
 * MIN_DURATION has none). */
static inline bool sp_event_complete(const struct sp_event *e, uint32_t nreg)
{
	return e->region < nreg && e->end != SP_OPEN;
}

#endif /* SP_SNAPSHOT_INTERNAL_H */
