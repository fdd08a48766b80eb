/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "daemon/bus.h"
#include "daemon/call-overflow.h"
#include "daemon/kernel-peers.h"
#include "daemon/owed-replies.h"

#define OWED_SWEEP_MIN 64

/* drop the calls of callers that have left the bus */
static void owed_replies_sweep(OwedReplies *o, Bus *bus, KdbusConn *via) {
	IdMap *m = &o->calls;

	for (size_t i = 0; m->entries && i <= m->mask; i++) {
		uint64_t key = m->entries[i].key;
		if (key && !client_registry_find(&bus->registry, key >> 32) && !kclient_conn_exists(via, key >> 32)) {
			(void) idmap_remove(m, key);
			i--;	/* the backward shift may have moved an entry here */
		}
	}
	o->sweep_at = m->n * 2 > OWED_SWEEP_MIN ? m->n * 2 : OWED_SWEEP_MIN;
}

void owed_replies_add(OwedReplies *o, Bus *bus, KdbusConn *via, uint64_t caller, uint64_t cookie) {
	if (caller >> 32 || cookie >> 32)
		return;
	if (o->calls.n >= o->sweep_at)
		owed_replies_sweep(o, bus, via);
	(void) idmap_put(&o->calls, kernel_call_key(caller, (uint32_t) cookie), (void *) 1);
}

bool owed_replies_take(OwedReplies *o, uint64_t caller, uint32_t serial) {
	if (caller >> 32)
		return true;
	return idmap_remove(&o->calls, kernel_call_key(caller, serial)) != NULL;
}

void owed_replies_done(OwedReplies *o) {
	idmap_done(&o->calls);
	o->sweep_at = 0;
}
