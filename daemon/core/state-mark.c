/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event marks (record.h): files mapped shared and kept current with plain stores,
 * so the event path makes no system call. Only a regular file of the broker's own,
 * of exactly a mark's size, is mapped; any other found at a mark's name is replaced.
 */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"

/* A new mark's file, at a temporary name, full size: the caller renames it into
 * place once it holds a mark. */
static int make_mark(State *s, const char *tmp)
{
	int fd;

	(void)unlinkat(s->dfd, tmp, 0);
	fd = openat(s->dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct gb_mark)) < 0) {
		int e = -errno;

		close(fd);
		unlinkat(s->dfd, tmp, 0);
		return e;
	}
	return fd;
}

struct gb_mark *state_mark_open(State *s, const char *kind, uint64_t id, bool *existed)
{
	char name[64], tmp[64], why[200];
	struct gb_mark *m;
	bool made = false;
	int fd;

	*existed = false;
	if (!s->record || state_dir_check(s) < 0)
		return NULL;
	state_file_name(kind, id, ".mark", false, name, sizeof(name));
	state_file_name(kind, id, ".mark", true, tmp, sizeof(tmp));
	fd = state_open_checked(s, name, O_RDWR, sizeof(*m), sizeof(*m), why, sizeof(why));
	if (fd < 0 && fd != -ENOENT) {
		log_warning("refusing event mark %s/%s: %s; starting a new one", s->dir, name, why);
		(void)unlinkat(s->dfd, name, 0);
	}
	if (fd < 0) {
		fd = make_mark(s, tmp);
		made = fd >= 0;
	}
	m = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		log_warning_errno(fd < 0 ? fd : errno,
				  "%s/%s: cannot keep its event mark: %m; events it was not sent "
				  "when a broker dies are not counted", s->dir, name);
		if (fd >= 0)
			close(fd);
		if (made)
			unlinkat(s->dfd, tmp, 0);
		return NULL;
	}
	close(fd);
	if (!made && m->magic == GB_MARK_MAGIC) {
		*existed = true;
	} else {
		memset(m, 0, sizeof(*m));
		m->magic = GB_MARK_MAGIC;
	}
	if (made && renameat(s->dfd, tmp, s->dfd, name) < 0) {
		log_warning_errno(errno, "%s/%s: cannot keep its event mark: %m", s->dir, name);
		unlinkat(s->dfd, tmp, 0);
		return state_mark_close(m);
	}
	return m;
}

struct gb_mark *state_mark_close(struct gb_mark *m)
{
	if (m)
		munmap(m, sizeof(*m));
	return NULL;
}
