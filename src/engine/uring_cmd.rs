//! NVMe passthrough through io_uring (`IORING_OP_URING_CMD`) on a namespace's generic character
//! device, `/dev/ngXnY`.
//!
//! The ring has 128-byte SQEs (the NVMe command rides in the SQE's 80-byte command area) and 32-byte
//! CQEs. Reads and writes are NVMe Read (0x02) and Write (0x01) commands built from the namespace's
//! LBA format, which [`probe_namespace`] learns from an Identify Namespace admin command; a trim is
//! Dataset Management (0x09) with the deallocate attribute and one range (its 16-byte descriptor
//! written into the slot's buffer), a write-zeroes is Write Zeroes (0x08), a flush is Flush (0x00). The block
//! layer's bio, plugging and splitting are skipped; what is left is io_uring and the nvme driver's
//! request path. Polled completions work as for `uring` when the driver has poll queues.
//!
//! What this module does not do: pick which I/Os to issue, or handle namespaces with metadata or
//! protection information (refused up front with a sentence saying so).

use super::buf::SlotBuffers;
use super::ring::{Ring, RingOptions};
use super::uring::{Registered, UringOptions};
use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued};
use crate::io::IoError;
use crate::io::{Direction, IoOp};
use io_uring::{cqueue, opcode, squeue, types};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

const NAME: &str = "uring-cmd";

/// NVMe I/O command opcodes (NVM command set).
pub const NVME_CMD_FLUSH: u8 = 0x00;
pub const NVME_CMD_WRITE: u8 = 0x01;
pub const NVME_CMD_READ: u8 = 0x02;
pub const NVME_CMD_WRITE_ZEROES: u8 = 0x08;
pub const NVME_CMD_DSM: u8 = 0x09;
/// Dataset Management CDW11 bit 2: deallocate the ranges.
const DSM_ATTR_DEALLOCATE: u32 = 1 << 2;
/// One Dataset Management range descriptor: context attributes, length in blocks, starting LBA.
pub const DSM_RANGE_BYTES: u32 = 16;
/// Admin opcode Identify; CNS 0 is Identify Namespace.
const NVME_ADMIN_IDENTIFY: u8 = 0x06;

/// `_IOWR('N', 0x80, struct nvme_uring_cmd)`: the io_uring command for an NVMe I/O command.
pub const NVME_URING_CMD_IO: u32 = 0xC048_4E80;
/// `_IO('N', 0x40)`: the namespace id of an open namespace device.
const NVME_IOCTL_ID: libc::c_ulong = 0x4E40;
/// `_IOWR('N', 0x41, struct nvme_passthru_cmd)`: an admin command.
pub(crate) const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xC048_4E41;

/// The kernel's `struct nvme_uring_cmd` (and, with `result` in place of the last word,
/// `struct nvme_passthru_cmd`): 72 bytes, little-endian on every platform nvme runs this on.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NvmeCmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    /// `rsvd2` in the uring command; the admin ioctl returns completion dword 0 here.
    pub result: u32,
}

const _: () = assert!(std::mem::size_of::<NvmeCmd>() == 72);

impl NvmeCmd {
    /// An NVMe Read or Write of `nlb` logical blocks from `slba`, into or out of `data_len` bytes
    /// at `addr`; or a Write Zeroes of those blocks (no data); or a Flush (no range, no data); or a
    /// Dataset Management deallocating one range whose descriptor ([`dsm_range`]) is at `addr`.
    /// NLB is 0-based in Read, Write and Write Zeroes (CDW12 bits 15:0).
    pub fn io(dir: Direction, nsid: u32, slba: u64, nlb: u32, addr: u64, data_len: u32) -> NvmeCmd {
        let rw = |opcode, addr, data_len| NvmeCmd {
            opcode,
            nsid,
            addr,
            data_len,
            cdw10: slba as u32,
            cdw11: (slba >> 32) as u32,
            cdw12: nlb.wrapping_sub(1) & 0xffff,
            ..NvmeCmd::default()
        };
        match dir {
            Direction::Read => rw(NVME_CMD_READ, addr, data_len),
            Direction::Write => rw(NVME_CMD_WRITE, addr, data_len),
            Direction::WriteZeroes => rw(NVME_CMD_WRITE_ZEROES, 0, 0),
            Direction::Flush => NvmeCmd { opcode: NVME_CMD_FLUSH, nsid, ..NvmeCmd::default() },
            // CDW10 bits 7:0: the number of ranges, 0-based.
            Direction::Trim => NvmeCmd {
                opcode: NVME_CMD_DSM,
                nsid,
                addr,
                data_len: DSM_RANGE_BYTES,
                cdw10: 0,
                cdw11: DSM_ATTR_DEALLOCATE,
                ..NvmeCmd::default()
            },
        }
    }

