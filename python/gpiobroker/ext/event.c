/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker.Event: one event of a Request or a Watch, a named tuple made from the
 * library's event as it arrives and queued on its object until read.
 */
#include "internal.h"

/* Beyond this many unread events per object, they are counted as lost. */
#define EVENT_QUEUE_MAX 65536

PyTypeObject gbpy_event_type;

static PyStructSequence_Field event_fields[] = {
	{ "type", "'edge', 'initial-state', 'chip-gone', 'revoked', 'broker-gone' or "
		  "'broker-restarted'" },
	{ "index", "index of the line in the request (edge, initial-state)" },
	{ "offset", "offset of the line on its chip" },
	{ "edge", "'rising' or 'falling' for an edge, else None" },
	{ "value", "the level: after the edge, or the initial state; else None" },
	{ "timestamp_ns", "the kernel's timestamp (the line's event clock)" },
	{ "seqno", "the broker's sequence number in this request or watch" },
	{ "line_seqno", "the kernel's sequence number on the line" },
	{ "global_seqno", "the kernel's sequence number in its chip request" },
	{ "lost", "events lost just before this one" },
	{ "detail", "chip-gone: the chip; revoked: the reason; broker-gone: 'the connection to "
		    "the bus was lost' if the link went; broker-restarted: 'made again after a "
		    "reconnection' after Broker.reconnect(); else None" },
	{ NULL, NULL },
};

static PyStructSequence_Desc event_desc = {
	"gpiobroker.Event", "An event of a request or a watch (a named tuple).", event_fields, 11,
};

int gbpy_event_type_init(void)
{
	if (gbpy_event_type.tp_name)
		return 0;
	return PyStructSequence_InitType2(&gbpy_event_type, &event_desc);
}

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
	case GPIOBROKER_EVENT_CHIP_BACK: return "chip-back";
	}
	return "unknown";
}

void gbpy_queue_event(ChildObject *c, const struct gpiobroker_event *ev)
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
	e = PyStructSequence_New(&gbpy_event_type);
	if (!e) {
		PyErr_WriteUnraisable((PyObject *)c);
		return;
	}
#define SET(i, v) PyStructSequence_SET_ITEM(e, i, v)
#define U64(v) PyLong_FromUnsignedLongLong(v)
	SET(0, PyUnicode_FromString(type_name(t)));
	SET(1, PyLong_FromUnsignedLong(gpiobroker_event_get_index(ev)));
	SET(2, PyLong_FromUnsignedLong(gpiobroker_event_get_offset(ev)));
	if (t != GPIOBROKER_EVENT_EDGE)
		SET(3, Py_NewRef(Py_None));
	else if (gpiobroker_event_get_edge(ev) == GPIOBROKER_EDGE_RISING)
		SET(3, PyUnicode_FromString("rising"));
	else
		SET(3, PyUnicode_FromString("falling"));
	SET(4, level ? PyBool_FromLong(gpiobroker_event_get_value(ev)) : Py_NewRef(Py_None));
	SET(5, U64(gpiobroker_event_get_timestamp_ns(ev)));
	SET(6, U64(gpiobroker_event_get_seqno(ev)));
	SET(7, U64(gpiobroker_event_get_line_seqno(ev)));
	SET(8, U64(gpiobroker_event_get_global_seqno(ev)));
	SET(9, U64(gpiobroker_event_get_lost(ev) + c->dropped));
	c->dropped = 0;
	SET(10, detail ? PyUnicode_FromString(detail) : Py_NewRef(Py_None));
#undef U64
#undef SET
	if (PyErr_Occurred() || PyList_Append(c->queue, e) < 0)
		PyErr_WriteUnraisable((PyObject *)c);
	Py_DECREF(e);
}
