/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-launch-helper-config.c - libFuzzer target for the launch helper's
 * reading of the system bus configuration (daemon/launch-helper-common.c)
 * and its bus name check.
 *
 * Parsing must never crash; a parsed configuration has a user (maybe "")
 * and a NULL-terminated list of non-empty directories.
 */

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/launch-helper.h"
#include "util/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	char *user = NULL, **dirs = NULL, *str;
	int r;

	if (size > 1024 * 1024)
		return 0;
	r = launch_helper_config_parse((const char *) data, size, &user, &dirs);
	if (r == 0) {
		assert(user && dirs);
		for (char **d = dirs; *d; d++)
			assert(**d);
		free(user);
		strv_free(dirs);
	} else
		assert(r == -EBADMSG || r == -ENOMEM);

	/* the input as a bus name: a valid one has no '/' (it becomes a path) */
	str = strndup((const char *) data, size);
	if (str) {
		if (launch_helper_bus_name_is_valid(str))
			assert(!strchr(str, '/') && strlen(str) <= 255 && !strstr(str, ".."));
		free(str);
	}
	return 0;
}
