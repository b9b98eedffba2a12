//! `eboardctl broadcast` end to end: simulated boards on ptys, the real eboardd on a private
//! bus, the broadcaster pushing to a stand-in of lichess's endpoint on a loopback port
//! (`--url`). The stand-in checks every request (method, path, headers, a body that parses
//! as PGN with the round's games in board order) and answers in turn with per-game results
//! (one game refused), 429 with `Retry-After`, 500, and at last 401. Two games are played
//! through the simulator: one with a move put down and taken back before it was final, one
//! ended with the result gesture; each arrives complete and in order, and neither the
//! retracted move nor a king move of the gesture ever arrives. The refused game shows on
//! the terminal, in `eboardctl status` and in `eboardctl watch`; the token shows nowhere.

mod broadcast_support;
mod common;
mod ctl_support;

use std::time::Duration;

use broadcast_support::{Broadcaster, Lichess, Reply, TOKEN, ctl_in, token_file, watch_until};
use common::events::{Ev, Event, Events};
use common::proxies::board;
use common::rig::{SimRig, moves, ready_to_play};
use eboard_core::vocab::GameResult;
use eboard_sim::{Noise, Pace, Scenario, ScenarioOptions, Step};

const ROUND_ID: &str = "aBcD1234";
/// Generous: a push comes within a second of a change, but the machine may be busy.
const LONG: Duration = Duration::from_secs(60);

/// The tags of the game on board 1 (the round's first).
const BOARD_1: [(&str, &str); 4] = [
    ("Event", "City Open"),
    ("Round", "5.1"),
    ("White", "Alpha, Ann"),
    ("Black", "Beta, Bob"),
];

/// Sets these PGN tags on board `id`, as an arbiter does.
async fn set_tags(conn: &zbus::Connection, id: &str, pairs: &[(&str, &str)]) {
    let tags: std::collections::HashMap<&str, &str> = pairs.iter().copied().collect();
    board(conn, id).await.set_tags(tags).await.unwrap();
}

/// The broadcaster of round [`ROUND_ID`] with a token file, pushing to `lichess`.
fn broadcaster(rig: &SimRig, lichess: &Lichess) -> Broadcaster {
    let token = token_file(rig.dir.path(), 0o600);
    Broadcaster::spawn(
        rig.address(),
        rig.dir.path(),
        &[
            "--round",
            ROUND_ID,
            "--token-file",
            token.to_str().unwrap(),
            "--url",
            &lichess.url,
        ],
        &[],
    )
}

