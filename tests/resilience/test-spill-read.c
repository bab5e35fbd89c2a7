/* SPDX-License-Identifier: MIT */
/*
 * The spill reader on files cut by a full disk: a record whose payload was
 * only partly written (no header), a file ending inside a record or inside
 * a record header. The records before the cut are read, the cut is skipped,
 * and a record written after it (another thread) is still found. The
 * indexed read (finalize's, a piece at a time) gives exactly the events of
 * the full read, whatever the pieces.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sp-spill.h"
#include "snapshot.h"
#include "spill-read.h"
#include "check-main.h"

static char path[256];
static char buf[1 << 16];
static size_t len;

static void setup(void)
{
	snprintf(path, sizeof path, "/tmp/sp-spill-read-test-%d", (int)getpid());
	memset(buf, 0, sizeof buf);
	struct sp_spill_header h = { .magic = SP_SPILL_MAGIC, .version = SP_SPILL_VERSION,
				     .header_bytes = sizeof h, .pid = 1, .rank = -1 };
	memcpy(buf, &h, sizeof h);
	len = (sizeof h + 7) & ~(size_t)7;
}

static void teardown(void)
{
	unlink(path);
}

/* Append a record; with_header false: only the payload (what a write cut
 * by a full disk leaves: the header is written last). */
static void put(uint32_t type, uint32_t thread, const void *a, size_t na, const void *b, size_t nb,
		bool with_header)
{
	struct sp_spill_rec h = { SP_SPILL_REC_MAGIC, type, (uint32_t)(na + nb), thread };
	ck_assert_uint_le(len + sizeof h + na + nb, sizeof buf);
	if (with_header)
		memcpy(buf + len, &h, sizeof h);
	memcpy(buf + len + sizeof h, a, na);
	if (nb)
		memcpy(buf + len + sizeof h + na, b, nb);
	len += (sizeof h + na + nb + 7) & ~(size_t)7;
}

/* EVENTS record of thread `thread`: events first..first+n-1, region 0. */
static void put_events(uint32_t thread, uint64_t first, uint32_t n, bool with_header)
{
	struct sp_spill_events h = { .first_seq = first, .n = n, .tick = 1000, .ns = 1000 };
	struct sp_spill_event ev[256];
	ck_assert_uint_le(n, 256);
	for (uint32_t i = 0; i < n; i++)
		ev[i] = (struct sp_spill_event){ (int64_t)(first + i) * 10,
						 (int64_t)(first + i) * 10 + 5, 0, 0 };
	put(SP_SPILL_EVENTS, thread, &h, sizeof h, ev, n * sizeof *ev, with_header);
}

static void put_region(void)
{
	struct sp_spill_region r = { .id = 0, .kind = 0, .module = -1, .name_bytes = 4 };
	put(SP_SPILL_REGION, 0, &r, sizeof r, "iter", 4, true);
}

/* Write the first `size` bytes of the buffer and read them back. */
static int read_back(size_t size, struct sp_spill_data *d)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, size, f), size);
	fclose(f);
	return sp_spill_read(path, d);
}

static const struct sp_spill_tdata *thread(const struct sp_spill_data *d, uint32_t index)
{
	for (uint32_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].index == index)
			return &d->threads[i];
	return NULL;
}

/* n complete events 0..n-1 in thread t, nothing else. */
static void check_prefix(const struct sp_spill_data *d, uint32_t index, uint64_t n)
{
	const struct sp_spill_tdata *t = thread(d, index);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->n, n);
	for (uint64_t i = 0; i < n; i++) {
		ck_assert_int_eq(t->ev[i].start, (int64_t)i * 10);
		ck_assert_int_eq(t->ev[i].end, (int64_t)i * 10 + 5);
		ck_assert_uint_eq(t->ev[i].region, 0);
	}
}

