/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler tui: an ncurses browser for one profile that runs over SSH
 * on a login node. This file holds the option parsing, the screen frame
 * (title, pane tabs, status line), the global keys (filter, rank, thread,
 * export, help, quit) and the event loop; each pane lives in tools/tui-*.c.
 */
#define _GNU_SOURCE
#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-common.h"
#include "commands.h"
#include "tui.h"

enum { OPT_RANK = OPT_FIRST_COMMAND_SPECIFIC, OPT_ASCII };

static const char usage[] = "FILE [--include RE] [--exclude RE]... [--rank N] [--ascii]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler tui [options] FILE\n"
	"\n"
	"Interactive terminal browser (ncurses): summary, call tree, ranks,\n"
	"metadata and timeline panes.\n"
	"\n"
	"options:\n"
	"  --rank N              start with rank N selected (default: all ranks)\n"
	"  --ascii               ASCII line drawing instead of Unicode\n"
	"  -i, --include RE      keep regions whose name matches RE (repeatable)\n"
	"  -e, --exclude RE      drop regions whose name matches RE (repeatable)\n"
	"  -h, --help            print this help and exit\n";

static const struct tui_pane *const panes[TUI_N_PANES] = {
    &tui_summary_pane, &tui_calltree_pane, &tui_ranks_pane, &tui_meta_pane, &tui_timeline_pane,
};

struct options {
	const char *include;
	char **excludes;
	size_t n_excludes;
	long rank;
	bool ascii;
};

long tui_single_rank(const struct tui *t)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(t->r, &ranks);

	if (t->rank != TUI_ALL_RANKS)
		return t->rank;
	return n ? (long)ranks[0] : -1;
}

static bool rank_exists(const struct tui *t, long rank)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(t->r, &ranks);

	for (size_t i = 0; i < n; i++)
		if ((long)ranks[i] == rank)
			return true;
	return false;
}

/*
 * Build both selections from the filter, the --exclude patterns and the
 * rank. On a bad pattern the old selections stay and -EINVAL is returned.
 */
static int make_selections(struct tui *t, const char *filter, long rank)
{
	struct sp_selection *sel = NULL, *names = NULL;
	char spec[32];
	int rc = 0;

	if (sp_selection_create(&sel) < 0 || sp_selection_create(&names) < 0)
		rc = -ENOMEM;
	if (rc == 0 && filter[0]) {
		rc = sp_selection_add_include(sel, filter);
		if (rc == 0)
			rc = sp_selection_add_include(names, filter);
	}
	for (size_t i = 0; rc == 0 && i < t->n_excludes; i++) {
		rc = sp_selection_add_exclude(sel, t->excludes[i]);
		if (rc == 0)
			rc = sp_selection_add_exclude(names, t->excludes[i]);
	}
	if (rc == 0 && rank != TUI_ALL_RANKS) {
		snprintf(spec, sizeof(spec), "%ld", rank);
		rc = sp_selection_add_ranks(sel, spec);
	}
	if (rc < 0) {
		sp_selection_destroy(sel);
		sp_selection_destroy(names);
		return rc;
	}
	sp_selection_destroy(t->sel);
	sp_selection_destroy(t->names);
	t->sel = sel;
	t->names = names;
	return 0;
}

/* Drop everything computed for the old filter / rank / lane. */
static void reset_views(struct tui *t)
{
	tui_summary_reset(t);
	tui_calltree_reset(t);
	tui_ranks_reset(t);
	tui_timeline_reset(t);
}

void tui_set_rank(struct tui *t, long rank)
{
	if (make_selections(t, t->filter, rank) < 0) {
		tui_message(t, "rank %ld: %s", rank, sp_reader_last_error());
		return;
	}
	t->rank = rank;
	t->lane = TUI_ALL_LANES;
	reset_views(t);
	if (rank == TUI_ALL_RANKS)
		tui_message(t, "showing all ranks");
	else
		tui_message(t, "showing rank %ld", rank);
}

static void prompt_filter(struct tui *t)
{
	char buf[sizeof(t->filter)];

	snprintf(buf, sizeof(buf), "%s", t->filter);
	if (!tui_prompt(t, "filter (regex, as --include; empty = all): ", buf, sizeof(buf)))
		return;
	if (make_selections(t, buf, t->rank) < 0) {
		tui_message(t, "bad filter: %s", sp_reader_last_error());
		return;
	}
	snprintf(t->filter, sizeof(t->filter), "%s", buf);
	reset_views(t);
	tui_message(t, buf[0] ? "filter: %s" : "filter cleared%s", buf);
}

