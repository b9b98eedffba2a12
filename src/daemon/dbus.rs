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
use std::fmt::Write;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{mpsc, oneshot};
use zbus::Variant as Value;
use zbus::message::Header;
use zbus::names::MemberName;
use zbus::object_server::{DispatchResult, Interface, SignalEmitter};
use zbus::{BoxDBusError, Connection, Message, ObjectServer, OwnedVariant, fdo};
use zbus::{interface, names::InterfaceName};

use eboard_core::contract::{BOARD_PROPERTIES, BoardProps, ErrorName, WireValue};
use eboard_core::session::{Command, Event};

use eboard_core::vocab::CommandError;

mod wire_body;
pub use wire_body::{PROPERTIES_CHANGED, PROPERTIES_INTERFACE, PropertiesChangedBody, SignalBody};

// The names and paths are the contract's, written down once in `eboard_core::contract`.
pub use eboard_core::contract::{BOARD_INTERFACE, BUS_NAME, MANAGER_PATH, board_path};

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

/// `org.eboardd.Bridge1.Board` on `/org/eboardd/Bridge1/Board/<id>`: the methods and signals
/// of [`BoardMethods`], and the properties served from the contract's table
/// ([`BOARD_PROPERTIES`]) over the snapshot the board task publishes.
///
/// The properties are not `#[zbus(property)]` getters: zbus's `#[interface]` needs one
/// written-out method per property, which would be a second list of them. This type answers
/// `Get`, `GetAll` and the introspection of the properties from the table (the values through
/// [`property_value`]) and hands everything else to the `#[interface]` of [`BoardMethods`],
/// so adding a property to the table is all the daemon needs. The introspection is written
/// in zbus's own form (each property on one line, sorted by name, after the methods and
/// signals), so it is the same XML, byte for byte, as zbus's getters wrote.
pub struct BoardObject {
    shared: Shared,
    methods: BoardMethods,
}

impl BoardObject {
    pub fn new(shared: Shared, commands: mpsc::Sender<CommandRequest>) -> Self {
        BoardObject {
            shared,
            methods: BoardMethods { commands },
        }
    }
}

/// The methods of the board interface, forwarded to the board task, and its signals (declared
/// here for the introspection; emitted by [`Publisher`]).
pub struct BoardMethods {
    commands: mpsc::Sender<CommandRequest>,
}

impl BoardMethods {
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
}

#[interface(name = "org.eboardd.Bridge1.Board", introspection_docs = false)]
impl BoardMethods {
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

    // The signals, declared for the interface's introspection (checked against
    // `dbus/*.xml` by `daemon_introspection`). They are emitted by `Publisher::signal` from
    // the contract's table ([`SignalBody`]), which writes the same bytes these would.
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

#[async_trait::async_trait]
impl Interface for BoardObject {
    fn name() -> InterfaceName<'static> {
        BoardMethods::name()
    }

    fn spawn_tasks_for_methods(&self) -> bool {
        self.methods.spawn_tasks_for_methods()
    }

    async fn get(
        &self,
        property_name: &str,
        _server: &ObjectServer,
        _connection: &Connection,
        _header: Option<&Header<'_>>,
        _emitter: &SignalEmitter<'_>,
    ) -> Option<Result<OwnedVariant, BoxDBusError>> {
        let props = self.shared.get();
        let value = property_value(&props, property_name)?;
        Some(value.try_to_owned().map_err(|e| {
            let error: BoxDBusError = Box::new(fdo::Error::Failed(e.to_string()));
            error
        }))
    }

    async fn get_all(
        &self,
        _server: &ObjectServer,
        _connection: &Connection,
        _header: Option<&Header<'_>>,
        _emitter: &SignalEmitter<'_>,
    ) -> fdo::Result<HashMap<String, OwnedVariant>> {
        let props = self.shared.get();
        BOARD_PROPERTIES
            .iter()
            .filter_map(|p| Some((p.name, property_value(&props, p.name)?)))
            .map(|(name, value)| {
                let value = value
                    .try_to_owned()
                    .map_err(|e| fdo::Error::Failed(format!("{name}: {e}")))?;
                Ok((name.to_owned(), value))
            })
            .collect()
    }

