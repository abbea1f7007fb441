//! `nvmebench devices`: what a transport ID (or the local PCIe bus) offers to the SPDK engine.
//!
//! Lists each controller's transport, address, model, serial, firmware and NUMA node, and each
//! namespace's LBA size and capacity, as text or JSON. Without `--trid` it looks for NVMe functions
//! on the local PCIe bus that are bound to a userspace driver (vfio-pci, uio), and names those still
//! on the kernel's nvme driver so the user knows what to bind.

use crate::cli::DevicesArgs;
use crate::config::ConfigError;
use crate::run::SetupError;

/// One NVMe PCI function as sysfs sees it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PciFunction {
    pub bdf: String,
    pub driver: Option<String>,
}

/// NVMe PCI functions (class 01:08:02) on this machine.
pub fn nvme_pci_functions() -> Vec<PciFunction> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/sys/bus/pci/devices").into_iter().flatten().flatten() {
        let p = entry.path();
        let class = std::fs::read_to_string(p.join("class")).unwrap_or_default();
        if class.trim() != "0x010802" {
            continue;
        }
        let driver = std::fs::read_link(p.join("driver"))
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
        out.push(PciFunction { bdf: entry.file_name().to_string_lossy().into_owned(), driver });
    }
    out.sort_by(|a, b| a.bdf.cmp(&b.bdf));
    out
}

/// Whether SPDK can drive a function bound to `driver`.
pub fn userspace_driver(driver: Option<&str>) -> bool {
    matches!(driver, Some("vfio-pci" | "uio_pci_generic" | "igb_uio"))
}

/// Runs `nvmebench devices`.
pub fn devices_command(args: &DevicesArgs) -> anyhow::Result<()> {
    #[cfg(not(feature = "spdk"))]
    {
        let _ = args;
        Err(SetupError::Config(ConfigError::NotCompiledIn("spdk")).into())
    }
    #[cfg(feature = "spdk")]
    {
        list(args)
    }
}

#[cfg(feature = "spdk")]
fn list(args: &DevicesArgs) -> anyhow::Result<()> {
    use crate::engine::spdk::ctrlr::{Controller, TridSpec};
    use crate::engine::spdk::env::{EnvOptions, SpdkEnv};
    use crate::report::format_count;
    use crate::units::format_bytes_human;
    use std::fmt::Write;

    let trids: Vec<TridSpec> = if args.spdk.trids.is_empty() {
        let fns = nvme_pci_functions();
        let usable: Vec<_> = fns.iter().filter(|f| userspace_driver(f.driver.as_deref())).collect();
        if usable.is_empty() {
            let on_kernel: Vec<String> =
                fns.iter().map(|f| format!("{} ({})", f.bdf, f.driver.as_deref().unwrap_or("no driver"))).collect();
            let hint = if on_kernel.is_empty() {
                "there are no NVMe PCI functions on this machine; pass --trid for a fabrics target".to_string()
            } else {
                format!(
                    "NVMe functions {} are not bound to a userspace driver; bind one with scripts/nvme-bind.sh bind BDF, or pass --trid",
                    on_kernel.join(", ")
                )
            };
            return Err(SetupError::Config(ConfigError::Engine(format!("no NVMe controller for SPDK: {hint}"))).into());
        }
        usable.iter().map(|f| TridSpec { trid: format!("trtype:PCIe traddr:{}", f.bdf), nsid: None }).collect()
    } else {
        args.spdk
            .trids
            .iter()
            .map(|t| TridSpec::parse(t))
            .collect::<Result<_, _>>()
            .map_err(|e| SetupError::Config(ConfigError::Engine(e)))?
    };
    let core = core_affinity::get_core_ids().and_then(|c| c.first().map(|c| c.id)).unwrap_or(0);
    let env_opts = EnvOptions {
        cores: vec![core],
        mem_size_mb: args.spdk.mem_size,
        shm_id: args.spdk.shm_id,
        no_huge: args.spdk.no_huge,
        iova_mode: args.spdk.iova_mode.clone(),
        no_pci: trids.iter().all(|t| !t.trid.to_ascii_lowercase().contains("trtype:pcie")),
        log_level: args.spdk.spdk_log.clone(),
        single_file_segments: args.spdk.single_file_segments
            || EnvOptions::needs_single_file_segments(trids.iter().map(|t| t.trid.as_str())),
    };
    let env = SpdkEnv::init(&env_opts).map_err(|e| SetupError::Config(ConfigError::Engine(e.to_string())))?;
    let mut infos = Vec::new();
    for t in &trids {
        let c = Controller::connect(env.clone(), t, false)
            .map_err(|e| SetupError::Config(ConfigError::Engine(e.to_string())))?;
        infos.push(c.info.clone());
    }
    let out = if args.json {
        serde_json::to_string_pretty(&infos).expect("plain data serialises") + "\n"
    } else {
        let mut s = String::new();
        for c in &infos {
            let numa = c.numa_node.map_or("-".to_string(), |n| n.to_string());
            let _ = writeln!(
                s,
                "{} {}  model \"{}\"  serial {}  firmware {}  numa {numa}\n  trid: {}",
                c.transport, c.address, c.model, c.serial, c.firmware, c.trid
            );
            if c.namespaces.is_empty() {
                let _ = writeln!(s, "  no active namespaces");
            }
            for ns in &c.namespaces {
                let _ = writeln!(
                    s,
                    "  ns:{}  {}-byte blocks{}  {} blocks  {}  max transfer {}{}",
                    ns.nsid,
                    ns.sector_bytes,
                    if ns.metadata_bytes > 0 { format!(" (+{} metadata)", ns.metadata_bytes) } else { String::new() },
                    format_count(ns.sectors as f64),
                    format_bytes_human(ns.size_bytes() as f64),
                    crate::units::format_size(u64::from(ns.max_transfer_bytes)),
                    if ns.io_boundary_bytes > 0 {
                        format!("  I/O boundary {}", crate::units::format_size(u64::from(ns.io_boundary_bytes)))
                    } else {
                        String::new()
                    }
                );
            }
        }
        s
    };
    print!("{out}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userspace_drivers() {
        assert!(userspace_driver(Some("vfio-pci")));
        assert!(userspace_driver(Some("uio_pci_generic")));
        assert!(!userspace_driver(Some("nvme")));
        assert!(!userspace_driver(None));
    }

    #[test]
    fn pci_scan_does_not_fail_without_devices() {
        // Whatever this machine has, every entry found is an NVMe function with a BDF.
        for f in nvme_pci_functions() {
            assert_eq!(f.bdf.matches(':').count(), 2, "{f:?}");
        }
    }
}
