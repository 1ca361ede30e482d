/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: request, requests, release, get, set, reconfigure. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
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

/*
 * The request holding @line if it is a persistent request of this user (the only
 * kind a CLI can come back to), with the line's index in it; NULL if the line is
 * free or held otherwise (then the caller requests it, and the broker says Busy if
 * it is held). Returns -errno on a lookup failure.
 */
static int own_persistent(const char *line, struct gpiobroker_request **out, unsigned int *index)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *lpath = NULL, *chip = NULL, *rpath = NULL;
	unsigned int off;
	uint32_t uid = 0;
	int r;

	*out = NULL;
	r = gpiobroker_find_line(B, line, &lpath, &chip, &off);
	if (r < 0)
		return r;
	r = get_path_prop(lpath, GB_IFACE_LINE, "Request", &rpath);
	if (r >= 0 && strcmp(rpath, "/") != 0)
		r = sd_bus_get_property_trivial(gpiobroker_get_bus(B), GB_BUS_NAME, rpath,
						GB_IFACE_REQUEST, "OwnerUid", &e, 'u', &uid);
	else if (r >= 0)
		r = 1; /* free */
	if (r == 0 && uid == getuid()) {
		struct gpiobroker_request *req = gpiobroker_request_open(B, rpath);

		if (req && gpiobroker_request_is_persistent(req)) {
			for (size_t i = 0; i < gpiobroker_request_get_num_lines(req); i++)
				if (strcmp(gpiobroker_request_get_chip(req, i), chip) == 0 &&
				    gpiobroker_request_get_offset(req, i) == (int)off)
					*index = (unsigned int)i;
			*out = req;
		} else {
			gpiobroker_request_close(req);
		}
	}
	sd_bus_error_free(&e);
	free(lpath);
	free(chip);
	free(rpath);
	return r < 0 ? r : 0;
}

/* A boolean or string property of a line given by reference. */
static int line_bool(const char *line, const char *prop, int *out)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *lpath = NULL;
	int r = gpiobroker_find_line(B, line, &lpath, NULL, NULL);

	if (r >= 0)
		r = sd_bus_get_property_trivial(gpiobroker_get_bus(B), GB_BUS_NAME, lpath, GB_IFACE_LINE,
						prop, &e, 'b', out);
	sd_bus_error_free(&e);
	free(lpath);
	return r;
}

static char *line_str(const char *line, const char *prop)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *lpath = NULL, *v = NULL;

	if (gpiobroker_find_line(B, line, &lpath, NULL, NULL) >= 0)
		sd_bus_get_property_string(gpiobroker_get_bus(B), GB_BUS_NAME, lpath, GB_IFACE_LINE,
					   prop, &e, &v);
	sd_bus_error_free(&e);
	free(lpath);
	return v;
}

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = 1;
}

/* Split LINE[=VALUE] arguments into lines, settings (starting from @base). */
static int parse_line_args(int n, char **args, const struct gpiobroker_line_settings *base,
			   char ***lines, struct gpiobroker_line_settings **settings)
{
	*lines = calloc(n, sizeof(char *));
	*settings = calloc(n, sizeof(**settings));
	if (!*lines || !*settings)
		return EX_ERROR;
	for (int i = 0; i < n; i++) {
		char *eq = strrchr(args[i], '=');

		(*settings)[i] = *base;
		(*lines)[i] = args[i];
		if (eq && !strchr(eq, '/')) {
			int v = parse_value(eq + 1);

			if (v < 0)
				return usage_error("bad value '%s' in %s (allowed: 0, 1, active, inactive, "
						   "on, off)", eq + 1, args[i]);
			*eq = '\0';
			(*settings)[i].direction = GPIOBROKER_DIRECTION_OUTPUT;
			(*settings)[i].value = v;
		}
	}
	return 0;
}

/* Each argument's text before "=", for messages and gpioget's output. */
static char **arg_ids(int n, char **args)
{
	char **ids = calloc(n + 1, sizeof(*ids));

	for (int i = 0; ids && i < n; i++)
		ids[i] = strndup(args[i], strcspn(args[i], "="));
	return ids;
}

static void free_ids(char **ids)
{
	for (int i = 0; ids && ids[i]; i++)
		free(ids[i]);
	free(ids);
}