    // Every property is read-only: `Set` is the methods' interface's, which has no property
    // and so refuses each one as zbus refuses a read-only property (`UnknownProperty`).
    fn set<'call>(
        &'call self,
        property_name: &'call str,
        value: &'call Value<'_>,
        server: &'call ObjectServer,
        connection: &'call Connection,
        header: Option<&'call Header<'_>>,
        emitter: &'call SignalEmitter<'_>,
    ) -> DispatchResult<'call> {
        self.methods
            .set(property_name, value, server, connection, header, emitter)
    }

    async fn set_mut(
        &mut self,
        property_name: &str,
        value: &Value<'_>,
        server: &ObjectServer,
        connection: &Connection,
        header: Option<&Header<'_>>,
        emitter: &SignalEmitter<'_>,
    ) -> Option<Result<(), BoxDBusError>> {
        self.methods
            .set_mut(property_name, value, server, connection, header, emitter)
            .await
    }

    fn call<'call>(
        &'call self,
        server: &'call ObjectServer,
        connection: &'call Connection,
        msg: &'call Message,
        name: MemberName<'call>,
    ) -> DispatchResult<'call> {
        self.methods.call(server, connection, msg, name)
    }

    fn call_mut<'call>(
        &'call mut self,
        server: &'call ObjectServer,
        connection: &'call Connection,
        msg: &'call Message,
        name: MemberName<'call>,
    ) -> DispatchResult<'call> {
        self.methods.call_mut(server, connection, msg, name)
    }

    fn introspect_to_writer(&self, writer: &mut dyn Write, level: usize) {
        let mut members = String::new();
        self.methods.introspect_to_writer(&mut members, level);
        write_with_properties(writer, &members, level, BOARD_PROPERTIES);
    }
}

/// The introspection `members` (an `<interface>` element as zbus wrote it at `level`) with
/// `properties` added as zbus writes read-only properties: one line each, sorted by name,
/// after the methods and signals, just before `</interface>`.
fn write_with_properties(
    writer: &mut dyn Write,
    members: &str,
    level: usize,
    properties: &[eboard_core::contract::Property],
) {
    // Before the line that closes the interface (the end, if zbus ever wrote none).
    let close = members.rfind("</interface>").map_or(members.len(), |at| {
        members[..at].rfind('\n').map_or(0, |n| n + 1)
    });
    let (head, tail) = members.split_at(close);
    let mut properties: Vec<_> = properties.iter().collect();
    properties.sort_unstable_by_key(|p| p.name);
    let mut out = String::from(head);
    for p in properties {
        let _ = writeln!(
            out,
            "{:indent$}<property name=\"{}\" type=\"{}\" access=\"read\"/>",
            "",
            p.name,
            p.signature,
            indent = level + 2
        );
    }
    out.push_str(tail);
    // `Interface` gives no way to report a failed write (zbus's own writer unwraps); the
    // object server writes into a `String`, which cannot fail.
    let _ = writer.write_str(&out);
}

/// Publishes one board's events and property changes on its object.
pub struct Publisher {
    emitter: SignalEmitter<'static>,
    shared: Shared,
    /// What was last announced (the value [`Shared`] serves); the base of the next
    /// `PropertiesChanged`.
    last: Arc<BoardProps>,
    /// The snapshot announced before `last`, kept for its memory: the next change is copied
    /// into it when nobody else holds it any more (a property read in progress may).
    spare: Option<Arc<BoardProps>>,
}

impl Publisher {
    pub fn new(emitter: SignalEmitter<'static>, shared: Shared) -> Self {
        let last = shared.get();
        Publisher {
            emitter,
            shared,
            last,
            spare: None,
        }
    }

