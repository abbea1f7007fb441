//! Raw FFI bindings to an installed SPDK.
//!
//! This crate owns every `extern "C"` declaration nvmebench uses from SPDK and nothing else: no safe
//! wrappers (those live in `nvmebench::engine::spdk`). It is only built when the root package's `spdk`
//! feature asks for it. The bindings are generated at build time (`build.rs`) from the headers of the
//! SPDK found through `SPDK_DIR` or pkg-config; no SPDK header, source or generated binding is ever
//! committed. SPDK 24.01 and newer are supported: every `*_opts` struct is passed with its
//! `opts_size`, so an older or newer library reads only the fields it knows.

#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code, unsafe_op_in_unsafe_fn, clippy::all)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

unsafe extern "C" {
    /// The version string of the SPDK headers this crate was generated from.
    pub fn nvmebench_shim_version() -> *const core::ffi::c_char;
    /// The raw 16-bit status field of a completion (phase, SC, SCT, CRD, M, DNR).
    pub fn nvmebench_shim_cpl_status(cpl: *const spdk_nvme_cpl) -> u16;
    /// The controller's NUMA node, or -1 if unknown (any SPDK version).
    pub fn nvmebench_shim_ctrlr_numa_id(ctrlr: *mut spdk_nvme_ctrlr) -> i32;
    /// Initialises the SPDK environment across SPDK versions; NULL pointers and negative numbers mean
    /// "SPDK's default". `single_file_segments` is `spdk_env_opts.hugepage_single_segments`;
    /// `env_context` extra DPDK EAL arguments. Returns spdk_env_init's result (0 or a negative errno).
    pub fn nvmebench_shim_env_init(
        name: *const core::ffi::c_char,
        core_mask: *const core::ffi::c_char,
        main_core: i32,
        shm_id: i32,
        mem_size_mb: i32,
        no_huge: bool,
        no_pci: bool,
        iova_mode: *const core::ffi::c_char,
        single_file_segments: bool,
        env_context: *const core::ffi::c_char,
    ) -> i32;
    /// Copies the controller's model (40), serial (20) and firmware (8) strings, NUL-terminated.
    pub fn nvmebench_shim_ctrlr_ids(
        ctrlr: *mut spdk_nvme_ctrlr,
        mn: *mut core::ffi::c_char,
        sn: *mut core::ffi::c_char,
        fr: *mut core::ffi::c_char,
    );
    /// The controller's ONCS bits nvmebench uses: bit 0 Dataset Management, bit 1 Write Zeroes.
    pub fn nvmebench_shim_ctrlr_oncs(ctrlr: *mut spdk_nvme_ctrlr) -> u32;
    /// Sets `spdk_nvme_ctrlr_opts.enable_interrupts`; false where this SPDK (before 25.05) has none.
    pub fn nvmebench_shim_ctrlr_opts_enable_interrupts(opts: *mut spdk_nvme_ctrlr_opts) -> bool;
    /// Whether the attached controller's interrupts are enabled.
    pub fn nvmebench_shim_ctrlr_interrupts(ctrlr: *mut spdk_nvme_ctrlr) -> bool;
    /// `spdk_fd_group_wait` on the poll group's fd group: sleeps until a queue pair's interrupt or
    /// `timeout_ns` (-1: none; a timeout finer than whole milliseconds through `ppoll` on the fd
    /// group's epoll descriptor), processing the completions of those that signalled; events
    /// handled, 0 on a timeout, or a negative errno (-ENOTSUP before SPDK 25.05).
    pub fn nvmebench_shim_poll_group_wait(group: *mut spdk_nvme_poll_group, timeout_ns: i64) -> i32;
    /// Dataset Management deallocating `lba_count` blocks from `lba` (one range, which SPDK copies);
    /// spdk_nvme_ns_cmd_dataset_management's result.
    pub fn nvmebench_shim_ns_cmd_deallocate(
        ns: *mut spdk_nvme_ns,
        qpair: *mut spdk_nvme_qpair,
        lba: u64,
        lba_count: u32,
        cb_fn: spdk_nvme_cmd_cb,
        cb_arg: *mut core::ffi::c_void,
    ) -> i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layouts nvmebench relies on: opts structs are passed with their size, and the completion
    /// entry is the 16 bytes the NVMe spec defines.
    #[test]
    fn layouts() {
        assert_eq!(core::mem::size_of::<spdk_nvme_cpl>(), 16);
        assert!(core::mem::size_of::<spdk_nvme_io_qpair_opts>() > 0);
    }

    #[test]
    fn version_is_known() {
        // SAFETY: the shim returns a pointer to a static NUL-terminated string.
        let v = unsafe { core::ffi::CStr::from_ptr(nvmebench_shim_version()) };
        assert!(v.to_string_lossy().starts_with("SPDK v"), "{v:?}");
    }
}
