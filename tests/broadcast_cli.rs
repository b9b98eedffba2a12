//! `eboardctl broadcast` refuses what cannot work at start, with exit code 2 and a message
//! naming the fault and never the token: a token file others can read, no token at all, a
//! bad round id, URL or board range, and a round of more than 64 games (lichess's limit,
//! checked against a stand-in daemon serving 65 boards). `$LICHESS_TOKEN` is the other way
//! to give the token, and it is sent, not shown.

mod broadcast_support;
mod common;
mod ctl_support;

use std::time::Duration;

use broadcast_support::{Broadcaster, Lichess, TOKEN, token_file};
use common::Bus;
use ctl_support::contract::{Daemon, path_of};

/// An address nobody listens on: these refusals come before any connection attempt.
const NO_BUS: &str = "unix:path=/nonexistent/bus";

async fn refused(
    dir: &std::path::Path,
    address: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> String {
    let mut b = Broadcaster::spawn(address, dir, args, env);
    let code = b.exit_code(Duration::from_secs(30)).await;
    let out = b.output();
    assert_eq!(code, 2, "{args:?}: {out}");
    assert!(!out.contains(TOKEN), "the token was printed: {out}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_options_and_tokens_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let open = token_file(d, 0o644);
    let open = open.to_str().unwrap();
    let out = refused(
        d,
        NO_BUS,
        &["--round", "aBcD1234", "--token-file", open],
        &[],
    )
    .await;
    assert!(
        out.contains("--token-file") && out.contains("chmod 600"),
        "{out}"
    );
    let group = token_file(d, 0o640);
    let out = refused(
        d,
        NO_BUS,
        &[
            "--round",
            "aBcD1234",
            "--token-file",
            group.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert!(out.contains("its group"), "{out}");
    let out = refused(d, NO_BUS, &["--round", "aBcD1234"], &[]).await;
    assert!(
        out.contains("LICHESS_TOKEN") && out.contains("study:write"),
        "{out}"
    );

    let private = token_file(d, 0o600);
    let private = private.to_str().unwrap();
    for (args, says) in [
        (vec!["--round", "../etc"], "--round"),
        (
            vec!["--round", "aBcD1234", "--url", "ftp://lichess.org"],
            "--url",
        ),
        (
            vec!["--round", "aBcD1234", "--boards", "1-65"],
            "at most 64",
        ),
        (vec!["--round", "aBcD1234", "--boards", "4-2"], "--boards"),
        (
            vec!["--round", "aBcD1234", "--round-number", "0"],
            "--round-number",
        ),
    ] {
        let mut full = args.clone();
        full.extend(["--token-file", private]);
        let out = refused(d, NO_BUS, &full, &[]).await;
        assert!(out.contains(says), "{args:?} should say {says:?}: {out}");
    }
}

/// Sets these PGN tags on the stand-in's board `name` through the bus, as an arbiter does.
async fn set_tags(daemon: &Daemon, name: &str, pairs: &[(&str, &str)]) {
    let tags: std::collections::HashMap<&str, &str> = pairs.iter().copied().collect();
    daemon
        .conn
        .call_method(
            Some(eboard_core::contract::BUS_NAME),
            path_of(name).as_str(),
            Some(eboard_core::contract::BOARD_INTERFACE),
            "SetTags",
            &(tags,),
        )
        .await
        .expect("SetTags");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_than_64_games_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::start(dir.path()).await;
    let names: Vec<String> = (1..=65).map(|n| format!("t{n}")).collect();
    let boards: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "/dev/null")).collect();
    let daemon = Daemon::start(&bus.address, &boards).await;
    for (n, name) in names.iter().enumerate() {
        let round = format!("2.{}", n + 1);
        set_tags(&daemon, name, &[("Round", round.as_str())]).await;
    }
    let lichess = Lichess::start().await;
    let token = token_file(dir.path(), 0o600);
    let out = refused(
        dir.path(),
        &bus.address,
        &[
            "--round",
            "aBcD1234",
            "--token-file",
            token.to_str().unwrap(),
            "--url",
            &lichess.url,
        ],
        &[],
    )
    .await;
    assert!(
        out.contains("65 games") && out.contains("--boards"),
        "{out}"
    );
    assert!(lichess.requests().is_empty(), "nothing was pushed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_can_come_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::start(dir.path()).await;
    let daemon = Daemon::start(&bus.address, &[("t1", "/dev/null")]).await;
    set_tags(&daemon, "t1", &[("Round", "1.1"), ("White", "A")]).await;
    let lichess = Lichess::start().await;
    let mut b = Broadcaster::spawn(
        &bus.address,
        dir.path(),
        &["--round", "aBcD1234", "--url", &lichess.url],
        &[("LICHESS_TOKEN", TOKEN)],
    );
    let r = lichess
        .wait_for("a push", Duration::from_secs(30), |_| true)
        .await;
    assert_eq!(r.authorization, format!("Bearer {TOKEN}"));
    assert_eq!(r.games().len(), 1);
    assert_eq!(r.games()[0].tag("White"), Some("A"));
    b.child.start_kill().unwrap();
    b.exit_code(Duration::from_secs(30)).await;
    assert!(!b.output().contains(TOKEN), "{}", b.output());
}
