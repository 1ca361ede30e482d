/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of gpiobroker._gpiobroker share: the objects, the lock, and the
 * functions one file offers the others. One file per Python type; a file calls
 * only into the files listed before it:
 *
 *   common.c           errors, argument checks, line settings, the package's helpers
 *   event.c            the Event type; queueing an event for a Request or Watch
 *   child.c            what Request, Watch and LineInfoWatch share: the Broker's list
 *                      of them, reading their events, their table-driven attributes
 *   request.c          the Request type
 *   watch.c            the Watch type
 *   line-info-watch.c  the LineInfoWatch type; line info as a dict
 *   broker.c           the Broker type (it makes the three above)
 *   module.c           the module
 *
 * Threads: libgpiobroker wants one thread at a time per connection. Each Broker
 * has a lock; every library call on it or its requests is made holding that lock.
 * The lock is always taken with the GIL released, and blocking calls run without
 * the GIL, so a thread blocked in a call never stops the others, and a thread
 * waiting for the lock never holds the GIL another needs (no lock-order deadlock).
 * Event handlers run inside gpiobroker_process(), which is called with the GIL
 * held: they only append to their object's queue.
 */
#ifndef GBPY_INTERNAL_H
#define GBPY_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpiobroker.h"

typedef struct BrokerObject BrokerObject;

/* Request, Watch and LineInfoWatch share this head, so Broker.close() can
 * invalidate whatever is still open (the library frees the handles). */
typedef struct ChildObject {
	PyObject_HEAD
	struct ChildObject *next, *prev;
	BrokerObject *broker; /* strong reference */
	void *handle;         /* NULL once released or closed */
	PyObject *queue;      /* list of pending events (Request, Watch) */
	PyObject *callback;   /* LineInfoWatch */
	uint64_t dropped;     /* events not queued (queue full), counted in the next one */
	int kind;
} ChildObject;

enum { KIND_REQUEST, KIND_WATCH, KIND_INFO_WATCH };

struct BrokerObject {
	PyObject_HEAD
	struct gpiobroker *b;
	PyThread_type_lock lock;
	ChildObject *children;
	PyObject *calls; /* line-info callbacks due: [(callback, info)], run unlocked */
};

#define LOCK(bo)                                                                            \
	do {                                                                                \
		Py_BEGIN_ALLOW_THREADS                                                      \
		PyThread_acquire_lock((bo)->lock, WAIT_LOCK);                               \
		Py_END_ALLOW_THREADS                                                        \
	} while (0)
#define UNLOCK(bo) PyThread_release_lock((bo)->lock)

/*
 * One library call made the way every method makes it: under the object's lock,
 * with the GIL let go for the round trip, raising the mapped exception on failure.
 * Evaluates to the call's return code.
 */
#define BROKER_CALL(bo, call) ({                                                        \
		int r_;                                                                 \
		LOCK(bo);                                                               \
		Py_BEGIN_ALLOW_THREADS                                                  \
		r_ = (call);                                                            \
		Py_END_ALLOW_THREADS                                                    \
		if (r_ < 0)                                                             \
			gbpy_raise_broker_error((bo), r_);                              \
		UNLOCK(bo);                                                             \
		r_;                                                                     \
	})

/* The same for a call that returns an object, or NULL with errno set. */
#define BROKER_CALL_PTR(bo, call) ({                                                    \
		__typeof__(call) p_;                                                    \
		int e_;                                                                 \
		LOCK(bo);                                                               \
		Py_BEGIN_ALLOW_THREADS                                                  \
		p_ = (call);                                                            \
		e_ = errno;                                                             \
		Py_END_ALLOW_THREADS                                                    \
		if (!p_)                                                                \
			gbpy_raise_broker_error((bo), -e_);                             \
		UNLOCK(bo);                                                             \
		p_;                                                                     \
	})

/* --- common.c ------------------------------------------------------------------- */

/* Set by the package (_set_helpers): `async for` iterators, events(timeout) and
 * reconfigure(**settings). */
extern PyObject *gbpy_aiter_factory, *gbpy_events_factory, *gbpy_reconfigure_helper;

PyObject *gbpy_raise_broker_error(BrokerObject *bo, int r);
int gbpy_check_open(BrokerObject *bo);
int gbpy_check_child(ChildObject *c);
int gbpy_parse_timeout(PyObject *o, double *out);
int gbpy_parse_settings(PyObject *d, struct gpiobroker_line_settings *s);

/* --- event.c -------------------------------------------------------------------- */

extern PyTypeObject gbpy_event_type;

int gbpy_event_type_init(void);
void gbpy_queue_event(ChildObject *c, const struct gpiobroker_event *ev);

/* --- child.c -------------------------------------------------------------------- */

ChildObject *gbpy_child_new(PyTypeObject *type, BrokerObject *bo, int kind);
void gbpy_child_dealloc(ChildObject *c);
int gbpy_child_drop(ChildObject *c, bool release);
PyObject *gbpy_child_close(ChildObject *c, PyObject *unused);
PyObject *gbpy_child_exit(ChildObject *c, PyObject *args);
PyObject *gbpy_child_read_event_py(ChildObject *c, PyObject *args, PyObject *kw);
PyObject *gbpy_child_fileno(ChildObject *c, PyObject *unused);
PyObject *gbpy_child_process(ChildObject *c, PyObject *unused);
PyObject *gbpy_child_pending(ChildObject *c, PyObject *unused);
PyObject *gbpy_child_enter(ChildObject *c, PyObject *unused);
PyObject *gbpy_child_events(ChildObject *c, PyObject *args, PyObject *kw);
PyObject *gbpy_child_iter(ChildObject *c);
PyObject *gbpy_child_iternext(ChildObject *c);
int gbpy_broker_process(BrokerObject *bo);

