/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

#define DEFAULT_STATE_DIR "/run/gpiod-broker"

int state_init(State *s, const char *dir)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	const char *d = dir;

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
	log_debug("state directory %s%s%s", s->dir, s->record ? ", recording" : "",
		  s->fdstore ? ", fd store" : "");
	return 0;
}

void state_done(State *s)
{
	free(s->dir);
	s->dir = NULL;
}

/* "request-<id>" or "watch-<id>"; ".<name>.tmp" while written; "<name>.mark" the mark. */
static void record_path(const State *s, const char *kind, uint64_t id, const char *suffix,
			char *buf, size_t size)
{
	if (strcmp(suffix, ".tmp") == 0)
		snprintf(buf, size, "%s/.%s-%" PRIu64 ".tmp", s->dir, kind, id);
	else
		snprintf(buf, size, "%s/%s-%" PRIu64 "%s", s->dir, kind, id, suffix);
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

static int write_request_record(FILE *f, const void *rec)
{
	return gb_record_write(rec, f);
}

static int write_watch_record(FILE *f, const void *rec)
{
	return gb_watch_record_write(rec, f);
}

static int write_file(State *s, const char *kind, uint64_t id,
		      int (*write)(FILE *f, const void *rec), const void *rec)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	int fd, e;

	record_path(s, kind, id, "", path, sizeof(path));
	record_path(s, kind, id, ".tmp", tmp, sizeof(tmp));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		e = -errno;
		close(fd);
		unlink(tmp);
		return e;
	}
	e = write(f, rec);
	if (e < 0) {
		fclose(f);
		unlink(tmp);
		return e;
	}
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		e = -errno;
		unlink(tmp);
		return e;
	}
	return 0;
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
	char path[PATH_MAX];

	record_path(s, kind, id, suffix, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		log_warning_errno(errno, "cannot remove %s: %m", path);
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
	DIR *d = opendir(s->dir);

	if (!d && errno != ENOENT)
		log_full_errno(s->record ? LOG_WARNING : LOG_DEBUG, errno,
			       "cannot read state directory %s: %m", s->dir);
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
	char path[PATH_MAX], err[160];
	const char *then = strcmp(kind, "request") == 0 ? "releasing" : "dropping";
	unsigned int lineno;
	size_t size = 0;
	FILE *f;
	int r;

	record_path(s, kind, id, "", path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return log_error_errno(errno, "state file %s: cannot open: %m", path);
	/* A record is a few hundred bytes; 1 MiB is damage, not a record. */
	text = malloc(1024 * 1024);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	size = fread(text, 1, 1024 * 1024, f);
	fclose(f);
	r = parse(text, size, id, rec, &lineno, err, sizeof(err));
	if (r == -EINVAL) {
		if (lineno)
			log_error("state file %s: line %u: %s; %s %s %" PRIu64, path, lineno, err,
				  then, kind, id);
		else
			log_error("state file %s: %s; %s %s %" PRIu64, path, err, then, kind, id);
	} else if (r < 0) {
		log_error_errno(r, "state file %s: %m; %s %s %" PRIu64, path, then, kind, id);
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

/* --- event marks ---------------------------------------------------------------- */

struct gb_mark *state_mark_open(State *s, const char *kind, uint64_t id, bool *existed)
{
	char path[PATH_MAX];
	struct gb_mark *m;
	struct stat st;
	int fd;

	*existed = false;
	if (!s->record)
		return NULL;
	record_path(s, kind, id, ".mark", path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    ((size_t)st.st_size < sizeof(*m) && ftruncate(fd, sizeof(*m)) < 0)) {
		log_warning_errno(errno, "%s: cannot keep its event mark: %m; events it was not "
				  "sent when a broker dies are not counted", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		log_warning_errno(errno, "%s: cannot map its event mark: %m", path);
		return NULL;
	}
	if ((size_t)st.st_size >= sizeof(*m) && m->magic == GB_MARK_MAGIC) {
		*existed = true;
	} else {
		memset(m, 0, sizeof(*m));
		m->magic = GB_MARK_MAGIC;
	}
	return m;
}

struct gb_mark *state_mark_close(struct gb_mark *m)
{
	if (m)
		munmap(m, sizeof(*m));
	return NULL;
}
