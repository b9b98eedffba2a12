//! The udev rule (`udev/70-eboardd.rules`) checked two ways.
//!
//! 1. Always: the rule file is parsed and its structure asserted — what it matches (CDC-ACM
//!    vendor 045b, the "DGT Chessboard" by-id name, FTDI only as a commented opt-in), and what a
//!    matched board gets (ModemManager flag, group, mode, symlinks, systemd tag and unit), plus
//!    its agreement with the units, the sysusers entry and the D-Bus policy.
//! 2. Where possible (root, `udevadm`, `unshare`): the real udev rule engine runs the shipped
//!    rule together with the system's `60-serial.rules` against simulated USB devices. Each
//!    simulation runs in a private mount namespace with tmpfs over /sys (a hand-built device
//!    tree), /dev, /run and /etc/udev, so `udevadm test` cannot touch the machine's devices or
//!    udev database.

#[path = "common/require.rs"]
mod require;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo_file(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

const RULE: &str = "udev/70-eboardd.rules";

// ---------------------------------------------------------------------------------------------
// 1. Structure

/// One `KEY{attr} OP "value"` item of a rule line.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    key: String,
    op: String,
    value: String,
}

/// A rule line split into its items; `line` is the 1-based line number for messages.
#[derive(Debug)]
struct Rule {
    line: usize,
    items: Vec<Item>,
}

impl Rule {
    fn has(&self, key: &str, op: &str, value: &str) -> bool {
        self.items
            .iter()
            .any(|i| i.key == key && i.op == op && i.value == value)
    }
}

/// Parses udev rule syntax: comma-separated `KEY[{ATTR}] OP "VALUE"` items, `#` comments,
/// backslash continuations. Panics with the line number on anything it cannot read.
fn parse_rules(text: &str) -> Vec<Rule> {
    let mut rules = Vec::new();
    let mut pending = String::new();
    let mut start = 0;
    for (n, raw) in text.lines().enumerate() {
        if pending.is_empty() {
            start = n + 1;
        }
        if let Some(cont) = raw.strip_suffix('\\') {
            pending.push_str(cont);
            continue;
        }
        pending.push_str(raw);
        let line = std::mem::take(&mut pending);
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        rules.push(Rule {
            line: start,
            items: parse_items(trimmed).unwrap_or_else(|e| panic!("{RULE}:{start}: {e}")),
        });
    }
    rules
}

fn parse_items(line: &str) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let key_end = rest
            .find(['=', '!', '+', '-', ':'])
            .ok_or_else(|| format!("no operator in {rest:?}"))?;
        let key = rest[..key_end].trim().to_owned();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "{}_.-*".contains(c))
        {
            return Err(format!("bad key {key:?}"));
        }
        rest = &rest[key_end..];
        let op = ["==", "!=", "+=", "-=", ":=", "="]
            .into_iter()
            .find(|op| rest.starts_with(op))
            .ok_or_else(|| format!("bad operator after {key}"))?;
        rest = rest[op.len()..].trim_start();
        let body = rest
            .strip_prefix('"')
            .ok_or_else(|| format!("value of {key} is not quoted"))?;
        let close = body
            .find('"')
            .ok_or_else(|| format!("unterminated value of {key}"))?;
        items.push(Item {
            key,
            op: op.to_owned(),
            value: body[..close].to_owned(),
        });
        rest = body[close + 1..].trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if !rest.is_empty() {
            return Err(format!("expected ',' before {rest:?}"));
        }
    }
    Ok(items)
}

#[test]
fn rule_sorts_after_60_serial() {
    let name = Path::new(RULE)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(
        name > "60-serial.rules",
        "{name} must sort after 60-serial.rules"
    );
    assert!(
        name.starts_with("70-"),
        "{name}: the 70 range is where ID_* properties are read"
    );
}

