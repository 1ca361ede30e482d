/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker._gpiobroker: the CPython extension over libgpiobroker.
 *
 * Only marshalling lives here. Flow control (Ack), following a restarted broker,
 * loss counting and the mapping of broker errors to errno all stay in the C
 * library, so Python programs behave exactly as C ones. The Pythonic surface
 * (keyword settings, asyncio, the exception classes) is the pure-Python package
 * around it (gpiobroker/__init__.py, gpiobroker/_errors.py).
 *
 * Threads: libgpiobroker wants one thread at a time per connection. Each Broker
 * has a lock; every library call on it or its requests is made holding that lock.
 * The lock is always taken with the GIL released, and blocking calls run without
 * the GIL, so a thread blocked in a call never stops the others, and a thread
 * waiting for the lock never holds the GIL another needs (no lock-order deadlock).
 * Event handlers run inside gpiobroker_process(), which is called with the GIL
 * held: they only append to their object's queue.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <pythread.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "gpiobroker.h"

/* --- objects -------------------------------------------------------------------- */

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

static PyTypeObject BrokerType, RequestType, WatchType, LineInfoWatchType;
static PyTypeObject EventType;
/* Set by the package (_set_helpers): `async for` iterators and events(timeout). */
static PyObject *aiter_factory, *events_factory, *reconfigure_helper;

#define LOCK(bo) do { Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock((bo)->lock, WAIT_LOCK); Py_END_ALLOW_THREADS } while (0)
#define UNLOCK(bo) PyThread_release_lock((bo)->lock)

/* --- errors --------------------------------------------------------------------- */

/*
 * Raise the exception for a failed call (r < 0): the package's _errors module picks
 * the class from the broker's error name (or the errno when the failure was local).
 * Called holding the Broker's lock, so the error strings are those of this call.
 */
static PyObject *raise_broker_error(BrokerObject *bo, int r)
{
	const char *name = bo && bo->b ? gpiobroker_last_error_name(bo->b) : NULL;
	const char *msg = bo && bo->b ? gpiobroker_last_error_message(bo->b) : NULL;
	PyObject *mod, *exc;

	if (r >= 0)
		r = -EIO;
	mod = PyImport_ImportModule("gpiobroker._errors");
	if (!mod)
		return NULL;
	exc = PyObject_CallMethod(mod, "from_broker", "iss", -r, name ? name : "",
				  msg ? msg : strerror(-r));
	Py_DECREF(mod);
	if (!exc)
		return NULL;
	PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_DECREF(exc);
	return NULL;
}

static int check_open(BrokerObject *bo)
{
	if (!bo->b) {
		PyErr_SetString(PyExc_ValueError, "the Broker connection is closed");
		return -1;
	}
	return 0;
}

static int check_child(ChildObject *c)
{
	if (!c->handle) {
		PyErr_SetString(PyExc_ValueError, c->kind == KIND_REQUEST ? "the request is released" :
						  "the watch is closed");
		return -1;
	}
	return 0;
}


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
			raise_broker_error((bo), r_);                                   \
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
			raise_broker_error((bo), -e_);                                  \
		UNLOCK(bo);                                                             \
		p_;                                                                     \
	})

/* --- events --------------------------------------------------------------------- */

static PyStructSequence_Field event_fields[] = {
	{ "type", "'edge', 'initial-state', 'chip-gone', 'revoked', 'broker-gone' or 'broker-restarted'" },
	{ "index", "index of the line in the request (edge, initial-state)" },
	{ "offset", "offset of the line on its chip" },
	{ "edge", "'rising' or 'falling' for an edge, else None" },
	{ "value", "the level: after the edge, or the initial state; else None" },
	{ "timestamp_ns", "the kernel's timestamp (the line's event clock)" },
	{ "seqno", "the broker's sequence number in this request or watch" },
	{ "line_seqno", "the kernel's sequence number on the line" },
	{ "global_seqno", "the kernel's sequence number in its chip request" },
	{ "lost", "events lost just before this one" },
	{ "detail", "chip-gone: the chip; revoked: the reason; else None" },
	{ NULL, NULL },
};

static PyStructSequence_Desc event_desc = {
	"gpiobroker.Event", "An event of a request or a watch (a named tuple).", event_fields, 11,
};

static const char *type_name(enum gpiobroker_event_type t)
{
	switch (t) {
	case GPIOBROKER_EVENT_EDGE: return "edge";
	case GPIOBROKER_EVENT_CHIP_GONE: return "chip-gone";
	case GPIOBROKER_EVENT_REVOKED: return "revoked";
	case GPIOBROKER_EVENT_BROKER_GONE: return "broker-gone";
	case GPIOBROKER_EVENT_INITIAL_STATE: return "initial-state";
	case GPIOBROKER_EVENT_BROKER_RESTARTED: return "broker-restarted";
	case GPIOBROKER_EVENT_REVOKE_PENDING: return "revoke-pending";
	}
	return "unknown";
}

#define EVENT_QUEUE_MAX 65536

static void queue_event(ChildObject *c, const struct gpiobroker_event *ev)
{
	enum gpiobroker_event_type t = gpiobroker_event_get_type(ev);
	bool level = t == GPIOBROKER_EVENT_EDGE || t == GPIOBROKER_EVENT_INITIAL_STATE;
	const char *detail = gpiobroker_event_get_detail(ev);
	PyObject *e;

	/* A program that never reads its events must not grow without bound: past
	 * the cap they are lost, and counted as lost like any other. */
	if (PyList_GET_SIZE(c->queue) >= EVENT_QUEUE_MAX) {
		c->dropped++;
		return;
	}
	e = PyStructSequence_New(&EventType);
	if (!e) {
		PyErr_WriteUnraisable((PyObject *)c);
		return;
	}
	PyStructSequence_SET_ITEM(e, 0, PyUnicode_FromString(type_name(t)));
	PyStructSequence_SET_ITEM(e, 1, PyLong_FromUnsignedLong(gpiobroker_event_get_index(ev)));
	PyStructSequence_SET_ITEM(e, 2, PyLong_FromUnsignedLong(gpiobroker_event_get_offset(ev)));
	if (t == GPIOBROKER_EVENT_EDGE)
		PyStructSequence_SET_ITEM(e, 3, PyUnicode_FromString(
			gpiobroker_event_get_edge(ev) == GPIOBROKER_EDGE_RISING ? "rising" : "falling"));
	else
		PyStructSequence_SET_ITEM(e, 3, Py_NewRef(Py_None));
	PyStructSequence_SET_ITEM(e, 4, level ? PyBool_FromLong(gpiobroker_event_get_value(ev)) :
					       Py_NewRef(Py_None));
	PyStructSequence_SET_ITEM(e, 5, PyLong_FromUnsignedLongLong(gpiobroker_event_get_timestamp_ns(ev)));
	PyStructSequence_SET_ITEM(e, 6, PyLong_FromUnsignedLongLong(gpiobroker_event_get_seqno(ev)));
	PyStructSequence_SET_ITEM(e, 7, PyLong_FromUnsignedLongLong(gpiobroker_event_get_line_seqno(ev)));
	PyStructSequence_SET_ITEM(e, 8, PyLong_FromUnsignedLongLong(gpiobroker_event_get_global_seqno(ev)));
	PyStructSequence_SET_ITEM(e, 9, PyLong_FromUnsignedLongLong(gpiobroker_event_get_lost(ev) + c->dropped));
	c->dropped = 0;
	PyStructSequence_SET_ITEM(e, 10, detail ? PyUnicode_FromString(detail) : Py_NewRef(Py_None));
	if (PyErr_Occurred() || PyList_Append(c->queue, e) < 0)
		PyErr_WriteUnraisable((PyObject *)c);
	Py_DECREF(e);
}

