//! A team's records read from one read transaction (a consistent snapshot while writes go
//! on), handed over one at a time as the receiver takes them: memory stays bounded whatever
//! the team's size. Rows come in the order `store::transfer` fixes, text by its bytes.

use super::super::error::{StoreError, StoreResult};
use super::super::transfer::*;
use rusqlite::{Connection, Row};
use tokio::sync::mpsc;

/// Hands records to the receiver, counting them; `false` once it has gone (the client left).
struct Out<'a> {
    to: &'a mpsc::Sender<StoreResult<Record>>,
    sent: u64,
}

impl Out<'_> {
    fn send(&mut self, record: Record) -> bool {
        self.sent += 1;
        self.to.blocking_send(Ok(record)).is_ok()
    }
}

/// Runs each row of `sql` (bound to the team) through `make` and sends it; `false` when the
/// receiver has gone.
fn rows(
    conn: &Connection,
    out: &mut Out<'_>,
    sql: &str,
    team_id: i64,
    mut make: impl FnMut(&Row<'_>) -> StoreResult<Record>,
) -> StoreResult<bool> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query([team_id])?;
    while let Some(row) = rows.next()? {
        if !out.send(make(row)?) {
            return Ok(false);
        }
    }
    Ok(true)
}

fn json(text: String) -> StoreResult<Json> {
    json_of(&text)
}

