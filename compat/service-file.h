/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * service-file.h - D-Bus activation ".service" files.
 *
 * The syntax is dbus-daemon's desktop-file subset (bus/desktop-file.c):
 * "[Group]" headers, "Key=Value" lines, '#' comments in column 0, blank
 * lines, "\s \t \n \r \\" escapes in values and group names, keys of
 * [A-Za-z0-9-], "Key[locale]=..." lines ignored, the first occurrence of a
 * group and of a key within it wins.  Files must be valid UTF-8 without
 * NUL bytes and at most 128 KiB.  From the "[D-BUS Service]" group, Name
 * and Exec are required; User, SystemdService and AssumedAppArmorLabel
 * are optional (bus/activation.c: update_desktop_file_entry()).
 *
 * As in dbus-daemon 1.14, neither the Name nor the Exec line is validated
 * when the file is loaded: an invalid bus name is still "activatable"
 * (ListActivatableNames shows it) and a bad Exec line fails at launch.
 * ServiceFile.name_valid tells the caller whether the name could ever be
 * owned.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

typedef struct ServiceFile ServiceFile;

/* service_dir_scan_full() flags, per directory (values of
 * BusConfigServiceDirFlags, policy/config.h) */
enum {
	SERVICE_DIR_STRICT_NAMING = 1u << 1,   /* file name must be Name.service */
};

/* service_dir_scan_full() scan flags */
enum {
	SERVICE_SCAN_SERVICEHELPER = 1u << 0,  /* system bus with a launch helper: warn on name mismatch */
};

/* service_file_load_full() / service_file_parse_full() flags */
enum {
	SERVICE_PARSE_KEYS_OPTIONAL = 1u << 0, /* a missing Name or Exec is no error (the launch
						* helper checks them itself): name/exec may be NULL */
};

struct ServiceFile {
	char *path;                     /* the file, as opened */
	char *filename;                 /* its last path component */
	char *name;                     /* Name= */
	char *exec;                     /* Exec=, unescaped, not split */
	char *user;                     /* User=, or NULL */
	char *systemd_service;          /* SystemdService=, or NULL */
	char *assumed_apparmor_label;   /* AssumedAppArmorLabel=, or NULL */
	bool name_matches_filename;     /* filename == Name + ".service" */
	bool name_valid;                /* Name is a valid well-known bus name */
	size_t dir_index;               /* service_dir_scan*(): index into the dirs */
	int64_t mtime_usec;             /* of the file when it was read (0 if parsed from memory) */
};

/**
 * service_file_load() - read and parse one .service file
 * @path:      the file
 * @ret:       the parsed file
 * @ret_error: on failure a message ("PATH: Error in section X at line N:
 *             ..." or "PATH: No \"Exec\" key in .service file"); may be NULL
 *
 * Return: 0; -ENOENT/-EACCES/... if the file cannot be read, -EFBIG over
 * 128 KiB, -EBADMSG for invalid syntax, invalid UTF-8 or a missing
 * group/key, -ENOMEM.
 */
int service_file_load(const char *path, ServiceFile **ret, char **ret_error);

/**
 * service_file_parse() - parse .service file contents
 * @data:      the contents (need not be NUL-terminated)
 * @size:      their length
 * @path:      the name used in messages and for ServiceFile.filename
 * @ret:       the parsed file
 * @ret_error: on failure a message, may be NULL
 *
 * Return: as service_file_load().
 */
int service_file_parse(const char *data, size_t size, const char *path,
		       ServiceFile **ret, char **ret_error);

/**
 * service_file_load_full() - service_file_load() with SERVICE_PARSE_* @flags
 */
int service_file_load_full(const char *path, unsigned flags, ServiceFile **ret, char **ret_error);

/**
 * service_file_parse_full() - service_file_parse() with SERVICE_PARSE_* @flags
 */
int service_file_parse_full(const char *data, size_t size, const char *path, unsigned flags,
			    ServiceFile **ret, char **ret_error);

/**
 * service_file_free() - free a ServiceFile
 * @f: the file, or NULL
 *
 * Return: NULL.
 */
ServiceFile *service_file_free(ServiceFile *f);

