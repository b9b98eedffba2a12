//! eboardctl's bounds, end to end with the real binaries:
//!
//! * one escaping path: no printing is left in the client's sources but the one that escapes
//!   (`cli::print_text`, `print_line`, `say`, `print_error`), and text from outside — a board
//!   id typed on the command line, a pairings file's name and the names in it, a tag, a
//!   mistyped command — reaches the terminal with its control characters escaped, errors
//!   included;
//! * bounded reads: every file a command opens (a capture for `decode` and `replay`, a PGN for
//!   `simulate`, a pairings file, `--config` for eboardd and `eboardctl doctor`) is read up to
//!   its documented bound and refused past it with a named error — `/dev/zero` and a sparse
//!   file of 2 GiB are refused at once, nothing hangs or eats memory;
//! * the game's own tags: a configuration naming `PlyCount`, `Termination`… is refused with
//!   its file, line and key (exit 2), `SetTags` (and `eboardctl tags`) refuses them during a
//!   game, and the game in progress is untouched.

mod common;
mod ctl_support;

use std::path::Path;

use common::board::FakeBoard;
use common::proxies::{self, fresh};
use common::{Bus, Daemon, code, wait_property};
use ctl_support::{Output, ctl};

const ESC: char = '\u{1b}';

/// No control character reached the terminal: every one was escaped.
fn escaped(out: &Output) {
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\r'),
            "a raw control character on {stream}: {text:?}"
        );
    }
}

/// Every source file of the client: `src/cli`, `src/client` and the binary.
fn client_sources() -> Vec<std::path::PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("src/bin/eboardctl.rs")];
    walk(&root.join("src/cli"), &mut files);
    walk(&root.join("src/client"), &mut files);
    files
}

