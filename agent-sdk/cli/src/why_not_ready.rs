//! `huddle task why-not-ready ID`: what keeps a task from being claimed, one line per reason.

use crate::output;
use crate::{CliResult, Ctx};

pub async fn run(ctx: &Ctx, id: &str) -> CliResult {
    let answer = ctx.client.why_not_ready(id).await?;
    if ctx.json {
        return output::json(&answer);
    }
    if answer.reasons.is_empty() {
        return output::line(&format!("{}: claimable now", answer.id));
    }
    for reason in &answer.reasons {
        output::line(&format!("{}: {}", answer.id, reason.message))?;
    }
    Ok(())
}
