/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: errors, option values, periods, the object tree, handles. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

struct gpiobroker *B;
const char *cur_cmd = "gpiobrokerctl";

/* --- errors -------------------------------------------------------------------- */

int exit_of(int r)
{
	switch (-r) {
	case ENOENT:
		return EX_NOTFOUND;
	case EBUSY:
		return EX_BUSY;
	case EACCES:
	case EPERM:
		return EX_DENIED;
	case EHOSTDOWN:
		return EX_NOBROKER;
	case ETIMEDOUT:
		return EX_TIMEOUT;
	default:
		return EX_ERROR;
	}
}

/* The one wording, wherever the broker turns out to be absent. */
void not_running(void)
{
	fprintf(stderr, "gpiobrokerctl: gpiod-broker is not running (start it, or wait for it: "
			"gpiobrokerctl wait)\n");
}

static bool is_bus_down(const char *name)
{
	return name && (strcmp(name, "org.freedesktop.DBus.Error.ServiceUnknown") == 0 ||
			strcmp(name, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0 ||
			strcmp(name, "org.freedesktop.DBus.Error.NoReply") == 0);
}

static bool is_unknown_object(const char *name)
{
	return name && (strcmp(name, "org.freedesktop.DBus.Error.UnknownObject") == 0 ||
			strcmp(name, "org.freedesktop.DBus.Error.UnknownMethod") == 0 ||
			strcmp(name, "org.freedesktop.DBus.Error.UnknownInterface") == 0 ||
			strcmp(name, "org.freedesktop.DBus.Error.UnknownProperty") == 0);
}

int fail(const char *what, int r)
{
	const char *name = B ? gpiobroker_last_error_name(B) : NULL;
	const char *msg = B ? gpiobroker_last_error_message(B) : NULL;

	if (-r == EHOSTDOWN || is_bus_down(name)) {
		not_running();
		return EX_NOBROKER;
	}
	/* The bus's words for a path nobody serves mean: no such request (or watch). */
	if (is_unknown_object(name)) {
		if (is_request_path(what) || is_number(what))
			fprintf(stderr, "gpiobrokerctl: %s: no request %s (gpiobrokerctl requests lists them)\n",
				cur_cmd, short_id(what));
		else
			fprintf(stderr, "gpiobrokerctl: %s: %s: no such object\n", cur_cmd, what);
		return EX_NOTFOUND;
	}
	if (name && strncmp(name, GB_ERROR_PREFIX, strlen(GB_ERROR_PREFIX)) == 0)
		fprintf(stderr, "gpiobrokerctl: %s: %s: %s (%s)\n", cur_cmd, what, msg ? msg : "",
			name + strlen(GB_ERROR_PREFIX));
	else
		fprintf(stderr, "gpiobrokerctl: %s: %s: %s\n", cur_cmd, what,
			msg && *msg ? msg : strerror(-r));
	return exit_of(r);
}

int fail_line(const char *line, int r)
{
	int ret = fail(line, r);
	struct tree t;
	const char **cands;
	const char *best;
	size_t n = 0;

	if (ret != EX_NOTFOUND || load_tree(&t, true) < 0)
		return ret;
	cands = calloc(2 * t.n_lines + 1, sizeof(*cands));
	for (size_t i = 0; cands && i < t.n_lines; i++) {
		if (t.lines[i].name && *t.lines[i].name)
			cands[n++] = t.lines[i].name;
		if (t.lines[i].alias && *t.lines[i].alias)
			cands[n++] = t.lines[i].alias;
	}
	best = cands ? suggest(line, cands, n) : NULL;
	if (best)
		fprintf(stderr, "gpiobrokerctl: %s: did you mean '%s'?\n", cur_cmd, best);
	free(cands);
	tree_free(&t);
	return ret;
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gpiobrokerctl: %s: ", cur_cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\ntry 'gpiobrokerctl %s --help'\n", cur_cmd);
	va_end(ap);
	return EX_USAGE;
}

int refuse_opt(const char *opt, const char *why)
{
	return usage_error("%s is not supported: %s", opt, why);
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row, best;

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	row = calloc(lb + 1, sizeof(*row));
	if (!row)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

/* The closest candidate, if it is close enough to be what was meant. */
const char *suggest(const char *word, const char *const *cands, size_t n)
{
	size_t best = SIZE_MAX, limit = strlen(word) <= 4 ? 1 : strlen(word) / 3 + 1;
	const char *pick_ = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, cands[i]);

		if (d < best && d > 0) {
			best = d;
			pick_ = cands[i];
		}
	}
	return best <= limit ? pick_ : NULL;
}

