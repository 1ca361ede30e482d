/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: monitor, watch (edge events), wait (for the broker). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "ctl.h"

struct monitor {
	sd_event *loop;
	char **names; /* per index: what the user called the line */
	bool json, quiet, unquoted;
	const char *format; /* -F: gpiomon's specifiers */
	char time_spec;     /* 'S' raw seconds, 'U' UTC, 'L' local time */
	unsigned long left; /* 0: forever */
	uint64_t idle_us;
	sd_event_source *idle;
	int status;
	char **watch_names; /* watch: per watch, the user's name */
	struct gpiobroker_watch **watches;
	int n_watches;
	struct tree t;
};

/* A timestamp as gpiomon prints it: raw seconds, or the value formatted as time. */
static void print_ts(uint64_t ns, char spec)
{
	struct tm tm;
	char buf[64];
	time_t s = (time_t)(ns / 1000000000);

	if (spec == 'S') {
		printf("%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
		return;
	}
	if (spec == 'U')
		gmtime_r(&s, &tm);
	else
		localtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%FT%T", &tm);
	printf("%s.%09" PRIu64 "%s", buf, ns % 1000000000, spec == 'U' ? "Z" : "");
}

/* The kernel's name of a line, for %l. */
static const char *kernel_name(struct monitor *mon, const char *chip, unsigned int off)
{
	for (size_t i = 0; i < mon->t.n_lines; i++) {
		const struct chipinfo *ch = tree_chip_by_path(&mon->t, mon->t.lines[i].chip);

		if (ch && chip && strcmp(ch->name, chip) == 0 && mon->t.lines[i].offset == off)
			return mon->t.lines[i].name && *mon->t.lines[i].name ? mon->t.lines[i].name :
										 "unnamed";
	}
	return "unnamed";
}

static void reset_idle(struct monitor *mon);

/* One event of @p chip:@p offset (index @p idx, called @p name by the user), in
 * the chosen format; the initial state is a line of its own, not counted. */
static void print_event(struct monitor *mon, const struct gpiobroker_event *ev, const char *name,
			const char *chip, unsigned int idx, const char *watch)
{
	enum gpiobroker_event_type type = gpiobroker_event_get_type(ev);
	uint64_t ts = gpiobroker_event_get_timestamp_ns(ev);
	bool initial = gpiobroker_event_is_initial(ev);
	unsigned int off = gpiobroker_event_get_offset(ev);
	const char *edge;

	if (type != GPIOBROKER_EVENT_EDGE && !initial) {
		const char *detail = gpiobroker_event_get_detail(ev);

		if (type == GPIOBROKER_EVENT_CHIP_GONE)
			fprintf(stderr, "gpiobrokerctl: %s: chip %s was unplugged\n", cur_cmd, detail);
		else if (type == GPIOBROKER_EVENT_REVOKED)
			fprintf(stderr, "gpiobrokerctl: %s: request revoked: %s\n", cur_cmd, detail);
		else
			fprintf(stderr, "gpiobrokerctl: %s: gpiod-broker left the bus\n", cur_cmd);
		mon->status = EX_ERROR;
		sd_event_exit(mon->loop, 0);
		return;
	}
	if (!initial)
		reset_idle(mon);
	edge = initial ? "initial" :
	       gpiobroker_event_get_edge(ev) == GPIOBROKER_EDGE_RISING ? "rising" : "falling";
	if (mon->quiet) {
		/* counted only */
	} else if (mon->json) {
		printf("{\"timestamp_ns\":%" PRIu64 ",\"edge\":\"%s\",\"line\":", ts, edge);
		json_str_or_null(name);
		printf(",\"chip\":");
		json_str(chip ? chip : "");
		printf(",\"offset\":%u,\"index\":%u,", off, idx);
		if (watch) {
			printf("\"watch\":");
			json_str(watch);
			putchar(',');
		}
		printf("\"seqno\":%" PRIu64, gpiobroker_event_get_seqno(ev));
		if (initial)
			printf(",\"value\":%d}\n", gpiobroker_event_get_value(ev));
		else
			printf(",\"global_seqno\":%" PRIu64 ",\"line_seqno\":%" PRIu64 ",\"lost\":%" PRIu64
			       "}\n", gpiobroker_event_get_global_seqno(ev),
			       gpiobroker_event_get_line_seqno(ev), gpiobroker_event_get_lost(ev));
	} else if (mon->format) {
		if (initial)
			goto counted; /* gpiomon's formats have edges only */
		for (const char *f = mon->format; *f; f++) {
			if (*f != '%' || !f[1]) {
				putchar(*f);
				continue;
			}
			switch (*++f) {
			case 'o': printf("%u", off); break;
			case 'l': printf("%s", kernel_name(mon, chip, off)); break;
			case 'c': printf("%s", chip ? chip : "?"); break;
			case 'e': printf("%d", edge[0] == 'r' ? 1 : 2); break;
			case 'E': printf("%s", edge); break;
			case 'S': case 'U': case 'L': print_ts(ts, *f); break;
			case '%': putchar('%'); break;
			default: putchar('%'); putchar(*f); break;
			}
		}
		putchar('\n');
	} else {
		if (!initial && gpiobroker_event_get_lost(ev))
			printf("# %" PRIu64 " event(s) lost\n", gpiobroker_event_get_lost(ev));
		print_ts(ts, mon->time_spec);
		printf("\t%s\t%s\t%s:%u\t", edge, name ? name : "-", chip ? chip : "?", off);
		if (initial)
			printf("value=%d\n", gpiobroker_event_get_value(ev));
		else
			printf("seqno=%" PRIu64 "\n", gpiobroker_event_get_seqno(ev));
	}
	fflush(stdout);
counted:
	if (!initial && mon->left && --mon->left == 0)
		sd_event_exit(mon->loop, 0);
}

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct monitor *mon = userdata;
	unsigned int idx = gpiobroker_event_get_index(ev);

	print_event(mon, ev, mon->names ? mon->names[idx] : NULL,
		    gpiobroker_request_get_chip(req, idx), idx, NULL);
}

