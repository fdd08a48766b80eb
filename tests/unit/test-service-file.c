/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-service-file.c - unit tests for compat/service-file.c.
 *
 * Which files load and how Exec lines split was checked against
 * dbus-daemon 1.14.10 (ListActivatableNames on a <servicedir>, and
 * StartServiceByName of a service whose Exec prints its argv).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat/service-file.h"
#include "util/macro.h"
#include "tests/unit/test.h"

static char tmpdir[] = "/tmp/test-service-file-XXXXXX";

static void write_file(const char *name, const char *content, size_t len) {
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "we");
	assert(f);
	assert(fwrite(content, 1, len, f) == len);
	fclose(f);
}

static void write_str(const char *name, const char *content) {
	write_file(name, content, strlen(content));
}

static int parse(const char *content, const char *filename, ServiceFile **ret, char **err) {
	return service_file_parse(content, strlen(content), filename, ret, err);
}

/* ---------------------------------------------------------------------- */

static void test_basic(void) {
	_cleanup_(service_file_freep) ServiceFile *f = NULL;

	assert(parse("[D-BUS Service]\n"
		     "Name=org.example.Foo\n"
		     "Exec=/usr/bin/foo --bar\n"
		     "User=nobody\n"
		     "SystemdService=foo.service\n"
		     "AssumedAppArmorLabel=/usr/bin/foo\n",
		     "/dir/org.example.Foo.service", &f, NULL) == 0);
	assert(streq(f->path, "/dir/org.example.Foo.service"));
	assert(streq(f->filename, "org.example.Foo.service"));
	assert(streq(f->name, "org.example.Foo"));
	assert(streq(f->exec, "/usr/bin/foo --bar"));
	assert(streq(f->user, "nobody"));
	assert(streq(f->systemd_service, "foo.service"));
	assert(streq(f->assumed_apparmor_label, "/usr/bin/foo"));
	assert(f->name_matches_filename && f->name_valid);
	f = service_file_free(f);

	/* optional keys absent, name mismatch */
	assert(parse("[D-BUS Service]\nName=org.example.Bar\nExec=/bin/bar", "foo.service", &f, NULL) == 0);
	assert(!f->user && !f->systemd_service && !f->assumed_apparmor_label);
	assert(!f->name_matches_filename && f->name_valid);
	assert(streq(f->filename, "foo.service"));
}

static void test_first_wins(void) {
	_cleanup_(service_file_freep) ServiceFile *f = NULL;

	/* duplicate keys: the first */
	assert(parse("[D-BUS Service]\nName=org.test.DupKey1\nName=org.test.DupKey2\nExec=/bin/true\nExec=/bin/false\n",
		     "x.service", &f, NULL) == 0);
	assert(streq(f->name, "org.test.DupKey1") && streq(f->exec, "/bin/true"));
	f = service_file_free(f);

	/* other groups are ignored */
	assert(parse("[Other]\nName=org.test.Other\nExec=/bin/true\n[D-BUS Service]\nName=org.test.OtherSec\nExec=/bin/x\n",
		     "x.service", &f, NULL) == 0);
	assert(streq(f->name, "org.test.OtherSec") && streq(f->exec, "/bin/x"));
	f = service_file_free(f);

	/* a second [D-BUS Service] group is a different group: the first
	 * one lacks Exec, so the file is rejected (as dbus-daemon) */
	assert(parse("[D-BUS Service]\nName=org.test.DupSec1\n[D-BUS Service]\nName=org.test.DupSec2\nExec=/bin/true\n",
		     "x.service", &f, NULL) == -EBADMSG);
	assert(parse("[D-BUS Service]\nName=org.test.DupSec1\nExec=/a\n[D-BUS Service]\nExec=/b\nUser=u\n",
		     "x.service", &f, NULL) == 0);
	assert(streq(f->exec, "/a") && !f->user);
}

