/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * answered-calls.h - the calls the bus answered itself while the core
 * still tracks their reply, a part of Bus (Bus.answered).
 *
 * A failed activation answers each call queued on the activator with its
 * Spawn/TimedOut error and then drops the call, which makes the core
 * report the call's reply tracker dead (KCLIENT_REPLY_DEAD).  That
 * notification must not turn into a second (NoReply) error: the service
 * registry notes each call it answered here, and the client's handling of
 * the notification (client-notify.c) consumes the note.  Notes older than
 * two minutes, or past 4096, are dropped.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/list.h"

typedef struct AnsweredCalls {
	List list;		/* AnsweredCall, oldest first */
	size_t n;
} AnsweredCalls;

void answered_calls_init(AnsweredCalls *a);
void answered_calls_done(AnsweredCalls *a);

/* the bus answered the call @cookie of client @requester_id (when memory
 * is short, the note is not kept: the requester gets a NoReply too) */
void answered_calls_add(AnsweredCalls *a, uint64_t requester_id, uint64_t cookie);

/* answered_calls_consume() - a REPLY_DEAD for the call @cookie of client
 * @requester_id came.  Return: true if the bus answered that call already
 * (the note goes: the notification is to be ignored) */
bool answered_calls_consume(AnsweredCalls *a, uint64_t requester_id, uint64_t cookie);
