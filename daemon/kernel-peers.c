/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kernel-peers.c - the native peers of the kernel bus (kernel-peers.h)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-login.h>

#include "compat/kdbus-client.h"
#include "compat/message.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/kernel-peers.h"
#include "daemon/log.h"
#include "policy/policy.h"
#include "util/idmap.h"
#include "util/macro.h"

struct KernelPeers {
	IdMap by_id;		/* id → KernelPeer */
	size_t swept_at;	/* how many there were after the last sweep */
};

static void kernel_peer_set_policy(Bus *bus, KernelPeer *p, PolicySnapshot *s) {
	bus_policy_swap_snapshot(bus, &p->policy, s);
}

static void kernel_peer_free(Bus *bus, KernelPeer *p) {
	if (!p)
		return;
	kernel_peer_set_policy(bus, p, NULL);
	free(p->creds.groups);
	free(p->creds.label);
	free(p->loginfo);
	free(p);
}

KernelPeers *kernel_peers_free(KernelPeers *ps) {
	if (!ps)
		return NULL;
	/* (the bus is going: its counters do not matter) */
	for (size_t i = 0; ps->by_id.mask && i <= ps->by_id.mask; i++) {
		KernelPeer *p = ps->by_id.entries[i].value;
		if (ps->by_id.entries[i].key && p) {
			policy_snapshot_free(p->policy);
			free(p->creds.groups);
			free(p->creds.label);
			free(p->loginfo);
			free(p);
		}
	}
	idmap_done(&ps->by_id);
	free(ps);
	return NULL;
}

static int at_console(uid_t uid, void *userdata) {
	return sd_uid_get_seats(uid, 0, NULL) > 0;
}

/* the snapshot of the bus's policy for @p: its uid's groups from the user
 * database, as for a client */
static int kernel_peer_snapshot(Bus *bus, KernelPeer *p) {
	const gid_t *gids = NULL;
	size_t n = 0;
	PolicySnapshot *s;
	int r;

	if (p->uid != (uid_t) -1 && bus_groups_for_uid(bus, p->uid, &gids, &n) < 0) {
		gids = NULL;
		n = 0;
	}
	PolicyIdentity id = { .uid = p->uid, .gids = gids, .n_gids = n, .is_at_console = at_console };
	r = policy_snapshot_new(&s, bus->policy.xml, &id);
	if (r < 0)
		return r;
	kernel_peer_set_policy(bus, p, s);
	p->policy_generation = bus->policy.generation;
	return 0;
}

/* CONN_INFO of @id: its credentials, into a new @p; -ENXIO when it has
 * gone, or is one of the daemon's own kind */
static int kernel_peer_read(KdbusConn *via, KernelPeer *p) {
	KclientConnCreds cc;
	int r;

	r = kclient_conn_creds(via, p->id, &cc);
	if (r < 0)
		return r;
	/* a connection of the daemon's own kind is none of ours */
	bool special = cc.flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR);
	if (cc.have_ids) {
		p->uid = p->creds.uid = cc.uid;
		p->creds.gid = cc.gid;
	}
	p->creds.pid = cc.pid;
	p->creds.have_pid = cc.have_pid;
	p->creds.groups = TAKE_PTR(cc.groups);
	p->creds.n_groups = cc.n_groups;
	p->creds.have_groups = p->creds.groups != NULL;
	p->creds.label = TAKE_PTR(cc.label);
	char uid[32] = "", pid[32] = "";
	if (p->uid != (uid_t) -1)
		snprintf(uid, sizeof(uid), "uid=%u ", (unsigned) p->uid);
	if (p->creds.have_pid)
		snprintf(pid, sizeof(pid), "pid=%d ", (int) p->creds.pid);
	if (asprintf(&p->loginfo, "%s%scomm=\"%s\"", uid, pid, cc.comm) < 0)
		p->loginfo = NULL;
	kclient_conn_creds_done(&cc);
	if (!p->loginfo)
		return -ENOMEM;
	return special ? -ENXIO : 0;
}

/* drop the peers that have gone (their CONN_INFO fails) */
static void kernel_peers_sweep(Bus *bus, KernelPeers *ps, KdbusConn *via) {
	_cleanup_free_ uint64_t *gone = calloc(ps->by_id.n + 1, sizeof(uint64_t));
	size_t n = 0;

	for (size_t i = 0; gone && ps->by_id.mask && i <= ps->by_id.mask; i++) {
		uint64_t id = ps->by_id.entries[i].key;

		if (id && !kclient_conn_exists(via, id))
			gone[n++] = id;
	}
	for (size_t i = 0; i < n; i++)
		kernel_peer_free(bus, idmap_remove(&ps->by_id, gone[i]));
	ps->swept_at = ps->by_id.n;
}

const KernelPeer *kernel_peer_get(Bus *bus, KdbusConn *via, uint64_t id) {
	KernelPeers *ps = bus->kernel_peers;
	KernelPeer *p;
	int r;

	if (!bus->on_kernel || !id || id == KDBUS_DST_ID_BROADCAST || client_registry_find(&bus->registry, id) ||
	    client_registry_is_internal(&bus->registry, id))
		return NULL;
	if (!ps) {
		ps = bus->kernel_peers = calloc(1, sizeof(*ps));
		if (!ps)
			return NULL;
	}
	p = idmap_get(&ps->by_id, id);
	if (p) {
		if (p->policy_generation != bus->policy.generation && kernel_peer_snapshot(bus, p) < 0)
			return NULL;
		return p;
	}
	if (ps->by_id.n >= 2 * ps->swept_at + 16)
		kernel_peers_sweep(bus, ps, via);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = id;
	p->uid = p->creds.uid = (uid_t) -1;
	message_unique_name_format(p->name, id);
	r = kernel_peer_read(via, p);
	if (r >= 0)
		r = kernel_peer_snapshot(bus, p);
	if (r >= 0)
		r = idmap_put(&ps->by_id, id, p);
	if (r < 0) {
		if (r != -ENXIO)
			log_debug("Cannot look up kernel connection %s: %s", p->name, strerror(-r));
		kernel_peer_free(bus, p);
		return NULL;
	}
	log_debug("Native peer %s (%s) on the kernel bus", p->name, p->loginfo);
	return p;
}
