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
use zbus::wire::StructureBuilder;
use zbus::{Structure, interface, names::InterfaceName};

use crate::contract::{BoardProps, Claim, ErrorName};
use crate::session::{Command, Event};

use crate::vocab::CommandError;

// The names and paths are the contract's, written down once in `crate::contract`.
pub use crate::contract::{BOARD_INTERFACE, BUS_NAME, MANAGER_PATH, board_path};

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
    Busy(String),
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
            CommandError::Busy(m) => BridgeError::Busy(m),
        }
    }
}

impl BridgeError {
    /// The error called `name`, with `message`.
    pub fn named(name: ErrorName, message: String) -> Self {
        match name {
            ErrorName::InvalidFen => BridgeError::InvalidFen(message),
            ErrorName::InvalidArgument => BridgeError::InvalidArgument(message),
            ErrorName::NothingToTakeBack => BridgeError::NothingToTakeBack(message),
            ErrorName::ClaimNotAvailable => BridgeError::ClaimNotAvailable(message),
            ErrorName::ListenOnly => BridgeError::ListenOnly(message),
            ErrorName::NoClock => BridgeError::NoClock(message),
            ErrorName::ClockTimeout => BridgeError::ClockTimeout(message),
            ErrorName::Busy => BridgeError::Busy(message),
        }
    }
}

/// The board's properties as last published (the session's view), shared between the board
/// object, which serves them, and the board task, which publishes them. Each publication
/// replaces the whole value, which is never changed in place: the publisher keeps the same
/// value as its base for the next `PropertiesChanged`, without a copy of its own.
#[derive(Debug, Clone, Default)]
pub struct Shared(Arc<Mutex<Arc<BoardProps>>>);

impl Shared {
    pub fn new(snapshot: BoardProps) -> Self {
        Shared(Arc::new(Mutex::new(Arc::new(
            sendable(&snapshot).into_owned(),
        ))))
    }

    /// The snapshot; a poisoned lock still holds a consistent value (every write is a
    /// single assignment), so it is used as is.
    pub fn get(&self) -> Arc<BoardProps> {
        self.lock().clone()
    }

    fn set(&self, props: Arc<BoardProps>) {
        *self.lock() = props;
    }

    fn lock(&self) -> MutexGuard<'_, Arc<BoardProps>> {
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

    fn view<T>(&self, f: impl FnOnce(&BoardProps) -> T) -> T {
        f(&self.shared.get())
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
        self.view(|s| s.number)
    }
    #[zbus(property)]
    fn variant(&self) -> String {
        self.view(|s| s.variant.clone())
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
        self.view(|s| s.serial_number.clone())
    }
    #[zbus(property)]
    fn firmware_version(&self) -> String {
        self.view(|s| s.firmware_version.clone())
    }
    #[zbus(property)]
    fn board_model(&self) -> String {
        self.view(|s| s.board_model.clone())
    }
    #[zbus(property)]
    fn clock_model(&self) -> String {
        self.view(|s| s.clock_model.clone())
    }
    #[zbus(property)]
    fn battery(&self) -> (i32, bool) {
        self.view(|s| s.battery.into())
    }
    #[zbus(property)]
    fn rules(&self) -> String {
        self.view(|s| s.rules.clone())
    }
    #[zbus(property)]
    fn edition(&self) -> String {
        self.view(|s| s.edition.clone())
    }
    #[zbus(property)]
    fn state(&self) -> String {
        self.view(|s| s.state.clone())
    }
    #[zbus(property)]
    fn fen(&self) -> String {
        self.view(|s| s.fen.clone())
    }
    #[zbus(property)]
    fn placement(&self) -> String {
        self.view(|s| s.placement.clone())
    }
    #[zbus(property)]
    fn in_sync(&self) -> bool {
        self.view(|s| s.in_sync)
    }
    #[zbus(property)]
    fn turn(&self) -> String {
        self.view(|s| s.turn.clone())
    }
    #[zbus(property)]
    fn moves(&self) -> Vec<String> {
        self.view(|s| s.moves.clone())
    }
    #[zbus(property)]
    fn pgn(&self) -> String {
        self.view(|s| s.pgn.clone())
    }
    #[zbus(property)]
    fn clock_connected(&self) -> bool {
        self.view(|s| s.clock_connected)
    }
    #[zbus(property)]
    fn white_time_ms(&self) -> u64 {
        self.view(|s| s.white_time_ms)
    }
    #[zbus(property)]
    fn black_time_ms(&self) -> u64 {
        self.view(|s| s.black_time_ms)
    }
    #[zbus(property)]
    fn clock_running(&self) -> String {
        self.view(|s| s.clock_running.clone())
    }
    #[zbus(property)]
    fn claims(&self) -> Vec<(String, String, String)> {
        self.view(|s| s.claims.iter().map(Claim::to_tuple).collect())
    }
    #[zbus(property)]
    fn pending_illegal(&self) -> String {
        self.view(|s| s.pending_illegal.clone())
    }
    #[zbus(property)]
    fn gap(&self) -> String {
        self.view(|s| s.gap.clone())
    }
    #[zbus(property)]
    fn illegal_moves(&self) -> (u32, u32) {
        self.view(|s| s.illegal_moves.into())
    }
    #[zbus(property)]
    fn result(&self) -> String {
        self.view(|s| s.result.clone())
    }
    #[zbus(property)]
    fn termination(&self) -> String {
        self.view(|s| s.termination.clone())
    }

