//! The cycle's final report: the `test_result` data and its markdown summary in the seeds'
//! layout (status, summary, strategy history, remaining failures by severity and why they fail).

use super::report::{counts_text, round, stop_text};
use crate::cycles::severity::classify;
use crate::cycles::{Finish, IterationRecord, Severity};
use crate::runners::scrub::scrub;
use crate::runners::{Report, TestResult};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Everything a cycle's final report is made of.
#[derive(Debug, Clone)]
pub struct CycleSummary {
    /// The task.
    pub task_id: String,
    /// `Test cycle` or `QA run (L1)`, for the heading.
    pub title: String,
    /// How the cycle ended.
    pub finish: Finish,
    /// Its iterations.
    pub history: Vec<IterationRecord>,
    /// The final full run.
    pub report: Option<Report>,
    /// Its run directory, where its artifacts are.
    pub run_dir: Option<std::path::PathBuf>,
    /// Tests whose re-run passed.
    pub flaky: Vec<String>,
    /// Tests that failed and are no longer reported: counted as failed in `report`.
    pub vanished: Vec<String>,
    /// Failures set aside as a broken environment.
    pub environment: Vec<String>,
    /// The cap in force.
    pub max_iterations: u32,
    /// The gate in force.
    pub quality_gate: f64,
    /// Per-tier counts, skips and failure classes, when the run was tiered.
    pub tiers: Option<Value>,
    /// The person's decisions that held the task before it began.
    pub gates: Vec<crate::wire::GateRecord>,
}

impl CycleSummary {
    /// The person's approval of ending below the gate, asked by this worker mid-task.
    pub fn accepted_below_gate(&self) -> Option<&crate::wire::GateRecord> {
        self.gates
            .iter()
            .find(|g| g.asked_by_holder.is_some() && super::ask_person::approves(g))
    }

    /// Remaining failures (flaky ones excluded) grouped by severity, most severe first.
    pub fn by_severity(&self) -> Vec<(Severity, Vec<String>)> {
        let failing: Vec<String> = self
            .report
            .iter()
            .flat_map(|r| r.failures())
            .map(|t| t.nodeid.clone())
            .filter(|id| !self.flaky.contains(id))
            .collect();
        Severity::ALL
            .into_iter()
            .map(|s| {
                (
                    s,
                    failing
                        .iter()
                        .filter(|id| classify(id) == s)
                        .cloned()
                        .collect(),
                )
            })
            .collect()
    }

    /// The `test_result` data.
    pub fn test_result(&self) -> Value {
        let s = self.report.as_ref().map(|r| r.summary).unwrap_or_default();
        let groups = self.by_severity();
        let critical = groups[0].1.clone();
        let remaining: serde_json::Map<String, Value> = groups
            .iter()
            .map(|(s, ids)| (s.as_str().to_string(), json!(ids)))
            .collect();
        let history: Vec<IterationRecord> = self
            .history
            .iter()
            .map(|h| IterationRecord {
                pass_rate: round(h.pass_rate),
                ..h.clone()
            })
            .collect();
        let mut data = json!({
            "taskId": self.task_id,
            "passRate": round(self.finish.pass_rate),
            "iterations": self.finish.iterations,
            "total": s.total,
            "passed": s.passed,
            "failed": s.failed + s.error,
            "errors": s.error,
            "skipped": s.skipped,
            "counts": counts_text(&s),
            "vanished": &self.vanished[..self.vanished.len().min(super::evidence::MAX_IDS_SHOWN)],
            "environmentFailures": self.environment,
            "criticalFailures": critical,
            "framework": self.report.as_ref().map(|r| r.framework.name()),
            "qualityGatePassed": self.finish.passed,
            "qualityGate": self.quality_gate,
            "stopReason": self.finish.reason,
            "strategyHistory": history,
            "flaky": self.flaky,
            "remainingFailures": remaining,
            "failures": self.failure_lines(),
            "summary": self.markdown(),
        });
        if let Some(tiers) = &self.tiers {
            data["tiers"] = tiers.clone();
        }
        // The final run's screenshots, traces, videos and raw report, beside its report.json.
        if let (Some(r), Some(dir)) = (&self.report, &self.run_dir) {
            if !r.artifacts.is_empty() {
                data["artifacts"] = json!({ "runDir": dir, "files": r.artifacts });
            }
        }
        // Tests that failed and passed on a retry within the final run (Maestro's retry,
        // Cypress's own retries): the seeds' `flakyInRun`, beside the history's `flaky`.
        if let Some(r) = self.report.as_ref().filter(|r| r.flaky_in_run > 0) {
            data["flakyInRun"] = json!(r.flaky_in_run);
            data["flakyInRunTests"] = json!(r.flaky);
        }
        if !self.gates.is_empty() {
            data["gates"] = json!(self.gates);
        }
        data
    }

