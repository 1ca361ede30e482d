/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Surviving a restart (issue 6): the fd store and the request metadata.
 *
 * Each ReqChip's kernel line-request fd goes to the service manager as
 * FDNAME=gbreq-<id>-<chip index>, and request-<id> in the state directory says
 * everything else (written to a temporary file and renamed, so a crash leaves the
 * old or the new version, never half of one). systemd keeps the fds while the
 * service restarts (they are flushed only when the unit stops for good) and
 * passes them to the next broker, which reads them with sd_listen_fds_with_names().
 * They stay in the store meanwhile, so they are not sent again: systemd drops
 * duplicates anyway, and drops an fd by itself on POLLHUP (its chip unplugged).
 *
 * Order matters, so that a crash at any point leaves something the next broker
 * can act on:
 *   create:  metadata, then fds.  A crash between: metadata without fds; the
 *            kernel released the lines with our fds, the next broker applies the
 *            safe states and deletes the metadata.
 *   release: safe states, FDSTOREREMOVE, close, delete the metadata. The store's
 *            copy would keep the lines requested, so it goes before ours.
 * Values are not recorded: they live in the kernel request and are read back.
 */

#include "fdstore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "flow.h"
#include "line-request.h"
#include "log.h"
#include "macro.h"

#define META_VERSION 1
#define DEFAULT_STATE_DIR "/run/gpiod-broker"

int fdstore_init(Broker *b, const char *state_dir)
{
	const char *dir = state_dir;
	const char *ns = getenv("NOTIFY_SOCKET");

	b->fdstore = ns && *ns;
	if (!dir) {
		const char *rd = getenv("RUNTIME_DIRECTORY");

		/* Several RuntimeDirectory= entries come colon-separated; ours is the first. */
		if (rd && *rd) {
			b->state_dir = strndup(rd, strcspn(rd, ":"));
			goto done;
		}
		dir = DEFAULT_STATE_DIR;
	}
	b->state_dir = strdup(dir);
done:
	if (!b->state_dir)
		return -ENOMEM;
	/* Run by hand, nobody would keep the fds: recording is then only asked for
	 * by --state-dir (metadata alone still gives safe states after a crash). */
	b->record = b->fdstore || state_dir;
	if (b->record && mkdir(b->state_dir, 0700) < 0 && errno != EEXIST)
		log_warning_errno(errno, "cannot create state directory %s: %m", b->state_dir);
	log_debug("state directory %s%s%s", b->state_dir, b->record ? ", recording" : "",
		  b->fdstore ? ", fd store" : "");
	return 0;
}

#define SYSTEMD_NAME "org.freedesktop.systemd1"

bool fdstore_restart_queued(Broker *b)
{
	_cleanup_(sd_bus_error_free) sd_bus_error err = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	_cleanup_free_ char *type = NULL;
	const char *unit, *job;
	bool stored = false;
	uint32_t id;
	int r;

	if (!b->fdstore || !b->bus)
		return false;
	for (Request *q = b->request_list; q && !stored; q = q->next)
		stored = q->stored;
	if (!stored)
		return false;
	/* systemd keeps a unit's fd store while a job is queued for it (sd_notify(3)),
	 * and a restart job stays queued while its stop half runs. A plain stop does
	 * not: then the store is flushed and the lines must go to their safe state. */
	r = sd_bus_message_new_method_call(b->bus, &m, SYSTEMD_NAME, "/org/freedesktop/systemd1",
					   SYSTEMD_NAME ".Manager", "GetUnitByPID");
	if (r >= 0)
		r = sd_bus_message_append(m, "u", (uint32_t)getpid());
	if (r >= 0)
		r = sd_bus_call(b->bus, m, 1000 * 1000, &err, &reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &unit);
	if (r < 0) {
		log_info_errno(r, "not a restart as far as can be told (systemd: %s): releasing",
			       err.message ? err.message : strerror(-r));
		return false;
	}
	sd_bus_error_free(&err);
	m = sd_bus_message_unref(m);
	r = sd_bus_get_property(b->bus, SYSTEMD_NAME, unit, SYSTEMD_NAME ".Unit", "Job", &err,
				&m, "(uo)");
	if (r >= 0)
		r = sd_bus_message_read(m, "(uo)", &id, &job);
	if (r < 0 || id == 0) {
		if (r < 0)
			log_info_errno(r, "no job for %s (systemd: %s): releasing", unit,
				       err.message ? err.message : strerror(-r));
		return false;
	}
	sd_bus_error_free(&err);
	r = sd_bus_get_property_string(b->bus, SYSTEMD_NAME, job, SYSTEMD_NAME ".Job", "JobType",
				       &err, &type);
	if (r < 0) {
		log_info_errno(r, "job %s of %s (systemd: %s): releasing", job, unit,
			       err.message ? err.message : strerror(-r));
		return false;
	}
	log_debug("job %" PRIu32 " of %s: %s", id, unit, type);
	return strcmp(type, "restart") == 0 || strcmp(type, "try-restart") == 0;
}

