/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kdbus-client.c - the kdbus commands of the daemon (kdbus-client.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "compat/kdbus-client.h"
#include "kdbus/item.h"
#include "util/macro.h"
#include "util/strutil.h"

_Static_assert(KCLIENT_CMD_MAX_SIZE == KDBUS_CMD_MAX_SIZE, "the core's command size limit");

#define NAME_MAX_LEN KDBUS_NAME_MAX_LEN

/* write an item of @type with @size bytes of payload at @it; returns the
 * next item */
static struct kdbus_item *item_put(struct kdbus_item *it, uint64_t type, const void *data, size_t size) {
	it->size = KDBUS_ITEM_HEADER_SIZE + size;
	it->type = type;
	if (size)
		memcpy(it->data, data, size);
	return KDBUS_ITEM_NEXT(it);
}

/* ---- the bus and its connections --------------------------------------- */

int kclient_bus_make(KdbusBackend backend, const char *name, uint64_t bloom_size, uint64_t bloom_n_hash,
		     uint64_t flags, KdbusBus **ret) {
	struct {
		struct kdbus_cmd cmd;
		uint8_t items[KDBUS_ITEM_SIZE(sizeof(struct kdbus_bloom_parameter)) + KDBUS_ITEM_SIZE(sizeof(uint64_t)) +
			      KDBUS_ITEM_SIZE(NAME_MAX_LEN + 1)];
	} mk = {};
	uint64_t required = KCLIENT_REQUIRED_METADATA;
	struct kdbus_bloom_parameter bloom = { .size = bloom_size, .n_hash = bloom_n_hash };
	size_t l = strlen(name);

	if (l > NAME_MAX_LEN)
		return -EINVAL;
	struct kdbus_item *it = item_put(mk.cmd.items, KDBUS_ITEM_BLOOM_PARAMETER, &bloom, sizeof(bloom));
	it = item_put(it, KDBUS_ITEM_ATTACH_FLAGS_SEND, &required, sizeof(required));
	it = item_put(it, KDBUS_ITEM_MAKE_NAME, name, l + 1);
	mk.cmd.size = (uint8_t *) it - (uint8_t *) &mk.cmd;
	mk.cmd.flags = flags;
	return kdbus_cmd_bus_make(backend, &mk.cmd, ret);
}

/* HELLO @cmd (its items filled in) with the flags every connection of the
 * daemon has */
static int hello(KdbusBus *bus, struct kdbus_cmd_hello *cmd, uint64_t flags, uint64_t pool_size,
		 KdbusConn **ret, uint64_t *ret_id) {
	KdbusConn *conn;
	int r;

	cmd->flags = flags;
	cmd->attach_flags_send = _KDBUS_ATTACH_ALL;
	cmd->attach_flags_recv = 0;
	cmd->pool_size = pool_size;
	r = kdbus_cmd_hello(bus, cmd, &conn);
	if (r < 0)
		return r;
	/* HELLO's answer in a new pool is at offset 0, and stays there: no
	 * message is ever at 0, which the readers of slices take as "none" */
	if (cmd->offset)
		kclient_free(conn, cmd->offset);
	*ret = conn;
	if (ret_id)
		*ret_id = cmd->id;
	return 0;
}

int kclient_hello(KdbusBus *bus, uint64_t flags, uint64_t pool_size, const KclientIdentity *identity,
		  KdbusConn **ret, uint64_t *ret_id) {
	struct {
		struct kdbus_cmd_hello cmd;
		uint8_t items[KDBUS_ITEM_SIZE(sizeof(struct kdbus_creds)) + KDBUS_ITEM_SIZE(sizeof(struct kdbus_pids)) +
			      KDBUS_ITEM_SIZE(256 * sizeof(uint64_t)) + KDBUS_ITEM_SIZE(1024)];
	} h = {};
	struct kdbus_item *it = h.cmd.items;

	if (identity) {
		const KclientIdentity *id = identity;

		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_creds);
		it->type = KDBUS_ITEM_CREDS;
		it->creds = (struct kdbus_creds) {
			.uid = id->uid, .euid = id->uid, .suid = id->uid, .fsuid = id->uid,
			.gid = id->gid, .egid = id->gid, .sgid = id->gid, .fsgid = id->gid,
		};
		it = KDBUS_ITEM_NEXT(it);
		if (id->have_pid) {
			it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_pids);
			it->type = KDBUS_ITEM_PIDS;
			it->pids = (struct kdbus_pids) { .pid = id->pid, .tid = id->pid };
			it = KDBUS_ITEM_NEXT(it);
		}
		if (id->n_groups > 0 && id->n_groups <= 256) {
			it->size = KDBUS_ITEM_HEADER_SIZE + id->n_groups * sizeof(uint64_t);
			it->type = KDBUS_ITEM_AUXGROUPS;
			for (size_t i = 0; i < id->n_groups; i++)
				it->data64[i] = id->groups[i];
			it = KDBUS_ITEM_NEXT(it);
		}
		if (id->label && strlen(id->label) < 1024)
			it = item_put(it, KDBUS_ITEM_SECLABEL, id->label, strlen(id->label) + 1);
	}
	h.cmd.size = (uint8_t *) it - (uint8_t *) &h.cmd;
	return hello(bus, &h.cmd, flags, pool_size, ret, ret_id);
}