static void test_syntax(void) {
	static const struct {
		const char *content;
		bool ok;
		const char *name;     /* expected Name if ok */
	} cases[] = {
		{ "[D-BUS Service]\nName=org.test.Ok1\nExec=/bin/true\n", true, "org.test.Ok1" },
		{ "[D-BUS Service]\nName=not a valid name\nExec=/bin/true\n", true, "not a valid name" },
		{ "[D-BUS Service]\nName=1foo.bar\nExec=/bin/true\n", true, "1foo.bar" },
		{ "[D-BUS Service]\nName=:1.5\nExec=/bin/true\n", true, ":1.5" },
		{ "[D-BUS Service]\nName=\nExec=/bin/true\n", true, "" },
		{ "[D-BUS Service]\nName=org.test.NoExec\n", false, NULL },
		{ "[D-BUS Service]\nExec=/bin/true\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.EmptyExec\nExec=\n", true, "org.test.EmptyExec" },
		{ "[D-BUS Service]\nName=org.test.Esc\\\\s\nExec=/bin/true\n", true, "org.test.Esc\\s" },
		{ "[D-BUS Service]\nName=org.test.Esc\\s\\t\\r\\n\nExec=/bin/true\n", true, "org.test.Esc \t\r\n" },
		{ "[D-BUS Service]\nName=org.test.Esc2\nExec=/bin/true\\q\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.Esc3\nExec=/bin/true\\\n", false, NULL },
		{ "[D-BUS Service]\nName = org.test.Spaces  \nExec=/bin/true\n", true, "org.test.Spaces  " },
		{ "[D-BUS Service]\nName\t=org.test.Tabs\nExec=/bin/true\n", false, NULL },
		{ "[D-BUS Service]\nName=\torg.test.Tab2\nExec=/bin/true\n", true, "\torg.test.Tab2" },
		{ "[D-BUS Service]\nName[de]=garbage ][\nName=org.test.Locale\nExec=/bin/true\n", true, "org.test.Locale" },
		{ "[D-BUS Service]\nName[de=x\nName=org.test.Locale2\nExec=/bin/true\n", true, "org.test.Locale2" },
		{ "# c\n[D-BUS Service]\n# c2\n\nName=org.test.Comment\nExec=/bin/true\n", true, "org.test.Comment" },
		{ "[D-BUS Service]\n  # c2\nName=org.test.IndComment\nExec=/bin/true\n", false, NULL },
		{ "Name=x\n[D-BUS Service]\nName=org.test.Before\nExec=/bin/true\n", false, NULL },
		{ "\n\n  \t\n[D-BUS Service]\nName=org.test.Blank\nExec=/bin/true\n", true, "org.test.Blank" },
		{ "[D-BUS Service]\r\nName=org.test.Crlf\r\nExec=/bin/true\r\n", true, "org.test.Crlf" },
		{ "[D-BUS Service]\rName=org.test.Cr\rExec=/bin/true\r", true, "org.test.Cr" },
		{ "[D-BUS Service]\n  \r\nName=org.test.BlankCr\nExec=/bin/true\n", true, "org.test.BlankCr" },
		{ "[D-BUS Service]\n  \rName=org.test.BlankCr2\nExec=/bin/true\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.NoEq\nExec=/bin/true\nFoo\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.BadKey\nExec=/bin/true\nFo_o=1\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.BadKey2\nExec=/bin/true\nFo.o=1\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.KeyDigit\nExec=/bin/true\n9x-Y=1\n", true, "org.test.KeyDigit" },
		{ "[D-BUS Service]\nname=org.test.LowerKey\nExec=/bin/true\n", false, NULL },
		{ "[D-BUS Service] \nName=org.test.SecHdr\nExec=/bin/true\n", false, NULL },
		{ "[D-BUS Service\nName=org.test.NoSec\nExec=/bin/true\n", false, NULL },
		{ "[]\nName=x\n", false, NULL },
		{ "[a]\n[D-BUS Service]\nName=org.test.A\nExec=/x\n", true, "org.test.A" },
		{ "[a[b]\n", false, NULL },
		{ "[a\\sb]\n[D-BUS Service]\nName=org.test.EscSec\nExec=/x\n", true, "org.test.EscSec" },
		{ "[D-BUS\\sService]\nName=org.test.EscSec2\nExec=/x\n", true, "org.test.EscSec2" },
		{ "[a\\tb]\n", false, NULL },
		{ "[a\\q]\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.Trailing \nExec=/bin/true\n", true, "org.test.Trailing " },
		{ "[D-BUS Service]\n=x\nName=a\nExec=b\n", false, NULL },
		{ "[D-BUS Service]\nName=a\nExec=b", true, "a" },
		{ "", false, NULL },
		{ "[D-BUS Service]\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.Utf8\nExec=/bin/\xc3\xa9\n", true, "org.test.Utf8" },
		{ "[D-BUS Service]\nName=org.test.Utf8\nExec=/bin/\xff\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.Utf8\nExec=/bin/\xc0\xaf\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.Utf8\nExec=/bin/\xed\xa0\x80\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.Utf8\nExec=/bin/\xf4\x90\x80\x80\n", false, NULL },
		{ "[D-BUS Service]\nName=org.test.Utf8\nExec=/bin/\xf0\x9f\x98\x80\n", true, "org.test.Utf8" },
		{ "[D-BUS Service]\nName=org.test.Utf8\nExec=/bin/\xe2\x82\n", false, NULL },
		{ "[\xc3\xa9]\n[D-BUS Service]\nName=a\nExec=b\n", false, NULL },
		{ "[a\x7f]\n", false, NULL },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(service_file_freep) ServiceFile *f = NULL;
		_cleanup_free_ char *err = NULL;
		int r;

		r = parse(cases[i].content, "/d/x.service", &f, &err);
		if ((r >= 0) != cases[i].ok || (r >= 0 && !streq(f->name, cases[i].name))) {
			fprintf(stderr, "case %zu: r=%d err=%s name=%s\n", i, r, strempty(err),
				f ? f->name : "(none)");
			abort();
		}
		if (r < 0) {
			assert(r == -EBADMSG);
			assert(err && strncmp(err, "/d/x.service: ", 14) == 0);
		}
	}
}

