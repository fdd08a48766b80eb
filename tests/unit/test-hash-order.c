/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-hash-order.c - compat/hash-order: sequences of inserts and removals
 * whose iteration order was read from dbus-daemon 1.14's ListNames after
 * the same sequence of Hello, RequestName, ReleaseName and disconnections
 * (the order there is that of its name registry's hash table), through the
 * growths at 12 and 48 keys and the shrinks an insert makes after removals.
 */
#undef NDEBUG
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/hash-order.h"
#include "util/macro.h"

static unsigned n_passed, n_failed;

#define check(expr)                                                              \
	do {                                                                     \
		if (expr)                                                        \
			n_passed++;                                              \
		else {                                                           \
			n_failed++;                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,  \
				__LINE__, #expr);                                \
		}                                                                \
	} while (0)

/* the keys of @t in iteration order, separated by spaces */
static char *keys_of(const HashOrder *t) {
	size_t size = 1;
	for (const HashOrderEntry *e = hash_order_first(t); e; e = hash_order_next(t, e))
		size += strlen(hash_order_entry_key(e)) + 1;
	char *s = calloc(1, size), *p = s;
	assert(s);
	for (const HashOrderEntry *e = hash_order_first(t); e; e = hash_order_next(t, e))
		p += sprintf(p, "%s%s", p == s ? "" : " ", hash_order_entry_key(e));
	return s;
}

static void check_order(const HashOrder *t, const char *expected) {
	_cleanup_free_ char *got = keys_of(t);
	check(streq(got, expected));
	if (!streq(got, expected))
		fprintf(stderr, "  expected: %s\n  got:      %s\n", expected, got);
}

static void insert_n(HashOrder *t, unsigned n) {
	char name[64];
	snprintf(name, sizeof(name), "org.example.N%u", n);
	check(hash_order_insert(t, name) == 1);
}

static void remove_n(HashOrder *t, unsigned n) {
	char name[64];
	snprintf(name, sizeof(name), "org.example.N%u", n);
	check(hash_order_remove(t, name));
}

/*
 * :1.0 and :1.1 say Hello, :1.1 requests org.example.N0 .. N49 (the table
 * grows to 16 and 64 buckets), releases N0 .. N39 (removals never
 * rebuild), requests N100 (13 keys: shrinks to 16), releases N40 .. N47
 * and requests N101 (6 keys: shrinks to 4).
 */
static void test_growth_and_shrink(void) {
	_cleanup_(hash_order_freep) HashOrder *t = NULL;

	assert(hash_order_new(&t) == 0);
	check(hash_order_n_buckets(t) == 4);
	check(hash_order_insert(t, ":1.0") == 1);
	check(hash_order_insert(t, ":1.1") == 1);
	for (unsigned i = 0; i < 10; i++)
		insert_n(t, i);
	check(hash_order_n_buckets(t) == 16);
	check_order(t, "org.example.N0 org.example.N1 org.example.N2 org.example.N3 org.example.N4 "
		       "org.example.N5 org.example.N6 org.example.N7 org.example.N8 :1.0 org.example.N9 :1.1");
	for (unsigned i = 10; i < 50; i++)
		insert_n(t, i);
	check(hash_order_n_buckets(t) == 64);
	check(hash_order_size(t) == 52);
	check_order(t, "org.example.N22 org.example.N44 org.example.N23 org.example.N45 org.example.N46 "
		       "org.example.N24 org.example.N47 org.example.N25 org.example.N48 org.example.N26 "
		       "org.example.N49 org.example.N27 org.example.N28 org.example.N29 org.example.N30 "
		       "org.example.N31 org.example.N10 org.example.N32 org.example.N11 org.example.N33 "
		       "org.example.N12 org.example.N34 org.example.N13 org.example.N35 org.example.N14 "
		       "org.example.N36 org.example.N15 org.example.N37 org.example.N16 org.example.N38 "
		       "org.example.N17 org.example.N39 org.example.N18 org.example.N19 org.example.N0 "
		       "org.example.N1 org.example.N2 org.example.N3 org.example.N4 org.example.N5 "
		       "org.example.N6 org.example.N7 org.example.N8 org.example.N9 :1.0 :1.1 "
		       "org.example.N40 org.example.N41 org.example.N20 org.example.N42 org.example.N21 "
		       "org.example.N43");
	for (unsigned i = 0; i < 40; i++)
		remove_n(t, i);
	check(hash_order_n_buckets(t) == 64);
	check_order(t, "org.example.N44 org.example.N45 org.example.N46 org.example.N47 org.example.N48 "
		       "org.example.N49 :1.0 :1.1 org.example.N40 org.example.N41 org.example.N42 "
		       "org.example.N43");
	insert_n(t, 100);
	check(hash_order_n_buckets(t) == 16);
	check_order(t, "org.example.N44 org.example.N100 org.example.N45 org.example.N46 org.example.N47 "
		       "org.example.N48 org.example.N49 :1.0 :1.1 org.example.N40 org.example.N41 "
		       "org.example.N42 org.example.N43");
	for (unsigned i = 40; i < 48; i++)
		remove_n(t, i);
	insert_n(t, 101);
	check(hash_order_n_buckets(t) == 4);
	check_order(t, "org.example.N48 :1.0 org.example.N49 org.example.N100 :1.1 org.example.N101");
}

/*
 * :1.0 says Hello; then each of 14 connections (:1.1 .. :1.14) says Hello
 * and requests one name; the 3rd, 5th, 7th, 9th and 11th disconnect (their
 * name, then their unique name go); three more connections say Hello.
 */
static void test_connections(void) {
	static const char *const names[] = {
		"org.freedesktop.Notifications", "org.gnome.Shell", "org.freedesktop.portal.Desktop",
		"ca.desrt.dconf", "org.a11y.Bus", "org.freedesktop.secrets", "com.example.Owned",
		"com.example.Two", "org.mpris.MediaPlayer2.vlc", "net.x", "org.kde.StatusNotifierWatcher",
		"org.freedesktop.FileManager1", "org.gtk.vfs.Daemon",
		"org.freedesktop.impl.portal.PermissionStore",
	};
	_cleanup_(hash_order_freep) HashOrder *t = NULL;
	char unique[16];

	assert(hash_order_new(&t) == 0);
	check(hash_order_insert(t, ":1.0") == 1);
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		snprintf(unique, sizeof(unique), ":1.%zu", i + 1);
		check(hash_order_insert(t, unique) == 1);
		check(hash_order_insert(t, names[i]) == 1);
	}
	check_order(t, ":1.7 org.freedesktop.Notifications :1.8 :1.9 org.freedesktop.portal.Desktop "
		       "com.example.Owned org.a11y.Bus org.freedesktop.impl.portal.PermissionStore :1.10 "
		       ":1.11 net.x org.freedesktop.FileManager1 :1.12 org.kde.StatusNotifierWatcher "
		       "org.gnome.Shell org.gtk.vfs.Daemon :1.13 :1.0 :1.14 :1.1 org.mpris.MediaPlayer2.vlc "
		       "com.example.Two org.freedesktop.secrets :1.2 :1.3 :1.4 ca.desrt.dconf :1.5 :1.6");
	for (size_t i = 2; i <= 10; i += 2) {
		snprintf(unique, sizeof(unique), ":1.%zu", i + 1);
		check(hash_order_remove(t, names[i]));
		check(hash_order_remove(t, unique));
	}
	check_order(t, "org.freedesktop.Notifications :1.8 org.freedesktop.impl.portal.PermissionStore "
		       ":1.10 net.x org.freedesktop.FileManager1 :1.12 org.gnome.Shell org.gtk.vfs.Daemon "
		       ":1.13 :1.0 :1.14 :1.1 com.example.Two org.freedesktop.secrets :1.2 :1.4 "
		       "ca.desrt.dconf :1.6");
	check(hash_order_insert(t, ":1.15") == 1);
	check(hash_order_insert(t, ":1.16") == 1);
	check(hash_order_insert(t, ":1.17") == 1);
	check_order(t, "org.freedesktop.Notifications :1.8 org.freedesktop.impl.portal.PermissionStore "
		       ":1.10 net.x org.freedesktop.FileManager1 :1.12 org.gnome.Shell org.gtk.vfs.Daemon "
		       ":1.13 :1.0 :1.14 :1.1 :1.15 com.example.Two org.freedesktop.secrets :1.2 :1.16 "
		       ":1.17 :1.4 ca.desrt.dconf :1.6");
	check(hash_order_size(t) == 22);
}

