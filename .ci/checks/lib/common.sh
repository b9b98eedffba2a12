# What the checks share, sourced first by linux.sh and package.sh (kept out of .ci/checks/
# itself, whose every *.sh CI runs as a check). The caller sets `check`, the name its messages
# start with. After it, the repository is the current directory and $repo, $work is a scratch
# directory removed at exit, and `fail` is 0 until a complaint.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Whether this runs under CI (CI set, and not to 0 or false): there a check that cannot run fails.
under_ci() {
  case "${CI:-}" in
    "" | 0 | false) return 1 ;;
    *) return 0 ;;
  esac
}

say() { echo "$check: $*"; }
bad() { echo "$check: $*" >&2; fail=1; }

# Judges a check by its output $1: any output is a complaint, introduced by $2; none is a pass,
# told by $3.
judge() {
  if [ -n "$1" ]; then bad "$2"; echo "$1" >&2; else say "$3"; fi
}

# What dbus-daemon complains of when it loads the bus policy $2 as the system bus would, from
# a configuration written under the directory $1. A malformed included file is only logged and
# the bus starts anyway, so its stderr is the verdict; lines matching a further argument (a
# grep pattern) are expected, not complaints.
policy_complaints() {
  local work=$1 policy=$2 out pattern
  shift 2
  cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/></policy>
  <include>$policy</include>
</busconfig>
CONF
  out=$(timeout 5 dbus-daemon --config-file="$work/bus.conf" --nofork --print-address 2>&1 >/dev/null &
        sleep 1; kill %1 2>/dev/null; wait 2>/dev/null) || true
  local expected=(-e 'fd limit' -e '^$')
  for pattern in "$@"; do expected+=(-e "$pattern"); done
  echo "$out" | grep -v "${expected[@]}" || true
}

# What `udevadm test` says of a fake tty, run from a script written under the directory $1 in
# a private mount namespace with tmpfs over /run, /dev and /etc/udev (it writes real entries
# there). With $2 and $3, the rule $2 is copied into the empty /etc/udev/rules.d and $3 is bound
# over /etc/group (for a group the machine lacks); without, the installed rules are read.
udev_test() {
  local work=$1
  shift
  cat >"$work/udevtest.sh" <<'SH'
set -e
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /etc/udev
if [ $# -gt 0 ]; then
  mkdir -p /etc/udev/rules.d
  cp "$1" /etc/udev/rules.d/
  mount --bind "$2" /etc/group
fi
dev=$(ls -d /sys/class/tty/ttyS0 /sys/class/tty/* 2>/dev/null | head -n1)
mount -t tmpfs tmpfs /dev
udevadm test --action=add "$dev" 2>&1
SH
  unshare -m --propagation private sh "$work/udevtest.sh" "$@" || true
}