int opt_error(int c, char **argv, const struct option *opts)
{
	const char *arg = argv[optind - 1];
	const char *names[128];
	size_t n = 0;

	if (c == ':') {
		if (optopt && optopt < 256)
			return usage_error("option -%c needs a value", optopt);
		return usage_error("option %s needs a value", arg);
	}
	if (optopt && optopt < 256)
		return usage_error("unknown option -%c", optopt);
	for (; opts->name && n < 128; opts++)
		names[n++] = opts->name;
	if (strncmp(arg, "--", 2) == 0) {
		char word[64];
		const char *best;

		snprintf(word, sizeof(word), "%s", arg + 2);
		word[strcspn(word, "=")] = '\0';
		best = suggest(word, names, n);
		if (best)
			return usage_error("unknown option '%s' (did you mean '--%s'?)", arg, best);
	}
	return usage_error("unknown option '%s'", arg);
}

/* --- values, periods, settings ------------------------------------------------------ */

int pick(const char *arg, const char *const names[], int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

/* "0"/"1"/"active"/"inactive"/"on"/"off"/"high"/"low"/"true"/"false" -> 0/1, else -1. */
int parse_value(const char *s)
{
	static const char *const one[] = { "1", "active", "on", "high", "true" };
	static const char *const zero[] = { "0", "inactive", "off", "low", "false" };

	if (pick(s, one, 5) >= 0)
		return 1;
	if (pick(s, zero, 5) >= 0)
		return 0;
	return -1;
}

int64_t parse_period(const char *s, uint64_t bare_us)
{
	char *end;
	double v;
	uint64_t unit = bare_us;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || !(s[0] >= '0' && s[0] <= '9'))
		return -1;
	if (strcmp(end, "s") == 0)
		unit = 1000000;
	else if (strcmp(end, "ms") == 0)
		unit = 1000;
	else if (strcmp(end, "us") == 0)
		unit = 1;
	else if (*end)
		return -1;
	v *= (double)unit;
	if (v > 4e18)
		return -1;
	return (int64_t)(v + 0.5);
}

int parse_count(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || !*s || *end || *out == 0 || s[0] == '-' ? -1 : 0;
}

static int bad_choice(const char *what, const char *arg, const char *const names[], int n)
{
	char allowed[256] = "";
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(allowed + len, sizeof(allowed) - len, "%s%s", i ? ", " : "",
					names[i]);
	return usage_error("bad %s '%s' (allowed: %s)", what, arg, allowed);
}

int settings_opt(int c, const char *arg, struct gpiobroker_line_settings *s, bool *given)
{
	static const char *const edges[] = { "none", "rising", "falling", "both" };
	static const char *const biases[] = { "as-is", "disabled", "pull-up", "pull-down" };
	static const char *const drives[] = { "push-pull", "open-drain", "open-source" };
	static const char *const clocks[] = { "monotonic", "realtime", "hte" };
	int64_t us;
	int v;

	switch (c) {
	case 'i':
		s->direction = GPIOBROKER_DIRECTION_INPUT;
		break;
	case 'o':
		s->direction = GPIOBROKER_DIRECTION_OUTPUT;
		break;
	case 'a':
		s->direction = GPIOBROKER_DIRECTION_AS_IS;
		break;
	case 'l':
		s->active_low = true;
		break;
	case 'e':
		if ((v = pick(arg, edges, 4)) < 0)
			return bad_choice("edges", arg, edges, 4);
		s->edge = (enum gpiobroker_edge)v;
		break;
	case 'b':
		if ((v = pick(arg, biases, 4)) < 0)
			return bad_choice("bias", arg, biases, 4);
		s->bias = (enum gpiobroker_bias)v;
		break;
	case 'd':
		if ((v = pick(arg, drives, 3)) < 0)
			return bad_choice("drive", arg, drives, 3);
		s->drive = (enum gpiobroker_drive)v;
		break;
	case 'E':
		if ((v = pick(arg, clocks, 3)) < 0)
			return bad_choice("event clock", arg, clocks, 3);
		s->event_clock = (enum gpiobroker_event_clock)v;
		break;
	case 'p':
		us = parse_period(arg, 1000);
		if (us < 0 || us > UINT32_MAX)
			return usage_error("bad debounce period '%s' (a period: 10ms, 100us, 1s; "
					   "a bare number is milliseconds)", arg);
		s->debounce_us = (unsigned int)us;
		break;
	case OPT_REFUSED_DEBOUNCE:
		return usage_error("--debounce is gone: use -p/--debounce-period PERIOD "
				   "(10ms, 100us; a bare number is milliseconds)");
	default:
		return 0;
	}
	if (given)
		*given = true;
	return 1;
}

