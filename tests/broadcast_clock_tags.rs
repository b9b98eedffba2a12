//! The clock tags of every broadcast PGN (`WhiteClock`, `BlackClock`, `ReferenceTime`), end to
//! end: the simulator's DGT 3000 in its FIDE mode on a pty, the real eboardd on a private bus
//! with a PGN folder, the web bridge, the relay on a real mosquitto and the broadcaster pushing
//! to a stand-in of lichess's endpoint. Each output is read the way lichess reads it (a small
//! parser of its own here: `seconds`, `m:ss` or `h:mm:ss`, and `W/` or `B/` before an ISO 8601
//! instant), never through the project's code.
//!
//! - A player's first period runs out (the control at move 40, scaled down to 4 moves): the
//!   clock adds the next period to both sides, and the PGN URL, the round folder, the relay's
//!   `pgn` topic and the push all show the added time while no move has been made since.
//! - The clock paused: both times, no `ReferenceTime`.
//! - A board without a clock: none of the three tags.
//! - The daemon killed and started again mid-game: no `ReferenceTime` from before the restart
//!   is ever shown as current.

mod broadcast_support;
mod common;
mod ctl_support;
mod relay_support;
mod web_support;

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use broadcast_support::{Broadcaster, Lichess, token_file};
use common::events::Events;
use common::rig::{quick, ready_to_play, sans, wait_moves};
use common::sim::sim_board;
use common::{Bus, Daemon, WAIT, within};
use eboard_sim::{Action, BoardOptions, ClockPresence, Scenario, SimHandle, Step};
use relay_support::{Broker, Relay, Subscriber};
use web_support::Serve;
use web_support::browser::Browser;

/// 4 moves in 20 s, then 60 s: the next period's time is far from anything a running clock
/// shows, so seeing it proves the clock-only update.
const CONTROL: &str = "4/20+1:60+1";
const ROUND_ID: &str = "clk12345";
const LONG: Duration = Duration::from_secs(60);

/// The clock as lichess reads it from a game's tags.
#[derive(Debug, Clone, PartialEq)]
struct LichessClock {
    white_s: Option<u64>,
    black_s: Option<u64>,
    /// Whose clock ran (`'W'`/`'B'`) and the instant, Unix milliseconds.
    reference: Option<(char, i64)>,
}

/// The last game of a PGN text: its tags and its number of `%clk` stamps (one per move).
fn last_game(pgn: &str) -> (Vec<(String, String)>, usize) {
    let start = pgn.rfind("[Event \"").unwrap_or(0);
    let game = &pgn[start..];
    let tags = game
        .lines()
        .take_while(|l| l.starts_with('['))
        .filter_map(|l| {
            let inner = l.strip_prefix('[')?.strip_suffix(']')?;
            let (name, value) = inner.split_once(' ')?;
            Some((name.to_owned(), value.trim_matches('"').to_owned()))
        })
        .collect();
    (tags, game.matches("[%clk ").count())
}

/// `seconds`, `m:ss` or `h:mm:ss`, as lichess takes a clock tag.
fn clock_seconds(v: &str) -> Option<u64> {
    let parts: Vec<u64> = v
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    match parts.as_slice() {
        [s] => Some(*s),
        [m, s] if *s < 60 => Some(m * 60 + s),
        [h, m, s] if *m < 60 && *s < 60 => Some(h * 3600 + m * 60 + s),
        _ => None,
    }
}

/// Days since 1970-01-01 of a Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `W/2026-12-04T18:52:47.862Z` → ('W', Unix ms).
fn reference(v: &str) -> Option<(char, i64)> {
    let (side, instant) = v.split_once('/')?;
    let side = match side {
        "W" => 'W',
        "B" => 'B',
        _ => return None,
    };
    let instant = instant.strip_suffix('Z')?;
    let (date, time) = instant.split_once('T')?;
    let d: Vec<i64> = date
        .split('-')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let (hms, millis) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<i64> = hms
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let ([y, mo, da], [h, mi, s]) = (d.as_slice(), t.as_slice()) else {
        return None;
    };
    let ms: i64 = format!("{millis:0<3}")[..3].parse().ok()?;
    let days = days_from_civil(*y, *mo, *da);
    Some((side, ((days * 86_400 + h * 3600 + mi * 60 + s) * 1000) + ms))
}

