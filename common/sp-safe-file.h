/* SPDX-License-Identifier: MIT */
/*
 * Files created safely in directories other users can write (/tmp, shared
 * scratch). A temporary with a random name is created O_CREAT|O_EXCL|
 * O_NOFOLLOW relative to the output's directory, which is opened once; it
 * is renamed into place within that same directory. So nothing planted at
 * a predictable name (a symlink to a victim file, a FIFO, a file of another
 * user) is ever followed, truncated or written through, and a directory
 * swapped meanwhile does not redirect the output. The mode is 0666 less the
 * umask, as open(2) gives it.
 */
#ifndef SP_SAFE_FILE_H
#define SP_SAFE_FILE_H

#include <stdbool.h>

struct sp_safe_file {
	int dirfd;      /* the output's directory (O_PATH | O_DIRECTORY) */
	int fd;         /* the temporary, O_RDWR | O_CLOEXEC; -1 once closed */
	char *dir;      /* the output's directory, as named */
	char *base;     /* the output's name within dirfd */
	char *tmp;      /* the temporary's name within dirfd */
	char *tmp_path; /* dir/tmp: for messages and for libraries that open by name */
	bool created;   /* the temporary exists and is ours to remove */
	bool committed;
};

/*
 * sp_safe_create() - create the temporary for @path, named
 * <prefix><base of path><infix><8 random hex digits><suffix> in the
 * directory of @path (base cut to 200 bytes so the name stays valid).
 * Return: 0, or a negative errno (@f is then empty: sp_safe_close is safe).
 */
int sp_safe_create(struct sp_safe_file *f, const char *path, const char *prefix,
		   const char *infix, const char *suffix);

/*
 * sp_safe_fd_path() - a name that opens the temporary itself, never what
 * is at tmp_path now: /proc/self/fd/<fd> when /proc is there, else
 * tmp_path. For libraries that only open by name (HDF5). @buf: 32 bytes.
 */
const char *sp_safe_fd_path(const struct sp_safe_file *f, char *buf);

/* sp_open_dir_of() - the directory @path is in, opened O_PATH |
 * O_DIRECTORY | O_CLOEXEC. Return: a descriptor, or -1 (errno set). */
int sp_open_dir_of(const char *path);

/* sp_safe_is_ours() - is @fd the file sp_safe_create made (same inode)? */
bool sp_safe_is_ours(const struct sp_safe_file *f, int fd);

/*
 * sp_safe_commit() - rename the temporary over the output, in the same
 * directory (renameat: a symlink at the output is replaced, never
 * followed), then, if durable, fsync the directory (the name survives a
 * crash of the machine, not only of the process). Return: 0 or a negative
 * errno.
 */
int sp_safe_commit(struct sp_safe_file *f, bool durable);

/* sp_safe_close() - close descriptors, remove the temporary if it was not
 * committed, free the names. */
void sp_safe_close(struct sp_safe_file *f);

#endif
