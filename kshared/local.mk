# kshared: pure kdbus semantics compiled into both the userspace core
# (here, into kdbus/libkdbus.a) and kdbus.ko (kmod/kshared-*.c include the
# same files); see kshared/README.md
kdbus_libkdbus_a_SOURCES += \
	kshared/platform.h \
	kshared/name.h kshared/name.c \
	kshared/names.h \
	kshared/policy.h \
	kshared/bloom.h
EXTRA_DIST += kshared/README.md

check_PROGRAMS += tests/unit/test-kshared
tests_unit_test_kshared_SOURCES = tests/unit/test-kshared.c
tests_unit_test_kshared_LDADD = kdbus/libkdbus.a
TESTS += tests/unit/test-kshared
