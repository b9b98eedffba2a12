# Build and install eboardd with its system integration (udev rule, systemd units, D-Bus policy,
# sysusers entry).
#
#   make                      build the release binaries (cargo)
#   sudo make install         install under PREFIX (default /usr/local), then reload udev,
#                             systemd and create the eboardd user (skipped when DESTDIR is set)
#   sudo make uninstall       remove what install placed (keeps /etc/eboardd, /var/lib/eboardd,
#                             the user and the group)
#
# Packagers: make install PREFIX=/usr DESTDIR=$pkgdir puts the integration files in the vendor
# directories (/usr/lib/udev/rules.d, /usr/lib/systemd/system, /usr/share/dbus-1/system.d,
# /usr/lib/sysusers.d). With any other PREFIX they go to the administrator's directories under
# /etc, which the system reads whatever the prefix is. Each directory can be overridden.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
DATADIR ?= $(PREFIX)/share
SYSCONFDIR ?= /etc

ifeq ($(PREFIX),/usr)
UDEVRULESDIR ?= /usr/lib/udev/rules.d
SYSTEMDUNITDIR ?= /usr/lib/systemd/system
SYSUSERSDIR ?= /usr/lib/sysusers.d
DBUSPOLICYDIR ?= /usr/share/dbus-1/system.d
else
UDEVRULESDIR ?= $(SYSCONFDIR)/udev/rules.d
SYSTEMDUNITDIR ?= $(SYSCONFDIR)/systemd/system
SYSUSERSDIR ?= $(SYSCONFDIR)/sysusers.d
DBUSPOLICYDIR ?= $(SYSCONFDIR)/dbus-1/system.d
endif
# Read by dbus-daemon's <standard_system_servicedirs/> for /usr and /usr/local alike.
DBUSSERVICEDIR ?= $(DATADIR)/dbus-1/system-services
DBUSINTERFACESDIR ?= $(DATADIR)/dbus-1/interfaces

CARGO ?= cargo
INSTALL ?= install
TARGETDIR ?= target/release
BINARIES := eboardd eboardctl
INTERFACES := $(wildcard dbus/org.eboardd.Bridge1*.xml)

# The units and the helper name programs by their installed paths.
SUBST = sed -e 's|/usr/bin/eboardd|$(BINDIR)/eboardd|g' \
             -e 's|/usr/bin/eboardctl|$(BINDIR)/eboardctl|g' \
             -e 's|/usr/libexec/eboardd/eboardd-board|$(LIBEXECDIR)/eboardd/eboardd-board|g'

.PHONY: all build install uninstall post-install

all: build

build:
	$(CARGO) build --release --locked

install:
	@for b in $(BINARIES); do \
	  [ -x "$(TARGETDIR)/$$b" ] || { echo "$(TARGETDIR)/$$b is missing: run 'make' first (as yourself, not root)" >&2; exit 1; }; \
	done
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/eboardd
	$(INSTALL) -m 0755 $(addprefix $(TARGETDIR)/,$(BINARIES)) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0755 systemd/eboardd-board $(DESTDIR)$(LIBEXECDIR)/eboardd/eboardd-board
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	$(INSTALL) -m 0644 udev/70-eboardd.rules $(DESTDIR)$(UDEVRULESDIR)/70-eboardd.rules
	$(SUBST) systemd/eboardd.service >$(DESTDIR)$(SYSTEMDUNITDIR)/eboardd.service
	$(SUBST) systemd/eboardd-board@.service >$(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-board@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd.service $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-board@.service
	$(SUBST) systemd/eboardd-web.service >$(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-web.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-web.service
	$(SUBST) systemd/eboardd-relay.service >$(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-relay.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-relay.service
	$(SUBST) systemd/eboardd-broadcast@.service >$(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-broadcast@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-broadcast@.service
	$(SUBST) systemd/eboardd-livechess.service >$(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-livechess.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-livechess.service
	$(INSTALL) -m 0644 systemd/eboardd.sysusers $(DESTDIR)$(SYSUSERSDIR)/eboardd.conf
	$(INSTALL) -d $(DESTDIR)$(DBUSPOLICYDIR) $(DESTDIR)$(DBUSSERVICEDIR)
	$(INSTALL) -m 0644 dbus/org.eboardd.Bridge1.conf $(DESTDIR)$(DBUSPOLICYDIR)/org.eboardd.Bridge1.conf
	$(INSTALL) -m 0644 dbus/org.eboardd.Bridge1.service $(DESTDIR)$(DBUSSERVICEDIR)/org.eboardd.Bridge1.service
ifneq ($(INTERFACES),)
	$(INSTALL) -d $(DESTDIR)$(DBUSINTERFACESDIR)
	$(INSTALL) -m 0644 $(INTERFACES) $(DESTDIR)$(DBUSINTERFACESDIR)/
endif
	$(INSTALL) -d $(DESTDIR)$(SYSCONFDIR)/eboardd
	@# Never overwrite the operator's configuration.
	[ -e $(DESTDIR)$(SYSCONFDIR)/eboardd/eboardd.toml ] || \
	  $(INSTALL) -m 0644 docs/eboardd.toml.example $(DESTDIR)$(SYSCONFDIR)/eboardd/eboardd.toml
	@if [ -z "$(DESTDIR)" ]; then $(MAKE) --no-print-directory post-install; fi

# Make the running system pick the files up. Each step is allowed to fail (no systemd in a
# container, no udev on a build host); the output says which did.
post-install:
	-systemd-sysusers $(SYSUSERSDIR)/eboardd.conf
	-udevadm control --reload
	-systemctl daemon-reload
	-systemctl reload dbus
	-udevadm trigger --action=change --subsystem-match=tty --sysname-match='ttyACM*' --sysname-match='ttyUSB*'

uninstall:
	@if [ -z "$(DESTDIR)" ]; then systemctl disable --now eboardd.service 2>/dev/null; true; fi
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(BINARIES))
	rm -f $(DESTDIR)$(LIBEXECDIR)/eboardd/eboardd-board
	-rmdir $(DESTDIR)$(LIBEXECDIR)/eboardd
	rm -f $(DESTDIR)$(UDEVRULESDIR)/70-eboardd.rules
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd.service $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-board@.service
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-web.service
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-relay.service
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-broadcast@.service
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/eboardd-livechess.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/eboardd.conf
	rm -f $(DESTDIR)$(DBUSPOLICYDIR)/org.eboardd.Bridge1.conf
	rm -f $(DESTDIR)$(DBUSSERVICEDIR)/org.eboardd.Bridge1.service
ifneq ($(INTERFACES),)
	rm -f $(addprefix $(DESTDIR)$(DBUSINTERFACESDIR)/,$(notdir $(INTERFACES)))
endif
	@if [ -z "$(DESTDIR)" ]; then \
	  udevadm control --reload 2>/dev/null; systemctl daemon-reload 2>/dev/null; true; \
	fi
	@echo "kept: $(SYSCONFDIR)/eboardd, /var/lib/eboardd and the eboardd user and group"
