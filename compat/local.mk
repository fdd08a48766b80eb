# compat: sources, programs and tests of this component

# --- wire format, match rules, bloom filters (owner: wire) -----------------
noinst_LIBRARIES += compat/libcompat.a
compat_libcompat_a_SOURCES = \
	compat/wire.c compat/wire.h compat/protocol.h \
	compat/match-rule.c compat/match-rule.h \
	compat/match-key.c compat/match-key.h \
	compat/siphash.c compat/siphash.h \
	compat/bloom.c compat/bloom.h

check_PROGRAMS += tests/unit/test-wire tests/unit/test-match-rule tests/unit/test-bloom
tests_unit_test_wire_SOURCES = tests/unit/test-wire.c
tests_unit_test_wire_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS)
tests_unit_test_wire_LDADD = compat/libcompat.a $(DBUS_LIBS)
tests_unit_test_match_rule_SOURCES = tests/unit/test-match-rule.c
tests_unit_test_match_rule_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS)
tests_unit_test_match_rule_LDADD = compat/libcompat.a $(DBUS_LIBS)
tests_unit_test_bloom_SOURCES = tests/unit/test-bloom.c
tests_unit_test_bloom_LDADD = compat/libcompat.a
TESTS += tests/unit/test-wire tests/unit/test-match-rule tests/unit/test-bloom

# the fuzz target's reproducer: runs it over the checked-in corpus
check_PROGRAMS += tests/fuzz/fuzz-wire-repro
tests_fuzz_fuzz_wire_repro_SOURCES = tests/fuzz/fuzz-wire.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_wire_repro_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/wire"'
tests_fuzz_fuzz_wire_repro_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS)
tests_fuzz_fuzz_wire_repro_LDADD = compat/libcompat.a $(DBUS_LIBS)
TESTS += tests/fuzz/fuzz-wire-repro
EXTRA_DIST += tests/fuzz/corpus/wire

if ENABLE_FUZZING
# libFuzzer binary; the library sources are compiled in for coverage
noinst_PROGRAMS += tests/fuzz/fuzz-wire
tests_fuzz_fuzz_wire_SOURCES = tests/fuzz/fuzz-wire.c compat/wire.c compat/wire.h
tests_fuzz_fuzz_wire_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_wire_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_wire_LDADD = $(DBUS_LIBS)
endif
# --- end wire ----------------------------------------------------------------

# the body reader, against libdbus (tests/unit/test-wire-reader.c) and its
# fuzz target (tests/fuzz/fuzz-wire-reader.c)
check_PROGRAMS += tests/unit/test-wire-reader tests/fuzz/fuzz-wire-reader-repro
tests_unit_test_wire_reader_SOURCES = tests/unit/test-wire-reader.c
tests_unit_test_wire_reader_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS)
tests_unit_test_wire_reader_LDADD = compat/libcompat.a $(DBUS_LIBS)
tests_fuzz_fuzz_wire_reader_repro_SOURCES = tests/fuzz/fuzz-wire-reader.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_wire_reader_repro_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/wire-reader"'
tests_fuzz_fuzz_wire_reader_repro_LDADD = compat/libcompat.a
TESTS += tests/unit/test-wire-reader tests/fuzz/fuzz-wire-reader-repro
EXTRA_DIST += tests/fuzz/corpus/wire-reader

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-wire-reader
tests_fuzz_fuzz_wire_reader_SOURCES = tests/fuzz/fuzz-wire-reader.c compat/wire.c compat/wire.h
tests_fuzz_fuzz_wire_reader_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_wire_reader_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
endif

# match rules (tests/fuzz/fuzz-match-rule.c)
check_PROGRAMS += tests/fuzz/fuzz-match-rule-repro
tests_fuzz_fuzz_match_rule_repro_SOURCES = tests/fuzz/fuzz-match-rule.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_match_rule_repro_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/match-rule"'
tests_fuzz_fuzz_match_rule_repro_LDADD = compat/libcompat.a
TESTS += tests/fuzz/fuzz-match-rule-repro
EXTRA_DIST += tests/fuzz/corpus/match-rule

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-match-rule
tests_fuzz_fuzz_match_rule_SOURCES = tests/fuzz/fuzz-match-rule.c compat/match-rule.c compat/match-rule.h compat/wire.c compat/wire.h
tests_fuzz_fuzz_match_rule_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_match_rule_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
endif

