/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl notify: line-info changes (requested, released, reconfigured), as
 * gpionotify, from the broker's PropertiesChanged signals on its Line objects. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"

enum { NE_REQUESTED = 1, NE_RELEASED = 2, NE_RECONFIGURED = 3 };
static const char *const ne_names[] = { "", "requested", "released", "reconfigured" };

struct notify_cfg {
	struct line_opts lines;
	const char *format;
	bool json, unquoted, quiet;
	unsigned int events; /* bit per event type wanted */
	unsigned long count;
	uint64_t idle_us;
};

struct notify {
	const struct notify_cfg *cfg;
	struct resolver *res;
	struct evloop ev;
	unsigned long left;
	int status;
};

/* One change to print: the line as it is now, what happened, when. */
struct notify_event {
	const struct notify *nf;
	const struct lineinfo *line;
	const struct chipinfo *chip;
	int type;
	uint64_t ns; /* CLOCK_MONOTONIC */
};

const char usage_notify[] =
	"gpiobrokerctl notify [-e EVENT] [-n N] [--idle-timeout P] [-F FORMAT] [-c CHIP] [LINE]...";
const char help_notify[] =
	"Print changes of line info (requested, released, reconfigured) as gpionotify does,\n"
	"for the LINEs (default: every line the broker serves), from the broker's\n"
	"PropertiesChanged signals. Default row: SECONDS.NANOSECONDS EVENT LINE ATTRIBUTES.\n"
	"  -e, --event EVENT        requested, released or reconfigured (repeatable;\n"
	"                           default: all)\n"
	"  -n, --num-events N       exit after N events\n"
	"      --idle-timeout P     exit (code 0) after P without events (10ms, 5s;\n"
	"                           bare number: ms)\n"
	"  -F, --format FORMAT      %o offset, %l name, %c chip, %e event number (1\n"
	"                           requested, 2 released, 3 reconfigured), %E event, %a\n"
	"                           attributes, %C consumer, %S seconds, %U UTC, %L local\n"
	"                           time, %% a percent sign\n"
	"  -c, --chip CHIP          LINEs on this chip (offsets allowed)\n"
	"      --unquoted           don't quote names\n"
	"  -q, --quiet              print nothing\n"
	"      --json               one JSON object per line\n";

/* -e EVENT: 1, or EX_USAGE (reported). */
static int event_opt(const char *arg, unsigned int *events)
{
	int v = pick(arg, ne_names + 1, 3);

	if (v < 0)
		return usage_error("bad event '%s' (allowed: requested, released, reconfigured)", arg);
	*events |= 1u << (v + 1);
	return 1;
}

static int notify_options(int argc, char **argv, struct notify_cfg *cfg)
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' }, { "num-events", required_argument, NULL, 'n' },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE },
		{ "format", required_argument, NULL, 'F' }, { "chip", required_argument, NULL, 'c' },
		{ "by-name", no_argument, NULL, OPT_BY_NAME }, { "unquoted", no_argument, NULL, OPT_UNQUOTED },
		{ "quiet", no_argument, NULL, 'q' }, { "json", no_argument, NULL, OPT_JSON },
		{ "strict", no_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "+:e:n:F:c:qs", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			r = event_opt(optarg, &cfg->events);
			break;
		case 'n':
			r = count_opt(optarg, &cfg->count);
			break;
		case OPT_IDLE:
			r = idle_opt(optarg, &cfg->idle_us);
			break;
		case 'F':
			cfg->format = optarg;
			continue;
		case OPT_UNQUOTED:
			cfg->unquoted = true;
			continue;
		case 'q':
			cfg->quiet = true;
			continue;
		case OPT_JSON:
			cfg->json = true;
			continue;
		case 's':
			return refuse_strict();
		default:
			r = line_opt(c, optarg, &cfg->lines);
		}
		if (r != 1)
			return r ? r : opt_error(c, argv, opts);
	}
	if (!cfg->events)
		cfg->events = 1u << NE_REQUESTED | 1u << NE_RELEASED | 1u << NE_RECONFIGURED;
	return 0;
}

/* Whether a line is one followed: a LINE given, on -c's chip, or any. */
static bool notify_follows(const struct notify *nf, const struct lineinfo *l)
{
	const struct resolver *res = nf->res;

	for (int i = 0; i < res->num_lines; i++)
		if (strcmp(res->lines[i].path, l->path) == 0)
			return true;
	if (res->num_lines)
		return false;
	return !res->chip || (l->chip && strcmp(l->chip, res->chip->path) == 0);
}

