//! Drive telemetry in the reports: the `telemetry` section of the run document and the text report's
//! `telemetry:` lines.
//!
//! Reads `telemetry::Telemetry` as the run left it; what a health page means (and what counts as an
//! alert) is `telemetry::health`'s.

use super::doc::{ErrorLogEntryDoc, HealthSampleDoc, TelemetryDoc, TelemetryTargetDoc};
use crate::telemetry::errlog::ErrorLogEntry;
use crate::telemetry::health::{self, HealthLog};
use crate::telemetry::{Sample, TargetTelemetry, Telemetry};
use std::time::{Duration, SystemTime};

/// The document's `telemetry`: sample times on the intervals' timeline (seconds from the end of the
/// ramp; the gate opened at `started_at`).
pub fn document(t: &Telemetry, started_at: SystemTime, ramp: Duration) -> TelemetryDoc {
    TelemetryDoc {
        interval_s: t.interval.as_secs_f64(),
        targets: t
            .targets
            .iter()
            .map(|tt| TelemetryTargetDoc {
                target: tt.target.clone(),
                source: serde_json::to_value(tt.source)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .expect("a source serialises to its name"),
                unavailable: tt.unavailable.clone(),
                samples: tt.samples.iter().map(|s| sample(s, started_at, ramp)).collect(),
                warnings: tt.alerts(),
                read_failure: tt.read_failures.as_ref().map(|(e, _)| e.clone()),
                read_failures: tt.read_failures.as_ref().map_or(0, |(_, n)| *n),
                error_log: tt.error_log.as_ref().map(|es| es.iter().map(entry).collect()),
                error_log_unavailable: tt.error_log_unavailable.clone(),
            })
            .collect(),
    }
}

fn sample(s: &Sample, started_at: SystemTime, ramp: Duration) -> HealthSampleDoc {
    let since_gate = match s.at.duration_since(started_at) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    };
    let h: &HealthLog = &s.health;
    HealthSampleDoc {
        // Rounded to the millisecond: the read itself takes about that long.
        t_s: ((since_gate - ramp.as_secs_f64()) * 1e3).round() / 1e3,
        temperature_c: h.temperature_c(),
        critical_warning: h.critical_warning,
        composite_temperature_k: h.composite_temperature_k,
        available_spare_pct: h.available_spare_pct,
        available_spare_threshold_pct: h.available_spare_threshold_pct,
        percentage_used: h.percentage_used,
        data_units_read: h.data_units_read,
        data_units_written: h.data_units_written,
        host_read_commands: h.host_read_commands,
        host_write_commands: h.host_write_commands,
        controller_busy_time_min: h.controller_busy_time_min,
        power_cycles: h.power_cycles,
        power_on_hours: h.power_on_hours,
        unsafe_shutdowns: h.unsafe_shutdowns,
        media_errors: h.media_errors,
        error_log_entries: h.error_log_entries,
        warning_temperature_time_min: h.warning_temperature_time_min,
        critical_temperature_time_min: h.critical_temperature_time_min,
        temperature_sensors_k: h.temperature_sensors_k,
        thermal_transitions: h.thermal_transitions,
        thermal_time_s: h.thermal_time_s,
    }
}

fn entry(e: &ErrorLogEntry) -> ErrorLogEntryDoc {
    ErrorLogEntryDoc {
        error_count: e.error_count,
        sqid: e.sqid,
        cid: e.cid,
        status_code_type: e.status_code_type,
        status_code: e.status_code,
        lba: e.lba,
        nsid: e.nsid,
    }
}

/// The text report's lines (each printed after `telemetry: `): per target, one `WARNING` line when
/// the drive alerted, else a one-line summary; a target without the log says so once; the error
/// log's entries follow on one line.
pub fn text_lines(t: &Telemetry) -> Vec<String> {
    let mut out = Vec::new();
    for tt in &t.targets {
        if let Some(why) = &tt.unavailable {
            out.push(format!("{}: not available: {why}", tt.target));
            continue;
        }
        let alerts = tt.alerts();
        if alerts.is_empty() {
            out.push(summary(tt));
        } else {
            out.push(format!("WARNING {}: {} during the run", tt.target, alerts.join("; ")));
        }
        if let Some((e, n)) = &tt.read_failures {
            out.push(format!("{}: {n} health log reads failed during the run, the first: {e}", tt.target));
        }
        match (&tt.error_log, &tt.error_log_unavailable) {
            (Some(es), _) if es.is_empty() => out.push(format!("{}: the error log is empty", tt.target)),
            (Some(es), _) => out.push(format!(
                "{}: error log, newest first: {}",
                tt.target,
                es.iter().map(error_entry).collect::<Vec<_>>().join("; ")
            )),
            (None, Some(why)) => out.push(format!("{}: the error log cannot be read: {why}", tt.target)),
            (None, None) => {}
        }
    }
    out
}

