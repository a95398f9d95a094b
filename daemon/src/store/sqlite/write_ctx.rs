//! What a write job sees inside the writer's batch transaction: the connection, the batch's
//! clock, the per-team sequences, and the effects to publish once the batch commits.

use super::super::StoreResult;
use super::empty_claims::Exhausted;
use crate::hub::Publish;
use rusqlite::Connection;
use std::collections::HashMap;

/// What a job sees: the connection (inside the batch transaction) and where to record effects
/// that must be published after the commit.
pub struct WriteCtx<'c> {
    pub conn: &'c Connection,
    /// Milliseconds since the epoch, fixed per batch so one batch has one clock.
    pub now_ms: i64,
    pub(super) effects: Vec<Effect>,
    /// Per-team message and event sequences for this batch: read once, written back once
    /// before the commit, restored when a job rolls back so sequences never have gaps.
    pub(super) seqs: HashMap<i64, TeamSeqs>,
    /// When each agent's `last_seen_at` was last written (across batches).
    pub(super) touched: &'c mut HashMap<(i64, String), i64>,
}

/// What a batch does after it commits, in the order its jobs asked.
pub(super) enum Effect {
    Publish(i64, Publish),
    /// A claim took every task its searches could find.
    Exhausted(i64, Exhausted),
}

#[derive(Debug, Clone, Copy)]
pub(super) struct TeamSeqs {
    msg: i64,
    event: i64,
}

impl WriteCtx<'_> {
    pub fn publish(&mut self, team_id: i64, item: Publish) {
        self.effects.push(Effect::Publish(team_id, item));
    }

    /// Records, for after the commit, that a claim left its searches empty.
    pub fn exhausted(&mut self, team_id: i64, proof: Exhausted) {
        self.effects.push(Effect::Exhausted(team_id, proof));
    }

    /// When the agent's last-seen time was last written, if this writer wrote it.
    pub fn touched_at(&self, team_id: i64, agent: &str) -> Option<i64> {
        self.touched.get(&(team_id, agent.to_string())).copied()
    }

    fn seqs(&mut self, team_id: i64) -> StoreResult<&mut TeamSeqs> {
        if !self.seqs.contains_key(&team_id) {
            let (msg, event) = self
                .conn
                .prepare_cached("select msg_seq, event_seq from teams where id = ?1")?
                .query_row([team_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            self.seqs.insert(team_id, TeamSeqs { msg, event });
        }
        Ok(self.seqs.get_mut(&team_id).expect("just inserted"))
    }

    pub fn next_event_seq(&mut self, team_id: i64) -> StoreResult<i64> {
        let seqs = self.seqs(team_id)?;
        seqs.event += 1;
        Ok(seqs.event)
    }

    pub fn next_msg_seq(&mut self, team_id: i64) -> StoreResult<i64> {
        let seqs = self.seqs(team_id)?;
        seqs.msg += 1;
        Ok(seqs.msg)
    }

    /// The last message sequence handed out in this team, this batch included.
    pub fn last_msg_seq(&mut self, team_id: i64) -> StoreResult<i64> {
        Ok(self.seqs(team_id)?.msg)
    }

    /// Whether the agent's last-seen time is worth writing (at most once a second).
    pub fn should_touch(&mut self, team_id: i64, agent: &str) -> bool {
        let key = (team_id, agent.to_string());
        match self.touched.get(&key) {
            Some(at) if self.now_ms - at < 1000 => false,
            _ => {
                self.touched.insert(key, self.now_ms);
                true
            }
        }
    }

    /// Writes the batch's sequences back to `teams`.
    pub(super) fn flush_seqs(&mut self) -> rusqlite::Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("update teams set msg_seq = ?2, event_seq = ?3 where id = ?1")?;
        for (team_id, seqs) in &self.seqs {
            stmt.execute(rusqlite::params![team_id, seqs.msg, seqs.event])?;
        }
        Ok(())
    }
}
