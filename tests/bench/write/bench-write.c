/* SPDX-License-Identifier: MIT */
/*
 * Finalize and size benchmark: record N events through the manual API
 * (two nested regions with varying small amounts of work), finalize, and
 * print one JSON line: events, file bytes, bytes per event, finalize
 * seconds, the seconds of a raw write(2)+fsync of the same 16 bytes per
 * event, and of one pass reading the 24-byte records from uncached memory:
 * a finalize reads the recorded events twice (count, then scatter), so
 * raw write + 2 reads is the floor of its design.
 * Usage: bench-write EVENTS OUTPUT.h5   (compression via SCOPE_PROFILER_COMPRESSION)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile double sink;

static double raw_write(const char *path, long events)
{
	size_t bytes = (size_t)events * 16;
	int64_t *buf = malloc(bytes);
	for (long i = 0; i < events * 2; i++)
		buf[i] = i * 37;
	double t0 = now_s();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (size_t off = 0; off < bytes;) {
		ssize_t n = write(fd, (char *)buf + off, bytes - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	fsync(fd);
	close(fd);
	double t = now_s() - t0;
	unlink(path);
	free(buf);
	return t;
}

/*
 * One pass reading 24 bytes per event (the recorder's record: start, end,
 * region, aux) from memory that is not in cache, as a finalize must read
 * the recorded events (the floor's other part).
 */
static double read_pass(long events)
{
	size_t n = (size_t)events * 3;
	uint64_t *buf = malloc(n * sizeof *buf);
	for (size_t i = 0; i < n; i++)
		buf[i] = i * 37;
	/* Evict it from the caches (more than any L3 here). */
	size_t big = (size_t)512 << 20;
	char *flush = malloc(big);
	for (size_t i = 0; i < big; i += 64)
		flush[i] = (char)i;
	double t0 = now_s();
	uint64_t acc = 0;
	for (size_t i = 0; i < n; i += 3)
		acc += buf[i] ^ buf[i + 1] ^ buf[i + 2];
	double t = now_s() - t0;
	sink = (double)acc + flush[big / 2];
	free(flush);
	free(buf);
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench-write EVENTS OUTPUT.h5\n");
		return 2;
	}
	long events = atol(argv[1]);
	sp_set_output(argv[2]);
	sp_init(NULL, 0); /* the default context (upstream API) */
	int outer = sp_region("outer"), inner = sp_region("inner");
	for (long i = 0; i < events / 2; i++) {
		sp_begin(outer);
		double s = 0;
		for (long k = 0; k < i % 7; k++)
			s += k * 0.5;
		sp_begin(inner);
		sink = s;
		sp_end(inner);
		sp_end(outer);
	}
	double t0 = now_s();
	sp_stop(); /* write the process file now */
	double fin = now_s() - t0;
	struct stat st;
	if (stat(argv[2], &st) != 0)
		return 1;
	char raw[4096];
	snprintf(raw, sizeof raw, "%s.raw", argv[2]);
	double rw = raw_write(raw, events);
	double rp = read_pass(events);
	printf("{\"events\": %ld, \"file_bytes\": %lld, \"bytes_per_event\": %.3f, "
	       "\"finalize_s\": %.4f, \"raw_write_s\": %.4f, \"read_pass_s\": %.4f}\n",
	       events, (long long)st.st_size, (double)st.st_size / events, fin, rw, rp);
	unlink(argv[2]);
	return 0;
}