fn summary(tt: &TargetTelemetry) -> String {
    let temps: Vec<i32> = tt.samples.iter().filter_map(|s| s.health.temperature_c()).collect();
    let temp = match (temps.first(), temps.iter().max()) {
        (Some(first), Some(max)) => format!("composite temperature {first} °C before, {max} °C at most"),
        _ => "no temperature reported".into(),
    };
    let already = tt.samples.first().map_or(0, |s| s.health.critical_warning);
    let set = match health::critical_warnings(already).join(", ") {
        w if w.is_empty() => String::new(),
        w => format!("; critical warning already set before the run: {w}"),
    };
    format!(
        "{} via {}: {} samples, {temp}; no throttling, no new critical warning or media errors{set}",
        tt.target,
        match tt.source {
            crate::telemetry::Source::Kernel => "kernel passthrough",
            crate::telemetry::Source::Spdk => "SPDK",
        },
        tt.samples.len()
    )
}

fn error_entry(e: &ErrorLogEntry) -> String {
    format!(
        "#{} sq {} cid {} status type {:#x} code {:#04x} nsid {} lba {}",
        e.error_count, e.sqid, e.cid, e.status_code_type, e.status_code, e.nsid, e.lba
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Source;

    fn sample(at: SystemTime, temp_k: u16, warning: u8) -> Sample {
        Sample {
            at,
            health: HealthLog { composite_temperature_k: temp_k, critical_warning: warning, ..HealthLog::default() },
        }
    }

    fn target(samples: Vec<Sample>) -> TargetTelemetry {
        TargetTelemetry {
            target: "/dev/nvme0n1".into(),
            source: Source::Kernel,
            unavailable: None,
            samples,
            read_failures: None,
            error_log: None,
            error_log_unavailable: None,
        }
    }

    #[test]
    fn lines_say_what_happened_once_per_target() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let calm = target(vec![sample(t0, 310, 0), sample(t0, 312, 0)]);
        let mut hot = target(vec![sample(t0, 310, 0), sample(t0, 330, 2), sample(t0, 320, 0)]);
        hot.error_log = Some(vec![ErrorLogEntry {
            error_count: 9,
            sqid: 1,
            cid: 4,
            status_code_type: 2,
            status_code: 0x81,
            lba: 8,
            nsid: 1,
        }]);
        let mut file = target(vec![]);
        file.target = "/tmp/f".into();
        file.unavailable = Some("a regular file has no NVMe health log".into());
        let t = Telemetry { interval: Duration::from_secs(1), targets: vec![calm, hot, file] };
        assert_eq!(
            text_lines(&t),
            [
                "/dev/nvme0n1 via kernel passthrough: 2 samples, composite temperature 37 °C before, 39 °C at most; no throttling, no new critical warning or media errors",
                "WARNING /dev/nvme0n1: critical warning: temperature beyond a threshold during the run",
                "/dev/nvme0n1: error log, newest first: #9 sq 1 cid 4 status type 0x2 code 0x81 nsid 1 lba 8",
                "/tmp/f: not available: a regular file has no NVMe health log",
            ]
        );
    }

    #[test]
    fn sample_times_sit_on_the_intervals_timeline() {
        let gate = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let t = Telemetry {
            interval: Duration::from_millis(500),
            targets: vec![target(vec![
                sample(gate - Duration::from_millis(20), 300, 0),
                sample(gate + Duration::from_millis(2500), 300, 0),
            ])],
        };
        let d = document(&t, gate, Duration::from_secs(2));
        let times: Vec<f64> = d.targets[0].samples.iter().map(|s| s.t_s).collect();
        assert_eq!(times, [-2.02, 0.5]);
        assert_eq!((d.interval_s, d.targets[0].source.as_str()), (0.5, "kernel"));
        assert_eq!(d.targets[0].samples[0].temperature_c, Some(27));
    }
}
