//! A stand-in for eboardd on the bench's private bus: owns `org.eboardd.Bridge1`, answers
//! `GetManagedObjects` for N boards, and plays corpus games on them at a human pace, sending
//! `MovePlayed` + `PropertiesChanged` per move and the running clock's time once a second per
//! board, as the contract (and eboardd) does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{Chess, Color, EnPassantMode, Position};
use zbus::{OwnedVariant, Variant};

const BOARD_IFACE: &str = "org.eboardd.Bridge1.Board";
const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/corpus/twic1599.pgn"
);

/// When each (board id, ply) was sent as `MovePlayed`.
pub type Emitted = Arc<Mutex<HashMap<(String, u64), Instant>>>;

struct Board {
    id: String,
    number: u32,
    /// The game to play, in SAN.
    game: Vec<String>,
    pos: Chess,
    played: Vec<String>,
    white_ms: u64,
    black_ms: u64,
}

impl Board {
    fn path(&self) -> String {
        format!("/org/eboardd/Bridge1/Board/{}", self.id)
    }

    fn fen(&self) -> String {
        Fen::from_position(&self.pos, EnPassantMode::Legal).to_string()
    }

    fn turn(&self) -> &'static str {
        if self.pos.turn() == Color::White {
            "white"
        } else {
            "black"
        }
    }

    fn pgn(&self) -> String {
        let mut text = format!(
            "[Event \"Bench Open\"]\n[Site \"?\"]\n[Round \"1.{}\"]\n[White \"White {}\"]\n\
             [Black \"Black {}\"]\n[Result \"*\"]\n[Board \"{}\"]\n\n",
            self.number, self.number, self.number, self.id
        );
        for (i, san) in self.played.iter().enumerate() {
            if i % 2 == 0 {
                text.push_str(&format!("{}. ", i / 2 + 1));
            }
            text.push_str(san);
            text.push(' ');
        }
        text.push_str("*\n");
        text
    }

    fn props(&self) -> HashMap<String, OwnedVariant> {
        let fen = self.fen();
        let placement = fen.split(' ').next().unwrap_or("").to_owned();
        let mut p: HashMap<String, OwnedVariant> = HashMap::new();
        let mut put = |k: &str, v: Variant<'_>| {
            p.insert(k.to_owned(), v.try_to_owned().expect("owned"));
        };
        put("Name", Variant::from(self.id.replace('_', "-")));
        put("Number", Variant::from(self.number));
        put("Variant", Variant::from("standard"));
        put("Port", Variant::from(format!("/dev/eboard/{}", self.id)));
        put("Connected", Variant::from(true));
        // A serial number per board, as real boards have (LiveChess clients name boards by it).
        let serial = (10_000 + self.number).to_string();
        put("SerialNumber", Variant::from(serial));
        put("FirmwareVersion", Variant::from("3.10"));
        put("Rules", Variant::from("rapid"));
        put("Edition", Variant::from("fide-2023"));
        put("State", Variant::from("playing"));
        put("Fen", Variant::from(fen));
        put("Placement", Variant::from(placement));
        put("InSync", Variant::from(true));
        put("Turn", Variant::from(self.turn()));
        put("Moves", Variant::from(self.played.clone()));
        put("Pgn", Variant::from(self.pgn()));
        put("ClockConnected", Variant::from(true));
        put("WhiteTimeMs", Variant::from(self.white_ms));
        put("BlackTimeMs", Variant::from(self.black_ms));
        put("ClockRunning", Variant::from(self.turn()));
        put(
            "Claims",
            Variant::from(Vec::<(String, String, String)>::new()),
        );
        put("PendingIllegal", Variant::from(""));
        put("Gap", Variant::from(""));
        put("IllegalMoves", Variant::from((0u32, 0u32)));
        put("Result", Variant::from("*"));
        put("Termination", Variant::from(""));
        p
    }
}

type Boards = Arc<Mutex<Vec<Board>>>;

struct Manager {
    boards: Boards,
}

type Managed = HashMap<zbus::OwnedObjectPath, HashMap<String, HashMap<String, OwnedVariant>>>;

#[zbus::interface(name = "org.freedesktop.DBus.ObjectManager")]
impl Manager {
    fn get_managed_objects(&self) -> Managed {
        let boards = self.boards.lock().unwrap();
        boards
            .iter()
            .map(|b| {
                let path = zbus::OwnedObjectPath::try_from(b.path()).expect("object path");
                let mut ifaces = HashMap::new();
                ifaces.insert(BOARD_IFACE.to_owned(), b.props());
                (path, ifaces)
            })
            .collect()
    }
}

pub struct StandIn {
    conn: zbus::Connection,
    boards: Boards,
    emitted: Emitted,
}

