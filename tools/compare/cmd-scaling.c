/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler scaling FILES...: strong-scaling speedup, parallel
 * efficiency and weak-scaling normalised runtime per region, from the mean
 * per-call duration of each run (§5 of the Python reference: x axis, baseline
 * and duplicate-x rules), as a table or --json.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "commands.h"
#include "compare.h"

enum { OPT_X = OPT_FIRST_COMMAND_SPECIFIC };

static const char usage[] =
	"FILE... [--x num_ranks|omp_num_threads|total_cores|KEY] [--json]\n"
	"       [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler scaling [options] FILE...\n"
	"\n"
	"Per region common to all profiles: the mean per-call duration of each run\n"
	"(pooled over the selected ranks), grouped by the x value of the run. Runs\n"
	"with the same x are averaged (mean of their means). The baseline is the\n"
	"smallest x for num_ranks, omp_num_threads and total_cores (= num_ranks *\n"
	"omp_num_threads, from metadata), else the first x in input order.\n"
	"\n"
	"options:\n"
	"  --x FIELD             x axis: num_ranks, omp_num_threads, total_cores or\n"
	"                        any metadata KEY (default: num_ranks)\n"
	"  --json                {x_field, x_label, baseline, runs, points: [{region,\n"
	"                        <x_field>, runs, average_duration, speedup,\n"
	"                        ideal_speedup, efficiency, normalized_runtime}]}\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"  speedup     = mean(baseline) / mean(x)            (strong scaling)\n"
	"  ideal       = x / x(baseline)       (the three scaling fields only)\n"
	"  efficiency  = speedup / ideal       (the three scaling fields only)\n"
	"  normalized  = mean(x) / mean(baseline)   (weak scaling, ideal 1.0)\n";

/* One distinct x value. */
struct xkey {
	enum sp_meta_type type; /* INT for the scaling fields */
	long long i;
	double f;
	char repr[256];
};

struct scaling {
	const char *field;
	bool ideal;            /* num_ranks, omp_num_threads, total_cores */
	size_t nruns;
	struct cmp_side *sides;
	size_t *run_key;       /* run -> index into keys */
	struct xkey *keys;
	size_t nkeys;
};

static bool is_scaling_field(const char *f)
{
	return !strcmp(f, "num_ranks") || !strcmp(f, "omp_num_threads") ||
	       !strcmp(f, "total_cores");
}

static const char *x_label(const char *f)
{
	if (!strcmp(f, "num_ranks"))
		return "MPI ranks";
	if (!strcmp(f, "omp_num_threads"))
		return "OpenMP threads";
	if (!strcmp(f, "total_cores"))
		return "MPI ranks × OpenMP threads";
	return f;
}

static void missing_key(struct cli_common *c, struct sp_reader *r,
			const char *key)
{
	size_t n = sp_reader_num_metadata(r);

	fprintf(stderr, "scope-profiler scaling: %s: metadata field '%s' not found; "
		"available fields: ", sp_reader_path(r), key);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", sp_reader_metadata(r, i)->key);
	fputs(n ? "\n" : "(none)\n", stderr);
}

/* int(value) of Python for an int, float or numeric string. */
static bool meta_int(const struct sp_meta *m, long long *ret)
{
	char *end;

	if (m->type == SP_META_INT)
		*ret = m->i;
	else if (m->type == SP_META_FLOAT && isfinite(m->f))
		*ret = (long long)m->f;
	else if (m->type == SP_META_STRING && m->s[0]) {
		*ret = strtoll(m->s, &end, 10);
		return *end == '\0';
	} else
		return false;
	return true;
}

/* The x value of one run. Returns 0 or EXIT_USAGE (reported). */
static int x_value(struct cli_common *c, struct sp_reader *r, const char *f,
		   struct xkey *ret)
{
	const char *key = strcmp(f, "total_cores") ? f : "omp_num_threads";
	const struct sp_meta *m = NULL;

	memset(ret, 0, sizeof(*ret));
	ret->type = SP_META_INT;
	if (strcmp(f, "num_ranks") == 0) {
		ret->i = sp_reader_num_ranks(r);
	} else if (!(m = sp_reader_metadata_find(r, key))) {
		missing_key(c, r, key);
		return EXIT_USAGE;
	} else if (is_scaling_field(f)) {
		if (!meta_int(m, &ret->i)) {
			cli_error(c, "%s: metadata '%s' is not an integer",
				  sp_reader_path(r), key);
			return EXIT_USAGE;
		}
		if (strcmp(f, "total_cores") == 0)
			ret->i *= sp_reader_num_ranks(r);
	} else if (m->type == SP_META_STRINGS) {
		cli_error(c, "%s: metadata '%s' is a list; choose a single-valued field",
			  sp_reader_path(r), key);
		return EXIT_USAGE;
	} else {
		ret->type = m->type;
		ret->i = m->i;
		ret->f = m->f;
	}
	if (ret->type == SP_META_INT)
		snprintf(ret->repr, sizeof(ret->repr), "%lld", ret->i);
	else if (ret->type == SP_META_FLOAT)
		cli_format_double(ret->repr, sizeof(ret->repr), ret->f);
	else
		snprintf(ret->repr, sizeof(ret->repr), "%s", m->s);
	return 0;
}