static void test_errors(void) {
	_cleanup_(service_file_freep) ServiceFile *f = NULL;
	_cleanup_free_ char *err = NULL;

	assert(parse("[D-BUS Service]\nName=a\n\nExec=x\\q\n", "/d/e.service", &f, &err) == -EBADMSG);
	assert(streq(err, "/d/e.service: Error in section D-BUS Service at line 4: "
		     "Text to be unescaped had invalid escape sequence"));
	free(err);
	err = NULL;
	assert(parse("[x\n", "/d/e.service", &f, &err) == -EBADMSG);
	assert(streq(err, "/d/e.service: Error at line 1: Invalid syntax for section header"));
	free(err);
	err = NULL;
	assert(parse("[D-BUS Service]\nName=a\n", "/d/e.service", &f, &err) == -EBADMSG);
	assert(streq(err, "/d/e.service: No \"Exec\" key in .service file"));
	free(err);
	err = NULL;
	assert(parse("[D-BUS Service]\nExec=a\n", "/d/e.service", &f, &err) == -EBADMSG);
	assert(streq(err, "/d/e.service: No \"Name\" key in .service file"));
	free(err);
	err = NULL;
	assert(parse("Name=a\n", "/d/e.service", &f, &err) == -EBADMSG);
	assert(strstr(err, "key=value before [Section]"));
	free(err);
	err = NULL;

	/* NUL bytes are invalid UTF-8 for dbus */
	{
		const char c[] = "[D-BUS Service]\nName=a\0b\nExec=x\n";

		assert(service_file_parse(c, sizeof(c) - 1, "/d/e.service", &f, &err) == -EBADMSG);
		assert(strstr(err, "invalid UTF-8"));
		free(err);
		err = NULL;
	}

	/* NULL ret_error */
	assert(parse("[x\n", "/d/e.service", &f, NULL) == -EBADMSG);
	assert(!f);
}

