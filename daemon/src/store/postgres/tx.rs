//! One write transaction: the team locks it holds, the sequences it hands out, the event rows
//! and agent touches it saves on commit, and what it announces to every replica when it commits.
//!
//! Two kinds of team writes. Most take the team's lock first ([`Tx::lock_team`], a
//! transaction-level advisory lock): quota checks, memory versions, idempotency keys and message
//! sequences are decided under it. Claims and completions take no team lock at all
//! ([`Tx::join_team`]): their task rows are locked by the statements that change them (`SKIP
//! LOCKED` for claims), so a team's claims and completions run in parallel across connections
//! and replicas. Either kind numbers its events only in its last statement, which updates the
//! team's row (`teams.event_seq`, and `msg_seq` for a locked write) and holds that row lock to
//! the commit: events are numbered in commit order, gapless, and announced in that order.
//! After the team's row a write takes only the commit's own usage row, which no other
//! statement writes: neither closes a deadlock cycle.

use super::super::error::StoreResult;
use super::super::rules::quota::TeamBudget;
use super::super::rules::{TaskState, TaskUsageDelta};
use super::announcement::{ready_line_len, Announcement};
use super::db::{Db, Pool, PoolTx};
use super::{CHANNEL, DB_NOW_MS};
use crate::config::LimitSettings;
use crate::hub::ReadyTask;
use huddle_wire::{TaskStatus, TeamUsage};
use std::collections::BTreeMap;

/// Ready tasks one announcement names at most; past that it says only "tasks changed" (every
/// replica wakes all its claimers), which keeps the payload well under PostgreSQL's 8,000 bytes.
const MAX_READY_ANNOUNCED: usize = 40;
/// Bytes the ready lines of one announcement may take (project names can be long).
const MAX_READY_BYTES: usize = 6000;

/// The advisory lock class of team locks (the other key is the team's id).
const TEAM_LOCK_CLASS: i32 = 0x6875_6464;

/// Reads a team's message sequence and the database's time once the team's lock is held.
const TEAM_AFTER_LOCK: &str =
    "select msg_seq, (extract(epoch from clock_timestamp()) * 1000)::bigint
     from teams where id = $1";

/// Events that end streams and cached tokens on every replica, whoever watches the log.
pub const TOKEN_EVENTS: [&str; 2] = ["agent.revoked", "agent.rotated"];

/// What a transaction did to one team, saved and announced on commit.
#[derive(Debug, Clone)]
struct TeamSeqs {
    /// Whether this transaction holds the team's lock ([`Tx::lock_team`]).
    locked: bool,
    /// The message sequences, read under the team's lock (both 0 when not locked).
    msg: i64,
    msg_start: i64,
    /// Tasks this transaction left ready to claim.
    ready: Vec<ReadyTask>,
    /// A scoped task left `in_progress`: tasks its scope held back may be claimable now
    /// without having become ready, so every claimer is woken ([`Tx::scope_freed`]).
    scope_freed: bool,
    /// Events to insert on commit, in order: type, JSON data. Numbered on commit.
    events: Vec<(String, String)>,
    /// Agents whose last-seen time is set on commit.
    touched: Vec<String>,
    /// Whether a token was revoked or rotated: every replica must read those events.
    tokens_changed: bool,
    /// The team's quota use, read once when a write of this transaction first adds
    /// something and charged in memory after (the triggers keep the stored rows).
    budget: Option<TeamBudget>,
    /// What the transaction's task updates changed in the team's usage, written with the
    /// events on commit (migration 0018: no trigger counts updates).
    usage: TaskUsageDelta,
    /// Messages the transaction stored and their bytes, written likewise (migration 0019: no
    /// trigger counts posts).
    posted: Posted,
}

/// Messages stored by one transaction, and the bytes of their summaries and data.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Posted {
    messages: i64,
    bytes: i64,
}

impl TeamSeqs {
    fn new() -> TeamSeqs {
        TeamSeqs {
            locked: false,
            msg: 0,
            msg_start: 0,
            ready: Vec::new(),
            scope_freed: false,
            events: Vec::new(),
            touched: Vec::new(),
            tokens_changed: false,
            budget: None,
            usage: TaskUsageDelta::default(),
            posted: Posted::default(),
        }
    }
}

