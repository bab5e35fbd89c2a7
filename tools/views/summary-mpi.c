/* SPDX-License-Identifier: MIT */
/*
 * summary's header line (wall run time, ranks, threads, MPI share, the
 * profiler's overhead) and its MPI block: MPI time per rank (min, mean,
 * max with their ranks) and the top MPI functions by time with bytes.
 * Regions are MPI by their recorded kind, never by name.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overhead-estimate.h"
#include "summary-view.h"

/* Per selected rank: MPI time (ns) over the selected MPI regions. */
struct rank_mpi {
	uint32_t rank;
	double mpi;
};

static bool selected_region(struct sp_reader *r, const struct sp_selection *sel, uint32_t id)
{
	const char *name = sp_reader_region_name(r, id);

	return name && sp_selection_match_name(sel, name);
}

static double row_total(struct sp_reader *r, size_t i)
{
	const struct sp_row *row = sp_reader_row(r, i);
	struct sp_stats st;
	double t = sp_reader_row_stats_flags(r, i, SP_STATS_NO_SPREAD, &st) == 0 ? st.total : 0;

	return t + (row->throttled_total_ns > 0 ? (double)row->throttled_total_ns / 1e9 : 0);
}

/* MPI time per selected rank; *ret_n ranks; NULL when none is MPI. */
static struct rank_mpi *mpi_per_rank(struct sp_reader *r, const struct sp_selection *sel,
				     size_t *ret_n, bool *ret_any)
{
	const uint32_t *ranks;
	size_t nr = sp_reader_ranks(r, &ranks), n = 0;
	struct rank_mpi *out = calloc(nr ? nr : 1, sizeof(*out));
	bool any = false;

	if (!out)
		return NULL;
	for (size_t k = 0; k < nr; k++)
		if (sp_selection_match_rank(sel, ranks[k]))
			out[n++].rank = ranks[k];
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (!sp_region_kind_is_mpi(sp_reader_region_kind(r, row->region)) ||
		    !sp_selection_match_rank(sel, row->rank) || !selected_region(r, sel, row->region))
			continue;
		any = true;
		for (size_t k = 0; k < n; k++)
			if (out[k].rank == row->rank) {
				out[k].mpi += row_total(r, i);
				break;
			}
	}
	*ret_n = n;
	*ret_any = any;
	return out;
}

void summary_run_info(struct sp_reader *r, const struct sp_selection *sel,
		      struct summary_run *ret)
{
	struct sp_times t;
	size_t n = 0;
	bool any = false;
	struct rank_mpi *m = mpi_per_rank(r, sel, &n, &any);
	double sum = 0;

	sp_reader_times(r, &t);
	ret->wall = t.has_total_time && t.total_time > 0 ? t.total_time : t.time_span;
	ret->nranks = (unsigned)n;
	for (size_t k = 0; m && k < n; k++)
		sum += m[k].mpi;
	ret->mpi_mean = any && n ? sum / (double)n : -1;
	free(m);
}

/* Most threads any selected rank has in the thread table (1 without one). */
static size_t threads_per_rank(struct sp_reader *r, const struct sp_selection *sel)
{
	size_t nt = sp_reader_num_threads(r), best = 1;
	const uint32_t *ranks;
	size_t nr = sp_reader_ranks(r, &ranks);

	for (size_t k = 0; nt && k < nr; k++) {
		size_t c = 0;

		if (!sp_selection_match_rank(sel, ranks[k]))
			continue;
		for (size_t i = 0; i < nt; i++)
			c += sp_reader_thread(r, i)->rank == ranks[k];
		best = c > best ? c : best;
	}
	return best;
}

void summary_print_header(FILE *f, struct sp_reader *r, const struct sp_selection *sel,
			  const struct summary_run *run, bool sum)
{
	struct cli_overhead ov;
	char esc[1024], wall[32];
	size_t th = threads_per_rank(r, sel);

	tbl_escape(esc, sizeof esc, sp_reader_path(r));
	tbl_duration(wall, sizeof wall, run->wall > 0 ? run->wall : NAN, true);
	while (strlen(wall) && wall[strlen(wall) - 1] == ' ')
		wall[strlen(wall) - 1] = '\0';
	fprintf(f, "%s: %s wall, %u %s x %zu %s", esc, wall, run->nranks,
		run->nranks == 1 ? "rank" : "ranks", th, th == 1 ? "thread" : "threads");
	if (run->mpi_mean >= 0 && run->wall > 0)
		fprintf(f, ", MPI %.1f %%", 100.0 * run->mpi_mean / run->wall);
	if (cli_overhead_file(r, sel, &ov) > 0 && ov.run_s > 0)
		fprintf(f, ", overhead ~%.1f %%", cli_overhead_pct(&ov));
	fprintf(f, "; %s\n", sum ? "sums over ranks" : "per-rank means");
}

/* One MPI function: calls, time, bytes over the selected ranks. */
struct mpi_fn {
	uint32_t region;
	uint64_t calls;
	double time;
	int64_t bytes;    /* -1: the file has no byte counts for it */
};

static int cmp_fn(const void *pa, const void *pb)
{
	const struct mpi_fn *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? 1 : -1;
	return (a->region > b->region) - (a->region < b->region);
}

