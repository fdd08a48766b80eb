# daemon: the busbridged process
include daemon/listen.mk

noinst_LIBRARIES += daemon/libdaemon.a
daemon_libdaemon_a_SOURCES = \
	daemon/bus.c daemon/bus.h daemon/bus-hooks.h daemon/bus-schedule.c daemon/bus-schedule.h daemon/bus-policy.c daemon/bus-policy.h daemon/bus-stats.h daemon/client-registry.c daemon/client-registry.h \
	daemon/client.c daemon/client.h daemon/client-internal.h daemon/client-describe.c daemon/client-describe.h \
	daemon/client-io.c daemon/out-ring.c daemon/out-ring.h daemon/deliver.c daemon/client-header.c daemon/forward.c daemon/client-policy.c daemon/client-match.c \
	daemon/client-notify.c daemon/answered-calls.c daemon/answered-calls.h daemon/call-overflow.c daemon/call-overflow.h daemon/owed-replies.c daemon/owed-replies.h \
	daemon/kernel-peers.c daemon/kernel-peers.h \
	daemon/driver.c daemon/driver.h daemon/driver-call.c daemon/driver-call.h daemon/driver-messages.c \
	daemon/driver-hello.c daemon/driver-names.c daemon/driver-connection-info.c daemon/driver-introspect.c \
	daemon/driver-stats.c \
	daemon/monitor.c daemon/monitor.h daemon/monitor-sink.c daemon/monitor-sink.h \
	daemon/service-registry.c daemon/service-registry.h daemon/launcher.c daemon/launcher.h \
	daemon/dir-watch.c daemon/dir-watch.h daemon/fd-limit.c daemon/fd-limit.h \
	daemon/log.c daemon/log.h \
	daemon/lsm.c daemon/lsm.h \
	daemon/audit.c daemon/audit.h \
	daemon/apparmor.c daemon/apparmor.h \
	daemon/apparmor-reply.c daemon/apparmor-reply.h \
	daemon/security.c daemon/security.h \
	daemon/selinux.c daemon/selinux.h
daemon_libdaemon_a_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(SYSTEMD_CFLAGS) $(EXPAT_CFLAGS) $(SELINUX_CFLAGS) \
	$(AUDIT_CFLAGS) $(APPARMOR_CFLAGS)

bin_PROGRAMS += daemon/busbridged
daemon_busbridged_SOURCES = daemon/main.c
daemon_busbridged_CFLAGS = $(daemon_libdaemon_a_CFLAGS)
daemon_busbridged_LDADD = daemon/libdaemon.a daemon/liblisten.a policy/libpolicy.a compat/libcompat.a \
	kdbus/libkdbus.a $(LIBEVENT_LIBS) $(SYSTEMD_LIBS) $(EXPAT_LIBS) $(SELINUX_LIBS) $(AUDIT_LIBS) $(APPARMOR_LIBS)

dist_man_MANS += doc/busbridged.1

# the setuid launch helper of system bus activation (doc/activation.md):
# installed root:$(DBUS_USER) mode 4754 when installed by root, as
# dbus-daemon-launch-helper
LAUNCH_HELPER_CPPFLAGS = -DLAUNCH_HELPER_PATH='"$(libexecdir)/busbridge-launch-helper"'
daemon_libdaemon_a_SOURCES += daemon/launch-helper-common.c daemon/launch-helper.h
daemon_libdaemon_a_CPPFLAGS = $(AM_CPPFLAGS) $(LAUNCH_HELPER_CPPFLAGS)
# It is always built with the hardening flags (HELPER_HARDEN_*, even with
# --disable-hardening), from its own objects: the code it shares with the
# daemon (.service files, UTF-8) is compiled for it, not taken from libcompat.a
libexec_PROGRAMS = daemon/busbridge-launch-helper
daemon_busbridge_launch_helper_SOURCES = daemon/launch-helper.c daemon/launch-helper-common.c daemon/launch-helper.h \
	compat/service-file.c compat/wire.c
daemon_busbridge_launch_helper_CPPFLAGS = $(AM_CPPFLAGS) $(HELPER_HARDEN_CPPFLAGS)
daemon_busbridge_launch_helper_CFLAGS = $(AM_CFLAGS) $(HELPER_HARDEN_CFLAGS) $(EXPAT_CFLAGS)
daemon_busbridge_launch_helper_LDFLAGS = $(AM_LDFLAGS) $(HELPER_HARDEN_LDFLAGS)
daemon_busbridge_launch_helper_LDADD = $(EXPAT_LIBS)

