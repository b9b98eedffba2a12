//! `eboardctl pairings FILE [--round N]`: the tags of every board of a round from one
//! pairings file (contract section 7), set in one go.
//!
//! Two formats are read: a FIDE TRF-16 file (what Swiss-Manager, JaVaFo and vega export) and
//! a CSV/TSV table with a header line. Parsing is pure ([`parse`]) and checks the whole file
//! before anything is sent: one bad line, or a table number no board has, and no board is
//! touched (the error names the line). Names go through as UTF-8, unchanged.
//!
//! TRF-16 has no board numbers: the boards of a round are numbered the way Swiss pairing
//! programs list them — by the higher score of the pair before the round, then the pair's
//! total score, then the better (lower) starting rank in the pair. Byes and unpaired
//! players get no board.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::cli::client::Client;
use crate::client::error::CtlError;
use eboard_core::game::{TagValueFault, tag_value_fault};

/// `eboardctl pairings` arguments.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct PairingsArgs {
    /// A FIDE TRF-16 file, or a CSV/TSV file with a header line (board, white, black, and
    /// optionally round, event, white_elo, black_elo, white_fide_id, black_fide_id, date).
    pub file: PathBuf,
    /// The round to take (default: the last one paired in the file).
    #[arg(long)]
    pub round: Option<u32>,
}

/// One board's game of the round: its table number and the tags to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    /// The line of the file it came from (1-based; for TRF, the White player's line).
    pub line: usize,
    /// Table number (`number` in the daemon's configuration).
    pub board: u32,
    /// PGN tags, `Round` as `<round>.<board>`.
    pub tags: Vec<(String, String)>,
}

/// A pairings file that cannot be used; nothing was set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingsError {
    /// A line of the file is at fault.
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    /// The file as a whole (empty, no round, unreadable).
    #[error("{0}")]
    File(String),
}

fn at(line: usize, message: impl Into<String>) -> PairingsError {
    PairingsError::Line {
        line,
        message: message.into(),
    }
}

/// Parses a pairings file (TRF-16 or CSV/TSV) and returns the round's pairings in board order.
pub fn parse(text: &str, round: Option<u32>) -> Result<Vec<Pairing>, PairingsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if round == Some(0) {
        return Err(PairingsError::File("rounds count from 1".into()));
    }
    let pairings = if is_trf(text) {
        parse_trf(text, round)?
    } else {
        parse_table(text, round)?
    };
    if pairings.is_empty() {
        return Err(PairingsError::File(
            "the file pairs no board for that round".into(),
        ));
    }
    for p in &pairings {
        for (name, value) in &p.tags {
            match tag_value_fault(value) {
                Some(TagValueFault::Quote) => {
                    return Err(at(
                        p.line,
                        format!("{name} {value:?} contains a double quote, which PGN cannot hold"),
                    ));
                }
                Some(fault) => return Err(at(p.line, format!("{name} {}", fault.describe()))),
                None => {}
            }
        }
    }
    Ok(pairings)
}

/// A TRF file is made of lines that start with a three-digit data identification number.
fn is_trf(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("001 ") || l == "001")
}

// ----- TRF-16 ---------------------------------------------------------------------------

/// One round of a TRF player line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TrfRound {
    opponent: u32,
    colour: char,
    result: char,
}

#[derive(Debug, Clone)]
struct TrfPlayer {
    line: usize,
    name: String,
    elo: String,
    fide_id: String,
    rounds: Vec<TrfRound>,
}

