//! Links SPDK into the binary and tests when the `spdk` feature is on, and names the build for
//! `nvmebench --version`.
//!
//! `spdk-sys` finds SPDK and exports its link line; it is applied here, around `--no-as-needed`,
//! because libraries that only register themselves from constructors (SPDK's TCP socket layer,
//! DPDK's mempool and PCI bus drivers) would otherwise be dropped by the linker's `--as-needed`.
//!
//! The build's name is the git revision of the tree (see `build/revision.rs` for where it comes
//! from) and the SPDK it was built against, as `NVMEBENCH_REVISION` and `NVMEBENCH_SPDK_VERSION`
//! (empty when unknown or without SPDK) in the crate's environment.

#[path = "build/revision.rs"]
mod revision;

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_SPDK_LINK_ARGS");
    if let Ok(args) = std::env::var("DEP_SPDK_LINK_ARGS") {
        for a in args.split_whitespace() {
            println!("cargo:rustc-link-arg={a}");
        }
    }

    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&dir);
    println!("cargo:rerun-if-env-changed=NVMEBENCH_REVISION");
    for p in revision::SOURCES.iter().chain(&[".revision", ".cargo_vcs_info.json"]) {
        if dir.join(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    for p in revision::git_watch(dir) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let env = std::env::var("NVMEBENCH_REVISION").ok();
    let rev = revision::revision(dir, env.as_deref()).unwrap_or_default();
    println!("cargo:rustc-env=NVMEBENCH_REVISION={rev}");
    println!("cargo:rerun-if-env-changed=DEP_SPDK_VERSION");
    println!("cargo:rustc-env=NVMEBENCH_SPDK_VERSION={}", std::env::var("DEP_SPDK_VERSION").unwrap_or_default());
}
