//! The calendar day a game is dated with, as the PGN `Date` tag writes it (`YYYY.MM.DD`).
//!
//! The core has no calendar: the shell says what day it is (the daemon the UTC day of its wall
//! clock, `eboardctl decode` the day it runs) and the session dates each game that begins with
//! it (`Session::set_date`).

use std::fmt;

/// Milliseconds in a day: Unix time has no leap seconds.
const DAY_MS: u64 = 86_400_000;

/// A proleptic Gregorian calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PgnDate {
    year: i64,
    month: u32,
    day: u32,
}

impl PgnDate {
    /// The UTC day of the Unix time `unix_ms` (milliseconds since 1970-01-01 00:00 UTC).
    pub fn of_unix_ms(unix_ms: u64) -> Self {
        Self::of_unix_days((unix_ms / DAY_MS) as i64)
    }

    /// The day `days` after 1970-01-01.
    fn of_unix_days(days: i64) -> Self {
        // Howard Hinnant's algorithm: shift to eras of 400 years starting on March 1st.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        PgnDate { year, month, day }
    }

    /// A date written `YYYY-MM-DD` (ISO 8601, as the PGN file names and `eboardctl decode`
    /// write it); `None` for anything else, or a day the month does not have.
    pub fn parse_iso(text: &str) -> Option<Self> {
        let mut parts = text.split('-');
        let mut field = |len: usize| {
            parts
                .next()
                .filter(|p| p.len() == len && p.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|p| p.parse::<u32>().ok())
        };
        let (year, month, day) = (field(4)?, field(2)?, field(2)?);
        let date = PgnDate {
            year: i64::from(year),
            month,
            day,
        };
        let valid = parts.next().is_none()
            && (1..=12).contains(&month)
            && (1..=date.days_in_month()).contains(&day);
        valid.then_some(date)
    }

    /// `YYYY-MM-DD`.
    pub fn iso(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    fn days_in_month(&self) -> u32 {
        let leap = self.year % 4 == 0 && (self.year % 100 != 0 || self.year % 400 == 0);
        match self.month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }
}

/// The PGN `Date` tag's value: `YYYY.MM.DD`.
impl fmt::Display for PgnDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}.{:02}.{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_fall_on_their_utc_day() {
        assert_eq!(PgnDate::of_unix_ms(0).iso(), "1970-01-01");
        // 2000-02-29 12:00 UTC: a leap day in a century divisible by 400.
        assert_eq!(PgnDate::of_unix_ms(951_825_600_000).iso(), "2000-02-29");
        // The last millisecond of 2026.
        assert_eq!(
            PgnDate::of_unix_ms(1_798_761_599_999).to_string(),
            "2026.12.31"
        );
        assert_eq!(
            PgnDate::of_unix_ms(1_798_761_600_000).to_string(),
            "2027.01.01"
        );
    }

    #[test]
    fn iso_dates_read_back_and_anything_else_is_refused() {
        let d = PgnDate::parse_iso("2024-02-29").unwrap();
        assert_eq!(
            (d.iso(), d.to_string()),
            ("2024-02-29".into(), "2024.02.29".into())
        );
        for bad in [
            "",
            "2023-02-29",
            "1900-02-29",
            "2024-13-01",
            "2024-00-10",
            "2024-04-31",
            "2024-4-01",
            "2024-04-01-",
            "2024.04.01",
            "+024-04-01",
            "2024-04-1x",
        ] {
            assert_eq!(PgnDate::parse_iso(bad), None, "{bad:?}");
        }
    }
}
