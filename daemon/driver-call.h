/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * driver-call.h - what the files of the bus driver (driver.c,
 * driver-call.c, driver-messages.c, driver-hello.c, driver-names.c,
 * driver-connection-info.c, driver-introspect.c, driver-stats.c) share
 * with each other and nobody else: struct Driver, struct DriverCall and
 * the helpers every method answers with, the types of the method table,
 * and the functions one of them calls in another.  daemon/driver.h is the
 * driver's interface to the rest of the daemon.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/hash-order.h"
#include "compat/kdbus-client.h"
#include "compat/wire.h"
#include "daemon/apparmor.h"
#include "daemon/driver.h"
#include "daemon/kernel-peers.h"
#include "util/macro.h"

struct Driver {
	Bus *bus;
	KdbusConn *conn;
	uint64_t id;
	uint64_t serial;
	bool dispatching;
	/* dbus-daemon's name registry (see driver-names.c, "the order of ListNames") */
	HashOrder *names;
	char **names_to_check;	/* names of departed connections, maybe ownerless now */
	size_t n_names_to_check;
};

typedef struct DriverCall {
	Driver *driver;
	Client *caller;
	const WireHeader *h;	/* the call, validated by the caller's client */
	const uint8_t *body;
	bool canonical_path;
	BusError error;
	/* driver_shows_monitors_itself(): the call as forwarded, for them */
	const uint8_t *capture;
	size_t capture_len;
} DriverCall;

typedef enum MethodFlags {
	METHOD_ANY_PATH = 1 << 0,	/* available at every object path */
	METHOD_PRIVILEGED = 1 << 1,	/* caller's uid must be ours or 0 */
	/* Ubuntu's dbus-daemon's: there only while AppArmor mediates, and
	 * never introspected (Debian's and upstream's do not have it) */
	METHOD_APPARMOR = 1 << 2,
} MethodFlags;

typedef struct DriverMethod {
	const char *name;
	const char *in;
	const char *out;
	int (*handler)(DriverCall *call);
	MethodFlags flags;
} DriverMethod;

typedef struct DriverProperty {
	const char *name;
	const char *type;
} DriverProperty;

typedef enum InterfaceFlags {
	IFACE_ANY_PATH = 1 << 0,
	IFACE_UNINTERESTING = 1 << 1,	/* not in the Interfaces property */
} InterfaceFlags;

typedef struct DriverInterface {
	const char *name;
	const DriverMethod *methods;
	const char *extra_xml;
	InterfaceFlags flags;
	const DriverProperty *properties;
} DriverInterface;

/* the interfaces of org.freedesktop.DBus and their methods (driver.c) */
extern const DriverInterface driver_interfaces[];

/* ---- driver-call.c: answering a call ---------------------------------------- */

/* monitors see the call now (driver_shows_monitors_itself()) */
void call_capture(DriverCall *call);

/* a method return to @call, to be filled and given to call_reply() */
int call_reply_init(DriverCall *call, WireBuilder *b);
/* send @reply (consumed), unless the caller wants none */
int call_reply(DriverCall *call, WireBuilder *reply);
/* reply with the values of @types: s (const char *), u (uint32_t), b (bool) */
int call_reply_args(DriverCall *call, const char *types, ...);
/* set the error @call fails with (the last error set is the one sent);
 * returns -EPROTO */
int call_fail(DriverCall *call, const char *name, const char *fmt, ...) _printf_(3, 4);
/* read the call's leading arguments of @types: s (const char **), u (uint32_t *) */
int call_read_args(DriverCall *call, const char *types, ...);
/* AccessDenied for a caller that is neither root nor the bus's uid, logged */
int call_fail_unprivileged(DriverCall *call);
/* the error of an AppArmor refusal (its text is freed) */
int call_fail_apparmor(DriverCall *call, AppArmorRefusal *refusal);

/* a{sv} entries: the builder's errors are sticky, wire_builder_finish()
 * reports them */
void asv_open(WireBuilder *b, const char *key, const char *sig);
void asv_close(WireBuilder *b);
void asv_add_basic(WireBuilder *b, const char *key, char type, const void *v);
void asv_add_u32(WireBuilder *b, const char *key, uint32_t v);
void asv_add_fixed_array(WireBuilder *b, const char *key, char type, const void *v, size_t n);

/* ---- driver-messages.c: sending prebuilt bytes ------------------------------ */

/* SEND prebuilt dbus1 bytes from the driver to connection @dst_id */
int driver_send_raw_id(Driver *d, uint64_t dst_id, const uint8_t *msg, size_t len, uint64_t reply_cookie);
/* SEND prebuilt dbus1 bytes from the driver to @to */
int driver_send_raw(Driver *d, Client *to, const uint8_t *msg, size_t len, uint64_t reply_cookie);

/* ---- driver-hello.c ---------------------------------------------------------- */

/* a Hello the table would take (no arguments, our interface or none) */
bool driver_is_hello(const WireHeader *h);
/* the first Hello of @c, as it reaches the driver through the core */
int driver_hello(Driver *d, Client *c, const WireHeader *h);
int method_hello(DriverCall *call);

/* ---- driver-names.c ---------------------------------------------------------- */

/* the kdbus id owning @name (unique or well-known), 0 if none */
uint64_t driver_lookup_owner(Driver *d, const char *name);

typedef enum Found { FOUND_ERROR, FOUND_SELF, FOUND_PEER, FOUND_KERNEL_PEER } Found;

/* the single string argument of @call names a peer (or the driver) */
Found call_get_peer_or_kernel_peer(DriverCall *call, const char *what, const char **ret_name,
				   Client **ret_peer, const KernelPeer **ret_kernel_peer);
Found call_get_peer(DriverCall *call, const char *what, const char **ret_name, Client **ret_peer);

/* the order of ListNames: drop the noted names that have no owner left;
 * @c leaves the registry (disconnection, BecomeMonitor) */
void driver_names_settle(Driver *d);
void driver_names_leave(Driver *d, Client *c);

int method_request_name(DriverCall *call);
int method_release_name(DriverCall *call);
int method_start_service_by_name(DriverCall *call);
int method_name_has_owner(DriverCall *call);
int method_list_names(DriverCall *call);
int method_list_activatable_names(DriverCall *call);
int method_list_queued_owners(DriverCall *call);
int method_get_name_owner(DriverCall *call);

/* ---- driver-connection-info.c ------------------------------------------------ */

int method_get_connection_unix_user(DriverCall *call);
int method_get_connection_unix_process_id(DriverCall *call);
int method_get_adt_audit_session_data(DriverCall *call);
int method_get_connection_selinux_security_context(DriverCall *call);
int method_get_connection_apparmor_security_context(DriverCall *call);
int method_get_connection_credentials(DriverCall *call);

/* ---- driver-introspect.c ----------------------------------------------------- */

int method_introspect(DriverCall *call);
int method_properties_get(DriverCall *call);
int method_properties_get_all(DriverCall *call);
int method_properties_set(DriverCall *call);

/* ---- driver-stats.c ---------------------------------------------------------- */

/* the well-known names @c owns or waits for, as the core has them */
uint32_t stats_count_names(Driver *d, Client *c);

int method_get_stats(DriverCall *call);
int method_get_connection_stats(DriverCall *call);
int method_get_all_match_rules(DriverCall *call);