    /// The command as the bytes of an SQE's 80-byte command area.
    #[inline]
    pub fn to_sqe_cmd(&self) -> [u8; 80] {
        let mut b = [0u8; 80];
        b[0] = self.opcode;
        b[1] = self.flags;
        b[2..4].copy_from_slice(&self.rsvd1.to_le_bytes());
        let words: [(usize, u32); 4] = [(4, self.nsid), (8, self.cdw2), (12, self.cdw3), (32, self.metadata_len)];
        for (at, w) in words {
            b[at..at + 4].copy_from_slice(&w.to_le_bytes());
        }
        b[16..24].copy_from_slice(&self.metadata.to_le_bytes());
        b[24..32].copy_from_slice(&self.addr.to_le_bytes());
        b[36..40].copy_from_slice(&self.data_len.to_le_bytes());
        let tail =
            [self.cdw10, self.cdw11, self.cdw12, self.cdw13, self.cdw14, self.cdw15, self.timeout_ms, self.result];
        for (i, w) in tail.iter().enumerate() {
            b[40 + i * 4..44 + i * 4].copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// The Dataset Management range descriptor of `nlb` blocks from `slba` (the length is 1-based here).
#[inline]
pub fn dsm_range(slba: u64, nlb: u32) -> [u8; DSM_RANGE_BYTES as usize] {
    let mut r = [0u8; DSM_RANGE_BYTES as usize];
    r[4..8].copy_from_slice(&nlb.to_le_bytes());
    r[8..16].copy_from_slice(&slba.to_le_bytes());
    r
}

/// A passthrough completion's result: negative is an errno from the kernel, positive is the NVMe
/// status field (status code in bits 7:0, status code type in bits 10:8; CRD, More and DNR above).
#[inline]
pub fn decode_status(res: i32) -> Result<(), IoError> {
    match res {
        0 => Ok(()),
        r if r < 0 => Err(IoError::Errno { errno: -r }),
        r => Err(IoError::Nvme { sct: ((r >> 8) & 0x7) as u8, sc: (r & 0xff) as u8 }),
    }
}

/// What Identify Namespace says about the formatted LBA size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbaFormat {
    /// Namespace size in logical blocks (NSZE).
    pub blocks: u64,
    pub lba_bytes: u32,
    /// Metadata bytes per block (0 for the plain formats this engine drives).
    pub metadata_bytes: u16,
}

/// Reads NSZE and the in-use LBA format (FLBAS) out of an Identify Namespace data structure.
pub fn parse_identify_namespace(id: &[u8; 4096]) -> Result<LbaFormat, String> {
    let nsze = u64::from_le_bytes(id[0..8].try_into().expect("8 bytes"));
    let nlbaf = id[25] as usize;
    let flbas = id[26];
    // Bits 3:0 are the low nibble of the index; bits 6:5 the high bits when there are over 16.
    let index = (flbas & 0x0f) as usize | (((flbas >> 5) & 0x03) as usize) << 4;
    if index > nlbaf {
        return Err(format!("FLBAS selects LBA format {index} but the namespace lists only {}", nlbaf + 1));
    }
    let at = 128 + 4 * index;
    let lbaf = u32::from_le_bytes(id[at..at + 4].try_into().expect("4 bytes"));
    let lbads = (lbaf >> 16) & 0xff;
    if !(9..=16).contains(&lbads) {
        return Err(format!("LBA format {index} has a data size of 2^{lbads} bytes, which is not a block size"));
    }
    Ok(LbaFormat { blocks: nsze, lba_bytes: 1 << lbads, metadata_bytes: (lbaf & 0xffff) as u16 })
}

/// A namespace, as the engine addresses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Namespace {
    pub nsid: u32,
    pub format: LbaFormat,
}

/// Asks the namespace behind `path` (`/dev/ngXnY` or `/dev/nvmeXnY`) for its id and LBA format.
///
/// # Errors
/// The device does not open, is not an NVMe namespace, or refuses the admin command (it needs
/// CAP_SYS_ADMIN).
pub fn probe_namespace(path: &Path) -> io::Result<Namespace> {
    let f = File::open(path)?;
    // SAFETY: NVME_IOCTL_ID takes no argument and returns the namespace id or -1 with errno.
    let nsid = unsafe { libc::ioctl(f.as_raw_fd(), NVME_IOCTL_ID) };
    if nsid < 0 {
        return Err(io::Error::last_os_error());
    }
    let nsid = nsid as u32;
    let mut id = vec![0u8; 4096];
    let mut cmd = NvmeCmd {
        opcode: NVME_ADMIN_IDENTIFY,
        nsid,
        addr: id.as_mut_ptr() as u64,
        data_len: 4096,
        cdw10: 0, // CNS 0: Identify Namespace
        ..NvmeCmd::default()
    };
    // SAFETY: `cmd` is a live struct nvme_passthru_cmd (72 bytes, asserted above) and `addr` points
    // at `id`, 4096 writable bytes that outlive the call; the ioctl is synchronous.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), NVME_IOCTL_ADMIN_CMD, &mut cmd as *mut NvmeCmd) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if rc > 0 {
        return Err(io::Error::other(format!(
            "Identify Namespace failed with NVMe status type {:#x} code {:#04x}",
            (rc >> 8) & 7,
            rc & 0xff
        )));
    }
    let id: &[u8; 4096] = id[..].try_into().expect("4096 bytes");
    let format = parse_identify_namespace(id).map_err(io::Error::other)?;
    Ok(Namespace { nsid, format })
}

