//! The clock tags of the `Pgn` text through the session, on the simulator's in-memory rig
//! (virtual board + DGT 3000 + the real session), board time only: which reading they show,
//! that a running clock costs no rewrite, and that a link that drops and comes back never shows
//! the reading from before the drop as current. The daemon's end-to-end checks are in
//! `broadcast_clock_tags`.

use eboard_core::session::SessionConfig;
use eboard_sim::rig::Rig;
use eboard_sim::{BoardOptions, ClockSetup, Noise};

/// The wall clock at the rig's time 0 (Unix ms): 2027-01-15T08:00:00Z.
const WALL_AT_ZERO: u64 = 1_800_000_000_000;

fn rig() -> Rig {
    let mut rig = Rig::new(
        BoardOptions {
            clock_setup: ClockSetup {
                base_ms: 300_000,
                increment_ms: 0,
            },
            ..BoardOptions::default()
        },
        SessionConfig {
            name: "tags".into(),
            ..SessionConfig::default()
        },
        5,
        Noise::Clean,
    );
    let now = rig.now();
    rig.set_wall_clock(WALL_AT_ZERO + now);
    rig
}

fn tag<'a>(pgn: &'a str, name: &str) -> Option<&'a str> {
    pgn.lines()
        .find_map(|l| l.strip_prefix(&format!("[{name} \""))?.strip_suffix("\"]"))
}

/// (WhiteClock, BlackClock, ReferenceTime) of the session's `Pgn`.
fn tags(rig: &Rig) -> (Option<String>, Option<String>, Option<String>) {
    let pgn = &rig.session().view().pgn;
    let get = |n| tag(pgn, n).map(str::to_owned);
    (get("WhiteClock"), get("BlackClock"), get("ReferenceTime"))
}

/// The Unix ms of a `ReferenceTime` value, through the core's reader.
fn instant(reference: &str) -> u64 {
    eboard_core::clock_tags::parse_iso_utc_millis(&reference[2..]).expect("an ISO instant")
}

#[test]
fn a_running_clock_is_written_once_and_a_pause_drops_the_reference() {
    let mut rig = rig();
    for san in ["e4", "e5", "Nf3"] {
        rig.advance(3_000);
        rig.play(san).unwrap();
    }
    rig.advance(1_000);
    let (white, black, reference) = tags(&rig);
    let reference = reference.expect("a running clock has a reference");
    assert!(reference.starts_with("B/"), "{reference}");
    assert!(white.is_some() && black.is_some());
    let pressed_at = instant(&reference) - WALL_AT_ZERO;
    assert!(
        pressed_at < rig.now(),
        "the reading's instant, not the text's"
    );
    // Black thinks for a minute: the clock runs, the text stays as it is.
    let text = rig.session().view().pgn.clone();
    for _ in 0..60 {
        rig.advance(1_000);
        assert_eq!(rig.session().view().pgn, text, "a rewrite at {}", rig.now());
    }
    // The arbiter pauses the clock: both times, no reference.
    let now = rig.now();
    rig.board.clock_mut().toggle_running(now);
    rig.advance(4_000);
    let (white, black, reference) = tags(&rig);
    assert_eq!(reference, None);
    let now = rig.now();
    let shown = |rig: &mut Rig, color| {
        let side = rig.side_of(color);
        let ms = rig.board.clock_mut().remaining(side, now);
        eboard_core::clock_tags::hms(ms.div_ceil(1000) * 1000)
    };
    let (w, b) = (
        shown(&mut rig, shakmaty::Color::White),
        shown(&mut rig, shakmaty::Color::Black),
    );
    assert_eq!(
        (white, black),
        (Some(w), Some(b)),
        "the paused clock's displays"
    );
    // Started again: Black's reference, from the reading that said so.
    let now = rig.now();
    rig.board.clock_mut().toggle_running(now);
    rig.advance(3_000);
    let (_, _, reference) = tags(&rig);
    let reference = reference.expect("running again");
    assert!(reference.starts_with("B/") && instant(&reference) >= WALL_AT_ZERO + now);
}

#[test]
fn a_link_that_comes_back_shows_no_reading_from_before_the_drop() {
    let mut rig = rig();
    for san in ["d4", "d5"] {
        rig.advance(2_000);
        rig.play(san).unwrap();
    }
    rig.advance(1_500);
    assert!(tags(&rig).2.is_some());
    rig.disconnect();
    rig.advance(100);
    assert_eq!(tags(&rig), (None, None, None), "no link, no clock");
    rig.advance(5_000);
    let back = rig.now();
    rig.connect();
    // Every text from now on has no reference or one read after the link came back.
    let mut fresh = None;
    for _ in 0..50 {
        rig.advance(100);
        if let (_, _, Some(r)) = tags(&rig) {
            assert!(
                instant(&r) >= WALL_AT_ZERO + back,
                "{r} is from before the drop"
            );
            fresh = Some(r);
        }
    }
    assert!(
        fresh.is_some(),
        "the clock's tags came back with its readings"
    );
}

#[test]
fn without_a_wall_clock_or_a_clock_there_are_no_tags() {
    let mut rig = Rig::new(
        BoardOptions::default(),
        SessionConfig::default(),
        6,
        Noise::Clean,
    );
    rig.advance(2_000);
    rig.play("e4").unwrap();
    rig.advance(2_000);
    assert_eq!(tags(&rig), (None, None, None), "no wall clock told");
    let mut bare = Rig::new(
        BoardOptions {
            clock: eboard_sim::ClockPresence::Absent,
            ..BoardOptions::default()
        },
        SessionConfig::default(),
        7,
        Noise::Clean,
    );
    bare.set_wall_clock(WALL_AT_ZERO);
    bare.advance(2_000);
    bare.play("e4").unwrap();
    bare.advance(3_000);
    assert!(bare.session().view().pgn.contains("1. e4"));
    assert_eq!(tags(&bare), (None, None, None), "no clock");
}
