//! The clock tags of the broadcast PGN: `[WhiteClock "h:mm:ss"]`, `[BlackClock "h:mm:ss"]` and
//! `[ReferenceTime "W/2026-12-04T18:52:47.862Z"]`, the clock as it is between moves (lichess
//! reads them when a source sends them, and runs the clock of the side named in
//! `ReferenceTime` from that instant).
//!
//! The tags come from one clock reading, the one last *published*: a viewer extrapolates the
//! running side from it, so the PGN is rewritten only when a reading says something the
//! extrapolation does not — the running side changed (a press, the clock started, stopped or
//! paused), a display reached zero (a flag), a stopped display changed, or a running one
//! differs from the extrapolation by more than [`DRIFT_MS`] (a period's time added, an
//! arbiter's correction, a missed reading). Every other reading leaves the text as it is, so a
//! running clock costs no rewrite of the PGN files, no relay message and no push.
//!
//! The instant is the wall clock (Unix milliseconds) at which the daemon received the reading,
//! which the pure session learns from its shell as an offset to its own monotonic time
//! ([`crate::session::Session::set_wall_clock`]); without it there are no clock tags at all.

use shakmaty::Color;

use crate::vocab::Millis;

/// How far a running display may differ from the extrapolation of the published reading
/// before the reading is published (a whole-second display read about once a second is
/// never more than a second off; a set clock or the next period's time is many).
pub const DRIFT_MS: u64 = 2_000;

/// A press makes its move final a moment later (the press window, `tracker::SCAN_LAG_MS`):
/// the new running side waits for it, so the move and the clock reach the files, the relay
/// and the push in one text rather than two — but never longer than this after the press.
pub const PRESS_WAIT_MS: u64 = 1_000;

/// One clock reading as the tags need it: both times as the clock shows them, whose clock
/// runs (`None`: stopped or paused), and the session time it was read at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReading {
    pub white_ms: u64,
    pub black_ms: u64,
    pub running: Option<Color>,
    pub at: Millis,
}

/// What the three tags say: both times, and — while a clock runs — whose and the reading's
/// wall-clock instant (Unix milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClockTags {
    pub white_ms: u64,
    pub black_ms: u64,
    pub reference: Option<(Color, u64)>,
}

impl ClockTags {
    /// The tag lines, each ending with a newline.
    pub fn lines(&self) -> String {
        let mut out = String::new();
        self.write_lines(&mut out);
        out
    }

    /// [`ClockTags::lines`] written at the end of `out` (no new string per render).
    pub fn write_lines(&self, out: &mut String) {
        out.push_str("[WhiteClock \"");
        write_hms(out, self.white_ms);
        out.push_str("\"]\n[BlackClock \"");
        write_hms(out, self.black_ms);
        out.push_str("\"]\n");
        if let Some((color, unix_ms)) = self.reference {
            out.push_str(match color {
                Color::White => "[ReferenceTime \"W/",
                Color::Black => "[ReferenceTime \"B/",
            });
            write_iso_utc_millis(out, unix_ms);
            out.push_str("\"]\n");
        }
    }
}

/// Which reading the tags show, and when another one takes its place.
#[derive(Debug, Clone, Default)]
pub struct ClockTagger {
    published: Option<(ClockReading, ClockTags)>,
}