#[test]
fn every_printed_line_goes_through_the_one_escaping_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The one path, and the full-screen watch whose frames are the view's own escape
    // sequences (its text is escaped before it reaches the view).
    let writers = [
        root.join("src/cli/mod.rs"),
        root.join("src/cli/watch/mod.rs"),
    ];
    let mut found = Vec::new();
    for file in client_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        // Production code only: unit tests may print what they like.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            let prints = ["println!", "eprintln!", "print!(", "eprint!("]
                .iter()
                .any(|m| line.contains(m));
            // `stdout()` or `stderr()` called as such (not `use_stderr()`), other than to ask
            // whether it is a terminal.
            let called = |name: &str| {
                line.match_indices(name).any(|(at, _)| {
                    !line[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            };
            let streams =
                (called("stdout()") || called("stderr()")) && !line.contains("is_terminal()");
            if prints || (streams && !writers.contains(&file)) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "printing outside the escaping path:\n{}",
        found.join("\n")
    );
}

/// A daemon with three numbered boards, none plugged in.
async fn hall(dir: &Path) -> (Bus, Daemon, zbus::Connection) {
    let config = dir.join("eboardd.toml");
    std::fs::write(
        &config,
        "[[board]]\nname = \"t1\"\nport = \"/nonexistent/a\"\nnumber = 1\n\
         [[board]]\nname = \"t2\"\nport = \"/nonexistent/b\"\nnumber = 2\n",
    )
    .unwrap();
    let bus = Bus::start(dir).await;
    let mut daemon = Daemon::spawn(&bus, dir, &["--config", config.to_str().unwrap()]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    (bus, daemon, conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_from_outside_is_escaped_in_every_line_errors_too() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _daemon, conn) = hall(dir.path()).await;
    let a = bus.address.as_str();

    // A board id with a terminal escape (retitle the window, ring the bell).
    let id = format!("t9{ESC}]0;owned\u{7}");
    for args in [
        vec!["status", id.as_str()],
        vec!["pgn", id.as_str()],
        vec!["new-game", id.as_str()],
    ] {
        let out = ctl(a, &args).await;
        assert_ne!(out.code, 0, "{out:?}");
        // Named, visibly escaped (whichever escape the message uses).
        assert!(out.stderr.contains("]0;owned"), "{out:?}");
        escaped(&out);
    }

    // A usage error quotes what was typed: escaped too, still exit 2.
    let typed = format!("bogus{ESC}[2J\u{7}\u{9b}31m");
    let out = ctl(a, &[typed.as_str()]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("bogus"), "{out:?}");
    escaped(&out);

    // A tag value with an escape: the daemon refuses it, the refusal is printed escaped.
    let value = format!("White=A{ESC}[2J");
    let out = ctl(a, &["tags", "t1", &value]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("InvalidArgument"), "{out:?}");
    escaped(&out);

    // A pairings file whose name and player names hold escapes, and whose board number is
    // unknown: the whole file is refused, and the error shows both escaped.
    let file = dir.path().join(format!("round{ESC}[2J.csv"));
    std::fs::write(
        &file,
        format!("board,white,black,round\n1,Ann{ESC}[31m,Bob,3\n7,Cy,Di{ESC}]0;x\u{7},3\n"),
    )
    .unwrap();
    let out = ctl(a, &["pairings", file.to_str().unwrap()]).await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("round\\u001b[2J.csv: line 2"),
        "{out:?}"
    );
    assert!(out.stderr.contains("nothing was set"), "{out:?}");
    escaped(&out);
    let file = dir.path().join(format!("ok{ESC}[2J.csv"));
    std::fs::write(&file, "board,white,black,round\n1,Ann,Bob,3\n9,Cy,Di,3\n").unwrap();
    let out = ctl(a, &["pairings", file.to_str().unwrap()]).await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("ok\\u001b[2J.csv: line 3: no board has table number 9"),
        "{out:?}"
    );
    escaped(&out);
    // Nothing was set.
    assert!(
        !fresh(&conn, "t1")
            .await
            .pgn()
            .await
            .unwrap()
            .contains("Ann")
    );

    // What it prints on success goes the same way.
    let file = dir.path().join("fine.csv");
    std::fs::write(&file, "board,white,black,round\n1,Ann,Bob,3\n").unwrap();
    let out = ctl(a, &["pairings", file.to_str().unwrap()]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("t1 (table 1): White=Ann Black=Bob"),
        "{out:?}"
    );
}

