//! The live line: IOPS, bandwidth and p99 of the last interval, redrawn in place on a terminal.
//!
//! Silent unless stdout is a terminal (so pipes and files get only the report), and drawn on stderr
//! so that it never mixes into the report itself.

use super::{format_count, format_latency};
use crate::coordinator::{DirPoint, IntervalPoint};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct LiveLine {
    bar: Option<ProgressBar>,
}

impl LiveLine {
    /// A live line if stdout and stderr are terminals and `quiet` is off; a silent one otherwise.
    pub fn new(quiet: bool) -> LiveLine {
        let on = !quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        let bar = on.then(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(ProgressStyle::with_template("{elapsed:>4} {msg}").expect("the template is a constant"));
            b.set_message("starting");
            b
        });
        LiveLine { bar }
    }

    pub fn update(&self, p: &IntervalPoint) {
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "{}{}{}",
                if p.ramp { "ramp " } else { "" },
                dir("read", &p.read),
                dir("write", &p.write)
            ));
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn dir(name: &str, d: &DirPoint) -> String {
    if d.ios == 0 {
        return String::new();
    }
    format!(
        "{name} {} IOPS {:.1} MiB/s p99 {}  ",
        format_count(d.iops),
        d.bw_bytes / (1024.0 * 1024.0),
        format_latency(d.p99_ns as f64)
    )
}
