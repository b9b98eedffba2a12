//! End to end below the daemon: corpus games played by the simulator with human handling, on
//! a real pty, read by the project's serial side (tokio-serial on the slave path, 9600 8N1),
//! decoded and reconstructed by the tracker — exact, for a normal and a reversed board, with
//! and without a clock, on the USB board, the Bluetooth board and the Revelation II (both of
//! its firmware behaviours), and with a DGT XL (its version asked, its quirky acknowledgements,
//! option 13's move-counter periods); and on a Millennium ChessLink board, read through the
//! daemon's ChessLink driver, at a human and at the quick no-clock pace.
//!
//! Board time is stepped (infinite speed), so no test waits on the wall clock; the bytes read
//! from the port are timestamped with the board time the simulator wrote them at (its tap),
//! after checking that the port delivered exactly those bytes.
//!
//! Every corpus game is played by each test, in every build. The games are dealt out to
//! [`SHARDS`] tests per kind, which the harness runs on every core, and each plays a few
//! games at a time: a game spends much of its time waiting on the pty.

mod sim_support;

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use eboard_core::board::Orientation;
use eboard_core::board_input::BoardInput;
use eboard_core::dgt::{ClockCommand, ClockReading, Command, Decoder, Message};
use eboard_core::tracker::{Tracker, TrackerEvent};
use eboard_core::vocab::OrientationSetting;
use eboard_sim::{
    BoardOptions, ClockKind, ClockPresence, Noise, Pace, PgnGame, ScenarioOptions, SimBoard,
    SimOptions, parse_games, play_game,
};
use futures_util::StreamExt as _;
use shakmaty::{CastlingMode, Chess};
use sim_support::attach;

struct Outcome {
    /// The clock's version, when an ack said it.
    clock_version: Option<(u8, u8)>,
    uci: Vec<String>,
    illegal_reports: usize,
    in_sync: bool,
    corrections: u32,
}

/// The corpus is dealt out to this many tests of each kind (game `n` to shard `(n / 4) %
/// SHARDS`, so that every shard has games of each configuration).
const SHARDS: usize = 4;

/// Games a shard plays at once: while one waits on its pty another one runs.
const IN_FLIGHT: usize = 3;

fn corpus() -> &'static [PgnGame] {
    static GAMES: OnceLock<Vec<PgnGame>> = OnceLock::new();
    GAMES.get_or_init(|| {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/corpus/twic1599.pgn"
        ))
        .unwrap();
        let games = parse_games(&text);
        assert_eq!(games.len(), 1110, "the corpus reader found every game");
        games
    })
}

/// EBOARDD_SIM_ONLY=330,516 replays only those games (corpus indices, as a failure reports
/// them), one at a time, printing each game's moves and the tracker's events (with `--
/// --nocapture --test-threads 1` the shards' output does not interleave).
fn only() -> Option<Vec<usize>> {
    std::env::var("EBOARDD_SIM_ONLY").ok().map(|list| {
        list.split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect()
    })
}

/// Which DGT board plays: the USB e-board, a Bluetooth e-board (the same bytes for the game;
/// it answers the battery question besides) or a Revelation II of this firmware (from 3.22 it
/// turns its own reporting round when set up with Black on the connector side: other bytes).
#[derive(Clone, Copy, Debug)]
enum Model {
    Usb,
    Bluetooth,
    Revelation((u8, u8)),
    /// A Millennium ChessLink board (no clock, whole-board statuses), read through the
    /// daemon's own ChessLink driver.
    ChessLink,
}

impl Model {
    fn options(self) -> BoardOptions {
        match self {
            Model::Usb => BoardOptions::default(),
            Model::Bluetooth => eboard_sim::bluetooth_board(60),
            Model::Revelation(firmware) => eboard_sim::revelation_board(firmware),
            Model::ChessLink => BoardOptions::default(),
        }
    }

    fn is_chesslink(self) -> bool {
        matches!(self, Model::ChessLink)
    }

    /// The board turns its own reporting round: the daemon's session pins the tracker's
    /// orientation once the board's long serial number says so.
    fn turns_itself(self) -> bool {
        matches!(self, Model::Revelation(fw) if fw >= (3, 22))
    }
}

