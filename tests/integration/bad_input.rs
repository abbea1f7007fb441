//! Every bad input: exit status 2, one line on stderr naming the problem and the fix, nothing on
//! stdout, and nothing created or written.

use crate::common::{make_file, nvmebench, scratch_dir, stderr, stdout};

#[test]
fn each_bad_input_exits_2_with_one_sentence() {
    let dir = scratch_dir();
    let file = make_file(dir.path(), "one-mib.bin", 1 << 20);
    let f = file.to_str().unwrap();
    let newfile = dir.path().join("never-created.bin");
    let nf = newfile.to_str().unwrap();
    let before = std::fs::read(&file).unwrap();
    let twice = format!("{f}:{f}");
    let dotted = format!("{}/./one-mib.bin", dir.path().display());
    let new_then_bad = format!("{nf}:/");
    let empty_in_list = format!("{f}::{nf}");
    let dir_s = dir.path().to_str().unwrap();
    // Output files named for another format than the one written; with the null engine, so that a
    // run that wrongly goes ahead is short.
    let named = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (json_html, text_json, json_csv) = (named("r.html"), named("r.json"), named("r.csv"));
    let fio_md = format!("--output={}", named("r.md"));
    let misnamed = [&json_html, &text_json, &json_csv, &named("r.md")].map(std::path::PathBuf::from);

    let cases: &[(&[&str], &str)] = &[
        (&["--filename", f, "--bs", "1000"], "--bs 1000 is not a multiple of"),
        (&["--filename", f, "--bssplit", "4k/60:64k/30"], "weights add up to 90%, not 100%"),
        (&["--filename", f, "--bssplit", "4k/x"], "has weight 'x'"),
        (&["--filename", f, "--rw", "randrw", "--rwmixread", "101"], "use a whole number from 0 to 100"),
        (&["--filename", f, "--rwmixread", "70"], "--rwmixread applies only to --rw rw and randrw"),
        (&["--filename", f, "--qd", "0"], "is not a queue depth"),
        (&["--filename", f, "--cores", "9999"], "core 9999 does not exist"),
        (&["--filename", f, "--cores", "3-1"], "is not an ascending core range"),
        (&["--filename", f, "--jobs", "0"], "is not a worker count"),
        (&["--filename", f, "--offset", "512k", "--size", "1m"], "past the end of"),
        (&["--filename", f, "--offset", "200%"], "is not a percentage"),
        (&["--filename", f, "--size", "1k"], "smaller than the largest I/O"),
        (&["--filename", f, "--align", "0"], "0 is not an alignment"),
        (&["--filename", f, "--align", "1000"], "--align 1000 is not a multiple of"),
        (&["--filename", f, "--offset", "1000", "--size", "64k"], "--offset 1000 is not a multiple of"),
        (&["--filename", "/nonexistent/dir/target"], "does not exist; create it, or add --size"),
        (&["--filename", "/"], "is a directory"),
        (&["--filename", "/dev/null"], "is a character device"),
        (&["--filename", nf, "--size", "1m", "--bs", "1000"], "--bs 1000 is not a multiple of"),
        (&["--filename", nf, "--size", "1m", "--rw", "randrw", "--rwmixread", "300"], "from 0 to 100"),
        (&["--filename", f, "--engine", "spdk2"], "is not an engine"),
        (&["--filename", f, "--engine", "null:lat=abc"], "is not a duration"),
        (&["--filename", f, "--engine", "uring:fixedbufs=maybe"], "is not on or off"),
        (&["--filename", f, "--engine", "uring:sqpoll2"], "unknown option 'sqpoll2'"),
        (&["--filename", f, "--bs", "4q"], "unknown unit 'q'"),
        (&["--filename", f, "--bs", "0"], "is not a block size"),
        (&["--filename", f, "--time", "0"], "is zero"),
        (&["--filename", f, "--time", "5parsecs"], "unknown time unit"),
        (&["--filename", f, "--ramp", "x"], "is not a duration"),
        (&["--filename", f, "--ios", "0"], "is not an I/O count"),
        (&["--filename", f, "--rate-iops=-5"], "is not a rate"),
        (&["--filename", f, "--rate", "0"], "a rate of 0 paces nothing"),
        (&["--filename", f, "--rate", "fast"], "is not a rate; give bytes per second"),
        (&["--filename", f, "--rate", "1m,1m,1m,1m"], "gives more than three rates"),
        (&["--filename", f, "--bs", "4k,4k,4k,4k"], "gives more than three sizes"),
        (&["--filename", f, "--bssplit", "4k,4k,4k,4k"], "gives more than three mixes"),
        (&["--filename", f, "--bs", "4k,4k,0"], "is not a block size"),
        (&["--filename", f, "--rw", "trimwrite", "--bs", "4k,64k,1m"], "give one size for both"),
        (&["--filename", f, "--rate", ",20m"], "it paces only writes and trims, and --rw randread issues only reads"),
        (
            &["--filename", f, "--rw", "randtrim", "--rate", ",20m,"],
            "it paces only writes, and --rw randtrim issues only trims",
        ),
        (&["--filename", f, "--rate", "1m", "--rate-iops", "100"], "cannot be used with"),
        (&["--filename", f, "--rate-process", "poisson"], "nothing is paced; add --rate or --rate-iops"),
        (&["--filename", f, "--rate", "1m", "--rate-process", "bursty"], "use linear or poisson"),
        (
            &["--filename", f, "--thinktime", "0", "--thinktime-blocks", "4"],
            "--thinktime-blocks: it shapes --thinktime 0, which is no think time; drop it, or give --thinktime a time above 0",
        ),
        (&["--filename", f, "--thinktime", "soon"], "is not a duration"),
        // A bare number is microseconds, which fio reads whole: 1.5 is neither 1.5 s nor 1 us here.
        (
            &["--filename", f, "--thinktime", "1.5"],
            "'1.5' has no unit, so it is microseconds, which fio reads only as a whole number (it stops at the '.'); give the unit, like 1.5us or 1.5s",
        ),
        (
            &["--filename", f, "--thinktime", "1ms", "--thinktime-spin", "0.5"],
            "'0.5' has no unit, so it is microseconds",
        ),
        (&["--filename", f, "--thinktime-blocks", "4"], "which is not given; add --thinktime"),
        (
            &["--filename", f, "--thinktime-blocks-type", "issue"],
            "--thinktime-blocks-type: it shapes --thinktime, which is not given; add --thinktime",
        ),
        (
            &["--filename", f, "--thinktime", "1ms", "--thinktime-blocks-type", "issued"],
            "'issued' is not a thinktime_blocks_type; use complete (fio's default) or issue",
        ),
        (&["--filename", f, "--thinktime", "1ms", "--thinktime-blocks", "0"], "is not a block count"),
        (&["--filename", f, "--thinktime", "1ms", "--thinktime-spin", "2ms"], "spin for at most the think time"),
        (
            &["--filename", f, "--rw", "randwrite", "--buffer-compress-percentage", "101"],
            "use a whole number from 0 to 100",
        ),
        (&["--filename", f, "--rw", "randwrite", "--dedupe-percentage=-1"], "from 0 to 100"),
        (&["--filename", f, "--buffer-compress-percentage", "50"], "and --rw randread writes nothing"),
        (&["--filename", f, "--random-dist", "zipf:1"], "zipf's theta must differ from 1"),
        (&["--filename", f, "--random-dist", "pareto:2"], "needs an h between 0 and 1"),
        (&["--filename", f, "--random-dist", "gauss"], "is not a random distribution"),
        (&["--filename", f, "--rw", "randomread"], "is not an access pattern"),
        (&["--filename", f, "--rw", "randrw", "--rwmix", "read=70,write=20"], "add up to 90, not 100"),
        (&["--filename", f, "--rw", "randrw", "--rwmix", "read=70,erase=30"], "'erase' is not an operation"),
        (&["--filename", f, "--rw", "randrw", "--rwmix", "read=100", "--rwmixread", "50"], "cannot be used with"),
        (&["--filename", f, "--rwmix", "read=50,trim=50"], "--rwmix applies only to --rw rw and randrw"),
        (&["--filename", f, "--rw", "trim", "--rwmixread", "50"], "--rwmixread applies only to --rw rw and randrw"),
        (&["--filename", f, "--rw", "randtrim", "--verify"], "trimmed and zeroed blocks have no header to check"),
        (
            &["--filename", f, "--rw", "randrw", "--rwmix", "write=90,write-zeroes=10", "--verify"],
            "drop --verify or the trims",
        ),
        (&["--filename", f, "--percentiles", "50,101"], "is not a percentile"),
        (&["--filename", f, "--percentiles", "50,99,50.0"], "percentile 50 is listed twice"),
        (&["--filename", f, "--interval", "0"], "is zero"),
        (&["--filename", f, "--telemetry-interval", "50ms"], "shorter than the 100ms minimum"),
        (&["--filename", f, "--json", "/nonexistent/dir/out.json"], "does not exist; create it or pick another path"),
        (&["--filename", f, "--output", "xml"], "invalid value 'xml'"),
        (&["--filename", f, "--on-error", "ignore"], "invalid value 'ignore'"),
        (&["--filename", f, "--bs", "4k", "--bssplit", "4k/100"], "cannot be used with"),
        (&["--filename", f, "--foo"], "unexpected argument '--foo'"),
        // A value with a minus sign: clap would call it an unknown option and suggest `-- -5`.
        (&["--filename", f, "--time", "-5"], "--time cannot be negative ('-5')"),
        // Output paths that are directories are refused before the run, not after it.
        (&["--filename", f, "--json", dir_s], "is a directory; name a file"),
        (&["--filename", f, "--output-file", dir_s], "is a directory; name a file"),
        // Output files whose extension says another format than the one written.
        (
            &["--filename", f, "--engine", "null", "--ios", "1000", "--json", &json_html],
            "the extension says HTML, but --json writes JSON; name it",
        ),
        (
            &["--filename", f, "--engine", "null", "--ios", "1000", "--output-file", &text_json],
            "the extension says JSON, but the report is text; add --output-format json (fio's JSON) or --output json",
        ),
        (
            &["--filename", f, "--engine", "null", "--ios", "1000", "--output", "json", "--output-file", &json_csv],
            "the extension says CSV, but the report is nvmebench's JSON (--output json); name it",
        ),
        (
            &["--filename", f, "--engine", "null", "--ios", "1000", "--output-format=json+", &fio_md],
            "the extension says Markdown, but the report is fio's JSON (--output-format json+); name it",
        ),
        (&["--filename", f, "--bs", "-4k"], "--bs cannot be negative ('-4k')"),
        (&["--filename", f, "--engine", "aio:poll"], "the aio engine takes reap_max=N"),
        (&["--filename", f, "--engine", "psync:x=1"], "the psync engine takes no options"),
        (&["--filename", f, "--engine", "uring:sqpoll,defer_taskrun=1"], "do not go with sqpoll"),
        (&["--filename", f, "--engine", "uring:submit_batch=0"], "is not a batch size"),
        (&["--filename", f, "--engine", "uring:sqpoll_cpu=x"], "is not a core number"),
        (&["--filename", f, "--engine", "uring:sqpoll_cpu=9999"], "core 9999 does not exist"),
        (
            &["--filename", f, "--engine", "spdk:x"],
            if cfg!(feature = "spdk") { "and its other options as flags" } else { "spdk: not compiled in" },
        ),
        (&["--filename", f, "--verify-state", "s.bin"], "--verify"),
        (
            &["--filename", f, "--rw", "randwrite", "--verify", "--verify-state", "/nonexistent/dir/s.bin"],
            "the directory /nonexistent/dir does not exist",
        ),
        (&["--filename", f, "--rw", "randread", "--verify"], "a read-only workload has nothing to check"),
        (&["--filename", f, "--confirm-serial", "X"], "--allow-destroy"),
        (&["--filename", f, "--spdk-inject-error", "read:0"], "is not an injection"),
        (&["--filename", f, "--spdk-inject-error", "trim:5"], "is not an injection"),
        (&["--filename", f, "--spdk-inject-error", "read:5:0:0"], "which is success"),
        (&["--filename", f, "--io-queue-size", "1"], "is not an I/O queue size"),
        (&["--filename", f, "--mem-size", "0"], "is not a memory size in MiB"),
        (&["--filename", f, "--iova-mode", "xx"], "invalid value 'xx'"),
        (&["--filename", f, "--start-at", "1"], "--start-at"),
        (&["--filename", f, "--start-delay", "2 weeks"], "--start-delay"),
        (&["--filename", f, "--rw", "write", "--size", "0"], "smaller than the largest I/O"),
        (&["--filename", f, "--rw", "randrw", "--bs", "4k,7"], "--bs 7 is not a multiple of"),
        (&["--filename", f, "--rw", "randrw", "--bssplit", "4k/50:64k/50,3/100"], "--bssplit 3 is not a multiple of"),
        (&["--filename", f, "--seed=-1"], "--seed"),
        (&["--filename", f, "--jobs", "99999"], "is not a worker count"),
        (&["--filename", f, "--spdk-reset-after", "1s"], "--spdk-reset-after is an option of the spdk engine"),
        (&["--filename", f, "--spdk-reset-after", "0s"], "--spdk-reset-after"),
        (&["--filename", f, "--poll-gap", "50ns"], "--poll-gap is an option of the spdk engine"),
        (&["--filename", f, "--poll-gap", "1ms"], "is longer than 10us"),
        (&["--filename", f, "--trid", "trtype:PCIe traddr:0000:01:00.0"], "--trid is an option of the spdk engine"),
        (&["--filename", f, "--engine", "uring:reap_max=0"], "reap_max=0"),
        (&["--filename", &twice], "is the same target as"),
        (&["--filename", f, "--filename", &dotted], "is the same target as"),
        (&["--filename", nf, "--filename", nf, "--size", "1m"], "is the same target as"),
        (&["--filename", &new_then_bad, "--size", "1m"], "is a directory"),
        (&["--filename", &empty_in_list, "--size", "1m"], "has an empty name in its list"),
        (&["--filename", "/nonexistent/dir/f", "--size", "1m"], "its directory /nonexistent/dir does not exist"),
        (&["--filename", f, "--each-worker-all-targets"], "places several targets, and this run has one"),
        // fio's boolean options take a value, as fio requires.
        (&["--filename", f, "--disable_clat"], "--disable_clat needs a value, as in fio (which refuses it bare)"),
        (&["--filename", f, "--gtod_reduce", "--runtime=1"], "--gtod_reduce needs a value"),
        (
            &[
                "--filename",
                f,
                "--filename",
                nf,
                "--size",
                "1m",
                "--rw",
                "randread",
                "--verify",
                "--verify-state",
                "s.bin",
            ],
            "nothing to check its reads against",
        ),
    ];
    for (args, expected) in cases {
        let mut full = vec!["run"];
        full.extend_from_slice(args);
        let o = nvmebench(&full);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: expected '{expected}' in: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line, got: {err}");
        assert!(err.starts_with("nvmebench: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(stdout(&o), "", "{args:?}: nothing on stdout");
        assert!(!newfile.exists(), "{args:?}: created {nf}");
        for p in &misnamed {
            assert!(!p.exists(), "{args:?}: wrote {}", p.display());
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), before, "the target was not touched");
}

#[test]
fn no_subcommand_prints_usage_and_exits_2() {
    let o = nvmebench(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Usage"), "{}", stderr(&o));
}

#[test]
fn fio_habits_without_a_command_say_where_they_go() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, "[j]\nrw=randread\n").unwrap();
    let job = job.to_str().unwrap();
    let cases: [(&[&str], String); 3] = [
        (&[job], format!("'{job}' is not a command; to run a fio job file, use `nvmebench run {job}`")),
        (
            &["--rw=randread", "--bs=4k"],
            "--rw needs a command before it: fio's options go after `nvmebench run`".into(),
        ),
        (&["--name", "x"], "--name needs a command before it".into()),
    ];
    for (args, expected) in cases {
        let o = nvmebench(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(&format!("nvmebench: {expected}")), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    // An unknown word that is no file stays clap's own refusal.
    let o = nvmebench(&["nosuchcommand"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unrecognized subcommand 'nosuchcommand'"), "{}", stderr(&o));
}

#[test]
fn help_and_version_exit_0() {
    let o = nvmebench(&["run", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("--bssplit"));
    let o = nvmebench(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("nvmebench "));
}
