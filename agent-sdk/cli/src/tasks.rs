//! `huddle task …`: the shared task list.

use crate::output::{self, Table};
use crate::parse;
use crate::{CliResult, Ctx};
use clap::Subcommand;
use huddle_sdk::wire::ClaimRequest;
use huddle_sdk::wire::{GateKind, GateRequest, NewTask, Task, TaskPatch, TaskStatus};
use huddle_sdk::TaskQuery;
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Create a task: give an id (TEST-007) or only a prefix (TEST) to get the next number.
    Add {
        /// `TEST-007`, or `TEST` for the daemon to number it.
        id_or_prefix: String,
        /// One line saying what to do.
        subject: String,
        /// The details: what to test, where, how to know it is done.
        #[arg(long)]
        description: Option<String>,
        /// Present-tense label while running ("Running the unit tests").
        #[arg(long)]
        active_form: Option<String>,
        /// Only this agent name or role may claim it.
        #[arg(long)]
        owner: Option<String>,
        /// Tasks that must be completed first (repeat, or separate with commas).
        #[arg(long, value_delimiter = ',')]
        blocked_by: Vec<String>,
        /// A JSON object kept with the task.
        #[arg(long, value_parser = parse::json)]
        metadata: Option<serde_json::Value>,
        /// Lease expiries allowed before the task fails.
        #[arg(long)]
        max_attempts: Option<i64>,
        /// Ask a person first: the task is created held by this question, in one step, so no
        /// waiting worker claims it before.
        #[arg(long, value_name = "QUESTION")]
        gate: Option<String>,
        /// With --gate: ask for a decision (approve or reject), not an open answer.
        #[arg(long, requires = "gate")]
        approval: bool,
        /// With --gate: only a person (a `lead` token) may answer it.
        #[arg(long, requires = "gate")]
        person_only: bool,
        /// Set the metadata `scope` (the files the fix may touch, which the daemon keeps apart
        /// from other tasks in progress) from the test files in metadata `paths`: those files
        /// and the source files they are named after, found in this checkout.
        #[arg(long, value_name = "CHECKOUT", num_args = 0..=1, default_missing_value = ".")]
        scope_from_tests: Option<std::path::PathBuf>,
    },
    /// List tasks (all pages, or up to --limit).
    Ls {
        /// pending, in_progress, completed, failed or cancelled.
        #[arg(long, value_parser = status)]
        status: Option<TaskStatus>,
        /// Only tasks for this agent name or role.
        #[arg(long)]
        owner: Option<String>,
        /// Only ids with this prefix (`TEST`).
        #[arg(long)]
        prefix: Option<String>,
        /// Only pending tasks whose blockers are all completed.
        #[arg(long)]
        ready: bool,
        /// At most this many tasks.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Show one task with its blockers and dependents.
    Show {
        /// The task (`TEST-001`).
        id: String,
    },
    /// Bring a task's fix branch (`huddle/<id>`, from a worker's worktree) into the current
    /// branch: a merge commit, or with --rebase its commits replayed on top. A conflict
    /// leaves the checkout as it was and tells the coordinators (fix_required).
    Merge {
        /// The task (`TEST-001`).
        id: String,
        /// Replay the branch's commits (linear history) instead of a merge commit.
        #[arg(long)]
        rebase: bool,
        /// The checkout to merge in (default: the current directory).
        #[arg(long, default_value = ".")]
        project: std::path::PathBuf,
    },
    /// Why a task is not handed to a claim now: blockers, a question for a person, or a file
    /// scope (metadata `scope`) overlapping a task in progress. Nothing listed: claimable.
    WhyNotReady {
        /// The task (`TEST-001`).
        id: String,
    },
    /// Change a task's fields; --if-match makes it fail if the task changed since you read it.
    Update {
        /// The task (`TEST-001`).
        id: String,
        /// A new one-line subject.
        #[arg(long)]
        subject: Option<String>,
        /// A new description.
        #[arg(long)]
        description: Option<String>,
        /// A new present-tense label.
        #[arg(long)]
        active_form: Option<String>,
        /// pending, in_progress, completed, failed or cancelled.
        #[arg(long, value_parser = status)]
        status: Option<TaskStatus>,
        /// Only this agent name or role may claim it.
        #[arg(long, conflicts_with = "clear_owner")]
        owner: Option<String>,
        /// Remove the owner so anyone may claim it.
        #[arg(long)]
        clear_owner: bool,
        /// Tasks that must be completed first, added (repeat, or separate with commas).
        #[arg(long, value_delimiter = ',')]
        add_blocked_by: Vec<String>,
        /// Blockers to drop (repeat, or separate with commas).
        #[arg(long, value_delimiter = ',')]
        remove_blocked_by: Vec<String>,
        /// A JSON object merged into the metadata.
        #[arg(long, value_parser = parse::json)]
        metadata: Option<serde_json::Value>,
        /// The version you read (412 if it moved on).
        #[arg(long)]
        if_match: Option<i64>,
        /// With `--status completed`: complete it although its blockers are not completed.
        #[arg(long)]
        force: bool,
    },
    /// Complete a task (the holder, or a coordinator).
    Done {
        /// The task (`TEST-001`).
        id: String,
        /// The result, as JSON.
        #[arg(long, value_parser = parse::json)]
        result: Option<serde_json::Value>,
    },
    /// Fail an attempt at a task, with a reason (the holder, or a coordinator): it goes back to
    /// the queue while it has attempts left, and is failed for good on its last one or with
    /// --final.
    Fail {
        /// The task (`TEST-001`).
        id: String,
        /// Why it failed, for the coordinator.
        reason: String,
        /// Fail the task for good now: no retry, its dependents stay blocked.
        #[arg(long = "final")]
        final_: bool,
    },
    /// Claim the next ready task you may do (by your role's prefixes, or --prefix), holding it
    /// under a lease; prints it, or says that none is ready.
    Claim {
        /// Only ids with this prefix (repeat, or separate with commas); your role's by default.
        #[arg(long = "prefix", value_delimiter = ',')]
        prefixes: Vec<String>,
        /// Wait this long for a task to become ready (`30s`, `2m`); at once by default.
        #[arg(long, value_parser = parse::duration)]
        wait: Option<Duration>,
        /// Hold the task this long before it returns to the queue (`5m`); the daemon's
        /// default when absent. Extend it with `huddle task heartbeat`.
        #[arg(long, value_parser = parse::duration)]
        lease: Option<Duration>,
        /// Only tasks of this project (metadata `project`) or that name none.
        #[arg(long)]
        project: Option<String>,
        /// With --project: not the tasks that name no project.
        #[arg(long, requires = "project")]
        strict_project: bool,
    },
    /// Extend the lease on a task you hold.
    Heartbeat {
        /// The task (`TEST-001`).
        id: String,
        /// The new lease, from now (`5m`); the daemon's default when absent.
        #[arg(long, value_parser = parse::duration)]
        lease: Option<Duration>,
    },
    /// Give back a task you hold: it returns to pending without counting an attempt.
    Release {
        /// The task (`TEST-001`).
        id: String,
    },
}