pub fn export(
    conn: &Connection,
    team_id: i64,
    to: &mpsc::Sender<StoreResult<Record>>,
) -> StoreResult<()> {
    let mut out = Out { to, sent: 0 };
    let team = rows(
        conn,
        &mut out,
        "select name, created_at, msg_seq, event_seq, memory_doc, memory_version
         from teams where id = ?1",
        team_id,
        |r| {
            Ok(Record::Team(TeamRecord {
                name: r.get(0)?,
                created_at: r.get(1)?,
                msg_seq: r.get(2)?,
                event_seq: r.get(3)?,
                memory: json(r.get(4)?)?,
                memory_version: r.get(5)?,
            }))
        },
    )?;
    if out.sent == 0 {
        return Err(StoreError::not_found(format!("team {team_id}")));
    }
    let mut deps = conn.prepare(
        "select blocker_id from task_deps where team_id = ?1 and task_id = ?2 order by blocker_id",
    )?;
    let mut outcomes = conn
        .prepare("select nodeid, outcome from test_outcomes where run_id = ?1 order by nodeid")?;
    let done =
        team && rows(
            conn,
            &mut out,
            "select name, role, token_hash, created_at, last_seen_at, inbox_cursor, revoked_at
             from agents where team_id = ?1 order by id",
            team_id,
            |r| {
                let role: String = r.get(1)?;
                Ok(Record::Agent(AgentRecord {
                    name: r.get(0)?,
                    role: role
                        .parse()
                        .map_err(|_| StoreError::Internal(format!("stored role {role}")))?,
                    token_hash: r.get(2)?,
                    created_at: r.get(3)?,
                    last_seen_at: r.get(4)?,
                    inbox_cursor: r.get(5)?,
                    revoked_at: r.get(6)?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select prefix, next_number from task_counters where team_id = ?1 order by prefix",
            team_id,
            |r| {
                Ok(Record::Counter(CounterRecord {
                    prefix: r.get(0)?,
                    next_number: r.get(1)?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select id, prefix, number, subject, description, active_form, status, owner,
                 claimed_by, attempts, max_attempts, metadata, result, failure_reason, version,
                 created_at, updated_at
             from tasks where team_id = ?1 order by id",
            team_id,
            |r| {
                let id: String = r.get(0)?;
                let blocked_by = deps
                    .query_map(rusqlite::params![team_id, id], |d| d.get(0))?
                    .collect::<Result<Vec<String>, _>>()?;
                let stored: String = r.get(6)?;
                let (status, claimed_by) = exported_claim(&stored, r.get(8)?)?;
                Ok(Record::Task(TaskRecord {
                    id,
                    prefix: r.get(1)?,
                    number: r.get(2)?,
                    subject: r.get(3)?,
                    description: r.get(4)?,
                    active_form: r.get(5)?,
                    status,
                    owner: r.get(7)?,
                    claimed_by,
                    attempts: r.get(9)?,
                    max_attempts: r.get(10)?,
                    metadata: json(r.get(11)?)?,
                    result: r.get::<_, Option<String>>(12)?.map(json).transpose()?,
                    failure_reason: r.get(13)?,
                    version: r.get(14)?,
                    created_at: r.get(15)?,
                    updated_at: r.get(16)?,
                    blocked_by,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select seq, id, sender, recipient, type, summary, data, created_at
             from messages where team_id = ?1 order by seq",
            team_id,
            |r| {
                Ok(Record::Message(MessageRecord {
                    seq: r.get(0)?,
                    id: r.get(1)?,
                    from: r.get(2)?,
                    to: r.get(3)?,
                    kind: r.get(4)?,
                    summary: r.get(5)?,
                    data: json(r.get(6)?)?,
                    created_at: r.get(7)?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select agent, key, seq from idempotency_keys where team_id = ?1 order by agent, key",
            team_id,
            |r| {
                Ok(Record::IdempotencyKey(KeyRecord {
                    agent: r.get(0)?,
                    key: r.get(1)?,
                    seq: r.get(2)?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select seq, type, data, created_at from events where team_id = ?1 order by seq",
            team_id,
            |r| {
                Ok(Record::Event(EventRecord {
                    seq: r.get(0)?,
                    kind: r.get(1)?,
                    data: json(r.get(2)?)?,
                    created_at: r.get(3)?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select version, agent, kind, patch, created_at
             from memory_history where team_id = ?1 order by version",
            team_id,
            |r| {
                Ok(Record::MemoryChange(MemoryChangeRecord {
                    version: r.get(0)?,
                    agent: r.get(1)?,
                    kind: r.get(2)?,
                    patch: json(r.get(3)?)?,
                    created_at: r.get(4)?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select id, project, tree, agent, started_at, created_at, passed, failed, skipped,
                 errors, tier
             from test_runs where team_id = ?1 order by id",
            team_id,
            |r| {
                let run: i64 = r.get(0)?;
                Ok(Record::TestRun(TestRunRecord {
                    project: r.get(1)?,
                    tree: r.get(2)?,
                    agent: r.get(3)?,
                    started_at: r.get(4)?,
                    created_at: r.get(5)?,
                    passed: r.get(6)?,
                    failed: r.get(7)?,
                    skipped: r.get(8)?,
                    errors: r.get(9)?,
                    tier: r.get(10)?,
                    outcomes: outcomes
                        .query_map([run], |o| Ok((o.get(0)?, o.get(1)?)))?
                        .collect::<Result<_, _>>()?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select url, secret, events, created_by, created_at, message_cursor, event_cursor
             from webhooks where team_id = ?1 order by id",
            team_id,
            |r| {
                Ok(Record::Webhook(WebhookRecord {
                    url: r.get(0)?,
                    secret: r.get(1)?,
                    events: json(r.get(2)?)?,
                    created_by: r.get(3)?,
                    created_at: r.get(4)?,
                    message_cursor: r.get(5)?,
                    event_cursor: r.get(6)?,
                }))
            },
        )? && rows(
            conn,
            &mut out,
            "select max_tasks, max_edges, max_messages, max_storage_bytes, retention
             from team_settings where team_id = ?1",
            team_id,
            |r| {
                Ok(Record::Settings(SettingsRecord {
                    max_tasks: r.get(0)?,
                    max_edges: r.get(1)?,
                    max_messages: r.get(2)?,
                    max_storage_bytes: r.get(3)?,
                    retention: json(r.get(4)?)?,
                }))
            },
        )?;
    if done {
        let records = out.sent;
        out.send(Record::End(EndRecord { records }));
    }
    Ok(())
}
