/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for spill files (recover and merge read them: every one
 * is hostile). The input bytes become a file (a memfd through
 * /proc/self/fd/N) read and checked by sp_spill_read, which takes every
 * record apart (sp_spill_to_snapshot then works on checked data only; it
 * needs the recorder runtime, so it is covered by the resilience tests, not
 * here), and the tick -> ns map. Oracle: no sanitizer report.
 * Built with `-DSPILL_SEED` it is instead a program that writes a valid
 * spill file (every record type) to argv[1]: the seed of the corpus.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sp-spill.h"
#include "spill-read.h"

#ifdef SPILL_SEED
static void rec(FILE *f, uint32_t type, uint32_t thread, const void *a, size_t na,
		const void *b, size_t nb)
{
	struct sp_spill_rec h = { SP_SPILL_REC_MAGIC, type, (uint32_t)(na + nb), thread };
	static const char zero[8];
	fwrite(&h, sizeof h, 1, f);
	fwrite(a, na, 1, f);
	if (nb)
		fwrite(b, nb, 1, f);
	fwrite(zero, (8 - (na + nb) % 8) % 8, 1, f);
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "wb") : NULL;
	if (!f)
		return 1;
	struct sp_spill_header h = { .version = SP_SPILL_VERSION, .header_bytes = sizeof h,
				     .pid = 42, .rank = -1, .tick0 = 1000, .ns0 = 1000,
				     .start_ns = 1000 };
	memcpy(h.magic, SP_SPILL_MAGIC, 8);
	fwrite(&h, sizeof h, 1, f);
	struct sp_spill_module m = { 0x1000, 0, 8 };
	rec(f, SP_SPILL_MODULE, 0, &m, sizeof m, "/bin/app", 8);
	struct sp_spill_module_id mid = { 0, 4, 4096 };
	rec(f, SP_SPILL_MODULE_ID, 0, &mid, sizeof mid, "\x01\x02\x03\x04", 4);
	struct sp_spill_thread t = { 0, 1234, 1234, 1000, 0 };
	rec(f, SP_SPILL_THREAD, 0, &t, sizeof t, NULL, 0);
	struct sp_spill_region r0 = { 0, 1, 0, -1, 4 }, r1 = { 1, 0, 0x1100, 0, 0 };
	rec(f, SP_SPILL_REGION, 0, &r0, sizeof r0, "main", 4);
	rec(f, SP_SPILL_REGION, 0, &r1, sizeof r1, NULL, 0);
	struct {
		struct sp_spill_events e;
		struct sp_spill_event v[3];
	} ev = { { 0, 3, 0, 5000, 5000 },
		 { { 1100, SP_SPILL_OPEN, 0, 0 }, { 1200, 1300, 1, 0 }, { 1400, 1500, 1, 0 } } };
	rec(f, SP_SPILL_EVENTS, 0, &ev, sizeof ev, NULL, 0);
	struct sp_spill_close c = { 0, 1600, 0, 0 };
	rec(f, SP_SPILL_CLOSE, 0, &c, sizeof c, NULL, 0);
	struct sp_spill_rank rk = { 1, 4 };
	rec(f, SP_SPILL_RANK, 0, &rk, sizeof rk, NULL, 0);
	struct sp_spill_drop d = { 1, 0, 7 };
	rec(f, SP_SPILL_DROPS, 0, &d, sizeof d, NULL, 0);
	struct sp_spill_trailer tr = { 15, 0, 1700, 1700, 7 };
	rec(f, SP_SPILL_TRAILER, 0, &tr, sizeof tr, NULL, 0);
	return fclose(f) != 0;
}
#else
static char path[64];
static int fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		fd = memfd_create("sp-fuzz-spill", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return 0;
	struct sp_spill_data d;
	if (sp_spill_read(path, &d) != 0)
		return 0;
	/* The tick -> ns map over the range a reader meets. */
	volatile int64_t sink;
	sink = sp_spill_ns(&d, d.hdr.tick0);
	sink = sp_spill_ns(&d, INT64_MAX / 2);
	sink = sp_spill_ns(&d, INT64_MIN / 2);
	(void)sink;
	sp_spill_data_free(&d);
	return 0;
}
#endif
