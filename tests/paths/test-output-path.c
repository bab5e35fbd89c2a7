/* SPDX-License-Identifier: MIT */
/*
 * The output path's rules on their own (recorder/output-path.c): each
 * placeholder, templates for `run`, absolute names, the exec'd child's
 * name, the fallback's name and safety, and rotation on real files.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "output-path.h"
#include "sp-spill.h"
#include "spill-read.h"
#include "check-main.h"

static char *expand(const char *tmpl, bool keep_pid)
{
	struct sp_path_values v = {
		.pid = 4242, .rank = 3, .host = "node%7", .job = "J1",
		.start_s = 1764641700, /* 2025-12-02T02:15:00Z */
		.keep_pid = keep_pid,
	};
	char *out = NULL;
	ck_assert_int_eq(sp_output_path_expand(tmpl, &v, &out), 0);
	return out;
}

START_TEST(placeholders)
{
	char *s = expand("a-%p-%r-%h-%j-%t-%%-%x-%", false);
	ck_assert_str_eq(s, "a-4242-3-node%7-J1-20251202T021500Z-%-%x-%");
	free(s);
	/* For run: %p and %% stay, a '%' of a value is doubled. */
	s = expand("a-%p-%h-%%", true);
	ck_assert_str_eq(s, "a-%p-node%%7-%%");
	free(s);
	/* %r too: the program decides whether it names a file per rank. */
	s = expand("%r-%t", true);
	ck_assert_str_eq(s, "%r-20251202T021500Z");
	free(s);
	ck_assert(sp_output_template_per_process("/d/out-%r.h5"));
	ck_assert(sp_output_template_per_process("/d/%p"));
	ck_assert(!sp_output_template_per_process("/d/out.h5"));
	ck_assert(!sp_output_template_per_process("/d/100%%rate%%pct.h5"));
	ck_assert(!sp_output_template_per_process("/d/x%"));
	struct sp_path_values none = { .pid = 1, .rank = 0 };
	ck_assert_int_eq(sp_output_path_expand("%j-%h", &none, &s), 0);
	ck_assert_str_eq(s, "nojob-localhost");
	free(s);
}
END_TEST

START_TEST(environment)
{
	unsetenv("SLURM_JOB_ID");
	unsetenv("PBS_JOBID");
	unsetenv("LSB_JOBID");
	setenv("FLUX_JOB_ID", "f1", 1);
	const char *sched = NULL;
	ck_assert_str_eq(sp_job_id(&sched), "f1");
	ck_assert_str_eq(sched, "flux");
	setenv("PBS_JOBID", "7.pbs", 1);
	ck_assert_str_eq(sp_job_id(&sched), "7.pbs");
	ck_assert_str_eq(sched, "pbs");
	setenv("SLURM_JOB_ID", "99", 1);
	ck_assert_str_eq(sp_job_id(&sched), "99");
	ck_assert_str_eq(sched, "slurm");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMIX_RANK");
	unsetenv("PMI_RANK");
	unsetenv("SLURM_PROCID");
	ck_assert_int_eq(sp_launcher_rank(), -1);
	setenv("SLURM_PROCID", "5", 1);
	ck_assert_int_eq(sp_launcher_rank(), 5);
	setenv("OMPI_COMM_WORLD_RANK", "2", 1);
	ck_assert_int_eq(sp_launcher_rank(), 2);
	setenv("OMPI_COMM_WORLD_RANK", "x", 1);
	ck_assert_int_eq(sp_launcher_rank(), 5);
}
END_TEST

START_TEST(names)
{
	char *s;
	ck_assert_int_eq(sp_output_path_for_pid("/d/out.h5", 12, &s), 0);
	ck_assert_str_eq(s, "/d/out.pid12.h5");
	free(s);
	ck_assert_int_eq(sp_output_path_for_pid("/d.x/out", 12, &s), 0);
	ck_assert_str_eq(s, "/d.x/out.pid12");
	free(s);
	ck_assert_int_eq(sp_output_path_for_rank("/d/out.h5", 3, &s), 0);
	ck_assert_str_eq(s, "/d/out.rank3.h5");
	free(s);
	ck_assert_int_eq(sp_output_path_for_pid("/d/.hidden", 12, &s), 0);
	ck_assert_str_eq(s, "/d/.hidden.pid12");
	free(s);
	ck_assert_int_eq(sp_output_path_absolute("/abs/x.h5", &s), 0);
	ck_assert_str_eq(s, "/abs/x.h5");
	free(s);
	char *cwd = getcwd(NULL, 0), *want;
	ck_assert_int_eq(sp_output_path_absolute("./x.h5", &s), 0);
	ck_assert_int_ge(asprintf(&want, "%s/x.h5", cwd), 0);
	ck_assert_str_eq(s, want);
	free(s);
	free(want);
	free(cwd);
}
END_TEST

