/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * monitor.h - org.freedesktop.DBus.Monitoring and eavesdropping.
 *
 * BecomeMonitor turns a client into a kdbus monitor connection: the core
 * gives it a copy of every message, and the client filters them through
 * the rules it passed.  Clients with eavesdrop=true match rules (the
 * pre-Monitoring way) are served by one shared internal monitor
 * connection, from which unicast messages to others are handed to each
 * eavesdropper whose rules match.
 */

#include <stddef.h>
#include <stdint.h>

typedef struct Bus Bus;
typedef struct Client Client;
typedef struct MatchRule MatchRule;

/* takes ownership of @rules (an array of @n rules, may be empty) */
int monitor_become(Bus *bus, Client *c, MatchRule **rules, size_t n);

int monitor_eavesdropper_ref(Bus *bus, Client *c);
void monitor_eavesdropper_unref(Bus *bus, Client *c);
void monitor_forget_client(Bus *bus, Client *c);
void monitor_free(Bus *bus);

/* a message from client @sender_id to the driver that the driver took
 * (@data: as the bus forwards it): copies for the eavesdroppers it is for */
void monitor_eavesdrop_driver_message(Bus *bus, Client *sender, const uint8_t *data, size_t len);