/// A regular file of 2 GiB that takes no disk (a sparse file).
fn sparse(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_a_command_opens_is_read_within_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _daemon, _conn) = hall(dir.path()).await;
    let a = bus.address.as_str();
    let big = sparse(dir.path(), "big");
    let link = dir.path().join("link").display().to_string();

    for file in ["/dev/zero", big.as_str()] {
        let refusals: [(Vec<&str>, &str); 5] = [
            (
                vec!["decode", file],
                "larger than 64 MiB, which no capture is",
            ),
            (
                vec!["replay", file, "--link", &link],
                "larger than 64 MiB, which no capture is",
            ),
            (
                vec![
                    "simulate",
                    "--pgn",
                    file,
                    "--link",
                    &link,
                    "--exit-when-done",
                ],
                "larger than 64 MiB, which no PGN file is",
            ),
            (
                vec!["pairings", file],
                "larger than 8 MiB, which no pairings file is",
            ),
            (
                vec!["doctor", "--config", file],
                "larger than 1 MiB, which no configuration file is",
            ),
        ];
        for (args, needle) in refusals {
            let out = ctl(a, &args).await;
            assert_ne!(out.code, 0, "{args:?}: {out:?}");
            let all = format!("{}{}", out.stdout, out.stderr);
            assert!(all.contains(needle), "{args:?}: {out:?}");
            assert!(all.contains(file), "{args:?} names the file: {out:?}");
        }
        // The daemon: a bad configuration, exit 2, the file named.
        let mut daemon = Daemon::spawn_raw(
            dir.path(),
            &[
                "--config".into(),
                file.into(),
                "--bus".into(),
                bus.address.clone(),
            ],
        );
        assert_eq!(
            code(daemon.wait(common::WAIT).await),
            2,
            "{}",
            daemon.stderr()
        );
        let log = daemon.stderr();
        assert!(
            log.contains(file) && log.contains("larger than 1 MiB, which no configuration file is"),
            "{log}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_games_own_tags_never_come_from_configuration_or_set_tags() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "tb");
    let config = dir.path().join("eboardd.toml");
    let write_config = |extra: &str| {
        std::fs::write(
            &config,
            format!(
                "[[board]]\nname = \"tb\"\nport = \"{}\"\ntags = {{ Event = \"Open\"{extra} }}\n",
                board.path_str()
            ),
        )
        .unwrap()
    };
    write_config("");
    let bus = Bus::start(dir.path()).await;
    let args = ["--config", config.to_str().unwrap()];
    let mut daemon = Daemon::spawn(&bus, dir.path(), &args);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let b = proxies::board(&conn, "tb").await;
    let mut placement = b.receive_placement_changed().await;
    wait_property(&mut placement, "the start position", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    })
    .await;
    // 1. e4: a game in progress.
    board.send(&common::board::field_update(52, 0)).await;
    board.send(&common::board::field_update(36, 1)).await;
    let mut moves = b.receive_moves_changed().await;
    wait_property(&mut moves, "1. e4", |m| m == &["e4"]).await;

    // SetTags refuses the record's own tags, alone or beside good ones; nothing is set.
    for tag in [
        "PlyCount",
        "Termination",
        "Result",
        "FEN",
        "SetUp",
        "Variant",
        "WhiteClock",
    ] {
        let tags = std::collections::HashMap::from([("White", "Ann"), (tag, "0")]);
        let e = b.set_tags(tags).await.unwrap_err();
        assert_eq!(
            proxies::error_name(&e),
            "org.eboardd.Bridge1.Error.InvalidArgument"
        );
        let message = proxies::error_message(&e);
        assert!(
            message.contains(tag) && message.contains("writes itself"),
            "{message}"
        );
    }
    let out = ctl(&bus.address, &["tags", "tb", "PlyCount=1"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("writes itself"), "{out:?}");
    let pgn = fresh(&conn, "tb").await.pgn().await.unwrap();
    assert!(!pgn.contains("PlyCount") && !pgn.contains("Ann"), "{pgn}");
    assert!(pgn.contains("[Termination \"unterminated\"]"), "{pgn}");

    // Restarted with a configuration that names one: refused at start, file, line and key.
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(
        code(daemon.wait(common::WAIT).await),
        0,
        "{}",
        daemon.stderr()
    );
    for (extra, tag) in [
        (", PlyCount = \"0\"", "PlyCount"),
        (", Termination = \"normal\"", "Termination"),
        (", Variant = \"Chess960\"", "Variant"),
    ] {
        write_config(extra);
        let mut refused = Daemon::spawn(&bus, dir.path(), &args);
        assert_eq!(
            code(refused.wait(common::WAIT).await),
            2,
            "{}",
            refused.stderr()
        );
        let log = refused.stderr();
        let at = format!("{}:4: key `board[1].tags.{tag}`", config.display());
        assert!(log.contains(&at) && log.contains("writes itself"), "{log}");
    }
    // The game in progress was not touched: with the configuration mended it is back, e4 and
    // all, with none of those tags.
    write_config("");
    let mut daemon = Daemon::spawn(&bus, dir.path(), &args);
    daemon.wait_for_name(&conn).await;
    let again = fresh(&conn, "tb").await;
    assert_eq!(again.moves().await.unwrap(), ["e4"]);
    let pgn = again.pgn().await.unwrap();
    assert!(pgn.contains("[Event \"Open\"]"), "{pgn}");
    assert!(
        !pgn.contains("PlyCount") && !pgn.contains("normal") && !pgn.contains("Chess960"),
        "{pgn}"
    );
}
