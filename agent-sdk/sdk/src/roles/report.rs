//! What the roles tell the team: `impl_progress` per iteration, `test_result` at the end (with a
//! markdown summary in the seeds' layout: status, summary, strategy history, remaining failures
//! by severity), `fix_required` for what a test fix cannot solve, `error` when the runner is
//! missing, crashes or times out. The `data` shapes are the README's "Message types".

use crate::cycles::severity::classify;
use crate::cycles::{Finish, IterationRecord, Severity, StopReason};
use crate::runners::scrub::{scrub, scrub_json_value};
use crate::runners::{Report, Summary, TestResult};
use crate::wire::PostMessage;
use crate::worker::TaskContext;
use crate::Client;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Posts a task's messages to the coordinator.
#[derive(Debug, Clone)]
pub struct Reporter {
    client: Client,
    task_id: String,
    to: String,
    /// When set, messages wait until the worker has closed the task (the verdict's messages).
    after_close: Option<TaskContext>,
}

impl Reporter {
    /// The task the messages are about.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// Messages about `task_id`, sent to `to` (an agent, a role or `*`).
    pub fn new(client: Client, task_id: &str, to: &str) -> Reporter {
        Reporter {
            client,
            task_id: task_id.into(),
            to: to.into(),
            after_close: None,
        }
    }

    /// A reporter whose messages are posted only once the worker has completed or failed the
    /// task: a coordinator following the bus never sees the verdict before the task is closed.
    pub fn after_close(&self, ctx: &TaskContext) -> Reporter {
        Reporter {
            after_close: Some(ctx.clone()),
            ..self.clone()
        }
    }

    /// Posts one message, scrubbed of secrets; a failure is logged, never fatal to the cycle.
    pub async fn post(&self, kind: &str, summary: String, data: Value) {
        let (summary, data) = scrubbed(summary, data);
        let message = PostMessage {
            to: self.to.clone(),
            kind: kind.into(),
            summary,
            data,
        };
        if let Some(ctx) = &self.after_close {
            ctx.post_after_close(message);
            return;
        }
        if let Err(e) = self.client.post_message(&message).await {
            tracing::warn!("could not post {kind} for {}: {e}", self.task_id);
        }
    }

    /// `impl_progress` for one iteration; `extra` carries what the fix changed
    /// (`changedFiles`, `diff`, `testFilesChanged`).
    pub async fn progress(
        &self,
        iteration: u32,
        max: u32,
        pass_rate: f64,
        strategy: &str,
        note: &str,
        extra: serde_json::Map<String, Value>,
    ) {
        let summary = format!(
            "{}: iteration {iteration}/{max}, {pass_rate:.1}% passing, {strategy}: {note}",
            self.task_id
        );
        let mut data = json!({
            "taskId": self.task_id, "iteration": iteration, "maxIterations": max,
            "passRate": round(pass_rate), "strategy": strategy, "note": note,
        });
        if let Some(o) = data.as_object_mut() {
            o.extend(extra);
        }
        self.post("impl_progress", summary, data).await;
    }

    /// `impl_progress` when a full run starts (`phase: fullRunStarted`) and when it finished
    /// (`fullRunFinished`, with its counts), so a long run is never silent.
    pub async fn full_run(&self, report: Option<&Report>) {
        let (summary, data) = match report {
            None => (
                format!("{}: full run started", self.task_id),
                json!({"taskId": self.task_id, "phase": "fullRunStarted"}),
            ),
            Some(r) => {
                let s = r.summary;
                (
                    format!("{}: full run finished: {}", self.task_id, counts_text(&s)),
                    json!({
                        "taskId": self.task_id, "phase": "fullRunFinished",
                        "passRate": round(r.pass_rate()), "total": s.total, "passed": s.passed,
                        "failed": s.failed, "errors": s.error, "skipped": s.skipped,
                    }),
                )
            }
        };
        self.post("impl_progress", summary, data).await;
    }

    /// `error`: the runner is missing, crashed or timed out, or the role could not work.
    pub async fn error(&self, code: &str, message: &str, tool: &str) {
        let summary = format!("{}: {message}", self.task_id);
        let data = json!({"taskId": self.task_id, "code": code, "message": message, "tool": tool});
        self.post("error", summary, data).await;
    }

