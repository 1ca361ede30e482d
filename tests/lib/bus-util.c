/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "org.gpiodbroker1.h"
#include "procstat.h"
#include "timing.h"

/* Private connections and the bus connections that opened them. */
struct p2p_pair {
	sd_bus *p2p, *bus;
	struct p2p_pair *next;
};
static struct p2p_pair *pairs;

bool gb_test_p2p(void)
{
	const char *t = getenv("GB_TEST_TRANSPORT");

	return t && strcmp(t, "p2p") == 0;
}

sd_bus *gb_sysbus(sd_bus *bus)
{
	for (struct p2p_pair *p = pairs; p; p = p->next)
		if (p->p2p == bus)
			return p->bus;
	return bus;
}

int gb_get_unique_name(sd_bus *bus, const char **name)
{
	return sd_bus_get_unique_name(gb_sysbus(bus), name);
}

void gb_close(sd_bus *bus)
{
	if (!bus)
		return;
	for (struct p2p_pair **pp = &pairs; *pp; pp = &(*pp)->next)
		if ((*pp)->p2p == bus) {
			struct p2p_pair *p = *pp;

			*pp = p->next;
			sd_bus_flush_close_unref(p->p2p);
			sd_bus_flush_close_unref(p->bus);
			free(p);
			return;
		}
	sd_bus_flush_close_unref(bus);
}

sd_bus *gb_open_p2p(sd_bus *bus)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *p2p = NULL;
	int fd, r;

	r = sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "OpenConnection", &err,
			       &reply, "a{sv}", 0);
	ck_assert_msg(r >= 0, "OpenConnection: %s", err.message);
	ck_assert_int_ge(sd_bus_message_read(reply, "h", &fd), 0);
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	ck_assert_int_ge(fd, 0);
	sd_bus_message_unref(reply);
	ck_assert_int_ge(sd_bus_new(&p2p), 0);
	ck_assert_int_ge(sd_bus_set_fd(p2p, fd, fd), 0);
	ck_assert_int_ge(sd_bus_set_anonymous(p2p, 1), 0);
	ck_assert_int_ge(sd_bus_start(p2p), 0);
	return p2p;
}

sd_bus *gb_connect(uid_t uid)
{
	sd_bus *bus = gb_connect_bus(uid);
	struct p2p_pair *p;

	/* Before the broker runs (a test's own set-up) there is nothing to open. */
	if (!gb_test_p2p() || !gb_name_has_owner(bus, GB_BUS_NAME))
		return bus;
	p = calloc(1, sizeof(*p));
	ck_assert_ptr_nonnull(p);
	p->bus = bus;
	p->p2p = gb_open_p2p(bus);
	p->next = pairs;
	pairs = p;
	return p->p2p;
}

sd_bus *gb_connect_bus(uid_t uid)
{
	gid_t saved[64], groups[64];
	int n_saved = 0, n_groups = 64;
	struct passwd *pw = NULL;
	sd_bus *bus = NULL;
	int r;

	/* The bus daemon takes the peer's identity from the socket (SO_PEERCRED and
	 * SO_PEERGROUPS: the effective ids and the groups at connect time): connect
	 * with the user's ids and groups, as setpriv --init-groups would give them,
	 * then come back to root. The connection keeps the user's identity. */
	if (uid) {
		pw = getpwuid(uid);
		ck_assert_msg(pw != NULL, "no user %u in the bench", (unsigned)uid);
		n_saved = getgroups(64, saved);
		ck_assert_int_ge(n_saved, 0);
		ck_assert_int_ge(getgrouplist(pw->pw_name, pw->pw_gid, groups, &n_groups), 0);
		ck_assert_int_eq(setgroups(n_groups, groups), 0);
		ck_assert_int_eq(setegid(pw->pw_gid), 0);
		ck_assert_int_eq(seteuid(uid), 0);
	}
	r = sd_bus_open_system(&bus);
	if (uid) {
		ck_assert_int_eq(seteuid(0), 0);
		ck_assert_int_eq(setegid(0), 0);
		ck_assert_int_eq(setgroups(n_saved, saved), 0);
	}
	ck_assert_msg(r >= 0, "cannot connect to the system bus as uid %u: %s", (unsigned)uid,
		      strerror(-r));
	return bus;
}

bool gb_name_has_owner(sd_bus *bus, const char *name)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int has = 0;

	if (sd_bus_call_method(gb_sysbus(bus), "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "NameHasOwner", &err, &reply, "s", name) >= 0)
		sd_bus_message_read(reply, "b", &has);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	return has;
}

bool gb_wait_name(sd_bus *bus, const char *name, bool owned, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);

	while (gb_name_has_owner(bus, name) != owned) {
		if (gb_now_ms() > deadline)
			return false;
		usleep(5000);
	}
	return true;
}

pid_t gb_fork_client(sd_bus *(*body)(void *userdata), void *userdata, char *name, size_t size)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sd_bus *bus;
		const char *me;

		close(p[0]);
		bus = body(userdata);
		if (!bus || gb_get_unique_name(bus, &me) < 0 || write(p[1], me, strlen(me) + 1) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ck_assert_msg(read(p[0], name, size) > 0, "the client process failed");
	close(p[0]);
	return pid;
}

