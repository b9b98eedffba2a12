# Build and install eboardd with its system integration (udev rule, systemd units, D-Bus policy,
# sysusers entry).
#
#   make                      build the release binaries (cargo) and the man pages
#   make check                install what the tests need (Debian/Ubuntu, sudo when not root),
#                             then the format check, clippy and every test (what CI runs)
#   make deb                  install what the package build needs (Debian/Ubuntu, sudo when not
#                             root), then the Debian package target/deb/eboardd_<version>_<arch>.deb
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
# The daemon's unit, the board helper's template and every bridge's unit.
UNITS := $(wildcard systemd/eboardd*.service)
MANDIR ?= $(DATADIR)/man
MANPAGES = $(wildcard target/man/*.1)

# The units and the helper name programs by their installed paths.
SUBST = sed -e 's|/usr/bin/eboardd|$(BINDIR)/eboardd|g' \
             -e 's|/usr/bin/eboardctl|$(BINDIR)/eboardctl|g' \
             -e 's|/usr/libexec/eboardd/eboardd-board|$(LIBEXECDIR)/eboardd/eboardd-board|g'

.PHONY: all build man install uninstall post-install check deb

all: build man

# The daemon is built without the simulated board (the `sim` feature, on for `cargo run --
# --demo` from a clone): the production eboardd links no simulator. eboardctl keeps it for
# `simulate` and `replay`; the man page writer is built with it (its pages list those too).
build:
	$(CARGO) build --release --locked --no-default-features --bin eboardd
	$(CARGO) build --release --locked --features manpages --bin eboardctl --bin eboardd-manpages

man: build
	rm -rf target/man
	$(TARGETDIR)/eboardd-manpages target/man

# Everything CI runs, and the one command the README gives for the tests: the Debian packages
# the tests need, then the format check, clippy and the tests. .ci/run calls it.
check:
	.ci/test-deps
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	@# Keep these lines identical to the README's description of `make check`.
	cargo test --locked --workspace --all-targets
	cargo test --locked --workspace --doc

# The Debian package (debian/, debhelper): target/deb/eboardd_<version>_<arch>.deb. Installs
# the Debian packages it needs first (debhelper, dpkg-dev, …; sudo when not root), as check
# does; cargo (rustup) must be there for the user running it.
deb:
	.ci/deb-deps
	mkdir -p target/deb
	debian/rules binary

install:
	@for b in $(BINARIES); do \
	  [ -x "$(TARGETDIR)/$$b" ] || { echo "$(TARGETDIR)/$$b is missing: run 'make' first (as yourself, not root)" >&2; exit 1; }; \
	done
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/eboardd
	$(INSTALL) -m 0755 $(addprefix $(TARGETDIR)/,$(BINARIES)) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0755 systemd/eboardd-board $(DESTDIR)$(LIBEXECDIR)/eboardd/eboardd-board
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	$(INSTALL) -m 0644 udev/70-eboardd.rules $(DESTDIR)$(UDEVRULESDIR)/70-eboardd.rules
	@for u in $(UNITS); do \
	  echo "$(SUBST) $$u >$(DESTDIR)$(SYSTEMDUNITDIR)/$${u#systemd/}"; \
	  $(SUBST) $$u >$(DESTDIR)$(SYSTEMDUNITDIR)/$${u#systemd/} && chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$${u#systemd/} || exit 1; \
	done
	$(INSTALL) -m 0644 systemd/eboardd.sysusers $(DESTDIR)$(SYSUSERSDIR)/eboardd.conf
	$(INSTALL) -d $(DESTDIR)$(DBUSPOLICYDIR) $(DESTDIR)$(DBUSSERVICEDIR)
	$(INSTALL) -m 0644 dbus/org.eboardd.Bridge1.conf $(DESTDIR)$(DBUSPOLICYDIR)/org.eboardd.Bridge1.conf
	$(INSTALL) -m 0644 dbus/org.eboardd.Bridge1.service $(DESTDIR)$(DBUSSERVICEDIR)/org.eboardd.Bridge1.service
ifneq ($(INTERFACES),)
	$(INSTALL) -d $(DESTDIR)$(DBUSINTERFACESDIR)
	$(INSTALL) -m 0644 $(INTERFACES) $(DESTDIR)$(DBUSINTERFACESDIR)/
endif
ifneq ($(MANPAGES),)
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1/
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
	-udevadm trigger --action=change --subsystem-match=tty --sysname-match='ttyACM*' --sysname-match='ttyUSB*' --sysname-match='rfcomm*'

uninstall:
	@if [ -z "$(DESTDIR)" ]; then systemctl disable --now eboardd.service 2>/dev/null; true; fi
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(BINARIES))
	rm -f $(DESTDIR)$(LIBEXECDIR)/eboardd/eboardd-board
	-rmdir $(DESTDIR)$(LIBEXECDIR)/eboardd
	rm -f $(DESTDIR)$(UDEVRULESDIR)/70-eboardd.rules
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(UNITS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MANPAGES)))
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
