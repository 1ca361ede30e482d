/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiod-broker: owns the GPIO chips and brokers their lines over D-Bus.
 *
 * One thread, one sd-event loop: the bus, the chips' line-info watches, each
 * request's edge-event fd, /dev notifications and signals are all event sources,
 * so no state is ever touched concurrently.
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <gpiod.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "broker.h"
#include "bus.h"
#include "chip.h"
#include "conn.h"
#include "flow.h"
#include "irq.h"
#include "log.h"
#include "loop.h"
#include "macro.h"
#include "manager.h"
#include "org.gpiodbroker1.h"
#include "record.h"

static const char *arg_bus = "system";
static const char *arg_dev_dir = "/dev";
static const char *arg_policy_dir = SYSCONFDIR "/gpiod-broker/policy.d";
static bool arg_policy_dir_set = false;
static const char *arg_state_dir = NULL;
static bool arg_check_policy = false;
static const char *arg_check_dir = NULL;
static const char *arg_root = NULL;
static bool arg_polkit_rules = false;
static const char *arg_polkit_user = "gpiod-broker";
static unsigned int arg_event_window = GB_FLOW_DEFAULT_WINDOW;
static unsigned int arg_event_queue = GB_FLOW_DEFAULT_QUEUE;
static uint64_t arg_stall_usec = GB_CONN_DEFAULT_STALL_USEC;
static struct gb_limits arg_limits = {
	.max_requests_per_client = GB_DEFAULT_MAX_REQUESTS_PER_CLIENT,
	.max_lines_per_client = GB_DEFAULT_MAX_LINES_PER_CLIENT,
	.max_persistent_per_uid = GB_DEFAULT_MAX_PERSISTENT_PER_UID,
};

static void help(void)
{
	printf("Usage: gpiod-broker [OPTIONS]\n\n"
	       "Own the GPIO chips (libgpiod v2) and broker their lines to clients over D-Bus\n"
	       "as %s.\n\n"
	       "  -h --help              show this help\n"
	       "     --version           show the version\n"
	       "     --bus=BUS           system (default), session, or a D-Bus address\n"
	       "     --log-level=LEVEL   err, warning, notice, info (default) or debug\n"
	       "     --dev-dir=DIR       where gpiochip device nodes appear (default /dev)\n"
	       "     --policy-dir=DIR    policy files (default %s)\n"
	       "     --state-dir=DIR     keep request state here for a restart (default\n"
	       "                         $RUNTIME_DIRECTORY, else /run/gpiod-broker); it must be\n"
	       "                         the broker's user's or root's, not group/other-writable\n"
	       "     --max-requests-per-client=N  managed requests one connection may hold (default %u)\n"
	       "     --max-lines-per-client=N     lines in them (default %u)\n"
	       "     --max-persistent-per-uid=N   persistent requests one uid may hold (default %u)\n"
	       "                                  (0: no limit; root is not exempt)\n"
	       "     --event-window=N    events a subscriber may have unacknowledged (default %d)\n"
	       "     --event-queue=N     events queued per subscriber beyond that (default %d)\n"
	       "     --stall-timeout=SEC  drop a private connection that leaves its replies\n"
	       "                         unread while sending more calls, or does not\n"
	       "                         authenticate, for SEC seconds (default %" PRIu64 ")\n"
	       "     --check-policy[=DIR]  check the policy (default: --policy-dir) and exit:\n"
	       "                         every problem as file:line: message, exit status 1 on\n"
	       "                         any error\n"
	       "     --root=SYSROOT      with --check-policy: an image's policy, read in it\n"
	       "                         (DIR default SYSROOT/etc/gpiod-broker/policy.d), users\n"
	       "                         and groups from its etc, no chips checked, the edge\n"
	       "                         actions' units looked for in it\n"
	       "     --polkit-rules[=USER]  print the polkit rule that lets USER (default\n"
	       "                         gpiod-broker) start, stop or restart the units the\n"
	       "                         policy's edge actions name, and nothing else\n\n"
	       "SIGHUP reloads the policy; SIGTERM releases every line and exits. Killed or\n"
	       "crashed under systemd, the broker leaves its lines as they are and the next\n"
	       "one takes them over (fd store).\n",
	       GB_BUS_NAME, arg_policy_dir, GB_DEFAULT_MAX_REQUESTS_PER_CLIENT,
	       GB_DEFAULT_MAX_LINES_PER_CLIENT, GB_DEFAULT_MAX_PERSISTENT_PER_UID,
	       GB_FLOW_DEFAULT_WINDOW, GB_FLOW_DEFAULT_QUEUE, GB_CONN_DEFAULT_STALL_USEC / 1000000);
}

