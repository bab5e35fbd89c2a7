/* SPDX-License-Identifier: MIT */
/*
 * Whole-buffer positional I/O: pread(2)/pwrite(2) until done, restarted on
 * EINTR. Async-signal-safe (the spill's signal dump uses the write).
 */
#ifndef SP_IO_H
#define SP_IO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* Returns 0, -errno, or -EIO when the file takes no more bytes. */
static inline int sp_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	const char *p = buf;
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Returns 0, -errno, or -EIO when the file ends first. */
static inline int sp_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

#endif /* SP_IO_H */