int kclient_hello_activator_policy(KdbusBus *bus, const char *name, const struct kdbus_policy_access *access,
				   size_t n_access, uint64_t flags, uint64_t pool_size, KdbusConn **ret) {
	struct {
		struct kdbus_cmd_hello cmd;
		uint8_t items[KDBUS_ITEM_SIZE(NAME_MAX_LEN + 1) +
			      KCLIENT_ACTIVATOR_MAX_ACCESS * KDBUS_ITEM_SIZE(sizeof(struct kdbus_policy_access))];
	} h = {};
	size_t l = strlen(name);

	if (l > NAME_MAX_LEN || n_access > KCLIENT_ACTIVATOR_MAX_ACCESS)
		return -EINVAL;
	struct kdbus_item *it = item_put(h.cmd.items, KDBUS_ITEM_NAME, name, l + 1);
	for (size_t i = 0; i < n_access; i++)
		it = item_put(it, KDBUS_ITEM_POLICY_ACCESS, &access[i], sizeof(access[i]));
	h.cmd.size = (uint8_t *) it - (uint8_t *) &h.cmd;
	return hello(bus, &h.cmd, flags | KDBUS_HELLO_ACTIVATOR, pool_size, ret, NULL);
}

int kclient_hello_activator(KdbusBus *bus, const char *name, uint64_t flags, uint64_t pool_size,
			    KdbusConn **ret) {
	return kclient_hello_activator_policy(bus, name, NULL, 0, flags, pool_size, ret);
}

int kclient_hello_policy_holder(KdbusBus *bus, const void *items, size_t size, KdbusConn **ret) {
	_cleanup_free_ struct kdbus_cmd_hello *h = calloc(1, sizeof(*h) + size);

	if (!h)
		return -ENOMEM;
	h->size = sizeof(*h) + size;
	memcpy(h->items, items, size);
	/* (what the bus requires of every connection: KCLIENT_REQUIRED_METADATA) */
	return hello(bus, h, KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_HIDDEN_ID, 64 * 1024, ret, NULL);
}

int kclient_update_items(KdbusConn *conn, const void *items, size_t size) {
	_cleanup_free_ struct kdbus_cmd *cmd = calloc(1, sizeof(*cmd) + size);

	if (!cmd)
		return -ENOMEM;
	cmd->size = sizeof(*cmd) + size;
	memcpy(cmd->items, items, size);
	return kdbus_cmd_update(conn, cmd);
}

/* ---- connection info ----------------------------------------------------- */

