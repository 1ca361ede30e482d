/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Edge actions (action.h). */
#include "action.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "announce.h"
#include "broker.h"
#include "bus-error.h"
#include "journal.h"
#include "log.h"
#include "lookup.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "state.h"
#include "watch.h"

#define SYSTEMD_NAME  "org.freedesktop.systemd1"
#define SYSTEMD_PATH  "/org/freedesktop/systemd1"
#define SYSTEMD_IFACE "org.freedesktop.systemd1.Manager"
/* The largest action state file read back. */
#define ACTION_FILE_MAX 4096

static const char *const job_methods[] = {
	[GB_JOB_START] = "StartUnit",
	[GB_JOB_STOP] = "StopUnit",
	[GB_JOB_RESTART] = "RestartUnit",
};

static uint64_t realtime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t mono_ns(void)
{
	uint64_t ns = 0;

	gb_clock_now(GPIOD_LINE_CLOCK_MONOTONIC, &ns);
	return ns;
}

static void set_status(Action *a, const char *fmt, ...) _printf_(2, 3);
static void set_status(Action *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	if (a->status && strcmp(a->status, s) == 0) {
		free(s);
		return;
	}
	free(a->status);
	a->status = s;
	announce_changed(a->broker, GB_ROOT_PATH, GB_IFACE_MANAGER, "PolicyStatus", NULL);
}

/* --- the state file ----------------------------------------------------------- */

static void file_name(const Action *a, char *buf, size_t size)
{
	snprintf(buf, size, "action-%s", a->def.name);
}

static int write_state(FILE *f, const void *rec)
{
	const Action *a = rec;

	fprintf(f, "line=%s\n", a->line_key);
	return gb_trigger_write(&a->trigger, f);
}

static void save(Action *a)
{
	char name[128];
	int r;

	if (!a->broker->state.record || !a->line_key[0])
		return;
	file_name(a, name, sizeof(name));
	r = state_write_file(&a->broker->state, name, write_state, a);
	if (r < 0)
		log_warning_errno(r, "action %s: cannot write its state to %s: %m; a restart "
				  "may lose or repeat a firing", a->def.name, a->broker->state.dir);
}

static void forget(Action *a)
{
	char name[128];

	file_name(a, name, sizeof(name));
	if (a->broker->state.dfd >= 0)
		(void)unlinkat(a->broker->state.dfd, name, 0);
}

