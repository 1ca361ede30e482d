/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl's argument resolver, in the shape of libgpiod's resolve_lines():
 * every LINE argument of a command to the line the broker means by it (an alias, a
 * line name, CHIP:OFFSET or a path; under -c CHIP an offset or a name on that chip),
 * or to a request (its id or path), before the command acts. What cannot be
 * resolved is said once, with the broker's words and "did you mean", or with the
 * hint that a chip was given where a line is taken.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* A chip as -c takes it (with @numbers, also "0" for gpiochip0); nothing is printed. */
static const struct chipinfo *find_chip(const struct tree *t, const char *arg, bool numbers)
{
	char want[128];

	/* As the libgpiod tools: "0", "gpiochip0" and "/dev/gpiochip0" are one chip. */
	if (is_number(arg) && !numbers)
		return NULL;
	/* A stable link names the chip the broker says it is (also over -H, where
	 * this machine's /dev is not the broker's). */
	for (size_t i = 0; strncmp(arg, "/dev/gpio/", 10) == 0 && i < t->n_chips; i++)
		if (strcmp(t->chips[i].by_path, arg) == 0 || strcmp(t->chips[i].by_id, arg) == 0)
			return &t->chips[i];
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
		if (*t->chips[i].label && strcmp(t->chips[i].label, arg) == 0)
			return &t->chips[i];
	return NULL;
}

