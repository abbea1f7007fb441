//! A scripted engine for deterministic worker and coordinator tests.
//!
//! Time is a mocked clock that the engine itself moves forward: when a poll finds nothing ready it
//! jumps to the next scripted completion, like a discrete-event simulation. So a test states "this
//! I/O takes 300 µs, that one fails with EIO, the queue is Busy on the 5th call" and gets exactly that
//! in the histograms, whatever the machine is doing.

use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued, Sends};
use crate::io::IoError;
use crate::io::IoOp;
use std::sync::{Arc, Mutex};

/// The scripted fate of one I/O, applied in queue order.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub latency_ns: u64,
    pub result: Result<(), IoError>,
}

/// A script shared by all fake engines of a run.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// Per-I/O fates in queue order; after the last one, `default_latency_ns` and success.
    pub steps: Vec<Step>,
    pub default_latency_ns: u64,
    /// Per engine (the worker index it was built for), a latency that replaces
    /// `default_latency_ns` there: a slow worker beside fast ones.
    pub latency_by_worker: Vec<(usize, u64)>,
    /// `queue` calls (0-based, counted per engine) that answer Busy.
    pub busy_calls: Vec<u64>,
    /// Time each `queue` call takes (the clock moves on by this much), so that I/Os queued in one
    /// pass are handed over at different times.
    pub queue_cost_ns: u64,
    /// Time the handling of each completion takes before the worker sees it, so that completions
    /// reaped by one poll are handled at different times.
    pub reap_cost_ns: u64,
    /// Answer true to `refills_inline`, so that the worker hands next I/Os over from its
    /// completion handling (the SPDK engine's way).
    pub inline_refill: bool,
    /// Answer true to `interrupt_driven`: `wait_for` jumps the clock to the next completion or the
    /// timeout, whichever is first, and adds the jump to the builder's `slept`.
    pub interrupt_driven: bool,
    /// Answer true to `accounts_busy`, so that the worker keeps busy time (polled SPDK's way).
    pub account_busy: bool,
    /// Spare write buffers (`Engine::write_spares`), swapped in for writes handed over from
    /// completion handling as the SPDK engine does.
    pub write_spares: u32,
    /// Where to record the bytes each write went out with (its buffer's first `len` bytes), and
    /// whether it was handed over from completion handling.
    pub written: Option<Written>,
    /// Time the call that sends a batch takes (the clock moves on by this much before the batch's
    /// device time starts), so that fio's submission latency has something to measure.
    pub submit_cost_ns: u64,
    /// When queued I/Os leave (`None`: with `submit`, as the kernel engines send): `OnPoll` sends
    /// them at the end of the next poll, `OnQueue` in `queue`, and `Synchronous` with `submit`
    /// while saying the engine has no submission apart from the I/O.
    pub sends: Option<Sends>,
}

/// Each write's bytes as it went out, and whether it was handed over from completion handling.
pub type Written = Arc<Mutex<Vec<(Vec<u8>, bool)>>>;

/// Every op queued, per worker, for tests to inspect.
pub type SeenOps = Arc<Mutex<Vec<Vec<IoOp>>>>;

pub struct FakeBuilder {
    pub script: Script,
    pub mock: Arc<quanta::Mock>,
    pub seen: SeenOps,
    /// Mocked nanoseconds the engines slept in `wait_for`.
    pub slept: Arc<std::sync::atomic::AtomicU64>,
}

impl EngineBuilder for FakeBuilder {
    type Engine = FakeEngine;

    fn build(&self, worker: usize, queue_depth: u32, max: u32) -> Result<FakeEngine, EngineError> {
        let spares = self.script.write_spares;
        Ok(FakeEngine {
            bufs: super::buf::SlotBuffers::new((queue_depth + spares) as usize, max as usize, 0),
            map: (0..queue_depth).collect(),
            dirty: vec![true; (queue_depth + spares) as usize],
            prepared: Vec::new(),
            to_prepare: (queue_depth..queue_depth + spares).collect(),
            in_refill: false,
            script: self.script.clone(),
            mock: self.mock.clone(),
            slept: self.slept.clone(),
            worker,
            seen: self.seen.clone(),
            queued: 0,
            calls: 0,
            staged: Vec::with_capacity(queue_depth as usize),
            in_flight: Vec::with_capacity(queue_depth as usize),
            refilling: false,
        })
    }
}

