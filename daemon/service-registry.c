/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * service-registry.c - activatable names and the activation environment.
 */
#include <dbus/dbus.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/log.h"
#include "daemon/service-registry.h"
#include "policy/config.h"
#include "util/macro.h"

typedef struct ServiceRegistry {
	char **names;
	size_t n_names;
} ServiceRegistry;

static int strcmp_ptr(const void *a, const void *b) {
	return strcmp(*(char *const *) a, *(char *const *) b);
}

int service_registry_load(Bus *bus) {
	ServiceRegistry *s = bus->services;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		bus->services = s;
	}
	s->names = strv_free(s->names);
	s->n_names = 0;
	if (s->n_names)
		qsort(s->names, s->n_names, sizeof(char *), strcmp_ptr);
	return 0;
}

void service_registry_free(Bus *bus) {
	ServiceRegistry *s = bus->services;

	if (!s)
		return;
	strv_free(s->names);
	free(s);
	bus->services = NULL;
}

int service_registry_list(Bus *bus, char ***ret, size_t *ret_n) {
	ServiceRegistry *s = bus->services;
	size_t n = s ? s->n_names : 0;
	char **l = calloc(n + 1, sizeof(char *));

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(l[i] = strdup(s->names[i]))) {
			strv_free(l);
			return -ENOMEM;
		}
	*ret = l;
	*ret_n = n;
	return 0;
}

int service_registry_start(Bus *bus, Client *caller, const char *name, DBusMessage *msg, DBusError *error) {
	dbus_set_error(error, "org.freedesktop.DBus.Error.ServiceUnknown",
		       "The name %s was not provided by any .service files", name);
	return -EPROTO;
}

/* the environment given to activated services: KEY=VALUE strings */
int service_registry_setenv(Bus *bus, const char *key, const char *value) {
	size_t kl = strlen(key), n = 0;
	char *entry;

	if (asprintf(&entry, "%s=%s", key, value) < 0)
		return -ENOMEM;
	for (char **e = bus->activation_env; e && *e; e++, n++)
		if (strncmp(*e, key, kl) == 0 && (*e)[kl] == '=') {
			free(*e);
			*e = entry;
			return 0;
		}
	char **l = realloc(bus->activation_env, (n + 2) * sizeof(char *));
	if (!l) {
		free(entry);
		return -ENOMEM;
	}
	l[n] = entry;
	l[n + 1] = NULL;
	bus->activation_env = l;
	return 0;
}

void service_registry_forward_environment(Bus *bus, DBusMessage *msg) {
}

void service_registry_activation_failure(Bus *bus, Client *sender, DBusMessage *msg) {
}
