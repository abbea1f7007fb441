//! Workload profiles as data: one TOML file per profile, the built-in ones compiled in from
//! `profiles/`, user ones read with `--profile FILE`.
//!
//! A profile is a list of steps; a step is one or more concurrent streams, each a workload in `run`'s
//! words (`rw`, `rwmixread`, `bs` or `bssplit`) with its share of the threads, its queue depth and its
//! region of the working set. A step with a single stream may write the stream's keys directly in
//! the step. This module parses and checks the text and adapts block sizes to the device; it does not
//! run anything (that is `exec`) nor decide which steps a suite runs (that is `plan`).
//!
//! ```toml
//! name = "database-sql"
//! title = "Database, SQL-like OLTP"          # optional
//! description = "..."
//! source = "where the numbers come from"     # optional
//! working_set = "25%"                        # optional: share of the working set the steps use
//!
//! [precondition]                             # optional: the workload-dependent preconditioning
//! rw = "randwrite"
//! bssplit = "4k/60:64k/40"
//!
//! [[step]]
//! name = "sql-90-10"
//!   [[step.stream]]
//!   name = "data"
//!   rw = "randrw"                            # read, write, randread, randwrite, rw, randrw
//!   rwmixread = 90
//!   bssplit = "8k/90:64k/10,8k"              # or bs = "8k"
//!   threads = "100%"                         # a share of the suite's --jobs, or a count (default 100%)
//!   qd = 32                                  # default: the suite's --qd
//!   region = "0%-90%"                        # part of the working set (default all of it)
//!   random_dist = "uniform"                  # as run's --random-dist
//! ```

use crate::options::SmallBlocks;
use crate::units::{self, format_size};
use crate::workload::RwMode;
use crate::workload::bssplit::{BsEntry, BsSplit};
use crate::workload::dist::RandomDist;
use serde::Deserialize;

/// The profiles shipped with nvmebench, as `(file name, text)`.
pub const BUILT_IN: [(&str, &str); 8] = [
    ("four-corners.toml", include_str!("../../profiles/four-corners.toml")),
    ("8k-70-30.toml", include_str!("../../profiles/8k-70-30.toml")),
    ("file-server.toml", include_str!("../../profiles/file-server.toml")),
    ("web-server.toml", include_str!("../../profiles/web-server.toml")),
    ("database-sql.toml", include_str!("../../profiles/database-sql.toml")),
    ("database-oracle.toml", include_str!("../../profiles/database-oracle.toml")),
    ("vdi.toml", include_str!("../../profiles/vdi.toml")),
    ("working-set-25.toml", include_str!("../../profiles/working-set-25.toml")),
];

/// A thread count: absolute, or a share of the suite's `--jobs` (at least one).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Threads {
    Count(usize),
    Percent(f64),
}

impl Threads {
    /// The number of threads with `jobs` threads in the suite.
    pub fn resolve(self, jobs: usize) -> usize {
        match self {
            Threads::Count(n) => n,
            Threads::Percent(p) => ((jobs as f64 * p / 100.0).round() as usize).max(1),
        }
    }

    /// Whether the count follows the suite's threads (a sweep changes it).
    pub fn scales(self) -> bool {
        matches!(self, Threads::Percent(_))
    }
}

/// One workload stream of a step, checked.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Stream {
    pub name: String,
    pub rw: RwMode,
    pub rwmixread: Option<u32>,
    /// Block sizes for reads and writes.
    pub bs_read: BsSplit,
    pub bs_write: BsSplit,
    pub threads: Threads,
    /// `None`: the suite's `--qd` (and the sweep's).
    pub qd: Option<u32>,
    /// Part of the working set, as fractions `[start, end)`.
    pub region: (f64, f64),
    pub random_dist: Option<String>,
}

impl Stream {
    /// Share of I/Os that are reads, in percent.
    pub fn read_percent(&self) -> u32 {
        match self.rw.fixed_mix() {
            Some(m) => m.share(crate::io::Direction::Read),
            None => self.rwmixread.unwrap_or(crate::config::DEFAULT_RWMIXREAD),
        }
    }

