//! The D-Bus objects of contract section 2: the board interface `org.eboardd.Bridge1.Board`,
//! its named errors, and [`Publisher`], which turns session events into signals and view
//! changes into `PropertiesChanged`.
//!
//! The board object holds no game state of its own: properties are read from a snapshot the
//! board task keeps up to date ([`Shared`]), and methods are forwarded to the board task,
//! which owns the session. The snapshot is behind a plain mutex rather than the object
//! server's interface lock so that the board task can publish while a method call waits
//! for it (the method's reply is sent after the events it caused are published).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{mpsc, oneshot};
use zbus::Variant as Value;
use zbus::object_server::SignalEmitter;
use zbus::{interface, names::InterfaceName};

use crate::session::{Command, Event, View};

use crate::vocab::CommandError;

/// The board interface's name.
pub const BOARD_INTERFACE: &str = "org.eboardd.Bridge1.Board";
/// The manager interface's name.
pub const MANAGER_INTERFACE: &str = "org.eboardd.Bridge1";
/// The well-known bus name.
pub const BUS_NAME: &str = "org.eboardd.Bridge1";
/// The manager object's path.
pub const MANAGER_PATH: &str = "/org/eboardd/Bridge1";

/// The object path of the board with object id `id`.
pub fn board_path(id: &str) -> String {
    format!("{MANAGER_PATH}/Board/{id}")
}

/// Named errors `org.eboardd.Bridge1.Error.*`.
#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.eboardd.Bridge1.Error")]
pub enum BridgeError {
    #[zbus(error)]
    ZBus(zbus::Error),
    InvalidFen(String),
    InvalidArgument(String),
    NothingToTakeBack(String),
    ClaimNotAvailable(String),
    ListenOnly(String),
    NoClock(String),
    ClockTimeout(String),
}

impl From<CommandError> for BridgeError {
    fn from(e: CommandError) -> Self {
        match e {
            CommandError::InvalidFen(m) => BridgeError::InvalidFen(m),
            CommandError::InvalidArgument(m) => BridgeError::InvalidArgument(m),
            CommandError::NothingToTakeBack(m) => BridgeError::NothingToTakeBack(m),
            CommandError::ClaimNotAvailable(m) => BridgeError::ClaimNotAvailable(m),
            CommandError::ListenOnly(m) => BridgeError::ListenOnly(m),
            CommandError::NoClock(m) => BridgeError::NoClock(m),
            CommandError::ClockTimeout(m) => BridgeError::ClockTimeout(m),
        }
    }
}

/// What the board's properties show: the session's view plus the serial link's facts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    pub name: String,
    pub port: String,
    pub connected: bool,
    pub view: View,
}

/// The snapshot shared between the board object and the board task.
#[derive(Debug, Clone, Default)]
pub struct Shared(Arc<Mutex<Snapshot>>);

impl Shared {
    pub fn new(snapshot: Snapshot) -> Self {
        Shared(Arc::new(Mutex::new(snapshot)))
    }

    /// The snapshot; a poisoned lock still holds a consistent value (every write is a
    /// single assignment), so it is used as is.
    pub fn lock(&self) -> MutexGuard<'_, Snapshot> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A method call forwarded to the board task.
pub struct CommandRequest {
    pub command: Command,
    pub reply: oneshot::Sender<Result<(), CommandError>>,
}

/// `org.eboardd.Bridge1.Board` on `/org/eboardd/Bridge1/Board/<id>`.
pub struct BoardObject {
    shared: Shared,
    commands: mpsc::Sender<CommandRequest>,
}

impl BoardObject {
    pub fn new(shared: Shared, commands: mpsc::Sender<CommandRequest>) -> Self {
        BoardObject { shared, commands }
    }

