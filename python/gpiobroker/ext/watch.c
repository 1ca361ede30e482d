/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker.Watch: the level and edges of a line held by someone else or nobody.
 */
#include "internal.h"

static void on_watch_event(struct gpiobroker_watch *w, const struct gpiobroker_event *ev,
			   void *userdata)
{
	gbpy_queue_event(userdata, ev);
}

/* Broker.watch(line). */
PyObject *gbpy_watch_new(BrokerObject *bo, const char *line)
{
	ChildObject *c = gbpy_child_new(&gbpy_watch_type, bo, KIND_WATCH);

	if (!c)
		return NULL;
	c->handle = BROKER_CALL_PTR(bo, gpiobroker_watch(bo->b, line, on_watch_event, c));
	if (!c->handle)
		Py_CLEAR(c);
	return (PyObject *)c;
}

static PyMethodDef watch_methods[] = {
	CHILD_EVENT_METHODS,
	{ "close", (PyCFunction)gbpy_child_close, METH_NOARGS, "Stop watching." },
	{ NULL },
};

static PyGetSetDef watch_getset[] = {
	CHILD_ATTR("path", gpiobroker_watch_get_path, "The broker's Watch object path."),
	CHILD_ATTR("chip", gpiobroker_watch_get_chip, "The watched line's chip."),
	CHILD_ATTR("offset", gpiobroker_watch_get_offset, "The watched line's offset."),
	CHILD_ATTR("events_lost", gpiobroker_watch_get_events_lost,
		   "Events lost so far, as seen here."),
	CHILD_ATTR_OF("broker", ATTR_BROKER, "The Broker connection."),
	CHILD_ATTR_OF("closed", ATTR_CLOSED, "True once closed."),
	{ NULL },
};

PyTypeObject gbpy_watch_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gpiobroker.Watch",
	CHILD_TYPE_SLOTS,
	CHILD_EVENT_SLOTS,
	.tp_doc = "A watch of a line held by someone else or nobody (Broker.watch()): its level\n"
		  "first ('initial-state'), then its edges. A context manager.",
	.tp_methods = watch_methods,
	.tp_getset = watch_getset,
};
