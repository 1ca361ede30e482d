/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a path of an image's tree (a sysroot) as the image itself would see it:
 * ".." and absolute symlinks stay inside the tree, never reach this machine's files;
 * and reading a file that may be anything (a fifo, a device, huge) without blocking
 * or without end.
 */
#ifndef GB_SYSROOT_H
#define GB_SYSROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/**
 * Open @p path (relative or absolute) under the directory @p rootfd, resolved as if
 * @p rootfd were "/": an absolute symlink target and ".." at the top stay at
 * @p rootfd, as openat2()'s RESOLVE_IN_ROOT does. @p flags are open()'s, for
 * opening an existing file (O_CREAT is not supported); O_NOFOLLOW applies to the
 * last component. Returns an fd or -errno.
 *
 * Where the kernel has no openat2() (before 5.6, or a seccomp filter refuses it),
 * gb_sysroot_open_walk() does the same resolution.
 */
int gb_sysroot_open(int rootfd, const char *path, int flags);

/**
 * gb_sysroot_open() without openat2(): one component at a time, each opened
 * O_PATH|O_NOFOLLOW, a symlink read and its target walked in its place (an
 * absolute one from @p rootfd), at most 40 of them as the kernel allows.
 */
int gb_sysroot_open_walk(int rootfd, const char *path, int flags);

/**
 * Open @p name under @p dirfd for reading, a regular file only: with @p in_root
 * resolved inside @p dirfd as the root (gb_sysroot_open()), else as openat() does;
 * @p flags are added (O_NOFOLLOW). It is looked at through an O_PATH fd first, so a
 * fifo, a device or a socket is refused without being opened for reading: no open
 * blocks, no device is started. Returns an fd and *@p st, or -errno with why in
 * @p why ("not a regular file (fifo)", "cannot open: ...").
 */
int gb_open_regular(bool in_root, int dirfd, const char *name, int flags, struct stat *st,
		    char *why, size_t why_size);

/**
 * All of @p fd, NUL-terminated, in *@p ret (to free), if it is at most @p max bytes:
 * a larger file is not what it should be (-EFBIG). 0, or -errno with why in @p why.
 */
int gb_read_all(int fd, size_t max, char **ret, size_t *ret_len, char *why, size_t why_size);

#endif
