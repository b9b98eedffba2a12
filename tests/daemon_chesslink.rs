//! End-to-end, a Millennium ChessLink board: the real eboardd on a private bus, configured
//! with `protocol = "chesslink"`, and the simulated Millennium board on a pty.
//!
//! - A whole game played by hand comes out as the record, exactly; the board is named
//!   `chesslink` with its firmware, and the daemon has switched its reports to "on change".
//! - A board turned round (its statuses in the other square order) plays the same record.
//! - Unplugged mid-game with a move made meanwhile, and plugged back: the board keeps no
//!   moves (the link answers the recovery's memory request with "unavailable" at once), so
//!   the board as it stands is all there is; without a clock nothing bounds the plies made,
//!   so the arbiter is asked, and the game goes on.
//! - Noise on the line (garbage bytes, a status with a wrong check showing another position)
//!   is dropped and never a move.
//! - The LEDs show the last move (on a board turned round too), an illegal placement's
//!   squares until it is put right (a piece added; a bishop jumping its own pawn, onto a
//!   square the other bishop could reach), and never more than one LED command a second;
//!   after a restart, the game restored from the journal shows its last move.
//! - A mixed hall: a DGT board with its clock and a ChessLink board in one daemon.
//!
//! Every wait is on an event (a property, a signal, the simulator's state), never on a timer.

mod common;

use std::path::Path;

use common::events::{Event, Events, accusations};
use common::proxies::{self, BoardProxy};
use common::rig::wait_moves;
use common::sim::chesslink_board;
use common::{Daemon, Setup, WAIT, wait_property};
use eboard_core::chesslink::line::{ParityBy, to_wire};
use eboard_core::chesslink::{AutoReport, Reply, Scan, WireOrder, settings::AUTO_REPORT};
use eboard_sim::chesslink::{ChessLinkAction, ChessLinkHandle, MillenniumOptions};
use eboard_sim::{Noise, PgnGame, default_game};
use shakmaty::{Board, Chess, Position, san::SanPlus};

/// Board time runs this much faster than the wall clock.
const SPEED: f64 = 4.0;

struct Served {
    setup: Setup,
    sim: ChessLinkHandle,
    events: Events,
}

/// A Millennium board turned round: its statuses in the other square order.
fn turned_round() -> MillenniumOptions {
    MillenniumOptions {
        order: WireOrder::A8First,
        ..MillenniumOptions::default()
    }
}

/// `boards` (the `[[board]]` tables) written as the daemon's configuration file in `dir`;
/// the `--config` arguments that name it.
fn config_args(dir: &Path, boards: &str) -> [String; 2] {
    let config = dir.join("eboardd.toml");
    std::fs::write(&config, boards).unwrap();
    ["--config".into(), config.display().to_string()]
}

/// Wait until the board's game is at the start position (a board left in its default mode
/// reports every scan from the first moment: the game may have started before the events
/// were watched, so the board's state is asked).
async fn wait_start_position(b: &BoardProxy<'_>) {
    let mut fen = b.receive_fen_changed().await;
    wait_property(&mut fen, "the start position", |f: &String| {
        f.starts_with("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w")
    })
    .await;
}

/// The daemon serving one simulated Millennium board `id` (`protocol = "chesslink"`), its
/// reports switched on by the daemon and the game started.
async fn served(id: &str, board: MillenniumOptions) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let sim = chesslink_board(dir.path(), id, SPEED, board).await;
    let config = config_args(
        dir.path(),
        &format!(
            "[[board]]\nname = \"{id}\"\nport = \"{}\"\nprotocol = \"chesslink\"\n",
            dir.path().join(id).display()
        ),
    );
    let setup = Setup::start_in(dir, &[&config[0], &config[1]]).await;
    let events = Events::start(&setup.conn, id).await;
    sim.wait_for_option(AUTO_REPORT, AutoReport::OnChange.code(), WAIT)
        .await
        .expect("the daemon switches the board's reports to on-change");
    let b = proxies::board(&setup.conn, id).await;
    let mut connected = b.receive_connected_changed().await;
    wait_property(&mut connected, "Connected = true", |c| *c).await;
    wait_start_position(&b).await;
    Served { setup, sim, events }
}