/* the busdiff driver scenario: a monitor (:1.0 says Hello, then its name
 * goes), :1.1, :1.2, :1.3 say Hello, :1.3 requests two names */
static void test_driver_scenario(void) {
	_cleanup_(hash_order_freep) HashOrder *t = NULL;

	assert(hash_order_new(&t) == 0);
	check(hash_order_insert(t, ":1.0") == 1);
	check(hash_order_remove(t, ":1.0"));
	check(!hash_order_remove(t, ":1.0"));
	check(hash_order_insert(t, ":1.1") == 1);
	check(hash_order_insert(t, ":1.2") == 1);
	check(hash_order_insert(t, ":1.3") == 1);
	check(hash_order_insert(t, "com.example.Owned") == 1);
	check(hash_order_insert(t, "com.example.Two") == 1);
	check_order(t, "com.example.Owned :1.3 :1.1 com.example.Two :1.2");
	/* a key already there keeps its place */
	check(hash_order_insert(t, ":1.1") == 0);
	check_order(t, "com.example.Owned :1.3 :1.1 com.example.Two :1.2");
	check(hash_order_contains(t, ":1.2"));
	check(!hash_order_contains(t, ":1.4"));
}

static void test_sort(void) {
	_cleanup_(hash_order_freep) HashOrder *t = NULL;
	char *names[] = { ":1.2", "not.in.Table", "com.example.Two", ":1.1", "also.not.There",
			  "com.example.Owned", ":1.3" };

	assert(hash_order_new(&t) == 0);
	for (unsigned i = 1; i <= 3; i++) {
		char unique[8];
		snprintf(unique, sizeof(unique), ":1.%u", i);
		check(hash_order_insert(t, unique) == 1);
	}
	check(hash_order_insert(t, "com.example.Owned") == 1);
	check(hash_order_insert(t, "com.example.Two") == 1);
	check(hash_order_sort(t, names, ELEMENTSOF(names)) == 0);
	check(streq(names[0], "com.example.Owned"));
	check(streq(names[1], ":1.3"));
	check(streq(names[2], ":1.1"));
	check(streq(names[3], "com.example.Two"));
	check(streq(names[4], ":1.2"));
	check(streq(names[5], "not.in.Table"));
	check(streq(names[6], "also.not.There"));
}

/* a reset table is a new one: 4 buckets and the same order as a fresh one */
static void test_reset(void) {
	_cleanup_(hash_order_freep) HashOrder *t = NULL, *fresh = NULL;

	assert(hash_order_new(&t) == 0);
	assert(hash_order_new(&fresh) == 0);
	for (unsigned i = 0; i < 60; i++)
		insert_n(t, i);
	check(hash_order_n_buckets(t) == 64);
	hash_order_reset(t);
	check(hash_order_size(t) == 0);
	check(hash_order_n_buckets(t) == 4);
	check(hash_order_first(t) == NULL);
	for (unsigned i = 0; i < 14; i++) {
		insert_n(t, i * 7);
		insert_n(fresh, i * 7);
	}
	_cleanup_free_ char *a = keys_of(t), *b = keys_of(fresh);
	check(streq(a, b));
	check(hash_order_n_buckets(t) == 16);
}

int main(void) {
	test_growth_and_shrink();
	test_connections();
	test_driver_scenario();
	test_sort();
	test_reset();
	printf("test-hash-order: %u passed, %u failed\n", n_passed, n_failed);
	return n_failed ? 1 : 0;
}
