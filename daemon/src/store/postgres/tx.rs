//! One write transaction: the team locks it holds, the sequences it hands out, the event rows
//! and agent touches it saves on commit, and what it announces to every replica when it commits.
//!
//! Every statement a transaction runs while holding a team's lock keeps that team's other
//! writers waiting, so what needs no answer (events, last-seen times) is written by the single
//! statement that also saves the sequences and sends the announcement.

use super::super::rules::quota::TeamBudget;
use super::super::StoreResult;
use super::db::{Db, Pool, PoolTx};
use super::{CHANNEL, DB_NOW_MS};
use crate::config::LimitSettings;
use crate::hub::ReadyTask;
use huddle_wire::TeamUsage;
use std::collections::BTreeMap;

/// Ready tasks one announcement names at most; past that it says only "tasks changed" (every
/// replica wakes all its claimers), which keeps the payload well under PostgreSQL's 8,000 bytes.
const MAX_READY_ANNOUNCED: usize = 40;
/// Bytes the ready lines of one announcement may take (project names can be long).
const MAX_READY_BYTES: usize = 6000;

/// Locks a team's row and reads the database's time once the lock is held.
const LOCK_TEAM: &str = "with locked as materialized (
         select msg_seq, event_seq from teams where id = $1 for update
     )
     select msg_seq, event_seq, (extract(epoch from clock_timestamp()) * 1000)::bigint
     from locked";

/// Events that end streams and cached tokens on every replica, whoever watches the log.
pub const TOKEN_EVENTS: [&str; 2] = ["agent.revoked", "agent.rotated"];

/// A team's sequences, read under the team's row lock and written back before the commit.
#[derive(Debug, Clone)]
struct TeamSeqs {
    msg: i64,
    event: i64,
    /// The values when locked: the announced ranges start after them.
    msg_start: i64,
    event_start: i64,
    /// Tasks this transaction left ready to claim.
    ready: Vec<ReadyTask>,
    /// Events to insert on commit: sequence, type, JSON data.
    events: Vec<(i64, String, String)>,
    /// Agents whose last-seen time is set on commit.
    touched: Vec<String>,
    /// Whether a token was revoked or rotated: every replica must read those events.
    tokens_changed: bool,
    /// The team's quota use, read once when a write of this transaction first adds
    /// something and charged in memory after (the triggers keep the stored row).
    budget: Option<TeamBudget>,
}

pub struct Tx {
    tx: PoolTx,
    /// The database's time (milliseconds since the epoch) when the transaction took its first
    /// team lock (or asked, [`Tx::read_clock`]): one clock for every replica, fixed per
    /// transaction, and never earlier than a previous write of the team committed.
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

