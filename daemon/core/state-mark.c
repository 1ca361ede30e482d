/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event marks (record.h): files mapped shared and kept current with plain stores,
 * so the event path makes no system call. Only a regular file of the broker's own,
 * of exactly a mark's size, is mapped; any other found at a mark's name is replaced.
 *
 * A file that shrinks under its mapping (truncated by root, or by a second broker
 * given the same directory) turns the next store into SIGBUS. That costs the mark,
 * not the broker: the handler puts private memory where the pages were, so the
 * store completes, and the loop then logs which mark it was and deletes it. Its
 * object goes on without one, as one whose mark could not be made: after a restart
 * its events are numbered afresh.
 */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"

/* Every mapped mark, where the SIGBUS handler, which has nothing else, finds them.
 * Changed only where no mark is touched, and complete before one is. */
struct mark_slot {
	struct gb_mark *m;          /* NULL: a free slot */
	const char *kind;           /* "request", "watch": literals */
	uint64_t id;
	volatile sig_atomic_t shrunk;
};

static struct mark_slot *slots;
static size_t n_slots;
static size_t map_len;              /* a mark's mapping: whole pages */
static int shrunk_fd = -1;          /* the handler wakes the loop with it */
static State *guarded;

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	int saved = errno;

	for (size_t i = 0; i < n_slots; i++) {
		uintptr_t m = (uintptr_t)slots[i].m;
		uint64_t one = 1;

		if (!m || a < m || a >= m + map_len)
			continue;
		if (mmap(slots[i].m, map_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		slots[i].shrunk = 1;
		if (write(shrunk_fd, &one, sizeof(one)) < 0) {
			/* The counter cannot overflow from one per mark: nothing to do. */
		}
		errno = saved;
		return;
	}
	/* Not a mark: the default action, core dump and all, at the retried access. */
	signal(SIGBUS, SIG_DFL);
	errno = saved;
}

static void report_shrunk(State *s, struct mark_slot *sl)
{
	char name[64];

	state_file_name(sl->kind, sl->id, ".mark", false, name, sizeof(name));
	log_warning("event mark %s/%s shrank under the broker (truncated by someone else): "
		    "its counts are lost and it is deleted; %s %" PRIu64 " goes on without one "
		    "(after a restart its events are numbered afresh)", s->dir, name, sl->kind,
		    sl->id);
	if (s->dfd >= 0 && unlinkat(s->dfd, name, 0) < 0 && errno != ENOENT)
		log_warning_errno(errno, "cannot remove %s/%s: %m", s->dir, name);
	sl->shrunk = 0;
}

static int on_shrunk(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	uint64_t n;

	/* Not returned: sd-event would turn the source off for good. */
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warning_errno(errno, "cannot read the event marks' eventfd: %m");
	for (size_t i = 0; i < n_slots; i++)
		if (slots[i].m && slots[i].shrunk)
			report_shrunk(userdata, &slots[i]);
	return 0;
}

int state_guard_marks(State *s, sd_event *e)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	int r;

	guarded = s;
	shrunk_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r = shrunk_fd < 0 ? -errno :
	    sd_event_add_io(e, &s->shrunk, shrunk_fd, EPOLLIN, on_shrunk, s);
	sigemptyset(&sa.sa_mask);
	if (r >= 0 && sigaction(SIGBUS, &sa, NULL) < 0)
		r = -errno;
	if (r < 0)
		state_unguard_marks(s);
	return r;
}

void state_unguard_marks(State *s)
{
	s->shrunk = sd_event_source_disable_unref(s->shrunk);
	if (guarded != s)
		return;
	signal(SIGBUS, SIG_DFL);
	guarded = NULL;
	if (shrunk_fd >= 0)
		close(shrunk_fd);
	shrunk_fd = -1;
	free(slots);
	slots = NULL;
	n_slots = 0;
}

/* A slot for @p m, filled before @p m is first touched. */
static int guard(struct gb_mark *m, const char *kind, uint64_t id)
{
	size_t i;

	for (i = 0; i < n_slots && slots[i].m; i++)
		;
	if (i == n_slots) {
		size_t n = n_slots ? n_slots * 2 : 16;
		struct mark_slot *v = calloc(n, sizeof(*v)), *old = slots;

		if (!v)
			return -ENOMEM;
		/* The handler sees the old table or the whole new one. */
		if (n_slots)
			memcpy(v, slots, n_slots * sizeof(*v));
		slots = v;
		atomic_signal_fence(memory_order_seq_cst);
		n_slots = n;
		free(old);
	}
	slots[i].kind = kind;
	slots[i].id = id;
	slots[i].shrunk = 0;
	atomic_signal_fence(memory_order_seq_cst);
	slots[i].m = m;
	atomic_signal_fence(memory_order_seq_cst);
	return 0;
}

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
	if (!map_len) {
		long page = sysconf(_SC_PAGESIZE);

		map_len = (sizeof(*m) + page - 1) / page * page;
	}
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
	if (m == MAP_FAILED || guard(m, kind, id) < 0) {
		log_warning_errno(fd < 0 ? fd : m == MAP_FAILED ? errno : ENOMEM,
				  "%s/%s: cannot keep its event mark: %m; events it was not sent "
				  "when a broker dies are not counted", s->dir, name);
		if (m != MAP_FAILED)
			munmap(m, sizeof(*m));
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
	if (!m)
		return NULL;
	for (size_t i = 0; i < n_slots; i++)
		if (slots[i].m == m) {
			/* Shrunk after the loop's last turn: said now, or never. */
			if (slots[i].shrunk && guarded)
				report_shrunk(guarded, &slots[i]);
			slots[i].m = NULL;
			atomic_signal_fence(memory_order_seq_cst);
		}
	munmap(m, sizeof(*m));
	return NULL;
}
