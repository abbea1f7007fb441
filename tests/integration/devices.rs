//! Block devices, through loop devices: writes need --allow-destroy, mounted devices and disks with a
//! mounted partition are never written (a partition beside a mounted one is), and block-size rules
//! follow the device.
//!
//! Needs root, losetup and mkfs.ext4; each test says why it skips otherwise.

use crate::common::{make_file, nvmebench, scratch_dir, stderr, stdout, uring_available};
use crate::skip::{Need, skip};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A loop device over a backing file, detached (and unmounted) on drop.
struct Loop {
    dev: String,
    mounts: Vec<PathBuf>,
    backing: PathBuf,
}

impl Loop {
    fn new(backing: &Path, extra: &[&str]) -> Option<Loop> {
        let mut args = vec!["-f", "--show"];
        args.extend_from_slice(extra);
        args.push(backing.to_str().unwrap());
        let o = Command::new("losetup").args(&args).output().expect("losetup runs (can_loop found it)");
        if !o.status.success() {
            skip(Need::LoopDevices, &format!("losetup failed: {}", String::from_utf8_lossy(&o.stderr).trim()));
            return None;
        }
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        Some(Loop { dev, mounts: Vec::new(), backing: backing.to_path_buf() })
    }

    /// Makes ext4 on `dev` and mounts it at `at`; skips (a loop-device machine mounts ext4) otherwise.
    fn mount(&mut self, dev: &str, at: &Path) -> bool {
        let ok = self.mount_with(dev, at, &["mkfs.ext4", "-q", "-F"]);
        if !ok {
            skip(Need::LoopDevices, &format!("cannot make and mount ext4 on {dev}"));
        }
        ok
    }

    /// Makes a filesystem with `mkfs` (the program and its flags; the device is added) and mounts it.
    fn mount_with(&mut self, dev: &str, at: &Path, mkfs: &[&str]) -> bool {
        std::fs::create_dir_all(at).unwrap();
        let mkfs = Command::new(mkfs[0]).args(&mkfs[1..]).arg(dev).output();
        let ok = mkfs.is_ok_and(|o| o.status.success())
            && Command::new("mount").args([dev, at.to_str().unwrap()]).status().is_ok_and(|s| s.success());
        if ok {
            self.mounts.push(at.to_path_buf());
        }
        ok
    }

