/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: detect, info, find, status, notify (reading the object tree). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "ctl.h"

/* --- detect ------------------------------------------------------------------------- */

const char usage_detect[] = "gpiobrokerctl detect [--json]";
const char help_detect[] =
	"List the GPIO chips the broker serves, as gpiodetect: NAME [LABEL] (N lines).\n"
	"      --json               one JSON array of {name, label, num_lines, path}\n";

int cmd_detect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	bool json = false;
	struct tree t;
	int c, r;

	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c == OPT_JSON)
			json = true;
		else
			return opt_error(c, argv, opts);
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	r = load_tree(&t, false);
	if (r < 0)
		return exit_of(r);
	if (json)
		putchar('[');
	for (size_t i = 0; i < t.n_chips; i++) {
		const struct chipinfo *ch = &t.chips[i];

		if (json) {
			printf("%s{\"name\":", i ? "," : "");
			json_str(ch->name);
			printf(",\"label\":");
			json_str(ch->label);
			printf(",\"num_lines\":%" PRIu32 ",\"path\":", ch->num_lines);
			json_str(ch->path);
			putchar('}');
		} else {
			printf("%s [%s] (%" PRIu32 " lines)\n", ch->name, ch->label, ch->num_lines);
		}
	}
	if (json)
		printf("]\n");
	tree_free(&t);
	return EX_OK;
}

/* --- info ------------------------------------------------------------------------- */

static const char *period_str(uint64_t us, char *buf, size_t size)
{
	if (us % 1000000 == 0)
		snprintf(buf, size, "%" PRIu64 "s", us / 1000000);
	else if (us % 1000 == 0)
		snprintf(buf, size, "%" PRIu64 "ms", us / 1000);
	else
		snprintf(buf, size, "%" PRIu64 "us", us);
	return buf;
}

/* The attributes as gpioinfo prints them, then the broker's own (alias, request). */
static void print_attrs(const struct lineinfo *l, bool unquoted)
{
	char buf[32];

	printf("%s", l->direction && strcmp(l->direction, "output") == 0 ? "output" : "input");
	if (l->active_low)
		printf(" active-low");
	if (l->drive && (strcmp(l->drive, "open-drain") == 0 || strcmp(l->drive, "open-source") == 0))
		printf(" drive=%s", l->drive);
	if (l->bias && (strcmp(l->bias, "pull-up") == 0 || strcmp(l->bias, "pull-down") == 0 ||
			strcmp(l->bias, "disabled") == 0))
		printf(" bias=%s", l->bias);
	if (l->edge && strcmp(l->edge, "none") != 0 && *l->edge)
		printf(" edges=%s", l->edge);
	if (l->clock && (strcmp(l->clock, "realtime") == 0 || strcmp(l->clock, "hte") == 0))
		printf(" event-clock=%s", l->clock);
	if (l->debounce)
		printf(" debounce-period=%s", period_str(l->debounce, buf, sizeof(buf)));
	if (l->used) {
		printf(" consumer=");
		print_quoted(l->consumer && *l->consumer ? l->consumer : "kernel", unquoted);
	}
	if (l->alias && *l->alias) {
		printf(" alias=");
		print_quoted(l->alias, unquoted);
	}
	if (l->request && strcmp(l->request, "/") != 0)
		printf(" request=%s", short_id(l->request));
}

/* The name column: 16 wide, quoted unless asked not to, "unnamed" never quoted. */
static void print_name_col(const struct lineinfo *l, bool unquoted)
{
	char q[20];
	const char *name = l->name && *l->name ? l->name : NULL;

	if (!name)
		printf("%-16s\t", "unnamed");
	else if (unquoted)
		printf("%-16s\t", name);
	else if (strlen(name) <= 14) {
		snprintf(q, sizeof(q), "\"%s\"", name);
		printf("%-16s\t", q);
	} else
		printf("\"%s\"\t", name);
}

