# kshared: pure kdbus semantics compiled into both the userspace core
# (here, into kdbus/libkdbus.a) and kdbus.ko (kmod/kshared-*.c include the
# same files); see kshared/README.md
kdbus_libkdbus_a_SOURCES += \
	kshared/platform.h \
	kshared/name.h kshared/name.c \
	kshared/item.h kshared/item.c \
	kshared/names.h \
	kshared/policy.h \
	kshared/bloom.h \
	kshared/match.h
EXTRA_DIST += kshared/README.md

check_PROGRAMS += tests/unit/test-kshared
tests_unit_test_kshared_SOURCES = tests/unit/test-kshared.c
tests_unit_test_kshared_LDADD = kdbus/libkdbus.a
TESTS += tests/unit/test-kshared

# the fuzz target of the item framing (tests/fuzz/fuzz-kshared-items.c), its
# reproducer over the checked-in corpus, and the libFuzzer build
check_PROGRAMS += tests/fuzz/fuzz-kshared-items-repro
tests_fuzz_fuzz_kshared_items_repro_SOURCES = tests/fuzz/fuzz-kshared-items.c tests/fuzz/fuzz-main.c
tests_fuzz_fuzz_kshared_items_repro_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/kshared-items"'
tests_fuzz_fuzz_kshared_items_repro_LDADD = kdbus/libkdbus.a
TESTS += tests/fuzz/fuzz-kshared-items-repro
EXTRA_DIST += tests/fuzz/corpus/kshared-items

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-kshared-items
tests_fuzz_fuzz_kshared_items_SOURCES = tests/fuzz/fuzz-kshared-items.c \
	kshared/item.c kshared/item.h kshared/platform.h
tests_fuzz_fuzz_kshared_items_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_kshared_items_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
endif
