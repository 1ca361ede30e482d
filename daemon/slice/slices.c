/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiod-broker-slices: the root helper that makes the policy's [slice]s with the
 * kernel's gpio-aggregator. The broker runs unprivileged and sandboxed, and the
 * aggregator's sysfs files and the chip nodes' ownership are root's, so this
 * small program does that part, run by its own oneshot unit (sync at start and
 * reload, stop at stop), and records what it made for the broker to read.
 */
#include <errno.h>
#include <getopt.h>
#include <gpiod.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "aggregator.h"
#include "line-config.h"
#include "log.h"
#include "macro.h"
#include "node.h"
#include "policy.h"
#include "slice.h"

#define BROKER_USER "gpiod-broker"
#define EXIT_PARTIAL 2

static const char *arg_policy_dir = SYSCONFDIR "/gpiod-broker/policy.d";
static const char *arg_unless_restart;

static void help(void)
{
	printf("gpiod-broker-slices [OPTIONS] sync|stop|list\n\n"
	       "Make the policy's slices (chips of chosen lines, gpio-aggregator) and\n"
	       "give them to their users.\n\n"
	       "  sync                  make, keep or revoke each slice as the policy says\n"
	       "  stop                  revoke every slice\n"
	       "  list                  the slices made, a line each\n\n"
	       "  -h --help             this text\n"
	       "     --policy-dir=DIR   policy files (default %s)\n"
	       "     --log-level=LEVEL  err, warning, notice, info or debug\n"
	       "     --unless-restart=UNIT\n"
	       "                        stop: keep the slices while UNIT is restarting\n"
	       "                        (a restart or start job queued)\n",
	       arg_policy_dir);
}

/* The line's safe state on its parent chip: requested with the state's settings,
 * then released. Nothing for as-is. */
static void put_safe(const struct gb_slice *s, const struct gb_slice_line *l)
{
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_request_config *rc = gpiod_request_config_new();
	struct gpiod_line_request *req = NULL;
	struct gpiod_chip *chip = NULL;
	struct gb_line_config cfg;
	char path[96];

	gb_line_config_init(&cfg);
	if (!gb_safe_state_config(l->safe, &cfg)) {
		log_info("slice %s: line %s:%u (%s) left as it is (safe state as-is)", s->name,
			 l->parent, l->offset, l->item);
		goto out;
	}
	snprintf(path, sizeof(path), "/dev/%s", l->parent);
	if (!ls || !lc || !rc || gb_line_config_to_settings(&cfg, ls) < 0) {
		log_error("slice %s: line %s:%u (%s): out of memory for its safe state", s->name,
			  l->parent, l->offset, l->item);
		goto out;
	}
	gpiod_request_config_set_consumer(rc, "gpiod-broker-slices");
	chip = gpiod_chip_open(path);
	if (chip && gpiod_line_config_add_line_settings(lc, &l->offset, 1, ls) == 0)
		req = gpiod_chip_request_lines(chip, rc, lc);
	if (!req)
		log_error_errno(errno, "slice %s: line %s:%u (%s) could not be put in its safe "
				"state %s: %m", s->name, l->parent, l->offset, l->item,
				gb_safe_state_name(l->safe));
	else
		log_notice("slice %s: line %s:%u (%s) put in its safe state %s", s->name, l->parent,
			   l->offset, l->item, gb_safe_state_name(l->safe));
out:
	if (req)
		gpiod_line_request_release(req);
	if (chip)
		gpiod_chip_close(chip);
	gpiod_request_config_free(rc);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
}

/* Before the chip goes: who held its lines, for the integrator to find. */
static void log_holders(const struct gb_slice *s)
{
	struct gpiod_chip *chip;
	char path[96];

	snprintf(path, sizeof(path), "/dev/%s", s->chip);
	chip = gpiod_chip_open(path);
	if (!chip)
		return;
	for (size_t i = 0; i < s->n_lines; i++) {
		const struct gb_slice_line *l = &s->lines[i];
		struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, (unsigned int)i);
		struct gb_log_fields f = { 0 };

		if (info && gpiod_line_info_is_used(info)) {
			gb_log_field(&f, "GPIO_CHIP", "%s", l->parent);
			gb_log_field(&f, "GPIO_OFFSET", "%u", l->offset);
			gb_log_field(&f, "GPIO_SLICE", "%s", s->name);
			log_struct(LOG_NOTICE, &f, "slice %s revoked: line %zu (%s, %s:%u) held by '%s'",
				   s->name, i, l->item, l->parent, l->offset,
				   gpiod_line_info_get_consumer(info) ?: "");
		}
		gpiod_line_info_free(info);
	}
	gpiod_chip_close(chip);
}

