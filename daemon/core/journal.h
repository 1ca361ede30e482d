/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file journal.h
 * @brief Broker objects as journal fields (shared/log.h's log_struct()).
 *
 * GPIO events carry GPIO_CHIP, GPIO_OFFSET and GPIO_LINE (alias, else kernel name)
 * per line, POLICY_ENTRY (file:line) of the entry covering it, REQUEST (object
 * path), REQUEST_LABEL, CALLER_UID and CALLER_NAME (unique bus name), and a
 * MESSAGE_ID from dbus/org.gpiodbroker1.h (a request's own fields:
 * request_journal()), so that they can be found with
 * "journalctl CALLER_UID=60002 MESSAGE_ID=...". Documented in gpiod-broker(8).
 */
#ifndef GB_JOURNAL_H
#define GB_JOURNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "forward.h"
#include "log.h"

/** MESSAGE_ID=@p id. */
void journal_message_id(struct gb_log_fields *f, const char *id);
/** One line's fields: chip, offset, alias or name, the policy entry. */
void journal_line(struct gb_log_fields *f, const Line *l);
/** The caller: uid and (if known) unique bus name. */
void journal_caller(struct gb_log_fields *f, uid_t uid, const char *name);
/**
 * @p uid (@p name) was refused @p what ("requesting", "using", "watching",
 * "reconfiguring") on line @p l (NULL: none in particular) of the request at
 * @p req_path, labelled @p req_label (NULL: none). @p reason gets the rejected policy's note (access_explain_denial())
 * and is logged with MESSAGE_ID access denied; then it is the error's text.
 */
void journal_denied(Broker *b, uid_t uid, const char *name, const char *what, const Line *l,
		    const char *req_path, const char *req_label, char *reason, size_t size);

#endif
