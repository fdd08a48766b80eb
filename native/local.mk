# native: the native kdbus peer (a C API and a tool) beside the classic
# clients busbridged bridges onto the kernel bus

noinst_LIBRARIES += native/libnative.a
native_libnative_a_SOURCES = native/native-peer.c native/native-peer.h

bin_PROGRAMS += native/busbridge-native
native_busbridge_native_SOURCES = native/busbridge-native.c
native_busbridge_native_LDADD = native/libnative.a compat/libcompat.a kdbus/libkdbus.a
dist_man_MANS += doc/busbridge-native.1