/* The previous broker's state of this action on this line, if it left one. */
static bool load(Action *a)
{
	char name[128], err[200], text[ACTION_FILE_MAX + 1], want[128];
	size_t len, klen;
	ssize_t n;
	int fd;

	file_name(a, name, sizeof(name));
	if (a->broker->state.dfd < 0 || faccessat(a->broker->state.dfd, name, F_OK,
						  AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	fd = state_open_checked(&a->broker->state, name, O_RDONLY, 0, ACTION_FILE_MAX, err,
				sizeof(err));
	if (fd < 0) {
		log_error("refusing state file %s/%s: %s; action %s starts afresh",
			  a->broker->state.dir, name, err, a->def.name);
		return false;
	}
	n = read(fd, text, ACTION_FILE_MAX);
	close(fd);
	if (n < 0)
		return false;
	len = (size_t)n;
	text[len] = '\0';
	klen = (size_t)snprintf(want, sizeof(want), "line=%s\n", a->line_key);
	/* Another line than the policy names now: not this action's past. */
	if (len < klen || memcmp(text, want, klen) != 0)
		return false;
	if (gb_trigger_parse(&a->trigger, text + klen, len - klen) < 0) {
		log_error("state file %s/%s cannot be read; action %s starts afresh",
			  a->broker->state.dir, name, a->def.name);
		return false;
	}
	return true;
}

/* --- firing ---------------------------------------------------------------------- */

/* What a job call needs when its reply comes: the action may be gone by then. */
struct job_call {
	Broker *broker;
	char *action;
	char *unit;
	char *event;
	char *line;
};

static void job_call_free(void *userdata)
{
	struct job_call *c = userdata;

	if (!c)
		return;
	free(c->action);
	free(c->unit);
	free(c->event);
	free(c->line);
	free(c);
}

static Action *find_action(Broker *b, const char *name)
{
	for (Action *a = b->actions; a; a = a->next)
		if (strcmp(a->def.name, name) == 0)
			return a;
	return NULL;
}

static void log_firing(const char *id, int level, const char *action, const char *line,
		       const char *event, const char *unit, const char *job, const char *fmt, ...)
	_printf_(8, 9);
static void log_firing(const char *id, int level, const char *action, const char *line,
		       const char *event, const char *unit, const char *job, const char *fmt, ...)
{
	struct gb_log_fields f = {};
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	journal_message_id(&f, id);
	gb_log_field(&f, "GPIO_ACTION", "%s", action);
	gb_log_field(&f, "GPIO_LINE", "%s", line);
	gb_log_field(&f, "GPIO_EVENT", "%s", event);
	gb_log_field(&f, "GPIO_ACTION_UNIT", "%s", unit);
	if (job)
		gb_log_field(&f, "GPIO_ACTION_JOB", "%s", job);
	log_struct(level, &f, "%s", msg);
}

static int on_job_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct job_call *c = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	const char *job = NULL;

	if (!e) {
		if (sd_bus_message_read(m, "o", &job) < 0)
			job = NULL;
		log_firing(GB_MESSAGE_ACTION_FIRED, LOG_NOTICE, c->action, c->line, c->event, c->unit,
			   job, "action %s: %s %s: %s queued for %s%s%s", c->action, c->line,
			   c->event, c->unit, c->line, job ? ", job " : "", job ? job : "");
	} else {
		Action *a = find_action(c->broker, c->action);

		/* It was counted as fired when it was sent; systemd said no. */
		if (a && a->trigger.fired) {
			a->trigger.fired--;
			a->trigger.suppressed++;
			save(a);
			announce_changed(c->broker, GB_ROOT_PATH, GB_IFACE_MANAGER, "PolicyStatus",
					 NULL);
		}
		log_firing(GB_MESSAGE_ACTION_SUPPRESSED, LOG_WARNING, c->action, c->line, c->event,
			   c->unit, NULL, "action %s: %s %s: systemd refused the job on %s: %s (%s)",
			   c->action, c->line, c->event, c->unit, e->message ? e->message : "",
			   e->name ? e->name : "");
	}
	return 0;
}

static void fire(Action *a, enum gb_trigger_event ev, uint64_t now)
{
	const char *event = gb_trigger_event_name(ev);
	char unit[256];
	struct job_call *c;
	int r;

	if (gb_policy_action_unit(&a->def, ev, unit, sizeof(unit)) < 0)
		return; /* the parser made sure of it */
	if (!gb_trigger_admit(&a->trigger, &a->def.trigger, now, realtime_usec())) {
		/* What the integrator asked for: a notice, not a warning. */
		log_firing(GB_MESSAGE_ACTION_SUPPRESSED, LOG_NOTICE, a->def.name, a->def.line, event,
			   unit, NULL, "action %s: %s %s: not firing %s: its rate limit (%u in %" PRIu64
			   " ms) is reached", a->def.name, a->def.line, event, unit,
			   a->def.trigger.rate_burst, a->def.trigger.rate_interval_ns / 1000000);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c) {
		c->broker = a->broker;
		c->action = strdup(a->def.name);
		c->unit = strdup(unit);
		c->event = strdup(event);
		c->line = strdup(a->def.line);
	}
	if (!c || !c->action || !c->unit || !c->event || !c->line) {
		job_call_free(c);
		r = -ENOMEM;
	} else {
		sd_bus_slot *slot = NULL;

		r = sd_bus_call_method_async(a->broker->bus, &slot, SYSTEMD_NAME, SYSTEMD_PATH,
					     SYSTEMD_IFACE, job_methods[a->def.job], on_job_reply, c,
					     "ss", unit, "replace");
		if (r < 0) {
			job_call_free(c);
		} else {
			/* The call's context goes with its slot: after the reply, or with
			 * the bus if the broker exits first. */
			sd_bus_slot_set_destroy_callback(slot, job_call_free);
			sd_bus_slot_set_floating(slot, 1);
			sd_bus_slot_unref(slot);
		}
	}
	if (r < 0) {
		a->trigger.fired--;
		a->trigger.suppressed++;
		log_firing(GB_MESSAGE_ACTION_SUPPRESSED, LOG_WARNING, a->def.name, a->def.line, event,
			   unit, NULL, "action %s: %s %s: cannot ask systemd to %s %s: %s",
			   a->def.name, a->def.line, event, gb_action_job_name(a->def.job), unit,
			   strerror(-r));
	}
	announce_changed(a->broker, GB_ROOT_PATH, GB_IFACE_MANAGER, "PolicyStatus", NULL);
}

/* --- the trigger at work ------------------------------------------------------- */

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata);