/// Quick, clean hands; `press_clock: false` leaves a move unconfirmed until the opponent
/// touches the board or 2 s pass, so it can still be taken back before it is final.
fn scenario(rig: &SimRig, i: usize, press_clock: bool) -> Scenario<'_> {
    Scenario::new(
        &rig.sims[i],
        ScenarioOptions {
            pace: Pace {
                think_ms: (150, 250),
                press_ms: (20, 40),
                hand_ms: (10, 30),
            },
            noise: Noise::Clean,
            seed: 25 + i as u64,
            press_clock,
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_reaches_lichess_through_every_answer() {
    let rig = SimRig::start(&["b1", "b2"], &[]).await;
    let conn = rig.bus.client().await;
    let mut ev1 = Events::start(&conn, "b1").await;
    let mut ev2 = Events::start(&conn, "b2").await;
    ready_to_play(&rig.sims[0], &mut ev1).await;
    ready_to_play(&rig.sims[1], &mut ev2).await;
    // The pairings: board 2 listed first, so board order is not the bus's order.
    set_tags(
        &conn,
        "b2",
        &[
            ("Event", "City Open"),
            ("Round", "5.2"),
            ("White", "Gamma, Gina"),
            ("Black", "Delta, Dan"),
        ],
    )
    .await;
    let ratings = [
        ("WhiteElo", "2210"),
        ("BlackElo", "2105"),
        ("WhiteFideId", "1503014"),
        ("BlackFideId", "4100018"),
    ];
    set_tags(&conn, "b1", &[&BOARD_1[..], &ratings].concat()).await;

    let lichess = Lichess::start().await;
    lichess.refuse_game(Some((1, "Invalid PGN: stand-in refuses board 2")));
    let mut caster = broadcaster(&rig, &lichess);

    // The first push: both games, board 2 refused; status shows it on that board only.
    lichess
        .wait_for("the first push", LONG, |r| r.games().len() == 2)
        .await;
    let status = within_status(&rig, "b2", "refused").await;
    assert!(
        status.contains("Invalid PGN: stand-in refuses board 2") && status.contains(ROUND_ID),
        "{status}"
    );
    let watched = watch_until(rig.dir.path(), rig.address(), &["b2"], "broadcast:").await;
    assert!(
        watched.contains("refused") && watched.contains("Invalid PGN"),
        "{watched}"
    );
    let status1 = within_status(&rig, "b1", "✓").await;
    assert!(status1.contains("board 1"), "{status1}");

    // Then lichess takes every game again, after a 429 (Retry-After: 2) and a 500.
    lichess.refuse_game(None);
    lichess.script(&[Reply::Status(429, Some("2")), Reply::Status(500, None)]);

    // Board 2: a move set down (shown as played, not yet final: no clock press, and taken
    // back well before the board has stood still for 2 s), then the real one.
    let mut s2 = scenario(&rig, 1, false);
    s2.run(&[moves(&["d4", "d5", "c4", "e6"])]).await.unwrap();
    ev2.next_matching(
        "MovePlayed e6",
        |e| matches!(e, Ev::Signal(Event::MovePlayed { san, .. }) if san == "e6"),
    )
    .await;
    s2.run(&[Step::TakeBack(1)]).await.unwrap();
    ev2.next_matching("MoveRetracted", |e| {
        matches!(e, Ev::Signal(Event::MoveRetracted { .. }))
    })
    .await;
    s2.run(&[moves(&["c6"])]).await.unwrap();
    // Board 1: a game ended with the result gesture (the kings' moves are no part of it).
    let mut s1 = scenario(&rig, 0, true);
    s1.run(&[
        moves(&["Nf3", "Nf6", "g3", "g6", "Bg2", "Bg7"]),
        Step::ResultGesture(GameResult::WhiteWins),
    ])
    .await
    .unwrap();

    let last = lichess
        .wait_for("both games complete", LONG, |r| {
            let g = r.games();
            r.answered == 200
                && g.len() == 2
                && g[0].sans == ["Nf3", "Nf6", "g3", "g6", "Bg2", "Bg7"]
                && g[0].result.as_deref() == Some("1-0")
                && g[1].sans == ["d4", "d5", "c4", "c6"]
        })
        .await;
    let games = last.games();
    for (tag, want) in [
        ("Event", "City Open"),
        ("Round", "5.1"),
        ("White", "Alpha, Ann"),
        ("Black", "Beta, Bob"),
        ("Result", "1-0"),
        ("WhiteElo", "2210"),
        ("BlackElo", "2105"),
        ("WhiteFideId", "1503014"),
        ("BlackFideId", "4100018"),
    ] {
        assert_eq!(games[0].tag(tag), Some(want), "{tag} in {}", last.body);
    }
    assert!(games[0].tag("Site").is_some() && games[0].tag("Date").is_some());
    assert!(last.body.contains("[%clk "), "clock times: {}", last.body);

    let all = lichess.requests();
    for r in &all {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, format!("/api/broadcast/round/{ROUND_ID}/push"));
        assert!(r.content_type.starts_with("text/plain"), "{r:?}");
        assert_eq!(r.authorization, format!("Bearer {TOKEN}"));
        let games = r.games();
        assert!(!games.is_empty() && games.len() <= 2, "{}", r.body);
        // Board order in every body, and nothing that was not final.
        assert_eq!(games[0].tag("Round"), Some("5.1"), "{}", r.body);
        if let Some(g2) = games.get(1) {
            assert_eq!(g2.tag("Round"), Some("5.2"), "{}", r.body);
            assert!(
                !g2.sans.contains(&"e6".to_string()),
                "a retracted move: {}",
                r.body
            );
        }
        assert!(
            !games[0].sans.iter().any(|m| m.starts_with('K')),
            "a king move of the gesture: {}",
            r.body
        );
        for g in &games {
            g.moves().expect("every body's moves replay as legal chess");
        }
    }
    // At most one push a second; after the 429 the next waited as Retry-After said.
    for pair in all.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(800), "pushes {gap:?} apart");
    }
    let i429 = all
        .iter()
        .position(|r| r.answered == 429)
        .expect("a 429 was answered");
    assert!(all[i429 + 1].at - all[i429].at >= Duration::from_millis(1_800));
    assert_eq!(all[i429 + 1].answered, 500, "then the 500");
    // Nothing was sent twice in a row unchanged after being taken.
    for pair in all.windows(2) {
        assert!(
            !(pair[0].answered == 200 && pair[0].body == pair[1].body),
            "a body lichess took was sent again"
        );
    }
    let status = within_status(&rig, "b2", "✓").await;
    assert!(!status.contains("refused"), "{status}");

    // A revoked token: the broadcaster stops and says what the token needs.
    lichess.script(&[Reply::Status(401, None)]);
    set_tags(&conn, "b2", &[("Annotator", "arbiter")]).await;
    assert_eq!(caster.exit_code(LONG).await, 1);
    let output = caster.output();
    assert!(
        output.contains("study:write") && output.contains("contributor"),
        "{output}"
    );
    assert!(
        output.contains("board 2") && output.contains("Invalid PGN"),
        "the refused game on the terminal: {output}"
    );
    assert!(!output.contains(TOKEN), "the token was printed: {output}");
    let status = ctl_in(rig.dir.path(), rig.address(), &["status", "b2"]).await;
    assert!(!status.stdout.contains("broadcast:"), "{}", status.stdout);
}