pub struct Tx {
    tx: PoolTx,
    /// The database's time (milliseconds since the epoch), read once per transaction: after
    /// the first team lock when it takes one (so a team's locked writes get non-decreasing
    /// times in commit order), else when it starts writing. One clock for every replica.
    now_ms: Option<i64>,
    teams: BTreeMap<i64, TeamSeqs>,
}

impl Tx {
    pub async fn begin(pool: &Pool) -> StoreResult<Tx> {
        Ok(Tx {
            tx: pool.begin().await?,
            now_ms: None,
            teams: BTreeMap::new(),
        })
    }

    pub fn conn(&mut self) -> Db<'_> {
        self.tx.db()
    }

    /// The transaction's time, from the database (see the field). Every write locks or joins
    /// its team first, which reads it; a write that does neither calls [`Tx::read_clock`] first.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
            .expect("the transaction's time is read with its first team lock or read_clock")
    }

    /// Reads the database's time for a transaction that has not read it yet.
    pub async fn read_clock(&mut self) -> StoreResult<i64> {
        if let Some(now) = self.now_ms {
            return Ok(now);
        }
        let now: i64 = sqlx::query_scalar(&format!("select {DB_NOW_MS}"))
            .fetch_one(self.conn())
            .await?;
        self.now_ms = Some(now);
        Ok(now)
    }

    /// Locks the team until the commit: the writes that read and decide on team-wide state
    /// (quotas, memory versions, idempotency keys, message sequences) take this lock before
    /// anything else, so they are serialised across replicas.
    pub async fn lock_team(&mut self, team_id: i64) -> StoreResult<()> {
        if self.teams.get(&team_id).is_some_and(|s| s.locked) {
            return Ok(());
        }
        // An advisory lock rather than the team's row: the row is what every write updates
        // last (the event sequence), and writes without this lock must not wait for it.
        sqlx::query("select pg_advisory_xact_lock($1, ($2 % 2147483647)::int)")
            .bind(TEAM_LOCK_CLASS)
            .bind(team_id)
            .execute(self.conn())
            .await?;
        // Read after the lock is granted (a statement of its own, so with a snapshot taken
        // after the wait): the latest message sequence, and a time no earlier than the
        // previous locked write's. No row: the team was deleted after the caller's token was
        // checked (or while this waited for its lock).
        let (msg, now): (i64, i64) = sqlx::query_as(TEAM_AFTER_LOCK)
            .bind(team_id)
            .fetch_optional(self.conn())
            .await?
            .ok_or_else(|| super::super::error::StoreError::not_found("team"))?;
        self.now_ms.get_or_insert(now);
        let s = self.teams.entry(team_id).or_insert_with(TeamSeqs::new);
        s.locked = true;
        s.msg = msg;
        s.msg_start = msg;
        Ok(())
    }

    /// Joins the team without locking it: for claims and completions, whose task rows are
    /// locked by the statements that change them. Events are still numbered on commit.
    pub async fn join_team(&mut self, team_id: i64) -> StoreResult<()> {
        self.read_clock().await?;
        self.teams.entry(team_id).or_insert_with(TeamSeqs::new);
        Ok(())
    }

    fn seqs(&mut self, team_id: i64) -> &mut TeamSeqs {
        self.teams
            .get_mut(&team_id)
            .expect("lock_team or join_team before writing to a team")
    }

    fn locked(&mut self, team_id: i64) -> &mut TeamSeqs {
        let s = self.seqs(team_id);
        assert!(s.locked, "lock_team before reading team-wide state");
        s
    }

    /// The team's quota use and quotas as this transaction has changed them so far: one read
    /// per transaction (under the team lock), then what earlier writes of it added.
    pub async fn budget(
        &mut self,
        team_id: i64,
        limits: &LimitSettings,
    ) -> StoreResult<TeamBudget> {
        if let Some(budget) = self.locked(team_id).budget {
            return Ok(budget);
        }
        let mut budget = super::usage::budget(self.tx.db(), team_id, limits).await?;
        // What this transaction's task updates and posts counted is not stored before the
        // commit.
        let s = self.seqs(team_id);
        budget.used.storage_bytes = budget
            .used
            .storage_bytes
            .saturating_add_signed(s.usage.bytes + s.posted.bytes);
        budget.used.messages = budget
            .used
            .messages
            .saturating_add_signed(s.posted.messages);
        s.budget = Some(budget);
        Ok(budget)
    }

    /// A saved task's change of status and size, for the team's usage.
    pub fn count_saved(&mut self, state: &TaskState) {
        self.seqs(state.team_id).usage.saved(state);
    }

    /// `n` tasks of the team moved from `from` to `to`, their text unchanged (claims).
    pub fn count_moved(&mut self, team_id: i64, from: TaskStatus, to: TaskStatus, n: usize) {
        self.seqs(team_id).usage.moved(from, to, n as i64);
    }

    /// `n` tasks of the team moved to completed, their stored text `bytes` larger.
    pub fn count_completed(&mut self, team_id: i64, n: usize, bytes: i64) {
        let usage = &mut self.seqs(team_id).usage;
        usage.moved(TaskStatus::InProgress, TaskStatus::Completed, n as i64);
        usage.bytes += bytes;
    }

    /// A message of the team was stored; `bytes`: its summary's and data's.
    pub fn count_posted(&mut self, team_id: i64, bytes: u64) {
        let posted = &mut self.seqs(team_id).posted;
        posted.messages += 1;
        posted.bytes += bytes as i64;
    }

    /// Counts what a write added against the team's budget, for this transaction's later writes.
    pub fn charge(&mut self, team_id: i64, added: &TeamUsage) {
        if let Some(budget) = self.seqs(team_id).budget.as_mut() {
            budget.charge(added);
        }
    }

    /// Appends an event to the team's log; it is numbered and inserted on commit.
    pub fn append_event(&mut self, team_id: i64, kind: &str, data: String) {
        let s = self.seqs(team_id);
        s.tokens_changed |= TOKEN_EVENTS.contains(&kind);
        s.events.push((kind.to_string(), data));
    }

    /// Marks the agent as seen (at most one row write per agent per second), on commit.
    pub fn touch_agent(&mut self, team_id: i64, agent: &str) {
        let s = self.seqs(team_id);
        if !s.touched.iter().any(|a| a == agent) {
            s.touched.push(agent.to_string());
        }
    }

    pub fn next_msg_seq(&mut self, team_id: i64) -> i64 {
        let s = self.locked(team_id);
        s.msg += 1;
        s.msg
    }

    /// The last message sequence of the team, this transaction included.
    pub fn last_msg_seq(&mut self, team_id: i64) -> i64 {
        self.locked(team_id).msg
    }

    /// This task is left ready to claim: on commit, every replica wakes one claimer that could
    /// take it.
    pub fn task_ready(&mut self, team_id: i64, task: ReadyTask) {
        self.seqs(team_id).ready.push(task);
    }

    /// A task whose scope held others back left `in_progress` (`rules::scope::frees_scope`):
    /// on commit, every replica wakes all the team's claimers.
    pub fn scope_freed(&mut self, team_id: i64) {
        self.seqs(team_id).scope_freed = true;
    }

    /// Numbers and inserts the events, touches the agents, saves the sequences, announces each
    /// team's new rows, and commits. The notifications are delivered only if the commit
    /// succeeds, in commit order — which, per team, is sequence order: the statement that
    /// numbers the events holds the team's row until the commit.
    pub async fn commit(mut self) -> StoreResult<()> {
        let now = self.now_ms.unwrap_or_default();
        for (team_id, s) in std::mem::take(&mut self.teams) {
            let msgs = s.msg - s.msg_start;
            let changed = msgs > 0 || !s.events.is_empty();
            let announce = changed || !s.ready.is_empty() || s.scope_freed;
            let (usage, posted) = (s.usage, s.posted);
            let counts = !usage.is_zero() || posted != Posted::default();
            if !announce && s.touched.is_empty() && !counts {
                continue;
            }
            let overflow = s.ready.len() > MAX_READY_ANNOUNCED
                || s.ready.iter().map(ready_line_len).sum::<usize>() > MAX_READY_BYTES;
            // The announcement's flags and ready lines; the statement writes the ranges
            // before them once it has numbered the events.
            let encoded = Announcement {
                team_id,
                msgs: (0, 0),
                events: (0, 0),
                tasks_changed: overflow || s.scope_freed,
                tokens_changed: s.tokens_changed,
                ready: if overflow { Vec::new() } else { s.ready },
            }
            .encode();
            let ranges = format!("{team_id} 0 0 0 0");
            let tail = encoded[ranges.len()..].to_string();
            let events = s.events.len() as i64;
            let (kinds, data): (Vec<String>, Vec<String>) = s.events.into_iter().unzip();
            // One round trip for everything the transaction's callers did not need an answer
            // to. `numbered` locks the team's row (held to the commit) and runs first (the
            // others read it); last-seen times skip an agent row another write holds;
            // `counted` adds the task updates' and posts' usage in slot 64, the commit
            // statement's own.
            // The usage triggers write slots 0-63 (`pg_backend_pid() % 64`, migration 0008)
            // and hold them from the middle of a transaction, before its team row: were
            // `counted` to write a trigger's slot after the team's row, a claim's commit and a
            // message post on a backend with the same slot would take the two rows in
            // opposite orders and deadlock. Slot 64 is written only here, after the team's
            // row: whoever holds it waits for nothing more.
            sqlx::query(
                "with numbered as materialized (
                     update teams set msg_seq = case when $3 then $2 else msg_seq end,
                                      event_seq = event_seq + $4
                     where id = $1 and $12
                     returning msg_seq, event_seq
                 ),
                 appended as (
                     insert into events (team_id, seq, type, data, created_at)
                     select $1, n.event_seq - $4 + e.ord, e.type, e.data, $7
                     from numbered n,
                          unnest($8::text[], $9::text[]) with ordinality as e(type, data, ord)
                 ),
                 touched as (
                     update agents set last_seen_at = $7
                     where team_id = $1 and name in (
                         select name from agents
                         where team_id = $1 and name = any($10)
                           and (last_seen_at is null or last_seen_at < $7 - 1000)
                         for update skip locked)
                 ),
                 counted as (
                     insert into team_usage as u (team_id, slot, tasks_pending,
                         tasks_in_progress, tasks_completed, tasks_failed, tasks_cancelled,
                         messages, storage_bytes)
                     select $1, 64::smallint, $13[1], $13[2], $13[3],
                            $13[4], $13[5], $16, $14
                     where $15 and exists (select 1 from teams where id = $1)
                     on conflict (team_id, slot) do update set
                         tasks_pending = u.tasks_pending + excluded.tasks_pending,
                         tasks_in_progress = u.tasks_in_progress + excluded.tasks_in_progress,
                         tasks_completed = u.tasks_completed + excluded.tasks_completed,
                         tasks_failed = u.tasks_failed + excluded.tasks_failed,
                         tasks_cancelled = u.tasks_cancelled + excluded.tasks_cancelled,
                         messages = u.messages + excluded.messages,
                         storage_bytes = u.storage_bytes + excluded.storage_bytes
                 )
                 select pg_notify($5, $1 || ' ' || (n.msg_seq - $11 + 1) || ' ' || n.msg_seq
                                      || ' ' || (n.event_seq - $4 + 1) || ' ' || n.event_seq
                                      || $6)
                 from numbered n where $12",
            )
            .bind(team_id)
            .bind(s.msg)
            .bind(s.locked && msgs > 0)
            .bind(events)
            .bind(CHANNEL)
            .bind(tail)
            .bind(now)
            .bind(kinds)
            .bind(data)
            .bind(s.touched)
            .bind(msgs)
            .bind(announce)
            .bind(usage.statuses.to_vec())
            .bind(usage.bytes + posted.bytes)
            .bind(counts)
            .bind(posted.messages)
            .execute(self.conn())
            .await?;
        }
        self.tx.commit().await?;
        Ok(())
    }
}
