//! The full-screen live view, as a pure function from the model to a frame of text with the
//! terminal's colour and cursor commands (written by `crossterm`, not by hand): one panel per board (diagram, clocks, recent moves, alerts) laid out in a
//! grid, and a top bar naming the boards that need the arbiter. Alerts are wide coloured bars
//! (red: illegal placement or move, flag, disconnection; yellow: claims; green: result) so they
//! can be seen across a playing hall.

use crossterm::Command;
use crossterm::cursor::MoveTo;
use crossterm::style::{Attribute, Color, ContentStyle};
use crossterm::terminal::{Clear, ClearType};

use crate::cli::render::{numbered_moves, parse_placement, pgn_tag, solid_symbol, width};
use crate::cli::watch::model::{BoardView, Millis, Model, Severity};
use crate::client::props::BoardProps;

/// Columns of one panel.
pub const PANEL_WIDTH: usize = 38;
/// Columns between panels.
const GAP: usize = 2;

/// How a run of text looks: attributes and colours, as constants (crossterm's
/// `ContentStyle` is built from them when a line is drawn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Look {
    bold: bool,
    dim: bool,
    reverse: bool,
    fg: Option<Color>,
    bg: Option<Color>,
}

impl Look {
    const fn new() -> Look {
        Look {
            bold: false,
            dim: false,
            reverse: false,
            fg: None,
            bg: None,
        }
    }
    const fn bold(mut self) -> Look {
        self.bold = true;
        self
    }
    const fn dim(mut self) -> Look {
        self.dim = true;
        self
    }
    const fn reverse(mut self) -> Look {
        self.reverse = true;
        self
    }
    const fn fg(mut self, c: Color) -> Look {
        self.fg = Some(c);
        self
    }
    const fn bg(mut self, c: Color) -> Look {
        self.bg = Some(c);
        self
    }
    /// A piece's look on a square's background.
    const fn on(self, square: Look) -> Look {
        Look {
            bg: square.bg,
            ..self
        }
    }

    fn style(self) -> ContentStyle {
        let mut st = ContentStyle::new();
        st.foreground_color = self.fg;
        st.background_color = self.bg;
        for (on, a) in [
            (self.bold, Attribute::Bold),
            (self.dim, Attribute::Dim),
            (self.reverse, Attribute::Reverse),
        ] {
            if on {
                st.attributes.set(a);
            }
        }
        st
    }

    /// `s` in this look, followed by a reset to the terminal's default.
    fn paint(self, s: &str) -> String {
        self.style().apply(s).to_string()
    }
}

const PLAIN: Look = Look::new();
const BOLD: Look = Look::new().bold();
const HEADER: Look = Look::new().bold().reverse();
/// Bold bright white on red.
const ALARM: Look = Look::new().bold().fg(Color::White).bg(Color::DarkRed);
const HEADER_ALARM: Look = ALARM;
/// Bold black on bright yellow.
const CLAIM: Look = Look::new().bold().fg(Color::Black).bg(Color::Yellow);
/// Bold bright white on green.
const RESULT: Look = Look::new().bold().fg(Color::White).bg(Color::DarkGreen);
const RUNNING: Look = CLAIM;
const FLAGGED: Look = ALARM;
const DIM: Look = Look::new().dim();
/// Bold yellow.
const WARN: Look = Look::new().bold().fg(Color::DarkYellow);
const LIGHT: Look = Look::new().bg(Color::AnsiValue(180));
const DARK: Look = Look::new().bg(Color::AnsiValue(137));
const DIFF_ILLEGAL: Look = Look::new().bg(Color::AnsiValue(196));
const DIFF_MOVING: Look = Look::new().bg(Color::AnsiValue(75));
const WHITE_PIECE: Look = Look::new().bold().fg(Color::AnsiValue(231));
const BLACK_PIECE: Look = Look::new().fg(Color::AnsiValue(16));

/// The terminal command's escape sequence (crossterm writes it; a frame is plain text).
fn ansi(cmd: impl Command) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = cmd.write_ansi(&mut out);
    out
}

