//! CPU use read from `/proc` across one phase of a benchmark: PostgreSQL's (the postmaster,
//! its living backends, and the backends that already exited, which the postmaster reaped and
//! so counts as its children's time) and the whole machine's, as shares of every core. A share
//! well below one for the database while huddle runs is the headroom the replica figures need.

use std::time::Instant;

/// Clock ticks per second of `/proc` times (`getconf CLK_TCK`; 100 on Linux).
const TICKS: f64 = 100.0;

/// The fields of `/proc/PID/stat` after the command name (which may hold spaces): index 0
/// is the state, 1 the parent, 11–14 utime, stime, cutime, cstime.
fn stat_fields(pid: u32) -> Option<Vec<f64>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    Some(
        rest.split_whitespace()
            .map(|f| f.parse::<f64>().unwrap_or(0.0))
            .collect(),
    )
}

/// CPU seconds of `root` and its children, living and reaped.
pub fn tree_cpu_seconds(root: u32) -> f64 {
    let Some(root_fields) = stat_fields(root) else {
        return 0.0;
    };
    let own: f64 = root_fields.get(11..15).map_or(0.0, |t| t.iter().sum());
    let children: f64 = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat_fields)
        .filter(|f| f.get(1).copied() == Some(f64::from(root)))
        .map(|f| f.get(11..13).map_or(0.0, |t| t.iter().sum()))
        .sum();
    (own + children) / TICKS
}

/// (busy, total) ticks of every core, from the first line of `/proc/stat`.
fn machine_ticks() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let n: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    let at = |i: usize| n.get(i).copied().unwrap_or(0.0);
    // user nice system idle iowait irq softirq steal
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    (busy, busy + at(3) + at(4))
}

/// Shares of all cores over one phase (1.0 = every core busy throughout).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuShares {
    pub database: f64,
    pub machine: f64,
    /// What the caller measured beside (huddled's processes), if anything.
    pub other: f64,
}

impl CpuShares {
    pub fn describe(&self, cores: usize) -> String {
        format!(
            "postgres {:.0}%, huddled {:.0}%, whole machine {:.0}% of {cores} cores",
            self.database * 100.0,
            self.other * 100.0,
            self.machine * 100.0
        )
    }
}

/// Started before a phase, finished after it.
pub struct CpuMeter {
    postmaster: Option<u32>,
    database: f64,
    machine: (f64, f64),
    other: f64,
    started: Instant,
}

impl CpuMeter {
    /// `other`: CPU seconds so far of processes measured beside (huddled's).
    pub fn start(postmaster: Option<u32>, other: f64) -> CpuMeter {
        CpuMeter {
            postmaster,
            database: postmaster.map_or(0.0, tree_cpu_seconds),
            machine: machine_ticks(),
            other,
            started: Instant::now(),
        }
    }

    pub fn finish(&self, other: f64) -> CpuShares {
        let cores = cores() as f64;
        let wall = self.started.elapsed().as_secs_f64().max(1e-9);
        let database = self.postmaster.map_or(0.0, tree_cpu_seconds) - self.database;
        let (busy, total) = machine_ticks();
        let machine = (busy - self.machine.0) / (total - self.machine.1).max(1.0);
        CpuShares {
            database: database / (wall * cores),
            machine,
            other: (other - self.other) / (wall * cores),
        }
    }
}

pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