#[test]
fn rule_matches_only_dgt_boards() {
    let rules = parse_rules(&read(RULE));
    let first = rules.first().expect("rule file is not empty");
    assert!(
        first.has("ACTION", "==", "remove") && first.has("GOTO", "=", "eboardd_end"),
        "the first rule must skip remove events: {first:?}"
    );
    assert!(
        rules
            .iter()
            .any(|r| r.has("SUBSYSTEM", "!=", "tty") && r.has("GOTO", "=", "eboardd_end")),
        "non-tty devices must be skipped"
    );
    assert!(
        rules.iter().any(
            |r| r.has("KERNEL", "!=", "ttyACM[0-9]*|ttyUSB[0-9]*|rfcomm[0-9]*")
                && r.has("GOTO", "=", "eboardd_end")
        ),
        "only ttyACM/ttyUSB ports and bound Bluetooth links may be considered"
    );

    let marks = |r: &&Rule| r.has("ENV{EBOARDD_BOARD}", "=", "1");
    let matchers: Vec<&Rule> = rules.iter().filter(marks).collect();
    assert!(
        matchers
            .iter()
            .any(|r| r.has("KERNEL", "==", "ttyACM[0-9]*")
                && r.has("ENV{ID_VENDOR_ID}", "==", "045b")),
        "CDC-ACM boards with USB vendor 045b must be matched"
    );
    assert!(
        matchers
            .iter()
            .any(|r| r.has("KERNEL", "==", "ttyACM[0-9]*")
                && r.has("ENV{ID_SERIAL}", "==", "DGT_DGT_Chessboard*")),
        "the DGT_Chessboard by-id name must be matched"
    );
    assert!(
        matchers.iter().any(
            |r| r.has("KERNEL", "==", "rfcomm[0-9]*") && r.has("ENV{EBOARDD_BOARD}", "!=", "0")
        ),
        "bound Bluetooth links must be matched, unless a local rule says no"
    );
    let text = read(RULE);
    assert!(
        text.contains("SYMLINK+=\"eboard/by-bluetooth/$attr{address}\"")
            && text.contains("ENV{EBOARDD_PORT}=\"/dev/eboard/by-bluetooth/$attr{address}\""),
        "a Bluetooth board is named by its address"
    );
    // Generic FTDI ids must not be matched by an active line: they grab unrelated adapters.
    for r in &matchers {
        assert!(
            !r.items.iter().any(|i| i.value.contains("0403")),
            "{RULE}:{} matches FTDI adapters by default",
            r.line
        );
        assert_eq!(
            r.items.len(),
            3,
            "{RULE}:{}: a matcher is KERNEL + one id + the mark",
            r.line
        );
    }
    assert_eq!(matchers.len(), 3, "unexpected matchers: {matchers:?}");

    // The FTDI opt-in is there, commented, and narrowed to FTDI's default strings without a
    // serial number.
    let text = read(RULE);
    let opt_in = text
        .lines()
        .find(|l| l.starts_with("#KERNEL") && l.contains("0403"))
        .expect("a commented FTDI opt-in line");
    let opt_in = parse_rules(opt_in.trim_start_matches('#'));
    let opt_in = &opt_in[0];
    for (key, value) in [
        ("KERNEL", "ttyUSB[0-9]*"),
        ("ENV{ID_VENDOR_ID}", "0403"),
        ("ENV{ID_MODEL_ID}", "6001"),
        ("ATTRS{product}", "USB <-> Serial"),
        ("ENV{ID_SERIAL_SHORT}", ""),
    ] {
        assert!(
            opt_in.has(key, "==", value),
            "opt-in line lacks {key}==\"{value}\""
        );
    }
    assert!(opt_in.has("ENV{EBOARDD_BOARD}", "=", "1"));
}

