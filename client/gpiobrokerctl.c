/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl: the gpio tools (gpiodetect, gpioinfo, gpiofind, gpioget, gpioset,
 * gpiomon) for lines held through gpiod-broker, plus the broker's own notions:
 * persistent requests, listing and releasing requests, waiting for the broker.
 * Everything goes through libgpiobroker, except reading the object tree (chips and
 * lines), which is plain sd-bus property reading. See gpiobrokerctl(1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "gpiobroker.h"

#include "org.gpiodbroker1.h"

#define GB_REQ_PREFIX GB_REQUEST_PREFIX "/"

/* Exit codes (documented in gpiobrokerctl(1); scripts rely on them). */
enum {
	EX_OK = 0,
	EX_ERROR = 1,     /* any other failure */
	EX_USAGE = 2,     /* bad command line */
	EX_NOTFOUND = 3,  /* no such line, chip or request; or the line is not held */
	EX_BUSY = 4,      /* the line is held by someone else */
	EX_DENIED = 5,    /* the policy or the request's owner says no */
	EX_TIMEOUT = 6,   /* wait / monitor --timeout ran out */
	EX_NOBROKER = 7,  /* no broker on the bus */
};

static const char *address;
static struct gpiobroker *B;

static int exit_of(int r)
{
	switch (-r) {
	case ENOENT:
		return EX_NOTFOUND;
	case EBUSY:
		return EX_BUSY;
	case EACCES:
		return EX_DENIED;
	case EHOSTDOWN:
		return EX_NOBROKER;
	case ETIMEDOUT:
		return EX_TIMEOUT;
	default:
		return EX_ERROR;
	}
}

/* Report a failed call with the broker's words; return the exit code. */
static int fail(const char *what, int r)
{
	const char *name = B ? gpiobroker_last_error_name(B) : NULL;
	const char *msg = B ? gpiobroker_last_error_message(B) : NULL;

	if (name && strncmp(name, GB_BUS_NAME ".Error.", strlen(GB_BUS_NAME ".Error.")) == 0)
		name += strlen(GB_BUS_NAME ".Error.");
	if (-r == EHOSTDOWN)
		fprintf(stderr, "gpiobrokerctl: %s: gpiod-broker is not running (%s)\n", what,
			msg ? msg : strerror(-r));
	else if (name)
		fprintf(stderr, "gpiobrokerctl: %s: %s (%s)\n", what, msg ? msg : "", name);
	else
		fprintf(stderr, "gpiobrokerctl: %s: %s\n", what, msg ? msg : strerror(-r));
	return exit_of(r);
}

static int usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gpiobrokerctl: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nusage: %s\n", usage);
	va_end(ap);
	return EX_USAGE;
}

static int connect_broker(void)
{
	if (B)
		return 0;
	B = address ? gpiobroker_open_address(address) : gpiobroker_open();
	if (!B) {
		fprintf(stderr, "gpiobrokerctl: cannot connect to the %s bus: %s\n",
			address ? "given" : "system", strerror(errno));
		return EX_NOBROKER;
	}
	return 0;
}

/* --- settings options, shared by request / reconfigure / monitor / get ----------- */

#define SETTINGS_OPTS                                         \
	{ "input", no_argument, NULL, 'i' },                  \
	{ "output", no_argument, NULL, 'o' },                 \
	{ "as-is", no_argument, NULL, 'A' },                  \
	{ "edge", required_argument, NULL, 'e' },             \
	{ "bias", required_argument, NULL, 'b' },             \
	{ "drive", required_argument, NULL, 'd' },            \
	{ "active-low", no_argument, NULL, 'a' },             \
	{ "debounce", required_argument, NULL, 'D' },         \
	{ "clock", required_argument, NULL, 'C' }

static int pick(const char *arg, const char *const names[], int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

/* Parse one settings option into @s; 1 if it was one, 0 if not, -1 if bad. */
static int settings_opt(int c, const char *arg, struct gpiobroker_line_settings *s)
{
	static const char *const edges[] = { "none", "rising", "falling", "both" };
	static const char *const biases[] = { "as-is", "disabled", "pull-up", "pull-down" };
	static const char *const drives[] = { "push-pull", "open-drain", "open-source" };
	static const char *const clocks[] = { "monotonic", "realtime", "hte" };
	char *end;
	int v;

	switch (c) {
	case 'i':
		s->direction = GPIOBROKER_DIRECTION_INPUT;
		return 1;
	case 'o':
		s->direction = GPIOBROKER_DIRECTION_OUTPUT;
		return 1;
	case 'A':
		s->direction = GPIOBROKER_DIRECTION_AS_IS;
		return 1;
	case 'a':
		s->active_low = true;
		return 1;
	case 'e':
		v = pick(arg, edges, 4);
		s->edge = (enum gpiobroker_edge)v;
		return v < 0 ? -1 : 1;
	case 'b':
		v = pick(arg, biases, 4);
		s->bias = (enum gpiobroker_bias)v;
		return v < 0 ? -1 : 1;
	case 'd':
		v = pick(arg, drives, 3);
		s->drive = (enum gpiobroker_drive)v;
		return v < 0 ? -1 : 1;
	case 'C':
		v = pick(arg, clocks, 3);
		s->event_clock = (enum gpiobroker_event_clock)v;
		return v < 0 ? -1 : 1;
	case 'D':
		errno = 0;
		s->debounce_us = (unsigned int)strtoul(arg, &end, 10);
		return errno || !*arg || *end ? -1 : 1;
	default:
		return 0;
	}
}

#define SETTINGS_HELP \
	"  -i, --input            input\n" \
	"  -o, --output           output (LINE=VALUE implies it; default value 0)\n" \
	"  -A, --as-is            leave the direction as it is\n" \
	"  -e, --edge EDGE        none, rising, falling, both\n" \
	"  -b, --bias BIAS        as-is, disabled, pull-up, pull-down\n" \
	"  -d, --drive DRIVE      push-pull, open-drain, open-source\n" \
	"  -a, --active-low       values are inverted\n" \
	"      --debounce US      debounce period in microseconds\n" \
	"      --clock CLOCK      event clock: monotonic, realtime, hte\n"

/* "0"/"1"/"active"/"inactive"/"on"/"off"/"high"/"low"/"true"/"false" -> 0/1, else -1. */
static int parse_value(const char *s)
{
	static const char *const one[] = { "1", "active", "on", "high", "true" };
	static const char *const zero[] = { "0", "inactive", "off", "low", "false" };

	if (pick(s, one, 5) >= 0)
		return 1;
	if (pick(s, zero, 5) >= 0)
		return 0;
	return -1;
}

/* --- the object tree (plain property reads) ------------------------------------- */

struct chipinfo {
	char *path, *name, *label;
	uint32_t num_lines;
};

struct lineinfo {
	char *path, *chip, *name, *consumer, *direction, *edge, *bias, *drive, *request,
		*request_label, *alias;
	uint32_t offset;
	int used, active_low;
};

struct tree {
	struct chipinfo *chips;
	size_t n_chips;
	struct lineinfo *lines;
	size_t n_lines;
};

static void tree_free(struct tree *t)
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
		free(l->request_label), free(l->alias);
	}
	free(t->chips);
	free(t->lines);
}