static void test_size_limit(void) {
	_cleanup_(service_file_freep) ServiceFile *f = NULL;
	_cleanup_free_ char *err = NULL, *big = NULL, *path = NULL;
	const char *head = "[D-BUS Service]\nName=org.test.Big\nExec=/x\n";
	size_t n = 128 * 1024;

	big = malloc(n + 2);
	memset(big, '\n', n + 1);
	memcpy(big, head, strlen(head));
	big[n + 1] = '\0';

	/* exactly 128 KiB is fine, one more byte is not */
	assert(service_file_parse(big, n, "/d/big.service", &f, NULL) == 0);
	f = service_file_free(f);
	assert(service_file_parse(big, n + 1, "/d/big.service", &f, &err) == -EFBIG);
	free(err);
	err = NULL;

	write_file("big.service", big, n + 1);
	assert(asprintf(&path, "%s/big.service", tmpdir) >= 0);
	assert(service_file_load(path, &f, &err) == -EFBIG);
	assert(strstr(err, "too large"));
}

static void test_load(void) {
	_cleanup_(service_file_freep) ServiceFile *f = NULL;
	_cleanup_free_ char *err = NULL, *path = NULL;

	write_str("org.test.Load.service", "[D-BUS Service]\nName=org.test.Load\nExec=/bin/load\n");
	assert(asprintf(&path, "%s/org.test.Load.service", tmpdir) >= 0);
	assert(service_file_load(path, &f, &err) == 0);
	assert(streq(f->name, "org.test.Load") && f->name_matches_filename && f->mtime_usec > 0);
	f = service_file_free(f);

	free(path);
	assert(asprintf(&path, "%s/nonexistent.service", tmpdir) >= 0);
	assert(service_file_load(path, &f, &err) == -ENOENT);
	free(err);
	err = NULL;

	assert(service_file_load(tmpdir, &f, &err) == -EINVAL);
	assert(strstr(err, "not a regular file"));
}

static void test_name_valid(void) {
	static const char *const good[] = {
		"org.example.Foo", "a.b", "a-b.c_d", "_a._b", "org.test.Hyphen-x", "A.B.C.D.E",
	};
	static const char *const bad[] = {
		"", "org", ":1.5", ".a.b", "a.b.", "a..b", "1a.b", "a.1b", "a.b c", "a.b/c", "a.é",
		NULL,
	};
	char longname[300];

	for (size_t i = 0; i < ELEMENTSOF(good); i++)
		assert(service_name_is_valid(good[i]));
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		assert(!service_name_is_valid(bad[i]));

	memset(longname, 'a', sizeof(longname));
	longname[1] = '.';
	longname[255] = '\0';
	assert(service_name_is_valid(longname));
	longname[255] = 'a';
	longname[256] = '\0';
	assert(!service_name_is_valid(longname));
}