/* --timeout and --idle-timeout: the command ran as long as asked; exit 0. */
static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct monitor *mon = userdata;

	return sd_event_exit(mon->loop, 0);
}

static void reset_idle(struct monitor *mon)
{
	uint64_t now;

	if (!mon->idle_us || !mon->loop)
		return;
	sd_event_now(mon->loop, CLOCK_MONOTONIC, &now);
	if (mon->idle) {
		sd_event_source_set_time(mon->idle, now + mon->idle_us);
		sd_event_source_set_enabled(mon->idle, SD_EVENT_ONESHOT);
	} else {
		sd_event_add_time(mon->loop, &mon->idle, CLOCK_MONOTONIC, now + mon->idle_us, 0,
				  on_timeout, mon);
	}
}

/* The event loop of monitor and watch: the library attached, SIGINT/SIGTERM end
 * it cleanly (so requests are released and the output flushed; sd-event wants the
 * signals blocked), --timeout and --idle-timeout. 0 or -errno, reported. */
static int monitor_loop_new(struct monitor *mon, uint64_t timeout_us)
{
	sigset_t mask;
	int r = sd_event_new(&mon->loop);

	if (r >= 0)
		r = gpiobroker_attach_event(B, mon->loop, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (r >= 0)
		r = sd_event_add_signal(mon->loop, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(mon->loop, NULL, SIGTERM, NULL, NULL);
	if (r >= 0 && timeout_us > 0) {
		uint64_t now;

		sd_event_now(mon->loop, CLOCK_MONOTONIC, &now);
		r = sd_event_add_time(mon->loop, NULL, CLOCK_MONOTONIC, now + timeout_us, 0,
				      on_timeout, mon);
	}
	if (r >= 0)
		reset_idle(mon);
	if (r < 0)
		fprintf(stderr, "gpiobrokerctl: %s: event loop: %s\n", cur_cmd, strerror(-r));
	return r;
}

/* Options monitor and watch share; 1 if @c was one, 0 if not, else an exit code. */
static int output_opt(int c, const char *arg, struct monitor *mon, uint64_t *timeout_us)
{
	int64_t p;

	switch (c) {
	case 'n':
		if (parse_count(arg, &mon->left) < 0)
			return usage_error("bad number of events '%s' (a positive integer)", arg);
		return 1;
	case 't':
		/* A bare number is seconds here (gpiobrokerctl's own option since 1.0). */
		p = parse_period(arg, 1000000);
		if (p <= 0)
			return usage_error("bad timeout '%s' (a period: 5s, 500ms; bare number: seconds)",
					   arg);
		*timeout_us = (uint64_t)p;
		return 1;
	case OPT_IDLE:
		p = parse_period(arg, 1000);
		if (p <= 0)
			return usage_error("bad idle timeout '%s' (a period: 10ms, 5s; bare number: ms)",
					   arg);
		mon->idle_us = (uint64_t)p;
		return 1;
	case 'F':
		/* "text" and "json" kept their meaning from before -F took gpiomon's formats. */
		if (strcmp(arg, "json") == 0)
			mon->json = true;
		else if (strcmp(arg, "text") != 0)
			mon->format = arg;
		return 1;
	case OPT_JSON:
		mon->json = true;
		return 1;
	case 'q':
		mon->quiet = true;
		return 1;
	case OPT_UNQUOTED:
		mon->unquoted = true;
		return 1;
	case OPT_UTC:
		mon->time_spec = 'U';
		return 1;
	case OPT_LOCALTIME:
		mon->time_spec = 'L';
		return 1;
	case 's':
		return refuse_opt("-s/--strict", "the broker resolves every line reference to one line");
	case OPT_BANNER:
		return refuse_opt("--banner", "the first rows (each line's level) show the lines are "
				  "monitored");
	default:
		return 0;
	}
}

#define OUTPUT_OPTS                                                   \
	{ "num-events", required_argument, NULL, 'n' },               \
	{ "count", required_argument, NULL, 'n' },                    \
	{ "timeout", required_argument, NULL, 't' },                  \
	{ "idle-timeout", required_argument, NULL, OPT_IDLE },        \
	{ "format", required_argument, NULL, 'F' },                   \
	{ "json", no_argument, NULL, OPT_JSON },                      \
	{ "quiet", no_argument, NULL, 'q' },                          \
	{ "unquoted", no_argument, NULL, OPT_UNQUOTED },              \
	{ "utc", no_argument, NULL, OPT_UTC },                        \
	{ "localtime", no_argument, NULL, OPT_LOCALTIME },            \
	{ "strict", no_argument, NULL, 's' },                         \
	{ "banner", no_argument, NULL, OPT_BANNER },                  \
	{ "chip", required_argument, NULL, 'c' },                     \
	{ "by-name", no_argument, NULL, OPT_BY_NAME },                \
	{ "help", no_argument, NULL, 'h' }

#define OUTPUT_HELP \
	"  -n, --num-events N       exit after N events (--count is the same)\n" \
	"  -t, --timeout P          exit (code 0) after P (5s, 500ms; bare number: seconds)\n" \
	"      --idle-timeout P     exit (code 0) after P without events (bare number: ms)\n" \
	"  -F, --format FORMAT      gpiomon's: %o offset, %l line name, %c chip, %e 1 rising\n" \
	"                           2 falling, %E edge, %S seconds, %U UTC, %L local time,\n" \
	"                           %% percent (levels are not printed)\n" \
	"      --json               one JSON object per line (-F json is the same)\n" \
	"  -q, --quiet              print nothing\n" \
	"      --utc, --localtime   timestamps as UTC or local time\n" \
	"  -c, --chip CHIP          LINEs on this chip; bare numbers are offsets\n"

const char usage_monitor[] =
	"gpiobrokerctl monitor [-n N] [-t P] [--idle-timeout P] [-F FORMAT] [--json] [SETTINGS] "
	"LINE...|ID|PATH";
const char help_monitor[] =
	"Print edge events of lines, one line per event, as gpiomon, until interrupted,\n"
	"N events or a timeout (exit code 0). The lines are requested as inputs with edge\n"
	"detection (default --edges both), released as this command exits. A persistent\n"
	"request (ID or PATH) is subscribed to instead.\n"
	"First, each line's level: SECONDS.NANOSECONDS initial LINE CHIP:OFFSET value=V\n"
	"(not counted in N). Then edges: SECONDS.NANOSECONDS EDGE LINE CHIP:OFFSET seqno=N\n"
	"(and \"# N event(s) lost\" lines). JSON: one object per line with timestamp_ns,\n"
	"edge (\"initial\" with value), line, chip, offset, index, seqno, global_seqno,\n"
	"line_seqno, lost.\n" OUTPUT_HELP
	"  -C, --consumer NAME      consumer name (default: gpiobrokerctl-monitor);\n"
	"                           --label is the same\n" SETTINGS_HELP;

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		OUTPUT_OPTS,
		{ "consumer", required_argument, NULL, 'C' },
		{ "label", required_argument, NULL, 'C' },
		SETTINGS_OPTS,
		{ 0 }
	};
	struct gpiobroker_line_settings base, *s = NULL;
	struct monitor mon = { .status = EX_OK, .time_spec = 'S' };
	struct gpiobroker_request *req = NULL;
	const char *label = "gpiobrokerctl-monitor", *chip_arg = NULL;
	bool by_name = false;
	uint64_t timeout = 0;
	char *ref;
	int c, r, n;

	gpiobroker_line_settings_init(&base);
	base.direction = GPIOBROKER_DIRECTION_INPUT;
	base.edge = GPIOBROKER_EDGE_BOTH;
	while ((c = getopt_long(argc, argv, "+:n:t:F:qsc:C:" SETTINGS_LETTERS, opts, NULL)) != -1) {
		if (c == 'C') {
			label = optarg;
			continue;
		}
		if (c == 'c') {
			chip_arg = optarg;
			continue;
		}
		if (c == OPT_BY_NAME) {
			by_name = true;
			continue;
		}
		if (c == 'o')
			return usage_error("monitor requests inputs: -o/--output does not apply");
		if ((r = output_opt(c, optarg, &mon, &timeout)) == 1)
			continue;
		if (r)
			return r;
		if ((r = settings_opt(c, optarg, &base, NULL)) != 1)
			return r ? r : opt_error(c, argv, opts);
	}
	n = argc - optind;
	if (n < 1)
		return usage_error("no LINE given");
	if (chip_arg && (r = chip_scope_lines(chip_arg, by_name, n, argv + optind)))
		return r;
	if (mon.format && load_tree(&mon.t, true) < 0)
		memset(&mon.t, 0, sizeof(mon.t));
	if (!chip_arg && (ref = request_ref(argv[optind]))) {
		if (n != 1) {
			free(ref);
			return usage_error("one request (ID or PATH) only");
		}
		req = gpiobroker_request_open(B, ref);
		r = -errno;
		free(ref);
		if (!req)
			return fail(argv[optind], r);
	} else {
		s = calloc(n, sizeof(*s));
		if (!s)
			return EX_ERROR;
		for (int i = 0; i < n; i++)
			s[i] = base;
		req = gpiobroker_request_array(B, n, (const char *const *)argv + optind, s, label, 0);
		r = -errno;
		free(s);
		if (!req)
			return n == 1 ? fail_line(argv[optind], r) : fail("monitor", r);
		mon.names = argv + optind;
	}
	if (monitor_loop_new(&mon, timeout) < 0) {
		mon.status = EX_ERROR;
		goto out;
	}
	r = gpiobroker_to_irq_flags(req, on_irq, &mon, GPIOBROKER_IRQ_INITIAL_STATE);
	if (r < 0) {
		mon.status = fail("monitor", r);
		goto out;
	}
	r = sd_event_loop(mon.loop);
	if (r < 0) {
		fprintf(stderr, "gpiobrokerctl: monitor: %s\n", strerror(-r));
		mon.status = EX_ERROR;
	}
out:
	gpiobroker_detach_event(B);
	if (mon.names)
		gpiobroker_free(req);
	else
		gpiobroker_request_close(req); /* a persistent request stays */
	sd_event_source_unref(mon.idle);
	sd_event_unref(mon.loop);
	tree_free(&mon.t);
	return mon.status;
}

