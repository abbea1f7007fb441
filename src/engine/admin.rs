//! NVMe admin commands through the kernel's passthrough (`NVME_IOCTL_ADMIN_CMD` on the controller's
//! character device `/dev/nvmeX`): what telemetry reads besides I/O.
//!
//! Only the ioctl lives here (the one `unsafe` of it); what the pages mean is `telemetry`'s. Never
//! called from a worker: an admin command goes through the controller's single admin queue.

use super::uring_cmd::{NVME_IOCTL_ADMIN_CMD, NvmeCmd};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Admin opcode Get Log Page.
const NVME_ADMIN_GET_LOG_PAGE: u8 = 0x02;

/// Why a Get Log Page failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The ioctl itself failed (no CAP_SYS_ADMIN, not an NVMe device).
    #[error("admin passthrough failed: {0}")]
    Os(#[from] io::Error),
    /// The controller completed the command with an error status.
    #[error("the controller answered with NVMe status type {sct:#x} code {sc:#04x}")]
    Status { sct: u8, sc: u8 },
    #[error("a log page read must be a non-empty multiple of 4 bytes up to 16 MiB, not {0}")]
    Length(usize),
}

/// Reads log page `lid` for namespace `nsid` (`0xFFFF_FFFF`: the controller) into `buf`, from its
/// start.
///
/// # Errors
/// See [`AdminError`].
pub fn get_log_page(dev: &File, lid: u8, nsid: u32, buf: &mut [u8]) -> Result<(), AdminError> {
    if buf.is_empty() || buf.len() % 4 != 0 || buf.len() > 16 << 20 {
        return Err(AdminError::Length(buf.len()));
    }
    // NUMD is 0-based in dwords; its low 16 bits go to CDW10 bits 31:16, the rest to CDW11.
    let numd = (buf.len() / 4 - 1) as u32;
    let mut cmd = NvmeCmd {
        opcode: NVME_ADMIN_GET_LOG_PAGE,
        nsid,
        addr: buf.as_mut_ptr() as u64,
        data_len: buf.len() as u32,
        cdw10: u32::from(lid) | ((numd & 0xffff) << 16),
        cdw11: numd >> 16,
        ..NvmeCmd::default()
    };
    // SAFETY: `cmd` is a live struct nvme_passthru_cmd (72 bytes, asserted in uring_cmd) whose
    // `addr` points at `buf`, `data_len` writable bytes that outlive the synchronous ioctl.
    let rc = unsafe { libc::ioctl(dev.as_raw_fd(), NVME_IOCTL_ADMIN_CMD, &mut cmd as *mut NvmeCmd) };
    match rc {
        0 => Ok(()),
        rc if rc < 0 => Err(io::Error::last_os_error().into()),
        rc => Err(AdminError::Status { sct: ((rc >> 8) & 7) as u8, sc: (rc & 0xff) as u8 }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lengths_are_refused_before_the_ioctl() {
        let f = File::open("/dev/null").expect("/dev/null opens");
        assert!(matches!(get_log_page(&f, 2, !0, &mut []), Err(AdminError::Length(0))));
        assert!(matches!(get_log_page(&f, 2, !0, &mut [0u8; 6]), Err(AdminError::Length(6))));
        // /dev/null is no NVMe controller: the kernel refuses the ioctl.
        assert!(matches!(get_log_page(&f, 2, !0, &mut [0u8; 512]), Err(AdminError::Os(_))));
    }
}
