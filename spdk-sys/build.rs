//! Finds an installed SPDK, generates bindings for the part of its API nvmebench uses, and tells
//! cargo how to link it.
//!
//! Search order: `SPDK_DIR` (an install prefix: `$SPDK_DIR/lib/pkgconfig` is searched first), then
//! pkg-config's own path (`PKG_CONFIG_PATH`). Linking is shared, against SPDK's `.so` files; the
//! libraries that only register themselves from constructors (the TCP socket layer, DPDK's mempool
//! and PCI bus drivers) must not be dropped by `--as-needed`, so the full list is also exported as
//! `DEP_SPDK_LINK_ARGS` for the final binary's build script to pass inside `--no-as-needed`.

use std::env;
use std::path::PathBuf;

const MODULES: [&str; 2] = ["spdk_nvme", "spdk_env_dpdk"];

/// The functions nvmebench calls; bindgen pulls in the types they need and nothing else.
const FUNCTIONS: &[&str] = &[
    "spdk_env_fini",
    "spdk_log_set_print_level",
    "spdk_log_get_print_level",
    "spdk_zmalloc",
    "spdk_free",
    "spdk_nvme_transport_id_parse",
    "spdk_nvme_transport_available_by_name",
    "spdk_nvme_transport_id_compare",
    "spdk_nvme_trid_populate_transport",
    "spdk_nvme_transport_id_trtype_str",
    "spdk_nvme_ctrlr_get_default_ctrlr_opts",
    "spdk_nvme_connect",
    "spdk_nvme_probe",
    "spdk_nvme_detach",
    "spdk_nvme_ctrlr_get_transport_id",
    "spdk_nvme_ctrlr_get_first_active_ns",
    "spdk_nvme_ctrlr_get_next_active_ns",
    "spdk_nvme_ctrlr_get_ns",
    "spdk_nvme_ctrlr_get_default_io_qpair_opts",
    "spdk_nvme_ctrlr_alloc_io_qpair",
    "spdk_nvme_ctrlr_free_io_qpair",
    "spdk_nvme_ctrlr_connect_io_qpair",
    "spdk_nvme_poll_group_create",
    "spdk_nvme_poll_group_add",
    "spdk_nvme_poll_group_all_connected",
    "spdk_nvme_poll_group_process_completions",
    "spdk_nvme_poll_group_destroy",
    "spdk_nvme_qpair_process_completions",
    "spdk_nvme_ns_get_sector_size",
    "spdk_nvme_ns_get_num_sectors",
    "spdk_nvme_ns_get_md_size",
    "spdk_nvme_ns_get_max_io_xfer_size",
    "spdk_nvme_ns_get_optimal_io_boundary",
    "spdk_nvme_ns_cmd_read",
    "spdk_nvme_qpair_add_cmd_error_injection",
    "spdk_nvme_ns_cmd_write",
    "spdk_nvme_ns_cmd_write_zeroes",
    "spdk_nvme_ns_cmd_flush",
    "spdk_nvme_ctrlr_reset",
    "spdk_nvme_ctrlr_process_admin_completions",
    "spdk_nvme_ctrlr_get_opts",
    "spdk_nvme_ctrlr_cmd_get_log_page",
    "spdk_nvme_ctrlr_reconnect_io_qpair",
    "nvmebench_shim_.*",
];

fn fail(tried: &str, why: &str) -> ! {
    eprintln!();
    eprintln!("error: nvmebench's `spdk` feature needs an installed SPDK, and none was found.");
    eprintln!("  tried: {tried}");
    eprintln!("  pkg-config said: {why}");
    eprintln!("  fix: install SPDK following its own documentation (./configure --with-shared; make; make install),");
    eprintln!("       then set SPDK_DIR to its install prefix (e.g. SPDK_DIR=/usr/local) or add its lib/pkgconfig");
    eprintln!("       directory to PKG_CONFIG_PATH. The default build (without --features spdk) does not need SPDK.");
    std::process::exit(1);
}

/// SPDK's release as its `SPDK_VERSION_STRING` spells it, without the "SPDK v" (`25.09`,
/// `24.01.1`, `25.09-pre`), read from its installed `spdk/version.h`.
fn release(header: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(header).ok()?;
    let define = |name: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name)).then(|| w.collect::<Vec<_>>().join(" "))
        })
    };
    let num = |name: &str| define(name)?.parse::<u32>().ok();
    let (major, minor, patch) = (num("SPDK_VERSION_MAJOR")?, num("SPDK_VERSION_MINOR")?, num("SPDK_VERSION_PATCH")?);
    let suffix = define("SPDK_VERSION_SUFFIX").unwrap_or_default();
    let patch = if patch == 0 { String::new() } else { format!(".{patch}") };
    Some(format!("{major}.{minor:02}{patch}{}", suffix.trim_matches('"')))
}

