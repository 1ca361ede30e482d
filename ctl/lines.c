/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: request, requests, release, reconfigure. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

/* --- request ---------------------------------------------------------------------- */

const char usage_request[] =
	"gpiobrokerctl request [--persistent] [-C CONSUMER] [-c CHIP] [SETTINGS] LINE[=VALUE]...";
const char help_request[] =
	"Request lines, atomically, and print the request's id (N: its object is\n"
	"/org/gpiodbroker1/request/N; both forms are accepted everywhere).\n"
	"A persistent request stays held after this command exits, until released\n"
	"(gpiobrokerctl release N). Otherwise the command holds the lines until it is\n"
	"interrupted (SIGINT, SIGTERM), like gpioset; they are released as it exits.\n"
	"LINE=VALUE makes the line an output with that initial value.\n"
	"      --persistent         keep the request after exit\n"
	"  -C, --consumer NAME      consumer name, the request's label (default:\n"
	"                           gpiobrokerctl); --label is the same\n"
	"  -c, --chip CHIP          LINEs on this chip; bare numbers are offsets\n"
	"      --by-name            LINEs are names even if they look like offsets\n"
	"      --json               print {\"request\":ID,\"path\":PATH}\n" SETTINGS_HELP;

struct request_cfg {
	struct gpiobroker_line_settings base;
	struct line_opts lines;
	const char *label;
	unsigned int flags;
	bool json;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = 1;
}

static int request_options(int argc, char **argv, struct request_cfg *cfg)
{
	static const struct option opts[] = {
		{ "persistent", no_argument, NULL, OPT_PERSISTENT },
		{ "consumer", required_argument, NULL, 'C' },
		{ "label", required_argument, NULL, 'C' },
		{ "chip", required_argument, NULL, 'c' },
		{ "by-name", no_argument, NULL, OPT_BY_NAME },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		SETTINGS_OPTS,
		{ 0 }
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "+:C:c:" SETTINGS_LETTERS, opts, NULL)) != -1) {
		if (c == OPT_PERSISTENT)
			cfg->flags |= GPIOBROKER_REQUEST_PERSISTENT;
		else if (c == 'C')
			cfg->label = optarg;
		else if (line_opt(c, optarg, &cfg->lines))
			continue;
		else if (c == OPT_JSON)
			cfg->json = true;
		else if ((r = settings_opt(c, optarg, &cfg->base, NULL)) != 1)
			return r ? r : opt_error(c, argv, opts);
	}
	if (optind >= argc)
		return usage_error("no LINE given");
	return 0;
}

static int request_act(const struct request_cfg *cfg, const struct resolver *res,
		       struct gpiobroker_request **req)
{
	const char **refs = calloc((size_t)res->num_lines, sizeof(*refs));
	struct gpiobroker_line_settings *s = calloc((size_t)res->num_lines, sizeof(*s));
	int r = refs && s ? EX_OK : EX_ERROR;

	for (int i = 0; !r && i < res->num_lines; i++) {
		refs[i] = res->lines[i].ref;
		s[i] = with_value(&cfg->base, res->lines[i].value);
	}
	if (!r) {
		*req = gpiobroker_request_array(B, (size_t)res->num_lines, refs, s, cfg->label,
						cfg->flags);
		if (!*req)
			r = fail_request(res->num_lines, refs, -errno,
					 cfg->flags & GPIOBROKER_REQUEST_PERSISTENT, "request");
	}
	free(refs);
	free(s);
	return r;
}

static int request_print(const struct request_cfg *cfg, const struct gpiobroker_request *req)
{
	const char *path = gpiobroker_request_get_path(req);
	int r = EX_OK;

	if (cfg->json)
		r = json_print(json_pack("{s:o,s:o,s:b}", "request", jstr(short_id(path)), "path",
					 jstr(path), "persistent", cfg->flags != 0));
	else
		printf("%s\n", short_id(path));
	fflush(stdout);
	return r;
}

int cmd_request(int argc, char **argv)
{
	struct request_cfg cfg = { .label = "gpiobrokerctl" };
	struct gpiobroker_request *req = NULL;
	struct resolver *res = NULL;
	int r, released;

	gpiobroker_line_settings_init(&cfg.base);
	if ((r = request_options(argc, argv, &cfg)))
		return r;
	r = resolve_lines(argc - optind, argv + optind, &cfg.lines, RESOLVE_VALUES, &res);
	if (!r)
		r = request_act(&cfg, res, &req);
	resolver_free(res);
	if (r)
		return r;
	/* Handlers first: whoever reads the id may signal us at once. */
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	r = request_print(&cfg, req);
	if (cfg.flags & GPIOBROKER_REQUEST_PERSISTENT) {
		gpiobroker_request_close(req);
		return r;
	}
	/* Managed: the lines are ours while this connection lives. Hold them. */
	while (!r && !stop)
		pause();
	released = gpiobroker_free(req);
	return released < 0 && !r ? fail("release", released) : r;
}