pub struct UringCmdBuilder {
    pub path: PathBuf,
    pub writes: bool,
    pub options: UringOptions,
    pub buffer_seed: u64,
}

impl EngineBuilder for UringCmdBuilder {
    type Engine = UringCmdEngine;

    fn build(&self, worker: usize, queue_depth: u32, max_io_bytes: u32) -> Result<UringCmdEngine, EngineError> {
        let open = |source| EngineError::Open { path: self.path.display().to_string(), source };
        let ns = probe_namespace(&self.path).map_err(open)?;
        if ns.format.metadata_bytes != 0 {
            return Err(open(io::Error::other(format!(
                "the namespace is formatted with {} metadata bytes per block, which uring-cmd does not handle; \
                 reformat it without metadata or use the uring engine on the block device",
                ns.format.metadata_bytes
            ))));
        }
        let file = OpenOptions::new().read(true).write(self.writes).open(&self.path).map_err(open)?;
        let ring = Ring::new(NAME, queue_depth, &self.options.ring)?;
        let mut bufs = SlotBuffers::new(queue_depth as usize, max_io_bytes as usize, self.buffer_seed ^ worker as u64);
        let registered = Registered::new(&ring, &file, &mut bufs, &self.options, NAME, "registering the device")?;
        Ok(UringCmdEngine { ring, bufs, file, ns, lba_shift: ns.format.lba_bytes.trailing_zeros(), registered })
    }
}

/// One worker's passthrough ring.
pub struct UringCmdEngine {
    // Drop order: the ring (and the kernel's references) before the buffers and the device.
    ring: Ring<squeue::Entry128, cqueue::Entry32>,
    bufs: SlotBuffers,
    file: File,
    ns: Namespace,
    lba_shift: u32,
    registered: Registered,
}