START_TEST(test_cut_payload_at_the_end)
{
	put_region();
	put_events(0, 0, 100, true);
	put_events(0, 100, 200, false); /* the disk filled while writing this one */
	size_t whole = len;
	/* The cut anywhere inside the payload, or the whole payload without
	 * its header: the first 100 events, nothing of the cut record. */
	for (size_t size = whole - 200 * sizeof(struct sp_spill_event); size <= whole; size += 500) {
		struct sp_spill_data d;
		ck_assert_int_eq(read_back(size, &d), 0);
		check_prefix(&d, 0, 100);
		ck_assert_uint_gt(d.skipped_bytes, 0);
		ck_assert(!d.partial);
		sp_spill_data_free(&d);
	}
}
END_TEST

START_TEST(test_file_ends_inside_a_record)
{
	put_region();
	put_events(0, 0, 50, true);
	size_t before = len;
	put_events(0, 50, 50, true);
	/* A header that claims more bytes than the file has, and a file that
	 * ends inside a record header. */
	for (size_t size = before + 1; size < len; size += 7) {
		struct sp_spill_data d;
		ck_assert_int_eq(read_back(size, &d), 0);
		check_prefix(&d, 0, 50);
		sp_spill_data_free(&d);
	}
}
END_TEST

START_TEST(test_record_after_the_cut)
{
	put_region();
	put_events(0, 0, 30, true);
	put_events(0, 30, 200, false);
	/* Another thread's record reserved after the cut one and written. */
	put_events(1, 0, 20, true);
	struct sp_spill_data d;
	ck_assert_int_eq(read_back(len, &d), 0);
	check_prefix(&d, 0, 30);
	check_prefix(&d, 1, 20);
	sp_spill_data_free(&d);
}
END_TEST

START_TEST(test_header_only)
{
	struct sp_spill_data d;
	ck_assert_int_eq(read_back(len, &d), 0);
	ck_assert_uint_eq(d.nthreads, 0);
	sp_spill_data_free(&d);
	/* Not even the file header: not a spill file. */
	ck_assert_int_eq(read_back(20, &d), SP_SPILL_ENOTSPILL);
}
END_TEST

/* REGION record of kind `kind` named `name`, with one event of it. */
static void put_close(uint32_t thread, uint64_t seq, int64_t end, uint32_t region)
{
	struct sp_spill_close c = { .seq = seq, .end = end, .region = region };
	put(SP_SPILL_CLOSE, thread, &c, sizeof c, NULL, 0, true);
}

/* Events [first, first+n) of thread `index` from the index, in pieces of
 * `piece`, against the full read. */
static void check_index_range(const struct sp_spill_data *full, const struct sp_spill_data *ix,
			      int fd, uint32_t index, uint64_t first, uint64_t n, uint64_t piece)
{
	const struct sp_spill_tdata *a = thread(full, index), *b = thread(ix, index);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_null(b->ev);
	ck_assert_uint_eq(a->n, b->n);
	struct sp_spill_event out[512];
	for (uint64_t at = first; at < first + n; at += piece) {
		uint64_t m = first + n - at < piece ? first + n - at : piece;
		ck_assert_int_eq(sp_spill_read_events(fd, b, at, (size_t)m, out), 0);
		for (uint64_t i = 0; i < m; i++) {
			ck_assert_int_eq(out[i].start, a->ev[at + i].start);
			ck_assert_int_eq(out[i].end, a->ev[at + i].end);
			ck_assert_uint_eq(out[i].region, a->ev[at + i].region);
		}
	}
}

