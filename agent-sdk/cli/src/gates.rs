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
    };
    let gated = ctx.client.gate_task_with(&args.id, &request).await?;
    if ctx.json {
        return output::json(&gated);
    }
    let how = match kind {
        GateKind::Approval => "--approve or --reject \"why\"",
        GateKind::Question => "\"…\"",
    };
    output::line(&format!(
        "{} waits for {}: answer with `huddle answer {} {how}`",
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
