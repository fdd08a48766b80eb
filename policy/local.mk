# policy: sources, programs and tests of this component

# --- policy/libpolicy.a: busconfig XML loader (expat) and the dbus-daemon
# policy decisions (send / receive / own / connect).
noinst_LIBRARIES += policy/libpolicy.a
policy_libpolicy_a_SOURCES = \
	policy/config.c policy/config-parser.c policy/config-model.h policy/config.h \
	policy/policy.c policy/policy.h
policy_libpolicy_a_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)

check_PROGRAMS += tests/unit/test-config
tests_unit_test_config_SOURCES = tests/unit/test-config.c
tests_unit_test_config_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
tests_unit_test_config_LDADD = policy/libpolicy.a $(EXPAT_LIBS)
TESTS += tests/unit/test-config

check_PROGRAMS += tests/unit/test-policy
tests_unit_test_policy_SOURCES = tests/unit/test-policy.c
tests_unit_test_policy_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
tests_unit_test_policy_LDADD = policy/libpolicy.a $(EXPAT_LIBS)
TESTS += tests/unit/test-policy

# --- fuzzing: the reproducer runs the target over the checked-in corpus;
# the libFuzzer binary needs clang and --enable-fuzzing
check_PROGRAMS += tests/fuzz/fuzz-config-repro
tests_fuzz_fuzz_config_repro_SOURCES = tests/fuzz/fuzz-config.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_config_repro_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/config"'
tests_fuzz_fuzz_config_repro_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
tests_fuzz_fuzz_config_repro_LDADD = policy/libpolicy.a $(EXPAT_LIBS)
TESTS += tests/fuzz/fuzz-config-repro
EXTRA_DIST += tests/fuzz/corpus/config

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-config
tests_fuzz_fuzz_config_SOURCES = tests/fuzz/fuzz-config.c policy/config.c policy/config-parser.c policy/config-model.h policy/config.h policy/policy.c policy/policy.h
tests_fuzz_fuzz_config_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_config_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_config_LDADD = $(EXPAT_LIBS)
endif

# --- policy compiler: kdbus policy entries + residual rules (policy/compile.h),
# the busbridge-policy tool, its unit test and the differential test.
policy_libpolicy_a_SOURCES += policy/compile.c policy/compile.h

bin_PROGRAMS += policy/busbridge-policy
policy_busbridge_policy_SOURCES = policy/busbridge-policy.c
policy_busbridge_policy_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
policy_busbridge_policy_LDADD = policy/libpolicy.a compat/libcompat.a $(EXPAT_LIBS)
dist_man_MANS += doc/busbridge-policy.1
EXTRA_DIST += doc/policy.md

check_PROGRAMS += tests/unit/test-compile
tests_unit_test_compile_SOURCES = tests/unit/test-compile.c
tests_unit_test_compile_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
tests_unit_test_compile_LDADD = policy/libpolicy.a kdbus/libkdbus.a $(EXPAT_LIBS)
TESTS += tests/unit/test-compile

# policy compile (tests/fuzz/fuzz-policy-compile.c, built on test-compile.c)
check_PROGRAMS += tests/fuzz/fuzz-policy-compile-repro
tests_fuzz_fuzz_policy_compile_repro_SOURCES = tests/fuzz/fuzz-policy-compile.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_policy_compile_repro_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/policy-compile"'
tests_fuzz_fuzz_policy_compile_repro_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
tests_fuzz_fuzz_policy_compile_repro_LDADD = policy/libpolicy.a kdbus/libkdbus.a $(EXPAT_LIBS)
TESTS += tests/fuzz/fuzz-policy-compile-repro
EXTRA_DIST += tests/fuzz/corpus/policy-compile

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-policy-compile
tests_fuzz_fuzz_policy_compile_SOURCES = tests/fuzz/fuzz-policy-compile.c policy/config.c policy/config-parser.c policy/config-model.h policy/config.h policy/policy.c policy/policy.h policy/compile.c policy/compile.h
tests_fuzz_fuzz_policy_compile_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_policy_compile_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_policy_compile_LDADD = kdbus/libkdbus.a $(EXPAT_LIBS)
endif

# tests/policy-diff/run.sh BUSBRIDGED: dbus-daemon vs busbridged, needs root
EXTRA_DIST += \
	tests/policy-diff/run.sh \
	tests/policy-diff/setup-packages.sh \
	tests/policy-diff/probe.py \
	tests/policy-diff/configs
