//! `eboardctl watch --mqtt` against a neighbour on the hall's broker (Debian's `mosquitto` on
//! loopback) who publishes a board whose name holds terminal escape sequences (set the window
//! title, clear the screen, a C1 control): the line view, the JSON lines and the full-screen
//! view (in tmux) show them escaped as `\u001b`, and never write them to the terminal.

mod common;
mod ctl_support;
mod relay_support;

use relay_support::{Broker, publish};
use serde_json::json;

const PREFIX: &str = "hall";
const FORGED: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2Jfake\u{9b}1m";

fn retained(rest: &str, payload: String) -> (String, Vec<u8>, bool) {
    (format!("{PREFIX}/{rest}"), payload.into_bytes(), true)
}

fn clean(what: &str, text: &str) {
    assert!(
        !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
        "{what} writes control characters: {text:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_board_name_is_escaped_in_every_watch_view() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start(dir.path()).await;
    publish(
        broker.port,
        &[
            retained("rig-a/status", "online".into()),
            retained("rig-a/run", "r1".into()),
            retained(
                "rig-a/board_1/state",
                json!({"Name": FORGED, "Number": 1, "State": "playing", "Moves": [],
                    "Connected": true, "Pgn": "*"})
                .to_string(),
            ),
        ],
    )
    .await;
    let url = broker.url();
    let base = ["watch", "--mqtt", url.as_str(), "--prefix", PREFIX];

    let mut lines = ctl_support::Watch::spawn("session", &base);
    let line = lines
        .until("the forged board's line", |l| l.contains("fake"))
        .await;
    clean("watch --mqtt", &line);
    assert!(
        line.contains("\\u001b]0;pwned\\u0007\\u001b[2Jfake\\u009b1m"),
        "{line}"
    );

    let json_args: Vec<&str> = std::iter::once("--json").chain(base).collect();
    let mut json_lines = ctl_support::Watch::spawn("session", &json_args);
    let line = json_lines
        .until("the forged board's JSON line", |l| l.contains("fake"))
        .await;
    clean("watch --mqtt --json", &line);
    let value: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
    assert!(value.to_string().contains("fake"), "{value}");

    if !ctl_support::require_tmux() {
        return;
    }
    let command: Vec<String> = std::iter::once(ctl_support::eboardctl())
        .chain(base)
        .map(str::to_owned)
        .collect();
    let tmux = ctl_support::Tmux::start(dir.path(), 100, 40, &command).await;
    let screen = tmux
        .until("the forged board's panel", |s| s.contains("pwned"))
        .await;
    assert!(screen.contains("rig-a/\\u001b]0;pwned\\u0007"), "{screen}");
}