impl UringCmdEngine {
    #[inline]
    fn entry(&mut self, slot: u32, op: &IoOp) -> squeue::Entry128 {
        let addr = self.bufs.slot_ptr(slot) as u64;
        // Offsets and lengths are multiples of the LBA size: config checks them against the
        // namespace's logical block size before anything runs.
        let (slba, nlb) = (op.offset >> self.lba_shift, op.len >> self.lba_shift);
        if op.dir == Direction::Trim {
            self.bufs.slot_mut(slot)[..DSM_RANGE_BYTES as usize].copy_from_slice(&dsm_range(slba, nlb));
        }
        let cmd = NvmeCmd::io(op.dir, self.ns.nsid, slba, nlb, addr, op.len);
        let b = if self.registered.registered_file {
            opcode::UringCmd80::new(types::Fixed(0), NVME_URING_CMD_IO)
        } else {
            opcode::UringCmd80::new(types::Fd(self.file.as_raw_fd()), NVME_URING_CMD_IO)
        };
        // The slot is the fixed buffer index: slots are < queue depth <= 65536. Write Zeroes and
        // Flush carry no data, so no buffer.
        let data = cmd.data_len > 0;
        let b = if self.registered.fixed_buffers && data { b.buf_index(Some(slot as u16)) } else { b };
        b.cmd(cmd.to_sqe_cmd()).build().user_data(u64::from(slot))
    }
}

#[cold]
fn runtime(what: &'static str, source: io::Error) -> EngineError {
    EngineError::Runtime { engine: NAME, what, source }
}

impl Engine for UringCmdEngine {
    #[inline]
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        debug_assert!(op.len as usize <= self.bufs.slot_bytes());
        let entry = self.entry(slot, op);
        // SAFETY: the command's data pointer is `slot`'s buffer, owned by the engine and untouched
        // until the slot's completion is reaped; the command itself is copied into the SQE.
        if unsafe { self.ring.push(&entry) } { Ok(Queued::Ok) } else { Ok(Queued::Busy) }
    }

    #[inline]
    fn submit(&mut self) -> Result<(), EngineError> {
        self.ring.submit().map_err(|e| runtime("io_uring_enter (submit)", e))
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        self.ring
            .reap(max, |cqe| done(cqe.user_data() as u32, decode_status(cqe.result())))
            .map_err(|e| runtime("io_uring_enter (reap)", e))
    }

    fn wait(&mut self) -> Result<(), EngineError> {
        self.ring.wait().map_err(|e| runtime("io_uring_enter (wait)", e))
    }

    fn progress(&mut self) -> Result<(), EngineError> {
        self.ring.progress().map_err(|e| runtime("io_uring_enter (progress)", e))
    }

    fn interrupt_driven(&self) -> bool {
        self.ring.can_wait_for()
    }

    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        self.ring
            .wait_for(std::time::Duration::from_nanos(timeout_ns))
            .map_err(|e| runtime("io_uring_enter (wait with a timeout)", e))
    }

    fn unsent(&mut self) -> u32 {
        self.ring.unsent()
    }

    fn batches(&self) -> Option<crate::batches::BatchCounts> {
        Some(self.ring.batches)
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    fn info(&self) -> EngineInfo {
        let ns = [
            ("nsid".to_string(), self.ns.nsid.to_string()),
            ("lba_bytes".to_string(), self.ns.format.lba_bytes.to_string()),
        ];
        EngineInfo { name: NAME.into(), options: self.registered.describe(&self.ring, ns) }
    }
}

