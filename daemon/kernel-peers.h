/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * kernel-peers.h - the connections of the kernel bus that are not the
 * daemon's: native peers (native/native-peer.h) that said HELLO on the
 * bus's endpoint themselves.
 *
 * The XML policy applies to what they exchange with classic clients as to
 * a client's messages, with the credentials the kernel gives for their
 * connection (CONN_INFO: the bus requires every connection to send them).
 * A peer is looked up once and kept with its policy snapshot; the snapshot
 * is made again after a reload, and peers that have gone are swept out
 * when the table has doubled since the last sweep (kdbus ids are never
 * reused, so a stale entry is only memory).  On the in-process core there
 * are none.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "compat/kdbus-client.h"
#include "daemon/client.h"

typedef struct Bus Bus;
typedef struct PolicySnapshot PolicySnapshot;
typedef struct KernelPeers KernelPeers;

/**
 * struct KernelPeer - one native peer
 * @id:		its kdbus connection id
 * @name:	its unique name, ":1.N"
 * @uid:	its effective uid, -1 when the kernel gave none
 * @creds:	its credentials, as GetConnectionCredentials reports them
 *		(creds.uid is @uid; groups are the kernel's AUXGROUPS)
 * @loginfo:	dbus-daemon's loginfo of it: uid=U pid=P comm="..."
 * @policy:	the XML policy for it
 */
typedef struct KernelPeer {
	uint64_t id;
	char name[24];
	uid_t uid;
	ClientCreds creds;
	char *loginfo;
	PolicySnapshot *policy;
	uint64_t policy_generation;
} KernelPeer;

KernelPeers *kernel_peers_free(KernelPeers *ps);


/**
 * kernel_peer_get() - the native peer with connection @id, asked through
 * @via when first seen
 *
 * Return: the peer, or NULL when @id is a client's, the daemon's own, gone,
 * or the bus is the in-process core.
 */
const KernelPeer *kernel_peer_get(Bus *bus, KdbusConn *via, uint64_t id);