static void print_access_rows(const char *line_path)
{
	struct access a;

	get_access(line_path, &a);
	if (!a.known)
		printf("\t\taccess: unknown (%s)\n", a.error);
	else if (a.may_use) {
		printf("\t\taccess: allowed");
		if (*a.entry)
			printf(" by %s: directions=%s edges=%s persistent=%s%s", a.entry,
			       *a.directions ? a.directions : "-", *a.edges ? a.edges : "none",
			       a.persistent ? "yes" : "no", a.direct ? " direct=yes" : "");
		else if (a.bypass)
			printf(" (root bypass)");
		printf("\n");
	} else
		printf("\t\taccess: denied: %s\n", *a.reason ? a.reason : "no policy entry allows it");
}

static void json_line(const struct lineinfo *l, const struct chipinfo *ch, bool verbose)
{
	printf("{\"chip\":");
	json_str(ch ? ch->name : "");
	printf(",\"offset\":%" PRIu32 ",\"name\":", l->offset);
	json_str_or_null(l->name);
	printf(",\"direction\":");
	json_str(l->direction ? l->direction : "");
	printf(",\"active_low\":%s,\"edges\":", l->active_low ? "true" : "false");
	json_str(l->edge ? l->edge : "");
	printf(",\"bias\":");
	json_str(l->bias ? l->bias : "");
	printf(",\"drive\":");
	json_str(l->drive ? l->drive : "");
	printf(",\"event_clock\":");
	json_str(l->clock ? l->clock : "");
	printf(",\"debounce_period_us\":%" PRIu64 ",\"used\":%s,\"consumer\":", l->debounce,
	       l->used ? "true" : "false");
	json_str_or_null(l->consumer);
	printf(",\"alias\":");
	json_str_or_null(l->alias);
	printf(",\"request\":");
	if (l->request && strcmp(l->request, "/") != 0)
		json_str(short_id(l->request));
	else
		printf("null");
	printf(",\"request_label\":");
	json_str_or_null(l->request && strcmp(l->request, "/") != 0 ? l->request_label : NULL);
	printf(",\"path\":");
	json_str(l->path);
	if (verbose) {
		struct access a;

		get_access(l->path, &a);
		printf(",\"access\":{\"known\":%s,\"may_use\":%s,\"persistent\":%s,\"direct\":%s,"
		       "\"entry\":",
		       a.known ? "true" : "false", a.may_use ? "true" : "false",
		       a.persistent ? "true" : "false", a.direct ? "true" : "false");
		json_str_or_null(a.entry);
		printf(",\"reason\":");
		json_str_or_null(a.reason);
		printf(",\"directions\":");
		json_str_or_null(a.directions);
		printf(",\"edges\":");
		json_str_or_null(a.edges);
		printf("}");
	}
	printf("}");
}

const char usage_info[] =
	"gpiobrokerctl info [-c CHIP] [--unquoted] [--verbose] [--json] [LINE]...";