pub struct FakeEngine {
    bufs: super::buf::SlotBuffers,
    /// Per slot its buffer, and the spares (see `Script::write_spares`).
    map: Vec<u32>,
    dirty: Vec<bool>,
    prepared: Vec<u32>,
    to_prepare: Vec<u32>,
    in_refill: bool,
    script: Script,
    mock: Arc<quanta::Mock>,
    slept: Arc<std::sync::atomic::AtomicU64>,
    worker: usize,
    seen: SeenOps,
    queued: usize,
    calls: u64,
    staged: Vec<(u32, Step)>,
    /// `(slot, ready_at_ns, result)`.
    in_flight: Vec<(u32, u64, Result<(), IoError>)>,
    /// Inside `poll_refill`: with `Sends::OnPoll`, its polls hold the refills back until it ends.
    refilling: bool,
}

impl FakeEngine {
    /// Sends what is staged: the call takes `submit_cost_ns`, and the device time starts after it.
    fn send(&mut self) {
        if self.staged.is_empty() {
            return;
        }
        self.mock.increment(self.script.submit_cost_ns);
        let now = self.mock.value();
        for (slot, step) in self.staged.drain(..) {
            self.in_flight.push((slot, now + step.latency_ns, step.result));
        }
    }
}

impl FakeEngine {
    /// A write handed over from completion handling takes a prepared spare, the slot's old buffer
    /// waiting to be prepared.
    fn queue_refill(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        if op.dir == crate::io::Direction::Write && self.script.write_spares > 0 {
            let spare = self.prepared.pop().expect("the worker hands over a write only with a spare prepared");
            let old = std::mem::replace(&mut self.map[slot as usize], spare);
            self.to_prepare.push(old);
        }
        self.in_refill = true;
        let queued = self.queue(slot, op);
        self.in_refill = false;
        queued
    }
}

