/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * bus-schedule.h - what runs after the loop's readable sockets were
 * served, a part of Bus (Bus.schedule): the clients with output to write
 * (the ready list), the clients whose input waits for the next poll (the
 * yielded list), and whether the driver's queue needs a dispatch.  The
 * modules below bus.c ask for a turn here; bus.c's two events take the
 * turns (bus_on_ready(), bus_on_yield()).  Also the bus's clock.
 */

#include <stdbool.h>
#include <stdint.h>

#include "daemon/client.h"
#include "util/list.h"
#include "util/macro.h"

struct Bus;
struct event;
struct event_base;

typedef struct BusSchedule {
	List ready;		/* clients with output to write (Client.ready_link) */
	List yielded;		/* clients whose input waits for the next poll (Client.yield_link) */
	List closed;		/* closed clients to release (Client.ready_link) */
	struct event *ev_ready;	/* runs the driver, then flushes the ready clients */
	struct event *ev_yield;	/* a zero timeout: resumes the yielded clients */
	bool driver_pending;	/* the driver's queue needs a dispatch */
} BusSchedule;

/* bus_schedule_init() - the two events, calling @on_ready and @on_yield
 * with @userdata */
int bus_schedule_init(BusSchedule *s, struct event_base *base, void (*on_ready)(int, short, void *),
		      void (*on_yield)(int, short, void *), void *userdata);
void bus_schedule_done(BusSchedule *s);

/* @c has output to write: flushed after this round of events */
void bus_schedule_ready(struct Bus *bus, Client *c);
/* the driver's queue needs a dispatch, after this round of events */
void bus_schedule_driver(struct Bus *bus);
/* @c's input waits until the loop has polled again */
void bus_schedule_yield(struct Bus *bus, Client *c);
/* @c was closed: its struct is released from the loop, at the end of the
 * next ready round or at the trim a departure arms, whichever comes first */
void bus_schedule_release(struct Bus *bus, Client *c);
/* @c is gone: off every list */
void bus_schedule_forget(Client *c);

/* for bus.c's events: the next ready (or closed) client, off its list,
 * or NULL; whether the driver was asked for (and no longer); the yielded
 * clients, moved to @into */
static inline Client *bus_schedule_next_of(List *list) {
	Client *c;

	if (list_is_empty(list))
		return NULL;
	c = list_first_entry(list, Client, ready_link);
	list_unlink(&c->ready_link);
	return c;
}

static inline Client *bus_schedule_next_ready(BusSchedule *s) {
	return bus_schedule_next_of(&s->ready);
}

static inline Client *bus_schedule_next_closed(BusSchedule *s) {
	return bus_schedule_next_of(&s->closed);
}

static inline bool bus_schedule_take_driver(BusSchedule *s) {
	bool pending = s->driver_pending;

	s->driver_pending = false;
	return pending;
}

void bus_schedule_take_yielded(BusSchedule *s, List *into);

/* the monotonic coarse clock, in ns (from the vDSO: no syscall) */
uint64_t bus_now_ns(void);
/* when a call sent now times out (reply_timeout), UINT64_MAX for never */
uint64_t bus_reply_deadline(struct Bus *bus);
