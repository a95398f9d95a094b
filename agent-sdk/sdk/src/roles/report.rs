//! What the roles tell the team: `impl_progress` per iteration and around full runs,
//! `test_result` at the end (its data is [`CycleSummary`]'s), `fix_required` for what a test fix
//! cannot solve, `error` when the runner is missing, crashes or times out. The `data` shapes are
//! docs/api.md's "Message types".

use crate::cycles::{Finish, StopReason};
use crate::runners::scrub::{scrub, scrub_json_value};
use crate::runners::{Report, Summary};
use crate::wire::PostMessage;
use crate::worker::TaskContext;
use crate::Client;
use serde_json::{json, Value};
use std::fmt::Write as _;

pub use super::summary::CycleSummary;

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
        if kind == "test_result" {
            verdict_span(&data);
        }
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
        StopReason::NotVerified { problems } => format!("the gate held in the checkout but not in a clean copy of the task's original tests — {}", problems.join("; ")),
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

/// The verdict's span: the pass rate, the gate and whether it was met.
fn verdict_span(data: &Value) {
    use huddle_telemetry::KeyValue;
    if !huddle_telemetry::enabled() {
        return;
    }
    let number = |k: &str| data.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let attributes = vec![
        KeyValue::new("test.pass_rate", number("passRate")),
        KeyValue::new("huddle.quality_gate", number("qualityGate")),
        KeyValue::new(
            "huddle.quality_gate_passed",
            data.get("qualityGatePassed")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
        KeyValue::new("test.total", number("total") as i64),
        KeyValue::new("test.passed", number("passed") as i64),
    ];
    huddle_telemetry::record_in_attempt("verdict", std::time::SystemTime::now(), attributes);
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