fn status(text: &str) -> Result<TaskStatus, String> {
    TaskStatus::parse(text).ok_or_else(|| {
        format!("unknown status {text:?}: use pending, in_progress, completed, failed or cancelled")
    })
}

pub async fn run(ctx: &Ctx, cmd: TaskCmd) -> CliResult {
    match cmd {
        TaskCmd::Add {
            id_or_prefix,
            subject,
            description,
            active_form,
            owner,
            blocked_by,
            metadata,
            max_attempts,
            gate,
            approval,
            person_only,
            scope_from_tests,
        } => {
            let metadata = match scope_from_tests {
                Some(checkout) => Some(crate::task_scope::from_tests(metadata, &checkout)?),
                None => metadata,
            };
            let (id, prefix) = if parse::is_task_id(&id_or_prefix) {
                (Some(id_or_prefix), None)
            } else {
                (None, Some(id_or_prefix))
            };
            let new = NewTask {
                id,
                prefix,
                subject,
                description,
                active_form,
                owner,
                blocked_by: trimmed(blocked_by),
                metadata,
                max_attempts,
                gate: gate.map(|question| GateRequest {
                    question,
                    kind: match approval {
                        true => GateKind::Approval,
                        false => GateKind::Question,
                    },
                    person_only,
                    deadline: None,
                    on_deadline: None,
                }),
            };
            let task = ctx.client.create_task(&new).await?;
            done(ctx, &task, "created")
        }
        TaskCmd::Ls {
            status,
            owner,
            prefix,
            ready,
            limit,
        } => {
            let query = TaskQuery {
                status,
                owner,
                prefix,
                ready,
                limit: limit.map(|l| l.min(1000)),
                after: None,
            };
            let mut tasks = match limit {
                Some(_) => ctx.client.list_tasks(&query).await?.tasks,
                None => ctx.client.list_all_tasks(&query).await?,
            };
            tasks.truncate(limit.unwrap_or(usize::MAX));
            if ctx.json {
                return output::json(&serde_json::json!({ "tasks": tasks }));
            }
            let mut table = Table::new(&[
                "ID",
                "STATUS",
                "OWNER",
                "CLAIMED BY",
                "BLOCKED BY",
                "SUBJECT",
            ]);
            for t in &tasks {
                table.row(vec![
                    t.id.clone(),
                    t.status.to_string(),
                    output::opt(t.owner.as_deref()),
                    output::opt(t.claimed_by.as_deref()),
                    output::opt(Some(&t.blocked_by.join(","))),
                    t.subject.clone(),
                ]);
            }
            table.print()
        }
        TaskCmd::Show { id } => show(ctx, &id).await,
        TaskCmd::Merge {
            id,
            rebase,
            project,
        } => crate::task_merge::merge(ctx, &id, rebase, &project).await,
        TaskCmd::WhyNotReady { id } => crate::why_not_ready::run(ctx, &id).await,
        TaskCmd::Update {
            id,
            subject,
            description,
            active_form,
            status,
            owner,
            clear_owner,
            add_blocked_by,
            remove_blocked_by,
            metadata,
            if_match,
            force,
        } => {
            let owner = if clear_owner {
                Some(None)
            } else {
                owner.map(Some)
            };
            let patch = TaskPatch {
                subject,
                description,
                active_form,
                status,
                owner,
                add_blocked_by: trimmed(add_blocked_by),
                remove_blocked_by: trimmed(remove_blocked_by),
                metadata,
                force,
            };
            let task = ctx.client.update_task(&id, &patch, if_match).await?;
            done(ctx, &task, "updated")
        }
        TaskCmd::Done { id, result } => {
            let task = ctx.client.complete(&id, result).await?;
            done(ctx, &task, "completed")
        }
        TaskCmd::Fail { id, reason, final_ } => {
            let task = match final_ {
                true => ctx.client.fail_final(&id, &reason).await?,
                false => ctx.client.fail(&id, &reason).await?,
            };
            let how = match task.status {
                TaskStatus::Pending => "requeued after a failed attempt:",
                _ => "failed",
            };
            done(ctx, &task, how)
        }
        TaskCmd::Claim {
            prefixes,
            wait,
            lease,
            project,
            strict_project,
        } => {
            let request = ClaimRequest {
                prefixes: (!prefixes.is_empty()).then(|| trimmed(prefixes)),
                wait_ms: wait.map(|w| w.as_millis() as u64),
                lease_ms: lease.map(|l| l.as_millis() as u64),
                max: None,
                project,
                strict_project,
                model: None,
            };
            match ctx.client.claim(&request).await? {
                Some(task) => done(ctx, &task, "claimed"),
                None if ctx.json => output::json(&serde_json::Value::Null),
                None => output::line("no task is ready for you to claim"),
            }
        }
        TaskCmd::Heartbeat { id, lease } => {
            let task = ctx.client.heartbeat(&id, lease).await?;
            if ctx.json {
                return output::json(&task);
            }
            let until = task.lease_expires_at.as_deref().unwrap_or("-");
            output::line(&format!("{} is yours until {until}", task.id))
        }
        TaskCmd::Release { id } => {
            let task = ctx.client.release(&id).await?;
            done(ctx, &task, "released")
        }
    }
}

