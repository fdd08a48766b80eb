# tests: sources, programs and tests of this component

# --- integration tests with real clients (tests/integration/run.sh DAEMON)
# sd-bus client, run by tests/integration/test-sdbus.sh as
# $BUILDDIR/tests/integration/sdbus-client
check_PROGRAMS += tests/integration/sdbus-client
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
EXTRA_DIST += tests/activation-stress/run.sh
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
EXTRA_DIST += tests/integration/test-policy-reload.py tests/integration/test-policy-core.sh \
	tests/integration/test-system-bus.sh tests/integration/test-launch-helper.sh \
	tests/integration/test-log-texts.sh tests/integration/test-fd-limits.sh tests/integration/fd-limits-probe.py
EXTRA_DIST += tests/integration/test-policy-order.sh tests/integration/policy-order-probe.py
EXTRA_DIST += tests/integration/test-unroutable.sh tests/integration/unroutable-probe.py \
	tests/integration/test-unrequested-replies.sh
EXTRA_DIST += tests/integration/test-driver-diff.sh tests/integration/driver-probe.py
# robustness: per-user quotas (root), the adversarial test (tools/run-tests.sh)
EXTRA_DIST += doc/fuzzing.md doc/robustness.md
EXTRA_DIST += tests/integration/test-quota.sh tests/integration/quota-peer.py \
	tests/adversarial/adversarial.py tests/adversarial/dbuswire.py tests/adversarial/failmalloc.c
# the differential tester against dbus-daemon (tools/run-tests.sh, root)
EXTRA_DIST += tests/diff/run.sh tests/diff/busdiff.py tests/diff/engine.py tests/diff/dwire.py \
	tests/diff/scenarios.py tests/diff/randomized.py tests/diff/known-differences tests/diff/service.py \
	tests/diff/configs/limits.conf tests/diff/configs/system-deny.conf doc/differential-testing.md
