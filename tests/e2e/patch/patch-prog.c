/* SPDX-License-Identifier: MIT */
/*
 * Test program for self-patching (tests/e2e/patch/test-patch.py), compiled
 * with -finstrument-functions. Prints on stdout only results that do not
 * depend on the profiler, and what it knows of its own calls as JSON to the
 * file argv[3]:
 *   patch-prog threads N JSON   16 threads call add1(), mix() and stir() N
 *                               times each while they are being patched
 *                               (stir returns nothing: at -O2 its exit hook
 *                               is a tail call, `jmp`, its last
 *                               instruction); slow()
 *                               (20 us a call, 1600 calls) and rare() (30
 *                               calls a thread) are never throttled. Every
 *                               64 calls a thread compares the first bytes
 *                               of add1(), mix() and stir() with a copy taken at
 *                               start: the calls it made before it first
 *                               saw them change all went through the hooks
 *                               (a lower bound of what the hooks counted).
 *   patch-prog fork N JSON      the same with 4 threads, then a child calls
 *                               the (patched) functions N times and reports
 *                               its result; the parent prints both.
 *   patch-prog raise N JSON     4 threads, then raise(SIGTRAP): the default
 *                               action kills the process, unless SIGTRAP was
 *                               ignored when it started.
 *   patch-prog own N JSON       installs its own SIGTRAP handler, raises
 *                               SIGTRAP once, then runs the 16 threads.
 *   patch-prog nest N JSON      one thread: inl() 1000 times, then outer()
 *                               N times, into which inl() is inlined: its
 *                               copy's hook calls are sites of their own,
 *                               patched during outer's first timed call.
 *   patch-prog many N JSON      one thread: 64 tiny functions m00..m63
 *                               called in turn, N times each: 128 hook
 *                               call sites that become hot together, so
 *                               they are patched in a few batches.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
/* Bytes of a function's start that are watched: its enter call at least is
 * there, and the next function starts 64 bytes further at the earliest. */
#define WATCH 48
/* Bytes of each function dumped (hex) at the end, before and after. */
#define DUMP 256

__attribute__((noinline, aligned(64))) unsigned long add1(unsigned long x)
{
	return x + 1;
}

__attribute__((noinline, aligned(64))) unsigned long mix(unsigned long x)
{
	return x * 0x9E3779B97F4A7C15ul ^ (x >> 29);
}

__attribute__((noinline, aligned(64))) void stir(unsigned long *x)
{
	*x ^= *x >> 7;
}

#define NWATCHED 3
static const char *const watched_names[NWATCHED] = { "add1", "mix", "stir" };

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) unsigned long slow(unsigned long x)
{
	long long t0 = now_ns();
	while (now_ns() - t0 < 20000)
		;
	return (x * 3 + 1) & 0xff;
}

__attribute__((noinline)) unsigned long rare(unsigned long x)
{
	return x ^ 0x5555;
}

static long n_calls;

static inline __attribute__((always_inline)) unsigned long inl(unsigned long x)
{
	return x * 7 + 1;
}

__attribute__((noinline)) unsigned long outer(unsigned long x)
{
	return inl(x) ^ 3;
}
static unsigned char orig[NWATCHED][DUMP];

struct result {
	unsigned long sum;
	long slow_calls, rare_calls;
	long unchanged[NWATCHED]; /* calls made before the last look that saw the code unchanged */
	long before[NWATCHED];    /* the same, frozen when a look saw it changed */
};

static void watch(struct result *r, long done_calls)
{
	const void *fn[NWATCHED] = { (const void *)add1, (const void *)mix, (const void *)stir };
	for (int k = 0; k < NWATCHED; k++) {
		if (r->before[k] >= 0)
			continue;
		if (memcmp(orig[k], fn[k], WATCH) != 0)
			r->before[k] = r->unchanged[k];
		else
			r->unchanged[k] = done_calls;
	}
}

static void *worker(void *arg)
{
	long id = (long)arg;
	struct result *r = calloc(1, sizeof *r);
	for (int k = 0; k < NWATCHED; k++)
		r->before[k] = -1;
	unsigned long acc = (unsigned long)id;
	for (long i = 0; i < n_calls; i++) {
		if (!(i & 63))
			watch(r, i);
		acc = add1(acc);
		acc = mix(acc);
		stir(&acc);
		if (i % (n_calls / 100 + 1) == 0 && r->slow_calls < 100) {
			acc += slow(acc);
			r->slow_calls++;
		}
		if (i % (n_calls / 30 + 1) == 0 && r->rare_calls < 30) {
			acc = rare(acc);
			r->rare_calls++;
		}
	}
	for (int k = 0; k < NWATCHED; k++)
		if (r->before[k] < 0)
			r->before[k] = n_calls; /* never seen changed */
	while (r->slow_calls < 100) {
		acc += slow(acc);
		r->slow_calls++;
	}
	while (r->rare_calls < 30) {
		acc = rare(acc);
		r->rare_calls++;
	}
	r->sum = acc;
	return r;
}