void fdstore_done(Broker *b)
{
	free(b->state_dir);
	b->state_dir = NULL;
}

static void meta_path(const Broker *b, uint64_t id, bool tmp, char *buf, size_t size)
{
	snprintf(buf, size, tmp ? "%s/.request-%" PRIu64 ".tmp" : "%s/request-%" PRIu64,
		 b->state_dir, id);
}

static void fd_name(uint64_t id, unsigned int k, char *buf, size_t size)
{
	snprintf(buf, size, "gbreq-%" PRIu64 "-%u", id, k);
}

static void store_remove(Broker *b, uint64_t id, unsigned int k)
{
	char msg[64], name[40];
	int r;

	if (!b->fdstore)
		return;
	fd_name(id, k, name, sizeof(name));
	snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
	r = sd_notify(0, msg);
	if (r < 0)
		log_warning_errno(r, "cannot remove %s from the fd store: %m", name);
}

static int write_meta(Request *r)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	int fd, e;

	meta_path(r->broker, r->id, false, path, sizeof(path));
	meta_path(r->broker, r->id, true, tmp, sizeof(tmp));
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
	fprintf(f, "# gpiod-broker request state, read by the next broker after a restart\n"
		"version=%d\nid=%" PRIu64 "\nlabel=%s\nuid=%u\ngid=%u\ngroups=",
		META_VERSION, r->id, r->label, (unsigned)r->uid, (unsigned)r->gid);
	for (size_t i = 0; i < r->n_groups; i++)
		fprintf(f, "%s%u", i ? "," : "", (unsigned)r->groups[i]);
	fprintf(f, "\npersistent=%d\nowner=%s\nchips=%u\n", r->persistent,
		r->client ? r->client->name : "", r->n_chips);
	for (unsigned int k = 0; k < r->n_chips; k++) {
		ReqChip *rc = &r->chips[k];

		fprintf(f, "chip=%s %u ", rc->chip_name, rc->n_kern);
		for (unsigned int i = 0; i < rc->n_kern; i++)
			fprintf(f, "%s%u", i ? "," : "", rc->kern_offsets[i]);
		fputc('\n', f);
	}
	fprintf(f, "lines=%u\n", r->n_lines);
	for (unsigned int i = 0; i < r->n_lines; i++) {
		const ReqLine *rl = &r->lines[i];
		const struct gb_line_config *c = &rl->config;

		/* chip-index offset set direction value edge bias drive active-low
		 * debounce-us event-clock safe-state (libgpiod's stable enum values) */
		fprintf(f, "line=%u %u %u %d %d %d %d %d %d %u %d %d\n",
			(unsigned)(rl->rc - r->chips), rl->offset, c->set, (int)c->direction,
			c->value, (int)c->edge, (int)c->bias, (int)c->drive, c->active_low,
			c->debounce_us, (int)c->event_clock, (int)rl->safe_state);
	}
	if (fflush(f) != 0 || ferror(f)) {
		e = errno ? -errno : -EIO;
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

void fdstore_request_added(Request *r)
{
	Broker *b = r->broker;
	unsigned int k;
	int ret;

	if (!b->record)
		return;
	ret = write_meta(r);
	if (ret < 0) {
		log_warning_errno(ret, "request %s: cannot write its state to %s: %m; it will not "
				  "survive a restart", r->path, b->state_dir);
		return;
	}
	r->stored = true;
	for (k = 0; b->fdstore && k < r->n_chips; k++) {
		char msg[80], name[40];
		int fd = lreq_fd(&r->chips[k]);

		fd_name(r->id, k, name, sizeof(name));
		snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
		ret = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
		if (ret <= 0)
			break;
	}
	if (b->fdstore && k < r->n_chips) {
		/* Half a request in the store is worse than none: take it back. */
		log_warning_errno(ret ? ret : -ENOTCONN, "request %s: cannot hand its fds to the "
				  "service manager: %m; it will not survive a restart", r->path);
		fdstore_request_removed(r);
	}
}

void fdstore_request_changed(Request *r)
{
	int ret;

	if (!r->stored)
		return;
	ret = write_meta(r);
	if (ret < 0)
		log_warning_errno(ret, "request %s: cannot update its state in %s: %m", r->path,
				  r->broker->state_dir);
}

void fdstore_request_removed(Request *r)
{
	char path[PATH_MAX];

	for (unsigned int k = 0; k < r->n_chips; k++)
		store_remove(r->broker, r->id, k);
	meta_path(r->broker, r->id, false, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		log_warning_errno(errno, "cannot remove %s: %m", path);
	r->stored = false;
}

void fdstore_reqchip_gone(ReqChip *rc)
{
	store_remove(rc->request->broker, rc->request->id, (unsigned)(rc - rc->request->chips));
}

/* --- restore --------------------------------------------------------------- */

struct passed_fd {
	int fd;
	uint64_t id;
	unsigned int k;
	char *name;
};

struct passed {
	struct passed_fd *v;
	size_t n;
};

static bool parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

static bool parse_fd_name(const char *name, uint64_t *id, unsigned int *k)
{
	char buf[64], *dash;
	uint64_t kk;

	if (strncmp(name, "gbreq-", 6) != 0 || strlen(name) >= sizeof(buf))
		return false;
	strcpy(buf, name + 6);
	dash = strchr(buf, '-');
	if (!dash)
		return false;
	*dash = 0;
	if (!parse_u64(buf, id) || !parse_u64(dash + 1, &kk) || kk >= GB_MAX_LINES_PER_REQUEST)
		return false;
	*k = (unsigned)kk;
	return true;
}

/* Take the fd of request @p id, chip @p k out of the passed set, or -1. */
static int passed_take(struct passed *p, uint64_t id, unsigned int k)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0 && p->v[i].id == id && p->v[i].k == k) {
			int fd = p->v[i].fd;

			p->v[i].fd = -1;
			return fd;
		}
	return -1;
}

