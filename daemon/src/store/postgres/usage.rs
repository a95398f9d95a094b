//! Team settings and the maintained `team_usage` counters on PostgreSQL (`store::quotas`):
//! the per-statement triggers of migration 0005 keep the counters in every write's
//! transaction, in one of a team's slots (migration 0008), except task updates and posted
//! messages, which the write's `Tx` counts on commit (migrations 0018 and 0019); this file
//! reads them (summed), counts an import's messages and stores the admin's overrides.

use super::super::error::StoreResult;
use super::super::quotas::{
    self, questions_from_text, questions_to_text, quota_from_column, retention_from_text,
    retention_to_text, QuotaStore, TeamCounters,
};
use super::super::rules::quota::{Quotas, TeamBudget};
use super::db::Db;
use super::PostgresStore;
use crate::config::LimitSettings;
use async_trait::async_trait;
use huddle_wire::{TeamQuotas, TeamRetention, TeamSettings, TeamUsage};
use sqlx::postgres::PgRow;
use sqlx::Row;

/// Counts an imported team's messages and their bytes into its usage, once, after they are
/// all in: no trigger counts inserted messages (migration 0019). Slot 64, the one the commit
/// statement writes (`tx.rs`); the team is new and invisible to others until the commit.
pub async fn count_imported_messages(db: Db<'_>, team_id: i64) -> StoreResult<()> {
    sqlx::query(
        "insert into team_usage as u (team_id, slot, messages, storage_bytes)
         select $1, 64::smallint, count(*),
                coalesce(sum(octet_length(summary) + octet_length(data)), 0)::bigint
         from messages where team_id = $1
         on conflict (team_id, slot) do update set
             messages = u.messages + excluded.messages,
             storage_bytes = u.storage_bytes + excluded.storage_bytes",
    )
    .bind(team_id)
    .execute(db)
    .await?;
    Ok(())
}

/// A team's use, summed over its slots (migration 0008): tasks, edges, messages, bytes.
const USAGE: &str = "sum(u.tasks_pending + u.tasks_in_progress + u.tasks_completed
                         + u.tasks_failed + u.tasks_cancelled)::bigint,
                     sum(u.edges)::bigint, sum(u.messages)::bigint, sum(u.storage_bytes)::bigint";

fn usage_at(r: &PgRow, i: usize) -> sqlx::Result<TeamUsage> {
    let n = |k: usize| -> sqlx::Result<u64> { Ok(r.try_get::<i64, _>(i + k)?.max(0) as u64) };
    Ok(TeamUsage {
        tasks: n(0)?,
        edges: n(1)?,
        messages: n(2)?,
        storage_bytes: n(3)?,
    })
}

fn quotas_at(r: &PgRow, i: usize) -> sqlx::Result<TeamQuotas> {
    let q = |k: usize| -> sqlx::Result<Option<u64>> {
        Ok(quota_from_column(r.try_get::<Option<i64>, _>(i + k)?))
    };
    Ok(TeamQuotas {
        max_tasks: q(0)?,
        max_edges: q(1)?,
        max_messages: q(2)?,
        max_storage_bytes: q(3)?,
    })
}

/// The team's use and the quotas in force, read in the write's transaction (one row).
pub async fn budget(
    conn: impl sqlx::PgExecutor<'_>,
    team_id: i64,
    limits: &LimitSettings,
) -> StoreResult<TeamBudget> {
    let row = sqlx::query(&format!(
        "select {USAGE}, s.max_tasks, s.max_edges, s.max_messages, s.max_storage_bytes
         from team_usage u left join team_settings s on s.team_id = u.team_id
         where u.team_id = $1
         group by s.max_tasks, s.max_edges, s.max_messages, s.max_storage_bytes"
    ))
    .bind(team_id)
    .fetch_optional(conn)
    .await?;
    let (used, overrides) = match row {
        Some(r) => (usage_at(&r, 0)?, quotas_at(&r, 4)?),
        None => Default::default(),
    };
    Ok(TeamBudget {
        used,
        quotas: Quotas::effective(limits, &overrides),
    })
}

#[async_trait]
impl QuotaStore for PostgresStore {
    async fn team_settings(&self, team_id: i64) -> StoreResult<(TeamSettings, TeamUsage)> {
        let stored = sqlx::query(
            "select max_tasks, max_edges, max_messages, max_storage_bytes, retention, questions
             from team_settings where team_id = $1",
        )
        .bind(team_id)
        .fetch_optional(self.pool.read().await?.db())
        .await?;
        let settings = match stored {
            Some(r) => TeamSettings {
                quotas: quotas_at(&r, 0)?,
                retention: retention_from_text(&r.try_get::<String, _>(4)?)?,
                questions: questions_from_text(&r.try_get::<String, _>(5)?)?,
            },
            None => TeamSettings::default(),
        };
        let usage = sqlx::query(&format!(
            "select {USAGE} from team_usage u where u.team_id = $1 group by u.team_id"
        ))
        .bind(team_id)
        .fetch_optional(self.pool.read().await?.db())
        .await?
        .map(|r| usage_at(&r, 0))
        .transpose()?
        .unwrap_or_default();
        Ok((settings, usage))
    }

    async fn set_team_settings(&self, team_id: i64, new: TeamSettings) -> StoreResult<()> {
        quotas::check_settings(&new)?;
        let q = &new.quotas;
        let col = |v: Option<u64>| v.map(|v| v as i64);
        // One statement, committed on its own: no named statement outlives it (pgbouncer).
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "insert into team_settings (team_id, max_tasks, max_edges, max_messages,
                                        max_storage_bytes, retention, questions)
             values ($1, $2, $3, $4, $5, $6, $7)
             on conflict (team_id) do update set
                 max_tasks = excluded.max_tasks, max_edges = excluded.max_edges,
                 max_messages = excluded.max_messages,
                 max_storage_bytes = excluded.max_storage_bytes,
                 retention = excluded.retention, questions = excluded.questions",
        )
        .bind(team_id)
        .bind(col(q.max_tasks))
        .bind(col(q.max_edges))
        .bind(col(q.max_messages))
        .bind(col(q.max_storage_bytes))
        .bind(retention_to_text(&new.retention))
        .bind(questions_to_text(&new.questions))
        .execute(tx.db())
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn team_counters(&self) -> StoreResult<Vec<TeamCounters>> {
        let rows = sqlx::query(&format!(
            "select t.name, sum(u.tasks_pending)::bigint, sum(u.tasks_in_progress)::bigint,
                    sum(u.tasks_completed)::bigint, sum(u.tasks_failed)::bigint,
                    sum(u.tasks_cancelled)::bigint, {USAGE}
             from team_usage u join teams t on t.id = u.team_id
             group by t.name order by t.name"
        ))
        .fetch_all(self.pool.read().await?.db())
        .await?;
        rows.iter()
            .map(|r| {
                let mut tasks = [0u64; 5];
                for (i, slot) in tasks.iter_mut().enumerate() {
                    *slot = r.try_get::<i64, _>(1 + i)?.max(0) as u64;
                }
                Ok(TeamCounters {
                    team: r.try_get(0)?,
                    tasks,
                    usage: usage_at(r, 6)?,
                })
            })
            .collect()
    }

    async fn retention_overrides(&self) -> StoreResult<Vec<(i64, TeamRetention)>> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "select team_id, retention from team_settings where retention <> '{}' order by team_id",
        )
        .fetch_all(self.pool.read().await?.db())
        .await?;
        rows.into_iter()
            .map(|(team, text)| Ok((team, retention_from_text(&text)?)))
            .collect()
    }
}