static unsigned long run_threads(int nt, FILE *json)
{
	pthread_t th[MAX_THREADS];
	const unsigned char *now[NWATCHED] = { (const unsigned char *)add1,
					       (const unsigned char *)mix,
					       (const unsigned char *)stir };
	for (int k = 0; k < NWATCHED; k++)
		memcpy(orig[k], now[k], DUMP);
	for (long i = 0; i < nt; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	unsigned long total = 0;
	long slow_calls = 0, rare_calls = 0, before[NWATCHED] = { 0 };
	for (int i = 0; i < nt; i++) {
		struct result *r;
		pthread_join(th[i], (void **)&r);
		total ^= r->sum * (unsigned long)(i + 1);
		slow_calls += r->slow_calls;
		rare_calls += r->rare_calls;
		for (int k = 0; k < NWATCHED; k++)
			before[k] += r->before[k];
		free(r);
	}
	fprintf(json, "{\"slow\": %ld, \"rare\": %ld", slow_calls, rare_calls);
	for (int k = 0; k < NWATCHED; k++) {
		fprintf(json, ", \"%s\": %ld, \"%s_before\": %ld", watched_names[k],
			(long)nt * n_calls, watched_names[k], before[k]);
		for (int pass = 0; pass < 2; pass++) {
			fprintf(json, ", \"%s_%s\": \"", watched_names[k], pass ? "code" : "orig");
			for (int i = 0; i < DUMP; i++)
				fprintf(json, "%02x", pass ? now[k][i] : orig[k][i]);
			fprintf(json, "\"");
		}
	}
	return total;
}

static int run_fork(FILE *json)
{
	unsigned long total = run_threads(4, json);
	fflush(stdout);
	int fds[2];
	if (pipe(fds) != 0)
		return 3;
	pid_t pid = fork();
	if (pid == 0) {
		unsigned long acc = 7;
		for (long i = 0; i < n_calls; i++)
			acc = mix(add1(acc));
		acc = rare(acc);
		if (write(fds[1], &acc, sizeof acc) != sizeof acc)
			_exit(4);
		_exit(0);
	}
	int status = 0;
	unsigned long got = 0;
	close(fds[1]);
	if (pid < 0 || read(fds[0], &got, sizeof got) != sizeof got || waitpid(pid, &status, 0) != pid)
		return 5;
	fprintf(json, ", \"child_status\": %d}\n", status);
	printf("parent: threads %lx, child said %lx, exit %d\n", total, got,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

/* 64 tiny functions with sites of their own (noinline: one copy each). */
#define MANY(X) X(00) X(01) X(02) X(03) X(04) X(05) X(06) X(07) X(08) X(09) X(10) X(11) X(12) \
	X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) \
	X(28) X(29) X(30) X(31) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) \
	X(43) X(44) X(45) X(46) X(47) X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) \
	X(58) X(59) X(60) X(61) X(62) X(63)
#define MANY_FN(k) \
	__attribute__((noinline)) unsigned long m##k(unsigned long x) \
	{ \
		return x * 2654435761u + 1##k; \
	}
MANY(MANY_FN)
#define MANY_CALL(k) v = m##k(v);
#define MANY_JSON(k) fprintf(json, "%s\"m" #k "\": %ld", #k[0] == '0' && #k[1] == '0' ? "" : ", ", n_calls);

static volatile sig_atomic_t own_traps;

static void own_handler(int signo, siginfo_t *info, void *uctx)
{
	(void)signo;
	(void)info;
	(void)uctx;
	own_traps++;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	n_calls = atol(argv[2]);
	FILE *json = fopen(argv[3], "w");
	if (!json || n_calls <= 0)
		return 2;
	int rc = 2;
	if (strcmp(argv[1], "threads") == 0) {
		unsigned long total = run_threads(MAX_THREADS, json);
		fprintf(json, "}\n");
		printf("threads %d x %ld calls: checksum %lx\n", MAX_THREADS, n_calls, total);
		rc = 0;
	} else if (strcmp(argv[1], "fork") == 0) {
		rc = run_fork(json);
	} else if (strcmp(argv[1], "raise") == 0) {
		unsigned long total = run_threads(4, json);
		fprintf(json, "}\n");
		fclose(json);
		printf("threads %lx, raising SIGTRAP\n", total);
		fflush(stdout);
		raise(SIGTRAP);
		printf("survived\n");
		return 0;
	} else if (strcmp(argv[1], "nest") == 0) {
		unsigned long v = 0;
		for (int i = 0; i < 1000; i++)
			v = inl(v);
		for (long i = 0; i < n_calls; i++)
			v = outer(v);
		fprintf(json, "{\"outer\": %ld}\n", n_calls);
		printf("nest: %lx\n", v);
		rc = 0;
	} else if (strcmp(argv[1], "many") == 0) {
		unsigned long v = 0;
		for (long i = 0; i < n_calls; i++) {
			MANY(MANY_CALL)
		}
		fprintf(json, "{");
		MANY(MANY_JSON)
		fprintf(json, "}\n");
		printf("many: %lx\n", v);
		rc = 0;
	} else if (strcmp(argv[1], "own") == 0) {
		struct sigaction sa = { .sa_sigaction = own_handler, .sa_flags = SA_SIGINFO };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTRAP, &sa, NULL);
		raise(SIGTRAP);
		unsigned long total = run_threads(MAX_THREADS, json);
		fprintf(json, "}\n");
		printf("own handler: %d trap(s); threads: checksum %lx\n", (int)own_traps, total);
		rc = 0;
	}
	fclose(json);
	return rc;
}