static void arm(Action *a)
{
	uint64_t at = gb_trigger_deadline(&a->trigger, &a->def.trigger);
	int r;

	if (!at) {
		if (a->timer)
			sd_event_source_set_enabled(a->timer, SD_EVENT_OFF);
		return;
	}
	/* The timer is in µs; round up, so that the tick is never before the deadline. */
	at = at / 1000 + (at % 1000 != 0);
	if (!a->timer)
		r = sd_event_add_time(a->broker->event, &a->timer, CLOCK_MONOTONIC, at, 1000,
				      on_timer, a);
	else
		r = sd_event_source_set_time(a->timer, at);
	if (r >= 0)
		r = sd_event_source_set_enabled(a->timer, SD_EVENT_ONESHOT);
	if (r < 0)
		log_error_errno(r, "action %s: cannot arm its timer: %m; a long press or a "
				"debounced edge may not fire", a->def.name);
	/* Armed from an edge's callback, outside sd-event's turn. */
	loop_want_turn(a->broker->loop);
}

/* Fire what came out, save what changed, and wait for what comes next. */
static void handle(Action *a, const struct gb_trigger *before, const enum gb_trigger_event *out,
		   int n, uint64_t now)
{
	for (int i = 0; i < n; i++)
		fire(a, out[i], now);
	if (n || before->known != a->trigger.known || before->level != a->trigger.level ||
	    before->level_ns != a->trigger.level_ns || before->long_fired != a->trigger.long_fired)
		save(a);
	arm(a);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	Action *a = userdata;
	struct gb_trigger before = a->trigger;
	enum gb_trigger_event out[GB_TRIGGER_MAX_OUT];
	uint64_t now = mono_ns();
	int n = gb_trigger_tick(&a->trigger, &a->def.trigger, now, out);

	handle(a, &before, out, n, now);
	return 0;
}

static void on_edge(LineTap *t, const struct gb_edge *ev)
{
	Action *a = container_of(t, Action, tap);
	const struct gb_line_config *hc = t->line ? t->line->holder_config : NULL;
	struct gb_trigger before = a->trigger;
	enum gb_trigger_event out[GB_TRIGGER_MAX_OUT];
	uint64_t now = mono_ns(), ts = now;
	bool rising = ev->rising;
	int n;

	if (!a->started)
		return; /* its level is not known yet: on_resync() starts it */
	/* The wire's edge, whatever the holder asked of the kernel. */
	if (hc && hc->active_low)
		rising = !rising;
	if (!hc || hc->event_clock == GPIOD_LINE_CLOCK_MONOTONIC)
		ts = ev->timestamp_ns;
	n = gb_trigger_edge(&a->trigger, &a->def.trigger, rising, ts, out);
	log_debug("action %s: %s edge at %" PRIu64 " ns (now %" PRIu64 "): %d to fire, level %d%s",
		  a->def.name, rising ? "rising" : "falling", ts, now, n, a->trigger.level,
		  a->trigger.pending ? ", one waits its debounce" : "");
	handle(a, &before, out, n, now);
}

