#!/usr/bin/env bash
# The Debian package, end to end on this machine (CI: Debian 12, root, no systemd as PID 1):
#   - builds it (`make deb`: the release build is most of the time, see BENCHMARKS.md);
#   - lintian: no error and no warning (none is kept, so there are no overrides to explain);
#   - installs it with apt-get install ./…deb; eboardd --version and eboardctl --version run
#     from /usr/bin; the daemon is the build without the simulator (--demo says so); the eboardd user and group exist; the man pages are there;
#   - systemd-analyze verify on every installed unit: fails on any output;
#   - udevadm test applies the installed rule to a fake tty (in a private mount namespace);
#   - the installed bus policy loads in a dbus-daemon without complaint;
#   - remove keeps /var/lib/eboardd and /etc/eboardd; purge removes them; nothing of the
#     package is left on the disk.
# Changes the machine (it is CI's machine): installs lintian when missing (and `make deb` its
# build dependencies).
check=package
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

if [ "$(id -u)" != 0 ]; then
  under_ci && { echo "package: CI=true and this check needs root" >&2; exit 1; }
  say "skipped (installs a package: needs root)"
  exit 0
fi
# Not debhelper or dpkg-dev: `make deb` installs what it needs itself (.ci/deb-deps), and
# this proves it on CI's fresh machine.
need=()
command -v lintian >/dev/null || need+=(lintian)
command -v udevadm >/dev/null || need+=(udev)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
start=$(date +%s)
rm -f target/deb/eboardd_*.deb
make deb >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
deb=$(ls target/deb/eboardd_*.deb)
say "built $deb in $(( $(date +%s) - start )) s"

# lintian refuses nothing here but prints its root warning; anything else is a finding.
findings=$(lintian --fail-on none "$deb" 2>&1 | grep -v 'running with root privileges' || true)
judge "$findings" "lintian:" "lintian: clean"

DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log" >&2; exit 1; }
for b in eboardd eboardctl; do
  v=$("/usr/bin/$b" --version) || bad "/usr/bin/$b --version failed"
  [ "$v" = "$b $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)" ] || bad "/usr/bin/$b --version said: $v"
done
say "--version: $(/usr/bin/eboardd --version), $(/usr/bin/eboardctl --version)"
# The packaged daemon is the production build, without the simulated board: --demo says so
# (a usage error, exit 2); eboardctl keeps the simulator for simulate and replay.
demo_rc=0
demo_said=$(/usr/bin/eboardd --demo 2>&1) || demo_rc=$?
[ "$demo_rc" = 2 ] || bad "/usr/bin/eboardd --demo exited $demo_rc: $demo_said"
case "$demo_said" in
  *"built without the simulated board"*) ;;
  *) bad "/usr/bin/eboardd --demo said: $demo_said" ;;
esac
/usr/bin/eboardctl simulate --help >/dev/null || bad "/usr/bin/eboardctl has no simulate"
say "the packaged eboardd has no simulator (--demo: exit 2), eboardctl simulate is there"
getent passwd eboardd >/dev/null || bad "no eboardd user after install"
getent group eboardd >/dev/null || bad "no eboardd group after install"
[ -e /usr/share/man/man1/eboardctl-doctor.1.gz ] || bad "no man page for eboardctl doctor"
[ -f /etc/eboardd/eboardd.toml ] || bad "no /etc/eboardd/eboardd.toml"

# Every installed unit, the board helper as one instance.
units=()
for u in $(dpkg -L eboardd | grep -E '/systemd/system/[^/]+\.service$'); do
  case "$u" in *@.service) units+=("${u%@.service}@ttyACM0.service") ;; *) units+=("$u") ;; esac
done
mkdir -p /etc/eboardd && created_env=
# The relay's unit reads the operator's environment file: write one like an operator would.
[ -e /etc/eboardd/relay.env ] || { printf 'EBOARDD_RELAY_MQTT=mqtt://broker\n' >/etc/eboardd/relay.env; created_env=1; }
for u in "${units[@]}"; do
  out=$(systemd-analyze verify "$u" 2>&1) || true
  judge "$out" "systemd-analyze verify $u printed:" "verify $(basename "$u"): clean"
done
[ -n "$created_env" ] && rm -f /etc/eboardd/relay.env

# The installed rule on a fake tty, with tmpfs over /run, /dev and /etc/udev (udevadm test
# writes real entries there).
rule=$(dpkg -L eboardd | grep '70-eboardd.rules$')
out=$(udev_test "$work")
# udev reads it through /usr/lib on a merged-/usr system.
if ! echo "$out" | grep -q -e "Reading rules file: $rule" -e "Reading rules file: /usr$rule"; then
  bad "udevadm test did not read $rule:"; echo "$out" | tail -20 >&2
elif echo "$out" | grep '70-eboardd.rules' | grep -qv '^Reading rules file'; then
  bad "udevadm complained about the rule:"; echo "$out" | grep '70-eboardd.rules' >&2
else
  say "udevadm test: the installed rule applies cleanly"
fi

# The installed policy, as the system bus would read it.
policy=$(dpkg -L eboardd | grep 'system.d/org.eboardd.Bridge1.conf$')
out=$(policy_complaints "$work" "$policy")
judge "$out" "dbus-daemon complained about $policy:" "bus policy: loads cleanly"

# Remove keeps the games and the configuration; purge removes them.
mkdir -p /var/lib/eboardd/pgn && echo '[Event "kept"]' >/var/lib/eboardd/pgn/kept.pgn
files=$(dpkg -L eboardd | while read -r f; do [ -f "$f" ] && echo "$f"; done)
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq eboardd >"$work/remove.log" 2>&1 || { cat "$work/remove.log" >&2; exit 1; }
[ -f /var/lib/eboardd/pgn/kept.pgn ] || bad "remove lost /var/lib/eboardd"
[ -f /etc/eboardd/eboardd.toml ] || bad "remove lost the configuration"
[ -x /usr/bin/eboardd ] && bad "remove left /usr/bin/eboardd"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq eboardd >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; exit 1; }
[ -e /var/lib/eboardd ] && bad "purge left /var/lib/eboardd"
[ -e /etc/eboardd ] && bad "purge left /etc/eboardd"
left=$(for f in $files; do [ -e "$f" ] && echo "$f"; done; ls /etc/systemd/system/*/eboardd* /etc/systemd/system/dbus-org.eboardd* 2>/dev/null || true)
if [ -n "$left" ]; then bad "purge left:"; echo "$left" >&2; else say "remove kept the games and the configuration; purge left nothing"; fi
dpkg -s eboardd >/dev/null 2>&1 && bad "dpkg still knows eboardd"

cd "$repo"
exit $fail
