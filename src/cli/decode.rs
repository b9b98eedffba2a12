//! `eboardctl decode CAPTURE [--events]`: a recorded serial stream, read offline through the
//! decoder and the move tracker, printed as PGN or as the list of tracker events.
//!
//! Captures in the shared base64-lines format carry no timestamps; their time is then
//! synthesised from the stream itself (a clock reports about once a second while it runs:
//! one second per clock reading, one millisecond per other message), which is all the
//! tracker needs to let placements settle. eboardd's own `--record` files carry real times.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use shakmaty::{Chess, Color};

use crate::capture::{self, Chunk};
use crate::protocol::{Decoder, Message};
use crate::tracker::{Tracker, TrackerEvent};
use crate::vocab::{Millis, OrientationSetting};

/// Arguments of `eboardctl decode`.
#[derive(Debug, Clone, clap::Args)]
pub struct DecodeArgs {
    /// Capture file: base64 lines (one serial read each), or an eboardd `--record` file.
    pub capture: PathBuf,
    /// List every tracker event with its position in the stream instead of printing PGN.
    #[arg(long)]
    pub events: bool,
}

/// Where in the capture a message was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPos {
    /// 1-based index of the read (capture line with data) where the message starts.
    pub chunk: usize,
    /// Offset of the message's first byte in the whole stream.
    pub byte: u64,
    /// The recording's time offset of the read that completed the message, when recorded.
    pub at_ms: Option<u64>,
    /// The time the tracker was given.
    pub now: Millis,
}

/// One tracker event and where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub pos: StreamPos,
    pub event: TrackerEvent,
}

/// One game as reconstructed: SAN moves from the standard start position.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameRecord {
    pub san: Vec<String>,
    pub uci: Vec<String>,
}

/// Everything a capture yields.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    pub events: Vec<Located>,
    /// The games in order; a new one begins at each `GameStarted` after moves were made.
    pub games: Vec<GameRecord>,
    pub corrections: u32,
    pub messages: u64,
    pub skipped_bytes: u64,
}

/// Run the decoder and a tracker (automatic orientation, standard start) over a capture.
pub fn decode(chunks: &[Chunk]) -> Decoded {
    let mut decoder = Decoder::new();
    let mut tracker = Tracker::new(Chess::default(), OrientationSetting::Auto);
    let mut out = Decoded::default();
    let mut current = GameRecord::default();
    let mut lever: Option<bool> = None;
    let mut synthetic: Millis = 0;
    let mut byte: u64 = 0;
    // Stream offsets where each chunk starts, to name the chunk a message started in.
    let mut chunk_starts: Vec<u64> = Vec::with_capacity(chunks.len());
    for (index, chunk) in chunks.iter().enumerate() {
        chunk_starts.push(byte);
        for &b in &chunk.bytes {
            byte += 1;
            let before = decoder.stats().message_bytes;
            decoder.push(&[b]);
            while let Some(message) = decoder.next_message() {
                let len = decoder.stats().message_bytes.saturating_sub(before);
                let start = byte.saturating_sub(len);
                let start_chunk = chunk_starts.partition_point(|&s| s <= start).max(1);
                synthetic += match message {
                    Message::ClockTimes(_) => 1000,
                    _ => 1,
                };
                let now = chunk.at_ms.unwrap_or(synthetic);
                let pos = StreamPos {
                    chunk: start_chunk.min(index + 1),
                    byte: start,
                    at_ms: chunk.at_ms,
                    now,
                };
                let events = feed(&mut tracker, &message, now, &mut lever);
                for event in events {
                    record(&mut out.games, &mut current, &event);
                    out.events.push(Located { pos, event });
                }
            }
        }
    }
    out.games.push(current);
    out.games.retain(|g| !g.san.is_empty());
    out.corrections = tracker.corrections();
    out.messages = decoder.stats().messages;
    out.skipped_bytes = decoder.stats().skipped_bytes;
    out
}

/// Hand one message to the tracker. Time passing before it is a tick (the board stood still
/// until now); a change of the clock lever is a press.
fn feed(
    tracker: &mut Tracker,
    message: &Message,
    now: Millis,
    lever: &mut Option<bool>,
) -> Vec<TrackerEvent> {
    let mut ev = tracker.on_tick(now);
    match message {
        Message::BoardDump(fields) => ev.extend(tracker.on_board_dump(fields, now)),
        Message::FieldUpdate { field, content } => {
            ev.extend(tracker.on_field_update(*field, *content, now));
        }
        Message::ClockTimes(times) if times.status.connected => {
            let down = times.status.lever_left_down;
            if lever.is_some_and(|was| was != down) {
                ev.extend(tracker.on_clock_press(now));
            }
            *lever = Some(down);
        }
        _ => {}
    }
    ev
}

