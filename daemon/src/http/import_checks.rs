//! An import checked as the API checks the same writes, with the API's own rules: agents as
//! adding them (name, reserved names, the team's agent limit), tasks as creating them
//! (fields, id, `blockedBy` count, known blockers, no cycle), messages as posting them, test
//! runs as posting them, webhooks' URLs as registering them, the memory as replacing it.
//! Every problem is collected — at most [`MAX_PROBLEMS`] kept, all counted — so one refusal
//! says what is wrong with the whole file, and nothing is written unless there is none.
//!
//! A lead is a person's identity, and a file's token hash is a token its author may know: a
//! lead is therefore restored revoked (its name and role kept, its token refused), for the
//! admin to rotate and hand to the person. No import makes a token that decides a person-only
//! gate.

use crate::config::Settings;
use crate::store::gates::HUMAN;
use crate::store::rules::{
    self, validate, BlockerGraph, IdRequest, MemoryChangeKind, MemoryLimits,
};
use crate::store::test_history::{check_run, HistoryLimits};
use crate::store::transfer::{AgentRecord, MessageRecord, Record, TaskRecord, TestRunRecord};
use crate::store::StoreError;
use crate::webhooks::address;
use huddle_wire::{NewTask, NewTestRun, PostMessage, Role, TestOutcome, TestResultRecord};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Problems kept for the refusal; the rest are only counted.
pub const MAX_PROBLEMS: usize = 50;

/// One thing wrong with one line of the file.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub line: usize,
    pub kind: &'static str,
    /// The record's field, named as the API names it, when the rule names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
}

/// The checks' state while the file goes by: what later records are checked against.
pub struct ImportChecks<'a> {
    settings: &'a Settings,
    /// When leads are revoked.
    now: i64,
    problems: Vec<Problem>,
    /// Problems found, kept or not.
    total: usize,
    /// Every agent's name: messages may be addressed to them.
    agents: HashSet<String>,
    /// Agents whose token works after the import, against `max_agents_per_team`.
    active_agents: usize,
    /// Each task's line, for blockers the file does not hold.
    tasks: HashMap<String, usize>,
    /// `(line, task, blocker)`, checked once every task is known.
    edges: Vec<(usize, String, String)>,
    webhooks: usize,
    revoked_leads: Vec<String>,
}

fn parse(json: &serde_json::value::RawValue) -> Value {
    // Every `Json` of a record was parsed as JSON on the way in.
    serde_json::from_str(json.get()).unwrap_or(Value::Null)
}

impl<'a> ImportChecks<'a> {
    pub fn new(settings: &'a Settings, now: i64) -> Self {
        ImportChecks {
            settings,
            now,
            problems: Vec::new(),
            total: 0,
            agents: HashSet::new(),
            active_agents: 0,
            tasks: HashMap::new(),
            edges: Vec::new(),
            webhooks: 0,
            revoked_leads: Vec::new(),
        }
    }

    fn note(&mut self, line: usize, kind: &'static str, e: StoreError) {
        self.total += 1;
        if self.problems.len() >= MAX_PROBLEMS {
            return;
        }
        let (field, message) = match e {
            StoreError::Invalid { field, message, .. } => (Some(field), message),
            other => (None, other.to_string()),
        };
        self.problems.push(Problem {
            line,
            kind,
            field,
            message,
        });
    }

    fn check<T>(&mut self, line: usize, kind: &'static str, r: Result<T, StoreError>) {
        if let Err(e) = r {
            self.note(line, kind, e);
        }
    }

    /// Checks one record of line `line`; may change it (a lead comes in revoked): then it
    /// answers true, and the record is to be written as changed.
    pub fn record(&mut self, line: usize, record: &mut Record) -> bool {
        let kind = record.kind();
        let limits = &self.settings.limits;
        match record {
            Record::Team(team) => {
                let memory_limits = MemoryLimits {
                    max_depth: limits.max_json_depth,
                    max_bytes: self.settings.memory.max_bytes,
                    history: 1,
                };
                let doc = parse(&team.memory);
                let r = rules::changed_memory(
                    Value::Null,
                    MemoryChangeKind::Replace,
                    &doc,
                    memory_limits,
                );
                self.check(line, kind, r);
            }
            Record::Agent(agent) => return self.agent(line, agent),
            Record::Counter(counter) => {
                let r = validate::prefix("prefix", &counter.prefix);
                self.check(line, kind, r);
            }
            Record::Task(task) => self.task(line, task),
            Record::Message(message) => self.message(line, message),
            Record::TestRun(run) => self.test_run(line, run),
            Record::Webhook(hook) => {
                if let Err(why) = address::check_form(&hook.url) {
                    self.note(line, kind, StoreError::invalid("url", why));
                }
                let events = parse(&hook.events);
                if events.as_array().is_none_or(Vec::is_empty) {
                    let e = StoreError::invalid("events", "name at least one event");
                    self.note(line, kind, e);
                }
                let r = crate::store::webhooks::check_count(
                    self.webhooks as i64,
                    self.settings.webhooks.max_per_team,
                );
                self.check(line, kind, r);
                self.webhooks += 1;
            }
            Record::IdempotencyKey(_)
            | Record::Event(_)
            | Record::MemoryChange(_)
            | Record::Settings(_)
            | Record::End(_) => {}
        }
        false
    }

