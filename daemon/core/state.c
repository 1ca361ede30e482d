/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

#define DEFAULT_STATE_DIR "/run/gpiod-broker"
/* A record is a few hundred bytes; 1 MiB is damage, not a record. */
#define RECORD_MAX (1024 * 1024)

/* Whoever can write here decides what the next broker drives: the rule of policy
 * files, with the broker's own user beside root. NULL if @p st is safe, else what
 * it must be and what it is, in @p buf. */
static const char *unsafe_reason(const struct stat *st, char *buf, size_t size)
{
	uid_t me = geteuid();
	int n;

	if ((st->st_uid == me || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return NULL;
	if (me)
		n = snprintf(buf, size, "must be owned by uid %u (the broker's) or root",
			     (unsigned)me);
	else
		n = snprintf(buf, size, "must be owned by root");
	snprintf(buf + n, size - n, " and not writable by group or others (is uid %u, mode %04o)",
		 (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
	return buf;
}

/* The directory is opened once and every file is reached through that fd: what
 * was checked is what is used, whatever happens to the path later. */
static int open_dir(State *s)
{
	char why[160];
	struct stat st;
	int fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		/* Nothing to read; writes fail, each logged. */
		if (errno != ENOENT || s->record)
			log_full_errno(s->record ? LOG_WARNING : LOG_DEBUG, errno,
				       "cannot open state directory %s: %m", s->dir);
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		log_warning_errno(errno, "cannot check state directory %s: %m", s->dir);
		close(fd);
		return 0;
	}
	if (unsafe_reason(&st, why, sizeof(why))) {
		close(fd);
		/* Not asked to record (run by hand): the directory is left alone. */
		if (!s->record) {
			log_warning("not reading state directory %s: %s", s->dir, why);
			return 0;
		}
		log_error("refusing state directory %s: %s", s->dir, why);
		return -EPERM;
	}
	s->dfd = fd;
	return 0;
}

int state_init(State *s, const char *dir)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	const char *d = dir;
	int r;

	s->dfd = -1;
	s->fdstore = ns && *ns;
	if (!d) {
		const char *rd = getenv("RUNTIME_DIRECTORY");

		/* Several RuntimeDirectory= entries come colon-separated; ours is the first. */
		if (rd && *rd)
			s->dir = strndup(rd, strcspn(rd, ":"));
		else
			d = DEFAULT_STATE_DIR;
	}
	if (d)
		s->dir = strdup(d);
	if (!s->dir)
		return -ENOMEM;
	/* Run by hand, nobody would keep the fds: recording is then only asked for
	 * by --state-dir (records alone still give safe states after a crash). */
	s->record = s->fdstore || dir;
	if (s->record && mkdir(s->dir, 0700) < 0 && errno != EEXIST)
		log_warning_errno(errno, "cannot create state directory %s: %m", s->dir);
	r = open_dir(s);
	if (r < 0)
		return r;
	log_debug("state directory %s%s%s", s->dir, s->record ? ", recording" : "",
		  s->fdstore ? ", fd store" : "");
	return 0;
}

void state_done(State *s)
{
	/* No dir: state_init() never ran, and dfd is not an fd of ours. */
	if (s->dir && s->dfd >= 0)
		close(s->dfd);
	s->dfd = -1;
	free(s->dir);
	s->dir = NULL;
}

int state_dir_check(State *s)
{
	char why[160];
	struct stat st;
	const char *bad;

	if (s->dfd < 0)
		return -ENOENT;
	if (fstat(s->dfd, &st) < 0)
		return -errno;
	bad = unsafe_reason(&st, why, sizeof(why));
	/* Its owner or root changed it: lines go on being served, but nothing it says
	 * can be trusted by the next broker, which would refuse it anyway. */
	if (bad && !s->unsafe)
		log_error("state directory %s became unsafe: %s; no state is written there "
			  "until it is fixed: what is made meanwhile does not survive a restart, "
			  "and a broker started now refuses the directory", s->dir, bad);
	else if (!bad && s->unsafe)
		log_notice("state directory %s is safe again: writing state there", s->dir);
	s->unsafe = bad;
	return bad ? -EPERM : 0;
}

static const char *type_name(mode_t mode)
{
	return S_ISDIR(mode) ? "directory" : S_ISFIFO(mode) ? "FIFO" :
	       S_ISSOCK(mode) ? "socket" : S_ISLNK(mode) ? "symbolic link" :
	       S_ISCHR(mode) || S_ISBLK(mode) ? "device" : "special file";
}

/* What is wrong with @p st as a file of ours of @p min to @p max bytes, or NULL. */
static const char *file_refusal(const struct stat *st, long min, long max, char *buf, size_t size)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(buf, size, "not a regular file (a %s)", type_name(st->st_mode));
		return buf;
	}
	if (unsafe_reason(st, buf, size))
		return buf;
	if (st->st_size < min || st->st_size > max) {
		snprintf(buf, size, min == max ? "%lld bytes, not %ld" :
			 "%lld bytes, more than %ld", (long long)st->st_size, max);
		return buf;
	}
	return NULL;
}