/* --- the object tree (plain property reads) ------------------------------------- */

void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n_chips; i++) {
		free(t->chips[i].path);
		free(t->chips[i].name);
		free(t->chips[i].label);
	}
	for (size_t i = 0; i < t->n_lines; i++) {
		struct lineinfo *l = &t->lines[i];

		free(l->path), free(l->chip), free(l->name), free(l->consumer), free(l->direction);
		free(l->edge), free(l->bias), free(l->drive), free(l->request);
		free(l->request_label), free(l->alias), free(l->clock);
	}
	free(t->chips);
	free(t->lines);
	memset(t, 0, sizeof(*t));
}

struct propmap {
	const char *key;
	char **str;
	int *b;
	uint32_t *u32;
	uint64_t *u64;
};

/* Read one property value (variant) into the matching field, skipping others. */
static int read_prop(sd_bus_message *m, const char *key, const struct propmap *map)
{
	const char *contents;
	char type;
	int r = sd_bus_message_peek_type(m, &type, &contents);

	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(m, 'v', contents);
	if (r < 0)
		return r;
	for (; map->key; map++) {
		if (strcmp(map->key, key) != 0)
			continue;
		if (map->str && (contents[0] == 's' || contents[0] == 'o')) {
			const char *v;

			r = sd_bus_message_read_basic(m, contents[0], &v);
			if (r >= 0 && !(*map->str = strdup(v)))
				r = -ENOMEM;
			goto out;
		}
		if (map->b && contents[0] == 'b') {
			r = sd_bus_message_read_basic(m, 'b', map->b);
			goto out;
		}
		if (map->u32 && contents[0] == 'u') {
			r = sd_bus_message_read_basic(m, 'u', map->u32);
			goto out;
		}
		if (map->u64 && contents[0] == 't') {
			r = sd_bus_message_read_basic(m, 't', map->u64);
			goto out;
		}
	}
	r = sd_bus_message_skip(m, contents);
out:
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(m);
}

