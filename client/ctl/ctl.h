/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl's pieces: common.c (errors, options, periods, the object tree,
 * "did you mean"), info.c (detect, info, find, status, notify), lines.c (request,
 * requests, release, get, set, reconfigure), monitor.c (monitor, watch, wait).
 */
#ifndef GB_CTL_H
#define GB_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

#include "gpiobroker.h"

#include "org.gpiodbroker1.h"

#define GB_REQ_PREFIX GB_REQUEST_PREFIX "/"
#define GB_WATCH_PREFIX_SLASH GB_WATCH_PREFIX "/"

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

extern struct gpiobroker *B;
extern const char *cur_cmd; /* the command being run, for messages */

/* --- errors -------------------------------------------------------------------- */
int exit_of(int r);
/* A failed broker call about @what (a user's argument or a verb): one line. */
int fail(const char *what, int r);
/* fail() for a line reference: adds "did you mean" from the broker's names. */
int fail_line(const char *line, int r);
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The '?' or ':' of getopt_long, explained (with "did you mean"). */
int opt_error(int c, char **argv, const struct option *opts);
void not_running(void);
const char *suggest(const char *word, const char *const *cands, size_t n);

/* --- values, periods, settings --------------------------------------------------- */
int pick(const char *arg, const char *const names[], int n);
int parse_value(const char *s);
/* "10ms", "5s", "100us", "1.5s"; a bare number is in @bare_us units. -1 if bad. */
int64_t parse_period(const char *s, uint64_t bare_us);
int parse_count(const char *s, unsigned long *out);

/* Long option values above 255: long-only options. */
enum {
	OPT_NUMERIC = 256, OPT_UNQUOTED, OPT_JSON, OPT_BY_NAME, OPT_IDLE, OPT_PERSISTENT,
	OPT_VERBOSE, OPT_REFUSED_DEBOUNCE, OPT_LOCALTIME, OPT_UTC, OPT_BANNER, OPT_QUIET,
	OPT_REFUSE, /* a libgpiod option gpiobrokerctl cannot honour: refuse_opt() */
};

#define SETTINGS_OPTS                                               \
	{ "input", no_argument, NULL, 'i' },                        \
	{ "output", no_argument, NULL, 'o' },                       \
	{ "as-is", no_argument, NULL, 'a' },                        \
	{ "edges", required_argument, NULL, 'e' },                  \
	{ "edge", required_argument, NULL, 'e' },                   \
	{ "bias", required_argument, NULL, 'b' },                   \
	{ "drive", required_argument, NULL, 'd' },                  \
	{ "active-low", no_argument, NULL, 'l' },                   \
	{ "debounce-period", required_argument, NULL, 'p' },        \
	{ "debounce", required_argument, NULL, OPT_REFUSED_DEBOUNCE }, \
	{ "event-clock", required_argument, NULL, 'E' },            \
	{ "clock", required_argument, NULL, 'E' }
#define SETTINGS_LETTERS "ioae:b:d:lp:E:"

#define SETTINGS_HELP \
	"  -i, --input              input\n" \
	"  -o, --output             output (LINE=VALUE implies it; default value 0)\n" \
	"  -a, --as-is              leave the direction as it is\n" \
	"  -e, --edges EDGES        none, rising, falling, both\n" \
	"  -b, --bias BIAS          as-is, disabled, pull-up, pull-down\n" \
	"  -d, --drive DRIVE        push-pull, open-drain, open-source\n" \
	"  -l, --active-low         treat the line as active low (values inverted)\n" \
	"  -p, --debounce-period P  debounce period (10ms, 100us, 1s; bare number: ms)\n" \
	"  -E, --event-clock CLOCK  monotonic, realtime, hte\n"

/* Parse one settings option into @s; 1 if it was one, 0 if not, EX_USAGE if bad
 * (reported). @given records that a setting was given. */
int settings_opt(int c, const char *arg, struct gpiobroker_line_settings *s, bool *given);
/* Options of the libgpiod tools refused with a reason (the letter is not reused). */
int refuse_opt(const char *opt, const char *why);

/* --- the object tree ----------------------------------------------------------- */
struct chipinfo {
	char *path, *name, *label;
	uint32_t num_lines;
};

struct lineinfo {
	char *path, *chip, *name, *consumer, *direction, *edge, *bias, *drive, *request,
		*request_label, *alias, *clock;
	uint32_t offset;
	uint64_t debounce;
	int used, active_low;
};

struct tree {
	struct chipinfo *chips;
	size_t n_chips;
	struct lineinfo *lines;
	size_t n_lines;
};

/* Every chip and line; 0 or -errno (reported unless @quiet). */
int load_tree(struct tree *t, bool quiet);
void tree_free(struct tree *t);
const struct chipinfo *tree_chip_by_path(const struct tree *t, const char *path);
/* -c CHIP: a chip's name, number, label or /dev path; NULL if none (reported). */
const struct chipinfo *resolve_chip(const struct tree *t, const char *arg);
/* Line arguments under -c: bare offsets become CHIP:OFFSET; names must be on the
 * chip. Rewrites @args in place (new strings leak until exit: a CLI). 0 or exit code. */
int chip_scope_lines(const char *chip_arg, bool by_name, int n, char **args);

/* --- handles ------------------------------------------------------------------- */
bool is_request_path(const char *s);
bool is_number(const char *s);
/* A request as given: its path, or its id (a bare number); NULL if neither. */
char *request_ref(const char *arg);
/* The short id of a request or watch path ("5"), or the path if it is not one. */
const char *short_id(const char *path);
int get_path_prop(const char *path, const char *iface, const char *prop, char **out);

/* --- JSON ------------------------------------------------------------------------- */
void json_str(const char *s);
void json_str_or_null(const char *s);
void print_quoted(const char *s, bool unquoted);

/* --- access ------------------------------------------------------------------------ */
struct access {
	int known, may_use, persistent, direct, bypass;
	char directions[128], edges[128], entry[512], reason[1024], error[256];
};
void get_access(const char *line_path, struct access *a);

/* --- commands --------------------------------------------------------------------- */
#define DECL_CMD(n) int cmd_##n(int argc, char **argv); \
	extern const char usage_##n[]; extern const char help_##n[]
DECL_CMD(detect);
DECL_CMD(info);
DECL_CMD(find);
DECL_CMD(status);
DECL_CMD(notify);
DECL_CMD(request);
DECL_CMD(requests);
DECL_CMD(release);
DECL_CMD(get);
DECL_CMD(set);
DECL_CMD(reconfigure);
DECL_CMD(monitor);
DECL_CMD(watch);
DECL_CMD(wait);


#endif