int state_open_checked(State *s, const char *name, int flags, long min_size, long max_size,
		       char *why, size_t size)
{
	struct stat st, now;
	int fd, e;

	if (s->dfd < 0)
		return -ENOENT;
	/* Looked at before it is opened: opening a FIFO or a device can block or do
	 * something, and only a regular file is ever opened. */
	if (fstatat(s->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		e = errno;
		snprintf(why, size, "cannot look at it: %s", strerror(e));
		return -e;
	}
	if (file_refusal(&st, min_size, max_size, why, size))
		return -EPERM;
	fd = openat(s->dfd, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		snprintf(why, size, "cannot open it: %s", strerror(e));
		return -e;
	}
	if (fstat(fd, &now) < 0) {
		e = errno;
		snprintf(why, size, "cannot look at it: %s", strerror(e));
		close(fd);
		return -e;
	}
	if (now.st_ino != st.st_ino || now.st_dev != st.st_dev)
		snprintf(why, size, "replaced while it was opened");
	else if (!file_refusal(&now, min_size, max_size, why, size))
		return fd;
	close(fd);
	return -EPERM;
}

/* "request-<id>" or "watch-<id>", then @p suffix (".mark"); ".<that>.tmp" while
 * written, so that a crash leaves the old or the new version, never half of one. */
void state_file_name(const char *kind, uint64_t id, const char *suffix, bool tmp, char *buf,
		     size_t size)
{
	snprintf(buf, size, "%s%s-%" PRIu64 "%s%s", tmp ? "." : "", kind, id, suffix,
		 tmp ? ".tmp" : "");
}

void state_remove_fd(State *s, uint64_t id, unsigned int k)
{
	char msg[64], name[40];
	int r;

	if (!s->fdstore)
		return;
	gb_record_fd_name(id, k, name, sizeof(name));
	snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
	r = sd_notify(0, msg);
	if (r < 0)
		log_warning_errno(r, "cannot remove %s from the fd store: %m", name);
}

bool state_add_fd(State *s, uint64_t id, unsigned int k, int fd)
{
	char msg[80], name[40];
	int r;

	if (!s->fdstore)
		return true;
	gb_record_fd_name(id, k, name, sizeof(name));
	snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
	r = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
	if (r <= 0)
		log_warning_errno(r ? r : -ENOTCONN, "cannot hand %s to the service manager: %m",
				  name);
	return r > 0;
}

static int write_request_record(FILE *f, const void *rec)
{
	return gb_record_write(rec, f);
}

static int write_watch_record(FILE *f, const void *rec)
{
	return gb_watch_record_write(rec, f);
}

int state_write_file(State *s, const char *name, int (*write)(FILE *f, const void *rec),
		     const void *rec)
{
	char tmp[256];
	FILE *f;
	int fd, e;

	e = state_dir_check(s);
	if (e < 0)
		return e;
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	/* Left by a write cut short: gone, so that what is written is a new file of
	 * ours, never one found there. */
	(void)unlinkat(s->dfd, tmp, 0);
	fd = openat(s->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		e = -errno;
		close(fd);
		unlinkat(s->dfd, tmp, 0);
		return e;
	}
	e = write(f, rec);
	if (e < 0) {
		fclose(f);
		unlinkat(s->dfd, tmp, 0);
		return e;
	}
	if (fclose(f) != 0 || renameat(s->dfd, tmp, s->dfd, name) < 0) {
		e = -errno;
		unlinkat(s->dfd, tmp, 0);
		return e;
	}
	return 0;
}

static int write_file(State *s, const char *kind, uint64_t id,
		      int (*write)(FILE *f, const void *rec), const void *rec)
{
	char name[64];

	state_file_name(kind, id, "", false, name, sizeof(name));
	return state_write_file(s, name, write, rec);
}

static int write_record(State *s, const struct gb_record *rec)
{
	return write_file(s, "request", rec->id, write_request_record, rec);
}

bool state_save(State *s, const struct gb_record *rec, const int *fds, unsigned int n_fds,
		const char *what)
{
	unsigned int k;
	int r;

	if (!s->record)
		return false;
	r = write_record(s, rec);
	if (r < 0) {
		log_warning_errno(r, "%s: cannot write its state to %s: %m; it will not survive a "
				  "restart", what, s->dir);
		return false;
	}
	for (k = 0, r = 1; s->fdstore && k < n_fds; k++) {
		char msg[80], name[40];
		int fd = fds[k];

		gb_record_fd_name(rec->id, k, name, sizeof(name));
		snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
		r = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
		if (r <= 0)
			break;
	}
	if (s->fdstore && k < n_fds) {
		/* Half a request in the store is worse than none: take it back. */
		log_warning_errno(r ? r : -ENOTCONN, "%s: cannot hand its fds to the service "
				  "manager: %m; it will not survive a restart", what);
		state_remove(s, rec->id, n_fds);
		return false;
	}
	return true;
}

void state_update(State *s, const struct gb_record *rec, const char *what)
{
	int r = write_record(s, rec);

	if (r < 0)
		log_warning_errno(r, "%s: cannot update its state in %s: %m", what, s->dir);
}

static void unlink_file(State *s, const char *kind, uint64_t id, const char *suffix)
{
	char name[64];

	state_file_name(kind, id, suffix, false, name, sizeof(name));
	if (s->dfd >= 0 && unlinkat(s->dfd, name, 0) < 0 && errno != ENOENT)
		log_warning_errno(errno, "cannot remove %s/%s: %m", s->dir, name);
}

void state_delete(State *s, uint64_t id)
{
	unlink_file(s, "request", id, "");
	unlink_file(s, "request", id, ".mark");
}

void state_remove(State *s, uint64_t id, unsigned int n_fds)
{
	for (unsigned int k = 0; k < n_fds; k++)
		state_remove_fd(s, id, k);
	state_delete(s, id);
}

/* --- at start: what the previous broker left -------------------------------- */

void state_passed_collect(State *s, StatePassed *p, uint64_t *max_id)
{
	int n = sd_listen_fds_with_names(1, &p->names);

	if (n < 0) {
		log_warning_errno(n, "cannot read the fds passed in: %m");
		n = 0;
	}
	if (n > 0 && !(p->v = calloc(n, sizeof(*p->v)))) {
		log_error("out of memory: closing the %d fds passed in", n);
		for (int i = 0; i < n; i++)
			close(SD_LISTEN_FDS_START + i);
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		struct state_fd *e = &p->v[p->n++];
		const char *name = p->names && p->names[i] ? p->names[i] : "unknown";

		e->fd = SD_LISTEN_FDS_START + i;
		e->name = p->names ? p->names[i] : NULL;
		if (!gb_record_parse_fd_name(name, &e->id, &e->k)) {
			log_warning("passed fd %d named \"%s\" is not a line request of ours: closing it",
				    e->fd, name);
			close(e->fd);
			e->fd = -1;
		} else if (*max_id < e->id) {
			*max_id = e->id;
		}
	}
	if (n > 0)
		log_info("%d fd(s) passed in by the service manager", n);
}

int state_passed_take(StatePassed *p, uint64_t id, unsigned int k)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0 && p->v[i].id == id && p->v[i].k == k) {
			int fd = p->v[i].fd;

			p->v[i].fd = -1;
			return fd;
		}
	return -1;
}

