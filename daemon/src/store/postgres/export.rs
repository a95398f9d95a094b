//! A team's records from one repeatable-read, read-only transaction (a consistent snapshot
//! while every replica keeps writing), each query's rows streamed from the server and handed
//! over as the receiver takes them. Text is ordered byte-wise (`collate "C"`), as SQLite
//! orders it, so both backends write the same file for the same team.

use super::super::error::{StoreError, StoreResult};
use super::super::transfer::*;
use super::db::Pool;
use futures::TryStreamExt;
use sqlx::postgres::PgRow;
use sqlx::Row;
use tokio::sync::mpsc;

type Out = mpsc::Sender<StoreResult<Record>>;

pub async fn export(pool: &Pool, team_id: i64, out: &Out) -> StoreResult<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("set transaction isolation level repeatable read, read only")
        .execute(tx.db())
        .await?;
    let mut sent = 0u64;
    for (sql, make) in QUERIES {
        let mut rows = sqlx::query(sql).bind(team_id).fetch(tx.db());
        while let Some(row) = rows.try_next().await? {
            let record = make(&row)?;
            if out.send(Ok(record)).await.is_err() {
                return Ok(()); // the client left
            }
            sent += 1;
        }
        if sent == 0 {
            return Err(StoreError::not_found(format!("team {team_id}")));
        }
    }
    let _ = out.send(Ok(Record::End(EndRecord { records: sent }))).await;
    tx.commit().await?;
    Ok(())
}

type Make = fn(&PgRow) -> StoreResult<Record>;