/// Characters `from..to` (0-based, end exclusive) of a line, trimmed; columns of TRF are
/// characters, so a name with letters outside ASCII keeps the columns after it in place.
fn cols(chars: &[char], from: usize, to: usize) -> String {
    chars
        .get(from.min(chars.len())..to.min(chars.len()))
        .map(|c| c.iter().collect::<String>())
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Where round `r` (1-based) starts on a player line: columns 92-95 opponent, 97 colour,
/// 99 result for round 1, then every 10 columns.
fn round_col(r: usize) -> usize {
    91 + 10 * (r - 1)
}

/// Points a TRF result code scores (TRF-16: 1 = W + F U win, = D H draw, 0 - L Z loss).
fn points(result: char) -> f64 {
    match result {
        '1' | '+' | 'W' | 'F' | 'U' => 1.0,
        '=' | 'D' | 'H' => 0.5,
        _ => 0.0,
    }
}

fn parse_trf(text: &str, round: Option<u32>) -> Result<Vec<Pairing>, PairingsError> {
    let mut players: BTreeMap<u32, TrfPlayer> = BTreeMap::new();
    let mut event = String::new();
    let mut dates: Vec<String> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim_end_matches('\r');
        let chars: Vec<char> = raw.chars().collect();
        match raw.get(..3) {
            Some("012") => event = cols(&chars, 4, chars.len()),
            Some("132") => {
                let mut r = 1;
                while round_col(r) < chars.len() {
                    dates.push(cols(&chars, round_col(r), round_col(r) + 8));
                    r += 1;
                }
            }
            Some("001") => {
                let (rank, player) = trf_player(&chars, line)?;
                if let Some(other) = players.get(&rank) {
                    return Err(at(
                        line,
                        format!(
                            "starting rank {rank} is already the player on line {}",
                            other.line
                        ),
                    ));
                }
                players.insert(rank, player);
            }
            _ => {}
        }
    }
    if players.is_empty() {
        return Err(PairingsError::File(
            "the TRF file has no player (001) line".into(),
        ));
    }
    let paired = |r: usize| {
        players.values().any(|p| {
            p.rounds
                .get(r - 1)
                .is_some_and(|x| x.opponent > 0 && matches!(x.colour, 'w' | 'b'))
        })
    };
    let most = players.values().map(|p| p.rounds.len()).max().unwrap_or(0);
    let r = match round {
        Some(r) => {
            let r = r as usize;
            if r > most || !paired(r) {
                return Err(PairingsError::File(format!(
                    "round {r} is not paired in this file (rounds paired: {})",
                    (1..=most)
                        .filter(|&r| paired(r))
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            r
        }
        None => (1..=most)
            .rev()
            .find(|&r| paired(r))
            .ok_or_else(|| PairingsError::File("the TRF file pairs no round yet".into()))?,
    };
    let score =
        |p: &TrfPlayer| -> f64 { p.rounds.iter().take(r - 1).map(|x| points(x.result)).sum() };

    struct Game<'a> {
        white: (u32, &'a TrfPlayer),
        black: (u32, &'a TrfPlayer),
    }
    let mut games: Vec<Game<'_>> = Vec::new();
    for (&rank, p) in &players {
        let Some(x) = p.rounds.get(r - 1) else {
            continue;
        };
        if x.opponent == 0 || !matches!(x.colour, 'w' | 'b') {
            continue;
        }
        let Some(opp) = players.get(&x.opponent) else {
            return Err(at(
                p.line,
                format!(
                    "round {r}: opponent {} is not a player of this file",
                    x.opponent
                ),
            ));
        };
        let back = opp.rounds.get(r - 1);
        let expected = if x.colour == 'w' { 'b' } else { 'w' };
        if back.is_none_or(|b| b.opponent != rank || b.colour != expected) {
            return Err(at(
                p.line,
                format!(
                    "round {r}: {} plays {} with {} but line {} does not say so",
                    p.name,
                    opp.name,
                    if x.colour == 'w' { "white" } else { "black" },
                    opp.line
                ),
            ));
        }
        if x.colour == 'w' {
            games.push(Game {
                white: (rank, p),
                black: (x.opponent, opp),
            });
        }
    }
    // Swiss board order: the higher score in the pair, the pair's total, the better rank.
    games.sort_by(|a, b| {
        let key = |g: &Game<'_>| {
            let (sw, sb) = (score(g.white.1), score(g.black.1));
            (sw.max(sb), sw + sb, g.white.0.min(g.black.0))
        };
        let (ka, kb) = (key(a), key(b));
        kb.0.total_cmp(&ka.0)
            .then(kb.1.total_cmp(&ka.1))
            .then(ka.2.cmp(&kb.2))
    });
    let date = dates.get(r - 1).and_then(|d| trf_date(d));
    Ok(games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let board = i as u32 + 1;
            let mut tags = vec![
                ("White".to_string(), g.white.1.name.clone()),
                ("Black".to_string(), g.black.1.name.clone()),
            ];
            push_if(&mut tags, "WhiteElo", &g.white.1.elo);
            push_if(&mut tags, "BlackElo", &g.black.1.elo);
            push_if(&mut tags, "WhiteFideId", &g.white.1.fide_id);
            push_if(&mut tags, "BlackFideId", &g.black.1.fide_id);
            push_if(&mut tags, "Event", &event);
            if let Some(d) = &date {
                tags.push(("Date".into(), d.clone()));
            }
            tags.push(("Round".into(), format!("{r}.{board}")));
            Pairing {
                line: g.white.1.line,
                board,
                tags,
            }
        })
        .collect())
}

/// Adds a tag unless its value is empty or a zero (TRF writes 0 for "no rating").
fn push_if(tags: &mut Vec<(String, String)>, name: &str, value: &str) {
    if !value.is_empty() && value.bytes().any(|b| b != b'0') {
        tags.push((name.to_string(), value.to_string()));
    }
}

/// One `001` line: starting rank, name, rating, FIDE id and the rounds.
fn trf_player(chars: &[char], line: usize) -> Result<(u32, TrfPlayer), PairingsError> {
    let rank_text = cols(chars, 4, 8);
    let rank: u32 = rank_text.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
        at(
            line,
            format!("starting rank {rank_text:?} (columns 5-8) is not a number"),
        )
    })?;
    let name = cols(chars, 14, 47);
    if name.is_empty() {
        return Err(at(line, "the player has no name (columns 15-47)"));
    }
    let elo = cols(chars, 48, 52);
    if !elo.bytes().all(|b| b.is_ascii_digit()) {
        return Err(at(
            line,
            format!("rating {elo:?} (columns 49-52) is not a number"),
        ));
    }
    let fide_id = cols(chars, 57, 68);
    if !fide_id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(at(
            line,
            format!("FIDE id {fide_id:?} (columns 58-68) is not a number"),
        ));
    }
    let mut rounds = Vec::new();
    let mut r = 1;
    while round_col(r) < chars.len() {
        let c = round_col(r);
        let opp = cols(chars, c, c + 4);
        let colour = chars.get(c + 5).copied().unwrap_or(' ');
        let result = chars.get(c + 7).copied().unwrap_or(' ');
        let opponent = if opp.is_empty() {
            0
        } else {
            opp.parse().map_err(|_| {
                at(
                    line,
                    format!(
                        "round {r}: opponent {opp:?} (columns {}-{}) is not a starting rank",
                        c + 1,
                        c + 4
                    ),
                )
            })?
        };
        if !matches!(colour, 'w' | 'b' | '-' | ' ') {
            return Err(at(
                line,
                format!(
                    "round {r}: colour {colour:?} (column {}) is not w, b or -",
                    c + 6
                ),
            ));
        }
        if !"+-WDL1=0HFUZ ".contains(result) {
            return Err(at(
                line,
                format!(
                    "round {r}: result {result:?} (column {}) is not a TRF result code",
                    c + 8
                ),
            ));
        }
        rounds.push(TrfRound {
            opponent,
            colour,
            result,
        });
        r += 1;
    }
    Ok((
        rank,
        TrfPlayer {
            line,
            name,
            elo,
            fide_id,
            rounds,
        },
    ))
}

