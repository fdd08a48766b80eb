/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * config.h - the busconfig XML loader (dbus-daemon's configuration files).
 *
 * bus_config_load() reads a dbus-daemon configuration file with expat,
 * follows <include> and <includedir>, and returns one BusConfig: plain data
 * the daemon reads directly.  Accept/reject, defaults, merging of included
 * files and every validation follow dbus-daemon 1.14 (bus/config-parser.c,
 * bus/config-loader-expat.c).  Known, deliberate differences:
 *
 *  - include loops are detected by file identity (device and inode) as
 *    well as by name, so "dir/./x.conf" loops are caught at once;
 *    dbus-daemon only compares path strings.
 *  - <user>/<group> names in <policy> and <allow>/<deny> are kept as
 *    written; they are resolved when the policy is compiled
 *    (policy/policy.h).  The loader still resolves them once to reproduce
 *    dbus-daemon's accept/reject ("rule cannot be per-user") and warnings.
 *
 * Element text is kept verbatim, without trimming, as dbus-daemon does
 * ("<listen> unix:path=/x </listen>" keeps its spaces).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/macro.h"

typedef struct BusConfig BusConfig;
typedef struct BusConfigLimits BusConfigLimits;
typedef struct BusConfigPolicy BusConfigPolicy;
typedef struct BusConfigRule BusConfigRule;
typedef struct BusConfigAssociation BusConfigAssociation;
typedef struct BusConfigLoadOptions BusConfigLoadOptions;

/* message types, numerically equal to the D-Bus wire values */
typedef enum BusConfigMessageType {
	BUS_CONFIG_MESSAGE_ANY = 0,            /* no send_type/receive_type, or "*" */
	BUS_CONFIG_MESSAGE_METHOD_CALL = 1,
	BUS_CONFIG_MESSAGE_METHOD_RETURN = 2,
	BUS_CONFIG_MESSAGE_ERROR = 3,
	BUS_CONFIG_MESSAGE_SIGNAL = 4,
} BusConfigMessageType;

typedef enum BusConfigTristate {
	BUS_CONFIG_TRISTATE_ANY = 0,
	BUS_CONFIG_TRISTATE_TRUE,
	BUS_CONFIG_TRISTATE_FALSE,
} BusConfigTristate;

typedef enum BusConfigRuleType {
	BUS_CONFIG_RULE_SEND,          /* any send_* attribute */
	BUS_CONFIG_RULE_RECEIVE,       /* any receive_* attribute, or eavesdrop alone */
	BUS_CONFIG_RULE_OWN,           /* own or own_prefix */
	BUS_CONFIG_RULE_USER,          /* user: connection admission */
	BUS_CONFIG_RULE_GROUP,         /* group: connection admission */
} BusConfigRuleType;

typedef enum BusConfigContext {
	BUS_CONFIG_CONTEXT_DEFAULT,    /* <policy context="default"> */
	BUS_CONFIG_CONTEXT_MANDATORY,  /* <policy context="mandatory"> */
	BUS_CONFIG_CONTEXT_USER,       /* <policy user="..."> */
	BUS_CONFIG_CONTEXT_GROUP,      /* <policy group="..."> */
	BUS_CONFIG_CONTEXT_AT_CONSOLE, /* <policy at_console="true|false"> */
} BusConfigContext;

typedef enum BusConfigApparmorMode {
	BUS_CONFIG_APPARMOR_ENABLED = 0,  /* dbus-daemon's default */
	BUS_CONFIG_APPARMOR_DISABLED,
	BUS_CONFIG_APPARMOR_REQUIRED,
} BusConfigApparmorMode;

/*
 * Service directory flags.  NO_WATCH and STRICT_NAMING are dbus-daemon's
 * BusServiceDirFlags: when a directory is listed twice they are and-ed
 * (a directory that is both the transient dir and a <servicedir> is
 * watched and not strict).  The ORIGIN flags say where an entry came from
 * and are or-ed.
 */
typedef enum BusConfigServiceDirFlags {
	BUS_CONFIG_SERVICE_DIR_NO_WATCH = 1u << 0,          /* do not inotify-watch */
	BUS_CONFIG_SERVICE_DIR_STRICT_NAMING = 1u << 1,     /* file must be Name.service */
	BUS_CONFIG_SERVICE_DIR_ORIGIN_TRANSIENT = 1u << 2,  /* $XDG_RUNTIME_DIR/dbus-1/services */
	BUS_CONFIG_SERVICE_DIR_ORIGIN_SESSION = 1u << 3,    /* <standard_session_servicedirs/> */
	BUS_CONFIG_SERVICE_DIR_ORIGIN_SYSTEM = 1u << 4,     /* <standard_system_servicedirs/> */
	BUS_CONFIG_SERVICE_DIR_ORIGIN_EXPLICIT = 1u << 5,   /* <servicedir> */
} BusConfigServiceDirFlags;

/* load flags (BusConfigLoadOptions.flags) */
enum {
	BUS_CONFIG_LOAD_NO_INCLUDES = 1u << 0,   /* treat every include/includedir target as missing */
	BUS_CONFIG_LOAD_NO_MKDIR = 1u << 1,      /* do not create $XDG_RUNTIME_DIR/dbus-1/services */
	BUS_CONFIG_LOAD_NOT_TOPLEVEL = 1u << 2,  /* do not require a <listen> element */
};

/*
 * Limits.  Names are dbus-daemon's <limit name="...">; values as dbus-daemon
 * stores them (timeouts in milliseconds, reply_timeout -1 = never).
 * Defaults (bus_config_parser_new()): 127 MiB in/out bytes, 64 in/out fds,
 * 32 MiB message size, 16 fds per message, service_start_timeout 25000,
 * auth_timeout 30000, pending_fd_timeout 150000, 2048 completed and 64
 * incomplete connections, 256 connections per user, 512 pending starts,
 * 512 names, 512 match rules, 128 replies per connection, reply_timeout -1,
 * and for Containers1 (parsed, feature not built): 512 containers, 16 per
 * user, 4096 metadata bytes, 8 connections per container.
 */
struct BusConfigLimits {
	int64_t max_incoming_bytes;
	int64_t max_incoming_unix_fds;
	int64_t max_outgoing_bytes;
	int64_t max_outgoing_unix_fds;
	int64_t max_message_size;
	int64_t max_message_unix_fds;
	int64_t service_start_timeout;
	int64_t auth_timeout;
	int64_t pending_fd_timeout;
	int64_t max_completed_connections;
	int64_t max_incomplete_connections;
	int64_t max_connections_per_user;
	int64_t max_pending_service_starts;
	int64_t max_names_per_connection;
	int64_t max_match_rules_per_connection;
	int64_t max_replies_per_connection;
	int64_t reply_timeout;
	int64_t max_containers;
	int64_t max_containers_per_user;
	int64_t max_container_metadata_bytes;
	int64_t max_connections_per_container;
};

/*
 * One <allow> or <deny>.  "*" in the file is stored as NULL (any), except
 * for send_destination_prefix and own_prefix, where dbus-daemon takes "*"
 * literally.  Only the fields of the rule's type are meaningful.
 */
struct BusConfigRule {
	BusConfigRuleType type;
	bool allow;
	const char *file;               /* owned by BusConfig.files */
	unsigned line;

	/* SEND and RECEIVE */
	BusConfigMessageType message_type;
	char *path;
	char *interface;
	char *member;
	char *error;
	bool eavesdrop;                 /* eavesdrop="true" */
	bool requested_reply;           /* default: true for allow, false for deny */
	uint32_t min_fds;               /* default 0 */
	uint32_t max_fds;               /* default 33554432 (DBUS_MAXIMUM_MESSAGE_UNIX_FDS) */

	/* SEND only */
	char *destination;              /* send_destination / send_destination_prefix */
	bool destination_is_prefix;
	BusConfigTristate broadcast;    /* send_broadcast */
	bool log;                       /* log="true" */

	/* RECEIVE only */
	char *sender;                   /* receive_sender */

	/* OWN */
	char *own;                      /* own (NULL = any) or own_prefix */
	bool own_is_prefix;

	/* USER / GROUP: the name or number as written, NULL = "*" */
	char *user;
	char *group;
};

/* One <policy> element, in document order (includes expanded in place). */
struct BusConfigPolicy {
	BusConfigContext context;
	char *user;                     /* CONTEXT_USER: as written */
	char *group;                    /* CONTEXT_GROUP: as written */
	bool at_console;                /* CONTEXT_AT_CONSOLE */
	const char *file;
	unsigned line;
	BusConfigRule *rules;
	size_t n_rules;
};

/* <selinux><associate own="..." context="..."/></selinux>; last one per name wins */
struct BusConfigAssociation {
	char *own;
	char *context;
};

struct BusConfig {
	char *type;                     /* <type>, last wins; NULL if unset */
	char *user;                     /* <user>, last wins */
	char *pidfile;
	char *servicehelper;            /* made absolute against the file's dir */
	bool fork;
	bool keep_umask;
	bool kdbus;                     /* <kdbus/> (busbridge's): the bus on kdbus.ko */
	bool syslog;                    /* as dbus-daemon: only from the top-level file */
	bool allow_anonymous;
	BusConfigApparmorMode apparmor_mode;

	char **listen;                  /* <listen>, in order */
	char **auth;                    /* <auth>, in order */

	/* service directories in search order, standard dirs expanded in
	 * place, duplicates removed (first position kept) */
	char **servicedirs;
	unsigned *servicedir_flags;     /* BusConfigServiceDirFlags, parallel to servicedirs */
	size_t n_servicedirs;

	char **includedirs;             /* <includedir> directories that exist (to watch) */
	char **files;                   /* every file parsed, top-level first (includes
					 * <includedir> files that failed and were skipped) */

	BusConfigAssociation *associations;
	size_t n_associations;

	BusConfigLimits limits;

	BusConfigPolicy *policies;      /* <policy> elements in document order */
	size_t n_policies;

	/* non-fatal problems, in dbus-daemon's words: errors inside
	 * <includedir> files ("Encountered error '...' while parsing '...'":
	 * dbus-daemon logs and skips those files), unknown users and groups, an
	 * unusable $XDG_RUNTIME_DIR */
	char **warnings;
};

/*
 * Load options.  Zero-initialised options (or NULL) give dbus-daemon's
 * behaviour: SELinux state detected, users and groups resolved with NSS.
 */
struct BusConfigLoadOptions {
	unsigned flags;                 /* BUS_CONFIG_LOAD_* */
	int selinux_enabled;            /* 0: detect, 1: enabled, -1: disabled */
	const char *selinux_policy_root;/* NULL: from /etc/selinux/config */
	/* resolve a user/group as dbus-daemon does (name, else a number that
	 * exists); return 0 and the id, or a negative errno (-ESRCH unknown) */
	int (*lookup_user)(const char *name, uid_t *ret_uid, void *userdata);
	int (*lookup_group)(const char *name, gid_t *ret_gid, void *userdata);
	/* warnings (BusConfig.warnings) as they come, not kept; NULL: kept */
	void (*warn)(const char *message, void *userdata);
	void *userdata;
};

/**
 * bus_config_load() - load a dbus-daemon configuration file
 * @path:       the top-level configuration file
 * @ret:        the configuration, on success
 * @ret_error:  on failure, a message "FILE:LINE: message" (or
 *              "FILE: message" when the top-level file cannot be read);
 *              may be NULL
 *
 * Return: 0 on success; -ENOENT/-EACCES/... when the file cannot be read,
 * -EINVAL for an invalid configuration, -ELOOP for circular inclusion,
 * -EFBIG for a file over 1 MiB, -ENOMEM.
 */
int bus_config_load(const char *path, BusConfig **ret, char **ret_error);

/**
 * bus_config_load_full() - bus_config_load() with options
 * @path:       the top-level configuration file
 * @opts:       options, or NULL for the defaults
 * @ret:        the configuration, on success
 * @ret_error:  error message on failure, may be NULL
 *
 * Return: as bus_config_load().
 */
int bus_config_load_full(const char *path, const BusConfigLoadOptions *opts,
			 BusConfig **ret, char **ret_error);

/**
 * bus_config_load_string() - load a configuration from memory
 * @data:       the XML (need not be NUL-terminated)
 * @size:       its length
 * @name:       the name used in messages and to resolve relative paths
 * @opts:       options, or NULL
 * @ret:        the configuration, on success
 * @ret_error:  error message on failure, may be NULL
 *
 * Return: as bus_config_load().
 */
int bus_config_load_string(const char *data, size_t size, const char *name,
			   const BusConfigLoadOptions *opts, BusConfig **ret,
			   char **ret_error);

/**
 * bus_config_free() - free a configuration
 * @c: the configuration, or NULL
 *
 * Return: NULL.
 */
BusConfig *bus_config_free(BusConfig *c);

/**
 * bus_config_limits_init_default() - dbus-daemon's built-in limits
 * @l: the limits to fill
 */
void bus_config_limits_init_default(BusConfigLimits *l);

/**
 * bus_config_rule_format() - a rule as XML, for logs and tools
 * @r:   the rule
 * @ret: a newly allocated string such as
 *       <deny send_destination="org.example" send_type="method_call"/>
 *
 * Return: 0 or -ENOMEM.
 */
int bus_config_rule_format(const BusConfigRule *r, char **ret);

/**
 * bus_config_message_type_to_string() - "method_call", ... or "*"
 * @t: the type
 *
 * Return: a static string.
 */
const char *bus_config_message_type_to_string(BusConfigMessageType t);

/**
 * bus_config_message_type_from_string() - the inverse, for send_type= and
 * receive_type= values
 * @s: "method_call", "method_return", "signal" or "error"
 *
 * Return: the type, or BUS_CONFIG_MESSAGE_ANY for anything else.
 */
BusConfigMessageType bus_config_message_type_from_string(const char *s);

/**
 * bus_config_lookup_user() - resolve a user as dbus-daemon does
 * @name:    user name, or a number (strtoul base 0) naming an existing uid
 * @ret_uid: the uid
 *
 * Return: 0, -ESRCH if unknown, or a negative errno.
 */
int bus_config_lookup_user(const char *name, uid_t *ret_uid);

/**
 * bus_config_lookup_group() - resolve a group as dbus-daemon does
 * @name:    group name, or a number naming an existing gid
 * @ret_gid: the gid
 *
 * Return: 0, -ESRCH if unknown, or a negative errno.
 */
int bus_config_lookup_group(const char *name, gid_t *ret_gid);

DEFINE_CLEANUP(BusConfig *, bus_config_free);