/* Read one property value (variant) into the matching field, skipping others. */
static int read_prop(sd_bus_message *m, const char *key, const char *const keys[],
		     char **strs[], int *bools[], uint32_t *u32s[])
{
	const char *contents;
	char type;
	int r = sd_bus_message_peek_type(m, &type, &contents);

	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(m, 'v', contents);
	if (r < 0)
		return r;
	for (int i = 0; keys[i]; i++) {
		if (strcmp(keys[i], key) != 0)
			continue;
		if (strs[i] && (contents[0] == 's' || contents[0] == 'o')) {
			const char *v;

			r = sd_bus_message_read_basic(m, contents[0], &v);
			if (r >= 0 && !(*strs[i] = strdup(v)))
				r = -ENOMEM;
			goto out;
		}
		if (bools[i] && contents[0] == 'b') {
			r = sd_bus_message_read_basic(m, 'b', bools[i]);
			goto out;
		}
		if (u32s[i] && contents[0] == 'u') {
			r = sd_bus_message_read_basic(m, 'u', u32s[i]);
			goto out;
		}
	}
	r = sd_bus_message_skip(m, contents);
out:
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(m);
}

static int parse_props(sd_bus_message *m, const char *const keys[], char **strs[], int *bools[],
		       uint32_t *u32s[])
{
	int r = sd_bus_message_enter_container(m, 'a', "{sv}");

	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *key;

		r = sd_bus_message_read(m, "s", &key);
		if (r >= 0)
			r = read_prop(m, key, keys, strs, bools, u32s);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int parse_chip(sd_bus_message *m, struct chipinfo *c)
{
	static const char *const keys[] = { "Name", "Label", "NumLines", NULL };
	char **strs[] = { &c->name, &c->label, NULL };
	int *bools[] = { NULL, NULL, NULL };
	uint32_t *u32s[] = { NULL, NULL, &c->num_lines };

	return parse_props(m, keys, strs, bools, u32s);
}

static int parse_line(sd_bus_message *m, struct lineinfo *l)
{
	static const char *const keys[] = { "Chip", "Offset", "Name", "Used", "Consumer",
		"Direction", "Edge", "Bias", "Drive", "ActiveLow", "Request", "RequestLabel",
		"Alias", NULL };
	char **strs[] = { &l->chip, NULL, &l->name, NULL, &l->consumer, &l->direction, &l->edge,
			  &l->bias, &l->drive, NULL, &l->request, &l->request_label, &l->alias };
	int *bools[] = { NULL, NULL, NULL, &l->used, NULL, NULL, NULL, NULL, NULL, &l->active_low,
			 NULL, NULL, NULL };
	uint32_t *u32s[] = { NULL, &l->offset, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
			     NULL, NULL, NULL };

	return parse_props(m, keys, strs, bools, u32s);
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

/* Every chip and line with its properties, in one ObjectManager call. */
static int load_tree(struct tree *t)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	memset(t, 0, sizeof(*t));
	r = sd_bus_call_method(gpiobroker_get_bus(B), GB_BUS_NAME, GB_ROOT_PATH,
			       "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &e, &reply, "");
	if (r < 0) {
		bool down = e.name && (strcmp(e.name, "org.freedesktop.DBus.Error.ServiceUnknown") == 0 ||
				       strcmp(e.name, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0);

		fprintf(stderr, "gpiobrokerctl: cannot read the broker's objects: %s\n",
			e.message ? e.message : strerror(-r));
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
			if (strcmp(iface, GB_BUS_NAME ".Chip") == 0) {
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
			} else if (strcmp(iface, GB_BUS_NAME ".Line") == 0) {
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
		fprintf(stderr, "gpiobrokerctl: cannot parse the broker's objects: %s\n", strerror(-r));
		tree_free(t);
		return r;
	}
	qsort(t->chips, t->n_chips, sizeof(*t->chips), cmp_chip);
	qsort(t->lines, t->n_lines, sizeof(*t->lines), cmp_line);
	return 0;
}

/* --- detect / info / find ------------------------------------------------------- */

static const char usage_detect[] = "gpiobrokerctl detect";
static const char help_detect[] =
	"List the GPIO chips the broker serves: name, label, number of lines.\n";

static int cmd_detect(int argc, char **argv)
{
	struct tree t;
	int r;

	if (argc > 1)
		return usage_error(usage_detect, "detect: unexpected argument %s", argv[1]);
	r = load_tree(&t);
	if (r < 0)
		return exit_of(r);
	for (size_t i = 0; i < t.n_chips; i++)
		printf("%s [%s] (%" PRIu32 " lines)\n", t.chips[i].name, t.chips[i].label,
		       t.chips[i].num_lines);
	tree_free(&t);
	return EX_OK;
}

static void print_line(const struct lineinfo *l)
{
	printf("\tline %3" PRIu32 ":\t", l->offset);
	if (l->name && *l->name)
		printf("\"%s\"", l->name);
	else
		printf("unnamed");
	printf("\t%s", l->direction ? l->direction : "?");
	if (l->active_low)
		printf(" active-low");
	if (l->edge && strcmp(l->edge, "none") != 0)
		printf(" edges=%s", l->edge);
	if (l->bias && strcmp(l->bias, "unknown") != 0 && strcmp(l->bias, "as-is") != 0)
		printf(" bias=%s", l->bias);
	if (l->drive && strcmp(l->drive, "push-pull") != 0)
		printf(" drive=%s", l->drive);
	if (l->alias && *l->alias)
		printf(" alias=\"%s\"", l->alias);
	if (l->used)
		printf(" consumer=\"%s\"", l->consumer ? l->consumer : "");
	if (l->request && strcmp(l->request, "/") != 0)
		printf(" request=%s label=\"%s\"", l->request, l->request_label ? l->request_label : "");
	printf("\n");
}

/* Append a string array variant's items to buf as "a,b,c". */
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

/* What the policy lets the caller do with a line (Manager.GetAccess), printed under
 * the line by "info LINE", so a denial is explained before it is hit. */
static void print_access(const char *line_path)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char directions[128] = "", edges[128] = "", entry[512] = "", reason[512] = "";
	int may_use = 0, persistent = 0, bypass = 0, r;

	r = sd_bus_call_method(gpiobroker_get_bus(B), GB_BUS_NAME, GB_ROOT_PATH, GB_BUS_NAME ".Manager",
			       "GetAccess", &e, &reply, "s", line_path);
	if (r < 0) {
		printf("\t\taccess: unknown (%s)\n", e.message ? e.message : strerror(-r));
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *str;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			break;
		if (strcmp(key, "may-use") == 0 || strcmp(key, "persistent") == 0 ||
		    strcmp(key, "root-bypass") == 0)
			r = sd_bus_message_read(reply, "v", "b",
						key[0] == 'm' ? &may_use :
						key[0] == 'p' ? &persistent : &bypass);
		else if (strcmp(key, "entry") == 0 || strcmp(key, "reason") == 0) {
			r = sd_bus_message_read(reply, "v", "s", &str);
			if (r >= 0)
				snprintf(key[0] == 'e' ? entry : reason, sizeof(entry), "%s", str);
		} else if (strcmp(key, "directions") == 0 || strcmp(key, "edges") == 0) {
			r = sd_bus_message_enter_container(reply, 'v', "as");
			if (r >= 0)
				r = read_strv(reply, key[0] == 'd' ? directions : edges, sizeof(edges));
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		} else
			r = sd_bus_message_skip(reply, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	if (r < 0) {
		printf("\t\taccess: unknown (unexpected reply: %s)\n", strerror(-r));
		goto out;
	}
	if (may_use) {
		printf("\t\taccess: allowed");
		if (*entry)
			printf(" by %s: directions=%s edges=%s persistent=%s", entry,
			       *directions ? directions : "-", *edges ? edges : "none",
			       persistent ? "yes" : "no");
		else if (bypass)
			printf(" (root bypass)");
		printf("\n");
	} else
		printf("\t\taccess: denied: %s\n", *reason ? reason : "no policy entry allows it");
out:
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
}

static const char usage_info[] = "gpiobrokerctl info [LINE|CHIP]...";
static const char help_info[] =
	"Show chips and their lines: name, direction, flags, alias, and who holds each\n"
	"line: the kernel's consumer, and the broker's request and label. With no argument:\n"
	"every chip. A CHIP is a chip's name or label; anything else is a line reference,\n"
	"and for those lines \"access:\" says what the policy lets the caller do with it\n"
	"(the covering entry, or why not).\n";

static int cmd_info(int argc, char **argv)
{
	struct tree t;
	int r, ret = EX_OK;

	r = load_tree(&t);
	if (r < 0)
		return exit_of(r);
	for (size_t c = 0; c < t.n_chips; c++) {
		const struct chipinfo *ch = &t.chips[c];
		bool whole = argc < 2;

		for (int a = 1; a < argc && !whole; a++)
			whole = strcmp(argv[a], ch->name) == 0 || strcmp(argv[a], ch->label) == 0;
		if (!whole) {
			/* Lines asked for on this chip: resolve each through the broker. */
			bool any = false;

			for (int a = 1; a < argc; a++) {
				char *chip = NULL;

				if (gpiobroker_find_line(B, argv[a], NULL, &chip, NULL) >= 0 &&
				    strcmp(chip, ch->name) == 0)
					any = true;
				free(chip);
			}
			if (!any)
				continue;
		}
		printf("%s - %" PRIu32 " lines [%s]:\n", ch->name, ch->num_lines, ch->label);
		for (size_t i = 0; i < t.n_lines; i++) {
			const struct lineinfo *l = &t.lines[i];
			bool show = whole;

			if (!l->chip || strcmp(l->chip, ch->path) != 0)
				continue;
			for (int a = 1; a < argc && !show; a++) {
				char *path = NULL;

				if (gpiobroker_find_line(B, argv[a], &path, NULL, NULL) >= 0)
					show = strcmp(path, l->path) == 0;
				free(path);
			}
			if (show) {
				print_line(l);
				if (!whole)
					print_access(l->path);
			}
		}
	}
	/* Arguments that name nothing are errors, reported with the broker's words. */
	for (int a = 1; a < argc; a++) {
		bool chip = false;

		for (size_t c = 0; c < t.n_chips; c++)
			chip = chip || strcmp(argv[a], t.chips[c].name) == 0 ||
			       strcmp(argv[a], t.chips[c].label) == 0;
		if (!chip && (r = gpiobroker_find_line(B, argv[a], NULL, NULL, NULL)) < 0)
			ret = fail(argv[a], r);
	}
	tree_free(&t);
	return ret;
}

static const char usage_find[] = "gpiobrokerctl find LINE";
static const char help_find[] =
	"Print the chip and offset of a line (alias, name, CHIP:OFFSET or path), as gpiofind.\n";

static int cmd_find(int argc, char **argv)
{
	char *chip = NULL;
	unsigned int off;
	int r;

	if (argc != 2)
		return usage_error(usage_find, "find: %s", "one LINE expected");
	r = gpiobroker_find_line(B, argv[1], NULL, &chip, &off);
	if (r < 0)
		return fail(argv[1], r);
	printf("%s %u\n", chip, off);
	free(chip);
	return EX_OK;
}

/* --- requests ------------------------------------------------------------------ */

static bool is_request_path(const char *s)
{
	return strncmp(s, GB_REQ_PREFIX, strlen(GB_REQ_PREFIX)) == 0;
}

/* An object-path property ("o"), malloc'ed. */
static int get_path_prop(const char *path, const char *iface, const char *prop, char **out)
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
	r = get_path_prop(lpath, GB_BUS_NAME ".Line", "Request", &rpath);
	if (r >= 0 && strcmp(rpath, "/") != 0)
		r = sd_bus_get_property_trivial(gpiobroker_get_bus(B), GB_BUS_NAME, rpath,
						GB_BUS_NAME ".Request", "OwnerUid", &e, 'u', &uid);
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

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = 1;
}

static const char usage_request[] =
	"gpiobrokerctl request [--persistent] [--label L] [SETTINGS] LINE[=VALUE]...";
static const char help_request[] =
	"Request lines, atomically, and print the request's path.\n"
	"A persistent request stays held after this command exits, until released\n"
	"(gpiobrokerctl release PATH). Otherwise the command holds the lines until it is\n"
	"interrupted (SIGINT, SIGTERM), like gpioset; they are released as it exits.\n"
	"LINE=VALUE makes the line an output with that initial value.\n"
	"  -p, --persistent       keep the request after exit\n"
	"  -l, --label LABEL      consumer label (default: gpiobrokerctl)\n" SETTINGS_HELP;

/* Split LINE[=VALUE] arguments into lines, settings (starting from @base). */
static int parse_line_args(int n, char **args, const struct gpiobroker_line_settings *base,
			   char ***lines, struct gpiobroker_line_settings **settings,
			   const char *usage)
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
				return usage_error(usage, "bad value in %s (0/1, active/inactive, on/off)",
						   args[i]);
			*eq = '\0';
			(*settings)[i].direction = GPIOBROKER_DIRECTION_OUTPUT;
			(*settings)[i].value = v;
		}
	}
	return 0;
}

static int cmd_request(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "persistent", no_argument, NULL, 'p' },
		{ "label", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		SETTINGS_OPTS,
		{ 0 }
	};
	struct gpiobroker_line_settings base, *settings = NULL;
	struct gpiobroker_request *req;
	const char *label = "gpiobrokerctl";
	unsigned int flags = 0;
	char **lines = NULL;
	int c, r;

	gpiobroker_line_settings_init(&base);
	while ((c = getopt_long(argc, argv, "+pl:ioAe:b:d:a", opts, NULL)) != -1) {
		if (c == 'p')
			flags |= GPIOBROKER_REQUEST_PERSISTENT;
		else if (c == 'l')
			label = optarg;
		else if (settings_opt(c, optarg, &base) <= 0)
			return usage_error(usage_request, "request: bad option%s", "");
	}
	if (optind >= argc)
		return usage_error(usage_request, "request: %s", "no LINE given");
	r = parse_line_args(argc - optind, argv + optind, &base, &lines, &settings, usage_request);
	if (r) {
		free(lines);
		free(settings);
		return r;
	}
	req = gpiobroker_request_array(B, argc - optind, (const char *const *)lines, settings,
				       label, flags);
	free(lines);
	free(settings);
	if (!req)
		return fail("request", -errno);
	/* Handlers first: whoever reads the path may signal us at once. */
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	printf("%s\n", gpiobroker_request_get_path(req));
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

static const char usage_requests[] = "gpiobrokerctl requests";
static const char help_requests[] =
	"List every request: path, label, persistent or managed, owner uid, owner's bus name.\n";

static int cmd_requests(int argc, char **argv)
{
	struct gpiobroker_request_info *info;
	int n;

	if (argc > 1)
		return usage_error(usage_requests, "requests: unexpected argument %s", argv[1]);
	n = gpiobroker_list_requests(B, &info);
	if (n < 0)
		return fail("requests", n);
	for (int i = 0; i < n; i++)
		printf("%s\t%s\t%s\tuid=%u\towner=%s\n", info[i].path, info[i].label,
		       info[i].persistent ? "persistent" : "managed", (unsigned)info[i].owner_uid,
		       *info[i].owner ? info[i].owner : "-");
	gpiobroker_request_info_free(info, n);
	return EX_OK;
}

/* A request given by path, or the request holding a line. */
static int open_target(const char *arg, struct gpiobroker_request **req, int *index)
{
	char *lpath = NULL, *rpath = NULL, *chip = NULL;
	unsigned int off;
	int r;

	*index = -1;
	if (is_request_path(arg)) {
		*req = gpiobroker_request_open(B, arg);
		return *req ? 0 : fail(arg, -errno);
	}
	r = gpiobroker_find_line(B, arg, &lpath, &chip, &off);
	if (r < 0)
		return fail(arg, r);
	r = get_path_prop(lpath, GB_BUS_NAME ".Line", "Request", &rpath);
	free(lpath);
	if (r < 0 || strcmp(rpath, "/") == 0) {
		fprintf(stderr, "gpiobrokerctl: %s: not held through the broker\n", arg);
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

static const char usage_release[] = "gpiobrokerctl release PATH|LINE...";
static const char help_release[] =
	"Release requests (gpio_free), given by path or by one of their lines.\n";

static int cmd_release(int argc, char **argv)
{
	int ret = EX_OK;

	if (argc < 2)
		return usage_error(usage_release, "release: %s", "no request given");
	for (int i = 1; i < argc; i++) {
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

static const char usage_get[] = "gpiobrokerctl get [--as-is] [--active-low] [--bias B] LINE|PATH...";
static const char help_get[] =
	"Print line values (0 or 1), space-separated, in argument order. A request PATH\n"
	"stands for all its lines. A line held by a persistent request of yours is read\n"
	"through it; other lines are requested as inputs (or --as-is) for the read and\n"
	"released after it.\n" SETTINGS_HELP;

static int cmd_get(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, SETTINGS_OPTS, { 0 } };
	struct gpiobroker_line_settings base;
	struct gpiobroker_request *tmp = NULL;
	const char **temp_lines;
	int *out, *which, n_temp = 0, c, r, ret = EX_OK, n_out = 0;
	size_t cap = 0;

	gpiobroker_line_settings_init(&base);
	base.direction = GPIOBROKER_DIRECTION_INPUT;
	while ((c = getopt_long(argc, argv, "+ioAe:b:d:a", opts, NULL)) != -1)
		if (settings_opt(c, optarg, &base) <= 0 || c == 'o')
			return usage_error(usage_get, "get: bad option%s", "");
	if (optind >= argc)
		return usage_error(usage_get, "get: %s", "no LINE given");
	argc -= optind;
	argv += optind;
	temp_lines = calloc(argc, sizeof(*temp_lines));
	which = calloc(argc, sizeof(*which));
	/* A request PATH gives all its lines (at most 64 are shown); a LINE one value. */
	for (int i = 0; i < argc; i++)
		cap += is_request_path(argv[i]) ? 64 : 1;
	out = calloc(cap + 1, sizeof(*out));
	if (!temp_lines || !which || !out)
		return EX_ERROR;
	/* First the lines that need a temporary request: one atomic request for all. */
	for (int i = 0; i < argc; i++) {
		struct gpiobroker_request *own = NULL;
		unsigned int idx;

		which[i] = -1;
		if (is_request_path(argv[i]))
			continue;
		r = own_persistent(argv[i], &own, &idx);
		if (r < 0) {
			ret = fail(argv[i], r);
			goto done;
		}
		if (own) {
			gpiobroker_request_close(own);
			continue;
		}
		which[i] = n_temp;
		temp_lines[n_temp++] = argv[i];
	}
	if (n_temp) {
		struct gpiobroker_line_settings *s = calloc(n_temp, sizeof(*s));

		for (int i = 0; s && i < n_temp; i++)
			s[i] = base;
		tmp = gpiobroker_request_array(B, n_temp, temp_lines, s, "gpiobrokerctl-get", 0);
		free(s);
		if (!tmp) {
			ret = fail("get", -errno);
			goto done;
		}
	}
	for (int i = 0; i < argc; i++) {
		struct gpiobroker_request *req = NULL;
		unsigned int idx = 0;
		int v;

		if (which[i] >= 0) {
			v = gpiobroker_get_value(tmp, which[i]);
			if (v < 0) {
				ret = fail(argv[i], v);
				goto done;
			}
			out[n_out++] = v;
			continue;
		}
		if (is_request_path(argv[i])) {
			size_t n;

			req = gpiobroker_request_open(B, argv[i]);
			if (!req) {
				ret = fail(argv[i], -errno);
				goto done;
			}
			n = gpiobroker_request_get_num_lines(req);
			if (n > 64)
				n = 64;
			r = gpiobroker_get_values(req, n, NULL, out + n_out);
			gpiobroker_request_close(req);
			if (r < 0) {
				ret = fail(argv[i], r);
				goto done;
			}
			n_out += (int)n;
			continue;
		}
		r = own_persistent(argv[i], &req, &idx);
		if (r < 0 || !req) {
			ret = fail(argv[i], r < 0 ? r : -ENOENT);
			goto done;
		}
		v = gpiobroker_get_value(req, idx);
		gpiobroker_request_close(req);
		if (v < 0) {
			ret = fail(argv[i], v);
			goto done;
		}
		out[n_out++] = v;
	}
	for (int i = 0; i < n_out; i++)
		printf("%s%d", i ? " " : "", out[i]);
	printf("\n");
done:
	if (tmp)
		gpiobroker_free(tmp);
	free(temp_lines);
	free(which);
	free(out);
	return ret;
}

static const char usage_set[] = "gpiobrokerctl set [--label L] [SETTINGS] LINE=VALUE...";
static const char help_set[] =
	"Drive lines. A line held by a persistent request of yours is set through it (it\n"
	"must be an output). The other lines are requested together, as outputs with\n"
	"these values, in a new persistent request whose path is printed: the value\n"
	"stays after this command exits (as with sysfs export), and later \"set\" calls\n"
	"reuse the request, until \"gpiobrokerctl release PATH|LINE\".\n"
	"  -l, --label LABEL      label of a new request (default: gpiobrokerctl)\n" SETTINGS_HELP;

static int cmd_set(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "label", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		SETTINGS_OPTS,
		{ 0 }
	};
	struct gpiobroker_line_settings base, *settings = NULL, *new_settings;
	const char *label = "gpiobrokerctl", **new_lines;
	char **lines = NULL;
	int c, r, n, n_new = 0, ret = EX_OK;

	gpiobroker_line_settings_init(&base);
	while ((c = getopt_long(argc, argv, "+l:ioAe:b:d:a", opts, NULL)) != -1) {
		if (c == 'l')
			label = optarg;
		else if (settings_opt(c, optarg, &base) <= 0)
			return usage_error(usage_set, "set: bad option%s", "");
	}
	n = argc - optind;
	if (n < 1)
		return usage_error(usage_set, "set: %s", "no LINE=VALUE given");
	for (int i = optind; i < argc; i++)
		if (!strchr(argv[i], '='))
			return usage_error(usage_set, "set: %s has no =VALUE", argv[i]);
	r = parse_line_args(n, argv + optind, &base, &lines, &settings, usage_set);
	new_lines = calloc(n, sizeof(*new_lines));
	new_settings = calloc(n, sizeof(*new_settings));
	if (r || !new_lines || !new_settings) {
		ret = r ? r : EX_ERROR;
		goto done;
	}
	for (int i = 0; i < n; i++) {
		struct gpiobroker_request *own = NULL;
		unsigned int idx = 0;

		r = own_persistent(lines[i], &own, &idx);
		if (r < 0) {
			ret = fail(lines[i], r);
			goto done;
		}
		if (!own) {
			new_lines[n_new] = lines[i];
			new_settings[n_new++] = settings[i];
			continue;
		}
		r = gpiobroker_set_value(own, idx, settings[i].value);
		gpiobroker_request_close(own);
		if (r < 0) {
			ret = fail(lines[i], r);
			goto done;
		}
	}
	if (n_new) {
		struct gpiobroker_request *req = gpiobroker_request_array(
			B, n_new, new_lines, new_settings, label, GPIOBROKER_REQUEST_PERSISTENT);

		if (!req) {
			ret = fail("set", -errno);
			goto done;
		}
		printf("%s\n", gpiobroker_request_get_path(req));
		gpiobroker_request_close(req);
	}
done:
	free(lines);
	free(settings);
	free(new_lines);
	free(new_settings);
	return ret;
}

static const char usage_reconfigure[] = "gpiobrokerctl reconfigure [SETTINGS] PATH|LINE";
static const char help_reconfigure[] =
	"Change settings of a request's lines: all of them for a request PATH, one for\n"
	"a LINE held through the broker. Only the settings given change; --output\n"
	"drives the line to 0 unless LINE=VALUE gives the value.\n" SETTINGS_HELP;

static int cmd_reconfigure(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, SETTINGS_OPTS, { 0 } };
	struct gpiobroker_line_settings base, *s;
	struct gpiobroker_request *req;
	unsigned int one;
	char *target, *eq;
	int c, r, idx, ret = EX_OK;
	size_t n;

	gpiobroker_line_settings_init(&base);
	while ((c = getopt_long(argc, argv, "+ioAe:b:d:a", opts, NULL)) != -1)
		if (settings_opt(c, optarg, &base) <= 0)
			return usage_error(usage_reconfigure, "reconfigure: bad option%s", "");
	if (argc - optind != 1)
		return usage_error(usage_reconfigure, "reconfigure: %s", "one PATH or LINE expected");
	target = argv[optind];
	eq = strrchr(target, '=');
	if (eq && !strchr(eq, '/')) {
		int v = parse_value(eq + 1);

		if (v < 0)
			return usage_error(usage_reconfigure, "bad value in %s", target);
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

/* --- monitor ----------------------------------------------------------------------- */

struct monitor {
	sd_event *loop;
	char **names; /* per index: what the user called the line */
	bool json;
	unsigned long left; /* 0: forever */
	int status;
	const char *cmd;
	char **watch_names; /* watch: per watch, the user's name */
	struct gpiobroker_watch **watches;
	int n_watches;
};

static void json_str(const char *s)
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

/* One event of @p chip:@p offset (index @p idx, called @p name by the user), in
 * the chosen format; the initial state is a line of its own, not counted. */
static void print_event(struct monitor *mon, const struct gpiobroker_event *ev, const char *name,
			const char *chip, unsigned int idx)
{
	enum gpiobroker_event_type type = gpiobroker_event_get_type(ev);
	uint64_t ts = gpiobroker_event_get_timestamp_ns(ev);
	bool initial = gpiobroker_event_is_initial(ev);
	const char *edge;

	if (type != GPIOBROKER_EVENT_EDGE && !initial) {
		const char *detail = gpiobroker_event_get_detail(ev);

		if (type == GPIOBROKER_EVENT_CHIP_GONE)
			fprintf(stderr, "gpiobrokerctl: %s: chip %s was unplugged\n", mon->cmd, detail);
		else if (type == GPIOBROKER_EVENT_REVOKED)
			fprintf(stderr, "gpiobrokerctl: %s: request revoked: %s\n", mon->cmd, detail);
		else
			fprintf(stderr, "gpiobrokerctl: %s: the broker left the bus\n", mon->cmd);
		mon->status = EX_ERROR;
		sd_event_exit(mon->loop, 0);
		return;
	}
	edge = initial ? "initial" :
	       gpiobroker_event_get_edge(ev) == GPIOBROKER_EDGE_RISING ? "rising" : "falling";
	if (mon->json) {
		printf("{\"timestamp_ns\":%" PRIu64 ",\"edge\":\"%s\",\"line\":", ts, edge);
		if (name)
			json_str(name);
		else
			printf("null");
		printf(",\"chip\":");
		json_str(chip ? chip : "");
		printf(",\"offset\":%u,\"index\":%u,\"seqno\":%" PRIu64, gpiobroker_event_get_offset(ev),
		       idx, gpiobroker_event_get_seqno(ev));
		if (initial)
			printf(",\"value\":%d}\n", gpiobroker_event_get_value(ev));
		else
			printf(",\"global_seqno\":%" PRIu64 ",\"line_seqno\":%" PRIu64 ",\"lost\":%" PRIu64
			       "}\n", gpiobroker_event_get_global_seqno(ev),
			       gpiobroker_event_get_line_seqno(ev), gpiobroker_event_get_lost(ev));
	} else {
		if (!initial && gpiobroker_event_get_lost(ev))
			printf("# %" PRIu64 " event(s) lost\n", gpiobroker_event_get_lost(ev));
		printf("%" PRIu64 ".%09" PRIu64 "\t%s\t%s\t%s:%u\t", ts / 1000000000, ts % 1000000000,
		       edge, name ? name : "-", chip ? chip : "?", gpiobroker_event_get_offset(ev));
		if (initial)
			printf("value=%d\n", gpiobroker_event_get_value(ev));
		else
			printf("seqno=%" PRIu64 "\n", gpiobroker_event_get_seqno(ev));
	}
	fflush(stdout);
	if (!initial && mon->left && --mon->left == 0)
		sd_event_exit(mon->loop, 0);
}

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct monitor *mon = userdata;
	unsigned int idx = gpiobroker_event_get_index(ev);

	print_event(mon, ev, mon->names ? mon->names[idx] : NULL,
		    gpiobroker_request_get_chip(req, idx), idx);
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct monitor *mon = userdata;

	mon->status = EX_TIMEOUT;
	return sd_event_exit(mon->loop, 0);
}

/* The event loop of monitor and watch: the library attached, SIGINT/SIGTERM end
 * it cleanly (so requests are released and the output flushed; sd-event wants the
 * signals blocked), and the --timeout. 0 or -errno, reported. */
static int monitor_loop_new(struct monitor *mon, double timeout)
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
	if (r >= 0 && timeout > 0) {
		uint64_t now;

		sd_event_now(mon->loop, CLOCK_MONOTONIC, &now);
		r = sd_event_add_time(mon->loop, NULL, CLOCK_MONOTONIC,
				      now + (uint64_t)(timeout * 1e6), 0, on_timeout, mon);
	}
	if (r < 0)
		fprintf(stderr, "gpiobrokerctl: %s: event loop: %s\n", mon->cmd, strerror(-r));
	return r;
}


static const char usage_monitor[] =
	"gpiobrokerctl monitor [--count N] [--timeout S] [--format text|json] [SETTINGS] LINE...|PATH";
static const char help_monitor[] =
	"Print edge events of lines, one line per event, until interrupted, N events,\n"
	"or S seconds (exit code 6). The lines are requested as inputs with edge\n"
	"detection (default --edge both), released as this command exits. A persistent\n"
	"request PATH is subscribed to instead.\n"
	"First, each line's level: SECONDS.NANOSECONDS initial LINE CHIP:OFFSET value=V\n"
	"(not counted in N). Then edges: SECONDS.NANOSECONDS EDGE LINE CHIP:OFFSET seqno=N\n"
	"(and \"# N event(s) lost\" lines). JSON: one object per line with timestamp_ns,\n"
	"edge (\"initial\" with value), line, chip, offset, index, seqno, global_seqno,\n"
	"line_seqno, lost.\n"
	"  -n, --count N          exit after N events\n"
	"  -t, --timeout S        exit (code 6) after S seconds\n"
	"  -F, --format FORMAT    text (default) or json\n"
	"  -l, --label LABEL      label (default: gpiobrokerctl-monitor)\n" SETTINGS_HELP;

static int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'F' },
		{ "label", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		SETTINGS_OPTS,
		{ 0 }
	};
	struct gpiobroker_line_settings base, *s = NULL;
	struct monitor mon = { .status = EX_OK, .cmd = "monitor" };
	struct gpiobroker_request *req = NULL;
	const char *label = "gpiobrokerctl-monitor";
	double timeout = 0;
	char *end;
	int c, r, n;

	gpiobroker_line_settings_init(&base);
	base.direction = GPIOBROKER_DIRECTION_INPUT;
	base.edge = GPIOBROKER_EDGE_BOTH;
	while ((c = getopt_long(argc, argv, "+n:t:F:l:ioAe:b:d:a", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			mon.left = strtoul(optarg, &end, 10);
			if (!*optarg || *end || mon.left == 0)
				return usage_error(usage_monitor, "monitor: bad count %s", optarg);
			break;
		case 't':
			timeout = strtod(optarg, &end);
			if (!*optarg || *end || timeout <= 0)
				return usage_error(usage_monitor, "monitor: bad timeout %s", optarg);
			break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
				return usage_error(usage_monitor, "monitor: bad format %s", optarg);
			mon.json = strcmp(optarg, "json") == 0;
			break;
		case 'l':
			label = optarg;
			break;
		default:
			if (settings_opt(c, optarg, &base) <= 0 || c == 'o')
				return usage_error(usage_monitor, "monitor: bad option%s", "");
		}
	}
	n = argc - optind;
	if (n < 1)
		return usage_error(usage_monitor, "monitor: %s", "no LINE given");
	if (is_request_path(argv[optind])) {
		if (n != 1)
			return usage_error(usage_monitor, "monitor: %s", "one request PATH only");
		req = gpiobroker_request_open(B, argv[optind]);
		if (!req)
			return fail(argv[optind], -errno);
	} else {
		s = calloc(n, sizeof(*s));
		if (!s)
			return EX_ERROR;
		for (int i = 0; i < n; i++)
			s[i] = base;
		req = gpiobroker_request_array(B, n, (const char *const *)argv + optind, s, label, 0);
		free(s);
		if (!req)
			return fail("monitor", -errno);
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
	sd_event_unref(mon.loop);
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
		    gpiobroker_watch_get_chip(w), 0);
}

static const char usage_watch[] =
	"gpiobrokerctl watch [--count N] [--timeout S] [--format text|json] LINE...";
static const char help_watch[] =
	"Watch lines without requesting them: their level, then every edge, while\n"
	"others hold them (they see what the holder's settings detect) or nobody does\n"
	"(then the broker watches both edges until someone requests the line). Needs\n"
	"the policy's watch-users or watch-groups. Output as monitor (index 0).\n"
	"  -n, --count N          exit after N edges\n"
	"  -t, --timeout S        exit (code 6) after S seconds\n"
	"  -F, --format FORMAT    text (default) or json\n";

static int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct monitor mon = { .status = EX_OK, .cmd = "watch" };
	double timeout = 0;
	char *end;
	int c, r, n;

	while ((c = getopt_long(argc, argv, "+n:t:F:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			mon.left = strtoul(optarg, &end, 10);
			if (!*optarg || *end || mon.left == 0)
				return usage_error(usage_watch, "watch: bad count %s", optarg);
			break;
		case 't':
			timeout = strtod(optarg, &end);
			if (!*optarg || *end || timeout <= 0)
				return usage_error(usage_watch, "watch: bad timeout %s", optarg);
			break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
				return usage_error(usage_watch, "watch: bad format %s", optarg);
			mon.json = strcmp(optarg, "json") == 0;
			break;
		default:
			return usage_error(usage_watch, "watch: bad option%s", "");
		}
	}
	n = argc - optind;
	if (n < 1)
		return usage_error(usage_watch, "watch: %s", "no LINE given");
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
			mon.status = fail(argv[optind + i], -errno);
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
	sd_event_unref(mon.loop);
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

static const char usage_wait[] = "gpiobrokerctl wait [--timeout S]";
static const char help_wait[] =
	"Wait until the broker is on the bus (exit code 0), at most S seconds (then exit\n"
	"code 6; default: forever).\n"
	"  -t, --timeout S        give up after S seconds\n";

static int cmd_wait(int argc, char **argv)
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
	double timeout = -1;
	uint64_t deadline = UINT64_MAX;
	struct timespec ts;
	int c, r, has = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "+t:", opts, NULL)) != -1) {
		if (c != 't')
			return usage_error(usage_wait, "wait: bad option%s", "");
		timeout = strtod(optarg, &end);
		if (!*optarg || *end || timeout < 0)
			return usage_error(usage_wait, "wait: bad timeout %s", optarg);
	}
	if (optind != argc)
		return usage_error(usage_wait, "wait: unexpected argument %s", argv[optind]);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (timeout >= 0)
		deadline = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + (uint64_t)(timeout * 1e6);
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
		fprintf(stderr, "gpiobrokerctl: wait: gpiod-broker did not appear within %gs\n", timeout);
		return EX_TIMEOUT;
	}
	return EX_OK;
}

