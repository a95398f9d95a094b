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

/// Creates `huddle` (a project's `.huddle`) with a `.gitignore` that keeps all of it out of
/// git, when missing. Best effort: a project huddle cannot write in fails later, with a reason.
pub(crate) fn ignore_huddle_dir(huddle: &Path) {
    let ignore = huddle.join(".gitignore");
    if !ignore.exists() {
        let _ = std::fs::create_dir_all(huddle);
        let _ = std::fs::write(
            ignore,
            "# huddle's run directories and caches; not source.\n*\n",
        );
    }
}

/// Creates a fresh run directory named after the current UTC time (with `-2`, `-3`… when two
/// runs start in the same millisecond). A `.huddle/.gitignore` keeps runs out of git.
pub fn create(runs_dir: &Path) -> Result<PathBuf, RunnerError> {
    std::fs::create_dir_all(runs_dir).map_err(io(format!("creating {}", runs_dir.display())))?;
    if let Some(huddle) = runs_dir.parent().filter(|p| p.ends_with(".huddle")) {
        ignore_huddle_dir(huddle);
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

/// Replaces each runner file in `run_dir` larger than `cap` bytes (a runner's JSON report
/// holding a huge failure message) with a note: its results are in `report.json`, capped,
/// and a file that size is never read back whole to be scrubbed.
pub fn drop_oversize_runner_files(run_dir: &Path, cap: usize) -> Result<(), RunnerError> {
    let entries =
        std::fs::read_dir(run_dir).map_err(io(format!("reading {}", run_dir.display())))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        if !meta.is_file()
            || meta.len() <= cap as u64
            || name == "stdout.txt"
            || name == "stderr.txt"
        {
            continue;
        }
        std::fs::remove_file(&path).map_err(io(format!("removing {}", path.display())))?;
        let note = format!(
            "{} huddle removed {name} ({} bytes), the runner's own output, after reading it: it \
             is over the cap of {cap} bytes per file. report.json holds its results, with long \
             failure texts cut …]\n",
            crate::limits::TRUNCATED,
            meta.len()
        );
        write_clean(run_dir, &format!("{name}.truncated.txt"), note.as_bytes())?;
    }
    Ok(())
}

/// Removes all but the newest `keep` run directories of `runs_dir` (0 keeps all). Run
/// directories are named by their UTC start time, so names sort by age.
pub fn prune(runs_dir: &Path, keep: usize) -> Result<(), RunnerError> {
    if keep == 0 {
        return Ok(());
    }
    let latest = std::fs::read_to_string(runs_dir.join(LATEST_FILE)).unwrap_or_default();
    let mut runs: Vec<PathBuf> = std::fs::read_dir(runs_dir)
        .map_err(io(format!("reading {}", runs_dir.display())))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.len() >= 19 && n.as_bytes()[..8].iter().all(u8::is_ascii_digit))
        })
        .collect();
    runs.sort();
    let excess = runs.len().saturating_sub(keep);
    for old in &runs[..excess] {
        if old.file_name().is_some_and(|n| n == latest.trim()) {
            continue;
        }
        // A run another process is still writing may vanish under it; losing an old run is
        // the point, so a failure here is not the new run's failure.
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(())
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