/// The options `uring-cmd` takes are the ring's and the registration knobs, as for `uring`.
pub fn default_options() -> UringOptions {
    UringOptions { ring: RingOptions::default(), ..UringOptions::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::IoPrio;

    fn word(b: &[u8; 80], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn trim_write_zeroes_and_flush_commands() {
        let t = NvmeCmd::io(Direction::Trim, 3, 0x1_0000_0010, 256, 0xb000, 1 << 20);
        assert_eq!((t.opcode, t.nsid, t.addr, t.data_len, t.cdw10, t.cdw11), (0x09, 3, 0xb000, 16, 0, 1 << 2));
        let r = dsm_range(0x1_0000_0010, 256);
        assert_eq!(&r[0..4], &[0; 4], "no context attributes");
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 256, "length is 1-based");
        assert_eq!(u64::from_le_bytes(r[8..16].try_into().unwrap()), 0x1_0000_0010);
        let z = NvmeCmd::io(Direction::WriteZeroes, 3, 0x1_0000_0010, 8, 0xb000, 4096);
        assert_eq!((z.opcode, z.addr, z.data_len, z.cdw10, z.cdw11, z.cdw12), (0x08, 0, 0, 0x10, 1, 7));
        let f = NvmeCmd::io(Direction::Flush, 3, 99, 8, 0xb000, 4096);
        assert_eq!(f, NvmeCmd { opcode: 0, nsid: 3, ..NvmeCmd::default() });
    }

    #[test]
    fn read_command_fields() {
        let c = NvmeCmd::io(Direction::Read, 1, 0x1_2345_6789, 8, 0xdead_b000, 4096);
        assert_eq!(c.opcode, 0x02);
        assert_eq!(c.nsid, 1);
        assert_eq!((c.cdw10, c.cdw11), (0x2345_6789, 0x1));
        assert_eq!(c.cdw12, 7, "NLB is 0-based");
        let b = c.to_sqe_cmd();
        assert_eq!(b[0], 0x02);
        assert_eq!(word(&b, 4), 1);
        assert_eq!(u64::from_le_bytes(b[24..32].try_into().unwrap()), 0xdead_b000);
        assert_eq!(word(&b, 36), 4096);
        assert_eq!((word(&b, 40), word(&b, 44), word(&b, 48)), (0x2345_6789, 1, 7));
        assert!(b[72..].iter().all(|&x| x == 0));
    }

    #[test]
    fn write_command_fields() {
        let c = NvmeCmd::io(Direction::Write, 7, 42, 1, 0x1000, 512);
        assert_eq!((c.opcode, c.nsid, c.cdw10, c.cdw11, c.cdw12), (0x01, 7, 42, 0, 0));
        let c = NvmeCmd::io(Direction::Write, 7, 0, 65536, 0x1000, 32 << 20);
        assert_eq!(c.cdw12, 0xffff, "the largest transfer NLB can express");
    }

    /// The byte layout matches the in-memory layout of the `repr(C)` struct the admin ioctl uses.
    #[test]
    fn sqe_bytes_match_the_struct_layout() {
        let c = NvmeCmd {
            opcode: 1,
            flags: 2,
            rsvd1: 0x0403,
            nsid: 0x0807_0605,
            cdw2: 9,
            cdw3: 10,
            metadata: 0x1111_2222_3333_4444,
            addr: 0x5555_6666_7777_8888,
            metadata_len: 11,
            data_len: 12,
            cdw10: 13,
            cdw11: 14,
            cdw12: 15,
            cdw13: 16,
            cdw14: 17,
            cdw15: 18,
            timeout_ms: 19,
            result: 20,
        };
        let b = c.to_sqe_cmd();
        assert_eq!(std::mem::offset_of!(NvmeCmd, metadata), 16);
        assert_eq!(std::mem::offset_of!(NvmeCmd, cdw10), 40);
        assert_eq!(std::mem::offset_of!(NvmeCmd, timeout_ms), 64);
        assert_eq!(b[..4], [1, 2, 3, 4]);
        assert_eq!(word(&b, 4), 0x0807_0605);
        assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), 0x1111_2222_3333_4444);
        assert_eq!((word(&b, 32), word(&b, 36)), (11, 12));
        assert_eq!((word(&b, 60), word(&b, 64), word(&b, 68)), (18, 19, 20));
    }

    #[test]
    fn completion_status_decoding() {
        assert_eq!(decode_status(0), Ok(()));
        assert_eq!(decode_status(-libc::EIO), Err(IoError::Errno { errno: libc::EIO }));
        // LBA Out of Range: generic status type 0, code 0x80.
        assert_eq!(decode_status(0x0080), Err(IoError::Nvme { sct: 0, sc: 0x80 }));
        // Unrecovered Read Error (media type 2, code 0x81) with DNR (bit 14) set.
        assert_eq!(decode_status(0x4281), Err(IoError::Nvme { sct: 2, sc: 0x81 }));
        // Invalid Field in Command.
        assert_eq!(decode_status(0x0002), Err(IoError::Nvme { sct: 0, sc: 0x02 }));
    }

    fn identify(nsze: u64, flbas: u8, formats: &[u32]) -> [u8; 4096] {
        let mut id = [0u8; 4096];
        id[0..8].copy_from_slice(&nsze.to_le_bytes());
        id[25] = (formats.len() - 1) as u8;
        id[26] = flbas;
        for (i, f) in formats.iter().enumerate() {
            id[128 + 4 * i..132 + 4 * i].copy_from_slice(&f.to_le_bytes());
        }
        id
    }

    #[test]
    fn lba_format_from_identify_namespace() {
        // Format 0: 512 bytes; format 1: 4096 bytes; format 2: 4096 + 8 bytes metadata.
        let formats = [9 << 16, 12 << 16, (12 << 16) | 8];
        let f = parse_identify_namespace(&identify(1 << 21, 1, &formats)).unwrap();
        assert_eq!(f, LbaFormat { blocks: 1 << 21, lba_bytes: 4096, metadata_bytes: 0 });
        let f = parse_identify_namespace(&identify(100, 0, &formats)).unwrap();
        assert_eq!(f.lba_bytes, 512);
        let f = parse_identify_namespace(&identify(100, 2 | 0x10, &formats)).unwrap();
        assert_eq!((f.lba_bytes, f.metadata_bytes), (4096, 8));
        // Index 17 needs the high bits (6:5) of FLBAS.
        let mut many = vec![9 << 16; 18];
        many[17] = 12 << 16;
        let f = parse_identify_namespace(&identify(100, 0x20 | 1, &many)).unwrap();
        assert_eq!(f.lba_bytes, 4096);
        assert!(parse_identify_namespace(&identify(100, 5, &formats)).unwrap_err().contains("lists only 3"));
        assert!(parse_identify_namespace(&identify(100, 0, &[0])).unwrap_err().contains("not a block size"));
    }

    #[test]
    fn generic_device_round_trip_or_skip() {
        let Some(path) = first_generic_device() else {
            crate::skip::skip(
                crate::skip::Need::NvmeDevice,
                "no /dev/ng* NVMe generic device here (uring-cmd needs one)",
            );
            return;
        };
        // A generic device is there, so identifying it must work: only a test that is not allowed
        // to open it (not root) skips.
        let ns = match probe_namespace(&path) {
            Ok(ns) => ns,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
                crate::skip::skip(crate::skip::Need::Root, &format!("cannot open {} ({e})", path.display()));
                return;
            }
            Err(e) => panic!("cannot identify {}: {e}", path.display()),
        };
        let bs = ns.format.lba_bytes;
        let b = UringCmdBuilder { path, writes: false, options: default_options(), buffer_seed: 1 };
        let mut e = b.build(0, 2, bs).unwrap();
        assert_eq!(
            e.queue(0, &IoOp { dir: Direction::Read, offset: 0, len: bs, prio: IoPrio::NONE }).unwrap(),
            Queued::Ok
        );
        e.submit().unwrap();
        let mut got = None;
        while got.is_none() {
            if e.poll(1, |s, r| got = Some((s, r))).unwrap() == 0 {
                e.wait().unwrap();
            }
        }
        assert_eq!(got, Some((0, Ok(()))));
    }

    fn first_generic_device() -> Option<PathBuf> {
        let mut names: Vec<_> = std::fs::read_dir("/dev")
            .ok()?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("ng") && n.contains('n'))
            .collect();
        names.sort();
        names.first().map(|n| Path::new("/dev").join(n))
    }
}