/* Read the level and (re)start the trigger with it; LEVEL fires only on the first. */
static void start(Action *a)
{
	struct gb_trigger before = a->trigger;
	enum gb_trigger_event out[GB_TRIGGER_MAX_OUT];
	uint64_t now;
	bool high, first = !a->started;
	int n, r, k = 0;

	if (!a->tap.line)
		return;
	r = watch_line_level(a->tap.line, &high, &now);
	if (r < 0) {
		if (r != -ENODATA)
			log_warning_errno(r, "action %s: cannot read line %s: %m", a->def.name,
					  a->def.line);
		return;
	}
	n = gb_trigger_start(&a->trigger, &a->def.trigger, high, now, out);
	for (int i = 0; i < n; i++)
		if (first || (out[i] != GB_TEV_HIGH && out[i] != GB_TEV_LOW))
			out[k++] = out[i];
	a->started = true;
	set_status(a, "observing %s:%u", a->tap.line->chip->name, a->tap.line->offset);
	handle(a, &before, out, k, now);
}

static void on_resync(LineTap *t)
{
	start(container_of(t, Action, tap));
}

static void on_gone(LineTap *t)
{
	Action *a = container_of(t, Action, tap);

	/* Another device may come under the name: it starts afresh. */
	gb_trigger_init(&a->trigger);
	a->started = false;
	if (a->timer)
		sd_event_source_set_enabled(a->timer, SD_EVENT_OFF);
	set_status(a, "its chip is gone");
	log_info("action %s: the chip of line %s is gone", a->def.name, a->def.line);
}

/* --- life ------------------------------------------------------------------------ */

static void bind(Action *a)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	Line *l;
	char key[96];

	if (a->tap.line)
		return;
	if (line_resolve_spec(a->broker, a->def.line, &l, &err) < 0) {
		set_status(a, "no line: %s", err.message ? err.message : a->def.line);
		sd_bus_error_free(&err);
		return;
	}
	snprintf(key, sizeof(key), "%s:%u", l->chip->name, l->offset);
	if (strcmp(key, a->line_key) != 0) {
		/* Not the line its state was about. */
		gb_trigger_init(&a->trigger);
		a->started = false;
		snprintf(a->line_key, sizeof(a->line_key), "%s", key);
	}
	if (!a->restored && !a->started) {
		a->restored = true;
		(void)load(a);
	}
	if (watch_tap_add(&a->tap, l, &err) < 0) {
		set_status(a, "not observed: %s", err.message);
		log_warning("action %s: line %s is not observed until it can be: %s", a->def.name,
			    a->def.line, err.message);
		sd_bus_error_free(&err);
		return;
	}
	start(a);
}

/* The same section, but its alias may name another line now. */
static void rebind_if_moved(Action *a)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	Line *l = NULL;

	(void)line_resolve_spec(a->broker, a->def.line, &l, &err);
	sd_bus_error_free(&err);
	if (l == a->tap.line)
		return;
	log_info("action %s: line %s is another line now", a->def.name, a->def.line);
	watch_tap_remove(&a->tap);
	if (a->timer)
		sd_event_source_set_enabled(a->timer, SD_EVENT_OFF);
	a->started = false;
	bind(a);
}

static int copy_def(struct gb_policy_action *to, const struct gb_policy_action *from)
{
	*to = *from;
	to->file = strdup(from->file);
	to->name = strdup(from->name);
	to->line = strdup(from->line);
	to->unit = strdup(from->unit);
	return to->file && to->name && to->line && to->unit ? 0 : -ENOMEM;
}