/* --- requests ------------------------------------------------------------------------ */

const char usage_requests[] = "gpiobrokerctl requests [--json]";
const char help_requests[] =
	"List every request: id, label, persistent or managed, owner uid, owner's bus name.\n"
	"      --json               one JSON array (with each request's path)\n";

static int requests_print_json(const struct gpiobroker_request_info *info, int n)
{
	json_t *list = json_array();

	for (int i = 0; i < n; i++)
		jpush(&list, json_pack("{s:o,s:o,s:o,s:b,s:I,s:o}", "request",
				       jstr(short_id(info[i].path)), "path", jstr(info[i].path),
				       "label", jstr(info[i].label), "persistent", info[i].persistent,
				       "owner_uid", (json_int_t)info[i].owner_uid, "owner",
				       jstr_or_null(info[i].owner)));
	return json_print(list);
}

int cmd_requests(int argc, char **argv)
{
	struct gpiobroker_request_info *info;
	bool json;
	int n, r;

	if ((r = parse_json_only(argc, argv, &json, 0)))
		return r;
	n = gpiobroker_list_requests(B, &info);
	if (n < 0)
		return fail("requests", n);
	if (json)
		r = requests_print_json(info, n);
	for (int i = 0; !json && i < n; i++)
		printf("%s\t%s\t%s\tuid=%u\towner=%s\n", short_id(info[i].path), info[i].label,
		       info[i].persistent ? "persistent" : "managed", (unsigned)info[i].owner_uid,
		       *info[i].owner ? info[i].owner : "-");
	gpiobroker_request_info_free(info, n);
	return r;
}

/* --- release --------------------------------------------------------------------------- */

const char usage_release[] = "gpiobrokerctl release ID|PATH|LINE...";
const char help_release[] =
	"Release requests (gpio_free), given by id (a bare number), path or one of\n"
	"their lines.\n";

int cmd_release(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	int ret = EX_OK, c;

	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1)
		return opt_error(c, argv, opts);
	if (optind >= argc)
		return usage_error("no request given");
	/* Each on its own, as gpio_free(): one that fails does not keep the others. */
	for (int i = optind; i < argc; i++) {
		struct gpiobroker_request *req;
		int idx, r = open_target(argv[i], &req, &idx);

		if (r) {
			ret = r;
			continue;
		}
		r = gpiobroker_free(req);
		if (r < 0)
			ret = fail(argv[i], r);
	}
	return ret;
}

/* --- reconfigure ------------------------------------------------------------------------ */

const char usage_reconfigure[] = "gpiobrokerctl reconfigure [SETTINGS] ID|PATH|LINE[=VALUE]";
const char help_reconfigure[] =
	"Change settings of a request's lines: all of them for a request (ID or PATH),\n"
	"one for a LINE held through the broker. Only the settings given change; --output\n"
	"drives the line to 0 unless LINE=VALUE gives the value.\n" SETTINGS_HELP;

static int reconfigure_options(int argc, char **argv, struct gpiobroker_line_settings *base,
			       char **target)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, SETTINGS_OPTS, { 0 } };
	int c, r, value;

	while ((c = getopt_long(argc, argv, "+:" SETTINGS_LETTERS, opts, NULL)) != -1)
		if ((r = settings_opt(c, optarg, base, NULL)) != 1)
			return r ? r : opt_error(c, argv, opts);
	if (argc - optind != 1)
		return usage_error("one request (ID or PATH) or LINE expected");
	r = parse_line_arg(argv[optind], target, &value);
	*base = with_value(base, value);
	return r;
}

int cmd_reconfigure(int argc, char **argv)
{
	struct gpiobroker_line_settings base, *s = NULL;
	struct gpiobroker_request *req = NULL;
	char *target = NULL;
	unsigned int one;
	int r, idx;
	size_t n;

	gpiobroker_line_settings_init(&base);
	r = reconfigure_options(argc, argv, &base, &target);
	if (!r)
		r = open_target(target, &req, &idx);
	if (r)
		goto out;
	n = idx >= 0 ? 1 : gpiobroker_request_get_num_lines(req);
	s = calloc(n, sizeof(*s));
	if (!s) {
		r = EX_ERROR;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = base;
	one = (unsigned int)idx;
	r = gpiobroker_reconfigure(req, n, idx >= 0 ? &one : NULL, s);
	r = r < 0 ? fail(target, r) : EX_OK;
out:
	free(s);
	free(target);
	gpiobroker_request_close(req);
	return r;
}