/// Polls `eboardctl status BOARD` until its output holds `want`; returns it.
async fn within_status(rig: &SimRig, id: &str, want: &str) -> String {
    common::within(LONG, &format!("status {id} to say {want:?}"), async {
        loop {
            let out = ctl_in(rig.dir.path(), rig.address(), &["status", id]).await;
            assert_eq!(out.code, 0, "{out:?}");
            if out.stdout.contains(want) {
                return out.stdout;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
}

/// A proxy in front of lichess that echoes the request's headers in its error text (with a
/// terminal escape sequence): the broadcaster says the status and a short, safe summary,
/// and neither the token nor the escape reaches its output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoing_proxy_does_not_get_the_token_printed() {
    let rig = SimRig::start(&["b1"], &[]).await;
    let conn = rig.bus.client().await;
    let mut ev1 = Events::start(&conn, "b1").await;
    ready_to_play(&rig.sims[0], &mut ev1).await;
    set_tags(&conn, "b1", &BOARD_1).await;
    let lichess = Lichess::start().await;
    lichess.script(&[Reply::Echo(401)]);
    let mut caster = broadcaster(&rig, &lichess);
    assert_eq!(caster.exit_code(LONG).await, 1);
    let pushed = lichess.requests();
    assert_eq!(pushed.len(), 1, "one push, refused");
    assert!(
        pushed[0].authorization.contains(TOKEN),
        "the token was sent"
    );
    let output = caster.output();
    assert!(output.contains("HTTP 401"), "{output}");
    assert!(output.contains("proxy: "), "the summary is shown: {output}");
    assert!(!output.contains(TOKEN), "the token was printed: {output}");
    assert!(
        !output.contains('\u{1b}'),
        "an escape was printed: {output}"
    );
}