const char help_info[] =
	"Show lines as gpioinfo does: with no LINE every chip (\"CHIP - N lines:\" and a\n"
	"row per line), with LINEs one row each (\"CHIP OFFSET NAME ATTRIBUTES\"). After\n"
	"gpioinfo's attributes come the broker's: alias=\"...\" (the policy's name for the\n"
	"line) and request=ID (the broker's request holding it).\n"
	"  -c, --chip CHIP          only this chip (name, number, label or /dev path); LINEs\n"
	"                           may then be offsets\n"
	"      --by-name            LINEs are names even if they look like offsets\n"
	"      --unquoted           don't quote line and consumer names\n"
	"      --verbose            add what the policy lets you do with each LINE\n"
	"      --json               one JSON array of line objects\n"
	"  -v, --version            print the version\n";

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "chip", required_argument, NULL, 'c' }, { "by-name", no_argument, NULL, OPT_BY_NAME },
		{ "unquoted", no_argument, NULL, OPT_UNQUOTED }, { "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "json", no_argument, NULL, OPT_JSON }, { "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	const char *chip_arg = NULL;
	const struct chipinfo *only = NULL;
	bool unquoted = false, verbose = false, json = false, by_name = false, first = true;
	struct tree t;
	int c, r, ret = EX_OK, n;
	char **paths = NULL;

	while ((c = getopt_long(argc, argv, "+:c:s", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			chip_arg = optarg;
			break;
		case OPT_BY_NAME:
			by_name = true;
			break;
		case OPT_UNQUOTED:
			unquoted = true;
			break;
		case OPT_VERBOSE:
			verbose = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 's':
			return refuse_opt("-s/--strict", "the broker resolves every line reference to "
					  "one line (aliases and names are unique there)");
		default:
			return opt_error(c, argv, opts);
		}
	}
	argv += optind;
	n = argc - optind;
	if (chip_arg && n > 0 && (r = chip_scope_lines(chip_arg, by_name, n, argv)))
		return r;
	r = load_tree(&t, false);
	if (r < 0)
		return exit_of(r);
	if (chip_arg && !(only = resolve_chip(&t, chip_arg))) {
		tree_free(&t);
		return EX_NOTFOUND;
	}
	/* Each LINE resolved by the broker (alias, name, CHIP:OFFSET, path). */
	paths = calloc(n + 1, sizeof(*paths));
	for (int a = 0; paths && a < n; a++) {
		r = gpiobroker_find_line(B, argv[a], &paths[a], NULL, NULL);
		if (r < 0)
			ret = fail_line(argv[a], r);
	}
	if (!paths || ret) {
		free(paths);
		tree_free(&t);
		return ret ? ret : EX_ERROR;
	}
	if (json)
		putchar('[');
	if (n > 0) {
		/* The one-row form, in argument order. */
		for (int a = 0; a < n; a++) {
			for (size_t i = 0; i < t.n_lines; i++) {
				const struct lineinfo *l = &t.lines[i];
				const struct chipinfo *ch = tree_chip_by_path(&t, l->chip);

				if (strcmp(l->path, paths[a]) != 0)
					continue;
				if (json) {
					printf("%s", first ? "" : ",");
					json_line(l, ch, verbose);
				} else {
					printf("%s %" PRIu32 "\t", ch ? ch->name : "?", l->offset);
					print_name_col(l, unquoted);
					print_attrs(l, unquoted);
					printf("\n");
					if (verbose)
						print_access_rows(l->path);
				}
				first = false;
			}
		}
	} else {
		for (size_t c2 = 0; c2 < t.n_chips; c2++) {
			const struct chipinfo *ch = &t.chips[c2];

			if (only && only != ch)
				continue;
			if (!json)
				printf("%s - %" PRIu32 " lines:\n", ch->name, ch->num_lines);
			for (size_t i = 0; i < t.n_lines; i++) {
				const struct lineinfo *l = &t.lines[i];

				if (!l->chip || strcmp(l->chip, ch->path) != 0)
					continue;
				if (json) {
					printf("%s", first ? "" : ",");
					json_line(l, ch, verbose);
					first = false;
					continue;
				}
				printf("\tline %3" PRIu32 ":\t", l->offset);
				print_name_col(l, unquoted);
				print_attrs(l, unquoted);
				printf("\n");
				if (verbose)
					print_access_rows(l->path);
			}
		}
	}
	if (json)
		printf("]\n");
	for (int a = 0; a < n; a++)
		free(paths[a]);
	free(paths);
	tree_free(&t);
	return ret;
}

/* --- find ------------------------------------------------------------------------- */

const char usage_find[] = "gpiobrokerctl find [--json] LINE";
const char help_find[] =
	"Print the chip and offset of a line (alias, name, CHIP:OFFSET or path), as gpiofind.\n"
	"      --json               {\"chip\":..., \"offset\":..., \"path\":...}\n";

int cmd_find(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	char *chip = NULL, *path = NULL;
	bool json = false;
	unsigned int off;
	int c, r;

	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c == OPT_JSON)
			json = true;
		else
			return opt_error(c, argv, opts);
	}
	if (argc - optind != 1)
		return usage_error("one LINE expected");
	r = gpiobroker_find_line(B, argv[optind], &path, &chip, &off);
	if (r < 0)
		return fail_line(argv[optind], r);
	if (json) {
		printf("{\"chip\":");
		json_str(chip);
		printf(",\"offset\":%u,\"path\":", off);
		json_str(path);
		printf("}\n");
	} else {
		printf("%s %u\n", chip, off);
	}
	free(chip);
	free(path);
	return EX_OK;
}