START_TEST(test_index_matches_read)
{
	put_region();
	put_events(0, 0, 100, true);
	put_events(1, 0, 40, true);
	put_close(0, 5, 999, 0);               /* an open call's end */
	put_events(0, 100, 150, true);
	put_close(0, 120, SP_SPILL_OPEN, SP_SPILL_NO_REGION); /* deleted (MIN_DURATION) */
	put_close(0, 5, 1234, 0);              /* the later CLOSE wins */
	put_events(0, 90, 20, true);           /* written twice: the same events again */
	put_events(0, 250, 200, false);        /* cut by a full disk */
	put_events(1, 40, 60, true);           /* another thread's, after the cut */
	put_close(1, 10, 4242, 0);
	put_close(0, 400, 7, 0);               /* an event the file does not hold */
	struct sp_spill_data full, ix;
	ck_assert_int_eq(read_back(len, &full), 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sp_spill_index(fd, &ix), 0);
	ck_assert_uint_eq(ix.skipped_bytes, full.skipped_bytes);
	ck_assert_uint_eq(thread(&ix, 0)->n, 250);
	static const uint64_t pieces[] = { 1, 7, 64, 250, 512 };
	for (size_t p = 0; p < sizeof pieces / sizeof *pieces; p++) {
		check_index_range(&full, &ix, fd, 0, 0, 250, pieces[p]);
		check_index_range(&full, &ix, fd, 1, 0, 100, pieces[p]);
		check_index_range(&full, &ix, fd, 0, 3, 120, pieces[p]);
	}
	/* The CLOSE entries were applied, not just copied along. */
	struct sp_spill_event e;
	ck_assert_int_eq(sp_spill_read_events(fd, thread(&ix, 0), 5, 1, &e), 0);
	ck_assert_int_eq(e.end, 1234);
	ck_assert_int_eq(sp_spill_read_events(fd, thread(&ix, 0), 120, 1, &e), 0);
	ck_assert_uint_eq(e.region, SP_SPILL_NO_REGION);
	close(fd);
	sp_spill_data_free(&full);
	sp_spill_data_free(&ix);
}
END_TEST

static void put_kind_region(uint32_t id, uint32_t kind, const char *name)
{
	struct sp_spill_region r = { .id = id, .kind = kind, .module = -1,
				     .name_bytes = (uint32_t)strlen(name) };
	put(SP_SPILL_REGION, 0, &r, sizeof r, name, r.name_bytes, true);
	struct sp_spill_events h = { .first_seq = id, .n = 1, .tick = 1000, .ns = 1000 };
	struct sp_spill_event ev = { (int64_t)id * 10, (int64_t)id * 10 + 5, id, 0 };
	put(SP_SPILL_EVENTS, 0, &h, sizeof h, &ev, sizeof ev, true);
}

/* recover's snapshot keeps each region's kind; a REGION record with a kind
 * that does not exist is skipped as malformed. */
START_TEST(test_region_kinds)
{
	put_kind_region(0, SP_KIND_MANUAL, "MPI_x");
	put_kind_region(1, SP_KIND_MPI_SEND, "MPI_Send");
	put_kind_region(2, SP_KIND_FUNCTION, "solve");
	put_kind_region(3, SP_KIND_MPI_REQUEST, "MPI_Waitall");
	put_kind_region(4, SP_KIND_COUNT, "bogus");
	struct sp_spill_data d;
	ck_assert_int_eq(read_back(len, &d), 0);
	struct sp_snapshot snap;
	uint64_t unclosed = 0;
	ck_assert_int_eq(sp_spill_to_snapshot(&d, NULL, NULL, &snap, &unclosed), 0);
	static const char *const names[] = { "MPI_x", "MPI_Send", "solve", "MPI_Waitall" };
	static const uint8_t kinds[] = { SP_KIND_MANUAL, SP_KIND_MPI_SEND, SP_KIND_FUNCTION,
					 SP_KIND_MPI_REQUEST };
	ck_assert_uint_eq(snap.nnames, 4);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_str_eq(snap.names[i], names[i]);
		ck_assert_uint_eq(snap.kinds[i], kinds[i]);
	}
	sp_snapshot_free(&snap);
	sp_spill_data_free(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spill-read");
	TCase *tc = tcase_create("cut-by-full-disk");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cut_payload_at_the_end);
	tcase_add_test(tc, test_file_ends_inside_a_record);
	tcase_add_test(tc, test_record_after_the_cut);
	tcase_add_test(tc, test_header_only);
	tcase_add_test(tc, test_region_kinds);
	tcase_add_test(tc, test_index_matches_read);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