static void on_request_event(struct gpiobroker_request *req, const struct gpiobroker_event *ev,
			     void *userdata)
{
	queue_event(userdata, ev);
}

static void on_watch_event(struct gpiobroker_watch *w, const struct gpiobroker_event *ev,
			   void *userdata)
{
	queue_event(userdata, ev);
}

/* --- settings ------------------------------------------------------------------- */

static int pick(PyObject *d, const char *key, const char *const names[], int n, int *out)
{
	PyObject *v = PyDict_GetItemString(d, key);
	const char *s;

	if (!v || v == Py_None)
		return 0;
	s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
	for (int i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	PyErr_Format(PyExc_ValueError, "%s must be one of the broker's names, not %R", key, v);
	return -1;
}

/* A dict of settings (the broker's keys, '-' or '_') into the library's struct. */
static int parse_settings(PyObject *d, struct gpiobroker_line_settings *s)
{
	static const char *const dirs[] = { "as-is", "input", "output" };
	static const char *const edges[] = { "none", "rising", "falling", "both" };
	static const char *const biases[] = { "as-is", "disabled", "pull-up", "pull-down" };
	static const char *const drives[] = { "push-pull", "open-drain", "open-source" };
	static const char *const clocks[] = { "monotonic", "realtime", "hte" };
	static const char *const known[] = { "direction", "value", "edge", "bias", "drive",
					     "active_low", "debounce_us", "event_clock", NULL };
	PyObject *key, *v;
	Py_ssize_t pos = 0;
	int i;

	gpiobroker_line_settings_init(s);
	if (!d || d == Py_None)
		return 0;
	if (!PyDict_Check(d)) {
		PyErr_SetString(PyExc_TypeError, "line settings must be a dict");
		return -1;
	}
	while (PyDict_Next(d, &pos, &key, &v)) {
		const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		bool ok = false;

		for (int j = 0; k && known[j]; j++)
			ok = ok || strcmp(k, known[j]) == 0;
		if (!ok) {
			PyErr_Format(PyExc_TypeError, "unknown line setting %R", key);
			return -1;
		}
	}
	i = 0;
	if (pick(d, "direction", dirs, 3, &i) < 0)
		return -1;
	s->direction = i;
	i = 0;
	if (pick(d, "edge", edges, 4, &i) < 0)
		return -1;
	s->edge = i;
	i = 0;
	if (pick(d, "bias", biases, 4, &i) < 0)
		return -1;
	s->bias = i;
	i = 0;
	if (pick(d, "drive", drives, 3, &i) < 0)
		return -1;
	s->drive = i;
	i = 0;
	if (pick(d, "event_clock", clocks, 3, &i) < 0)
		return -1;
	s->event_clock = i;
	if ((v = PyDict_GetItemString(d, "value")) && v != Py_None) {
		if ((i = PyObject_IsTrue(v)) < 0)
			return -1;
		s->value = i;
	}
	if ((v = PyDict_GetItemString(d, "active_low")) && v != Py_None) {
		if ((i = PyObject_IsTrue(v)) < 0)
			return -1;
		s->active_low = i;
	}
	if ((v = PyDict_GetItemString(d, "debounce_us")) && v != Py_None) {
		unsigned long us = PyLong_AsUnsignedLong(v);

		if (PyErr_Occurred())
			return -1;
		if (us > UINT32_MAX) {
			PyErr_SetString(PyExc_OverflowError, "debounce_us too large");
			return -1;
		}
		s->debounce_us = (unsigned int)us;
	}
	return 0;
}

/* --- children ------------------------------------------------------------------- */

static ChildObject *child_new(PyTypeObject *type, BrokerObject *bo, int kind)
{
	ChildObject *c = PyObject_New(ChildObject, type);

	if (!c)
		return NULL;
	c->broker = (BrokerObject *)Py_NewRef(bo);
	c->handle = NULL;
	c->callback = NULL;
	c->dropped = 0;
	c->kind = kind;
	c->queue = PyList_New(0);
	c->prev = NULL;
	c->next = bo->children;
	if (bo->children)
		bo->children->prev = c;
	bo->children = c;
	if (!c->queue) {
		Py_DECREF(c);
		return NULL;
	}
	return c;
}

static void child_unlink(ChildObject *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (c->broker && c->broker->children == c)
		c->broker->children = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = c->prev = NULL;
}

/* Release / close the handle, holding the lock. Returns the library's result. */
static int child_drop(ChildObject *c, bool release)
{
	int r = 0;

	if (!c->handle)
		return 0;
	switch (c->kind) {
	case KIND_REQUEST:
		if (release)
			r = gpiobroker_free(c->handle);
		else
			gpiobroker_request_close(c->handle);
		break;
	case KIND_WATCH:
		r = gpiobroker_watch_close(c->handle);
		break;
	case KIND_INFO_WATCH:
		gpiobroker_line_info_unwatch(c->handle);
		break;
	}
	c->handle = NULL;
	return r;
}

static void child_dealloc(ChildObject *c)
{
	if (c->broker) {
		if (c->handle && c->broker->b) {
			LOCK(c->broker);
			/* Garbage: a request nobody can reach is released, not leaked. */
			child_drop(c, true);
			UNLOCK(c->broker);
		}
		child_unlink(c);
	}
	Py_XDECREF(c->queue);
	Py_XDECREF(c->callback);
	Py_XDECREF(c->broker);
	PyObject_Free(c);
}

/* Run the line-info callbacks that process() found due (lock released). */
static int run_calls(BrokerObject *bo)
{
	while (bo->calls && PyList_GET_SIZE(bo->calls) > 0) {
		PyObject *t = Py_NewRef(PyList_GET_ITEM(bo->calls, 0)), *r;

		if (PyList_SetSlice(bo->calls, 0, 1, NULL) < 0) {
			Py_DECREF(t);
			return -1;
		}
		r = PyObject_CallOneArg(PyTuple_GET_ITEM(t, 0), PyTuple_GET_ITEM(t, 1));
		if (!r)
			PyErr_WriteUnraisable(PyTuple_GET_ITEM(t, 0));
		Py_XDECREF(r);
		Py_DECREF(t);
	}
	return 0;
}

/* Run the connection's pending messages (holding the lock, GIL held). */
static int broker_process_locked(BrokerObject *bo)
{
	int r = gpiobroker_process(bo->b);

	return r < 0 ? r : 0;
}

static PyObject *pop_event(ChildObject *c)
{
	PyObject *e;

	if (PyList_GET_SIZE(c->queue) == 0)
		return NULL;
	e = Py_NewRef(PyList_GET_ITEM(c->queue, 0));
	if (PyList_SetSlice(c->queue, 0, 1, NULL) < 0) {
		Py_DECREF(e);
		return NULL;
	}
	return e;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The next event, waiting at most @timeout seconds (< 0: forever). Returns the
 * event, or Py_None on timeout, or NULL with an exception.
 */
static PyObject *child_read_event(ChildObject *c, double timeout)
{
	double deadline = timeout < 0 ? -1 : now_s() + timeout;
	BrokerObject *bo = c->broker;

	for (;;) {
		PyObject *e = pop_event(c);
		struct pollfd p;
		int r, ms;

		if (e || PyErr_Occurred())
			return e;
		if (check_open(bo) < 0 || check_child(c) < 0)
			return NULL;
		LOCK(bo);
		r = broker_process_locked(bo);
		p.fd = gpiobroker_get_fd(bo->b);
		p.events = (short)gpiobroker_get_events(bo->b);
		UNLOCK(bo);
		if (r < 0)
			return raise_broker_error(NULL, r);
		if (run_calls(bo) < 0)
			return NULL;
		e = pop_event(c);
		if (e || PyErr_Occurred())
			return e;
		if (deadline >= 0 && now_s() >= deadline)
			Py_RETURN_NONE;
		/* Slices of at most 50 ms: another thread's blocking call may read our
		 * signal off the socket into the connection's queue, and poll() would not
		 * see it. */
		ms = 50;
		if (deadline >= 0 && (deadline - now_s()) * 1000 < ms)
			ms = (int)((deadline - now_s()) * 1000) + 1;
		if (p.events <= 0)
			p.events = POLLIN;
		Py_BEGIN_ALLOW_THREADS
		r = poll(&p, 1, ms);
		Py_END_ALLOW_THREADS
		if (r < 0 && errno != EINTR)
			return PyErr_SetFromErrno(PyExc_OSError);
		if (PyErr_CheckSignals() < 0)
			return NULL;
	}
}

static int parse_timeout(PyObject *o, double *out)
{
	if (!o || o == Py_None) {
		*out = -1;
		return 0;
	}
	*out = PyFloat_AsDouble(o);
	if (PyErr_Occurred())
		return -1;
	if (*out < 0) {
		PyErr_SetString(PyExc_ValueError, "timeout must be >= 0 or None");
		return -1;
	}
	return 0;
}

static PyObject *child_read_event_py(ChildObject *c, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *to = Py_None;
	double t;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &to) || parse_timeout(to, &t) < 0)
		return NULL;
	return child_read_event(c, t);
}