#[test]
fn matched_boards_get_name_group_and_flags() {
    let rules = parse_rules(&read(RULE));
    let guard = rules
        .iter()
        .position(|r| r.has("ENV{EBOARDD_BOARD}", "!=", "1") && r.has("GOTO", "=", "eboardd_end"))
        .expect("a guard skipping devices that are not boards");
    let label = rules
        .iter()
        .position(|r| r.has("LABEL", "=", "eboardd_end"))
        .expect("the eboardd_end label");
    assert_eq!(label, rules.len() - 1, "the label ends the file");
    // Every GOTO lands on that label.
    for r in &rules {
        for i in r.items.iter().filter(|i| i.key == "GOTO") {
            assert_eq!(i.value, "eboardd_end", "{RULE}:{}: unknown label", r.line);
        }
    }
    // Everything a board gets is set after the guard, unconditionally or on present properties.
    let after = &rules[guard + 1..label];
    let find = |key: &str, op: &str, value: &str| {
        after
            .iter()
            .find(|r| r.has(key, op, value))
            .unwrap_or_else(|| panic!("no {key}{op}\"{value}\" after the guard"))
    };
    find("ENV{ID_MM_DEVICE_IGNORE}", "=", "1");
    find("GROUP", "=", "eboardd");
    find("MODE", "=", "0660");
    find("TAG", "+=", "systemd");
    find("ENV{SYSTEMD_WANTS}", "+=", "eboardd-board@%k.service");
    let by_path = find("SYMLINK", "+=", "eboard/by-path/$env{ID_PATH}");
    assert!(
        by_path.has("ENV{ID_PATH}", "==", "?*"),
        "by-path link only with a path"
    );
    let by_serial = find("SYMLINK", "+=", "eboard/by-serial/$env{ID_SERIAL_SHORT}");
    assert!(
        by_serial.has("ENV{ID_SERIAL_SHORT}", "==", "?*"),
        "by-serial link only with a serial"
    );
    find(
        "ENV{EBOARDD_PORT}",
        "=",
        "/dev/eboard/by-path/$env{ID_PATH}",
    );
    find("ENV{EBOARDD_PORT}", "=", "/dev/%k");
    // Nothing before the guard changes a device other than marking it.
    for r in &rules[..guard] {
        for i in &r.items {
            let is_match = i.op == "==" || i.op == "!=";
            assert!(
                is_match || i.key == "GOTO" || i.key == "ENV{EBOARDD_BOARD}",
                "{RULE}:{}: {} {} before the guard would touch other devices",
                r.line,
                i.key,
                i.op
            );
        }
    }
}

