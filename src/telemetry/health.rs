//! The SMART / Health Information log page (log identifier 02h) as a typed struct, and what changed
//! between two readings of it.
//!
//! Offsets follow the NVMe base specification (figure "SMART / Health Information Log Page"). This
//! module parses bytes and compares readings; it does not read devices (that is the caller's, through
//! the kernel's admin passthrough or SPDK's admin queue) or print anything.

use serde::Serialize;

/// Log identifier of the SMART / Health Information page.
pub const LID_HEALTH: u8 = 0x02;
/// The page's size in bytes.
pub const HEALTH_LOG_BYTES: usize = 512;

/// The critical warning bits (byte 0), lowest first, in the specification's words.
const CRITICAL_WARNING_BITS: [&str; 6] = [
    "available spare below its threshold",
    "temperature beyond a threshold",
    "reliability degraded by media or internal errors",
    "media placed in read-only mode",
    "volatile memory backup failed",
    "persistent memory region read-only or unreliable",
];

/// One reading of the health log. 128-bit counters saturate at `u64::MAX` (a drive that has written
/// 2^64 × 512 000 bytes does not exist).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HealthLog {
    /// Byte 0: one bit per condition (see [`critical_warnings`]).
    pub critical_warning: u8,
    /// Bytes 1-2: the composite temperature in kelvins (0: not reported).
    pub composite_temperature_k: u16,
    /// Byte 3: remaining spare capacity, percent.
    pub available_spare_pct: u8,
    /// Byte 4: the spare level below which bit 0 of the critical warning is set, percent.
    pub available_spare_threshold_pct: u8,
    /// Byte 5: the vendor's estimate of life used, percent (may exceed 100).
    pub percentage_used: u8,
    /// Bytes 32-47: 512-byte units read, in thousands (1 = 512 000 bytes).
    pub data_units_read: u64,
    /// Bytes 48-63: as `data_units_read`, written.
    pub data_units_written: u64,
    /// Bytes 64-79.
    pub host_read_commands: u64,
    /// Bytes 80-95.
    pub host_write_commands: u64,
    /// Bytes 96-111: minutes the controller was busy with I/O.
    pub controller_busy_time_min: u64,
    /// Bytes 112-127.
    pub power_cycles: u64,
    /// Bytes 128-143.
    pub power_on_hours: u64,
    /// Bytes 144-159.
    pub unsafe_shutdowns: u64,
    /// Bytes 160-175: unrecovered data integrity errors.
    pub media_errors: u64,
    /// Bytes 176-191: Error Information log entries over the controller's life.
    pub error_log_entries: u64,
    /// Bytes 192-195: minutes the composite temperature spent at or above the warning threshold.
    pub warning_temperature_time_min: u32,
    /// Bytes 196-199: as above, for the critical threshold.
    pub critical_temperature_time_min: u32,
    /// Bytes 200-215: temperature sensors 1-8 in kelvins (0: no such sensor).
    pub temperature_sensors_k: [u16; 8],
    /// Bytes 216-223: times the controller entered thermal management levels 1 and 2 (light and
    /// heavy throttling).
    pub thermal_transitions: [u32; 2],
    /// Bytes 224-231: seconds spent in thermal management levels 1 and 2.
    pub thermal_time_s: [u32; 2],
}