static PyObject *child_fileno(ChildObject *c, PyObject *unused)
{
	if (check_open(c->broker) < 0)
		return NULL;
	return PyLong_FromLong(gpiobroker_get_fd(c->broker->b));
}

static PyObject *child_process(ChildObject *c, PyObject *unused)
{
	BrokerObject *bo = c->broker;
	int r;

	if (check_open(bo) < 0)
		return NULL;
	LOCK(bo);
	r = broker_process_locked(bo);
	UNLOCK(bo);
	if (r < 0)
		return raise_broker_error(NULL, r);
	if (run_calls(bo) < 0)
		return NULL;
	return PyLong_FromSsize_t(PyList_GET_SIZE(c->queue));
}

static PyObject *child_pending(ChildObject *c, PyObject *unused)
{
	PyObject *l = PyList_GetSlice(c->queue, 0, PyList_GET_SIZE(c->queue));

	if (l && PyList_SetSlice(c->queue, 0, PyList_GET_SIZE(c->queue), NULL) < 0)
		Py_CLEAR(l);
	return l;
}

static PyObject *child_enter(ChildObject *c, PyObject *unused)
{
	if (check_child(c) < 0)
		return NULL;
	return Py_NewRef(c);
}

static PyObject *child_aiter(ChildObject *c)
{
	if (!aiter_factory) {
		PyErr_SetString(PyExc_TypeError, "async iteration needs the gpiobroker package");
		return NULL;
	}
	return PyObject_CallOneArg(aiter_factory, (PyObject *)c);
}

static PyObject *child_events(ChildObject *c, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *to = Py_None;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &to))
		return NULL;
	if (!events_factory) {
		PyErr_SetString(PyExc_TypeError, "events() needs the gpiobroker package");
		return NULL;
	}
	return PyObject_CallFunctionObjArgs(events_factory, (PyObject *)c, to, NULL);
}

static PyObject *child_iter(ChildObject *c)
{
	return Py_NewRef(c);
}

/* Iterating waits for events forever; use events(timeout) to stop on silence. */
static PyObject *child_iternext(ChildObject *c)
{
	PyObject *e;

	if (!c->handle)
		return NULL; /* StopIteration once released */
	e = child_read_event(c, -1);
	if (e == Py_None) {
		Py_DECREF(e);
		return NULL;
	}
	return e;
}

static PyObject *child_get_broker(ChildObject *c, void *closure)
{
	return Py_NewRef(c->broker);
}

static PyObject *child_get_closed(ChildObject *c, void *closure)
{
	return PyBool_FromLong(c->handle == NULL);
}

/* --- Request -------------------------------------------------------------------- */

#define REQ(c) ((struct gpiobroker_request *)(c)->handle)

static PyObject *request_release(ChildObject *c, PyObject *unused)
{
	int r;

	if (!c->handle)
		Py_RETURN_NONE;
	if (check_open(c->broker) < 0)
		return NULL;
	LOCK(c->broker);
	r = child_drop(c, true);
	if (r < 0) {
		raise_broker_error(c->broker, r);
		UNLOCK(c->broker);
		return NULL;
	}
	UNLOCK(c->broker);
	Py_RETURN_NONE;
}

