/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file action.h
 * @brief Edge actions: the policy's [action NAME] sections at work. An edge of a
 * line starts, stops or restarts a systemd unit, with no client program.
 *
 * An action observes its line as a watcher does (a LineTap, watch.h): through the
 * holder's kernel request while a client holds the line, else through the broker's
 * own. When to fire is shared/trigger.c's; the job goes to systemd over the system
 * bus (org.freedesktop.systemd1.Manager StartUnit, StopUnit, RestartUnit), which
 * asks polkit, so the broker's user may start only what the policy's actions name
 * (gpiod-broker --polkit-rules). Every firing, and every one suppressed (rate limit,
 * a job systemd refused), is in the journal with its MESSAGE_ID.
 *
 * An action's trigger state is a file in the state directory (action-NAME), written
 * when it changes: after a restart the next broker goes on with it, so that a press
 * that began before the restart and ends after it fires once, and an edge the
 * broker did not see is taken from the level it finds.
 */
#ifndef GB_ACTION_H
#define GB_ACTION_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "chip.h"
#include "forward.h"
#include "policy.h"
#include "trigger.h"

struct Action {
	Broker *broker;
	Action *next;               /* the broker's list */
	struct gb_policy_action def; /* its own copy of the policy's section */
	LineTap tap;                /* on its line while it has one */
	struct gb_trigger trigger;
	bool started;               /* its level was read once (gb_trigger_start) */
	bool restored;              /* the trigger came from the previous broker's file */
	char line_key[96];          /* "CHIP:OFFSET" its trigger state belongs to */
	sd_event_source *timer;     /* gb_trigger_deadline() */
	char *status;               /* "observing", or why not, for PolicyStatus */
};

/**
 * The policy in force changed (or the broker starts): actions it no longer has, or
 * has otherwise, end (their state forgotten); new ones begin, each on its line if
 * the line is there. At start, an action takes the trigger state the previous broker
 * left.
 */
void actions_apply(Broker *b);
/** A chip came: actions without a line look for theirs again. */
void actions_bind(Broker *b);
/**
 * The broker stops. Handing over to the next broker (a restart), each action's state
 * stays in the state directory; otherwise it goes.
 */
void actions_free_all(Broker *b);
/** Append the actions to a PolicyStatus reply, as "actions" a(ssssttts). */
int actions_append_status(Broker *b, sd_bus_message *reply);

#endif