impl Served {
    /// The first `plies` of the default game played on the board (`seed` draws the hand),
    /// and waited for as the record; their SAN.
    async fn play_opening(&self, plies: usize, seed: u64) -> Vec<String> {
        let game = opening(&default_game(), plies);
        let want = sans(&game);
        self.sim.play_game(&game, seed, Noise::Clean).await.unwrap();
        wait_moves(&self.events, &want).await;
        want
    }
}

/// A hand lifts the piece on `from` and sets `piece` (its FEN letter) down on `to`.
async fn carry(sim: &ChessLinkHandle, from: shakmaty::Square, to: shakmaty::Square, piece: char) {
    sim.act(ChessLinkAction::Lift(from)).await.unwrap();
    let piece = shakmaty::Piece::from_char(piece).unwrap();
    sim.act(ChessLinkAction::Place(to, piece)).await.unwrap();
}

/// A game's moves in SAN, as the `Moves` property has them.
fn sans(game: &PgnGame) -> Vec<String> {
    let mut pos: Chess = game.start_position().unwrap();
    game.moves()
        .unwrap()
        .into_iter()
        .map(|m| SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string())
        .collect()
}

/// The first `plies` of `game` as a game of its own.
fn opening(game: &PgnGame, plies: usize) -> PgnGame {
    PgnGame {
        sans: game.sans[..plies].to_vec(),
        ..game.clone()
    }
}

