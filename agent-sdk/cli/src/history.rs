//! `huddle history`: the team's test history for a project — its runs with their pass rates
//! (the trend), or with `--flaky` the tests that passed and failed on one tree, or with
//! `--regressions` the tests failing now that passed the last time they ran.

use crate::output::{self, Table};
use crate::{CliResult, Ctx};
use clap::Args;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The project (as the workers name it: the task's metadata `project`, else the checkout's
    /// git origin, else the directory's name); the one posted to last when absent.
    #[arg(long)]
    project: Option<String>,
    /// Tests that passed and failed on the same tree, most flaky first.
    #[arg(long, conflicts_with = "regressions")]
    flaky: bool,
    /// Only runs on this tree count (with `--flaky`).
    #[arg(long, requires = "flaky")]
    tree: Option<String>,
    /// Tests failing in the latest run that passed the last time they ran before it.
    #[arg(long)]
    regressions: bool,
    /// Only one test tier's runs (unit, pbt, integration, e2e): its trend or regressions.
    #[arg(long, conflicts_with = "flaky")]
    tier: Option<String>,
}

pub async fn run(ctx: &Ctx, args: HistoryArgs) -> CliResult {
    let project = args.project.as_deref();
    if args.flaky {
        return flaky(ctx, project, args.tree.as_deref()).await;
    }
    if args.regressions {
        return regressions(ctx, project, args.tier.as_deref()).await;
    }
    let history = match &args.tier {
        Some(tier) => ctx.client.tier_history(project, tier).await?,
        None => ctx.client.test_history(project).await?,
    };
    if ctx.json {
        return output::json(&history);
    }
    let Some(name) = &history.project else {
        return output::line("no test history yet: testers post each full run of their suite");
    };
    let change = history.pass_rate_change.map_or(String::new(), |c| {
        format!(" · {c:+.1} points since the first")
    });
    output::line(&format!(
        "project {name} · {} run(s){change}",
        history.runs.len()
    ))?;
    if history.projects.len() > 1 {
        output::line(&format!("projects: {}", history.projects.join(", ")))?;
    }
    output::line("")?;
    let mut table = Table::new(&[
        "RUN",
        "STARTED",
        "AGENT",
        "TREE",
        "PASSED",
        "FAILED",
        "ERRORS",
        "SKIPPED",
        "PASS RATE",
    ]);
    for r in &history.runs {
        table.row(vec![
            r.id.to_string(),
            r.started_at.clone(),
            r.agent.clone(),
            short(&r.tree),
            r.passed.to_string(),
            r.failed.to_string(),
            r.errors.to_string(),
            r.skipped.to_string(),
            format!("{:.1}%", r.pass_rate),
        ]);
    }
    table.print()
}

async fn flaky(ctx: &Ctx, project: Option<&str>, tree: Option<&str>) -> CliResult {
    let f = ctx.client.flaky_tests(project, tree).await?;
    if ctx.json {
        return output::json(&f);
    }
    let scope = f
        .tree
        .as_deref()
        .map_or("".to_string(), |t| format!(" on tree {}", short(t)));
    if f.tests.is_empty() {
        return output::line(&format!("no flaky test in {} run(s){scope}", f.runs));
    }
    output::line(&format!(
        "{} flaky test(s) in {} run(s){scope}: passed and failed on the same tree",
        f.tests.len(),
        f.runs
    ))?;
    output::line("")?;
    let mut table = Table::new(&["SCORE", "PASSES", "FAILURES", "TREES", "TEST"]);
    for t in &f.tests {
        table.row(vec![
            format!("{:.2}", t.score),
            t.passes.to_string(),
            t.failures.to_string(),
            t.trees.to_string(),
            t.nodeid.clone(),
        ]);
    }
    table.print()
}

async fn regressions(ctx: &Ctx, project: Option<&str>, tier: Option<&str>) -> CliResult {
    let r = match tier {
        Some(tier) => ctx.client.tier_regressions(project, tier).await?,
        None => ctx.client.test_regressions(project).await?,
    };
    if ctx.json {
        return output::json(&r);
    }
    if r.tests.is_empty() {
        return output::line("no regression: nothing fails now that passed the last time");
    }
    output::line(&format!(
        "{} regression(s): failing in the latest run, passed the last time before",
        r.tests.len()
    ))?;
    output::line("")?;
    let mut table = Table::new(&["OUTCOME", "LAST PASSED", "FAILS IN", "FLAKY", "TEST"]);
    for t in &r.tests {
        table.row(vec![
            t.outcome.as_str().to_string(),
            format!(
                "run {} ({})",
                t.last_passing_run.id,
                short(&t.last_passing_run.tree)
            ),
            format!("run {} ({})", t.failing_run.id, short(&t.failing_run.tree)),
            if t.flaky { "yes" } else { "no" }.to_string(),
            t.nodeid.clone(),
        ]);
    }
    table.print()
}

/// The first 12 characters of a tree hash, as git shortens them.
fn short(tree: &str) -> String {
    tree.chars().take(12).collect()
}
