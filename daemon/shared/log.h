/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file log.h
 * @brief Logging: to the journal with fields under systemd, else plain stderr.
 *
 * When stderr is the journal stream systemd gave us (JOURNAL_STREAM names its
 * device and inode), each message goes through sd_journal_sendv() with PRIORITY,
 * MESSAGE, CODE_FILE, CODE_LINE, CODE_FUNC (once each: the log call's) and whatever
 * fields the caller adds (log_struct()), so that "journalctl CALLER_UID=60002" or
 * MESSAGE_ID= find it. If the journal cannot take it, the line goes to stderr with
 * a "<N>" priority prefix. On a terminal lines are plain: "gpiod-broker: message".
 *
 * This module knows no broker object: callers put their objects' fields in a
 * gb_log_fields.
 */
#ifndef GB_LOG_H
#define GB_LOG_H

#include <errno.h>
#include <stddef.h>
#include <syslog.h>

#include "macro.h"

extern int gb_log_max_level;

#define GB_LOG_MAX_FIELDS 24

/** Fields for the journal, "KEY=value" each, in a buffer of their own. */
struct gb_log_fields {
	const char *field[GB_LOG_MAX_FIELDS];
	size_t n;
	size_t used;
	char buf[2048];
};

void gb_log_init(void);
/** Parse "err", "warning", "notice", "info", "debug" (or 0-7); -EINVAL if unknown. */
int gb_log_parse_level(const char *s);
/** Add KEY=value to @p f (KEY upper case, as the journal wants); dropped if full. */
void gb_log_field(struct gb_log_fields *f, const char *key, const char *fmt, ...) _printf_(3, 4);
/** Whether messages go to the journal with their fields. */
int gb_log_to_journal(void);
/** Log; returns -abs(error) when error != 0, so "return log_error_errno(r, ...)" works. */
int gb_log_internal(int level, int error, const char *file, int line, const char *func,
		    const struct gb_log_fields *fields, const char *fmt, ...) _printf_(7, 8);

#define log_full_errno(level, error, ...) \
	({ int _l = (level), _e = (error); \
	   (_l <= gb_log_max_level) ? \
		gb_log_internal(_l, _e, __FILE__, __LINE__, __func__, NULL, __VA_ARGS__) : \
		(_e > 0 ? -_e : _e); })

/** Log with the journal fields in @p fields (a const struct gb_log_fields *, may be NULL). */
#define log_struct(level, fields, ...) \
	({ int _l = (level); \
	   (_l <= gb_log_max_level) ? \
		gb_log_internal(_l, 0, __FILE__, __LINE__, __func__, (fields), __VA_ARGS__) : 0; })

#define log_debug(...)   log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)  log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   log_full_errno(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...)    log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, e, __VA_ARGS__)

#endif
