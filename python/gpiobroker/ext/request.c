/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker.Request: lines held through the broker, their values, directions and
 * settings, and their events.
 */
#include "internal.h"

#define REQ(c) ((struct gpiobroker_request *)(c)->handle)

static void on_request_event(struct gpiobroker_request *req, const struct gpiobroker_event *ev,
			     void *userdata)
{
	gbpy_queue_event(userdata, ev);
}

/*
 * A Request for lines the Broker asks for (@path NULL), or for the existing request
 * at @path. Its events are queued from the first one; read_event() takes them.
 */
static PyObject *request_make(BrokerObject *bo, const char *path, size_t n, const char **lines,
			      const struct gpiobroker_line_settings *settings, const char *label,
			      unsigned int flags)
{
	struct gpiobroker_request *req;
	ChildObject *c;
	int err;

	c = gbpy_child_new(&gbpy_request_type, bo, KIND_REQUEST);
	if (!c)
		return NULL;
	LOCK(bo);
	Py_BEGIN_ALLOW_THREADS
	req = path ? gpiobroker_request_open(bo->b, path) :
		     gpiobroker_request_array(bo->b, n, lines, settings, label, flags);
	err = errno;
	Py_END_ALLOW_THREADS
	if (req && path) {
		/* An existing request subscribes to its events here: if it cannot, the
		 * open fails, rather than the events going missing later. */
		err = -gpiobroker_to_irq(req, on_request_event, c);
		if (err > 0) {
			gpiobroker_request_close(req);
			req = NULL;
		}
	} else if (req) {
		/* New lines: their initial state is the first event. */
		gpiobroker_to_irq_flags(req, on_request_event, c, GPIOBROKER_IRQ_INITIAL_STATE);
	}
	c->handle = req;
	if (!req)
		gbpy_raise_broker_error(bo, -err);
	UNLOCK(bo);
	if (!req)
		Py_CLEAR(c);
	return (PyObject *)c;
}

/* Broker._request_array(). */
PyObject *gbpy_request_new(BrokerObject *bo, size_t n, const char **lines,
			   const struct gpiobroker_line_settings *settings, const char *label,
			   unsigned int flags)
{
	return request_make(bo, NULL, n, lines, settings, label, flags);
}

/* Broker.open_request(path). */
PyObject *gbpy_request_open(BrokerObject *bo, const char *path)
{
	return request_make(bo, path, 0, NULL, NULL, NULL, 0);
}

