/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's errors: the broker's error names as errno values, and the last
 * error of a connection (gpiobroker_last_error_name(), _message()).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gb_errno_of(const sd_bus_error *e, int r)
{
	static const struct {
		const char *name;
		int err;
	} map[] = {
		{ GB_ERROR_PREFIX "Busy", EBUSY },
		{ GB_ERROR_PREFIX "NotFound", ENOENT },
		{ GB_ERROR_PREFIX "InvalidArgs", EINVAL },
		{ GB_ERROR_PREFIX "PermissionDenied", EACCES },
		{ GB_ERROR_PREFIX "NotOutput", EPERM },
		{ GB_ERROR_PREFIX "ChipGone", ENODEV },
		{ GB_ERROR_PREFIX "PolicyInvalid", EBADMSG },
		{ GB_ERROR_PREFIX "LimitsExceeded", EDQUOT },
		{ GB_ERROR_PREFIX "Failed", EIO },
		{ GB_ERROR_NO_FD_PASSING, EOPNOTSUPP },
		{ "org.freedesktop.DBus.Error.UnknownObject", ENOENT },
		{ "org.freedesktop.DBus.Error.UnknownMethod", ENOENT },
		/* No broker on the bus (and no activation): say so distinctly. */
		{ "org.freedesktop.DBus.Error.ServiceUnknown", EHOSTDOWN },
		{ "org.freedesktop.DBus.Error.NameHasNoOwner", EHOSTDOWN },
	};

	if (e && e->name) {
		for (size_t i = 0; i < GB_ELEMENTSOF(map); i++)
			if (strcmp(e->name, map[i].name) == 0)
				return -map[i].err;
		r = -sd_bus_error_get_errno(e);
	}
	return r < 0 ? r : -EIO;
}

void gb_clear_error(struct gpiobroker *b)
{
	free(b->err_name);
	free(b->err_message);
	b->err_name = b->err_message = NULL;
}

int gb_fail(struct gpiobroker *b, sd_bus_error *e, int r)
{
	r = gb_errno_of(e, r);
	gb_clear_error(b);
	if (e && e->name) {
		b->err_name = strdup(e->name);
		b->err_message = strdup(e->message ? e->message : e->name);
	} else {
		b->err_message = strdup(strerror(-r));
	}
	sd_bus_error_free(e);
	return r;
}

int gb_result(struct gpiobroker *b, sd_bus_error *e, int r)
{
	if (r < 0)
		return gb_fail(b, e, r);
	sd_bus_error_free(e);
	gb_clear_error(b);
	return 0;
}

GB_EXPORT const char *gpiobroker_last_error_name(struct gpiobroker *b)
{
	return b ? b->err_name : NULL;
}

GB_EXPORT const char *gpiobroker_last_error_message(struct gpiobroker *b)
{
	return b ? b->err_message : NULL;
}