impl Engine for FakeEngine {
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        self.mock.increment(self.script.queue_cost_ns);
        let call = self.calls;
        self.calls += 1;
        if self.script.busy_calls.contains(&call) {
            return Ok(Queued::Busy);
        }
        let b = self.map[slot as usize];
        match op.dir {
            crate::io::Direction::Read => {
                // The data a read brings lands in its buffer (at once, here).
                self.bufs.slot_mut(b)[..op.len as usize].fill(0xee);
                self.dirty[b as usize] = true;
            }
            crate::io::Direction::Write => {
                if let Some(w) = &self.script.written {
                    w.lock().expect("test lock").push((self.bufs.slot(b)[..op.len as usize].to_vec(), self.in_refill));
                }
            }
            _ => {}
        }
        let default_latency_ns = match self.script.latency_by_worker.iter().find(|(w, _)| *w == self.worker) {
            Some(&(_, ns)) => ns,
            None => self.script.default_latency_ns,
        };
        let step = self
            .script
            .steps
            .get(self.queued)
            .copied()
            .unwrap_or(Step { latency_ns: default_latency_ns, result: Ok(()) });
        self.queued += 1;
        let mut seen = self.seen.lock().expect("test lock is never poisoned");
        if seen.len() <= self.worker {
            seen.resize(self.worker + 1, Vec::new());
        }
        seen[self.worker].push(*op);
        drop(seen);
        self.staged.push((slot, step));
        if self.script.sends == Some(Sends::OnQueue) {
            self.send();
        }
        Ok(Queued::Ok)
    }

    fn submit(&mut self) -> Result<(), EngineError> {
        if self.script.sends != Some(Sends::OnPoll) {
            self.send();
        }
        Ok(())
    }

    fn sends(&self) -> Sends {
        self.script.sends.unwrap_or(Sends::OnSubmit)
    }

    fn unsent(&mut self) -> u32 {
        self.staged.len() as u32
    }

    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        let now = self.mock.value();
        let mut n = 0;
        let mut i = 0;
        while i < self.in_flight.len() && n < max {
            if self.in_flight[i].1 <= now {
                let (slot, _, result) = self.in_flight.remove(i);
                self.mock.increment(self.script.reap_cost_ns);
                done(slot, result);
                n += 1;
            } else {
                i += 1;
            }
        }
        if n == 0 && self.staged.is_empty() {
            // Time passes while a worker spins with nothing to submit: a microsecond per empty poll,
            // never past the next completion, so paced workers (which spin instead of waiting) see
            // their schedule come due.
            let next = self.in_flight.iter().map(|e| e.1).min().unwrap_or(u64::MAX);
            self.mock.increment(1_000.min(next.saturating_sub(now)));
        }
        if self.script.sends == Some(Sends::OnPoll) && !self.refilling {
            // The doorbell rings at the end of the completion processing (SPDK's delayed doorbells).
            self.send();
        }
        Ok(n)
    }

    /// The default's one completion at a time, but as one completion processing, with writes
    /// taking spares: with `Sends::OnPoll` the refills queued inside it leave at its end, as
    /// SPDK's delayed doorbells ring once `process_completions` returns (not with each completion).
    fn poll_refill<F: FnMut(u32, Result<(), IoError>) -> Option<IoOp>>(
        &mut self,
        max: u32,
        mut done: F,
    ) -> Result<(u32, u32), EngineError> {
        let (mut reaped, mut refilled) = (0, 0);
        self.refilling = true;
        let mut outcome = Ok(());
        while reaped < max {
            let mut next = None;
            match self.poll(1, |slot, result| next = done(slot, result).map(|op| (slot, op))) {
                Ok(0) => break,
                Ok(_) => reaped += 1,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
            if let Some((slot, op)) = next {
                match self.queue_refill(slot, &op) {
                    Ok(Queued::Ok) => refilled += 1,
                    Ok(Queued::Busy) => {
                        outcome = Err(EngineError::Runtime {
                            engine: "fake",
                            what: "queuing an I/O in a completed slot",
                            source: std::io::Error::other("the script made the queue busy"),
                        });
                        break;
                    }
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            }
        }
        self.refilling = false;
        if self.script.sends == Some(Sends::OnPoll) {
            self.send();
        }
        outcome.map(|()| (reaped, refilled))
    }

    /// Submits, then jumps the clock to the next completion.
    fn wait(&mut self) -> Result<(), EngineError> {
        self.submit()?;
        let now = self.mock.value();
        if let Some(next) = self.in_flight.iter().map(|e| e.1).min() {
            if next > now {
                self.mock.increment(next - now);
            }
        }
        Ok(())
    }

    fn interrupt_driven(&self) -> bool {
        self.script.interrupt_driven
    }

    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        self.submit()?;
        let now = self.mock.value();
        let next = self.in_flight.iter().map(|e| e.1).min().unwrap_or(u64::MAX);
        let jump = timeout_ns.min(next.saturating_sub(now));
        self.mock.increment(jump);
        self.slept.fetch_add(jump, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn refills_inline(&self) -> bool {
        self.script.inline_refill
    }

    fn write_spares(&self) -> u32 {
        self.script.write_spares
    }

    fn prepare_spares<F: FnMut(&mut [u8], bool)>(&mut self, mut prepare: F) {
        while let Some(b) = self.to_prepare.pop() {
            prepare(self.bufs.slot_mut(b), self.dirty[b as usize]);
            self.dirty[b as usize] = false;
            self.prepared.push(b);
        }
    }

    fn accounts_busy(&self) -> bool {
        self.script.account_busy
    }

    fn info(&self) -> EngineInfo {
        EngineInfo { name: "fake".into(), options: Vec::new() }
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(self.map[slot as usize])
    }
}
