/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * answered-calls.c - the calls the bus answered itself (answered-calls.h):
 * the only writer of Bus.answered.
 */
#include <stdlib.h>
#include <time.h>

#include "daemon/answered-calls.h"
#include "util/macro.h"

#define ANSWERED_MAX_AGE_NS (120ULL * 1000000000ULL)
#define ANSWERED_MAX 4096

typedef struct AnsweredCall {
	List link;
	uint64_t requester_id;
	uint64_t cookie;
	uint64_t when_ns;
} AnsweredCall;

static uint64_t answered_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void answered_call_remove(AnsweredCalls *a, AnsweredCall *x) {
	list_unlink(&x->link);
	a->n--;
	free(x);
}

void answered_calls_init(AnsweredCalls *a) {
	list_init(&a->list);
	a->n = 0;
}

void answered_calls_done(AnsweredCalls *a) {
	while (!list_is_empty(&a->list))
		answered_call_remove(a, list_first_entry(&a->list, AnsweredCall, link));
}

/* the oldest notes go while they are too old or too many */
static void answered_calls_prune(AnsweredCalls *a, uint64_t now) {
	while (!list_is_empty(&a->list)) {
		AnsweredCall *x = list_first_entry(&a->list, AnsweredCall, link);
		if (a->n < ANSWERED_MAX && now - x->when_ns < ANSWERED_MAX_AGE_NS)
			break;
		answered_call_remove(a, x);
	}
}

void answered_calls_add(AnsweredCalls *a, uint64_t requester_id, uint64_t cookie) {
	uint64_t now = answered_now_ns();
	AnsweredCall *x;

	answered_calls_prune(a, now);
	x = calloc(1, sizeof(*x));
	if (!x)
		return;
	x->requester_id = requester_id;
	x->cookie = cookie;
	x->when_ns = now;
	list_link_tail(&a->list, &x->link);
	a->n++;
}

bool answered_calls_consume(AnsweredCalls *a, uint64_t requester_id, uint64_t cookie) {
	AnsweredCall *x;

	list_for_each_entry(x, &a->list, link)
		if (x->requester_id == requester_id && x->cookie == cookie) {
			answered_call_remove(a, x);
			return true;
		}
	return false;
}
