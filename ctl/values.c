/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: get and set, the values of lines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

static void sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A line and, if one of the caller's persistent requests holds it (the only kind a
 * command can come back to), that request and the line's index in it. */
struct held {
	struct lineinfo info;
	struct gpiobroker_request *req;
	unsigned int index;
};

static void held_clear(struct held *h)
{
	lineinfo_clear(&h->info);
	gpiobroker_request_close(h->req);
	memset(h, 0, sizeof(*h));
}

/* 0 (h->req NULL if the line is free or held otherwise: then it is requested, and
 * the broker says Busy if it is held), or -errno. */
static int held_read(const struct resolved_line *rl, struct held *h)
{
	uint32_t uid = 0;
	int r;

	memset(h, 0, sizeof(*h));
	r = bus_read_line(rl->path, &h->info);
	if (r >= 0 && line_is_held(&h->info))
		r = bus_request_owner(h->info.request, &uid);
	if (r < 0 || !line_is_held(&h->info) || uid != caller_uid())
		return r < 0 ? r : 0;
	h->req = gpiobroker_request_open(B, h->info.request);
	if (h->req && !gpiobroker_request_is_persistent(h->req)) {
		gpiobroker_request_close(h->req);
		h->req = NULL;
	}
	for (size_t i = 0; h->req && i < gpiobroker_request_get_num_lines(h->req); i++)
		if (strcmp(gpiobroker_request_get_chip(h->req, i), rl->chip) == 0 &&
		    gpiobroker_request_get_offset(h->req, i) == (int)rl->offset)
			h->index = (unsigned int)i;
	return 0;
}

/* Each argument's line read (and its holder) before anything changes; an exit code
 * for the first that cannot be. */
static int held_read_all(const struct resolver *res, struct held *held)
{
	for (int i = 0; i < res->num_lines; i++) {
		int r;

		if (res->lines[i].request)
			continue;
		r = held_read(&res->lines[i], &held[i]);
		if (r < 0)
			return fail_line(res->lines[i].id, r);
	}
	return 0;
}

static void held_free_all(struct held *held, int n)
{
	for (int i = 0; held && i < n; i++)
		held_clear(&held[i]);
	free(held);
}

/* The options get and set share, as gpioget and gpioset do. */
struct value_cfg {
	struct gpiobroker_line_settings base;
	struct line_opts lines;
	const char *label;
	bool given;    /* a setting was given */
	int64_t hold;  /* -p */
};

/* 1 if @c was one of them, 0 if not, else an exit code (reported). */
static int value_opt(int c, const char *arg, struct value_cfg *v)
{
	if (line_opt(c, arg, &v->lines))
		return 1;
	if (c == 'C') {
		v->label = arg;
		return 1;
	}
	if (c != 'p')
		return 0;
	v->hold = parse_period(arg, 1000);
	if (v->hold < 0)
		return usage_error("bad hold period '%s' (10ms, 1s; bare number: ms)", arg);
	return 1;
}

/* --- get --------------------------------------------------------------------------------- */

const char usage_get[] =
	"gpiobrokerctl get [-a] [-l] [-b BIAS] [-c CHIP] [-p PERIOD] [--numeric] [--unquoted] "
	"LINE|ID|PATH...";
const char help_get[] =
	"Read line values, as gpioget: \"LINE\"=active \"LINE\"=inactive, in argument order.\n"
	"A request (ID or PATH) stands for all its lines. A line held by a persistent\n"
	"request of yours is read through it; other lines are requested as inputs (or\n"
	"--as-is) for the read and released after it. Under -c, bare numbers are\n"
	"offsets; otherwise a bare number is a request id.\n"
	"  -a, --as-is              leave the direction unchanged, not forced to input\n"
	"  -l, --active-low         treat the lines as active low\n"
	"  -b, --bias BIAS          as-is, disabled, pull-up, pull-down\n"
	"  -C, --consumer NAME      consumer name (default: gpiobrokerctl-get)\n"
	"  -c, --chip CHIP          LINEs on this chip (name, number, label or /dev path)\n"
	"      --by-name            LINEs are names even if they look like offsets\n"
	"  -p, --hold-period P      wait P between requesting and reading (10ms, 1s;\n"
	"                           bare number: ms)\n"
	"      --numeric            print values as 0 (inactive) and 1 (active)\n"
	"      --unquoted           don't quote line names\n"
	"      --json               one JSON array of {\"line\":..., \"value\":0|1}\n";