    // The signals, declared for the interface's introspection (checked against
    // `dbus/*.xml` by `daemon_introspection`). They are emitted by `Publisher::signal` from
    // the contract's table ([`signal_body`]), which writes the same bytes these would.
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
    /// What was last announced (the value [`Shared`] serves); the base of the next
    /// `PropertiesChanged`.
    last: Arc<BoardProps>,
}

impl Publisher {
    pub fn new(emitter: SignalEmitter<'static>, shared: Shared) -> Self {
        let last = shared.get();
        Publisher {
            emitter,
            shared,
            last,
        }
    }

    /// Update the snapshot, emit the events as signals (in order), then one
    /// `PropertiesChanged` naming exactly the properties that differ from the last one.
    pub async fn publish(&mut self, events: &[Event], view: &BoardProps) {
        // The common tick: nothing happened and nothing changed, so there is nothing to copy,
        // check or say. (A view holding a NUL never equals what was sent, which had it
        // replaced: it goes the long way, and finds nothing changed.)
        let same = *self.last == *view;
        if same && events.is_empty() {
            return;
        }
        let next = if same {
            self.last.clone()
        } else {
            let next = Arc::new(sendable(view).into_owned());
            self.shared.set(next.clone());
            next
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

    /// Emits the signal `event` is (nothing for a journal-only event), built by
    /// [`signal_body`] from the contract's table.
    async fn signal(&self, event: &Event) -> zbus::Result<()> {
        let Some(member) = event.member() else {
            return Ok(());
        };
        let body = signal_body(event).ok_or_else(|| {
            zbus::Error::Failure(format!("{member}: no body of the contract's signature"))
        })?;
        self.emitter.emit(BOARD_INTERFACE, member, &body).await
    }
}

/// The body of the signal `event` is published as: its arguments (by the contract's names,
/// `session::Event::signal_args`) in the order and with the D-Bus types of
/// `contract::SIGNALS`. The one mapping from events to signals; its inverse is
/// `client::event::board_signal`. `None` for an event that is not a signal.
pub fn signal_body(event: &Event) -> Option<Structure<'static>> {
    let signal = event.signal()?;
    let (_, args) = event.signal_args()?;
    let mut body = StructureBuilder::new();
    for (name, signature) in signal.args {
        let field = match args.get(*name)? {
            serde_json::Value::String(s) => Value::from(dbus_text(s).into_owned()),
            // The contract's numbers are unsigned: `u` (32 bits) or `t` (64 bits).
            serde_json::Value::Number(n) if *signature == "u" => {
                Value::from(u32::try_from(n.as_u64()?).ok()?)
            }
            serde_json::Value::Number(n) => Value::from(n.as_u64()?),
            serde_json::Value::Null
            | serde_json::Value::Bool(_)
            | serde_json::Value::Array(_)
            | serde_json::Value::Object(_) => return None,
        };
        // An argument of a type the contract does not give it is never sent.
        if field.value_signature().to_string() != *signature {
            return None;
        }
        body = body.append_field(field);
    }
    body.build().ok()
}

// ----- D-Bus's rules for strings ------------------------------------------------------------
//
// A D-Bus string is valid UTF-8 without NUL; a message that breaks the rule makes the bus
// drop the sender's connection, that is the daemon and every board with it. Every Rust `str`
// is UTF-8, so NUL is what must not get through. The decoder already turns a board's bytes
// into printable text; this is the last check before anything is sent, whatever its source
// (a board, a journal, a configuration, a method's argument).

/// What a NUL becomes on the bus: U+FFFD, the replacement character.
const NOT_SENDABLE: &str = "\u{FFFD}";

/// Whether `s` may travel as a D-Bus string (valid UTF-8, which a `str` is, and no NUL).
pub fn is_dbus_text(s: &str) -> bool {
    !s.contains('\0')
}

/// `s` as a D-Bus string: unchanged when it is one, else every NUL replaced by U+FFFD (and
/// a warning logged, since something upstream let it through). The one function every string
/// property and signal argument passes through before it is sent.
pub fn dbus_text(s: &str) -> Cow<'_, str> {
    if is_dbus_text(s) {
        return Cow::Borrowed(s);
    }
    tracing::warn!("a NUL in a string meant for the bus was replaced by U+FFFD");
    Cow::Owned(s.replace('\0', NOT_SENDABLE))
}