/* --- watch ------------------------------------------------------------------------- */

static void on_watch_event(struct gpiobroker_watch *w, const struct gpiobroker_event *ev,
			   void *userdata)
{
	struct monitor *mon = userdata;
	int i;

	for (i = 0; i < mon->n_watches && mon->watches[i] != w; i++)
		;
	print_event(mon, ev, i < mon->n_watches ? mon->watch_names[i] : NULL,
		    gpiobroker_watch_get_chip(w), 0, short_id(gpiobroker_watch_get_path(w)));
}

const char usage_watch[] = "gpiobrokerctl watch [-n N] [-t P] [--idle-timeout P] [-F FORMAT] [--json] LINE...";
const char help_watch[] =
	"Watch lines without requesting them: their level, then every edge, while\n"
	"others hold them (they see what the holder's settings detect) or nobody does\n"
	"(then the broker watches both edges until someone requests the line). Needs\n"
	"the policy's watch-users or watch-groups. Output as monitor (index 0; JSON adds\n"
	"the watch's id).\n" OUTPUT_HELP;

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = { OUTPUT_OPTS, { 0 } };
	struct monitor mon = { .status = EX_OK, .time_spec = 'S' };
	const char *chip_arg = NULL;
	bool by_name = false;
	uint64_t timeout = 0;
	int c, r, n;

	while ((c = getopt_long(argc, argv, "+:n:t:F:qsc:", opts, NULL)) != -1) {
		if (c == 'c') {
			chip_arg = optarg;
			continue;
		}
		if (c == OPT_BY_NAME) {
			by_name = true;
			continue;
		}
		if ((r = output_opt(c, optarg, &mon, &timeout)) == 1)
			continue;
		return r ? r : opt_error(c, argv, opts);
	}
	n = argc - optind;
	if (n < 1)
		return usage_error("no LINE given");
	if (chip_arg && (r = chip_scope_lines(chip_arg, by_name, n, argv + optind)))
		return r;
	if (mon.format && load_tree(&mon.t, true) < 0)
		memset(&mon.t, 0, sizeof(mon.t));
	mon.watches = calloc(n, sizeof(*mon.watches));
	if (!mon.watches)
		return EX_ERROR;
	mon.watch_names = argv + optind;
	if (monitor_loop_new(&mon, timeout) < 0) {
		mon.status = EX_ERROR;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		mon.watches[i] = gpiobroker_watch(B, argv[optind + i], on_watch_event, &mon);
		if (!mon.watches[i]) {
			mon.status = fail_line(argv[optind + i], -errno);
			goto out;
		}
		mon.n_watches = i + 1;
	}
	r = sd_event_loop(mon.loop);
	if (r < 0) {
		fprintf(stderr, "gpiobrokerctl: watch: %s\n", strerror(-r));
		mon.status = EX_ERROR;
	}