static int cmp_int_key(const void *x, const void *y)
{
	const struct xkey *a = x, *b = y;

	return (a->i > b->i) - (a->i < b->i);
}

/* Distinct x values: sorted for scaling fields, else first-seen order. */
static void build_keys(struct scaling *s, const struct xkey *xs)
{
	for (size_t i = 0; i < s->nruns; i++) {
		size_t k = 0;

		while (k < s->nkeys && strcmp(s->keys[k].repr, xs[i].repr))
			k++;
		if (k == s->nkeys)
			s->keys[s->nkeys++] = xs[i];
	}
	if (s->ideal)
		qsort(s->keys, s->nkeys, sizeof(*s->keys), cmp_int_key);
	for (size_t i = 0; i < s->nruns; i++)
		for (size_t k = 0; k < s->nkeys; k++)
			if (!strcmp(s->keys[k].repr, xs[i].repr))
				s->run_key[i] = k;
}

static int load(struct cli_common *c, struct scaling *s)
{
	struct xkey *xs = calloc(c->n_files, sizeof(*xs));
	int rc = 0;

	s->nruns = c->n_files;
	s->sides = calloc(s->nruns, sizeof(*s->sides));
	s->run_key = calloc(s->nruns, sizeof(*s->run_key));
	s->keys = calloc(s->nruns, sizeof(*s->keys));
	if (!xs || !s->sides || !s->run_key || !s->keys) {
		free(xs);
		cli_error(c, "out of memory");
		return EXIT_USAGE;
	}
	/* Rank counts differ by design here; a different command line is
	 * worth a warning (each run against the first). */
	struct sp_reader *first = NULL;
	for (size_t i = 0; i < s->nruns && rc == 0; i++) {
		struct sp_reader *r;

		rc = cli_open(c, c->files[i], &r);
		if (rc)
			break;
		if (i > 0)
			cmp_warn_mismatch(c, c->files[0], first, c->files[i], r, false);
		rc = x_value(c, r, s->field, &xs[i]);
		if (rc == 0 && cmp_side_collect(r, c->sel, CMP_AVG, &s->sides[i]) < 0) {
			cli_error(c, "out of memory");
			rc = EXIT_USAGE;
		}
		if (i == 0)
			first = r;
		else
			sp_reader_destroy(r);
	}
	sp_reader_destroy(first);
	if (rc == 0)
		build_keys(s, xs);
	free(xs);
	return rc;
}

static void scaling_free(struct scaling *s)
{
	for (size_t i = 0; s->sides && i < s->nruns; i++)
		cmp_side_free(&s->sides[i]);
	free(s->sides);
	free(s->run_key);
	free(s->keys);
}

/* Regions of the first run (get_regions order) present in every run. */
static bool is_common(const struct scaling *s, const char *name)
{
	for (size_t i = 1; i < s->nruns; i++) {
		bool found = false;

		for (size_t k = 0; k < s->sides[i].n && !found; k++)
			found = !strcmp(s->sides[i].names[k], name);
		if (!found)
			return false;
	}
	return true;
}

/* Mean of the usable run means at key k; false if there is none. */
static bool mean_at(const struct scaling *s, const char *name, size_t k,
		    double *ret, size_t *ret_runs)
{
	double sum = 0, v;
	size_t n = 0;

	for (size_t i = 0; i < s->nruns; i++)
		if (s->run_key[i] == k && cmp_side_get(&s->sides[i], name, &v) &&
		    isfinite(v) && v > 0) {
			sum += v;
			n++;
		}
	*ret = n ? sum / (double)n : NAN;
	*ret_runs = n;
	return n > 0;
}

struct point {
	const char *region;
	size_t key, runs;
	double mean, speedup, ideal, efficiency, normalized;
};

/* All points, region by region. Returns the count or -1 (no memory). */
static long compute(const struct scaling *s, struct point **ret)
{
	const struct cmp_side *first = &s->sides[0];
	struct point *p = calloc(first->n * s->nkeys + 1, sizeof(*p));
	const struct xkey *bk = &s->keys[0];
	size_t n = 0;

	if (!p)
		return -1;
	for (size_t r = 0; r < first->n; r++) {
		const char *name = first->names[r];
		double base;
		size_t runs;

		if (!is_common(s, name) || !mean_at(s, name, 0, &base, &runs))
			continue;
		for (size_t k = 0; k < s->nkeys; k++) {
			struct point *q = &p[n];

			if (!mean_at(s, name, k, &q->mean, &q->runs))
				continue;
			q->region = name;
			q->key = k;
			q->speedup = base / q->mean;
			q->normalized = q->mean / base;
			q->ideal = q->efficiency = NAN;
			if (s->ideal && bk->i > 0) {
				q->ideal = (double)s->keys[k].i / (double)bk->i;
				q->efficiency = q->speedup / q->ideal;
			}
			n++;
		}
	}
	*ret = p;
	return (long)n;
}

