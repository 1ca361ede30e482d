/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker._Broker (gpiobroker.Broker is the package's subclass): one connection
 * to gpiod-broker, which makes the Requests, Watches and LineInfoWatches on it and
 * ends them when it closes.
 */
#include <stdlib.h>

#include "internal.h"

static int broker_init(BrokerObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "address", "host", "machine", "timeout", NULL };
	const char *address = NULL, *host = NULL, *machine = NULL;
	PyObject *to = Py_None;
	struct gpiobroker *b;
	double t;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|z$zzO", kwlist, &address, &host, &machine,
					 &to) ||
	    gbpy_parse_timeout(to, &t) < 0)
		return -1;
	if (!!address + !!host + !!machine > 1) {
		PyErr_SetString(PyExc_ValueError, "address, host and machine exclude one another");
		return -1;
	}
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
	if (host)
		b = gpiobroker_open_host(host);
	else if (machine)
		b = gpiobroker_open_machine(machine);
	else
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
	if (gbpy_check_open(self) < 0)
		return NULL;
	return Py_NewRef(self);
}

static PyObject *broker_exit(BrokerObject *self, PyObject *args)
{
	Py_DECREF(broker_close(self, NULL));
	Py_RETURN_FALSE;
}

/* _request_array(lines, settings, label, persistent, direct=False): direct "or-bus"
 * is GPIOBROKER_REQUEST_DIRECT_OR_BUS, any other true value GPIOBROKER_REQUEST_DIRECT. */
static PyObject *broker_request_array(BrokerObject *self, PyObject *args)
{
	PyObject *lines, *settings, *lseq = NULL, *sseq = NULL, *req = NULL;
	struct gpiobroker_line_settings *s = NULL;
	const char **names = NULL;
	const char *label;
	Py_ssize_t n;
	PyObject *direct_arg = Py_False;
	unsigned int direct = 0;
	int persistent, truth;

	if (!PyArg_ParseTuple(args, "OOsp|O", &lines, &settings, &label, &persistent, &direct_arg) ||
	    gbpy_check_open(self) < 0)
		return NULL;
	if (PyUnicode_Check(direct_arg) && PyUnicode_CompareWithASCIIString(direct_arg, "or-bus") == 0) {
		direct = GPIOBROKER_REQUEST_DIRECT_OR_BUS;
	} else {
		truth = PyObject_IsTrue(direct_arg);
		if (truth < 0)
			return NULL;
		direct = truth ? GPIOBROKER_REQUEST_DIRECT : 0;
	}
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
			PyErr_SetString(PyExc_TypeError,
					"a line is named by a str (alias, name, CHIP:OFFSET)");
			goto out;
		}
		if (!(names[i] = PyUnicode_AsUTF8(o)) ||
		    gbpy_parse_settings(sseq ? PySequence_Fast_GET_ITEM(sseq, i) : NULL, &s[i]) < 0)
			goto out;
	}
	req = gbpy_request_new(self, (size_t)n, names, s, label,
			       (persistent ? GPIOBROKER_REQUEST_PERSISTENT : 0) | direct);
out:
	PyMem_Free(names);
	PyMem_Free(s);
	Py_XDECREF(lseq);
	Py_XDECREF(sseq);
	return req;
}

static PyObject *broker_open_request(BrokerObject *self, PyObject *args)
{
	const char *path;

	if (!PyArg_ParseTuple(args, "s", &path) || gbpy_check_open(self) < 0)
		return NULL;
	return gbpy_request_open(self, path);
}

static PyObject *broker_watch(BrokerObject *self, PyObject *args)
{
	const char *line;

	if (!PyArg_ParseTuple(args, "s", &line) || gbpy_check_open(self) < 0)
		return NULL;
	return gbpy_watch_new(self, line);
}

static PyObject *broker_line_info(BrokerObject *self, PyObject *args)
{
	struct gpiobroker_line_info *info;
	const char *line;
	PyObject *d = NULL;

	if (!PyArg_ParseTuple(args, "s", &line) || gbpy_check_open(self) < 0)
		return NULL;
	info = BROKER_CALL_PTR(self, gpiobroker_line_info_get(self->b, line));
	if (info)
		d = gbpy_line_info_dict(info);
	gpiobroker_line_info_free(info);
	return d;
}

