/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * service-registry.h - bus activation, the kdbus way: the .service files of
 * the configured service directories, one activator connection in the core
 * per activatable name, starting services (systemd's activation requests
 * here, fork and exec in launcher.c), StartServiceByName and
 * ListActivatableNames.
 *
 * See service-registry.c ("DOC: activation") and doc/activation.md.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/wire.h"
#include "daemon/driver.h"

typedef struct Bus Bus;
typedef struct Client Client;
typedef struct ServiceRegistry ServiceRegistry;

/**
 * service_registry_load() - (re)read every service directory of the bus's
 * configuration
 * @bus:	the bus; bus->services is created on the first call
 *
 * Scans bus->config's servicedirs in order (the first file providing a
 * Name wins) and registers an activator connection in the core for every
 * new activatable name; names whose file disappeared lose their activator
 * (once an activation in progress is over).  Running services and the
 * messages queued for them are not touched.  Called at startup and by
 * every reload (ReloadConfig, SIGHUP, a change in a watched directory:
 * bus_reload()).
 *
 * Return: 0 or -ENOMEM.
 */
int service_registry_load(Bus *bus);

/**
 * service_registry_free() - close every activator and forget pending
 * activations (their services keep running).  Accepts bus->services == NULL.
 * @bus:	the bus
 */
void service_registry_free(Bus *bus);

/**
 * service_registry_set_address() - the address activated services get in
 * DBUS_STARTER_ADDRESS (and DBUS_SESSION_BUS_ADDRESS / DBUS_SYSTEM_BUS_ADDRESS)
 * @bus:	the bus
 * @address:	the ';'-separated addresses with guid, as --print-address
 *		prints them
 *
 * Without it, the address is built from the bus's listeners.
 *
 * Return: 0 or -ENOMEM.
 */
int service_registry_set_address(Bus *bus, const char *address);

/**
 * service_registry_list() - the activatable names (ListActivatableNames)
 * @bus:	the bus
 * @ret:	NULL-terminated list in dbus-daemon's order (that of its
 *		activation entries' hash table), owned by the caller
 * @ret_n:	its length
 *
 * Return: 0 or -ENOMEM.
 */
int service_registry_list(Bus *bus, char ***ret, size_t *ret_n);

/**
 * service_registry_rescan() - read the service directories again for a
 * name nobody holds, as dbus-daemon does before it answers ServiceUnknown
 * (activation_find_entry(): auto-start and StartServiceByName alike)
 * @bus:	the bus
 * @name:	the name
 *
 * As dbus-daemon's update_service_cache(): new files are read, files
 * modified since they were read are read again, and no name is forgotten
 * (a name whose file is gone goes when it is started).  Directories that
 * appeared since the configuration was loaded are read too.
 *
 * Return: whether @name is activatable now (an activator holds it).
 */
bool service_registry_rescan(Bus *bus, const char *name);

/**
 * service_registry_start() - StartServiceByName
 * @bus:	the bus
 * @caller:	the calling client
 * @name:	the name to start
 * @call:	the call's header (its serial, sender and flags are kept for
 *		the reply while the activation is pending)
 * @error:	set when the call fails at once
 *
 * On success the reply (DBUS_START_REPLY_SUCCESS, or the activation's
 * error) is sent later, once the service has taken the name or failed.
 *
 * Return: 0 (the reply will follow), 1 if the name is activatable and
 * has an owner already (DBUS_START_REPLY_ALREADY_RUNNING), -EPROTO with @error set
 * (ServiceUnknown, LimitsExceeded), -ENOMEM.
 */
int service_registry_start(Bus *bus, Client *caller, const char *name, const WireHeader *call, BusError *error);

/**
 * service_registry_forward_environment() - with systemd activation, pass an
 * UpdateActivationEnvironment call on to systemd as
 * org.freedesktop.systemd1.Manager.SetEnvironment (queued on the
 * org.freedesktop.systemd1 activator until systemd is on the bus)
 * @bus:	the bus
 * @h, @body:	the UpdateActivationEnvironment call (a{ss})
 */
void service_registry_forward_environment(Bus *bus, const WireHeader *h, const uint8_t *body);

/**
 * service_registry_activation_failure_raw() - systemd's
 * org.freedesktop.systemd1.Activator.ActivationFailure(s unit, s error_name,
 * s error_message) signal, the dbus1 bytes @msg of @len bytes that @sender
 * is about to send to the driver: fails the activations of that unit.
 * Ignored unless @sender owns org.freedesktop.systemd1 and is privileged.
 * Called from the client's send path, so that the errors reach monitors
 * before the signal does.
 */
void service_registry_activation_failure_raw(Bus *bus, Client *sender, const uint8_t *msg, size_t len);

/**
 * service_registry_before_send() - hook for the client's send path: a
 * message from @sender to the well-known @name (without NO_AUTO_START) is
 * about to be SENT
 * @bus:	the bus
 * @sender:	the sending client (for the log), or NULL
 * @name:	the destination
 *
 * With systemd activation, an activation that the message will trigger is
 * started now, so the ActivationRequest to systemd is sent before the
 * message itself: monitors see request then message, as with dbus-daemon.
 * Without systemd activation, or for a name that is owned, not
 * activatable or already activating, it does nothing (one lookup).
 */
void service_registry_before_send(Bus *bus, Client *sender, const char *name);

/**
 * service_registry_name_taken() - an activatable name was just taken: the
 * activation ends now ("Successfully activated service", the replies to
 * StartServiceByName), before the new owner's NameAcquired and the reply
 * to its RequestName, in dbus-daemon's order
 * @bus:	the bus
 */
void service_registry_name_taken(Bus *bus);

/**
 * service_registry_is_activatable() - whether @name has a .service file
 * (and so an activator in the core)
 */
bool service_registry_is_activatable(Bus *bus, const char *name);

/* the AppArmor label @name's .service file assumes its service will have
 * (AssumedAppArmorLabel=), or NULL */
const char *service_registry_assumed_apparmor_label(Bus *bus, const char *name);