/// `--prefix "TEST, QARUN"` and `--blocked-by "A, B"` mean what they say: spaces around the
/// commas are not part of the values.
pub fn trimmed(values: Vec<String>) -> Vec<String> {
    values
        .into_iter()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// After a change: the task as JSON, or one line saying what happened.
fn done(ctx: &Ctx, task: &Task, verb: &str) -> CliResult {
    if ctx.json {
        output::json(task)
    } else {
        output::line(&format!(
            "{verb} {} ({}, version {}): {}",
            task.id, task.status, task.version, task.subject
        ))
    }
}

async fn show(ctx: &Ctx, id: &str) -> CliResult {
    let task = ctx.client.get_task(id).await?;
    let blockers = related(ctx, &task.blocked_by).await?;
    let dependents = related(ctx, &task.blocks).await?;
    if ctx.json {
        return output::json(
            &serde_json::json!({ "task": task, "blockers": blockers, "dependents": dependents }),
        );
    }
    output::line(&format!("{}  {}  {}", task.id, task.status, task.subject))?;
    let mut fields = vec![
        ("owner", output::opt(task.owner.as_deref())),
        ("claimed by", output::opt(task.claimed_by.as_deref())),
        ("lease until", output::opt(task.lease_expires_at.as_deref())),
        (
            "attempts",
            format!("{} of {}", task.attempts, task.max_attempts),
        ),
        ("version", task.version.to_string()),
        ("updated", task.updated_at.clone()),
    ];
    if !task.description.is_empty() {
        fields.push(("description", task.description.clone()));
    }
    if let Some(form) = &task.active_form {
        fields.push(("active form", form.clone()));
    }
    if task.metadata.as_object().is_some_and(|m| !m.is_empty()) {
        fields.push(("metadata", task.metadata.to_string()));
    }
    if let Some(result) = &task.result {
        if let Some(branch) = result["branch"].as_str() {
            let commit = result["commit"].as_str().unwrap_or("-");
            let base = result["base"].as_str().unwrap_or("-");
            fields.push((
                "fix branch",
                format!(
                    "{branch} at {} (from {}); `huddle task merge {}` applies it",
                    &commit[..commit.len().min(12)],
                    &base[..base.len().min(12)],
                    task.id
                ),
            ));
        }
        fields.push(("result", result.to_string()));
    }
    if let Some(reason) = &task.failure_reason {
        fields.push(("failure", reason.clone()));
    }
    for (name, value) in fields {
        output::line(&format!("  {name:<12} {value}"))?;
    }
    for (title, list) in [("blocked by", &blockers), ("blocks", &dependents)] {
        if list.is_empty() {
            output::line(&format!("  {title:<12} -"))?;
            continue;
        }
        output::line(&format!("  {title}:"))?;
        for t in list {
            output::line(&format!("    {}  {}  {}", t.id, t.status, t.subject))?;
        }
    }
    Ok(())
}

/// The tasks named by `ids`, fetched together.
async fn related(ctx: &Ctx, ids: &[String]) -> Result<Vec<Task>, huddle_sdk::Error> {
    futures::future::try_join_all(ids.iter().map(|id| ctx.client.get_task(id))).await
}
