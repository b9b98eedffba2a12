//! A stand-in for eboardd that serves the contract's D-Bus API (section 2) — the well-known
//! name, the manager with its ObjectManager, one object per board with every property, signal
//! and method — backed by a real chess position (shakmaty), so eboardctl can be tested against
//! the contract itself. Tests drive it directly: play moves, raise illegal placements, offer
//! claims, let a flag fall. Each change is announced as the contract says: the signal, then a
//! `PropertiesChanged` for every property it changed.
//!
//! Its names, paths and error names are the library's contract module's (`eboard_core::contract`),
//! not copies, and a test (`ctl_contract::stand_in_matches_shipped_xml`) checks its
//! introspection against the shipped `dbus/*.xml` like `daemon_introspection` checks eboardd.

use std::collections::HashMap;

use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};
use zbus::object_server::{InterfaceRef, ObjectServer, SignalEmitter};
use zbus::{ObjectPath, OwnedObjectPath};

pub use eboard_core::contract::{BUS_NAME, ErrorName, MANAGER_PATH};
use eboard_core::contract::{board_id_of, board_path, object_id};

/// The contract's named errors (the attribute takes a literal: `contract::ERROR_PREFIX`; the
/// test `stand_in_errors_are_the_contract_names` checks each name against the contract).
#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.eboardd.Bridge1.Error")]
pub enum BoardError {
    #[zbus(error)]
    ZBus(zbus::Error),
    InvalidFen(String),
    InvalidArgument(String),
    NothingToTakeBack(String),
    ClaimNotAvailable(String),
    ListenOnly(String),
    NoClock(String),
    ClockTimeout(String),
    Busy(String),
}

impl BoardError {
    /// The error the contract names `name`, with `message`.
    pub fn of(name: ErrorName, message: String) -> BoardError {
        match name {
            ErrorName::InvalidFen => BoardError::InvalidFen(message),
            ErrorName::InvalidArgument => BoardError::InvalidArgument(message),
            ErrorName::NothingToTakeBack => BoardError::NothingToTakeBack(message),
            ErrorName::ClaimNotAvailable => BoardError::ClaimNotAvailable(message),
            ErrorName::ListenOnly => BoardError::ListenOnly(message),
            ErrorName::NoClock => BoardError::NoClock(message),
            ErrorName::ClockTimeout => BoardError::ClockTimeout(message),
            ErrorName::Busy => BoardError::Busy(message),
        }
    }
}

/// The manager interface: the version, storage health, and boards added and removed at run
/// time (the ObjectManager beside it announces them).
pub struct Manager {
    pub storage_problem: String,
}

#[zbus::interface(name = "org.eboardd.Bridge1")]
impl Manager {
    #[zbus(property(emits_changed_signal = "const"))]
    fn version(&self) -> String {
        "0.0.0-contract-stand-in".into()
    }

    #[zbus(property)]
    fn storage_problem(&self) -> String {
        self.storage_problem.clone()
    }

    /// Serves a board on `port` (an absolute path), named after the port's file name.
    async fn add_board(
        &self,
        port: String,
        #[zbus(object_server)] server: &ObjectServer,
    ) -> Result<OwnedObjectPath, BoardError> {
        let name = match port.strip_prefix('/').map(|p| p.rsplit('/').next()) {
            Some(Some(file)) if !file.is_empty() => file.to_owned(),
            _ => {
                return Err(BoardError::InvalidArgument(format!(
                    "{port:?} is not an absolute path to a serial device"
                )));
            }
        };
        let path = path_of(&name);
        if server.interface::<_, Board>(path.as_str()).await.is_ok() {
            return Err(BoardError::InvalidArgument(format!(
                "a board with object id {} is already served",
                object_id(&name)
            )));
        }
        server.at(path.as_str(), Board::new(&name, &port)).await?;
        Ok(ObjectPath::try_from(path)?.into())
    }

    /// Stops serving the board at `board`.
    async fn remove_board(
        &self,
        board: OwnedObjectPath,
        #[zbus(object_server)] server: &ObjectServer,
    ) -> Result<(), BoardError> {
        // Removing an object that is not served is an error of the object server: to the
        // caller, that is an argument naming no board.
        let served = board_id_of(board.as_str()).is_some()
            && matches!(server.remove::<Board, _>(board.as_str()).await, Ok(true));
        if served {
            Ok(())
        } else {
            Err(BoardError::InvalidArgument(format!(
                "no board is served at {}",
                board.as_str()
            )))
        }
    }
}

