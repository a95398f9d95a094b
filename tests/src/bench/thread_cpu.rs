//! A process's CPU time to the nanosecond, summed over its threads' `/proc/PID/task/TID/schedstat`
//! (time on a core, user and kernel). `/proc/PID/stat` counts in ticks of 10 ms, too coarse for
//! a phase of a few hundred requests at tens of microseconds each.
//!
//! Each thread is compared with itself: a thread born during the phase counts from zero, one
//! that ended during it is lost. The daemon's threads that end are the blocking pool's, which
//! exit after ten idle seconds, so a phase shorter than that loses nothing it ran.

use std::collections::HashMap;

/// Nanoseconds on a core so far, per living thread of `pid`.
fn per_thread_ns(pid: u32) -> HashMap<u32, u64> {
    per_thread_ns_named(pid, None)
}

/// [`per_thread_ns`] of the threads named `name` (`/proc/PID/task/TID/comm`), or of all.
fn per_thread_ns_named(pid: u32, name: Option<&str>) -> HashMap<u32, u64> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return HashMap::new();
    };
    tasks
        .filter_map(|e| {
            let tid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            if let Some(name) = name {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
                if comm.trim_end() != name {
                    return None;
                }
            }
            let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
            let ns = stat.split_whitespace().next()?.parse().ok()?;
            Some((tid, ns))
        })
        .collect()
}

/// Nanoseconds the calling thread has spent on a core (`/proc/thread-self/schedstat`).
pub fn this_thread_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Started before a phase; [`ThreadCpu::elapsed_ns`] after it.
pub struct ThreadCpu {
    pid: u32,
    start: HashMap<u32, u64>,
}

impl ThreadCpu {
    pub fn start(pid: u32) -> ThreadCpu {
        ThreadCpu {
            pid,
            start: per_thread_ns(pid),
        }
    }

    /// CPU nanoseconds the process's threads ran since [`ThreadCpu::start`].
    pub fn elapsed_ns(&self) -> u64 {
        self.since_start(per_thread_ns(self.pid))
    }

    /// [`ThreadCpu::elapsed_ns`] of the threads named `name` alone (`huddle-writer`).
    pub fn elapsed_ns_of(&self, name: &str) -> u64 {
        self.since_start(per_thread_ns_named(self.pid, Some(name)))
    }

    fn since_start(&self, now: HashMap<u32, u64>) -> u64 {
        now.into_iter()
            .map(|(tid, ns)| ns.saturating_sub(self.start.get(&tid).copied().unwrap_or(0)))
            .sum()
    }
}
