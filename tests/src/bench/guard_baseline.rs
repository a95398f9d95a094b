//! The guard's committed baseline (`tests/guard-baseline.json`): per build profile, each
//! operation's CPU as a ratio to the floor, the command that measured it and when. The guard
//! prints each ratio beside its baseline and names every operation past the tolerance; it never
//! fails a run (BENCHMARKS.md, "The performance guard", says how to read and refresh it).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// How far over its baseline ratio an operation may go before the guard names it.
const DEFAULT_TOLERANCE: f64 = 0.30;

/// One operation as measured in this run.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    pub name: &'static str,
    /// Requests one operation makes (a wake is three: create, woken claim, next look).
    pub requests: u32,
    /// Daemon CPU per operation.
    pub cpu_ns: f64,
    /// The floor's CPU for as many health checks.
    pub floor_ns: f64,
    pub ratio: f64,
}

impl Measured {
    pub fn new(name: &'static str, requests: u32, cpu_ns: f64, floor_ns: f64) -> Measured {
        Measured {
            name,
            requests,
            cpu_ns,
            floor_ns,
            ratio: cpu_ns / floor_ns.max(1.0),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Baseline {
    /// Over this fraction above its baseline ratio, an operation is named as a regression.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// `release` and `debug`: the builds differ several times over, so each has its own.
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileBaseline>,
}

fn default_tolerance() -> f64 {
    DEFAULT_TOLERANCE
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProfileBaseline {
    /// The command, commit and date that measured it.
    pub measured: String,
    /// Operation → CPU ÷ floor.
    pub ratios: BTreeMap<String, f64>,
    /// Operation → daemon CPU µs per operation (for reading; the ratios are compared).
    pub cpu_us: BTreeMap<String, f64>,
}

impl Baseline {
    /// The file beside the bench's crate.
    pub fn default_path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("guard-baseline.json")
    }

    /// The build of this bench (and of the `huddled` beside it).
    pub fn profile() -> &'static str {
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    }

    /// The file at `path`; an empty baseline when there is none yet.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| format!("the guard baseline {}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Baseline {
                tolerance: DEFAULT_TOLERANCE,
                ..Baseline::default()
            }),
            Err(e) => Err(format!("the guard baseline {}: {e}", path.display())),
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Replaces this build's baseline with `measured`.
    pub fn record(&mut self, measured: &[Measured], command: &str) {
        let commit = std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let date = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC");
        let round = |x: f64| (x * 100.0).round() / 100.0;
        self.profiles.insert(
            Baseline::profile().to_string(),
            ProfileBaseline {
                measured: format!("{command} (commit {commit}, {date})"),
                ratios: measured
                    .iter()
                    .map(|m| (m.name.to_string(), round(m.ratio)))
                    .collect(),
                cpu_us: measured
                    .iter()
                    .map(|m| (m.name.to_string(), round(m.cpu_ns / 1e3)))
                    .collect(),
            },
        );
    }

    fn ratio_of(&self, name: &str) -> Option<f64> {
        self.profiles
            .get(Baseline::profile())?
            .ratios
            .get(name)
            .copied()
    }

    /// A markdown table: each operation's CPU, its floor, the ratio and the baseline's.
    pub fn table(&self, measured: &[Measured]) -> String {
        let mut out = String::from(
            "| operation | requests | daemon CPU per op | floor | ratio | baseline | change |\n|---|---|---|---|---|---|---|\n",
        );
        for m in measured {
            let (base, change) = match self.ratio_of(m.name) {
                Some(b) => {
                    let change = (m.ratio / b - 1.0) * 100.0;
                    let mark = if change > self.tolerance * 100.0 {
                        " **over**"
                    } else {
                        ""
                    };
                    (format!("{b:.2}×"), format!("{change:+.0} %{mark}"))
                }
                None => ("—".to_string(), "—".to_string()),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} µs | {:.1} µs | {:.2}× | {base} | {change} |",
                m.name,
                m.requests,
                m.cpu_ns / 1e3,
                m.floor_ns / 1e3,
                m.ratio
            );
        }
        out
    }

    /// One line: every operation within tolerance, or which are not.
    pub fn verdict(&self, measured: &[Measured]) -> String {
        let profile = Baseline::profile();
        if !self.profiles.contains_key(profile) {
            return format!(
                "guard: no {profile} baseline yet; `huddle-bench guard --write-baseline` records one"
            );
        }
        let over: Vec<String> = measured
            .iter()
            .filter_map(|m| {
                let b = self.ratio_of(m.name)?;
                let change = m.ratio / b - 1.0;
                (change > self.tolerance).then(|| format!("{} {:+.0} %", m.name, change * 100.0))
            })
            .collect();
        if over.is_empty() {
            format!(
                "guard: every operation within +{:.0} % of the {profile} baseline",
                self.tolerance * 100.0
            )
        } else {
            format!(
                "guard: POSSIBLE REGRESSION over the {profile} baseline (+{:.0} % allowed): {}. Rerun to rule out noise; BENCHMARKS.md, \"The performance guard\", says what to do.",
                self.tolerance * 100.0,
                over.join(", ")
            )
        }
    }
}
