/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * kdbus-test.h - the kdbus conformance suite: environment, assertions and
 * helpers (kdbus-util.c) in the manner of the kernel's selftests
 * (tools/testing/selftests/kdbus/kdbus-util.c).  Tests use only the public
 * API of kdbus/bus.h.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kdbus/bus.h"

enum {
	TEST_OK,
	TEST_SKIP,
	TEST_ERR,
};

#define POOL_SIZE (16ULL * 1024 * 1024)
#define BLOOM_SIZE 64
#define BLOOM_N_HASH 8

typedef struct Env {
	KdbusBackend backend;
	KdbusBus *bus;
	KdbusConn *conn;		/* a default ordinary connection */
	char name[64];
} Env;

#define ASSERT_RETURN(cond)                                                         \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "# %s:%d: %s: assertion failed: %s\n",      \
				__FILE__, __LINE__, __func__, #cond);               \
			return TEST_ERR;                                            \
		}                                                                   \
	} while (0)

#define ASSERT_EQ(a, b)                                                             \
	do {                                                                        \
		long long _a = (long long)(a), _b = (long long)(b);                 \
		if (_a != _b) {                                                     \
			fprintf(stderr, "# %s:%d: %s: %s == %lld, expected %s == %lld\n", \
				__FILE__, __LINE__, __func__, #a, _a, #b, _b);      \
			return TEST_ERR;                                            \
		}                                                                   \
	} while (0)

/* why the test returns TEST_SKIP, for the TAP line (reset before each test) */
extern const char *kt_skip_reason;

#define SKIP_BECAUSE(why)                                                           \
	do {                                                                        \
		kt_skip_reason = (why);                                             \
		return TEST_SKIP;                                                   \
	} while (0)

/* faked identities, limits, hooks and extensions of the in-process core */
#define USERSPACE_ONLY(env)                                                         \
	do {                                                                        \
		if ((env)->backend != KDBUS_BACKEND_USERSPACE)                      \
			SKIP_BECAUSE("needs the userspace backend");                \
	} while (0)

/* ---- kdbus-util.c ---- */

extern unsigned kt_bus_counter;

int kt_bus_make(KdbusBackend backend, const char *name, uint64_t req_attach, KdbusBus **ret);

typedef struct KtHello {
	uint64_t flags;
	uint64_t attach_send;
	uint64_t attach_recv;
	uint64_t pool_size;
	const struct kdbus_creds *creds;
	const struct kdbus_pids *pids;
	const uint64_t *groups;
	size_t n_groups;
	const char *seclabel;
	const char *pid_comm;
	const char *description;
	bool keep_items;		/* do not FREE the HELLO items */
	int endpoint_fd;		/* ioctl: HELLO on this fd (kt_open_as()); taken */
	bool use_endpoint_fd;
	const char *names[8];		/* NAME items, each followed by its access */
	const struct kdbus_policy_access *access[8];
	size_t n_access[8];
	struct kdbus_cmd_hello out;
} KtHello;

int kt_hello_full(KdbusBus *bus, KtHello *h, KdbusConn **ret);
KdbusConn *kt_hello(Env *env, uint64_t flags);
/* a connection of @uid/@gid: on the userspace backend with faked
 * credentials; on the ioctl backend on a bus file that a process of that
 * user opened (a kernel connection has its opener's credentials, and a
 * privileged proxy's faked ones would not be bound by the policy) */
KdbusConn *kt_hello_uid(Env *env, uint64_t uid, uint64_t gid, uint64_t flags);
/* ioctl backend: @bus's endpoint file opened by a process of @uid/@gid
 * that keeps no capability but CAP_DAC_OVERRIDE (to reach the file) */
int kt_open_as(KdbusBus *bus, uint64_t uid, uint64_t gid);
int kt_open_as_groups(KdbusBus *bus, uint64_t uid, uint64_t gid, const uint64_t *groups, size_t n_groups);
/* the next kt_hello_full() of @h is @uid/@gid's, as kt_hello_uid() makes
 * it (faked credentials in @creds on the userspace backend, an fd opened
 * by that user on the ioctl backend): call it before each HELLO */
int kt_hello_as(Env *env, KtHello *h, struct kdbus_creds *creds, uint64_t uid, uint64_t gid);
int kt_hello_activator(Env *env, const char *name, const struct kdbus_policy_access *a,
		       size_t n, KdbusConn **ret);
int kt_hello_policy(Env *env, const char *name, const struct kdbus_policy_access *a,
		    size_t n, KdbusConn **ret);

typedef struct KtMsg {
	uint64_t dst_id;
	const char *dst_name;
	uint64_t cookie;
	uint64_t flags;
	uint64_t timeout_ns;
	uint64_t cookie_reply;
	int64_t priority;
	uint64_t payload_type;		/* 0: KDBUS_PAYLOAD_DBUS */
	const void *vec[4];
	size_t vec_size[4];
	const int *fds;
	size_t n_fds;
	const uint64_t *bloom;		/* BLOOM_SIZE bytes, or NULL for zeros */
	size_t bloom_size;		/* of the filter's data, 0: BLOOM_SIZE (at most 512) */
	uint64_t bloom_generation;
	bool no_bloom;			/* suppress the filter of a signal */
	const uint64_t *keys;		/* KDBUS_ITEM_MATCH_KEYS, if n_keys */
	size_t n_keys;
	uint64_t send_flags;
	int cancel_fd;			/* -1 */
	struct kdbus_msg_info reply;	/* out (SYNC_REPLY) */
	uint64_t return_flags;		/* out */
} KtMsg;

#define KT_MSG(...) ((KtMsg){ .cancel_fd = -1, __VA_ARGS__ })

int kt_send_msg(KdbusConn *conn, KtMsg *m);
int kt_send(KdbusConn *conn, uint64_t dst_id, uint64_t cookie);
int kt_send_name(KdbusConn *conn, const char *name, uint64_t cookie, uint64_t flags);
int kt_call(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, uint64_t timeout_ns);
int kt_reply(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, uint64_t cookie_reply);
int kt_broadcast(KdbusConn *conn, uint64_t cookie, const uint64_t *bloom);

int kt_recv(KdbusConn *conn, struct kdbus_msg **ret_msg, uint64_t *ret_offset);
int kt_recv_flags(KdbusConn *conn, uint64_t flags, int64_t priority, struct kdbus_cmd_recv *ret);
int kt_free(KdbusConn *conn, uint64_t offset);
int kt_recv_free(KdbusConn *conn, struct kdbus_msg *copy);
int kt_drain(KdbusConn *conn);
struct kdbus_item *kt_msg_item(struct kdbus_msg *msg, uint64_t type, unsigned nth);
struct kdbus_item *kt_info_item(struct kdbus_info *info, uint64_t type, unsigned nth);
const void *kt_msg_payload(KdbusConn *conn, struct kdbus_msg *msg, uint64_t *ret_size);

int kt_name_acquire(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags);
int kt_name_release(KdbusConn *conn, const char *name);

int kt_match_empty(KdbusConn *conn, uint64_t cookie);
int kt_match_id(KdbusConn *conn, uint64_t cookie, uint64_t type, uint64_t id);
int kt_match_name(KdbusConn *conn, uint64_t cookie, uint64_t type, uint64_t old_id,
		  uint64_t new_id, const char *name);
int kt_match_bloom(KdbusConn *conn, uint64_t cookie, const uint64_t *masks, size_t generations);
int kt_match_rule(KdbusConn *conn, uint64_t cookie, uint64_t flags, uint64_t type,
		  const void *data, size_t size);
int kt_match_remove(KdbusConn *conn, uint64_t cookie);
/* a match of a bloom mask (NULL: none) and one MATCH_KEYS item of @n keys */
int kt_match_keys(KdbusConn *conn, uint64_t cookie, const uint64_t *mask, const uint64_t *keys, size_t n);

int kt_conn_info(KdbusConn *conn, uint64_t id, const char *name, uint64_t attach,
		 struct kdbus_info **ret, uint64_t *ret_offset);
int kt_list(KdbusConn *conn, uint64_t flags, struct kdbus_info **ret, uint64_t *ret_size,
	    uint64_t *ret_offset);
int kt_byebye(KdbusConn *conn);
int kt_update_attach(KdbusConn *conn, uint64_t send, uint64_t recv);

uint64_t kt_now_ns(void);

/* ---- the tests ---- */

#define KT_TESTS(X) \
	X(bus_make_invalid_names) X(bus_make_duplicate) X(bus_make_bloom) \
	X(bus_make_negotiate) X(bus_make_unexpected_item) X(bus_creator_info) \
	X(hello_bad_size) X(hello_bad_flags) X(hello_bad_pool_size) \
	X(hello_required_attach_flags) X(hello_bad_attach_flags) X(hello_roles) \
	X(hello_unprivileged_roles) X(hello_items) X(hello_negotiate) \
	X(conn_info_by_id) X(conn_info_by_name) X(conn_info_errors) X(conn_info_metadata) \
	X(user_conn_limit) X(update_attach_flags) \
	X(byebye_busy) X(byebye_twice) X(byebye_commands) X(byebye_not_ordinary) \
	X(free_unknown) X(free_twice) X(free_peeked) X(recv_batch) X(recv_batch_fds_on_close) \
	X(send_recv_unicast) X(send_vecs_joined) X(send_invalid) X(send_unknown_dst) \
	X(send_by_name) X(send_eremchg) X(send_to_self) X(recv_empty) X(recv_fifo_order) \
	X(recv_priority) X(recv_peek) X(quota_max_msgs) X(quota_pool) \
	X(broadcast_dropped_count) X(broadcast_shared_payload) X(broadcast_own) \
	X(limits_payload_size) X(unicast_signal) X(signal_expects_no_reply) \
	X(reply_tracking) X(reply_unexpected) X(reply_twice) X(reply_emlink) \
	X(reply_dead_on_close) X(reply_dead_after_recv) X(reply_dead_on_drop) \
	X(timeout_notification) X(timeout_timer_callback) X(timeout_order) \
	X(wakeup_on_first_message) X(wakeup_outside_lock) \
	X(name_basic) X(name_invalid) X(name_conflict) X(name_release_other) \
	X(name_queue) X(name_queue_twice) X(name_replace) X(name_replace_drops) \
	X(name_limit) X(name_list) X(name_many) X(name_disconnect) \
	X(match_id_add_remove) X(match_name_notifications) X(match_replace) \
	X(match_remove_unknown) X(match_bloom) X(match_bloom_generations) \
	X(match_bloom_bad_size) X(match_limit) X(match_sender) X(match_many) X(match_bloom_index) \
	X(match_repeated_broadcast) X(match_keys) X(match_keys_many) \
	X(notify_kernel_message) \
	X(monitor_sees_unicast) X(monitor_invisible) X(monitor_restrictions) \
	X(monitor_unprivileged) \
	X(activator_handover) X(activator_reply_after_handover) X(activator_give_back) \
	X(activator_give_back_on_close) X(activator_no_auto_start) X(activator_not_addressable) \
	X(activator_duplicate) X(activator_peek_drop) X(activator_quota_on_move) \
	X(activator_close_reply_dead) \
	X(policy_secure_default) X(policy_own_world) X(policy_own_user_group) \
	X(policy_talk) X(policy_wildcard_any_depth) X(policy_wildcard_one_element) X(policy_exact_over_wildcard) \
	X(policy_duplicate) X(policy_invalid_names) X(policy_update) \
	X(policy_holder_disconnect) X(policy_broadcast_receiver_talk) \
	X(policy_reply_bypass) X(policy_activator_talk) X(policy_fallback) \
	X(fd_passing) X(fd_no_accept) X(fd_dropped_closed) X(fd_broadcast) X(fd_broadcast_enabled) X(reply_pending) \
	X(sync_reply) X(sync_timeout) X(sync_peer_close) X(sync_drop) X(sync_cancel) \
	X(sync_byebye_self) X(sync_reply_ecomm) X(sync_reply_fds) X(notify_quota) X(monitor_fds) X(activator_list) X(name_owner) \
	X(metadata_mask) X(metadata_proc_items) X(metadata_timestamp) X(metadata_names) \
	X(quota_user_share) X(quota_user_msgs) X(quota_broadcast_stuck_reader) X(quota_user_objects) X(quota_conn_share) \
	X(quota_inflight) X(quota_inflight_sender_gone) \
	X(chat) \
	X(kernel_pool_readonly) X(kernel_reply_timeout) X(kernel_reply_slot_until_received) \
	X(kernel_pool_survives_sender) \
	X(kernel_concurrent_senders) X(kernel_memfd_sealed) X(kernel_stress) \
	X(kernel_policy_unprivileged) X(kernel_conn_is_its_fd) X(kernel_metadata_at_send) \
	X(kernel_bus_close_under_load) X(kernel_last_ref_while_broadcasting) \
	X(security_cmd_size_read_once) X(security_info_reply_fault) X(security_unicast_bloom_size) \
	X(security_bus_name_userns) X(security_policy_id_range) X(security_copy_without_locks) \
	X(security_bus_make_bad_attach) X(security_io_uring_fd) X(security_rlimit_fsize) \
	X(security_user_quota) X(security_cmdline_without_locks) \
	X(endpoint_make) X(endpoint_see) X(endpoint_rights) X(endpoint_close)

#define KT_DECLARE(n) int test_##n(Env *env);
KT_TESTS(KT_DECLARE)
