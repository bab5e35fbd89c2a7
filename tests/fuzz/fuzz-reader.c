/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the reader library: the input bytes become a file
 * (an anonymous memfd, opened through /proc/self/fd/N, so no disk I/O) that
 * goes through sp_reader_open and then every analysis entry point: region
 * order, pooled and per-row statistics, time origins, exclusive time, the
 * summary tree and the call stack of each rank. Oracles: no sanitizer
 * report, and a failed open leaves exactly one line naming the file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scope-profiler-reader.h"

static char path[64];
static int fd = -1;

static int put_input(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		fd = memfd_create("sp-fuzz", 0);
		if (fd < 0)
			return -1;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0)
		return -1;
	for (size_t done = 0; done < size;) {
		ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);

		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

static void check_error_message(int rc)
{
	const char *msg = sp_reader_last_error();

	/* The CLI prints this as its one line: it must exist, name the file
	 * and be a single line. (-ENOMEM from a huge claimed size is fine.) */
	if (!msg[0] || strchr(msg, '\n') || !strstr(msg, path)) {
		fprintf(stderr, "bad error message for rc=%d: '%s'\n", rc, msg);
		abort();
	}
}

/* Every event column whole (the MPI columns of the row layout are built
 * here) and per row, first and last value read: ASan sees any overrun. */
static void exercise_columns(struct sp_reader *r)
{
	size_t n = sp_reader_num_events(r);
	volatile uint64_t sink = 0;

	for (int c = 0; c < SP_COL_COUNT; c++) {
		const int64_t *v = sp_reader_column(r, (enum sp_column)c);

		if (v && n)
			sink ^= (uint64_t)v[0] ^ (uint64_t)v[n - 1];
		if (!v != !sp_reader_has_column(r, (enum sp_column)c))
			abort();
		for (size_t i = 0; i < sp_reader_num_rows(r) && i < 256; i++) {
			const struct sp_row *row = sp_reader_row(r, i);
			const int64_t *w = sp_reader_row_column(r, i, (enum sp_column)c);

			if (w && row->count)
				sink ^= (uint64_t)w[0] ^ (uint64_t)w[row->count - 1];
		}
	}
	(void)sink;
}

static void exercise_stack(struct sp_reader *r, uint32_t rank)
{
	struct sp_call_stack *cs = NULL;
	char buf[256];

	if (sp_call_stack_build(r, rank, INT64_MIN, NULL, &cs) < 0)
		return;
	for (size_t i = 0; i < sp_call_stack_count(cs); i++) {
		struct sp_call call;

		if (sp_call_stack_get(cs, i, &call) < 0)
			abort();
		if (i < 64 || i + 64 > sp_call_stack_count(cs))
			sp_call_stack_path(cs, r, i, buf, sizeof(buf));
	}
	sp_call_stack_destroy(cs);
}

static void exercise(struct sp_reader *r)
{
	struct sp_selection *sel = NULL;
	struct sp_summary *sum = NULL;
	const uint32_t *ranks;
	uint32_t *ids = NULL;
	struct sp_times times;
	size_t n_ranks;
	int n;

	sp_reader_times(r, &times);
	n = sp_reader_regions(r, NULL, &ids);
	for (int i = 0; i < n; i++) {
		struct sp_stats st;

		sp_reader_region_stats(r, ids[i], NULL, &st);
	}
	free(ids);
	for (size_t i = 0; i < sp_reader_num_rows(r) && i < 256; i++) {
		struct sp_stats st;

		sp_reader_row_stats(r, i, &st);
	}
	(void)sp_reader_nesting_problem(r);
	exercise_columns(r);
	if (sp_summary_build(r, NULL, SP_SORT_TOTAL, &sum) == 0) {
		for (size_t i = 0; i < sp_summary_count(sum); i++)
			(void)sp_summary_get(sum, i);
		sp_summary_destroy(sum);
	}
	n_ranks = sp_reader_ranks(r, &ranks);
	for (size_t k = 0; k < n_ranks && k < 4; k++)
		exercise_stack(r, ranks[k]);
	if (n_ranks > 0 && sp_selection_create(&sel) == 0) {
		char spec[32];

		snprintf(spec, sizeof(spec), "%u", ranks[n_ranks - 1]);
		if (sp_selection_add_ranks(sel, spec) == 0 &&
		    sp_selection_add_exclude(sel, "scope_profiler") == 0 &&
		    sp_summary_build(r, sel, SP_SORT_START, &sum) == 0)
			sp_summary_destroy(sum);
		sp_selection_destroy(sel);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_reader *r = NULL;
	int rc;

	if (put_input(data, size) < 0)
		return 0;
	rc = sp_reader_open(path, &r);
	if (rc < 0) {
		if (rc != -ENOMEM)
			check_error_message(rc);
		return 0;
	}
	exercise(r);
	sp_reader_destroy(r);
	return 0;
}