/// A TRF round date `YY/MM/DD` (or `YYYY/MM/DD`) as a PGN date `YYYY.MM.DD`.
fn trf_date(d: &str) -> Option<String> {
    let parts: Vec<&str> = d.split(['/', '.', '-']).collect();
    let [y, m, dd] = parts.as_slice() else {
        return None;
    };
    let all_digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let year = if all_digits(y, 4) {
        y.to_string()
    } else if all_digits(y, 2) {
        format!("20{y}")
    } else {
        return None;
    };
    (all_digits(m, 2) && all_digits(dd, 2)).then(|| format!("{year}.{m}.{dd}"))
}

// ----- CSV / TSV ------------------------------------------------------------------------

const COLUMNS: [&str; 10] = [
    "board",
    "white",
    "black",
    "round",
    "event",
    "white_elo",
    "black_elo",
    "white_fide_id",
    "black_fide_id",
    "date",
];

fn parse_table(text: &str, round: Option<u32>) -> Result<Vec<Pairing>, PairingsError> {
    let header = text.lines().next().unwrap_or("");
    // The header says which separator the file uses.
    let delimiter = if header.contains('\t') {
        b'\t'
    } else if header.contains(';') && !header.contains(',') {
        b';'
    } else {
        b','
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| at(1, format!("cannot read the header line: {e}")))?
        .clone();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, h) in headers.iter().enumerate() {
        let h = h.to_ascii_lowercase();
        let Some(known) = COLUMNS.iter().find(|c| **c == h) else {
            return Err(at(
                1,
                format!(
                    "unknown column {h:?} in the header; the columns are {}",
                    COLUMNS.join(", ")
                ),
            ));
        };
        if index.insert(known, i).is_some() {
            return Err(at(1, format!("column {h:?} appears twice in the header")));
        }
    }
    for needed in ["board", "white", "black"] {
        if !index.contains_key(needed) {
            return Err(at(
                1,
                format!(
                    "the header has no {needed:?} column (a pairings table needs board, white \
                     and black; this is neither a TRF-16 file)"
                ),
            ));
        }
    }
    if !index.contains_key("round") && round.is_none() {
        return Err(PairingsError::File(
            "the file has no `round` column: give the round with --round N".into(),
        ));
    }

    struct Row {
        line: usize,
        round: u32,
        board: u32,
        fields: HashMap<&'static str, String>,
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            at(line, format!("{e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        if record.iter().all(str::is_empty) {
            continue;
        }
        let mut fields: HashMap<&'static str, String> = HashMap::new();
        for c in COLUMNS {
            if let Some(&i) = index.get(c) {
                fields.insert(c, record.get(i).unwrap_or("").to_string());
            }
        }
        let number = |name: &str| -> Result<u32, PairingsError> {
            let v = &fields[name];
            v.parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| at(line, format!("{name} {v:?} is not a number from 1 up")))
        };
        let board = number("board")?;
        let row_round = match fields.get("round") {
            Some(_) => number("round")?,
            None => round.unwrap_or(0),
        };
        for side in ["white", "black"] {
            if fields[side].is_empty() {
                return Err(at(line, format!("board {board} has no {side} player")));
            }
        }
        for c in ["white_elo", "black_elo", "white_fide_id", "black_fide_id"] {
            if let Some(v) = fields.get(c)
                && !v.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(at(line, format!("{c} {v:?} is not a number")));
            }
        }
        if let Some(d) = fields.get_mut("date")
            && !d.is_empty()
        {
            *d = pgn_date(d).ok_or_else(|| {
                at(
                    line,
                    format!("date {d:?} is not a date like 2026-12-01 or 2026.12.01"),
                )
            })?;
        }
        rows.push(Row {
            line,
            round: row_round,
            board,
            fields,
        });
    }
    let r =
        match round {
            Some(r) => r,
            None => rows.iter().map(|x| x.round).max().ok_or_else(|| {
                PairingsError::File("the file has a header but no pairings".into())
            })?,
        };
    let mut seen: HashMap<u32, usize> = HashMap::new();
    let mut out = Vec::new();
    for row in rows.into_iter().filter(|x| x.round == r) {
        if let Some(first) = seen.insert(row.board, row.line) {
            return Err(at(
                row.line,
                format!(
                    "board {} of round {r} is already paired on line {first}",
                    row.board
                ),
            ));
        }
        let f = &row.fields;
        let get = |c: &str| f.get(c).cloned().unwrap_or_default();
        let mut tags = vec![
            ("White".to_string(), get("white")),
            ("Black".to_string(), get("black")),
        ];
        push_if(&mut tags, "WhiteElo", &get("white_elo"));
        push_if(&mut tags, "BlackElo", &get("black_elo"));
        push_if(&mut tags, "WhiteFideId", &get("white_fide_id"));
        push_if(&mut tags, "BlackFideId", &get("black_fide_id"));
        push_if(&mut tags, "Event", &get("event"));
        push_if(&mut tags, "Date", &get("date"));
        tags.push(("Round".into(), format!("{r}.{}", row.board)));
        out.push(Pairing {
            line: row.line,
            board: row.board,
            tags,
        });
    }
    if out.is_empty() {
        return Err(PairingsError::File(format!(
            "the file pairs no board in round {r}"
        )));
    }
    out.sort_by_key(|p| p.board);
    Ok(out)
}

