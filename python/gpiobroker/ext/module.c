/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker._gpiobroker: the CPython extension over libgpiobroker.
 *
 * Only marshalling lives here. Flow control (Ack), following a restarted broker,
 * loss counting and the mapping of broker errors to errno all stay in the C
 * library, so Python programs behave exactly as C ones. The Pythonic surface
 * (keyword settings, asyncio, the exception classes) is the pure-Python package
 * around it (gpiobroker/__init__.py, gpiobroker/_errors.py). How the files share
 * the work, and the threads: internal.h.
 */
#include "internal.h"

static PyObject *mod_set_helpers(PyObject *m, PyObject *args)
{
	PyObject *a, *e, *rc;

	if (!PyArg_ParseTuple(args, "OOO", &a, &e, &rc))
		return NULL;
	Py_XSETREF(gbpy_reconfigure_helper, Py_NewRef(rc));
	Py_XSETREF(gbpy_aiter_factory, Py_NewRef(a));
	Py_XSETREF(gbpy_events_factory, Py_NewRef(e));
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

/* The module's types, by the names the package imports. */
static const struct {
	const char *name;
	PyTypeObject *type;
} types[] = {
	{ "_Broker", &gbpy_broker_type },
	{ "Request", &gbpy_request_type },
	{ "Watch", &gbpy_watch_type },
	{ "LineInfoWatch", &gbpy_line_info_watch_type },
	{ "Event", &gbpy_event_type },
};

PyMODINIT_FUNC PyInit__gpiobroker(void);

PyMODINIT_FUNC PyInit__gpiobroker(void)
{
	PyObject *m;

	/* Event is a struct sequence, readied as such; PyType_Ready() then does nothing. */
	if (gbpy_event_type_init() < 0)
		return NULL;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (PyType_Ready(types[i].type) < 0)
			return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (PyModule_AddObjectRef(m, types[i].name, (PyObject *)types[i].type) < 0)
			goto fail;
	if (PyModule_AddStringConstant(m, "HEADER_VERSION", GPIOBROKER_VERSION_STRING) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
