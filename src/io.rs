//! The vocabulary every layer shares: one I/O ([`IoOp`]), its [`Direction`], and why it failed
//! ([`IoError`]).
//!
//! The workload generator produces `IoOp`s, engines carry them out and report `IoError`s, workers
//! and statistics count them, reports print them. This module imports nothing of the others, so
//! none of them has to reach into another's room for these types.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;

/// The direction of one I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Read = 0,
    Write = 1,
}

impl Direction {
    pub const ALL: [Direction; 2] = [Direction::Read, Direction::Write];

    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoOp {
    pub dir: Direction,
    /// Byte offset into the target.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
}

/// Why one I/O failed. Small and `Copy`, so counting errors never allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IoError {
    /// The kernel returned this errno.
    Errno { errno: i32 },
    /// Fewer bytes moved than asked for.
    ShortTransfer { expected: u32, done: u32 },
    /// The NVMe controller completed the command with this status code type and code.
    Nvme { sct: u8, sc: u8 },
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            IoError::Errno { errno } => write!(f, "{} (errno {errno})", io::Error::from_raw_os_error(errno)),
            IoError::ShortTransfer { expected, done } => write!(f, "short transfer: {done} of {expected} bytes"),
            IoError::Nvme { sct, sc } => write!(f, "NVMe status type {sct:#x} code {sc:#04x}"),
        }
    }
}
