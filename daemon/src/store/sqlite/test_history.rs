//! Test history: runs of a project's suite with their per-test outcomes, the last
//! `[history] runs_per_project` kept per project and tier.

use super::super::error::StoreResult;
use super::super::test_history::{
    artifacts_from_text, artifacts_to_text, check_project_count, check_run, outcome_code,
    outcome_from_code, summary, Counts, HistoryLimits, StoredRun, PROJECTS_IF_NEW,
};
use super::super::types::Caller;
use super::rows::append_event;
use super::writer::WriteCtx;
use huddle_wire::{NewTestRun, TestRunSummary};
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// Stores the run and deletes the project's runs past the limit, in the caller's transaction.
pub fn record(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    run: NewTestRun,
    limits: &HistoryLimits,
) -> StoreResult<TestRunSummary> {
    let checked = check_run(&run, limits)?;
    let team_id = caller.team_id;
    let projects = ctx
        .conn
        .prepare_cached(PROJECTS_IF_NEW)?
        .query_row(params![team_id, run.project], |r| r.get(0))?;
    check_project_count(projects, limits)?;
    let started = checked.started_ms.unwrap_or(ctx.now_ms);
    let c = checked.counts;
    ctx.conn
        .prepare_cached(
            "insert into test_runs (team_id, project, tree, agent, started_at, created_at, passed, failed, skipped, errors, tier, task, artifacts)
             values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?
        .execute(params![
            team_id, run.project, run.tree, caller.agent, started, ctx.now_ms,
            c.passed as i64, c.failed as i64, c.skipped as i64, c.errors as i64, run.tier,
            run.task, artifacts_to_text(&run.artifacts)
        ])?;
    let id = ctx.conn.last_insert_rowid();
    let mut insert = ctx.conn.prepare_cached(
        "insert into test_outcomes (run_id, nodeid, outcome) values (?1, ?2, ?3)",
    )?;
    for o in &run.outcomes {
        insert.execute(params![id, o.nodeid, outcome_code(o.outcome)])?;
    }
    // The runs of this project and tier past the newest `runs_per_project`, outcomes first:
    // a tier's runs do not push the whole suite's out, nor the other way round.
    let old = "select id from test_runs where team_id = ?1 and project = ?2 and tier is ?4 order by id desc limit -1 offset ?3";
    ctx.conn
        .prepare_cached(&format!(
            "delete from test_outcomes where run_id in ({old})"
        ))?
        .execute(params![
            team_id,
            run.project,
            limits.runs_per_project as i64,
            run.tier
        ])?;
    ctx.conn
        .prepare_cached(&format!("delete from test_runs where id in ({old})"))?
        .execute(params![
            team_id,
            run.project,
            limits.runs_per_project as i64,
            run.tier
        ])?;
    let mut stored = summary(id, run.project, run.tree, caller.agent.clone(), started, c);
    stored.tier = run.tier;
    stored.task = run.task;
    stored.artifacts = run.artifacts;
    append_event(ctx, team_id, "history.run", &stored)?;
    Ok(stored)
}

/// The team's projects with kept runs, the one posted to last first.
pub fn projects(conn: &Connection, team_id: i64) -> StoreResult<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "select project from test_runs where team_id = ?1 group by project order by max(id) desc",
    )?;
    let rows = stmt.query_map([team_id], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A project's kept runs, oldest first, with their outcomes when `with_outcomes`.
pub fn runs(
    conn: &Connection,
    team_id: i64,
    project: &str,
    with_outcomes: bool,
) -> StoreResult<Vec<StoredRun>> {
    // Readers run in one read transaction: runs and outcomes come from one snapshot.
    let mut stmt = conn.prepare_cached(
        "select id, tree, agent, started_at, passed, failed, skipped, errors, tier, task, artifacts from test_runs
         where team_id = ?1 and project = ?2 order by id",
    )?;
    let rows = stmt.query_map(params![team_id, project], |r| {
        let counts = Counts {
            passed: r.get::<_, i64>(4)? as u64,
            failed: r.get::<_, i64>(5)? as u64,
            skipped: r.get::<_, i64>(6)? as u64,
            errors: r.get::<_, i64>(7)? as u64,
        };
        let mut summary = summary(
            r.get(0)?,
            project.to_string(),
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            counts,
        );
        summary.tier = r.get(8)?;
        summary.task = r.get(9)?;
        summary.artifacts = artifacts_from_text(r.get(10)?).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(10, rusqlite::types::Type::Text, Box::new(e))
        })?;
        Ok(StoredRun {
            summary,
            outcomes: Vec::new(),
        })
    })?;
    let mut runs: Vec<StoredRun> = rows.collect::<Result<_, _>>()?;
    if with_outcomes && !runs.is_empty() {
        let index: HashMap<i64, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.summary.id, i))
            .collect();
        let mut stmt = conn.prepare_cached(
            "select o.run_id, o.nodeid, o.outcome from test_outcomes o
             join test_runs r on r.id = o.run_id
             where r.team_id = ?1 and r.project = ?2",
        )?;
        let mut rows = stmt.query(params![team_id, project])?;
        while let Some(row) = rows.next()? {
            if let Some(&i) = index.get(&row.get::<_, i64>(0)?) {
                runs[i]
                    .outcomes
                    .push((row.get(1)?, outcome_from_code(row.get(2)?)));
            }
        }
    }
    Ok(runs)
}