extern PyAsyncMethods gbpy_child_async;

/* The type slots of every child type, and those of Request and Watch, which have events. */
#define CHILD_TYPE_SLOTS                                                                    \
	.tp_basicsize = sizeof(ChildObject),                                                \
	.tp_dealloc = (destructor)gbpy_child_dealloc,                                       \
	.tp_flags = Py_TPFLAGS_DEFAULT
#define CHILD_EVENT_SLOTS                                                                   \
	.tp_as_async = &gbpy_child_async,                                                   \
	.tp_iter = (getiterfunc)gbpy_child_iter,                                            \
	.tp_iternext = (iternextfunc)gbpy_child_iternext

/* The methods of Request and Watch for their events and as context managers: the head
 * of their tables. */
#define CHILD_EVENT_METHODS \
	{ "read_event", (PyCFunction)(void (*)(void))gbpy_child_read_event_py, \
	  METH_VARARGS | METH_KEYWORDS, \
	  "read_event(timeout=None) -> Event | None\n\nThe next event, waiting at most timeout " \
	  "seconds (None: forever); None on timeout." }, \
	{ "fileno", (PyCFunction)gbpy_child_fileno, METH_NOARGS, \
	  "The connection's file descriptor: when readable, call process()." }, \
	{ "process", (PyCFunction)gbpy_child_process, METH_NOARGS, \
	  "Handle what arrived on the connection without blocking; returns the number of " \
	  "events queued here." }, \
	{ "pending_events", (PyCFunction)gbpy_child_pending, METH_NOARGS, \
	  "Take the events queued by process() (a list, possibly empty)." }, \
	{ "events", (PyCFunction)(void (*)(void))gbpy_child_events, METH_VARARGS | METH_KEYWORDS, \
	  "events(timeout=None) -> iterator of Event: ends after timeout seconds without one " \
	  "(None: never)." }, \
	{ "__enter__", (PyCFunction)gbpy_child_enter, METH_NOARGS, NULL }, \
	{ "__exit__", (PyCFunction)gbpy_child_exit, METH_VARARGS, NULL }

/*
 * A read-only attribute of a Request or Watch: a row of the type's PyGetSetDef
 * table, CHILD_ATTR(name, accessor, doc) for one read from the library handle with
 * accessor (which needs the handle open), CHILD_ATTR_OF(name, kind, doc) for one of
 * the object itself. gbpy_child_attr_get() serves them all. The accessor's type
 * picks its kind; an accessor of a new type is a compile error until it has one.
 */
enum child_attr_kind {
	ATTR_BROKER,       /* the Broker */
	ATTR_CLOSED,       /* whether released, detached or closed */
	ATTR_REQUEST_STR,
	ATTR_REQUEST_BOOL,
	ATTR_REQUEST_U64,
	ATTR_WATCH_STR,
	ATTR_WATCH_UINT,
	ATTR_WATCH_U64,
};

typedef struct ChildAttr {
	enum child_attr_kind kind;
	void (*get)(void); /* the accessor, called as the type its kind says */
} ChildAttr;

#define CHILD_ATTR_KIND(fn) _Generic((fn),                                                  \
	const char *(*)(const struct gpiobroker_request *): ATTR_REQUEST_STR,               \
	bool (*)(const struct gpiobroker_request *): ATTR_REQUEST_BOOL,                     \
	uint64_t (*)(const struct gpiobroker_request *): ATTR_REQUEST_U64,                  \
	const char *(*)(const struct gpiobroker_watch *): ATTR_WATCH_STR,                   \
	unsigned int (*)(const struct gpiobroker_watch *): ATTR_WATCH_UINT,                 \
	uint64_t (*)(const struct gpiobroker_watch *): ATTR_WATCH_U64)

#define CHILD_ATTR(name, fn, doc)                                                           \
	{ name, gbpy_child_attr_get, NULL, doc,                                             \
	  &(ChildAttr){ CHILD_ATTR_KIND(fn), (void (*)(void))(fn) } }
#define CHILD_ATTR_OF(name, attr_kind, doc)                                                 \
	{ name, gbpy_child_attr_get, NULL, doc, &(ChildAttr){ attr_kind, NULL } }

PyObject *gbpy_child_attr_get(PyObject *self, void *closure);

/* --- request.c, watch.c, line-info-watch.c ------------------------------------------ */

extern PyTypeObject gbpy_request_type, gbpy_watch_type, gbpy_line_info_watch_type;

PyObject *gbpy_request_new(BrokerObject *bo, size_t n, const char **lines,
			   const struct gpiobroker_line_settings *settings, const char *label,
			   unsigned int flags);
PyObject *gbpy_request_open(BrokerObject *bo, const char *path);
PyObject *gbpy_watch_new(BrokerObject *bo, const char *line);
PyObject *gbpy_line_info_watch_new(BrokerObject *bo, const char *line, PyObject *callback);
PyObject *gbpy_line_info_dict(const struct gpiobroker_line_info *info);

/* --- broker.c ------------------------------------------------------------------- */

extern PyTypeObject gbpy_broker_type;

#endif
