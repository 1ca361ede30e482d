/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Named D-Bus errors whose text is always UTF-8 (bus-error.h). */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bus-error.h"
#include "utf8.h"

int gb_bus_error_setf(sd_bus_error *e, const char *name, const char *fmt, ...)
{
	char *msg = NULL, *fixed = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return sd_bus_error_set(e, name, NULL);
	if (!gb_utf8_valid(msg))
		fixed = gb_utf8_repair(msg);
	r = sd_bus_error_set(e, name, fixed ? fixed : msg);
	free(fixed);
	free(msg);
	return r;
}