    /// `run`'s `--bssplit` text for these sizes.
    pub fn bssplit_arg(&self) -> String {
        format!("{},{}", self.bs_read.to_fio(), self.bs_write.to_fio())
    }
}

/// One step: streams that run together.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Step {
    pub name: String,
    pub streams: Vec<Stream>,
}

/// A checked profile.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Profile {
    pub name: String,
    pub title: String,
    pub description: String,
    pub source: Option<String>,
    /// Share of the working set the steps use, in percent.
    pub working_set_percent: Option<f64>,
    /// The workload of workload-dependent preconditioning, if not the default.
    pub precondition: Option<Stream>,
    pub steps: Vec<Step>,
    /// Where it came from: `built-in` or the file's path.
    pub origin: String,
    #[serde(skip)]
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileToml {
    name: String,
    title: Option<String>,
    description: String,
    source: Option<String>,
    working_set: Option<String>,
    precondition: Option<StreamToml>,
    #[serde(default)]
    step: Vec<StepToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepToml {
    name: String,
    #[serde(default)]
    stream: Vec<StreamToml>,
    rw: Option<String>,
    rwmixread: Option<u32>,
    bs: Option<String>,
    bssplit: Option<String>,
    threads: Option<ThreadsToml>,
    qd: Option<u32>,
    region: Option<String>,
    random_dist: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamToml {
    name: Option<String>,
    rw: Option<String>,
    rwmixread: Option<u32>,
    bs: Option<String>,
    bssplit: Option<String>,
    threads: Option<ThreadsToml>,
    qd: Option<u32>,
    region: Option<String>,
    random_dist: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ThreadsToml {
    Count(i64),
    Text(String),
}

impl Profile {
    /// Parses and checks a profile's TOML text; `origin` names it in messages.
    ///
    /// # Errors
    /// One sentence naming the origin, the step and stream, the key and the fix.
    pub fn parse(text: &str, origin: &str) -> Result<Profile, String> {
        let raw: ProfileToml = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            format!(
                "profile {origin} is not a valid profile (line {line}: {}); see the format in docs/methodology.md",
                e.message().trim()
            )
        })?;
        let at = |what: &str| format!("profile {origin} ({}){what}", raw.name);
        if raw.name.is_empty() || !raw.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!(
                "profile {origin}: name '{}' must be letters, digits, '-' and '_' (it names result files)",
                raw.name
            ));
        }
        if raw.step.is_empty() {
            return Err(format!("{}: has no [[step]]; add at least one", at("")));
        }
        let working_set_percent = match &raw.working_set {
            None => None,
            Some(w) => Some(parse_share(w).map_err(|m| format!("{}: working_set {m}", at("")))?),
        };
        let precondition = match raw.precondition {
            None => None,
            Some(s) => Some(stream(s, "precondition", &at(" [precondition]"))?),
        };
        let mut steps = Vec::new();
        for s in raw.step {
            let where_ = at(&format!(" step {}", s.name));
            if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                return Err(format!("{where_}: step names are letters, digits, '-' and '_' (they name result files)"));
            }
            if steps.iter().any(|x: &Step| x.name == s.name) {
                return Err(format!("{where_}: two steps have this name; give each step its own"));
            }
            let inline = StreamToml {
                name: None,
                rw: s.rw,
                rwmixread: s.rwmixread,
                bs: s.bs,
                bssplit: s.bssplit,
                threads: s.threads,
                qd: s.qd,
                region: s.region,
                random_dist: s.random_dist,
            };
            let has_inline = inline.rw.is_some()
                || inline.bs.is_some()
                || inline.bssplit.is_some()
                || inline.rwmixread.is_some()
                || inline.threads.is_some()
                || inline.qd.is_some()
                || inline.region.is_some()
                || inline.random_dist.is_some();
            let streams = match (has_inline, s.stream.is_empty()) {
                (true, false) => {
                    return Err(format!(
                        "{where_}: has both stream keys and [[step.stream]] tables; put the keys in the tables"
                    ));
                }
                (false, true) => {
                    return Err(format!("{where_}: has no workload; add rw (and bs) or [[step.stream]] tables"));
                }
                (true, true) => vec![stream(inline, "main", &where_)?],
                (false, false) => {
                    let mut v: Vec<Stream> = Vec::new();
                    for (i, t) in s.stream.into_iter().enumerate() {
                        let default = format!("stream{}", i + 1);
                        let st = stream(t, &default, &where_)?;
                        if v.iter().any(|x| x.name == st.name) {
                            return Err(format!("{where_}: two streams are named '{}'; name each its own", st.name));
                        }
                        v.push(st);
                    }
                    v
                }
            };
            steps.push(Step { name: s.name, streams });
        }
        Ok(Profile {
            title: raw.title.unwrap_or_else(|| raw.name.clone()),
            name: raw.name,
            description: raw.description,
            source: raw.source,
            working_set_percent,
            precondition,
            steps,
            origin: origin.to_string(),
            text: text.to_string(),
        })
    }

    /// Every built-in profile, parsed.
    pub fn built_in() -> Vec<Profile> {
        BUILT_IN
            .iter()
            .map(|(file, text)| {
                Profile::parse(text, "built-in")
                    .unwrap_or_else(|e| panic!("built-in profile {file} must parse (a unit test checks it): {e}"))
            })
            .collect()
    }

    /// Adapts every block size to a device of `lbs`-byte logical blocks.
    ///
    /// # Errors
    /// With [`SmallBlocks::Reject`], the first size that is not a multiple of `lbs`.
    pub fn fit_block_size(&mut self, lbs: u64, policy: SmallBlocks, device: &str) -> Result<Vec<String>, String> {
        let mut notes = Vec::new();
        let name = self.name.clone();
        let mut fix = |s: &mut Stream, step: &str| -> Result<(), String> {
            for (dir, split) in [("read", &mut s.bs_read), ("write", &mut s.bs_write)] {
                let Some(bad) = split.entries.iter().find(|e| u64::from(e.bytes) % lbs != 0) else { continue };
                match policy {
                    SmallBlocks::Reject => {
                        return Err(format!(
                            "profile {name} step {step} stream {}: {dir} block size {} is not a multiple of {device}'s {lbs}-byte logical block; pass --small-bs round to round it up, or use another profile",
                            s.name,
                            format_size(u64::from(bad.bytes))
                        ));
                    }
                    SmallBlocks::Round => {
                        let before = split.to_fio();
                        *split = round_up(split, lbs);
                        notes.push(format!(
                            "profile {name} step {step} stream {}: {dir} sizes {before} rounded up to {} for {lbs}-byte blocks",
                            s.name,
                            split.to_fio()
                        ));
                    }
                }
            }
            Ok(())
        };
        if let Some(p) = &mut self.precondition {
            fix(p, "precondition")?;
        }
        for step in &mut self.steps {
            for s in &mut step.streams {
                fix(s, &step.name)?;
            }
        }
        Ok(notes)
    }
}