    /// The transaction's time, from the database (see the field). Every write locks its team
    /// first, which reads it; a write that locks no team calls [`Tx::read_clock`] first.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
            .expect("the transaction's time is read with its first team lock or read_clock")
    }

    /// Reads the database's time for a transaction that locks no team.
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

    /// Locks the team's row until the commit. Every write to a team takes this lock before
    /// anything else, so writes to one team never deadlock and commit in sequence order.
    pub async fn lock_team(&mut self, team_id: i64) -> StoreResult<()> {
        if self.teams.contains_key(&team_id) {
            return Ok(());
        }
        // The clock is read after the lock is granted (the materialised CTE locks first), so
        // a team's writes get non-decreasing times in commit order, whichever replica wrote.
        // No row: the team was deleted after the caller's token was checked (or while this
        // waited for its lock).
        let (msg, event, now): (i64, i64, i64) = sqlx::query_as(LOCK_TEAM)
            .bind(team_id)
            .fetch_optional(self.conn())
            .await?
            .ok_or_else(|| super::super::StoreError::not_found("team"))?;
        self.now_ms.get_or_insert(now);
        self.teams.insert(
            team_id,
            TeamSeqs {
                msg,
                event,
                msg_start: msg,
                event_start: event,
                ready: Vec::new(),
                events: Vec::new(),
                touched: Vec::new(),
                tokens_changed: false,
                budget: None,
            },
        );
        Ok(())
    }

    fn seqs(&mut self, team_id: i64) -> &mut TeamSeqs {
        self.teams
            .get_mut(&team_id)
            .expect("lock_team before handing out sequences")
    }

    /// The team's quota use and quotas as this transaction has changed them so far: one read
    /// per transaction (under the team lock), then what earlier writes of it added.
    pub async fn budget(
        &mut self,
        team_id: i64,
        limits: &LimitSettings,
    ) -> StoreResult<TeamBudget> {
        if let Some(budget) = self.seqs(team_id).budget {
            return Ok(budget);
        }
        let budget = super::usage::budget(self.tx.db(), team_id, limits).await?;
        self.seqs(team_id).budget = Some(budget);
        Ok(budget)
    }

    /// Counts what a write added against the team's budget, for this transaction's later writes.
    pub fn charge(&mut self, team_id: i64, added: &TeamUsage) {
        if let Some(budget) = self.seqs(team_id).budget.as_mut() {
            budget.charge(added);
        }
    }

    /// Appends an event to the team's log; it is inserted on commit, numbered now.
    pub fn append_event(&mut self, team_id: i64, kind: &str, data: String) {
        let s = self.seqs(team_id);
        s.event += 1;
        let seq = s.event;
        s.tokens_changed |= TOKEN_EVENTS.contains(&kind);
        s.events.push((seq, kind.to_string(), data));
    }

    /// Marks the agent as seen (at most one row write per agent per second), on commit.
    pub fn touch_agent(&mut self, team_id: i64, agent: &str) {
        let s = self.seqs(team_id);
        if !s.touched.iter().any(|a| a == agent) {
            s.touched.push(agent.to_string());
        }
    }

    pub fn next_msg_seq(&mut self, team_id: i64) -> i64 {
        let s = self.seqs(team_id);
        s.msg += 1;
        s.msg
    }

    /// The last message sequence of the team, this transaction included.
    pub fn last_msg_seq(&mut self, team_id: i64) -> i64 {
        self.seqs(team_id).msg
    }

    /// This task is left ready to claim: on commit, every replica wakes one claimer that could
    /// take it.
    pub fn task_ready(&mut self, team_id: i64, task: ReadyTask) {
        self.seqs(team_id).ready.push(task);
    }

    /// Inserts the events, touches the agents, writes the sequences back, announces each
    /// team's new rows, and commits. The notifications are delivered only if the commit
    /// succeeds, in commit order.
    pub async fn commit(mut self) -> StoreResult<()> {
        let now = self.now_ms.unwrap_or_default();
        for (team_id, s) in std::mem::take(&mut self.teams) {
            let changed = s.msg != s.msg_start || s.event != s.event_start;
            let announce = changed || !s.ready.is_empty();
            if !announce && s.touched.is_empty() {
                continue;
            }
            let overflow = s.ready.len() > MAX_READY_ANNOUNCED
                || s.ready.iter().map(ready_line_len).sum::<usize>() > MAX_READY_BYTES;
            let payload = Announcement {
                team_id,
                msgs: (s.msg_start + 1, s.msg),
                events: (s.event_start + 1, s.event),
                tasks_changed: overflow,
                tokens_changed: s.tokens_changed,
                ready: if overflow { Vec::new() } else { s.ready },
            }
            .encode();
            let (mut seqs, mut kinds, mut data) = (Vec::new(), Vec::new(), Vec::new());
            for (seq, kind, json) in s.events {
                seqs.push(seq);
                kinds.push(kind);
                data.push(json);
            }
            // One round trip for everything the transaction's callers did not need an answer to.
            sqlx::query(
                "with appended as (
                     insert into events (team_id, seq, type, data, created_at)
                     select $1, e.seq, e.type, e.data, $7
                     from unnest($8::bigint[], $9::text[], $10::text[]) as e(seq, type, data)
                 ),
                 touched as (
                     update agents set last_seen_at = $7
                     where team_id = $1 and name = any($11)
                       and (last_seen_at is null or last_seen_at < $7 - 1000)
                 ),
                 saved as (
                     update teams set msg_seq = $2, event_seq = $3 where id = $1 and $4
                 )
                 select pg_notify($5, $6) where $12",
            )
            .bind(team_id)
            .bind(s.msg)
            .bind(s.event)
            .bind(changed)
            .bind(CHANNEL)
            .bind(payload)
            .bind(now)
            .bind(seqs)
            .bind(kinds)
            .bind(data)
            .bind(s.touched)
            .bind(announce)
            .execute(self.conn())
            .await?;
        }
        self.tx.commit().await?;
        Ok(())
    }
}

