//! A whole team on PostgreSQL (`store::team_admin`). Deletion locks the team's row first (the
//! team's writes on every replica finish before it, and those queued behind it find no team),
//! empties every table in one transaction and announces the deletion on [`TEAM_DELETED`], so
//! every replica drops the team's tokens and ends its streams. An import is one transaction.

use super::super::error::{StoreError, StoreResult};
use super::super::quotas::check_settings_record;
use super::super::rules::fmt_time;
use super::super::team_admin::{
    check_import, duplicate_team, import_error, records_cut_short, ImportRecords, TeamAdminStore,
    AFTER_IMPORT_CHECKS, EXPORT_BUFFER, RECOUNT_BLOCKERS, TEAM_TABLES,
};
use super::super::transfer::{Record, TeamRecord};
use super::db::PoolTx;
use super::{export, PostgresStore};
use async_trait::async_trait;
use huddle_wire::Team;
use tokio::sync::mpsc;

/// The NOTIFY channel a deletion is announced on; the payload is the team's id.
pub const TEAM_DELETED: &str = "huddle_team_deleted";

#[async_trait]
impl TeamAdminStore for PostgresStore {
    #[tracing::instrument(skip(self))]
    async fn delete_team(&self, team_id: i64) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        // The team's rows before its row: claims and completions lock task rows and take the
        // team's row last (`tx.rs`), so this order waits for them rather than deadlocking.
        sqlx::query("select 1 from tasks where team_id = $1 order by id for update")
            .bind(team_id)
            .execute(tx.db())
            .await?;
        let found: Option<i64> =
            sqlx::query_scalar("select id from teams where id = $1 for update")
                .bind(team_id)
                .fetch_optional(tx.db())
                .await?;
        if found.is_none() {
            return Err(StoreError::not_found(format!("team {team_id}")));
        }
        for table in TEAM_TABLES {
            let sql = match table {
                "teams" => "delete from teams where id = $1".to_string(),
                // Outcomes go with their runs (`on delete cascade`); SQLite's search marks
                // have no table here.
                "test_outcomes" | "messages_fts_mark" => continue,
                other => format!("delete from {other} where team_id = $1"),
            };
            sqlx::query(&sql).bind(team_id).execute(tx.db()).await?;
        }
        sqlx::query("select pg_notify($1, $2)")
            .bind(TEAM_DELETED)
            .bind(team_id.to_string())
            .execute(tx.db())
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn export_team(&self, team_id: i64) -> StoreResult<mpsc::Receiver<StoreResult<Record>>> {
        let (out, records) = mpsc::channel(EXPORT_BUFFER);
        let pool = self.pool.clone();
        tokio::spawn(async move {
            if let Err(e) = export::export(&pool, team_id, &out).await {
                let _ = out.send(Err(e)).await;
            }
        });
        Ok(records)
    }

    #[tracing::instrument(skip_all, fields(team = %team.name))]
    async fn import_team(&self, team: TeamRecord, mut records: ImportRecords) -> StoreResult<Team> {
        check_import(&team)?;
        let mut tx = self.pool.begin().await?;
        let id: Option<i64> = sqlx::query_scalar(
            "insert into teams (name, created_at, msg_seq, event_seq, memory_doc, memory_version)
             values ($1, $2, $3, $4, $5, $6) on conflict (name) do nothing returning id",
        )
        .bind(&team.name)
        .bind(team.created_at)
        .bind(team.msg_seq)
        .bind(team.event_seq)
        .bind(team.memory.get())
        .bind(team.memory_version)
        .fetch_optional(tx.db())
        .await?;
        let Some(id) = id else {
            return Err(duplicate_team(&team.name));
        };
        let mut ended = false;
        while let Some((line, record)) = records.recv().await {
            ended |= matches!(record, Record::End(_));
            let kind = record.kind();
            if let Record::Settings(settings) = &record {
                check_settings_record(settings).map_err(|why| import_error(line, kind, &why))?;
            }
            if let Err(e) = insert(&mut tx, id, record).await {
                return Err(match e {
                    sqlx::Error::Database(db) => import_error(line, kind, db.message()),
                    other => other.into(),
                });
            }
        }
        if !ended {
            return Err(records_cut_short());
        }
        sqlx::query(RECOUNT_BLOCKERS)
            .bind(id)
            .execute(tx.db())
            .await?;
        for (sql, field) in AFTER_IMPORT_CHECKS {
            let problem: Option<String> = sqlx::query_scalar(&format!("{sql} limit 1"))
                .bind(id)
                .fetch_optional(tx.db())
                .await?;
            if let Some(problem) = problem {
                return Err(StoreError::invalid(field, problem));
            }
        }
        tx.commit().await?;
        Ok(Team {
            name: team.name,
            created_at: fmt_time(team.created_at),
        })
    }
}

