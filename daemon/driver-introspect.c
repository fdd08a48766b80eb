/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver-introspect.c - the driver described from its method table:
 * org.freedesktop.DBus.Introspectable (the XML at each path, and
 * driver_introspect_string() for --introspect) and
 * org.freedesktop.DBus.Properties (Features and Interfaces, read-only).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/apparmor.h"
#include "daemon/bus.h"
#include "daemon/driver-call.h"
#include "daemon/driver.h"
#include "daemon/selinux.h"
#include "util/macro.h"
#include "util/strutil.h"

/* a{sv}-free helpers for the two properties */
static void append_property_value(Driver *d, const char *name, WireBuilder *b) {
	wire_builder_open_container(b, 'a', "s");
	if (streq(name, "Features")) {
		wire_builder_append_basic(b, 's', "ActivatableServicesChanged");
		if (bus_apparmor_enabled())
			wire_builder_append_basic(b, 's', "AppArmor");
		wire_builder_append_basic(b, 's', "HeaderFiltering");
		if (bus_selinux_enabled())
			wire_builder_append_basic(b, 's', "SELinux");
		if (d->bus->systemd_activation)
			wire_builder_append_basic(b, 's', "SystemdActivation");
	} else {
		for (const DriverInterface *i = driver_interfaces; i->name; i++)
			if (!(i->flags & IFACE_UNINTERESTING))
				wire_builder_append_basic(b, 's', i->name);
	}
	wire_builder_close_container(b);
}

static const DriverInterface *find_interface(DriverCall *call, const char *name) {
	for (const DriverInterface *i = driver_interfaces; i->name; i++)
		if (streq(i->name, name))
			return i;
	call_fail(call, DBUS_ERR("UnknownInterface"), "Interface \"%s\" not found", name);
	return NULL;
}

static const DriverProperty *find_property(DriverCall *call, const DriverInterface *i, const char *name) {
	for (const DriverProperty *p = i->properties; p && p->name; p++)
		if (streq(p->name, name))
			return p;
	call_fail(call, DBUS_ERR("UnknownProperty"), "Property \"%s.%s\" not found", i->name, name);
	return NULL;
}

int method_properties_get(DriverCall *call) {
	const char *iface, *prop;
	const DriverInterface *i;
	const DriverProperty *p;
	WireBuilder reply;
	int r;

	if (call_read_args(call, "ss", &iface, &prop) < 0)
		return -EPROTO;
	if (!(i = find_interface(call, iface)) || !(p = find_property(call, i, prop)))
		return -EPROTO;
	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'v', p->type);
	append_property_value(call->driver, p->name, &reply);
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

int method_properties_get_all(DriverCall *call) {
	const char *iface;
	const DriverInterface *i;
	WireBuilder reply;
	int r;

	if (call_read_args(call, "s", &iface) < 0)
		return -EPROTO;
	if (!(i = find_interface(call, iface)))
		return -EPROTO;
	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sv}");
	for (const DriverProperty *p = i->properties; p && p->name; p++) {
		asv_open(&reply, p->name, p->type);
		append_property_value(call->driver, p->name, &reply);
		asv_close(&reply);
	}
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

int method_properties_set(DriverCall *call) {
	const char *iface, *prop;
	const DriverInterface *i;

	if (call_read_args(call, "ss", &iface, &prop) < 0)
		return -EPROTO;
	if (!(i = find_interface(call, iface)) || !find_property(call, i, prop))
		return -EPROTO;
	return call_fail(call, DBUS_ERR("PropertyReadOnly"), "Property '%s.%s' cannot be set", iface, prop);
}

/* one <arg> per complete type of @sig */
static void introspect_args(FILE *f, const char *sig, const char *dir) {
	size_t len = strlen(sig), n;

	for (; len > 0 && (n = wire_signature_next_len(sig, len)) > 0; sig += n, len -= n)
		fprintf(f, "      <arg direction=\"%s\" type=\"%.*s\"/>\n", dir, (int) n, sig);
}

/* the introspection XML of the driver at @path */
static char *driver_introspect_at(const char *path) {
	bool canonical = path && streq(path, DRIVER_PATH);
	char *xml = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&xml, &len);

	if (!f)
		return NULL;
	fputs(DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE "<node>\n", f);
	for (const DriverInterface *i = driver_interfaces; i->name; i++) {
		if (!canonical && !(i->flags & IFACE_ANY_PATH))
			continue;
		fprintf(f, "  <interface name=\"%s\">\n", i->name);
		for (const DriverMethod *m = i->methods; m->name; m++) {
			if (m->flags & METHOD_APPARMOR)
				continue;
			fprintf(f, "    <method name=\"%s\">\n", m->name);
			introspect_args(f, m->in, "in");
			introspect_args(f, m->out, "out");
			fputs("    </method>\n", f);
		}
		for (const DriverProperty *p = i->properties; p && p->name; p++)
			fprintf(f,
				"    <property name=\"%s\" type=\"%s\" access=\"read\">\n"
				"      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>\n"
				"    </property>\n",
				p->name, p->type);
		if (i->extra_xml)
			fputs(i->extra_xml, f);
		fputs("  </interface>\n", f);
	}
	if (path && streq(path, "/"))
		fputs("  <node name=\"org/freedesktop/DBus\"/>\n", f);
	else if (path && streq(path, "/org"))
		fputs("  <node name=\"freedesktop/DBus\"/>\n", f);
	else if (path && streq(path, "/org/freedesktop"))
		fputs("  <node name=\"DBus\"/>\n", f);
	fputs("</node>\n", f);
	if (fclose(f) != 0) {
		free(xml);
		return NULL;
	}
	return xml;
}

char *driver_introspect_string(void) {
	return driver_introspect_at(DRIVER_PATH);
}

int method_introspect(DriverCall *call) {
	_cleanup_free_ char *xml = driver_introspect_at(call->h->path.s);

	if (!xml)
		return -ENOMEM;
	return call_reply_args(call, "s", xml);
}