impl HealthLog {
    /// Parses the page.
    pub fn parse(page: &[u8; HEALTH_LOG_BYTES]) -> HealthLog {
        let u16_at = |o: usize| u16::from_le_bytes([page[o], page[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(page[o..o + 4].try_into().expect("4 bytes"));
        let u128_at = |o: usize| {
            let v = u128::from_le_bytes(page[o..o + 16].try_into().expect("16 bytes"));
            u64::try_from(v).unwrap_or(u64::MAX)
        };
        HealthLog {
            critical_warning: page[0],
            composite_temperature_k: u16_at(1),
            available_spare_pct: page[3],
            available_spare_threshold_pct: page[4],
            percentage_used: page[5],
            data_units_read: u128_at(32),
            data_units_written: u128_at(48),
            host_read_commands: u128_at(64),
            host_write_commands: u128_at(80),
            controller_busy_time_min: u128_at(96),
            power_cycles: u128_at(112),
            power_on_hours: u128_at(128),
            unsafe_shutdowns: u128_at(144),
            media_errors: u128_at(160),
            error_log_entries: u128_at(176),
            warning_temperature_time_min: u32_at(192),
            critical_temperature_time_min: u32_at(196),
            temperature_sensors_k: std::array::from_fn(|i| u16_at(200 + 2 * i)),
            thermal_transitions: [u32_at(216), u32_at(220)],
            thermal_time_s: [u32_at(224), u32_at(228)],
        }
    }

    /// The composite temperature in degrees Celsius, when the drive reports one.
    pub fn temperature_c(&self) -> Option<i32> {
        kelvin_to_c(self.composite_temperature_k)
    }

    /// Whether the controller entered or spent time in thermal management (throttled) since `before`.
    /// The counters cannot tell whether it is throttling at this moment, only that it did.
    pub fn throttled_since(&self, before: &HealthLog) -> bool {
        (0..2).any(|i| {
            self.thermal_transitions[i] > before.thermal_transitions[i]
                || self.thermal_time_s[i] > before.thermal_time_s[i]
        })
    }
}

/// Degrees Celsius of a temperature in kelvins; 0 K means "not reported".
pub fn kelvin_to_c(k: u16) -> Option<i32> {
    (k != 0).then(|| i32::from(k) - 273)
}

/// The conditions the critical warning byte names, lowest bit first (unknown bits by number).
pub fn critical_warnings(bits: u8) -> Vec<String> {
    (0..8)
        .filter(|b| bits & (1 << b) != 0)
        .map(|b| CRITICAL_WARNING_BITS.get(b).map_or_else(|| format!("reserved bit {b}"), |s| (*s).to_string()))
        .collect()
}

/// What went wrong between `first` (before the run) and the later readings, one phrase each: critical
/// warning bits raised that were clear at first, thermal management entered or time added at the
/// warning/critical temperature, media errors added. Empty when nothing did.
pub fn alerts<'a>(first: &HealthLog, later: impl IntoIterator<Item = &'a HealthLog>) -> Vec<String> {
    let mut raised = 0u8;
    let mut last = first;
    for h in later {
        raised |= h.critical_warning & !first.critical_warning;
        last = h;
    }
    let mut out: Vec<String> =
        critical_warnings(raised).into_iter().map(|w| format!("critical warning: {w}")).collect();
    if last.throttled_since(first) {
        out.push(format!(
            "thermal throttling: {} light and {} heavy transitions, {} s and {} s throttled",
            last.thermal_transitions[0].saturating_sub(first.thermal_transitions[0]),
            last.thermal_transitions[1].saturating_sub(first.thermal_transitions[1]),
            last.thermal_time_s[0].saturating_sub(first.thermal_time_s[0]),
            last.thermal_time_s[1].saturating_sub(first.thermal_time_s[1]),
        ));
    }
    let warm = last.warning_temperature_time_min.saturating_sub(first.warning_temperature_time_min);
    let hot = last.critical_temperature_time_min.saturating_sub(first.critical_temperature_time_min);
    if warm > 0 || hot > 0 {
        out.push(format!("{warm} min above the warning and {hot} min above the critical composite temperature"));
    }
    if last.media_errors > first.media_errors {
        out.push(format!("{} new media and data integrity errors", last.media_errors - first.media_errors));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> [u8; HEALTH_LOG_BYTES] {
        let mut p = [0u8; HEALTH_LOG_BYTES];
        p[0] = 0b10;
        p[1..3].copy_from_slice(&313u16.to_le_bytes());
        p[3] = 100;
        p[4] = 10;
        p[5] = 3;
        p[32..48].copy_from_slice(&1234u128.to_le_bytes());
        p[48..64].copy_from_slice(&(u128::from(u64::MAX) + 5).to_le_bytes());
        p[64..80].copy_from_slice(&7u128.to_le_bytes());
        p[80..96].copy_from_slice(&8u128.to_le_bytes());
        p[96..112].copy_from_slice(&9u128.to_le_bytes());
        p[112..128].copy_from_slice(&10u128.to_le_bytes());
        p[128..144].copy_from_slice(&11u128.to_le_bytes());
        p[144..160].copy_from_slice(&12u128.to_le_bytes());
        p[160..176].copy_from_slice(&13u128.to_le_bytes());
        p[176..192].copy_from_slice(&14u128.to_le_bytes());
        p[192..196].copy_from_slice(&15u32.to_le_bytes());
        p[196..200].copy_from_slice(&16u32.to_le_bytes());
        p[200..202].copy_from_slice(&300u16.to_le_bytes());
        p[214..216].copy_from_slice(&350u16.to_le_bytes());
        p[216..220].copy_from_slice(&17u32.to_le_bytes());
        p[220..224].copy_from_slice(&18u32.to_le_bytes());
        p[224..228].copy_from_slice(&19u32.to_le_bytes());
        p[228..232].copy_from_slice(&20u32.to_le_bytes());
        p
    }

    #[test]
    fn every_field_comes_from_its_offset() {
        let h = HealthLog::parse(&page());
        assert_eq!(
            h,
            HealthLog {
                critical_warning: 2,
                composite_temperature_k: 313,
                available_spare_pct: 100,
                available_spare_threshold_pct: 10,
                percentage_used: 3,
                data_units_read: 1234,
                data_units_written: u64::MAX,
                host_read_commands: 7,
                host_write_commands: 8,
                controller_busy_time_min: 9,
                power_cycles: 10,
                power_on_hours: 11,
                unsafe_shutdowns: 12,
                media_errors: 13,
                error_log_entries: 14,
                warning_temperature_time_min: 15,
                critical_temperature_time_min: 16,
                temperature_sensors_k: [300, 0, 0, 0, 0, 0, 0, 350],
                thermal_transitions: [17, 18],
                thermal_time_s: [19, 20],
            }
        );
        assert_eq!(h.temperature_c(), Some(40));
        assert_eq!(kelvin_to_c(0), None);
    }

    #[test]
    fn critical_warning_bits_are_named() {
        assert_eq!(critical_warnings(0), Vec::<String>::new());
        assert_eq!(critical_warnings(0b1000_0010), ["temperature beyond a threshold", "reserved bit 7"]);
    }

    #[test]
    fn alerts_name_what_changed_during_the_run() {
        let before = HealthLog::parse(&page());
        assert!(alerts(&before, [&before, &before]).is_empty(), "an unchanged drive raises nothing");

        let mut spare = before;
        spare.critical_warning |= 1;
        let mut after = before;
        after.thermal_transitions[0] += 2;
        after.thermal_time_s[1] += 5;
        after.media_errors += 3;
        after.warning_temperature_time_min += 1;
        // The bit raised mid-run counts even though it cleared again by the end.
        assert_eq!(
            alerts(&before, [&spare, &after]),
            [
                "critical warning: available spare below its threshold",
                "thermal throttling: 2 light and 0 heavy transitions, 0 s and 5 s throttled",
                "1 min above the warning and 0 min above the critical composite temperature",
                "3 new media and data integrity errors",
            ]
        );
        // A bit already set before the run is not news.
        let mut first = before;
        first.critical_warning = 0b11;
        assert!(alerts(&first, [&before]).is_empty());
    }
}