struct get_cfg {
	struct value_cfg v;
	bool numeric, unquoted, json;
};

/* What get reads, and how: through the caller's requests or a temporary one. */
struct get_run {
	struct held *held;              /* per argument */
	const char **temp;              /* the lines of the temporary request */
	int *which;                     /* per argument: its index there, or -1 */
	int n_temp;
	struct gpiobroker_request *tmp;
	struct got {
		char *id;
		int value;
	} *out;
	int n_out;
};

static int get_options(int argc, char **argv, struct get_cfg *cfg)
{
	static const struct option opts[] = {
		{ "as-is", no_argument, NULL, 'a' }, { "active-low", no_argument, NULL, 'l' },
		{ "bias", required_argument, NULL, 'b' }, { "consumer", required_argument, NULL, 'C' },
		{ "label", required_argument, NULL, 'C' }, { "chip", required_argument, NULL, 'c' },
		{ "by-name", no_argument, NULL, OPT_BY_NAME },
		{ "hold-period", required_argument, NULL, 'p' },
		{ "numeric", no_argument, NULL, OPT_NUMERIC },
		{ "unquoted", no_argument, NULL, OPT_UNQUOTED }, { "json", no_argument, NULL, OPT_JSON },
		{ "strict", no_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' },
		{ "input", no_argument, NULL, 'i' },
		{ 0 }
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "+:alb:C:c:p:si", opts, NULL)) != -1) {
		switch (c) {
		case OPT_NUMERIC:
			cfg->numeric = true;
			continue;
		case OPT_UNQUOTED:
			cfg->unquoted = true;
			continue;
		case OPT_JSON:
			cfg->json = true;
			continue;
		case 's':
			return refuse_strict();
		}
		r = value_opt(c, optarg, &cfg->v);
		if (r == 0) /* -l changes no setting of a held line: it is read active-low */
			r = settings_opt(c, optarg, &cfg->v.base, c == 'l' ? NULL : &cfg->v.given);
		if (r != 1)
			return r ? r : opt_error(c, argv, opts);
	}
	if (optind >= argc)
		return usage_error("no LINE given");
	return 0;
}

/* The lines no request of the caller holds: requested together, for the read. */
static int get_plan(const struct get_cfg *cfg, const struct resolver *res, struct get_run *run)
{
	int n = res->num_lines, r;

	run->held = calloc((size_t)n, sizeof(*run->held));
	run->temp = calloc((size_t)n, sizeof(*run->temp));
	run->which = calloc((size_t)n, sizeof(*run->which));
	if (!run->held || !run->temp || !run->which)
		return EX_ERROR;
	if ((r = held_read_all(res, run->held)))
		return r;
	for (int i = 0; i < n; i++) {
		const struct resolved_line *rl = &res->lines[i];

		run->which[i] = -1;
		if (rl->request)
			continue;
		if (run->held[i].req && cfg->v.given) {
			/* Its settings are the request's: changing them is reconfigure's job. */
			fprintf(stderr, "gpiobrokerctl: get: %s is held by your request %s; its "
					"settings stay as they are: change them with gpiobrokerctl "
					"reconfigure, or read it without settings\n", rl->id,
				short_id(run->held[i].info.request));
			return EX_USAGE;
		}
		if (!run->held[i].req) {
			run->which[i] = run->n_temp;
			run->temp[run->n_temp++] = rl->ref;
		}
	}
	return 0;
}

static int got_add(struct get_run *run, const char *id, int value)
{
	struct got *out = realloc(run->out, (size_t)(run->n_out + 1) * sizeof(*out));

	if (!out)
		return EX_ERROR;
	run->out = out;
	out[run->n_out].value = value;
	if (!(out[run->n_out].id = strdup(id)))
		return EX_ERROR;
	run->n_out++;
	return 0;
}

