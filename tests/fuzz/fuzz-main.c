/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-main.c - run a libFuzzer target without libFuzzer: every file named
 * on the command line, or every file in a directory named there, is passed
 * to LLVMFuzzerTestOneInput() once.  Without arguments the corpus compiled
 * in as FUZZ_CORPUS_DIR is used.  A crash is a failure; the last line is
 * "N passed, 0 failed".
 */

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned n_run, n_bad;

static void run_file(const char *path) {
	FILE *f = fopen(path, "re");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		n_bad++;
		return;
	}
	for (;;) {
		if (len == cap) {
			uint8_t *n;
			cap = cap ? cap * 2 : 4096;
			n = realloc(buf, cap);
			if (!n)
				abort();
			buf = n;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		if (r == 0)
			break;
		len += r;
	}
	fclose(f);
	/* an exact-size copy, so that ASan catches reads past the input */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact)
		abort();
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	n_run++;
}

static int cmp(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path) {
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "cannot stat %s\n", path);
		n_bad++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	d = opendir(path);
	if (!d) {
		n_bad++;
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names)
			abort();
		size_t l = strlen(path) + strlen(de->d_name) + 2;
		names[n] = malloc(l);
		if (!names[n])
			abort();
		snprintf(names[n], l, "%s/%s", path, de->d_name);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp);
	for (size_t i = 0; i < n; i++) {
		run_path(names[i]);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv) {
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			run_path(argv[i]);
	else {
#ifdef FUZZ_CORPUS_DIR
		run_path(FUZZ_CORPUS_DIR);
#else
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
#endif
	}
	if (n_run == 0)
		n_bad++;
	printf("%u passed, %u failed\n", n_run, n_bad);
	return n_bad ? 1 : 0;
}