out:
	for (int i = 0; i < mon.n_watches; i++)
		gpiobroker_watch_close(mon.watches[i]);
	gpiobroker_detach_event(B);
	free(mon.watches);
	sd_event_source_unref(mon.idle);
	sd_event_unref(mon.loop);
	tree_free(&mon.t);
	return mon.status;
}

/* --- wait -------------------------------------------------------------------------- */

static int on_owner(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	const char *name, *old, *new;

	if (sd_bus_message_read(m, "sss", &name, &old, &new) >= 0 && *new)
		*(int *)userdata = 1;
	return 0;
}

const char usage_wait[] = "gpiobrokerctl wait [--timeout P]";
const char help_wait[] =
	"Wait until the broker is on the bus (exit code 0), at most P (then exit code 6;\n"
	"default: forever).\n"
	"  -t, --timeout P          give up after P (5s, 500ms; bare number: seconds)\n";

int cmd_wait(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	sd_bus *bus = gpiobroker_get_bus(B);
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus_slot *slot = NULL;
	int64_t timeout = -1;
	uint64_t deadline = UINT64_MAX;
	struct timespec ts;
	int c, r, has = 0;

	while ((c = getopt_long(argc, argv, "+:t:", opts, NULL)) != -1) {
		if (c != 't')
			return opt_error(c, argv, opts);
		timeout = parse_period(optarg, 1000000);
		if (timeout < 0)
			return usage_error("bad timeout '%s' (a period: 5s, 500ms; bare number: seconds)",
					   optarg);
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (timeout >= 0)
		deadline = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + (uint64_t)timeout;
	/* Match first, then ask: an owner appearing in between is seen either way. */
	r = sd_bus_add_match(bus, &slot,
			     "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
			     "arg0='" GB_BUS_NAME "'", on_owner, &has);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
				       "org.freedesktop.DBus", "NameHasOwner", &e, &reply, "s", GB_BUS_NAME);
	if (r >= 0 && !has)
		r = sd_bus_message_read(reply, "b", &has);
	while (r >= 0 && !has) {
		uint64_t now;

		r = sd_bus_process(bus, NULL);
		if (r != 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		if (now >= deadline)
			break;
		r = sd_bus_wait(bus, deadline == UINT64_MAX ? UINT64_MAX : deadline - now);
	}
	sd_bus_message_unref(reply);
	sd_bus_slot_unref(slot);
	if (r < 0) {
		fprintf(stderr, "gpiobrokerctl: wait: %s\n", e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
		return EX_ERROR;
	}
	if (!has) {
		fprintf(stderr, "gpiobrokerctl: wait: gpiod-broker did not appear within %gs\n",
			(double)timeout / 1e6);
		return EX_TIMEOUT;
	}
	return EX_OK;
}