fn main() {
    println!("cargo:rerun-if-env-changed=SPDK_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=shim.c");

    let mut tried = Vec::new();
    if let Ok(dir) = env::var("SPDK_DIR") {
        let pc = PathBuf::from(&dir).join("lib/pkgconfig");
        tried.push(format!("SPDK_DIR={dir} ({})", pc.display()));
        let old = env::var("PKG_CONFIG_PATH").unwrap_or_default();
        // SAFETY: build scripts run single-threaded, so nothing reads the environment concurrently.
        unsafe { env::set_var("PKG_CONFIG_PATH", format!("{}:{old}", pc.display())) };
    }
    tried.push(format!(
        "pkg-config {} with PKG_CONFIG_PATH={}",
        MODULES.join(" "),
        env::var("PKG_CONFIG_PATH").unwrap_or_else(|_| "(unset)".into())
    ));
    let tried = tried.join("; ");

    let mut cfg = pkg_config::Config::new();
    cfg.cargo_metadata(false);
    let mut include_paths = Vec::new();
    let mut link_paths = Vec::new();
    let mut libs = Vec::new();
    for m in MODULES {
        let lib = cfg.probe(m).unwrap_or_else(|e| fail(&tried, &e.to_string().replace('\n', " ")));
        include_paths.extend(lib.include_paths);
        link_paths.extend(lib.link_paths);
        libs.extend(lib.libs);
    }
    // System libraries SPDK's shared objects use without recording them (OpenSSL, uuid, aio, ...).
    let sys = pkg_config::Config::new()
        .cargo_metadata(false)
        .statik(true)
        .probe("spdk_syslibs")
        .unwrap_or_else(|e| fail(&tried, &e.to_string().replace('\n', " ")));
    include_paths.sort();
    include_paths.dedup();
    // `DEP_SPDK_VERSION` for the binary's build script: `nvmebench --version` names the release.
    if let Some(v) = include_paths.iter().find_map(|p| release(&p.join("spdk/version.h"))) {
        println!("cargo:version={v}");
    }
    link_paths.sort();
    link_paths.dedup();
    let mut seen = std::collections::HashSet::new();
    libs.retain(|l| seen.insert(l.clone()));

    for p in &link_paths {
        println!("cargo:rustc-link-search=native={}", p.display());
    }
    for l in &libs {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
    for l in &sys.libs {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
    let mut args: Vec<String> = link_paths.iter().map(|p| format!("-L{}", p.display())).collect();
    args.extend(link_paths.iter().map(|p| format!("-Wl,-rpath,{}", p.display())));
    args.push("-Wl,--no-as-needed".into());
    args.extend(libs.iter().map(|l| format!("-l{l}")));
    args.push("-Wl,--as-needed".into());
    println!("cargo:link_args={}", args.join(" "));

    // static inline helpers get a real symbol through a small C shim.
    let mut cc = cc::Build::new();
    cc.file("shim.c").warnings(true);
    for p in &include_paths {
        cc.include(p);
    }
    cc.compile("spdk_shim");

    let mut b = bindgen::Builder::default()
        .header("wrapper.h")
        .allowlist_recursively(true)
        .derive_default(true)
        .layout_tests(true)
        .generate_comments(false)
        .prepend_enum_name(false)
        // Packed spec structures with bitfields that bindgen cannot express in Rust; nvmebench reads
        // what it needs from them through the C shim.
        .opaque_type("spdk_nvme_cmd")
        .opaque_type("spdk_nvme_cmd_cdw.*")
        .opaque_type("spdk_nvme_feat_.*")
        .opaque_type("spdk_nvme_cpl")
        .opaque_type("spdk_nvme_ctrlr_data")
        .opaque_type("spdk_nvme_ns_data")
        .opaque_type("spdk_nvme_status")
        .allowlist_var("SPDK_ENV_.*")
        .allowlist_type("spdk_log_level")
        .allowlist_var("SPDK_MALLOC_.*")
        .allowlist_var("SPDK_NVME_IO_FLAGS_.*")
        .allowlist_var("SPDK_NVMF_.*_MAX_LEN");
    for f in FUNCTIONS {
        b = b.allowlist_function(f);
    }
    for p in &include_paths {
        b = b.clang_arg(format!("-I{}", p.display()));
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    b.generate()
        .unwrap_or_else(|e| fail(&tried, &format!("headers found, but bindgen failed: {e} (is libclang installed?)")))
        .write_to_file(out.join("bindings.rs"))
        .expect("OUT_DIR is writable");
}
