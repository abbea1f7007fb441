//! fio's per-I/O logs (`write_lat_log` and the like without `log_avg_msec`): the worker's side.
//!
//! A worker asked for one keeps a compact record of each measured I/O that completed without
//! error (its raw clock stamps, direction, size, offset and priority) in a buffer allocated before
//! the start gate, and hands a full buffer to the coordinator on the report channel, taking an
//! emptied one from a pool the coordinator refills (it sends back each buffer it has read, as it
//! does with interval statistics). So the loop stores a record per I/O and, once per
//! [`RECORDS_PER_BUFFER`] I/Os, sends one message; it never formats or scales a stamp. The
//! coordinator turns stamps into nanoseconds (`coordinator::LoggedIo`) and the report turns those
//! into fio's lines after the run.
//!
//! What this module does not do: decide which I/Os are logged (the loop records while measuring)
//! or what a line says (`report::fio`).

use crate::io::Direction;
use crossbeam_channel::Receiver;

/// Records per buffer: a hand-over every 4096 I/Os (160 KiB a buffer).
pub const RECORDS_PER_BUFFER: usize = 4096;

/// Emptied buffers the coordinator keeps ready for each worker that logs (the pool's depth).
pub const POOL_BUFFERS: usize = 8;

/// One logged I/O as the worker saw it: raw clock readings, nothing scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRecord {
    /// The issue stamp (fio's `start_time`).
    pub start: u64,
    /// The stamp of the return of the call that sent it (fio's `issue_time`), where submission is
    /// measured apart (`FLAG_SLAT`); else equal to `start`.
    pub sent: u64,
    /// The completion stamp.
    pub end: u64,
    pub offset: u64,
    pub len: u32,
    /// The I/O's own priority value (0: none of its own, the job's).
    pub prio: u16,
    pub dir: Direction,
    pub flags: u8,
}

/// fio would log a submission latency for this I/O (its engine sends apart from queuing).
pub const FLAG_SLAT: u8 = 1;

// A record per I/O over the whole run: it must stay small.
const _: () = assert!(std::mem::size_of::<IoRecord>() == 40);

/// The worker's buffer of records and its pool.
pub struct IoLog {
    records: Vec<IoRecord>,
    pool: Receiver<Vec<IoRecord>>,
    /// Buffers the worker had to allocate itself because the pool was empty (see [`Self::take_full`]).
    pub allocated: u64,
}

impl IoLog {
    /// A log with its first buffer (allocated here, before the start gate).
    pub fn new(pool: Receiver<Vec<IoRecord>>) -> Self {
        IoLog { records: Vec::with_capacity(RECORDS_PER_BUFFER), pool, allocated: 0 }
    }

    /// Whether `n` more records fit without growing the buffer.
    #[inline(always)]
    pub fn has_room(&self, n: usize) -> bool {
        self.records.capacity() - self.records.len() >= n
    }

    /// Keeps one record. The caller made room first ([`Self::has_room`]), so this never allocates.
    #[inline(always)]
    pub fn push(&mut self, r: IoRecord) {
        debug_assert!(self.records.len() < self.records.capacity(), "room is made before each poll");
        self.records.push(r);
    }

    /// Takes the buffer, full or not, leaving an emptied one from the pool. When the pool is empty
    /// (the coordinator, woken at each hand-over, is still [`POOL_BUFFERS`] buffers behind: its
    /// core is busy) the worker allocates a new one rather than wait or drop records, so the log
    /// stays whole at the cost of one allocation per such buffer; `allocated` counts these, and
    /// a run that is not `--quiet` says so on stderr.
    pub fn take_full(&mut self) -> Vec<IoRecord> {
        let fresh = match self.pool.try_recv() {
            Ok(mut v) => {
                v.clear();
                if v.capacity() < RECORDS_PER_BUFFER {
                    v.reserve_exact(RECORDS_PER_BUFFER);
                }
                v
            }
            Err(_) => self.take_fresh(),
        };
        std::mem::replace(&mut self.records, fresh)
    }

    #[cold]
    #[inline(never)]
    fn take_fresh(&mut self) -> Vec<IoRecord> {
        self.allocated += 1;
        Vec::with_capacity(RECORDS_PER_BUFFER)
    }

    /// Whether any record waits to be handed over.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(start: u64, sent: u64, end: u64, flags: u8) -> IoRecord {
        IoRecord { start, sent, end, offset: 4096, len: 4096, prio: 0, dir: Direction::Read, flags }
    }

    #[test]
    fn a_full_buffer_is_swapped_for_a_pooled_one_or_a_new_one_counted() {
        let (tx, rx) = crossbeam_channel::bounded(POOL_BUFFERS);
        let mut log = IoLog::new(rx);
        assert!(log.has_room(RECORDS_PER_BUFFER) && !log.has_room(RECORDS_PER_BUFFER + 1));
        log.push(rec(0, 0, 1, 0));
        tx.send(vec![rec(9, 9, 9, 0)]).unwrap();
        let full = log.take_full();
        assert_eq!(full.len(), 1);
        // The pooled buffer comes back emptied and with a buffer's room.
        assert!(log.is_empty() && log.has_room(RECORDS_PER_BUFFER));
        assert_eq!(log.allocated, 0);
        let _ = log.take_full();
        assert_eq!(log.allocated, 1, "the pool was empty");
        assert!(log.has_room(RECORDS_PER_BUFFER));
    }
}
