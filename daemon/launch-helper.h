/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * launch-helper.h - the setuid launch helper of system bus activation
 * (daemon/launch-helper.c, installed as $(libexecdir)/busbridge-launch-helper)
 * and what the daemon needs to know of it.
 *
 * The helper's exit status tells the daemon why a launch failed; the values
 * are dbus-daemon's (bus/activation-exit-codes.h), so that the daemon maps
 * the exit status of either helper, ours or dbus-daemon-launch-helper, to
 * the same error.  See doc/activation.md.
 */

#include <stdbool.h>
#include <stddef.h>

enum {
	LAUNCH_HELPER_EXIT_GENERIC_FAILURE = 1,
	LAUNCH_HELPER_EXIT_NO_MEMORY = 2,
	LAUNCH_HELPER_EXIT_CONFIG_INVALID = 3,
	LAUNCH_HELPER_EXIT_SETUP_FAILED = 4,
	LAUNCH_HELPER_EXIT_NAME_INVALID = 5,
	LAUNCH_HELPER_EXIT_SERVICE_NOT_FOUND = 6,
	LAUNCH_HELPER_EXIT_PERMISSIONS_INVALID = 7,
	LAUNCH_HELPER_EXIT_FILE_INVALID = 8,
	LAUNCH_HELPER_EXIT_EXEC_FAILED = 9,
	LAUNCH_HELPER_EXIT_INVALID_ARGS = 10,
	LAUNCH_HELPER_EXIT_CHILD_SIGNALED = 11,
};

/* dbus-daemon's helper, named by the stock system.conf */
#define DBUS_DAEMON_LAUNCH_HELPER "/usr/lib/dbus-1.0/dbus-daemon-launch-helper"

/* ours; LAUNCH_HELPER_PATH comes from the Makefile ($(libexecdir)) */
#ifndef LAUNCH_HELPER_PATH
#define LAUNCH_HELPER_PATH "/usr/local/libexec/busbridge-launch-helper"
#endif

/* the environment variable naming another system bus configuration for
 * tests; obeyed only when the helper does not run setuid/setgid */
#define LAUNCH_HELPER_CONFIG_ENV "BUSBRIDGE_LAUNCH_HELPER_CONFIG"

/**
 * launch_helper_exit_error() - the error dbus-daemon reports for a launch
 * helper that exited with @status (not 0), as bus/activation.c's
 * handle_servicehelper_exit_error()
 * @status:	the exit status
 * @ret_name:	the error name
 * @ret_text:	its text (a static string, or @buf)
 * @buf:	room for the text of an unknown status
 * @size:	its size
 */
void launch_helper_exit_error(int status, const char **ret_name, const char **ret_text, char *buf, size_t size);

/**
 * launch_helper_config_parse() - what the launch helper reads from the
 * system bus configuration: dbus-daemon's config-parser-trivial.c, which
 * follows no <include> and keeps the content of <user>, <servicedir>
 * (as written) and <standard_system_servicedirs/>
 * @data:	the file's contents
 * @size:	their length
 * @ret_user:	the <user>, "" when there is none
 * @ret_dirs:	NULL-terminated service directories in order, without duplicates
 *		of the standard ones
 *
 * Return: 0; -EBADMSG if the XML is not well-formed; -ENOMEM.
 */
int launch_helper_config_parse(const char *data, size_t size, char **ret_user, char ***ret_dirs);

/**
 * launch_helper_bus_name_is_valid() - dbus' _dbus_validate_bus_name(): a
 * well-known or a unique name
 */
bool launch_helper_bus_name_is_valid(const char *name);
