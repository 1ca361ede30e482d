/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "announce.h"

#include <stdarg.h>

#include "broker.h"
#include "chip.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"

void announce_object_added(Broker *b, const char *path)
{
	int r = sd_bus_emit_object_added(b->bus, path);

	if (r < 0)
		log_debug_errno(r, "cannot announce %s: %m", path);
}

void announce_object_removed(Broker *b, const char *path)
{
	int r = sd_bus_emit_object_removed(b->bus, path);

	if (r < 0)
		log_debug_errno(r, "cannot announce the end of %s: %m", path);
}

void announce_changed(Broker *b, const char *path, const char *iface, const char *prop, ...)
{
	const char *names[16];
	size_t n = 0;
	va_list ap;
	int r;

	va_start(ap, prop);
	for (const char *p = prop; p && n < ELEMENTSOF(names) - 1; p = va_arg(ap, const char *))
		names[n++] = p;
	va_end(ap);
	names[n] = NULL;
	r = sd_bus_emit_properties_changed_strv(b->bus, path, iface, (char **)names);
	if (r < 0)
		log_debug_errno(r, "cannot emit PropertiesChanged for %s: %m", path);
}

void announce_line_changed(const Line *l)
{
	announce_changed(l->chip->broker, l->path, GB_IFACE_LINE, "Name", "Used", "Consumer",
			 "Direction", "Edge", "Bias", "Drive", "ActiveLow", "Debounced",
			 "DebouncePeriodUs", "EventClock", "Request", "RequestLabel", "Alias",
			 "Policy", NULL);
}

void announce_chip_added(const Chip *c)
{
	announce_object_added(c->broker, c->path);
	for (unsigned int i = 0; i < c->num_lines; i++)
		announce_object_added(c->broker, c->lines[i].path);
}

void announce_chip_removed(const Chip *c)
{
	for (unsigned int i = 0; i < c->num_lines; i++)
		announce_object_removed(c->broker, c->lines[i].path);
	announce_object_removed(c->broker, c->path);
}