/// Rounds every size up to a multiple of `lbs`, adding the weights of sizes that meet.
fn round_up(split: &BsSplit, lbs: u64) -> BsSplit {
    let mut merged: Vec<BsEntry> = Vec::new();
    for e in &split.entries {
        let bytes = (u64::from(e.bytes).div_ceil(lbs) * lbs) as u32;
        match merged.iter_mut().find(|m| m.bytes == bytes) {
            Some(m) => m.percent += e.percent,
            None => merged.push(BsEntry { bytes, percent: e.percent }),
        }
    }
    let text: Vec<String> = merged.iter().map(|e| format!("{}/{}", e.bytes, e.percent)).collect();
    BsSplit::parse(&text.join(":")).expect("merged weights of a valid mix still add up to 100")
}

/// `25%` or `25` → 25.0, in (0, 100].
fn parse_share(text: &str) -> Result<f64, String> {
    let t = text.trim().trim_end_matches('%');
    t.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 100.0)
        .ok_or_else(|| format!("'{text}' is not a share; write a percentage above 0 and up to 100, like 25%"))
}

fn stream(t: StreamToml, default_name: &str, at: &str) -> Result<Stream, String> {
    let name = t.name.unwrap_or_else(|| default_name.to_string());
    let at = if default_name == "main" || default_name == "precondition" {
        at.to_string()
    } else {
        format!("{at} stream {name}")
    };
    let rw_text = t.rw.ok_or_else(|| format!("{at}: rw is missing; add rw = \"randread\" (or another pattern)"))?;
    let rw = RwMode::parse(&rw_text).map_err(|m| format!("{at}: rw {m}"))?;
    if t.rwmixread.is_some() && !rw.is_mixed() {
        return Err(format!("{at}: rwmixread applies only to rw = \"rw\" or \"randrw\"; drop it or change rw"));
    }
    if let Some(m) = t.rwmixread.filter(|m| *m > 100) {
        return Err(format!("{at}: rwmixread {m} is not a percentage; use 0 to 100"));
    }
    let (bs_read, bs_write) = match (&t.bs, &t.bssplit) {
        (Some(_), Some(_)) => return Err(format!("{at}: has both bs and bssplit; keep one")),
        (None, Some(s)) => BsSplit::parse_pair(s).map_err(|m| format!("{at}: {m}"))?,
        (Some(b), None) => {
            let one = |x: &str| -> Result<BsSplit, String> {
                let v = units::parse_size(x).map_err(|m| format!("{at}: bs {m}"))?;
                u32::try_from(v)
                    .ok()
                    .filter(|v| *v > 0)
                    .map(BsSplit::single)
                    .ok_or_else(|| format!("{at}: bs '{x}' is not a block size; use 1 byte to 4g, such as 4k"))
            };
            match b.split_once(',') {
                Some((r, w)) => (one(r)?, one(w)?),
                None => (one(b)?, one(b)?),
            }
        }
        (None, None) => (BsSplit::single(crate::config::DEFAULT_BS), BsSplit::single(crate::config::DEFAULT_BS)),
    };
    let threads = match t.threads {
        None => Threads::Percent(100.0),
        Some(ThreadsToml::Count(n)) if (1..=4096).contains(&n) => Threads::Count(n as usize),
        Some(ThreadsToml::Count(n)) => {
            return Err(format!("{at}: threads {n} is not a thread count; use 1 to 4096 or a share like \"50%\""));
        }
        Some(ThreadsToml::Text(s)) if s.trim().ends_with('%') => {
            Threads::Percent(parse_share(&s).map_err(|m| format!("{at}: threads {m}"))?)
        }
        Some(ThreadsToml::Text(s)) => {
            return Err(format!("{at}: threads '{s}' is not a count or a share; write 4 or \"50%\""));
        }
    };
    if let Some(q) = t.qd.filter(|q| !(1..=65536).contains(q)) {
        return Err(format!("{at}: qd {q} is not a queue depth; use 1 to 65536"));
    }
    let region = match &t.region {
        None => (0.0, 1.0),
        Some(r) => {
            let bad = || format!("{at}: region '{r}' is not a part of the working set; write it like \"0%-90%\"");
            let (a, b) = r.split_once('-').ok_or_else(bad)?;
            let pa = a.trim().strip_suffix('%').and_then(|v| v.trim().parse::<f64>().ok()).ok_or_else(bad)?;
            let pb = b.trim().strip_suffix('%').and_then(|v| v.trim().parse::<f64>().ok()).ok_or_else(bad)?;
            if !((0.0..100.0).contains(&pa) && pa < pb && pb <= 100.0) {
                return Err(bad());
            }
            (pa / 100.0, pb / 100.0)
        }
    };
    if let Some(d) = &t.random_dist {
        RandomDist::parse(d).map_err(|m| format!("{at}: random_dist {m}"))?;
    }
    Ok(Stream {
        name,
        rw,
        rwmixread: t.rwmixread,
        bs_read,
        bs_write,
        threads,
        qd: t.qd,
        region,
        random_dist: t.random_dist,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_parse_with_distinct_names() {
        let all = Profile::built_in();
        assert_eq!(all.len(), BUILT_IN.len());
        for (p, (file, _)) in all.iter().zip(BUILT_IN) {
            assert_eq!(format!("{}.toml", p.name), file, "a profile's file is named after it");
        }
    }

    fn find(name: &str) -> Profile {
        Profile::built_in().into_iter().find(|p| p.name == name).unwrap()
    }

    #[test]
    fn documented_mixes() {
        let fs = find("file-server");
        let s = &fs.steps[0].streams[0];
        assert_eq!((s.rw, s.read_percent()), (RwMode::RandRw, 80));
        assert_eq!(s.bs_read.to_fio(), "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10");
        let web = find("web-server");
        assert_eq!(web.steps[0].streams[0].read_percent(), 100);
        let pre = web.precondition.as_ref().unwrap();
        assert_eq!((pre.rw, pre.read_percent()), (RwMode::RandWrite, 0));
        assert_eq!(pre.bs_write, web.steps[0].streams[0].bs_read, "preconditioned with the same mix, written");
        let fc = find("four-corners");
        let names: Vec<&str> = fc.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["4k-randread", "4k-randwrite", "64k-read", "64k-write", "64k-randread", "64k-randwrite"]);
        let sql = find("database-sql");
        let mixes: Vec<Vec<u32>> =
            sql.steps.iter().map(|s| s.streams.iter().map(Stream::read_percent).collect()).collect();
        assert_eq!(mixes, vec![vec![100], vec![90, 0], vec![80, 0]]);
        assert_eq!(sql.steps[1].streams[1].threads, Threads::Count(1));
        assert_eq!(find("working-set-25").working_set_percent, Some(25.0));
    }

    #[test]
    fn bad_profiles_get_one_sentence() {
        let e = |t: &str| Profile::parse(t, "x.toml").unwrap_err();
        assert!(e("name = \"a\"").contains("not a valid profile"), "{}", e("name = \"a\""));
        let base = "name = \"p\"\ndescription = \"d\"\n";
        assert!(e(base).contains("has no [[step]]"));
        let m = e(&format!("{base}[[step]]\nname = \"s\"\nrw = \"randrd\"\n"));
        assert!(m.starts_with("profile x.toml (p) step s: rw 'randrd' is not an access pattern"), "{m}");
        let m = e(&format!("{base}[[step]]\nname = \"s\"\nrw = \"randread\"\nbsplit = \"4k\"\n"));
        assert!(m.contains("unknown field `bsplit`"), "{m}");
        let m = e(&format!("{base}[[step]]\nname = \"s\"\nrw = \"randrw\"\nbssplit = \"4k/50:8k/40\"\n"));
        assert!(m.contains("add up to 90%"), "{m}");
        let m = e(&format!("{base}[[step]]\nname = \"s\"\nrw = \"randread\"\nregion = \"50%-10%\"\n"));
        assert!(m.contains("region '50%-10%'"), "{m}");
        let m = e(&format!("{base}[[step]]\nname = \"s\"\nrw = \"read\"\nrwmixread = 50\n"));
        assert!(m.contains("rwmixread applies only"), "{m}");
    }

    #[test]
    fn small_blocks_round_up_or_are_refused() {
        let mut fs = find("file-server");
        let e = fs.clone().fit_block_size(4096, SmallBlocks::Reject, "/dev/x").unwrap_err();
        assert_eq!(
            e,
            "profile file-server step file-server stream main: read block size 512 is not a multiple of /dev/x's 4096-byte logical block; pass --small-bs round to round it up, or use another profile"
        );
        let notes = fs.fit_block_size(4096, SmallBlocks::Round, "/dev/x").unwrap();
        assert_eq!(notes.len(), 2);
        assert_eq!(fs.steps[0].streams[0].bs_read.to_fio(), "4k/80:8k/2:16k/4:32k/4:64k/10");
        let mut fc = find("four-corners");
        assert!(fc.fit_block_size(4096, SmallBlocks::Reject, "/dev/x").unwrap().is_empty());
    }

    #[test]
    fn thread_shares() {
        assert_eq!(Threads::Percent(80.0).resolve(16), 13);
        assert_eq!(Threads::Percent(20.0).resolve(1), 1);
        assert_eq!(Threads::Count(1).resolve(16), 1);
    }
}