static int parse_props(sd_bus_message *m, const struct propmap *map)
{
	int r = sd_bus_message_enter_container(m, 'a', "{sv}");

	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *key;

		r = sd_bus_message_read(m, "s", &key);
		if (r >= 0)
			r = read_prop(m, key, map);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int parse_chip(sd_bus_message *m, struct chipinfo *c)
{
	const struct propmap map[] = {
		{ "Name", &c->name }, { "Label", &c->label }, { "NumLines", .u32 = &c->num_lines }, { 0 }
	};

	return parse_props(m, map);
}

static int parse_line(sd_bus_message *m, struct lineinfo *l)
{
	const struct propmap map[] = {
		{ "Chip", &l->chip }, { "Offset", .u32 = &l->offset }, { "Name", &l->name },
		{ "Used", .b = &l->used }, { "Consumer", &l->consumer }, { "Direction", &l->direction },
		{ "Edge", &l->edge }, { "Bias", &l->bias }, { "Drive", &l->drive },
		{ "ActiveLow", .b = &l->active_low }, { "Request", &l->request },
		{ "RequestLabel", &l->request_label }, { "Alias", &l->alias },
		{ "EventClock", &l->clock }, { "DebouncePeriodUs", .u64 = &l->debounce }, { 0 }
	};

	return parse_props(m, map);
}

static int cmp_chip(const void *a, const void *b)
{
	const struct chipinfo *x = a, *y = b;

	return strverscmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int cmp_line(const void *a, const void *b)
{
	const struct lineinfo *x = a, *y = b;
	int c = strverscmp(x->chip ? x->chip : "", y->chip ? y->chip : "");

	return c ? c : (x->offset > y->offset) - (x->offset < y->offset);
}

int load_tree(struct tree *t, bool quiet)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	memset(t, 0, sizeof(*t));
	r = sd_bus_call_method(gpiobroker_get_bus(B), GB_BUS_NAME, GB_ROOT_PATH,
			       "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &e, &reply, "");
	if (r < 0) {
		bool down = is_bus_down(e.name);

		if (!quiet && down)
			not_running();
		else if (!quiet)
			fprintf(stderr, "gpiobrokerctl: %s: cannot read the broker's objects: %s\n",
				cur_cmd, e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
		return down ? -EHOSTDOWN : r;
	}
	r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}")) > 0) {
		const char *path;

		r = sd_bus_message_read(reply, "o", &path);
		if (r >= 0)
			r = sd_bus_message_enter_container(reply, 'a', "{sa{sv}}");
		while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sa{sv}")) > 0) {
			const char *iface;

			r = sd_bus_message_read(reply, "s", &iface);
			if (r < 0)
				break;
			if (strcmp(iface, GB_IFACE_CHIP) == 0) {
				struct chipinfo *c = realloc(t->chips, (t->n_chips + 1) * sizeof(*c));

				if (!c) {
					r = -ENOMEM;
					break;
				}
				t->chips = c;
				c = &t->chips[t->n_chips++];
				memset(c, 0, sizeof(*c));
				c->path = strdup(path);
				r = parse_chip(reply, c);
			} else if (strcmp(iface, GB_IFACE_LINE) == 0) {
				struct lineinfo *l = realloc(t->lines, (t->n_lines + 1) * sizeof(*l));

				if (!l) {
					r = -ENOMEM;
					break;
				}
				t->lines = l;
				l = &t->lines[t->n_lines++];
				memset(l, 0, sizeof(*l));
				l->path = strdup(path);
				r = parse_line(reply, l);
			} else {
				r = sd_bus_message_skip(reply, "a{sv}");
			}
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	sd_bus_message_unref(reply);
	if (r < 0) {
		if (!quiet)
			fprintf(stderr, "gpiobrokerctl: %s: cannot parse the broker's objects: %s\n",
				cur_cmd, strerror(-r));
		tree_free(t);
		return r;
	}
	for (size_t i = 0; i < t->n_chips; i++) {
		if (!t->chips[i].name)
			t->chips[i].name = strdup("");
		if (!t->chips[i].label)
			t->chips[i].label = strdup("");
	}
	qsort(t->chips, t->n_chips, sizeof(*t->chips), cmp_chip);
	qsort(t->lines, t->n_lines, sizeof(*t->lines), cmp_line);
	return 0;
}

const struct chipinfo *tree_chip_by_path(const struct tree *t, const char *path)
{
	for (size_t i = 0; path && i < t->n_chips; i++)
		if (strcmp(t->chips[i].path, path) == 0)
			return &t->chips[i];
	return NULL;
}

const struct chipinfo *resolve_chip(const struct tree *t, const char *arg)
{
	char want[128];
	const char *names[64];
	const char *best;
	size_t n = 0;

	/* As the libgpiod tools: "0", "gpiochip0" and "/dev/gpiochip0" are one chip. */
	if (is_number(arg))
		snprintf(want, sizeof(want), "gpiochip%s", arg);
	else if (strncmp(arg, "/dev/", 5) == 0)
		snprintf(want, sizeof(want), "%s", arg + 5);
	else
		snprintf(want, sizeof(want), "%s", arg);
	for (size_t i = 0; i < t->n_chips; i++)
		if (strcmp(t->chips[i].name, want) == 0)
			return &t->chips[i];
	for (size_t i = 0; i < t->n_chips; i++)
		if (strcmp(t->chips[i].label, arg) == 0)
			return &t->chips[i];
	for (size_t i = 0; i < t->n_chips && n + 2 <= 64; i++) {
		names[n++] = t->chips[i].name;
		names[n++] = t->chips[i].label;
	}
	best = suggest(arg, names, n);
	if (best)
		fprintf(stderr, "gpiobrokerctl: %s: no chip '%s' served by the broker (did you mean '%s'?)\n",
			cur_cmd, arg, best);
	else
		fprintf(stderr, "gpiobrokerctl: %s: no chip '%s' served by the broker "
				"(gpiobrokerctl detect lists them)\n", cur_cmd, arg);
	return NULL;
}

int chip_scope_lines(const char *chip_arg, bool by_name, int n, char **args)
{
	const struct chipinfo *ch;
	struct tree t;
	int r = load_tree(&t, false), ret = 0;

	if (r < 0)
		return exit_of(r);
	ch = resolve_chip(&t, chip_arg);
	if (!ch) {
		tree_free(&t);
		return EX_NOTFOUND;
	}
	for (int i = 0; i < n && !ret; i++) {
		char *chip = NULL, *ref = NULL, *eq = strrchr(args[i], '=');
		size_t len = eq ? (size_t)(eq - args[i]) : strlen(args[i]);
		char *id = strndup(args[i], len);
		unsigned int off;

		if (!id)
			return EX_ERROR;
		if (!by_name && is_number(id)) {
			if (asprintf(&ref, "%s:%s%s", ch->name, id, eq ? eq : "") < 0)
				ref = NULL;
		} else {
			r = gpiobroker_find_line(B, id, NULL, &chip, &off);
			if (r < 0) {
				ret = fail_line(id, r);
			} else if (strcmp(chip, ch->name) != 0) {
				fprintf(stderr, "gpiobrokerctl: %s: %s: no such line on %s (it is %s %u)\n",
					cur_cmd, id, ch->name, chip, off);
				ret = EX_NOTFOUND;
			} else if (asprintf(&ref, "%s:%u%s", ch->name, off, eq ? eq : "") < 0) {
				ref = NULL;
			}
		}
		if (!ret && !ref)
			ret = EX_ERROR;
		if (!ret)
			args[i] = ref;
		free(chip);
		free(id);
	}
	tree_free(&t);
	return ret;
}

/* --- handles ------------------------------------------------------------------- */

bool is_request_path(const char *s)
{
	return strncmp(s, GB_REQ_PREFIX, strlen(GB_REQ_PREFIX)) == 0;
}

bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

char *request_ref(const char *arg)
{
	char *p = NULL;

	if (is_request_path(arg))
		return strdup(arg);
	if (is_number(arg) && asprintf(&p, GB_REQ_PREFIX "%s", arg) >= 0)
		return p;
	return NULL;
}

const char *short_id(const char *path)
{
	if (is_request_path(path))
		return path + strlen(GB_REQ_PREFIX);
	if (strncmp(path, GB_WATCH_PREFIX_SLASH, strlen(GB_WATCH_PREFIX_SLASH)) == 0)
		return path + strlen(GB_WATCH_PREFIX_SLASH);
	return path;
}

int get_path_prop(const char *path, const char *iface, const char *prop, char **out)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *v;
	int r;

	r = sd_bus_get_property(gpiobroker_get_bus(B), GB_BUS_NAME, path, iface, prop, &e, &reply, "o");
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &v);
	if (r >= 0 && !(*out = strdup(v)))
		r = -ENOMEM;
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return r;
}