    /// A new snapshot holding `view`: the spare one overwritten when it is free, else a copy.
    fn snapshot(&mut self, view: &BoardProps) -> Arc<BoardProps> {
        if let Some(mut spare) = self.spare.take()
            && let Some(props) = Arc::get_mut(&mut spare)
        {
            // Into the spare's own memory (see `BoardProps::clone_from`).
            props.clone_from(view);
            return spare;
        }
        Arc::new(view.clone())
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
            let next = match sendable(view) {
                Cow::Borrowed(view) => self.snapshot(view),
                Cow::Owned(fixed) => Arc::new(fixed),
            };
            self.shared.set(next.clone());
            next
        };
        for event in events {
            if let Err(e) = self.signal(event).await {
                tracing::warn!("cannot emit a signal: {e}");
            }
        }
        // Straight from the snapshot into the message (see `wire_body`), in the table's order.
        let changed = self.last.changes(&next);
        if !changed.is_empty() {
            if tracing::enabled!(tracing::Level::TRACE) {
                let names: Vec<&str> = changed.iter().map(|(n, _)| *n).collect();
                tracing::trace!(?names, "properties changed");
            }
            let body = PropertiesChangedBody {
                interface: BOARD_INTERFACE,
                changed: &changed,
            };
            if let Err(e) = (self.emitter)
                .emit(PROPERTIES_INTERFACE, PROPERTIES_CHANGED, &body)
                .await
            {
                tracing::warn!("cannot emit PropertiesChanged: {e}");
            }
        }
        let before = std::mem::replace(&mut self.last, next);
        if !same {
            self.spare = Some(before);
        }
    }

    /// Emits the signal `event` is (nothing for a journal-only event), its body
    /// ([`SignalBody`]) written from the event with the contract table's types.
    async fn signal(&self, event: &Event) -> zbus::Result<()> {
        let Some(member) = event.member() else {
            return Ok(());
        };
        let body = SignalBody::of(event).ok_or_else(|| {
            zbus::Error::Failure(format!("{member}: no body of the contract's signature"))
        })?;
        // The names are the contract table's, checked once by the introspection test.
        let interface = InterfaceName::from_static_str_unchecked(BOARD_INTERFACE);
        let member = MemberName::from_static_str_unchecked(member);
        self.emitter.emit(interface, member, &body).await
    }
}

/// The body of the signal `event` as a `Structure` of owned values: the way signals were
/// built before [`SignalBody`], kept as the reference its tests compare with. Its arguments
/// are taken from the event with the order and D-Bus types of `contract::SIGNALS`, every
/// string made sendable ([`dbus_text`]). `None` for an event that is not a signal.
#[cfg(test)]
pub fn signal_body(event: &Event) -> Option<zbus::Structure<'static>> {
    let signal = event.signal()?;
    let values = event.signal_values()?;
    if values.len() != signal.args.len() {
        return None;
    }
    let mut body = zbus::wire::StructureBuilder::new();
    for ((_, signature), value) in signal.args.iter().zip(values) {
        // An argument of a type the contract does not give it is never sent.
        if value.signature() != *signature {
            return None;
        }
        let field = match value {
            WireValue::Text(s) => Value::from(dbus_text(s).into_owned()),
            other => variant(other).try_to_owned().ok()?.into(),
        };
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

/// A contract value as zbus sends it. Strings are borrowed, not copied: a property's value
/// is built for every `PropertiesChanged` that names it.
pub fn variant(value: WireValue<'_>) -> Value<'_> {
    match value {
        WireValue::Text(s) => Value::from(s),
        WireValue::U32(n) => Value::from(n),
        WireValue::U64(n) => Value::from(n),
        WireValue::Bool(b) => Value::from(b),
        WireValue::Texts(list) => Value::from(list.iter().map(String::as_str).collect::<Vec<_>>()),
        WireValue::Claims(claims) => Value::from(
            claims
                .iter()
                .map(|c| (c.player.as_str(), c.kind.as_str(), c.detail.as_str()))
                .collect::<Vec<_>>(),
        ),
        WireValue::Counts(counts) => Value::from(<(u32, u32)>::from(counts)),
        WireValue::Battery(battery) => Value::from(<(i32, bool)>::from(battery)),
    }
}

/// The value of the board property `name` (a name of [`eboard_core::contract::BOARD_PROPERTIES`])
/// in `v`, with the contract's D-Bus type; `None` for a name that is not a board property.
pub fn property_value<'a>(v: &'a BoardProps, name: &str) -> Option<Value<'a>> {
    v.wire_value(name).map(variant)
}

