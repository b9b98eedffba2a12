//! A classical control through the daemon, scaled down to `4/20+1:10+1` (4 moves in 20 s,
//! then 10 s, 1 s a move): the simulator's DGT 3000 in its FIDE mode adds the next period's
//! time to both sides when a player's period runs out, and the daemon judges whether he had
//! made his moves (the control at move 40 of a real game). Both editions.

mod common;

use common::events::{Ev, Event, Events};
use common::proxies;
use common::rig::{quick, ready_to_play, sans, wait_moves};
use common::sim::sim_board;
use common::{Daemon, WAIT, within};
use eboard_core::vocab::{GameResult, Player, Termination};
use eboard_sim::{Action, BoardOptions, ClockSide, Scenario, SimHandle, Step};
use shakmaty::{Board, Square};

const CONTROL: &str = "4/20+1:10+1";

/// Board time per wall time: readings stay a board second apart as the daemon sees them.
const SPEED: f64 = 2.0;

/// Longer than any period of [`CONTROL`] (board ms).
const PAST_A_PERIOD_MS: u64 = 24_000;

struct Table {
    _bus: common::Bus,
    _daemon: Daemon,
    conn: zbus::Connection,
    sim: SimHandle,
    events: Events,
    id: &'static str,
    _dir: tempfile::TempDir,
}

/// A board `id` on a clock set to `control`, served with `rules`/`edition`.
async fn table(
    id: &'static str,
    control: &str,
    rules: &str,
    edition: &str,
    steady_flag: bool,
    speed: f64,
) -> Table {
    let dir = tempfile::tempdir().unwrap();
    let board = BoardOptions {
        time_control: Some(control.parse().unwrap()),
        clock_steady_flag: steady_flag,
        ..BoardOptions::default()
    };
    let sim = sim_board(dir.path(), id, speed, board).await;
    let config = dir.path().join("eboardd.toml");
    std::fs::write(
        &config,
        format!(
            "[[board]]\nname = \"{id}\"\nport = \"{}\"\nrules = \"{rules}\"\nedition = \"{edition}\"\n\
             white_display = \"left\"\ntime_control = \"{control}\"\n",
            dir.path().join(id).display()
        ),
    )
    .unwrap();
    let bus = common::Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let mut events = Events::start(&conn, id).await;
    ready_to_play(&sim, &mut events).await;
    Table {
        _bus: bus,
        _daemon: daemon,
        conn,
        sim,
        events,
        id,
        _dir: dir,
    }
}

impl Table {
    async fn run(&self, sc: &mut Scenario<'_>, steps: &[Step]) {
        within(WAIT * 6, "the scenario", sc.run(steps))
            .await
            .unwrap();
    }

    async fn pgn(&self) -> String {
        proxies::fresh(&self.conn, self.id)
            .await
            .pgn()
            .await
            .unwrap()
            .replace('\n', " ")
    }

    async fn flag_then_end(&mut self, flagged: Player, result: GameResult, t: Termination) {
        let flag = self.events.next_signal("FlagFell").await;
        assert_eq!(flag, Event::FlagFell { player: flagged });
        let ended = self.events.next_signal("GameEnded").await;
        assert_eq!(
            ended,
            Event::GameEnded {
                result,
                termination: t
            }
        );
    }

    fn no_flag_and_no_end(&self) {
        for e in self.events.all() {
            assert!(
                !matches!(
                    e,
                    Ev::Signal(Event::FlagFell { .. } | Event::GameEnded { .. })
                ),
                "{e:?}"
            );
        }
    }
}