/* A request failed as a whole: "persistent = no" in the policy gets its own advice. */
static int fail_request(int n, const char *const *lines, int r, bool persistent, const char *verb)
{
	if (r == -EACCES && persistent) {
		for (int i = 0; i < n; i++) {
			char *lpath = NULL;
			struct access a;

			if (gpiobroker_find_line(B, lines[i], &lpath, NULL, NULL) < 0)
				continue;
			get_access(lpath, &a);
			free(lpath);
			if (a.known && a.may_use && !a.persistent) {
				fprintf(stderr,
					"gpiobrokerctl: %s: %s: the policy lets you use it only while a "
					"command holds it (persistent = no); hold it with: "
					"gpiobrokerctl request %s=VALUE\n",
					cur_cmd, lines[i], lines[i]);
				return EX_DENIED;
			}
		}
	}
	if (n == 1)
		return fail_line(lines[0], r);
	return fail(verb, r);
}

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

int cmd_request(int argc, char **argv)
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
	struct gpiobroker_line_settings base, *settings = NULL;
	struct gpiobroker_request *req;
	const char *label = "gpiobrokerctl", *chip_arg = NULL;
	unsigned int flags = 0;
	bool by_name = false, json = false;
	char **lines = NULL;
	int c, r;

	gpiobroker_line_settings_init(&base);
	while ((c = getopt_long(argc, argv, "+:C:c:" SETTINGS_LETTERS, opts, NULL)) != -1) {
		if (c == OPT_PERSISTENT)
			flags |= GPIOBROKER_REQUEST_PERSISTENT;
		else if (c == 'C')
			label = optarg;
		else if (c == 'c')
			chip_arg = optarg;
		else if (c == OPT_BY_NAME)
			by_name = true;
		else if (c == OPT_JSON)
			json = true;
		else if ((r = settings_opt(c, optarg, &base, NULL)) != 1)
			return r ? r : opt_error(c, argv, opts);
	}
	if (optind >= argc)
		return usage_error("no LINE given");
	if (chip_arg && (r = chip_scope_lines(chip_arg, by_name, argc - optind, argv + optind)))
		return r;
	r = parse_line_args(argc - optind, argv + optind, &base, &lines, &settings);
	if (r) {
		free(lines);
		free(settings);
		return r;
	}
	req = gpiobroker_request_array(B, argc - optind, (const char *const *)lines, settings,
				       label, flags);
	r = -errno;
	free(settings);
	if (!req) {
		r = fail_request(argc - optind, (const char *const *)lines, r,
				 flags & GPIOBROKER_REQUEST_PERSISTENT, "request");
		free(lines);
		return r;
	}
	free(lines);
	/* Handlers first: whoever reads the id may signal us at once. */
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	if (json) {
		printf("{\"request\":");
		json_str(short_id(gpiobroker_request_get_path(req)));
		printf(",\"path\":");
		json_str(gpiobroker_request_get_path(req));
		printf(",\"persistent\":%s}\n", flags ? "true" : "false");
	} else {
		printf("%s\n", short_id(gpiobroker_request_get_path(req)));
	}
	fflush(stdout);
	if (!(flags & GPIOBROKER_REQUEST_PERSISTENT)) {
		/* Managed: the lines are ours while this connection lives. Hold them. */
		while (!stop)
			pause();
		r = gpiobroker_free(req);
		return r < 0 ? fail("release", r) : EX_OK;
	}
	gpiobroker_request_close(req);
	return EX_OK;
}

/* --- requests ------------------------------------------------------------------------ */

const char usage_requests[] = "gpiobrokerctl requests [--json]";
const char help_requests[] =
	"List every request: id, label, persistent or managed, owner uid, owner's bus name.\n"
	"      --json               one JSON array (with each request's path)\n";