const struct chipinfo *resolve_chip(const struct tree *t, const char *arg)
{
	const struct chipinfo *ch = find_chip(t, arg, true);
	const char *names[64];
	const char *best;
	size_t n = 0;

	if (ch)
		return ch;
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

/* A chip given where a line is taken (gpioinfo gpiochip0): say how to give it. */
static bool hint_chip(const struct tree *t, const char *line)
{
	const struct chipinfo *ch = find_chip(t, line, false);

	if (!ch)
		return false;
	if (cur_chip_opt)
		fprintf(stderr, "gpiobrokerctl: %s: %s is a chip, not a line: did you mean '-c %s'?\n",
			cur_cmd, line, line);
	else
		fprintf(stderr, "gpiobrokerctl: %s: %s is a chip, not a line (gpiobrokerctl info -c %s "
				"lists its lines)\n", cur_cmd, line, line);
	return true;
}

/* A misspelt line name or alias: the broker's closest one. */
static void hint_name(const struct tree *t, const char *line)
{
	const char **cands = calloc(2 * t->n_lines + 1, sizeof(*cands));
	const char *best;
	size_t n = 0;

	for (size_t i = 0; cands && i < t->n_lines; i++) {
		if (t->lines[i].name && *t->lines[i].name)
			cands[n++] = t->lines[i].name;
		if (t->lines[i].alias && *t->lines[i].alias)
			cands[n++] = t->lines[i].alias;
	}
	best = cands ? suggest(line, cands, n) : NULL;
	if (best)
		fprintf(stderr, "gpiobrokerctl: %s: did you mean '%s'?\n", cur_cmd, best);
	free(cands);
}

int fail_line(const char *line, int r)
{
	int ret = fail(line, r);
	struct tree t;

	if (ret != EX_NOTFOUND || bus_load_tree(&t, true) < 0)
		return ret;
	if (!hint_chip(&t, line))
		hint_name(&t, line);
	tree_free(&t);
	return ret;
}

/* A line the policy lets the caller use, but only while a command holds it. */
static bool only_while_held(const char *line)
{
	char *lpath = NULL;
	struct access a;

	if (gpiobroker_find_line(B, line, &lpath, NULL, NULL) < 0)
		return false;
	bus_get_access(lpath, &a);
	free(lpath);
	return a.known && a.may_use && !a.persistent;
}

int fail_request(int n, const char *const *lines, int r, bool persistent, const char *verb)
{
	for (int i = 0; r == -EACCES && persistent && i < n; i++) {
		if (!only_while_held(lines[i]))
			continue;
		fprintf(stderr, "gpiobrokerctl: %s: %s: the policy lets you use it only while a "
				"command holds it (persistent = no); hold it with: "
				"gpiobrokerctl request %s=VALUE\n", cur_cmd, lines[i], lines[i]);
		return EX_DENIED;
	}
	if (n == 1)
		return fail_line(lines[0], r);
	return fail(verb, r);
}

int resolver_load_tree(struct resolver *res, bool quiet)
{
	int r;

	if (res->tree_loaded)
		return 0;
	r = bus_load_tree(&res->tree, quiet);
	res->tree_loaded = r >= 0;
	return r;
}

struct resolver *resolver_free(struct resolver *res)
{
	if (!res)
		return NULL;
	for (int i = 0; i < res->num_lines; i++) {
		struct resolved_line *rl = &res->lines[i];

		free(rl->id), free(rl->ref), free(rl->request), free(rl->path), free(rl->chip);
	}
	tree_free(&res->tree);
	free(res);
	return NULL;
}

/* One argument (its id parsed) to its request, or through FindLine to its line. */
static int resolve_one(struct resolver *res, struct resolved_line *rl, unsigned int flags,
		       bool by_name)
{
	int r;

	if ((flags & RESOLVE_REQUESTS) && !res->chip && (rl->request = request_ref(rl->id)))
		return 0;
	if (res->chip && !by_name && is_number(rl->id))
		r = asprintf(&rl->ref, "%s:%s", res->chip->name, rl->id);
	else
		r = (rl->ref = strdup(rl->id)) ? 0 : -1;
	if (r < 0)
		return EX_ERROR;
	r = gpiobroker_find_line(B, rl->ref, &rl->path, &rl->chip, &rl->offset);
	if (r < 0)
		return fail_line(rl->id, r);
	if (!res->chip)
		return 0;
	if (strcmp(rl->chip, res->chip->name) != 0) {
		fprintf(stderr, "gpiobrokerctl: %s: %s: no such line on %s (it is %s %u)\n", cur_cmd,
			rl->id, res->chip->name, rl->chip, rl->offset);
		return EX_NOTFOUND;
	}
	/* Under -c the broker is asked for CHIP:OFFSET: a name cannot mean another chip's. */
	free(rl->ref);
	return asprintf(&rl->ref, "%s:%u", rl->chip, rl->offset) < 0 ? (rl->ref = NULL, EX_ERROR) : 0;
}

int resolve_lines(int n, char **args, const struct line_opts *lo, unsigned int flags,
		  struct resolver **out)
{
	struct resolver *res = calloc(1, sizeof(*res) + (size_t)n * sizeof(res->lines[0]));
	int r;

	*out = res;
	if (!res)
		return EX_ERROR;
	res->num_lines = n;
	/* The values first: a usage error is told before the broker is asked anything. */
	for (int i = 0; i < n; i++) {
		struct resolved_line *rl = &res->lines[i];

		rl->value = -1;
		r = flags & RESOLVE_VALUES ? parse_line_arg(args[i], &rl->id, &rl->value) :
		    (rl->id = strdup(args[i])) ? 0 : EX_ERROR;
		if (r)
			return r;
	}
	if (lo && lo->chip_id) {
		r = resolver_load_tree(res, false);
		if (r < 0)
			return exit_of(r);
		res->chip = resolve_chip(&res->tree, lo->chip_id);
		if (!res->chip)
			return EX_NOTFOUND;
	}
	for (int i = 0; i < n; i++)
		if ((r = resolve_one(res, &res->lines[i], flags, lo && lo->by_name)))
			return r;
	return 0;
}

int open_target(const char *arg, struct gpiobroker_request **req, int *index)
{
	struct resolver *res = NULL;
	struct resolved_line *rl;
	struct lineinfo l = { 0 };
	char *ref = request_ref(arg);
	int r;

	*index = -1;
	if (ref) {
		*req = gpiobroker_request_open(B, ref);
		r = -errno;
		free(ref);
		return *req ? 0 : fail(arg, r);
	}
	r = resolve_lines(1, (char **)&arg, NULL, 0, &res);
	if (r)
		goto out;
	rl = &res->lines[0];
	if (bus_read_line(rl->path, &l) < 0 || !line_is_held(&l)) {
		fprintf(stderr, "gpiobrokerctl: %s: %s: not held through the broker\n", cur_cmd, arg);
		r = EX_NOTFOUND;
		goto out;
	}
	*req = gpiobroker_request_open(B, l.request);
	if (!*req) {
		r = fail(arg, -errno);
		goto out;
	}
	for (size_t i = 0; i < gpiobroker_request_get_num_lines(*req); i++)
		if (strcmp(gpiobroker_request_get_chip(*req, i), rl->chip) == 0 &&
		    gpiobroker_request_get_offset(*req, i) == (int)rl->offset)
			*index = (int)i;
out:
	lineinfo_clear(&l);
	resolver_free(res);
	return r;
}
