/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * security.c - the security modules' decisions about a message, together
 * (see security.h).
 */
#include <stdlib.h>

#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/security.h"

void security_refusal_done(SecurityRefusal *r) {
	free(r->text);
	*r = (SecurityRefusal) {};
}

bool security_allows_send(const Client *sender, const Client *recipient, const WireHeader *h, bool requested_reply,
			  SecurityRefusal *ret) {
	AppArmorRefusal ar;

	*ret = (SecurityRefusal) {};
	if (bus_selinux_enabled() && !bus_selinux_allows_send(sender, recipient, h)) {
		/* (not logged: the access vector cache audited it) */
		ret->error_name = "org.freedesktop.DBus.Error.AccessDenied";
		ret->text = bus_selinux_refusal_text(sender, h, recipient);
		return false;
	}
	if (bus_apparmor_enabled() &&
	    !bus_apparmor_allows_send(sender, recipient, false, NULL, h, requested_reply, &ar)) {
		*ret = (SecurityRefusal) { .error_name = ar.error_name, .text = ar.text };
		return false;
	}
	return true;
}

bool security_allows_activation(const Client *sender, const char *assumed_label, const WireHeader *h,
				SecurityRefusal *ret) {
	AppArmorRefusal ar;

	*ret = (SecurityRefusal) {};
	if (!bus_apparmor_enabled())
		return true;
	if (!bus_apparmor_allows_send(sender, NULL, true, assumed_label, h, false, &ar)) {
		*ret = (SecurityRefusal) { .error_name = ar.error_name, .text = ar.text };
		return false;
	}
	return true;
}
