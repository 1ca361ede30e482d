/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file forward.h
 * @brief The broker's object types, declared for every layer.
 *
 * Objects refer to each other across layers (a Line knows the Request holding it),
 * but a lower layer only stores such a pointer and never looks inside: it includes
 * this file, not the higher layer's header. See HACKING.md for the layers.
 */
#ifndef GB_FORWARD_H
#define GB_FORWARD_H

typedef struct Broker Broker;         /* core/broker.h: the daemon's one context */
typedef struct Chip Chip;             /* kernel/chip.h */
typedef struct Line Line;             /* kernel/chip.h */
typedef struct Client Client;         /* core/client.h: a bus connection */
typedef struct Request Request;       /* core/request.h */
typedef struct ReqChip ReqChip;       /* core/request.h */
typedef struct ReqLine ReqLine;       /* core/request.h */
typedef struct Watch Watch;           /* core/watch.h */
typedef struct WatchSource WatchSource; /* core/watch.c */
typedef struct LineTap LineTap;       /* kernel/chip.h: an observer inside the broker */
typedef struct Action Action;         /* core/action.h */
typedef struct Slice Slice;           /* core/sliced.h: a slice the helper recorded */

#endif
