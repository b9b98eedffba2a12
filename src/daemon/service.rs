//! The running service: the manager object `org.eboardd.Bridge1` with the ObjectManager,
//! the set of served boards, and starting/stopping their tasks and objects.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::Instrument;
use zbus::object_server::SignalEmitter;
use zbus::{Connection, interface};
use zbus::{ObjectPath, OwnedObjectPath};

use eboard_core::session::Session;

use super::added::AddedBoards;
use super::board::{BoardTask, Stop};
use super::config::DaemonConfig;
use super::dbus::{BoardObject, BridgeError, MANAGER_PATH, Publisher, Shared, board_path};
use super::health::{Health, Source};
use super::pgn_writer::PgnWriter;
use super::settings::{BoardSpec, spec_for_port};
use super::signature::Checked;
use super::store::{BoardStore, StorePaths};
use super::writer::Writer;

/// How long a stopping board may take to flush before it is abandoned.
const STOP_TIMEOUT: Duration = Duration::from_millis(1500);

/// A running board.
struct Running {
    spec: BoardSpec,
    stop: oneshot::Sender<Stop>,
    task: JoinHandle<()>,
}

/// The served boards and what is needed to start more.
pub struct Boards {
    conn: Connection,
    paths: StorePaths,
    defaults: DaemonConfig,
    epoch: Instant,
    running: Mutex<BTreeMap<String, Running>>,
    writer: Writer,
    pgn_writer: PgnWriter,
    health: Health,
    /// Boards added with `AddBoard`, remembered across restarts.
    added: std::sync::Mutex<AddedBoards>,
}

impl Boards {
    pub fn new(
        conn: Connection,
        paths: StorePaths,
        defaults: DaemonConfig,
        epoch: Instant,
        writer: Writer,
        pgn_writer: PgnWriter,
        health: Health,
    ) -> Arc<Self> {
        let mut added = AddedBoards::load(&paths.state_dir);
        // What was kept aside in earlier runs is said until someone has seen to it.
        for (path, why) in super::kept::find(&paths.state_dir) {
            health.keep_aside(path, why);
        }
        if let Some((path, why)) = added.take_kept() {
            health.keep_aside(path, why);
        }
        if let Some(problem) = added.problem() {
            health.report(Source::BoardList, Some(problem));
        }
        Arc::new(Boards {
            conn,
            paths,
            defaults,
            epoch,
            running: Mutex::new(BTreeMap::new()),
            writer,
            pgn_writer,
            health,
            added: std::sync::Mutex::new(added),
        })
    }

    /// The storage health the manager's `StorageProblem` shows.
    pub fn health(&self) -> &Health {
        &self.health
    }

    /// The boards added with `AddBoard` before the last restart.
    pub fn remembered(&self) -> Vec<BoardSpec> {
        self.added_list().specs()
    }

    fn added_list(&self) -> std::sync::MutexGuard<'_, AddedBoards> {
        self.added.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remember (`Some`) or forget (`None`) an added board, and write the list.
    fn remember(&self, id: &str, spec: Option<&BoardSpec>) {
        let mut list = self.added_list();
        match spec {
            Some(spec) => list.add(spec),
            None => {
                list.remove(id);
            }
        }
        self.save_added(&mut list);
    }

    fn save_added(&self, list: &mut AddedBoards) {
        match list.save() {
            Ok(()) => self.health.report(Source::BoardList, None),
            Err(e) => {
                let dir = list
                    .path()
                    .parent()
                    .unwrap_or(&self.paths.state_dir)
                    .to_path_buf();
                // Still unreadable: why, rather than the write that was not made.
                let problem = match list.problem() {
                    Some(p) if !super::journal::is_storage_fault(&e) => p,
                    _ => super::health::describe("state directory", &dir, &e),
                };
                self.health.report(Source::BoardList, Some(problem));
            }
        }
    }

    /// Called periodically: write the list of added boards if an earlier write failed (or
    /// read it, if it could not be read), and stop naming the kept files someone removed.
    pub fn retry_storage(&self) {
        {
            let mut list = self.added_list();
            if list.dirty() {
                self.save_added(&mut list);
            }
        }
        self.health.recheck_kept();
    }

