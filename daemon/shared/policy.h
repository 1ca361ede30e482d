/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file policy.h
 * @brief Integrator policy: who may use which line, and how (the gpio_export model).
 *
 * Policy files (gpiod-broker.policy(5)) are parsed whole into a gb_policy; a file
 * with any error is rejected with "file:line: message" and the policy in force
 * stays. Evaluation is pure (no bus, no kernel), so it is unit-tested directly and
 * against a reference model.
 *
 * Default: deny. A line no entry covers can be used by nobody but root (and root
 * only while "root-bypass" is on, the default).
 */
#ifndef GB_POLICY_H
#define GB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "line-config.h"
#include "trigger.h"

/* Bit sets over the libgpiod enums: bit (1 << enum value). */
#define GB_BIT(v) (1u << (v))

enum gb_safe_state {
	GB_SAFE_AS_IS,
	GB_SAFE_INPUT,
	GB_SAFE_OUTPUT_LOW,
	GB_SAFE_OUTPUT_HIGH,
};

/* How an entry names its chip (gpiod-broker.policy(5), "chip"). */
enum gb_chip_by {
	GB_CHIP_BY_NAME,  /* gpiochipN or label */
	GB_CHIP_BY_LINK,  /* /dev/gpio/by-path/... or /dev/gpio/by-id/... */
	GB_CHIP_BY_PROPS, /* ID_SERIAL_SHORT=..., ... */
};

/* What udev says of a chip (sd-device), where the system has udev. */
struct gb_chip_udev {
	const char *const *links; /* its /dev symlinks, NULL-terminated, or NULL */
	const char *const *props; /* its properties as "KEY=VALUE", NULL-terminated, or NULL */
};

struct gb_policy_entry {
	char *file;             /* where it was defined, for messages */
	unsigned int lineno;
	bool group;             /* [group NAME] rather than [line ALIAS] */
	char *name;             /* the alias (line) or group name */

	/* which lines: a kernel line name, or a chip with offsets. The chip is named
	 * as chip_by says: its name or label (fnmatch glob), one of its /dev/gpio/by-*
	 * links (glob), or udev properties (chip_props, "KEY=GLOB" each, all of them
	 * to match). chip is the value as written, for messages and duplicates. */
	char *line_name;
	char *chip;
	enum gb_chip_by chip_by;
	char **chip_props;
	size_t n_chip_props;
	/* Set while the chips present make a chip_by identity match more than one
	 * chip (gb_policy_check_identity): the message, and its lines are unusable. */
	char *ambiguous;
	unsigned int *offsets;
	size_t n_offsets;

	/* who: uids and gids (primary or supplementary); any_user for "users = *" */
	uid_t *uids;
	size_t n_uids;
	gid_t *gids;
	size_t n_gids;
	bool any_user;

	/* who may watch (read-only: value and edges, never own it); separate from
	 * users/groups, which may request */
	uid_t *watch_uids;
	size_t n_watch_uids;
	gid_t *watch_gids;
	size_t n_watch_gids;
	bool watch_any_user;
	unsigned int max_watchers; /* 0: not given, GB_DEFAULT_MAX_WATCHERS */

	/* what */
	unsigned int directions; /* GB_BIT(GPIOD_LINE_DIRECTION_INPUT/OUTPUT) */
	bool direction_may_change;
	unsigned int edges;      /* GB_BIT(enum gpiod_line_edge); NONE always included */
	unsigned int biases;     /* GB_BIT(enum gpiod_line_bias); AS_IS always included */
	unsigned int drives;     /* GB_BIT(enum gpiod_line_drive); PUSH_PULL always included */
	bool persistent;
	/* a persistent request of these lines is made again when its chip comes back
	 * (the same identity: by-id, by-path or ID_PATH, and label) */
	bool restore_on_replug;
	char *label_prefix;
	/* the holder may have the kernel line-request fds (Request option "direct");
	 * the parser allows it only where the entry already allows every setting the
	 * fd can make */
	bool direct;

	/* safety */
	enum gb_safe_state safe_state;
	int initial_value;       /* -1: none */
};

/* What an edge action does with its unit (org.freedesktop.systemd1.Manager). */
enum gb_action_job {
	GB_JOB_START,
	GB_JOB_STOP,
	GB_JOB_RESTART,
};

