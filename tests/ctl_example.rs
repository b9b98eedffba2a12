//! The Python overlay example (examples/overlay.py) against the D-Bus contract, on a private
//! bus with the contract stand-in: it must follow moves, clocks, claims, the flag and the
//! result, and keep its JSON file current. Skipped (with a message) when no Python with the
//! dbus and GLib bindings is installed; under `CI=true` that fails instead.

mod common;
mod ctl_support;

use std::process::Stdio;

use common::{Bus, die_with_parent, within};
use ctl_support::WAIT;
use ctl_support::contract::Daemon;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// A Python that has the bindings the example needs.
fn python() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        std::process::Command::new(py)
            .args([
                "-c",
                "import dbus, dbus.mainloop.glib; from gi.repository import GLib",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_overlay_follows_moves_clocks_claims_and_the_end() {
    let Some(py) = python() else {
        common::require::skip_or_fail(
            "no python3 with the dbus and gi modules (Debian packages python3-dbus, python3-gi)",
        );
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = Bus::start(dir.path()).await;
    let daemon = Daemon::start(
        &bus.address,
        &[("board-1", "/dev/ttyACM0"), ("board-2", "/dev/ttyACM1")],
    )
    .await;
    let out_file = dir.path().join("overlay.json");

    let mut cmd = Command::new(py);
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/overlay.py"))
        .arg("--bus")
        .arg(&bus.address)
        .arg("--out")
        .arg(&out_file)
        .arg("board-1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    let mut child = cmd.spawn().expect("run the example");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next_matching = async |what: &str, pred: &dyn Fn(&Value) -> bool| -> Value {
        within(WAIT, what, async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .expect("read")
                    .unwrap_or_else(|| panic!("the example ended before {what}"));
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                assert_eq!(v["board"], "board-1", "only the board asked for: {line}");
                if pred(&v) {
                    return v;
                }
            }
        })
        .await
    };

    let v = next_matching("the board", &|v| v["event"] == "board").await;
    assert_eq!(v["white"], "Anna");
    assert_eq!(v["black"], "Ben");

    daemon.play("board-2", "e4").await;
    daemon.play("board-1", "d4").await;
    let v = next_matching("the move", &|v| v["event"] == "move").await;
    assert_eq!(v["last_move"], "d4");
    assert_eq!(v["white_clock"], "0:05:00");
    let v = next_matching("the clock change", &|v| v["clock_running"] == "black").await;
    assert_eq!(v["moves"], serde_json::json!(["d4"]));

    daemon
        .offer_claim("board-1", "black", "threefold-repetition", "")
        .await;
    let v = next_matching("the claim", &|v| {
        v["claims"].as_array().is_some_and(|c| !c.is_empty())
    })
    .await;
    assert_eq!(v["claims"][0]["kind"], "threefold-repetition");

    daemon.flag("board-1", "black").await;
    next_matching("the flag", &|v| v["event"] == "flag:black").await;
    let v = next_matching("the end", &|v| v["event"] == "ended").await;
    assert_eq!(v["result"], "1-0");
    assert_eq!(v["termination"], "time-forfeit");

    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).expect("the overlay file exists"))
            .expect("the overlay file is JSON");
    assert_eq!(file[0]["board"], "board-1");
    assert_eq!(file[0]["result"], "1-0");
    assert_eq!(file.as_array().map(Vec::len), Some(1));

    let _ = child.start_kill();
}