static void passed_drop_id(Broker *b, struct passed *p, uint64_t id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0 && p->v[i].id == id) {
			store_remove(b, id, p->v[i].k);
			close(p->v[i].fd);
			p->v[i].fd = -1;
		}
}

/* A request being rebuilt from its metadata; freed here unless it goes live. */
static void request_discard(Request *r)
{
	for (unsigned int k = 0; r->chips && k < r->n_chips; k++) {
		if (r->chips[k].raw_fd >= 0)
			close(r->chips[k].raw_fd);
		free(r->chips[k].chip_name);
	}
	free(r->chips);
	free(r->lines);
	free(r->groups);
	free(r->label);
	free(r->path);
	free(r->owner_name);
	free(r);
}

static bool label_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > GB_MAX_LABEL_LEN)
		return false;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

static bool int_in(int v, int lo, int hi)
{
	return v >= lo && v <= hi;
}

/* Parse one metadata line into @p r. NULL, or what is wrong. */
static const char *parse_item(Request *r, const char *key, const char *val, uint64_t file_id,
			      unsigned int *n_chips_seen, unsigned int *n_lines_seen, unsigned int *seen)
{
	uint64_t u;

	if (strcmp(key, "version") == 0) {
		*seen |= 1;
		return parse_u64(val, &u) && u == META_VERSION ? NULL : "unsupported version";
	} else if (strcmp(key, "id") == 0) {
		*seen |= 2;
		if (!parse_u64(val, &u) || u != file_id)
			return "id does not match the file name";
		r->id = u;
	} else if (strcmp(key, "label") == 0) {
		*seen |= 4;
		if (!label_ok(val))
			return "invalid label";
		free(r->label);
		if (!(r->label = strdup(val)))
			return "out of memory";
	} else if (strcmp(key, "uid") == 0 || strcmp(key, "gid") == 0) {
		if (!parse_u64(val, &u) || u > UINT32_MAX)
			return "invalid uid/gid";
		if (key[0] == 'u') {
			*seen |= 8;
			r->uid = (uid_t)u;
		} else {
			r->gid = (gid_t)u;
		}
	} else if (strcmp(key, "groups") == 0) {
		const char *s = val;

		free(r->groups);
		r->groups = NULL;
		r->n_groups = 0;
		while (*s) {
			char num[16];
			size_t len = strcspn(s, ",");
			void *g;

			if (len == 0 || len >= sizeof(num) || r->n_groups >= 65536)
				return "invalid groups";
			memcpy(num, s, len);
			num[len] = 0;
			if (!parse_u64(num, &u) || u > UINT32_MAX)
				return "invalid groups";
			g = realloc(r->groups, (r->n_groups + 1) * sizeof(gid_t));
			if (!g)
				return "out of memory";
			r->groups = g;
			r->groups[r->n_groups++] = (gid_t)u;
			s += len;
			if (*s == ',' && *++s == 0)
				return "invalid groups";
		}
	} else if (strcmp(key, "persistent") == 0) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			return "invalid persistent flag";
		r->persistent = val[0] == '1';
	} else if (strcmp(key, "owner") == 0) {
		if (*val && (val[0] != ':' || strlen(val) > 255))
			return "invalid owner name";
		free(r->owner_name);
		if (!(r->owner_name = strdup(val)))
			return "out of memory";
	} else if (strcmp(key, "chips") == 0 || strcmp(key, "lines") == 0) {
		if (!parse_u64(val, &u) || u == 0 || u > GB_MAX_LINES_PER_REQUEST)
			return "invalid count";
		if (key[0] == 'c') {
			if (r->chips)
				return "chips given twice";
			r->chips = calloc(u, sizeof(ReqChip));
			if (!r->chips)
				return "out of memory";
			for (unsigned int k = 0; k < u; k++) {
				r->chips[k].raw_fd = -1;
				r->chips[k].request = r;
			}
			r->n_chips = (unsigned)u;
		} else {
			if (r->lines)
				return "lines given twice";
			r->lines = calloc(u, sizeof(ReqLine));
			if (!r->lines)
				return "out of memory";
			r->n_lines = (unsigned)u;
		}
	} else if (strcmp(key, "chip") == 0) {
		ReqChip *rc;
		char name[64];
		unsigned int nk;
		int pos = 0;
		const char *s;

		if (!r->chips || *n_chips_seen >= r->n_chips)
			return "more chip entries than 'chips'";
		rc = &r->chips[(*n_chips_seen)++];
		if (sscanf(val, "%63[A-Za-z0-9_.-] %u %n", name, &nk, &pos) != 2 || pos == 0 ||
		    nk == 0 || nk > ELEMENTSOF(rc->kern_offsets))
			return "invalid chip entry";
		if (!(rc->chip_name = strdup(name)))
			return "out of memory";
		s = val + pos;
		for (unsigned int i = 0; i < nk; i++) {
			char *end;
			unsigned long o;

			if (*s < '0' || *s > '9')
				return "invalid chip offsets";
			o = strtoul(s, &end, 10);
			if (o > 65535 || (*end != ',' && *end != 0) || (*end == 0) != (i == nk - 1))
				return "invalid chip offsets";
			rc->kern_offsets[i] = (unsigned)o;
			s = *end ? end + 1 : end;
		}
		rc->n_kern = nk;
	} else if (strcmp(key, "line") == 0) {
		ReqLine *rl;
		struct gb_line_config *c;
		unsigned int ci, off, set, deb;
		int dir, value, edge, bias, drive, al, clock, safe, pos = 0;

		if (!r->lines || *n_lines_seen >= r->n_lines)
			return "more line entries than 'lines'";
		rl = &r->lines[(*n_lines_seen)++];
		c = &rl->config;
		if (sscanf(val, "%u %u %u %d %d %d %d %d %d %u %d %d%n", &ci, &off, &set, &dir, &value,
			   &edge, &bias, &drive, &al, &deb, &clock, &safe, &pos) != 12 || val[pos])
			return "invalid line entry";
		if (!r->chips || ci >= r->n_chips || off > 65535 || set > 0xff ||
		    !int_in(dir, GPIOD_LINE_DIRECTION_AS_IS, GPIOD_LINE_DIRECTION_OUTPUT) ||
		    !int_in(value, 0, 1) || !int_in(al, 0, 1) ||
		    !int_in(edge, GPIOD_LINE_EDGE_NONE, GPIOD_LINE_EDGE_BOTH) ||
		    !int_in(bias, GPIOD_LINE_BIAS_AS_IS, GPIOD_LINE_BIAS_PULL_DOWN) ||
		    !int_in(drive, GPIOD_LINE_DRIVE_PUSH_PULL, GPIOD_LINE_DRIVE_OPEN_SOURCE) ||
		    !int_in(clock, GPIOD_LINE_CLOCK_MONOTONIC, GPIOD_LINE_CLOCK_HTE) ||
		    !int_in(safe, GB_SAFE_AS_IS, GB_SAFE_OUTPUT_HIGH))
			return "line entry out of range";
		rl->rc = &r->chips[ci];
		rl->offset = off;
		c->set = set;
		c->direction = dir;
		c->value = value;
		c->edge = edge;
		c->bias = bias;
		c->drive = drive;
		c->active_low = al;
		c->debounce_us = deb;
		c->event_clock = clock;
		rl->safe_state = safe;
	} else {
		return "unknown key";
	}
	return NULL;
}

