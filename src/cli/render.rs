//! Pure text rendering of board properties: the diagram, clocks, numbered move lists, the
//! `list` line and the `status` report. Nothing here touches the bus or the terminal.

use crate::client::board_id;
use std::fmt::Write as _;

use crate::client::props::BoardProps;

/// The battery as a person reads it ("87%", "87% charging", "15% LOW"), `None` for a board
/// without one (or before its first report).
pub fn battery_text(props: &BoardProps) -> Option<String> {
    let b = props.battery;
    if !b.known() {
        return None;
    }
    Some(if b.charging {
        format!("{}% charging", b.percent)
    } else if b.percent < BATTERY_LOW_PERCENT {
        format!("{}% LOW", b.percent)
    } else {
        format!("{}%", b.percent)
    })
}

/// Below this a battery board is flagged for the operator (a board at 19 % lasts for a
/// round, not for a day).
pub const BATTERY_LOW_PERCENT: i32 = 20;

/// One square: `None` when empty, else the FEN letter (`K`…`p`).
pub type Square = Option<char>;

/// The 64 squares, `squares[rank][file]` with rank 0 = the 8th rank (FEN order), file 0 = a.
pub type Grid = [[Square; 8]; 8];

/// Parses a FEN piece-placement field (or a full FEN, whose first field is used).
/// `None` if it is not eight ranks of eight squares of known pieces.
pub fn parse_placement(fen: &str) -> Option<Grid> {
    let placement = fen.split_whitespace().next()?;
    let mut grid: Grid = [[None; 8]; 8];
    let ranks: Vec<&str> = placement.split('/').collect();
    if ranks.len() != 8 {
        return None;
    }
    for (r, rank) in ranks.iter().enumerate() {
        let mut file = 0usize;
        for c in rank.chars() {
            if let Some(n) = c.to_digit(10) {
                if !(1..=8).contains(&n) {
                    return None;
                }
                file += n as usize;
            } else if "KQRBNPkqrbnp".contains(c) {
                *grid.get_mut(r)?.get_mut(file)? = Some(c);
                file += 1;
            } else {
                return None;
            }
            if file > 8 {
                return None;
            }
        }
        if file != 8 {
            return None;
        }
    }
    Some(grid)
}

/// The Unicode chess symbol for a FEN letter, outlined for White and solid for Black, as
/// printed chess diagrams show them.
pub fn piece_symbol(c: char) -> char {
    match c {
        'K' => '♔',
        'Q' => '♕',
        'R' => '♖',
        'B' => '♗',
        'N' => '♘',
        'P' => '♙',
        'k' => '♚',
        'q' => '♛',
        'r' => '♜',
        'b' => '♝',
        'n' => '♞',
        'p' => '♟',
        other => other,
    }
}

/// The solid symbol of a piece whatever its colour; the full-screen view colours it instead,
/// because outlined glyphs are hard to read on coloured squares from a distance.
pub fn solid_symbol(c: char) -> char {
    piece_symbol(c.to_ascii_lowercase())
}

/// A plain diagram from White's side: ranks 8 to 1 top to bottom, files a to h, a border, and
/// `·` on empty squares. Returns the lines (no trailing newline). Shows "no position" if the FEN
/// cannot be read.
pub fn diagram_lines(fen: &str) -> Vec<String> {
    if fen.is_empty() {
        return vec!["(no position yet)".to_owned()];
    }
    let Some(grid) = parse_placement(fen) else {
        return vec![format!("(unreadable position: {fen:?})")];
    };
    let mut lines = Vec::with_capacity(11);
    lines.push("  ┌─────────────────┐".to_owned());
    for (r, rank) in grid.iter().enumerate() {
        let mut line = format!("{} │", 8 - r);
        for sq in rank {
            line.push(' ');
            line.push(sq.map(piece_symbol).unwrap_or('·'));
        }
        line.push_str(" │");
        lines.push(line);
    }
    lines.push("  └─────────────────┘".to_owned());
    lines.push("    a b c d e f g h".to_owned());
    lines
}