static PyObject *request_detach(ChildObject *c, PyObject *unused)
{
	if (c->handle && c->broker->b) {
		LOCK(c->broker);
		child_drop(c, false);
		UNLOCK(c->broker);
	}
	Py_RETURN_NONE;
}

static PyObject *request_exit(ChildObject *c, PyObject *args)
{
	PyObject *r = request_release(c, NULL);

	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

static int index_of(ChildObject *c, PyObject *o, unsigned int *out)
{
	long i = o ? PyLong_AsLong(o) : 0;

	if (PyErr_Occurred())
		return -1;
	if (i < 0 || (size_t)i >= gpiobroker_request_get_num_lines(REQ(c))) {
		PyErr_Format(PyExc_IndexError, "line index %ld out of range", i);
		return -1;
	}
	*out = (unsigned int)i;
	return 0;
}

static PyObject *request_get_value(ChildObject *c, PyObject *args)
{
	PyObject *io = NULL;
	unsigned int i;
	int r;

	if (!PyArg_ParseTuple(args, "|O", &io) || check_open(c->broker) < 0 || check_child(c) < 0 ||
	    index_of(c, io, &i) < 0)
		return NULL;
	r = BROKER_CALL(c->broker, gpiobroker_get_value(REQ(c), i));
	return r < 0 ? NULL : PyBool_FromLong(r);
}

/* set_value(value) for line 0, or set_value(index, value). */
static PyObject *request_set_value(ChildObject *c, PyObject *args)
{
	PyObject *a = NULL, *v = NULL;
	unsigned int i = 0;
	int r, val;

	if (!PyArg_ParseTuple(args, "O|O", &a, &v) || check_open(c->broker) < 0 || check_child(c) < 0)
		return NULL;
	if (v && index_of(c, a, &i) < 0)
		return NULL;
	if ((val = PyObject_IsTrue(v ? v : a)) < 0)
		return NULL;
	r = BROKER_CALL(c->broker, gpiobroker_set_value(REQ(c), i, val));
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *request_value_get(ChildObject *c, void *closure)
{
	PyObject *args = PyTuple_New(0), *r;

	if (!args)
		return NULL;
	r = request_get_value(c, args);
	Py_DECREF(args);
	return r;
}

static int request_value_set(ChildObject *c, PyObject *v, void *closure)
{
	PyObject *args, *r;

	if (!v) {
		PyErr_SetString(PyExc_AttributeError, "cannot delete value");
		return -1;
	}
	args = PyTuple_Pack(1, v);
	if (!args)
		return -1;
	r = request_set_value(c, args);
	Py_DECREF(args);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

static PyObject *request_get_values(ChildObject *c, PyObject *unused)
{
	size_t n;
	int *vals, r;
	PyObject *l;

	if (check_open(c->broker) < 0 || check_child(c) < 0)
		return NULL;
	n = gpiobroker_request_get_num_lines(REQ(c));
	vals = PyMem_Calloc(n, sizeof(int));
	if (!vals)
		return PyErr_NoMemory();
	r = BROKER_CALL(c->broker, gpiobroker_get_values(REQ(c), n, NULL, vals));
	if (r < 0) {
		PyMem_Free(vals);
		return NULL;
	}
	l = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; l && i < n; i++)
		PyList_SET_ITEM(l, (Py_ssize_t)i, PyBool_FromLong(vals[i]));
	PyMem_Free(vals);
	return l;
}

/* set_values(values): a sequence of one value per line, or a dict {index: value}. */
static PyObject *request_set_values(ChildObject *c, PyObject *arg)
{
	unsigned int *idx = NULL;
	int *vals = NULL;
	Py_ssize_t n;
	PyObject *items = NULL;

	if (check_open(c->broker) < 0 || check_child(c) < 0)
		return NULL;
	items = PyDict_Check(arg) ? PyDict_Items(arg) : PySequence_Fast(arg, "values must be a sequence or a dict");
	if (!items)
		return NULL;
	n = PySequence_Fast_GET_SIZE(items);
	idx = PyMem_Calloc(n ? n : 1, sizeof(*idx));
	vals = PyMem_Calloc(n ? n : 1, sizeof(*vals));
	if (!idx || !vals) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *it = PySequence_Fast_GET_ITEM(items, i);

		if (PyDict_Check(arg)) {
			if (index_of(c, PyTuple_GET_ITEM(it, 0), &idx[i]) < 0)
				goto out;
			it = PyTuple_GET_ITEM(it, 1);
		} else {
			idx[i] = (unsigned int)i;
		}
		if ((vals[i] = PyObject_IsTrue(it)) < 0)
			goto out;
	}
	(void)BROKER_CALL(c->broker, gpiobroker_set_values(REQ(c), (size_t)n, idx, vals));
out:
	PyMem_Free(idx);
	PyMem_Free(vals);
	Py_XDECREF(items);
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *request_direction_input(ChildObject *c, PyObject *args)
{
	PyObject *io = NULL;
	unsigned int i;
	int r;

	if (!PyArg_ParseTuple(args, "|O", &io) || check_open(c->broker) < 0 || check_child(c) < 0 ||
	    index_of(c, io, &i) < 0)
		return NULL;
	r = BROKER_CALL(c->broker, gpiobroker_direction_input(REQ(c), i));
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *request_direction_output(ChildObject *c, PyObject *args)
{
	PyObject *v, *io = NULL;
	unsigned int i;
	int r, val;

	if (!PyArg_ParseTuple(args, "O|O", &v, &io) || check_open(c->broker) < 0 || check_child(c) < 0 ||
	    index_of(c, io, &i) < 0 || (val = PyObject_IsTrue(v)) < 0)
		return NULL;
	r = BROKER_CALL(c->broker, gpiobroker_direction_output(REQ(c), i, val));
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* reconfigure(index=None, **settings): the package turns keywords into dicts. */
static PyObject *request_reconfigure_kw(ChildObject *c, PyObject *args, PyObject *kw)
{
	PyObject *full, *r;

	if (!reconfigure_helper) {
		PyErr_SetString(PyExc_TypeError, "reconfigure() needs the gpiobroker package");
		return NULL;
	}
	full = PyTuple_New(PyTuple_GET_SIZE(args) + 1);
	if (!full)
		return NULL;
	PyTuple_SET_ITEM(full, 0, Py_NewRef(c));
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++)
		PyTuple_SET_ITEM(full, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
	r = PyObject_Call(reconfigure_helper, full, kw);
	Py_DECREF(full);
	return r;
}

/* _reconfigure([(index, settings-dict), ...]) */
static PyObject *request_reconfigure(ChildObject *c, PyObject *arg)
{
	struct gpiobroker_line_settings *s = NULL;
	unsigned int *idx = NULL;
	PyObject *items;
	Py_ssize_t n;

	if (check_open(c->broker) < 0 || check_child(c) < 0)
		return NULL;
	items = PySequence_Fast(arg, "reconfigure takes a list of (index, settings)");
	if (!items)
		return NULL;
	n = PySequence_Fast_GET_SIZE(items);
	s = PyMem_Calloc(n ? n : 1, sizeof(*s));
	idx = PyMem_Calloc(n ? n : 1, sizeof(*idx));
	if (!s || !idx) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *it = PySequence_Fast_GET_ITEM(items, i);

		if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 2) {
			PyErr_SetString(PyExc_TypeError, "reconfigure takes a list of (index, settings)");
			goto out;
		}
		if (index_of(c, PyTuple_GET_ITEM(it, 0), &idx[i]) < 0 ||
		    parse_settings(PyTuple_GET_ITEM(it, 1), &s[i]) < 0)
			goto out;
	}
	(void)BROKER_CALL(c->broker, gpiobroker_reconfigure(REQ(c), (size_t)n, idx, s));
out:
	PyMem_Free(s);
	PyMem_Free(idx);
	Py_DECREF(items);
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *request_get_path(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyUnicode_FromString(gpiobroker_request_get_path(REQ(c)));
}

static PyObject *request_get_lines(ChildObject *c, void *closure)
{
	size_t n;
	PyObject *l;

	if (check_child(c) < 0)
		return NULL;
	n = gpiobroker_request_get_num_lines(REQ(c));
	l = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; l && i < n; i++) {
		PyObject *t = Py_BuildValue("(si)", gpiobroker_request_get_chip(REQ(c), i),
					    gpiobroker_request_get_offset(REQ(c), i));

		if (!t) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, t);
	}
	return l;
}

static PyObject *request_get_persistent(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyBool_FromLong(gpiobroker_request_is_persistent(REQ(c)));
}

static PyObject *request_get_direct(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyBool_FromLong(gpiobroker_request_is_direct(REQ(c)));
}

static PyObject *request_get_lost(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyLong_FromUnsignedLongLong(gpiobroker_request_get_events_lost(REQ(c)));
}

static Py_ssize_t request_len(ChildObject *c)
{
	return c->handle ? (Py_ssize_t)gpiobroker_request_get_num_lines(REQ(c)) : 0;
}

static PyObject *request_repr(ChildObject *c)
{
	if (!c->handle)
		return PyUnicode_FromString("<gpiobroker.Request released>");
	return PyUnicode_FromFormat("<gpiobroker.Request %s>", gpiobroker_request_get_path(REQ(c)));
}

#define CHILD_METHODS \
	{ "read_event", (PyCFunction)(void (*)(void))child_read_event_py, METH_VARARGS | METH_KEYWORDS, \
	  "read_event(timeout=None) -> Event | None\n\nThe next event, waiting at most timeout seconds (None: forever); None on timeout." }, \
	{ "fileno", (PyCFunction)child_fileno, METH_NOARGS, \
	  "The connection's file descriptor: when readable, call process()." }, \
	{ "process", (PyCFunction)child_process, METH_NOARGS, \
	  "Handle what arrived on the connection without blocking; returns the number of events queued here." }, \
	{ "pending_events", (PyCFunction)child_pending, METH_NOARGS, \
	  "Take the events queued by process() (a list, possibly empty)." }, \
	{ "events", (PyCFunction)(void (*)(void))child_events, METH_VARARGS | METH_KEYWORDS, \
	  "events(timeout=None) -> iterator of Event: ends after timeout seconds without one (None: never)." }, \
	{ "__enter__", (PyCFunction)child_enter, METH_NOARGS, NULL }

static PyMethodDef request_methods[] = {
	CHILD_METHODS,
	{ "__exit__", (PyCFunction)request_exit, METH_VARARGS, NULL },
	{ "release", (PyCFunction)request_release, METH_NOARGS,
	  "Release the lines: they are back with the kernel when this returns." },
	{ "detach", (PyCFunction)request_detach, METH_NOARGS,
	  "Drop the handle but leave the request held (a persistent one outlives the program)." },
	{ "get_value", (PyCFunction)request_get_value, METH_VARARGS, "get_value(index=0) -> bool" },
	{ "set_value", (PyCFunction)request_set_value, METH_VARARGS,
	  "set_value(value) or set_value(index, value)" },
	{ "get_values", (PyCFunction)request_get_values, METH_NOARGS, "All lines' values, in order." },
	{ "set_values", (PyCFunction)request_set_values, METH_O,
	  "set_values([v0, v1, ...]) or set_values({index: value}): all at once." },
	{ "direction_input", (PyCFunction)request_direction_input, METH_VARARGS,
	  "direction_input(index=0): the line becomes an input." },
	{ "direction_output", (PyCFunction)request_direction_output, METH_VARARGS,
	  "direction_output(value, index=0): the line becomes an output at value, in one step." },
	{ "_reconfigure", (PyCFunction)request_reconfigure, METH_O, NULL },
	{ "reconfigure", (PyCFunction)(void (*)(void))request_reconfigure_kw, METH_VARARGS | METH_KEYWORDS,
	  "reconfigure(index=None, **settings): change settings of line index (None: all), keywords as\n"
	  "Broker.request(); only those given change. Switching to output takes value." },
	{ NULL },
};

static PyGetSetDef request_getset[] = {
	{ "value", (getter)request_value_get, (setter)request_value_set,
	  "Line 0's logical value (read from / written to the broker).", NULL },
	{ "path", (getter)request_get_path, NULL, "The broker's Request object path.", NULL },
	{ "lines", (getter)request_get_lines, NULL, "[(chip, offset), ...] in index order.", NULL },
	{ "persistent", (getter)request_get_persistent, NULL, "Whether the request outlives the connection.", NULL },
	{ "direct", (getter)request_get_direct, NULL,
	  "Whether values and edges go through the kernel line fds (direct = yes).", NULL },
	{ "events_lost", (getter)request_get_lost, NULL, "Events lost so far, as seen here.", NULL },
	{ "broker", (getter)child_get_broker, NULL, "The Broker connection.", NULL },
	{ "released", (getter)child_get_closed, NULL, "True once released or detached.", NULL },
	{ NULL },
};

static PySequenceMethods request_seq = { .sq_length = (lenfunc)request_len };
static PyAsyncMethods child_async = { .am_aiter = (unaryfunc)child_aiter };

static PyTypeObject RequestType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gpiobroker.Request",
	.tp_basicsize = sizeof(ChildObject),
	.tp_dealloc = (destructor)child_dealloc,
	.tp_repr = (reprfunc)request_repr,
	.tp_as_sequence = &request_seq,
	.tp_as_async = &child_async,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Lines held through the broker (Broker.request_array()). A context manager:\n"
		  "the lines are released on exit. Iterating yields its events.",
	.tp_iter = (getiterfunc)child_iter,
	.tp_iternext = (iternextfunc)child_iternext,
	.tp_methods = request_methods,
	.tp_getset = request_getset,
};

