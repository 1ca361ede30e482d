/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resolving paths inside an image's root: the kernel's RESOLVE_IN_ROOT where it has
 * it, else the same walk done here. Both clamp ".." and absolute symlinks to the
 * root, so a hostile or broken image cannot make a check read this machine's files.
 */
#include "sysroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

/* The kernel's own limit on the symlinks of one resolution. */
#define MAX_SYMLINKS 40

int gb_sysroot_open(int rootfd, const char *path, int flags)
{
#ifdef SYS_openat2
	/* A magic link (/proc/PID/root) would jump out of the root: refused, as
	 * RESOLVE_IN_ROOT does today anyway. */
	struct open_how how = {
		.flags = (unsigned int)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));

	if (fd >= 0)
		return fd;
	/* ENOSYS: a kernel before 5.6; EPERM: a container's seccomp filter that does
	 * not know the call. Any other error is the answer. */
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
#endif
	return gb_sysroot_open_walk(rootfd, path, flags);
}

/* The directories entered below the root, innermost last: ".." closes one. */
struct walk {
	int rootfd;
	int *dirs;
	size_t depth, size;
};

static int walk_cur(const struct walk *w)
{
	return w->depth ? w->dirs[w->depth - 1] : w->rootfd;
}

static void walk_up(struct walk *w, size_t to)
{
	while (w->depth > to)
		close(w->dirs[--w->depth]);
}

/* Takes @p fd. */
static int walk_enter(struct walk *w, int fd)
{
	if (w->depth == w->size) {
		size_t n = w->size ? 2 * w->size : 16;
		int *d = realloc(w->dirs, n * sizeof(*d));

		if (!d) {
			close(fd);
			return -ENOMEM;
		}
		w->dirs = d;
		w->size = n;
	}
	w->dirs[w->depth++] = fd;
	return 0;
}

/* The target of the symlink opened O_PATH as @p fd. */
static int read_link(int fd, char **ret)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(fd, "", buf, sizeof(buf));

	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	if (n == 0)
		return -ENOENT; /* as the kernel resolves an empty target */
	*ret = strndup(buf, n);
	return *ret ? 0 : -ENOMEM;
}

static int open_or_errno(int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, flags);

	return fd < 0 ? -errno : fd;
}

int gb_sysroot_open_walk(int rootfd, const char *path, int flags)
{
	struct walk w = { .rootfd = rootfd };
	unsigned int links = 0;
	char *todo = strdup(path), *pos = todo;
	int r;

	if (!todo)
		return -ENOMEM;
	for (r = *todo ? 0 : -ENOENT; r == 0;) {
		char *name, *next, *n, *target;
		bool last, slash;
		struct stat st;
		size_t len;
		int fd;

		/* Only a path, or a symlink's target, starts with "/": from the root. */
		if (*pos == '/')
			walk_up(&w, 0);
		pos += strspn(pos, "/");
		if (!*pos) {
			r = open_or_errno(walk_cur(&w), ".", flags);
			break;
		}
		len = strcspn(pos, "/");
		next = pos + len + strspn(pos + len, "/");
		last = !*next;
		slash = last && pos[len] == '/';
		name = pos;
		name[len] = '\0';
		pos = next;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			walk_up(&w, w.depth ? w.depth - 1 : 0);
			continue;
		}
		if (last && !slash && (flags & O_NOFOLLOW)) {
			r = open_or_errno(walk_cur(&w), name, flags);
			break;
		}
		fd = openat(walk_cur(&w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			r = -errno;
			if (fd >= 0)
				close(fd);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			r = ++links > MAX_SYMLINKS ? -ELOOP : read_link(fd, &target);
			close(fd);
			if (r < 0)
				break;
			/* The target takes the link's place, before what followed it. */
			if (asprintf(&n, "%s%s%s", target, *next || slash ? "/" : "", next) < 0)
				r = -ENOMEM;
			free(target);
			if (r < 0)
				break;
			free(todo);
			pos = todo = n;
			continue;
		}
		if (last) {
			close(fd);
			/* Not a symlink a moment ago: O_NOFOLLOW keeps it so. */
			r = open_or_errno(walk_cur(&w), name,
					  flags | O_NOFOLLOW | (slash ? O_DIRECTORY : 0));
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			r = -ENOTDIR;
			break;
		}
		r = walk_enter(&w, fd);
	}
	walk_up(&w, 0);
	free(w.dirs);
	free(todo);
	return r;
}

static const char *file_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "directory";
	case S_IFIFO:
		return "fifo";
	case S_IFCHR:
		return "character device";
	case S_IFBLK:
		return "block device";
	case S_IFSOCK:
		return "socket";
	case S_IFLNK:
		return "symbolic link";
	default:
		return "unknown type";
	}
}

static int open_at(bool in_root, int dirfd, const char *name, int flags)
{
	int fd;

	if (in_root)
		return gb_sysroot_open(dirfd, name, flags);
	fd = openat(dirfd, name, flags);
	return fd < 0 ? -errno : fd;
}

int gb_open_regular(bool in_root, int dirfd, const char *name, int flags, struct stat *st,
		    char *why, size_t why_size)
{
	struct stat now;
	int fd, r;

	r = fd = open_at(in_root, dirfd, name, O_PATH | O_CLOEXEC | flags);
	if (fd >= 0) {
		r = fstat(fd, st) < 0 ? -errno : 0;
		close(fd);
	}
	if (r >= 0 && !S_ISREG(st->st_mode)) {
		snprintf(why, why_size, "not a regular file (%s)", file_type(st->st_mode));
		return -EINVAL;
	}
	if (r >= 0)
		r = fd = open_at(in_root, dirfd, name,
				 O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
	if (r < 0) {
		snprintf(why, why_size, "cannot open: %s", strerror(-r));
		return r;
	}
	/* Replaced since it was looked at: what is there now was not. */
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		snprintf(why, why_size, "changed while being opened");
		close(fd);
		return -ESTALE;
	}
	*st = now;
	return fd;
}

int gb_read_all(int fd, size_t max, char **ret, size_t *ret_len, char *why, size_t why_size)
{
	char *buf = NULL;
	size_t size = 0, len = 0;
	ssize_t n;

	for (;;) {
		if (len == size) {
			char *b;

			if (len > max) {
				snprintf(why, why_size, "larger than %zu MiB", max >> 20);
				free(buf);
				return -EFBIG;
			}
			size = size ? 2 * size : 16384;
			if (size > max + 1)
				size = max + 1;
			b = realloc(buf, size + 1);
			if (!b) {
				snprintf(why, why_size, "out of memory");
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		n = read(fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			snprintf(why, why_size, "read error: %s", strerror(-r));
			free(buf);
			return r;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}