/* A request's lines, named by their line names where they have one. */
static int get_request(struct resolver *res, const struct resolved_line *rl, struct get_run *run)
{
	struct gpiobroker_request *req = gpiobroker_request_open(B, rl->request);
	int vals[64], r;
	size_t n;

	if (!req)
		return fail(rl->id, -errno);
	n = gpiobroker_request_get_num_lines(req);
	n = n > 64 ? 64 : n; /* (at most 64 are shown) */
	r = gpiobroker_get_values(req, n, NULL, vals);
	if (r < 0) {
		r = fail(rl->id, r);
		goto out;
	}
	/* Without the tree (it could not be read) the lines are shown as CHIP:OFFSET. */
	resolver_load_tree(res, true);
	for (size_t k = 0; !r && k < n; k++) {
		const char *chip = gpiobroker_request_get_chip(req, k);
		int off = gpiobroker_request_get_offset(req, k);
		const struct lineinfo *l = tree_line_at(&res->tree, chip, (unsigned int)off);
		char id[256];

		if (l && l->name && *l->name)
			snprintf(id, sizeof(id), "%s", l->name);
		else
			snprintf(id, sizeof(id), "%s:%d", chip, off);
		r = got_add(run, id, vals[k]);
	}
out:
	gpiobroker_request_close(req);
	return r;
}

static int get_act(const struct get_cfg *cfg, struct resolver *res, struct get_run *run)
{
	struct gpiobroker_line_settings *s = calloc((size_t)run->n_temp + 1, sizeof(*s));
	int r = s ? 0 : EX_ERROR;

	for (int i = 0; s && i < run->n_temp; i++)
		s[i] = cfg->v.base;
	if (!r && run->n_temp) {
		run->tmp = gpiobroker_request_array(B, (size_t)run->n_temp, run->temp, s, cfg->v.label, 0);
		if (!run->tmp)
			r = run->n_temp == 1 ? fail_line(run->temp[0], -errno) : fail("get", -errno);
	}
	free(s);
	if (!r && cfg->v.hold > 0)
		sleep_us((uint64_t)cfg->v.hold);
	for (int i = 0; !r && i < res->num_lines; i++) {
		const struct held *h = &run->held[i];
		int v;

		if (res->lines[i].request) {
			r = get_request(res, &res->lines[i], run);
			continue;
		}
		v = run->which[i] >= 0 ? gpiobroker_get_value(run->tmp, (unsigned int)run->which[i]) :
					 gpiobroker_get_value(h->req, h->index);
		/* -l asks for the active-low sense; a request holding the line active-high
		 * reads the other way round. */
		if (v >= 0 && run->which[i] < 0 && cfg->v.base.active_low && !h->info.active_low)
			v = !v;
		r = v < 0 ? fail(res->lines[i].id, v) : got_add(run, res->lines[i].id, v);
	}
	return r;
}

static int get_print(const struct get_cfg *cfg, const struct get_run *run)
{
	json_t *list;

	if (cfg->json) {
		list = json_array();
		for (int i = 0; i < run->n_out; i++)
			jpush(&list, json_pack("{s:o,s:i}", "line", jstr(run->out[i].id), "value",
					       run->out[i].value));
		return json_print(list);
	}
	for (int i = 0; i < run->n_out; i++) {
		printf("%s", i ? " " : "");
		if (cfg->numeric) {
			printf("%d", run->out[i].value);
		} else {
			print_quoted(run->out[i].id, cfg->unquoted);
			printf("=%s", run->out[i].value ? "active" : "inactive");
		}
	}
	printf("\n");
	return EX_OK;
}

int cmd_get(int argc, char **argv)
{
	struct get_cfg cfg = { .v.label = "gpiobrokerctl-get" };
	struct get_run run = { 0 };
	struct resolver *res = NULL;
	int r;

	gpiobroker_line_settings_init(&cfg.v.base);
	cfg.v.base.direction = GPIOBROKER_DIRECTION_INPUT;
	if ((r = get_options(argc, argv, &cfg)))
		return r;
	r = resolve_lines(argc - optind, argv + optind, &cfg.v.lines, RESOLVE_REQUESTS, &res);
	if (!r)
		r = get_plan(&cfg, res, &run);
	if (!r)
		r = get_act(&cfg, res, &run);
	if (!r)
		r = get_print(&cfg, &run);
	if (run.tmp)
		gpiobroker_free(run.tmp);
	for (int i = 0; i < run.n_out; i++)
		free(run.out[i].id);
	free(run.out);
	free(run.temp);
	free(run.which);
	held_free_all(run.held, res ? res->num_lines : 0);
	resolver_free(res);
	return r;
}

/* --- set -------------------------------------------------------------------------------- */

const char usage_set[] =
	"gpiobrokerctl set [-l] [-b BIAS] [-d DRIVE] [-C CONSUMER] [-c CHIP] [-p PERIOD] LINE=VALUE...";