static PyObject *broker_watch_line_info(BrokerObject *self, PyObject *args)
{
	PyObject *cb;
	const char *line;

	if (!PyArg_ParseTuple(args, "sO", &line, &cb) || gbpy_check_open(self) < 0)
		return NULL;
	return gbpy_line_info_watch_new(self, line, cb);
}

static PyObject *broker_find_line(BrokerObject *self, PyObject *args)
{
	char *path = NULL, *chip = NULL;
	const char *line;
	unsigned int offset = 0;
	PyObject *t = NULL;
	int r;

	if (!PyArg_ParseTuple(args, "s", &line) || gbpy_check_open(self) < 0)
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
	int r = gbpy_broker_process(self);

	return r < 0 ? NULL : PyLong_FromLong(r);
}

static PyObject *broker_fileno(BrokerObject *self, PyObject *unused)
{
	if (gbpy_check_open(self) < 0)
		return NULL;
	return PyLong_FromLong(gpiobroker_get_fd(self->b));
}

static PyObject *broker_timeout_get(BrokerObject *self, void *closure)
{
	if (gbpy_check_open(self) < 0)
		return NULL;
	return PyFloat_FromDouble(gpiobroker_get_call_timeout(self->b) / 1e6);
}

static int broker_timeout_set(BrokerObject *self, PyObject *v, void *closure)
{
	double t;
	int r;

	if (gbpy_check_open(self) < 0 || gbpy_parse_timeout(v, &t) < 0)
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

static PyObject *broker_get_connected(BrokerObject *self, void *closure)
{
	return PyBool_FromLong(self->b && gpiobroker_is_connected(self->b));
}

static PyObject *broker_get_transport(BrokerObject *self, void *closure)
{
	if (gbpy_check_open(self) < 0)
		return NULL;
	return PyUnicode_FromString(gpiobroker_get_transport(self->b) == GPIOBROKER_TRANSPORT_P2P ?
					    "p2p" : "bus");
}

static PyObject *broker_reconnect(BrokerObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "requests", NULL };
	int requests = 1, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$p", kwlist, &requests) ||
	    gbpy_check_open(self) < 0)
		return NULL;
	/* With the GIL: the handles made again are told so by their event handlers,
	 * which queue Python objects. */
	LOCK(self);
	r = gpiobroker_reconnect(self->b, requests ? GPIOBROKER_RECONNECT_REQUESTS : 0);
	UNLOCK(self);
	if (r < 0)
		return gbpy_raise_broker_error(self, r);
	return PyLong_FromLong(r);
}

static PyMethodDef broker_methods[] = {
	{ "_request_array", (PyCFunction)broker_request_array, METH_VARARGS, NULL },
	{ "open_request", (PyCFunction)broker_open_request, METH_VARARGS,
	  "open_request(path) -> Request: use an existing request (e.g. a persistent one of this "
	  "uid)." },
	{ "watch", (PyCFunction)broker_watch, METH_VARARGS,
	  "watch(line) -> Watch: the line's level and edges without holding it." },
	{ "line_info", (PyCFunction)broker_line_info, METH_VARARGS,
	  "line_info(line) -> dict: used, consumer, alias, name, chip, offset, direction, "
	  "request_label." },
	{ "watch_line_info", (PyCFunction)broker_watch_line_info, METH_VARARGS,
	  "watch_line_info(line, callback) -> LineInfoWatch: callback(info) on every change." },
	{ "find_line", (PyCFunction)broker_find_line, METH_VARARGS,
	  "find_line(line) -> (path, chip, offset)" },
	{ "process", (PyCFunction)broker_process, METH_NOARGS,
	  "Handle what arrived on the connection (queue events, run line-info callbacks); "
	  "never blocks." },
	{ "fileno", (PyCFunction)broker_fileno, METH_NOARGS, "The connection's file descriptor." },
	{ "reconnect", (PyCFunction)(void (*)(void))broker_reconnect, METH_VARARGS | METH_KEYWORDS,
	  "reconnect(*, requests=True) -> int: after the link was lost, connect again to the same "
	  "bus (host, machine, address); with requests, make every request and watch again "
	  "(each gets a 'broker-restarted' event). Returns how many could not be made again." },
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
	{ "connected", (getter)broker_get_connected, NULL,
	  "False once the link to the bus is lost (see reconnect()).", NULL },
	{ "transport", (getter)broker_get_transport, NULL,
	  "'p2p' while a private connection carries the calls, else 'bus'.", NULL },
	{ NULL },
};

PyTypeObject gbpy_broker_type = {
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
