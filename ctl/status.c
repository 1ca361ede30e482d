/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl status: the broker, its counts, the caller and its lines, the policy. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

const char usage_status[] = "gpiobrokerctl status [--json]";
const char help_status[] =
	"Is the broker up (exit code 7 if not), its version, chips and lines, requests\n"
	"and watchers, your uid and the lines the policy lets you use, and the policy's\n"
	"status if the broker reports one.\n"
	"      --json               one JSON object\n";

struct status {
	struct tree tree;
	char *version;
	int requests, watchers;
	gid_t groups[257]; /* the primary group first, then the others */
	int n_groups;
	const struct lineinfo **usable; /* the lines the caller may use */
	bool *persistent;               /* ... and whether persistently */
	size_t n_usable;
	struct policy_status policy;
	bool policy_reported;
};

/* The caller's primary and supplementary groups, as the bus reports them: this
 * process's, the primary first; over -H the SSH login's, from the far bus. */
static void status_groups(struct status *st)
{
	gid_t others[256];
	uint32_t uid, g[256];
	int n = bus_caller(&uid, g, 256);

	/* Another uid than ours: a login elsewhere (-H), whose groups only its bus knows. */
	if (n > 0 && uid != (uint32_t)getuid()) {
		for (int i = 0; i < n; i++)
			st->groups[st->n_groups++] = g[i];
		return;
	}
	n = getgroups(256, others);

	st->groups[st->n_groups++] = getgid();
	for (int i = 0; i < n; i++)
		if (others[i] != getgid())
			st->groups[st->n_groups++] = others[i];
}

/* Everything status shows, read from the broker. 0 or -errno. */
static int status_act(struct status *st)
{
	struct gpiobroker_request_info *info = NULL;
	int r = bus_load_tree(&st->tree, true);

	if (r < 0)
		return r;
	st->version = bus_version();
	st->requests = gpiobroker_list_requests(B, &info);
	if (st->requests > 0)
		gpiobroker_request_info_free(info, st->requests);
	st->requests = st->requests < 0 ? 0 : st->requests;
	status_groups(st);
	st->usable = calloc(st->tree.n_lines + 1, sizeof(*st->usable));
	st->persistent = calloc(st->tree.n_lines + 1, sizeof(*st->persistent));
	if (!st->usable || !st->persistent)
		return -ENOMEM;
	for (size_t i = 0; i < st->tree.n_lines; i++) {
		const struct lineinfo *l = &st->tree.lines[i];
		struct access a;

		st->watchers += bus_count_watchers(l->path);
		bus_get_access(l->path, &a);
		if (!a.known || !a.may_use)
			continue;
		st->persistent[st->n_usable] = a.persistent;
		st->usable[st->n_usable++] = l;
	}
	st->policy_reported = bus_policy_status(&st->policy) >= 0;
	return 0;
}

static void status_free(struct status *st)
{
	tree_free(&st->tree);
	free(st->version);
	free(st->usable);
	free(st->persistent);
	policy_status_clear(&st->policy);
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

/* One action a line: what it does, how often it fired, and whether it is at work. */
static void print_actions_text(const struct status_value *v)
{
	if (!v->n_actions)
		printf(" none");
	for (size_t k = 0; k < v->n_actions; k++) {
		const struct action_status *a = &v->actions[k];

		printf("\n  %s: %s %s -> %s; fired %" PRIu64 ", suppressed %" PRIu64 ", last ",
		       a->name, a->line, a->trigger, a->unit, a->fired, a->suppressed);
		print_usec_time(a->last_usec);
		printf("; %s", a->state);
	}
}

/* "policy KEY: VALUE" per key; lists (errors, warnings) one item a line. */
static void print_policy_text(const struct policy_status *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		const struct status_value *v = &ps->values[i];

		/* The slices have a verb of their own: here only their count. */
		if (v->type == 'S') {
			if (v->n_slices)
				printf("%zu slice%s (see gpiobrokerctl slices)\n", v->n_slices,
				       v->n_slices == 1 ? "" : "s");
			continue;
		}
		printf(v->type == 'a' || v->type == 'A' ? "policy %s:" : "policy %s: ", v->key);
		if (v->type == 's')
			printf("%s", v->str);
		else if (v->type == 'b')
			printf("%s", v->b ? "yes" : "no");
		else if (v->type == 'i')
			printf("%" PRId64, v->i);
		else if (v->type == 't' && strcmp(v->key, "loaded-at") == 0)
			print_usec_time(v->u);
		else if (v->type == 'u' || v->type == 't')
			printf("%" PRIu64, v->u);
		else if (v->type == 'a' && !v->n_strv)
			printf(" none");
		else if (v->type == 'A')
			print_actions_text(v);
		else if (v->type != 'a')
			printf("(type %s)", v->signature);
		for (size_t k = 0; v->type == 'a' && k < v->n_strv; k++)
			printf("\n  %s", v->strv[k]);
		printf("\n");
	}
}