install-exec-hook:
	@helper='$(DESTDIR)$(libexecdir)/busbridge-launch-helper'; \
	if test "$$(id -u)" = 0 && getent group '$(DBUS_USER)' >/dev/null; then \
		echo "chown root:$(DBUS_USER) $$helper; chmod 4754 $$helper"; \
		chown root:'$(DBUS_USER)' "$$helper" && chmod 4754 "$$helper"; \
	else \
		echo "Not installing $$helper setuid root (run make install as root, with a group $(DBUS_USER))"; \
	fi

check_PROGRAMS += tests/unit/test-launch-helper
tests_unit_test_launch_helper_SOURCES = tests/unit/test-launch-helper.c daemon/launch-helper-common.c daemon/launch-helper.h
tests_unit_test_launch_helper_CPPFLAGS = $(AM_CPPFLAGS) \
	-DLAUNCH_HELPER_BUILD_PATH='"$(abs_top_builddir)/daemon/busbridge-launch-helper"'
tests_unit_test_launch_helper_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
tests_unit_test_launch_helper_LDADD = compat/libcompat.a $(EXPAT_LIBS)
TESTS += tests/unit/test-launch-helper

# the launch helper's configuration reader (tests/fuzz/fuzz-launch-helper-config.c)
check_PROGRAMS += tests/fuzz/fuzz-launch-helper-config-repro
tests_fuzz_fuzz_launch_helper_config_repro_SOURCES = tests/fuzz/fuzz-launch-helper-config.c tests/fuzz/fuzz-main.c \
	daemon/launch-helper-common.c
tests_fuzz_fuzz_launch_helper_config_repro_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/launch-helper-config"'
tests_fuzz_fuzz_launch_helper_config_repro_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS)
tests_fuzz_fuzz_launch_helper_config_repro_LDADD = compat/libcompat.a $(EXPAT_LIBS)
TESTS += tests/fuzz/fuzz-launch-helper-config-repro
EXTRA_DIST += tests/fuzz/corpus/launch-helper-config

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-launch-helper-config
tests_fuzz_fuzz_launch_helper_config_SOURCES = tests/fuzz/fuzz-launch-helper-config.c daemon/launch-helper-common.c
tests_fuzz_fuzz_launch_helper_config_CFLAGS = $(AM_CFLAGS) $(EXPAT_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_launch_helper_config_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_launch_helper_config_LDADD = $(EXPAT_LIBS)
endif

# which LSMs would mediate the bus on dbus-daemon (fake sysfs, mounts)
check_PROGRAMS += tests/unit/test-apparmor-reply
tests_unit_test_apparmor_reply_SOURCES = tests/unit/test-apparmor-reply.c daemon/apparmor-reply.c \
	daemon/apparmor-reply.h
TESTS += tests/unit/test-apparmor-reply

# the kernel's answers to AppArmor queries (tests/fuzz/fuzz-apparmor-reply.c)
check_PROGRAMS += tests/fuzz/fuzz-apparmor-reply-repro
tests_fuzz_fuzz_apparmor_reply_repro_SOURCES = tests/fuzz/fuzz-apparmor-reply.c tests/fuzz/fuzz-main.c \
	daemon/apparmor-reply.c daemon/apparmor-reply.h
tests_fuzz_fuzz_apparmor_reply_repro_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/apparmor-reply"'
TESTS += tests/fuzz/fuzz-apparmor-reply-repro
EXTRA_DIST += tests/fuzz/corpus/apparmor-reply

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-apparmor-reply
tests_fuzz_fuzz_apparmor_reply_SOURCES = tests/fuzz/fuzz-apparmor-reply.c daemon/apparmor-reply.c \
	daemon/apparmor-reply.h
tests_fuzz_fuzz_apparmor_reply_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_apparmor_reply_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
endif

check_PROGRAMS += tests/unit/test-lsm
tests_unit_test_lsm_SOURCES = tests/unit/test-lsm.c daemon/lsm.c daemon/lsm.h
TESTS += tests/unit/test-lsm
