//! Signals to a service's process group: it is its own group's leader, so the group goes
//! whole (a sandbox's processes and a service's children with it).

use std::time::Duration;

pub(super) enum Signal {
    Term,
    Kill,
}

/// Waits (up to `limit`) until no process is left in `group`: SIGKILL is delivered at once,
/// but the processes of a sandbox's PID namespace end a moment after its outer process.
pub(super) async fn group_gone(group: Option<u32>, limit: Duration) {
    #[cfg(unix)]
    if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()) {
        let deadline = tokio::time::Instant::now() + limit;
        let pgid = nix::unistd::Pid::from_raw(pid);
        while nix::sys::signal::killpg(pgid, None).is_ok() && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    #[cfg(not(unix))]
    let _ = (group, limit);
}

pub(super) fn signal(group: Option<u32>, sig: Signal) {
    #[cfg(unix)]
    if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()) {
        let sig = match sig {
            Signal::Term => nix::sys::signal::Signal::SIGTERM,
            Signal::Kill => nix::sys::signal::Signal::SIGKILL,
        };
        // ESRCH (already gone) is expected.
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), sig);
    }
    #[cfg(not(unix))]
    let _ = (group, sig);
}