/// A line being built: its text with escapes, and its width on screen.
#[derive(Debug, Clone, Default, PartialEq)]
struct Line {
    text: String,
    width: usize,
}

impl Line {
    fn plain(&mut self, s: &str) {
        self.text.push_str(s);
        self.width += width(s);
    }

    fn styled(&mut self, look: Look, s: &str) {
        if look == PLAIN {
            return self.plain(s);
        }
        self.text.push_str(&look.paint(s));
        self.width += width(s);
    }

    /// Pads with spaces (in `look`) to `w` columns.
    fn pad(&mut self, w: usize, look: Look) {
        if self.width < w {
            let spaces = " ".repeat(w - self.width);
            self.styled(look, &spaces);
        }
    }

    /// A whole-width bar of `text` in `look`, cut to `w` columns.
    fn bar(text: &str, w: usize, look: Look) -> Line {
        let mut l = Line::default();
        l.styled(look, &truncate(&format!(" {text}"), w));
        l.pad(w, look);
        l
    }
}

/// The first `w` characters of `s` (`…` at the end when cut).
pub fn truncate(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
    if w > 0 {
        out.push('…');
    }
    out
}

/// Splits `text` into lines of at most `w` columns at spaces (words longer than a line are
/// cut).
pub fn wrap(text: &str, w: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let word = truncate(word, w);
        if cur.is_empty() {
            cur = word;
        } else if width(&cur) + 1 + width(&word) <= w {
            cur.push(' ');
            cur.push_str(&word);
        } else {
            lines.push(std::mem::take(&mut cur));
            cur = word;
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// What the top bar says besides the boards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The bus, as messages name it ("system bus").
    pub bus: &'a str,
    /// Wall-clock time of day to show (`HH:MM:SS`).
    pub time_of_day: &'a str,
    pub cols: usize,
    pub rows: usize,
}

fn player_line(view: &BoardView, white: bool, now: Millis) -> Line {
    let p = &view.props;
    let (white_ms, black_ms) = view.clocks(now);
    let (symbol, tag, ms, side) = if white {
        ('♔', "White", white_ms, "white")
    } else {
        ('♚', "Black", black_ms, "black")
    };
    let name = pgn_tag(&p.pgn, tag)
        .filter(|n| !n.is_empty() && n != "?")
        .unwrap_or_else(|| tag.to_owned());
    let to_move = p.state == "playing" && p.turn == side;
    let mut l = Line::default();
    l.plain(" ");
    l.plain(&symbol.to_string());
    l.plain(" ");
    let clock = if p.clock_connected {
        crate::cli::render::clock(ms)
    } else {
        String::new()
    };
    let room = PANEL_WIDTH.saturating_sub(4 + width(&clock) + 3);
    let name = truncate(&name, room);
    if to_move {
        l.styled(BOLD, &name);
    } else {
        l.plain(&name);
    }
    l.pad(PANEL_WIDTH - width(&clock) - 2, PLAIN);
    let style = if p.clock_connected && ms == 0 {
        FLAGGED
    } else if p.clock_connected && p.clock_running == side {
        RUNNING
    } else {
        PLAIN
    };
    l.styled(style, &clock);
    l.pad(PANEL_WIDTH, PLAIN);
    l
}

fn diagram(view: &BoardView) -> Vec<Line> {
    let p = &view.props;
    let Some(game) = parse_placement(&p.fen) else {
        let mut l = Line::default();
        l.plain(&truncate(" (no position yet)", PANEL_WIDTH));
        l.pad(PANEL_WIDTH, PLAIN);
        return vec![l];
    };
    // Squares where the sensors disagree with the game show what actually stands there.
    let sensed = if p.in_sync {
        None
    } else {
        parse_placement(&p.placement)
    };
    let diff_bg = if p.pending_illegal.is_empty() {
        DIFF_MOVING
    } else {
        DIFF_ILLEGAL
    };
    let mut lines = Vec::with_capacity(9);
    for r in 0..8 {
        let mut l = Line::default();
        l.styled(DIM, &format!(" {} ", 8 - r));
        for f in 0..8 {
            let mut sq = game[r][f];
            let mut bg = if (r + f) % 2 == 0 { LIGHT } else { DARK };
            if let Some(s) = &sensed
                && s[r][f] != sq
            {
                sq = s[r][f];
                bg = diff_bg;
            }
            let (fg, glyph) = match sq {
                Some(c) if c.is_ascii_uppercase() => (WHITE_PIECE, solid_symbol(c)),
                Some(c) => (BLACK_PIECE, solid_symbol(c)),
                None => (PLAIN, ' '),
            };
            l.styled(fg.on(bg), &format!(" {glyph} "));
        }
        l.pad(PANEL_WIDTH, PLAIN);
        lines.push(l);
    }
    let mut files = Line::default();
    files.styled(DIM, "    a  b  c  d  e  f  g  h");
    files.pad(PANEL_WIDTH, PLAIN);
    lines.push(files);
    lines
}

/// The recent moves, as many as fit on `n` lines.
fn moves_lines(view: &BoardView, n: usize) -> Vec<String> {
    let p = &view.props;
    if p.moves.is_empty() {
        return vec![" no moves yet".to_owned()];
    }
    let inner = PANEL_WIDTH - 2;
    let mut last = p.moves.len().min(24);
    loop {
        let text = numbered_moves(&p.moves, &p.fen, last);
        let lines = wrap(&text, inner);
        if lines.len() <= n || last <= 1 {
            return lines.into_iter().take(n).map(|l| format!(" {l}")).collect();
        }
        last -= 1;
    }
}

/// The panel's title: the board's name, what board it is and its battery (`cl1 · chesslink`,
/// `b2 · dgt-bluetooth · bat 80%`), its state and rules. The name (cut if it must be) and the
/// state always show; the model, the battery and the rules each only while the bar has room,
/// so a long name never pushes the state out of sight.
fn panel_title(p: &BoardProps) -> String {
    let room = PANEL_WIDTH - 1;
    let name = truncate(&p.name, room.saturating_sub(width(&p.state) + 3).max(1));
    let battery = if p.battery.known() {
        let charging = if p.battery.charging { " charging" } else { "" };
        format!("bat {}%{charging}", p.battery.percent)
    } else {
        String::new()
    };
    // Read as name · model · battery · state · rules; kept, while they fit, in the order an
    // operator needs them: the battery, then the model, then the rules.
    let parts = [
        name.as_str(),
        p.board_model.as_str(),
        battery.as_str(),
        p.state.as_str(),
        p.rules.as_str(),
    ];
    let mut keep = [true, false, false, true, false];
    let joined = |keep: &[bool; 5]| {
        let shown: Vec<&str> = (0..parts.len())
            .filter(|&i| keep[i] && !parts[i].is_empty())
            .map(|i| parts[i])
            .collect();
        shown.join(" · ")
    };
    for i in [2, 1, 4] {
        keep[i] = true;
        if width(&joined(&keep)) > room {
            keep[i] = false;
        }
    }
    joined(&keep)
}

/// One board's panel, every line exactly [`PANEL_WIDTH`] columns.
fn panel(view: &BoardView, now: Millis) -> Vec<Line> {
    let p = &view.props;
    let alerts = view.alerts();
    let alarmed = alerts.iter().any(|a| a.severity == Severity::Alarm);
    let mut out = Vec::new();

    out.push(Line::bar(
        &panel_title(p),
        PANEL_WIDTH,
        if alarmed { HEADER_ALARM } else { HEADER },
    ));
    out.push(player_line(view, false, now));
    out.extend(diagram(view));
    out.push(player_line(view, true, now));
    for text in moves_lines(view, 2) {
        let mut l = Line::default();
        l.plain(&text);
        l.pad(PANEL_WIDTH, PLAIN);
        out.push(l);
    }

    let mut info = Line::default();
    let (w, b) = (p.illegal_moves.white, p.illegal_moves.black);
    info.styled(
        if w + b > 0 { WARN } else { DIM },
        &format!(" illegal moves W {w} · B {b}"),
    );
    if !p.in_sync && p.pending_illegal.is_empty() && !p.placement.is_empty() {
        info.styled(DIM, " · hands on board");
    }
    if !p.clock_connected {
        info.styled(DIM, " · no clock");
    }
    info.pad(PANEL_WIDTH, PLAIN);
    out.push(info);

    for alert in alerts {
        let sgr = match alert.severity {
            Severity::Alarm => ALARM,
            Severity::Claim => CLAIM,
            Severity::Result => RESULT,
        };
        for text in wrap(&alert.text, PANEL_WIDTH - 2).into_iter().take(3) {
            out.push(Line::bar(&text, PANEL_WIDTH, sgr));
        }
    }
    out
}

/// The compact view: a header and one line per board (name, state, last move, clocks,
/// illegal-move counts, the most urgent alert), boards with alarms first, then claims, then
/// the rest by name. Alarm lines are red, claim lines yellow, all `cols` wide.
fn compact_lines(boards: &[&BoardView], now: Millis, cols: usize) -> Vec<Line> {
    let name_w = boards
        .iter()
        .map(|b| width(&b.props.name))
        .max()
        .unwrap_or(0)
        .clamp(5, 20);
    let mut order: Vec<(&BoardView, Vec<crate::cli::watch::model::Alert>)> =
        boards.iter().map(|b| (*b, b.alerts())).collect();
    // Alarms first, then claims, then the rest; stable, so each group stays in name order.
    order.sort_by_key(|(_, alerts)| {
        alerts
            .iter()
            .map(|a| a.severity)
            .filter(|s| *s != Severity::Result)
            .min()
            .map_or(2, |s| s as u8)
    });
    let mut out = Vec::with_capacity(order.len() + 1);
    let mut header = Line::default();
    header.styled(
        DIM,
        &truncate(
            &format!(
                " {:name_w$}  {:8}  {:14}  {:>8}   {:>8}   {:7}  ALERT",
                "BOARD", "STATE", "LAST MOVE", "WHITE", "BLACK", "ILLEGAL"
            ),
            cols,
        ),
    );
    header.pad(cols, PLAIN);
    out.push(header);
    for (view, alerts) in order {
        let p = &view.props;
        let (white, black) = view.clocks(now);
        let last = numbered_moves(&p.moves, &p.fen, 1);
        let last = last.trim_start_matches('…').trim_start();
        let mark = |side: &str| if p.clock_running == side { "◀" } else { " " };
        let clocks = if p.clock_connected {
            format!(
                "{:>8}{}  {:>8}{}",
                crate::cli::render::clock(white),
                mark("white"),
                crate::cli::render::clock(black),
                mark("black")
            )
        } else {
            format!("{:9}  {:9}", "-", "-")
        };
        let alert = alerts.first().map(|a| a.text.as_str()).unwrap_or("");
        let text = format!(
            " {:name_w$}  {:8}  {:14}  {clocks}  {:>3}/{:<3}  {alert}",
            truncate(&p.name, name_w),
            p.state,
            truncate(last, 14),
            p.illegal_moves.white,
            p.illegal_moves.black,
        );
        let style = match alerts.first().map(|a| a.severity) {
            Some(Severity::Alarm) => ALARM,
            Some(Severity::Claim) => CLAIM,
            _ => PLAIN,
        };
        let mut l = Line::default();
        l.styled(style, &truncate(&text, cols));
        l.pad(cols, style);
        out.push(l);
    }
    out
}

/// The whole screen: cursor home, `frame.rows` lines at most, each cleared to its end, and
/// the rest of the screen cleared.
pub fn render(model: &Model, now: Millis, frame: &Frame<'_>) -> String {
    // Narrower than a panel: the compact view, cut to the terminal's width.
    let cols = frame.cols.max(1);
    let boards = model.boards();
    let mut lines: Vec<Line> = Vec::new();

    let mut top = format!(
        " eboardctl watch · {} · {} board{} · {}",
        frame.bus,
        boards.len(),
        if boards.len() == 1 { "" } else { "s" },
        frame.time_of_day
    );
    top = truncate(&top, cols);
    lines.push(Line::bar(top.trim_start(), cols, HEADER));
    if !model.daemon_running {
        lines.push(Line::bar(
            &format!(
                "eboardd is not running on the {}: waiting for it",
                frame.bus
            ),
            cols,
            ALARM,
        ));
    }
    let alarmed: Vec<&str> = boards
        .iter()
        .filter(|b| b.alarmed())
        .map(|b| b.props.name.as_str())
        .collect();
    if !alarmed.is_empty() {
        lines.push(Line::bar(
            &format!("ATTENTION: {}", alarmed.join(", ")),
            cols,
            ALARM,
        ));
    }
    let missing = model.missing();
    if !missing.is_empty() {
        lines.push(Line::bar(
            &format!("waiting for: {}", missing.join(", ")),
            cols,
            DIM,
        ));
    }
    if boards.is_empty() && model.daemon_running && missing.is_empty() {
        lines.push(Line::bar("no boards yet", cols, DIM));
    }
    lines.push(Line::default());

    let per_row = ((cols + GAP) / (PANEL_WIDTH + GAP)).max(1);
    let rows_of_panels: Vec<Vec<Vec<Line>>> = boards
        .chunks(per_row)
        .map(|row| row.iter().map(|b| panel(b, now)).collect())
        .collect();
    let needed: usize = rows_of_panels
        .iter()
        .map(|r| r.iter().map(Vec::len).max().unwrap_or(0) + 1)
        .sum();
    if cols >= PANEL_WIDTH && lines.len() + needed <= frame.rows {
        for panels in &rows_of_panels {
            let height = panels.iter().map(Vec::len).max().unwrap_or(0);
            for i in 0..height {
                let mut l = Line::default();
                for (j, p) in panels.iter().enumerate() {
                    if j > 0 {
                        l.plain(&" ".repeat(GAP));
                    }
                    match p.get(i) {
                        Some(part) => {
                            l.text.push_str(&part.text);
                            l.width += part.width;
                        }
                        None => l.pad(l.width + PANEL_WIDTH, PLAIN),
                    }
                }
                lines.push(l);
            }
            lines.push(Line::default());
        }
    } else {
        // Too many boards for panels: one line each, the ones needing the arbiter first.
        let table = compact_lines(&boards, now, cols);
        let free = frame.rows.saturating_sub(lines.len());
        // Keep a line for the "not shown" note when the table does not fit.
        let room = if table.len() <= free {
            free
        } else {
            free.saturating_sub(1)
        };
        let hidden = table.len().saturating_sub(room);
        lines.extend(table.into_iter().take(room));
        if hidden > 0 {
            lines.push(Line::bar(
                &format!(
                    "{hidden} more board{} not shown: enlarge the terminal or name the boards to watch",
                    if hidden == 1 { "" } else { "s" }
                ),
                cols,
                WARN,
            ));
        }
    }

    // Home, each line cleared to its end, then everything below the last one.
    let mut out = ansi(MoveTo(0, 0));
    let eol = ansi(Clear(ClearType::UntilNewLine));
    for l in lines.iter().take(frame.rows.max(1)) {
        out.push_str(&l.text);
        out.push_str(&eol);
        out.push_str("\r\n");
    }
    out.push_str(&ansi(Clear(ClearType::FromCursorDown)));
    out
}

/// Removes ANSI escapes, for tests and for reading a frame as plain text.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::event::WatchEvent;
    use crate::client::props::{BoardProps, Claim};
    use eboard_core::session::Event;
    use eboard_core::vocab::Player;

    /// `text` in `look`, without the reset that follows it (more may follow in the look).
    fn starts(look: Look, text: &str) -> String {
        let painted = look.paint("\u{0}");
        let at = painted.find('\u{0}').expect("the marker is kept");
        format!("{}{text}", &painted[..at])
    }

    #[test]
    fn looks_are_the_terminal_attributes_they_name() {
        // The colours of the hand-written escapes this view used before (97/41, 30/103, …),
        // as crossterm writes them: the 16 named colours by palette index.
        let cases = [
            (ALARM, vec!["\x1b[1m", "\x1b[38;5;15m", "\x1b[48;5;1m"]),
            (CLAIM, vec!["\x1b[1m", "\x1b[38;5;0m", "\x1b[48;5;11m"]),
            (RESULT, vec!["\x1b[1m", "\x1b[38;5;15m", "\x1b[48;5;2m"]),
            (HEADER, vec!["\x1b[1m", "\x1b[7m"]),
            (DIM, vec!["\x1b[2m"]),
            (WARN, vec!["\x1b[1m", "\x1b[38;5;3m"]),
            (
                WHITE_PIECE.on(LIGHT),
                vec!["\x1b[1m", "\x1b[38;5;231m", "\x1b[48;5;180m"],
            ),
            (
                BLACK_PIECE.on(DARK),
                vec!["\x1b[38;5;16m", "\x1b[48;5;137m"],
            ),
        ];
        for (look, codes) in cases {
            let painted = look.paint("x");
            // After the text, a reset (all attributes, or just the colours when only colours
            // were set).
            let (prefix, reset) = painted.split_once('x').expect("the text is there");
            assert!(
                !reset.is_empty() && strip_ansi(reset).is_empty(),
                "{painted:?}"
            );
            let mut rest = prefix.to_owned();
            for code in codes {
                assert!(rest.contains(code), "{code:?} in {painted:?}");
                rest = rest.replacen(code, "", 1);
            }
            assert_eq!(rest, "", "nothing else in {painted:?}");
            assert_eq!(strip_ansi(&painted), "x");
        }
        assert_eq!(PLAIN.style(), ContentStyle::new());
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn props(name: &str) -> BoardProps {
        BoardProps {
            name: name.into(),
            connected: true,
            rules: "blitz".into(),
            state: "playing".into(),
            fen: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2".into(),
            placement: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR".into(),
            in_sync: true,
            turn: "white".into(),
            moves: vec!["e4".into(), "e5".into()],
            pgn: "[White \"Anna\"]\n[Black \"Ben\"]\n".into(),
            clock_connected: true,
            white_time_ms: 180_000,
            black_time_ms: 175_000,
            clock_running: "white".into(),
            result: "*".into(),
            ..Default::default()
        }
    }

    fn model_with(boards: &[BoardProps]) -> Model {
        let mut m = Model::new(vec![]);
        for p in boards {
            m.apply(
                &WatchEvent::Board {
                    path: format!("/org/eboardd/Bridge1/Board/{}", p.name.replace('-', "_")),
                    props: Box::new(p.clone()),
                },
                0,
            );
        }
        m
    }

    fn frame(cols: usize, rows: usize) -> Frame<'static> {
        Frame {
            bus: "system bus",
            time_of_day: "12:00:00",
            cols,
            rows,
        }
    }

    fn plain_lines(s: &str) -> Vec<String> {
        strip_ansi(s)
            .split("\r\n")
            .map(|l| l.trim_end().to_owned())
            .collect()
    }

    #[test]
    fn panels_are_exactly_panel_width() {
        let mut p = props("board-1");
        p.claims = vec![Claim {
            player: "white".into(),
            kind: "threefold-repetition".into(),
            detail: "g1f3".into(),
        }];
        p.pending_illegal = "a very long description of what stands on the board and why it cannot be a legal move at all".into();
        let m = model_with(&[p]);
        for l in panel(m.boards()[0], 0) {
            assert_eq!(l.width, PANEL_WIDTH, "{:?}", strip_ansi(&l.text));
            assert_eq!(width(&strip_ansi(&l.text)), PANEL_WIDTH);
        }
    }

    #[test]
    fn screen_shows_names_clocks_moves_and_diagram() {
        let m = model_with(&[props("board-1")]);
        let text = plain_lines(&render(&m, 2_000, &frame(80, 40))).join("\n");
        assert!(text.contains("eboardctl watch · system bus · 1 board · 12:00:00"));
        assert!(text.contains("board-1 · playing · blitz"));
        assert!(text.contains("♚ Ben"));
        assert!(text.contains("0:02:55"));
        // White's clock runs: two seconds after the report it shows 2:58.
        assert!(text.contains("♔ Anna"));
        assert!(text.contains("0:02:58"));
        assert!(text.contains("1. e4 e5"));
        assert!(text.contains(" 8  ♜  ♞  ♝  ♛  ♚  ♝  ♞  ♜"));
        assert!(text.contains("    a  b  c  d  e  f  g  h"));
        assert!(!text.contains("ATTENTION"));
    }

    #[test]
    fn the_title_names_the_board_model_and_its_battery() {
        let title = |p: &BoardProps| {
            let m = model_with(std::slice::from_ref(p));
            let l = &panel(m.boards()[0], 0)[0];
            assert_eq!(l.width, PANEL_WIDTH);
            strip_ansi(&l.text).trim().to_owned()
        };
        // A ChessLink board: no battery to show.
        let mut cl = props("cl1");
        cl.board_model = "chesslink".into();
        assert_eq!(title(&cl), "cl1 · chesslink · playing · blitz");
        // A USB DGT board before it is identified: as before.
        assert_eq!(title(&props("board-1")), "board-1 · playing · blitz");
        // A Bluetooth board with its battery, charging or not; the rules, then the model
        // give way when the bar is full.
        let mut bt = props("b2");
        bt.board_model = "dgt-bluetooth".into();
        bt.battery = (80, false).into();
        assert_eq!(title(&bt), "b2 · bat 80% · playing · blitz");
        bt.name = "b".into();
        assert_eq!(title(&bt), "b · dgt-bluetooth · bat 80% · playing");
        bt.name = "b2".into();
        bt.board_model = "dgt".into();
        assert_eq!(title(&bt), "b2 · dgt · bat 80% · playing · blitz");
        bt.battery = (35, true).into();
        assert_eq!(title(&bt), "b2 · dgt · bat 35% charging · playing");
        // A long name keeps the state in sight; what does not fit is left out, never cut.
        let mut long = props("the-board-at-the-very-end-of-the-row");
        long.board_model = "chesslink".into();
        let t = title(&long);
        assert!(
            t.starts_with("the-board-at-the-very-end") && t.ends_with("… · playing"),
            "{t}"
        );
        assert!(!t.contains("chesslink"), "{t}");
        // The battery still shows when the model gives way.
        let mut mid = props("table-twelve-b");
        mid.board_model = "dgt-revelation2".into();
        mid.battery = (9, false).into();
        assert_eq!(title(&mid), "table-twelve-b · bat 9% · playing");
    }

    #[test]
    fn alerts_are_bars_and_named_in_the_top_bar() {
        let mut m = model_with(&[props("board-1"), props("board-2")]);
        m.apply(
            &WatchEvent::Signal {
                path: "/org/eboardd/Bridge1/Board/board_2".into(),
                signal: Event::IllegalMoveCompleted {
                    player: Player::Black,
                    count: 1,
                    description: "Ke8-e6".into(),
                },
            },
            0,
        );
        let raw = render(&m, 0, &frame(80, 60));
        let text = plain_lines(&raw).join("\n");
        assert!(text.contains("ATTENTION: board-2"));
        // Wrapped to the panel's width.
        assert!(text.contains(" ILLEGAL MOVE by black (#1):"));
        assert!(text.contains(" Ke8-e6"));
        // The alert is drawn as a red bar.
        assert!(raw.contains(&starts(ALARM, " ILLEGAL MOVE by black")));
        // Two panels side by side on 80 columns.
        assert!(text.contains("board-1 · playing · blitz"));
        let header = plain_lines(&raw)
            .into_iter()
            .find(|l| l.contains("board-1 · playing"))
            .expect("header row");
        assert!(header.contains("board-2 · playing"));
    }

    #[test]
    fn out_of_sync_squares_show_what_stands_there() {
        let mut p = props("board-1");
        p.fen = START.into();
        p.in_sync = false;
        p.placement = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR".into();
        p.moves.clear();
        let m = model_with(&[p]);
        let raw = render(&m, 0, &frame(40, 40));
        // e4 now holds a white pawn on the "hands on board" colour.
        assert!(raw.contains(&WHITE_PIECE.on(DIFF_MOVING).paint(" ♟ ")));
        assert!(strip_ansi(&raw).contains("hands on board"));
    }

    #[test]
    fn many_boards_switch_to_one_line_each_alarms_first() {
        let mut boards: Vec<BoardProps> = (1..=5).map(|i| props(&format!("b{i}"))).collect();
        boards[3].pending_illegal = "Ke8-e6".into();
        boards[4].claims = vec![Claim {
            player: "black".into(),
            kind: "fifty-moves".into(),
            detail: String::new(),
        }];
        let m = model_with(&boards);
        let raw = render(&m, 0, &frame(120, 30));
        let lines = plain_lines(&raw);
        let text = lines.join("\n");
        assert!(!text.contains("b1 · playing"), "{text}");
        let row = |name: &str| {
            lines
                .iter()
                .position(|l| l.starts_with(&format!(" {name} ")))
                .unwrap_or_else(|| panic!("no row for {name}:\n{text}"))
        };
        // The alarm, then the claim, then the others in name order.
        assert!(row("b4") < row("b5"));
        assert!(row("b5") < row("b1"));
        assert!(row("b1") < row("b2"));
        assert!(lines[row("b4")].contains("ILLEGAL PLACEMENT, white to move: Ke8-e6"));
        assert!(lines[row("b1")].contains("1... e5"));
        assert!(lines[row("b1")].contains("0:03:00◀"));
        assert!(raw.contains(&starts(ALARM, " b4 ")));
        assert!(raw.contains(&starts(CLAIM, " b5 ")));
        assert!(!text.contains("not shown"));
        // Fewer rows than boards: the rest is counted.
        let text = plain_lines(&render(&m, 0, &frame(120, 8))).join("\n");
        assert!(text.contains("more boards not shown"), "{text}");
        assert!(text.contains(" b4 "), "{text}");
    }

    #[test]
    fn daemon_gone_and_waiting_boards_are_said() {
        let mut m = Model::new(vec!["board-7".into()]);
        m.apply(&WatchEvent::DaemonStopped, 0);
        let text = plain_lines(&render(&m, 0, &frame(80, 20))).join("\n");
        assert!(text.contains("eboardd is not running on the system bus"));
        assert!(text.contains("waiting for: board-7"));
    }

    #[test]
    fn frame_never_exceeds_the_rows() {
        let boards: Vec<BoardProps> = (1..=3).map(|i| props(&format!("b{i}"))).collect();
        let m = model_with(&boards);
        for rows in [1, 3, 5, 8, 40] {
            let raw = render(&m, 0, &frame(200, rows));
            assert!(raw.matches("\r\n").count() <= rows, "{rows}: {raw:?}");
        }
        let text = plain_lines(&render(&m, 0, &frame(200, 5))).join("\n");
        assert!(text.contains(" b1 "), "{text}");
        assert!(text.contains("2 more boards not shown"), "{text}");
    }

    #[test]
    fn a_narrow_terminal_gets_the_compact_view_cut_to_its_width() {
        let m = model_with(&[props("board-1")]);
        let raw = render(&m, 0, &frame(30, 40));
        for line in plain_lines(&raw) {
            assert!(width(&line) <= 30, "{line:?}");
        }
        assert!(strip_ansi(&raw).contains(" board-1 "));
        assert!(!strip_ansi(&raw).contains("board-1 · playing"));
    }

    #[test]
    fn wrap_and_truncate() {
        assert_eq!(wrap("1. e4 e5 2. Nf3", 8), vec!["1. e4 e5", "2. Nf3"]);
        assert_eq!(wrap("", 8), Vec::<String>::new());
        assert_eq!(wrap("abcdefghij", 4), vec!["abc…"]);
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "ab…");
        assert_eq!(strip_ansi("\x1b[1;7mX\x1b[0m\x1b[K"), "X");
    }
}