impl StandIn {
    pub async fn start(address: &str, n: usize, emitted: Emitted) -> anyhow::Result<StandIn> {
        let text = std::fs::read_to_string(CORPUS).with_context(|| format!("reading {CORPUS}"))?;
        let games: Vec<Vec<String>> = eboard_sim::parse_games(&text)
            .into_iter()
            .filter_map(|g| {
                let mut pos = g.start_position().ok()?;
                if pos != Chess::default() {
                    return None;
                }
                let moves = g.moves().ok()?;
                let mut sans = Vec::new();
                for m in moves {
                    sans.push(San::from_move(&pos, m).to_string());
                    pos.play_unchecked(m);
                }
                (sans.len() >= 60).then_some(sans)
            })
            .take(64)
            .collect();
        anyhow::ensure!(!games.is_empty(), "no usable games in {CORPUS}");
        let boards: Vec<Board> = (0..n)
            .map(|i| Board {
                id: format!("bench_{:03}", i + 1),
                number: i as u32 + 1,
                game: games[i % games.len()].clone(),
                pos: Chess::default(),
                played: Vec::new(),
                white_ms: 25 * 60_000,
                black_ms: 25 * 60_000,
            })
            .collect();
        let boards = Arc::new(Mutex::new(boards));
        let conn = zbus::connection::Builder::address(address)
            .name("org.eboardd.Bridge1")
            .serve_at(
                "/org/eboardd/Bridge1",
                Manager {
                    boards: boards.clone(),
                },
            )
            .build()
            .await
            .context("the stand-in's bus connection")?;
        Ok(StandIn {
            conn,
            boards,
            emitted,
        })
    }

    async fn changed(&self, path: &str, props: Vec<(&str, Variant<'_>)>) -> anyhow::Result<()> {
        let map: HashMap<&str, Variant<'_>> = props.into_iter().collect();
        self.conn
            .emit_signal(
                None::<zbus::names::BusName<'_>>,
                path,
                "org.freedesktop.DBus.Properties",
                "PropertiesChanged",
                &(BOARD_IFACE, map, Vec::<&str>::new()),
            )
            .await?;
        Ok(())
    }

    /// Plays for `length`, a move per board every `think_ms` (a range); returns the number of
    /// moves sent.
    pub async fn play(&self, length: Duration, think_ms: (u64, u64)) -> anyhow::Result<usize> {
        let mut rng = SmallRng::seed_from_u64(1599);
        let start = tokio::time::Instant::now();
        let end = start + length;
        let n = self.boards.lock().unwrap().len();
        // Per board: next move, next clock report (staggered over the second).
        let mut next_move: Vec<tokio::time::Instant> = (0..n)
            .map(|_| start + Duration::from_millis(rng.random_range(think_ms.0..think_ms.1)))
            .collect();
        let mut next_tick: Vec<tokio::time::Instant> = (0..n)
            .map(|i| start + Duration::from_millis((i as u64 * 1000) / n as u64))
            .collect();
        let mut moves = 0;
        loop {
            let (i, at, is_move) = (0..n)
                .map(|i| (i, next_move[i], true))
                .chain((0..n).map(|i| (i, next_tick[i], false)))
                .min_by_key(|e| e.1)
                .expect("boards");
            if at >= end {
                return Ok(moves);
            }
            tokio::time::sleep_until(at).await;
            if is_move {
                next_move[i] = at + Duration::from_millis(rng.random_range(think_ms.0..think_ms.1));
                let sent = self.make_move(i).await?;
                moves += usize::from(sent);
            } else {
                next_tick[i] = at + Duration::from_secs(1);
                self.tick(i).await?;
            }
        }
    }

    /// The next move of board `i`'s game (none when it is over).
    async fn make_move(&self, i: usize) -> anyhow::Result<bool> {
        let (path, id, ply, san, uci, fen, w, b, props) = {
            let mut boards = self.boards.lock().unwrap();
            let board = &mut boards[i];
            let Some(san) = board.game.get(board.played.len()).cloned() else {
                return Ok(false);
            };
            let m = san.parse::<San>()?.to_move(&board.pos)?;
            let uci = m.to_uci(shakmaty::CastlingMode::Standard).to_string();
            board.pos.play_unchecked(m);
            board.played.push(san.clone());
            let fen = board.fen();
            let placement = fen.split(' ').next().unwrap_or("").to_owned();
            let props = vec![
                ("Fen", fen.clone()),
                ("Placement", placement),
                ("Turn", board.turn().to_owned()),
                ("ClockRunning", board.turn().to_owned()),
                ("Pgn", board.pgn()),
            ];
            (
                board.path(),
                board.id.clone(),
                board.played.len() as u64,
                san,
                uci,
                fen,
                board.white_ms,
                board.black_ms,
                (props, board.played.clone()),
            )
        };
        self.emitted
            .lock()
            .unwrap()
            .insert((id, ply), Instant::now());
        self.conn
            .emit_signal(
                None::<zbus::names::BusName<'_>>,
                path.as_str(),
                BOARD_IFACE,
                "MovePlayed",
                &(ply as u32, san.as_str(), uci.as_str(), fen.as_str(), w, b),
            )
            .await?;
        let (strings, played) = props;
        let mut changed: Vec<(&str, Variant<'_>)> = strings
            .iter()
            .map(|(k, v)| (*k, Variant::from(v.as_str())))
            .collect();
        changed.push(("Moves", Variant::from(played)));
        self.changed(&path, changed).await?;
        Ok(true)
    }

    /// The running clock's time, as the clock reports it once a second.
    async fn tick(&self, i: usize) -> anyhow::Result<()> {
        let (path, key, value) = {
            let mut boards = self.boards.lock().unwrap();
            let board = &mut boards[i];
            if board.pos.turn() == Color::White {
                board.white_ms = board.white_ms.saturating_sub(1000);
                (board.path(), "WhiteTimeMs", board.white_ms)
            } else {
                board.black_ms = board.black_ms.saturating_sub(1000);
                (board.path(), "BlackTimeMs", board.black_ms)
            }
        };
        self.changed(&path, vec![(key, Variant::from(value))]).await
    }
}