int cmd_requests(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	struct gpiobroker_request_info *info;
	bool json = false;
	int n, c;

	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c == OPT_JSON)
			json = true;
		else
			return opt_error(c, argv, opts);
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	n = gpiobroker_list_requests(B, &info);
	if (n < 0)
		return fail("requests", n);
	if (json)
		putchar('[');
	for (int i = 0; i < n; i++) {
		if (json) {
			printf("%s{\"request\":", i ? "," : "");
			json_str(short_id(info[i].path));
			printf(",\"path\":");
			json_str(info[i].path);
			printf(",\"label\":");
			json_str(info[i].label);
			printf(",\"persistent\":%s,\"owner_uid\":%u,\"owner\":",
			       info[i].persistent ? "true" : "false", (unsigned)info[i].owner_uid);
			json_str_or_null(info[i].owner);
			putchar('}');
		} else {
			printf("%s\t%s\t%s\tuid=%u\towner=%s\n", short_id(info[i].path), info[i].label,
			       info[i].persistent ? "persistent" : "managed",
			       (unsigned)info[i].owner_uid, *info[i].owner ? info[i].owner : "-");
		}
	}
	if (json)
		printf("]\n");
	gpiobroker_request_info_free(info, n);
	return EX_OK;
}

/* A request given by id or path, or the request holding a line. */
static int open_target(const char *arg, struct gpiobroker_request **req, int *index)
{
	char *lpath = NULL, *rpath = NULL, *chip = NULL, *ref = request_ref(arg);
	unsigned int off;
	int r;

	*index = -1;
	if (ref) {
		*req = gpiobroker_request_open(B, ref);
		r = -errno;
		free(ref);
		return *req ? 0 : fail(arg, r);
	}
	r = gpiobroker_find_line(B, arg, &lpath, &chip, &off);
	if (r < 0)
		return fail_line(arg, r);
	r = get_path_prop(lpath, GB_IFACE_LINE, "Request", &rpath);
	free(lpath);
	if (r < 0 || strcmp(rpath, "/") == 0) {
		fprintf(stderr, "gpiobrokerctl: %s: %s: not held through the broker\n", cur_cmd, arg);
		free(rpath);
		free(chip);
		return EX_NOTFOUND;
	}
	*req = gpiobroker_request_open(B, rpath);
	free(rpath);
	if (!*req) {
		free(chip);
		return fail(arg, -errno);
	}
	for (size_t i = 0; i < gpiobroker_request_get_num_lines(*req); i++)
		if (strcmp(gpiobroker_request_get_chip(*req, i), chip) == 0 &&
		    gpiobroker_request_get_offset(*req, i) == (int)off)
			*index = (int)i;
	free(chip);
	return 0;
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

struct got {
	char *id;
	int value;
};

int cmd_get(int argc, char **argv)
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
	struct gpiobroker_line_settings base;
	struct gpiobroker_request *tmp = NULL;
	const char *label = "gpiobrokerctl-get", *chip_arg = NULL, **temp_lines = NULL;
	bool numeric = false, unquoted = false, json = false, by_name = false, given = false;
	int *which = NULL, n_temp = 0, c, r, ret = EX_OK, n_out = 0;
	char **ids = NULL;
	struct got *out = NULL;
	int64_t hold = 0;
	struct tree t = { 0 };
	size_t cap = 0;

	gpiobroker_line_settings_init(&base);
	base.direction = GPIOBROKER_DIRECTION_INPUT;
	while ((c = getopt_long(argc, argv, "+:alb:C:c:p:si", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			label = optarg;
			break;
		case 'c':
			chip_arg = optarg;
			break;
		case OPT_BY_NAME:
			by_name = true;
			break;
		case 'p':
			hold = parse_period(optarg, 1000);
			if (hold < 0)
				return usage_error("bad hold period '%s' (10ms, 1s; bare number: ms)", optarg);
			break;
		case OPT_NUMERIC:
			numeric = true;
			break;
		case OPT_UNQUOTED:
			unquoted = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 's':
			return refuse_opt("-s/--strict", "the broker resolves every line reference to one line");
		default:
			if ((r = settings_opt(c, optarg, &base, c == 'l' ? NULL : &given)) != 1)
				return r ? r : opt_error(c, argv, opts);
		}
	}
	if (optind >= argc)
		return usage_error("no LINE given");
	argc -= optind;
	argv += optind;
	ids = arg_ids(argc, argv);
	if (!ids)
		return EX_ERROR;
	if (chip_arg && (r = chip_scope_lines(chip_arg, by_name, argc, argv))) {
		free_ids(ids);
		return r;
	}
	temp_lines = calloc(argc, sizeof(*temp_lines));
	which = calloc(argc, sizeof(*which));
	/* A request gives all its lines (at most 64 are shown); a LINE one value. */
	for (int i = 0; i < argc; i++)
		cap += !chip_arg && request_ref(argv[i]) ? 64 : 1;
	out = calloc(cap + 1, sizeof(*out));
	if (!temp_lines || !which || !out) {
		ret = EX_ERROR;
		goto done;
	}
	/* First the lines that need a temporary request: one atomic request for all. */
	for (int i = 0; i < argc; i++) {
		struct gpiobroker_request *own = NULL;
		unsigned int idx;

		which[i] = -1;
		if (!chip_arg && is_number(argv[i]))
			continue;
		if (is_request_path(argv[i]))
			continue;
		r = own_persistent(argv[i], &own, &idx);
		if (r < 0) {
			ret = fail_line(ids[i], r);
			goto done;
		}
		if (own) {
			char *rid = strdup(short_id(gpiobroker_request_get_path(own)));

			gpiobroker_request_close(own);
			if (given) {
				/* Its settings are the request's: changing them is reconfigure's job. */
				fprintf(stderr, "gpiobrokerctl: get: %s is held by your request %s; its "
						"settings stay as they are: change them with gpiobrokerctl "
						"reconfigure, or read it without settings\n", ids[i],
					rid ? rid : "?");
				free(rid);
				ret = EX_USAGE;
				goto done;
			}
			free(rid);
			continue;
		}
		which[i] = n_temp;
		temp_lines[n_temp++] = argv[i];
	}
	if (n_temp) {
		struct gpiobroker_line_settings *s = calloc(n_temp, sizeof(*s));

		for (int i = 0; s && i < n_temp; i++)
			s[i] = base;
		tmp = gpiobroker_request_array(B, n_temp, temp_lines, s, label, 0);
		r = -errno;
		free(s);
		if (!tmp) {
			ret = n_temp == 1 ? fail_line(temp_lines[0], r) : fail("get", r);
			goto done;
		}
	}
	if (hold > 0)
		sleep_us((uint64_t)hold);
	for (int i = 0; i < argc; i++) {
		struct gpiobroker_request *req = NULL;
		unsigned int idx = 0;
		char *ref = NULL;
		int v;

		if (which[i] >= 0) {
			v = gpiobroker_get_value(tmp, which[i]);
			if (v < 0) {
				ret = fail(ids[i], v);
				goto done;
			}
			out[n_out].id = strdup(ids[i]);
			out[n_out++].value = v;
			continue;
		}
		if (!chip_arg && (ref = request_ref(argv[i]))) {
			size_t n;
			int vals[64];

			req = gpiobroker_request_open(B, ref);
			free(ref);
			if (!req) {
				ret = fail(argv[i], -errno);
				goto done;
			}
			n = gpiobroker_request_get_num_lines(req);
			if (n > 64)
				n = 64;
			r = gpiobroker_get_values(req, n, NULL, vals);
			if (r < 0) {
				gpiobroker_request_close(req);
				ret = fail(argv[i], r);
				goto done;
			}
			if (!t.lines && load_tree(&t, true) < 0)
				memset(&t, 0, sizeof(t));
			for (size_t k = 0; k < n; k++) {
				const char *chip = gpiobroker_request_get_chip(req, k);
				int off = gpiobroker_request_get_offset(req, k);
				char *id = NULL;

				for (size_t j = 0; j < t.n_lines && !id; j++) {
					const struct chipinfo *ch = tree_chip_by_path(&t, t.lines[j].chip);

					if (ch && strcmp(ch->name, chip) == 0 && (int)t.lines[j].offset == off &&
					    t.lines[j].name && *t.lines[j].name)
						id = strdup(t.lines[j].name);
				}
				if (!id && asprintf(&id, "%s:%d", chip, off) < 0)
					id = NULL;
				out[n_out].id = id;
				out[n_out++].value = vals[k];
			}
			gpiobroker_request_close(req);
			continue;
		}
		r = own_persistent(argv[i], &req, &idx);
		if (r < 0 || !req) {
			ret = fail_line(ids[i], r < 0 ? r : -ENOENT);
			goto done;
		}
		v = gpiobroker_get_value(req, idx);
		gpiobroker_request_close(req);
		if (v < 0) {
			ret = fail(ids[i], v);
			goto done;
		}
		if (base.active_low) {
			int al = 0;

			/* -l asks for the active-low sense; a request holding the line active-high
			 * reads the other way round. */
			if (line_bool(argv[i], "ActiveLow", &al) >= 0 && !al)
				v = !v;
		}
		out[n_out].id = strdup(ids[i]);
		out[n_out++].value = v;
	}
	if (json)
		putchar('[');
	for (int i = 0; i < n_out; i++) {
		const char *id = out[i].id ? out[i].id : "?";

		if (json) {
			printf("%s{\"line\":", i ? "," : "");
			json_str(id);
			printf(",\"value\":%d}", out[i].value);
		} else if (numeric) {
			printf("%s%d", i ? " " : "", out[i].value);
		} else {
			printf("%s", i ? " " : "");
			print_quoted(id, unquoted);
			printf("=%s", out[i].value ? "active" : "inactive");
		}
	}
	printf(json ? "]\n" : "\n");
done:
	if (tmp)
		gpiobroker_free(tmp);
	for (int i = 0; out && i < n_out; i++)
		free(out[i].id);
	tree_free(&t);
	free_ids(ids);
	free(temp_lines);
	free(which);
	free(out);
	return ret;
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

int cmd_set(int argc, char **argv)
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
	struct gpiobroker_line_settings base, *settings = NULL, *new_settings = NULL;
	const char *label = "gpiobrokerctl", **new_lines = NULL, *chip_arg = NULL;
	struct gpiobroker_request **own = NULL, *req = NULL;
	unsigned int *own_idx = NULL;
	bool by_name = false, given = false, tty = isatty(STDOUT_FILENO);
	char **lines = NULL, **ids = NULL;
	int c, r, n, n_new = 0, ret = EX_OK;
	int64_t hold = 0;

	gpiobroker_line_settings_init(&base);
	while ((c = getopt_long(argc, argv, "+:lb:d:C:c:p:t:zsi", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			label = optarg;
			break;
		case 'c':
			chip_arg = optarg;
			break;
		case OPT_BY_NAME:
			by_name = true;
			break;
		case OPT_VERBOSE:
			tty = true;
			break;
		case 'p':
			hold = parse_period(optarg, 1000);
			if (hold < 0)
				return usage_error("bad hold period '%s' (10ms, 1s; bare number: ms)", optarg);
			break;
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
			return refuse_opt("-s/--strict", "the broker resolves every line reference to one line");
		default:
			if ((r = settings_opt(c, optarg, &base, &given)) != 1)
				return r ? r : opt_error(c, argv, opts);
		}
	}
	n = argc - optind;
	if (n < 1)
		return usage_error("no LINE=VALUE given");
	for (int i = optind; i < argc; i++)
		if (!strchr(argv[i], '='))
			return usage_error("%s has no =VALUE (e.g. %s=1)", argv[i], argv[i]);
	ids = arg_ids(n, argv + optind);
	if (!ids)
		return EX_ERROR;
	if (chip_arg && (r = chip_scope_lines(chip_arg, by_name, n, argv + optind))) {
		free_ids(ids);
		return r;
	}
	r = parse_line_args(n, argv + optind, &base, &lines, &settings);
	new_lines = calloc(n, sizeof(*new_lines));
	new_settings = calloc(n, sizeof(*new_settings));
	own = calloc(n, sizeof(*own));
	own_idx = calloc(n, sizeof(*own_idx));
	if (r || !new_lines || !new_settings || !own || !own_idx) {
		ret = r ? r : EX_ERROR;
		goto done;
	}
	/* 1. Find out everything, change nothing: the lines of your persistent requests
	 * must be able to take the value (outputs, or settings given to make them so). */
	for (int i = 0; i < n; i++) {
		r = own_persistent(lines[i], &own[i], &own_idx[i]);
		if (r < 0) {
			ret = fail_line(ids[i], r);
			goto done;
		}
		if (!own[i]) {
			new_lines[n_new] = lines[i];
			new_settings[n_new++] = settings[i];
			continue;
		}
		if (!given) {
			char *dir = line_str(lines[i], "Direction");
			bool input = dir && strcmp(dir, "output") != 0;

			free(dir);
			if (input) {
				fprintf(stderr, "gpiobrokerctl: set: %s is an input of your request %s: "
						"nothing was set; make it an output with: gpiobrokerctl "
						"reconfigure --output %s=%d\n", ids[i],
					short_id(gpiobroker_request_get_path(own[i])), ids[i],
					settings[i].value);
				ret = EX_ERROR;
				goto done;
			}
		}
	}
	/* 2. The new request: if the broker refuses it, nothing has been driven. */
	if (n_new) {
		req = gpiobroker_request_array(B, n_new, new_lines, new_settings, label,
					       GPIOBROKER_REQUEST_PERSISTENT);
		if (!req) {
			ret = fail_request(n_new, new_lines, -errno, true, "set");
			goto done;
		}
	}
	/* 3. The held lines: settings given are applied (a reconfigure), else the value. */
	for (int i = 0; i < n; i++) {
		if (!own[i])
			continue;
		if (given)
			r = gpiobroker_reconfigure(own[i], 1, &own_idx[i], &settings[i]);
		else
			r = gpiobroker_set_value(own[i], own_idx[i], settings[i].value);
		if (r < 0) {
			ret = fail(ids[i], r);
			if (req) {
				/* Undo the new request: all or nothing. */
				gpiobroker_free(req);
				req = NULL;
			}
			goto done;
		}
	}
	/* 4. Say where the lines are held: the same on every call. */
	for (int i = 0, k = 0; i < n; i++) {
		const char *path = own[i] ? gpiobroker_request_get_path(own[i]) :
				   gpiobroker_request_get_path(req);
		bool seen = false;

		if (tty) {
			printf("%s=%d, held by request %s (persistent): gpiobrokerctl release %s\n",
			       ids[i], settings[i].value, short_id(path), short_id(path));
			continue;
		}
		for (int j = 0; j < i; j++) {
			const char *pj = own[j] ? gpiobroker_request_get_path(own[j]) :
					 gpiobroker_request_get_path(req);

			seen = seen || strcmp(pj, path) == 0;
		}
		if (!seen)
			printf("%s%s", k++ ? " " : "", short_id(path));
		if (i == n - 1)
			printf("\n");
	}
	fflush(stdout);
	if (hold > 0)
		sleep_us((uint64_t)hold);
done:
	for (int i = 0; own && i < n; i++)
		gpiobroker_request_close(own[i]);
	gpiobroker_request_close(req);
	free(own);
	free(own_idx);
	free(lines);
	free(settings);
	free(new_lines);
	free(new_settings);
	free_ids(ids);
	return ret;
}

/* --- reconfigure ------------------------------------------------------------------------ */

const char usage_reconfigure[] = "gpiobrokerctl reconfigure [SETTINGS] ID|PATH|LINE[=VALUE]";
const char help_reconfigure[] =
	"Change settings of a request's lines: all of them for a request (ID or PATH),\n"
	"one for a LINE held through the broker. Only the settings given change; --output\n"
	"drives the line to 0 unless LINE=VALUE gives the value.\n" SETTINGS_HELP;

int cmd_reconfigure(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, SETTINGS_OPTS, { 0 } };
	struct gpiobroker_line_settings base, *s;
	struct gpiobroker_request *req;
	unsigned int one;
	char *target, *eq;
	int c, r, idx, ret = EX_OK;
	size_t n;

	gpiobroker_line_settings_init(&base);
	while ((c = getopt_long(argc, argv, "+:" SETTINGS_LETTERS, opts, NULL)) != -1)
		if ((r = settings_opt(c, optarg, &base, NULL)) != 1)
			return r ? r : opt_error(c, argv, opts);
	if (argc - optind != 1)
		return usage_error("one request (ID or PATH) or LINE expected");
	target = argv[optind];
	eq = strrchr(target, '=');
	if (eq && !strchr(eq, '/')) {
		int v = parse_value(eq + 1);

		if (v < 0)
			return usage_error("bad value '%s' in %s (allowed: 0, 1, active, inactive, on, off)",
					   eq + 1, target);
		*eq = '\0';
		base.direction = GPIOBROKER_DIRECTION_OUTPUT;
		base.value = v;
	}
	r = open_target(target, &req, &idx);
	if (r)
		return r;
	n = idx >= 0 ? 1 : gpiobroker_request_get_num_lines(req);
	s = calloc(n, sizeof(*s));
	if (!s) {
		gpiobroker_request_close(req);
		return EX_ERROR;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = base;
	one = (unsigned int)idx;
	r = gpiobroker_reconfigure(req, n, idx >= 0 ? &one : NULL, s);
	if (r < 0)
		ret = fail(target, r);
	free(s);
	gpiobroker_request_close(req);
	return ret;
}