bool gb_bus_wait_count(sd_bus *bus, const int *counter, int target, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);

	while (*counter < target) {
		long left = deadline - gb_now_ms();
		int r = sd_bus_process(bus, NULL);

		ck_assert_int_ge(r, 0);
		if (r > 0)
			continue;
		if (left <= 0)
			return false;
		sd_bus_wait(bus, (uint64_t)left * 1000);
	}
	return true;
}

int gb_bus_count_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	(*(int *)userdata)++;
	return 0;
}

char *gb_get_prop_str(sd_bus *bus, const char *path, const char *iface, const char *prop)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *v = NULL;
	int r = sd_bus_get_property_string(bus, GB_BUS_NAME, path, iface, prop, &err, &v);

	ck_assert_msg(r >= 0, "get %s.%s of %s: %s", iface, prop, path, err.message);
	return v;
}

/* The trivial (fixed-size) types: one read, one message on failure. */
static void get_trivial(sd_bus *bus, const char *path, const char *iface, const char *prop, char type, void *v)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	int r = sd_bus_get_property_trivial(bus, GB_BUS_NAME, path, iface, prop, &err, type, v);

	ck_assert_msg(r >= 0, "get %s.%s of %s: %s", iface, prop, path, err.message);
	sd_bus_error_free(&err);
}

bool gb_get_prop_bool(sd_bus *bus, const char *path, const char *iface, const char *prop)
{
	int v = 0;

	get_trivial(bus, path, iface, prop, 'b', &v);
	return v;
}

uint32_t gb_get_prop_u32(sd_bus *bus, const char *path, const char *iface, const char *prop)
{
	uint32_t v = 0;

	get_trivial(bus, path, iface, prop, 'u', &v);
	return v;
}

uint64_t gb_get_prop_u64(sd_bus *bus, const char *path, const char *iface, const char *prop)
{
	uint64_t v = 0;

	get_trivial(bus, path, iface, prop, 't', &v);
	return v;
}

void gb_assert_error_at(const char *file, int line, sd_bus_error *err, const char *name, const char *needle)
{
	ck_assert_msg(sd_bus_error_is_set(err), "%s:%d: no error, want %s", file, line, name);
	ck_assert_msg(strcmp(err->name, name) == 0, "%s:%d: got %s (%s), want %s", file, line, err->name,
		      err->message ? err->message : "", name);
	ck_assert_msg(!needle || (err->message && strstr(err->message, needle)),
		      "%s:%d: '%s' should mention '%s'", file, line, err->message ? err->message : "", needle);
	sd_bus_error_free(err);
}

void gb_call_expect_error_at(const char *file, int line, sd_bus *bus, const char *want, const char *path,
			     const char *iface, const char *member, const char *types, ...)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	va_list ap;
	int r;

	ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, GB_BUS_NAME, path, iface, member), 0);
	va_start(ap, types);
	ck_assert_int_ge(sd_bus_message_appendv(m, types, ap), 0);
	va_end(ap);
	r = sd_bus_call(bus, m, 0, &err, NULL);
	ck_assert_msg(r < 0, "%s:%d: %s(%s) unexpectedly succeeded", file, line, member, types);
	ck_assert_msg(err.message && *err.message, "%s:%d: %s without a message", file, line, err.name);
	gb_assert_error_at(file, line, &err, want, NULL);
	sd_bus_message_unref(m);
}

/* The bus daemon, whose CPU an edge over the bus costs too: the bus names itself
 * (dbus-broker by its launcher, whose child it is). */
pid_t gb_bus_daemon_pid(sd_bus *root)
{
	sd_bus_message *reply = NULL;
	char comm[64] = "";
	uint32_t pid = 0;

	ck_assert_int_ge(sd_bus_call_method(root, "org.freedesktop.DBus", "/org/freedesktop/DBus",
					    "org.freedesktop.DBus", "GetConnectionUnixProcessID",
					    NULL, &reply, "s", "org.freedesktop.DBus"), 0);
	ck_assert_int_ge(sd_bus_message_read(reply, "u", &pid), 0);
	sd_bus_message_unref(reply);
	ck_assert_msg(gb_proc_comm((pid_t)pid, comm, sizeof(comm)), "bus daemon pid %u: %m", pid);
	if (strcmp(comm, "dbus-broker-lau") == 0) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		uint32_t launcher = pid;

		ck_assert_ptr_nonnull(d);
		while ((de = readdir(d))) {
			char p[300], buf[512], *s;
			int ppid = 0;
			FILE *f;

			snprintf(p, sizeof(p), "/proc/%s/stat", de->d_name);
			if (!(f = fopen(p, "re")))
				continue;
			s = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			fclose(f);
			if (s && sscanf(s + 2, "%*c %d", &ppid) == 1 &&
			    (uint32_t)ppid == launcher &&
			    gb_proc_comm(atoi(de->d_name), comm, sizeof(comm)) &&
			    strcmp(comm, "dbus-broker") == 0)
				pid = (uint32_t)atoi(de->d_name);
		}
		closedir(d);
		ck_assert_msg(pid != launcher, "no dbus-broker under its launcher (pid %u)",
			      launcher);
	}
	printf("# bus daemon: %s, pid %u\n", comm, pid);
	return (pid_t)pid;
}
