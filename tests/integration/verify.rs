//! `--verify` through the real binary: clean runs pass, and every kind of damage done to the data
//! between runs is found, classified and located, with exit status 1.

use crate::common::{json, nvmebench, scratch_dir, stderr, stdout, uring_available};

const UNIT: usize = 4096;

#[test]
fn damage_between_runs_is_found_and_classified() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let data = dir.path().join("d.bin");
    let state = dir.path().join("state.bin");
    let (d, s) = (data.to_str().unwrap(), state.to_str().unwrap());

    // A mixed run on two workers, then a full sequential write: generation 2 everywhere.
    let o = nvmebench(&[
        "run",
        "--filename",
        d,
        "--size",
        "4m",
        "--rw",
        "randrw",
        "--verify",
        "--verify-state",
        s,
        "--ios",
        "4000",
        "--qd",
        "8",
        "--jobs",
        "2",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = &json(&o)["results"]["verify"];
    assert!(v["units_checked"].as_u64().unwrap() > 1000, "{v}");
    assert_eq!(v["mismatch_count"], 0);
    let o = nvmebench(&["run", "--filename", d, "--rw", "write", "--verify", "--verify-state", s, "--ios", "1024"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let gen2 = std::fs::read(&data).unwrap();

    // One more full pass (generation 3), then put the damage in.
    let o = nvmebench(&["run", "--filename", d, "--rw", "write", "--verify", "--verify-state", s, "--ios", "1024"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut disk = std::fs::read(&data).unwrap();
    let unit = |i: usize| i * UNIT..(i + 1) * UNIT;
    disk[5 * UNIT + 100] ^= 0xff; // a flipped byte
    let seven = disk[unit(7)].to_vec();
    disk[unit(9)].copy_from_slice(&seven); // unit 7's data written at unit 9
    disk[unit(11)].fill(0); // zeroed
    disk[unit(13)].copy_from_slice(&gen2[unit(13)]); // the last write to unit 13 lost
    disk[15 * UNIT + 2048..16 * UNIT].copy_from_slice(&gen2[15 * UNIT + 2048..16 * UNIT]); // torn
    std::fs::write(&data, &disk).unwrap();

    let o = nvmebench(&[
        "run",
        "--filename",
        d,
        "--rw",
        "read",
        "--verify",
        "--verify-state",
        s,
        "--ios",
        "1024",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "mismatches exit 1: {}", stderr(&o));
    let v = json(&o)["results"]["verify"].clone();
    let found: Vec<(u64, String)> = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["offset"].as_u64().unwrap() / UNIT as u64, m["kind"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        found,
        vec![
            (5, "payload".into()),
            (9, "misdirected".into()),
            (11, "foreign".into()),
            (13, "lost_write".into()),
            (15, "payload".into())
        ],
        "{v}"
    );
    let m = &v["mismatches"];
    assert_eq!(m[0]["first"], 100);
    assert_eq!(m[0]["bytes"], 1);
    assert_eq!(m[1]["found_offset"], 7 * UNIT as u64);
    assert_eq!(m[3]["found_generation"], 2);
    assert_eq!(m[3]["expected_generation"], 3);
    assert!(m[4]["first"].as_u64().unwrap() >= 2048 && m[4]["last"] == 4095, "{}", m[4]);

    // The text report says it in words.
    let o = nvmebench(&["run", "--filename", d, "--rw", "read", "--verify", "--verify-state", s, "--ios", "10"]);
    let out = stdout(&o);
    assert!(out.contains("lost write: found generation 2"), "{out}");
    assert!(out.contains("misdirected write: holds the data of offset 28672"), "{out}");

    // Another run's data (another seed) is stale; a state file of another range is refused.
    let o = nvmebench(&[
        "run",
        "--filename",
        d,
        "--rw",
        "read",
        "--verify",
        "--verify-state",
        s,
        "--seed",
        "7",
        "--ios",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("was written with --seed"), "{}", stderr(&o));
    let o = nvmebench(&[
        "run",
        "--filename",
        d,
        "--rw",
        "read",
        "--verify",
        "--verify-state",
        s,
        "--size",
        "1m",
        "--ios",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not this run's working set"), "{}", stderr(&o));
}

#[test]
fn verify_needs_a_real_target() {
    let o = nvmebench(&["run", "--engine", "null", "--verify", "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the null engine stores nothing to verify"), "{}", stderr(&o));
    let o = nvmebench(&["run", "--engine", "null", "--verify-state", "x", "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A job file's verify keeps its state with `--verify-state` as a run does (it was refused there,
/// though the read-only job's refusal sent the user to it), and damage it finds ends the job file
/// with status 1 and a line saying so, where it ended with 0.
#[test]
fn a_job_files_verify_keeps_its_state_and_fails_on_damage() {
    let dir = scratch_dir();
    let data = dir.path().join("v.dat");
    std::fs::write(&data, vec![7u8; 1 << 20]).unwrap();
    let state = dir.path().join("state.json");
    let job = |rw: &str| {
        let p = dir.path().join(format!("{rw}.fio"));
        std::fs::write(&p, format!("[v]\nfilename={}\nrw={rw}\nbs=4k\nverify=md5\nsize=1m\n", data.display())).unwrap();
        p
    };
    let run = |rw: &str| {
        let (j, s) = (job(rw), state.to_str().unwrap().to_string());
        nvmebench(&["run", j.to_str().unwrap(), "--verify-state", &s, "--output-format=json"])
    };
    let o = run("write");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(state.exists(), "the job file's run saved its state");
    let o = run("read");
    assert_eq!(o.status.code(), Some(0), "the data is as written: {}", stderr(&o));
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[5 * UNIT..6 * UNIT].fill(0xee);
    std::fs::write(&data, bytes).unwrap();
    let o = run("read");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("[v]: verify found"), "{}", stderr(&o));
    let o = nvmebench(&["run", "--filename", data.to_str().unwrap(), "--verify-state", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("this run verifies nothing; add --verify"), "{}", stderr(&o));
}
