//! Bounded fuzzing of every parser users feed text to: whatever the input, an answer or an error
//! sentence, never a panic. The option parsers run a few thousand cases each; the files users pass
//! around (job files with their includes and variables, result documents read by `report` and
//! `merge`, verify-state files, suite profiles and, with the spdk feature, transport IDs) are
//! mutated from valid ones and drawn at random in [`files`], with a fixed number of cases per
//! target (`scripts/fuzz.sh --cases N` runs more).

use nvmebench::cli::Cli;
use nvmebench::config::EngineSpec;
use nvmebench::units;
use nvmebench::workload::RwMode;
use nvmebench::workload::bssplit::BsSplit;
use nvmebench::workload::dist::RandomDist;
use proptest::prelude::*;

mod files;

/// Text that looks like what users type, plus arbitrary bytes now and then.
fn option_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9a-zA-Z:/,.%_=-]{0,24}",
        "[0-9]{1,25}[kKmMgGtTpPbiB]{0,3}",
        "[0-9]{1,4}[kmg]?/[0-9.]{0,6}(:[0-9]{1,4}[kmg]?/[0-9.]{0,6}){0,5}(,[0-9]{1,4}k)?",
        "(zipf|pareto|normal|uniform)(:[-0-9.e]{0,8})?",
        "(null|uring|uring-cmd|aio|psync|spdk)(:[a-z_]{0,12}(=[0-9a-z]{0,6})?(,[a-z_]{0,10}(=[0-9]{0,4})?){0,3})?",
        ".{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn unit_parsers_never_panic(t in option_text()) {
        let _ = units::parse_size(&t);
        let _ = units::parse_size_or_percent(&t);
        let _ = units::parse_duration(&t);
        let _ = units::parse_core_list(&t);
        let _ = BsSplit::parse(&t);
        let _ = BsSplit::parse_pair(&t);
        let _ = RandomDist::parse(&t);
        let _ = RwMode::parse(&t);
        let _ = EngineSpec::parse(&t);
        // fio's time values, read as fio reads them.
        for key in ["runtime", "ramp_time", "startdelay", "thinktime", "thinktime_spin"] {
            let _ = nvmebench::fio::options::map(key, Some(&t));
        }
    }

    #[test]
    fn accepted_sizes_are_exact(n in 0u64..1_000_000, unit in prop::sample::select(vec![("", 1u64), ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30)])) {
        prop_assert_eq!(units::parse_size(&format!("{n}{}", unit.0)), Ok(n * unit.1));
    }

    #[test]
    fn bssplit_weights_that_sum_to_100_parse(a in 1u32..99) {
        let s = BsSplit::parse(&format!("4k/{a}:64k/{}", 100 - a)).unwrap();
        prop_assert_eq!(s.entries.len(), 2);
    }

    /// The whole command line: any mix of real option names and fuzzed values parses or is refused
    /// with an error, never a panic (clap's own checks and every value parser).
    #[test]
    fn the_command_line_never_panics(
        opts in prop::collection::vec(
            (prop::sample::select(vec![
                "--rw", "--bs", "--bssplit", "--qd", "--cores", "--jobs", "--time", "--ramp", "--ios",
                "--offset", "--size", "--align", "--random-dist", "--seed", "--rate-iops", "--interval",
                "--percentiles", "--output", "--on-error", "--engine", "--drain-timeout", "--trid",
                "--mem-size", "--io-queue-size", "--start-delay", "--rwmixread",
            ]), option_text()),
            0..6,
        )
    ) {
        let mut args = vec!["nvmebench".to_string(), "run".to_string()];
        for (k, v) in opts {
            args.push(k.to_string());
            args.push(v);
        }
        if let Ok(cli) = <Cli as clap::Parser>::try_parse_from(&args) {
            // Resolution reads the machine (cores, the null device) but writes nothing without
            // --filename, which this never passes.
            if let nvmebench::cli::Command::Run(run) = cli.command {
                if run.filename.is_empty() && run.engine.as_deref().is_some_and(|e| e.starts_with("null")) {
                    let _ = nvmebench::config::RunConfig::resolve(&run);
                }
            }
        }
    }
}
