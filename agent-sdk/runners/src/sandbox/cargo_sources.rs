//! Cargo unpacks a downloaded dependency (`$CARGO_HOME/registry/cache/…/x.crate`) into
//! `registry/src` the first time a build needs it, and its automatic cleaning removes unpacked
//! sources a month after their last recorded use. A sandboxed run shows `CARGO_HOME`
//! read-only, so there cargo can neither unpack nor record a use: a project whose locked
//! dependencies are downloaded but not (or no longer) unpacked failed with "failed to unpack
//! package … Read-only file system", whatever its tests.
//!
//! Before a sandboxed cargo run, [`unpack_downloaded`] has cargo unpack what is already
//! downloaded: `cargo fetch --offline`, outside the sandbox. It downloads nothing (what is
//! missing stays missing, and the run says so as before) and runs no code of the project's (a
//! fetch builds nothing: no build script, no proc macro). It runs from `/` with huddle's own
//! environment, not the run's, so neither the project's `.cargo/config.toml` (looked up from
//! the working directory) nor its `rust-toolchain.toml` nor a variable a run sets (a
//! `RUSTC_WRAPPER`) applies: those could name a program to run outside the sandbox.

use crate::process::{Invocation, Limits};
use std::path::Path;
use std::time::Duration;

/// How long the unpacking may take: it reads the lockfile and local files only.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Unpacks the downloaded, locked dependencies of the cargo project at `project` (canonical)
/// that cargo's registry lacks unpacked. Best effort: a failure is the run's to report.
pub async fn unpack_downloaded(project: &Path) {
    let manifest = project.join("Cargo.toml");
    if !manifest.is_file() {
        return;
    }
    let Some(cargo) = crate::tools::find_program("cargo", &crate::tools::search_path(&[])) else {
        return;
    };
    let mut inv = Invocation::new(cargo, "/");
    inv.arg("fetch")
        .arg("--offline")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(&manifest);
    let limits = Limits {
        timeout: TIMEOUT,
        grace: Duration::from_secs(2),
    };
    // Its outcome is not looked at: a dependency it could not unpack fails the run, which
    // reports cargo's own message.
    let _ = crate::process::run(&inv, limits).await;
}