/* --- Watch ---------------------------------------------------------------------- */

#define WATCH(c) ((struct gpiobroker_watch *)(c)->handle)

static PyObject *watch_close(ChildObject *c, PyObject *unused)
{
	int r;

	if (!c->handle || !c->broker->b)
		Py_RETURN_NONE;
	LOCK(c->broker);
	r = child_drop(c, true);
	if (r < 0)
		raise_broker_error(c->broker, r);
	UNLOCK(c->broker);
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *watch_exit(ChildObject *c, PyObject *args)
{
	PyObject *r = watch_close(c, NULL);

	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

static PyObject *watch_get_path(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyUnicode_FromString(gpiobroker_watch_get_path(WATCH(c)));
}

static PyObject *watch_get_chip(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyUnicode_FromString(gpiobroker_watch_get_chip(WATCH(c)));
}

static PyObject *watch_get_offset(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyLong_FromUnsignedLong(gpiobroker_watch_get_offset(WATCH(c)));
}

static PyObject *watch_get_lost(ChildObject *c, void *closure)
{
	if (check_child(c) < 0)
		return NULL;
	return PyLong_FromUnsignedLongLong(gpiobroker_watch_get_events_lost(WATCH(c)));
}

static PyMethodDef watch_methods[] = {
	CHILD_METHODS,
	{ "__exit__", (PyCFunction)watch_exit, METH_VARARGS, NULL },
	{ "close", (PyCFunction)watch_close, METH_NOARGS, "Stop watching." },
	{ NULL },
};

static PyGetSetDef watch_getset[] = {
	{ "path", (getter)watch_get_path, NULL, "The broker's Watch object path.", NULL },
	{ "chip", (getter)watch_get_chip, NULL, "The watched line's chip.", NULL },
	{ "offset", (getter)watch_get_offset, NULL, "The watched line's offset.", NULL },
	{ "events_lost", (getter)watch_get_lost, NULL, "Events lost so far, as seen here.", NULL },
	{ "broker", (getter)child_get_broker, NULL, "The Broker connection.", NULL },
	{ "closed", (getter)child_get_closed, NULL, "True once closed.", NULL },
	{ NULL },
};

static PyTypeObject WatchType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gpiobroker.Watch",
	.tp_basicsize = sizeof(ChildObject),
	.tp_dealloc = (destructor)child_dealloc,
	.tp_as_async = &child_async,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A watch of a line held by someone else or nobody (Broker.watch()): its level\n"
		  "first ('initial-state'), then its edges. A context manager.",
	.tp_iter = (getiterfunc)child_iter,
	.tp_iternext = (iternextfunc)child_iternext,
	.tp_methods = watch_methods,
	.tp_getset = watch_getset,
};

/* --- line info -------------------------------------------------------------------- */

static const char *direction_name(enum gpiobroker_direction d)
{
	return d == GPIOBROKER_DIRECTION_INPUT ? "input" : d == GPIOBROKER_DIRECTION_OUTPUT ? "output" : "as-is";
}

static PyObject *info_dict(const struct gpiobroker_line_info *info)
{
	return Py_BuildValue("{s:O,s:s,s:s,s:s,s:s,s:I,s:s,s:s}",
			     "used", gpiobroker_line_info_is_used(info) ? Py_True : Py_False,
			     "consumer", gpiobroker_line_info_get_consumer(info),
			     "alias", gpiobroker_line_info_get_alias(info),
			     "name", gpiobroker_line_info_get_name(info),
			     "chip", gpiobroker_line_info_get_chip(info),
			     "offset", gpiobroker_line_info_get_offset(info),
			     "direction", direction_name(gpiobroker_line_info_get_direction(info)),
			     "request_label", gpiobroker_line_info_get_request_label(info));
}

static void on_info_change(struct gpiobroker_line_info_watch *w,
			   const struct gpiobroker_line_info *info, void *userdata)
{
	ChildObject *c = userdata;
	PyObject *d = info_dict(info), *t = d ? PyTuple_Pack(2, c->callback, d) : NULL;

	/* Called later, with the lock released: the callback may use the connection. */
	if (!t || PyList_Append(c->broker->calls, t) < 0)
		PyErr_WriteUnraisable(c->callback);
	Py_XDECREF(t);
	Py_XDECREF(d);
}

static PyObject *infowatch_close(ChildObject *c, PyObject *unused)
{
	if (c->handle && c->broker->b) {
		LOCK(c->broker);
		child_drop(c, true);
		UNLOCK(c->broker);
	}
	Py_RETURN_NONE;
}

static PyMethodDef infowatch_methods[] = {
	{ "close", (PyCFunction)infowatch_close, METH_NOARGS, "Stop calling the callback." },
	{ NULL },
};

static PyTypeObject LineInfoWatchType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gpiobroker.LineInfoWatch",
	.tp_basicsize = sizeof(ChildObject),
	.tp_dealloc = (destructor)child_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Calls its callback with the line's info (a dict) whenever it changes;\n"
		  "from Broker.process() or any read_event() on the same connection.",
	.tp_methods = infowatch_methods,
};