/// Remaining time as a clock shows it: `h:mm:ss`, rounded down to the second (the PGN `%clk`).
pub use eboard_core::game::clk as clock;

/// The side to move and the full-move number of a FEN (fields 2 and 6).
fn fen_turn_and_number(fen: &str) -> Option<(bool, u32)> {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let black = match *fields.get(1)? {
        "w" => false,
        "b" => true,
        _ => return None,
    };
    let number = fields.get(5)?.parse::<u32>().ok()?.max(1);
    Some((black, number))
}

/// The moves numbered as in a score sheet (`1. e4 e5 2. Nf3`), only the last `last` half-moves
/// (`…` in front when some are left out). The numbering is derived from the current FEN, so a
/// game set up from a position with Black to move reads `12... Nf6 13. Bb5`.
pub fn numbered_moves(moves: &[String], fen: &str, last: usize) -> String {
    // Ply index (0 = White's first move of game 1) of the first move in `moves`.
    let start_ply = match fen_turn_and_number(fen) {
        Some((black, number)) => {
            let now = u64::from(number - 1) * 2 + u64::from(black);
            now.saturating_sub(moves.len() as u64)
        }
        None => 0,
    };
    let skip = moves.len().saturating_sub(last);
    let mut out = String::new();
    if skip > 0 {
        out.push('…');
    }
    for (i, san) in moves.iter().enumerate().skip(skip) {
        let ply = start_ply + i as u64;
        let number = ply / 2 + 1;
        if !out.is_empty() {
            out.push(' ');
        }
        if ply.is_multiple_of(2) {
            let _ = write!(out, "{number}. {san}");
        } else if i == skip {
            let _ = write!(out, "{number}... {san}");
        } else {
            out.push_str(san);
        }
    }
    out
}

/// The value of a PGN tag (`[White "Carlsen, M."]`) from the `Pgn` property, if present.
pub fn pgn_tag(pgn: &str, key: &str) -> Option<String> {
    pgn.lines().find_map(|line| {
        let rest = line.trim().strip_prefix('[')?.strip_suffix(']')?;
        let (k, v) = rest.split_once(' ')?;
        if k != key {
            return None;
        }
        let v = v.trim().strip_prefix('"')?.strip_suffix('"')?;
        Some(v.replace("\\\"", "\"").replace("\\\\", "\\"))
    })
}

/// `list` lines, one per board, columns aligned: name, port, connected, state, moves.
pub fn list_lines(boards: &[(String, BoardProps)]) -> Vec<String> {
    let name_w = boards
        .iter()
        .map(|(_, b)| width(&b.name))
        .max()
        .unwrap_or(0);
    let port_w = boards
        .iter()
        .map(|(_, b)| width(&b.port))
        .max()
        .unwrap_or(0);
    boards
        .iter()
        .map(|(_, b)| {
            let connected = if b.connected {
                "connected"
            } else {
                "disconnected"
            };
            let moves = b.moves.len();
            let unit = if moves == 1 {
                "half-move"
            } else {
                "half-moves"
            };
            format!(
                "{:name_w$}  {:port_w$}  {:12}  {:8}  {moves} {unit}",
                b.name, b.port, connected, b.state
            )
            .trim_end()
            .to_owned()
        })
        .collect()
}

/// Display width in terminal columns, counting every character as one (the chess symbols and
/// box drawing used here are single-width).
pub fn width(s: &str) -> usize {
    s.chars().count()
}

fn player_line(props: &BoardProps, white: bool) -> String {
    let (label, tag, ms) = if white {
        ("White", "White", props.white_time_ms)
    } else {
        ("Black", "Black", props.black_time_ms)
    };
    let mut line = format!("{label:5}");
    if let Some(name) = pgn_tag(&props.pgn, tag).filter(|n| !n.is_empty() && n != "?") {
        let _ = write!(line, " {name}");
    }
    if props.clock_connected {
        let _ = write!(line, "  {}", clock(ms));
        let side = if white { "white" } else { "black" };
        if props.clock_running == side {
            line.push_str("  (running)");
        }
    }
    line
}

