#!/usr/bin/env bash
# Checks of the Linux integration files (udev rule, systemd units, D-Bus policy):
#   - systemd-analyze verify on the units: fails on ANY output (it exits 0 on warnings);
#   - systemd-analyze security --offline=true for the services: prints the exposure figure and
#     fails above 2.5;
#   - the D-Bus policy is well-formed XML that dbus-daemon loads without complaint;
#   - the shell scripts parse (and pass shellcheck where it is installed);
#   - udevadm test parses the rule without complaint (only inside a private mount namespace with
#     tmpfs over /run, /dev and /etc/udev, because udevadm test writes real entries there).
# Run from .ci/run before the cargo steps; needs systemd-analyze, and uses dbus-daemon, udevadm
# and unshare when present. Under CI=true a check that cannot run (a program, root or a mount
# namespace missing) fails instead of being skipped.
check=linux
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

# A check that cannot run here: a failure under CI, a note elsewhere.
cannot_run() {
  if under_ci; then bad "CI=true and $1 cannot run: $2"; else say "$1 skipped ($2)"; fi
}

# --- systemd units ---------------------------------------------------------------------------
# The units name their programs by installed path; point those at stand-ins so that verify checks
# everything else (it would otherwise report the missing /usr/bin/eboardd).
mkdir -p "$work/units" "$work/bin"
printf '#!/bin/sh\nexit 0\n' >"$work/bin/eboardd"
cp "$work/bin/eboardd" "$work/bin/eboardctl"
cp systemd/eboardd-board "$work/bin/eboardd-board"
chmod 755 "$work/bin/eboardd" "$work/bin/eboardctl" "$work/bin/eboardd-board"
# The relay's environment file, as an operator writes it.
mkdir -p "$work/etc"
printf 'EBOARDD_RELAY_MQTT=mqtt://broker\nEBOARDD_RELAY_ARGS=--rig a\n' >"$work/etc/relay.env"
for unit in systemd/*.service; do
  sed -e "s|/usr/bin/eboardctl|$work/bin/eboardctl|g" \
      -e "s|/usr/bin/eboardd|$work/bin/eboardd|g" \
      -e "s|/etc/eboardd/relay.env|$work/etc/relay.env|g" \
      -e "s|/usr/libexec/eboardd/eboardd-board|$work/bin/eboardd-board|g" \
      "$unit" >"$work/units/$(basename "$unit")"
done
for unit in eboardd.service eboardd-board@ttyACM0.service eboardd-web.service eboardd-relay.service eboardd-livechess.service; do
  out=$(cd "$work/units" && systemd-analyze verify "./$unit" 2>&1) || true
  judge "$out" "systemd-analyze verify $unit printed:" "systemd-analyze verify $unit: clean"
done

for unit in eboardd.service eboardd-board@ttyACM0.service eboardd-web.service eboardd-relay.service eboardd-livechess.service; do
  report=$(cd "$work/units" && systemd-analyze security --offline=true "./$unit" 2>&1) || true
  say "systemd-analyze security --offline=true $unit (open items):"
  echo "$report" | grep -E '✗|Overall' || echo "$report"
  score=$(echo "$report" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
  if [ -z "$score" ] || ! awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }'; then
    bad "$unit exposure ${score:-unknown} is above 2.5"
  fi
done

# --- shell scripts ---------------------------------------------------------------------------
for script in systemd/eboardd-board debian/eboardd.postinst debian/eboardd.postrm; do
  sh -n "$script" || bad "$script does not parse"
done
if command -v shellcheck >/dev/null; then
  shellcheck -s sh systemd/eboardd-board debian/eboardd.postinst debian/eboardd.postrm || fail=1
fi

# --- D-Bus policy ----------------------------------------------------------------------------
if command -v dbus-daemon >/dev/null; then
  # Unknown user/group names are expected where eboardd is not installed.
  out=$(policy_complaints "$work" "$repo/dbus/org.eboardd.Bridge1.conf" \
        'Unknown username "eboardd"' 'Unknown group "eboardd"')
  judge "$out" "dbus-daemon complained about the policy:" "D-Bus policy loads cleanly"
else
  cannot_run "the D-Bus policy load check" "dbus-daemon is not installed (Debian package dbus)"
fi

# --- udev rule -------------------------------------------------------------------------------
if command -v udevadm >/dev/null && [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  cp /etc/group "$work/group"
  grep -q '^eboardd:' "$work/group" || echo 'eboardd:x:64999:' >>"$work/group"
  out=$(udev_test "$work" "$repo/udev/70-eboardd.rules" "$work/group")
  complaints=$(echo "$out" | grep '70-eboardd.rules' | grep -v '^Reading rules file' || true)
  if ! echo "$out" | grep -q 'Reading rules file: /etc/udev/rules.d/70-eboardd.rules'; then
    bad "udevadm test did not read the rule:"
    echo "$out" | tail -20 >&2
  else
    judge "$complaints" "udevadm complained about the rule:" "udevadm parses the rule cleanly"
  fi
else
  cannot_run "udevadm test" "needs udevadm (Debian package udev), root and unshare -m"
fi

exit $fail
