/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: errors and exit codes, the text output verbs share, the event loop. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"

struct gpiobroker *B;

/* --- errors -------------------------------------------------------------------- */

uint32_t caller_uid(void)
{
	static bool known;
	static uint32_t uid;
	uint32_t g;

	if (!known) {
		if (bus_caller(&uid, &g, 0) < 0)
			uid = (uint32_t)getuid();
		known = true;
	}
	return uid;
}

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

bool bus_error_is_down(const char *name)
{
	return name && (strcmp(name, "org.freedesktop.DBus.Error.ServiceUnknown") == 0 ||
			strcmp(name, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0 ||
			strcmp(name, "org.freedesktop.DBus.Error.NoReply") == 0);
}

/* The one wording, wherever the broker turns out to be absent. */
void not_running(void)
{
	fprintf(stderr, "gpiobrokerctl: gpiod-broker is not running (start it, or wait for it: "
			"gpiobrokerctl wait)\n");
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

	if (-r == EHOSTDOWN || bus_error_is_down(name)) {
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

/* --- text output ------------------------------------------------------------------ */

bool line_is_held(const struct lineinfo *l)
{
	return l->request && strcmp(l->request, "/") != 0;
}

void print_quoted(const char *s, bool unquoted)
{
	printf(unquoted ? "%s" : "\"%s\"", s);
}

void print_attrs(const struct lineinfo *l, bool unquoted)
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
	if (line_is_held(l))
		printf(" request=%s", short_id(l->request));
}

void print_name_col(const struct lineinfo *l, bool unquoted)
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

void print_ts(uint64_t ns, char spec)
{
	struct tm tm;
	char buf[64];
	time_t s = (time_t)(ns / 1000000000);

	if (spec == 'S') {
		printf("%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
		return;
	}
	if (spec == 'U')
		gmtime_r(&s, &tm);
	else
		localtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%FT%T", &tm);
	printf("%s.%09" PRIu64 "%s", buf, ns % 1000000000, spec == 'U' ? "Z" : "");
}

uint64_t monotonic_to_realtime(uint64_t ns)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (uint64_t)rt.tv_sec * 1000000000 + (uint64_t)rt.tv_nsec -
	       ((uint64_t)mono.tv_sec * 1000000000 + (uint64_t)mono.tv_nsec - ns);
}

void print_format(const char *fmt, bool (*spec)(char c, void *userdata), void *userdata)
{
	for (const char *f = fmt; *f; f++) {
		if (*f != '%' || !f[1]) {
			putchar(*f);
			continue;
		}
		f++;
		if (*f == '%') {
			putchar('%');
		} else if (!spec(*f, userdata)) {
			putchar('%');
			putchar(*f);
		}
	}
	putchar('\n');
}

/* --- the event loop -------------------------------------------------------------- */

/* --timeout and --idle-timeout: the command ran as long as asked; exit 0. */
static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

void evloop_kick(struct evloop *l)
{
	uint64_t now;

	if (!l->idle_us || !l->loop)
		return;
	sd_event_now(l->loop, CLOCK_MONOTONIC, &now);
	if (l->idle) {
		sd_event_source_set_time(l->idle, now + l->idle_us);
		sd_event_source_set_enabled(l->idle, SD_EVENT_ONESHOT);
	} else {
		sd_event_add_time(l->loop, &l->idle, CLOCK_MONOTONIC, now + l->idle_us, 0, on_timeout,
				  NULL);
	}
}

int evloop_new(struct evloop *l, uint64_t timeout_us, uint64_t idle_us)
{
	sigset_t mask;
	uint64_t now;
	int r;

	*l = (struct evloop){ .idle_us = idle_us };
	/* sd-event wants the signals it handles blocked. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_new(&l->loop);
	if (r >= 0)
		r = sd_event_add_signal(l->loop, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(l->loop, NULL, SIGTERM, NULL, NULL);
	if (r >= 0 && timeout_us > 0) {
		sd_event_now(l->loop, CLOCK_MONOTONIC, &now);
		r = sd_event_add_time(l->loop, NULL, CLOCK_MONOTONIC, now + timeout_us, 0, on_timeout,
				      NULL);
	}
	if (r >= 0)
		r = bus_watch_lost(l);
	if (r >= 0)
		evloop_kick(l);
	if (r < 0)
		fprintf(stderr, "gpiobrokerctl: %s: event loop: %s\n", cur_cmd, strerror(-r));
	return r;
}

void evloop_exit(struct evloop *l)
{
	sd_event_exit(l->loop, 0);
}

int evloop_run(struct evloop *l)
{
	int r = sd_event_loop(l->loop);

	if (l->lost) {
		fprintf(stderr, "gpiobrokerctl: %s: lost the connection to the bus%s%s; "
				"what the broker held for this command went to its safe state\n",
			cur_cmd, cur_target ? " of " : "", cur_target ? cur_target : "");
		return -ENOTCONN;
	}
	if (r < 0)
		fprintf(stderr, "gpiobrokerctl: %s: %s\n", cur_cmd, strerror(-r));
	return r;
}

int evloop_exit_code(int r, int status)
{
	if (r == -ENOTCONN)
		return EX_NOBROKER;
	return r < 0 ? EX_ERROR : status;
}

void evloop_free(struct evloop *l)
{
	bus_unwatch_lost(l);
	sd_event_source_unref(l->idle);
	l->idle = NULL;
	l->loop = sd_event_unref(l->loop);
}
