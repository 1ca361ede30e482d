/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file macro.h
 * @brief The few helpers systemd keeps internal: scope cleanup and small utilities.
 *
 * libsystemd's public headers give sd_bus_message_unrefp() and friends; _cleanup_
 * and the free helpers below are ours, so the daemon builds against libsystemd 252.
 */
#ifndef GB_MACRO_H
#define GB_MACRO_H

#include <stddef.h>
#include <stdlib.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

static inline void freep(void *p) { free(*(void **)p); }
#define _cleanup_free_ _cleanup_(freep)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
/* The struct that holds @p ptr as its @p member. */
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Take ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })

static inline void strv_free(char **l)
{
	if (!l)
		return;
	for (char **s = l; *s; s++)
		free(*s);
	free(l);
}
static inline void strv_freep(char ***l) { strv_free(*l); }
#define _cleanup_strv_free_ _cleanup_(strv_freep)

#endif