    /// `fix_required`: what a test fix cannot solve.
    pub async fn fix_required(
        &self,
        reason: &str,
        tests: &[String],
        category: &str,
        details: &str,
    ) {
        let summary = format!("{}: fix required ({category}): {reason}", self.task_id);
        let data = json!({
            "taskId": self.task_id, "reason": reason, "tests": tests,
            "category": category, "details": details,
        });
        self.post("fix_required", summary, data).await;
    }
}

/// What goes on the bus: the summary and every string in `data` (test ids, notes, the markdown
/// summary, runner messages) pass the same scrubber as run directories and model requests.
fn scrubbed(summary: String, mut data: Value) -> (String, Value) {
    scrub_json_value(&mut data);
    let summary = match scrub(&summary) {
        std::borrow::Cow::Owned(clean) => clean,
        std::borrow::Cow::Borrowed(_) => summary,
    };
    (summary, data)
}

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
}

impl CycleSummary {
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
        json!({
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
        })
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

/// One sentence for why the cycle stopped.
pub fn stop_text(f: &Finish, gate: f64) -> String {
    match &f.reason {
        StopReason::GateMet => format!("quality gate met: {:.1}% ≥ {gate:.0}% on a full run", f.pass_rate),
        StopReason::MaxIterations => format!("stopped at the iteration cap ({}) with {:.1}% passing", f.iterations, f.pass_rate),
        StopReason::Stagnation { tests } => format!("stopped: convergence stagnation — {} failed with the same assertion across repeated fix attempts", tests.join(", ")),
        StopReason::Unavailable { reason } => format!("stopped: no fix available — {reason}"),
        StopReason::CannotFix { category, reason } => format!("stopped: a test fix cannot solve this ({category}) — {reason}"),
        StopReason::OnlyFlaky => "only flaky tests fail; they are not repaired".into(),
        StopReason::NoTests => "no tests ran".into(),
    }
}

/// One decimal, for messages.
pub fn round(rate: f64) -> f64 {
    (rate * 10.0).round() / 10.0
}

/// Counts in words, errors apart from failures: `4 of 7 run passed, 2 failed, 1 error,
/// 2 skipped` (parts that are zero left out).
pub fn counts_text(s: &Summary) -> String {
    let ran = s.total - s.skipped;
    let mut out = format!("{} of {ran} run passed", s.passed);
    for (n, one, many) in [
        (s.failed, "failed", "failed"),
        (s.error, "error", "errors"),
        (s.skipped, "skipped", "skipped"),
    ] {
        if n > 0 {
            let _ = write!(out, ", {n} {}", if n == 1 { one } else { many });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{counts_text, scrubbed};
    use crate::runners::Summary;
    use serde_json::json;

    #[test]
    fn counts_read_as_words_with_errors_apart() {
        let s = Summary {
            passed: 4,
            failed: 2,
            error: 1,
            skipped: 2,
            total: 9,
        };
        assert_eq!(
            counts_text(&s),
            "4 of 7 run passed, 2 failed, 1 error, 2 skipped"
        );
        let clean = Summary {
            passed: 7,
            total: 7,
            ..Summary::default()
        };
        assert_eq!(counts_text(&clean), "7 of 7 run passed");
    }

    #[test]
    fn messages_leave_without_secrets() {
        let key = "sk-live-4f9a2c81d7e3b6a05f1e9c2d";
        let (summary, data) = scrubbed(
            format!("TEST-1: failed with {key}"),
            json!({"note": format!("export OPENAI_API_KEY={key}"), "tests": [format!("t.py::x[{key}]")],
                   "details": {"password": "hunter2"}, "passRate": 50.0}),
        );
        let text = format!("{summary}{data}");
        assert!(!text.contains(key) && !text.contains("hunter2"), "{text}");
        assert_eq!(summary, "TEST-1: failed with [REDACTED:api-key]");
        assert_eq!(data["details"]["password"], "[REDACTED:secret]");
        assert_eq!(data["passRate"], 50.0);
    }
}
