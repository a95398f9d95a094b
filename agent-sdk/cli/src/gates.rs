//! `huddle gate` and `huddle answer`: hold a pending task until a person answers a question,
//! and answer it (coordinator token). `huddle task ls --owner human --status pending` lists
//! the open questions.

use crate::output;
use crate::{CliResult, Ctx};
use clap::Args;

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The pending task to hold, e.g. TEST-001.
    pub id: String,
    /// What the person must answer before a worker may claim it.
    pub question: String,
}

#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The question, e.g. HUMAN-001.
    pub id: String,
    /// The answer, in plain words; kept as the question's result.
    pub answer: String,
}

pub async fn gate(ctx: &Ctx, args: GateArgs) -> CliResult {
    let gated = ctx.client.gate_task(&args.id, &args.question).await?;
    if ctx.json {
        return output::json(&gated);
    }
    output::line(&format!(
        "{} waits for {}: answer with `huddle answer {} \"…\"`",
        gated.task.id, gated.question.id, gated.question.id
    ))
}

pub async fn answer(ctx: &Ctx, args: AnswerArgs) -> CliResult {
    let task = ctx.client.answer_question(&args.id, &args.answer).await?;
    if ctx.json {
        return output::json(&task);
    }
    let held = task.metadata["gate"]["for"].as_str().unwrap_or("the task");
    output::line(&format!("answered {}; {held} may be claimed now", task.id))
}