/* Read request-<id>. A Request not yet live, or NULL (logged). */
static Request *read_meta(Broker *b, const char *path, uint64_t id)
{
	_cleanup_free_ char *buf = NULL;
	unsigned int lineno = 0, n_chips = 0, n_lines = 0, seen = 0;
	const char *err = NULL;
	size_t size = 0;
	Request *r;
	FILE *f;
	char msg[160];

	f = fopen(path, "re");
	if (!f) {
		log_error_errno(errno, "state file %s: cannot open: %m", path);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		fclose(f);
		return NULL;
	}
	r->broker = b;
	r->gid = (gid_t)-1;
	while (!err && getline(&buf, &size, f) > 0) {
		char *eq, *nl = strchr(buf, '\n');

		lineno++;
		if (!nl) {
			err = "truncated";
			break;
		}
		*nl = 0;
		if (buf[0] == '#' || buf[0] == 0)
			continue;
		eq = strchr(buf, '=');
		if (!eq) {
			err = "not key=value";
			break;
		}
		*eq = 0;
		err = parse_item(r, buf, eq + 1, id, &n_chips, &n_lines, &seen);
	}
	fclose(f);
	if (!err && seen != 15) {
		lineno = 0;
		err = "version, id, label or uid missing";
	}
	if (!err && (!r->chips || !r->lines || n_chips != r->n_chips || n_lines != r->n_lines)) {
		lineno = 0;
		err = "chip or line entries missing";
	}
	for (unsigned int i = 0; !err && i < r->n_lines; i++) {
		if (gb_line_config_validate(&r->lines[i].config, msg, sizeof(msg)) < 0) {
			lineno = 0;
			err = msg;
		}
		for (unsigned int j = 0; !err && j < i; j++)
			if (r->lines[j].rc == r->lines[i].rc && r->lines[j].offset == r->lines[i].offset) {
				lineno = 0;
				err = "a line is listed twice";
			}
	}
	if (!err && asprintf(&r->path, GB_REQUEST_PREFIX "/%" PRIu64, r->id) < 0) {
		r->path = NULL;
		err = "out of memory";
	}
	/* The owner's event flow starts afresh: the client acknowledges by the new
	 * broker's seqnos, and what the old broker had in flight is gone with it. */
	if (!err)
		flow_init(&r->flow, b->bus, r->path, GB_IFACE_REQUEST, b->event_window,
			  b->event_queue);
	if (err) {
		if (lineno)
			log_error("state file %s: line %u: %s; releasing request %" PRIu64, path,
				  lineno, err, id);
		else
			log_error("state file %s: %s; releasing request %" PRIu64, path, err, id);
		request_discard(r);
		return NULL;
	}
	return r;
}