/* --- status ----------------------------------------------------------------------- */

static int count_watchers(const char *line_path)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *owner;
	uint32_t uid;
	int r, n = 0;

	r = sd_bus_get_property(gpiobroker_get_bus(B), GB_BUS_NAME, line_path, GB_IFACE_LINE,
				"Watchers", &e, &reply, "a(su)");
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "(su)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(su)", &owner, &uid)) > 0)
		n++;
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return n;
}

/* µs since the epoch as local time, or "never" for 0. */
static void print_usec_time(uint64_t usec)
{
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;
	char buf[64];

	if (!usec || !localtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", &tm))
		printf("never");
	else
		printf("%s", buf);
}

/* An array of strings (policy errors, warnings): a JSON array, or one per line. */
static int print_strv(sd_bus_message *reply, bool json)
{
	const char *item;
	int r, n = 0;

	r = sd_bus_message_enter_container(reply, 'a', "s");
	if (json)
		putchar('[');
	while (r >= 0 && (r = sd_bus_message_read(reply, "s", &item)) > 0) {
		if (json)
			printf("%s", n ? "," : ""), json_str(item);
		else
			printf("\n  %s", item);
		n++;
	}
	if (json)
		putchar(']');
	else if (!n)
		printf(" none");
	return r < 0 ? r : sd_bus_message_exit_container(reply);
}

/* Manager.PolicyStatus (a{sv}) if the broker has it: printed key by key, simple
 * values as they are. -1 if the broker does not report it. */
static int print_policy_status(bool json)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r, n = 0;

	r = sd_bus_get_property(gpiobroker_get_bus(B), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
				"PolicyStatus", &e, &reply, "a{sv}");
	sd_bus_error_free(&e);
	if (r < 0)
		return -1;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *contents;
		char type;

		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0)
			r = sd_bus_message_peek_type(reply, &type, &contents);
		if (r < 0)
			break;
		if (json)
			printf("%s", n ? "," : "");
		if (json)
			json_str(key), putchar(':');
		else
			printf(strcmp(contents, "as") == 0 ? "policy %s:" : "policy %s: ", key);
		r = sd_bus_message_enter_container(reply, 'v', contents);
		if (r >= 0 && (contents[0] == 's' || contents[0] == 'o')) {
			const char *s;

			r = sd_bus_message_read_basic(reply, contents[0], &s);
			if (json)
				json_str(s);
			else
				printf("%s", s);
		} else if (r >= 0 && contents[0] == 'b') {
			int b;

			r = sd_bus_message_read_basic(reply, 'b', &b);
			printf("%s", json ? (b ? "true" : "false") : (b ? "yes" : "no"));
		} else if (r >= 0 && (contents[0] == 'u' || contents[0] == 'i')) {
			uint32_t u;

			r = sd_bus_message_read_basic(reply, contents[0], &u);
			printf(contents[0] == 'u' ? "%" PRIu32 : "%" PRId32, u);
		} else if (r >= 0 && contents[0] == 't') {
			uint64_t u;

			r = sd_bus_message_read_basic(reply, 't', &u);
			if (!json && strcmp(key, "loaded-at") == 0)
				print_usec_time(u);
			else
				printf("%" PRIu64, u);
		} else if (r >= 0 && strcmp(contents, "as") == 0) {
			r = print_strv(reply, json);
		} else if (r >= 0) {
			r = sd_bus_message_skip(reply, contents);
			printf(json ? "null" : "(type %s)", contents);
		}
		if (!json)
			printf("\n");
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		n++;
	}
	sd_bus_message_unref(reply);
	return n;
}