/// The bytes a ready task takes in an announcement.
fn ready_line_len(t: &ReadyTask) -> usize {
    let owner = t.owner.as_deref().map_or(1, str::len);
    t.prefix.len() + owner + t.project.as_deref().map_or(0, |p| p.len() * 3 + 1) + 2
}

/// What one committed transaction added to a team: message and event sequence ranges
/// (`first > last` when none), the tasks it left ready, or, when there were too many to name
/// (or after a lost connection), only that tasks may have become claimable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    pub team_id: i64,
    pub msgs: (i64, i64),
    pub events: (i64, i64),
    pub tasks_changed: bool,
    /// The events include a revocation or rotation ([`TOKEN_EVENTS`]).
    pub tokens_changed: bool,
    pub ready: Vec<ReadyTask>,
}

impl Announcement {
    /// `team mf ml ef el tc kc`, then one line per ready task: `PREFIX owner` (`-` for none),
    /// then ` project` when it names one. Prefixes and names never hold spaces or newlines,
    /// nor can a name be `-`; a project holds no control characters (checked on write; one
    /// stored before that check has them replaced).
    pub fn encode(&self) -> String {
        let mut out = format!(
            "{} {} {} {} {} {} {}",
            self.team_id,
            self.msgs.0,
            self.msgs.1,
            self.events.0,
            self.events.1,
            u8::from(self.tasks_changed),
            u8::from(self.tokens_changed)
        );
        for t in &self.ready {
            out.push('\n');
            out.push_str(&t.prefix);
            out.push(' ');
            out.push_str(t.owner.as_deref().unwrap_or("-"));
            if let Some(project) = &t.project {
                out.push(' ');
                out.extend(
                    project
                        .chars()
                        .map(|c| if c.is_control() { '\u{fffd}' } else { c }),
                );
            }
        }
        out
    }

    pub fn decode(payload: &str) -> Option<Announcement> {
        let mut lines = payload.split('\n');
        let n: Vec<i64> = lines
            .next()?
            .split(' ')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        let ready = lines
            .map(|line| {
                let (prefix, rest) = line.split_once(' ')?;
                let (owner, project) = match rest.split_once(' ') {
                    Some((owner, project)) => (owner, Some(project.to_string())),
                    None => (rest, None),
                };
                Some(ReadyTask {
                    prefix: prefix.to_string(),
                    owner: (owner != "-").then(|| owner.to_string()),
                    project,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        // Without `kc` (a replica of the previous release), any event may be a revocation.
        let (team_id, mf, ml, ef, el, tc, kc) = match n[..] {
            [team_id, mf, ml, ef, el, tc] => (team_id, mf, ml, ef, el, tc, 1),
            [team_id, mf, ml, ef, el, tc, kc] => (team_id, mf, ml, ef, el, tc, kc),
            _ => return None,
        };
        Some(Announcement {
            team_id,
            msgs: (mf, ml),
            events: (ef, el),
            tasks_changed: tc != 0,
            tokens_changed: kc != 0,
            ready,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Announcement;
    use crate::hub::ReadyTask;

    #[test]
    fn announcements_round_trip_and_garbage_is_refused() {
        let a = Announcement {
            team_id: 7,
            msgs: (3, 5),
            events: (10, 9),
            tasks_changed: true,
            tokens_changed: false,
            ready: Vec::new(),
        };
        assert_eq!(Announcement::decode(&a.encode()), Some(a.clone()));
        // The previous release's six numbers: any event may be a revocation.
        let old = Announcement::decode("7 3 5 10 9 1").unwrap();
        assert!(old.tokens_changed && old.tasks_changed);
        let b = Announcement {
            tasks_changed: false,
            tokens_changed: true,
            ready: vec![
                ReadyTask {
                    prefix: "TEST".into(),
                    owner: None,
                    project: Some("github.com/org/my calc".into()),
                },
                ReadyTask {
                    prefix: "QARUN".into(),
                    owner: Some("exec-1".into()),
                    project: None,
                },
            ],
            ..a
        };
        assert_eq!(Announcement::decode(&b.encode()), Some(b));
        assert_eq!(Announcement::decode("7 1 2 3 4 0\nTEST"), None);
        assert_eq!(Announcement::decode("7 1 2"), None);
        assert_eq!(Announcement::decode("7 1 2 3 4 0 1 1"), None);
        assert_eq!(Announcement::decode("x 1 2 3 4 0"), None);
    }
}