/* Revocation: the chip goes (its users' fds fail with ENODEV), then its lines go to
 * their safe states. A device that cannot be deleted keeps its state file, so that
 * the next run tries again. */
static int revoke_slice(const struct gb_slice *s, const char *why)
{
	int r;

	if (s->device[0] && agg_has_chip(s->device, s->chip))
		log_holders(s);
	r = agg_delete(s->device);
	if (r < 0)
		return log_error_errno(r, "slice %s: cannot delete %s: %m", s->name, s->device);
	(void)node_unlink(s->name);
	for (size_t i = 0; i < s->n_lines; i++)
		put_safe(s, &s->lines[i]);
	gb_slice_state_remove(GB_SLICE_STATE_DIR, s->name);
	log_notice("slice %s revoked (%s): %s removed", s->name, why, s->chip);
	return 0;
}

/* The policy may give a user or group as its number. */
static bool numeric_id(const char *s, unsigned int *id)
{
	unsigned long v;
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || v >= 0xffffffffUL)
		return false;
	*id = (unsigned int)v;
	return true;
}

/* The uids and gids the slice's node is opened to: its users and groups as the
 * policy resolves them, and the broker's user. */
static int grant(struct gb_policy *p, const struct gb_policy_slice *ps, const struct gb_slice *s)
{
	_cleanup_free_ uid_t *uids = calloc(ps->n_users + 1, sizeof(uid_t));
	_cleanup_free_ gid_t *gids = calloc(ps->n_groups + 1, sizeof(gid_t));
	size_t nu = 0, ng = 0;
	struct passwd *pw;

	if (!uids || !gids)
		return -ENOMEM;
	for (size_t i = 0; i < ps->n_users; i++) {
		unsigned int id;

		if (numeric_id(ps->users[i], &id) || gb_policy_lookup_name(p, true, ps->users[i], &id) == 1)
			uids[nu++] = id;
		else
			log_warning("%s:%u: slice %s: no user '%s': it gets nothing", ps->file,
				    ps->lineno, ps->name, ps->users[i]);
	}
	for (size_t i = 0; i < ps->n_groups; i++) {
		unsigned int id;

		if (numeric_id(ps->groups[i], &id) ||
		    gb_policy_lookup_name(p, false, ps->groups[i], &id) == 1)
			gids[ng++] = id;
		else
			log_warning("%s:%u: slice %s: no group '%s': it gets nothing", ps->file,
				    ps->lineno, ps->name, ps->groups[i]);
	}
	pw = getpwnam(BROKER_USER);
	if (pw)
		uids[nu++] = pw->pw_uid;
	else
		log_warning("no user " BROKER_USER ": the broker will not see slice %s", ps->name);
	return node_grant(s->chip, uids, nu, gids, ng);
}