/* The kernel must agree that this fd holds these lines for this label: an fd that
 * does not match its metadata is not driven (it is not known what it holds). */
static bool reqchip_matches_kernel(ReqChip *rc)
{
	Request *r = rc->request;
	unsigned int mine = 0;

	if (!rc->chip || !rc->chip->gc)
		return false;
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];
		struct gpiod_line_info *li;
		bool ok, in_kern = false;

		if (rl->rc != rc)
			continue;
		mine++;
		for (unsigned int j = 0; j < rc->n_kern; j++)
			in_kern |= rc->kern_offsets[j] == rl->offset;
		if (!in_kern || rl->offset >= rc->chip->num_lines || rc->chip->lines[rl->offset].holder)
			return false;
		li = gpiod_chip_get_line_info(rc->chip->gc, rl->offset);
		if (!li)
			return false;
		ok = gpiod_line_info_is_used(li) && gpiod_line_info_get_consumer(li) &&
		     strcmp(gpiod_line_info_get_consumer(li), r->label) == 0;
		gpiod_line_info_free(rc->chip->lines[rl->offset].info);
		rc->chip->lines[rl->offset].info = li;
		if (!ok)
			return false;
	}
	return mine == rc->n_kern;
}

/* No fd for this chip: the kernel let the lines go when the old broker died, as
 * they were. Put them in their safe state now, if nobody took them meanwhile. */