/// One record's rows (an unknown column value is the database's to refuse).
async fn insert(tx: &mut PoolTx, team: i64, record: Record) -> Result<(), sqlx::Error> {
    match record {
        Record::Team(_) | Record::End(_) => {}
        Record::Agent(a) => {
            sqlx::query(
                "insert into agents (team_id, name, role, token_hash, created_at, last_seen_at,
                     inbox_cursor, revoked_at)
                 values ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(team)
            .bind(a.name)
            .bind(a.role.as_str())
            .bind(a.token_hash)
            .bind(a.created_at)
            .bind(a.last_seen_at)
            .bind(a.inbox_cursor)
            .bind(a.revoked_at)
            .execute(tx.db())
            .await?;
        }
        Record::Counter(c) => {
            sqlx::query(
                "insert into task_counters (team_id, prefix, next_number) values ($1, $2, $3)",
            )
            .bind(team)
            .bind(c.prefix)
            .bind(c.next_number)
            .execute(tx.db())
            .await?;
        }
        Record::Task(t) => {
            sqlx::query(
                "with task as (
                     insert into tasks (team_id, id, prefix, number, subject, description,
                         active_form, status, owner, claimed_by, attempts, max_attempts, metadata,
                         result, failure_reason, version, created_at, updated_at)
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                         $16, $17, $18)
                     returning id
                 )
                 insert into task_deps (team_id, task_id, blocker_id)
                 select $1, task.id, b from task, unnest($19::text[]) as b",
            )
            .bind(team)
            .bind(&t.id)
            .bind(t.prefix)
            .bind(t.number)
            .bind(t.subject)
            .bind(t.description)
            .bind(t.active_form)
            .bind(t.status.as_str())
            .bind(t.owner)
            .bind(t.claimed_by)
            .bind(t.attempts)
            .bind(t.max_attempts)
            .bind(t.metadata.get())
            .bind(t.result.as_ref().map(|r| r.get()))
            .bind(t.failure_reason)
            .bind(t.version)
            .bind(t.created_at)
            .bind(t.updated_at)
            .bind(&t.blocked_by)
            .execute(tx.db())
            .await?;
        }
        Record::Message(m) => {
            sqlx::query(
                "insert into messages (team_id, seq, id, sender, recipient, type, summary, data,
                     created_at)
                 values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(team)
            .bind(m.seq)
            .bind(m.id)
            .bind(m.from)
            .bind(m.to)
            .bind(m.kind)
            .bind(m.summary)
            .bind(m.data.get())
            .bind(m.created_at)
            .execute(tx.db())
            .await?;
        }
        Record::IdempotencyKey(k) => {
            sqlx::query(
                "insert into idempotency_keys (team_id, agent, key, seq) values ($1, $2, $3, $4)",
            )
            .bind(team)
            .bind(k.agent)
            .bind(k.key)
            .bind(k.seq)
            .execute(tx.db())
            .await?;
        }
        Record::Event(e) => {
            sqlx::query(
                "insert into events (team_id, seq, type, data, created_at)
                 values ($1, $2, $3, $4, $5)",
            )
            .bind(team)
            .bind(e.seq)
            .bind(e.kind)
            .bind(e.data.get())
            .bind(e.created_at)
            .execute(tx.db())
            .await?;
        }
        Record::MemoryChange(h) => {
            sqlx::query(
                "insert into memory_history (team_id, version, agent, kind, patch, created_at)
                 values ($1, $2, $3, $4, $5, $6)",
            )
            .bind(team)
            .bind(h.version)
            .bind(h.agent)
            .bind(h.kind)
            .bind(h.patch.get())
            .bind(h.created_at)
            .execute(tx.db())
            .await?;
        }
        Record::TestRun(r) => {
            let (nodeids, outcomes): (Vec<String>, Vec<i64>) = r.outcomes.into_iter().unzip();
            sqlx::query(
                "with run as (
                     insert into test_runs (team_id, project, tree, agent, started_at, created_at,
                         passed, failed, skipped, errors, tier)
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $13)
                     returning id
                 )
                 insert into test_outcomes (run_id, nodeid, outcome)
                 select run.id, o.nodeid, o.outcome::smallint
                 from run, unnest($11::text[], $12::bigint[]) as o(nodeid, outcome)",
            )
            .bind(team)
            .bind(r.project)
            .bind(r.tree)
            .bind(r.agent)
            .bind(r.started_at)
            .bind(r.created_at)
            .bind(r.passed)
            .bind(r.failed)
            .bind(r.skipped)
            .bind(r.errors)
            .bind(nodeids)
            .bind(outcomes)
            .bind(r.tier)
            .execute(tx.db())
            .await?;
        }
        Record::Settings(r) => {
            sqlx::query(
                "insert into team_settings (team_id, max_tasks, max_edges, max_messages,
                     max_storage_bytes, retention)
                 values ($1, $2, $3, $4, $5, $6)",
            )
            .bind(team)
            .bind(r.max_tasks)
            .bind(r.max_edges)
            .bind(r.max_messages)
            .bind(r.max_storage_bytes)
            .bind(r.retention.get())
            .execute(tx.db())
            .await?;
        }
        Record::Webhook(w) => {
            sqlx::query(
                "insert into webhooks (team_id, url, secret, events, created_by, created_at,
                     message_cursor, event_cursor)
                 values ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(team)
            .bind(w.url)
            .bind(w.secret)
            .bind(w.events.get())
            .bind(w.created_by)
            .bind(w.created_at)
            .bind(w.message_cursor)
            .bind(w.event_cursor)
            .execute(tx.db())
            .await?;
        }
    }
    Ok(())
}