static char dir[] = "/tmp/sp-output-path-XXXXXX";

static void make_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(rotation)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *out, *moved = NULL, *p1, *p2;
	ck_assert_int_ge(asprintf(&out, "%s/r.h5", dir), 0);
	ck_assert_int_ge(asprintf(&p1, "%s/r.1.h5", dir), 0);
	ck_assert_int_ge(asprintf(&p2, "%s/r.2.h5", dir), 0);
	ck_assert_int_eq(sp_output_path_rotate(out, &moved), 0); /* nothing there */
	make_file(out, "");
	ck_assert_int_eq(sp_output_path_rotate(out, &moved), 0); /* empty: not kept */
	make_file(out, "first");
	ck_assert_int_eq(sp_output_path_rotate(out, &moved), 1);
	ck_assert_str_eq(moved, p1);
	free(moved);
	ck_assert_str_eq(slurp(p1), "first");
	ck_assert_int_eq(access(out, F_OK), -1);
	make_file(out, "second");
	ck_assert_int_eq(sp_output_path_rotate(out, &moved), 1);
	ck_assert_str_eq(moved, p2); /* never over r.1.h5 */
	free(moved);
	ck_assert_str_eq(slurp(p1), "first");
	ck_assert_str_eq(slurp(p2), "second");
	/* The check: a directory, a missing one, and a writable one. */
	ck_assert_int_eq(sp_output_path_check(dir), -EISDIR);
	ck_assert_int_eq(sp_output_path_check("/nonexistent-dir-sp/x.h5"), -ENOENT);
	ck_assert_int_eq(sp_output_path_check(out), 0);
	ck_assert_int_eq(access(out, F_OK), -1); /* the probe is gone */
	/* The fallback: in $TMPDIR, unique, created empty, the extension kept. */
	setenv("TMPDIR", dir, 1);
	char *fb1, *fb2;
	ck_assert_int_eq(sp_output_path_fallback("/ro/prof.h5", &fb1), 0);
	ck_assert_int_eq(sp_output_path_fallback("/ro/prof.h5", &fb2), 0);
	ck_assert_str_ne(fb1, fb2);
	ck_assert_int_eq(strncmp(fb1, dir, strlen(dir)), 0);
	ck_assert_str_eq(fb1 + strlen(fb1) - 3, ".h5");
	struct stat st;
	ck_assert_int_eq(lstat(fb1, &st), 0);
	ck_assert(S_ISREG(st.st_mode) && st.st_size == 0 && (st.st_mode & 0777) == 0600);
	setenv("TMPDIR", "relative", 1); /* not absolute: /tmp */
	char *fb3;
	ck_assert_int_eq(sp_output_path_fallback("x", &fb3), 0);
	ck_assert_int_eq(strncmp(fb3, "/tmp/scope-profiler-x.", 22), 0);
	unlink(fb3);
	unlink(fb1);
	unlink(fb2);
	unlink(p1);
	unlink(p2);
	rmdir(dir);
	free(fb1);
	free(fb2);
	free(fb3);
	free(out);
	free(p1);
	free(p2);
}
END_TEST

START_TEST(pid_names)
{
	pid_t pid = 0;
	ck_assert(sp_output_path_is_for_pid("/d/out.h5", "out.pid12.h5", &pid) && pid == 12);
	ck_assert(sp_output_path_is_for_pid("/d/out", "out.pid7", &pid) && pid == 7);
	ck_assert(sp_output_path_is_for_pid("/d/.hidden", ".hidden.pid3", &pid) && pid == 3);
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "out.h5", &pid));
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "out.pid.h5", &pid));
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "out.pid012.h5", &pid));
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "out.pid12.h5.tmp", &pid));
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "out.pid12x.h5", &pid));
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "other.pid12.h5", &pid));
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "out.rank1.h5", &pid));
	ck_assert(!sp_output_path_is_for_pid("/d/out.h5", "out.pid99999999999.h5", &pid));
}
END_TEST