const THREE_EACH: [&str; 6] = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_made_in_time_mean_play_goes_on_in_both_editions() {
    for (id, edition) in [("in23", "fide-2023"), ("in05", "fide-2005")] {
        let t = table(id, CONTROL, "standard", edition, true, SPEED).await;
        let mut sc = Scenario::new(&t.sim, quick(1));
        let mut moves = sans(&THREE_EACH);
        moves.extend(sans(&["d3", "Bc5"]));
        t.run(&mut sc, &[Step::Moves(moves.clone())]).await;
        // White runs out of period 1 thinking on move 5: the clock shows his steady flag and
        // adds the next period to both sides; then both play on, two seconds into it.
        let left = t.sim.snapshot().await.unwrap().clock.left.as_millis();
        t.run(&mut sc, &[Step::Pause(left + 2_000)]).await;
        let clock = t.sim.snapshot().await.unwrap().clock;
        assert!(clock.left_flags.flag_shown, "{clock:?}");
        t.run(&mut sc, &[Step::Moves(sans(&["Nc3", "d6"]))]).await;
        moves.extend(sans(&["Nc3", "d6"]));
        wait_moves(&t.events, &moves).await;
        t.no_flag_and_no_end();
        let b = proxies::fresh(&t.conn, id).await;
        assert_eq!(b.result().await.unwrap(), "*");
        assert!(b.claims().await.unwrap().is_empty());
        let pgn = t.pgn().await;
        assert!(pgn.contains("[TimeControl \"4/20+1:10+1\"]"), "{pgn}");
        assert!(!pgn.contains("flag"), "{pgn}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_moves_when_white_s_period_runs_out_loses_in_2023() {
    let mut t = table("short23", CONTROL, "standard", "fide-2023", true, SPEED).await;
    let mut sc = Scenario::new(&t.sim, quick(2));
    t.run(&mut sc, &[Step::Moves(sans(&THREE_EACH))]).await;
    t.run(&mut sc, &[Step::Pause(PAST_A_PERIOD_MS)]).await;
    t.flag_then_end(
        Player::White,
        GameResult::BlackWins,
        Termination::TimeForfeit,
    )
    .await;
    let pgn = t.pgn().await;
    assert!(pgn.contains("[Termination \"time forfeit\"]"), "{pgn}");
    assert!(
        pgn.contains("White completed 3 of the 4 moves due"),
        "{pgn}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_moves_when_white_s_period_runs_out_gives_the_claim_in_2005_blitz() {
    let mut t = table("short05", CONTROL, "blitz", "fide-2005", true, SPEED).await;
    let mut sc = Scenario::new(&t.sim, quick(3));
    t.run(&mut sc, &[Step::Moves(sans(&THREE_EACH))]).await;
    t.run(&mut sc, &[Step::Pause(PAST_A_PERIOD_MS)]).await;
    let flag = t.events.next_signal("FlagFell").await;
    assert_eq!(
        flag,
        Event::FlagFell {
            player: Player::White
        }
    );
    let b = proxies::fresh(&t.conn, t.id).await;
    let want = (
        "black".to_string(),
        "win-on-time".to_string(),
        String::new(),
    );
    assert!(b.claims().await.unwrap().contains(&want));
    b.accept_claim("black", "win-on-time", "").await.unwrap();
    let ended = t.events.next_signal("GameEnded").await;
    assert_eq!(
        ended,
        Event::GameEnded {
            result: GameResult::BlackWins,
            termination: Termination::TimeForfeit
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_period_overstep_is_a_draw_when_black_cannot_mate() {
    let mut t = table("draw", CONTROL, "standard", "fide-2023", true, SPEED).await;
    let b = proxies::board(&t.conn, t.id).await;
    // White has a queen, Black a bare king.
    let fen = "8/8/4k3/8/8/8/4K3/7Q w - - 0 1";
    let setup: Board = fen.split(' ').next().unwrap().parse().unwrap();
    t.sim.act(Action::SetPosition(setup)).await.unwrap();
    b.set_position(fen).await.unwrap();
    t.events.next_signal("GameStarted").await;
    // Black starts White's clock; White has completed no move of the four due.
    t.sim.press_lever(ClockSide::Right).await.unwrap();
    t.sim.sleep(PAST_A_PERIOD_MS).await;
    t.flag_then_end(Player::White, GameResult::Draw, Termination::FlagFallDraw)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn black_s_period_runs_out_while_he_thinks_on_his_fourth_move() {
    let mut t = table("black", CONTROL, "standard", "fide-2023", true, SPEED).await;
    let mut sc = Scenario::new(&t.sim, quick(5));
    let mut moves = sans(&THREE_EACH);
    moves.push("d3".into());
    t.run(
        &mut sc,
        &[Step::Moves(moves), Step::Pause(PAST_A_PERIOD_MS)],
    )
    .await;
    t.flag_then_end(
        Player::Black,
        GameResult::WhiteWins,
        Termination::TimeForfeit,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_reading_missed_while_the_link_is_down_is_judged_from_the_jump() {
    // A clock whose readings carry no steady flag, and board time at wall speed so the
    // daemon's sense of the time between readings is the board's.
    let mut t = table("jump", CONTROL, "standard", "fide-2023", false, 1.0).await;
    let mut sc = Scenario::new(&t.sim, quick(6));
    t.run(&mut sc, &[Step::Moves(sans(&THREE_EACH))]).await;
    let left = t.sim.snapshot().await.unwrap().clock.left.as_millis();
    // The link goes down a second and a half before White's period ends, for three seconds.
    t.run(
        &mut sc,
        &[
            Step::Pause(left.saturating_sub(1_500)),
            Step::Unplug,
            Step::Pause(3_000),
            Step::Replug,
        ],
    )
    .await;
    let clock = t.sim.snapshot().await.unwrap().clock;
    assert!(
        !clock.left_flags.flag_shown && clock.left.as_millis() > 5_000,
        "{clock:?}"
    );
    t.flag_then_end(
        Player::White,
        GameResult::BlackWins,
        Termination::TimeForfeit,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_games_take_no_increment_back_after_an_illegal_move() {
    for (id, control) in [("bron", "4/20b2:10b2"), ("usdl", "4/20d2:10d2")] {
        let mut t = table(id, control, "blitz", "fide-2023", true, SPEED).await;
        let mut sc = Scenario::new(&t.sim, quick(7));
        t.run(&mut sc, &[Step::Moves(sans(&["e4", "e5"]))]).await;
        // White's bishop jumps f1 → f3 and he presses.
        t.run(
            &mut sc,
            &[
                Step::IllegalPlacement {
                    from: Square::F1,
                    to: Square::F3,
                },
                Step::PressClock,
            ],
        )
        .await;
        let ev = t.events.next_signal("IllegalMoveCompleted").await;
        assert!(
            matches!(
                ev,
                Event::IllegalMoveCompleted {
                    player: Player::White,
                    count: 1,
                    ..
                }
            ),
            "{ev:?}"
        );
        let pgn = t.pgn().await;
        assert!(pgn.contains("1st illegal move by white"), "{pgn}");
        assert!(!pgn.contains("increment"), "{control}: {pgn}");
        assert!(
            pgn.contains(&format!("[TimeControl \"{control}\"]")),
            "{pgn}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_final_period_s_flag_is_a_fall() {
    let mut t = table("final", CONTROL, "standard", "fide-2023", true, SPEED).await;
    let mut sc = Scenario::new(&t.sim, quick(8));
    let mut moves = sans(&THREE_EACH);
    moves.extend(sans(&["d3", "Bc5"]));
    t.run(
        &mut sc,
        &[
            Step::Moves(moves),
            Step::Pause(PAST_A_PERIOD_MS),
            Step::Pause(PAST_A_PERIOD_MS),
        ],
    )
    .await;
    // Well into period 2 (10 s + 1 s a move): White's time there runs out too.
    let clock = t.sim.snapshot().await.unwrap().clock;
    assert!(clock.left_flags.flag_fallen, "{clock:?}");
    t.flag_then_end(
        Player::White,
        GameResult::BlackWins,
        Termination::TimeForfeit,
    )
    .await;
}
