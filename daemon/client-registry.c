/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-registry.c - the bus's clients and their counts
 * (client-registry.h).
 */

#include "compat/kdbus-client.h"
#include "daemon/client-registry.h"
#include "daemon/client.h"

void client_registry_init(ClientRegistry *r) {
	*r = (ClientRegistry) {};
	list_init(&r->all);
}

void client_registry_done(ClientRegistry *r) {
	idmap_done(&r->by_id);
	idmap_done(&r->internal);
}

void client_registry_add(ClientRegistry *r, Client *c) {
	list_link_tail(&r->all, &c->link);
	r->n_incomplete++;
}

int client_registry_register(ClientRegistry *r, Client *c) {
	int k = idmap_put(&r->by_id, c->id, c);

	if (k < 0)
		return k;
	r->n_incomplete--;
	r->n_complete++;
	return 0;
}

void client_registry_unregister(ClientRegistry *r, Client *c) {
	if (c->id)
		(void) idmap_remove(&r->by_id, c->id);
}

void client_registry_count_monitor(ClientRegistry *r, Client *c) {
	(void) c;
	r->n_monitors++;
}

void client_registry_uncount(ClientRegistry *r, Client *c) {
	switch (c->state) {
	case CLIENT_NONCE:
	case CLIENT_AUTH:
	case CLIENT_AWAIT_HELLO:
		r->n_incomplete--;
		break;
	case CLIENT_MONITOR:
		r->n_monitors--;
		/* fall through */
	case CLIENT_ACTIVE:
		r->n_complete--;
		break;
	case CLIENT_CLOSED:
		break;
	}
}

void client_registry_remove(ClientRegistry *r, Client *c) {
	client_registry_unregister(r, c);
	list_unlink(&c->link);
}

int client_registry_internal_add(ClientRegistry *r, KdbusConn *conn) {
	return idmap_put(&r->internal, kdbus_conn_get_id(conn), conn);
}

void client_registry_internal_remove(ClientRegistry *r, KdbusConn *conn) {
	if (conn)
		(void) idmap_remove(&r->internal, kdbus_conn_get_id(conn));
}

bool client_registry_is_internal(const ClientRegistry *r, uint64_t id) {
	return idmap_get(&r->internal, id) != NULL;
}

void client_registry_set_kernel_unprivileged(ClientRegistry *r) {
	r->kernel_unprivileged = true;
}
