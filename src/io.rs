//! The vocabulary every layer shares: one I/O ([`IoOp`]), its [`Direction`], and why it failed
//! ([`IoError`]).
//!
//! The workload generator produces `IoOp`s, engines carry them out and report `IoError`s, workers
//! and statistics count them, reports print them. This module imports nothing of the others, so
//! none of them has to reach into another's room for these types.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;

/// The direction (the operation) of one I/O. Statistics keep one block per direction, indexed by
/// the discriminant: reads, writes, trims (deallocate), write-zeroes and flushes are counted apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Read = 0,
    Write = 1,
    /// Deallocate a range (BLKDISCARD, a hole punched in a file, NVMe Dataset Management).
    Trim = 2,
    /// Make a range read as zeroes without sending them (BLKZEROOUT, NVMe Write Zeroes).
    WriteZeroes = 3,
    /// Make completed writes durable (fsync, NVMe Flush); carries no offset or length.
    Flush = 4,
}

impl Direction {
    /// How many directions there are: the length of every per-direction array.
    pub const COUNT: usize = 5;
    pub const ALL: [Direction; Direction::COUNT] =
        [Direction::Read, Direction::Write, Direction::Trim, Direction::WriteZeroes, Direction::Flush];

    /// The name in reports and JSON keys (`write_zeroes` with an underscore, as fio spells keys).
    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Trim => "trim",
            Direction::WriteZeroes => "write_zeroes",
            Direction::Flush => "flush",
        }
    }

    /// The name in text reports and on the command line (`write-zeroes`).
    pub fn label(self) -> &'static str {
        match self {
            Direction::WriteZeroes => "write-zeroes",
            d => d.name(),
        }
    }

    /// Whether the operation changes what the target holds (and so needs `--allow-destroy` on a
    /// device): writes, trims and write-zeroes; a flush only makes earlier writes durable.
    pub fn destroys(self) -> bool {
        matches!(self, Direction::Write | Direction::Trim | Direction::WriteZeroes)
    }

    /// Whether the operation moves data through a buffer (reads and writes); the others carry at
    /// most a range.
    pub fn moves_data(self) -> bool {
        matches!(self, Direction::Read | Direction::Write)
    }
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoOp {
    pub dir: Direction,
    /// Byte offset into the target.
    pub offset: u64,
    /// Length in bytes (0 for a flush, which has no range).
    pub len: u32,
    /// The priority it is sent with (fio's `prio`/`prioclass` and `cmdprio_*`).
    pub prio: IoPrio,
}

/// One I/O's priority: the Linux `ioprio` value sent with it. Its per-priority statistics are
/// found by this value (a handful at most), which keeps an [`IoOp`] at 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoPrio {
    /// `class << 13 | level` (the kernel's `IOPRIO_PRIO_VALUE`); 0 sends none, leaving the
    /// thread's own.
    pub value: u16,
}

// The slot table holds one per slot beside its stamp: a priority must not make it bigger.
const _: () = assert!(std::mem::size_of::<IoOp>() == 16);

impl IoPrio {
    /// No priority of its own: the thread's.
    pub const NONE: IoPrio = IoPrio { value: 0 };
    /// The kernel's `IOPRIO_CLASS_SHIFT`.
    pub const CLASS_SHIFT: u32 = 13;

    /// The value of `class` (0 to 3) and `level` (0 to 7) as fio's `ioprio_value` makes it: no
    /// class is best effort (2).
    pub fn value_of(class: u8, level: u8) -> u16 {
        let class = if class == 0 { 2 } else { class };
        (u16::from(class) << Self::CLASS_SHIFT) | u16::from(level)
    }

    /// The class (`value >> 13`) and level (`value & 7`), as fio's reports split them.
    pub fn class_level(value: u16) -> (u16, u16) {
        (value >> Self::CLASS_SHIFT, value & 7)
    }
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

impl IoError {
    /// The errno fio would see: the kernel's, or EIO for an NVMe status or a short transfer (as
    /// fio's engines report those).
    pub fn errno_as_fio(self) -> i32 {
        match self {
            IoError::Errno { errno } => errno,
            IoError::ShortTransfer { .. } | IoError::Nvme { .. } => libc::EIO,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's error lists go by errno: an error without one counts as EIO, as fio's engines report
    /// an NVMe status or a short transfer.
    #[test]
    fn errors_without_an_errno_count_as_eio() {
        assert_eq!(IoError::Errno { errno: libc::ENOSPC }.errno_as_fio(), libc::ENOSPC);
        assert_eq!(IoError::Nvme { sct: 0, sc: 0x81 }.errno_as_fio(), libc::EIO);
        assert_eq!(IoError::ShortTransfer { expected: 8, done: 0 }.errno_as_fio(), libc::EIO);
    }
}
