//! Run directories: `.huddle/runs/<timestamp>/` holds `report.json`, `junit.xml`, the full
//! `stdout.txt` and `stderr.txt` and the runner's own machine-readable output. `runs/LATEST`
//! names the newest complete run, which `--failed` reads. Nothing in a run directory keeps a
//! secret: every file is scrubbed (see [`crate::scrub`]) before the run is complete.

use crate::error::RunnerError;
use crate::junit::write_junit;
use crate::report::Report;
use crate::scrub::{scrub_bytes, scrub_dir, scrub_report};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The report file in a run directory.
pub const REPORT_FILE: &str = "report.json";
/// The JUnit XML file in a run directory.
pub const JUNIT_FILE: &str = "junit.xml";
/// The file in the runs directory naming the newest complete run.
pub const LATEST_FILE: &str = "LATEST";

/// The default runs directory of a project: `<project>/.huddle/runs`.
pub fn default_runs_dir(project: &Path) -> PathBuf {
    project.join(".huddle").join("runs")
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> RunnerError {
    move |e| RunnerError::io(context, e)
}

/// Creates a fresh run directory named after the current UTC time (with `-2`, `-3`… when two
/// runs start in the same millisecond). A `.huddle/.gitignore` keeps runs out of git.
pub fn create(runs_dir: &Path) -> Result<PathBuf, RunnerError> {
    std::fs::create_dir_all(runs_dir).map_err(io(format!("creating {}", runs_dir.display())))?;
    if let Some(huddle) = runs_dir.parent().filter(|p| p.ends_with(".huddle")) {
        let ignore = huddle.join(".gitignore");
        if !ignore.exists() {
            let _ = std::fs::write(ignore, "# huddle's run directories; not source.\n*\n");
        }
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string();
    for n in 1u32.. {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = runs_dir.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(RunnerError::io(format!("creating {}", dir.display()), e)),
        }
    }
    unreachable!("u32 run suffixes exhausted")
}

/// Writes `bytes` (captured output) to `dir/name`, secrets scrubbed.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), RunnerError> {
    write_clean(dir, name, &scrub_bytes(bytes))
}

fn write_clean(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), RunnerError> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(io(format!("writing {}", path.display())))
}

/// Scrubs the files the runner wrote into `run_dir` (its reports, coverage). Runs before
/// [`finish`] and on every way out after the runner ran, so no secret stays behind.
pub fn scrub_runner_files(run_dir: &Path) -> Result<(), RunnerError> {
    scrub_dir(run_dir).map_err(io(format!("scrubbing {}", run_dir.display())))
}

/// Scrubs the runner's files and `report`, writes `report.json` and `junit.xml`, then points
/// `LATEST` at this run.
pub fn finish(run_dir: &Path, report: &mut Report) -> Result<(), RunnerError> {
    scrub_runner_files(run_dir)?;
    scrub_report(report);
    let json = serde_json::to_vec_pretty(report).expect("reports serialise");
    write_clean(run_dir, REPORT_FILE, &json)?;
    write_clean(run_dir, JUNIT_FILE, write_junit(report).as_bytes())?;
    let (Some(runs_dir), Some(name)) = (run_dir.parent(), run_dir.file_name()) else {
        return Ok(());
    };
    // Write-then-rename, so a reader never sees a half-written pointer.
    let tmp = runs_dir.join(format!(".{LATEST_FILE}.{}", std::process::id()));
    std::fs::write(&tmp, name.to_string_lossy().as_bytes())
        .and_then(|()| std::fs::rename(&tmp, runs_dir.join(LATEST_FILE)))
        .map_err(io(format!(
            "updating {}",
            runs_dir.join(LATEST_FILE).display()
        )))
}

/// The newest complete run in `runs_dir` and its report, if any.
pub fn latest(runs_dir: &Path) -> Result<Option<(PathBuf, Report)>, RunnerError> {
    let pointer = runs_dir.join(LATEST_FILE);
    let name = match std::fs::read_to_string(&pointer) {
        Ok(name) => name.trim().to_string(),
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RunnerError::io(format!("reading {}", pointer.display()), e)),
    };
    let dir = runs_dir.join(&name);
    let path = dir.join(REPORT_FILE);
    let bytes = std::fs::read(&path).map_err(io(format!("reading {}", path.display())))?;
    let report = serde_json::from_slice(&bytes).map_err(|e| {
        RunnerError::io(
            format!("reading {}", path.display()),
            std::io::Error::new(ErrorKind::InvalidData, e),
        )
    })?;
    Ok(Some((dir, report)))
}
