//! What this binary is, for `nvmebench --version`: the crate's version, the git revision it was
//! built from and whether SPDK is compiled in (and which release). `build.rs` finds the revision
//! and the SPDK release; nothing here reads anything at run time.

/// The git revision of the build (`696e4b3e9285`, with `-dirty` when the binary's sources differed
/// from it), or `None` when the tree did not tell (a copy without `.git` or git's archive marks).
pub fn revision() -> Option<&'static str> {
    Some(env!("NVMEBENCH_REVISION")).filter(|r| !r.is_empty())
}

/// The SPDK release the binary was built against (`25.09`), when the `spdk` feature is on.
pub fn spdk() -> Option<&'static str> {
    cfg!(feature = "spdk").then_some(env!("NVMEBENCH_SPDK_VERSION"))
}

/// The line `--version` prints after the name: `0.1.0 (git 696e4b3e9285, with SPDK 25.09)`.
pub fn long() -> String {
    let rev = revision().map_or_else(|| "git revision unknown".to_string(), |r| format!("git {r}"));
    let spdk = match spdk() {
        None => "without SPDK".to_string(),
        Some("") => "with SPDK".to_string(),
        Some(v) => format!("with SPDK {v}"),
    };
    format!("{} ({rev}, {spdk})", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_names_the_revision_and_spdk() {
        let v = super::long();
        let rev = super::revision().map_or("git revision unknown".to_string(), |r| format!("git {r}"));
        assert!(v.starts_with(&format!("{} ({rev}, ", env!("CARGO_PKG_VERSION"))), "{v}");
        assert!(v.ends_with(if cfg!(feature = "spdk") { ")" } else { ", without SPDK)" }), "{v}");
        assert_eq!(super::spdk().is_some(), v.contains("with SPDK"), "{v}");
    }
}