void state_passed_drop(State *s, StatePassed *p, uint64_t id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0 && p->v[i].id == id) {
			state_remove_fd(s, id, p->v[i].k);
			close(p->v[i].fd);
			p->v[i].fd = -1;
		}
}

void state_passed_done(State *s, StatePassed *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0) {
			log_warning("passed fd \"%s\" has no state file in %s: closing it (its lines "
				    "go back to the kernel as they are)", p->v[i].name, s->dir);
			state_remove_fd(s, p->v[i].id, p->v[i].k);
			close(p->v[i].fd);
		}
	free(p->v);
	strv_free(p->names);
	*p = (StatePassed){ 0 };
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int push_id(uint64_t **ids, size_t *n, size_t *cap, uint64_t id)
{
	if (*n == *cap) {
		void *v = realloc(*ids, (*cap = *cap ? *cap * 2 : 16) * sizeof(**ids));

		if (!v)
			return -ENOMEM;
		*ids = v;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

int state_list(State *s, const char *kind, uint64_t **ret, size_t *n_ret)
{
	_cleanup_free_ uint64_t *marks = NULL;
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0, n_marks = 0, cap_marks = 0, klen = strlen(kind);
	int fd = state_dir_check(s) < 0 ? -1 :
		 openat(s->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (fd >= 0 && !d) {
		log_warning_errno(errno, "cannot read state directory %s: %m", s->dir);
		close(fd);
	}
	for (struct dirent *de; d && (de = readdir(d));) {
		const char *name = de->d_name;
		char num[24];
		uint64_t id;
		size_t len;

		if (name[0] == '.' && strncmp(name + 1, kind, klen) == 0 && name[klen + 1] == '-') {
			/* A write cut short by a crash; the renamed version is the state. */
			unlinkat(dirfd(d), name, 0);
			continue;
		}
		if (strncmp(name, kind, klen) != 0 || name[klen] != '-')
			continue;
		name += klen + 1;
		len = strcspn(name, ".");
		if (len >= sizeof(num))
			continue;
		memcpy(num, name, len);
		num[len] = 0;
		if (!gb_parse_u64(num, &id))
			continue;
		if (strcmp(name + len, ".mark") == 0)
			push_id(&marks, &n_marks, &cap_marks, id);
		else if (!name[len] && push_id(&ids, &n, &cap, id) < 0)
			break;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(ids, n, sizeof(*ids), cmp_u64);
	/* A mark whose record is gone belongs to nothing (a crash between the two). */
	for (size_t i = 0; i < n_marks; i++)
		if (!n || !bsearch(&marks[i], ids, n, sizeof(*ids), cmp_u64))
			unlink_file(s, kind, marks[i], ".mark");
	*ret = ids;
	*n_ret = n;
	return 0;
}

static int load_file(State *s, const char *kind, uint64_t id, void *rec,
		     int (*parse)(const char *text, size_t len, uint64_t id, void *rec,
				  unsigned int *lineno, char *err, size_t errlen))
{
	_cleanup_free_ char *text = NULL;
	char name[64], err[200];
	const char *then = strcmp(kind, "request") == 0 ? "releasing" : "dropping";
	unsigned int lineno;
	size_t size = 0;
	FILE *f;
	int fd, r;

	state_file_name(kind, id, "", false, name, sizeof(name));
	fd = state_open_checked(s, name, O_RDONLY, 0, RECORD_MAX, err, sizeof(err));
	if (fd < 0) {
		/* Not the broker's own: what it says is not acted on, whoever it names. */
		log_error("refusing state file %s/%s: %s; %s %s %" PRIu64, s->dir, name, err, then,
			  kind, id);
		return fd;
	}
	f = fdopen(fd, "re");
	text = f ? malloc(RECORD_MAX) : NULL;
	if (!text) {
		if (f)
			fclose(f);
		else
			close(fd);
		return -ENOMEM;
	}
	size = fread(text, 1, RECORD_MAX, f);
	fclose(f);
	r = parse(text, size, id, rec, &lineno, err, sizeof(err));
	if (r == -EINVAL) {
		if (lineno)
			log_error("state file %s/%s: line %u: %s; %s %s %" PRIu64, s->dir, name,
				  lineno, err, then, kind, id);
		else
			log_error("state file %s/%s: %s; %s %s %" PRIu64, s->dir, name, err, then,
				  kind, id);
	} else if (r < 0) {
		log_error_errno(r, "state file %s/%s: %m; %s %s %" PRIu64, s->dir, name, then, kind,
				id);
	}
	return r;
}

static int parse_request(const char *text, size_t len, uint64_t id, void *rec,
			 unsigned int *lineno, char *err, size_t errlen)
{
	return gb_record_parse(text, len, id, rec, lineno, err, errlen);
}

static int parse_watch(const char *text, size_t len, uint64_t id, void *rec,
		       unsigned int *lineno, char *err, size_t errlen)
{
	return gb_watch_record_parse(text, len, id, rec, lineno, err, errlen);
}

int state_load(State *s, uint64_t id, struct gb_record *rec)
{
	return load_file(s, "request", id, rec, parse_request);
}

/* --- watches ------------------------------------------------------------------ */

bool state_save_watch(State *s, const struct gb_watch_record *rec, const char *what)
{
	int r;

	if (!s->record)
		return false;
	r = write_file(s, "watch", rec->id, write_watch_record, rec);
	if (r < 0)
		log_warning_errno(r, "%s: cannot write its state to %s: %m; it will not survive a "
				  "restart", what, s->dir);
	return r >= 0;
}

void state_remove_watch(State *s, uint64_t id)
{
	unlink_file(s, "watch", id, "");
	unlink_file(s, "watch", id, ".mark");
}

int state_load_watch(State *s, uint64_t id, struct gb_watch_record *rec)
{
	return load_file(s, "watch", id, rec, parse_watch);
}