/* Remove and free the n files, then the directory d; free out. */
static void remove_all(char **paths, size_t n, const char *d, char *out)
{
	for (size_t i = 0; i < n; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	ck_assert_int_eq(rmdir(d), 0);
	free(out);
}

/* The fake tree check: the file starts with "tree A". */
static bool starts_tree_a(int fd, void *ctx)
{
	char b[8] = "";
	ck_assert_str_eq(ctx, "ctx");
	return pread(fd, b, 6, 0) == 6 && memcmp(b, "tree A", 6) == 0;
}

START_TEST(adopt)
{
	char d[] = "/tmp/sp-adopt-XXXXXX", *out, *p, msg[1024];
	ck_assert_ptr_nonnull(mkdtemp(d));
	ck_assert_int_ge(asprintf(&out, "%s/a.h5", d), 0);
	int err = -1;
	/* Nothing there: none found, no line. */
	ck_assert_uint_eq(sp_output_adopt(out, time(NULL), "sh", starts_tree_a, "ctx", msg,
					  sizeof msg, &err), 0);
	ck_assert_str_eq(msg, "");
	/* Another tree's file, an old one of ours, a link to ours, a file of
	 * another name: none taken. */
	char *other, *old, *link, *ours, *odd;
	ck_assert_int_ge(asprintf(&other, "%s/a.pid10.h5", d), 0);
	ck_assert_int_ge(asprintf(&old, "%s/a.pid11.h5", d), 0);
	ck_assert_int_ge(asprintf(&link, "%s/a.pid12.h5", d), 0);
	ck_assert_int_ge(asprintf(&odd, "%s/a.pid13.h5x", d), 0);
	ck_assert_int_ge(asprintf(&ours, "%s/a.pid14.h5", d), 0);
	make_file(other, "tree B");
	make_file(old, "tree A");
	ck_assert_int_eq(utimes(old, (struct timeval[2]){ { 1000, 0 }, { 1000, 0 } }), 0);
	make_file(odd, "tree A");
	ck_assert_int_ge(asprintf(&p, "%s/target", d), 0);
	make_file(p, "tree A");
	ck_assert_int_eq(symlink(p, link), 0);
	ck_assert_uint_eq(sp_output_adopt(out, time(NULL) - 1, "sh", starts_tree_a, "ctx", msg,
					  sizeof msg, &err), 0);
	/* One of ours: moved to the output, the line says from where. */
	make_file(ours, "tree A, the program's");
	ck_assert_uint_eq(sp_output_adopt(out, time(NULL) - 1, "sh", starts_tree_a, "ctx", msg,
					  sizeof msg, &err), 1);
	ck_assert_int_eq(err, 0);
	ck_assert_str_eq(slurp(out), "tree A, the program's");
	ck_assert_int_eq(access(ours, F_OK), -1);
	char *want;
	ck_assert_int_ge(asprintf(&want, "sh recorded nothing: %s is the profile of the program it "
				  "started (pid 14), which wrote it as %s", out, ours), 0);
	ck_assert_str_eq(msg, want);
	free(want);
	/* Never over a file: the output exists now. */
	make_file(ours, "tree A again");
	ck_assert_uint_eq(sp_output_adopt(out, time(NULL) - 1, "sh", starts_tree_a, "ctx", msg,
					  sizeof msg, &err), 1);
	ck_assert_int_eq(err, -EEXIST);
	ck_assert_str_eq(slurp(out), "tree A, the program's");
	ck_assert_str_eq(slurp(ours), "tree A again");
	/* Two of ours: both listed, none moved. */
	unlink(out);
	make_file(other, "tree A too");
	ck_assert_uint_eq(sp_output_adopt(out, time(NULL) - 1, "sh", starts_tree_a, "ctx", msg,
					  sizeof msg, &err), 2);
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(access(out, F_OK), -1);
	ck_assert_ptr_nonnull(strstr(msg, "sh recorded nothing; the 2 programs it started wrote "
				  "their own profiles: "));
	ck_assert_ptr_nonnull(strstr(msg, other));
	ck_assert_ptr_nonnull(strstr(msg, ours));
	char *paths[] = { other, old, link, odd, ours, p };
	remove_all(paths, sizeof paths / sizeof *paths, d, out);
}
END_TEST

/* A wrapped program's spill beside the output: <stem>.pid<N><ext> and the
 * suffix asked for ("%p": the same N), and only those. */
START_TEST(tree_files)
{
	char d[] = "/tmp/sp-treefiles-XXXXXX", *out, *found[2];
	ck_assert_ptr_nonnull(mkdtemp(d));
	ck_assert_int_ge(asprintf(&out, "%s/a.h5", d), 0);
	const char *files[] = { "a.pid20.h5.spill.rank00001", "a.pid21.h5.spill.rank00002",
				"a.pid22.h5.spill.pid22", "a.pid23.h5.spill.pid24", "a.pid25.h5",
				"a.h5.spill.pid26" };
	char *paths[6];
	for (size_t i = 0; i < 6; i++) {
		ck_assert_int_ge(asprintf(&paths[i], "%s/%s", d, files[i]), 0);
		make_file(paths[i], "tree A");
	}
	pid_t pid;
	ck_assert_uint_eq(sp_output_tree_files(out, ".spill.rank00001", time(NULL) - 1,
					       starts_tree_a, "ctx", found, 2, &pid), 1);
	ck_assert_str_eq(found[0], paths[0]);
	ck_assert_ptr_null(found[1]);
	ck_assert_int_eq(pid, 20);
	free(found[0]);
	ck_assert_uint_eq(sp_output_tree_files(out, ".spill.pid%p", time(NULL) - 1,
					       starts_tree_a, "ctx", found, 2, &pid), 1);
	ck_assert_str_eq(found[0], paths[2]);
	ck_assert_int_eq(pid, 22);
	free(found[0]);
	ck_assert_uint_eq(sp_output_tree_files(out, ".spill.rank00003", time(NULL) - 1,
					       starts_tree_a, "ctx", found, 2, &pid), 0);
	ck_assert_ptr_null(found[0]);
	remove_all(paths, 6, d, out);
}
END_TEST

/* A spill file's tree: its first record, read without a whole pass. */
START_TEST(spill_tree)
{
	char p[] = "/tmp/sp-spilltree-XXXXXX";
	int fd = mkstemp(p);
	ck_assert_int_ge(fd, 0);
	struct sp_spill_header h = { .magic = SP_SPILL_MAGIC, .version = SP_SPILL_VERSION,
				     .header_bytes = sizeof h, .pid = 42, .rank = -1 };
	struct sp_spill_rec r = { SP_SPILL_REC_MAGIC, SP_SPILL_TREE, sizeof(struct sp_spill_tree), 0 };
	struct sp_spill_tree t = { "42:00112233445566ff" };
	ck_assert_int_eq(pwrite(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	/* no record yet: not of any tree */
	ck_assert(!sp_spill_fd_of_tree(fd, "42:00112233445566ff"));
	off_t at = (off_t)((sizeof h + 7) & ~(size_t)7);
	ck_assert_int_eq(pwrite(fd, &t, sizeof t, at + (off_t)sizeof r), (ssize_t)sizeof t);
	ck_assert_int_eq(pwrite(fd, &r, sizeof r, at), (ssize_t)sizeof r);
	ck_assert(sp_spill_fd_of_tree(fd, "42:00112233445566ff"));
	ck_assert(!sp_spill_fd_of_tree(fd, "42:00112233445566fe"));
	ck_assert(!sp_spill_fd_of_tree(fd, "42:00112233445566f"));
	/* the reader keeps it; a damaged header is nobody's */
	struct sp_spill_data data;
	ck_assert_int_eq(sp_spill_read(p, &data), 0);
	ck_assert_str_eq(data.tree, "42:00112233445566ff");
	sp_spill_data_free(&data);
	/* a wrapper's spill: no REGION record; then one (a manual region "x") */
	ck_assert(!sp_spill_fd_has_region(fd));
	off_t at2 = at + (off_t)((sizeof r + sizeof t + 7) & ~(size_t)7);
	struct sp_spill_region g = { .id = 0, .module = -1, .name_bytes = 1 };
	struct sp_spill_rec rg = { SP_SPILL_REC_MAGIC, SP_SPILL_REGION, sizeof g + 1, 0 };
	ck_assert_int_eq(pwrite(fd, &g, sizeof g, at2 + (off_t)sizeof rg), (ssize_t)sizeof g);
	ck_assert_int_eq(pwrite(fd, "x", 1, at2 + (off_t)(sizeof rg + sizeof g)), 1);
	ck_assert_int_eq(pwrite(fd, &rg, sizeof rg, at2), (ssize_t)sizeof rg);
	ck_assert(sp_spill_fd_has_region(fd));
	h.header_bytes = 1u << 20;
	ck_assert_int_eq(pwrite(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	ck_assert(!sp_spill_fd_of_tree(fd, "42:00112233445566ff"));
	close(fd);
	unlink(p);
}
END_TEST

static Suite *output_path_suite(void)
{
	Suite *s = suite_create("output-path");
	TCase *tc = tcase_create("rules");
	tcase_add_test(tc, placeholders);
	tcase_add_test(tc, environment);
	tcase_add_test(tc, names);
	tcase_add_test(tc, rotation);
	tcase_add_test(tc, pid_names);
	tcase_add_test(tc, adopt);
	tcase_add_test(tc, tree_files);
	tcase_add_test(tc, spill_tree);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sp_check_run(output_path_suite(), false);
}
