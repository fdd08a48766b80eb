/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus-schedule.c - the ready and yielded lists and the driver's turn
 * (bus-schedule.h): the only writer of Bus.schedule.
 */
#include <errno.h>
#include <event2/event.h>
#include <time.h>

#include "daemon/bus-schedule.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "util/macro.h"

int bus_schedule_init(BusSchedule *s, struct event_base *base, void (*on_ready)(int, short, void *),
		      void (*on_yield)(int, short, void *), void *userdata) {
	*s = (BusSchedule) {};
	list_init(&s->ready);
	list_init(&s->yielded);
	list_init(&s->closed);
	s->ev_ready = event_new(base, -1, 0, on_ready, userdata);
	s->ev_yield = evtimer_new(base, on_yield, userdata);
	return s->ev_ready && s->ev_yield ? 0 : -ENOMEM;
}

void bus_schedule_done(BusSchedule *s) {
	if (s->ev_ready)
		event_free(s->ev_ready);
	s->ev_ready = NULL;
	if (s->ev_yield)
		event_free(s->ev_yield);
	s->ev_yield = NULL;
}

void bus_schedule_ready(Bus *bus, Client *c) {
	if (!list_is_linked(&c->ready_link))
		list_link_tail(&bus->schedule.ready, &c->ready_link);
	event_active(bus->schedule.ev_ready, EV_TIMEOUT, 0);
}

void bus_schedule_driver(Bus *bus) {
	bus->schedule.driver_pending = true;
	event_active(bus->schedule.ev_ready, EV_TIMEOUT, 0);
}

void bus_schedule_yield(Bus *bus, Client *c) {
	static const struct timeval zero = { 0, 0 };

	if (!list_is_linked(&c->yield_link))
		list_link_tail(&bus->schedule.yielded, &c->yield_link);
	if (!evtimer_pending(bus->schedule.ev_yield, NULL))
		evtimer_add(bus->schedule.ev_yield, &zero);
}

void bus_schedule_release(Bus *bus, Client *c) {
	/* no event of its own: the next ready round releases it, or the
	 * trim a client's departure arms (bus.c) */
	list_link_tail(&bus->schedule.closed, &c->ready_link);
}

void bus_schedule_forget(Client *c) {
	list_unlink(&c->ready_link);
	list_unlink(&c->yield_link);
}

void bus_schedule_take_yielded(BusSchedule *s, List *into) {
	list_splice_tail(into, &s->yielded);
}

uint64_t bus_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t bus_reply_deadline(Bus *bus) {
	if (bus->limits.reply_timeout < 0)
		return UINT64_MAX;
	/* the coarse clock is read from the vDSO: no syscall per message */
	return bus_now_ns() + (uint64_t) bus->limits.reply_timeout * 1000000ULL;
}