/// The rest of `game` after `plies`, from the position reached, and that position.
fn rest(game: &PgnGame, plies: usize) -> (Chess, PgnGame) {
    let mut pos: Chess = game.start_position().unwrap();
    for m in &game.moves().unwrap()[..plies] {
        pos.play_unchecked(*m);
    }
    let fen = shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal);
    let mut tags: Vec<(String, String)> = game
        .tags
        .iter()
        .filter(|(k, _)| k != "FEN" && k != "SetUp")
        .cloned()
        .collect();
    tags.push(("SetUp".into(), "1".into()));
    tags.push(("FEN".into(), fen.to_string()));
    let tail = PgnGame {
        tags,
        sans: game.sans[plies..].to_vec(),
        ..game.clone()
    };
    (pos, tail)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_game_on_a_chesslink_board_is_the_record_and_line_noise_is_never_a_move() {
    let s = served("cl1", MillenniumOptions::default()).await;
    let b = proxies::board(&s.setup.conn, "cl1").await;
    let mut model = b.receive_board_model_changed().await;
    wait_property(&mut model, "BoardModel = chesslink", |m| m == "chesslink").await;
    assert_eq!(b.firmware_version().await.unwrap(), "2.00");

    // Noise before the game: garbage, and a status with a wrong check that shows e2-e4.
    let mut moved = Board::default();
    moved.discard_piece_at(shakmaty::Square::E2);
    moved.set_piece_at(
        shakmaty::Square::E4,
        shakmaty::Piece::from_char('P').unwrap(),
    );
    let mut forged = Reply::Status(Scan::from_board(&moved, WireOrder::H1First)).chars();
    let n = forged.len();
    forged[n - 1] = if forged[n - 1] == b'0' { b'1' } else { b'0' };
    s.sim
        .act(ChessLinkAction::Junk(
            [
                vec![0x00, 0xFF, 0x13, 0x73],
                to_wire(forged, ParityBy::Host),
                vec![0xF3, 0x80],
            ]
            .concat(),
        ))
        .await
        .unwrap();

    let game = default_game();
    let want = sans(&game);
    s.sim.play_game(&game, 7, Noise::Clean).await.unwrap();
    wait_moves(&s.events, &want).await;
    assert_eq!(b.moves().await.unwrap(), want);
    s.events.assert_nobody_accused();
    // The noise was counted and skipped by the daemon's decoder.
    let log = s.setup.daemon.stderr();
    assert!(
        log.contains("skipped bytes that are not a board message"),
        "the dropped bytes are counted"
    );
    // The daemon never wrote a command the board could not read.
    let snap = s.sim.snapshot().await.unwrap();
    assert_eq!(snap.line.dropped_frames, 0, "{:?}", snap.line);
    s.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chesslink_board_turned_round_plays_the_same_record() {
    let s = served("turned", turned_round()).await;
    s.play_opening(24, 11).await;
    s.events.assert_nobody_accused();
    s.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unplugged_mid_game_the_gap_has_only_the_board_and_asks_the_arbiter() {
    let s = served("cl2", MillenniumOptions::default()).await;
    let b = proxies::board(&s.setup.conn, "cl2").await;
    let full = default_game();
    let want = sans(&full);
    let before = 20;
    s.sim
        .play_game(&opening(&full, before), 3, Noise::Clean)
        .await
        .unwrap();
    wait_moves(&s.events, &want[..before]).await;

    let mut connected = b.receive_connected_changed().await;
    s.sim.unplug().await.unwrap();
    wait_property(&mut connected, "Connected = false", |c| !*c).await;
    // One move made while nobody listens: the board will show only where it ended.
    let (pos, _) = rest(&full, before);
    let mv = full.moves().unwrap()[before];
    let piece = pos.board().piece_at(mv.from().unwrap()).unwrap();
    s.sim
        .act(ChessLinkAction::Lift(mv.from().unwrap()))
        .await
        .unwrap();
    if mv.is_capture() {
        s.sim.act(ChessLinkAction::Lift(mv.to())).await.unwrap();
    }
    s.sim
        .act(ChessLinkAction::Place(mv.to(), piece))
        .await
        .unwrap();
    s.sim.replug().await.unwrap();
    wait_property(&mut connected, "Connected = true", |c| *c).await;
    // The board keeps no moves and there is no clock to count presses by: the board as it
    // stands is reached by one ply, but nothing bounds how many were made, so the daemon
    // asks the arbiter, who answers from the scoresheets. Nothing is invented meanwhile.
    let mut gap = b.receive_gap_changed().await;
    wait_property(&mut gap, "Gap waiting for the arbiter", |g| {
        g.contains("ResolveGap")
    })
    .await;
    assert_eq!(b.moves().await.unwrap(), want[..before]);
    let uci = shakmaty::uci::UciMove::from_move(mv, shakmaty::CastlingMode::Standard).to_string();
    b.resolve_gap(&[uci]).await.unwrap();
    wait_property(&mut gap, "Gap closed", |g| g.is_empty()).await;
    wait_moves(&s.events, &want[..=before]).await;

    // The game goes on from the board as it stands.
    let (_, tail) = rest(&full, before + 1);
    s.sim.play_game(&tail, 5, Noise::Clean).await.unwrap();
    wait_moves(&s.events, &want).await;
    s.events.assert_nobody_accused();
    s.sim.shutdown().await;
}

/// Wait (at most [`WAIT`]) until the simulated board's LEDs show `want`.
async fn wait_leds(sim: &ChessLinkHandle, want: &eboard_core::chesslink::LedPattern, what: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let leds = sim.snapshot().await.unwrap().leds;
        if leds == *want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: the LEDs show {leds:?}, not {want:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leds_show_the_last_move_and_an_illegal_placement_until_put_right() {
    use eboard_core::chesslink::LedPattern;
    use shakmaty::{Piece, Square};
    let s = served("lit", turned_round()).await;
    let order = WireOrder::A8First;
    s.play_opening(4, 1).await;
    // 1. d4 Nf6 2. Nf3 g6: the last move, on a board turned round.
    wait_leds(
        &s.sim,
        &LedPattern::for_move(Square::G7, Square::G6, order),
        "the last move",
    )
    .await;
    // A second white queen set on e5, and left there: no move explains it.
    s.sim
        .act(ChessLinkAction::Place(
            Square::E5,
            Piece::from_char('Q').unwrap(),
        ))
        .await
        .unwrap();
    let mut events = s.events;
    events.next_signal("IllegalPlacement").await;
    wait_leds(
        &s.sim,
        &LedPattern::steady([Square::E5], order),
        "the illegal placement's squares",
    )
    .await;
    // Put right: the last move again. Never more than one LED command a second.
    s.sim.act(ChessLinkAction::Lift(Square::E5)).await.unwrap();
    wait_leds(
        &s.sim,
        &LedPattern::for_move(Square::G7, Square::G6, order),
        "the last move again",
    )
    .await;
    // The daemon sends at most one LED command a second; the board's time stamps add the
    // line's latency, which a loaded machine varies by tens of milliseconds. Half the limit
    // still tells a throttled stream from a storm (unthrottled, commands come milliseconds
    // apart) without a wall-clock threshold.
    let log = s.sim.led_log().await.unwrap();
    for pair in log.windows(2) {
        assert!(
            pair[1].0 - pair[0].0 >= 500 * SPEED as u64,
            "LED commands {} ms of board time apart: {log:?}",
            pair[1].0 - pair[0].0
        );
    }
    // And on average at least a second apart: the latency of the first and the last command
    // is all the slack there is.
    if let (Some(first), Some(last)) = (log.first(), log.last()) {
        let allowed = (last.0 - first.0 + 200 * SPEED as u64) / (1_000 * SPEED as u64);
        assert!(
            log.len() as u64 - 1 <= allowed,
            "{} LED commands in {} ms of board time: {log:?}",
            log.len(),
            last.0 - first.0
        );
    }
    s.sim.shutdown().await;
}

/// The bishop f1 set on h6 (over its own pawn on g2, onto a square of the other colour) after
/// 1. d4 Nf6 2. Nf3 g6: the bishop c1 could go to h6 by a legal move, but it still stands on
/// c1, so no legal move made or half made explains the board. The arbiter is warned on the
/// bus (White to move, both squares named, the board's placement), the LEDs light f1 and h6
/// until the bishop is back, and the game goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bishop_jumping_its_own_pawn_is_an_illegal_placement_lit_on_the_board() {
    use eboard_core::chesslink::LedPattern;
    use eboard_core::vocab::Player;
    use shakmaty::Square;
    let s = served("jump", MillenniumOptions::default()).await;
    let order = MillenniumOptions::default().order;
    let mut want = s.play_opening(4, 3).await;
    wait_leds(
        &s.sim,
        &LedPattern::for_move(Square::G7, Square::G6, order),
        "the last move",
    )
    .await;
    carry(&s.sim, Square::F1, Square::H6, 'B').await;
    let mut events = s.events;
    let Event::IllegalPlacement {
        player,
        description,
        placement,
    } = events.next_signal("IllegalPlacement").await
    else {
        unreachable!("the signal asked for");
    };
    assert_eq!(player, Player::White);
    assert!(
        description.contains("f1") && description.contains("h6"),
        "{description}"
    );
    assert_eq!(
        placement,
        "rnbqkb1r/pppppp1p/5npB/8/3P4/5N2/PPP1PPPP/RNBQK2R"
    );
    wait_leds(
        &s.sim,
        &LedPattern::steady([Square::F1, Square::H6], order),
        "the illegal placement's squares",
    )
    .await;
    // Put right, the LEDs show the last move again, and the game goes on: 3. c4.
    carry(&s.sim, Square::H6, Square::F1, 'B').await;
    wait_leds(
        &s.sim,
        &LedPattern::for_move(Square::G7, Square::G6, order),
        "the last move again",
    )
    .await;
    carry(&s.sim, Square::C2, Square::C4, 'P').await;
    want.push("c4".into());
    wait_moves(&events, &want).await;
    wait_leds(
        &s.sim,
        &LedPattern::for_move(Square::C2, Square::C4, order),
        "the move played after it",
    )
    .await;
    let warned = accusations(&events.all());
    assert_eq!(warned.len(), 1, "one warning: {}", events.describe());
    s.sim.shutdown().await;
}

/// The daemon killed and started again: the game comes back from the journal, with no
/// `MovePlayed` for its moves, and the LEDs of the new connection show its last move (never
/// dark, nothing else); then the game goes on and they follow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_the_leds_show_the_restored_games_last_move() {
    use eboard_core::chesslink::LedPattern;
    use shakmaty::Square;
    let mut s = served("again", MillenniumOptions::default()).await;
    let order = MillenniumOptions::default().order;
    let mut want = s.play_opening(4, 2).await;
    let last_move = LedPattern::for_move(Square::G7, Square::G6, order);
    wait_leds(&s.sim, &last_move, "the last move").await;
    let before = s.sim.led_log().await.unwrap().len();

    s.setup.daemon.kill9().await;
    let dir = s.setup.dir.path();
    let config = dir.join("eboardd.toml").display().to_string();
    let mut again = Daemon::spawn(&s.setup.bus, dir, &["--config", &config]);
    again.wait_for_name(&s.setup.conn).await;
    let b = proxies::fresh(&s.setup.conn, "again").await;
    assert_eq!(b.moves().await.unwrap(), want, "the game restored");
    // The board shows the last move already: what counts is what the new connection asks.
    let deadline = std::time::Instant::now() + WAIT;
    let asked = loop {
        let log = s.sim.led_log().await.unwrap();
        if log.len() > before {
            break log[before..].to_vec();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no LED command after the restart: {log:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(
        asked.iter().all(|(_, pattern)| *pattern == last_move),
        "after the restart the LEDs were asked for {asked:?}, not only the last move"
    );
    // The game goes on under the new daemon: 3. c4.
    let events = Events::start(&s.setup.conn, "again").await;
    carry(&s.sim, Square::C2, Square::C4, 'P').await;
    wait_moves(&events, &["c4".to_string()]).await;
    want.push("c4".into());
    assert_eq!(b.moves().await.unwrap(), want);
    wait_leds(
        &s.sim,
        &LedPattern::for_move(Square::C2, Square::C4, order),
        "the move played after the restart",
    )
    .await;
    events.assert_nobody_accused();
    s.sim.shutdown().await;
}

/// A mixed hall: a DGT board with its clock and a ChessLink board in one daemon, each
/// followed on its own, each named by its model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dgt_and_a_chesslink_board_are_served_side_by_side() {
    use eboard_sim::{BoardOptions, Scenario, Step};
    let dir = tempfile::tempdir().unwrap();
    let dgt = common::sim::sim_board(dir.path(), "dgt1", 10.0, BoardOptions::default()).await;
    let cl = chesslink_board(dir.path(), "cl1", SPEED, MillenniumOptions::default()).await;
    let config = config_args(
        dir.path(),
        &format!(
            "[[board]]\nname = \"dgt1\"\nport = \"{}\"\nnumber = 1\n\n\
             [[board]]\nname = \"cl1\"\nport = \"{}\"\nnumber = 2\nprotocol = \"chesslink\"\n",
            dir.path().join("dgt1").display(),
            dir.path().join("cl1").display()
        ),
    );
    let setup = Setup::start_in(dir, &[&config[0], &config[1]]).await;
    let conn = &setup.conn;
    let dgt_events = Events::start(conn, "dgt1").await;
    let cl_events = Events::start(conn, "cl1").await;
    dgt.wait_for_update_mode(WAIT).await.unwrap();
    cl.wait_for_option(AUTO_REPORT, AutoReport::OnChange.code(), WAIT)
        .await
        .unwrap();
    for (id, model) in [("dgt1", "dgt"), ("cl1", "chesslink")] {
        let b = proxies::board(conn, id).await;
        let mut m = b.receive_board_model_changed().await;
        wait_property(&mut m, "BoardModel", |v| v == model).await;
        wait_start_position(&b).await;
    }
    let game = opening(&default_game(), 12);
    let want = sans(&game);
    let mut sc = Scenario::new(&dgt, common::rig::quick(5));
    let steps = [Step::Moves(want.clone())];
    let (played, cl_played) = tokio::join!(sc.run(&steps), cl.play_game(&game, 9, Noise::Clean));
    played.unwrap();
    cl_played.unwrap();
    wait_moves(&dgt_events, &want).await;
    wait_moves(&cl_events, &want).await;
    cl_events.assert_nobody_accused();
    dgt_events.assert_nobody_accused();
    cl.shutdown().await;
}