static void prompt_rank(struct tui *t)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(t->r, &ranks);
	char label[128], buf[32] = "";
	char *end;
	long rank;

	if (n == 0)
		return;
	snprintf(label, sizeof(label), "rank (%u-%u, or 'all'): ", ranks[0], ranks[n - 1]);
	if (!tui_prompt(t, label, buf, sizeof(buf)))
		return;
	if (buf[0] == '\0' || strcmp(buf, "all") == 0 || strcmp(buf, "a") == 0) {
		tui_set_rank(t, TUI_ALL_RANKS);
		return;
	}
	rank = strtol(buf, &end, 10);
	if (*end || end == buf || !rank_exists(t, rank)) {
		tui_message(t, "no rank '%s' (ranks %u-%u)", buf, ranks[0], ranks[n - 1]);
		return;
	}
	tui_set_rank(t, rank);
}

/* " (name)" of a thread from the thread table, or "". */
static const char *thread_label(const struct tui *t, long rank, int64_t lane)
{
	static char buf[128];

	for (size_t i = 0; i < sp_reader_num_threads(t->r); i++) {
		const struct sp_thread *th = sp_reader_thread(t->r, i);

		if ((long)th->rank == rank && th->index == lane && th->name && th->name[0]) {
			snprintf(buf, sizeof(buf), " (%s)", th->name);
			return buf;
		}
	}
	return "";
}

/* Cycle the thread lane: all, then each thread id of the rank, then all. */
static void next_lane(struct tui *t)
{
	const int64_t *lanes = sp_reader_column(t->r, SP_COL_THREAD_IDS);
	long rank = tui_single_rank(t);
	int64_t next = INT64_MAX;

	if (!lanes) {
		tui_message(t, "this file has one thread per rank");
		return;
	}
	for (size_t i = 0; i < sp_reader_num_rows(t->r); i++) {
		const struct sp_row *row = sp_reader_row(t->r, i);

		if ((long)row->rank != rank)
			continue;
		for (uint64_t e = row->offset; e < row->offset + row->count; e++)
			if ((t->lane == TUI_ALL_LANES || lanes[e] > t->lane) && lanes[e] < next)
				next = lanes[e];
	}
	t->lane = next == INT64_MAX ? TUI_ALL_LANES : next;
	tui_calltree_reset(t);
	tui_timeline_reset(t);
	if (t->lane == TUI_ALL_LANES)
		tui_message(t, "all threads");
	else
		tui_message(t, "thread %lld%s", (long long)t->lane, thread_label(t, rank, t->lane));
}

static void export_csv(struct tui *t)
{
	static const char *const names[TUI_N_PANES] = {
	    "summary", "calltree", "ranks", "metadata", "timeline",
	};
	const char *base = strrchr(t->path, '/');
	char buf[1024], stem[512];
	char *dot;
	FILE *f;
	long n;

	snprintf(stem, sizeof(stem), "%s", base ? base + 1 : t->path);
	if ((dot = strrchr(stem, '.')) && dot != stem)
		*dot = '\0';
	snprintf(buf, sizeof(buf), "%s-%s.csv", stem, names[t->pane]);
	if (!tui_prompt(t, "export CSV to: ", buf, sizeof(buf)) || !buf[0])
		return;
	if (!(f = fopen(buf, "w"))) {
		tui_message(t, "cannot write %s: %s", buf, strerror(errno));
		return;
	}
	n = panes[t->pane]->export_csv(t, f);
	if (fclose(f) != 0 || n < 0) {
		tui_message(t, "export to %s failed", buf);
		return;
	}
	tui_message(t, "wrote %ld rows to %s", n, buf);
}

/* The title bar; busy: a worker is computing, touch no pane state. */
static void draw_title(struct tui *t, bool busy)
{
	char buf[1024], rank[32] = "all", lane[32] = "";
	unsigned nr = sp_reader_num_ranks(t->r);

	if (t->rank != TUI_ALL_RANKS)
		snprintf(rank, sizeof(rank), "%ld", t->rank);
	if (t->lane != TUI_ALL_LANES)
		snprintf(lane, sizeof(lane), "  thread: %lld", (long long)t->lane);
	snprintf(buf, sizeof(buf),
		 " scope-profiler  %s  |  %u rank%s, %zu events  |  rank: %s%s  |  filter: %s  |  "
		 "sort: %s",
		 t->path, nr, nr == 1 ? "" : "s", sp_reader_num_events(t->r), rank, lane,
		 t->filter[0] ? t->filter : "-", busy ? "..." : tui_summary_sort_name(t));
	attron(A_REVERSE);
	tui_put(t, 0, 0, COLS, buf, true);
	attroff(A_REVERSE);
}

