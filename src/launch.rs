//! The one place that turns a resolved engine specification and its target into an engine builder
//! and runs the workers with it.
//!
//! `run`, `compare` and `suite` (and anything that runs a workload later) describe *what* to run as
//! a [`coordinator::RunPlan`] and *on what* as an [`EngineSpec`] plus an [`EngineTarget`]; this
//! module picks the builder type (static dispatch: each arm instantiates the coordinator and the
//! worker loop for its engine) and hands back the results. It does not resolve flags (that is
//! `config`) or print anything (that is `report`).

use crate::config::EngineSpec;
use crate::coordinator::{self, CoordinatorError, IntervalPoint, RunPlan, RunResult};
use crate::engine::aio::AioBuilder;
use crate::engine::null::NullBuilder;
use crate::engine::psync::PsyncBuilder;
use crate::engine::uring::UringBuilder;
use crate::engine::uring_cmd::UringCmdBuilder;
use std::path::PathBuf;
use std::sync::Arc;

/// What the engines need besides their own options: the target and how buffers are filled.
#[derive(Clone, Copy)]
pub struct EngineTarget<'a> {
    /// The file or device of the kernel engines; `None` for null and SPDK.
    pub path: Option<&'a std::path::Path>,
    /// Whether the workload writes (kernel engines open read-only otherwise).
    pub writes: bool,
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
    let clock = quanta::Clock::new();
    let path = || -> PathBuf { on.path.expect("every engine but null and spdk has a target path").to_path_buf() };
    let (writes, buffer_seed) = (on.writes, on.buffer_seed);
    match spec {
        EngineSpec::Null(o) => coordinator::run(Arc::new(NullBuilder { options: *o }), plan, clock, observe),
        EngineSpec::Uring(o) => {
            let builder = UringBuilder { path: path(), writes, options: *o, buffer_seed };
            coordinator::run(Arc::new(builder), plan, clock, observe)
        }
        EngineSpec::UringCmd(o) => {
            let builder = UringCmdBuilder { path: path(), writes, options: *o, buffer_seed };
            coordinator::run(Arc::new(builder), plan, clock, observe)
        }
        EngineSpec::Aio => {
            coordinator::run(Arc::new(AioBuilder { path: path(), writes, buffer_seed }), plan, clock, observe)
        }
        EngineSpec::Psync => {
            coordinator::run(Arc::new(PsyncBuilder { path: path(), writes, buffer_seed }), plan, clock, observe)
        }
        #[cfg(feature = "spdk")]
        EngineSpec::Spdk => {
            let s = on.spdk.expect("resolution attached the spdk session");
            let builder = crate::engine::spdk::SpdkBuilder {
                namespaces: s.session.namespaces.clone(),
                options: s.options,
                buffer_seed,
            };
            coordinator::run(Arc::new(builder), plan, clock, observe)
        }
        #[cfg(not(feature = "spdk"))]
        EngineSpec::Spdk => match on.spdk {
            Some(never) => match *never {},
            None => unreachable!("EngineSpec::parse refuses spdk without the feature"),
        },
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

/// Without the `spdk` feature there is never an SPDK run.
#[cfg(not(feature = "spdk"))]
pub enum SpdkRun {}