/* Make (or keep) one slice. 0, or < 0 with the reason in its .error file. */
static int sync_one(struct gb_policy *p, const struct gb_policy_slice *ps)
{
	struct gb_slice old = { 0 }, new = { 0 };
	char err[1024] = "";
	const char *own = NULL;
	bool have_old;
	int r;

	if (!gb_policy_valid_name(ps->name)) {
		log_error("%s:%u: slice '%s': not a valid name", ps->file, ps->lineno, ps->name);
		return -EINVAL;
	}
	have_old = gb_slice_state_read(GB_SLICE_STATE_DIR, ps->name, &old) >= 0;
	if (have_old && agg_has_chip(old.device, old.chip))
		own = old.device;
	r = slice_resolve(p, ps, own, &new, err, sizeof(err));
	if (r >= 0 && !agg_available()) {
		snprintf(err, sizeof(err), "%s:%u: slice %s: the kernel has no gpio-aggregator "
			 "(CONFIG_GPIO_AGGREGATOR)", ps->file, ps->lineno, ps->name);
		r = -EOPNOTSUPP;
	}
	if (r >= 0 && own && gb_slice_same(&old, &new)) {
		snprintf(new.device, sizeof(new.device), "%s", old.device);
		snprintf(new.chip, sizeof(new.chip), "%s", old.chip);
		log_info("slice %s kept: %s (%s)", ps->name, new.chip, new.device);
	} else if (r >= 0) {
		if (have_old && revoke_slice(&old, "its policy changed") < 0) {
			snprintf(err, sizeof(err), "slice %s: the old %s could not be removed", ps->name,
				 old.device);
			r = -EBUSY;
		} else {
			have_old = false;
			r = agg_new(new.spec, new.device, sizeof(new.device), new.chip, sizeof(new.chip));
			if (r < 0)
				snprintf(err, sizeof(err), "%s:%u: slice %s: the aggregator did not make "
					 "'%s': %s", ps->file, ps->lineno, ps->name, new.spec,
					 strerror(-r));
		}
	}
	if (r >= 0) {
		r = grant(p, ps, &new);
		if (r >= 0)
			r = node_link(ps->name, new.chip);
		if (r >= 0)
			r = gb_slice_state_write(GB_SLICE_STATE_DIR, &new);
		if (r < 0) {
			snprintf(err, sizeof(err), "slice %s: cannot set up /dev/%s: %s", ps->name,
				 new.chip, strerror(-r));
			/* A chip its users cannot have, or one nobody records: not left made. */
			(void)revoke_slice(&new, "it could not be set up");
		}
	}
	if (r < 0) {
		/* The slice as it was is no longer what the policy says: revoke it. */
		if (have_old)
			(void)revoke_slice(&old, "it cannot be made as the policy now says");
		log_error("%s", err);
		(void)gb_slice_error_write(GB_SLICE_STATE_DIR, ps->name, err);
	} else {
		(void)gb_slice_error_write(GB_SLICE_STATE_DIR, ps->name, NULL);
		log_notice("slice %s: %s (%s) for users '%s', groups '%s', %zu lines", ps->name,
			   new.chip, new.device, new.users, new.groups, new.n_lines);
	}
	gb_slice_clear(&old);
	gb_slice_clear(&new);
	return r;
}

static bool in_policy(const struct gb_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_slices; i++)
		if (strcmp(p->slices[i].name, name) == 0)
			return true;
	return false;
}

/* Revoke every recorded slice that @p p (NULL: none) does not have. */
static int revoke_others(const struct gb_policy *p, const char *why)
{
	char **names = NULL;
	int r, ret = 0;

	r = gb_slice_state_names(GB_SLICE_STATE_DIR, false, &names);
	if (r < 0)
		return log_error_errno(r, "cannot read " GB_SLICE_STATE_DIR ": %m");
	for (size_t i = 0; names && names[i]; i++) {
		struct gb_slice s = { 0 };

		if (p && in_policy(p, names[i]))
			continue;
		r = gb_slice_state_read(GB_SLICE_STATE_DIR, names[i], &s);
		if (r < 0) {
			log_error_errno(r, GB_SLICE_STATE_DIR "/%s cannot be read: %m", names[i]);
			ret = r;
		} else if (revoke_slice(&s, why) < 0) {
			ret = -EIO;
		}
		gb_slice_clear(&s);
	}
	strv_free(names);
	/* A slice that could not be made and has left the policy: its reason goes too. */
	if (gb_slice_state_names(GB_SLICE_STATE_DIR, true, &names) >= 0)
		for (size_t i = 0; names && names[i]; i++)
			if (!p || !in_policy(p, names[i]))
				(void)gb_slice_error_write(GB_SLICE_STATE_DIR, names[i], NULL);
	strv_free(names);
	return ret;
}

static int do_sync(void)
{
	_cleanup_free_ char *errors = NULL;
	struct gb_policy *p;
	size_t failed = 0;
	int r;

	p = gb_policy_load(arg_policy_dir, &errors);
	if (!p) {
		/* The slices made stay as they are: a typo must not take chips away. */
		log_error("policy %s rejected, slices left as they are:\n%s", arg_policy_dir,
			  errors ? errors : "");
		return EXIT_FAILURE;
	}
	if (p->warnings)
		log_warning("%s", p->warnings);
	r = revoke_others(p, "no longer in the policy");
	for (size_t i = 0; i < p->n_slices; i++)
		if (sync_one(p, &p->slices[i]) < 0)
			failed++;
	gb_policy_free(p);
	if (r < 0)
		return EXIT_FAILURE;
	return failed ? EXIT_PARTIAL : EXIT_SUCCESS;
}

