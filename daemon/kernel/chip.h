/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file chip.h
 * @brief The kernel's GPIO chips and their lines, as the broker sees them.
 *
 * A Chip is an open /dev/gpiochipN with the kernel's line info of each Line, kept
 * current by the kernel's line-info watch: whoever changes a line (the broker or
 * another process), the chip's owner hears of it through ChipOps. Nothing here
 * talks to the bus; core/announce.c and bus/chip-bus.c do.
 */
#ifndef GB_CHIP_H
#define GB_CHIP_H

#include <gpiod.h>
#include <stdbool.h>
#include <systemd/sd-event.h>

#include "forward.h"
#include "loop.h"
#include "line-config.h"
#include "line-request.h"
#include "policy.h"

typedef struct ChipOps {
	/** The kernel's info of @p l changed (already stored in l->info). */
	void (*line_changed)(Line *l);
	/** The chip stopped answering (unplugged): the owner must take it away. */
	void (*gone)(Chip *c);
} ChipOps;

/*
 * An observer inside the broker of a line's edges (an edge action, core/action.c):
 * told each edge the line's watchers get, whoever holds the line, and when the
 * source of edges changed (edges in between are nobody's) or the chip went.
 * Edges come as the holder's request reports them (its active-low, its clock).
 */
struct LineTap {
	LineTap *next;
	Line *line;
	enum gpiod_line_bias bias;    /* for the broker's own request of the line */
	void (*on_edge)(LineTap *t, const struct gb_edge *ev);
	void (*on_resync)(LineTap *t);
	void (*on_gone)(LineTap *t);  /* the chip went; the tap is off the line already */
};

struct Line {
	Chip *chip;
	unsigned int offset;
	char *path;                   /* its bus object */
	struct gpiod_line_info *info; /* the kernel's view, refreshed by the info watch */

	/* Held through the broker: by which request, with which kernel request and
	 * settings (so that watchers can read the level without knowing requests). */
	Request *holder;
	LineReq *holder_lreq;
	const struct gb_line_config *holder_config;

	Watch *watchers;              /* read-only subscribers (core/watch.c) */
	unsigned int n_watchers;
	LineTap *taps;                /* the broker's own observers (core/action.c) */
	WatchSource *source;          /* the broker's own request while nobody holds it */
};

struct Chip {
	Broker *broker;               /* not looked into here */
	Chip *next;                   /* the broker's list */
	char *name;                   /* gpiochipN */
	char *label;
	char *dev_path;
	char *path;                   /* its bus object */
	unsigned int num_lines;
	struct gpiod_chip *gc;
	sd_event_source *info_source;
	Loop *loop;                   /* told when the broker changes lines (chip_lines_changed()) */
	const ChipOps *ops;
	Line *lines;

	/* What udev says of it (chip-udev.c); all empty where the system has no udev. */
	char **udev_links;            /* NULL-terminated, or NULL */
	char **udev_props;            /* "KEY=VALUE", NULL-terminated, or NULL */
	struct gb_chip_udev udev;     /* the two above, for the policy */
	const char *by_path;          /* its /dev/gpio/by-path/ link, or "" */
	const char *by_id;            /* its /dev/gpio/by-id/ link, or "" */
	const char *serial;           /* ID_SERIAL_SHORT (else ID_SERIAL), or "" */
	/* The same device when it comes back: its by-id link, else its by-path link,
	 * else ID_PATH, with its label (the banks of one device share the links).
	 * NULL: nothing tells this chip from another one. */
	char *identity;
};

/**
 * Open @p dev_dir/@p name and watch the info of every line. 0 or -errno (logged:
 * a node that cannot be opened is a warning, the broker carries on without it).
 */
int chip_new(Broker *b, sd_event *event, Loop *loop, const char *dev_dir, const char *name,
	     const ChipOps *ops, Chip **ret);
/**
 * The broker has just requested, reconfigured or released lines of @p c: the kernel
 * has queued their info events, to be read before the next call is answered (it may
 * ask about them) and before its 32-event queue overflows. On a fast callback's way
 * (shared/loop.h) this asks for sd-event's turn at once.
 */
void chip_lines_changed(Chip *c);
/**
 * Read what udev says of @p c (sd-device): its links, properties and identity.
 * 0 (also where there is no udev, or it knows nothing of the chip: then all is
 * empty), or -EAGAIN while udev has not finished with a chip it is handling.
 */
int chip_read_udev(Chip *c);
/**
 * What udev says of the character device open as @p fd: its links and properties
 * ("KEY=VALUE"), NULL-terminated (NULL where none). 0, -EAGAIN while udev has not
 * finished with it, or -ENOMEM.
 */
int udev_describe_fd(int fd, char ***links, char ***props);
/** Forget what udev said: all empty (chip_new() starts so). */
void chip_udev_clear(Chip *c);
/** Close it. NULL-safe; returns NULL. No line may be held any more. */
Chip *chip_free(Chip *c);

/** In the list @p chips: by name, or else by label. */
Chip *chip_find(Chip *chips, const char *name_or_label);
Chip *chip_by_name(Chip *chips, const char *name);
bool chip_is_node_name(const char *name);
/** The line whose bus object is @p path, or NULL. */
Line *line_from_path(Chip *chips, const char *path);

/**
 * Ask the kernel for @p l's info now: the watch's events lag, e.g. right after a
 * release of our own. Keeps the cached info if the kernel cannot answer. True if
 * what it shows changed.
 */
bool line_refresh_info(Line *l);
/** The line's kernel name, or NULL. */
const char *line_name(const Line *l);
/** "gpiochip0:3 (\"reset\")", for messages. */
void line_describe(const Line *l, char *buf, size_t size);

/** Record that @p req holds @p l through @p k with @p config; NULL req: let go. */
void line_set_holder(Line *l, Request *req, LineReq *k, const struct gb_line_config *config);

#endif