/// The `status` report: a header, the diagram (plus what the sensors see when it differs),
/// clocks, side to move, recent moves, claims, pending illegal placement, illegal-move counts
/// and the result. Ends with a newline.
pub fn status_text(props: &BoardProps, path: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({})  port {}  {}",
        props.name,
        board_id(path),
        props.port,
        if props.connected {
            "connected"
        } else {
            "DISCONNECTED"
        }
    );
    let _ = write!(out, "state {}  rules {}", props.state, props.rules);
    if !props.edition.is_empty() {
        let _ = write!(out, " ({})", props.edition);
    }
    if !props.serial_number.is_empty() || !props.firmware_version.is_empty() {
        let _ = write!(
            out,
            "  board serial {} firmware {}",
            or_dash(&props.serial_number),
            or_dash(&props.firmware_version)
        );
    }
    if !props.board_model.is_empty() {
        let _ = write!(out, "  model {}", props.board_model);
    }
    if let Some(battery) = battery_text(props) {
        let _ = write!(out, "  battery {battery}");
    }
    out.push('\n');
    out.push('\n');

    let game = diagram_lines(&props.fen);
    if props.in_sync || props.placement.is_empty() {
        for line in &game {
            let _ = writeln!(out, "{line}");
        }
    } else {
        // The arbiter needs both: the validated position and what actually stands there.
        let sensed = diagram_lines(&props.placement);
        let w = game.iter().map(|l| width(l)).max().unwrap_or(0);
        let _ = writeln!(out, "{:w$}    on the board now", "game position");
        for i in 0..game.len().max(sensed.len()) {
            let left = game.get(i).map(String::as_str).unwrap_or("");
            let right = sensed.get(i).map(String::as_str).unwrap_or("");
            let pad = w - width(left);
            let _ = writeln!(out, "{left}{:pad$}    {right}", "");
        }
    }
    out.push('\n');

    let _ = writeln!(out, "{}", player_line(props, false));
    let _ = writeln!(out, "{}", player_line(props, true));
    if !props.clock_connected {
        let _ = writeln!(out, "Clock  not connected");
    } else if !props.clock_model.is_empty() {
        let model = match props.clock_model.as_str() {
            "dgt3000" => "DGT 3000",
            "dgt-xl" => "DGT XL",
            other => other,
        };
        let _ = writeln!(out, "Clock  {model}");
    }
    if props.state != "finished" {
        let _ = writeln!(out, "To move  {}", props.turn);
    }
    let _ = writeln!(
        out,
        "Moves  {}",
        if props.moves.is_empty() {
            "(none)".to_owned()
        } else {
            numbered_moves(&props.moves, &props.fen, 12)
        }
    );
    if props.claims.is_empty() {
        let _ = writeln!(out, "Claims  none");
    } else {
        for c in &props.claims {
            let _ = write!(out, "Claim  {} may claim {}", c.player, c.kind);
            if !c.detail.is_empty() {
                let _ = write!(out, " ({})", c.detail);
            }
            out.push('\n');
        }
    }
    if !props.pending_illegal.is_empty() {
        let _ = writeln!(out, "PENDING ILLEGAL PLACEMENT  {}", props.pending_illegal);
    }
    if !props.gap.is_empty() {
        let _ = writeln!(out, "GAP  {}", props.gap);
    }
    let _ = writeln!(
        out,
        "Illegal moves  white {}, black {}",
        props.illegal_moves.white, props.illegal_moves.black
    );
    let _ = write!(out, "Result  {}", or_dash(&props.result));
    if !props.termination.is_empty() {
        let _ = write!(out, " ({})", props.termination);
    }
    out.push('\n');
    out
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