const char help_set[] =
	"Drive lines, all or none. The value stays after this command exits: lines not\n"
	"yet held are requested together in a new persistent request (as with sysfs\n"
	"export), and later \"set\" calls go through it, until gpiobrokerctl release ID.\n"
	"Settings given for a line already held by your request are applied to it (a\n"
	"reconfigure). Prints the id of the request holding the lines; on a terminal,\n"
	"one line per LINE: what holds it and how to free it. On lines whose policy says\n"
	"persistent = no, use gpiobrokerctl request LINE=VALUE (held while it runs).\n"
	"  -l, --active-low         treat the lines as active low\n"
	"  -b, --bias BIAS          as-is, disabled, pull-up, pull-down\n"
	"  -d, --drive DRIVE        push-pull, open-drain, open-source\n"
	"  -C, --consumer NAME      consumer name of a new request (default: gpiobrokerctl);\n"
	"                           --label is the same\n"
	"  -c, --chip CHIP          LINEs on this chip; bare numbers are offsets\n"
	"      --by-name            LINEs are names even if they look like offsets\n"
	"  -p, --hold-period P      wait P after setting before exiting (10ms, 1s)\n"
	"      --verbose            the terminal's output (what holds each line) anywhere\n";

struct set_cfg {
	struct value_cfg v;
	bool tty;
};

/* The lines set takes: the caller's held ones, and a new request for the rest. */
struct set_run {
	struct held *held;    /* per argument */
	struct gpiobroker_line_settings *settings; /* per argument */
	const char **new_lines;
	struct gpiobroker_line_settings *new_settings;
	int n_new;
	struct gpiobroker_request *req; /* the new request */
};

/* gpioset's options gpiobrokerctl cannot honour, each with why. */
static int set_refused(int c)
{
	switch (c) {
	case 't':
		return refuse_opt("-t/--toggle", "a broker request cannot toggle by itself; "
				  "run gpiobrokerctl set in a loop");
	case 'z':
		return refuse_opt("-z/--daemonize", "set's value already stays after it exits "
				  "(a persistent request); no daemon is needed");
	case 'i':
		return refuse_opt("-i/--interactive", "run gpiobrokerctl set once per change");
	case OPT_BANNER:
		return refuse_opt("--banner", "set prints the request holding the lines instead");
	case 's':
		return refuse_strict();
	default:
		return 0;
	}
}

static int set_options(int argc, char **argv, struct set_cfg *cfg)
{
	static const struct option opts[] = {
		{ "active-low", no_argument, NULL, 'l' }, { "bias", required_argument, NULL, 'b' },
		{ "drive", required_argument, NULL, 'd' }, { "consumer", required_argument, NULL, 'C' },
		{ "label", required_argument, NULL, 'C' }, { "chip", required_argument, NULL, 'c' },
		{ "by-name", no_argument, NULL, OPT_BY_NAME },
		{ "hold-period", required_argument, NULL, 'p' },
		{ "toggle", required_argument, NULL, 't' }, { "daemonize", no_argument, NULL, 'z' },
		{ "banner", no_argument, NULL, OPT_BANNER }, { "strict", no_argument, NULL, 's' },
		{ "interactive", no_argument, NULL, 'i' },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "+:lb:d:C:c:p:t:zsi", opts, NULL)) != -1) {
		if (c == OPT_VERBOSE) {
			cfg->tty = true;
			continue;
		}
		r = value_opt(c, optarg, &cfg->v);
		if (r == 0)
			r = set_refused(c);
		if (r == 0)
			r = settings_opt(c, optarg, &cfg->v.base, &cfg->v.given);
		if (r != 1)
			return r ? r : opt_error(c, argv, opts);
	}
	if (optind >= argc)
		return usage_error("no LINE=VALUE given");
	for (int i = optind; i < argc; i++)
		if (!strchr(argv[i], '='))
			return usage_error("%s has no =VALUE (e.g. %s=1)", argv[i], argv[i]);
	return 0;
}

/* Find out everything, change nothing: the lines of the caller's persistent requests
 * must be able to take the value (outputs, or settings given to make them so). */