    fn agent(&mut self, line: usize, agent: &mut AgentRecord) -> bool {
        let kind = "agent";
        self.check(line, kind, validate::name("name", &agent.name));
        if agent.name == HUMAN {
            let e = StoreError::invalid(
                "name",
                "the name \"human\" is reserved: questions for a person are owned by it",
            );
            self.note(line, kind, e);
        }
        self.agents.insert(agent.name.clone());
        // A revoked agent's token is refused whatever its hash; only a working lead changes.
        let mut changed = false;
        if agent.role == Role::Lead && agent.revoked_at.is_none() {
            let revoked = rules::token_change(None, self.now);
            agent.token_hash = revoked.hash;
            agent.revoked_at = Some(revoked.revoked_at.unwrap_or(self.now));
            self.revoked_leads.push(agent.name.clone());
            changed = true;
        }
        if agent.revoked_at.is_none() {
            let r = rules::check_agent_count(
                self.active_agents,
                self.settings.limits.max_agents_per_team,
            );
            self.check(line, kind, r);
            self.active_agents += 1;
        }
        changed
    }

    fn task(&mut self, line: usize, task: &TaskRecord) {
        let kind = "task";
        let limits = &self.settings.limits;
        let new = NewTask {
            id: Some(task.id.clone()),
            prefix: Some(task.prefix.clone()),
            subject: task.subject.clone(),
            description: Some(task.description.clone()),
            active_form: task.active_form.clone(),
            owner: task.owner.clone(),
            blocked_by: task.blocked_by.clone(),
            metadata: Some(parse(&task.metadata)),
            max_attempts: Some(task.max_attempts),
            gate: None,
        };
        let at = |field: &str| field.to_string();
        let r = rules::validate_new_task(&new, &at, limits);
        self.check(line, kind, r);
        match rules::id_request(&new, &at) {
            Ok(IdRequest::Explicit(_, number)) if number != task.number => {
                let e = StoreError::invalid(
                    "number",
                    format!("task {} has number {}, not {number}", task.id, task.number),
                );
                self.note(line, kind, e);
            }
            Ok(_) => {}
            Err(e) => self.note(line, kind, e),
        }
        if let Some(holder) = &task.claimed_by {
            self.check(line, kind, validate::name("claimedBy", holder));
        }
        if let Some(result) = &task.result {
            let r = validate::depth("result", &parse(result), limits.max_json_depth);
            self.check(line, kind, r);
        }
        if let Some(reason) = &task.failure_reason {
            let r = validate::optional_text("failureReason", reason, limits.max_text_chars);
            self.check(line, kind, r);
        }
        for blocker in &task.blocked_by {
            if blocker == &task.id {
                self.note(line, kind, rules::self_blocking(&task.id, "blockedBy"));
            } else {
                self.edges.push((line, task.id.clone(), blocker.clone()));
            }
        }
        self.tasks.insert(task.id.clone(), line);
    }

    fn message(&mut self, line: usize, message: &MessageRecord) {
        let kind = "message";
        self.check(line, kind, validate::name("from", &message.from));
        let post = PostMessage {
            to: message.to.clone(),
            kind: message.kind.clone(),
            summary: message.summary.clone(),
            data: parse(&message.data),
        };
        let r = rules::validate_post(&post, &self.settings.limits);
        self.check(line, kind, r);
        if !rules::is_group_recipient(&post.to) && !self.agents.contains(&post.to) {
            let mut agents: Vec<String> = self.agents.iter().cloned().collect();
            agents.sort();
            self.note(line, kind, rules::unknown_recipient(&post.to, agents));
        }
    }

    fn test_run(&mut self, line: usize, run: &TestRunRecord) {
        let kind = "test_run";
        let mut outcomes = Vec::with_capacity(run.outcomes.len());
        for (nodeid, code) in &run.outcomes {
            let outcome = match code {
                0 => TestOutcome::Passed,
                1 => TestOutcome::Failed,
                2 => TestOutcome::Skipped,
                3 => TestOutcome::Error,
                other => {
                    let e = StoreError::invalid(
                        "outcomes",
                        format!("outcome code {other} of {nodeid} is not 0 to 3"),
                    );
                    self.note(line, kind, e);
                    return;
                }
            };
            outcomes.push(TestResultRecord {
                nodeid: nodeid.clone(),
                outcome,
            });
        }
        let artifacts = match run
            .artifacts
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
        {
            Ok(artifacts) => artifacts,
            Err(e) => {
                let e = StoreError::invalid("artifacts", format!("artifacts: {e}"));
                self.note(line, kind, e);
                return;
            }
        };
        let new = NewTestRun {
            project: run.project.clone(),
            tree: run.tree.clone(),
            started_at: None,
            outcomes,
            tier: run.tier.clone(),
            task: run.task.clone(),
            artifacts,
        };
        let limits = HistoryLimits::new(&self.settings.limits, &self.settings.history);
        self.check(line, kind, check_run(&new, &limits).map(|_| ()));
    }

    /// After the last record: the checks that need the whole file (blockers the file does not
    /// hold, cycles), then the verdict — every problem, or the leads that came in revoked.
    pub fn finish(mut self) -> Result<Vec<String>, (Vec<Problem>, usize)> {
        let edges = std::mem::take(&mut self.edges);
        let mut graph = BlockerGraph::default();
        for (line, task, blocker) in &edges {
            if self.tasks.contains_key(blocker) {
                graph.add(task, blocker);
            } else {
                self.note(*line, "task", rules::unknown_blocker(blocker, "blockedBy"));
            }
        }
        for cycle in graph.cycles(MAX_PROBLEMS) {
            let line = match &cycle {
                StoreError::Conflict { details, .. } => details["cycle"][0]
                    .as_str()
                    .and_then(|task| self.tasks.get(task).copied())
                    .unwrap_or(0),
                _ => 0,
            };
            self.note(line, "task", cycle);
        }
        if self.total > 0 {
            self.problems.sort_by_key(|p| p.line);
            return Err((self.problems, self.total));
        }
        Ok(self.revoked_leads)
    }
}
