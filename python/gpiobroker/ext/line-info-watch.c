/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker.LineInfoWatch: a callback run with a line's info whenever it changes;
 * and line info as the dict Broker.line_info() returns.
 */
#include "internal.h"

static const char *direction_name(enum gpiobroker_direction d)
{
	return d == GPIOBROKER_DIRECTION_INPUT  ? "input" :
	       d == GPIOBROKER_DIRECTION_OUTPUT ? "output" : "as-is";
}

PyObject *gbpy_line_info_dict(const struct gpiobroker_line_info *info)
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
	PyObject *d = gbpy_line_info_dict(info), *t = d ? PyTuple_Pack(2, c->callback, d) : NULL;

	/* Called later, with the lock released: the callback may use the connection. */
	if (!t || PyList_Append(c->broker->calls, t) < 0)
		PyErr_WriteUnraisable(c->callback);
	Py_XDECREF(t);
	Py_XDECREF(d);
}

/* Broker.watch_line_info(line, callback). */
PyObject *gbpy_line_info_watch_new(BrokerObject *bo, const char *line, PyObject *callback)
{
	ChildObject *c;

	if (!PyCallable_Check(callback)) {
		PyErr_SetString(PyExc_TypeError, "callback must be callable");
		return NULL;
	}
	c = gbpy_child_new(&gbpy_line_info_watch_type, bo, KIND_INFO_WATCH);
	if (!c)
		return NULL;
	c->callback = Py_NewRef(callback);
	c->handle = BROKER_CALL_PTR(bo, gpiobroker_line_info_watch(bo->b, line, on_info_change, c));
	if (!c->handle)
		Py_CLEAR(c);
	return (PyObject *)c;
}

static PyMethodDef infowatch_methods[] = {
	{ "close", (PyCFunction)gbpy_child_close, METH_NOARGS, "Stop calling the callback." },
	{ NULL },
};

PyTypeObject gbpy_line_info_watch_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gpiobroker.LineInfoWatch",
	CHILD_TYPE_SLOTS,
	.tp_doc = "Calls its callback with the line's info (a dict) whenever it changes;\n"
		  "from Broker.process() or any read_event() on the same connection.",
	.tp_methods = infowatch_methods,
};