/// The board properties whose values differ between `old` and `new`, with their new values
/// as `Variant`s, in the contract's table order ([`BoardProps::changes`]): what a
/// `PropertiesChanged` carried before [`PropertiesChangedBody`], kept as the reference its
/// tests compare with.
#[cfg(test)]
pub fn changed_properties<'a>(
    old: &BoardProps,
    new: &'a BoardProps,
) -> Vec<(&'static str, Value<'a>)> {
    old.changes(new)
        .into_iter()
        .map(|(name, value)| (name, variant(value)))
        .collect()
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

    /// The fast comparison (each field's `==`) says what comparing the D-Bus values says, for
    /// every property.
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
        let same_property = |old: &BoardProps, new: &BoardProps, name: &str| {
            !changed_properties(old, new).iter().any(|(n, _)| *n == name)
        };
        let mut differing = 0;
        for p in eboard_core::contract::BOARD_PROPERTIES {
            let by_value = property_value(&old, p.name) == property_value(&new, p.name);
            differing += usize::from(!by_value);
            assert_eq!(same_property(&old, &new, p.name), by_value, "{}", p.name);
            assert!(same_property(&new, &new.clone(), p.name), "{}", p.name);
        }
        assert!(differing >= 26, "only {differing} properties were changed");
        // The changed values are the D-Bus values, in the table's order.
        let changed = changed_properties(&old, &new);
        let table: Vec<_> = eboard_core::contract::BOARD_PROPERTIES
            .iter()
            .filter(|p| property_value(&old, p.name) != property_value(&new, p.name))
            .map(|p| (p.name, property_value(&new, p.name).unwrap()))
            .collect();
        assert_eq!(changed, table);
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
        for event in eboard_core::session::signal::every_signal() {
            let signal = event.signal().expect("a signal");
            let body =
                SignalBody::of(&event).unwrap_or_else(|| panic!("{} has no body", signal.name));
            let msg = zbus::Message::signal(board_path("b"), BOARD_INTERFACE, signal.name)
                .build(&body)
                .expect("a body");
            let read = msg.body();
            let read: zbus::Structure<'_> = read.deserialize().expect("a structure");
            let types: Vec<String> = read
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
        let record = Event::Record(eboard_core::session::RecordFact::Comment { text: "x".into() });
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
        for p in eboard_core::contract::BOARD_PROPERTIES {
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

    /// The properties are written into the introspection exactly as zbus writes the getters of
    /// an `#[interface]`: the same XML, byte for byte.
    #[test]
    fn properties_are_introspected_as_zbus_writes_getters() {
        struct WithGetters;
        #[interface(name = "org.example.Same", introspection_docs = false)]
        impl WithGetters {
            fn take_back(&self) {}
            #[zbus(signal)]
            async fn flag_fell(emitter: &SignalEmitter<'_>, player: &str) -> zbus::Result<()>;
            #[zbus(property)]
            fn white_time_ms(&self) -> u64 {
                0
            }
            #[zbus(property)]
            fn claims(&self) -> Vec<(String, String, String)> {
                Vec::new()
            }
            #[zbus(property)]
            fn name(&self) -> String {
                String::new()
            }
        }
        struct WithoutGetters;
        #[interface(name = "org.example.Same", introspection_docs = false)]
        impl WithoutGetters {
            fn take_back(&self) {}
            #[zbus(signal)]
            async fn flag_fell(emitter: &SignalEmitter<'_>, player: &str) -> zbus::Result<()>;
        }
        let table: Vec<eboard_core::contract::Property> =
            [("WhiteTimeMs", "t"), ("Claims", "a(sss)"), ("Name", "s")]
                .into_iter()
                .map(|(name, signature)| eboard_core::contract::Property {
                    interface: "org.example.Same",
                    name,
                    signature,
                    constant: false,
                })
                .collect();
        for level in [0, 2] {
            let mut zbus_xml = String::new();
            WithGetters.introspect_to_writer(&mut zbus_xml, level);
            let mut members = String::new();
            WithoutGetters.introspect_to_writer(&mut members, level);
            let mut ours = String::new();
            write_with_properties(&mut ours, &members, level, &table);
            assert_eq!(ours, zbus_xml);
        }

        // The board object: every table property once, after its methods and signals.
        let (commands, _) = mpsc::channel(1);
        let board = BoardObject::new(Shared::default(), commands);
        let mut xml = String::new();
        board.introspect_to_writer(&mut xml, 0);
        let properties: Vec<&str> = xml
            .lines()
            .filter(|l| l.trim_start().starts_with("<property "))
            .collect();
        assert_eq!(
            properties.len(),
            eboard_core::contract::BOARD_PROPERTIES.len()
        );
        assert!(xml.find("<property ") > xml.rfind("<signal "), "{xml}");
        assert!(xml.ends_with("</interface>\n"), "{xml}");
    }

    #[test]
    fn every_table_property_has_a_value_of_its_type() {
        let snap = BoardProps::default();
        for p in eboard_core::contract::BOARD_PROPERTIES {
            let v = property_value(&snap, p.name)
                .unwrap_or_else(|| panic!("{} has no value in the properties", p.name));
            assert_eq!(v.value_signature().to_string(), p.signature, "{}", p.name);
        }
        assert!(property_value(&snap, "Version").is_none());
    }
}
