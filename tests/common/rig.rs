//! A rig of simulated boards: the crate's simulator behind links `dir/<name>`, a private bus,
//! and the real eboardd serving those ports. The end-to-end tests of the client, the web
//! bridge, the relay and the D-Bus surface all start from this.

use std::path::Path;

use eboard_sim::{
    BoardOptions, Noise, Pace, Scenario, ScenarioOptions, SimBoard, SimHandle, SimOptions, Step,
};

use super::{Bus, Daemon};

/// A `Step` playing these SAN moves.
pub fn moves(sans: &[&str]) -> Step {
    Step::Moves(sans.iter().map(|m| m.to_string()).collect())
}

/// The board id eboardd gives a port named `name` (its file name made D-Bus-safe).
pub fn board_id(name: &str) -> String {
    name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
}

/// Simulated boards + clocks in real time, linked as `dir/<name>`; with their port paths.
pub async fn spawn_sims(dir: &Path, names: &[&str]) -> (Vec<SimHandle>, Vec<String>) {
    spawn_sims_with(dir, names, |_| BoardOptions::default()).await
}

/// [`spawn_sims`] with board `i`'s identity and behaviour from `board(i)` (a serial number of
/// its own, say).
pub async fn spawn_sims_with(
    dir: &Path,
    names: &[&str],
    board: impl Fn(usize) -> BoardOptions,
) -> (Vec<SimHandle>, Vec<String>) {
    let mut sims = Vec::new();
    let mut ports = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let link = dir.join(name);
        sims.push(
            SimBoard::spawn(SimOptions {
                board: board(i),
                link: Some(link.clone()),
                speed: 1.0,
                ..SimOptions::default()
            })
            .await
            .expect("simulator"),
        );
        ports.push(link.display().to_string());
    }
    (sims, ports)
}

/// The port path of each simulated board.
pub fn sim_ports<'a>(sims: impl IntoIterator<Item = &'a SimHandle>) -> Vec<String> {
    sims.into_iter()
        .map(|s| s.path().display().to_string())
        .collect()
}

/// `--port P` for each port.
pub fn port_args(ports: &[String]) -> Vec<&str> {
    ports.iter().flat_map(|p| ["--port", p.as_str()]).collect()
}

/// A scenario with quick, plain lift-and-place handling: for tests of what is shown or
/// refused, not of reconstructing moves from noisy hands (the tracker's tests do that).
pub fn clean_scenario(sim: &SimHandle, seed: u64) -> Scenario<'_> {
    let pace = Pace {
        think_ms: (150, 250),
        press_ms: (20, 40),
        hand_ms: (10, 30),
    };
    clean_scenario_paced(sim, seed, pace)
}

/// [`clean_scenario`] at another pace.
pub fn clean_scenario_paced(sim: &SimHandle, seed: u64, pace: Pace) -> Scenario<'_> {
    Scenario::new(
        sim,
        ScenarioOptions {
            pace,
            noise: Noise::Clean,
            seed,
            ..ScenarioOptions::default()
        },
    )
}

/// Simulated boards, a bus, and eboardd serving the boards (plus `extra` arguments), ready:
/// the daemon owns its name when `start` returns.
pub struct SimRig {
    pub sims: Vec<SimHandle>,
    pub ports: Vec<String>,
    pub daemon: Daemon,
    pub bus: Bus,
    pub dir: tempfile::TempDir,
}

impl SimRig {
    pub async fn start(names: &[&str], extra: &[&str]) -> SimRig {
        let dir = tempfile::tempdir().expect("temp dir");
        let (sims, ports) = spawn_sims(dir.path(), names).await;
        let bus = Bus::start(dir.path()).await;
        let mut args = port_args(&ports);
        args.extend(extra);
        let mut daemon = Daemon::spawn(&bus, dir.path(), &args);
        daemon.wait_for_name(&bus.client().await).await;
        SimRig {
            sims,
            ports,
            daemon,
            bus,
            dir,
        }
    }

    pub fn address(&self) -> &str {
        &self.bus.address
    }

    /// A [`clean_scenario`] on board `i`.
    pub fn scenario(&self, i: usize, seed: u64) -> Scenario<'_> {
        clean_scenario(&self.sims[i], seed)
    }
}

/// Every board's properties as D-Bus gives them (`GetManagedObjects`), as JSON by board id.
pub async fn dbus_boards<C>(conn: &zbus::Connection) -> C
where
    C: FromIterator<(String, serde_json::Value)>,
{
    use std::collections::HashMap;
    type Managed =
        HashMap<zbus::OwnedObjectPath, HashMap<String, HashMap<String, zbus::OwnedVariant>>>;
    let reply = conn
        .call_method(
            Some(eboard_core::contract::BUS_NAME),
            eboard_core::contract::MANAGER_PATH,
            Some(eboard_core::contract::OBJECT_MANAGER_INTERFACE),
            "GetManagedObjects",
            &(),
        )
        .await
        .expect("GetManagedObjects");
    let objects: Managed = reply.body().deserialize().expect("a{oa{sa{sv}}}");
    objects
        .into_iter()
        .filter_map(|(path, ifaces)| {
            let props = ifaces.get(eboard_core::contract::BOARD_INTERFACE)?;
            let id = eboard_core::contract::board_id_of(path.as_str())?.to_owned();
            let json = eboardd::client::props::dict_to_json(props);
            Some((id, serde_json::Value::Object(json)))
        })
        .collect()
}

/// Scenario options with the quick human pace (noisy hands by default) and `seed`.
pub fn quick(seed: u64) -> ScenarioOptions {
    ScenarioOptions {
        pace: Pace::quick(),
        seed,
        ..ScenarioOptions::default()
    }
}

/// SAN moves as owned strings.
pub fn sans(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The daemon has put the board in update mode and seen the start position: only then do
/// the players move (a move made before the daemon's first board dump would leave it
/// nothing to start from), as people wait for the arbiter's go.
pub async fn ready_to_play(sim: &SimHandle, events: &mut super::events::Events) {
    sim.wait_for_update_mode(super::WAIT)
        .await
        .expect("the daemon puts the board in update mode");
    events.next_signal("GameStarted").await;
}

/// Waits until the client has seen exactly the moves `want` (SAN) in this game.
pub async fn wait_moves(events: &super::events::Events, want: &[String]) {
    events
        .wait_until(&format!("{} moves {want:?}", want.len()), |all| {
            super::events::sans_of(all) == want
        })
        .await;
}
