/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * call-overflow.h - the calls a client has waiting for a reply beyond
 * kdbus.ko's own limit.
 *
 * The kernel keeps a reply tracker for at most KERNEL_MAX_CALLS_PENDING
 * calls per connection (the final ABI's KDBUS_CONN_MAX_REQUESTS_PENDING,
 * 128), where dbus-daemon's max_replies_per_connection is what the
 * configuration says (50000 on the session bus).  Past the kernel's
 * limit a call goes as a plain message, and this table is its tracker:
 * the callee's reply (which the kernel refuses with EBADSLT, having no
 * tracker) counts as requested when it answers a call here; the caller
 * is told NoReply when reply_timeout passes or the callee leaves, as the
 * kernel's REPLY_TIMEOUT and REPLY_DEAD would have.  The in-process core
 * has no such limit: the table stays empty there.
 */

#include <stdbool.h>
#include <stdint.h>

#define KERNEL_MAX_CALLS_PENDING 128

typedef struct Bus Bus;
typedef struct CallOverflow CallOverflow;

/* a caller's id (below 2^32, as every id the kernel gives out before
 * four billion connections) and the serial of its call: one key */
static inline uint64_t kernel_call_key(uint64_t caller, uint32_t serial) {
	return caller << 32 | serial;
}

/*
 * the calls a client has waiting in kdbus.ko's reply trackers, by cookie,
 * when max_replies_per_connection is below the kernel's own limit (so that
 * forward.c refuses the call past it as dbus-daemon would): a part of
 * Client (Client.kernel_calls), written only by these functions
 */
typedef struct KernelCalls {
	uint64_t *cookies;	/* KERNEL_MAX_CALLS_PENDING, allocated on first use */
	uint32_t n;
} KernelCalls;

/* the call @cookie was sent with a tracker (if memory is short it is not
 * counted: the kernel's own limit still holds) */
void kernel_calls_sent(KernelCalls *k, uint64_t cookie);
/* a reply to @cookie came */
void kernel_calls_answered(KernelCalls *k, uint64_t cookie);
void kernel_calls_done(KernelCalls *k);

int call_overflow_new(Bus *bus, CallOverflow **ret);
CallOverflow *call_overflow_free(CallOverflow *o);

/* call_overflow_has_room() - may @caller have one more call past the
 * kernel's trackers (max_replies_per_connection counts both) */
bool call_overflow_has_room(CallOverflow *o, uint64_t caller);

/*
 * call_overflow_add() - @caller's call @serial went to @callee (0: not
 * known, a name an activator holds) without a kernel tracker; it waits
 * until @deadline_ns (CLOCK_MONOTONIC, UINT64_MAX: no timeout).
 * Return: 0, -ENOMEM, -ERANGE (an id the table cannot key).
 */
int call_overflow_add(CallOverflow *o, uint64_t caller, uint64_t callee, uint32_t serial, uint64_t deadline_ns);

/* call_overflow_take() - @callee replies to @caller's call @serial: whether
 * it is a call of this table (then answered, and forgotten) */
bool call_overflow_take(CallOverflow *o, uint64_t caller, uint64_t callee, uint32_t serial);

/* call_overflow_peer_gone() - connection @id left: its own calls are
 * forgotten, and the callers of calls to it get NoReply */
void call_overflow_peer_gone(CallOverflow *o, uint64_t id);