/// The JSON object `status --json` prints for one board: every property under its D-Bus
/// name, plus `Path` and `Id`.
pub fn board_json(props: &BoardProps, path: &str) -> serde_json::Value {
    let mut v = serde_json::to_value(props).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(obj) = v.as_object_mut() {
        obj.insert("Path".into(), path.into());
        obj.insert("Id".into(), board_id(path).into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::props::{Claim, IllegalCounts};

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn placement_parses_and_rejects_garbage() {
        let g = parse_placement(START).expect("start position");
        assert_eq!(g[0][0], Some('r'));
        assert_eq!(g[7][4], Some('K'));
        assert_eq!(g[4][4], None);
        for bad in [
            "",
            "8/8/8",
            "9/8/8/8/8/8/8/8",
            "8/8/8/8/8/8/8/7",
            "8/8/8/8/8/8/8/ppppppppp",
            "8/8/8/8/8/8/8/x7",
            "8/8/8/8/8/8/8/08",
            "44/8/8/8/8/8/8/8/8",
        ] {
            assert!(parse_placement(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn diagram_is_from_whites_side() {
        let lines = diagram_lines(START);
        assert_eq!(lines[1], "8 │ ♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜ │");
        assert_eq!(lines[5], "4 │ · · · · · · · · │");
        assert_eq!(lines[8], "1 │ ♖ ♘ ♗ ♕ ♔ ♗ ♘ ♖ │");
        assert_eq!(lines[10], "    a b c d e f g h");
        assert!(diagram_lines("nonsense")[0].starts_with("(unreadable position"));
        assert_eq!(diagram_lines(""), vec!["(no position yet)"]);
    }

    #[test]
    fn clocks_read_like_the_clock() {
        assert_eq!(clock(0), "0:00:00");
        assert_eq!(clock(999), "0:00:00");
        assert_eq!(clock(61_500), "0:01:01");
        assert_eq!(clock(5_400_000), "1:30:00");
        assert_eq!(clock(u64::MAX), "5124095576030:25:51");
    }

    #[test]
    fn moves_are_numbered_from_the_fen() {
        let after = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let m = s(&["e4", "e5", "Nf3", "Nc6"]);
        assert_eq!(numbered_moves(&m, after, 20), "1. e4 e5 2. Nf3 Nc6");
        assert_eq!(numbered_moves(&m, after, 3), "… 1... e5 2. Nf3 Nc6");
        assert_eq!(numbered_moves(&m, after, 2), "… 2. Nf3 Nc6");
        // Set up with Black to move at move 12, then two half-moves played.
        let fen = "8/8/8/8/8/8/8/K6k b - - 0 13";
        assert_eq!(
            numbered_moves(&s(&["Kh2", "Kb1"]), fen, 10),
            "12... Kh2 13. Kb1"
        );
        // Unreadable FEN: count from 1.
        assert_eq!(numbered_moves(&s(&["e4"]), "?", 10), "1. e4");
        assert_eq!(numbered_moves(&[], START, 10), "");
    }

    #[test]
    fn pgn_tags_are_found() {
        let pgn = "[Event \"City Open\"]\n[White \"Doe, \\\"J\\\"\"]\n[Black \"?\"]\n\n1. e4 *\n";
        assert_eq!(pgn_tag(pgn, "White").as_deref(), Some("Doe, \"J\""));
        assert_eq!(pgn_tag(pgn, "Black").as_deref(), Some("?"));
        assert_eq!(pgn_tag(pgn, "Round"), None);
        assert_eq!(pgn_tag("", "White"), None);
    }

    fn playing() -> BoardProps {
        BoardProps {
            name: "board-1".into(),
            port: "/dev/ttyACM0".into(),
            connected: true,
            rules: "blitz".into(),
            edition: "fide-2023".into(),
            state: "playing".into(),
            fen: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2".into(),
            placement: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR".into(),
            in_sync: true,
            turn: "white".into(),
            moves: s(&["e4", "e5"]),
            pgn: "[White \"Anna\"]\n[Black \"Ben\"]\n\n1. e4 e5 *\n".into(),
            clock_connected: true,
            white_time_ms: 179_000,
            black_time_ms: 175_400,
            clock_running: "white".into(),
            result: "*".into(),
            ..Default::default()
        }
    }

    #[test]
    fn status_names_the_model_and_the_battery() {
        let mut p = playing();
        assert!(!status_text(&p, "/x").contains("battery"));
        p.board_model = "dgt-bluetooth".into();
        p.battery = (15, false).into();
        let text = status_text(&p, "/x");
        assert!(text.contains("model dgt-bluetooth"), "{text}");
        assert!(text.contains("battery 15% LOW"), "{text}");
        p.battery = (15, true).into();
        assert_eq!(battery_text(&p).as_deref(), Some("15% charging"));
        p.battery = (80, false).into();
        assert_eq!(battery_text(&p).as_deref(), Some("80%"));
    }

    #[test]
    fn list_line_has_the_five_fields() {
        let mut other = playing();
        other.name = "b2".into();
        other.connected = false;
        other.state = "waiting".into();
        other.moves = vec![];
        let lines = list_lines(&[("/p/board_1".into(), playing()), ("/p/b2".into(), other)]);
        assert_eq!(
            lines[0],
            "board-1  /dev/ttyACM0  connected     playing   2 half-moves"
        );
        assert_eq!(
            lines[1],
            "b2       /dev/ttyACM0  disconnected  waiting   0 half-moves"
        );
    }

    #[test]
    fn status_shows_everything_an_arbiter_asks_for() {
        let mut p = playing();
        p.claims = vec![Claim {
            player: "white".into(),
            kind: "threefold-repetition".into(),
            detail: "g1f3".into(),
        }];
        p.illegal_moves = IllegalCounts { white: 0, black: 1 };
        let text = status_text(&p, "/org/eboardd/Bridge1/Board/board_1");
        assert!(text.starts_with("board-1 (board_1)  port /dev/ttyACM0  connected\n"));
        assert!(text.contains("state playing  rules blitz (fide-2023)"));
        assert!(text.contains("8 │ ♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜ │"));
        assert!(text.contains("Black Ben  0:02:55\n"));
        assert!(text.contains("White Anna  0:02:59  (running)\n"));
        assert!(text.contains("To move  white\n"));
        assert!(text.contains("Moves  1. e4 e5\n"));
        assert!(text.contains("Claim  white may claim threefold-repetition (g1f3)\n"));
        assert!(text.contains("Illegal moves  white 0, black 1\n"));
        assert!(text.contains("Result  *\n"));
        assert!(!text.contains("PENDING"));
        assert!(!text.contains("on the board now"));
    }

    #[test]
    fn status_shows_the_sensed_board_beside_the_game_when_they_differ() {
        let mut p = playing();
        p.in_sync = false;
        p.placement = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPPKPPP/RNBQ1BNR".into();
        p.pending_illegal = "Ke1-e2 with the king into nothing?".into();
        let text = status_text(&p, "/x/board_1");
        assert!(text.contains("game position"));
        assert!(text.contains("on the board now"));
        assert!(text.contains("2 │ ♙ ♙ ♙ ♙ · ♙ ♙ ♙ │    2 │ ♙ ♙ ♙ ♙ ♔ ♙ ♙ ♙ │"));
        assert!(text.contains("PENDING ILLEGAL PLACEMENT  Ke1-e2"));
    }

    #[test]
    fn finished_game_shows_result_and_termination() {
        let mut p = playing();
        p.state = "finished".into();
        p.result = "0-1".into();
        p.termination = "time-forfeit".into();
        p.clock_connected = false;
        let text = status_text(&p, "/x/board_1");
        assert!(text.contains("Result  0-1 (time-forfeit)\n"));
        assert!(text.contains("Clock  not connected\n"));
        assert!(!text.contains("To move"));
    }

    #[test]
    fn the_clock_model_is_named() {
        let mut p = playing();
        p.clock_model = "dgt-xl".into();
        assert!(status_text(&p, "/x/board_1").contains("Clock  DGT XL\n"));
        p.clock_model.clear();
        assert!(!status_text(&p, "/x/board_1").contains("Clock  "));
    }

    #[test]
    fn json_adds_path_and_id() {
        let v = board_json(&playing(), "/org/eboardd/Bridge1/Board/board_1");
        assert_eq!(v["Id"], "board_1");
        assert_eq!(v["Name"], "board-1");
        assert_eq!(v["Moves"], serde_json::json!(["e4", "e5"]));
    }
}