static void apply_safe_without_fd(ReqChip *rc)
{
	Request *r = rc->request;
	struct gpiod_request_config *reqc = NULL;
	struct gpiod_line_config *lc = NULL;
	struct gpiod_line_settings *s = NULL;
	struct gpiod_line_request *lr;
	unsigned int n = 0;

	if (!rc->chip || !rc->chip->gc)
		return;
	reqc = gpiod_request_config_new();
	lc = gpiod_line_config_new();
	s = gpiod_line_settings_new();
	if (!reqc || !lc || !s)
		goto out;
	gpiod_request_config_set_consumer(reqc, r->label);
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];
		struct gpiod_line_info *li;
		bool used;

		if (rl->rc != rc || rl->safe_state == GB_SAFE_AS_IS || rl->offset >= rc->chip->num_lines ||
		    rc->chip->lines[rl->offset].holder)
			continue;
		li = gpiod_chip_get_line_info(rc->chip->gc, rl->offset);
		used = !li || gpiod_line_info_is_used(li);
		gpiod_line_info_free(li);
		if (used) {
			log_warning("request %s: %s:%u is in use: not putting it in its safe state",
				    r->path, rc->chip_name, rl->offset);
			continue;
		}
		gpiod_line_settings_reset(s);
		if (rl->safe_state == GB_SAFE_INPUT) {
			gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT);
		} else {
			gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT);
			gpiod_line_settings_set_output_value(s, rl->safe_state == GB_SAFE_OUTPUT_HIGH ?
							     GPIOD_LINE_VALUE_ACTIVE :
							     GPIOD_LINE_VALUE_INACTIVE);
		}
		if (gpiod_line_config_add_line_settings(lc, &rl->offset, 1, s) == 0)
			n++;
	}
	if (!n)
		goto out;
	lr = gpiod_chip_request_lines(rc->chip->gc, reqc, lc);
	if (!lr) {
		log_warning_errno(errno, "request %s: cannot put lines on %s in their safe state: %m",
				  r->path, rc->chip_name);
		goto out;
	}
	log_info("request %s: %u line(s) on %s put in their safe state", r->path, n, rc->chip_name);
	gpiod_line_request_release(lr);
