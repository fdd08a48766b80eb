/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * owed-replies.h - on kdbus.ko, the calls a classic client was handed
 * that wait for its reply.
 *
 * dbus-daemon decides a reply that the policy refuses as a requested one
 * by whether the call was made: if it was, the sender is told
 * AccessDenied and the call is forgotten; if not, the reply is judged
 * again as an unrequested one, which the policy may let through.  The
 * in-process core answers that question (kdbus_reply_pending()); the
 * kernel keeps its reply trackers to itself, so busbridged notes each
 * call it hands a client on the kernel bus with EXPECT_REPLY, and forgets
 * it when the client answers.  As on dbus-daemon (reply_timeout), a call
 * is owed until it is answered or its caller leaves; callers that have
 * left are swept out when the table has doubled since the last sweep.
 */

#include <stdbool.h>
#include <stdint.h>

#include "compat/kdbus-client.h"
#include "util/idmap.h"

typedef struct Bus Bus;

typedef struct OwedReplies {
	IdMap calls;		/* kernel_call_key(caller, cookie) → (void *) 1 */
	size_t sweep_at;	/* sweep when this many are owed */
} OwedReplies;

/* owed_replies_add() - @caller's call @cookie waits for our reply (@via:
 * our connection, to ask the kernel who has left) */
void owed_replies_add(OwedReplies *o, Bus *bus, KdbusConn *via, uint64_t caller, uint64_t cookie);

/*
 * owed_replies_take() - a reply to @caller's call @serial: was it owed
 * (and is now forgotten)?  A caller id the table cannot key is taken as
 * owed, the kernel's answer then deciding.
 */
bool owed_replies_take(OwedReplies *o, uint64_t caller, uint32_t serial);

void owed_replies_done(OwedReplies *o);
