//! Raw FFI bindings to an installed SPDK.
//!
//! This crate owns every `extern "C"` declaration nvmebench uses from SPDK and nothing else: no safe
//! wrappers (those live in `nvmebench::engine::spdk`). It is only built when the root package's `spdk`
//! feature asks for it. The bindings are generated at build time from the headers of the SPDK found
//! through `SPDK_DIR` or pkg-config; no SPDK header, source or generated binding is ever committed.
//!
//! Until the SPDK engine lands this crate is an empty shell, so that the workspace layout is final.
