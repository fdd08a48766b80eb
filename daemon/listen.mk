# daemon/listen.mk: addresses, listening sockets, SASL server glue (owned with compat/auth)

# (compat/auth.c and compat/keyring.c are in compat/libcompat.a: see the auth block of compat/local.mk)

# --- daemon/liblisten.a: server addresses, listening sockets, peer credentials
noinst_LIBRARIES += daemon/liblisten.a
daemon_liblisten_a_SOURCES = \
	daemon/address.c daemon/address.h \
	daemon/listen-socket.c daemon/listen-socket.h \
	daemon/peer-creds.c daemon/peer-creds.h
daemon_liblisten_a_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS)

check_PROGRAMS += tests/unit/test-address
tests_unit_test_address_SOURCES = tests/unit/test-address.c
tests_unit_test_address_LDADD = daemon/liblisten.a $(SYSTEMD_LIBS)
TESTS += tests/unit/test-address

check_PROGRAMS += tests/unit/test-listen-socket
tests_unit_test_listen_socket_SOURCES = tests/unit/test-listen-socket.c
tests_unit_test_listen_socket_LDADD = daemon/liblisten.a $(SYSTEMD_LIBS)
TESTS += tests/unit/test-listen-socket

check_PROGRAMS += tests/unit/test-peer-creds
tests_unit_test_peer_creds_SOURCES = tests/unit/test-peer-creds.c
tests_unit_test_peer_creds_LDADD = daemon/liblisten.a $(SYSTEMD_LIBS)
TESTS += tests/unit/test-peer-creds