/// One board's state, as the properties show it.
pub struct Board {
    pub name: String,
    pub number: u32,
    pub variant: String,
    pub port: String,
    pub connected: bool,
    pub rules: String,
    pub state: String,
    pub start: Chess,
    pub pos: Chess,
    pub moves: Vec<String>,
    pub tags: Vec<(String, String)>,
    pub placement: Option<String>,
    pub white_ms: u64,
    pub black_ms: u64,
    pub clock_running: String,
    pub claims: Vec<(String, String, String)>,
    pub pending_illegal: String,
    pub illegal: (u32, u32),
    pub result: String,
    pub termination: String,
    /// What the daemon is doing about a gap in the record; empty when there is none.
    pub gap: String,
    pub clock_connected: bool,
    /// Every text shown on the clock with `ShowClockMessage`, in order.
    pub clock_messages: Vec<String>,
    /// Every incorrect claim recorded with `RejectClaim`: (player, kind, detail).
    pub rejected_claims: Vec<(String, String, String)>,
}

impl Board {
    pub fn new(name: &str, port: &str) -> Board {
        Board {
            name: name.into(),
            number: 0,
            variant: "standard".into(),
            port: port.into(),
            connected: true,
            rules: "standard".into(),
            state: "playing".into(),
            start: Chess::default(),
            pos: Chess::default(),
            moves: Vec::new(),
            tags: vec![
                ("Event".into(), "Club night".into()),
                ("White".into(), "Anna".into()),
                ("Black".into(), "Ben".into()),
            ],
            placement: None,
            white_ms: 300_000,
            black_ms: 300_000,
            clock_running: "none".into(),
            claims: Vec::new(),
            pending_illegal: String::new(),
            illegal: (0, 0),
            result: "*".into(),
            termination: String::new(),
            gap: String::new(),
            clock_connected: true,
            clock_messages: Vec::new(),
            rejected_claims: Vec::new(),
        }
    }

    fn fen_of(pos: &Chess) -> String {
        Fen::from_position(pos, EnPassantMode::Legal).to_string()
    }

    fn restart(&mut self, start: Chess) {
        self.start = start.clone();
        self.pos = start;
        self.moves.clear();
        self.state = "playing".into();
        self.result = "*".into();
        self.termination.clear();
        self.claims.clear();
        self.pending_illegal.clear();
        self.placement = None;
        self.illegal = (0, 0);
    }

    /// Plays a SAN move; returns (ply, san, uci, fen after).
    pub fn play(&mut self, san: &str) -> (u32, String, String, String) {
        let m = San::from_ascii(san.as_bytes())
            .expect("valid SAN")
            .to_move(&self.pos)
            .expect("legal move");
        let uci = UciMove::from_move(m, CastlingMode::Standard).to_string();
        let san_text = San::from_move(&self.pos, m).to_string();
        self.pos.play_unchecked(m);
        self.moves.push(san_text.clone());
        self.placement = None;
        self.pending_illegal.clear();
        self.clock_running = if self.pos.turn().is_white() {
            "white".into()
        } else {
            "black".into()
        };
        (
            self.moves.len() as u32,
            san_text,
            uci,
            Self::fen_of(&self.pos),
        )
    }

    fn replay(&mut self) {
        let mut pos = self.start.clone();
        for san in &self.moves {
            let Ok(parsed) = San::from_ascii(san.as_bytes()) else {
                continue;
            };
            let Ok(m) = parsed.to_move(&pos) else {
                continue;
            };
            pos.play_unchecked(m);
        }
        self.pos = pos;
    }