static int parse_limit(const char *s, unsigned int *ret)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > 1000000)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Each managed request holds a kernel line request fd per chip: with the limits
 * above, many clients need more than the usual soft limit of 1024. The broker uses
 * epoll only (no select()), so the soft limit may safely be raised to the hard one. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warning_errno(errno, "cannot raise the open file limit: %m");
}

static int parse_argv(int argc, char **argv)
{
	enum { ARG_VERSION = 0x100, ARG_BUS, ARG_LOG_LEVEL, ARG_DEV_DIR, ARG_POLICY_DIR,
	       ARG_STATE_DIR, ARG_MAX_REQUESTS, ARG_MAX_LINES, ARG_MAX_PERSISTENT,
	       ARG_EVENT_WINDOW, ARG_EVENT_QUEUE, ARG_CHECK_POLICY, ARG_ROOT, ARG_STALL_TIMEOUT,
	       ARG_POLKIT_RULES };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "bus", required_argument, NULL, ARG_BUS },
		{ "log-level", required_argument, NULL, ARG_LOG_LEVEL },
		{ "dev-dir", required_argument, NULL, ARG_DEV_DIR },
		{ "policy-dir", required_argument, NULL, ARG_POLICY_DIR },
		{ "state-dir", required_argument, NULL, ARG_STATE_DIR },
		{ "max-requests-per-client", required_argument, NULL, ARG_MAX_REQUESTS },
		{ "max-lines-per-client", required_argument, NULL, ARG_MAX_LINES },
		{ "max-persistent-per-uid", required_argument, NULL, ARG_MAX_PERSISTENT },
		{ "event-window", required_argument, NULL, ARG_EVENT_WINDOW },
		{ "event-queue", required_argument, NULL, ARG_EVENT_QUEUE },
		{ "stall-timeout", required_argument, NULL, ARG_STALL_TIMEOUT },
		{ "check-policy", optional_argument, NULL, ARG_CHECK_POLICY },
		{ "root", required_argument, NULL, ARG_ROOT },
		{ "polkit-rules", optional_argument, NULL, ARG_POLKIT_RULES },
		{}
	};
	int c, l;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			puts(PACKAGE_STRING);
			return 0;
		case ARG_BUS:
			arg_bus = optarg;
			break;
		case ARG_LOG_LEVEL:
			l = gb_log_parse_level(optarg);
			if (l < 0) {
				log_error("unknown log level '%s'", optarg);
				return -EINVAL;
			}
			gb_log_max_level = l;
			break;
		case ARG_DEV_DIR:
			arg_dev_dir = optarg;
			break;
		case ARG_POLICY_DIR:
			arg_policy_dir = optarg;
			arg_policy_dir_set = true;
			break;
		case ARG_STATE_DIR:
			arg_state_dir = optarg;
			break;
		case ARG_MAX_REQUESTS:
		case ARG_MAX_LINES:
		case ARG_MAX_PERSISTENT: {
			unsigned int *dst = c == ARG_MAX_REQUESTS ? &arg_limits.max_requests_per_client :
					    c == ARG_MAX_LINES ? &arg_limits.max_lines_per_client :
					    &arg_limits.max_persistent_per_uid;

			if (parse_limit(optarg, dst) < 0) {
				log_error("invalid limit '%s' for --%s", optarg,
					  options[c - ARG_VERSION + 1].name);
				return -EINVAL;
			}
			break;
		}
		case ARG_EVENT_WINDOW:
		case ARG_EVENT_QUEUE: {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || !*optarg || *end || v > GB_FLOW_MAX ||
			    (c == ARG_EVENT_WINDOW && v < 2)) {
				log_error("--%s must be a number %d-%d, not '%s'",
					  c == ARG_EVENT_WINDOW ? "event-window" : "event-queue",
					  c == ARG_EVENT_WINDOW ? 2 : 0, GB_FLOW_MAX, optarg);
				return -EINVAL;
			}
			if (c == ARG_EVENT_WINDOW)
				arg_event_window = v;
			else
				arg_event_queue = v;
			break;
		}
		case ARG_STALL_TIMEOUT: {
			char *end;
			double v;

			errno = 0;
			v = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(v >= 0.1 && v <= 86400)) {
				log_error("--stall-timeout must be a number of seconds 0.1-86400, not '%s'",
					  optarg);
				return -EINVAL;
			}
			arg_stall_usec = (uint64_t)(v * 1e6);
			break;
		}
		case ARG_CHECK_POLICY:
			arg_check_policy = true;
			arg_check_dir = optarg;
			break;
		case ARG_ROOT:
			arg_root = optarg;
			break;
		case ARG_POLKIT_RULES:
			arg_polkit_rules = true;
			if (optarg)
				arg_polkit_user = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	if (arg_root && !arg_check_policy && !arg_polkit_rules) {
		log_error("--root is for --check-policy and --polkit-rules only");
		return -EINVAL;
	}
	if (optind < argc) {
		log_error("unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	return 1;
}

/* The chips present, as the policy's checks see them; a chip that cannot be opened
 * is left out (said on stderr). */
static size_t read_chips(struct gb_chip_ident **ret)
{
	struct gb_chip_ident *ids = NULL;
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(arg_dev_dir);

	*ret = NULL;
	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		struct gpiod_chip *gc;
		struct gpiod_chip_info *info;
		struct gb_chip_ident *nn, *c;
		const char **names;

		if (!chip_is_node_name(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", arg_dev_dir, de->d_name);
		gc = gpiod_chip_open(path);
		info = gc ? gpiod_chip_get_info(gc) : NULL;
		nn = info ? realloc(ids, (n + 1) * sizeof(*ids)) : NULL;
		if (!nn) {
			fprintf(stderr, "gpiod-broker: %s: not checked against (%m)\n", path);
			gpiod_chip_info_free(info);
			if (gc)
				gpiod_chip_close(gc);
			continue;
		}
		ids = nn;
		c = &ids[n++];
		*c = (struct gb_chip_ident){};
		c->udev = calloc(1, sizeof(*c->udev));
		if (c->udev) {
			char **links = NULL, **props = NULL;

			/* Not yet described by udev: checked as it is. */
			udev_describe_fd(gpiod_chip_get_fd(gc), &links, &props);
			*(struct gb_chip_udev *)c->udev = (struct gb_chip_udev){
				(const char *const *)links, (const char *const *)props };
		}
		c->name = strdup(gpiod_chip_info_get_name(info));
		c->label = strdup(gpiod_chip_info_get_label(info));
		c->num_lines = gpiod_chip_info_get_num_lines(info);
		names = calloc(c->num_lines + 1, sizeof(*names));
		for (unsigned int i = 0; names && i < c->num_lines; i++) {
			struct gpiod_line_info *li = gpiod_chip_get_line_info(gc, i);
			const char *name = li ? gpiod_line_info_get_name(li) : NULL;

			names[i] = name ? strdup(name) : NULL;
			gpiod_line_info_free(li);
		}
		c->line_names = names;
		gpiod_chip_info_free(info);
		gpiod_chip_close(gc);
	}
	if (d)
		closedir(d);
	*ret = ids;
	return n;
}

static void print_problems(const char *text, const char *kind)
{
	for (const char *l = text; l && *l;) {
		size_t len = strcspn(l, "\n");
		const char *sep = memchr(l, ' ', len);

		/* "file:line: warning: message", as compilers do, so editors find them. */
		if (kind && sep)
			printf("%.*s %s: %.*s\n", (int)(sep - l), l, kind, (int)(len - (sep - l) - 1),
			       sep + 1);
		else
			printf("%.*s\n", (int)len, l);
		l += len + (l[len] == '\n');
	}
}

/* An image's chips are not here: which one an identity names is seen on the target. */
static void identity_notes(const struct gb_policy *p, char **notes)
{
	for (size_t i = 0; i < p->n_entries; i++) {
		const struct gb_policy_entry *e = &p->entries[i];

		if (e->chip && e->chip_by != GB_CHIP_BY_NAME)
			gb_policy_add_error(notes, e->file, e->lineno,
					    "[%s %s]: chip = %s is resolved on the target, by udev, "
					    "when the broker starts and as chips come and go",
					    e->group ? "group" : "line", e->name, e->chip);
	}
}

/* --check-policy: the daemon's parser and checks, offline. */
/* The policy directory --check-policy and --polkit-rules read. */
static char *offline_policy_dir(void)
{
	char *dir = NULL;

	if (arg_check_dir) {
		dir = strdup(arg_check_dir);
	} else if (arg_root) {
		/* Where the image's broker will look: /etc's, whatever this build's
		 * sysconfdir, unless --policy-dir says where it will be given. */
		const char *in = arg_policy_dir_set ? arg_policy_dir : "/etc/gpiod-broker/policy.d";
		int l = (int)strlen(arg_root);

		while (l > 0 && arg_root[l - 1] == '/')
			l--;
		if (asprintf(&dir, "%.*s/%s", l, arg_root, in + strspn(in, "/")) < 0)
			dir = NULL;
	} else {
		dir = strdup(arg_policy_dir);
	}
	return dir;
}

/* --polkit-rules: the rule that lets the broker's user run its actions' jobs. */
static int polkit_rules(void)
{
	_cleanup_free_ char *errors = NULL, *dir = offline_policy_dir();
	struct gb_policy *p;
	int r;

	if (!dir)
		return log_error_errno(ENOMEM, "out of memory");
	p = gb_policy_load_from(dir, arg_root, &errors, NULL);
	if (!p) {
		print_problems(errors, NULL);
		fflush(stdout);
		fprintf(stderr, "%s: the policy has errors: no rule made\n", dir);
		return 1;
	}
	r = gb_policy_actions_polkit(p, arg_polkit_user, dir, stdout);
	fflush(stdout);
	fprintf(stderr, "%s: a rule for %zu action%s, for user %s\n", dir, p->n_actions,
		p->n_actions == 1 ? "" : "s", arg_polkit_user);
	gb_policy_free(p);
	return r < 0 ? 1 : 0;
}

static int check_policy(void)
{
	_cleanup_free_ char *errors = NULL, *warnings = NULL, *notes = NULL;
	_cleanup_free_ char *dir = offline_policy_dir();
	struct gb_chip_ident *chips = NULL;
	struct gb_policy *p = NULL;
	size_t n_chips = 0, entries = 0, slices = 0;
	unsigned int n_err, n_warn;
	char slices_text[32] = "";

	if (!dir)
		return log_error_errno(ENOMEM, "out of memory");
	/* With an image, the loader looks for it there (and a missing one is an error). */
	if (!arg_root && access(dir, F_OK) < 0)
		gb_policy_add_error(&errors, dir, 0, "cannot read policy directory: %s", strerror(errno));
	else
		p = gb_policy_load_from(dir, arg_root, &errors, &warnings);
	if (!errors && p) {
		/* An image's policy is for the image's chips, not this machine's. */
		if (!arg_root)
			n_chips = read_chips(&chips);
		else
			identity_notes(p, &notes);
		gb_policy_check_identity(p, chips, n_chips, &errors);
		gb_policy_check_chips(p, chips, n_chips, &errors, &warnings);
		entries = p->n_entries;
		slices = p->n_slices;
	}
	for (size_t i = 0; i < n_chips; i++) {
		for (unsigned int k = 0; chips[i].line_names && k < chips[i].num_lines; k++)
			free((char *)chips[i].line_names[k]);
		free((void *)chips[i].line_names);
		free((char *)chips[i].name);
		free((char *)chips[i].label);
		if (chips[i].udev) {
			strv_free((char **)chips[i].udev->links);
			strv_free((char **)chips[i].udev->props);
			free((void *)chips[i].udev);
		}
	}
	free(chips);
	print_problems(errors, NULL);
	print_problems(warnings, "warning");
	/* The image's kernel with --root, else this one: a slice it cannot make. */
	n_warn = gb_policy_count_lines(warnings);
	if (p)
		n_warn += (unsigned int)gb_policy_slices_check_kernel(p, arg_root, stdout);
	gb_policy_free(p);
	print_problems(notes, "note");
	n_err = gb_policy_count_lines(errors);
	if (slices)
		snprintf(slices_text, sizeof(slices_text), ", %zu slice%s", slices,
			 slices == 1 ? "" : "s");
	fflush(stdout);
	fprintf(stderr, "%s: %s: %zu entr%s%s, %u error%s, %u warning%s%s\n", dir,
		n_err ? "rejected" : "valid", entries, entries == 1 ? "y" : "ies", slices_text,
		n_err, n_err == 1 ? "" : "s", n_warn, n_warn == 1 ? "" : "s",
		arg_root ? "" : n_chips ? " (checked against the chips present)" : " (no chips present)");
	return n_err ? 1 : 0;
}

static int open_bus(sd_bus **ret)
{
	sd_bus *bus = NULL;
	int r;

	if (strcmp(arg_bus, "system") == 0)
		return sd_bus_open_system(ret);
	if (strcmp(arg_bus, "session") == 0)
		return sd_bus_open_user(ret);
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, arg_bus);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*ret = bus;
	return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	Broker *b = userdata;

	/* "systemctl restart" (a package upgrade) must not glitch an output either:
	 * then systemd keeps the fd store and the next broker takes every line over. */
	if (si->ssi_signo == SIGTERM && manager_restart_queued(b)) {
		b->handover = true;
		log_info("received %s for a restart: leaving the lines to the next broker",
			 strsignal(si->ssi_signo));
		return sd_event_exit(sd_event_source_get_event(s), 0);
	}
	log_info("received %s, releasing all lines and exiting", strsignal(si->ssi_signo));
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	log_info("received SIGHUP, reloading the policy");
	manager_load_policy(userdata, false, NULL);
	return 0;
}

/*
 * The bus connection is on the loop's short way (shared/loop.h), not attached to
 * sd-event: what sd_bus_attach_event() would do, done here. One message per
 * wake-up (more wait in the socket, which stays readable), as sd-bus does itself.
 */
static void bus_process(Broker *b)
{
	int r = sd_bus_process(b->bus, NULL);

	if (r >= 0 && sd_bus_is_open(b->bus) > 0)
		return;
	/* Nobody left to serve: exit, which releases every line to its safe state. */
	if (r < 0)
		log_error_errno(r, "the %s bus connection failed: %m; exiting", arg_bus);
	else
		log_error("the %s bus connection closed; exiting", arg_bus);
	loop_io_remove(&b->bus_io);
	sd_event_exit(b->event, EXIT_FAILURE);
}

static void on_bus_io(LoopIo *io, uint32_t revents, void *userdata)
{
	bus_process(userdata);
}

/* Before the loop sleeps: what sd-bus has read already (while a call waited for its
 * reply) makes its fd no readier, so it is handled now; then the events to wait for
 * (POLLOUT while output is queued) and its earliest reply timeout. */
static uint64_t bus_prepare(void *userdata)
{
	Broker *b = userdata;
	uint64_t t;

	for (int i = 0; i < 64 && loop_io_active(&b->bus_io) && loop_bus_queued(b->bus); i++)
		bus_process(b);
	if (!loop_io_active(&b->bus_io))
		return UINT64_MAX;
	loop_io_sync_bus(&b->bus_io, b->bus);
	return sd_bus_get_timeout(b->bus, &t) > 0 ? t : UINT64_MAX;
}

/* As sd-bus does at the exit of a loop it is attached to: what is queued goes out,
 * then the connection closes, before the lines are released (their signals would
 * tell clients the requests are gone, when a restart brings them back). */
static int on_loop_exit(sd_event_source *s, void *userdata)
{
	Broker *b = userdata;

	loop_io_remove(&b->bus_io);
	if (sd_bus_is_open(b->bus) > 0) {
		(void)sd_bus_flush(b->bus);
		sd_bus_close(b->bus);
	}
	return 0;
}

static int attach_bus(Broker *b)
{
	int r = loop_io_add(b->loop, &b->bus_io, sd_bus_get_fd(b->bus), EPOLLIN, on_bus_io, b);

	if (r < 0)
		return r;
	loop_set_prepare(b->loop, bus_prepare, b);
	return sd_event_add_exit(b->event, NULL, on_loop_exit, b);
}

static int broker_run(Broker *b)
{
	sigset_t ss;
	int r;

	r = manager_init(b, arg_state_dir);
	if (r == -ENOMEM)
		return log_error_errno(r, "out of memory");
	if (r < 0)
		return r; /* the state directory was refused, and said why */

	/* Not sd_event_default(): the default loop checks its thread with gettid() at
	 * every iteration, a system call on the way of every call to the broker. The
	 * broker has one thread and one loop. */
	r = sd_event_new(&b->event);
	if (r < 0)
		return log_error_errno(r, "cannot create event loop: %m");
	/* libsystemd 252 wants the signals blocked before sd_event_add_signal(). */
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if ((r = sd_event_add_signal(b->event, NULL, SIGTERM, on_exit_signal, b)) < 0 ||
	    (r = sd_event_add_signal(b->event, NULL, SIGINT, on_exit_signal, b)) < 0 ||
	    (r = sd_event_add_signal(b->event, NULL, SIGHUP, on_sighup, b)) < 0)
		return log_error_errno(r, "cannot watch signals: %m");

	r = loop_new(b->event, &b->loop);
	if (r < 0)
		return log_error_errno(r, "cannot create event loop: %m");
	r = state_guard_marks(&b->state, b->event);
	if (r < 0)
		return log_error_errno(r, "cannot guard the event marks: %m");

	/* Under systemd with WatchdogSec=, the loop itself sends WATCHDOG=1: a hung
	 * loop stops the pings and gets the service restarted. */
	r = sd_event_set_watchdog(b->event, true);
	if (r < 0)
		log_warning_errno(r, "cannot enable the watchdog: %m");

	r = open_bus(&b->bus);
	if (r < 0)
		return log_error_errno(r, "cannot connect to the %s bus: %m", arg_bus);
	r = attach_bus(b);
	if (r < 0)
		return log_error_errno(r, "cannot attach the bus: %m");

	r = bus_manager_register(b);
	if (r < 0)
		return log_error_errno(r, "cannot register bus objects: %m");
	r = manager_startup(b);
	if (r < 0)
		return r;

	/* The name last: a client that sees it finds every chip already there. */
	r = sd_bus_request_name(b->bus, GB_BUS_NAME, 0);
	if (r < 0)
		return log_error_errno(r, "cannot own %s on the %s bus: %m (is another broker "
				       "running, or does the bus policy not allow this user?)",
				       GB_BUS_NAME, arg_bus);
	/* With the name ours but no message dispatched yet: a client's first call is
	 * answered with the old broker's requests already back. */
	manager_restore(b);
	sd_notify(0, "READY=1"); /* STATUS= says how the policy loaded */
	log_info("%s ready on the %s bus", PACKAGE_STRING, arg_bus);

	r = loop_run(b->loop);
	if (r < 0)
		return log_error_errno(r, "event loop failed: %m");
	return 0;
}

/* Only the broker's own environment (its unit, or whoever starts it) sets these:
 * they do nothing that user could not do with kill. */
static void debug_knobs(void)
{
	const char *e = getenv("GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS");
	uint64_t n;

	if (!e || !*e)
		return;
	if (!gb_parse_u64(e, &n)) {
		log_warning("GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS=%s is not a number: ignored", e);
		return;
	}
	irq_debug_abort_after(n);
	if (n)
		log_warning("debugging: aborting once %s edge event(s) have been read "
			    "(GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS)", e);
}

int main(int argc, char **argv)
{
	Broker b = { .inotify_fd = -1 };
	int r;

	gb_log_init();
	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	/* --check-policy=DIR only says where the policy is, for --polkit-rules. */
	if (arg_polkit_rules)
		return polkit_rules();
	if (arg_check_policy)
		return check_policy();
	b.dev_dir = (char *)arg_dev_dir;
	b.policy_dir = (char *)arg_policy_dir;
	raise_fd_limit();
	debug_knobs();
	b.event_window = arg_event_window;
	b.event_queue = arg_event_queue;
	b.stall_usec = arg_stall_usec;
	b.limits = arg_limits;
	r = broker_run(&b);
	sd_notify(0, "STOPPING=1");
	manager_done(&b);
	/* After every object, and so every mark, is gone. */
	state_unguard_marks(&b.state);
	b.loop = loop_free(b.loop);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
