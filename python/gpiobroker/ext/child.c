/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What Request, Watch and LineInfoWatch share: their place in their Broker's list,
 * dropping their library handle, reading their events, and their read-only
 * attributes, served from each type's table by one getter.
 */
#include <poll.h>
#include <time.h>

#include "internal.h"

ChildObject *gbpy_child_new(PyTypeObject *type, BrokerObject *bo, int kind)
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
int gbpy_child_drop(ChildObject *c, bool release)
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

void gbpy_child_dealloc(ChildObject *c)
{
	if (c->broker) {
		if (c->handle && c->broker->b) {
			LOCK(c->broker);
			/* Garbage: a request nobody can reach is released, not leaked. */
			gbpy_child_drop(c, true);
			UNLOCK(c->broker);
		}
		child_unlink(c);
	}
	Py_XDECREF(c->queue);
	Py_XDECREF(c->callback);
	Py_XDECREF(c->broker);
	PyObject_Free(c);
}

/* Request.release(), Watch.close(), LineInfoWatch.close(): a second time does nothing. */
PyObject *gbpy_child_close(ChildObject *c, PyObject *unused)
{
	int r;

	if (!c->handle || !c->broker->b)
		Py_RETURN_NONE;
	LOCK(c->broker);
	r = gbpy_child_drop(c, true);
	if (r < 0)
		gbpy_raise_broker_error(c->broker, r);
	UNLOCK(c->broker);
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

PyObject *gbpy_child_exit(ChildObject *c, PyObject *args)
{
	PyObject *r = gbpy_child_close(c, NULL);

	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

/* Run the line-info callbacks that process() found due (lock released). */
static int broker_run_calls(BrokerObject *bo)
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
		if (gbpy_check_open(bo) < 0 || gbpy_check_child(c) < 0)
			return NULL;
		LOCK(bo);
		r = gpiobroker_process(bo->b);
		p.fd = gpiobroker_get_fd(bo->b);
		p.events = (short)gpiobroker_get_events(bo->b);
		UNLOCK(bo);
		if (r < 0)
			return gbpy_raise_broker_error(NULL, r);
		if (broker_run_calls(bo) < 0)
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

PyObject *gbpy_child_read_event_py(ChildObject *c, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *to = Py_None;
	double t;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &to) ||
	    gbpy_parse_timeout(to, &t) < 0)
		return NULL;
	return child_read_event(c, t);
}

PyObject *gbpy_child_fileno(ChildObject *c, PyObject *unused)
{
	if (gbpy_check_open(c->broker) < 0)
		return NULL;
	return PyLong_FromLong(gpiobroker_get_fd(c->broker->b));
}

/*
 * Handle what arrived on the connection, never blocking: events are queued on their
 * objects, then the line-info callbacks due are run. Returns gpiobroker_process()'s
 * result, or -1 with an exception.
 */
int gbpy_broker_process(BrokerObject *bo)
{
	int r;

	if (gbpy_check_open(bo) < 0)
		return -1;
	LOCK(bo);
	r = gpiobroker_process(bo->b);
	UNLOCK(bo);
	if (r < 0) {
		gbpy_raise_broker_error(NULL, r);
		return -1;
	}
	if (broker_run_calls(bo) < 0)
		return -1;
	return r;
}

PyObject *gbpy_child_process(ChildObject *c, PyObject *unused)
{
	if (gbpy_broker_process(c->broker) < 0)
		return NULL;
	return PyLong_FromSsize_t(PyList_GET_SIZE(c->queue));
}

PyObject *gbpy_child_pending(ChildObject *c, PyObject *unused)
{
	PyObject *l = PyList_GetSlice(c->queue, 0, PyList_GET_SIZE(c->queue));

	if (l && PyList_SetSlice(c->queue, 0, PyList_GET_SIZE(c->queue), NULL) < 0)
		Py_CLEAR(l);
	return l;
}

PyObject *gbpy_child_enter(ChildObject *c, PyObject *unused)
{
	if (gbpy_check_child(c) < 0)
		return NULL;
	return Py_NewRef(c);
}

static PyObject *child_aiter(ChildObject *c)
{
	if (!gbpy_aiter_factory) {
		PyErr_SetString(PyExc_TypeError, "async iteration needs the gpiobroker package");
		return NULL;
	}
	return PyObject_CallOneArg(gbpy_aiter_factory, (PyObject *)c);
}

PyAsyncMethods gbpy_child_async = { .am_aiter = (unaryfunc)child_aiter };

PyObject *gbpy_child_events(ChildObject *c, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *to = Py_None;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &to))
		return NULL;
	if (!gbpy_events_factory) {
		PyErr_SetString(PyExc_TypeError, "events() needs the gpiobroker package");
		return NULL;
	}
	return PyObject_CallFunctionObjArgs(gbpy_events_factory, (PyObject *)c, to, NULL);
}

PyObject *gbpy_child_iter(ChildObject *c)
{
	return Py_NewRef(c);
}

/* Iterating waits for events forever; use events(timeout) to stop on silence. */
PyObject *gbpy_child_iternext(ChildObject *c)
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

PyObject *gbpy_child_attr_get(PyObject *self, void *closure)
{
	ChildObject *c = (ChildObject *)self;
	const ChildAttr *a = closure;

	if (a->kind == ATTR_BROKER)
		return Py_NewRef(c->broker);
	if (a->kind == ATTR_CLOSED)
		return PyBool_FromLong(c->handle == NULL);
	if (gbpy_check_child(c) < 0)
		return NULL;
	switch (a->kind) {
	case ATTR_REQUEST_STR:
		return PyUnicode_FromString(
			((const char *(*)(const struct gpiobroker_request *))a->get)(c->handle));
	case ATTR_REQUEST_BOOL:
		return PyBool_FromLong(
			((bool (*)(const struct gpiobroker_request *))a->get)(c->handle));
	case ATTR_REQUEST_U64:
		return PyLong_FromUnsignedLongLong(
			((uint64_t (*)(const struct gpiobroker_request *))a->get)(c->handle));
	case ATTR_WATCH_STR:
		return PyUnicode_FromString(
			((const char *(*)(const struct gpiobroker_watch *))a->get)(c->handle));
	case ATTR_WATCH_UINT:
		return PyLong_FromUnsignedLong(
			((unsigned int (*)(const struct gpiobroker_watch *))a->get)(c->handle));
	case ATTR_WATCH_U64:
		return PyLong_FromUnsignedLongLong(
			((uint64_t (*)(const struct gpiobroker_watch *))a->get)(c->handle));
	case ATTR_BROKER:
	case ATTR_CLOSED:
		break;
	}
	PyErr_SetString(PyExc_SystemError, "gpiobroker: an attribute of unknown kind");
	return NULL;
}