/// `props` with every string made sendable by [`dbus_text`]; borrowed (no copy) in the usual
/// case where all of them already are.
pub fn sendable(props: &BoardProps) -> Cow<'_, BoardProps> {
    if props.texts().all(|s| is_dbus_text(s)) {
        return Cow::Borrowed(props);
    }
    let mut fixed = props.clone();
    for s in fixed.texts_mut() {
        if let Cow::Owned(clean) = dbus_text(s) {
            *s = clean;
        }
    }
    Cow::Owned(fixed)
}

/// Whether every string inside `value` (at any depth) is a D-Bus string ([`is_dbus_text`]):
/// the check the fuzz target and the tests make on what is about to be sent.
pub fn holds_only_dbus_text(value: &Value<'_>) -> bool {
    match value {
        Value::Str(s) => is_dbus_text(s.as_str()),
        Value::Variant(inner) => holds_only_dbus_text(inner),
        Value::Array(a) => a.iter().all(holds_only_dbus_text),
        Value::Structure(s) => s.fields().iter().all(holds_only_dbus_text),
        Value::Dict(d) => d
            .iter()
            .all(|(k, v)| holds_only_dbus_text(k) && holds_only_dbus_text(v)),
        // Paths and signatures are checked by zbus when they are made; numbers hold no text.
        _ => true,
    }
}

/// The value of the board property `name` (a name of [`crate::contract::BOARD_PROPERTIES`])
/// in `snap`, with the contract's D-Bus type; `None` for a name that is not a board property.
pub fn property_value<'a>(v: &'a BoardProps, name: &str) -> Option<Value<'a>> {
    Some(match name {
        "Name" => Value::from(&v.name),
        "Number" => Value::from(v.number),
        "Variant" => Value::from(&v.variant),
        "Port" => Value::from(&v.port),
        "Connected" => Value::from(v.connected),
        "SerialNumber" => Value::from(&v.serial_number),
        "FirmwareVersion" => Value::from(&v.firmware_version),
        "BoardModel" => Value::from(&v.board_model),
        "ClockModel" => Value::from(&v.clock_model),
        "Battery" => Value::from(<(i32, bool)>::from(v.battery)),
        "Rules" => Value::from(&v.rules),
        "Edition" => Value::from(&v.edition),
        "State" => Value::from(&v.state),
        "Fen" => Value::from(&v.fen),
        "Placement" => Value::from(&v.placement),
        "InSync" => Value::from(v.in_sync),
        "Turn" => Value::from(&v.turn),
        "Moves" => Value::from(v.moves.clone()),
        "Pgn" => Value::from(&v.pgn),
        "ClockConnected" => Value::from(v.clock_connected),
        "WhiteTimeMs" => Value::from(v.white_time_ms),
        "BlackTimeMs" => Value::from(v.black_time_ms),
        "ClockRunning" => Value::from(&v.clock_running),
        "Claims" => Value::from(v.claims.iter().map(Claim::to_tuple).collect::<Vec<_>>()),
        "PendingIllegal" => Value::from(&v.pending_illegal),
        "Gap" => Value::from(&v.gap),
        "IllegalMoves" => Value::from(<(u32, u32)>::from(v.illegal_moves)),
        "Result" => Value::from(&v.result),
        "Termination" => Value::from(&v.termination),
        _ => return None,
    })
}

