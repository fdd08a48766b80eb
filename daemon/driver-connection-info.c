/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver-connection-info.c - what the driver tells of a connection:
 * GetConnectionUnixUser, GetConnectionUnixProcessID,
 * GetConnectionCredentials, and the refusals of GetAdtAuditSessionData and
 * GetConnectionSELinuxSecurityContext; for a client from the credentials
 * it connected with, for a native peer of the kernel bus from what the
 * kernel gives, for the driver itself from this process.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/apparmor.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver-call.h"
#include "daemon/driver.h"
#include "daemon/kernel-peers.h"
#include "daemon/selinux.h"

int method_get_connection_unix_user(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;
	uint32_t uid;

	switch (call_get_peer_or_kernel_peer(call, "UID", &name, &peer, &kp)) {
	case FOUND_SELF:
		uid = getuid();
		break;
	case FOUND_PEER:
		if (!peer->is_unix)
			return call_fail(call, DBUS_ERR("Failed"), "Could not determine UID for '%s'", name);
		uid = peer->creds.uid;
		break;
	case FOUND_KERNEL_PEER:
		if (kp->uid == (uid_t) -1)
			return call_fail(call, DBUS_ERR("Failed"), "Could not determine UID for '%s'", name);
		uid = kp->uid;
		break;
	default:
		return -EPROTO;
	}
	return call_reply_args(call, "u", uid);
}

int method_get_connection_unix_process_id(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;
	const ClientCreds *creds;
	uint32_t pid;

	switch (call_get_peer_or_kernel_peer(call, "PID", &name, &peer, &kp)) {
	case FOUND_SELF:
		pid = getpid();
		break;
	case FOUND_PEER:
	case FOUND_KERNEL_PEER:
		creds = peer ? &peer->creds : &kp->creds;
		if (!creds->have_pid)
			return call_fail(call, DBUS_ERR("UnixProcessIdUnknown"), "Could not determine PID for '%s'", name);
		pid = creds->pid;
		break;
	default:
		return -EPROTO;
	}
	return call_reply_args(call, "u", pid);
}

int method_get_adt_audit_session_data(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;

	if (call_get_peer_or_kernel_peer(call, "audit session data", &name, &peer, &kp) == FOUND_ERROR)
		return -EPROTO;
	return call_fail(call, DBUS_ERR("AdtAuditDataUnknown"), "Could not determine audit session data for '%s'", name);
}

int method_get_connection_selinux_security_context(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;

	Found found = call_get_peer_or_kernel_peer(call, "security context", &name, &peer, &kp);
	_cleanup_free_ char *context = NULL;

	if (found == FOUND_ERROR)
		return -EPROTO;
	/* the bus's own context, or the connection's (SELinux enabled) */
	if (found == FOUND_SELF || found == FOUND_PEER)
		context = bus_selinux_context(found == FOUND_PEER ? peer : NULL);
	if (!context)
		return call_fail(call, DBUS_ERR("SELinuxSecurityContextUnknown"),
				 "Could not determine security context for '%s'", name);
	/* as dbus-daemon: the bytes, without a NUL */
	WireBuilder reply;
	int r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "y");
	for (const char *p = context; *p; p++)
		wire_builder_append_basic(&reply, 'y', p);
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

/* Ubuntu's dbus-daemon's (METHOD_APPARMOR): the AppArmor label, without
 * its mode, of a connection or of the bus */
int method_get_connection_apparmor_security_context(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;
	const AppArmorLabel *l = NULL;

	Found found = call_get_peer_or_kernel_peer(call, "security context", &name, &peer, &kp);
	if (found == FOUND_ERROR)
		return -EPROTO;
	if (bus_apparmor_enabled() && (found == FOUND_SELF || found == FOUND_PEER))
		l = bus_apparmor_label(found == FOUND_PEER ? peer : NULL);
	if (!l || !l->label)
		return call_fail(call, DBUS_ERR("AppArmorSecurityContextUnknown"),
				 "Could not determine security context for '%s'", name);
	return call_reply_args(call, "s", l->label);
}

int method_get_connection_credentials(DriverCall *call) {
	WireBuilder reply;
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;
	const ClientCreds *creds = NULL;
	uint32_t pid, uid;
	int r;
	bool have_pid, have_uid;

	switch (call_get_peer_or_kernel_peer(call, "credentials", &name, &peer, &kp)) {
	case FOUND_SELF:
		pid = getpid();
		uid = getuid();
		have_pid = have_uid = true;
		break;
	case FOUND_PEER:
		creds = peer->is_unix ? &peer->creds : NULL;
		pid = peer->creds.pid;
		uid = peer->creds.uid;
		have_pid = peer->creds.have_pid;
		have_uid = peer->is_unix;
		break;
	case FOUND_KERNEL_PEER:
		creds = kp->uid != (uid_t) -1 ? &kp->creds : NULL;
		pid = kp->creds.pid;
		uid = kp->uid;
		have_pid = kp->creds.have_pid;
		have_uid = kp->uid != (uid_t) -1;
		break;
	default:
		return -EPROTO;
	}

	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sv}");
	if (have_pid)
		asv_add_u32(&reply, "ProcessID", pid);
	if (have_uid)
		asv_add_u32(&reply, "UnixUserID", uid);
	if (creds) {
		uint32_t gids[257];
		int n = 0;
		gids[n++] = creds->gid;
		for (size_t i = 0; i < creds->n_groups && n < 257; i++) {
			bool dup = false;
			for (int k = 0; k < n; k++)
				dup = dup || gids[k] == creds->groups[i];
			if (!dup)
				gids[n++] = creds->groups[i];
		}
		/* dbus-daemon sorts the groups */
		for (int i = 1; i < n; i++)
			for (int k = i; k > 0 && gids[k - 1] > gids[k]; k--) {
				uint32_t t = gids[k];
				gids[k] = gids[k - 1];
				gids[k - 1] = t;
			}
		asv_add_fixed_array(&reply, "UnixGroupIDs", 'u', gids, (size_t) n);
	}
	const char *label = peer ? peer->creds.label : kp ? kp->creds.label : NULL;
	if (label)
		asv_add_fixed_array(&reply, "LinuxSecurityLabel", 'y', label, strlen(label) + 1);
	/* no ProcessFD: dbus-daemon 1.14 has none (it came with 1.15.8) */
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}