int kclient_conn_creds(KdbusConn *via, uint64_t id, KclientConnCreds *ret) {
	struct kdbus_cmd_info q = {
		.size = sizeof(q),
		.id = id,
		.attach_flags = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | KDBUS_ATTACH_PID_COMM | KDBUS_ATTACH_AUXGROUPS |
				KDBUS_ATTACH_SECLABEL,
	};
	const struct kdbus_item *it;
	int r;

	*ret = (KclientConnCreds) {};
	r = kdbus_cmd_conn_info(via, &q);
	if (r < 0)
		return r;
	const struct kdbus_info *info = kdbus_pool_ptr(via, q.offset);
	ret->flags = info->flags;
	KDBUS_ITEM_FOREACH(it, info, items) {
		size_t payload = it->size - KDBUS_ITEM_HEADER_SIZE;

		if (it->type == KDBUS_ITEM_CREDS && payload >= sizeof(struct kdbus_creds)) {
			ret->have_ids = true;
			ret->uid = (uid_t) it->creds.euid;
			ret->gid = (gid_t) it->creds.egid;
		} else if (it->type == KDBUS_ITEM_PIDS && payload >= sizeof(struct kdbus_pids)) {
			ret->pid = (pid_t) it->pids.pid;
			ret->have_pid = ret->pid > 0;
		} else if (it->type == KDBUS_ITEM_PID_COMM && payload > 0) {
			snprintf(ret->comm, sizeof(ret->comm), "%.*s", (int) payload, it->str);
		} else if (it->type == KDBUS_ITEM_AUXGROUPS && !ret->groups && payload / 8 > 0) {
			ret->groups = calloc(payload / 8, sizeof(gid_t));
			for (size_t i = 0; ret->groups && i < payload / 8; i++)
				ret->groups[ret->n_groups++] = (gid_t) it->data64[i];
		} else if (it->type == KDBUS_ITEM_SECLABEL && payload > 1 && !ret->label) {
			ret->label = strndup(it->str, payload - 1);
		}
	}
	kclient_free(via, q.offset);
	return 0;
}

void kclient_conn_creds_done(KclientConnCreds *c) {
	free(c->groups);
	free(c->label);
	*c = (KclientConnCreds) {};
}

bool kclient_conn_exists(KdbusConn *via, uint64_t id) {
	struct kdbus_cmd_info q = { .size = sizeof(q), .id = id };

	if (kdbus_cmd_conn_info(via, &q) < 0)
		return false;
	kclient_free(via, q.offset);
	return true;
}

/* ---- sending ------------------------------------------------------------ */

int kclient_send_bytes(KdbusConn *conn, uint64_t dst_id, const char *dst_name, uint64_t cookie,
		       uint64_t cookie_reply, const void *msg, size_t len, const int *fds, size_t n_fds) {
	struct {
		struct kdbus_msg msg;
		uint8_t items[KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec)) + KDBUS_ITEM_SIZE(NAME_MAX_LEN + 1) +
			      KDBUS_ITEM_SIZE(KCLIENT_SEND_MAX_FDS * sizeof(int))];
	} km;
	struct kdbus_vec vec = { .address = (uintptr_t) msg, .size = len };
	size_t l = dst_name ? strlen(dst_name) : 0;

	if (l > NAME_MAX_LEN || n_fds > KCLIENT_SEND_MAX_FDS)
		return -EINVAL;
	memset(&km.msg, 0, sizeof(km.msg));
	km.msg.payload_type = KDBUS_PAYLOAD_DBUS;
	km.msg.dst_id = dst_id;
	km.msg.cookie = cookie;
	km.msg.cookie_reply = cookie_reply;
	struct kdbus_item *it = item_put(km.msg.items, KDBUS_ITEM_PAYLOAD_VEC, &vec, sizeof(vec));
	if (dst_name)
		it = item_put(it, KDBUS_ITEM_DST_NAME, dst_name, l + 1);
	if (n_fds)
		it = item_put(it, KDBUS_ITEM_FDS, fds, n_fds * sizeof(int));
	km.msg.size = (uint8_t *) it - (uint8_t *) &km.msg;

	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) &km.msg };
	return kdbus_cmd_send(conn, &cmd);
}

/* ---- names -------------------------------------------------------------- */

static int name_cmd(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags, bool acquire) {
	struct {
		struct kdbus_cmd cmd;
		uint8_t items[KDBUS_ITEM_SIZE(NAME_MAX_LEN + 1)];
	} q = {};
	size_t l = strlen(name);
	int r;

	if (l > NAME_MAX_LEN)
		return -EINVAL;
	struct kdbus_item *it = item_put(q.cmd.items, KDBUS_ITEM_NAME, name, l + 1);
	q.cmd.size = (uint8_t *) it - (uint8_t *) &q.cmd;
	q.cmd.flags = flags;
	r = acquire ? kdbus_cmd_name_acquire(conn, &q.cmd) : kdbus_cmd_name_release(conn, &q.cmd);
	if (ret_flags)
		*ret_flags = q.cmd.return_flags;
	return r;
}