    /// The markdown report.
    pub fn markdown(&self) -> String {
        let f = &self.finish;
        let mut out = String::new();
        let status = if f.passed { "PASSED" } else { "FAILED" };
        let _ = writeln!(out, "## {} {}: {status}\n", self.title, self.task_id);
        let _ = writeln!(out, "**Status:** {}\n", stop_text(f, self.quality_gate));
        let _ = writeln!(out, "### Summary\n");
        if let Some(r) = &self.report {
            let _ = writeln!(out, "- Framework: {}", r.framework);
            let _ = writeln!(out, "- Tests: {}", counts_text(&r.summary));
        }
        if !self.vanished.is_empty() {
            let _ = writeln!(
                out,
                "- No longer reported, counted as failed: {}",
                self.vanished.join(", ")
            );
        }
        if !self.environment.is_empty() {
            let _ = writeln!(
                out,
                "- Broken environment, not sent for repair: {}",
                self.environment.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "- Pass rate: {:.1}% (quality gate {:.0}%)",
            f.pass_rate, self.quality_gate
        );
        let _ = writeln!(
            out,
            "- Iterations: {} of at most {}",
            f.iterations, self.max_iterations
        );
        if !self.flaky.is_empty() {
            let _ = writeln!(
                out,
                "- Flaky (passed on re-run, not repaired): {}",
                self.flaky.join(", ")
            );
        }
        let decided = super::decisions::lines(&self.gates);
        if !decided.is_empty() {
            let _ = writeln!(out, "\n### Decided before it began\n");
            for line in decided {
                let _ = writeln!(out, "- {}", scrub(&line));
            }
        }
        let _ = writeln!(out, "\n### Strategy history\n\n| iteration | strategy | pass rate | note |\n|---|---|---|---|");
        for h in &self.history {
            let strategy = h.strategy.map_or("-", |s| s.as_str());
            let _ = writeln!(
                out,
                "| {} | {strategy} | {:.1}% | {} |",
                h.iteration,
                h.pass_rate,
                h.note.replace('|', "\\|").replace('\n', " ")
            );
        }
        let _ = writeln!(out, "\n### Remaining failures by severity\n");
        let groups = self.by_severity();
        if groups.iter().all(|(_, ids)| ids.is_empty()) {
            let _ = writeln!(out, "None.");
        }
        for (severity, ids) in groups.iter().filter(|(_, ids)| !ids.is_empty()) {
            let _ = writeln!(out, "- **{severity}** ({}): {}", ids.len(), ids.join(", "));
        }
        let failures = self.failure_lines();
        if !failures.is_empty() {
            let _ = writeln!(out, "\n### Why they fail\n");
            for f in &failures {
                let _ = writeln!(
                    out,
                    "- {}: `{}`",
                    f["nodeid"].as_str().unwrap_or("-"),
                    f["message"].as_str().unwrap_or("-")
                );
            }
        }
        out
    }

    /// The first failing tests with the line that says why (the assertion), scrubbed and
    /// short: what a person reading the bus needs without opening the run directory.
    pub fn failure_lines(&self) -> Vec<Value> {
        const SHOWN: usize = 20;
        let Some(report) = &self.report else {
            return Vec::new();
        };
        report
            .tests
            .iter()
            .filter(|t| t.outcome.is_failure())
            .take(SHOWN)
            .map(|t| json!({ "nodeid": t.nodeid, "message": why(t) }))
            .collect()
    }
}

/// The line of a failure that says what went wrong: pytest's `E   assert …` line, or else the
/// first line with text; at most 200 characters, secrets removed.
fn why(test: &TestResult) -> String {
    let text = test.longrepr.as_deref().unwrap_or("");
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("E ") || l.starts_with("E\t"))
        .map(|l| l[1..].trim())
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("(no failure text)");
    let line = scrub(line);
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cycles::StopReason;
    use crate::runners::artifacts::{Artifact, ArtifactKind};
    use crate::runners::{Framework, Outcome, Summary};

    fn summary(artifacts: Vec<Artifact>) -> CycleSummary {
        let tests = vec![TestResult::new("e2e/test_page.py::test_x", Outcome::Passed)];
        CycleSummary {
            task_id: "t1".into(),
            title: "Test cycle".into(),
            finish: Finish {
                passed: true,
                reason: StopReason::GateMet,
                iterations: 1,
                pass_rate: 100.0,
            },
            history: Vec::new(),
            report: Some(Report {
                created: 0.0,
                duration: 1.0,
                exitcode: 0,
                root: "/p".into(),
                framework: Framework::Pytest,
                summary: Summary::of(&tests),
                tests,
                timed_out: false,
                command: Vec::new(),
                coverage: None,
                artifacts,
                flaky: Vec::new(),
                flaky_in_run: 0,
            }),
            run_dir: Some("/p/.huddle/runs/20260101T000000.000Z".into()),
            flaky: Vec::new(),
            vanished: Vec::new(),
            environment: Vec::new(),
            max_iterations: 3,
            quality_gate: 100.0,
            tiers: None,
            gates: Vec::new(),
        }
    }

    #[test]
    fn the_result_links_the_final_runs_artifacts() {
        let shot = Artifact {
            path: "playwright-output/t/test-finished-1.png".into(),
            kind: ArtifactKind::Screenshot,
            bytes: 10,
            removed: false,
        };
        let data = summary(vec![shot]).test_result();
        assert_eq!(
            data["artifacts"]["runDir"],
            "/p/.huddle/runs/20260101T000000.000Z"
        );
        assert_eq!(
            data["artifacts"]["files"][0]["path"],
            "playwright-output/t/test-finished-1.png"
        );
        assert_eq!(data["artifacts"]["files"][0]["kind"], "screenshot");
        assert!(summary(Vec::new()).test_result().get("artifacts").is_none());
    }

    #[test]
    fn the_result_counts_tests_that_passed_on_a_retry_in_the_run() {
        let mut s = summary(Vec::new());
        assert!(s.test_result().get("flakyInRun").is_none());
        let report = s.report.as_mut().unwrap();
        report.flaky = vec![".maestro/checkout.yaml::checkout".into()];
        report.flaky_in_run = 1;
        let data = s.test_result();
        assert_eq!(data["flakyInRun"], 1);
        assert_eq!(
            data["flakyInRunTests"][0],
            ".maestro/checkout.yaml::checkout"
        );
    }
}
