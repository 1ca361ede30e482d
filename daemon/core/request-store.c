/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A request's part in restarts: its record in the state directory, its kernel fds in
 * the fd store, its event mark (request.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "client.h"
#include "log.h"
#include "request.h"
#include "state.h"

/* A record of @p req, borrowing its strings; free with free_record(). */
static int make_record(const Request *req, struct gb_record *rec)
{
	gb_record_init(rec);
	rec->id = req->id;
	rec->label = req->label;
	rec->uid = req->uid;
	rec->gid = req->gid;
	rec->groups = req->groups;
	rec->n_groups = req->n_groups;
	rec->persistent = req->persistent;
	rec->direct = req->direct;
	rec->owner = req->client ? req->client->name : "";
	rec->n_chips = req->n_chips;
	rec->n_lines = req->n_lines;
	rec->chips = calloc(req->n_chips, sizeof(*rec->chips));
	rec->lines = calloc(req->n_lines, sizeof(*rec->lines));
	if (!rec->chips || !rec->lines) {
		free(rec->chips);
		free(rec->lines);
		return -ENOMEM;
	}
	for (unsigned int k = 0; k < req->n_chips; k++) {
		const LineReq *lr = &req->chips[k].lreq;

		rec->chips[k].name = req->chips[k].chip_name;
		rec->chips[k].n_kern = lr->n_kern;
		memcpy(rec->chips[k].kern_offsets, lr->kern_offsets, lr->n_kern * sizeof(unsigned int));
	}
	for (unsigned int i = 0; i < req->n_lines; i++)
		rec->lines[i] = (struct gb_record_line){
			.chip = (unsigned)(req->lines[i].rc - req->chips),
			.offset = req->lines[i].offset,
			.config = req->lines[i].config,
			.safe_state = req->lines[i].safe_state,
		};
	return 0;
}

static void free_record(struct gb_record *rec)
{
	free(rec->chips);
	free(rec->lines);
}

void request_store(Request *req)
{
	struct gb_record rec;
	int fds[GB_MAX_LINES_PER_REQUEST];

	if (!req->broker->state.record)
		return;
	if (make_record(req, &rec) < 0) {
		log_warning("request %s: out of memory: it will not survive a restart", req->path);
		return;
	}
	for (unsigned int k = 0; k < req->n_chips; k++)
		fds[k] = lreq_fd(&req->chips[k].lreq);
	req->stored = state_save(&req->broker->state, &rec, fds, req->n_chips, req->path);
	free_record(&rec);
	if (req->stored) {
		bool existed;

		/* After the record: a record without a mark is only seqnos not known. */
		req->mark = state_mark_open(&req->broker->state, "request", req->id, &existed);
		if (req->mark)
			flow_take_mark(&req->flow, &req->mark->count, false);
	}
}

void request_save(Request *req)
{
	struct gb_record rec;

	if (!req->stored)
		return;
	if (make_record(req, &rec) < 0) {
		log_warning("request %s: out of memory: its state is not updated", req->path);
		return;
	}
	state_update(&req->broker->state, &rec, req->path);
	free_record(&rec);
}
