/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * service-registry.h - activatable names: the .service files of the
 * configured service directories, the activation environment, and
 * StartServiceByName.
 */

#include <dbus/dbus.h>
#include <stddef.h>

typedef struct Bus Bus;
typedef struct Client Client;

/* (re)read every service directory of the bus's configuration */
int service_registry_load(Bus *bus);
void service_registry_free(Bus *bus);

/* the activatable names, sorted; caller frees the strv */
int service_registry_list(Bus *bus, char ***ret, size_t *ret_n);

/* StartServiceByName for a name nobody owns; errors go to @error */
int service_registry_start(Bus *bus, Client *caller, const char *name, DBusMessage *msg, DBusError *error);

int service_registry_setenv(Bus *bus, const char *key, const char *value);
void service_registry_forward_environment(Bus *bus, DBusMessage *msg);
void service_registry_activation_failure(Bus *bus, Client *sender, DBusMessage *msg);
