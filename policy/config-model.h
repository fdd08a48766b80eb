/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config-model.h - what the busconfig parser (config-parser.c) uses of the
 * configuration model (config.c) beyond policy/config.h; internal to
 * policy/.
 */
#pragma once

#include "policy/config.h"

#define DBUS_MAXIMUM_MESSAGE_UNIX_FDS 33554432u  /* DBUS_MAXIMUM_MESSAGE_LENGTH / 4 */

/* an empty configuration with @limits (NULL: dbus-daemon's defaults) */
BusConfig *config_new(const BusConfigLimits *limits);
void config_rule_done(BusConfigRule *r);
void config_policy_done(BusConfigPolicy *p);
/* add service directory @path (taken over) unless listed; flags are or'ed */
int config_add_servicedir(BusConfig *c, char *path, unsigned flags);
/* <associate own= context=> */
int config_set_association(BusConfig *c, const char *own, const char *context);
/* merge_included() of bus/config-parser.c: @child was included by @parent */
int config_merge_included(BusConfig *parent, BusConfig *child);
