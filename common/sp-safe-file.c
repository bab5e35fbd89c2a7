/* SPDX-License-Identifier: MIT */
/* Safe creation of output files: see sp-safe-file.h. */
#define _GNU_SOURCE
#include "sp-safe-file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRIES 64

/* 32 random bits: the kernel's, else a mix of the clock, pid and a count
 * (the name need not be secret, only unpredictable enough that O_EXCL
 * rarely meets a planted one; a collision is retried). */
static uint32_t random32(void)
{
	static unsigned count;
	uint32_t r;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
		return r;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
		     ++count * 0xbf58476d1ce4e5b9ull ^ (uint64_t)ts.tv_sec;
	x ^= x >> 31;
	return (uint32_t)(x ^ x >> 32);
}

static void clear(struct sp_safe_file *f)
{
	*f = (struct sp_safe_file){ .dirfd = -1, .fd = -1 };
}

int sp_open_dir_of(const char *path)
{
	char *d = strdup(path);
	int fd = d ? open(dirname(d), O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	free(d);
	return fd;
}

int sp_safe_create(struct sp_safe_file *f, const char *path, const char *prefix,
		   const char *infix, const char *suffix)
{
	clear(f);
	char *d = strdup(path), *b = strdup(path);
	int ret = -ENOMEM;
	if (!d || !b)
		goto out;
	f->dir = strdup(dirname(d));
	f->base = strdup(basename(b));
	if (!f->dir || !f->base)
		goto out;
	ret = -EISDIR;
	if (!f->base[0] || strcmp(f->base, "/") == 0 || strcmp(f->base, ".") == 0 ||
	    strcmp(f->base, "..") == 0)
		goto out;
	f->dirfd = open(f->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0) {
		ret = -errno;
		goto out;
	}
	for (int i = 0; i < TRIES; i++) {
		free(f->tmp);
		if (asprintf(&f->tmp, "%s%.200s%s%08x%s", prefix, f->base, infix, random32(),
			     suffix) < 0) {
			f->tmp = NULL;
			ret = -ENOMEM;
			goto out;
		}
		f->fd = openat(f->dirfd, f->tmp,
			       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (f->fd >= 0) {
			f->created = true;
			break;
		}
		if (errno != EEXIST)
			break;
	}
	if (f->fd < 0) {
		ret = -errno;
		goto out;
	}
	if (asprintf(&f->tmp_path, "%s/%s", f->dir, f->tmp) < 0) {
		f->tmp_path = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = 0;
out:
	free(d);
	free(b);
	if (ret)
		sp_safe_close(f);
	return ret;
}

const char *sp_safe_fd_path(const struct sp_safe_file *f, char *buf)
{
	struct stat a, b;
	snprintf(buf, 32, "/proc/self/fd/%d", f->fd);
	if (stat(buf, &a) == 0 && fstat(f->fd, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return buf;
	return f->tmp_path;
}

bool sp_safe_is_ours(const struct sp_safe_file *f, int fd)
{
	struct stat a, b;
	return f->fd >= 0 && fstat(f->fd, &a) == 0 && fstat(fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int sp_safe_commit(struct sp_safe_file *f, bool durable)
{
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->base) < 0)
		return -errno;
	f->committed = true;
	if (!durable)
		return 0;
	int d = openat(f->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		fsync(d);
		close(d);
	}
	return 0;
}

void sp_safe_close(struct sp_safe_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->dirfd >= 0 && f->created && !f->committed)
		unlinkat(f->dirfd, f->tmp, 0);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->dir);
	free(f->base);
	free(f->tmp);
	free(f->tmp_path);
	clear(f);
}