out:
	gpiod_line_settings_free(s);
	gpiod_line_config_free(lc);
	gpiod_request_config_free(reqc);
}

/* The owner the request had, if that connection is still on the bus. */
static Client *find_owner(Broker *b, Request *r)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	Client *c = NULL;
	int ret;

	if (!r->owner_name || !*r->owner_name)
		return NULL;
	/* Unique names are not reused while the bus runs; the uid check covers a
	 * restarted bus daemon handing the same name to someone else. */
	ret = client_get_by_name(b, r->owner_name, &c, &err);
	sd_bus_error_free(&err);
	if (ret < 0 || c->uid != r->uid)
		return NULL;
	return c;
}

static void restore_one(Broker *b, const char *path, uint64_t id, struct passed *p)
{
	Request *r = read_meta(b, path, id);
	unsigned int n_fds = 0;
	bool foreign = false;
	const char *why = NULL;
	char reason[600], policy_why[512];
	Client *owner;

	if (!r) {
		/* Unknown settings, unknown safe state: the kernel gets the lines back as
		 * they are. */
		passed_drop_id(b, p, id);
		if (unlink(path) < 0 && errno != ENOENT)
			log_warning_errno(errno, "cannot remove %s: %m", path);
		return;
	}
	for (unsigned int k = 0; k < r->n_chips; k++) {
		ReqChip *rc = &r->chips[k];

		rc->chip = chip_find(b, rc->chip_name);
		if (rc->chip && strcmp(rc->chip->name, rc->chip_name) != 0)
			rc->chip = NULL; /* a label that happens to match another chip's name */
		rc->raw_fd = passed_take(p, id, k);
		if (rc->raw_fd >= 0)
			n_fds++;
	}
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];
		Chip *c = rl->rc->chip;

		if (c && rl->offset < c->num_lines && !c->lines[rl->offset].holder)
			rl->line = &c->lines[rl->offset];
	}
	for (unsigned int k = 0; k < r->n_chips; k++)
		if (r->chips[k].raw_fd >= 0 && !reqchip_matches_kernel(&r->chips[k]))
			foreign = true;
	if (foreign) {
		log_error("state file %s does not match the kernel's view of its lines (chip gone, "
			  "or lines held by someone else); releasing request %" PRIu64 " as it is",
			  path, id);
		for (unsigned int k = 0; k < r->n_chips; k++)
			store_remove(b, id, k);
		unlink(path);
		request_discard(r);
		return;
	}

	owner = find_owner(b, r);
	if (n_fds < r->n_chips)
		why = n_fds ? "only part of it survived the restart" :
			      "its fds did not survive the restart (no fd store?)";
	else if (!r->persistent && !owner)
		why = "its owner left the bus while the broker was down";
	else if (!request_policy_allows(r, policy_why, sizeof(policy_why))) {
		snprintf(reason, sizeof(reason), "not allowed by the policy after the restart: %s",
			 policy_why);
		why = reason;
	}

	if (!why) {
		for (unsigned int k = 0; k < r->n_chips; k++) {
			ReqChip *rc = &r->chips[k];
			int ret;

			rc->seqno_unknown = true;
			ret = events_attach(rc);
			if (ret < 0) {
				why = "cannot watch its edge events";
				break;
			}
		}
	}
	if (!why) {
		/* Values were never recorded: the kernel request has them. */
		for (unsigned int i = 0; i < r->n_lines; i++) {
			ReqLine *rl = &r->lines[i];
			enum gpiod_line_value v;

			if (rl->config.direction == GPIOD_LINE_DIRECTION_OUTPUT &&
			    lreq_get(rl->rc, 1, &rl->offset, &v) == 0)
				rl->config.value = v == GPIOD_LINE_VALUE_ACTIVE;
		}
	}

	/* Make it live either way: released or kept, it goes through the usual paths
	 * (safe states, FDSTOREREMOVE, metadata removed). */
	for (unsigned int k = 0; k < r->n_chips; k++)
		if (r->chips[k].raw_fd < 0)
			apply_safe_without_fd(&r->chips[k]);
	if (request_link(r, why ? NULL : owner) < 0) {
		log_error("request %" PRIu64 ": out of memory restoring it", id);
		for (unsigned int k = 0; k < r->n_chips; k++) {
			events_detach(&r->chips[k]);
			store_remove(b, id, k);
		}
		request_discard(r);
		return;
	}
	r->stored = true;
	if (b->next_request_id < id)
		b->next_request_id = id;
	if (why) {
		request_free(r, why);
		return;
	}
	if (!b->record) {
		/* Adopted, but this broker does not record: the store keeps nothing past it. */
		fdstore_request_removed(r);
	} else {
		fdstore_request_changed(r); /* the subscriber may be gone */
	}
	free(r->owner_name);
	r->owner_name = NULL;
	log_info("request %s (\"%s\") restored after a restart: %u line(s), uid %u, %s%s", r->path,
		 r->label, r->n_lines, (unsigned)r->uid, r->persistent ? "persistent" : "managed",
		 r->client ? (r->persistent ? ", subscriber still here" : ", owner still here") : "");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void fdstore_restore(Broker *b)
{
	struct passed p = { 0 };
	char **names = NULL;
	uint64_t *ids = NULL;
	size_t n_ids = 0, cap = 0;
	DIR *d;
	int n;

	n = sd_listen_fds_with_names(1, &names);
	if (n < 0) {
		log_warning_errno(n, "cannot read the fds passed in: %m");
		n = 0;
	}
	if (n > 0) {
		p.v = calloc(n, sizeof(*p.v));
		if (!p.v) {
			log_error("out of memory: closing the %d fds passed in", n);
			for (int i = 0; i < n; i++)
				close(SD_LISTEN_FDS_START + i);
			n = 0;
		}
	}
	for (int i = 0; i < n; i++) {
		struct passed_fd *e = &p.v[p.n++];
		const char *name = names && names[i] ? names[i] : "unknown";

		e->fd = SD_LISTEN_FDS_START + i;
		e->name = names ? names[i] : NULL;
		if (!parse_fd_name(name, &e->id, &e->k)) {
			log_warning("passed fd %d named \"%s\" is not a line request of ours: closing it",
				    e->fd, name);
			close(e->fd);
			e->fd = -1;
		} else if (b->next_request_id < e->id) {
			b->next_request_id = e->id;
		}
	}
	if (n > 0)
		log_info("%d fd(s) passed in by the service manager", n);

	d = opendir(b->state_dir);
	if (!d && errno != ENOENT)
		log_full_errno(b->record ? LOG_WARNING : LOG_DEBUG, errno,
			       "cannot read state directory %s: %m", b->state_dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		uint64_t id;

		if (strncmp(de->d_name, ".request-", 9) == 0) {
			/* A write cut short by a crash; the renamed version is the state. */
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (strncmp(de->d_name, "request-", 8) != 0 || !parse_u64(de->d_name + 8, &id))
			continue;
		if (n_ids == cap) {
			void *v = realloc(ids, (cap = cap ? cap * 2 : 16) * sizeof(*ids));

			if (!v)
				break;
			ids = v;
		}
		ids[n_ids++] = id;
	}
	if (d)
		closedir(d);
	if (n_ids)
		qsort(ids, n_ids, sizeof(*ids), cmp_u64);
	for (size_t i = 0; i < n_ids; i++) {
		char path[PATH_MAX];

		if (b->next_request_id < ids[i])
			b->next_request_id = ids[i];
		meta_path(b, ids[i], false, path, sizeof(path));
		restore_one(b, path, ids[i], &p);
	}
	for (size_t i = 0; i < p.n; i++)
		if (p.v[i].fd >= 0) {
			log_warning("passed fd \"%s\" has no state file in %s: closing it (its lines "
				    "go back to the kernel as they are)", p.v[i].name, b->state_dir);
			store_remove(b, p.v[i].id, p.v[i].k);
			close(p.v[i].fd);
		}
	free(ids);
	free(p.v);
	strv_free(names);
}