static struct mpi_fn *mpi_functions(struct sp_reader *r, const struct sp_selection *sel,
				    size_t *ret_n)
{
	size_t nreg = sp_reader_num_regions(r), n = 0;
	struct mpi_fn *fn = calloc(nreg ? nreg : 1, sizeof(*fn));
	long *slot = malloc((nreg ? nreg : 1) * sizeof(long));

	if (!fn || !slot) {
		free(fn);
		free(slot);
		return NULL;
	}
	for (size_t i = 0; i < nreg; i++)
		slot[i] = -1;
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		const int64_t *b;
		struct mpi_fn *m;

		if (row->region >= nreg ||
		    !sp_region_kind_is_mpi(sp_reader_region_kind(r, row->region)) ||
		    !sp_selection_match_rank(sel, row->rank) || !selected_region(r, sel, row->region))
			continue;
		if (slot[row->region] < 0) {
			slot[row->region] = (long)n;
			fn[n++] = (struct mpi_fn){ .region = row->region, .bytes = -1 };
		}
		m = &fn[slot[row->region]];
		struct sp_stats st;

		if (sp_reader_row_stats_flags(r, i, SP_STATS_NO_SPREAD, &st) == 0)
			m->calls += st.num_calls;
		m->calls += row->throttled_count > 0 ? (uint64_t)row->throttled_count : 0;
		m->time += row_total(r, i);
		b = sp_reader_row_column(r, i, SP_COL_MPI_BYTES);
		for (uint64_t e = 0; b && e < row->count; e++)
			if (b[e] >= 0)
				m->bytes = (m->bytes < 0 ? 0 : m->bytes) + b[e];
	}
	free(slot);
	qsort(fn, n, sizeof(*fn), cmp_fn);
	*ret_n = n;
	return fn;
}

static void bytes_cell(char *out, size_t size, int64_t b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)b;
	int u = 0;

	if (b < 0) {
		snprintf(out, size, "-");
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, size, "%lld B  ", (long long)b);
	else
		snprintf(out, size, "%.1f %-3s", v, unit[u]);
}

int summary_print_mpi(FILE *f, struct sp_reader *r, const struct sp_selection *sel,
		      const struct summary_run *run, const struct summary_opts *o)
{
	size_t n = 0, nf = 0, lo = 0, hi = 0;
	bool any;
	struct rank_mpi *m = mpi_per_rank(r, sel, &n, &any);
	struct mpi_fn *fn;
	struct tbl *t;
	char a[32], b[32], c[32];
	double sum = 0, all = 0, scale = o->sum ? 1.0 : 1.0 / (n ? (double)n : 1);

	if (!m || !n) {
		free(m);
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		sum += m[k].mpi;
		lo = m[k].mpi < m[lo].mpi ? k : lo;
		hi = m[k].mpi > m[hi].mpi ? k : hi;
	}
	fprintf(f, "\nMPI time per rank (%% of the run)\n");
	t = tbl_create(&o->st);
	if (t) {
		tbl_column(t, "", TBL_LEFT, false);
		tbl_column(t, "time", TBL_RIGHT, false);
		tbl_column(t, "% run", TBL_RIGHT, false);
		tbl_column(t, "rank", TBL_RIGHT, false);
		for (int row = 0; row < 3; row++) {
			double v = row == 0 ? m[lo].mpi : row == 1 ? sum / (double)n : m[hi].mpi;

			tbl_row(t, 0, ' ');
			tbl_cell(t, 0, row == 0 ? "min" : row == 1 ? "mean" : "max (slowest)");
			tbl_duration(a, sizeof a, v, o->st.ascii);
			tbl_cell(t, 1, a);
			run->wall > 0 ? tbl_cellf(t, 2, "%.1f", 100.0 * v / run->wall) : tbl_cell(t, 2, "-");
			row == 1 ? tbl_cell(t, 3, "") : tbl_cellf(t, 3, "r%u", m[row == 0 ? lo : hi].rank);
		}
		tbl_print(t, f);
		tbl_destroy(t);
	}
	fn = mpi_functions(r, sel, &nf);
	for (size_t i = 0; fn && i < nf; i++)
		all += fn[i].time;
	if (fn && nf) {
		fprintf(f, "\ntop MPI functions by time\n");
		t = tbl_create(&o->st);
		if (t) {
			tbl_column(t, "function", TBL_LEFT, true);
			tbl_column(t, "calls", TBL_RIGHT, false);
			tbl_column(t, o->sum ? "time (sum)" : "time", TBL_RIGHT, false);
			tbl_column(t, "% MPI", TBL_RIGHT, false);
			tbl_column(t, o->sum ? "bytes (sum)" : "bytes", TBL_RIGHT, false);
			for (size_t i = 0; i < nf && i < 10; i++) {
				tbl_row(t, 0, ' ');
				tbl_cell(t, 0, sp_reader_region_name(r, fn[i].region));
				tbl_cellf(t, 1, "%llu", (unsigned long long)fn[i].calls);
				tbl_duration(b, sizeof b, fn[i].time * scale, o->st.ascii);
				tbl_cell(t, 2, b);
				all > 0 ? tbl_cellf(t, 3, "%.1f", 100.0 * fn[i].time / all)
					: tbl_cell(t, 3, "-");
				bytes_cell(c, sizeof c, fn[i].bytes < 0 ? -1
					   : (int64_t)llround((double)fn[i].bytes * scale));
				tbl_cell(t, 4, c);
			}
			tbl_print(t, f);
			tbl_destroy(t);
		}
	}
	free(fn);
	free(m);
	return 0;
}
