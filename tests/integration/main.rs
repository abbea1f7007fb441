//! Integration tests: they drive the real `nvmebench` binary, one module per topic.

mod bad_input;
mod common;
mod compare;
mod devices;
mod docs;
mod fio;
mod fleet;
mod fuzz;
mod install;
mod kernel_engines;
mod layers;
mod null;
mod pacing;
mod plots;
mod report;
mod schema;
#[path = "../support/skip.rs"]
mod skip;
mod skips;
#[cfg(feature = "spdk")]
mod spdk;
mod suite;
mod targets;
mod telemetry;
mod testbed;
mod uring;
mod verify;