/// The queries in file order, each with its row → record.
const QUERIES: [(&str, Make); 11] = [
    (
        "select name, created_at, msg_seq, event_seq, memory_doc, memory_version
         from teams where id = $1",
        |r| {
            Ok(Record::Team(TeamRecord {
                name: r.try_get(0)?,
                created_at: r.try_get(1)?,
                msg_seq: r.try_get(2)?,
                event_seq: r.try_get(3)?,
                memory: json_of(r.try_get(4)?)?,
                memory_version: r.try_get(5)?,
            }))
        },
    ),
    (
        "select name, role, token_hash, created_at, last_seen_at, inbox_cursor, revoked_at
         from agents where team_id = $1 order by id",
        |r| {
            let role: String = r.try_get(1)?;
            Ok(Record::Agent(AgentRecord {
                name: r.try_get(0)?,
                role: role
                    .parse()
                    .map_err(|_| StoreError::Internal(format!("stored role {role}")))?,
                token_hash: r.try_get(2)?,
                created_at: r.try_get(3)?,
                last_seen_at: r.try_get(4)?,
                inbox_cursor: r.try_get(5)?,
                revoked_at: r.try_get(6)?,
            }))
        },
    ),
    (
        "select prefix, next_number from task_counters where team_id = $1
         order by prefix collate \"C\"",
        |r| {
            Ok(Record::Counter(CounterRecord {
                prefix: r.try_get(0)?,
                next_number: r.try_get(1)?,
            }))
        },
    ),
    (
        "select t.id, prefix, number, subject, description, active_form, status, owner,
             claimed_by, attempts, max_attempts, metadata, result, failure_reason, version,
             created_at, updated_at,
             array(select blocker_id from task_deps d where d.team_id = t.team_id
                   and d.task_id = t.id order by blocker_id collate \"C\")
         from tasks t where t.team_id = $1 order by t.id collate \"C\"",
        |r| {
            let stored: String = r.try_get(6)?;
            let (status, claimed_by) = exported_claim(&stored, r.try_get(8)?)?;
            Ok(Record::Task(TaskRecord {
                id: r.try_get(0)?,
                prefix: r.try_get(1)?,
                number: r.try_get(2)?,
                subject: r.try_get(3)?,
                description: r.try_get(4)?,
                active_form: r.try_get(5)?,
                status,
                owner: r.try_get(7)?,
                claimed_by,
                attempts: r.try_get(9)?,
                max_attempts: r.try_get(10)?,
                metadata: json_of(r.try_get(11)?)?,
                result: r.try_get::<Option<&str>, _>(12)?.map(json_of).transpose()?,
                failure_reason: r.try_get(13)?,
                version: r.try_get(14)?,
                created_at: r.try_get(15)?,
                updated_at: r.try_get(16)?,
                blocked_by: r.try_get(17)?,
            }))
        },
    ),
    (
        "select seq, id, sender, recipient, type, summary, data, created_at
         from messages where team_id = $1 order by seq",
        |r| {
            Ok(Record::Message(MessageRecord {
                seq: r.try_get(0)?,
                id: r.try_get(1)?,
                from: r.try_get(2)?,
                to: r.try_get(3)?,
                kind: r.try_get(4)?,
                summary: r.try_get(5)?,
                data: json_of(r.try_get(6)?)?,
                created_at: r.try_get(7)?,
            }))
        },
    ),
    (
        "select agent, key, seq from idempotency_keys where team_id = $1
         order by agent collate \"C\", key collate \"C\"",
        |r| {
            Ok(Record::IdempotencyKey(KeyRecord {
                agent: r.try_get(0)?,
                key: r.try_get(1)?,
                seq: r.try_get(2)?,
            }))
        },
    ),
    (
        "select seq, type, data, created_at from events where team_id = $1 order by seq",
        |r| {
            Ok(Record::Event(EventRecord {
                seq: r.try_get(0)?,
                kind: r.try_get(1)?,
                data: json_of(r.try_get(2)?)?,
                created_at: r.try_get(3)?,
            }))
        },
    ),
    (
        "select version, agent, kind, patch, created_at
         from memory_history where team_id = $1 order by version",
        |r| {
            Ok(Record::MemoryChange(MemoryChangeRecord {
                version: r.try_get(0)?,
                agent: r.try_get(1)?,
                kind: r.try_get(2)?,
                patch: json_of(r.try_get(3)?)?,
                created_at: r.try_get(4)?,
            }))
        },
    ),
    (
        "select project, tree, agent, started_at, created_at, passed, failed, skipped, errors,
             tier,
             array(select nodeid from test_outcomes o where o.run_id = r.id
                   order by nodeid collate \"C\"),
             array(select outcome::bigint from test_outcomes o where o.run_id = r.id
                   order by nodeid collate \"C\")
         from test_runs r where team_id = $1 order by id",
        |r| {
            let nodeids: Vec<String> = r.try_get(10)?;
            let outcomes: Vec<i64> = r.try_get(11)?;
            Ok(Record::TestRun(TestRunRecord {
                project: r.try_get(0)?,
                tree: r.try_get(1)?,
                agent: r.try_get(2)?,
                started_at: r.try_get(3)?,
                created_at: r.try_get(4)?,
                passed: r.try_get(5)?,
                failed: r.try_get(6)?,
                skipped: r.try_get(7)?,
                errors: r.try_get(8)?,
                tier: r.try_get(9)?,
                outcomes: nodeids.into_iter().zip(outcomes).collect(),
            }))
        },
    ),
    (
        "select url, secret, events, created_by, created_at, message_cursor, event_cursor
         from webhooks where team_id = $1 order by id",
        |r| {
            Ok(Record::Webhook(WebhookRecord {
                url: r.try_get(0)?,
                secret: r.try_get(1)?,
                events: json_of(r.try_get(2)?)?,
                created_by: r.try_get(3)?,
                created_at: r.try_get(4)?,
                message_cursor: r.try_get(5)?,
                event_cursor: r.try_get(6)?,
            }))
        },
    ),
    (
        "select max_tasks, max_edges, max_messages, max_storage_bytes, retention
         from team_settings where team_id = $1",
        |r| {
            Ok(Record::Settings(SettingsRecord {
                max_tasks: r.try_get(0)?,
                max_edges: r.try_get(1)?,
                max_messages: r.try_get(2)?,
                max_storage_bytes: r.try_get(3)?,
                retention: json_of(r.try_get(4)?)?,
            }))
        },
    ),
];
