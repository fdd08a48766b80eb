/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * monitor-sink.h - the sink: a hidden connection of the bus that messages
 * the policy refused (and the driver's copies for eavesdroppers) are sent
 * from or to, so that monitors see them as dbus-daemon shows them; what
 * reaches it is dropped.  Bus.sink, made on first use.
 */

#include <stdint.h>

struct Bus;

/* the sink's id (made on first use), 0 if it cannot be made */
uint64_t monitor_sink_id(struct Bus *bus);
/* the sink goes (bus_free()) */
void monitor_sink_close(struct Bus *bus);
