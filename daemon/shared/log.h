/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file log.h
 * @brief Logging to stderr, journald-friendly.
 *
 * Under systemd (JOURNAL_STREAM set) each line carries a "<N>" syslog priority prefix,
 * which journald turns into the entry's priority; on a terminal lines are plain.
 */
#ifndef GB_LOG_H
#define GB_LOG_H

#include <errno.h>
#include <syslog.h>

#include "macro.h"

extern int gb_log_max_level;

void gb_log_init(void);
/** Parse "err", "warning", "notice", "info", "debug" (or 0-7); -EINVAL if unknown. */
int gb_log_parse_level(const char *s);
/** Log; returns -abs(error) when error != 0, so "return log_error_errno(r, ...)" works. */
int gb_log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...) \
	({ int _l = (level), _e = (error); \
	   (_l <= gb_log_max_level) ? gb_log_internal(_l, _e, __VA_ARGS__) : (_e > 0 ? -_e : _e); })

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