static void draw_tabs(struct tui *t)
{
	char buf[64];
	int x = 0;

	move(1, 0);
	clrtoeol();
	for (int p = 0; p < TUI_N_PANES && x < COLS; p++) {
		snprintf(buf, sizeof(buf), " %d %s ", p + 1, panes[p]->title);
		attrset(p == (int)t->pane ? (A_REVERSE | A_BOLD) : A_NORMAL);
		x += tui_put(t, 1, x, COLS - x, buf, false);
		attrset(A_NORMAL);
		x += tui_put(t, 1, x, COLS - x, " ", false);
	}
}

/* Draw the screen; busy: what a worker is computing (seconds so far). */
static void draw(struct tui *t, const char *busy, double secs)
{
	const char *hint =
	    "?:help  q:quit  Tab/1-5:pane  /:filter  s:sort  r:rank  t:thread  e:export CSV";
	const char *msg;
	char buf[256];

	erase();
	if (LINES < 8 || COLS < 40) {
		tui_put(t, 0, 0, COLS, "terminal too small", false);
		refresh();
		return;
	}
	if (busy) {
		snprintf(buf, sizeof(buf), "%s of %zu events ... %.1f s  (q quits)", busy,
			 sp_reader_num_events(t->r), secs);
		tui_put(t, 3, 2, COLS - 2, buf, false);
	} else {
		panes[t->pane]->draw(t, 2, LINES - 3);
	}
	draw_title(t, busy != NULL);
	draw_tabs(t);
	/* The worker may be writing t->msg while busy. */
	msg = busy ? "" : t->msg;
	attron(msg[0] ? A_BOLD : A_DIM);
	tui_put(t, LINES - 1, 0, COLS, msg[0] ? msg : busy ? "q:quit" : hint, true);
	attroff(msg[0] ? A_BOLD : A_DIM);
	refresh();
}

/* Keys that work in every pane. Returns 0 handled, 1 not handled, -1 quit. */
static int global_key(struct tui *t, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q':
		return -1;
	case '?':
		tui_help(t);
		return 0;
	case '/':
		prompt_filter(t);
		return 0;
	case 'r':
		prompt_rank(t);
		return 0;
	case 't':
		next_lane(t);
		return 0;
	case 'e':
		export_csv(t);
		return 0;
	case '\t':
		t->pane = (t->pane + 1) % TUI_N_PANES;
		return 0;
	case KEY_BTAB:
		t->pane = (t->pane + TUI_N_PANES - 1) % TUI_N_PANES;
		return 0;
	case KEY_RESIZE:
		clear();
		return 0;
	default:
		if (ch >= '1' && ch < '1' + TUI_N_PANES) {
			t->pane = (enum tui_pane_id)(ch - '1');
			return 0;
		}
		return 1;
	}
}

struct job {
	struct tui *t;
	const struct tui_pane *pane;
	atomic_bool done;
};

