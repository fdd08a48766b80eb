# tests: sources, programs and tests of this component

# --- integration tests with real clients (tests/integration/run.sh DAEMON)
# sd-bus client, run by tests/integration/test-sdbus.sh as
# $BUILDDIR/tests/integration/sdbus-client
check_PROGRAMS += tests/integration/sdbus-client tests/integration/native-forge
tests_integration_native_forge_SOURCES = tests/integration/native-forge.c
tests_integration_native_forge_LDADD = native/libnative.a compat/libcompat.a kdbus/libkdbus.a
tests_integration_sdbus_client_SOURCES = tests/integration/sdbus-client.c
tests_integration_sdbus_client_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS)
tests_integration_sdbus_client_LDADD = $(SYSTEMD_LIBS)
# activation under load, run by tests/activation-stress/run.sh DAEMON
# (tools/run-tests.sh)
check_PROGRAMS += tests/activation-stress/stress-client tests/activation-stress/stress-service
tests_activation_stress_stress_client_SOURCES = tests/activation-stress/stress-client.c
tests_activation_stress_stress_client_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS)
tests_activation_stress_stress_client_LDADD = $(DBUS_LIBS)
tests_activation_stress_stress_service_SOURCES = tests/activation-stress/stress-service.c
tests_activation_stress_stress_service_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS)
tests_activation_stress_stress_service_LDADD = $(DBUS_LIBS)
# native kdbus peers and classic clients under load on the kernel bus, run
# by tests/native-stress/run.sh DAEMON (the VM's second stage)
check_PROGRAMS += tests/native-stress/native-stress
tests_native_stress_native_stress_SOURCES = tests/native-stress/native-stress.c
tests_native_stress_native_stress_CFLAGS = $(AM_CFLAGS) $(DBUS_CFLAGS)
tests_native_stress_native_stress_LDADD = native/libnative.a compat/libcompat.a kdbus/libkdbus.a $(DBUS_LIBS)
# the test scripts, probes and configurations of every suite that
# tools/run-tests.sh runs, shipped whole (tools/check-dist.sh checks that
# the tarball holds every file of the repository)
EXTRA_DIST += tests/activation-stress/run.sh tests/native-stress/run.sh tests/integration tests/adversarial tests/diff tests/lib tests/policy-diff tests/external \
	tests/dbus-tests.sh tests/dbus-tests-run.sh tests/dbus-tests.expected-failures tests/vm tests/kfuzz
# the daemon itself under make check: real clients against the built
# busbridged (the fast part of the integration suite; sd-bus's client is a
# check program)
TESTS += tests/daemon-check.sh
EXTRA_DIST += tests/daemon-check.sh
# the files of daemon/ form layers without a circle (tools/daemon-graph.py)
TESTS += tests/daemon-layers.sh
EXTRA_DIST += tests/daemon-layers.sh
# the hardening of the installed binaries (hardening-check, devscripts)
TESTS += tests/hardening.sh
EXTRA_DIST += tests/hardening.sh