/* The caller's primary and supplementary groups, as the bus will report them. */
static void print_groups(bool json)
{
	gid_t groups[256];
	int n = getgroups(256, groups);

	printf(json ? "%u" : " %u", (unsigned)getgid());
	for (int i = 0; i < n; i++)
		if (groups[i] != getgid())
			printf(",%u", (unsigned)groups[i]);
}

const char usage_status[] = "gpiobrokerctl status [--json]";
const char help_status[] =
	"Is the broker up (exit code 7 if not), its version, chips and lines, requests\n"
	"and watchers, your uid and the lines the policy lets you use, and the policy's\n"
	"status if the broker reports one.\n"
	"      --json               one JSON object\n";

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	struct gpiobroker_request_info *info = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *version = NULL;
	bool json = false, first = true;
	int c, r, n_req, watchers = 0;
	struct tree t;

	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c == OPT_JSON)
			json = true;
		else
			return opt_error(c, argv, opts);
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	r = load_tree(&t, true);
	if (r < 0) {
		if (json)
			printf("{\"running\":false,\"uid\":%u}\n", (unsigned)getuid());
		else
			printf("gpiod-broker: not running\n");
		return r == -EHOSTDOWN ? EX_NOBROKER : exit_of(r);
	}
	sd_bus_get_property_string(gpiobroker_get_bus(B), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
				   "Version", &e, &version);
	sd_bus_error_free(&e);
	n_req = gpiobroker_list_requests(B, &info);
	for (size_t i = 0; i < t.n_lines; i++)
		watchers += count_watchers(t.lines[i].path);
	if (json) {
		printf("{\"running\":true,\"version\":");
		json_str_or_null(version);
		printf(",\"chips\":%zu,\"lines\":%zu,\"requests\":%d,\"watchers\":%d,\"uid\":%u,"
		       "\"groups\":[", t.n_chips, t.n_lines, n_req < 0 ? 0 : n_req, watchers,
		       (unsigned)getuid());
		print_groups(true);
		printf("],\"usable_lines\":[");
	} else {
		printf("gpiod-broker: running, version %s\n", version ? version : "unknown");
		printf("chips: %zu, lines: %zu\n", t.n_chips, t.n_lines);
		printf("requests: %d, watchers: %d\n", n_req < 0 ? 0 : n_req, watchers);
		printf("you: uid %u, groups", (unsigned)getuid());
		print_groups(false);
		printf("; lines you may use:");
	}
	for (size_t i = 0; i < t.n_lines; i++) {
		const struct lineinfo *l = &t.lines[i];
		const struct chipinfo *ch = tree_chip_by_path(&t, l->chip);
		struct access a;

		get_access(l->path, &a);
		if (!a.known || !a.may_use)
			continue;
		if (json) {
			printf("%s{\"chip\":", first ? "" : ",");
			json_str(ch ? ch->name : "");
			printf(",\"offset\":%" PRIu32 ",\"name\":", l->offset);
			json_str_or_null(l->name);
			printf(",\"alias\":");
			json_str_or_null(l->alias);
			printf(",\"persistent\":%s}", a.persistent ? "true" : "false");
		} else {
			printf(" %s", l->alias && *l->alias ? l->alias :
				      l->name && *l->name ? l->name : "");
			if (!(l->alias && *l->alias) && !(l->name && *l->name))
				printf("%s:%" PRIu32, ch ? ch->name : "?", l->offset);
		}
		first = false;
	}
	if (json) {
		printf("],\"policy_status\":");
		printf("{");
		if (print_policy_status(true) < 0)
			printf("},\"policy_status_reported\":false}\n");
		else
			printf("},\"policy_status_reported\":true}\n");
	} else {
		printf("%s\n", first ? " none" : "");
		if (print_policy_status(false) < 0)
			printf("policy status: the broker does not report it\n");
	}
	if (n_req > 0)
		gpiobroker_request_info_free(info, n_req);
	free(version);
	tree_free(&t);
	return EX_OK;
}

/* --- notify ------------------------------------------------------------------------- */

struct notify {
	sd_event *loop;
	struct tree t;
	char **paths; /* the lines followed; NULL: all */
	int n_paths;
	const char *format;
	bool json, unquoted, quiet;
	unsigned events; /* bit per event type wanted */
	unsigned long left;
	uint64_t idle_us;
	sd_event_source *idle;
	int status;
};