static void *job_main(void *arg)
{
	struct job *j = arg;

	j->pane->prepare(j->t);
	atomic_store(&j->done, true);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Compute what the current pane needs on a worker thread while the screen
 * shows the frame and the progress, so the first screen (and every later
 * recomputation) appears at once and resizes and 'q' still work. The
 * reader is used by the worker only; this thread draws no pane meanwhile.
 * Returns false when the user quit (the worker cannot be interrupted).
 */
static bool prepare_pane(struct tui *t)
{
	const struct tui_pane *p = panes[t->pane];
	struct job j = {.t = t, .pane = p};
	double t0 = now();
	struct timespec deadline;
	pthread_t worker;
	bool quit = false;

	if (!p->ready || p->ready(t))
		return true;
	atomic_init(&j.done, false);
	if (pthread_create(&worker, NULL, job_main, &j) != 0) {
		p->prepare(t);
		return true;
	}
	/* Quick jobs finish without a progress screen flashing by. */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += 40 * 1000 * 1000;
	if (deadline.tv_nsec >= 1000 * 1000 * 1000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000 * 1000 * 1000;
	}
	if (pthread_timedjoin_np(worker, NULL, &deadline) == 0)
		return true;
	timeout(10); /* poll: getch cannot wait for the worker */
	while (!atomic_load(&j.done) && !quit) {
		int ch;

		draw(t, p->busy, now() - t0);
		ch = getch();
		quit = ch == 'q' || ch == 'Q';
		if (ch == KEY_RESIZE)
			clear();
	}
	timeout(-1);
	if (quit)
		return false;
	pthread_join(worker, NULL);
	return true;
}

static void loop(struct tui *t)
{
	for (;;) {
		int ch, rc;

		if (!prepare_pane(t)) {
			/* The worker still uses the reader: leave without
			 * freeing anything under it. */
			endwin();
			fflush(NULL);
			_exit(EXIT_OK);
		}
		draw(t, NULL, 0);
		ch = tui_getch();
		t->msg[0] = '\0';
		rc = global_key(t, ch);
		if (rc < 0)
			break;
		if (rc > 0 && !panes[t->pane]->key(t, ch, LINES - 3) && ch != KEY_RESIZE)
			beep();
	}
}

static int run(struct tui *t, const struct options *o)
{
	bool utf8;

	setlocale(LC_ALL, "");
	utf8 = !o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	t->utf8 = utf8;
	t->g = tui_glyphs(utf8);
	t->lane = TUI_ALL_LANES;
	t->rank = o->rank;
	snprintf(t->filter, sizeof(t->filter), "%s", o->include ? o->include : "");
	if (!initscr())
		return EXIT_USAGE;
	set_escdelay(25);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	loop(t);
	endwin();
	return EXIT_OK;
}

static int parse(int argc, char **argv, struct cli_common *c, struct options *o)
{
	static const struct option options[] = {
	    {"include", required_argument, NULL, OPT_INCLUDE},
	    {"exclude", required_argument, NULL, OPT_EXCLUDE},
	    {"rank", required_argument, NULL, OPT_RANK},
	    {"ascii", no_argument, NULL, OPT_ASCII},
	    {"help", no_argument, NULL, OPT_HELP},
	    {0},
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "hi:e:", options, NULL)) != -1) {
		opt = opt == 'i' ? OPT_INCLUDE : opt == 'e' ? OPT_EXCLUDE : opt;
		char *end, **p;

		switch (opt) {
		case OPT_INCLUDE:
			o->include = optarg;
			break;
		case OPT_EXCLUDE:
			p = realloc(o->excludes, (o->n_excludes + 1) * sizeof(*p));
			if (!p)
				return cli_usage_error(c, "out of memory");
			o->excludes = p;
			o->excludes[o->n_excludes++] = optarg;
			break;
		case OPT_RANK:
			o->rank = strtol(optarg, &end, 10);
			if (*end || end == optarg || o->rank < 0)
				return cli_usage_error(c, "bad rank '%s'", optarg);
			break;
		case OPT_ASCII:
			o->ascii = true;
			break;
		case 'h':
		case OPT_HELP:
			c->help = true;
			break;
		default:
			return cli_usage_error(c, "invalid option");
		}
	}
	if (c->help)
		return 0;
	if (cli_collect_files(c, argc, argv, optind) < 0)
		return cli_usage_error(c, "out of memory");
	if (c->n_files != 1)
		return cli_usage_error(c, c->n_files ? "one profile file at a time"
						     : "no profile file given");
	return 0;
}

/* Open the profile and check what the options name. EXIT_OK or an error. */
static int setup(struct cli_common *c, struct tui *t, const struct options *o)
{
	int rc;

	/* Open first: an unreadable file is reported as such even in a pipe. */
	c->read_columns = true;
	rc = cli_open(c, c->files[0], &t->r);
	if (rc)
		return rc;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cli_error(c, "%s: needs a terminal (stdin and stdout)", c->files[0]);
		return EXIT_USAGE;
	}
	t->path = c->files[0];
	t->rank = o->rank;
	t->excludes = o->excludes;
	t->n_excludes = o->n_excludes;
	if (o->rank != TUI_ALL_RANKS && !rank_exists(t, o->rank)) {
		cli_error(c, "%s: no rank %ld", t->path, o->rank);
		return EXIT_USAGE;
	}
	if (make_selections(t, o->include ? o->include : "", o->rank) < 0) {
		cli_error(c, "%s", sp_reader_last_error());
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_tui(int argc, char **argv)
{
	struct options o = {.rank = TUI_ALL_RANKS};
	struct cli_common c;
	struct tui t = {0};
	int rc;

	if (cli_common_init(&c, "tui", usage) < 0)
		return EXIT_USAGE;
	rc = parse(argc, argv, &c, &o);
	if (rc == 0 && c.help)
		fputs(help, stdout);
	else if (rc == 0 && (rc = setup(&c, &t, &o)) == EXIT_OK)
		rc = run(&t, &o);
	tui_summary_destroy(&t);
	tui_calltree_destroy(&t);
	tui_ranks_destroy(&t);
	tui_meta_destroy(&t);
	tui_timeline_destroy(&t);
	sp_selection_destroy(t.sel);
	sp_selection_destroy(t.names);
	sp_reader_destroy(t.r);
	free(o.excludes);
	cli_common_fini(&c);
	return rc;
}
