//! Links SPDK into the binary and tests when the `spdk` feature is on.
//!
//! `spdk-sys` finds SPDK and exports its link line; it is applied here, around `--no-as-needed`,
//! because libraries that only register themselves from constructors (SPDK's TCP socket layer,
//! DPDK's mempool and PCI bus drivers) would otherwise be dropped by the linker's `--as-needed`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_SPDK_LINK_ARGS");
    if let Ok(args) = std::env::var("DEP_SPDK_LINK_ARGS") {
        for a in args.split_whitespace() {
            println!("cargo:rustc-link-arg={a}");
        }
    }
}
