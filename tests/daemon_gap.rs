//! End-to-end gaps: the crate's simulator (with its EEPROM log) on a pty → the `eboardd`
//! binary → a private bus. The daemon is killed or the board unplugged while the players go
//! on; afterwards every move is back, in order, or listed for the arbiter — and nobody is
//! accused of an illegal move.

mod common;
mod ctl_support;

use common::board::FakeBoard;
use common::events::{Ev, Event, Events, accusations};
use common::proxies::{self, BoardProxy};
use common::rig::{quick, ready_to_play, sans, wait_moves};
use common::sim::sim_board;
use common::{Daemon, Setup, record_file, record_without_clock_tags, wait_property};
use ctl_support::ctl;
use eboard_core::capture;
use eboard_core::vocab::Player;
use eboard_sim::{BoardOptions, Scenario, SimHandle, Step};
use eboardd::cli::decode;
use shakmaty::Square;
use std::time::Duration;

const RUY: &str = "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7 \
                   c4 c6 cxb5 axb5 Nc3 Bb7 Bg5 b4 Nb1 h6";

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Kill -9 the daemon after 4 plies, play `gap` more, start it again: all come back.
async fn killed_while(gap: usize, seed: u64) {
    let line: Vec<&str> = RUY.split_whitespace().collect();
    let id = format!("kill{gap}");
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), &id, 1.0, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let mut s = Setup::start_in(dir, &["--port", &port]).await;
    let mut events = Events::start(&s.conn, &id).await;
    ready_to_play(&sim, &mut events).await;
    let mut sc = Scenario::new(&sim, quick(seed));
    let first = sans(&line[..4]);
    sc.run(&[Step::Moves(first.clone())]).await.unwrap();
    wait_moves(&events, &first).await;

    s.daemon.kill9().await;
    let missed = sans(&line[4..4 + gap]);
    sc.run(&[Step::Moves(missed.clone())]).await.unwrap();

    let after = Events::start(&s.conn, &id).await;
    let mut again = Daemon::spawn(&s.bus, s.dir.path(), &["--port", &port]);
    again.wait_for_name(&s.conn).await;
    wait_moves(&after, &missed).await;
    let plies: Vec<u32> = after
        .all()
        .iter()
        .filter_map(|e| match e {
            Ev::Signal(Event::MovePlayed { ply, .. }) => Some(*ply),
            _ => None,
        })
        .collect();
    assert_eq!(plies, (5..5 + gap as u32).collect::<Vec<_>>(), "in order");
    let b = proxies::fresh(&s.conn, &id).await;
    assert_eq!(b.moves().await.unwrap(), sans(&line[..4 + gap]));
    assert_eq!(b.illegal_moves().await.unwrap(), (0, 0));
    assert_eq!(b.gap().await.unwrap(), "");
    assert!(b.in_sync().await.unwrap());
    let pgn = flat(&b.pgn().await.unwrap());
    assert!(pgn.contains("read from the board's memory"), "{pgn}");
    assert!(
        accusations(&after.all()).is_empty(),
        "{:?}",
        accusations(&after.all())
    );
    assert!(
        again
            .stderr()
            .contains("moves recovered from the board's memory"),
        "{}",
        again.stderr()
    );
    // Play goes on from there.
    let next = sans(&line[4 + gap..6 + gap]);
    sc.run(&[Step::Moves(next.clone())]).await.unwrap();
    let mut all = missed.clone();
    all.extend(next);
    wait_moves(&after, &all).await;
    assert!(accusations(&after.all()).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_2_plies_are_played_then_restarted() {
    killed_while(2, 21).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_5_plies_are_played_then_restarted() {
    killed_while(5, 22).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_20_plies_are_played_then_restarted() {
    killed_while(20, 23).await;
}

/// A simulated board `id` served by a fresh daemon, the game started.
/// The daemon records what it reads into `<dir>/records`.
async fn served(id: &str) -> (Setup, SimHandle, Events) {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), id, 1.0, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let records = dir.path().join("records");
    std::fs::create_dir_all(&records).unwrap();
    let records = records.display().to_string();
    let s = Setup::start_in(dir, &["--port", &port, "--record", &records]).await;
    let mut events = Events::start(&s.conn, id).await;
    ready_to_play(&sim, &mut events).await;
    (s, sim, events)
}

/// The board is unplugged (so unpowered: its memory has nothing for the gap) after
/// `before`, `gap` is played, and it is plugged back in.
async fn unplugged_while(
    s: &Setup,
    id: &str,
    events: &Events,
    sc: &mut Scenario<'_>,
    before: &[&str],
    gap: &[&str],
) {
    sc.run(&[Step::Moves(sans(before))]).await.unwrap();
    wait_moves(events, &sans(before)).await;
    let b = proxies::board(&s.conn, id).await;
    let mut connected = b.receive_connected_changed().await;
    sc.step(&Step::Unplug).await.unwrap();
    wait_property(&mut connected, "Connected = false", |c| !*c).await;
    sc.run(&[Step::Moves(sans(gap))]).await.unwrap();
    sc.step(&Step::Replug).await.unwrap();
    wait_property(&mut connected, "Connected = true", |c| *c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unplugged_three_plies_with_one_explanation_are_recovered_and_an_illegal_move_after_is_caught()
 {
    let (s, sim, mut events) = served("unp3").await;
    let mut sc = Scenario::new(&sim, quick(31));
    unplugged_while(
        &s,
        "unp3",
        &events,
        &mut sc,
        &["e4"],
        &["d5", "exd5", "Qxd5"],
    )
    .await;
    wait_moves(&events, &sans(&["e4", "d5", "exd5", "Qxd5"])).await;
    let b = proxies::fresh(&s.conn, "unp3").await;
    let pgn = flat(&b.pgn().await.unwrap());
    assert!(
        pgn.contains("recovered: the only legal sequence to the board"),
        "{pgn}"
    );
    assert_eq!(b.gap().await.unwrap(), "");
    assert!(accusations(&events.all()).is_empty());

    // A real illegal move right after the gap: the king jumps two squares.
    sc.run(&[
        Step::IllegalPlacement {
            from: Square::E1,
            to: Square::E3,
        },
        Step::PressClock,
    ])
    .await
    .unwrap();
    events
        .next_matching("IllegalPlacement", |e| {
            matches!(
                e,
                Ev::Signal(Event::IllegalPlacement {
                    player: Player::White,
                    ..
                })
            )
        })
        .await;
    events
        .next_matching("IllegalMoveCompleted", |e| {
            matches!(
                e,
                Ev::Signal(Event::IllegalMoveCompleted {
                    player: Player::White,
                    count: 1,
                    ..
                })
            )
        })
        .await;
    record_decodes_to_the_daemons_pgn(&s, "unp3", &sim.path()).await;
}

/// `eboardctl decode` of the daemon's own `--record` file — the board lost and found again
/// included — prints the PGN the daemon shows (read as if the link never went down, the
/// record would accuse Black of an illegal move). The record is written before the daemon
/// reads what it recorded, and decode lets every waiting move become final, so the daemon's
/// `Pgn` is waited on until it catches up.
async fn record_decodes_to_the_daemons_pgn(s: &Setup, id: &str, port: &std::path::Path) {
    let b = proxies::fresh(&s.conn, id).await;
    let mut changes = b.receive_pgn_changed().await;
    let record = record_file(&s.dir.path().join("records"));
    // The unplugging is in the record before the daemon saw the board come back.
    let notes = capture::link_notes(&std::fs::read_to_string(&record).unwrap());
    assert!(
        notes.iter().any(|n| n.change == capture::LinkChange::Lost),
        "the record notes the unplugging: {notes:?}"
    );
    let decoded = || {
        let text = std::fs::read_to_string(&record).unwrap();
        let notes = capture::link_notes(&text);
        let reads = capture::parse(&text).unwrap();
        let config = decode::session_config_for(port);
        let out = decode::decode(&reads, &notes, config, &decode::today());
        out.games.last().map(|g| g.pgn.clone()).unwrap_or_default()
    };
    let mut daemon = record_without_clock_tags(&b.pgn().await.unwrap());
    let mut printed = decoded();
    let _ = tokio::time::timeout(Duration::from_secs(30), async {
        while printed != daemon {
            let Some(changed) = common::next(&mut changes).await else {
                break;
            };
            daemon = record_without_clock_tags(&changed.get().await.unwrap_or_default());
            printed = decoded();
        }
    })
    .await;
    assert_eq!(printed, daemon, "decode of the record vs the daemon's Pgn");
    assert!(daemon.contains("recovered"), "{daemon}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_explanations_are_listed_and_resolve_gap_settles_them() {
    let (s, sim, events) = served("unp2").await;
    let mut sc = Scenario::new(&sim, quick(32));
    unplugged_while(
        &s,
        "unp2",
        &events,
        &mut sc,
        &["e4", "e5"],
        &["Nf3", "Nc6", "Bc4"],
    )
    .await;
    let b: BoardProxy<'_> = proxies::board(&s.conn, "unp2").await;
    let mut gap = b.receive_gap_changed().await;
    let text = wait_property(&mut gap, "Gap lists the sequences", |g| {
        g.starts_with("2 sequences")
    })
    .await;
    assert!(text.contains("Nf3 Nc6 Bc4 [g1f3 b8c6 f1c4]"), "{text}");
    assert!(text.contains("Bc4 Nc6 Nf3 [f1c4 b8c6 g1f3]"), "{text}");
    let now = proxies::fresh(&s.conn, "unp2").await;
    assert_eq!(now.moves().await.unwrap(), sans(&["e4", "e5"]));
    assert!(!now.in_sync().await.unwrap());

    // `eboardctl status` shows it.
    let status = ctl(&s.bus.address, &["status", "unp2"]).await;
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(
        status.stdout.contains("GAP  2 sequences"),
        "{}",
        status.stdout
    );

    // Play goes on meanwhile.
    sc.run(&[Step::Moves(sans(&["Nf6"]))]).await.unwrap();

    let wrong = b
        .resolve_gap(&["g1f3".into(), "b8c6".into()])
        .await
        .unwrap_err();
    assert_eq!(
        proxies::error_name(&wrong),
        "org.eboardd.Bridge1.Error.InvalidArgument"
    );
    assert!(
        proxies::error_message(&wrong).contains("not to the board"),
        "{wrong}"
    );
    let resolved = ctl(&s.bus.address, &["resolve", "unp2", "g1f3", "b8c6", "f1c4"]).await;
    assert_eq!(resolved.code, 0, "{}", resolved.stderr);
    wait_moves(&events, &sans(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"])).await;
    let now = proxies::fresh(&s.conn, "unp2").await;
    assert_eq!(now.gap().await.unwrap(), "");
    assert!(now.in_sync().await.unwrap());
    let again = b.resolve_gap(&[]).await.unwrap_err();
    assert!(
        proxies::error_message(&again).contains("no gap is open"),
        "{again}"
    );
    assert!(accusations(&events.all()).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_dump_cut_off_in_the_middle_costs_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "cut");
    let s = Setup::start_in(dir, &["--port", &board.path_str()]).await;
    let b = proxies::board(&s.conn, "cut").await;
    let mut connected = b.receive_connected_changed().await;
    wait_property(&mut connected, "Connected", |c| *c).await;
    let mut placement = b.receive_placement_changed().await;
    wait_property(&mut placement, "start position", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    })
    .await;
    // An EE_MOVES frame announcing the whole log, cut off after 1,000 bytes of tags (the
    // cable went) — the next message is a field update: e2 emptied.
    let mut cut = vec![0x8F, 0x3E, 0x03];
    for i in 0..500u16 {
        cut.extend_from_slice(&[0x41, (i % 64) as u8]);
    }
    board.identity.lock().unwrap().fields[52] = 0;
    board.send(&cut).await;
    board.send(&[0x8E, 0x00, 0x05, 52, 0x00]).await;
    wait_property(&mut placement, "e2 emptied", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR"
    })
    .await;
    let now = proxies::fresh(&s.conn, "cut").await;
    assert!(now.connected().await.unwrap());
    assert_eq!(now.gap().await.unwrap(), "");
    assert_eq!(now.pending_illegal().await.unwrap(), "");
}

/// A reconnect in a scramble: one ply (and its press) while the board is unplugged for a
/// second, then nine plies at 0.1–0.3 s a ply from the moment `Connected` turns true. The
/// whole board is the first thing read after the replug, so the gap ends at that reading and
/// the nine plies are followed live: the record is exact and the arbiter is never asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_resumed_the_moment_a_board_is_back_is_followed_live() {
    let id = "scramble";
    let (s, sim, events) = served(id).await;
    // Bc4 is made while unplugged; Nf6 Nc3 after the replug would transpose with it (Nc3
    // Nf6 Bc4 reaches the same board): read late, the board would leave two answers.
    let line: Vec<&str> = "e4 e5 Nf3 Nc6 Bc4 Nf6 Nc3 Bc5 d3 d6 O-O O-O a3 a6"
        .split_whitespace()
        .collect();
    let scramble = eboard_sim::Pace {
        think_ms: (70, 250),
        press_ms: (10, 30),
        hand_ms: (10, 30),
    };
    let mut sc = Scenario::new(
        &sim,
        eboard_sim::ScenarioOptions {
            pace: scramble,
            noise: eboard_sim::Noise::Clean,
            ..quick(35)
        },
    );
    let b = proxies::board(&s.conn, id).await;
    let mut gap = b.receive_gap_changed().await;
    let texts = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = texts.clone();
    let asked = tokio::spawn(async move {
        while let Some(changed) = common::next(&mut gap).await {
            let text = changed.get().await.unwrap_or_default();
            seen.lock().unwrap().push(text);
        }
    });
    let before = &line[..4];
    sc.run(&[Step::Moves(sans(before))]).await.unwrap();
    wait_moves(&events, &sans(before)).await;
    let mut connected = b.receive_connected_changed().await;
    sc.step(&Step::Unplug).await.unwrap();
    wait_property(&mut connected, "Connected = false", |c| !*c).await;
    sc.run(&[Step::Moves(sans(&line[4..5])), Step::Pause(1_000)])
        .await
        .unwrap();
    sc.step(&Step::Replug).await.unwrap();
    wait_property(&mut connected, "Connected = true", |c| *c).await;
    let after = &line[5..14];
    sc.run(&[Step::Moves(sans(after))]).await.unwrap();
    wait_moves(&events, &sans(&line[..14])).await;
    let now = proxies::fresh(&s.conn, id).await;
    assert_eq!(now.moves().await.unwrap(), sans(&line[..14]));
    assert_eq!(now.gap().await.unwrap(), "");
    assert!(accusations(&events.all()).is_empty());
    asked.abort();
    let texts = texts.lock().unwrap().clone();
    assert!(
        texts
            .iter()
            .all(|t| !t.contains("sequences") && !t.contains("arbiter")),
        "the arbiter was asked: {texts:?}"
    );
}
