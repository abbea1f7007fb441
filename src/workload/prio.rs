//! Which priority each I/O is sent with: fio's job priority (`prio`, `prioclass`) and the
//! `cmdprio_*` options of its libaio and io_uring engines, chosen per I/O as fio's
//! `engines/cmdprio.c` chooses (fio 3.33).
//!
//! fio draws a whole number from 0 to 99 for each read or write that has a cmdprio share: below
//! the share (`cmdprio_percentage`, or the I/O's size's total in `cmdprio_bssplit`), the I/O takes
//! the cmdprio priority (the first `cmdprio_bssplit` entry of its size whose running total the draw
//! is below); otherwise the job's own. Every table is built before the run, so the draw allocates
//! nothing. It does not know engines: they send [`IoPrio::value`], and statistics count by it.

use crate::io::{Direction, IoPrio};
use crate::units;
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// fio's `BSSPLIT_MAX`: the most entries one direction's `cmdprio_bssplit` may have.
pub const MAX_ENTRIES: usize = 64;
/// fio's `IOPRIO_CLASS_RT`: cmdprio's class when `cmdprio_class` is not given.
const CLASS_RT: u8 = 1;

/// What cmdprio does for one direction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CmdPrio {
    /// Every I/O takes the job's priority.
    #[default]
    None,
    /// `percent`% of I/Os take `value` (fio's `cmdprio_percentage`).
    Percent { percent: u32, value: u16 },
    /// Per block size, entries of (percentage, value), in order (fio's `cmdprio_bssplit`).
    BySize(Vec<SizePrios>),
}

/// One block size's `cmdprio_bssplit` entries (those with a share; their shares sum to 100 or
/// less).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SizePrios {
    pub bs: u32,
    pub entries: Vec<(u32, u16)>,
}

/// The priorities of a job: its own, and cmdprio's per direction (reads, writes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PrioSpec {
    /// fio's `td->ioprio`: the value of `prioclass` and `prio`, 0 when neither is given.
    pub job: u16,
    /// Whether `prio` or `prioclass` was given, so the worker's thread takes it (fio's
    /// `ioprio_set` on the job's thread).
    pub set_thread: bool,
    pub cmd: [CmdPrio; 2],
}

impl PrioSpec {
    /// Whether any I/O is sent with a priority of its own.
    pub fn is_default(&self) -> bool {
        *self == PrioSpec::default()
    }

    /// Direction `dir`'s priorities in fio's order of its per-priority statistics
    /// (`clat_prio`): the job's first, then each cmdprio value as first met, once; empty when
    /// cmdprio does nothing in that direction (fio keeps no per-priority statistics for it).
    pub fn stat_values(&self, dir: Direction) -> Vec<u16> {
        let Some(cmd) = self.cmd_of(dir) else { return Vec::new() };
        let mut values = vec![self.job];
        let mut add = |v: u16| {
            if !values.contains(&v) {
                values.push(v);
            }
        };
        match cmd {
            CmdPrio::None => return Vec::new(),
            CmdPrio::Percent { value, .. } => add(*value),
            CmdPrio::BySize(sizes) => sizes.iter().flat_map(|s| &s.entries).for_each(|&(_, v)| add(v)),
        }
        values
    }

    fn cmd_of(&self, dir: Direction) -> Option<&CmdPrio> {
        match dir {
            Direction::Read => Some(&self.cmd[0]),
            Direction::Write => Some(&self.cmd[1]),
            _ => None,
        }
    }
}

/// fio's cmdprio options as given (per direction where fio takes `read,write`).
#[derive(Clone, Debug, Default)]
pub struct CmdPrioOptions<'a> {
    pub percentage: Option<&'a str>,
    pub class: Option<&'a str>,
    pub level: Option<&'a str>,
    pub bssplit: Option<&'a str>,
}

