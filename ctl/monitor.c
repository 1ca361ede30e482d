/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: monitor, watch (edge events), wait (for the broker). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* What monitor and watch print, and for how long. */
struct output_cfg {
	struct line_opts lines;
	bool json, quiet, unquoted;
	const char *format;   /* -F: gpiomon's specifiers */
	char time_spec;       /* 'S' raw seconds, 'U' UTC, 'L' local time */
	unsigned long count;  /* 0: forever */
	uint64_t timeout_us, idle_us;
};

struct monitor {
	const struct output_cfg *cfg;
	struct evloop ev;
	struct resolver *res;
	bool named;           /* the lines were requested here: res names them */
	unsigned long left;
	int status;
	struct gpiobroker_watch **watches;
	int n_watches;
	const char **homes;   /* watch: each line's chip identity (a by-id/by-path link), or NULL */
};

/* One event's line: how the user named it, its chip, its index (and watch's id). */
struct event_line {
	const char *name, *chip, *watch;
	unsigned int index;
};

/* --- printing an event --------------------------------------------------------------- */

static json_t *event_json(const struct gpiobroker_event *ev, const struct event_line *el,
			  const char *edge)
{
	json_t *o = json_pack("{s:o,s:s,s:o,s:o,s:I,s:I}", "timestamp_ns",
			      ju64(gpiobroker_event_get_timestamp_ns(ev)), "edge", edge, "line",
			      jstr_or_null(el->name), "chip", jstr(el->chip), "offset",
			      (json_int_t)gpiobroker_event_get_offset(ev), "index",
			      (json_int_t)el->index);

	if (el->watch)
		jput(&o, "watch", jstr(el->watch));
	jput(&o, "seqno", ju64(gpiobroker_event_get_seqno(ev)));
	if (gpiobroker_event_is_initial(ev)) {
		jput(&o, "value", json_integer(gpiobroker_event_get_value(ev)));
	} else {
		jput(&o, "global_seqno", ju64(gpiobroker_event_get_global_seqno(ev)));
		jput(&o, "line_seqno", ju64(gpiobroker_event_get_line_seqno(ev)));
		jput(&o, "lost", ju64(gpiobroker_event_get_lost(ev)));
	}
	return o;
}

struct format_event {
	struct monitor *mon;
	const struct gpiobroker_event *ev;
	const struct event_line *el;
	const char *edge;
};

/* gpiomon's specifiers. */
static bool event_spec(char c, void *userdata)
{
	const struct format_event *fe = userdata;
	unsigned int off = gpiobroker_event_get_offset(fe->ev);
	const struct lineinfo *l;

	switch (c) {
	case 'o':
		printf("%u", off);
		return true;
	case 'l':
		l = tree_line_at(&fe->mon->res->tree, fe->el->chip, off);
		printf("%s", l && l->name && *l->name ? l->name : "unnamed");
		return true;
	case 'c':
		printf("%s", fe->el->chip ? fe->el->chip : "?");
		return true;
	case 'e':
		printf("%d", fe->edge[0] == 'r' ? 1 : 2);
		return true;
	case 'E':
		printf("%s", fe->edge);
		return true;
	case 'S':
	case 'U':
	case 'L':
		print_ts(gpiobroker_event_get_timestamp_ns(fe->ev), c);
		return true;
	default:
		return false;
	}
}

static void event_text(const struct monitor *mon, const struct gpiobroker_event *ev,
		       const struct event_line *el, const char *edge)
{
	bool initial = gpiobroker_event_is_initial(ev);

	if (!initial && gpiobroker_event_get_lost(ev))
		printf("# %" PRIu64 " event(s) lost\n", gpiobroker_event_get_lost(ev));
	print_ts(gpiobroker_event_get_timestamp_ns(ev), mon->cfg->time_spec);
	printf("\t%s\t%s\t%s:%u\t", edge, el->name ? el->name : "-", el->chip ? el->chip : "?",
	       gpiobroker_event_get_offset(ev));
	if (initial)
		printf("value=%d\n", gpiobroker_event_get_value(ev));
	else
		printf("seqno=%" PRIu64 "\n", gpiobroker_event_get_seqno(ev));
}

