/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * bus-hooks.h - the ways up the layers of daemon/.
 *
 * The modules below bus.c call down only (tools/daemon-graph.py shows the
 * graph of their calls, without a circle).  Where a lower module must have
 * an upper one act, it calls through this table, which bus.c, the top,
 * fills in (Bus.hooks), so that every way up is listed in one place:
 *  - a client's I/O (client-io.c) hands what it read to SASL and to the
 *    send pipeline, and what the core holds for the client to the receive
 *    pipeline, and closes the client when its socket fails;
 *  - a client's teardown (client.c) tells the modules above it that keep
 *    something of the client, and the bus that one is gone;
 *  - the service registry has the bus apply the core's limits again, and
 *    the driver's ReloadConfig has it reload.
 */

#include <stddef.h>
#include <stdint.h>

#include "daemon/client-internal.h"

typedef struct BusHooks {
	/* client-io.c */
	void (*nonce_accepted)(Client *c);		/* client.c: on to SASL */
	int (*auth_step)(Client *c);			/* client.c: SASL read what came */
	Dispatch (*dispatch)(Client *c, uint8_t *msg, size_t len);	/* forward.c */
	int (*deliver)(Client *c, uint64_t offset);	/* deliver.c: a slice of @c's pool */
	void (*close)(Client *c, const char *reason);	/* client.c */

	/* client.c */
	void (*client_forget)(Client *c);	/* what the driver, the monitors, the
						 * call overflow and forward.c keep of @c goes */
	void (*client_registered)(Bus *bus);	/* one connection less before Hello */
	void (*client_gone)(Bus *bus);		/* a client was freed */

	/* service-registry.c: the activators' reserve of core connections grew */
	int (*apply_core_limits)(Bus *bus);
	/* driver.c: ReloadConfig */
	int (*reload)(Bus *bus, char **ret_error);
} BusHooks;
