//! One fix attempt: roll back the last fix when the plan says so, set aside failures of a
//! broken environment, ask the model with the failures and the files in scope, read its edits,
//! check and apply them all or none, and keep a snapshot for the next rollback and the diff for
//! the bus. Refusals go back to the model at the next attempt; a model whose replies keep
//! being unusable is given up on ([`Patience`]).

use super::changes::{Changes, FixChange};
use super::patience::{Next, Patience};
use super::runs::Runs;
use super::scope::files_in_scope;
use crate::client::Client;
use crate::cycles::{FixOutcome, FixPlan};
use crate::edits::{apply, Policy, Snapshot};
use crate::llm::{prompt, Budget, ChatReply, FixRequest, LlmClient, LlmError};
use std::path::Path;

/// The model side of one task's cycle.
pub(crate) struct Repairer {
    llm: Option<LlmClient>,
    /// Why there is no model, naming the setting, when there is none.
    missing: String,
    budget: Budget,
    policy: Policy,
    /// Why the previous answer was refused.
    feedback: Vec<String>,
    /// The files as they were before the last applied fix.
    last: Option<Snapshot>,
    /// Model calls made.
    pub calls: u32,
    /// Set when the model endpoint cannot be used at all (unreachable after the client's
    /// retries, or refusing the key or the model, or answering 5xx call after call): the
    /// cycle stops and says so once, as an `error`, instead of spending its iterations on calls
    /// that cannot succeed.
    pub model_failure: Option<String>,
    patience: Patience,
    /// Set when the model's replies kept being unusable: why the cycle gave up on it.
    pub gave_up: Option<String>,
    /// The fix just applied, for its `impl_progress` (taken once posted).
    pub last_change: Option<FixChange>,
    /// Everything the cycle's fixes changed.
    pub changes: Changes,
    /// Where each model call is reserved and settled (the team's ledger), when set.
    ledger: Option<Ledger>,
    /// Set when the team's budget refused a call (`budget_exceeded`): the role releases the
    /// task with this note instead of reporting a verdict.
    pub budget_refused: Option<String>,
}

/// The team's spend ledger, for one task's calls.
struct Ledger {
    client: Client,
    task: String,
}

impl Repairer {
    pub fn new(
        llm: Option<LlmClient>,
        missing: String,
        policy: Policy,
        project: &Path,
    ) -> Repairer {
        let budget = llm.as_ref().map_or(Budget::new(0, 0), LlmClient::budget);
        Repairer {
            llm,
            missing,
            budget,
            policy,
            feedback: Vec::new(),
            last: None,
            calls: 0,
            model_failure: None,
            patience: Patience::default(),
            gave_up: None,
            last_change: None,
            changes: Changes::new(project.to_path_buf()),
            ledger: None,
            budget_refused: None,
        }
    }

    /// The model fixes are asked of, when there is one.
    pub fn model(&self) -> Option<&str> {
        self.llm.as_ref().map(|l| l.config().model.as_str())
    }

    /// Reserves every model call of `task` with the daemon before making it, and settles it
    /// after with the tokens used, so the team's budget holds (issue 51).
    pub fn with_ledger(mut self, client: Client, task: &str) -> Repairer {
        self.ledger = Some(Ledger {
            client,
            task: task.to_string(),
        });
        self
    }

    /// Asks the daemon for the next call: its reservation id (`None` without a ledger, or
    /// from a daemon that keeps none), or the outcome that ends the attempt.
    async fn reserve(&mut self, model: &str) -> Result<Option<i64>, FixOutcome> {
        let Some(ledger) = &self.ledger else {
            return Ok(None);
        };
        match ledger.client.reserve_spend(model, Some(&ledger.task)).await {
            Ok(call) => Ok(Some(call.id)),
            Err(e) if e.is_budget_exceeded() => {
                let why = e.api().map_or_else(|| e.to_string(), |a| a.message.clone());
                let reason = format!("budget_exceeded: {why}");
                tracing::warn!("the model call was refused: {reason}");
                self.budget_refused = Some(reason.clone());
                Err(FixOutcome::Unavailable { reason })
            }
            Err(e) if e.is_not_found() => {
                tracing::warn!("the daemon keeps no spend ledger ({e}); model calls go unrecorded");
                self.ledger = None;
                Ok(None)
            }
            Err(e) => Err(FixOutcome::Unavailable {
                reason: format!("the model call could not be reserved with the daemon: {e}"),
            }),
        }
    }

