//! The one place that turns a resolved engine specification and its target into an engine builder
//! and runs the workers with it.
//!
//! `run`, `compare` and `suite` (and anything that runs a workload later) describe *what* to run as
//! a [`coordinator::RunPlan`] and *on what* as an [`EngineSpec`] plus an [`EngineTarget`]; this
//! module picks the builder type (static dispatch: each arm instantiates the worker loop for its
//! engine; the coordinator holds each worker thread's body behind one `dyn`, so the threads of one
//! run may each have their own engine) and hands back the results. It does not resolve flags (that is
//! `config`) or print anything (that is `report`).

use crate::config::EngineSpec;
use crate::coordinator::{self, CoordinatorError, IntervalPoint, RunPlan, RunResult, ThreadBody};
use crate::engine::aio::AioBuilder;
use crate::engine::null::NullBuilder;
use crate::engine::posixaio::PosixAioBuilder;
use crate::engine::psync::{PsyncBuilder, SyncCall};
use crate::engine::uring::UringBuilder;
use crate::engine::uring_cmd::UringCmdBuilder;
use crate::engine::{EngineBuilder, EngineError};
use std::path::PathBuf;
use std::sync::Arc;

/// What the engines need besides their own options: the target and how buffers are filled.
#[derive(Clone, Copy)]
pub struct EngineTarget<'a> {
    /// The files or devices of the kernel engines, one per target; empty for null and SPDK.
    pub paths: &'a [PathBuf],
    /// Whether the workload writes (kernel engines open read-only otherwise).
    pub writes: bool,
    /// O_DIRECT, or through the page cache (`--buffered`) on the engines that have one.
    pub direct: bool,
    /// Seeds the write buffers' contents.
    pub buffer_seed: u64,
    /// The attached controllers, for `EngineSpec::Spdk`.
    pub spdk: Option<&'a SpdkRun>,
}

/// Runs `plan` through the engine `spec` names. `observe` sees each completed interval.
///
/// # Errors
/// What the coordinator reports: a worker that failed before the start, an interrupted start.
///
/// # Panics
/// When a kernel engine has no target path or an SPDK spec no attached session: resolution
/// guarantees both.
pub fn run_engine(
    spec: &EngineSpec,
    on: EngineTarget<'_>,
    plan: RunPlan,
    observe: impl FnMut(&IntervalPoint),
) -> Result<RunResult, CoordinatorError> {
    let threads = plan.workers.iter().map(|w| w.thread + 1).max().unwrap_or(0);
    run_engines(&[(spec, on)], &vec![0; threads], plan, observe)
}