static void json_x(struct json_writer *w, const struct xkey *k)
{
	if (k->type == SP_META_INT)
		jw_int(w, k->i);
	else if (k->type == SP_META_FLOAT)
		jw_double(w, k->f);
	else
		jw_string(w, k->repr);
}

static void emit_json(const struct cli_common *c, const struct scaling *s,
		      const struct point *p, size_t n)
{
	struct json_writer w;

	jw_init(&w, stdout, true);
	jw_begin_object(&w);
	jw_key(&w, "x_field"); jw_string(&w, s->field);
	jw_key(&w, "x_label"); jw_string(&w, x_label(s->field));
	jw_key(&w, "baseline"); json_x(&w, &s->keys[0]);
	jw_key(&w, "runs");
	jw_begin_array(&w);
	for (size_t i = 0; i < s->nruns; i++) {
		jw_begin_object(&w);
		jw_key(&w, "file"); jw_string(&w, c->files[i]);
		jw_key(&w, s->field); json_x(&w, &s->keys[s->run_key[i]]);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_key(&w, "points");
	jw_begin_array(&w);
	for (size_t i = 0; i < n; i++) {
		jw_begin_object(&w);
		jw_key(&w, "region"); jw_string(&w, p[i].region);
		jw_key(&w, s->field); json_x(&w, &s->keys[p[i].key]);
		jw_key(&w, "runs"); jw_int(&w, (long long)p[i].runs);
		jw_key(&w, "average_duration"); jw_double(&w, p[i].mean);
		jw_key(&w, "speedup"); jw_double(&w, p[i].speedup);
		jw_key(&w, "ideal_speedup"); jw_double(&w, p[i].ideal);
		jw_key(&w, "efficiency"); jw_double(&w, p[i].efficiency);
		jw_key(&w, "normalized_runtime"); jw_double(&w, p[i].normalized);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	jw_finish(&w);
}

static void fmt(char *buf, size_t size, const char *f, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, f, v);
}

static void print_text(const struct scaling *s, const struct point *p,
		       size_t n)
{
	const char *headers[8] = { "region", s->field, "runs", "avg [s]", "speedup",
				   "ideal", "efficiency", "weak-scaling runtime" };
	char cells[6][64];
	struct cmp_table t;

	printf("Scaling over %s (%s), baseline %s = %s, %zu runs\n\n", s->field,
	       x_label(s->field), s->field, s->keys[0].repr, s->nruns);
	if (cmp_table_init(&t, 8, headers) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *row[8] = { p[i].region, s->keys[p[i].key].repr, cells[0],
				       cells[1], cells[2], cells[3], cells[4], cells[5] };

		snprintf(cells[0], 64, "%zu", p[i].runs);
		fmt(cells[1], 64, "%.6g", p[i].mean);
		fmt(cells[2], 64, "%.4g", p[i].speedup);
		fmt(cells[3], 64, "%.4g", p[i].ideal);
		fmt(cells[4], 64, "%.4g", p[i].efficiency);
		fmt(cells[5], 64, "%.4g", p[i].normalized);
		cmp_table_add(&t, row);
	}
	cmp_table_print(&t, stdout);
	cmp_table_free(&t);
	if (!s->ideal)
		printf("(no ideal speedup or efficiency: '%s' is not a scaling field)\n",
		       s->field);
}

static int run(struct cli_common *c, const char *field)
{
	struct scaling s = { .field = field, .ideal = is_scaling_field(field) };
	struct point *p = NULL;
	long n = 0;
	int rc = load(c, &s);

	if (rc == 0 && (n = compute(&s, &p)) < 0) {
		cli_error(c, "out of memory");
		rc = EXIT_USAGE;
	} else if (rc == 0 && n == 0) {
		cli_error(c, "no region common to all %zu profiles has calls at the baseline %s = %s",
			  s.nruns, field, s.keys[0].repr);
		rc = EXIT_USAGE;
	} else if (rc == 0 && c->json) {
		emit_json(c, &s, p, (size_t)n);
	} else if (rc == 0) {
		print_text(&s, p, (size_t)n);
	}
	free(p);
	scaling_free(&s);
	return rc;
}

int cmd_scaling(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "x", required_argument, NULL, OPT_X },
		{ 0 },
	};
	const char *field = "num_ranks";
	struct cli_common c;
	int opt, rc = 0;

	if (cli_common_init(&c, "scaling", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == 0 && (opt = getopt_long(argc, argv, "hi:e:r:", options, NULL)) != -1) {
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);

		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0 && opt == OPT_X && optarg[0])
			field = optarg;
		else if (h == 0)
			rc = cli_usage_error(&c, "invalid option");
	}
	if (rc == 0 && c.help) {
		fputs(help, stdout);
	} else if (rc == 0) {
		if (cli_collect_files(&c, argc, argv, optind) < 0)
			rc = cli_usage_error(&c, "out of memory");
		else if (c.n_files < 2)
			rc = cli_usage_error(&c, "scaling needs at least two profiles, got %zu",
					     c.n_files);
		else
			rc = run(&c, field);
	}
	cli_common_fini(&c);
	return rc;
}