static void test_dir_scan(void) {
	char d1[4200], d2[4200], d3[4200], d4[4200];
	char *dirs[6];
	unsigned flags[5] = { 0, 0, SERVICE_DIR_STRICT_NAMING, 0, 0 };
	ServiceFile **files = NULL;
	char **warnings = NULL;
	size_t n = 0;

	snprintf(d1, sizeof(d1), "%s/d1", tmpdir);
	snprintf(d2, sizeof(d2), "%s/d2/", tmpdir);
	snprintf(d3, sizeof(d3), "%s/d3", tmpdir);
	snprintf(d4, sizeof(d4), "%s/d4", tmpdir);
	assert(mkdir(d1, 0755) == 0 && mkdir(d2, 0755) == 0 && mkdir(d3, 0755) == 0);
	write_str("d1/b.service", "[D-BUS Service]\nName=org.test.Dup\nExec=/d1/b\n");
	write_str("d1/a.service", "[D-BUS Service]\nName=org.test.Dup\nExec=/d1/a\n");
	write_str("d1/org.test.One.service", "[D-BUS Service]\nName=org.test.One\nExec=/d1/one\n");
	write_str("d1/broken.service", "[D-BUS Service]\nName=org.test.Broken\n");
	write_str("d1/ignored.txt", "[D-BUS Service]\nName=org.test.Txt\nExec=/x\n");
	write_str("d1/.service", "[D-BUS Service]\nName=org.test.DotService\nExec=/x\n");
	write_str("d2/org.test.One.service", "[D-BUS Service]\nName=org.test.One\nExec=/d2/one\n");
	write_str("d2/org.test.Two.service", "[D-BUS Service]\nName=org.test.Two\nExec=/d2/two\n");
	/* d3 is strict: mismatched names are skipped and do not reserve the name */
	write_str("d3/wrong.service", "[D-BUS Service]\nName=org.test.Three\nExec=/d3/wrong\n");
	write_str("d3/org.test.Strict.service", "[D-BUS Service]\nName=org.test.Strict\nExec=/d3/strict\n");
	assert(mkdir(d4, 0755) == 0);
	write_str("d4/org.test.Three.service", "[D-BUS Service]\nName=org.test.Three\nExec=/d4/three\n");

	dirs[0] = d1;
	dirs[1] = d2;
	dirs[2] = d3;
	dirs[3] = (char *)"/nonexistent/dir";
	dirs[4] = d4;
	dirs[5] = NULL;
	flags[3] = 0;
	flags[4] = 0;

	assert(service_dir_scan_full(dirs, flags, 0, &files, &n, &warnings) == 0);
	assert(n == 6);
	/* d1 in readdir() order, as dbus-daemon: of a.service and b.service
	 * (one Name) the first one read wins */
	{
		const char *first_dup = NULL;
		const char *want[3];
		size_t k = 0;
		DIR *d = opendir(d1);
		struct dirent *de;

		assert(d);
		while ((de = readdir(d))) {
			if (streq(de->d_name, ".service"))
				want[k++] = "org.test.DotService";
			else if (streq(de->d_name, "org.test.One.service"))
				want[k++] = "org.test.One";
			else if (!first_dup && (streq(de->d_name, "a.service") || streq(de->d_name, "b.service"))) {
				first_dup = streq(de->d_name, "a.service") ? "/d1/a" : "/d1/b";
				want[k++] = "org.test.Dup";
			}
		}
		closedir(d);
		assert(k == 3);
		for (size_t i = 0; i < 3; i++) {
			assert(streq(files[i]->name, want[i]) && files[i]->dir_index == 0);
			if (streq(want[i], "org.test.Dup"))
				assert(streq(files[i]->exec, first_dup));
			if (streq(want[i], "org.test.One"))
				assert(streq(files[i]->exec, "/d1/one"));
		}
	}
	assert(streq(files[3]->name, "org.test.Two") && files[3]->dir_index == 1);
	assert(strstr(files[3]->path, "/d2/org.test.Two.service") && !strstr(files[3]->path, "//"));
	assert(streq(files[4]->name, "org.test.Strict") && files[4]->dir_index == 2);
	assert(streq(files[5]->name, "org.test.Three") && streq(files[5]->exec, "/d4/three"));
	assert(warnings);
	{
		bool strict = false, dup = false, broken = false;

		for (char **w = warnings; *w; w++) {
			strict |= !!strstr(*w, "should have been named \"org.test.Three.service\": not loading it");
			dup |= !!strstr(*w, "Service org.test.Dup already exists");
			broken |= !!strstr(*w, "broken.service") && !!strstr(*w, "No \"Exec\" key");
		}
		assert(strict && dup && broken);
	}
	files = service_files_free(files, n);
	strv_free(warnings);
	warnings = NULL;

	/* with a launch helper, mismatches are warnings only */
	assert(service_dir_scan_full(dirs, NULL, SERVICE_SCAN_SERVICEHELPER, &files, &n, &warnings) == 0);
	assert(n == 6);
	assert(streq(files[5]->name, "org.test.Three") && streq(files[5]->exec, "/d3/wrong"));
	{
		bool helper = false;

		for (char **w = warnings; *w; w++)
			helper |= !!strstr(*w, "will not work with system bus activation");
		assert(helper);
	}
	files = service_files_free(files, n);
	strv_free(warnings);

	/* plain */
	assert(service_dir_scan(dirs, &files, &n) == 0);
	assert(n == 6);
	files = service_files_free(files, n);

	/* no dirs */
	assert(service_dir_scan(NULL, &files, &n) == 0 && n == 0 && !files);
}

/* the caller knows org.test.Known.service as it is (mtime 1000): only the
 * other file is loaded; a modified one is loaded again */
