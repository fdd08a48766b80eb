# kdbus: sources, programs and tests of this component

noinst_LIBRARIES += kdbus/libkdbus.a
kdbus_libkdbus_a_SOURCES = \
	kdbus/kdbus.h kdbus/bus.h \
	kdbus/core.h kdbus/bus.c \
	kdbus/connection.h kdbus/connection.c \
	kdbus/message.h kdbus/message.c \
	kdbus/names.h kdbus/names.c \
	kdbus/match.h kdbus/match.c \
	kdbus/policy.h kdbus/policy.c \
	kdbus/pool.h kdbus/pool.c \
	kdbus/queue.h kdbus/queue.c \
	kdbus/reply.h kdbus/reply.c \
	kdbus/metadata.h kdbus/metadata.c \
	kdbus/notify.h kdbus/notify.c \
	kdbus/item.h kdbus/item.c \
	kdbus/user.h kdbus/user.c \
	kdbus/hash.h kdbus/hash.c \
	kdbus/handle.c \
	kdbus/ioctl.h kdbus/ioctl.c

check_PROGRAMS += tests/kdbus/test-kdbus
tests_kdbus_test_kdbus_SOURCES = \
	tests/kdbus/kdbus-test.h \
	tests/kdbus/kdbus-test.c \
	tests/kdbus/kdbus-util.c \
	tests/kdbus/test-bus.c \
	tests/kdbus/test-message.c \
	tests/kdbus/test-names.c \
	tests/kdbus/test-quota.c \
	tests/kdbus/test-activator.c \
	tests/kdbus/test-kernel.c \
	tests/kdbus/test-security.c \
	tests/kdbus/test-endpoint.c
tests_kdbus_test_kdbus_LDADD = kdbus/libkdbus.a
# the kernel module (built with Kbuild by tests/vm/run.sh, not by make)
EXTRA_DIST += kmod
TESTS += tests/kdbus/test-kdbus

check_PROGRAMS += tests/unit/test-kdbus-core
tests_unit_test_kdbus_core_SOURCES = tests/unit/test-kdbus-core.c
tests_unit_test_kdbus_core_LDADD = kdbus/libkdbus.a
TESTS += tests/unit/test-kdbus-core
