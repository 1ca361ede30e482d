/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int gb_log_max_level = LOG_INFO;
static bool log_prefix;

void gb_log_init(void)
{
	log_prefix = getenv("JOURNAL_STREAM") != NULL;
}

int gb_log_parse_level(const char *s)
{
	static const char *const names[] = {
		"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
	};

	for (int i = 0; i < (int)ELEMENTSOF(names); i++)
		if (strcasecmp(s, names[i]) == 0)
			return i;
	if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
		return s[0] - '0';
	if (strcasecmp(s, "error") == 0)
		return LOG_ERR;
	return -EINVAL;
}

int gb_log_internal(int level, int error, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int saved = errno;

	if (error < 0)
		error = -error;
	errno = error;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (log_prefix)
		fprintf(stderr, "<%d>%s\n", level, buf);
	else
		fprintf(stderr, "gpiod-broker: %s\n", buf);
	errno = saved;
	return -error;
}