/* --- main ---------------------------------------------------------------------------- */

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage, *help;
} commands[] = {
	{ "detect", cmd_detect, usage_detect, help_detect },
	{ "info", cmd_info, usage_info, help_info },
	{ "find", cmd_find, usage_find, help_find },
	{ "request", cmd_request, usage_request, help_request },
	{ "requests", cmd_requests, usage_requests, help_requests },
	{ "release", cmd_release, usage_release, help_release },
	{ "get", cmd_get, usage_get, help_get },
	{ "set", cmd_set, usage_set, help_set },
	{ "reconfigure", cmd_reconfigure, usage_reconfigure, help_reconfigure },
	{ "monitor", cmd_monitor, usage_monitor, help_monitor },
	{ "watch", cmd_watch, usage_watch, help_watch },
	{ "wait", cmd_wait, usage_wait, help_wait },
};

static void main_help(FILE *f)
{
	fprintf(f, "usage: gpiobrokerctl [--address ADDRESS] COMMAND [ARGS]\n"
		   "GPIO lines through gpiod-broker. Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].usage + strlen("gpiobrokerctl "));
	fprintf(f, "\"gpiobrokerctl COMMAND --help\" describes a command. A LINE is a policy alias,\n"
		   "a line name, CHIP:OFFSET or a line object path.\n"
		   "Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 busy, 5 permission denied,\n"
		   "6 timeout, 7 broker not running.\n");
}

int main(int argc, char **argv)
{
	int i = 1, ret;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			main_help(stdout);
			return EX_OK;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("gpiobrokerctl %s\n", PACKAGE_VERSION);
			return EX_OK;
		} else if (strcmp(argv[i], "--address") == 0 && i + 1 < argc) {
			address = argv[i + 1];
			i += 2;
		} else if (strncmp(argv[i], "--address=", 10) == 0) {
			address = argv[i] + 10;
			i++;
		} else {
			fprintf(stderr, "gpiobrokerctl: unknown option %s\n", argv[i]);
			main_help(stderr);
			return EX_USAGE;
		}
	}
	if (i >= argc) {
		main_help(stderr);
		return EX_USAGE;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		const struct command *cmd = &commands[c];

		if (strcmp(argv[i], cmd->name) != 0)
			continue;
		for (int a = i + 1; a < argc; a++) {
			if (strcmp(argv[a], "--") == 0)
				break;
			if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
				printf("usage: %s\n%s", cmd->usage, cmd->help);
				return EX_OK;
			}
		}
		ret = connect_broker();
		if (ret)
			return ret;
		optind = 0; /* getopt from the command's own arguments */
		ret = cmd->run(argc - i, argv + i);
		gpiobroker_close(B);
		return ret;
	}
	fprintf(stderr, "gpiobrokerctl: unknown command %s\n", argv[i]);
	main_help(stderr);
	return EX_USAGE;
}
