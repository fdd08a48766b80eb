/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * client-internal.h - what the files of the client module (client.c,
 * client-io.c, deliver.c, forward.c, client-policy.c, client-match.c,
 * client-notify.c, client-header.c) share with each other and nobody else: limits, the outcome of a forward
 * step, and the functions one of them calls in another.
 */

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/message.h"
#include "compat/wire.h"
#include "daemon/client.h"
#include "policy/policy.h"

struct kdbus_msg;

#define CLIENT_READ_MIN (64 * 1024)
#define CLIENT_RBUF_KEEP (1024 * 1024)
#define CLIENT_READ_BUDGET (256 * 1024)
#define CLIENT_OUT_MAX 128		/* messages in flight to the socket */
#define CLIENT_OUT_BYTES_MAX (4 * 1024 * 1024)
#define CLIENT_MAX_FDS_PER_READ 253
#define CLIENT_IOV_MAX 64
#define CLIENT_RECV_BATCH 16		/* messages taken from the core at once */
/* on kdbus.ko, messages dispatched from one client before the event loop
 * polls again (client_yield_input()): well below the 256 messages the
 * kernel queues for a receiver from one user */
#define CLIENT_KERNEL_INPUT_BATCH 64
#define CLIENT_LIMIT_SLACK 256		/* client_limit_output() */
/* read buffers are core payload buffers (kdbus_payload_new()) with room in
 * front, so that a large message can be handed to the core in place: its
 * forwarded header is written just before its body (client_dispatch()) */
#define CLIENT_RBUF_SLACK 512
#define CLIENT_ADOPT_MIN (16 * 1024)	/* bodies this large go by reference */
/* a client sent a message this large gets a larger socket send buffer
 * (client_grow_sndbuf()) */
#define CLIENT_SNDBUF_GROW_MIN (256 * 1024)
#define CLIENT_SNDBUF_LARGE (1024 * 1024)	/* asked for; the kernel doubles it,
						 * up to twice net.core.wmem_max */

/* what became of a message, step by step */
typedef enum Dispatch {
	DISPATCH_NEXT,		/* on to the next step */
	DISPATCH_DONE,		/* forwarded, answered or dropped */
	DISPATCH_CLOSE,		/* the client is to be closed (forward.c's steps
				 * give the reason; only forward_end() acts) */
	DISPATCH_CLOSED,	/* the client was closed: touch nothing */
} Dispatch;

/* a refusal of client_policy_send(), reported once monitors saw the message */
typedef struct PolicyRefusal {
	bool receive;
	PolicyDecision d;
	const Client *recipient;	/* NULL: the driver, or a name being activated */
	bool reply;		/* a reply, refused knowing whether it was asked for */
	bool requested_reply;
} PolicyRefusal;

/* daemon/client-header.c */
/**
 * client_header_parse_shared() - wire_header_parse() for a message received
 * from the core.  The receivers of one broadcast get the same message, so
 * the result is kept for the next one: a header with the very same bytes
 * and message length parses the same.  Only the structure is checked
 * (wire_header_parse_trusted()): everything in the core (the userspace
 * backend) passed wire_header_parse() in the sender's client or was built
 * by the daemon.
 *
 * Return: 0, -EBADMSG.
 */
int client_header_parse_shared(Bus *bus, const uint8_t *data, size_t len, WireHeader *ret);
/* the same, and @ret_id: nonzero and equal for two headers that differ at
 * most in their serial (0 if the header was not cached) */
int client_header_parse_shared_id(Bus *bus, const uint8_t *data, size_t len, WireHeader *ret, uint64_t *ret_id);
/* a header parsed for the receivers of a payload: @h NULL if it does not
 * parse, @id as client_header_parse_shared_id()'s */
typedef struct ClientPayloadHeader {
	const WireHeader *h;
	uint64_t id;
} ClientPayloadHeader;
/* the header of the message of @len bytes at @data that the core delivers
 * as payload @pid (0: not known), parsed once for all the receivers of the
 * payload; it stays valid until the next call (it lives in the bus's cache:
 * returned by value, nothing of the caller's frame is written, which would
 * cost every receiver a stack canary) */
ClientPayloadHeader client_header_parse_payload(Bus *bus, uint64_t pid, const uint8_t *data, size_t len);