fn record(games: &mut Vec<GameRecord>, current: &mut GameRecord, event: &TrackerEvent) {
    match event {
        TrackerEvent::GameStarted { .. } if !current.san.is_empty() => {
            games.push(std::mem::take(current));
        }
        TrackerEvent::MovePlayed { san, uci, .. } => {
            current.san.push(san.clone());
            current.uci.push(uci.clone());
        }
        TrackerEvent::MoveRetracted { .. } => {
            current.san.pop();
            current.uci.pop();
        }
        _ => {}
    }
}

/// A game as PGN: the seven-tag roster, SAN movetext wrapped at 79 columns, result `*`.
pub fn pgn(game: &GameRecord) -> String {
    let mut out = String::new();
    for (tag, value) in [
        ("Event", "?"),
        ("Site", "?"),
        ("Date", "????.??.??"),
        ("Round", "?"),
        ("White", "?"),
        ("Black", "?"),
        ("Result", "*"),
    ] {
        let _ = writeln!(out, "[{tag} \"{value}\"]");
    }
    out.push('\n');
    let mut line = String::new();
    let push = |token: String, line: &mut String, out: &mut String| {
        if !line.is_empty() && line.len() + 1 + token.len() > 79 {
            out.push_str(line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
    };
    for (i, san) in game.san.iter().enumerate() {
        if i % 2 == 0 {
            push(format!("{}.", i / 2 + 1), &mut line, &mut out);
        }
        push(san.clone(), &mut line, &mut out);
    }
    push("*".to_string(), &mut line, &mut out);
    out.push_str(&line);
    out.push('\n');
    out
}

/// One event as a line of `--events` output.
pub fn event_line(located: &Located) -> String {
    let p = located.pos;
    let mut line = format!("chunk {:>4} byte {:>6}", p.chunk, p.byte);
    if let Some(at) = p.at_ms {
        let _ = write!(line, " t={at}ms");
    }
    let text = match &located.event {
        TrackerEvent::GameStarted { orientation } => {
            format!("game started (board {orientation})")
        }
        TrackerEvent::MovePlayed { san, uci, .. } => format!("move {san} ({uci})"),
        TrackerEvent::MoveRetracted {
            san,
            uci,
            correction,
            ..
        } => {
            let why = if *correction {
                "corrected"
            } else {
                "taken back"
            };
            format!("move {san} ({uci}) {why}")
        }
        TrackerEvent::IllegalPlacement { turn, description } => {
            let who = if *turn == Color::White {
                "white"
            } else {
                "black"
            };
            format!("illegal placement, {who} to move: {description}")
        }
        TrackerEvent::IllegalPlacementCleared => "illegal placement cleared".to_string(),
        TrackerEvent::InSync(true) => "board in sync".to_string(),
        TrackerEvent::InSync(false) => "board out of sync".to_string(),
    };
    let _ = write!(line, "  {text}");
    line
}

/// `eboardctl decode`.
pub fn run(args: &DecodeArgs) -> anyhow::Result<()> {
    let path = args.capture.display();
    let text = std::fs::read_to_string(&args.capture)
        .with_context(|| format!("cannot read capture {path}"))?;
    let chunks = capture::parse(&text).with_context(|| format!("{path}: not a capture"))?;
    let decoded = decode(&chunks);
    let mut stdout = std::io::stdout().lock();
    if args.events {
        for located in &decoded.events {
            writeln!(stdout, "{}", event_line(located))?;
        }
    } else {
        if decoded.games.is_empty() {
            // Still a valid (empty) game, so tools reading the output need no special case.
            write!(stdout, "{}", pgn(&GameRecord::default()))?;
        }
        for (i, game) in decoded.games.iter().enumerate() {
            if i > 0 {
                writeln!(stdout)?;
            }
            write!(stdout, "{}", pgn(game))?;
        }
    }
    stdout.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_wraps_and_numbers() {
        let game = GameRecord {
            san: ["e4", "e5", "Nf3"].iter().map(|s| s.to_string()).collect(),
            uci: Vec::new(),
        };
        let text = pgn(&game);
        assert!(text.starts_with("[Event \"?\"]\n"));
        assert!(text.ends_with("\n\n1. e4 e5 2. Nf3 *\n"));
        let long = GameRecord {
            san: vec!["Nf3".to_string(); 120],
            uci: Vec::new(),
        };
        assert!(pgn(&long).lines().all(|l| l.len() <= 79));
        let empty = pgn(&GameRecord::default());
        assert!(empty.ends_with("\n\n*\n"));
    }
}