/* The chip gone, the request revoked, the broker gone: said, and the end. */
static void event_end(struct monitor *mon, const struct gpiobroker_event *ev)
{
	enum gpiobroker_event_type type = gpiobroker_event_get_type(ev);
	const char *detail = gpiobroker_event_get_detail(ev);

	/* The link went: the loop ends and says so itself (evloop_run()). */
	if (type == GPIOBROKER_EVENT_BROKER_GONE && detail) {
		evloop_exit(&mon->ev);
		return;
	}
	if (type == GPIOBROKER_EVENT_CHIP_GONE)
		fprintf(stderr, "gpiobrokerctl: %s: chip %s was unplugged\n", cur_cmd, detail);
	else if (type == GPIOBROKER_EVENT_REVOKED)
		fprintf(stderr, "gpiobrokerctl: %s: request revoked: %s\n", cur_cmd, detail);
	else
		fprintf(stderr, "gpiobrokerctl: %s: gpiod-broker left the bus\n", cur_cmd);
	mon->status = EX_ERROR;
	evloop_exit(&mon->ev);
}

/* One event in the chosen form; the initial state is a row of its own, not counted. */
static void print_event(struct monitor *mon, const struct gpiobroker_event *ev,
			const struct event_line *el)
{
	bool initial = gpiobroker_event_is_initial(ev);
	const char *edge;

	if (gpiobroker_event_get_type(ev) != GPIOBROKER_EVENT_EDGE && !initial) {
		event_end(mon, ev);
		return;
	}
	if (!initial)
		evloop_kick(&mon->ev);
	edge = initial ? "initial" :
	       gpiobroker_event_get_edge(ev) == GPIOBROKER_EDGE_RISING ? "rising" : "falling";
	if (mon->cfg->quiet) {
		/* counted only */
	} else if (mon->cfg->json) {
		if (json_print(event_json(ev, el, edge)))
			mon->status = EX_ERROR;
	} else if (mon->cfg->format && !initial) { /* gpiomon's formats have edges only */
		struct format_event fe = { mon, ev, el, edge };

		print_format(mon->cfg->format, event_spec, &fe);
	} else if (!mon->cfg->format) {
		event_text(mon, ev, el, edge);
	}
	fflush(stdout);
	if (!initial && mon->left && --mon->left == 0)
		evloop_exit(&mon->ev);
}

/* --- options monitor and watch share ---------------------------------------------------- */

/* 1 if @c was one, 0 if not, else an exit code. */
static int output_opt(int c, const char *arg, struct output_cfg *cfg)
{
	int64_t p;

	if (line_opt(c, arg, &cfg->lines))
		return 1;
	switch (c) {
	case 'n':
		return count_opt(arg, &cfg->count);
	case 't':
		/* A bare number is seconds here (gpiobrokerctl's own option since 1.0). */
		p = parse_period(arg, 1000000);
		if (p <= 0)
			return usage_error("bad timeout '%s' (a period: 5s, 500ms; bare number: seconds)",
					   arg);
		cfg->timeout_us = (uint64_t)p;
		return 1;
	case OPT_IDLE:
		return idle_opt(arg, &cfg->idle_us);
	case 'F':
		/* "text" and "json" kept their meaning from before -F took gpiomon's formats. */
		if (strcmp(arg, "json") == 0)
			cfg->json = true;
		else if (strcmp(arg, "text") != 0)
			cfg->format = arg;
		return 1;
	case OPT_JSON:
		cfg->json = true;
		return 1;
	case 'q':
		cfg->quiet = true;
		return 1;
	case OPT_UNQUOTED:
		cfg->unquoted = true;
		return 1;
	case OPT_UTC:
	case OPT_LOCALTIME:
		cfg->time_spec = c == OPT_UTC ? 'U' : 'L';
		return 1;
	case 's':
		return refuse_strict();
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

/* The loop both run in; 0 or an exit code. The tree is read for -F's %l. */
static int monitor_start(struct monitor *mon, const struct output_cfg *cfg)
{
	mon->cfg = cfg;
	mon->left = cfg->count;
	if (cfg->format)
		resolver_load_tree(mon->res, true);
	if (evloop_new(&mon->ev, cfg->timeout_us, cfg->idle_us) < 0 ||
	    gpiobroker_attach_event(B, mon->ev.loop, 0) < 0)
		return EX_ERROR;
	return 0;
}

static void monitor_stop(struct monitor *mon)
{
	gpiobroker_detach_event(B);
	evloop_free(&mon->ev);
	resolver_free(mon->res);
}

/* --- monitor ---------------------------------------------------------------------------- */

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

struct monitor_cfg {
	struct output_cfg out;
	struct gpiobroker_line_settings base;
	const char *label;
};

static int monitor_options(int argc, char **argv, struct monitor_cfg *cfg)
{
	static const struct option opts[] = {
		OUTPUT_OPTS,
		{ "consumer", required_argument, NULL, 'C' },
		{ "label", required_argument, NULL, 'C' },
		SETTINGS_OPTS,
		{ 0 }
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "+:n:t:F:qsc:C:" SETTINGS_LETTERS, opts, NULL)) != -1) {
		if (c == 'C') {
			cfg->label = optarg;
			continue;
		}
		if (c == 'o')
			return usage_error("monitor requests inputs: -o/--output does not apply");
		r = output_opt(c, optarg, &cfg->out);
		if (r == 0)
			r = settings_opt(c, optarg, &cfg->base, NULL);
		if (r != 1)
			return r ? r : opt_error(c, argv, opts);
	}
	if (optind >= argc)
		return usage_error("no LINE given");
	for (int i = optind; !cfg->out.lines.chip_id && argc - optind > 1 && i < argc; i++) {
		char *ref = request_ref(argv[i]);

		free(ref);
		if (ref)
			return usage_error("one request (ID or PATH) only");
	}
	return 0;
}

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct monitor *mon = userdata;
	unsigned int idx = gpiobroker_event_get_index(ev);
	struct event_line el = {
		.name = mon->named && idx < (unsigned int)mon->res->num_lines ? mon->res->lines[idx].ref
									       : NULL,
		.chip = gpiobroker_request_get_chip(req, idx), .index = idx,
	};

	print_event(mon, ev, &el);
}