    fn turn(&self) -> &'static str {
        if self.pos.turn().is_white() {
            "white"
        } else {
            "black"
        }
    }

    fn board_placement(&self) -> String {
        self.pos.board().to_string()
    }

    /// The game as PGN: tags, numbered SAN moves with clock comments, result.
    pub fn pgn(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.tags {
            out.push_str(&format!("[{k} \"{v}\"]\n"));
        }
        out.push_str(&format!("[Result \"{}\"]\n", self.result));
        let start_fen = Self::fen_of(&self.start);
        if self.start != Chess::default() {
            out.push_str(&format!("[SetUp \"1\"]\n[FEN \"{start_fen}\"]\n"));
        }
        out.push('\n');
        let mut pos = self.start.clone();
        let mut words = Vec::new();
        for (i, san) in self.moves.iter().enumerate() {
            let number = pos.fullmoves().get();
            if pos.turn().is_white() {
                words.push(format!("{number}."));
            } else if i == 0 {
                words.push(format!("{number}..."));
            }
            words.push(san.clone());
            words.push("{[%clk 0:05:00]}".into());
            if let Ok(m) = San::from_ascii(san.as_bytes())
                .map_err(|_| ())
                .and_then(|s| s.to_move(&pos).map_err(|_| ()))
            {
                pos.play_unchecked(m);
            }
        }
        words.push(self.result.clone());
        out.push_str(&words.join(" "));
        out.push('\n');
        out
    }
}

#[zbus::interface(name = "org.eboardd.Bridge1.Board")]
impl Board {
    #[zbus(property)]
    fn name(&self) -> String {
        self.name.clone()
    }
    #[zbus(property)]
    fn number(&self) -> u32 {
        self.number
    }
    #[zbus(property)]
    fn variant(&self) -> String {
        self.variant.clone()
    }
    #[zbus(property)]
    fn port(&self) -> String {
        self.port.clone()
    }
    #[zbus(property)]
    fn connected(&self) -> bool {
        self.connected
    }
    #[zbus(property)]
    fn serial_number(&self) -> String {
        "13116".into()
    }
    #[zbus(property)]
    fn firmware_version(&self) -> String {
        "3.10".into()
    }
    #[zbus(property)]
    fn board_model(&self) -> String {
        "dgt-bluetooth".into()
    }
    #[zbus(property)]
    fn clock_model(&self) -> String {
        "dgt3000".into()
    }
    #[zbus(property)]
    fn battery(&self) -> (i32, bool) {
        (87, false)
    }
    #[zbus(property)]
    fn rules(&self) -> String {
        self.rules.clone()
    }
    #[zbus(property)]
    fn edition(&self) -> String {
        "fide-2023".into()
    }
    #[zbus(property)]
    fn state(&self) -> String {
        self.state.clone()
    }
    #[zbus(property)]
    fn fen(&self) -> String {
        Self::fen_of(&self.pos)
    }
    #[zbus(property)]
    fn placement(&self) -> String {
        self.placement
            .clone()
            .unwrap_or_else(|| self.board_placement())
    }
    #[zbus(property)]
    fn in_sync(&self) -> bool {
        self.placement.is_none()
    }
    #[zbus(property, name = "Turn")]
    fn turn_prop(&self) -> String {
        self.turn().into()
    }
    #[zbus(property)]
    fn moves(&self) -> Vec<String> {
        self.moves.clone()
    }
    #[zbus(property, name = "Pgn")]
    fn pgn_prop(&self) -> String {
        self.pgn()
    }
    #[zbus(property)]
    fn clock_connected(&self) -> bool {
        self.clock_connected
    }
    #[zbus(property)]
    fn white_time_ms(&self) -> u64 {
        self.white_ms
    }
    #[zbus(property)]
    fn black_time_ms(&self) -> u64 {
        self.black_ms
    }
    #[zbus(property)]
    fn clock_running(&self) -> String {
        self.clock_running.clone()
    }
    #[zbus(property)]
    fn claims(&self) -> Vec<(String, String, String)> {
        self.claims.clone()
    }
    #[zbus(property)]
    fn pending_illegal(&self) -> String {
        self.pending_illegal.clone()
    }
    #[zbus(property)]
    fn gap(&self) -> String {
        self.gap.clone()
    }
    #[zbus(property)]
    fn illegal_moves(&self) -> (u32, u32) {
        self.illegal
    }
    #[zbus(property)]
    fn result(&self) -> String {
        self.result.clone()
    }
    #[zbus(property)]
    fn termination(&self) -> String {
        self.termination.clone()
    }

    async fn new_game(
        &mut self,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        self.restart(Chess::default());
        Board::game_started(&e, &Self::fen_of(&self.pos)).await?;
        self.announce_all(&e).await?;
        Ok(())
    }

