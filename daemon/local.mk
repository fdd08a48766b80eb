# daemon: the busbridged process
include daemon/listen.mk

noinst_LIBRARIES += daemon/libdaemon.a
daemon_libdaemon_a_SOURCES = \
	daemon/bus.c daemon/bus.h \
	daemon/client.c daemon/client.h \
	daemon/driver.c daemon/driver.h \
	daemon/monitor.c daemon/monitor.h \
	daemon/service-registry.c daemon/service-registry.h \
	daemon/log.c daemon/log.h
daemon_libdaemon_a_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(DBUS_CFLAGS) $(SYSTEMD_CFLAGS) $(EXPAT_CFLAGS)

bin_PROGRAMS += daemon/busbridged
daemon_busbridged_SOURCES = daemon/main.c
daemon_busbridged_CFLAGS = $(daemon_libdaemon_a_CFLAGS)
daemon_busbridged_LDADD = daemon/libdaemon.a daemon/liblisten.a policy/libpolicy.a compat/libcompat.a \
	kdbus/libkdbus.a $(LIBEVENT_LIBS) $(DBUS_LIBS) $(SYSTEMD_LIBS) $(EXPAT_LIBS)

dist_man_MANS += doc/busbridged.1