/* The lines requested as inputs here, or the persistent request subscribed to. */
static int monitor_request(const struct monitor_cfg *cfg, struct monitor *mon,
			   struct gpiobroker_request **req)
{
	struct resolver *res = mon->res;
	struct gpiobroker_line_settings *s;
	const char **refs;
	int r = 0;

	if (res->lines[0].request) {
		*req = gpiobroker_request_open(B, res->lines[0].request);
		return *req ? 0 : fail(res->lines[0].id, -errno);
	}
	s = calloc((size_t)res->num_lines, sizeof(*s));
	refs = calloc((size_t)res->num_lines, sizeof(*refs));
	if (!s || !refs) {
		r = EX_ERROR;
		goto out;
	}
	for (int i = 0; i < res->num_lines; i++) {
		s[i] = cfg->base;
		refs[i] = res->lines[i].ref;
	}
	*req = gpiobroker_request_array(B, (size_t)res->num_lines, refs, s, cfg->label, 0);
	if (!*req)
		r = res->num_lines == 1 ? fail_line(refs[0], -errno) : fail("monitor", -errno);
	mon->named = *req != NULL;
out:
	free(s);
	free(refs);
	return r;
}

int cmd_monitor(int argc, char **argv)
{
	struct monitor_cfg cfg = { .out.time_spec = 'S', .label = "gpiobrokerctl-monitor" };
	struct monitor mon = { .status = EX_OK };
	struct gpiobroker_request *req = NULL;
	int r;

	gpiobroker_line_settings_init(&cfg.base);
	cfg.base.direction = GPIOBROKER_DIRECTION_INPUT;
	cfg.base.edge = GPIOBROKER_EDGE_BOTH;
	if ((r = monitor_options(argc, argv, &cfg)))
		return r;
	r = resolve_lines(argc - optind, argv + optind, &cfg.out.lines, RESOLVE_REQUESTS, &mon.res);
	if (!r)
		r = monitor_request(&cfg, &mon, &req);
	if (!r)
		r = monitor_start(&mon, &cfg.out);
	if (!r && (r = gpiobroker_to_irq_flags(req, on_irq, &mon, GPIOBROKER_IRQ_INITIAL_STATE)) < 0)
		r = fail("monitor", r);
	if (!r)
		r = evloop_exit_code(evloop_run(&mon.ev), mon.status);
	if (mon.named)
		gpiobroker_free(req);
	else
		gpiobroker_request_close(req); /* a persistent request stays */
	monitor_stop(&mon);
	return r;
}

/* --- watch ------------------------------------------------------------------------- */

const char usage_watch[] = "gpiobrokerctl watch [-n N] [-t P] [--idle-timeout P] [-F FORMAT] [--json] LINE...";
const char help_watch[] =
	"Watch lines without requesting them: their level, then every edge, while\n"
	"others hold them (they see what the holder's settings detect) or nobody does\n"
	"(then the broker watches both edges until someone requests the line). Needs\n"
	"the policy's watch-users or watch-groups. Output as monitor (index 0; JSON adds\n"
	"the watch's id).\n" OUTPUT_HELP;

