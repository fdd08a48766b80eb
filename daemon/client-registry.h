/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * client-registry.h - the bus's clients: every connection in the order it
 * came, the registered ones by kdbus id, the daemon's own connections
 * (which clients never see), and the counts the limits and Debug.Stats
 * read.  A part of Bus (Bus.registry); client-registry.c alone writes it,
 * at the steps of a client's life client.c takes.
 */

#include <stdbool.h>
#include <stdint.h>

#include "util/idmap.h"
#include "util/list.h"

typedef struct Client Client;
typedef struct KdbusConn KdbusConn;

typedef struct ClientRegistry {
	List all;		/* every client (Client.link), oldest first */
	IdMap by_id;		/* kdbus id → Client, from Hello; not monitors */
	IdMap internal;		/* kdbus id → KdbusConn, the daemon's own */
	unsigned n_incomplete;	/* connections before Hello */
	unsigned n_complete;	/* connections after Hello, monitors too */
	unsigned n_monitors;
	bool kernel_unprivileged;	/* kdbus.ko refused to let the bus stand for a client */
} ClientRegistry;

void client_registry_init(ClientRegistry *r);
/* the registry is freed; its clients must be gone */
void client_registry_done(ClientRegistry *r);

/* the registered client of kdbus id @id, NULL if none */
static inline Client *client_registry_find(const ClientRegistry *r, uint64_t id) {
	return idmap_get(&r->by_id, id);
}

/* a new connection, before Hello */
void client_registry_add(ClientRegistry *r, Client *c);
/* @c's Hello: it is found by its id from now on.  Return: 0, -ENOMEM */
int client_registry_register(ClientRegistry *r, Client *c);
/* @c, registered, leaves the map of ids (it becomes a monitor or goes) */
void client_registry_unregister(ClientRegistry *r, Client *c);
/* @c became a monitor */
void client_registry_count_monitor(ClientRegistry *r, Client *c);
/* @c is going: out of the counts (before the bus says what its departure
 * causes), then out of the registry */
void client_registry_uncount(ClientRegistry *r, Client *c);
void client_registry_remove(ClientRegistry *r, Client *c);

/* kdbus.ko refused to let the bus stand for a client (no CAP_IPC_OWNER):
 * from now on clients' connections carry the bus's own credentials */
void client_registry_set_kernel_unprivileged(ClientRegistry *r);

/* the daemon's own connections (the driver's, activators, monitors'
 * sinks): ids a client is never told about.  add: 0, -ENOMEM */
int client_registry_internal_add(ClientRegistry *r, KdbusConn *conn);
void client_registry_internal_remove(ClientRegistry *r, KdbusConn *conn);
bool client_registry_is_internal(const ClientRegistry *r, uint64_t id);
