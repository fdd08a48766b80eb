/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * metadata.h - identity and metadata items of a connection
 *
 * DOC: metadata
 *
 * A KdbusMeta holds the identity of a connection (or of the bus creator)
 * as pre-built KDBUS_ITEM_* items, one per attach bit, so that attaching
 * metadata to a message is a series of memcpy()s.  TIMESTAMP and NAMES are
 * dynamic: they are written fresh for every message (TIMESTAMP carries the
 * message's global sequence number; clocks are only read when a receiver
 * asked for it).  The identity of a connection comes from the HELLO items
 * CREDS, PIDS, AUXGROUPS, SECLABEL and PID_COMM; missing ones are taken
 * from the calling process as captured at BUS_MAKE.  When HELLO carried
 * none of them, the remaining process items (TID_COMM, EXE, CMDLINE,
 * CGROUP, CAPS, AUDIT) are taken from the process too; otherwise they are
 * omitted, as the kernel does for faked credentials.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/kdbus.h"

#define KDBUS_META_BITS 14

typedef struct KdbusConn KdbusConn;

typedef struct KdbusMeta {
	uint64_t have;			/* static items present */
	struct kdbus_creds creds;
	struct kdbus_pids pids;
	uint64_t *groups;		/* auxiliary groups, for policy */
	size_t n_groups;
	uint8_t *items;			/* pre-built static items */
	uint32_t off[KDBUS_META_BITS];
	uint32_t len[KDBUS_META_BITS];	/* aligned size, 0 = absent */
} KdbusMeta;

/**
 * kdbus_meta_init_proc() - capture the calling process
 * @m:		uninitialised meta
 *
 * Return: 0 or -ENOMEM.
 */
int kdbus_meta_init_proc(KdbusMeta *m);

/**
 * kdbus_meta_init_hello() - identity of a new connection
 * @m:		uninitialised meta
 * @proc:	the process metadata to fill gaps from
 * @items:	HELLO items
 * @items_size:	their size
 *
 * Return: 0 or -ENOMEM.
 */
int kdbus_meta_init_hello(KdbusMeta *m, const KdbusMeta *proc,
			  const struct kdbus_item *items, size_t items_size);

/** kdbus_meta_deinit() - free what @m holds. */
void kdbus_meta_deinit(KdbusMeta *m);

/**
 * kdbus_meta_size() - bytes that kdbus_meta_write() produces
 * @m:		the metadata
 * @names:	connection whose owned names make KDBUS_ITEM_OWNED_NAME, or NULL
 * @mask:	attach flags wanted
 *
 * Return: the size in bytes.
 */
size_t kdbus_meta_size(const KdbusMeta *m, const KdbusConn *names, uint64_t mask);

/**
 * kdbus_meta_write() - emit metadata items in type order
 * @p:		8-aligned destination with kdbus_meta_size() bytes
 * @m:		the metadata
 * @names:	connection whose names to list, or NULL
 * @mask:	attach flags wanted
 * @ts:		the timestamp to emit for KDBUS_ATTACH_TIMESTAMP, or NULL
 *
 * Return: the address after the last item.
 */
void *kdbus_meta_write(void *p, const KdbusMeta *m, const KdbusConn *names,
		       uint64_t mask, const struct kdbus_timestamp *ts);

/* metadata every receiver may have, whatever the sender allows */
#define KDBUS_ATTACH_IMPLICIT	(KDBUS_ATTACH_TIMESTAMP | KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | \
				 KDBUS_ATTACH_AUXGROUPS | KDBUS_ATTACH_NAMES | KDBUS_ATTACH_CONN_DESCRIPTION)
/* what a process's /proc shows */
#define KDBUS_ATTACH_PROC	(KDBUS_ATTACH_TID_COMM | KDBUS_ATTACH_PID_COMM | KDBUS_ATTACH_EXE | \
				 KDBUS_ATTACH_CMDLINE | KDBUS_ATTACH_CGROUP | KDBUS_ATTACH_CAPS | \
				 KDBUS_ATTACH_SECLABEL | KDBUS_ATTACH_AUDIT)

/**
 * kdbus_meta_msg_mask() - the metadata items a message carries to @dst
 * @src:	the sender
 * @dst:	the receiver
 *
 * As the final kdbus: of what @dst receives (attach_recv), the basic
 * items always (KDBUS_ATTACH_IMPLICIT), the others when @src allows them
 * (attach_send) or when @dst could read them in @src's /proc anyway: it is
 * privileged or @src's user (its euid is @src's uid, euid and suid).  The
 * kernel module also asks that @src be visible in @dst's pid namespace;
 * here every connection is in the daemon's.
 *
 * Return: the KDBUS_ATTACH_* items.
 */
uint64_t kdbus_meta_msg_mask(const KdbusConn *src, const KdbusConn *dst);

/**
 * kdbus_meta_in_group() - whether @gid is the egid or an auxiliary group
 */
bool kdbus_meta_in_group(const KdbusMeta *m, uint64_t gid);
