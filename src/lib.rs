//! nvmebench: a storage benchmark that drives NVMe drives through the kernel's I/O paths and, with the
//! `spdk` feature, from userspace through SPDK, with one pinned polled worker per core and exact HDR
//! latency histograms merged by a coordinator.
//!
//! The binary (`main.rs`) is thin; everything it does is reachable from here so tests can drive it.

pub mod batches;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod config;
pub mod coordinator;
pub mod cost;
pub mod cpu;
pub mod devices;
pub mod docs;
pub mod doctor;
pub mod engine;
pub mod fio;
pub mod fleet;
pub mod io;
pub mod launch;
pub mod options;
pub mod rebind;
pub mod report;
pub mod report_cmd;
pub mod run;
pub mod stats;
pub mod suite;
pub mod target;
pub mod telemetry;
pub mod units;
pub mod verify;
pub mod version;
pub mod worker;
pub mod workload;

/// The tests' one way to skip, shared with the integration tests.
#[cfg(test)]
#[path = "../tests/support/skip.rs"]
pub(crate) mod skip;