    async fn set_position(
        &mut self,
        fen: String,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        let pos: Chess = fen
            .parse::<Fen>()
            .map_err(|err| BoardError::InvalidFen(format!("{fen:?} is not a FEN: {err}")))?
            .into_position(CastlingMode::Standard)
            .map_err(|err| {
                BoardError::InvalidFen(format!("{fen:?} is not a legal position: {err}"))
            })?;
        self.restart(pos);
        Board::game_started(&e, &Self::fen_of(&self.pos)).await?;
        self.announce_all(&e).await?;
        Ok(())
    }

    async fn set_tags(
        &mut self,
        tags: HashMap<String, String>,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        for (k, v) in &tags {
            if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(BoardError::InvalidArgument(format!(
                    "{k:?} is not a PGN tag name (letters, digits and _ only)"
                )));
            }
            if v.contains('\n') || v.contains('"') {
                return Err(BoardError::InvalidArgument(format!(
                    "the value of tag {k} may not contain a newline or a double quote"
                )));
            }
        }
        for (k, v) in tags {
            match self.tags.iter_mut().find(|(key, _)| *key == k) {
                Some(slot) => slot.1 = v,
                None => self.tags.push((k, v)),
            }
        }
        self.pgn_changed(&e).await?;
        Ok(())
    }

    async fn set_rules(
        &mut self,
        rules: String,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        if !["standard", "rapid", "blitz"].contains(&rules.as_str()) {
            return Err(BoardError::InvalidArgument(format!(
                "{rules:?} is not one of standard, rapid, blitz"
            )));
        }
        self.rules = rules;
        self.rules_changed(&e).await?;
        Ok(())
    }

    async fn take_back(
        &mut self,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        if self.moves.pop().is_none() {
            return Err(BoardError::NothingToTakeBack(
                "no move has been played in this game".into(),
            ));
        }
        self.replay();
        Board::move_retracted(&e, self.moves.len() as u32 + 1, &Self::fen_of(&self.pos)).await?;
        self.announce_all(&e).await?;
        Ok(())
    }

    async fn accept_claim(
        &mut self,
        player: String,
        kind: String,
        detail: String,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        let claim = (player, kind, detail);
        if !self.claims.contains(&claim) {
            return Err(BoardError::ClaimNotAvailable(format!(
                "{} cannot claim {} now; available claims: {}",
                claim.0,
                claim.1,
                if self.claims.is_empty() {
                    "none".to_owned()
                } else {
                    self.claims
                        .iter()
                        .map(|c| format!("{} {}", c.0, c.1))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )));
        }
        self.claims.clear();
        self.finish("1/2-1/2", "claim", &e).await?;
        Ok(())
    }

    async fn adjudicate(
        &mut self,
        result: String,
        reason: String,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        if !["1-0", "0-1", "1/2-1/2"].contains(&result.as_str()) {
            return Err(BoardError::InvalidArgument(format!(
                "{result:?} is not a result (1-0, 0-1 or 1/2-1/2)"
            )));
        }
        if !reason.is_empty() {
            self.tags.push(("Annotator".into(), reason));
        }
        self.finish(&result, "adjudication", &e).await?;
        Ok(())
    }

    async fn resolve_gap(
        &mut self,
        moves: Vec<String>,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        if self.gap.is_empty() {
            return Err(BoardError::InvalidArgument(
                "no gap is open on this board".into(),
            ));
        }
        // All or nothing: the moves are checked on a copy before any is recorded.
        let mut pos = self.pos.clone();
        let mut sans = Vec::new();
        for text in &moves {
            let m = text
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&pos).ok())
                .ok_or_else(|| {
                    BoardError::InvalidArgument(format!(
                        "{text:?} is not a legal move in {}",
                        Self::fen_of(&pos)
                    ))
                })?;
            sans.push(San::from_move(&pos, m).to_string());
            pos.play_unchecked(m);
        }
        self.pos = pos;
        self.moves.extend(sans);
        self.gap.clear();
        self.announce_all(&e).await?;
        Ok(())
    }

    async fn reject_claim(
        &mut self,
        player: String,
        kind: String,
        detail: String,
        #[zbus(signal_emitter)] e: SignalEmitter<'_>,
    ) -> Result<(), BoardError> {
        if player != "white" && player != "black" {
            return Err(BoardError::InvalidArgument(format!(
                "{player:?} is not a player (white or black)"
            )));
        }
        if kind != "threefold-repetition" && kind != "fifty-moves" {
            return Err(BoardError::InvalidArgument(format!(
                "{kind:?} is not a claim that can be incorrect (threefold-repetition, fifty-moves)"
            )));
        }
        let claim = (player, kind, detail);
        if self.claims.contains(&claim) {
            return Err(BoardError::InvalidArgument(format!(
                "{} {} is available, so the claim is correct: accept it instead",
                claim.0, claim.1
            )));
        }
        // fide-2023, 9.5.3.2: the opponent gets two minutes.
        if claim.0 == "white" {
            self.black_ms += 120_000;
        } else {
            self.white_ms += 120_000;
        }
        self.rejected_claims.push(claim);
        self.white_time_ms_changed(&e).await?;
        self.black_time_ms_changed(&e).await?;
        Ok(())
    }

    async fn show_clock_message(&mut self, text: String) -> Result<(), BoardError> {
        if !self.clock_connected {
            return Err(BoardError::NoClock(
                "no clock reports through this board".into(),
            ));
        }
        if text.chars().count() > 8 {
            return Err(BoardError::InvalidArgument(format!(
                "{text:?} is longer than the 8 characters a clock shows"
            )));
        }
        self.clock_messages.push(text);
        Ok(())
    }

    #[zbus(signal)]
    async fn game_started(e: &SignalEmitter<'_>, fen: &str) -> zbus::Result<()>;
    #[zbus(signal)]
    async fn move_played(
        e: &SignalEmitter<'_>,
        ply: u32,
        san: &str,
        uci: &str,
        fen: &str,
        white_ms: u64,
        black_ms: u64,
    ) -> zbus::Result<()>;
    #[zbus(signal)]
    async fn move_retracted(e: &SignalEmitter<'_>, ply: u32, fen: &str) -> zbus::Result<()>;
    #[zbus(signal)]
    async fn illegal_placement(
        e: &SignalEmitter<'_>,
        player: &str,
        description: &str,
        placement: &str,
    ) -> zbus::Result<()>;
    #[zbus(signal)]
    async fn illegal_move_completed(
        e: &SignalEmitter<'_>,
        player: &str,
        count: u32,
        description: &str,
    ) -> zbus::Result<()>;
    #[zbus(signal)]
    async fn flag_fell(e: &SignalEmitter<'_>, player: &str) -> zbus::Result<()>;
    #[zbus(signal)]
    async fn game_ended(e: &SignalEmitter<'_>, result: &str, termination: &str)
    -> zbus::Result<()>;
}

impl Board {
    /// Announces every property (what a daemon does after a reset).
    pub async fn announce_all(&self, e: &SignalEmitter<'_>) -> zbus::Result<()> {
        self.state_changed(e).await?;
        self.fen_changed(e).await?;
        self.placement_changed(e).await?;
        self.in_sync_changed(e).await?;
        self.turn_changed(e).await?;
        self.moves_changed(e).await?;
        self.pgn_changed(e).await?;
        self.white_time_ms_changed(e).await?;
        self.black_time_ms_changed(e).await?;
        self.clock_running_changed(e).await?;
        self.claims_changed(e).await?;
        self.pending_illegal_changed(e).await?;
        self.illegal_moves_changed(e).await?;
        self.gap_changed(e).await?;
        self.result_changed(e).await?;
        self.termination_changed(e).await?;
        self.rules_changed(e).await?;
        self.connected_changed(e).await?;
        Ok(())
    }

    async fn finish(
        &mut self,
        result: &str,
        termination: &str,
        e: &SignalEmitter<'_>,
    ) -> zbus::Result<()> {
        self.result = result.into();
        self.termination = termination.into();
        self.state = "finished".into();
        self.clock_running = "none".into();
        Board::game_ended(e, result, termination).await?;
        self.announce_all(e).await
    }
}

/// The stand-in daemon: a connection owning the name, serving the manager and the boards.
pub struct Daemon {
    pub conn: zbus::Connection,
}

impl Daemon {
    /// Serves `boards` (name, port) on the bus at `address`.
    pub async fn start(address: &str, boards: &[(&str, &str)]) -> Daemon {
        let mut builder = zbus::connection::Builder::address(address)
            .serve_at(MANAGER_PATH, zbus::fdo::ObjectManager)
            .serve_at(
                MANAGER_PATH,
                Manager {
                    storage_problem: String::new(),
                },
            );
        for (name, port) in boards {
            builder = builder.serve_at(path_of(name), Board::new(name, port));
        }
        let conn = builder
            .name(BUS_NAME)
            .build()
            .await
            .expect("stand-in daemon on the private bus");
        Daemon { conn }
    }

    /// The board object of `name`.
    pub async fn board(&self, name: &str) -> InterfaceRef<Board> {
        self.conn
            .object_server()
            .interface::<_, Board>(path_of(name))
            .await
            .expect("board object")
    }

    /// Plays `san` on board `name` as a player would: MovePlayed, then the property changes.
    pub async fn play(&self, name: &str, san: &str) {
        let iface = self.board(name).await;
        let mut b = iface.get_mut().await;
        let (ply, san, uci, fen) = b.play(san);
        let e = iface.signal_emitter();
        Board::move_played(e, ply, &san, &uci, &fen, b.white_ms, b.black_ms)
            .await
            .expect("MovePlayed");
        b.announce_all(e).await.expect("property changes");
    }

    /// An illegal placement settles on the board: `placement` is what the sensors see.
    pub async fn illegal_placement(&self, name: &str, description: &str, placement: &str) {
        let iface = self.board(name).await;
        let mut b = iface.get_mut().await;
        b.placement = Some(placement.into());
        b.pending_illegal = description.into();
        let e = iface.signal_emitter();
        let player = b.turn();
        Board::illegal_placement(e, player, description, placement)
            .await
            .expect("IllegalPlacement");
        b.announce_all(e).await.expect("property changes");
    }

    /// The clock is pressed with the illegal placement standing.
    pub async fn complete_illegal(&self, name: &str) {
        let iface = self.board(name).await;
        let mut b = iface.get_mut().await;
        let player = b.turn();
        let count = if player == "white" {
            b.illegal.0 += 1;
            b.illegal.0
        } else {
            b.illegal.1 += 1;
            b.illegal.1
        };
        let description = std::mem::take(&mut b.pending_illegal);
        let e = iface.signal_emitter();
        Board::illegal_move_completed(e, player, count, &description)
            .await
            .expect("IllegalMoveCompleted");
        b.announce_all(e).await.expect("property changes");
    }

    /// Offers a claim.
    pub async fn offer_claim(&self, name: &str, player: &str, kind: &str, detail: &str) {
        let iface = self.board(name).await;
        let mut b = iface.get_mut().await;
        b.claims.push((player.into(), kind.into(), detail.into()));
        b.claims_changed(iface.signal_emitter())
            .await
            .expect("Claims changed");
    }

    /// `player`'s flag falls: FlagFell, then the game ends on time.
    pub async fn flag(&self, name: &str, player: &str) {
        let iface = self.board(name).await;
        let mut b = iface.get_mut().await;
        if player == "white" {
            b.white_ms = 0;
        } else {
            b.black_ms = 0;
        }
        let e = iface.signal_emitter();
        Board::flag_fell(e, player).await.expect("FlagFell");
        let result = if player == "white" { "0-1" } else { "1-0" };
        b.finish(result, "time-forfeit", e)
            .await
            .expect("GameEnded");
    }

    /// A gap opens on board `name`: `what` says what the daemon is doing about it.
    pub async fn open_gap(&self, name: &str, what: &str) {
        let iface = self.board(name).await;
        let mut b = iface.get_mut().await;
        b.gap = what.into();
        b.gap_changed(iface.signal_emitter())
            .await
            .expect("Gap changed");
    }

    /// Adds a board at run time (InterfacesAdded).
    pub async fn add(&self, name: &str, port: &str) {
        self.conn
            .object_server()
            .at(path_of(name), Board::new(name, port))
            .await
            .expect("add board");
    }
}

/// A board's object path: the contract's object id of its name under the board prefix.
pub fn path_of(name: &str) -> String {
    board_path(&object_id(name))
}
