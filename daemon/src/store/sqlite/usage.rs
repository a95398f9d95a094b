//! Team settings and the maintained `team_usage` counters on SQLite (`store::quotas`): the
//! triggers of migration 0006 keep the counters in every write's transaction, except for new
//! tasks, which their write counts once here (migration 0008), and saved tasks, which the
//! writer counts once per batch (`writer.rs`, `UsageDelta`; migration 0014); this file also
//! reads the counters and stores the admin's overrides.

use super::super::error::StoreResult;
use super::super::quotas::{
    self, questions_from_text, questions_to_text, quota_from_column, retention_from_text,
    retention_to_text, QuotaStore, TeamCounters,
};
use super::super::rules::quota::{Quotas, TeamBudget};
use super::SqliteStore;
use crate::config::LimitSettings;
use async_trait::async_trait;
use huddle_wire::{TeamQuotas, TeamRetention, TeamSettings, TeamUsage};
use rusqlite::{params, Connection, OptionalExtension, Row};

const USAGE: &str = "u.tasks_pending + u.tasks_in_progress + u.tasks_completed + u.tasks_failed
                     + u.tasks_cancelled, u.edges, u.messages, u.storage_bytes";

fn usage_at(r: &Row<'_>, i: usize) -> rusqlite::Result<TeamUsage> {
    let n = |k: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i + k)?.max(0) as u64) };
    Ok(TeamUsage {
        tasks: n(0)?,
        edges: n(1)?,
        messages: n(2)?,
        storage_bytes: n(3)?,
    })
}

fn quotas_at(r: &Row<'_>, i: usize) -> rusqlite::Result<TeamQuotas> {
    let q = |k: usize| -> rusqlite::Result<Option<u64>> {
        Ok(quota_from_column(r.get::<_, Option<i64>>(i + k)?))
    };
    Ok(TeamQuotas {
        max_tasks: q(0)?,
        max_edges: q(1)?,
        max_messages: q(2)?,
        max_storage_bytes: q(3)?,
    })
}

/// Counts `tasks` new pending tasks of `bytes` stored bytes into the team's usage: one update
/// for a whole batch, where a trigger per row ran one per task on the shared writer.
pub fn count_new_tasks(conn: &Connection, team_id: i64, tasks: i64, bytes: i64) -> StoreResult<()> {
    conn.prepare_cached(
        "update team_usage set tasks_pending = tasks_pending + ?2, storage_bytes = storage_bytes + ?3
         where team_id = ?1",
    )?
    .execute(params![team_id, tasks, bytes])?;
    Ok(())
}

/// Counts an imported team's tasks (of any status) into its usage, once, after they are all in.
pub fn count_imported_tasks(conn: &Connection, team_id: i64) -> StoreResult<()> {
    conn.prepare_cached(
        "update team_usage set
             tasks_pending = tasks_pending + t.pending,
             tasks_in_progress = tasks_in_progress + t.in_progress,
             tasks_completed = tasks_completed + t.completed,
             tasks_failed = tasks_failed + t.failed,
             tasks_cancelled = tasks_cancelled + t.cancelled,
             storage_bytes = storage_bytes + t.bytes
         from (select coalesce(sum(status = 'pending'), 0) as pending,
                      coalesce(sum(status = 'in_progress'), 0) as in_progress,
                      coalesce(sum(status = 'completed'), 0) as completed,
                      coalesce(sum(status = 'failed'), 0) as failed,
                      coalesce(sum(status = 'cancelled'), 0) as cancelled,
                      coalesce(sum(octet_length(subject) + octet_length(description)
                          + coalesce(octet_length(active_form), 0) + octet_length(metadata)
                          + coalesce(octet_length(result), 0)
                          + coalesce(octet_length(failure_reason), 0)), 0) as bytes
               from tasks where team_id = ?1) as t
         where team_id = ?1",
    )?
    .execute([team_id])?;
    Ok(())
}