/* [action NAME]: an edge of a line starts, stops or restarts a systemd unit, with no
 * program in between (gpiod-broker.policy(5), "ACTIONS"). */
struct gb_policy_action {
	char *file;
	unsigned int lineno;
	char *name;
	char *line;        /* an alias, a kernel line name, or CHIP:OFFSET, as written */
	struct gb_trigger_config trigger;
	enum gpiod_line_bias bias; /* AS_IS: as the line is */
	char *unit;        /* as written: NAME.SUFFIX, a template NAME@.SUFFIX, %l and %e */
	enum gb_action_job job;
};

/* [slice NAME]: lines that its users and groups get as a chip of their own, made
 * from them by the kernel's gpio-aggregator (gpiod-broker.policy(5), "SLICES"). The
 * policy only says which lines and for whom; the chip is made by gpiod-broker-slices. */
struct gb_policy_slice {
	char *file;
	unsigned int lineno;
	char *name;
	char **lines;      /* items as written: alias, kernel line name or CHIP:OFFSET */
	size_t n_lines;
	char **users;      /* as written: names or numeric ids */
	size_t n_users;
	char **groups;
	size_t n_groups;
};

/* An image's etc/passwd or etc/group, read once, when a name is first looked up. */
struct gb_sysroot_names {
	char *text; /* NUL-terminated */
	size_t len;
	char *error; /* "file: why it cannot be used\n", for the loader to report */
};

struct gb_policy {
	struct gb_policy_entry *entries;
	size_t n_entries;
	struct gb_policy_action *actions;
	size_t n_actions;
	struct gb_policy_slice *slices;
	size_t n_slices;
	bool root_bypass;
	/* Set by gb_policy_load_from() to resolve user and group names from
	 * SYSROOT/etc/passwd and SYSROOT/etc/group instead of NSS (an image's tree,
	 * checked offline); file owners are then not checked (a build tree is not owned
	 * by root). NULL: NSS. Without trailing slashes ("" for "/"). */
	char *sysroot;
	int sysroot_fd; /* the image's root while loading, else -1 */
	struct gb_sysroot_names passwd, group;
	/* "file:line: message\n" each: entries that can never match as things stand
	 * (an unknown user or group). Not errors: such a name grants nothing. */
	char *warnings;
};

/** A chip as it is present, for the checks that need the hardware. */
struct gb_chip_ident {
	const char *name;
	const char *label;
	unsigned int num_lines;
	const char *const *line_names; /* num_lines of them, each may be NULL */
	const struct gb_chip_udev *udev; /* NULL: nothing known */
};

/** Who is calling, as the bus says. */
struct gb_caller {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t n_groups;
};

/** A line as the kernel describes it. */
struct gb_line_ident {
	const char *chip_name;
	const char *chip_label;
	unsigned int offset;
	const char *line_name; /* may be NULL or "" */
	const struct gb_chip_udev *chip_udev; /* NULL: nothing known */
};

/** The largest policy file read, and the largest etc/passwd or etc/group of an image. */
#define GB_POLICY_FILE_MAX  (1024 * 1024)
#define GB_POLICY_NAMES_MAX (4 * 1024 * 1024)

/** Watchers a line may have when its entry (or no entry, for root) does not say. */
#define GB_DEFAULT_MAX_WATCHERS 16
#define GB_MAX_MAX_WATCHERS     1024