/* --- Broker ----------------------------------------------------------------------- */

static int broker_init(BrokerObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "address", "timeout", NULL };
	const char *address = NULL;
	PyObject *to = Py_None;
	struct gpiobroker *b;
	double t;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|z$O", kwlist, &address, &to) ||
	    parse_timeout(to, &t) < 0)
		return -1;
	if (self->b) {
		PyErr_SetString(PyExc_RuntimeError, "Broker already initialised");
		return -1;
	}
	if (!self->calls && !(self->calls = PyList_New(0)))
		return -1;
	if (!self->lock && !(self->lock = PyThread_allocate_lock())) {
		PyErr_NoMemory();
		return -1;
	}
	Py_BEGIN_ALLOW_THREADS
	b = address ? gpiobroker_open_address(address) : gpiobroker_open();
	Py_END_ALLOW_THREADS
	if (!b) {
		PyErr_SetFromErrno(PyExc_ConnectionError);
		return -1;
	}
	if (t > 0 && gpiobroker_set_call_timeout(b, (uint64_t)(t * 1e6)) < 0) {
		gpiobroker_close(b);
		PyErr_SetString(PyExc_ValueError, "cannot set the call timeout");
		return -1;
	}
	self->b = b;
	return 0;
}

static void broker_close_locked(BrokerObject *self)
{
	/* The library frees every handle it still has: the objects must not use them. */
	for (ChildObject *c = self->children; c; c = c->next) {
		if (c->kind == KIND_INFO_WATCH && c->handle)
			gpiobroker_line_info_unwatch(c->handle);
		c->handle = NULL;
	}
	gpiobroker_close(self->b);
	self->b = NULL;
}