/// `YYYY-MM-DD`, `YYYY.MM.DD` or `YYYY/MM/DD` as a PGN date.
fn pgn_date(d: &str) -> Option<String> {
    let parts: Vec<&str> = d.split(['-', '.', '/']).collect();
    let [y, m, dd] = parts.as_slice() else {
        return None;
    };
    let ok = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    (ok(y, 4) && ok(m, 2) && ok(dd, 2)).then(|| format!("{y}.{m}.{dd}"))
}

// ----- on the bus -----------------------------------------------------------------------

/// Reads the file, checks every line and every table number, then sets each board's tags.
pub async fn run(client: &Client, args: &PairingsArgs) -> Result<(), CtlError> {
    let pairings = read(&args.file, args.round)?;
    let boards = client.boards().await?;
    let by_number: HashMap<u32, &crate::cli::client::BoardEntry> = boards
        .iter()
        .filter(|b| b.props.number > 0)
        .map(|b| (b.props.number, b))
        .collect();
    for p in &pairings {
        if !by_number.contains_key(&p.board) {
            let mut known: Vec<u32> = by_number.keys().copied().collect();
            known.sort();
            let known = if known.is_empty() {
                "no board has a number (set `number` in the daemon's configuration)".to_string()
            } else {
                format!(
                    "the numbered boards are {}",
                    known
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(CtlError::Usage(format!(
                "{}: line {}: no board has table number {}; {known}; nothing was set",
                args.file.display(),
                p.line,
                p.board
            )));
        }
    }
    let mut done: HashSet<u32> = HashSet::new();
    for p in &pairings {
        let board = by_number[&p.board];
        let proxy = client.board_proxy(&board.path).await?;
        let map: HashMap<&str, &str> = p
            .tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if let Err(e) = proxy.set_tags(map).await {
            let e = CtlError::from_call(e, &client.bus);
            let mut set: Vec<u32> = done.into_iter().collect();
            set.sort();
            return Err(CtlError::Other(format!(
                "board {} refused its tags ({e}); boards already set: {set:?}",
                p.board
            )));
        }
        done.insert(p.board);
        let tags: Vec<String> = p.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        crate::cli::print_text(&format!(
            "{} (table {}): {}",
            board.props.name,
            p.board,
            tags.join(" ")
        ))?;
    }
    Ok(())
}

/// The largest pairings file read: a TRF of a 2,000-player open over 15 rounds is well under
/// a megabyte, and nothing bigger is read into memory.
pub const PAIRINGS_FILE_MAX: u64 = crate::bounded_read::PAIRINGS.max;

/// The file's pairings, or a usage error naming the file and line.
pub fn read(path: &Path, round: Option<u32>) -> Result<Vec<Pairing>, CtlError> {
    let text = crate::bounded_read::read_text(path, crate::bounded_read::PAIRINGS)
        .map_err(|e| CtlError::Usage(format!("{}: {e}; nothing was set", path.display())))?;
    parse(&text, round)
        .map_err(|e| CtlError::Usage(format!("{}: {e}; nothing was set", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TRF-16 player line with rounds given as (opponent, colour, result).
    pub fn trf_line(
        rank: u32,
        name: &str,
        elo: u32,
        id: &str,
        rounds: &[(u32, char, char)],
    ) -> String {
        let mut s = format!(
            "001 {rank:>4} m    {name:<33} {elo:>4} NOR {id:>11} 1990/01/01  0.0 {rank:>4}"
        );
        for (opp, colour, result) in rounds {
            let opp = if *opp == 0 {
                "    ".to_string()
            } else {
                format!("{opp:>4}")
            };
            s.push_str(&format!("  {opp} {colour} {result}"));
        }
        s
    }

    fn tags(p: &Pairing) -> HashMap<&str, &str> {
        p.tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// The shared TRF-16 fixture (also read by `tests/ctl_pairings.rs`).
    fn trf() -> String {
        include_str!("../../tests/fixtures/pairings/hall-open.trf").to_owned()
    }

    #[test]
    fn trf_rounds_in_swiss_board_order() {
        let p = parse(&trf(), None).unwrap();
        // Round 2 (the last paired). Scores after round 1: 1 → 1, 2 → ½, 3 → 0, 4 → 0,
        // 5 → ½, 6 → 1. Pairs: 2-1 (max 1, sum 1.5), 6-4 (max 1, sum 1), 3-5 (max ½).
        let boards: Vec<_> = p
            .iter()
            .map(|p| (p.board, tags(p)["White"].to_string()))
            .collect();
        assert_eq!(
            boards,
            [
                (1, "François Dupont".to_string()),
                (2, "Poe, Edgar".to_string()),
                (3, "Šarūnas Šulskis".to_string())
            ]
        );
        let t = tags(&p[0]);
        assert_eq!(t["Black"], "Øystein Hansen");
        assert_eq!(t["WhiteElo"], "2300");
        assert_eq!(t["BlackFideId"], "1503014");
        assert_eq!(t["Round"], "2.1");
        assert_eq!(t["Event"], "Hall Open 2026");
        assert_eq!(t["Date"], "2026.12.02");
        let t = tags(&p[1]);
        assert_eq!(t["Black"], "Doe, Jane");
        assert!(
            !t.contains_key("BlackElo") && !t.contains_key("BlackFideId"),
            "{t:?}"
        );
        let r1 = parse(&trf(), Some(1)).unwrap();
        assert_eq!(tags(&r1[0])["Round"], "1.1");
        assert_eq!(tags(&r1[0])["Date"], "2026.12.01");
        assert_eq!(r1.len(), 3);
    }

    #[test]
    fn trf_faults_name_the_line() {
        let mut lines: Vec<String> = trf().lines().map(str::to_string).collect();
        lines[4] = lines[4].replacen("2500", "25x0", 1);
        assert!(matches!(
            parse(&lines.join("\n"), None),
            Err(PairingsError::Line { line: 5, .. })
        ));
        let mut lines: Vec<String> = trf().lines().map(str::to_string).collect();
        // Player 5 says he is White against 3 in round 2, as 3 does.
        lines[6] = trf_line(5, "Roe, Richard", 1900, "", &[(2, 'w', '='), (3, 'w', ' ')]);
        let e = parse(&lines.join("\n"), None).unwrap_err();
        assert!(matches!(e, PairingsError::Line { line: 5, .. }), "{e}");
        let e = parse(&trf(), Some(3)).unwrap_err();
        assert!(e.to_string().contains("round 3 is not paired"), "{e}");
    }

    #[test]
    fn csv_and_tsv_tables() {
        let csv = "board,white,black,round,white_elo,black_elo,event,date\n\
                   1,Øystein Hansen,\"Dupont, François\",3,2410,2300,Hall Open,2026-12-01\n\
                   2,Šarūnas Šulskis,Doe,3,2500,,Hall Open,2026-12-01\n\
                   1,Old,Pairing,2,,,,\n";
        let p = parse(csv, None).unwrap();
        assert_eq!(p.len(), 2);
        let t = tags(&p[0]);
        assert_eq!(t["Black"], "Dupont, François");
        assert_eq!(t["Round"], "3.1");
        assert_eq!(t["Date"], "2026.12.01");
        assert!(!tags(&p[1]).contains_key("BlackElo"));
        let old = parse(csv, Some(2)).unwrap();
        assert_eq!(tags(&old[0])["White"], "Old");
        let tsv = "Board\tWhite\tBlack\n7\tA B\tC D\n";
        assert!(
            matches!(parse(tsv, None), Err(PairingsError::File(_))),
            "no round"
        );
        let p = parse(tsv, Some(4)).unwrap();
        assert_eq!(tags(&p[0])["Round"], "4.7");
        assert_eq!(tags(&p[0])["White"], "A B");
    }

    #[test]
    fn csv_faults_name_the_line() {
        let line_of = |text: &str| match parse(text, Some(1)) {
            Err(PairingsError::Line { line, message }) => (line, message),
            other => panic!("{other:?}"),
        };
        assert_eq!(line_of("board,white,black\n1,a,b\nx,c,d\n").0, 3);
        assert_eq!(line_of("board,white,black\n1,a,b\n2,c,\n").0, 3);
        assert_eq!(line_of("board,white,black\n1,a,b\n1,c,d\n").0, 3);
        assert_eq!(line_of("board,white,black\n1,a,b\n2,c,d,e\n").0, 3);
        assert_eq!(line_of("board,white,black,colour\n").0, 1);
        assert_eq!(line_of("board,white\n1,a\n").0, 1);
        assert_eq!(line_of("board,white,black\n1,\"a \"\"b\"\"\",c\n").0, 2);
        assert_eq!(line_of("board,white,black,date\n1,a,b,1.12.2026\n").0, 2);
    }
}
