//! A run's artifacts, kept in its run directory beside `report.json` and listed in it: the
//! screenshots, traces and videos a browser run leaves (Playwright's and pytest-playwright's
//! output, which huddle points into the run directory) and the runner's own raw report. They
//! are capped per run: past [`crate::limits::OutputLimits::artifacts`] bytes, the largest are
//! removed first (a video before the raw report) and each removal is listed, never silent.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What an artifact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    /// A PNG or JPEG a browser test took.
    Screenshot,
    /// A Playwright trace (`trace.zip`).
    Trace,
    /// A recording of a browser test (`.webm`, `.mp4`).
    Video,
    /// The runner's own machine-readable report, as it wrote it.
    RawReport,
}

/// One artifact of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// Relative to the run directory (`playwright-output/test-x/trace.zip`).
    pub path: String,
    /// What it is.
    pub kind: ArtifactKind,
    /// Its size in bytes.
    pub bytes: u64,
    /// True when it was removed to keep the run under the cap: listed, no longer on disk.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}

fn kind_of(path: &Path) -> Option<ArtifactKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" | "jpg" | "jpeg" => Some(ArtifactKind::Screenshot),
        "zip" => Some(ArtifactKind::Trace),
        "webm" | "mp4" => Some(ArtifactKind::Video),
        _ => None,
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        match e.file_type() {
            // A coverage report's pictures are no test's.
            Ok(t) if t.is_dir() && e.file_name() != "coverage" => walk(&e.path(), found),
            Ok(t) if t.is_file() => found.push(e.path()),
            _ => {}
        }
    }
}

/// Lists `run_dir`'s artifacts (the browser files anywhere under it, and `raw_report` when
/// the runner wrote it) and removes the largest until they fit in `cap` bytes.
pub fn keep(run_dir: &Path, raw_report: Option<&Path>, cap: u64) -> Vec<Artifact> {
    let mut files = Vec::new();
    walk(run_dir, &mut files);
    let mut found: Vec<(PathBuf, Artifact)> = files
        .into_iter()
        .filter_map(|p| {
            let kind = if Some(p.as_path()) == raw_report {
                ArtifactKind::RawReport
            } else {
                kind_of(&p)?
            };
            let bytes = p.metadata().ok()?.len();
            let path = p.strip_prefix(run_dir).ok()?.to_string_lossy().into_owned();
            Some((
                p,
                Artifact {
                    path,
                    kind,
                    bytes,
                    removed: false,
                },
            ))
        })
        .collect();
    // Largest first, the raw report last: what goes first when over the cap.
    found.sort_by(|a, b| {
        (a.1.kind == ArtifactKind::RawReport)
            .cmp(&(b.1.kind == ArtifactKind::RawReport))
            .then(b.1.bytes.cmp(&a.1.bytes))
            .then(a.1.path.cmp(&b.1.path))
    });
    let mut total: u64 = found.iter().map(|(_, a)| a.bytes).sum();
    for (path, a) in &mut found {
        if total <= cap {
            break;
        }
        if std::fs::remove_file(path).is_ok() {
            total -= a.bytes;
            a.removed = true;
        }
    }
    let mut out: Vec<Artifact> = found.into_iter().map(|(_, a)| a).collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, bytes: usize) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, vec![b'x'; bytes]).unwrap();
    }

    #[test]
    fn browser_files_and_the_raw_report_are_listed_and_capped_largest_first() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path();
        write(run, "vitest.json", 300);
        write(run, "stdout.txt", 50);
        write(run, "playwright-output/t1/trace.zip", 200);
        write(run, "playwright-output/t1/video.webm", 1000);
        write(run, "playwright-output/t1/test-failed-1.png", 100);

        let all = keep(run, Some(&run.join("vitest.json")), 10_000);
        let listed: Vec<_> = all.iter().map(|a| (a.path.as_str(), a.kind)).collect();
        assert_eq!(
            listed,
            [
                (
                    "playwright-output/t1/test-failed-1.png",
                    ArtifactKind::Screenshot
                ),
                ("playwright-output/t1/trace.zip", ArtifactKind::Trace),
                ("playwright-output/t1/video.webm", ArtifactKind::Video),
                ("vitest.json", ArtifactKind::RawReport),
            ]
        );
        assert!(all.iter().all(|a| !a.removed));

        let capped = keep(run, Some(&run.join("vitest.json")), 700);
        let removed: Vec<_> = capped
            .iter()
            .filter(|a| a.removed)
            .map(|a| a.path.as_str())
            .collect();
        assert_eq!(removed, ["playwright-output/t1/video.webm"]);
        assert!(!run.join("playwright-output/t1/video.webm").exists());
        assert!(run.join("vitest.json").exists());
    }
}