/* --- JSON and quoting -------------------------------------------------------------- */

void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

void json_str_or_null(const char *s)
{
	if (s && *s)
		json_str(s);
	else
		printf("null");
}

void print_quoted(const char *s, bool unquoted)
{
	printf(unquoted ? "%s" : "\"%s\"", s);
}

/* --- access (Manager.GetAccess) ------------------------------------------------------ */

static int read_strv(sd_bus_message *m, char *buf, size_t size)
{
	const char *item;
	size_t len = 0;
	int r;

	buf[0] = '\0';
	r = sd_bus_message_enter_container(m, 'a', "s");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_read(m, "s", &item)) > 0) {
		int n = snprintf(buf + len, size - len, "%s%s", len ? "," : "", item);

		if (n > 0 && (size_t)n < size - len)
			len += (size_t)n;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(m);
}

void get_access(const char *line_path, struct access *a)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	memset(a, 0, sizeof(*a));
	r = sd_bus_call_method(gpiobroker_get_bus(B), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
			       "GetAccess", &e, &reply, "s", line_path);
	if (r < 0) {
		snprintf(a->error, sizeof(a->error), "%s", e.message ? e.message : strerror(-r));
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *str;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			break;
		if (strcmp(key, "may-use") == 0 || strcmp(key, "persistent") == 0 ||
		    strcmp(key, "direct") == 0 || strcmp(key, "root-bypass") == 0)
			r = sd_bus_message_read(reply, "v", "b",
						key[0] == 'm' ? &a->may_use :
						key[0] == 'p' ? &a->persistent :
						key[0] == 'd' ? &a->direct : &a->bypass);
		else if (strcmp(key, "entry") == 0 || strcmp(key, "reason") == 0) {
			r = sd_bus_message_read(reply, "v", "s", &str);
			if (r >= 0)
				snprintf(key[0] == 'e' ? a->entry : a->reason,
					 key[0] == 'e' ? sizeof(a->entry) : sizeof(a->reason), "%s", str);
		} else if (strcmp(key, "directions") == 0 || strcmp(key, "edges") == 0) {
			r = sd_bus_message_enter_container(reply, 'v', "as");
			if (r >= 0)
				r = read_strv(reply, key[0] == 'd' ? a->directions : a->edges,
					      sizeof(a->edges));
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		} else
			r = sd_bus_message_skip(reply, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	if (r < 0)
		snprintf(a->error, sizeof(a->error), "unexpected reply: %s", strerror(-r));
	else
		a->known = 1;
out:
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
}
