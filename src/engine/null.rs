//! The null engine: completes every I/O without touching a device.
//!
//! It measures the framework itself (generator, slots, clock, histograms), the way fio's null ioengine
//! exists to test fio. With a service time (`null:lat=20us`) each I/O completes that long after its
//! submission, which makes a device model with a known answer for worker and coordinator tests.

use super::buf::SlotBuffers;
use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued, Sends};
use crate::io::IoError;
use crate::io::IoOp;
use std::collections::VecDeque;
use std::time::Duration;

/// Options of the null engine.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NullOptions {
    /// Fixed time from submission to completion; zero completes at the next poll.
    pub service_time: Duration,
}

pub struct NullBuilder {
    pub options: NullOptions,
}

impl EngineBuilder for NullBuilder {
    type Engine = NullEngine;

    fn build(&self, _worker: usize, queue_depth: u32, max_io_bytes: u32) -> Result<NullEngine, EngineError> {
        Ok(NullEngine::new(self.options, queue_depth).with_buffers(max_io_bytes))
    }
}

/// Completes I/Os in submission order, each once its service time has passed.
pub struct NullEngine {
    staged: Vec<u32>,
    /// `(slot, ready_at)` in submission order; with one fixed service time that is also ready order.
    in_flight: VecDeque<(u32, u64)>,
    clock: Option<quanta::Clock>,
    service_ticks: u64,
    options: NullOptions,
    bufs: SlotBuffers,
}

impl NullEngine {
    pub fn new(options: NullOptions, queue_depth: u32) -> NullEngine {
        let qd = queue_depth as usize;
        let clock = (!options.service_time.is_zero()).then(quanta::Clock::new);
        let service_ticks = clock.as_ref().map_or(0, |c| ticks_for(c, options.service_time));
        NullEngine {
            staged: Vec::with_capacity(qd),
            in_flight: VecDeque::with_capacity(qd),
            clock,
            service_ticks,
            options,
            bufs: SlotBuffers::new(qd, 0, 0),
        }
    }

    /// Gives every slot a buffer of `bytes` (the null engine moves no data, but callers may fill one).
    pub fn with_buffers(mut self, bytes: u32) -> NullEngine {
        self.bufs = SlotBuffers::new(self.bufs.slots(), bytes as usize, 0);
        self
    }
}

/// How many raw clock ticks make `d`, measured once against the clock's own conversion.
fn ticks_for(clock: &quanta::Clock, d: Duration) -> u64 {
    let probe = 1u64 << 32;
    let ns = clock.delta_as_nanos(0, probe).max(1);
    ((d.as_nanos() * probe as u128) / ns as u128) as u64
}

impl Engine for NullEngine {
    /// fio's null engine is synchronous at iodepth=1 and commits batches above it; so is this one's
    /// latency accounting.
    fn sends(&self) -> Sends {
        if self.bufs.slots() == 1 { Sends::Synchronous } else { Sends::OnSubmit }
    }

    #[inline]
    fn queue(&mut self, slot: u32, _op: &IoOp) -> Result<Queued, EngineError> {
        self.staged.push(slot);
        Ok(Queued::Ok)
    }

    #[inline]
    fn submit(&mut self) -> Result<(), EngineError> {
        let ready = match &self.clock {
            Some(c) => c.raw() + self.service_ticks,
            None => 0,
        };
        self.in_flight.extend(self.staged.drain(..).map(|s| (s, ready)));
        Ok(())
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        let now = match (&self.clock, self.in_flight.is_empty()) {
            (Some(c), false) => c.raw(),
            _ => 0,
        };
        let mut n = 0;
        while n < max {
            match self.in_flight.front() {
                Some(&(slot, ready)) if ready <= now || self.clock.is_none() => {
                    self.in_flight.pop_front();
                    done(slot, Ok(()));
                    n += 1;
                }
                _ => break,
            }
        }
        Ok(n)
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    fn info(&self) -> EngineInfo {
        let mut options = Vec::new();
        if !self.options.service_time.is_zero() {
            options.push(("lat".to_string(), format!("{:?}", self.options.service_time)));
        }
        EngineInfo { name: "null".into(), options }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Direction;
    use crate::io::IoPrio;

    const OP: IoOp = IoOp { dir: Direction::Read, offset: 0, len: 4096, prio: IoPrio::NONE };

    #[test]
    fn completes_in_order_at_once() {
        let mut e = NullEngine::new(NullOptions::default(), 4);
        for s in 0..4 {
            assert_eq!(e.queue(s, &OP).unwrap(), Queued::Ok);
        }
        assert_eq!(e.poll(8, |_, _| panic!("nothing submitted yet")).unwrap(), 0);
        e.submit().unwrap();
        let mut got = Vec::new();
        assert_eq!(e.poll(3, |s, r| got.push((s, r))).unwrap(), 3);
        assert_eq!(e.poll(3, |s, r| got.push((s, r))).unwrap(), 1);
        assert_eq!(got, vec![(0, Ok(())), (1, Ok(())), (2, Ok(())), (3, Ok(()))]);
    }

    #[test]
    fn service_time_delays_completion() {
        let mut e = NullEngine::new(NullOptions { service_time: Duration::from_millis(20) }, 1);
        e.queue(0, &OP).unwrap();
        let t = std::time::Instant::now();
        e.submit().unwrap();
        while e.poll(1, |_, _| {}).unwrap() == 0 {}
        let waited = t.elapsed();
        assert!(waited >= Duration::from_millis(19), "{waited:?}");
    }
}