static bool same_def(const struct gb_policy_action *a, const struct gb_policy_action *b)
{
	const struct gb_trigger_config *x = &a->trigger, *y = &b->trigger;

	/* Field by field: a struct's padding is not part of its value. */
	return strcmp(a->name, b->name) == 0 && strcmp(a->line, b->line) == 0 &&
	       strcmp(a->unit, b->unit) == 0 && a->job == b->job && a->bias == b->bias &&
	       x->kind == y->kind && x->active_low == y->active_low &&
	       x->debounce_ns == y->debounce_ns && x->hold_ns == y->hold_ns &&
	       x->long_hold_ns == y->long_hold_ns && x->after_long_press == y->after_long_press &&
	       x->rate_interval_ns == y->rate_interval_ns && x->rate_burst == y->rate_burst;
}

static Action *action_free(Action *a, bool keep_state)
{
	if (!a)
		return NULL;
	watch_tap_remove(&a->tap);
	sd_event_source_disable_unref(a->timer);
	if (!keep_state)
		forget(a);
	gb_policy_action_clear(&a->def);
	free(a->status);
	free(a);
	return NULL;
}

static Action *action_new(Broker *b, const struct gb_policy_action *def)
{
	Action *a = calloc(1, sizeof(*a));

	if (!a || copy_def(&a->def, def) < 0) {
		if (a)
			gb_policy_action_clear(&a->def);
		free(a);
		log_error("action %s: out of memory; it does nothing", def->name);
		return NULL;
	}
	a->broker = b;
	a->tap.bias = def->bias;
	a->tap.on_edge = on_edge;
	a->tap.on_resync = on_resync;
	a->tap.on_gone = on_gone;
	gb_trigger_init(&a->trigger);
	return a;
}

void actions_apply(Broker *b)
{
	const struct gb_policy *p = b->policy;
	Action **pp = &b->actions, *kept = NULL, **tail = &kept;

	/* Those the policy no longer has as they were end; the rest stay as they are. */
	while (*pp) {
		Action *a = *pp;
		bool same = false;

		for (size_t i = 0; !same && i < p->n_actions; i++)
			same = same_def(&a->def, &p->actions[i]);
		*pp = a->next;
		if (same) {
			a->next = NULL;
			*tail = a;
			tail = &a->next;
			rebind_if_moved(a);
			continue;
		}
		log_info("action %s: ended by a policy reload", a->def.name);
		action_free(a, false);
	}
	b->actions = kept;
	for (size_t i = 0; i < p->n_actions; i++) {
		Action *a;

		if (find_action(b, p->actions[i].name))
			continue;
		a = action_new(b, &p->actions[i]);
		if (!a)
			continue;
		*tail = a;
		tail = &a->next;
		/* The first one of an empty list is its head. */
		b->actions = kept;
		bind(a);
		log_info("action %s: %s %s %s %s (%s:%u); %s", a->def.name, a->def.line,
			 gb_trigger_kind_name(a->def.trigger.kind), gb_action_job_name(a->def.job),
			 a->def.unit, a->def.file, a->def.lineno, a->status ? a->status : "");
	}
	announce_changed(b, GB_ROOT_PATH, GB_IFACE_MANAGER, "PolicyStatus", NULL);
}

void actions_bind(Broker *b)
{
	for (Action *a = b->actions; a; a = a->next)
		bind(a);
}

void actions_free_all(Broker *b)
{
	while (b->actions) {
		Action *a = b->actions;

		b->actions = a->next;
		if (b->handover)
			save(a);
		action_free(a, b->handover);
	}
}

int actions_append_status(Broker *b, sd_bus_message *reply)
{
	int r = sd_bus_message_open_container(reply, 'e', "sv");

	if (r >= 0)
		r = sd_bus_message_append(reply, "s", "actions");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'v', "a(ssssttts)");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssssttts)");
	for (Action *a = b->actions; r >= 0 && a; a = a->next)
		r = sd_bus_message_append(reply, "(ssssttts)", a->def.name, a->def.line,
					  gb_trigger_kind_name(a->def.trigger.kind), a->def.unit,
					  a->trigger.fired, a->trigger.suppressed,
					  a->trigger.last_fired_usec, a->status ? a->status : "");
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}
