# data: systemd units (doc/systemd.md), installed into systemd's unit
# directories (pkg-config systemd; --with-systemd{system,user}unitdir=)
units_in = data/busbridge.service.in data/busbridge-session.service.in
EXTRA_DIST += $(units_in) data/busbridge.socket data/busbridge-session.socket data/test-session.conf.in
CLEANFILES += data/busbridge.service data/busbridge-session.service

unit_subst = $(MKDIR_P) data && sed -e 's|@bindir[@]|$(bindir)|g'
data/busbridge.service: $(top_srcdir)/data/busbridge.service.in Makefile
	$(AM_V_GEN)$(unit_subst) $(top_srcdir)/data/busbridge.service.in > $@.tmp && mv $@.tmp $@
data/busbridge-session.service: $(top_srcdir)/data/busbridge-session.service.in Makefile
	$(AM_V_GEN)$(unit_subst) $(top_srcdir)/data/busbridge-session.service.in > $@.tmp && mv $@.tmp $@

all-local: data/busbridge.service data/busbridge-session.service

if HAVE_SYSTEMD_UNITDIRS
systemdsystemunit_DATA = data/busbridge.service data/busbridge.socket
systemduserunit_DATA = data/busbridge-session.service data/busbridge-session.socket
endif