# --- dbus1 <-> kdbus translation (owner: lead) ---
compat_libcompat_a_SOURCES += compat/message.c compat/message.h
check_PROGRAMS += tests/unit/test-message tests/unit/test-idmap
tests_unit_test_message_SOURCES = tests/unit/test-message.c
tests_unit_test_message_LDADD = compat/libcompat.a
tests_unit_test_idmap_SOURCES = tests/unit/test-idmap.c
TESTS += tests/unit/test-message tests/unit/test-idmap
# --- end translation ---

# --- the daemon's kdbus commands ---
compat_libcompat_a_SOURCES += compat/kdbus-client.c compat/kdbus-client.h
check_PROGRAMS += tests/unit/test-kdbus-client
tests_unit_test_kdbus_client_SOURCES = tests/unit/test-kdbus-client.c
tests_unit_test_kdbus_client_LDADD = compat/libcompat.a kdbus/libkdbus.a
TESTS += tests/unit/test-kdbus-client
# --- end kdbus commands ---

# --- the order dbus-daemon lists names in (libdbus hash table iteration) ---
compat_libcompat_a_SOURCES += compat/hash-order.c compat/hash-order.h
check_PROGRAMS += tests/unit/test-hash-order
tests_unit_test_hash_order_SOURCES = tests/unit/test-hash-order.c
tests_unit_test_hash_order_LDADD = compat/libcompat.a
TESTS += tests/unit/test-hash-order
# --- end hash order ---

# --- SASL server and cookie keyring (owner: auth) ---
compat_libcompat_a_SOURCES += compat/auth.c compat/auth.h compat/keyring.c compat/keyring.h
check_PROGRAMS += tests/unit/test-auth
tests_unit_test_auth_SOURCES = tests/unit/test-auth.c
tests_unit_test_auth_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS) $(SYSTEMD_CFLAGS)
tests_unit_test_auth_LDADD = compat/libcompat.a $(DBUS_LIBS) $(SYSTEMD_LIBS)
TESTS += tests/unit/test-auth

check_PROGRAMS += tests/fuzz/fuzz-auth-repro
tests_fuzz_fuzz_auth_repro_SOURCES = tests/fuzz/fuzz-auth.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_auth_repro_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/auth"'
tests_fuzz_fuzz_auth_repro_LDADD = compat/libcompat.a
TESTS += tests/fuzz/fuzz-auth-repro
EXTRA_DIST += tests/fuzz/corpus/auth

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-auth
tests_fuzz_fuzz_auth_SOURCES = tests/fuzz/fuzz-auth.c compat/auth.c compat/auth.h compat/keyring.c compat/keyring.h \
	compat/wire.c compat/wire.h
tests_fuzz_fuzz_auth_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_auth_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
endif
# --- end auth ---

# --- .service files (owner: policy) ---
compat_libcompat_a_SOURCES += compat/service-file.c compat/service-file.h
check_PROGRAMS += tests/unit/test-service-file
tests_unit_test_service_file_SOURCES = tests/unit/test-service-file.c
tests_unit_test_service_file_LDADD = compat/libcompat.a
TESTS += tests/unit/test-service-file

check_PROGRAMS += tests/fuzz/fuzz-service-file-repro
tests_fuzz_fuzz_service_file_repro_SOURCES = tests/fuzz/fuzz-service-file.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_service_file_repro_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/service-file"'
tests_fuzz_fuzz_service_file_repro_LDADD = compat/libcompat.a
TESTS += tests/fuzz/fuzz-service-file-repro
EXTRA_DIST += tests/fuzz/corpus/service-file

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-service-file
tests_fuzz_fuzz_service_file_SOURCES = tests/fuzz/fuzz-service-file.c compat/service-file.c compat/service-file.h \
	compat/wire.c compat/wire.h
tests_fuzz_fuzz_service_file_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_service_file_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
endif
# --- end service files ---