    /// Start serving a board: restore its game, register its object, spawn its task.
    pub async fn add(&self, spec: BoardSpec) -> Result<OwnedObjectPath, BridgeError> {
        let mut running = self.running.lock().await;
        if let Some(r) = running.get(&spec.id) {
            return Err(BridgeError::InvalidArgument(format!(
                "a board with the object id {:?} is already served (on {}); give it another name",
                spec.id,
                r.spec.port.display()
            )));
        }
        if let Some(r) = running.values().find(|r| r.spec.port == spec.port) {
            return Err(BridgeError::InvalidArgument(format!(
                "{} is already served as {}",
                spec.port.display(),
                board_path(&r.spec.id)
            )));
        }
        let path = board_path(&spec.id);
        let object_path = ObjectPath::try_from(path.clone()).map_err(|e| {
            BridgeError::InvalidArgument(format!("bad board id {:?}: {e}", spec.id))
        })?;

        let (store, journal) = BoardStore::open(
            &self.paths,
            &spec.id,
            &self.writer,
            &self.pgn_writer,
            &self.health,
        )
        .map_err(|e| {
            BridgeError::ZBus(zbus::Error::Failure(format!(
                "cannot open the saved game of board {:?}: {e:#}",
                spec.id
            )))
        })?;
        let session = if journal.is_empty() {
            Session::new(spec.session.clone())
        } else {
            tracing::info!(board = %spec.id, events = journal.len(), "game restored");
            Session::restore(spec.session.clone(), &journal)
        };
        let shared = Shared::new(session.view().clone());
        let (commands_tx, commands_rx) = mpsc::channel(16);
        self.conn
            .object_server()
            .at(
                object_path.clone(),
                Checked::new(BoardObject::new(shared.clone(), commands_tx)),
            )
            .await?;
        let emitter = SignalEmitter::new(&self.conn, object_path.clone())?.into_owned();
        let task = BoardTask {
            spec: spec.clone(),
            session,
            store,
            publisher: Publisher::new(emitter, shared),
            epoch: self.epoch,
        };
        let (stop_tx, stop_rx) = oneshot::channel();
        let span = tracing::info_span!("board", id = %spec.id);
        let handle = tokio::spawn(task.run(commands_rx, stop_rx).instrument(span));
        running.insert(
            spec.id.clone(),
            Running {
                spec,
                stop: stop_tx,
                task: handle,
            },
        );
        Ok(object_path.into())
    }

    /// Stop serving a board (its game stays in the state dir) and remove its object.
    pub async fn remove(&self, id: &str) -> Result<(), BridgeError> {
        let r = self.running.lock().await.remove(id).ok_or_else(|| {
            BridgeError::InvalidArgument(format!("no board is served at {}", board_path(id)))
        })?;
        stop(r, Stop::Removed).await;
        self.remember(id, None);
        self.conn
            .object_server()
            .remove::<BoardObject, _>(board_path(id).as_str())
            .await?;
        Ok(())
    }

    /// Stop every board (shutdown), flushing each one's journal; all at once, within
    /// [`STOP_TIMEOUT`] in total.
    pub async fn stop_all(&self) {
        let all = std::mem::take(&mut *self.running.lock().await);
        let tasks: Vec<(String, JoinHandle<()>)> = all
            .into_values()
            .map(|r| {
                let _ = r.stop.send(Stop::Shutdown);
                (r.spec.id, r.task)
            })
            .collect();
        let deadline = Instant::now() + STOP_TIMEOUT;
        for (id, mut task) in tasks {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                tracing::warn!(board = %id, "board did not stop in time; abandoning it");
                task.abort();
            }
        }
    }

    /// The object ids of the served boards.
    pub async fn ids(&self) -> Vec<String> {
        self.running.lock().await.keys().cloned().collect()
    }

    /// The spec for a board added through `AddBoard`: the port must pass the same board
    /// validator as a configured one; a refusal is the contract's `InvalidArgument`.
    fn spec_for_port(&self, port: &str) -> Result<BoardSpec, BridgeError> {
        spec_for_port(port, &self.defaults)
            .map_err(|fault| BridgeError::InvalidArgument(fault.message))
    }
}

async fn stop(r: Running, why: Stop) {
    let id = r.spec.id.clone();
    let _ = r.stop.send(why);
    let mut task = r.task;
    if tokio::time::timeout(STOP_TIMEOUT, &mut task).await.is_err() {
        tracing::warn!(board = %id, "board did not stop in time; abandoning it");
        task.abort();
    }
}

/// `org.eboardd.Bridge1` on `/org/eboardd/Bridge1`.
pub struct Manager {
    boards: Arc<Boards>,
}

impl Manager {
    pub fn new(boards: Arc<Boards>) -> Self {
        Manager { boards }
    }
}

#[interface(name = "org.eboardd.Bridge1", introspection_docs = false)]
impl Manager {
    #[zbus(property(emits_changed_signal = "const"))]
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_owned()
    }

    /// Empty while the state and PGN directories take every write; otherwise what fails.
    #[zbus(property)]
    fn storage_problem(&self) -> String {
        self.boards.health().summary()
    }

    async fn add_board(&self, port: String) -> Result<OwnedObjectPath, BridgeError> {
        let spec = self.boards.spec_for_port(&port)?;
        tracing::info!(port = %port, id = %spec.id, "AddBoard");
        let path = self.boards.add(spec.clone()).await?;
        self.boards.remember(&spec.id, Some(&spec));
        Ok(path)
    }

    async fn remove_board(&self, board: OwnedObjectPath) -> Result<(), BridgeError> {
        let prefix = format!("{MANAGER_PATH}/Board/");
        let id = board.as_str().strip_prefix(&prefix).ok_or_else(|| {
            BridgeError::InvalidArgument(format!(
                "{} is not a board object",
                eboard_core::vocab::excerpt(board.as_str())
            ))
        })?;
        tracing::info!(id = %id, "RemoveBoard");
        self.boards.remove(id).await
    }
}