int kclient_name_acquire(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags) {
	return name_cmd(conn, name, flags, ret_flags, true);
}

int kclient_name_release(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags) {
	return name_cmd(conn, name, flags, ret_flags, false);
}

int kclient_name_owner(KdbusConn *via, const char *name, uint64_t *ret_id) {
	uint64_t id, flags;

	if (!via || kdbus_name_owner(via, name, &id, &flags) < 0)
		return -ESRCH;
	*ret_id = (flags & KDBUS_HELLO_ACTIVATOR) ? 0 : id;
	return 0;
}

int kclient_info_names(const struct kdbus_info *info, uint64_t skip_flags, KclientNameFn fn, void *userdata) {
	const struct kdbus_item *it;
	int r;

	KDBUS_ITEM_FOREACH(it, info, items) {
		if (it->type != KDBUS_ITEM_OWNED_NAME || (it->name.flags & skip_flags))
			continue;
		r = fn(it->name.name, it->name.flags, userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * kdbus.ko's CONN_INFO names only what a connection owns, as the final ABI's
 * metadata does; the names it waits for come from LIST (every name of the
 * bus, so only when they are asked for)
 */
static int conn_names_listed(KdbusConn *via, uint64_t id, uint64_t skip_flags, KclientNameFn fn, void *userdata) {
	uint64_t flags = KDBUS_LIST_NAMES | KDBUS_LIST_QUEUED, off, size;
	const struct kdbus_info *info;
	int r;

	if (!(skip_flags & KDBUS_NAME_ACTIVATOR))
		flags |= KDBUS_LIST_ACTIVATORS;
	r = kclient_list(via, flags, NULL, &off, &size);
	if (r < 0)
		return r;
	KDBUS_FOREACH(info, (const struct kdbus_info *) kdbus_pool_ptr(via, off), size) {
		if (info->id != id)
			continue;
		r = kclient_info_names(info, skip_flags, fn, userdata);
		if (r < 0)
			break;
	}
	kclient_free(via, off);
	return r < 0 ? r : 0;
}

int kclient_conn_names(KdbusConn *via, uint64_t id, uint64_t skip_flags, KclientNameFn fn, void *userdata) {
	struct kdbus_cmd_info q = { .size = sizeof(q), .id = id, .attach_flags = KDBUS_ATTACH_NAMES };
	int r;

	if (!(skip_flags & KDBUS_NAME_IN_QUEUE) && kdbus_conn_get_fd(via) >= 0)
		return conn_names_listed(via, id, skip_flags, fn, userdata);
	r = kdbus_cmd_conn_info(via, &q);
	if (r < 0)
		return r;
	r = kclient_info_names(kdbus_pool_ptr(via, q.offset), skip_flags, fn, userdata);
	kclient_free(via, q.offset);
	return r;
}

typedef struct NameStrv {
	char ***strv;
	size_t *n;
} NameStrv;

static int name_strv_add(const char *name, uint64_t flags, void *userdata) {
	NameStrv *ns = userdata;

	(void) flags;
	return strv_push_dup(ns->strv, ns->n, name);
}

int kclient_conn_names_strv(KdbusConn *via, uint64_t id, uint64_t skip_flags, char ***strv, size_t *n) {
	NameStrv ns = { strv, n };

	return kclient_conn_names(via, id, skip_flags, name_strv_add, &ns);
}

int kclient_list(KdbusConn *conn, uint64_t flags, const char *name, uint64_t *ret_offset, uint64_t *ret_size) {
	struct {
		struct kdbus_cmd_list cmd;
		uint8_t items[KDBUS_ITEM_SIZE(NAME_MAX_LEN + 1)];
	} q = {};
	struct kdbus_item *it = q.cmd.items;
	int r;

	if (name) {
		size_t l = strlen(name);

		if (l > NAME_MAX_LEN)
			return -EINVAL;
		it = item_put(it, KDBUS_ITEM_NAME, name, l + 1);
	}
	q.cmd.size = (uint8_t *) it - (uint8_t *) &q.cmd;
	q.cmd.flags = flags;
	r = kdbus_cmd_list(conn, &q.cmd);
	if (r < 0)
		return r;
	*ret_offset = q.cmd.offset;
	*ret_size = q.cmd.list_size;
	return 0;
}

/* ---- receiving ----------------------------------------------------------- */

void kclient_free(KdbusConn *conn, uint64_t offset) {
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = offset };

	(void) kdbus_cmd_free(conn, &f);
}

int kclient_recv_peek(KdbusConn *conn, uint64_t *ret_offset) {
	struct kdbus_cmd_recv q = { .size = sizeof(q), .flags = KDBUS_RECV_PEEK };
	int r = kdbus_cmd_recv(conn, &q);

	if (r >= 0)
		*ret_offset = q.msg.offset;
	return r;
}

int kclient_recv_drop(KdbusConn *conn) {
	struct kdbus_cmd_recv q = { .size = sizeof(q), .flags = KDBUS_RECV_DROP };

	return kdbus_cmd_recv(conn, &q);
}

size_t kclient_recv_each(KdbusConn *conn, KclientMsgFn fn, void *userdata) {
	size_t n = 0;

	for (;;) {
		struct kdbus_cmd_recv recv = { .size = sizeof(recv) };
		int stop;

		if (kdbus_cmd_recv(conn, &recv) < 0)
			return n;
		n++;
		stop = fn(conn, kdbus_pool_ptr(conn, recv.msg.offset), userdata);
		kclient_free(conn, recv.msg.offset);
		if (stop)
			return n;
	}
}

/* ---- notifications and matches ------------------------------------------ */

/* MATCH_ADD of one item, built by the caller in @q */
typedef struct MatchCmd {
	struct kdbus_cmd_match cmd;
	uint8_t items[KDBUS_ITEM_SIZE(KCLIENT_BLOOM_MAX_SIZE) + KDBUS_ITEM_SIZE(KDBUS_MATCH_KEYS_MAX * sizeof(uint64_t))];
} MatchCmd;

static int match_add(KdbusConn *conn, MatchCmd *q, uint64_t cookie, const struct kdbus_item *end) {
	q->cmd.size = (const uint8_t *) end - (const uint8_t *) &q->cmd;
	q->cmd.cookie = cookie;
	return kdbus_cmd_match_add(conn, &q->cmd);
}

int kclient_match_name_change(KdbusConn *conn, uint64_t cookie, KclientNotifyType type, uint64_t old_id,
			      uint64_t new_id) {
	MatchCmd q = {};
	struct kdbus_notify_name_change nc = { .old_id.id = old_id, .new_id.id = new_id };

	if (type != KCLIENT_NAME_ADD && type != KCLIENT_NAME_REMOVE && type != KCLIENT_NAME_CHANGE)
		return -EINVAL;
	return match_add(conn, &q, cookie, item_put(q.cmd.items, type, &nc, sizeof(nc)));
}

int kclient_match_id_change(KdbusConn *conn, uint64_t cookie, KclientNotifyType type, uint64_t id) {
	MatchCmd q = {};
	struct kdbus_notify_id_change ic = { .id = id };

	if (type != KCLIENT_ID_ADD && type != KCLIENT_ID_REMOVE)
		return -EINVAL;
	return match_add(conn, &q, cookie, item_put(q.cmd.items, type, &ic, sizeof(ic)));
}

int kclient_match_bloom(KdbusConn *conn, uint64_t cookie, const uint64_t *mask, size_t bloom_size,
			const uint64_t *keys, size_t n_keys) {
	MatchCmd q = {};

	if (bloom_size > KCLIENT_BLOOM_MAX_SIZE || n_keys > KDBUS_MATCH_KEYS_MAX)
		return -EINVAL;
	struct kdbus_item *it = item_put(q.cmd.items, KDBUS_ITEM_BLOOM_MASK, mask, bloom_size);
	if (n_keys && kdbus_conn_is_userspace(conn))
		it = item_put(it, KDBUS_ITEM_MATCH_KEYS, keys, n_keys * sizeof(uint64_t));
	return match_add(conn, &q, cookie, it);
}

int kclient_match_remove(KdbusConn *conn, uint64_t cookie) {
	struct kdbus_cmd_match q = { .size = sizeof(q), .cookie = cookie };

	return kdbus_cmd_match_remove(conn, &q);
}