static PyObject *request_detach(ChildObject *c, PyObject *unused)
{
	if (c->handle && c->broker->b) {
		LOCK(c->broker);
		gbpy_child_drop(c, false);
		UNLOCK(c->broker);
	}
	Py_RETURN_NONE;
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

/* The request is usable: its connection open, itself not released. */
static int check_usable(ChildObject *c)
{
	return gbpy_check_open(c->broker) < 0 || gbpy_check_child(c) < 0 ? -1 : 0;
}

/*
 * The arguments of a method on one line, "|O" (index=0) or "O|O" (value, index=0):
 * the request usable and the index in range. *value is the first argument of "O|O".
 */
static int line_args(ChildObject *c, PyObject *args, PyObject **value, unsigned int *i)
{
	PyObject *io = NULL;
	int ok = value ? PyArg_ParseTuple(args, "O|O", value, &io) :
			 PyArg_ParseTuple(args, "|O", &io);

	if (!ok || check_usable(c) < 0)
		return -1;
	return index_of(c, io, i);
}

static PyObject *request_get_value(ChildObject *c, PyObject *args)
{
	unsigned int i;
	int r;

	if (line_args(c, args, NULL, &i) < 0)
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

	if (!PyArg_ParseTuple(args, "O|O", &a, &v) || check_usable(c) < 0)
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

	if (check_usable(c) < 0)
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

/*
 * The calls that take per-line arguments (set_values(), _reconfigure()): the
 * library's call, the size of one line's argument, and how it is read.
 */
typedef struct PerLineCall {
	size_t size;
	int (*parse)(PyObject *o, void *out);
	int (*call)(struct gpiobroker_request *req, size_t n, const unsigned int *idx,
		    const void *args);
} PerLineCall;

/*
 * Make @how's call with the per-line arguments in @items (a list, which this takes):
 * with @pairs, (index, argument) pairs; else the arguments of lines 0, 1...
 */
static PyObject *per_line_call(ChildObject *c, PyObject *items, bool pairs, const char *pair_error,
			       const PerLineCall *how)
{
	Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
	unsigned int *idx = PyMem_Calloc(n ? n : 1, sizeof(*idx));
	char *args = PyMem_Calloc(n ? n : 1, how->size);

	if (!idx || !args) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *it = PySequence_Fast_GET_ITEM(items, i);

		if (!pairs) {
			idx[i] = (unsigned int)i;
		} else if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 2) {
			PyErr_SetString(PyExc_TypeError, pair_error);
			goto out;
		} else if (index_of(c, PyTuple_GET_ITEM(it, 0), &idx[i]) < 0) {
			goto out;
		} else {
			it = PyTuple_GET_ITEM(it, 1);
		}
		if (how->parse(it, args + i * how->size) < 0)
			goto out;
	}
	(void)BROKER_CALL(c->broker, how->call(REQ(c), (size_t)n, idx, args));
out:
	PyMem_Free(idx);
	PyMem_Free(args);
	Py_DECREF(items);
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

static int parse_value(PyObject *o, void *out)
{
	int v = PyObject_IsTrue(o);

	if (v < 0)
		return -1;
	*(int *)out = v;
	return 0;
}

static int call_set_values(struct gpiobroker_request *req, size_t n, const unsigned int *idx,
			   const void *vals)
{
	return gpiobroker_set_values(req, n, idx, vals);
}

/* set_values(values): a sequence of one value per line, or a dict {index: value}. */
static PyObject *request_set_values(ChildObject *c, PyObject *arg)
{
	static const PerLineCall how = { sizeof(int), parse_value, call_set_values };
	PyObject *items;

	if (check_usable(c) < 0)
		return NULL;
	items = PyDict_Check(arg) ? PyDict_Items(arg) :
				    PySequence_Fast(arg, "values must be a sequence or a dict");
	if (!items)
		return NULL;
	return per_line_call(c, items, PyDict_Check(arg), "set_values takes {index: value}", &how);
}

static PyObject *request_direction_input(ChildObject *c, PyObject *args)
{
	unsigned int i;

	if (line_args(c, args, NULL, &i) < 0 ||
	    BROKER_CALL(c->broker, gpiobroker_direction_input(REQ(c), i)) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *request_direction_output(ChildObject *c, PyObject *args)
{
	PyObject *v;
	unsigned int i;
	int val;

	if (line_args(c, args, &v, &i) < 0 || (val = PyObject_IsTrue(v)) < 0 ||
	    BROKER_CALL(c->broker, gpiobroker_direction_output(REQ(c), i, val)) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* reconfigure(index=None, **settings): the package turns keywords into dicts. */
static PyObject *request_reconfigure_kw(ChildObject *c, PyObject *args, PyObject *kw)
{
	PyObject *full, *r;

	if (!gbpy_reconfigure_helper) {
		PyErr_SetString(PyExc_TypeError, "reconfigure() needs the gpiobroker package");
		return NULL;
	}
	full = PyTuple_New(PyTuple_GET_SIZE(args) + 1);
	if (!full)
		return NULL;
	PyTuple_SET_ITEM(full, 0, Py_NewRef(c));
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++)
		PyTuple_SET_ITEM(full, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
	r = PyObject_Call(gbpy_reconfigure_helper, full, kw);
	Py_DECREF(full);
	return r;
}

static int parse_settings(PyObject *o, void *out)
{
	return gbpy_parse_settings(o, out);
}

static int call_reconfigure(struct gpiobroker_request *req, size_t n, const unsigned int *idx,
			    const void *settings)
{
	return gpiobroker_reconfigure(req, n, idx, settings);
}

/* _reconfigure([(index, settings-dict), ...]) */
static PyObject *request_reconfigure(ChildObject *c, PyObject *arg)
{
	static const PerLineCall how = {
		sizeof(struct gpiobroker_line_settings), parse_settings, call_reconfigure
	};
	static const char what[] = "reconfigure takes a list of (index, settings)";
	PyObject *items;

	if (check_usable(c) < 0)
		return NULL;
	items = PySequence_Fast(arg, what);
	if (!items)
		return NULL;
	return per_line_call(c, items, true, what, &how);
}

static PyObject *request_get_lines(ChildObject *c, void *closure)
{
	size_t n;
	PyObject *l;

	if (gbpy_check_child(c) < 0)
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

static PyMethodDef request_methods[] = {
	CHILD_EVENT_METHODS,
	{ "release", (PyCFunction)gbpy_child_close, METH_NOARGS,
	  "Release the lines: they are back with the kernel when this returns." },
	{ "detach", (PyCFunction)request_detach, METH_NOARGS,
	  "Drop the handle but leave the request held (a persistent one outlives the program)." },
	{ "get_value", (PyCFunction)request_get_value, METH_VARARGS, "get_value(index=0) -> bool" },
	{ "set_value", (PyCFunction)request_set_value, METH_VARARGS,
	  "set_value(value) or set_value(index, value)" },
	{ "get_values", (PyCFunction)request_get_values, METH_NOARGS,
	  "All lines' values, in order." },
	{ "set_values", (PyCFunction)request_set_values, METH_O,
	  "set_values([v0, v1, ...]) or set_values({index: value}): all at once." },
	{ "direction_input", (PyCFunction)request_direction_input, METH_VARARGS,
	  "direction_input(index=0): the line becomes an input." },
	{ "direction_output", (PyCFunction)request_direction_output, METH_VARARGS,
	  "direction_output(value, index=0): the line becomes an output at value, in one step." },
	{ "_reconfigure", (PyCFunction)request_reconfigure, METH_O, NULL },
	{ "reconfigure", (PyCFunction)(void (*)(void))request_reconfigure_kw,
	  METH_VARARGS | METH_KEYWORDS,
	  "reconfigure(index=None, **settings): change settings of line index (None: all), "
	  "keywords as\n"
	  "Broker.request(); only those given change. Switching to output takes value." },
	{ NULL },
};

static PyGetSetDef request_getset[] = {
	{ "value", (getter)request_value_get, (setter)request_value_set,
	  "Line 0's logical value (read from / written to the broker).", NULL },
	CHILD_ATTR("path", gpiobroker_request_get_path, "The broker's Request object path."),
	{ "lines", (getter)request_get_lines, NULL, "[(chip, offset), ...] in index order.", NULL },
	CHILD_ATTR("persistent", gpiobroker_request_is_persistent,
		   "Whether the request outlives the connection."),
	CHILD_ATTR("direct", gpiobroker_request_is_direct,
		   "Whether values and edges go through the kernel line fds (direct = yes)."),
	CHILD_ATTR("events_lost", gpiobroker_request_get_events_lost,
		   "Events lost so far, as seen here."),
	CHILD_ATTR_OF("broker", ATTR_BROKER, "The Broker connection."),
	CHILD_ATTR_OF("released", ATTR_CLOSED, "True once released or detached."),
	{ NULL },
};

static PySequenceMethods request_seq = { .sq_length = (lenfunc)request_len };

PyTypeObject gbpy_request_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gpiobroker.Request",
	CHILD_TYPE_SLOTS,
	CHILD_EVENT_SLOTS,
	.tp_repr = (reprfunc)request_repr,
	.tp_as_sequence = &request_seq,
	.tp_doc = "Lines held through the broker (Broker.request_array()). A context manager:\n"
		  "the lines are released on exit. Iterating yields its events.",
	.tp_methods = request_methods,
	.tp_getset = request_getset,
};