    fn backing_bytes(&self) -> Vec<u8> {
        std::fs::read(&self.backing).unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        for m in self.mounts.iter().rev() {
            // An io_uring run that just exited may still hold its files for a moment (the kernel
            // tears the ring down in the background): umount says "target is busy" until then.
            for _ in 0..50 {
                if Command::new("umount").arg(m).stderr(Stdio::null()).status().is_ok_and(|s| s.success()) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn can_loop() -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let tools = ["losetup", "mkfs.ext4", "mount"]
        .iter()
        .all(|t| Command::new("which").arg(t).output().is_ok_and(|o| o.status.success()));
    if !(root && tools && Path::new("/dev/loop-control").exists()) {
        let need = if root { Need::LoopDevices } else { Need::Root };
        skip(need, "loop-device tests need root, /dev/loop-control, losetup and mkfs.ext4");
        return false;
    }
    uring_available()
}

fn backing_file(dir: &Path, bytes: u64) -> PathBuf {
    let p = dir.join("disk.img");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(bytes).unwrap();
    p
}

#[test]
fn writes_need_allow_destroy() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let Some(lo) = Loop::new(&backing_file(dir.path(), 32 << 20), &[]) else { return };
    let before = lo.backing_bytes();
    let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randwrite", "--time", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("destroying its data; add --allow-destroy"), "{}", stderr(&o));
    assert_eq!(lo.backing_bytes(), before, "refused runs write nothing");

    // Reads need no flag.
    let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randread", "--ios", "100"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // fio's file-call engines change a file's allocation or length: never a device's, even a
    // read (falloc allocates), even with --allow-destroy.
    for engine in ["falloc", "ftruncate"] {
        let o = nvmebench(&["run", "--filename", &lo.dev, "--engine", engine, "--rw", "write", "--allow-destroy"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(
            stderr(&o).trim(),
            format!(
                "nvmebench: --engine {engine} on {}: {engine} changes a regular file's allocation or length, and this is a block device; name a file, or use psync",
                lo.dev
            )
        );
        assert_eq!(lo.backing_bytes(), before, "refused runs write nothing");
    }

    let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randwrite", "--ios", "500", "--allow-destroy"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("block device"));
    assert_ne!(lo.backing_bytes(), before, "the allowed writes landed");
}

#[test]
fn mounted_devices_are_never_written() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let Some(mut lo) = Loop::new(&backing_file(dir.path(), 32 << 20), &[]) else { return };
    let dev = lo.dev.clone();
    if !lo.mount(&dev, &dir.path().join("mnt")) {
        return;
    }
    let before = lo.backing_bytes();
    for rw in ["randwrite", "write", "randrw"] {
        let o = nvmebench(&["run", "--filename", &dev, "--rw", rw, "--time", "1", "--allow-destroy"]);
        assert_eq!(o.status.code(), Some(2), "{rw}");
        let e = stderr(&o);
        assert!(e.contains("is mounted on") && e.contains("even with --allow-destroy"), "{e}");
    }
    assert_eq!(lo.backing_bytes(), before);
    let o = nvmebench(&["run", "--filename", &dev, "--rw", "randread", "--ios", "100"]);
    assert_eq!(o.status.code(), Some(0), "reads of a mounted device are harmless: {}", stderr(&o));
}

#[test]
fn a_device_another_program_holds_exclusively_is_never_written() {
    use std::os::unix::fs::OpenOptionsExt;
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let Some(lo) = Loop::new(&backing_file(dir.path(), 32 << 20), &[]) else { return };
    let before = lo.backing_bytes();
    {
        // What mkfs or a pool driver does: the device opened O_EXCL, no filesystem on it yet.
        let _held = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(&lo.dev).unwrap();
        let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randwrite", "--time", "1", "--allow-destroy"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(
            e.contains("is opened exclusively by another program") && e.contains("even with --allow-destroy"),
            "{e}"
        );
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
        assert_eq!(lo.backing_bytes(), before, "refused runs write nothing");
        // Reading it is harmless.
        let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randread", "--ios", "100"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    // Once the other program lets go, the probe leaves the device to the workers.
    let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randwrite", "--ios", "200", "--allow-destroy"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A one-partition MBR: partition 1 from sector 2048 to the end, type Linux.
fn write_mbr(path: &Path, sectors: u32) {
    write_partitions(path, &[(2048, sectors - 2048)]);
}

/// An MBR with up to four Linux partitions, each `(first sector, sectors)`.
fn write_partitions(path: &Path, parts: &[(u32, u32)]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut mbr = [0u8; 512];
    for (i, (start, sectors)) in parts.iter().enumerate() {
        let e = &mut mbr[446 + 16 * i..462 + 16 * i];
        e[4] = 0x83;
        e[8..12].copy_from_slice(&start.to_le_bytes());
        e[12..16].copy_from_slice(&sectors.to_le_bytes());
    }
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(&mbr).unwrap();
}

#[test]
fn a_disk_with_a_mounted_partition_is_never_written() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let img = backing_file(dir.path(), 64 << 20);
    write_mbr(&img, (64 << 20) / 512);
    let Some(mut lo) = Loop::new(&img, &["-P"]) else { return };
    let part = format!("{}p1", lo.dev);
    for _ in 0..50 {
        if Path::new(&part).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if !Path::new(&part).exists() {
        skip(
            Need::KernelFeature,
            &format!("the kernel did not create {part} (no partition scanning for loop devices here)"),
        );
        return;
    }
    if !lo.mount(&part, &dir.path().join("mnt")) {
        return;
    }
    let before = lo.backing_bytes();
    let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randwrite", "--time", "1", "--allow-destroy"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains(&format!("partition {part} is mounted on")), "{e}");
    assert_eq!(lo.backing_bytes(), before);
}

/// The node of partition `n` of `lo`: /dev's when the kernel (or partx) made it, else one made
/// here from sysfs in `dir` (udev may not be running to make /dev's); `None` (with a note) when the
/// kernel did not scan the table.
fn partition_node(lo: &Loop, n: u32, dir: &Path) -> Option<String> {
    let name = lo.dev.trim_start_matches("/dev/");
    let sys = PathBuf::from(format!("/sys/block/{name}/{name}p{n}/dev"));
    for i in 0..100 {
        if sys.exists() {
            break;
        }
        if i == 50 {
            let _ = Command::new("partx").args(["-a", &lo.dev]).stderr(Stdio::null()).status();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let Ok(majmin) = std::fs::read_to_string(&sys) else {
        skip(Need::KernelFeature, &format!("the kernel did not scan {}'s partitions", lo.dev));
        return None;
    };
    let dev = format!("{}p{n}", lo.dev);
    if Path::new(&dev).exists() {
        return Some(dev);
    }
    let (major, minor) = majmin.trim().split_once(':').unwrap();
    let node = dir.join(format!("p{n}"));
    assert!(Command::new("mknod").arg(&node).args(["b", major, minor]).status().unwrap().success());
    Some(node.to_str().unwrap().to_string())
}

#[test]
fn a_partition_beside_a_mounted_one_is_written_with_allow_destroy() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let img = backing_file(dir.path(), 64 << 20);
    // Two partitions: 20 MiB from sector 2048, and the rest from sector 43008.
    let (p2_start, p2_sectors) = (43008u32, (64 << 20) / 512 - 43008);
    write_partitions(&img, &[(2048, 40960), (p2_start, p2_sectors)]);
    let Some(mut lo) = Loop::new(&img, &["-P"]) else { return };
    let (Some(p1), Some(p2)) = (partition_node(&lo, 1, dir.path()), partition_node(&lo, 2, dir.path())) else {
        return;
    };
    if !lo.mount(&p1, &dir.path().join("mnt")) {
        return;
    }
    let write = |target: &str| {
        nvmebench(&["run", "--filename", target, "--rw", "randwrite", "--ios", "64", "--allow-destroy", "--quiet"])
    };
    // The other partition shares no block with the mounted one: it is written, and only it.
    let p2_range = p2_start as usize * 512..(p2_start + p2_sectors) as usize * 512;
    let before = lo.backing_bytes();
    let o = write(&p2);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = lo.backing_bytes();
    assert_ne!(after[p2_range.clone()], before[p2_range], "the writes landed on {p2}");
    assert_eq!(after[..2048 * 512], before[..2048 * 512], "the partition table and the gap are untouched");

    // The mounted partition and its disk stay refused.
    let o = write(&p1);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("{p1} is mounted on")), "{}", stderr(&o));
    let o = write(&lo.dev);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("is a disk whose partition {p1} is mounted on")), "{}", stderr(&o));
}

#[test]
fn a_disk_and_its_own_partition_are_not_two_targets() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let img = backing_file(dir.path(), 64 << 20);
    write_mbr(&img, (64 << 20) / 512);
    let Some(lo) = Loop::new(&img, &["-P"]) else { return };
    let Some(part) = partition_node(&lo, 1, dir.path()) else { return };
    let part = part.as_str();
    let serial = format!("loop:{}", img.display());
    let before = lo.backing_bytes();
    for list in [format!("{}:{part}", lo.dev), format!("{part}:{}", lo.dev)] {
        let args = ["run", "--filename", &list, "--rw", "randwrite", "--ios", "100", "--allow-destroy"];
        let o = nvmebench(&[&args[..], &["--confirm-serial", &serial]].concat());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(&format!("{part} is a partition of {}", lo.dev)), "{e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    }
    assert_eq!(lo.backing_bytes(), before, "refused runs write nothing");
}

#[test]
fn block_sizes_follow_the_device() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let Some(lo) = Loop::new(&backing_file(dir.path(), 16 << 20), &["--sector-size", "4096"]) else { return };
    let o = nvmebench(&["run", "--filename", &lo.dev, "--bs", "512", "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("logical block size (4096 bytes)"), "{}", stderr(&o));
    let o = nvmebench(&["run", "--filename", &lo.dev, "--bs", "8k", "--ios", "10", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["config"]["target"]["logical_block_bytes"], 4096);
    assert_eq!(j["config"]["target"]["kind"], "block_device");
}

#[test]
fn every_kernel_engine_reads_and_writes_a_loop_device() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let Some(lo) = Loop::new(&backing_file(dir.path(), 32 << 20), &[]) else { return };
    for engine in ["psync", "aio", "uring", "uring:sqpoll"] {
        let before = lo.backing_bytes();
        let o = nvmebench(&["run", "--engine", engine, "--filename", &lo.dev, "--rw", "randwrite", "--ios", "300"]);
        assert_eq!(o.status.code(), Some(2), "{engine}: writes need --allow-destroy");
        assert_eq!(lo.backing_bytes(), before, "{engine}");
        let o = nvmebench(&[
            "run",
            "--engine",
            engine,
            "--filename",
            &lo.dev,
            "--rw",
            "randrw",
            "--ios",
            "300",
            "--allow-destroy",
        ]);
        assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
        assert_ne!(lo.backing_bytes(), before, "{engine}: the writes landed");
    }
    // A loop device has no poll queues: polled mode is refused up front.
    let o = nvmebench(&["run", "--engine", "uring:poll", "--filename", &lo.dev, "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("queue/io_poll is 0") && e.contains("drop :poll"), "{e}");
    // Nor is it an NVMe namespace.
    let o = nvmebench(&["run", "--engine", "uring-cmd", "--filename", &lo.dev, "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("runs only on an NVMe generic device"), "{}", stderr(&o));
}

#[test]
fn mounted_devices_are_never_written_by_any_engine() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let Some(mut lo) = Loop::new(&backing_file(dir.path(), 32 << 20), &[]) else { return };
    let dev = lo.dev.clone();
    if !lo.mount(&dev, &dir.path().join("mnt")) {
        return;
    }
    let before = lo.backing_bytes();
    for engine in ["psync", "aio", "uring:sqpoll"] {
        let o = nvmebench(&[
            "run",
            "--engine",
            engine,
            "--filename",
            &dev,
            "--rw",
            "randwrite",
            "--time",
            "1",
            "--allow-destroy",
        ]);
        assert_eq!(o.status.code(), Some(2), "{engine}");
        assert!(stderr(&o).contains("is mounted on"), "{engine}: {}", stderr(&o));
    }
    let o = nvmebench(&[
        "compare",
        "--engines",
        "psync,aio",
        "--filename",
        &dev,
        "--rw",
        "randwrite",
        "--time",
        "1",
        "--allow-destroy",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(lo.backing_bytes(), before);
}

#[test]
fn signatures_need_the_serial_number() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let img = backing_file(dir.path(), 32 << 20);
    let Some(lo) = Loop::new(&img, &[]) else { return };
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F", &lo.dev]).output().unwrap();
    assert!(mkfs.status.success());
    let before = lo.backing_bytes();
    let serial = format!("loop:{}", std::fs::canonicalize(&img).unwrap().display());

    let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randwrite", "--ios", "100", "--allow-destroy"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("holds an ext2/3/4 filesystem") && e.contains(&format!("--confirm-serial {serial}")), "{e}");
    let o = nvmebench(&[
        "run",
        "--filename",
        &lo.dev,
        "--rw",
        "randwrite",
        "--ios",
        "100",
        "--allow-destroy",
        "--confirm-serial",
        "wrong",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(lo.backing_bytes(), before, "refused runs write nothing");

    let o = nvmebench(&[
        "run",
        "--filename",
        &lo.dev,
        "--rw",
        "randwrite",
        "--ios",
        "100",
        "--allow-destroy",
        "--confirm-serial",
        &serial,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(lo.backing_bytes(), before);

    // A partition table is a signature too.
    let img2 = dir.path().join("mbr.img");
    std::fs::File::create(&img2).unwrap().set_len(16 << 20).unwrap();
    write_mbr(&img2, (16 << 20) / 512);
    let Some(lo2) = Loop::new(&img2, &[]) else { return };
    let o = nvmebench(&["run", "--filename", &lo2.dev, "--rw", "write", "--ios", "10", "--allow-destroy"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds an MBR partition table"), "{}", stderr(&o));
}

#[test]
fn several_devices_each_get_io_and_one_refused_device_refuses_all() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let sub = |n: &str| {
        let d = dir.path().join(n);
        std::fs::create_dir_all(&d).unwrap();
        backing_file(&d, 16 << 20)
    };
    let Some(a) = Loop::new(&sub("a"), &[]) else { return };
    let Some(mut b) = Loop::new(&sub("b"), &[]) else { return };
    let o = nvmebench(&[
        "run",
        "--filename",
        &a.dev,
        "--filename",
        &b.dev,
        "--rw",
        "randwrite",
        "--ios",
        "400",
        "--allow-destroy",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let t = j["results"]["targets"].as_array().unwrap();
    assert_eq!((t[0]["write"]["ios"].as_u64(), t[1]["write"]["ios"].as_u64()), (Some(200), Some(200)));
    assert_eq!(t[1]["path"], b.dev.as_str());

    // The same device by another name is one target.
    let link = dir.path().join("alias");
    std::os::unix::fs::symlink(&a.dev, &link).unwrap();
    let o = nvmebench(&["run", "--filename", &a.dev, "--filename", link.to_str().unwrap(), "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is the same target as"), "{}", stderr(&o));

    // One mounted device refuses the run: nothing is written to the other, no file is created.
    let dev_b = b.dev.clone();
    if !b.mount(&dev_b, &dir.path().join("mnt")) {
        return;
    }
    let before = a.backing_bytes();
    let newfile = dir.path().join("never.bin");
    let list = format!("{}:{}:{}", newfile.display(), a.dev, dev_b);
    let o =
        nvmebench(&["run", "--filename", &list, "--size", "1m", "--rw", "randwrite", "--time", "1", "--allow-destroy"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("{dev_b} is mounted on")), "{}", stderr(&o));
    assert_eq!(a.backing_bytes(), before, "the first device was not written");
    assert!(!newfile.exists(), "no file was created");
}

/// Trims on a block device: BLKDISCARD needs --allow-destroy as writes do, a trimmed range of a loop
/// device reads back as zeroes (the loop driver punches a hole in its backing file), and a device
/// whose queue takes no discards is refused up front, naming it.
#[test]
fn a_loop_device_trims_and_zeroes_and_refuses_when_it_cannot() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    let img = backing_file(dir.path(), 16 << 20);
    std::fs::write(&img, vec![0xa5u8; 16 << 20]).unwrap();
    let Some(lo) = Loop::new(&img, &[]) else { return };
    let queue = format!("/sys/block/{}/queue", lo.dev.trim_start_matches("/dev/"));
    let limit = |f: &str| std::fs::read_to_string(format!("{queue}/{f}")).unwrap_or_default().trim().to_string();
    if limit("discard_max_bytes") == "0" {
        skip(
            Need::HolePunching,
            &format!("{} takes no discards here (its backing filesystem punches no holes)", lo.dev),
        );
        return;
    }
    let before = lo.backing_bytes();
    let o = nvmebench(&["run", "--filename", &lo.dev, "--rw", "randtrim", "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("add --allow-destroy"), "{}", stderr(&o));
    assert_eq!(lo.backing_bytes(), before, "refused runs trim nothing");

    for engine in ["psync", "aio", "uring"] {
        let o = nvmebench(&[
            "run",
            "--engine",
            engine,
            "--filename",
            &lo.dev,
            "--rw",
            "trim",
            "--bs",
            "64k",
            "--size",
            "1m",
            "--ios",
            "16",
            "--allow-destroy",
            "--output",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["results"]["total"]["trim"]["ios"], 16, "{engine}");
    }
    let after = lo.backing_bytes();
    assert!(after[..1 << 20].iter().all(|&b| b == 0), "the trimmed MiB reads as zeroes");
    assert!(after[1 << 20..].iter().all(|&b| b == 0xa5), "nothing else was trimmed");

    if limit("write_zeroes_max_bytes") != "0" {
        let o = nvmebench(&[
            "run",
            "--engine",
            "aio",
            "--filename",
            &lo.dev,
            "--rw",
            "rw",
            "--rwmix",
            "read=50,write-zeroes=50",
            "--offset",
            "2m",
            "--size",
            "1m",
            "--ios",
            "200",
            "--allow-destroy",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("total write-zeroes"), "{}", stdout(&o));
        assert!(lo.backing_bytes()[2 << 20..(2 << 20) + 4096].iter().all(|&b| b == 0), "zeroed");
    }

    // A queue that takes no discards (the limit can be lowered to 0 through sysfs).
    if std::fs::write(format!("{queue}/discard_max_bytes"), "0").is_err() || limit("discard_max_bytes") != "0" {
        skip(Need::KernelFeature, &format!("cannot turn discards off on {}", lo.dev));
        return;
    }
    let before = lo.backing_bytes();
    let o = nvmebench(&[
        "run",
        "--filename",
        &lo.dev,
        "--rw",
        "randrw",
        "--rwmix",
        "read=90,trim=10",
        "--ios",
        "100",
        "--allow-destroy",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim(),
        format!(
            "nvmebench: {} does not support deallocation (trim); drop the trim share or run on a target that supports it",
            lo.dev
        )
    );
    assert_eq!(lo.backing_bytes(), before);
}

/// A file on a filesystem that cannot punch holes (trim) or zero ranges (write-zeroes) is refused
/// before anything is written, in one sentence naming the file and the filesystem: an existing
/// file keeps its bytes and times, a new one is not created, from the command line and from a
/// job file. ext2 (no extents) zeroes no ranges; vfat punches no holes, where the kernel has vfat
/// and mkfs.vfat is installed.
#[test]
fn file_systems_that_cannot_trim_or_zero_are_refused_up_front() {
    if !can_loop() {
        return;
    }
    let dir = scratch_dir();
    /// A filesystem, how to make it, the flags of a run it cannot take, the refusal, and the job
    /// file's `rw` lines for the same (fio has no write-zeroes, so only the trim case has one).
    struct Case {
        mkfs: &'static [&'static str],
        fs: &'static str,
        flags: &'static [&'static str],
        why: &'static str,
        job_rw: Option<&'static str>,
    }
    let cases = [
        Case {
            mkfs: &["mkfs.ext2", "-q", "-F"],
            fs: "ext2",
            flags: &["--rw", "randrw", "--rwmix", "read=50,write-zeroes=50"],
            why: "cannot zero ranges (write-zeroes); put the file on a filesystem that can (ext4, xfs or btrfs), or run without write-zeroes",
            job_rw: None,
        },
        Case {
            mkfs: &["mkfs.vfat"],
            fs: "vfat",
            flags: &["--rw", "randtrim"],
            why: "cannot punch holes (trim); put the file on a filesystem that can (ext4, xfs, btrfs or tmpfs), or run without trims",
            job_rw: Some("rw=randtrim"),
        },
    ];
    for Case { mkfs, fs, flags, why, job_rw } in cases {
        if !Command::new("which").arg(mkfs[0]).output().is_ok_and(|o| o.status.success()) {
            skip(Need::Mkfs, &format!("{fs}: no {}", mkfs[0]));
            continue;
        }
        let img = dir.path().join(format!("{fs}.img"));
        std::fs::File::create(&img).unwrap().set_len(64 << 20).unwrap();
        let Some(mut lo) = Loop::new(&img, &[]) else { return };
        let mnt = dir.path().join(fs);
        let dev = lo.dev.clone();
        if !lo.mount_with(&dev, &mnt, mkfs) {
            skip(Need::KernelFeature, &format!("{fs}: this kernel cannot mount it"));
            continue;
        }
        let old = make_file(&mnt, "old.dat", 1 << 20);
        let (before, mtime) = (std::fs::read(&old).unwrap(), std::fs::metadata(&old).unwrap().modified().unwrap());
        let listing = || {
            let mut l: Vec<String> =
                std::fs::read_dir(&mnt).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
            l.sort();
            l
        };
        let files = listing();
        let new = mnt.join("new.dat");
        let job = dir.path().join(format!("{fs}.fio"));
        let (o_s, n_s, j_s) = (old.to_str().unwrap(), new.to_str().unwrap(), job.to_str().unwrap());
        let mut runs = vec![
            ([&["run", "--filename", o_s][..], flags, &["--time", "1"]].concat(), o_s),
            ([&["run", "--filename", n_s, "--size", "1m"][..], flags, &["--time", "1"]].concat(), n_s),
        ];
        if let Some(rw) = job_rw {
            let text = format!("[j]\nfilename={}\nsize=1m\n{rw}\ntime_based\nruntime=1\n", new.display());
            std::fs::write(&job, text).unwrap();
            runs.push((vec!["run", j_s], n_s));
        }
        for (args, path) in runs {
            let o = nvmebench(&args);
            assert_eq!(o.status.code(), Some(2), "{fs} {args:?}: {}", stderr(&o));
            let e = stderr(&o);
            assert!(e.contains(&format!("{path} is on a {fs} filesystem, which {why}")), "{e}");
            assert_eq!(e.trim().lines().count(), 1, "{e}");
        }
        assert_eq!(std::fs::read(&old).unwrap(), before, "{fs}: nothing written");
        assert_eq!(std::fs::metadata(&old).unwrap().modified().unwrap(), mtime, "{fs}: not even touched");
        assert_eq!(listing(), files, "{fs}: no file created, no probe left behind");
        // The operations the filesystem does take still run.
        let o = nvmebench(&["run", "--filename", o_s, "--rw", "randrw", "--ios", "200"]);
        assert_eq!(o.status.code(), Some(0), "{fs}: {}", stderr(&o));
    }
}
