//! What a tiers run reports: each tier's outcome (counts, skip reason, runs, classified
//! failures, services, artifacts) and the pipeline's verdict. Written as `tiers.json`.

use super::failure_class::FailureClass;
use super::services::ServiceStatus;
use super::{SkipReason, Tier};
use crate::framework::Framework;
use crate::report::{Report, Summary};
use serde::Serialize;
use std::path::Path;
use std::path::PathBuf;

/// One finished runner run in a tier.
#[derive(Debug, Clone, Serialize)]
pub struct TierRunRef {
    /// The framework that ran.
    pub framework: Framework,
    /// Its run directory (`report.json`, `junit.xml`, output).
    pub run_dir: PathBuf,
    /// Its counts.
    pub summary: Summary,
    /// Whether it hit its timeout.
    pub timed_out: bool,
}

/// A failing test and its class.
#[derive(Debug, Clone, Serialize)]
pub struct ClassifiedFailure {
    /// The test's id.
    pub test: String,
    /// Implementation or infrastructure.
    pub class: FailureClass,
    /// For infrastructure: the line that says what is broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// One tier's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct TierOutcome {
    /// The tier.
    pub tier: Tier,
    /// Its test files (after a diff scope, the ones selected).
    pub files: Vec<String>,
    /// Why it did not run, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<SkipReason>,
    /// More about the skip (the service's problem and log tail, the missing library).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_detail: Option<String>,
    /// Counts over the tier's runs.
    pub summary: Summary,
    /// Whether the tier ran and every test in it passed.
    pub passed: bool,
    /// The timeout each of its runs had, in seconds.
    pub timeout_secs: u64,
    /// Its runs, one per runner.
    pub runs: Vec<TierRunRef>,
    /// Every failing test with its class.
    pub failures: Vec<ClassifiedFailure>,
    /// The services started for it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceStatus>,
    /// Whether the services were already up, kept from an earlier tier or run of the task
    /// (their statuses, and logs, are that start's).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub services_reused: bool,
    /// Traces and screenshots kept from failing e2e tests, relative to the pipeline directory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// The reports themselves (in the run directories; not repeated in `tiers.json`).
    #[serde(skip)]
    pub reports: Vec<Report>,
}

/// The whole pipeline's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct TiersReport {
    /// The project.
    pub root: String,
    /// The project's framework.
    pub framework: Framework,
    /// `passed` when every tier that has tests ran and passed, else `failed`.
    pub verdict: &'static str,
    /// The tiers, in run order.
    pub tiers: Vec<TierOutcome>,
    /// Things to know (a compose file not started, a detected service).
    pub notes: Vec<String>,
    /// `<runs>/tiers/<stamp>/`.
    pub dir: PathBuf,
}

impl TiersReport {
    /// Whether the verdict is `passed`.
    pub fn passed(&self) -> bool {
        self.verdict == "passed"
    }

    /// Counts over every tier.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for t in &self.tiers {
            s.passed += t.summary.passed;
            s.failed += t.summary.failed;
            s.error += t.summary.error;
            s.skipped += t.summary.skipped;
            s.total += t.summary.total;
        }
        s
    }
}

/// Traces and screenshots under the tier directory, relative to the pipeline directory.
pub(super) fn artifacts(pipeline: &Path, tier_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    walk_files(tier_dir, &mut |p| {
        let is_artifact = p
            .extension()
            .is_some_and(|e| e == "zip" || e == "png" || e == "webm")
            && p.components().any(|c| c.as_os_str() == "playwright-output");
        if is_artifact {
            found.push(crate::adapters::relative(pipeline, &p.to_string_lossy()));
        }
    });
    found.sort();
    found
}

fn walk_files(dir: &Path, found: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk_files(&p, found),
            Ok(t) if t.is_file() => found(&p),
            _ => {}
        }
    }
}