/// The clock tags of the last game of `pgn` and its number of moves.
fn lichess_clock(pgn: &str) -> (LichessClock, usize) {
    let (tags, plies) = last_game(pgn);
    let get = |n: &str| tags.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let clock = LichessClock {
        white_s: get("WhiteClock").map(|v| clock_seconds(&v).expect("WhiteClock")),
        black_s: get("BlackClock").map(|v| clock_seconds(&v).expect("BlackClock")),
        reference: get("ReferenceTime").map(|v| reference(&v).expect("ReferenceTime")),
    };
    (clock, plies)
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Polls `read` until `pred` holds for what it returns; returns that.
async fn poll<T: std::fmt::Debug>(
    what: &str,
    mut read: impl AsyncFnMut() -> T,
    pred: impl Fn(&T) -> bool,
) -> T {
    within(LONG, what, async {
        loop {
            let v = read().await;
            if pred(&v) {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
}

fn board_config(dir: &Path, name: &str, number: u32, control: &str) -> String {
    format!(
        "[[board]]\nname = \"{name}\"\nnumber = {number}\nport = \"{}\"\n\
         white_display = \"left\"\ntime_control = \"{control}\"\n\
         tags = {{ Event = \"Clock Open\", Round = \"1.{number}\", White = \"A\", Black = \"B\" }}\n",
        dir.join(name).display()
    )
}

async fn fide_board(dir: &Path, name: &str) -> SimHandle {
    let board = BoardOptions {
        time_control: Some(CONTROL.parse().unwrap()),
        clock_steady_flag: true,
        ..BoardOptions::default()
    };
    sim_board(dir, name, 1.0, board).await
}

fn start_daemon(bus: &Bus, dir: &Path, config: &Path) -> Daemon {
    Daemon::spawn(bus, dir, &["--config", config.to_str().unwrap()])
}

/// The period added shows at once on every broadcast output; a pause drops the reference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_period_reaches_every_broadcast_output_before_the_next_move() {
    if !common::require::require_tools(&[("mosquitto", "mosquitto")]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = fide_board(d, "p1").await;
    let config = d.join("eboardd.toml");
    std::fs::write(
        &config,
        format!(
            "[daemon]\npgn_dir = \"{}\"\n{}",
            d.join("pgn").display(),
            board_config(d, "p1", 1, CONTROL)
        ),
    )
    .unwrap();
    let bus = Bus::start(d).await;
    let mut daemon = start_daemon(&bus, d, &config);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let mut events = Events::start(&conn, "p1").await;

    let serve = Serve::start(&bus.address, &[]).await;
    let broker = Broker::start(d).await;
    let _relay = Relay::spawn(&bus.address, d, &["--mqtt", &broker.url(), "--rig", "r1"]);
    let topic = "eboardd/r1/p1/pgn";
    let sub = Subscriber::start(broker.port, "clock-tags", topic, false).await;
    let lichess = Lichess::start().await;
    let token = token_file(d, 0o600);
    let _caster = Broadcaster::spawn(
        &bus.address,
        d,
        &[
            "--round",
            ROUND_ID,
            "--token-file",
            token.to_str().unwrap(),
            "--url",
            &lichess.url,
        ],
        &[],
    );

    ready_to_play(&sim, &mut events).await;
    let moves = sans(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "d3", "Bc5"]);
    let mut sc = Scenario::new(&sim, quick(41));
    within(WAIT * 6, "the moves", sc.run(&[Step::Moves(moves.clone())]))
        .await
        .unwrap();
    wait_moves(&events, &moves).await;
    // White's clock runs his first period down: four moves made, so the clock's steady flag
    // is a period change and the clock adds 60 s to both sides. No move is made after it.
    let before_period = unix_ms();
    let plies = moves.len();
    // What shows the next period: White's display up by the next period (more than 50 s while
    // it was at most 20 s), White's reference, every move and no other.
    let added = |c: &(LichessClock, usize)| {
        c.1 == plies
            && c.0.white_s.is_some_and(|s| s > 50)
            && c.0.black_s.is_some_and(|s| s > 50)
            && c.0
                .reference
                .is_some_and(|(side, at)| side == 'W' && at >= before_period)
    };
    // The five outputs are watched at once, each noting when it first showed the period.
    let round_file = d.join("pgn/round-1/game-1.pgn");
    let seen = |c: (LichessClock, usize)| (c, unix_ms());
    let (url, folder, all, relayed, pushed) = tokio::join!(
        async {
            seen(
                poll(
                    "the PGN URL to show the next period",
                    async || lichess_clock(&serve.get("/pgn/p1.pgn").await.1),
                    added,
                )
                .await,
            )
        },
        async {
            seen(
                poll(
                    "the round folder to show the next period",
                    async || {
                        lichess_clock(&std::fs::read_to_string(&round_file).unwrap_or_default())
                    },
                    added,
                )
                .await,
            )
        },
        async {
            seen(
                poll(
                    "the round's games.pgn to show the next period",
                    async || {
                        lichess_clock(
                            &std::fs::read_to_string(d.join("pgn/round-1/games.pgn"))
                                .unwrap_or_default(),
                        )
                    },
                    added,
                )
                .await,
            )
        },
        async {
            seen(
                sub.until("the relay's pgn topic to show the next period", |got| {
                    got.iter()
                        .filter(|g| g.topic == topic)
                        .map(|g| lichess_clock(&g.text()))
                        .find(|c| added(c))
                })
                .await,
            )
        },
        async {
            let r = lichess
                .wait_for("a push with the next period", LONG, |r| {
                    added(&lichess_clock(&r.body))
                })
                .await;
            seen(lichess_clock(&r.body))
        },
    );
    let at = url.0.0.reference.unwrap().1;
    for (name, (_, when)) in [
        ("/pgn URL", &url),
        ("round folder", &folder),
        ("games.pgn", &all),
        ("relay topic", &relayed),
        ("lichess push", &pushed),
    ] {
        println!(
            "next period on the {name}: {} ms after the reading",
            when - at
        );
    }
    let (url, folder, all, relayed, pushed) = (url.0, folder.0, all.0, relayed.0, pushed.0);
    // Every output shows the one reading: the same times and the same reference.
    for other in [&folder, &all, &relayed, &pushed] {
        assert_eq!(other.0.reference, url.0.reference, "{other:?} vs {url:?}");
    }
    // The clock tags came before any further move: the board was left alone.
    assert_eq!(events.sans(), moves);
    // Never a stray move: every push carried the game's final moves only.
    for r in lichess.requests() {
        assert!(lichess_clock(&r.body).1 <= plies, "{}", r.body);
    }
    println!(
        "next period: reading at {:?}, outputs: url {url:?}, relay {relayed:?}, push {pushed:?}",
        url.0.reference
    );

    // The pages run their clocks from the same reading and reference: the overlay and the
    // hall show what a lichess viewer computes from the tags, within a second.
    let (ref_side, ref_at) = url.0.reference.unwrap();
    assert_eq!(ref_side, 'W');
    let mut browser = Browser::launch().await;
    browser.size(900, 600).await;
    for (page, shot) in [
        ("/overlay/p1", "clock-tags-overlay.png"),
        ("/", "clock-tags-hall.png"),
    ] {
        browser.goto(&serve.url(page)).await;
        browser
            .wait_for(
                "the clocks",
                "document.querySelector('.clock.white') !== null \
                 && document.querySelector('.clock.white').textContent.length > 0",
            )
            .await;
        let read = browser
            .eval(
                "JSON.stringify([Number(document.querySelector('.clock.white').getAttribute('data-ms')), \
                 Number(document.querySelector('.clock.black').getAttribute('data-ms')), Date.now()])",
            )
            .await;
        let [white_ms, black_ms, page_now]: [i64; 3] =
            serde_json::from_str(read.as_str().unwrap()).unwrap();
        let lichess_white = url.0.white_s.unwrap() as i64 * 1000 - (page_now - ref_at);
        let lichess_black = url.0.black_s.unwrap() as i64 * 1000;
        println!(
            "{page}: white {white_ms} ms, lichess {lichess_white}; black {black_ms}, lichess {lichess_black}"
        );
        assert!(
            (white_ms - lichess_white).abs() <= 1_000,
            "{page}: {white_ms} vs {lichess_white}"
        );
        assert!(
            (black_ms - lichess_black).abs() <= 1_000,
            "{page}: {black_ms} vs {lichess_black}"
        );
        let path = browser.screenshot(shot).await;
        println!("screenshot: {}", path.display());
    }
    // A viewer's clock an hour wrong (a hall without NTP): the page does not run the tags'
    // clock by an hour; it shows the live properties' time, still the time on the table.
    browser
        .eval("(() => { const real = Date.now; Date.now = () => real() + 3600000; })()")
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let read = browser
        .eval(
            "JSON.stringify([Number(document.querySelector('.clock.white').getAttribute('data-ms')), \
             Date.now() - 3600000])",
        )
        .await;
    let [white_ms, real_now]: [i64; 2] = serde_json::from_str(read.as_str().unwrap()).unwrap();
    let lichess_white = url.0.white_s.unwrap() as i64 * 1000 - (real_now - ref_at);
    println!("skewed page clock: white {white_ms} ms, lichess {lichess_white}");
    assert!(
        (white_ms - lichess_white).abs() <= 2_000,
        "a page clock an hour off: {white_ms} vs {lichess_white}"
    );

    // The clock paused (its start/stop button): both times, no reference, everywhere.
    sim.act(Action::StartStop).await.unwrap();
    let paused = |c: &(LichessClock, usize)| {
        c.0.reference.is_none() && c.0.white_s.is_some() && c.0.black_s.is_some()
    };
    poll(
        "the PGN URL to show the clock paused",
        async || lichess_clock(&serve.get("/pgn/p1.pgn").await.1),
        paused,
    )
    .await;
    poll(
        "the round folder to show the clock paused",
        async || lichess_clock(&std::fs::read_to_string(&round_file).unwrap_or_default()),
        paused,
    )
    .await;
    sub.until("the relay's pgn topic to show the clock paused", |got| {
        got.iter()
            .rfind(|g| g.topic == topic)
            .filter(|g| paused(&lichess_clock(&g.text())))
            .map(|_| ())
    })
    .await;
    lichess
        .wait_for("a push with the clock paused", LONG, |r| {
            paused(&lichess_clock(&r.body))
        })
        .await;
    // The bus agrees: the clock is stopped.
    let running = common::proxies::fresh(&conn, "p1")
        .await
        .clock_running()
        .await
        .unwrap();
    assert_eq!(running, "none");
}

/// A board without a clock has no clock tags; a restarted daemon never shows a reference
/// from before the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_clock_means_no_tags_and_a_restart_shows_no_old_reference() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let clocked = fide_board(d, "c1").await;
    let bare = sim_board(
        d,
        "n2",
        1.0,
        BoardOptions {
            clock: ClockPresence::Absent,
            ..BoardOptions::default()
        },
    )
    .await;
    let config = d.join("eboardd.toml");
    std::fs::write(
        &config,
        format!(
            "[daemon]\npgn_dir = \"{}\"\n{}{}",
            d.join("pgn").display(),
            board_config(d, "c1", 1, "300+2"),
            board_config(d, "n2", 2, "300+2"),
        ),
    )
    .unwrap();
    let bus = Bus::start(d).await;
    let mut daemon = start_daemon(&bus, d, &config);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let mut ev_c = Events::start(&conn, "c1").await;
    let mut ev_n = Events::start(&conn, "n2").await;
    ready_to_play(&clocked, &mut ev_c).await;
    ready_to_play(&bare, &mut ev_n).await;

    let two = sans(&["d4", "d5", "c4"]);
    let mut sc_n = Scenario::new(&bare, quick(7));
    within(
        WAIT * 3,
        "moves on the bare board",
        sc_n.run(&[Step::Moves(two.clone())]),
    )
    .await
    .unwrap();
    let mut sc_c = Scenario::new(&clocked, quick(8));
    within(
        WAIT * 3,
        "moves on the clocked board",
        sc_c.run(&[Step::Moves(two.clone())]),
    )
    .await
    .unwrap();
    wait_moves(&ev_n, &two).await;
    wait_moves(&ev_c, &two).await;

    let live = |id: &str| d.join(format!("pgn/live/{id}.pgn"));
    // The bare board's game is final (the moves stood still) with no clock tag anywhere.
    let bare_pgn = poll(
        "the bare board's live file with its moves",
        async || std::fs::read_to_string(live("n2")).unwrap_or_default(),
        |t| t.contains("3. ") || t.contains("2. c4"),
    )
    .await;
    for tag in ["[WhiteClock ", "[BlackClock ", "[ReferenceTime "] {
        assert!(!bare_pgn.contains(tag), "{bare_pgn}");
    }
    let bare_bus = common::proxies::fresh(&conn, "n2")
        .await
        .pgn()
        .await
        .unwrap();
    for tag in ["[WhiteClock ", "[BlackClock ", "[ReferenceTime "] {
        assert!(!bare_bus.contains(tag), "{bare_bus}");
    }

    // The clocked board carries a running reference.
    let before = poll(
        "the clocked board's reference",
        async || lichess_clock(&std::fs::read_to_string(live("c1")).unwrap_or_default()),
        |c| c.0.reference.is_some(),
    )
    .await;
    let old_reference = before.0.reference.unwrap().1;

    // Killed mid-game and started again: the clock runs on on the table meanwhile.
    daemon.kill9().await;
    let restart = unix_ms();
    assert!(restart >= old_reference);
    let mut daemon = start_daemon(&bus, d, &config);
    daemon.wait_for_name(&conn).await;
    // Every text seen from now on shows no reference, or one read after the restart; until
    // one read after the restart shows, on the bus and in the live file.
    let fresh = |c: &LichessClock| c.reference.is_some_and(|(_, at)| at >= restart);
    let stale = |c: &LichessClock| c.reference.is_some_and(|(_, at)| at < restart);
    // The live file is rewritten from the journal at the start: once it has been, it never
    // shows a stale reference again.
    let mut seen = 0usize;
    let mut file_rewritten = false;
    poll(
        "a reference read after the restart on the bus and in the file",
        async || {
            let bus_text = common::proxies::fresh(&conn, "c1")
                .await
                .pgn()
                .await
                .unwrap();
            let file_text = std::fs::read_to_string(live("c1")).unwrap_or_default();
            let (b, f) = (lichess_clock(&bus_text).0, lichess_clock(&file_text).0);
            assert!(
                !stale(&b),
                "the bus shows a clock from before the restart: {b:?}"
            );
            if file_rewritten {
                assert!(
                    !stale(&f),
                    "the file shows a clock from before the restart: {f:?}"
                );
            }
            file_rewritten |= !stale(&f);
            seen += 1;
            (b, f)
        },
        |(b, f)| fresh(b) && fresh(f),
    )
    .await;
    println!("after the restart: {seen} readings of the bus and file, none stale");
}