/// The board properties whose values differ between `old` and `new`, with their new values,
/// in the contract's table order.
pub fn changed_properties<'a>(
    old: &BoardProps,
    new: &'a BoardProps,
) -> Vec<(&'static str, Value<'a>)> {
    if old == new {
        // Signals without a property change: nothing to build or compare.
        return Vec::new();
    }
    crate::contract::BOARD_PROPERTIES
        .iter()
        .filter(|p| !same_property(old, new, p.name))
        .filter_map(|p| Some((p.name, property_value(new, p.name)?)))
        .collect()
}

/// Whether the property `name` has the same value in `old` and `new`, compared on the fields:
/// a D-Bus value ([`property_value`]) is a copy of the text (the whole PGN, the move list),
/// and a clock's second changes one number. A property not listed here is compared on its
/// D-Bus values: slower, never wrong.
fn same_property(old: &BoardProps, new: &BoardProps, name: &str) -> bool {
    match name {
        "Name" => old.name == new.name,
        "Number" => old.number == new.number,
        "Variant" => old.variant == new.variant,
        "Port" => old.port == new.port,
        "Connected" => old.connected == new.connected,
        "SerialNumber" => old.serial_number == new.serial_number,
        "FirmwareVersion" => old.firmware_version == new.firmware_version,
        "BoardModel" => old.board_model == new.board_model,
        "ClockModel" => old.clock_model == new.clock_model,
        "Battery" => old.battery == new.battery,
        "Rules" => old.rules == new.rules,
        "Edition" => old.edition == new.edition,
        "State" => old.state == new.state,
        "Fen" => old.fen == new.fen,
        "Placement" => old.placement == new.placement,
        "InSync" => old.in_sync == new.in_sync,
        "Turn" => old.turn == new.turn,
        "Moves" => old.moves == new.moves,
        "Pgn" => old.pgn == new.pgn,
        "ClockConnected" => old.clock_connected == new.clock_connected,
        "WhiteTimeMs" => old.white_time_ms == new.white_time_ms,
        "BlackTimeMs" => old.black_time_ms == new.black_time_ms,
        "ClockRunning" => old.clock_running == new.clock_running,
        "Claims" => old.claims == new.claims,
        "PendingIllegal" => old.pending_illegal == new.pending_illegal,
        "Gap" => old.gap == new.gap,
        "IllegalMoves" => old.illegal_moves == new.illegal_moves,
        "Result" => old.result == new.result,
        "Termination" => old.termination == new.termination,
        _ => property_value(old, name) == property_value(new, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_properties_are_named() {
        let old = BoardProps::default();
        let mut new = old.clone();
        assert!(changed_properties(&old, &new).is_empty());
        new.connected = true;
        new.fen = "8/8/8/8/8/8/8/8 w - - 0 1".into();
        new.illegal_moves = (1, 0).into();
        new.claims = vec![("white".into(), "threefold-repetition".into(), String::new()).into()];
        let names: Vec<_> = changed_properties(&old, &new)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["Connected", "Fen", "Claims", "IllegalMoves"]);
    }

    /// The fast comparison says what comparing the D-Bus values says, for every property.
    #[test]
    #[allow(clippy::field_reassign_with_default)] // see below: fields a later change adds
    fn same_property_agrees_with_the_dbus_values() {
        let old = BoardProps::default();
        // Field by field, so that a property added later keeps the test compiling (it is
        // then compared on its D-Bus values, which agree with themselves).
        let mut new = BoardProps::default();
        new.name = "n".into();
        new.number = 1;
        new.variant = "v".into();
        new.port = "p".into();
        new.connected = true;
        new.serial_number = "s".into();
        new.firmware_version = "f".into();
        new.board_model = "dgt-bluetooth".into();
        new.clock_model = "dgt-xl".into();
        new.battery = (42, true).into();
        new.rules = "r".into();
        new.edition = "e".into();
        new.state = "st".into();
        new.fen = "fen".into();
        new.placement = "pl".into();
        new.in_sync = true;
        new.turn = "t".into();
        new.moves = vec!["e4".into()];
        new.pgn = "pgn".into();
        new.clock_connected = true;
        new.white_time_ms = 1;
        new.black_time_ms = 2;
        new.clock_running = "c".into();
        new.claims = vec![("a".into(), "b".into(), "c".into()).into()];
        new.pending_illegal = "pi".into();
        new.gap = "g".into();
        new.illegal_moves = (1, 2).into();
        new.result = "res".into();
        new.termination = "term".into();
        let mut differing = 0;
        for p in crate::contract::BOARD_PROPERTIES {
            let by_value = property_value(&old, p.name) == property_value(&new, p.name);
            differing += usize::from(!by_value);
            assert_eq!(same_property(&old, &new, p.name), by_value, "{}", p.name);
            assert!(same_property(&new, &new.clone(), p.name), "{}", p.name);
        }
        assert!(differing >= 26, "only {differing} properties were changed");
        new = old.clone();
        assert!(changed_properties(&old, &new).is_empty());
    }

    #[test]
    fn property_values_have_contract_types() {
        let old = BoardProps::default();
        let mut new = old.clone();
        new.moves = vec!["e4".into()];
        new.white_time_ms = 5;
        new.claims = vec![("a".into(), "b".into(), "c".into()).into()];
        new.illegal_moves = (0, 2).into();
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

    /// Every signal goes out with the contract's signature, and the client's decoder reads
    /// back the very event it was published from.
    #[test]
    fn every_event_signal_has_a_body_of_its_contract_signature() {
        for event in crate::session::signal::every_signal() {
            let signal = event.signal().expect("a signal");
            let body = signal_body(&event).unwrap_or_else(|| panic!("{} has no body", signal.name));
            let msg = zbus::Message::signal(board_path("b"), BOARD_INTERFACE, signal.name)
                .build(&body)
                .expect("a body");
            let types: Vec<String> = body
                .fields()
                .iter()
                .map(|f| f.value_signature().to_string())
                .collect();
            let want: Vec<&str> = signal.args.iter().map(|(_, t)| *t).collect();
            assert_eq!(types, want, "{}", signal.name);
            assert_eq!(
                crate::client::event::board_signal(signal.name, &msg.body()),
                Some(event)
            );
        }
        let record = Event::Record(crate::session::RecordFact::Comment { text: "x".into() });
        assert!(signal_body(&record).is_none());
    }

    /// The last check before sending: a NUL anywhere in the properties or a signal's
    /// arguments (which the bus would answer by dropping the daemon) never goes out.
    #[test]
    fn strings_with_a_nul_are_made_sendable_before_they_go_out() {
        assert!(is_dbus_text("13116 ♔") && !is_dbus_text("12\u{0}45"));
        assert_eq!(dbus_text("12\u{0}45"), "12\u{FFFD}45");
        assert!(matches!(dbus_text("13116"), Cow::Borrowed(_)));

        let clean = BoardProps::default();
        assert!(matches!(sendable(&clean), Cow::Borrowed(_)));
        let mut dirty = clean.clone();
        dirty.serial_number = "12\u{0}45".into();
        dirty.moves = vec!["e4\u{0}".into()];
        dirty.claims = vec![("white".into(), "x".into(), "\u{0}".into()).into()];
        let fixed = sendable(&dirty);
        assert!(fixed.texts().all(|s| is_dbus_text(s)), "{fixed:?}");
        assert_eq!(fixed.serial_number, "12\u{FFFD}45");
        for p in crate::contract::BOARD_PROPERTIES {
            let unsafe_value = property_value(&dirty, p.name).unwrap();
            let safe_value = property_value(&fixed, p.name).unwrap();
            assert!(holds_only_dbus_text(&safe_value), "{}", p.name);
            if ["SerialNumber", "Moves", "Claims"].contains(&p.name) {
                assert!(
                    !holds_only_dbus_text(&unsafe_value),
                    "{} is checked",
                    p.name
                );
            }
        }

        let event = Event::GameStarted {
            fen: "8/8/8/8/8/8/8/8 w - - 0 1\u{0}".into(),
        };
        let body = signal_body(&event).expect("a body");
        assert!(body.fields().iter().all(holds_only_dbus_text));
    }

    #[test]
    fn every_table_property_has_a_value_of_its_type() {
        let snap = BoardProps::default();
        for p in crate::contract::BOARD_PROPERTIES {
            let v = property_value(&snap, p.name)
                .unwrap_or_else(|| panic!("{} has no value in the properties", p.name));
            assert_eq!(v.value_signature().to_string(), p.signature, "{}", p.name);
        }
        assert!(property_value(&snap, "Version").is_none());
    }
}
