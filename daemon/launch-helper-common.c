/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch-helper-common.c - what the launch helper and the daemon share: the
 * meaning of the helper's exit status (dbus-daemon's bus/activation.c) and
 * the helper's reading of the system bus configuration (dbus-daemon's
 * bus/config-parser-trivial.c).
 */
#include <errno.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/protocol.h"
#include "daemon/launch-helper.h"
#include "util/macro.h"


void launch_helper_exit_error(int status, const char **ret_name, const char **ret_text, char *buf, size_t size) {
	switch (status) {
	case LAUNCH_HELPER_EXIT_CONFIG_INVALID:
		*ret_name = DBUS_ERR("Spawn.ConfigInvalid");
		*ret_text = "Invalid configuration (missing or empty <user>?)";
		return;
	case LAUNCH_HELPER_EXIT_NO_MEMORY:
		*ret_name = DBUS_ERR("NoMemory");
		*ret_text = "Launcher could not run (out of memory)";
		return;
	case LAUNCH_HELPER_EXIT_SETUP_FAILED:
		*ret_name = DBUS_ERR("Spawn.FailedToSetup");
		*ret_text = "Failed to setup environment correctly";
		return;
	case LAUNCH_HELPER_EXIT_NAME_INVALID:
		*ret_name = DBUS_ERR("Spawn.ServiceNotValid");
		*ret_text = "Bus name is not valid or missing";
		return;
	case LAUNCH_HELPER_EXIT_SERVICE_NOT_FOUND:
		*ret_name = DBUS_ERR("Spawn.ServiceNotFound");
		*ret_text = "Bus name not found in system service directory";
		return;
	case LAUNCH_HELPER_EXIT_PERMISSIONS_INVALID:
		*ret_name = DBUS_ERR("Spawn.PermissionsInvalid");
		*ret_text = "The permission of the setuid helper is not correct";
		return;
	case LAUNCH_HELPER_EXIT_FILE_INVALID:
		/* sic: dbus-daemon reports a bad .service file with this name */
		*ret_name = DBUS_ERR("Spawn.PermissionsInvalid");
		*ret_text = "The service file is incorrect or does not have all required attributes";
		return;
	case LAUNCH_HELPER_EXIT_EXEC_FAILED:
		*ret_name = DBUS_ERR("Spawn.ExecFailed");
		*ret_text = "Cannot launch daemon, file not found or permissions invalid";
		return;
	case LAUNCH_HELPER_EXIT_INVALID_ARGS:
		*ret_name = DBUS_ERR("InvalidArgs");
		*ret_text = "Invalid arguments to command line";
		return;
	case LAUNCH_HELPER_EXIT_CHILD_SIGNALED:
		*ret_name = DBUS_ERR("Spawn.ChildSignaled");
		*ret_text = "Launched child was signaled, it probably crashed";
		return;
	default:
		*ret_name = DBUS_ERR("Spawn.ChildExited");
		snprintf(buf, size, "Launch helper exited with unknown return code %i", status);
		*ret_text = buf;
		return;
	}
}

/* ---- the system bus configuration, trivially ------------------------------ */

typedef enum {
	ELEM_OTHER,
	ELEM_USER,
	ELEM_SERVICEDIR,
} Elem;

typedef struct {
	XML_Parser xml;
	Elem type;		/* the element last started */
	char *content;		/* character data since the last element boundary */
	size_t n_content;
	char *user;
	char **dirs;
	size_t n_dirs;
	int error;
} TrivialParser;

static void tp_fail(TrivialParser *p, int error) {
	if (!p->error)
		p->error = error;
	XML_StopParser(p->xml, XML_FALSE);
}

static int tp_add_dir(TrivialParser *p, const char *dir, size_t len, bool unique) {
	char *d;

	if (unique)
		for (size_t i = 0; i < p->n_dirs; i++)
			if (strlen(p->dirs[i]) == len && memcmp(p->dirs[i], dir, len) == 0)
				return 0;
	char **l = realloc(p->dirs, (p->n_dirs + 2) * sizeof(char *));
	if (!l)
		return -ENOMEM;
	p->dirs = l;
	d = strndup(dir, len);
	if (!d)
		return -ENOMEM;
	p->dirs[p->n_dirs++] = d;
	p->dirs[p->n_dirs] = NULL;
	return 0;
}