struct gb_policy *gb_policy_new(void);
void gb_policy_free(struct gb_policy *p);
/** Append "file:line: message" to @p errors (for the parser and the loader). */
void gb_policy_add_error(char **errors, const char *file, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/** A boolean as the policy writes one (yes/no, true/false, on/off, 1/0): 0 or -EINVAL. */
int gb_policy_parse_bool(const char *v, bool *out);
/** A name of an alias, group or action: a letter, then letters, digits, '-', '_', '.'. */
bool gb_policy_valid_name(const char *s);
/**
 * A section's key @p id (@p key as written) given with @p value: refused if the section
 * gave it already (@p seen, a bit per id, holds its keys so far) or if the value is
 * empty. 0, or -EINVAL with the message in @p err.
 */
int gb_policy_key_given(const char *key, int id, const char *value, unsigned long *seen,
			char *err, size_t size);
/**
 * The id of @p key in a section whose keys are @p keys (the id is the index), checked as
 * gb_policy_key_given() does; a key not among them is unknown "in @p section section"
 * (@p section: "a [slice]"). The id, or -EINVAL with the message in @p err.
 */
int gb_policy_section_key(const char *const *keys, size_t n_keys, const char *section,
			  const char *key, const char *value, unsigned long *seen, char *err,
			  size_t size);
/** Free what one entry holds (the parser drops a half-read one). */
void gb_policy_entry_clear(struct gb_policy_entry *e);

/**
 * Parse one file's text into @p p (appending entries). @p name is used in messages.
 * Errors are appended to @p errors (a growing string, "file:line: message\n"); returns
 * the number of errors found (0 = fine), or -ENOMEM.
 */
int gb_policy_parse(struct gb_policy *p, const char *name, const char *text, size_t len,
		    char **errors);

/**
 * Checks across all parsed entries: unique names, no line covered twice (as far as
 * can be told without the hardware). Returns the number of errors appended.
 */
int gb_policy_finish(struct gb_policy *p, char **errors);

/**
 * Load every "*.conf" file of @p dir in name order. Files must be regular, owned by
 * root and not writable by group or others. A missing directory is an empty policy.
 * Cross-file checks (duplicate aliases, a line covered twice) are done here.
 * Returns a policy, or NULL with *errors set.
 */
struct gb_policy *gb_policy_load(const char *dir, char **errors);
/**
 * gb_policy_load() with names resolved in the image at @p sysroot (NULL: NSS, see
 * struct gb_policy), and the warnings, whether the policy loads or not, appended to
 * *@p warnings (then the policy's own warnings are NULL).
 *
 * With @p sysroot, everything read in the image is resolved inside it
 * (gb_sysroot_open()): a @p dir that starts with SYSROOT/, and etc/passwd and
 * etc/group, whose symlinks, absolute or with "..", stay in the image. Only
 * regular files are read, etc/passwd and etc/group up to GB_POLICY_NAMES_MAX
 * bytes, and any of them that cannot be used is an error; so is a missing @p dir
 * or @p sysroot (an offline check must not pass a typo for an empty policy).
 */
struct gb_policy *gb_policy_load_from(const char *dir, const char *sysroot, char **errors,
				      char **warnings);

/**
 * The checks that need the hardware, against the chips present: a line covered by
 * two entries (an error, appended to @p errors); an offset beyond a present chip
 * the entry names, and a line-name no present line has (warnings: the entry
 * matches nothing there). Returns the number of errors.
 */
int gb_policy_check_chips(const struct gb_policy *p, const struct gb_chip_ident *chips,
			  size_t n_chips, char **errors, char **warnings);
/**
 * Where an entry names its chip by identity (a /dev/gpio/by-* link or udev
 * properties), it must match one chip of those present: one that matches two is
 * an error naming both, appended to @p errors, and the entry's lines are unusable
 * (gb_policy_match() says why) until the chips or the policy change. Called at load
 * and whenever a chip comes or goes. Returns the number of such entries.
 */
int gb_policy_check_identity(struct gb_policy *p, const struct gb_chip_ident *chips,
			     size_t n_chips, char **errors);
/** Does @p e name this chip (any way chip_by says)? False for a line-name entry. */
bool gb_policy_entry_names_chip(const struct gb_policy_entry *e, const char *name,
				const char *label, const struct gb_chip_udev *udev);
/** Parse the value of "chip" into @p e. -EINVAL with a message in @p err, or -ENOMEM. */
int gb_policy_parse_chip(struct gb_policy_entry *e, const char *value, char *err, size_t size);
/** The value of udev property @p key in @p u, or NULL. */
const char *gb_chip_udev_get(const struct gb_chip_udev *u, const char *key);
/**
 * The uid or gid of @p name in the image's @p file (etc/passwd, etc/group): 1 and
 * *@p id, 0 if it has no such name, or -EIO if the file cannot be used (why is in
 * the policy's names, for the loader to report once).
 */
int gb_policy_lookup_sysroot(struct gb_policy *p, const char *file, const char *name,
			     unsigned int *id);
/**
 * The uid (@p user) or gid of @p name: in the image's etc/passwd or etc/group with a
 * sysroot (gb_policy_lookup_sysroot()), else by NSS. 1 and *@p id, 0 if unknown,
 * < 0 if the image's file cannot be used.
 */
int gb_policy_lookup_name(struct gb_policy *p, bool user, const char *name, unsigned int *id);
/**
 * What @p e lacks to allow everything a holder of the kernel's own line fd (or of a
 * chip of its own) can set: "directions = input, output; edges = ..." in @p buf, or
 * NULL if it lacks nothing. direct = yes and [slice] lines need it to lack nothing.
 */
const char *gb_policy_entry_fd_missing(const struct gb_policy_entry *e, char *buf, size_t size);
/** The number of "\n"-ended lines in @p s (errors, warnings); 0 for NULL. */
unsigned int gb_policy_count_lines(const char *s);

/**
 * The entry covering a line. NULL if none; NULL with *ambiguous set to a message
 * when two entries cover it (a policy error: the line is unusable until fixed).
 */
const struct gb_policy_entry *gb_policy_match(const struct gb_policy *p,
					      const struct gb_line_ident *l,
					      char *ambiguous, size_t size);

/** The entry whose alias is @p alias, or NULL. */
const struct gb_policy_entry *gb_policy_find_alias(const struct gb_policy *p, const char *alias);

/** Is the caller one of the entry's users/groups? */
bool gb_policy_entry_allows_caller(const struct gb_policy_entry *e, const struct gb_caller *c);

/**
 * May @p c request line @p l with @p cfg (persistent or not, with @p label)?
 * 0, or -EACCES with the reason (which rule is missing) in @p reason.
 */
int gb_policy_check_request(const struct gb_policy *p, const struct gb_line_ident *l,
			    const struct gb_caller *c, const struct gb_line_config *cfg,
			    bool persistent, const char *label, char *reason, size_t size);

/** May @p c change the line from @p old to @p new (direction, edge, bias, drive)? */
int gb_policy_check_reconfigure(const struct gb_policy *p, const struct gb_line_ident *l,
				const struct gb_caller *c, const struct gb_line_config *old,
				const struct gb_line_config *new, char *reason, size_t size);

/**
 * May @p c have the kernel line fds of its request of @p l ("direct = yes")? 0, or
 * -EACCES with the missing rule and the entry's file:line in @p reason.
 */
int gb_policy_check_direct(const struct gb_policy *p, const struct gb_line_ident *l,
			   const struct gb_caller *c, char *reason, size_t size);

/** May @p c use the line at all (get, set, release)? */
int gb_policy_check_use(const struct gb_policy *p, const struct gb_line_ident *l,
			const struct gb_caller *c, char *reason, size_t size);

/**
 * May @p c watch line @p l (watch-users, watch-groups)? 0, or -EACCES with the
 * missing rule in @p reason. *max_watchers gets the line's limit either way.
 */
int gb_policy_check_watch(const struct gb_policy *p, const struct gb_line_ident *l,
			  const struct gb_caller *c, unsigned int *max_watchers, char *reason,
			  size_t size);

/* --- actions (policy-action.c) --- */

/** Start a fresh [action NAME] section read at @p file:@p lineno. 0 or -ENOMEM. */
int gb_policy_action_begin(struct gb_policy_action *a, const char *name, const char *file,
			   unsigned int lineno);
/**
 * One "key = value" of an [action] section. 0, -EINVAL with the message in @p err
 * (unknown key, bad value), or -ENOMEM. @p seen is the section's keys so far (a bit
 * per key), for "given twice".
 */
int gb_policy_action_set_key(struct gb_policy_action *a, const char *key, const char *value,
			     unsigned long *seen, char *err, size_t size);
/**
 * The section ends: what it lacks or contradicts, each by gb_policy_add_error() at its
 * header. Without errors it moves into @p p (and @p a is left empty). Returns the
 * number of errors, or -ENOMEM.
 */
int gb_policy_action_end(struct gb_policy *p, struct gb_policy_action *a, char **errors);
/** Free what one action holds, and zero it. */
void gb_policy_action_clear(struct gb_policy_action *a);
/**
 * Checks across the whole policy: unique action names, and each press action's
 * long_hold_ns from the long-press actions of the same line. Errors appended;
 * returns their number.
 */
int gb_policy_actions_finish(struct gb_policy *p, char **errors);
/**
 * The unit an action's @p event starts: %l (the line as written, escaped as
 * systemd-escape does) and %e (the event) expanded, and a template without an
 * instance given "LINE:EVENT". 0, or -ENAMETOOLONG / -EINVAL (not a valid unit name).
 */
int gb_policy_action_unit(const struct gb_policy_action *a, enum gb_trigger_event event,
			  char *buf, size_t size);
const char *gb_action_job_name(enum gb_action_job j);
/**
 * With --root: whether each action's units exist in the image (etc/systemd/system,
 * usr/lib/systemd/system, lib/systemd/system; a template instance by its template),
 * opened with gb_sysroot_open() in @p rootfd. Missing ones are errors. Returns their
 * number.
 */
int gb_policy_actions_check_units(const struct gb_policy *p, int rootfd, char **errors);

/* --- slices (policy-slice.c) --- */

/** The slice named @p name, or NULL. */
const struct gb_policy_slice *gb_policy_find_slice(const struct gb_policy *p, const char *name);
/** The slice that holds policy line item @p item (as written in an entry or alias), or NULL. */
const struct gb_policy_slice *gb_policy_slice_of_item(const struct gb_policy *p, const char *item);

/**
 * Start a fresh [slice NAME] section read at @p file:@p lineno. 0, -EINVAL with the
 * message in @p err (a name that cannot be a file name and a D-Bus path element), or
 * -ENOMEM.
 */
int gb_policy_slice_begin(struct gb_policy_slice *s, const char *name, const char *file,
			  unsigned int lineno, char *err, size_t size);
/**
 * One "key = value" at @p lineno of a [slice] section. 0, -EINVAL with the message in
 * @p err, or -ENOMEM. A user or group name nobody has is a warning in @p p's
 * warnings, as for entries. @p seen is the section's keys so far (a bit per key).
 */
int gb_policy_slice_set_key(struct gb_policy *p, struct gb_policy_slice *s, const char *key,
			    const char *value, unsigned int lineno, unsigned long *seen, char *err,
			    size_t size);
/**
 * The section ends: what it lacks, each by gb_policy_add_error() at its header.
 * Without errors it moves into @p p (and @p s is left empty). Returns the number of
 * errors, or -ENOMEM.
 */
int gb_policy_slice_end(struct gb_policy *p, struct gb_policy_slice *s, char **errors);
/** Free what one slice holds, and zero it. */
void gb_policy_slice_clear(struct gb_policy_slice *s);
/**
 * Checks across the whole policy, as far as they can be told without the chips: unique
 * slice names; each line covered by an entry that allows everything a chip's consumer
 * can set; no line in two slices, twice in one, or observed by an action. Errors
 * appended; returns their number.
 */
int gb_policy_slices_finish(struct gb_policy *p, char **errors);
/**
 * --check-policy: whether the kernel can make the slices (CONFIG_GPIO_AGGREGATOR):
 * with @p sysroot, from the image's boot/config-*, else from this machine's sysfs and
 * /lib/modules. "file:line: warning: ..." for each slice it cannot make, or one
 * "note: ..." when there is no kernel config to tell, printed to @p out. Returns the
 * number of warnings.
 */
int gb_policy_slices_check_kernel(const struct gb_policy *p, const char *sysroot, FILE *out);

/**
 * A polkit rule (JavaScript, for /etc/polkit-1/rules.d/) that lets @p user start,
 * stop or restart exactly the units the actions name, each with its job, and
 * nothing else; @p source says in a comment which policy it was made from.
 * 0 or -EIO.
 */
int gb_policy_actions_polkit(const struct gb_policy *p, const char *user, const char *source,
			     FILE *f);

/** "[line door-lock] (/etc/gpiod-broker/policy.d/10-door.conf:3)" */
void gb_policy_entry_describe(const struct gb_policy_entry *e, char *buf, size_t size);

const char *gb_safe_state_name(enum gb_safe_state s);
/**
 * The settings that put a line in safe state @p s, written over @p c (no edges,
 * no debounce, active-high; output at the level, or input). False for
 * GB_SAFE_AS_IS, which leaves @p c alone: the line stays as it is.
 */
bool gb_safe_state_config(enum gb_safe_state s, struct gb_line_config *c);

#endif