/* Whether @p unit is coming back: a restart job queued, or the start job a restart
 * becomes once the unit has stopped. We are ordered before it, so our stop runs after
 * its stop, when systemd has already turned its job into a start. */
static bool restart_pending(const char *unit)
{
	_cleanup_(sd_bus_error_free) sd_bus_error err = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	const char *u, *type, *state, *job, *upath;
	bool found = false;
	uint32_t id;
	int r;

	r = sd_bus_open_system(&bus);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
				       "org.freedesktop.systemd1.Manager", "ListJobs", &err, &reply, "");
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "(usssoo)");
	while (r > 0 && !found) {
		r = sd_bus_message_read(reply, "(usssoo)", &id, &u, &type, &state, &job, &upath);
		if (r > 0 && strcmp(u, unit) == 0 &&
		    (strcmp(type, "restart") == 0 || strcmp(type, "start") == 0))
			found = true;
	}
	if (r < 0)
		log_info_errno(r, "no restart of %s as far as can be told (systemd: %s): revoking",
			       unit, err.message ? err.message : strerror(-r));
	return found;
}

static int do_stop(void)
{
	if (arg_unless_restart && restart_pending(arg_unless_restart)) {
		log_info("%s is restarting: the slices stay, with their users' lines", arg_unless_restart);
		return EXIT_SUCCESS;
	}
	return revoke_others(NULL, "stopped") < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int do_list(void)
{
	char **names = NULL;
	int r;

	r = gb_slice_state_names(GB_SLICE_STATE_DIR, false, &names);
	if (r < 0) {
		log_error_errno(r, "cannot read " GB_SLICE_STATE_DIR ": %m");
		return EXIT_FAILURE;
	}
	for (size_t i = 0; names && names[i]; i++) {
		struct gb_slice s = { 0 };

		if (gb_slice_state_read(GB_SLICE_STATE_DIR, names[i], &s) < 0) {
			printf("%s: unreadable state\n", names[i]);
			continue;
		}
		printf("%s: %s (%s)%s users=%s groups=%s lines=", s.name, s.chip, s.device,
		       agg_has_chip(s.device, s.chip) ? "" : " GONE", s.users, s.groups);
		for (size_t j = 0; j < s.n_lines; j++)
			printf("%s%s(%s:%u,%s)", j ? "," : "", s.lines[j].item, s.lines[j].parent,
			       s.lines[j].offset, gb_safe_state_name(s.lines[j].safe));
		printf("\n");
		gb_slice_clear(&s);
	}
	strv_free(names);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	enum { ARG_POLICY_DIR = 0x100, ARG_LOG_LEVEL, ARG_UNLESS_RESTART };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "policy-dir", required_argument, NULL, ARG_POLICY_DIR },
		{ "log-level", required_argument, NULL, ARG_LOG_LEVEL },
		{ "unless-restart", required_argument, NULL, ARG_UNLESS_RESTART },
		{}
	};
	const char *cmd;
	int c, l;

	gb_log_init();
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return EXIT_SUCCESS;
		case ARG_POLICY_DIR:
			arg_policy_dir = optarg;
			break;
		case ARG_LOG_LEVEL:
			l = gb_log_parse_level(optarg);
			if (l < 0) {
				log_error("--log-level: unknown level '%s'", optarg);
				return EXIT_FAILURE;
			}
			gb_log_max_level = l;
			break;
		case ARG_UNLESS_RESTART:
			arg_unless_restart = optarg;
			break;
		default:
			return EXIT_FAILURE;
		}
	}
	if (optind + 1 != argc) {
		log_error("expected one command: sync, stop or list (--help)");
		return EXIT_FAILURE;
	}
	cmd = argv[optind];
	if (arg_unless_restart && strcmp(cmd, "stop") != 0) {
		log_error("--unless-restart is for stop only");
		return EXIT_FAILURE;
	}
	if (strcmp(cmd, "sync") == 0)
		return do_sync();
	if (strcmp(cmd, "stop") == 0)
		return do_stop();
	if (strcmp(cmd, "list") == 0)
		return do_list();
	log_error("unknown command '%s': sync, stop or list", cmd);
	return EXIT_FAILURE;
}
