/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protocol.h - the names of the D-Bus protocol that every component uses:
 * the bus driver's name, path and interface, and the error names of
 * org.freedesktop.DBus.Error (the D-Bus specification; dbus-daemon's
 * dbus-protocol.h spells them DBUS_SERVICE_DBUS, DBUS_PATH_DBUS,
 * DBUS_INTERFACE_DBUS and DBUS_ERROR_*).  Lengths and sizes of the wire
 * format are compat/wire.h's.
 */
#pragma once

#define DRIVER_NAME "org.freedesktop.DBus"
#define DRIVER_PATH "/org/freedesktop/DBus"
#define DRIVER_INTERFACE "org.freedesktop.DBus"

/* DBUS_ERR("AccessDenied"): "org.freedesktop.DBus.Error.AccessDenied" */
#define DBUS_ERR(x) "org.freedesktop.DBus.Error." x

/*
 * The values of the driver's methods (the D-Bus specification; libdbus's
 * dbus-shared.h and dbus-protocol.h use the same names, so a file may
 * include both).
 */
#ifndef DBUS_NAME_FLAG_ALLOW_REPLACEMENT
/* RequestName flags */
#define DBUS_NAME_FLAG_ALLOW_REPLACEMENT 0x1
#define DBUS_NAME_FLAG_REPLACE_EXISTING 0x2
#define DBUS_NAME_FLAG_DO_NOT_QUEUE 0x4
/* RequestName replies */
#define DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER 1
#define DBUS_REQUEST_NAME_REPLY_IN_QUEUE 2
#define DBUS_REQUEST_NAME_REPLY_EXISTS 3
#define DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER 4
/* ReleaseName replies */
#define DBUS_RELEASE_NAME_REPLY_RELEASED 1
#define DBUS_RELEASE_NAME_REPLY_NON_EXISTENT 2
#define DBUS_RELEASE_NAME_REPLY_NOT_OWNER 3
/* StartServiceByName replies */
#define DBUS_START_REPLY_SUCCESS 1
#define DBUS_START_REPLY_ALREADY_RUNNING 2
#endif

#ifndef DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE
/* the DOCTYPE that introspection data starts with */
#define DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE                                  \
	"<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n" \
	"\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
#endif