/**
 * service_files_free() - free an array from service_dir_scan()
 * @files: the array, or NULL
 * @n:     its length
 *
 * Return: NULL.
 */
ServiceFile **service_files_free(ServiceFile **files, size_t n);

/**
 * service_dir_scan() - the activatable services of a list of directories
 * @dirs:   NULL-terminated directories in search order
 * @ret:    array of services, one per Name, in directory order
 * @ret_n:  its length
 *
 * Every "*.service" file of each directory (in readdir() order; missing
 * or unreadable directories are skipped) is loaded; files that fail to
 * load are skipped, and the first file providing a Name wins, as in
 * dbus-daemon's bus_activation_reload().
 *
 * Return: 0 or -ENOMEM.
 */
int service_dir_scan(char **dirs, ServiceFile ***ret, size_t *ret_n);

/**
 * service_dir_scan_full() - service_dir_scan() with per-directory flags
 * @dirs:         NULL-terminated directories in search order
 * @dir_flags:    flags per directory (SERVICE_DIR_*), or NULL
 * @scan_flags:   SERVICE_SCAN_*
 * @ret:          array of services, one per Name
 * @ret_n:        its length
 * @ret_warnings: if not NULL, a NULL-terminated list of messages dbus-daemon
 *                would log (a file skipped because of strict naming, a
 *                name mismatch with a launch helper, a file that failed
 *                to load, a duplicate Name)
 *
 * In a SERVICE_DIR_STRICT_NAMING directory (the transient
 * $XDG_RUNTIME_DIR/dbus-1/services) a file whose name is not
 * Name.service is skipped.
 *
 * Return: 0 or -ENOMEM.
 */
int service_dir_scan_full(char **dirs, const unsigned *dir_flags, unsigned scan_flags,
			  ServiceFile ***ret, size_t *ret_n, char ***ret_warnings);

/*
 * ServiceScanKnownFn - does the caller know the file at @path (named
 * @filename) as it is, modified last at @mtime_sec (seconds)?  Then it is
 * not loaded again.
 */
typedef bool (*ServiceScanKnownFn)(const char *path, const char *filename, int64_t mtime_sec, void *userdata);

/**
 * service_dir_scan_known() - service_dir_scan_full() without the files
 * @known says the caller has read already and that have not changed since
 * (dbus-daemon's update_directory() reads again only new and modified
 * files)
 * @dirs:         NULL-terminated directories in search order
 * @dir_flags:    flags per directory (SERVICE_DIR_*), or NULL
 * @scan_flags:   SERVICE_SCAN_*
 * @known:        the caller's answer, or NULL (every file is loaded)
 * @userdata:     for @known
 * @ret:          array of services, one per Name
 * @ret_n:        its length
 * @ret_warnings: as service_dir_scan_full()'s
 *
 * Return: 0 or -ENOMEM.
 */
int service_dir_scan_known(char **dirs, const unsigned *dir_flags, unsigned scan_flags, ServiceScanKnownFn known,
			   void *userdata, ServiceFile ***ret, size_t *ret_n, char ***ret_warnings);

/**
 * service_exec_split() - split an Exec line into argv
 * @exec:     the Exec value
 * @ret_argv: NULL-terminated argv
 *
 * dbus-daemon's _dbus_shell_parse_argv(): blanks separate words, single
 * quotes are literal, double quotes allow \" \\ \` \$ and \<newline>,
 * a backslash outside quotes escapes the next character, '#' discards
 * the rest of the line, and nothing is expanded.  Quirks kept: an empty
 * Exec gives one empty argument, and trailing blanks or a comment add an
 * empty last argument.
 *
 * Return: 0; -EINVAL for unclosed quotes (or a trailing backslash); -ENOMEM.
 */
int service_exec_split(const char *exec, char ***ret_argv);

/**
 * service_name_is_valid() - is @name a valid well-known bus name
 * @name: the name
 *
 * Two or more elements of [A-Za-z0-9_-] separated by '.', no element
 * empty or starting with a digit, at most 255 bytes, not starting with ':'.
 *
 * Return: true if valid.
 */
bool service_name_is_valid(const char *name);

DEFINE_CLEANUP(ServiceFile *, service_file_free);