static bool knows(const char *path, const char *filename, int64_t mtime_sec, void *userdata) {
	(*(int *) userdata)++;
	return streq(filename, "org.test.Known.service") && mtime_sec <= 1000;
}

static void test_dir_scan_known(void) {
	char d[4200], path[4300];
	char *dirs[2] = { d, NULL };
	ServiceFile **files = NULL;
	size_t n = 0;
	int asked = 0;

	snprintf(d, sizeof(d), "%s/known", tmpdir);
	assert(mkdir(d, 0755) == 0);
	write_str("known/org.test.Known.service", "[D-BUS Service]\nName=org.test.Known\nExec=/k\n");
	write_str("known/org.test.New.service", "[D-BUS Service]\nName=org.test.New\nExec=/n\n");
	snprintf(path, sizeof(path), "%s/org.test.Known.service", d);
	struct timespec ts[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
	assert(utimensat(AT_FDCWD, path, ts, 0) == 0);

	assert(service_dir_scan_known(dirs, NULL, 0, knows, &asked, &files, &n, NULL) == 0);
	assert(asked == 2 && n == 1 && streq(files[0]->name, "org.test.New"));
	files = service_files_free(files, n);

	ts[1].tv_sec = 1001;
	assert(utimensat(AT_FDCWD, path, ts, 0) == 0);
	assert(service_dir_scan_known(dirs, NULL, 0, knows, &asked, &files, &n, NULL) == 0);
	assert(n == 2);
	files = service_files_free(files, n);

	/* without an answer, everything */
	assert(service_dir_scan_known(dirs, NULL, 0, NULL, NULL, &files, &n, NULL) == 0);
	assert(n == 2);
	service_files_free(files, n);
}

static void test_installed(void) {
	static const char *const dirs_ok[] = {
		"/usr/lib/dbus-1.0/installed-tests/dbus/data/valid-service-files",
		"/usr/lib/dbus-1.0/installed-tests/dbus/data/valid-service-files-system",
		"/usr/lib/dbus-1.0/installed-tests/dbus/data/systemd-activation",
		NULL,
	};
	ServiceFile **files = NULL;
	size_t n = 0;

	if (access(dirs_ok[0], R_OK) < 0) {
		test_skip("installed dbus test data not found");
		return;
	}
	assert(service_dir_scan((char **)dirs_ok, &files, &n) == 0);
	/* 6 + 4 (duplicates of the first dir) + 13, minus duplicates */
	assert(n >= 17);
	for (size_t i = 0; i < n; i++) {
		assert(files[i]->name_valid && files[i]->name_matches_filename);
		if (streq(files[i]->name, "com.example.SystemdActivatable3")) {
			assert(streq(files[i]->systemd_service, "dbus-com.example.SystemdActivatable3.service"));
			assert(strstr(files[i]->assumed_apparmor_label, "test-apparmor-activation"));
		}
		if (streq(files[i]->name, "org.freedesktop.DBus.TestSuiteShellEchoServiceFail")) {
			char **argv = NULL;

			/* loads fine, fails to split */
			assert(service_exec_split(files[i]->exec, &argv) == -EINVAL);
		}
	}
	files = service_files_free(files, n);

	/* invalid-service-files-system: these lack keys */
	{
		_cleanup_(service_file_freep) ServiceFile *f = NULL;

		assert(service_file_load("/usr/lib/dbus-1.0/installed-tests/dbus/data/invalid-service-files-system/"
					 "org.freedesktop.DBus.TestSuiteNoExec.service", &f, NULL) == -EBADMSG);
		assert(service_file_load("/usr/lib/dbus-1.0/installed-tests/dbus/data/invalid-service-files-system/"
					 "org.freedesktop.DBus.TestSuiteNoService.service", &f, NULL) == -EBADMSG);
		/* no User= is fine for the file itself (the launch helper needs it) */
		assert(service_file_load("/usr/lib/dbus-1.0/installed-tests/dbus/data/invalid-service-files-system/"
					 "org.freedesktop.DBus.TestSuiteNoUser.service", &f, NULL) == 0);
		assert(!f->user);
	}
}

static void check_split(const char *exec, const char *const *expect) {
	char **argv = NULL;
	size_t i;

	if (service_exec_split(exec, &argv) < 0) {
		fprintf(stderr, "split failed: [%s]\n", exec);
		abort();
	}
	for (i = 0; expect[i]; i++) {
		if (!argv[i] || !streq(argv[i], expect[i])) {
			fprintf(stderr, "split [%s]: arg %zu is [%s], expected [%s]\n", exec, i,
				argv[i] ? argv[i] : "(null)", expect[i]);
			abort();
		}
	}
	if (argv[i]) {
		fprintf(stderr, "split [%s]: extra arg [%s]\n", exec, argv[i]);
		abort();
	}
	strv_free(argv);
}

#define SPLIT(exec, ...) check_split(exec, (const char *const[]) { __VA_ARGS__, NULL })

static void test_exec_split(void) {
	char **argv = NULL;

	SPLIT("/bin/foo", "/bin/foo");
	SPLIT("/bin/foo a b", "/bin/foo", "a", "b");
	/* trailing blanks add an empty argument (dbus-daemon quirk, checked) */
	SPLIT("/bin/foo a b ", "/bin/foo", "a", "b", "");
	SPLIT("   a    b", "a", "b");
	SPLIT("\ta\tb", "a", "b");
	SPLIT("x 'x y' \"p q\"", "x", "x y", "p q");
	SPLIT("x foo#bar baz", "x", "foo");
	SPLIT("x #c", "x", "");
	SPLIT("x '' \"\"  x\"\"y", "x", "", "", "xy");
	SPLIT("x a\nb \"c\nd\"", "x", "a", "b", "c\nd");
	SPLIT("x \"$HOME\" `x` ~", "x", "$HOME", "`x`", "~");
	SPLIT("x a\"b c\"d e'f g'h", "x", "ab cd", "ef gh");
	SPLIT("x \"a\\\"b\" \"c\\d\" 'e\\f' x\\sy \\\\ \"g\\\\h\" \"$\\$\" \"`\" 'it'\\''s' #c",
	      "x", "a\"b", "c\\d", "e\\f", "xsy", "\\", "g\\h", "$$", "`", "it's", "");
	SPLIT("x a\\\\", "x", "a\\");
	SPLIT("x x\\\\\\ny", "x", "x\\ny");
	SPLIT("x \"a\\\\\\\"b\"", "x", "a\\\"b");
	SPLIT("x a\\\nb", "x", "ab");
	SPLIT("x \"a\\\nb\"", "x", "a\nb");
	SPLIT("x a#c\nb", "x", "ab");
	SPLIT("x a\n\nb", "x", "a", "", "b");
	/* an empty Exec is one empty argument (exec then fails with ENOENT) */
	SPLIT("", "");
	SPLIT(" ", "");

	assert(service_exec_split("x \"unterminated", &argv) == -EINVAL);
	assert(service_exec_split("x 'unterminated", &argv) == -EINVAL);
	assert(service_exec_split("x ab\\", &argv) == -EINVAL);
	assert(service_exec_split("x \"a\\\"", &argv) == -EINVAL);
	assert(service_exec_split("/usr/lib/dbus-1.0/installed-tests/dbus/test-shell-service \"this should 'fail' "
				  "because of an unterminated quote", &argv) == -EINVAL);
	SPLIT("/usr/lib/dbus-1.0/installed-tests/dbus/test-shell-service -test \"that\" 'we get' back --what \"we put in\"",
	      "/usr/lib/dbus-1.0/installed-tests/dbus/test-shell-service", "-test", "that", "we get", "back",
	      "--what", "we put in");
}

int main(void) {
	assert(mkdtemp(tmpdir));

	RUN(basic);
	RUN(first_wins);
	RUN(syntax);
	RUN(errors);
	RUN(size_limit);
	RUN(load);
	RUN(name_valid);
	RUN(dir_scan);
	RUN(dir_scan_known);
	RUN(installed);
	RUN(exec_split);

	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		(void) !system(cmd);
	}
	return test_done();
}