static bool is_white(char c) {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* bus_config_parser_content(): the text, without leading and trailing
 * blanks, for the element last started */
static void tp_flush(TrivialParser *p) {
	size_t a = 0, b = p->n_content;

	while (a < b && is_white(p->content[a]))
		a++;
	while (b > a && is_white(p->content[b - 1]))
		b--;
	p->n_content = 0;
	if (a == b)
		return;
	if (p->type == ELEM_USER) {
		char *u = strndup(p->content + a, b - a);
		if (!u) {
			tp_fail(p, -ENOMEM);
			return;
		}
		free(p->user);
		p->user = u;
	} else if (p->type == ELEM_SERVICEDIR) {
		if (tp_add_dir(p, p->content + a, b - a, false) < 0)
			tp_fail(p, -ENOMEM);
	}
}

static void XMLCALL tp_start(void *userdata, const XML_Char *name, const XML_Char **attrs) {
	TrivialParser *p = userdata;

	tp_flush(p);
	p->type = streq(name, "user") ? ELEM_USER : streq(name, "servicedir") ? ELEM_SERVICEDIR : ELEM_OTHER;
	if (streq(name, "standard_system_servicedirs")) {
		/* _dbus_get_standard_system_servicedirs() */
		static const char *const roots[] = { "/usr/local/share", "/usr/share", DBUS_DATADIR, "/lib" };
		for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
			char *d;
			if (asprintf(&d, "%s/dbus-1/system-services", roots[i]) < 0) {
				tp_fail(p, -ENOMEM);
				return;
			}
			int r = tp_add_dir(p, d, strlen(d), true);
			free(d);
			if (r < 0) {
				tp_fail(p, r);
				return;
			}
		}
	}
}

static void XMLCALL tp_end(void *userdata, const XML_Char *name) {
	tp_flush(userdata);
}

static void XMLCALL tp_text(void *userdata, const XML_Char *s, int len) {
	TrivialParser *p = userdata;
	char *c;

	if (len <= 0)
		return;
	c = realloc(p->content, p->n_content + len + 1);
	if (!c) {
		tp_fail(p, -ENOMEM);
		return;
	}
	p->content = c;
	memcpy(p->content + p->n_content, s, len);
	p->n_content += len;
}

int launch_helper_config_parse(const char *data, size_t size, char **ret_user, char ***ret_dirs) {
	TrivialParser p = {};
	int r = 0;

	p.xml = XML_ParserCreate("UTF-8");
	if (!p.xml)
		return -ENOMEM;
	XML_SetUserData(p.xml, &p);
	XML_SetElementHandler(p.xml, tp_start, tp_end);
	XML_SetCharacterDataHandler(p.xml, tp_text);
	if (XML_Parse(p.xml, data, (int) size, XML_TRUE) == XML_STATUS_ERROR)
		r = p.error ? p.error : -EBADMSG;
	XML_ParserFree(p.xml);
	free(p.content);
	if (r >= 0 && !p.user && !(p.user = strdup("")))
		r = -ENOMEM;
	if (r >= 0 && !p.dirs && !(p.dirs = calloc(1, sizeof(char *))))
		r = -ENOMEM;
	if (r < 0) {
		free(p.user);
		strv_free(p.dirs);
		return r;
	}
	*ret_user = p.user;
	*ret_dirs = p.dirs;
	return 0;
}

/* _dbus_validate_bus_name() */
bool launch_helper_bus_name_is_valid(const char *name) {
	size_t len = strlen(name);
	const char *s = name;
	bool unique = name[0] == ':', dot = false;

	if (len == 0 || len > 255)
		return false;
	if (unique)
		s++;
	if (*s == '.')
		return false;
	for (const char *c = s; *c; c++) {
		if (*c == '.') {
			if (c[1] == '.' || c[1] == '\0')
				return false;
			dot = true;
			if (!unique && c[1] >= '0' && c[1] <= '9')
				return false;
		} else if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			     *c == '_' || *c == '-'))
			return false;
	}
	if (!unique && *s >= '0' && *s <= '9')
		return false;
	return dot;
}
