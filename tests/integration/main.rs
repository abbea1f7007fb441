//! Integration tests: they drive the real `nvmebench` binary, one module per topic.

mod bad_input;
mod common;
mod devices;
mod null;
mod report;
#[cfg(feature = "spdk")]
mod spdk;
mod suite;
mod uring;
