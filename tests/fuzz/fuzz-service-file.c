/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-service-file.c - libFuzzer target for compat/service-file.c.
 *
 * The input is parsed as a .service file, by the daemon and as the launch
 * helper does (SERVICE_PARSE_KEYS_OPTIONAL); when that succeeds, its Exec
 * line is split.  The whole input is also split as an Exec line on its
 * own.  Parsing must never crash, and a parsed file must be consistent.
 */

#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat/service-file.h"
#include "util/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void split(const char *s) {
	char **argv = NULL;

	if (service_exec_split(s, &argv) == 0) {
		assert(argv && argv[0]);
		for (char **a = argv; *a; a++)
			assert(strlen(*a) <= strlen(s));
		strv_free(argv);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	ServiceFile *f = NULL;
	char *err = NULL, *str;
	int r;

	r = service_file_parse((const char *)data, size, "/fuzz/org.example.Fuzz.service", &f, &err);
	if (r == 0) {
		assert(f && f->name && f->exec && !err);
		assert(f->name_matches_filename == (strcmp(f->name, "org.example.Fuzz") == 0));
		if (f->name_valid)
			assert(f->name[0] != ':' && strlen(f->name) <= 255);
		split(f->exec);
		service_file_free(f);
	} else {
		assert(!f);
		assert(r == -EBADMSG || r == -EFBIG || r == -ENOMEM);
		free(err);
	}

	/* as the launch helper loads it: Name and Exec may be missing */
	r = service_file_parse_full((const char *)data, size, "/fuzz/org.example.Fuzz.service",
				    SERVICE_PARSE_KEYS_OPTIONAL, &f, NULL);
	if (r == 0) {
		assert(f);
		assert(!f->name_valid || f->name);
		if (f->exec)
			split(f->exec);
		service_file_free(f);
	} else
		assert(!f && (r == -EBADMSG || r == -EFBIG || r == -ENOMEM));

	/* the raw input as an Exec line */
	if (size < 4096) {
		str = malloc(size + 1);
		if (!str)
			return 0;
		memcpy(str, data, size);
		str[size] = '\0';
		split(str);
		free(str);
	}
	return 0;
}
