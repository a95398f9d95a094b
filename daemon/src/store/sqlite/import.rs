//! An import on SQLite: one writer job (so all or nothing, in its own savepoint) inserting
//! the records as the spooled file is read, then the checks that bind them together.
//! The writer takes no other job meanwhile: a large import is best run in a quiet moment.

use super::super::error::{StoreError, StoreResult};
use super::super::quotas::check_settings_record;
use super::super::rules::fmt_time;
use super::super::team_admin::{
    check_import, duplicate_team, import_error, records_cut_short, ImportRecords,
    AFTER_IMPORT_CHECKS, RECOUNT_BLOCKERS,
};
use super::super::transfer::{Record, TeamRecord};
use super::writer::WriteCtx;
use huddle_wire::Team;
use rusqlite::{params, Connection, OptionalExtension};

pub fn import(
    ctx: &mut WriteCtx<'_>,
    team: TeamRecord,
    mut records: ImportRecords,
) -> StoreResult<Team> {
    check_import(&team)?;
    let inserted = ctx
        .conn
        .prepare_cached(
            "insert into teams (name, created_at, msg_seq, event_seq, memory_doc, memory_version)
             values (?1, ?2, ?3, ?4, ?5, ?6) on conflict (name) do nothing",
        )?
        .execute(params![
            team.name,
            team.created_at,
            team.msg_seq,
            team.event_seq,
            team.memory.get(),
            team.memory_version
        ])?;
    if inserted == 0 {
        return Err(duplicate_team(&team.name));
    }
    let id = ctx.conn.last_insert_rowid();
    let mut ended = false;
    while let Some((line, record)) = records.blocking_recv() {
        ended |= matches!(record, Record::End(_));
        let kind = record.kind();
        insert(ctx.conn, id, record).map_err(|e| match e {
            StoreError::Internal(message) => import_error(line, kind, &message),
            other => other,
        })?;
    }
    if !ended {
        return Err(records_cut_short());
    }
    ctx.conn.prepare_cached(RECOUNT_BLOCKERS)?.execute([id])?;
    super::usage::count_imported_tasks(ctx.conn, id)?;
    for (sql, field) in AFTER_IMPORT_CHECKS {
        let problem: Option<String> = ctx
            .conn
            .prepare_cached(&format!("{sql} limit 1"))?
            .query_row([id], |r| r.get(0))
            .optional()?;
        if let Some(problem) = problem {
            return Err(StoreError::invalid(field, problem));
        }
    }
    Ok(Team {
        name: team.name,
        created_at: fmt_time(team.created_at),
    })
}

fn insert(conn: &Connection, team: i64, record: Record) -> StoreResult<()> {
    match record {
        Record::Team(_) | Record::End(_) => {}
        Record::Agent(a) => {
            conn.prepare_cached(
                "insert into agents (team_id, name, role, token_hash, created_at, last_seen_at,
                     inbox_cursor, revoked_at)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                team,
                a.name,
                a.role.as_str(),
                a.token_hash,
                a.created_at,
                a.last_seen_at,
                a.inbox_cursor,
                a.revoked_at
            ])?;
        }
        Record::Counter(c) => {
            conn.prepare_cached(
                "insert into task_counters (team_id, prefix, next_number) values (?1, ?2, ?3)",
            )?
            .execute(params![team, c.prefix, c.next_number])?;
        }
        Record::Task(t) => {
            conn.prepare_cached(
                "insert into tasks (team_id, id, prefix, number, subject, description,
                     active_form, status, owner, claimed_by, attempts, max_attempts, metadata,
                     result, failure_reason, version, created_at, updated_at)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                     ?17, ?18)",
            )?
            .execute(params![
                team,
                t.id,
                t.prefix,
                t.number,
                t.subject,
                t.description,
                t.active_form,
                t.status.as_str(),
                t.owner,
                t.claimed_by,
                t.attempts,
                t.max_attempts,
                t.metadata.get(),
                t.result.as_ref().map(|r| r.get()),
                t.failure_reason,
                t.version,
                t.created_at,
                t.updated_at
            ])?;
            let mut edge = conn.prepare_cached(
                "insert into task_deps (team_id, task_id, blocker_id) values (?1, ?2, ?3)",
            )?;
            for blocker in &t.blocked_by {
                edge.execute(params![team, t.id, blocker])?;
            }
        }
        Record::Message(m) => {
            conn.prepare_cached(
                "insert into messages (team_id, seq, id, sender, recipient, type, summary, data,
                     created_at)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                team,
                m.seq,
                m.id,
                m.from,
                m.to,
                m.kind,
                m.summary,
                m.data.get(),
                m.created_at
            ])?;
        }
        Record::IdempotencyKey(k) => {
            conn.prepare_cached(
                "insert into idempotency_keys (team_id, agent, key, seq) values (?1, ?2, ?3, ?4)",
            )?
            .execute(params![team, k.agent, k.key, k.seq])?;
        }
        Record::Event(e) => {
            conn.prepare_cached(
                "insert into events (team_id, seq, type, data, created_at)
                 values (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![team, e.seq, e.kind, e.data.get(), e.created_at])?;
        }
        Record::MemoryChange(h) => {
            conn.prepare_cached(
                "insert into memory_history (team_id, version, agent, kind, patch, created_at)
                 values (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                team,
                h.version,
                h.agent,
                h.kind,
                h.patch.get(),
                h.created_at
            ])?;
        }
        Record::TestRun(r) => {
            conn.prepare_cached(
                "insert into test_runs (team_id, project, tree, agent, started_at, created_at,
                     passed, failed, skipped, errors, tier)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                team,
                r.project,
                r.tree,
                r.agent,
                r.started_at,
                r.created_at,
                r.passed,
                r.failed,
                r.skipped,
                r.errors,
                r.tier
            ])?;
            let run = conn.last_insert_rowid();
            let mut outcome = conn.prepare_cached(
                "insert into test_outcomes (run_id, nodeid, outcome) values (?1, ?2, ?3)",
            )?;
            for (nodeid, value) in &r.outcomes {
                outcome.execute(params![run, nodeid, value])?;
            }
        }
        Record::Settings(r) => {
            check_settings_record(&r).map_err(StoreError::Internal)?;
            conn.prepare_cached(
                "insert into team_settings (team_id, max_tasks, max_edges, max_messages,
                     max_storage_bytes, retention)
                 values (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                team,
                r.max_tasks,
                r.max_edges,
                r.max_messages,
                r.max_storage_bytes,
                r.retention.get()
            ])?;
        }
        Record::Webhook(w) => {
            conn.prepare_cached(
                "insert into webhooks (team_id, url, secret, events, created_by, created_at,
                     message_cursor, event_cursor)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                team,
                w.url,
                w.secret,
                w.events.get(),
                w.created_by,
                w.created_at,
                w.message_cursor,
                w.event_cursor
            ])?;
        }
    }
    Ok(())
}