/// The team's use and the quotas in force, read in the write's transaction (one row).
pub fn budget(conn: &Connection, team_id: i64, limits: &LimitSettings) -> StoreResult<TeamBudget> {
    let row = conn
        .prepare_cached(&format!(
            "select {USAGE}, s.max_tasks, s.max_edges, s.max_messages, s.max_storage_bytes
             from team_usage u left join team_settings s on s.team_id = u.team_id
             where u.team_id = ?1"
        ))?
        .query_row([team_id], |r| Ok((usage_at(r, 0)?, quotas_at(r, 4)?)))
        .optional()?;
    let (used, overrides) = row.unwrap_or_default();
    Ok(TeamBudget {
        used,
        quotas: Quotas::effective(limits, &overrides),
    })
}

fn settings(conn: &Connection, team_id: i64) -> StoreResult<(TeamSettings, TeamUsage)> {
    let stored = conn
        .prepare_cached(
            "select max_tasks, max_edges, max_messages, max_storage_bytes, retention, questions
             from team_settings where team_id = ?1",
        )?
        .query_row([team_id], |r| {
            Ok((
                quotas_at(r, 0)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
            ))
        })
        .optional()?;
    let settings = match stored {
        Some((quotas, retention, questions)) => TeamSettings {
            quotas,
            retention: retention_from_text(&retention)?,
            questions: questions_from_text(&questions)?,
        },
        None => TeamSettings::default(),
    };
    let usage = conn
        .prepare_cached(&format!(
            "select {USAGE} from team_usage u where u.team_id = ?1"
        ))?
        .query_row([team_id], |r| usage_at(r, 0))
        .optional()?
        .unwrap_or_default();
    Ok((settings, usage))
}

fn counters(conn: &Connection) -> StoreResult<Vec<TeamCounters>> {
    let mut stmt = conn.prepare_cached(&format!(
        "select t.name, u.tasks_pending, u.tasks_in_progress, u.tasks_completed, u.tasks_failed,
                u.tasks_cancelled, {USAGE}
         from team_usage u join teams t on t.id = u.team_id order by t.name"
    ))?;
    let rows = stmt.query_map([], |r| {
        let mut tasks = [0u64; 5];
        for (i, slot) in tasks.iter_mut().enumerate() {
            *slot = r.get::<_, i64>(1 + i)?.max(0) as u64;
        }
        Ok(TeamCounters {
            team: r.get(0)?,
            tasks,
            usage: usage_at(r, 6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn retention_overrides(conn: &Connection) -> StoreResult<Vec<(i64, TeamRetention)>> {
    let rows: Vec<(i64, String)> = conn
        .prepare_cached("select team_id, retention from team_settings where retention <> '{}'")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(team, text)| Ok((team, retention_from_text(&text)?)))
        .collect()
}

#[async_trait]
impl QuotaStore for SqliteStore {
    async fn team_settings(&self, team_id: i64) -> StoreResult<(TeamSettings, TeamUsage)> {
        self.readers.read(move |conn| settings(conn, team_id)).await
    }

    async fn set_team_settings(&self, team_id: i64, new: TeamSettings) -> StoreResult<()> {
        quotas::check_settings(&new)?;
        self.writer()?
            .write_team(team_id, move |ctx| {
                let q = &new.quotas;
                let col = |v: Option<u64>| v.map(|v| v as i64);
                ctx.conn
                    .prepare_cached(
                        "insert into team_settings (team_id, max_tasks, max_edges, max_messages,
                                                    max_storage_bytes, retention, questions)
                         values (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                         on conflict (team_id) do update set
                             max_tasks = excluded.max_tasks, max_edges = excluded.max_edges,
                             max_messages = excluded.max_messages,
                             max_storage_bytes = excluded.max_storage_bytes,
                             retention = excluded.retention,
                             questions = excluded.questions",
                    )?
                    .execute(params![
                        team_id,
                        col(q.max_tasks),
                        col(q.max_edges),
                        col(q.max_messages),
                        col(q.max_storage_bytes),
                        retention_to_text(&new.retention),
                        questions_to_text(&new.questions)
                    ])?;
                Ok(())
            })
            .await
    }

    async fn team_counters(&self) -> StoreResult<Vec<TeamCounters>> {
        self.readers.read(counters).await
    }

    async fn retention_overrides(&self) -> StoreResult<Vec<(i64, TeamRetention)>> {
        self.readers.read(retention_overrides).await
    }
}
