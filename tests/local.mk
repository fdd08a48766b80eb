# tests: sources, programs and tests of this component

# --- integration tests with real clients (tests/integration/run.sh DAEMON)
# sd-bus client, run by tests/integration/test-sdbus.sh as
# $BUILDDIR/tests/integration/sdbus-client
check_PROGRAMS += tests/integration/sdbus-client
tests_integration_sdbus_client_SOURCES = tests/integration/sdbus-client.c
tests_integration_sdbus_client_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS)
tests_integration_sdbus_client_LDADD = $(SYSTEMD_LIBS)
EXTRA_DIST += \
	tests/integration/run.sh \
	tests/integration/lib.sh \
	tests/integration/helpers.sh \
	tests/integration/py-service.py \
	tests/integration/activatable-service.py \
	tests/integration/test-activation.sh \
	tests/integration/test-tcp.sh \
	tests/integration/test-unprivileged.sh \
	tests/integration/test-dbus-send.sh \
	tests/integration/test-gdbus.sh \
	tests/integration/test-busctl.sh \
	tests/integration/test-dbus-monitor.sh \
	tests/integration/test-python.py \
	tests/integration/test-sdbus.sh \
	tests/integration/test-run-session.sh \
	tests/integration/test-limits.sh