static json_t *notify_json(const struct notify_event *ne)
{
	const struct lineinfo *l = ne->line;

	return json_pack("{s:o,s:s,s:o,s:o,s:o,s:I,s:o,s:o}", "timestamp_ns", ju64(ne->ns), "event",
			 ne_names[ne->type], "line", jstr_or_null(l->name), "alias",
			 jstr_or_null(l->alias), "chip", jstr(ne->chip ? ne->chip->name : ""),
			 "offset", (json_int_t)l->offset, "consumer",
			 jstr_or_null(l->used ? l->consumer : NULL), "request",
			 l->used && line_is_held(l) ? jstr(short_id(l->request)) : json_null());
}

/* gpionotify's specifiers. */
static bool notify_spec(char c, void *userdata)
{
	const struct notify_event *ne = userdata;
	const struct lineinfo *l = ne->line;

	switch (c) {
	case 'o': printf("%" PRIu32, l->offset); break;
	case 'l': printf("%s", l->name && *l->name ? l->name : "unnamed"); break;
	case 'c': printf("%s", ne->chip ? ne->chip->name : "?"); break;
	case 'e': printf("%d", ne->type); break;
	case 'E': printf("%s", ne_names[ne->type]); break;
	case 'a': print_attrs(l, ne->nf->cfg->unquoted); break;
	case 'C': printf("%s", l->used && l->consumer && *l->consumer ? l->consumer : "unused"); break;
	case 'S': print_ts(ne->ns, 'S'); break;
	case 'U': case 'L': print_ts(monotonic_to_realtime(ne->ns), c); break;
	default: return false;
	}
	return true;
}

static void notify_text(const struct notify_event *ne)
{
	const struct lineinfo *l = ne->line;
	bool unquoted = ne->nf->cfg->unquoted;

	print_ts(ne->ns, 'S');
	printf("\t%s\t", ne_names[ne->type]);
	if (l->name && *l->name)
		print_quoted(l->name, unquoted);
	else
		printf("%s %" PRIu32, ne->chip ? ne->chip->name : "?", l->offset);
	if (ne->type != NE_RELEASED) {
		printf("\t");
		print_attrs(l, unquoted);
	}
	printf("\n");
}

static void on_line_change(const struct line_change *c, void *userdata)
{
	struct notify *nf = userdata;
	struct notify_event ne = { nf, c->line };
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ne.ns = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	if (c->used == 1 && !c->was_used)
		ne.type = NE_REQUESTED;
	else if (c->used == 0 && c->was_used)
		ne.type = NE_RELEASED;
	else if (c->settings && c->line->used && c->was_used)
		ne.type = NE_RECONFIGURED;
	if (!ne.type || !(nf->cfg->events & (1u << ne.type)) || !notify_follows(nf, c->line))
		return;
	evloop_kick(&nf->ev);
	ne.chip = tree_chip_by_path(&nf->res->tree, c->line->chip);
	if (nf->cfg->quiet) {
		/* counted, not shown */
	} else if (nf->cfg->json) {
		if (json_print(notify_json(&ne)))
			nf->status = EX_ERROR;
	} else if (nf->cfg->format) {
		print_format(nf->cfg->format, notify_spec, &ne);
	} else {
		notify_text(&ne);
	}
	fflush(stdout);
	if (nf->left && --nf->left == 0)
		evloop_exit(&nf->ev);
}

int cmd_notify(int argc, char **argv)
{
	struct notify_cfg cfg = { 0 };
	struct notify nf = { .cfg = &cfg, .status = EX_OK };
	struct line_follow *follow = NULL;
	int r;

	if ((r = notify_options(argc, argv, &cfg)))
		return r;
	nf.left = cfg.count;
	r = resolve_lines(argc - optind, argv + optind, &cfg.lines, 0, &nf.res);
	if (!r && (r = resolver_load_tree(nf.res, false)) < 0)
		r = exit_of(r);
	if (!r && evloop_new(&nf.ev, 0, cfg.idle_us) < 0)
		r = EX_ERROR;
	if (!r && !(follow = bus_follow_lines(nf.ev.loop, &nf.res->tree, on_line_change, &nf))) {
		fprintf(stderr, "gpiobrokerctl: notify: %s\n", strerror(errno));
		r = EX_ERROR;
	}
	if (!r)
		r = evloop_exit_code(evloop_run(&nf.ev), nf.status);
	line_follow_free(follow);
	evloop_free(&nf.ev);
	resolver_free(nf.res);
	return r;
}
