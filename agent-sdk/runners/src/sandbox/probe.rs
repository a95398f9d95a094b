//! Finding a bwrap that works: once per process, by running `bwrap --ro-bind / /
//! --unshare-user --unshare-pid --unshare-net true` — the namespaces every sandboxed command
//! gets — so that a bwrap that is installed but cannot create them (a container without user
//! namespaces, a kernel or a setuid bwrap that forbids them) fails there, not in a run.

use std::path::PathBuf;
use std::sync::{Once, OnceLock};

/// The variable naming the bwrap to use instead of the one on `PATH` (`/nonexistent`
/// simulates a machine without it).
pub const BWRAP_ENV: &str = "HUDDLE_BWRAP";

/// The working bwrap, or why there is none (the probe runs once per process).
pub fn probe() -> Result<PathBuf, String> {
    static PROBED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PROBED.get_or_init(run_probe).clone()
}

fn run_probe() -> Result<PathBuf, String> {
    let bwrap = locate()?;
    let out = std::process::Command::new(&bwrap)
        .args(["--ro-bind", "/", "/", "--unshare-user", "--unshare-pid"])
        .args(["--unshare-net", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("bubblewrap ({}) cannot run: {e}", bwrap.display()))?;
    if !out.status.success() {
        return Err(format!(
            "bubblewrap ({}) cannot create namespaces: {}",
            bwrap.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(bwrap)
}

fn locate() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(BWRAP_ENV).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "bubblewrap (bwrap) is not installed: {BWRAP_ENV}={} does not exist",
                path.display()
            ))
        };
    }
    on_path("bwrap").ok_or_else(|| {
        "bubblewrap (bwrap) is not installed (not on PATH; apt-get install bubblewrap)".to_string()
    })
}

/// `program` on `PATH`, if it is there.
pub(crate) fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Says on stderr, once per process, that `auto` runs without a sandbox and why.
pub(crate) fn say_fallback_once(why: &str) {
    static SAID: Once = Once::new();
    SAID.call_once(|| eprintln!("huddle: tests run without a sandbox (--sandbox auto): {why}"));
}
