/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: Manager.PolicyStatus read into plain structs (status.c prints them),
 * at bus.c's rank: neither calls the other. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "ctl.h"

static sd_bus *bus(void)
{
	return gpiobroker_get_bus(B);
}

void policy_status_clear(struct policy_status *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct status_value *v = &ps->values[i];

		free(v->key), free(v->str), free(v->signature);
		for (size_t k = 0; k < v->n_strv; k++)
			free(v->strv[k]);
		free(v->strv);
		for (size_t k = 0; k < v->n_actions; k++) {
			struct action_status *a = &v->actions[k];

			free(a->name), free(a->line), free(a->trigger), free(a->unit), free(a->state);
		}
		free(v->actions);
		for (size_t k = 0; k < v->n_slices; k++) {
			struct slice_status *s = &v->slices[k];

			free(s->name), free(s->state), free(s->chip), free(s->link);
			for (size_t j = 0; j < s->n_lines; j++)
				free(s->lines[j]);
			free(s->lines);
		}
		free(v->slices);
	}
	free(ps->values);
	memset(ps, 0, sizeof(*ps));
}

static int read_status_strv(sd_bus_message *m, struct status_value *v)
{
	const char *item;
	int r = sd_bus_message_enter_container(m, 'a', "s");

	while (r >= 0 && (r = sd_bus_message_read(m, "s", &item)) > 0) {
		char **strv = realloc(v->strv, (v->n_strv + 1) * sizeof(*strv));

		if (!strv)
			return -ENOMEM;
		v->strv = strv;
		if (!(v->strv[v->n_strv] = strdup(item)))
			return -ENOMEM;
		v->n_strv++;
	}
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_status_actions(sd_bus_message *m, struct status_value *v)
{
	const char *name, *line, *trigger, *unit, *state;
	uint64_t fired, suppressed, last;
	int r = sd_bus_message_enter_container(m, 'a', "(ssssttts)");

	while (r >= 0 && (r = sd_bus_message_read(m, "(ssssttts)", &name, &line, &trigger, &unit,
						  &fired, &suppressed, &last, &state)) > 0) {
		struct action_status *a = realloc(v->actions, (v->n_actions + 1) * sizeof(*a));

		if (!a)
			return -ENOMEM;
		v->actions = a;
		a = &a[v->n_actions++];
		*a = (struct action_status){ strdup(name), strdup(line), strdup(trigger),
					     strdup(unit), strdup(state), fired, suppressed, last };
		if (!a->name || !a->line || !a->trigger || !a->unit || !a->state)
			return -ENOMEM;
	}
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_slice_lines(sd_bus_message *m, struct slice_status *s)
{
	const char *item;
	int r = sd_bus_message_enter_container(m, 'a', "s");

	while (r >= 0 && (r = sd_bus_message_read(m, "s", &item)) > 0) {
		char **l = realloc(s->lines, (s->n_lines + 1) * sizeof(*l));

		if (!l)
			return -ENOMEM;
		s->lines = l;
		if (!(s->lines[s->n_lines] = strdup(item)))
			return -ENOMEM;
		s->n_lines++;
	}
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_status_slices(sd_bus_message *m, struct status_value *v)
{
	const char *name, *state, *chip, *link;
	int r = sd_bus_message_enter_container(m, 'a', "(ssssas)");

	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "ssssas")) > 0) {
		struct slice_status *s = realloc(v->slices, (v->n_slices + 1) * sizeof(*s));

		if (!s)
			return -ENOMEM;
		v->slices = s;
		s = memset(&s[v->n_slices++], 0, sizeof(*s));
		r = sd_bus_message_read(m, "ssss", &name, &state, &chip, &link);
		if (r < 0)
			return r;
		s->name = strdup(name), s->state = strdup(state);
		s->chip = strdup(chip), s->link = strdup(link);
		if (!s->name || !s->state || !s->chip || !s->link)
			return -ENOMEM;
		r = read_slice_lines(m, s);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

const struct status_value *policy_status_slices(const struct policy_status *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->values[i].type == 'S')
			return &ps->values[i];
	return NULL;
}

/* One value (inside its variant) of the types status prints; others are skipped. */
static int read_status_value(sd_bus_message *m, const char *contents, struct status_value *v)
{
	const char *s;
	uint32_t u32;
	int r, b;

	v->type = strcmp(contents, "as") == 0 ? 'a' : contents[1] ? 0 : contents[0];
	if (strcmp(contents, "a(ssssttts)") == 0 && strcmp(v->key, "actions") == 0) {
		v->type = 'A';
		return read_status_actions(m, v);
	}
	if (strcmp(contents, "a(ssssas)") == 0 && strcmp(v->key, "slices") == 0) {
		v->type = 'S';
		return read_status_slices(m, v);
	}
	switch (v->type) {
	case 's':
	case 'o':
		v->type = 's';
		r = sd_bus_message_read_basic(m, contents[0], &s);
		return r < 0 ? r : (v->str = strdup(s)) ? 0 : -ENOMEM;
	case 'b':
		r = sd_bus_message_read_basic(m, 'b', &b);
		v->b = b;
		return r;
	case 'u':
	case 'i':
		r = sd_bus_message_read_basic(m, v->type, &u32);
		v->u = u32;
		v->i = v->type == 'i' ? (int32_t)u32 : (int64_t)u32;
		return r;
	case 't':
		return sd_bus_message_read_basic(m, 't', &v->u);
	case 'a':
		return read_status_strv(m, v);
	default:
		v->type = 0;
		if (!(v->signature = strdup(contents)))
			return -ENOMEM;
		return sd_bus_message_skip(m, contents);
	}
}

static int read_status_entry(sd_bus_message *m, struct policy_status *ps)
{
	struct status_value *v = realloc(ps->values, (ps->n + 1) * sizeof(*v));
	const char *key, *contents;
	char type;
	int r;

	if (!v)
		return -ENOMEM;
	ps->values = v;
	v = memset(&ps->values[ps->n++], 0, sizeof(*v));
	r = sd_bus_message_read(m, "s", &key);
	if (r >= 0 && !(v->key = strdup(key)))
		r = -ENOMEM;
	if (r >= 0)
		r = sd_bus_message_peek_type(m, &type, &contents);
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'v', contents);
	if (r >= 0)
		r = read_status_value(m, contents, v);
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

int bus_policy_status(struct policy_status *ps)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	memset(ps, 0, sizeof(*ps));
	r = sd_bus_get_property(bus(), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "PolicyStatus",
				&e, &reply, "a{sv}");
	sd_bus_error_free(&e);
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		r = read_status_entry(reply, ps);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	sd_bus_message_unref(reply);
	if (r < 0)
		policy_status_clear(ps);
	return r < 0 ? r : 0;
}

/* The slices as JSON, for status and slices alike. */
json_t *slices_json(const struct status_value *v)
{
	json_t *a = json_array();

	for (size_t k = 0; k < v->n_slices; k++) {
		const struct slice_status *s = &v->slices[k];
		json_t *lines = json_array();

		for (size_t j = 0; j < s->n_lines; j++)
			jpush(&lines, jstr(s->lines[j]));
		jpush(&a, json_pack("{s:o,s:o,s:o,s:o,s:o}", "name", jstr(s->name), "state",
				    jstr(s->state), "chip", jstr(s->chip), "link", jstr(s->link),
				    "lines", lines));
	}
	return a;
}
