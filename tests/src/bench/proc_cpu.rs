//! CPU use read from `/proc` across one phase of a benchmark: PostgreSQL's (the postmaster,
//! its living backends, and the backends that already exited, which the postmaster reaped and
//! so counts as its children's time) and the whole machine's, as shares of every core. A share
//! well below one for the database while huddle runs is the headroom the replica figures need.
//! Also the CPU of this process's children that exited within the phase (`cutime` + `cstime` of
//! `/proc/self/stat`): a client such as pgbench, run and waited for inside the phase, counts
//! there once it is reaped. Long-lived children (huddled) that run across the phase are not
//! reaped inside it, so they do not count there; they are measured beside (`other`).

use std::time::Instant;

/// Clock ticks per second of `/proc` times (`getconf CLK_TCK`; 100 on Linux).
const TICKS: f64 = 100.0;

/// The fields of `/proc/PID/stat` after the command name (which may hold spaces): index 0
/// is the state, 1 the parent, 11–14 utime, stime, cutime, cstime.
fn stat_fields(pid: u32) -> Option<Vec<f64>> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The fields of one `/proc/PID/stat` text after the command name, which is in parentheses and
/// may itself hold spaces and `)`: everything after the last `)`.
fn parse_stat(stat: &str) -> Option<Vec<f64>> {
    let rest = stat.rsplit_once(')')?.1;
    Some(
        rest.split_whitespace()
            .map(|f| f.parse::<f64>().unwrap_or(0.0))
            .collect(),
    )
}

/// CPU seconds (user + system) of this process's children that have exited and been waited
/// for: `cutime` + `cstime` of `/proc/self/stat`. A child's own reaped children roll up into
/// it, so pgbench run through `runuser` counts once `runuser` is waited for.
pub fn reaped_children_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| reaped_children_ticks(&s))
        .map_or(0.0, |t| t / TICKS)
}

/// `cutime` + `cstime` (fields 16 and 17 of `/proc/PID/stat`) in clock ticks.
fn reaped_children_ticks(stat: &str) -> Option<f64> {
    let fields = parse_stat(stat)?;
    Some(fields.get(13)? + fields.get(14)?)
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

/// CPU seconds spent over one phase, for per-task figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSeconds {
    /// The postmaster, its living backends and the backends it reaped within the phase.
    pub database: f64,
    /// What the caller measured beside (huddled's processes), if anything.
    pub other: f64,
    /// This process's children that exited and were waited for within the phase (pgbench).
    pub reaped_children: f64,
}

impl CpuSeconds {
    /// Microseconds per task of each: (database, other, reaped children).
    pub fn per_task_us(&self, tasks: usize) -> CpuPerTask {
        let per = |s: f64| s * 1e6 / (tasks.max(1) as f64);
        CpuPerTask {
            database: per(self.database),
            other: per(self.other),
            reaped_children: per(self.reaped_children),
        }
    }
}

/// [`CpuSeconds`] divided by the tasks of the phase, in microseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuPerTask {
    pub database: f64,
    pub other: f64,
    pub reaped_children: f64,
}

impl CpuPerTask {
    pub fn total(&self) -> f64 {
        self.database + self.other + self.reaped_children
    }
}

/// Started before a phase, finished after it.
pub struct CpuMeter {
    postmaster: Option<u32>,
    database: f64,
    machine: (f64, f64),
    other: f64,
    reaped_children: f64,
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
            reaped_children: reaped_children_cpu_seconds(),
            started: Instant::now(),
        }
    }

    /// The shares of all cores over the phase, and the CPU seconds behind them.
    pub fn finish(&self, other: f64) -> (CpuShares, CpuSeconds) {
        let cores = cores() as f64;
        let wall = self.started.elapsed().as_secs_f64().max(1e-9);
        let seconds = CpuSeconds {
            database: self.postmaster.map_or(0.0, tree_cpu_seconds) - self.database,
            other: other - self.other,
            reaped_children: reaped_children_cpu_seconds() - self.reaped_children,
        };
        let (busy, total) = machine_ticks();
        let machine = (busy - self.machine.0) / (total - self.machine.1).max(1.0);
        let shares = CpuShares {
            database: seconds.database / (wall * cores),
            machine,
            other: seconds.other / (wall * cores),
        };
        (shares, seconds)
    }
}

/// The machine's cores (the `cpuN` lines of `/proc/stat`), not the ones this process may run
/// on: with the database pinned apart (`HUDDLE_BENCH_PG_CPUS`) the bench runs on fewer, and
/// shares stay shares of the whole machine, as `machine_ticks` counts it.
pub fn cores() -> usize {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let listed = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    if listed > 0 {
        return listed;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command name with spaces and a `)` of its own; utime 7, stime 3, cutime 1234,
    /// cstime 56 (fields 14–17).
    const STAT: &str = "4242 (pg bench) x) S 1 4242 4242 0 -1 4194560 500 2000 0 0 \
                        7 3 1234 56 20 0 1 0 100 1000000 200 18446744073709551615";

    #[test]
    fn fields_start_after_the_last_parenthesis() {
        let fields = parse_stat(STAT).unwrap();
        assert_eq!(fields[1], 1.0, "the parent");
        assert_eq!(&fields[11..15], &[7.0, 3.0, 1234.0, 56.0]);
    }

    #[test]
    fn reaped_children_are_cutime_plus_cstime() {
        assert_eq!(reaped_children_ticks(STAT), Some(1290.0));
        assert_eq!(reaped_children_ticks("4242 (short) S 1 2 3"), None);
        assert_eq!(reaped_children_ticks("no parenthesis"), None);
    }

    #[test]
    fn own_stat_parses() {
        assert!(reaped_children_cpu_seconds() >= 0.0);
        let own = parse_stat(&std::fs::read_to_string("/proc/self/stat").unwrap()).unwrap();
        assert_eq!(own[1] as u32, std::os::unix::process::parent_id());
    }

    #[test]
    fn per_task_divides_by_tasks() {
        let secs = CpuSeconds {
            database: 1.0,
            other: 0.5,
            reaped_children: 0.25,
        };
        let per = secs.per_task_us(10_000);
        assert_eq!(per.database, 100.0);
        assert_eq!(per.other, 50.0);
        assert_eq!(per.reaped_children, 25.0);
        assert_eq!(per.total(), 175.0);
    }
}