static void status_print_text(const struct status *st)
{
	const char *sep = "";

	printf("gpiod-broker: running, version %s\n", st->version ? st->version : "unknown");
	printf("chips: %zu, lines: %zu\n", st->tree.n_chips, st->tree.n_lines);
	printf("requests: %d, watchers: %d\n", st->requests, st->watchers);
	printf("you: uid %u, groups ", (unsigned)caller_uid());
	for (int i = 0; i < st->n_groups; sep = ",", i++)
		printf("%s%u", sep, (unsigned)st->groups[i]);
	printf("; lines you may use:");
	for (size_t i = 0; i < st->n_usable; i++) {
		const struct lineinfo *l = st->usable[i];
		const struct chipinfo *ch = tree_chip_by_path(&st->tree, l->chip);

		if (l->alias && *l->alias)
			printf(" %s", l->alias);
		else if (l->name && *l->name)
			printf(" %s", l->name);
		else
			printf(" %s:%" PRIu32, ch ? ch->name : "?", l->offset);
	}
	printf("%s\n", st->n_usable ? "" : " none");
	if (st->policy_reported)
		print_policy_text(&st->policy);
	else
		printf("policy status: the broker does not report it\n");
}

static json_t *status_value_json(const struct status_value *v)
{
	json_t *a;

	switch (v->type) {
	case 's':
		return jstr(v->str);
	case 'b':
		return json_boolean(v->b);
	case 'i':
		return json_integer(v->i);
	case 'u':
	case 't':
		return ju64(v->u);
	case 'a':
		a = json_array();
		for (size_t k = 0; k < v->n_strv; k++)
			jpush(&a, jstr(v->strv[k]));
		return a;
	case 'A':
		a = json_array();
		for (size_t k = 0; k < v->n_actions; k++) {
			const struct action_status *x = &v->actions[k];

			jpush(&a, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "name", jstr(x->name),
					    "line", jstr(x->line), "trigger", jstr(x->trigger),
					    "unit", jstr(x->unit), "fired", ju64(x->fired),
					    "suppressed", ju64(x->suppressed), "last_fired",
					    ju64(x->last_usec), "state", jstr(x->state)));
		}
		return a;
	case 'S':
		return slices_json(v);
	default:
		return json_null();
	}
}

static int status_print_json(const struct status *st)
{
	json_t *groups = json_array(), *lines = json_array(), *policy = json_object(), *o;

	for (int i = 0; i < st->n_groups; i++)
		jpush(&groups, json_integer(st->groups[i]));
	for (size_t i = 0; i < st->n_usable; i++) {
		const struct lineinfo *l = st->usable[i];
		const struct chipinfo *ch = tree_chip_by_path(&st->tree, l->chip);

		jpush(&lines, json_pack("{s:o,s:I,s:o,s:o,s:b}", "chip", jstr(ch ? ch->name : ""),
					"offset", (json_int_t)l->offset, "name", jstr_or_null(l->name),
					"alias", jstr_or_null(l->alias), "persistent",
					st->persistent[i]));
	}
	for (size_t i = 0; i < st->policy.n; i++)
		jput(&policy, st->policy.values[i].key, status_value_json(&st->policy.values[i]));
	o = json_pack("{s:b,s:o,s:I,s:I,s:i,s:i,s:I,s:o,s:o,s:o,s:b}", "running", 1,
		      "version", jstr_or_null(st->version), "chips", (json_int_t)st->tree.n_chips,
		      "lines", (json_int_t)st->tree.n_lines, "requests", st->requests,
		      "watchers", st->watchers, "uid", (json_int_t)caller_uid(), "groups", groups,
		      "usable_lines", lines, "policy_status", policy,
		      "policy_status_reported", st->policy_reported);
	return json_print(o);
}

int cmd_status(int argc, char **argv)
{
	struct status st = { 0 };
	bool json;
	int r;

	if ((r = parse_json_only(argc, argv, &json, 0)))
		return r;
	r = status_act(&st);
	if (r == -ENOMEM) {
		fprintf(stderr, "gpiobrokerctl: status: %s\n", strerror(-r));
		r = EX_ERROR;
	} else if (r < 0 && json) {
		int code = exit_of(r);

		r = json_print(json_pack("{s:b,s:I}", "running", 0, "uid", (json_int_t)getuid()));
		r = r ? r : code;
	} else if (r < 0) {
		printf("gpiod-broker: not running\n");
		r = exit_of(r);
	} else if (json) {
		r = status_print_json(&st);
	} else {
		status_print_text(&st);
	}
	status_free(&st);
	return r;
}