/// Runs `plan` with each worker thread on its own engine: thread `t` on `engines[engine_of[t]]`
/// (a fio group's jobs, each on its own ioengine, or the same one with its own `direct`). One
/// start gate and one coordinator for all, as with one engine.
///
/// # Errors
/// As [`run_engine`].
///
/// # Panics
/// As [`run_engine`]; and when `engine_of` misses a worker thread or names no engine.
pub fn run_engines(
    engines: &[(&EngineSpec, EngineTarget<'_>)],
    engine_of: &[usize],
    plan: RunPlan,
    observe: impl FnMut(&IntervalPoint),
) -> Result<RunResult, CoordinatorError> {
    let target_of: Vec<usize> = plan.workers.iter().map(|w| w.target).collect();
    let bodies: Vec<Arc<dyn ThreadBody>> = engines.iter().map(|(spec, on)| body(spec, *on, &target_of)).collect();
    let per_thread = engine_of.iter().map(|&e| bodies[e].clone()).collect();
    coordinator::run_threads(per_thread, plan, crate::clock::Clock::new(), observe)
}

/// The one engine dispatch: a worker thread's body on the engine `spec` names, its lanes each on
/// their target (`target_of`, per lane). Each arm instantiates the worker loop for its engine.
fn body(spec: &EngineSpec, on: EngineTarget<'_>, target_of: &[usize]) -> Arc<dyn ThreadBody> {
    let paths = || {
        assert!(!on.paths.is_empty(), "every engine but null and spdk has a target path");
        on.paths.iter().cloned()
    };
    let (writes, direct, buffer_seed) = (on.writes, on.direct, on.buffer_seed);
    fn each<B: EngineBuilder + 'static>(builders: Vec<B>, target_of: &[usize]) -> Arc<dyn ThreadBody> {
        Arc::new(PerTarget { builders, target_of: target_of.to_vec() })
    }
    match spec {
        EngineSpec::Null(o) => each(vec![NullBuilder { options: *o }], target_of),
        EngineSpec::Uring(o) => each(
            paths().map(|path| UringBuilder { path, writes, direct, options: *o, buffer_seed }).collect(),
            target_of,
        ),
        EngineSpec::UringCmd(o) => {
            each(paths().map(|path| UringCmdBuilder { path, writes, options: *o, buffer_seed }).collect(), target_of)
        }
        EngineSpec::Aio(o) => {
            each(paths().map(|path| AioBuilder { path, writes, direct, buffer_seed, options: *o }).collect(), target_of)
        }
        EngineSpec::PosixAio => {
            each(paths().map(|path| PosixAioBuilder { path, writes, direct, buffer_seed }).collect(), target_of)
        }
        EngineSpec::Psync | EngineSpec::Falloc | EngineSpec::Ftruncate => {
            let call = match spec {
                EngineSpec::Falloc => SyncCall::Fallocate,
                EngineSpec::Ftruncate => SyncCall::Ftruncate,
                _ => SyncCall::Transfer,
            };
            each(paths().map(|path| PsyncBuilder { path, writes, direct, buffer_seed, call }).collect(), target_of)
        }
        #[cfg(feature = "spdk")]
        EngineSpec::Spdk(_) => {
            let s = on.spdk.expect("resolution attached the spdk session");
            // One target per selected namespace, in --trid order.
            let b = s
                .session
                .namespaces
                .iter()
                .map(|ns| crate::engine::spdk::SpdkBuilder {
                    namespaces: vec![ns.clone()],
                    options: crate::engine::spdk::SpdkOptions { writes, ..s.options },
                    buffer_seed,
                })
                .collect();
            each(b, target_of)
        }
        #[cfg(not(feature = "spdk"))]
        EngineSpec::Spdk(_) => match on.spdk {
            Some(never) => match *never {},
            None => unreachable!("EngineSpec::parse refuses spdk without the feature"),
        },
    }
}

/// Builds each lane's engine with its target's builder (the null engine has one builder for all).
struct PerTarget<B> {
    builders: Vec<B>,
    /// Per lane, its target.
    target_of: Vec<usize>,
}

impl<B: EngineBuilder> EngineBuilder for PerTarget<B> {
    type Engine = B::Engine;

    fn build(&self, lane: usize, queue_depth: u32, max_io_bytes: u32) -> Result<B::Engine, EngineError> {
        let t = self.target_of.get(lane).copied().unwrap_or(0).min(self.builders.len() - 1);
        self.builders[t].build(lane, queue_depth, max_io_bytes)
    }
}

/// What the SPDK engine needs beyond the config: the attached controllers and the queue-pair knobs.
#[cfg(feature = "spdk")]
pub struct SpdkRun {
    pub session: crate::engine::spdk::SpdkSession,
    pub options: crate::engine::spdk::SpdkOptions,
    /// `--spdk-reset-after`.
    pub reset_after: Option<std::time::Duration>,
}

/// How many targets an SPDK run has (its selected namespaces); 1 without one.
pub fn spdk_targets(spdk: Option<&SpdkRun>) -> usize {
    match spdk {
        #[cfg(feature = "spdk")]
        Some(s) => s.session.namespaces.len().max(1),
        _ => 1,
    }
}

/// Without the `spdk` feature there is never an SPDK run.
#[cfg(not(feature = "spdk"))]
pub enum SpdkRun {}
