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