impl ClockTagger {
    /// The clock as it is now (`None`: no clock, or none heard since the link came up) and the
    /// wall clock's offset to session time (`None`: unknown). Returns the tags to write.
    ///
    /// `move_pending`: a move is not final yet; a press waits for it (see
    /// [`PRESS_WAIT_MS`]) at session time `now`.
    pub fn observe(
        &mut self,
        reading: Option<ClockReading>,
        wall_offset_ms: Option<i64>,
        move_pending: bool,
        now: Millis,
    ) -> Option<ClockTags> {
        let (Some(reading), Some(offset)) = (reading, wall_offset_ms) else {
            self.published = None;
            return None;
        };
        let publish = match &self.published {
            None => true,
            Some((old, _)) if old.running != reading.running && move_pending => {
                now >= reading.at.saturating_add(PRESS_WAIT_MS)
            }
            Some((old, _)) => noticeable(old, &reading),
        };
        if publish {
            let unix_ms = u64::try_from(i128::from(reading.at) + i128::from(offset)).unwrap_or(0);
            let tags = ClockTags {
                white_ms: reading.white_ms,
                black_ms: reading.black_ms,
                reference: reading.running.map(|c| (c, unix_ms)),
            };
            self.published = Some((reading, tags));
        }
        self.published.map(|(_, tags)| tags)
    }

    /// The tags last published.
    pub fn tags(&self) -> Option<ClockTags> {
        self.published.map(|(_, tags)| tags)
    }
}

/// Does `new` tell a viewer who extrapolates from `old` something he would notice?
pub fn noticeable(old: &ClockReading, new: &ClockReading) -> bool {
    if old.running != new.running {
        return true;
    }
    let elapsed = new.at.saturating_sub(old.at);
    [Color::White, Color::Black].into_iter().any(|c| {
        let (was, is) = match c {
            Color::White => (old.white_ms, new.white_ms),
            Color::Black => (old.black_ms, new.black_ms),
        };
        if is == 0 && was != 0 {
            // A flag: the time is up now, whatever the extrapolation says.
            return true;
        }
        if old.running == Some(c) {
            was.saturating_sub(elapsed).abs_diff(is) > DRIFT_MS
        } else {
            // A display that stands still: any change of a whole second is a change.
            was / 1000 != is / 1000
        }
    })
}

/// The three tags read back from a game's tags (`tag` gives a tag's value by name), as
/// lichess reads them: the times as seconds, `m:ss` or `h:mm:ss`; the reference as `W/` or
/// `B/` and an ISO 8601 UTC instant. `None` without both times; a reference that does not
/// read is left out (the clock is then taken as stopped).
pub fn read_tags<'a>(tag: impl Fn(&str) -> Option<&'a str>) -> Option<ClockTags> {
    let white_ms = parse_clock_ms(tag("WhiteClock")?)?;
    let black_ms = parse_clock_ms(tag("BlackClock")?)?;
    let reference = tag("ReferenceTime").and_then(|v| {
        let (side, instant) = v.split_once('/')?;
        let color = match side {
            "W" => Color::White,
            "B" => Color::Black,
            _ => return None,
        };
        Some((color, parse_iso_utc_millis(instant)?))
    });
    Some(ClockTags {
        white_ms,
        black_ms,
        reference,
    })
}

/// Seconds, `m:ss` or `h:mm:ss` as milliseconds.
pub fn parse_clock_ms(v: &str) -> Option<u64> {
    let mut parts = [0u64; 3];
    let mut n = 0;
    for p in v.split(':') {
        if n == 3 || p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 9 {
            return None;
        }
        parts[n] = p.parse().ok()?;
        n += 1;
    }
    let secs = match &parts[..n] {
        [s] => *s,
        [m, s] if *s < 60 => m * 60 + s,
        [h, m, s] if *m < 60 && *s < 60 => h * 3600 + m * 60 + s,
        _ => return None,
    };
    Some(secs * 1000)
}

/// `YYYY-MM-DDTHH:MM:SS[.mmm]Z` (UTC, on or after 1970) as Unix milliseconds.
pub fn parse_iso_utc_millis(v: &str) -> Option<u64> {
    let v = v.strip_suffix('Z')?;
    let (date, time) = v.split_once('T')?;
    let num = |p: &str| -> Option<u64> {
        (!p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse().ok())
            .flatten()
    };
    let mut d = date.split('-').map(num);
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    if d.next().is_some() || !(1970..=9999).contains(&y) || !(1..=12).contains(&m) {
        return None;
    }
    if !(1..=31).contains(&day) {
        return None;
    }
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.split(':').map(num);
    let (h, mi, s) = (t.next()??, t.next()??, t.next()??);
    if t.next().is_some() || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let millis = if frac.is_empty() {
        0
    } else {
        if !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        format!("{frac:0<3}")[..3].parse().ok()?
    };
    let days = days_from_civil(y, m, day);
    Some(((days * 86_400 + h * 3600 + mi * 60 + s) * 1000) + millis)
}

