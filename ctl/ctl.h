/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl's pieces. Each verb is cut as libgpiod's tools are: options (parse
 * the command line into a config), resolve (LINE arguments to lines and requests),
 * act (the broker calls), print (text, or one JSON value).
 * The files, in ranks, lowest first (a file calls only files of lower ranks;
 * tools/check-layers checks it):
 *   parse.c    options, values, periods, "did you mean" (pure: host unit tests)
 *   json.c     the JSON writer, over jansson (pure: host unit tests)
 *   common.c   errors and exit codes, text output shared by verbs
 *   bus.c      every raw D-Bus read (the object tree, GetAccess, PolicyStatus, ...),
 *              into the plain structs below; no verb calls sd-bus itself
 *   caller.c   the caller's uid and groups as the bus recorded them (the same rank
 *              as bus.c: neither calls the other)
 *   policy-status.c  Manager.PolicyStatus, with the edge actions and the slices
 *              (bus.c's rank too)
 *   resolve.c  the argument resolver: lines by alias, name, CHIP:OFFSET, path or
 *              -c CHIP with offsets; requests by id or path; errors about lines
 *   evloop.c   the event loop of monitor, watch and notify (the same rank as
 *              resolve.c)
 *   the verbs: info.c (detect, info, find), status.c, notify.c, lines.c (request,
 *              requests, release, reconfigure), values.c (get, set), monitor.c
 *              (monitor, watch, wait), slices.c
 *   gpiobrokerctl.c  main: the verb table
 */
#ifndef GB_CTL_H
#define GB_CTL_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

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
extern const char *cur_cmd;  /* the command being run, for messages */
extern bool cur_chip_opt;    /* whether it takes -c CHIP (for the hint of a chip given as a line) */
extern const char *cur_target; /* -H's host or -M's container, NULL: this machine */

/* --- parse.c: options, values, periods ------------------------------------------ */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Options of the libgpiod tools refused with a reason (the letter is not reused). */
int refuse_opt(const char *opt, const char *why);
/* gpioget's and others' -s/--strict: every line reference is one line here. */
int refuse_strict(void);
/* The '?' or ':' of getopt_long, explained (with "did you mean"). */
int opt_error(int c, char **argv, const struct option *opts);
/* The candidate closest to @word, if it is close enough to be what was meant. */
const char *suggest(const char *word, const char *const *cands, size_t n);
int pick(const char *arg, const char *const names[], int n);
/* "0"/"1"/"active"/"inactive"/"on"/"off"/"high"/"low"/"true"/"false" -> 0/1, else -1. */
int parse_value(const char *s);
/* "10ms", "5s", "100us", "1.5s"; a bare number is in @bare_us units. -1 if bad. */
int64_t parse_period(const char *s, uint64_t bare_us);
/* A positive count; -1 if not one. */
int parse_count(const char *s, unsigned long *out);
/* LINE[=VALUE]: *@id the text before the "=" (malloc'd), *@value 0/1 or -1 without one.
 * An "=" followed by a "/" belongs to a path. 0, EX_USAGE (reported) or EX_ERROR. */
int parse_line_arg(const char *arg, char **id, int *value);
/* @base, made an output driven to @value if @value is 0 or 1 (LINE=VALUE). */
struct gpiobroker_line_settings with_value(const struct gpiobroker_line_settings *base, int value);
/* A command taking only --json and @n_args arguments (0 or 1 LINE): *@json, 0 or an
 * exit code; optind at the first argument. */
int parse_json_only(int argc, char **argv, bool *json, int n_args);
/* -n N: 1, or EX_USAGE (reported). */
int count_opt(const char *arg, unsigned long *count);
/* --idle-timeout P (a bare number is ms): 1, or EX_USAGE (reported). */
int idle_opt(const char *arg, uint64_t *us);

/* -c CHIP and --by-name, which every command taking LINEs has. */
struct line_opts {
	const char *chip_id;
	bool by_name;
};
/* 1 if @c was one of them, else 0. */
int line_opt(int c, const char *arg, struct line_opts *lo);
/* A period as the libgpiod tools print one: "10ms", "1s", "15us". */
const char *period_str(uint64_t us, char *buf, size_t size);

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

/* Handles. */
bool is_request_path(const char *s);
bool is_number(const char *s);
/* A request as given: its path, or its id (a bare number); NULL if neither. */
char *request_ref(const char *arg);
/* The short id of a request or watch path ("5"), or the path if it is not one. */
const char *short_id(const char *path);

/* --- json.c: the JSON writer --------------------------------------------------- */
/* A JSON string of @s (NULL: ""); bytes that are not UTF-8 become U+FFFD (one per
 * maximal ill-formed subsequence). NULL if out of memory: json_pack() and the
 * helpers below then fail as a whole. */
json_t *jstr(const char *s);
/* jstr(), or null for NULL and "". */
json_t *jstr_or_null(const char *s);
/* An unsigned 64-bit count or timestamp. */
json_t *ju64(uint64_t v);
/* (*@obj)[@key] = @v and append @v to *@array, taking @v. If @v is NULL or memory
 * runs out, the whole value is dropped: *@obj or *@array becomes NULL, which
 * json_print() reports. */
void jput(json_t **obj, const char *key, json_t *v);
void jpush(json_t **array, json_t *v);
/* @v on one line of stdout, compact, and freed. EX_OK, or EX_ERROR (reported) if @v
 * is NULL: building it ran out of memory. */
int json_print(json_t *v);

/* --- bus.c: the broker's objects, read with plain D-Bus ----------------------------- */
struct chipinfo {
	char *path, *name, *label;
	/* What udev says of the chip (Chip.ByPath, ById, Serial): the full /dev/gpio/by-*
	 * links and the serial; "" when unknown, also from a broker without them. */
	char *by_path, *by_id, *serial;
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

/* Every chip and line (ObjectManager.GetManagedObjects), sorted; 0 or -errno
 * (reported unless @quiet; -EHOSTDOWN if the broker is not on the bus). */
int bus_load_tree(struct tree *t, bool quiet);
void tree_free(struct tree *t);
const struct chipinfo *tree_chip_by_path(const struct tree *t, const char *path);
struct lineinfo *tree_line_by_path(const struct tree *t, const char *path);
const struct lineinfo *tree_line_at(const struct tree *t, const char *chip, unsigned int offset);

/* One line's properties (Properties.GetAll); 0 or -errno. Clear with lineinfo_clear(). */
int bus_read_line(const char *path, struct lineinfo *l);
void lineinfo_clear(struct lineinfo *l);
/* A request's OwnerUid; 0 or -errno. */
int bus_request_owner(const char *request_path, uint32_t *uid);
/* The caller's uid and groups as the bus daemon recorded them (over -H, the SSH
 * login's): the number of groups put in @p groups, or -errno. */
int bus_caller(uint32_t *uid, uint32_t *groups, int max_groups);
/* bus_caller()'s uid, read once; getuid() if the bus cannot say. */
uint32_t caller_uid(void);
/* Manager.Version; NULL if unknown. */
char *bus_version(void);
/* How many watch a line (Line.Watchers); 0 if unknown. */
int bus_count_watchers(const char *line_path);

/* Manager.GetAccess for the caller. */
struct access {
	int known, may_use, persistent, direct, bypass;
	char directions[128], edges[128], entry[512], reason[1024], error[256];
};
void bus_get_access(const char *line_path, struct access *a);

/* Manager.PolicyStatus: its keys in the broker's order, each with a value of one
 * of the types below (type 0: another, named by @signature). */
/* One edge action of the policy, as "actions" in PolicyStatus has it. */
struct action_status {
	char *name, *line, *trigger, *unit, *state;
	uint64_t fired, suppressed, last_usec;
};
/* One slice, as "slices" in PolicyStatus has it. */
struct slice_status {
	char *name, *state, *chip, *link;
	char **lines;
	size_t n_lines;
};
struct status_value {
	char *key, *str, *signature;
	char type; /* 's' (also 'o'), 'b', 'u', 'i', 't', 'a' (as), 'A' (the actions), 'S' (the slices) */
	bool b;
	int64_t i;
	uint64_t u;
	char **strv;
	size_t n_strv;
	struct action_status *actions;
	size_t n_actions;
	struct slice_status *slices;
	size_t n_slices;
};
struct policy_status {
	struct status_value *values;
	size_t n;
};
/* 0, or -errno if the broker does not report it. */
int bus_policy_status(struct policy_status *ps);
/* Its "slices", or NULL if the broker reports none (an older broker). */
const struct status_value *policy_status_slices(const struct policy_status *ps);
/* A JSON array of the slices of @p v ("slices"). */
json_t *slices_json(const struct status_value *v);
void policy_status_clear(struct policy_status *ps);

/* Until the broker owns its name: 1, or 0 when @timeout_us (-1: none) ran out;
 * -errno (reported). */
int bus_wait_broker(int64_t timeout_us);

/* A line's PropertiesChanged, applied to its entry of the tree. */
struct line_change {
	struct lineinfo *line; /* as it is now */
	int was_used;          /* Used before the signal */
	int used;              /* Used in the signal; -1 if it did not carry it */
	bool settings;         /* it carried direction, edges, bias, drive, clock, active-low
				* or debounce */
};
typedef void (*line_change_fn)(const struct line_change *c, void *userdata);
struct line_follow;
/* Follow the lines of @t (kept current) in @loop; NULL (errno set) on failure. */
/* End @p l's loop when the bus connection closes (bus.c). 0 or -errno. */
struct evloop;
int bus_watch_lost(struct evloop *l);
void bus_unwatch_lost(struct evloop *l);
struct line_follow *bus_follow_lines(sd_event *loop, struct tree *t, line_change_fn fn,
				     void *userdata);
struct line_follow *line_follow_free(struct line_follow *f);

/* --- resolve.c: arguments to lines ------------------------------------------------- */
enum {
	RESOLVE_VALUES = 1 << 0,   /* LINE[=VALUE] */
	RESOLVE_REQUESTS = 1 << 1, /* without -c, an ID or PATH names a request */
};

struct resolved_line {
	char *id;          /* how the user named it (before any "=") */
	char *ref;         /* what the broker is asked: CHIP:OFFSET under -c, else id */
	char *request;     /* the request's path, when the argument names one (then no line) */
	char *path;        /* the line object */
	char *chip;        /* the chip's name */
	unsigned int offset;
	int value;         /* from =VALUE; -1 if none */
};

struct resolver {
	const struct chipinfo *chip;  /* -c CHIP, in the tree */
	struct tree tree;             /* loaded for -c, or by resolver_load_tree() */
	bool tree_loaded;
	int num_lines;
	struct resolved_line lines[];
};

/* libgpiod's resolve_lines(): every argument to its line (FindLine; under -c,
 * offsets and names on that chip) or request. 0 or an exit code, the reason
 * printed (with "did you mean", or the -c hint for a chip given as a line). */
int resolve_lines(int n, char **args, const struct line_opts *lo, unsigned int flags,
		  struct resolver **out);
struct resolver *resolver_free(struct resolver *res);
/* The tree, loaded now if it was not; 0 or -errno (reported unless @quiet). */
int resolver_load_tree(struct resolver *res, bool quiet);
/* -c CHIP: a chip's name, number, label or /dev path; NULL if none (reported). */
const struct chipinfo *resolve_chip(const struct tree *t, const char *arg);
/* A line argument the broker does not know: the error, then "did you mean" or the
 * hint that it is a chip. Returns the exit code. */
int fail_line(const char *line, int r);
/* A failed request of @lines: "persistent = no" in the policy gets its own advice. */
int fail_request(int n, const char *const *lines, int r, bool persistent, const char *verb);

/* A request named by id or path, or the request holding a line (then *@index is
 * the line's index in it, else -1). 0 or an exit code (reported). */
int open_target(const char *arg, struct gpiobroker_request **req, int *index);

/* --- common.c: errors, shared output, the event loop --------------------------------- */
int exit_of(int r);
/* A failed broker call about @what (a user's argument or a verb): one line. */
int fail(const char *what, int r);
void not_running(void);
/* Whether a D-Bus error name says the broker is not on the bus. */
bool bus_error_is_down(const char *name);

/* Whether a line's Request is a request (not "/"). */
bool line_is_held(const struct lineinfo *l);
void print_quoted(const char *s, bool unquoted);
/* gpioinfo's attributes, then the broker's (alias, request). */
void print_attrs(const struct lineinfo *l, bool unquoted);
/* gpioinfo's name column: 16 wide, quoted unless @unquoted, "unnamed" never quoted. */
void print_name_col(const struct lineinfo *l, bool unquoted);
/* A timestamp as gpiomon prints it: 'S' seconds, 'U' UTC, 'L' local time. */
void print_ts(uint64_t ns, char spec);
/* A CLOCK_MONOTONIC time in ns as CLOCK_REALTIME, by the offset between them now. */
uint64_t monotonic_to_realtime(uint64_t ns);
/* -F FORMAT, one row: each %X goes to @spec (false if X is not one of its
 * specifiers: printed as it is), %% is a percent sign. */
void print_format(const char *fmt, bool (*spec)(char c, void *userdata), void *userdata);

/* The event loop of monitor, watch and notify: SIGINT and SIGTERM end it cleanly
 * (the lines are released, the output flushed), so do --timeout and --idle-timeout
 * (exit code 0: it ran as asked). */
struct evloop {
	sd_event *loop;
	sd_event_source *idle;
	uint64_t idle_us;
	/* The connection to the bus closed under the loop (an SSH link went): the
	 * loop ends, evloop_run() says so and returns -ENOTCONN. */
	bool lost;
	struct sd_bus_slot *lost_slot;
};
/* 0 or -errno (reported). */
int evloop_new(struct evloop *l, uint64_t timeout_us, uint64_t idle_us);
/* An event came: --idle-timeout starts again. */
void evloop_kick(struct evloop *l);
void evloop_exit(struct evloop *l);
/* 0 or -errno (reported). */
int evloop_run(struct evloop *l);
/* The exit code of a command whose loop returned @p r: @p status if it ran as asked. */
int evloop_exit_code(int r, int status);
void evloop_free(struct evloop *l);

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
DECL_CMD(slices);

#endif