/// The rule, the units, the sysusers entry and the bus policy name the same things.
#[test]
fn rule_agrees_with_units_users_and_policy() {
    let template = read("systemd/eboardd-board@.service");
    assert!(
        template.contains("BindsTo=dev-%i.device"),
        "the unit must leave with the device"
    );
    assert!(template.contains("eboardd-board attach %I"));
    assert!(template.contains("eboardd-board detach %I"));
    let service = read("systemd/eboardd.service");
    for allow in [
        "DeviceAllow=char-ttyACM rw",
        "DeviceAllow=char-ttyUSB rw",
        "DevicePolicy=closed",
    ] {
        assert!(service.contains(allow), "eboardd.service lacks {allow}");
    }
    assert!(service.contains("User=eboardd") && service.contains("Group=eboardd"));
    let sysusers = read("systemd/eboardd.sysusers");
    assert!(
        sysusers
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["g", "eboardd"]))
    );
    assert!(
        sysusers
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["u", "eboardd"]))
    );
    let policy = read("dbus/org.eboardd.Bridge1.conf");
    assert!(policy.contains(r#"<policy user="eboardd">"#));
    assert!(policy.contains(r#"<policy group="eboardd">"#));
    // The helper reads the property the rule sets.
    assert!(read("systemd/eboardd-board").contains("--property=EBOARDD_PORT"));
}

// ---------------------------------------------------------------------------------------------
// 2. The real rule engine on simulated devices

/// Builds a USB serial device under a tmpfs /sys and runs `udevadm test` on it. Runs inside
/// `unshare -m`; arguments: rules dir, group file, vendor, product, serial, manufacturer,
/// product string, kernel name, driver (cdc_acm or ftdi_sio; `rfcomm`: a bound Bluetooth link,
/// the vendor argument its address).
const SIMULATE: &str = r#"set -eu
rules=$1; group=$2; vendor=$3; product=$4; serial=$5; mfr=$6; prod=$7; kernel=$8; drv=$9
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /etc/udev
mkdir -p /etc/udev/rules.d
cp "$rules"/* /etc/udev/rules.d/
mount --bind "$group" /etc/group
mount -t tmpfs tmpfs /sys
mkdir -p /sys/bus/usb/drivers/$drv /sys/bus/pci /sys/class/tty /sys/bus/usb-serial
if [ "$drv" = rfcomm ]; then
  # A bound Bluetooth link: a virtual tty with the remote address (passed as the vendor).
  tty=/sys/devices/virtual/tty/$kernel
  mkdir -p $tty
  printf '%s\n' "$vendor" > $tty/address
  printf '1\n' > $tty/channel
  major=216
else
  pci=/sys/devices/pci0000:00/0000:00:14.0
  mkdir -p $pci
  ln -s ../../../bus/pci $pci/subsystem
  printf 'PCI_SLOT_NAME=0000:00:14.0\n' > $pci/uevent
  hub=$pci/usb1
  mkdir -p $hub
  ln -s ../../../../bus/usb $hub/subsystem
  printf 'DEVTYPE=usb_device\nBUSNUM=001\nDEVNUM=001\n' > $hub/uevent
  dev=$hub/1-1
  mkdir -p $dev
  ln -s ../../../../../bus/usb $dev/subsystem
  printf 'DEVTYPE=usb_device\nBUSNUM=001\nDEVNUM=002\n' > $dev/uevent
  printf '%s\n' "$vendor" > $dev/idVendor
  printf '%s\n' "$product" > $dev/idProduct
  printf '0100\n' > $dev/bcdDevice
  if [ -n "$serial" ]; then printf '%s\n' "$serial" > $dev/serial; fi
  if [ -n "$mfr" ]; then printf '%s\n' "$mfr" > $dev/manufacturer; fi
  if [ -n "$prod" ]; then printf '%s\n' "$prod" > $dev/product; fi
  intf=$dev/1-1:1.0
  mkdir -p $intf
  ln -s ../../../../../../bus/usb $intf/subsystem
  ln -s ../../../../../../bus/usb/drivers/$drv $intf/driver
  printf 'DEVTYPE=usb_interface\nDRIVER=%s\n' "$drv" > $intf/uevent
  printf '00\n' > $intf/bInterfaceNumber
  printf '02\n' > $intf/bInterfaceClass
  printf '02\n' > $intf/bInterfaceSubClass
  printf '01\n' > $intf/bInterfaceProtocol
  if [ "$drv" = ftdi_sio ]; then
    port=$intf/$kernel
    mkdir -p $port
    ln -s ../../../../../../../bus/usb-serial $port/subsystem
    printf '0\n' > $port/port_number
    tty=$port/tty/$kernel
    major=188
  else
    tty=$intf/tty/$kernel
    major=166
  fi
fi
mkdir -p $tty
ln -s /sys/class/tty $tty/subsystem
printf 'MAJOR=%s\nMINOR=0\nDEVNAME=%s\n' $major "$kernel" > $tty/uevent
printf '%s:0\n' $major > $tty/dev
ln -s ../..${tty#/sys} /sys/class/tty/$kernel
mount -t tmpfs tmpfs /dev
SYSTEMD_DEVICE_VERIFY_SYSFS=0 udevadm test --action=add /sys/class/tty/$kernel 2>&1
echo "@@links"
find /dev -type l -printf '%p\n'
"#;

/// What `udevadm test` made of a simulated device.
#[derive(Debug, Default)]
struct Outcome {
    properties: BTreeMap<String, String>,
    links: Vec<String>,
    log: String,
}

impl Outcome {
    fn prop(&self, key: &str) -> Option<&str> {
        self.properties.get(key).map(String::as_str)
    }

    fn is_board(&self) -> bool {
        self.prop("EBOARDD_BOARD") == Some("1")
    }

    fn eboard_links(&self) -> Vec<&str> {
        let mut links: Vec<&str> = self
            .links
            .iter()
            .map(String::as_str)
            .filter(|l| l.starts_with("/dev/eboard/"))
            .collect();
        links.sort_unstable();
        links
    }
}

struct Device<'a> {
    vendor: &'a str,
    product: &'a str,
    serial: &'a str,
    manufacturer: &'a str,
    product_name: &'a str,
    kernel: &'a str,
    driver: &'a str,
}

const GID: u32 = 64999;

struct Simulator {
    dir: tempfile::TempDir,
}

impl Simulator {
    /// None (with the reason printed) where the simulation cannot run; under CI a failure.
    fn new() -> Option<Simulator> {
        if !require::require_root("the udev simulation mounts tmpfs in a private namespace")
            || !require::require_tools(&[("udevadm", "udev"), ("unshare", "util-linux")])
        {
            return None;
        }
        if !Command::new("unshare")
            .args(["-m", "true"])
            .status()
            .is_ok_and(|s| s.success())
        {
            require::skip_or_fail("unshare -m fails: no private mount namespace here");
            return None;
        }
        if !Path::new("/usr/lib/udev/rules.d/60-serial.rules").exists()
            && !Path::new("/lib/udev/rules.d/60-serial.rules").exists()
        {
            require::skip_or_fail("the system's 60-serial.rules is missing (Debian package udev)");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("simulate.sh"), SIMULATE).expect("script");
        // udev resolves GROUP="eboardd" through /etc/group: a copy with the group is bound over
        // it inside the namespace only.
        let mut group = std::fs::read_to_string("/etc/group").unwrap_or_default();
        if !group.lines().any(|l| l.starts_with("eboardd:")) {
            group.push_str(&format!("eboardd:x:{GID}:\n"));
        }
        std::fs::write(dir.path().join("group"), group).expect("group file");
        Some(Simulator { dir })
    }

    /// Runs the rule files `rules` (name, text) on `device`.
    fn run(&self, rules: &[(&str, &str)], device: &Device) -> Outcome {
        let rules_dir = self.dir.path().join("rules");
        let _ = std::fs::remove_dir_all(&rules_dir);
        std::fs::create_dir(&rules_dir).expect("rules dir");
        for (name, text) in rules {
            std::fs::write(rules_dir.join(name), text).expect("rule file");
        }
        let out = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh"])
            .arg(self.dir.path().join("simulate.sh"))
            .arg(&rules_dir)
            .arg(self.dir.path().join("group"))
            .args([
                device.vendor,
                device.product,
                device.serial,
                device.manufacturer,
                device.product_name,
                device.kernel,
                device.driver,
            ])
            .output()
            .expect("running unshare");
        let log = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "simulation failed: {log}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut outcome = Outcome {
            log: log.clone(),
            ..Outcome::default()
        };
        let (test_out, links) = log.split_once("@@links").expect("links marker");
        outcome.links = links
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        // The property dump follows udevadm's closing notice.
        let dump = test_out
            .rsplit_once("simulation run.")
            .map(|(_, d)| d)
            .unwrap_or("");
        for line in dump.lines() {
            if let Some((k, v)) = line.split_once('=') {
                outcome.properties.insert(k.to_owned(), v.to_owned());
            }
        }
        assert!(
            outcome.prop("DEVNAME").is_some(),
            "udevadm test printed no properties:\n{log}"
        );
        // Only the shipped rule is under test; anything udev says about it is a defect.
        for line in test_out.lines() {
            let about_ours =
                line.contains("70-eboardd.rules") || line.contains("69-eboardd-local.rules");
            let benign = line.starts_with("Reading rules file")
                || line.contains(" GROUP ")
                || line.contains(" MODE ")
                || line.contains(" LINK ")
                || line.contains("Skipping builtin 'path_id'");
            assert!(!about_ours || benign, "udev complained: {line}");
        }
        outcome
    }
}

const CDC_DGT: Device = Device {
    vendor: "045b",
    product: "8111",
    serial: "0123",
    manufacturer: "DGT",
    product_name: "DGT e-Board",
    kernel: "ttyACM0",
    driver: "cdc_acm",
};

const BT_BOARD_ON_USB: Device = Device {
    vendor: "1234",
    product: "5678",
    serial: "",
    manufacturer: "DGT",
    product_name: "DGT Chessboard",
    kernel: "ttyACM0",
    driver: "cdc_acm",
};

const FTDI_DGT: Device = Device {
    vendor: "0403",
    product: "6001",
    serial: "",
    manufacturer: "FTDI",
    product_name: "USB <-> Serial",
    kernel: "ttyUSB0",
    driver: "ftdi_sio",
};

const FTDI_ADAPTER: Device = Device {
    vendor: "0403",
    product: "6001",
    serial: "A10KZP45",
    manufacturer: "FTDI",
    product_name: "FT232R USB UART",
    kernel: "ttyUSB0",
    driver: "ftdi_sio",
};

const ARDUINO: Device = Device {
    vendor: "2341",
    product: "0043",
    serial: "75735323",
    manufacturer: "Arduino (www.arduino.cc)",
    product_name: "Arduino Uno",
    kernel: "ttyACM0",
    driver: "cdc_acm",
};

const BY_PATH: &str = "/dev/eboard/by-path/pci-0000:00:14.0-usb-0:1:1.0";

fn assert_board(o: &Outcome, kernel: &str, links: &[&str]) {
    assert!(o.is_board(), "not recognised as a board:\n{}", o.log);
    assert_eq!(o.prop("ID_MM_DEVICE_IGNORE"), Some("1"));
    assert!(
        o.prop("TAGS").unwrap_or("").contains(":systemd:"),
        "no systemd tag"
    );
    assert_eq!(
        o.prop("SYSTEMD_WANTS"),
        Some(format!("eboardd-board@{kernel}.service").as_str())
    );
    assert_eq!(o.prop("EBOARDD_PORT"), Some(BY_PATH));
    assert_eq!(o.eboard_links(), links);
    let gid = Command::new("getent")
        .args(["group", "eboardd"])
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split(':')
                .nth(2)
                .map(|s| s.trim().to_owned())
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| GID.to_string());
    assert!(
        o.log.contains(&format!("GROUP {gid}")),
        "group eboardd not applied:\n{}",
        o.log
    );
    assert!(o.log.contains("MODE 0660"), "mode 0660 not applied");
}

fn assert_not_board(o: &Outcome) {
    assert!(!o.is_board(), "wrongly recognised as a board:\n{}", o.log);
    assert_eq!(o.prop("ID_MM_DEVICE_IGNORE"), None);
    assert!(o.eboard_links().is_empty(), "links: {:?}", o.eboard_links());
    assert!(!o.prop("SYSTEMD_WANTS").unwrap_or("").contains("eboardd"));
    assert!(!o.log.contains("70-eboardd.rules:") || !o.log.contains(" GROUP "));
}

#[test]
fn udev_recognises_boards_and_leaves_other_devices_alone() {
    let Some(sim) = Simulator::new() else {
        return;
    };
    let rule = read(RULE);
    let shipped = [("70-eboardd.rules", rule.as_str())];

    let o = sim.run(&shipped, &CDC_DGT);
    assert_board(
        &o,
        "ttyACM0",
        &[
            "/dev/eboard/by-path/pci-0000:00:14.0-usb-0:1:1.0",
            "/dev/eboard/by-serial/0123",
        ],
    );
    // 60-serial.rules still gives its own names.
    assert!(o.links.iter().any(|l| l.starts_with("/dev/serial/by-id/")));

    let o = sim.run(&shipped, &BT_BOARD_ON_USB);
    assert_eq!(o.prop("ID_SERIAL"), Some("DGT_DGT_Chessboard"));
    assert_board(&o, "ttyACM0", &[BY_PATH]);

    assert_not_board(&sim.run(&shipped, &ARDUINO));
    assert_not_board(&sim.run(&shipped, &FTDI_DGT));
    assert_not_board(&sim.run(&shipped, &FTDI_ADAPTER));
}

/// A bound rfcomm link (`rfcomm bind`): a board, named by its Bluetooth address, handed to
/// the group and to systemd like a USB board; a local rule can leave it alone.
#[test]
fn udev_recognises_bound_bluetooth_links() {
    let Some(sim) = Simulator::new() else {
        return;
    };
    let rule = read(RULE);
    let shipped = [("70-eboardd.rules", rule.as_str())];
    let link = Device {
        vendor: "00:06:66:12:34:56",
        product: "",
        serial: "",
        manufacturer: "",
        product_name: "",
        kernel: "rfcomm0",
        driver: "rfcomm",
    };
    let o = sim.run(&shipped, &link);
    assert!(o.is_board(), "not recognised as a board:\n{}", o.log);
    let by_address = "/dev/eboard/by-bluetooth/00:06:66:12:34:56";
    assert_eq!(o.eboard_links(), [by_address]);
    assert_eq!(o.prop("EBOARDD_PORT"), Some(by_address));
    assert_eq!(o.prop("ID_MM_DEVICE_IGNORE"), Some("1"));
    assert_eq!(
        o.prop("SYSTEMD_WANTS"),
        Some("eboardd-board@rfcomm0.service")
    );
    assert!(o.log.contains("MODE 0660"), "mode 0660 not applied");
    // A link that is not a board, marked so by a local rule sorting before the shipped one.
    let local = r#"SUBSYSTEM=="tty", KERNEL=="rfcomm0", ENV{EBOARDD_BOARD}="0""#;
    let o = sim.run(
        &[
            ("69-eboardd-local.rules", local),
            ("70-eboardd.rules", rule.as_str()),
        ],
        &link,
    );
    assert_not_board(&o);
}

#[test]
fn udev_ftdi_boards_are_opt_in() {
    let Some(sim) = Simulator::new() else {
        return;
    };
    // The commented line enabled, as the install notes describe.
    let enabled: String = read(RULE)
        .lines()
        .map(|l| {
            if l.starts_with("#KERNEL==\"ttyUSB") {
                &l[1..]
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let rules = [("70-eboardd.rules", enabled.as_str())];
    assert_board(&sim.run(&rules, &FTDI_DGT), "ttyUSB0", &[BY_PATH]);
    // Even then an FTDI adapter with its own strings and serial number is left alone.
    assert_not_board(&sim.run(&rules, &FTDI_ADAPTER));

    // The other way: a local rule marks one USB port, the shipped file untouched.
    let local =
        r#"SUBSYSTEM=="tty", ENV{ID_PATH}=="pci-0000:00:14.0-usb-0:1:1.0", ENV{EBOARDD_BOARD}="1""#;
    let rule = read(RULE);
    let rules = [
        ("69-eboardd-local.rules", local),
        ("70-eboardd.rules", rule.as_str()),
    ];
    let o = sim.run(&rules, &FTDI_ADAPTER);
    assert_board(&o, "ttyUSB0", &[BY_PATH, "/dev/eboard/by-serial/A10KZP45"]);
}