static PyObject *broker_close(BrokerObject *self, PyObject *unused)
{
	if (self->b) {
		LOCK(self);
		broker_close_locked(self);
		UNLOCK(self);
	}
	Py_RETURN_NONE;
}

static void broker_dealloc(BrokerObject *self)
{
	/* Children hold a reference: none is left by now. */
	if (self->b)
		broker_close_locked(self);
	if (self->lock)
		PyThread_free_lock(self->lock);
	Py_XDECREF(self->calls);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *broker_enter(BrokerObject *self, PyObject *unused)
{
	if (check_open(self) < 0)
		return NULL;
	return Py_NewRef(self);
}

static PyObject *broker_exit(BrokerObject *self, PyObject *args)
{
	Py_DECREF(broker_close(self, NULL));
	Py_RETURN_FALSE;
}

/* _request_array(lines, settings, label, persistent, direct=False) */
static PyObject *broker_request_array(BrokerObject *self, PyObject *args)
{
	PyObject *lines, *settings, *lseq = NULL, *sseq = NULL;
	struct gpiobroker_line_settings *s = NULL;
	const char **names = NULL;
	const char *label;
	struct gpiobroker_request *req;
	ChildObject *c = NULL;
	Py_ssize_t n;
	int persistent, direct = 0, err;

	if (!PyArg_ParseTuple(args, "OOsp|p", &lines, &settings, &label, &persistent, &direct) ||
	    check_open(self) < 0)
		return NULL;
	lseq = PySequence_Fast(lines, "lines must be a sequence of str");
	if (!lseq)
		return NULL;
	n = PySequence_Fast_GET_SIZE(lseq);
	if (settings != Py_None) {
		sseq = PySequence_Fast(settings, "settings must be a sequence of dicts");
		if (!sseq)
			goto out;
		if (PySequence_Fast_GET_SIZE(sseq) != n) {
			PyErr_SetString(PyExc_ValueError, "one settings dict per line");
			goto out;
		}
	}
	names = PyMem_Calloc(n ? n : 1, sizeof(*names));
	s = PyMem_Calloc(n ? n : 1, sizeof(*s));
	if (!names || !s) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *o = PySequence_Fast_GET_ITEM(lseq, i);

		if (!PyUnicode_Check(o)) {
			PyErr_SetString(PyExc_TypeError, "a line is named by a str (alias, name, CHIP:OFFSET)");
			goto out;
		}
		if (!(names[i] = PyUnicode_AsUTF8(o)) ||
		    parse_settings(sseq ? PySequence_Fast_GET_ITEM(sseq, i) : NULL, &s[i]) < 0)
			goto out;
	}
	c = child_new(&RequestType, self, KIND_REQUEST);
	if (!c)
		goto out;
	LOCK(self);
	Py_BEGIN_ALLOW_THREADS
	req = gpiobroker_request_array(self->b, (size_t)n, names, s, label,
				       (persistent ? GPIOBROKER_REQUEST_PERSISTENT : 0) |
				       (direct ? GPIOBROKER_REQUEST_DIRECT : 0));
	err = errno;
	Py_END_ALLOW_THREADS
	if (req) {
		c->handle = req;
		/* Events queue up from the first one; read_event() takes them. */
		gpiobroker_to_irq_flags(req, on_request_event, c, GPIOBROKER_IRQ_INITIAL_STATE);
	} else {
		raise_broker_error(self, -err);
	}
	UNLOCK(self);
	if (!req)
		Py_CLEAR(c);
out:
	PyMem_Free(names);
	PyMem_Free(s);
	Py_XDECREF(lseq);
	Py_XDECREF(sseq);
	return (PyObject *)c;
}

static PyObject *broker_open_request(BrokerObject *self, PyObject *args)
{
	const char *path;
	struct gpiobroker_request *req;
	ChildObject *c;
	int err;

	if (!PyArg_ParseTuple(args, "s", &path) || check_open(self) < 0)
		return NULL;
	c = child_new(&RequestType, self, KIND_REQUEST);
	if (!c)
		return NULL;
	LOCK(self);
	Py_BEGIN_ALLOW_THREADS
	req = gpiobroker_request_open(self->b, path);
	err = errno;
	Py_END_ALLOW_THREADS
	if (req) {
		c->handle = req;
		err = -gpiobroker_to_irq(req, on_request_event, c);
		if (err > 0) {
			gpiobroker_request_close(req);
			c->handle = NULL;
		}
	}
	if (!c->handle)
		raise_broker_error(self, -err);
	UNLOCK(self);
	if (!c->handle)
		Py_CLEAR(c);
	return (PyObject *)c;
}

static PyObject *broker_watch(BrokerObject *self, PyObject *args)
{
	const char *line;
	struct gpiobroker_watch *w;
	ChildObject *c;

	if (!PyArg_ParseTuple(args, "s", &line) || check_open(self) < 0)
		return NULL;
	c = child_new(&WatchType, self, KIND_WATCH);
	if (!c)
		return NULL;
	w = BROKER_CALL_PTR(self, gpiobroker_watch(self->b, line, on_watch_event, c));
	c->handle = w;
	if (!w)
		Py_CLEAR(c);
	return (PyObject *)c;
}

static PyObject *broker_line_info(BrokerObject *self, PyObject *args)
{
	struct gpiobroker_line_info *info;
	const char *line;
	PyObject *d = NULL;

	if (!PyArg_ParseTuple(args, "s", &line) || check_open(self) < 0)
		return NULL;
	info = BROKER_CALL_PTR(self, gpiobroker_line_info_get(self->b, line));
	if (info)
		d = info_dict(info);
	gpiobroker_line_info_free(info);
	return d;
}

static PyObject *broker_watch_line_info(BrokerObject *self, PyObject *args)
{
	struct gpiobroker_line_info_watch *w;
	PyObject *cb;
	const char *line;
	ChildObject *c;

	if (!PyArg_ParseTuple(args, "sO", &line, &cb) || check_open(self) < 0)
		return NULL;
	if (!PyCallable_Check(cb)) {
		PyErr_SetString(PyExc_TypeError, "callback must be callable");
		return NULL;
	}
	c = child_new(&LineInfoWatchType, self, KIND_INFO_WATCH);
	if (!c)
		return NULL;
	c->callback = Py_NewRef(cb);
	w = BROKER_CALL_PTR(self, gpiobroker_line_info_watch(self->b, line, on_info_change, c));
	c->handle = w;
	if (!w)
		Py_CLEAR(c);
	return (PyObject *)c;
}