    async fn run(&self, command: Command) -> Result<(), BridgeError> {
        let (reply, answer) = oneshot::channel();
        let gone = || {
            BridgeError::ZBus(zbus::Error::Failure(
                "the board is being removed; try again once it is served".into(),
            ))
        };
        self.commands
            .send(CommandRequest { command, reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?.map_err(BridgeError::from)
    }

    fn view<T>(&self, f: impl FnOnce(&Snapshot) -> T) -> T {
        f(&self.shared.lock())
    }
}

#[interface(name = "org.eboardd.Bridge1.Board", introspection_docs = false)]
impl BoardObject {
    async fn new_game(&self) -> Result<(), BridgeError> {
        self.run(Command::NewGame).await
    }

    async fn set_position(&self, fen: String) -> Result<(), BridgeError> {
        self.run(Command::SetPosition(fen)).await
    }

    async fn set_tags(&self, tags: HashMap<String, String>) -> Result<(), BridgeError> {
        let mut tags: Vec<(String, String)> = tags.into_iter().collect();
        // A dict has no order on the wire; sorting keeps the journal deterministic.
        tags.sort();
        self.run(Command::SetTags(tags)).await
    }

    async fn set_rules(&self, rules: String) -> Result<(), BridgeError> {
        self.run(Command::set_rules(&rules)?).await
    }

    async fn take_back(&self) -> Result<(), BridgeError> {
        self.run(Command::TakeBack).await
    }

    async fn accept_claim(
        &self,
        player: String,
        kind: String,
        detail: String,
    ) -> Result<(), BridgeError> {
        self.run(Command::accept_claim(&player, &kind, detail)?)
            .await
    }

    async fn adjudicate(&self, result: String, reason: String) -> Result<(), BridgeError> {
        self.run(Command::adjudicate(&result, reason)?).await
    }

    async fn resolve_gap(&self, moves: Vec<String>) -> Result<(), BridgeError> {
        self.run(Command::ResolveGap(moves)).await
    }

    async fn show_clock_message(&self, text: String) -> Result<(), BridgeError> {
        self.run(Command::ShowClockMessage(text)).await
    }

    async fn reject_claim(
        &self,
        player: String,
        kind: String,
        detail: String,
    ) -> Result<(), BridgeError> {
        self.run(Command::reject_claim(&player, &kind, detail)?)
            .await
    }

    #[zbus(property)]
    fn name(&self) -> String {
        self.view(|s| s.name.clone())
    }
    #[zbus(property)]
    fn number(&self) -> u32 {
        self.view(|s| s.view.number)
    }
    #[zbus(property)]
    fn variant(&self) -> String {
        self.view(|s| s.view.variant.clone())
    }
    #[zbus(property)]
    fn port(&self) -> String {
        self.view(|s| s.port.clone())
    }
    #[zbus(property)]
    fn connected(&self) -> bool {
        self.view(|s| s.connected)
    }
    #[zbus(property)]
    fn serial_number(&self) -> String {
        self.view(|s| s.view.serial_number.clone())
    }
    #[zbus(property)]
    fn firmware_version(&self) -> String {
        self.view(|s| s.view.firmware_version.clone())
    }
    #[zbus(property)]
    fn rules(&self) -> String {
        self.view(|s| s.view.rules.clone())
    }
    #[zbus(property)]
    fn edition(&self) -> String {
        self.view(|s| s.view.edition.clone())
    }
    #[zbus(property)]
    fn state(&self) -> String {
        self.view(|s| s.view.state.clone())
    }
    #[zbus(property)]
    fn fen(&self) -> String {
        self.view(|s| s.view.fen.clone())
    }
    #[zbus(property)]
    fn placement(&self) -> String {
        self.view(|s| s.view.placement.clone())
    }
    #[zbus(property)]
    fn in_sync(&self) -> bool {
        self.view(|s| s.view.in_sync)
    }
    #[zbus(property)]
    fn turn(&self) -> String {
        self.view(|s| s.view.turn.clone())
    }
    #[zbus(property)]
    fn moves(&self) -> Vec<String> {
        self.view(|s| s.view.moves.clone())
    }
    #[zbus(property)]
    fn pgn(&self) -> String {
        self.view(|s| s.view.pgn.clone())
    }
    #[zbus(property)]
    fn clock_connected(&self) -> bool {
        self.view(|s| s.view.clock_connected)
    }
    #[zbus(property)]
    fn white_time_ms(&self) -> u64 {
        self.view(|s| s.view.white_time_ms)
    }
    #[zbus(property)]
    fn black_time_ms(&self) -> u64 {
        self.view(|s| s.view.black_time_ms)
    }
    #[zbus(property)]
    fn clock_running(&self) -> String {
        self.view(|s| s.view.clock_running.clone())
    }
    #[zbus(property)]
    fn claims(&self) -> Vec<(String, String, String)> {
        self.view(|s| s.view.claims.clone())
    }
    #[zbus(property)]
    fn pending_illegal(&self) -> String {
        self.view(|s| s.view.pending_illegal.clone())
    }
    #[zbus(property)]
    fn gap(&self) -> String {
        self.view(|s| s.view.gap.clone())
    }
    #[zbus(property)]
    fn illegal_moves(&self) -> (u32, u32) {
        self.view(|s| s.view.illegal_moves)
    }
    #[zbus(property)]
    fn result(&self) -> String {
        self.view(|s| s.view.result.clone())
    }
    #[zbus(property)]
    fn termination(&self) -> String {
        self.view(|s| s.view.termination.clone())
    }

    #[zbus(signal)]
    async fn game_started(emitter: &SignalEmitter<'_>, fen: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    #[allow(clippy::too_many_arguments)]
    async fn move_played(
        emitter: &SignalEmitter<'_>,
        ply: u32,
        san: &str,
        uci: &str,
        fen: &str,
        white_ms: u64,
        black_ms: u64,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn move_retracted(emitter: &SignalEmitter<'_>, ply: u32, fen: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn illegal_placement(
        emitter: &SignalEmitter<'_>,
        player: &str,
        description: &str,
        placement: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn illegal_move_completed(
        emitter: &SignalEmitter<'_>,
        player: &str,
        count: u32,
        description: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn flag_fell(emitter: &SignalEmitter<'_>, player: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn game_ended(
        emitter: &SignalEmitter<'_>,
        result: &str,
        termination: &str,
    ) -> zbus::Result<()>;
}

/// Publishes one board's events and property changes on its object.
pub struct Publisher {
    emitter: SignalEmitter<'static>,
    shared: Shared,
    /// What was last announced; the base of the next `PropertiesChanged`.
    last: Snapshot,
}

impl Publisher {
    pub fn new(emitter: SignalEmitter<'static>, shared: Shared) -> Self {
        let last = shared.lock().clone();
        Publisher {
            emitter,
            shared,
            last,
        }
    }

    /// Update the snapshot, emit the events as signals (in order), then one
    /// `PropertiesChanged` naming exactly the properties that differ from the last one.
    pub async fn publish(&mut self, events: &[Event], view: &View, connected: bool) {
        let next = {
            let mut snap = self.shared.lock();
            let same = snap.view == *view && snap.connected == connected;
            if same && events.is_empty() {
                // The common tick: nothing to say.
                return;
            }
            if snap.view != *view {
                snap.view = view.clone();
            }
            snap.connected = connected;
            snap.clone()
        };
        for event in events {
            if let Err(e) = self.signal(event).await {
                tracing::warn!("cannot emit a signal: {e}");
            }
        }
        let changed = changed_properties(&self.last, &next);
        if !changed.is_empty() {
            let names: Vec<&str> = changed.iter().map(|(n, _)| *n).collect();
            tracing::trace!(?names, "properties changed");
            let map: HashMap<&str, Value<'_>> = changed.into_iter().collect();
            let iface = InterfaceName::from_static_str_unchecked(BOARD_INTERFACE);
            if let Err(e) = zbus::fdo::Properties::properties_changed(
                &self.emitter,
                iface,
                map,
                Cow::Borrowed(&[]),
            )
            .await
            {
                tracing::warn!("cannot emit PropertiesChanged: {e}");
            }
        }
        self.last = next;
    }

    async fn signal(&self, event: &Event) -> zbus::Result<()> {
        let e = &self.emitter;
        match event {
            Event::GameStarted { fen } => BoardObject::game_started(e, fen).await,
            Event::MovePlayed {
                ply,
                san,
                uci,
                fen,
                white_ms,
                black_ms,
            } => BoardObject::move_played(e, *ply, san, uci, fen, *white_ms, *black_ms).await,
            Event::MoveRetracted { ply, fen } => BoardObject::move_retracted(e, *ply, fen).await,
            Event::IllegalPlacement {
                player,
                description,
                placement,
            } => BoardObject::illegal_placement(e, player.as_str(), description, placement).await,
            Event::IllegalMoveCompleted {
                player,
                count,
                description,
            } => BoardObject::illegal_move_completed(e, player.as_str(), *count, description).await,
            Event::FlagFell { player } => BoardObject::flag_fell(e, player.as_str()).await,
            Event::GameEnded {
                result,
                termination,
            } => BoardObject::game_ended(e, result.as_str(), termination.as_str()).await,
            Event::Record(_) => Ok(()),
        }
    }
}

/// The board properties whose values differ between `old` and `new`, with their new values.
pub fn changed_properties<'a>(old: &Snapshot, new: &'a Snapshot) -> Vec<(&'static str, Value<'a>)> {
    let mut out: Vec<(&'static str, Value<'a>)> = Vec::new();
    macro_rules! cmp {
        ($name:literal, $($field:ident).+) => {
            if old.$($field).+ != new.$($field).+ {
                out.push(($name, Value::from(&new.$($field).+)));
            }
        };
    }
    macro_rules! cmp_copy {
        ($name:literal, $($field:ident).+) => {
            if old.$($field).+ != new.$($field).+ {
                out.push(($name, Value::from(new.$($field).+)));
            }
        };
    }
    cmp!("Name", name);
    cmp_copy!("Number", view.number);
    cmp!("Variant", view.variant);
    cmp!("Port", port);
    cmp_copy!("Connected", connected);
    cmp!("SerialNumber", view.serial_number);
    cmp!("FirmwareVersion", view.firmware_version);
    cmp!("Rules", view.rules);
    cmp!("Edition", view.edition);
    cmp!("State", view.state);
    cmp!("Fen", view.fen);
    cmp!("Placement", view.placement);
    cmp_copy!("InSync", view.in_sync);
    cmp!("Turn", view.turn);
    if old.view.moves != new.view.moves {
        out.push(("Moves", Value::from(new.view.moves.clone())));
    }
    cmp!("Pgn", view.pgn);
    cmp_copy!("ClockConnected", view.clock_connected);
    cmp_copy!("WhiteTimeMs", view.white_time_ms);
    cmp_copy!("BlackTimeMs", view.black_time_ms);
    cmp!("ClockRunning", view.clock_running);
    if old.view.claims != new.view.claims {
        out.push(("Claims", Value::from(new.view.claims.clone())));
    }
    cmp!("PendingIllegal", view.pending_illegal);
    cmp!("Gap", view.gap);
    if old.view.illegal_moves != new.view.illegal_moves {
        out.push(("IllegalMoves", Value::from(new.view.illegal_moves)));
    }
    cmp!("Result", view.result);
    cmp!("Termination", view.termination);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_properties_are_named() {
        let old = Snapshot::default();
        let mut new = old.clone();
        assert!(changed_properties(&old, &new).is_empty());
        new.connected = true;
        new.view.fen = "8/8/8/8/8/8/8/8 w - - 0 1".into();
        new.view.illegal_moves = (1, 0);
        new.view.claims = vec![("white".into(), "threefold-repetition".into(), String::new())];
        let names: Vec<_> = changed_properties(&old, &new)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["Connected", "Fen", "Claims", "IllegalMoves"]);
    }

    #[test]
    fn property_values_have_contract_types() {
        let old = Snapshot::default();
        let mut new = old.clone();
        new.view.moves = vec!["e4".into()];
        new.view.white_time_ms = 5;
        new.view.claims = vec![("a".into(), "b".into(), "c".into())];
        new.view.illegal_moves = (0, 2);
        let sigs: Vec<_> = changed_properties(&old, &new)
            .into_iter()
            .map(|(n, v)| (n, v.value_signature().to_string()))
            .collect();
        assert_eq!(
            sigs,
            [
                ("Moves", "as".to_string()),
                ("WhiteTimeMs", "t".into()),
                ("Claims", "a(sss)".into()),
                ("IllegalMoves", "(uu)".into())
            ]
        );
    }
}