    /// Reports the tokens of reserved call `id` (what the budget charged since `before`;
    /// split by the answer's `usage` when it has one).
    async fn settle(&self, id: Option<i64>, reply: &Result<ChatReply, LlmError>, before: u64) {
        let (Some(id), Some(ledger)) = (id, &self.ledger) else {
            return;
        };
        let used = self.budget.tokens().saturating_sub(before);
        let usage = reply.as_ref().ok().and_then(|r| r.usage);
        let (prompt, completion) =
            usage.map_or((used, 0), |u| (u.prompt_tokens, u.completion_tokens));
        if let Err(e) = ledger.client.settle_spend(id, prompt, completion).await {
            tracing::warn!("could not settle model call {id} with the daemon: {e}");
        }
    }

    /// Tokens used so far.
    pub fn tokens(&self) -> u64 {
        self.budget.tokens()
    }

    /// Carries out `plan`; `task` is the task's subject and description for the prompt.
    pub async fn attempt(&mut self, plan: &FixPlan, runs: &mut Runs, task: &str) -> FixOutcome {
        if plan.rollback_last {
            if let Some(snapshot) = self.last.take() {
                let files: Vec<String> = snapshot.files().map(str::to_string).collect();
                match snapshot.restore() {
                    Ok(()) => tracing::info!("rolled back the last fix ({})", files.join(", ")),
                    Err(e) => tracing::error!("rolling back the last fix failed: {e}"),
                }
                runs.edited.extend(files);
            }
        }
        let broken = environment_failures(plan, runs);
        if !broken.is_empty() {
            return FixOutcome::Environment {
                tests: broken.iter().map(|(t, _)| t.clone()).collect(),
                reason: format!(
                    "the environment is broken, not the code: {}",
                    broken
                        .iter()
                        .map(|(t, line)| format!("{t}: {line}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            };
        }
        let Some(llm) = &self.llm else {
            return FixOutcome::Unavailable {
                reason: self.missing.clone(),
            };
        };
        let request = FixRequest {
            tests_only: self.policy.tests_only,
            test_edits: self.policy.test_edits,
            strategy: plan.strategy,
            framework: runs.framework.name().to_string(),
            task: task.to_string(),
            failures: plan
                .targets
                .iter()
                .map(|t| (t.clone(), runs.failure_text(t)))
                .collect(),
            files: files_in_scope(runs, &plan.targets, &self.policy),
            feedback: std::mem::take(&mut self.feedback),
        };
        if let Err(e) = self.budget.check() {
            return FixOutcome::Unavailable {
                reason: e.to_string(),
            };
        }
        let model = llm.config().model.clone();
        let reservation = match self.reserve(&model).await {
            Ok(id) => id,
            Err(outcome) => return outcome,
        };
        let Some(llm) = &self.llm else {
            return FixOutcome::Unavailable {
                reason: self.missing.clone(),
            };
        };
        self.calls += 1;
        let before = self.budget.tokens();
        let answer = llm
            .complete(&prompt::messages(&request), &mut self.budget)
            .await;
        self.settle(reservation, &answer, before).await;
        let reply = match answer {
            Ok(r) => r,
            Err(e @ (LlmError::Budget(_) | LlmError::NotConfigured(_) | LlmError::Config(_))) => {
                return FixOutcome::Unavailable {
                    reason: e.to_string(),
                };
            }
            Err(
                e @ (LlmError::Transport(_)
                | LlmError::Status {
                    status: 401 | 403 | 404,
                    ..
                }),
            ) => {
                self.model_failure = Some(e.to_string());
                return FixOutcome::Unavailable {
                    reason: e.to_string(),
                };
            }
            Err(e @ LlmError::Status { status: 500.., .. }) => {
                tracing::warn!("fix attempt ended: {e}");
                return match self.patience.server_error(&e.to_string()) {
                    Next::Unreachable => {
                        self.model_failure = Some(e.to_string());
                        FixOutcome::Unavailable {
                            reason: e.to_string(),
                        }
                    }
                    next => self.after_unusable(next, e.to_string()),
                };
            }
            Err(e) => {
                tracing::warn!("fix attempt ended: {e}");
                let next = self.patience.unusable(&e.to_string());
                return self.after_unusable(next, e.to_string());
            }
        };
        let fix = match crate::llm::parse::parse_fix(&reply) {
            Ok(f) => f,
            Err(reason) => return self.refused(vec![reason]),
        };
        if let Some((category, reason)) = fix.cannot_fix.filter(|_| fix.edits.is_empty()) {
            let category = match category.as_str() {
                "environment" | "architecture" => category,
                _ => "other".into(),
            };
            self.patience.usable();
            return FixOutcome::CannotFix { category, reason };
        }
        let applying = std::time::SystemTime::now();
        match apply(&runs.project, &fix.edits, &self.policy) {
            Ok(applied) => {
                huddle_telemetry::record_in_attempt(
                    "fix_applied",
                    applying,
                    vec![
                        huddle_telemetry::KeyValue::new("huddle.fix.edits", fix.edits.len() as i64),
                        huddle_telemetry::KeyValue::new(
                            "huddle.fix.files",
                            applied.files.join(", "),
                        ),
                    ],
                );
                tracing::info!(
                    "applied {} edit(s) to {}",
                    fix.edits.len(),
                    applied.files.join(", ")
                );
                self.patience.usable();
                runs.edited.extend(applied.files.iter().cloned());
                self.changes.note(&applied);
                self.last_change = Some(FixChange::of(&applied));
                self.last = Some(applied.snapshot);
                FixOutcome::Applied
            }
            Err(refusals) => self.refused(refusals.iter().map(ToString::to_string).collect()),
        }
    }

    fn refused(&mut self, reasons: Vec<String>) -> FixOutcome {
        for r in &reasons {
            tracing::warn!("model reply refused: {r}");
        }
        let reason = format!("refused: {}", reasons.join("; "));
        self.feedback = reasons;
        let next = self.patience.unusable(&reason);
        self.after_unusable(next, reason)
    }

    /// Goes on (the reason goes back to the model) or gives up on the model.
    fn after_unusable(&mut self, next: Next, reason: String) -> FixOutcome {
        match next {
            Next::GiveUp(why) => {
                tracing::warn!("giving up on the model: {why}");
                self.gave_up = Some(why.clone());
                FixOutcome::Unavailable { reason: why }
            }
            _ => FixOutcome::NotApplied { reason },
        }
    }
}

/// The targets whose failure text no code change fixes — a missing package or program, a
/// service that is not there, a broken fixture, a tier that could not run — each with the line
/// that says so (the runners' infrastructure class, [`failure_class`]).
///
/// [`failure_class`]: crate::runners::tiers::failure_class
fn environment_failures(plan: &FixPlan, runs: &Runs) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for t in &plan.targets {
        let text = runs.failure_text(t);
        let line = if t.starts_with(super::tiered::TIER_ENTRY_PREFIX) {
            Some(text.lines().next().unwrap_or(t).to_string())
        } else {
            crate::runners::tiers::failure_class::infrastructure_line(&text)
        };
        if let Some(line) = line {
            found.push((t.clone(), crate::runners::scrub::scrub(&line).into_owned()));
        }
    }
    found
}