/// How the bytes read are handed to the tracker.
#[derive(Clone, Copy)]
struct Run {
    model: Model,
    orientation: Orientation,
    clock: bool,
    pace: Pace,
    /// Also tick the tracker when it asks to be woken ([`Tracker::next_wakeup`]) between two
    /// readings, as the daemon does; otherwise only at the readings (the harder case: every
    /// deadline is noticed late, by the next change).
    wakeups: bool,
    /// The clock is a DGT XL (version 1.14, (0x20, 0, 0, 0) acks) in option 13, its periods
    /// ended by its own move counter; the host asks its version at start-up.
    xl: bool,
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}, {:?}, clock {}{}, wakeups {}",
            self.model,
            self.orientation,
            self.clock,
            if self.xl { " (DGT XL, option 13)" } else { "" },
            self.wakeups
        )
    }
}

/// Play `game` on a simulated board and replay what its port delivered through a tracker;
/// `what` names the game and its run in the messages of the checks made on the way.
async fn run_game(game: &PgnGame, run: Run, seed: u64, what: &str) -> Outcome {
    if let Model::ChessLink = run.model {
        return run_chesslink_game(game, run, seed, what).await;
    }
    let Run {
        model,
        orientation,
        clock,
        pace,
        xl,
        ..
    } = run;
    let sim = SimBoard::spawn(SimOptions {
        board: BoardOptions {
            orientation,
            clock: if clock {
                ClockPresence::Present
            } else {
                ClockPresence::Absent
            },
            clock_kind: if xl {
                ClockKind::Xl { quirky_acks: true }
            } else {
                ClockKind::Dgt3000
            },
            time_control: xl.then(|| OPTION_13.parse().unwrap()),
            clock_by_counter: xl,
            ..model.options()
        },
        speed: f64::INFINITY,
        tap: true,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let mut tap = sim.take_tap().unwrap();
    // A daemon's start-up: reset, dump, updates with clock data on change (and, for the XL,
    // the clock's version: acks come only in an update mode).
    let mut start = vec![0x40, 0x42, 0x4B];
    if xl {
        start.extend(Command::Clock(ClockCommand::Version).to_bytes());
    }
    let collector = attach(&sim, &sim.path(), &start).await;
    let opts = ScenarioOptions {
        pace,
        noise: Noise::Noisy,
        seed,
        press_clock: clock,
    };
    play_game(&sim, game, opts).await.unwrap();
    sim.sleep(3_000).await;
    let end = sim.now();
    assert_eq!(
        sim.snapshot().await.unwrap().dropped_bytes,
        0,
        "{what}: the board dropped bytes"
    );
    let written = delivered(&mut tap, collector, sim.shutdown(), what).await;

    let mut decoder = Decoder::new();
    let mut clock_version = None;
    let mut last_clock: Option<ClockReading> = None;
    let trace = std::env::var_os("EBOARDD_SIM_ONLY").is_some();
    let readings: Vec<(u64, Vec<Reading>)> = written
        .iter()
        .map(|(at, bytes)| {
            let mut got = Vec::new();
            for message in decoder.feed(bytes).collect::<Vec<_>>() {
                if trace {
                    println!("{at:>8} {message:?}");
                }
                match message {
                    Message::BoardDump(fields) => got.push(Reading::Dump(fields)),
                    Message::FieldUpdate { field, content } => {
                        got.push(Reading::Field(field, content));
                    }
                    Message::ClockTimes(t) => {
                        if last_clock
                            .is_some_and(|l| l.status.lever_left_down != t.status.lever_left_down)
                        {
                            got.push(Reading::Press);
                        }
                        last_clock = Some(t);
                    }
                    Message::ClockAck(ack) => clock_version = clock_version.or(ack.version()),
                    _ => {}
                }
            }
            (*at, got)
        })
        .collect();
    assert_eq!(decoder.stats().skipped_bytes, 0, "{what}: bytes skipped");
    let mut outcome = replay(&readings, end, run, what);
    outcome.clock_version = clock_version;
    outcome
}

/// Play `game` on a simulated Millennium board (no clock: the hands never press), the host
/// being the daemon's own ChessLink driver: its handshake written, and what the port
/// delivered decoded by it into the board input the tracker is handed.
async fn run_chesslink_game(game: &PgnGame, run: Run, seed: u64, what: &str) -> Outcome {
    use eboard_core::chesslink::driver::ChessLink;
    use eboard_core::chesslink::{AutoReport, WireOrder, settings::AUTO_REPORT};
    use eboard_sim::chesslink::{ChessLinkSim, ChessLinkSimOptions, MillenniumOptions};
    use eboard_sim::handling::{Handling, SensorStep};
    use rand::{Rng as _, SeedableRng as _};
    use shakmaty::Position as _;
    use tokio::io::AsyncWriteExt as _;
    let sim = ChessLinkSim::spawn(ChessLinkSimOptions {
        board: MillenniumOptions {
            order: match run.orientation {
                Orientation::Normal => WireOrder::H1First,
                Orientation::Reversed => WireOrder::A8First,
            },
            ..MillenniumOptions::default()
        },
        link: None,
        speed: f64::INFINITY,
        tap: true,
    })
    .await
    .unwrap();
    let mut tap = sim.take_tap().unwrap();
    let mut driver = ChessLink::new();
    let mut port = sim_support::open_port(&sim.path());
    for command in driver.handshake() {
        port.write_all(&command).await.unwrap();
        driver.on_sent(&command);
    }
    let collector = sim_support::Collector::start(port);
    // The board carries the handshake out as its time passes.
    let on_change = AutoReport::OnChange.code();
    for _ in 0..1_000 {
        if sim.snapshot().await.unwrap().option_bytes[usize::from(AUTO_REPORT)] == on_change {
            break;
        }
        sim.sleep(10).await;
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut hands = Handling::new(seed, Noise::Noisy).with_clock(false);
    let mut position = game.start_position().unwrap();
    for mv in game.moves().unwrap() {
        sim.sleep(rng.random_range(run.pace.think_ms.0..=run.pace.think_ms.1))
            .await;
        let mut touched = false;
        for step in hands.steps(&position, mv) {
            match step {
                SensorStep::Pause(ms) => {
                    sim.sleep(ms).await;
                    touched = false;
                }
                SensorStep::Press => {}
                step => {
                    if touched {
                        let (least, most) = run.pace.hand_ms;
                        sim.sleep(rng.random_range(least..=most)).await;
                    }
                    sim.hand(&[step]).await.unwrap();
                    touched = true;
                }
            }
        }
        position.play_unchecked(mv);
    }
    sim.sleep(3_000).await;
    let end = sim.now();
    let snapshot = sim.snapshot().await.unwrap();
    assert_eq!(
        snapshot.option_bytes[2], on_change,
        "{what}: reports on change"
    );
    assert_eq!(snapshot.dropped_bytes, 0, "{what}: the board dropped bytes");
    let written = delivered(&mut tap, collector, sim.shutdown(), what).await;
    let readings: Vec<(u64, Vec<Reading>)> = written
        .iter()
        .map(|(at, bytes)| {
            let got = driver
                .push(bytes, *at)
                .into_iter()
                .flatten()
                .filter_map(|input| match input {
                    BoardInput::Scan(fields) => Some(Reading::Dump(fields)),
                    BoardInput::Square { index, content } => Some(Reading::Field(index, content)),
                    _ => None,
                })
                .collect();
            (*at, got)
        })
        .collect();
    let line = driver.stats();
    assert_eq!(
        (line.skipped_bytes, line.dropped_frames),
        (0, 0),
        "{what}: bytes skipped"
    );
    replay(&readings, end, run, what)
}

/// Everything the board wrote (its tap, with the board time of each chunk), once the port
/// has delivered exactly those bytes; `shutdown` stops the board between the two reads of
/// the tap (what it wrote on the way out is compared too).
async fn delivered(
    tap: &mut tokio::sync::mpsc::UnboundedReceiver<(u64, Vec<u8>)>,
    collector: sim_support::Collector,
    shutdown: impl std::future::Future<Output = ()>,
    what: &str,
) -> Vec<(u64, Vec<u8>)> {
    // Everything the board sent so far is in the tap: wait for the port to deliver that much.
    let mut written = Vec::new();
    while let Ok(chunk) = tap.try_recv() {
        written.push(chunk);
    }
    let len = written.iter().map(|(_, b)| b.len()).sum();
    let (chunks, _port) = collector.finish_after(len, Duration::from_secs(10)).await;
    shutdown.await;
    while let Ok(chunk) = tap.try_recv() {
        written.push(chunk);
    }
    let read: Vec<u8> = chunks.concat();
    let sent: Vec<u8> = written.iter().flat_map(|(_, b)| b.clone()).collect();
    assert_eq!(
        read, sent,
        "{what}: the port delivers exactly what the board wrote"
    );
    written
}

/// One reading of the board, as the session would hand it to the tracker.
#[derive(Debug)]
enum Reading {
    Dump(Box<[eboard_core::board_input::SquareContent; 64]>),
    Field(u8, eboard_core::board_input::SquareContent),
    Press,
}

/// Hand the readings to a tracker at their board times (ticking it as `run` says) and say
/// what came out; `end` is the board time the game was over.
fn replay(readings: &[(u64, Vec<Reading>)], end: u64, run: Run, what: &str) -> Outcome {
    let Run {
        model,
        orientation,
        wakeups,
        ..
    } = run;
    let mut tracker = Tracker::new(Chess::default(), OrientationSetting::Auto);
    if model.turns_itself() {
        tracker.board_turns_itself();
    }
    let mut events = Vec::new();
    // With EBOARDD_SIM_ONLY set, the tracker's events are printed with their board time.
    let trace = std::env::var_os("EBOARDD_SIM_ONLY").is_some();
    for (at, got) in readings {
        if wakeups {
            while let Some(wake) = tracker.next_wakeup().filter(|w| w < at) {
                events.extend(tracker.on_tick(wake));
            }
        }
        let seen = events.len();
        for reading in got {
            if trace && run.model.is_chesslink() {
                println!("{at:>8} {reading:?}");
            }
            match reading {
                Reading::Dump(fields) => events.extend(tracker.on_board_dump(fields, *at)),
                Reading::Field(field, content) => {
                    events.extend(tracker.on_field_update(*field, *content, *at));
                }
                Reading::Press => events.extend(tracker.on_clock_press(*at)),
            }
        }
        events.extend(tracker.on_tick(*at));
        if trace {
            for event in &events[seen..] {
                println!("{at:>8}   -> {event:?}");
            }
        }
    }
    let seen = events.len();
    events.extend(tracker.on_tick(end + 5_000));
    if trace {
        for event in &events[seen..] {
            println!("{:>8}   -> {event:?}", end + 5_000);
        }
        let moves = tracker.moves();
        println!("last moves: {:?}", &moves[moves.len().saturating_sub(4)..]);
    }
    // A board that turns itself reports the right way round: never turned a second time.
    let reported = if model.turns_itself() {
        Orientation::Normal
    } else {
        orientation
    };
    assert_eq!(tracker.orientation(), Some(reported), "{what}: orientation");
    Outcome {
        clock_version: None,
        uci: tracker
            .moves()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect(),
        illegal_reports: events
            .iter()
            .filter(|e| matches!(e, TrackerEvent::IllegalPlacement { .. }))
            .count(),
        in_sync: tracker.in_sync(),
        corrections: tracker.corrections(),
    }
}

/// Normal for even corpus indices, turned round for odd ones.
fn turned_every_other(index: usize) -> Orientation {
    if index.is_multiple_of(2) {
        Orientation::Normal
    } else {
        Orientation::Reversed
    }
}

/// Play this shard's corpus games, each with the run and seed `run_of` gives its index, and
/// check that each comes out exact: the same moves, no illegal placement reported, in sync.
async fn play_shard(shard: usize, run_of: impl Fn(usize) -> (Run, u64)) {
    let games = corpus();
    let only = only();
    let mine: Vec<usize> = (0..games.len())
        .filter(|n| (n / 4) % SHARDS == shard)
        .filter(|n| only.as_ref().is_none_or(|only| only.contains(n)))
        .collect();
    let count = mine.len();
    let tracing = only.is_some();
    let in_flight = if tracing { 1 } else { IN_FLIGHT };
    let mut results: Vec<_> = futures_util::stream::iter(mine)
        .map(|index| {
            let (run, seed) = run_of(index);
            let game = &games[index];
            let what = format!("game {index} ({run})");
            async move {
                let want: Vec<String> = game
                    .moves()
                    .unwrap()
                    .iter()
                    .map(|m| m.to_uci(CastlingMode::Standard).to_string())
                    .collect();
                if tracing {
                    println!("{what}: {}", want.join(" "));
                }
                let got = run_game(game, run, seed, &what).await;
                (index, what, want, got)
            }
        })
        .buffer_unordered(in_flight)
        .collect()
        .await;
    results.sort_by_key(|r| r.0);
    let (mut plies, mut corrections, mut failures) = (0, 0, Vec::new());
    for (_, what, want, got) in &results {
        plies += want.len();
        corrections += got.corrections;
        if what.contains("DGT XL") && got.clock_version != Some((1, 14)) {
            failures.push(format!("{what}: clock version {:?}", got.clock_version));
        }
        if got.uci != *want || got.illegal_reports > 0 || !got.in_sync {
            failures.push(format!(
                "{what}: {} of {} plies, first difference at {:?}, illegal reports {}, in sync {}",
                got.uci.len(),
                want.len(),
                got.uci.iter().zip(want).position(|(a, b)| a != b),
                got.illegal_reports,
                got.in_sync
            ));
        }
    }
    println!(
        "shard {shard} of {SHARDS}: {count} games, {plies} plies, {} failures, {corrections} \
         corrections",
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Human pace with noisy hands, each game in one of the four configurations (normal and
/// reversed board, with and without a clock) in turn, the tracker ticked only at the readings.
async fn corpus_games_come_out_exact_through_the_pty(shard: usize) {
    let configs = [
        (Orientation::Normal, true),
        (Orientation::Reversed, true),
        (Orientation::Normal, false),
        (Orientation::Reversed, false),
    ];
    play_shard(shard, |index| {
        let (orientation, clock) = configs[index % configs.len()];
        let run = Run {
            // The Bluetooth board's game bytes are the USB board's: every other round of
            // the four configurations is played on one.
            model: if (index / configs.len()).is_multiple_of(2) {
                Model::Usb
            } else {
                Model::Bluetooth
            },
            orientation,
            clock,
            pace: Pace::human(),
            wakeups: false,
            xl: false,
        };
        (run, index as u64 + 1)
    })
    .await;
}

/// Option 13 scaled to the corpus's pace is not needed: the real one (100 min for 40 moves,
/// 50 for 20, then 10 min, 30 s a move) never runs out at a human pace.
const OPTION_13: &str = "40/6000+30:20/3000+30:600+30";

/// Every game again with a DGT XL behind the board (option 13: its move counter adds the next
/// period at the press it counts as the 40th), normal and reversed in turn, human pace and
/// noisy hands: its version is asked and told, its acks are the quirky (0x20, 0, 0, 0) kind.
async fn corpus_games_with_a_dgt_xl_come_out_exact(shard: usize) {
    play_shard(shard, |index| {
        let run = Run {
            model: Model::Usb,
            orientation: turned_every_other(index),
            clock: true,
            pace: Pace::human(),
            wakeups: false,
            xl: true,
        };
        (run, index as u64 + 11)
    })
    .await;
}

/// The quick pace without a clock: a ply every 0.2-0.5 s, hands at 40-120 ms a step.
const QUICK_WITHOUT_CLOCK: Pace = Pace {
    think_ms: (150, 400),
    press_ms: (0, 0),
    hand_ms: (40, 120),
};

/// Without a clock at a quick pace (a ply every 0.2-0.5 s, hands at 40-120 ms a step): every
/// move is final from the board alone, and replies that come while the tracker still waits
/// on a move are resolved as soon as the board tells. Both with the tracker ticked only at
/// the readings and at its wakeups as the daemon does, on a normal and a reversed board.
async fn quick_games_without_a_clock_come_out_exact(shard: usize) {
    let pace = QUICK_WITHOUT_CLOCK;
    play_shard(shard, |index| {
        let run = Run {
            model: if index % 8 < 4 {
                Model::Usb
            } else {
                Model::Bluetooth
            },
            orientation: turned_every_other(index),
            clock: false,
            pace,
            wakeups: index % 4 >= 2,
            xl: false,
        };
        (run, index as u64 + 7)
    })
    .await;
}

/// Every corpus game on a Revelation II, human pace and noisy hands, in four configurations in
/// turn: firmware 3.25 (turns its own reporting round) set up reversed with and without a
/// clock, 3.25 set up normally, and 3.21 (does not turn) set up reversed — the tracker pinned
/// as the session pins it for a board that turns itself, never turning it a second time.
async fn revelation_games_come_out_exact_through_the_pty(shard: usize) {
    let configs = [
        ((3, 25), Orientation::Reversed, true),
        ((3, 25), Orientation::Reversed, false),
        ((3, 25), Orientation::Normal, true),
        ((3, 21), Orientation::Reversed, false),
    ];
    play_shard(shard, |index| {
        let (firmware, orientation, clock) = configs[index % configs.len()];
        let run = Run {
            model: Model::Revelation(firmware),
            orientation,
            clock,
            pace: Pace::human(),
            wakeups: false,
            xl: false,
        };
        (run, index as u64 + 11)
    })
    .await;
}

/// Every corpus game on a Millennium ChessLink board (no clock), read by the daemon's
/// ChessLink driver: human pace and noisy hands, normal and turned round in turn, the tracker
/// ticked at the readings only and at its wakeups in turn.
async fn chesslink_games_come_out_exact_through_the_pty(shard: usize) {
    play_shard(shard, |index| {
        let run = Run {
            model: Model::ChessLink,
            orientation: turned_every_other(index),
            clock: false,
            pace: Pace::human(),
            wakeups: index % 4 >= 2,
            xl: false,
        };
        (run, index as u64 + 13)
    })
    .await;
}

/// The quick no-clock games of [`quick_games_without_a_clock_come_out_exact`], every one on a
/// ChessLink board, normal and turned round, the tracker ticked at the readings only and at
/// its wakeups in turn (as the daemon does). At this pace the hand now and then rests in the
/// air for more than the time a placement takes to settle, a capture's two pieces both lifted
/// (corpus game 154 with seed 161: the pawn on f7 lifted, then the rook on f6, the hand held
/// 0.6 s): that board, which two plies that only empty squares also leave (Rxe6 fxe6), is a
/// move waiting for its piece, never two plies the readings did not show.
async fn quick_chesslink_games_without_a_clock_come_out_exact(shard: usize) {
    play_shard(shard, |index| {
        let run = Run {
            model: Model::ChessLink,
            orientation: turned_every_other(index),
            clock: false,
            pace: QUICK_WITHOUT_CLOCK,
            wakeups: index % 4 >= 2,
            xl: false,
        };
        (run, index as u64 + 7)
    })
    .await;
}

/// One test per shard of each kind, named `kind::shard_k` (a filter on the kind runs them all),
/// each on a single-threaded runtime: the harness already gives every core a shard.
const _: () = assert!(SHARDS == 4, "shards! writes one test per shard");
macro_rules! shards {
    ($($kind:ident),*) => {$(
        mod $kind {
            #[tokio::test]
            async fn shard_0() {
                super::$kind(0).await
            }
            #[tokio::test]
            async fn shard_1() {
                super::$kind(1).await
            }
            #[tokio::test]
            async fn shard_2() {
                super::$kind(2).await
            }
            #[tokio::test]
            async fn shard_3() {
                super::$kind(3).await
            }
        }
    )*};
}

shards!(
    corpus_games_come_out_exact_through_the_pty,
    quick_games_without_a_clock_come_out_exact,
    revelation_games_come_out_exact_through_the_pty,
    corpus_games_with_a_dgt_xl_come_out_exact,
    chesslink_games_come_out_exact_through_the_pty,
    quick_chesslink_games_without_a_clock_come_out_exact
);
