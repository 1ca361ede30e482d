/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every type of gpiobroker._gpiobroker uses: raising the exception of a
 * failed call, the checks of a closed connection or a released object, timeouts,
 * line settings, and the package's helpers.
 */
#include <string.h>

#include "internal.h"

PyObject *gbpy_aiter_factory, *gbpy_events_factory, *gbpy_reconfigure_helper;

/*
 * Raise the exception for a failed call (r < 0): the package's _errors module picks
 * the class from the broker's error name (or the errno when the failure was local).
 * Called holding the Broker's lock, so the error strings are those of this call.
 */
PyObject *gbpy_raise_broker_error(BrokerObject *bo, int r)
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

int gbpy_check_open(BrokerObject *bo)
{
	if (!bo->b) {
		PyErr_SetString(PyExc_ValueError, "the Broker connection is closed");
		return -1;
	}
	return 0;
}

int gbpy_check_child(ChildObject *c)
{
	if (!c->handle) {
		PyErr_SetString(PyExc_ValueError, c->kind == KIND_REQUEST ?
							  "the request is released" :
							  "the watch is closed");
		return -1;
	}
	return 0;
}

/* A timeout in seconds: None is forever (-1). */
int gbpy_parse_timeout(PyObject *o, double *out)
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

static int pick_bool(PyObject *d, const char *key, int *out)
{
	PyObject *v = PyDict_GetItemString(d, key);

	if (!v || v == Py_None)
		return 0;
	*out = PyObject_IsTrue(v);
	return *out < 0 ? -1 : 0;
}

/* A dict of settings (the broker's keys, '-' or '_') into the library's struct. */
int gbpy_parse_settings(PyObject *d, struct gpiobroker_line_settings *s)
{
	static const char *const dirs[] = { "as-is", "input", "output" };
	static const char *const edges[] = { "none", "rising", "falling", "both" };
	static const char *const biases[] = { "as-is", "disabled", "pull-up", "pull-down" };
	static const char *const drives[] = { "push-pull", "open-drain", "open-source" };
	static const char *const clocks[] = { "monotonic", "realtime", "hte" };
	static const char *const known[] = { "direction", "value", "edge", "bias", "drive",
					     "active_low", "debounce_us", "event_clock", NULL };
	/* Each enum's index in its names is its value; what is not given is 0, the default. */
	int dir = 0, edge = 0, bias = 0, drive = 0, eclock = 0, value = 0, active_low = 0;
	const struct {
		const char *key;
		const char *const *names;
		int n;
		int *out;
	} enums[] = {
		{ "direction", dirs, 3, &dir },
		{ "edge", edges, 4, &edge },
		{ "bias", biases, 4, &bias },
		{ "drive", drives, 3, &drive },
		{ "event_clock", clocks, 3, &eclock },
	};
	PyObject *key, *v;
	Py_ssize_t pos = 0;

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
	for (size_t j = 0; j < sizeof(enums) / sizeof(enums[0]); j++)
		if (pick(d, enums[j].key, enums[j].names, enums[j].n, enums[j].out) < 0)
			return -1;
	if (pick_bool(d, "value", &value) < 0 || pick_bool(d, "active_low", &active_low) < 0)
		return -1;
	s->direction = dir;
	s->edge = edge;
	s->bias = bias;
	s->drive = drive;
	s->event_clock = eclock;
	s->value = value;
	s->active_low = active_low;
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
