//! What the tests of the two bridges (`eboardctl serve`, `eboardctl livechess`) share: starting
//! one and reading where it listens, and reading its messages until the one a test waits for.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, Command};

use super::{WAIT, die_with_parent, within};

/// `eboardctl --bus ADDRESS VERB --listen LISTEN EXTRA…`, `configure` having its say on the
/// command (limits, environment). Reads its stderr, each line given to `line`, up to the one
/// holding `marker`; returns the bridge, the rest of that line (trimmed) and the lines to come.
pub async fn start_bridge(
    address: &str,
    verb: &str,
    listen: &str,
    extra: &[&str],
    configure: impl FnOnce(&mut Command),
    marker: &str,
    mut line: impl FnMut(&str),
) -> (Child, String, Lines<BufReader<ChildStderr>>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_eboardctl"));
    cmd.args(["--bus", address, verb, "--listen", listen])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    configure(&mut cmd);
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawn eboardctl {verb}: {e}"));
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let listening = within(WAIT, &format!("{verb} to say where it listens"), async {
        loop {
            let text = lines
                .next_line()
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{verb} exited before listening"));
            line(&text);
            if let Some(rest) = text.split(marker).nth(1) {
                return rest.trim().to_owned();
            }
        }
    })
    .await;
    (child, listening, lines)
}

/// Items from `next` until one satisfies `pred` (included); panics after `limit`.
pub async fn until_one<T>(
    limit: Duration,
    what: &str,
    mut next: impl AsyncFnMut() -> T,
    pred: impl Fn(&T) -> bool,
) -> Vec<T> {
    within(limit, what, async {
        let mut seen = Vec::new();
        loop {
            let item = next().await;
            let done = pred(&item);
            seen.push(item);
            if done {
                return seen;
            }
        }
    })
    .await
}