static void on_watch_event(struct gpiobroker_watch *w, const struct gpiobroker_event *ev,
			   void *userdata)
{
	struct monitor *mon = userdata;
	struct event_line el = {
		.chip = gpiobroker_watch_get_chip(w), .watch = short_id(gpiobroker_watch_get_path(w)),
	};

	enum gpiobroker_event_type type = gpiobroker_event_get_type(ev);
	const char *home = NULL;

	for (int i = 0; i < mon->n_watches; i++)
		if (mon->watches[i] == w) {
			el.name = mon->res->lines[i].ref;
			home = mon->homes ? mon->homes[i] : NULL;
		}
	/* A chip the broker knows by identity may come back: the watch stays, and so
	 * does this command, as it would stay for a line nobody holds. */
	if (type == GPIOBROKER_EVENT_CHIP_GONE && home) {
		fprintf(stderr, "gpiobrokerctl: watch: chip %s was unplugged; waiting for %s to "
			"come back\n", gpiobroker_event_get_detail(ev), home);
		return;
	}
	if (type == GPIOBROKER_EVENT_CHIP_BACK) {
		fprintf(stderr, "gpiobrokerctl: watch: %s is back, as %s\n", home ? home : "the chip",
			gpiobroker_event_get_detail(ev));
		return;
	}
	print_event(mon, ev, &el);
}

/* Each watched line's chip identity, to wait for it if it is unplugged. */
static void watch_homes(struct monitor *mon)
{
	int n = mon->res->num_lines;

	if (resolver_load_tree(mon->res, true) < 0 || !(mon->homes = calloc((size_t)n, sizeof(char *))))
		return;
	for (int i = 0; i < n; i++)
		for (size_t k = 0; mon->res->lines[i].chip && k < mon->res->tree.n_chips; k++) {
			const struct chipinfo *c = &mon->res->tree.chips[k];

			if (strcmp(c->name, mon->res->lines[i].chip) == 0)
				mon->homes[i] = *c->by_id ? c->by_id : *c->by_path ? c->by_path : NULL;
		}
}

static int watch_options(int argc, char **argv, struct output_cfg *cfg)
{
	static const struct option opts[] = { OUTPUT_OPTS, { 0 } };
	int c, r;

	while ((c = getopt_long(argc, argv, "+:n:t:F:qsc:", opts, NULL)) != -1)
		if ((r = output_opt(c, optarg, cfg)) != 1)
			return r ? r : opt_error(c, argv, opts);
	if (optind >= argc)
		return usage_error("no LINE given");
	return 0;
}

static int watch_act(struct monitor *mon)
{
	int n = mon->res->num_lines;

	mon->watches = calloc((size_t)n, sizeof(*mon->watches));
	if (!mon->watches)
		return EX_ERROR;
	watch_homes(mon);
	for (int i = 0; i < n; i++) {
		mon->watches[i] = gpiobroker_watch(B, mon->res->lines[i].ref, on_watch_event, mon);
		if (!mon->watches[i])
			return fail_line(mon->res->lines[i].ref, -errno);
		mon->n_watches = i + 1;
	}
	return evloop_exit_code(evloop_run(&mon->ev), mon->status);
}

int cmd_watch(int argc, char **argv)
{
	struct output_cfg cfg = { .time_spec = 'S' };
	struct monitor mon = { .status = EX_OK };
	int r;

	if ((r = watch_options(argc, argv, &cfg)))
		return r;
	r = resolve_lines(argc - optind, argv + optind, &cfg.lines, 0, &mon.res);
	if (!r)
		r = monitor_start(&mon, &cfg);
	if (!r)
		r = watch_act(&mon);
	for (int i = 0; i < mon.n_watches; i++)
		gpiobroker_watch_close(mon.watches[i]);
	free(mon.watches);
	free(mon.homes);
	monitor_stop(&mon);
	return r;
}

/* --- wait -------------------------------------------------------------------------- */

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
	int64_t timeout = -1;
	int c, r;

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
	r = bus_wait_broker(timeout);
	if (r < 0)
		return EX_ERROR;
	if (!r) {
		fprintf(stderr, "gpiobrokerctl: wait: gpiod-broker did not appear within %gs\n",
			(double)timeout / 1e6);
		return EX_TIMEOUT;
	}
	return EX_OK;
}