/* daemon/client.c */
int client_auth_step(Client *c);
int client_check_limits(Client *c, uint32_t serial);
/* @c's Hello: its kdbus connection, and it is active */
int client_register(Client *c);
/* nonce-tcp: the nonce was right, SASL follows */
void client_nonce_accepted(Client *c);

/* daemon/client-io.c */
void client_rbuf_free(Bus *bus, uint8_t *buf, void *handle);
/* the input (client-io.c writes it): the first @n fds of those read go to
 * @dst (a message takes them); the read buffer went to the core with a
 * message (client_dispatch()); the next message waits until the core says
 * what the client has in flight dropped (CLIENT_INPUT_HELD); SASL took
 * the first @n bytes; and all of it goes, with the client */
void client_input_take_fds(Client *c, int *dst, size_t n);
void client_input_given(Client *c);
void client_input_hold(Client *c);
void client_input_consumed(Client *c, size_t n);
void client_input_done(Client *c);
/* a client that receives a message this large (CLIENT_SNDBUF_GROW_MIN)
 * gets a larger socket send buffer, once */
void client_grow_sndbuf(Client *c);
void client_drop_output(Client *c);
int client_write(Client *c);
void client_update_events(Client *c);
int client_process_input(Client *c);
/* @c's socket events and its timer, armed for the auth_timeout (new), and
 * gone (free) */
int client_events_new(Client *c);
void client_events_free(Client *c);

/* daemon/deliver.c */
/**
 * deliver_slice() - the slice at @offset of @c's pool, RECVed from the
 * core: queued in @c's output ring, or given back to the core when @c does
 * not take it.  Nothing pushes to the ring between the reservation of its
 * slot and its commit (what the policy answers goes through the core).
 *
 * Return: 0, -ENOMEM (the slice is given back).
 */
int deliver_slice(Client *c, uint64_t offset);

/* daemon/forward.c */
Dispatch client_dispatch(Client *c, uint8_t *msg, size_t len);
/* what forward.c keeps of @c goes (the bloom filter of its last
 * broadcast, its calls pending on the kernel bus) */
void client_forward_done(Client *c);

/* daemon/client-policy.c */
/* what client-policy.c keeps of @c goes: its snapshot, its names */
void client_policy_done(Client *c);
int client_driver_refusal_error(Client *owner, Client *serial_from, const uint8_t *msg, size_t len,
				uint8_t **ret_msg, size_t *ret_len);
bool client_policy_security_delivery(Client *c, const WireHeader *h, Client *s);
void client_policy_broadcast_capture(Client *c, const WireHeader *h, const uint8_t *body);
void client_policy_refused(Client *c, const WireHeader *h, const PolicyRefusal *f);
uint64_t client_target_id(Client *c, const WireHeader *h, const MessageTarget *t);
bool client_policy_unrequested(Client *c, const WireHeader *h, uint64_t dst, PolicyRefusal *f);
bool client_policy_refused_reply(Client *c, const WireHeader *h, const MessageTarget *t, PolicyRefusal *f);
bool client_policy_send(Client *c, const WireHeader *h, const MessageTarget *t, bool to_driver,
			PolicyRefusal *ret_refusal);
bool client_handed_over_allowed(Client *c, const struct kdbus_msg *m, const ClientOut *o);
typedef struct KernelPeer KernelPeer;
bool client_policy_kernel_peer_unicast(Client *c, const struct kdbus_msg *m, const WireHeader *h,
				       const KernelPeer *kp);
bool client_policy_deliver_memo(Client *c, const WireHeader *h, uint64_t header_id, uint64_t sender_id,
				bool broadcast);

/* daemon/client-match.c */
uint64_t client_name_owner(Client *c, const char *name);
bool client_match_any_of(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
			 uint64_t dst_id, bool monitor, bool eavesdrop_only, const MatchRule **ret_rule);
bool client_match_broadcast(Client *c, const WireHeader *h, const uint8_t *body, uint64_t header_id,
			    uint64_t sender_id);
bool client_match_any(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
		      uint64_t dst_id, bool monitor);

/* daemon/client-notify.c */
void client_handle_kernel_msg(Client *c, struct kdbus_msg *m);
