/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Without this, sd-journal.h makes sd_journal_sendv() a macro that appends
 * CODE_FILE, CODE_LINE and CODE_FUNC of its own call, here in send_journal(), to
 * those of the log call that send_journal() already sends: every entry would carry
 * two of each. */
#define SD_JOURNAL_SUPPRESS_LOCATION

#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

int gb_log_max_level = LOG_INFO;
static bool log_prefix, log_journal;

/* JOURNAL_STREAM is inherited by children too: only if stderr is still the very
 * stream systemd connected is the journal where our output goes. */
static bool stderr_is_journal(const char *env)
{
	unsigned long long dev, ino;
	struct stat st;

	if (!env || sscanf(env, "%llu:%llu", &dev, &ino) != 2)
		return false;
	return fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void gb_log_init(void)
{
	const char *env = getenv("JOURNAL_STREAM");

	log_prefix = env != NULL;
	log_journal = stderr_is_journal(env);
}

int gb_log_to_journal(void)
{
	return log_journal;
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

void gb_log_field(struct gb_log_fields *f, const char *key, const char *fmt, ...)
{
	size_t left = sizeof(f->buf) - f->used;
	va_list ap;
	int n, k;

	if (f->n >= GB_LOG_MAX_FIELDS)
		return;
	k = snprintf(f->buf + f->used, left, "%s=", key);
	if (k < 0 || (size_t)k >= left)
		return;
	va_start(ap, fmt);
	n = vsnprintf(f->buf + f->used + k, left - k, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)(n + k) >= left)
		return; /* truncated: a wrong value is worse than none */
	f->field[f->n++] = f->buf + f->used;
	f->used += n + k + 1;
}

static int send_journal(int level, const char *file, int line, const char *func,
			const struct gb_log_fields *fields, const char *msg)
{
	char prio[16], code_line[32], m[1100], code_file[300], code_func[200];
	struct iovec iov[8 + GB_LOG_MAX_FIELDS];
	size_t n = 0;

	snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
	snprintf(code_line, sizeof(code_line), "CODE_LINE=%d", line);
	snprintf(m, sizeof(m), "MESSAGE=%s", msg);
	snprintf(code_file, sizeof(code_file), "CODE_FILE=%s", file);
	snprintf(code_func, sizeof(code_func), "CODE_FUNC=%s", func);
	iov[n++] = (struct iovec){ prio, strlen(prio) };
	iov[n++] = (struct iovec){ m, strlen(m) };
	iov[n++] = (struct iovec){ code_file, strlen(code_file) };
	iov[n++] = (struct iovec){ code_line, strlen(code_line) };
	iov[n++] = (struct iovec){ code_func, strlen(code_func) };
	iov[n++] = (struct iovec){ (char *)"SYSLOG_IDENTIFIER=gpiod-broker",
				   strlen("SYSLOG_IDENTIFIER=gpiod-broker") };
	for (size_t i = 0; fields && i < fields->n; i++)
		iov[n++] = (struct iovec){ (char *)fields->field[i], strlen(fields->field[i]) };
	return sd_journal_sendv(iov, n);
}

int gb_log_internal(int level, int error, const char *file, int line, const char *func,
		    const struct gb_log_fields *fields, const char *fmt, ...)
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
	if (log_journal && send_journal(level, file, line, func, fields, buf) >= 0)
		;
	else if (log_prefix)
		fprintf(stderr, "<%d>%s\n", level, buf);
	else
		fprintf(stderr, "gpiod-broker: %s\n", buf);
	errno = saved;
	return -error;
}
