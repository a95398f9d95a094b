//! Test history: runs of a project's suite with their per-test outcomes, the last
//! `[history] runs_per_project` kept per project and tier.

use super::super::error::StoreResult;
use super::super::test_history::{
    artifacts_from_text, artifacts_to_text, check_project_count, check_run, outcome_code,
    outcome_from_code, summary, Counts, HistoryLimits, StoredRun, PROJECTS_IF_NEW,
};
use super::super::types::Caller;
use super::rows::append_event;
use super::tx::Tx;
use huddle_wire::{NewTestRun, TestRunSummary};
use std::collections::HashMap;

/// Stores the run and deletes the project's runs past the limit, under the team lock (so the
/// project count and the pruning see every replica's runs).
pub async fn record(
    tx: &mut Tx,
    caller: &Caller,
    run: NewTestRun,
    limits: &HistoryLimits,
) -> StoreResult<TestRunSummary> {
    let checked = check_run(&run, limits)?;
    let team_id = caller.team_id;
    tx.lock_team(team_id).await?;
    let projects: i64 = sqlx::query_scalar(PROJECTS_IF_NEW)
        .bind(team_id)
        .bind(&run.project)
        .fetch_one(tx.conn())
        .await?;
    check_project_count(projects, limits)?;
    let now = tx.now_ms();
    let started = checked.started_ms.unwrap_or(now);
    let c = checked.counts;
    let id: i64 = sqlx::query_scalar(
        "insert into test_runs (team_id, project, tree, agent, started_at, created_at, passed, failed, skipped, errors, tier, task, artifacts)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) returning id",
    )
    .bind(team_id)
    .bind(&run.project)
    .bind(&run.tree)
    .bind(&caller.agent)
    .bind(started)
    .bind(now)
    .bind(c.passed as i64)
    .bind(c.failed as i64)
    .bind(c.skipped as i64)
    .bind(c.errors as i64)
    .bind(&run.tier)
    .bind(&run.task)
    .bind(artifacts_to_text(&run.artifacts))
    .fetch_one(tx.conn())
    .await?;
    let (nodeids, outcomes): (Vec<&str>, Vec<i16>) = run
        .outcomes
        .iter()
        .map(|o| (o.nodeid.as_str(), outcome_code(o.outcome) as i16))
        .unzip();
    sqlx::query(
        "insert into test_outcomes (run_id, nodeid, outcome)
         select $1, n, o from unnest($2::text[], $3::smallint[]) as t(n, o)",
    )
    .bind(id)
    .bind(&nodeids)
    .bind(&outcomes)
    .execute(tx.conn())
    .await?;
    // The runs of this project and tier past the newest `runs_per_project`; their outcomes go
    // with them (cascade). A tier's runs do not push the whole suite's out, nor the other way.
    sqlx::query(
        "delete from test_runs where id in (
             select id from test_runs where team_id = $1 and project = $2
               and tier is not distinct from $4
             order by id desc offset $3)",
    )
    .bind(team_id)
    .bind(&run.project)
    .bind(limits.runs_per_project as i64)
    .bind(&run.tier)
    .execute(tx.conn())
    .await?;
    let mut stored = summary(id, run.project, run.tree, caller.agent.clone(), started, c);
    stored.tier = run.tier;
    stored.task = run.task;
    stored.artifacts = run.artifacts;
    append_event(tx, team_id, "history.run", &stored)?;
    Ok(stored)
}

/// The team's projects with kept runs, the one posted to last first.
pub async fn projects(conn: impl sqlx::PgExecutor<'_>, team_id: i64) -> StoreResult<Vec<String>> {
    Ok(sqlx::query_scalar(
        "select project from test_runs where team_id = $1 group by project order by max(id) desc",
    )
    .bind(team_id)
    .fetch_all(conn)
    .await?)
}

type RunRow = (
    i64,
    String,
    String,
    i64,
    i64,
    i64,
    i64,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A project's kept runs, oldest first, with their outcomes when `with_outcomes`.
pub async fn runs(
    pool: &super::db::Pool,
    team_id: i64,
    project: &str,
    with_outcomes: bool,
) -> StoreResult<Vec<StoredRun>> {
    // One snapshot for runs and outcomes, so a concurrent prune cannot split them.
    let mut tx = pool.begin().await?;
    sqlx::query("set transaction isolation level repeatable read, read only")
        .execute(tx.db())
        .await?;
    let rows: Vec<RunRow> = sqlx::query_as(
        "select id, tree, agent, started_at, passed, failed, skipped, errors, tier, task, artifacts from test_runs
         where team_id = $1 and project = $2 order by id",
    )
    .bind(team_id)
    .bind(project)
    .fetch_all(tx.db())
    .await?;
    let mut runs: Vec<StoredRun> = rows
        .into_iter()
        .map(
            |(id, tree, agent, started, p, f, s, e, tier, task, artifacts)| -> StoreResult<StoredRun> {
                Ok(StoredRun {
                summary: TestRunSummary {
                    tier,
                    task,
                    artifacts: artifacts_from_text(artifacts)?,
                    ..summary(
                        id,
                        project.to_string(),
                        tree,
                        agent,
                        started,
                        Counts {
                            passed: p as u64,
                            failed: f as u64,
                            skipped: s as u64,
                            errors: e as u64,
                        },
                    )
                },
                outcomes: Vec::new(),
            })
            },
        )
        .collect::<StoreResult<_>>()?;
    if with_outcomes && !runs.is_empty() {
        let index: HashMap<i64, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.summary.id, i))
            .collect();
        let rows: Vec<(i64, String, i16)> = sqlx::query_as(
            "select o.run_id, o.nodeid, o.outcome from test_outcomes o
             join test_runs r on r.id = o.run_id
             where r.team_id = $1 and r.project = $2",
        )
        .bind(team_id)
        .bind(project)
        .fetch_all(tx.db())
        .await?;
        for (run_id, nodeid, outcome) in rows {
            if let Some(&i) = index.get(&run_id) {
                runs[i]
                    .outcomes
                    .push((nodeid, outcome_from_code(outcome.into())));
            }
        }
    }
    tx.commit().await?;
    Ok(runs)
}
