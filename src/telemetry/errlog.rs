//! Entries of the Error Information log page (log identifier 01h), as the controller keeps them for
//! failed commands.
//!
//! Offsets follow the NVMe base specification (figure "Error Information Log Entry"). This module
//! parses bytes; reading the page is the caller's.

use serde::Serialize;

/// Log identifier of the Error Information page.
pub const LID_ERROR: u8 = 0x01;
/// The size of one entry.
pub const ENTRY_BYTES: usize = 64;
/// Entries read after a run with I/O errors: the page is a ring, newest first, of at least one and
/// usually 64 or more entries; the first few cover the errors of one run.
pub const ENTRIES_READ: usize = 16;

/// One error the controller logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorLogEntry {
    /// Bytes 0-7: this error's number in the controller's life (0: the slot is empty).
    pub error_count: u64,
    /// Bytes 8-9: the submission queue of the failed command (0: admin).
    pub sqid: u16,
    /// Bytes 10-11: its command identifier.
    pub cid: u16,
    /// Bytes 12-13 bits 11:9: status code type.
    pub status_code_type: u8,
    /// Bytes 12-13 bits 8:1: status code.
    pub status_code: u8,
    /// Bytes 16-23: the first LBA that failed, when the error concerns one.
    pub lba: u64,
    /// Bytes 24-27: its namespace.
    pub nsid: u32,
}

/// The non-empty entries of a page read from the start, in the page's order (newest first).
pub fn parse(page: &[u8]) -> Vec<ErrorLogEntry> {
    page.chunks_exact(ENTRY_BYTES)
        .map(|e| {
            let status = u16::from_le_bytes([e[12], e[13]]) >> 1; // bit 0 is the phase tag
            ErrorLogEntry {
                error_count: u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
                sqid: u16::from_le_bytes([e[8], e[9]]),
                cid: u16::from_le_bytes([e[10], e[11]]),
                status_code_type: ((status >> 8) & 0x7) as u8,
                status_code: (status & 0xff) as u8,
                lba: u64::from_le_bytes(e[16..24].try_into().expect("8 bytes")),
                nsid: u32::from_le_bytes(e[24..28].try_into().expect("4 bytes")),
            }
        })
        .filter(|e| e.error_count != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_parsed_and_empty_slots_skipped() {
        let mut page = vec![0u8; 3 * ENTRY_BYTES];
        let e = &mut page[..ENTRY_BYTES];
        e[0..8].copy_from_slice(&42u64.to_le_bytes());
        e[8..10].copy_from_slice(&3u16.to_le_bytes());
        e[10..12].copy_from_slice(&0x77u16.to_le_bytes());
        // Status type 2 (media errors), code 0x81 (unrecovered read error), phase tag set.
        e[12..14].copy_from_slice(&(((2u16 << 8) | 0x81) << 1 | 1).to_le_bytes());
        e[16..24].copy_from_slice(&0x1000u64.to_le_bytes());
        e[24..28].copy_from_slice(&1u32.to_le_bytes());
        page[2 * ENTRY_BYTES] = 41;
        let entries = parse(&page);
        assert_eq!(
            entries[0],
            ErrorLogEntry {
                error_count: 42,
                sqid: 3,
                cid: 0x77,
                status_code_type: 2,
                status_code: 0x81,
                lba: 0x1000,
                nsid: 1
            }
        );
        assert_eq!(entries.iter().map(|e| e.error_count).collect::<Vec<_>>(), [42, 41]);
    }
}
