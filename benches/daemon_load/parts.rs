//! The parts of `daemon_load` that the other benchmarks of the eboardd binary (`relay_load`,
//! `gap_soak_daemon`) play their halls with, included by each with `#[path]` as one module:
//! each uses only some of them.

#[path = "client.rs"]
pub mod client;
#[path = "driver.rs"]
pub mod driver;
#[path = "hall.rs"]
pub mod hall;
#[path = "harness.rs"]
pub mod harness;
#[path = "procs.rs"]
pub mod procs;