/// A refusal: the option at fault (fio's name) and the sentence.
pub type PrioError = (&'static str, String);

/// Builds a job's [`PrioSpec`] from fio's options: `prioclass` (`class`), `prio` (`level`), the
/// cmdprio options, and which directions the job issues (`reads`, `writes`), as fio's
/// `fio_cmdprio_init` does.
///
/// # Errors
/// The option at fault and one sentence, for a value fio refuses.
pub fn resolve(
    class: Option<u8>,
    level: Option<u8>,
    cmd: &CmdPrioOptions<'_>,
    reads: bool,
    writes: bool,
) -> Result<PrioSpec, PrioError> {
    let set_thread = class.is_some() || level.is_some();
    let job = if set_thread { IoPrio::value_of(class.unwrap_or(0), level.unwrap_or(0)) } else { 0 };
    let percent = per_dir("cmdprio_percentage", cmd.percentage, 0, 100)?;
    let classes = per_dir("cmdprio_class", cmd.class, 1, 3)?;
    let levels = per_dir("cmdprio", cmd.level, 0, 7)?;
    let bssplit = cmd.bssplit.map(str::trim).filter(|s| !s.is_empty());
    if let Some(split) = bssplit {
        if percent.iter().any(|&p| p > 0) {
            return Err((
                "cmdprio_bssplit",
                format!("cmdprio_bssplit={split} and cmdprio_percentage are mutually exclusive in fio; give one"),
            ));
        }
    }
    let mut spec = PrioSpec { job, set_thread, cmd: [CmdPrio::None, CmdPrio::None] };
    let texts = bssplit.map(split_dirs);
    for (d, on) in [reads, writes].into_iter().enumerate() {
        // fio: no cmdprio_class given is the real-time class.
        let class = if classes[d] == 0 { CLASS_RT } else { classes[d] as u8 };
        let implicit = IoPrio::value_of(class, levels[d] as u8);
        // Parsed even for a direction the job does not issue: fio refuses a bad one either way.
        let sizes = match &texts {
            Some(t) => Some(parse_bssplit(t[d], implicit)?),
            None => None,
        };
        if !on {
            continue;
        }
        spec.cmd[d] = match sizes {
            Some(s) if !s.is_empty() => CmdPrio::BySize(s),
            Some(_) => CmdPrio::None,
            None if percent[d] > 0 => CmdPrio::Percent { percent: percent[d], value: implicit },
            None => CmdPrio::None,
        };
    }
    Ok(spec)
}

/// fio's `int[,int]` options: one value for both directions, or read's and write's.
fn per_dir(option: &'static str, text: Option<&str>, min: u32, max: u32) -> Result<[u32; 2], PrioError> {
    let Some(text) = text else { return Ok([0, 0]) };
    let parse = |t: &str| {
        t.trim().parse::<u32>().ok().filter(|v| (min..=max).contains(v)).ok_or_else(|| {
            (option, format!("{option}={text}: '{}' is not a whole number from {min} to {max}", t.trim()))
        })
    };
    match text.split_once(',') {
        None => parse(text).map(|v| [v, v]),
        Some((r, w)) => Ok([parse(r)?, parse(w.split(',').next().unwrap_or(w))?]),
    }
}

/// fio's `str_split_parse`: `read,write[,trim]`, one part for every direction.
fn split_dirs(text: &str) -> [&str; 2] {
    let mut parts = text.split(',');
    let read = parts.next().unwrap_or("");
    [read, parts.next().unwrap_or(read)]
}

/// One direction's `cmdprio_bssplit`: `bs/percentage[/class/level]` entries split by `:`,
/// as fio 3.33's `parse_cmdprio_bssplit_entry` reads them: a percentage over 100 counts as 100, a
/// class over 3 as 3, a level over 7 as 7; fields after the level (the priority hint of later fios)
/// are ignored, as fio 3.33 ignores them; entries of 0% are dropped; an entry without its own class
/// and level takes `implicit` (cmdprio_class and cmdprio). Sorted by size, each size's shares
/// summing to at most 100.
fn parse_bssplit(text: &str, implicit: u16) -> Result<Vec<SizePrios>, PrioError> {
    let bad = |m: String| ("cmdprio_bssplit", m);
    let mut entries: Vec<(u32, u32, u16)> = Vec::new();
    let mut count = 0;
    for entry in text.split(':') {
        // fio stops at an empty entry.
        if entry.is_empty() {
            break;
        }
        count += 1;
        let mut fields = entry.split('/');
        let bs_text = fields.next().unwrap_or("");
        let bs = units::parse_size(bs_text)
            .ok()
            .and_then(|b| u32::try_from(b).ok())
            .ok_or_else(|| bad(format!("cmdprio_bssplit entry '{entry}': '{bs_text}' is not a block size")))?;
        // sscanf's %u fields, read until the first that is not a number.
        let numbers: Vec<u32> = fields.map_while(leading_number).take(3).collect();
        let (perc, value) = match numbers[..] {
            [] => (0, implicit),
            [p] => (p.min(100), implicit),
            [p, class, level] => (p.min(100), IoPrio::value_of(class.min(3) as u8, level.min(7) as u8)),
            _ => {
                return Err(bad(format!(
                    "cmdprio_bssplit entry '{entry}' has a class but no level; write bs/percentage or bs/percentage/class/level"
                )));
            }
        };
        if perc > 0 {
            entries.push((bs, perc, value));
        }
    }
    if count > MAX_ENTRIES {
        return Err(bad(format!(
            "cmdprio_bssplit has {count} entries in one direction, and fio takes at most {MAX_ENTRIES}"
        )));
    }
    // fio sorts by size (qsort) and keeps each size's entries in the order given.
    entries.sort_by_key(|e| e.0);
    let mut sizes: Vec<SizePrios> = Vec::new();
    for (bs, perc, value) in entries {
        match sizes.last_mut() {
            Some(s) if s.bs == bs => s.entries.push((perc, value)),
            _ => sizes.push(SizePrios { bs, entries: vec![(perc, value)] }),
        }
        let s = sizes.last().expect("an entry was just pushed");
        let total: u32 = s.entries.iter().map(|e| e.0).sum();
        if total > 100 {
            return Err(bad(format!(
                "cmdprio_bssplit's percentages for block size {bs} add up to {total}, over 100; lower them"
            )));
        }
    }
    Ok(sizes)
}

/// The number at the start of `field`, as sscanf's `%u` reads it (`None` when it has none).
fn leading_number(field: &str) -> Option<u32> {
    let digits = field.find(|c: char| !c.is_ascii_digit()).unwrap_or(field.len());
    field[..digits].parse().ok()
}

/// One direction's choice, with statistics indices resolved.
#[derive(Clone, Debug)]
enum DirPick {
    None,
    Percent {
        percent: u32,
        prio: IoPrio,
    },
    /// Per size: its total share and its entries' running totals.
    BySize(Vec<SizePick>),
}

/// One size's block size, total share, and entries as (running total, priority).
type SizePick = (u32, u32, Vec<(u32, IoPrio)>);

/// Draws each I/O's priority for one worker.
#[derive(Clone, Debug)]
pub struct PrioPicker {
    rng: Xoshiro256PlusPlus,
    job: IoPrio,
    dirs: [DirPick; 2],
}

impl PrioPicker {
    /// A picker for `spec`, its draws seeded by `seed`; `None` when every I/O is sent without a
    /// priority of its own.
    pub fn new(spec: &PrioSpec, seed: u64) -> Option<PrioPicker> {
        if spec.job == 0 && spec.cmd.iter().all(|c| *c == CmdPrio::None) {
            return None;
        }
        let dir_pick = |cmd: &CmdPrio| {
            let prio = |value: u16| IoPrio { value };
            match cmd {
                CmdPrio::None => DirPick::None,
                CmdPrio::Percent { percent, value } => DirPick::Percent { percent: *percent, prio: prio(*value) },
                CmdPrio::BySize(sizes) => DirPick::BySize(
                    sizes
                        .iter()
                        .map(|s| {
                            let mut total = 0;
                            let entries = s
                                .entries
                                .iter()
                                .map(|&(p, v)| {
                                    total += p;
                                    (total, prio(v))
                                })
                                .collect();
                            (s.bs, total, entries)
                        })
                        .collect(),
                ),
            }
        };
        Some(PrioPicker {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x7072_696f_7269_7479),
            job: IoPrio { value: spec.job },
            dirs: [dir_pick(&spec.cmd[0]), dir_pick(&spec.cmd[1])],
        })
    }

    /// The priority of an I/O in `dir` of `len` bytes (fio's `fio_cmdprio_set_ioprio`).
    #[inline]
    pub fn pick(&mut self, dir: Direction, len: u32) -> IoPrio {
        let pick = match dir {
            Direction::Read => &self.dirs[0],
            Direction::Write => &self.dirs[1],
            _ => return IoPrio::NONE,
        };
        let (share, entries) = match pick {
            DirPick::None => return self.job,
            DirPick::Percent { percent, prio } => (*percent, Err(*prio)),
            DirPick::BySize(sizes) => match sizes.iter().find(|s| s.0 == len) {
                Some((_, total, entries)) => (*total, Ok(entries)),
                None => return self.job,
            },
        };
        // fio's rand_between(0, 99).
        let draw = (self.rng.next_u64() % 100) as u32;
        if draw >= share {
            return self.job;
        }
        match entries {
            Err(prio) => prio,
            Ok(entries) => entries.iter().find(|e| draw < e.0).map_or(self.job, |e| e.1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts<'a>(percentage: Option<&'a str>, bssplit: Option<&'a str>) -> CmdPrioOptions<'a> {
        CmdPrioOptions { percentage, bssplit, ..Default::default() }
    }

    const RT0: u16 = 1 << 13;

    /// cmdprio-percentage.fio: prioclass=3 for the job, 20% of reads in class 1 (real time).
    #[test]
    fn a_percentage_sends_that_share_with_cmdprios_class() {
        let cmd = CmdPrioOptions { percentage: Some("20"), class: Some("1"), ..Default::default() };
        let spec = resolve(Some(3), None, &cmd, true, false).unwrap();
        assert_eq!(spec.job, 3 << 13);
        assert_eq!(spec.cmd[0], CmdPrio::Percent { percent: 20, value: RT0 });
        assert_eq!(spec.cmd[1], CmdPrio::None, "the job does not write");
        assert_eq!(spec.stat_values(Direction::Read), [3 << 13, RT0]);
        assert!(spec.stat_values(Direction::Write).is_empty());
        let mut p = PrioPicker::new(&spec, 1).unwrap();
        let n = 100_000;
        let high = (0..n).filter(|_| p.pick(Direction::Read, 4096) == IoPrio { value: RT0 }).count();
        assert!((high as f64 / f64::from(n) - 0.2).abs() < 0.01, "{high}");
    }

    /// cmdprio-bssplit.fio's advanced form: per size, entries with their own class and level
    /// (a fifth field, the hint of later fios, ignored as fio 3.33 ignores it), and sizes without
    /// a share keep the job's priority.
    #[test]
    fn bssplit_entries_pick_by_size_and_running_share() {
        let cmd = opts(None, Some("64k/25/1/1:64k/75/3/2/9:1024k/0,1024k/0"));
        let spec = resolve(Some(2), Some(7), &cmd, true, true).unwrap();
        let be7 = (2 << 13) | 7;
        assert_eq!(spec.job, be7);
        let want = vec![SizePrios { bs: 65536, entries: vec![(25, RT0 | 1), (75, (3 << 13) | 2)] }];
        assert_eq!(spec.cmd[0], CmdPrio::BySize(want));
        assert_eq!(spec.cmd[1], CmdPrio::None, "1024k/0 leaves writes alone");
        assert_eq!(spec.stat_values(Direction::Read), [be7, RT0 | 1, (3 << 13) | 2]);
        let mut p = PrioPicker::new(&spec, 3).unwrap();
        let values = spec.stat_values(Direction::Read);
        let mut counts = [0u32; 3];
        for _ in 0..40_000 {
            let v = p.pick(Direction::Read, 65536).value;
            counts[values.iter().position(|&x| x == v).expect("a value with statistics")] += 1;
        }
        assert_eq!(counts[0], 0, "the 64k shares add up to 100");
        assert!((f64::from(counts[1]) / 40_000.0 - 0.25).abs() < 0.01, "{counts:?}");
        assert_eq!(p.pick(Direction::Read, 1 << 20), IoPrio { value: be7 });
        assert_eq!(p.pick(Direction::Write, 1 << 20), IoPrio { value: be7 });
    }

    /// The simple form takes cmdprio_class and cmdprio; a value met twice has one statistic; no
    /// cmdprio_class is real time, as in fio.
    #[test]
    fn the_simple_form_takes_cmdprio_class_and_level() {
        let cmd = CmdPrioOptions { bssplit: Some("4k/10:8k/20"), level: Some("3"), ..Default::default() };
        let spec = resolve(None, None, &cmd, true, true).unwrap();
        assert_eq!(spec.job, 0);
        assert_eq!(spec.stat_values(Direction::Write), [0, RT0 | 3]);
        let mut p = PrioPicker::new(&spec, 9).unwrap();
        let chosen = (0..10_000).filter(|_| p.pick(Direction::Write, 8192).value == RT0 | 3).count();
        assert!((chosen as f64 / 10_000.0 - 0.2).abs() < 0.02, "{chosen}");
    }

    /// Without any of the options nothing is picked, and a job priority alone sends it on every
    /// read and write, with no per-priority statistics (fio keeps none without cmdprio).
    #[test]
    fn a_job_priority_alone_is_every_ios() {
        assert!(PrioPicker::new(&resolve(None, None, &opts(None, None), true, true).unwrap(), 0).is_none());
        let spec = resolve(None, Some(4), &opts(None, None), true, true).unwrap();
        assert_eq!(spec.job, (2 << 13) | 4, "no class is best effort, as fio's ioprio_value");
        assert!(spec.stat_values(Direction::Read).is_empty());
        let mut p = PrioPicker::new(&spec, 0).unwrap();
        assert_eq!(p.pick(Direction::Read, 4096), IoPrio { value: (2 << 13) | 4 });
        assert_eq!(p.pick(Direction::Trim, 4096), IoPrio::NONE);
    }

    /// fio's refusals, each naming the option.
    #[test]
    fn bad_values_are_refused_as_fio_refuses_them() {
        let err = |c: CmdPrioOptions<'_>| resolve(None, None, &c, true, true).unwrap_err();
        assert_eq!(err(opts(Some("101"), None)).0, "cmdprio_percentage");
        assert_eq!(
            err(CmdPrioOptions { class: Some("0"), ..Default::default() }).1,
            "cmdprio_class=0: '0' is not a whole number from 1 to 3"
        );
        assert_eq!(err(CmdPrioOptions { level: Some("8"), ..Default::default() }).0, "cmdprio");
        assert!(err(opts(Some("10"), Some("4k/10"))).1.contains("mutually exclusive"));
        assert!(err(opts(None, Some("4k/60:4k/50"))).1.contains("add up to 110, over 100"));
        assert!(err(opts(None, Some("4k/10/1"))).1.contains("has a class but no level"));
        assert!(err(opts(None, Some("four/10"))).1.contains("'four' is not a block size"));
        let many = vec!["4k/1"; 65].join(":");
        assert!(err(opts(None, Some(&many))).1.contains("at most 64"));
        // fio clamps rather than refuses these.
        let spec = resolve(None, None, &opts(None, Some("4k/150/9/9")), true, false).unwrap();
        assert_eq!(spec.cmd[0], CmdPrio::BySize(vec![SizePrios { bs: 4096, entries: vec![(100, (3 << 13) | 7)] }]));
    }
}
