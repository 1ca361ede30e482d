/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: errors and exit codes, the text output verbs share. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"

struct gpiobroker *B;

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