static PyObject *broker_find_line(BrokerObject *self, PyObject *args)
{
	char *path = NULL, *chip = NULL;
	const char *line;
	unsigned int offset = 0;
	PyObject *t = NULL;
	int r;

	if (!PyArg_ParseTuple(args, "s", &line) || check_open(self) < 0)
		return NULL;
	r = BROKER_CALL(self, gpiobroker_find_line(self->b, line, &path, &chip, &offset));
	if (r >= 0)
		t = Py_BuildValue("(ssI)", path, chip, offset);
	free(path);
	free(chip);
	return t;
}

static PyObject *broker_process(BrokerObject *self, PyObject *unused)
{
	int r;

	if (check_open(self) < 0)
		return NULL;
	LOCK(self);
	r = gpiobroker_process(self->b);
	UNLOCK(self);
	if (r < 0)
		return raise_broker_error(NULL, r);
	if (run_calls(self) < 0)
		return NULL;
	return PyLong_FromLong(r);
}

static PyObject *broker_fileno(BrokerObject *self, PyObject *unused)
{
	if (check_open(self) < 0)
		return NULL;
	return PyLong_FromLong(gpiobroker_get_fd(self->b));
}

static PyObject *broker_timeout_get(BrokerObject *self, void *closure)
{
	if (check_open(self) < 0)
		return NULL;
	return PyFloat_FromDouble(gpiobroker_get_call_timeout(self->b) / 1e6);
}

static int broker_timeout_set(BrokerObject *self, PyObject *v, void *closure)
{
	double t;
	int r;

	if (check_open(self) < 0 || parse_timeout(v, &t) < 0)
		return -1;
	LOCK(self);
	r = gpiobroker_set_call_timeout(self->b, t < 0 ? 0 : (uint64_t)(t * 1e6));
	UNLOCK(self);
	if (r < 0) {
		errno = -r;
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	return 0;
}

static PyObject *broker_get_closed(BrokerObject *self, void *closure)
{
	return PyBool_FromLong(self->b == NULL);
}

static PyMethodDef broker_methods[] = {
	{ "_request_array", (PyCFunction)broker_request_array, METH_VARARGS, NULL },
	{ "open_request", (PyCFunction)broker_open_request, METH_VARARGS,
	  "open_request(path) -> Request: use an existing request (e.g. a persistent one of this uid)." },
	{ "watch", (PyCFunction)broker_watch, METH_VARARGS,
	  "watch(line) -> Watch: the line's level and edges without holding it." },
	{ "line_info", (PyCFunction)broker_line_info, METH_VARARGS,
	  "line_info(line) -> dict: used, consumer, alias, name, chip, offset, direction, request_label." },
	{ "watch_line_info", (PyCFunction)broker_watch_line_info, METH_VARARGS,
	  "watch_line_info(line, callback) -> LineInfoWatch: callback(info) on every change." },
	{ "find_line", (PyCFunction)broker_find_line, METH_VARARGS,
	  "find_line(line) -> (path, chip, offset)" },
	{ "process", (PyCFunction)broker_process, METH_NOARGS,
	  "Handle what arrived on the connection (queue events, run line-info callbacks); never blocks." },
	{ "fileno", (PyCFunction)broker_fileno, METH_NOARGS, "The connection's file descriptor." },
	{ "close", (PyCFunction)broker_close, METH_NOARGS,
	  "Close the connection: its managed requests and watches end with it." },
	{ "__enter__", (PyCFunction)broker_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)broker_exit, METH_VARARGS, NULL },
	{ NULL },
};

static PyGetSetDef broker_getset[] = {
	{ "timeout", (getter)broker_timeout_get, (setter)broker_timeout_set,
	  "The call timeout in seconds (None restores the default, 25 s).", NULL },
	{ "closed", (getter)broker_get_closed, NULL, "True once closed.", NULL },
	{ NULL },
};

static PyTypeObject BrokerType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gpiobroker._Broker",
	.tp_basicsize = sizeof(BrokerObject),
	.tp_dealloc = (destructor)broker_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "One connection to gpiod-broker (the system bus, or address).",
	.tp_methods = broker_methods,
	.tp_getset = broker_getset,
	.tp_init = (initproc)broker_init,
	.tp_new = PyType_GenericNew,
};

/* --- module ----------------------------------------------------------------------- */

static PyObject *mod_set_helpers(PyObject *m, PyObject *args)
{
	PyObject *a, *e, *rc;

	if (!PyArg_ParseTuple(args, "OOO", &a, &e, &rc))
		return NULL;
	Py_XSETREF(reconfigure_helper, Py_NewRef(rc));
	Py_XSETREF(aiter_factory, Py_NewRef(a));
	Py_XSETREF(events_factory, Py_NewRef(e));
	Py_RETURN_NONE;
}

static PyObject *mod_library_version(PyObject *m, PyObject *unused)
{
	return PyUnicode_FromString(gpiobroker_version());
}

static PyMethodDef module_methods[] = {
	{ "_set_helpers", mod_set_helpers, METH_VARARGS, NULL },
	{ "library_version", mod_library_version, METH_NOARGS,
	  "The version of the libgpiobroker the module runs with." },
	{ NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "gpiobroker._gpiobroker",
	.m_doc = "The C part of gpiobroker: libgpiobroker's objects. Use the gpiobroker package.",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__gpiobroker(void);

PyMODINIT_FUNC PyInit__gpiobroker(void)
{
	PyObject *m;

	if (PyType_Ready(&BrokerType) < 0 || PyType_Ready(&RequestType) < 0 ||
	    PyType_Ready(&WatchType) < 0 || PyType_Ready(&LineInfoWatchType) < 0)
		return NULL;
	if (!EventType.tp_name && PyStructSequence_InitType2(&EventType, &event_desc) < 0)
		return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	if (PyModule_AddObjectRef(m, "_Broker", (PyObject *)&BrokerType) < 0 ||
	    PyModule_AddObjectRef(m, "Request", (PyObject *)&RequestType) < 0 ||
	    PyModule_AddObjectRef(m, "Watch", (PyObject *)&WatchType) < 0 ||
	    PyModule_AddObjectRef(m, "LineInfoWatch", (PyObject *)&LineInfoWatchType) < 0 ||
	    PyModule_AddObjectRef(m, "Event", (PyObject *)&EventType) < 0 ||
	    PyModule_AddStringConstant(m, "HEADER_VERSION", GPIOBROKER_VERSION_STRING) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
