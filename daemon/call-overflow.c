/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * call-overflow.c - trackers for calls past kdbus.ko's limit (see the
 * header).  Calls are keyed by caller and serial; a list ordered by
 * deadline feeds one timer.
 */
#include "daemon/call-overflow.h"

#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>

#include "daemon/bus.h"
#include "daemon/client.h"
#include "util/idmap.h"
#include "util/list.h"
#include "util/macro.h"

typedef struct OverflowCall {
	List link;		/* CallOverflow.by_deadline */
	uint64_t caller, callee;
	uint32_t serial;
	uint64_t deadline_ns;
} OverflowCall;

struct CallOverflow {
	Bus *bus;
	IdMap calls;		/* kernel_call_key() → OverflowCall */
	IdMap per_caller;	/* caller → its number of calls here */
	List by_deadline;
	struct event *timer;
};

static size_t caller_count(CallOverflow *o, uint64_t caller) {
	return (uintptr_t) idmap_get(&o->per_caller, caller);
}

static void caller_count_set(CallOverflow *o, uint64_t caller, size_t n) {
	if (n)
		(void) idmap_put(&o->per_caller, caller, (void *) (uintptr_t) n);	/* an existing key: no allocation */
	else
		(void) idmap_remove(&o->per_caller, caller);
}

static void call_forget(CallOverflow *o, OverflowCall *call) {
	(void) idmap_remove(&o->calls, kernel_call_key(call->caller, call->serial));
	caller_count_set(o, call->caller, caller_count(o, call->caller) - 1);
	list_unlink(&call->link);
	free(call);
}

/* the caller's NoReply, and the call forgotten */
static void call_fail(CallOverflow *o, OverflowCall *call, bool callee_gone) {
	Client *c = client_registry_find(&o->bus->registry, call->caller);
	uint32_t serial = call->serial;

	call_forget(o, call);
	if (!c)
		return;
	client_no_reply(c, serial, callee_gone);
	bus_schedule_ready(o->bus, c);	/* written out with the rest of its ring */
}

static void timer_arm(CallOverflow *o) {
	if (list_is_empty(&o->by_deadline)) {
		evtimer_del(o->timer);
		return;
	}
	OverflowCall *first = container_of(o->by_deadline.next, OverflowCall, link);
	uint64_t now = bus_now_ns();
	uint64_t wait = first->deadline_ns > now ? first->deadline_ns - now : 0;
	struct timeval tv = { .tv_sec = (time_t) (wait / 1000000000ULL),
			      .tv_usec = (suseconds_t) (wait % 1000000000ULL / 1000) + 1 };

	evtimer_add(o->timer, &tv);
}

static void on_timer(evutil_socket_t fd, short what, void *userdata) {
	CallOverflow *o = userdata;
	uint64_t now = bus_now_ns();

	(void) fd;
	(void) what;
	while (!list_is_empty(&o->by_deadline)) {
		OverflowCall *first = container_of(o->by_deadline.next, OverflowCall, link);
		if (first->deadline_ns > now)
			break;
		call_fail(o, first, false);
	}
	timer_arm(o);
}

int call_overflow_new(Bus *bus, CallOverflow **ret) {
	CallOverflow *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->bus = bus;
	list_init(&o->by_deadline);
	o->timer = evtimer_new(bus->base, on_timer, o);
	if (!o->timer) {
		free(o);
		return -ENOMEM;
	}
	*ret = o;
	return 0;
}

CallOverflow *call_overflow_free(CallOverflow *o) {
	if (!o)
		return NULL;
	while (!list_is_empty(&o->by_deadline))
		call_forget(o, container_of(o->by_deadline.next, OverflowCall, link));
	idmap_done(&o->calls);
	idmap_done(&o->per_caller);
	event_free(o->timer);
	free(o);
	return NULL;
}

bool call_overflow_has_room(CallOverflow *o, uint64_t caller) {
	uint64_t max = o->bus->limits.max_replies_per_connection;

	return max > KERNEL_MAX_CALLS_PENDING && caller_count(o, caller) < max - KERNEL_MAX_CALLS_PENDING;
}

int call_overflow_add(CallOverflow *o, uint64_t caller, uint64_t callee, uint32_t serial, uint64_t deadline_ns) {
	OverflowCall *call;
	List *at;
	int r;

	if (!caller || caller >> 32)
		return -ERANGE;
	call = calloc(1, sizeof(*call));
	if (!call)
		return -ENOMEM;
	*call = (OverflowCall) { .caller = caller, .callee = callee, .serial = serial, .deadline_ns = deadline_ns };
	/* a second call with the same serial replaces nothing: the first
	 * one's reply answers it, as libdbus would match it */
	if (idmap_get(&o->calls, kernel_call_key(caller, serial))) {
		free(call);
		return 0;
	}
	r = idmap_put(&o->calls, kernel_call_key(caller, serial), call);
	if (r < 0 || (r = idmap_put(&o->per_caller, caller, (void *) (uintptr_t) (caller_count(o, caller) + 1))) < 0) {
		(void) idmap_remove(&o->calls, kernel_call_key(caller, serial));
		free(call);
		return r;
	}
	/* deadlines come in order while reply_timeout stays */
	for (at = o->by_deadline.prev; at != &o->by_deadline; at = at->prev)
		if (container_of(at, OverflowCall, link)->deadline_ns <= deadline_ns)
			break;
	list_link_before(at->next, &call->link);
	if (o->by_deadline.next == &call->link)
		timer_arm(o);
	return 0;
}

bool call_overflow_take(CallOverflow *o, uint64_t caller, uint64_t callee, uint32_t serial) {
	OverflowCall *call;

	if (!o || caller >> 32)
		return false;
	call = idmap_get(&o->calls, kernel_call_key(caller, serial));
	if (!call || (call->callee && call->callee != callee))
		return false;
	call_forget(o, call);
	return true;
}

void call_overflow_peer_gone(CallOverflow *o, uint64_t id) {
	List dead = LIST_INIT(dead), *l, *next;

	if (!o || list_is_empty(&o->by_deadline))
		return;
	for (l = o->by_deadline.next; l != &o->by_deadline; l = next) {
		OverflowCall *call = container_of(l, OverflowCall, link);

		next = l->next;
		if (call->caller == id) {
			call_forget(o, call);
		} else if (call->callee == id) {
			list_unlink(&call->link);
			list_link_tail(&dead, &call->link);
		}
	}
	/* answered once the table is consistent again: a NoReply may close
	 * its caller, which comes back here */
	while (!list_is_empty(&dead))
		call_fail(o, container_of(dead.next, OverflowCall, link), true);
	timer_arm(o);
}

void kernel_calls_sent(KernelCalls *k, uint64_t cookie) {
	if (!k->cookies) {
		k->cookies = calloc(KERNEL_MAX_CALLS_PENDING, sizeof(uint64_t));
		if (!k->cookies)
			return;
	}
	if (k->n < KERNEL_MAX_CALLS_PENDING)
		k->cookies[k->n++] = cookie;
}

void kernel_calls_answered(KernelCalls *k, uint64_t cookie) {
	for (uint32_t i = 0; i < k->n; i++)
		if (k->cookies[i] == cookie) {
			k->cookies[i] = k->cookies[--k->n];
			return;
		}
}

void kernel_calls_done(KernelCalls *k) {
	free(k->cookies);
	*k = (KernelCalls) {};
}
