/* SPDX-License-Identifier: MIT */
/*
 * What thread.c shares with spill.c only: the chunk layout and the raw
 * thread list. Nothing outside the recorder includes this.
 */
#ifndef SP_THREAD_INTERNAL_H
#define SP_THREAD_INTERNAL_H

#include "recorder.h"

struct sp_chunk {
	struct sp_chunk *next;  /* older chunk */
	size_t capacity;        /* events */
	size_t used;            /* valid once the thread moved on, or at flush */
	size_t mapped;          /* bytes if mmap'ed, 0 if malloc'ed */
	size_t ready;           /* events of it populated (all if malloc'ed) */
	struct sp_event events[];
};

/* Head of the thread list (newest first) without taking its lock: nodes are
 * never freed and `next` never changes once published, so a signal handler
 * may walk it. */
SP_HIDDEN struct sp_rec_thread *sp_thread_list_unlocked(void);
/* Events in a chunk: `used`, or up to pos for the thread's current chunk. */
static inline size_t sp_chunk_count(const struct sp_rec_thread *t, const struct sp_chunk *c,
				    const struct sp_event *pos)
{
	return c == t->chunks ? (size_t)(pos - c->events) : c->used;
}
/* The chunk before `c` in age order (older), walking from the newest. */
static inline struct sp_chunk *sp_chunk_oldest_after(struct sp_chunk *newest, const struct sp_chunk *stop)
{
	struct sp_chunk *c = newest;
	if (!c || c == stop)
		return NULL;
	while (c->next != stop)
		c = c->next;
	return c;
}
/* Release a chunk's memory and its share of the memory cap. */
SP_HIDDEN void sp_chunk_release(struct sp_chunk *c);

#endif /* SP_THREAD_INTERNAL_H */
