/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a path of an image's tree (a sysroot) as the image itself would see it:
 * ".." and absolute symlinks stay inside the tree, never reach this machine's files.
 */
#ifndef GB_SYSROOT_H
#define GB_SYSROOT_H

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

#endif