static int set_plan(const struct set_cfg *cfg, const struct resolver *res, struct set_run *run)
{
	int n = res->num_lines, r;

	run->held = calloc((size_t)n, sizeof(*run->held));
	run->settings = calloc((size_t)n, sizeof(*run->settings));
	run->new_lines = calloc((size_t)n, sizeof(*run->new_lines));
	run->new_settings = calloc((size_t)n, sizeof(*run->new_settings));
	if (!run->held || !run->settings || !run->new_lines || !run->new_settings)
		return EX_ERROR;
	if ((r = held_read_all(res, run->held)))
		return r;
	for (int i = 0; i < n; i++) {
		const struct resolved_line *rl = &res->lines[i];
		const struct held *h = &run->held[i];

		run->settings[i] = with_value(&cfg->v.base, rl->value);
		if (!h->req) {
			run->new_lines[run->n_new] = rl->ref;
			run->new_settings[run->n_new++] = run->settings[i];
		} else if (!cfg->v.given && h->info.direction && strcmp(h->info.direction, "output")) {
			fprintf(stderr, "gpiobrokerctl: set: %s is an input of your request %s: "
					"nothing was set; make it an output with: gpiobrokerctl "
					"reconfigure --output %s=%d\n", rl->id,
				short_id(h->info.request), rl->id, rl->value);
			return EX_ERROR;
		}
	}
	return 0;
}

/* The new request first (if the broker refuses it, nothing has been driven), then the
 * held lines: settings given are applied (a reconfigure), else the value. */
static int set_act(const struct resolver *res, const struct set_cfg *cfg, struct set_run *run)
{
	if (run->n_new) {
		run->req = gpiobroker_request_array(B, (size_t)run->n_new, run->new_lines,
						    run->new_settings, cfg->v.label,
						    GPIOBROKER_REQUEST_PERSISTENT);
		if (!run->req)
			return fail_request(run->n_new, run->new_lines, -errno, true, "set");
	}
	for (int i = 0; i < res->num_lines; i++) {
		struct held *h = &run->held[i];
		int r;

		if (!h->req)
			continue;
		if (cfg->v.given)
			r = gpiobroker_reconfigure(h->req, 1, &h->index, &run->settings[i]);
		else
			r = gpiobroker_set_value(h->req, h->index, run->settings[i].value);
		if (r < 0) {
			r = fail(res->lines[i].id, r);
			/* Undo the new request: all or nothing. */
			if (run->req)
				gpiobroker_free(run->req);
			run->req = NULL;
			return r;
		}
	}
	return 0;
}

/* Where the lines are held: the same on every call. */
static void set_print(const struct set_cfg *cfg, const struct resolver *res,
		      const struct set_run *run)
{
	for (int i = 0, k = 0; i < res->num_lines; i++) {
		const char *path = run->held[i].req ? run->held[i].info.request :
				   gpiobroker_request_get_path(run->req);
		bool seen = false;

		if (cfg->tty) {
			printf("%s=%d, held by request %s (persistent): gpiobrokerctl release %s\n",
			       res->lines[i].id, run->settings[i].value, short_id(path), short_id(path));
			continue;
		}
		for (int j = 0; j < i; j++)
			seen = seen || strcmp(run->held[j].req ? run->held[j].info.request :
					      gpiobroker_request_get_path(run->req), path) == 0;
		if (!seen)
			printf("%s%s", k++ ? " " : "", short_id(path));
		if (i == res->num_lines - 1)
			printf("\n");
	}
	fflush(stdout);
}

int cmd_set(int argc, char **argv)
{
	struct set_cfg cfg = { .v.label = "gpiobrokerctl", .tty = isatty(STDOUT_FILENO) };
	struct resolver *res = NULL;
	struct set_run run = { 0 };
	int r;

	gpiobroker_line_settings_init(&cfg.v.base);
	if ((r = set_options(argc, argv, &cfg)))
		return r;
	r = resolve_lines(argc - optind, argv + optind, &cfg.v.lines, RESOLVE_VALUES, &res);
	if (!r)
		r = set_plan(&cfg, res, &run);
	if (!r)
		r = set_act(res, &cfg, &run);
	if (!r)
		set_print(&cfg, res, &run);
	if (!r && cfg.v.hold > 0)
		sleep_us((uint64_t)cfg.v.hold);
	gpiobroker_request_close(run.req);
	held_free_all(run.held, res ? res->num_lines : 0);
	free(run.settings);
	free(run.new_lines);
	free(run.new_settings);
	resolver_free(res);
	return r;
}