/// Days since 1970-01-01 of a date on or after it (H. Hinnant's algorithm).
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `h:mm:ss` of a time in milliseconds (whole seconds, as the clock shows them).
pub fn hms(ms: u64) -> String {
    let mut out = String::new();
    write_hms(&mut out, ms);
    out
}

/// [`hms`] written at the end of `out`.
fn write_hms(out: &mut String, ms: u64) {
    use std::fmt::Write as _;
    let s = ms / 1000;
    let _ = write!(out, "{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

/// An instant (Unix milliseconds) as ISO 8601 in UTC with milliseconds:
/// `2026-12-04T18:52:47.862Z`.
pub fn iso_utc_millis(unix_ms: u64) -> String {
    let mut out = String::new();
    write_iso_utc_millis(&mut out, unix_ms);
    out
}

/// [`iso_utc_millis`] written at the end of `out`.
fn write_iso_utc_millis(out: &mut String, unix_ms: u64) {
    use std::fmt::Write as _;
    let secs = unix_ms / 1000;
    let (y, m, d) = civil_from_days(secs / 86_400);
    let t = secs % 86_400;
    let _ = write!(
        out,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        t / 3600,
        (t / 60) % 60,
        t % 60,
        unix_ms % 1000
    );
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm,
/// for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(white_ms: u64, black_ms: u64, running: Option<Color>, at: Millis) -> ClockReading {
        ClockReading {
            white_ms,
            black_ms,
            running,
            at,
        }
    }

    #[test]
    fn instants_and_times_read_as_lichess_writes_them() {
        assert_eq!(iso_utc_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_utc_millis(1_734_630_767_862),
            "2024-12-19T17:52:47.862Z"
        );
        assert_eq!(iso_utc_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            iso_utc_millis(1_798_761_599_999),
            "2026-12-31T23:59:59.999Z"
        );
        assert_eq!(hms(2_031_000), "0:33:51");
        assert_eq!(hms(5_034_999), "1:23:54");
        let tags = ClockTags {
            white_ms: 2_031_000,
            black_ms: 5_034_000,
            reference: Some((Color::Black, 1_734_630_767_862)),
        };
        assert_eq!(
            tags.lines(),
            "[WhiteClock \"0:33:51\"]\n[BlackClock \"1:23:54\"]\n\
             [ReferenceTime \"B/2024-12-19T17:52:47.862Z\"]\n"
        );
        let stopped = ClockTags {
            reference: None,
            ..tags
        };
        assert!(!stopped.lines().contains("ReferenceTime"));
    }

    #[test]
    fn a_running_clock_is_published_once_and_then_only_when_a_viewer_would_notice() {
        let mut t = ClockTagger::default();
        let white = Some(Color::White);
        let first = t.observe(Some(r(60_000, 60_000, white, 1_000)), Some(5_000), false, 0);
        assert_eq!(first.unwrap().reference, Some((Color::White, 6_000)));
        // Ticks down as extrapolated: nothing new.
        for k in 1..30 {
            let reading = r(60_000 - k * 1_000, 60_000, white, 1_000 + k * 1_000 + 300);
            assert_eq!(
                t.observe(Some(reading), Some(5_000), false, 0),
                first,
                "second {k}"
            );
        }
        // The arbiter adds two minutes to Black while White's clock runs: at once.
        let added = t.observe(
            Some(r(30_000, 180_000, white, 31_000)),
            Some(5_000),
            false,
            0,
        );
        assert_eq!(added.unwrap().black_ms, 180_000);
        // The next period's time on White's display: a jump, at once.
        let period = t.observe(
            Some(r(1_830_000, 180_000, white, 32_000)),
            Some(5_000),
            false,
            0,
        );
        assert_eq!(period.unwrap().white_ms, 1_830_000);
        assert_eq!(period.unwrap().reference, Some((Color::White, 37_000)));
        // Paused: two times, no reference.
        let paused = t.observe(
            Some(r(1_829_000, 180_000, None, 33_000)),
            Some(5_000),
            false,
            0,
        );
        assert_eq!(paused.unwrap().reference, None);
        // A press whose move is not final yet waits for it, up to a second.
        let black = Some(Color::Black);
        let press = r(1_829_000, 180_000, black, 40_000);
        assert_eq!(t.observe(Some(press), Some(5_000), true, 40_200), paused);
        let pressed = t.observe(Some(press), Some(5_000), false, 40_250);
        assert_eq!(pressed.unwrap().reference, Some((Color::Black, 45_000)));
        let again = r(1_829_000, 180_000, None, 41_000);
        assert_eq!(t.observe(Some(again), Some(5_000), true, 41_000), pressed);
        let late = t.observe(Some(again), Some(5_000), true, 42_000);
        assert_eq!(late.unwrap().reference, None);
        // No clock, or no wall clock: no tags.
        assert_eq!(t.observe(None, Some(5_000), false, 0), None);
        assert_eq!(t.observe(Some(r(1, 1, None, 1)), None, false, 0), None);
    }

    #[test]
    fn the_tags_read_back_as_lichess_reads_them() {
        for unix_ms in [0, 951_782_400_123, 1_734_630_767_862, 1_798_761_599_999] {
            assert_eq!(
                parse_iso_utc_millis(&iso_utc_millis(unix_ms)),
                Some(unix_ms)
            );
        }
        assert_eq!(
            parse_iso_utc_millis("2024-12-19T17:52:47Z"),
            Some(1_734_630_767_000)
        );
        for bad in [
            "",
            "2024-12-19T17:52:47",
            "2024-13-01T00:00:00Z",
            "x-1-1T0:0:0Z",
        ] {
            assert_eq!(parse_iso_utc_millis(bad), None, "{bad}");
        }
        assert_eq!(parse_clock_ms("95"), Some(95_000));
        assert_eq!(parse_clock_ms("1:35"), Some(95_000));
        assert_eq!(parse_clock_ms("01:23:54"), Some(5_034_000));
        for bad in ["", "1:60", "a", "1:2:3:4", "-5"] {
            assert_eq!(parse_clock_ms(bad), None, "{bad}");
        }
        let tags = ClockTags {
            white_ms: 2_031_000,
            black_ms: 5_034_000,
            reference: Some((Color::White, 1_734_630_767_862)),
        };
        let text = tags.lines();
        let read = read_tags(|name| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("[{name} \""))?.strip_suffix("\"]"))
        });
        assert_eq!(read, Some(tags));
    }

    #[test]
    fn a_flag_and_a_missed_reading_are_published() {
        let black = Some(Color::Black);
        let old = r(10_000, 3_000, black, 0);
        assert!(noticeable(&old, &r(10_000, 0, black, 2_500)));
        assert!(!noticeable(&old, &r(10_000, 1_000, black, 2_100)));
        assert!(noticeable(&old, &r(10_000, 3_000, black, 5_100)));
        assert!(noticeable(&old, &r(10_000, 3_000, Some(Color::White), 100)));
        let stopped = r(10_000, 3_000, None, 0);
        assert!(!noticeable(&stopped, &r(10_400, 3_000, None, 9_000)));
        assert!(noticeable(&stopped, &r(11_000, 3_000, None, 9_000)));
    }
}
