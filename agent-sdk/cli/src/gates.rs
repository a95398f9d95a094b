//! `huddle gate` and `huddle answer`: hold a pending task until a person answers a question
//! or decides, and answer it (coordinator token). `huddle task ls --owner human --status
//! pending` lists the open questions.

use crate::output;
use crate::{CliResult, Ctx};
use clap::Args;
use huddle_sdk::wire::{AnswerRequest, Decision, GateKind, GateRequest};

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The pending task to hold, e.g. TEST-001.
    pub id: String,
    /// What the person must answer before a worker may claim it.
    pub question: String,
    /// Ask for a decision: the person approves (releases the task) or rejects (cancels it),
    /// and an answer alone is refused.
    #[arg(long)]
    pub approval: bool,
    /// Only a person may answer: a `lead` token (coordinators, MCP sessions and other agents
    /// are refused).
    #[arg(long)]
    pub person_only: bool,
    /// Decide for the person if no one has by then: a duration from now (`30m`, `2h`, `1d`)
    /// or an RFC 3339 time. --on-deadline says which decision (default: reject).
    #[arg(long, value_name = "WHEN")]
    pub deadline: Option<String>,
    /// The decision the deadline takes: approve or reject (a person-only gate: reject only).
    #[arg(long, value_name = "DECISION", requires = "deadline", value_parser = decision)]
    pub on_deadline: Option<Decision>,
}

fn decision(text: &str) -> Result<Decision, String> {
    match text {
        "approve" => Ok(Decision::Approve),
        "reject" => Ok(Decision::Reject),
        other => Err(format!("`{other}` is not a decision (approve or reject)")),
    }
}

/// `--deadline`: an RFC 3339 time as it is, or a duration from now.
fn deadline_at(text: &str) -> Result<String, String> {
    if chrono::DateTime::parse_from_rfc3339(text).is_ok() {
        return Ok(text.to_string());
    }
    let after = crate::parse::duration(text)
        .map_err(|e| format!("--deadline: {e} (or give an RFC 3339 time)"))?;
    let after = chrono::Duration::from_std(after).map_err(|e| format!("--deadline: {e}"))?;
    Ok((chrono::Utc::now() + after).to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("decision").args(["approve", "reject"]))]
pub struct AnswerArgs {
    /// The question, e.g. HUMAN-001.
    pub id: String,
    /// The answer, in plain words; kept as the question's result (with --reject: the reason).
    pub answer: Option<String>,
    /// Approve: the task it held may be claimed.
    #[arg(long)]
    pub approve: bool,
    /// Reject, with an optional reason: the task it held is cancelled for good.
    #[arg(long, value_name = "REASON", num_args = 0..=1, default_missing_value = "")]
    pub reject: Option<String>,
}

pub async fn gate(ctx: &Ctx, args: GateArgs) -> CliResult {
    let kind = match args.approval {
        true => GateKind::Approval,
        false => GateKind::Question,
    };
    let request = GateRequest {
        question: args.question,
        kind,
        person_only: args.person_only,
        deadline: args.deadline.as_deref().map(deadline_at).transpose()?,
        on_deadline: args.on_deadline,
    };
    let gated = ctx.client.gate_task_with(&args.id, &request).await?;
    if ctx.json {
        return output::json(&gated);
    }
    let how = match kind {
        GateKind::Approval => "--approve or --reject \"why\"",
        GateKind::Question => "\"…\"",
    };
    let gate = &gated.question.metadata["gate"];
    let mut who = String::new();
    if request.person_only || gate["personOnly"] == true {
        who.push_str(" (a lead decides)");
    }
    if let Some(deadline) = gate["deadline"].as_str() {
        let default = gate["onDeadline"].as_str().unwrap_or("reject");
        who.push_str(&format!(" (at {deadline}: {default} by default)"));
    }
    output::line(&format!(
        "{} waits for {}{who}: answer with `huddle answer {} {how}`",
        gated.task.id, gated.question.id, gated.question.id
    ))
}

pub async fn answer(ctx: &Ctx, args: AnswerArgs) -> CliResult {
    // `--reject "why"` carries the reason; a positional answer may give it instead.
    let (decision, answer) = match args.reject {
        Some(reason) => (
            Some(Decision::Reject),
            Some(reason).filter(|r| !r.is_empty()).or(args.answer),
        ),
        None if args.approve => (Some(Decision::Approve), args.answer),
        None => (None, args.answer),
    };
    let request = AnswerRequest { answer, decision };
    let task = ctx.client.decide(&args.id, &request).await?;
    if ctx.json {
        return output::json(&task);
    }
    let held = task.metadata["gate"]["for"].as_str().unwrap_or("the task");
    output::line(&match decision {
        Some(Decision::Reject) => format!("rejected {}; {held} is cancelled", task.id),
        // The daemon refuses a withdrawn question (its task cancelled), so the task is open.
        Some(Decision::Approve) => format!("approved {}; {held} may be claimed now", task.id),
        None => format!("answered {}; {held} may be claimed now", task.id),
    })
}