enum { NE_REQUESTED = 1, NE_RELEASED = 2, NE_RECONFIGURED = 3 };
static const char *const ne_names[] = { "", "requested", "released", "reconfigured" };

static struct lineinfo *notify_line(struct notify *nf, const char *path)
{
	for (size_t i = 0; i < nf->t.n_lines; i++)
		if (strcmp(nf->t.lines[i].path, path) == 0)
			return &nf->t.lines[i];
	return NULL;
}

static void print_time(uint64_t ns, char spec)
{
	if (spec == 'S') {
		printf("%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
	} else {
		struct timespec now_rt, now_mono;
		struct tm tm;
		char buf[64];
		time_t s;
		uint64_t rt;

		/* The timestamps are monotonic: shown as wall-clock time by the offset now. */
		clock_gettime(CLOCK_REALTIME, &now_rt);
		clock_gettime(CLOCK_MONOTONIC, &now_mono);
		rt = (uint64_t)now_rt.tv_sec * 1000000000 + (uint64_t)now_rt.tv_nsec -
		     ((uint64_t)now_mono.tv_sec * 1000000000 + (uint64_t)now_mono.tv_nsec - ns);
		s = (time_t)(rt / 1000000000);
		if (spec == 'U')
			gmtime_r(&s, &tm);
		else
			localtime_r(&s, &tm);
		strftime(buf, sizeof(buf), "%FT%T", &tm);
		printf("%s.%09" PRIu64 "%s", buf, rt % 1000000000, spec == 'U' ? "Z" : "");
	}
}

static int reset_idle(struct notify *nf);

static int on_line_changed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
	struct notify *nf = userdata;
	const char *iface, *path = sd_bus_message_get_path(m);
	struct lineinfo *l;
	const struct chipinfo *ch;
	int r, ev = 0, used = -1, was;
	struct timespec ts;
	uint64_t ns;
	bool settings = false;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	if (!path || !(l = notify_line(nf, path)))
		return 0;
	if (nf->paths) {
		bool want = false;

		for (int i = 0; i < nf->n_paths; i++)
			want = want || strcmp(nf->paths[i], path) == 0;
		if (!want)
			return 0;
	}
	r = sd_bus_message_read(m, "s", &iface);
	if (r < 0 || strcmp(iface, GB_IFACE_LINE) != 0)
		return 0;
	/* The broker sends every property each time: what changed is told by the
	 * line's previous state. */
	was = l->used;
	r = sd_bus_message_enter_container(m, 'a', "{sv}");
	while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *key, *contents;
		char type;
		char **dst = NULL;

		r = sd_bus_message_read(m, "s", &key);
		if (r < 0)
			break;
		sd_bus_message_peek_type(m, &type, &contents);
		if (strcmp(key, "Used") == 0) {
			r = sd_bus_message_read(m, "v", "b", &used);
			l->used = used;
		} else if (strcmp(key, "ActiveLow") == 0) {
			r = sd_bus_message_read(m, "v", "b", &l->active_low);
			settings = true;
		} else if (strcmp(key, "DebouncePeriodUs") == 0) {
			r = sd_bus_message_read(m, "v", "t", &l->debounce);
			settings = true;
		} else {
			if (strcmp(key, "Direction") == 0)
				dst = &l->direction;
			else if (strcmp(key, "Edge") == 0)
				dst = &l->edge;
			else if (strcmp(key, "Bias") == 0)
				dst = &l->bias;
			else if (strcmp(key, "Drive") == 0)
				dst = &l->drive;
			else if (strcmp(key, "EventClock") == 0)
				dst = &l->clock;
			else if (strcmp(key, "Consumer") == 0)
				dst = &l->consumer;
			else if (strcmp(key, "Request") == 0)
				dst = &l->request;
			if (dst && (contents[0] == 's' || contents[0] == 'o')) {
				const char *s;

				r = sd_bus_message_read(m, "v", contents, &s);
				if (r >= 0) {
					free(*dst);
					*dst = strdup(s);
				}
				if (strcmp(key, "Consumer") != 0 && strcmp(key, "Request") != 0)
					settings = true;
			} else {
				r = sd_bus_message_skip(m, "v");
			}
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	if (used == 1 && !was)
		ev = NE_REQUESTED;
	else if (used == 0 && was)
		ev = NE_RELEASED;
	else if (settings && l->used && was)
		ev = NE_RECONFIGURED;
	if (!ev || !(nf->events & (1u << ev)))
		return 0;
	reset_idle(nf);
	ch = tree_chip_by_path(&nf->t, l->chip);
	if (nf->quiet) {
		/* counted, not shown */
	} else if (nf->json) {
		printf("{\"timestamp_ns\":%" PRIu64 ",\"event\":\"%s\",\"line\":", ns, ne_names[ev]);
		json_str_or_null(l->name);
		printf(",\"alias\":");
		json_str_or_null(l->alias);
		printf(",\"chip\":");
		json_str(ch ? ch->name : "");
		printf(",\"offset\":%" PRIu32 ",\"consumer\":", l->offset);
		json_str_or_null(l->used ? l->consumer : NULL);
		printf(",\"request\":");
		if (l->used && l->request && strcmp(l->request, "/") != 0)
			json_str(short_id(l->request));
		else
			printf("null");
		printf("}\n");
	} else if (nf->format) {
		for (const char *f = nf->format; *f; f++) {
			if (*f != '%' || !f[1]) {
				putchar(*f);
				continue;
			}
			switch (*++f) {
			case 'o': printf("%" PRIu32, l->offset); break;
			case 'l': printf("%s", l->name && *l->name ? l->name : "unnamed"); break;
			case 'c': printf("%s", ch ? ch->name : "?"); break;
			case 'e': printf("%d", ev); break;
			case 'E': printf("%s", ne_names[ev]); break;
			case 'a': print_attrs(l, nf->unquoted); break;
			case 'C': printf("%s", l->used && l->consumer && *l->consumer ? l->consumer : "unused"); break;
			case 'S': case 'U': case 'L': print_time(ns, *f); break;
			case '%': putchar('%'); break;
			default: putchar('%'); putchar(*f); break;
			}
		}
		putchar('\n');
	} else {
		print_time(ns, 'S');
		printf("\t%s\t", ne_names[ev]);
		if (l->name && *l->name)
			print_quoted(l->name, nf->unquoted);
		else
			printf("%s %" PRIu32, ch ? ch->name : "?", l->offset);
		if (ev != NE_RELEASED) {
			printf("\t");
			print_attrs(l, nf->unquoted);
		}
		printf("\n");
	}
	fflush(stdout);
	if (nf->left && --nf->left == 0)
		sd_event_exit(nf->loop, 0);
	return 0;
}

static int on_idle(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct notify *nf = userdata;

	return sd_event_exit(nf->loop, 0); /* ran as asked: exit 0 */
}

static int reset_idle(struct notify *nf)
{
	uint64_t now;

	if (!nf->idle_us)
		return 0;
	sd_event_now(nf->loop, CLOCK_MONOTONIC, &now);
	if (nf->idle)
		return sd_event_source_set_time(nf->idle, now + nf->idle_us) < 0 ? -1 :
		       sd_event_source_set_enabled(nf->idle, SD_EVENT_ONESHOT);
	return sd_event_add_time(nf->loop, &nf->idle, CLOCK_MONOTONIC, now + nf->idle_us, 0,
				 on_idle, nf);
}

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

int cmd_notify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' }, { "num-events", required_argument, NULL, 'n' },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE },
		{ "format", required_argument, NULL, 'F' }, { "chip", required_argument, NULL, 'c' },
		{ "by-name", no_argument, NULL, OPT_BY_NAME }, { "unquoted", no_argument, NULL, OPT_UNQUOTED },
		{ "quiet", no_argument, NULL, 'q' }, { "json", no_argument, NULL, OPT_JSON },
		{ "strict", no_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	struct notify nf = { .status = EX_OK };
	const char *chip_arg = NULL;
	bool by_name = false;
	sd_bus_slot *slot = NULL;
	int64_t p;
	int c, r, n, v;
	sigset_t mask;

	while ((c = getopt_long(argc, argv, "+:e:n:F:c:qs", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			v = pick(optarg, ne_names + 1, 3);
			if (v < 0)
				return usage_error("bad event '%s' (allowed: requested, released, reconfigured)",
						   optarg);
			nf.events |= 1u << (v + 1);
			break;
		case 'n':
			if (parse_count(optarg, &nf.left) < 0)
				return usage_error("bad number of events '%s' (a positive integer)", optarg);
			break;
		case OPT_IDLE:
			p = parse_period(optarg, 1000);
			if (p <= 0)
				return usage_error("bad idle timeout '%s' (a period: 10ms, 5s; bare number: ms)",
						   optarg);
			nf.idle_us = (uint64_t)p;
			break;
		case 'F':
			nf.format = optarg;
			break;
		case 'c':
			chip_arg = optarg;
			break;
		case OPT_BY_NAME:
			by_name = true;
			break;
		case OPT_UNQUOTED:
			nf.unquoted = true;
			break;
		case 'q':
			nf.quiet = true;
			break;
		case OPT_JSON:
			nf.json = true;
			break;
		case 's':
			return refuse_opt("-s/--strict", "the broker resolves every line reference to one line");
		default:
			return opt_error(c, argv, opts);
		}
	}
	if (!nf.events)
		nf.events = 0xe;
	n = argc - optind;
	argv += optind;
	if (chip_arg && n > 0 && (r = chip_scope_lines(chip_arg, by_name, n, argv)))
		return r;
	if (n > 0) {
		nf.paths = calloc(n, sizeof(*nf.paths));
		if (!nf.paths)
			return EX_ERROR;
		for (int i = 0; i < n; i++) {
			r = gpiobroker_find_line(B, argv[i], &nf.paths[i], NULL, NULL);
			if (r < 0)
				return fail_line(argv[i], r);
			nf.n_paths = i + 1;
		}
	}
	r = load_tree(&nf.t, false);
	if (r < 0)
		return exit_of(r);
	if (chip_arg && n == 0) {
		/* All lines of one chip. */
		const struct chipinfo *ch = resolve_chip(&nf.t, chip_arg);

		if (!ch)
			return EX_NOTFOUND;
		nf.paths = calloc(nf.t.n_lines, sizeof(*nf.paths));
		for (size_t i = 0; nf.paths && i < nf.t.n_lines; i++)
			if (nf.t.lines[i].chip && strcmp(nf.t.lines[i].chip, ch->path) == 0)
				nf.paths[nf.n_paths++] = strdup(nf.t.lines[i].path);
	}
	r = sd_event_new(&nf.loop);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (r >= 0)
		r = sd_bus_attach_event(gpiobroker_get_bus(B), nf.loop, 0);
	if (r >= 0)
		r = sd_event_add_signal(nf.loop, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(nf.loop, NULL, SIGTERM, NULL, NULL);
	if (r >= 0)
		r = sd_bus_match_signal(gpiobroker_get_bus(B), &slot, GB_BUS_NAME, NULL,
					"org.freedesktop.DBus.Properties", "PropertiesChanged",
					on_line_changed, &nf);
	if (r >= 0)
		r = reset_idle(&nf);
	if (r >= 0)
		r = sd_event_loop(nf.loop);
	if (r < 0) {
		fprintf(stderr, "gpiobrokerctl: notify: %s\n", strerror(-r));
		nf.status = EX_ERROR;
	}
	sd_bus_slot_unref(slot);
	sd_bus_detach_event(gpiobroker_get_bus(B));
	sd_event_source_unref(nf.idle);
	sd_event_unref(nf.loop);
	for (int i = 0; i < nf.n_paths; i++)
		free(nf.paths[i]);
	free(nf.paths);
	tree_free(&nf.t);
	return nf.status;
}
